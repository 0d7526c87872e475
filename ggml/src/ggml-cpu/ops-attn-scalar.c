// Flash-attention kernels without SIMD: the definition of the bits every other path must give (see
// ops-attn.h). Slow (fmaf may be a library call here); used by the scalar ISA and by tests.

#include "ops-attn.h"

static float dot_f16(int n, const ggml_fp16_t * x, const ggml_fp16_t * y) {
    float acc[4][16] = { { 0.0f } };
    const int np = n & ~63;
    for (int i = 0; i < np; i += 64) {
        for (int j = 0; j < 4; j++) {
            for (int l = 0; l < 16; l++) {
                const int e = i + 16 * j + l;
                acc[j][l] = fmaf(GGML_FP16_TO_FP32(x[e]), GGML_FP16_TO_FP32(y[e]), acc[j][l]);
            }
        }
    }
    for (int l = 0; l < 16; l++) {
        acc[0][l] = acc[0][l] + acc[2][l];
        acc[1][l] = acc[1][l] + acc[3][l];
        acc[0][l] = acc[0][l] + acc[1][l];
    }
    double sum = (double) ggml_fa_reduce16(acc[0]);
    for (int i = np; i < n; i++) {
        const float p = GGML_FP16_TO_FP32(x[i]) * GGML_FP16_TO_FP32(y[i]);
        sum += (double) p;
    }
    return (float) sum;
}

static float dot_f32(int n, const float * x, const float * y) {
    float acc[4][16] = { { 0.0f } };
    const int np = n & ~63;
    for (int i = 0; i < np; i += 64) {
        for (int j = 0; j < 4; j++) {
            for (int l = 0; l < 16; l++) {
                const int e = i + 16 * j + l;
                acc[j][l] = fmaf(x[e], y[e], acc[j][l]);
            }
        }
    }
    for (int l = 0; l < 16; l++) {
        acc[0][l] = acc[0][l] + acc[2][l];
        acc[1][l] = acc[1][l] + acc[3][l];
        acc[0][l] = acc[0][l] + acc[1][l];
    }
    float sum = ggml_fa_reduce16(acc[0]);
    for (int i = np; i < n; i++) {
        sum = fmaf(x[i], y[i], sum);
    }
    return sum;
}

static void mad_f16(int n, ggml_fp16_t * y, const ggml_fp16_t * x, float v) {
    for (int i = 0; i < n; i++) {
        y[i] = GGML_FP32_TO_FP16(fmaf(GGML_FP16_TO_FP32(x[i]), v, GGML_FP16_TO_FP32(y[i])));
    }
}

static void scale_f16(int n, ggml_fp16_t * y, float v) {
    for (int i = 0; i < n; i++) {
        y[i] = GGML_FP32_TO_FP16(GGML_FP16_TO_FP32(y[i]) * v);
    }
}

static void mad_f16_rows(int n, ggml_fp16_t * y, const ggml_fp16_t * const * x, const float * ms, const float * vs,
                         int nrows) {
    for (int r = 0; r < nrows; r++) {
        if (ms[r] != 1.0f) {
            scale_f16(n, y, ms[r]);
        }
        mad_f16(n, y, x[r], vs[r]);
    }
}

static void mad_f16_rows_heads(int n, ggml_fp16_t * const * y, int nh, const ggml_fp16_t * const * x, const float * ms,
                               const float * vs, int nrows, int ld) {
    for (int h = 0; h < nh; h++) {
        mad_f16_rows(n, y[h], x, ms + h * ld, vs + h * ld, nrows);
    }
}

static void dot_f16_heads(int n, const ggml_fp16_t * const * x, int nrows, const ggml_fp16_t * const * y, int nh,
                          float * out, int ld) {
    for (int h = 0; h < nh; h++) {
        for (int r = 0; r < nrows; r++) {
            out[h * ld + r] = dot_f16(n, x[r], y[h]);
        }
    }
}

static void softmax_steps_heads(int nh, int nrows, int ld, const float * ex, const bool * nm, float * ms, float * vs,
                                float * S) {
    for (int h = 0; h < nh; h++) {
        for (int r = 0; r < nrows; r++) {
            const int e = h * ld + r;
            ms[e] = nm[e] ? ex[e] : 1.0f;
            vs[e] = nm[e] ? 1.0f : ex[e];
            S[h] = fmaf(S[h], ms[e], vs[e]);
        }
    }
}

static void mad_f32(int n, float * y, const float * x, float v) {
    for (int i = 0; i < n; i++) {
        y[i] = fmaf(x[i], v, y[i]);
    }
}

static void scale_f32(int n, float * y, float v) {
    for (int i = 0; i < n; i++) {
        y[i] *= v;
    }
}

static double softmax(int n, float * x, float max) {
    double sum = 0.0;
    for (int i = 0; i < n; i += 16) {
        for (int l = 0; l < 16; l++) {
            x[i + l] = ggml_fa_expf_lane(x[i + l] - max);
        }
        sum += (double) ggml_fa_reduce16(x + i);
    }
    return sum;
}

static void gemm(float * C, size_t ldc, const float * A, size_t lda, const float * B, size_t ldb, int M, int K, int N) {
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            float acc = C[i * ldc + j];
            for (int k = 0; k < K; k++) {
                acc = fmaf(A[i * lda + k], B[k * ldb + j], acc);
            }
            C[i * ldc + j] = acc;
        }
    }
}

static void f16_to_f32(int n, float * y, const ggml_fp16_t * x) {
    for (int i = 0; i < n; i++) {
        y[i] = GGML_FP16_TO_FP32(x[i]);
    }
}

static float add_max(int n, float * x, const float * m) {
    float mx = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (m) {
            x[i] = x[i] + m[i];
        }
        mx = x[i] > mx ? x[i] : mx;
    }
    return mx;
}

static void pack_kt(float * kt, size_t ldt, const void * k, size_t nb1, int nkv, int dk, bool f16) {
    for (int c = 0; c < nkv; c++) {
        const char * row = (const char *) k + (size_t) c * nb1;
        for (int d = 0; d < dk; d++) {
            kt[(size_t) d * ldt + c] = f16 ? GGML_FP16_TO_FP32(((const ggml_fp16_t *) row)[d]) : ((const float *) row)[d];
        }
    }
}

void ggml_cpu_fa_kernels_scalar(struct ggml_cpu_fa_kernels * k) {
    k->dot_f16   = dot_f16;
    k->dot_f32   = dot_f32;
    k->mad_f16   = mad_f16;
    k->scale_f16 = scale_f16;
    k->mad_f32   = mad_f32;
    k->scale_f32 = scale_f32;
    k->softmax   = softmax;
    k->gemm      = gemm;
    k->f16_to_f32 = f16_to_f32;
    k->add_max    = add_max;
    k->pack_kt    = pack_kt;
    k->mad_f16_rows = mad_f16_rows;
    k->mad_f16_rows_heads = mad_f16_rows_heads;
    k->dot_f16_heads = dot_f16_heads;
    k->softmax_steps_heads = softmax_steps_heads;
}
