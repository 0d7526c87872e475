// SOFT_MAX (with scale, F16/F32 mask broadcast over heads, ALiBi slopes, attention sinks) and DIAG_MASK_*.

#include "ggml-cpu-impl.h"

#include <math.h>
#include <string.h>

void ggml_cpu_forward_soft_max(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0  = dst->src[0];
    const struct ggml_tensor * mask  = dst->src[1];
    const struct ggml_tensor * sinks = dst->src[2];
    GGML_TENSOR_UNARY_OP_LOCALS
    const float scale    = ggml_get_op_params_f32(dst, 0);
    const float max_bias = ggml_get_op_params_f32(dst, 1);

    float * wp = (float *) ((char *) params->wdata + (size_t) params->ith * GGML_PAD(sizeof(float) * (size_t) ne00 * 2, GGML_CPU_CACHE_LINE));

    const int64_t nr = ne01 * ne02 * ne03;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne01, i2 = (r / ne01) % ne02, i3 = r / (ne01 * ne02);
        const float slope = ggml_cpu_alibi_slope(max_bias, i2, ne02);
        const char * s = (const char *) src0->data + i1 * nb01 + i2 * nb02 + i3 * nb03;
        char       * d = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
        const char * m = mask ? (const char *) mask->data + i1 * mask->nb[1] + (i2 % mask->ne[2]) * mask->nb[2] +
                                    (i3 % mask->ne[3]) * mask->nb[3]
                              : NULL;
        float max = -INFINITY;
        for (int64_t i = 0; i < ne00; i++) {
            float v = *(const float *) (s + i * nb00) * scale;
            if (m) {
                v += slope * ggml_cpu_get_elem_f(m + i * mask->nb[0], mask->type);
            }
            wp[i] = v;
            max = v > max ? v : max;
        }
        const float sink = sinks ? ((const float *) sinks->data)[i2] : -INFINITY;
        if (sinks && sink > max) {
            max = sink;
        }
        double sum = 0.0;
        if (max == -INFINITY) {
            // every entry masked: ggml yields zeros rather than NaN
            for (int64_t i = 0; i < ne00; i++) {
                *(float *) (d + i * nb0) = 0.0f;
            }
            continue;
        }
        for (int64_t i = 0; i < ne00; i++) {
            const float e = expf(wp[i] - max);
            wp[i] = e;
            sum += (double) e;
        }
        if (sinks) {
            sum += (double) expf(sink - max);
        }
        const float inv = (float) (1.0 / sum);
        for (int64_t i = 0; i < ne00; i++) {
            *(float *) (d + i * nb0) = wp[i] * inv;
        }
    }
}

void ggml_cpu_forward_diag_mask(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    GGML_TENSOR_UNARY_OP_LOCALS
    const int   n_past = ggml_get_op_params_i32(dst, 0);
    const float value  = dst->op == GGML_OP_DIAG_MASK_INF ? -INFINITY : 0.0f;

    const int64_t nr = ne1 * ne2 * ne3;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const char * s = (const char *) src0->data + i1 * nb01 + i2 * nb02 + i3 * nb03;
        char       * d = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            const float x = *(const float *) (s + i0 * nb00);
            *(float *) (d + i0 * nb0) = i0 > n_past + i1 ? value : x;
        }
    }
}
