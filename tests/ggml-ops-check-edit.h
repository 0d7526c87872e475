// Helpers of the op tests (test-ggml-ops-edit.c, test-ggml-ops-recurrent.c): random tensors, strided element
// access, computing one node on the CPU with a given thread count, and comparing against a double-precision
// reference laid out in row-major order of the result's shape.
#pragma once

#include "harness.h"

#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t oc_rng = 0x9E3779B97F4A7C15ull;

static inline float oc_uniform(float lo, float hi) {
    const double u = (double) (th_xorshift64star(&oc_rng) >> 11) / 9007199254740992.0;
    return lo + (float) u * (hi - lo);
}

static inline struct ggml_context * oc_ctx(size_t mb) {
    struct ggml_init_params ip = { .mem_size = mb << 20, .mem_buffer = NULL, .no_alloc = false };
    return ggml_init(ip);
}

static inline void * oc_at(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

// the element of an F32 / F16 / I32 tensor as stored (F16 read back exactly)
static inline double oc_get(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const void * p = oc_at(t, i0, i1, i2, i3);
    switch (t->type) {
        case GGML_TYPE_F32: return *(const float *) p;
        case GGML_TYPE_F16: return ggml_fp16_to_fp32(*(const ggml_fp16_t *) p);
        case GGML_TYPE_I32: return *(const int32_t *) p;
        default:            abort();
    }
}

static inline void oc_set(struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    void * p = oc_at(t, i0, i1, i2, i3);
    switch (t->type) {
        case GGML_TYPE_F32: *(float *) p = v; break;
        case GGML_TYPE_F16: *(ggml_fp16_t *) p = ggml_fp32_to_fp16(v); break;
        case GGML_TYPE_I32: *(int32_t *) p = (int32_t) v; break;
        default:            abort();
    }
}

// fills every element of t (any strides) with uniform values in [lo, hi)
static inline void oc_fill(struct ggml_tensor * t, float lo, float hi) {
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++)
                    oc_set(t, i0, i1, i2, i3, oc_uniform(lo, hi));
}

static inline struct ggml_tensor * oc_rand(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                           int64_t ne2, int64_t ne3, float lo, float hi) {
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, type, ne0, ne1, ne2, ne3);
    oc_fill(t, lo, hi);
    return t;
}

// a random non-contiguous view of shape [ne0, ne1, ne2, ne3]: the transpose (dims 0 and 1 swapped) of a fresh
// tensor [ne1, ne0, ne2, ne3]
static inline struct ggml_tensor * oc_rand_transposed(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                                      int64_t ne2, int64_t ne3, float lo, float hi) {
    struct ggml_tensor * base = oc_rand(ctx, type, ne1, ne0, ne2, ne3, lo, hi);
    return ggml_transpose(ctx, base);
}

static inline enum ggml_status oc_compute(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, out);
    return ggml_graph_compute_with_ctx(ctx, g, nth);
}

static inline int64_t oc_n(const struct ggml_tensor * t) {
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}

// |out - ref| <= tol * (1 + |ref|) for every element; ref is row-major in out's shape. One check per call.
static inline void oc_check_close(const char * what, int nth, const struct ggml_tensor * out, const double * ref, double tol) {
    double max_err = 0.0;
    int64_t bad = -1;
    int64_t idx = 0;
    for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < out->ne[0]; i0++, idx++) {
                    const double o = oc_get(out, i0, i1, i2, i3);
                    const double err = fabs(o - ref[idx]) / (1.0 + fabs(ref[idx]));
                    if (!(err <= tol) && bad < 0) {
                        bad = idx;
                    }
                    if (err > max_err || err != err) {
                        max_err = err;
                    }
                }
    if (bad >= 0) {
        fprintf(stderr, "  %s (threads %d): element %lld differs (ref %g), max rel err %g\n", what, nth,
                (long long) bad, ref[bad], max_err);
    }
    TH_CHECK(bad < 0, "%s (threads %d)", what, nth);
}

static inline double * oc_ref(const struct ggml_tensor * out) {
    return (double *) calloc((size_t) oc_n(out), sizeof(double));
}
