// The scalar definition of vec-expf.h's kernels: the expressions the ops wrote inline, with libm's expf.
// The vector paths must reproduce these bits.

#include "vec-expf.h"

#include <math.h>

static void exp_f32(int n, float * y, const float * x) {
    for (int i = 0; i < n; i++) {
        y[i] = expf(x[i]);
    }
}

static void silu_f32(int n, float * y, const float * x) {
    for (int i = 0; i < n; i++) {
        y[i] = x[i] / (1.0f + expf(-x[i]));
    }
}

static void sigmoid_f32(int n, float * y, const float * x) {
    for (int i = 0; i < n; i++) {
        y[i] = 1.0f / (1.0f + expf(-x[i]));
    }
}

static void gelu_quick_f32(int n, float * y, const float * x) {
    for (int i = 0; i < n; i++) {
        y[i] = x[i] * (1.0f / (1.0f + expf(-1.702f * x[i])));
    }
}

static void swiglu_f32(int n, float * o, const float * x, const float * g) {
    for (int i = 0; i < n; i++) {
        o[i] = x[i] / (1.0f + expf(-x[i])) * g[i];
    }
}

static void geglu_quick_f32(int n, float * o, const float * x, const float * g) {
    for (int i = 0; i < n; i++) {
        o[i] = x[i] * (1.0f / (1.0f + expf(-1.702f * x[i]))) * g[i];
    }
}

void ggml_cpu_expf_kernels_scalar(struct ggml_cpu_expf_kernels * k) {
    k->exp         = exp_f32;
    k->silu        = silu_f32;
    k->sigmoid     = sigmoid_f32;
    k->gelu_quick  = gelu_quick_f32;
    k->swiglu      = swiglu_f32;
    k->geglu_quick = geglu_quick_f32;
}
