// Pieces shared by the AVX2 and AVX-512 gemvs over interleaved groups (repack-<type>-avx2.c,
// repack-<type>-avx512.c); include only from files compiled with at least AVX2.
#pragma once

#include "ggml-common.h"

#include <immintrin.h>
#include <stdint.h>

#define REPACK_SEG 256 // activation blocks whose corrections are computed at once

// Q4_0: 8 * (sum of the block's 32 activations): what the unsigned nibbles (q + 8) add beyond (q - 8) * y
static inline int32_t act_corr(const block_q8_0 * y) {
    const __m256i v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) y->qs), _mm256_set1_epi8((char) 0x80));
    const __m256i s = _mm256_sad_epu8(v, _mm256_setzero_si256()); // sums of y + 128 per 8 bytes
    const __m128i t = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    const int64_t sum = _mm_cvtsi128_si64(t) + _mm_extract_epi64(t, 1) - 32 * 128;
    return (int32_t) (8 * sum);
}

#define REPACK_SEG_K 64 // Q8_K super-blocks whose sums are regrouped at once

// Q4_K: the activation sums of the 8 sub-blocks of 32 (B_j = bsums[2j] + bsums[2j + 1], |B_j| <= 4096) as
// int16 pairs, word p = B_2p | B_2p+1 << 16, the other operand of a vpmaddwd with the mins (m_2p, m_2p+1)
static inline void q4_K_bsum_pairs(const block_q8_K * y, int32_t w[4]) {
    for (int p = 0; p < 4; p++) {
        const int b0 = y->bsums[4 * p + 0] + y->bsums[4 * p + 1];
        const int b1 = y->bsums[4 * p + 2] + y->bsums[4 * p + 3];
        w[p] = (int32_t) ((uint32_t) (uint16_t) b0 | ((uint32_t) (uint16_t) b1 << 16));
    }
}
