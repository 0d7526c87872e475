// Per-type CPU kernels: the contract between the CPU ops (mul_mat, get_rows, cpy, flash attention) and
// the SIMD kernel files (quants-scalar.c, quants-avx2.c, quants-avx512.c).
//
// A matrix product W·x with W of type T converts x to kernels(T)->vec_dot_type first (ggml's activation
// formats: Q8_0 for Q4_0/Q5_0/Q8_0/IQ4_NL, Q8_1 for Q4_1/Q5_1, Q8_K for the K-quants and IQ4_XS, F16/BF16/F32
// for themselves), then takes vec_dot of each weight row with the converted activation row.
#pragma once

#include "ggml.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// dot product of n elements: x is a row of this type, y a row of vec_dot_type; result in *s
typedef void (*ggml_cpu_vec_dot_t)(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                   const void * GGML_RESTRICT y);

// converts k floats (k a multiple of the block size) to a row of this type, with the same bytes on every ISA.
// Storage formats (Q4_0 .. IQ4_XS) and Q8_K use the reference quantizer of ggml-quants.c; the activation
// formats Q8_0/Q8_1 follow llama.cpp's x86 CPU backend (scale 127/amax, round half to even), whose results
// differ from the reference quantizer at ties; F16/BF16 round to nearest even.
typedef void (*ggml_cpu_from_float_t)(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);

// optional batched form: one row x of this type against nc (1..GGML_CPU_MC_MAX) rows of vec_dot_type at
// y, y + by, y + 2*by, ...; s[c] equals what vec_dot of the same ISA gives for row c, bit for bit. The weight
// row is unpacked once for all columns, which is what makes batches (prompt processing) faster.
#define GGML_CPU_MC_MAX 4
typedef void (*ggml_cpu_vec_dot_mc_t)(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, size_t by, int nc);

struct ggml_cpu_type_kernels {
    enum ggml_type        vec_dot_type; // activation format for vec_dot (GGML_TYPE_COUNT if none)
    ggml_cpu_from_float_t from_float;   // NULL if the type cannot be produced on the CPU
    ggml_cpu_vec_dot_t    vec_dot;      // NULL if the type cannot be multiplied
    ggml_cpu_vec_dot_mc_t vec_dot_mc;   // NULL if there is no batched form (call vec_dot per column)
};

enum ggml_cpu_isa {
    GGML_CPU_ISA_SCALAR = 0,
    GGML_CPU_ISA_AVX2   = 1,
    GGML_CPU_ISA_AVX512 = 2,
};

// the ISA in use: the best the CPU supports (CPUID), lowered by the environment variable
// GGML_CPU_ISA=scalar|avx2|avx512 (a request above what the CPU has falls back to the best available)
enum ggml_cpu_isa ggml_cpu_isa_active(void);
const char *      ggml_cpu_isa_name(enum ggml_cpu_isa isa);
// the best ISA the CPU and OS support, regardless of GGML_CPU_ISA
enum ggml_cpu_isa ggml_cpu_isa_best(void);
// true if the kernels of this ISA may run here (tests loop over the paths with it)
bool              ggml_cpu_isa_supported(enum ggml_cpu_isa isa);

// kernels of a type for the active ISA; never NULL (fields may be NULL)
const struct ggml_cpu_type_kernels * ggml_cpu_get_kernels(enum ggml_type type);

// kernels of a type for a given ISA (tests compare paths); the ISA must be supported by the CPU (an
// unsupported one is logged and replaced by the best supported one); never NULL
const struct ggml_cpu_type_kernels * ggml_cpu_get_kernels_isa(enum ggml_type type, enum ggml_cpu_isa isa);

#ifdef __cplusplus
}
#endif
