// AVX2 gemv over interleaved Q8_0 groups (repack.h): rows 0..7 and 8..15 of a group each fill one 256-bit
// register per word, one row per 32-bit lane. maddubs would saturate on q + 128, so the stored bytes become
// q again and go through the sign trick of the AVX2 vec_dot (|q| x activation with q's sign; exact since
// the Q8_0 activations lie in [-127, 127]). The 8 groups of 4 elements keep 8 float accumulators: the chains
// of vec_dot_q8_0_q8_0, fed with the same fma(dx * dy, dot, chain) per block and summed in its order. The
// two halves run one after the other: 16 accumulators would not fit the 16 registers.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"

#include <immintrin.h>
#include <string.h>

static inline __m256i bcast_word(const int8_t * p) {
    int32_t w;
    memcpy(&w, p, 4);
    return _mm256_set1_epi32(w);
}

// rows h * 8 .. h * 8 + 7 of the group at x (nb blocks) into s[0..7]
static void gemv_half(int64_t nb, float * GGML_RESTRICT s, const uint8_t * GGML_RESTRICT x,
                      const block_q8_0 * GGML_RESTRICT yb, int h) {
    const __m256i flip = _mm256_set1_epi8((char) 0x80);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[8];
    for (int l = 0; l < 8; l++) {
        acc[l] = _mm256_setzero_ps();
    }
    const uint8_t * blk = x;
    for (int64_t b = 0; b < nb; b++, blk += GGML_CPU_REPACK_Q8_0_BLOCK) {
        const __m256 d = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 16 * h))),
                                       _mm256_set1_ps(GGML_FP16_TO_FP32(yb[b].d)));
        for (int l = 0; l < 8; l++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *) (blk + 32 + 64 * l + 32 * h));
            const __m256i q = _mm256_xor_si256(v, flip);
            const __m256i a = _mm256_sign_epi8(bcast_word(yb[b].qs + 4 * l), q);
            const __m256i p16 = _mm256_maddubs_epi16(_mm256_abs_epi8(q), a);
            acc[l] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones)), acc[l]);
        }
    }
    const __m256 lo = _mm256_add_ps(_mm256_add_ps(acc[0], acc[4]), _mm256_add_ps(acc[2], acc[6]));
    const __m256 hi = _mm256_add_ps(_mm256_add_ps(acc[1], acc[5]), _mm256_add_ps(acc[3], acc[7]));
    _mm256_storeu_ps(s, _mm256_add_ps(lo, hi));
}

void ggml_cpu_repack_gemv_q8_0_avx2(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                    const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK8_0;
    for (int64_t g = 0; g < ngroups; g++) {
        const uint8_t * xg = (const uint8_t *) x + (size_t) (g * nb) * GGML_CPU_REPACK_Q8_0_BLOCK;
        gemv_half(nb, s + g * GGML_CPU_REPACK_ROWS, xg, y, 0);
        gemv_half(nb, s + g * GGML_CPU_REPACK_ROWS + 8, xg, y, 1);
    }
}
