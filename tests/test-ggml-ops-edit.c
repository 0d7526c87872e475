// ACC, SET (and the 1d/2d/inplace forms), DIAG, OUT_PROD, GROUP_NORM and the plain gradient ops (REPEAT_BACK,
// SILU_BACK, RMS_NORM_BACK, GET_ROWS_BACK, SOFT_MAX_BACK) on the CPU, 1 to 3 threads, against scalar
// double-precision references written here from each op's definition.

#include "ggml-ops-check.h"

#define ROW(t, i1, i2, i3) (((i3) * (t)->ne[2] + (i2)) * (t)->ne[1] + (i1))

// ---- ACC / SET -------------------------------------------------------------------------------------------

// a is contiguous F32; the reference: a copy of a, then b written into (or added to) the byte view
static void edit_case(int nth, bool acc, bool inplace, int form, bool b_transposed) {
    struct ggml_context * ctx = oc_ctx(16);
    struct ggml_tensor * a = oc_rand(ctx, GGML_TYPE_F32, 9, 6, 4, 2, -1, 1);
    struct ggml_tensor * b = b_transposed ? oc_rand_transposed(ctx, GGML_TYPE_F32, 4, 3, 2, 2, -1, 1)
                                          : oc_rand(ctx, GGML_TYPE_F32, 4, 3, 2, 2, -1, 1);
    // the view: rows 2 apart, planes one a-plane apart, offset of 5 elements
    size_t nb1 = 2 * a->nb[1], nb2 = a->nb[2], nb3 = a->nb[3], offset = 5 * sizeof(float);
    if (form == 1) { // set_1d: strides of a
        b = oc_rand(ctx, GGML_TYPE_F32, 7, 1, 1, 1, -1, 1);
        nb1 = a->nb[1]; nb2 = a->nb[2]; nb3 = a->nb[3];
    } else if (form == 2) { // set_2d: own row stride
        b = oc_rand(ctx, GGML_TYPE_F32, 4, 5, 1, 1, -1, 1);
        nb2 = a->nb[2]; nb3 = a->nb[3];
    }
    double * ref = oc_alloc_ref(a);
    for (int64_t i = 0; i < ggml_nelements(a); i++) {
        ref[i] = ((const float *) a->data)[i];
    }
    for (int64_t i3 = 0; i3 < b->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < b->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < b->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < b->ne[0]; i0++) {
                    const size_t byte = offset + i0 * sizeof(float) + i1 * nb1 + i2 * nb2 + i3 * nb3;
                    const double v = oc_get(b, i0, i1, i2, i3);
                    ref[byte / sizeof(float)] = acc ? ref[byte / sizeof(float)] + v : v;
                }
    struct ggml_tensor * r;
    if (acc) {
        r = inplace ? ggml_acc_inplace(ctx, a, b, nb1, nb2, nb3, offset) : ggml_acc(ctx, a, b, nb1, nb2, nb3, offset);
    } else if (form == 1) {
        r = inplace ? ggml_set_1d_inplace(ctx, a, b, offset) : ggml_set_1d(ctx, a, b, offset);
    } else if (form == 2) {
        r = inplace ? ggml_set_2d_inplace(ctx, a, b, nb1, offset) : ggml_set_2d(ctx, a, b, nb1, offset);
    } else {
        r = inplace ? ggml_set_inplace(ctx, a, b, nb1, nb2, nb3, offset) : ggml_set(ctx, a, b, nb1, nb2, nb3, offset);
    }
    TH_CHECK(r->op == (acc ? GGML_OP_ACC : GGML_OP_SET) && ggml_are_same_shape(r, a), "edit result shape/op");
    TH_CHECK(r->op_params[0] == (int32_t) nb1 && r->op_params[3] == (int32_t) offset && r->op_params[4] == (inplace ? 1 : 0),
             "edit op_params layout");
    TH_CHECK((r->view_src == a) == inplace, "edit inplace is a view of a");
    const float a_first = ((const float *) a->data)[0];
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "edit compute");
    char name[64];
    snprintf(name, sizeof(name), "%s form %d%s%s", acc ? "acc" : "set", form, inplace ? " inplace" : "",
             b_transposed ? " b transposed" : "");
    oc_compare(name, nth, r, ref, 1e-6, 1e-6);
    if (!inplace) {
        TH_CHECK(((const float *) a->data)[0] == a_first, "non-inplace edit leaves a alone");
    }
    free(ref);
    ggml_free(ctx);
}

static void test_edit_errors(void) {
    struct ggml_context * ctx = oc_ctx(4);
    struct ggml_tensor * a = oc_rand(ctx, GGML_TYPE_F32, 8, 4, 1, 1, -1, 1);
    struct ggml_tensor * b = oc_rand(ctx, GGML_TYPE_F32, 8, 2, 1, 1, -1, 1);
    // the view runs past the end of a: refused before anything is written
    struct ggml_tensor * r = ggml_set_2d(ctx, a, b, a->nb[1], 3 * a->nb[1]);
    TH_CHECK(oc_compute(ctx, r, 2) == GGML_STATUS_FAILED, "set view past the end -> GGML_STATUS_FAILED");
    struct ggml_tensor * r2 = ggml_acc(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], 2 * a->nb[1] + 4);
    TH_CHECK(oc_compute(ctx, r2, 1) == GGML_STATUS_FAILED, "acc view past the end -> GGML_STATUS_FAILED");
    ggml_free(ctx);
}

// ---- DIAG ------------------------------------------------------------------------------------------------

static void test_diag(int nth) {
    struct ggml_context * ctx = oc_ctx(4);
    struct ggml_tensor * a = oc_rand(ctx, GGML_TYPE_F32, 5, 1, 3, 2, -1, 1);
    struct ggml_tensor * r = ggml_diag(ctx, a);
    TH_CHECK(r->ne[0] == 5 && r->ne[1] == 5 && r->ne[2] == 3 && r->ne[3] == 2, "diag shape");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "diag compute");
    double * ref = oc_alloc_ref(r);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < 2; i3++)
        for (int64_t i2 = 0; i2 < 3; i2++)
            for (int64_t i1 = 0; i1 < 5; i1++)
                for (int64_t i0 = 0; i0 < 5; i0++, k++) {
                    ref[k] = i0 == i1 ? oc_get(a, i0, 0, i2, i3) : 0.0;
                }
    oc_compare("diag", nth, r, ref, 0, 0);
    free(ref);
    ggml_free(ctx);
}

// ---- OUT_PROD --------------------------------------------------------------------------------------------

static void out_prod_case(int nth, enum ggml_type ta, int64_t m, bool b_transposed) {
    struct ggml_context * ctx = oc_ctx(16);
    const int64_t n = 5, p = 7;
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, ta, m, n, 2, 1);
    struct ggml_tensor * b = b_transposed ? oc_rand_transposed(ctx, GGML_TYPE_F32, p, n, 4, 3, -1, 1)
                                          : oc_rand(ctx, GGML_TYPE_F32, p, n, 4, 3, -1, 1);
    // the values of a as the kernel sees them (quantized rows through the type's own dequantization)
    float * av = malloc(sizeof(float) * (size_t) (m * n * 2));
    for (int64_t i = 0; i < m * n * 2; i++) {
        av[i] = oc_uniform(-1, 1);
    }
    if (ta == GGML_TYPE_F32 || ta == GGML_TYPE_F16) {
        for (int64_t i = 0; i < m * n * 2; i++) {
            oc_set(a, i % m, (i / m) % n, i / (m * n), 0, av[i]);
            av[i] = (float) oc_get(a, i % m, (i / m) % n, i / (m * n), 0);
        }
    } else {
        ggml_quantize_chunk(ta, av, a->data, 0, n * 2, m, NULL);
        ggml_get_type_traits(ta)->to_float(a->data, av, m * n * 2);
    }
    struct ggml_tensor * r = ggml_out_prod(ctx, a, b);
    TH_CHECK(r->type == GGML_TYPE_F32 && r->ne[0] == m && r->ne[1] == p && r->ne[2] == 4 && r->ne[3] == 3, "out_prod shape");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "out_prod compute");
    double * ref = oc_alloc_ref(r);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < 3; i3++)
        for (int64_t i2 = 0; i2 < 4; i2++)
            for (int64_t i1 = 0; i1 < p; i1++)
                for (int64_t i0 = 0; i0 < m; i0++, k++) {
                    double s = 0.0;
                    for (int64_t j = 0; j < n; j++) {
                        s += (double) av[i0 + m * (j + n * (i2 / 2))] * oc_get(b, i1, j, i2, i3);
                    }
                    ref[k] = s;
                }
    char name[64];
    snprintf(name, sizeof(name), "out_prod %s m=%lld%s", ggml_type_name(ta), (long long) m, b_transposed ? " b transposed" : "");
    oc_compare(name, nth, r, ref, 1e-5, 1e-5);
    free(ref);
    free(av);
    ggml_free(ctx);
}

static void test_out_prod_closed_form(void) {
    // the outer product of two vectors: r[i, j] = a[i] * b[j]
    struct ggml_context * ctx = oc_ctx(4);
    struct ggml_tensor * a = oc_rand(ctx, GGML_TYPE_F32, 3, 1, 1, 1, -2, 2);
    struct ggml_tensor * b = oc_rand(ctx, GGML_TYPE_F32, 4, 1, 1, 1, -2, 2);
    struct ggml_tensor * r = ggml_out_prod(ctx, a, b);
    TH_CHECK(oc_compute(ctx, r, 1) == GGML_STATUS_SUCCESS, "outer product compute");
    bool ok = true;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            ok = ok && oc_get(r, i, j, 0, 0) == (double) ((float) oc_get(a, i, 0, 0, 0) * (float) oc_get(b, j, 0, 0, 0));
    TH_CHECK(ok, "outer product of vectors");
    // src1 of a type the CPU cannot read is refused cleanly
    struct ggml_tensor * bi = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 4, 1);
    memset(bi->data, 0, ggml_nbytes(bi));
    TH_CHECK(oc_compute(ctx, ggml_out_prod(ctx, a, bi), 1) == GGML_STATUS_FAILED, "out_prod with I32 b -> FAILED");
    ggml_free(ctx);
}

// ---- GROUP_NORM ------------------------------------------------------------------------------------------

static void group_norm_case(int nth, int n_groups, bool inplace) {
    struct ggml_context * ctx = oc_ctx(4);
    struct ggml_tensor * a = oc_rand(ctx, GGML_TYPE_F32, 5, 3, 7, 2, -2, 3);
    const float eps = 1e-5f;
    double * ref = oc_alloc_ref(a);
    const int64_t per = (7 + n_groups - 1) / n_groups;
    for (int64_t i3 = 0; i3 < 2; i3++) {
        for (int64_t c0 = 0; c0 < 7; c0 += per) {
            const int64_t c1 = c0 + per < 7 ? c0 + per : 7;
            double mean = 0.0, var = 0.0;
            const double cnt = 5.0 * 3.0 * (double) (c1 - c0);
            for (int64_t c = c0; c < c1; c++)
                for (int64_t i1 = 0; i1 < 3; i1++)
                    for (int64_t i0 = 0; i0 < 5; i0++) mean += oc_get(a, i0, i1, c, i3);
            mean /= cnt;
            for (int64_t c = c0; c < c1; c++)
                for (int64_t i1 = 0; i1 < 3; i1++)
                    for (int64_t i0 = 0; i0 < 5; i0++) {
                        const double d = oc_get(a, i0, i1, c, i3) - mean;
                        var += d * d;
                    }
            var /= cnt;
            for (int64_t c = c0; c < c1; c++)
                for (int64_t i1 = 0; i1 < 3; i1++)
                    for (int64_t i0 = 0; i0 < 5; i0++)
                        ref[i0 + 5 * (i1 + 3 * (c + 7 * i3))] = (oc_get(a, i0, i1, c, i3) - mean) / sqrt(var + eps);
        }
    }
    struct ggml_tensor * r = inplace ? ggml_group_norm_inplace(ctx, a, n_groups, eps) : ggml_group_norm(ctx, a, n_groups, eps);
    TH_CHECK(r->op_params[0] == n_groups && ggml_get_op_params_f32(r, 1) == eps, "group_norm op_params");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "group_norm compute");
    char name[64];
    snprintf(name, sizeof(name), "group_norm %d groups%s", n_groups, inplace ? " inplace" : "");
    oc_compare(name, nth, r, ref, 1e-5, 1e-5);
    free(ref);
    ggml_free(ctx);
}

// ---- gradient ops ----------------------------------------------------------------------------------------

static void test_repeat_back(int nth) {
    struct ggml_context * ctx = oc_ctx(4);
    struct ggml_tensor * a = oc_rand_transposed(ctx, GGML_TYPE_F32, 6, 4, 6, 2, -1, 1);
    struct ggml_tensor * shape = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 3, 1);
    struct ggml_tensor * r = ggml_repeat_back(ctx, a, shape);
    TH_CHECK(ggml_are_same_shape(r, shape), "repeat_back shape");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "repeat_back compute");
    double * ref = oc_alloc_ref(r);
    for (int64_t i3 = 0; i3 < 2; i3++)
        for (int64_t i2 = 0; i2 < 6; i2++)
            for (int64_t i1 = 0; i1 < 4; i1++)
                for (int64_t i0 = 0; i0 < 6; i0++)
                    ref[(i0 % 3) + 3 * ((i1 % 2) + 2 * ((i2 % 3) + 3 * (i3 % 1)))] += oc_get(a, i0, i1, i2, i3);
    oc_compare("repeat_back", nth, r, ref, 1e-5, 1e-5);
    free(ref);

    // closed form: summing the repetitions of repeat(x) gives x times the number of repetitions
    struct ggml_tensor * x = oc_rand(ctx, GGML_TYPE_F32, 3, 2, 1, 1, -1, 1);
    struct ggml_tensor * big = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 6, 2, 1);
    struct ggml_tensor * rb = ggml_repeat_back(ctx, ggml_repeat(ctx, x, big), x);
    TH_CHECK(oc_compute(ctx, rb, nth) == GGML_STATUS_SUCCESS, "repeat_back(repeat) compute");
    double * ref2 = oc_alloc_ref(x);
    for (int i = 0; i < 6; i++) ref2[i] = 12.0 * ((const float *) x->data)[i];
    oc_compare("repeat_back(repeat(x)) = 12 x", nth, rb, ref2, 1e-6, 1e-6);
    free(ref2);
    ggml_free(ctx);
}

static void test_silu_back(int nth) {
    struct ggml_context * ctx = oc_ctx(4);
    struct ggml_tensor * dy = oc_rand(ctx, GGML_TYPE_F32, 7, 5, 3, 1, -1, 1);
    struct ggml_tensor * x  = oc_rand_transposed(ctx, GGML_TYPE_F32, 7, 5, 3, 1, -4, 4);
    struct ggml_tensor * r = ggml_silu_back(ctx, dy, x);
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "silu_back compute");
    double * ref = oc_alloc_ref(r);
    int64_t k = 0;
    for (int64_t i2 = 0; i2 < 3; i2++)
        for (int64_t i1 = 0; i1 < 5; i1++)
            for (int64_t i0 = 0; i0 < 7; i0++, k++) {
                // d/dx (x * sigmoid(x)) = s + x * s * (1 - s)
                const double xv = oc_get(x, i0, i1, i2, 0), s = 1.0 / (1.0 + exp(-xv));
                ref[k] = oc_get(dy, i0, i1, i2, 0) * (s + xv * s * (1.0 - s));
            }
    oc_compare("silu_back", nth, r, ref, 1e-5, 1e-5);
    free(ref);
    ggml_free(ctx);
}

static void test_rms_norm_back(int nth) {
    struct ggml_context * ctx = oc_ctx(4);
    const int64_t n = 13;
    struct ggml_tensor * dz = oc_rand(ctx, GGML_TYPE_F32, n, 4, 2, 1, -1, 1);
    struct ggml_tensor * x  = oc_rand(ctx, GGML_TYPE_F32, n, 4, 2, 1, -2, 2);
    const float eps = 1e-3f;
    struct ggml_tensor * r = ggml_rms_norm_back(ctx, dz, x, eps);
    TH_CHECK(ggml_get_op_params_f32(r, 0) == eps, "rms_norm_back eps");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "rms_norm_back compute");
    double * ref = oc_alloc_ref(r);
    for (int64_t row = 0; row < 8; row++) {
        const int64_t i1 = row % 4, i2 = row / 4;
        // y_i = x_i * q, q = (mean(x^2) + eps)^(-1/2); dy_i/dx_j = delta_ij q - x_i x_j q^3 / n
        double ms = 0.0, dot = 0.0;
        for (int64_t i = 0; i < n; i++) {
            ms  += oc_get(x, i, i1, i2, 0) * oc_get(x, i, i1, i2, 0);
            dot += oc_get(x, i, i1, i2, 0) * oc_get(dz, i, i1, i2, 0);
        }
        const double q = 1.0 / sqrt(ms / (double) n + eps);
        for (int64_t j = 0; j < n; j++) {
            ref[j + n * row] = oc_get(dz, j, i1, i2, 0) * q - oc_get(x, j, i1, i2, 0) * q * q * q * dot / (double) n;
        }
    }
    oc_compare("rms_norm_back", nth, r, ref, 1e-5, 1e-5);
    free(ref);
    ggml_free(ctx);
}

static void test_get_rows_back(int nth, enum ggml_type ta) {
    struct ggml_context * ctx = oc_ctx(4);
    struct ggml_tensor * a = oc_rand(ctx, ta, 4, 6, 1, 1, -1, 1);
    struct ggml_tensor * idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 6);
    const int32_t rows[6] = { 3, 0, 3, 4, 0, 3 };
    memcpy(idx->data, rows, sizeof(rows));
    struct ggml_tensor * c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5);
    struct ggml_tensor * r = ggml_get_rows_back(ctx, a, idx, c);
    TH_CHECK(r->type == GGML_TYPE_F32 && ggml_are_same_shape(r, c), "get_rows_back shape");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "get_rows_back compute");
    double * ref = oc_alloc_ref(r);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++) ref[j + 4 * rows[i]] += oc_get(a, j, i, 0, 0);
    oc_compare(ta == GGML_TYPE_F16 ? "get_rows_back f16" : "get_rows_back", nth, r, ref, 1e-6, 1e-6);
    free(ref);
    ggml_free(ctx);
}

static void test_soft_max_back(int nth, bool inplace) {
    struct ggml_context * ctx = oc_ctx(4);
    const int64_t n = 9;
    const float scale = 0.7f;
    struct ggml_tensor * dy = oc_rand(ctx, GGML_TYPE_F32, n, 3, 2, 1, -1, 1);
    struct ggml_tensor * y  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n, 3, 2, 1);
    double * ref = oc_alloc_ref(dy);
    for (int64_t row = 0; row < 6; row++) {
        double l[16], sum = 0.0;
        for (int64_t i = 0; i < n; i++) {
            l[i] = exp(scale * oc_uniform(-3, 3));
            sum += l[i];
        }
        for (int64_t i = 0; i < n; i++) ((float *) y->data)[i + n * row] = (float) (l[i] / sum);
        // y = softmax(scale * x): dx_j = scale * sum_i dy_i y_i (delta_ij - y_j)
        for (int64_t j = 0; j < n; j++) {
            double s = 0.0;
            for (int64_t i = 0; i < n; i++) {
                const double yi = ((float *) y->data)[i + n * row], yj = ((float *) y->data)[j + n * row];
                s += ((float *) dy->data)[i + n * row] * yi * ((i == j ? 1.0 : 0.0) - yj);
            }
            ref[j + n * row] = scale * s;
        }
    }
    struct ggml_tensor * r = inplace ? ggml_soft_max_ext_back_inplace(ctx, dy, y, scale, 0.0f)
                                     : ggml_soft_max_ext_back(ctx, dy, y, scale, 0.0f);
    TH_CHECK(ggml_get_op_params_f32(r, 0) == scale && (r->view_src == dy) == inplace, "soft_max_ext_back params/view");
    TH_CHECK(oc_compute(ctx, r, nth) == GGML_STATUS_SUCCESS, "soft_max_ext_back compute");
    oc_compare(inplace ? "soft_max_ext_back inplace" : "soft_max_ext_back", nth, r, ref, 1e-5, 1e-5);
    free(ref);
    ggml_free(ctx);
}

int main(void) {
    ggml_log_set(NULL, NULL);
    for (int nth = 1; nth <= 3; nth++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            edit_case(nth, true, inplace, 0, false);
            edit_case(nth, true, inplace, 0, true);
            edit_case(nth, false, inplace, 0, false);
            edit_case(nth, false, inplace, 0, true);
            edit_case(nth, false, inplace, 1, false);
            edit_case(nth, false, inplace, 2, false);
            group_norm_case(nth, 3, inplace);
            test_soft_max_back(nth, inplace);
        }
        group_norm_case(nth, 1, false);
        group_norm_case(nth, 7, false);
        test_diag(nth);
        out_prod_case(nth, GGML_TYPE_F32, 6, false);
        out_prod_case(nth, GGML_TYPE_F32, 5, true);
        out_prod_case(nth, GGML_TYPE_F16, 6, true);
        out_prod_case(nth, GGML_TYPE_Q8_0, 64, false);
        out_prod_case(nth, GGML_TYPE_Q4_K, 256, false);
        test_repeat_back(nth);
        test_silu_back(nth);
        test_rms_norm_back(nth);
        test_get_rows_back(nth, GGML_TYPE_F32);
        test_get_rows_back(nth, GGML_TYPE_F16);
    }
    test_out_prod_closed_form();
    test_edit_errors();
    return th_finish();
}
