// llama_model_quantize: rewrite a GGUF model with its weights converted to another type.
//
// The per-tensor type choices follow llama.cpp's quantizer exactly (same mixes, same layer bumps, same
// fallbacks), so a file quantized here has the same tensor types and, for the types ggml_quantize_chunk
// implements, the same bytes as llama.cpp's. Only the GGUF metadata is needed: no model is built.
//
// The output is written to "<fname_out>.tmp" and renamed at the very end, so a failure never leaves a
// partial file under the final name.

#include "llama.h"
#include "llama-impl.h"
#include "gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// broad tensor roles: the mixes treat every attention-value-like or ffn-down-like tensor alike, whatever
// the architecture calls it exactly
enum quant_category {
    QCAT_TOKEN_EMBD,
    QCAT_ATTN_Q,
    QCAT_ATTN_V,
    QCAT_ATTN_K,
    QCAT_ATTN_QKV,
    QCAT_ATTN_KV_B,
    QCAT_ATTN_OUTPUT,
    QCAT_FFN_UP,
    QCAT_FFN_GATE,
    QCAT_FFN_DOWN,
    QCAT_OUTPUT,
    QCAT_OTHER,
};

struct quant_tensor {
    struct ggml_tensor * t;      // shape/name from the input file (no data)
    int64_t              in_id;  // index in its input file's gguf
    int                  file;   // which input file (split models have several)
    enum quant_category  cat;
    bool                 allow;  // may change type at all
    enum ggml_type       target;
};

struct quant_state {
    const struct llama_model_quantize_params * params;
    enum llama_ftype ftype;

    char     arch[64];
    bool     is_falcon;
    bool     is_70b;
    uint32_t n_layer;
    uint32_t n_head;
    uint32_t n_head_kv;
    uint32_t n_expert;
    bool     has_imatrix;
    bool     has_tied_embeddings;

    // running counters: the _M mixes pick by the position of the tensor among its kind
    int n_attention_wv, i_attention_wv;
    int n_ffn_down, i_ffn_down;
    int n_ffn_gate, i_ffn_gate;
    int n_ffn_up, i_ffn_up;
    int n_fallback;

    regex_t * patterns;  // compiled tt_overrides
    size_t    n_patterns;
};

struct llama_model_quantize_params llama_model_quantize_default_params(void) {
    struct llama_model_quantize_params p;
    memset(&p, 0, sizeof(p));
    p.nthread                = 0;
    p.ftype                  = LLAMA_FTYPE_MOSTLY_Q8_0;
    p.output_tensor_type     = GGML_TYPE_COUNT;
    p.token_embedding_type   = GGML_TYPE_COUNT;
    p.allow_requantize       = false;
    p.quantize_output_tensor = true;
    p.only_copy              = false;
    p.pure                   = false;
    p.keep_split             = false;
    p.dry_run                = false;
    p.imatrix                = NULL;
    p.kv_overrides           = NULL;
    p.tt_overrides           = NULL;
    p.prune_layers           = NULL;
    return p;
}

// the tensor type a file type is "mostly" made of; GGML_TYPE_COUNT for unknown file types
static enum ggml_type quant_ftype_default_type(enum llama_ftype ftype) {
    switch (ftype) {
        case LLAMA_FTYPE_ALL_F32:         return GGML_TYPE_F32;
        case LLAMA_FTYPE_MOSTLY_F16:      return GGML_TYPE_F16;
        case LLAMA_FTYPE_MOSTLY_BF16:     return GGML_TYPE_BF16;
        case LLAMA_FTYPE_MOSTLY_Q4_0:     return GGML_TYPE_Q4_0;
        case LLAMA_FTYPE_MOSTLY_Q4_1:     return GGML_TYPE_Q4_1;
        case LLAMA_FTYPE_MOSTLY_Q5_0:     return GGML_TYPE_Q5_0;
        case LLAMA_FTYPE_MOSTLY_Q5_1:     return GGML_TYPE_Q5_1;
        case LLAMA_FTYPE_MOSTLY_Q8_0:     return GGML_TYPE_Q8_0;
        case LLAMA_FTYPE_MOSTLY_MXFP4_MOE: return GGML_TYPE_MXFP4;
        case LLAMA_FTYPE_MOSTLY_Q2_K:
        case LLAMA_FTYPE_MOSTLY_Q2_K_S:   return GGML_TYPE_Q2_K;
        case LLAMA_FTYPE_MOSTLY_Q3_K_S:
        case LLAMA_FTYPE_MOSTLY_Q3_K_M:
        case LLAMA_FTYPE_MOSTLY_Q3_K_L:   return GGML_TYPE_Q3_K;
        case LLAMA_FTYPE_MOSTLY_Q4_K_S:
        case LLAMA_FTYPE_MOSTLY_Q4_K_M:   return GGML_TYPE_Q4_K;
        case LLAMA_FTYPE_MOSTLY_Q5_K_S:
        case LLAMA_FTYPE_MOSTLY_Q5_K_M:   return GGML_TYPE_Q5_K;
        case LLAMA_FTYPE_MOSTLY_Q6_K:     return GGML_TYPE_Q6_K;
        case LLAMA_FTYPE_MOSTLY_TQ1_0:    return GGML_TYPE_TQ1_0;
        case LLAMA_FTYPE_MOSTLY_TQ2_0:    return GGML_TYPE_TQ2_0;
        case LLAMA_FTYPE_MOSTLY_IQ2_XXS:  return GGML_TYPE_IQ2_XXS;
        case LLAMA_FTYPE_MOSTLY_IQ2_XS:   return GGML_TYPE_IQ2_XS;
        case LLAMA_FTYPE_MOSTLY_IQ2_S:    return GGML_TYPE_IQ2_XS;
        case LLAMA_FTYPE_MOSTLY_IQ2_M:    return GGML_TYPE_IQ2_S;
        case LLAMA_FTYPE_MOSTLY_IQ3_XXS:  return GGML_TYPE_IQ3_XXS;
        case LLAMA_FTYPE_MOSTLY_IQ3_XS:   return GGML_TYPE_IQ3_S;
        case LLAMA_FTYPE_MOSTLY_IQ3_S:
        case LLAMA_FTYPE_MOSTLY_IQ3_M:    return GGML_TYPE_IQ3_S;
        case LLAMA_FTYPE_MOSTLY_IQ1_S:    return GGML_TYPE_IQ1_S;
        case LLAMA_FTYPE_MOSTLY_IQ1_M:    return GGML_TYPE_IQ1_M;
        case LLAMA_FTYPE_MOSTLY_IQ4_NL:   return GGML_TYPE_IQ4_NL;
        case LLAMA_FTYPE_MOSTLY_IQ4_XS:   return GGML_TYPE_IQ4_XS;
        default:                          return GGML_TYPE_COUNT;
    }
}

// types this build can produce (ggml_quantize_chunk has a quantizer, or a plain float conversion)
static bool quant_type_can_write(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16:
        case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_0: case GGML_TYPE_Q5_1: case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K: case GGML_TYPE_Q6_K:
        case GGML_TYPE_IQ4_NL: case GGML_TYPE_IQ4_XS:
            return true;
        default:
            return false;
    }
}

static bool str_has(const char * s, const char * sub) { return strstr(s, sub) != NULL; }

static bool name_is_token_embd(const char * name) {
    return strcmp(name, "token_embd.weight") == 0 || strcmp(name, "per_layer_token_embd.weight") == 0;
}

static bool name_is_output(const char * name) { return strcmp(name, "output.weight") == 0; }

static enum quant_category quant_category_of(const char * name) {
    if (name_is_output(name))              return QCAT_OUTPUT;
    if (name_is_token_embd(name))          return QCAT_TOKEN_EMBD;
    if (str_has(name, "attn_qkv.weight"))  return QCAT_ATTN_QKV;
    if (str_has(name, "attn_kv_b.weight")) return QCAT_ATTN_KV_B;
    if (str_has(name, "attn_v.weight"))    return QCAT_ATTN_V;
    if (str_has(name, "attn_k.weight"))    return QCAT_ATTN_K;
    if (str_has(name, "attn_q.weight"))    return QCAT_ATTN_Q;
    if (str_has(name, "attn_output.weight")) return QCAT_ATTN_OUTPUT;
    if (str_has(name, "ffn_up"))           return QCAT_FFN_UP;
    if (str_has(name, "ffn_gate"))         return QCAT_FFN_GATE;
    if (str_has(name, "ffn_down"))         return QCAT_FFN_DOWN;
    return QCAT_OTHER;
}

// attention-value-like tensors are the most sensitive to quantization error
static bool quant_cat_is_attn_v(enum quant_category c) {
    return c == QCAT_ATTN_V || c == QCAT_ATTN_QKV || c == QCAT_ATTN_KV_B;
}

// tensors that must keep their type: 1-D tensors, norms, routers, small or positional tables
static bool quant_tensor_allowed(const struct llama_model_quantize_params * params, const struct ggml_tensor * t) {
    if (params->only_copy || ggml_n_dims(t) < 2) {
        return false;
    }
    const char * name = t->name;
    const size_t len = strlen(name);
    if (len < 6 || strcmp(name + len - 6, "weight") != 0) {
        return false;
    }
    if (!params->quantize_output_tensor && name_is_output(name)) {
        return false;
    }
    static const char * const keep_substr[] = {
        "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
        "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
        "indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
        "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight",
        "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight",
        "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
        "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.",
        "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
    };
    for (size_t i = 0; i < sizeof(keep_substr)/sizeof(keep_substr[0]); i++) {
        if (str_has(name, keep_substr[i])) {
            return false;
        }
    }
    // BERT-style absolute position and token-type tables
    if (strcmp(name, "position_embd.weight") == 0 || strcmp(name, "token_types.weight") == 0) {
        return false;
    }
    return true;
}

// the _M mixes spend more bits on the first and last eighth of the layers and every third one between
static bool quant_use_more_bits(int i_layer, int n_layers) {
    return i_layer < n_layers/8 || i_layer >= 7*n_layers/8 || (i_layer - n_layers/8)%3 == 2;
}

static int quant_n_gqa(const struct quant_state * qs) {
    return qs->n_head_kv == 0 ? 0 : (int) (qs->n_head / qs->n_head_kv);
}

// the layer a per-layer tensor belongs to: its position among its kind, except with experts, where the
// tensors of one layer are not consecutive and the name decides. false (logged) on a bad name.
static bool quant_layer_of(const struct quant_state * qs, int counter, const char * name, int * i_layer) {
    *i_layer = counter;
    if (qs->n_expert > 1) {
        int il = -1;
        if (sscanf(name, "blk.%d.", &il) != 1 || il < 0 || il >= (int) qs->n_layer) {
            LLAMA_LOG_ERROR("%s: cannot determine the layer (of %u) of tensor %s\n", __func__, qs->n_layer, name);
            return false;
        }
        *i_layer = il;
    }
    return true;
}

static bool ftype_is_iq_low(enum llama_ftype f) {
    return f == LLAMA_FTYPE_MOSTLY_IQ2_XXS || f == LLAMA_FTYPE_MOSTLY_IQ2_XS || f == LLAMA_FTYPE_MOSTLY_IQ1_S ||
           f == LLAMA_FTYPE_MOSTLY_IQ2_S   || f == LLAMA_FTYPE_MOSTLY_IQ2_M  || f == LLAMA_FTYPE_MOSTLY_IQ1_M;
}

static enum ggml_type quant_pick_output(const struct quant_state * qs, enum ggml_type t, const struct ggml_tensor * tensor) {
    const enum llama_ftype f = qs->ftype;
    if (qs->params->output_tensor_type < GGML_TYPE_COUNT) {
        return qs->params->output_tensor_type;
    }
    if (f == LLAMA_FTYPE_MOSTLY_MXFP4_MOE || qs->is_falcon || tensor->ne[0] % ggml_blck_size(t) != 0) {
        return GGML_TYPE_Q8_0;
    }
    if (f == LLAMA_FTYPE_MOSTLY_IQ2_XXS || f == LLAMA_FTYPE_MOSTLY_IQ2_XS || f == LLAMA_FTYPE_MOSTLY_IQ3_XXS ||
        f == LLAMA_FTYPE_MOSTLY_IQ1_S   || f == LLAMA_FTYPE_MOSTLY_IQ2_S  || f == LLAMA_FTYPE_MOSTLY_IQ2_M   ||
        f == LLAMA_FTYPE_MOSTLY_IQ1_M) {
        return GGML_TYPE_Q5_K;
    }
    return t == GGML_TYPE_Q8_0 ? t : GGML_TYPE_Q6_K;
}

static enum ggml_type quant_pick_attn_v(struct quant_state * qs, enum ggml_type t) {
    const enum llama_ftype f = qs->ftype;
    const int gqa = quant_n_gqa(qs);
    switch (f) {
        case LLAMA_FTYPE_MOSTLY_Q2_K:    t = gqa >= 4 ? GGML_TYPE_Q4_K : GGML_TYPE_Q3_K; break;
        case LLAMA_FTYPE_MOSTLY_Q2_K_S:  if (gqa >= 4) t = GGML_TYPE_Q4_K; break;
        case LLAMA_FTYPE_MOSTLY_IQ3_XXS:
            t = gqa >= 4 ? GGML_TYPE_Q4_K : (qs->has_imatrix ? GGML_TYPE_IQ3_XXS : GGML_TYPE_IQ3_S);
            break;
        case LLAMA_FTYPE_MOSTLY_IQ3_XS:
        case LLAMA_FTYPE_MOSTLY_IQ3_S:   if (gqa >= 4) t = GGML_TYPE_Q4_K; break;
        case LLAMA_FTYPE_MOSTLY_IQ3_M:   t = GGML_TYPE_Q4_K; break;
        case LLAMA_FTYPE_MOSTLY_Q3_K_M:  t = qs->i_attention_wv < 2 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K; break;
        case LLAMA_FTYPE_MOSTLY_Q3_K_L:  t = GGML_TYPE_Q5_K; break;
        case LLAMA_FTYPE_MOSTLY_IQ4_NL:
        case LLAMA_FTYPE_MOSTLY_IQ4_XS:  if (gqa >= 4) t = GGML_TYPE_Q5_K; break;
        case LLAMA_FTYPE_MOSTLY_Q4_K_M:
        case LLAMA_FTYPE_MOSTLY_Q5_K_M:
            if (quant_use_more_bits(qs->i_attention_wv, qs->n_attention_wv)) t = GGML_TYPE_Q6_K;
            break;
        case LLAMA_FTYPE_MOSTLY_Q4_K_S:  if (qs->i_attention_wv < 4) t = GGML_TYPE_Q5_K; break;
        default: break;
    }
    // 70B llama: 8 query heads share each value head, so attn_v is small and cheap to keep precise
    if (qs->is_70b && (t == GGML_TYPE_Q3_K || t == GGML_TYPE_Q4_K)) {
        t = GGML_TYPE_Q5_K;
    }
    if (qs->n_expert == 8) {
        t = GGML_TYPE_Q8_0;
    }
    ++qs->i_attention_wv;
    return t;
}

static bool quant_pick_ffn_down(struct quant_state * qs, const char * name, enum ggml_type * type) {
    const enum llama_ftype f = qs->ftype;
    int il;
    if (!quant_layer_of(qs, qs->i_ffn_down, name, &il)) {
        return false;
    }
    const int nl = qs->n_ffn_down;
    enum ggml_type t = *type;
    if (f == LLAMA_FTYPE_MOSTLY_Q2_K) {
        t = GGML_TYPE_Q3_K;
    } else if (f == LLAMA_FTYPE_MOSTLY_Q2_K_S) {
        if (il < nl/8) t = GGML_TYPE_Q4_K;
    } else if (f == LLAMA_FTYPE_MOSTLY_IQ3_XXS && !qs->has_imatrix) {
        t = il < nl/8 ? GGML_TYPE_Q4_K : GGML_TYPE_Q3_K;
    } else if (f == LLAMA_FTYPE_MOSTLY_Q3_K_M) {
        if (il < nl/16) {
            t = GGML_TYPE_Q5_K;
        } else if (!qs->is_falcon || quant_use_more_bits(il, nl)) {
            t = GGML_TYPE_Q4_K;
        } else {
            t = GGML_TYPE_Q3_K;
        }
    } else if (f == LLAMA_FTYPE_MOSTLY_IQ3_M && (il < nl/8 || (qs->n_expert == 8 && quant_use_more_bits(il, nl)))) {
        t = GGML_TYPE_Q4_K;
    } else if (f == LLAMA_FTYPE_MOSTLY_Q3_K_L) {
        t = qs->is_falcon ? GGML_TYPE_Q4_K : GGML_TYPE_Q5_K;
    } else if (f == LLAMA_FTYPE_MOSTLY_Q4_K_M) {
        if (qs->is_falcon) {
            t = il < nl/16 ? GGML_TYPE_Q6_K : quant_use_more_bits(il, nl) ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K;
        } else if (quant_use_more_bits(il, nl)) {
            t = GGML_TYPE_Q6_K;
        }
    } else if (il < nl/8 && (f == LLAMA_FTYPE_MOSTLY_IQ4_NL || f == LLAMA_FTYPE_MOSTLY_IQ4_XS) && !qs->has_imatrix) {
        t = GGML_TYPE_Q5_K;
    } else if (f == LLAMA_FTYPE_MOSTLY_Q5_K_M && quant_use_more_bits(il, nl)) {
        t = GGML_TYPE_Q6_K;
    } else if (f == LLAMA_FTYPE_MOSTLY_Q4_K_S && !qs->is_falcon && il < nl/8) {
        t = GGML_TYPE_Q5_K;
    } else if ((f == LLAMA_FTYPE_MOSTLY_Q4_0 || f == LLAMA_FTYPE_MOSTLY_Q5_0) && qs->has_imatrix && il < nl/8) {
        // with an imatrix the first ffn_down layers of Q4_0/Q5_0 still misbehave; without one the old
        // choice is kept so results stay reproducible
        t = f == LLAMA_FTYPE_MOSTLY_Q4_0 ? GGML_TYPE_Q4_1 : GGML_TYPE_Q5_1;
    }
    ++qs->i_ffn_down;
    *type = t;
    return true;
}

static enum ggml_type quant_pick_attn_output(const struct quant_state * qs, enum ggml_type t) {
    const enum llama_ftype f = qs->ftype;
    if (qs->is_falcon) {
        return f == LLAMA_FTYPE_MOSTLY_Q3_K_L ? GGML_TYPE_Q4_K : t;
    }
    if (qs->n_expert == 8) {
        switch (f) {
            case LLAMA_FTYPE_MOSTLY_Q2_K:   case LLAMA_FTYPE_MOSTLY_IQ3_XS: case LLAMA_FTYPE_MOSTLY_IQ3_XXS:
            case LLAMA_FTYPE_MOSTLY_Q3_K_S: case LLAMA_FTYPE_MOSTLY_Q3_K_M: case LLAMA_FTYPE_MOSTLY_IQ4_NL:
            case LLAMA_FTYPE_MOSTLY_Q4_K_S: case LLAMA_FTYPE_MOSTLY_Q4_K_M: case LLAMA_FTYPE_MOSTLY_IQ3_S:
            case LLAMA_FTYPE_MOSTLY_IQ3_M:  case LLAMA_FTYPE_MOSTLY_IQ4_XS:
                return GGML_TYPE_Q5_K;
            default:
                return t;
        }
    }
    switch (f) {
        case LLAMA_FTYPE_MOSTLY_Q2_K:    return GGML_TYPE_Q3_K;
        case LLAMA_FTYPE_MOSTLY_IQ3_XXS: return GGML_TYPE_IQ3_S;
        case LLAMA_FTYPE_MOSTLY_Q3_K_M:  return GGML_TYPE_Q4_K;
        case LLAMA_FTYPE_MOSTLY_Q3_K_L:  return GGML_TYPE_Q5_K;
        case LLAMA_FTYPE_MOSTLY_IQ3_M:   return GGML_TYPE_Q4_K;
        default:                         return t;
    }
}

// the very low-bit IQ mixes have their own, more protective, rules
static enum ggml_type quant_pick_iq_low(struct quant_state * qs, enum ggml_type t, enum quant_category cat) {
    const enum llama_ftype f = qs->ftype;
    const bool iq2sm = f == LLAMA_FTYPE_MOSTLY_IQ2_S || f == LLAMA_FTYPE_MOSTLY_IQ2_M;
    if (quant_cat_is_attn_v(cat)) {
        if (quant_n_gqa(qs) >= 4 || qs->n_expert >= 4) {
            t = GGML_TYPE_Q4_K;
        } else {
            t = iq2sm ? GGML_TYPE_IQ3_S : GGML_TYPE_Q2_K;
        }
        ++qs->i_attention_wv;
    } else if (qs->n_expert == 8 && cat == QCAT_ATTN_K) {
        t = GGML_TYPE_Q4_K;
    } else if (cat == QCAT_FFN_DOWN) {
        if (qs->i_ffn_down < qs->n_ffn_down/8) {
            t = iq2sm ? GGML_TYPE_IQ3_S : GGML_TYPE_Q2_K;
        }
        ++qs->i_ffn_down;
    } else if (cat == QCAT_ATTN_OUTPUT) {
        if (qs->n_expert == 8) {
            t = GGML_TYPE_Q5_K;
        } else if (f == LLAMA_FTYPE_MOSTLY_IQ1_S || f == LLAMA_FTYPE_MOSTLY_IQ1_M) {
            t = GGML_TYPE_IQ2_XXS;
        } else if (iq2sm) {
            t = GGML_TYPE_IQ3_S;
        }
    }
    return t;
}

// the mix rules: the type a tensor gets in the chosen file type, before shape fallbacks
static bool quant_pick_mix(struct quant_state * qs, const struct ggml_tensor * tensor, enum quant_category cat,
                           enum ggml_type * type) {
    const enum llama_ftype f = qs->ftype;
    enum ggml_type t = *type;

    if (cat == QCAT_OUTPUT || (qs->has_tied_embeddings && cat == QCAT_TOKEN_EMBD)) {
        // a tied embedding is also the output projection, so it gets the output's type
        t = quant_pick_output(qs, t, tensor);
    } else if (f == LLAMA_FTYPE_MOSTLY_MXFP4_MOE) {
        t = tensor->ne[2] > 1 ? GGML_TYPE_MXFP4 : GGML_TYPE_Q8_0;
    } else if (cat == QCAT_TOKEN_EMBD) {
        if (qs->params->token_embedding_type < GGML_TYPE_COUNT) {
            t = qs->params->token_embedding_type;
        } else if (f == LLAMA_FTYPE_MOSTLY_IQ2_XXS || f == LLAMA_FTYPE_MOSTLY_IQ2_XS ||
                   f == LLAMA_FTYPE_MOSTLY_IQ1_S   || f == LLAMA_FTYPE_MOSTLY_IQ1_M) {
            t = GGML_TYPE_Q2_K;
        } else if (f == LLAMA_FTYPE_MOSTLY_IQ2_S || f == LLAMA_FTYPE_MOSTLY_IQ2_M || f == LLAMA_FTYPE_MOSTLY_IQ3_XXS) {
            t = GGML_TYPE_IQ3_S;
        } else if (f == LLAMA_FTYPE_MOSTLY_TQ1_0 || f == LLAMA_FTYPE_MOSTLY_TQ2_0) {
            t = GGML_TYPE_Q4_K;
        }
    } else if (ftype_is_iq_low(f)) {
        t = quant_pick_iq_low(qs, t, cat);
    } else if (quant_cat_is_attn_v(cat)) {
        t = quant_pick_attn_v(qs, t);
    } else if (cat == QCAT_ATTN_K || cat == QCAT_ATTN_Q) {
        if (cat == QCAT_ATTN_K && qs->n_expert == 8) {
            t = GGML_TYPE_Q8_0;
        } else if (f == LLAMA_FTYPE_MOSTLY_IQ3_XS) {
            t = GGML_TYPE_IQ3_XXS;
        } else if (f == LLAMA_FTYPE_MOSTLY_IQ3_XXS) {
            t = GGML_TYPE_IQ2_S;
        }
    } else if (cat == QCAT_FFN_DOWN) {
        if (!quant_pick_ffn_down(qs, tensor->name, &t)) {
            return false;
        }
    } else if (cat == QCAT_ATTN_OUTPUT) {
        t = quant_pick_attn_output(qs, t);
    } else if (cat == QCAT_ATTN_QKV) {
        if (f == LLAMA_FTYPE_MOSTLY_Q3_K_M || f == LLAMA_FTYPE_MOSTLY_Q3_K_L || f == LLAMA_FTYPE_MOSTLY_IQ3_M) {
            t = GGML_TYPE_Q4_K;
        } else if (f == LLAMA_FTYPE_MOSTLY_Q4_K_M) {
            t = GGML_TYPE_Q5_K;
        } else if (f == LLAMA_FTYPE_MOSTLY_Q5_K_M) {
            t = GGML_TYPE_Q6_K;
        }
    } else if (cat == QCAT_FFN_GATE || cat == QCAT_FFN_UP) {
        int * counter = cat == QCAT_FFN_GATE ? &qs->i_ffn_gate : &qs->i_ffn_up;
        const int n   = cat == QCAT_FFN_GATE ? qs->n_ffn_gate : qs->n_ffn_up;
        int il;
        if (!quant_layer_of(qs, *counter, tensor->name, &il)) {
            return false;
        }
        if (f == LLAMA_FTYPE_MOSTLY_IQ3_XS && il >= n/8 && il < 7*n/8) {
            t = GGML_TYPE_IQ3_XXS;
        }
        ++*counter;
    }
    *type = t;
    return true;
}

// rows whose length is not a multiple of the type's block get the nearest type with 32-element blocks;
// false (logged) when there is none
static bool quant_shape_fallback(struct quant_state * qs, const struct ggml_tensor * t, enum ggml_type * type) {
    const int64_t ncols = t->ne[0];
    const int64_t blck  = ggml_blck_size(*type);
    if (ncols % blck == 0) {
        return true;
    }
    enum ggml_type fb;
    switch (*type) {
        case GGML_TYPE_IQ1_S: case GGML_TYPE_IQ1_M: case GGML_TYPE_IQ2_XXS: case GGML_TYPE_IQ2_XS:
        case GGML_TYPE_IQ2_S: case GGML_TYPE_IQ3_XXS: case GGML_TYPE_IQ3_S: case GGML_TYPE_IQ4_XS:
            fb = GGML_TYPE_IQ4_NL; break;
        case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: case GGML_TYPE_TQ1_0: case GGML_TYPE_TQ2_0:
            fb = GGML_TYPE_Q4_0; break;
        case GGML_TYPE_Q4_K: fb = GGML_TYPE_Q5_0; break;
        case GGML_TYPE_Q5_K: fb = GGML_TYPE_Q5_1; break;
        case GGML_TYPE_Q6_K: fb = GGML_TYPE_Q8_0; break;
        default:
            LLAMA_LOG_ERROR("%s: tensor %s has rows of %" PRId64 " elements, not a multiple of %" PRId64
                            " as %s needs, and %s has no fallback type\n", __func__, t->name, ncols, blck,
                            ggml_type_name(*type), ggml_type_name(*type));
            return false;
    }
    ++qs->n_fallback;
    LLAMA_LOG_WARN("warning: %-36s - ncols %6" PRId64 " not divisible by %3" PRId64 " (required for type %7s) ",
                   t->name, ncols, blck, ggml_type_name(*type));
    if (ncols % ggml_blck_size(fb) != 0) {
        LLAMA_LOG_WARN("(WARNING: must use F16 due to unusual shape) ");
        fb = GGML_TYPE_F16;
    }
    LLAMA_LOG_WARN("-> falling back to %7s\n", ggml_type_name(fb));
    *type = fb;
    return true;
}

static bool quant_pick_type(struct quant_state * qs, enum ggml_type default_type, struct quant_tensor * qt) {
    const struct llama_model_quantize_params * params = qs->params;
    const struct ggml_tensor * tensor = qt->t;

    if (!qt->allow) {
        qt->target = tensor->type;
        return true;
    }
    if (params->token_embedding_type < GGML_TYPE_COUNT && qt->cat == QCAT_TOKEN_EMBD) {
        qt->target = params->token_embedding_type;
        return true;
    }
    if (params->output_tensor_type < GGML_TYPE_COUNT && qt->cat == QCAT_OUTPUT) {
        qt->target = params->output_tensor_type;
        return true;
    }
    enum ggml_type t = default_type;
    if (ggml_is_quantized(default_type)) {
        bool manual = false;
        for (size_t i = 0; i < qs->n_patterns; i++) {
            if (regexec(&qs->patterns[i], tensor->name, 0, NULL, 0) == 0) {
                const enum ggml_type want = params->tt_overrides[i].type;
                if (want != t) {
                    LLAMA_LOG_WARN("%s: %-36s - applying manual override: %s -> %s\n", __func__, tensor->name,
                                   ggml_type_name(t), ggml_type_name(want));
                    t = want;
                }
                manual = true;
                break;
            }
        }
        if (!manual && !params->pure && !quant_pick_mix(qs, tensor, qt->cat, &t)) {
            return false;
        }
        if (!quant_shape_fallback(qs, tensor, &t)) {
            return false;
        }
    }
    qt->target = t;
    return true;
}

static bool quant_requires_imatrix(const char * name, enum ggml_type t, enum llama_ftype ftype) {
    if (name_is_token_embd(name) || name_is_output(name)) {
        return false;
    }
    switch (t) {
        case GGML_TYPE_IQ3_XXS: case GGML_TYPE_IQ2_XXS: case GGML_TYPE_IQ2_XS:
        case GGML_TYPE_IQ2_S:   case GGML_TYPE_IQ1_M:   case GGML_TYPE_IQ1_S:
            return true;
        case GGML_TYPE_Q2_K:
            return ftype == LLAMA_FTYPE_MOSTLY_Q2_K_S;
        default:
            return false;
    }
}

// a u32-like hyperparameter; per-layer arrays give their first element. Missing keys keep *out.
static void quant_get_u32(const struct gguf_context * g, const char * arch, const char * suffix, uint32_t * out) {
    char key[256];
    snprintf(key, sizeof(key), "%s.%s", arch, suffix);
    const int64_t id = gguf_find_key(g, key);
    if (id < 0) {
        return;
    }
    enum gguf_type t = gguf_get_kv_type(g, id);
    const void * data = NULL;
    if (t == GGUF_TYPE_ARRAY) {
        t = gguf_get_arr_type(g, id);
        if (gguf_get_arr_n(g, id) == 0 || t == GGUF_TYPE_STRING || t == GGUF_TYPE_ARRAY) {
            return;
        }
        data = gguf_get_arr_data(g, id);
    } else {
        data = gguf_get_val_data(g, id);
    }
    switch (t) {
        case GGUF_TYPE_UINT8:  *out = *(const uint8_t  *) data; break;
        case GGUF_TYPE_INT8:   *out = (uint32_t) *(const int8_t   *) data; break;
        case GGUF_TYPE_UINT16: *out = *(const uint16_t *) data; break;
        case GGUF_TYPE_INT16:  *out = (uint32_t) *(const int16_t  *) data; break;
        case GGUF_TYPE_UINT32: { uint32_t v; memcpy(&v, data, 4); *out = v; } break;
        case GGUF_TYPE_INT32:  { int32_t v;  memcpy(&v, data, 4); *out = (uint32_t) v; } break;
        case GGUF_TYPE_UINT64: { uint64_t v; memcpy(&v, data, 8); *out = (uint32_t) v; } break;
        case GGUF_TYPE_INT64:  { int64_t v;  memcpy(&v, data, 8); *out = (uint32_t) v; } break;
        default: break;
    }
}

// tensors in llama.cpp's loader order: non-layer tensors first, then by layer number, then by name
static int quant_layer_of_name(const char * name) {
    int il = -1;
    if (sscanf(name, "blk.%d.", &il) != 1) {
        il = -1;
    }
    return il;
}

static int quant_tensor_cmp(const void * a, const void * b) {
    const struct quant_tensor * x = a;
    const struct quant_tensor * y = b;
    const int lx = quant_layer_of_name(x->t->name);
    const int ly = quant_layer_of_name(y->t->name);
    if (lx != ly) {
        return lx < ly ? -1 : 1;
    }
    return strcmp(x->t->name, y->t->name);
}

// the file type recorded in (or guessed from) an input file, for only_copy
static enum llama_ftype quant_input_ftype(const struct gguf_context * g, const struct quant_tensor * ts, size_t n) {
    const int64_t id = gguf_find_key(g, "general.file_type");
    if (id >= 0 && gguf_get_kv_type(g, id) == GGUF_TYPE_UINT32) {
        return (enum llama_ftype) gguf_get_val_u32(g, id);
    }
    size_t counts[GGML_TYPE_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        if ((int) ts[i].t->type >= 0 && ts[i].t->type < GGML_TYPE_COUNT) {
            counts[ts[i].t->type]++;
        }
    }
    int best = GGML_TYPE_F32;
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        if (counts[t] > counts[best]) {
            best = t;
        }
    }
    for (int f = 0; f < 64; f++) {
        if ((int) quant_ftype_default_type((enum llama_ftype) f) == best) {
            return (enum llama_ftype) (f | LLAMA_FTYPE_GUESSED);
        }
    }
    return LLAMA_FTYPE_ALL_F32;
}

//
// threaded quantization of one 2-D slice
//

struct quant_job {
    enum ggml_type  type;
    const float   * src;
    void          * dst;
    int64_t         nrows;
    int64_t         n_per_row;
    int64_t         rows_per_chunk;
    const float   * imatrix;
    atomic_llong    next_row;
    atomic_bool     failed;
};

static void * quant_worker(void * arg) {
    struct quant_job * job = arg;
    const size_t row_size = ggml_row_size(job->type, job->n_per_row);
    for (;;) {
        const int64_t first = atomic_fetch_add(&job->next_row, job->rows_per_chunk);
        if (first >= job->nrows || atomic_load(&job->failed)) {
            break;
        }
        const int64_t nr = job->nrows - first < job->rows_per_chunk ? job->nrows - first : job->rows_per_chunk;
        const size_t n = ggml_quantize_chunk(job->type, job->src, job->dst, first * job->n_per_row, nr,
                                             job->n_per_row, job->imatrix);
        if (n != row_size * (size_t) nr ||
            !ggml_validate_row_data(job->type, (char *) job->dst + (size_t) first * row_size, n)) {
            atomic_store(&job->failed, true);
            break;
        }
    }
    return NULL;
}

static bool quant_slice(enum ggml_type type, const float * src, void * dst, int64_t nrows, int64_t n_per_row,
                        const float * imatrix, int nthread) {
    // chunks of at least 16K elements keep the per-chunk overhead small
    const int64_t min_chunk = 32 * 512;
    const int64_t rows_per_chunk = n_per_row >= min_chunk ? 1 : (min_chunk + n_per_row - 1) / n_per_row;
    const int64_t nchunk = (nrows + rows_per_chunk - 1) / rows_per_chunk;
    int nt = nthread;
    if (nt > nchunk) {
        nt = (int) nchunk;
    }
    if (nt < 1) {
        nt = 1;
    }
    struct quant_job job;
    job.type = type; job.src = src; job.dst = dst; job.nrows = nrows; job.n_per_row = n_per_row;
    job.rows_per_chunk = rows_per_chunk; job.imatrix = imatrix;
    atomic_init(&job.next_row, 0);
    atomic_init(&job.failed, false);

    pthread_t * th = nt > 1 ? calloc((size_t) nt - 1, sizeof(pthread_t)) : NULL;
    int started = 0;
    for (int i = 0; th && i < nt - 1; i++) {
        if (pthread_create(&th[i], NULL, quant_worker, &job) != 0) {
            break;  // the calling thread still finishes every chunk
        }
        started++;
    }
    quant_worker(&job);
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
    }
    free(th);
    return !atomic_load(&job.failed);
}

// float rows of a tensor of any readable type into buf
static bool quant_to_f32(const struct ggml_tensor * t, const void * data, float * buf, int64_t n) {
    switch (t->type) {
        case GGML_TYPE_F16:  ggml_fp16_to_fp32_row((const ggml_fp16_t *) data, buf, n); return true;
        case GGML_TYPE_BF16: ggml_bf16_to_fp32_row((const ggml_bf16_t *) data, buf, n); return true;
        default: break;
    }
    const struct ggml_type_traits * tr = ggml_get_type_traits(t->type);
    if (!ggml_is_quantized(t->type) || !tr || !tr->to_float) {
        LLAMA_LOG_ERROR("%s: cannot convert tensor %s of type %s to f32\n", __func__, t->name, ggml_type_name(t->type));
        return false;
    }
    tr->to_float(data, buf, n);
    return true;
}

// *out: the tensor's importance vectors (one per ne[2] x ne[3] slice), or NULL if the imatrix has none.
// As in llama.cpp a wrong-sized entry is fatal (most of the model would silently go without it), except for
// token_embd.weight, which is then quantized without one.
static bool quant_find_imatrix(const struct llama_model_quantize_params * p, const struct ggml_tensor * t,
                               const float ** out) {
    *out = NULL;
    if (!p->imatrix) {
        return true;
    }
    for (const struct llama_model_imatrix_data * d = p->imatrix; d->name != NULL; d++) {
        if (strcmp(d->name, t->name) == 0) {
            const int64_t want = t->ne[0] * t->ne[2] * t->ne[3];
            if (d->size != (size_t) want) {
                LLAMA_LOG_INFO("\n");
                if (name_is_token_embd(t->name)) {
                    LLAMA_LOG_WARN("%s: imatrix size %zu is different from tensor size %" PRId64 " for %s; not used\n",
                                   __func__, d->size, want, t->name);
                    return true;
                }
                LLAMA_LOG_ERROR("%s: imatrix size %zu is different from tensor size %" PRId64 " for %s\n", __func__,
                                d->size, want, t->name);
                return false;
            }
            *out = d->data;
            return true;
        }
    }
    return true;
}

static void quant_apply_kv_overrides(struct gguf_context * out, const struct llama_model_kv_override * o) {
    for (; o && o->key[0] != 0; ++o) {
        switch (o->tag) {
            case LLAMA_KV_OVERRIDE_TYPE_FLOAT: gguf_set_val_f32 (out, o->key, (float) o->val_f64); break;
            // llama.cpp stores integer overrides as u32, so readers expecting u32 keys accept them
            case LLAMA_KV_OVERRIDE_TYPE_INT:   gguf_set_val_u32 (out, o->key, (uint32_t) llabs(o->val_i64)); break;
            case LLAMA_KV_OVERRIDE_TYPE_BOOL:  gguf_set_val_bool(out, o->key, o->val_bool); break;
            case LLAMA_KV_OVERRIDE_TYPE_STR:   gguf_set_val_str (out, o->key, o->val_str); break;
            default: LLAMA_LOG_WARN("%s: unknown KV override type for key %s\n", __func__, o->key); break;
        }
    }
}

static void quant_format_shape(const struct ggml_tensor * t, char * buf, size_t size) {
    size_t len = (size_t) snprintf(buf, size, "%5" PRId64, t->ne[0]);
    for (int i = 1; i < GGML_MAX_DIMS && len < size; i++) {
        len += (size_t) snprintf(buf + len, size - len, ", %5" PRId64, t->ne[i]);
    }
}

static bool write_all(FILE * f, const void * data, size_t n) {
    return n == 0 || fwrite(data, 1, n, f) == n;
}

static bool write_zeros(FILE * f, size_t n) {
    static const char zeros[64] = {0};
    while (n > 0) {
        const size_t k = n < sizeof(zeros) ? n : sizeof(zeros);
        if (fwrite(zeros, 1, k, f) != k) {
            return false;
        }
        n -= k;
    }
    return true;
}

// one input file: the model, or one of its splits
struct quant_input {
    struct gguf_context  * g;
    struct ggml_context  * meta;
    int                    fd;
    const uint8_t        * map;
    size_t                 map_size;
};

struct quant_run {
    struct gguf_context  * in;   // the first input's metadata: all the model's keys
    struct quant_input   * inp;  // [n_inp]
    int                    n_inp;
    struct gguf_context  * out;
    struct quant_tensor  * ts;
    size_t                 n;
    FILE                 * fout;
    char                 * tmp_name;
    float                * f32_buf;
    size_t                 f32_cap;
    uint8_t              * work;
    size_t                 work_cap;
    struct quant_state     qs;
};

static void quant_run_free(struct quant_run * r) {
    if (r->fout) {
        fclose(r->fout);
    }
    if (r->tmp_name) {
        unlink(r->tmp_name);
        free(r->tmp_name);
    }
    for (int i = 0; i < r->n_inp; i++) {
        struct quant_input * f = &r->inp[i];
        if (f->map && f->map != MAP_FAILED) {
            munmap((void *) f->map, f->map_size);
        }
        if (f->fd >= 0) {
            close(f->fd);
        }
        if (f->g) gguf_free(f->g);
        if (f->meta) ggml_free(f->meta);
    }
    free(r->inp);
    for (size_t i = 0; i < r->qs.n_patterns; i++) {
        regfree(&r->qs.patterns[i]);
    }
    free(r->qs.patterns);
    free(r->ts);
    free(r->f32_buf);
    free(r->work);
    if (r->out) gguf_free(r->out);
}

static bool grow(void ** p, size_t * cap, size_t need) {
    if (*cap >= need) {
        return true;
    }
    void * q = realloc(*p, need);
    if (!q) {
        return false;
    }
    *p = q;
    *cap = need;
    return true;
}

// one tensor: convert/quantize into r->work (or point at the input bytes) and append it to the output
static bool quant_process_tensor(struct quant_run * r, size_t i, int nthread, size_t * size_org, size_t * size_new) {
    const struct llama_model_quantize_params * params = r->qs.params;
    struct quant_tensor * qt = &r->ts[i];
    const struct ggml_tensor * t = qt->t;
    const size_t nbytes = ggml_nbytes(t);
    const struct quant_input * f = &r->inp[qt->file];
    const size_t offs = gguf_get_data_offset(f->g) + gguf_get_tensor_offset(f->g, qt->in_id);
    if (offs > f->map_size || nbytes > f->map_size - offs) {
        LLAMA_LOG_ERROR("%s: tensor %s data (offset %zu, %zu bytes) is beyond the end of the file\n", __func__,
                        t->name, offs, nbytes);
        return false;
    }
    const uint8_t * src = f->map + offs;

    char shape[128];
    quant_format_shape(t, shape, sizeof(shape));
    LLAMA_LOG_INFO("[%4zu/%4zu] %-36s - [%s], type = %6s, ", i + 1, r->n, t->name, shape, ggml_type_name(t->type));

    const enum ggml_type new_type = qt->target;
    const void * new_data = src;
    size_t new_size = nbytes;

    if (new_type == t->type) {
        LLAMA_LOG_INFO("size = %8.3f MiB\n", nbytes/1024.0/1024.0);
    } else {
        const int64_t ne = ggml_nelements(t);
        const float * imatrix = NULL;
        if (!quant_find_imatrix(params, t, &imatrix)) {
            return false;
        }
        if (!imatrix && quant_requires_imatrix(t->name, new_type, r->qs.ftype)) {
            LLAMA_LOG_INFO("\n");
            LLAMA_LOG_ERROR("%s: missing importance matrix for tensor %s (type %s)\n", __func__, t->name,
                            ggml_type_name(new_type));
            return false;
        }
        const float * f32 = NULL;
        if (t->type == GGML_TYPE_F32) {
            f32 = (const float *) src;
        } else if (ggml_is_quantized(t->type) && !params->allow_requantize) {
            LLAMA_LOG_INFO("\n");
            LLAMA_LOG_ERROR("%s: requantizing from type %s is disabled (tensor %s); use --allow-requantize\n",
                            __func__, ggml_type_name(t->type), t->name);
            return false;
        } else {
            if (!grow((void **) &r->f32_buf, &r->f32_cap, (size_t) ne * sizeof(float))) {
                LLAMA_LOG_ERROR("%s: out of memory converting %s\n", __func__, t->name);
                return false;
            }
            if (!quant_to_f32(t, src, r->f32_buf, ne)) {
                return false;
            }
            f32 = r->f32_buf;
        }
        LLAMA_LOG_INFO("converting to %s .. ", ggml_type_name(new_type));

        const int64_t n_per_row = t->ne[0];
        const int64_t nrows     = t->ne[1];
        const size_t  row_size  = ggml_row_size(new_type, n_per_row);
        const size_t  out_size  = row_size * (size_t) nrows * (size_t) (t->ne[2] * t->ne[3]);
        if (!grow((void **) &r->work, &r->work_cap, out_size)) {
            LLAMA_LOG_ERROR("%s: out of memory quantizing %s\n", __func__, t->name);
            return false;
        }
        // each expert (ne[2] slice) has its own importance vector
        for (int64_t e = 0; e < t->ne[2] * t->ne[3]; e++) {
            const float * s = f32 + e * nrows * n_per_row;
            void * d = r->work + row_size * (size_t) (e * nrows);
            const float * im = imatrix ? imatrix + e * n_per_row : NULL;
            if (!quant_slice(new_type, s, d, nrows, n_per_row, im, nthread)) {
                LLAMA_LOG_INFO("\n");
                LLAMA_LOG_ERROR("%s: quantizing tensor %s to %s failed\n", __func__, t->name, ggml_type_name(new_type));
                return false;
            }
        }
        new_data = r->work;
        new_size = out_size;
        LLAMA_LOG_INFO("size = %8.2f MiB -> %8.2f MiB\n", nbytes/1024.0/1024.0, new_size/1024.0/1024.0);
    }
    *size_org += nbytes;
    *size_new += new_size;

    const int64_t oid = gguf_find_tensor(r->out, t->name);
    if (oid < 0 || gguf_get_tensor_size(r->out, oid) != new_size) {
        LLAMA_LOG_ERROR("%s: internal size mismatch for tensor %s\n", __func__, t->name);
        return false;
    }
    const long pos = ftell(r->fout);
    if (pos < 0 || (size_t) pos != gguf_get_meta_size(r->out) + gguf_get_tensor_offset(r->out, oid)) {
        LLAMA_LOG_ERROR("%s: internal offset mismatch for tensor %s\n", __func__, t->name);
        return false;
    }
    const size_t align = gguf_get_alignment(r->out);
    const size_t padded = (new_size + align - 1) / align * align;
    if (!write_all(r->fout, new_data, new_size) || !write_zeros(r->fout, padded - new_size)) {
        LLAMA_LOG_ERROR("%s: writing tensor %s to %s failed: %s\n", __func__, t->name, r->tmp_name, strerror(errno));
        return false;
    }
    // the input is read once: drop its pages so that a big model does not stay resident (whole pages only)
    const size_t page = (size_t) sysconf(_SC_PAGESIZE);
    const size_t lo = (offs + page - 1) / page * page;
    const size_t hi = (offs + nbytes) / page * page;
    if (hi > lo) {
        madvise((void *) (f->map + lo), hi - lo, MADV_DONTNEED);
    }
    return true;
}

static bool quant_init_state(struct quant_run * r, const struct llama_model_quantize_params * params) {
    struct quant_state * qs = &r->qs;
    qs->params = params;
    qs->ftype  = params->ftype;
    qs->has_imatrix = params->imatrix != NULL;
    qs->has_tied_embeddings = true;

    const int64_t aid = gguf_find_key(r->in, "general.architecture");
    if (aid < 0 || gguf_get_kv_type(r->in, aid) != GGUF_TYPE_STRING) {
        LLAMA_LOG_ERROR("%s: key general.architecture is missing or not a string\n", __func__);
        return false;
    }
    snprintf(qs->arch, sizeof(qs->arch), "%s", gguf_get_val_str(r->in, aid));
    quant_get_u32(r->in, qs->arch, "block_count", &qs->n_layer);
    quant_get_u32(r->in, qs->arch, "attention.head_count", &qs->n_head);
    qs->n_head_kv = qs->n_head;
    quant_get_u32(r->in, qs->arch, "attention.head_count_kv", &qs->n_head_kv);
    quant_get_u32(r->in, qs->arch, "expert_count", &qs->n_expert);
    qs->is_falcon = strcmp(qs->arch, "falcon") == 0;
    // llama.cpp's loader calls these 70B (grouped-query attention over 80 layers)
    qs->is_70b = (strcmp(qs->arch, "llama") == 0 && qs->n_layer == 80 && qs->n_head != qs->n_head_kv) ||
                 (strcmp(qs->arch, "qwen2") == 0 && qs->n_layer == 80);

    if (params->tt_overrides) {
        size_t n = 0;
        while (params->tt_overrides[n].pattern != NULL) {
            n++;
        }
        qs->patterns = n ? calloc(n, sizeof(regex_t)) : NULL;
        for (size_t i = 0; i < n; i++) {
            if (regcomp(&qs->patterns[i], params->tt_overrides[i].pattern, REG_EXTENDED | REG_NOSUB) != 0) {
                LLAMA_LOG_ERROR("%s: invalid tensor type pattern '%s'\n", __func__, params->tt_overrides[i].pattern);
                return false;
            }
            qs->n_patterns++;
            if ((int) params->tt_overrides[i].type < 0 || params->tt_overrides[i].type >= GGML_TYPE_COUNT) {
                LLAMA_LOG_ERROR("%s: invalid type for tensor type pattern '%s'\n", __func__, params->tt_overrides[i].pattern);
                return false;
            }
        }
    }
    return true;
}

// opens and maps input file r->n_inp (a whole model or one split)
static bool quant_open_file(struct quant_run * r, const char * fname) {
    struct quant_input * f = &r->inp[r->n_inp++];
    f->fd = -1;
    struct gguf_init_params ip = { .no_alloc = true, .ctx = &f->meta };
    f->g = gguf_init_from_file(fname, ip);
    if (!f->g) {
        LLAMA_LOG_ERROR("%s: failed to read GGUF file %s\n", __func__, fname);
        return false;
    }
    f->fd = open(fname, O_RDONLY);
    struct stat st;
    if (f->fd < 0 || fstat(f->fd, &st) != 0) {
        LLAMA_LOG_ERROR("%s: cannot open %s: %s\n", __func__, fname, strerror(errno));
        return false;
    }
    f->map_size = (size_t) st.st_size;
    if (f->map_size > 0) {
        f->map = mmap(NULL, f->map_size, PROT_READ, MAP_PRIVATE, f->fd, 0);
        if (f->map == MAP_FAILED) {
            f->map = NULL;
            LLAMA_LOG_ERROR("%s: cannot mmap %s: %s\n", __func__, fname, strerror(errno));
            return false;
        }
    }
    return true;
}

static int64_t quant_int_key(const struct gguf_context * g, const char * key) {
    const int64_t kid = gguf_find_key(g, key);
    if (kid < 0) {
        return -1;
    }
    // any integer type, as the model loader reads split keys (a value that does not fit: -1)
    switch (gguf_get_kv_type(g, kid)) {
        case GGUF_TYPE_UINT8:  return gguf_get_val_u8(g, kid);
        case GGUF_TYPE_INT8:   return gguf_get_val_i8(g, kid);
        case GGUF_TYPE_UINT16: return gguf_get_val_u16(g, kid);
        case GGUF_TYPE_INT16:  return gguf_get_val_i16(g, kid);
        case GGUF_TYPE_UINT32: return gguf_get_val_u32(g, kid);
        case GGUF_TYPE_INT32:  return gguf_get_val_i32(g, kid);
        case GGUF_TYPE_UINT64: return gguf_get_val_u64(g, kid) > (uint64_t) INT64_MAX ? -1 : (int64_t) gguf_get_val_u64(g, kid);
        case GGUF_TYPE_INT64:  return gguf_get_val_i64(g, kid);
        default:               return -1;
    }
}

// the input: one file, or the first of a split model (llama-gguf-split's names), whose other files are found
// next to it and checked as the model loader does; the output is one file either way
static bool quant_open_input(struct quant_run * r, const char * fname) {
    r->inp = calloc(1, sizeof(*r->inp));
    if (!r->inp || !quant_open_file(r, fname)) {
        return false;
    }
    r->in = r->inp[0].g;
    const int64_t n_split = quant_int_key(r->in, "split.count");
    if (n_split > 1) {
        char prefix[4096];
        if (quant_int_key(r->in, "split.no") > 0) {
            LLAMA_LOG_ERROR("%s: %s is split %" PRId64 " of a split model: give the first split\n", __func__, fname,
                            quant_int_key(r->in, "split.no") + 1);
            return false;
        }
        if (n_split > UINT16_MAX || llama_split_prefix(prefix, sizeof(prefix), fname, 0, (int) n_split) == 0) {
            LLAMA_LOG_ERROR("%s: invalid split file name: %s\n", __func__, fname);
            return false;
        }
        struct quant_input * inp = realloc(r->inp, (size_t) n_split * sizeof(*inp));
        if (!inp) {
            return false;
        }
        r->inp = inp;
        memset(inp + 1, 0, (size_t) (n_split - 1) * sizeof(*inp));
        for (int64_t i = 1; i < n_split; i++) {
            char path[4096 + 32];
            llama_split_path(path, sizeof(path), prefix, (int) i, (int) n_split);
            if (!quant_open_file(r, path)) {
                return false;
            }
            if (quant_int_key(r->inp[i].g, "split.no") != i) {
                LLAMA_LOG_ERROR("%s: invalid split file idx in %s, expected %" PRId64 "\n", __func__, path, i);
                return false;
            }
        }
    }
    size_t n = 0;
    for (int fi = 0; fi < r->n_inp; fi++) {
        n += (size_t) gguf_get_n_tensors(r->inp[fi].g);
    }
    r->ts = calloc(n ? n : 1, sizeof(*r->ts));
    if (!r->ts) {
        return false;
    }
    for (int fi = 0; fi < r->n_inp; fi++) {
        const struct quant_input * f = &r->inp[fi];
        for (int64_t i = 0; i < gguf_get_n_tensors(f->g); i++) {
            const char * name = gguf_get_tensor_name(f->g, i);
            struct ggml_tensor * t = ggml_get_tensor(f->meta, name);
            if (!t) {
                LLAMA_LOG_ERROR("%s: tensor %s of %s has no shape information\n", __func__, name, fname);
                return false;
            }
            for (size_t j = 0; fi > 0 && j < r->n; j++) {
                if (strcmp(r->ts[j].t->name, name) == 0) {
                    LLAMA_LOG_ERROR("%s: invalid model: tensor '%s' is duplicated\n", __func__, name);
                    return false;
                }
            }
            r->ts[r->n].t = t;
            r->ts[r->n].in_id = i;
            r->ts[r->n].file = fi;
            r->n++;
        }
    }
    const int64_t n_expected = quant_int_key(r->in, "split.tensors.count");
    if (r->n_inp > 1 && n_expected >= 0 && (size_t) n_expected != r->n) {
        LLAMA_LOG_ERROR("%s: corrupted model: %" PRId64 " tensors expected but %zu found\n", __func__, n_expected, r->n);
        return false;
    }
    qsort(r->ts, r->n, sizeof(*r->ts), quant_tensor_cmp);
    return true;
}

static bool llama_model_quantize_impl(const char * fname_inp, const char * fname_out, const struct llama_model_quantize_params * params) {
    if (!fname_inp || !fname_out || !params) {
        LLAMA_LOG_ERROR("%s: NULL file name or params\n", __func__);
        return false;
    }
    if (params->keep_split) {
        LLAMA_LOG_ERROR("%s: keep_split is not supported (a split input is written as one file)\n", __func__);
        return false;
    }
    if (params->prune_layers && params->prune_layers[0] != -1) {
        LLAMA_LOG_ERROR("%s: prune_layers is not supported\n", __func__);
        return false;
    }
    if ((params->output_tensor_type < 0 || params->output_tensor_type > GGML_TYPE_COUNT) ||
        (params->token_embedding_type < 0 || params->token_embedding_type > GGML_TYPE_COUNT)) {
        LLAMA_LOG_ERROR("%s: invalid output or token embedding tensor type\n", __func__);
        return false;
    }

    struct quant_run r;
    memset(&r, 0, sizeof(r));
    bool ok = false;

    int nthread = params->nthread;
    if (nthread <= 0) {
        const long nc = sysconf(_SC_NPROCESSORS_ONLN);
        nthread = nc > 0 ? (int) nc : 1;
    }

    if (!quant_open_input(&r, fname_inp) || !quant_init_state(&r, params)) {
        goto done;
    }
    if (params->only_copy) {
        r.qs.ftype = quant_input_ftype(r.in, r.ts, r.n);
    }
    const enum llama_ftype ftype = r.qs.ftype;
    const enum ggml_type default_type = params->only_copy ? GGML_TYPE_F32 : quant_ftype_default_type(ftype);
    if (default_type == GGML_TYPE_COUNT) {
        LLAMA_LOG_ERROR("%s: invalid output file type %d\n", __func__, (int) ftype);
        goto done;
    }

    // categories and counters over the whole file first: the mixes depend on totals
    for (size_t i = 0; i < r.n; i++) {
        r.ts[i].cat = quant_category_of(r.ts[i].t->name);
        if (quant_cat_is_attn_v(r.ts[i].cat)) {
            r.qs.n_attention_wv++;
        }
        if (r.ts[i].cat == QCAT_OUTPUT) {
            r.qs.has_tied_embeddings = false;
        }
    }
    r.qs.n_ffn_down = r.qs.n_ffn_gate = r.qs.n_ffn_up = (int) r.qs.n_layer;

    r.out = gguf_init_empty();
    gguf_set_kv(r.out, r.in);
    gguf_set_val_u32(r.out, "general.quantization_version", GGML_QNT_VERSION);
    gguf_set_val_u32(r.out, "general.file_type", (uint32_t) ftype);
    gguf_remove_key(r.out, "split.no");
    gguf_remove_key(r.out, "split.count");
    gguf_remove_key(r.out, "split.tensors.count");
    quant_apply_kv_overrides(r.out, params->kv_overrides);

    for (size_t i = 0; i < r.n; i++) {
        struct quant_tensor * qt = &r.ts[i];
        qt->allow = quant_tensor_allowed(params, qt->t);
        if (!quant_pick_type(&r.qs, default_type, qt)) {
            goto done;
        }
        if ((int) qt->target < 0 || qt->target >= GGML_TYPE_COUNT || ggml_blck_size(qt->target) <= 0) {
            LLAMA_LOG_ERROR("%s: invalid target type for tensor %s\n", __func__, qt->t->name);
            goto done;
        }
        if (qt->target != qt->t->type) {
            if (!quant_type_can_write(qt->target)) {
                LLAMA_LOG_ERROR("%s: tensor %s: quantizing to %s is not supported\n", __func__, qt->t->name,
                                ggml_type_name(qt->target));
                goto done;
            }
            if (qt->t->ne[0] % ggml_blck_size(qt->target) != 0) {
                LLAMA_LOG_ERROR("%s: tensor %s: rows of %" PRId64 " elements cannot be stored as %s (blocks of %" PRId64 ")\n",
                                __func__, qt->t->name, qt->t->ne[0], ggml_type_name(qt->target), ggml_blck_size(qt->target));
                goto done;
            }
            if (ggml_is_quantized(qt->t->type) && !params->allow_requantize && !params->dry_run) {
                LLAMA_LOG_ERROR("%s: requantizing from type %s is disabled (tensor %s); use --allow-requantize\n",
                                __func__, ggml_type_name(qt->t->type), qt->t->name);
                goto done;
            }
            if (!params->imatrix && quant_requires_imatrix(qt->t->name, qt->target, ftype) && !params->dry_run) {
                LLAMA_LOG_ERROR("%s: this quantization requires an importance matrix (tensor %s, type %s)\n",
                                __func__, qt->t->name, ggml_type_name(qt->target));
                goto done;
            }
        }
        gguf_add_tensor(r.out, qt->t);
        gguf_set_tensor_type(r.out, qt->t->name, qt->target);
    }

    size_t size_org = 0, size_new = 0;
    int64_t n_elements = 0;
    for (size_t i = 0; i < r.n; i++) {
        n_elements += ggml_nelements(r.ts[i].t);
    }

    if (params->dry_run) {
        for (size_t i = 0; i < r.n; i++) {
            const struct ggml_tensor * t = r.ts[i].t;
            char shape[128];
            quant_format_shape(t, shape, sizeof(shape));
            const size_t org = ggml_nbytes(t);
            LLAMA_LOG_INFO("[%4zu/%4zu] %-36s - [%s], type = %6s, ", i + 1, r.n, t->name, shape, ggml_type_name(t->type));
            size_t nsz = org;
            if (r.ts[i].target != t->type) {
                nsz = (size_t) ggml_nrows(t) * ggml_row_size(r.ts[i].target, t->ne[0]);
                LLAMA_LOG_INFO("size = %8.2f MiB -> %8.2f MiB (%s)\n", org/1024.0/1024.0, nsz/1024.0/1024.0,
                               ggml_type_name(r.ts[i].target));
            } else {
                LLAMA_LOG_INFO("size = %8.3f MiB\n", org/1024.0/1024.0);
            }
            size_org += org;
            size_new += nsz;
        }
    } else {
        const size_t len = strlen(fname_out);
        r.tmp_name = malloc(len + 5);
        if (!r.tmp_name) {
            goto done;
        }
        memcpy(r.tmp_name, fname_out, len);
        memcpy(r.tmp_name + len, ".tmp", 5);
        r.fout = fopen(r.tmp_name, "wb");
        if (!r.fout) {
            LLAMA_LOG_ERROR("%s: cannot create %s: %s\n", __func__, r.tmp_name, strerror(errno));
            free(r.tmp_name);
            r.tmp_name = NULL;  // nothing of ours to remove
            goto done;
        }
        // every type is known up front, so the metadata is final before any data is written
        const size_t meta_size = gguf_get_meta_size(r.out);
        void * meta = malloc(meta_size);
        if (!meta) {
            goto done;
        }
        gguf_get_meta_data(r.out, meta);
        const bool meta_ok = write_all(r.fout, meta, meta_size);
        free(meta);
        if (!meta_ok) {
            LLAMA_LOG_ERROR("%s: writing %s failed: %s\n", __func__, r.tmp_name, strerror(errno));
            goto done;
        }
        for (size_t i = 0; i < r.n; i++) {
            if (!quant_process_tensor(&r, i, nthread, &size_org, &size_new)) {
                goto done;
            }
        }
        const int rc = fflush(r.fout) == 0 && fsync(fileno(r.fout)) == 0;
        const int rc2 = fclose(r.fout);
        r.fout = NULL;
        if (!rc || rc2 != 0) {
            LLAMA_LOG_ERROR("%s: writing %s failed: %s\n", __func__, r.tmp_name, strerror(errno));
            goto done;
        }
        if (rename(r.tmp_name, fname_out) != 0) {
            LLAMA_LOG_ERROR("%s: cannot rename %s to %s: %s\n", __func__, r.tmp_name, fname_out, strerror(errno));
            goto done;
        }
        free(r.tmp_name);
        r.tmp_name = NULL;
    }

    LLAMA_LOG_INFO("%s: model size  = %8.2f MiB (%.2f BPW)\n", __func__, size_org/1024.0/1024.0,
                   n_elements ? size_org*8.0/(double) n_elements : 0.0);
    LLAMA_LOG_INFO("%s: quant size  = %8.2f MiB (%.2f BPW)\n", __func__, size_new/1024.0/1024.0,
                   n_elements ? size_new*8.0/(double) n_elements : 0.0);
    if (r.qs.n_fallback > 0) {
        LLAMA_LOG_WARN("%s: WARNING: %d of %zu tensor(s) required fallback quantization\n", __func__,
                       r.qs.n_fallback, r.n);
    }
    ok = true;

done:
    quant_run_free(&r);
    return ok;
}

uint32_t llama_model_quantize(const char * fname_inp, const char * fname_out,
                              const struct llama_model_quantize_params * params) {
    if (!llama_model_quantize_impl(fname_inp, fname_out, params)) {
        LLAMA_LOG_ERROR("%s: failed to quantize %s\n", __func__, fname_inp ? fname_inp : "(null)");
        return 1;
    }
    return 0;
}
