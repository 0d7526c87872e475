// AVX2 gemv over interleaved Q4_K groups (repack.h): rows 0..7 and 8..15 of a group each fill one 256-bit
// register per word; maddubs (unsigned nibbles x signed activations) keeps one row per 32-bit lane as two
// int16 sums. The 8 words of a sub-block stay within int16 (8 * 2 * 15 * 128 < 32768), and one vpmaddwd with
// the row's scale in both halves gives sc_j * dot_j in int32. Per row the integers are those of the scalar
// vec_dot_q4_K_q8_K, and so are the float steps per super-block: sum += (y.d * d) * isum - (y.d * dmin) * msum.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"
#include "repack-x86.h"

#include <immintrin.h>
#include <string.h>

// 6-bit value of sub-block j per lane: low nibble at bits 4j of lo, high bit pair at bits 2j of hi
static inline __m256i k4_value(__m256i lo, __m256i hi, int j) {
    const __m256i h = j < 2 ? _mm256_slli_epi32(hi, 4 - 2 * j) : _mm256_srli_epi32(hi, 2 * j - 4);
    return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(lo, 4 * j), _mm256_set1_epi32(15)),
                           _mm256_and_si256(h, _mm256_set1_epi32(48)));
}

// the same value in both int16 halves of a lane (the pair operand of vpmaddwd)
static inline __m256i both_halves(__m256i v) {
    return _mm256_or_si256(v, _mm256_slli_epi32(v, 16));
}

static inline __m256i bcast_word(const int8_t * p) {
    int32_t w;
    memcpy(&w, p, 4);
    return _mm256_set1_epi32(w);
}

// isum and msum of one super-block for the 8 rows of half h (0: rows 0..7, 1: rows 8..15)
static inline void q4_K_half(const uint8_t * blk, const int8_t * q8, const int32_t * bpair, int h, __m256i * isum_out,
                             __m256i * msum_out) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i sclo = _mm256_loadu_si256((const __m256i *) (blk + 64 + 32 * h));
    const __m256i mnlo = _mm256_loadu_si256((const __m256i *) (blk + 128 + 32 * h));
    const __m256i schi = _mm256_loadu_si256((const __m256i *) (blk + 192 + 32 * h));
    const __m256i mnhi = _mm256_srli_epi32(schi, 16);
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 4; c++) {
        const uint8_t * qc = blk + 256 + 512 * c + 32 * h;
        __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
        for (int m = 0; m < 8; m++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *) (qc + 64 * m));
            lo = _mm256_add_epi16(lo, _mm256_maddubs_epi16(_mm256_and_si256(v, m4), bcast_word(q8 + 64 * c + 4 * m)));
            hi = _mm256_add_epi16(hi, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
                                                           bcast_word(q8 + 64 * c + 32 + 4 * m)));
        }
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(lo, both_halves(k4_value(sclo, schi, 2 * c))));
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(hi, both_halves(k4_value(sclo, schi, 2 * c + 1))));
    }
    __m256i msum = _mm256_setzero_si256();
    for (int p = 0; p < 4; p++) {
        const __m256i mp = _mm256_or_si256(k4_value(mnlo, mnhi, 2 * p), _mm256_slli_epi32(k4_value(mnlo, mnhi, 2 * p + 1), 16));
        msum = _mm256_add_epi32(msum, _mm256_madd_epi16(mp, _mm256_set1_epi32(bpair[p])));
    }
    *isum_out = isum;
    *msum_out = msum;
}

void ggml_cpu_repack_gemv_q4_K_avx2(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                    const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK_K;
    const block_q8_K * yb = y;
    int32_t bpair[REPACK_SEG_K][4];
    for (int64_t b0 = 0; b0 < nb; b0 += REPACK_SEG_K) {
        const int64_t b1 = b0 + REPACK_SEG_K < nb ? b0 + REPACK_SEG_K : nb;
        for (int64_t b = b0; b < b1; b++) {
            q4_K_bsum_pairs(yb + b, bpair[b - b0]);
        }
        for (int64_t g = 0; g < ngroups; g++) {
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b0) * GGML_CPU_REPACK_Q4_K_BLOCK;
            float * sg = s + g * GGML_CPU_REPACK_ROWS;
            __m256 acc[2];
            for (int h = 0; h < 2; h++) {
                acc[h] = b0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(sg + 8 * h);
            }
            for (int64_t b = b0; b < b1; b++, blk += GGML_CPU_REPACK_Q4_K_BLOCK) {
                const __m256 yd = _mm256_set1_ps(yb[b].d);
                for (int h = 0; h < 2; h++) {
                    __m256i isum, msum;
                    q4_K_half(blk, yb[b].qs, bpair[b - b0], h, &isum, &msum);
                    const __m256 dall = _mm256_mul_ps(yd, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 16 * h))));
                    const __m256 dmin = _mm256_mul_ps(yd, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 32 + 16 * h))));
                    const __m256 t = _mm256_sub_ps(_mm256_mul_ps(dall, _mm256_cvtepi32_ps(isum)),
                                                   _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(msum)));
                    acc[h] = _mm256_add_ps(acc[h], t);
                }
            }
            for (int h = 0; h < 2; h++) {
                _mm256_storeu_ps(sg + 8 * h, acc[h]);
            }
        }
    }
}
