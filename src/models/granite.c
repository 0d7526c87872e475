// Granite: LLaMA with an input scale, a custom attention scale, scaled residual branches and divided logits.
#include "../llama-graph.h"
#include "../llama-model.h"

#include <math.h>

bool llm_build_granite(struct llm_graph * g) {
    struct ggml_context * ctx0 = g->ctx0;
    const struct llama_hparams * hp = g->hp;
    const uint32_t hd = hp->n_embd_head_k;
    const float kq_scale = hp->f_attention_scale == 0.0f ? 1.0f / sqrtf((float) hd) : hp->f_attention_scale;

    struct ggml_tensor * x = llm_graph_inp_embd(g);
    if (hp->f_embedding_scale != 0.0f) {
        x = ggml_scale(ctx0, x, hp->f_embedding_scale);
    }
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const struct llama_layer * L = &g->model->layers[il];
        struct ggml_tensor * h = llm_graph_rms_norm(g, x, L->attn_norm);
        struct ggml_tensor * q, * k, * v;
        llm_graph_qkv(g, il, h, &q, &k, &v);
        q = llm_graph_rope(g, q, il);
        k = llm_graph_rope(g, k, il);
        struct ggml_tensor * a = llm_graph_attn(g, il, q, k, v, L->wo, L->bo, kq_scale);
        if (hp->f_residual_scale != 0.0f) {
            a = ggml_scale(ctx0, a, hp->f_residual_scale);
        }
        x = ggml_add(ctx0, x, a);

        h = llm_graph_rms_norm(g, x, L->ffn_norm);
        struct ggml_tensor * f = L->ffn_gate_inp
            ? llm_graph_moe(g, h, L->ffn_gate_inp, L->ffn_up_exps, L->ffn_gate_exps, L->ffn_down_exps,
                    hp->n_expert, hp->n_expert_used, true, LLM_FFN_SILU)
            : llm_graph_ffn(g, h, L->ffn_up, L->ffn_gate, L->ffn_down, LLM_FFN_SILU);
        if (hp->f_residual_scale != 0.0f) {
            f = ggml_scale(ctx0, f, hp->f_residual_scale);
        }
        x = ggml_add(ctx0, x, f);
        x = llm_graph_cvec(g, x, il);
    }
    llm_graph_output(g, x, hp->f_logit_scale != 0.0f ? 1.0f / hp->f_logit_scale : 0.0f);
    return true;
}
