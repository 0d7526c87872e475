// Graph building blocks shared by the architectures and the upload of the graph inputs.
#include "llama-graph.h"

#include "llama-adapter.h"
#include "llama-impl.h"
#include "llama-kv-cache.h"
#include "llama-model.h"

#include "ggml-backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool llm_graph_key_equal(const struct llm_graph_key * a, const struct llm_graph_key * b) {
    return a->n_tokens == b->n_tokens && a->n_outputs == b->n_outputs && a->n_kv == b->n_kv &&
           a->n_kv_swa == b->n_kv_swa && a->has_token == b->has_token && a->causal_attn == b->causal_attn &&
           a->embeddings == b->embeddings;
}

// token embeddings + scale · B^T A[tokens] for adapters of token_embd (A is read by rows, as llama.cpp does)
static struct ggml_tensor * embd_lora(struct llm_graph * g, struct ggml_tensor * cur) {
    const struct llama_ctx_adapters * ad = g->adapters;
    for (size_t i = 0; ad && i < ad->n_loras; i++) {
        const struct llama_adapter_lora_weight * lw = llama_adapter_lora_find(ad->loras[i], g->model->tok_embd);
        if (!lw) {
            continue;
        }
        const float scale = llama_adapter_lora_scale(ad->loras[i], lw, ad->scales[i]);
        struct ggml_tensor * d = ggml_mul_mat(g->ctx0, lw->b, ggml_get_rows(g->ctx0, lw->a, g->inp_tokens));
        cur = ggml_add(g->ctx0, cur, ggml_scale(g->ctx0, d, scale));
    }
    return cur;
}

struct ggml_tensor * llm_graph_mm(struct llm_graph * g, struct ggml_tensor * w, struct ggml_tensor * cur) {
    struct ggml_tensor * res = ggml_mul_mat(g->ctx0, w, cur);
    const struct llama_ctx_adapters * ad = g->adapters;
    // token_embd pairs have the lookup layout (see embd_lora); a tied output head does not take them
    if (!ad || ad->n_loras == 0 || w == g->model->tok_embd) {
        return res;
    }
    for (size_t i = 0; i < ad->n_loras; i++) {
        const struct llama_adapter_lora_weight * lw = llama_adapter_lora_find(ad->loras[i], w);
        if (!lw) {
            continue;
        }
        const float scale = llama_adapter_lora_scale(ad->loras[i], lw, ad->scales[i]);
        struct ggml_tensor * ab = ggml_mul_mat(g->ctx0, lw->b, ggml_mul_mat(g->ctx0, lw->a, cur));
        res = ggml_add(g->ctx0, res, ggml_scale(g->ctx0, ab, scale));
    }
    return res;
}

struct ggml_tensor * llm_graph_cvec(struct llm_graph * g, struct ggml_tensor * cur, uint32_t il) {
    struct ggml_tensor * t = g->adapters ? llama_adapter_cvec_tensor(&g->adapters->cvec, (int32_t) il) : NULL;
    return t ? ggml_add(g->ctx0, cur, t) : cur;
}

struct ggml_tensor * llm_graph_inp_embd(struct llm_graph * g) {
    const struct llama_model * model = g->model;
    if (g->ub->token) {
        g->inp_tokens = ggml_new_tensor_1d(g->ctx0, GGML_TYPE_I32, g->n_tokens);
        ggml_set_name(g->inp_tokens, "inp_tokens");
        ggml_set_input(g->inp_tokens);
        // get_rows converts any stored type (quantized embeddings included) to F32
        return embd_lora(g, ggml_get_rows(g->ctx0, model->tok_embd, g->inp_tokens));
    }
    g->inp_embd = ggml_new_tensor_2d(g->ctx0, GGML_TYPE_F32, g->hp->n_embd, g->n_tokens);
    ggml_set_name(g->inp_embd, "inp_embd");
    ggml_set_input(g->inp_embd);
    return g->inp_embd;
}

struct ggml_tensor * llm_graph_inp_pos(struct llm_graph * g) {
    if (!g->inp_pos) {
        g->inp_pos = ggml_new_tensor_1d(g->ctx0, GGML_TYPE_I32, g->n_tokens);
        ggml_set_name(g->inp_pos, "inp_pos");
        ggml_set_input(g->inp_pos);
    }
    return g->inp_pos;
}

struct ggml_tensor * llm_graph_rms_norm(struct llm_graph * g, struct ggml_tensor * cur, struct ggml_tensor * w) {
    cur = ggml_rms_norm(g->ctx0, cur, g->hp->f_norm_rms_eps);
    if (w) {
        cur = ggml_mul(g->ctx0, cur, w);
    }
    return cur;
}

struct ggml_tensor * llm_graph_lin(struct llm_graph * g, struct ggml_tensor * w, struct ggml_tensor * b,
        struct ggml_tensor * cur) {
    cur = llm_graph_mm(g, w, cur);
    if (b) {
        cur = ggml_add(g->ctx0, cur, b);
    }
    return cur;
}

void llm_graph_qkv(struct llm_graph * g, uint32_t il, struct ggml_tensor * cur,
        struct ggml_tensor ** q, struct ggml_tensor ** k, struct ggml_tensor ** v) {
    struct ggml_context * ctx0 = g->ctx0;
    const struct llama_hparams * hp = g->hp;
    const struct llama_layer * L = &g->model->layers[il];
    const int64_t hd_k      = hp->n_embd_head_k;
    const int64_t hd_v      = hp->n_embd_head_v;
    const int64_t n_head    = llama_hparams_n_head(hp, il);
    const int64_t n_head_kv = llama_hparams_n_head_kv(hp, il);
    if (L->wqkv) {
        // fused projection: rows are [q | k | v]
        struct ggml_tensor * qkv = llm_graph_lin(g, L->wqkv, L->bqkv, cur);
        const size_t es  = ggml_element_size(qkv);
        const size_t n_q = (size_t) (hd_k * n_head), n_k = (size_t) (hd_k * n_head_kv);
        *q = ggml_cont(ctx0, ggml_view_3d(ctx0, qkv, hd_k, n_head, g->n_tokens, hd_k * es, qkv->nb[1], 0));
        *k = ggml_cont(ctx0, ggml_view_3d(ctx0, qkv, hd_k, n_head_kv, g->n_tokens, hd_k * es, qkv->nb[1], n_q * es));
        *v = ggml_view_3d(ctx0, qkv, hd_v, n_head_kv, g->n_tokens, hd_v * es, qkv->nb[1], (n_q + n_k) * es);
        return;
    }
    struct ggml_tensor * mq = llm_graph_mm(g, L->wq, cur);
    struct ggml_tensor * mk = llm_graph_mm(g, L->wk, cur);
    struct ggml_tensor * mv = llm_graph_mm(g, L->wv, cur);
    // side by side in the graph (otherwise each one is followed by its own rope etc.): the CPU backend computes
    // consecutive matmuls of the same activations as one group
    ggml_build_forward_expand(g->gf, mq);
    ggml_build_forward_expand(g->gf, mk);
    ggml_build_forward_expand(g->gf, mv);
    *q = ggml_reshape_3d(ctx0, L->bq ? ggml_add(ctx0, mq, L->bq) : mq, hd_k, n_head,    g->n_tokens);
    *k = ggml_reshape_3d(ctx0, L->bk ? ggml_add(ctx0, mk, L->bk) : mk, hd_k, n_head_kv, g->n_tokens);
    *v = ggml_reshape_3d(ctx0, L->bv ? ggml_add(ctx0, mv, L->bv) : mv, hd_v, n_head_kv, g->n_tokens);
}

struct ggml_tensor * llm_graph_rope(struct llm_graph * g, struct ggml_tensor * cur, uint32_t il) {
    const struct llama_hparams * hp = g->hp;
    const struct llama_cparams * cp = g->cp;
    const bool is_swa = llama_hparams_is_swa(hp, il);
    return ggml_rope_ext(g->ctx0, cur, llm_graph_inp_pos(g), g->model->layers[il].rope_freqs,
            (int) hp->n_rot, (int) hp->rope_type, (int) cp->n_ctx_orig_yarn,
            is_swa ? hp->rope_freq_base_train_swa : cp->rope_freq_base,
            is_swa ? hp->rope_freq_scale_train_swa : cp->rope_freq_scale,
            cp->yarn_ext_factor, cp->yarn_attn_factor, cp->yarn_beta_fast, cp->yarn_beta_slow);
}

static struct ggml_tensor * kq_mask(struct llm_graph * g, bool swa) {
    struct ggml_tensor ** m = swa ? &g->inp_kq_mask_swa : &g->inp_kq_mask;
    if (!*m) {
        *m = ggml_new_tensor_2d(g->ctx0, GGML_TYPE_F32, swa && g->kv->swa ? g->n_kv_swa : g->n_kv, g->n_tokens);
        ggml_set_name(*m, swa ? "inp_kq_mask_swa" : "inp_kq_mask");
        ggml_set_input(*m);
    }
    return *m;
}

static struct ggml_tensor * k_idxs(struct llm_graph * g, bool swa_cache) {
    struct ggml_tensor ** t = swa_cache ? &g->inp_k_idxs_swa : &g->inp_k_idxs;
    if (!*t) {
        *t = ggml_new_tensor_1d(g->ctx0, GGML_TYPE_I64, g->n_tokens);
        ggml_set_name(*t, swa_cache ? "inp_k_idxs_swa" : "inp_k_idxs");
        ggml_set_input(*t);
    }
    return *t;
}

// The attention proper, shared by inference and training: q [hd_k, n_head, n_tokens]; kp the keys [hd_k, n_kv,
// n_head_kv]; with the flash-attention layout (!v_trans) vp the values [hd_v, n_kv, n_head_kv], with the
// transposed cache (v_trans, the mul_mat + soft_max path) vp the values [n_kv, hd_v, n_head_kv]. Then the output
// projection wo (+ bo) when wo is given.
static struct ggml_tensor * attn_core(struct llm_graph * g, struct ggml_tensor * q, struct ggml_tensor * kp,
        struct ggml_tensor * vp, bool v_trans, struct ggml_tensor * wo, struct ggml_tensor * bo, float kq_scale,
        bool is_swa) {
    struct ggml_context * ctx0 = g->ctx0;
    const struct llama_hparams * hp = g->hp;
    const int64_t n_head = q->ne[1];
    const int64_t hd_v   = v_trans ? vp->ne[1] : vp->ne[0];

    struct ggml_tensor * mask = kq_mask(g, is_swa);              // [n_kv, n_tokens]
    struct ggml_tensor * qp   = ggml_permute(ctx0, q, 0, 2, 1, 3); // [hd_k, n_tokens, n_head]
    struct ggml_tensor * cur;
    if (!v_trans) {
        cur = ggml_flash_attn_ext(ctx0, qp, kp, vp, mask, kq_scale, 0.0f,
                hp->use_attn_softcap ? hp->f_attn_logit_softcapping : 0.0f);
        ggml_flash_attn_ext_set_prec(cur, GGML_PREC_F32);
    } else {
        struct ggml_tensor * kq = ggml_mul_mat(ctx0, kp, qp);      // [n_kv, n_tokens, n_head]
        ggml_mul_mat_set_prec(kq, GGML_PREC_F32);
        if (hp->use_attn_softcap && hp->f_attn_logit_softcapping > 0.0f) {
            kq = ggml_scale(ctx0, kq, kq_scale / hp->f_attn_logit_softcapping);
            kq = ggml_tanh(ctx0, kq);
            kq = ggml_scale(ctx0, kq, hp->f_attn_logit_softcapping);
            kq_scale = 1.0f;
        }
        kq = ggml_soft_max_ext(ctx0, kq, mask, kq_scale, 0.0f);
        struct ggml_tensor * kqv = ggml_mul_mat(ctx0, vp, kq);     // [hd_v, n_tokens, n_head]
        // 3-D cont keeps whole rows per copy (a cont_2d of the permuted view would copy element by element)
        cur = ggml_cont(ctx0, ggml_permute(ctx0, kqv, 0, 2, 1, 3)); // [hd_v, n_head, n_tokens]
    }
    cur = ggml_reshape_2d(ctx0, cur, hd_v * n_head, g->n_tokens);
    if (wo) {
        cur = llm_graph_lin(g, wo, bo, cur);
    }
    return cur;
}

// Training (llama_opt_epoch): the micro-batch holds positions p0 .. p0+n-1 of one sequence whose earlier tokens
// sit in cache cells 0 .. p0-1 (written by the previous micro-batches). Inference writes K/V into the cache with
// set_rows and reads them back, an in-place op the backward pass cannot cross. Here the keys are instead
// set(cast(cache cells 0 .. p0+n-1), k): the earlier tokens are constants, as in llama.cpp, and this
// micro-batch's K / V stay on the gradient path to wk / wv. A plain copy (which the backward pass allows) also
// stores K / V in cells p0 .. p0+n-1 for the next micro-batches. n_kv = p0 + n; the mask is built from positions.
static struct ggml_tensor * attn_training(struct llm_graph * g, struct llama_memory_i * kv, uint32_t il,
        struct ggml_tensor * q, struct ggml_tensor * k, struct ggml_tensor * v, struct ggml_tensor * wo,
        struct ggml_tensor * bo, float kq_scale, bool is_swa) {
    struct ggml_context * ctx0 = g->ctx0;
    struct ggml_tensor * kc = kv->k[il];
    struct ggml_tensor * vc = kv->v[il];
    const int64_t n      = g->n_tokens;
    const int64_t n_kv   = g->n_kv;
    const int64_t p0     = n_kv - n;
    const int64_t hd_k = k->ne[0], n_head_kv = k->ne[1], hd_v = v->ne[0];
    const int64_t n_embd_k = hd_k * n_head_kv, n_embd_v = hd_v * n_head_kv;

    struct ggml_tensor * k2 = ggml_reshape_2d(ctx0, ggml_cont(ctx0, k), n_embd_k, n); // [n_embd_k, n]
    struct ggml_tensor * v2 = ggml_reshape_2d(ctx0, ggml_cont(ctx0, v), n_embd_v, n); // [n_embd_v, n]

    // keys of cells 0 .. n_kv-1, this micro-batch's own in the last n rows
    struct ggml_tensor * k_all = ggml_cast(ctx0, ggml_view_2d(ctx0, kc, n_embd_k, n_kv, kc->nb[1], 0), GGML_TYPE_F32);
    k_all = ggml_set_2d(ctx0, k_all, k2, k_all->nb[1], (size_t) p0 * k_all->nb[1]);
    ggml_build_forward_expand(g->gf, ggml_cpy(ctx0, k2, ggml_view_2d(ctx0, kc, n_embd_k, n, kc->nb[1], (size_t) p0 * kc->nb[1])));
    struct ggml_tensor * kp = ggml_permute(ctx0, ggml_reshape_3d(ctx0, k_all, hd_k, n_head_kv, n_kv), 0, 2, 1, 3);

    struct ggml_tensor * vp;
    if (!kv->v_trans) {
        struct ggml_tensor * v_all = ggml_cast(ctx0, ggml_view_2d(ctx0, vc, n_embd_v, n_kv, vc->nb[1], 0), GGML_TYPE_F32);
        v_all = ggml_set_2d(ctx0, v_all, v2, v_all->nb[1], (size_t) p0 * v_all->nb[1]);
        ggml_build_forward_expand(g->gf, ggml_cpy(ctx0, v2, ggml_view_2d(ctx0, vc, n_embd_v, n, vc->nb[1], (size_t) p0 * vc->nb[1])));
        vp = ggml_permute(ctx0, ggml_reshape_3d(ctx0, v_all, hd_v, n_head_kv, n_kv), 0, 2, 1, 3);
    } else {
        // the transposed cache: channels along ne1, cells along ne0
        struct ggml_tensor * vt2   = ggml_cont(ctx0, ggml_transpose(ctx0, v2)); // [n, n_embd_v]
        struct ggml_tensor * v_all = ggml_cast(ctx0, ggml_view_2d(ctx0, vc, n_kv, n_embd_v, vc->nb[1], 0), GGML_TYPE_F32);
        v_all = ggml_set_2d(ctx0, v_all, vt2, v_all->nb[1], (size_t) p0 * ggml_element_size(v_all));
        ggml_build_forward_expand(g->gf, ggml_cpy(ctx0, vt2, ggml_view_2d(ctx0, vc, n, n_embd_v, vc->nb[1],
                                                                        (size_t) p0 * ggml_element_size(vc))));
        vp = ggml_reshape_3d(ctx0, v_all, n_kv, hd_v, n_head_kv); // [n_kv, hd_v, n_head_kv]
        // the mul_mat path of training has always read the keys from a contiguous copy (kept: same graph as before)
        kp = ggml_cont(ctx0, kp);
    }
    return attn_core(g, q, kp, vp, kv->v_trans, wo, bo, kq_scale, is_swa);
}

struct ggml_tensor * llm_graph_attn(struct llm_graph * g, uint32_t il, struct ggml_tensor * q,
        struct ggml_tensor * k, struct ggml_tensor * v, struct ggml_tensor * wo, struct ggml_tensor * bo,
        float kq_scale) {
    struct ggml_context * ctx0 = g->ctx0;
    const struct llama_hparams * hp = g->hp;
    // sliding-window layers of an iSWA cache live in its small swa cache
    const bool is_swa = llama_hparams_is_swa(hp, il);
    const bool in_swa_cache = is_swa && g->kv->swa;
    struct llama_memory_i * kv = in_swa_cache ? g->kv->swa : g->kv;
    const uint32_t n_kv = in_swa_cache ? g->n_kv_swa : g->n_kv;
    const uint32_t n_head_kv = llama_hparams_n_head_kv(hp, il);
    const uint32_t hd_k      = hp->n_embd_head_k;
    const uint32_t hd_v      = hp->n_embd_head_v;
    if (g->training) {
        return attn_training(g, kv, il, q, k, v, wo, bo, kq_scale, is_swa);
    }
    struct ggml_tensor * kc = kv->k[il];
    struct ggml_tensor * vc = kv->v[il];

    // store the new K (already rotated) and V rows in the cells chosen for the ubatch
    if (!ggml_is_contiguous(k)) {
        k = ggml_cont(ctx0, k);
    }
    if (!ggml_is_contiguous(v)) {
        v = ggml_cont(ctx0, v);
    }
    struct ggml_tensor * idx = k_idxs(g, in_swa_cache);
    struct ggml_tensor * kc_w = ggml_set_rows(ctx0, kc, ggml_reshape_2d(ctx0, k, hd_k * n_head_kv, g->n_tokens), idx);
    struct ggml_tensor * vc_w;
    if (kv->v_trans) {
        // the cache is [size, n_embd_v_gqa]: seen as rows of one element ([1, size, n_embd_v_gqa]) the new
        // values are n_tokens such rows per channel, and the same cell indices serve every channel; the
        // writes go channel by channel along the cells, so contiguous cells are written sequentially
        const int64_t n_embd_v = (int64_t) hd_v * n_head_kv;
        const size_t  es      = ggml_element_size(vc);
        struct ggml_tensor * dst = ggml_view_3d(ctx0, vc, 1, vc->ne[0], n_embd_v, es, vc->nb[1], 0);
        struct ggml_tensor * src = ggml_view_3d(ctx0, v, 1, g->n_tokens, n_embd_v,
                (size_t) n_embd_v * ggml_element_size(v), ggml_element_size(v), 0);
        vc_w = ggml_set_rows(ctx0, dst, src, idx);
    } else {
        vc_w = ggml_set_rows(ctx0, vc, ggml_reshape_2d(ctx0, v, hd_v * n_head_kv, g->n_tokens), idx);
    }

    // read back through the set_rows results so the reads are ordered after the writes
    struct ggml_tensor * kview = ggml_view_3d(ctx0, kc_w, hd_k, n_head_kv, n_kv,
            ggml_row_size(kc->type, hd_k), kc->nb[1], 0);
    struct ggml_tensor * kp = ggml_permute(ctx0, kview, 0, 2, 1, 3); // [hd_k, n_kv, n_head_kv]
    struct ggml_tensor * vp;
    if (!kv->v_trans) {
        struct ggml_tensor * vview = ggml_view_3d(ctx0, vc_w, hd_v, n_head_kv, n_kv,
                ggml_row_size(vc->type, hd_v), vc->nb[1], 0);
        vp = ggml_permute(ctx0, vview, 0, 2, 1, 3);                   // [hd_v, n_kv, n_head_kv]
    } else {
        // the transposed cache already has the cells along ne0: [n_kv, hd_v, n_head_kv], read in place
        vp = ggml_view_3d(ctx0, vc_w, n_kv, hd_v, n_head_kv, vc->nb[1], (size_t) hd_v * vc->nb[1], 0);
    }
    return attn_core(g, q, kp, vp, kv->v_trans, wo, bo, kq_scale, is_swa);
}

static struct ggml_tensor * glu_split(struct llm_graph * g, struct ggml_tensor * gate, struct ggml_tensor * up,
        enum llm_ffn_act act) {
    return act == LLM_FFN_GELU ? ggml_geglu_split(g->ctx0, gate, up) : ggml_swiglu_split(g->ctx0, gate, up);
}

struct ggml_tensor * llm_graph_ffn(struct llm_graph * g, struct ggml_tensor * cur, struct ggml_tensor * up,
        struct ggml_tensor * gate, struct ggml_tensor * down, enum llm_ffn_act act) {
    struct ggml_tensor * u = llm_graph_mm(g, up, cur);
    if (gate) {
        cur = glu_split(g, llm_graph_mm(g, gate, cur), u, act);
    } else {
        cur = act == LLM_FFN_GELU ? ggml_geglu(g->ctx0, u) : ggml_swiglu(g->ctx0, u);
    }
    return llm_graph_mm(g, down, cur);
}

struct ggml_tensor * llm_graph_moe(struct llm_graph * g, struct ggml_tensor * cur, struct ggml_tensor * gate_inp,
        struct ggml_tensor * up_exps, struct ggml_tensor * gate_exps, struct ggml_tensor * down_exps,
        uint32_t n_expert, uint32_t n_expert_used, bool norm_w, enum llm_ffn_act act) {
    struct ggml_context * ctx0 = g->ctx0;
    const int64_t n_embd   = cur->ne[0];
    const int64_t n_tokens = cur->ne[1];

    struct ggml_tensor * logits = llm_graph_mm(g, gate_inp, cur);               // [n_expert, n_tokens]
    struct ggml_tensor * probs  = ggml_soft_max(ctx0, logits);
    struct ggml_tensor * sel    = ggml_argsort_top_k(ctx0, probs, (int) n_expert_used); // [k, n_tokens]
    struct ggml_tensor * w      = ggml_get_rows(ctx0, ggml_reshape_3d(ctx0, probs, 1, n_expert, n_tokens), sel);
    if (norm_w) {
        struct ggml_tensor * w2  = ggml_reshape_2d(ctx0, w, n_expert_used, n_tokens);
        struct ggml_tensor * sum = ggml_sum_rows(ctx0, w2);                     // [1, n_tokens]
        sum = ggml_clamp(ctx0, sum, 6.103515625e-5f, INFINITY);
        w2  = ggml_div(ctx0, w2, sum);
        w   = ggml_reshape_3d(ctx0, w2, 1, n_expert_used, n_tokens);
    }
    struct ggml_tensor * x  = ggml_reshape_3d(ctx0, cur, n_embd, 1, n_tokens);
    struct ggml_tensor * up = ggml_mul_mat_id(ctx0, up_exps, x, sel);           // [n_ff, k, n_tokens]
    struct ggml_tensor * gt = ggml_mul_mat_id(ctx0, gate_exps, x, sel);
    struct ggml_tensor * par = glu_split(g, gt, up, act);
    struct ggml_tensor * ex = ggml_mul_mat_id(ctx0, down_exps, par, sel);       // [n_embd, k, n_tokens]
    ex = ggml_mul(ctx0, ex, w);
    struct ggml_tensor * out = NULL;
    for (uint32_t i = 0; i < n_expert_used; i++) {
        struct ggml_tensor * e = ggml_view_2d(ctx0, ex, n_embd, n_tokens, ex->nb[2], i * ex->nb[1]);
        out = out ? ggml_add(ctx0, out, e) : e;
    }
    if (n_expert_used == 1) {
        out = ggml_cont(ctx0, out);
    }
    return out;
}

void llm_graph_output(struct llm_graph * g, struct ggml_tensor * cur, float logit_scale) {
    struct ggml_context * ctx0 = g->ctx0;
    const struct llama_model * model = g->model;
    if (g->n_outputs == 0) {
        // nothing to return, but the KV writes of the last layer must still run
        ggml_build_forward_expand(g->gf, cur);
        return;
    }
    if (g->n_outputs < g->n_tokens) {
        g->inp_out_ids = ggml_new_tensor_1d(ctx0, GGML_TYPE_I32, g->n_outputs);
        ggml_set_name(g->inp_out_ids, "inp_out_ids");
        ggml_set_input(g->inp_out_ids);
        cur = ggml_get_rows(ctx0, cur, g->inp_out_ids);
    }
    cur = llm_graph_rms_norm(g, cur, model->output_norm);
    if (model->output_norm_b) {
        cur = ggml_add(ctx0, cur, model->output_norm_b);
    }
    g->t_embd = cur;
    ggml_set_name(cur, "result_norm");
    cur = llm_graph_lin(g, model->output, model->output_b, cur);
    if (logit_scale != 0.0f && logit_scale != 1.0f) {
        cur = ggml_scale(ctx0, cur, logit_scale);
    }
    if (g->hp->f_final_logit_softcapping > 0.0f) {
        cur = ggml_scale(ctx0, cur, 1.0f / g->hp->f_final_logit_softcapping);
        cur = ggml_tanh(ctx0, cur);
        cur = ggml_scale(ctx0, cur, g->hp->f_final_logit_softcapping);
    }
    g->t_logits = cur;
    ggml_set_name(cur, "result_output");
    ggml_set_output(g->t_embd);
    ggml_set_output(g->t_logits);
    ggml_build_forward_expand(g->gf, g->t_embd);
    ggml_build_forward_expand(g->gf, g->t_logits);
}

bool llm_graph_build(struct llm_graph * g) {
    switch (g->model->arch) {
        case LLM_ARCH_LLAMA:    return llm_build_llama(g);
        case LLM_ARCH_QWEN2:    return llm_build_qwen2(g);
        case LLM_ARCH_QWEN3:    return llm_build_qwen3(g);
        case LLM_ARCH_QWEN3MOE: return llm_build_qwen3moe(g);
        case LLM_ARCH_GEMMA3:   return llm_build_gemma3(g);
        case LLM_ARCH_PHI3:     return llm_build_phi3(g);
        case LLM_ARCH_GRANITE:  return llm_build_granite(g);
        case LLM_ARCH_EXAONE4:  return llm_build_exaone4(g);
        default:
            LLAMA_LOG_ERROR("llm_graph_build: architecture '%s' has no graph builder\n", llm_arch_name(g->model->arch));
            return false;
    }
}

// the training mask (one sequence, cell j holds position j, see attn_training): causal, and within the window
// on sliding-window layers
static void training_mask(const struct llm_graph * g, bool swa, float * data) {
    const struct llama_ubatch * ub = g->ub;
    const uint32_t n = g->n_tokens, n_kv = g->n_kv;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < n_kv; j++) {
            const llama_pos pi = ub->pos[i], pj = (llama_pos) j;
            bool masked = g->cp->causal_attn && pj > pi;
            // the window as the cache's mask draws it (standard, chunked or symmetric)
            masked = masked || (swa && g->hp->n_swa > 0 && llama_hparams_is_masked_swa(g->hp->n_swa, g->hp->swa_type, pj, pi));
            data[(size_t) i * n_kv + j] = masked ? -INFINITY : 0.0f;
        }
    }
}

void llm_graph_set_inputs(struct llm_graph * g) {
    const struct llama_ubatch * ub = g->ub;
    const uint32_t n = g->n_tokens;
    if (g->inp_tokens) {
        ggml_backend_tensor_set(g->inp_tokens, ub->token, 0, n * sizeof(int32_t));
    }
    if (g->inp_embd) {
        ggml_backend_tensor_set(g->inp_embd, ub->embd, 0, (size_t) n * g->hp->n_embd * sizeof(float));
    }
    if (g->inp_pos) {
        ggml_backend_tensor_set(g->inp_pos, ub->pos, 0, n * sizeof(int32_t));
    }
    if (g->inp_k_idxs) {
        ggml_backend_tensor_set(g->inp_k_idxs, g->k_idxs, 0, n * sizeof(int64_t));
    }
    if (g->inp_k_idxs_swa) {
        ggml_backend_tensor_set(g->inp_k_idxs_swa, g->k_idxs_swa, 0, n * sizeof(int64_t));
    }
    if (g->inp_out_ids) {
        int32_t * ids = malloc((g->n_outputs ? g->n_outputs : 1) * sizeof(int32_t));
        if (ids) {
            uint32_t k = 0;
            for (uint32_t i = 0; i < n && k < g->n_outputs; i++) {
                if (ub->output[i]) {
                    ids[k++] = (int32_t) i;
                }
            }
            ggml_backend_tensor_set(g->inp_out_ids, ids, 0, g->n_outputs * sizeof(int32_t));
            free(ids);
        }
    }
    struct ggml_tensor * masks[2] = { g->inp_kq_mask, g->inp_kq_mask_swa };
    for (int m = 0; m < 2; m++) {
        if (!masks[m]) {
            continue;
        }
        // the sliding-window mask is over the swa cache when there is one
        const struct llama_memory_i * kv = m == 1 && g->kv->swa ? g->kv->swa : g->kv;
        const uint32_t n_kv = m == 1 && g->kv->swa ? g->n_kv_swa : g->n_kv;
        float * data = malloc((size_t) n * n_kv * sizeof(float));
        if (!data) {
            continue;
        }
        if (g->training) {
            training_mask(g, m == 1, data);
        } else {
            llama_kv_cache_fill_mask(kv, ub, n_kv, g->cp->causal_attn, m == 1, data);
        }
        ggml_backend_tensor_set(masks[m], data, 0, (size_t) n * n_kv * sizeof(float));
        free(data);
    }
}

size_t llm_graph_max_nodes(const struct llama_model * model) {
    size_t n_tensors = 0;
    if (model->ctx_w) {
        for (struct ggml_tensor * t = ggml_get_first_tensor(model->ctx_w); t; t = ggml_get_next_tensor(model->ctx_w, t)) {
            n_tensors++;
        }
    }
    // the 64 per layer also cover the control vector's one add per layer
    size_t r = 8 * n_tensors + 64 * (size_t) model->hparams.n_layer + llama_adapter_lora_graph_nodes(model);
    return r > 1024 ? r : 1024;
}
