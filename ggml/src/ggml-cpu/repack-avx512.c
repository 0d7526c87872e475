// AVX-512 VNNI gemv over interleaved Q4_0 groups (repack.h): one 512-bit load holds word m of all 16 rows,
// so each int32 lane of vpdpbusd accumulates one row's dot; the activation words are broadcast. Per block the
// float steps are those of the scalar vec_dot (d = dx * dy; sum += (float) sumi * d), lane by lane.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"

#include <immintrin.h>
#include <string.h>

// 8 * (sum of the block's 32 activations): what the unsigned nibbles (q + 8) add beyond (q - 8) * y
static inline int32_t act_corr(const block_q8_0 * y) {
    const __m256i v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) y->qs), _mm256_set1_epi8((char) 0x80));
    const __m256i s = _mm256_sad_epu8(v, _mm256_setzero_si256()); // sums of y + 128 per 8 bytes
    const __m128i t = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    const int64_t sum = _mm_cvtsi128_si64(t) + _mm_extract_epi64(t, 1) - 32 * 128;
    return (int32_t) (8 * sum);
}

#define SEG 256 // activation blocks whose corrections are computed at once

void ggml_cpu_repack_gemv_q4_0_avx512(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK8_0;
    const block_q8_0 * yb = y;
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    int32_t corr[SEG];
    for (int64_t b0 = 0; b0 < nb; b0 += SEG) {
        const int64_t b1 = b0 + SEG < nb ? b0 + SEG : nb;
        for (int64_t b = b0; b < b1; b++) {
            corr[b - b0] = act_corr(yb + b);
        }
        for (int64_t g = 0; g < ngroups; g++) {
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b0) * GGML_CPU_REPACK_BLOCK;
            __m512 acc = b0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(s + g * GGML_CPU_REPACK_ROWS);
            for (int64_t b = b0; b < b1; b++, blk += GGML_CPU_REPACK_BLOCK) {
                __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
                for (int m = 0; m < 4; m++) {
                    const __m512i v = _mm512_loadu_si512((const void *) (blk + 32 + 64 * m));
                    int32_t wl, wh;
                    memcpy(&wl, yb[b].qs + 4 * m, 4);
                    memcpy(&wh, yb[b].qs + 16 + 4 * m, 4);
                    lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(v, m4), _mm512_set1_epi32(wl));
                    hi = _mm512_dpbusd_epi32(hi, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4), _mm512_set1_epi32(wh));
                }
                const __m512i sumi = _mm512_sub_epi32(_mm512_add_epi32(lo, hi), _mm512_set1_epi32(corr[b - b0]));
                const __m512 d = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk)),
                                               _mm512_set1_ps(GGML_FP16_TO_FP32(yb[b].d)));
                acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_cvtepi32_ps(sumi), d));
            }
            _mm512_storeu_ps(s + g * GGML_CPU_REPACK_ROWS, acc);
        }
    }
}
