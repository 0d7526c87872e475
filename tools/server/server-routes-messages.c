// POST /v1/messages and /v1/messages/count_tokens: the Anthropic Messages API as llama.cpp serves it. The request
// is converted to an OpenAI chat request (llama.cpp's convert_anthropic_to_oai) and then takes the chat path: the
// same template rendering, sampling and slots; only the result's shape differs (server-response-compat.c).
#include "server-context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool type_is(const json_t * block, const char * type) {
    const json_t * t = json_object_get(block, "type");
    return json_is_string(t) && strcmp(json_string_value(t), type) == 0;
}

// the text blocks of a block list, concatenated (system prompts, tool results); a string is taken as is
static bool join_text_blocks(const json_t * v, char ** out, size_t * n, size_t * cap, const char * what,
                             struct sj_err * err) {
    if (json_is_string(v)) {
        return server_sb_add(out, n, cap, json_string_value(v), json_string_length(v));
    }
    if (!json_is_array(v)) {
        snprintf(err->msg, sizeof(err->msg), "\"%s\" must be a string or an array of content blocks, got %s", what,
                 sj_type_name(v));
        return false;
    }
    size_t i;
    const json_t * b;
    json_array_foreach(v, i, b) {
        if (!json_is_object(b)) {
            snprintf(err->msg, sizeof(err->msg), "\"%s\"[%zu] must be an object, got %s", what, i, sj_type_name(b));
            return false;
        }
        const json_t * text = json_object_get(b, "text");
        if (type_is(b, "text") && json_is_string(text) &&
            !server_sb_add(out, n, cap, json_string_value(text), json_string_length(text))) {
            return false;
        }
    }
    return true;
}

// one message with block content -> the chat message (text parts, tool_calls, reasoning_content) and the
// "tool" messages of its tool_result blocks, appended to out
static bool convert_blocks(const char * role, const json_t * content, size_t mi, json_t * out,
                           struct sj_err * err) {
    json_t * parts = json_array();
    json_t * calls = json_array();
    json_t * results = json_array();
    char * reasoning = NULL;
    size_t n_reasoning = 0, cap_reasoning = 0;
    bool ok = parts && calls && results;
    size_t k;
    const json_t * b;
    json_array_foreach(content, k, b) {
        if (!ok) {
            break;
        }
        if (!json_is_object(b) || !json_is_string(json_object_get(b, "type"))) {
            snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu].content[%zu] must be an object with a \"type\"",
                     mi, k);
            ok = false;
        } else if (type_is(b, "text")) {
            if (!json_is_string(json_object_get(b, "text"))) {
                snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu].content[%zu].text must be a string", mi, k);
                ok = false;
            } else {
                ok = json_array_append_new(parts, json_pack("{s:s, s:O}", "type", "text", "text",
                                                            json_object_get(b, "text"))) == 0;
            }
        } else if (type_is(b, "thinking")) {
            const json_t * th = json_object_get(b, "thinking");
            if (json_is_string(th)) {
                ok = server_sb_add(&reasoning, &n_reasoning, &cap_reasoning, json_string_value(th),
                                   json_string_length(th));
            }
        } else if (type_is(b, "image")) {
            snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu].content[%zu]: image input is not supported", mi, k);
            ok = false;
        } else if (type_is(b, "tool_use")) {
            const json_t * id = json_object_get(b, "id");
            const json_t * name = json_object_get(b, "name");
            const json_t * input = json_object_get(b, "input");
            char * args = sj_dumps(json_is_object(input) ? input : json_object());
            ok = args && json_array_append_new(calls, json_pack("{s:s, s:s, s:{s:s, s:s}}", "id",
                                                                 json_is_string(id) ? json_string_value(id) : "",
                                                                 "type", "function", "function", "name",
                                                                 json_is_string(name) ? json_string_value(name) : "",
                                                                 "arguments", args)) == 0;
            free(args);
        } else if (type_is(b, "tool_result")) {
            const json_t * id = json_object_get(b, "tool_use_id");
            char * text = NULL;
            size_t nt = 0, ct = 0;
            const json_t * rc = json_object_get(b, "content");
            if (rc && !json_is_null(rc)) {
                ok = join_text_blocks(rc, &text, &nt, &ct, "tool_result.content", err);
            }
            if (ok) {
                ok = json_array_append_new(results, json_pack("{s:s, s:s, s:s}", "role", "tool", "tool_call_id",
                                                              json_is_string(id) ? json_string_value(id) : "",
                                                              "content", text ? text : "")) == 0;
            }
            free(text);
        }
        // other block types are ignored, as llama.cpp does
    }
    if (ok && (json_array_size(parts) > 0 || json_array_size(calls) > 0 || n_reasoning > 0)) {
        json_t * m = json_pack("{s:s}", "role", role);
        ok = m != NULL;
        if (ok) {
            // llama.cpp: a turn of only tool calls / reasoning gets an empty text
            json_object_set_new(m, "content", json_array_size(parts) > 0 ? json_incref(parts) : json_string(""));
            if (json_array_size(calls) > 0) {
                json_object_set(m, "tool_calls", calls);
            }
            if (n_reasoning > 0) {
                json_object_set_new(m, "reasoning_content", json_stringn(reasoning, n_reasoning));
            }
            json_array_append_new(out, m);
        }
    }
    if (ok) {
        json_array_extend(out, results);
    }
    json_decref(parts);
    json_decref(calls);
    json_decref(results);
    free(reasoning);
    return ok;
}

static bool convert_messages(const json_t * body, json_t * out, struct sj_err * err) {
    const json_t * system = json_object_get(body, "system");
    if (system && !json_is_null(system)) {
        char * text = NULL;
        size_t n = 0, cap = 0;
        if (!join_text_blocks(system, &text, &n, &cap, "system", err)) {
            free(text);
            return false;
        }
        json_array_append_new(out, json_pack("{s:s, s:s%}", "role", "system", "content", text ? text : "", n));
        free(text);
    }
    const json_t * msgs = json_object_get(body, "messages");
    if (!msgs || json_is_null(msgs)) {
        snprintf(err->msg, sizeof(err->msg), "'messages' is required");
        return false;
    }
    if (!json_is_array(msgs)) {
        snprintf(err->msg, sizeof(err->msg), "\"messages\" must be an array, got %s", sj_type_name(msgs));
        return false;
    }
    size_t i;
    const json_t * m;
    json_array_foreach(msgs, i, m) {
        const json_t * role = json_object_get(m, "role");
        if (!json_is_object(m) || !json_is_string(role)) {
            snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu] must be an object with a string \"role\"", i);
            return false;
        }
        const json_t * content = json_object_get(m, "content");
        if (!content) {
            // llama.cpp: an assistant turn without content is dropped, others pass unchanged
            if (strcmp(json_string_value(role), "assistant") != 0) {
                json_array_append_new(out, json_deep_copy(m));
            }
        } else if (json_is_array(content)) {
            if (!convert_blocks(json_string_value(role), content, i, out, err)) {
                if (!err->msg[0]) {
                    snprintf(err->msg, sizeof(err->msg), "out of memory");
                }
                return false;
            }
        } else if (json_is_string(content)) {
            json_array_append_new(out, json_deep_copy(m));
        } else {
            snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu].content must be a string or an array, got %s", i,
                     sj_type_name(content));
            return false;
        }
    }
    return true;
}

static bool convert_tools(const json_t * body, json_t * oai, struct sj_err * err) {
    const json_t * tools = json_object_get(body, "tools");
    if (tools && !json_is_null(tools)) {
        if (!json_is_array(tools)) {
            snprintf(err->msg, sizeof(err->msg), "\"tools\" must be an array, got %s", sj_type_name(tools));
            return false;
        }
        json_t * out = json_array();
        size_t i;
        const json_t * t;
        json_array_foreach(tools, i, t) {
            const json_t * name = json_object_get(t, "name");
            const json_t * desc = json_object_get(t, "description");
            const json_t * schema = json_object_get(t, "input_schema");
            json_array_append_new(out, json_pack("{s:s, s:{s:s, s:s, s:o}}", "type", "function", "function", "name",
                                                 json_is_string(name) ? json_string_value(name) : "", "description",
                                                 json_is_string(desc) ? json_string_value(desc) : "", "parameters",
                                                 schema ? json_deep_copy(schema) : json_object()));
        }
        json_object_set_new(oai, "tools", out);
    }
    const json_t * tc = json_object_get(body, "tool_choice");
    if (json_is_object(tc)) {
        if (type_is(tc, "auto")) {
            json_object_set_new(oai, "tool_choice", json_string("auto"));
        } else if (type_is(tc, "any") || type_is(tc, "tool")) {
            json_object_set_new(oai, "tool_choice", json_string("required"));
        }
    }
    return true;
}

// llama.cpp's convert_anthropic_to_oai, with the malformed-input checks it leaves to later stages made explicit.
// NULL with err set on a bad request.
static json_t * anthropic_to_oai(const json_t * body, struct sj_err * err) {
    json_t * oai = json_object();
    json_t * msgs = json_array();
    if (!oai || !msgs) {
        json_decref(oai);
        json_decref(msgs);
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return NULL;
    }
    json_object_set_new(oai, "messages", msgs);
    if (!convert_messages(body, msgs, err) || !convert_tools(body, oai, err)) {
        json_decref(oai);
        return NULL;
    }
    const json_t * stop = json_object_get(body, "stop_sequences");
    if (stop) {
        if (!json_is_null(stop) && !json_is_array(stop)) {
            snprintf(err->msg, sizeof(err->msg), "\"stop_sequences\" must be an array of strings, got %s",
                     sj_type_name(stop));
            json_decref(oai);
            return NULL;
        }
        json_object_set(oai, "stop", (json_t *) stop);
    }
    // required by Anthropic; llama.cpp is permissive and defaults to 4096
    int64_t max_tokens = 4096;
    if (!sj_get_int(body, "max_tokens", &max_tokens, err)) {
        json_decref(oai);
        return NULL;
    }
    if (max_tokens < 1) {
        snprintf(err->msg, sizeof(err->msg), "\"max_tokens\" must be >= 1");
        json_decref(oai);
        return NULL;
    }
    json_object_set_new(oai, "max_tokens", json_integer(max_tokens));
    static const char * const pass[] = { "temperature", "top_p", "top_k", "stream" };
    for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
        json_t * v = json_object_get(body, pass[i]);
        if (v) {
            json_object_set(oai, pass[i], v);
        }
    }
    return oai;
}

// the request body as an OpenAI chat request; NULL with the error answered
static json_t * anthropic_request(const struct server_http_req * req, struct server_http_res * res) {
    json_t * body = server_parse_body(req, res);
    if (!body) {
        return NULL;
    }
    struct sj_err err = { { 0 } };
    json_t * oai = anthropic_to_oai(body, &err);
    json_decref(body);
    if (!oai) {
        server_res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
    }
    return oai;
}

void server_handle_anthropic_messages(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    json_t * oai = anthropic_request(req, res);
    if (oai) {
        server_complete_body(sc, req, res, oai, COMPL_MODE_ANTHROPIC, NULL);
    }
}

void server_handle_anthropic_count_tokens(const struct server_http_req * req, struct server_http_res * res,
                                          void * ud) {
    struct server_context * sc = ud;
    json_t * oai = anthropic_request(req, res);
    if (!oai) {
        return;
    }
#ifdef LLAMA_SERVER_HAVE_CHAT
    struct sj_err err = { { 0 } };
    // the prompt /v1/messages would evaluate: the rendered template, tokenized with the special tokens
    struct server_token_vec toks = { 0 };
    const bool ok = server_chat_prompt_tokens(sc, oai, &toks, NULL, &err);
    json_decref(oai);
    free(toks.data);
    if (!ok) {
        server_res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    server_res_json(res, json_pack("{s:i}", "input_tokens", (json_int_t) toks.n));
#else
    (void) sc;
    json_decref(oai);
    server_res_err(res, "chat templates are not available in this build", ERROR_TYPE_NOT_SUPPORTED);
#endif
}
