// Vectorized expf and the elementwise activations built on it (SiLU, sigmoid, quick GELU and their gated
// forms), one table per instruction set like ops-attn.h.
//
// Every kernel returns exactly what the scalar expression with libm's expf returns on this machine, bit for
// bit: the project reproduces llama.cpp's tokens, and llama.cpp calls libm. The vector paths implement
// glibc's expf (2.27 and later, x86-64 FMA build): in double, k = round(x * 32/ln2) via a shift constant,
// r = x * 32/ln2 - k, s = 2^(k/32) from a 32-entry table of 2^(i/32) bit patterns, a degree-3 polynomial in
// r, with the multiply-adds fused where that build fuses them. Lanes with |x| >= 88 or NaN (overflow,
// underflow, infinities) call expf itself, so errno and the rare results are libm's too. The table init
// checks a sample against expf and falls back to the scalar kernels (with a warning) if this libm differs.
#pragma once

#include "ggml-cpu-kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_cpu_expf_kernels {
    // y[i] = expf(x[i])
    void (*exp)(int n, float * y, const float * x);
    // y[i] = x[i] / (1.0f + expf(-x[i]))                               (SILU)
    void (*silu)(int n, float * y, const float * x);
    // y[i] = 1.0f / (1.0f + expf(-x[i]))                               (SIGMOID)
    void (*sigmoid)(int n, float * y, const float * x);
    // y[i] = x[i] * (1.0f / (1.0f + expf(-1.702f * x[i])))             (GELU_QUICK)
    void (*gelu_quick)(int n, float * y, const float * x);
    // o[i] = x[i] / (1.0f + expf(-x[i])) * g[i]                        (SWIGLU)
    void (*swiglu)(int n, float * o, const float * x, const float * g);
    // o[i] = x[i] * (1.0f / (1.0f + expf(-1.702f * x[i]))) * g[i]      (GEGLU_QUICK)
    void (*geglu_quick)(int n, float * o, const float * x, const float * g);
};

void ggml_cpu_expf_kernels_scalar(struct ggml_cpu_expf_kernels * k);
void ggml_cpu_expf_kernels_avx2(struct ggml_cpu_expf_kernels * k);
void ggml_cpu_expf_kernels_avx512(struct ggml_cpu_expf_kernels * k);

// the table of the active ISA (GGML_CPU_ISA); never NULL
const struct ggml_cpu_expf_kernels * ggml_cpu_expf_kernels_get(void);
// the table of a given ISA (tests compare paths); an ISA the CPU lacks gives the scalar table. An ISA whose
// vector expf failed the start-up check against libm gives the scalar table too.
const struct ggml_cpu_expf_kernels * ggml_cpu_expf_kernels_isa(enum ggml_cpu_isa isa);

// the active table's kernels (x and y/o may be the same array; n >= 0)
void ggml_cpu_vec_expf(int n, float * y, const float * x);
void ggml_cpu_vec_silu(int n, float * y, const float * x);
void ggml_cpu_vec_sigmoid(int n, float * y, const float * x);
void ggml_cpu_vec_gelu_quick(int n, float * y, const float * x);
void ggml_cpu_vec_swiglu(int n, float * o, const float * x, const float * g);
void ggml_cpu_vec_geglu_quick(int n, float * o, const float * x, const float * g);

#ifdef __cplusplus
}
#endif
