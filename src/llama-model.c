#include "llama-model.h"

#include "llama-impl.h"
#include "llama-model-loader.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char * llm_type_name(enum llm_type type) {
    switch (type) {
        case LLM_TYPE_270M:       return "270M";
        case LLM_TYPE_0_5B:       return "0.5B";
        case LLM_TYPE_0_6B:       return "0.6B";
        case LLM_TYPE_1B:         return "1B";
        case LLM_TYPE_1_2B:       return "1.2B";
        case LLM_TYPE_1_5B:       return "1.5B";
        case LLM_TYPE_1_7B:       return "1.7B";
        case LLM_TYPE_3B:         return "3B";
        case LLM_TYPE_4B:         return "4B";
        case LLM_TYPE_7B:         return "7B";
        case LLM_TYPE_8B:         return "8B";
        case LLM_TYPE_12B:        return "12B";
        case LLM_TYPE_13B:        return "13B";
        case LLM_TYPE_14B:        return "14B";
        case LLM_TYPE_27B:        return "27B";
        case LLM_TYPE_30B:        return "30B";
        case LLM_TYPE_32B:        return "32B";
        case LLM_TYPE_34B:        return "34B";
        case LLM_TYPE_70B:        return "70B";
        case LLM_TYPE_30B_A3B:    return "30B.A3B";
        case LLM_TYPE_235B_A22B:  return "235B.A22B";
        case LLM_TYPE_MINI_3_8B:  return "3.8B";
        case LLM_TYPE_MEDIUM_14B: return "14B";
        case LLM_TYPE_UNKNOWN:    break;
    }
    return "?B";
}

struct llama_model * llama_model_create(struct llama_model_params params) {
    struct llama_model * model = calloc(1, sizeof(*model));
    if (!model) {
        LLAMA_LOG_ERROR("llama_model_load: out of memory\n");
        return NULL;
    }
    model->params = params;
    model->arch   = LLM_ARCH_UNKNOWN;
    model->type   = LLM_TYPE_UNKNOWN;
    return model;
}

// ---- metadata strings --------------------------------------------------------------------------------------

// the value of a non-array key as text, formatted like llama.cpp's gguf_kv_to_str (floats with "%f")
char * llama_gguf_kv_to_str(const struct gguf_context * g, int64_t kid) {
    char tmp[64];
    const enum gguf_type t = gguf_get_kv_type(g, kid);
    switch (t) {
        case GGUF_TYPE_UINT8:   snprintf(tmp, sizeof(tmp), "%u", (unsigned) gguf_get_val_u8(g, kid)); break;
        case GGUF_TYPE_INT8:    snprintf(tmp, sizeof(tmp), "%d", (int) gguf_get_val_i8(g, kid)); break;
        case GGUF_TYPE_UINT16:  snprintf(tmp, sizeof(tmp), "%u", (unsigned) gguf_get_val_u16(g, kid)); break;
        case GGUF_TYPE_INT16:   snprintf(tmp, sizeof(tmp), "%d", (int) gguf_get_val_i16(g, kid)); break;
        case GGUF_TYPE_UINT32:  snprintf(tmp, sizeof(tmp), "%" PRIu32, gguf_get_val_u32(g, kid)); break;
        case GGUF_TYPE_INT32:   snprintf(tmp, sizeof(tmp), "%" PRId32, gguf_get_val_i32(g, kid)); break;
        case GGUF_TYPE_UINT64:  snprintf(tmp, sizeof(tmp), "%" PRIu64, gguf_get_val_u64(g, kid)); break;
        case GGUF_TYPE_INT64:   snprintf(tmp, sizeof(tmp), "%" PRId64, gguf_get_val_i64(g, kid)); break;
        case GGUF_TYPE_FLOAT32: snprintf(tmp, sizeof(tmp), "%f", (double) gguf_get_val_f32(g, kid)); break;
        case GGUF_TYPE_FLOAT64: snprintf(tmp, sizeof(tmp), "%f", gguf_get_val_f64(g, kid)); break;
        case GGUF_TYPE_BOOL:    snprintf(tmp, sizeof(tmp), "%s", gguf_get_val_bool(g, kid) ? "true" : "false"); break;
        case GGUF_TYPE_STRING:  return strdup(gguf_get_val_str(g, kid));
        default:                return NULL;
    }
    return strdup(tmp);
}

static bool load_meta_strings(struct llama_model * model, const struct gguf_context * g) {
    const int64_t n_kv = gguf_get_n_kv(g);
    model->meta_keys = calloc((size_t) (n_kv > 0 ? n_kv : 1), sizeof(char *));
    model->meta_vals = calloc((size_t) (n_kv > 0 ? n_kv : 1), sizeof(char *));
    if (!model->meta_keys || !model->meta_vals) {
        LLAMA_LOG_ERROR("llama_model_load: out of memory for %" PRId64 " metadata keys\n", n_kv);
        return false;
    }
    for (int64_t i = 0; i < n_kv; i++) {
        // arrays (token lists, merges, ...) are not exposed as strings, as in llama.cpp
        if (gguf_get_kv_type(g, i) == GGUF_TYPE_ARRAY) {
            continue;
        }
        char * k = strdup(gguf_get_key(g, i));
        char * v = llama_gguf_kv_to_str(g, i);
        if (!k || !v) {
            free(k);
            free(v);
            LLAMA_LOG_ERROR("llama_model_load: out of memory copying metadata\n");
            return false;
        }
        model->meta_keys[model->n_meta] = k;
        model->meta_vals[model->n_meta] = v;
        model->n_meta++;
    }
    return true;
}

const char * llama_model_meta_get(const struct llama_model * model, const char * key) {
    if (!model || !key) {
        return NULL;
    }
    for (int32_t i = 0; i < model->n_meta; i++) {
        if (strcmp(model->meta_keys[i], key) == 0) {
            return model->meta_vals[i];
        }
    }
    return NULL;
}

// ---- hyperparameters ---------------------------------------------------------------------------------------

static enum llama_rope_type rope_type_of(enum llm_arch arch) {
    switch (arch) {
        case LLM_ARCH_LLAMA:
        case LLM_ARCH_GRANITE:
        case LLM_ARCH_GRANITE_MOE:
        case LLM_ARCH_BAICHUAN:
        case LLM_ARCH_STARCODER:
        case LLM_ARCH_REFACT:
        case LLM_ARCH_MISTRAL3:
        case LLM_ARCH_LLAMA4:
        case LLM_ARCH_DEEPSEEK2:
            return LLAMA_ROPE_TYPE_NORM;
        case LLM_ARCH_QWEN2:
        case LLM_ARCH_QWEN3:
        case LLM_ARCH_QWEN3MOE:
        case LLM_ARCH_QWEN2MOE:
        case LLM_ARCH_QWEN:
        case LLM_ARCH_GEMMA:
        case LLM_ARCH_GEMMA2:
        case LLM_ARCH_GEMMA3:
        case LLM_ARCH_PHI2:
        case LLM_ARCH_PHI3:
        case LLM_ARCH_EXAONE:
        case LLM_ARCH_EXAONE4:
        case LLM_ARCH_FALCON:
        case LLM_ARCH_GPTNEOX:
        case LLM_ARCH_STABLELM:
        case LLM_ARCH_STARCODER2:
        case LLM_ARCH_OLMO2:
        case LLM_ARCH_NOMIC_BERT:
            return LLAMA_ROPE_TYPE_NEOX;
        default:
            return LLAMA_ROPE_TYPE_NONE;
    }
}

static enum llm_type guess_type(const struct llama_model * model) {
    const struct llama_hparams * hp = &model->hparams;
    switch (model->arch) {
        case LLM_ARCH_LLAMA:
            switch (hp->n_layer) {
                case 16: return LLM_TYPE_1B;
                case 22: return LLM_TYPE_1B;
                case 26: return LLM_TYPE_3B;
                case 28: return LLM_TYPE_3B;
                case 32: return hp->n_vocab < 40000 ? LLM_TYPE_7B : LLM_TYPE_8B;
                case 40: return LLM_TYPE_13B;
                case 48: return LLM_TYPE_34B;
                case 60: return LLM_TYPE_30B;
                case 80: return LLM_TYPE_70B;
                default: return LLM_TYPE_UNKNOWN;
            }
        case LLM_ARCH_QWEN2:
            switch (hp->n_layer) {
                case 24: return LLM_TYPE_0_5B;
                case 28: return hp->n_embd == 1536 ? LLM_TYPE_1_5B : LLM_TYPE_7B;
                case 48: return LLM_TYPE_14B;
                case 64: return LLM_TYPE_32B;
                default: return LLM_TYPE_UNKNOWN;
            }
        case LLM_ARCH_QWEN3:
            switch (hp->n_layer) {
                case 28: return hp->n_embd == 1024 ? LLM_TYPE_0_6B : LLM_TYPE_1_7B;
                case 36: return hp->n_embd == 2560 ? LLM_TYPE_4B : LLM_TYPE_8B;
                case 40: return LLM_TYPE_14B;
                case 64: return LLM_TYPE_32B;
                default: return LLM_TYPE_UNKNOWN;
            }
        case LLM_ARCH_QWEN3MOE:
            switch (hp->n_layer) {
                case 48: return LLM_TYPE_30B_A3B;
                case 94: return LLM_TYPE_235B_A22B;
                default: return LLM_TYPE_UNKNOWN;
            }
        case LLM_ARCH_GEMMA3:
            switch (hp->n_layer) {
                case 18: return LLM_TYPE_270M;
                case 26: return LLM_TYPE_1B;
                case 34: return LLM_TYPE_4B;
                case 48: return LLM_TYPE_12B;
                case 62: return LLM_TYPE_27B;
                default: return LLM_TYPE_UNKNOWN;
            }
        case LLM_ARCH_PHI3:
            switch (hp->n_layer) {
                case 24: return LLM_TYPE_1B;
                case 32: return LLM_TYPE_MINI_3_8B;
                case 40: return LLM_TYPE_MEDIUM_14B;
                default: return LLM_TYPE_UNKNOWN;
            }
        case LLM_ARCH_GRANITE:
            switch (hp->n_layer) {
                case 32: return LLM_TYPE_3B;
                case 40: return LLM_TYPE_3B;
                default: return LLM_TYPE_UNKNOWN;
            }
        case LLM_ARCH_EXAONE4:
            switch (hp->n_layer) {
                case 30: return LLM_TYPE_1_2B;
                case 64: return LLM_TYPE_32B;
                default: return LLM_TYPE_UNKNOWN;
            }
        default:
            return LLM_TYPE_UNKNOWN;
    }
}

#define KV_OK(r) ((r) != LLAMA_KV_ERROR)

static bool hp_fail(const struct llama_model_loader * ml, const char * what) {
    LLAMA_LOG_ERROR("llama_model_load: %s (arch %s, file '%s')\n", what, ml->arch_name, ml->fname);
    return false;
}

bool llama_model_load_hparams(struct llama_model * model, struct llama_model_loader * ml) {
    struct llama_hparams * hp = &model->hparams;
    const bool supported = llm_arch_is_supported(ml->arch);

    model->arch  = ml->arch;
    model->ftype = ml->ftype;

    if (!load_meta_strings(model, ml->meta)) {
        return false;
    }
    {
        const char * name = llama_model_meta_get(model, "general.name");
        model->name = strdup(name ? name : "n/a");
        if (!model->name) {
            return hp_fail(ml, "out of memory");
        }
    }

    // defaults
    hp->vocab_only               = model->params.vocab_only;
    hp->router_layer             = -1;
    hp->rope_freq_scale_train    = 1.0f;
    hp->rope_attn_factor         = 1.0f;
    hp->yarn_ext_factor          = -1.0f;
    hp->yarn_attn_factor         = 1.0f;
    hp->yarn_beta_fast           = 32.0f;
    hp->yarn_beta_slow           = 1.0f;
    hp->expert_weights_scale     = 0.0f;
    hp->causal_attn              = true;
    hp->pooling_type             = LLAMA_POOLING_TYPE_UNSPECIFIED;
    hp->dec_start_token_id       = LLAMA_TOKEN_NULL;
    hp->swa_type                 = LLAMA_SWA_TYPE_NONE;
    llama_hparams_set_swa_pattern(hp, 1);

    if (!KV_OK(llama_ml_get_u32(ml, LLM_KV_CONTEXT_LENGTH,   &hp->n_ctx_train, true)) ||
        !KV_OK(llama_ml_get_u32(ml, LLM_KV_EMBEDDING_LENGTH, &hp->n_embd,      true)) ||
        !KV_OK(llama_ml_get_u32(ml, LLM_KV_BLOCK_COUNT,      &hp->n_layer,     true)) ||
        !KV_OK(llama_ml_get_u32(ml, LLM_KV_EXPERT_COUNT,       &hp->n_expert,        false)) ||
        !KV_OK(llama_ml_get_u32(ml, LLM_KV_EXPERT_USED_COUNT,  &hp->n_expert_used,   false)) ||
        !KV_OK(llama_ml_get_u32(ml, LLM_KV_EXPERT_SHARED_COUNT, &hp->n_expert_shared, false))) {
        return false;
    }
    // llama_ml_get_u32 leaves the output untouched when the key is missing; required keys were checked
    if (hp->n_layer > LLAMA_MAX_LAYERS) {
        LLAMA_LOG_ERROR("llama_model_load: %s.block_count = %u exceeds the maximum of %d (file '%s')\n",
                ml->arch_name, hp->n_layer, LLAMA_MAX_LAYERS, ml->fname);
        return false;
    }
    if (hp->n_expert > LLAMA_MAX_EXPERTS) {
        LLAMA_LOG_ERROR("llama_model_load: %s.expert_count = %u exceeds the maximum of %d (file '%s')\n",
                ml->arch_name, hp->n_expert, LLAMA_MAX_EXPERTS, ml->fname);
        return false;
    }
    if (hp->n_expert > 0 && (hp->n_expert_used == 0 || hp->n_expert_used > hp->n_expert)) {
        LLAMA_LOG_ERROR("llama_model_load: %s.expert_used_count = %u must be in [1, %s.expert_count = %u] (file '%s')\n",
                ml->arch_name, hp->n_expert_used, ml->arch_name, hp->n_expert, ml->fname);
        return false;
    }
    if (hp->n_expert == 0 && hp->n_expert_used > 0) {
        return hp_fail(ml, "expert_used_count is set but expert_count is 0");
    }
    if (supported && (hp->n_embd == 0 || hp->n_layer == 0)) {
        return hp_fail(ml, "embedding_length and block_count must be positive");
    }

    const uint32_t n_layer = hp->n_layer;
    if (!KV_OK(llama_ml_get_u32_or_arr(ml, LLM_KV_FEED_FORWARD_LENGTH, hp->n_ff_arr, n_layer, false)) ||
        !KV_OK(llama_ml_get_u32_or_arr(ml, LLM_KV_ATTENTION_HEAD_COUNT, hp->n_head_arr, n_layer, supported))) {
        return false;
    }
    // no head_count_kv: multi-head attention (as many KV heads as query heads)
    for (uint32_t il = 0; il < n_layer; il++) {
        hp->n_head_kv_arr[il] = hp->n_head_arr[il];
    }
    if (!KV_OK(llama_ml_get_u32_or_arr(ml, LLM_KV_ATTENTION_HEAD_COUNT_KV, hp->n_head_kv_arr, n_layer, false))) {
        return false;
    }

    if (supported) {
        for (uint32_t il = 0; il < n_layer; il++) {
            const uint32_t nh = hp->n_head_arr[il], nkv = hp->n_head_kv_arr[il];
            if (nh == 0 || nkv == 0 || nh % nkv != 0) {
                LLAMA_LOG_ERROR("llama_model_load: layer %u: %s.attention.head_count = %u is not a positive multiple of "
                        "head_count_kv = %u (file '%s')\n", il, ml->arch_name, nh, nkv, ml->fname);
                return false;
            }
        }
    }

    // head sizes default to n_embd / n_head
    const uint32_t n_head0 = n_layer > 0 ? hp->n_head_arr[0] : 0;
    const uint32_t head_default = n_head0 > 0 ? hp->n_embd / n_head0 : 0;
    hp->n_embd_head_k = head_default;
    hp->n_embd_head_v = head_default;
    if (!KV_OK(llama_ml_get_u32(ml, LLM_KV_ATTENTION_KEY_LENGTH,   &hp->n_embd_head_k, false)) ||
        !KV_OK(llama_ml_get_u32(ml, LLM_KV_ATTENTION_VALUE_LENGTH, &hp->n_embd_head_v, false))) {
        return false;
    }
    hp->n_rot = hp->n_embd_head_k;
    if (!KV_OK(llama_ml_get_u32(ml, LLM_KV_ROPE_DIMENSION_COUNT, &hp->n_rot, false))) {
        return false;
    }
    if (supported) {
        if (hp->n_embd_head_k == 0 || hp->n_embd_head_v == 0) {
            return hp_fail(ml, "head size (key_length / value_length or embedding_length / head_count) is 0");
        }
        if (hp->n_rot > hp->n_embd_head_k || hp->n_rot % 2 != 0) {
            LLAMA_LOG_ERROR("llama_model_load: %s.rope.dimension_count = %u must be even and <= the head size %u (file '%s')\n",
                    ml->arch_name, hp->n_rot, hp->n_embd_head_k, ml->fname);
            return false;
        }
    }

    // norms
    if (!KV_OK(llama_ml_get_f32(ml, LLM_KV_ATTENTION_LAYERNORM_EPS, &hp->f_norm_eps, false))) {
        return false;
    }
    if (!KV_OK(llama_ml_get_f32(ml, LLM_KV_ATTENTION_LAYERNORM_RMS_EPS, &hp->f_norm_rms_eps, supported))) {
        return false;
    }

    // rope
    hp->rope_freq_base_train = 10000.0f;
    if (!KV_OK(llama_ml_get_f32(ml, LLM_KV_ROPE_FREQ_BASE, &hp->rope_freq_base_train, false))) {
        return false;
    }
    {
        const char * st = NULL;
        const int r = llama_ml_get_str(ml, LLM_KV_ROPE_SCALING_TYPE, &st, false);
        if (!KV_OK(r)) {
            return false;
        }
        hp->rope_scaling_type_train = LLAMA_ROPE_SCALING_TYPE_LINEAR;
        if (r == LLAMA_KV_FOUND) {
            if      (strcmp(st, "none")     == 0) { hp->rope_scaling_type_train = LLAMA_ROPE_SCALING_TYPE_NONE; }
            else if (strcmp(st, "linear")   == 0) { hp->rope_scaling_type_train = LLAMA_ROPE_SCALING_TYPE_LINEAR; }
            else if (strcmp(st, "yarn")     == 0) { hp->rope_scaling_type_train = LLAMA_ROPE_SCALING_TYPE_YARN; }
            else if (strcmp(st, "longrope") == 0) { hp->rope_scaling_type_train = LLAMA_ROPE_SCALING_TYPE_LONGROPE; }
            else {
                LLAMA_LOG_ERROR("llama_model_load: %s.rope.scaling.type = '%s' is not one of none, linear, yarn, "
                        "longrope (file '%s')\n", ml->arch_name, st, ml->fname);
                return false;
            }
        }
    }
    {
        // rope.scaling.factor, or the older rope.scale_linear; the frequency scale is its inverse
        float factor = 0.0f;
        int r = llama_ml_get_f32(ml, LLM_KV_ROPE_SCALING_FACTOR, &factor, false);
        if (r == LLAMA_KV_MISSING) {
            r = llama_ml_get_f32(ml, LLM_KV_ROPE_SCALE_LINEAR, &factor, false);
        }
        if (!KV_OK(r)) {
            return false;
        }
        if (factor < 0.0f || !isfinite(factor)) {
            return hp_fail(ml, "rope scaling factor must be a non-negative number");
        }
        hp->rope_freq_scale_train = factor == 0.0f ? 1.0f : 1.0f / factor;
    }
    hp->rope_freq_base_train_swa  = hp->rope_freq_base_train;
    hp->rope_freq_scale_train_swa = hp->rope_freq_scale_train;
    hp->n_ctx_orig_yarn = hp->n_ctx_train;
    if (!KV_OK(llama_ml_get_u32 (ml, LLM_KV_ROPE_SCALING_ORIG_CTX_LEN,     &hp->n_ctx_orig_yarn, false)) ||
        !KV_OK(llama_ml_get_bool(ml, LLM_KV_ROPE_SCALING_FINETUNED,        &hp->rope_finetuned,   false)) ||
        !KV_OK(llama_ml_get_f32 (ml, LLM_KV_ROPE_SCALING_ATTN_FACTOR,      &hp->rope_attn_factor, false)) ||
        !KV_OK(llama_ml_get_f32 (ml, LLM_KV_ROPE_SCALING_YARN_LOG_MUL,     &hp->rope_yarn_log_mul, false)) ||
        !KV_OK(llama_ml_get_f32 (ml, LLM_KV_ROPE_SCALING_YARN_EXT_FACTOR,  &hp->yarn_ext_factor,  false)) ||
        !KV_OK(llama_ml_get_f32 (ml, LLM_KV_ROPE_SCALING_YARN_ATTN_FACTOR, &hp->yarn_attn_factor, false)) ||
        !KV_OK(llama_ml_get_f32 (ml, LLM_KV_ROPE_SCALING_YARN_BETA_FAST,   &hp->yarn_beta_fast,   false)) ||
        !KV_OK(llama_ml_get_f32 (ml, LLM_KV_ROPE_SCALING_YARN_BETA_SLOW,   &hp->yarn_beta_slow,   false))) {
        return false;
    }

    // misc
    {
        uint32_t pt = 0;
        const int r = llama_ml_get_u32(ml, LLM_KV_POOLING_TYPE, &pt, false);
        if (!KV_OK(r)) {
            return false;
        }
        if (r == LLAMA_KV_FOUND) {
            if (pt > LLAMA_POOLING_TYPE_RANK) {
                return hp_fail(ml, "pooling_type is out of range");
            }
            hp->pooling_type = (enum llama_pooling_type) pt;
        }
    }
    if (!KV_OK(llama_ml_get_bool(ml, LLM_KV_ATTENTION_CAUSAL,        &hp->causal_attn,        false)) ||
        !KV_OK(llama_ml_get_i32 (ml, LLM_KV_DECODER_START_TOKEN_ID,  &hp->dec_start_token_id, false)) ||
        !KV_OK(llama_ml_get_u32 (ml, LLM_KV_NEXTN_PREDICT_LAYERS,    &hp->n_layer_nextn,      false)) ||
        !KV_OK(llama_ml_get_f32 (ml, LLM_KV_ATTN_LOGIT_SOFTCAPPING,  &hp->f_attn_logit_softcapping,  false)) ||
        !KV_OK(llama_ml_get_f32 (ml, LLM_KV_FINAL_LOGIT_SOFTCAPPING, &hp->f_final_logit_softcapping, false)) ||
        !KV_OK(llama_ml_get_u32 (ml, LLM_KV_EXPERT_FEED_FORWARD_LENGTH, &hp->n_ff_exp, false)) ||
        !KV_OK(llama_ml_get_u32 (ml, LLM_KV_EXPERT_SHARED_FEED_FORWARD_LENGTH, &hp->n_ff_shexp, false)) ||
        !KV_OK(llama_ml_get_f32 (ml, LLM_KV_EXPERT_WEIGHTS_SCALE,    &hp->expert_weights_scale, false)) ||
        !KV_OK(llama_ml_get_bool(ml, LLM_KV_EXPERT_WEIGHTS_NORM,     &hp->expert_weights_norm,  false))) {
        return false;
    }
    {
        uint32_t gf = 0;
        const int r = llama_ml_get_u32(ml, LLM_KV_EXPERT_GATING_FUNC, &gf, false);
        if (!KV_OK(r)) {
            return false;
        }
        if (r == LLAMA_KV_FOUND && gf > LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT) {
            return hp_fail(ml, "expert_gating_func is out of range");
        }
        hp->expert_gating_func = r == LLAMA_KV_FOUND ? (enum llama_expert_gating_func_type) gf
                                                      : LLAMA_EXPERT_GATING_FUNC_TYPE_NONE;
    }
    if (hp->n_layer_nextn > hp->n_layer) {
        return hp_fail(ml, "nextn_predict_layers exceeds block_count");
    }

    // vocabulary size: the tokenizer's token list, else {arch}.vocab_size, else the rows of token_embd
    {
        uint32_t n = 0;
        const int r = llama_ml_get_arr_n(ml, LLM_KV_TOKENIZER_LIST, &n, false);
        if (!KV_OK(r)) {
            return false;
        }
        if (r == LLAMA_KV_MISSING && !KV_OK(llama_ml_get_u32(ml, LLM_KV_VOCAB_SIZE, &n, false))) {
            return false;
        }
        if (n == 0) {
            struct llama_tensor_weight * w = llama_ml_get_weight(ml, "token_embd.weight");
            if (w && w->meta->ne[1] > 0 && w->meta->ne[1] <= INT32_MAX) {
                n = (uint32_t) w->meta->ne[1];
            }
        }
        hp->n_vocab = n;
    }

    // per architecture
    switch (ml->arch) {
        case LLM_ARCH_LLAMA:
        case LLM_ARCH_QWEN2:
        case LLM_ARCH_QWEN3:
            break;
        case LLM_ARCH_QWEN3MOE:
            if (hp->n_expert == 0) {
                return hp_fail(ml, "qwen3moe needs expert_count > 0");
            }
            break;
        case LLM_ARCH_GEMMA3: {
            uint32_t pattern = 6;
            if (!KV_OK(llama_ml_get_u32(ml, LLM_KV_ATTENTION_SLIDING_WINDOW, &hp->n_swa, true)) ||
                !KV_OK(llama_ml_get_u32(ml, LLM_KV_ATTENTION_SLIDING_WINDOW_PATTERN, &pattern, false))) {
                return false;
            }
            hp->swa_type = LLAMA_SWA_TYPE_STANDARD;
            llama_hparams_set_swa_pattern(hp, pattern);
            hp->rope_freq_base_train_swa  = 10000.0f;
            hp->rope_freq_scale_train_swa = 1.0f;
            if (!KV_OK(llama_ml_get_f32(ml, LLM_KV_ROPE_FREQ_BASE_SWA, &hp->rope_freq_base_train_swa, false))) {
                return false;
            }
            model->type = guess_type(model);
            // the 27B model scales queries by the model width per head rather than the head size
            hp->f_attention_scale = model->type == LLM_TYPE_27B
                ? 1.0f / sqrtf((float) hp->n_embd / (float) n_head0)
                : 1.0f / sqrtf((float) hp->n_embd_head_k);
        } break;
        case LLM_ARCH_PHI3: {
            uint32_t n_swa = 0;
            if (!KV_OK(llama_ml_get_u32(ml, LLM_KV_ATTENTION_SLIDING_WINDOW, &n_swa, false))) {
                return false;
            }
            if (n_swa > 0) {
                // llama.cpp runs Phi-3 without its sliding window (converted files do not describe it reliably)
                LLAMA_LOG_WARN("llama_model_load: phi3 sliding window (%u) is ignored, as in llama.cpp\n", n_swa);
            }
        } break;
        case LLM_ARCH_GRANITE:
            if (!KV_OK(llama_ml_get_f32(ml, LLM_KV_LOGIT_SCALE,     &hp->f_logit_scale,     true)) ||
                !KV_OK(llama_ml_get_f32(ml, LLM_KV_RESIDUAL_SCALE,  &hp->f_residual_scale,  true)) ||
                !KV_OK(llama_ml_get_f32(ml, LLM_KV_EMBEDDING_SCALE, &hp->f_embedding_scale, true)) ||
                !KV_OK(llama_ml_get_f32(ml, LLM_KV_ATTENTION_SCALE, &hp->f_attention_scale, true))) {
                return false;
            }
            if (hp->f_logit_scale == 0.0f) {
                return hp_fail(ml, "granite.logit_scale must not be 0");
            }
            break;
        case LLM_ARCH_EXAONE4:
            // llama.cpp enables EXAONE 4's sliding window only for the 64-layer (32B) configuration
            if (hp->n_layer == 64) {
                hp->swa_type = LLAMA_SWA_TYPE_STANDARD;
                llama_hparams_set_swa_pattern(hp, 4);
                if (!KV_OK(llama_ml_get_u32(ml, LLM_KV_ATTENTION_SLIDING_WINDOW, &hp->n_swa, true))) {
                    return false;
                }
            }
            break;
        default:
            break;
    }

    hp->rope_type   = rope_type_of(ml->arch);
    if (model->type == LLM_TYPE_UNKNOWN) {
        model->type = guess_type(model);
    }
    return true;
}

// ---- tensors -----------------------------------------------------------------------------------------------

struct tensor_loader {
    struct llama_model_loader * ml;
    struct ggml_context       * ctx;
    bool err;
};

#define DIMS1(a)       1, (const int64_t[]){ (int64_t) (a) }
#define DIMS2(a, b)    2, (const int64_t[]){ (int64_t) (a), (int64_t) (b) }
#define DIMS3(a, b, c) 3, (const int64_t[]){ (int64_t) (a), (int64_t) (b), (int64_t) (c) }

// the first error stops further creation, so the log names only the first problem
static struct ggml_tensor * ct(struct tensor_loader * tl, enum llm_tensor t, const char * suffix, int bid,
        int flags, int n_dims, const int64_t * ne) {
    if (tl->err) {
        return NULL;
    }
    char name[LLM_NAME_MAX];
    llm_tensor_name(t, suffix, bid, name, sizeof(name));
    return llama_ml_create_tensor(tl->ml, tl->ctx, name, ne, n_dims, flags, &tl->err);
}

#define OPT LLAMA_ML_TENSOR_NOT_REQUIRED

static void load_output(struct tensor_loader * tl, struct llama_model * model, bool output_required) {
    const int64_t n_embd  = model->hparams.n_embd;
    const int64_t n_vocab = model->hparams.n_vocab;
    model->tok_embd    = ct(tl, LLM_TENSOR_TOKEN_EMBD,  "weight", -1, 0, DIMS2(n_embd, n_vocab));
    model->output_norm = ct(tl, LLM_TENSOR_OUTPUT_NORM, "weight", -1, 0, DIMS1(n_embd));
    model->output      = ct(tl, LLM_TENSOR_OUTPUT,      "weight", -1, output_required ? 0 : OPT, DIMS2(n_embd, n_vocab));
    if (!model->output && !tl->err) {
        // tied embeddings: the output projection reuses token_embd
        model->output = model->tok_embd;
    }
}

static void load_dense_ffn(struct tensor_loader * tl, struct llama_layer * l, int i, int64_t n_embd, int64_t n_ff) {
    l->ffn_gate = ct(tl, LLM_TENSOR_FFN_GATE, "weight", i, 0, DIMS2(n_embd, n_ff));
    l->ffn_down = ct(tl, LLM_TENSOR_FFN_DOWN, "weight", i, 0, DIMS2(n_ff, n_embd));
    l->ffn_up   = ct(tl, LLM_TENSOR_FFN_UP,   "weight", i, 0, DIMS2(n_embd, n_ff));
}

static void load_moe_ffn(struct tensor_loader * tl, struct llama_layer * l, int i, int64_t n_embd, int64_t n_ff_exp,
        int64_t n_expert) {
    l->ffn_gate_inp  = ct(tl, LLM_TENSOR_FFN_GATE_INP,  "weight", i, 0, DIMS2(n_embd, n_expert));
    l->ffn_gate_exps = ct(tl, LLM_TENSOR_FFN_GATE_EXPS, "weight", i, 0, DIMS3(n_embd, n_ff_exp, n_expert));
    l->ffn_down_exps = ct(tl, LLM_TENSOR_FFN_DOWN_EXPS, "weight", i, 0, DIMS3(n_ff_exp, n_embd, n_expert));
    l->ffn_up_exps   = ct(tl, LLM_TENSOR_FFN_UP_EXPS,   "weight", i, 0, DIMS3(n_embd, n_ff_exp, n_expert));
}

bool llama_model_load_tensors(struct llama_model * model, struct llama_model_loader * ml) {
    const struct llama_hparams * hp = &model->hparams;
    // the buffer type choice of llama_ml_load_all_data: repacked matmul weights unless the caller said no
    ml->use_extra_bufts = model->params.use_extra_bufts;

    if (!llm_arch_is_supported(model->arch)) {
        LLAMA_LOG_ERROR("llama_model_load: architecture '%s' is recognised but not supported for inference "
                "(only vocab_only loading works) (file '%s')\n", ml->arch_name, ml->fname);
        return false;
    }
    if (hp->n_vocab == 0) {
        return hp_fail(ml, "cannot determine the vocabulary size (no tokenizer.ggml.tokens, vocab_size or token_embd)");
    }

    {
        struct ggml_init_params ip = {
            .mem_size   = ((size_t) ml->n_weights + 16) * ggml_tensor_overhead(),
            .mem_buffer = NULL,
            .no_alloc   = true,
        };
        model->ctx_w = ggml_init(ip);
        if (!model->ctx_w) {
            return hp_fail(ml, "failed to create the weight context");
        }
    }
    model->layers = calloc(hp->n_layer, sizeof(struct llama_layer));
    if (!model->layers) {
        return hp_fail(ml, "out of memory for the layers");
    }

    struct tensor_loader tl = { .ml = ml, .ctx = model->ctx_w, .err = false };
    struct tensor_loader * t = &tl;

    const int64_t n_embd        = hp->n_embd;
    const int64_t n_embd_head_k = hp->n_embd_head_k;
    const int64_t n_embd_head_v = hp->n_embd_head_v;
    const int64_t n_expert      = hp->n_expert;
    const int64_t n_rot         = hp->n_rot;

    switch (model->arch) {
        case LLM_ARCH_LLAMA:
        case LLM_ARCH_GRANITE:
            load_output(t, model, false);
            break;
        case LLM_ARCH_PHI3:
            load_output(t, model, true);
            break;
        default:
            load_output(t, model, false);
            break;
    }

    for (int i = 0; i < (int) hp->n_layer && !tl.err; i++) {
        struct llama_layer * l = &model->layers[i];
        const int64_t n_head       = hp->n_head_arr[i];
        const int64_t n_head_kv    = hp->n_head_kv_arr[i];
        const int64_t n_ff         = hp->n_ff_arr[i];
        const int64_t n_embd_q     = n_embd_head_k * n_head;
        const int64_t n_embd_k_gqa = n_embd_head_k * n_head_kv;
        const int64_t n_embd_v_gqa = n_embd_head_v * n_head_kv;

        switch (model->arch) {
            case LLM_ARCH_LLAMA:
            case LLM_ARCH_GRANITE:
                l->attn_norm = ct(t, LLM_TENSOR_ATTN_NORM, "weight", i, 0, DIMS1(n_embd));
                l->wq = ct(t, LLM_TENSOR_ATTN_Q,   "weight", i, 0, DIMS2(n_embd, n_embd_q));
                l->wk = ct(t, LLM_TENSOR_ATTN_K,   "weight", i, 0, DIMS2(n_embd, n_embd_k_gqa));
                l->wv = ct(t, LLM_TENSOR_ATTN_V,   "weight", i, 0, DIMS2(n_embd, n_embd_v_gqa));
                l->wo = ct(t, LLM_TENSOR_ATTN_OUT, "weight", i, 0, DIMS2(n_embd_q, n_embd));
                // optional biases (some Llama derivatives have them)
                l->bq = ct(t, LLM_TENSOR_ATTN_Q,   "bias", i, OPT, DIMS1(n_embd_q));
                l->bk = ct(t, LLM_TENSOR_ATTN_K,   "bias", i, OPT, DIMS1(n_embd_k_gqa));
                l->bv = ct(t, LLM_TENSOR_ATTN_V,   "bias", i, OPT, DIMS1(n_embd_v_gqa));
                l->bo = ct(t, LLM_TENSOR_ATTN_OUT, "bias", i, OPT, DIMS1(n_embd));
                l->ffn_norm = ct(t, LLM_TENSOR_FFN_NORM, "weight", i, 0, DIMS1(n_embd));
                // Llama 3 rope frequency factors, one tensor shared by all layers
                l->rope_freqs = ct(t, LLM_TENSOR_ROPE_FREQS, "weight", i, OPT, DIMS1(n_rot / 2));
                if (n_expert == 0) {
                    load_dense_ffn(t, l, i, n_embd, n_ff);
                } else {
                    const int64_t n_ff_exp = hp->n_ff_exp ? hp->n_ff_exp : n_ff;
                    load_moe_ffn(t, l, i, n_embd, n_ff_exp, n_expert);
                }
                break;
            case LLM_ARCH_QWEN2:
                l->attn_norm = ct(t, LLM_TENSOR_ATTN_NORM, "weight", i, 0, DIMS1(n_embd));
                l->wq = ct(t, LLM_TENSOR_ATTN_Q,   "weight", i, 0, DIMS2(n_embd, n_embd_q));
                l->wk = ct(t, LLM_TENSOR_ATTN_K,   "weight", i, 0, DIMS2(n_embd, n_embd_k_gqa));
                l->wv = ct(t, LLM_TENSOR_ATTN_V,   "weight", i, 0, DIMS2(n_embd, n_embd_v_gqa));
                l->wo = ct(t, LLM_TENSOR_ATTN_OUT, "weight", i, 0, DIMS2(n_embd_q, n_embd));
                l->bq = ct(t, LLM_TENSOR_ATTN_Q,   "bias",   i, 0, DIMS1(n_embd_q));
                l->bk = ct(t, LLM_TENSOR_ATTN_K,   "bias",   i, 0, DIMS1(n_embd_k_gqa));
                l->bv = ct(t, LLM_TENSOR_ATTN_V,   "bias",   i, 0, DIMS1(n_embd_v_gqa));
                l->ffn_norm = ct(t, LLM_TENSOR_FFN_NORM, "weight", i, 0, DIMS1(n_embd));
                load_dense_ffn(t, l, i, n_embd, n_ff);
                break;
            case LLM_ARCH_QWEN3:
            case LLM_ARCH_QWEN3MOE:
                l->attn_norm = ct(t, LLM_TENSOR_ATTN_NORM, "weight", i, 0, DIMS1(n_embd));
                l->wq = ct(t, LLM_TENSOR_ATTN_Q,   "weight", i, 0, DIMS2(n_embd, n_embd_q));
                l->wk = ct(t, LLM_TENSOR_ATTN_K,   "weight", i, 0, DIMS2(n_embd, n_embd_k_gqa));
                l->wv = ct(t, LLM_TENSOR_ATTN_V,   "weight", i, 0, DIMS2(n_embd, n_embd_v_gqa));
                l->wo = ct(t, LLM_TENSOR_ATTN_OUT, "weight", i, 0, DIMS2(n_embd_q, n_embd));
                l->attn_q_norm = ct(t, LLM_TENSOR_ATTN_Q_NORM, "weight", i, 0, DIMS1(n_embd_head_k));
                l->attn_k_norm = ct(t, LLM_TENSOR_ATTN_K_NORM, "weight", i, 0, DIMS1(n_embd_head_k));
                l->ffn_norm = ct(t, LLM_TENSOR_FFN_NORM, "weight", i, 0, DIMS1(n_embd));
                if (model->arch == LLM_ARCH_QWEN3) {
                    load_dense_ffn(t, l, i, n_embd, n_ff);
                } else {
                    const int64_t n_ff_exp = hp->n_ff_exp ? hp->n_ff_exp : n_ff / (int64_t) hp->n_expert_used;
                    load_moe_ffn(t, l, i, n_embd, n_ff_exp, n_expert);
                }
                break;
            case LLM_ARCH_GEMMA3:
                l->attn_norm = ct(t, LLM_TENSOR_ATTN_NORM, "weight", i, 0, DIMS1(n_embd));
                l->wq = ct(t, LLM_TENSOR_ATTN_Q,   "weight", i, 0, DIMS2(n_embd, n_embd_q));
                l->wk = ct(t, LLM_TENSOR_ATTN_K,   "weight", i, 0, DIMS2(n_embd, n_embd_k_gqa));
                l->wv = ct(t, LLM_TENSOR_ATTN_V,   "weight", i, 0, DIMS2(n_embd, n_embd_v_gqa));
                l->wo = ct(t, LLM_TENSOR_ATTN_OUT, "weight", i, 0, DIMS2(n_embd_q, n_embd));
                l->attn_q_norm    = ct(t, LLM_TENSOR_ATTN_Q_NORM,    "weight", i, 0, DIMS1(n_embd_head_k));
                l->attn_k_norm    = ct(t, LLM_TENSOR_ATTN_K_NORM,    "weight", i, 0, DIMS1(n_embd_head_k));
                l->attn_post_norm = ct(t, LLM_TENSOR_ATTN_POST_NORM, "weight", i, 0, DIMS1(n_embd));
                l->ffn_norm = ct(t, LLM_TENSOR_FFN_NORM, "weight", i, 0, DIMS1(n_embd));
                load_dense_ffn(t, l, i, n_embd, n_ff);
                l->ffn_post_norm = ct(t, LLM_TENSOR_FFN_POST_NORM, "weight", i, 0, DIMS1(n_embd));
                break;
            case LLM_ARCH_PHI3:
                l->attn_norm = ct(t, LLM_TENSOR_ATTN_NORM, "weight", i, 0, DIMS1(n_embd));
                l->wqkv = ct(t, LLM_TENSOR_ATTN_QKV, "weight", i, OPT, DIMS2(n_embd, n_embd_q + n_embd_k_gqa + n_embd_v_gqa));
                if (!l->wqkv) {
                    l->wq = ct(t, LLM_TENSOR_ATTN_Q, "weight", i, 0, DIMS2(n_embd, n_embd_q));
                    l->wk = ct(t, LLM_TENSOR_ATTN_K, "weight", i, 0, DIMS2(n_embd, n_embd_k_gqa));
                    l->wv = ct(t, LLM_TENSOR_ATTN_V, "weight", i, 0, DIMS2(n_embd, n_embd_v_gqa));
                }
                l->wo = ct(t, LLM_TENSOR_ATTN_OUT, "weight", i, 0, DIMS2(n_embd_q, n_embd));
                l->ffn_norm = ct(t, LLM_TENSOR_FFN_NORM, "weight", i, 0, DIMS1(n_embd));
                l->ffn_down = ct(t, LLM_TENSOR_FFN_DOWN, "weight", i, 0, DIMS2(n_ff, n_embd));
                l->ffn_up   = ct(t, LLM_TENSOR_FFN_UP,   "weight", i, 0, DIMS2(n_embd, 2 * n_ff));
                l->rope_long  = ct(t, LLM_TENSOR_ROPE_FACTORS_LONG,  "weight", i, OPT, DIMS1(n_rot / 2));
                l->rope_short = ct(t, LLM_TENSOR_ROPE_FACTORS_SHORT, "weight", i, OPT, DIMS1(n_rot / 2));
                break;
            case LLM_ARCH_EXAONE4:
                l->wq = ct(t, LLM_TENSOR_ATTN_Q,   "weight", i, 0, DIMS2(n_embd, n_embd_q));
                l->wk = ct(t, LLM_TENSOR_ATTN_K,   "weight", i, 0, DIMS2(n_embd, n_embd_k_gqa));
                l->wv = ct(t, LLM_TENSOR_ATTN_V,   "weight", i, 0, DIMS2(n_embd, n_embd_v_gqa));
                l->wo = ct(t, LLM_TENSOR_ATTN_OUT, "weight", i, 0, DIMS2(n_embd_q, n_embd));
                l->attn_q_norm    = ct(t, LLM_TENSOR_ATTN_Q_NORM,    "weight", i, 0, DIMS1(n_embd_head_k));
                l->attn_k_norm    = ct(t, LLM_TENSOR_ATTN_K_NORM,    "weight", i, 0, DIMS1(n_embd_head_k));
                l->attn_post_norm = ct(t, LLM_TENSOR_ATTN_POST_NORM, "weight", i, 0, DIMS1(n_embd));
                l->rope_freqs = ct(t, LLM_TENSOR_ROPE_FREQS, "weight", i, OPT, DIMS1(n_rot / 2));
                load_dense_ffn(t, l, i, n_embd, n_ff);
                l->ffn_post_norm = ct(t, LLM_TENSOR_FFN_POST_NORM, "weight", i, 0, DIMS1(n_embd));
                break;
            default:
                tl.err = true;
                break;
        }
    }
    if (tl.err) {
        return false;
    }
    return llama_ml_check_all_used(ml);
}

void llama_model_print_info(const struct llama_model * model) {
    const struct llama_hparams * hp = &model->hparams;
    LLAMA_LOG_INFO("print_info: arch             = %s\n", llm_arch_name(model->arch));
    LLAMA_LOG_INFO("print_info: vocab_only       = %d\n", hp->vocab_only);
    if (hp->vocab_only) {
        return;
    }
    LLAMA_LOG_INFO("print_info: n_ctx_train      = %u\n", hp->n_ctx_train);
    LLAMA_LOG_INFO("print_info: n_embd           = %u\n", hp->n_embd);
    LLAMA_LOG_INFO("print_info: n_layer          = %u\n", hp->n_layer);
    if (hp->n_layer > 0) {
        LLAMA_LOG_INFO("print_info: n_head           = %u\n", hp->n_head_arr[0]);
        LLAMA_LOG_INFO("print_info: n_head_kv        = %u\n", hp->n_head_kv_arr[0]);
        LLAMA_LOG_INFO("print_info: n_ff             = %u\n", hp->n_ff_arr[0]);
    }
    LLAMA_LOG_INFO("print_info: n_rot            = %u\n", hp->n_rot);
    LLAMA_LOG_INFO("print_info: n_swa            = %u\n", hp->n_swa);
    LLAMA_LOG_INFO("print_info: n_embd_head_k    = %u\n", hp->n_embd_head_k);
    LLAMA_LOG_INFO("print_info: n_embd_head_v    = %u\n", hp->n_embd_head_v);
    LLAMA_LOG_INFO("print_info: f_norm_rms_eps   = %.1e\n", (double) hp->f_norm_rms_eps);
    LLAMA_LOG_INFO("print_info: n_expert         = %u\n", hp->n_expert);
    LLAMA_LOG_INFO("print_info: n_expert_used    = %u\n", hp->n_expert_used);
    LLAMA_LOG_INFO("print_info: rope type        = %d\n", (int) hp->rope_type);
    LLAMA_LOG_INFO("print_info: freq_base_train  = %.1f\n", (double) hp->rope_freq_base_train);
    LLAMA_LOG_INFO("print_info: freq_scale_train = %g\n", (double) hp->rope_freq_scale_train);
    LLAMA_LOG_INFO("print_info: model type       = %s\n", llm_type_name(model->type));
    LLAMA_LOG_INFO("print_info: file type        = %s\n", llama_model_ftype_name(model->ftype));
    LLAMA_LOG_INFO("print_info: model params     = %.2f M\n", (double) model->n_elements * 1e-6);
    LLAMA_LOG_INFO("print_info: general.name     = %s\n", model->name ? model->name : "n/a");
}
