// ROPE: rotary position embeddings, NORM (adjacent pairs) and NEOX (halves) modes, partial rotation
// (n_dims < head size: the rest is copied), frequency factors, and YaRN (ext_factor / attn_factor / beta).

#include "ggml-cpu-impl.h"

#include <math.h>
#include <string.h>

// fraction of extrapolation used for dimension pair i0/2: 1 below `low`, 0 above `high`, linear between
static float rope_yarn_ramp(float low, float high, int i0) {
    const float y = ((float) (i0 / 2) - low) / fmaxf(0.001f, high - low);
    return 1.0f - fminf(1.0f, fmaxf(0.0f, y));
}

// angles of one position: cache[i0] = cos, cache[i0 + 1] = sin for each rotated pair i0 = 0, 2, ...
static void rope_cache_init(float theta_base, float freq_scale, const float * freq_factors, const float corr_dims[2],
                            int64_t n_dims, float ext_factor, float mscale, float * cache, float theta_scale) {
    float theta = theta_base;
    for (int64_t i0 = 0; i0 < n_dims; i0 += 2) {
        const float ff = freq_factors ? freq_factors[i0 / 2] : 1.0f;
        const float theta_extrap = theta / ff;
        const float theta_interp = freq_scale * theta_extrap;
        float t = theta_interp;
        float m = mscale;
        if (ext_factor != 0.0f) {
            const float ramp_mix = rope_yarn_ramp(corr_dims[0], corr_dims[1], (int) i0) * ext_factor;
            t = theta_interp * (1.0f - ramp_mix) + theta_extrap * ramp_mix;
            m *= 1.0f + 0.1f * logf(1.0f / freq_scale);
        }
        cache[i0 + 0] = cosf(t) * m;
        cache[i0 + 1] = sinf(t) * m;
        theta *= theta_scale;
    }
}

void ggml_cpu_forward_rope(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1]; // positions, I32 [ne2]
    const struct ggml_tensor * src2 = dst->src[2]; // freq factors, optional
    GGML_TENSOR_UNARY_OP_LOCALS

    const int n_dims     = ggml_get_op_params_i32(dst, 1);
    const int mode       = ggml_get_op_params_i32(dst, 2);
    const int n_ctx_orig = ggml_get_op_params_i32(dst, 4);
    const float freq_base   = ggml_get_op_params_f32(dst, 5);
    const float freq_scale  = ggml_get_op_params_f32(dst, 6);
    const float ext_factor  = ggml_get_op_params_f32(dst, 7);
    const float attn_factor = ggml_get_op_params_f32(dst, 8);
    const float beta_fast   = ggml_get_op_params_f32(dst, 9);
    const float beta_slow   = ggml_get_op_params_f32(dst, 10);

    float corr_dims[2];
    ggml_rope_yarn_corr_dims(n_dims, n_ctx_orig, freq_base, beta_fast, beta_slow, corr_dims);
    const float theta_scale = powf(freq_base, -2.0f / (float) n_dims);
    const bool is_neox = (mode & GGML_ROPE_TYPE_NEOX) != 0;
    const float * freq_factors = src2 ? (const float *) src2->data : NULL;
    const int32_t * pos = (const int32_t *) src1->data;

    float * cache = (float *) ((char *) params->wdata + (size_t) params->ith * GGML_PAD(sizeof(float) * (size_t) ne00 * 2, GGML_CPU_CACHE_LINE));

    // rows grouped by (i3, i2) so the angle cache is computed once per position
    const int64_t ng = ne2 * ne3;
    int64_t g0, g1;
    ggml_cpu_split_rows(ng, params->ith, params->nth, &g0, &g1);
    for (int64_t g = g0; g < g1; g++) {
        const int64_t i2 = g % ne2, i3 = g / ne2;
        rope_cache_init((float) pos[i2], freq_scale, freq_factors, corr_dims, n_dims, ext_factor, attn_factor, cache,
                        theta_scale);
        for (int64_t i1 = 0; i1 < ne1; i1++) {
            const char * s = (const char *) src0->data + i1 * nb01 + i2 * nb02 + i3 * nb03;
            char       * d = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
            if (src0->type == GGML_TYPE_F32 && nb00 == sizeof(float) && nb0 == sizeof(float)) {
                const float * x = (const float *) s;
                float       * y = (float *) d;
                const int64_t half = n_dims / 2;
                for (int64_t i0 = 0; i0 < n_dims; i0 += 2) {
                    const float c  = cache[i0 + 0];
                    const float sn = cache[i0 + 1];
                    const int64_t ia = is_neox ? i0 / 2 : i0;
                    const int64_t ib = is_neox ? i0 / 2 + half : i0 + 1;
                    const float x0 = x[ia];
                    const float x1 = x[ib];
                    y[ia] = x0 * c - x1 * sn;
                    y[ib] = x0 * sn + x1 * c;
                }
                for (int64_t i0 = n_dims; i0 < ne0; i0++) {
                    y[i0] = x[i0];
                }
                continue;
            }
            for (int64_t i0 = 0; i0 < n_dims; i0 += 2) {
                const float c  = cache[i0 + 0];
                const float sn = cache[i0 + 1];
                const int64_t ia = is_neox ? i0 / 2 : i0;
                const int64_t ib = is_neox ? i0 / 2 + n_dims / 2 : i0 + 1;
                const float x0 = ggml_cpu_get_elem_f(s + ia * nb00, src0->type);
                const float x1 = ggml_cpu_get_elem_f(s + ib * nb00, src0->type);
                ggml_cpu_set_elem_f(d + ia * nb0, dst->type, x0 * c - x1 * sn);
                ggml_cpu_set_elem_f(d + ib * nb0, dst->type, x0 * sn + x1 * c);
            }
            for (int64_t i0 = n_dims; i0 < ne0; i0++) {
                memcpy(d + i0 * nb0, s + i0 * nb00, ggml_type_size(dst->type));
            }
        }
    }
}
