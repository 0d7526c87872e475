// Phi-3: fused QKV projection, fused gate+up FFN, NEOX RoPE, queries pre-scaled.
#include "../llama-graph.h"
#include "../llama-model.h"

#include <math.h>

bool llm_build_phi3(struct llm_graph * g) {
    struct ggml_context * ctx0 = g->ctx0;
    const struct llama_hparams * hp = g->hp;
    const uint32_t hd = hp->n_embd_head_k;

    struct ggml_tensor * x = llm_graph_inp_embd(g);
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const struct llama_layer * L = &g->model->layers[il];
        const uint32_t n_head = llama_hparams_n_head(hp, il);
        const uint32_t n_head_kv = llama_hparams_n_head_kv(hp, il);
        const size_t es = sizeof(float);
        struct ggml_tensor * h = llm_graph_rms_norm(g, x, L->attn_norm);
        struct ggml_tensor * q, * k, * v;
        if (L->wqkv) {
            struct ggml_tensor * qkv = llm_graph_lin(g, L->wqkv, L->bqkv, h);
            const size_t n_q = (size_t) hd * n_head, n_k = (size_t) hd * n_head_kv;
            q = ggml_view_3d(ctx0, qkv, hd, n_head, g->n_tokens, hd * es, qkv->nb[1], 0);
            k = ggml_view_3d(ctx0, qkv, hd, n_head_kv, g->n_tokens, hd * es, qkv->nb[1], n_q * es);
            v = ggml_view_3d(ctx0, qkv, hp->n_embd_head_v, n_head_kv, g->n_tokens, hp->n_embd_head_v * es,
                    qkv->nb[1], (n_q + n_k) * es);
            q = ggml_cont(ctx0, q);
            k = ggml_cont(ctx0, k);
        } else {
            q = ggml_reshape_3d(ctx0, llm_graph_lin(g, L->wq, L->bq, h), hd, n_head, g->n_tokens);
            k = ggml_reshape_3d(ctx0, llm_graph_lin(g, L->wk, L->bk, h), hd, n_head_kv, g->n_tokens);
            v = ggml_reshape_3d(ctx0, llm_graph_lin(g, L->wv, L->bv, h), hp->n_embd_head_v, n_head_kv, g->n_tokens);
        }
        q = llm_graph_rope(g, q, il);
        k = llm_graph_rope(g, k, il);
        q = ggml_scale(ctx0, q, 1.0f / sqrtf((float) hd));
        x = ggml_add(ctx0, x, llm_graph_attn(g, il, q, k, v, L->wo, L->bo, 1.0f));

        h = llm_graph_rms_norm(g, x, L->ffn_norm);
        x = ggml_add(ctx0, x, llm_graph_ffn(g, h, L->ffn_up, L->ffn_gate, L->ffn_down, LLM_FFN_SILU));
    }
    llm_graph_output(g, x, 0.0f);
    return true;
}
