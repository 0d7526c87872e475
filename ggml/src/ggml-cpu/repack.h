// Weights repacked at load time into an interleaved layout for token generation (the "CPU_REPACK" extra
// buffer type, as in llama.cpp).
//
// A matrix of a repackable type with ne[1] % 16 == 0 is stored as groups of 16 consecutive rows. A group holds,
// for each column block b of the type (32 elements for Q4_0 and Q8_0, 256 for the K-quants), one interleaved
// block of 16 * type_size bytes: the same bytes as the 16 rows' blocks b together (Q8_0: each quant offset by
// 128), in an order where one 512-bit load feeds one 32-bit lane per row, so a gemv reads the group as a
// single stream. The tensor keeps its size and strides; only the byte order inside each group of rows
// differs. The per-type layouts:
//
// Q4_0 (288-byte blocks):
//   bytes   0.. 31: the 16 rows' fp16 scales, row r at 2 r
//   bytes  32..287: the 16 rows' nibbles as 4 words of 64 bytes; word m has row r's qs[4m..4m+3] at 4 r
// Q8_0 (544-byte blocks):
//   bytes   0.. 31: the 16 rows' fp16 scales, row r at 2 r
//   bytes  32..543: 8 words of 64 bytes; word g has row r's qs[4g..4g+3] at 4 r, each stored as q + 128
//                   (q ^ 0x80): unsigned, the operand vpdpbusd wants, against the signed activations
// Q4_K (2304-byte blocks; sub-block j = elements 32 j .. 32 j + 31 with 6-bit scale sc_j and min m_j):
//   bytes    0..  31: d, row r at 2 r            bytes  32.. 63: dmin, row r at 2 r
//   bytes   64.. 127: u32 per row (at 4 r): bits 4j..4j+3 = sc_j & 15
//   bytes  128.. 191: u32 per row: bits 4j..4j+3 = m_j & 15
//   bytes  192.. 255: u32 per row: bits 2j..2j+1 = sc_j >> 4, bits 16+2j..17+2j = m_j >> 4
//   bytes  256..2303: the nibbles as 4 chunks of 8 words of 64 bytes; word m of chunk c (at 256 + 512 c + 64 m)
//                     has row r's qs[32c + 4m .. 32c + 4m + 3] at 4 r (low nibbles: sub-block 2c, high: 2c+1)
//   so a gemv gets the 16 rows' scale of a sub-block with a few shifts of three registers, not a 6-bit
//   unpack per row.
// Q6_K (3360-byte blocks; scale s = int8 of elements 16 s .. 16 s + 15):
//   bytes    0..  31: d, row r at 2 r
//   bytes   32.. 287: the scales as 8 pairs of 32 bytes; pair p has row r's scales 2p, 2p+1 at 2 r
//   bytes  288..3359: 2 halves of 8 triples of words of 64 bytes; triple m of half h (at 288 + 1536 h + 192 m)
//                     has row r's ql[64h + 4m ..], ql[64h + 32 + 4m ..], qh[32h + 4m ..] (4 bytes each) at 4 r
//                     of its three words: together 16 values of each row, and a gemv reads the block in order
//                     (three interleaved streams defeat the hardware prefetcher: 3x slower from memory)
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

#define GGML_CPU_REPACK_ROWS 16 // rows per interleaved group (every type)

// the "CPU_REPACK" buffer type: set_tensor stores the weights that ggml_cpu_repack_supported accepts in the
// interleaved layout (other tensors as they are), get_tensor gives the plain layout back. Not host memory:
// only MUL_MAT may read its tensors, as src0.
ggml_backend_buffer_type_t ggml_backend_cpu_repack_buffer_type(void);

// true if a tensor of this type and shape is stored interleaved in a CPU_REPACK buffer: a type of the table
// below that is enabled, 2-D, contiguous, ne[1] % 16 == 0
bool ggml_cpu_repack_supported(const struct ggml_tensor * t);
// true if t's data is in the interleaved layout (t lives in a CPU_REPACK buffer and is supported)
bool ggml_cpu_repack_is_repacked(const struct ggml_tensor * t);

// s[r] = dot(row r, y) for the 16 * ngroups rows of the interleaved groups at x (k elements per row), y one
// row of the type's vec_dot_type (Q8_0 for Q4_0 and Q8_0, Q8_K for the K-quants). Per block and row: the
// exact integer sums of the scalar vec_dot, then its float steps in its order, i.e. the same result as the
// scalar vec_dot of the type, bit for bit, on every ISA.
typedef void (*ggml_cpu_repack_gemv_t)(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                       const void * GGML_RESTRICT y, int64_t ngroups);
// plain rows (nrows a multiple of 16, k elements each, rows contiguous) <-> interleaved groups; src and dst
// must not overlap
typedef void (*ggml_cpu_repack_convert_t)(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows,
                                          int64_t k);

// one repackable type. A new type adds its layout to the comment above, its files repack-<type>*.c, and one
// entry to the table in repack.c
struct ggml_cpu_repack_traits {
    enum ggml_type            type;
    bool                      enabled;             // stored interleaved by default (only where tg is faster)
    ggml_cpu_repack_convert_t repack;              // plain -> interleaved
    ggml_cpu_repack_convert_t unpack;              // interleaved -> plain
    ggml_cpu_repack_gemv_t    gemv[GGML_CPU_ISA_AVX512 + 1]; // per ISA; NULL: use the one below
};

// the traits of a type, NULL if it has no interleaved layout (enabled or not)
const struct ggml_cpu_repack_traits * ggml_cpu_repack_get_traits(enum ggml_type type);

// the gemv of a type for an ISA (the ISA must be supported by the CPU); of the active ISA for isa = -1; NULL
// if the type has no interleaved layout
ggml_cpu_repack_gemv_t ggml_cpu_repack_gemv(enum ggml_type type, int isa);

// a host buffer of at least size bytes, 64-byte aligned; iface's free_buffer and get_base are replaced by the ones
// that match this allocation (shared by the CPU and CPU_REPACK buffer types; defined in ggml-cpu-backend.c)
struct ggml_backend_buffer_i;
ggml_backend_buffer_t ggml_cpu_alloc_aligned_buffer(ggml_backend_buffer_type_t buft, struct ggml_backend_buffer_i iface,
                                                    size_t size);

// the walk every layout shares: plain rows of nb blocks (row_block bytes each) <-> groups of 16 rows whose
// column block b is one group_block-byte block; the per-type function places row r's block inside it
typedef void (*ggml_cpu_repack_row_t)(uint8_t * GGML_RESTRICT blk, const void * GGML_RESTRICT row_block, int r);
typedef void (*ggml_cpu_unpack_row_t)(const uint8_t * GGML_RESTRICT blk, void * GGML_RESTRICT row_block, int r);
void ggml_cpu_repack_groups(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t nb,
                            size_t row_block, size_t group_block, ggml_cpu_repack_row_t pack_row);
void ggml_cpu_unpack_groups(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t nb,
                            size_t row_block, size_t group_block, ggml_cpu_unpack_row_t unpack_row);

// ---- per type (repack-<type>.c: layout and scalar gemv; repack-<type>-<isa>.c: SIMD gemvs) -------------

#define GGML_CPU_REPACK_Q4_0_BLOCK 288 // bytes of one Q4_0 column block (32 elements) of a group

void ggml_cpu_repack_q4_0(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k);
void ggml_cpu_unpack_q4_0(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k);
void ggml_cpu_repack_gemv_q4_0_scalar(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups);
void ggml_cpu_repack_gemv_q4_0_avx2(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                    const void * GGML_RESTRICT y, int64_t ngroups);
void ggml_cpu_repack_gemv_q4_0_avx512(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups);

#define GGML_CPU_REPACK_Q8_0_BLOCK 544 // bytes of one Q8_0 column block (32 elements) of a group

void ggml_cpu_repack_q8_0(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k);
void ggml_cpu_unpack_q8_0(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k);
void ggml_cpu_repack_gemv_q8_0_scalar(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups);
void ggml_cpu_repack_gemv_q8_0_avx2(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                    const void * GGML_RESTRICT y, int64_t ngroups);
void ggml_cpu_repack_gemv_q8_0_avx512(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups);

#define GGML_CPU_REPACK_Q4_K_BLOCK 2304 // bytes of one Q4_K column block (256 elements) of a group

void ggml_cpu_repack_q4_K(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k);
void ggml_cpu_unpack_q4_K(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k);
void ggml_cpu_repack_gemv_q4_K_scalar(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups);
void ggml_cpu_repack_gemv_q4_K_avx2(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                    const void * GGML_RESTRICT y, int64_t ngroups);
void ggml_cpu_repack_gemv_q4_K_avx512(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups);

#define GGML_CPU_REPACK_Q6_K_BLOCK 3360 // bytes of one Q6_K column block (256 elements) of a group

void ggml_cpu_repack_q6_K(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k);
void ggml_cpu_unpack_q6_K(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t k);
void ggml_cpu_repack_gemv_q6_K_scalar(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups);
void ggml_cpu_repack_gemv_q6_K_avx2(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                    const void * GGML_RESTRICT y, int64_t ngroups);
void ggml_cpu_repack_gemv_q6_K_avx512(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups);

#ifdef __cplusplus
}
#endif
