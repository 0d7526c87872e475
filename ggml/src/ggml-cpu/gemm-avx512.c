// AVX-512 VNNI GEMM (see gemm.h). A packed 32-element block of a 16-row tile starts with the int8 weights,
// 4-element group g of row r at byte 64 * g + 4 * r (one load gives one group of all rows), followed by
// per-row vectors of 16 lanes, by kind of format:
//   plain    (Q4_0, Q5_0, Q8_0, IQ4_NL, IQ4_XS): corr, d                  w = d * q
//   min      (Q4_1, Q5_1, Q4_K, Q5_K):           corr, d, m               w = d * q - m (Q4_1/Q5_1: m = -min)
//   half     (Q3_K, Q6_K: 16-element scales):   corr0, corr1, d0, d1     groups 0-3 use d0, groups 4-7 d1
//   half-min (Q2_K: 16-element scales, mins):   corr0, corr1, d0, d1, m0, m1
//   lanes    (Q8_0):                              d                        w = d * q, q stored as q + 128
// vpdpbusd multiplies unsigned by signed bytes, so activations are stored as q + 128 (exact in a byte) and
// corr = -128 * (sum of the weights it covers) starts each block's accumulator: the int32 dot is exact.
// Q8_0 follows llama.cpp's float order instead (quants-scalar.c): eight float chains per output, one per
// 4-element group, so the tile keeps the eight group dots apart; there the weights are the unsigned side
// (q + 128) and the activations carry the correction, -128 * (sum of each group's activations).
// Float weights (F16, BF16, F32) stay in their own format in the tile and become F32 in the FMA tile (see
// float_tile_bytes). The packers transpose 16 rows with plain loads and shuffles (rows_t) and gather only the
// per-row scale fields (32-bit offsets); a scalar packer that gives the same bytes handles row strides too
// large for them.
#include "gemm.h"
#include "ggml-cpu-kernels.h"
#include "quants-impl.h"
#include "repack.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#define TILE_R GGML_CPU_GEMM_ROWS
#define BLK    32
#define COLS   8 // activation columns per register tile (8 accumulators + 8 weight registers)

enum pack_kind { KIND_PLAIN = 0, KIND_MIN = 1, KIND_HALF = 2, KIND_HALF_MIN = 3, KIND_LANES = 4 };

static enum pack_kind kind_of(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_1:
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K: return KIND_MIN;
        case GGML_TYPE_Q3_K:
        case GGML_TYPE_Q6_K: return KIND_HALF;
        case GGML_TYPE_Q2_K: return KIND_HALF_MIN;
        case GGML_TYPE_Q8_0: return KIND_LANES;
        default:             return KIND_PLAIN;
    }
}

static size_t block_bytes(enum pack_kind kind) {
    return kind == KIND_PLAIN ? 640 : kind == KIND_MIN ? 704 : kind == KIND_HALF ? 768 : kind == KIND_HALF_MIN ? 896 : 576;
}

// weights multiplied in floats (F16, BF16, F32): F32 tiles, activations rounded as the vec_dot path does
static bool is_float(enum ggml_type type) {
    return type == GGML_TYPE_F16 || type == GGML_TYPE_BF16 || type == GGML_TYPE_F32;
}

// Float tiles keep the weights in their own format, the 16 rows side by side, and the FMA tile converts them
// (vcvtph2ps for F16, a shift or a mask for BF16) on pipes the FMAs leave free: an F16 tile is half the
// bytes of an F32 one, both for the packer to write and for each column panel's pass to stream from L2.
//   F32:  element i of the 16 rows as 16 floats at 64 * i
//   F16:  element i of the 16 rows as 16 halves at 32 * i
//   BF16: elements 2 j (low halves) and 2 j + 1 (high halves) of the 16 rows as 16 32-bit words at 64 * j,
//         as the row transpose gives them (a bf16 is the top half of its float)
static size_t float_tile_bytes(enum ggml_type type, int64_t k) {
    return type == GGML_TYPE_F16 ? (size_t) k * 32 : type == GGML_TYPE_BF16 ? (size_t) (k + 1) / 2 * 64 : (size_t) k * 64;
}

size_t ggml_cpu_gemm_pack_size(enum ggml_type type, int64_t k) {
    if (is_float(type)) {
        return float_tile_bytes(type, k);
    }
    return (size_t) (k / BLK) * block_bytes(kind_of(type));
}

size_t ggml_cpu_gemm_act_row_size(enum ggml_type type, int64_t k) {
    if (is_float(type)) {
        return (size_t) k * sizeof(float); // the row's share of a panel (see gemm.h)
    }
    // an odd number of cache lines: the tiles read 8 columns in step, and rows a power of two apart would
    // all map to the same L1 sets
    // (d and s per block; Q2_K: d and an s per 16 elements; Q8_0: d and eight int32 group corrections)
    const enum pack_kind kind = kind_of(type);
    const size_t nf = kind == KIND_HALF_MIN ? 3 : kind == KIND_LANES ? 9 : 2;
    size_t n = GGML_PAD((size_t) k + nf * sizeof(float) * (size_t) (k / BLK), 64);
    return (n / 64) % 2 == 0 ? n + 64 : n;
}

// the float factors of one packed 32-element block: d[0] (d[1] for the second 16 elements in the half kind)
// and the min m[0] that meets the activation sum (w = d * q - m * sum in the min kind; the half-min kind has
// a d and an m per 16 elements)
struct blk_scales { float d[2]; float m[2]; };

// one row's 32-element block b as 32 signed values and its factors (the generic, scalar packer)
static void decode_block(enum ggml_type type, const void * row, int64_t b, int8_t * v, struct blk_scales * f) {
    f->d[0] = f->d[1] = f->m[0] = f->m[1] = 0.0f;
    const int64_t ib = b / (QK_K / BLK); // super-block and 32-element sub-block of the K-quants
    const int     j  = (int) (b % (QK_K / BLK));
    switch (type) {
        case GGML_TYPE_Q8_0: {
            const block_q8_0 * x = (const block_q8_0 *) row + b;
            memcpy(v, x->qs, BLK);
            f->d[0] = GGML_FP16_TO_FP32(x->d);
            return;
        }
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q4_1: {
            const uint8_t * qs = type == GGML_TYPE_Q4_0 ? ((const block_q4_0 *) row + b)->qs : ((const block_q4_1 *) row + b)->qs;
            const int off = type == GGML_TYPE_Q4_0 ? 8 : 0;
            for (int l = 0; l < BLK / 2; l++) {
                v[l]           = (int8_t) ((qs[l] & 0x0f) - off);
                v[l + BLK / 2] = (int8_t) ((qs[l] >> 4) - off);
            }
            if (type == GGML_TYPE_Q4_0) {
                f->d[0] = GGML_FP16_TO_FP32(((const block_q4_0 *) row + b)->d);
            } else {
                // w = d * q + m: the kernel subtracts m * (activation sum), so m is stored negated
                f->d[0] = GGML_FP16_TO_FP32(((const block_q4_1 *) row + b)->d);
                f->m[0] = -GGML_FP16_TO_FP32(((const block_q4_1 *) row + b)->m);
            }
            return;
        }
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q5_1: {
            const uint8_t * qs = type == GGML_TYPE_Q5_0 ? ((const block_q5_0 *) row + b)->qs : ((const block_q5_1 *) row + b)->qs;
            const uint8_t * qhp = type == GGML_TYPE_Q5_0 ? ((const block_q5_0 *) row + b)->qh : ((const block_q5_1 *) row + b)->qh;
            const int off = type == GGML_TYPE_Q5_0 ? 16 : 0;
            uint32_t qh;
            memcpy(&qh, qhp, 4);
            for (int l = 0; l < BLK / 2; l++) {
                const int lo = (qs[l] & 0x0f) | (int) (((qh >> l) & 1u) << 4);
                const int hi = (qs[l] >> 4) | (int) (((qh >> (l + 16)) & 1u) << 4);
                v[l]           = (int8_t) (lo - off);
                v[l + BLK / 2] = (int8_t) (hi - off);
            }
            if (type == GGML_TYPE_Q5_0) {
                f->d[0] = GGML_FP16_TO_FP32(((const block_q5_0 *) row + b)->d);
            } else {
                f->d[0] = GGML_FP16_TO_FP32(((const block_q5_1 *) row + b)->d);
                f->m[0] = -GGML_FP16_TO_FP32(((const block_q5_1 *) row + b)->m);
            }
            return;
        }
        case GGML_TYPE_IQ4_NL: {
            const block_iq4_nl * x = (const block_iq4_nl *) row + b;
            for (int l = 0; l < BLK / 2; l++) {
                v[l]           = kvalues_iq4nl[x->qs[l] & 0x0f];
                v[l + BLK / 2] = kvalues_iq4nl[x->qs[l] >> 4];
            }
            f->d[0] = GGML_FP16_TO_FP32(x->d);
            return;
        }
        case GGML_TYPE_IQ4_XS: {
            const block_iq4_xs * x = (const block_iq4_xs *) row + ib;
            int8_t sc[QK_K / BLK];
            ggml_cpu_iq4_xs_scales(x, sc);
            for (int l = 0; l < BLK / 2; l++) {
                v[l]           = kvalues_iq4nl[x->qs[16 * j + l] & 0x0f];
                v[l + BLK / 2] = kvalues_iq4nl[x->qs[16 * j + l] >> 4];
            }
            f->d[0] = GGML_FP16_TO_FP32(x->d) * (float) sc[j];
            return;
        }
        case GGML_TYPE_Q4_K: {
            const block_q4_K * x = (const block_q4_K *) row + ib;
            for (int l = 0; l < BLK; l++) {
                v[l] = (int8_t) (j & 1 ? x->qs[32 * (j / 2) + l] >> 4 : x->qs[32 * (j / 2) + l] & 0x0f);
            }
            uint8_t sc, mn;
            ggml_cpu_scale_min_k4(j, x->scales, &sc, &mn);
            f->d[0] = GGML_FP16_TO_FP32(x->d) * (float) sc;
            f->m[0] = GGML_FP16_TO_FP32(x->dmin) * (float) mn;
            return;
        }
        case GGML_TYPE_Q6_K: {
            // 32-element block j: half h = j / 4, quarter q = j % 4: low 4 bits in ql[64 * h + 32 * (q & 1) + l]
            // (high nibble for q >= 2), high 2 bits at bit 2 * q of qh[32 * h + l]; stored + 32
            const block_q6_K * x = (const block_q6_K *) row + ib;
            const int h = j / 4, q = j % 4;
            for (int l = 0; l < BLK; l++) {
                const int lo = q >= 2 ? x->ql[64 * h + 32 * (q & 1) + l] >> 4 : x->ql[64 * h + 32 * (q & 1) + l] & 0x0f;
                const int hi = (x->qh[32 * h + l] >> (2 * q)) & 3;
                v[l] = (int8_t) ((lo | (hi << 4)) - 32);
            }
            const float d = GGML_FP16_TO_FP32(x->d);
            f->d[0] = d * (float) x->scales[2 * j];
            f->d[1] = d * (float) x->scales[2 * j + 1];
            return;
        }
        case GGML_TYPE_Q5_K: {
            // sub-block j: nibbles of qs[32 * (j / 2) ...] (low for even j), fifth bit j of qh[l]
            const block_q5_K * x = (const block_q5_K *) row + ib;
            for (int l = 0; l < BLK; l++) {
                const int q = j & 1 ? x->qs[32 * (j / 2) + l] >> 4 : x->qs[32 * (j / 2) + l] & 0x0f;
                v[l] = (int8_t) (q | (((x->qh[l] >> j) & 1) << 4));
            }
            uint8_t sc, mn;
            ggml_cpu_scale_min_k4(j, x->scales, &sc, &mn);
            f->d[0] = GGML_FP16_TO_FP32(x->d) * (float) sc;
            f->m[0] = GGML_FP16_TO_FP32(x->dmin) * (float) mn;
            return;
        }
        case GGML_TYPE_Q2_K: {
            // 32-element block j: half h = j / 4, 2-bit plane pl = j % 4 of qs[32 * h + l]; scale and min of
            // its 16-element halves in scales[2 * j + 0/1] (low nibble scale, high nibble min)
            const block_q2_K * x = (const block_q2_K *) row + ib;
            const int h = j / 4, pl = j % 4;
            for (int l = 0; l < BLK; l++) {
                v[l] = (int8_t) ((x->qs[32 * h + l] >> (2 * pl)) & 3);
            }
            const float d = GGML_FP16_TO_FP32(x->d), dmin = GGML_FP16_TO_FP32(x->dmin);
            for (int i = 0; i < 2; i++) {
                f->d[i] = d * (float) (x->scales[2 * j + i] & 0x0f);
                f->m[i] = dmin * (float) (x->scales[2 * j + i] >> 4);
            }
            return;
        }
        case GGML_TYPE_Q3_K: {
            // 32-element block j: half h = j / 4, 2-bit plane p = j % 4 of qs[32 * h ...], high bit 4 * h + p of
            // hmask[l]; a clear high bit means the value is 4 lower; scales per 16 elements
            const block_q3_K * x = (const block_q3_K *) row + ib;
            const int h = j / 4, pl = j % 4;
            for (int l = 0; l < BLK; l++) {
                const int q = (x->qs[32 * h + l] >> (2 * pl)) & 3;
                v[l] = (int8_t) (q - ((x->hmask[l] >> (4 * h + pl)) & 1 ? 0 : 4));
            }
            int8_t sc[16];
            ggml_cpu_q3_K_scales(x->scales, sc);
            const float d = GGML_FP16_TO_FP32(x->d);
            f->d[0] = d * (float) sc[2 * j];
            f->d[1] = d * (float) sc[2 * j + 1];
            return;
        }
        default:
            memset(v, 0, BLK);
            return;
    }
}

// the 16 rows' fp16 values at base (+ row * bx) -> floats (absent rows read as zero)
static inline __m512 gather_f16(const uint8_t * base, __m512i vidx, __mmask16 m) {
    const __m512i h = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, vidx, (const void *) base, 1);
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_and_si512(h, _mm512_set1_epi32(0xffff))));
}

static inline __m512i gather4(const uint8_t * base, __m512i vidx, __mmask16 m) {
    return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, vidx, (const void *) base, 1);
}

// -128 * (sum of the signed bytes of groups [g0, g1) per row)
static inline __m512i corr_of(const __m512i * w, int g0, int g1) {
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i sum = _mm512_setzero_si512();
    for (int g = g0; g < g1; g++) {
        sum = _mm512_dpbusd_epi32(sum, ones, w[g]);
    }
    return _mm512_mullo_epi32(sum, _mm512_set1_epi32(-128));
}

static inline void store_w(uint8_t * pb, const __m512i * w) {
    for (int g = 0; g < BLK / 4; g++) {
        _mm512_store_si512((void *) (pb + 64 * g), w[g]);
    }
}

// byte mask of the present rows (4 bytes per row)
static inline __mmask64 row_bytes(__mmask16 m) {
    return (__mmask64) (_pdep_u64(m, 0x1111111111111111ull) * 0xf);
}

// per-row scalars that the vector code cannot gather cheaply (K-quant sub-block scales): [8 or 16][16] floats
static void k_scales(enum ggml_type type, const uint8_t * x, size_t bx, int nrows, int64_t ib, float * a, float * bb) {
    for (int r = 0; r < TILE_R; r++) {
        if (r >= nrows) {
            for (int j = 0; j < 16; j++) {
                a[16 * j + r] = 0.0f;
                bb[16 * j + r] = 0.0f;
            }
            continue;
        }
        const uint8_t * row = x + (size_t) r * bx;
        if (type == GGML_TYPE_Q4_K || type == GGML_TYPE_Q5_K) {
            // the same d, dmin and scales at the same offsets in both formats
            const uint8_t * blk = row + (size_t) ib * (type == GGML_TYPE_Q4_K ? sizeof(block_q4_K) : sizeof(block_q5_K));
            const block_q4_K * b4 = (const block_q4_K *) blk;
            const float d = GGML_FP16_TO_FP32(b4->d), dmin = GGML_FP16_TO_FP32(b4->dmin);
            for (int j = 0; j < 8; j++) {
                uint8_t sc, mn;
                ggml_cpu_scale_min_k4(j, b4->scales, &sc, &mn);
                a[16 * j + r]  = d * (float) sc;
                bb[16 * j + r] = dmin * (float) mn;
            }
        } else if (type == GGML_TYPE_IQ4_XS) {
            const block_iq4_xs * blk = (const block_iq4_xs *) row + ib;
            int8_t sc[QK_K / BLK];
            ggml_cpu_iq4_xs_scales(blk, sc);
            const float d = GGML_FP16_TO_FP32(blk->d);
            for (int j = 0; j < 8; j++) {
                a[16 * j + r] = d * (float) sc[j];
            }
        } else if (type == GGML_TYPE_Q2_K) {
            const block_q2_K * blk = (const block_q2_K *) row + ib;
            const float d = GGML_FP16_TO_FP32(blk->d), dmin = GGML_FP16_TO_FP32(blk->dmin);
            for (int j = 0; j < 16; j++) {
                a[16 * j + r]  = d * (float) (blk->scales[j] & 0x0f);
                bb[16 * j + r] = dmin * (float) (blk->scales[j] >> 4);
            }
        } else if (type == GGML_TYPE_Q3_K) {
            const block_q3_K * blk = (const block_q3_K *) row + ib;
            int8_t sc[16];
            ggml_cpu_q3_K_scales(blk->scales, sc);
            const float d = GGML_FP16_TO_FP32(blk->d);
            for (int j = 0; j < 16; j++) {
                a[16 * j + r] = d * (float) sc[j];
            }
        } else { // Q6_K
            const block_q6_K * blk = (const block_q6_K *) row + ib;
            const float d = GGML_FP16_TO_FP32(blk->d);
            for (int j = 0; j < 16; j++) {
                a[16 * j + r] = d * (float) blk->scales[j];
            }
        }
    }
}

// the low 4 bits of each 32-bit lane, bit t to bit 4 of byte t (the fifth bit of four 5-bit values); the
// multiply puts copies of the nibble 7 bits apart, so bit t lands alone at bit 8 * t
static inline __m512i bits_to_bytes4(__m512i v) {
    const __m512i spread = _mm512_mullo_epi32(_mm512_and_si512(v, _mm512_set1_epi32(0xf)), _mm512_set1_epi32(0x00204081));
    return _mm512_slli_epi32(_mm512_and_si512(spread, _mm512_set1_epi32(0x01010101)), 4);
}

// 16 rows (row r at base + r * bx, absent rows zero) of NDW consecutive 32-bit words, transposed: out[j] =
// word j of the 16 rows, what a gather of offset 4 * j gives, from plain loads and shuffles (the gathers cost
// several times more)
static inline __attribute__((always_inline)) void rows_t(const uint8_t * base, size_t bx, int nrows, const int NDW,
                                                         __m512i * out) {
    if (NDW == 8) {
        __m256i row[16];
        for (int r = 0; r < 16; r++) {
            row[r] = r < nrows ? _mm256_loadu_si256((const __m256i *) (base + (size_t) r * bx)) : _mm256_setzero_si256();
        }
        // two 8 x 8 transposes at once: rows 0-7 in the low halves, rows 8-15 in the high halves
        __m512i z[8], t[8];
        for (int i = 0; i < 8; i++) {
            z[i] = _mm512_inserti64x4(_mm512_castsi256_si512(row[i]), row[i + 8], 1);
        }
        for (int i = 0; i < 8; i += 2) {
            t[i]     = _mm512_unpacklo_epi32(z[i], z[i + 1]);
            t[i + 1] = _mm512_unpackhi_epi32(z[i], z[i + 1]);
        }
        for (int i = 0; i < 8; i += 4) {
            z[i]     = _mm512_unpacklo_epi64(t[i], t[i + 2]);
            z[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
            z[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
            z[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
        }
        // z[j] (j < 4), 128-bit lanes: word j of rows 0-3, word j + 4 of rows 0-3, the same of rows 8-11;
        // z[j + 4]: the same of rows 4-7 and 12-15
        const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
        const __m512i hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
        for (int j = 0; j < 4; j++) {
            out[j]     = _mm512_permutex2var_epi64(z[j], lo, z[j + 4]);
            out[j + 4] = _mm512_permutex2var_epi64(z[j], hi, z[j + 4]);
        }
    } else { // NDW == 4
        __m128i row[16];
        for (int r = 0; r < 16; r++) {
            row[r] = r < nrows ? _mm_loadu_si128((const __m128i *) (base + (size_t) r * bx)) : _mm_setzero_si128();
        }
        // z[i]: rows i, 4 + i, 8 + i, 12 + i in its four 128-bit lanes; then a 4 x 4 transpose per lane
        __m512i z[4], t[4];
        for (int i = 0; i < 4; i++) {
            z[i] = _mm512_inserti32x4(_mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(row[i]), row[4 + i], 1),
                                                         row[8 + i], 2), row[12 + i], 3);
        }
        t[0] = _mm512_unpacklo_epi32(z[0], z[1]);
        t[1] = _mm512_unpackhi_epi32(z[0], z[1]);
        t[2] = _mm512_unpacklo_epi32(z[2], z[3]);
        t[3] = _mm512_unpackhi_epi32(z[2], z[3]);
        out[0] = _mm512_unpacklo_epi64(t[0], t[2]);
        out[1] = _mm512_unpackhi_epi64(t[0], t[2]);
        out[2] = _mm512_unpacklo_epi64(t[1], t[3]);
        out[3] = _mm512_unpackhi_epi64(t[1], t[3]);
    }
}

// the supported formats with a vector transpose of the 16 rows (see rows_t)
static bool pack_fast(enum ggml_type type, int64_t nb, const uint8_t * x, size_t bx, int nrows, uint8_t * p) {
    if (bx > (size_t) INT32_MAX / TILE_R) {
        return false;
    }
    const __mmask16 m = (__mmask16) (nrows >= TILE_R ? 0xffffu : ((1u << nrows) - 1u));
    const __m512i vidx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32((int) bx));
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512i w[BLK / 4];
    switch (type) {
        case GGML_TYPE_Q8_0:
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t * blk = x + (size_t) b * sizeof(block_q8_0);
                uint8_t * pb = p + (size_t) b * 576;
                rows_t(blk + 2, bx, nrows, 8, w);
                for (int g = 0; g < BLK / 4; g++) {
                    w[g] = _mm512_xor_si512(w[g], _mm512_set1_epi8((char) 0x80)); // the unsigned side (KIND_LANES)
                }
                store_w(pb, w);
                _mm512_store_ps((void *) (pb + 512), gather_f16(blk, vidx, m));
            }
            return true;
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q5_1:
        case GGML_TYPE_IQ4_NL: {
            // 32-element blocks of nibbles: element l in the low nibble of qs[l], l + 16 in the high one; the
            // 5-bit formats add bit l of the 32-bit qh
            size_t bsz, off_qs, off_qh = 0, off_m = 0;
            int off = 0; // subtracted from the unsigned values
            switch (type) {
                case GGML_TYPE_Q4_0: bsz = sizeof(block_q4_0); off_qs = offsetof(block_q4_0, qs); off = 8; break;
                case GGML_TYPE_Q4_1: bsz = sizeof(block_q4_1); off_qs = offsetof(block_q4_1, qs); off_m = offsetof(block_q4_1, m); break;
                case GGML_TYPE_Q5_0: bsz = sizeof(block_q5_0); off_qs = offsetof(block_q5_0, qs); off_qh = offsetof(block_q5_0, qh); off = 16; break;
                case GGML_TYPE_Q5_1: bsz = sizeof(block_q5_1); off_qs = offsetof(block_q5_1, qs); off_qh = offsetof(block_q5_1, qh); off_m = offsetof(block_q5_1, m); break;
                default:             bsz = sizeof(block_iq4_nl); off_qs = offsetof(block_iq4_nl, qs); break;
            }
            const bool min = off_m != 0, iq = type == GGML_TYPE_IQ4_NL;
            const size_t pbytes = block_bytes(kind_of(type));
            const __m512i voff = _mm512_set1_epi8((char) off);
            const __m512i grid = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) kvalues_iq4nl));
            const __mmask64 mb = row_bytes(m); // absent rows must stay 0, not 0 - off
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t * blk = x + (size_t) b * bsz;
                uint8_t * pb = p + (size_t) b * pbytes;
                const __m512i qh = off_qh ? gather4(blk + off_qh, vidx, m) : _mm512_setzero_si512();
                __m512i qt[4];
                rows_t(blk + off_qs, bx, nrows, 4, qt);
                for (int g = 0; g < 4; g++) {
                    const __m512i q = qt[g];
                    __m512i lo = _mm512_and_si512(q, m4);
                    __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
                    if (iq) {
                        lo = _mm512_shuffle_epi8(grid, lo);
                        hi = _mm512_shuffle_epi8(grid, hi);
                    } else if (off_qh) {
                        lo = _mm512_or_si512(lo, bits_to_bytes4(_mm512_srli_epi32(qh, 4 * g)));
                        hi = _mm512_or_si512(hi, bits_to_bytes4(_mm512_srli_epi32(qh, 16 + 4 * g)));
                    }
                    w[g]     = _mm512_maskz_sub_epi8(mb, lo, voff);
                    w[g + 4] = _mm512_maskz_sub_epi8(mb, hi, voff);
                }
                store_w(pb, w);
                _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 8));
                _mm512_store_ps((void *) (pb + 576), gather_f16(blk, vidx, m));
                if (min) {
                    // w = d * q + m: the kernel subtracts m * (activation sum), so m is stored negated (the
                    // absent rows' zeros stay +0, as in the scalar packer)
                    const __m512 fm = gather_f16(blk + off_m, vidx, m);
                    const __m512i sign = _mm512_set1_epi32((int) 0x80000000u);
                    _mm512_store_ps((void *) (pb + 640), _mm512_castsi512_ps(_mm512_mask_xor_epi32(_mm512_castps_si512(fm), m, _mm512_castps_si512(fm), sign)));
                }
            }
            return true;
        }
        case GGML_TYPE_IQ4_XS: {
            float sc[16 * 16], unused[16 * 16];
            const __m512i grid = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) kvalues_iq4nl));
            const __mmask64 mb = row_bytes(m);
            for (int64_t ib = 0; ib < nb / 8; ib++) {
                const uint8_t * qs = x + (size_t) ib * sizeof(block_iq4_xs) + offsetof(block_iq4_xs, qs);
                k_scales(type, x, bx, nrows, ib, sc, unused);
                for (int j = 0; j < 8; j++) {
                    uint8_t * pb = p + (size_t) (8 * ib + j) * 640;
                    __m512i qt[4];
                    rows_t(qs + 16 * j, bx, nrows, 4, qt);
                    for (int g = 0; g < 4; g++) {
                        const __m512i q = qt[g];
                        w[g]     = _mm512_maskz_shuffle_epi8(mb, grid, _mm512_and_si512(q, m4));
                        w[g + 4] = _mm512_maskz_shuffle_epi8(mb, grid, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4));
                    }
                    store_w(pb, w);
                    _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 8));
                    _mm512_store_ps((void *) (pb + 576), _mm512_loadu_ps(sc + 16 * j));
                }
            }
            return true;
        }
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K: {
            float sc[16 * 16], mn[16 * 16];
            const bool q5 = type == GGML_TYPE_Q5_K;
            const size_t bsz = q5 ? sizeof(block_q5_K) : sizeof(block_q4_K);
            const size_t off_qs = q5 ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
            const __m512i one = _mm512_set1_epi8(1);
            for (int64_t ib = 0; ib < nb / 8; ib++) {
                const uint8_t * qs = x + (size_t) ib * bsz + off_qs;
                const uint8_t * qh = x + (size_t) ib * bsz + offsetof(block_q5_K, qh);
                k_scales(type, x, bx, nrows, ib, sc, mn);
                // the quants of each pair of sub-blocks transposed once (pair 0 here, the others as they come)
                __m512i qt[8], ht[8];
                rows_t(qs, bx, nrows, 8, qt);
                if (q5) {
                    rows_t(qh, bx, nrows, 8, ht);
                }
                for (int j = 0; j < 8; j++) {
                    uint8_t * pb = p + (size_t) (8 * ib + j) * 704;
                    if (j % 2 == 0 && j > 0) {
                        rows_t(qs + 32 * (j / 2), bx, nrows, 8, qt);
                    }
                    // sub-block j: low nibbles (j even) or high nibbles (j odd) of qs[32 * (j / 2) ...]; Q5_K's
                    // fifth bit of element l is bit j of qh[l] (a 16-bit shift by j < 8 keeps each byte's own bit)
                    for (int g = 0; g < 8; g++) {
                        const __m512i q = qt[g];
                        w[g] = _mm512_and_si512(j & 1 ? _mm512_srli_epi16(q, 4) : q, m4);
                        if (q5) {
                            const __m512i h = _mm512_and_si512(_mm512_srli_epi16(ht[g], j), one);
                            w[g] = _mm512_or_si512(w[g], _mm512_slli_epi16(h, 4));
                        }
                    }
                    store_w(pb, w);
                    _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 8));
                    _mm512_store_ps((void *) (pb + 576), _mm512_loadu_ps(sc + 16 * j));
                    _mm512_store_ps((void *) (pb + 640), _mm512_loadu_ps(mn + 16 * j));
                }
            }
            return true;
        }
        case GGML_TYPE_Q2_K: {
            float sc[16 * 16], mn[16 * 16];
            __m512i qt[8];
            const __m512i m2 = _mm512_set1_epi8(0x03);
            for (int64_t ib = 0; ib < nb / 8; ib++) {
                const uint8_t * blk = x + (size_t) ib * sizeof(block_q2_K);
                k_scales(type, x, bx, nrows, ib, sc, mn);
                // the quants of each half transposed once (half 0 here, half 1 as it comes)
                rows_t(blk + offsetof(block_q2_K, qs), bx, nrows, 8, qt);
                for (int j = 0; j < 8; j++) {
                    // 32-element block j: 2-bit plane j % 4 of qs[32 * (j / 4) + l] (absent rows read as zeros)
                    const uint8_t * qs = blk + offsetof(block_q2_K, qs) + 32 * (j / 4);
                    uint8_t * pb = p + (size_t) (8 * ib + j) * 896;
                    if (j == 4) {
                        rows_t(qs, bx, nrows, 8, qt);
                    }
                    for (int g = 0; g < 8; g++) {
                        w[g] = _mm512_and_si512(_mm512_srli_epi16(qt[g], 2 * (j % 4)), m2);
                    }
                    store_w(pb, w);
                    _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 4));
                    _mm512_store_si512((void *) (pb + 576), corr_of(w, 4, 8));
                    _mm512_store_ps((void *) (pb + 640), _mm512_loadu_ps(sc + 16 * (2 * j)));
                    _mm512_store_ps((void *) (pb + 704), _mm512_loadu_ps(sc + 16 * (2 * j + 1)));
                    _mm512_store_ps((void *) (pb + 768), _mm512_loadu_ps(mn + 16 * (2 * j)));
                    _mm512_store_ps((void *) (pb + 832), _mm512_loadu_ps(mn + 16 * (2 * j + 1)));
                }
            }
            return true;
        }
        case GGML_TYPE_Q3_K: {
            float sc[16 * 16], unused[16 * 16];
            const __m512i m2 = _mm512_set1_epi8(0x03);
            const __m512i one = _mm512_set1_epi8(1);
            const __m512i four = _mm512_set1_epi8(4);
            const __mmask64 mb = row_bytes(m);
            for (int64_t ib = 0; ib < nb / 8; ib++) {
                const uint8_t * blk = x + (size_t) ib * sizeof(block_q3_K);
                k_scales(type, x, bx, nrows, ib, sc, unused);
                // hmask transposed once, the quants once per half (half 0 here, half 1 as it comes)
                __m512i qt[8], ht[8];
                rows_t(blk + offsetof(block_q3_K, hmask), bx, nrows, 8, ht);
                rows_t(blk + offsetof(block_q3_K, qs), bx, nrows, 8, qt);
                for (int j = 0; j < 8; j++) {
                    // 32-element block j: half h = j / 4, 2-bit plane pl = j % 4 of qs[32 * h + l], high bit
                    // 4 * h + pl of hmask[l] (clear: the value is 4 lower); 16-bit shifts by < 8 keep each byte's bits
                    const int h = j / 4, pl = j % 4;
                    const uint8_t * qs = blk + offsetof(block_q3_K, qs) + 32 * h;
                    uint8_t * pb = p + (size_t) (8 * ib + j) * 768;
                    if (j == 4) {
                        rows_t(qs, bx, nrows, 8, qt);
                    }
                    for (int g = 0; g < 8; g++) {
                        const __m512i lo = _mm512_and_si512(_mm512_srli_epi16(qt[g], 2 * pl), m2);
                        const __m512i hb = _mm512_and_si512(_mm512_srli_epi16(ht[g], 4 * h + pl), one);
                        w[g] = _mm512_maskz_sub_epi8(mb, _mm512_or_si512(lo, _mm512_slli_epi16(hb, 2)), four);
                    }
                    store_w(pb, w);
                    _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 4));
                    _mm512_store_si512((void *) (pb + 576), corr_of(w, 4, 8));
                    _mm512_store_ps((void *) (pb + 640), _mm512_loadu_ps(sc + 16 * (2 * j)));
                    _mm512_store_ps((void *) (pb + 704), _mm512_loadu_ps(sc + 16 * (2 * j + 1)));
                }
            }
            return true;
        }
        case GGML_TYPE_Q6_K: {
            float sc[16 * 16], unused[16 * 16];
            const __m512i m2 = _mm512_set1_epi8(0x03);
            const __m512i k32 = _mm512_set1_epi8(32);
            const __mmask64 mb = row_bytes(m);
            for (int64_t ib = 0; ib < nb / 8; ib++) {
                const uint8_t * blk = x + (size_t) ib * sizeof(block_q6_K);
                k_scales(type, x, bx, nrows, ib, sc, unused);
                __m512i ht[8];
                rows_t(blk + offsetof(block_q6_K, qh), bx, nrows, 8, ht); // half 0's high bits; half 1's at j = 4
                for (int j = 0; j < 8; j++) {
                    // 32-element block j: half h = j / 4 of the super-block, quarter q = j % 4 within it
                    const int h = j / 4, q = j % 4;
                    const uint8_t * ql = blk + offsetof(block_q6_K, ql) + 64 * h + 32 * (q & 1);
                    const uint8_t * qh = blk + offsetof(block_q6_K, qh) + 32 * h;
                    uint8_t * pb = p + (size_t) (8 * ib + j) * 768;
                    __m512i lt[8];
                    rows_t(ql, bx, nrows, 8, lt);
                    if (j == 4) {
                        rows_t(qh, bx, nrows, 8, ht);
                    }
                    for (int g = 0; g < 8; g++) {
                        const __m512i lo = lt[g];
                        const __m512i hi = ht[g];
                        const __m512i l4 = _mm512_and_si512(q >= 2 ? _mm512_srli_epi16(lo, 4) : lo, m4);
                        const __m512i h2 = _mm512_and_si512(_mm512_srlv_epi16(hi, _mm512_set1_epi16((short) (2 * q))), m2);
                        w[g] = _mm512_maskz_sub_epi8(mb, _mm512_or_si512(l4, _mm512_slli_epi16(h2, 4)), k32);
                    }
                    store_w(pb, w);
                    _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 4));
                    _mm512_store_si512((void *) (pb + 576), corr_of(w, 4, 8));
                    _mm512_store_ps((void *) (pb + 640), _mm512_loadu_ps(sc + 16 * (2 * j)));
                    _mm512_store_ps((void *) (pb + 704), _mm512_loadu_ps(sc + 16 * (2 * j + 1)));
                }
            }
            return true;
        }
        default:
            return false;
    }
}

// where element i of row r goes in the tile
static size_t float_tile_at(enum ggml_type type, int64_t i, int r) {
    switch (type) {
        case GGML_TYPE_F16:  return (size_t) i * 32 + 2 * (size_t) r;
        case GGML_TYPE_BF16: return (size_t) (i / 2) * 64 + 4 * (size_t) r + 2 * (size_t) (i % 2);
        default:             return (size_t) i * 64 + 4 * (size_t) r;
    }
}

static void pack_float(enum ggml_type type, int64_t k, const uint8_t * x, size_t bx, int nrows, uint8_t * p) {
    const size_t es = ggml_type_size(type);
    const int64_t per = 32 / (int64_t) es; // elements in 32 bytes, which rows_t transposes as 8 words
    // F16: word j of the 16 rows holds their elements 2 j (low half) and 2 j + 1; this puts the 16 low
    // halves before the 16 high ones
    const __m512i split = _mm512_set_epi16(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1,
                                           30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    int64_t i = 0;
    for (; i + per <= k; i += per) {
        __m512i v[8];
        rows_t(x + es * (size_t) i, bx, nrows, 8, v);
        for (int j = 0; j < 8; j++) {
            if (type == GGML_TYPE_F16) {
                _mm512_store_si512((void *) (p + 32 * (i + 2 * j)), _mm512_permutexvar_epi16(split, v[j]));
            } else if (type == GGML_TYPE_BF16) {
                _mm512_store_si512((void *) (p + 32 * i + 64 * j), v[j]);
            } else {
                _mm512_store_si512((void *) (p + 64 * (i + j)), v[j]);
            }
        }
    }
    if (i < k) {
        // the tail element by element, absent rows and a BF16 tile's unused last half zero
        memset(p + float_tile_at(type, i, 0), 0, float_tile_bytes(type, k) - float_tile_at(type, i, 0));
        for (; i < k; i++) {
            for (int r = 0; r < nrows; r++) {
                memcpy(p + float_tile_at(type, i, r), x + (size_t) r * bx + es * (size_t) i, es);
            }
        }
    }
}

void ggml_cpu_gemm_pack(enum ggml_type type, int64_t k, const void * x, size_t bx, int nrows, void * pack) {
    const int64_t nb = k / BLK;
    uint8_t * p = pack;
    if (is_float(type)) {
        pack_float(type, k, x, bx, nrows, p);
        return;
    }
    if (pack_fast(type, nb, x, bx, nrows, p)) {
        return;
    }
    // the other formats: decoded row by row (the types of pack_fast always go there, given the row stride
    // limit of gemm.h)
    const enum pack_kind kind = kind_of(type);
    const size_t pbytes = block_bytes(kind);
    for (int r = 0; r < TILE_R; r++) {
        const char * row = (const char *) x + (size_t) r * bx;
        for (int64_t b = 0; b < nb; b++) {
            uint8_t * pb = p + (size_t) b * pbytes;
            int8_t v[BLK];
            struct blk_scales f = { { 0.0f, 0.0f }, { 0.0f, 0.0f } };
            if (r < nrows) {
                decode_block(type, row, b, v, &f);
            } else {
                memset(v, 0, sizeof(v));
            }
            if (kind == KIND_LANES) {
                for (int l = 0; l < BLK; l++) {
                    pb[64 * (l / 4) + 4 * r + l % 4] = (uint8_t) (v[l] + 128);
                }
                memcpy(pb + 512 + 4 * r, &f.d[0], 4);
                continue;
            }
            int32_t sum[2] = { 0, 0 };
            for (int g = 0; g < BLK / 4; g++) {
                memcpy(pb + 64 * g + 4 * r, v + 4 * g, 4);
                sum[g / 4] += v[4 * g] + v[4 * g + 1] + v[4 * g + 2] + v[4 * g + 3];
            }
            if (kind == KIND_HALF || kind == KIND_HALF_MIN) {
                const int32_t c0 = -128 * sum[0], c1 = -128 * sum[1];
                memcpy(pb + 512 + 4 * r, &c0, 4);
                memcpy(pb + 576 + 4 * r, &c1, 4);
                memcpy(pb + 640 + 4 * r, &f.d[0], 4);
                memcpy(pb + 704 + 4 * r, &f.d[1], 4);
                if (kind == KIND_HALF_MIN) {
                    memcpy(pb + 768 + 4 * r, &f.m[0], 4);
                    memcpy(pb + 832 + 4 * r, &f.m[1], 4);
                }
                continue;
            }
            const int32_t corr = -128 * (sum[0] + sum[1]);
            memcpy(pb + 512 + 4 * r, &corr, 4);
            memcpy(pb + 576 + 4 * r, &f.d[0], 4);
            if (kind == KIND_MIN) {
                memcpy(pb + 640 + 4 * r, &f.m[0], 4);
            }
        }
    }
}

// An interleaved group (repack.h) already holds each 4-element group of the 16 rows side by side, 4 bytes per
// row in one 64-byte word: the tile's order. So the words go over as they are (Q8_0: the stored q + 128 is the
// tile's unsigned side too) or with the nibbles (and Q6_K's bit pairs) split and centred, and only the scales
// are widened (the K-quants': from the per-row fields the layout keeps side by side, as k_scales computes
// them): no transpose, and no unpack to plain rows first. The bytes are those of ggml_cpu_gemm_pack on the
// unpacked rows (pack_fast with all 16 rows present).
bool ggml_cpu_gemm_pack_repacked(enum ggml_type type, int64_t k, const void * group, void * pack) {
    const int64_t nb = k / BLK;
    const uint8_t * x = group;
    uint8_t * p = pack;
    switch (type) {
        case GGML_TYPE_Q8_0:
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t * blk = x + (size_t) b * GGML_CPU_REPACK_Q8_0_BLOCK;
                uint8_t * pb = p + (size_t) b * block_bytes(KIND_LANES);
                for (int g = 0; g < BLK / 4; g++) {
                    _mm512_store_si512((void *) (pb + 64 * g), _mm512_loadu_si512((const void *) (blk + 32 + 64 * g)));
                }
                _mm512_store_ps((void *) (pb + 512), _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk)));
            }
            return true;
        case GGML_TYPE_Q4_0: {
            const __m512i m4 = _mm512_set1_epi8(0x0f), v8 = _mm512_set1_epi8(8);
            __m512i w[BLK / 4];
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t * blk = x + (size_t) b * GGML_CPU_REPACK_Q4_0_BLOCK;
                uint8_t * pb = p + (size_t) b * block_bytes(KIND_PLAIN);
                for (int g = 0; g < 4; g++) {
                    // word g: qs[4g..4g+3] of each row = elements 4g.. in the low nibbles, 16 + 4g.. in the high
                    const __m512i q = _mm512_loadu_si512((const void *) (blk + 32 + 64 * g));
                    w[g]     = _mm512_sub_epi8(_mm512_and_si512(q, m4), v8);
                    w[g + 4] = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(q, 4), m4), v8);
                }
                store_w(pb, w);
                _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 8));
                _mm512_store_ps((void *) (pb + 576), _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk)));
            }
            return true;
        }
        case GGML_TYPE_Q4_K: {
            // chunk j / 2 of a block holds the nibbles of sub-blocks j (low) and j + 1 (high) in the tile's word
            // order; the 6-bit scales and mins come from the regrouped low nibbles (bits 4 j) and high bit pairs
            // (bits 2 j, mins at 16 + 2 j) with a few shifts for all 16 rows
            const __m512i m4 = _mm512_set1_epi8(0x0f), lo4 = _mm512_set1_epi32(15), lo2 = _mm512_set1_epi32(3);
            __m512i w[BLK / 4];
            for (int64_t ib = 0; ib < nb / 8; ib++) {
                const uint8_t * blk = x + (size_t) ib * GGML_CPU_REPACK_Q4_K_BLOCK;
                const __m512 d    = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk));
                const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (blk + 32)));
                const __m512i sclo = _mm512_loadu_si512((const void *) (blk + 64));
                const __m512i mlo  = _mm512_loadu_si512((const void *) (blk + 128));
                const __m512i hi   = _mm512_loadu_si512((const void *) (blk + 192));
                for (int j = 0; j < 8; j++) {
                    const uint8_t * qs = blk + 256 + 512 * (j / 2);
                    uint8_t * pb = p + (size_t) (8 * ib + j) * block_bytes(KIND_MIN);
                    for (int g = 0; g < BLK / 4; g++) {
                        const __m512i q = _mm512_loadu_si512((const void *) (qs + 64 * g));
                        w[g] = _mm512_and_si512(j & 1 ? _mm512_srli_epi16(q, 4) : q, m4);
                    }
                    store_w(pb, w);
                    _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 8));
                    const __m512i sc = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(sclo, 4 * j), lo4),
                                                       _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(hi, 2 * j), lo2), 4));
                    const __m512i mn = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(mlo, 4 * j), lo4),
                                                       _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(hi, 16 + 2 * j), lo2), 4));
                    // d * (float) sc as k_scales computes it: one rounding either way
                    _mm512_store_ps((void *) (pb + 576), _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc)));
                    _mm512_store_ps((void *) (pb + 640), _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(mn)));
                }
            }
            return true;
        }
        case GGML_TYPE_Q6_K: {
            // 32-element block j (half h = j / 4, quarter q = j % 4): word g of the tile is triple g of half h,
            // its ql word (q & 1) (high nibbles for q >= 2) and bit pair q of its qh word; the two int8 scales
            // of the block are one pair of the group, row r's at 2 r
            const __m512i m4 = _mm512_set1_epi8(0x0f), m2 = _mm512_set1_epi8(0x03), k32 = _mm512_set1_epi8(32);
            __m512i w[BLK / 4];
            for (int64_t ib = 0; ib < nb / 8; ib++) {
                const uint8_t * blk = x + (size_t) ib * GGML_CPU_REPACK_Q6_K_BLOCK;
                const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk));
                for (int j = 0; j < 8; j++) {
                    const int h = j / 4, q = j % 4;
                    const uint8_t * tri = blk + 288 + 1536 * h;
                    uint8_t * pb = p + (size_t) (8 * ib + j) * block_bytes(KIND_HALF);
                    for (int g = 0; g < BLK / 4; g++) {
                        const __m512i lo = _mm512_loadu_si512((const void *) (tri + 192 * g + 64 * (q & 1)));
                        const __m512i hb = _mm512_loadu_si512((const void *) (tri + 192 * g + 128));
                        const __m512i l4 = _mm512_and_si512(q >= 2 ? _mm512_srli_epi16(lo, 4) : lo, m4);
                        const __m512i h2 = _mm512_and_si512(_mm512_srli_epi16(hb, 2 * q), m2); // 16-bit shift < 8: bytes stay apart
                        w[g] = _mm512_sub_epi8(_mm512_or_si512(l4, _mm512_slli_epi16(h2, 4)), k32);
                    }
                    store_w(pb, w);
                    _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 4));
                    _mm512_store_si512((void *) (pb + 576), corr_of(w, 4, 8));
                    // row r's scales 2 j (low byte) and 2 j + 1 (high byte) as one int16, sign-extended apart
                    const __m512i s = _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *) (blk + 32 + 32 * j)));
                    const __m512i s0 = _mm512_srai_epi32(_mm512_slli_epi32(s, 24), 24), s1 = _mm512_srai_epi32(s, 8);
                    _mm512_store_ps((void *) (pb + 640), _mm512_mul_ps(d, _mm512_cvtepi32_ps(s0)));
                    _mm512_store_ps((void *) (pb + 704), _mm512_mul_ps(d, _mm512_cvtepi32_ps(s1)));
                }
            }
            return true;
        }
        default:
            return false;
    }
}

size_t ggml_cpu_gemm_act_size(enum ggml_type type, int64_t k, int64_t ncols) {
    if (is_float(type)) {
        ncols = (ncols + GGML_CPU_GEMM_PANEL - 1) / GGML_CPU_GEMM_PANEL * GGML_CPU_GEMM_PANEL;
    }
    return ggml_cpu_gemm_act_row_size(type, k) * (size_t) ncols;
}

// float weights: the activations rounded as the vec_dot path rounds them (F16 and BF16: through its own
// format, so each product with a weight is exact in F32 and only the summation order differs from vec_dot;
// F32: as they are), element i of the panel's columns side by side
static void act_float(enum ggml_type type, const float * x, float * act, int64_t k, int64_t col) {
    float * y = act + (col / GGML_CPU_GEMM_PANEL) * k * GGML_CPU_GEMM_PANEL + col % GGML_CPU_GEMM_PANEL;
    const __m512i stride = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                              _mm512_set1_epi32(GGML_CPU_GEMM_PANEL));
    if (type == GGML_TYPE_F16) {
        int64_t i = 0;
        for (; i + 16 <= k; i += 16) {
            const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            _mm512_i32scatter_ps(y + i * GGML_CPU_GEMM_PANEL, stride, _mm512_cvtph_ps(h), 4);
        }
        for (; i < k; i++) {
            y[i * GGML_CPU_GEMM_PANEL] = GGML_FP16_TO_FP32(GGML_FP32_TO_FP16(x[i]));
        }
        return;
    }
    if (type == GGML_TYPE_F32) {
        for (int64_t i = 0; i < k; i++) {
            y[i * GGML_CPU_GEMM_PANEL] = x[i];
        }
        return;
    }
    // BF16: the vec_dot path's own converter (its rounding and NaN handling), in pieces
    const ggml_cpu_from_float_t to_bf16 = ggml_cpu_get_kernels(GGML_TYPE_BF16)->from_float;
    for (int64_t i0 = 0; i0 < k; i0 += 256) {
        const int64_t n = k - i0 < 256 ? k - i0 : 256;
        uint16_t h[256];
        to_bf16(x + i0, h, n);
        for (int64_t i = 0; i < n; i++) {
            const uint32_t u = (uint32_t) h[i] << 16;
            memcpy(&y[(i0 + i) * GGML_CPU_GEMM_PANEL], &u, 4);
        }
    }
}

// stores quantized block b (32 values qs with scale d) as unsigned bytes, its scale and s (see below; not
// when s is NULL)
static inline void act_block(uint8_t * q, float * d, float * s, int64_t b, const int8_t * qs, float scale, bool has_s,
                             float s_given) {
    const __m256i u = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) qs), _mm256_set1_epi8((char) 0x80));
    _mm256_storeu_si256((__m256i *) (q + b * BLK), u);
    // sum of the unsigned bytes (four partial sums of 8), less the 32 offsets of 128
    const __m256i s4 = _mm256_sad_epu8(u, _mm256_setzero_si256());
    const int sum = (int) (_mm256_extract_epi64(s4, 0) + _mm256_extract_epi64(s4, 1) + _mm256_extract_epi64(s4, 2) +
                           _mm256_extract_epi64(s4, 3)) - 128 * BLK;
    d[b] = scale;
    if (s != NULL) {
        s[b] = has_s ? s_given : scale * (float) sum;
    }
}

// Q8_0 (KIND_LANES): the signed Q8_0 values as they are, then d per block, then per block the eight group
// corrections -128 * (sum of the group's four values) that turn the weights' q + 128 back into q
static void act_lanes(const float * x, uint8_t * act, int64_t k) {
    const ggml_cpu_from_float_t quant = ggml_cpu_get_kernels(GGML_TYPE_Q8_0)->from_float;
    const int64_t nb = k / BLK;
    float * d = (float *) (act + k);
    int32_t * corr = (int32_t *) (d + nb);
    for (int64_t b = 0; b < nb; b++) {
        block_q8_0 blk;
        quant(x + b * BLK, &blk, BLK);
        memcpy(act + b * BLK, blk.qs, BLK);
        d[b] = GGML_FP16_TO_FP32(blk.d);
        for (int g = 0; g < BLK / 4; g++) {
            const int8_t * q = blk.qs + 4 * g;
            corr[8 * b + g] = -128 * (q[0] + q[1] + q[2] + q[3]);
        }
    }
}

void ggml_cpu_gemm_act_from_float(enum ggml_type type, const float * x, void * act, int64_t k, int64_t col) {
    if (is_float(type)) {
        act_float(type, x, act, k, col);
        return;
    }
    act = (uint8_t *) act + (size_t) col * ggml_cpu_gemm_act_row_size(type, k);
    if (kind_of(type) == KIND_LANES) {
        act_lanes(x, act, k);
        return;
    }
    // the vec_dot path's quantizer (Q8_0, Q8_1, or Q8_K for the K-quants and IQ4_XS), so that every
    // 32-element integer dot equals vec_dot's; Q8_0/Q8_1 blocks are independent, Q8_K takes super-blocks of 256.
    // s is what vec_dot multiplies the weights' min with: d * (sum of q), or Q8_1's stored (F16) s
    const enum ggml_type vdt = ggml_cpu_get_kernels(type)->vec_dot_type;
    const ggml_cpu_from_float_t quant = ggml_cpu_get_kernels(vdt)->from_float;
    const int64_t nb = k / BLK;
    const int per = vdt == GGML_TYPE_Q8_K ? QK_K / BLK : 1; // 32-element blocks per quantizer call
    const bool half_min = kind_of(type) == KIND_HALF_MIN;
    uint8_t * q = act;
    float * d = (float *) (q + k);
    float * s = d + nb;
    for (int64_t b0 = 0; b0 < nb; b0 += per) {
        if (vdt == GGML_TYPE_Q8_K) {
            block_q8_K blk;
            quant(x + b0 * BLK, &blk, QK_K);
            for (int j = 0; j < per; j++) {
                act_block(q, d, half_min ? NULL : s, b0 + j, blk.qs + j * BLK, blk.d, false, 0.0f);
            }
            if (half_min) {
                // an s per 16 elements instead (Q8_K's bsums), which Q2_K's mins meet
                for (int i = 0; i < 2 * per; i++) {
                    s[2 * b0 + i] = blk.d * (float) blk.bsums[i];
                }
            }
        } else if (vdt == GGML_TYPE_Q8_1) {
            block_q8_1 blk;
            quant(x + b0 * BLK, &blk, BLK);
            act_block(q, d, s, b0, blk.qs, GGML_FP16_TO_FP32(blk.d), true, GGML_FP16_TO_FP32(blk.s));
        } else {
            block_q8_0 blk;
            quant(x + b0 * BLK, &blk, BLK);
            act_block(q, d, s, b0, blk.qs, GGML_FP16_TO_FP32(blk.d), false, 0.0f);
        }
    }
}

static inline __m512i bcast4(const uint8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

// one tile against NC columns; NC and KIND are constants after inlining so the accumulators stay in registers
static inline __attribute__((always_inline)) void tile_cols(int64_t k, const uint8_t * pack, const uint8_t * act,
                                                            size_t bact, const int NC, const enum pack_kind KIND,
                                                            float * dst, size_t bdst, __mmask16 mask) {
    const int64_t nb = k / BLK;
    const size_t pbytes = block_bytes(KIND);
    __m512 facc[COLS];
    for (int c = 0; c < NC; c++) {
        facc[c] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t * p = pack + (size_t) b * pbytes;
        const __m512i w0 = _mm512_load_si512((const void *) (p + 0 * 64));
        const __m512i w1 = _mm512_load_si512((const void *) (p + 1 * 64));
        const __m512i w2 = _mm512_load_si512((const void *) (p + 2 * 64));
        const __m512i w3 = _mm512_load_si512((const void *) (p + 3 * 64));
        const __m512i w4 = _mm512_load_si512((const void *) (p + 4 * 64));
        const __m512i w5 = _mm512_load_si512((const void *) (p + 5 * 64));
        const __m512i w6 = _mm512_load_si512((const void *) (p + 6 * 64));
        const __m512i w7 = _mm512_load_si512((const void *) (p + 7 * 64));
        const __m512i c0 = _mm512_load_si512((const void *) (p + 512));
        const bool half = KIND == KIND_HALF || KIND == KIND_HALF_MIN;
        const __m512i c1 = half ? _mm512_load_si512((const void *) (p + 576)) : _mm512_setzero_si512();
        for (int c = 0; c < NC; c++) {
            const uint8_t * a = act + (size_t) c * bact + (size_t) b * BLK;
            const float * ad = (const float *) (act + (size_t) c * bact + (size_t) k);
            // two chains of four keep the dependent vpdpbusd latency off the critical path; in the half
            // kind they are exactly the two 16-element halves
            __m512i s0 = _mm512_dpbusd_epi32(c0, bcast4(a + 0), w0);
            __m512i s1 = _mm512_dpbusd_epi32(c1, bcast4(a + 16), w4);
            s0 = _mm512_dpbusd_epi32(s0, bcast4(a + 4), w1);
            s1 = _mm512_dpbusd_epi32(s1, bcast4(a + 20), w5);
            s0 = _mm512_dpbusd_epi32(s0, bcast4(a + 8), w2);
            s1 = _mm512_dpbusd_epi32(s1, bcast4(a + 24), w6);
            s0 = _mm512_dpbusd_epi32(s0, bcast4(a + 12), w3);
            s1 = _mm512_dpbusd_epi32(s1, bcast4(a + 28), w7);
            const __m512 da = _mm512_set1_ps(ad[b]);
            if (half) {
                const __m512 t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s0), _mm512_load_ps((const float *) (p + 640)),
                                                 _mm512_mul_ps(_mm512_cvtepi32_ps(s1), _mm512_load_ps((const float *) (p + 704))));
                facc[c] = _mm512_fmadd_ps(t, da, facc[c]);
                if (KIND == KIND_HALF_MIN) {
                    // each half's min meets its own activation sum (Q2_K)
                    facc[c] = _mm512_fnmadd_ps(_mm512_load_ps((const float *) (p + 768)), _mm512_set1_ps(ad[nb + 2 * b]), facc[c]);
                    facc[c] = _mm512_fnmadd_ps(_mm512_load_ps((const float *) (p + 832)), _mm512_set1_ps(ad[nb + 2 * b + 1]), facc[c]);
                }
            } else {
                const __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1));
                facc[c] = _mm512_fmadd_ps(f, _mm512_mul_ps(_mm512_load_ps((const float *) (p + 576)), da), facc[c]);
                if (KIND == KIND_MIN) {
                    // the mins meet the plain sum of the activations: - m * (da * sum q)
                    facc[c] = _mm512_fnmadd_ps(_mm512_load_ps((const float *) (p + 640)), _mm512_set1_ps(ad[nb + b]), facc[c]);
                }
            }
        }
    }
    for (int c = 0; c < NC; c++) {
        _mm512_mask_storeu_ps((char *) dst + (size_t) c * bdst, mask, facc[c]);
    }
}

static inline __attribute__((always_inline)) void run_kind(int64_t k, const uint8_t * pack, const uint8_t * a,
                                                           size_t bact, int ncols, const enum pack_kind KIND,
                                                           float * dst, size_t bdst, __mmask16 mask) {
    int c = 0;
    for (; c + COLS <= ncols; c += COLS) {
        tile_cols(k, pack, a + (size_t) c * bact, bact, COLS, KIND, (float *) ((char *) dst + (size_t) c * bdst), bdst, mask);
    }
    const uint8_t * ar = a + (size_t) c * bact;
    float * dr = (float *) ((char *) dst + (size_t) c * bdst);
    switch (ncols - c) {
        case 0: break;
        case 1: tile_cols(k, pack, ar, bact, 1, KIND, dr, bdst, mask); break;
        case 2: tile_cols(k, pack, ar, bact, 2, KIND, dr, bdst, mask); break;
        case 3: tile_cols(k, pack, ar, bact, 3, KIND, dr, bdst, mask); break;
        case 4: tile_cols(k, pack, ar, bact, 4, KIND, dr, bdst, mask); break;
        case 5: tile_cols(k, pack, ar, bact, 5, KIND, dr, bdst, mask); break;
        case 6: tile_cols(k, pack, ar, bact, 6, KIND, dr, bdst, mask); break;
        default: tile_cols(k, pack, ar, bact, 7, KIND, dr, bdst, mask); break;
    }
}

// Q8_0 (KIND_LANES): llama.cpp's order (quants-scalar.c), each of the 16 rows x NC columns keeps eight float
// chains, one per 4-element group g (acc[c][g]), fed block after block with fma(dw * da, group dot, acc); the
// chains are summed as ((g0 + g4) + (g2 + g6)) + ((g1 + g5) + (g3 + g7)) at the end. Every group dot costs a
// vpdpbusd and an FMA, which share the two FP pipes that take 512-bit multiplies on Zen 4 (the conversion runs
// beside them), so the tile is bound at half the integer-only rate; it walks group by group so one weight
// register serves all NC columns: 8 * NC accumulators, NC <= 3.
#define COLS_LANES 3

static inline __attribute__((always_inline)) void tile_lanes(int64_t k, const uint8_t * pack, const uint8_t * act,
                                                             size_t bact, const int NC, float * dst, size_t bdst,
                                                             __mmask16 mask) {
    const int64_t nb = k / BLK;
    __m512 acc[COLS_LANES][BLK / 4];
    for (int c = 0; c < NC; c++) {
        for (int g = 0; g < BLK / 4; g++) {
            acc[c][g] = _mm512_setzero_ps();
        }
    }
    const uint8_t * q4[COLS_LANES];
    const int32_t * corr[COLS_LANES];
    const float * da[COLS_LANES];
    for (int c = 0; c < NC; c++) {
        q4[c] = act + (size_t) c * bact;
        da[c] = (const float *) (act + (size_t) c * bact + (size_t) k);
        corr[c] = (const int32_t *) (da[c] + nb);
    }
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t * p = pack + (size_t) b * 576;
        const __m512 dw = _mm512_load_ps((const float *) (p + 512));
        __m512 d[COLS_LANES];
        for (int c = 0; c < NC; c++) {
            d[c] = _mm512_mul_ps(dw, _mm512_set1_ps(da[c][b])); // the float product dw * da of llama.cpp
        }
        // group by group, each weight register serves all columns
        for (int g = 0; g < BLK / 4; g++) {
            const __m512i w = _mm512_load_si512((const void *) (p + 64 * g));
            for (int c = 0; c < NC; c++) {
                int32_t a4;
                memcpy(&a4, q4[c] + b * BLK + 4 * g, 4);
                const __m512i s = _mm512_dpbusd_epi32(_mm512_set1_epi32(corr[c][8 * b + g]), w, _mm512_set1_epi32(a4));
                acc[c][g] = _mm512_fmadd_ps(d[c], _mm512_cvtepi32_ps(s), acc[c][g]);
            }
        }
    }
    for (int c = 0; c < NC; c++) {
        const __m512 lo = _mm512_add_ps(_mm512_add_ps(acc[c][0], acc[c][4]), _mm512_add_ps(acc[c][2], acc[c][6]));
        const __m512 hi = _mm512_add_ps(_mm512_add_ps(acc[c][1], acc[c][5]), _mm512_add_ps(acc[c][3], acc[c][7]));
        _mm512_mask_storeu_ps((char *) dst + (size_t) c * bdst, mask, _mm512_add_ps(lo, hi));
    }
}

static void run_lanes(int64_t k, const uint8_t * pack, const uint8_t * act, size_t bact, int ncols, float * dst,
                      size_t bdst, __mmask16 mask) {
    int c = 0;
    for (; c + COLS_LANES <= ncols; c += COLS_LANES) {
        tile_lanes(k, pack, act + (size_t) c * bact, bact, COLS_LANES, (float *) ((char *) dst + (size_t) c * bdst), bdst, mask);
    }
    if (ncols - c == 2) {
        tile_lanes(k, pack, act + (size_t) c * bact, bact, 2, (float *) ((char *) dst + (size_t) c * bdst), bdst, mask);
    } else if (ncols - c == 1) {
        tile_lanes(k, pack, act + (size_t) c * bact, bact, 1, (float *) ((char *) dst + (size_t) c * bdst), bdst, mask);
    }
}

#define COLS_FLT 16 // 16 accumulators; each FMA takes its activation as an embedded broadcast

// one element's 16 weights w against the panel's NC activations a
static inline __attribute__((always_inline)) void fma_cols(__m512 * facc, const int NC, __m512 w, const float * a) {
    for (int c = 0; c < NC; c++) {
        facc[c] = _mm512_fmadd_ps(w, _mm512_set1_ps(a[c]), facc[c]);
    }
}

// NC columns of one panel (a single sequential stream of activations); the tile of type T (see
// float_tile_bytes) is converted to F32 element by element, in the same order for every T
static inline __attribute__((always_inline)) void tile_float(int64_t k, const uint8_t * pack, const float * panel,
                                                           const int NC, const enum ggml_type T, float * dst,
                                                           size_t bdst, __mmask16 mask) {
    __m512 facc[COLS_FLT];
    for (int c = 0; c < NC; c++) {
        facc[c] = _mm512_setzero_ps();
    }
    if (T == GGML_TYPE_BF16) {
        const __m512i hi = _mm512_set1_epi32((int) 0xffff0000u);
        int64_t i = 0;
        for (; i + 2 <= k; i += 2) {
            const __m512i v = _mm512_load_si512((const void *) (pack + 32 * i));
            fma_cols(facc, NC, _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)), panel + i * GGML_CPU_GEMM_PANEL);
            fma_cols(facc, NC, _mm512_castsi512_ps(_mm512_and_si512(v, hi)), panel + (i + 1) * GGML_CPU_GEMM_PANEL);
        }
        if (i < k) {
            const __m512i v = _mm512_load_si512((const void *) (pack + 32 * i));
            fma_cols(facc, NC, _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)), panel + i * GGML_CPU_GEMM_PANEL);
        }
    } else {
        for (int64_t i = 0; i < k; i++) {
            const __m512 w = T == GGML_TYPE_F16 ? _mm512_cvtph_ps(_mm256_load_si256((const __m256i *) (pack + 32 * i)))
                                                : _mm512_load_ps((const float *) (pack + 64 * i));
            fma_cols(facc, NC, w, panel + i * GGML_CPU_GEMM_PANEL);
        }
    }
    for (int c = 0; c < NC; c++) {
        _mm512_mask_storeu_ps((char *) dst + (size_t) c * bdst, mask, facc[c]);
    }
}

static inline __attribute__((always_inline)) void run_float_t(int64_t k, const uint8_t * pack, const uint8_t * act,
                                                            int ncols, const enum ggml_type T, float * dst,
                                                            size_t bdst, __mmask16 mask) {
    for (int c = 0; c < ncols; c += COLS_FLT) {
        const float * panel = (const float *) act + (size_t) (c / COLS_FLT) * (size_t) k * COLS_FLT;
        float * d = (float *) ((char *) dst + (size_t) c * bdst);
        switch (ncols - c >= COLS_FLT ? COLS_FLT : ncols - c) {
            case 16: tile_float(k, pack, panel, 16, T, d, bdst, mask); break;
            case 15: tile_float(k, pack, panel, 15, T, d, bdst, mask); break;
            case 14: tile_float(k, pack, panel, 14, T, d, bdst, mask); break;
            case 13: tile_float(k, pack, panel, 13, T, d, bdst, mask); break;
            case 12: tile_float(k, pack, panel, 12, T, d, bdst, mask); break;
            case 11: tile_float(k, pack, panel, 11, T, d, bdst, mask); break;
            case 10: tile_float(k, pack, panel, 10, T, d, bdst, mask); break;
            case 9:  tile_float(k, pack, panel, 9, T, d, bdst, mask); break;
            case 8:  tile_float(k, pack, panel, 8, T, d, bdst, mask); break;
            case 7:  tile_float(k, pack, panel, 7, T, d, bdst, mask); break;
            case 6:  tile_float(k, pack, panel, 6, T, d, bdst, mask); break;
            case 5:  tile_float(k, pack, panel, 5, T, d, bdst, mask); break;
            case 4:  tile_float(k, pack, panel, 4, T, d, bdst, mask); break;
            case 3:  tile_float(k, pack, panel, 3, T, d, bdst, mask); break;
            case 2:  tile_float(k, pack, panel, 2, T, d, bdst, mask); break;
            default: tile_float(k, pack, panel, 1, T, d, bdst, mask); break;
        }
    }
}

static void run_float(enum ggml_type type, int64_t k, const uint8_t * pack, const uint8_t * act, int ncols,
                      float * dst, size_t bdst, __mmask16 mask) {
    switch (type) {
        case GGML_TYPE_F16:  run_float_t(k, pack, act, ncols, GGML_TYPE_F16, dst, bdst, mask); break;
        case GGML_TYPE_BF16: run_float_t(k, pack, act, ncols, GGML_TYPE_BF16, dst, bdst, mask); break;
        default:             run_float_t(k, pack, act, ncols, GGML_TYPE_F32, dst, bdst, mask); break;
    }
}

void ggml_cpu_gemm_run(enum ggml_type type, int64_t k, const void * pack, int nrows, const void * act, size_t bact,
                       int ncols, float * dst, size_t bdst) {
    const __mmask16 mask = (__mmask16) (nrows >= TILE_R ? 0xffffu : ((1u << nrows) - 1u));
    if (is_float(type)) {
        run_float(type, k, pack, act, ncols, dst, bdst, mask);
        return;
    }
    switch (kind_of(type)) {
        case KIND_PLAIN: run_kind(k, pack, act, bact, ncols, KIND_PLAIN, dst, bdst, mask); break;
        case KIND_MIN:   run_kind(k, pack, act, bact, ncols, KIND_MIN, dst, bdst, mask); break;
        case KIND_HALF:  run_kind(k, pack, act, bact, ncols, KIND_HALF, dst, bdst, mask); break;
        case KIND_HALF_MIN: run_kind(k, pack, act, bact, ncols, KIND_HALF_MIN, dst, bdst, mask); break;
        case KIND_LANES: run_lanes(k, pack, act, bact, ncols, dst, bdst, mask); break;
    }
}
