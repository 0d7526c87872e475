// AVX-512 VNNI gemv over interleaved Q6_K groups (repack.h): one 512-bit load holds one word (4 values) of all
// 16 rows, so each int32 lane of vpdpbusd accumulates one row's dot of a 16-element sub-block; the activation
// words are broadcast. The 6-bit values are used unsigned (u = q + 32) and 32 * sum_s sc_s * bsum_s is taken
// off at the end, which leaves exactly the integer sum of the scalar vec_dot_q6_K_q8_K; the float step per
// super-block is its own: sum += (y.d * d) * isum.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"
#include "repack-x86.h"

#include <immintrin.h>
#include <string.h>

static inline __m512i bcast_word(const void * p) {
    int32_t w;
    memcpy(&w, p, 4);
    return _mm512_set1_epi32(w);
}

// scale of sub-block 2p + odd per lane from the int16 pair vector of pair p
static inline __m512i pair_scale(__m512i pv, int odd) {
    return odd ? _mm512_srai_epi32(pv, 16) : _mm512_srai_epi32(_mm512_slli_epi32(pv, 16), 16);
}

// (lo & 15) | (hi & 0x30) per byte: a 6-bit value from its nibble and its high bit pair already at bits 4-5
static inline __m512i six_bits(__m512i lo, __m512i hi) {
    return _mm512_or_si512(_mm512_and_si512(lo, _mm512_set1_epi8(0x0f)), _mm512_and_si512(hi, _mm512_set1_epi8(0x30)));
}

void ggml_cpu_repack_gemv_q6_K_avx512(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK_K;
    const block_q8_K * yb = y;
    for (int64_t g = 0; g < ngroups; g++) {
        const uint8_t * blk = (const uint8_t *) x + (size_t) g * nb * GGML_CPU_REPACK_Q6_K_BLOCK;
        __m512 acc = _mm512_setzero_ps();
        for (int64_t b = 0; b < nb; b++, blk += GGML_CPU_REPACK_Q6_K_BLOCK) {
            __m512i pv[8];
            __m512i corr = _mm512_setzero_si512();
            for (int p = 0; p < 8; p++) {
                pv[p] = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *) (blk + 32 + 32 * p)));
                corr = _mm512_add_epi32(corr, _mm512_madd_epi16(pv[p], bcast_word(yb[b].bsums + 2 * p)));
            }
            __m512i isum = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(corr, 5));
            for (int h = 0; h < 2; h++) {
                const uint8_t * qw = blk + 288 + 1536 * h; // triples (ql[l], ql[l + 32], qh[l]) in reading order
                const int8_t * q8 = yb[b].qs + 128 * h;
                for (int mh = 0; mh < 2; mh++) {
                    __m512i a1 = _mm512_setzero_si512(), a2 = a1, a3 = a1, a4 = a1;
                    for (int m = 4 * mh; m < 4 * mh + 4; m++) {
                        const __m512i qa = _mm512_loadu_si512((const void *) (qw + 192 * m));
                        const __m512i qb = _mm512_loadu_si512((const void *) (qw + 192 * m + 64));
                        const __m512i hb = _mm512_loadu_si512((const void *) (qw + 192 * m + 128));
                        a1 = _mm512_dpbusd_epi32(a1, six_bits(qa, _mm512_slli_epi16(hb, 4)), bcast_word(q8 + 4 * m));
                        a2 = _mm512_dpbusd_epi32(a2, six_bits(qb, _mm512_slli_epi16(hb, 2)), bcast_word(q8 + 32 + 4 * m));
                        a3 = _mm512_dpbusd_epi32(a3, six_bits(_mm512_srli_epi16(qa, 4), hb), bcast_word(q8 + 64 + 4 * m));
                        a4 = _mm512_dpbusd_epi32(a4, six_bits(_mm512_srli_epi16(qb, 4), _mm512_srli_epi16(hb, 2)),
                                                 bcast_word(q8 + 96 + 4 * m));
                    }
                    // sub-blocks 8h + mh, + 2, + 4, + 6: pairs 4h .. 4h + 3, member mh
                    isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(a1, pair_scale(pv[4 * h + 0], mh)));
                    isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(a2, pair_scale(pv[4 * h + 1], mh)));
                    isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(a3, pair_scale(pv[4 * h + 2], mh)));
                    isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(a4, pair_scale(pv[4 * h + 3], mh)));
                }
            }
            const __m512 d = _mm512_mul_ps(_mm512_set1_ps(yb[b].d), _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk)));
            acc = _mm512_add_ps(acc, _mm512_mul_ps(d, _mm512_cvtepi32_ps(isum)));
        }
        _mm512_storeu_ps(s + g * GGML_CPU_REPACK_ROWS, acc);
    }
}
