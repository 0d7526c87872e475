// Q8_0 in interleaved groups of 16 rows (layout in repack.h): conversion both ways and the scalar gemv.
// The weights are stored as unsigned bytes q + 128 (q ^ 0x80, exact both ways) so that a vpdpbusd can take
// them as its unsigned operand against the signed activation bytes.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"

#include <math.h>
#include <string.h>

// q + 128 of four quants at once (q ^ 0x80 per byte; the same operation undoes it)
static inline void flip4(uint8_t * GGML_RESTRICT dst, const void * GGML_RESTRICT src) {
    uint32_t v;
    memcpy(&v, src, 4);
    v ^= 0x80808080u;
    memcpy(dst, &v, 4);
}

static void q8_0_pack_row(uint8_t * GGML_RESTRICT blk, const void * GGML_RESTRICT row_block, int r) {
    const block_q8_0 * xb = row_block;
    memcpy(blk + 2 * r, &xb->d, 2);
    for (int g = 0; g < 8; g++) {
        flip4(blk + 32 + 64 * g + 4 * r, xb->qs + 4 * g);
    }
}

static void q8_0_unpack_row(const uint8_t * GGML_RESTRICT blk, void * GGML_RESTRICT row_block, int r) {
    block_q8_0 * xb = row_block;
    memcpy(&xb->d, blk + 2 * r, 2);
    for (int g = 0; g < 8; g++) {
        flip4((uint8_t *) xb->qs + 4 * g, blk + 32 + 64 * g + 4 * r);
    }
}

void ggml_cpu_repack_q8_0(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k) {
    ggml_cpu_repack_groups(src, dst, nrows, k / QK8_0, sizeof(block_q8_0), GGML_CPU_REPACK_Q8_0_BLOCK, q8_0_pack_row);
}

void ggml_cpu_unpack_q8_0(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k) {
    ggml_cpu_unpack_groups(src, dst, nrows, k / QK8_0, sizeof(block_q8_0), GGML_CPU_REPACK_Q8_0_BLOCK, q8_0_unpack_row);
}

// ---- scalar gemv --------------------------------------------------------------------------------------------

// per row the float steps of vec_dot_q8_0_q8_0 (quants-scalar.c): eight chains, chain g taking the int dot of
// elements 4g..4g+3 of each block as fma(dx * dy, dot, chain), then ((c0 + c4) + (c2 + c6)) + ((c1 + c5) + (c3 + c7))
void ggml_cpu_repack_gemv_q8_0_scalar(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK8_0;
    const block_q8_0 * yb = y;
    for (int64_t g = 0; g < ngroups; g++) {
        float acc[GGML_CPU_REPACK_ROWS][8] = { { 0 } };
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b) * GGML_CPU_REPACK_Q8_0_BLOCK;
            const float dy = GGML_FP16_TO_FP32(yb[b].d);
            for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
                ggml_half h;
                memcpy(&h, blk + 2 * r, 2);
                const float d = GGML_FP16_TO_FP32(h) * dy;
                for (int l = 0; l < 8; l++) {
                    int sumi = 0;
                    for (int j = 0; j < 4; j++) {
                        sumi += (blk[32 + 64 * l + 4 * r + j] - 128) * yb[b].qs[4 * l + j];
                    }
                    acc[r][l] = fmaf(d, (float) sumi, acc[r][l]);
                }
            }
        }
        for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
            const float * c = acc[r];
            s[g * GGML_CPU_REPACK_ROWS + r] = ((c[0] + c[4]) + (c[2] + c[6])) + ((c[1] + c[5]) + (c[3] + c[7]));
        }
    }
}
