// Helpers for the op tests of tests/test-ggml-ops-*.c: random (optionally non-contiguous) input tensors,
// element access through strides in double, graph evaluation with a given thread count, and comparison of a
// result against a reference computed in double by the test itself.
#pragma once

#include "harness.h"

#include "ggml.h"
#include "ggml-cpu.h"

static uint64_t oc_rng = 0x9e3779b97f4a7c15ull;

static inline float oc_uniform(void) { // [-1, 1)
    return (float) ((double) (th_xorshift64star(&oc_rng) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static inline struct ggml_context * oc_ctx(void) {
    struct ggml_init_params p = { 64u * 1024 * 1024, NULL, false };
    return ggml_init(p);
}

static inline double oc_get(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const char * p = (const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
    switch (t->type) {
        case GGML_TYPE_F32: return *(const float *) p;
        case GGML_TYPE_F16: return ggml_fp16_to_fp32(*(const ggml_fp16_t *) p);
        default: abort();
    }
}

static inline void oc_set(struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    char * p = (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
    switch (t->type) {
        case GGML_TYPE_F32: *(float *) p = v; break;
        case GGML_TYPE_F16: *(ggml_fp16_t *) p = ggml_fp32_to_fp16(v); break;
        default: abort();
    }
}

static inline void oc_fill(struct ggml_tensor * t) {
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++) oc_set(t, i0, i1, i2, i3, oc_uniform());
}

// a random tensor; non_contig: a view into a wider buffer (rows padded by 3 elements, offset by 1), so every
// dimension above 0 has a stride the op cannot assume
static inline struct ggml_tensor * oc_rand(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                           int64_t ne2, int64_t ne3, bool non_contig) {
    if (!non_contig) {
        struct ggml_tensor * t = ggml_new_tensor_4d(ctx, type, ne0, ne1, ne2, ne3);
        oc_fill(t);
        return t;
    }
    struct ggml_tensor * big = ggml_new_tensor_4d(ctx, type, ne0 + 3, ne1, ne2, ne3);
    struct ggml_tensor * t = ggml_view_4d(ctx, big, ne0, ne1, ne2, ne3, big->nb[1], big->nb[2], big->nb[3], big->nb[0]);
    oc_fill(t);
    return t;
}

static inline void oc_compute(struct ggml_context * ctx, struct ggml_tensor * out, int n_threads) {
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    const enum ggml_status st = ggml_graph_compute_with_ctx(ctx, gf, n_threads);
    TH_EXPECT(st == GGML_STATUS_SUCCESS, "graph compute failed (%d)", (int) st);
}

// ref: expected values in out's logical order (i0 fastest); |out - ref| <= atol + rtol*|ref|
static inline void oc_compare(const char * what, int n_threads, const struct ggml_tensor * out, const double * ref,
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
                    worst = e > worst ? e : worst;
                }
    TH_CHECK(bad == 0, "%s (%d threads): %lld of %lld values off, max abs err %.3g", what, n_threads, (long long) bad,
             (long long) idx, worst);
}

// compute out with 1 and 2 threads and compare both with ref
static inline void oc_run_check(struct ggml_context * ctx, const char * what, struct ggml_tensor * out, const double * ref,
                                double atol, double rtol) {
    for (int nth = 1; nth <= 2; nth++) {
        oc_compute(ctx, out, nth);
        oc_compare(what, nth, out, ref, atol, rtol);
    }
}

static inline double * oc_alloc_ref(const struct ggml_tensor * out) {
    return (double *) calloc((size_t) ggml_nelements(out), sizeof(double));
}

static inline double oc_round_f16(double v) { return ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) v)); }
