// CROSS_ENTROPY_LOSS, CROSS_ENTROPY_LOSS_BACK, OPT_STEP_ADAMW and OPT_STEP_SGD on the CPU, 1 to 4 threads,
// against double-precision references written here from the definitions:
//   loss   = -(1/nrows) sum_rows sum_i labels_i * log_softmax(logits)_i
//   dloss  = (softmax(logits) - labels) * g / nrows, also checked against central finite differences
//   AdamW  = PyTorch's AdamW (decoupled weight decay, bias-corrected moments), several steps
//   SGD    = w - lr * wd * w - lr * g, several steps

#include "ggml-ops-check.h"

// ---- double-precision references -------------------------------------------------------------------------

// logits / labels are read with oc_read: n x nr doubles, row-major in the tensor's logical shape
static double ref_loss(const double * x, const double * y, int64_t n, int64_t nr) {
    double total = 0.0;
    for (int64_t r = 0; r < nr; r++) {
        const double * xr = x + r * n;
        double max = xr[0];
        for (int64_t i = 1; i < n; i++) max = xr[i] > max ? xr[i] : max;
        double s = 0.0;
        for (int64_t i = 0; i < n; i++) s += exp(xr[i] - max);
        const double lse = max + log(s);
        for (int64_t i = 0; i < n; i++) total -= y[r * n + i] * (xr[i] - lse);
    }
    return total / (double) nr;
}

// labels: random probability rows (or one-hot rows)
static void fill_labels(struct ggml_tensor * t, bool one_hot) {
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                const int64_t hot = (int64_t) oc_uniform(0, (float) t->ne[0] - 0.01f);
                double sum = 0.0;
                float tmp[64];
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                    tmp[i0] = one_hot ? (i0 == hot ? 1.0f : 0.0f) : oc_uniform(0.01f, 1.0f);
                    sum += tmp[i0];
                }
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                    oc_set(t, i0, i1, i2, i3, (float) (tmp[i0] / sum));
                }
            }
}

// ---- CROSS_ENTROPY_LOSS ----------------------------------------------------------------------------------

static void loss_case(int nth, bool one_hot, bool transposed) {
    struct ggml_context * ctx = oc_ctx(8);
    const int64_t n = 11, ne1 = 5, ne2 = 3;
    struct ggml_tensor * a = transposed ? oc_rand_transposed(ctx, GGML_TYPE_F32, n, ne1, ne2, 1, -4, 4)
                                        : oc_rand(ctx, GGML_TYPE_F32, n, ne1, ne2, 1, -4, 4);
    struct ggml_tensor * b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n, ne1, ne2, 1);
    fill_labels(b, one_hot);
    double * x = oc_read(a), * y = oc_read(b);
    double ref[1] = { ref_loss(x, y, n, ne1 * ne2) };
    struct ggml_tensor * r = ggml_cross_entropy_loss(ctx, a, b);
    TH_CHECK(r->op == GGML_OP_CROSS_ENTROPY_LOSS && ggml_is_scalar(r) && r->type == GGML_TYPE_F32 &&
             r->src[0] == a && r->src[1] == b, "cross_entropy_loss node");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "cross_entropy_loss compute");
    char name[96];
    snprintf(name, sizeof(name), "cross_entropy_loss%s%s", one_hot ? " one-hot" : "", transposed ? " transposed" : "");
    oc_compare(name, nth, r, ref, 1e-6, 1e-6);
    free(x);
    free(y);
    ggml_free(ctx);
}

// equal logits: softmax is uniform, so any label distribution costs exactly log(n)
static void test_loss_closed_form(void) {
    struct ggml_context * ctx = oc_ctx(4);
    const int64_t n = 37;
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, 7);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, 7);
    for (int64_t i = 0; i < ggml_nelements(a); i++) ((float *) a->data)[i] = 2.5f;
    fill_labels(b, false);
    struct ggml_tensor * r = ggml_cross_entropy_loss(ctx, a, b);
    TH_CHECK(oc_compute(ctx, r, 3) == GGML_STATUS_SUCCESS, "closed form compute");
    const double got = *(const float *) r->data;
    TH_CHECK(fabs(got - log((double) n)) < 1e-6 * log((double) n), "uniform logits: loss %.9g == log(%d) %.9g", got,
             (int) n, log((double) n));
    ggml_free(ctx);
}

// ---- CROSS_ENTROPY_LOSS_BACK -----------------------------------------------------------------------------

static void loss_back_case(int nth, bool transposed) {
    struct ggml_context * ctx = oc_ctx(8);
    const int64_t n = 9, ne1 = 4, ne2 = 2, nr = ne1 * ne2;
    struct ggml_tensor * a = transposed ? oc_rand_transposed(ctx, GGML_TYPE_F32, n, ne1, ne2, 1, -3, 3)
                                        : oc_rand(ctx, GGML_TYPE_F32, n, ne1, ne2, 1, -3, 3);
    struct ggml_tensor * b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n, ne1, ne2, 1);
    fill_labels(b, false);
    struct ggml_tensor * g = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    const float gv = 0.75f;
    *(float *) g->data = gv;
    // llama.cpp's operand order: (scalar gradient, logits, labels)
    struct ggml_tensor * r = ggml_cross_entropy_loss_back(ctx, g, a, b);
    TH_CHECK(r->op == GGML_OP_CROSS_ENTROPY_LOSS_BACK && ggml_are_same_shape(r, a) && r->src[0] == g &&
             r->src[1] == a && r->src[2] == b, "cross_entropy_loss_back node");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "cross_entropy_loss_back compute");

    double * x = oc_read(a), * y = oc_read(b);
    // the gradient of gv * loss by central differences of the double-precision loss
    double * fd = oc_alloc_ref(r);
    const double h = 1e-5;
    for (int64_t k = 0; k < n * nr; k++) {
        const double keep = x[k];
        x[k] = keep + h;
        const double lp = ref_loss(x, y, n, nr);
        x[k] = keep - h;
        const double lm = ref_loss(x, y, n, nr);
        x[k] = keep;
        fd[k] = gv * (lp - lm) / (2.0 * h);
    }
    oc_compare(transposed ? "loss_back vs finite differences (transposed logits)" : "loss_back vs finite differences",
               nth, r, fd, 1e-6, 1e-6);

    // and against finite differences of our own CROSS_ENTROPY_LOSS node (float, so a coarse step): the two
    // ops must agree with each other, not only each with its formula
    if (!transposed) {
        struct ggml_tensor * loss = ggml_cross_entropy_loss(ctx, a, b);
        struct ggml_cgraph * gl = ggml_new_graph(ctx);
        ggml_build_forward_expand(gl, loss);
        double max_err = 0.0;
        const float step = 1e-2f;
        for (int64_t k = 0; k < n * nr; k++) {
            float * p = (float *) a->data + k;
            const float keep = *p;
            *p = keep + step;
            TH_EXPECT(ggml_graph_compute_with_ctx(ctx, gl, nth) == GGML_STATUS_SUCCESS, "loss compute (+)");
            const double lp = *(const float *) loss->data;
            *p = keep - step;
            TH_EXPECT(ggml_graph_compute_with_ctx(ctx, gl, nth) == GGML_STATUS_SUCCESS, "loss compute (-)");
            const double lm = *(const float *) loss->data;
            *p = keep;
            const double err = fabs(gv * (lp - lm) / (2.0 * step) - ((const float *) r->data)[k]);
            max_err = err > max_err ? err : max_err;
        }
        TH_CHECK(max_err < 2e-4, "loss_back vs finite differences of the loss node (threads %d): max abs err %g", nth, max_err);
    }
    free(fd);
    free(x);
    free(y);
    ggml_free(ctx);
}

// ---- OPT_STEP_ADAMW / OPT_STEP_SGD -----------------------------------------------------------------------

static void copy_to(double * dst, const struct ggml_tensor * t) {
    double * v = oc_read(t);
    memcpy(dst, v, sizeof(double) * (size_t) ggml_nelements(t));
    free(v);
}

static void adamw_case(int nth, bool grad_transposed) {
    struct ggml_context * ctx = oc_ctx(16);
    const int64_t ne0 = 7, ne1 = 5, ne2 = 2;
    struct ggml_tensor * w = oc_rand(ctx, GGML_TYPE_F32, ne0, ne1, ne2, 1, -1, 1);
    ggml_set_param(w);
    struct ggml_tensor * g = grad_transposed ? oc_rand_transposed(ctx, GGML_TYPE_F32, ne0, ne1, ne2, 1, -1, 1)
                                             : oc_rand(ctx, GGML_TYPE_F32, ne0, ne1, ne2, 1, -1, 1);
    struct ggml_tensor * m = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne0, ne1, ne2, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne0, ne1, ne2, 1);
    ggml_set_zero(m);
    ggml_set_zero(v);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7);
    struct ggml_tensor * r = ggml_opt_step_adamw(ctx, w, g, m, v, hp);
    TH_CHECK(r->op == GGML_OP_OPT_STEP_ADAMW && r->view_src == w && r->src[0] == w && r->src[1] == g && r->src[2] == m &&
             r->src[3] == v && r->src[4] == hp, "opt_step_adamw node is a view of the parameter");

    const int64_t N = ggml_nelements(w);
    double * rw = oc_alloc_ref(w), * rm = oc_alloc_ref(w), * rv = oc_alloc_ref(w), * rg = oc_alloc_ref(w);
    copy_to(rw, w);
    const float lr = 1e-2f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, wd = 0.1f;
    struct ggml_cgraph * gr = ggml_new_graph(ctx);
    ggml_build_forward_expand(gr, r);
    bool ok = true;
    for (int t = 1; t <= 6 && ok; t++) {
        oc_fill(g, -1, 1);
        copy_to(rg, g);
        // the bias corrections of step t, as a caller (llama.cpp's ggml-opt) passes them
        const double b1c = 1.0 - pow((double) beta1, t), b2c = 1.0 - pow((double) beta2, t);
        const float p[7] = { lr, beta1, beta2, eps, wd, (float) (1.0 / b1c), (float) (1.0 / b2c) };
        memcpy(hp->data, p, sizeof(p));
        ok = ggml_graph_compute_with_ctx(ctx, gr, nth) == GGML_STATUS_SUCCESS;
        TH_CHECK(ok, "opt_step_adamw compute (step %d)", t);
        // PyTorch AdamW with the hyper-parameters rounded to float as the op gets them
        for (int64_t i = 0; i < N; i++) {
            const double b1 = p[1], b2 = p[2];
            rw[i] *= 1.0 - (double) p[0] * (double) p[4];
            rm[i] = b1 * rm[i] + (1.0 - b1) * rg[i];
            rv[i] = b2 * rv[i] + (1.0 - b2) * rg[i] * rg[i];
            const double mhat = rm[i] / (1.0 - pow(b1, t)), vhat = rv[i] / (1.0 - pow(b2, t));
            rw[i] -= (double) p[0] * mhat / (sqrt(vhat) + (double) p[3]);
        }
        char name[96];
        snprintf(name, sizeof(name), "adamw step %d%s: w", t, grad_transposed ? " (grad transposed)" : "");
        oc_compare(name, nth, w, rw, 2e-6, 2e-6);
        snprintf(name, sizeof(name), "adamw step %d: m", t);
        oc_compare(name, nth, m, rm, 2e-6, 2e-6);
        snprintf(name, sizeof(name), "adamw step %d: v", t);
        oc_compare(name, nth, v, rv, 2e-6, 2e-6);
    }
    free(rw);
    free(rm);
    free(rv);
    free(rg);
    ggml_free(ctx);
}

static void sgd_case(int nth) {
    struct ggml_context * ctx = oc_ctx(8);
    struct ggml_tensor * w = oc_rand(ctx, GGML_TYPE_F32, 13, 6, 1, 1, -1, 1);
    ggml_set_param(w);
    struct ggml_tensor * g  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 13, 6);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor * r  = ggml_opt_step_sgd(ctx, w, g, hp);
    TH_CHECK(r->op == GGML_OP_OPT_STEP_SGD && r->view_src == w && r->src[1] == g && r->src[2] == hp,
             "opt_step_sgd node is a view of the parameter");
    double * rw = oc_alloc_ref(w), * rg = oc_alloc_ref(w);
    copy_to(rw, w);
    struct ggml_cgraph * gr = ggml_new_graph(ctx);
    ggml_build_forward_expand(gr, r);
    for (int t = 1; t <= 4; t++) {
        oc_fill(g, -1, 1);
        copy_to(rg, g);
        const float p[2] = { 0.05f * (float) t, t == 3 ? 0.0f : 0.2f }; // learning rate schedule, no decay once
        memcpy(hp->data, p, sizeof(p));
        TH_CHECK(ggml_graph_compute_with_ctx(ctx, gr, nth) == GGML_STATUS_SUCCESS, "opt_step_sgd compute (step %d)", t);
        for (int64_t i = 0; i < ggml_nelements(w); i++) {
            rw[i] = rw[i] - (double) p[0] * (double) p[1] * rw[i] - (double) p[0] * rg[i];
        }
        char name[64];
        snprintf(name, sizeof(name), "sgd step %d", t);
        oc_compare(name, nth, w, rw, 1e-6, 1e-6);
    }
    free(rw);
    free(rg);
    ggml_free(ctx);
}

// ---- refused inputs: a clear GGML_STATUS_FAILED, nothing written -----------------------------------------

static void test_refused(void) {
    struct ggml_context * ctx = oc_ctx(4);
    struct ggml_tensor * a16 = oc_rand(ctx, GGML_TYPE_F16, 8, 3, 1, 1, -1, 1);
    struct ggml_tensor * b16 = oc_rand(ctx, GGML_TYPE_F16, 8, 3, 1, 1, 0, 1);
    TH_CHECK(oc_compute(ctx, ggml_cross_entropy_loss(ctx, a16, b16), 2) == GGML_STATUS_FAILED,
             "F16 cross_entropy_loss -> GGML_STATUS_FAILED");
    struct ggml_tensor * w = oc_rand(ctx, GGML_TYPE_F16, 8, 3, 1, 1, -1, 1);
    ggml_set_param(w);
    struct ggml_tensor * g = oc_rand(ctx, GGML_TYPE_F16, 8, 3, 1, 1, -1, 1);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    const ggml_fp16_t before = ((const ggml_fp16_t *) w->data)[0];
    TH_CHECK(oc_compute(ctx, ggml_opt_step_sgd(ctx, w, g, hp), 1) == GGML_STATUS_FAILED,
             "F16 opt_step_sgd -> GGML_STATUS_FAILED");
    TH_CHECK(((const ggml_fp16_t *) w->data)[0] == before, "refused step leaves the parameter alone");
    ggml_free(ctx);
}

int main(void) {
    ggml_log_set(NULL, NULL);
    for (int nth = 1; nth <= 4; nth++) {
        loss_case(nth, false, false);
        loss_case(nth, true, false);
        loss_case(nth, false, true);
        loss_back_case(nth, false);
        loss_back_case(nth, true);
        adamw_case(nth, false);
        adamw_case(nth, true);
        sgd_case(nth);
    }
    test_loss_closed_form();
    test_refused();
    return th_finish();
}
