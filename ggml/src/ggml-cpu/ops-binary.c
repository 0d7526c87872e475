// ADD / SUB / MUL / DIV / ADD1 with src1 repeated over src0, and ADD_ID (per-row bias chosen by an index).

#include "ggml-cpu-impl.h"

static inline float apply_op(enum ggml_op op, float a, float b) {
    switch (op) {
        case GGML_OP_ADD:
        case GGML_OP_ADD1: return a + b;
        case GGML_OP_SUB:  return a - b;
        case GGML_OP_MUL:  return a * b;
        case GGML_OP_DIV:  return a / b;
        default:           return 0.0f;
    }
}

// the inner loop specialized per op so the compiler can vectorize the all-F32 contiguous case
#define BINARY_ROW_F32(OPER)                                                                  \
    do {                                                                                      \
        if (ne10 == ne0) {                                                                    \
            for (int64_t i = 0; i < ne0; i++) { d[i] = x[i] OPER y[i]; }                      \
        } else {                                                                              \
            for (int64_t i = 0; i < ne0; i++) { d[i] = x[i] OPER y[i % ne10]; }               \
        }                                                                                     \
    } while (0)

void ggml_cpu_forward_binary(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    GGML_TENSOR_BINARY_OP_LOCALS
    const enum ggml_op op = dst->op;

    const int64_t nr = ne1 * ne2 * ne3;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);

    if (op == GGML_OP_ADD1) {
        const float b = ggml_cpu_get_elem_f(src1->data, src1->type);
        for (int64_t r = r0; r < r1; r++) {
            const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
            const char * s = (const char *) src0->data + i1 * nb01 + i2 * nb02 + i3 * nb03;
            char       * d = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
            for (int64_t i = 0; i < ne0; i++) {
                ggml_cpu_set_elem_f(d + i * nb0, dst->type, ggml_cpu_get_elem_f(s + i * nb00, src0->type) + b);
            }
        }
        return;
    }

    const bool fast = src0->type == GGML_TYPE_F32 && src1->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 &&
                      nb00 == sizeof(float) && nb10 == sizeof(float) && nb0 == sizeof(float);

    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const int64_t i11 = i1 % ne11, i12 = i2 % ne12, i13 = i3 % ne13;
        const char * s0 = (const char *) src0->data + i1 * nb01 + i2 * nb02 + i3 * nb03;
        const char * s1 = (const char *) src1->data + i11 * nb11 + i12 * nb12 + i13 * nb13;
        char       * dd = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
        if (fast) {
            const float * x = (const float *) s0;
            const float * y = (const float *) s1;
            float       * d = (float *) dd;
            switch (op) {
                case GGML_OP_ADD: BINARY_ROW_F32(+); break;
                case GGML_OP_SUB: BINARY_ROW_F32(-); break;
                case GGML_OP_MUL: BINARY_ROW_F32(*); break;
                case GGML_OP_DIV: BINARY_ROW_F32(/); break;
                default: break;
            }
            continue;
        }
        for (int64_t i = 0; i < ne0; i++) {
            const float a = ggml_cpu_get_elem_f(s0 + i * nb00, src0->type);
            const float b = ggml_cpu_get_elem_f(s1 + (i % ne10) * nb10, src1->type);
            ggml_cpu_set_elem_f(dd + i * nb0, dst->type, apply_op(op, a, b));
        }
    }
}

void ggml_cpu_forward_add_id(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0]; // [ne0, n_used, n_tokens]
    const struct ggml_tensor * src1 = dst->src[1]; // [ne0, n_rows]
    const struct ggml_tensor * ids  = dst->src[2]; // I32 [n_used, n_tokens]
    GGML_TENSOR_BINARY_OP_LOCALS

    const int64_t nr = ne1 * ne2 * ne3;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const int32_t id = *(const int32_t *) ((const char *) ids->data + i1 * ids->nb[0] + i2 * ids->nb[1]);
        const char * s0 = (const char *) src0->data + i1 * nb01 + i2 * nb02 + i3 * nb03;
        char        * d = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
        const bool ok = id >= 0 && id < ne11;
        const char * s1 = ok ? (const char *) src1->data + id * nb11 : NULL;
        for (int64_t i = 0; i < ne0; i++) {
            const float b = ok ? *(const float *) (s1 + i * nb10) : 0.0f;
            *(float *) (d + i * nb0) = *(const float *) (s0 + i * nb00) + b;
        }
    }
}
