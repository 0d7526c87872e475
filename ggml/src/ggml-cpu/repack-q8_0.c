// Q8_0 in interleaved groups of 16 rows (layout in repack.h): conversion both ways and the scalar gemv.
// The weights are stored as unsigned bytes q + 128 (q ^ 0x80, exact both ways) so that a vpdpbusd can take
// them as its unsigned operand against the signed activation bytes.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"

#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

#if !defined(__SSE2__)
static void q8_0_unpack_row(const uint8_t * GGML_RESTRICT blk, void * GGML_RESTRICT row_block, int r) {
    block_q8_0 * xb = row_block;
    memcpy(&xb->d, blk + 2 * r, 2);
    for (int g = 0; g < 8; g++) {
        flip4((uint8_t *) xb->qs + 4 * g, blk + 32 + 64 * g + 4 * r);
    }
}
#endif

void ggml_cpu_repack_q8_0(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k) {
    ggml_cpu_repack_groups(src, dst, nrows, k / QK8_0, sizeof(block_q8_0), GGML_CPU_REPACK_Q8_0_BLOCK, q8_0_pack_row);
}

#if defined(__SSE2__)
// rows 4 q .. 4 q + 3, elements 16 h .. 16 h + 15 of an interleaved block: a 4x4 transpose of 32-bit words (word
// 4 h + i of the block holds the four rows' quants of group 4 h + i side by side)
static inline void q8_0_unpack_4x4(const uint8_t * GGML_RESTRICT blk, block_q8_0 * GGML_RESTRICT row0, size_t stride,
                                   int q, int h) {
    const __m128i flip = _mm_set1_epi8((char) 0x80);
    __m128i a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = _mm_xor_si128(_mm_loadu_si128((const __m128i *) (blk + 32 + 64 * (4 * h + i) + 16 * q)), flip);
    }
    const __m128i t0 = _mm_unpacklo_epi32(a[0], a[1]), t1 = _mm_unpackhi_epi32(a[0], a[1]);
    const __m128i t2 = _mm_unpacklo_epi32(a[2], a[3]), t3 = _mm_unpackhi_epi32(a[2], a[3]);
    const __m128i r[4] = { _mm_unpacklo_epi64(t0, t2), _mm_unpackhi_epi64(t0, t2), _mm_unpacklo_epi64(t1, t3),
                           _mm_unpackhi_epi64(t1, t3) };
    for (int i = 0; i < 4; i++) {
        block_q8_0 * xb = (block_q8_0 *) ((uint8_t *) row0 + (size_t) (4 * q + i) * stride);
        _mm_storeu_si128((__m128i *) (xb->qs + 16 * h), r[i]);
    }
}
#endif

// the GEMM unpacks the weights of every tile of rows for every batch: with SSE2 a transpose per block, 2.6x
// faster than the row walk (a 64-column GEMM on repacked weights then loses ~9 % to unpacking, not ~15 %)
void ggml_cpu_unpack_q8_0(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k) {
#if defined(__SSE2__)
    const int64_t nb = k / QK8_0;
    const size_t stride = (size_t) nb * sizeof(block_q8_0);
    for (int64_t g = 0; g < nrows / GGML_CPU_REPACK_ROWS; g++) {
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t * blk = (const uint8_t *) src + (size_t) (g * nb + b) * GGML_CPU_REPACK_Q8_0_BLOCK;
            block_q8_0 * row0 = (block_q8_0 *) dst + (g * GGML_CPU_REPACK_ROWS) * nb + b;
            for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
                memcpy(&((block_q8_0 *) ((uint8_t *) row0 + (size_t) r * stride))->d, blk + 2 * r, 2);
            }
            for (int q = 0; q < 4; q++) {
                q8_0_unpack_4x4(blk, row0, stride, q, 0);
                q8_0_unpack_4x4(blk, row0, stride, q, 1);
            }
        }
    }
#else
    ggml_cpu_unpack_groups(src, dst, nrows, k / QK8_0, sizeof(block_q8_0), GGML_CPU_REPACK_Q8_0_BLOCK, q8_0_unpack_row);
#endif
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
