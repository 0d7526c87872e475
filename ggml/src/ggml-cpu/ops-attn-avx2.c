// Flash-attention kernels for AVX2 + FMA + F16C. The reference order is AVX-512's (ops-attn.h): a 16-lane
// register is a pair of 8-lane ones here, the lane reduction and the exp are emulated exactly.

#include "ops-attn.h"

#include <immintrin.h>

static inline __m256 ld8_f16(const ggml_fp16_t * p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) p));
}

static inline void st8_f16(ggml_fp16_t * p, __m256 v) {
    _mm_storeu_si128((__m128i *) p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

#define FA_V                __m256
#define FA_W                8
#define FA_LOAD(p)          _mm256_loadu_ps(p)
#define FA_STORE(p, v)      _mm256_storeu_ps((p), (v))
#define FA_LOAD_F16(p)      ld8_f16(p)
#define FA_STORE_F16(p, v)  st8_f16((p), (v))
#define FA_SET1(x)          _mm256_set1_ps(x)
#define FA_FMA(a, b, c)     _mm256_fmadd_ps((a), (b), (c))
#define FA_MUL(a, b)        _mm256_mul_ps((a), (b))
#define FA_ROUND_F16(v)     _mm256_cvtph_ps(_mm256_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT))
// heads per pass of mad_f16_rows_heads: 2 x 4 registers of accumulators + 4 of V = 14 of the 16 ymm
#define FA_HG               2
#include "ops-attn-simd.h"

// a 16-lane register (lanes 0-7 in lo, 8-15 in hi) reduced as _mm512_reduce_add_ps does
static inline float reduce16(__m256 lo, __m256 hi) {
    const __m256 h8 = _mm256_add_ps(lo, hi);
    const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
    const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
    return _mm_cvtss_f32(_mm_add_ss(h2, _mm_movehdup_ps(h2)));
}

static float dot_f16(int n, const ggml_fp16_t * x, const ggml_fp16_t * y) {
    __m256 a[8];
    for (int j = 0; j < 8; j++) {
        a[j] = _mm256_setzero_ps();
    }
    const int np = n & ~63;
    for (int i = 0; i < np; i += 64) {
        for (int j = 0; j < 8; j++) {
            a[j] = _mm256_fmadd_ps(ld8_f16(x + i + 8 * j), ld8_f16(y + i + 8 * j), a[j]);
        }
    }
    // 16-lane accumulator j is (a[2j], a[2j+1])
    for (int h = 0; h < 2; h++) {
        a[0 + h] = _mm256_add_ps(a[0 + h], a[4 + h]);
        a[2 + h] = _mm256_add_ps(a[2 + h], a[6 + h]);
        a[0 + h] = _mm256_add_ps(a[0 + h], a[2 + h]);
    }
    double sum = (double) reduce16(a[0], a[1]);
    for (int i = np; i < n; i++) {
        const float p = GGML_FP16_TO_FP32(x[i]) * GGML_FP16_TO_FP32(y[i]);
        sum += (double) p;
    }
    return (float) sum;
}

static float dot_f32(int n, const float * x, const float * y) {
    __m256 a[8];
    for (int j = 0; j < 8; j++) {
        a[j] = _mm256_setzero_ps();
    }
    const int np = n & ~63;
    for (int i = 0; i < np; i += 64) {
        for (int j = 0; j < 8; j++) {
            a[j] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8 * j), _mm256_loadu_ps(y + i + 8 * j), a[j]);
        }
    }
    for (int h = 0; h < 2; h++) {
        a[0 + h] = _mm256_add_ps(a[0 + h], a[4 + h]);
        a[2 + h] = _mm256_add_ps(a[2 + h], a[6 + h]);
        a[0 + h] = _mm256_add_ps(a[0 + h], a[2 + h]);
    }
    float sum = reduce16(a[0], a[1]);
    for (int i = np; i < n; i++) {
        sum = fmaf(x[i], y[i], sum);
    }
    return sum;
}

// ggml_fa_expf_lane on 8 lanes. j * 2^n is one exact-power multiply (one rounding, as vscalefps) while
// |n| <= 126; lanes beyond that (results below 2^-126 or above 2^126) take the scalar lane.
static inline __m256 v_expf(__m256 x) {
    const __m256 r = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), r);
    const __m256 n = _mm256_sub_ps(z, r);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                        _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
        u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
    const __m256 big = _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), n), _mm256_set1_ps(126.0f), _CMP_GT_OQ);
    if (_mm256_movemask_ps(big) == 0) {
        const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
        return _mm256_mul_ps(j, _mm256_castsi256_ps(e));
    }
    float xs[8];
    _mm256_storeu_ps(xs, x);
    for (int l = 0; l < 8; l++) {
        xs[l] = ggml_fa_expf_lane(xs[l]);
    }
    return _mm256_loadu_ps(xs);
}

static double softmax(int n, float * x, float max) {
    const __m256 mv = _mm256_set1_ps(max);
    double sum = 0.0;
    for (int i = 0; i < n; i += 16) {
        const __m256 lo = v_expf(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
        const __m256 hi = v_expf(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), mv));
        _mm256_storeu_ps(x + i, lo);
        _mm256_storeu_ps(x + i + 8, hi);
        sum += (double) reduce16(lo, hi);
    }
    return sum;
}

FA_GEMM_UKERNEL(6, 2)
FA_GEMM_UKERNEL(1, 2)

static void gemm(float * C, size_t ldc, const float * A, size_t lda, const float * B, size_t ldb, int M, int K, int N) {
    int i = 0;
    for (; i + 6 <= M; i += 6) {
        for (int j = 0; j < N; j += 16) {
            gemm_uk_6x2(C + i * ldc + j, ldc, A + i * lda, lda, B + j, ldb, K);
        }
    }
    for (; i < M; i++) {
        for (int j = 0; j < N; j += 16) {
            gemm_uk_1x2(C + i * ldc + j, ldc, A + i * lda, lda, B + j, ldb, K);
        }
    }
}

static float add_max(int n, float * x, const float * m) {
    __m256 mx = _mm256_set1_ps(-INFINITY);
    for (int i = 0; i < n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (m) {
            v = _mm256_add_ps(v, _mm256_loadu_ps(m + i));
            _mm256_storeu_ps(x + i, v);
        }
        mx = _mm256_max_ps(mx, v);
    }
    float a[8];
    _mm256_storeu_ps(a, mx);
    float r = a[0];
    for (int l = 1; l < 8; l++) {
        r = a[l] > r ? a[l] : r;
    }
    return r;
}

// r[i] becomes column i of the 8x8 block whose rows were r[0..7]
static inline void transpose8(__m256 r[8]) {
    __m256 t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i]     = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]); // columns 0,1 | 4,5 of rows 2i, 2i+1
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]); // columns 2,3 | 6,7
    }
    for (int h = 0; h < 2; h++) { // rows 0-3, then 4-7
        const __m256 a = t[4 * h], b = t[4 * h + 1], c = t[4 * h + 2], d = t[4 * h + 3];
        u[4 * h + 0] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(1, 0, 1, 0)); // column 0 | 4
        u[4 * h + 1] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(3, 2, 3, 2)); // column 1 | 5
        u[4 * h + 2] = _mm256_shuffle_ps(b, d, _MM_SHUFFLE(1, 0, 1, 0)); // column 2 | 6
        u[4 * h + 3] = _mm256_shuffle_ps(b, d, _MM_SHUFFLE(3, 2, 3, 2)); // column 3 | 7
    }
    for (int i = 0; i < 4; i++) {
        r[i]     = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
        r[i + 4] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
    }
}

// 8x8 blocks transposed in registers; the edges of a partial tile or an odd head size one value at a time.
// The AVX-512 table uses it too: the loads are narrow either way, and the stores are 8 rows of one line each.
static void pack_kt(float * kt, size_t ldt, const void * k, size_t nb1, int nkv, int dk, bool f16) {
    const int c8 = nkv & ~7, d8 = dk & ~7;
    for (int c0 = 0; c0 < c8; c0 += 8) {
        const char * rows = (const char *) k + (size_t) c0 * nb1;
        for (int d0 = 0; d0 < d8; d0 += 8) {
            __m256 r[8];
            for (int i = 0; i < 8; i++) {
                const char * row = rows + (size_t) i * nb1;
                r[i] = f16 ? ld8_f16((const ggml_fp16_t *) row + d0) : _mm256_loadu_ps((const float *) row + d0);
            }
            transpose8(r);
            for (int i = 0; i < 8; i++) {
                _mm256_storeu_ps(kt + (size_t) (d0 + i) * ldt + c0, r[i]);
            }
        }
    }
    for (int c = 0; c < nkv; c++) {
        const char * row = (const char *) k + (size_t) c * nb1;
        for (int d = c < c8 ? d8 : 0; d < dk; d++) {
            kt[(size_t) d * ldt + c] = f16 ? GGML_FP16_TO_FP32(((const ggml_fp16_t *) row)[d]) : ((const float *) row)[d];
        }
    }
}

void ggml_cpu_fa_kernels_avx2(struct ggml_cpu_fa_kernels * k) {
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
    k->pack_kt    = pack_kt;
}
