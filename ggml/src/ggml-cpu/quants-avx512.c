// AVX-512 (F, BW, VL, DQ, VNNI, BF16) kernels, applied on top of the AVX2 table for the types that gain from
// 512-bit registers; only called after the CPUID check in ggml-cpu-kernels.c.
//
// 32-element block types put four blocks in one register (one per 128-bit lane) and use VNNI (vpdpbusd:
// unsigned x signed bytes summed into int32); signed weights are made unsigned by an offset whose contribution
// is subtracted again. Q8_0 x Q8_0 keeps llama.cpp's float order instead (one block per 256 bits). K-quants apply the per-sub-block scales in integers (maddubs +
// madd) and scale each super-block's int32 lanes into float accumulators. BF16 rows use vdpbf16ps.
#include "quants-impl.h"

#include <immintrin.h>
#include <string.h>
#include <x86intrin.h>

static inline float f16_to_f32(ggml_half h) {
    return _cvtsh_ss(h);
}

static inline __m512i load_2x32(const int8_t * a, const int8_t * b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) a)),
                              _mm256_loadu_si256((const __m256i *) b), 1);
}

// ---- 32-element blocks --------------------------------------------------------------------------------------

// four 16-byte pieces at a stride -> one register, piece k in 128-bit lane k
static inline __m512i load_4x16(const uint8_t * p, size_t stride) {
    __m512i z = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *) p));
    z = _mm512_inserti32x4(z, _mm_loadu_si128((const __m128i *) (p + 1 * stride)), 1);
    z = _mm512_inserti32x4(z, _mm_loadu_si128((const __m128i *) (p + 2 * stride)), 2);
    z = _mm512_inserti32x4(z, _mm_loadu_si128((const __m128i *) (p + 3 * stride)), 3);
    return z;
}

static inline uint64_t halves_4(const uint8_t * p, size_t stride) {
    uint64_t r = 0;
    for (int k = 0; k < 4; ++k) {
        uint16_t h;
        memcpy(&h, p + k * stride, 2);
        r |= (uint64_t) h << (16 * k);
    }
    return r;
}

// products dx*dy of four consecutive blocks (their fp16 scales sit at a stride in memory)
static inline __m128 scale_products_4(const uint8_t * px, size_t sx, const uint8_t * py, size_t sy) {
    const __m128 fx = _mm_cvtph_ps(_mm_cvtsi64_si128((long long) halves_4(px, sx)));
    const __m128 fy = _mm_cvtph_ps(_mm_cvtsi64_si128((long long) halves_4(py, sy)));
    return _mm_mul_ps(fx, fy);
}

// four floats -> 16 lanes, float k over lanes 4k..4k+3 (one block per 128-bit lane)
static inline __m512 spread_4x4(__m128 v) {
    const __m512i idx = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(v));
}

// sum over both nibble halves of four blocks (block k in 128-bit lane k): int32 lanes 4k..4k+3 belong to block k
static inline __m512i dot4(__m512i lo, __m512i hi, __m512i y0, __m512i y1) {
    return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, y0), hi, y1);
}

// the nibbles of two blocks in the order of their activations: [lo a | hi a | lo b | hi b] (128-bit lanes)
static inline __m512i nibbles_2x32(const uint8_t * a, const uint8_t * b, __m512i shifts, __m512i m4) {
    const __m512i t = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) a))),
                                         _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) b)), 1);
    return _mm512_and_si512(_mm512_srlv_epi16(t, shifts), m4);
}

MC_INLINE void q4_0_impl(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy, size_t by, const int nc) {
    const block_q4_0 * GGML_RESTRICT x = vx;
    const int nb = n / QK8_0;
    const __m512i m4    = _mm512_set1_epi8(0x0f);
    const __m512i eight = _mm512_set1_epi8(8);
    // per 16-bit lane: shift 0 in 128-bit lanes 0 and 2 (low nibbles), 4 in lanes 1 and 3 (high nibbles)
    const __m256i sh256  = _mm256_inserti128_si256(_mm256_setzero_si256(), _mm_set1_epi16(4), 1);
    const __m512i shifts = _mm512_inserti64x4(_mm512_castsi256_si512(sh256), sh256, 1);
    const __m512i i01  = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i i23  = _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2);
    __m512 acc0[GGML_CPU_MC_MAX], acc1[GGML_CPU_MC_MAX];
    for (int c = 0; c < nc; ++c) {
        acc0[c] = _mm512_setzero_ps();
        acc1[c] = _mm512_setzero_ps();
    }
    int i = 0;
    // two blocks per register in the activations' own order; sum((q - 8) * y) = sum(q * y) - sum(8 * y)
    for (; i + 3 < nb; i += 4) {
        const __m512i qa = nibbles_2x32(x[i].qs, x[i + 1].qs, shifts, m4);
        const __m512i qb = nibbles_2x32(x[i + 2].qs, x[i + 3].qs, shifts, m4);
        const __m128 dx = _mm_cvtph_ps(_mm_cvtsi64_si128((long long) halves_4((const uint8_t *) &x[i].d, sizeof(block_q4_0))));
        for (int c = 0; c < nc; ++c) {
            const block_q8_0 * y = (const block_q8_0 *) ((const char *) vy + c * by);
            const __m512i ya = load_2x32(y[i].qs, y[i + 1].qs);
            const __m512i yb = load_2x32(y[i + 2].qs, y[i + 3].qs);
            const __m512i pa = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), qa, ya),
                                                _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, ya));
            const __m512i pb = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), qb, yb),
                                                _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, yb));
            const __m128 dy = _mm_cvtph_ps(_mm_cvtsi64_si128((long long) halves_4((const uint8_t *) &y[i].d, sizeof(block_q8_0))));
            const __m512 d4 = _mm512_castps128_ps512(_mm_mul_ps(dx, dy));
            acc0[c] = _mm512_fmadd_ps(_mm512_permutexvar_ps(i01, d4), _mm512_cvtepi32_ps(pa), acc0[c]);
            acc1[c] = _mm512_fmadd_ps(_mm512_permutexvar_ps(i23, d4), _mm512_cvtepi32_ps(pb), acc1[c]);
        }
    }
    for (int c = 0; c < nc; ++c) {
        const block_q8_0 * y = (const block_q8_0 *) ((const char *) vy + c * by);
        float sum = _mm512_reduce_add_ps(_mm512_add_ps(acc0[c], acc1[c]));
        for (int k = i; k < nb; ++k) {
            int sumi = 0;
            for (int j = 0; j < QK4_0 / 2; ++j) {
                sumi += ((x[k].qs[j] & 0x0f) - 8) * y[k].qs[j] + ((x[k].qs[j] >> 4) - 8) * y[k].qs[j + QK4_0 / 2];
            }
            sum += (float) sumi * (f16_to_f32(x[k].d) * f16_to_f32(y[k].d));
        }
        s[c] = sum;
    }
}

MC_VEC_DOTS(q4_0_q8_0, q4_0_impl)

// llama.cpp's x86 order (see quants-scalar.c) on 256-bit VNNI: one chain of eight float lanes per column, lane l
// being the int dot of elements 4l..4l+3 (|x| times y with x's sign, exact), then the hsum tree
MC_INLINE void q8_0_impl(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy, size_t by, const int nc) {
    const block_q8_0 * GGML_RESTRICT x = vx;
    const int nb = n / QK8_0;
    __m256 acc[GGML_CPU_MC_MAX];
    for (int c = 0; c < nc; ++c) {
        acc[c] = _mm256_setzero_ps();
    }
    for (int i = 0; i < nb; ++i) {
        const __m256i qx = _mm256_loadu_si256((const __m256i *) x[i].qs);
        const __m256i ax = _mm256_sign_epi8(qx, qx);
        const float dx = f16_to_f32(x[i].d);
        for (int c = 0; c < nc; ++c) {
            const block_q8_0 * y = (const block_q8_0 *) ((const char *) vy + c * by);
            const __m256i sy = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *) y[i].qs), qx);
            const __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ax, sy);
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(dx * f16_to_f32(y[i].d)), _mm256_cvtepi32_ps(p), acc[c]);
        }
    }
    for (int c = 0; c < nc; ++c) {
        __m128 r = _mm_add_ps(_mm256_castps256_ps128(acc[c]), _mm256_extractf128_ps(acc[c], 1));
        r = _mm_add_ps(r, _mm_movehl_ps(r, r));
        r = _mm_add_ss(r, _mm_movehdup_ps(r));
        s[c] = _mm_cvtss_f32(r);
    }
}

MC_VEC_DOTS(q8_0_q8_0, q8_0_impl)

// the bits of qh (32 per block: bit j for element j) of four blocks as byte masks for the low-nibble
// half (elements 0..15) and the high-nibble half (16..31), block k at bits 16k..16k+15
static inline void qh_masks_4(const uint8_t * qh, size_t stride, __mmask64 * lo, __mmask64 * hi) {
    uint64_t l = 0, h = 0;
    for (int k = 0; k < 4; ++k) {
        uint32_t v;
        memcpy(&v, qh + k * stride, 4);
        l |= (uint64_t) (v & 0xffffu) << (16 * k);
        h |= (uint64_t) (v >> 16) << (16 * k);
    }
    *lo = (__mmask64) l;
    *hi = (__mmask64) h;
}

static void vec_dot_q4_1_q8_1(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q4_1 * GGML_RESTRICT x = vx;
    const block_q8_1 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_1;
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512 acc = _mm512_setzero_ps();
    __m128 accm = _mm_setzero_ps();
    int i = 0;
    for (; i + 3 < nb; i += 4) {
        const __m512i q  = load_4x16(x[i].qs, sizeof(block_q4_1));
        const __m512i y0 = load_4x16((const uint8_t *) y[i].qs, sizeof(block_q8_1));
        const __m512i y1 = load_4x16((const uint8_t *) y[i].qs + 16, sizeof(block_q8_1));
        const __m512i p  = dot4(_mm512_and_si512(q, m4), _mm512_and_si512(_mm512_srli_epi16(q, 4), m4), y0, y1);
        const __m128 d = scale_products_4((const uint8_t *) &x[i].d, sizeof(block_q4_1), (const uint8_t *) &y[i].d, sizeof(block_q8_1));
        acc  = _mm512_fmadd_ps(spread_4x4(d), _mm512_cvtepi32_ps(p), acc);
        // the min times the activation sum that Q8_1 carries in s
        accm = _mm_add_ps(accm, scale_products_4((const uint8_t *) &x[i].m, sizeof(block_q4_1), (const uint8_t *) &y[i].s, sizeof(block_q8_1)));
    }
    float sum = _mm512_reduce_add_ps(acc) + _mm512_reduce_add_ps(_mm512_zextps128_ps512(accm));
    for (; i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < QK4_1 / 2; ++j) {
            sumi += (x[i].qs[j] & 0x0f) * y[i].qs[j] + (x[i].qs[j] >> 4) * y[i].qs[j + QK4_1 / 2];
        }
        sum += (float) sumi * (f16_to_f32(x[i].d) * f16_to_f32(y[i].d)) + f16_to_f32(x[i].m) * f16_to_f32(y[i].s);
    }
    *s = sum;
}

static void vec_dot_q5_0_q8_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q5_0 * GGML_RESTRICT x = vx;
    const block_q8_0 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_0;
    const __m512i m4  = _mm512_set1_epi8(0x0f);
    const __m512i b16 = _mm512_set1_epi8(16);
    __m512 acc = _mm512_setzero_ps();
    int i = 0;
    // values are q5 - 16 with q5 = nibble + 16 * bit: sum(q5 * y) - sum(16 * y)
    for (; i + 3 < nb; i += 4) {
        __mmask64 hlo, hhi;
        qh_masks_4(x[i].qh, sizeof(block_q5_0), &hlo, &hhi);
        const __m512i q  = load_4x16(x[i].qs, sizeof(block_q5_0));
        const __m512i lo = _mm512_mask_add_epi8(_mm512_and_si512(q, m4), hlo, _mm512_and_si512(q, m4), b16);
        const __m512i qh = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        const __m512i hi = _mm512_mask_add_epi8(qh, hhi, qh, b16);
        const __m512i y0 = load_4x16((const uint8_t *) y[i].qs, sizeof(block_q8_0));
        const __m512i y1 = load_4x16((const uint8_t *) y[i].qs + 16, sizeof(block_q8_0));
        const __m512i p  = _mm512_sub_epi32(dot4(lo, hi, y0, y1), dot4(b16, b16, y0, y1));
        const __m128 d = scale_products_4((const uint8_t *) &x[i].d, sizeof(block_q5_0), (const uint8_t *) &y[i].d, sizeof(block_q8_0));
        acc = _mm512_fmadd_ps(spread_4x4(d), _mm512_cvtepi32_ps(p), acc);
    }
    float sum = _mm512_reduce_add_ps(acc);
    for (; i < nb; ++i) {
        uint32_t qh;
        memcpy(&qh, x[i].qh, 4);
        int sumi = 0;
        for (int j = 0; j < QK5_0 / 2; ++j) {
            const int v0 = ((x[i].qs[j] & 0x0f) | (int) (((qh >> j) & 1u) << 4)) - 16;
            const int v1 = ((x[i].qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1u) << 4)) - 16;
            sumi += v0 * y[i].qs[j] + v1 * y[i].qs[j + QK5_0 / 2];
        }
        sum += (float) sumi * (f16_to_f32(x[i].d) * f16_to_f32(y[i].d));
    }
    *s = sum;
}

static void vec_dot_q5_1_q8_1(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q5_1 * GGML_RESTRICT x = vx;
    const block_q8_1 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_1;
    const __m512i m4  = _mm512_set1_epi8(0x0f);
    const __m512i b16 = _mm512_set1_epi8(16);
    __m512 acc = _mm512_setzero_ps();
    __m128 accm = _mm_setzero_ps();
    int i = 0;
    for (; i + 3 < nb; i += 4) {
        __mmask64 hlo, hhi;
        qh_masks_4(x[i].qh, sizeof(block_q5_1), &hlo, &hhi);
        const __m512i q  = load_4x16(x[i].qs, sizeof(block_q5_1));
        const __m512i lo = _mm512_mask_add_epi8(_mm512_and_si512(q, m4), hlo, _mm512_and_si512(q, m4), b16);
        const __m512i qh = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        const __m512i hi = _mm512_mask_add_epi8(qh, hhi, qh, b16);
        const __m512i y0 = load_4x16((const uint8_t *) y[i].qs, sizeof(block_q8_1));
        const __m512i y1 = load_4x16((const uint8_t *) y[i].qs + 16, sizeof(block_q8_1));
        const __m512i p  = dot4(lo, hi, y0, y1);
        const __m128 d = scale_products_4((const uint8_t *) &x[i].d, sizeof(block_q5_1), (const uint8_t *) &y[i].d, sizeof(block_q8_1));
        acc  = _mm512_fmadd_ps(spread_4x4(d), _mm512_cvtepi32_ps(p), acc);
        accm = _mm_add_ps(accm, scale_products_4((const uint8_t *) &x[i].m, sizeof(block_q5_1), (const uint8_t *) &y[i].s, sizeof(block_q8_1)));
    }
    float sum = _mm512_reduce_add_ps(acc) + _mm512_reduce_add_ps(_mm512_zextps128_ps512(accm));
    for (; i < nb; ++i) {
        uint32_t qh;
        memcpy(&qh, x[i].qh, 4);
        int sumi = 0;
        for (int j = 0; j < QK5_1 / 2; ++j) {
            const int v0 = (x[i].qs[j] & 0x0f) | (int) (((qh >> j) & 1u) << 4);
            const int v1 = (x[i].qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1u) << 4);
            sumi += v0 * y[i].qs[j] + v1 * y[i].qs[j + QK5_1 / 2];
        }
        sum += (float) sumi * (f16_to_f32(x[i].d) * f16_to_f32(y[i].d)) + f16_to_f32(x[i].m) * f16_to_f32(y[i].s);
    }
    *s = sum;
}

// kvalues_iq4nl + 128 (all positive), in every 128-bit lane: the lookup gives unsigned bytes for vpdpbusd
static inline __m512i iq4nl_table_u8(void) {
    uint8_t t[16];
    for (int j = 0; j < 16; ++j) {
        t[j] = (uint8_t) (kvalues_iq4nl[j] + 128);
    }
    return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) t));
}

static void vec_dot_iq4_nl_q8_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                                const void * GGML_RESTRICT vy) {
    const block_iq4_nl * GGML_RESTRICT x = vx;
    const block_q8_0 * GGML_RESTRICT y = vy;
    const int nb = n / QK4_NL;
    const __m512i m4   = _mm512_set1_epi8(0x0f);
    const __m512i bias = _mm512_set1_epi8((char) 0x80);
    const __m512i tbl  = iq4nl_table_u8();
    __m512 acc = _mm512_setzero_ps();
    int i = 0;
    // sum(v * y) = sum((v + 128) * y) - sum(128 * y)
    for (; i + 3 < nb; i += 4) {
        const __m512i q  = load_4x16(x[i].qs, sizeof(block_iq4_nl));
        const __m512i lo = _mm512_shuffle_epi8(tbl, _mm512_and_si512(q, m4));
        const __m512i hi = _mm512_shuffle_epi8(tbl, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4));
        const __m512i y0 = load_4x16((const uint8_t *) y[i].qs, sizeof(block_q8_0));
        const __m512i y1 = load_4x16((const uint8_t *) y[i].qs + 16, sizeof(block_q8_0));
        const __m512i p  = _mm512_sub_epi32(dot4(lo, hi, y0, y1), dot4(bias, bias, y0, y1));
        const __m128 d = scale_products_4((const uint8_t *) &x[i].d, sizeof(block_iq4_nl), (const uint8_t *) &y[i].d, sizeof(block_q8_0));
        acc = _mm512_fmadd_ps(spread_4x4(d), _mm512_cvtepi32_ps(p), acc);
    }
    float sum = _mm512_reduce_add_ps(acc);
    for (; i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < QK4_NL / 2; ++j) {
            sumi += kvalues_iq4nl[x[i].qs[j] & 0x0f] * y[i].qs[j] + kvalues_iq4nl[x[i].qs[j] >> 4] * y[i].qs[j + QK4_NL / 2];
        }
        sum += (float) sumi * (f16_to_f32(x[i].d) * f16_to_f32(y[i].d));
    }
    *s = sum;
}

// ---- K-quants -----------------------------------------------------------------------------------------------
// Integer sums per super-block as in the other paths, but scaled lane-wise into float accumulators instead of
// reduced per super-block: faster, and equal to the scalar result up to float rounding (not bit for bit).

// per pair of bsums, min * (b[2s] + b[2s+1]) as 8 int32 (each min covers the 32 values of its sub-block)
static inline __m256i k4_mins_bsums(uint64_t mn, const int16_t * bsums) {
    const __m128i mb = _mm_cvtsi64_si128((long long) mn);
    const __m256i mm = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mb, mb));
    return _mm256_madd_epi16(mm, _mm256_loadu_si256((const __m256i *) bsums));
}

static inline float hsum_f32_8(__m256 v) {
    __m128 r = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    r = _mm_add_ps(r, _mm_movehl_ps(r, r));
    r = _mm_add_ss(r, _mm_movehdup_ps(r));
    return _mm_cvtss_f32(r);
}

// int16 index vectors that spread scale a over lanes 0..15 and scale a+1 over 16..31
static inline __m512i pair_index(int a) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16((short) a)), _mm256_set1_epi16((short) (a + 1)), 1);
}

// int16 index vector: lanes 8g..8g+7 take scale a+g (g = 0..3)
static inline __m512i quad_index(int a) {
    const __m128i i0 = _mm_set1_epi16((short) (a + 0));
    const __m128i i1 = _mm_set1_epi16((short) (a + 1));
    const __m128i i2 = _mm_set1_epi16((short) (a + 2));
    const __m128i i3 = _mm_set1_epi16((short) (a + 3));
    const __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(i0), i1, 1);
    const __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(i2), i3, 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// per-16-bit-lane shift counts: 2a in the low 256 bits, 2a + 2 in the high 256 bits
static inline __m512i shift_pair(int a) {
    return _mm512_inserti64x4(_mm512_set1_epi16((short) (2 * a)), _mm256_set1_epi16((short) (2 * a + 2)), 1);
}

static void vec_dot_q2_K_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q2_K * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    const __m512i m3 = _mm512_set1_epi8(3);
    const __m512i sh01 = shift_pair(0), sh23 = shift_pair(2);
    const __m512i idx[4] = { quad_index(0), quad_index(4), quad_index(8), quad_index(12) };
    __m512 accf = _mm512_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    for (int i = 0; i < nb; ++i) {
        const __m128i sc8  = _mm_loadu_si128((const __m128i *) x[i].scales);
        const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc8, 4), _mm_set1_epi8(0x0f)));
        const __m256i msum = _mm256_madd_epi16(mins, _mm256_loadu_si256((const __m256i *) y[i].bsums));
        const __m512i sc16 = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_and_si128(sc8, _mm_set1_epi8(0x0f))));
        __m512i acc = _mm512_setzero_si512();
        for (int half = 0; half < 2; ++half) {
            // the 32 bytes hold 4 two-bit fields: field j of byte l is element 32j + l of this half
            const __m512i qb = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * half)));
            const __m512i v01 = _mm512_and_si512(_mm512_srlv_epi16(qb, sh01), m3);
            const __m512i v23 = _mm512_and_si512(_mm512_srlv_epi16(qb, sh23), m3);
            const int8_t * q8 = y[i].qs + 128 * half;
            const __m512i p01 = _mm512_maddubs_epi16(v01, _mm512_loadu_si512((const void *) q8));
            const __m512i p23 = _mm512_maddubs_epi16(v23, _mm512_loadu_si512((const void *) (q8 + 64)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p01, _mm512_permutexvar_epi16(idx[2 * half + 0], sc16)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p23, _mm512_permutexvar_epi16(idx[2 * half + 1], sc16)));
        }
        const float dall = y[i].d * f16_to_f32(x[i].d);
        const float dmin = y[i].d * f16_to_f32(x[i].dmin);
        accf = _mm512_fmadd_ps(_mm512_set1_ps(dall), _mm512_cvtepi32_ps(acc), accf);
        accm = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(msum), accm);
    }
    *s = _mm512_reduce_add_ps(accf) - hsum_f32_8(accm);
}

static void vec_dot_q3_K_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q3_K * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    const __m512i m3 = _mm512_set1_epi8(3);
    const __m512i b4 = _mm512_set1_epi8(4);
    const __m512i sh01 = shift_pair(0), sh23 = shift_pair(2);
    const __m512i idx[4] = { quad_index(0), quad_index(4), quad_index(8), quad_index(12) };
    __m512 accf = _mm512_setzero_ps();
    for (int i = 0; i < nb; ++i) {
        uint32_t w[4];
        ggml_cpu_q3_K_scale_words(x[i].scales, w);
        const __m128i sc8 = _mm_sub_epi8(_mm_setr_epi32((int) w[0], (int) w[1], (int) w[2], (int) w[3]), _mm_set1_epi8(32));
        const __m256i sc16y = _mm256_cvtepi8_epi16(sc8);
        const __m512i sc16 = _mm512_castsi256_si512(sc16y);
        // stored values are q + 4*h - 4: use the unsigned q + 4*h and remove 4 * scale * bsum
        const __m256i corr = _mm256_madd_epi16(sc16y, _mm256_loadu_si256((const __m256i *) y[i].bsums));
        __m512i acc = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 2)));
        const __m512i hm = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) x[i].hmask));
        for (int half = 0; half < 2; ++half) {
            const __m512i qb = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * half)));
            // element 32j + l of this half has its high bit at bit 4*half + j of hmask[l]
            const int b = 4 * half;
            const __m512i bits01 = _mm512_inserti64x4(_mm512_set1_epi8((char) (1 << b)), _mm256_set1_epi8((char) (1 << (b + 1))), 1);
            const __m512i bits23 = _mm512_inserti64x4(_mm512_set1_epi8((char) (1 << (b + 2))), _mm256_set1_epi8((char) (1 << (b + 3))), 1);
            __m512i v01 = _mm512_and_si512(_mm512_srlv_epi16(qb, sh01), m3);
            __m512i v23 = _mm512_and_si512(_mm512_srlv_epi16(qb, sh23), m3);
            v01 = _mm512_mask_add_epi8(v01, _mm512_test_epi8_mask(hm, bits01), v01, b4);
            v23 = _mm512_mask_add_epi8(v23, _mm512_test_epi8_mask(hm, bits23), v23, b4);
            const int8_t * q8 = y[i].qs + 128 * half;
            const __m512i p01 = _mm512_maddubs_epi16(v01, _mm512_loadu_si512((const void *) q8));
            const __m512i p23 = _mm512_maddubs_epi16(v23, _mm512_loadu_si512((const void *) (q8 + 64)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p01, _mm512_permutexvar_epi16(idx[2 * half + 0], sc16)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p23, _mm512_permutexvar_epi16(idx[2 * half + 1], sc16)));
        }
        accf = _mm512_fmadd_ps(_mm512_set1_ps(y[i].d * f16_to_f32(x[i].d)), _mm512_cvtepi32_ps(acc), accf);
    }
    *s = _mm512_reduce_add_ps(accf);
}

MC_INLINE void q4_K_impl(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy, size_t by, const int nc) {
    const block_q4_K * GGML_RESTRICT x = vx;
    const int nb = n / QK_K;
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    const __m512i idx[4] = { pair_index(0), pair_index(2), pair_index(4), pair_index(6) };
    __m512 accf[GGML_CPU_MC_MAX];
    __m256 accm[GGML_CPU_MC_MAX];
    for (int c = 0; c < nc; ++c) {
        accf[c] = _mm512_setzero_ps();
        accm[c] = _mm256_setzero_ps();
    }
    for (int i = 0; i < nb; ++i) {
        uint64_t sc, mn;
        ggml_cpu_k4_scales_u64(x[i].scales, &sc, &mn);
        const __m512i sc16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long) sc)));
        __m512i acc[GGML_CPU_MC_MAX];
        for (int c = 0; c < nc; ++c) {
            acc[c] = _mm512_setzero_si512();
        }
        for (int j = 0; j < 4; ++j) {
            // 32 packed bytes -> sub-block 2j (low nibbles) then 2j+1 (high nibbles): the order of y
            const __m256i t = _mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * j));
            const __m512i q = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(t), _mm256_srli_epi16(t, 4), 1), m4);
            const __m512i sv = _mm512_permutexvar_epi16(idx[j], sc16);
            for (int c = 0; c < nc; ++c) {
                const block_q8_K * yc = (const block_q8_K *) ((const char *) vy + c * by);
                const __m512i p = _mm512_maddubs_epi16(q, _mm512_loadu_si512((const void *) (yc[i].qs + 64 * j)));
                acc[c] = _mm512_add_epi32(acc[c], _mm512_madd_epi16(p, sv));
            }
        }
        for (int c = 0; c < nc; ++c) {
            const block_q8_K * yc = (const block_q8_K *) ((const char *) vy + c * by);
            const __m256i msum = k4_mins_bsums(mn, yc[i].bsums);
            const float dall = yc[i].d * f16_to_f32(x[i].d);
            const float dmin = yc[i].d * f16_to_f32(x[i].dmin);
            accf[c] = _mm512_fmadd_ps(_mm512_set1_ps(dall), _mm512_cvtepi32_ps(acc[c]), accf[c]);
            accm[c] = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(msum), accm[c]);
        }
    }
    for (int c = 0; c < nc; ++c) {
        s[c] = _mm512_reduce_add_ps(accf[c]) - hsum_f32_8(accm[c]);
    }
}

MC_VEC_DOTS(q4_K_q8_K, q4_K_impl)

MC_INLINE void q5_K_impl(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy, size_t by, const int nc) {
    const block_q5_K * GGML_RESTRICT x = vx;
    const int nb = n / QK_K;
    const __m512i m4  = _mm512_set1_epi8(0x0f);
    const __m512i b16 = _mm512_set1_epi8(16);
    const __m512i idx[4] = { pair_index(0), pair_index(2), pair_index(4), pair_index(6) };
    __m512 accf[GGML_CPU_MC_MAX];
    __m256 accm[GGML_CPU_MC_MAX];
    for (int c = 0; c < nc; ++c) {
        accf[c] = _mm512_setzero_ps();
        accm[c] = _mm256_setzero_ps();
    }
    for (int i = 0; i < nb; ++i) {
        uint64_t sc, mn;
        ggml_cpu_k4_scales_u64(x[i].scales, &sc, &mn);
        const __m512i sc16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long) sc)));
        const __m256i qh  = _mm256_loadu_si256((const __m256i *) x[i].qh);
        // qh twice; sub-block 2j takes bit 2j of the first copy, 2j+1 takes bit 2j+1 of the second
        const __m512i qh2 = _mm512_inserti64x4(_mm512_castsi256_si512(qh), qh, 1);
        __m512i acc[GGML_CPU_MC_MAX];
        for (int c = 0; c < nc; ++c) {
            acc[c] = _mm512_setzero_si512();
        }
        for (int j = 0; j < 4; ++j) {
            const __m256i t = _mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * j));
            const __m512i q = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(t), _mm256_srli_epi16(t, 4), 1), m4);
            const __m512i bits = _mm512_inserti64x4(_mm512_set1_epi8((char) (1 << (2 * j))),
                                                    _mm256_set1_epi8((char) (1 << (2 * j + 1))), 1);
            const __m512i v  = _mm512_mask_add_epi8(q, _mm512_test_epi8_mask(qh2, bits), q, b16);
            const __m512i sv = _mm512_permutexvar_epi16(idx[j], sc16);
            for (int c = 0; c < nc; ++c) {
                const block_q8_K * yc = (const block_q8_K *) ((const char *) vy + c * by);
                const __m512i p = _mm512_maddubs_epi16(v, _mm512_loadu_si512((const void *) (yc[i].qs + 64 * j)));
                acc[c] = _mm512_add_epi32(acc[c], _mm512_madd_epi16(p, sv));
            }
        }
        for (int c = 0; c < nc; ++c) {
            const block_q8_K * yc = (const block_q8_K *) ((const char *) vy + c * by);
            const __m256i msum = k4_mins_bsums(mn, yc[i].bsums);
            const float dall = yc[i].d * f16_to_f32(x[i].d);
            const float dmin = yc[i].d * f16_to_f32(x[i].dmin);
            accf[c] = _mm512_fmadd_ps(_mm512_set1_ps(dall), _mm512_cvtepi32_ps(acc[c]), accf[c]);
            accm[c] = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(msum), accm[c]);
        }
    }
    for (int c = 0; c < nc; ++c) {
        s[c] = _mm512_reduce_add_ps(accf[c]) - hsum_f32_8(accm[c]);
    }
}

MC_VEC_DOTS(q5_K_q8_K, q5_K_impl)

MC_INLINE void q6_K_impl(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy, size_t by, const int nc) {
    const block_q6_K * GGML_RESTRICT x = vx;
    const int nb = n / QK_K;
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    const __m512i m3 = _mm512_set1_epi8(3);
    const __m512i idx[4] = { quad_index(0), quad_index(4), quad_index(8), quad_index(12) };
    __m512 accf[GGML_CPU_MC_MAX];
    for (int c = 0; c < nc; ++c) {
        accf[c] = _mm512_setzero_ps();
    }
    for (int i = 0; i < nb; ++i) {
        const __m256i sc16y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) x[i].scales));
        const __m512i sc16  = _mm512_castsi256_si512(sc16y);
        __m512i acc[GGML_CPU_MC_MAX];
        for (int c = 0; c < nc; ++c) {
            // stored values are u - 32: use u and subtract 32 * scale * bsum
            const block_q8_K * yc = (const block_q8_K *) ((const char *) vy + c * by);
            const __m256i corr = _mm256_madd_epi16(sc16y, _mm256_loadu_si256((const __m256i *) yc[i].bsums));
            acc[c] = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 5)));
        }
        for (int half = 0; half < 2; ++half) {
            const __m512i ql = _mm512_loadu_si512((const void *) (x[i].ql + 64 * half));
            const __m256i qh = _mm256_loadu_si256((const __m256i *) (x[i].qh + 32 * half));
            // [qh | qh >> 2]: bits 0-1 feed elements 0..63, bits 4-5 (after >> 4) elements 64..127
            const __m512i hh = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
            const __m512i hlo = _mm512_slli_epi16(_mm512_and_si512(hh, m3), 4);
            const __m512i hhi = _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(hh, 4), m3), 4);
            const __m512i v12 = _mm512_or_si512(_mm512_and_si512(ql, m4), hlo);
            const __m512i v34 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4), hhi);
            const __m512i s12 = _mm512_permutexvar_epi16(idx[2 * half + 0], sc16);
            const __m512i s34 = _mm512_permutexvar_epi16(idx[2 * half + 1], sc16);
            for (int c = 0; c < nc; ++c) {
                const block_q8_K * yc = (const block_q8_K *) ((const char *) vy + c * by);
                const int8_t * q8 = yc[i].qs + 128 * half;
                const __m512i p12 = _mm512_maddubs_epi16(v12, _mm512_loadu_si512((const void *) (q8 +  0)));
                const __m512i p34 = _mm512_maddubs_epi16(v34, _mm512_loadu_si512((const void *) (q8 + 64)));
                // vpdpwssd = vpmaddwd + vpaddd in one instruction (same int32 lanes, so the same result)
                acc[c] = _mm512_dpwssd_epi32(_mm512_dpwssd_epi32(acc[c], p12, s12), p34, s34);
            }
        }
        for (int c = 0; c < nc; ++c) {
            const block_q8_K * yc = (const block_q8_K *) ((const char *) vy + c * by);
            accf[c] = _mm512_fmadd_ps(_mm512_set1_ps(yc[i].d * f16_to_f32(x[i].d)), _mm512_cvtepi32_ps(acc[c]), accf[c]);
        }
    }
    for (int c = 0; c < nc; ++c) {
        s[c] = _mm512_reduce_add_ps(accf[c]);
    }
}

MC_VEC_DOTS(q6_K_q8_K, q6_K_impl)

static void vec_dot_iq4_xs_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                                const void * GGML_RESTRICT vy) {
    const block_iq4_xs * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    const __m512i m4  = _mm512_set1_epi8(0x0f);
    const __m512i tbl = iq4nl_table_u8();
    // byte shuffles that repeat scale k (k = 0..3 or 4..7) four times: one int32 lane group per sub-block
    const __m128i rep_lo = _mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m128i rep_hi = _mm_setr_epi8(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7);
    const __m128i dup    = _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    __m512 accf = _mm512_setzero_ps();
    for (int i = 0; i < nb; ++i) {
        // 8 scales: low nibbles from scales_l, 2 high bits from scales_h, spread to one byte each (BMI2)
        uint32_t sl;
        memcpy(&sl, x[i].scales_l, 4);
        const uint64_t ls = _pdep_u64(sl, 0x0f0f0f0f0f0f0f0full) | _pdep_u64(x[i].scales_h, 0x3030303030303030ull);
        const __m128i sc8 = _mm_sub_epi8(_mm_cvtsi64_si128((long long) ls), _mm_set1_epi8(32));
        // the table holds v + 128: remove 128 * scale * (sum of the sub-block's 32 activations) via bsums
        const __m256i corr = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, dup)),
                                               _mm256_loadu_si256((const __m256i *) y[i].bsums));
        __m512i acc = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, 7)));
        for (int g = 0; g < 2; ++g) {
            // sub-blocks 4g..4g+3, one per 128-bit lane; their activations are 32 apart
            const __m512i q  = _mm512_loadu_si512((const void *) (x[i].qs + 64 * g));
            const __m512i y0 = _mm512_loadu_si512((const void *) (y[i].qs + 128 * g));
            const __m512i y1 = _mm512_loadu_si512((const void *) (y[i].qs + 128 * g + 64));
            const __m512i ylo = _mm512_shuffle_i64x2(y0, y1, _MM_SHUFFLE(2, 0, 2, 0));
            const __m512i yhi = _mm512_shuffle_i64x2(y0, y1, _MM_SHUFFLE(3, 1, 3, 1));
            const __m512i lo = _mm512_shuffle_epi8(tbl, _mm512_and_si512(q, m4));
            const __m512i hi = _mm512_shuffle_epi8(tbl, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4));
            const __m512i sv = _mm512_cvtepi8_epi32(_mm_shuffle_epi8(sc8, g == 0 ? rep_lo : rep_hi));
            acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(dot4(lo, hi, ylo, yhi), sv));
        }
        accf = _mm512_fmadd_ps(_mm512_set1_ps(y[i].d * f16_to_f32(x[i].d)), _mm512_cvtepi32_ps(acc), accf);
    }
    *s = _mm512_reduce_add_ps(accf);
}

// ---- float rows ---------------------------------------------------------------------------------------------

static void vec_dot_f32(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                        const void * GGML_RESTRICT vy) {
    const float * GGML_RESTRICT x = vx;
    const float * GGML_RESTRICT y = vy;
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i +  0), _mm512_loadu_ps(y + i +  0), a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16), a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 32), _mm512_loadu_ps(y + i + 32), a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 48), _mm512_loadu_ps(y + i + 48), a3);
    }
    for (; i + 16 <= n; i += 16) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), a0);
    }
    if (i < n) {
        const __mmask16 m = (__mmask16) ((1u << (n - i)) - 1u);
        a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i), a1);
    }
    *s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

static void vec_dot_bf16(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy) {
    const ggml_bf16_t * GGML_RESTRICT x = vx;
    const ggml_bf16_t * GGML_RESTRICT y = vy;
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int i = 0;
    // vdpbf16ps: each float lane accumulates two exact bf16 products
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_dpbf16_ps(a0, (__m512bh) _mm512_loadu_si512((const void *) (x + i)),
                                  (__m512bh) _mm512_loadu_si512((const void *) (y + i)));
        a1 = _mm512_dpbf16_ps(a1, (__m512bh) _mm512_loadu_si512((const void *) (x + i + 32)),
                                  (__m512bh) _mm512_loadu_si512((const void *) (y + i + 32)));
    }
    for (; i + 32 <= n; i += 32) {
        a0 = _mm512_dpbf16_ps(a0, (__m512bh) _mm512_loadu_si512((const void *) (x + i)),
                                  (__m512bh) _mm512_loadu_si512((const void *) (y + i)));
    }
    if (i < n) {
        const __mmask32 m = (__mmask32) ((1ull << (n - i)) - 1ull);
        a1 = _mm512_dpbf16_ps(a1, (__m512bh) _mm512_maskz_loadu_epi16(m, x + i),
                                  (__m512bh) _mm512_maskz_loadu_epi16(m, y + i));
    }
    *s = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

// ---- table -------------------------------------------------------------------------------------------------

void ggml_cpu_kernels_fill_avx512(struct ggml_cpu_type_kernels * t) {
    t[GGML_TYPE_F32].vec_dot  = vec_dot_f32;
    // F16 stays on the AVX2 kernel: 512-bit vcvtph2ps is no faster here and the row is memory-bound anyway
    t[GGML_TYPE_BF16].vec_dot = vec_dot_bf16;
    t[GGML_TYPE_Q4_0].vec_dot = vec_dot_q4_0_q8_0;
    t[GGML_TYPE_Q8_0].vec_dot = vec_dot_q8_0_q8_0;
    t[GGML_TYPE_Q4_1].vec_dot = vec_dot_q4_1_q8_1;
    t[GGML_TYPE_Q5_0].vec_dot = vec_dot_q5_0_q8_0;
    t[GGML_TYPE_Q5_1].vec_dot = vec_dot_q5_1_q8_1;
    t[GGML_TYPE_IQ4_NL].vec_dot = vec_dot_iq4_nl_q8_0;
    t[GGML_TYPE_Q2_K].vec_dot = vec_dot_q2_K_q8_K;
    t[GGML_TYPE_Q3_K].vec_dot = vec_dot_q3_K_q8_K;
    t[GGML_TYPE_Q4_K].vec_dot = vec_dot_q4_K_q8_K;
    t[GGML_TYPE_Q5_K].vec_dot = vec_dot_q5_K_q8_K;
    t[GGML_TYPE_Q6_K].vec_dot = vec_dot_q6_K_q8_K;
    t[GGML_TYPE_Q4_0].vec_dot_mc = vec_dot_mc_q4_0_q8_0;
    t[GGML_TYPE_Q8_0].vec_dot_mc = vec_dot_mc_q8_0_q8_0;
    t[GGML_TYPE_Q4_K].vec_dot_mc = vec_dot_mc_q4_K_q8_K;
    t[GGML_TYPE_Q5_K].vec_dot_mc = vec_dot_mc_q5_K_q8_K;
    t[GGML_TYPE_Q6_K].vec_dot_mc = vec_dot_mc_q6_K_q8_K;
    t[GGML_TYPE_IQ4_XS].vec_dot = vec_dot_iq4_xs_q8_K;
}
