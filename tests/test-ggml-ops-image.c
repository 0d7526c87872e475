// Image ops (pool_1d/2d/2d_back, upscale/upscale_ext/interpolate in every mode and flag, pad_reflect_1d,
// timestep_embedding, win_part/win_unpart, get_rel_pos, add_rel_pos(_inplace)) against references computed
// here in double from their definitions, with 1 and 2 threads and strided inputs; closed forms (pool of a
// constant, nearest upscale = repeat, align-corners bilinear of a ramp, window round trip); ggml_graph_dump_dot.

#include "ggml-ops-check.h"

#include <float.h>
#include <unistd.h>

static void test_pool(void) {
    struct ggml_context * ctx = oc_ctx(64);
    struct ggml_tensor * x = oc_rand_padded(ctx, GGML_TYPE_F32, 11, 7, 3, 2, -1, 1);
    for (int kind = 0; kind < 2; kind++) {
        const enum ggml_op_pool op = kind ? GGML_OP_POOL_AVG : GGML_OP_POOL_MAX;
        // 1D, window clipped to the row; AVG divides by the elements inside
        const int k = 3, s = 2, p = 1;
        struct ggml_tensor * o1 = ggml_pool_1d(ctx, x, op, k, s, p);
        TH_CHECK(o1->ne[0] == (11 + 2 * p - k) / s + 1 && o1->ne[1] == 7, "pool_1d shape");
        double * ref = oc_alloc_ref(o1);
        int64_t idx = 0;
        for (int64_t i3 = 0; i3 < 2; i3++) for (int64_t i2 = 0; i2 < 3; i2++) for (int64_t i1 = 0; i1 < 7; i1++)
            for (int64_t o = 0; o < o1->ne[0]; o++, idx++) {
                double acc = kind ? 0 : -DBL_MAX; int cnt = 0;
                for (int j = 0; j < k; j++) {
                    const int64_t si = o * s - p + j;
                    if (si < 0 || si >= 11) continue;
                    const double v = oc_get(x, si, i1, i2, i3);
                    acc = kind ? acc + v : (v > acc ? v : acc); cnt++;
                }
                ref[idx] = kind ? acc / cnt : acc;
            }
        oc_run_check(ctx, kind ? "pool_1d avg" : "pool_1d max", o1, ref, 1e-6, 1e-6);
        free(ref);

        // 2D, AVG divides by k0*k1 (padding counts)
        const int k0 = 3, k1 = 2, s0 = 2, s1 = 1; const float p0 = 1, p1 = 1;
        struct ggml_tensor * o2 = ggml_pool_2d(ctx, x, op, k0, k1, s0, s1, p0, p1);
        TH_CHECK(o2->ne[0] == 6 && o2->ne[1] == 8 && o2->op_params[5] == 1, "pool_2d shape/params");
        ref = oc_alloc_ref(o2);
        idx = 0;
        for (int64_t i3 = 0; i3 < 2; i3++) for (int64_t i2 = 0; i2 < 3; i2++)
            for (int64_t oy = 0; oy < o2->ne[1]; oy++) for (int64_t ox = 0; ox < o2->ne[0]; ox++, idx++) {
                double acc = kind ? 0 : -FLT_MAX;
                for (int ky = 0; ky < k1; ky++) for (int kx = 0; kx < k0; kx++) {
                    const int64_t sx = ox * s0 - 1 + kx, sy = oy * s1 - 1 + ky;
                    if (sx < 0 || sy < 0 || sx >= 11 || sy >= 7) continue;
                    const double v = oc_get(x, sx, sy, i2, i3);
                    acc = kind ? acc + v : (v > acc ? v : acc);
                }
                ref[idx] = kind ? acc / (k0 * k1) : acc;
            }
        oc_run_check(ctx, kind ? "pool_2d avg" : "pool_2d max", o2, ref, 1e-6, 1e-6);
        free(ref);
    }
    // closed form: pooling a constant gives the constant (no padding)
    struct ggml_tensor * cst = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 6, 2, 1);
    for (int64_t i = 0; i < ggml_nelements(cst); i++) ((ggml_fp16_t *) cst->data)[i] = ggml_fp32_to_fp16(2.5f);
    struct ggml_tensor * pc[3] = { ggml_pool_2d(ctx, cst, GGML_OP_POOL_AVG, 2, 3, 2, 3, 0, 0),
                                   ggml_pool_2d(ctx, cst, GGML_OP_POOL_MAX, 4, 2, 1, 2, 0, 0),
                                   ggml_pool_1d(ctx, cst, GGML_OP_POOL_AVG, 3, 3, 0) };
    for (int t = 0; t < 3; t++) {
        double * ref = oc_alloc_ref(pc[t]);
        for (int64_t i = 0; i < ggml_nelements(pc[t]); i++) ref[i] = 2.5;
        oc_run_check(ctx, "pool of a constant", pc[t], ref, 0, 0);
        free(ref);
    }
    ggml_free(ctx);
}

static void test_pool_back(void) {
    struct ggml_context * ctx = oc_ctx(64);
    struct ggml_tensor * af = oc_rand(ctx, GGML_TYPE_F32, 9, 8, 2, 1, -1, 1);
    for (int kind = 0; kind < 2; kind++) {
        const enum ggml_op_pool op = kind ? GGML_OP_POOL_AVG : GGML_OP_POOL_MAX;
        const int k0 = 3, k1 = 2, s0 = 2, s1 = 2, p0 = 1, p1 = 0;
        struct ggml_tensor * fwd = ggml_pool_2d(ctx, af, op, k0, k1, s0, s1, p0, p1);
        struct ggml_tensor * g = oc_rand(ctx, GGML_TYPE_F32, fwd->ne[0], fwd->ne[1], fwd->ne[2], fwd->ne[3], -1, 1);
        struct ggml_tensor * b = ggml_pool_2d_back(ctx, g, af, op, k0, k1, s0, s1, p0, p1);
        TH_CHECK(ggml_are_same_shape(b, af), "pool_2d_back shape");
        double * ref = oc_alloc_ref(b);
        for (int64_t i2 = 0; i2 < 2; i2++)
            for (int64_t oy = 0; oy < g->ne[1]; oy++) for (int64_t ox = 0; ox < g->ne[0]; ox++) {
                const double gv = oc_get(g, ox, oy, i2, 0);
                double best = -DBL_MAX; int64_t bx = -1, by = -1;
                for (int ky = 0; ky < k1; ky++) for (int kx = 0; kx < k0; kx++) {
                    const int64_t sx = ox * s0 - p0 + kx, sy = oy * s1 - p1 + ky;
                    if (sx < 0 || sy < 0 || sx >= 9 || sy >= 8) continue;
                    if (kind) { ref[(i2 * 8 + sy) * 9 + sx] += gv / (k0 * k1); continue; }
                    const double v = oc_get(af, sx, sy, i2, 0);
                    if (v > best) { best = v; bx = sx; by = sy; }
                }
                if (!kind && bx >= 0) ref[(i2 * 8 + by) * 9 + bx] += gv;
            }
        oc_run_check(ctx, kind ? "pool_2d_back avg" : "pool_2d_back max", b, ref, 1e-6, 1e-6);
        free(ref);
    }
    ggml_free(ctx);
}

// reference resampling in double, from the definitions of each mode
static double ref_sample(const struct ggml_tensor * x, uint32_t mode, int64_t i0, int64_t i1, int64_t i02, int64_t i03,
                         double sf0, double sf1, double po) {
    const int64_t W = x->ne[0], H = x->ne[1];
    const int m = (int) (mode & 0xFF);
#define CL(v, n) ((v) < 0 ? 0 : ((v) > (n) - 1 ? (n) - 1 : (v)))
    if (m == GGML_SCALE_MODE_NEAREST) {
        // llama.cpp picks the index as float(i) / float(sf), truncated: keep that rounding (1/(1/3.f) is 3 in float)
        return oc_get(x, (int64_t) ((float) i0 / (float) sf0), (int64_t) ((float) i1 / (float) sf1), i02, i03);
    }
    if (m == GGML_SCALE_MODE_BILINEAR && (mode & GGML_SCALE_FLAG_ANTIALIAS)) {
        const double sup0 = fmax(1.0, 1.0 / sf0), sup1 = fmax(1.0, 1.0 / sf1);
        const double x0 = (i0 + po) / sf0, y0 = (i1 + po) / sf1;
        double v = 0, tw = 0;
        for (int64_t sy = 0; sy < H; sy++) for (int64_t sx = 0; sx < W; sx++) {
            const double wx = fmax(0.0, 1.0 - fabs((sx - x0 + po) / sup0));
            const double wy = fmax(0.0, 1.0 - fabs((sy - y0 + po) / sup1));
            v += wx * wy * oc_get(x, sx, sy, i02, i03);
            tw += wx * wy;
        }
        return tw > 0 ? v / tw : v;
    }
    const double fx = (i0 + po) / sf0 - po, fy = (i1 + po) / sf1 - po;
    const int64_t xf = (int64_t) floor(fx), yf = (int64_t) floor(fy);
    if (m == GGML_SCALE_MODE_BILINEAR) {
        const int64_t xa = CL(xf, W), xb = CL(xf + 1, W), ya = CL(yf, H), yb = CL(yf + 1, H);
        const double dx = fmin(1, fmax(0, fx - xa)), dy = fmin(1, fmax(0, fy - ya));
        return oc_get(x, xa, ya, i02, i03) * (1 - dx) * (1 - dy) + oc_get(x, xb, ya, i02, i03) * dx * (1 - dy) +
               oc_get(x, xa, yb, i02, i03) * (1 - dx) * dy + oc_get(x, xb, yb, i02, i03) * dx * dy;
    }
    // bicubic: Keys kernel with a = -0.75 over the 4x4 neighbourhood, edges clamped
    const double a = -0.75;
    double wxs[4], wys[4];
    for (int j = 0; j < 4; j++) {
        const double tx = fabs(fx - (xf + j - 1)), ty = fabs(fy - (yf + j - 1));
        wxs[j] = tx <= 1 ? ((a + 2) * tx - (a + 3)) * tx * tx + 1 : ((a * tx - 5 * a) * tx + 8 * a) * tx - 4 * a;
        wys[j] = ty <= 1 ? ((a + 2) * ty - (a + 3)) * ty * ty + 1 : ((a * ty - 5 * a) * ty + 8 * a) * ty - 4 * a;
    }
    double v = 0;
    for (int j = 0; j < 4; j++) for (int i = 0; i < 4; i++)
        v += wys[j] * wxs[i] * oc_get(x, CL(xf + i - 1, W), CL(yf + j - 1, H), i02, i03);
    return v;
#undef CL
}

static void test_upscale(void) {
    struct ggml_context * ctx = oc_ctx(64);
    struct ggml_tensor * x = oc_rand_padded(ctx, GGML_TYPE_F32, 5, 4, 3, 2, -1, 1);
    const uint32_t modes[] = {
        GGML_SCALE_MODE_NEAREST, GGML_SCALE_MODE_BILINEAR, GGML_SCALE_MODE_BICUBIC,
        GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ALIGN_CORNERS, GGML_SCALE_MODE_BICUBIC | GGML_SCALE_FLAG_ALIGN_CORNERS,
        GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ANTIALIAS, GGML_SCALE_MODE_NEAREST | GGML_SCALE_FLAG_ALIGN_CORNERS,
    };
    const int64_t sizes[][4] = { { 11, 7, 3, 2 }, { 3, 2, 6, 2 }, { 5, 9, 3, 4 } }; // up, down (and ne2 x2), mixed
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        for (int sz = 0; sz < 3; sz++) {
            const int64_t * ne = sizes[sz];
            struct ggml_tensor * o = ggml_interpolate(ctx, x, ne[0], ne[1], ne[2], ne[3], modes[m]);
            TH_CHECK(o->op == GGML_OP_UPSCALE && o->op_params[0] == (int32_t) modes[m], "interpolate node");
            double sf0 = (double) ((float) ne[0] / 5), sf1 = (double) ((float) ne[1] / 4), po = 0.5;
            if (modes[m] & GGML_SCALE_FLAG_ALIGN_CORNERS) {
                po = 0;
                sf0 = (double) ((float) (ne[0] - 1) / 4);
                sf1 = (double) ((float) (ne[1] - 1) / 3);
            }
            double * ref = oc_alloc_ref(o);
            int64_t idx = 0;
            for (int64_t i3 = 0; i3 < ne[3]; i3++) for (int64_t i2 = 0; i2 < ne[2]; i2++)
                for (int64_t i1 = 0; i1 < ne[1]; i1++) for (int64_t i0 = 0; i0 < ne[0]; i0++, idx++)
                    ref[idx] = ref_sample(x, modes[m], i0, i1, (int64_t) ((float) i2 / ((float) ne[2] / 3)),
                                          (int64_t) ((float) i3 / ((float) ne[3] / 2)), sf0, sf1, po);
            char what[64];
            snprintf(what, sizeof(what), "interpolate mode 0x%x size %d", (unsigned) modes[m], sz);
            oc_run_check(ctx, what, o, ref, 1e-5, 1e-5);
            free(ref);
        }
    }
    // closed forms: nearest x2 repeats each pixel; align-corners bilinear of a ramp is the ramp resampled
    struct ggml_tensor * up = ggml_upscale(ctx, x, 2, GGML_SCALE_MODE_NEAREST);
    double * ref = oc_alloc_ref(up);
    int64_t idx = 0;
    for (int64_t i3 = 0; i3 < 2; i3++) for (int64_t i2 = 0; i2 < 3; i2++) for (int64_t i1 = 0; i1 < 8; i1++)
        for (int64_t i0 = 0; i0 < 10; i0++) ref[idx++] = oc_get(x, i0 / 2, i1 / 2, i2, i3);
    TH_CHECK(up->ne[0] == 10 && up->ne[1] == 8 && up->ne[2] == 3, "upscale shape");
    oc_run_check(ctx, "upscale nearest = repeat", up, ref, 0, 0);
    free(ref);
    struct ggml_tensor * ramp = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    for (int i1 = 0; i1 < 3; i1++) for (int i0 = 0; i0 < 4; i0++) ((float *) ramp->data)[i1 * 4 + i0] = (float) (i0 + 10 * i1);
    // ggml_upscale_ext is deprecated (as in llama.cpp) but must still work
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    struct ggml_tensor * rr = ggml_upscale_ext(ctx, ramp, 7, 5, 1, 1, (enum ggml_scale_mode) (GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ALIGN_CORNERS));
#pragma GCC diagnostic pop
    ref = oc_alloc_ref(rr);
    for (int i1 = 0; i1 < 5; i1++) for (int i0 = 0; i0 < 7; i0++) ref[i1 * 7 + i0] = i0 * 3.0 / 6.0 + 10 * (i1 * 2.0 / 4.0);
    oc_run_check(ctx, "bilinear align-corners of a ramp", rr, ref, 1e-5, 0);
    free(ref);
    ggml_free(ctx);
}

static void test_pad_timestep(void) {
    struct ggml_context * ctx = oc_ctx(64);
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, 6, 3, 2, 1, -1, 1);
    struct ggml_tensor * o = ggml_pad_reflect_1d(ctx, x, 3, 5);
    TH_CHECK(o->ne[0] == 14, "pad_reflect_1d shape");
    double * ref = oc_alloc_ref(o);
    int64_t idx = 0;
    for (int64_t r = 0; r < 6; r++) for (int64_t i = 0; i < 14; i++, idx++) {
        int64_t j = i - 3;
        j = j < 0 ? -j : (j > 5 ? 10 - j : j);
        ref[idx] = oc_get(x, j, r % 3, r / 3, 0);
    }
    oc_run_check(ctx, "pad_reflect_1d", o, ref, 0, 0);
    free(ref);

    struct ggml_tensor * ts = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    const float tv[4] = { 0.0f, 1.0f, 37.5f, 999.0f };
    memcpy(ts->data, tv, sizeof(tv));
    for (int dim = 7; dim <= 8; dim++) {
        struct ggml_tensor * e = ggml_timestep_embedding(ctx, ts, dim, 10000);
        TH_CHECK(e->ne[0] == dim && e->ne[1] == 4, "timestep_embedding shape");
        ref = oc_alloc_ref(e);
        const int half = dim / 2;
        for (int i = 0; i < 4; i++) for (int j = 0; j < half; j++) {
            const double f = exp(-log(10000.0) * j / half);
            ref[i * dim + j] = cos(tv[i] * f);
            ref[i * dim + j + half] = sin(tv[i] * f);
        }
        oc_run_check(ctx, "timestep_embedding", e, ref, 2e-3, 0); // float arguments up to ~1000 rad
        free(ref);
    }
    ggml_free(ctx);
}

static void test_windows_rel_pos(void) {
    struct ggml_context * ctx = oc_ctx(64);
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, 3, 7, 5, 1, -1, 1); // [C, W, H]
    const int w = 3;
    struct ggml_tensor * part = ggml_win_part(ctx, x, w);
    TH_CHECK(part->ne[1] == 3 && part->ne[2] == 3 && part->ne[3] == 3 * 2 && part->op_params[0] == 3 && part->op_params[1] == 2,
             "win_part shape/params");
    double * ref = oc_alloc_ref(part);
    int64_t idx = 0;
    for (int64_t win = 0; win < 6; win++) for (int64_t i2 = 0; i2 < w; i2++) for (int64_t i1 = 0; i1 < w; i1++)
        for (int64_t c = 0; c < 3; c++, idx++) {
            const int64_t sx = (win % 3) * w + i1, sy = (win / 3) * w + i2;
            ref[idx] = (sx < 7 && sy < 5) ? oc_get(x, c, sx, sy, 0) : 0.0;
        }
    oc_run_check(ctx, "win_part", part, ref, 0, 0);
    free(ref);
    struct ggml_tensor * un = ggml_win_unpart(ctx, part, 7, 5, w);
    ref = oc_alloc_ref(un);
    for (int64_t i = 0; i < ggml_nelements(x); i++) ref[i] = ((float *) x->data)[i];
    oc_run_check(ctx, "win_unpart(win_part(x)) == x", un, ref, 0, 0);
    free(ref);

    struct ggml_tensor * tab = oc_rand(ctx, GGML_TYPE_F16, 4, 2 * 5 - 1, 1, 1, -1, 1);
    struct ggml_tensor * rp = ggml_get_rel_pos(ctx, tab, 5, 5);
    TH_CHECK(rp->type == GGML_TYPE_F16 && rp->ne[1] == 5 && rp->ne[2] == 5, "get_rel_pos shape");
    ref = oc_alloc_ref(rp);
    idx = 0;
    for (int64_t q = 0; q < 5; q++) for (int64_t k = 0; k < 5; k++) for (int64_t c = 0; c < 4; c++) ref[idx++] = oc_get(tab, c, 5 - k - 1 + q, 0, 0);
    oc_run_check(ctx, "get_rel_pos", rp, ref, 0, 0);
    free(ref);

    // a [W*W, W*H, B] with per-(i11, i12, i13) blocks [y][x] += ph[y] + pw[x]
    const int64_t W = 3, Hh = 2, B = 3;
    for (int inplace = 0; inplace <= 1; inplace++) {
        struct ggml_tensor * a  = oc_rand(ctx, GGML_TYPE_F32, W * W, W * Hh, B, 1, -1, 1);
        struct ggml_tensor * pw = oc_rand(ctx, GGML_TYPE_F32, W, W, Hh, B, -1, 1);
        struct ggml_tensor * ph = oc_rand(ctx, GGML_TYPE_F32, W, W, Hh, B, -1, 1);
        ref = oc_alloc_ref(a);
        idx = 0;
        for (int64_t i13 = 0; i13 < B; i13++) for (int64_t i12 = 0; i12 < Hh; i12++) for (int64_t i11 = 0; i11 < W; i11++)
            for (int64_t y = 0; y < W; y++) for (int64_t xx = 0; xx < W; xx++, idx++)
                ref[idx] = ((float *) a->data)[idx] + oc_get(ph, y, i11, i12, i13) + oc_get(pw, xx, i11, i12, i13);
        struct ggml_tensor * o = inplace ? ggml_add_rel_pos_inplace(ctx, a, pw, ph) : ggml_add_rel_pos(ctx, a, pw, ph);
        TH_CHECK((o->data == a->data) == (inplace != 0) && o->op_params[0] == inplace, "add_rel_pos in place or not");
        // in place accumulates into a: compute once
        TH_CHECK(oc_compute(ctx, o, 2) == GGML_STATUS_SUCCESS, "add_rel_pos compute");
        oc_compare(inplace ? "add_rel_pos_inplace" : "add_rel_pos", 2, o, ref, 1e-6, 1e-6);
        if (!inplace) {
            TH_CHECK(oc_compute(ctx, o, 1) == GGML_STATUS_SUCCESS, "add_rel_pos compute");
            oc_compare("add_rel_pos", 1, o, ref, 1e-6, 1e-6);
        }
        free(ref);
    }
    ggml_free(ctx);
}

static void test_dump_dot(void) {
    struct ggml_context * ctx = oc_ctx(64);
    struct ggml_tensor * k = oc_rand(ctx, GGML_TYPE_F32, 3, 3, 2, 2, -1, 1);
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, 8, 8, 2, 1, -1, 1);
    ggml_set_name(k, "kernel");
    struct ggml_tensor * y = ggml_pool_2d(ctx, ggml_conv_2d(ctx, k, x, 1, 1, 1, 1, 1, 1), GGML_OP_POOL_MAX, 2, 2, 2, 2, 0, 0);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    char path[64];
    snprintf(path, sizeof(path), "/tmp/test-ggml-ops-dot-%d.dot", (int) getpid());
    ggml_graph_dump_dot(gf, NULL, path);
    size_t n = 0;
    char * text = th_read_file(path, &n);
    TH_CHECK(text != NULL, "dump_dot wrote %s", path);
    if (text) {
        int nodes = 0, edges = 0;
        for (char * p = text; (p = strstr(p, "shape = record")) != NULL; p++) nodes++;
        for (char * p = text; (p = strstr(p, " -> ")) != NULL; p++) edges++;
        int n_src = 0;
        for (int i = 0; i < ggml_graph_n_nodes(gf); i++)
            for (int j = 0; j < GGML_MAX_SRC; j++) n_src += ggml_graph_node(gf, i)->src[j] != NULL;
        TH_CHECK(strncmp(text, "digraph G {", 11) == 0 && strstr(text, "}\n") != NULL, "dump_dot is a digraph");
        TH_CHECK(nodes >= ggml_graph_n_nodes(gf) + 2 && edges == n_src, "dump_dot: %d records, %d edges (%d sources)", nodes, edges, n_src);
        TH_CHECK(strstr(text, "kernel (f32)") != NULL && strstr(text, "IM2COL") != NULL && strstr(text, "POOL_2D") != NULL,
                 "dump_dot labels name, type and op");
        free(text);
    }
    unlink(path);
    ggml_free(ctx);
}

int main(void) {
    test_pool();
    test_pool_back();
    test_upscale();
    test_pad_timestep();
    test_windows_rel_pos();
    test_dump_dot();
    return th_finish();
}
