// ggml_get_type_traits_cpu: llama.cpp's public view of the CPU kernels (ggml-cpu.h), built from our
// per-ISA kernel tables (ggml-cpu-kernels.h). Our vec_dot takes one row pair and no strides, so each type
// gets a small adapter with llama.cpp's ggml_vec_dot_t signature that loops over the nrc x nrc block.
#include "ggml-cpu.h"
#include "ggml-cpu-kernels.h"

#include <pthread.h>
#include <stdint.h>

// dot products of the nrc x rows with the nrc y rows, laid out as llama.cpp's kernels do: s[j*bs + i] = x_i . y_j
static void vec_dot_block(enum ggml_type type, int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x,
                          size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc) {
    const ggml_cpu_vec_dot_t dot = ggml_cpu_get_kernels(type)->vec_dot;
    GGML_ASSERT(dot != NULL && nrc >= 1);
    for (int j = 0; j < nrc; j++) {
        for (int i = 0; i < nrc; i++) {
            dot(n, s + (size_t) j * bs + i, (const char *) x + (size_t) i * bx, (const char *) y + (size_t) j * by);
        }
    }
}

#define VEC_DOT_ADAPTER(T)                                                                                     \
    static void vec_dot_##T(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, \
                            const void * GGML_RESTRICT y, size_t by, int nrc) {                                \
        vec_dot_block(GGML_TYPE_##T, n, s, bs, x, bx, y, by, nrc);                                             \
    }

// every type the kernel tables may fill; a type without a kernel keeps vec_dot = NULL in the traits
#define FOR_EACH_TYPE(X)                                                                                       \
    X(F32) X(F16) X(BF16) X(Q4_0) X(Q4_1) X(Q5_0) X(Q5_1) X(Q8_0) X(Q8_1) X(Q2_K) X(Q3_K) X(Q4_K) X(Q5_K)       \
    X(Q6_K) X(Q8_K) X(IQ2_XXS) X(IQ2_XS) X(IQ3_XXS) X(IQ1_S) X(IQ4_NL) X(IQ3_S) X(IQ2_S) X(IQ4_XS) X(IQ1_M)    \
    X(TQ1_0) X(TQ2_0) X(MXFP4)

FOR_EACH_TYPE(VEC_DOT_ADAPTER)

static struct ggml_type_traits_cpu g_traits[GGML_TYPE_COUNT];
static pthread_once_t              g_traits_once = PTHREAD_ONCE_INIT;

static void set_traits(enum ggml_type type, ggml_vec_dot_t adapter) {
    const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(type);
    struct ggml_type_traits_cpu * t = &g_traits[type];
    t->from_float = k->from_float;
    if (k->vec_dot != NULL && k->vec_dot_type != GGML_TYPE_COUNT) {
        t->vec_dot      = adapter;
        t->vec_dot_type = k->vec_dot_type;
        t->nrows        = 1;
    }
}

static void init_traits(void) {
    // types without kernels stay zeroed, as in llama.cpp: vec_dot NULL, vec_dot_type F32, nrows 0
#define SET_TRAITS(T) set_traits(GGML_TYPE_##T, vec_dot_##T);
    FOR_EACH_TYPE(SET_TRAITS)
#undef SET_TRAITS
}

const struct ggml_type_traits_cpu * ggml_get_type_traits_cpu(enum ggml_type type) {
    GGML_ASSERT((int) type >= 0 && type < GGML_TYPE_COUNT);
    pthread_once(&g_traits_once, init_traits);
    return &g_traits[type];
}
