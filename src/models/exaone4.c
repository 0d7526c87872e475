// EXAONE 4: no pre-norms; QK-norm; post-norms on the attention and FFN outputs before the residual adds.
#include "../llama-graph.h"
#include "../llama-model.h"

#include <math.h>

bool llm_build_exaone4(struct llm_graph * g) {
    struct ggml_context * ctx0 = g->ctx0;
    const struct llama_hparams * hp = g->hp;
    const uint32_t hd = hp->n_embd_head_k;
    const float kq_scale = 1.0f / sqrtf((float) hd);

    struct ggml_tensor * x = llm_graph_inp_embd(g);
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const struct llama_layer * L = &g->model->layers[il];
        struct ggml_tensor * q, * k, * v;
        llm_graph_qkv(g, il, x, &q, &k, &v);
        q = llm_graph_rms_norm(g, q, L->attn_q_norm);
        k = llm_graph_rms_norm(g, k, L->attn_k_norm);
        // the model applies RoPE on every layer unless it has a sliding window, and then only on SWA layers
        if (hp->swa_type == LLAMA_SWA_TYPE_NONE || llama_hparams_is_swa(hp, il)) {
            q = llm_graph_rope(g, q, il);
            k = llm_graph_rope(g, k, il);
        }
        struct ggml_tensor * a = llm_graph_attn(g, il, q, k, v, L->wo, L->bo, kq_scale);
        x = ggml_add(ctx0, x, llm_graph_rms_norm(g, a, L->attn_post_norm));

        struct ggml_tensor * f = llm_graph_ffn(g, x, L->ffn_up, L->ffn_gate, L->ffn_down, LLM_FFN_SILU);
        x = ggml_add(ctx0, x, llm_graph_rms_norm(g, f, L->ffn_post_norm));
        x = llm_graph_cvec(g, x, il);
    }
    llm_graph_output(g, x, 0.0f);
    return true;
}
