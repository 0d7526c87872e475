// test-backend-ops: every CPU op against an independent double-precision reference computed here.
//
// Each case builds the op on random inputs (contiguous, permuted/viewed, broadcast, odd sizes), computes it
// with 1..4 threads (disposable pools and a persistent pool), and compares with the reference by normalized
// mean squared error, NMSE = sum (out - ref)^2 / sum ref^2, against a per-op / per-type limit.
// Quantized weights enter the reference through their dequantized values; activations converted by the
// matmul to 8-bit formats give the 1e-4 class limits. Lookups and copies must be exact.
//
// `test-backend-ops perf` prints mul_mat throughput (GFLOP/s, GB/s) per weight type; it asserts nothing.
// The kernel_checks of ../shared/reference/synthetic (llama.cpp mat-vec results) are checked too.

#include "harness.h"

#include "ggml.h"
#include "ggml-cpu.h"
#include "gguf.h"
#include "ggml-cpu/ggml-cpu-kernels.h"
#include "ggml-cpu/ops-attn.h"
#include "ggml-cpu/repack.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- random numbers --------------------------------------------------------------------------------------

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static void rng_seed(uint64_t s) { g_rng = s * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull; }

static uint64_t rng_next(void) {
    return th_xorshift64(&g_rng);
}

static float rng_uniform(float lo, float hi) {
    return lo + (hi - lo) * (float) ((double) (rng_next() >> 11) / 9007199254740992.0);
}

// ---- tensor helpers --------------------------------------------------------------------------------------

static struct ggml_context * new_ctx(size_t mb) {
    struct ggml_init_params p = { mb * 1024 * 1024, NULL, false };
    return ggml_init(p);
}

static int64_t nel(const struct ggml_tensor * t) { return ggml_nelements(t); }

static char * eptr(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

// fills a contiguous tensor with uniform values in [lo, hi) (quantized: quantized with the reference quantizer)
static void fill(struct ggml_tensor * t, float lo, float hi) {
    const int64_t n = nel(t);
    if (t->type == GGML_TYPE_I32) {
        for (int64_t i = 0; i < n; i++) {
            ((int32_t *) t->data)[i] = (int32_t) rng_uniform(lo, hi);
        }
        return;
    }
    float * buf = malloc(sizeof(float) * (size_t) n);
    for (int64_t i = 0; i < n; i++) {
        buf[i] = rng_uniform(lo, hi);
    }
    if (t->type == GGML_TYPE_F32) {
        memcpy(t->data, buf, sizeof(float) * (size_t) n);
    } else {
        const int64_t nrow = n / t->ne[0];
        const size_t rs = ggml_row_size(t->type, t->ne[0]);
        for (int64_t r = 0; r < nrow; r++) {
            ggml_get_type_traits(t->type)->from_float_ref(buf + r * t->ne[0], (char *) t->data + r * rs, t->ne[0]);
        }
    }
    free(buf);
}

static double elem_d(const struct ggml_tensor * t, const char * p) {
    switch (t->type) {
        case GGML_TYPE_F32:  return *(const float *) p;
        case GGML_TYPE_F16:  return ggml_fp16_to_fp32(*(const ggml_fp16_t *) p);
        case GGML_TYPE_BF16: return ggml_bf16_to_fp32(*(const ggml_bf16_t *) p);
        case GGML_TYPE_I32:  return *(const int32_t *) p;
        case GGML_TYPE_I64:  return (double) *(const int64_t *) p;
        default:             return NAN;
    }
}

// the tensor's values in logical order (index i0 + ne0*(i1 + ne1*(i2 + ne2*i3))), any layout and type
static double * to_double(const struct ggml_tensor * t) {
    const int64_t n = nel(t);
    double * out = malloc(sizeof(double) * (size_t) (n > 0 ? n : 1));
    float * row = malloc(sizeof(float) * (size_t) (t->ne[0] > 0 ? t->ne[0] : 1));
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                if (ggml_is_quantized(t->type)) {
                    ggml_get_type_traits(t->type)->to_float(eptr(t, 0, i1, i2, i3), row, t->ne[0]);
                    for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                        out[k++] = row[i0];
                    }
                } else {
                    for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                        out[k++] = elem_d(t, eptr(t, i0, i1, i2, i3));
                    }
                }
            }
        }
    }
    free(row);
    return out;
}

#define IDX(t, i0, i1, i2, i3) ((i0) + (t)->ne[0] * ((i1) + (t)->ne[1] * ((i2) + (t)->ne[2] * (i3))))

static double nmse(const double * out, const double * ref, int64_t n) {
    double err = 0.0, norm = 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(out[i]) != isnan(ref[i]) || (isinf(ref[i]) && out[i] != ref[i])) {
            return INFINITY;
        }
        if (isinf(ref[i]) || isnan(ref[i])) {
            continue;
        }
        err  += (out[i] - ref[i]) * (out[i] - ref[i]);
        norm += ref[i] * ref[i];
    }
    if (norm == 0.0) {
        return err;
    }
    return err / norm;
}

static struct ggml_threadpool * g_pool = NULL; // persistent pool for the 4-thread runs

// computes out (graph built from it); NULL on failure. Returns out's values as doubles.
static double * run(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    struct ggml_threadpool * tp = nth == 4 ? g_pool : NULL;
    struct ggml_cplan plan = ggml_graph_plan(gf, nth, tp);
    void * work = plan.work_size ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    const enum ggml_status st = ggml_graph_compute(gf, &plan);
    free(work);
    if (st != GGML_STATUS_SUCCESS) {
        return NULL;
    }
    return to_double(out);
}

static void check_nmse(const char * what, struct ggml_tensor * out, const double * got, const double * ref,
                       double limit, int nth) {
    if (got == NULL) {
        TH_CHECK(false, "%s: compute failed (nth=%d)", what, nth);
        return;
    }
    const double e = nmse(got, ref, nel(out));
    TH_CHECK(e <= limit, "%s [%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "] nth=%d: nmse %.3g > %.3g", what,
             out->ne[0], out->ne[1], out->ne[2], out->ne[3], nth, e, limit);
}

static const int g_threads[] = { 1, 2, 3, 4 };
#define N_THREAD_CASES 4

// a tensor of shape ne, optionally stored permuted (non-contiguous): allocated as ne with dims 0/1 swapped
// and viewed back through a transpose, so the returned tensor has shape ne but nb[0] > nb[1]
static struct ggml_tensor * new_input(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4],
                                      bool permuted, float lo, float hi) {
    if (!permuted || ggml_is_quantized(type)) {
        struct ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne);
        fill(t, lo, hi);
        return t;
    }
    const int64_t ne2[4] = { ne[1], ne[0], ne[2], ne[3] };
    struct ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne2);
    fill(t, lo, hi);
    return ggml_transpose(ctx, t);
}

// ---- elementwise binary ----------------------------------------------------------------------------------

static double bin_ref(enum ggml_op op, double a, double b) {
    switch (op) {
        case GGML_OP_ADD: return a + b;
        case GGML_OP_SUB: return a - b;
        case GGML_OP_MUL: return a * b;
        case GGML_OP_DIV: return a / b;
        default:          return NAN;
    }
}

static void test_binary(void) {
    const enum ggml_op ops[4] = { GGML_OP_ADD, GGML_OP_SUB, GGML_OP_MUL, GGML_OP_DIV };
    struct { int64_t a[4]; int64_t b[4]; bool perm; bool inplace; } cases[] = {
        { { 7, 5, 3, 2 },   { 7, 5, 3, 2 }, false, false },
        { { 33, 4, 3, 2 },  { 33, 1, 1, 1 }, false, false },
        { { 16, 6, 4, 2 },  { 16, 3, 2, 1 }, false, true },
        { { 257, 3, 1, 1 }, { 1, 3, 1, 1 }, false, false },
        { { 8, 10, 2, 1 },  { 4, 1, 2, 1 }, true, false },
        { { 1, 1, 1, 1 },   { 1, 1, 1, 1 }, false, false },
    };
    for (int o = 0; o < 4; o++) {
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            for (int ti = 0; ti < N_THREAD_CASES; ti++) {
                const int nth = g_threads[ti];
                rng_seed(100 + c);
                struct ggml_context * ctx = new_ctx(16);
                struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F32, cases[c].a, cases[c].perm, -1.0f, 1.0f);
                struct ggml_tensor * b = new_input(ctx, GGML_TYPE_F32, cases[c].b, false, 0.5f, 1.5f);
                double * A = to_double(a);
                double * B = to_double(b);
                struct ggml_tensor * out;
                if (cases[c].inplace) {
                    out = ops[o] == GGML_OP_ADD ? ggml_add_inplace(ctx, a, b) : ops[o] == GGML_OP_SUB ? ggml_sub_inplace(ctx, a, b)
                        : ops[o] == GGML_OP_MUL ? ggml_mul_inplace(ctx, a, b) : ggml_div_inplace(ctx, a, b);
                } else {
                    out = ops[o] == GGML_OP_ADD ? ggml_add(ctx, a, b) : ops[o] == GGML_OP_SUB ? ggml_sub(ctx, a, b)
                        : ops[o] == GGML_OP_MUL ? ggml_mul(ctx, a, b) : ggml_div(ctx, a, b);
                }
                double * ref = malloc(sizeof(double) * (size_t) nel(out));
                for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
                for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
                for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < out->ne[0]; i0++) {
                    ref[IDX(out, i0, i1, i2, i3)] = bin_ref(ops[o], A[IDX(a, i0, i1, i2, i3)],
                        B[IDX(b, i0 % b->ne[0], i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3])]);
                }
                double * got = run(ctx, out, nth);
                char what[64];
                snprintf(what, sizeof(what), "%s%s", ggml_op_name(ops[o]), cases[c].inplace ? "_inplace" : "");
                check_nmse(what, out, got, ref, 1e-12, nth);
                free(A); free(B); free(ref); free(got);
                ggml_free(ctx);
            }
        }
    }
}

// ---- unary-like ------------------------------------------------------------------------------------------

static double half_round(double x) { return ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) x)); }

static double gelu_table_ref(double x) {
    if (x <= -10.0) return 0.0;
    if (x >= 10.0) return x;
    const double h = half_round(x);
    return half_round(0.5 * h * (1.0 + tanh(0.7978845608028654 * h * (1.0 + 0.044715 * h * h))));
}

struct unary_case {
    const char * name;
    struct ggml_tensor * (*fn)(struct ggml_context *, struct ggml_tensor *);
    double (*ref)(double);
    float lo, hi;
    double limit;
};

static double r_silu(double x) { return x / (1.0 + exp(-x)); }
static double r_gelu_quick(double x) { return x / (1.0 + exp(-1.702 * x)); }
static double r_gelu_erf(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
static double r_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_neg(double x) { return -x; }
static double r_sqr(double x) { return x * x; }
static double r_abs(double x) { return fabs(x); }
static double r_elu(double x) { return x > 0 ? x : expm1(x); }
static double r_hardswish(double x) { return x * fmin(1.0, fmax(0.0, (x + 3.0) / 6.0)); }
static double r_softplus(double x) { return log1p(exp(x)); }

static void test_unary(void) {
    const struct unary_case cases[] = {
        { "silu",       ggml_silu,       r_silu,         -6, 6, 1e-12 },
        { "gelu",       ggml_gelu,       gelu_table_ref, -12, 12, 1e-9 },
        { "gelu_quick", ggml_gelu_quick, r_gelu_quick,   -6, 6, 1e-12 },
        { "gelu_erf",   ggml_gelu_erf,   r_gelu_erf,     -6, 6, 1e-12 },
        { "tanh",       ggml_tanh,       tanh,           -4, 4, 1e-12 },
        { "sigmoid",    ggml_sigmoid,    r_sigmoid,      -6, 6, 1e-12 },
        { "exp",        ggml_exp,        exp,            -4, 4, 1e-12 },
        { "log",        ggml_log,        log,            0.1f, 5, 1e-12 },
        { "sqr",        ggml_sqr,        r_sqr,          -3, 3, 1e-12 },
        { "sqrt",       ggml_sqrt,       sqrt,           0, 5, 1e-12 },
        { "relu",       ggml_relu,       r_relu,         -2, 2, 0 },
        { "neg",        ggml_neg,        r_neg,          -2, 2, 0 },
        { "abs",        ggml_abs,        r_abs,          -2, 2, 0 },
        { "elu",        ggml_elu,        r_elu,          -3, 3, 1e-12 },
        { "hardswish",  ggml_hardswish,  r_hardswish,    -5, 5, 1e-12 },
        { "softplus",   ggml_softplus,   r_softplus,     -5, 5, 1e-12 },
        { "sin",        ggml_sin,        sin,            -3, 3, 1e-12 },
        { "cos",        ggml_cos,        cos,            -3, 3, 1e-12 },
    };
    const int64_t shapes[][4] = { { 7, 3, 2, 1 }, { 257, 5, 1, 1 }, { 1, 1, 1, 1 } };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (size_t s = 0; s < 3; s++) {
            for (int ti = 0; ti < N_THREAD_CASES; ti++) {
                const int nth = g_threads[ti];
                rng_seed(7 + s);
                struct ggml_context * ctx = new_ctx(16);
                struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F32, shapes[s], false, cases[c].lo, cases[c].hi);
                double * A = to_double(a);
                struct ggml_tensor * out = cases[c].fn(ctx, a);
                double * ref = malloc(sizeof(double) * (size_t) nel(out));
                for (int64_t i = 0; i < nel(out); i++) {
                    ref[i] = cases[c].ref(A[i]);
                }
                double * got = run(ctx, out, nth);
                check_nmse(cases[c].name, out, got, ref, cases[c].limit, nth);
                free(A); free(ref); free(got);
                ggml_free(ctx);
            }
        }
    }
    // F16 data through the same ops (conversion per element): silu on halves
    {
        rng_seed(5);
        struct ggml_context * ctx = new_ctx(16);
        const int64_t ne[4] = { 64, 3, 1, 1 };
        struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F16, ne, false, -4, 4);
        double * A = to_double(a);
        struct ggml_tensor * out = ggml_silu(ctx, a);
        double * ref = malloc(sizeof(double) * (size_t) nel(out));
        for (int64_t i = 0; i < nel(out); i++) {
            ref[i] = r_silu(A[i]);
        }
        double * got = run(ctx, out, 2);
        check_nmse("silu f16", out, got, ref, 1e-6, 2);
        free(A); free(ref); free(got);
        ggml_free(ctx);
    }
}

// scale, scale_bias, clamp, fill, add1, leaky_relu
static void test_map_ops(void) {
    for (int k = 0; k < 6; k++) {
        for (int ti = 0; ti < N_THREAD_CASES; ti++) {
            const int nth = g_threads[ti];
            rng_seed(300 + k);
            struct ggml_context * ctx = new_ctx(16);
            const int64_t ne[4] = { 33, 7, 2, 1 };
            struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F32, ne, k == 1, -2, 2);
            struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
            ((float *) b->data)[0] = 0.75f;
            double * A = to_double(a);
            struct ggml_tensor * out = NULL;
            const char * name = "";
            double * ref = malloc(sizeof(double) * (size_t) nel(a));
            for (int64_t i = 0; i < nel(a); i++) {
                switch (k) {
                    case 0: ref[i] = A[i] * 0.37; break;
                    case 1: ref[i] = A[i] * 1.5 - 0.25; break;
                    case 2: ref[i] = fmin(fmax(A[i], -0.5), 0.8); break;
                    case 3: ref[i] = 3.25; break;
                    case 4: ref[i] = A[i] + 0.75; break;
                    case 5: ref[i] = A[i] > 0 ? A[i] : 0.1 * A[i]; break;
                }
            }
            switch (k) {
                case 0: out = ggml_scale(ctx, a, 0.37f); name = "scale"; break;
                case 1: out = ggml_scale_bias(ctx, a, 1.5f, -0.25f); name = "scale_bias (permuted src)"; break;
                case 2: out = ggml_clamp(ctx, a, -0.5f, 0.8f); name = "clamp"; break;
                case 3: out = ggml_fill(ctx, a, 3.25f); name = "fill"; break;
                case 4: out = ggml_add1(ctx, a, b); name = "add1"; break;
                case 5: out = ggml_leaky_relu(ctx, a, 0.1f, false); name = "leaky_relu"; break;
            }
            double * got = run(ctx, out, nth);
            check_nmse(name, out, got, ref, 1e-13, nth);
            free(A); free(ref); free(got);
            ggml_free(ctx);
        }
    }
}

// ---- gated linear units ----------------------------------------------------------------------------------

static void test_glu(void) {
    const enum ggml_glu_op ops[] = { GGML_GLU_OP_SWIGLU, GGML_GLU_OP_GEGLU, GGML_GLU_OP_REGLU, GGML_GLU_OP_GEGLU_ERF,
                                     GGML_GLU_OP_GEGLU_QUICK, GGML_GLU_OP_SWIGLU_OAI };
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        for (int mode = 0; mode < 3; mode++) { // 0 fused, 1 fused swapped, 2 split
            if (ops[o] == GGML_GLU_OP_SWIGLU_OAI && mode != 2) {
                continue;
            }
            for (int ti = 0; ti < N_THREAD_CASES; ti++) {
                const int nth = g_threads[ti];
                rng_seed(400 + o);
                struct ggml_context * ctx = new_ctx(16);
                const int64_t nc = 37;
                const int64_t ne_full[4] = { 2 * nc, 5, 2, 1 };
                const int64_t ne_half[4] = { nc, 5, 2, 1 };
                struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F32, mode == 2 ? ne_half : ne_full, false, -5, 5);
                struct ggml_tensor * b = mode == 2 ? new_input(ctx, GGML_TYPE_F32, ne_half, false, -2, 2) : NULL;
                double * A = to_double(a);
                double * B = b ? to_double(b) : NULL;
                struct ggml_tensor * out;
                if (ops[o] == GGML_GLU_OP_SWIGLU_OAI) {
                    out = ggml_swiglu_oai(ctx, a, b, 1.702f, 1.5f);
                } else if (mode == 2) {
                    out = ggml_glu_split(ctx, a, b, ops[o]);
                } else {
                    out = ggml_glu(ctx, a, ops[o], mode == 1);
                }
                double * ref = malloc(sizeof(double) * (size_t) nel(out));
                for (int64_t r = 0; r < ggml_nrows(out); r++) {
                    for (int64_t i = 0; i < nc; i++) {
                        double x, g;
                        if (mode == 2) {
                            x = A[r * nc + i];
                            g = B[r * nc + i];
                        } else {
                            const double * row = A + r * 2 * nc;
                            x = mode == 1 ? row[nc + i] : row[i];
                            g = mode == 1 ? row[i] : row[nc + i];
                        }
                        double v = 0;
                        switch (ops[o]) {
                            case GGML_GLU_OP_SWIGLU:      v = r_silu(x) * g; break;
                            case GGML_GLU_OP_GEGLU:       v = gelu_table_ref(x) * g; break;
                            case GGML_GLU_OP_REGLU:       v = r_relu(x) * g; break;
                            case GGML_GLU_OP_GEGLU_ERF:   v = r_gelu_erf(x) * g; break;
                            case GGML_GLU_OP_GEGLU_QUICK: v = r_gelu_quick(x) * g; break;
                            case GGML_GLU_OP_SWIGLU_OAI: {
                                const double xc = fmin(x, 1.5);
                                const double gc = fmin(fmax(g, -1.5), 1.5);
                                v = xc / (1.0 + exp(-1.702 * xc)) * (gc + 1.0);
                                break;
                            }
                            default: break;
                        }
                        ref[r * nc + i] = v;
                    }
                }
                double * got = run(ctx, out, nth);
                char what[64];
                snprintf(what, sizeof(what), "glu %s mode %d", ggml_glu_op_name(ops[o]), mode);
                check_nmse(what, out, got, ref, ops[o] == GGML_GLU_OP_GEGLU ? 1e-9 : 1e-12, nth);
                free(A); free(B); free(ref); free(got);
                ggml_free(ctx);
            }
        }
    }
}

// ---- norms -----------------------------------------------------------------------------------------------

static void test_norm(void) {
    const int64_t shapes[][4] = { { 32, 5, 3, 1 }, { 257, 2, 1, 1 }, { 1, 4, 1, 1 }, { 4096, 2, 1, 1 } };
    for (int kind = 0; kind < 3; kind++) {
        for (size_t s = 0; s < 4; s++) {
            for (int ti = 0; ti < N_THREAD_CASES; ti++) {
                const int nth = g_threads[ti];
                rng_seed(500 + s);
                struct ggml_context * ctx = new_ctx(16);
                struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F32, shapes[s], false, -3, 3);
                double * A = to_double(a);
                const float eps = 1e-5f;
                struct ggml_tensor * out = kind == 0 ? ggml_norm(ctx, a, eps) : kind == 1 ? ggml_rms_norm(ctx, a, eps)
                                                                                            : ggml_l2_norm(ctx, a, eps);
                const int64_t n = a->ne[0];
                double * ref = malloc(sizeof(double) * (size_t) nel(out));
                for (int64_t r = 0; r < ggml_nrows(a); r++) {
                    const double * x = A + r * n;
                    double mean = 0, ss = 0;
                    for (int64_t i = 0; i < n; i++) mean += x[i];
                    mean /= (double) n;
                    for (int64_t i = 0; i < n; i++) {
                        const double v = kind == 0 ? x[i] - mean : x[i];
                        ss += v * v;
                    }
                    for (int64_t i = 0; i < n; i++) {
                        if (kind == 0) ref[r * n + i] = (x[i] - mean) / sqrt(ss / (double) n + eps);
                        else if (kind == 1) ref[r * n + i] = x[i] / sqrt(ss / (double) n + eps);
                        else ref[r * n + i] = x[i] / fmax(sqrt(ss), eps);
                    }
                }
                double * got = run(ctx, out, nth);
                check_nmse(kind == 0 ? "norm" : kind == 1 ? "rms_norm" : "l2_norm", out, got, ref, 1e-11, nth);
                free(A); free(ref); free(got);
                ggml_free(ctx);
            }
        }
    }
}

// ---- rope ------------------------------------------------------------------------------------------------

struct rope_case {
    int64_t head_dim, n_head, n_tok;
    int n_dims, mode;
    float freq_base, freq_scale, ext_factor, attn_factor;
    bool freq_factors;
    enum ggml_type type;
};

static void test_rope(void) {
    const struct rope_case cases[] = {
        { 32, 4, 7, 32, 0, 10000.0f, 1.0f, 0.0f, 1.0f, false, GGML_TYPE_F32 },
        { 32, 4, 7, 32, GGML_ROPE_TYPE_NEOX, 1000000.0f, 1.0f, 0.0f, 1.0f, false, GGML_TYPE_F32 },
        { 64, 3, 5, 32, 0, 10000.0f, 0.5f, 0.0f, 1.0f, false, GGML_TYPE_F32 },
        { 64, 3, 5, 16, GGML_ROPE_TYPE_NEOX, 10000.0f, 0.25f, 1.0f, 1.0f, true, GGML_TYPE_F32 },
        { 128, 2, 9, 128, GGML_ROPE_TYPE_NEOX, 500000.0f, 0.125f, 1.0f, 0.9f, false, GGML_TYPE_F32 },
        { 32, 4, 3, 32, 0, 10000.0f, 1.0f, 0.0f, 1.0f, false, GGML_TYPE_F16 },
        { 32, 2, 3, 24, GGML_ROPE_TYPE_NEOX, 10000.0f, 1.0f, 0.0f, 1.0f, false, GGML_TYPE_F16 },
    };
    const int n_ctx_orig = 4096;
    const float beta_fast = 32.0f, beta_slow = 1.0f;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const struct rope_case rc = cases[c];
        for (int ti = 0; ti < N_THREAD_CASES; ti++) {
            const int nth = g_threads[ti];
            rng_seed(600 + c);
            struct ggml_context * ctx = new_ctx(16);
            const int64_t ne[4] = { rc.head_dim, rc.n_head, rc.n_tok, 1 };
            struct ggml_tensor * a = new_input(ctx, rc.type, ne, false, -1, 1);
            struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, rc.n_tok);
            for (int64_t i = 0; i < rc.n_tok; i++) {
                ((int32_t *) pos->data)[i] = (int32_t) (i * 37 % 3000);
            }
            struct ggml_tensor * ff = NULL;
            if (rc.freq_factors) {
                ff = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, rc.n_dims / 2);
                fill(ff, 1.0f, 4.0f);
            }
            double * A = to_double(a);
            struct ggml_tensor * out = ggml_rope_ext(ctx, a, pos, ff, rc.n_dims, rc.mode, n_ctx_orig, rc.freq_base,
                                                     rc.freq_scale, rc.ext_factor, rc.attn_factor, beta_fast, beta_slow);
            // reference in double
            const double nd = rc.n_dims;
            const double corr_fast = nd * log(n_ctx_orig / (beta_fast * 2 * M_PI)) / (2 * log((double) rc.freq_base));
            const double corr_slow = nd * log(n_ctx_orig / (beta_slow * 2 * M_PI)) / (2 * log((double) rc.freq_base));
            const double low  = fmax(0.0, floor(corr_fast));
            const double high = fmin(nd - 1, ceil(corr_slow));
            double * ref = malloc(sizeof(double) * (size_t) nel(out));
            memcpy(ref, A, sizeof(double) * (size_t) nel(out));
            for (int64_t t = 0; t < rc.n_tok; t++) {
                const double p = ((int32_t *) pos->data)[t];
                for (int64_t h = 0; h < rc.n_head; h++) {
                    const double * x = A + (t * rc.n_head + h) * rc.head_dim;
                    double * y = ref + (t * rc.n_head + h) * rc.head_dim;
                    for (int k = 0; k < rc.n_dims / 2; k++) {
                        const double f = ff ? ((float *) ff->data)[k] : 1.0;
                        const double extrap = p * pow((double) rc.freq_base, -2.0 * k / nd) / f;
                        const double interp = rc.freq_scale * extrap;
                        double theta = interp, msc = rc.attn_factor;
                        if (rc.ext_factor != 0.0f) {
                            const double yv = (k - low) / fmax(0.001, high - low);
                            const double mix = (1.0 - fmin(1.0, fmax(0.0, yv))) * rc.ext_factor;
                            theta = interp * (1 - mix) + extrap * mix;
                            msc *= 1.0 + 0.1 * log(1.0 / rc.freq_scale);
                        }
                        const int ia = rc.mode & GGML_ROPE_TYPE_NEOX ? k : 2 * k;
                        const int ib = rc.mode & GGML_ROPE_TYPE_NEOX ? k + rc.n_dims / 2 : 2 * k + 1;
                        const double c0 = cos(theta) * msc, s0 = sin(theta) * msc;
                        y[ia] = x[ia] * c0 - x[ib] * s0;
                        y[ib] = x[ia] * s0 + x[ib] * c0;
                    }
                }
            }
            double * got = run(ctx, out, nth);
            char what[96];
            snprintf(what, sizeof(what), "rope %s %s n_dims=%d fs=%g ext=%g ff=%d", rc.mode ? "neox" : "norm",
                     ggml_type_name(rc.type), rc.n_dims, rc.freq_scale, rc.ext_factor, rc.freq_factors);
            check_nmse(what, out, got, ref, rc.type == GGML_TYPE_F16 ? 2e-6 : 1e-9, nth);
            free(A); free(ref); free(got);
            ggml_free(ctx);
        }
    }
}

// ---- softmax ---------------------------------------------------------------------------------------------

static double alibi_ref(double max_bias, int h, int n_head) {
    if (max_bias <= 0) return 1.0;
    const int n2 = 1 << (int) floor(log2((double) n_head));
    const double m0 = pow(2.0, -max_bias / n2);
    const double m1 = pow(2.0, -(max_bias / 2.0) / n2);
    return h < n2 ? pow(m0, h + 1) : pow(m1, 2 * (h - n2) + 1);
}

static void test_soft_max(void) {
    struct { int64_t ne[4]; int mask; enum ggml_type mt; int64_t mh; float scale, max_bias; bool sinks; } cases[] = {
        { { 16, 7, 4, 1 },  0, GGML_TYPE_F32, 1, 1.0f, 0.0f, false },
        { { 33, 5, 4, 1 },  1, GGML_TYPE_F32, 1, 0.125f, 0.0f, false },
        { { 33, 5, 4, 1 },  1, GGML_TYPE_F16, 1, 0.5f, 0.0f, false },
        { { 64, 3, 6, 2 },  1, GGML_TYPE_F16, 2, 0.3f, 8.0f, false },
        { { 257, 2, 3, 1 }, 1, GGML_TYPE_F32, 3, 1.0f, 0.0f, true },
        { { 1, 1, 1, 1 },   0, GGML_TYPE_F32, 1, 2.0f, 0.0f, false },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (int ti = 0; ti < N_THREAD_CASES; ti++) {
            const int nth = g_threads[ti];
            rng_seed(700 + c);
            struct ggml_context * ctx = new_ctx(16);
            struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F32, cases[c].ne, false, -4, 4);
            struct ggml_tensor * mask = NULL;
            if (cases[c].mask) {
                // causal-like mask with padding rows (ne1 larger than the rows of a), broadcast over heads
                const int64_t mne[4] = { a->ne[0], a->ne[1] + 3, cases[c].mh, 1 };
                mask = ggml_new_tensor(ctx, cases[c].mt, 4, mne);
                for (int64_t h = 0; h < mne[2]; h++)
                for (int64_t i1 = 0; i1 < mne[1]; i1++)
                for (int64_t i0 = 0; i0 < mne[0]; i0++) {
                    const float v = (i0 > i1 + 2 && i0 % 3 != 0) ? -INFINITY : rng_uniform(-1, 0);
                    char * p = eptr(mask, i0, i1, h, 0);
                    if (mask->type == GGML_TYPE_F32) *(float *) p = v; else *(ggml_fp16_t *) p = ggml_fp32_to_fp16(v);
                }
            }
            struct ggml_tensor * sinks = NULL;
            if (cases[c].sinks) {
                sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, a->ne[2]);
                fill(sinks, -1, 2);
            }
            double * A = to_double(a);
            double * M = mask ? to_double(mask) : NULL;
            struct ggml_tensor * out = cases[c].mask || cases[c].scale != 1.0f ? ggml_soft_max_ext(ctx, a, mask, cases[c].scale, cases[c].max_bias)
                                                                                : ggml_soft_max(ctx, a);
            if (sinks) {
                ggml_soft_max_add_sinks(out, sinks);
            }
            double * ref = malloc(sizeof(double) * (size_t) nel(out));
            for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
            for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++) {
                const double slope = alibi_ref(cases[c].max_bias, (int) i2, (int) a->ne[2]);
                double mx = -INFINITY;
                double * w = ref + IDX(a, 0, i1, i2, i3);
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
                    double v = A[IDX(a, i0, i1, i2, i3)] * cases[c].scale;
                    if (mask) v += slope * M[IDX(mask, i0, i1, i2 % mask->ne[2], i3 % mask->ne[3])];
                    w[i0] = v;
                    mx = fmax(mx, v);
                }
                const double sk = sinks ? ((float *) sinks->data)[i2] : -INFINITY;
                mx = fmax(mx, sk);
                double sum = sinks ? exp(sk - mx) : 0.0;
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++) { w[i0] = exp(w[i0] - mx); sum += w[i0]; }
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++) w[i0] /= sum;
            }
            double * got = run(ctx, out, nth);
            char what[96];
            snprintf(what, sizeof(what), "soft_max mask=%d(%s) scale=%g max_bias=%g sinks=%d", cases[c].mask,
                     ggml_type_name(cases[c].mt), cases[c].scale, cases[c].max_bias, cases[c].sinks);
            check_nmse(what, out, got, ref, 1e-12, nth);
            free(A); free(M); free(ref); free(got);
            ggml_free(ctx);
        }
    }
    // diag_mask_inf then soft_max (the non-flash KV mask path)
    for (int ti = 0; ti < N_THREAD_CASES; ti++) {
        const int nth = g_threads[ti];
        rng_seed(777);
        struct ggml_context * ctx = new_ctx(16);
        const int64_t ne[4] = { 10, 6, 3, 1 };
        struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F32, ne, false, -2, 2);
        double * A = to_double(a);
        const int n_past = 4;
        struct ggml_tensor * out = ggml_soft_max(ctx, ggml_diag_mask_inf(ctx, a, n_past));
        double * ref = malloc(sizeof(double) * (size_t) nel(out));
        for (int64_t r = 0; r < ggml_nrows(a); r++) {
            const int64_t i1 = r % ne[1];
            double mx = -INFINITY, sum = 0;
            for (int64_t i0 = 0; i0 <= n_past + i1 && i0 < ne[0]; i0++) mx = fmax(mx, A[r * ne[0] + i0]);
            for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                ref[r * ne[0] + i0] = i0 > n_past + i1 ? 0.0 : exp(A[r * ne[0] + i0] - mx);
                sum += ref[r * ne[0] + i0];
            }
            for (int64_t i0 = 0; i0 < ne[0]; i0++) ref[r * ne[0] + i0] /= sum;
        }
        double * got = run(ctx, out, nth);
        check_nmse("diag_mask_inf + soft_max", out, got, ref, 1e-12, nth);
        free(A); free(ref); free(got);
        ggml_free(ctx);
    }
}

// ---- matrix products -------------------------------------------------------------------------------------

static const enum ggml_type g_mm_types[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
    GGML_TYPE_Q8_0, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
    GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS,
};

// NMSE limits of W·x for a weight type, set by the activation format the matmul converts x to
static double mm_limit(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32:  return 1e-9;
        case GGML_TYPE_F16:  return 5e-6;  // x rounded to F16
        case GGML_TYPE_BF16: return 1e-4;  // x rounded to BF16
        default:             return 2e-4;  // x quantized to 8 bits (Q8_0 / Q8_1 / Q8_K)
    }
}

static void test_mul_mat(void) {
    struct { int64_t K, M, N, b2, b3, w2, w3; bool perm; } cases[] = {
        { 256, 16, 1, 1, 1, 1, 1, false },
        { 256, 33, 7, 1, 1, 1, 1, false },
        { 512, 17, 33, 2, 2, 1, 2, false },
        { 256, 8, 5, 3, 1, 3, 1, true },
        { 256, 64, 1, 1, 1, 1, 1, false },
    };
    for (size_t t = 0; t < sizeof(g_mm_types) / sizeof(g_mm_types[0]); t++) {
        const enum ggml_type type = g_mm_types[t];
        if (ggml_cpu_get_kernels(type)->vec_dot == NULL) {
            // every type of issue "Foundation" must multiply on the CPU
            TH_CHECK(false, "mul_mat: no CPU kernel for %s", ggml_type_name(type));
            continue;
        }
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            for (int ti = 0; ti < N_THREAD_CASES; ti++) {
                const int nth = g_threads[ti];
                rng_seed(800 + 31 * t + c);
                struct ggml_context * ctx = new_ctx(64);
                const int64_t wne[4] = { cases[c].K, cases[c].M, cases[c].w2, cases[c].w3 };
                const int64_t xne[4] = { cases[c].K, cases[c].N, cases[c].b2, cases[c].b3 };
                struct ggml_tensor * w = new_input(ctx, type, wne, false, -1, 1);
                struct ggml_tensor * x = new_input(ctx, GGML_TYPE_F32, xne, cases[c].perm, -1, 1);
                double * W = to_double(w);
                double * X = to_double(x);
                struct ggml_tensor * out = ggml_mul_mat(ctx, w, x);
                double * ref = malloc(sizeof(double) * (size_t) nel(out));
                const int64_t r2 = x->ne[2] / w->ne[2], r3 = x->ne[3] / w->ne[3];
                for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
                for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
                for (int64_t j = 0; j < out->ne[1]; j++)
                for (int64_t i = 0; i < out->ne[0]; i++) {
                    double s = 0;
                    for (int64_t k = 0; k < cases[c].K; k++) {
                        s += W[IDX(w, k, i, i2 / r2, i3 / r3)] * X[IDX(x, k, j, i2, i3)];
                    }
                    ref[IDX(out, i, j, i2, i3)] = s;
                }
                double * got = run(ctx, out, nth);
                char what[64];
                snprintf(what, sizeof(what), "mul_mat %s%s", ggml_type_name(type), cases[c].perm ? " (permuted x)" : "");
                check_nmse(what, out, got, ref, mm_limit(type), nth);
                free(W); free(X); free(ref); free(got);
                ggml_free(ctx);
            }
        }
    }
}

static void test_mul_mat_id(void) {
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K };
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        if (ggml_cpu_get_kernels(types[t])->vec_dot == NULL) {
            TH_CHECK(false, "mul_mat_id: no CPU kernel for %s", ggml_type_name(types[t]));
            continue;
        }
        for (int bcast = 0; bcast < 2; bcast++) {
            for (int ti = 0; ti < N_THREAD_CASES; ti++) {
                const int nth = g_threads[ti];
                rng_seed(900 + t);
                struct ggml_context * ctx = new_ctx(64);
                const int64_t K = 256, M = 24, n_as = 4, n_used = 2, n_tok = 5;
                const int64_t ane[4] = { K, M, n_as, 1 };
                const int64_t bne[4] = { K, bcast ? 1 : n_used, n_tok, 1 };
                struct ggml_tensor * as = new_input(ctx, types[t], ane, false, -1, 1);
                struct ggml_tensor * b  = new_input(ctx, GGML_TYPE_F32, bne, false, -1, 1);
                struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, n_tok);
                for (int64_t j = 0; j < n_tok; j++) {
                    const int32_t e0 = (int32_t) (rng_next() % n_as);
                    ((int32_t *) ids->data)[j * n_used + 0] = e0;
                    ((int32_t *) ids->data)[j * n_used + 1] = (e0 + 1 + (int32_t) (rng_next() % (n_as - 1))) % (int32_t) n_as;
                }
                double * AS = to_double(as);
                double * B = to_double(b);
                struct ggml_tensor * out = ggml_mul_mat_id(ctx, as, b, ids);
                double * ref = malloc(sizeof(double) * (size_t) nel(out));
                for (int64_t j = 0; j < n_tok; j++)
                for (int64_t s = 0; s < n_used; s++) {
                    const int32_t e = ((int32_t *) ids->data)[j * n_used + s];
                    for (int64_t i = 0; i < M; i++) {
                        double acc = 0;
                        for (int64_t k = 0; k < K; k++) {
                            acc += AS[IDX(as, k, i, e, 0)] * B[IDX(b, k, s % b->ne[1], j, 0)];
                        }
                        ref[IDX(out, i, s, j, 0)] = acc;
                    }
                }
                double * got = run(ctx, out, nth);
                char what[64];
                snprintf(what, sizeof(what), "mul_mat_id %s%s", ggml_type_name(types[t]), bcast ? " (shared b row)" : "");
                check_nmse(what, out, got, ref, mm_limit(types[t]), nth);
                free(AS); free(B); free(ref); free(got);
                ggml_free(ctx);
            }
        }
    }
}

// ---- flash attention -------------------------------------------------------------------------------------

// The flash-attention kernels of every ISA give the scalar path's bits (ops-attn.h), and the scalar exp
// polynomial is accurate against libm's double exp.
static void test_fa_kernels(void) {
    double max_ulp = 0.0;
    for (float x = -103.0f; x < 88.5f; x += 0.0137f) {
        const double e = ggml_fa_expf_lane(x);
        const double r = exp((double) x);
        const double ulp = ldexp(1.0, ilogb(r) - 23);
        const double u = fabs(e - r) / (ulp > 0x1p-149 ? ulp : 0x1p-149);
        max_ulp = u > max_ulp ? u : max_ulp;
    }
    // the routine claims 1.45 ulp + 0.5 for the final rounding; folding the 1 into the polynomial (the AVX-512
    // form) adds up to another half ulp
    TH_CHECK(max_ulp <= 2.5, "fa exp: max error %.3g ulp > 2.5", max_ulp);
    TH_CHECK(ggml_fa_expf_lane(-INFINITY) == 0.0f && ggml_fa_expf_lane(0.0f) == 1.0f &&
             ggml_fa_expf_lane(-200.0f) == 0.0f && isinf(ggml_fa_expf_lane(200.0f)), "fa exp: special values");

    const struct ggml_cpu_fa_kernels * ref = ggml_cpu_fa_kernels_isa(GGML_CPU_ISA_SCALAR);
    enum { NMAX = 208 };
    float xf[NMAX], yf[NMAX], a[NMAX], b[NMAX];
    ggml_fp16_t xh[NMAX], yh[NMAX], ah[NMAX], bh[NMAX];
    rng_seed(4711);
    for (int i = 0; i < NMAX; i++) {
        xf[i] = rng_uniform(-2.0f, 2.0f);
        yf[i] = rng_uniform(-2.0f, 2.0f);
        xh[i] = ggml_fp32_to_fp16(xf[i]);
        yh[i] = ggml_fp32_to_fp16(yf[i]);
    }
    // the scalar dot against a double sum (independent of the order being emulated)
    {
        double d = 0.0;
        for (int i = 0; i < 200; i++) {
            d += (double) ggml_fp16_to_fp32(xh[i]) * ggml_fp16_to_fp32(yh[i]);
        }
        TH_CHECK(fabs(ref->dot_f16(200, xh, yh) - d) < 1e-4, "fa dot_f16 scalar vs double: %g vs %g",
                 ref->dot_f16(200, xh, yh), d);
    }
    const int ns[] = { 16, 64, 80, 128, 200 };
    for (int isa = GGML_CPU_ISA_AVX2; isa <= GGML_CPU_ISA_AVX512; isa++) {
        if (!ggml_cpu_isa_supported((enum ggml_cpu_isa) isa)) {
            continue;
        }
        const char * name = ggml_cpu_isa_name((enum ggml_cpu_isa) isa);
        const struct ggml_cpu_fa_kernels * k = ggml_cpu_fa_kernels_isa((enum ggml_cpu_isa) isa);
        for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
            const int n = ns[t];
            float r0 = ref->dot_f16(n, xh, yh), r1 = k->dot_f16(n, xh, yh);
            TH_CHECK(memcmp(&r0, &r1, sizeof(float)) == 0, "fa dot_f16 %s n=%d: %.9g vs scalar %.9g", name, n, r1, r0);
            r0 = ref->dot_f32(n, xf, yf);
            r1 = k->dot_f32(n, xf, yf);
            TH_CHECK(memcmp(&r0, &r1, sizeof(float)) == 0, "fa dot_f32 %s n=%d: %.9g vs scalar %.9g", name, n, r1, r0);

            memcpy(ah, yh, sizeof(ah)); memcpy(bh, yh, sizeof(bh));
            ref->mad_f16(n, ah, xh, 0.37f); k->mad_f16(n, bh, xh, 0.37f);
            ref->scale_f16(n, ah, 0.61f); k->scale_f16(n, bh, 0.61f);
            TH_CHECK(memcmp(ah, bh, sizeof(ggml_fp16_t) * (size_t) n) == 0, "fa mad/scale_f16 %s n=%d", name, n);
            memcpy(a, yf, sizeof(a)); memcpy(b, yf, sizeof(b));
            ref->mad_f32(n, a, xf, 0.37f); k->mad_f32(n, b, xf, 0.37f);
            ref->scale_f32(n, a, 0.61f); k->scale_f32(n, b, 0.61f);
            TH_CHECK(memcmp(a, b, sizeof(float) * (size_t) n) == 0, "fa mad/scale_f32 %s n=%d", name, n);
            {
                // the F16 accumulator over a block of V rows: a first row that zeroes it (ms 0), rescales, and
                // rows without one (ms 1)
                enum { NR = 9 };
                const ggml_fp16_t * rows[NR];
                float ms[NR], vs[NR];
                for (int r = 0; r < NR; r++) {
                    rows[r] = r % 2 ? xh : yh;
                    ms[r] = r == 0 ? 0.0f : r % 3 == 1 ? rng_uniform(0.2f, 1.0f) : 1.0f;
                    vs[r] = r % 3 == 1 ? 1.0f : rng_uniform(0.0f, 1.0f);
                }
                memcpy(ah, xh, sizeof(ah)); memcpy(bh, xh, sizeof(bh));
                ref->mad_f16_rows(n, ah, rows, ms, vs, NR);
                k->mad_f16_rows(n, bh, rows, ms, vs, NR);
                TH_CHECK(memcmp(ah, bh, sizeof(ggml_fp16_t) * (size_t) n) == 0, "fa mad_f16_rows %s n=%d", name, n);
                // against the single-step kernels it is defined by
                memcpy(bh, xh, sizeof(bh));
                for (int r = 0; r < NR; r++) {
                    if (ms[r] != 1.0f) k->scale_f16(n, bh, ms[r]);
                    k->mad_f16(n, bh, rows[r], vs[r]);
                }
                TH_CHECK(memcmp(ah, bh, sizeof(ggml_fp16_t) * (size_t) n) == 0, "fa mad_f16_rows %s n=%d vs steps", name, n);
            }
            {
                // heads of a GQA group over one block of rows: each head against the single-head kernels it is
                // defined by (scalar table), with rescales, no-rescale rows and a zeroing first row
                enum { NR = 11, NH = 7 };
                static ggml_fp16_t yh_h[NH][NMAX], ref_h[NH][NMAX];
                const ggml_fp16_t * rows[NR];
                const ggml_fp16_t * qs[NH];
                ggml_fp16_t * ys[NH];
                float ms[NH * NR], vs[NH * NR], dots[NH * NR], ex[NH * NR], ms0[NH * NR], vs0[NH * NR];
                float ms1[NH * NR], vs1[NH * NR], S0[NH], S1[NH];
                bool nm[NH * NR];
                for (int r = 0; r < NR; r++) {
                    rows[r] = r % 3 == 0 ? xh : r % 3 == 1 ? yh : ah;
                }
                for (int h = 0; h < NH; h++) {
                    for (int i = 0; i < n; i++) {
                        yh_h[h][i] = ggml_fp32_to_fp16(rng_uniform(-2.0f, 2.0f));
                    }
                    qs[h] = yh_h[h];
                    for (int r = 0; r < NR; r++) {
                        const int e = h * NR + r;
                        ms[e] = r == 0 ? 0.0f : (r + h) % 3 == 1 ? rng_uniform(0.2f, 1.0f) : 1.0f;
                        vs[e] = (r + h) % 3 == 1 ? 1.0f : rng_uniform(0.0f, 1.0f);
                        ex[e] = rng_uniform(0.0f, 1.0f);
                        nm[e] = (r * 7 + h) % 4 == 0;
                    }
                    S0[h] = S1[h] = rng_uniform(0.5f, 2.0f);
                }
                for (int nh = 1; nh <= NH; nh += 2) {
                    for (int h = 0; h < nh; h++) {
                        memcpy(ref_h[h], yh_h[h], sizeof(ref_h[h]));
                        ref->mad_f16_rows(n, ref_h[h], rows, ms + h * NR, vs + h * NR, NR);
                        ys[h] = yh_h[h];
                    }
                    static ggml_fp16_t got_h[NH][NMAX];
                    for (int h = 0; h < nh; h++) {
                        memcpy(got_h[h], yh_h[h], sizeof(got_h[h]));
                        ys[h] = got_h[h];
                    }
                    k->mad_f16_rows_heads(n, ys, nh, rows, ms, vs, NR, NR);
                    bool same = true;
                    for (int h = 0; h < nh; h++) {
                        same = same && memcmp(got_h[h], ref_h[h], sizeof(ggml_fp16_t) * (size_t) n) == 0;
                    }
                    TH_CHECK(same, "fa mad_f16_rows_heads %s n=%d nh=%d vs mad_f16_rows", name, n, nh);

                    k->dot_f16_heads(n, rows, NR, qs, nh, dots, NR);
                    same = true;
                    for (int h = 0; h < nh; h++) {
                        for (int r = 0; r < NR; r++) {
                            const float want = ref->dot_f16(n, rows[r], qs[h]);
                            same = same && memcmp(&want, &dots[h * NR + r], sizeof(float)) == 0;
                        }
                    }
                    TH_CHECK(same, "fa dot_f16_heads %s n=%d nh=%d vs dot_f16", name, n, nh);

                    float sa[NH], sb[NH];
                    memcpy(sa, S0, sizeof(sa));
                    memcpy(sb, S1, sizeof(sb));
                    ref->softmax_steps_heads(nh, NR, NR, ex, nm, ms0, vs0, sa);
                    k->softmax_steps_heads(nh, NR, NR, ex, nm, ms1, vs1, sb);
                    same = memcmp(sa, sb, sizeof(float) * (size_t) nh) == 0 &&
                           memcmp(ms0, ms1, sizeof(float) * (size_t) (nh * NR)) == 0 &&
                           memcmp(vs0, vs1, sizeof(float) * (size_t) (nh * NR)) == 0;
                    TH_CHECK(same, "fa softmax_steps_heads %s nh=%d", name, nh);
                }
            }
            ref->f16_to_f32(n, a, xh);
            k->f16_to_f32(n, b, xh);
            TH_CHECK(memcmp(a, b, sizeof(float) * (size_t) n) == 0, "fa f16_to_f32 %s n=%d", name, n);

            if (n % 16 == 0) {
                // scores down to far below exp's range (lanes the AVX2 path finishes in scalar), and masked ones
                for (int i = 0; i < n; i++) {
                    a[i] = i % 13 == 5 ? -INFINITY : rng_uniform(-130.0f, 4.0f);
                    b[i] = a[i];
                }
                float m16[NMAX];
                for (int i = 0; i < n; i++) {
                    m16[i] = i % 7 == 3 ? -INFINITY : rng_uniform(-1.0f, 0.0f);
                }
                const float x0 = ref->add_max(n, a, m16), x1 = k->add_max(n, b, m16);
                TH_CHECK(x0 == x1 && memcmp(a, b, sizeof(float) * (size_t) n) == 0, "fa add_max %s n=%d", name, n);
                const double s0 = ref->softmax(n, a, 3.5f), s1 = k->softmax(n, b, 3.5f);
                TH_CHECK(s0 == s1 && memcmp(a, b, sizeof(float) * (size_t) n) == 0, "fa softmax %s n=%d: %.17g vs %.17g",
                         name, n, s1, s0);
            }
        }
        // C[7 x N] += A[7 x 37] * B[37 x N], strided like the tiles
        for (int N = 16; N <= 80; N += 64) {
            float A[7 * 40], B[37 * 80], C0[7 * 96], C1[7 * 96];
            for (int i = 0; i < 7 * 40; i++) A[i] = rng_uniform(-1.0f, 1.0f);
            for (int i = 0; i < 37 * 80; i++) B[i] = rng_uniform(-1.0f, 1.0f);
            for (int i = 0; i < 7 * 96; i++) C0[i] = C1[i] = rng_uniform(-1.0f, 1.0f);
            ref->gemm(C0, 96, A, 40, B, 80, 7, 37, N);
            k->gemm(C1, 96, A, 40, B, 80, 7, 37, N);
            TH_CHECK(memcmp(C0, C1, sizeof(C0)) == 0, "fa gemm %s N=%d", name, N);
        }
        // K tile transposes: a full 64 x 64 tile and a partial one with an odd head size (register blocks plus
        // both edges), rows padded apart; the columns past nkv stay as they were
        for (int f16 = 0; f16 <= 1; f16++) {
            enum { LDT = 64, ROW = 80, DKMAX = 76 };
            static float kf[64 * ROW], kt0[DKMAX * LDT], kt1[DKMAX * LDT];
            static ggml_fp16_t kh[64 * ROW];
            for (int i = 0; i < 64 * ROW; i++) {
                kf[i] = rng_uniform(-3.0f, 3.0f);
                kh[i] = ggml_fp32_to_fp16(kf[i]);
            }
            const int shapes[2][2] = { { 64, 64 }, { 61, 76 } };
            for (int sh = 0; sh < 2; sh++) {
                const int nkv = shapes[sh][0], dk = shapes[sh][1];
                for (int i = 0; i < DKMAX * LDT; i++) kt0[i] = kt1[i] = -7.0f;
                const void * src = f16 ? (const void *) kh : (const void *) kf;
                const size_t nb1 = (f16 ? sizeof(ggml_fp16_t) : sizeof(float)) * ROW;
                ref->pack_kt(kt0, LDT, src, nb1, nkv, dk, f16);
                k->pack_kt(kt1, LDT, src, nb1, nkv, dk, f16);
                bool ok = memcmp(kt0, kt1, sizeof(kt0)) == 0;
                for (int d = 0; d < dk && ok; d++)
                for (int c = 0; c < LDT && ok; c++) {
                    const float want = c >= nkv ? -7.0f : f16 ? ggml_fp16_to_fp32(kh[c * ROW + d]) : kf[c * ROW + d];
                    ok = kt0[d * LDT + c] == want;
                }
                TH_CHECK(ok, "fa pack_kt %s f16=%d nkv=%d dk=%d", name, f16, nkv, dk);
            }
        }
    }
}

static void test_flash_attn(void) {
    const enum ggml_type kv_types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0 };
    struct { int64_t D, n_q, n_kv, n_head, n_head_kv; float max_bias, softcap; bool mask, sinks; } cases[] = {
        { 64, 1, 33, 4, 2, 0.0f, 0.0f, true, false },
        { 64, 7, 40, 8, 2, 0.0f, 0.0f, true, false },
        { 32, 5, 17, 4, 4, 0.0f, 30.0f, true, true },
        { 64, 3, 9, 6, 3, 8.0f, 0.0f, true, false },
        { 32, 2, 12, 2, 1, 0.0f, 0.0f, false, false },
        { 64, 9, 20, 4, 1, 0.0f, 0.0f, true, false },
        // the row path at other head sizes (80: a dot tail after 64), GQA 2..4, odd K/V lengths
        { 80, 5, 45, 4, 1, 8.0f, 0.0f, true, false },
        { 128, 3, 77, 4, 4, 0.0f, 0.0f, false, false },
        // 64+ query rows: the tiled path for F16/F32 K/V (partial K/V tiles, a partial second query tile)
        { 80, 70, 131, 4, 2, 0.0f, 0.0f, true, false },
        { 128, 64, 100, 8, 1, 8.0f, 0.0f, true, false },
        { 64, 66, 70, 2, 2, 0.0f, 30.0f, true, true },
        { 64, 64, 48, 2, 1, 0.0f, 0.0f, false, false },
    };
    for (size_t kt = 0; kt < sizeof(kv_types) / sizeof(kv_types[0]); kt++) {
        const enum ggml_type type = kv_types[kt];
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            if (cases[c].D % ggml_blck_size(type) != 0) {
                continue; // e.g. D=80 has no Q8_0/Q4_0 rows
            }
            double * got_1 = NULL; // the one-thread result: every thread count must give the same bits
            for (int ti = 0; ti < N_THREAD_CASES; ti++) {
                const int nth = g_threads[ti];
                rng_seed(1000 + 13 * kt + c);
                struct ggml_context * ctx = new_ctx(32);
                const int64_t D = cases[c].D;
                const int64_t qne[4] = { D, cases[c].n_q, cases[c].n_head, 1 };
                const int64_t kne[4] = { D, cases[c].n_kv, cases[c].n_head_kv, 1 };
                struct ggml_tensor * q = new_input(ctx, GGML_TYPE_F32, qne, false, -1, 1);
                struct ggml_tensor * k = new_input(ctx, type, kne, false, -1, 1);
                struct ggml_tensor * v = new_input(ctx, type, kne, false, -1, 1);
                struct ggml_tensor * mask = NULL;
                if (cases[c].mask) {
                    // F16 as llama.cpp's graphs make it, F32 in every other case (both paths read both)
                    const enum ggml_type mt = c % 2 == 0 ? GGML_TYPE_F16 : GGML_TYPE_F32;
                    mask = ggml_new_tensor_2d(ctx, mt, cases[c].n_kv, cases[c].n_q + 2);
                    for (int64_t i1 = 0; i1 < mask->ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < mask->ne[0]; i0++) {
                        // causal over the last n_q positions, with a few random biases
                        const bool masked = i0 > cases[c].n_kv - cases[c].n_q + i1;
                        const float mv = masked ? -INFINITY : (i0 % 5 == 0 ? -0.5f : 0.0f);
                        if (mt == GGML_TYPE_F16) {
                            ((ggml_fp16_t *) mask->data)[i1 * mask->ne[0] + i0] = ggml_fp32_to_fp16(mv);
                        } else {
                            ((float *) mask->data)[i1 * mask->ne[0] + i0] = mv;
                        }
                    }
                }
                struct ggml_tensor * sinks = NULL;
                if (cases[c].sinks) {
                    sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, cases[c].n_head);
                    fill(sinks, -1, 1);
                }
                const float scale = 1.0f / sqrtf((float) D);
                struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, mask, scale, cases[c].max_bias, cases[c].softcap);
                ggml_flash_attn_ext_set_prec(out, GGML_PREC_F32);
                if (sinks) {
                    ggml_flash_attn_ext_add_sinks(out, sinks);
                }
                double * Q = to_double(q);
                double * Kd = to_double(k);
                double * Vd = to_double(v);
                double * Md = mask ? to_double(mask) : NULL;
                double * ref = malloc(sizeof(double) * (size_t) nel(out));
                double * s = malloc(sizeof(double) * (size_t) cases[c].n_kv);
                const int64_t gq = cases[c].n_head / cases[c].n_head_kv;
                for (int64_t h = 0; h < cases[c].n_head; h++)
                for (int64_t iq = 0; iq < cases[c].n_q; iq++) {
                    const double slope = alibi_ref(cases[c].max_bias, (int) h, (int) cases[c].n_head);
                    double mx = -INFINITY;
                    for (int64_t j = 0; j < cases[c].n_kv; j++) {
                        double dot = 0;
                        for (int64_t d = 0; d < D; d++) dot += Q[IDX(q, d, iq, h, 0)] * Kd[IDX(k, d, j, h / gq, 0)];
                        double sc = dot * scale;
                        if (cases[c].softcap != 0.0f) sc = cases[c].softcap * tanh(sc / cases[c].softcap);
                        if (Md) sc += slope * Md[IDX(mask, j, iq, 0, 0)];
                        s[j] = sc;
                        mx = fmax(mx, sc);
                    }
                    const double sk = sinks ? ((float *) sinks->data)[h] : -INFINITY;
                    mx = fmax(mx, sk);
                    double sum = sinks ? exp(sk - mx) : 0;
                    for (int64_t j = 0; j < cases[c].n_kv; j++) { s[j] = exp(s[j] - mx); sum += s[j]; }
                    for (int64_t d = 0; d < D; d++) {
                        double acc = 0;
                        for (int64_t j = 0; j < cases[c].n_kv; j++) acc += s[j] * Vd[IDX(v, d, j, h / gq, 0)];
                        ref[IDX(out, d, h, iq, 0)] = acc / sum;
                    }
                }
                double * got = run(ctx, out, nth);
                char what[96];
                snprintf(what, sizeof(what), "flash_attn_ext kv=%s D=%" PRId64 " softcap=%g max_bias=%g sinks=%d",
                         ggml_type_name(type), D, cases[c].softcap, cases[c].max_bias, cases[c].sinks);
                const double limit = type == GGML_TYPE_F32 ? 1e-10 : type == GGML_TYPE_F16 ? 5e-6 : 1e-3;
                check_nmse(what, out, got, ref, limit, nth);
                if (ti == 0) {
                    got_1 = got;
                } else if (got && got_1) {
                    TH_CHECK(memcmp(got, got_1, sizeof(double) * (size_t) nel(out)) == 0,
                             "%s n_q=%" PRId64 ": nth=%d differs from nth=1", what, cases[c].n_q, nth);
                }
                free(Q); free(Kd); free(Vd); free(Md); free(ref); free(s);
                if (got != got_1) {
                    free(got);
                }
                ggml_free(ctx);
            }
            free(got_1);
        }
    }
}

// The head-group path (token generation: GQA, an F16 cache, one mask row for all heads) gives the row path's
// bits, the ones llama.cpp's reference logits were made with. A mask repeated per head (ne[2] = n_head) holds
// the same values but sends the same attention through the row path.
static void test_flash_attn_head_groups(void) {
    struct { int64_t D, n_q, n_kv, n_head, n_head_kv; float softcap; bool sinks; } cases[] = {
        { 64, 1, 100, 32, 4, 0.0f, false },  // TinyLlama's attention
        { 128, 3, 77, 8, 2, 0.0f, true },    // a head size of two register blocks; sinks
        { 64, 2, 45, 12, 4, 30.0f, false },  // GQA 3 (an odd group), softcap
        { 80, 1, 40, 4, 2, 0.0f, false },    // a head size with a dot tail
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (int nth = 1; nth <= 2; nth++) {
            rng_seed(2000 + c);
            struct ggml_context * ctx = new_ctx(32);
            const int64_t D = cases[c].D, nq = cases[c].n_q, nkv = cases[c].n_kv, H = cases[c].n_head;
            const int64_t qne[4] = { D, nq, H, 1 };
            const int64_t kne[4] = { D, nkv, cases[c].n_head_kv, 1 };
            struct ggml_tensor * q = new_input(ctx, GGML_TYPE_F32, qne, false, -1, 1);
            struct ggml_tensor * k = new_input(ctx, GGML_TYPE_F16, kne, false, -1, 1);
            struct ggml_tensor * v = new_input(ctx, GGML_TYPE_F16, kne, false, -1, 1);
            struct ggml_tensor * m1 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, nkv, GGML_PAD(nq, GGML_KQ_MASK_PAD), 1);
            struct ggml_tensor * mh = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, nkv, m1->ne[1], H);
            for (int64_t i1 = 0; i1 < m1->ne[1]; i1++)
            for (int64_t i0 = 0; i0 < nkv; i0++) {
                // causal over the last rows, a masked stretch inside, a few biases
                const bool masked = i0 > nkv - nq + i1 || (i0 >= 10 && i0 < 43);
                const ggml_fp16_t mv = ggml_fp32_to_fp16(masked ? -INFINITY : i0 % 7 == 0 ? -0.75f : 0.0f);
                ((ggml_fp16_t *) m1->data)[i1 * nkv + i0] = mv;
                for (int64_t h = 0; h < H; h++) {
                    ((ggml_fp16_t *) mh->data)[(h * mh->ne[1] + i1) * nkv + i0] = mv;
                }
            }
            struct ggml_tensor * sinks = NULL;
            if (cases[c].sinks) {
                sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, H);
                fill(sinks, -1, 1);
            }
            double * got[2];
            for (int path = 0; path < 2; path++) {
                struct ggml_tensor * mask = path == 0 ? m1 : mh;
                struct ggml_tensor * out =
                    ggml_flash_attn_ext(ctx, q, k, v, mask, 1.0f / sqrtf((float) D), 0.0f, cases[c].softcap);
                ggml_flash_attn_ext_set_prec(out, GGML_PREC_F32);
                if (sinks) {
                    ggml_flash_attn_ext_add_sinks(out, sinks);
                }
                got[path] = run(ctx, out, nth);
            }
            const size_t n = (size_t) (D * nq * H);
            TH_CHECK(got[0] && got[1] && memcmp(got[0], got[1], sizeof(double) * n) == 0,
                     "flash_attn_ext head groups D=%" PRId64 " n_q=%" PRId64 " GQA %" PRId64
                     " nth=%d: not the row path's bits",
                     D, nq, H / cases[c].n_head_kv, nth);
            free(got[0]);
            free(got[1]);
            ggml_free(ctx);
        }
    }
}

// ---- rows and copies -------------------------------------------------------------------------------------

static const enum ggml_type g_row_types[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
    GGML_TYPE_Q8_0, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
    GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_I32,
};

static void test_get_rows(void) {
    for (size_t t = 0; t < sizeof(g_row_types) / sizeof(g_row_types[0]); t++) {
        const enum ggml_type type = g_row_types[t];
        for (int shape = 0; shape < 2; shape++) {
            for (int ti = 0; ti < N_THREAD_CASES; ti++) {
                const int nth = g_threads[ti];
                rng_seed(1100 + t);
                struct ggml_context * ctx = new_ctx(32);
                const int64_t ne0 = ggml_blck_size(type) == 1 ? 33 : 2 * ggml_blck_size(type);
                const int64_t ane[4] = { ne0, 10, shape ? 3 : 1, 1 };
                struct ggml_tensor * a = new_input(ctx, type, ane, false, -100, 100);
                struct ggml_tensor * idx = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 7, ane[2]);
                for (int64_t i = 0; i < nel(idx); i++) {
                    ((int32_t *) idx->data)[i] = (int32_t) (rng_next() % 10);
                }
                double * A = to_double(a);
                struct ggml_tensor * out = ggml_get_rows(ctx, a, idx);
                double * ref = malloc(sizeof(double) * (size_t) nel(out));
                for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
                for (int64_t r = 0; r < out->ne[1]; r++) {
                    const int32_t row = ((int32_t *) idx->data)[i2 * 7 + r];
                    for (int64_t i0 = 0; i0 < ne0; i0++) {
                        ref[IDX(out, i0, r, i2, 0)] = A[IDX(a, i0, row, i2, 0)];
                    }
                }
                double * got = run(ctx, out, nth);
                char what[64];
                snprintf(what, sizeof(what), "get_rows %s", ggml_type_name(type));
                check_nmse(what, out, got, ref, 0.0, nth);
                free(A); free(ref); free(got);
                ggml_free(ctx);
            }
        }
    }
}

// expected contents of a row of type `type` written from floats: the reference quantizer / rounding
static void expected_row(enum ggml_type type, const float * x, int64_t n, double * out) {
    if (type == GGML_TYPE_F32) {
        for (int64_t i = 0; i < n; i++) out[i] = x[i];
        return;
    }
    const struct ggml_type_traits * tr = ggml_get_type_traits(type);
    void * q = malloc(ggml_row_size(type, n));
    float * back = malloc(sizeof(float) * (size_t) n);
    tr->from_float_ref(x, q, n);
    tr->to_float(q, back, n);
    for (int64_t i = 0; i < n; i++) out[i] = back[i];
    free(q);
    free(back);
}

static void test_set_rows(void) {
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0,
                                     GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_IQ4_NL };
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        for (int it = 0; it < 2; it++) { // I64 and I32 indices
            for (int ti = 0; ti < N_THREAD_CASES; ti++) {
                const int nth = g_threads[ti];
                rng_seed(1200 + t);
                struct ggml_context * ctx = new_ctx(32);
                const int64_t ne0 = 64, n_dst = 12, n_src = 5, ne2 = 2;
                struct ggml_tensor * dst = ggml_new_tensor_3d(ctx, types[t], ne0, n_dst, ne2);
                fill(dst, -1, 1);
                struct ggml_tensor * src = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, ne0, n_src, ne2);
                fill(src, -3, 3);
                struct ggml_tensor * idx = ggml_new_tensor_2d(ctx, it ? GGML_TYPE_I32 : GGML_TYPE_I64, n_src, 1);
                int64_t rows[5] = { 3, 0, 11, 7, 4 };
                for (int i = 0; i < n_src; i++) {
                    if (it) ((int32_t *) idx->data)[i] = (int32_t) rows[i]; else ((int64_t *) idx->data)[i] = rows[i];
                }
                double * ref = to_double(dst);
                for (int64_t i2 = 0; i2 < ne2; i2++)
                for (int64_t r = 0; r < n_src; r++) {
                    expected_row(types[t], (const float *) eptr(src, 0, r, i2, 0), ne0, ref + IDX(dst, 0, rows[r], i2, 0));
                }
                struct ggml_tensor * out = ggml_set_rows(ctx, dst, src, idx);
                double * got = run(ctx, out, nth);
                char what[64];
                snprintf(what, sizeof(what), "set_rows %s (%s idx)", ggml_type_name(types[t]), it ? "i32" : "i64");
                check_nmse(what, out, got, ref, 0.0, nth);
                free(ref); free(got);
                ggml_free(ctx);
            }
        }
    }
}

static void test_cpy(void) {
    struct { enum ggml_type src, dst; bool perm; } cases[] = {
        { GGML_TYPE_F32, GGML_TYPE_F32, true },  { GGML_TYPE_F32, GGML_TYPE_F16, false },
        { GGML_TYPE_F32, GGML_TYPE_F16, true },  { GGML_TYPE_F32, GGML_TYPE_BF16, true },
        { GGML_TYPE_F32, GGML_TYPE_Q8_0, false }, { GGML_TYPE_F32, GGML_TYPE_Q8_0, true },
        { GGML_TYPE_F32, GGML_TYPE_Q4_0, true },  { GGML_TYPE_F16, GGML_TYPE_F32, true },
        { GGML_TYPE_BF16, GGML_TYPE_F32, false }, { GGML_TYPE_Q8_0, GGML_TYPE_F32, false },
        { GGML_TYPE_Q4_0, GGML_TYPE_F32, false }, { GGML_TYPE_F16, GGML_TYPE_F16, true },
        { GGML_TYPE_I32, GGML_TYPE_F32, false },  { GGML_TYPE_F32, GGML_TYPE_I32, false },
        { GGML_TYPE_I32, GGML_TYPE_I32, true },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (int ti = 0; ti < N_THREAD_CASES; ti++) {
            const int nth = g_threads[ti];
            rng_seed(1300 + c);
            struct ggml_context * ctx = new_ctx(32);
            const int64_t ne[4] = { 64, 6, 3, 1 };
            struct ggml_tensor * a = new_input(ctx, cases[c].src, ne, cases[c].perm, -50, 50);
            struct ggml_tensor * b = ggml_new_tensor(ctx, cases[c].dst, 4, ne);
            double * A = to_double(a);
            struct ggml_tensor * out = ggml_cpy(ctx, a, b);
            double * ref = malloc(sizeof(double) * (size_t) nel(out));
            float * row = malloc(sizeof(float) * (size_t) ne[0]);
            for (int64_t r = 0; r < ggml_nrows(out); r++) {
                for (int64_t i = 0; i < ne[0]; i++) row[i] = (float) A[r * ne[0] + i];
                if (cases[c].dst == GGML_TYPE_I32) {
                    for (int64_t i = 0; i < ne[0]; i++) ref[r * ne[0] + i] = (double) (int32_t) row[i];
                } else if (cases[c].dst == GGML_TYPE_F32 || cases[c].src == cases[c].dst) {
                    for (int64_t i = 0; i < ne[0]; i++) ref[r * ne[0] + i] = A[r * ne[0] + i];
                } else {
                    expected_row(cases[c].dst, row, ne[0], ref + r * ne[0]);
                }
            }
            double * got = run(ctx, out, nth);
            char what[64];
            snprintf(what, sizeof(what), "cpy %s -> %s%s", ggml_type_name(cases[c].src), ggml_type_name(cases[c].dst),
                     cases[c].perm ? " (permuted)" : "");
            check_nmse(what, out, got, ref, 0.0, nth);
            free(A); free(ref); free(row); free(got);
            ggml_free(ctx);
        }
    }
    // cont of a permuted 4-D view, reshape and a 2-D view with a row stride
    for (int ti = 0; ti < N_THREAD_CASES; ti++) {
        const int nth = g_threads[ti];
        rng_seed(1399);
        struct ggml_context * ctx = new_ctx(16);
        struct ggml_tensor * a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 4, 3, 2);
        fill(a, -1, 1);
        struct ggml_tensor * p = ggml_permute(ctx, a, 2, 0, 3, 1); // a dim0 -> p dim2, ...
        struct ggml_tensor * out = ggml_cont(ctx, p);
        double * A = to_double(a);
        double * ref = malloc(sizeof(double) * (size_t) nel(out));
        for (int64_t i3 = 0; i3 < 2; i3++) for (int64_t i2 = 0; i2 < 3; i2++)
        for (int64_t i1 = 0; i1 < 4; i1++) for (int64_t i0 = 0; i0 < 5; i0++) {
            // element (i0,i1,i2,i3) of a sits at p coordinates (i1, i3, i0, i2)
            ref[IDX(out, i1, i3, i0, i2)] = A[IDX(a, i0, i1, i2, i3)];
        }
        TH_CHECK(p->ne[0] == 4 && p->ne[1] == 2 && p->ne[2] == 5 && p->ne[3] == 3, "permute shape");
        double * got = run(ctx, out, nth);
        check_nmse("cont(permute)", out, got, ref, 0.0, nth);
        free(ref); free(got);

        struct ggml_tensor * v = ggml_view_2d(ctx, a, 3, 4, a->nb[1], 2 * sizeof(float));
        struct ggml_tensor * out2 = ggml_cont(ctx, ggml_reshape_1d(ctx, ggml_cont(ctx, v), 12));
        ref = malloc(sizeof(double) * 12);
        for (int64_t r = 0; r < 4; r++) for (int64_t i = 0; i < 3; i++) ref[r * 3 + i] = A[r * 5 + 2 + i];
        got = run(ctx, out2, nth);
        check_nmse("view_2d/reshape/cont", out2, got, ref, 0.0, nth);
        free(ref); free(got); free(A);
        ggml_free(ctx);
    }
}

// ---- reductions, sorting, layout -------------------------------------------------------------------------

static void test_reduce_sort_layout(void) {
    for (int ti = 0; ti < N_THREAD_CASES; ti++) {
        const int nth = g_threads[ti];
        rng_seed(1400);
        struct ggml_context * ctx = new_ctx(32);
        const int64_t ne[4] = { 37, 6, 2, 1 };
        struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F32, ne, false, -5, 5);
        double * A = to_double(a);
        const int64_t n0 = ne[0], nr = ne[1] * ne[2];

        // sum, sum_rows, mean, cumsum
        {
            double total = 0;
            double * rs = malloc(sizeof(double) * (size_t) nr);
            double * cs = malloc(sizeof(double) * (size_t) nel(a));
            for (int64_t r = 0; r < nr; r++) {
                double acc = 0;
                for (int64_t i = 0; i < n0; i++) { acc += A[r * n0 + i]; cs[r * n0 + i] = acc; }
                rs[r] = acc;
                total += acc;
            }
            struct ggml_tensor * o_sum = ggml_sum(ctx, a);
            double * got = run(ctx, o_sum, nth);
            check_nmse("sum", o_sum, got, &total, 1e-12, nth);
            free(got);
            struct ggml_tensor * o_rows = ggml_sum_rows(ctx, a);
            got = run(ctx, o_rows, nth);
            check_nmse("sum_rows", o_rows, got, rs, 1e-12, nth);
            free(got);
            for (int64_t r = 0; r < nr; r++) rs[r] /= (double) n0;
            struct ggml_tensor * o_mean = ggml_mean(ctx, a);
            got = run(ctx, o_mean, nth);
            check_nmse("mean", o_mean, got, rs, 1e-12, nth);
            free(got);
            struct ggml_tensor * o_cs = ggml_cumsum(ctx, a);
            got = run(ctx, o_cs, nth);
            check_nmse("cumsum", o_cs, got, cs, 1e-12, nth);
            free(got); free(rs); free(cs);
        }
        // argmax (rows of a matrix), argsort asc/desc, top_k
        {
            struct ggml_tensor * m = ggml_reshape_2d(ctx, a, n0, nr);
            double * am = malloc(sizeof(double) * (size_t) nr);
            for (int64_t r = 0; r < nr; r++) {
                int64_t best = 0;
                for (int64_t i = 1; i < n0; i++) if (A[r * n0 + i] > A[r * n0 + best]) best = i;
                am[r] = (double) best;
            }
            struct ggml_tensor * o_am = ggml_argmax(ctx, m);
            double * got = run(ctx, o_am, nth);
            check_nmse("argmax", o_am, got, am, 0.0, nth);
            free(got); free(am);

            for (int desc = 0; desc < 2; desc++) {
                double * srt = malloc(sizeof(double) * (size_t) nel(a));
                for (int64_t r = 0; r < nr; r++) {
                    // selection order by repeated extreme search (values are distinct)
                    bool * used = calloc((size_t) n0, 1);
                    for (int64_t k = 0; k < n0; k++) {
                        int64_t pick = -1;
                        for (int64_t i = 0; i < n0; i++) {
                            if (used[i]) continue;
                            if (pick < 0 || (desc ? A[r * n0 + i] > A[r * n0 + pick] : A[r * n0 + i] < A[r * n0 + pick])) pick = i;
                        }
                        used[pick] = true;
                        srt[r * n0 + k] = (double) pick;
                    }
                    free(used);
                }
                struct ggml_tensor * o_as = ggml_argsort(ctx, a, desc ? GGML_SORT_ORDER_DESC : GGML_SORT_ORDER_ASC);
                got = run(ctx, o_as, nth);
                check_nmse(desc ? "argsort desc" : "argsort asc", o_as, got, srt, 0.0, nth);
                free(got);
                if (desc) {
                    // top_k: the set of the k largest (order not part of the contract): compare sorted sets
                    const int k = 5;
                    struct ggml_tensor * o_tk = ggml_top_k(ctx, a, k);
                    got = run(ctx, o_tk, nth);
                    bool ok = got != NULL && o_tk->ne[0] == k;
                    for (int64_t r = 0; ok && r < nr; r++) {
                        for (int j = 0; j < k; j++) {
                            bool found = false;
                            for (int jj = 0; jj < k; jj++) found |= got[r * k + jj] == srt[r * n0 + j];
                            ok &= found;
                        }
                    }
                    TH_CHECK(ok, "top_k set (nth=%d)", nth);
                    free(got);
                    // argsort_top_k: the first k of the descending order, in order
                    struct ggml_tensor * o_atk = ggml_cont(ctx, ggml_argsort_top_k(ctx, a, k));
                    got = run(ctx, o_atk, nth);
                    ok = got != NULL;
                    for (int64_t r = 0; ok && r < nr; r++) {
                        for (int j = 0; j < k; j++) ok &= got[r * k + j] == srt[r * n0 + j];
                    }
                    TH_CHECK(ok, "argsort_top_k (nth=%d)", nth);
                    free(got);
                }
                free(srt);
            }
        }
        // concat along each dim, pad_ext, repeat, arange, tri
        for (int dim = 0; dim < 4; dim++) {
            int64_t bne[4] = { ne[0], ne[1], ne[2], ne[3] };
            bne[dim] = 3;
            struct ggml_tensor * b = new_input(ctx, GGML_TYPE_F32, bne, false, -1, 1);
            double * B = to_double(b);
            struct ggml_tensor * o = ggml_concat(ctx, a, b, dim);
            double * ref = malloc(sizeof(double) * (size_t) nel(o));
            for (int64_t i3 = 0; i3 < o->ne[3]; i3++) for (int64_t i2 = 0; i2 < o->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < o->ne[1]; i1++) for (int64_t i0 = 0; i0 < o->ne[0]; i0++) {
                int64_t cc[4] = { i0, i1, i2, i3 };
                if (cc[dim] < a->ne[dim]) {
                    ref[IDX(o, i0, i1, i2, i3)] = A[IDX(a, cc[0], cc[1], cc[2], cc[3])];
                } else {
                    cc[dim] -= a->ne[dim];
                    ref[IDX(o, i0, i1, i2, i3)] = B[IDX(b, cc[0], cc[1], cc[2], cc[3])];
                }
            }
            double * got = run(ctx, o, nth);
            char what[32];
            snprintf(what, sizeof(what), "concat dim %d", dim);
            check_nmse(what, o, got, ref, 0.0, nth);
            free(B); free(ref); free(got);
        }
        {
            struct ggml_tensor * o = ggml_pad_ext(ctx, a, 1, 2, 0, 3, 2, 0, 0, 1);
            double * ref = calloc((size_t) nel(o), sizeof(double));
            for (int64_t i2 = 0; i2 < ne[2]; i2++) for (int64_t i1 = 0; i1 < ne[1]; i1++)
            for (int64_t i0 = 0; i0 < ne[0]; i0++) ref[IDX(o, i0 + 1, i1, i2 + 2, 0)] = A[IDX(a, i0, i1, i2, 0)];
            double * got = run(ctx, o, nth);
            check_nmse("pad_ext", o, got, ref, 0.0, nth);
            free(ref); free(got);
        }
        {
            const int64_t sne[4] = { 5, 1, 2, 1 };
            struct ggml_tensor * s = new_input(ctx, GGML_TYPE_F32, sne, false, -1, 1);
            double * S = to_double(s);
            struct ggml_tensor * o = ggml_repeat_4d(ctx, s, 10, 3, 4, 2);
            double * ref = malloc(sizeof(double) * (size_t) nel(o));
            for (int64_t i3 = 0; i3 < 2; i3++) for (int64_t i2 = 0; i2 < 4; i2++)
            for (int64_t i1 = 0; i1 < 3; i1++) for (int64_t i0 = 0; i0 < 10; i0++)
                ref[IDX(o, i0, i1, i2, i3)] = S[IDX(s, i0 % 5, 0, i2 % 2, 0)];
            double * got = run(ctx, o, nth);
            check_nmse("repeat", o, got, ref, 0.0, nth);
            free(S); free(ref); free(got);
        }
        {
            struct ggml_tensor * o = ggml_roll(ctx, a, 5, -2, 1, 0);
            double * ref = malloc(sizeof(double) * (size_t) nel(o));
            for (int64_t i2 = 0; i2 < ne[2]; i2++) for (int64_t i1 = 0; i1 < ne[1]; i1++)
            for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                ref[IDX(o, (i0 + 5) % ne[0], (i1 - 2 + ne[1]) % ne[1], (i2 + 1) % ne[2], 0)] = A[IDX(a, i0, i1, i2, 0)];
            }
            double * got = run(ctx, o, nth);
            check_nmse("roll", o, got, ref, 0.0, nth);
            free(ref); free(got);
        }
        {
            // the seed's case: test_roll(3, -2, 1, -1) on a permuted {10,5,4,3} source
            struct ggml_tensor * src = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 10, 5, 4, 3);
            fill(src, -1, 1);
            struct ggml_tensor * pa = ggml_permute(ctx, src, 0, 2, 1, 3);
            double * P = to_double(pa);
            struct ggml_tensor * o = ggml_roll(ctx, pa, 3, -2, 1, -1);
            double * ref = malloc(sizeof(double) * (size_t) nel(o));
            const int64_t * pn = pa->ne;
            for (int64_t i3 = 0; i3 < pn[3]; i3++) for (int64_t i2 = 0; i2 < pn[2]; i2++)
            for (int64_t i1 = 0; i1 < pn[1]; i1++) for (int64_t i0 = 0; i0 < pn[0]; i0++) {
                ref[IDX(o, (i0 + 3) % pn[0], (i1 - 2 + pn[1]) % pn[1], (i2 + 1) % pn[2], (i3 - 1 + pn[3]) % pn[3])] =
                    P[IDX(pa, i0, i1, i2, i3)];
            }
            double * got = run(ctx, o, nth);
            check_nmse("roll (permuted source)", o, got, ref, 0.0, nth);
            free(P); free(ref); free(got);
        }
        {
            struct ggml_tensor * o = ggml_arange(ctx, -2.0f, 3.0f, 0.5f);
            double ref[10];
            for (int i = 0; i < 10; i++) ref[i] = -2.0 + 0.5 * i;
            TH_CHECK(o->ne[0] == 10, "arange length %" PRId64, o->ne[0]);
            double * got = run(ctx, o, nth);
            check_nmse("arange", o, got, ref, 0.0, nth);
            free(got);
        }
        for (int type = 0; type < 4; type++) {
            struct ggml_tensor * sq = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 6);
            fill(sq, 1, 2);
            double * S = to_double(sq);
            struct ggml_tensor * o = ggml_tri(ctx, sq, (enum ggml_tri_type) type);
            double ref[36];
            for (int i1 = 0; i1 < 6; i1++) for (int i0 = 0; i0 < 6; i0++) {
                const bool keep = type == 0 ? i0 >= i1 : type == 1 ? i0 > i1 : type == 2 ? i0 <= i1 : i0 < i1;
                ref[i1 * 6 + i0] = keep ? S[i1 * 6 + i0] : 0.0;
            }
            double * got = run(ctx, o, nth);
            check_nmse("tri", o, got, ref, 0.0, nth);
            free(S); free(got);
        }
        {
            struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 50);
            struct ggml_tensor * y = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 50);
            int64_t eq = 0;
            for (int i = 0; i < 50; i++) {
                ((int32_t *) x->data)[i] = (int32_t) (rng_next() % 4);
                ((int32_t *) y->data)[i] = (int32_t) (rng_next() % 4);
                eq += ((int32_t *) x->data)[i] == ((int32_t *) y->data)[i];
            }
            struct ggml_tensor * o = ggml_count_equal(ctx, x, y);
            double ref = (double) eq;
            double * got = run(ctx, o, nth);
            check_nmse("count_equal", o, got, &ref, 0.0, nth);
            free(got);
        }
        free(A);
        ggml_free(ctx);
    }
}

// ---- graph API, selection, errors ------------------------------------------------------------------------

static bool abort_after_first(void * data) {
    int * calls = data;
    return ++*calls >= 1;
}

static void test_graph_api(void) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_set_name(a, "a");
    ggml_set_name(b, "b");
    for (int i = 0; i < 4; i++) { ((float *) a->data)[i] = (float) i; ((float *) b->data)[i] = 10.0f; }
    struct ggml_tensor * s = ggml_add(ctx, a, b);
    struct ggml_tensor * v = ggml_reshape_2d(ctx, s, 2, 2);
    struct ggml_tensor * m = ggml_mul(ctx, v, v);
    ggml_set_name(m, "m");
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 16, false);
    TH_CHECK(gf != NULL, "new_graph_custom");
    ggml_build_forward_expand(gf, m);
    TH_CHECK(ggml_graph_n_nodes(gf) == 3, "n_nodes %d", ggml_graph_n_nodes(gf));
    TH_CHECK(ggml_graph_node(gf, -1) == m && ggml_graph_node(gf, 0) == s, "node order");
    TH_CHECK(ggml_graph_get_tensor(gf, "a") == a && ggml_graph_get_tensor(gf, "m") == m, "get_tensor");
    TH_CHECK(ggml_graph_size(gf) == 16, "graph size");
    ggml_build_forward_expand(gf, m); // idempotent
    TH_CHECK(ggml_graph_n_nodes(gf) == 3, "expand twice");
    TH_CHECK(ggml_graph_compute_with_ctx(ctx, gf, 2) == GGML_STATUS_SUCCESS, "compute_with_ctx");
    bool ok = true;
    for (int i = 0; i < 4; i++) ok &= ((float *) m->data)[i] == (10.0f + i) * (10.0f + i);
    TH_CHECK(ok, "add -> reshape -> mul values");

    struct ggml_cgraph * g2 = ggml_graph_dup(ctx, gf, false);
    TH_CHECK(g2 && ggml_graph_n_nodes(g2) == 3 && ggml_graph_node(g2, -1) == m, "graph_dup");
    ggml_graph_clear(g2);
    TH_CHECK(ggml_graph_n_nodes(g2) == 0, "graph_clear");
    TH_CHECK(ggml_graph_overhead() > ggml_graph_overhead_custom(16, false), "graph overhead");

    // build_forward_select: only the chosen branch runs; the other stays untouched
    struct ggml_tensor * br0 = ggml_scale(ctx, a, 2.0f);
    struct ggml_tensor * br1 = ggml_scale(ctx, a, 3.0f);
    for (int i = 0; i < 4; i++) { ((float *) br0->data)[i] = -7.0f; ((float *) br1->data)[i] = -7.0f; }
    struct ggml_cgraph * g3 = ggml_new_graph(ctx);
    struct ggml_tensor * branches[2] = { br0, br1 };
    struct ggml_tensor * sel = ggml_build_forward_select(g3, branches, 2, 1);
    TH_CHECK(sel == br1 && ggml_graph_n_nodes(g3) == 2, "select keeps both branches in the graph");
    TH_CHECK(ggml_graph_compute_with_ctx(ctx, g3, 2) == GGML_STATUS_SUCCESS, "select compute");
    TH_CHECK(((float *) br1->data)[3] == 9.0f && ((float *) br0->data)[3] == -7.0f, "only the selected branch ran");

    // a long chain must not overflow the stack while expanding
    struct ggml_tensor * chain = a;
    const int depth = 20000;
    for (int i = 0; i < depth; i++) chain = ggml_scale(ctx, chain, 1.0f);
    struct ggml_cgraph * g4 = ggml_new_graph_custom(ctx, depth + 8, false);
    ggml_build_forward_expand(g4, chain);
    TH_CHECK(ggml_graph_n_nodes(g4) == depth, "deep chain n_nodes %d", ggml_graph_n_nodes(g4));

    // unsupported node: compute fails cleanly
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 2, 3);
    // multi-section rope without sections (ggml_rope_ext passes none): 4 positions per token, refused by the CPU
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 12);
    memset(pos->data, 0, 48);
    fill(x, -1, 1);
    struct ggml_tensor * mr = ggml_rope_ext(ctx, x, pos, NULL, 8, GGML_ROPE_TYPE_MROPE, 0, 10000, 1, 0, 1, 0, 0);
    struct ggml_cgraph * g5 = ggml_new_graph(ctx);
    ggml_build_forward_expand(g5, mr);
    TH_CHECK(ggml_graph_compute_with_ctx(ctx, g5, 1) == GGML_STATUS_FAILED, "unsupported op -> GGML_STATUS_FAILED");

    // missing work buffer
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 32, 4);
    fill(w, -1, 1);
    struct ggml_tensor * y = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 2);
    fill(y, -1, 1);
    struct ggml_cgraph * g6 = ggml_new_graph(ctx);
    ggml_build_forward_expand(g6, ggml_mul_mat(ctx, w, y));
    struct ggml_cplan plan = ggml_graph_plan(g6, 2, NULL);
    TH_CHECK(plan.work_size > 0, "f16 mul_mat needs a work buffer");
    TH_CHECK(ggml_graph_compute(g6, &plan) == GGML_STATUS_FAILED, "NULL work_data -> GGML_STATUS_FAILED");

    // abort callback
    int calls = 0;
    plan.work_data = malloc(plan.work_size);
    plan.abort_callback = abort_after_first;
    plan.abort_callback_data = &calls;
    TH_CHECK(ggml_graph_compute(g6, &plan) == GGML_STATUS_ABORTED, "abort callback -> GGML_STATUS_ABORTED");
    free(plan.work_data);

    // element access helpers
    struct ggml_tensor * e = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 3, 2);
    ggml_set_f32(e, 1.5f);
    ggml_set_f32_nd(e, 2, 1, 0, 0, -4.0f);
    TH_CHECK(ggml_get_f32_1d(e, 0) == 1.5f && ggml_get_f32_1d(e, 5) == -4.0f, "f16 element access");
    struct ggml_tensor * ei = ggml_new_i32(ctx, 7);
    TH_CHECK(ggml_get_i32_1d(ei, 0) == 7, "new_i32");
    ggml_free(ctx);

    // thread pool reuse across many small graphs
    struct ggml_context * c2 = new_ctx(16);
    struct ggml_tensor * acc = ggml_new_tensor_1d(c2, GGML_TYPE_F32, 1000);
    ggml_set_f32(acc, 0.0f);
    struct ggml_tensor * one = ggml_new_f32(c2, 1.0f);
    struct ggml_cgraph * g7 = ggml_new_graph(c2);
    ggml_build_forward_expand(g7, ggml_add1_inplace(c2, acc, one));
    struct ggml_cplan p7 = ggml_graph_plan(g7, 4, g_pool);
    bool all_ok = true;
    for (int it = 0; it < 200; it++) all_ok &= ggml_graph_compute(g7, &p7) == GGML_STATUS_SUCCESS;
    TH_CHECK(all_ok && ggml_get_f32_1d(acc, 999) == 200.0f && ggml_get_f32_1d(acc, 0) == 200.0f,
             "200 graphs on a persistent pool: %g", (double) ggml_get_f32_1d(acc, 999));
    // the same pool with a different thread count on every graph
    all_ok = true;
    for (int it = 0; it < 300; it++) {
        p7.n_threads = 1 + it % 4;
        all_ok &= ggml_graph_compute(g7, &p7) == GGML_STATUS_SUCCESS;
    }
    TH_CHECK(all_ok && ggml_get_f32_1d(acc, 999) == 500.0f && ggml_get_f32_1d(acc, 500) == 500.0f,
             "300 graphs with 1..4 threads on one pool: %g", (double) ggml_get_f32_1d(acc, 999));
    ggml_free(c2);
}

// ---- llama.cpp kernel checks (reference/synthetic/kernels) -------------------------------------------------

static void test_kernel_checks(void) {
    const char * index_path = th_data_path("reference/synthetic/index.json");
    if (!th_require_file(index_path)) {
        return;
    }
    json_error_t jerr;
    json_t * index = json_load_file(index_path, 0, &jerr);
    TH_CHECK(index != NULL, "parse %s: %s", index_path, jerr.text);
    if (!index) return;
    json_t * checks = json_object_get(index, "kernel_checks");
    TH_CHECK(json_is_array(checks), "kernel_checks in index.json");
    int n_checked = 0;
    size_t ic;
    json_t * c;
    json_array_foreach(checks, ic, c) {
        const char * src    = json_string_value(json_object_get(c, "source_file"));
        const char * tensor = json_string_value(json_object_get(c, "tensor"));
        const char * xfile  = json_string_value(json_object_get(c, "x_file"));
        const char * mvfile = json_string_value(json_object_get(c, "matvec_file"));
        if (!src || !tensor || !xfile || !mvfile) {
            TH_CHECK(false, "kernel_checks[%zu] has source_file/tensor/x_file/matvec_file", ic);
            continue;
        }

        const char * model_path = th_data_path("models/synthetic/%s", src);
        if (!th_require_file(model_path)) continue;
        struct gguf_init_params gp = { true, NULL };
        struct gguf_context * g = gguf_init_from_file(model_path, gp);
        TH_CHECK(g != NULL, "gguf open %s", model_path);
        if (!g) continue;
        const int64_t tid = gguf_find_tensor(g, tensor);
        TH_CHECK(tid >= 0, "%s in %s", tensor, src);
        if (tid < 0) { gguf_free(g); continue; }
        const enum ggml_type type = gguf_get_tensor_type(g, tid);
        const size_t off = gguf_get_data_offset(g) + gguf_get_tensor_offset(g, tid);
        gguf_free(g);

        size_t nx = 0, nmv = 0;
        float * x  = th_read_file(th_data_path("reference/synthetic/%s", xfile), &nx);
        float * mv = th_read_file(th_data_path("reference/synthetic/%s", mvfile), &nmv);
        TH_CHECK(x && mv, "read %s / %s", xfile, mvfile);
        if (!x || !mv) { free(x); free(mv); continue; }
        const int64_t ne0 = (int64_t) (nx / sizeof(float));
        const int64_t ne1 = (int64_t) (nmv / sizeof(float));

        struct ggml_context * ctx = new_ctx(64);
        struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, ne0, ne1);
        FILE * f = fopen(model_path, "rb");
        bool read_ok = f && fseek(f, (long) off, SEEK_SET) == 0 && fread(w->data, 1, ggml_nbytes(w), f) == ggml_nbytes(w);
        if (f) fclose(f);
        TH_CHECK(read_ok, "read tensor data of %s", tensor);
        struct ggml_tensor * xt = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne0);
        memcpy(xt->data, x, sizeof(float) * (size_t) ne0);
        struct ggml_tensor * y = ggml_mul_mat(ctx, w, xt);
        double * got = read_ok && ggml_cpu_get_kernels(type)->vec_dot ? run(ctx, y, 1) : NULL;
        double max_rel = INFINITY;
        if (got) {
            double max_abs_y = 0, max_diff = 0;
            for (int64_t i = 0; i < ne1; i++) {
                max_abs_y = fmax(max_abs_y, fabs(mv[i]));
                max_diff  = fmax(max_diff, fabs(got[i] - mv[i]));
            }
            max_rel = max_diff / max_abs_y;
        }
        TH_CHECK(max_rel <= 1e-5, "kernel check %s %s (%s): max |ours - llama.cpp| / max |y| = %.3g", src, tensor,
                 ggml_type_name(type), max_rel);
        n_checked++;
        free(got); free(x); free(mv);
        ggml_free(ctx);
    }
    TH_CHECK(n_checked > 0, "no kernel checks found");
    printf("kernel checks against llama.cpp mat-vec results: %d\n", n_checked);
    json_decref(index);
}

// ---- perf ------------------------------------------------------------------------------------------------

static double now_s(void) {
    return 1e-6 * (double) ggml_time_us();
}

// reads this thread's slice of a buffer (a custom op, so the read runs on the same pool and threads as the matmuls)
static void perf_read_slice(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    (void) dst;
    const int64_t n = ggml_nelements(a);
    const int64_t per = (n + nth - 1) / nth;
    const int64_t i0 = per * ith;
    const int64_t i1 = i0 + per < n ? i0 + per : n;
    const float * x = (const float *) a->data;
    float acc[16] = { 0 };
    for (int64_t i = i0; i + 16 <= i1; i += 16) {
        for (int k = 0; k < 16; k++) acc[k] += x[i + k];
    }
    float t = 0;
    for (int k = 0; k < 16; k++) t += acc[k];
    ((float *) userdata)[ith * 16] = t;
}

static double perf_time_graph(struct ggml_cgraph * gf, int n_threads, struct ggml_threadpool * tp, int reps) {
    struct ggml_cplan plan = ggml_graph_plan(gf, n_threads, tp);
    plan.work_data = malloc(plan.work_size + 1);
    ggml_graph_compute(gf, &plan); // warm up
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        const double t0 = now_s();
        ggml_graph_compute(gf, &plan);
        best = fmin(best, now_s() - t0);
    }
    free(plan.work_data);
    return best;
}

// times W(4096x4096, type) x X(4096xN) for N = 1, 8, 512; a matvec graph holds enough distinct W to exceed
// the last-level cache (>= 256 MiB). With repack the weights live in a CPU_REPACK buffer.
static void perf_mul_mat_type(enum ggml_type type, bool repack, int n_threads, struct ggml_threadpool * tp, double bw) {
    const int64_t cols[] = { 1, 8, 512 };
    const size_t wbytes = ggml_row_size(type, 4096) * 4096;
    char name[32];
    snprintf(name, sizeof(name), "%s%s", ggml_type_name(type), repack ? "/r" : "");
    for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
        const int n_w = cols[c] == 1 ? (int) ((((size_t) 256 << 20) + wbytes - 1) / wbytes) : 1;
        struct ggml_context * ctx = new_ctx((wbytes >> 20) + 64 + 16 * (size_t) cols[c] * 2);
        struct ggml_init_params wp = { ggml_tensor_overhead() * (size_t) (n_w + 1), NULL, true };
        struct ggml_context * ctx_w = ggml_init(wp);
        struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4096, cols[c]);
        struct ggml_tensor * w_src = ggml_new_tensor_2d(ctx, type, 4096, 4096);
        rng_seed(1);
        fill(x, -1, 1);
        fill(w_src, -1, 1);
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        struct ggml_tensor * ws[64];
        for (int i = 0; i < n_w && i < 64; i++) {
            ws[i] = ggml_new_tensor_2d(ctx_w, type, 4096, 4096);
            ggml_build_forward_expand(gf, ggml_mul_mat(ctx, ws[i], x));
        }
        ggml_backend_buffer_type_t buft = repack ? ggml_backend_cpu_repack_buffer_type() : ggml_backend_cpu_buffer_type();
        ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx_w, buft);
        if (buf == NULL) {
            printf("%-9s: out of memory\n", name);
            ggml_free(ctx_w);
            ggml_free(ctx);
            return;
        }
        for (int i = 0; i < n_w && i < 64; i++) {
            ggml_backend_tensor_set(ws[i], w_src->data, 0, wbytes);
        }
        const double dt = perf_time_graph(gf, n_threads, tp, cols[c] >= 512 ? 1 : 5) / n_w;
        const double flop = 2.0 * 4096.0 * 4096.0 * (double) cols[c];
        const double gbs = (double) wbytes / dt / 1e9;
        printf("%-9s %5" PRId64 " %10.3f %10.1f %10.1f %7.0f%%\n", name, cols[c], dt * 1e3, flop / dt / 1e9, gbs,
               cols[c] == 1 ? 100.0 * gbs / bw : 0.0);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx_w);
        ggml_free(ctx);
    }
}

static int perf_main(int n_threads) {
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
    struct ggml_threadpool * tp = ggml_threadpool_new(&tpp);

    // memory bandwidth with the same threads: read 512 MiB
    double bw;
    {
        struct ggml_context * ctx = new_ctx(512 + 16);
        struct ggml_tensor * buf = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, (int64_t) 128 << 20);
        memset(buf->data, 0, ggml_nbytes(buf));
        float sink[16 * GGML_MAX_N_THREADS / 8];
        struct ggml_tensor * rd = ggml_map_custom1_inplace(ctx, buf, perf_read_slice, GGML_N_TASKS_MAX, sink);
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, rd);
        bw = (double) ggml_nbytes(buf) / perf_time_graph(gf, n_threads, tp, 5) / 1e9;
        ggml_free(ctx);
    }
    printf("memory read bandwidth (%d threads): %.1f GB/s\n", n_threads, bw);

    // W 4096x4096; each type plain, and again in the CPU_REPACK buffer when that layout takes it (how the
    // loader stores matmul weights for token generation)
    const enum ggml_type types[] = { GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_F16, GGML_TYPE_F32 };
    printf("%-9s %5s %10s %10s %10s %8s   (%d threads, W 4096x4096, /r = CPU_REPACK)\n", "type", "N", "ms/W", "GFLOP/s",
           "GB/s(W)", "%bw", n_threads);
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        if (ggml_cpu_get_kernels(types[t])->vec_dot == NULL) {
            printf("%-9s: no kernel\n", ggml_type_name(types[t]));
            continue;
        }
        perf_mul_mat_type(types[t], false, n_threads, tp, bw);
        struct ggml_tensor probe = { .type = types[t], .ne = { 4096, 4096, 1, 1 } };
        probe.nb[0] = ggml_type_size(types[t]);
        probe.nb[1] = ggml_row_size(types[t], 4096);
        probe.nb[2] = probe.nb[3] = probe.nb[1] * 4096;
        if (ggml_cpu_repack_supported(&probe)) {
            perf_mul_mat_type(types[t], true, n_threads, tp, bw);
        }
    }
    ggml_threadpool_free(tp);
    return 0;
}

int main(int argc, char ** argv) {
    ggml_cpu_init();
    if (argc > 1 && strcmp(argv[1], "perf") == 0) {
        return perf_main(argc > 2 ? atoi(argv[2]) : 2);
    }
    printf("ISA: %s\n", ggml_cpu_isa_name(ggml_cpu_isa_active()));
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(4);
    g_pool = ggml_threadpool_new(&tpp);
    TH_CHECK(g_pool != NULL, "threadpool_new");

    test_graph_api();
    test_binary();
    test_unary();
    test_map_ops();
    test_glu();
    test_norm();
    test_rope();
    test_soft_max();
    test_mul_mat();
    test_mul_mat_id();
    test_flash_attn();
    test_flash_attn_head_groups();
    test_fa_kernels();
    test_get_rows();
    test_set_rows();
    test_cpy();
    test_reduce_sort_layout();
    test_kernel_checks();

    ggml_threadpool_free(g_pool);
    return th_finish();
}
