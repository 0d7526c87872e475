// AVX-512 VNNI gemv over interleaved Q4_K groups (repack.h): one 512-bit load holds one word of all 16 rows,
// so each int32 lane of vpdpbusd accumulates one row's dot of a sub-block; the activation words are
// broadcast. The 16 rows' scales and mins of a sub-block come out of three registers by shifts. Per row the
// integers are those of the scalar vec_dot_q4_K_q8_K (isum = sum sc_j * dot_j, msum = sum m_j * B_j, exact
// int32), and so are the float steps per super-block: sum += (y.d * d) * isum - (y.d * dmin) * msum.
#include "repack.h"

#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"
#include "repack-x86.h"

#include <immintrin.h>
#include <string.h>

// 6-bit value of sub-block j per lane: low nibble at bits 4j of lo, high bit pair at bits 2j of hi
static inline __m512i k4_value(__m512i lo, __m512i hi, int j) {
    const __m512i h = j < 2 ? _mm512_slli_epi32(hi, 4 - 2 * j) : _mm512_srli_epi32(hi, 2 * j - 4);
    return _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(lo, 4 * j), _mm512_set1_epi32(15)),
                           _mm512_and_si512(h, _mm512_set1_epi32(48)));
}

static inline __m512i bcast_word(const int8_t * p) {
    int32_t w;
    memcpy(&w, p, 4);
    return _mm512_set1_epi32(w);
}

void ggml_cpu_repack_gemv_q4_K_avx512(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK_K;
    const block_q8_K * yb = y;
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    int32_t bpair[REPACK_SEG_K][4];
    for (int64_t b0 = 0; b0 < nb; b0 += REPACK_SEG_K) {
        const int64_t b1 = b0 + REPACK_SEG_K < nb ? b0 + REPACK_SEG_K : nb;
        for (int64_t b = b0; b < b1; b++) {
            q4_K_bsum_pairs(yb + b, bpair[b - b0]);
        }
        for (int64_t g = 0; g < ngroups; g++) {
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b0) * GGML_CPU_REPACK_Q4_K_BLOCK;
            __m512 acc = b0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(s + g * GGML_CPU_REPACK_ROWS);
            for (int64_t b = b0; b < b1; b++, blk += GGML_CPU_REPACK_Q4_K_BLOCK) {
                const __m512i sclo = _mm512_loadu_si512((const void *) (blk + 64));
                const __m512i mnlo = _mm512_loadu_si512((const void *) (blk + 128));
                const __m512i schi = _mm512_loadu_si512((const void *) (blk + 192));
                const __m512i mnhi = _mm512_srli_epi32(schi, 16);
                const int8_t * q8 = yb[b].qs;
                __m512i isum = _mm512_setzero_si512();
                for (int c = 0; c < 4; c++) {
                    const uint8_t * qc = blk + 256 + 512 * c;
                    __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
                    for (int m = 0; m < 8; m++) {
                        const __m512i v = _mm512_loadu_si512((const void *) (qc + 64 * m));
                        lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(v, m4), bcast_word(q8 + 64 * c + 4 * m));
                        hi = _mm512_dpbusd_epi32(hi, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4),
                                                 bcast_word(q8 + 64 * c + 32 + 4 * m));
                    }
                    isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(lo, k4_value(sclo, schi, 2 * c)));
                    isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(hi, k4_value(sclo, schi, 2 * c + 1)));
                }
                __m512i msum = _mm512_setzero_si512();
                for (int p = 0; p < 4; p++) {
                    const __m512i mp = _mm512_or_si512(k4_value(mnlo, mnhi, 2 * p),
                                                       _mm512_slli_epi32(k4_value(mnlo, mnhi, 2 * p + 1), 16));
                    msum = _mm512_add_epi32(msum, _mm512_madd_epi16(mp, _mm512_set1_epi32(bpair[b - b0][p])));
                }
                const __m512 yd = _mm512_set1_ps(yb[b].d);
                const __m512 dall = _mm512_mul_ps(yd, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk)));
                const __m512 dmin = _mm512_mul_ps(yd, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (blk + 32))));
                const __m512 t = _mm512_sub_ps(_mm512_mul_ps(dall, _mm512_cvtepi32_ps(isum)),
                                               _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(msum)));
                acc = _mm512_add_ps(acc, t);
            }
            _mm512_storeu_ps(s + g * GGML_CPU_REPACK_ROWS, acc);
        }
    }
}
