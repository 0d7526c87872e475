// Reference (scalar) quantization and dequantization of every block format.
//
// quantize_row_<t>_ref: k floats -> k/blck blocks, ggml's reference algorithm (bit-exact with llama.cpp).
// dequantize_row_<t>:   k/blck blocks -> k floats (bit-exact with llama.cpp's to_float).
// quantize_<t>:         nrows rows of n_per_row floats, optional importance matrix (n_per_row weights);
//                       what llama-quantize calls; returns bytes written.
// k must be a multiple of the block size; callers check that.
#pragma once

#include "ggml-common.h"
#include "ggml.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_QUANT_DECL(t) \
    void   quantize_row_##t##_ref(const float * GGML_RESTRICT x, block_##t * GGML_RESTRICT y, int64_t k); \
    void   dequantize_row_##t(const block_##t * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);      \
    size_t quantize_##t(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows,          \
                        int64_t n_per_row, const float * imatrix);

GGML_QUANT_DECL(q4_0)
GGML_QUANT_DECL(q4_1)
GGML_QUANT_DECL(q5_0)
GGML_QUANT_DECL(q5_1)
GGML_QUANT_DECL(q8_0)
GGML_QUANT_DECL(q2_K)
GGML_QUANT_DECL(q3_K)
GGML_QUANT_DECL(q4_K)
GGML_QUANT_DECL(q5_K)
GGML_QUANT_DECL(q6_K)
GGML_QUANT_DECL(iq4_nl)
GGML_QUANT_DECL(iq4_xs)

#undef GGML_QUANT_DECL

// activation formats (never stored in files, but needed by the dot products)
void quantize_row_q8_1_ref(const float * GGML_RESTRICT x, block_q8_1 * GGML_RESTRICT y, int64_t k);
void dequantize_row_q8_1(const block_q8_1 * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
void quantize_row_q8_K_ref(const float * GGML_RESTRICT x, block_q8_K * GGML_RESTRICT y, int64_t k);
void dequantize_row_q8_K(const block_q8_K * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);

// rows of (nbytes / type_size) blocks: false if a scale is NaN/Inf (what ggml_validate_row_data checks)
bool ggml_quants_validate_row(enum ggml_type type, const void * data, size_t nbytes);

#ifdef __cplusplus
}
#endif
