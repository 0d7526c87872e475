// struct llama_model: hyperparameters, vocabulary, weight tensors (in backend buffers) and metadata strings.
#pragma once

#include "llama.h"
#include "llama-arch.h"
#include "llama-hparams.h"

#include "ggml-backend.h"
#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct llama_model_loader;

// model size class, used only in descriptions ("llama 7B Q4_0")
enum llm_type {
    LLM_TYPE_UNKNOWN,
    LLM_TYPE_270M,
    LLM_TYPE_0_5B,
    LLM_TYPE_0_6B,
    LLM_TYPE_1B,
    LLM_TYPE_1_2B,
    LLM_TYPE_1_5B,
    LLM_TYPE_1_7B,
    LLM_TYPE_3B,
    LLM_TYPE_4B,
    LLM_TYPE_7B,
    LLM_TYPE_8B,
    LLM_TYPE_12B,
    LLM_TYPE_13B,
    LLM_TYPE_14B,
    LLM_TYPE_27B,
    LLM_TYPE_30B,
    LLM_TYPE_32B,
    LLM_TYPE_34B,
    LLM_TYPE_70B,
    LLM_TYPE_30B_A3B,
    LLM_TYPE_235B_A22B,
    LLM_TYPE_MINI_3_8B,
    LLM_TYPE_MEDIUM_14B,
};

const char * llm_type_name(enum llm_type type);

// Weights of one layer; NULL where the architecture (or the file) has no such tensor.
// Shapes in ggml order (ne0 first); n_embd_q = n_embd_head_k * n_head.
struct llama_layer {
    struct ggml_tensor * attn_norm;      // [n_embd]
    struct ggml_tensor * attn_norm_b;    // [n_embd]

    struct ggml_tensor * wq;             // [n_embd, n_embd_q]
    struct ggml_tensor * wk;             // [n_embd, n_embd_k_gqa]
    struct ggml_tensor * wv;             // [n_embd, n_embd_v_gqa]
    struct ggml_tensor * wo;             // [n_embd_q, n_embd]
    struct ggml_tensor * wqkv;           // [n_embd, n_embd_q + n_embd_k_gqa + n_embd_v_gqa] (phi3)
    struct ggml_tensor * bq;             // [n_embd_q]
    struct ggml_tensor * bk;             // [n_embd_k_gqa]
    struct ggml_tensor * bv;             // [n_embd_v_gqa]
    struct ggml_tensor * bo;             // [n_embd]
    struct ggml_tensor * bqkv;

    struct ggml_tensor * attn_q_norm;    // [n_embd_head_k]
    struct ggml_tensor * attn_k_norm;    // [n_embd_head_k]
    struct ggml_tensor * attn_post_norm; // [n_embd]

    struct ggml_tensor * ffn_norm;       // [n_embd]
    struct ggml_tensor * ffn_gate;       // [n_embd, n_ff]
    struct ggml_tensor * ffn_up;         // [n_embd, n_ff] (phi3: [n_embd, 2*n_ff], gate then up)
    struct ggml_tensor * ffn_down;       // [n_ff, n_embd]
    struct ggml_tensor * ffn_post_norm;  // [n_embd]

    struct ggml_tensor * ffn_gate_inp;   // [n_embd, n_expert] (router)
    struct ggml_tensor * ffn_gate_exps;  // [n_embd, n_ff_exp, n_expert]
    struct ggml_tensor * ffn_up_exps;    // [n_embd, n_ff_exp, n_expert]
    struct ggml_tensor * ffn_down_exps;  // [n_ff_exp, n_embd, n_expert]

    // rope frequency factors (shared by all layers; NULL if the file has none)
    struct ggml_tensor * rope_freqs;     // [n_rot/2]
    struct ggml_tensor * rope_long;      // [n_rot/2] (phi3 long-rope)
    struct ggml_tensor * rope_short;     // [n_rot/2]
};

struct llama_model {
    enum llm_type type;
    enum llm_arch arch;
    enum llama_ftype ftype;

    char * name;                         // general.name ("n/a" when absent)

    struct llama_hparams hparams;
    struct llama_vocab * vocab;          // owned

    struct ggml_tensor * tok_embd;       // [n_embd, n_vocab]
    struct ggml_tensor * output_norm;    // [n_embd]
    struct ggml_tensor * output_norm_b;
    struct ggml_tensor * output;         // [n_embd, n_vocab]; == tok_embd when the embeddings are tied
    struct ggml_tensor * output_b;

    struct llama_layer * layers;         // [n_layer]

    struct ggml_context * ctx_w;         // weight tensor headers
    ggml_backend_buffer_t buf_w;         // weight data (over the mapping with mmap)
    struct llama_model_mapping {         // the mmap'd files (none when read), one per split
        void * addr;
        size_t size;
        bool   locked;
    } * mappings;
    int n_mappings;

    // every metadata key of the file (arrays included) with the kv overrides applied: what
    // llama_model_save_to_file writes (NULL when loaded vocab_only)
    struct gguf_context * gguf_meta;

    // non-array metadata as strings, in file order
    int32_t n_meta;
    char ** meta_keys;
    char ** meta_vals;

    uint64_t n_elements;                 // parameters in the file
    uint64_t n_bytes;                    // tensor bytes in the file

    struct llama_model_params params;

    struct llama_adapter_lora * loras;   // LoRA adapters loaded on this model (freed with it; llama-adapter.c)

    int64_t t_load_us;
    int64_t t_start_us;
};

// an empty model holding params (NULL on out of memory)
struct llama_model * llama_model_create(struct llama_model_params params);

// metadata strings, arch, hparams (all {arch}.* keys, per architecture); false on error (logged)
bool llama_model_load_hparams(struct llama_model * model, struct llama_model_loader * ml);

// the tensors of model->arch with their expected shapes, checked against the file; false on error (logged)
bool llama_model_load_tensors(struct llama_model * model, struct llama_model_loader * ml);

// one log block describing the model, as llama.cpp's print_info
void llama_model_print_info(const struct llama_model * model);

// keeps a copy of the file's metadata in model->gguf_meta with the overrides (may be NULL) applied, for
// llama_model_save_to_file; false on out of memory (logged)
bool llama_model_keep_meta(struct llama_model * model, const struct gguf_context * src,
        const struct llama_model_kv_override * overrides);

// metadata value by key (NULL if absent or an array)
const char * llama_model_meta_get(const struct llama_model * model, const char * key);

#ifdef __cplusplus
}
#endif
