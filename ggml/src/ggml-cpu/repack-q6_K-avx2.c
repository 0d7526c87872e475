// AVX2 gemv over interleaved Q6_K groups (repack.h): rows 0..7 and 8..15 of a group each fill one 256-bit
// register per word; maddubs (unsigned u = q + 32 x signed activations) keeps one row per 32-bit lane as two
// int16 sums; two words of a sub-block stay within int16 (2 * 2 * 63 * 128 < 32768) before one vpmaddwd with
// the row's scale in both halves widens them. 32 * sum_s sc_s * bsum_s is taken off at the end, which leaves
// exactly the integer sum of the scalar vec_dot_q6_K_q8_K; the float step per super-block is its own:
// sum += (y.d * d) * isum.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"
#include "repack-x86.h"

#include <immintrin.h>
#include <string.h>

static inline __m256i bcast_word(const void * p) {
    int32_t w;
    memcpy(&w, p, 4);
    return _mm256_set1_epi32(w);
}

// the scale of sub-block 2p + odd in both int16 halves of each lane, from the int16 pair vector of pair p
static inline __m256i pair_scale2(__m256i pv, int odd) {
    const __m256i s = odd ? _mm256_srai_epi32(pv, 16) : _mm256_srai_epi32(_mm256_slli_epi32(pv, 16), 16);
    return _mm256_or_si256(_mm256_and_si256(s, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(s, 16));
}

static inline __m256i six_bits(__m256i lo, __m256i hi) {
    return _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi8(0x0f)), _mm256_and_si256(hi, _mm256_set1_epi8(0x30)));
}

// isum of one super-block for the 8 rows of half hr (0: rows 0..7, 1: rows 8..15)
static inline __m256i q6_K_half(const uint8_t * blk, const block_q8_K * yb, int hr) {
    __m256i pv[8];
    __m256i corr = _mm256_setzero_si256();
    for (int p = 0; p < 8; p++) {
        pv[p] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (blk + 32 + 32 * p + 16 * hr)));
        corr = _mm256_add_epi32(corr, _mm256_madd_epi16(pv[p], bcast_word(yb->bsums + 2 * p)));
    }
    __m256i isum = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 5));
    for (int h = 0; h < 2; h++) {
        const uint8_t * qw = blk + 288 + 1536 * h + 32 * hr; // triples (ql[l], ql[l + 32], qh[l]) in reading order
        const int8_t * q8 = yb->qs + 128 * h;
        for (int m0 = 0; m0 < 8; m0 += 2) {
            // words m0, m0 + 1: the same four sub-blocks 8h + m0 / 4 (+ 2, + 4, + 6)
            __m256i p1 = _mm256_setzero_si256(), p2 = p1, p3 = p1, p4 = p1;
            for (int m = m0; m < m0 + 2; m++) {
                const __m256i qa = _mm256_loadu_si256((const __m256i *) (qw + 192 * m));
                const __m256i qb = _mm256_loadu_si256((const __m256i *) (qw + 192 * m + 64));
                const __m256i hb = _mm256_loadu_si256((const __m256i *) (qw + 192 * m + 128));
                p1 = _mm256_add_epi16(p1, _mm256_maddubs_epi16(six_bits(qa, _mm256_slli_epi16(hb, 4)), bcast_word(q8 + 4 * m)));
                p2 = _mm256_add_epi16(p2, _mm256_maddubs_epi16(six_bits(qb, _mm256_slli_epi16(hb, 2)), bcast_word(q8 + 32 + 4 * m)));
                p3 = _mm256_add_epi16(p3, _mm256_maddubs_epi16(six_bits(_mm256_srli_epi16(qa, 4), hb), bcast_word(q8 + 64 + 4 * m)));
                p4 = _mm256_add_epi16(p4, _mm256_maddubs_epi16(six_bits(_mm256_srli_epi16(qb, 4), _mm256_srli_epi16(hb, 2)),
                                                               bcast_word(q8 + 96 + 4 * m)));
            }
            const int odd = m0 >= 4;
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p1, pair_scale2(pv[4 * h + 0], odd)));
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p2, pair_scale2(pv[4 * h + 1], odd)));
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p3, pair_scale2(pv[4 * h + 2], odd)));
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p4, pair_scale2(pv[4 * h + 3], odd)));
        }
    }
    return isum;
}

void ggml_cpu_repack_gemv_q6_K_avx2(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                    const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK_K;
    const block_q8_K * yb = y;
    for (int64_t g = 0; g < ngroups; g++) {
        const uint8_t * blk = (const uint8_t *) x + (size_t) g * nb * GGML_CPU_REPACK_Q6_K_BLOCK;
        __m256 acc[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() };
        for (int64_t b = 0; b < nb; b++, blk += GGML_CPU_REPACK_Q6_K_BLOCK) {
            const __m256 yd = _mm256_set1_ps(yb[b].d);
            for (int hr = 0; hr < 2; hr++) {
                const __m256i isum = q6_K_half(blk, yb + b, hr);
                const __m256 d = _mm256_mul_ps(yd, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 16 * hr))));
                acc[hr] = _mm256_add_ps(acc[hr], _mm256_mul_ps(d, _mm256_cvtepi32_ps(isum)));
            }
        }
        _mm256_storeu_ps(s + g * GGML_CPU_REPACK_ROWS, acc[0]);
        _mm256_storeu_ps(s + g * GGML_CPU_REPACK_ROWS + 8, acc[1]);
    }
}
