// ggml-opt (ggml-opt.h) on problems whose answers the test computes itself, in double precision:
//  - ggml_opt_fit recovers y = 3x - 2 by linear regression (MSE, AdamW, 2 micro-batches per step, val split);
//  - result bookkeeping: loss (mean / sum / cross-entropy) with its uncertainty, accuracy, predictions;
//  - dataset shuffling permutes datapoints with their labels;
//  - gradient accumulation over 2 micro-batches equals the gradient of one batch of both;
//  - one and two SGD / AdamW steps against the update rules written out here.

#include "ggml-opt.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "harness.h"

static ggml_backend_t       g_backend;
static ggml_backend_sched_t g_sched;

// ---- a linear model out = a * x + b (a, b scalars, x [1, nbatch]) --------------------------------------------

struct lin_model {
    struct ggml_context * ctx_static;  // a, b, x
    struct ggml_context * ctx_compute; // everything else
    ggml_backend_buffer_t buf;
    struct ggml_tensor  * a, * b, * x, * out;
};

static void lin_init(struct lin_model * m, int64_t nbatch, float a0, float b0) {
    struct ggml_init_params sp = { 8 * ggml_tensor_overhead(), NULL, true };
    m->ctx_static = ggml_init(sp);
    struct ggml_init_params cp = { 4096 * ggml_tensor_overhead() + 4 * ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true),
                                   NULL, true };
    m->ctx_compute = ggml_init(cp);
    m->a = ggml_new_tensor_1d(m->ctx_static, GGML_TYPE_F32, 1);
    m->b = ggml_new_tensor_1d(m->ctx_static, GGML_TYPE_F32, 1);
    m->x = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, 1, nbatch);
    ggml_set_name(m->a, "a");
    ggml_set_name(m->b, "b");
    ggml_set_param(m->a);
    ggml_set_param(m->b);
    m->buf = ggml_backend_alloc_ctx_tensors(m->ctx_static, g_backend);
    ggml_backend_tensor_set(m->a, &a0, 0, sizeof(float));
    ggml_backend_tensor_set(m->b, &b0, 0, sizeof(float));
    m->out = ggml_add(m->ctx_compute, ggml_mul(m->ctx_compute, m->x, m->a), m->b);
}

static void lin_free(struct lin_model * m) {
    ggml_backend_buffer_free(m->buf);
    ggml_free(m->ctx_static);
    ggml_free(m->ctx_compute);
}

static float get1(struct ggml_tensor * t) {
    float v;
    ggml_backend_tensor_get(t, &v, 0, sizeof(float));
    return v;
}

// dataset of n points x_i spread over [-1, 1] with labels y_i = 3 x_i - 2
static ggml_opt_dataset_t line_dataset(int64_t n) {
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 1, 1, n, 1);
    float * x = (float *) ggml_opt_dataset_data(ds)->data;
    float * y = (float *) ggml_opt_dataset_labels(ds)->data;
    for (int64_t i = 0; i < n; i++) {
        x[i] = -1.0f + 2.0f * (float) i / (float) (n - 1);
        y[i] = 3.0f * x[i] - 2.0f;
    }
    return ds;
}

// MSE gradient of mean((a x + b - y)^2) over the given points, in double
static void mse_grad(const float * x, const float * y, int64_t n, double a, double b, double * ga, double * gb) {
    *ga = *gb = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double r = a * x[i] + b - y[i];
        *ga += 2.0 * r * x[i] / (double) n;
        *gb += 2.0 * r / (double) n;
    }
}

// ---- 1. linear regression with ggml_opt_fit --------------------------------------------------------------------

static struct ggml_opt_optimizer_params fit_pars(void * ud) {
    (void) ud; // the epoch
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    p.adamw.alpha = 0.05f;
    return p;
}

static void test_fit_linear(void) {
    struct lin_model m;
    lin_init(&m, 8, 0.0f, 0.0f);
    ggml_opt_dataset_t ds = line_dataset(64);
    // logical batch 16 = 2 physical batches of 8 per AdamW step; a quarter held out for validation
    ggml_opt_fit(g_sched, m.ctx_compute, m.x, m.out, ds, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_ADAMW,
                 fit_pars, 150, 16, 0.25f, true);
    const float a = get1(m.a), b = get1(m.b);
    fprintf(stderr, "  fit: a = %.5f (3), b = %.5f (-2)\n", a, b);
    TH_CHECK(fabsf(a - 3.0f) < 1e-2f, "fitted slope %f, want 3", a);
    TH_CHECK(fabsf(b + 2.0f) < 1e-2f, "fitted intercept %f, want -2", b);
    ggml_opt_dataset_free(ds);
    lin_free(&m);
}

// ---- 2. result bookkeeping ------------------------------------------------------------------------------------

// forward only: out = scale(x, 1) of [ne, nbatch], data random, evaluated in nbatches batches (all eval)
static void check_results(enum ggml_opt_loss_type loss_type, const char * name) {
    const int64_t ne = 5, nbatch = 4, nb = 6, ndata = nbatch * nb;
    struct ggml_init_params sp = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx_s = ggml_init(sp);
    struct ggml_init_params cp = { 1024 * ggml_tensor_overhead() + 4 * ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true),
                                   NULL, true };
    struct ggml_context * ctx_c = ggml_init(cp);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx_s, GGML_TYPE_F32, ne, nbatch);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx_s, g_backend);
    struct ggml_tensor * out = ggml_scale(ctx_c, x, 1.0f);

    const bool ce = loss_type == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY;
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, ne, ce ? ne : 0, ndata, 1);
    float * d = (float *) ggml_opt_dataset_data(ds)->data;
    float * l = ce ? (float *) ggml_opt_dataset_labels(ds)->data : NULL;
    uint64_t s = 12345;
    for (int64_t i = 0; i < ndata * ne; i++) {
        d[i] = (float) (th_xorshift64(&s) % 2000) / 500.0f - 2.0f;
    }
    int32_t label_of[24];
    for (int64_t i = 0; i < ndata; i++) {
        label_of[i] = (int32_t) (th_xorshift64(&s) % (uint64_t) ne);
        for (int64_t j = 0; ce && j < ne; j++) {
            l[i * ne + j] = j == label_of[i] ? 1.0f : 0.0f;
        }
    }

    // expected, per batch, in double
    double bl[6], sum = 0.0, sum_sq = 0.0;
    int64_t ncorrect = 0;
    int32_t pred_want[24];
    for (int64_t ib = 0; ib < nb; ib++) {
        double acc = 0.0;
        for (int64_t k = 0; k < nbatch; k++) {
            const float * row = d + (ib * nbatch + k) * ne;
            int32_t am = 0;
            double mx = row[0], se = 0.0, rsum = 0.0;
            for (int64_t j = 0; j < ne; j++) {
                if (row[j] > mx) {
                    mx = row[j];
                    am = (int32_t) j;
                }
                rsum += row[j];
            }
            for (int64_t j = 0; j < ne; j++) {
                se += exp(row[j] - mx);
            }
            pred_want[ib * nbatch + k] = am;
            ncorrect += am == label_of[ib * nbatch + k];
            if (ce) {
                acc += -(row[label_of[ib * nbatch + k]] - mx - log(se)) / (double) nbatch; // mean over the rows
            } else {
                acc += rsum;
            }
        }
        bl[ib] = loss_type == GGML_OPT_LOSS_TYPE_MEAN ? acc / (double) (ne * nbatch) : acc;
        sum += bl[ib];
        sum_sq += bl[ib] * bl[ib];
    }
    const double mean = sum / nb, var = sum_sq / nb - mean * mean;
    const bool per_dp = loss_type != GGML_OPT_LOSS_TYPE_SUM;
    const double loss_want = per_dp ? mean : sum;
    const double unc_want  = per_dp ? sqrt(var / (nb - 1)) : sqrt(var * nb / (nb - 1));

    struct ggml_opt_params op = ggml_opt_default_params(g_sched, loss_type);
    op.ctx_compute = ctx_c;
    op.inputs      = x;
    op.outputs     = out;
    op.build_type  = GGML_OPT_BUILD_TYPE_FORWARD;
    ggml_opt_context_t oc = ggml_opt_init(op);
    TH_CHECK(oc != NULL, "%s: ggml_opt_init", name);
    ggml_opt_result_t r = ggml_opt_result_init();
    ggml_opt_epoch(oc, ds, NULL, r, 0, NULL, NULL); // idata_split 0: everything is evaluation

    int64_t nd;
    double loss, unc, accu, accu_unc;
    ggml_opt_result_ndata(r, &nd);
    ggml_opt_result_loss(r, &loss, &unc);
    ggml_opt_result_accuracy(r, &accu, &accu_unc);
    TH_CHECK(nd == ndata, "%s: ndata %lld", name, (long long) nd);
    TH_CHECK(fabs(loss - loss_want) < 1e-4 * (1.0 + fabs(loss_want)), "%s: loss %.7f, want %.7f", name, loss, loss_want);
    TH_CHECK(fabs(unc - unc_want) < 1e-4 * (1.0 + unc_want), "%s: loss uncertainty %.7f, want %.7f", name, unc, unc_want);
    if (ce) {
        const double acc_want = (double) ncorrect / (double) ndata;
        TH_CHECK(fabs(accu - acc_want) < 1e-12, "%s: accuracy %f, want %f", name, accu, acc_want);
        TH_CHECK(fabs(accu_unc - sqrt(acc_want * (1 - acc_want) / (ndata - 1))) < 1e-12, "%s: accuracy uncertainty", name);
        int32_t pred[24];
        ggml_opt_result_pred(r, pred);
        TH_CHECK(memcmp(pred, pred_want, sizeof(pred)) == 0, "%s: predictions are the argmax of each output row", name);
        TH_CHECK(ggml_opt_pred(oc) != NULL && ggml_opt_ncorrect(oc) != NULL, "%s: pred and ncorrect tensors", name);
    } else {
        TH_CHECK(isnan(accu), "%s: no accuracy without labels (got %f)", name, accu);
    }

    // reset empties the result
    ggml_opt_result_reset(r);
    ggml_opt_result_ndata(r, &nd);
    ggml_opt_result_loss(r, &loss, &unc);
    TH_CHECK(nd == 0 && loss == 0.0 && isnan(unc), "%s: reset result", name);

    ggml_opt_result_free(r);
    ggml_opt_free(oc);
    ggml_opt_dataset_free(ds);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx_s);
    ggml_free(ctx_c);
}

// ---- 3. shuffling -------------------------------------------------------------------------------------------

static void test_shuffle(void) {
    const int64_t n = 40;
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_I32, 2, 1, n, 1);
    float   * d = (float *) ggml_opt_dataset_data(ds)->data;
    int32_t * l = (int32_t *) ggml_opt_dataset_labels(ds)->data;
    for (int64_t i = 0; i < n; i++) {
        d[2 * i]     = (float) i;
        d[2 * i + 1] = (float) (1000 + i);
        l[i]         = (int32_t) (7 * i + 3);
    }
    // a context only for its RNG
    struct ggml_opt_params op = ggml_opt_default_params(g_sched, GGML_OPT_LOSS_TYPE_SUM);
    ggml_opt_context_t oc = ggml_opt_init(op);

    // shuffle the first 24 only: the last 16 stay where they are
    ggml_opt_dataset_shuffle(oc, ds, 24);
    float   db[80];
    int32_t lb[40];
    ggml_opt_dataset_get_batch_host(ds, db, sizeof(db), lb, 0);
    bool pairs = true, tail = true, moved = false, seen[40] = { false };
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = (int64_t) db[2 * i];
        pairs = pairs && k >= 0 && k < n && db[2 * i + 1] == (float) (1000 + k) && lb[i] == 7 * k + 3;
        if (k >= 0 && k < n) {
            seen[k] = true;
        }
        tail  = tail && (i < 24 || k == i);
        moved = moved || k != i;
    }
    bool all = true;
    for (int64_t i = 0; i < n; i++) {
        all = all && seen[i];
    }
    TH_CHECK(pairs, "shuffled datapoints keep their labels");
    TH_CHECK(all, "shuffling is a permutation");
    TH_CHECK(tail, "a partial shuffle leaves the rest in place");
    TH_CHECK(moved, "shuffling changes the order");

    // full shuffle, then batches of 8 through backend tensors
    ggml_opt_dataset_shuffle(oc, ds, -1);
    struct ggml_init_params ip = { 2 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * tb = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 8);
    struct ggml_tensor * tl = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 1, 8);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, g_backend);
    pairs = true;
    for (int64_t ib = 0; ib < 5; ib++) {
        ggml_opt_dataset_get_batch(ds, tb, tl, ib);
        ggml_backend_tensor_get(tb, db, 0, ggml_nbytes(tb));
        ggml_backend_tensor_get(tl, lb, 0, ggml_nbytes(tl));
        for (int i = 0; i < 8; i++) {
            const int64_t k = (int64_t) db[2 * i];
            pairs = pairs && db[2 * i + 1] == (float) (1000 + k) && lb[i] == 7 * k + 3;
        }
    }
    TH_CHECK(pairs, "batches of a shuffled dataset keep the pairs");
    TH_CHECK(ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 2, 1, 10, 3) == NULL, "ndata not a multiple of the shard size is refused");
    TH_CHECK(ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 0, 1, 10, 1) == NULL, "an empty datapoint is refused");

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_opt_free(oc);
    ggml_opt_dataset_free(ds);
}

// ---- 4. gradient accumulation ------------------------------------------------------------------------------

static void test_grad_accumulation(void) {
    ggml_opt_dataset_t ds = line_dataset(4);
    const float * xs = (const float *) ggml_opt_dataset_data(ds)->data;
    const float * ys = (const float *) ggml_opt_dataset_labels(ds)->data;
    const float a0 = 0.5f, b0 = 0.25f;

    float grads[2][2]; // [split][a, b]
    for (int split = 0; split < 2; split++) {
        struct lin_model m;
        lin_init(&m, split ? 2 : 4, a0, b0);
        struct ggml_opt_params op = ggml_opt_default_params(g_sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
        op.ctx_compute = m.ctx_compute;
        op.inputs      = m.x;
        op.outputs     = m.out;
        op.build_type  = GGML_OPT_BUILD_TYPE_GRAD;
        op.opt_period  = split ? 2 : 1;
        ggml_opt_context_t oc = ggml_opt_init(op);
        for (int ib = 0; ib < (split ? 2 : 1); ib++) {
            ggml_opt_alloc(oc, true);
            ggml_opt_dataset_get_batch(ds, m.x, ggml_opt_labels(oc), ib);
            ggml_opt_eval(oc, NULL);
        }
        grads[split][0] = get1(ggml_opt_grad_acc(oc, m.a));
        grads[split][1] = get1(ggml_opt_grad_acc(oc, m.b));
        TH_CHECK(get1(m.a) == a0 && get1(m.b) == b0, "a gradient-only context leaves the parameters alone");
        ggml_opt_free(oc);
        lin_free(&m);
    }
    double ga, gb;
    mse_grad(xs, ys, 4, a0, b0, &ga, &gb);
    TH_CHECK(fabs(grads[0][0] - ga) < 1e-5 && fabs(grads[0][1] - gb) < 1e-5, "one batch of 4: grad (%f, %f), want (%f, %f)",
             grads[0][0], grads[0][1], ga, gb);
    TH_CHECK(fabsf(grads[1][0] - grads[0][0]) < 1e-6f && fabsf(grads[1][1] - grads[0][1]) < 1e-6f,
             "2 micro-batches of 2 accumulate to the gradient of the batch of 4: (%f, %f) vs (%f, %f)",
             grads[1][0], grads[1][1], grads[0][0], grads[0][1]);
    ggml_opt_dataset_free(ds);
}

// ---- 5. optimizer steps ------------------------------------------------------------------------------------

struct step_case {
    enum ggml_opt_optimizer_type type;
    float alpha, wd;
    int   opt_period;
};

static struct ggml_opt_optimizer_params step_pars(void * ud) {
    const struct step_case * c = ud;
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    p.adamw.alpha = c->alpha;
    p.adamw.wd    = c->wd;
    p.sgd.alpha   = c->alpha;
    p.sgd.wd      = c->wd;
    return p;
}

static void test_steps(const struct step_case * c) {
    const char * name = ggml_opt_optimizer_name(c->type);
    ggml_opt_dataset_t ds = line_dataset(4);
    const float * xs = (const float *) ggml_opt_dataset_data(ds)->data;
    const float * ys = (const float *) ggml_opt_dataset_labels(ds)->data;
    double a = 0.5, b = 0.25, m[2] = { 0, 0 }, v[2] = { 0, 0 };

    struct lin_model mod;
    const int64_t nbatch = 4 / c->opt_period;
    lin_init(&mod, nbatch, (float) a, (float) b);
    struct ggml_opt_params op = ggml_opt_default_params(g_sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
    op.ctx_compute     = mod.ctx_compute;
    op.inputs          = mod.x;
    op.outputs         = mod.out;
    op.opt_period      = c->opt_period;
    op.optimizer       = c->type;
    op.get_opt_pars    = step_pars;
    op.get_opt_pars_ud = (void *) c;
    ggml_opt_context_t oc = ggml_opt_init(op);
    TH_CHECK(ggml_opt_context_optimizer_type(oc) == c->type, "%s: optimizer type", name);

    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    for (int t = 1; t <= 2; t++) {
        for (int ib = 0; ib < c->opt_period; ib++) {
            ggml_opt_alloc(oc, true);
            ggml_opt_dataset_get_batch(ds, mod.x, ggml_opt_labels(oc), ib);
            ggml_opt_eval(oc, NULL);
            if (ib + 1 < c->opt_period) {
                TH_CHECK(get1(mod.a) == (float) a, "%s: no step before the accumulation window is full", name);
            }
        }
        double g[2];
        mse_grad(xs, ys, 4, a, b, &g[0], &g[1]);
        double * p[2] = { &a, &b };
        for (int k = 0; k < 2; k++) {
            if (c->type == GGML_OPT_OPTIMIZER_TYPE_SGD) {
                *p[k] = *p[k] * (1.0 - c->alpha * c->wd) - c->alpha * g[k];
            } else {
                m[k] = b1 * m[k] + (1 - b1) * g[k];
                v[k] = b2 * v[k] + (1 - b2) * g[k] * g[k];
                const double mh = m[k] / (1 - pow(b1, t)), vh = v[k] / (1 - pow(b2, t));
                *p[k] = *p[k] * (1.0 - c->alpha * c->wd) - c->alpha * mh / (sqrt(vh) + eps);
            }
        }
        const float ga = get1(mod.a), gb = get1(mod.b);
        TH_CHECK(fabs(ga - a) < 2e-6 && fabs(gb - b) < 2e-6, "%s (wd %g, period %d) step %d: (%.7f, %.7f), want (%.7f, %.7f)",
                 name, c->wd, c->opt_period, t, ga, gb, a, b);
    }
    ggml_opt_free(oc);
    lin_free(&mod);
    ggml_opt_dataset_free(ds);
}

static void test_api_misc(void) {
    TH_CHECK(strcmp(ggml_opt_optimizer_name(GGML_OPT_OPTIMIZER_TYPE_ADAMW), "adamw") == 0, "adamw name");
    TH_CHECK(strcmp(ggml_opt_optimizer_name(GGML_OPT_OPTIMIZER_TYPE_SGD), "sgd") == 0, "sgd name");
    const struct ggml_opt_optimizer_params d = ggml_opt_get_default_optimizer_params(NULL);
    TH_CHECK(d.adamw.alpha == 0.001f && d.adamw.beta1 == 0.9f && d.adamw.beta2 == 0.999f && d.adamw.eps == 1e-8f &&
             d.adamw.wd == 0.0f && d.sgd.alpha == 1e-3f && d.sgd.wd == 0.0f, "default optimizer params as llama.cpp");
    struct ggml_opt_optimizer_params c = d;
    c.sgd.alpha = 0.5f;
    TH_CHECK(ggml_opt_get_constant_optimizer_params(&c).sgd.alpha == 0.5f, "constant optimizer params");
    const struct ggml_opt_params p = ggml_opt_default_params(g_sched, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    TH_CHECK(p.build_type == GGML_OPT_BUILD_TYPE_OPT && p.opt_period == 1 && p.optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW &&
             p.ctx_compute == NULL && p.get_opt_pars == ggml_opt_get_default_optimizer_params, "default params");
    struct ggml_opt_params bad = p;
    bad.opt_period = 0;
    TH_CHECK(ggml_opt_init(bad) == NULL, "opt_period 0 is refused");
}

int main(void) {
    g_backend = ggml_backend_cpu_init();
    if (g_backend == NULL) {
        fprintf(stderr, "FAIL: no CPU backend\n");
        return 1;
    }
    g_sched = ggml_backend_sched_new(&g_backend, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, false);

    test_api_misc();
    test_shuffle();
    check_results(GGML_OPT_LOSS_TYPE_MEAN, "mean");
    check_results(GGML_OPT_LOSS_TYPE_SUM, "sum");
    check_results(GGML_OPT_LOSS_TYPE_CROSS_ENTROPY, "cross-entropy");
    test_grad_accumulation();
    const struct step_case steps[] = {
        { GGML_OPT_OPTIMIZER_TYPE_SGD,   0.1f,  0.0f, 1 },
        { GGML_OPT_OPTIMIZER_TYPE_SGD,   0.1f,  0.2f, 2 },
        { GGML_OPT_OPTIMIZER_TYPE_ADAMW, 0.01f, 0.0f, 1 },
        { GGML_OPT_OPTIMIZER_TYPE_ADAMW, 0.01f, 0.1f, 2 },
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        test_steps(&steps[i]);
    }
    test_fit_linear();

    ggml_backend_sched_free(g_sched);
    ggml_backend_free(g_backend);
    return th_finish();
}
