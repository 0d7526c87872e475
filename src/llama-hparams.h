// Model hyperparameters read from the {arch}.* GGUF keys.
#pragma once

#include "llama.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LLAMA_MAX_LAYERS  512
#define LLAMA_MAX_EXPERTS 512

enum llama_expert_gating_func_type {
    LLAMA_EXPERT_GATING_FUNC_TYPE_NONE           = 0,
    LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX        = 1,
    LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID        = 2,
    LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT = 3,
};

enum llama_swa_type {
    LLAMA_SWA_TYPE_NONE      = 0,
    LLAMA_SWA_TYPE_STANDARD  = 1, // a key at p0 is hidden from a query at p when p - p0 >= n_swa
    LLAMA_SWA_TYPE_CHUNKED   = 2,
    LLAMA_SWA_TYPE_SYMMETRIC = 3,
};

struct llama_hparams {
    bool     vocab_only;
    bool     rope_finetuned;
    bool     use_par_res;

    uint32_t n_ctx_train;       // context size the model was trained on
    uint32_t n_embd;
    uint32_t n_layer;
    uint32_t n_rot;             // rotary dimensions per head
    uint32_t n_embd_head_k;     // dimension of keys (d_k); d_q is assumed to be the same
    uint32_t n_embd_head_v;     // dimension of values (d_v)
    uint32_t n_expert;
    uint32_t n_expert_used;
    uint32_t n_expert_shared;
    uint32_t n_ff_exp;          // feed-forward width of one expert
    uint32_t n_ff_shexp;
    uint32_t n_layer_nextn;     // trailing MTP / next-n prediction layers (0: none)
    int32_t  router_layer;      // -1: none
    uint32_t n_vocab;           // rows of token_embd (from the tokenizer, or {arch}.vocab_size)

    uint32_t n_head_arr   [LLAMA_MAX_LAYERS];
    uint32_t n_head_kv_arr[LLAMA_MAX_LAYERS];
    uint32_t n_ff_arr     [LLAMA_MAX_LAYERS];

    float f_norm_eps;
    float f_norm_rms_eps;

    float f_attn_logit_softcapping;
    float f_final_logit_softcapping;
    bool  use_attn_softcap;    // gemma2-style soft-capping of the attention logits

    // sliding window attention
    enum llama_swa_type swa_type;
    uint32_t n_swa;            // window size (0: none)
    uint32_t n_swa_pattern;    // layer il is SWA iff il % n_swa_pattern < n_swa_pattern - 1 (as read)
    bool     swa_layers[LLAMA_MAX_LAYERS];

    float    rope_attn_factor;
    float    rope_freq_base_train;
    float    rope_freq_base_train_swa;
    float    rope_freq_scale_train;
    float    rope_freq_scale_train_swa;
    uint32_t n_ctx_orig_yarn;
    float    rope_yarn_log_mul;
    float    yarn_ext_factor;   // negative: not set in the file
    float    yarn_attn_factor;
    float    yarn_beta_fast;
    float    yarn_beta_slow;

    enum llama_rope_scaling_type rope_scaling_type_train;
    enum llama_rope_type         rope_type;
    enum llama_pooling_type      pooling_type;

    // granite
    float f_residual_scale;    // 0: none
    float f_embedding_scale;   // 0: none
    float f_attention_scale;   // 0: 1/sqrt(n_embd_head_k)
    float f_logit_scale;       // 0: none

    float    expert_weights_scale;
    bool     expert_weights_norm;
    enum llama_expert_gating_func_type expert_gating_func;

    bool causal_attn;

    llama_token dec_start_token_id;
};

// per-layer accessors; il out of range is a programming error (asserted)
uint32_t llama_hparams_n_head       (const struct llama_hparams * hp, uint32_t il);
uint32_t llama_hparams_n_head_kv    (const struct llama_hparams * hp, uint32_t il);
uint32_t llama_hparams_n_ff         (const struct llama_hparams * hp, uint32_t il);
uint32_t llama_hparams_n_gqa        (const struct llama_hparams * hp, uint32_t il); // n_head / n_head_kv
uint32_t llama_hparams_n_embd_k_gqa (const struct llama_hparams * hp, uint32_t il); // n_embd_head_k * n_head_kv
uint32_t llama_hparams_n_embd_v_gqa (const struct llama_hparams * hp, uint32_t il); // n_embd_head_v * n_head_kv
bool     llama_hparams_is_swa       (const struct llama_hparams * hp, uint32_t il);
// largest n_embd_k_gqa / n_embd_v_gqa over all layers (KV cache row sizes)
uint32_t llama_hparams_n_embd_k_gqa_max(const struct llama_hparams * hp);
uint32_t llama_hparams_n_embd_v_gqa_max(const struct llama_hparams * hp);

// mark the SWA layers: with n_pattern > 0, every n_pattern-th layer (the last of each group) is dense;
// n_pattern == 0 makes every layer SWA; n_pattern == 1 makes none SWA
void llama_hparams_set_swa_pattern(struct llama_hparams * hp, uint32_t n_pattern);

// true if masking key position p0 from query position p1 under this model's SWA rule
bool llama_hparams_is_masked_swa(uint32_t n_swa, enum llama_swa_type swa_type, llama_pos p0, llama_pos p1);

#ifdef __cplusplus
}
#endif
