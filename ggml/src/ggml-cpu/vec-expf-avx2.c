// vec-expf.h's kernels for AVX2 + FMA: 8 floats per step, glibc's expf on two halves of 4 doubles
// (vec-expf-impl.h), the table read by a 64-bit gather. The float arithmetic around expf is the scalar
// expressions' (one IEEE operation per C operator, division included); the n % 8 tail is the scalar code.
// Only called after the CPUID check.

#include "vec-expf.h"
#include "vec-expf-impl.h"

#include <immintrin.h>
#include <math.h>

struct expf_consts {
    __m256d inv, shift, c0, c1, c2, one;
};

static inline struct expf_consts expf_consts_load(void) {
    struct expf_consts c;
    c.inv   = _mm256_set1_pd(GGML_EXPF_INVLN2N);
    c.shift = _mm256_set1_pd(GGML_EXPF_SHIFT);
    c.c0    = _mm256_set1_pd(GGML_EXPF_C0);
    c.c1    = _mm256_set1_pd(GGML_EXPF_C1);
    c.c2    = _mm256_set1_pd(GGML_EXPF_C2);
    c.one   = _mm256_set1_pd(1.0);
    return c;
}

// expf of 4 floats with |x| < 88 (other lanes give garbage, fixed by the caller)
static inline __m128 expf4(const struct expf_consts * c, __m128 x) {
    const __m256d xd  = _mm256_cvtps_pd(x);
    const __m256d kds = _mm256_fmadd_pd(c->inv, xd, c->shift);
    const __m256i ki  = _mm256_castpd_si256(kds);
    const __m256d kd  = _mm256_sub_pd(kds, c->shift);
    const __m256d r   = _mm256_fmsub_pd(c->inv, xd, kd);
    const __m256i idx = _mm256_and_si256(ki, _mm256_set1_epi64x(GGML_EXPF_N - 1));
    const __m256i tab = _mm256_i64gather_epi64((const long long *) ggml_expf_tab, idx, 8);
    const __m256d s   = _mm256_castsi256_pd(_mm256_add_epi64(tab, _mm256_slli_epi64(ki, 47)));
    const __m256d z   = _mm256_fmadd_pd(c->c0, r, c->c1);
    const __m256d r2  = _mm256_mul_pd(r, r);
    __m256d y = _mm256_fmadd_pd(c->c2, r, c->one);
    y = _mm256_fmadd_pd(z, r2, y);
    y = _mm256_mul_pd(y, s);
    return _mm256_cvtpd_ps(y);
}

// the lanes with |x| >= 88, infinities and NaN: libm's own result (and errno)
static __attribute__((noinline, cold)) __m256 expf_special(__m256 y, __m256 x, int m) {
    float xs[8];
    float ys[8];
    _mm256_storeu_ps(xs, x);
    _mm256_storeu_ps(ys, y);
    for (int l = 0; l < 8; l++) {
        if (m & (1 << l)) {
            ys[l] = expf(xs[l]);
        }
    }
    return _mm256_loadu_ps(ys);
}

static inline __m256 v_expf(const struct expf_consts * c, __m256 x) {
    const __m128 lo = expf4(c, _mm256_castps256_ps128(x));
    const __m128 hi = expf4(c, _mm256_extractf128_ps(x, 1));
    const __m256 y  = _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
    // |x| >= 88 as unsigned integers: x & 0x7fffffff > 0x42afffff, signed compare is safe with the sign cleared
    const __m256i ax = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
    const __m256i sp = _mm256_cmpgt_epi32(ax, _mm256_set1_epi32((int) GGML_EXPF_SPECIAL_ABS - 1));
    int m = _mm256_movemask_ps(_mm256_castsi256_ps(sp));
    if (m) {
        // -inf gives +0 without a libm call (flash attention's first exp of each row is expf(-inf))
        const __m256 ninf = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_castps_si256(x),
                                                                   _mm256_set1_epi32((int) 0xff800000u)));
        m &= ~_mm256_movemask_ps(ninf);
        const __m256 y0 = _mm256_andnot_ps(ninf, y);
        return m ? expf_special(y0, x, m) : y0;
    }
    return y;
}

static inline __m256 v_neg(__m256 x) {
    return _mm256_xor_ps(x, _mm256_set1_ps(-0.0f));
}

// one loop shape for every kernel: F(x, g) maps 8 lanes; g is loaded only by the gated kernels (HAS_G); the
// tail is the scalar expression S(i)
#define EXPF_LOOP(F, HAS_G, S)                                                             \
    const struct expf_consts c = expf_consts_load();                                     \
    int i = 0;                                                                             \
    for (; i + 8 <= n; i += 8) {                                                           \
        const __m256 xv = _mm256_loadu_ps(x + i);                                          \
        const __m256 gv = HAS_G ? _mm256_loadu_ps(g + i) : xv;                             \
        _mm256_storeu_ps(o + i, F(&c, xv, gv));                                            \
    }                                                                                      \
    for (; i < n; i++) {                                                                   \
        o[i] = S;                                                                          \
    }

static inline __m256 f_exp(const struct expf_consts * c, __m256 x, __m256 g) {
    (void) g;
    return v_expf(c, x);
}

static inline __m256 f_silu(const struct expf_consts * c, __m256 x, __m256 g) {
    (void) g;
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), v_expf(c, v_neg(x))));
}

static inline __m256 f_sigmoid(const struct expf_consts * c, __m256 x, __m256 g) {
    (void) g;
    const __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, v_expf(c, v_neg(x))));
}

static inline __m256 f_gelu_quick(const struct expf_consts * c, __m256 x, __m256 g) {
    (void) g;
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 e   = v_expf(c, _mm256_mul_ps(_mm256_set1_ps(-1.702f), x));
    return _mm256_mul_ps(x, _mm256_div_ps(one, _mm256_add_ps(one, e)));
}

static inline __m256 f_swiglu(const struct expf_consts * c, __m256 x, __m256 g) {
    return _mm256_mul_ps(f_silu(c, x, g), g);
}

static inline __m256 f_geglu_quick(const struct expf_consts * c, __m256 x, __m256 g) {
    return _mm256_mul_ps(f_gelu_quick(c, x, g), g);
}

static void exp_f32(int n, float * o, const float * x) {
    const float * g = x; // unread
    EXPF_LOOP(f_exp, 0, expf(x[i]))
}

static void silu_f32(int n, float * o, const float * x) {
    const float * g = x; // unread
    EXPF_LOOP(f_silu, 0, x[i] / (1.0f + expf(-x[i])))
}

static void sigmoid_f32(int n, float * o, const float * x) {
    const float * g = x; // unread
    EXPF_LOOP(f_sigmoid, 0, 1.0f / (1.0f + expf(-x[i])))
}

static void gelu_quick_f32(int n, float * o, const float * x) {
    const float * g = x; // unread
    EXPF_LOOP(f_gelu_quick, 0, x[i] * (1.0f / (1.0f + expf(-1.702f * x[i]))))
}

static void swiglu_f32(int n, float * o, const float * x, const float * g) {
    EXPF_LOOP(f_swiglu, 1, x[i] / (1.0f + expf(-x[i])) * g[i])
}

static void geglu_quick_f32(int n, float * o, const float * x, const float * g) {
    EXPF_LOOP(f_geglu_quick, 1, x[i] * (1.0f / (1.0f + expf(-1.702f * x[i]))) * g[i])
}

void ggml_cpu_expf_kernels_avx2(struct ggml_cpu_expf_kernels * k) {
    k->exp         = exp_f32;
    k->silu        = silu_f32;
    k->sigmoid     = sigmoid_f32;
    k->gelu_quick  = gelu_quick_f32;
    k->swiglu      = swiglu_f32;
    k->geglu_quick = geglu_quick_f32;
}
