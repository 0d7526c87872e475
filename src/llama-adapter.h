// LoRA adapters (loaded per model, applied per context) and control vectors (per context): the data structures
// the graph builder reads. Loading is in llama-adapter.c, the context-side setters in llama-context-adapter.c.
#pragma once

#include "llama.h"

#include "ggml.h"
#include "ggml-backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// one adapted base weight: W x  ->  W x + scale * B (A x)
struct llama_adapter_lora_weight {
    const struct ggml_tensor * base; // the model's tensor this pair adapts
    struct ggml_tensor * a;          // [n_in, rank]   (token_embd: [rank, n_vocab], read by row)
    struct ggml_tensor * b;          // [rank, n_out]  (token_embd: [rank, n_embd])
};

struct llama_adapter_lora {
    struct llama_model        * model;
    struct llama_adapter_lora * next;  // the model's list of loaded adapters (freed with the model)

    float alpha;                       // adapter.lora.alpha; 0 = scale is the user scale alone

    struct llama_adapter_lora_weight * weights;
    int32_t                            n_weights;

    struct ggml_context * ctx;         // headers of the a/b tensors
    ggml_backend_buffer_t buf;         // their data (plain CPU buffer)

    int32_t n_meta;                    // non-array metadata as strings, in file order
    char ** meta_keys;
    char ** meta_vals;

    llama_token * alora_tokens;        // adapter.alora.invocation_tokens (NULL: not an aLoRA)
    uint64_t      n_alora_tokens;
};

// the pair adapting w, NULL when this adapter does not touch w
const struct llama_adapter_lora_weight * llama_adapter_lora_find(const struct llama_adapter_lora * adapter,
        const struct ggml_tensor * w);

// llama.cpp's scale: user_scale * alpha / rank, or user_scale when the adapter has no alpha
float llama_adapter_lora_scale(const struct llama_adapter_lora * adapter,
        const struct llama_adapter_lora_weight * lw, float user_scale);

// frees every adapter still loaded on model (llama_model_free)
void llama_adapter_lora_free_all(struct llama_model * model);

// graph nodes all adapters loaded on model can add to one ubatch graph
size_t llama_adapter_lora_graph_nodes(const struct llama_model * model);

// control vector: per-layer [n_embd] direction added to the output of layers il_start..il_end
struct llama_adapter_cvec {
    struct ggml_context  * ctx;
    ggml_backend_buffer_t  buf;
    struct ggml_tensor  ** tensors;    // [n_layer]; tensors[0] is always NULL (data starts at layer 1)
    int32_t n_layer;
    int32_t n_embd;
    int32_t layer_start;               // -1: none applied
    int32_t layer_end;
};

// what a context applies: the LoRA set with its user scales, and the control vector
struct llama_ctx_adapters {
    struct llama_adapter_lora ** loras;
    float *                      scales;
    size_t                       n_loras;
    struct llama_adapter_cvec    cvec;
};

// the control vector tensor for layer il, NULL when none applies there
struct ggml_tensor * llama_adapter_cvec_tensor(const struct llama_adapter_cvec * cvec, int32_t il);

// frees what a context holds (llama_free)
void llama_ctx_adapters_free(struct llama_ctx_adapters * a);

#ifdef __cplusplus
}
#endif
