// Automatic differentiation (ggml_build_backward_expand) on the CPU backend:
// - every differentiable op: f = sum(op(x, ...) * w) with random weights w; the gradient of f w.r.t. each
//   parameter from the backward graph is compared with a five-point central finite difference of f (the
//   differences taken in double over forward evaluations of the same graph), so each gradient rule is checked
//   against the forward op it differentiates;
// - ggml_flash_attn_back against the backward pass of the same attention written as mul_mat + diag_mask_inf +
//   soft_max (an independent composition of other, checked rules);
// - gradient accumulation: two micro-batches added into grad_accs give the gradient of one batch of both;
// - a 2-layer MLP with a cross_entropy_loss (soft_max of its logits for the predictions), trained by
//   ggml_opt_step_adamw, lowers its loss and learns the classes.

#include "ggml-ops-check.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"

#define MAX_IN 4

struct grad_input {
    enum ggml_type type;
    int64_t ne[4];
    float lo, hi;
    bool param;
    bool avoid_kink; // keep |x| >= 0.1 (ops that are not differentiable at 0)
};

struct grad_case {
    const char * name;
    int n_in;
    struct grad_input in[MAX_IN];
    struct ggml_tensor * (*build)(struct ggml_context * ctx, struct ggml_tensor ** x);
};

#define F32(n0, n1, n2, n3)  { GGML_TYPE_F32, { n0, n1, n2, n3 }, -1.0f, 1.0f, true, false }
#define F32K(n0, n1, n2, n3) { GGML_TYPE_F32, { n0, n1, n2, n3 }, -1.0f, 1.0f, true, true }
#define POS(n0, n1, n2, n3)  { GGML_TYPE_F32, { n0, n1, n2, n3 }, 0.5f, 2.0f, true, false }
#define CONST(n0, n1, n2, n3) { GGML_TYPE_F32, { n0, n1, n2, n3 }, -1.0f, 1.0f, false, false }
#define IDX(n0, max)         { GGML_TYPE_I32, { n0, 1, 1, 1 }, 0.0f, (float) (max) - 0.01f, false, false }

// ---- the ops (x: the inputs of the case, in order) ---------------------------------------------------------

static struct ggml_tensor * b_dup(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_dup(c, x[0]); }
static struct ggml_tensor * b_add(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_add(c, x[0], x[1]); }
static struct ggml_tensor * b_add1(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_add1(c, x[0], x[1]); }
static struct ggml_tensor * b_acc(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_acc(c, x[0], x[1], x[0]->nb[1], x[0]->nb[2], x[0]->nb[3], x[0]->nb[1] + 2 * x[0]->nb[0]);
}
static struct ggml_tensor * b_sub(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_sub(c, x[0], x[1]); }
static struct ggml_tensor * b_mul(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_mul(c, x[0], x[1]); }
static struct ggml_tensor * b_div(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_div(c, x[0], x[1]); }
static struct ggml_tensor * b_sqr(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_sqr(c, x[0]); }
static struct ggml_tensor * b_sqrt(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_sqrt(c, x[0]); }
static struct ggml_tensor * b_log(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_log(c, x[0]); }
static struct ggml_tensor * b_sin(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_sin(c, x[0]); }
static struct ggml_tensor * b_cos(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_cos(c, x[0]); }
static struct ggml_tensor * b_sum(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_sum(c, x[0]); }
static struct ggml_tensor * b_sum_rows(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_sum_rows(c, x[0]); }
static struct ggml_tensor * b_mean(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_mean(c, x[0]); }
static struct ggml_tensor * b_repeat(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_repeat_4d(c, x[0], 6, 2, 4, 1); }
static struct ggml_tensor * b_repeat_back(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_repeat_back(c, x[0], ggml_new_tensor_4d(c, GGML_TYPE_F32, 3, 1, 2, 1));
}
static struct ggml_tensor * b_rms_norm(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_rms_norm(c, x[0], 1e-5f); }
static struct ggml_tensor * b_mul_mat(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_mul_mat(c, x[0], x[1]); }
static struct ggml_tensor * b_scale(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_scale(c, x[0], -1.7f); }
static struct ggml_tensor * b_set(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_set(c, x[0], x[1], x[0]->nb[1], x[0]->nb[2], x[0]->nb[3], 2 * x[0]->nb[1] + x[0]->nb[0]);
}
static struct ggml_tensor * b_cpy(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_cpy(c, x[0], ggml_new_tensor_2d(c, GGML_TYPE_F32, 6, 2));
}
static struct ggml_tensor * b_cont(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_cont(c, ggml_transpose(c, x[0])); }
static struct ggml_tensor * b_reshape(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_reshape_3d(c, x[0], 3, 2, 4); }
static struct ggml_tensor * b_view(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_view_2d(c, x[0], 3, 2, x[0]->nb[1], x[0]->nb[1] + 2 * x[0]->nb[0]);
}
static struct ggml_tensor * b_permute(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_permute(c, x[0], 2, 0, 1, 3); }
static struct ggml_tensor * b_transpose(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_transpose(c, x[0]); }
static struct ggml_tensor * b_get_rows(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_get_rows(c, x[0], x[1]); }
static struct ggml_tensor * b_soft_max_masked(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_soft_max(c, ggml_diag_mask_inf(c, x[0], 1));
}
static struct ggml_tensor * b_soft_max_ext(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_soft_max_ext(c, x[0], x[1], 0.7f, 0.0f);
}
static struct ggml_tensor * rope_with(struct ggml_context * c, struct ggml_tensor ** x, int mode) {
    return ggml_rope_ext(c, x[0], x[1], NULL, 8, mode, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
}
static struct ggml_tensor * b_rope(struct ggml_context * c, struct ggml_tensor ** x) { return rope_with(c, x, 0); }
static struct ggml_tensor * b_rope_neox(struct ggml_context * c, struct ggml_tensor ** x) { return rope_with(c, x, GGML_ROPE_TYPE_NEOX); }
static struct ggml_tensor * b_conv_2d(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_conv_2d(c, x[0], x[1], 1, 2, 1, 0, 1, 1); }
static struct ggml_tensor * b_im2col_1d(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_im2col(c, x[0], x[1], 2, 0, 1, 0, 1, 0, false, GGML_TYPE_F32);
}
static struct ggml_tensor * b_pool_avg(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_pool_2d(c, x[0], GGML_OP_POOL_AVG, 2, 2, 2, 2, 0, 0); }
static struct ggml_tensor * b_pool_max(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_pool_2d(c, x[0], GGML_OP_POOL_MAX, 2, 2, 2, 1, 0, 0); }
static struct ggml_tensor * b_win_part(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_win_part(c, x[0], 3); }
static struct ggml_tensor * b_win_unpart(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_win_unpart(c, x[0], 5, 4, 3); }
static struct ggml_tensor * b_abs(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_abs(c, x[0]); }
static struct ggml_tensor * b_sgn(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_add(c, ggml_sgn(c, x[0]), x[0]); }
static struct ggml_tensor * b_neg(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_neg(c, x[0]); }
static struct ggml_tensor * b_step(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_mul(c, ggml_step(c, x[0]), x[0]); }
static struct ggml_tensor * b_relu(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_relu(c, x[0]); }
static struct ggml_tensor * b_silu(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_silu(c, x[0]); }
static struct ggml_tensor * b_exp(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_exp(c, x[0]); }
static struct ggml_tensor * b_expm1(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_expm1(c, x[0]); }
static struct ggml_tensor * b_softplus(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_softplus(c, x[0]); }
static struct ggml_tensor * b_tanh(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_tanh(c, x[0]); }
static struct ggml_tensor * b_sigmoid(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_sigmoid(c, x[0]); }
static struct ggml_tensor * b_swiglu(struct ggml_context * c, struct ggml_tensor ** x) { return ggml_swiglu_split(c, x[0], x[1]); }
static struct ggml_tensor * b_cross_entropy(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_cross_entropy_loss(c, x[0], ggml_soft_max(c, x[1])); // labels: rows that sum to 1
}
static struct ggml_tensor * b_flash_attn_ext(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_flash_attn_ext(c, x[0], x[1], x[2], NULL, 0.45f, 0.0f, 0.0f);
}
static struct ggml_tensor * b_flash_attn_ext_mask(struct ggml_context * c, struct ggml_tensor ** x) {
    return ggml_flash_attn_ext(c, x[0], x[1], x[2], ggml_cast(c, x[3], GGML_TYPE_F16), 0.3f, 0.0f, 0.0f);
}
// x feeds several ops: its gradient is the sum of their contributions
static struct ggml_tensor * b_multi_use(struct ggml_context * c, struct ggml_tensor ** x) {
    struct ggml_tensor * t = ggml_add(c, ggml_mul(c, x[0], x[0]), ggml_sin(c, x[0]));
    return ggml_add(c, t, ggml_mul_mat(c, x[0], x[1]));
}

static const struct grad_case cases[] = {
    { "dup",            1, { F32(4, 3, 1, 1) }, b_dup },
    { "add bcast",      2, { F32(4, 3, 2, 1), F32(4, 1, 2, 1) }, b_add },
    { "add1",           2, { F32(5, 3, 1, 1), F32(1, 1, 1, 1) }, b_add1 },
    { "acc",            2, { F32(6, 4, 1, 1), F32(3, 2, 1, 1) }, b_acc },
    { "sub bcast",      2, { F32(4, 3, 2, 1), F32(4, 1, 1, 1) }, b_sub },
    { "mul bcast",      2, { F32(4, 3, 2, 1), F32(4, 3, 1, 1) }, b_mul },
    { "div bcast",      2, { F32(4, 3, 2, 1), POS(4, 1, 2, 1) }, b_div },
    { "sqr",            1, { F32(5, 3, 1, 1) }, b_sqr },
    { "sqrt",           1, { POS(5, 3, 1, 1) }, b_sqrt },
    { "log",            1, { POS(5, 3, 1, 1) }, b_log },
    { "sin",            1, { F32(5, 3, 1, 1) }, b_sin },
    { "cos",            1, { F32(5, 3, 1, 1) }, b_cos },
    { "sum",            1, { F32(4, 3, 2, 1) }, b_sum },
    { "sum_rows",       1, { F32(4, 3, 2, 1) }, b_sum_rows },
    { "mean",           1, { F32(4, 3, 2, 1) }, b_mean },
    { "repeat",         1, { F32(3, 1, 2, 1) }, b_repeat },
    { "repeat_back",    1, { F32(6, 2, 4, 1) }, b_repeat_back },
    { "rms_norm",       1, { F32(8, 3, 1, 1) }, b_rms_norm },
    { "mul_mat",        2, { F32(5, 4, 2, 1), F32(5, 3, 2, 1) }, b_mul_mat },
    { "mul_mat bcast",  2, { F32(5, 4, 1, 1), F32(5, 3, 2, 1) }, b_mul_mat },
    { "scale",          1, { F32(5, 3, 1, 1) }, b_scale },
    { "set",            2, { F32(6, 4, 1, 1), F32(3, 2, 1, 1) }, b_set },
    { "cpy",            1, { F32(4, 3, 1, 1) }, b_cpy },
    { "cont",           1, { F32(4, 3, 1, 1) }, b_cont },
    { "reshape",        1, { F32(6, 4, 1, 1) }, b_reshape },
    { "view",           1, { F32(6, 4, 1, 1) }, b_view },
    { "permute",        1, { F32(2, 3, 4, 1) }, b_permute },
    { "transpose",      1, { F32(4, 3, 1, 1) }, b_transpose },
    { "get_rows",       2, { F32(5, 6, 1, 1), IDX(7, 6) }, b_get_rows },
    { "soft_max(diag_mask_inf)", 1, { F32(5, 4, 2, 1) }, b_soft_max_masked },
    { "soft_max_ext",   2, { F32(5, 4, 2, 1), CONST(5, 4, 1, 1) }, b_soft_max_ext },
    { "rope",           2, { F32(8, 2, 3, 1), IDX(3, 40) }, b_rope },
    { "rope neox",      2, { F32(8, 2, 3, 1), IDX(3, 40) }, b_rope_neox },
    { "conv_2d (im2col)", 2, { F32(3, 2, 2, 2), F32(6, 5, 2, 1) }, b_conv_2d },
    { "im2col 1d",      2, { CONST(3, 2, 1, 1), F32(7, 2, 2, 1) }, b_im2col_1d },
    { "pool_2d avg",    1, { F32(6, 4, 2, 1) }, b_pool_avg },
    { "pool_2d max",    1, { F32(6, 4, 2, 1) }, b_pool_max },
    { "win_part",       1, { F32(3, 5, 4, 1) }, b_win_part },
    { "win_unpart",     1, { F32(3, 3, 3, 4) }, b_win_unpart },
    { "abs",            1, { F32K(5, 3, 1, 1) }, b_abs },
    { "sgn",            1, { F32K(5, 3, 1, 1) }, b_sgn },
    { "neg",            1, { F32(5, 3, 1, 1) }, b_neg },
    { "step",           1, { F32K(5, 3, 1, 1) }, b_step },
    { "relu",           1, { F32K(5, 3, 1, 1) }, b_relu },
    { "silu",           1, { F32(5, 3, 1, 1) }, b_silu },
    { "exp",            1, { F32(5, 3, 1, 1) }, b_exp },
    { "expm1",          1, { F32(5, 3, 1, 1) }, b_expm1 },
    { "softplus",       1, { F32(5, 3, 1, 1) }, b_softplus },
    { "tanh",           1, { F32(5, 3, 1, 1) }, b_tanh },
    { "sigmoid",        1, { F32(5, 3, 1, 1) }, b_sigmoid },
    { "swiglu_split",   2, { F32(5, 3, 1, 1), F32(5, 3, 1, 1) }, b_swiglu },
    { "cross_entropy_loss", 2, { F32(5, 3, 1, 1), CONST(5, 3, 1, 1) }, b_cross_entropy },
    { "flash_attn_ext gqa", 3, { F32(8, 3, 4, 1), F32(8, 5, 2, 1), F32(6, 5, 2, 1) }, b_flash_attn_ext },
    { "flash_attn_ext mask", 4, { F32(4, 3, 2, 1), F32(4, 5, 2, 1), F32(4, 5, 2, 1), CONST(5, 3, 1, 1) }, b_flash_attn_ext_mask },
    { "multi-use accumulation", 2, { F32(4, 4, 1, 1), F32(4, 4, 1, 1) }, b_multi_use },
};

// ---- running a case --------------------------------------------------------------------------------------

static ggml_backend_t g_backend;

static void fill_input(struct ggml_tensor * t, const struct grad_input * in) {
    oc_fill(t, in->lo, in->hi);
    if (!in->avoid_kink) {
        return;
    }
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                    const double v = oc_get(t, i0, i1, i2, i3);
                    oc_set(t, i0, i1, i2, i3, (float) (v < 0 ? v - 0.1 : v + 0.1));
                }
}

static double loss_value(struct ggml_cgraph * gb, struct ggml_tensor * loss) {
    const enum ggml_status st = ggml_backend_graph_compute(g_backend, gb);
    TH_EXPECT(st == GGML_STATUS_SUCCESS, "graph compute failed (%d)", (int) st);
    return *(const float *) loss->data;
}

// five-point central difference of the loss in the element p of a parameter
static double finite_difference(struct ggml_cgraph * gb, struct ggml_tensor * loss, float * p) {
    const float  x0 = *p;
    const double h  = 1e-3;
    double f[4];
    const double offs[4] = { -2 * h, -h, h, 2 * h };
    for (int k = 0; k < 4; k++) {
        *p   = (float) (x0 + offs[k]);
        f[k] = loss_value(gb, loss);
    }
    *p = x0;
    const double hr = ((double) (float) (x0 + h) - (double) (float) (x0 - h)) / 2.0; // the step actually taken
    return (f[0] - 8.0 * f[1] + 8.0 * f[2] - f[3]) / (12.0 * hr);
}

static void run_case(const struct grad_case * c) {
    struct ggml_init_params sp = { ggml_tensor_overhead() * 16, NULL, true };
    struct ggml_context * ctx_s = ggml_init(sp); // inputs and weights: a backend buffer of their own
    struct ggml_init_params cp = { 16u << 20, NULL, true };
    struct ggml_context * ctx_c = ggml_init(cp); // the graph: allocated by gallocr

    struct ggml_tensor * x[MAX_IN];
    for (int i = 0; i < c->n_in; i++) {
        x[i] = ggml_new_tensor(ctx_s, c->in[i].type, 4, c->in[i].ne);
        if (c->in[i].param) {
            ggml_set_param(x[i]);
        }
    }
    struct ggml_tensor * y = c->build(ctx_c, x);
    struct ggml_tensor * w = ggml_new_tensor(ctx_s, GGML_TYPE_F32, 4, y->ne);
    struct ggml_tensor * loss = ggml_sum(ctx_c, ggml_mul(ctx_c, y, w));
    ggml_set_loss(loss);
    ggml_set_output(loss);

    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx_s, g_backend);
    for (int i = 0; i < c->n_in; i++) {
        fill_input(x[i], &c->in[i]);
    }
    oc_fill(w, -1.0f, 1.0f);

    struct ggml_cgraph * gb = ggml_new_graph_custom(ctx_c, 1024, true);
    ggml_build_forward_expand(gb, loss);
    ggml_build_backward_expand(ctx_c, gb, NULL);
    for (int i = 0; i < c->n_in; i++) {
        struct ggml_tensor * g = ggml_graph_get_grad(gb, x[i]);
        TH_CHECK((g != NULL) == c->in[i].param, "%s: input %d has a gradient iff it is a parameter", c->name, i);
        if (g) {
            ggml_set_output(g);
        }
    }
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(g_backend));
    const bool allocated = ggml_gallocr_alloc_graph(galloc, gb);
    TH_CHECK(allocated, "%s: graph allocation", c->name);
    if (allocated) {
        ggml_graph_reset(gb);

        for (int i = 0; i < c->n_in; i++) {
            struct ggml_tensor * g = ggml_graph_get_grad(gb, x[i]);
            if (g == NULL) {
                continue;
            }
            double * fd = oc_alloc_ref(x[i]);
            ggml_backend_cpu_set_n_threads(g_backend, 1);
            for (int64_t k = 0; k < ggml_nelements(x[i]); k++) {
                fd[k] = finite_difference(gb, loss, (float *) x[i]->data + k);
            }
            ggml_backend_cpu_set_n_threads(g_backend, 2);
            loss_value(gb, loss); // the analytic gradient at the unperturbed inputs
            char what[96];
            snprintf(what, sizeof(what), "%s: d/d input %d vs finite differences", c->name, i);
            oc_compare(what, 2, g, fd, 5e-3, 1e-2);
            free(fd);
        }
    }
    ggml_gallocr_free(galloc);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx_c);
    ggml_free(ctx_s);
}

// ---- flash_attn_back vs the backward pass of the composed attention -------------------------------------

static void test_flash_attn_back(void) {
    const int64_t D = 6, Dv = 5, N = 4, M = 7, H = 4, Hkv = 2;
    struct ggml_context * ctx = oc_ctx(16);
    struct ggml_tensor * q = oc_rand(ctx, GGML_TYPE_F32, D, N, H, 1, -1, 1);
    struct ggml_tensor * k = oc_rand(ctx, GGML_TYPE_F32, D, M, Hkv, 1, -1, 1);
    struct ggml_tensor * v = oc_rand(ctx, GGML_TYPE_F32, M, Dv, Hkv, 1, -1, 1); // transposed, as the op takes it
    struct ggml_tensor * d = oc_rand(ctx, GGML_TYPE_F32, Dv, N, H, 1, -1, 1);
    ggml_set_param(q);
    ggml_set_param(k);
    ggml_set_param(v);

    // O = V softmax(mask(K^T Q) / sqrt(D)); loss = sum(O * d), so dL/dO = d
    struct ggml_tensor * kq = ggml_diag_mask_inf(ctx, ggml_mul_mat(ctx, k, q), (int) (M - N)); // [M, N, H]
    struct ggml_tensor * p  = ggml_soft_max_ext(ctx, kq, NULL, 1.0f / sqrtf((float) D), 0.0f);
    struct ggml_tensor * o  = ggml_mul_mat(ctx, v, p);                                        // [Dv, N, H]
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, o, d));
    ggml_set_loss(loss);
    struct ggml_cgraph * gb = ggml_new_graph_custom(ctx, 512, true);
    ggml_build_forward_expand(gb, loss);
    ggml_build_backward_expand(ctx, gb, NULL);

    struct ggml_tensor * fb = ggml_flash_attn_back(ctx, q, k, v, d, true);
    TH_CHECK(fb->op == GGML_OP_FLASH_ATTN_BACK && fb->type == GGML_TYPE_F32, "flash_attn_back node");
    ggml_build_forward_expand(gb, fb);
    ggml_graph_reset(gb);
    for (int nth = 1; nth <= 3; nth += 2) {
        TH_CHECK(ggml_graph_compute_with_ctx(ctx, gb, nth) == GGML_STATUS_SUCCESS, "flash_attn_back compute");
        struct ggml_tensor * src[3] = { q, k, v };
        size_t offs = 0;
        for (int s = 0; s < 3; s++) {
            double * ref = oc_read(ggml_graph_get_grad(gb, src[s]));
            struct ggml_tensor * part = ggml_view_4d(ctx, fb, src[s]->ne[0], src[s]->ne[1], src[s]->ne[2], src[s]->ne[3],
                                                     sizeof(float) * src[s]->ne[0], sizeof(float) * src[s]->ne[0] * src[s]->ne[1],
                                                     sizeof(float) * src[s]->ne[0] * src[s]->ne[1] * src[s]->ne[2], offs);
            TH_CHECK(offs % GGML_MEM_ALIGN == 0, "flash_attn_back: part %d aligned", s);
            oc_compare(s == 0 ? "flash_attn_back dq" : s == 1 ? "flash_attn_back dk" : "flash_attn_back dv", nth, part, ref,
                       1e-5, 1e-4);
            offs += GGML_PAD(ggml_nbytes(src[s]), GGML_MEM_ALIGN);
            free(ref);
        }
    }
    ggml_free(ctx);
}

// ---- gradient accumulation over micro-batches ------------------------------------------------------------

// loss(W, b) = sum((W x + b - t)^2) over the columns of x: additive over samples, so the gradient of a batch is
// the sum of the gradients of its parts
struct lsq_graph {
    struct ggml_context * ctx;
    struct ggml_tensor  * x, * t, * loss;
    struct ggml_cgraph  * gb;
};

static struct lsq_graph lsq_build(struct ggml_tensor * W, struct ggml_tensor * b, int64_t n_cols, struct ggml_tensor ** grad_accs_of_wb) {
    struct lsq_graph g;
    g.ctx = oc_ctx(16);
    g.x = ggml_new_tensor_2d(g.ctx, GGML_TYPE_F32, W->ne[0], n_cols);
    g.t = ggml_new_tensor_2d(g.ctx, GGML_TYPE_F32, W->ne[1], n_cols);
    struct ggml_tensor * y = ggml_add(g.ctx, ggml_mul_mat(g.ctx, W, g.x), b);
    g.loss = ggml_sum(g.ctx, ggml_sqr(g.ctx, ggml_sub(g.ctx, y, g.t)));
    ggml_set_loss(g.loss);
    g.gb = ggml_new_graph_custom(g.ctx, 256, true);
    ggml_build_forward_expand(g.gb, g.loss);
    struct ggml_tensor * accs[256] = { 0 };
    if (grad_accs_of_wb) {
        for (int i = 0; i < ggml_graph_n_nodes(g.gb); i++) {
            const struct ggml_tensor * node = ggml_graph_node(g.gb, i);
            accs[i] = node == W ? grad_accs_of_wb[0] : node == b ? grad_accs_of_wb[1] : NULL;
        }
    }
    ggml_build_backward_expand(g.ctx, g.gb, grad_accs_of_wb ? accs : NULL);
    return g;
}

static void copy_cols(struct ggml_tensor * dst, const float * src, int64_t col0) {
    memcpy(dst->data, src + col0 * dst->ne[0], ggml_nbytes(dst));
}

static void test_grad_accumulation(void) {
    const int64_t n_in = 5, n_out = 3, n_mb = 4;
    struct ggml_context * ctx_w = oc_ctx(1);
    struct ggml_tensor * W = oc_rand(ctx_w, GGML_TYPE_F32, n_in, n_out, 1, 1, -1, 1);
    struct ggml_tensor * b = oc_rand(ctx_w, GGML_TYPE_F32, n_out, 1, 1, 1, -1, 1);
    ggml_set_param(W);
    ggml_set_param(b);
    struct ggml_tensor * accs[2] = { ggml_dup_tensor(ctx_w, W), ggml_dup_tensor(ctx_w, b) };
    float xs[5 * 8], ts[3 * 8];
    for (int i = 0; i < 5 * 8; i++) xs[i] = oc_uniform(-1, 1);
    for (int i = 0; i < 3 * 8; i++) ts[i] = oc_uniform(-1, 1);

    struct lsq_graph micro = lsq_build(W, b, n_mb, accs);
    struct lsq_graph full  = lsq_build(W, b, 2 * n_mb, NULL);
    TH_CHECK(ggml_graph_get_grad_acc(micro.gb, W) == accs[0] && ggml_graph_get_grad_acc(micro.gb, b) == accs[1],
             "the accumulators passed in grad_accs are the graph's");
    TH_CHECK(ggml_graph_get_grad_acc(full.gb, W) == NULL, "no accumulator for W without grad_accs");

    // the accumulator holds garbage until reset
    for (int64_t i = 0; i < ggml_nelements(W); i++) ((float *) accs[0]->data)[i] = 123.0f;
    ggml_graph_reset(micro.gb);
    bool zeroed = true;
    for (int64_t i = 0; i < ggml_nelements(W); i++) zeroed = zeroed && ((float *) accs[0]->data)[i] == 0.0f;
    TH_CHECK(zeroed, "ggml_graph_reset zeroes the gradient accumulators");
    TH_CHECK(*(float *) ggml_graph_get_grad_acc(micro.gb, micro.loss)->data == 1.0f, "ggml_graph_reset sets the loss gradient to 1");

    for (int mb = 0; mb < 2; mb++) {
        copy_cols(micro.x, xs, mb * n_mb);
        copy_cols(micro.t, ts, mb * n_mb);
        TH_CHECK(ggml_graph_compute_with_ctx(micro.ctx, micro.gb, 2) == GGML_STATUS_SUCCESS, "micro-batch %d", mb);
    }
    copy_cols(full.x, xs, 0);
    copy_cols(full.t, ts, 0);
    ggml_graph_reset(full.gb);
    TH_CHECK(ggml_graph_compute_with_ctx(full.ctx, full.gb, 2) == GGML_STATUS_SUCCESS, "full batch");

    for (int s = 0; s < 2; s++) {
        double * ref = oc_read(ggml_graph_get_grad(full.gb, s == 0 ? W : b));
        oc_compare(s == 0 ? "accumulated dW == full-batch dW" : "accumulated db == full-batch db", 2, accs[s], ref, 1e-5, 1e-5);
        free(ref);
    }
    ggml_free(micro.ctx);
    ggml_free(full.ctx);
    ggml_free(ctx_w);
}

// ---- training a small MLP with AdamW ---------------------------------------------------------------------

static void test_mlp_adamw(void) {
    const int64_t n_in = 4, n_hid = 16, n_cls = 3, n_samples = 48;
    const int n_steps = 40;
    struct ggml_context * ctx = oc_ctx(32);

    // data: the class of a sample is the argmax of a fixed random linear map of it
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, n_in, n_samples, 1, 1, -1, 1);
    struct ggml_tensor * teacher = oc_rand(ctx, GGML_TYPE_F32, n_in, n_cls, 1, 1, -1, 1);
    struct ggml_tensor * labels = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_cls, n_samples);
    for (int64_t s = 0; s < n_samples; s++) {
        int64_t best = 0;
        double best_v = -INFINITY;
        for (int64_t c = 0; c < n_cls; c++) {
            double v = 0;
            for (int64_t i = 0; i < n_in; i++) v += oc_get(teacher, i, c, 0, 0) * oc_get(x, i, s, 0, 0);
            if (v > best_v) { best_v = v; best = c; }
        }
        for (int64_t c = 0; c < n_cls; c++) oc_set(labels, c, s, 0, 0, c == best ? 1.0f : 0.0f);
    }

    struct ggml_tensor * params[4] = {
        oc_rand(ctx, GGML_TYPE_F32, n_in, n_hid, 1, 1, -0.5f, 0.5f),  // W1
        oc_rand(ctx, GGML_TYPE_F32, n_hid, 1, 1, 1, -0.1f, 0.1f),     // b1
        oc_rand(ctx, GGML_TYPE_F32, n_hid, n_cls, 1, 1, -0.5f, 0.5f), // W2
        oc_rand(ctx, GGML_TYPE_F32, n_cls, 1, 1, 1, -0.1f, 0.1f),     // b2
    };
    for (int i = 0; i < 4; i++) ggml_set_param(params[i]);
    struct ggml_tensor * h      = ggml_silu(ctx, ggml_add(ctx, ggml_mul_mat(ctx, params[0], x), params[1]));
    struct ggml_tensor * logits = ggml_add(ctx, ggml_mul_mat(ctx, params[2], h), params[3]);
    struct ggml_tensor * loss   = ggml_cross_entropy_loss(ctx, logits, labels);
    ggml_set_loss(loss);
    struct ggml_tensor * probs  = ggml_soft_max(ctx, logits); // to count the correct predictions

    struct ggml_cgraph * gb = ggml_new_graph_custom(ctx, 1024, true);
    ggml_build_forward_expand(gb, loss);
    ggml_build_forward_expand(gb, probs);
    ggml_build_backward_expand(ctx, gb, NULL);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7);
    for (int i = 0; i < 4; i++) {
        struct ggml_tensor * m = ggml_dup_tensor(ctx, params[i]);
        struct ggml_tensor * v = ggml_dup_tensor(ctx, params[i]);
        ggml_build_forward_expand(gb, ggml_opt_step_adamw(ctx, params[i], ggml_graph_get_grad(gb, params[i]), m, v, hp));
    }
    // random garbage in the moments: ggml_graph_reset must clear them
    for (int i = 0; i < ggml_graph_n_nodes(gb); i++) {
        struct ggml_tensor * node = ggml_graph_node(gb, i);
        if (node->op == GGML_OP_OPT_STEP_ADAMW) {
            oc_fill(node->src[2], 5, 6);
            oc_fill(node->src[3], 5, 6);
        }
    }
    ggml_graph_reset(gb);
    bool moments_zero = true;
    for (int i = 0; i < ggml_graph_n_nodes(gb); i++) {
        const struct ggml_tensor * node = ggml_graph_node(gb, i);
        for (int s = 2; s <= 3 && node->op == GGML_OP_OPT_STEP_ADAMW; s++) {
            for (int64_t j = 0; j < ggml_nelements(node->src[s]); j++) {
                moments_zero = moments_zero && ((const float *) node->src[s]->data)[j] == 0.0f;
            }
        }
    }
    TH_CHECK(moments_zero, "ggml_graph_reset clears the AdamW moments");

    const float alpha = 0.05f, beta1 = 0.9f, beta2 = 0.999f;
    double first = 0.0, last = 0.0;
    int correct = 0;
    for (int step = 1; step <= n_steps; step++) {
        const float p[7] = { alpha, beta1, beta2, 1e-8f, 0.0f, 1.0f / (1.0f - powf(beta1, (float) step)),
                             1.0f / (1.0f - powf(beta2, (float) step)) };
        memcpy(hp->data, p, sizeof(p));
        TH_EXPECT(ggml_graph_compute_with_ctx(ctx, gb, 2) == GGML_STATUS_SUCCESS, "training step %d", step);
        last = *(const float *) loss->data; // the loss before this step's update
        if (step == 1) {
            first = last;
        }
        correct = 0;
        for (int64_t s = 0; s < n_samples; s++) {
            int64_t best = 0;
            for (int64_t c = 1; c < n_cls; c++) best = oc_get(probs, c, s, 0, 0) > oc_get(probs, best, s, 0, 0) ? c : best;
            correct += oc_get(labels, best, s, 0, 0) == 1.0;
        }
    }
    fprintf(stderr, "  mlp: loss %.4f -> %.4f after %d AdamW steps, %d/%d correct\n", first, last, n_steps - 1, correct,
            (int) n_samples);
    TH_CHECK(last < 0.5 * first, "AdamW training lowers the cross-entropy loss (%.4f -> %.4f)", first, last);
    TH_CHECK(correct >= (int) (0.85 * n_samples), "the trained MLP classifies most samples (%d/%d)", correct, (int) n_samples);
    ggml_free(ctx);
}

int main(void) {
    g_backend = ggml_backend_cpu_init();
    if (g_backend == NULL) {
        fprintf(stderr, "FAIL: no CPU backend\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        run_case(&cases[i]);
    }
    ggml_backend_free(g_backend);
    test_flash_attn_back();
    test_grad_accumulation();
    test_mlp_adamw();
    return th_finish();
}
