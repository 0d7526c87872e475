// The flash-attention kernels whose logic is the same at every vector width, written once. Included by
// ops-attn-avx2.c and ops-attn-avx512.c after they define (W = lanes of one register):
//   FA_V              the register type              FA_W               its lanes (8 or 16)
//   FA_LOAD(p)        W floats from p                FA_STORE(p, v)     W floats to p
//   FA_LOAD_F16(p)    W halves from p, as floats     FA_STORE_F16(p, v) v rounded to W halves at p
//   FA_SET1(x)        x in every lane                FA_FMA(a, b, c)    a*b + c, one rounding
//   FA_MUL(a, b)      a*b                            FA_ROUND_F16(v)    v rounded to half and back
// Each element is computed exactly as the scalar definitions in ops-attn-scalar.c; the width only decides
// how many lanes go at once.
#pragma once

#include "ops-attn.h"

static void mad_f16(int n, ggml_fp16_t * y, const ggml_fp16_t * x, float v) {
    const FA_V vv = FA_SET1(v);
    int i = 0;
    for (; i + FA_W <= n; i += FA_W) {
        FA_STORE_F16(y + i, FA_FMA(FA_LOAD_F16(x + i), vv, FA_LOAD_F16(y + i)));
    }
    for (; i < n; i++) {
        y[i] = GGML_FP32_TO_FP16(fmaf(GGML_FP16_TO_FP32(x[i]), v, GGML_FP16_TO_FP32(y[i])));
    }
}

static void scale_f16(int n, ggml_fp16_t * y, float v) {
    const FA_V vv = FA_SET1(v);
    int i = 0;
    for (; i + FA_W <= n; i += FA_W) {
        FA_STORE_F16(y + i, FA_MUL(FA_LOAD_F16(y + i), vv));
    }
    for (; i < n; i++) {
        y[i] = GGML_FP32_TO_FP16(GGML_FP16_TO_FP32(y[i]) * v);
    }
}

// the accumulator in blocks of FA_RB registers held across all rows: each element sees the same operations
// in the same order whichever block it is in
#define FA_RB 4
static void mad_f16_rows(int n, ggml_fp16_t * y, const ggml_fp16_t * const * x, const float * ms, const float * vs,
                         int nrows) {
    int i = 0;
    for (; i + FA_W <= n;) {
        const int nb = i + FA_RB * FA_W <= n ? FA_RB : 1;
        FA_V acc[FA_RB];
        for (int u = 0; u < nb; u++) {
            acc[u] = FA_LOAD_F16(y + i + u * FA_W);
        }
        for (int r = 0; r < nrows; r++) {
            if (ms[r] != 1.0f) {
                const FA_V m = FA_SET1(ms[r]);
                for (int u = 0; u < nb; u++) {
                    acc[u] = FA_ROUND_F16(FA_MUL(acc[u], m));
                }
            }
            const FA_V vv = FA_SET1(vs[r]);
            for (int u = 0; u < nb; u++) {
                acc[u] = FA_ROUND_F16(FA_FMA(FA_LOAD_F16(x[r] + i + u * FA_W), vv, acc[u]));
            }
        }
        for (int u = 0; u < nb; u++) {
            FA_STORE_F16(y + i + u * FA_W, acc[u]);
        }
        i += nb * FA_W;
    }
    for (; i < n; i++) {
        float a = GGML_FP16_TO_FP32(y[i]);
        for (int r = 0; r < nrows; r++) {
            if (ms[r] != 1.0f) {
                a = GGML_FP16_TO_FP32(GGML_FP32_TO_FP16(a * ms[r]));
            }
            a = GGML_FP16_TO_FP32(GGML_FP32_TO_FP16(fmaf(GGML_FP16_TO_FP32(x[r][i]), vs[r], a)));
        }
        y[i] = GGML_FP32_TO_FP16(a);
    }
}

static void mad_f32(int n, float * y, const float * x, float v) {
    const FA_V vv = FA_SET1(v);
    int i = 0;
    for (; i + FA_W <= n; i += FA_W) {
        FA_STORE(y + i, FA_FMA(FA_LOAD(x + i), vv, FA_LOAD(y + i)));
    }
    for (; i < n; i++) {
        y[i] = fmaf(x[i], v, y[i]);
    }
}

static void scale_f32(int n, float * y, float v) {
    const FA_V vv = FA_SET1(v);
    int i = 0;
    for (; i + FA_W <= n; i += FA_W) {
        FA_STORE(y + i, FA_MUL(FA_LOAD(y + i), vv));
    }
    for (; i < n; i++) {
        y[i] *= v;
    }
}

static void f16_to_f32(int n, float * y, const ggml_fp16_t * x) {
    int i = 0;
    for (; i + FA_W <= n; i += FA_W) {
        FA_STORE(y + i, FA_LOAD_F16(x + i));
    }
    for (; i < n; i++) {
        y[i] = GGML_FP16_TO_FP32(x[i]);
    }
}

// C[RM rows x RN registers] += A * B with the accumulators in registers over the whole k loop: every element
// of C is one fma chain in k order, as the scalar gemm
#define FA_GEMM_UKERNEL(RM, RN)                                                                                  \
    static void gemm_uk_##RM##x##RN(float * C, size_t ldc, const float * A, size_t lda, const float * B,        \
                                    size_t ldb, int K) {                                                         \
        FA_V acc[RM][RN];                                                                                        \
        for (int i = 0; i < RM; i++) {                                                                           \
            for (int r = 0; r < RN; r++) {                                                                       \
                acc[i][r] = FA_LOAD(C + i * ldc + FA_W * r);                                                     \
            }                                                                                                    \
        }                                                                                                        \
        for (int k = 0; k < K; k++) {                                                                            \
            FA_V b[RN];                                                                                          \
            for (int r = 0; r < RN; r++) {                                                                       \
                b[r] = FA_LOAD(B + k * ldb + FA_W * r);                                                          \
            }                                                                                                    \
            for (int i = 0; i < RM; i++) {                                                                       \
                const FA_V a = FA_SET1(A[i * lda + k]);                                                          \
                for (int r = 0; r < RN; r++) {                                                                   \
                    acc[i][r] = FA_FMA(b[r], a, acc[i][r]);                                                      \
                }                                                                                                \
            }                                                                                                    \
        }                                                                                                        \
        for (int i = 0; i < RM; i++) {                                                                           \
            for (int r = 0; r < RN; r++) {                                                                       \
                FA_STORE(C + i * ldc + FA_W * r, acc[i][r]);                                                     \
            }                                                                                                    \
        }                                                                                                        \
    }
