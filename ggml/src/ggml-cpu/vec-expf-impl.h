// Internal to vec-expf-avx2.c and vec-expf-avx512.c: the data of glibc's expf (sysdeps/ieee754/flt-32,
// e_expf.c with e_exp2f_data.c: EXP2F_TABLE_BITS 5, EXP2F_POLY_ORDER 3), which the vector paths evaluate in
// the order of its x86-64 FMA build:
//
//   xd = (double) x
//   kd = fma(INVLN2N, xd, SHIFT); ki = bits(kd); kd -= SHIFT       k = round(x * N/ln2), ties to even
//   r  = fma(INVLN2N, xd, -kd)                                       x * N/ln2 - k, |r| <= 1/2
//   s  = double(TAB[ki % N] + (ki << 47))                            2^(k/N): table entry, exponent + k/N
//   y  = fma(fma(C0, r, C1), r * r, fma(C2, r, 1.0)) * s
//   return (float) y
//
// for |x| < 88 (top 12 bits of x below those of 88.0f). -inf gives +0 as in libm; the other lanes (|x| >= 88,
// +inf, NaN) are libm's business.
#pragma once

#include <stdint.h>

#define GGML_EXPF_N 32 // 2^EXP2F_TABLE_BITS

// bit pattern of x where |x| >= 88, x is infinite or NaN: these lanes call expf
#define GGML_EXPF_SPECIAL_ABS 0x42b00000u

// N/ln2, 1.5*2^52 (adding it rounds to an integer in the low mantissa bits), the polynomial scaled by N^-k
#define GGML_EXPF_INVLN2N 0x1.71547652b82fep+5
#define GGML_EXPF_SHIFT   0x1.8p+52
#define GGML_EXPF_C0      0x1.c6af84b912394p-20
#define GGML_EXPF_C1      0x1.ebfce50fac4f3p-13
#define GGML_EXPF_C2      0x1.62e42ff0c52d6p-6

// TAB[i] = bits(2^(i/N) rounded to double) - (i << 47): adding ki << 47 puts k/N into the exponent and cancels
// the i it carries along in the mantissa's top bits
static const uint64_t ggml_expf_tab[GGML_EXPF_N] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
