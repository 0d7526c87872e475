// DUP / CPY / CONT: element copies between layouts and types (F32, F16, BF16, I32, and quantized rows
// through to_float / from_float), plus the row conversion helpers that get_rows/set_rows share.

#include "ggml-cpu-impl.h"
#include "ggml-cpu-kernels.h"

#include <string.h>

const float * ggml_cpu_row_to_float(const void * src, enum ggml_type type, size_t src_nb0, int64_t n, float * tmp) {
    if (type == GGML_TYPE_F32) {
        if (src_nb0 == sizeof(float)) {
            return (const float *) src;
        }
        for (int64_t i = 0; i < n; i++) {
            tmp[i] = *(const float *) ((const char *) src + (size_t) i * src_nb0);
        }
        return tmp;
    }
    if (ggml_is_quantized(type) || src_nb0 == ggml_type_size(type)) {
        if (type == GGML_TYPE_I32) {
            for (int64_t i = 0; i < n; i++) {
                tmp[i] = (float) ((const int32_t *) src)[i];
            }
            return tmp;
        }
        ggml_get_type_traits(type)->to_float(src, tmp, n);
        return tmp;
    }
    for (int64_t i = 0; i < n; i++) {
        tmp[i] = ggml_cpu_get_elem_f((const char *) src + (size_t) i * src_nb0, type);
    }
    return tmp;
}

void ggml_cpu_row_from_float(const float * x, void * dst, enum ggml_type type, size_t dst_nb0, int64_t n) {
    if (ggml_is_quantized(type)) {
        const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(type);
        if (k->from_float) {
            k->from_float(x, dst, n);
        } else {
            ggml_get_type_traits(type)->from_float_ref(x, dst, n);
        }
        return;
    }
    if (dst_nb0 == ggml_type_size(type)) {
        switch (type) {
            case GGML_TYPE_F32:  memcpy(dst, x, (size_t) n * sizeof(float)); return;
            case GGML_TYPE_F16:  ggml_fp32_to_fp16_row(x, (ggml_fp16_t *) dst, n); return;
            case GGML_TYPE_BF16: ggml_fp32_to_bf16_row(x, (ggml_bf16_t *) dst, n); return;
            default: break;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        ggml_cpu_set_elem_f((char *) dst + (size_t) i * dst_nb0, type, x[i]);
    }
}

// row r (flat over dims 1..3) of t
static char * row_ptr(const struct ggml_tensor * t, int64_t r) {
    const int64_t i1 = r % t->ne[1];
    const int64_t i2 = (r / t->ne[1]) % t->ne[2];
    const int64_t i3 = r / (t->ne[1] * t->ne[2]);
    return (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

static char * elem_ptr_flat(const struct ggml_tensor * t, int64_t i) {
    int64_t i0, i1, i2, i3;
    ggml_unravel_index(t, i, &i0, &i1, &i2, &i3);
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

// one element between non-quantized types (I32 converts through float, as ggml does)
static void copy_elem(const struct ggml_tensor * src, const char * s, const struct ggml_tensor * dst, char * d) {
    if (src->type == dst->type) {
        memcpy(d, s, ggml_type_size(src->type));
    } else {
        ggml_cpu_set_elem_f(d, dst->type, ggml_cpu_get_elem_f(s, src->type));
    }
}

void ggml_cpu_forward_dup(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int ith = params->ith;
    const int nth = params->nth;

    if (src->type == dst->type && ggml_is_contiguous(src) && ggml_is_contiguous(dst)) {
        const size_t nbytes = ggml_nbytes(dst);
        const size_t per    = (nbytes + (size_t) nth - 1) / (size_t) nth;
        const size_t b0     = per * (size_t) ith;
        const size_t b1     = b0 + per < nbytes ? b0 + per : nbytes;
        if (b0 < b1 && src->data != dst->data) {
            memcpy((char *) dst->data + b0, (const char *) src->data + b0, b1 - b0);
        }
        return;
    }

    if (src->ne[0] == dst->ne[0]) {
        // row by row; the row index is unravelled separately on each side so shapes may differ above dim 0
        const int64_t n  = dst->ne[0];
        const int64_t nr = ggml_nrows(dst);
        int64_t r0, r1;
        ggml_cpu_split_rows(nr, ith, nth, &r0, &r1);
        float * tmp = (float *) ((char *) params->wdata + (size_t) ith * GGML_PAD(sizeof(float) * (size_t) n, GGML_CPU_CACHE_LINE));
        const size_t es = ggml_type_size(src->type);
        for (int64_t r = r0; r < r1; r++) {
            const char * s = row_ptr(src, r);
            char       * d = row_ptr(dst, r);
            if (src->type == dst->type) {
                if (ggml_is_quantized(src->type) || (src->nb[0] == es && dst->nb[0] == es)) {
                    memmove(d, s, ggml_row_size(src->type, n)); // d == s for in-place dups
                } else {
                    for (int64_t i = 0; i < n; i++) {
                        memcpy(d + i * dst->nb[0], s + i * src->nb[0], es);
                    }
                }
            } else {
                // through floats (I32 included: the row helpers convert it element by element)
                const float * x = ggml_cpu_row_to_float(s, src->type, src->nb[0], n, tmp);
                ggml_cpu_row_from_float(x, d, dst->type, dst->nb[0], n);
            }
        }
        return;
    }

    // different row lengths (non-quantized only): element by element in logical order
    const int64_t ne = ggml_nelements(dst);
    int64_t e0, e1;
    ggml_cpu_split_rows(ne, ith, nth, &e0, &e1);
    for (int64_t i = e0; i < e1; i++) {
        copy_elem(src, elem_ptr_flat(src, i), dst, elem_ptr_flat(dst, i));
    }
}
