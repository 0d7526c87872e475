// Convolution op constructors: im2col (1D/2D/3D) and its gradient, the direct convolution ops (CONV_2D,
// CONV_3D, CONV_2D_DW, CONV_TRANSPOSE_1D/2D) and the composite convolutions that llama.cpp builds from
// im2col + mul_mat (so graphs hold the same ops). Shapes, op_params layouts and asserts follow llama.cpp.

#include "ggml-graph.h"

#define RETURN_IF_NULL(t) do { if ((t) == NULL) { return NULL; } } while (0)

static int64_t conv_out_size(int64_t ins, int64_t ks, int s, int p, int d) {
    return (ins + 2 * p - d * (ks - 1) - 1) / s + 1;
}

// ---- im2col ----------------------------------------------------------------------------------------------

struct ggml_tensor * ggml_im2col(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                 int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D, enum ggml_type dst_type) {
    if (is_2D) {
        GGML_ASSERT(a->ne[2] == b->ne[2]);
    } else {
        GGML_ASSERT(b->ne[1] == a->ne[1]);
        GGML_ASSERT(b->ne[3] == 1);
    }
    GGML_ASSERT(s0 > 0 && (!is_2D || s1 > 0));
    const int64_t OH = is_2D ? conv_out_size(b->ne[1], a->ne[1], s1, p1, d1) : 0;
    const int64_t OW = conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    GGML_ASSERT((!is_2D || OH > 0) && "b too small compared to a");
    GGML_ASSERT((OW > 0) && "b too small compared to a");

    const int64_t ne[4] = {
        is_2D ? a->ne[2] * a->ne[1] * a->ne[0] : a->ne[1] * a->ne[0],
        OW,
        is_2D ? OH : b->ne[2],
        is_2D ? b->ne[3] : 1,
    };
    struct ggml_tensor * r = ggml_new_tensor(ctx, dst_type, 4, ne);
    RETURN_IF_NULL(r);
    const int32_t params[] = { s0, s1, p0, p1, d0, d1, is_2D ? 1 : 0 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_IM2COL;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// llama.cpp's CPU kernel reads src[0] as the gradient and src[1] as the kernel (that is how its backward pass
// calls it), whatever the header comment says; we keep that layout
struct ggml_tensor * ggml_im2col_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      int64_t * ne, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D) {
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    const int32_t params[] = { s0, s1, p0, p1, d0, d1, is_2D ? 1 : 0 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_IM2COL_BACK;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_im2col_3d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t IC,
                                    int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2,
                                    enum ggml_type dst_type) {
    GGML_ASSERT(IC > 0 && b->ne[3] % IC == 0);
    const int64_t N  = b->ne[3] / IC;
    const int64_t OD = conv_out_size(b->ne[2], a->ne[2], s2, p2, d2);
    const int64_t OH = conv_out_size(b->ne[1], a->ne[1], s1, p1, d1);
    const int64_t OW = conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    GGML_ASSERT((OD > 0) && "b too small compared to a");
    GGML_ASSERT((OH > 0) && "b too small compared to a");
    GGML_ASSERT((OW > 0) && "b too small compared to a");

    const int64_t ne[4] = { a->ne[0] * a->ne[1] * a->ne[2] * IC, OW, OH, OD * N };
    struct ggml_tensor * r = ggml_new_tensor(ctx, dst_type, 4, ne);
    RETURN_IF_NULL(r);
    const int32_t params[] = { s0, s1, s2, p0, p1, p2, d0, d1, d2, (int32_t) IC };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_IM2COL_3D;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// ---- composite convolutions (im2col + mul_mat) -----------------------------------------------------------

struct ggml_tensor * ggml_conv_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0) {
    struct ggml_tensor * im2col = ggml_im2col(ctx, a, b, s0, 0, p0, 0, d0, 0, false, GGML_TYPE_F16); // [N, OL, IC*K]
    RETURN_IF_NULL(im2col);
    struct ggml_tensor * cols = ggml_reshape_2d(ctx, im2col, im2col->ne[0], im2col->ne[2] * im2col->ne[1]);
    RETURN_IF_NULL(cols);
    struct ggml_tensor * kern = ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1], a->ne[2]);
    RETURN_IF_NULL(kern);
    struct ggml_tensor * r = ggml_mul_mat(ctx, cols, kern); // [OC, N*OL] seen as [N*OL, OC]
    RETURN_IF_NULL(r);
    return ggml_reshape_3d(ctx, r, im2col->ne[1], a->ne[2], im2col->ne[2]); // [N, OC, OL]
}

struct ggml_tensor * ggml_conv_1d_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s, int d) {
    return ggml_conv_1d(ctx, a, b, s, (int) (a->ne[0] / 2), d);
}

struct ggml_tensor * ggml_conv_1d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0) {
    struct ggml_tensor * new_b = ggml_reshape_4d(ctx, b, b->ne[0], 1, b->ne[1], b->ne[2]);
    RETURN_IF_NULL(new_b);
    struct ggml_tensor * im2col = ggml_im2col(ctx, a, new_b, s0, 0, p0, 0, d0, 0, false, GGML_TYPE_F16);
    RETURN_IF_NULL(im2col);
    struct ggml_tensor * r = ggml_mul_mat(ctx, im2col, a);
    RETURN_IF_NULL(r);
    return ggml_reshape_3d(ctx, r, r->ne[0], r->ne[2], 1);
}

struct ggml_tensor * ggml_conv_1d_dw_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int d0) {
    return ggml_conv_1d_dw(ctx, a, b, s0, (int) (a->ne[0] / 2), d0);
}

struct ggml_tensor * ggml_conv_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                  int s0, int s1, int p0, int p1, int d0, int d1) {
    struct ggml_tensor * im2col = ggml_im2col(ctx, a, b, s0, s1, p0, p1, d0, d1, true, a->type); // [N, OH, OW, IC*KH*KW]
    RETURN_IF_NULL(im2col);
    struct ggml_tensor * cols = ggml_reshape_2d(ctx, im2col, im2col->ne[0], im2col->ne[3] * im2col->ne[2] * im2col->ne[1]);
    RETURN_IF_NULL(cols);
    struct ggml_tensor * kern = ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2], a->ne[3]);
    RETURN_IF_NULL(kern);
    struct ggml_tensor * r = ggml_mul_mat(ctx, cols, kern);
    RETURN_IF_NULL(r);
    r = ggml_reshape_4d(ctx, r, im2col->ne[1], im2col->ne[2], im2col->ne[3], a->ne[3]); // [OC, N, OH, OW]
    RETURN_IF_NULL(r);
    r = ggml_permute(ctx, r, 0, 1, 3, 2);
    RETURN_IF_NULL(r);
    return ggml_cont(ctx, r); // [N, OC, OH, OW]
}

struct ggml_tensor * ggml_conv_3d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t IC,
                                  int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2) {
    struct ggml_tensor * im2col = ggml_im2col_3d(ctx, a, b, IC, s0, s1, s2, p0, p1, p2, d0, d1, d2, a->type);
    RETURN_IF_NULL(im2col);
    const int64_t OC = a->ne[3] / IC;
    const int64_t N  = b->ne[3] / IC;
    struct ggml_tensor * cols = ggml_reshape_2d(ctx, im2col, im2col->ne[0], im2col->ne[3] * im2col->ne[2] * im2col->ne[1]);
    RETURN_IF_NULL(cols);
    struct ggml_tensor * kern = ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2] * IC, OC);
    RETURN_IF_NULL(kern);
    struct ggml_tensor * r = ggml_mul_mat(ctx, cols, kern);
    RETURN_IF_NULL(r);
    const int64_t OD = im2col->ne[3] / N;
    r = ggml_reshape_4d(ctx, r, im2col->ne[1] * im2col->ne[2], OD, N, OC); // [OC, N, OD, OH*OW]
    RETURN_IF_NULL(r);
    r = ggml_permute(ctx, r, 0, 1, 3, 2);
    RETURN_IF_NULL(r);
    r = ggml_cont(ctx, r); // [N, OC, OD, OH*OW]
    RETURN_IF_NULL(r);
    return ggml_reshape_4d(ctx, r, im2col->ne[1], im2col->ne[2], OD, OC * N); // [N*OC, OD, OH, OW]
}

struct ggml_tensor * ggml_conv_2d_sk_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return ggml_conv_2d(ctx, a, b, (int) a->ne[0], (int) a->ne[1], 0, 0, 1, 1);
}

struct ggml_tensor * ggml_conv_2d_s1_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return ggml_conv_2d(ctx, a, b, 1, 1, (int) (a->ne[0] / 2), (int) (a->ne[1] / 2), 1, 1);
}

struct ggml_tensor * ggml_conv_2d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     int s0, int s1, int p0, int p1, int d0, int d1) {
    struct ggml_tensor * new_a = ggml_reshape_4d(ctx, a, a->ne[0], a->ne[1], 1, a->ne[2] * a->ne[3]);
    RETURN_IF_NULL(new_a);
    struct ggml_tensor * new_bi = ggml_reshape_4d(ctx, b, b->ne[0], b->ne[1], 1, b->ne[2] * b->ne[3]);
    RETURN_IF_NULL(new_bi);
    struct ggml_tensor * im2col = ggml_im2col(ctx, new_a, new_bi, s0, s1, p0, p1, d0, d1, true, GGML_TYPE_F16); // [N*IC, OH, OW, KH*KW]
    RETURN_IF_NULL(im2col);
    struct ggml_tensor * new_b = ggml_reshape_4d(ctx, im2col, im2col->ne[0], im2col->ne[2] * im2col->ne[1], b->ne[2], b->ne[3]);
    RETURN_IF_NULL(new_b);
    new_a = ggml_reshape_4d(ctx, new_a, new_a->ne[0] * new_a->ne[1], new_a->ne[2], new_a->ne[3], 1); // [1, OC, 1, KH*KW]
    RETURN_IF_NULL(new_a);
    struct ggml_tensor * r = ggml_mul_mat(ctx, new_a, new_b);
    RETURN_IF_NULL(r);
    return ggml_reshape_4d(ctx, r, im2col->ne[1], im2col->ne[2], b->ne[2], b->ne[3]); // [N, OC, OH, OW]
}

// ---- direct convolutions ---------------------------------------------------------------------------------

struct ggml_tensor * ggml_conv_2d_dw_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                            int stride0, int stride1, int pad0, int pad1, int dilation0, int dilation1) {
    GGML_ASSERT(a->ne[2] == 1);
    GGML_ASSERT(a->ne[3] == b->ne[2]);
    const int64_t ne[4] = {
        conv_out_size(b->ne[0], a->ne[0], stride0, pad0, dilation0),
        conv_out_size(b->ne[1], a->ne[1], stride1, pad1, dilation1),
        b->ne[2],
        b->ne[3],
    };
    struct ggml_tensor * r = ggml_new_tensor(ctx, b->type, 4, ne);
    RETURN_IF_NULL(r);
    if (ggml_is_contiguous_channels(b)) {
        // the result is laid out like the input: channels innermost (CWHN)
        GGML_ASSERT(ggml_blck_size(r->type) == 1);
        const size_t ts = ggml_type_size(r->type);
        r->nb[0] = (size_t) r->ne[2] * ts;
        r->nb[1] = (size_t) r->ne[0] * r->nb[0];
        r->nb[2] = ts;
    }
    const int32_t params[] = { stride0, stride1, pad0, pad1, dilation0, dilation1 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_CONV_2D_DW;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_conv_2d_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                         int s0, int s1, int p0, int p1, int d0, int d1) {
    GGML_ASSERT(a->ne[2] == b->ne[2]);
    const int64_t ne[4] = {
        conv_out_size(b->ne[0], a->ne[0], s0, p0, d0),
        conv_out_size(b->ne[1], a->ne[1], s1, p1, d1),
        a->ne[3],
        b->ne[3],
    };
    struct ggml_tensor * r = ggml_new_tensor(ctx, b->type, 4, ne);
    RETURN_IF_NULL(r);
    const int32_t params[] = { s0, s1, p0, p1, d0, d1 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_CONV_2D;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_conv_3d_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                         int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2,
                                         int c, int n, int oc) {
    GGML_ASSERT(a->ne[3] == (int64_t) c * oc);
    GGML_ASSERT(b->ne[3] == (int64_t) c * n);
    const int64_t ne[4] = {
        conv_out_size(b->ne[0], a->ne[0], s0, p0, d0),
        conv_out_size(b->ne[1], a->ne[1], s1, p1, d1),
        conv_out_size(b->ne[2], a->ne[2], s2, p2, d2),
        (int64_t) oc * n,
    };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    const int32_t params[] = { s0, s1, s2, p0, p1, p2, d0, d1, d2, c, n, oc };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_CONV_3D;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// ---- transposed convolutions -----------------------------------------------------------------------------

struct ggml_tensor * ggml_conv_transpose_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                            int s0, int p0, int d0) {
    GGML_ASSERT(ggml_is_matrix(b));
    GGML_ASSERT(a->ne[2] == b->ne[1]);
    GGML_ASSERT(a->ne[3] == 1);
    GGML_ASSERT(p0 == 0);
    GGML_ASSERT(d0 == 1);
    const int64_t ne[4] = { (b->ne[0] - 1) * s0 + a->ne[0], a->ne[1], b->ne[2], 1 };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    const int32_t params[] = { s0, p0, d0 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_CONV_TRANSPOSE_1D;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_conv_transpose_2d_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int stride) {
    GGML_ASSERT(a->ne[3] == b->ne[2]);
    const int64_t ne[4] = {
        (b->ne[0] - 1) * stride + a->ne[0],
        (b->ne[1] - 1) * stride + a->ne[1],
        a->ne[2],
        b->ne[3],
    };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, stride);
    r->op     = GGML_OP_CONV_TRANSPOSE_2D;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}
