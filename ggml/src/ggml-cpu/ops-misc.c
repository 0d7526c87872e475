// Reductions (SUM, SUM_ROWS, MEAN, CUMSUM, ARGMAX, COUNT_EQUAL), sorting (ARGSORT, TOP_K), layout ops
// (REPEAT, CONCAT, PAD, ARANGE, ROLL, TRI) and user callbacks (MAP_CUSTOM1..3, CUSTOM).

#include "ggml-cpu-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROW_COORDS(r, t) \
    const int64_t i1 = (r) % (t)->ne[1], i2 = ((r) / (t)->ne[1]) % (t)->ne[2], i3 = (r) / ((t)->ne[1] * (t)->ne[2])

static const char * row_of(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return (const char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

void ggml_cpu_forward_reduce(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int64_t ne00 = src0->ne[0];
    const size_t  nb00 = src0->nb[0];

    if (dst->op == GGML_OP_SUM || dst->op == GGML_OP_COUNT_EQUAL) {
        if (params->ith != 0) {
            return;
        }
        const int64_t nr = ggml_nrows(src0);
        if (dst->op == GGML_OP_SUM) {
            double sum = 0.0;
            for (int64_t r = 0; r < nr; r++) {
                ROW_COORDS(r, src0);
                const char * s = row_of(src0, i1, i2, i3);
                for (int64_t i = 0; i < ne00; i++) {
                    sum += (double) *(const float *) (s + i * nb00);
                }
            }
            *(float *) dst->data = (float) sum;
        } else {
            const struct ggml_tensor * src1 = dst->src[1];
            int64_t count = 0;
            for (int64_t r = 0; r < nr; r++) {
                ROW_COORDS(r, src0);
                const char * a = row_of(src0, i1, i2, i3);
                const char * b = row_of(src1, i1, i2, i3);
                for (int64_t i = 0; i < ne00; i++) {
                    count += *(const int32_t *) (a + i * nb00) == *(const int32_t *) (b + i * src1->nb[0]);
                }
            }
            *(int64_t *) dst->data = count;
        }
        return;
    }

    const int64_t nr = ggml_nrows(src0);
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        ROW_COORDS(r, src0);
        const char * s = row_of(src0, i1, i2, i3);
        char * d = (char *) row_of(dst, i1, i2, i3);
        switch (dst->op) {
            case GGML_OP_SUM_ROWS:
            case GGML_OP_MEAN: {
                double sum = 0.0;
                for (int64_t i = 0; i < ne00; i++) {
                    sum += (double) *(const float *) (s + i * nb00);
                }
                *(float *) d = dst->op == GGML_OP_MEAN ? (float) (sum / (double) ne00) : (float) sum;
                break;
            }
            case GGML_OP_CUMSUM: {
                double sum = 0.0;
                for (int64_t i = 0; i < ne00; i++) {
                    sum += (double) *(const float *) (s + i * nb00);
                    *(float *) (d + i * dst->nb[0]) = (float) sum;
                }
                break;
            }
            case GGML_OP_ARGMAX: {
                // first index of the maximum; argmax output is I32 [ne1] of a matrix
                float   best = -INFINITY;
                int32_t idx  = 0;
                for (int64_t i = 0; i < ne00; i++) {
                    const float x = *(const float *) (s + i * nb00);
                    if (x > best) {
                        best = x;
                        idx  = (int32_t) i;
                    }
                }
                ((int32_t *) dst->data)[i1] = idx;
                break;
            }
            default:
                break;
        }
    }
}

// ---- sorting ---------------------------------------------------------------------------------------------

struct sort_ctx {
    const char * row;
    size_t       nb0;
    int          desc;
};

static int cmp_idx(const void * pa, const void * pb, void * arg) {
    const struct sort_ctx * c = arg;
    const int32_t ia = *(const int32_t *) pa;
    const int32_t ib = *(const int32_t *) pb;
    const float a = *(const float *) (c->row + (size_t) ia * c->nb0);
    const float b = *(const float *) (c->row + (size_t) ib * c->nb0);
    if (a != b) {
        const int lt = a < b ? -1 : 1;
        return c->desc ? -lt : lt;
    }
    // ties keep index order so results are deterministic
    return ia < ib ? -1 : (ia > ib ? 1 : 0);
}

void ggml_cpu_forward_sort(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int64_t ne00 = src0->ne[0];
    const bool top_k = dst->op == GGML_OP_TOP_K;
    struct sort_ctx c = { NULL, src0->nb[0], top_k ? 1 : (ggml_get_op_params_i32(dst, 0) == GGML_SORT_ORDER_DESC) };
    int32_t * tmp = (int32_t *) ((char *) params->wdata + (size_t) params->ith * GGML_PAD(sizeof(int32_t) * (size_t) ne00, GGML_CPU_CACHE_LINE));

    const int64_t nr = ggml_nrows(src0);
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        ROW_COORDS(r, src0);
        c.row = row_of(src0, i1, i2, i3);
        char * d = (char *) row_of(dst, i1, i2, i3);
        int32_t * idx = top_k ? tmp : (dst->nb[0] == sizeof(int32_t) ? (int32_t *) d : tmp);
        for (int64_t i = 0; i < ne00; i++) {
            idx[i] = (int32_t) i;
        }
        qsort_r(idx, (size_t) ne00, sizeof(int32_t), cmp_idx, &c);
        const int64_t n_out = dst->ne[0];
        if (idx != (int32_t *) d) {
            for (int64_t i = 0; i < n_out; i++) {
                *(int32_t *) (d + i * dst->nb[0]) = idx[i];
            }
        }
    }
}

// ---- layout ----------------------------------------------------------------------------------------------

void ggml_cpu_forward_layout(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];

    if (dst->op == GGML_OP_ARANGE) {
        const float start = ggml_get_op_params_f32(dst, 0);
        const float step  = ggml_get_op_params_f32(dst, 2);
        int64_t e0, e1;
        ggml_cpu_split_rows(dst->ne[0], params->ith, params->nth, &e0, &e1);
        for (int64_t i = e0; i < e1; i++) {
            ((float *) dst->data)[i] = start + step * (float) i;
        }
        return;
    }

    const size_t es = ggml_type_size(dst->type);
    const int64_t nr = ggml_nrows(dst);
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        ROW_COORDS(r, dst);
        char * d = (char *) row_of(dst, i1, i2, i3);
        switch (dst->op) {
            case GGML_OP_REPEAT: {
                const char * s = row_of(src0, i1 % src0->ne[1], i2 % src0->ne[2], i3 % src0->ne[3]);
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                    memcpy(d + i0 * dst->nb[0], s + (i0 % src0->ne[0]) * src0->nb[0], es);
                }
                break;
            }
            case GGML_OP_CONCAT: {
                const int dim = ggml_get_op_params_i32(dst, 0);
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                    int64_t c[4] = { i0, i1, i2, i3 };
                    const struct ggml_tensor * t = src0;
                    if (c[dim] >= src0->ne[dim]) {
                        c[dim] -= src0->ne[dim];
                        t = src1;
                    }
                    memcpy(d + i0 * dst->nb[0], (const char *) t->data + c[0] * t->nb[0] + c[1] * t->nb[1] +
                                                    c[2] * t->nb[2] + c[3] * t->nb[3], es);
                }
                break;
            }
            case GGML_OP_ROLL: {
                // dst[i] = src[i - shift] per dimension, wrapping around
                const int32_t * sh = dst->op_params;
                const int64_t c[4] = { 0, i1, i2, i3 };
                int64_t j[4];
                for (int k = 1; k < 4; k++) {
                    const int64_t n = src0->ne[k];
                    j[k] = ((c[k] - sh[k]) % n + n) % n;
                }
                const char * s = row_of(src0, j[1], j[2], j[3]);
                const int64_t n0 = src0->ne[0];
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                    const int64_t j0 = ((i0 - sh[0]) % n0 + n0) % n0;
                    memcpy(d + i0 * dst->nb[0], s + j0 * src0->nb[0], es);
                }
                break;
            }
            case GGML_OP_PAD: {
                const int32_t * p = dst->op_params; // lp0, rp0, lp1, rp1, ...
                const int64_t j1 = i1 - p[2], j2 = i2 - p[4], j3 = i3 - p[6];
                const bool row_in = j1 >= 0 && j1 < src0->ne[1] && j2 >= 0 && j2 < src0->ne[2] && j3 >= 0 && j3 < src0->ne[3];
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                    const int64_t j0 = i0 - p[0];
                    float v = 0.0f;
                    if (row_in && j0 >= 0 && j0 < src0->ne[0]) {
                        v = *(const float *) (row_of(src0, j1, j2, j3) + j0 * src0->nb[0]);
                    }
                    *(float *) (d + i0 * dst->nb[0]) = v;
                }
                break;
            }
            case GGML_OP_TRI: {
                const int type = ggml_get_op_params_i32(dst, 0);
                const char * s = row_of(src0, i1, i2, i3);
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                    bool keep;
                    switch (type) {
                        case GGML_TRI_TYPE_UPPER_DIAG: keep = i0 >= i1; break;
                        case GGML_TRI_TYPE_UPPER:      keep = i0 >  i1; break;
                        case GGML_TRI_TYPE_LOWER_DIAG: keep = i0 <= i1; break;
                        default:                       keep = i0 <  i1; break;
                    }
                    *(float *) (d + i0 * dst->nb[0]) = keep ? *(const float *) (s + i0 * src0->nb[0]) : 0.0f;
                }
                break;
            }
            default:
                break;
        }
    }
}

// ---- custom ----------------------------------------------------------------------------------------------

void ggml_cpu_forward_custom(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    struct ggml_custom_op_params p;
    memcpy(&p, dst->op_params, sizeof(p));
    const int n_tasks = p.n_tasks == GGML_N_TASKS_MAX || p.n_tasks > params->nth ? params->nth : p.n_tasks;
    if (params->ith >= n_tasks) {
        return;
    }
    switch (dst->op) {
        case GGML_OP_MAP_CUSTOM1:
            ((ggml_custom1_op_t) p.fun)(dst, dst->src[0], params->ith, n_tasks, p.userdata);
            break;
        case GGML_OP_MAP_CUSTOM2:
            ((ggml_custom2_op_t) p.fun)(dst, dst->src[0], dst->src[1], params->ith, n_tasks, p.userdata);
            break;
        case GGML_OP_MAP_CUSTOM3:
            ((ggml_custom3_op_t) p.fun)(dst, dst->src[0], dst->src[1], dst->src[2], params->ith, n_tasks, p.userdata);
            break;
        default:
            ((ggml_custom_op_t) p.fun)(dst, params->ith, n_tasks, p.userdata);
            break;
    }
}
