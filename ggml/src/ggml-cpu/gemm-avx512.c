// AVX-512 VNNI GEMM (see gemm.h). A packed 32-element block of a 16-row tile starts with the int8 weights,
// 4-element group g of row r at byte 64 * g + 4 * r (one load gives one group of all rows), followed by
// per-row vectors of 16 lanes, by kind of format:
//   plain (Q4_0, Q5_0, Q8_0, IQ4_NL): corr, d                       w = d * q
//   min   (Q4_K):                     corr, d, m                    w = d * q - m
//   half  (Q6_K, 16-element scales):  corr0, corr1, d0, d1          groups 0-3 use d0, groups 4-7 d1
// vpdpbusd multiplies unsigned by signed bytes, so activations are stored as q + 128 (exact in a byte) and
// corr = -128 * (sum of the weights it covers) starts each block's accumulator: the int32 dot is exact.
#include "gemm.h"
#include "ggml-cpu-kernels.h"
#include "quants-impl.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#define TILE_R GGML_CPU_GEMM_ROWS
#define BLK    32
#define COLS   8 // activation columns per register tile (8 accumulators + 8 weight registers)

enum pack_kind { KIND_PLAIN = 0, KIND_MIN = 1, KIND_HALF = 2 };

static enum pack_kind kind_of(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_Q4_K: return KIND_MIN;
        case GGML_TYPE_Q6_K: return KIND_HALF;
        default:             return KIND_PLAIN;
    }
}

static size_t block_bytes(enum pack_kind kind) {
    return kind == KIND_PLAIN ? 640 : kind == KIND_MIN ? 704 : 768;
}

size_t ggml_cpu_gemm_pack_size(enum ggml_type type, int64_t k) {
    if (type == GGML_TYPE_F16) {
        return (size_t) k * TILE_R * sizeof(ggml_fp16_t);
    }
    return (size_t) (k / BLK) * block_bytes(kind_of(type));
}

size_t ggml_cpu_gemm_act_row_size(enum ggml_type type, int64_t k) {
    if (type == GGML_TYPE_F16) {
        return (size_t) k * sizeof(float); // the row's share of a panel (see gemm.h)
    }
    // an odd number of cache lines: the tiles read 8 columns in step, and rows a power of two apart would
    // all map to the same L1 sets
    size_t n = GGML_PAD((size_t) k + 2 * sizeof(float) * (size_t) (k / BLK), 64);
    return (n / 64) % 2 == 0 ? n + 64 : n;
}

// one row's block b as 32 signed values and its scale
static float decode_block(enum ggml_type type, const void * row, int64_t b, int8_t * v) {
    switch (type) {
        case GGML_TYPE_Q8_0: {
            const block_q8_0 * x = (const block_q8_0 *) row + b;
            memcpy(v, x->qs, BLK);
            return GGML_FP16_TO_FP32(x->d);
        }
        case GGML_TYPE_Q4_0: {
            const block_q4_0 * x = (const block_q4_0 *) row + b;
            for (int j = 0; j < BLK / 2; j++) {
                v[j]          = (int8_t) ((x->qs[j] & 0x0f) - 8);
                v[j + BLK / 2] = (int8_t) ((x->qs[j] >> 4) - 8);
            }
            return GGML_FP16_TO_FP32(x->d);
        }
        case GGML_TYPE_Q5_0: {
            const block_q5_0 * x = (const block_q5_0 *) row + b;
            uint32_t qh;
            memcpy(&qh, x->qh, 4);
            for (int j = 0; j < BLK / 2; j++) {
                const int lo = (x->qs[j] & 0x0f) | (int) (((qh >> j) & 1u) << 4);
                const int hi = (x->qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1u) << 4);
                v[j]           = (int8_t) (lo - 16);
                v[j + BLK / 2] = (int8_t) (hi - 16);
            }
            return GGML_FP16_TO_FP32(x->d);
        }
        case GGML_TYPE_IQ4_NL: {
            const block_iq4_nl * x = (const block_iq4_nl *) row + b;
            for (int j = 0; j < BLK / 2; j++) {
                v[j]           = kvalues_iq4nl[x->qs[j] & 0x0f];
                v[j + BLK / 2] = kvalues_iq4nl[x->qs[j] >> 4];
            }
            return GGML_FP16_TO_FP32(x->d);
        }
        default:
            memset(v, 0, BLK);
            return 0.0f;
    }
}

// the 16 rows' fp16 values at base (+ row * bx) -> floats (absent rows read as zero)
static inline __m512 gather_f16(const uint8_t * base, __m512i vidx, __mmask16 m) {
    const __m512i h = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, vidx, (const void *) base, 1);
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_and_si512(h, _mm512_set1_epi32(0xffff))));
}

static inline __m512i gather4(const uint8_t * base, __m512i vidx, __mmask16 m) {
    return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, vidx, (const void *) base, 1);
}

// -128 * (sum of the signed bytes of groups [g0, g1) per row)
static inline __m512i corr_of(const __m512i * w, int g0, int g1) {
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i sum = _mm512_setzero_si512();
    for (int g = g0; g < g1; g++) {
        sum = _mm512_dpbusd_epi32(sum, ones, w[g]);
    }
    return _mm512_mullo_epi32(sum, _mm512_set1_epi32(-128));
}

static inline void store_w(uint8_t * pb, const __m512i * w) {
    for (int g = 0; g < BLK / 4; g++) {
        _mm512_store_si512((void *) (pb + 64 * g), w[g]);
    }
}

// byte mask of the present rows (4 bytes per row)
static inline __mmask64 row_bytes(__mmask16 m) {
    return (__mmask64) (_pdep_u64(m, 0x1111111111111111ull) * 0xf);
}

// per-row scalars that the vector code cannot gather cheaply (K-quant sub-block scales): [8 or 16][16] floats
static void k_scales(enum ggml_type type, const uint8_t * x, size_t bx, int nrows, int64_t ib, float * a, float * bb) {
    for (int r = 0; r < TILE_R; r++) {
        if (r >= nrows) {
            for (int j = 0; j < 16; j++) {
                a[16 * j + r] = 0.0f;
                bb[16 * j + r] = 0.0f;
            }
            continue;
        }
        const uint8_t * row = x + (size_t) r * bx;
        if (type == GGML_TYPE_Q4_K) {
            const block_q4_K * blk = (const block_q4_K *) row + ib;
            const float d = GGML_FP16_TO_FP32(blk->d), dmin = GGML_FP16_TO_FP32(blk->dmin);
            for (int j = 0; j < 8; j++) {
                uint8_t sc, mn;
                ggml_cpu_scale_min_k4(j, blk->scales, &sc, &mn);
                a[16 * j + r]  = d * (float) sc;
                bb[16 * j + r] = dmin * (float) mn;
            }
        } else { // Q6_K
            const block_q6_K * blk = (const block_q6_K *) row + ib;
            const float d = GGML_FP16_TO_FP32(blk->d);
            for (int j = 0; j < 16; j++) {
                a[16 * j + r] = d * (float) blk->scales[j];
            }
        }
    }
}

// the supported formats with a vector transpose: one gather per 4-byte group of the 16 rows
static bool pack_fast(enum ggml_type type, int64_t nb, const uint8_t * x, size_t bx, int nrows, uint8_t * p) {
    if (bx > (size_t) INT32_MAX / TILE_R) {
        return false;
    }
    const __mmask16 m = (__mmask16) (nrows >= TILE_R ? 0xffffu : ((1u << nrows) - 1u));
    const __m512i vidx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32((int) bx));
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512i w[BLK / 4];
    switch (type) {
        case GGML_TYPE_Q8_0:
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t * blk = x + (size_t) b * sizeof(block_q8_0);
                uint8_t * pb = p + (size_t) b * 640;
                for (int g = 0; g < BLK / 4; g++) {
                    w[g] = gather4(blk + 2 + 4 * g, vidx, m);
                }
                store_w(pb, w);
                _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 8));
                _mm512_store_ps((void *) (pb + 576), gather_f16(blk, vidx, m));
            }
            return true;
        case GGML_TYPE_Q4_0: {
            const __m512i eight = _mm512_set1_epi8(8);
            const __mmask64 mb = row_bytes(m); // absent rows must stay 0, not 0 - 8
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t * blk = x + (size_t) b * sizeof(block_q4_0);
                uint8_t * pb = p + (size_t) b * 640;
                for (int g = 0; g < 4; g++) {
                    const __m512i q = gather4(blk + 2 + 4 * g, vidx, m);
                    w[g]     = _mm512_maskz_sub_epi8(mb, _mm512_and_si512(q, m4), eight);
                    w[g + 4] = _mm512_maskz_sub_epi8(mb, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4), eight);
                }
                store_w(pb, w);
                _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 8));
                _mm512_store_ps((void *) (pb + 576), gather_f16(blk, vidx, m));
            }
            return true;
        }
        case GGML_TYPE_Q4_K: {
            float sc[16 * 16], mn[16 * 16];
            for (int64_t ib = 0; ib < nb / 8; ib++) {
                const uint8_t * qs = x + (size_t) ib * sizeof(block_q4_K) + offsetof(block_q4_K, qs);
                k_scales(type, x, bx, nrows, ib, sc, mn);
                for (int j = 0; j < 8; j++) {
                    uint8_t * pb = p + (size_t) (8 * ib + j) * 704;
                    // sub-block j: low nibbles (j even) or high nibbles (j odd) of qs[32 * (j / 2) ...]
                    for (int g = 0; g < 8; g++) {
                        const __m512i q = gather4(qs + 32 * (j / 2) + 4 * g, vidx, m);
                        w[g] = _mm512_and_si512(j & 1 ? _mm512_srli_epi16(q, 4) : q, m4);
                    }
                    store_w(pb, w);
                    _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 8));
                    _mm512_store_ps((void *) (pb + 576), _mm512_loadu_ps(sc + 16 * j));
                    _mm512_store_ps((void *) (pb + 640), _mm512_loadu_ps(mn + 16 * j));
                }
            }
            return true;
        }
        case GGML_TYPE_Q6_K: {
            float sc[16 * 16], unused[16 * 16];
            const __m512i m2 = _mm512_set1_epi8(0x03);
            const __m512i k32 = _mm512_set1_epi8(32);
            const __mmask64 mb = row_bytes(m);
            for (int64_t ib = 0; ib < nb / 8; ib++) {
                const uint8_t * blk = x + (size_t) ib * sizeof(block_q6_K);
                k_scales(type, x, bx, nrows, ib, sc, unused);
                for (int j = 0; j < 8; j++) {
                    // 32-element block j: half h = j / 4 of the super-block, quarter q = j % 4 within it
                    const int h = j / 4, q = j % 4;
                    const uint8_t * ql = blk + offsetof(block_q6_K, ql) + 64 * h + 32 * (q & 1);
                    const uint8_t * qh = blk + offsetof(block_q6_K, qh) + 32 * h;
                    uint8_t * pb = p + (size_t) (8 * ib + j) * 768;
                    for (int g = 0; g < 8; g++) {
                        const __m512i lo = gather4(ql + 4 * g, vidx, m);
                        const __m512i hi = gather4(qh + 4 * g, vidx, m);
                        const __m512i l4 = _mm512_and_si512(q >= 2 ? _mm512_srli_epi16(lo, 4) : lo, m4);
                        const __m512i h2 = _mm512_and_si512(_mm512_srlv_epi16(hi, _mm512_set1_epi16((short) (2 * q))), m2);
                        w[g] = _mm512_maskz_sub_epi8(mb, _mm512_or_si512(l4, _mm512_slli_epi16(h2, 4)), k32);
                    }
                    store_w(pb, w);
                    _mm512_store_si512((void *) (pb + 512), corr_of(w, 0, 4));
                    _mm512_store_si512((void *) (pb + 576), corr_of(w, 4, 8));
                    _mm512_store_ps((void *) (pb + 640), _mm512_loadu_ps(sc + 16 * (2 * j)));
                    _mm512_store_ps((void *) (pb + 704), _mm512_loadu_ps(sc + 16 * (2 * j + 1)));
                }
            }
            return true;
        }
        default:
            return false;
    }
}

// F16 tile: element i of the 16 rows as 16 halves at 32 * i (one load + one conversion feeds 16 rows)
static void pack_f16(int64_t k, const uint8_t * x, size_t bx, int nrows, uint8_t * p) {
    if (bx <= (size_t) INT32_MAX / TILE_R) {
        const __mmask16 m = (__mmask16) (nrows >= TILE_R ? 0xffffu : ((1u << nrows) - 1u));
        const __m512i vidx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                                _mm512_set1_epi32((int) bx));
        int64_t i = 0;
        for (; i + 2 <= k; i += 2) {
            const __m512i v = gather4(x + 2 * i, vidx, m);
            _mm256_store_si256((__m256i *) (p + 32 * i), _mm512_cvtepi32_epi16(v));
            _mm256_store_si256((__m256i *) (p + 32 * (i + 1)), _mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16)));
        }
        if (i == k) {
            return;
        }
    }
    for (int64_t i = 0; i < k; i++) {
        for (int r = 0; r < TILE_R; r++) {
            ggml_fp16_t h = 0;
            if (r < nrows) {
                memcpy(&h, x + (size_t) r * bx + 2 * i, 2);
            }
            memcpy(p + 32 * i + 2 * r, &h, 2);
        }
    }
}

void ggml_cpu_gemm_pack(enum ggml_type type, int64_t k, const void * x, size_t bx, int nrows, void * pack) {
    const int64_t nb = k / BLK;
    uint8_t * p = pack;
    if (type == GGML_TYPE_F16) {
        pack_f16(k, x, bx, nrows, p);
        return;
    }
    if (pack_fast(type, nb, x, bx, nrows, p)) {
        return;
    }
    // Q5_0 and IQ4_NL (the other types are always packed by pack_fast, given the row stride limit of gemm.h)
    for (int r = 0; r < TILE_R; r++) {
        const char * row = (const char *) x + (size_t) r * bx;
        for (int64_t b = 0; b < nb; b++) {
            uint8_t * pb = p + (size_t) b * 640;
            int8_t v[BLK];
            float d = 0.0f;
            if (r < nrows) {
                d = decode_block(type, row, b, v);
            } else {
                memset(v, 0, sizeof(v));
            }
            int32_t sum = 0;
            for (int g = 0; g < BLK / 4; g++) {
                memcpy(pb + 64 * g + 4 * r, v + 4 * g, 4);
                sum += v[4 * g] + v[4 * g + 1] + v[4 * g + 2] + v[4 * g + 3];
            }
            const int32_t corr = -128 * sum;
            memcpy(pb + 512 + 4 * r, &corr, 4);
            memcpy(pb + 576 + 4 * r, &d, 4);
        }
    }
}

size_t ggml_cpu_gemm_act_size(enum ggml_type type, int64_t k, int64_t ncols) {
    if (type == GGML_TYPE_F16) {
        ncols = (ncols + GGML_CPU_GEMM_PANEL - 1) / GGML_CPU_GEMM_PANEL * GGML_CPU_GEMM_PANEL;
    }
    return ggml_cpu_gemm_act_row_size(type, k) * (size_t) ncols;
}

void ggml_cpu_gemm_act_from_float(enum ggml_type type, const float * x, void * act, int64_t k, int64_t col) {
    if (type == GGML_TYPE_F16) {
        // rounded through F16 like the vec_dot path's activations: each product with an F16 weight is then
        // exact in F32 and only the summation order differs from vec_dot
        float * y = (float *) act + (col / GGML_CPU_GEMM_PANEL) * k * GGML_CPU_GEMM_PANEL + col % GGML_CPU_GEMM_PANEL;
        const __m512i stride = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                                  _mm512_set1_epi32(GGML_CPU_GEMM_PANEL));
        int64_t i = 0;
        for (; i + 16 <= k; i += 16) {
            const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            _mm512_i32scatter_ps(y + i * GGML_CPU_GEMM_PANEL, stride, _mm512_cvtph_ps(h), 4);
        }
        for (; i < k; i++) {
            y[i * GGML_CPU_GEMM_PANEL] = GGML_FP16_TO_FP32(GGML_FP32_TO_FP16(x[i]));
        }
        return;
    }
    act = (uint8_t *) act + (size_t) col * ggml_cpu_gemm_act_row_size(type, k);
    // the vec_dot path's quantizer (Q8_0, or Q8_K for the K-quants), so that every 32-element integer dot
    // equals vec_dot's; Q8_0 blocks are independent, Q8_K takes whole super-blocks of 256
    const bool kq = type == GGML_TYPE_Q4_K || type == GGML_TYPE_Q6_K;
    const ggml_cpu_from_float_t quant = ggml_cpu_get_kernels(kq ? GGML_TYPE_Q8_K : GGML_TYPE_Q8_0)->from_float;
    const int64_t nb = k / BLK;
    const int per = kq ? QK_K / BLK : 1; // 32-element blocks per quantizer call
    uint8_t * q = act;
    float * d = (float *) (q + k);
    float * s = d + nb;
    const __m256i bias = _mm256_set1_epi8((char) 0x80);
    for (int64_t b0 = 0; b0 < nb; b0 += per) {
        int8_t qs[QK_K];
        float scale[QK_K / BLK];
        if (kq) {
            block_q8_K blk;
            quant(x + b0 * BLK, &blk, QK_K);
            memcpy(qs, blk.qs, QK_K);
            for (int j = 0; j < per; j++) {
                scale[j] = blk.d;
            }
        } else {
            block_q8_0 blk;
            quant(x + b0 * BLK, &blk, BLK);
            memcpy(qs, blk.qs, BLK);
            scale[0] = GGML_FP16_TO_FP32(blk.d);
        }
        for (int j = 0; j < per; j++) {
            const int64_t b = b0 + j;
            const __m256i u = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (qs + j * BLK)), bias);
            _mm256_storeu_si256((__m256i *) (q + b * BLK), u);
            // sum of the unsigned bytes (four partial sums of 8), less the 32 offsets of 128
            const __m256i s4 = _mm256_sad_epu8(u, _mm256_setzero_si256());
            const int sum = (int) (_mm256_extract_epi64(s4, 0) + _mm256_extract_epi64(s4, 1) +
                                   _mm256_extract_epi64(s4, 2) + _mm256_extract_epi64(s4, 3)) - 128 * BLK;
            d[b] = scale[j];
            s[b] = scale[j] * (float) sum;
        }
    }
}

static inline __m512i bcast4(const uint8_t * p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

// one tile against NC columns; NC and KIND are constants after inlining so the accumulators stay in registers
static inline __attribute__((always_inline)) void tile_cols(int64_t k, const uint8_t * pack, const uint8_t * act,
                                                            size_t bact, const int NC, const enum pack_kind KIND,
                                                            float * dst, size_t bdst, __mmask16 mask) {
    const int64_t nb = k / BLK;
    const size_t pbytes = block_bytes(KIND);
    __m512 facc[COLS];
    for (int c = 0; c < NC; c++) {
        facc[c] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t * p = pack + (size_t) b * pbytes;
        const __m512i w0 = _mm512_load_si512((const void *) (p + 0 * 64));
        const __m512i w1 = _mm512_load_si512((const void *) (p + 1 * 64));
        const __m512i w2 = _mm512_load_si512((const void *) (p + 2 * 64));
        const __m512i w3 = _mm512_load_si512((const void *) (p + 3 * 64));
        const __m512i w4 = _mm512_load_si512((const void *) (p + 4 * 64));
        const __m512i w5 = _mm512_load_si512((const void *) (p + 5 * 64));
        const __m512i w6 = _mm512_load_si512((const void *) (p + 6 * 64));
        const __m512i w7 = _mm512_load_si512((const void *) (p + 7 * 64));
        const __m512i c0 = _mm512_load_si512((const void *) (p + 512));
        const __m512i c1 = KIND == KIND_HALF ? _mm512_load_si512((const void *) (p + 576)) : _mm512_setzero_si512();
        for (int c = 0; c < NC; c++) {
            const uint8_t * a = act + (size_t) c * bact + (size_t) b * BLK;
            const float * ad = (const float *) (act + (size_t) c * bact + (size_t) k);
            // two chains of four keep the dependent vpdpbusd latency off the critical path; in the half
            // kind they are exactly the two 16-element halves
            __m512i s0 = _mm512_dpbusd_epi32(c0, bcast4(a + 0), w0);
            __m512i s1 = _mm512_dpbusd_epi32(c1, bcast4(a + 16), w4);
            s0 = _mm512_dpbusd_epi32(s0, bcast4(a + 4), w1);
            s1 = _mm512_dpbusd_epi32(s1, bcast4(a + 20), w5);
            s0 = _mm512_dpbusd_epi32(s0, bcast4(a + 8), w2);
            s1 = _mm512_dpbusd_epi32(s1, bcast4(a + 24), w6);
            s0 = _mm512_dpbusd_epi32(s0, bcast4(a + 12), w3);
            s1 = _mm512_dpbusd_epi32(s1, bcast4(a + 28), w7);
            const __m512 da = _mm512_set1_ps(ad[b]);
            if (KIND == KIND_HALF) {
                const __m512 t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s0), _mm512_load_ps((const float *) (p + 640)),
                                                 _mm512_mul_ps(_mm512_cvtepi32_ps(s1), _mm512_load_ps((const float *) (p + 704))));
                facc[c] = _mm512_fmadd_ps(t, da, facc[c]);
            } else {
                const __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1));
                facc[c] = _mm512_fmadd_ps(f, _mm512_mul_ps(_mm512_load_ps((const float *) (p + 576)), da), facc[c]);
                if (KIND == KIND_MIN) {
                    // the mins meet the plain sum of the activations: - m * (da * sum q)
                    facc[c] = _mm512_fnmadd_ps(_mm512_load_ps((const float *) (p + 640)), _mm512_set1_ps(ad[nb + b]), facc[c]);
                }
            }
        }
    }
    for (int c = 0; c < NC; c++) {
        _mm512_mask_storeu_ps((char *) dst + (size_t) c * bdst, mask, facc[c]);
    }
}

static inline __attribute__((always_inline)) void run_kind(int64_t k, const uint8_t * pack, const uint8_t * a,
                                                           size_t bact, int ncols, const enum pack_kind KIND,
                                                           float * dst, size_t bdst, __mmask16 mask) {
    int c = 0;
    for (; c + COLS <= ncols; c += COLS) {
        tile_cols(k, pack, a + (size_t) c * bact, bact, COLS, KIND, (float *) ((char *) dst + (size_t) c * bdst), bdst, mask);
    }
    const uint8_t * ar = a + (size_t) c * bact;
    float * dr = (float *) ((char *) dst + (size_t) c * bdst);
    switch (ncols - c) {
        case 0: break;
        case 1: tile_cols(k, pack, ar, bact, 1, KIND, dr, bdst, mask); break;
        case 2: tile_cols(k, pack, ar, bact, 2, KIND, dr, bdst, mask); break;
        case 3: tile_cols(k, pack, ar, bact, 3, KIND, dr, bdst, mask); break;
        case 4: tile_cols(k, pack, ar, bact, 4, KIND, dr, bdst, mask); break;
        case 5: tile_cols(k, pack, ar, bact, 5, KIND, dr, bdst, mask); break;
        case 6: tile_cols(k, pack, ar, bact, 6, KIND, dr, bdst, mask); break;
        default: tile_cols(k, pack, ar, bact, 7, KIND, dr, bdst, mask); break;
    }
}

#define COLS_F16 16 // 16 accumulators; each FMA takes its activation as an embedded broadcast

// NC columns of one panel (a single sequential stream of activations)
static inline __attribute__((always_inline)) void tile_f16(int64_t k, const uint8_t * pack, const float * panel,
                                                           const int NC, float * dst, size_t bdst, __mmask16 mask) {
    __m512 facc[COLS_F16];
    for (int c = 0; c < NC; c++) {
        facc[c] = _mm512_setzero_ps();
    }
    for (int64_t i = 0; i < k; i++) {
        const __m512 w = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *) (pack + 32 * i)));
        const float * a = panel + i * GGML_CPU_GEMM_PANEL;
        for (int c = 0; c < NC; c++) {
            facc[c] = _mm512_fmadd_ps(w, _mm512_set1_ps(a[c]), facc[c]);
        }
    }
    for (int c = 0; c < NC; c++) {
        _mm512_mask_storeu_ps((char *) dst + (size_t) c * bdst, mask, facc[c]);
    }
}

static void run_f16(int64_t k, const uint8_t * pack, const uint8_t * act, int ncols, float * dst, size_t bdst,
                    __mmask16 mask) {
    for (int c = 0; c < ncols; c += COLS_F16) {
        const float * panel = (const float *) act + (size_t) (c / COLS_F16) * (size_t) k * COLS_F16;
        float * d = (float *) ((char *) dst + (size_t) c * bdst);
        switch (ncols - c >= COLS_F16 ? COLS_F16 : ncols - c) {
            case 16: tile_f16(k, pack, panel, 16, d, bdst, mask); break;
            case 15: tile_f16(k, pack, panel, 15, d, bdst, mask); break;
            case 14: tile_f16(k, pack, panel, 14, d, bdst, mask); break;
            case 13: tile_f16(k, pack, panel, 13, d, bdst, mask); break;
            case 12: tile_f16(k, pack, panel, 12, d, bdst, mask); break;
            case 11: tile_f16(k, pack, panel, 11, d, bdst, mask); break;
            case 10: tile_f16(k, pack, panel, 10, d, bdst, mask); break;
            case 9:  tile_f16(k, pack, panel, 9, d, bdst, mask); break;
            case 8:  tile_f16(k, pack, panel, 8, d, bdst, mask); break;
            case 7:  tile_f16(k, pack, panel, 7, d, bdst, mask); break;
            case 6:  tile_f16(k, pack, panel, 6, d, bdst, mask); break;
            case 5:  tile_f16(k, pack, panel, 5, d, bdst, mask); break;
            case 4:  tile_f16(k, pack, panel, 4, d, bdst, mask); break;
            case 3:  tile_f16(k, pack, panel, 3, d, bdst, mask); break;
            case 2:  tile_f16(k, pack, panel, 2, d, bdst, mask); break;
            default: tile_f16(k, pack, panel, 1, d, bdst, mask); break;
        }
    }
}

void ggml_cpu_gemm_run(enum ggml_type type, int64_t k, const void * pack, int nrows, const void * act, size_t bact,
                       int ncols, float * dst, size_t bdst) {
    const __mmask16 mask = (__mmask16) (nrows >= TILE_R ? 0xffffu : ((1u << nrows) - 1u));
    if (type == GGML_TYPE_F16) {
        run_f16(k, pack, act, ncols, dst, bdst, mask);
        return;
    }
    switch (kind_of(type)) {
        case KIND_PLAIN: run_kind(k, pack, act, bact, ncols, KIND_PLAIN, dst, bdst, mask); break;
        case KIND_MIN:   run_kind(k, pack, act, bact, ncols, KIND_MIN, dst, bdst, mask); break;
        case KIND_HALF:  run_kind(k, pack, act, bact, ncols, KIND_HALF, dst, bdst, mask); break;
    }
}
