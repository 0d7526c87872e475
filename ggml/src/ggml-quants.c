// Reference (scalar) quantization and dequantization of ggml's block formats.
//
// The quantizers must produce exactly the bytes llama.cpp's llama-quantize writes for the same F32 input,
// so every floating-point expression here keeps the precision (float, never double) and the operand order
// of ggml's reference algorithm: a different association or a fused multiply-add can change the last bit of
// a scale, which flips the rounding of some quant and therefore a byte of the file. This file is compiled
// with -ffp-contract=off for that reason (see ggml/CMakeLists.txt).
//
// The dequantizers likewise evaluate each element with the same operations as ggml's to_float, so that
// dequantized weights agree bit for bit.

#include "ggml-quants.h"
#include "ggml-impl.h"

#include <float.h>
#include <stddef.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define QMIN(a, b) ((a) < (b) ? (a) : (b))
#define QMAX(a, b) ((a) > (b) ? (a) : (b))

// groups whose largest magnitude is below this are treated as all zero
#define GROUP_MAX_EPS 1e-15f

// ---- small helpers -------------------------------------------------------------------------------------------

// Round to the nearest integer, ties to even, by letting the FPU do the rounding: adding 1.5*2^23 pushes
// the fraction out of the mantissa. Valid for |v| < 2^22; this is ggml's rounding of every K-quant level,
// so roundf (ties away from zero) would not do. Non-finite input gives some value but never traps.
static inline int round_nearest(float v) {
    const float shifted = v + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &shifted, sizeof(bits));
    return (bits & 0x007fffff) - 0x00400000;
}

// float -> int truncation toward zero, clamped to [lo, hi] first so that no input (NaN, huge values)
// reaches an undefined conversion. For values inside the range this is exactly the C cast.
static inline int trunc_clamped(float v, int lo, int hi) {
    if (!(v > (float) lo)) {
        return lo;
    }
    if (!(v < (float) hi)) {
        return hi;
    }
    return (int) v;
}

// roundf, then clamp to the int8 range (NaN -> 0)
static inline int8_t round_to_i8(float v) {
    const float r = roundf(v);
    if (!(r == r)) {
        return 0;
    }
    if (r >= 127.0f) {
        return 127;
    }
    if (r <= -128.0f) {
        return -128;
    }
    return (int8_t) r;
}

static inline float half_to_f32(ggml_half h) { return GGML_FP16_TO_FP32(h); }
static inline ggml_half f32_to_half(float f) { return GGML_FP32_TO_FP16(f); }

// ---- Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q8_0 / Q8_1: one scale per 32 elements -------------------------------------

// The symmetric types take the scale from the element of largest magnitude *with its sign*, so that this
// element lands exactly on the extreme level -2^(b-1) (which has no positive counterpart).
static float signed_absmax(const float * x, int n) {
    float amax = 0.0f;
    float max  = 0.0f;
    for (int j = 0; j < n; j++) {
        const float a = fabsf(x[j]);
        if (amax < a) {
            amax = a;
            max  = x[j];
        }
    }
    return max;
}

void quantize_row_q4_0_ref(const float * GGML_RESTRICT x, block_q4_0 * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK4_0;
    for (int64_t i = 0; i < nb; i++) {
        const float * xb  = x + i*QK4_0;
        const float   d   = signed_absmax(xb, QK4_0) / -8;
        const float   id  = d ? 1.0f/d : 0.0f;
        y[i].d = f32_to_half(d);
        for (int j = 0; j < QK4_0/2; ++j) {
            const int lo = trunc_clamped(xb[j]*id           + 8.5f, 0, 15);
            const int hi = trunc_clamped(xb[j + QK4_0/2]*id + 8.5f, 0, 15);
            y[i].qs[j] = (uint8_t)(lo | (hi << 4));
        }
    }
}

static void min_max(const float * x, int n, float * pmin, float * pmax) {
    float mn =  FLT_MAX;
    float mx = -FLT_MAX;
    for (int j = 0; j < n; j++) {
        if (x[j] < mn) mn = x[j];
        if (x[j] > mx) mx = x[j];
    }
    *pmin = mn;
    *pmax = mx;
}

void quantize_row_q4_1_ref(const float * GGML_RESTRICT x, block_q4_1 * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK4_1;
    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK4_1;
        float mn, mx;
        min_max(xb, QK4_1, &mn, &mx);
        const float d  = (mx - mn) / 15;
        const float id = d ? 1.0f/d : 0.0f;
        y[i].d = f32_to_half(d);
        y[i].m = f32_to_half(mn);
        for (int j = 0; j < QK4_1/2; ++j) {
            const int lo = trunc_clamped((xb[j]           - mn)*id + 0.5f, 0, 15);
            const int hi = trunc_clamped((xb[j + QK4_1/2] - mn)*id + 0.5f, 0, 15);
            y[i].qs[j] = (uint8_t)(lo | (hi << 4));
        }
    }
}

// 5-bit quants: low nibbles like Q4, the fifth bit of element j in bit j of qh
static void pack_q5(const uint8_t * q, uint8_t * qs, uint8_t qh_bytes[4]) {
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        qs[j] = (uint8_t)((q[j] & 0x0F) | ((q[j + 16] & 0x0F) << 4));
        qh |= (uint32_t)((q[j]      >> 4) & 1) << j;
        qh |= (uint32_t)((q[j + 16] >> 4) & 1) << (j + 16);
    }
    // the bit field is stored little endian, as ggml writes it on every host it supports
    qh_bytes[0] = (uint8_t)(qh);
    qh_bytes[1] = (uint8_t)(qh >> 8);
    qh_bytes[2] = (uint8_t)(qh >> 16);
    qh_bytes[3] = (uint8_t)(qh >> 24);
}

static uint32_t load_qh(const uint8_t qh[4]) {
    return (uint32_t) qh[0] | ((uint32_t) qh[1] << 8) | ((uint32_t) qh[2] << 16) | ((uint32_t) qh[3] << 24);
}

void quantize_row_q5_0_ref(const float * GGML_RESTRICT x, block_q5_0 * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK5_0;
    uint8_t q[QK5_0];
    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK5_0;
        const float   d  = signed_absmax(xb, QK5_0) / -16;
        const float   id = d ? 1.0f/d : 0.0f;
        y[i].d = f32_to_half(d);
        for (int j = 0; j < QK5_0; ++j) {
            q[j] = (uint8_t) trunc_clamped(xb[j]*id + 16.5f, 0, 31);
        }
        pack_q5(q, y[i].qs, y[i].qh);
    }
}

void quantize_row_q5_1_ref(const float * GGML_RESTRICT x, block_q5_1 * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK5_1;
    uint8_t q[QK5_1];
    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK5_1;
        float mn, mx;
        min_max(xb, QK5_1, &mn, &mx);
        const float d  = (mx - mn) / 31;
        const float id = d ? 1.0f/d : 0.0f;
        y[i].d = f32_to_half(d);
        y[i].m = f32_to_half(mn);
        for (int j = 0; j < QK5_1; ++j) {
            // ggml has no upper clamp here; (x - min)*id <= 31 + rounding, so the bits above 5 are dropped
            q[j] = (uint8_t) trunc_clamped((xb[j] - mn)*id + 0.5f, 0, 255);
        }
        pack_q5(q, y[i].qs, y[i].qh);
    }
}

static float absmax(const float * x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; j++) {
        amax = QMAX(amax, fabsf(x[j]));
    }
    return amax;
}

void quantize_row_q8_0_ref(const float * GGML_RESTRICT x, block_q8_0 * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK8_0;
    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK8_0;
        const float   d  = absmax(xb, QK8_0) / 127;
        const float   id = d ? 1.0f/d : 0.0f;
        y[i].d = f32_to_half(d);
        for (int j = 0; j < QK8_0; ++j) {
            y[i].qs[j] = round_to_i8(xb[j]*id);
        }
    }
}

void quantize_row_q8_1_ref(const float * GGML_RESTRICT x, block_q8_1 * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK8_1;
    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK8_1;
        const float   d  = absmax(xb, QK8_1) / 127;
        const float   id = d ? 1.0f/d : 0.0f;
        y[i].d = f32_to_half(d);
        int sum = 0;
        for (int j = 0; j < QK8_1; ++j) {
            y[i].qs[j] = round_to_i8(xb[j]*id);
            sum += y[i].qs[j];
        }
        // s caches d*sum(q) so the Q4_1/Q5_1 dot products can apply the min in one multiply
        y[i].s = f32_to_half((float) sum * d);
    }
}

void dequantize_row_q4_0(const block_q4_0 * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK4_0;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_f32(x[i].d);
        for (int j = 0; j < QK4_0/2; ++j) {
            y[i*QK4_0 + j          ] = (float)((x[i].qs[j] & 0x0F) - 8) * d;
            y[i*QK4_0 + j + QK4_0/2] = (float)((x[i].qs[j] >>   4) - 8) * d;
        }
    }
}

void dequantize_row_q4_1(const block_q4_1 * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK4_1;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_f32(x[i].d);
        const float m = half_to_f32(x[i].m);
        for (int j = 0; j < QK4_1/2; ++j) {
            y[i*QK4_1 + j          ] = (float)(x[i].qs[j] & 0x0F) * d + m;
            y[i*QK4_1 + j + QK4_1/2] = (float)(x[i].qs[j] >>   4) * d + m;
        }
    }
}

void dequantize_row_q5_0(const block_q5_0 * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK5_0;
    for (int64_t i = 0; i < nb; i++) {
        const float    d  = half_to_f32(x[i].d);
        const uint32_t qh = load_qh(x[i].qh);
        for (int j = 0; j < QK5_0/2; ++j) {
            const int lo = (int)((x[i].qs[j] & 0x0F) | (((qh >> j)        & 1u) << 4)) - 16;
            const int hi = (int)((x[i].qs[j] >>   4) | (((qh >> (j + 16)) & 1u) << 4)) - 16;
            y[i*QK5_0 + j          ] = (float) lo * d;
            y[i*QK5_0 + j + QK5_0/2] = (float) hi * d;
        }
    }
}

void dequantize_row_q5_1(const block_q5_1 * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK5_1;
    for (int64_t i = 0; i < nb; i++) {
        const float    d  = half_to_f32(x[i].d);
        const float    m  = half_to_f32(x[i].m);
        const uint32_t qh = load_qh(x[i].qh);
        for (int j = 0; j < QK5_1/2; ++j) {
            const int lo = (int)((x[i].qs[j] & 0x0F) | (((qh >> j)        & 1u) << 4));
            const int hi = (int)((x[i].qs[j] >>   4) | (((qh >> (j + 16)) & 1u) << 4));
            y[i*QK5_1 + j          ] = (float) lo * d + m;
            y[i*QK5_1 + j + QK5_1/2] = (float) hi * d + m;
        }
    }
}

void dequantize_row_q8_0(const block_q8_0 * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK8_0;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_f32(x[i].d);
        for (int j = 0; j < QK8_0; ++j) {
            y[i*QK8_0 + j] = (float) x[i].qs[j] * d;
        }
    }
}

void dequantize_row_q8_1(const block_q8_1 * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK8_1;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_f32(x[i].d);
        for (int j = 0; j < QK8_1; ++j) {
            y[i*QK8_1 + j] = (float) x[i].qs[j] * d;
        }
    }
}


// ---- scale searches shared by the K-quants -------------------------------------------------------------------

// Weight of element i in a symmetric fit: the importance if given, else x^2 (large values matter most).
static inline float sym_weight(const float * qw, int i, float xi) {
    return qw ? qw[i] : xi*xi;
}

// Symmetric fit (ggml's make_qx_quants with rmse_type 1): levels L[i] in [0, 2*nmax) stand for
// L[i] - nmax; returns the scale that minimises the weighted squared error over 19 candidate grids
// spaced 0.1 of a level around the one that maps the largest magnitude onto -nmax.
static float fit_symmetric(int n, int nmax, const float * GGML_RESTRICT x, int8_t * GGML_RESTRICT L,
                           const float * GGML_RESTRICT qw) {
    const float max = signed_absmax(x, n);
    if (fabsf(max) < GROUP_MAX_EPS) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    float iscale = (float)(-nmax) / max;
    float sumlx = 0.0f;
    float suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = QMAX(-nmax, QMIN(nmax - 1, round_nearest(iscale * x[i])));
        L[i] = (int8_t)(l + nmax);
        const float w = sym_weight(qw, i, x[i]);
        sumlx += w*x[i]*(float) l;
        suml2 += w*(float) l*(float) l;
    }
    float scale = suml2 ? sumlx/suml2 : 0.0f;
    float best  = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) {
            continue;
        }
        iscale = -((float) nmax + 0.1f*(float) is) / max;
        sumlx = 0.0f;
        suml2 = 0.0f;
        for (int i = 0; i < n; ++i) {
            const int l = QMAX(-nmax, QMIN(nmax - 1, round_nearest(iscale * x[i])));
            const float w = sym_weight(qw, i, x[i]);
            sumlx += w*x[i]*(float) l;
            suml2 += w*(float) l*(float) l;
        }
        // compare sumlx^2/suml2 (the error reduction) without dividing
        if (suml2 > 0 && sumlx*sumlx > best*suml2) {
            for (int i = 0; i < n; ++i) {
                const int l = QMAX(-nmax, QMIN(nmax - 1, round_nearest(iscale * x[i])));
                L[i] = (int8_t)(l + nmax);
            }
            scale = sumlx/suml2;
            best  = scale*sumlx;
        }
    }
    return scale;
}

// Symmetric 3-bit fit (ggml's make_q3_quants with do_rmse): start from the grid of the largest magnitude,
// then move single levels while that improves the x^2-weighted fit (up to 5 sweeps).
static float fit_q3(int n, int nmax, const float * GGML_RESTRICT x, int8_t * GGML_RESTRICT L) {
    const float max = signed_absmax(x, n);
    if (fabsf(max) < GROUP_MAX_EPS) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    const float iscale = (float)(-nmax) / max;
    float sumlx = 0.0f;
    float suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = QMAX(-nmax, QMIN(nmax - 1, round_nearest(iscale * x[i])));
        L[i] = (int8_t) l;
        const float w = x[i]*x[i];
        sumlx += w*x[i]*(float) l;
        suml2 += w*(float) l*(float) l;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i]*x[i];
            float slx = sumlx - w*x[i]*(float) L[i];
            if (slx > 0) {
                float sl2 = suml2 - w*(float) L[i]*(float) L[i];
                int new_l = round_nearest(x[i] * sl2 / slx);
                new_l = QMAX(-nmax, QMIN(nmax - 1, new_l));
                if (new_l != L[i]) {
                    slx += w*x[i]*(float) new_l;
                    sl2 += w*(float) new_l*(float) new_l;
                    if (sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2) {
                        L[i]  = (int8_t) new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) {
            break;
        }
    }
    for (int i = 0; i < n; ++i) {
        L[i] = (int8_t)(L[i] + nmax);
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Affine fit x ~ scale*L - min with L in [0, nmax] (ggml's make_qkx2_quants). Tries nstep+1 grids whose
// level count is stretched by rmin + rdelta*is and keeps the weighted least-squares (scale, min) of the
// best one. Note that an accepted candidate's min becomes the origin of the following grids, as in ggml.
// use_mad weighs absolute instead of squared errors; clamp_first (make_qkx3) clamps a grid level before
// rounding it, so a min near max cannot overflow the rounding. Returns the scale; *neg_min receives -min (>= 0).
static float fit_affine(int n, int nmax, const float * GGML_RESTRICT x, const float * GGML_RESTRICT w,
                        uint8_t * GGML_RESTRICT L, float * GGML_RESTRICT neg_min, uint8_t * GGML_RESTRICT Laux,
                        float rmin, float rdelta, int nstep, bool use_mad, bool clamp_first) {
    float mn = x[0];
    float mx = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < mn) mn = x[i];
        if (x[i] > mx) mx = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (mn > 0) {
        mn = 0;
    }
    if (mx == mn) {
        memset(L, 0, (size_t) n);
        *neg_min = -mn;
        return 0.0f;
    }
    float iscale = (float) nmax/(mx - mn);
    float scale  = 1/iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        const int l = round_nearest(iscale*(x[i] - mn));
        L[i] = (uint8_t) QMAX(0, QMIN(nmax, l));
        float diff = scale * (float) L[i] + mn - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        best_error += w[i] * diff;
    }
    if (nstep < 1) {
        *neg_min = -mn;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta*(float) is + (float) nmax)/(mx - mn);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const float v = iscale*(x[i] - mn);
            int l;
            if (clamp_first) {
                l = v > 0 ? round_nearest(QMIN(v, (float) nmax)) : 0;
            } else {
                l = QMAX(0, QMIN(nmax, round_nearest(v)));
            }
            Laux[i] = (uint8_t) l;
            sum_l  += w[i]*(float) l;
            sum_l2 += w[i]*(float) l*(float) l;
            sum_xl += w[i]*(float) l*x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l)/D;
            float this_min   = (sum_l2 * sum_x - sum_l * sum_xl)/D;
            if (this_min > 0) {
                this_min   = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * (float) Laux[i] + this_min - x[i];
                diff = use_mad ? fabsf(diff) : diff * diff;
                cur_error += w[i] * diff;
            }
            if (cur_error < best_error) {
                memcpy(L, Laux, (size_t) n);
                best_error = cur_error;
                scale = this_scale;
                mn    = this_min;
            }
        }
    }
    *neg_min = -mn;
    return scale;
}

// Q4_K / Q5_K keep 8 pairs of 6-bit (scale, min) in 12 bytes: pairs 0..3 in the low 6 bits of bytes 0..3
// (scale) and 4..7 (min); pairs 4..7 as nibbles in bytes 8..11 with their top 2 bits in the spare high
// bits of bytes 0..7.
static void put_scale_min_k4(int j, uint8_t ls, uint8_t lm, uint8_t * GGML_RESTRICT s) {
    if (j < 4) {
        s[j]     = ls;
        s[j + 4] = lm;
    } else {
        s[j + 4]  = (uint8_t)((ls & 0xF) | ((lm & 0xF) << 4));
        s[j - 4] |= (uint8_t)((ls >> 4) << 6);
        s[j]     |= (uint8_t)((lm >> 4) << 6);
    }
}

static void get_scale_min_k4(int j, const uint8_t * GGML_RESTRICT s, uint8_t * GGML_RESTRICT d,
                             uint8_t * GGML_RESTRICT m) {
    if (j < 4) {
        *d = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *d = (uint8_t)((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        *m = (uint8_t)((s[j + 4] >>  4) | ((s[j]     >> 6) << 4));
    }
}

// 2-bit levels of 256 elements: byte l of each 32-byte quarter holds elements l, l+32, l+64, l+96 of its
// 128-element half
static void pack_2bit_256(const uint8_t * GGML_RESTRICT L, uint8_t * GGML_RESTRICT qs) {
    for (int j = 0; j < QK_K; j += 128) {
        for (int l = 0; l < 32; ++l) {
            qs[j/4 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
        }
    }
}

// ---- Q2_K ------------------------------------------------------------------------------------------------------

// After the scales are rounded to 4 bits, re-pick every level against the scale/min that will actually
// be stored (groups whose stored scale is 0 keep the fit's levels).
static void q2_K_requantize(const float * GGML_RESTRICT x, const block_q2_K * GGML_RESTRICT b, uint8_t * GGML_RESTRICT L) {
    for (int j = 0; j < QK_K/16; ++j) {
        const float d = half_to_f32(b->d) * (float)(b->scales[j] & 0xF);
        if (!d) {
            continue;
        }
        const float dm = half_to_f32(b->dmin) * (float)(b->scales[j] >> 4);
        for (int ii = 0; ii < 16; ++ii) {
            const int l = round_nearest((x[16*j + ii] + dm)/d);
            L[16*j + ii] = (uint8_t) QMAX(0, QMIN(3, l));
        }
    }
}

void quantize_row_q2_K_ref(const float * GGML_RESTRICT x, block_q2_K * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    uint8_t Laux[16];
    float   weights[16];
    float   mins[QK_K/16];
    float   scales[QK_K/16];

    for (int64_t i = 0; i < nb; i++, x += QK_K) {
        float max_scale = 0;   // scales are >= 0 since the min is subtracted
        float max_min   = 0;
        for (int j = 0; j < QK_K/16; ++j) {
            for (int l = 0; l < 16; ++l) {
                weights[l] = fabsf(x[16*j + l]);
            }
            scales[j] = fit_affine(16, 3, x + 16*j, weights, L + 16*j, &mins[j], Laux, -0.5f, 0.1f, 15, true, false);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j]   > max_min)   max_min   = mins[j];
        }

        if (max_scale > 0) {
            const float iscale = 15.f/max_scale;
            for (int j = 0; j < QK_K/16; ++j) {
                y[i].scales[j] = (uint8_t) round_nearest(iscale*scales[j]);
            }
            y[i].d = f32_to_half(max_scale/15.f);
        } else {
            memset(y[i].scales, 0, sizeof(y[i].scales));
            y[i].d = f32_to_half(0.f);
        }
        if (max_min > 0) {
            const float iscale = 15.f/max_min;
            for (int j = 0; j < QK_K/16; ++j) {
                y[i].scales[j] |= (uint8_t)((unsigned) round_nearest(iscale*mins[j]) << 4);
            }
            y[i].dmin = f32_to_half(max_min/15.f);
        } else {
            y[i].dmin = f32_to_half(0.f);
        }
        q2_K_requantize(x, &y[i], L);
        pack_2bit_256(L, y[i].qs);
    }
}

void dequantize_row_q2_K(const block_q2_K * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d   = half_to_f32(x[i].d);
        const float min = half_to_f32(x[i].dmin);
        // group g of 16 elements: half g/8 of the block, 2-bit field (g%8)/2 of bytes 32*(g/8) + 16*(g%2) ..
        for (int g = 0; g < QK_K/16; ++g) {
            const uint8_t   sc    = x[i].scales[g];
            const float     dl    = d   * (float)(sc & 0xF);
            const float     ml    = min * (float)(sc >> 4);
            const uint8_t * q     = x[i].qs + 32*(g/8) + 16*(g%2);
            const int       shift = 2*((g%8)/2);
            for (int l = 0; l < 16; ++l) {
                y[i*QK_K + 16*g + l] = dl * (float)((q[l] >> shift) & 3) - ml;
            }
        }
    }
}

// ---- Q3_K ------------------------------------------------------------------------------------------------------

// 16 6-bit scales (stored with +32 bias): low nibbles of scales 0..7 / 8..15 in the low / high nibble of
// bytes 0..7, the top 2 bits of scale j in bits 2*(j/4) of byte 8 + j%4
static int q3_K_get_scale(const uint8_t * s, int j) {
    const int lo = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
    const int hi = (s[8 + j%4] >> (2*(j/4))) & 3;
    return (lo | (hi << 4)) - 32;
}

static void q3_K_pack(const float * GGML_RESTRICT x, block_q3_K * GGML_RESTRICT b, int8_t * GGML_RESTRICT L) {
    // re-pick the levels against the stored scales (groups with a zero scale keep the fit's levels)
    for (int j = 0; j < QK_K/16; ++j) {
        const float d = half_to_f32(b->d) * (float) q3_K_get_scale(b->scales, j);
        if (!d) {
            continue;
        }
        for (int ii = 0; ii < 16; ++ii) {
            const int l = QMAX(-4, QMIN(3, round_nearest(x[16*j + ii]/d)));
            L[16*j + ii] = (int8_t)(l + 4);
        }
    }
    // high bit of element j goes to bit j/32 of hmask[j%32]; the low 2 bits are packed like Q2_K
    memset(b->hmask, 0, sizeof(b->hmask));
    uint8_t low[QK_K];
    for (int j = 0; j < QK_K; ++j) {
        int l = L[j];
        if (l > 3) {
            b->hmask[j % 32] |= (uint8_t)(1u << (j / 32));
            l -= 4;
        }
        low[j] = (uint8_t) l;
    }
    pack_2bit_256(low, b->qs);
}

void quantize_row_q3_K_ref(const float * GGML_RESTRICT x, block_q3_K * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    int8_t L[QK_K];
    float  scales[QK_K/16];

    for (int64_t i = 0; i < nb; i++, x += QK_K) {
        float max_scale = 0;
        float amax      = 0;
        for (int j = 0; j < QK_K/16; ++j) {
            scales[j] = fit_q3(16, 4, x + 16*j, L + 16*j);
            const float a = fabsf(scales[j]);
            if (a > amax) {
                amax      = a;
                max_scale = scales[j];
            }
        }

        memset(y[i].scales, 0, sizeof(y[i].scales));
        if (max_scale) {
            const float iscale = -32.f/max_scale;
            for (int j = 0; j < QK_K/16; ++j) {
                const int l = QMAX(-32, QMIN(31, round_nearest(iscale*scales[j]))) + 32;
                if (j < 8) {
                    y[i].scales[j] = (uint8_t)(l & 0xF);
                } else {
                    y[i].scales[j - 8] |= (uint8_t)((l & 0xF) << 4);
                }
                y[i].scales[j%4 + 8] |= (uint8_t)((l >> 4) << (2*(j/4)));
            }
            y[i].d = f32_to_half(1/iscale);
        } else {
            y[i].d = f32_to_half(0.f);
        }
        q3_K_pack(x, &y[i], L);
    }
}

void dequantize_row_q3_K(const block_q3_K * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d_all = half_to_f32(x[i].d);
        // same 2-bit layout as Q2_K; the high bit of element e is bit e/32 of hmask[e%32]
        for (int g = 0; g < QK_K/16; ++g) {
            const float     dl    = d_all * (float) q3_K_get_scale(x[i].scales, g);
            const uint8_t * q     = x[i].qs + 32*(g/8) + 16*(g%2);
            const uint8_t * hm    = x[i].hmask + 16*(g%2);
            const int       shift = 2*((g%8)/2);
            const int       hbit  = g/2;
            for (int l = 0; l < 16; ++l) {
                const int v = ((q[l] >> shift) & 3) - (((hm[l] >> hbit) & 1) ? 0 : 4);
                y[i*QK_K + 16*g + l] = dl * (float) v;
            }
        }
    }
}

// ---- Q4_K / Q5_K -----------------------------------------------------------------------------------------------

// The 8 sub-block fits of the reference path: weights av_x + |x| (av_x = rms of the sub-block).
static void qk_fit_subblocks(const float * GGML_RESTRICT x, int nmax, float rmin, float rdelta, int nstep,
                             uint8_t * GGML_RESTRICT L, float * GGML_RESTRICT scales, float * GGML_RESTRICT mins,
                             float * GGML_RESTRICT max_scale, float * GGML_RESTRICT max_min) {
    uint8_t Laux[32];
    float   weights[32];
    *max_scale = 0;
    *max_min   = 0;
    for (int j = 0; j < QK_K/32; ++j) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) {
            sum_x2 += x[32*j + l] * x[32*j + l];
        }
        const float av_x = sqrtf(sum_x2/32);
        for (int l = 0; l < 32; ++l) {
            weights[l] = av_x + fabsf(x[32*j + l]);
        }
        scales[j] = fit_affine(32, nmax, x + 32*j, weights, L + 32*j, &mins[j], Laux, rmin, rdelta, nstep, false, false);
        if (scales[j] > *max_scale) *max_scale = scales[j];
        if (mins[j]   > *max_min)   *max_min   = mins[j];
    }
}

// Round the 8 (scale, min) pairs to 6 bits against their maxima and store them with d/dmin.
static void qk_store_scales(const float * scales, const float * mins, float max_scale, float max_min,
                            uint8_t * GGML_RESTRICT packed, ggml_half * d, ggml_half * dmin) {
    const float inv_scale = max_scale > 0 ? 63.f/max_scale : 0.f;
    const float inv_min   = max_min   > 0 ? 63.f/max_min   : 0.f;
    for (int j = 0; j < QK_K/32; ++j) {
        // ggml stores the rounded value in a uint8_t before clamping, so keep that truncation
        uint8_t ls = (uint8_t) round_nearest(inv_scale*scales[j]);
        uint8_t lm = (uint8_t) round_nearest(inv_min*mins[j]);
        ls = QMIN(63, ls);
        lm = QMIN(63, lm);
        put_scale_min_k4(j, ls, lm, packed);
    }
    *d    = f32_to_half(max_scale/63.f);
    *dmin = f32_to_half(max_min/63.f);
}

// Re-pick the levels of each 32-group against the stored scale and min.
static void qk_requantize(const float * GGML_RESTRICT x, const uint8_t * packed, ggml_half dh, ggml_half dminh,
                          int nmax, uint8_t * GGML_RESTRICT L) {
    for (int j = 0; j < QK_K/32; ++j) {
        uint8_t sc, m;
        get_scale_min_k4(j, packed, &sc, &m);
        const float d = half_to_f32(dh) * (float) sc;
        if (!d) {
            continue;
        }
        const float dm = half_to_f32(dminh) * (float) m;
        for (int ii = 0; ii < 32; ++ii) {
            const int l = round_nearest((x[32*j + ii] + dm)/d);
            L[32*j + ii] = (uint8_t) QMAX(0, QMIN(nmax, l));
        }
    }
}

// 4-bit levels: each 64-element chunk uses 32 bytes, element l in the low nibble and l+32 in the high one
static void pack_q4_K_levels(const uint8_t * GGML_RESTRICT L, uint8_t * GGML_RESTRICT q) {
    for (int j = 0; j < QK_K; j += 64) {
        for (int l = 0; l < 32; ++l) {
            q[j/2 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 4));
        }
    }
}

// 5-bit levels: low nibbles as Q4_K; the fifth bit of element 64*c + l (+32) is bit 2c (2c+1) of qh[l]
static void pack_q5_K_levels(const uint8_t * GGML_RESTRICT L, uint8_t * GGML_RESTRICT ql, uint8_t * GGML_RESTRICT qh) {
    memset(qh, 0, QK_K/8);
    for (int c = 0; c < QK_K/64; ++c) {
        for (int l = 0; l < 32; ++l) {
            const int a = L[64*c + l];
            const int b = L[64*c + l + 32];
            qh[l] |= (uint8_t)(((a >> 4) & 1) << (2*c));
            qh[l] |= (uint8_t)(((b >> 4) & 1) << (2*c + 1));
            ql[32*c + l] = (uint8_t)((a & 0xF) | ((b & 0xF) << 4));
        }
    }
}

void quantize_row_q4_K_ref(const float * GGML_RESTRICT x, block_q4_K * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    float   mins[QK_K/32];
    float   scales[QK_K/32];
    for (int64_t i = 0; i < nb; i++, x += QK_K) {
        float max_scale, max_min;
        qk_fit_subblocks(x, 15, -1.f, 0.1f, 20, L, scales, mins, &max_scale, &max_min);
        qk_store_scales(scales, mins, max_scale, max_min, y[i].scales, &y[i].d, &y[i].dmin);
        qk_requantize(x, y[i].scales, y[i].d, y[i].dmin, 15, L);
        pack_q4_K_levels(L, y[i].qs);
    }
}

void quantize_row_q5_K_ref(const float * GGML_RESTRICT x, block_q5_K * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    float   mins[QK_K/32];
    float   scales[QK_K/32];
    for (int64_t i = 0; i < nb; i++, x += QK_K) {
        float max_scale, max_min;
        qk_fit_subblocks(x, 31, -0.5f, 0.1f, 15, L, scales, mins, &max_scale, &max_min);
        qk_store_scales(scales, mins, max_scale, max_min, y[i].scales, &y[i].d, &y[i].dmin);
        qk_requantize(x, y[i].scales, y[i].d, y[i].dmin, 31, L);
        pack_q5_K_levels(L, y[i].qs, y[i].qh);
    }
}

// one Q4_K or Q5_K super-block: 8 sub-blocks of 32, each d*scale*q - dmin*min with 6-bit scale and min;
// q is the 4-bit nibble, plus 16 from bit j of qh in sub-block j for Q5_K (qh NULL for Q4_K)
static void dequantize_block_k4_k5(ggml_half d16, ggml_half dmin16, const uint8_t * GGML_RESTRICT scales,
                                   const uint8_t * GGML_RESTRICT qs, const uint8_t * GGML_RESTRICT qh,
                                   float * GGML_RESTRICT y) {
    const float d   = half_to_f32(d16);
    const float min = half_to_f32(dmin16);
    for (int j = 0; j < QK_K/32; ++j) {
        uint8_t sc, m;
        get_scale_min_k4(j, scales, &sc, &m);
        const float dl = d * (float) sc;
        const float ml = min * (float) m;
        const uint8_t * ql = qs + 32*(j/2);
        const int shift = 4*(j%2);
        for (int l = 0; l < 32; ++l) {
            const int q = ((ql[l] >> shift) & 0xF) + (qh && ((qh[l] >> j) & 1) ? 16 : 0);
            y[32*j + l] = dl * (float) q - ml;
        }
    }
}

void dequantize_row_q4_K(const block_q4_K * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        dequantize_block_k4_k5(x[i].d, x[i].dmin, x[i].scales, x[i].qs, NULL, y + i*QK_K);
    }
}

void dequantize_row_q5_K(const block_q5_K * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        dequantize_block_k4_k5(x[i].d, x[i].dmin, x[i].scales, x[i].qs, x[i].qh, y + i*QK_K);
    }
}

// ---- Q6_K ------------------------------------------------------------------------------------------------------

// Store 8-bit sub-block scales against the largest-magnitude one, re-pick the levels, pack 4+2 bits.
// A block whose sub-block scales are all negligible is stored as zeros.
static void q6_K_finish(const float * GGML_RESTRICT x, const float * scales, float max_scale, float max_abs_scale,
                        int8_t * GGML_RESTRICT L, block_q6_K * GGML_RESTRICT b) {
    if (max_abs_scale < GROUP_MAX_EPS) {
        memset(b, 0, sizeof(*b));
        b->d = f32_to_half(0.f);
        return;
    }
    const float iscale = -128.f/max_scale;
    b->d = f32_to_half(1/iscale);
    for (int ib = 0; ib < QK_K/16; ++ib) {
        b->scales[ib] = (int8_t) QMIN(127, round_nearest(iscale*scales[ib]));
    }
    for (int j = 0; j < QK_K/16; ++j) {
        const float d = half_to_f32(b->d) * (float) b->scales[j];
        if (!d) {
            continue;
        }
        for (int ii = 0; ii < 16; ++ii) {
            const int l = QMAX(-32, QMIN(31, round_nearest(x[16*j + ii]/d)));
            L[16*j + ii] = (int8_t)(l + 32);
        }
    }
    // per 128-element half: ql[l] holds elements l (low) and l+64 (high), ql[l+32] elements l+32 and
    // l+96; qh[l] holds the top 2 bits of l, l+32, l+64, l+96
    for (int h = 0; h < QK_K/128; ++h) {
        const int8_t * Lh = L + 128*h;
        uint8_t * ql = b->ql + 64*h;
        uint8_t * qh = b->qh + 32*h;
        for (int l = 0; l < 32; ++l) {
            ql[l]      = (uint8_t)((Lh[l]      & 0xF) | ((Lh[l + 64] & 0xF) << 4));
            ql[l + 32] = (uint8_t)((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
            qh[l] = (uint8_t)((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) | ((Lh[l + 96] >> 4) << 6));
        }
    }
}

static void q6_K_block(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, block_q6_K * GGML_RESTRICT b) {
    int8_t L[QK_K];
    float  scales[QK_K/16];
    float  max_scale = 0;
    float  max_abs_scale = 0;
    for (int ib = 0; ib < QK_K/16; ++ib) {
        scales[ib] = fit_symmetric(16, 32, x + 16*ib, L + 16*ib, qw ? qw + 16*ib : NULL);
        const float a = fabsf(scales[ib]);
        if (a > max_abs_scale) {
            max_abs_scale = a;
            max_scale     = scales[ib];
        }
    }
    q6_K_finish(x, scales, max_scale, max_abs_scale, L, b);
}

void quantize_row_q6_K_ref(const float * GGML_RESTRICT x, block_q6_K * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        q6_K_block(x + i*QK_K, NULL, &y[i]);
    }
}

void dequantize_row_q6_K(const block_q6_K * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_f32(x[i].d);
        // quarter c (elements 32c..32c+31) of each 128-element half: low nibbles from ql[l + 32*(c%2)]
        // (low half of the byte for c < 2), high 2 bits from bits 2c of qh[l]
        for (int h = 0; h < QK_K/128; ++h) {
            for (int c = 0; c < 4; ++c) {
                const uint8_t * ql    = x[i].ql + 64*h + 32*(c%2);
                const uint8_t * qh    = x[i].qh + 32*h;
                const int       shift = c < 2 ? 0 : 4;
                float * yq = y + i*QK_K + 128*h + 32*c;
                for (int l = 0; l < 32; ++l) {
                    const int q = (((ql[l] >> shift) & 0xF) | (((qh[l] >> (2*c)) & 3) << 4)) - 32;
                    // (d * scale) * q, in this order, as ggml
                    yq[l] = d * (float) x[i].scales[8*h + 2*c + l/16] * (float) q;
                }
            }
        }
    }
}

// ---- Q8_K (activations of the K-quant dot products) ------------------------------------------------------------

void quantize_row_q8_K_ref(const float * GGML_RESTRICT x, block_q8_K * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++, x += QK_K) {
        const float max = signed_absmax(x, QK_K);
        if (!max) {
            y[i].d = 0;
            memset(y[i].qs, 0, sizeof(y[i].qs));
            memset(y[i].bsums, 0, sizeof(y[i].bsums));
            continue;
        }
        // -127 (not -128) keeps every level representable with the sign flipped, which the IQ dot
        // products rely on
        const float iscale = -127.f/max;
        for (int j = 0; j < QK_K; ++j) {
            y[i].qs[j] = (int8_t) QMAX(-128, QMIN(127, round_nearest(iscale*x[j])));
        }
        for (int j = 0; j < QK_K/16; ++j) {
            int sum = 0;
            for (int ii = 0; ii < 16; ++ii) {
                sum += y[i].qs[16*j + ii];
            }
            y[i].bsums[j] = (int16_t) sum;
        }
        y[i].d = 1/iscale;
    }
}

void dequantize_row_q8_K(const block_q8_K * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        for (int j = 0; j < QK_K; ++j) {
            y[i*QK_K + j] = x[i].d * (float) x[i].qs[j];
        }
    }
}

// ---- IQ4_NL / IQ4_XS: 4-bit indices into a non-linear grid ----------------------------------------------------

// Index of the grid value nearest to v (grid sorted ascending; a tie goes to the upper value).
static int nearest_grid_index(const int8_t * grid, int n, float v) {
    if (v <= grid[0]) {
        return 0;
    }
    if (v >= grid[n - 1]) {
        return n - 1;
    }
    int lo = 0;
    int hi = n - 1;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (v < grid[mid]) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return v - grid[hi - 1] < grid[hi] - v ? hi - 1 : hi;
}

// One super-block of IQ4 (ggml's quantize_row_iq4_nl_impl with 16 values): each 32-block gets the
// weighted least-squares scale of the best of 2*ntry+1 grids; with several blocks (IQ4_XS) the block
// scales are then stored as 6-bit multiples of a super-block scale and the indices re-picked.
// ntry < 0 is the fast path of quantize_row_iq4_nl_ref (no search, no re-pick).
static void iq4_superblock(int sb_size, const float * GGML_RESTRICT x, ggml_half * dh, uint8_t * GGML_RESTRICT q4,
                           uint16_t * scales_h, uint8_t * scales_l, const float * GGML_RESTRICT qw, int ntry) {
    const int8_t * values = kvalues_iq4nl;
    const int      bs = 32;
    uint8_t L[QK_K];
    float   scales[QK_K/32];
    float   weight[32];

    float sigma2 = 0;
    for (int j = 0; j < sb_size; ++j) {
        sigma2 += x[j]*x[j];
    }
    sigma2 *= 2.f/(float) sb_size;

    memset(q4, 0, (size_t) sb_size/2);
    *dh = f32_to_half(0.f);

    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < sb_size/bs; ++ib) {
        const float * xb = x + ib*bs;
        uint8_t     * Lb = L + ib*bs;
        for (int j = 0; j < bs; ++j) {
            weight[j] = qw ? qw[ib*bs + j] * sqrtf(sigma2 + xb[j]*xb[j]) : xb[j]*xb[j];
        }
        const float max = signed_absmax(xb, bs);
        if (fabsf(max) < GROUP_MAX_EPS) {
            scales[ib] = 0;
            memset(Lb, 0, (size_t) bs);
            continue;
        }
        float d  = ntry > 0 ? -max/(float) values[0] : max/(float) values[0];
        float id = 1/d;
        float sumqx = 0, sumq2 = 0;
        for (int j = 0; j < bs; ++j) {
            const int   l = nearest_grid_index(values, 16, id*xb[j]);
            const float q = (float) values[l];
            Lb[j] = (uint8_t) l;
            sumqx += weight[j]*q*xb[j];
            sumq2 += weight[j]*q*q;
        }
        d = sumq2 > 0 ? sumqx/sumq2 : 0.f;
        float best = d*sumqx;
        for (int itry = -ntry; itry <= ntry; ++itry) {
            id = (float)(itry + values[0])/max;
            sumqx = sumq2 = 0;
            for (int j = 0; j < bs; ++j) {
                const float q = (float) values[nearest_grid_index(values, 16, id*xb[j])];
                sumqx += weight[j]*q*xb[j];
                sumq2 += weight[j]*q*q;
            }
            if (sumq2 > 0 && sumqx*sumqx > best*sumq2) {
                d    = sumqx/sumq2;
                best = d * sumqx;
            }
        }
        scales[ib] = d;
        if (fabsf(d) > amax_scale) {
            amax_scale = fabsf(d);
            max_scale  = d;
        }
    }

    if (sb_size/bs > 1) {
        // IQ4_XS: 6-bit block scales (bias 32) in scales_l (nibbles) and scales_h (2 bits each)
        const int nb = sb_size/bs;
        memset(scales_h, 0, (size_t)((nb + 7)/8) * sizeof(uint16_t));
        const float d  = -max_scale/32;
        *dh = f32_to_half(d);
        const float id = d ? 1/d : 0.f;
        for (int ib = 0; ib < nb; ++ib) {
            const int   l   = QMAX(-32, QMIN(31, round_nearest(id*scales[ib])));
            const float dl  = d * (float) l;
            const float idl = dl ? 1/dl : 0.f;
            for (int j = 0; j < bs; ++j) {
                L[ib*bs + j] = (uint8_t) nearest_grid_index(values, 16, idl*x[ib*bs + j]);
            }
            const int ls = l + 32;
            if (ib % 2 == 0) {
                scales_l[ib/2] = (uint8_t)(ls & 0xF);
            } else {
                scales_l[ib/2] |= (uint8_t)((ls & 0xF) << 4);
            }
            scales_h[ib/8] |= (uint16_t)((ls >> 4) << (2*(ib%8)));
        }
    } else {
        *dh = f32_to_half(scales[0]);
        if (ntry > 0) {
            const float id = scales[0] ? 1/scales[0] : 0;
            for (int j = 0; j < sb_size; ++j) {
                L[j] = (uint8_t) nearest_grid_index(values, 16, id*x[j]);
            }
        }
    }

    for (int i = 0; i < sb_size/32; ++i) {
        for (int j = 0; j < 16; ++j) {
            q4[16*i + j] = (uint8_t)(L[32*i + j] | (L[32*i + 16 + j] << 4));
        }
    }
}

void quantize_row_iq4_nl_ref(const float * GGML_RESTRICT x, block_iq4_nl * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK4_NL;
    for (int64_t i = 0; i < nb; ++i) {
        iq4_superblock(QK4_NL, x + i*QK4_NL, &y[i].d, y[i].qs, NULL, NULL, NULL, -1);
    }
}

void quantize_row_iq4_xs_ref(const float * GGML_RESTRICT x, block_iq4_xs * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        iq4_superblock(QK_K, x + i*QK_K, &y[i].d, y[i].qs, &y[i].scales_h, y[i].scales_l, NULL, 7);
    }
}

void dequantize_row_iq4_nl(const block_iq4_nl * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK4_NL;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_f32(x[i].d);
        for (int j = 0; j < QK4_NL/2; ++j) {
            y[i*QK4_NL + j           ] = d * (float) kvalues_iq4nl[x[i].qs[j] & 0xf];
            y[i*QK4_NL + j + QK4_NL/2] = d * (float) kvalues_iq4nl[x[i].qs[j] >>  4];
        }
    }
}

void dequantize_row_iq4_xs(const block_iq4_xs * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_f32(x[i].d);
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const int ls = ((x[i].scales_l[ib/2] >> (4*(ib%2))) & 0xf) | (((x[i].scales_h >> (2*ib)) & 3) << 4);
            const float dl = d * (float)(ls - 32);
            const uint8_t * qs = x[i].qs + 16*ib;
            for (int j = 0; j < 16; ++j) {
                y[i*QK_K + 32*ib + j     ] = dl * (float) kvalues_iq4nl[qs[j] & 0xf];
                y[i*QK_K + 32*ib + j + 16] = dl * (float) kvalues_iq4nl[qs[j] >>  4];
            }
        }
    }
}

// ---- importance-matrix paths ---------------------------------------------------------------------------------
// With an importance matrix (one weight per column, from llama-imatrix) llama-quantize takes these
// instead of the reference paths; each weighs element j by qw[j] * sqrt(sigma2 + x[j]^2).

// Affine fit with weights (ggml's make_qkx3_quants; weights == NULL means x^2): fit_affine with the error
// always squared and levels clamped before rounding. n <= 32 (one sub-block).
static float fit_affine_w(int n, int nmax, const float * GGML_RESTRICT x, const float * GGML_RESTRICT weights,
                          uint8_t * GGML_RESTRICT L, float * GGML_RESTRICT neg_min, uint8_t * GGML_RESTRICT Laux,
                          float rmin, float rdelta, int nstep) {
    float w[32];
    GGML_ASSERT(n <= 32);
    for (int i = 0; i < n; ++i) {
        w[i] = weights ? weights[i] : x[i]*x[i];
    }
    return fit_affine(n, nmax, x, w, L, neg_min, Laux, rmin, rdelta, nstep, false, true);
}

// Fit of non-negative values (sub-block scales or mins) to levels [0, nmax] with weights
// (ggml's make_qp_quants): best of 9 grids, then single-level moves.
static float fit_positive(int n, int nmax, const float * GGML_RESTRICT x, uint8_t * GGML_RESTRICT L,
                          const float * GGML_RESTRICT qw) {
    float max = 0;
    for (int i = 0; i < n; ++i) {
        max = QMAX(max, x[i]);
    }
    if (max < GROUP_MAX_EPS) {
        memset(L, 0, (size_t) n);
        return 0.f;
    }
    float iscale = (float) nmax / max;
    for (int i = 0; i < n; ++i) {
        L[i] = (uint8_t) round_nearest(iscale * x[i]);
    }
    const float scale = 1/iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - scale*(float) L[i];
        best_mse += qw[i]*diff*diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) {
            continue;
        }
        const float iscale_is = (0.1f*(float) is + (float) nmax)/max;
        const float scale_is  = 1/iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            const int   l    = QMIN(nmax, round_nearest(iscale_is*x[i]));
            const float diff = x[i] - scale_is*(float) l;
            mse += qw[i]*diff*diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale   = iscale_is;
        }
    }
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = QMIN(nmax, round_nearest(iscale * x[i]));
        L[i] = (uint8_t) l;
        sumlx += qw[i]*x[i]*(float) l;
        suml2 += qw[i]*(float) l*(float) l;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = qw[i];
            float slx = sumlx - w*x[i]*(float) L[i];
            float sl2 = suml2 - w*(float) L[i]*(float) L[i];
            if (slx > 0 && sl2 > 0) {
                const int new_l = QMIN(nmax, round_nearest(x[i] * sl2 / slx));
                if (new_l != L[i]) {
                    slx += w*x[i]*(float) new_l;
                    sl2 += w*(float) new_l*(float) new_l;
                    if (slx*slx*suml2 > sumlx*sumlx*sl2) {
                        L[i]  = (uint8_t) new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) {
            break;
        }
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

static float sum_squares(const float * x, int64_t n) {
    float s = 0;
    for (int64_t j = 0; j < n; ++j) {
        s += x[j]*x[j];
    }
    return s;
}

static void q2_K_block_imatrix(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, block_q2_K * GGML_RESTRICT b) {
    uint8_t L[QK_K];
    uint8_t Laux[16];
    float   mins[QK_K/16];
    float   scales[QK_K/16];
    float   sw[QK_K/16];
    float   weight[16];
    uint8_t Ls[QK_K/16], Lm[QK_K/16];

    const float sigma2 = sum_squares(x, QK_K)/QK_K;
    for (int j = 0; j < QK_K/16; ++j) {
        sw[j] = 0;
        for (int l = 0; l < 16; ++l) {
            weight[l] = qw[16*j + l] * sqrtf(sigma2 + x[16*j + l]*x[16*j + l]);
        }
        for (int l = 0; l < 16; ++l) {
            sw[j] += weight[l];
        }
        scales[j] = fit_affine_w(16, 3, x + 16*j, weight, L + 16*j, &mins[j], Laux, -0.9f, 0.05f, 36);
    }
    const float dm = fit_positive(QK_K/16, 15, scales, Ls, sw);
    const float mm = fit_positive(QK_K/16, 15, mins,   Lm, sw);
    b->d    = f32_to_half(dm);
    b->dmin = f32_to_half(mm);
    for (int j = 0; j < QK_K/16; ++j) {
        b->scales[j] = (uint8_t)(Ls[j] | (Lm[j] << 4));
    }
    q2_K_requantize(x, b, L);
    pack_2bit_256(L, b->qs);
}

static void q3_K_block_imatrix(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, block_q3_K * GGML_RESTRICT b) {
    int8_t L[QK_K];
    float  scales[QK_K/16];
    float  weight[16];
    float  sw[QK_K/16];
    int8_t Ls[QK_K/16];

    const float sigma2 = 2*sum_squares(x, QK_K)/QK_K;
    for (int j = 0; j < QK_K/16; ++j) {
        for (int l = 0; l < 16; ++l) {
            weight[l] = qw[16*j + l] * sqrtf(sigma2 + x[16*j + l]*x[16*j + l]);
        }
        float sumw = 0;
        for (int l = 0; l < 16; ++l) {
            sumw += weight[l];
        }
        sw[j] = sumw;
        scales[j] = fit_symmetric(16, 4, x + 16*j, L + 16*j, weight);
    }
    memset(b->scales, 0, sizeof(b->scales));
    const float d_block = fit_symmetric(QK_K/16, 32, scales, Ls, sw);
    for (int j = 0; j < QK_K/16; ++j) {
        const int l = Ls[j];
        if (j < 8) {
            b->scales[j] = (uint8_t)(l & 0xF);
        } else {
            b->scales[j - 8] |= (uint8_t)((l & 0xF) << 4);
        }
        b->scales[j%4 + 8] |= (uint8_t)((l >> 4) << (2*(j/4)));
    }
    b->d = f32_to_half(d_block);
    q3_K_pack(x, b, L);
}

// Q4_K / Q5_K with an importance matrix: nmax 15 or 31
static void qk_block_imatrix(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, int nmax,
                             uint8_t * GGML_RESTRICT L, uint8_t * packed, ggml_half * dh, ggml_half * dminh) {
    uint8_t Laux[32];
    uint8_t Ls[QK_K/32];
    uint8_t Lm[QK_K/32];
    float   weights[32];
    float   sw[QK_K/32];
    float   mins[QK_K/32];
    float   scales[QK_K/32];

    const float sigma2 = 2*sum_squares(x, QK_K)/QK_K;
    for (int j = 0; j < QK_K/32; ++j) {
        for (int l = 0; l < 32; ++l) {
            weights[l] = qw[32*j + l] * sqrtf(sigma2 + x[32*j + l]*x[32*j + l]);
        }
        float sumw = 0;
        for (int l = 0; l < 32; ++l) {
            sumw += weights[l];
        }
        sw[j] = sumw;
        scales[j] = fit_affine_w(32, nmax, x + 32*j, weights, L + 32*j, &mins[j], Laux, -0.9f, 0.05f, 36);
    }
    const float d_block = fit_positive(QK_K/32, 63, scales, Ls, sw);
    const float m_block = fit_positive(QK_K/32, 63, mins,   Lm, sw);
    for (int j = 0; j < QK_K/32; ++j) {
        put_scale_min_k4(j, QMIN(63, Ls[j]), QMIN(63, Lm[j]), packed);
    }
    *dh    = f32_to_half(d_block);
    *dminh = f32_to_half(m_block);
    qk_requantize(x, packed, *dh, *dminh, nmax, L);
}

// Q4_0 / Q5_0 with an importance matrix: symmetric fit per 32-block (levels 0..2*nmax-1)
static float q_0_block_imatrix(const float * GGML_RESTRICT xb, const float * GGML_RESTRICT qw, float sigma2, int nmax,
                               int8_t * GGML_RESTRICT L) {
    float weight[32];
    for (int j = 0; j < 32; ++j) {
        weight[j] = qw[j] * sqrtf(sigma2 + xb[j]*xb[j]);
    }
    return fit_symmetric(32, nmax, xb, L, weight);
}

// Q4_1 / Q5_1 with an importance matrix: affine fit per 32-block; returns the scale, *neg_min = -min
static float q_1_block_imatrix(const float * GGML_RESTRICT xb, const float * GGML_RESTRICT qw, float sigma2, int nmax,
                               uint8_t * GGML_RESTRICT L, float * neg_min) {
    float   weight[32];
    uint8_t Laux[32];
    for (int j = 0; j < 32; ++j) {
        weight[j] = qw[j] * sqrtf(sigma2 + xb[j]*xb[j]);
    }
    return fit_affine_w(32, nmax, xb, weight, L, neg_min, Laux, -0.9f, 0.05f, 36);
}

// ---- quantize_<t>: whole rows, what llama-quantize calls -----------------------------------------------------------

size_t quantize_q4_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    const size_t row_size = (size_t)(n_per_row/QK4_0) * sizeof(block_q4_0);
    if (!imatrix) {
        quantize_row_q4_0_ref(src, (block_q4_0 *) dst, nrows*n_per_row);
        return (size_t) nrows * row_size;
    }
    for (int64_t r = 0; r < nrows; ++r) {
        const float * x = src + r*n_per_row;
        block_q4_0  * y = (block_q4_0 *)((char *) dst + r*row_size);
        const float sigma2 = sum_squares(x, n_per_row)/(float) n_per_row;
        for (int64_t ib = 0; ib < n_per_row/QK4_0; ++ib) {
            int8_t L[QK4_0];
            const float d = q_0_block_imatrix(x + ib*QK4_0, imatrix + ib*QK4_0, sigma2, 8, L);
            y[ib].d = f32_to_half(d);
            for (int j = 0; j < 16; ++j) {
                y[ib].qs[j] = (uint8_t)(L[j] | (L[j + 16] << 4));
            }
        }
    }
    return (size_t) nrows * row_size;
}

size_t quantize_q4_1(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    const size_t row_size = (size_t)(n_per_row/QK4_1) * sizeof(block_q4_1);
    if (!imatrix) {
        quantize_row_q4_1_ref(src, (block_q4_1 *) dst, nrows*n_per_row);
        return (size_t) nrows * row_size;
    }
    for (int64_t r = 0; r < nrows; ++r) {
        const float * x = src + r*n_per_row;
        block_q4_1  * y = (block_q4_1 *)((char *) dst + r*row_size);
        const float sigma2 = sum_squares(x, n_per_row)/(float) n_per_row;
        for (int64_t ib = 0; ib < n_per_row/QK4_1; ++ib) {
            uint8_t L[QK4_1];
            float   neg_min;
            const float d = q_1_block_imatrix(x + ib*QK4_1, imatrix + ib*QK4_1, sigma2, 15, L, &neg_min);
            y[ib].d = f32_to_half(d);
            y[ib].m = f32_to_half(-neg_min);
            for (int j = 0; j < 16; ++j) {
                y[ib].qs[j] = (uint8_t)(L[j] | (L[j + 16] << 4));
            }
        }
    }
    return (size_t) nrows * row_size;
}

size_t quantize_q5_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    const size_t row_size = (size_t)(n_per_row/QK5_0) * sizeof(block_q5_0);
    if (!imatrix) {
        quantize_row_q5_0_ref(src, (block_q5_0 *) dst, nrows*n_per_row);
        return (size_t) nrows * row_size;
    }
    for (int64_t r = 0; r < nrows; ++r) {
        const float * x = src + r*n_per_row;
        block_q5_0  * y = (block_q5_0 *)((char *) dst + r*row_size);
        const float sigma2 = sum_squares(x, n_per_row)/(float) n_per_row;
        for (int64_t ib = 0; ib < n_per_row/QK5_0; ++ib) {
            int8_t  L[QK5_0];
            uint8_t q[QK5_0];
            const float d = q_0_block_imatrix(x + ib*QK5_0, imatrix + ib*QK5_0, sigma2, 16, L);
            y[ib].d = f32_to_half(d);
            for (int j = 0; j < QK5_0; ++j) {
                q[j] = (uint8_t) L[j];
            }
            pack_q5(q, y[ib].qs, y[ib].qh);
        }
    }
    return (size_t) nrows * row_size;
}

size_t quantize_q5_1(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    const size_t row_size = (size_t)(n_per_row/QK5_1) * sizeof(block_q5_1);
    if (!imatrix) {
        quantize_row_q5_1_ref(src, (block_q5_1 *) dst, nrows*n_per_row);
        return (size_t) nrows * row_size;
    }
    for (int64_t r = 0; r < nrows; ++r) {
        const float * x = src + r*n_per_row;
        block_q5_1  * y = (block_q5_1 *)((char *) dst + r*row_size);
        const float sigma2 = sum_squares(x, n_per_row)/(float) n_per_row;
        for (int64_t ib = 0; ib < n_per_row/QK5_1; ++ib) {
            uint8_t L[QK5_1];
            float   neg_min;
            const float d = q_1_block_imatrix(x + ib*QK5_1, imatrix + ib*QK5_1, sigma2, 31, L, &neg_min);
            y[ib].d = f32_to_half(d);
            y[ib].m = f32_to_half(-neg_min);
            pack_q5(L, y[ib].qs, y[ib].qh);
        }
    }
    return (size_t) nrows * row_size;
}

size_t quantize_q8_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    (void) imatrix; // Q8_0 has no importance-weighted variant in ggml
    quantize_row_q8_0_ref(src, (block_q8_0 *) dst, nrows*n_per_row);
    return (size_t) nrows * (size_t)(n_per_row/QK8_0) * sizeof(block_q8_0);
}

// Quantizes one block of a row: x its values, qw the importance of its columns (NULL without imatrix).
typedef void (*block_quantizer)(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, void * GGML_RESTRICT block);

// applies quantize_block to every block of every row; the imatrix holds one weight per column, so each row's
// block i uses the same slice of it
static size_t quantize_blocks(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows,
                              int64_t n_per_row, const float * imatrix, int64_t qk, size_t block_size,
                              block_quantizer quantize_block) {
    const int64_t nb = n_per_row/qk;
    char * y = (char *) dst;
    for (int64_t r = 0; r < nrows; ++r) {
        for (int64_t i = 0; i < nb; ++i) {
            quantize_block(src + r*n_per_row + i*qk, imatrix ? imatrix + i*qk : NULL, y + (size_t)(r*nb + i)*block_size);
        }
    }
    return (size_t)(nrows*nb) * block_size;
}

static void q2_K_block_imatrix_any(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, void * GGML_RESTRICT b) {
    q2_K_block_imatrix(x, qw, (block_q2_K *) b);
}

static void q3_K_block_imatrix_any(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, void * GGML_RESTRICT b) {
    q3_K_block_imatrix(x, qw, (block_q3_K *) b);
}

static void q4_K_block_imatrix(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, void * GGML_RESTRICT vb) {
    block_q4_K * b = (block_q4_K *) vb;
    uint8_t L[QK_K];
    memset(b->scales, 0, sizeof(b->scales));
    qk_block_imatrix(x, qw, 15, L, b->scales, &b->d, &b->dmin);
    pack_q4_K_levels(L, b->qs);
}

static void q5_K_block_imatrix(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, void * GGML_RESTRICT vb) {
    block_q5_K * b = (block_q5_K *) vb;
    uint8_t L[QK_K];
    memset(b->scales, 0, sizeof(b->scales));
    qk_block_imatrix(x, qw, 31, L, b->scales, &b->d, &b->dmin);
    pack_q5_K_levels(L, b->qs, b->qh);
}

static void q6_K_block_any(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, void * GGML_RESTRICT b) {
    q6_K_block(x, qw, (block_q6_K *) b);
}

// llama-quantize always takes the searching path (7 tries) for IQ4, with or without imatrix
static void iq4_nl_block(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, void * GGML_RESTRICT vb) {
    block_iq4_nl * b = (block_iq4_nl *) vb;
    iq4_superblock(QK4_NL, x, &b->d, b->qs, NULL, NULL, qw, 7);
}

static void iq4_xs_block(const float * GGML_RESTRICT x, const float * GGML_RESTRICT qw, void * GGML_RESTRICT vb) {
    block_iq4_xs * b = (block_iq4_xs *) vb;
    iq4_superblock(QK_K, x, &b->d, b->qs, &b->scales_h, b->scales_l, qw, 7);
}

size_t quantize_q2_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    if (!imatrix) {
        quantize_row_q2_K_ref(src, (block_q2_K *) dst, nrows*n_per_row);
        return (size_t)(nrows*(n_per_row/QK_K)) * sizeof(block_q2_K);
    }
    return quantize_blocks(src, dst, nrows, n_per_row, imatrix, QK_K, sizeof(block_q2_K), q2_K_block_imatrix_any);
}

size_t quantize_q3_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    if (!imatrix) {
        quantize_row_q3_K_ref(src, (block_q3_K *) dst, nrows*n_per_row);
        return (size_t)(nrows*(n_per_row/QK_K)) * sizeof(block_q3_K);
    }
    return quantize_blocks(src, dst, nrows, n_per_row, imatrix, QK_K, sizeof(block_q3_K), q3_K_block_imatrix_any);
}

size_t quantize_q4_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    if (!imatrix) {
        quantize_row_q4_K_ref(src, (block_q4_K *) dst, nrows*n_per_row);
        return (size_t)(nrows*(n_per_row/QK_K)) * sizeof(block_q4_K);
    }
    return quantize_blocks(src, dst, nrows, n_per_row, imatrix, QK_K, sizeof(block_q4_K), q4_K_block_imatrix);
}

size_t quantize_q5_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    if (!imatrix) {
        quantize_row_q5_K_ref(src, (block_q5_K *) dst, nrows*n_per_row);
        return (size_t)(nrows*(n_per_row/QK_K)) * sizeof(block_q5_K);
    }
    return quantize_blocks(src, dst, nrows, n_per_row, imatrix, QK_K, sizeof(block_q5_K), q5_K_block_imatrix);
}

size_t quantize_q6_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                     const float * imatrix) {
    return quantize_blocks(src, dst, nrows, n_per_row, imatrix, QK_K, sizeof(block_q6_K), q6_K_block_any);
}

size_t quantize_iq4_nl(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                       const float * imatrix) {
    return quantize_blocks(src, dst, nrows, n_per_row, imatrix, QK4_NL, sizeof(block_iq4_nl), iq4_nl_block);
}

size_t quantize_iq4_xs(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row,
                       const float * imatrix) {
    return quantize_blocks(src, dst, nrows, n_per_row, imatrix, QK_K, sizeof(block_iq4_xs), iq4_xs_block);
}

// ---- validation --------------------------------------------------------------------------------------------

static bool half_is_finite(ggml_half h) {
    return (h & 0x7c00u) != 0x7c00u;
}

// Check the halves at byte offsets off[0..n) of every block of size bs.
static bool validate_block_halves(const char * name, const uint8_t * data, size_t nbytes, size_t bs,
                                  const size_t * off, int n) {
    const size_t nblocks = nbytes / bs;
    for (size_t i = 0; i < nblocks; ++i) {
        for (int f = 0; f < n; ++f) {
            ggml_half h;
            memcpy(&h, data + i*bs + off[f], sizeof(h));
            if (!half_is_finite(h)) {
                GGML_LOG_ERROR("ggml_validate_row_data: found %s value in a scale of %s block %zu\n",
                               (h & 0x3ffu) ? "nan" : "inf", name, i);
                return false;
            }
        }
    }
    return true;
}

bool ggml_quants_validate_row(enum ggml_type type, const void * data, size_t nbytes) {
    const uint8_t * p = (const uint8_t *) data;
    if (nbytes > 0 && p == NULL) {
        GGML_LOG_ERROR("ggml_validate_row_data: NULL data for %zu bytes\n", nbytes);
        return false;
    }
#define HALVES(T, ...)                                                                                   \
    do {                                                                                                 \
        const size_t off_[] = { __VA_ARGS__ };                                                           \
        return validate_block_halves(ggml_type_name(type), p, nbytes, sizeof(T), off_,                   \
                                     (int)(sizeof(off_)/sizeof(off_[0])));                               \
    } while (0)

    switch (type) {
        case GGML_TYPE_F32: {
            for (size_t i = 0; i < nbytes/4; ++i) {
                float v;
                memcpy(&v, p + 4*i, sizeof(v));
                if (!isfinite(v)) {
                    GGML_LOG_ERROR("ggml_validate_row_data: found %s value at f32 element %zu\n",
                                   isnan(v) ? "nan" : "inf", i);
                    return false;
                }
            }
            return true;
        }
        case GGML_TYPE_F16: {
            for (size_t i = 0; i < nbytes/2; ++i) {
                ggml_half h;
                memcpy(&h, p + 2*i, sizeof(h));
                if (!half_is_finite(h)) {
                    GGML_LOG_ERROR("ggml_validate_row_data: found %s value at f16 element %zu\n",
                                   (h & 0x3ffu) ? "nan" : "inf", i);
                    return false;
                }
            }
            return true;
        }
        case GGML_TYPE_BF16: {
            for (size_t i = 0; i < nbytes/2; ++i) {
                uint16_t b;
                memcpy(&b, p + 2*i, sizeof(b));
                if ((b & 0x7f80u) == 0x7f80u) {
                    GGML_LOG_ERROR("ggml_validate_row_data: found %s value at bf16 element %zu\n",
                                   (b & 0x7fu) ? "nan" : "inf", i);
                    return false;
                }
            }
            return true;
        }
        case GGML_TYPE_Q4_0:   HALVES(block_q4_0,   offsetof(block_q4_0, d));
        case GGML_TYPE_Q4_1:   HALVES(block_q4_1,   offsetof(block_q4_1, d), offsetof(block_q4_1, m));
        case GGML_TYPE_Q5_0:   HALVES(block_q5_0,   offsetof(block_q5_0, d));
        case GGML_TYPE_Q5_1:   HALVES(block_q5_1,   offsetof(block_q5_1, d), offsetof(block_q5_1, m));
        case GGML_TYPE_Q8_0:   HALVES(block_q8_0,   offsetof(block_q8_0, d));
        case GGML_TYPE_Q8_1:   HALVES(block_q8_1,   offsetof(block_q8_1, d), offsetof(block_q8_1, s));
        case GGML_TYPE_Q2_K:   HALVES(block_q2_K,   offsetof(block_q2_K, d), offsetof(block_q2_K, dmin));
        case GGML_TYPE_Q3_K:   HALVES(block_q3_K,   offsetof(block_q3_K, d));
        case GGML_TYPE_Q4_K:   HALVES(block_q4_K,   offsetof(block_q4_K, d), offsetof(block_q4_K, dmin));
        case GGML_TYPE_Q5_K:   HALVES(block_q5_K,   offsetof(block_q5_K, d), offsetof(block_q5_K, dmin));
        case GGML_TYPE_Q6_K:   HALVES(block_q6_K,   offsetof(block_q6_K, d));
        case GGML_TYPE_IQ4_NL: HALVES(block_iq4_nl, offsetof(block_iq4_nl, d));
        case GGML_TYPE_IQ4_XS: HALVES(block_iq4_xs, offsetof(block_iq4_xs, d));
        case GGML_TYPE_Q8_K: {
            for (size_t i = 0; i < nbytes/sizeof(block_q8_K); ++i) {
                float d;
                memcpy(&d, p + i*sizeof(block_q8_K) + offsetof(block_q8_K, d), sizeof(d));
                if (!isfinite(d)) {
                    GGML_LOG_ERROR("ggml_validate_row_data: found %s value in a scale of q8_K block %zu\n",
                                   isnan(d) ? "nan" : "inf", i);
                    return false;
                }
            }
            return true;
        }
        // opaque IQ/TQ types: the block layouts put the half super-block scale first (IQ2/IQ3/IQ1_S)
        // or last (TQ1_0/TQ2_0)
        case GGML_TYPE_IQ2_XXS: { const size_t o[] = { 0 }; return validate_block_halves("iq2_xxs", p, nbytes, GGML_IQ2_XXS_BLOCK_BYTES, o, 1); }
        case GGML_TYPE_IQ2_XS:  { const size_t o[] = { 0 }; return validate_block_halves("iq2_xs",  p, nbytes, GGML_IQ2_XS_BLOCK_BYTES,  o, 1); }
        case GGML_TYPE_IQ2_S:   { const size_t o[] = { 0 }; return validate_block_halves("iq2_s",   p, nbytes, GGML_IQ2_S_BLOCK_BYTES,   o, 1); }
        case GGML_TYPE_IQ3_XXS: { const size_t o[] = { 0 }; return validate_block_halves("iq3_xxs", p, nbytes, GGML_IQ3_XXS_BLOCK_BYTES, o, 1); }
        case GGML_TYPE_IQ3_S:   { const size_t o[] = { 0 }; return validate_block_halves("iq3_s",   p, nbytes, GGML_IQ3_S_BLOCK_BYTES,   o, 1); }
        case GGML_TYPE_IQ1_S:   { const size_t o[] = { 0 }; return validate_block_halves("iq1_s",   p, nbytes, GGML_IQ1_S_BLOCK_BYTES,   o, 1); }
        case GGML_TYPE_TQ1_0:   { const size_t o[] = { GGML_TQ1_0_BLOCK_BYTES - 2 }; return validate_block_halves("tq1_0", p, nbytes, GGML_TQ1_0_BLOCK_BYTES, o, 1); }
        case GGML_TYPE_TQ2_0:   { const size_t o[] = { GGML_TQ2_0_BLOCK_BYTES - 2 }; return validate_block_halves("tq2_0", p, nbytes, GGML_TQ2_0_BLOCK_BYTES, o, 1); }
        default:
            // integer types, IQ1_M (scale spread over the block) and MXFP4 (e8m0 scale): nothing can be non-finite
            return true;
    }
#undef HALVES
}
