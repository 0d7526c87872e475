// Op constructors for recurrent / linear-attention layers: Mamba's ssm_conv and ssm_scan, RWKV-6/7 wkv and
// gated linear attention. The results concatenate the per-token outputs and the final states, as in llama.cpp.

#include "ggml-graph.h"

#define RETURN_IF_NULL(t) do { if ((t) == NULL) { return NULL; } } while (0)

// sx [d_conv - 1 + n_t, d_inner, n_s], c [d_conv, d_inner] -> F32 [d_inner, n_t, n_s]
struct ggml_tensor * ggml_ssm_conv(struct ggml_context * ctx, struct ggml_tensor * sx, struct ggml_tensor * c) {
    GGML_ASSERT(ggml_is_3d(sx));
    GGML_ASSERT(ggml_is_matrix(c));
    const int64_t d_conv  = c->ne[0];
    const int64_t d_inner = c->ne[1];
    const int64_t n_t     = sx->ne[0] - d_conv + 1;
    const int64_t n_s     = sx->ne[2];
    GGML_ASSERT(sx->ne[1] == d_inner);
    GGML_ASSERT(n_t >= 0);
    struct ggml_tensor * r = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, d_inner, n_t, n_s);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_SSM_CONV;
    r->src[0] = sx;
    r->src[1] = c;
    return r;
}

// s   {d_state, head_dim, n_head, >= n_seqs} states, row ids[i] is the state of sequence i
// x   {head_dim, n_head, n_seq_tokens, n_seqs}, dt {n_head, n_seq_tokens, n_seqs}
// A   {d_state, n_head} (Mamba-1) or {1, n_head} (Mamba-2)
// B,C {d_state, n_group, n_seq_tokens, n_seqs}, ids I32 {n_seqs}
// -> F32 1-d: y (nelements(x)) followed by the final states {d_state, head_dim, n_head, n_seqs}
struct ggml_tensor * ggml_ssm_scan(struct ggml_context * ctx, struct ggml_tensor * s, struct ggml_tensor * x,
                                   struct ggml_tensor * dt, struct ggml_tensor * A, struct ggml_tensor * B,
                                   struct ggml_tensor * C, struct ggml_tensor * ids) {
    GGML_ASSERT(ggml_is_contiguous(s));
    GGML_ASSERT(ggml_is_contiguous(dt));
    GGML_ASSERT(ggml_is_contiguous(A));
    GGML_ASSERT(x->nb[0] == ggml_type_size(x->type));
    GGML_ASSERT(B->nb[0] == ggml_type_size(B->type));
    GGML_ASSERT(C->nb[0] == ggml_type_size(C->type));
    GGML_ASSERT(x->nb[1] == x->ne[0] * x->nb[0]);
    GGML_ASSERT(B->nb[1] == B->ne[0] * B->nb[0]);
    GGML_ASSERT(C->nb[1] == C->ne[0] * C->nb[0]);
    GGML_ASSERT(ggml_are_same_shape(B, C));
    GGML_ASSERT(ids->type == GGML_TYPE_I32);

    const int64_t d_state      = s->ne[0];
    const int64_t head_dim     = x->ne[0];
    const int64_t n_head       = x->ne[1];
    const int64_t n_seq_tokens = x->ne[2];
    const int64_t n_seqs       = x->ne[3];
    GGML_ASSERT(dt->ne[0] == n_head);
    GGML_ASSERT(dt->ne[1] == n_seq_tokens);
    GGML_ASSERT(dt->ne[2] == n_seqs);
    GGML_ASSERT(ggml_is_3d(dt));
    GGML_ASSERT(s->ne[1] == head_dim);
    GGML_ASSERT(s->ne[2] == n_head);
    GGML_ASSERT(B->ne[0] == d_state);
    GGML_ASSERT(B->ne[2] == n_seq_tokens);
    GGML_ASSERT(B->ne[3] == n_seqs);
    GGML_ASSERT(ids->ne[0] == n_seqs);
    GGML_ASSERT(ggml_is_vector(ids));
    GGML_ASSERT(A->ne[1] == n_head);
    GGML_ASSERT(ggml_is_matrix(A));
    GGML_ASSERT(A->ne[0] == 1 || A->ne[0] == d_state);

    struct ggml_tensor * r = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ggml_nelements(x) + s->ne[0] * s->ne[1] * s->ne[2] * ids->ne[0]);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_SSM_SCAN;
    r->src[0] = s;
    r->src[1] = x;
    r->src[2] = dt;
    r->src[3] = A;
    r->src[4] = B;
    r->src[5] = C;
    r->src[6] = ids;
    return r;
}

// the result of the wkv-style ops: F32 [S * H, n_tokens + S * n_seqs] (outputs, then the new states)
static struct ggml_tensor * wkv_result(struct ggml_context * ctx, const struct ggml_tensor * k, const struct ggml_tensor * state,
                                       struct ggml_tensor * const * others, int n_others) {
    GGML_ASSERT(ggml_is_contiguous(k));
    GGML_ASSERT(ggml_is_contiguous(state));
    const int64_t S        = k->ne[0];
    const int64_t H        = k->ne[1];
    const int64_t n_tokens = k->ne[2];
    const int64_t n_seqs   = state->ne[1];
    for (int i = 0; i < n_others; i++) {
        GGML_ASSERT(ggml_is_contiguous(others[i]));
        GGML_ASSERT(others[i]->ne[0] == S && others[i]->ne[1] == H && others[i]->ne[2] == n_tokens);
    }
    GGML_ASSERT(ggml_nelements(state) == S * S * H * n_seqs);
    return ggml_new_tensor_2d(ctx, GGML_TYPE_F32, S * H, n_tokens + S * n_seqs);
}

struct ggml_tensor * ggml_rwkv_wkv6(struct ggml_context * ctx, struct ggml_tensor * k, struct ggml_tensor * v,
                                    struct ggml_tensor * r, struct ggml_tensor * tf, struct ggml_tensor * td,
                                    struct ggml_tensor * state) {
    GGML_ASSERT(ggml_is_contiguous(tf));
    struct ggml_tensor * const others[3] = { v, r, td };
    struct ggml_tensor * res = wkv_result(ctx, k, state, others, 3);
    RETURN_IF_NULL(res);
    res->op     = GGML_OP_RWKV_WKV6;
    res->src[0] = k;
    res->src[1] = v;
    res->src[2] = r;
    res->src[3] = tf;
    res->src[4] = td;
    res->src[5] = state;
    return res;
}

struct ggml_tensor * ggml_gated_linear_attn(struct ggml_context * ctx, struct ggml_tensor * k, struct ggml_tensor * v,
                                            struct ggml_tensor * q, struct ggml_tensor * g, struct ggml_tensor * state,
                                            float scale) {
    struct ggml_tensor * const others[3] = { v, q, g };
    struct ggml_tensor * res = wkv_result(ctx, k, state, others, 3);
    RETURN_IF_NULL(res);
    ggml_set_op_params_f32(res, 0, scale);
    res->op     = GGML_OP_GATED_LINEAR_ATTN;
    res->src[0] = k;
    res->src[1] = v;
    res->src[2] = q;
    res->src[3] = g;
    res->src[4] = state;
    return res;
}

struct ggml_tensor * ggml_rwkv_wkv7(struct ggml_context * ctx, struct ggml_tensor * r, struct ggml_tensor * w,
                                    struct ggml_tensor * k, struct ggml_tensor * v, struct ggml_tensor * a,
                                    struct ggml_tensor * b, struct ggml_tensor * state) {
    struct ggml_tensor * const others[5] = { r, w, v, a, b };
    struct ggml_tensor * res = wkv_result(ctx, k, state, others, 5);
    RETURN_IF_NULL(res);
    res->op     = GGML_OP_RWKV_WKV7;
    res->src[0] = r;
    res->src[1] = w;
    res->src[2] = k;
    res->src[3] = v;
    res->src[4] = a;
    res->src[5] = b;
    res->src[6] = state;
    return res;
}
