// Internal helpers shared by the ggml sources: half/bfloat conversions, logging, checked size arithmetic.
#pragma once

#include "ggml.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- logging -------------------------------------------------------------------------------------------

GGML_ATTRIBUTE_FORMAT(2, 3)
void ggml_log_internal(enum ggml_log_level level, const char * fmt, ...);

#define GGML_LOG(...)       ggml_log_internal(GGML_LOG_LEVEL_NONE , __VA_ARGS__)
#define GGML_LOG_INFO(...)  ggml_log_internal(GGML_LOG_LEVEL_INFO , __VA_ARGS__)
#define GGML_LOG_WARN(...)  ggml_log_internal(GGML_LOG_LEVEL_WARN , __VA_ARGS__)
#define GGML_LOG_ERROR(...) ggml_log_internal(GGML_LOG_LEVEL_ERROR, __VA_ARGS__)
#define GGML_LOG_DEBUG(...) ggml_log_internal(GGML_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define GGML_LOG_CONT(...)  ggml_log_internal(GGML_LOG_LEVEL_CONT , __VA_ARGS__)

// ---- checked arithmetic for sizes that come from files or requests ---------------------------------------
// Each returns true on overflow and leaves *out unspecified then.

static inline bool ggml_mul_overflow_size(size_t a, size_t b, size_t * out) {
    return __builtin_mul_overflow(a, b, out);
}
static inline bool ggml_add_overflow_size(size_t a, size_t b, size_t * out) {
    return __builtin_add_overflow(a, b, out);
}
static inline bool ggml_mul_overflow_i64(int64_t a, int64_t b, int64_t * out) {
    return __builtin_mul_overflow(a, b, out);
}

// ---- IEEE half <-> float (round to nearest even, like F16C's _cvtss_sh(x, 0)) ------------------------------

static inline uint32_t ggml_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float    ggml_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float ggml_compute_fp16_to_fp32(ggml_fp16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp  = (h >> 10) & 0x1fu;
    const uint32_t man  = h & 0x3ffu;
    if (exp == 0x1f) {                       // inf / nan: keep the payload
        return ggml_bits_f32(sign | 0x7f800000u | (man << 13));
    }
    if (exp == 0) {                          // zero / subnormal: exact as man * 2^-24
        const float v = (float) man * 5.9604644775390625e-08f;
        return sign ? -v : v;
    }
    return ggml_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline ggml_fp16_t ggml_compute_fp32_to_fp16(float f) {
    const uint32_t x    = ggml_f32_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax   = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {                 // inf or nan (nan stays quiet nan)
        return (ggml_fp16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u));
    }
    if (ax >= 0x477ff000u) {                 // rounds to >= 65520: overflow to inf
        return (ggml_fp16_t)(sign | 0x7c00u);
    }
    if (ax < 0x38800000u) {                  // below the smallest normal half: subnormal or zero
        if (ax < 0x33000000u) {              // < 2^-25: rounds to zero
            return (ggml_fp16_t) sign;
        }
        const uint32_t e     = ax >> 23;                 // biased f32 exponent, 102..112
        const uint32_t m     = (ax & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126u - e;                 // 14..24
        uint32_t r = m >> shift;
        const uint32_t rem  = m & ((1u << shift) - 1u);
        const uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) {
            r++;
        }
        return (ggml_fp16_t)(sign | r);
    }
    // normal: rebias exponent, round mantissa from 23 to 10 bits (nearest even; a carry bumps the exponent)
    uint32_t r = ((ax >> 13) - (112u << 10));
    const uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) {
        r++;
    }
    return (ggml_fp16_t)(sign | r);
}

#define GGML_FP16_TO_FP32(x) ggml_compute_fp16_to_fp32(x)
#define GGML_FP32_TO_FP16(x) ggml_compute_fp32_to_fp16(x)

// ---- bfloat16 ----------------------------------------------------------------------------------------------

static inline float ggml_compute_bf16_to_fp32(ggml_bf16_t h) {
    return ggml_bits_f32((uint32_t) h.bits << 16);
}

// round to nearest even; NaN stays a (quiet) NaN
static inline ggml_bf16_t ggml_compute_fp32_to_bf16(float s) {
    ggml_bf16_t h;
    const uint32_t u = ggml_f32_bits(s);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        h.bits = (uint16_t)((u >> 16) | 64u);
        return h;
    }
    h.bits = (uint16_t)((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
    return h;
}

#define GGML_BF16_TO_FP32(x) ggml_compute_bf16_to_fp32(x)
#define GGML_FP32_TO_BF16(x) ggml_compute_fp32_to_bf16(x)

#ifdef __cplusplus
}
#endif
