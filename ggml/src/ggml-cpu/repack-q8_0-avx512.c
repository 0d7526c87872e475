// AVX-512 VNNI gemv over interleaved Q8_0 groups (repack.h): word g of a block holds elements 4g..4g+3 of all
// 16 rows, so one vpdpbusd of it (unsigned q + 128) with the broadcast activation word gives, per int32 lane,
// one row's dot of group g plus 128 * (sum of the 4 activations), which the accumulator starts out without.
// The 8 groups keep 8 float accumulators (lane = row): the chains of vec_dot_q8_0_q8_0, fed with the same
// fma(dx * dy, dot, chain) per block and summed in its order at the end, so every row gets its bits.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"
#include "repack-x86.h"

#include <immintrin.h>
#include <string.h>

// per activation block: -128 * (sum of the 4 bytes of group g) for g = 0..7, and the block's scale
struct q8_0_act {
    int32_t corr[8];
    float   d;
};

static void q8_0_act_prepare(const block_q8_0 * GGML_RESTRICT yb, int64_t n, struct q8_0_act * GGML_RESTRICT a) {
    const __m256i u128 = _mm256_set1_epi8((char) 0x80); // 128 as the unsigned operand
    for (int64_t b = 0; b < n; b++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *) yb[b].qs);
        const __m256i c = _mm256_dpbusd_epi32(_mm256_setzero_si256(), u128, v);
        _mm256_storeu_si256((__m256i *) a[b].corr, _mm256_sub_epi32(_mm256_setzero_si256(), c));
        a[b].d = GGML_FP16_TO_FP32(yb[b].d);
    }
}

static inline __m512i bcast_word(const int8_t * p) {
    int32_t w;
    memcpy(&w, p, 4);
    return _mm512_set1_epi32(w);
}

void ggml_cpu_repack_gemv_q8_0_avx512(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK8_0;
    const block_q8_0 * yb = y;
    struct q8_0_act act[REPACK_SEG];
    for (int64_t g = 0; g < ngroups; g++) {
        __m512 acc[8];
        for (int l = 0; l < 8; l++) {
            acc[l] = _mm512_setzero_ps();
        }
        for (int64_t b0 = 0; b0 < nb; b0 += REPACK_SEG) {
            const int64_t b1 = b0 + REPACK_SEG < nb ? b0 + REPACK_SEG : nb;
            if (g == 0 || nb > REPACK_SEG) {
                // (rows of more than one segment are longer than a mat-vec chunk: one group per call)
                q8_0_act_prepare(yb + b0, b1 - b0, act);
            }
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b0) * GGML_CPU_REPACK_Q8_0_BLOCK;
            for (int64_t b = b0; b < b1; b++, blk += GGML_CPU_REPACK_Q8_0_BLOCK) {
                const struct q8_0_act * a = &act[b - b0];
                const __m512 d = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk)),
                                               _mm512_set1_ps(a->d));
                for (int l = 0; l < 8; l++) {
                    const __m512i v = _mm512_loadu_si512((const void *) (blk + 32 + 64 * l));
                    const __m512i p =
                        _mm512_dpbusd_epi32(_mm512_set1_epi32(a->corr[l]), v, bcast_word(yb[b].qs + 4 * l));
                    acc[l] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(p), acc[l]);
                }
            }
        }
        const __m512 lo = _mm512_add_ps(_mm512_add_ps(acc[0], acc[4]), _mm512_add_ps(acc[2], acc[6]));
        const __m512 hi = _mm512_add_ps(_mm512_add_ps(acc[1], acc[5]), _mm512_add_ps(acc[3], acc[7]));
        _mm512_storeu_ps(s + g * GGML_CPU_REPACK_ROWS, _mm512_add_ps(lo, hi));
    }
}
