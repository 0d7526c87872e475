// Elementwise unary ops (GGML_OP_UNARY and the ops with their own codes), gated linear units, scale, clamp
// and fill. F32 rows take a direct path; F16/BF16 rows convert per element.

#include "ggml-cpu-impl.h"
#include "vec-expf.h"

#include <math.h>

static inline float op_unary(enum ggml_unary_op op, float x) {
    switch (op) {
        case GGML_UNARY_OP_ABS:         return fabsf(x);
        case GGML_UNARY_OP_SGN:         return (x > 0.0f) ? 1.0f : ((x < 0.0f) ? -1.0f : 0.0f);
        case GGML_UNARY_OP_NEG:         return -x;
        case GGML_UNARY_OP_STEP:        return (x > 0.0f) ? 1.0f : 0.0f;
        case GGML_UNARY_OP_TANH:        return tanhf(x);
        case GGML_UNARY_OP_ELU:         return (x > 0.0f) ? x : expm1f(x);
        case GGML_UNARY_OP_RELU:        return (x > 0.0f) ? x : 0.0f;
        case GGML_UNARY_OP_SIGMOID:     return 1.0f / (1.0f + expf(-x));
        case GGML_UNARY_OP_GELU:        return ggml_cpu_gelu_f32(x);
        case GGML_UNARY_OP_GELU_QUICK:  return x * (1.0f / (1.0f + expf(-1.702f * x)));
        case GGML_UNARY_OP_SILU:        return x / (1.0f + expf(-x));
        case GGML_UNARY_OP_HARDSWISH:   return x * fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f));
        case GGML_UNARY_OP_HARDSIGMOID: return fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f));
        case GGML_UNARY_OP_EXP:         return expf(x);
        case GGML_UNARY_OP_GELU_ERF:    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
        case GGML_UNARY_OP_FLOOR:       return floorf(x);
        case GGML_UNARY_OP_CEIL:        return ceilf(x);
        case GGML_UNARY_OP_ROUND:       return roundf(x);
        case GGML_UNARY_OP_TRUNC:       return truncf(x);
        case GGML_UNARY_OP_SOFTPLUS:    return (x > 20.0f) ? x : log1pf(expf(x));
        case GGML_UNARY_OP_EXPM1:       return expm1f(x);
        default:                        return x;
    }
}

static inline float op_simple(enum ggml_op op, float x, float slope) {
    switch (op) {
        case GGML_OP_SQR:        return x * x;
        case GGML_OP_SQRT:       return sqrtf(x);
        case GGML_OP_LOG:        return logf(x);
        case GGML_OP_SIN:        return sinf(x);
        case GGML_OP_COS:        return cosf(x);
        case GGML_OP_LEAKY_RELU: return (x > 0.0f) ? x : slope * x;
        default:                 return x;
    }
}

void ggml_cpu_forward_unary(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    GGML_TENSOR_UNARY_OP_LOCALS
    const bool is_unary = dst->op == GGML_OP_UNARY;
    const enum ggml_unary_op uop = is_unary ? ggml_get_unary_op(dst) : GGML_UNARY_OP_COUNT;
    const float slope = dst->op == GGML_OP_LEAKY_RELU ? ggml_get_op_params_f32(dst, 0) : 0.0f;

    const int64_t nr = ne1 * ne2 * ne3;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    const bool f32 = src0->type == GGML_TYPE_F32 && nb00 == sizeof(float) && nb0 == sizeof(float);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const char * s = (const char *) src0->data + i1 * nb01 + i2 * nb02 + i3 * nb03;
        char       * d = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
        if (f32) {
            const float * x = (const float *) s;
            float       * y = (float *) d;
            if (is_unary) {
                // the hot activations get their own loops; the rest go through the switch per element
                // (the expf-based ones are vectorized with libm's exact results: vec-expf.h)
                switch (uop) {
                    case GGML_UNARY_OP_SILU:       ggml_cpu_vec_silu((int) ne0, y, x); break;
                    case GGML_UNARY_OP_SIGMOID:    ggml_cpu_vec_sigmoid((int) ne0, y, x); break;
                    case GGML_UNARY_OP_GELU_QUICK: ggml_cpu_vec_gelu_quick((int) ne0, y, x); break;
                    case GGML_UNARY_OP_EXP:        ggml_cpu_vec_expf((int) ne0, y, x); break;
                    case GGML_UNARY_OP_GELU:
                        for (int64_t i = 0; i < ne0; i++) { y[i] = ggml_cpu_gelu_f32(x[i]); }
                        break;
                    default:
                        for (int64_t i = 0; i < ne0; i++) { y[i] = op_unary(uop, x[i]); }
                        break;
                }
            } else {
                for (int64_t i = 0; i < ne0; i++) { y[i] = op_simple(dst->op, x[i], slope); }
            }
            continue;
        }
        for (int64_t i = 0; i < ne0; i++) {
            const float x = ggml_cpu_get_elem_f(s + i * nb00, src0->type);
            const float y = is_unary ? op_unary(uop, x) : op_simple(dst->op, x, slope);
            ggml_cpu_set_elem_f(d + i * nb0, dst->type, y);
        }
    }
}

// o = min(x, limit) / (1 + expf(alpha * -min(x, limit))) * (clamp(g, -limit, limit) + 1): the arguments of a
// chunk first, then one vector expf over them (libm's bits), then the rest as the per-element code has it
static void swiglu_oai_f32(int64_t n, float * o, const float * x, const float * g, float alpha, float limit) {
    enum { CHUNK = 256 };
    float e[CHUNK];
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        const int m = n - i0 < CHUNK ? (int) (n - i0) : CHUNK;
        for (int i = 0; i < m; i++) {
            e[i] = alpha * (-fminf(x[i0 + i], limit));
        }
        ggml_cpu_vec_expf(m, e, e);
        for (int i = 0; i < m; i++) {
            const float xc = fminf(x[i0 + i], limit);
            const float yc = fminf(fmaxf(g[i0 + i], -limit), limit);
            o[i0 + i] = xc / (1.0f + e[i]) * (yc + 1.0f);
        }
    }
}

void ggml_cpu_forward_glu(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const enum ggml_glu_op op = ggml_get_glu_op(dst);
    const bool swapped = ggml_get_op_params_i32(dst, 1) != 0;
    const float alpha = ggml_get_op_params_f32(dst, 2);
    const float limit = ggml_get_op_params_f32(dst, 3);
    const int64_t nc = dst->ne[0];
    const size_t  es = ggml_type_size(src0->type);

    const int64_t nr = ggml_nrows(dst);
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        const char * a = (const char *) src0->data + i1 * src0->nb[1] + i2 * src0->nb[2] + i3 * src0->nb[3];
        const char * g;
        if (src1) {
            g = (const char *) src1->data + i1 * src1->nb[1] + i2 * src1->nb[2] + i3 * src1->nb[3];
        } else {
            // activation on the first half, multiplied by the second half (swapped: the other way round)
            g = a + (swapped ? 0 : (size_t) nc * es);
            a = a + (swapped ? (size_t) nc * es : 0);
        }
        char * d = (char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        if (src0->type == GGML_TYPE_F32 && dst->nb[0] == sizeof(float)) {
            const float * x = (const float *) a;
            const float * y = (const float *) g;
            float       * o = (float *) d;
            switch (op) {
                case GGML_GLU_OP_SWIGLU:
                    ggml_cpu_vec_swiglu((int) nc, o, x, y);
                    break;
                case GGML_GLU_OP_GEGLU:
                    for (int64_t i = 0; i < nc; i++) { o[i] = ggml_cpu_gelu_f32(x[i]) * y[i]; }
                    break;
                case GGML_GLU_OP_REGLU:
                    for (int64_t i = 0; i < nc; i++) { o[i] = (x[i] > 0.0f ? x[i] : 0.0f) * y[i]; }
                    break;
                case GGML_GLU_OP_GEGLU_ERF:
                    for (int64_t i = 0; i < nc; i++) { o[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f)) * y[i]; }
                    break;
                case GGML_GLU_OP_SWIGLU_OAI:
                    swiglu_oai_f32(nc, o, x, y, alpha, limit);
                    break;
                default: // GEGLU_QUICK
                    ggml_cpu_vec_geglu_quick((int) nc, o, x, y);
                    break;
            }
            continue;
        }
        for (int64_t i = 0; i < nc; i++) {
            const float x = ggml_cpu_get_elem_f(a + (size_t) i * es, src0->type);
            const float y = ggml_cpu_get_elem_f(g + (size_t) i * es, src0->type);
            float v;
            switch (op) {
                case GGML_GLU_OP_REGLU:       v = (x > 0.0f ? x : 0.0f) * y; break;
                case GGML_GLU_OP_GEGLU:       v = ggml_cpu_gelu_f32(x) * y; break;
                case GGML_GLU_OP_SWIGLU:      v = x / (1.0f + expf(-x)) * y; break;
                case GGML_GLU_OP_GEGLU_ERF:   v = 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)) * y; break;
                case GGML_GLU_OP_GEGLU_QUICK: v = x * (1.0f / (1.0f + expf(-1.702f * x))) * y; break;
                case GGML_GLU_OP_SWIGLU_OAI: {
                    const float xc = fminf(x, limit);
                    const float yc = fminf(fmaxf(y, -limit), limit);
                    v = xc / (1.0f + expf(alpha * (-xc))) * (yc + 1.0f);
                    break;
                }
                default: v = 0.0f; break;
            }
            ggml_cpu_set_elem_f(d + i * dst->nb[0], dst->type, v);
        }
    }
}

// elementwise map with two float parameters: SCALE (s*x + b), CLAMP (min/max), FILL (c)
static void forward_map(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    GGML_TENSOR_UNARY_OP_LOCALS
    const float p0 = ggml_get_op_params_f32(dst, 0);
    const float p1 = ggml_get_op_params_f32(dst, 1);
    const bool f32 = src0->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && nb00 == sizeof(float) && nb0 == sizeof(float);
    const int64_t nr = ne1 * ne2 * ne3;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const char * s = (const char *) src0->data + i1 * nb01 + i2 * nb02 + i3 * nb03;
        char       * d = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
        if (f32) {
            const float * x = (const float *) s;
            float       * y = (float *) d;
            switch (dst->op) {
                case GGML_OP_FILL:  for (int64_t i = 0; i < ne0; i++) { y[i] = p0; } break;
                case GGML_OP_SCALE: for (int64_t i = 0; i < ne0; i++) { y[i] = x[i] * p0 + p1; } break;
                default:            for (int64_t i = 0; i < ne0; i++) { y[i] = fminf(fmaxf(x[i], p0), p1); } break;
            }
            continue;
        }
        for (int64_t i = 0; i < ne0; i++) {
            float v;
            if (dst->op == GGML_OP_FILL) {
                v = p0;
            } else {
                const float x = ggml_cpu_get_elem_f(s + i * nb00, src0->type);
                v = dst->op == GGML_OP_SCALE ? x * p0 + p1 : fminf(fmaxf(x, p0), p1);
            }
            ggml_cpu_set_elem_f(d + i * nb0, dst->type, v);
        }
    }
}

void ggml_cpu_forward_scale(const struct ggml_compute_params * params, struct ggml_tensor * dst) { forward_map(params, dst); }
void ggml_cpu_forward_clamp(const struct ggml_compute_params * params, struct ggml_tensor * dst) { forward_map(params, dst); }
void ggml_cpu_forward_fill (const struct ggml_compute_params * params, struct ggml_tensor * dst) { forward_map(params, dst); }
