// /completion, /v1/completions, /v1/chat/completions on the HTTP threads: validate the request, build and
// tokenize the prompt, post the task (streamed or waited for).
#include "server-context.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// OpenAI's log-probability fields -> n_probs, as llama.cpp maps them: /v1/completions "logprobs": N (used only
// when n_probs is absent); chat "logprobs": true with "top_logprobs" (default 20), top_logprobs alone refused
static bool read_oai_logprobs(const json_t * body, int mode, int max_probs, struct server_slot_params * p,
                              struct sj_err * err) {
    const json_t * lp = json_object_get(body, "logprobs");
    const json_t * np = json_object_get(body, "n_probs");
    int64_t iv = 0;
    if (mode == COMPL_MODE_OAI_COMPL) {
        if (!lp || json_is_null(lp) || (np && !json_is_null(np))) {
            return true;
        }
        if (!sj_get_int(body, "logprobs", &iv, err)) {
            return false;
        }
    } else if (server_mode_is_chat(mode)) {
        bool want = false;
        if (!sj_get_bool(body, "logprobs", &want, err)) {
            return false;
        }
        const json_t * top = json_object_get(body, "top_logprobs");
        if (!want) {
            if (top && !json_is_null(top)) {
                snprintf(err->msg, sizeof(err->msg), "top_logprobs requires logprobs to be set to true");
                return false;
            }
            return true;
        }
        iv = 20;
        if (!sj_get_int(body, "top_logprobs", &iv, err)) {
            return false;
        }
    } else {
        return true;
    }
    if (iv < 0 || iv > max_probs) {
        snprintf(err->msg, sizeof(err->msg), "\"%s\" must be in [0, %d]",
                 server_mode_is_chat(mode) ? "top_logprobs" : "logprobs", max_probs);
        return false;
    }
    p->n_probs = (int32_t) iv;
    return true;
}

// request fields -> slot params; the same pure read runs on the HTTP thread (to answer 400) and on the
// inference thread (after the hand-over), so the task carries the request JSON for them (the lazy grammar,
// which tokenizes, is read once and travels parsed: server_task.grammar_lazy)
bool server_read_slot_params(const struct server_context * sc, const json_t * body, int mode,
                             struct server_slot_params * p, struct sj_err * err) {
    const int n_vocab = llama_vocab_n_tokens(sc->vocab);
    // llama.cpp's request defaults come from the command line (sampling options, -n, --keep); the server's
    // speculative settings are the defaults a request may narrow
    *p = server_slot_params_from_common(&sc->params);
    p->speculative_n_max = sc->n_draft_max;
    p->speculative_n_min = sc->params.speculative.draft.n_min;
    p->speculative_p_min = sc->params.speculative.draft.p_min;
    int64_t iv;
    double  dv;
#define GET_I(key, field, lo, hi) do { iv = p->field; if (!sj_get_int(body, key, &iv, err)) return false; \
        if (iv < (lo) || iv > (hi)) { snprintf(err->msg, sizeof(err->msg), "\"%s\" must be in [%lld, %lld]", key, \
        (long long) (lo), (long long) (hi)); return false; } p->field = (int32_t) iv; } while (0)
#define GET_F(key, field) do { dv = p->field; if (!sj_get_float(body, key, &dv, err)) return false; \
        if (!isfinite(dv)) { snprintf(err->msg, sizeof(err->msg), "\"%s\" must be finite", key); return false; } \
        p->field = (float) dv; } while (0)
    if (mode != COMPL_MODE_NATIVE) {
        GET_I("max_tokens", n_predict, -1, INT32_MAX);
        GET_I("max_completion_tokens", n_predict, -1, INT32_MAX);
    }
    GET_I("n_predict", n_predict, -1, INT32_MAX);
    if (!server_lora_check_field(body, err)) {
        return false;
    }
    GET_I("n_keep", n_keep, -1, INT32_MAX);
    GET_I("n_discard", n_discard, 0, INT32_MAX);
    GET_I("top_k", top_k, INT32_MIN, INT32_MAX);
    // top-n log-probabilities are computed per token on the inference thread: keep the work bounded
    GET_I("n_probs", n_probs, 0, n_vocab < 100 ? n_vocab : 100);
    if (!read_oai_logprobs(body, mode, n_vocab < 100 ? n_vocab : 100, p, err)) {
        return false;
    }
    GET_I("repeat_last_n", repeat_last_n, -1, INT32_MAX);
    GET_I("min_keep", min_keep, 0, n_vocab);
    GET_F("temperature", temperature);
    GET_F("dynatemp_range", dynatemp_range);
    GET_F("dynatemp_exponent", dynatemp_exponent);
    GET_F("top_p", top_p);
    GET_F("min_p", min_p);
    GET_F("typical_p", typical_p);
    GET_F("repeat_penalty", repeat_penalty);
    GET_F("presence_penalty", presence_penalty);
    GET_F("frequency_penalty", frequency_penalty);
    GET_I("speculative.n_max", speculative_n_max, 0, INT32_MAX);
    GET_I("speculative.n_min", speculative_n_min, 0, INT32_MAX);
    GET_F("speculative.p_min", speculative_p_min);
    if (p->repeat_penalty <= 0.0f) {
        snprintf(err->msg, sizeof(err->msg), "\"repeat_penalty\" must be > 0");
        return false;
    }
    iv = p->seed;
    if (!sj_get_int(body, "seed", &iv, err)) {
        return false;
    }
    p->seed = (uint32_t) iv; // -1 wraps to LLAMA_DEFAULT_SEED (random), as llama.cpp
    if (!sj_get_bool(body, "stream", &p->stream, err) || !sj_get_bool(body, "ignore_eos", &p->ignore_eos, err)) {
        return false;
    }
#undef GET_I
#undef GET_F
    const json_t * stop = json_object_get(body, "stop");
    if (stop && !json_is_null(stop)) {
        if (json_is_string(stop) && mode != COMPL_MODE_NATIVE) {
            // OpenAI allows one string
        } else if (!json_is_array(stop) || json_array_size(stop) > SERVER_MAX_STOP_WORDS) {
            snprintf(err->msg, sizeof(err->msg), "\"stop\" must be an array of at most %d strings",
                     SERVER_MAX_STOP_WORDS);
            return false;
        } else {
            size_t i;
            const json_t * w;
            json_array_foreach(stop, i, w) {
                if (!json_is_string(w)) {
                    snprintf(err->msg, sizeof(err->msg), "\"stop\"[%zu] must be a string, got %s", i, sj_type_name(w));
                    return false;
                }
            }
        }
    }
    const json_t * lb = json_object_get(body, "logit_bias");
    if (lb && !json_is_null(lb) && !json_is_array(lb) && !json_is_object(lb)) {
        snprintf(err->msg, sizeof(err->msg), "\"logit_bias\" must be an array or an object, got %s", sj_type_name(lb));
        return false;
    }
    const json_t * smp = json_object_get(body, "samplers");
    if (smp && !json_is_null(smp) && !json_is_array(smp)) {
        snprintf(err->msg, sizeof(err->msg), "\"samplers\" must be an array of names, got %s", sj_type_name(smp));
        return false;
    }
    return true;
}

#ifdef LLAMA_SERVER_HAVE_CHAT
bool server_chat_prompt_tokens(const struct server_context * sc, const json_t * body, struct server_token_vec * out,
                               struct server_chat_params * cp, struct sj_err * err) {
    const json_t * msgs = json_object_get(body, "messages");
    if (!json_is_array(msgs)) {
        snprintf(err->msg, sizeof(err->msg), "\"messages\" must be an array");
        return false;
    }
    char * text = server_apply_chat_template_params(sc, msgs, true, body, cp, err);
    if (!text) {
        return false;
    }
    json_t * js = json_string(text);
    free(text);
    const bool ok = js && server_tokenize_mixed(sc->vocab, js, true, true, out, err);
    json_decref(js);
    if (!ok && !err->msg[0]) {
        snprintf(err->msg, sizeof(err->msg), "out of memory");
    }
    return ok;
}
#endif

#ifdef LLAMA_SERVER_HAVE_CHAT
// llama.cpp's oaicompat_chat_params_parse: the chat format's grammar and extra stop strings replace the request's
// (its lazy-grammar fields are read from the format's grammar directly, server_chat_grammar_lazy)
static bool chat_grammar_to_body(const struct server_context * sc, json_t * body, const struct common_chat_grammar * g,
                                 struct sj_err * err) {
    if (g->n_additional_stops > 0) {
        json_t * stop = json_object_get(body, "stop");
        json_t * list = json_is_array(stop) ? json_deep_copy(stop) : json_array();
        if (list && json_is_string(stop)) {
            json_array_append(list, stop);
        }
        for (size_t i = 0; list && i < g->n_additional_stops; i++) {
            json_array_append_new(list, json_string(g->additional_stops[i]));
        }
        if (list) {
            json_object_set_new(body, "stop", list);
        }
    }
    if (g->grammar) {
        json_object_set_new(body, "__chat_grammar", json_string(g->grammar));
        return server_check_grammar(sc, g->grammar, err);
    }
    return true;
}
#endif

// HTTP thread: validate, build the prompt, tokenize; on error answer and return NULL. body is consumed;
// pre_tokens (may be NULL) is a prompt already built by the caller (/infill), taken over.
static struct server_task * make_completion_task(struct server_context * sc, json_t * body,
                                                 struct server_http_res * res, int mode,
                                                 struct server_token_vec * pre_tokens) {
    struct server_token_vec toks = { 0 };
    if (pre_tokens) {
        toks = *pre_tokens;
        *pre_tokens = (struct server_token_vec) { 0 };
    }
    // the internal keys below are set by this server only, never taken from a client
    json_object_del(body, "__chat_grammar");
    json_object_del(body, "__chat_format");
    json_object_del(body, "__thinking_forced_open");
    json_object_del(body, "__parse_tool_calls");
    struct sj_err err = { { 0 } };
    struct server_slot_params p;
    // the lazy grammar, read once here and carried by the task to the slot and its sampler
    struct server_grammar_lazy * lazy = calloc(1, sizeof(*lazy));
    bool lazy_read = false;
    bool b = true;
    int64_t n_cache_reuse = 0;
    int64_t id_slot = -1;
    bool grammar_ok = true;
    char * grammar = NULL;
    if (!lazy) {
        goto fail;
    }
    if (!server_read_slot_params(sc, body, mode, &p, &err)) {
        goto fail;
    }
    grammar = server_read_grammar(sc, body, mode, &grammar_ok, &err);
    if (!grammar_ok || !server_check_grammar(sc, grammar, &err)) {
        free(grammar);
        goto fail;
    }
    free(grammar);
    if (!sj_get_bool(body, "cache_prompt", &b, &err) || !sj_get_bool(body, "return_tokens", &b, &err) ||
        !sj_get_int(body, "n_cache_reuse", &n_cache_reuse, &err)) {
        goto fail;
    }
    if (!sj_get_int(body, "id_slot", &id_slot, &err) || id_slot < -1 || id_slot >= sc->n_slots) {
        if (!err.msg[0]) {
            snprintf(err.msg, sizeof(err.msg), "\"id_slot\" must be -1 or a slot id below %d", sc->n_slots);
        }
        goto fail;
    }
    if (pre_tokens) {
        // built by the caller
    } else if (server_mode_is_chat(mode)) {
#ifdef LLAMA_SERVER_HAVE_CHAT
        struct server_chat_params cp;
        if (!server_chat_prompt_tokens(sc, body, &toks, &cp, &err)) {
            goto fail;
        }
        // what the inference thread needs to parse the output travels in the request (as llama.cpp's chat_format,
        // thinking_forced_open, parse_tool_calls and grammar)
        json_object_set_new(body, "__chat_format", json_integer(cp.format));
        json_object_set_new(body, "__thinking_forced_open", json_boolean(cp.thinking_forced_open));
        json_object_set_new(body, "__parse_tool_calls", json_boolean(cp.parse_tool_calls));
        // the format's tool-call grammar: the grammar (internal key, it overrides any other) and the extra stop
        // strings travel in the request, its lazy part in the task
        lazy_read = chat_grammar_to_body(sc, body, &cp.tool_grammar, &err) &&
                    server_chat_grammar_lazy(sc, body, &cp.tool_grammar, lazy, &err);
        common_chat_grammar_free(&cp.tool_grammar);
        if (!lazy_read) {
            goto fail;
        }
#else
        server_res_err(res, "chat templates are not available in this build", ERROR_TYPE_NOT_SUPPORTED);
        goto drop;
#endif
    } else {
        const json_t * prompt = json_object_get(body, "prompt");
        if (!prompt) {
            snprintf(err.msg, sizeof(err.msg), "\"prompt\" is required");
            goto fail;
        }
        // OpenAI clients send one prompt as a one-element array
        if (json_is_array(prompt) && json_array_size(prompt) == 1 &&
            (json_is_string(json_array_get(prompt, 0)) || json_is_array(json_array_get(prompt, 0)))) {
            prompt = json_array_get(prompt, 0);
        }
        if (!server_tokenize_mixed(sc->vocab, prompt, true, true, &toks, &err)) {
            goto fail;
        }
    }
    // the request's own lazy-grammar fields (the chat format's replaced them above): a bad trigger is a 400
    // before the task is queued
    if (!lazy_read && !server_read_grammar_lazy(sc, body, lazy, &err)) {
        goto fail;
    }
    if (toks.n == 0) {
        snprintf(err.msg, sizeof(err.msg), "the prompt is empty");
        goto fail;
    }
    if (toks.n >= (size_t) sc->n_ctx_slot) {
        int status = 400;
        char * eb = server_error_body_exceed_context((int) (toks.n > INT_MAX ? INT_MAX : toks.n), sc->n_ctx_slot,
                                                     &status);
        server_http_res_take_body(res, status, eb);
        goto drop;
    }
    struct server_task * t = server_task_new(SERVER_TASK_TYPE_COMPLETION);
    if (!t) {
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        goto drop;
    }
    json_object_set_new(body, "__mode", json_integer(mode));
    t->data         = body;
    t->id_slot      = (int) id_slot;
    t->tokens       = toks.data;
    t->n_tokens     = toks.n;
    t->grammar_lazy = lazy;
    return t;
fail:
    server_res_err(res, err.msg[0] ? err.msg : "out of memory", ERROR_TYPE_INVALID_REQUEST);
drop:
    free(toks.data);
    if (lazy) {
        server_grammar_lazy_free(lazy);
        free(lazy);
    }
    json_decref(body);
    return NULL;
}

void server_complete_body(struct server_context * sc, const struct server_http_req * req, struct server_http_res * res,
                          json_t * body, int mode, struct server_token_vec * pre_tokens) {
    if (sc->params.embedding) {
        free(pre_tokens ? pre_tokens->data : NULL);
        json_decref(body);
        server_res_err(res, "This server does not support completions. Start it without `--embeddings`",
                ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    struct server_task * t = make_completion_task(sc, body, res, mode, pre_tokens);
    if (!t) {
        return;
    }
    const json_t * st = json_object_get(t->data, "stream");
    const bool stream = json_is_true(st);
    if (stream) {
        struct server_http_stream * s = server_http_stream_create(sc->http);
        if (!s) {
            server_task_release(t);
            server_task_release(t);
            server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
            return;
        }
        res->stream       = s;
        res->content_type = "text/event-stream";
        t->stream         = s; // the producer's reference travels with the task
        server_queue_post(&sc->queue, t); // on failure the queue dropped its reference (which ended the stream)
        server_task_release(t);
        return;
    }
    server_respond_task(sc, t, req, res);
}

static void server_handle_completion_mode(const struct server_http_req * req, struct server_http_res * res,
                                          struct server_context * sc, int mode) {
    if (sc->params.embedding) {
        server_res_err(res, "This server does not support completions. Start it without `--embeddings`",
                ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    json_t * body = server_parse_body(req, res);
    if (!body) {
        return;
    }
    server_complete_body(sc, req, res, body, mode, NULL);
}

void server_handle_completion(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    server_handle_completion_mode(req, res, ud, COMPL_MODE_NATIVE);
}
void server_handle_oai_completion(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    server_handle_completion_mode(req, res, ud, COMPL_MODE_OAI_COMPL);
}
void server_handle_oai_chat(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    server_handle_completion_mode(req, res, ud, COMPL_MODE_OAI_CHAT);
}
