// Flash-attention kernels for AVX-512 (F, DQ, VL + F16C): llama.cpp's own instruction sequence, so the
// scalar definition in ops-attn-scalar.c is met bit for bit.

#include "ops-attn.h"

#include <immintrin.h>

static inline __m512 ld16_f16(const ggml_fp16_t * p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) p));
}

static inline void st16_f16(ggml_fp16_t * p, __m512 v) {
    _mm256_storeu_si256((__m256i *) p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

#define FA_V                __m512
#define FA_W                16
#define FA_LOAD(p)          _mm512_loadu_ps(p)
#define FA_STORE(p, v)      _mm512_storeu_ps((p), (v))
#define FA_LOAD_F16(p)      ld16_f16(p)
#define FA_STORE_F16(p, v)  st16_f16((p), (v))
#define FA_SET1(x)          _mm512_set1_ps(x)
#define FA_FMA(a, b, c)     _mm512_fmadd_ps((a), (b), (c))
#define FA_MUL(a, b)        _mm512_mul_ps((a), (b))
#define FA_ROUND_F16(v)     _mm512_cvtph_ps(_mm512_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT))
#define FA_HAVE_DOT_HEADS
// heads per pass of mad_f16_rows_heads: 4 x 4 registers of accumulators + 4 of V = 22 of the 32 zmm
#define FA_HG               4
#include "ops-attn-simd.h"

// halves, quarters, then (0+2) + (1+3): ggml_fa_reduce16's order, in registers
static inline float reduce16(__m512 v) {
    const __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
    const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
    return _mm_cvtss_f32(_mm_add_ss(h2, _mm_movehdup_ps(h2)));
}

static float dot_f16(int n, const ggml_fp16_t * x, const ggml_fp16_t * y) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    const int np = n & ~63;
    for (int i = 0; i < np; i += 64) {
        a0 = _mm512_fmadd_ps(ld16_f16(x + i +  0), ld16_f16(y + i +  0), a0);
        a1 = _mm512_fmadd_ps(ld16_f16(x + i + 16), ld16_f16(y + i + 16), a1);
        a2 = _mm512_fmadd_ps(ld16_f16(x + i + 32), ld16_f16(y + i + 32), a2);
        a3 = _mm512_fmadd_ps(ld16_f16(x + i + 48), ld16_f16(y + i + 48), a3);
    }
    a0 = _mm512_add_ps(a0, a2);
    a1 = _mm512_add_ps(a1, a3);
    a0 = _mm512_add_ps(a0, a1);
    double sum = (double) reduce16(a0);
    for (int i = np; i < n; i++) {
        const float p = GGML_FP16_TO_FP32(x[i]) * GGML_FP16_TO_FP32(y[i]);
        sum += (double) p;
    }
    return (float) sum;
}

// dot_f16 of each K row with each query head, four heads at a time: the K row is converted once for them and
// the four sums are independent chains. Every sum is dot_f16's: 4 accumulators over blocks of 64, folded
// (0+2) + (1+3), reduced as reduce16. A head size with a tail (n % 64) or over 256 takes dot_f16 itself.
#define FA_DOT_HEADS_MAX_N 256
static void dot_f16_heads(int n, const ggml_fp16_t * const * x, int nrows, const ggml_fp16_t * const * y, int nh,
                          float * out, int ld) {
    if (n % 64 != 0 || n > FA_DOT_HEADS_MAX_N || nh > 8) {
        for (int r = 0; r < nrows; r++) {
            for (int h = 0; h < nh; h++) {
                out[h * ld + r] = dot_f16(n, x[r], y[h]);
            }
        }
        return;
    }
    // the query rows widened once per call (exact: what each dot's conversion gives)
    float yf[8][FA_DOT_HEADS_MAX_N];
    for (int h = 0; h < nh; h++) {
        for (int i = 0; i < n; i += 16) {
            _mm512_storeu_ps(yf[h] + i, ld16_f16(y[h] + i));
        }
    }
    for (int r = 0; r < nrows; r++) {
        int h0 = 0;
        for (; h0 + 4 <= nh; h0 += 4) {
            __m512 acc[4][4];
            for (int h = 0; h < 4; h++) {
                for (int j = 0; j < 4; j++) {
                    acc[h][j] = _mm512_setzero_ps();
                }
            }
            for (int i = 0; i < n; i += 64) {
                __m512 kv[4];
                for (int j = 0; j < 4; j++) {
                    kv[j] = ld16_f16(x[r] + i + 16 * j);
                }
                for (int h = 0; h < 4; h++) {
                    for (int j = 0; j < 4; j++) {
                        acc[h][j] = _mm512_fmadd_ps(kv[j], _mm512_loadu_ps(yf[h0 + h] + i + 16 * j), acc[h][j]);
                    }
                }
            }
            for (int h = 0; h < 4; h++) {
                const __m512 a02 = _mm512_add_ps(acc[h][0], acc[h][2]);
                const __m512 a13 = _mm512_add_ps(acc[h][1], acc[h][3]);
                out[(h0 + h) * ld + r] = reduce16(_mm512_add_ps(a02, a13));
            }
        }
        for (; h0 < nh; h0++) {
            out[h0 * ld + r] = dot_f16(n, x[r], y[h0]);
        }
    }
}

static float dot_f32(int n, const float * x, const float * y) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    const int np = n & ~63;
    for (int i = 0; i < np; i += 64) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i +  0), _mm512_loadu_ps(y + i +  0), a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16), a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 32), _mm512_loadu_ps(y + i + 32), a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 48), _mm512_loadu_ps(y + i + 48), a3);
    }
    a0 = _mm512_add_ps(a0, a2);
    a1 = _mm512_add_ps(a1, a3);
    a0 = _mm512_add_ps(a0, a1);
    float sum = reduce16(a0);
    for (int i = np; i < n; i++) {
        sum = fmaf(x[i], y[i], sum);
    }
    return sum;
}

// the AVX-512 exp of ops-attn.h's ggml_fa_expf_lane, 16 lanes
static inline __m512 v_expf(__m512 x) {
    const __m512 r = _mm512_set1_ps(0x1.8p23f);
    const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), r);
    const __m512 n = _mm512_sub_ps(z, r);
    const __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.7f7d1cp-20f),
                                      _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e4p-1f), x));
    const __mmask16 d = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192), _CMP_GT_OQ);
    const __m512 u = _mm512_mul_ps(b, b);
    const __m512 j = _mm512_fmadd_ps(
        _mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), b, _mm512_set1_ps(0x1.573e2ep-5f)), u,
                        _mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), b, _mm512_set1_ps(0x1.fffdb6p-2f))),
        u, _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), b, _mm512_set1_ps(1.0f)));
    const __m512 res = _mm512_scalef_ps(j, n);
    if (d == 0) {
        return res;
    }
    const __m512 zero = _mm512_setzero_ps();
    const __m512 alt = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(n, zero, _CMP_LE_OQ), _mm512_set1_ps(INFINITY), zero);
    return _mm512_mask_blend_ps(d, res, alt);
}

static double softmax(int n, float * x, float max) {
    const __m512 mv = _mm512_set1_ps(max);
    double sum = 0.0;
    for (int i = 0; i < n; i += 16) {
        const __m512 e = v_expf(_mm512_sub_ps(_mm512_loadu_ps(x + i), mv));
        _mm512_storeu_ps(x + i, e);
        sum += (double) reduce16(e);
    }
    return sum;
}

FA_GEMM_UKERNEL(4, 4)
FA_GEMM_UKERNEL(4, 1)
FA_GEMM_UKERNEL(1, 4)
FA_GEMM_UKERNEL(1, 1)

static void gemm(float * C, size_t ldc, const float * A, size_t lda, const float * B, size_t ldb, int M, int K, int N) {
    int i = 0;
    for (; i + 4 <= M; i += 4) {
        int j = 0;
        for (; j + 64 <= N; j += 64) {
            gemm_uk_4x4(C + i * ldc + j, ldc, A + i * lda, lda, B + j, ldb, K);
        }
        for (; j < N; j += 16) {
            gemm_uk_4x1(C + i * ldc + j, ldc, A + i * lda, lda, B + j, ldb, K);
        }
    }
    for (; i < M; i++) {
        int j = 0;
        for (; j + 64 <= N; j += 64) {
            gemm_uk_1x4(C + i * ldc + j, ldc, A + i * lda, lda, B + j, ldb, K);
        }
        for (; j < N; j += 16) {
            gemm_uk_1x1(C + i * ldc + j, ldc, A + i * lda, lda, B + j, ldb, K);
        }
    }
}

static float add_max(int n, float * x, const float * m) {
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int i = 0; i < n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        if (m) {
            v = _mm512_add_ps(v, _mm512_loadu_ps(m + i));
            _mm512_storeu_ps(x + i, v);
        }
        mx = _mm512_max_ps(mx, v);
    }
    return _mm512_reduce_max_ps(mx);
}

void ggml_cpu_fa_kernels_avx512(struct ggml_cpu_fa_kernels * k) {
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
    k->mad_f16_rows = mad_f16_rows;
    k->mad_f16_rows_heads = mad_f16_rows_heads;
    k->dot_f16_heads = dot_f16_heads;
    k->softmax_steps_heads = softmax_steps_heads;
}
