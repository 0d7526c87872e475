// The gradient ops that are plain forward computations: REPEAT_BACK, SILU_BACK, RMS_NORM_BACK,
// GET_ROWS_BACK and SOFT_MAX_BACK (llama.cpp's operand order: src[0] is the incoming gradient).

#include "ggml-cpu-impl.h"

#include <math.h>
#include <string.h>

#define AT(t, i0, i1, i2, i3) ((char *) (t)->data + (i0) * (t)->nb[0] + (i1) * (t)->nb[1] + (i2) * (t)->nb[2] + (i3) * (t)->nb[3])
#define F(t, i0, i1, i2, i3)  (*(float *) AT(t, i0, i1, i2, i3))

// row r of a tensor with ne1 * ne2 * ne3 rows -> (i1, i2, i3)
static void row_coords(const struct ggml_tensor * t, int64_t r, int64_t * i1, int64_t * i2, int64_t * i3) {
    *i1 = r % t->ne[1];
    *i2 = (r / t->ne[1]) % t->ne[2];
    *i3 = r / (t->ne[1] * t->ne[2]);
}

// dst[j] = sum over the repetitions k of src0[k * ne(dst) + j]
static void repeat_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int64_t n0 = src0->ne[0] / dst->ne[0], n1 = src0->ne[1] / dst->ne[1];
    const int64_t n2 = src0->ne[2] / dst->ne[2], n3 = src0->ne[3] / dst->ne[3];
    int64_t r0, r1;
    ggml_cpu_split_rows(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t j1, j2, j3;
        row_coords(dst, r, &j1, &j2, &j3);
        for (int64_t j0 = 0; j0 < dst->ne[0]; j0++) {
            float sum = 0.0f;
            for (int64_t k3 = 0; k3 < n3; k3++) {
                for (int64_t k2 = 0; k2 < n2; k2++) {
                    for (int64_t k1 = 0; k1 < n1; k1++) {
                        for (int64_t k0 = 0; k0 < n0; k0++) {
                            sum += F(src0, k0 * dst->ne[0] + j0, k1 * dst->ne[1] + j1, k2 * dst->ne[2] + j2, k3 * dst->ne[3] + j3);
                        }
                    }
                }
            }
            F(dst, j0, j1, j2, j3) = sum;
        }
    }
}

// dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x); src[0] = dy, src[1] = x
static void silu_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * dy = dst->src[0];
    const struct ggml_tensor * x  = dst->src[1];
    int64_t r0, r1;
    ggml_cpu_split_rows(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const float xv = F(x, i0, i1, i2, i3);
            const float s  = 1.0f / (1.0f + expf(-xv));
            F(dst, i0, i1, i2, i3) = F(dy, i0, i1, i2, i3) * s * (1.0f + xv * (1.0f - s));
        }
    }
}

// gradient of rms_norm per row: dx = (dz - x * sum(x*dz) / (sum(x*x) + n*eps)) / sqrt(mean(x*x) + eps);
// src[0] = dz, src[1] = x
static void rms_norm_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * dz = dst->src[0];
    const struct ggml_tensor * x  = dst->src[1];
    const float eps = ggml_get_op_params_f32(dst, 0);
    const int64_t n = dst->ne[0];
    int64_t r0, r1;
    ggml_cpu_split_rows(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        double sum_xx = 0.0, sum_xdz = 0.0;
        for (int64_t i0 = 0; i0 < n; i0++) {
            const float xv = F(x, i0, i1, i2, i3);
            sum_xx  += (double) (xv * xv);
            sum_xdz += (double) (xv * F(dz, i0, i1, i2, i3));
        }
        const float mean_eps = (float) (sum_xx / (double) n) + eps;
        const float sum_eps  = (float) sum_xx + eps * (float) n;
        const float rrms     = 1.0f / sqrtf(mean_eps);
        const float coef     = (float) (-sum_xdz) / sum_eps;
        for (int64_t i0 = 0; i0 < n; i0++) {
            F(dst, i0, i1, i2, i3) = (F(x, i0, i1, i2, i3) * coef + F(dz, i0, i1, i2, i3)) * rrms;
        }
    }
}

// dst (zero) += src0 row i at row idx[i]; each thread owns a range of dst rows, so the adds never race and
// happen in the order of i whatever the thread count. Indices outside dst are ignored.
static void get_rows_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * idx  = dst->src[1];
    int64_t r0, r1;
    ggml_cpu_split_rows(dst->ne[1], params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        memset(AT(dst, 0, r, 0, 0), 0, sizeof(float) * (size_t) dst->ne[0]);
    }
    for (int64_t i = 0; i < idx->ne[0]; i++) {
        const int64_t r = *(const int32_t *) ((const char *) idx->data + i * idx->nb[0]);
        if (r < r0 || r >= r1) {
            continue;
        }
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            F(dst, i0, r, 0, 0) += ggml_cpu_get_elem_f(AT(src0, i0, i, 0, 0), src0->type);
        }
    }
}

// gradient of soft_max(scale * x) per row: dx = scale * y * (dy - dot(y, dy)); src[0] = dy, src[1] = y
static void soft_max_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * dy = dst->src[0];
    const struct ggml_tensor * y  = dst->src[1];
    const float scale = ggml_get_op_params_f32(dst, 0);
    int64_t r0, r1;
    ggml_cpu_split_rows(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        double dot = 0.0;
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            dot += (double) (F(y, i0, i1, i2, i3) * F(dy, i0, i1, i2, i3));
        }
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            F(dst, i0, i1, i2, i3) = scale * F(y, i0, i1, i2, i3) * (F(dy, i0, i1, i2, i3) - (float) dot);
        }
    }
}

void ggml_cpu_forward_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_REPEAT_BACK:   repeat_back(params, dst); break;
        case GGML_OP_SILU_BACK:     silu_back(params, dst); break;
        case GGML_OP_RMS_NORM_BACK: rms_norm_back(params, dst); break;
        case GGML_OP_GET_ROWS_BACK: get_rows_back(params, dst); break;
        case GGML_OP_SOFT_MAX_BACK: soft_max_back(params, dst); break;
        default: break;
    }
}
