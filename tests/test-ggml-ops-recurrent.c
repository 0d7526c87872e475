// SSM_CONV, SSM_SCAN (Mamba-1 and Mamba-2), RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7 and multi-section ROPE
// (ggml_rope_multi: MROPE, IMROPE, VISION; ggml_rope_custom) on the CPU, 1 to 3 threads, against scalar
// double-precision references written here from each op's definition.

#include "ggml-ops-check.h"

// ---- SSM_CONV --------------------------------------------------------------------------------------------

static void test_ssm_conv(int nth, bool delta) {
    struct ggml_context * ctx = oc_ctx(4);
    const int64_t d_conv = 4, n_t = 5, d_inner = 7, n_s = 2;
    struct ggml_tensor * sx = oc_rand(ctx, GGML_TYPE_F32, d_conv - 1 + n_t, d_inner, n_s, 1, -1, 1);
    struct ggml_tensor * c  = oc_rand(ctx, GGML_TYPE_F32, d_conv, d_inner, 1, 1, -1, 1);
    if (delta) {
        // a kernel that picks the newest sample: the conv is a shift by d_conv - 1
        for (int64_t i = 0; i < d_inner; i++)
            for (int64_t k = 0; k < d_conv; k++) oc_set(c, k, i, 0, 0, k == d_conv - 1 ? 1.0f : 0.0f);
    }
    struct ggml_tensor * r = ggml_ssm_conv(ctx, sx, c);
    TH_CHECK(r->ne[0] == d_inner && r->ne[1] == n_t && r->ne[2] == n_s, "ssm_conv shape");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "ssm_conv compute");
    double * ref = oc_alloc_ref(r);
    for (int64_t s = 0; s < n_s; s++)
        for (int64_t t = 0; t < n_t; t++)
            for (int64_t i = 0; i < d_inner; i++) {
                double sum = 0.0;
                for (int64_t k = 0; k < d_conv; k++) sum += oc_get(sx, t + k, i, s, 0) * oc_get(c, k, i, 0, 0);
                ref[i + d_inner * (t + n_t * s)] = delta ? oc_get(sx, t + d_conv - 1, i, s, 0) : sum;
            }
    oc_compare(delta ? "ssm_conv delta kernel = shift" : "ssm_conv", nth, r, ref, 1e-6, 1e-6);
    free(ref);
    ggml_free(ctx);
}

// ---- SSM_SCAN --------------------------------------------------------------------------------------------

static double softplus_d(double x) { return x > 20.0 ? x : log1p(exp(x)); }

static void test_ssm_scan(int nth, bool mamba2) {
    struct ggml_context * ctx = oc_ctx(8);
    const int64_t d_state = 5, head_dim = 3, n_head = 4, n_group = 2, n_t = 3, n_seqs = 2, n_rows = 3;
    struct ggml_tensor * s  = oc_rand(ctx, GGML_TYPE_F32, d_state, head_dim, n_head, n_rows, -1, 1);
    struct ggml_tensor * x  = oc_rand(ctx, GGML_TYPE_F32, head_dim, n_head, n_t, n_seqs, -1, 1);
    struct ggml_tensor * dt = oc_rand(ctx, GGML_TYPE_F32, n_head, n_t, n_seqs, 1, -2, 1);
    struct ggml_tensor * A  = oc_rand(ctx, GGML_TYPE_F32, mamba2 ? 1 : d_state, n_head, 1, 1, -1.5f, -0.1f);
    struct ggml_tensor * B  = oc_rand(ctx, GGML_TYPE_F32, d_state, n_group, n_t, n_seqs, -1, 1);
    struct ggml_tensor * C  = oc_rand(ctx, GGML_TYPE_F32, d_state, n_group, n_t, n_seqs, -1, 1);
    struct ggml_tensor * ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_seqs);
    ((int32_t *) ids->data)[0] = 2; // sequences read state rows out of order
    ((int32_t *) ids->data)[1] = 0;
    struct ggml_tensor * r = ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids);
    const int64_t ny = head_dim * n_head * n_t * n_seqs, nst = d_state * head_dim * n_head;
    TH_CHECK(r->ne[0] == ny + nst * n_seqs && r->ne[1] == 1, "ssm_scan shape");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "ssm_scan compute");

    double * ref = oc_alloc_ref(r);
    double * st = malloc(sizeof(double) * (size_t) nst);
    for (int64_t q = 0; q < n_seqs; q++) {
        const int32_t row = ((int32_t *) ids->data)[q];
        for (int64_t j = 0; j < d_state; j++)
            for (int64_t i = 0; i < head_dim; i++)
                for (int64_t h = 0; h < n_head; h++) st[j + d_state * (i + head_dim * h)] = oc_get(s, j, i, h, row);
        for (int64_t t = 0; t < n_t; t++) {
            for (int64_t h = 0; h < n_head; h++) {
                const double d = softplus_d(oc_get(dt, h, t, q, 0));
                const int64_t g = h / (n_head / n_group);
                for (int64_t i = 0; i < head_dim; i++) {
                    double y = 0.0;
                    for (int64_t j = 0; j < d_state; j++) {
                        const double a = oc_get(A, mamba2 ? 0 : j, h, 0, 0);
                        double * sv = &st[j + d_state * (i + head_dim * h)];
                        *sv = *sv * exp(d * a) + oc_get(B, j, g, t, q) * oc_get(x, i, h, t, q) * d;
                        y += *sv * oc_get(C, j, g, t, q);
                    }
                    ref[i + head_dim * (h + n_head * (t + n_t * q))] = y;
                }
            }
        }
        for (int64_t k = 0; k < nst; k++) ref[ny + q * nst + k] = st[k];
    }
    oc_compare(mamba2 ? "ssm_scan mamba-2" : "ssm_scan mamba-1", nth, r, ref, 1e-5, 1e-5);
    free(st);
    free(ref);
    ggml_free(ctx);
}

// ---- RWKV_WKV6 / GATED_LINEAR_ATTN / RWKV_WKV7 -----------------------------------------------------------

enum wkv_kind { WKV6, GLA, WKV7 };

static void test_wkv(int nth, enum wkv_kind kind, int64_t n_seqs) {
    struct ggml_context * ctx = oc_ctx(8);
    const int64_t S = 4, H = 3, T = 3 * n_seqs;
    struct ggml_tensor * k = oc_rand(ctx, GGML_TYPE_F32, S, H, T, 1, -1, 1);
    struct ggml_tensor * v = oc_rand(ctx, GGML_TYPE_F32, S, H, T, 1, -1, 1);
    struct ggml_tensor * r = oc_rand(ctx, GGML_TYPE_F32, S, H, T, 1, -1, 1); // r (wkv6, wkv7) or q (gla)
    struct ggml_tensor * w = oc_rand(ctx, GGML_TYPE_F32, S, H, T, 1, 0.5f, 1); // td / g / w: decays
    struct ggml_tensor * tf = oc_rand(ctx, GGML_TYPE_F32, S, H, 1, 1, -1, 1);
    struct ggml_tensor * a = oc_rand(ctx, GGML_TYPE_F32, S, H, T, 1, -0.5f, 0.5f);
    struct ggml_tensor * b = oc_rand(ctx, GGML_TYPE_F32, S, H, T, 1, -0.5f, 0.5f);
    struct ggml_tensor * state = oc_rand(ctx, GGML_TYPE_F32, S * S * H, n_seqs, 1, 1, -1, 1);
    const float scale = 0.6f;
    struct ggml_tensor * out = kind == WKV6 ? ggml_rwkv_wkv6(ctx, k, v, r, tf, w, state)
                             : kind == GLA  ? ggml_gated_linear_attn(ctx, k, v, r, w, state, scale)
                                            : ggml_rwkv_wkv7(ctx, r, w, k, v, a, b, state);
    TH_CHECK(out->ne[0] == S * H && out->ne[1] == T + S * n_seqs, "wkv shape");
    TH_CHECK(oc_compute(ctx, out, nth) == GGML_STATUS_SUCCESS, "wkv compute");

    double * ref = oc_alloc_ref(out);
    double st[4][4];
#define E(t_, tok, h, i) oc_get(t_, i, h, tok, 0)
    for (int64_t q = 0; q < n_seqs; q++) {
        for (int64_t h = 0; h < H; h++) {
            // st[i][j]: key (wkv6, gla) or value (wkv7) index i, the other index j
            for (int64_t i = 0; i < S; i++)
                for (int64_t j = 0; j < S; j++) st[i][j] = oc_get(state, h * S * S + i * S + j, q, 0, 0);
            for (int64_t t = q * (T / n_seqs); t < (q + 1) * (T / n_seqs); t++) {
                for (int64_t o = 0; o < S; o++) {
                    double y = 0.0;
                    if (kind == WKV6) {
                        // y_j = sum_i r_i (u_i k_i v_j + S_ij);  S_ij <- w_i S_ij + k_i v_j
                        for (int64_t i = 0; i < S; i++)
                            y += E(r, t, h, i) * (oc_get(tf, i, h, 0, 0) * E(k, t, h, i) * E(v, t, h, o) + st[i][o]);
                    }
                    if (kind != WKV7) {
                        ref[h * S + o + S * H * t] = y;
                    }
                }
                if (kind == WKV7) {
                    for (int64_t i = 0; i < S; i++) {
                        double sa = 0.0, y = 0.0;
                        for (int64_t j = 0; j < S; j++) sa += E(a, t, h, j) * st[i][j];
                        for (int64_t j = 0; j < S; j++) {
                            st[i][j] = st[i][j] * E(w, t, h, j) + E(v, t, h, i) * E(k, t, h, j) + sa * E(b, t, h, j);
                            y += st[i][j] * E(r, t, h, j);
                        }
                        ref[h * S + i + S * H * t] = y;
                    }
                } else {
                    for (int64_t i = 0; i < S; i++)
                        for (int64_t j = 0; j < S; j++) st[i][j] = st[i][j] * E(w, t, h, i) + E(k, t, h, i) * E(v, t, h, j);
                    if (kind == GLA) {
                        // y_j = scale * sum_i q_i S_ij (after the update)
                        for (int64_t j = 0; j < S; j++) {
                            double y = 0.0;
                            for (int64_t i = 0; i < S; i++) y += st[i][j] * E(r, t, h, i);
                            ref[h * S + j + S * H * t] = scale * y;
                        }
                    }
                }
            }
            for (int64_t i = 0; i < S; i++)
                for (int64_t j = 0; j < S; j++) ref[S * H * T + q * S * S * H + h * S * S + i * S + j] = st[i][j];
        }
    }
#undef E
    char name[64];
    snprintf(name, sizeof(name), "%s, %lld sequences", kind == WKV6 ? "rwkv_wkv6" : kind == GLA ? "gated_linear_attn" : "rwkv_wkv7",
             (long long) n_seqs);
    oc_compare(name, nth, out, ref, 1e-5, 1e-5);
    free(ref);
    ggml_free(ctx);
}

// ---- multi-section ROPE ----------------------------------------------------------------------------------

static void rope_multi_case(int nth, int mode, enum ggml_type type, bool freq_factors, bool inplace) {
    struct ggml_context * ctx = oc_ctx(8);
    const bool vision = mode == GGML_ROPE_TYPE_VISION;
    const int64_t ne0 = vision ? 16 : 20, n_head = 3, n_tok = 5;
    const int n_dims = vision ? 8 : 12; // MROPE/IMROPE rotate 12 of 20 (the rest is copied)
    int sections[4] = { 2, 2, 1, 1 };
    if (vision) {
        sections[0] = 2; sections[1] = 2; sections[2] = 2; sections[3] = 2;
    }
    const float base = 1000.0f;
    struct ggml_tensor * x = oc_rand(ctx, type, ne0, n_head, n_tok, 1, -1, 1);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4 * n_tok);
    for (int64_t i = 0; i < 4 * n_tok; i++) ((int32_t *) pos->data)[i] = (int32_t) (oc_uniform(0, 50));
    struct ggml_tensor * ff = NULL;
    if (freq_factors) {
        ff = oc_rand(ctx, GGML_TYPE_F32, vision ? n_dims : n_dims / 2, 1, 1, 1, 0.5f, 2);
    }
    // the reference angles and the rotated pairs
    const int64_t n_pairs = vision ? ne0 / 2 : n_dims / 2;
    const int sect_dims = sections[0] + sections[1] + sections[2] + sections[3];
    double * ref = calloc((size_t) (ne0 * n_head * n_tok), sizeof(double));
    for (int64_t t = 0; t < n_tok; t++) {
        for (int64_t p = 0; p < n_pairs; p++) {
            const int sector = (int) (p % sect_dims);
            int which; // 0 t, 1 h, 2 w, 3 e
            int start; // the first pair of its section (VISION counts frequencies from there)
            if (mode == GGML_ROPE_TYPE_IMROPE) {
                which = (sector % 3 == 1 && sector < 3 * sections[1]) ? 1
                      : (sector % 3 == 2 && sector < 3 * sections[2]) ? 2
                      : (sector % 3 == 0 && sector < 3 * sections[0]) ? 0 : 3;
                start = 0;
            } else {
                which = 0;
                start = 0;
                for (int k = 0, acc = 0; k < 4; acc += sections[k], k++) {
                    if (sector >= acc) {
                        which = k;
                        start = acc;
                    }
                }
            }
            const int64_t fidx = vision ? sector - start : p;
            double theta = ((int32_t *) pos->data)[t + which * n_tok] * pow(base, -2.0 * (double) fidx / n_dims);
            if (ff) theta /= ((float *) ff->data)[p];
            const int64_t ia = p, ib = vision ? p + n_dims : p + n_dims / 2;
            for (int64_t h = 0; h < n_head; h++) {
                const double x0 = oc_get(x, ia, h, t, 0), x1 = oc_get(x, ib, h, t, 0);
                ref[ia + ne0 * (h + n_head * t)] = x0 * cos(theta) - x1 * sin(theta);
                ref[ib + ne0 * (h + n_head * t)] = x0 * sin(theta) + x1 * cos(theta);
            }
        }
        for (int64_t h = 0; h < n_head; h++)
            for (int64_t i = vision ? ne0 : n_dims; i < ne0; i++) ref[i + ne0 * (h + n_head * t)] = oc_get(x, i, h, t, 0);
    }
    struct ggml_tensor * r = inplace ? ggml_rope_multi_inplace(ctx, x, pos, ff, n_dims, sections, mode, 0, base, 1, 0, 1, 0, 0)
                                     : ggml_rope_multi(ctx, x, pos, ff, n_dims, sections, mode, 0, base, 1, 0, 1, 0, 0);
    TH_CHECK(r->op_params[11] == sections[0] && r->op_params[14] == sections[3] && r->op_params[2] == mode,
             "rope_multi op_params");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "rope_multi compute");
    char name[80];
    snprintf(name, sizeof(name), "rope_multi mode %d %s%s%s", mode, ggml_type_name(type), freq_factors ? " ff" : "",
             inplace ? " inplace" : "");
    const double tol = type == GGML_TYPE_F16 ? 2e-3 : 1e-5;
    oc_compare(name, nth, r, ref, tol, tol);
    free(ref);
    ggml_free(ctx);
}

static void test_rope_custom(int nth) {
    struct ggml_context * ctx = oc_ctx(4);
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, 8, 2, 3, 1, -1, 1);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    for (int i = 0; i < 3; i++) ((int32_t *) pos->data)[i] = 3 * i + 1;
#if defined(__GNUC__)
#    pragma GCC diagnostic push
#    pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
    struct ggml_tensor * rc = ggml_rope_custom(ctx, x, pos, 6, GGML_ROPE_TYPE_NEOX, 64, 5000, 0.5f, 1, 1, 32, 1);
#if defined(__GNUC__)
#    pragma GCC diagnostic pop
#endif
    struct ggml_tensor * re = ggml_rope_ext(ctx, x, pos, NULL, 6, GGML_ROPE_TYPE_NEOX, 64, 5000, 0.5f, 1, 1, 32, 1);
    TH_CHECK(memcmp(rc->op_params, re->op_params, sizeof(rc->op_params)) == 0, "rope_custom == rope_ext op_params");
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, rc);
    ggml_build_forward_expand(g, re);
    TH_CHECK(ggml_graph_compute_with_ctx(ctx, g, nth) == GGML_STATUS_SUCCESS, "rope_custom compute");
    TH_CHECK(memcmp(rc->data, re->data, ggml_nbytes(rc)) == 0, "rope_custom == rope_ext result");

    // refused cleanly: sections that do not fit, VISION with n_dims != ne0/2
    struct ggml_tensor * p4 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 12);
    memset(p4->data, 0, ggml_nbytes(p4));
    int too_many[4] = { 4, 4, 4, 0 };
    TH_CHECK(oc_compute(ctx, ggml_rope_multi(ctx, x, p4, NULL, 8, too_many, GGML_ROPE_TYPE_MROPE, 0, 1e4f, 1, 0, 1, 0, 0), 1) ==
             GGML_STATUS_FAILED, "mrope sections beyond the row -> FAILED");
    int secs[4] = { 1, 1, 1, 1 };
    TH_CHECK(oc_compute(ctx, ggml_rope_multi(ctx, x, p4, NULL, 8, secs, GGML_ROPE_TYPE_VISION, 0, 1e4f, 1, 0, 1, 0, 0), 1) ==
             GGML_STATUS_FAILED, "vision rope with n_dims != ne0/2 -> FAILED");
    ggml_free(ctx);
}

// closed form: the backward rope rotates by the opposite angle, so back(rope(x)) = x (no YaRN scaling here)
static void test_rope_back(int nth) {
    struct ggml_context * ctx = oc_ctx(8);
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, 16, 3, 4, 1, -1, 1);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    struct ggml_tensor * pos4 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 16);
    for (int i = 0; i < 16; i++) ((int32_t *) pos4->data)[i] = 7 * i % 23;
    memcpy(pos->data, pos4->data, 4 * sizeof(int32_t));
    struct ggml_tensor * ff = oc_rand(ctx, GGML_TYPE_F32, 8, 1, 1, 1, 0.5f, 2);
    int sec[4] = { 3, 2, 2, 1 };
    struct ggml_tensor * outs[5];
    outs[0] = ggml_rope_ext_back(ctx, ggml_rope_ext(ctx, x, pos, NULL, 12, 0, 0, 1e4f, 1, 0, 1, 0, 0), pos, NULL, 12, 0, 0, 1e4f, 1, 0, 1, 0, 0);
    outs[1] = ggml_rope_ext_back(ctx, ggml_rope_ext(ctx, x, pos, ff, 16, GGML_ROPE_TYPE_NEOX, 0, 1e4f, 0.5f, 0, 1, 0, 0),
                                 pos, ff, 16, GGML_ROPE_TYPE_NEOX, 0, 1e4f, 0.5f, 0, 1, 0, 0);
    const int modes[3] = { GGML_ROPE_TYPE_MROPE, GGML_ROPE_TYPE_IMROPE, GGML_ROPE_TYPE_VISION };
    for (int m = 0; m < 3; m++) {
        const int nd = modes[m] == GGML_ROPE_TYPE_VISION ? 8 : 12;
        outs[2 + m] = ggml_rope_multi_back(ctx, ggml_rope_multi(ctx, x, pos4, NULL, nd, sec, modes[m], 0, 1e4f, 1, 0, 1, 0, 0),
                                           pos4, NULL, nd, sec, modes[m], 0, 1e4f, 1, 0, 1, 0, 0);
    }
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    for (int i = 0; i < 5; i++) {
        TH_CHECK(outs[i]->op == GGML_OP_ROPE_BACK, "rope back op");
        ggml_build_forward_expand(g, outs[i]);
    }
    TH_CHECK(ggml_graph_compute_with_ctx(ctx, g, nth) == GGML_STATUS_SUCCESS, "rope back compute");
    double * ref = oc_alloc_ref(x);
    for (int64_t i = 0; i < ggml_nelements(x); i++) ref[i] = ((const float *) x->data)[i];
    const char * names[5] = { "rope_ext_back(rope_ext) = x normal", "rope_ext_back(rope_ext) = x neox ff",
                              "rope_multi_back = x mrope", "rope_multi_back = x imrope", "rope_multi_back = x vision" };
    for (int i = 0; i < 5; i++) oc_compare(names[i], nth, outs[i], ref, 1e-5, 1e-5);
    free(ref);
    ggml_free(ctx);
}

int main(void) {
    ggml_log_set(NULL, NULL);
    for (int nth = 1; nth <= 3; nth++) {
        test_ssm_conv(nth, false);
        test_ssm_conv(nth, true);
        test_ssm_scan(nth, true);
        test_ssm_scan(nth, false);
        for (int kind = WKV6; kind <= WKV7; kind++) {
            test_wkv(nth, (enum wkv_kind) kind, 1);
            test_wkv(nth, (enum wkv_kind) kind, 2);
        }
        const int modes[3] = { GGML_ROPE_TYPE_MROPE, GGML_ROPE_TYPE_IMROPE, GGML_ROPE_TYPE_VISION };
        for (int m = 0; m < 3; m++) {
            rope_multi_case(nth, modes[m], GGML_TYPE_F32, false, false);
            rope_multi_case(nth, modes[m], GGML_TYPE_F32, true, false);
            rope_multi_case(nth, modes[m], GGML_TYPE_F16, false, true);
        }
        test_rope_custom(nth);
        test_rope_back(nth);
    }
    return th_finish();
}
