// ROPE: rotary position embeddings, NORM (adjacent pairs) and NEOX (halves) modes, partial rotation
// (n_dims < head size: the rest is copied), frequency factors, and YaRN (ext_factor / attn_factor / beta).
// Multi-section modes (MROPE, IMROPE, VISION) take 4 positions per token (t, h, w, e) and give each rotated
// pair the angle of one of them, chosen by the sections in op_params[11..14].

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

// one cos/sin pair of the multi-section cache
static void rope_yarn_pair(float theta_extrap, float freq_scale, const float corr_dims[2], int64_t i0, float ext_factor,
                           float mscale, float * cache) {
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
}

// angles for n_rot/2 pairs where pair p takes its position from section (p mod sum(sections)):
// MROPE uses consecutive blocks t | h | w | e, IMROPE interleaves t, h, w (then e), and VISION restarts the
// frequency of each section at the base (independent sections)
static void rope_mrope_cache_init(const float pos[4], const int sections[4], bool is_imrope, bool indep_sects,
                                  float freq_scale, const float * freq_factors, int64_t n_ff, const float corr_dims[2],
                                  int64_t n_rot, float ext_factor, float mscale, float * cache, float theta_scale) {
    float theta[4] = { pos[0], pos[1], pos[2], pos[3] };
    const int sect_dims = sections[0] + sections[1] + sections[2] + sections[3];
    const int sec_w = sections[0] + sections[1];
    const int sec_e = sec_w + sections[2];
    for (int64_t i0 = 0; i0 < n_rot; i0 += 2) {
        const int sector = (int) ((i0 / 2) % sect_dims);
        if (indep_sects) {
            if (sector == 0) {
                theta[0] = pos[0];
            } else if (sector == sections[0]) {
                theta[1] = pos[1];
            } else if (sector == sec_w) {
                theta[2] = pos[2];
            } else if (sector == sec_e) {
                theta[3] = pos[3];
            }
        }
        int which;
        if (is_imrope) {
            if (sector % 3 == 1 && sector < 3 * sections[1]) {
                which = 1;
            } else if (sector % 3 == 2 && sector < 3 * sections[2]) {
                which = 2;
            } else if (sector % 3 == 0 && sector < 3 * sections[0]) {
                which = 0;
            } else {
                which = 3;
            }
        } else {
            which = sector < sections[0] ? 0 : sector < sec_w ? 1 : sector < sec_e ? 2 : 3;
        }
        const float ff = (freq_factors && i0 / 2 < n_ff) ? freq_factors[i0 / 2] : 1.0f;
        rope_yarn_pair(theta[which] / ff, freq_scale, corr_dims, i0, ext_factor, mscale, cache);
        for (int k = 0; k < 4; k++) {
            theta[k] *= theta_scale;
        }
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
    const bool mrope     = (mode & GGML_ROPE_TYPE_MROPE) != 0;
    const bool is_vision = mode == GGML_ROPE_TYPE_VISION;
    const bool is_imrope = mode == GGML_ROPE_TYPE_IMROPE;
    // the rotated pairs: (i0/2, i0/2 + half) for i0 < n_rot in NEOX and the multi-section modes (VISION rotates
    // the whole row, pairing the two halves), (i0, i0 + 1) in NORM mode; the rest of the row is copied
    const bool is_neox = (mode & GGML_ROPE_TYPE_NEOX) != 0 || mrope;
    const int64_t n_rot = is_vision ? ne0 : n_dims;
    const int64_t half  = is_vision ? n_dims : n_dims / 2;
    int sections[4];
    memcpy(sections, dst->op_params + 11, sizeof(sections));
    // ROPE_BACK rotates by the opposite angle: the inverse of a rotation is its transpose
    const float sin_sign = dst->op == GGML_OP_ROPE_BACK ? -1.0f : 1.0f;
    const float * freq_factors = src2 ? (const float *) src2->data : NULL;
    const int64_t n_ff = src2 ? src2->ne[0] : 0;
    const int32_t * pos = (const int32_t *) src1->data;

    float * cache = (float *) ((char *) params->wdata + (size_t) params->ith * GGML_PAD(sizeof(float) * (size_t) ne00 * 2, GGML_CPU_CACHE_LINE));

    // rows grouped by (i3, i2) so the angle cache is computed once per position
    const int64_t ng = ne2 * ne3;
    int64_t g0, g1;
    ggml_cpu_split_rows(ng, params->ith, params->nth, &g0, &g1);
    for (int64_t g = g0; g < g1; g++) {
        const int64_t i2 = g % ne2, i3 = g / ne2;
        if (mrope) {
            const float p4[4] = { (float) pos[i2], (float) pos[i2 + ne2], (float) pos[i2 + 2 * ne2], (float) pos[i2 + 3 * ne2] };
            rope_mrope_cache_init(p4, sections, is_imrope, is_vision, freq_scale, freq_factors, n_ff, corr_dims, n_rot,
                                  ext_factor, attn_factor, cache, theta_scale);
        } else {
            rope_cache_init((float) pos[i2], freq_scale, freq_factors, corr_dims, n_dims, ext_factor, attn_factor, cache,
                            theta_scale);
        }
        for (int64_t i1 = 0; i1 < ne1; i1++) {
            const char * s = (const char *) src0->data + i1 * nb01 + i2 * nb02 + i3 * nb03;
            char       * d = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
            if (src0->type == GGML_TYPE_F32 && nb00 == sizeof(float) && nb0 == sizeof(float)) {
                const float * x = (const float *) s;
                float       * y = (float *) d;
                for (int64_t i0 = 0; i0 < n_rot; i0 += 2) {
                    const float c  = cache[i0 + 0];
                    const float sn = cache[i0 + 1] * sin_sign;
                    const int64_t ia = is_neox ? i0 / 2 : i0;
                    const int64_t ib = is_neox ? i0 / 2 + half : i0 + 1;
                    const float x0 = x[ia];
                    const float x1 = x[ib];
                    y[ia] = x0 * c - x1 * sn;
                    y[ib] = x0 * sn + x1 * c;
                }
                for (int64_t i0 = n_rot; i0 < ne0; i0++) {
                    y[i0] = x[i0];
                }
                continue;
            }
            for (int64_t i0 = 0; i0 < n_rot; i0 += 2) {
                const float c  = cache[i0 + 0];
                const float sn = cache[i0 + 1] * sin_sign;
                const int64_t ia = is_neox ? i0 / 2 : i0;
                const int64_t ib = is_neox ? i0 / 2 + half : i0 + 1;
                const float x0 = ggml_cpu_get_elem_f(s + ia * nb00, src0->type);
                const float x1 = ggml_cpu_get_elem_f(s + ib * nb00, src0->type);
                ggml_cpu_set_elem_f(d + ia * nb0, dst->type, x0 * c - x1 * sn);
                ggml_cpu_set_elem_f(d + ib * nb0, dst->type, x0 * sn + x1 * c);
            }
            for (int64_t i0 = n_rot; i0 < ne0; i0++) {
                memcpy(d + i0 * nb0, s + i0 * nb00, ggml_type_size(dst->type));
            }
        }
    }
}
