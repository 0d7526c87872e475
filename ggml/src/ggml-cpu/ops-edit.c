// ACC and SET (write b into a strided view of a copy of a), DIAG, OUT_PROD and GROUP_NORM.

#include "ggml-cpu-impl.h"

#include <math.h>
#include <string.h>

// ---- ACC / SET -------------------------------------------------------------------------------------------

// dst starts as a copy of src0 (unless the op runs in place); then the view of dst given by op_params
// { nb1, nb2, nb3, offset } receives src1 (SET) or src1 added to it (ACC)
void ggml_cpu_forward_acc_set(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const size_t vnb1   = (size_t) dst->op_params[0];
    const size_t vnb2   = (size_t) dst->op_params[1];
    const size_t vnb3   = (size_t) dst->op_params[2];
    const size_t offset = (size_t) dst->op_params[3];
    const size_t esize  = ggml_type_size(dst->type);

    if (dst->data != src0->data) {
        // the copy: rows of src0 split over the threads (dst is a fresh contiguous tensor of the same shape)
        const int64_t nr = ggml_nrows(src0);
        int64_t r0, r1;
        ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            const int64_t i1 = r % src0->ne[1], i2 = (r / src0->ne[1]) % src0->ne[2], i3 = r / (src0->ne[1] * src0->ne[2]);
            const char * s = (const char *) src0->data + i1 * src0->nb[1] + i2 * src0->nb[2] + i3 * src0->nb[3];
            char       * d = (char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
            if (src0->nb[0] == esize && dst->nb[0] == esize) {
                memcpy(d, s, esize * (size_t) src0->ne[0]);
            } else {
                for (int64_t i0 = 0; i0 < src0->ne[0]; i0++) {
                    memcpy(d + i0 * dst->nb[0], s + i0 * src0->nb[0], esize);
                }
            }
        }
        ggml_cpu_barrier(params);
    }

    const bool acc = dst->op == GGML_OP_ACC;
    const int64_t nr = ggml_nrows(src1);
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % src1->ne[1], i2 = (r / src1->ne[1]) % src1->ne[2], i3 = r / (src1->ne[1] * src1->ne[2]);
        const char * s = (const char *) src1->data + i1 * src1->nb[1] + i2 * src1->nb[2] + i3 * src1->nb[3];
        char       * d = (char *) dst->data + offset + i1 * vnb1 + i2 * vnb2 + i3 * vnb3;
        for (int64_t i0 = 0; i0 < src1->ne[0]; i0++) {
            char * p = d + (size_t) i0 * esize;
            if (acc) {
                *(float *) p += *(const float *) (s + i0 * src1->nb[0]);
            } else {
                memcpy(p, s + i0 * src1->nb[0], esize);
            }
        }
    }
}

// true when every element the view writes lies inside dst (checked before computing: a bad view is an error,
// not a write out of bounds)
bool ggml_cpu_acc_set_view_fits(const struct ggml_tensor * op) {
    const struct ggml_tensor * b = op->src[1];
    if (ggml_is_empty(b)) {
        return true;
    }
    const int32_t * p = op->op_params;
    if (p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0) {
        return false;
    }
    const size_t last = (size_t) p[3] + (size_t) (b->ne[1] - 1) * (size_t) p[0] + (size_t) (b->ne[2] - 1) * (size_t) p[1] +
                        (size_t) (b->ne[3] - 1) * (size_t) p[2] + (size_t) b->ne[0] * ggml_type_size(op->type);
    return last <= ggml_nbytes(op);
}

// ---- DIAG ------------------------------------------------------------------------------------------------

void ggml_cpu_forward_diag(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    GGML_TENSOR_UNARY_OP_LOCALS
    const int64_t nr = ne1 * ne2 * ne3;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        char * d = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            *(float *) (d + i0 * nb0) = 0.0f;
        }
        *(float *) (d + i1 * nb0) = *(const float *) ((const char *) src0->data + i1 * nb00 + i2 * nb02 + i3 * nb03);
    }
}

// ---- OUT_PROD --------------------------------------------------------------------------------------------

// dst[i0, i1, i2, i3] = sum_k src0[i0, k, i2 / r2, i3 / r3] * src1[i1, k, i2, i3]. Each thread owns a range
// of dst rows; per (i2, i3) block it converts every src0 row once and adds it, scaled, to its rows.
void ggml_cpu_forward_out_prod(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    GGML_TENSOR_BINARY_OP_LOCALS
    const int64_t r2 = ne2 / ne02, r3 = ne3 / ne03;
    float * tmp = (float *) ((char *) params->wdata + (size_t) params->ith * GGML_PAD(sizeof(float) * (size_t) ne00, GGML_CPU_CACHE_LINE));

    int64_t q0, q1;
    ggml_cpu_split_rows(ne1 * ne2 * ne3, params->ith, params->nth, &q0, &q1);
    int64_t q = q0;
    while (q < q1) {
        const int64_t blk = q / ne1, i2 = blk % ne2, i3 = blk / ne2;
        const int64_t a = q % ne1;
        const int64_t b = (blk + 1) * ne1 < q1 ? ne1 : q1 - blk * ne1; // rows [a, b) of this block
        for (int64_t i1 = a; i1 < b; i1++) {
            float * d = (float *) ((char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3);
            memset(d, 0, sizeof(float) * (size_t) ne0);
        }
        for (int64_t k = 0; k < ne01; k++) {
            const void * srow = (const char *) src0->data + k * nb01 + (i2 / r2) * nb02 + (i3 / r3) * nb03;
            const float * x = ggml_cpu_row_to_float(srow, src0->type, nb00, ne00, tmp);
            for (int64_t i1 = a; i1 < b; i1++) {
                const float w = ggml_cpu_get_elem_f((const char *) src1->data + i1 * nb10 + k * nb11 + i2 * nb12 + i3 * nb13, src1->type);
                float * d = (float *) ((char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3);
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    d[i0] += x[i0] * w;
                }
            }
        }
        q = blk * ne1 + b;
    }
}

// ---- GROUP_NORM ------------------------------------------------------------------------------------------

// the ne2 channels are split into n_groups groups of ceil(ne2 / n_groups) (the last one may be smaller);
// each (group, i3) block is normalized to zero mean and unit variance over all its ne0*ne1*channels elements
void ggml_cpu_forward_group_norm(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    GGML_TENSOR_UNARY_OP_LOCALS
    const int n_groups = ggml_get_op_params_i32(dst, 0);
    const float eps    = ggml_get_op_params_f32(dst, 1);
    const int64_t per  = (ne02 + n_groups - 1) / n_groups;

    int64_t b0, b1;
    ggml_cpu_split_rows((int64_t) n_groups * ne03, params->ith, params->nth, &b0, &b1);
    for (int64_t blk = b0; blk < b1; blk++) {
        const int64_t g = blk % n_groups, i3 = blk / n_groups;
        const int64_t c0 = g * per;
        const int64_t c1 = c0 + per < ne02 ? c0 + per : ne02;
        if (c1 <= c0) {
            continue;
        }
        const double n = (double) (ne00 * ne01 * (c1 - c0));
#define X(i0, i1, i2) (*(const float *) ((const char *) src0->data + (i0) * nb00 + (i1) * nb01 + (i2) * nb02 + i3 * nb03))
#define Y(i0, i1, i2) (*(float *) ((char *) dst->data + (i0) * nb0 + (i1) * nb1 + (i2) * nb2 + i3 * nb3))
        double sum = 0.0;
        for (int64_t i2 = c0; i2 < c1; i2++) {
            for (int64_t i1 = 0; i1 < ne01; i1++) {
                for (int64_t i0 = 0; i0 < ne00; i0++) {
                    sum += (double) X(i0, i1, i2);
                }
            }
        }
        const float mean = (float) (sum / n);
        double sum2 = 0.0;
        for (int64_t i2 = c0; i2 < c1; i2++) {
            for (int64_t i1 = 0; i1 < ne01; i1++) {
                for (int64_t i0 = 0; i0 < ne00; i0++) {
                    const float v = X(i0, i1, i2) - mean;
                    Y(i0, i1, i2) = v;
                    sum2 += (double) (v * v);
                }
            }
        }
        const float scale = 1.0f / sqrtf((float) (sum2 / n) + eps);
        for (int64_t i2 = c0; i2 < c1; i2++) {
            for (int64_t i1 = 0; i1 < ne01; i1++) {
                for (int64_t i0 = 0; i0 < ne00; i0++) {
                    Y(i0, i1, i2) *= scale;
                }
            }
        }
#undef X
#undef Y
    }
}
