// LoRA adapters in llama-server (llama.cpp's rules): the --lora / --lora-scaled adapters are loaded once and kept
// here; GET/POST /lora-adapters read and set the global scales (--lora-init-without-apply starts them at 0); a
// request's "lora" field ([{"id", "scale"}], unlisted adapters 0, unknown ids ignored, an empty list = the global
// scales) gives its slot its own set. One llama_decode runs one adapter set, so a step only batches the slots
// whose set equals the step's (server-slots.c); a slot whose set changes drops its cached prompt (its KV was
// computed with other weights).
#include "server-context.h"

#include <stdlib.h>
#include <string.h>

// a metadata string of the adapter ("" when absent), malloc'd
static char * meta_str(const struct llama_adapter_lora * a, const char * key) {
    char buf[1024];
    if (llama_adapter_meta_val_str(a, key, buf, sizeof(buf)) < 0) {
        buf[0] = '\0';
    }
    return strdup(buf);
}

bool server_lora_load(struct server_context * sc) {
    const int n = sc->params.n_lora_adapters;
    pthread_mutex_init(&sc->lora_mtx, NULL);
    sc->lora_mtx_init = true;
    sc->lora_applied_valid = false;
    if (n == 0) {
        return true;
    }
    sc->lora       = calloc((size_t) n, sizeof(*sc->lora));
    sc->lora_scale = calloc((size_t) n, sizeof(float));
    sc->lora_applied = calloc((size_t) n, sizeof(float));
    if (!sc->lora || !sc->lora_scale || !sc->lora_applied) {
        return false;
    }
    sc->n_lora = n;
    for (int i = 0; i < n; i++) {
        struct server_lora * l = &sc->lora[i];
        l->path = sc->params.lora_adapters[i].path;
        l->ptr  = llama_adapter_lora_init(sc->model, l->path);
        if (!l->ptr) {
            SRV_ERR("%s: failed to load lora adapter '%s'\n", __func__, l->path);
            return false;
        }
        // adapter.lora.task_name / prompt_prefix: what llama.cpp's common_init_from_params reads for the listing
        l->task_name     = meta_str(l->ptr, "adapter.lora.task_name");
        l->prompt_prefix = meta_str(l->ptr, "adapter.lora.prompt_prefix");
        if (!l->task_name || !l->prompt_prefix) {
            return false;
        }
        sc->lora_scale[i] = sc->params.lora_init_without_apply ? 0.0f : sc->params.lora_adapters[i].scale;
    }
    return true;
}

void server_lora_free(struct server_context * sc) {
    for (int i = 0; i < sc->n_lora; i++) {
        free(sc->lora[i].task_name);
        free(sc->lora[i].prompt_prefix);
        // the adapters themselves are freed with the model
    }
    free(sc->lora);
    free(sc->lora_scale);
    free(sc->lora_applied);
    if (sc->lora_mtx_init) {
        pthread_mutex_destroy(&sc->lora_mtx);
    }
}

void server_lora_global(struct server_context * sc, float * out) {
    if (sc->n_lora == 0) {
        return;
    }
    pthread_mutex_lock(&sc->lora_mtx);
    memcpy(out, sc->lora_scale, (size_t) sc->n_lora * sizeof(float));
    pthread_mutex_unlock(&sc->lora_mtx);
}

// llama.cpp's parse_lora_request + construct_lora_list: each entry's "id" (an integer, else -1) and "scale" (a
// number, else 0); later entries win; ids that name no adapter are ignored; unlisted adapters get 0
static void scales_from_list(const struct server_context * sc, const json_t * list, float * out) {
    for (int i = 0; i < sc->n_lora; i++) {
        out[i] = 0.0f;
    }
    size_t k;
    const json_t * e;
    json_array_foreach(list, k, e) {
        const json_t * jid = json_object_get(e, "id");
        const json_t * jsc = json_object_get(e, "scale");
        const json_int_t id = json_is_integer(jid) ? json_integer_value(jid)
                            : json_is_real(jid) ? (json_int_t) json_real_value(jid) : -1;
        const float scale = json_is_number(jsc) ? (float) json_number_value(jsc) : 0.0f;
        if (id >= 0 && id < sc->n_lora) {
            out[id] = scale;
        }
    }
}

bool server_lora_check_field(const json_t * body, struct sj_err * err) {
    const json_t * v = json_object_get(body, "lora");
    if (v && !json_is_array(v)) {
        snprintf(err->msg, sizeof(err->msg), "Error: 'lora' must be an array of objects with 'id' and 'scale' fields");
        return false;
    }
    return true;
}

bool server_lora_from_request(struct server_context * sc, const json_t * body, float * out, struct sj_err * err) {
    if (!server_lora_check_field(body, err)) {
        return false;
    }
    const json_t * v = json_object_get(body, "lora");
    // as llama.cpp: no field or an empty list means the global scales
    if (!v || json_array_size(v) == 0) {
        server_lora_global(sc, out);
    } else {
        scales_from_list(sc, v, out);
    }
    return true;
}

bool server_lora_same(const struct server_context * sc, const float * a, const float * b) {
    for (int i = 0; i < sc->n_lora; i++) {
        if (a[i] != b[i]) {
            return false;
        }
    }
    return true;
}

bool server_lora_apply(struct server_context * sc, const float * scales) {
    if (sc->n_lora == 0 || (sc->lora_applied_valid && server_lora_same(sc, sc->lora_applied, scales))) {
        return true;
    }
    // only the adapters in use: a scale-0 adapter would add its matmuls to every graph for nothing
    struct llama_adapter_lora * ptrs[64];
    float sc_on[64];
    struct llama_adapter_lora ** p = ptrs;
    float * s = sc_on;
    if (sc->n_lora > 64) {
        p = malloc((size_t) sc->n_lora * sizeof(*p));
        s = malloc((size_t) sc->n_lora * sizeof(*s));
    }
    bool ok = p && s;
    size_t n_on = 0;
    for (int i = 0; ok && i < sc->n_lora; i++) {
        if (scales[i] != 0.0f) {
            p[n_on] = sc->lora[i].ptr;
            s[n_on] = scales[i];
            n_on++;
        }
    }
    ok = ok && llama_set_adapters_lora(sc->ctx, p, n_on, s) == 0;
    if (p != ptrs) {
        free(p);
        free(s);
    }
    if (ok) {
        memcpy(sc->lora_applied, scales, (size_t) sc->n_lora * sizeof(float));
        sc->lora_applied_valid = true;
    } else {
        SRV_ERR("%s: failed to set the LoRA adapters on the context\n", __func__);
    }
    return ok;
}

// GET /lora-adapters: [{id, path, scale, task_name, prompt_prefix}] (+ the aLoRA invocation for an aLoRA)
void server_handle_lora_adapters(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    struct server_context * sc = ud;
    float scales[64];
    float * cur = sc->n_lora > 64 ? malloc((size_t) sc->n_lora * sizeof(float)) : scales;
    json_t * arr = json_array();
    if (!cur || !arr) {
        json_decref(arr);
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    server_lora_global(sc, cur);
    for (int i = 0; i < sc->n_lora; i++) {
        const struct server_lora * l = &sc->lora[i];
        json_t * e = json_pack("{s:i, s:s, s:f, s:s, s:s}", "id", i, "path", l->path, "scale", (double) cur[i],
                               "task_name", l->task_name, "prompt_prefix", l->prompt_prefix);
        const uint64_t n_inv = llama_adapter_get_alora_n_invocation_tokens(l->ptr);
        if (e && n_inv > 0) {
            const llama_token * inv = llama_adapter_get_alora_invocation_tokens(l->ptr);
            json_t * toks = json_array();
            char * text = NULL;
            size_t n_text = 0, cap_text = 0;
            for (uint64_t j = 0; j < n_inv; j++) {
                json_array_append_new(toks, json_integer(inv[j]));
                size_t len = 0;
                char * piece = server_token_piece(sc->vocab, inv[j], &len);
                if (piece) {
                    server_sb_add(&text, &n_text, &cap_text, piece, len);
                    free(piece);
                }
            }
            json_object_set_new(e, "alora_invocation_string", sj_string_lossy(text ? text : "", n_text));
            json_object_set_new(e, "alora_invocation_tokens", toks);
            free(text);
        }
        json_array_append_new(arr, e);
    }
    if (cur != scales) {
        free(cur);
    }
    server_res_json(res, arr);
}

// POST /lora-adapters [{id, scale}]: the new global scales; unlisted adapters go to 0
void server_handle_lora_adapters_set(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    json_error_t jerr;
    json_t * body = json_loadb(req->body ? req->body : "", req->body ? req->body_len : 0, 0, &jerr);
    if (!body) {
        char msg[256];
        snprintf(msg, sizeof(msg), "invalid JSON in request body: %s (line %d, column %d)", jerr.text, jerr.line,
                 jerr.column);
        server_res_err(res, msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    if (!json_is_array(body)) {
        json_decref(body);
        server_res_err(res, "Request body must be an array", ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    if (sc->n_lora > 0) {
        float * next = malloc((size_t) sc->n_lora * sizeof(float));
        if (!next) {
            json_decref(body);
            server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
            return;
        }
        scales_from_list(sc, body, next);
        pthread_mutex_lock(&sc->lora_mtx);
        memcpy(sc->lora_scale, next, (size_t) sc->n_lora * sizeof(float));
        pthread_mutex_unlock(&sc->lora_mtx);
        for (int i = 0; i < sc->n_lora; i++) {
            SRV_INF("set lora adapter idx=%d scale=%f\n", i, (double) next[i]);
        }
        free(next);
    }
    json_decref(body);
    server_res_json(res, json_pack("{s:b}", "success", 1));
}
