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

// Order of ARGSORT and TOP_K: by value (descending for TOP_K and ARGSORT DESC, ascending for ASC), equal values
// by index, NaN after every number (then by index). A strict total order, so every result is deterministic.
// llama.cpp leaves TOP_K's output order unspecified (its CPU op returns a partial sort with the first two
// swapped); ours is the top k in descending order, which is also what the CPU top-k sampler produces, so a
// backend chain sees its candidates in the CPU chain's order.
struct sort_ctx {
    const char * row;
    size_t       nb0;
    int          desc;
};

static inline float sort_val(const struct sort_ctx * c, int32_t i) {
    return *(const float *) (c->row + (size_t) i * c->nb0);
}

// true when index ia comes before ib
static inline bool sort_before(const struct sort_ctx * c, int32_t ia, int32_t ib) {
    const float a = sort_val(c, ia);
    const float b = sort_val(c, ib);
    const bool na = isnan(a);
    const bool nb = isnan(b);
    if (na != nb) {
        return nb;
    }
    if (!na && a != b) {
        return c->desc ? a > b : a < b;
    }
    return ia < ib;
}

static int cmp_idx(const void * pa, const void * pb, void * arg) {
    const struct sort_ctx * c = arg;
    const int32_t ia = *(const int32_t *) pa;
    const int32_t ib = *(const int32_t *) pb;
    return sort_before(c, ia, ib) ? -1 : (sort_before(c, ib, ia) ? 1 : 0);
}

// sift-down in a heap whose root is the element that comes last in the order (the worst of those kept)
static void top_k_sift_down(const struct sort_ctx * c, int32_t * h, int64_t n, int64_t i) {
    for (;;) {
        const int64_t l = 2*i + 1;
        const int64_t r = l + 1;
        int64_t w = i;
        if (l < n && sort_before(c, h[w], h[l])) {
            w = l;
        }
        if (r < n && sort_before(c, h[w], h[r])) {
            w = r;
        }
        if (w == i) {
            return;
        }
        const int32_t t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

// the k first indices of row c (in the order above) into idx[0..k), sorted, for k <= n/16 (a larger k sorts the
// whole row): the row streams through a heap of the k best so far, O(n + m log k) with m the number of
// replacements; most of a vocabulary fails the first comparison with the heap's worst value.
static void top_k_row(const struct sort_ctx * c, int32_t * idx, int64_t n, int64_t k) {
    for (int64_t i = 0; i < k; i++) {
        idx[i] = (int32_t) i;
    }
    for (int64_t i = k / 2; i-- > 0;) {
        top_k_sift_down(c, idx, k, i);
    }
    // indices arrive in increasing order, so a later element beats the worst kept one only with a strictly
    // better value (equal values keep the earlier index); NaN never enters while the heap holds a number
    float worst = sort_val(c, idx[0]);
    bool  worst_nan = isnan(worst);
    const bool contiguous = c->nb0 == sizeof(float);
    enum { BLOCK = 64 };
    for (int64_t i = k; i < n;) {
        if (contiguous && !worst_nan && i + BLOCK <= n) {
            // skip a block whose maximum does not beat the worst kept value: one vectorizable pass; NaN compares
            // false, so a NaN-only block is skipped too (NaN never enters while the heap holds a number)
            const float * x = (const float *) c->row + i;
            float m = -INFINITY;
            for (int j = 0; j < BLOCK; j++) {
                m = x[j] > m ? x[j] : m;
            }
            if (!(m > worst)) {
                i += BLOCK;
                continue;
            }
        }
        const int64_t end = contiguous && !worst_nan && i + BLOCK <= n ? i + BLOCK : i + 1;
        for (; i < end; i++) {
            const float v = sort_val(c, (int32_t) i);
            if (worst_nan ? !isnan(v) : v > worst) {
                idx[0] = (int32_t) i;
                top_k_sift_down(c, idx, k, 0);
                worst = sort_val(c, idx[0]);
                worst_nan = isnan(worst);
            }
        }
    }
    qsort_r(idx, (size_t) k, sizeof(int32_t), cmp_idx, (void *) c);
}

// Sortable key of v: ascending keys give the sort order (both directions), equal values equal keys (-0 == +0),
// NaN the largest key (last)
static inline uint32_t sort_key(float v, bool desc) {
    if (isnan(v)) {
        return UINT32_MAX;
    }
    if (v == 0.0f) {
        v = 0.0f;
    }
    uint32_t u;
    memcpy(&u, &v, sizeof(u));
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u); // ascending unsigned order == ascending float order
    // descending: complement; no number maps to UINT32_MAX (that would be the ascending key 0, below -inf)
    return desc ? ~u : u;
}

// full sort of row c into idx[0..n): LSD radix sort on the keys, 3 passes of 11 bits. Each pass is stable and the
// indices start in increasing order, so equal values stay in index order, exactly the comparator's order.
// scratch holds 3*n words (keys, and the second index/key buffers).
static void argsort_row(const struct sort_ctx * c, int32_t * idx, int64_t n, uint32_t * scratch) {
    if (n < 256) {
        for (int64_t i = 0; i < n; i++) {
            idx[i] = (int32_t) i;
        }
        qsort_r(idx, (size_t) n, sizeof(int32_t), cmp_idx, (void *) c);
        return;
    }
    uint32_t * key  = scratch;
    uint32_t * key2 = scratch + n;
    int32_t  * idx2 = (int32_t *) (scratch + 2*n);
    for (int64_t i = 0; i < n; i++) {
        idx[i] = (int32_t) i;
        key[i] = sort_key(sort_val(c, (int32_t) i), c->desc != 0);
    }
    enum { BITS = 11, RADIX = 1 << BITS };
    int32_t * src_i = idx;
    uint32_t * src_k = key;
    int32_t * dst_i = idx2;
    uint32_t * dst_k = key2;
    for (int shift = 0; shift < 32; shift += BITS) {
        int64_t count[RADIX];
        memset(count, 0, sizeof(count));
        for (int64_t i = 0; i < n; i++) {
            count[(src_k[i] >> shift) & (RADIX - 1)]++;
        }
        if (count[(src_k[0] >> shift) & (RADIX - 1)] == n) {
            continue; // every key has the same digit here: nothing moves
        }
        int64_t sum = 0;
        for (int b = 0; b < RADIX; b++) {
            const int64_t t = count[b];
            count[b] = sum;
            sum += t;
        }
        for (int64_t i = 0; i < n; i++) {
            const int64_t pos = count[(src_k[i] >> shift) & (RADIX - 1)]++;
            dst_i[pos] = src_i[i];
            dst_k[pos] = src_k[i];
        }
        int32_t * ti = src_i; src_i = dst_i; dst_i = ti;
        uint32_t * tk = src_k; src_k = dst_k; dst_k = tk;
    }
    if (src_i != idx) {
        memcpy(idx, src_i, (size_t) n * sizeof(int32_t));
    }
}

void ggml_cpu_forward_sort(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int64_t ne00 = src0->ne[0];
    const bool top_k = dst->op == GGML_OP_TOP_K;
    struct sort_ctx c = { NULL, src0->nb[0], top_k ? 1 : (ggml_get_op_params_i32(dst, 0) == GGML_SORT_ORDER_DESC) };
    // this thread's scratch (4 * ne00 words, ggml-cpu.c sizes it): the index row, then 3 * ne00 for the radix sort
    int32_t * tmp = (int32_t *) ((char *) params->wdata + (size_t) params->ith * GGML_PAD(4 * sizeof(int32_t) * (size_t) ne00, GGML_CPU_CACHE_LINE));
    uint32_t * scratch = (uint32_t *) (tmp + ne00);

    const int64_t nr = ggml_nrows(src0);
    const int64_t n_out = dst->ne[0];
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        ROW_COORDS(r, src0);
        c.row = row_of(src0, i1, i2, i3);
        char * d = (char *) row_of(dst, i1, i2, i3);
        int32_t * idx = top_k ? tmp : (dst->nb[0] == sizeof(int32_t) ? (int32_t *) d : tmp);
        if (top_k && n_out * 16 <= ne00) {
            top_k_row(&c, idx, ne00, n_out);
        } else {
            argsort_row(&c, idx, ne00, scratch);
        }
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
