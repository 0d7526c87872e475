// Graph building blocks shared by the architectures (src/models/*.c): inputs, norms, attention over the KV
// cache, feed-forward and mixture-of-experts blocks, the output head. One llm_graph per ubatch.
#pragma once

#include "llama.h"
#include "llama-batch.h"
#include "llama-hparams.h"

#include "ggml.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct llama_model;
struct llama_memory_i;
struct llama_ctx_adapters;

// the context parameters after resolution (see llama_init_from_model)
struct llama_cparams {
    uint32_t n_ctx;
    uint32_t n_ctx_seq;
    uint32_t n_batch;
    uint32_t n_ubatch;
    uint32_t n_seq_max;
    uint32_t n_rs_seq;
    uint32_t n_outputs_max;
    uint32_t n_outputs_max_per_seq;
    int32_t  n_threads;
    int32_t  n_threads_batch;

    float    rope_freq_base;
    float    rope_freq_scale;
    uint32_t n_ctx_orig_yarn;
    float    yarn_ext_factor;
    float    yarn_attn_factor;
    float    yarn_beta_fast;
    float    yarn_beta_slow;

    bool embeddings;
    bool causal_attn;
    bool offload_kqv;
    bool flash_attn;
    bool no_perf;
    bool warmup;
    bool op_offload;
    bool kv_unified;
    bool swa_full;

    enum llama_pooling_type pooling_type;
};

enum llm_ffn_act {
    LLM_FFN_SILU,
    LLM_FFN_GELU,
};

struct llm_graph {
    struct ggml_context * ctx0;
    struct ggml_cgraph  * gf;

    const struct llama_model   * model;
    const struct llama_hparams * hp;
    const struct llama_cparams * cp;
    const struct llama_ubatch  * ub;
    struct llama_memory_i      * kv;
    const struct llama_ctx_adapters * adapters; // LoRA set and control vector of the context (NULL: none)

    uint32_t n_tokens;
    uint32_t n_outputs;          // rows of the ubatch with output set
    uint32_t n_kv;               // cache cells the attention looks at
    uint32_t n_kv_swa;           // the same in kv->swa (sliding-window layers of an iSWA cache)
    bool     training;           // llama_opt_epoch: one sequence, positions n_kv - n_tokens .. n_kv - 1 (cells =
                                 // positions, n_kv_swa = n_kv); the attention keeps K/V differentiable

    // inputs, filled by llm_graph_set_inputs after allocation
    struct ggml_tensor * inp_tokens;      // I32 [n_tokens]
    struct ggml_tensor * inp_embd;        // F32 [n_embd, n_tokens]
    struct ggml_tensor * inp_pos;         // I32 [n_tokens]
    struct ggml_tensor * inp_out_ids;     // I32 [n_outputs]
    struct ggml_tensor * inp_kq_mask;     // F32 [n_kv, n_tokens]
    struct ggml_tensor * inp_kq_mask_swa; // F32 [n_kv (n_kv_swa with kv->swa), n_tokens]
    struct ggml_tensor * inp_k_idxs;      // I64 [n_tokens] cache cells of the ubatch tokens
    const int64_t      * k_idxs;          // values for inp_k_idxs
    struct ggml_tensor * inp_k_idxs_swa;  // I64 [n_tokens] their cells in kv->swa
    const int64_t      * k_idxs_swa;

    // results
    struct ggml_tensor * t_logits;        // [n_vocab, n_outputs]
    struct ggml_tensor * t_embd;          // [n_embd, n_outputs] after the output norm
};

// Everything a ubatch graph's topology depends on besides the model and the context's caches: two ubatches with
// equal keys get the same graph, so the second can reuse the first's (only the input values differ).
struct llm_graph_key {
    uint32_t n_tokens;
    uint32_t n_outputs;
    uint32_t n_kv;
    uint32_t n_kv_swa;
    bool     has_token;   // input is token ids (else embeddings)
    bool     causal_attn;
    bool     embeddings;
};

// true when a graph built for a can serve b
bool llm_graph_key_equal(const struct llm_graph_key * a, const struct llm_graph_key * b);

// --- inputs ---
struct ggml_tensor * llm_graph_inp_embd(struct llm_graph * g);  // token rows (dequantized), or the batch embd
struct ggml_tensor * llm_graph_inp_pos (struct llm_graph * g);

// --- blocks ---
struct ggml_tensor * llm_graph_rms_norm(struct llm_graph * g, struct ggml_tensor * cur, struct ggml_tensor * w);
// w · cur for a model weight w, plus scale · B(A · cur) for every LoRA adapter of the context that adapts w.
// Every weight matmul of every architecture goes through here; without adapters it is the plain matmul.
struct ggml_tensor * llm_graph_mm(struct llm_graph * g, struct ggml_tensor * w, struct ggml_tensor * cur);
// cur + the context's control vector for layer il (cur itself when none applies): the end of every layer
struct ggml_tensor * llm_graph_cvec(struct llm_graph * g, struct ggml_tensor * cur, uint32_t il);
struct ggml_tensor * llm_graph_lin(struct llm_graph * g, struct ggml_tensor * w, struct ggml_tensor * b,
        struct ggml_tensor * cur);
// Q, K, V of layer il from cur, each [head_dim, n_head(_kv), n_tokens]: the separate projections (plus their
// biases when the file has them) or the fused wqkv split in three
void llm_graph_qkv(struct llm_graph * g, uint32_t il, struct ggml_tensor * cur,
        struct ggml_tensor ** q, struct ggml_tensor ** k, struct ggml_tensor ** v);
// RoPE for layer il (SWA layers use the SWA base); cur [head_dim, n_head, n_tokens]
struct ggml_tensor * llm_graph_rope(struct llm_graph * g, struct ggml_tensor * cur, uint32_t il);
// attention over the cache for layer il, followed by wo (and bo); q/k/v [head_dim, n_head(_kv), n_tokens]
struct ggml_tensor * llm_graph_attn(struct llm_graph * g, uint32_t il, struct ggml_tensor * q,
        struct ggml_tensor * k, struct ggml_tensor * v, struct ggml_tensor * wo, struct ggml_tensor * bo,
        float kq_scale);
// down · (act(gate · cur) * (up · cur)); gate NULL: up yields [gate; up] concatenated (phi3)
struct ggml_tensor * llm_graph_ffn(struct llm_graph * g, struct ggml_tensor * cur, struct ggml_tensor * up,
        struct ggml_tensor * gate, struct ggml_tensor * down, enum llm_ffn_act act);
// softmax router, top-k experts, optional renormalisation of the chosen weights, gated expert FFNs
struct ggml_tensor * llm_graph_moe(struct llm_graph * g, struct ggml_tensor * cur, struct ggml_tensor * gate_inp,
        struct ggml_tensor * up_exps, struct ggml_tensor * gate_exps, struct ggml_tensor * down_exps,
        uint32_t n_expert, uint32_t n_expert_used, bool norm_w, enum llm_ffn_act act);
// keeps only the output rows, final norm, output head (scale: multiply the logits; 0 = none); sets results
void llm_graph_output(struct llm_graph * g, struct ggml_tensor * cur, float logit_scale);

// builds the model graph for g->ub; false (logged) if the architecture has no builder
bool llm_graph_build(struct llm_graph * g);

// after allocation: upload the input tensors
void llm_graph_set_inputs(struct llm_graph * g);

// the architecture builders (src/models/*.c)
bool llm_build_llama   (struct llm_graph * g);
bool llm_build_qwen2   (struct llm_graph * g);
bool llm_build_qwen3   (struct llm_graph * g);
bool llm_build_qwen3moe(struct llm_graph * g);
bool llm_build_gemma3  (struct llm_graph * g);
bool llm_build_phi3    (struct llm_graph * g);
bool llm_build_granite (struct llm_graph * g);
bool llm_build_exaone4 (struct llm_graph * g);
// qwen3 and qwen3moe share one body (moe: expert FFN)
bool llm_build_qwen3_common(struct llm_graph * g, bool moe);

// max graph nodes for this model
size_t llm_graph_max_nodes(const struct llama_model * model);

#ifdef __cplusplus
}
#endif
