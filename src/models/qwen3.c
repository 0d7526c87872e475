// Qwen3 (and the attention of Qwen3-MoE): per-head RMS norm of Q and K before RoPE.
#include "../llama-graph.h"
#include "../llama-model.h"

#include <math.h>

bool llm_build_qwen3_common(struct llm_graph * g, bool moe) {
    struct ggml_context * ctx0 = g->ctx0;
    const struct llama_hparams * hp = g->hp;
    const uint32_t hd = hp->n_embd_head_k;
    const float kq_scale = 1.0f / sqrtf((float) hd);

    struct ggml_tensor * x = llm_graph_inp_embd(g);
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const struct llama_layer * L = &g->model->layers[il];
        struct ggml_tensor * h = llm_graph_rms_norm(g, x, L->attn_norm);
        struct ggml_tensor * q, * k, * v;
        llm_graph_qkv(g, il, h, &q, &k, &v);
        q = llm_graph_rms_norm(g, q, L->attn_q_norm);
        k = llm_graph_rms_norm(g, k, L->attn_k_norm);
        q = llm_graph_rope(g, q, il);
        k = llm_graph_rope(g, k, il);
        x = ggml_add(ctx0, x, llm_graph_attn(g, il, q, k, v, L->wo, L->bo, kq_scale));

        h = llm_graph_rms_norm(g, x, L->ffn_norm);
        struct ggml_tensor * f = moe
            ? llm_graph_moe(g, h, L->ffn_gate_inp, L->ffn_up_exps, L->ffn_gate_exps, L->ffn_down_exps,
                    hp->n_expert, hp->n_expert_used, true, LLM_FFN_SILU)
            : llm_graph_ffn(g, h, L->ffn_up, L->ffn_gate, L->ffn_down, LLM_FFN_SILU);
        x = ggml_add(ctx0, x, f);
        x = llm_graph_cvec(g, x, il);
    }
    llm_graph_output(g, x, 0.0f);
    return true;
}

bool llm_build_qwen3(struct llm_graph * g) {
    return llm_build_qwen3_common(g, false);
}
