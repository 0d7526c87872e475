// Endpoints that need only the read-only model and vocabulary (health, models, props, tokenize, detokenize,
// apply-template); they run on the HTTP threads directly, as llama.cpp's do.
#include "server-context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void server_handle_health(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    (void) ud;
    server_res_json(res, json_pack("{s:s}", "status", "ok"));
}

// the file type as llama.cpp names it ("Q4_0", "Q4_K - Medium", ...). llama.h has no getter for it, but
// llama_model_desc is "<arch> <size> <ftype name>" and neither of the first two contains a space.
static void model_ftype_name(const struct server_context * sc, char * buf, size_t size) {
    char desc[256];
    buf[0] = '\0';
    if (llama_model_desc(sc->model, desc, sizeof(desc)) < 0) {
        return;
    }
    const char * sp = strchr(desc, ' ');
    sp = sp ? strchr(sp + 1, ' ') : NULL;
    if (sp) {
        snprintf(buf, size, "%s", sp + 1);
    }
}

static json_t * model_meta_json(struct server_context * sc) {
    if (!sc->model) {
        return json_null();
    }
    char ftype[128];
    model_ftype_name(sc, ftype, sizeof(ftype));
    // llama.cpp's order; n_ctx is the context of one slot
    return json_pack("{s:i, s:i, s:i, s:i, s:i, s:I, s:I, s:s}",
                     "vocab_type",  (int) llama_vocab_type(sc->vocab),
                     "n_vocab",     (int) llama_vocab_n_tokens(sc->vocab),
                     "n_ctx",       sc->n_ctx_slot,
                     "n_ctx_train", (int) llama_model_n_ctx_train(sc->model),
                     "n_embd",      (int) llama_model_n_embd(sc->model),
                     "n_params",    (json_int_t) llama_model_n_params(sc->model),
                     "size",        (json_int_t) llama_model_size(sc->model),
                     "ftype",       ftype);
}

void server_handle_models(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    struct server_context * sc = ud;
    // before the model is loaded the gate lets this endpoint through, with "meta": null
    // model_name and the model are written by the loader before the gate opens: read them only after
    const bool ready = server_http_is_ready(sc->http);
    char * early = ready ? NULL : server_model_name(&sc->params);
    const char * name = ready ? sc->model_name : (early ? early : "");
    json_t * meta = ready ? model_meta_json(sc) : json_null();
    json_t * out = json_pack(
        "{s:[{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:[s], s:[s], s:s,"
        "     s:{s:s, s:s, s:s, s:[s], s:s, s:s}}],"
        " s:s,"
        " s:[{s:s, s:o, s:[], s:s, s:I, s:s, s:o}]}",
        "models",
            "name", name, "model", name, "modified_at", "", "size", "", "digest", "", "type", "model",
            "description", "", "tags", "", "capabilities", "completion", "parameters", "",
            "details", "parent_model", "", "format", "gguf", "family", "", "families", "", "parameter_size", "",
                       "quantization_level", "",
        "object", "list",
        "data", "id", name, "aliases", server_model_aliases(&sc->params), "tags", "object", "model",
                "created", (json_int_t) time(NULL), "owned_by", "llamacpp", "meta", meta);
    free(early);
    server_res_json(res, out);
}

void server_handle_props(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    struct server_context * sc = ud;
    struct server_slot_params defaults = server_slot_params_from_common(&sc->params);
    defaults.speculative_n_max = sc->n_draft_max;
    defaults.speculative_n_min = sc->params.speculative.draft.n_min;
    defaults.speculative_p_min = sc->params.speculative.draft.p_min;
    // the adapter scales a request without "lora" runs at: the global ones (--lora, POST /lora-adapters)
    float * lora = sc->n_lora > 0 ? calloc((size_t) sc->n_lora, sizeof(float)) : NULL;
    if (lora) {
        server_lora_global(sc, lora);
        defaults.lora   = lora;
        defaults.n_lora = sc->n_lora;
    }
    size_t bos_len = 0, eos_len = 0;
    const llama_token bos = llama_vocab_bos(sc->vocab);
    const llama_token eos = llama_vocab_eos(sc->vocab);
    char * bos_txt = bos != LLAMA_TOKEN_NULL ? server_token_piece(sc->vocab, bos, &bos_len) : strdup("");
    char * eos_txt = eos != LLAMA_TOKEN_NULL ? server_token_piece(sc->vocab, eos, &eos_len) : strdup("");
    const char * tmpl = sc->chat_template ? sc->chat_template : "";
    char ftype[128];
    model_ftype_name(sc, ftype, sizeof(ftype));
    // llama.cpp's fields in its order; no multimodal input and no web UI are built here ("webui" is the older
    // name of "ui"); chat_template_caps are probed from the Jinja template (empty without one, as --no-jinja)
    json_t * caps = NULL;
#ifdef LLAMA_SERVER_HAVE_CHAT
    if (sc->chat_jinja) {
        caps = common_chat_jinja_caps_json(&sc->chat_jinja->caps);
    }
#endif
    if (!caps) {
        caps = json_object();
    }
    json_t * out = json_pack(
        "{s:{s:o, s:i}, s:i, s:s, s:s, s:s, s:{s:b, s:b, s:b}, s:b, s:b, s:b, s:b, s:b, s:s, s:o, s:o, s:o, s:s, s:b}",
        "default_generation_settings",
            "params", server_slot_params_to_json(&defaults),
            "n_ctx",  sc->n_ctx_slot,
        "total_slots",      sc->n_slots,
        "model_alias",      sc->model_name ? sc->model_name : "",
        "model_ftype",      ftype,
        "model_path",       sc->params.model.path,
        "modalities",       "vision", 0, "video", 0, "audio", 0,
        "endpoint_slots",   (int) sc->params.endpoint_slots,
        "endpoint_props",   (int) sc->params.endpoint_props,
        "endpoint_metrics", (int) sc->params.endpoint_metrics,
        "ui",               0,
        "webui",            0,
        "chat_template",    tmpl,
        "chat_template_caps", caps,
        "bos_token",        sj_string_lossy(bos_txt, bos_txt ? bos_len : 0),
        "eos_token",        sj_string_lossy(eos_txt, eos_txt ? eos_len : 0),
        "build_info",       server_build_info(),
        "is_sleeping",      0);
    free(bos_txt);
    free(eos_txt);
    free(lora);
    server_res_json(res, out);
}

void server_handle_props_change(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    if (!sc->params.endpoint_props) {
        server_res_err(res, "This server does not support changing global properties. Start it with `--props`",
                ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    json_t * body = server_parse_body(req, res);
    if (!body) {
        return;
    }
    // no property is changeable yet; llama.cpp answers success and ignores unknown ones
    json_decref(body);
    server_res_json(res, json_pack("{s:b}", "success", 1));
}

void server_handle_tokenize(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    json_t * body = server_parse_body(req, res);
    if (!body) {
        return;
    }
    struct sj_err err;
    bool add_special = false, parse_special = true, with_pieces = false;
    if (!sj_get_bool(body, "add_special", &add_special, &err) ||
        !sj_get_bool(body, "parse_special", &parse_special, &err) ||
        !sj_get_bool(body, "with_pieces", &with_pieces, &err)) {
        json_decref(body);
        server_res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    struct server_token_vec toks = { 0 };
    const json_t * content = json_object_get(body, "content");
    if (content && !json_is_null(content) &&
        !server_tokenize_mixed(sc->vocab, content, add_special, parse_special, &toks, &err)) {
        json_decref(body);
        free(toks.data);
        server_res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    json_decref(body);

    json_t * arr = json_array();
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < toks.n; i++) {
        if (!with_pieces) {
            ok = json_array_append_new(arr, json_integer(toks.data[i])) == 0;
            continue;
        }
        size_t plen = 0;
        char * piece = server_token_piece(sc->vocab, toks.data[i], &plen);
        if (!piece) {
            ok = false;
            break;
        }
        json_t * pj;
        if (sj_is_valid_utf8(piece, plen)) {
            pj = json_stringn(piece, plen);
        } else {
            // a partial UTF-8 sequence (byte tokens): its bytes as numbers, as llama.cpp does
            pj = json_array();
            for (size_t k = 0; pj && k < plen; k++) {
                json_array_append_new(pj, json_integer((unsigned char) piece[k]));
            }
        }
        free(piece);
        ok = json_array_append_new(arr, json_pack("{s:i, s:o}", "id", toks.data[i], "piece", pj)) == 0;
    }
    free(toks.data);
    if (!ok) {
        json_decref(arr);
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    server_res_json(res, json_pack("{s:o}", "tokens", arr));
}

void server_handle_detokenize(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    json_t * body = server_parse_body(req, res);
    if (!body) {
        return;
    }
    const json_t * tokens = json_object_get(body, "tokens");
    const int32_t n_vocab = llama_vocab_n_tokens(sc->vocab);
    char * text = NULL;
    size_t len = 0, cap = 0;
    char msg[256] = "";
    if (tokens && !json_is_null(tokens)) {
        if (!json_is_array(tokens)) {
            snprintf(msg, sizeof(msg), "\"tokens\" must be an array of token ids, got %s", sj_type_name(tokens));
        } else {
            size_t i;
            const json_t * el;
            json_array_foreach(tokens, i, el) {
                if (!json_is_integer(el)) {
                    snprintf(msg, sizeof(msg), "\"tokens\"[%zu] must be a token id, got %s", i, sj_type_name(el));
                    break;
                }
                const json_int_t id = json_integer_value(el);
                if (id < 0 || id >= n_vocab) {
                    snprintf(msg, sizeof(msg), "\"tokens\"[%zu]: token id %lld out of range [0, %d)", i,
                             (long long) id, n_vocab);
                    break;
                }
                size_t plen = 0;
                char * piece = server_token_piece(sc->vocab, (llama_token) id, &plen);
                if (!piece) {
                    snprintf(msg, sizeof(msg), "out of memory");
                    break;
                }
                if (len + plen + 1 > cap) {
                    size_t ncap = cap ? cap * 2 : 256;
                    while (ncap < len + plen + 1) {
                        ncap *= 2;
                    }
                    char * nt = realloc(text, ncap);
                    if (!nt) {
                        free(piece);
                        snprintf(msg, sizeof(msg), "out of memory");
                        break;
                    }
                    text = nt;
                    cap = ncap;
                }
                memcpy(text + len, piece, plen);
                len += plen;
                free(piece);
            }
        }
    }
    json_decref(body);
    if (msg[0]) {
        free(text);
        server_res_err(res, msg, strcmp(msg, "out of memory") == 0 ? ERROR_TYPE_SERVER : ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    json_t * content = sj_string_lossy(text ? text : "", len);
    free(text);
    server_res_json(res, json_pack("{s:o}", "content", content));
}

void server_handle_apply_template(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    json_t * body = server_parse_body(req, res);
    if (!body) {
        return;
    }
    const json_t * msgs = json_object_get(body, "messages");
    if (!msgs || json_is_null(msgs)) {
        json_decref(body);
        server_res_err(res, "'messages' is required", ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    if (!json_is_array(msgs)) {
        char msg[128];
        snprintf(msg, sizeof(msg), "Expected 'messages' to be an array, got %s", sj_type_name(msgs));
        json_decref(body);
        server_res_err(res, msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    struct sj_err err;
    bool add_ass = true;
    if (!sj_get_bool(body, "add_generation_prompt", &add_ass, &err)) {
        json_decref(body);
        server_res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
#ifdef LLAMA_SERVER_HAVE_CHAT
    if (sc->has_chat) {
        char * prompt = server_apply_chat_template(sc, msgs, add_ass, body, &err);
        json_decref(body);
        if (!prompt) {
            server_res_err(res, err.msg, strcmp(err.msg, "failed to apply the chat template") == 0 ? ERROR_TYPE_SERVER
                                                                                          : ERROR_TYPE_INVALID_REQUEST);
            return;
        }
        json_t * pj = sj_string_lossy(prompt, strlen(prompt));
        free(prompt);
        server_res_json(res, json_pack("{s:o}", "prompt", pj));
        return;
    }
#endif
    (void) sc;
    json_decref(body);
    server_res_err(res, "chat templates are not available in this build", ERROR_TYPE_NOT_SUPPORTED);
}
