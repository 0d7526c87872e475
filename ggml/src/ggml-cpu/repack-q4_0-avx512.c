// AVX-512 VNNI gemv over interleaved Q4_0 groups (repack.h): one 512-bit load holds word m of all 16 rows,
// so each int32 lane of vpdpbusd accumulates one row's dot; the activation words are broadcast. Per block the
// float steps are those of the scalar vec_dot (d = dx * dy; sum += (float) sumi * d), lane by lane.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"
#include "repack-x86.h"

#include <immintrin.h>
#include <string.h>

void ggml_cpu_repack_gemv_q4_0_avx512(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK8_0;
    const block_q8_0 * yb = y;
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    int32_t corr[REPACK_SEG];
    for (int64_t b0 = 0; b0 < nb; b0 += REPACK_SEG) {
        const int64_t b1 = b0 + REPACK_SEG < nb ? b0 + REPACK_SEG : nb;
        for (int64_t b = b0; b < b1; b++) {
            corr[b - b0] = act_corr(yb + b);
        }
        for (int64_t g = 0; g < ngroups; g++) {
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b0) * GGML_CPU_REPACK_Q4_0_BLOCK;
            __m512 acc = b0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(s + g * GGML_CPU_REPACK_ROWS);
            for (int64_t b = b0; b < b1; b++, blk += GGML_CPU_REPACK_Q4_0_BLOCK) {
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
