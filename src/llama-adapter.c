// LoRA adapter files: load and validate a GGUF adapter against its base model, metadata getters, aLoRA tokens.
#include "llama-adapter.h"

#include "llama-arch.h"
#include "llama-impl.h"
#include "llama-model.h"

#include "ggml-alloc.h"
#include "ggml-cpu.h"
#include "gguf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LORA_SUFFIX_A ".lora_a"
#define LORA_SUFFIX_B ".lora_b"

static bool ends_with(const char * s, const char * suffix) {
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

// a string-typed key's value, NULL when absent or not a string
static const char * get_str(const struct gguf_context * g, const char * key) {
    const int64_t kid = gguf_find_key(g, key);
    return kid >= 0 && gguf_get_kv_type(g, kid) == GGUF_TYPE_STRING ? gguf_get_val_str(g, kid) : NULL;
}

static void adapter_destroy(struct llama_adapter_lora * a) {
    if (!a) {
        return;
    }
    if (a->buf) {
        ggml_backend_buffer_free(a->buf);
    }
    if (a->ctx) {
        ggml_free(a->ctx);
    }
    for (int32_t i = 0; i < a->n_meta; i++) {
        free(a->meta_keys[i]);
        free(a->meta_vals[i]);
    }
    free(a->meta_keys);
    free(a->meta_vals);
    free(a->weights);
    free(a->alora_tokens);
    free(a);
}

static bool load_meta(struct llama_adapter_lora * a, const struct gguf_context * g) {
    const int64_t n_kv = gguf_get_n_kv(g);
    a->meta_keys = calloc((size_t) (n_kv > 0 ? n_kv : 1), sizeof(char *));
    a->meta_vals = calloc((size_t) (n_kv > 0 ? n_kv : 1), sizeof(char *));
    if (!a->meta_keys || !a->meta_vals) {
        return false;
    }
    for (int64_t i = 0; i < n_kv; i++) {
        if (gguf_get_kv_type(g, i) == GGUF_TYPE_ARRAY) {
            continue; // arrays are not exposed as strings, as for the model's metadata
        }
        char * k = strdup(gguf_get_key(g, i));
        char * v = llama_gguf_kv_to_str(g, i);
        if (!k || !v) {
            free(k);
            free(v);
            return false;
        }
        a->meta_keys[a->n_meta] = k;
        a->meta_vals[a->n_meta] = v;
        a->n_meta++;
    }
    return true;
}

// adapter.alora.invocation_tokens: an integer array of token ids (absent: plain LoRA)
static bool load_alora(struct llama_adapter_lora * a, const struct gguf_context * g, const char * path) {
    const int64_t kid = gguf_find_key(g, "adapter.alora.invocation_tokens");
    if (kid < 0) {
        return true;
    }
    const enum gguf_type at = gguf_get_kv_type(g, kid) == GGUF_TYPE_ARRAY ? gguf_get_arr_type(g, kid) : GGUF_TYPE_COUNT;
    if (at != GGUF_TYPE_UINT32 && at != GGUF_TYPE_INT32) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: key adapter.alora.invocation_tokens must be an array of 32-bit integers (in '%s')\n", path);
        return false;
    }
    const size_t n = gguf_get_arr_n(g, kid);
    a->alora_tokens = malloc((n > 0 ? n : 1) * sizeof(llama_token));
    if (!a->alora_tokens) {
        return false;
    }
    memcpy(a->alora_tokens, gguf_get_arr_data(g, kid), n * sizeof(llama_token));
    a->n_alora_tokens = n;
    return true;
}

static bool is_2d(const struct ggml_tensor * t) {
    return t->ne[2] == 1 && t->ne[3] == 1;
}

static bool type_ok(enum ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16 || t == GGML_TYPE_Q8_0;
}

// checks one a/b pair against the base tensor (llama.cpp's rules); false (logged) on mismatch
static bool check_pair(const struct llama_model * model, const char * base_name, const struct ggml_tensor * w,
        const struct ggml_tensor * a, const struct ggml_tensor * b, const char * path) {
    if (!type_ok(a->type) || !type_ok(b->type)) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: LoRA tensors for '%s' have type %s/%s, expected f32, f16, bf16 or q8_0 (in '%s')\n",
                base_name, ggml_type_name(a->type), ggml_type_name(b->type), path);
        return false;
    }
    if (!is_2d(w) || !is_2d(a) || !is_2d(b)) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: LoRA for '%s': only 2-D weights are supported (in '%s')\n", base_name, path);
        return false;
    }
    if (w == model->tok_embd) {
        // the embedding lookup reads rows of A: A [rank, n_vocab], B [rank, n_embd]
        if (a->ne[1] != w->ne[1] || b->ne[1] != w->ne[0] || a->ne[0] != b->ne[0]) {
            LLAMA_LOG_ERROR("llama_adapter_lora_init: tensor '%s' has incorrect shape: lora_a [%" PRId64 ", %" PRId64 "], lora_b [%" PRId64 ", %" PRId64 "], "
                    "expected [rank, %" PRId64 "] and [rank, %" PRId64 "] (in '%s')\n", base_name, a->ne[0], a->ne[1], b->ne[0], b->ne[1],
                    w->ne[1], w->ne[0], path);
            return false;
        }
        return true;
    }
    if (a->ne[0] != w->ne[0] || b->ne[1] != w->ne[1]) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: tensor '%s' has incorrect shape (hint: maybe LoRA A and B are transposed): "
                "lora_a [%" PRId64 ", %" PRId64 "], lora_b [%" PRId64 ", %" PRId64 "], base [%" PRId64 ", %" PRId64 "] (in '%s')\n",
                base_name, a->ne[0], a->ne[1], b->ne[0], b->ne[1], w->ne[0], w->ne[1], path);
        return false;
    }
    if (a->ne[1] != b->ne[0]) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: lora_a tensor is not transposed (hint: adapter from \"finetune\" example is no longer supported): "
                "'%s' rank %" PRId64 " vs %" PRId64 " (in '%s')\n", base_name, a->ne[1], b->ne[0], path);
        return false;
    }
    return true;
}

// pairs the .lora_a/.lora_b tensors of the file, validates them and creates their copies in a->ctx
static bool load_pairs(struct llama_adapter_lora * a, const struct llama_model * model, struct ggml_context * fctx,
        const char * path) {
    int32_t n_a = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(fctx); t; t = ggml_get_next_tensor(fctx, t)) {
        if (ends_with(t->name, LORA_SUFFIX_A)) {
            n_a++;
        } else if (ends_with(t->name, LORA_SUFFIX_B)) {
            continue;
        } else if (ends_with(t->name, "_norm.weight")) {
            continue; // llama.cpp skips norm vectors an adapter may carry
        } else {
            LLAMA_LOG_ERROR("llama_adapter_lora_init: LoRA tensor '%s' has unexpected suffix (in '%s')\n", t->name, path);
            return false;
        }
    }
    a->weights = calloc((size_t) (n_a > 0 ? n_a : 1), sizeof(*a->weights));
    struct ggml_init_params ip = { .mem_size = (size_t) (2 * n_a + 1) * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    a->ctx = ggml_init(ip);
    if (!a->weights || !a->ctx) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: out of memory\n");
        return false;
    }
    for (struct ggml_tensor * ta = ggml_get_first_tensor(fctx); ta; ta = ggml_get_next_tensor(fctx, ta)) {
        if (!ends_with(ta->name, LORA_SUFFIX_A)) {
            continue;
        }
        // "<base>.lora_a" -> "<base>" and "<base>.lora_b" (same length as the a name, so it fits)
        char base[GGML_MAX_NAME], name_b[GGML_MAX_NAME];
        const size_t nb = strlen(ta->name) - strlen(LORA_SUFFIX_A);
        memcpy(base, ta->name, nb);
        base[nb] = '\0';
        memcpy(name_b, ta->name, nb);
        memcpy(name_b + nb, LORA_SUFFIX_B, sizeof(LORA_SUFFIX_B));
        struct ggml_tensor * tb = ggml_get_tensor(fctx, name_b);
        if (!tb) {
            LLAMA_LOG_ERROR("llama_adapter_lora_init: LoRA tensor pair for '%s' is missing one component (in '%s')\n", base, path);
            return false;
        }
        const struct ggml_tensor * w = model->ctx_w ? ggml_get_tensor(model->ctx_w, base) : NULL;
        if (!w) {
            LLAMA_LOG_ERROR("llama_adapter_lora_init: LoRA tensor '%s' does not exist in base model (in '%s')\n", base, path);
            return false;
        }
        for (int32_t i = 0; i < a->n_weights; i++) {
            if (a->weights[i].base == w) {
                LLAMA_LOG_ERROR("llama_adapter_lora_init: duplicated LoRA tensor '%s' (in '%s')\n", base, path);
                return false;
            }
        }
        if (!check_pair(model, base, w, ta, tb, path)) {
            return false;
        }
        struct llama_adapter_lora_weight * lw = &a->weights[a->n_weights++];
        lw->base = w;
        lw->a = ggml_new_tensor_2d(a->ctx, ta->type, ta->ne[0], ta->ne[1]);
        lw->b = ggml_new_tensor_2d(a->ctx, tb->type, tb->ne[0], tb->ne[1]);
        ggml_set_name(lw->a, ta->name);
        ggml_set_name(lw->b, tb->name);
    }
    // a lone .lora_b has no partner
    for (struct ggml_tensor * t = ggml_get_first_tensor(fctx); t; t = ggml_get_next_tensor(fctx, t)) {
        if (ends_with(t->name, LORA_SUFFIX_B) && !ggml_get_tensor(a->ctx, t->name)) {
            LLAMA_LOG_ERROR("llama_adapter_lora_init: LoRA tensor pair for '%.*s' is missing one component (in '%s')\n",
                    (int) (strlen(t->name) - strlen(LORA_SUFFIX_B)), t->name, path);
            return false;
        }
    }
    return true;
}

// reads the data of every tensor of a->ctx from the file (offsets checked against the file size)
static bool load_data(struct llama_adapter_lora * a, const struct gguf_context * g, const char * path) {
    if (a->n_weights == 0) {
        return true;
    }
    a->buf = ggml_backend_alloc_ctx_tensors_from_buft(a->ctx, ggml_backend_cpu_buffer_type());
    if (!a->buf) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: failed to allocate the adapter buffer\n");
        return false;
    }
    FILE * f = fopen(path, "rb");
    if (!f) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: failed to open '%s'\n", path);
        return false;
    }
    bool ok = fseek(f, 0, SEEK_END) == 0;
    const long fsize = ok ? ftell(f) : -1;
    ok = ok && fsize >= 0;
    const size_t data_off = gguf_get_data_offset(g);
    for (struct ggml_tensor * t = ggml_get_first_tensor(a->ctx); ok && t; t = ggml_get_next_tensor(a->ctx, t)) {
        const int64_t tid = gguf_find_tensor(g, t->name);
        const size_t nbytes = ggml_nbytes(t);
        const size_t off = data_off + gguf_get_tensor_offset(g, tid);
        if (off < data_off || off > (size_t) fsize || nbytes > (size_t) fsize - off) {
            LLAMA_LOG_ERROR("llama_adapter_lora_init: tensor '%s' data is not within the file bounds (file truncated?) (in '%s')\n",
                    t->name, path);
            ok = false;
            break;
        }
        ok = fseek(f, (long) off, SEEK_SET) == 0 && fread(t->data, 1, nbytes, f) == nbytes;
        if (!ok) {
            LLAMA_LOG_ERROR("llama_adapter_lora_init: failed to read tensor '%s' (in '%s')\n", t->name, path);
        }
    }
    fclose(f);
    return ok;
}

struct llama_adapter_lora * llama_adapter_lora_init(struct llama_model * model, const char * path_lora) {
    if (!model || !path_lora) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: model and path must not be NULL\n");
        return NULL;
    }
    LLAMA_LOG_INFO("llama_adapter_lora_init: loading lora adapter from '%s' ...\n", path_lora);
    struct ggml_context * fctx = NULL;
    struct gguf_init_params gp = { .no_alloc = true, .ctx = &fctx };
    struct gguf_context * g = gguf_init_from_file(path_lora, gp);
    if (!g) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: failed to load adapter '%s' (missing or not a valid GGUF file)\n", path_lora);
        return NULL;
    }
    struct llama_adapter_lora * a = calloc(1, sizeof(*a));
    bool ok = a != NULL;
    if (ok) {
        a->model = model;
        const char * arch  = get_str(g, "general.architecture");
        const char * gtype = get_str(g, "general.type");
        const char * atype = get_str(g, "adapter.type");
        const char * march = llm_arch_name(model->arch);
        if (!arch || !march || strcmp(arch, march) != 0) {
            LLAMA_LOG_ERROR("llama_adapter_lora_init: model arch and LoRA arch mismatch: '%s' vs '%s' (in '%s')\n",
                    march ? march : "?", arch ? arch : "(missing general.architecture)", path_lora);
            ok = false;
        } else if (!gtype || strcmp(gtype, "adapter") != 0) {
            LLAMA_LOG_ERROR("llama_adapter_lora_init: expect general.type to be 'adapter', but got: %s (in '%s')\n",
                    gtype ? gtype : "(missing)", path_lora);
            ok = false;
        } else if (!atype || strcmp(atype, "lora") != 0) {
            LLAMA_LOG_ERROR("llama_adapter_lora_init: expect adapter.type to be 'lora', but got: %s (in '%s')\n",
                    atype ? atype : "(missing)", path_lora);
            ok = false;
        }
    }
    if (ok) {
        const int64_t kid = gguf_find_key(g, "adapter.lora.alpha");
        if (kid >= 0) {
            if (gguf_get_kv_type(g, kid) != GGUF_TYPE_FLOAT32) {
                LLAMA_LOG_ERROR("llama_adapter_lora_init: key adapter.lora.alpha must be f32 (in '%s')\n", path_lora);
                ok = false;
            } else {
                a->alpha = gguf_get_val_f32(g, kid);
            }
        }
    }
    ok = ok && load_alora(a, g, path_lora);
    if (ok && !load_meta(a, g)) {
        LLAMA_LOG_ERROR("llama_adapter_lora_init: out of memory copying metadata\n");
        ok = false;
    }
    ok = ok && load_pairs(a, model, fctx, path_lora) && load_data(a, g, path_lora);
    ggml_free(fctx);
    gguf_free(g);
    if (!ok) {
        adapter_destroy(a);
        return NULL;
    }
    a->next = model->loras;
    model->loras = a;
    LLAMA_LOG_INFO("llama_adapter_lora_init: loaded %d tensor pairs, alpha = %g\n", a->n_weights, (double) a->alpha);
    return a;
}

void llama_adapter_lora_free(struct llama_adapter_lora * adapter) {
    if (!adapter) {
        return;
    }
    // unlink from the model's list
    for (struct llama_adapter_lora ** p = &adapter->model->loras; *p; p = &(*p)->next) {
        if (*p == adapter) {
            *p = adapter->next;
            break;
        }
    }
    adapter_destroy(adapter);
}

void llama_adapter_lora_free_all(struct llama_model * model) {
    while (model->loras) {
        struct llama_adapter_lora * a = model->loras;
        model->loras = a->next;
        adapter_destroy(a);
    }
}

size_t llama_adapter_lora_graph_nodes(const struct llama_model * model) {
    size_t n = 0;
    for (const struct llama_adapter_lora * a = model->loras; a; a = a->next) {
        n += 6 * (size_t) a->n_weights; // mul_mat, mul_mat, scale, add (+ get_rows for the embeddings), with slack
    }
    return n;
}

const struct llama_adapter_lora_weight * llama_adapter_lora_find(const struct llama_adapter_lora * adapter,
        const struct ggml_tensor * w) {
    for (int32_t i = 0; i < adapter->n_weights; i++) {
        if (adapter->weights[i].base == w) {
            return &adapter->weights[i];
        }
    }
    return NULL;
}

float llama_adapter_lora_scale(const struct llama_adapter_lora * adapter,
        const struct llama_adapter_lora_weight * lw, float user_scale) {
    const float rank = (float) lw->b->ne[0];
    return adapter->alpha != 0.0f ? user_scale * adapter->alpha / rank : user_scale;
}

// ---- metadata -----------------------------------------------------------------------------------------------

static int32_t copy_str(const char * s, char * buf, size_t buf_size) {
    if (!s) {
        if (buf && buf_size > 0) {
            buf[0] = '\0';
        }
        return -1;
    }
    return (int32_t) snprintf(buf, buf_size, "%s", s);
}

int32_t llama_adapter_meta_val_str(const struct llama_adapter_lora * adapter, const char * key, char * buf, size_t buf_size) {
    if (adapter && key) {
        for (int32_t i = 0; i < adapter->n_meta; i++) {
            if (strcmp(adapter->meta_keys[i], key) == 0) {
                return copy_str(adapter->meta_vals[i], buf, buf_size);
            }
        }
    }
    return copy_str(NULL, buf, buf_size);
}

int32_t llama_adapter_meta_count(const struct llama_adapter_lora * adapter) {
    return adapter ? adapter->n_meta : 0;
}

int32_t llama_adapter_meta_key_by_index(const struct llama_adapter_lora * adapter, int32_t i, char * buf, size_t buf_size) {
    return copy_str(adapter && i >= 0 && i < adapter->n_meta ? adapter->meta_keys[i] : NULL, buf, buf_size);
}

int32_t llama_adapter_meta_val_str_by_index(const struct llama_adapter_lora * adapter, int32_t i, char * buf, size_t buf_size) {
    return copy_str(adapter && i >= 0 && i < adapter->n_meta ? adapter->meta_vals[i] : NULL, buf, buf_size);
}

uint64_t llama_adapter_get_alora_n_invocation_tokens(const struct llama_adapter_lora * adapter) {
    return adapter ? adapter->n_alora_tokens : 0;
}

const llama_token * llama_adapter_get_alora_invocation_tokens(const struct llama_adapter_lora * adapter) {
    return adapter ? adapter->alora_tokens : NULL;
}
