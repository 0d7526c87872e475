// Q4_0 in interleaved groups of 16 rows (layout in repack.h): conversion both ways and the scalar gemv.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"

#include <string.h>

static void q4_0_pack_row(uint8_t * GGML_RESTRICT blk, const void * GGML_RESTRICT row_block, int r) {
    const block_q4_0 * xb = row_block;
    memcpy(blk + 2 * r, &xb->d, 2);
    for (int m = 0; m < 4; m++) {
        memcpy(blk + 32 + 64 * m + 4 * r, xb->qs + 4 * m, 4);
    }
}

static void q4_0_unpack_row(const uint8_t * GGML_RESTRICT blk, void * GGML_RESTRICT row_block, int r) {
    block_q4_0 * xb = row_block;
    memcpy(&xb->d, blk + 2 * r, 2);
    for (int m = 0; m < 4; m++) {
        memcpy(xb->qs + 4 * m, blk + 32 + 64 * m + 4 * r, 4);
    }
}

void ggml_cpu_repack_q4_0(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k) {
    ggml_cpu_repack_groups(src, dst, nrows, k / QK4_0, sizeof(block_q4_0), GGML_CPU_REPACK_Q4_0_BLOCK, q4_0_pack_row);
}

void ggml_cpu_unpack_q4_0(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k) {
    ggml_cpu_unpack_groups(src, dst, nrows, k / QK4_0, sizeof(block_q4_0), GGML_CPU_REPACK_Q4_0_BLOCK, q4_0_unpack_row);
}

// ---- scalar gemv --------------------------------------------------------------------------------------------

void ggml_cpu_repack_gemv_q4_0_scalar(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK8_0;
    const block_q8_0 * yb = y;
    for (int64_t g = 0; g < ngroups; g++) {
        float acc[GGML_CPU_REPACK_ROWS] = { 0 };
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b) * GGML_CPU_REPACK_Q4_0_BLOCK;
            const float dy = GGML_FP16_TO_FP32(yb[b].d);
            for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
                int sumi = 0;
                for (int m = 0; m < 4; m++) {
                    for (int j = 0; j < 4; j++) {
                        const int q = blk[32 + 64 * m + 4 * r + j];
                        sumi += ((q & 0x0f) - 8) * yb[b].qs[4 * m + j];
                        sumi += ((q >> 4) - 8) * yb[b].qs[16 + 4 * m + j];
                    }
                }
                ggml_half h;
                memcpy(&h, blk + 2 * r, 2);
                acc[r] += (float) sumi * (GGML_FP16_TO_FP32(h) * dy);
            }
        }
        memcpy(s + g * GGML_CPU_REPACK_ROWS, acc, sizeof(acc));
    }
}
