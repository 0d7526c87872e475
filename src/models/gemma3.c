// Gemma 3: scaled input rows, QK-norm, sandwich norms around attention and FFN, GELU-gated FFN, and
// sliding-window layers with their own RoPE base (llm_graph_rope / the SWA mask pick them per layer).
#include "../llama-graph.h"
#include "../llama-model.h"

#include <math.h>

bool llm_build_gemma3(struct llm_graph * g) {
    struct ggml_context * ctx0 = g->ctx0;
    const struct llama_hparams * hp = g->hp;
    const uint32_t hd = hp->n_embd_head_k;

    struct ggml_tensor * x = llm_graph_inp_embd(g);
    x = ggml_scale(ctx0, x, sqrtf((float) hp->n_embd));
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const struct llama_layer * L = &g->model->layers[il];
        struct ggml_tensor * h = llm_graph_rms_norm(g, x, L->attn_norm);
        struct ggml_tensor * q, * k, * v;
        llm_graph_qkv(g, il, h, &q, &k, &v);
        q = llm_graph_rms_norm(g, q, L->attn_q_norm);
        k = llm_graph_rms_norm(g, k, L->attn_k_norm);
        q = llm_graph_rope(g, q, il);
        k = llm_graph_rope(g, k, il);
        // queries carry the attention scale; the softmax scale is 1
        q = ggml_scale(ctx0, q, hp->f_attention_scale != 0.0f ? hp->f_attention_scale : 1.0f / sqrtf((float) hd));
        struct ggml_tensor * a = llm_graph_attn(g, il, q, k, v, L->wo, NULL, 1.0f);
        a = llm_graph_rms_norm(g, a, L->attn_post_norm);
        x = ggml_add(ctx0, x, a);

        h = llm_graph_rms_norm(g, x, L->ffn_norm);
        struct ggml_tensor * f = llm_graph_ffn(g, h, L->ffn_up, L->ffn_gate, L->ffn_down, LLM_FFN_GELU);
        f = llm_graph_rms_norm(g, f, L->ffn_post_norm);
        x = ggml_add(ctx0, x, f);
        x = llm_graph_cvec(g, x, il);
    }
    llm_graph_output(g, x, 0.0f);
    return true;
}
