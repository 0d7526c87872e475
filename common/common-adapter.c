// LoRA adapters and control vectors for the programs: the control-vector file loader (llama.cpp's
// common_control_vector_load) and the step of common_init_from_params that loads and applies both.
#include "common.h"

#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// grows *data (zero-filled) to at least len floats; false on out of memory
static bool grow(float ** data, size_t * cur, size_t len) {
    if (len <= *cur) {
        return true;
    }
    float * d = realloc(*data, len * sizeof(float));
    if (!d) {
        return false;
    }
    memset(d + *cur, 0, (len - *cur) * sizeof(float));
    *data = d;
    *cur  = len;
    return true;
}

// "direction.<N>" with N >= 1; -1 otherwise
static int direction_layer(const char * name) {
    static const char prefix[] = "direction.";
    if (strncmp(name, prefix, sizeof(prefix) - 1) != 0) {
        return -1;
    }
    const char * p = name + sizeof(prefix) - 1;
    char * end = NULL;
    const long v = strtol(p, &end, 10);
    if (end == p || *end != '\0' || v < 0 || v > 1000000) {
        return -1;
    }
    return (int) v;
}

// one file's directions, scaled by strength, added into *out (n_embd fixed by the first tensor)
static bool load_one(const struct common_control_vector_load_info * info, struct common_control_vector_data * out) {
    struct ggml_context * ctx = NULL;
    struct gguf_init_params gp = { .no_alloc = false, .ctx = &ctx };
    struct gguf_context * g = gguf_init_from_file(info->fname, gp);
    if (!g) {
        LOG_ERR("%s: failed to load control vector file from %s\n", __func__, info->fname);
        return false;
    }
    bool ok = true;
    const int64_t n_tensors = gguf_get_n_tensors(g);
    if (n_tensors == 0) {
        LOG_WRN("%s: no direction tensors found in %s\n", __func__, info->fname);
    }
    for (int64_t i = 0; ok && i < n_tensors; i++) {
        const char * name = gguf_get_tensor_name(g, i);
        const int layer = direction_layer(name);
        if (layer < 0) {
            LOG_ERR("%s: invalid/unparsable direction tensor layer index in %s ('%s')\n", __func__, info->fname, name);
            ok = false;
            break;
        }
        if (layer == 0) {
            LOG_ERR("%s: invalid (zero) direction tensor layer index found in %s\n", __func__, info->fname);
            ok = false;
            break;
        }
        const struct ggml_tensor * t = ggml_get_tensor(ctx, name);
        if (!t || t->type != GGML_TYPE_F32) {
            LOG_ERR("%s: invalid (non-F32) direction tensor type in %s\n", __func__, info->fname);
            ok = false;
            break;
        }
        if (ggml_n_dims(t) != 1) {
            LOG_ERR("%s: invalid (non-1D) direction tensor shape in %s\n", __func__, info->fname);
            ok = false;
            break;
        }
        if (out->n_embd == -1) {
            out->n_embd = (int32_t) ggml_nelements(t);
        } else if (ggml_nelements(t) != out->n_embd) {
            LOG_ERR("%s: direction tensor in %s does not match previous dimensions\n", __func__, info->fname);
            ok = false;
            break;
        }
        const size_t n_embd = (size_t) out->n_embd;
        if (!grow(&out->data, &out->len, n_embd * (size_t) layer)) {
            LOG_ERR("%s: out of memory\n", __func__);
            ok = false;
            break;
        }
        const float * src = (const float *) t->data;
        float * dst = out->data + n_embd * (size_t) (layer - 1);
        for (size_t j = 0; j < n_embd; j++) {
            dst[j] += src[j] * info->strength;
        }
    }
    gguf_free(g);
    ggml_free(ctx);
    return ok;
}

struct common_control_vector_data common_control_vector_load(const struct common_control_vector_load_info * infos, int32_t n) {
    struct common_control_vector_data res = { -1, NULL, 0 };
    for (int32_t i = 0; i < n; i++) {
        // every file adds into the same buffer; load_one checks it has the n_embd of the files before it
        if (!load_one(&infos[i], &res)) {
            free(res.data);
            res.data   = NULL;
            res.len    = 0;
            res.n_embd = -1;
            return res;
        }
    }
    if (res.n_embd == -1) {
        LOG_ERR("%s: no valid control vector files passed\n", __func__);
        free(res.data);
        res.data = NULL;
        res.len  = 0;
    }
    return res;
}

bool common_adapters_apply(const struct common_params * params, struct llama_model * model, struct llama_context * ctx) {
    if (params->n_control_vectors > 0) {
        const int32_t il_start = params->control_vector_layer_start > 0 ? params->control_vector_layer_start : 1;
        const int32_t il_end   = params->control_vector_layer_end   > 0 ? params->control_vector_layer_end
                                                                         : llama_model_n_layer(model);
        struct common_control_vector_data cvec = common_control_vector_load(params->control_vectors, params->n_control_vectors);
        if (cvec.n_embd == -1) {
            return false;
        }
        const int32_t err = llama_set_adapter_cvec(ctx, cvec.data, cvec.len, cvec.n_embd, il_start, il_end);
        free(cvec.data);
        if (err != 0) {
            LOG_ERR("%s: failed to apply the control vectors\n", __func__);
            return false;
        }
    }
    if (params->n_lora_adapters == 0) {
        return true;
    }
    const size_t n = (size_t) params->n_lora_adapters;
    struct llama_adapter_lora ** loras = calloc(n, sizeof(*loras));
    float * scales = calloc(n, sizeof(*scales));
    bool ok = loras && scales;
    for (size_t i = 0; ok && i < n; i++) {
        loras[i]  = llama_adapter_lora_init(model, params->lora_adapters[i].path);
        scales[i] = params->lora_adapters[i].scale;
        if (!loras[i]) {
            LOG_ERR("%s: failed to apply lora adapter '%s'\n", __func__, params->lora_adapters[i].path);
            ok = false;
        }
    }
    // adapters stay loaded on the model (freed with it) even when not applied
    if (ok && !params->lora_init_without_apply) {
        ok = llama_set_adapters_lora(ctx, loras, n, scales) == 0;
    }
    free(loras);
    free(scales);
    return ok;
}
