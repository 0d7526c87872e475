// Op constructors for training: the cross-entropy loss and its gradient, the gradient of attention
// (flash_attn_back), and the optimizer steps (AdamW, SGD) that update a parameter tensor in place. Operand order,
// shapes and checks follow llama.cpp's ggml.c.

#include "ggml-graph.h"

#include <math.h>

#define RETURN_IF_NULL(t) do { if ((t) == NULL) { return NULL; } } while (0)

// a: logits, b: labels -> [1] of a's type (the CPU computes F32 only)
struct ggml_tensor * ggml_cross_entropy_loss(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_are_same_shape(a, b));
    struct ggml_tensor * r = ggml_new_tensor_1d(ctx, a->type, 1);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_CROSS_ENTROPY_LOSS;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// a: scalar gradient of the loss, b: logits, c: labels -> the gradient w.r.t. the logits, shaped like b.
// (llama.cpp's header names them logits/labels/grad, but its constructor, its backward pass and its kernels
// all use this order, so we do too.)
struct ggml_tensor * ggml_cross_entropy_loss_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                  struct ggml_tensor * c) {
    GGML_ASSERT(ggml_is_scalar(a));
    GGML_ASSERT(ggml_are_same_shape(b, c));
    struct ggml_tensor * r = ggml_dup_tensor(ctx, b);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_CROSS_ENTROPY_LOSS_BACK;
    r->src[0] = a;
    r->src[1] = b;
    r->src[2] = c;
    return r;
}

// The optimizer steps write a (and the AdamW moments) in place and return a view of a, so that a graph can
// hold the step as a node while the parameter keeps its own buffer.
struct ggml_tensor * ggml_opt_step_adamw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * grad,
                                         struct ggml_tensor * m, struct ggml_tensor * v, struct ggml_tensor * adamw_params) {
    GGML_ASSERT(a->flags & GGML_TENSOR_FLAG_PARAM);
    GGML_ASSERT(ggml_are_same_shape(a, grad));
    GGML_ASSERT(ggml_are_same_shape(a, m));
    GGML_ASSERT(ggml_are_same_shape(a, v));
    GGML_ASSERT(adamw_params->type == GGML_TYPE_F32);
    GGML_ASSERT(ggml_nelements(adamw_params) == 7);
    struct ggml_tensor * r = ggml_view_tensor(ctx, a);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_OPT_STEP_ADAMW;
    r->src[0] = a;
    r->src[1] = grad;
    r->src[2] = m;
    r->src[3] = v;
    r->src[4] = adamw_params;
    return r;
}

struct ggml_tensor * ggml_opt_step_sgd(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * grad,
                                       struct ggml_tensor * sgd_params) {
    GGML_ASSERT(a->flags & GGML_TENSOR_FLAG_PARAM);
    GGML_ASSERT(ggml_are_same_shape(a, grad));
    GGML_ASSERT(sgd_params->type == GGML_TYPE_F32);
    GGML_ASSERT(ggml_nelements(sgd_params) == 2);
    struct ggml_tensor * r = ggml_view_tensor(ctx, a);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_OPT_STEP_SGD;
    r->src[0] = a;
    r->src[1] = grad;
    r->src[2] = sgd_params;
    return r;
}

// q [D, N, ne2, ne3], k [D, M, kvne2, ne3], v [M, Dv, kvne2, ne3] (transposed), d [Dv, N, ne2, ne3] -> F32 vector
// holding dQ, dK, dV one after the other, each padded to GGML_MEM_ALIGN bytes (llama.cpp's layout).
// op_params: i32 masked, f32 scale (1/sqrt(D) here; the backward pass of flash_attn_ext sets its own scale and
// puts the additive mask of flash_attn_ext in src[4])
struct ggml_tensor * ggml_flash_attn_back(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                          struct ggml_tensor * v, struct ggml_tensor * d, bool masked) {
    const int64_t D = q->ne[0], N = q->ne[1], M = k->ne[1];
    GGML_ASSERT(k->ne[0] == D);
    GGML_ASSERT(v->ne[0] == M);
    GGML_ASSERT(d->ne[0] == v->ne[1] && d->ne[1] == N);
    GGML_ASSERT(v->ne[2] == k->ne[2] && v->ne[3] == k->ne[3] && k->ne[3] == q->ne[3]);
    GGML_ASSERT(d->ne[2] == q->ne[2] && d->ne[3] == q->ne[3]);
    GGML_ASSERT(k->ne[2] > 0 && q->ne[2] % k->ne[2] == 0);

    const size_t ts  = sizeof(float);
    const size_t end = GGML_PAD((size_t) ggml_nelements(q) * ts, GGML_MEM_ALIGN) +
                       GGML_PAD((size_t) ggml_nelements(k) * ts, GGML_MEM_ALIGN) +
                       GGML_PAD((size_t) ggml_nelements(v) * ts, GGML_MEM_ALIGN);
    struct ggml_tensor * r = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, (int64_t) ((end + ts - 1) / ts));
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, masked ? 1 : 0);
    ggml_set_op_params_f32(r, 1, 1.0f / sqrtf((float) D));
    r->op     = GGML_OP_FLASH_ATTN_BACK;
    r->src[0] = q;
    r->src[1] = k;
    r->src[2] = v;
    r->src[3] = d;
    return r;
}
