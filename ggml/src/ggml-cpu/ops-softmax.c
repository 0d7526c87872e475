// SOFT_MAX (with scale, F16/F32 mask broadcast over heads, ALiBi slopes, attention sinks) and DIAG_MASK_*.
//
// The row is computed in llama.cpp's order so its AVX-512 build's bits come out on every ISA: x*scale, then
// + slope*mask (product and sum rounded apart), exp(x - max) with the AVX-512 polynomial over blocks of 16
// (each block's sum reduced in float, the blocks added in double), the n % 16 tail with expf, then one
// multiply by the float of 1/sum. The vector pieces are the flash-attention kernel table's (ops-attn.h),
// which emulates that build lane by lane where the CPU is narrower.

#include "ggml-cpu-impl.h"
#include "ops-attn.h"

#include <math.h>
#include <string.h>

// wp[0..n) = slope * mask row as float (the caller adds it); the mask row is contiguous or strided
static void soft_max_mask_row(const struct ggml_cpu_fa_kernels * fk, float * wp, const char * m,
                              const struct ggml_tensor * mask, int64_t n, float slope) {
    if (mask->type == GGML_TYPE_F16 && mask->nb[0] == sizeof(ggml_fp16_t)) {
        fk->f16_to_f32((int) n, wp, (const ggml_fp16_t *) m);
    } else if (mask->type == GGML_TYPE_F32 && mask->nb[0] == sizeof(float)) {
        memcpy(wp, m, sizeof(float) * (size_t) n);
    } else {
        for (int64_t i = 0; i < n; i++) {
            wp[i] = ggml_cpu_get_elem_f(m + i * mask->nb[0], mask->type);
        }
    }
    if (slope != 1.0f) {
        fk->scale_f32((int) n, wp, slope);
    }
}

void ggml_cpu_forward_soft_max(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0  = dst->src[0];
    const struct ggml_tensor * mask  = dst->src[1];
    const struct ggml_tensor * sinks = dst->src[2];
    GGML_TENSOR_UNARY_OP_LOCALS
    const float scale    = ggml_get_op_params_f32(dst, 0);
    const float max_bias = ggml_get_op_params_f32(dst, 1);
    const struct ggml_cpu_fa_kernels * fk = ggml_cpu_fa_kernels_get();

    // two rows of scratch per thread (ggml_cpu_work_size): the row being computed and the scaled mask row
    float * wp = (float *) ((char *) params->wdata + (size_t) params->ith * GGML_PAD(sizeof(float) * (size_t) ne00 * 2, GGML_CPU_CACHE_LINE));
    float * mp = wp + ne00;
    const int64_t n16 = ne00 & ~(int64_t) (GGML_FA_LANES - 1);

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

        if (nb00 == sizeof(float)) {
            memcpy(wp, s, sizeof(float) * (size_t) ne00);
        } else {
            for (int64_t i = 0; i < ne00; i++) {
                wp[i] = *(const float *) (s + i * nb00);
            }
        }
        fk->scale_f32((int) ne00, wp, scale);
        if (m) {
            soft_max_mask_row(fk, mp, m, mask, ne00, slope);
        }
        float max = fk->add_max((int) n16, wp, m ? mp : NULL);
        for (int64_t i = n16; i < ne00; i++) {
            if (m) {
                wp[i] = wp[i] + mp[i];
            }
            max = wp[i] > max ? wp[i] : max;
        }

        const float sink = sinks ? ((const float *) sinks->data)[i2] : -INFINITY;
        if (sinks && sink > max) {
            max = sink;
        }
        if (max == -INFINITY) {
            // every entry masked: ggml yields zeros rather than NaN
            for (int64_t i = 0; i < ne00; i++) {
                *(float *) (d + i * nb0) = 0.0f;
            }
            continue;
        }
        double sum = fk->softmax((int) n16, wp, max);
        for (int64_t i = n16; i < ne00; i++) {
            const float e = expf(wp[i] - max);
            wp[i] = e;
            sum += (double) e;
        }
        if (sinks) {
            sum += (double) expf(sink - max);
        }
        fk->scale_f32((int) ne00, wp, (float) (1.0 / sum));
        if (nb0 == sizeof(float)) {
            memcpy(d, wp, sizeof(float) * (size_t) ne00);
        } else {
            for (int64_t i = 0; i < ne00; i++) {
                *(float *) (d + i * nb0) = wp[i];
            }
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
