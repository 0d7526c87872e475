// Training ops on the CPU: CROSS_ENTROPY_LOSS, CROSS_ENTROPY_LOSS_BACK, OPT_STEP_ADAMW and OPT_STEP_SGD
// (all F32). Rows are split between the threads; every tensor is read through its own strides.

#include "ggml-cpu-impl.h"

#include <math.h>

#define AT(t, i0, i1, i2, i3) ((char *) (t)->data + (i0) * (t)->nb[0] + (i1) * (t)->nb[1] + (i2) * (t)->nb[2] + (i3) * (t)->nb[3])
#define F(t, i0, i1, i2, i3)  (*(float *) AT(t, i0, i1, i2, i3))

// row r of a tensor with ne1 * ne2 * ne3 rows -> (i1, i2, i3)
static void row_coords(const struct ggml_tensor * t, int64_t r, int64_t * i1, int64_t * i2, int64_t * i3) {
    *i1 = r % t->ne[1];
    *i2 = (r / t->ne[1]) % t->ne[2];
    *i3 = r / (t->ne[1] * t->ne[2]);
}

// max and log(sum(exp(x - max))) of row (i1, i2, i3) of x, the pieces of log_softmax(x) = x - max - lse
static void row_log_sum_exp(const struct ggml_tensor * x, int64_t i1, int64_t i2, int64_t i3, float * max, double * lse) {
    float m = -INFINITY;
    for (int64_t i0 = 0; i0 < x->ne[0]; i0++) {
        const float v = F(x, i0, i1, i2, i3);
        m = v > m ? v : m;
    }
    double sum = 0.0;
    for (int64_t i0 = 0; i0 < x->ne[0]; i0++) {
        sum += (double) expf(F(x, i0, i1, i2, i3) - m);
    }
    *max = m;
    *lse = log(sum);
}

// sum over rows [r0, r1) of sum_i b_i * log_softmax(a)_i
static double cross_entropy_rows(const struct ggml_tensor * a, const struct ggml_tensor * b, int64_t r0, int64_t r1) {
    double total = 0.0;
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(a, r, &i1, &i2, &i3);
        float max;
        double lse;
        row_log_sum_exp(a, i1, i2, i3, &max, &lse);
        for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
            const double log_p = (double) F(a, i0, i1, i2, i3) - (double) max - lse;
            total += (double) F(b, i0, i1, i2, i3) * log_p;
        }
    }
    return total;
}

// loss = -(1/nrows) * sum over rows of sum_i b_i * log_softmax(a)_i (the normalisation llama.cpp uses: the mean
// over rows, not over elements). Each thread leaves its partial sum in the work buffer, thread 0 adds them up.
static void cross_entropy_loss(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int64_t nr = ggml_nrows(a);
    if (params->wsize < (size_t) params->nth * GGML_CPU_CACHE_LINE) {
        // a plan made without this node: no room for partial sums, so thread 0 does all rows
        if (params->ith == 0) {
            *(float *) dst->data = (float) (-cross_entropy_rows(a, b, 0, nr) / (double) nr);
        }
        return;
    }
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    double * partial = (double *) ((char *) params->wdata + (size_t) params->ith * GGML_CPU_CACHE_LINE);
    *partial = cross_entropy_rows(a, b, r0, r1);
    ggml_cpu_barrier(params);
    if (params->ith == 0) {
        double total = 0.0;
        for (int t = 0; t < params->nth; t++) {
            total += *(const double *) ((const char *) params->wdata + (size_t) t * GGML_CPU_CACHE_LINE);
        }
        *(float *) dst->data = (float) (-total / (double) nr);
    }
}

// d loss / d logits = (softmax(logits) - labels) * dloss / nrows; src[0] = dloss (scalar), src[1] = logits,
// src[2] = labels
static void cross_entropy_loss_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * dloss  = dst->src[0];
    const struct ggml_tensor * logits = dst->src[1];
    const struct ggml_tensor * labels = dst->src[2];
    const int64_t nr = ggml_nrows(logits);
    const double scale = (double) *(const float *) dloss->data / (double) nr;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(logits, r, &i1, &i2, &i3);
        float max;
        double lse;
        row_log_sum_exp(logits, i1, i2, i3, &max, &lse);
        for (int64_t i0 = 0; i0 < logits->ne[0]; i0++) {
            const double p = exp((double) F(logits, i0, i1, i2, i3) - (double) max - lse);
            F(dst, i0, i1, i2, i3) = (float) ((p - (double) F(labels, i0, i1, i2, i3)) * scale);
        }
    }
}

// AdamW (decoupled weight decay), per element with the step's bias corrections beta1h, beta2h given:
//   m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2
//   w = w (1 - alpha wd) - alpha (m beta1h) / (sqrt(v beta2h) + eps)
// src[0] = w (updated in place; dst is a view of it), src[1] = g, src[2] = m, src[3] = v, src[4] = params
static void opt_step_adamw(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * w = dst->src[0];
    const struct ggml_tensor * g = dst->src[1];
    const struct ggml_tensor * m = dst->src[2];
    const struct ggml_tensor * v = dst->src[3];
    const float * p = (const float *) dst->src[4]->data;
    const float alpha = p[0], beta1 = p[1], beta2 = p[2], eps = p[3], wd = p[4], beta1h = p[5], beta2h = p[6];
    const float keep = 1.0f - alpha * wd;
    int64_t r0, r1;
    ggml_cpu_split_rows(ggml_nrows(w), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(w, r, &i1, &i2, &i3);
        for (int64_t i0 = 0; i0 < w->ne[0]; i0++) {
            const float gi = F(g, i0, i1, i2, i3);
            float * mi = (float *) AT(m, i0, i1, i2, i3);
            float * vi = (float *) AT(v, i0, i1, i2, i3);
            *mi = *mi * beta1 + gi * (1.0f - beta1);
            *vi = *vi * beta2 + gi * gi * (1.0f - beta2);
            const float mh = *mi * beta1h;
            const float vh = sqrtf(*vi * beta2h) + eps;
            float * wi = (float *) AT(w, i0, i1, i2, i3);
            *wi = *wi * keep - alpha * mh / vh;
        }
    }
}

// SGD with decoupled weight decay: w = w (1 - alpha wd) - alpha g; src[2] = { alpha, wd }
static void opt_step_sgd(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * w = dst->src[0];
    const struct ggml_tensor * g = dst->src[1];
    const float * p = (const float *) dst->src[2]->data;
    const float alpha = p[0];
    const float keep  = 1.0f - alpha * p[1];
    int64_t r0, r1;
    ggml_cpu_split_rows(ggml_nrows(w), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(w, r, &i1, &i2, &i3);
        for (int64_t i0 = 0; i0 < w->ne[0]; i0++) {
            float * wi = (float *) AT(w, i0, i1, i2, i3);
            *wi = *wi * keep - alpha * F(g, i0, i1, i2, i3);
        }
    }
}

void ggml_cpu_forward_train(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_CROSS_ENTROPY_LOSS:      cross_entropy_loss(params, dst); break;
        case GGML_OP_CROSS_ENTROPY_LOSS_BACK: cross_entropy_loss_back(params, dst); break;
        case GGML_OP_OPT_STEP_ADAMW:          opt_step_adamw(params, dst); break;
        case GGML_OP_OPT_STEP_SGD:            opt_step_sgd(params, dst); break;
        default: break;
    }
}

static bool all_f32(const struct ggml_tensor * op, int n_src) {
    for (int i = 0; i < n_src; i++) {
        if (op->src[i] == NULL || op->src[i]->type != GGML_TYPE_F32) {
            return false;
        }
    }
    return op->type == GGML_TYPE_F32;
}

bool ggml_cpu_train_supported(const struct ggml_tensor * op) {
    switch (op->op) {
        case GGML_OP_CROSS_ENTROPY_LOSS:
            return all_f32(op, 2) && ggml_are_same_shape(op->src[0], op->src[1]) && ggml_is_scalar(op);
        case GGML_OP_CROSS_ENTROPY_LOSS_BACK:
            return all_f32(op, 3) && ggml_is_scalar(op->src[0]) && ggml_are_same_shape(op->src[1], op->src[2]) &&
                   ggml_are_same_shape(op, op->src[1]);
        case GGML_OP_OPT_STEP_ADAMW:
            return all_f32(op, 5) && ggml_are_same_shape(op->src[0], op->src[1]) &&
                   ggml_are_same_shape(op->src[0], op->src[2]) && ggml_are_same_shape(op->src[0], op->src[3]) &&
                   ggml_is_contiguous(op->src[4]) && ggml_nelements(op->src[4]) == 7;
        case GGML_OP_OPT_STEP_SGD:
            return all_f32(op, 3) && ggml_are_same_shape(op->src[0], op->src[1]) &&
                   ggml_is_contiguous(op->src[2]) && ggml_nelements(op->src[2]) == 2;
        default:
            return false;
    }
}
