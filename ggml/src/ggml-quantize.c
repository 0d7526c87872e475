// Public quantization entry points (ggml_quantize_chunk and friends): dispatch to the per-type
// quantizers of ggml-quants.c. Library code: bad arguments are logged and answered with 0, never abort.

#include "ggml.h"
#include "ggml-impl.h"
#include "ggml-quants.h"

#include <string.h>

void ggml_quantize_init(enum ggml_type type) {
    // the types we quantize need no lookup tables (the IQ2/IQ1 grids that ggml builds here are not supported)
    (void) type;
}

void ggml_quantize_free(void) {
}

bool ggml_quantize_requires_imatrix(enum ggml_type type) {
    return type == GGML_TYPE_IQ2_XXS || type == GGML_TYPE_IQ2_XS || type == GGML_TYPE_IQ1_S;
}

typedef size_t (*quantize_fn)(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);

static quantize_fn quantizer_for(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_Q4_0:   return quantize_q4_0;
        case GGML_TYPE_Q4_1:   return quantize_q4_1;
        case GGML_TYPE_Q5_0:   return quantize_q5_0;
        case GGML_TYPE_Q5_1:   return quantize_q5_1;
        case GGML_TYPE_Q8_0:   return quantize_q8_0;
        case GGML_TYPE_Q2_K:   return quantize_q2_K;
        case GGML_TYPE_Q3_K:   return quantize_q3_K;
        case GGML_TYPE_Q4_K:   return quantize_q4_K;
        case GGML_TYPE_Q5_K:   return quantize_q5_K;
        case GGML_TYPE_Q6_K:   return quantize_q6_K;
        case GGML_TYPE_IQ4_NL: return quantize_iq4_nl;
        case GGML_TYPE_IQ4_XS: return quantize_iq4_xs;
        default:               return NULL;
    }
}

size_t ggml_quantize_chunk(enum ggml_type type, const float * src, void * dst, int64_t start, int64_t nrows,
                           int64_t n_per_row, const float * imatrix) {
    if (type < 0 || type >= GGML_TYPE_COUNT || ggml_blck_size(type) <= 0) {
        GGML_LOG_ERROR("%s: invalid type %d\n", __func__, (int) type);
        return 0;
    }
    if (!src || !dst || start < 0 || nrows < 0 || n_per_row <= 0) {
        GGML_LOG_ERROR("%s: invalid arguments (start %lld, nrows %lld, n_per_row %lld)\n", __func__,
                       (long long) start, (long long) nrows, (long long) n_per_row);
        return 0;
    }
    const int64_t blck = ggml_blck_size(type);
    if (n_per_row % blck != 0 || start % n_per_row != 0) {
        GGML_LOG_ERROR("%s: %s needs n_per_row (%lld) a multiple of %lld and start (%lld) a multiple of n_per_row\n",
                       __func__, ggml_type_name(type), (long long) n_per_row, (long long) blck, (long long) start);
        return 0;
    }
    if (imatrix == NULL && ggml_quantize_requires_imatrix(type)) {
        GGML_LOG_ERROR("%s: type %s requires an importance matrix\n", __func__, ggml_type_name(type));
        return 0;
    }
    int64_t n;
    if (ggml_mul_overflow_i64(nrows, n_per_row, &n)) {
        GGML_LOG_ERROR("%s: %lld rows of %lld elements overflow\n", __func__, (long long) nrows, (long long) n_per_row);
        return 0;
    }
    const size_t  row_size  = ggml_row_size(type, n_per_row);
    const int64_t start_row = start / n_per_row;
    size_t total;
    if (ggml_mul_overflow_size(row_size, (size_t) nrows, &total)) {
        GGML_LOG_ERROR("%s: output size overflows\n", __func__);
        return 0;
    }

    switch (type) {
        case GGML_TYPE_F32:
            memcpy((float *) dst + start, src + start, (size_t) n * sizeof(float));
            return total;
        case GGML_TYPE_F16:
            ggml_fp32_to_fp16_row(src + start, (ggml_fp16_t *) dst + start, n);
            return total;
        case GGML_TYPE_BF16:
            ggml_fp32_to_bf16_row_ref(src + start, (ggml_bf16_t *) dst + start, n);
            return total;
        default:
            break;
    }

    const quantize_fn fn = quantizer_for(type);
    if (!fn) {
        GGML_LOG_ERROR("%s: quantization to %s is not supported\n", __func__, ggml_type_name(type));
        return 0;
    }
    const size_t written = fn(src + start, (char *) dst + (size_t) start_row * row_size, nrows, n_per_row, imatrix);
    GGML_ASSERT(written == total);
    return written;
}
