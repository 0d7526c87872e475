// Q6_K in interleaved groups of 16 rows (layout in repack.h): conversion both ways and the scalar gemv.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"

#include <string.h>

#define Q6K_D  0    // fp16 d per row
#define Q6K_SC 32   // 8 pairs of scales x 32 bytes
#define Q6K_Q  288  // 2 halves x 8 triples of words x 64 bytes

// offset of word t (0: ql[64h + 4m], 1: ql[64h + 32 + 4m], 2: qh[32h + 4m]) of triple m of half h
static inline size_t q6k_word(int h, int m, int t) {
    return Q6K_Q + 1536 * (size_t) h + 192 * (size_t) m + 64 * (size_t) t;
}

static void q6_K_pack_row(uint8_t * GGML_RESTRICT blk, const void * GGML_RESTRICT row_block, int r) {
    const block_q6_K * xb = row_block;
    memcpy(blk + Q6K_D + 2 * r, &xb->d, 2);
    for (int p = 0; p < 8; p++) {
        memcpy(blk + Q6K_SC + 32 * p + 2 * r, xb->scales + 2 * p, 2);
    }
    for (int h = 0; h < 2; h++) {
        for (int m = 0; m < 8; m++) {
            memcpy(blk + q6k_word(h, m, 0) + 4 * r, xb->ql + 64 * h + 4 * m, 4);
            memcpy(blk + q6k_word(h, m, 1) + 4 * r, xb->ql + 64 * h + 32 + 4 * m, 4);
            memcpy(blk + q6k_word(h, m, 2) + 4 * r, xb->qh + 32 * h + 4 * m, 4);
        }
    }
}

static void q6_K_unpack_row(const uint8_t * GGML_RESTRICT blk, void * GGML_RESTRICT row_block, int r) {
    block_q6_K * xb = row_block;
    memcpy(&xb->d, blk + Q6K_D + 2 * r, 2);
    for (int p = 0; p < 8; p++) {
        memcpy(xb->scales + 2 * p, blk + Q6K_SC + 32 * p + 2 * r, 2);
    }
    for (int h = 0; h < 2; h++) {
        for (int m = 0; m < 8; m++) {
            memcpy(xb->ql + 64 * h + 4 * m, blk + q6k_word(h, m, 0) + 4 * r, 4);
            memcpy(xb->ql + 64 * h + 32 + 4 * m, blk + q6k_word(h, m, 1) + 4 * r, 4);
            memcpy(xb->qh + 32 * h + 4 * m, blk + q6k_word(h, m, 2) + 4 * r, 4);
        }
    }
}

void ggml_cpu_repack_q6_K(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k) {
    ggml_cpu_repack_groups(src, dst, nrows, k / QK_K, sizeof(block_q6_K), GGML_CPU_REPACK_Q6_K_BLOCK, q6_K_pack_row);
}

void ggml_cpu_unpack_q6_K(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k) {
    ggml_cpu_unpack_groups(src, dst, nrows, k / QK_K, sizeof(block_q6_K), GGML_CPU_REPACK_Q6_K_BLOCK, q6_K_unpack_row);
}

// the steps of vec_dot_q6_K_q8_K (quants-scalar.c) per row: per super-block the integer sum of scale times
// the dot of each 16 signed 6-bit values, then sum += (y.d * d) * isum
void ggml_cpu_repack_gemv_q6_K_scalar(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK_K;
    const block_q8_K * yb = y;
    for (int64_t g = 0; g < ngroups; g++) {
        float acc[GGML_CPU_REPACK_ROWS] = { 0 };
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b) * GGML_CPU_REPACK_Q6_K_BLOCK;
            for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
                int isum = 0;
                for (int h = 0; h < 2; h++) {
                    const int8_t * q8 = yb[b].qs + 128 * h;
                    int dot[8] = { 0 }; // sub-blocks 8h .. 8h + 7 (16 elements each)
                    for (int m = 0; m < 8; m++) {
                        const uint8_t * qa = blk + q6k_word(h, m, 0) + 4 * r; // ql[l]
                        const uint8_t * qb = blk + q6k_word(h, m, 1) + 4 * r; // ql[l + 32]
                        const uint8_t * qh = blk + q6k_word(h, m, 2) + 4 * r;
                        for (int i = 0; i < 4; i++) {
                            const int l = 4 * m + i;
                            const int v1 = ((qa[i] & 0x0f) | (((qh[i] >> 0) & 3) << 4)) - 32;
                            const int v2 = ((qb[i] & 0x0f) | (((qh[i] >> 2) & 3) << 4)) - 32;
                            const int v3 = ((qa[i] >> 4)   | (((qh[i] >> 4) & 3) << 4)) - 32;
                            const int v4 = ((qb[i] >> 4)   | (((qh[i] >> 6) & 3) << 4)) - 32;
                            dot[l / 16 + 0] += v1 * q8[l];
                            dot[l / 16 + 2] += v2 * q8[l + 32];
                            dot[l / 16 + 4] += v3 * q8[l + 64];
                            dot[l / 16 + 6] += v4 * q8[l + 96];
                        }
                    }
                    for (int j = 0; j < 8; j++) {
                        const int sc = (int8_t) blk[Q6K_SC + 32 * (4 * h + j / 2) + 2 * r + j % 2];
                        isum += sc * dot[j];
                    }
                }
                ggml_half hd;
                memcpy(&hd, blk + Q6K_D + 2 * r, 2);
                acc[r] += (yb[b].d * GGML_FP16_TO_FP32(hd)) * (float) isum;
            }
        }
        memcpy(s + g * GGML_CPU_REPACK_ROWS, acc, sizeof(acc));
    }
}
