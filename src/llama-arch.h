// Architecture names, GGUF metadata key templates and tensor name templates (llama.cpp's spellings).
#pragma once

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Architectures whose names we recognise. Only some have tensor lists and graphs (llm_arch_is_supported);
// the others can still be opened with vocab_only (tokenizer test files use gpt2, bert, falcon, ...).
enum llm_arch {
    LLM_ARCH_LLAMA,
    LLM_ARCH_QWEN2,
    LLM_ARCH_QWEN3,
    LLM_ARCH_QWEN3MOE,
    LLM_ARCH_GEMMA3,
    LLM_ARCH_PHI3,
    LLM_ARCH_GRANITE,
    LLM_ARCH_EXAONE4,
    // recognised by name only
    LLM_ARCH_LLAMA4,
    LLM_ARCH_MISTRAL3,
    LLM_ARCH_GPT2,
    LLM_ARCH_GPTJ,
    LLM_ARCH_GPTNEOX,
    LLM_ARCH_FALCON,
    LLM_ARCH_BAICHUAN,
    LLM_ARCH_STARCODER,
    LLM_ARCH_STARCODER2,
    LLM_ARCH_REFACT,
    LLM_ARCH_MPT,
    LLM_ARCH_BERT,
    LLM_ARCH_NOMIC_BERT,
    LLM_ARCH_BLOOM,
    LLM_ARCH_STABLELM,
    LLM_ARCH_QWEN,
    LLM_ARCH_QWEN2MOE,
    LLM_ARCH_PHI2,
    LLM_ARCH_GEMMA,
    LLM_ARCH_GEMMA2,
    LLM_ARCH_MAMBA,
    LLM_ARCH_T5,
    LLM_ARCH_DEEPSEEK2,
    LLM_ARCH_GRANITE_MOE,
    LLM_ARCH_GRANITE_HYBRID,
    LLM_ARCH_GRANITE_SWITCH,
    LLM_ARCH_EXAONE,
    LLM_ARCH_OLMO2,
    LLM_ARCH_MUSE_GLIMMER,
    LLM_ARCH_NEMOTRON_H,
    LLM_ARCH_UNKNOWN,
};

enum llm_kv {
    LLM_KV_GENERAL_TYPE,
    LLM_KV_GENERAL_ARCHITECTURE,
    LLM_KV_GENERAL_QUANTIZATION_VERSION,
    LLM_KV_GENERAL_ALIGNMENT,
    LLM_KV_GENERAL_FILE_TYPE,
    LLM_KV_GENERAL_NAME,
    LLM_KV_GENERAL_SIZE_LABEL,

    LLM_KV_VOCAB_SIZE,
    LLM_KV_CONTEXT_LENGTH,
    LLM_KV_EMBEDDING_LENGTH,
    LLM_KV_BLOCK_COUNT,
    LLM_KV_FEED_FORWARD_LENGTH,
    LLM_KV_EXPERT_FEED_FORWARD_LENGTH,
    LLM_KV_EXPERT_SHARED_FEED_FORWARD_LENGTH,
    LLM_KV_USE_PARALLEL_RESIDUAL,
    LLM_KV_EXPERT_COUNT,
    LLM_KV_EXPERT_USED_COUNT,
    LLM_KV_EXPERT_SHARED_COUNT,
    LLM_KV_EXPERT_WEIGHTS_SCALE,
    LLM_KV_EXPERT_WEIGHTS_NORM,
    LLM_KV_EXPERT_GATING_FUNC,
    LLM_KV_POOLING_TYPE,
    LLM_KV_LOGIT_SCALE,
    LLM_KV_DECODER_START_TOKEN_ID,
    LLM_KV_ATTN_LOGIT_SOFTCAPPING,
    LLM_KV_FINAL_LOGIT_SOFTCAPPING,
    LLM_KV_RESIDUAL_SCALE,
    LLM_KV_EMBEDDING_SCALE,
    LLM_KV_NEXTN_PREDICT_LAYERS,

    LLM_KV_ATTENTION_HEAD_COUNT,
    LLM_KV_ATTENTION_HEAD_COUNT_KV,
    LLM_KV_ATTENTION_MAX_ALIBI_BIAS,
    LLM_KV_ATTENTION_CLAMP_KQV,
    LLM_KV_ATTENTION_KEY_LENGTH,
    LLM_KV_ATTENTION_VALUE_LENGTH,
    LLM_KV_ATTENTION_LAYERNORM_EPS,
    LLM_KV_ATTENTION_LAYERNORM_RMS_EPS,
    LLM_KV_ATTENTION_CAUSAL,
    LLM_KV_ATTENTION_SLIDING_WINDOW,
    LLM_KV_ATTENTION_SLIDING_WINDOW_PATTERN,
    LLM_KV_ATTENTION_SCALE,

    LLM_KV_ROPE_DIMENSION_COUNT,
    LLM_KV_ROPE_FREQ_BASE,
    LLM_KV_ROPE_FREQ_BASE_SWA,
    LLM_KV_ROPE_SCALE_LINEAR,
    LLM_KV_ROPE_SCALING_TYPE,
    LLM_KV_ROPE_SCALING_FACTOR,
    LLM_KV_ROPE_SCALING_ATTN_FACTOR,
    LLM_KV_ROPE_SCALING_ORIG_CTX_LEN,
    LLM_KV_ROPE_SCALING_FINETUNED,
    LLM_KV_ROPE_SCALING_YARN_LOG_MUL,
    LLM_KV_ROPE_SCALING_YARN_EXT_FACTOR,
    LLM_KV_ROPE_SCALING_YARN_ATTN_FACTOR,
    LLM_KV_ROPE_SCALING_YARN_BETA_FAST,
    LLM_KV_ROPE_SCALING_YARN_BETA_SLOW,

    LLM_KV_TOKENIZER_LIST,
    LLM_KV_TOKENIZER_CHAT_TEMPLATE,
    LLM_KV_TOKENIZER_CHAT_TEMPLATE_N, // "tokenizer.chat_template.%s" (named template)

    LLM_KV_COUNT,
};

enum llm_tensor {
    LLM_TENSOR_TOKEN_EMBD,
    LLM_TENSOR_OUTPUT_NORM,
    LLM_TENSOR_OUTPUT,
    LLM_TENSOR_ROPE_FREQS,
    LLM_TENSOR_ROPE_FACTORS_LONG,
    LLM_TENSOR_ROPE_FACTORS_SHORT,
    LLM_TENSOR_ATTN_NORM,
    LLM_TENSOR_ATTN_Q,
    LLM_TENSOR_ATTN_K,
    LLM_TENSOR_ATTN_V,
    LLM_TENSOR_ATTN_QKV,
    LLM_TENSOR_ATTN_OUT,
    LLM_TENSOR_ATTN_Q_NORM,
    LLM_TENSOR_ATTN_K_NORM,
    LLM_TENSOR_ATTN_POST_NORM,
    LLM_TENSOR_ATTN_ROT_EMBD,
    LLM_TENSOR_FFN_NORM,
    LLM_TENSOR_FFN_GATE,
    LLM_TENSOR_FFN_UP,
    LLM_TENSOR_FFN_DOWN,
    LLM_TENSOR_FFN_POST_NORM,
    LLM_TENSOR_FFN_GATE_INP,
    LLM_TENSOR_FFN_GATE_EXPS,
    LLM_TENSOR_FFN_UP_EXPS,
    LLM_TENSOR_FFN_DOWN_EXPS,
    LLM_TENSOR_COUNT,
};

// longest key or tensor name we format (GGUF keys from files may be longer; those are compared, not built)
#define LLM_NAME_MAX 128

// "llama", "qwen2", ...; "(unknown)" for LLM_ARCH_UNKNOWN
const char * llm_arch_name(enum llm_arch arch);
// LLM_ARCH_UNKNOWN if name is not one of ours
enum llm_arch llm_arch_from_string(const char * name);
// true if the loader knows this architecture's hyperparameters and tensors (and graphs exist for it)
bool llm_arch_is_supported(enum llm_arch arch);

// the key for arch, e.g. LLM_KV_CONTEXT_LENGTH -> "llama.context_length"; returns buf
const char * llm_kv_name(enum llm_kv kv, enum llm_arch arch, char * buf, size_t buf_size);

// tensor name, e.g. (LLM_TENSOR_ATTN_Q, "weight", 3) -> "blk.3.attn_q.weight"; suffix may be NULL;
// bid is ignored by global tensors; returns buf
const char * llm_tensor_name(enum llm_tensor t, const char * suffix, int bid, char * buf, size_t buf_size);
// true for tensors that live in a layer ("blk.%d.")
bool llm_tensor_is_per_layer(enum llm_tensor t);

#ifdef __cplusplus
}
#endif
