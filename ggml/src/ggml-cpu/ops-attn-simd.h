// The flash-attention kernels whose logic is the same at every vector width, written once. Included by
// ops-attn-avx2.c and ops-attn-avx512.c after they define (W = lanes of one register):
//   FA_V              the register type              FA_W               its lanes (8 or 16)
//   FA_LOAD(p)        W floats from p                FA_STORE(p, v)     W floats to p
//   FA_LOAD_F16(p)    W halves from p, as floats     FA_STORE_F16(p, v) v rounded to W halves at p
//   FA_SET1(x)        x in every lane                FA_FMA(a, b, c)    a*b + c, one rounding
//   FA_MUL(a, b)      a*b                            FA_ROUND_F16(v)    v rounded to half and back
//   FA_HG             heads per pass of mad_f16_rows_heads (2 or 4: what the registers hold)
//   FA_HAVE_DOT_HEADS (optional) the file has its own dot_f16_heads
// and before they define dot_f16 (declared here, used by the plain dot_f16_heads).
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

// mad_f16_rows for HN heads at once over the same V rows: a block of FA_RB registers per head, every V row
// converted once for all heads. Each head's elements see exactly mad_f16_rows's operations in its order.
#define FA_MAD_HEADS(HN)                                                                                        \
    static int mad_heads_##HN(int n, ggml_fp16_t * const * y, const ggml_fp16_t * const * x, const float * ms, \
                              const float * vs, int nrows, int ld) {                                            \
        int i = 0;                                                                                              \
        for (; i + FA_RB * FA_W <= n; i += FA_RB * FA_W) {                                                      \
            FA_V acc[HN][FA_RB];                                                                                \
            for (int h = 0; h < HN; h++) {                                                                      \
                for (int u = 0; u < FA_RB; u++) {                                                               \
                    acc[h][u] = FA_LOAD_F16(y[h] + i + u * FA_W);                                               \
                }                                                                                               \
            }                                                                                                   \
            for (int r = 0; r < nrows; r++) {                                                                   \
                FA_V xv[FA_RB];                                                                                 \
                for (int u = 0; u < FA_RB; u++) {                                                               \
                    xv[u] = FA_LOAD_F16(x[r] + i + u * FA_W);                                                   \
                }                                                                                               \
                for (int h = 0; h < HN; h++) {                                                                  \
                    if (ms[h * ld + r] != 1.0f) {                                                               \
                        const FA_V m = FA_SET1(ms[h * ld + r]);                                                 \
                        for (int u = 0; u < FA_RB; u++) {                                                       \
                            acc[h][u] = FA_ROUND_F16(FA_MUL(acc[h][u], m));                                     \
                        }                                                                                       \
                    }                                                                                           \
                    const FA_V vv = FA_SET1(vs[h * ld + r]);                                                    \
                    for (int u = 0; u < FA_RB; u++) {                                                           \
                        acc[h][u] = FA_ROUND_F16(FA_FMA(xv[u], vv, acc[h][u]));                                 \
                    }                                                                                           \
                }                                                                                               \
            }                                                                                                   \
            for (int h = 0; h < HN; h++) {                                                                      \
                for (int u = 0; u < FA_RB; u++) {                                                               \
                    FA_STORE_F16(y[h] + i + u * FA_W, acc[h][u]);                                               \
                }                                                                                               \
            }                                                                                                   \
        }                                                                                                       \
        return i;                                                                                               \
    }

FA_MAD_HEADS(1)
#if FA_HG == 4
FA_MAD_HEADS(4)
#define mad_heads_hg mad_heads_4
#else
FA_MAD_HEADS(2)
#define mad_heads_hg mad_heads_2
#endif

static void mad_f16_rows_heads(int n, ggml_fp16_t * const * y, int nh, const ggml_fp16_t * const * x, const float * ms,
                               const float * vs, int nrows, int ld) {
    int done = 0; // elements done by the register blocks, the same for every head
    int h = 0;
    for (; h + FA_HG <= nh; h += FA_HG) {
        done = mad_heads_hg(n, y + h, x, ms + h * ld, vs + h * ld, nrows, ld);
    }
    for (; h < nh; h++) {
        done = mad_heads_1(n, y + h, x, ms + h * ld, vs + h * ld, nrows, ld);
    }
    if (done < n) {
        // the rest (n % (FA_RB * FA_W) elements) one head at a time, as mad_f16_rows finishes a row
        const ggml_fp16_t * xs[GGML_FA_ROWS_MAX];
        for (int r = 0; r < nrows; r++) {
            xs[r] = x[r] + done;
        }
        for (h = 0; h < nh; h++) {
            mad_f16_rows(n - done, y[h] + done, xs, ms + h * ld, vs + h * ld, nrows);
        }
    }
}

static float dot_f16(int n, const ggml_fp16_t * x, const ggml_fp16_t * y);

#ifndef FA_HAVE_DOT_HEADS
static void dot_f16_heads(int n, const ggml_fp16_t * const * x, int nrows, const ggml_fp16_t * const * y, int nh,
                          float * out, int ld) {
    for (int r = 0; r < nrows; r++) {
        for (int h = 0; h < nh; h++) {
            out[h * ld + r] = dot_f16(n, x[r], y[h]);
        }
    }
}
#endif

// the heads' sums are independent chains: rows outer, heads inner, so that they overlap (fmaf is one
// instruction in these files)
static void softmax_steps_heads(int nh, int nrows, int ld, const float * ex, const bool * nm, float * ms, float * vs,
                                float * S) {
    for (int r = 0; r < nrows; r++) {
        for (int h = 0; h < nh; h++) {
            const int e = h * ld + r;
            ms[e] = nm[e] ? ex[e] : 1.0f;
            vs[e] = nm[e] ? 1.0f : ex[e];
            S[h] = fmaf(S[h], ms[e], vs[e]);
        }
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
