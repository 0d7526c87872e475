// Helpers for the op tests of tests/test-ggml-ops-*.c (and test-ggml-grad.c): random tensors (contiguous or
// laid out with strides the op cannot assume), element access through strides in double, graph evaluation with
// a given thread count, and comparison of a result against a reference computed in double by the test itself.
#pragma once

#include "harness.h"

#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t oc_rng = 0x9e3779b97f4a7c15ull;

// uniform in [lo, hi), computed in double so the stream is the same on every platform
static inline float oc_uniform(float lo, float hi) {
    const double u = (double) (th_xorshift64star(&oc_rng) >> 11) / 9007199254740992.0;
    return (float) (lo + u * ((double) hi - lo));
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

// a fresh contiguous tensor with uniform values in [lo, hi)
static inline struct ggml_tensor * oc_rand(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                           int64_t ne2, int64_t ne3, float lo, float hi) {
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, type, ne0, ne1, ne2, ne3);
    oc_fill(t, lo, hi);
    return t;
}

// a random non-contiguous view: rows of a wider buffer (padded by 3 elements, offset by 1), so every dimension
// above 0 has a stride the op cannot assume while dimension 0 stays packed
static inline struct ggml_tensor * oc_rand_padded(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                                  int64_t ne2, int64_t ne3, float lo, float hi) {
    struct ggml_tensor * big = ggml_new_tensor_4d(ctx, type, ne0 + 3, ne1, ne2, ne3);
    struct ggml_tensor * t = ggml_view_4d(ctx, big, ne0, ne1, ne2, ne3, big->nb[1], big->nb[2], big->nb[3], big->nb[0]);
    oc_fill(t, lo, hi);
    return t;
}

// a random non-contiguous view of shape [ne0, ne1, ne2, ne3]: the transpose (dims 0 and 1 swapped) of a fresh
// tensor [ne1, ne0, ne2, ne3], so even dimension 0 is strided
static inline struct ggml_tensor * oc_rand_transposed(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                                      int64_t ne2, int64_t ne3, float lo, float hi) {
    struct ggml_tensor * base = oc_rand(ctx, type, ne1, ne0, ne2, ne3, lo, hi);
    return ggml_transpose(ctx, base);
}

// computes the graph of out on the CPU with nth threads; the caller checks the status (some tests expect FAILED)
static inline enum ggml_status oc_compute(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, out);
    return ggml_graph_compute_with_ctx(ctx, g, nth);
}

// ref: expected values in out's logical order (i0 fastest); every element must satisfy
// |out - ref| <= atol + rtol*|ref| (NaN never does). One counted check per call.
static inline void oc_compare(const char * what, int nth, const struct ggml_tensor * out, const double * ref,
                              double atol, double rtol) {
    int64_t idx = 0, bad = 0;
    double worst = 0.0;
    for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < out->ne[0]; i0++, idx++) {
                    const double v = oc_get(out, i0, i1, i2, i3);
                    const double e = fabs(v - ref[idx]);
                    if (!(e <= atol + rtol * fabs(ref[idx]))) {
                        if (bad++ == 0) {
                            fprintf(stderr, "  %s: first mismatch at [%lld,%lld,%lld,%lld]: got %.7g want %.7g\n", what,
                                    (long long) i0, (long long) i1, (long long) i2, (long long) i3, v, ref[idx]);
                        }
                    }
                    if (e > worst || e != e) {
                        worst = e;
                    }
                }
    TH_CHECK(bad == 0, "%s (%d threads): %lld of %lld values off, max abs err %.3g", what, nth, (long long) bad,
             (long long) idx, worst);
}

// computes out with 1 and 2 threads and compares both with ref
static inline void oc_run_check(struct ggml_context * ctx, const char * what, struct ggml_tensor * out, const double * ref,
                                double atol, double rtol) {
    for (int nth = 1; nth <= 2; nth++) {
        const enum ggml_status st = oc_compute(ctx, out, nth);
        TH_CHECK(st == GGML_STATUS_SUCCESS, "%s: graph compute failed (%d)", what, (int) st);
        oc_compare(what, nth, out, ref, atol, rtol);
    }
}

// a zeroed double buffer with one slot per element of out (free() it)
static inline double * oc_alloc_ref(const struct ggml_tensor * out) {
    return (double *) calloc((size_t) ggml_nelements(out), sizeof(double));
}

// every element of t (any strides) as doubles in logical order, i0 fastest (free() it)
static inline double * oc_read(const struct ggml_tensor * t) {
    double * out = oc_alloc_ref(t);
    int64_t idx = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                    out[idx++] = oc_get(t, i0, i1, i2, i3);
                }
    return out;
}

static inline double oc_round_f16(double v) { return ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) v)); }
