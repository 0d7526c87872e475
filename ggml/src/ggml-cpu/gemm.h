// Register-tiled GEMM for matrix products with many activation columns (prompt processing).
//
// Weights are repacked on the fly, GGML_CPU_GEMM_ROWS rows at a time, into a tile where one 512-bit load
// feeds the same elements of all 16 rows. Quantized weights (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, IQ4_XS,
// Q2_K..Q6_K) become int8 in 32-element blocks with per-row scales (and mins / 16-element scales for the
// K-quants); activations are quantized once per matmul with the vec_dot path's quantizer (Q8_0, Q8_1, or
// Q8_K for the K-quants and IQ4_XS) and stored as unsigned bytes (q + 128) with a float scale and sum per 32
// elements (Q2_K: per 16). Each 32-element block is an exact int32 dot per (row, column) (vpdpbusd), equal
// to vec_dot's: the result differs from vec_dot only by the float operations over blocks. Q8_0 keeps
// vec_dot's float operations too (llama.cpp's order, eight chains of 4-element group dots per output), so its
// GEMM results are bit-identical to vec_dot's; there the activations stay signed and the weights take q + 128.
// Float weights (F16, BF16, F32) keep their format in the tile and the FMA tile converts them to F32;
// activations are rounded through the weight's format as in the vec_dot path (F16, BF16: every product is
// then exact; F32: as they are) and stored in panels of GGML_CPU_GEMM_PANEL columns, element i of the
// panel's columns side by side, which the FMA tile reads as a single stream. The float tile runs at the FMA
// unit's throughput; products of F16 values need F32 FMAs to stay exact (vdpbf16ps would need four bf16
// products per F16 product).
//
// Internal to the CPU backend (ops-matmul.c, ggml-cpu.c, tests).
#pragma once

#include "ggml.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_CPU_GEMM_ROWS 16  // weight rows per packed tile
#define GGML_CPU_GEMM_MIN_N 16 // activation columns from which mul_mat prefers the GEMM to vec_dot_mc
#define GGML_CPU_GEMM_PANEL 16 // F16: activation columns per panel

// true if weights of this type have a GEMM on the active ISA (the functions below may only be called then)
bool   ggml_cpu_gemm_supported(enum ggml_type type);

// bytes of one packed tile of rows with k elements (k a multiple of 32, of 256 for the K-quants and IQ4_XS;
// any k for the float types); 64-byte aligned tiles are expected
size_t ggml_cpu_gemm_pack_size(enum ggml_type type, int64_t k);
// bytes of one converted activation row of k elements for weights of this type (a multiple of 64; for F16
// the row's share of its panel, k floats)
size_t ggml_cpu_gemm_act_row_size(enum ggml_type type, int64_t k);
// bytes of ncols converted activation columns (F16: whole panels)
size_t ggml_cpu_gemm_act_size(enum ggml_type type, int64_t k, int64_t ncols);

// packs nrows (1..GGML_CPU_GEMM_ROWS) weight rows of the given type at x (row stride bx, at most
// INT32_MAX / GGML_CPU_GEMM_ROWS bytes) into pack; missing rows are zero
void ggml_cpu_gemm_pack(enum ggml_type type, int64_t k, const void * x, size_t bx, int nrows, void * pack);
// packs one interleaved group of GGML_CPU_REPACK_ROWS rows of k elements (repack.h, CPU_REPACK weights) into
// pack directly: the same bytes as unpacking the group to plain rows and ggml_cpu_gemm_pack of those 16 rows,
// without the unpack and the transpose. Every repack type (Q4_0, Q8_0, Q4_K, Q6_K; a new one needs its
// packer here); false (pack untouched) for any other type
bool ggml_cpu_gemm_pack_repacked(enum ggml_type type, int64_t k, const void * group, void * pack);
// converts k floats into one activation row for weights of the given type: for the quantized types 8-bit
// values and scales bit-identical to the vec_dot path's (Q8_0, Q8_1 or Q8_K); for F16 and BF16, floats
// rounded through that format; writes column col of the activations starting at act
void ggml_cpu_gemm_act_from_float(enum ggml_type type, const float * x, void * act, int64_t k, int64_t col);
// dst[r + c * bdst / 4] = dot(weight row r, activation column c) for r < nrows, c < ncols; act is what
// ggml_cpu_gemm_act_from_float wrote (column 0 first), bact = ggml_cpu_gemm_act_row_size
void ggml_cpu_gemm_run(enum ggml_type type, int64_t k, const void * pack, int nrows, const void * act, size_t bact, int ncols,
                       float * dst, size_t bdst);

// extra work-buffer bytes MUL_MAT / MUL_MAT_ID need for the GEMM path of this node with n_threads (0 if it
// does not use it)
size_t ggml_cpu_mul_mat_gemm_work_size(const struct ggml_tensor * node, int n_threads);

#ifdef __cplusplus
}
#endif
