// Internal to the flash-attention files (ops-attn.c, ops-attn-scalar.c, ops-attn-avx2.c, ops-attn-avx512.c,
// ops-attn-simd.h) and SOFT_MAX (ops-softmax.c, which computes llama.cpp's soft_max bits with the same exp and
// sums): the vector kernels of FLASH_ATTN_EXT, one table per instruction set.
//
// llama.cpp's reference outputs were made by its AVX-512 build, so every path here computes the bits that
// build computes: the operation order of its AVX-512 kernels (16 float lanes, fused multiply-adds, the lane
// reduction of _mm512_reduce_add_ps, the AVX-512 exp polynomial with vscalefps) is emulated lane by lane on
// narrower registers and in the scalar fallback. No intrinsics here: this header is also compiled without
// ISA flags.
#pragma once

#include "ggml-cpu-kernels.h"
#include "ggml-impl.h"

#include <math.h>
#include <stddef.h>

// the products and sums below must round exactly where written: GCC does not contract in ISO C mode, clang
// needs to be told
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define GGML_FA_TILE_Q  64 // query rows per tile of the tiled (prompt-processing) path
#define GGML_FA_TILE_KV 64 // K/V rows per tile of the tiled path
#define GGML_FA_LANES   16 // llama.cpp's F32 vector width (AVX-512): the tiled path needs DV % 16 == 0
#define GGML_FA_MAX_GROUP 8 // query heads of one K/V head processed together by the tiled path
#define GGML_FA_ROWS_MAX 32 // K/V rows per block of the row path (the most mad_f16_rows_heads takes)

struct ggml_cpu_fa_kernels {
    // ggml_vec_dot_f16 / _f32: 4 accumulators of 16 lanes over blocks of 64 (fma), folded acc0+acc2,
    // acc1+acc3, then the two, then the 16 lanes as _mm512_reduce_add_ps does; the n % 64 tail is added
    // after (F16: one float product at a time, summed in double; F32: fma in float)
    float  (*dot_f16)(int n, const ggml_fp16_t * x, const ggml_fp16_t * y);
    float  (*dot_f32)(int n, const float * x, const float * y);
    // y[i] = half(fma(x[i], v, y[i])) and y[i] = half(y[i] * v): the F16 accumulator rounds at every step
    void   (*mad_f16)(int n, ggml_fp16_t * y, const ggml_fp16_t * x, float v);
    void   (*scale_f16)(int n, ggml_fp16_t * y, float v);
    // for r = 0..nrows-1: mad_f16(n, y, x[r], vs[r]), preceded by scale_f16(n, y, ms[r]) where ms[r] != 1 (a
    // scale by 1 leaves a half unchanged); the row path's F16 accumulator over a block of K/V rows, kept in
    // registers between the steps (the same roundings as storing it)
    void   (*mad_f16_rows)(int n, ggml_fp16_t * y, const ggml_fp16_t * const * x, const float * ms, const float * vs,
                           int nrows);
    // for h < nh: mad_f16_rows(n, y[h], x, ms + h * ld, vs + h * ld, nrows). The heads of a GQA group over the
    // same V rows: each row is converted once for all of them, and their accumulators' rounding chains run
    // side by side instead of one after another (nrows <= GGML_FA_ROWS_MAX)
    void   (*mad_f16_rows_heads)(int n, ggml_fp16_t * const * y, int nh, const ggml_fp16_t * const * x,
                                 const float * ms, const float * vs, int nrows, int ld);
    // out[h * ld + r] = dot_f16(n, x[r], y[h]) for r < nrows, h < nh: one call per block of K rows, whose
    // independent reductions can overlap
    void   (*dot_f16_heads)(int n, const ggml_fp16_t * const * x, int nrows, const ggml_fp16_t * const * y, int nh,
                            float * out, int ld);
    // the online-softmax steps of a block after its exps, for h < nh, r < nrows (e = h * ld + r):
    // ms[e] = nm[e] ? ex[e] : 1 (the accumulator's rescale on a new maximum), vs[e] = nm[e] ? 1 : ex[e], and
    // S[h] = fma(S[h], ms[e], vs[e]) in r order (llama.cpp's S = S*ms + vs, contracted by its compilers)
    void   (*softmax_steps_heads)(int nh, int nrows, int ld, const float * ex, const bool * nm, float * ms, float * vs,
                                  float * S);
    // y[i] = fma(x[i], v, y[i]) and y[i] *= v
    void   (*mad_f32)(int n, float * y, const float * x, float v);
    void   (*scale_f32)(int n, float * y, float v);
    // x[i] = exp(x[i] - max) with the AVX-512 polynomial; returns the sum: each block of 16 reduced in
    // float, the blocks added in double. n % 16 == 0.
    double (*softmax)(int n, float * x, float max);
    // C[M x N] += A[M x K] * B[K x N] (row strides lda, ldb, ldc): every element one fma chain in k order.
    // N % 16 == 0.
    void   (*gemm)(float * C, size_t ldc, const float * A, size_t lda, const float * B, size_t ldb, int M, int K, int N);
    // y[i] = float(x[i]) (exact)
    void   (*f16_to_f32)(int n, float * y, const ggml_fp16_t * x);
    // x[i] += m[i] (m may be NULL: no add); returns the max of x (-inf for n == 0). n % 16 == 0.
    float  (*add_max)(int n, float * x, const float * m);
    // the tiled path's transposed K tile: kt[d * ldt + c] = float(row c of k at d) for c < nkv, d < dk, the
    // rows nb1 bytes apart, F16 or F32 (a copy: no rounding)
    void   (*pack_kt)(float * kt, size_t ldt, const void * k, size_t nb1, int nkv, int dk, bool f16);
};

void ggml_cpu_fa_kernels_scalar(struct ggml_cpu_fa_kernels * k);
void ggml_cpu_fa_kernels_avx2(struct ggml_cpu_fa_kernels * k);
void ggml_cpu_fa_kernels_avx512(struct ggml_cpu_fa_kernels * k);

// the table of the active ISA (GGML_CPU_ISA); never NULL
const struct ggml_cpu_fa_kernels * ggml_cpu_fa_kernels_get(void);
// the table of a given ISA (tests compare paths); an ISA the CPU lacks gives the scalar table
const struct ggml_cpu_fa_kernels * ggml_cpu_fa_kernels_isa(enum ggml_cpu_isa isa);

// scalar helpers shared by the paths (their tails and rare lanes)

// the 16 lanes summed in _mm512_reduce_add_ps's order: halves, quarters, then (0+2) + (1+3)
static inline float ggml_fa_reduce16(const float * a) {
    float h8[8];
    float h4[4];
    for (int l = 0; l < 8; l++) {
        h8[l] = a[l] + a[l + 8];
    }
    for (int l = 0; l < 4; l++) {
        h4[l] = h8[l] + h8[l + 4];
    }
    const float p0 = h4[0] + h4[2];
    const float p1 = h4[1] + h4[3];
    return p0 + p1;
}

// one lane of llama.cpp's AVX-512 ggml_v_expf (adapted ARM optimized-routines expf): n = round(x/ln2),
// b = x - n*ln2 in two parts, a degree-5 polynomial, then j * 2^n as vscalefps does (one rounding);
// |n| > 192 gives 0 or inf
static inline float ggml_fa_expf_lane(float x) {
    const float r = 0x1.8p23f;
    const float z = fmaf(x, 0x1.715476p+0f, r);
    const float n = z - r;
    if (n != n) {
        return x + x; // NaN in, NaN out
    }
    if (fabsf(n) > 192.0f) {
        return n <= 0.0f ? 0.0f : INFINITY;
    }
    const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
    const float u = b * b;
    const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
                         fmaf(0x1.ffffecp-1f, b, 1.0f));
    return ldexpf(j, (int) n);
}
