// Block formats without reference files: closed-form bounds and independent computations.
//  - F16: all 65536 halves decode to the value given by their fields (computed in double) and re-encode to
//    themselves; f32 -> f16 equals the correctly rounded value (nearest, ties to even, overflow to inf)
//    found by searching the table of all halves, on every midpoint, its neighbours and random floats.
//  - BF16: the same for bfloat16.
//  - quantize -> dequantize on random data: per-element error bounds of the one-scale types derived from
//    the block maximum, Q8_K/Q8_1 likewise, llama.cpp's test-quantize-fns error limits for every type,
//    all-zero input dequantizes to zeros, importance-matrix paths, ggml_quantize_chunk's start/argument
//    handling and ggml_quants_validate_row on NaN/Inf scales.

#include "harness.h"

#include "ggml.h"
#include "ggml-quants.h"

#include <stdint.h>

// ---- deterministic random numbers (xorshift64*, Box-Muller) -----------------------------------------------------

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng_u64(void) {
    return th_xorshift64star(&rng_state);
}

static double rng_uniform(void) { // (0, 1)
    return ((double)(rng_u64() >> 11) + 0.5) / 9007199254740992.0;
}

static float rng_normal(void) {
    const double u = rng_uniform(), v = rng_uniform();
    return (float)(sqrt(-2.0*log(u)) * cos(6.283185307179586*v));
}

static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

// ---- F16 ---------------------------------------------------------------------------------------------------------

// value of a half from its fields, in double (NaN for NaN, +-inf for inf)
static double half_value(uint16_t h) {
    const int    sign = h >> 15;
    const int    e    = (h >> 10) & 31;
    const int    m    = h & 1023;
    double v;
    if (e == 31) {
        v = m ? NAN : INFINITY;
    } else if (e == 0) {
        v = ldexp((double) m, -24);
    } else {
        v = ldexp((double)(1024 + m), e - 25);
    }
    return sign ? -v : v;
}

// correctly rounded f32 -> f16 by search over the finite non-negative halves 0x0000..0x7bff (monotone)
static uint16_t half_round_expected(float f) {
    if (isnan(f)) {
        return 0x7e00;
    }
    const uint16_t sign = signbit(f) ? 0x8000 : 0;
    const double a = fabs((double) f);
    // overflow threshold: 65504 + half an ulp (16); the tie goes to the even "next" value, i.e. inf
    if (a >= 65520.0) {
        return sign | 0x7c00;
    }
    int lo = 0, hi = 0x7bff;
    if (a >= half_value(0x7bff)) {
        lo = 0x7bff;
    } else {
        while (hi - lo > 1) { // invariant: value(lo) <= a < value(hi)
            const int mid = (lo + hi)/2;
            if (half_value((uint16_t) mid) <= a) lo = mid; else hi = mid;
        }
        const double dl = a - half_value((uint16_t) lo);
        const double dh = half_value((uint16_t) hi) - a;
        if (dh < dl || (dh == dl && (hi & 1) == 0)) {
            lo = hi;
        }
    }
    return (uint16_t)(sign | lo);
}

static void test_f16(void) {
    int bad_decode = 0, bad_roundtrip = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const float  f = ggml_fp16_to_fp32((ggml_fp16_t) h);
        const double v = half_value((uint16_t) h);
        if (isnan(v)) {
            if (!isnan(f)) bad_decode++;
            if ((ggml_fp32_to_fp16(f) & 0x7fff) <= 0x7c00) bad_roundtrip++;  // must stay a NaN
            continue;
        }
        if ((double) f != v || !signbit(f) != !signbit(v)) {
            if (bad_decode++ < 5) fprintf(stderr, "f16 0x%04x decodes to %.9g, expected %.9g\n", h, f, v);
        }
        if (ggml_fp32_to_fp16(f) != h) {
            if (bad_roundtrip++ < 5) fprintf(stderr, "f16 0x%04x does not round-trip\n", h);
        }
    }
    TH_CHECK(bad_decode == 0, "%d halves decode wrongly", bad_decode);
    TH_CHECK(bad_roundtrip == 0, "%d halves do not round-trip", bad_roundtrip);

    // every midpoint between consecutive halves (exact in f32), one f32 ulp either side, the values
    // themselves, and random bit patterns
    int n_tested = 0, bad_round = 0;
    for (uint32_t h = 0; h < 0x7c00; ++h) {
        const double v0 = half_value((uint16_t) h);
        const double v1 = h + 1 < 0x7c00 ? half_value((uint16_t)(h + 1)) : 65536.0;
        const float mid = (float)((v0 + v1)/2);
        const float probes[4] = { (float) v0, mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY) };
        for (int p = 0; p < 4; ++p) {
            for (int s = 0; s < 2; ++s) {
                const float f = s ? -probes[p] : probes[p];
                n_tested++;
                if (ggml_fp32_to_fp16(f) != half_round_expected(f)) {
                    if (bad_round++ < 5) fprintf(stderr, "f32 %.9g -> f16 0x%04x, expected 0x%04x\n", f,
                                                 ggml_fp32_to_fp16(f), half_round_expected(f));
                }
            }
        }
    }
    for (int i = 0; i < 2000000; ++i) {
        const float f = bits_f32((uint32_t) rng_u64());
        n_tested++;
        const uint16_t got = ggml_fp32_to_fp16(f), want = half_round_expected(f);
        const bool ok = isnan(f) ? ((got & 0x7c00) == 0x7c00 && (got & 0x3ff) != 0) : got == want;
        if (!ok && bad_round++ < 5) fprintf(stderr, "f32 %.9g -> f16 0x%04x, expected 0x%04x\n", f, got, want);
    }
    TH_CHECK(bad_round == 0, "%d of %d f32 -> f16 conversions not correctly rounded", bad_round, n_tested);

    // the row converters agree with the scalar ones
    float src[1000];
    ggml_fp16_t h16[1000];
    float back[1000];
    for (int i = 0; i < 1000; ++i) src[i] = rng_normal() * 100.0f;
    ggml_fp32_to_fp16_row(src, h16, 1000);
    ggml_fp16_to_fp32_row(h16, back, 1000);
    int bad_row = 0;
    for (int i = 0; i < 1000; ++i) {
        if (h16[i] != half_round_expected(src[i]) || back[i] != (float) half_value(h16[i])) bad_row++;
    }
    TH_CHECK(bad_row == 0, "%d f16 row conversions wrong", bad_row);
}

// ---- BF16 --------------------------------------------------------------------------------------------------------

static double bf16_value(uint16_t b) {
    const int sign = b >> 15;
    const int e    = (b >> 7) & 255;
    const int m    = b & 127;
    double v;
    if (e == 255) {
        v = m ? NAN : INFINITY;
    } else if (e == 0) {
        v = ldexp((double) m, -133);
    } else {
        v = ldexp((double)(128 + m), e - 134);
    }
    return sign ? -v : v;
}

static uint16_t bf16_round_expected(float f) {
    const uint32_t u = f32_bits(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    const uint16_t t = (uint16_t)((u >> 16) & 0x7fff);             // truncated magnitude
    const double a  = fabs((double) f);
    const double lo = bf16_value(t);
    // the value after t; past the largest finite bf16 the "next" is 2^128 (where inf starts)
    const double hi = t + 1 == 0x7f80 ? ldexp(1.0, 128) : bf16_value((uint16_t)(t + 1));
    const double dl = a - lo, dh = hi - a;
    uint16_t r = t;
    if (dh < dl || (dh == dl && ((t + 1) & 1) == 0)) {
        r = (uint16_t)(t + 1);
    }
    return (uint16_t)(sign | r);
}

static void test_bf16(void) {
    int bad_decode = 0;
    for (uint32_t b = 0; b < 65536; ++b) {
        ggml_bf16_t x = { (uint16_t) b };
        const float  f = ggml_bf16_to_fp32(x);
        const double v = bf16_value((uint16_t) b);
        const bool ok = isnan(v) ? isnan(f) : ((double) f == v && !signbit(f) == !signbit(v));
        if (!ok) bad_decode++;
        if (!isnan(v) && ggml_fp32_to_bf16(f).bits != b) bad_decode++;
    }
    TH_CHECK(bad_decode == 0, "%d bf16 values decode or round-trip wrongly", bad_decode);

    int bad = 0;
    for (int i = 0; i < 2000000; ++i) {
        uint32_t u = (uint32_t) rng_u64();
        if (i % 4 == 0) u = (u & 0xffff0000u) | 0x8000u;   // exact ties
        const float f = bits_f32(u);
        const uint16_t got = ggml_fp32_to_bf16(f).bits;
        if (isnan(f)) {
            if ((got & 0x7f80) != 0x7f80 || (got & 0x7f) == 0) bad++;
            continue;
        }
        if (got != bf16_round_expected(f) && bad++ < 5) {
            fprintf(stderr, "f32 0x%08x -> bf16 0x%04x, expected 0x%04x\n", u, got, bf16_round_expected(f));
        }
    }
    TH_CHECK(bad == 0, "%d f32 -> bf16 conversions not correctly rounded", bad);
}

// ---- quantization round trips -----------------------------------------------------------------------------------

static const enum ggml_type qtypes[] = {
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
    GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
    GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS,
};
#define N_QTYPES (sizeof(qtypes)/sizeof(qtypes[0]))

#define NPR   512          // elements per row (a multiple of 256)
#define NROWS 48

// quantize with ggml_quantize_chunk, dequantize with the type's to_float
static void roundtrip(enum ggml_type t, const float * x, float * y, int64_t nrows, const float * imatrix) {
    const size_t sz = ggml_row_size(t, NPR) * (size_t) nrows;
    void * q = malloc(sz);
    const size_t w = ggml_quantize_chunk(t, x, q, 0, nrows, NPR, imatrix);
    TH_EXPECT(w == sz, "%s: quantize_chunk wrote %zu of %zu bytes", ggml_type_name(t), w, sz);
    ggml_get_type_traits(t)->to_float(q, y, nrows*NPR);
    free(q);
}

// random rows: Gaussian at scales 1, 1e-3 and 1e3, all positive, all negative, one outlier, constant
static void fill_rows(float * x) {
    for (int r = 0; r < NROWS; ++r) {
        float * row = x + r*NPR;
        const int kind = r % 8;
        for (int i = 0; i < NPR; ++i) {
            float v = rng_normal();
            switch (kind) {
                case 1: v *= 1e-3f; break;
                case 2: v *= 1e3f; break;
                case 3: v = fabsf(v) + 0.5f; break;
                case 4: v = -fabsf(v); break;
                case 5: v = (i % 37 == 0) ? 50.0f : 0.1f*v; break;
                case 6: v = 0.75f; break;
                default: break;
            }
            row[i] = v;
        }
    }
}

// Per-element bound of the one-scale types, from each block's max/min only: the step is the scale the
// algorithm must choose (amax/127, amax/8, amax/16, range/15, range/31); `frac` steps of error are allowed
// (0.5 when nothing clamps, 1 where the level opposite the max sign is cut off), plus the fp16 rounding
// of the stored scale and min (relative 2^-11, absolute 2^-25 for subnormals), doubled for slack.
static void check_legacy_bounds(enum ggml_type t, const float * x, const float * y, int64_t n) {
    int bad = 0;
    for (int64_t b = 0; b < n/32; ++b) {
        const float * xb = x + 32*b;
        const float * yb = y + 32*b;
        float amax = 0, mn = xb[0], mx = xb[0];
        for (int i = 0; i < 32; ++i) {
            amax = fmaxf(amax, fabsf(xb[i]));
            mn = fminf(mn, xb[i]);
            mx = fmaxf(mx, xb[i]);
        }
        double step, frac, nlev, extra = 0;
        switch (t) {
            case GGML_TYPE_Q8_0: step = amax/127.0; frac = 0.5; nlev = 127; break;
            case GGML_TYPE_Q4_0: step = amax/8.0;   frac = 1.0; nlev = 8;   break;
            case GGML_TYPE_Q5_0: step = amax/16.0;  frac = 1.0; nlev = 16;  break;
            case GGML_TYPE_Q4_1: step = (mx - mn)/15.0; frac = 0.5; nlev = 15; extra = fabs(mn)*ldexp(1, -10) + ldexp(1, -24); break;
            case GGML_TYPE_Q5_1: step = (mx - mn)/31.0; frac = 0.5; nlev = 31; extra = fabs(mn)*ldexp(1, -10) + ldexp(1, -24); break;
            default: return;
        }
        const double bound = frac*step*(1 + 1e-5) + nlev*(step*ldexp(1, -10) + ldexp(1, -24)) + extra + 1e-30;
        for (int i = 0; i < 32; ++i) {
            const double err = fabs((double) yb[i] - (double) xb[i]);
            if (!(err <= bound) && bad++ < 3) {
                fprintf(stderr, "%s block %lld elem %d: |%.9g - %.9g| = %.3g > bound %.3g\n", ggml_type_name(t),
                        (long long) b, i, xb[i], yb[i], err, bound);
            }
        }
    }
    TH_CHECK(bad == 0, "%s: %d elements exceed the closed-form error bound", ggml_type_name(t), bad);
}

// llama.cpp's test-quantize-fns: data 0.1 + 2cos(i), 4096 values, error sqrt(sum d^2)/n below
// 0.0075 (2-bit), 0.0040 (3-bit), 0.002 (the others)
static void test_upstream_limits(void) {
    enum { N = 4096 };
    float * x = malloc(N*sizeof(float));
    float * y = malloc(N*sizeof(float));
    for (int i = 0; i < N; ++i) x[i] = 0.1f + 2*cosf((float) i);
    for (size_t k = 0; k < N_QTYPES; ++k) {
        const enum ggml_type t = qtypes[k];
        const size_t sz = ggml_row_size(t, N);
        void * q = malloc(sz);
        TH_CHECK(ggml_quantize_chunk(t, x, q, 0, 1, N, NULL) == sz, "%s quantize", ggml_type_name(t));
        ggml_get_type_traits(t)->to_float(q, y, N);
        double s = 0;
        for (int i = 0; i < N; ++i) s += ((double) y[i] - x[i])*((double) y[i] - x[i]);
        const double err = sqrt(s)/N;
        const double lim = t == GGML_TYPE_Q2_K ? 0.0075 : t == GGML_TYPE_Q3_K ? 0.0040 : 0.002;
        TH_CHECK(err < lim, "%s: total error %.6f >= %.4f", ggml_type_name(t), err, lim);
        // the activation formats too, through their reference quantizers
        free(q);
    }
    {
        block_q8_K qk[N/QK_K];
        quantize_row_q8_K_ref(x, qk, N);
        dequantize_row_q8_K(qk, y, N);
        double s = 0;
        for (int i = 0; i < N; ++i) s += ((double) y[i] - x[i])*((double) y[i] - x[i]);
        TH_CHECK(sqrt(s)/N < 0.002, "q8_K total error %.6f", sqrt(s)/N);
    }
    free(x);
    free(y);
}

static double nmse(const float * x, const float * y, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; ++i) {
        num += ((double) y[i] - x[i])*((double) y[i] - x[i]);
        den += (double) x[i]*x[i];
    }
    return den > 0 ? num/den : num;
}

static void test_roundtrips(void) {
    const int64_t n = (int64_t) NROWS*NPR;
    float * x = malloc((size_t) n*sizeof(float));
    float * y = malloc((size_t) n*sizeof(float));
    float * z = calloc((size_t) n, sizeof(float));
    fill_rows(x);
    for (size_t k = 0; k < N_QTYPES; ++k) {
        const enum ggml_type t = qtypes[k];
        roundtrip(t, x, y, NROWS, NULL);
        check_legacy_bounds(t, x, y, n);
        // Gaussian rows (sigma 1): normalised MSE at most 1.5x that of a uniform grid of 2^b levels over
        // [-3, 3] (step^2/12), b = bits per quant without the scales; adaptive scales can only do better
        const int qbits[] = { 4, 4, 5, 5, 8, 2, 3, 4, 5, 6, 4, 4 };
        const double bits = 8.0 * (double) ggml_type_size(t) / (double) ggml_blck_size(t);
        double e = 0;
        for (int r = 0; r < NROWS; r += 8) e += nmse(x + r*NPR, y + r*NPR, NPR);
        e /= NROWS/8;
        const double step = 6.0 / (double)(1 << qbits[k]);
        const double lim  = 1.5 * step*step/12.0;
        TH_CHECK(e < lim, "%s: Gaussian NMSE %.3g >= %.3g (%.2f bits/weight)", ggml_type_name(t), e, lim, bits);
        printf("%-7s %.3f bpw  Gaussian NMSE %.3g\n", ggml_type_name(t), bits, e);

        // zeros stay zeros
        float zy[NPR];
        float zx[NPR] = {0};
        roundtrip(t, zx, zy, 1, NULL);
        int nonzero = 0;
        for (int i = 0; i < NPR; ++i) nonzero += zy[i] != 0.0f;
        TH_CHECK(nonzero == 0, "%s: %d zeros dequantize to non-zero", ggml_type_name(t), nonzero);

        // constant rows (kind 6) are reproduced to within 1% (every format can hold one value well)
        double worst = 0;
        for (int r = 6; r < NROWS; r += 8) {
            for (int i = 0; i < NPR; ++i) worst = fmax(worst, fabs(y[r*NPR + i] - 0.75));
        }
        TH_CHECK(worst < 0.0075, "%s: constant 0.75 comes back with error %.3g", ggml_type_name(t), worst);
    }
    (void) z;
    free(z);

    // activation formats: Q8_K stores d as f32, so |err| <= d/2 exactly (+1 ulp of the product)
    {
        block_q8_K * qk = malloc(sizeof(block_q8_K) * (size_t)(n/QK_K));
        quantize_row_q8_K_ref(x, qk, n);
        dequantize_row_q8_K(qk, y, n);
        int bad = 0, bad_sums = 0;
        for (int64_t b = 0; b < n/QK_K; ++b) {
            float amax = 0;
            for (int i = 0; i < QK_K; ++i) amax = fmaxf(amax, fabsf(x[b*QK_K + i]));
            const double d = amax/127.0;
            for (int i = 0; i < QK_K; ++i) {
                const double err = fabs((double) y[b*QK_K + i] - x[b*QK_K + i]);
                if (!(err <= 0.5*d*(1 + 1e-6) + fabs(x[b*QK_K + i])*1e-7)) bad++;
            }
            for (int g = 0; g < QK_K/16; ++g) {
                int s = 0;
                for (int i = 0; i < 16; ++i) s += qk[b].qs[16*g + i];
                bad_sums += s != qk[b].bsums[g];
            }
        }
        TH_CHECK(bad == 0, "q8_K: %d elements exceed d/2", bad);
        TH_CHECK(bad_sums == 0, "q8_K: %d wrong bsums", bad_sums);
        free(qk);
    }
    {
        block_q8_1 * q1 = malloc(sizeof(block_q8_1) * (size_t)(n/QK8_1));
        quantize_row_q8_1_ref(x, q1, n);
        dequantize_row_q8_1(q1, y, n);
        check_legacy_bounds(GGML_TYPE_Q8_0, x, y, n);   // same grid as Q8_0
        int bad = 0;
        for (int64_t b = 0; b < n/QK8_1; ++b) {
            int s = 0;
            for (int i = 0; i < QK8_1; ++i) s += q1[b].qs[i];
            const double want = (double) s * ggml_fp16_to_fp32(q1[b].d);
            const double got  = ggml_fp16_to_fp32(q1[b].s);
            if (fabs(want) > 65000.0) {
                continue;   // d*sum overflows the half (as in ggml); not a bound we can state
            }
            // d was rounded to a half after s was computed: relative 2^-11 (absolute 2^-25 when subnormal)
            if (!(fabs(got - want) <= fabs(want)*ldexp(1, -10) + fabs((double) s)*ldexp(1, -25) + ldexp(1, -24)) && bad++ < 3) {
                fprintf(stderr, "q8_1 block %lld: s %.9g, d*sum %.9g (sum %d)\n", (long long) b, got, want, s);
            }
        }
        TH_CHECK(bad == 0, "q8_1: %d blocks with s != d*sum(q)", bad);
        free(q1);
    }
    free(x);
    free(y);
}

// With an importance matrix the quantizers minimise the importance-weighted error, so on rows where a few
// columns matter much more their weighted error must beat the unweighted path's; uniform importance must
// stay close to the unweighted result.
static void test_imatrix(void) {
    const int64_t n = (int64_t) NROWS*NPR;
    float * x  = malloc((size_t) n*sizeof(float));
    float * y0 = malloc((size_t) n*sizeof(float));
    float * y1 = malloc((size_t) n*sizeof(float));
    float imat[NPR], ones[NPR];
    for (int i = 0; i < NPR; ++i) {
        imat[i] = (i % 16 == 3) ? 50.0f : 0.1f + (float) rng_uniform();
        ones[i] = 1.0f;
    }
    for (int64_t i = 0; i < n; ++i) x[i] = rng_normal();
    for (size_t k = 0; k < N_QTYPES; ++k) {
        const enum ggml_type t = qtypes[k];
        if (t == GGML_TYPE_Q8_0) continue;  // no imatrix variant
        roundtrip(t, x, y0, NROWS, NULL);
        roundtrip(t, x, y1, NROWS, imat);
        double w0 = 0, w1 = 0;
        for (int64_t i = 0; i < n; ++i) {
            const double w = imat[i % NPR];
            w0 += w*((double) y0[i] - x[i])*((double) y0[i] - x[i]);
            w1 += w*((double) y1[i] - x[i])*((double) y1[i] - x[i]);
        }
        TH_CHECK(w1 < w0, "%s: importance-weighted error with imatrix %.4g not below %.4g without",
                 ggml_type_name(t), w1, w0);
        roundtrip(t, x, y1, NROWS, ones);
        const double e0 = nmse(x, y0, n), e1 = nmse(x, y1, n);
        TH_CHECK(e1 < 1.25*e0, "%s: uniform imatrix NMSE %.4g vs %.4g without", ggml_type_name(t), e1, e0);
        printf("%-7s imatrix: weighted error %.4g -> %.4g, uniform-importance NMSE %.4g (plain %.4g)\n",
               ggml_type_name(t), w0, w1, e1, e0);
    }
    free(x);
    free(y0);
    free(y1);
}

// ---- ggml_quantize_chunk arguments and row validation -----------------------------------------------------------

static void test_chunk_and_validate(void) {
    float x[4*NPR];
    for (int i = 0; i < 4*NPR; ++i) x[i] = rng_normal();
    for (size_t k = 0; k < N_QTYPES; ++k) {
        const enum ggml_type t = qtypes[k];
        const size_t rs = ggml_row_size(t, NPR);
        uint8_t * all  = calloc(4, rs);
        uint8_t * part = calloc(4, rs);
        TH_CHECK(ggml_quantize_chunk(t, x, all, 0, 4, NPR, NULL) == 4*rs, "%s: 4 rows", ggml_type_name(t));
        // rows 2..3 through start: written at their own offset, the rest untouched
        TH_CHECK(ggml_quantize_chunk(t, x, part, 2*NPR, 2, NPR, NULL) == 2*rs, "%s: 2 rows from start", ggml_type_name(t));
        TH_CHECK(memcmp(part + 2*rs, all + 2*rs, 2*rs) == 0, "%s: rows via start differ", ggml_type_name(t));
        bool untouched = true;
        for (size_t i = 0; i < 2*rs; ++i) untouched &= part[i] == 0;
        TH_CHECK(untouched, "%s: quantize_chunk wrote before start", ggml_type_name(t));
        TH_CHECK(ggml_quants_validate_row(t, all, 4*rs), "%s: valid rows accepted", ggml_type_name(t));
        // a NaN / Inf scale in the last block: the first half of every block layout except Q2_K/Q3_K/Q6_K
        // (scale at the end) is d
        const size_t bs = ggml_type_size(t);
        size_t d_off = 0;
        if (t == GGML_TYPE_Q2_K) d_off = offsetof(block_q2_K, d);
        if (t == GGML_TYPE_Q3_K) d_off = offsetof(block_q3_K, d);
        if (t == GGML_TYPE_Q6_K) d_off = offsetof(block_q6_K, d);
        const uint16_t bad_vals[2] = { 0x7e00, 0xfc00 };
        for (int v = 0; v < 2; ++v) {
            memcpy(part, all, 4*rs);
            memcpy(part + 4*rs - bs + d_off, &bad_vals[v], 2);
            TH_CHECK(!ggml_quants_validate_row(t, part, 4*rs), "%s: %s scale rejected", ggml_type_name(t), v ? "inf" : "nan");
        }
        free(all);
        free(part);
    }
    // F32/F16/BF16 element checks
    float f[4] = { 1, 2, NAN, 4 };
    TH_CHECK(!ggml_quants_validate_row(GGML_TYPE_F32, f, sizeof(f)), "f32 NaN rejected");
    f[2] = 3;
    TH_CHECK(ggml_quants_validate_row(GGML_TYPE_F32, f, sizeof(f)), "f32 finite accepted");
    uint16_t h[3] = { 0x3c00, 0x7c00, 0 };
    TH_CHECK(!ggml_quants_validate_row(GGML_TYPE_F16, h, sizeof(h)), "f16 inf rejected");
    uint16_t bf[3] = { 0x3f80, 0x7fc0, 0 };
    TH_CHECK(!ggml_quants_validate_row(GGML_TYPE_BF16, bf, sizeof(bf)), "bf16 NaN rejected");

    // bad arguments: logged and answered with 0, nothing written
    uint8_t buf[4096] = {0};
    TH_CHECK(ggml_quantize_chunk(GGML_TYPE_Q4_0, x, buf, 0, 1, 48, NULL) == 0, "n_per_row not a block multiple");
    TH_CHECK(ggml_quantize_chunk(GGML_TYPE_Q4_0, x, buf, 7, 1, 64, NULL) == 0, "start not a row multiple");
    TH_CHECK(ggml_quantize_chunk(GGML_TYPE_Q4_K, x, buf, 0, 1, 128, NULL) == 0, "Q4_K row of 128");
    TH_CHECK(ggml_quantize_chunk(GGML_TYPE_IQ2_XXS, x, buf, 0, 1, 256, NULL) == 0, "IQ2_XXS needs an imatrix");
    TH_CHECK(ggml_quantize_chunk(GGML_TYPE_IQ3_S, x, buf, 0, 1, 256, NULL) == 0, "IQ3_S not supported");
    TH_CHECK(ggml_quantize_chunk(GGML_TYPE_COUNT, x, buf, 0, 1, 256, NULL) == 0, "invalid type");
    TH_CHECK(ggml_quantize_requires_imatrix(GGML_TYPE_IQ2_XS) && !ggml_quantize_requires_imatrix(GGML_TYPE_Q4_K),
             "requires_imatrix");
    // float types through quantize_chunk
    TH_CHECK(ggml_quantize_chunk(GGML_TYPE_F16, x, buf, NPR, 1, NPR, NULL) == NPR*2, "f16 chunk");
    const ggml_fp16_t * hb = (const ggml_fp16_t *) buf;
    TH_CHECK(hb[NPR] == ggml_fp32_to_fp16(x[NPR]) && hb[2*NPR - 1] == ggml_fp32_to_fp16(x[2*NPR - 1]), "f16 chunk at start");
}

// Non-finite or huge input is garbage in, garbage out, but must not trap or hit undefined behaviour
// (the sanitizer build turns that into a failure): every type quantizes such rows and dequantizes them.
static void test_nonfinite_input(void) {
    float x[2*NPR];
    float y[2*NPR];
    for (int i = 0; i < 2*NPR; ++i) {
        const float specials[6] = { NAN, INFINITY, -INFINITY, 3e38f, -1e30f, 0.0f };
        x[i] = (i % 7 == 0) ? specials[(i/7) % 6] : rng_normal();
    }
    for (int i = NPR; i < 2*NPR; ++i) x[i] = NAN;   // a row of NaN only
    for (size_t k = 0; k < N_QTYPES; ++k) {
        const enum ggml_type t = qtypes[k];
        const size_t sz = 2*ggml_row_size(t, NPR);
        void * q = malloc(sz);
        TH_CHECK(ggml_quantize_chunk(t, x, q, 0, 2, NPR, NULL) == sz, "%s: non-finite rows quantized", ggml_type_name(t));
        if (t != GGML_TYPE_Q8_0) {
            float imat[NPR];
            for (int i = 0; i < NPR; ++i) imat[i] = 1.0f;
            TH_CHECK(ggml_quantize_chunk(t, x, q, 0, 2, NPR, imat) == sz, "%s: non-finite rows with imatrix", ggml_type_name(t));
        }
        ggml_get_type_traits(t)->to_float(q, y, 2*NPR);
        free(q);
    }
    block_q8_K qk[2*NPR/QK_K];
    quantize_row_q8_K_ref(x, qk, 2*NPR);
    block_q8_1 q1[2*NPR/QK8_1];
    quantize_row_q8_1_ref(x, q1, 2*NPR);
}

int main(void) {
    test_f16();
    test_bf16();
    test_upstream_limits();
    test_roundtrips();
    test_imatrix();
    test_chunk_and_validate();
    test_nonfinite_input();
    return th_finish();
}
