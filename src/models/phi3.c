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
        struct ggml_tensor * h = llm_graph_rms_norm(g, x, L->attn_norm);
        struct ggml_tensor * q, * k, * v;
        llm_graph_qkv(g, il, h, &q, &k, &v);
        q = llm_graph_rope(g, q, il);
        k = llm_graph_rope(g, k, il);
        q = ggml_scale(ctx0, q, 1.0f / sqrtf((float) hd));
        x = ggml_add(ctx0, x, llm_graph_attn(g, il, q, k, v, L->wo, L->bo, 1.0f));

        h = llm_graph_rms_norm(g, x, L->ffn_norm);
        x = ggml_add(ctx0, x, llm_graph_ffn(g, h, L->ffn_up, L->ffn_gate, L->ffn_down, LLM_FFN_SILU));
        x = llm_graph_cvec(g, x, il);
    }
    llm_graph_output(g, x, 0.0f);
    return true;
}
