// Portable kernels: activation quantizers and dot products for every type, in plain C. This is the
// fallback path (GGML_CPU_ISA=scalar) and the reference the SIMD paths are tested against.
//
// Activation quantization (Q8_0 / Q8_1) follows llama.cpp's x86 CPU backend, not the reference quantizer
// of ggml-quants.c: the scale is 127/amax and values are rounded half to even, which is what
// _mm256_round_ps(_MM_ROUND_NEAREST) does. The references in ../shared were produced that way.
#include "quants-impl.h"

#include "ggml-quants.h"

#include <math.h>
#include <string.h>

// ---- activation formats --------------------------------------------------------------------------------

static void from_float_q8_0(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    block_q8_0 * GGML_RESTRICT y = vy;
    const int64_t nb = k / QK8_0;
    for (int64_t i = 0; i < nb; ++i) {
        const float * xb = x + i * QK8_0;
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; ++j) {
            const float a = fabsf(xb[j]);
            amax = a > amax ? a : amax;
        }
        const float d  = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[i].d = GGML_FP32_TO_FP16(d);
        for (int j = 0; j < QK8_0; ++j) {
            y[i].qs[j] = (int8_t) ggml_cpu_nearest_int(xb[j] * id);
        }
    }
}

static void from_float_q8_1(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    block_q8_1 * GGML_RESTRICT y = vy;
    const int64_t nb = k / QK8_1;
    for (int64_t i = 0; i < nb; ++i) {
        const float * xb = x + i * QK8_1;
        float amax = 0.0f;
        for (int j = 0; j < QK8_1; ++j) {
            const float a = fabsf(xb[j]);
            amax = a > amax ? a : amax;
        }
        const float d  = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        int sum = 0;
        for (int j = 0; j < QK8_1; ++j) {
            const int q = ggml_cpu_nearest_int(xb[j] * id);
            y[i].qs[j] = (int8_t) q;
            sum += q;
        }
        y[i].d = GGML_FP32_TO_FP16(d);
        y[i].s = GGML_FP32_TO_FP16(d * (float) sum);
    }
}

// Q8_K: llama.cpp's CPU backend uses the reference algorithm here (signed extreme -> -127, d = 1/iscale)
static void from_float_q8_K(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    block_q8_K * GGML_RESTRICT y = vy;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const float * xb = x + i * QK_K;
        float amax = 0.0f;
        float max  = 0.0f;
        for (int j = 0; j < QK_K; ++j) {
            const float a = fabsf(xb[j]);
            if (a > amax) {
                amax = a;
                max  = xb[j];
            }
        }
        if (amax == 0.0f) {
            memset(&y[i], 0, sizeof(y[i]));
            continue;
        }
        const float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; ++j) {
            const int v = ggml_cpu_nearest_int(iscale * xb[j]);
            y[i].qs[j] = (int8_t) (v < 127 ? v : 127);
        }
        for (int g = 0; g < QK_K / 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) {
                sum += y[i].qs[16 * g + j];
            }
            y[i].bsums[g] = (int16_t) sum;
        }
        y[i].d = 1.0f / iscale;
    }
}

static void from_float_f32(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    memcpy(y, x, (size_t) k * sizeof(float));
}

static void from_float_f16(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    ggml_fp16_t * GGML_RESTRICT y = vy;
    for (int64_t i = 0; i < k; ++i) {
        y[i] = GGML_FP32_TO_FP16(x[i]);
    }
}

static void from_float_bf16(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    ggml_bf16_t * GGML_RESTRICT y = vy;
    for (int64_t i = 0; i < k; ++i) {
        y[i] = GGML_FP32_TO_BF16(x[i]);
    }
}

// storage formats: the reference quantizers (one row at a time, no importance matrix)
#define STORAGE_FROM_FLOAT(t)                                                                        \
    static void from_float_##t(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {   \
        quantize_row_##t##_ref(x, (block_##t *) y, k);                                               \
    }
STORAGE_FROM_FLOAT(q4_0)
STORAGE_FROM_FLOAT(q4_1)
STORAGE_FROM_FLOAT(q5_0)
STORAGE_FROM_FLOAT(q5_1)
STORAGE_FROM_FLOAT(iq4_nl)
STORAGE_FROM_FLOAT(q2_K)
STORAGE_FROM_FLOAT(q3_K)
STORAGE_FROM_FLOAT(q4_K)
STORAGE_FROM_FLOAT(q5_K)
STORAGE_FROM_FLOAT(q6_K)
STORAGE_FROM_FLOAT(iq4_xs)
#undef STORAGE_FROM_FLOAT

// ---- dot products with 32-element blocks ----------------------------------------------------------------

static void vec_dot_q4_0_q8_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q4_0 * GGML_RESTRICT x = vx;
    const block_q8_0 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_0;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < QK4_0 / 2; ++j) {
            sumi += ((x[i].qs[j] & 0x0f) - 8) * y[i].qs[j];
            sumi += ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + QK4_0 / 2];
        }
        sumf += (float) sumi * (GGML_FP16_TO_FP32(x[i].d) * GGML_FP16_TO_FP32(y[i].d));
    }
    *s = sumf;
}

static void vec_dot_q4_1_q8_1(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q4_1 * GGML_RESTRICT x = vx;
    const block_q8_1 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_1;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < QK4_1 / 2; ++j) {
            sumi += (x[i].qs[j] & 0x0f) * y[i].qs[j];
            sumi += (x[i].qs[j] >> 4) * y[i].qs[j + QK4_1 / 2];
        }
        // the min times the sum of the activations, which Q8_1 carries precomputed in s
        sumf += (float) sumi * (GGML_FP16_TO_FP32(x[i].d) * GGML_FP16_TO_FP32(y[i].d))
              + GGML_FP16_TO_FP32(x[i].m) * GGML_FP16_TO_FP32(y[i].s);
    }
    *s = sumf;
}

static void vec_dot_q5_0_q8_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q5_0 * GGML_RESTRICT x = vx;
    const block_q8_0 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_0;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof(qh));
        int sumi = 0;
        for (int j = 0; j < QK5_0 / 2; ++j) {
            const int v0 = ((x[i].qs[j] & 0x0f) | (int) (((qh >> j) & 1u) << 4)) - 16;
            const int v1 = ((x[i].qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1u) << 4)) - 16;
            sumi += v0 * y[i].qs[j] + v1 * y[i].qs[j + QK5_0 / 2];
        }
        sumf += (float) sumi * (GGML_FP16_TO_FP32(x[i].d) * GGML_FP16_TO_FP32(y[i].d));
    }
    *s = sumf;
}

static void vec_dot_q5_1_q8_1(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q5_1 * GGML_RESTRICT x = vx;
    const block_q8_1 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_1;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof(qh));
        int sumi = 0;
        for (int j = 0; j < QK5_1 / 2; ++j) {
            const int v0 = (x[i].qs[j] & 0x0f) | (int) (((qh >> j) & 1u) << 4);
            const int v1 = (x[i].qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1u) << 4);
            sumi += v0 * y[i].qs[j] + v1 * y[i].qs[j + QK5_1 / 2];
        }
        sumf += (float) sumi * (GGML_FP16_TO_FP32(x[i].d) * GGML_FP16_TO_FP32(y[i].d))
              + GGML_FP16_TO_FP32(x[i].m) * GGML_FP16_TO_FP32(y[i].s);
    }
    *s = sumf;
}

// Q8_0 x Q8_0 in llama.cpp's x86 order, which its AVX2 vec_dot (one activation column) and its llamafile
// tinyBLAS tiles (prompt batches) share: eight float lanes, lane l takes the int dot of elements 4l..4l+3 of
// each block as fma(dx * dy, dot, lane) block after block, then the lanes are summed as
// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)). Greedy tokens of Q8_0 models sit on near-ties that only
// this rounding reproduces (reference/kjv), so every ISA path computes exactly these float operations.
static void vec_dot_q8_0_q8_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q8_0 * GGML_RESTRICT x = vx;
    const block_q8_0 * GGML_RESTRICT y = vy;
    const int nb = n / QK8_0;
    float lane[8] = { 0.0f };
    for (int i = 0; i < nb; ++i) {
        const float d = GGML_FP16_TO_FP32(x[i].d) * GGML_FP16_TO_FP32(y[i].d);
        for (int l = 0; l < 8; ++l) {
            int sumi = 0;
            for (int j = 4 * l; j < 4 * l + 4; ++j) {
                sumi += x[i].qs[j] * y[i].qs[j];
            }
            lane[l] = fmaf(d, (float) sumi, lane[l]);
        }
    }
    *s = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

static void vec_dot_iq4_nl_q8_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                                const void * GGML_RESTRICT vy) {
    const block_iq4_nl * GGML_RESTRICT x = vx;
    const block_q8_0 * GGML_RESTRICT y = vy;
    const int nb = n / QK4_NL;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < QK4_NL / 2; ++j) {
            sumi += kvalues_iq4nl[x[i].qs[j] & 0x0f] * y[i].qs[j];
            sumi += kvalues_iq4nl[x[i].qs[j] >> 4] * y[i].qs[j + QK4_NL / 2];
        }
        sumf += (float) sumi * (GGML_FP16_TO_FP32(x[i].d) * GGML_FP16_TO_FP32(y[i].d));
    }
    *s = sumf;
}

// ---- K-quants: each super-block is reduced to integers, then scaled once ---------------------------------
// The SIMD paths reproduce exactly these float operations, so they agree with this code bit for bit.

static void vec_dot_q2_K_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q2_K * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        int isum = 0;
        int msum = 0;
        for (int is = 0; is < 16; ++is) {
            msum += (x[i].scales[is] >> 4) * y[i].bsums[is];
        }
        for (int half = 0; half < 2; ++half) {
            const uint8_t * q  = x[i].qs + 32 * half;
            const int8_t  * q8 = y[i].qs + 128 * half;
            for (int j = 0; j < 4; ++j) {
                for (int sub = 0; sub < 2; ++sub) {
                    int dot = 0;
                    for (int l = 16 * sub; l < 16 * sub + 16; ++l) {
                        dot += ((q[l] >> (2 * j)) & 3) * q8[32 * j + l];
                    }
                    isum += (x[i].scales[8 * half + 2 * j + sub] & 0x0f) * dot;
                }
            }
        }
        const float dall = y[i].d * GGML_FP16_TO_FP32(x[i].d);
        const float dmin = y[i].d * GGML_FP16_TO_FP32(x[i].dmin);
        sumf += dall * (float) isum - dmin * (float) msum;
    }
    *s = sumf;
}

static void vec_dot_q3_K_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q3_K * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        int8_t sc[16];
        ggml_cpu_q3_K_scales(x[i].scales, sc);
        int isum = 0;
        for (int half = 0; half < 2; ++half) {
            const uint8_t * q  = x[i].qs + 32 * half;
            const int8_t  * q8 = y[i].qs + 128 * half;
            for (int j = 0; j < 4; ++j) {
                const uint8_t hbit = (uint8_t) (1u << (4 * half + j));
                for (int sub = 0; sub < 2; ++sub) {
                    int dot = 0;
                    for (int l = 16 * sub; l < 16 * sub + 16; ++l) {
                        // a clear high bit means the value is 4 lower
                        const int v = ((q[l] >> (2 * j)) & 3) - ((x[i].hmask[l] & hbit) ? 0 : 4);
                        dot += v * q8[32 * j + l];
                    }
                    isum += sc[8 * half + 2 * j + sub] * dot;
                }
            }
        }
        sumf += (y[i].d * GGML_FP16_TO_FP32(x[i].d)) * (float) isum;
    }
    *s = sumf;
}

static void vec_dot_q4_K_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q4_K * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        int isum = 0;
        int msum = 0;
        for (int j = 0; j < 4; ++j) {
            const uint8_t * q  = x[i].qs + 32 * j;
            const int8_t  * q8 = y[i].qs + 64 * j;
            int dlo = 0;
            int dhi = 0;
            for (int l = 0; l < 32; ++l) {
                dlo += (q[l] & 0x0f) * q8[l];
                dhi += (q[l] >> 4) * q8[l + 32];
            }
            uint8_t sc, m;
            ggml_cpu_scale_min_k4(2 * j, x[i].scales, &sc, &m);
            isum += sc * dlo;
            msum += m * (y[i].bsums[4 * j + 0] + y[i].bsums[4 * j + 1]);
            ggml_cpu_scale_min_k4(2 * j + 1, x[i].scales, &sc, &m);
            isum += sc * dhi;
            msum += m * (y[i].bsums[4 * j + 2] + y[i].bsums[4 * j + 3]);
        }
        const float dall = y[i].d * GGML_FP16_TO_FP32(x[i].d);
        const float dmin = y[i].d * GGML_FP16_TO_FP32(x[i].dmin);
        sumf += dall * (float) isum - dmin * (float) msum;
    }
    *s = sumf;
}

static void vec_dot_q5_K_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q5_K * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        int isum = 0;
        int msum = 0;
        for (int j = 0; j < 4; ++j) {
            const uint8_t * q  = x[i].qs + 32 * j;
            const int8_t  * q8 = y[i].qs + 64 * j;
            int dlo = 0;
            int dhi = 0;
            for (int l = 0; l < 32; ++l) {
                const int vlo = (q[l] & 0x0f) | (((x[i].qh[l] >> (2 * j)) & 1) << 4);
                const int vhi = (q[l] >> 4) | (((x[i].qh[l] >> (2 * j + 1)) & 1) << 4);
                dlo += vlo * q8[l];
                dhi += vhi * q8[l + 32];
            }
            uint8_t sc, m;
            ggml_cpu_scale_min_k4(2 * j, x[i].scales, &sc, &m);
            isum += sc * dlo;
            msum += m * (y[i].bsums[4 * j + 0] + y[i].bsums[4 * j + 1]);
            ggml_cpu_scale_min_k4(2 * j + 1, x[i].scales, &sc, &m);
            isum += sc * dhi;
            msum += m * (y[i].bsums[4 * j + 2] + y[i].bsums[4 * j + 3]);
        }
        const float dall = y[i].d * GGML_FP16_TO_FP32(x[i].d);
        const float dmin = y[i].d * GGML_FP16_TO_FP32(x[i].dmin);
        sumf += dall * (float) isum - dmin * (float) msum;
    }
    *s = sumf;
}

static void vec_dot_q6_K_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                              const void * GGML_RESTRICT vy) {
    const block_q6_K * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        int isum = 0;
        for (int half = 0; half < 2; ++half) {
            const uint8_t * ql = x[i].ql + 64 * half;
            const uint8_t * qh = x[i].qh + 32 * half;
            const int8_t  * sc = x[i].scales + 8 * half;
            const int8_t  * q8 = y[i].qs + 128 * half;
            for (int sub = 0; sub < 2; ++sub) {
                int d1 = 0, d2 = 0, d3 = 0, d4 = 0;
                for (int l = 16 * sub; l < 16 * sub + 16; ++l) {
                    const int v1 = ((ql[l] & 0x0f)      | (((qh[l] >> 0) & 3) << 4)) - 32;
                    const int v2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
                    const int v3 = ((ql[l] >> 4)        | (((qh[l] >> 4) & 3) << 4)) - 32;
                    const int v4 = ((ql[l + 32] >> 4)   | (((qh[l] >> 6) & 3) << 4)) - 32;
                    d1 += v1 * q8[l];
                    d2 += v2 * q8[l + 32];
                    d3 += v3 * q8[l + 64];
                    d4 += v4 * q8[l + 96];
                }
                isum += sc[sub + 0] * d1 + sc[sub + 2] * d2 + sc[sub + 4] * d3 + sc[sub + 6] * d4;
            }
        }
        sumf += (y[i].d * GGML_FP16_TO_FP32(x[i].d)) * (float) isum;
    }
    *s = sumf;
}

static void vec_dot_iq4_xs_q8_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                                const void * GGML_RESTRICT vy) {
    const block_iq4_xs * GGML_RESTRICT x = vx;
    const block_q8_K * GGML_RESTRICT y = vy;
    const int nb = n / QK_K;
    float sumf = 0.0f;
    for (int i = 0; i < nb; ++i) {
        int8_t sc[QK_K / 32];
        ggml_cpu_iq4_xs_scales(&x[i], sc);
        int isum = 0;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const uint8_t * q  = x[i].qs + 16 * ib;
            const int8_t  * q8 = y[i].qs + 32 * ib;
            int dot = 0;
            for (int j = 0; j < 16; ++j) {
                dot += kvalues_iq4nl[q[j] & 0x0f] * q8[j] + kvalues_iq4nl[q[j] >> 4] * q8[j + 16];
            }
            isum += sc[ib] * dot;
        }
        sumf += (y[i].d * GGML_FP16_TO_FP32(x[i].d)) * (float) isum;
    }
    *s = sumf;
}

// ---- float rows -------------------------------------------------------------------------------------------

static void vec_dot_f32(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                        const void * GGML_RESTRICT vy) {
    const float * GGML_RESTRICT x = vx;
    const float * GGML_RESTRICT y = vy;
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        sum += (double) x[i] * (double) y[i];
    }
    *s = (float) sum;
}

static void vec_dot_f16(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                        const void * GGML_RESTRICT vy) {
    const ggml_fp16_t * GGML_RESTRICT x = vx;
    const ggml_fp16_t * GGML_RESTRICT y = vy;
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        sum += (double) (GGML_FP16_TO_FP32(x[i]) * GGML_FP16_TO_FP32(y[i]));
    }
    *s = (float) sum;
}

static void vec_dot_bf16(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,
                         const void * GGML_RESTRICT vy) {
    const ggml_bf16_t * GGML_RESTRICT x = vx;
    const ggml_bf16_t * GGML_RESTRICT y = vy;
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        sum += (double) (GGML_BF16_TO_FP32(x[i]) * GGML_BF16_TO_FP32(y[i]));
    }
    *s = (float) sum;
}

// ---- table -------------------------------------------------------------------------------------------------

void ggml_cpu_kernels_fill_scalar(struct ggml_cpu_type_kernels * t) {
    for (int i = 0; i < GGML_TYPE_COUNT; ++i) {
        t[i].vec_dot_type = GGML_TYPE_COUNT;
        t[i].from_float   = NULL;
        t[i].vec_dot      = NULL;
        t[i].vec_dot_mc   = NULL;
    }
#define SET(T, VDT, FF, VD) t[T] = (struct ggml_cpu_type_kernels) { .vec_dot_type = VDT, .from_float = FF, .vec_dot = VD }
    SET(GGML_TYPE_F32,    GGML_TYPE_F32,  from_float_f32,    vec_dot_f32);
    SET(GGML_TYPE_F16,    GGML_TYPE_F16,  from_float_f16,    vec_dot_f16);
    SET(GGML_TYPE_BF16,   GGML_TYPE_BF16, from_float_bf16,   vec_dot_bf16);
    SET(GGML_TYPE_Q4_0,   GGML_TYPE_Q8_0, from_float_q4_0,   vec_dot_q4_0_q8_0);
    SET(GGML_TYPE_Q4_1,   GGML_TYPE_Q8_1, from_float_q4_1,   vec_dot_q4_1_q8_1);
    SET(GGML_TYPE_Q5_0,   GGML_TYPE_Q8_0, from_float_q5_0,   vec_dot_q5_0_q8_0);
    SET(GGML_TYPE_Q5_1,   GGML_TYPE_Q8_1, from_float_q5_1,   vec_dot_q5_1_q8_1);
    SET(GGML_TYPE_Q8_0,   GGML_TYPE_Q8_0, from_float_q8_0,   vec_dot_q8_0_q8_0);
    SET(GGML_TYPE_Q8_1,   GGML_TYPE_Q8_1, from_float_q8_1,   NULL);
    SET(GGML_TYPE_Q2_K,   GGML_TYPE_Q8_K, from_float_q2_K,   vec_dot_q2_K_q8_K);
    SET(GGML_TYPE_Q3_K,   GGML_TYPE_Q8_K, from_float_q3_K,   vec_dot_q3_K_q8_K);
    SET(GGML_TYPE_Q4_K,   GGML_TYPE_Q8_K, from_float_q4_K,   vec_dot_q4_K_q8_K);
    SET(GGML_TYPE_Q5_K,   GGML_TYPE_Q8_K, from_float_q5_K,   vec_dot_q5_K_q8_K);
    SET(GGML_TYPE_Q6_K,   GGML_TYPE_Q8_K, from_float_q6_K,   vec_dot_q6_K_q8_K);
    SET(GGML_TYPE_Q8_K,   GGML_TYPE_COUNT, from_float_q8_K,  NULL);
    SET(GGML_TYPE_IQ4_NL, GGML_TYPE_Q8_0, from_float_iq4_nl, vec_dot_iq4_nl_q8_0);
    SET(GGML_TYPE_IQ4_XS, GGML_TYPE_Q8_K, from_float_iq4_xs, vec_dot_iq4_xs_q8_K);
#undef SET
}
