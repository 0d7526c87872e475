// Op constructors for tensor edits (acc, set, diag), out_prod, group_norm and the plain "backward" ops that
// forward-only programs may still build (repeat_back, silu_back, rms_norm_back, get_rows_back,
// soft_max_ext_back). Shapes, op_params layouts and inplace/view behaviour follow llama.cpp's ggml.c.

#include "ggml-graph.h"

#include <string.h>

#define RETURN_IF_NULL(t) do { if ((t) == NULL) { return NULL; } } while (0)

static struct ggml_tensor * result_like(struct ggml_context * ctx, struct ggml_tensor * a, bool inplace) {
    return inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
}

// ---- acc / set: b is written into (acc: added to) the view of a given by strides nb1..nb3 and offset ------
// op_params (i32): { nb1, nb2, nb3, offset, inplace }

static struct ggml_tensor * view_edit_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                           size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace,
                                           enum ggml_op op) {
    GGML_ASSERT(offset < (size_t) (1u << 30));
    GGML_ASSERT(nb1 <= INT32_MAX && nb2 <= INT32_MAX && nb3 <= INT32_MAX);
    struct ggml_tensor * r = result_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    const int32_t params[5] = { (int32_t) nb1, (int32_t) nb2, (int32_t) nb3, (int32_t) offset, inplace ? 1 : 0 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = op;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

static struct ggml_tensor * acc_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace) {
    GGML_ASSERT(ggml_nelements(b) <= ggml_nelements(a));
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    GGML_ASSERT(b->type == GGML_TYPE_F32);
    return view_edit_impl(ctx, a, b, nb1, nb2, nb3, offset, inplace, GGML_OP_ACC);
}

struct ggml_tensor * ggml_acc(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                              size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return acc_impl(ctx, a, b, nb1, nb2, nb3, offset, false);
}

struct ggml_tensor * ggml_acc_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return acc_impl(ctx, a, b, nb1, nb2, nb3, offset, true);
}

static struct ggml_tensor * set_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace) {
    GGML_ASSERT(ggml_nelements(a) >= ggml_nelements(b));
    return view_edit_impl(ctx, a, b, nb1, nb2, nb3, offset, inplace, GGML_OP_SET);
}

struct ggml_tensor * ggml_set(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                              size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return set_impl(ctx, a, b, nb1, nb2, nb3, offset, false);
}

struct ggml_tensor * ggml_set_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return set_impl(ctx, a, b, nb1, nb2, nb3, offset, true);
}

struct ggml_tensor * ggml_set_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t offset) {
    return set_impl(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], offset, false);
}

struct ggml_tensor * ggml_set_1d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t offset) {
    return set_impl(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], offset, true);
}

struct ggml_tensor * ggml_set_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t offset) {
    return set_impl(ctx, a, b, nb1, a->nb[2], a->nb[3], offset, false);
}

struct ggml_tensor * ggml_set_2d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t offset) {
    return set_impl(ctx, a, b, nb1, a->nb[2], a->nb[3], offset, true);
}

// ---- diag: a row vector [n, 1, ne2, ne3] -> the diagonal matrices [n, n, ne2, ne3] -----------------------

struct ggml_tensor * ggml_diag(struct ggml_context * ctx, struct ggml_tensor * a) {
    GGML_ASSERT(a->ne[1] == 1);
    const int64_t ne[4] = { a->ne[0], a->ne[0], a->ne[2], a->ne[3] };
    struct ggml_tensor * r = ggml_new_tensor(ctx, a->type, 4, ne);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_DIAG;
    r->src[0] = a;
    return r;
}

// ---- out_prod: a [m, n, ...] x b [p, n, ...] -> F32 [m, p, b->ne2, b->ne3] (sum over n) ------------------

struct ggml_tensor * ggml_out_prod(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(a->ne[1] == b->ne[1] && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0);
    GGML_ASSERT(!ggml_is_transposed(a));
    const int64_t ne[4] = { a->ne[0], b->ne[0], b->ne[2], b->ne[3] };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_OUT_PROD;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// ---- group_norm: normalize over ne0*ne1*(channels of a group); op_params { i32 n_groups, f32 eps } -------

static struct ggml_tensor * group_norm_impl(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps, bool inplace) {
    struct ggml_tensor * r = result_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, n_groups);
    ggml_set_op_params_f32(r, 1, eps);
    r->op     = GGML_OP_GROUP_NORM;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_group_norm(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps) {
    return group_norm_impl(ctx, a, n_groups, eps, false);
}

struct ggml_tensor * ggml_group_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps) {
    return group_norm_impl(ctx, a, n_groups, eps, true);
}

// ---- backward ops that are plain forward computations ---------------------------------------------------

// sums the repetitions of a into the shape of b
struct ggml_tensor * ggml_repeat_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_can_repeat(b, a));
    struct ggml_tensor * r = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, b->ne);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_REPEAT_BACK;
    r->src[0] = a;
    return r;
}

// src[0] = gradient dy, src[1] = x (the CPU kernel reads them in this order, as llama.cpp's backward pass
// builds them: ggml_silu_back(ctx, grad, x))
struct ggml_tensor * ggml_silu_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    struct ggml_tensor * r = ggml_dup_tensor(ctx, a);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_SILU_BACK;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// src[0] = gradient dz, src[1] = x; op_params { f32 eps }
struct ggml_tensor * ggml_rms_norm_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float eps) {
    struct ggml_tensor * r = ggml_dup_tensor(ctx, a);
    RETURN_IF_NULL(r);
    ggml_set_op_params_f32(r, 0, eps);
    r->op     = GGML_OP_RMS_NORM_BACK;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// scatter-add of the rows of a into a zero F32 matrix shaped like c, at the row indices b
struct ggml_tensor * ggml_get_rows_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c) {
    GGML_ASSERT(ggml_is_matrix(a) && ggml_is_vector(b) && b->type == GGML_TYPE_I32);
    GGML_ASSERT(ggml_is_matrix(c) && a->ne[0] == c->ne[0]);
    struct ggml_tensor * r = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, c->ne[0], c->ne[1]);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_GET_ROWS_BACK;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// src[0] = gradient dy, src[1] = the softmax output y; op_params { f32 scale, f32 max_bias }
static struct ggml_tensor * soft_max_back_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                               float scale, float max_bias, bool inplace) {
    struct ggml_tensor * r = result_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    ggml_set_op_params_f32(r, 0, scale);
    ggml_set_op_params_f32(r, 1, max_bias);
    r->op     = GGML_OP_SOFT_MAX_BACK;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_soft_max_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                            float scale, float max_bias) {
    return soft_max_back_impl(ctx, a, b, scale, max_bias, false);
}

struct ggml_tensor * ggml_soft_max_ext_back_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                    float scale, float max_bias) {
    return soft_max_back_impl(ctx, a, b, scale, max_bias, true);
}
