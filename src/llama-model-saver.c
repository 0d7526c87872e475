// llama_model_save_to_file: the loaded model written back as one GGUF file (the metadata as the model saw it,
// kv overrides included, and every weight tensor in its stored type and layout).
#include "llama-model.h"

#include "llama-impl.h"

#include "gguf.h"

#include <inttypes.h>
#include <string.h>

// an integer override keeps the integer type the file used for that key, so readers that insist on it
// (e.g. u32 for the hparams) still accept the saved file
static void set_int_override(struct gguf_context * g, const char * key, int64_t v) {
    const int64_t kid = gguf_find_key(g, key);
    const enum gguf_type t = kid >= 0 ? gguf_get_kv_type(g, kid) : GGUF_TYPE_INT64;
    switch (t) {
        case GGUF_TYPE_UINT8:  gguf_set_val_u8 (g, key, (uint8_t)  v); break;
        case GGUF_TYPE_INT8:   gguf_set_val_i8 (g, key, (int8_t)   v); break;
        case GGUF_TYPE_UINT16: gguf_set_val_u16(g, key, (uint16_t) v); break;
        case GGUF_TYPE_INT16:  gguf_set_val_i16(g, key, (int16_t)  v); break;
        case GGUF_TYPE_UINT32: gguf_set_val_u32(g, key, (uint32_t) v); break;
        case GGUF_TYPE_INT32:  gguf_set_val_i32(g, key, (int32_t)  v); break;
        case GGUF_TYPE_UINT64: gguf_set_val_u64(g, key, (uint64_t) v); break;
        default:               gguf_set_val_i64(g, key, v);            break;
    }
}

bool llama_model_keep_meta(struct llama_model * model, const struct gguf_context * src,
        const struct llama_model_kv_override * overrides) {
    struct gguf_context * g = gguf_init_empty();
    if (!g) {
        LLAMA_LOG_ERROR("llama_model_load: out of memory copying the metadata\n");
        return false;
    }
    gguf_set_kv(g, src);
    // the model is saved as one file: the split keys of a split model's first file would make it unloadable
    gguf_remove_key(g, "split.no");
    gguf_remove_key(g, "split.count");
    gguf_remove_key(g, "split.tensors.count");
    for (const struct llama_model_kv_override * o = overrides; o && o->key[0] != '\0'; o++) {
        switch (o->tag) {
            case LLAMA_KV_OVERRIDE_TYPE_INT:
                set_int_override(g, o->key, o->val_i64);
                break;
            case LLAMA_KV_OVERRIDE_TYPE_FLOAT: {
                const int64_t kid = gguf_find_key(g, o->key);
                if (kid >= 0 && gguf_get_kv_type(g, kid) == GGUF_TYPE_FLOAT64) {
                    gguf_set_val_f64(g, o->key, o->val_f64);
                } else {
                    gguf_set_val_f32(g, o->key, (float) o->val_f64);
                }
                break;
            }
            case LLAMA_KV_OVERRIDE_TYPE_BOOL:
                gguf_set_val_bool(g, o->key, o->val_bool);
                break;
            case LLAMA_KV_OVERRIDE_TYPE_STR: {
                char s[sizeof(o->val_str) + 1];
                memcpy(s, o->val_str, sizeof(o->val_str));
                s[sizeof(o->val_str)] = '\0';
                gguf_set_val_str(g, o->key, s);
                break;
            }
            default:
                break; // the loader already refused unknown tags
        }
    }
    model->gguf_meta = g;
    return true;
}

void llama_model_save_to_file(const struct llama_model * model, const char * path_model) {
    if (!model || !path_model) {
        LLAMA_LOG_ERROR("llama_model_save_to_file: model and path must not be NULL\n");
        return;
    }
    if (!model->gguf_meta || !model->ctx_w || !model->buf_w) {
        LLAMA_LOG_ERROR("llama_model_save_to_file: the model has no weights to save (vocab_only or no_alloc)\n");
        return;
    }
    struct gguf_context * g = gguf_init_empty();
    if (!g) {
        LLAMA_LOG_ERROR("llama_model_save_to_file: out of memory\n");
        return;
    }
    gguf_set_kv(g, model->gguf_meta);
    // ctx_w holds one header per created tensor; a file tensor used twice (tied output) is written once
    int64_t n = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(model->ctx_w); t; t = ggml_get_next_tensor(model->ctx_w, t)) {
        if (gguf_find_tensor(g, ggml_get_name(t)) >= 0) {
            continue;
        }
        gguf_add_tensor(g, t);
        n++;
    }
    if (gguf_write_to_file(g, path_model, false)) {
        LLAMA_LOG_INFO("llama_model_save_to_file: wrote %" PRId64 " tensors and %" PRId64 " metadata keys to '%s'\n",
                n, gguf_get_n_kv(g), path_model);
    }
    gguf_free(g);
}
