// GET_ROWS (embedding lookups, any type via to_float) and SET_ROWS (KV cache writes, any producible type).
// Row indices come from graph inputs: an index out of range is not trusted; get_rows yields a zero row and
// set_rows skips the write, instead of touching memory outside the tensor.

#include "ggml-cpu-impl.h"

#include <string.h>

void ggml_cpu_forward_get_rows(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    GGML_TENSOR_BINARY_OP_LOCALS

    const int64_t nr = ne10 * ne11 * ne12;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);

    for (int64_t r = r0; r < r1; r++) {
        const int64_t i10 = r % ne10;
        const int64_t i11 = (r / ne10) % ne11;
        const int64_t i12 = r / (ne10 * ne11);
        const int32_t row = *(const int32_t *) ((const char *) src1->data + i10 * nb10 + i11 * nb11 + i12 * nb12);
        char * d = (char *) dst->data + i10 * nb1 + i11 * nb2 + i12 * nb3;
        if (row < 0 || row >= ne01) {
            for (int64_t i = 0; i < ne00; i++) {
                memset(d + i * nb0, 0, ggml_type_size(dst->type));
            }
            continue;
        }
        const char * s = (const char *) src0->data + row * nb01 + i11 * nb02 + i12 * nb03;
        if (src0->type == GGML_TYPE_I32) {
            for (int64_t i = 0; i < ne00; i++) {
                *(int32_t *) (d + i * nb0) = *(const int32_t *) (s + i * nb00);
            }
        } else if (nb0 == sizeof(float)) {
            const float * x = ggml_cpu_row_to_float(s, src0->type, nb00, ne00, (float *) d);
            if (x != (const float *) d) {
                memcpy(d, x, sizeof(float) * (size_t) ne00);
            }
        } else {
            for (int64_t i = 0; i < ne00; i++) {
                *(float *) (d + i * nb0) = ggml_cpu_get_elem_f(s + i * nb00, src0->type);
            }
        }
    }
}

void ggml_cpu_forward_set_rows(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0]; // rows to write, F32 [ne0, n_rows, ne2, ne3]
    const struct ggml_tensor * src1 = dst->src[1]; // indices [n_rows, ne11, ne12]
    GGML_TENSOR_BINARY_OP_LOCALS

    const int64_t nr = ne01 * ne02 * ne03;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    float * tmp = (float *) ((char *) params->wdata + (size_t) params->ith * GGML_PAD(sizeof(float) * (size_t) ne00, GGML_CPU_CACHE_LINE));

    for (int64_t r = r0; r < r1; r++) {
        const int64_t i01 = r % ne01;
        const int64_t i02 = (r / ne01) % ne02;
        const int64_t i03 = r / (ne01 * ne02);
        const char * ip = (const char *) src1->data + i01 * nb10 + (i02 % ne11) * nb11 + (i03 % ne12) * nb12;
        const int64_t row = src1->type == GGML_TYPE_I64 ? *(const int64_t *) ip : (int64_t) *(const int32_t *) ip;
        if (row < 0 || row >= ne1) {
            continue;
        }
        const char * s = (const char *) src0->data + i01 * nb01 + i02 * nb02 + i03 * nb03;
        const float * x = ggml_cpu_row_to_float(s, GGML_TYPE_F32, nb00, ne00, tmp);
        ggml_cpu_row_from_float(x, (char *) dst->data + row * nb1 + i02 * nb2 + i03 * nb3, dst->type, nb0, ne00);
    }
}
