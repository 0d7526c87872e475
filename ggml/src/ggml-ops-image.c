// Image-style op constructors: pooling (1D, 2D and the 2D gradient), resampling (upscale / interpolate),
// reflection padding, timestep embeddings, and the windowing / relative-position ops of SAM-style encoders.
// Shapes, op_params layouts and asserts follow llama.cpp.

#include "ggml-graph.h"

#define RETURN_IF_NULL(t) do { if ((t) == NULL) { return NULL; } } while (0)

// ---- pooling ---------------------------------------------------------------------------------------------

// p is a float in llama.cpp's signature; the size is computed in floating point then truncated
static int64_t pool_out_size(int64_t ins, int ks, int s, float p) {
    return (int64_t) ((ins + 2 * p - ks) / s + 1);
}

struct ggml_tensor * ggml_pool_1d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op, int k0, int s0, int p0) {
    GGML_ASSERT(s0 > 0);
    const int64_t ne[4] = { pool_out_size(a->ne[0], k0, s0, (float) p0), a->ne[1], a->ne[2], a->ne[3] };
    GGML_ASSERT(ne[0] > 0);
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    const int32_t params[] = { op, k0, s0, p0 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_POOL_1D;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_pool_2d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op,
                                  int k0, int k1, int s0, int s1, float p0, float p1) {
    GGML_ASSERT(s0 > 0 && s1 > 0);
    const int64_t ne[4] = {
        pool_out_size(a->ne[0], k0, s0, p0),
        pool_out_size(a->ne[1], k1, s1, p1),
        a->ne[2],
        a->ne[3],
    };
    GGML_ASSERT(ne[0] > 0);
    GGML_ASSERT(ne[1] > 0);
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    // llama.cpp stores the float paddings truncated into the int32 params
    const int32_t params[] = { op, k0, k1, s0, s1, (int32_t) p0, (int32_t) p1 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_POOL_2D;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_pool_2d_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * af,
                                       enum ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1) {
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, af->ne);
    RETURN_IF_NULL(r);
    const int32_t params[] = { op, k0, k1, s0, s1, (int32_t) p0, (int32_t) p1 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_POOL_2D_BACK;
    r->src[0] = a;
    r->src[1] = af;
    return r;
}

// ---- upscale / interpolate -------------------------------------------------------------------------------

static struct ggml_tensor * interpolate_impl(struct ggml_context * ctx, struct ggml_tensor * a,
                                             int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, uint32_t mode) {
    GGML_ASSERT((mode & 0xFF) < GGML_SCALE_MODE_COUNT);
    // antialiasing is only defined for bilinear
    GGML_ASSERT(!(mode & GGML_SCALE_FLAG_ANTIALIAS) || (mode & 0xFF) == GGML_SCALE_MODE_BILINEAR);
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    struct ggml_tensor * r = ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3);
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, (int32_t) mode);
    r->op     = GGML_OP_UPSCALE;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_upscale(struct ggml_context * ctx, struct ggml_tensor * a, int scale_factor, enum ggml_scale_mode mode) {
    GGML_ASSERT(scale_factor > 1);
    return interpolate_impl(ctx, a, a->ne[0] * scale_factor, a->ne[1] * scale_factor, a->ne[2], a->ne[3], (uint32_t) mode);
}

struct ggml_tensor * ggml_upscale_ext(struct ggml_context * ctx, struct ggml_tensor * a, int ne0, int ne1, int ne2, int ne3,
                                      enum ggml_scale_mode mode) {
    return interpolate_impl(ctx, a, ne0, ne1, ne2, ne3, (uint32_t) mode);
}

struct ggml_tensor * ggml_interpolate(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                      int64_t ne2, int64_t ne3, uint32_t mode) {
    return interpolate_impl(ctx, a, ne0, ne1, ne2, ne3, mode);
}

// ---- padding / embeddings --------------------------------------------------------------------------------

struct ggml_tensor * ggml_pad_reflect_1d(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1) {
    GGML_ASSERT(p0 >= 0);
    GGML_ASSERT(p1 >= 0);
    GGML_ASSERT(p0 < a->ne[0]); // a reflection cannot be longer than the row it mirrors
    GGML_ASSERT(p1 < a->ne[0]);
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    struct ggml_tensor * r = ggml_new_tensor_4d(ctx, a->type, a->ne[0] + p0 + p1, a->ne[1], a->ne[2], a->ne[3]);
    RETURN_IF_NULL(r);
    const int32_t params[] = { p0, p1 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_PAD_REFLECT_1D;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_timestep_embedding(struct ggml_context * ctx, struct ggml_tensor * timesteps, int dim, int max_period) {
    struct ggml_tensor * r = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, dim, timesteps->ne[0]);
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, dim);
    ggml_set_op_params_i32(r, 1, max_period);
    r->op     = GGML_OP_TIMESTEP_EMBEDDING;
    r->src[0] = timesteps;
    return r;
}

// ---- windows and relative positions (SAM) ----------------------------------------------------------------

struct ggml_tensor * ggml_win_part(struct ggml_context * ctx, struct ggml_tensor * a, int w) {
    GGML_ASSERT(a->ne[3] == 1);
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    GGML_ASSERT(w > 0);
    const int px  = (int) ((w - a->ne[1] % w) % w); // padding
    const int py  = (int) ((w - a->ne[2] % w) % w);
    const int npx = (int) ((px + a->ne[1]) / w);
    const int npy = (int) ((py + a->ne[2]) / w);
    const int64_t ne[4] = { a->ne[0], w, w, (int64_t) npx * npy };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    const int32_t params[] = { npx, npy, w };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_WIN_PART;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_win_unpart(struct ggml_context * ctx, struct ggml_tensor * a, int w0, int h0, int w) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    GGML_ASSERT(w > 0);
    const int64_t ne[4] = { a->ne[0], w0, h0, 1 };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 3, ne);
    RETURN_IF_NULL(r);
    const int32_t params[] = { w };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_WIN_UNPART;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_get_rel_pos(struct ggml_context * ctx, struct ggml_tensor * a, int qh, int kh) {
    GGML_ASSERT(qh == kh);
    GGML_ASSERT(2 * (int64_t) (qh > kh ? qh : kh) - 1 == a->ne[1]);
    const int64_t ne[4] = { a->ne[0], kh, qh, 1 };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F16, 3, ne);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_GET_REL_POS;
    r->src[0] = a;
    return r;
}

static struct ggml_tensor * add_rel_pos_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw,
                                             struct ggml_tensor * ph, bool inplace) {
    GGML_ASSERT(ggml_are_same_shape(pw, ph));
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(ggml_is_contiguous(pw));
    GGML_ASSERT(ggml_is_contiguous(ph));
    GGML_ASSERT(ph->type == GGML_TYPE_F32);
    GGML_ASSERT(pw->type == GGML_TYPE_F32);
    GGML_ASSERT(pw->ne[3] == a->ne[2]);
    GGML_ASSERT(pw->ne[0] * pw->ne[0] == a->ne[0]);
    GGML_ASSERT(pw->ne[1] * pw->ne[2] == a->ne[1]);
    struct ggml_tensor * r = inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, inplace ? 1 : 0);
    r->op     = GGML_OP_ADD_REL_POS;
    r->src[0] = a;
    r->src[1] = pw;
    r->src[2] = ph;
    return r;
}

struct ggml_tensor * ggml_add_rel_pos(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw, struct ggml_tensor * ph) {
    return add_rel_pos_impl(ctx, a, pw, ph, false);
}

struct ggml_tensor * ggml_add_rel_pos_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw,
                                              struct ggml_tensor * ph) {
    return add_rel_pos_impl(ctx, a, pw, ph, true);
}
