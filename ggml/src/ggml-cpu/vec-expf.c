// The kernel table of vec-expf.h per ISA, chosen once, and the entry points the ops call.

#include "vec-expf.h"
#include "ggml-impl.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

static struct ggml_cpu_expf_kernels g_expf_tables[3];
static pthread_once_t               g_expf_once = PTHREAD_ONCE_INIT;

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

// The vector paths implement glibc's expf algorithm; a libm with another one (older glibc, musl) would make
// them disagree with the scalar expressions. A sample over the whole finite range, the thresholds and a few
// specials is cheap (a few microseconds) and catches that; the exhaustive check is tests/test-vec-expf.c.
static bool expf_matches_libm(const struct ggml_cpu_expf_kernels * k) {
    enum { N = 2048 };
    static const float edge[] = { 0.0f, -0.0f, 1.0f, -1.0f, 88.0f, -88.0f, 0x1.62e42ep6f, 0x1.62e430p6f,
                                  -0x1.9d1d9ep6f, -0x1.9d1da0p6f, -0x1.9fe368p6f, -0x1.9fe36ap6f, 1e-30f, -1e-30f,
                                  0x1p-149f, INFINITY, -INFINITY, NAN };
    float x[N];
    float y[N];
    uint32_t s = 0x9e3779b9u;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        // bit patterns of |x| below 128 (exponent < 7), both signs: every path through the polynomial
        const uint32_t u = (s & 0x80000000u) | ((s >> 1) % 0x43000000u);
        memcpy(&x[i], &u, sizeof(u));
    }
    memcpy(x, edge, sizeof(edge));
    k->exp(N, y, x);
    for (int i = 0; i < N; i++) {
        const float e = expf(x[i]);
        if (isnan(e) ? !isnan(y[i]) : f32_bits(e) != f32_bits(y[i])) {
            return false;
        }
    }
    return true;
}

static void expf_tables_init(void) {
    ggml_cpu_expf_kernels_scalar(&g_expf_tables[GGML_CPU_ISA_SCALAR]);
    g_expf_tables[GGML_CPU_ISA_AVX2]   = g_expf_tables[GGML_CPU_ISA_SCALAR];
    g_expf_tables[GGML_CPU_ISA_AVX512] = g_expf_tables[GGML_CPU_ISA_SCALAR];
#if defined(__x86_64__) || defined(__i386__)
    if (ggml_cpu_isa_supported(GGML_CPU_ISA_AVX2)) {
        ggml_cpu_expf_kernels_avx2(&g_expf_tables[GGML_CPU_ISA_AVX2]);
    }
    if (ggml_cpu_isa_supported(GGML_CPU_ISA_AVX512)) {
        ggml_cpu_expf_kernels_avx512(&g_expf_tables[GGML_CPU_ISA_AVX512]);
    }
    for (int isa = GGML_CPU_ISA_AVX2; isa <= GGML_CPU_ISA_AVX512; isa++) {
        if (ggml_cpu_isa_supported((enum ggml_cpu_isa) isa) && !expf_matches_libm(&g_expf_tables[isa])) {
            GGML_LOG_WARN("%s: the %s expf differs from this libm's expf; using the scalar one\n", __func__,
                          ggml_cpu_isa_name((enum ggml_cpu_isa) isa));
            g_expf_tables[isa] = g_expf_tables[GGML_CPU_ISA_SCALAR];
        }
    }
#endif
}

const struct ggml_cpu_expf_kernels * ggml_cpu_expf_kernels_get(void) {
    pthread_once(&g_expf_once, expf_tables_init);
    return &g_expf_tables[ggml_cpu_isa_active()];
}

const struct ggml_cpu_expf_kernels * ggml_cpu_expf_kernels_isa(enum ggml_cpu_isa isa) {
    pthread_once(&g_expf_once, expf_tables_init);
    if (!ggml_cpu_isa_supported(isa)) {
        isa = GGML_CPU_ISA_SCALAR;
    }
    return &g_expf_tables[isa];
}

void ggml_cpu_vec_expf(int n, float * y, const float * x) {
    ggml_cpu_expf_kernels_get()->exp(n, y, x);
}

void ggml_cpu_vec_silu(int n, float * y, const float * x) {
    ggml_cpu_expf_kernels_get()->silu(n, y, x);
}

void ggml_cpu_vec_sigmoid(int n, float * y, const float * x) {
    ggml_cpu_expf_kernels_get()->sigmoid(n, y, x);
}

void ggml_cpu_vec_gelu_quick(int n, float * y, const float * x) {
    ggml_cpu_expf_kernels_get()->gelu_quick(n, y, x);
}

void ggml_cpu_vec_swiglu(int n, float * o, const float * x, const float * g) {
    ggml_cpu_expf_kernels_get()->swiglu(n, o, x, g);
}

void ggml_cpu_vec_geglu_quick(int n, float * o, const float * x, const float * g) {
    ggml_cpu_expf_kernels_get()->geglu_quick(n, o, x, g);
}
