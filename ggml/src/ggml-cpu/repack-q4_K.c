// Q4_K in interleaved groups of 16 rows (layout in repack.h): conversion both ways and the scalar gemv.
// The 8 scales and 8 mins of a row are regrouped from the 12 packed bytes of block_q4_K into low nibbles and
// high bit pairs (96 bits either way), so both conversions are exact for any bytes.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"

#include <string.h>

#define Q4K_D      0   // fp16 d per row
#define Q4K_DMIN   32  // fp16 dmin per row
#define Q4K_SCLO   64  // u32 per row: low nibbles of the scales
#define Q4K_MINLO  128 // u32 per row: low nibbles of the mins
#define Q4K_HI     192 // u32 per row: high bit pairs of the scales (bits 0..15) and mins (16..31)
#define Q4K_QS     256 // 4 chunks x 8 words x 64 bytes

static uint32_t load_u32(const uint8_t * p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void q4_K_pack_row(uint8_t * GGML_RESTRICT blk, const void * GGML_RESTRICT row_block, int r) {
    const block_q4_K * xb = row_block;
    memcpy(blk + Q4K_D + 2 * r, &xb->d, 2);
    memcpy(blk + Q4K_DMIN + 2 * r, &xb->dmin, 2);
    uint32_t sclo = 0, mlo = 0, hi = 0;
    for (int j = 0; j < 8; j++) {
        uint8_t sc, m;
        ggml_cpu_scale_min_k4(j, xb->scales, &sc, &m);
        sclo |= (uint32_t) (sc & 15) << (4 * j);
        mlo  |= (uint32_t) (m & 15) << (4 * j);
        hi   |= ((uint32_t) (sc >> 4) << (2 * j)) | ((uint32_t) (m >> 4) << (16 + 2 * j));
    }
    memcpy(blk + Q4K_SCLO + 4 * r, &sclo, 4);
    memcpy(blk + Q4K_MINLO + 4 * r, &mlo, 4);
    memcpy(blk + Q4K_HI + 4 * r, &hi, 4);
    for (int c = 0; c < 4; c++) {
        for (int m = 0; m < 8; m++) {
            memcpy(blk + Q4K_QS + 512 * c + 64 * m + 4 * r, xb->qs + 32 * c + 4 * m, 4);
        }
    }
}

void ggml_cpu_repack_q4_K(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k) {
    ggml_cpu_repack_groups(src, dst, nrows, k / QK_K, sizeof(block_q4_K), GGML_CPU_REPACK_Q4_K_BLOCK, q4_K_pack_row);
}

// scale (which = 0) or min (which = 1) of sub-block j of row r from the regrouped nibbles and bit pairs
static int q4k_scale(const uint8_t * blk, int r, int j, int which) {
    const uint32_t lo = load_u32(blk + (which ? Q4K_MINLO : Q4K_SCLO) + 4 * r);
    const uint32_t hi = load_u32(blk + Q4K_HI + 4 * r) >> (16 * which);
    return (int) (((lo >> (4 * j)) & 15) | (((hi >> (2 * j)) & 3) << 4));
}

static void q4_K_unpack_row(const uint8_t * GGML_RESTRICT blk, void * GGML_RESTRICT row_block, int r) {
    block_q4_K * xb = row_block;
    memcpy(&xb->d, blk + Q4K_D + 2 * r, 2);
    memcpy(&xb->dmin, blk + Q4K_DMIN + 2 * r, 2);
    int sc[8], m[8];
    for (int j = 0; j < 8; j++) {
        sc[j] = q4k_scale(blk, r, j, 0);
        m[j]  = q4k_scale(blk, r, j, 1);
    }
    // block_q4_K's packing (the inverse of ggml_cpu_scale_min_k4): bytes 0..3 scales 0..3, 4..7
    // mins 0..3, each with the high bit pair of sub-block j + 4 on top; bytes 8..11 the low nibbles
    // of scale and min j + 4
    for (int j = 0; j < 4; j++) {
        xb->scales[j]     = (uint8_t) (sc[j] | ((sc[j + 4] >> 4) << 6));
        xb->scales[j + 4] = (uint8_t) (m[j] | ((m[j + 4] >> 4) << 6));
        xb->scales[j + 8] = (uint8_t) ((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
    }
    for (int c = 0; c < 4; c++) {
        for (int mw = 0; mw < 8; mw++) {
            memcpy(xb->qs + 32 * c + 4 * mw, blk + Q4K_QS + 512 * c + 64 * mw + 4 * r, 4);
        }
    }
}

void ggml_cpu_unpack_q4_K(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k) {
    ggml_cpu_unpack_groups(src, dst, nrows, k / QK_K, sizeof(block_q4_K), GGML_CPU_REPACK_Q4_K_BLOCK, q4_K_unpack_row);
}

// the steps of vec_dot_q4_K_q8_K (quants-scalar.c) per row: per super-block the integer sums isum and msum,
// then sum += dall * isum - dmin * msum
void ggml_cpu_repack_gemv_q4_K_scalar(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK_K;
    const block_q8_K * yb = y;
    for (int64_t g = 0; g < ngroups; g++) {
        float acc[GGML_CPU_REPACK_ROWS] = { 0 };
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b) * GGML_CPU_REPACK_Q4_K_BLOCK;
            for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
                int isum = 0, msum = 0;
                for (int c = 0; c < 4; c++) {
                    int dlo = 0, dhi = 0;
                    for (int mw = 0; mw < 8; mw++) {
                        const uint8_t * q = blk + Q4K_QS + 512 * c + 64 * mw + 4 * r;
                        const int8_t * q8 = yb[b].qs + 64 * c + 4 * mw;
                        for (int l = 0; l < 4; l++) {
                            dlo += (q[l] & 0x0f) * q8[l];
                            dhi += (q[l] >> 4) * q8[l + 32];
                        }
                    }
                    isum += q4k_scale(blk, r, 2 * c, 0) * dlo;
                    msum += q4k_scale(blk, r, 2 * c, 1) * (yb[b].bsums[4 * c + 0] + yb[b].bsums[4 * c + 1]);
                    isum += q4k_scale(blk, r, 2 * c + 1, 0) * dhi;
                    msum += q4k_scale(blk, r, 2 * c + 1, 1) * (yb[b].bsums[4 * c + 2] + yb[b].bsums[4 * c + 3]);
                }
                ggml_half hd, hm;
                memcpy(&hd, blk + Q4K_D + 2 * r, 2);
                memcpy(&hm, blk + Q4K_DMIN + 2 * r, 2);
                const float dall = yb[b].d * GGML_FP16_TO_FP32(hd);
                const float dmin = yb[b].d * GGML_FP16_TO_FP32(hm);
                acc[r] += dall * (float) isum - dmin * (float) msum;
            }
        }
        memcpy(s + g * GGML_CPU_REPACK_ROWS, acc, sizeof(acc));
    }
}
