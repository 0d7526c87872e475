// Automatic differentiation: ggml_build_backward_expand appends to a forward graph the nodes that compute the
// gradient of the loss w.r.t. every node that depends on a trainable parameter, walking the forward nodes in
// reverse and applying each op's gradient rule (the rules and the set of differentiable ops follow llama.cpp's
// ggml.c). Gradients live in cgraph->grads, indexed like the graph's hash set; a tensor that feeds several ops
// gets the sum of the contributions. A gradient accumulator (cgraph->grad_accs: the loss's, and any the caller
// passes) is added to in place, so its value survives from one compute to the next until ggml_graph_reset.

#include "ggml-graph.h"

#include <stdlib.h>
#include <string.h>

// ---- gradient bookkeeping --------------------------------------------------------------------------------

// hash slot of t in cgraph, or (size_t) -1 when t is not in the graph
static size_t grad_slot(const struct ggml_cgraph * cgraph, const struct ggml_tensor * t) {
    if (t == NULL) {
        return (size_t) -1;
    }
    const size_t i = ggml_hash_find(&cgraph->visited_hash_set, t);
    if (i == GGML_HASHSET_FULL || !ggml_bitset_get(cgraph->visited_hash_set.used, i)) {
        return (size_t) -1;
    }
    return i;
}

static void grad_done(struct ggml_cgraph * cgraph, size_t isrc) {
    struct ggml_tensor * src = cgraph->visited_hash_set.keys[isrc];
    ggml_format_name(cgraph->grads[isrc], "grad for %s", src->name);
    ggml_build_forward_expand(cgraph, cgraph->grads[isrc]);
}

// the contributions are added in place only into an accumulator, whose memory must persist
static bool grad_inplace(const struct ggml_cgraph * cgraph, size_t isrc) { return cgraph->grad_accs[isrc] != NULL; }

// grad(src) += t
static void add_or_set(struct ggml_context * ctx, struct ggml_cgraph * cgraph, size_t isrc, struct ggml_tensor * t) {
    struct ggml_tensor * g = cgraph->grads[isrc];
    if (g) {
        cgraph->grads[isrc] = grad_inplace(cgraph, isrc) ? ggml_add_inplace(ctx, g, t) : ggml_add(ctx, g, t);
    } else {
        cgraph->grads[isrc] = t;
    }
    grad_done(cgraph, isrc);
}

// grad(src) -= t
static void sub_or_set(struct ggml_context * ctx, struct ggml_cgraph * cgraph, size_t isrc, struct ggml_tensor * t) {
    struct ggml_tensor * g = cgraph->grads[isrc];
    if (g) {
        cgraph->grads[isrc] = grad_inplace(cgraph, isrc) ? ggml_sub_inplace(ctx, g, t) : ggml_sub(ctx, g, t);
    } else {
        cgraph->grads[isrc] = ggml_neg(ctx, t);
    }
    grad_done(cgraph, isrc);
}

// grad(src) += t, t a scalar added to every element
static void add1_or_set(struct ggml_context * ctx, struct ggml_cgraph * cgraph, size_t isrc, struct ggml_tensor * t) {
    struct ggml_tensor * g = cgraph->grads[isrc];
    if (g) {
        cgraph->grads[isrc] = grad_inplace(cgraph, isrc) ? ggml_add1_inplace(ctx, g, t) : ggml_add1(ctx, g, t);
    } else {
        cgraph->grads[isrc] = ggml_repeat(ctx, t, cgraph->visited_hash_set.keys[isrc]);
    }
    grad_done(cgraph, isrc);
}

// view(grad(src), nb1, nb2, nb3, offset) += t; the rest of grad(src) is unchanged (0 when it had none yet)
static void acc_or_set(struct ggml_context * ctx, struct ggml_cgraph * cgraph, size_t isrc, struct ggml_tensor * t,
                       size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    struct ggml_tensor * src = cgraph->visited_hash_set.keys[isrc];
    struct ggml_tensor * g   = cgraph->grads[isrc];
    if (!ggml_is_contiguous(t)) {
        t = ggml_cont(ctx, t);
    }
    if (g) {
        if (!ggml_is_contiguous(g)) {
            g = ggml_cont(ctx, g); // ACC writes a contiguous tensor; a copy cannot be in place
            cgraph->grads[isrc] = ggml_acc(ctx, g, t, nb1, nb2, nb3, offset);
        } else {
            cgraph->grads[isrc] = grad_inplace(cgraph, isrc) ? ggml_acc_inplace(ctx, g, t, nb1, nb2, nb3, offset)
                                                             : ggml_acc(ctx, g, t, nb1, nb2, nb3, offset);
        }
    } else {
        // zeros shaped like src (a fill, not src * 0, which would turn inf into NaN)
        struct ggml_tensor * like = src->type == GGML_TYPE_F32 ? src : ggml_new_tensor(ctx, GGML_TYPE_F32, GGML_MAX_DIMS, src->ne);
        struct ggml_tensor * zero = ggml_fill(ctx, like, 0.0f);
        cgraph->grads[isrc] = ggml_acc(ctx, zero, t, nb1, nb2, nb3, offset);
    }
    grad_done(cgraph, isrc);
}

// sums a gradient shaped like a broadcast result back into the shape of the broadcast operand
static struct ggml_tensor * unbroadcast(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * like) {
    return ggml_are_same_shape(g, like) ? g : ggml_repeat_back(ctx, g, like);
}

static struct ggml_tensor * cont_if_needed(struct ggml_context * ctx, struct ggml_tensor * t) {
    return ggml_is_contiguous(t) ? t : ggml_cont(ctx, t);
}

// ---- gradient rules --------------------------------------------------------------------------------------

// the srcs of node whose gradient the rules do not need (not differentiable, or only used for their shape)
static void ignored_srcs(const struct ggml_tensor * node, bool ignore[GGML_MAX_SRC]) {
    memset(ignore, 0, sizeof(bool) * GGML_MAX_SRC);
    switch (node->op) {
        case GGML_OP_IM2COL:      // the kernel only gives its shape
        case GGML_OP_IM2COL_BACK:
            ignore[0] = true;
            break;
        case GGML_OP_UNARY: {
            const enum ggml_unary_op uop = ggml_get_unary_op(node);
            if (uop == GGML_UNARY_OP_SGN || uop == GGML_UNARY_OP_STEP) { // piecewise constant
                ignore[0] = true;
            }
        } break;
        case GGML_OP_CPY:           // the destination is overwritten
        case GGML_OP_GET_ROWS:      // row indices
        case GGML_OP_GET_ROWS_BACK:
        case GGML_OP_ROPE:          // positions
            ignore[1] = true;
            break;
        default:
            break;
    }
}

static void backward_unary(struct ggml_context * ctx, struct ggml_cgraph * cgraph, struct ggml_tensor * tensor,
                           struct ggml_tensor * grad, size_t isrc0) {
    struct ggml_tensor * src0 = tensor->src[0];
    switch (ggml_get_unary_op(tensor)) {
        case GGML_UNARY_OP_ABS:      add_or_set(ctx, cgraph, isrc0, ggml_mul(ctx, ggml_sgn(ctx, src0), grad)); break;
        case GGML_UNARY_OP_SGN:
        case GGML_UNARY_OP_STEP:     break; // zero almost everywhere
        case GGML_UNARY_OP_NEG:      sub_or_set(ctx, cgraph, isrc0, grad); break;
        case GGML_UNARY_OP_RELU:     add_or_set(ctx, cgraph, isrc0, ggml_mul(ctx, ggml_step(ctx, src0), grad)); break;
        case GGML_UNARY_OP_SILU:     add_or_set(ctx, cgraph, isrc0, ggml_silu_back(ctx, grad, src0)); break;
        case GGML_UNARY_OP_EXP:      add_or_set(ctx, cgraph, isrc0, ggml_mul(ctx, tensor, grad)); break;
        // d expm1(x) = exp(x) = y + 1
        case GGML_UNARY_OP_EXPM1:    add_or_set(ctx, cgraph, isrc0, ggml_add(ctx, ggml_mul(ctx, tensor, grad), grad)); break;
        // d softplus(x) = sigmoid(x)
        case GGML_UNARY_OP_SOFTPLUS: add_or_set(ctx, cgraph, isrc0, ggml_mul(ctx, ggml_sigmoid(ctx, src0), grad)); break;
        // d tanh(x) = 1 - y^2
        case GGML_UNARY_OP_TANH:     sub_or_set(ctx, cgraph, isrc0, ggml_sub(ctx, ggml_mul(ctx, ggml_sqr(ctx, tensor), grad), grad)); break;
        // d sigmoid(x) = y - y^2
        case GGML_UNARY_OP_SIGMOID:  add_or_set(ctx, cgraph, isrc0, ggml_mul(ctx, ggml_sub(ctx, tensor, ggml_sqr(ctx, tensor)), grad)); break;
        default:
            GGML_LOG_ERROR("%s: unsupported unary op for the backward pass: %s\n", __func__,
                           ggml_unary_op_name(ggml_get_unary_op(tensor)));
            GGML_ABORT("fatal error");
    }
}

// flash_attn_ext (q [D, N, H, B], k [D, M, Hkv, B], v [Dv, M, Hkv, B], result [Dv, H, N, B]) through
// FLASH_ATTN_BACK, which takes v transposed and the gradient in q's layout, and the ext scale and mask
static void backward_flash_attn_ext(struct ggml_context * ctx, struct ggml_cgraph * cgraph, struct ggml_tensor * tensor,
                                    struct ggml_tensor * grad, const size_t isrc[3], const bool needs[3]) {
    struct ggml_tensor * q = tensor->src[0];
    struct ggml_tensor * k = tensor->src[1];
    struct ggml_tensor * v = tensor->src[2];
    struct ggml_tensor * mask = tensor->src[3];
    const float scale = ggml_get_op_params_f32(tensor, 0);
    GGML_ASSERT(ggml_get_op_params_f32(tensor, 1) == 0.0f && "flash_attn_ext backward: ALiBi (max_bias) not implemented");
    GGML_ASSERT(ggml_get_op_params_f32(tensor, 2) == 0.0f && "flash_attn_ext backward: logit_softcap not implemented");
    GGML_ASSERT(tensor->src[4] == NULL && "flash_attn_ext backward: sinks not implemented");

    struct ggml_tensor * d  = ggml_permute(ctx, grad, 0, 2, 1, 3); // [Dv, N, H, B]
    struct ggml_tensor * fb = ggml_flash_attn_back(ctx, q, k, ggml_transpose(ctx, v), d, false);
    ggml_set_op_params_f32(fb, 1, scale);
    fb->src[4] = mask;

    const size_t ts     = sizeof(float);
    const size_t offs_k = GGML_PAD((size_t) ggml_nelements(q) * ts, GGML_MEM_ALIGN);
    const size_t offs_v = offs_k + GGML_PAD((size_t) ggml_nelements(k) * ts, GGML_MEM_ALIGN);
    if (needs[0]) {
        struct ggml_tensor * dq = ggml_view_4d(ctx, fb, q->ne[0], q->ne[1], q->ne[2], q->ne[3], ts * q->ne[0],
                                               ts * q->ne[0] * q->ne[1], ts * q->ne[0] * q->ne[1] * q->ne[2], 0);
        add_or_set(ctx, cgraph, isrc[0], dq);
    }
    if (needs[1]) {
        struct ggml_tensor * dk = ggml_view_4d(ctx, fb, k->ne[0], k->ne[1], k->ne[2], k->ne[3], ts * k->ne[0],
                                               ts * k->ne[0] * k->ne[1], ts * k->ne[0] * k->ne[1] * k->ne[2], offs_k);
        add_or_set(ctx, cgraph, isrc[1], dk);
    }
    if (needs[2]) {
        // stored as [M, Dv, Hkv, B]
        struct ggml_tensor * dvt = ggml_view_4d(ctx, fb, v->ne[1], v->ne[0], v->ne[2], v->ne[3], ts * v->ne[1],
                                                ts * v->ne[1] * v->ne[0], ts * v->ne[1] * v->ne[0] * v->ne[2], offs_v);
        add_or_set(ctx, cgraph, isrc[2], ggml_cont(ctx, ggml_transpose(ctx, dvt)));
    }
}

static void compute_backward(struct ggml_context * ctx, struct ggml_cgraph * cgraph, int i, const bool * grads_needed) {
    struct ggml_tensor * tensor = cgraph->nodes[i];
    struct ggml_tensor * grad   = ggml_graph_get_grad(cgraph, tensor);
    if (grad == NULL) {
        return;
    }
    struct ggml_tensor * src0 = tensor->src[0];
    struct ggml_tensor * src1 = tensor->src[1];
    struct ggml_tensor * src2 = tensor->src[2];
    size_t isrc[GGML_MAX_SRC];
    bool   needs[GGML_MAX_SRC];
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        isrc[j]  = grad_slot(cgraph, tensor->src[j]);
        needs[j] = isrc[j] != (size_t) -1 && grads_needed[isrc[j]];
    }
    const size_t isrc0 = isrc[0], isrc1 = isrc[1];
    const bool src0_needs = needs[0], src1_needs = needs[1], src2_needs = needs[2];

    switch (tensor->op) {
        case GGML_OP_DUP:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, grad);
            }
            break;
        case GGML_OP_ADD:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, grad);
            }
            if (src1_needs) {
                add_or_set(ctx, cgraph, isrc1, unbroadcast(ctx, grad, src1));
            }
            break;
        case GGML_OP_ADD1:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, grad);
            }
            if (src1_needs) {
                // the scalar is added to every element: its gradient is the sum (llama.cpp takes the mean here)
                add_or_set(ctx, cgraph, isrc1, ggml_sum(ctx, grad));
            }
            break;
        case GGML_OP_ACC: {
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, grad);
            }
            if (src1_needs) {
                const size_t nb1 = (size_t) tensor->op_params[0], nb2 = (size_t) tensor->op_params[1];
                const size_t nb3 = (size_t) tensor->op_params[2], offset = (size_t) tensor->op_params[3];
                struct ggml_tensor * view = ggml_view_4d(ctx, grad, src1->ne[0], src1->ne[1], src1->ne[2], src1->ne[3],
                                                         nb1, nb2, nb3, offset);
                add_or_set(ctx, cgraph, isrc1, ggml_reshape(ctx, ggml_cont(ctx, view), src1));
            }
        } break;
        case GGML_OP_SUB:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, grad);
            }
            if (src1_needs) {
                sub_or_set(ctx, cgraph, isrc1, unbroadcast(ctx, grad, src1));
            }
            break;
        case GGML_OP_MUL:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_mul(ctx, grad, src1));
            }
            if (src1_needs) {
                add_or_set(ctx, cgraph, isrc1, unbroadcast(ctx, ggml_mul(ctx, src0, grad), src1));
            }
            break;
        case GGML_OP_DIV:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_div(ctx, grad, src1));
            }
            if (src1_needs) {
                // d(a/b)/db = -(a/b)/b
                sub_or_set(ctx, cgraph, isrc1, unbroadcast(ctx, ggml_mul(ctx, grad, ggml_div(ctx, tensor, src1)), src1));
            }
            break;
        case GGML_OP_SQR:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_scale(ctx, ggml_mul(ctx, src0, grad), 2.0f));
            }
            break;
        case GGML_OP_SQRT:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_scale(ctx, ggml_div(ctx, grad, tensor), 0.5f));
            }
            break;
        case GGML_OP_LOG:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_div(ctx, grad, src0));
            }
            break;
        case GGML_OP_SIN:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_mul(ctx, grad, ggml_cos(ctx, src0)));
            }
            break;
        case GGML_OP_COS:
            if (src0_needs) {
                sub_or_set(ctx, cgraph, isrc0, ggml_mul(ctx, grad, ggml_sin(ctx, src0)));
            }
            break;
        case GGML_OP_SUM:
            if (src0_needs) {
                add1_or_set(ctx, cgraph, isrc0, grad);
            }
            break;
        case GGML_OP_SUM_ROWS:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_repeat(ctx, grad, src0));
            }
            break;
        case GGML_OP_MEAN:
            if (src0_needs) {
                // one mean per row: every element of the row gets grad / ne0
                add_or_set(ctx, cgraph, isrc0, ggml_repeat(ctx, ggml_scale(ctx, grad, 1.0f / (float) src0->ne[0]), src0));
            }
            break;
        case GGML_OP_REPEAT:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_repeat_back(ctx, grad, src0));
            }
            break;
        case GGML_OP_REPEAT_BACK:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_repeat(ctx, grad, src0));
            }
            break;
        case GGML_OP_RMS_NORM:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_rms_norm_back(ctx, grad, src0, ggml_get_op_params_f32(tensor, 0)));
            }
            break;
        case GGML_OP_MUL_MAT: {
            // tensor [m, p, qq, rr] = src0 [n, m, q1, r1] x src1 [n, p, qq, rr] (src0 broadcast over qq, rr)
            if (src0_needs) {
                struct ggml_tensor * tmp = ggml_out_prod(ctx, src1, grad); // [n, m, qq, rr]
                if (!ggml_are_same_shape(tmp, src0)) {
                    GGML_ASSERT(tmp->ne[0] == src0->ne[0] && tmp->ne[1] == src0->ne[1]);
                    GGML_ASSERT(tmp->ne[3] == 1 && "mul_mat backward: broadcasting over dim 3 not implemented");
                    // src0's matrix j is used by the result matrices j * nr2 .. j * nr2 + nr2 - 1: put those in
                    // dim 3 and sum them
                    const int64_t nr2 = tmp->ne[2] / src0->ne[2];
                    tmp = ggml_view_4d(ctx, tmp, src0->ne[0], src0->ne[1], src0->ne[2], nr2, tmp->nb[1],
                                       tmp->nb[2] * (size_t) nr2, tmp->nb[2], 0);
                    tmp = ggml_repeat_back(ctx, ggml_cont(ctx, tmp), src0);
                }
                add_or_set(ctx, cgraph, isrc0, tmp);
            }
            if (src1_needs) {
                // src0^T x grad as an outer product: cheaper than transposing src0, usually the larger one
                add_or_set(ctx, cgraph, isrc1, ggml_out_prod(ctx, src0, ggml_transpose(ctx, grad)));
            }
        } break;
        case GGML_OP_SCALE:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_scale(ctx, grad, ggml_get_op_params_f32(tensor, 0)));
            }
            break;
        case GGML_OP_SET: {
            const size_t nb1 = (size_t) tensor->op_params[0], nb2 = (size_t) tensor->op_params[1];
            const size_t nb3 = (size_t) tensor->op_params[2], offset = (size_t) tensor->op_params[3];
            if (src0_needs || src1_needs) {
                struct ggml_tensor * g    = cont_if_needed(ctx, grad);
                struct ggml_tensor * view = ggml_view_4d(ctx, g, src1->ne[0], src1->ne[1], src1->ne[2], src1->ne[3],
                                                         nb1, nb2, nb3, offset);
                if (src0_needs) {
                    // the overwritten part of src0 gets no gradient: grad with that part zeroed
                    add_or_set(ctx, cgraph, isrc0, ggml_acc(ctx, g, ggml_neg(ctx, view), nb1, nb2, nb3, offset));
                }
                if (src1_needs) {
                    add_or_set(ctx, cgraph, isrc1, ggml_reshape(ctx, ggml_cont(ctx, view), src1));
                }
            }
        } break;
        case GGML_OP_CPY:
            // tensor = src0 (converted) written over src1: src1 gets no gradient
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_reshape(ctx, cont_if_needed(ctx, grad), src0));
            }
            break;
        case GGML_OP_CONT:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_are_same_shape(tensor, src0) ? grad
                                                   : ggml_reshape(ctx, cont_if_needed(ctx, grad), src0));
            }
            break;
        case GGML_OP_RESHAPE:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_reshape(ctx, cont_if_needed(ctx, grad), src0));
            }
            break;
        case GGML_OP_VIEW:
            if (src0_needs) {
                size_t offset;
                memcpy(&offset, tensor->op_params, sizeof(offset));
                size_t nb1 = tensor->nb[1], nb2 = tensor->nb[2], nb3 = tensor->nb[3];
                // the strides are in src0's element size; the gradient is F32
                const size_t n0 = ggml_element_size(src0), ng = sizeof(float);
                if (n0 != ng) {
                    GGML_ASSERT(offset % n0 == 0 && nb1 % n0 == 0 && nb2 % n0 == 0 && nb3 % n0 == 0);
                    offset = offset / n0 * ng;
                    nb1    = nb1 / n0 * ng;
                    nb2    = nb2 / n0 * ng;
                    nb3    = nb3 / n0 * ng;
                }
                acc_or_set(ctx, cgraph, isrc0, grad, nb1, nb2, nb3, offset);
            }
            break;
        case GGML_OP_PERMUTE:
            if (src0_needs) {
                int axb[4] = { 0, 0, 0, 0 }; // the inverse permutation
                for (int j = 0; j < 4; j++) {
                    axb[tensor->op_params[j]] = j;
                }
                add_or_set(ctx, cgraph, isrc0, ggml_permute(ctx, grad, axb[0], axb[1], axb[2], axb[3]));
            }
            break;
        case GGML_OP_TRANSPOSE:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_transpose(ctx, grad));
            }
            break;
        case GGML_OP_GET_ROWS:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_get_rows_back(ctx, grad, src1, src0));
            }
            break;
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_DIAG_MASK_ZERO:
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_diag_mask_zero(ctx, grad, tensor->op_params[0]));
            }
            break;
        case GGML_OP_SOFT_MAX:
            GGML_ASSERT(!src1_needs && "soft_max backward: gradient of the mask not implemented");
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_soft_max_ext_back(ctx, grad, tensor, ggml_get_op_params_f32(tensor, 0),
                                                                      ggml_get_op_params_f32(tensor, 1)));
            }
            break;
        case GGML_OP_ROPE:
            GGML_ASSERT(!src2_needs && "rope backward: gradient of the frequency factors not implemented");
            if (src0_needs) {
                const int32_t * p = tensor->op_params;
                const int n_dims = p[1], mode = p[2], n_ctx_orig = p[4];
                float f[6]; // freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow
                memcpy(f, p + 5, sizeof(f));
                int sections[4];
                memcpy(sections, p + 11, sizeof(sections));
                struct ggml_tensor * back = (mode & GGML_ROPE_TYPE_MROPE)
                    ? ggml_rope_multi_back(ctx, grad, src1, src2, n_dims, sections, mode, n_ctx_orig, f[0], f[1], f[2], f[3], f[4], f[5])
                    : ggml_rope_ext_back(ctx, grad, src1, src2, n_dims, mode, n_ctx_orig, f[0], f[1], f[2], f[3], f[4], f[5]);
                add_or_set(ctx, cgraph, isrc0, back);
            }
            break;
        case GGML_OP_IM2COL:
            if (src1_needs) {
                const int32_t * p = tensor->op_params;
                add_or_set(ctx, cgraph, isrc1, ggml_im2col_back(ctx, cont_if_needed(ctx, grad), src0, src1->ne,
                                                                p[0], p[1], p[2], p[3], p[4], p[5], p[6] == 1));
            }
            break;
        case GGML_OP_POOL_2D:
            if (src0_needs) {
                const int32_t * p = tensor->op_params;
                add_or_set(ctx, cgraph, isrc0, ggml_pool_2d_back(ctx, grad, src0, (enum ggml_op_pool) p[0], p[1], p[2],
                                                                 p[3], p[4], (float) p[5], (float) p[6]));
            }
            break;
        case GGML_OP_WIN_PART:
            // each input element lands in exactly one window position: the adjoint reads it back from there
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_win_unpart(ctx, cont_if_needed(ctx, grad), (int) src0->ne[1],
                                                               (int) src0->ne[2], tensor->op_params[2]));
            }
            break;
        case GGML_OP_WIN_UNPART:
            // the adjoint scatters back into the windows; the padding gets 0
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_win_part(ctx, cont_if_needed(ctx, grad), tensor->op_params[0]));
            }
            break;
        case GGML_OP_UNARY:
            if (src0_needs) {
                backward_unary(ctx, cgraph, tensor, grad, isrc0);
            }
            break;
        case GGML_OP_GLU:
            GGML_ASSERT(ggml_get_glu_op(tensor) == GGML_GLU_OP_SWIGLU && "glu backward: only swiglu is implemented");
            GGML_ASSERT(src1 != NULL && "swiglu backward: only the split form (ggml_swiglu_split) is implemented");
            // y = silu(a) * b
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_silu_back(ctx, ggml_mul(ctx, grad, src1), src0));
            }
            if (src1_needs) {
                add_or_set(ctx, cgraph, isrc1, ggml_mul(ctx, ggml_silu(ctx, src0), grad));
            }
            break;
        case GGML_OP_CROSS_ENTROPY_LOSS:
            GGML_ASSERT(!src1_needs && "cross_entropy_loss backward: gradient of the labels not implemented");
            if (src0_needs) {
                add_or_set(ctx, cgraph, isrc0, ggml_cross_entropy_loss_back(ctx, grad, src0, src1));
            }
            break;
        case GGML_OP_FLASH_ATTN_EXT:
            GGML_ASSERT(!needs[3] && "flash_attn_ext backward: gradient of the mask not implemented");
            if (needs[0] || needs[1] || needs[2]) {
                backward_flash_attn_ext(ctx, cgraph, tensor, grad, isrc, needs);
            }
            break;
        case GGML_OP_NONE:
            break;
        default:
            GGML_LOG_ERROR("%s: unsupported op for the backward pass: %s\n", __func__, ggml_op_name(tensor->op));
            GGML_ABORT("fatal error");
    }

    for (int j = 0; j < GGML_MAX_SRC; j++) {
        GGML_ASSERT(!needs[j] || (cgraph->grads[isrc[j]] && ggml_are_same_shape(tensor->src[j], cgraph->grads[isrc[j]])));
    }
}

// ---- the backward pass -----------------------------------------------------------------------------------

void ggml_build_backward_expand(struct ggml_context * ctx, struct ggml_cgraph * cgraph, struct ggml_tensor ** grad_accs) {
    GGML_ASSERT(cgraph->n_nodes > 0);
    GGML_ASSERT(cgraph->grads != NULL && cgraph->grad_accs != NULL && "the graph needs grads (ggml_new_graph_custom)");

    const int    n_nodes_f = cgraph->n_nodes;
    const size_t hash_size = cgraph->visited_hash_set.size;
    memset(cgraph->grads, 0, hash_size * sizeof(struct ggml_tensor *));
    memset(cgraph->grad_accs, 0, hash_size * sizeof(struct ggml_tensor *));
    bool * grads_needed = calloc(hash_size, sizeof(bool));
    GGML_ASSERT(grads_needed != NULL);

    bool any_params = false, any_loss = false;
    for (int i = 0; i < n_nodes_f; i++) {
        any_params = any_params || (cgraph->nodes[i]->flags & GGML_TENSOR_FLAG_PARAM);
        any_loss   = any_loss || (cgraph->nodes[i]->flags & GGML_TENSOR_FLAG_LOSS);
    }
    GGML_ASSERT(any_params && "no trainable parameters found, did you forget to call ggml_set_param?");
    GGML_ASSERT(any_loss && "no training loss found, did you forget to call ggml_set_loss?");

    // forward order: which nodes depend on a parameter (or are one, or are the loss)
    for (int i = 0; i < n_nodes_f; i++) {
        struct ggml_tensor * node = cgraph->nodes[i];
        if (node->type == GGML_TYPE_I32) {
            continue;
        }
        bool needs = (node->flags & (GGML_TENSOR_FLAG_PARAM | GGML_TENSOR_FLAG_LOSS)) != 0;
        bool ignore[GGML_MAX_SRC];
        ignored_srcs(node, ignore);
        for (int j = 0; j < GGML_MAX_SRC && !needs; j++) {
            const size_t is = grad_slot(cgraph, node->src[j]);
            if (ignore[j] || is == (size_t) -1 || !grads_needed[is]) {
                continue;
            }
            GGML_ASSERT(node->src[j]->type == GGML_TYPE_F32 || node->src[j]->type == GGML_TYPE_F16);
            needs = true;
        }
        if (!needs) {
            continue;
        }
        // in-place ops would overwrite values the gradients need
        GGML_ASSERT((!node->view_src || node->op == GGML_OP_CPY || node->op == GGML_OP_VIEW || node->op == GGML_OP_RESHAPE ||
                     node->op == GGML_OP_PERMUTE || node->op == GGML_OP_TRANSPOSE) &&
                    "in-place ops are not supported by the backward pass");

        const size_t ih = grad_slot(cgraph, node);
        GGML_ASSERT(ih != (size_t) -1);
        if (grad_accs && grad_accs[i]) {
            cgraph->grad_accs[ih] = grad_accs[i];
            cgraph->grads[ih]     = grad_accs[i];
        } else if (node->flags & GGML_TENSOR_FLAG_LOSS) {
            // the seed d loss / d loss, set to 1 by ggml_graph_reset; an input, so that a graph allocator places
            // it before the nodes run and never hands its memory to another tensor
            cgraph->grad_accs[ih] = ggml_new_tensor(ctx, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            cgraph->grads[ih]     = cgraph->grad_accs[ih];
            ggml_format_name(cgraph->grad_accs[ih], "grad_acc for %s", node->name);
            ggml_set_input(cgraph->grad_accs[ih]);
        }
        grads_needed[ih] = true;
    }

    for (int i = n_nodes_f - 1; i >= 0; i--) {
        compute_backward(ctx, cgraph, i, grads_needed);
    }
    free(grads_needed);
}
