// AVX2 gemv over interleaved Q4_0 groups (repack.h): rows 0..7 and 8..15 of a group each fill one 256-bit
// register per word; maddubs (unsigned nibbles x signed activations) keeps one row per 32-bit lane. The eight
// products of a block stay within int16 (8 * 2 * 15 * 128 < 32768) before one madd widens them. Per block the
// float steps are those of the scalar vec_dot (d = dx * dy; sum += (float) sumi * d), lane by lane.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"
#include "repack-x86.h"

#include <immintrin.h>
#include <string.h>

void ggml_cpu_repack_gemv_q4_0_avx2(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                    const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK8_0;
    const block_q8_0 * yb = y;
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i ones = _mm256_set1_epi16(1);
    int32_t corr[REPACK_SEG];
    for (int64_t b0 = 0; b0 < nb; b0 += REPACK_SEG) {
        const int64_t b1 = b0 + REPACK_SEG < nb ? b0 + REPACK_SEG : nb;
        for (int64_t b = b0; b < b1; b++) {
            corr[b - b0] = act_corr(yb + b);
        }
        for (int64_t g = 0; g < ngroups; g++) {
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b0) * GGML_CPU_REPACK_Q4_0_BLOCK;
            float * sg = s + g * GGML_CPU_REPACK_ROWS;
            __m256 acc0 = b0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(sg);
            __m256 acc1 = b0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(sg + 8);
            for (int64_t b = b0; b < b1; b++, blk += GGML_CPU_REPACK_Q4_0_BLOCK) {
                __m256i p0 = _mm256_setzero_si256(), p1 = _mm256_setzero_si256();
                for (int m = 0; m < 4; m++) {
                    int32_t wl, wh;
                    memcpy(&wl, yb[b].qs + 4 * m, 4);
                    memcpy(&wh, yb[b].qs + 16 + 4 * m, 4);
                    const __m256i yl = _mm256_set1_epi32(wl), yh = _mm256_set1_epi32(wh);
                    const __m256i v0 = _mm256_loadu_si256((const __m256i *) (blk + 32 + 64 * m));
                    const __m256i v1 = _mm256_loadu_si256((const __m256i *) (blk + 32 + 64 * m + 32));
                    p0 = _mm256_add_epi16(p0, _mm256_maddubs_epi16(_mm256_and_si256(v0, m4), yl));
                    p0 = _mm256_add_epi16(p0, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v0, 4), m4), yh));
                    p1 = _mm256_add_epi16(p1, _mm256_maddubs_epi16(_mm256_and_si256(v1, m4), yl));
                    p1 = _mm256_add_epi16(p1, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v1, 4), m4), yh));
                }
                const __m256i c = _mm256_set1_epi32(corr[b - b0]);
                const __m256i s0 = _mm256_sub_epi32(_mm256_madd_epi16(p0, ones), c);
                const __m256i s1 = _mm256_sub_epi32(_mm256_madd_epi16(p1, ones), c);
                const __m256 dy = _mm256_set1_ps(GGML_FP16_TO_FP32(yb[b].d));
                const __m256 d0 = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) blk)), dy);
                const __m256 d1 = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 16))), dy);
                acc0 = _mm256_add_ps(acc0, _mm256_mul_ps(_mm256_cvtepi32_ps(s0), d0));
                acc1 = _mm256_add_ps(acc1, _mm256_mul_ps(_mm256_cvtepi32_ps(s1), d1));
            }
            _mm256_storeu_ps(sg, acc0);
            _mm256_storeu_ps(sg + 8, acc1);
        }
    }
}
