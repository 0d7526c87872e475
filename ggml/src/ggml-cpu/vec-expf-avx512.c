// vec-expf.h's kernels for AVX-512 (F, DQ): 16 floats per step, glibc's expf on two halves of 8 doubles
// (vec-expf-impl.h), the 32-entry table in four registers picked by two vpermt2pd. The float arithmetic
// around expf is the scalar expressions' (one IEEE operation per C operator, division included), the n % 16
// tail runs masked. Only called after the CPUID check.

#include "vec-expf.h"
#include "vec-expf-impl.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

struct expf_consts {
    __m512d inv, shift, c0, c1, c2, one;
    __m512d tab[4]; // entries 0-7, 8-15, 16-23, 24-31
};

static inline struct expf_consts expf_consts_load(void) {
    struct expf_consts c;
    c.inv   = _mm512_set1_pd(GGML_EXPF_INVLN2N);
    c.shift = _mm512_set1_pd(GGML_EXPF_SHIFT);
    c.c0    = _mm512_set1_pd(GGML_EXPF_C0);
    c.c1    = _mm512_set1_pd(GGML_EXPF_C1);
    c.c2    = _mm512_set1_pd(GGML_EXPF_C2);
    c.one   = _mm512_set1_pd(1.0);
    for (int i = 0; i < 4; i++) {
        c.tab[i] = _mm512_castsi512_pd(_mm512_loadu_si512((const void *) (ggml_expf_tab + 8 * i)));
    }
    return c;
}

// expf of 8 floats with |x| < 88 (other lanes give garbage, fixed by the caller)
static inline __m256 expf8(const struct expf_consts * c, __m256 x) {
    const __m512d xd  = _mm512_cvtps_pd(x);
    const __m512d kds = _mm512_fmadd_pd(c->inv, xd, c->shift);
    const __m512i ki  = _mm512_castpd_si512(kds);
    const __m512d kd  = _mm512_sub_pd(kds, c->shift);
    const __m512d r   = _mm512_fmsub_pd(c->inv, xd, kd);
    // vpermt2pd reads index bits 0-3 (entry and table), bit 4 picks the pair
    const __m512d tlo = _mm512_permutex2var_pd(c->tab[0], ki, c->tab[1]);
    const __m512d thi = _mm512_permutex2var_pd(c->tab[2], ki, c->tab[3]);
    const __mmask8 up = _mm512_test_epi64_mask(ki, _mm512_set1_epi64(16));
    const __m512d tab = _mm512_mask_blend_pd(up, tlo, thi);
    const __m512d s   = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(tab), _mm512_slli_epi64(ki, 47)));
    const __m512d z   = _mm512_fmadd_pd(c->c0, r, c->c1);
    const __m512d r2  = _mm512_mul_pd(r, r);
    __m512d y = _mm512_fmadd_pd(c->c2, r, c->one);
    y = _mm512_fmadd_pd(z, r2, y);
    y = _mm512_mul_pd(y, s);
    return _mm512_cvtpd_ps(y);
}

// the lanes with |x| >= 88, infinities and NaN: libm's own result (and errno)
static __attribute__((noinline, cold)) __m512 expf_special(__m512 y, __m512 x, __mmask16 m) {
    float xs[16];
    float ys[16];
    _mm512_storeu_ps(xs, x);
    _mm512_storeu_ps(ys, y);
    for (int l = 0; l < 16; l++) {
        if (m & (1u << l)) {
            ys[l] = expf(xs[l]);
        }
    }
    return _mm512_loadu_ps(ys);
}

static inline __m512 v_expf(const struct expf_consts * c, __m512 x) {
    const __m256 lo = expf8(c, _mm512_castps512_ps256(x));
    const __m256 hi = expf8(c, _mm512_extractf32x8_ps(x, 1));
    const __m512 y  = _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
    const __m512i ax = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
    __mmask16 sp = _mm512_cmpge_epu32_mask(ax, _mm512_set1_epi32((int) GGML_EXPF_SPECIAL_ABS));
    if (sp) {
        // -inf gives +0 without a libm call (flash attention's first exp of each row is expf(-inf))
        const __mmask16 ninf = _mm512_cmpeq_epi32_mask(_mm512_castps_si512(x), _mm512_set1_epi32((int) 0xff800000u));
        sp &= (__mmask16) ~ninf;
        const __m512 y0 = _mm512_mask_mov_ps(y, ninf, _mm512_setzero_ps());
        return sp ? expf_special(y0, x, sp) : y0;
    }
    return y;
}

static inline __m512 v_neg(__m512 x) {
    return _mm512_xor_ps(x, _mm512_set1_ps(-0.0f));
}

static inline __mmask16 tail_mask(int n) {
    return (__mmask16) ((1u << n) - 1u);
}

// one loop shape for every kernel: F(x, g) maps 16 lanes; g is loaded only by the gated kernels (HAS_G)
#define EXPF_LOOP(F, HAS_G)                                                                \
    const struct expf_consts c = expf_consts_load();                                     \
    int i = 0;                                                                             \
    for (; i + 16 <= n; i += 16) {                                                         \
        const __m512 xv = _mm512_loadu_ps(x + i);                                          \
        const __m512 gv = HAS_G ? _mm512_loadu_ps(g + i) : xv;                             \
        _mm512_storeu_ps(o + i, F(&c, xv, gv));                                            \
    }                                                                                      \
    if (i < n) {                                                                           \
        const __mmask16 m = tail_mask(n - i);                                              \
        const __m512 xv = _mm512_maskz_loadu_ps(m, x + i);                                 \
        const __m512 gv = HAS_G ? _mm512_maskz_loadu_ps(m, g + i) : xv;                    \
        _mm512_mask_storeu_ps(o + i, m, F(&c, xv, gv));                                    \
    }

// expf(x)
static inline __m512 f_exp(const struct expf_consts * c, __m512 x, __m512 g) {
    (void) g;
    return v_expf(c, x);
}

// x / (1 + expf(-x))
static inline __m512 f_silu(const struct expf_consts * c, __m512 x, __m512 g) {
    (void) g;
    return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), v_expf(c, v_neg(x))));
}

// 1 / (1 + expf(-x))
static inline __m512 f_sigmoid(const struct expf_consts * c, __m512 x, __m512 g) {
    (void) g;
    const __m512 one = _mm512_set1_ps(1.0f);
    return _mm512_div_ps(one, _mm512_add_ps(one, v_expf(c, v_neg(x))));
}

// x * (1 / (1 + expf(-1.702 * x)))
static inline __m512 f_gelu_quick(const struct expf_consts * c, __m512 x, __m512 g) {
    (void) g;
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 e   = v_expf(c, _mm512_mul_ps(_mm512_set1_ps(-1.702f), x));
    return _mm512_mul_ps(x, _mm512_div_ps(one, _mm512_add_ps(one, e)));
}

static inline __m512 f_swiglu(const struct expf_consts * c, __m512 x, __m512 g) {
    return _mm512_mul_ps(f_silu(c, x, g), g);
}

static inline __m512 f_geglu_quick(const struct expf_consts * c, __m512 x, __m512 g) {
    return _mm512_mul_ps(f_gelu_quick(c, x, g), g);
}

static void exp_f32(int n, float * o, const float * x) {
    const float * g = x; // unread
    EXPF_LOOP(f_exp, 0)
}

static void silu_f32(int n, float * o, const float * x) {
    const float * g = x; // unread
    EXPF_LOOP(f_silu, 0)
}

static void sigmoid_f32(int n, float * o, const float * x) {
    const float * g = x; // unread
    EXPF_LOOP(f_sigmoid, 0)
}

static void gelu_quick_f32(int n, float * o, const float * x) {
    const float * g = x; // unread
    EXPF_LOOP(f_gelu_quick, 0)
}

static void swiglu_f32(int n, float * o, const float * x, const float * g) {
    EXPF_LOOP(f_swiglu, 1)
}

static void geglu_quick_f32(int n, float * o, const float * x, const float * g) {
    EXPF_LOOP(f_geglu_quick, 1)
}

void ggml_cpu_expf_kernels_avx512(struct ggml_cpu_expf_kernels * k) {
    k->exp         = exp_f32;
    k->silu        = silu_f32;
    k->sigmoid     = sigmoid_f32;
    k->gelu_quick  = gelu_quick_f32;
    k->swiglu      = swiglu_f32;
    k->geglu_quick = geglu_quick_f32;
}
