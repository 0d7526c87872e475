// Internal to the CPU kernel files (ggml-cpu-kernels.c, quants-scalar.c, quants-avx2.c, quants-avx512.c):
// the per-ISA table builders and the small scalar helpers every path must share so that they decode block
// fields identically. No intrinsics here: this header is also compiled without ISA flags.
#pragma once

#include "ggml-common.h"
#include "ggml-cpu-kernels.h"
#include "ggml-impl.h"

#include <stdint.h>
#include <string.h>

// The K-quant kernels of every ISA reduce each super-block to integers and then apply the same float
// operations in the same order, so their results are bit-identical to the scalar path. A fused
// multiply-add would break that; GCC does not contract in ISO C mode, clang needs to be told.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#ifdef __cplusplus
extern "C" {
#endif

// Each builder fills/overrides entries of a table of GGML_TYPE_COUNT entries. The scalar builder sets every
// supported type; the AVX2 builder overrides what it accelerates (it is only called after the CPUID check);
// the AVX-512 builder is applied on top of the AVX2 table.
void ggml_cpu_kernels_fill_scalar(struct ggml_cpu_type_kernels * table);
void ggml_cpu_kernels_fill_avx2(struct ggml_cpu_type_kernels * table);
void ggml_cpu_kernels_fill_avx512(struct ggml_cpu_type_kernels * table);

// One weight row against NC activation rows (NC a compile-time constant after inlining): the row is unpacked
// once and every column goes through exactly the operations of the single-column kernel (which is NC = 1).
#define MC_INLINE static inline __attribute__((always_inline))
#define MC_DISPATCH(impl, n, s, x, y, by, nc)            \
    switch (nc) {                                         \
        case 1:  impl(n, s, x, y, by, 1); break;          \
        case 2:  impl(n, s, x, y, by, 2); break;          \
        case 3:  impl(n, s, x, y, by, 3); break;          \
        default: impl(n, s, x, y, by, 4); break;          \
    }
// defines vec_dot_<name> (one column) and vec_dot_mc_<name> (nc columns, ggml_cpu_vec_dot_mc_t) over such an
// impl(n, s, x, y, by, nc)
#define MC_VEC_DOTS(name, impl)                                                                                 \
    static void vec_dot_##name(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,                   \
                               const void * GGML_RESTRICT vy) {                                                 \
        impl(n, s, vx, vy, 0, 1);                                                                               \
    }                                                                                                           \
    static void vec_dot_mc_##name(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,                \
                                  const void * GGML_RESTRICT vy, size_t by, int nc) {                           \
        MC_DISPATCH(impl, n, s, vx, vy, by, nc)                                                                 \
    }

// round to nearest, ties to even, for |v| < 2^22: what the SIMD paths get from their rounding instructions
// (and what ggml's reference K-quant quantizers use); adding 1.5*2^23 leaves the integer in the low mantissa
static inline int ggml_cpu_nearest_int(float v) {
    const float t = v + 12582912.0f;
    int32_t i;
    memcpy(&i, &t, sizeof(i));
    return (i & 0x007fffff) - 0x00400000;
}

// 6-bit scale and min of sub-block j (0..7) of Q4_K / Q5_K from the 12 packed bytes
static inline void ggml_cpu_scale_min_k4(int j, const uint8_t * GGML_RESTRICT q, uint8_t * sc, uint8_t * m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m  = q[j + 4] & 63;
    } else {
        *sc = (uint8_t) ((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
        *m  = (uint8_t) ((q[j + 4] >> 4)   | ((q[j]     >> 6) << 4));
    }
}

// the same 8 scales and 8 mins as bytes of two 64-bit words (sub-block j in byte j), without a loop
static inline void ggml_cpu_k4_scales_u64(const uint8_t * GGML_RESTRICT p, uint64_t * sc, uint64_t * mn) {
    uint32_t a, b, c;
    memcpy(&a, p + 0, 4);
    memcpy(&b, p + 4, 4);
    memcpy(&c, p + 8, 4);
    const uint32_t sc_lo = a & 0x3f3f3f3fu;
    const uint32_t mn_lo = b & 0x3f3f3f3fu;
    const uint32_t sc_hi = (c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u);
    const uint32_t mn_hi = ((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u);
    *sc = (uint64_t) sc_lo | ((uint64_t) sc_hi << 32);
    *mn = (uint64_t) mn_lo | ((uint64_t) mn_hi << 32);
}

// the 16 6-bit scales of a Q3_K block (0..63, stored with a +32 bias) as 4 little-endian words of bytes.
// Scale i has its low 4 bits in byte i % 8 (low nibble for i < 8, high nibble after) and its high 2 bits in
// byte 8 + i % 4 at bit 2 * (i / 4).
static inline void ggml_cpu_q3_K_scale_words(const uint8_t * GGML_RESTRICT packed, uint32_t w[4]) {
    uint32_t a0, a1, hi;
    memcpy(&a0, packed + 0, 4);
    memcpy(&a1, packed + 4, 4);
    memcpy(&hi, packed + 8, 4);
    const uint32_t m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
    w[0] = (a0 & m4)        | (((hi >> 0) & m2) << 4);
    w[1] = (a1 & m4)        | (((hi >> 2) & m2) << 4);
    w[2] = ((a0 >> 4) & m4) | (((hi >> 4) & m2) << 4);
    w[3] = ((a1 >> 4) & m4) | (((hi >> 6) & m2) << 4);
}

// the 16 signed scales of a Q3_K block (bias removed)
static inline void ggml_cpu_q3_K_scales(const uint8_t * GGML_RESTRICT packed, int8_t * GGML_RESTRICT out) {
    uint32_t w[4];
    ggml_cpu_q3_K_scale_words(packed, w);
    for (int k = 0; k < 4; ++k) {
        for (int j = 0; j < 4; ++j) {
            out[4 * k + j] = (int8_t) ((int) ((w[k] >> (8 * j)) & 0xff) - 32);
        }
    }
}

// the 8 signed 6-bit scales of an IQ4_XS block (already minus 32)
static inline void ggml_cpu_iq4_xs_scales(const block_iq4_xs * GGML_RESTRICT b, int8_t * GGML_RESTRICT out) {
    for (int ib = 0; ib < QK_K / 32; ++ib) {
        const int lo = (b->scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0f;
        const int hi = (b->scales_h >> (2 * ib)) & 3;
        out[ib] = (int8_t) ((lo | (hi << 4)) - 32);
    }
}

#ifdef __cplusplus
}
#endif
