#include "llama-arch.h"

#include <stdio.h>
#include <string.h>

static const char * const LLM_ARCH_NAMES[LLM_ARCH_UNKNOWN] = {
    [LLM_ARCH_LLAMA]          = "llama",
    [LLM_ARCH_QWEN2]          = "qwen2",
    [LLM_ARCH_QWEN3]          = "qwen3",
    [LLM_ARCH_QWEN3MOE]       = "qwen3moe",
    [LLM_ARCH_GEMMA3]         = "gemma3",
    [LLM_ARCH_PHI3]           = "phi3",
    [LLM_ARCH_GRANITE]        = "granite",
    [LLM_ARCH_EXAONE4]        = "exaone4",
    [LLM_ARCH_LLAMA4]         = "llama4",
    [LLM_ARCH_MISTRAL3]       = "mistral3",
    [LLM_ARCH_GPT2]           = "gpt2",
    [LLM_ARCH_GPTJ]           = "gptj",
    [LLM_ARCH_GPTNEOX]        = "gptneox",
    [LLM_ARCH_FALCON]         = "falcon",
    [LLM_ARCH_BAICHUAN]       = "baichuan",
    [LLM_ARCH_STARCODER]      = "starcoder",
    [LLM_ARCH_STARCODER2]     = "starcoder2",
    [LLM_ARCH_REFACT]         = "refact",
    [LLM_ARCH_MPT]            = "mpt",
    [LLM_ARCH_BERT]           = "bert",
    [LLM_ARCH_NOMIC_BERT]     = "nomic-bert",
    [LLM_ARCH_BLOOM]          = "bloom",
    [LLM_ARCH_STABLELM]       = "stablelm",
    [LLM_ARCH_QWEN]           = "qwen",
    [LLM_ARCH_QWEN2MOE]       = "qwen2moe",
    [LLM_ARCH_PHI2]           = "phi2",
    [LLM_ARCH_GEMMA]          = "gemma",
    [LLM_ARCH_GEMMA2]         = "gemma2",
    [LLM_ARCH_MAMBA]          = "mamba",
    [LLM_ARCH_T5]             = "t5",
    [LLM_ARCH_DEEPSEEK2]      = "deepseek2",
    [LLM_ARCH_GRANITE_MOE]    = "granitemoe",
    [LLM_ARCH_GRANITE_HYBRID] = "granitehybrid",
    [LLM_ARCH_GRANITE_SWITCH] = "graniteswitch",
    [LLM_ARCH_EXAONE]         = "exaone",
    [LLM_ARCH_OLMO2]          = "olmo2",
    [LLM_ARCH_MUSE_GLIMMER]   = "muse-glimmer",
    [LLM_ARCH_NEMOTRON_H]     = "nemotron_h",
};

// "%s" is replaced by the architecture name
static const char * const LLM_KV_NAMES[LLM_KV_COUNT] = {
    [LLM_KV_GENERAL_TYPE]                 = "general.type",
    [LLM_KV_GENERAL_ARCHITECTURE]         = "general.architecture",
    [LLM_KV_GENERAL_QUANTIZATION_VERSION] = "general.quantization_version",
    [LLM_KV_GENERAL_ALIGNMENT]            = "general.alignment",
    [LLM_KV_GENERAL_FILE_TYPE]            = "general.file_type",
    [LLM_KV_GENERAL_NAME]                 = "general.name",
    [LLM_KV_GENERAL_SIZE_LABEL]           = "general.size_label",

    [LLM_KV_VOCAB_SIZE]                        = "%s.vocab_size",
    [LLM_KV_CONTEXT_LENGTH]                    = "%s.context_length",
    [LLM_KV_EMBEDDING_LENGTH]                  = "%s.embedding_length",
    [LLM_KV_BLOCK_COUNT]                       = "%s.block_count",
    [LLM_KV_FEED_FORWARD_LENGTH]               = "%s.feed_forward_length",
    [LLM_KV_EXPERT_FEED_FORWARD_LENGTH]        = "%s.expert_feed_forward_length",
    [LLM_KV_EXPERT_SHARED_FEED_FORWARD_LENGTH] = "%s.expert_shared_feed_forward_length",
    [LLM_KV_USE_PARALLEL_RESIDUAL]             = "%s.use_parallel_residual",
    [LLM_KV_EXPERT_COUNT]                      = "%s.expert_count",
    [LLM_KV_EXPERT_USED_COUNT]                 = "%s.expert_used_count",
    [LLM_KV_EXPERT_SHARED_COUNT]               = "%s.expert_shared_count",
    [LLM_KV_EXPERT_WEIGHTS_SCALE]              = "%s.expert_weights_scale",
    [LLM_KV_EXPERT_WEIGHTS_NORM]               = "%s.expert_weights_norm",
    [LLM_KV_EXPERT_GATING_FUNC]                = "%s.expert_gating_func",
    [LLM_KV_POOLING_TYPE]                      = "%s.pooling_type",
    [LLM_KV_LOGIT_SCALE]                       = "%s.logit_scale",
    [LLM_KV_DECODER_START_TOKEN_ID]            = "%s.decoder_start_token_id",
    [LLM_KV_ATTN_LOGIT_SOFTCAPPING]            = "%s.attn_logit_softcapping",
    [LLM_KV_FINAL_LOGIT_SOFTCAPPING]           = "%s.final_logit_softcapping",
    [LLM_KV_RESIDUAL_SCALE]                    = "%s.residual_scale",
    [LLM_KV_EMBEDDING_SCALE]                   = "%s.embedding_scale",
    [LLM_KV_NEXTN_PREDICT_LAYERS]              = "%s.nextn_predict_layers",

    [LLM_KV_ATTENTION_HEAD_COUNT]             = "%s.attention.head_count",
    [LLM_KV_ATTENTION_HEAD_COUNT_KV]          = "%s.attention.head_count_kv",
    [LLM_KV_ATTENTION_MAX_ALIBI_BIAS]         = "%s.attention.max_alibi_bias",
    [LLM_KV_ATTENTION_CLAMP_KQV]              = "%s.attention.clamp_kqv",
    [LLM_KV_ATTENTION_KEY_LENGTH]             = "%s.attention.key_length",
    [LLM_KV_ATTENTION_VALUE_LENGTH]           = "%s.attention.value_length",
    [LLM_KV_ATTENTION_LAYERNORM_EPS]          = "%s.attention.layer_norm_epsilon",
    [LLM_KV_ATTENTION_LAYERNORM_RMS_EPS]      = "%s.attention.layer_norm_rms_epsilon",
    [LLM_KV_ATTENTION_CAUSAL]                 = "%s.attention.causal",
    [LLM_KV_ATTENTION_SLIDING_WINDOW]         = "%s.attention.sliding_window",
    [LLM_KV_ATTENTION_SLIDING_WINDOW_PATTERN] = "%s.attention.sliding_window_pattern",
    [LLM_KV_ATTENTION_SCALE]                  = "%s.attention.scale",

    [LLM_KV_ROPE_DIMENSION_COUNT]          = "%s.rope.dimension_count",
    [LLM_KV_ROPE_FREQ_BASE]                = "%s.rope.freq_base",
    [LLM_KV_ROPE_FREQ_BASE_SWA]            = "%s.rope.freq_base_swa",
    [LLM_KV_ROPE_SCALE_LINEAR]             = "%s.rope.scale_linear",
    [LLM_KV_ROPE_SCALING_TYPE]             = "%s.rope.scaling.type",
    [LLM_KV_ROPE_SCALING_FACTOR]           = "%s.rope.scaling.factor",
    [LLM_KV_ROPE_SCALING_ATTN_FACTOR]      = "%s.rope.scaling.attn_factor",
    [LLM_KV_ROPE_SCALING_ORIG_CTX_LEN]     = "%s.rope.scaling.original_context_length",
    [LLM_KV_ROPE_SCALING_FINETUNED]        = "%s.rope.scaling.finetuned",
    [LLM_KV_ROPE_SCALING_YARN_LOG_MUL]     = "%s.rope.scaling.yarn_log_multiplier",
    [LLM_KV_ROPE_SCALING_YARN_EXT_FACTOR]  = "%s.rope.scaling.yarn_ext_factor",
    [LLM_KV_ROPE_SCALING_YARN_ATTN_FACTOR] = "%s.rope.scaling.yarn_attn_factor",
    [LLM_KV_ROPE_SCALING_YARN_BETA_FAST]   = "%s.rope.scaling.yarn_beta_fast",
    [LLM_KV_ROPE_SCALING_YARN_BETA_SLOW]   = "%s.rope.scaling.yarn_beta_slow",

    [LLM_KV_TOKENIZER_LIST]            = "tokenizer.ggml.tokens",
    [LLM_KV_TOKENIZER_CHAT_TEMPLATE]   = "tokenizer.chat_template",
    [LLM_KV_TOKENIZER_CHAT_TEMPLATE_N] = "tokenizer.chat_template.%s",
};

// "%d" is the layer index
static const char * const LLM_TENSOR_NAMES[LLM_TENSOR_COUNT] = {
    [LLM_TENSOR_TOKEN_EMBD]         = "token_embd",
    [LLM_TENSOR_OUTPUT_NORM]        = "output_norm",
    [LLM_TENSOR_OUTPUT]             = "output",
    [LLM_TENSOR_ROPE_FREQS]         = "rope_freqs",
    [LLM_TENSOR_ROPE_FACTORS_LONG]  = "rope_factors_long",
    [LLM_TENSOR_ROPE_FACTORS_SHORT] = "rope_factors_short",
    [LLM_TENSOR_ATTN_NORM]          = "blk.%d.attn_norm",
    [LLM_TENSOR_ATTN_Q]             = "blk.%d.attn_q",
    [LLM_TENSOR_ATTN_K]             = "blk.%d.attn_k",
    [LLM_TENSOR_ATTN_V]             = "blk.%d.attn_v",
    [LLM_TENSOR_ATTN_QKV]           = "blk.%d.attn_qkv",
    [LLM_TENSOR_ATTN_OUT]           = "blk.%d.attn_output",
    [LLM_TENSOR_ATTN_Q_NORM]        = "blk.%d.attn_q_norm",
    [LLM_TENSOR_ATTN_K_NORM]        = "blk.%d.attn_k_norm",
    [LLM_TENSOR_ATTN_POST_NORM]     = "blk.%d.post_attention_norm",
    [LLM_TENSOR_ATTN_ROT_EMBD]      = "blk.%d.attn_rot_embd",
    [LLM_TENSOR_FFN_NORM]           = "blk.%d.ffn_norm",
    [LLM_TENSOR_FFN_GATE]           = "blk.%d.ffn_gate",
    [LLM_TENSOR_FFN_UP]             = "blk.%d.ffn_up",
    [LLM_TENSOR_FFN_DOWN]           = "blk.%d.ffn_down",
    [LLM_TENSOR_FFN_POST_NORM]      = "blk.%d.post_ffw_norm",
    [LLM_TENSOR_FFN_GATE_INP]       = "blk.%d.ffn_gate_inp",
    [LLM_TENSOR_FFN_GATE_EXPS]      = "blk.%d.ffn_gate_exps",
    [LLM_TENSOR_FFN_UP_EXPS]        = "blk.%d.ffn_up_exps",
    [LLM_TENSOR_FFN_DOWN_EXPS]      = "blk.%d.ffn_down_exps",
};

const char * llm_arch_name(enum llm_arch arch) {
    if ((int) arch < 0 || arch >= LLM_ARCH_UNKNOWN || !LLM_ARCH_NAMES[arch]) {
        return "(unknown)";
    }
    return LLM_ARCH_NAMES[arch];
}

enum llm_arch llm_arch_from_string(const char * name) {
    if (!name) {
        return LLM_ARCH_UNKNOWN;
    }
    for (int i = 0; i < LLM_ARCH_UNKNOWN; i++) {
        if (LLM_ARCH_NAMES[i] && strcmp(LLM_ARCH_NAMES[i], name) == 0) {
            return (enum llm_arch) i;
        }
    }
    return LLM_ARCH_UNKNOWN;
}

bool llm_arch_is_supported(enum llm_arch arch) {
    switch (arch) {
        case LLM_ARCH_LLAMA:
        case LLM_ARCH_QWEN2:
        case LLM_ARCH_QWEN3:
        case LLM_ARCH_QWEN3MOE:
        case LLM_ARCH_GEMMA3:
        case LLM_ARCH_PHI3:
        case LLM_ARCH_GRANITE:
        case LLM_ARCH_EXAONE4:
            return true;
        default:
            return false;
    }
}

const char * llm_kv_name(enum llm_kv kv, enum llm_arch arch, char * buf, size_t buf_size) {
    if (buf_size == 0) {
        return buf;
    }
    if ((int) kv < 0 || kv >= LLM_KV_COUNT || !LLM_KV_NAMES[kv]) {
        buf[0] = '\0';
        return buf;
    }
    const char * tmpl = LLM_KV_NAMES[kv];
    if (strstr(tmpl, "%s")) {
        snprintf(buf, buf_size, tmpl, llm_arch_name(arch));
    } else {
        snprintf(buf, buf_size, "%s", tmpl);
    }
    return buf;
}

bool llm_tensor_is_per_layer(enum llm_tensor t) {
    return (int) t >= 0 && t < LLM_TENSOR_COUNT && strstr(LLM_TENSOR_NAMES[t], "%d") != NULL;
}

const char * llm_tensor_name(enum llm_tensor t, const char * suffix, int bid, char * buf, size_t buf_size) {
    if (buf_size == 0) {
        return buf;
    }
    if ((int) t < 0 || t >= LLM_TENSOR_COUNT) {
        buf[0] = '\0';
        return buf;
    }
    char base[LLM_NAME_MAX];
    if (llm_tensor_is_per_layer(t)) {
        snprintf(base, sizeof(base), LLM_TENSOR_NAMES[t], bid);
    } else {
        snprintf(base, sizeof(base), "%s", LLM_TENSOR_NAMES[t]);
    }
    if (suffix && *suffix) {
        snprintf(buf, buf_size, "%s.%s", base, suffix);
    } else {
        snprintf(buf, buf_size, "%s", base);
    }
    return buf;
}
