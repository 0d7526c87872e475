// Convolution ops (im2col 1D/2D/3D and its gradient, conv_1d/_ph/_dw/_dw_ph, conv_transpose_1d/2d_p0,
// conv_2d/_sk_p0/_s1_ph/_dw/_dw_direct/_direct, conv_3d/_direct) against convolutions computed here in double
// straight from their definitions, with 1 and 2 threads, contiguous and strided inputs, odd sizes. Plus closed
// forms (a delta kernel shifts the image), the adjoint identity of im2col_back, and the graph llama.cpp builds.

#include "ggml-ops-check.h"

// out[ox, oy, oc, n] = sum_{ic, ky, kx} k[kx, ky, ic, oc] * x[ox*s0 + kx*d0 - p0, oy*s1 + ky*d1 - p1, ic, n]
static double * ref_conv2d(const struct ggml_tensor * k, const struct ggml_tensor * x, int s0, int s1, int p0, int p1,
                           int d0, int d1, int64_t OW, int64_t OH, bool round_x_f16) {
    const int64_t KW = k->ne[0], KH = k->ne[1], IC = k->ne[2], OC = k->ne[3], N = x->ne[3];
    double * r = calloc((size_t) (OW * OH * OC * N), sizeof(double));
    int64_t idx = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < OC; oc++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++, idx++) {
                    double s = 0;
                    for (int64_t ic = 0; ic < IC; ic++)
                        for (int64_t ky = 0; ky < KH; ky++)
                            for (int64_t kx = 0; kx < KW; kx++) {
                                const int64_t sx = ox * s0 + kx * d0 - p0, sy = oy * s1 + ky * d1 - p1;
                                if (sx < 0 || sy < 0 || sx >= x->ne[0] || sy >= x->ne[1]) continue;
                                double xv = oc_get(x, sx, sy, ic, n);
                                if (round_x_f16) xv = oc_round_f16(xv);
                                s += oc_get(k, kx, ky, ic, oc) * xv;
                            }
                    r[idx] = s;
                }
    return r;
}

static int64_t out_size(int64_t in, int64_t k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

static void test_im2col(bool is_2D, enum ggml_type dst_type, bool nc) {
    struct ggml_context * ctx = oc_ctx(64);
    const int s0 = 2, s1 = 1, p0 = 1, p1 = 2, d0 = 1, d1 = 2;
    struct ggml_tensor * a, * b;
    if (is_2D) {
        a = oc_rand(ctx, GGML_TYPE_F32, 3, 2, 3, 2, -1, 1); // [KW, KH, IC, OC]
        b = nc ? oc_rand_padded(ctx, GGML_TYPE_F32, 7, 6, 3, 2, -1, 1)  // [W, H, IC, N]
               : oc_rand(ctx, GGML_TYPE_F32, 7, 6, 3, 2, -1, 1);
    } else {
        a = oc_rand(ctx, GGML_TYPE_F32, 3, 3, 2, 1, -1, 1); // [K, IC, OC]
        b = nc ? oc_rand_padded(ctx, GGML_TYPE_F32, 9, 3, 2, 1, -1, 1)  // [L, IC, N]
               : oc_rand(ctx, GGML_TYPE_F32, 9, 3, 2, 1, -1, 1);
    }
    struct ggml_tensor * out = ggml_im2col(ctx, a, b, s0, is_2D ? s1 : 0, p0, is_2D ? p1 : 0, d0, is_2D ? d1 : 0, is_2D, dst_type);
    const int64_t KW = a->ne[0], KH = is_2D ? a->ne[1] : 1, IC = is_2D ? b->ne[2] : b->ne[1], N = is_2D ? b->ne[3] : b->ne[2];
    const int64_t IH = is_2D ? b->ne[1] : 1;
    const int64_t OW = out_size(b->ne[0], KW, s0, p0, d0), OH = is_2D ? out_size(IH, KH, s1, p1, d1) : 1;
    TH_CHECK(out->ne[0] == IC * KH * KW && out->ne[1] == OW && out->ne[2] == (is_2D ? OH : N) && out->ne[3] == (is_2D ? N : 1),
             "im2col shape");
    TH_CHECK(out->op_params[6] == (is_2D ? 1 : 0) && out->op_params[0] == s0 && out->op_params[2] == p0, "im2col params");
    double * ref = oc_alloc_ref(out);
    int64_t idx = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++)
                for (int64_t ic = 0; ic < IC; ic++)
                    for (int64_t ky = 0; ky < KH; ky++)
                        for (int64_t kx = 0; kx < KW; kx++, idx++) {
                            const int64_t sx = ox * s0 + kx * d0 - p0, sy = is_2D ? oy * s1 + ky * d1 - p1 : 0;
                            double v = 0;
                            if (sx >= 0 && sx < b->ne[0] && sy >= 0 && sy < IH) {
                                v = is_2D ? oc_get(b, sx, sy, ic, n) : oc_get(b, sx, ic, n, 0);
                            }
                            ref[idx] = dst_type == GGML_TYPE_F16 ? oc_round_f16(v) : v;
                        }
    oc_run_check(ctx, is_2D ? "im2col 2D" : "im2col 1D", out, ref, 0, 0);
    free(ref);
    ggml_free(ctx);
}

// <im2col(x), g> == <x, im2col_back(g)> for random x and g: im2col_back is the adjoint of im2col
static void test_im2col_back(bool is_2D) {
    struct ggml_context * ctx = oc_ctx(64);
    struct ggml_tensor * a = is_2D ? oc_rand(ctx, GGML_TYPE_F32, 3, 2, 2, 1, -1, 1) : oc_rand(ctx, GGML_TYPE_F32, 3, 2, 1, 1, -1, 1);
    struct ggml_tensor * x = is_2D ? oc_rand(ctx, GGML_TYPE_F32, 8, 7, 2, 2, -1, 1) : oc_rand(ctx, GGML_TYPE_F32, 10, 2, 3, 1, -1, 1);
    const int s0 = 2, s1 = is_2D ? 3 : 0, p0 = 1, p1 = is_2D ? 1 : 0, d0 = 2, d1 = is_2D ? 1 : 0;
    struct ggml_tensor * cols = ggml_im2col(ctx, a, x, s0, s1, p0, p1, d0, d1, is_2D, GGML_TYPE_F32);
    struct ggml_tensor * g = oc_rand(ctx, GGML_TYPE_F32, cols->ne[0], cols->ne[1], cols->ne[2], cols->ne[3], -1, 1);
    struct ggml_tensor * back = ggml_im2col_back(ctx, g, a, x->ne, s0, s1, p0, p1, d0, d1, is_2D);
    TH_CHECK(ggml_are_same_shape(back, x) && back->op == GGML_OP_IM2COL_BACK, "im2col_back shape");
    for (int nth = 1; nth <= 2; nth++) {
        TH_CHECK(oc_compute(ctx, cols, nth) == GGML_STATUS_SUCCESS, "im2col compute");
        TH_CHECK(oc_compute(ctx, back, nth) == GGML_STATUS_SUCCESS, "im2col_back compute");
        double lhs = 0, rhs = 0;
        for (int64_t i = 0; i < ggml_nelements(cols); i++) lhs += (double) ((float *) cols->data)[i] * ((float *) g->data)[i];
        for (int64_t i = 0; i < ggml_nelements(x); i++) rhs += (double) ((float *) x->data)[i] * ((float *) back->data)[i];
        TH_CHECK(fabs(lhs - rhs) <= 1e-4 * (1 + fabs(lhs)), "im2col_back adjoint (%s, %d threads): %.9g vs %.9g",
                 is_2D ? "2D" : "1D", nth, lhs, rhs);
    }
    ggml_free(ctx);
}

static void test_conv_2d_family(void) {
    struct ggml_context * ctx = oc_ctx(64);
    struct ggml_tensor * k = oc_rand(ctx, GGML_TYPE_F32, 3, 2, 3, 4, -1, 1); // [KW, KH, IC, OC]
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, 9, 7, 3, 2, -1, 1); // [W, H, IC, N]

    // composite: im2col + mul_mat, the graph llama.cpp builds
    struct ggml_tensor * c = ggml_conv_2d(ctx, k, x, 2, 1, 1, 0, 1, 2);
    bool has_im2col = false, has_mm = false;
    for (const struct ggml_tensor * t = c; t; t = t->src[0]) {
        has_im2col |= t->op == GGML_OP_IM2COL;
        has_mm |= t->op == GGML_OP_MUL_MAT;
    }
    TH_CHECK(has_im2col && has_mm && c->op == GGML_OP_CONT, "conv_2d is cont(permute(mul_mat(im2col)))");
    double * ref = ref_conv2d(k, x, 2, 1, 1, 0, 1, 2, c->ne[0], c->ne[1], false);
    TH_CHECK(c->ne[2] == 4 && c->ne[3] == 2, "conv_2d shape");
    oc_run_check(ctx, "conv_2d", c, ref, 1e-5, 1e-5);
    free(ref);

    struct ggml_tensor * ks = oc_rand(ctx, GGML_TYPE_F32, 3, 3, 3, 2, -1, 1);
    struct ggml_tensor * c1 = ggml_conv_2d_s1_ph(ctx, ks, x);
    ref = ref_conv2d(ks, x, 1, 1, 1, 1, 1, 1, c1->ne[0], c1->ne[1], false);
    TH_CHECK(c1->ne[0] == 9 && c1->ne[1] == 7, "conv_2d_s1_ph keeps the size");
    oc_run_check(ctx, "conv_2d_s1_ph", c1, ref, 1e-5, 1e-5);
    free(ref);
    struct ggml_tensor * c2 = ggml_conv_2d_sk_p0(ctx, ks, x);
    ref = ref_conv2d(ks, x, 3, 3, 0, 0, 1, 1, c2->ne[0], c2->ne[1], false);
    TH_CHECK(c2->ne[0] == 3 && c2->ne[1] == 2, "conv_2d_sk_p0 shape");
    oc_run_check(ctx, "conv_2d_sk_p0", c2, ref, 1e-5, 1e-5);
    free(ref);

    // direct (CONV_2D), F32 and F16 kernels, strided input
    struct ggml_tensor * xn = oc_rand_padded(ctx, GGML_TYPE_F32, 8, 5, 3, 2, -1, 1);
    for (int f16 = 0; f16 <= 1; f16++) {
        struct ggml_tensor * kd = oc_rand(ctx, f16 ? GGML_TYPE_F16 : GGML_TYPE_F32, 2, 3, 3, 5, -1, 1);
        struct ggml_tensor * d = ggml_conv_2d_direct(ctx, kd, xn, 1, 2, 1, 1, 2, 1);
        TH_CHECK(d->op == GGML_OP_CONV_2D && d->ne[2] == 5 && d->ne[3] == 2 && d->op_params[4] == 2, "conv_2d_direct node");
        ref = ref_conv2d(kd, xn, 1, 2, 1, 1, 2, 1, d->ne[0], d->ne[1], f16 != 0);
        oc_run_check(ctx, f16 ? "conv_2d_direct f16" : "conv_2d_direct f32", d, ref, 1e-5, 1e-4);
        free(ref);
    }

    // closed form: a one-hot kernel at (0, 0) mapping channel c to c with padding 1 shifts the image by (1, 1)
    struct ggml_tensor * kdelta = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 3, 3);
    memset(kdelta->data, 0, ggml_nbytes(kdelta));
    for (int ch = 0; ch < 3; ch++) oc_set(kdelta, 0, 0, ch, ch, 1.0f);
    struct ggml_tensor * sh = ggml_conv_2d_direct(ctx, kdelta, x, 1, 1, 1, 1, 1, 1);
    ref = oc_alloc_ref(sh);
    int64_t idx = 0;
    for (int64_t n = 0; n < 2; n++)
        for (int64_t ch = 0; ch < 3; ch++)
            for (int64_t y = 0; y < sh->ne[1]; y++)
                for (int64_t xx = 0; xx < sh->ne[0]; xx++, idx++)
                    ref[idx] = (xx >= 1 && y >= 1) ? oc_get(x, xx - 1, y - 1, ch, n) : 0.0;
    oc_run_check(ctx, "conv_2d_direct delta = shift", sh, ref, 0, 0);
    free(ref);
    ggml_free(ctx);
}

static void test_conv_1d_family(void) {
    struct ggml_context * ctx = oc_ctx(64);
    struct ggml_tensor * k = oc_rand(ctx, GGML_TYPE_F16, 3, 4, 5, 1, -1, 1); // [K, IC, OC]
    // one batch: llama.cpp's conv_1d reshapes the [N*OL, OC] product straight to [OL, OC, N], which is only the
    // convolution for N = 1 (the graph is kept as llama.cpp builds it)
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, 11, 4, 1, 1, -1, 1); // [L, IC, N]
    for (int ph = 0; ph <= 1; ph++) {
        const int s = 2, d = 1, p = ph ? 1 : 2;
        struct ggml_tensor * c = ph ? ggml_conv_1d_ph(ctx, k, x, s, d) : ggml_conv_1d(ctx, k, x, s, p, d);
        const int64_t OL = out_size(11, 3, s, p, d);
        TH_CHECK(c->ne[0] == OL && c->ne[1] == 5 && c->ne[2] == 1, "conv_1d shape");
        double * ref = oc_alloc_ref(c);
        int64_t idx = 0;
        for (int64_t n = 0; n < 1; n++)
            for (int64_t oc = 0; oc < 5; oc++)
                for (int64_t o = 0; o < OL; o++, idx++)
                    for (int64_t ic = 0; ic < 4; ic++)
                        for (int64_t kk = 0; kk < 3; kk++) {
                            const int64_t si = o * s + kk * d - p;
                            if (si >= 0 && si < 11) ref[idx] += oc_get(k, kk, ic, oc, 0) * oc_get(x, si, ic, n, 0);
                        }
        oc_run_check(ctx, ph ? "conv_1d_ph" : "conv_1d", c, ref, 2e-2, 1e-2); // F16 im2col and mul_mat
        free(ref);
    }
    // depthwise: a [K, 1, C], b [L, C, 1]
    struct ggml_tensor * kdw = oc_rand(ctx, GGML_TYPE_F32, 5, 1, 6, 1, -1, 1);
    struct ggml_tensor * xdw = oc_rand(ctx, GGML_TYPE_F32, 13, 6, 1, 1, -1, 1);
    for (int ph = 0; ph <= 1; ph++) {
        const int s = 1, d = 2, p = ph ? 2 : 3;
        struct ggml_tensor * c = ph ? ggml_conv_1d_dw_ph(ctx, kdw, xdw, s, d) : ggml_conv_1d_dw(ctx, kdw, xdw, s, p, d);
        const int64_t OL = out_size(13, 5, s, p, d);
        TH_CHECK(c->ne[0] == OL && c->ne[1] == 6, "conv_1d_dw shape");
        double * ref = oc_alloc_ref(c);
        for (int64_t ch = 0; ch < 6; ch++)
            for (int64_t o = 0; o < OL; o++)
                for (int64_t kk = 0; kk < 5; kk++) {
                    const int64_t si = o * s + kk * d - p;
                    if (si >= 0 && si < 13) ref[ch * OL + o] += oc_get(kdw, kk, 0, ch, 0) * oc_get(xdw, si, ch, 0, 0);
                }
        oc_run_check(ctx, ph ? "conv_1d_dw_ph" : "conv_1d_dw", c, ref, 2e-2, 1e-2);
        free(ref);
    }
    ggml_free(ctx);
}

static void test_conv_2d_dw(void) {
    struct ggml_context * ctx = oc_ctx(64);
    // F16: the composite multiplies the kernel with F16 im2col columns, which llama.cpp's mul_mat needs an F16
    // src0 for (the direct op takes it as well)
    struct ggml_tensor * k = oc_rand(ctx, GGML_TYPE_F16, 3, 3, 1, 4, -1, 1); // [KW, KH, 1, C]
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, 8, 7, 4, 2, -1, 1); // [W, H, C, N]
    // channels-innermost input: a [C, W, H, N] buffer permuted to [W, H, C, N]
    struct ggml_tensor * xc_raw = oc_rand(ctx, GGML_TYPE_F32, 4, 8, 7, 2, -1, 1);
    struct ggml_tensor * xc = ggml_permute(ctx, xc_raw, 2, 0, 1, 3);
    const int s0 = 2, s1 = 1, p0 = 1, p1 = 1, d0 = 1, d1 = 2;
    struct ggml_tensor * outs[3] = {
        ggml_conv_2d_dw(ctx, k, x, s0, s1, p0, p1, d0, d1),
        ggml_conv_2d_dw_direct(ctx, k, x, s0, s1, p0, p1, d0, d1),
        ggml_conv_2d_dw_direct(ctx, k, xc, s0, s1, p0, p1, d0, d1),
    };
    const char * names[3] = { "conv_2d_dw", "conv_2d_dw_direct", "conv_2d_dw_direct cwhn" };
    TH_CHECK(outs[2]->nb[2] == sizeof(float), "conv_2d_dw_direct keeps the channels-innermost layout");
    for (int t = 0; t < 3; t++) {
        struct ggml_tensor * c = outs[t];
        struct ggml_tensor * in = t == 2 ? xc : x;
        double * ref = oc_alloc_ref(c);
        int64_t idx = 0;
        for (int64_t n = 0; n < 2; n++)
            for (int64_t ch = 0; ch < 4; ch++)
                for (int64_t oy = 0; oy < c->ne[1]; oy++)
                    for (int64_t ox = 0; ox < c->ne[0]; ox++, idx++)
                        for (int64_t ky = 0; ky < 3; ky++)
                            for (int64_t kx = 0; kx < 3; kx++) {
                                const int64_t sx = ox * s0 + kx * d0 - p0, sy = oy * s1 + ky * d1 - p1;
                                if (sx >= 0 && sy >= 0 && sx < 8 && sy < 7) ref[idx] += oc_get(k, kx, ky, 0, ch) * oc_get(in, sx, sy, ch, n);
                            }
        oc_run_check(ctx, names[t], c, ref, t == 0 ? 2e-2 : 1e-5, t == 0 ? 1e-2 : 1e-5); // composite: F16 im2col
        free(ref);
    }
    ggml_free(ctx);
}

static void test_conv_transpose(void) {
    struct ggml_context * ctx = oc_ctx(64);
    for (int f16 = 0; f16 <= 1; f16++) {
        struct ggml_tensor * k = oc_rand(ctx, f16 ? GGML_TYPE_F16 : GGML_TYPE_F32, 4, 3, 5, 1, -1, 1); // [K, OC, IC]
        struct ggml_tensor * x = oc_rand_padded(ctx, GGML_TYPE_F32, 6, 5, 1, 1, -1, 1);                  // [L, IC]
        const int s = 3;
        struct ggml_tensor * c = ggml_conv_transpose_1d(ctx, k, x, s, 0, 1);
        TH_CHECK(c->ne[0] == 5 * s + 4 && c->ne[1] == 3, "conv_transpose_1d shape");
        double * ref = oc_alloc_ref(c);
        for (int64_t oc = 0; oc < 3; oc++)
            for (int64_t i = 0; i < 6; i++)
                for (int64_t kk = 0; kk < 4; kk++)
                    for (int64_t ic = 0; ic < 5; ic++) ref[oc * c->ne[0] + i * s + kk] += oc_get(k, kk, oc, ic, 0) * oc_get(x, i, ic, 0, 0);
        oc_run_check(ctx, f16 ? "conv_transpose_1d f16" : "conv_transpose_1d f32", c, ref, f16 ? 1e-2 : 1e-5, 1e-3);
        free(ref);

        struct ggml_tensor * k2 = oc_rand(ctx, f16 ? GGML_TYPE_F16 : GGML_TYPE_F32, 3, 2, 4, 3, -1, 1); // [KW, KH, OC, IC]
        struct ggml_tensor * x2 = oc_rand_padded(ctx, GGML_TYPE_F32, 5, 4, 3, 2, -1, 1);                 // [W, H, IC, N]
        struct ggml_tensor * c2 = ggml_conv_transpose_2d_p0(ctx, k2, x2, 2);
        TH_CHECK(c2->ne[0] == 4 * 2 + 3 && c2->ne[1] == 3 * 2 + 2 && c2->ne[2] == 4 && c2->ne[3] == 2, "conv_transpose_2d shape");
        ref = oc_alloc_ref(c2);
        for (int64_t n = 0; n < 2; n++)
            for (int64_t oc = 0; oc < 4; oc++)
                for (int64_t iy = 0; iy < 4; iy++)
                    for (int64_t ix = 0; ix < 5; ix++)
                        for (int64_t ky = 0; ky < 2; ky++)
                            for (int64_t kx = 0; kx < 3; kx++)
                                for (int64_t ic = 0; ic < 3; ic++)
                                    ref[((n * 4 + oc) * c2->ne[1] + iy * 2 + ky) * c2->ne[0] + ix * 2 + kx] +=
                                        oc_get(k2, kx, ky, oc, ic) * oc_get(x2, ix, iy, ic, n);
        oc_run_check(ctx, f16 ? "conv_transpose_2d_p0 f16" : "conv_transpose_2d_p0 f32", c2, ref, f16 ? 1e-2 : 1e-5, 1e-3);
        free(ref);
    }
    ggml_free(ctx);
}

static void test_conv_3d(void) {
    struct ggml_context * ctx = oc_ctx(64);
    const int64_t IC = 2, OC = 3, N = 2;
    struct ggml_tensor * k = oc_rand(ctx, GGML_TYPE_F32, 2, 3, 2, IC * OC, -1, 1); // [KW, KH, KD, IC*OC]
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, 6, 5, 4, IC * N, -1, 1);  // [W, H, D, IC*N]
    const int s[3] = { 2, 1, 1 }, p[3] = { 1, 0, 1 }, d[3] = { 1, 2, 1 };
    const int64_t OW = out_size(6, 2, s[0], p[0], d[0]), OH = out_size(5, 3, s[1], p[1], d[1]), OD = out_size(4, 2, s[2], p[2], d[2]);

    struct ggml_tensor * cols = ggml_im2col_3d(ctx, k, x, IC, s[0], s[1], s[2], p[0], p[1], p[2], d[0], d[1], d[2], GGML_TYPE_F32);
    TH_CHECK(cols->ne[0] == 2 * 3 * 2 * IC && cols->ne[1] == OW && cols->ne[2] == OH && cols->ne[3] == OD * N, "im2col_3d shape");
    double * ref = oc_alloc_ref(cols);
    int64_t idx = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oz = 0; oz < OD; oz++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++)
                    for (int64_t ic = 0; ic < IC; ic++)
                        for (int64_t kz = 0; kz < 2; kz++)
                            for (int64_t ky = 0; ky < 3; ky++)
                                for (int64_t kx = 0; kx < 2; kx++, idx++) {
                                    const int64_t sx = ox * s[0] + kx * d[0] - p[0], sy = oy * s[1] + ky * d[1] - p[1], sz = oz * s[2] + kz * d[2] - p[2];
                                    ref[idx] = (sx >= 0 && sy >= 0 && sz >= 0 && sx < 6 && sy < 5 && sz < 4) ? oc_get(x, sx, sy, sz, n * IC + ic) : 0;
                                }
    oc_run_check(ctx, "im2col_3d", cols, ref, 0, 0);
    free(ref);

    // out[ox, oy, oz, n*OC + oc] = sum k[kx, ky, kz, oc*IC + ic] * x[sx, sy, sz, n*IC + ic]
    double * cref = calloc((size_t) (OW * OH * OD * OC * N), sizeof(double));
    idx = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < OC; oc++)
            for (int64_t oz = 0; oz < OD; oz++)
                for (int64_t oy = 0; oy < OH; oy++)
                    for (int64_t ox = 0; ox < OW; ox++, idx++)
                        for (int64_t ic = 0; ic < IC; ic++)
                            for (int64_t kz = 0; kz < 2; kz++)
                                for (int64_t ky = 0; ky < 3; ky++)
                                    for (int64_t kx = 0; kx < 2; kx++) {
                                        const int64_t sx = ox * s[0] + kx * d[0] - p[0], sy = oy * s[1] + ky * d[1] - p[1], sz = oz * s[2] + kz * d[2] - p[2];
                                        if (sx >= 0 && sy >= 0 && sz >= 0 && sx < 6 && sy < 5 && sz < 4)
                                            cref[idx] += oc_get(k, kx, ky, kz, oc * IC + ic) * oc_get(x, sx, sy, sz, n * IC + ic);
                                    }
    struct ggml_tensor * c = ggml_conv_3d(ctx, k, x, IC, s[0], s[1], s[2], p[0], p[1], p[2], d[0], d[1], d[2]);
    TH_CHECK(c->ne[0] == OW && c->ne[1] == OH && c->ne[2] == OD && c->ne[3] == OC * N, "conv_3d shape");
    oc_run_check(ctx, "conv_3d", c, cref, 1e-5, 1e-5);
    struct ggml_tensor * cd = ggml_conv_3d_direct(ctx, k, x, s[0], s[1], s[2], p[0], p[1], p[2], d[0], d[1], d[2], (int) IC, (int) N, (int) OC);
    TH_CHECK(cd->op == GGML_OP_CONV_3D && cd->op_params[9] == IC && cd->op_params[10] == N && cd->op_params[11] == OC, "conv_3d_direct params");
    oc_run_check(ctx, "conv_3d_direct", cd, cref, 1e-5, 1e-5);
    free(cref);
    ggml_free(ctx);
}

int main(void) {
    for (int nc = 0; nc <= 1; nc++) {
        test_im2col(true, GGML_TYPE_F32, nc);
        test_im2col(true, GGML_TYPE_F16, nc);
        test_im2col(false, GGML_TYPE_F32, nc);
        test_im2col(false, GGML_TYPE_F16, nc);
    }
    test_im2col_back(false);
    test_im2col_back(true);
    test_conv_2d_family();
    test_conv_1d_family();
    test_conv_2d_dw();
    test_conv_transpose();
    test_conv_3d();
    return th_finish();
}
