// Weights repacked at load time into an interleaved layout for token generation (the "CPU_REPACK" extra
// buffer type, as in llama.cpp).
//
// A Q4_0 matrix with ne[1] % 16 == 0 is stored as groups of 16 consecutive rows. A group holds, for each
// 32-element column block b, one 288-byte block (the same bytes as the 16 rows' block_q4_0 together):
//   bytes   0.. 31: the 16 rows' fp16 scales, row r at 2 r
//   bytes  32..287: the 16 rows' nibbles as 4 words of 64 bytes; word m has row r's qs[4m..4m+3] at 4 r
// so one 512-bit load feeds one 32-bit lane per row, and a gemv reads the group as a single stream.
// The tensor keeps its size and strides; only the byte order inside each group of rows differs.
//
// Internal to the CPU backend (ggml-cpu-backend.c, ops-matmul.c, tests).
#pragma once

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu-kernels.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_CPU_REPACK_ROWS 16    // rows per interleaved group
#define GGML_CPU_REPACK_BLOCK 288  // bytes of one 32-element column block of a group

// the "CPU_REPACK" buffer type: set_tensor stores the weights that ggml_cpu_repack_supported accepts in the
// interleaved layout (other tensors as they are), get_tensor gives the plain layout back. Not host memory:
// only MUL_MAT may read its tensors, as src0.
ggml_backend_buffer_type_t ggml_backend_cpu_repack_buffer_type(void);

// true if a tensor of this type and shape is stored interleaved in a CPU_REPACK buffer: Q4_0, 2-D,
// contiguous, ne[0] % 32 == 0, ne[1] % 16 == 0
bool ggml_cpu_repack_supported(const struct ggml_tensor * t);
// true if t's data is in the interleaved layout (t lives in a CPU_REPACK buffer and is supported)
bool ggml_cpu_repack_is_repacked(const struct ggml_tensor * t);

// plain Q4_0 rows (nrows a multiple of 16, k elements each, rows contiguous) <-> interleaved groups; src and
// dst must not overlap
void ggml_cpu_repack_q4_0(const void * src, void * dst, int64_t nrows, int64_t k);
void ggml_cpu_unpack_q4_0(const void * src, void * dst, int64_t nrows, int64_t k);

// s[r] = dot(row r, y) for the 16 * ngroups rows of the interleaved groups at x (k elements per row), y one
// Q8_0 row. Per block and row: the exact integer dot, then sum += (float) sumi * (dx * dy) in block order,
// i.e. the same operations as the scalar vec_dot_q4_0_q8_0, bit for bit, on every ISA.
typedef void (*ggml_cpu_repack_gemv_t)(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                       const void * GGML_RESTRICT y, int64_t ngroups);

// the gemv of an ISA (the ISA must be supported by the CPU); of the active ISA for isa = -1
ggml_cpu_repack_gemv_t ggml_cpu_repack_gemv_q4_0(int isa);

// a host buffer of at least size bytes, 64-byte aligned, freed by the iface's free_buffer (shared by the CPU
// and CPU_REPACK buffer types; defined in ggml-cpu-backend.c)
struct ggml_backend_buffer_i;
ggml_backend_buffer_t ggml_cpu_alloc_aligned_buffer(ggml_backend_buffer_type_t buft, struct ggml_backend_buffer_i iface,
                                                    size_t size);

void ggml_cpu_repack_gemv_q4_0_scalar(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups);
void ggml_cpu_repack_gemv_q4_0_avx2(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                    const void * GGML_RESTRICT y, int64_t ngroups);
void ggml_cpu_repack_gemv_q4_0_avx512(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups);

#ifdef __cplusplus
}
#endif
