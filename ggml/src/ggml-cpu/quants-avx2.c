// AVX2 + FMA + F16C kernels (compiled with -mavx2 -mfma -mf16c -mbmi2; only called after the CPUID check in
// ggml-cpu-kernels.c).
//
// Integer dot products use _mm256_maddubs_epi16 (unsigned x signed bytes -> pairs of int16) followed by
// _mm256_madd_epi16 (-> int32). Signed weights use the sign trick: |x| times y with x's sign moved onto y.
// No pair can saturate int16: |x| <= 128 and |y| <= 127 (activations never hold -128).
// K-quants are reduced to one integer per super-block, then scaled exactly like quants-scalar.c.
#include "quants-impl.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

// ---- helpers -------------------------------------------------------------------------------------------------

static inline float hsum_f32_8(__m256 v) {
    __m128 r = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    r = _mm_add_ps(r, _mm_movehl_ps(r, r));
    r = _mm_add_ss(r, _mm_movehdup_ps(r));
    return _mm_cvtss_f32(r);
}

static inline int hsum_i32_8(__m256i v) {
    __m128i r = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    r = _mm_add_epi32(r, _mm_unpackhi_epi64(r, r));
    r = _mm_add_epi32(r, _mm_shuffle_epi32(r, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(r);
}

static inline float f16_to_f32(ggml_half h) {
    return _cvtsh_ss(h);
}

// 16 packed bytes -> 32 values 0..15: low nibbles are elements 0..15, high nibbles 16..31
static inline __m256i nibbles_32(const uint8_t * p) {
    const __m128i t = _mm_loadu_si128((const __m128i *) p);
    const __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(t), _mm_srli_epi16(t, 4), 1);
    return _mm256_and_si256(b, _mm256_set1_epi8(0x0f));
}

// 32 bits -> 32 bytes of 0x00 / 0xff (byte i from bit i)
static inline __m256i bits_to_bytes_32(const uint8_t * p) {
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32((int) v),
        _mm256_set_epi64x(0x0303030303030303LL, 0x0202020202020202LL, 0x0101010101010101LL, 0));
    const __m256i bit = _mm256_set1_epi64x((long long) 0x8040201008040201ULL);
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

// unsigned bytes x signed bytes -> 8 int32 sums of 4 products
static inline __m256i dot_us8(__m256i ux, __m256i sy) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(ux, sy), _mm256_set1_epi16(1));
}

// signed bytes x signed bytes (x may be -128, y may not) -> 8 int32 sums of 4 products
static inline __m256i dot_ss8(__m256i x, __m256i y) {
    return dot_us8(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
}

// ---- activation quantizers -------------------------------------------------------------------------------------

static inline __m256 abs_ps(__m256 v) {
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}

static inline float hmax_f32_8(__m256 v) {
    __m128 r = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    r = _mm_max_ps(r, _mm_movehl_ps(r, r));
    r = _mm_max_ss(r, _mm_movehdup_ps(r));
    return _mm_cvtss_f32(r);
}

// 32 floats times id, rounded half to even, packed to 32 int8 in order; also returns their int32 sum
static inline __m256i quant_32(const float * x, float id, int * sum) {
    const __m256 m = _mm256_set1_ps(id);
#define rnd (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
    __m256i i0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x +  0), m), rnd));
    __m256i i1 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x +  8), m), rnd));
    __m256i i2 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 16), m), rnd));
    __m256i i3 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 24), m), rnd));
#undef rnd
    if (sum) {
        *sum = hsum_i32_8(_mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)));
    }
    // the packs work per 128-bit lane; the permute restores element order
    const __m256i p01 = _mm256_packs_epi32(i0, i1);
    const __m256i p23 = _mm256_packs_epi32(i2, i3);
    const __m256i p   = _mm256_packs_epi16(p01, p23);
    return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

static inline float amax_32(const float * x) {
    __m256 m = abs_ps(_mm256_loadu_ps(x));
    m = _mm256_max_ps(m, abs_ps(_mm256_loadu_ps(x + 8)));
    m = _mm256_max_ps(m, abs_ps(_mm256_loadu_ps(x + 16)));
    m = _mm256_max_ps(m, abs_ps(_mm256_loadu_ps(x + 24)));
    return hmax_f32_8(m);
}

static void from_float_q8_0(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    block_q8_0 * GGML_RESTRICT y = vy;
    const int64_t nb = k / QK8_0;
    for (int64_t i = 0; i < nb; ++i) {
        const float * xb = x + i * QK8_0;
        const float amax = amax_32(xb);
        const float d  = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[i].d = GGML_FP32_TO_FP16(d);
        _mm256_storeu_si256((__m256i *) y[i].qs, quant_32(xb, id, NULL));
    }
}

static void from_float_q8_1(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    block_q8_1 * GGML_RESTRICT y = vy;
    const int64_t nb = k / QK8_1;
    for (int64_t i = 0; i < nb; ++i) {
        const float * xb = x + i * QK8_1;
        const float amax = amax_32(xb);
        const float d  = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        int sum = 0;
        _mm256_storeu_si256((__m256i *) y[i].qs, quant_32(xb, id, &sum));
        y[i].d = GGML_FP32_TO_FP16(d);
        y[i].s = GGML_FP32_TO_FP16(d * (float) sum);
    }
}

static void from_float_q8_K(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    block_q8_K * GGML_RESTRICT y = vy;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const float * xb = x + i * QK_K;
        __m256 m = _mm256_setzero_ps();
        for (int j = 0; j < QK_K; j += 8) {
            m = _mm256_max_ps(m, abs_ps(_mm256_loadu_ps(xb + j)));
        }
        const float amax = hmax_f32_8(m);
        if (amax == 0.0f) {
            memset(&y[i], 0, sizeof(y[i]));
            continue;
        }
        // the sign comes from the first element of largest magnitude, as in the scalar scan
        float max = 0.0f;
        for (int j = 0; j < QK_K; ++j) {
            if (fabsf(xb[j]) == amax) {
                max = xb[j];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m256i cap = _mm256_set1_epi8(127);
        for (int j = 0; j < QK_K; j += 32) {
            // iscale*x can only exceed 127 by rounding, where the scalar code clamps to 127
            const __m256i q = _mm256_min_epi8(quant_32(xb + j, iscale, NULL), cap);
            _mm256_storeu_si256((__m256i *) (y[i].qs + j), q);
            // sums of 16: bytes -> pairs (x1) -> quads -> two 64-bit halves per lane
            const __m256i s16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), q);
            const __m256i s32 = _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
            const __m256i s64 = _mm256_add_epi32(s32, _mm256_shuffle_epi32(s32, _MM_SHUFFLE(2, 3, 0, 1)));
            const __m256i s   = _mm256_add_epi32(s64, _mm256_shuffle_epi32(s64, _MM_SHUFFLE(1, 0, 3, 2)));
            y[i].bsums[j / 16 + 0] = (int16_t) _mm256_extract_epi32(s, 0);
            y[i].bsums[j / 16 + 1] = (int16_t) _mm256_extract_epi32(s, 4);
        }
        y[i].d = 1.0f / iscale;
    }
}

static void from_float_f16(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    ggml_fp16_t * GGML_RESTRICT y = vy;
    int64_t i = 0;
    for (; i + 8 <= k; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *) (y + i), h);
    }
    for (; i < k; ++i) {
        y[i] = GGML_FP32_TO_FP16(x[i]);
    }
}

// 8 floats -> 8 bf16 in the low 16 bits of each int32 lane, rounded like GGML_FP32_TO_BF16
static inline __m256i bf16_round_8(__m256 v) {
    const __m256i u    = _mm256_castps_si256(v);
    const __m256i mag  = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    const __m256i nan  = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
    const __m256i lsb  = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rnd  = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
    const __m256i qnan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(64));
    return _mm256_blendv_epi8(rnd, qnan, nan);
}

static void from_float_bf16(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    ggml_bf16_t * GGML_RESTRICT y = vy;
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
        const __m256i a = bf16_round_8(_mm256_loadu_ps(x + i));
        const __m256i b = bf16_round_8(_mm256_loadu_ps(x + i + 8));
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), _MM_SHUFFLE(3, 1, 2, 0));
        _mm256_storeu_si256((__m256i *) (y + i), p);
    }
    for (; i < k; ++i) {
        y[i] = GGML_FP32_TO_BF16(x[i]);
    }
}

// ---- 32-element blocks ---------------------------------------------------------------------------------------

MC_INLINE void q4_0_impl(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy, size_t by, const int nc) {
    const block_q4_0 * GGML_RESTRICT x = vx;
    const int nb = n / QK8_0;
    const __m256i off = _mm256_set1_epi8(8);
    __m256 acc0[GGML_CPU_MC_MAX], acc1[GGML_CPU_MC_MAX];
    for (int c = 0; c < nc; ++c) {
        acc0[c] = _mm256_setzero_ps();
        acc1[c] = _mm256_setzero_ps();
    }
    int i = 0;
    for (; i + 1 < nb; i += 2) {
        const __m256i qx0 = _mm256_sub_epi8(nibbles_32(x[i].qs), off);
        const __m256i qx1 = _mm256_sub_epi8(nibbles_32(x[i + 1].qs), off);
        // the sign trick's |x| is shared by all columns
        const __m256i ax0 = _mm256_sign_epi8(qx0, qx0), ax1 = _mm256_sign_epi8(qx1, qx1);
        const float dx0 = f16_to_f32(x[i].d), dx1 = f16_to_f32(x[i + 1].d);
        for (int c = 0; c < nc; ++c) {
            const block_q8_0 * y = (const block_q8_0 *) ((const char *) vy + c * by);
            const __m256i p0 = dot_us8(ax0, _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *) y[i].qs), qx0));
            const __m256i p1 = dot_us8(ax1, _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *) y[i + 1].qs), qx1));
            acc0[c] = _mm256_fmadd_ps(_mm256_set1_ps(dx0 * f16_to_f32(y[i].d)), _mm256_cvtepi32_ps(p0), acc0[c]);
            acc1[c] = _mm256_fmadd_ps(_mm256_set1_ps(dx1 * f16_to_f32(y[i + 1].d)), _mm256_cvtepi32_ps(p1), acc1[c]);
        }
    }
    for (; i < nb; ++i) {
        const __m256i qx = _mm256_sub_epi8(nibbles_32(x[i].qs), off);
        for (int c = 0; c < nc; ++c) {
            const block_q8_0 * y = (const block_q8_0 *) ((const char *) vy + c * by);
            const __m256i p = dot_ss8(qx, _mm256_loadu_si256((const __m256i *) y[i].qs));
            acc0[c] = _mm256_fmadd_ps(_mm256_set1_ps(f16_to_f32(x[i].d) * f16_to_f32(y[i].d)), _mm256_cvtepi32_ps(p), acc0[c]);
        }
    }
    for (int c = 0; c < nc; ++c) {
        s[c] = hsum_f32_8(_mm256_add_ps(acc0[c], acc1[c]));
    }
}

MC_VEC_DOTS(q4_0_q8_0, q4_0_impl)

static void vec_dot_q4_1_q8_1(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q4_1 * GGML_RESTRICT x = vx;
    const block_q8_1 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_1;
    __m256 acc = _mm256_setzero_ps();
    float summs = 0.0f;
    for (int i = 0; i < nb; ++i) {
        const __m256i p = dot_us8(nibbles_32(x[i].qs), _mm256_loadu_si256((const __m256i *) y[i].qs));
        const __m256 d = _mm256_set1_ps(f16_to_f32(x[i].d) * f16_to_f32(y[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(p), acc);
        summs += f16_to_f32(x[i].m) * f16_to_f32(y[i].s);
    }
    *s = hsum_f32_8(acc) + summs;
}

static void vec_dot_q5_0_q8_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q5_0 * GGML_RESTRICT x = vx;
    const block_q8_0 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_0;
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < nb; ++i) {
        const __m256i hb = _mm256_and_si256(bits_to_bytes_32(x[i].qh), _mm256_set1_epi8(16));
        const __m256i qx = _mm256_sub_epi8(_mm256_or_si256(nibbles_32(x[i].qs), hb), _mm256_set1_epi8(16));
        const __m256i p  = dot_ss8(qx, _mm256_loadu_si256((const __m256i *) y[i].qs));
        const __m256 d = _mm256_set1_ps(f16_to_f32(x[i].d) * f16_to_f32(y[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(p), acc);
    }
    *s = hsum_f32_8(acc);
}

static void vec_dot_q5_1_q8_1(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q5_1 * GGML_RESTRICT x = vx;
    const block_q8_1 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_1;
    __m256 acc = _mm256_setzero_ps();
    float summs = 0.0f;
    for (int i = 0; i < nb; ++i) {
        const __m256i hb = _mm256_and_si256(bits_to_bytes_32(x[i].qh), _mm256_set1_epi8(16));
        const __m256i qx = _mm256_or_si256(nibbles_32(x[i].qs), hb);
        const __m256i p  = dot_us8(qx, _mm256_loadu_si256((const __m256i *) y[i].qs));
        const __m256 d = _mm256_set1_ps(f16_to_f32(x[i].d) * f16_to_f32(y[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(p), acc);
        summs += f16_to_f32(x[i].m) * f16_to_f32(y[i].s);
    }
    *s = hsum_f32_8(acc) + summs;
}

// llama.cpp's x86 order (see quants-scalar.c): one chain of eight float lanes over the blocks, lane l being the
// int dot of elements 4l..4l+3, then hsum_f32_8's tree
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
        const __m256i ax = _mm256_sign_epi8(qx, qx); // the sign trick's |x|, shared by all columns
        const float dx = f16_to_f32(x[i].d);
        for (int c = 0; c < nc; ++c) {
            const block_q8_0 * y = (const block_q8_0 *) ((const char *) vy + c * by);
            const __m256i p = dot_us8(ax, _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *) y[i].qs), qx));
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(dx * f16_to_f32(y[i].d)), _mm256_cvtepi32_ps(p), acc[c]);
        }
    }
    for (int c = 0; c < nc; ++c) {
        s[c] = hsum_f32_8(acc[c]);
    }
}

MC_VEC_DOTS(q8_0_q8_0, q8_0_impl)

static inline __m256i iq4nl_table(void) {
    const __m128i t = _mm_loadu_si128((const __m128i *) kvalues_iq4nl);
    return _mm256_broadcastsi128_si256(t);
}

static void vec_dot_iq4_nl_q8_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                                const void * GGML_RESTRICT vy) {
    const block_iq4_nl * GGML_RESTRICT x = vx;
    const block_q8_0 * GGML_RESTRICT y = vy;
    const int nb = n / QK4_NL;
    const __m256i tbl = iq4nl_table();
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < nb; ++i) {
        const __m256i qx = _mm256_shuffle_epi8(tbl, nibbles_32(x[i].qs));
        const __m256i p  = dot_ss8(qx, _mm256_loadu_si256((const __m256i *) y[i].qs));
        const __m256 d = _mm256_set1_ps(f16_to_f32(x[i].d) * f16_to_f32(y[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(p), acc);
    }
    *s = hsum_f32_8(acc);
}

// ---- K-quants ---------------------------------------------------------------------------------------------

// byte shuffles that spread int16 scale 2p over lanes 0..7 and 2p+1 over lanes 8..15 (p = 0..3) of a
// register whose two 128-bit lanes both hold the same 8 int16 scales
static inline __m256i pair_ctrl(int p) {
    const short lo = (short) (((4 * p + 1) << 8) | (4 * p));
    const short hi = (short) (((4 * p + 3) << 8) | (4 * p + 2));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16(lo)), _mm_set1_epi16(hi), 1);
}

// byte shuffle that spreads int16 k (0..7) of each 128-bit lane over all 8 int16 lanes
static inline __m256i one_ctrl(int k) {
    return _mm256_set1_epi16((short) (((2 * k + 1) << 8) | (2 * k)));
}

// 16 int16 scales (8 per 128-bit lane) -> both lanes hold the 8 scales of lane h
static inline __m256i lane_dup(__m256i v, int h) {
    return h == 0 ? _mm256_permute4x64_epi64(v, 0x44) : _mm256_permute4x64_epi64(v, 0xee);
}

static void vec_dot_q2_K_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q2_K * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    const __m256i m3 = _mm256_set1_epi8(3);
    const __m256i ctrl[4] = { pair_ctrl(0), pair_ctrl(1), pair_ctrl(2), pair_ctrl(3) };
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        const __m128i sc8  = _mm_loadu_si128((const __m128i *) x[i].scales);
        const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc8, 4), _mm_set1_epi8(0x0f)));
        const __m256i bs   = _mm256_loadu_si256((const __m256i *) y[i].bsums);
        const int msum = hsum_i32_8(_mm256_madd_epi16(mins, bs));

        const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(sc8, _mm_set1_epi8(0x0f)));
        __m256i acc = _mm256_setzero_si256();
        for (int half = 0; half < 2; ++half) {
            const __m256i q  = _mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * half));
            const int8_t * q8 = y[i].qs + 128 * half;
            const __m256i sh = lane_dup(sc16, half);
            for (int j = 0; j < 4; ++j) {
                const __m256i v  = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), m3);
                const __m256i yy = _mm256_loadu_si256((const __m256i *) (q8 + 32 * j));
                const __m256i p  = _mm256_maddubs_epi16(v, yy);
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_shuffle_epi8(sh, ctrl[j])));
            }
        }
        const int isum = hsum_i32_8(acc);
        const float dall = y[i].d * f16_to_f32(x[i].d);
        const float dmin = y[i].d * f16_to_f32(x[i].dmin);
        sumf += dall * (float) isum - dmin * (float) msum;
    }
    *s = sumf;
}

static void vec_dot_q3_K_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q3_K * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    const __m256i m3 = _mm256_set1_epi8(3);
    const __m256i ctrl[4] = { pair_ctrl(0), pair_ctrl(1), pair_ctrl(2), pair_ctrl(3) };
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        uint32_t w[4];
        ggml_cpu_q3_K_scale_words(x[i].scales, w);
        const __m128i sc8 = _mm_sub_epi8(_mm_setr_epi32((int) w[0], (int) w[1], (int) w[2], (int) w[3]), _mm_set1_epi8(32));
        // stored values are q + 4*h - 4: take the unsigned q + 4*h and remove 4*sum(y) with the bsums
        const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
        const __m256i bs   = _mm256_loadu_si256((const __m256i *) y[i].bsums);
        __m256i acc = _mm256_slli_epi32(_mm256_madd_epi16(sc16, bs), 2);
        acc = _mm256_sub_epi32(_mm256_setzero_si256(), acc);

        const __m256i hm = _mm256_loadu_si256((const __m256i *) x[i].hmask);
        for (int half = 0; half < 2; ++half) {
            const __m256i q  = _mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * half));
            const int8_t * q8 = y[i].qs + 128 * half;
            const __m256i sh = lane_dup(sc16, half);
            for (int j = 0; j < 4; ++j) {
                const int bit = 4 * half + j;
                const __m256i bm = _mm256_set1_epi8((char) (1 << bit));
                const __m256i h  = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hm, bm), bm), _mm256_set1_epi8(4));
                const __m256i v  = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * j), m3), h);
                const __m256i yy = _mm256_loadu_si256((const __m256i *) (q8 + 32 * j));
                const __m256i p  = _mm256_maddubs_epi16(v, yy);
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_shuffle_epi8(sh, ctrl[j])));
            }
        }
        const int isum = hsum_i32_8(acc);
        sumf += (y[i].d * f16_to_f32(x[i].d)) * (float) isum;
    }
    *s = sumf;
}

// sum over the 8 sub-blocks of min * (sum of its 32 activations), from the 16 bsums
static inline int k4_msum(uint64_t mn, const int16_t * bsums) {
    const __m128i mb = _mm_cvtsi64_si128((long long) mn);
    const __m256i mm = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mb, mb));   // each min twice
    return hsum_i32_8(_mm256_madd_epi16(mm, _mm256_loadu_si256((const __m256i *) bsums)));
}

MC_INLINE void q4_K_impl(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy, size_t by, const int nc) {
    const block_q4_K * GGML_RESTRICT x = vx;
    const int nb = n / QK_K;
    __m256i one[8];
    for (int k = 0; k < 8; ++k) {
        one[k] = one_ctrl(k);
    }
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    float sumf[GGML_CPU_MC_MAX] = { 0.0f };
    for (int i = 0; i < nb; ++i) {
        uint64_t sc64, mn64;
        ggml_cpu_k4_scales_u64(x[i].scales, &sc64, &mn64);
        // scales as int16 in both 128-bit lanes; scale k is spread over all lanes by one[k]
        const __m128i s16 = _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long) sc64));
        const __m256i sc2 = _mm256_broadcastsi128_si256(s16);
        __m256i acc[GGML_CPU_MC_MAX];
        for (int c = 0; c < nc; ++c) {
            acc[c] = _mm256_setzero_si256();
        }
        for (int j = 0; j < 4; ++j) {
            const __m256i q   = _mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * j));
            const __m256i qlo = _mm256_and_si256(q, m4);
            const __m256i qhi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            const __m256i slo = _mm256_shuffle_epi8(sc2, one[2 * j]);
            const __m256i shi = _mm256_shuffle_epi8(sc2, one[2 * j + 1]);
            for (int c = 0; c < nc; ++c) {
                const block_q8_K * y = (const block_q8_K *) ((const char *) vy + c * by);
                const __m256i plo = _mm256_maddubs_epi16(qlo, _mm256_loadu_si256((const __m256i *) (y[i].qs + 64 * j)));
                const __m256i phi = _mm256_maddubs_epi16(qhi, _mm256_loadu_si256((const __m256i *) (y[i].qs + 64 * j + 32)));
                acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(plo, slo));
                acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(phi, shi));
            }
        }
        for (int c = 0; c < nc; ++c) {
            const block_q8_K * y = (const block_q8_K *) ((const char *) vy + c * by);
            const int msum = k4_msum(mn64, y[i].bsums);
            const int isum = hsum_i32_8(acc[c]);
            const float dall = y[i].d * f16_to_f32(x[i].d);
            const float dmin = y[i].d * f16_to_f32(x[i].dmin);
            sumf[c] += dall * (float) isum - dmin * (float) msum;
        }
    }
    for (int c = 0; c < nc; ++c) {
        s[c] = sumf[c];
    }
}

MC_VEC_DOTS(q4_K_q8_K, q4_K_impl)

static void vec_dot_q5_K_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q5_K * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    __m256i one[8];
    for (int k = 0; k < 8; ++k) {
        one[k] = one_ctrl(k);
    }
    const __m256i m4  = _mm256_set1_epi8(0x0f);
    const __m256i b16 = _mm256_set1_epi8(16);
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        uint64_t sc64, mn64;
        ggml_cpu_k4_scales_u64(x[i].scales, &sc64, &mn64);
        const int msum = k4_msum(mn64, y[i].bsums);
        // scales as int16 in both 128-bit lanes; scale k is spread over all lanes by one[k]
        const __m128i s16 = _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long) sc64));
        const __m256i sc2 = _mm256_broadcastsi128_si256(s16);
        const __m256i qh = _mm256_loadu_si256((const __m256i *) x[i].qh);
        __m256i acc = _mm256_setzero_si256();
        for (int j = 0; j < 4; ++j) {
            const __m256i q   = _mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * j));
            const __m256i blo = _mm256_set1_epi8((char) (1 << (2 * j)));
            const __m256i bhi = _mm256_set1_epi8((char) (1 << (2 * j + 1)));
            const __m256i hlo = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, blo), blo), b16);
            const __m256i hhi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bhi), bhi), b16);
            const __m256i vlo = _mm256_or_si256(_mm256_and_si256(q, m4), hlo);
            const __m256i vhi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), hhi);
            const __m256i ylo = _mm256_loadu_si256((const __m256i *) (y[i].qs + 64 * j));
            const __m256i yhi = _mm256_loadu_si256((const __m256i *) (y[i].qs + 64 * j + 32));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(vlo, ylo), _mm256_shuffle_epi8(sc2, one[2 * j])));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(vhi, yhi), _mm256_shuffle_epi8(sc2, one[2 * j + 1])));
        }
        const int isum = hsum_i32_8(acc);
        const float dall = y[i].d * f16_to_f32(x[i].d);
        const float dmin = y[i].d * f16_to_f32(x[i].dmin);
        sumf += dall * (float) isum - dmin * (float) msum;
    }
    *s = sumf;
}

MC_INLINE void q6_K_impl(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy, size_t by, const int nc) {
    const block_q6_K * GGML_RESTRICT x = vx;
    const int nb = n / QK_K;
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i m3 = _mm256_set1_epi8(3);
    const __m256i ctrl[4] = { pair_ctrl(0), pair_ctrl(1), pair_ctrl(2), pair_ctrl(3) };
    float sumf[GGML_CPU_MC_MAX] = { 0.0f };
    for (int i = 0; i < nb; ++i) {
        // stored values are u - 32 with u in 0..63: take u and remove 32*sum(y) with the bsums
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) x[i].scales));
        __m256i acc[GGML_CPU_MC_MAX];
        for (int c = 0; c < nc; ++c) {
            const block_q8_K * y = (const block_q8_K *) ((const char *) vy + c * by);
            const __m256i bs = _mm256_loadu_si256((const __m256i *) y[i].bsums);
            acc[c] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, bs), 5));
        }
        for (int half = 0; half < 2; ++half) {
            const __m256i ql0 = _mm256_loadu_si256((const __m256i *) (x[i].ql + 64 * half));
            const __m256i ql1 = _mm256_loadu_si256((const __m256i *) (x[i].ql + 64 * half + 32));
            const __m256i qh  = _mm256_loadu_si256((const __m256i *) (x[i].qh + 32 * half));
            const __m256i sh = lane_dup(sc16, half);
            const __m256i v1 = _mm256_or_si256(_mm256_and_si256(ql0, m4),
                                               _mm256_slli_epi16(_mm256_and_si256(qh, m3), 4));
            const __m256i v2 = _mm256_or_si256(_mm256_and_si256(ql1, m4),
                                               _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m3), 4));
            const __m256i v3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                                               _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m3), 4));
            const __m256i v4 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                               _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m3), 4));
            const __m256i s1 = _mm256_shuffle_epi8(sh, ctrl[0]), s2 = _mm256_shuffle_epi8(sh, ctrl[1]);
            const __m256i s3 = _mm256_shuffle_epi8(sh, ctrl[2]), s4 = _mm256_shuffle_epi8(sh, ctrl[3]);
            for (int c = 0; c < nc; ++c) {
                const block_q8_K * y = (const block_q8_K *) ((const char *) vy + c * by);
                const int8_t * q8 = y[i].qs + 128 * half;
                const __m256i p1 = _mm256_maddubs_epi16(v1, _mm256_loadu_si256((const __m256i *) (q8 +  0)));
                const __m256i p2 = _mm256_maddubs_epi16(v2, _mm256_loadu_si256((const __m256i *) (q8 + 32)));
                const __m256i p3 = _mm256_maddubs_epi16(v3, _mm256_loadu_si256((const __m256i *) (q8 + 64)));
                const __m256i p4 = _mm256_maddubs_epi16(v4, _mm256_loadu_si256((const __m256i *) (q8 + 96)));
                acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(p1, s1));
                acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(p2, s2));
                acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(p3, s3));
                acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(p4, s4));
            }
        }
        for (int c = 0; c < nc; ++c) {
            const block_q8_K * y = (const block_q8_K *) ((const char *) vy + c * by);
            const int isum = hsum_i32_8(acc[c]);
            sumf[c] += (y[i].d * f16_to_f32(x[i].d)) * (float) isum;
        }
    }
    for (int c = 0; c < nc; ++c) {
        s[c] = sumf[c];
    }
}

MC_VEC_DOTS(q6_K_q8_K, q6_K_impl)

static void vec_dot_iq4_xs_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                                const void * GGML_RESTRICT vy) {
    const block_iq4_xs * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    const __m256i tbl = iq4nl_table();
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        int8_t sc[QK_K / 32];
        ggml_cpu_iq4_xs_scales(&x[i], sc);
        __m256i acc = _mm256_setzero_si256();
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const __m256i qx = _mm256_shuffle_epi8(tbl, nibbles_32(x[i].qs + 16 * ib));
            const __m256i yy = _mm256_loadu_si256((const __m256i *) (y[i].qs + 32 * ib));
            const __m256i p  = _mm256_maddubs_epi16(_mm256_sign_epi8(qx, qx), _mm256_sign_epi8(yy, qx));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(sc[ib])));
        }
        const int isum = hsum_i32_8(acc);
        sumf += (y[i].d * f16_to_f32(x[i].d)) * (float) isum;
    }
    *s = sumf;
}

// ---- float rows -----------------------------------------------------------------------------------------------

static void vec_dot_f32(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                        const void * GGML_RESTRICT vy) {
    const float * GGML_RESTRICT x = vx;
    const float * GGML_RESTRICT y = vy;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i +  0), _mm256_loadu_ps(y + i +  0), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i +  8), _mm256_loadu_ps(y + i +  8), a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), a3);
    }
    for (; i + 8 <= n; i += 8) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), a0);
    }
    float sum = hsum_f32_8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; i < n; ++i) {
        sum += x[i] * y[i];
    }
    *s = sum;
}

static void vec_dot_f16(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                        const void * GGML_RESTRICT vy) {
    const ggml_fp16_t * GGML_RESTRICT x = vx;
    const ggml_fp16_t * GGML_RESTRICT y = vy;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
#define LD(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (p)))
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_fmadd_ps(LD(x + i +  0), LD(y + i +  0), a0);
        a1 = _mm256_fmadd_ps(LD(x + i +  8), LD(y + i +  8), a1);
        a2 = _mm256_fmadd_ps(LD(x + i + 16), LD(y + i + 16), a2);
        a3 = _mm256_fmadd_ps(LD(x + i + 24), LD(y + i + 24), a3);
    }
    for (; i + 8 <= n; i += 8) {
        a0 = _mm256_fmadd_ps(LD(x + i), LD(y + i), a0);
    }
#undef LD
    float sum = hsum_f32_8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; i < n; ++i) {
        sum += f16_to_f32(x[i]) * f16_to_f32(y[i]);
    }
    *s = sum;
}

static inline __m256 bf16_load_8(const ggml_bf16_t * p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *) p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

static void vec_dot_bf16(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy) {
    const ggml_bf16_t * GGML_RESTRICT x = vx;
    const ggml_bf16_t * GGML_RESTRICT y = vy;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_fmadd_ps(bf16_load_8(x + i +  0), bf16_load_8(y + i +  0), a0);
        a1 = _mm256_fmadd_ps(bf16_load_8(x + i +  8), bf16_load_8(y + i +  8), a1);
        a2 = _mm256_fmadd_ps(bf16_load_8(x + i + 16), bf16_load_8(y + i + 16), a2);
        a3 = _mm256_fmadd_ps(bf16_load_8(x + i + 24), bf16_load_8(y + i + 24), a3);
    }
    for (; i + 8 <= n; i += 8) {
        a0 = _mm256_fmadd_ps(bf16_load_8(x + i), bf16_load_8(y + i), a0);
    }
    float sum = hsum_f32_8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; i < n; ++i) {
        sum += GGML_BF16_TO_FP32(x[i]) * GGML_BF16_TO_FP32(y[i]);
    }
    *s = sum;
}

// ---- table -------------------------------------------------------------------------------------------------

void ggml_cpu_kernels_fill_avx2(struct ggml_cpu_type_kernels * t) {
    t[GGML_TYPE_F32].vec_dot     = vec_dot_f32;
    t[GGML_TYPE_F16].vec_dot     = vec_dot_f16;
    t[GGML_TYPE_F16].from_float  = from_float_f16;
    t[GGML_TYPE_BF16].vec_dot    = vec_dot_bf16;
    t[GGML_TYPE_BF16].from_float = from_float_bf16;
    t[GGML_TYPE_Q8_0].from_float = from_float_q8_0;
    t[GGML_TYPE_Q8_1].from_float = from_float_q8_1;
    t[GGML_TYPE_Q8_K].from_float = from_float_q8_K;

    t[GGML_TYPE_Q4_0].vec_dot   = vec_dot_q4_0_q8_0;
    t[GGML_TYPE_Q4_0].vec_dot_mc = vec_dot_mc_q4_0_q8_0;
    t[GGML_TYPE_Q4_K].vec_dot_mc = vec_dot_mc_q4_K_q8_K;
    t[GGML_TYPE_Q6_K].vec_dot_mc = vec_dot_mc_q6_K_q8_K;
    t[GGML_TYPE_Q4_1].vec_dot   = vec_dot_q4_1_q8_1;
    t[GGML_TYPE_Q5_0].vec_dot   = vec_dot_q5_0_q8_0;
    t[GGML_TYPE_Q5_1].vec_dot   = vec_dot_q5_1_q8_1;
    t[GGML_TYPE_Q8_0].vec_dot   = vec_dot_q8_0_q8_0;
    t[GGML_TYPE_Q8_0].vec_dot_mc = vec_dot_mc_q8_0_q8_0;
    t[GGML_TYPE_IQ4_NL].vec_dot = vec_dot_iq4_nl_q8_0;
    t[GGML_TYPE_Q2_K].vec_dot   = vec_dot_q2_K_q8_K;
    t[GGML_TYPE_Q3_K].vec_dot   = vec_dot_q3_K_q8_K;
    t[GGML_TYPE_Q4_K].vec_dot   = vec_dot_q4_K_q8_K;
    t[GGML_TYPE_Q5_K].vec_dot   = vec_dot_q5_K_q8_K;
    t[GGML_TYPE_Q6_K].vec_dot   = vec_dot_q6_K_q8_K;
    t[GGML_TYPE_IQ4_XS].vec_dot = vec_dot_iq4_xs_q8_K;
}
