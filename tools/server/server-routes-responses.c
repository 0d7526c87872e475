// POST /v1/responses: the subset of OpenAI's Responses API llama.cpp serves. The request is converted to a chat
// request (llama.cpp's convert_responses_to_chatcmpl: "instructions" -> a system message, "input" -> messages,
// "max_output_tokens" -> "max_tokens", function tools) and then takes the chat path; only the result's shape
// differs (server-response-compat.c). No stored state: previous_response_id is refused, as llama.cpp does.
#include "server-context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool str_is(const json_t * obj, const char * key, const char * value) {
    const json_t * v = json_object_get(obj, key);
    return json_is_string(v) && strcmp(json_string_value(v), value) == 0;
}

static bool has_str(const json_t * obj, const char * key) {
    return json_is_string(json_object_get(obj, key));
}

static bool fail(struct sj_err * err, const char * msg) {
    snprintf(err->msg, sizeof(err->msg), "%s", msg);
    return false;
}

// the last message when it is the assistant's (consecutive assistant items merge into one message)
static json_t * prev_assistant(json_t * msgs) {
    const size_t n = json_array_size(msgs);
    json_t * last = n ? json_array_get(msgs, n - 1) : NULL;
    return last && str_is(last, "role", "assistant") ? last : NULL;
}

// an input message of the user / system / developer: input_text parts -> text parts
static bool convert_input_message(const json_t * item, json_t * msgs, struct sj_err * err) {
    json_t * parts = json_array();
    size_t k;
    const json_t * p;
    json_array_foreach(json_object_get(item, "content"), k, p) {
        if (str_is(p, "type", "input_text")) {
            if (!json_object_get(p, "text")) {
                json_decref(parts);
                return fail(err, "'Input text' requires 'text'");
            }
            json_array_append_new(parts, json_pack("{s:O, s:s}", "text", json_object_get(p, "text"), "type", "text"));
        } else if (str_is(p, "type", "input_image")) {
            json_decref(parts);
            return fail(err, "'input_image' is not supported by this server (no multimodal input)");
        } else if (str_is(p, "type", "input_file")) {
            json_decref(parts);
            return fail(err, "'input_file' is not supported by llamacpp at this moment");
        } else {
            json_decref(parts);
            return fail(err, "'type' must be one of 'input_text', 'input_image', or 'input_file'");
        }
    }
    json_t * m = json_deep_copy(item);
    json_object_del(m, "type");
    json_object_del(m, "status");
    json_object_set_new(m, "content", parts);
    json_array_append_new(msgs, m);
    return true;
}

// an output message of the assistant: output_text parts -> text parts
static bool convert_output_message(const json_t * item, json_t * msgs, struct sj_err * err) {
    json_t * parts = json_array();
    size_t k;
    const json_t * p;
    json_array_foreach(json_object_get(item, "content"), k, p) {
        if (!str_is(p, "type", "output_text")) {
            json_decref(parts);
            return fail(err, "'type' must be 'output_text'");
        }
        if (!has_str(p, "text")) {
            json_decref(parts);
            return fail(err, "'Output text' requires 'text'");
        }
        json_array_append_new(parts, json_pack("{s:O, s:s}", "text", json_object_get(p, "text"), "type", "text"));
    }
    json_t * prev = prev_assistant(msgs);
    if (prev) {
        json_t * pc = json_object_get(prev, "content");
        if (!json_is_array(pc)) {
            pc = json_array();
            json_object_set_new(prev, "content", pc);
        }
        json_array_extend(pc, parts);
        json_decref(parts);
        return true;
    }
    json_t * m = json_deep_copy(item);
    json_object_del(m, "status");
    json_object_del(m, "type");
    json_object_set_new(m, "content", parts);
    json_array_append_new(msgs, m);
    return true;
}

static bool convert_item(json_t * item, json_t * msgs, struct sj_err * err) {
    if (!json_is_object(item)) {
        return fail(err, "'input' must be a string or array of objects");
    }
    const json_t * content = json_object_get(item, "content");
    if (json_is_string(content)) {
        // a plain-text input message becomes one input_text part
        json_object_set_new(item, "content", json_pack("[{s:O, s:s}]", "text", content, "type", "input_text"));
        content = json_object_get(item, "content");
    }
    const bool has_content = json_is_array(content) && has_str(item, "role");
    if (has_content && (str_is(item, "role", "user") || str_is(item, "role", "system") ||
                        str_is(item, "role", "developer"))) {
        return convert_input_message(item, msgs, err);
    }
    if (has_content && str_is(item, "role", "assistant") && str_is(item, "type", "message")) {
        return convert_output_message(item, msgs, err);
    }
    if (has_str(item, "arguments") && has_str(item, "call_id") && has_str(item, "name") &&
        str_is(item, "type", "function_call")) {
        json_t * call = json_pack("{s:{s:O, s:O}, s:O, s:s}", "function", "arguments",
                                  json_object_get(item, "arguments"), "name", json_object_get(item, "name"), "id",
                                  json_object_get(item, "call_id"), "type", "function");
        json_t * prev = prev_assistant(msgs);
        if (prev) {
            json_t * calls = json_object_get(prev, "tool_calls");
            if (!json_is_array(calls)) {
                calls = json_array();
                json_object_set_new(prev, "tool_calls", calls);
            }
            json_array_append_new(calls, call);
        } else {
            json_array_append_new(msgs, json_pack("{s:s, s:[o]}", "role", "assistant", "tool_calls", call));
        }
        return true;
    }
    const json_t * output = json_object_get(item, "output");
    if (has_str(item, "call_id") && (json_is_string(output) || json_is_array(output)) &&
        str_is(item, "type", "function_call_output")) {
        json_t * out = json_deep_copy(output);
        size_t k;
        json_t * p;
        json_array_foreach(out, k, p) {
            if (!str_is(p, "type", "input_text")) {
                json_decref(out);
                return fail(err, "Output of tool call should be 'Input text'");
            }
            json_object_set_new(p, "type", json_string("text"));
        }
        json_array_append_new(msgs, json_pack("{s:o, s:s, s:O}", "content", out, "role", "tool", "tool_call_id",
                                              json_object_get(item, "call_id")));
        return true;
    }
    if (json_is_array(json_object_get(item, "summary")) && str_is(item, "type", "reasoning")) {
        const json_t * rc = json_object_get(item, "content");
        if (!json_is_array(rc)) {
            return fail(err, "item['content'] is not an array");
        }
        if (json_array_size(rc) == 0) {
            return fail(err, "item['content'] is empty");
        }
        const json_t * text = json_object_get(json_array_get(rc, 0), "text");
        if (!json_is_string(text)) {
            return fail(err, "item['content']['text'] is not a string");
        }
        json_t * prev = prev_assistant(msgs);
        if (prev) {
            json_object_set(prev, "reasoning_content", (json_t *) text);
        } else {
            json_array_append_new(msgs, json_pack("{s:s, s:[], s:O}", "role", "assistant", "content",
                                                  "reasoning_content", text));
        }
        return true;
    }
    return fail(err, "Cannot determine type of 'item'");
}

// the chat request of a Responses request, or NULL with err set
static json_t * responses_to_chat(const json_t * body, struct sj_err * err) {
    const json_t * input = json_object_get(body, "input");
    if (!input) {
        fail(err, "'input' is required");
        return NULL;
    }
    const json_t * prev_id = json_object_get(body, "previous_response_id");
    if (json_is_string(prev_id) && json_string_length(prev_id) > 0) {
        fail(err, "llama.cpp does not support 'previous_response_id'.");
        return NULL;
    }
    json_t * chat = json_deep_copy(body);
    json_t * msgs = json_array();
    json_object_del(chat, "input");
    const json_t * instr = json_object_get(body, "instructions");
    if (instr) {
        if (!json_is_string(instr) && !json_is_null(instr)) {
            fail(err, "'instructions' must be a string");
            goto bad;
        }
        json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "system", "content",
                                              json_is_string(instr) ? json_string_value(instr) : ""));
        json_object_del(chat, "instructions");
    }
    if (json_is_string(input)) {
        json_array_append_new(msgs, json_pack("{s:s, s:O}", "role", "user", "content", input));
    } else if (json_is_array(input)) {
        size_t i;
        const json_t * it;
        json_array_foreach(input, i, it) {
            json_t * item = json_deep_copy(it);
            const bool ok = convert_item(item, msgs, err);
            json_decref(item);
            if (!ok) {
                goto bad;
            }
        }
    } else {
        fail(err, "'input' must be a string or array of objects");
        goto bad;
    }
    json_object_set_new(chat, "messages", msgs);
    msgs = NULL;
    const json_t * tools = json_object_get(body, "tools");
    if (tools) {
        if (!json_is_array(tools)) {
            fail(err, "'tools' must be an array of objects");
            goto bad;
        }
        json_t * out = json_array();
        size_t i;
        const json_t * t;
        json_array_foreach(tools, i, t) {
            if (!str_is(t, "type", "function")) {
                json_decref(out);
                fail(err, "'type' of tool must be 'function'");
                goto bad;
            }
            json_t * fn = json_deep_copy(t);
            json_object_del(fn, "type");
            if (!json_object_get(fn, "strict")) {
                json_object_set_new(fn, "strict", json_true());
            }
            json_array_append_new(out, json_pack("{s:s, s:o}", "type", "function", "function", fn));
        }
        json_object_set_new(chat, "tools", out);
    }
    const json_t * mot = json_object_get(body, "max_output_tokens");
    if (mot) {
        json_object_set(chat, "max_tokens", (json_t *) mot);
        json_object_del(chat, "max_output_tokens");
    }
    return chat;
bad:
    json_decref(msgs);
    json_decref(chat);
    return NULL;
}

void server_handle_oai_responses(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    json_t * body = server_parse_body(req, res);
    if (!body) {
        return;
    }
    struct sj_err err = { { 0 } };
    json_t * chat = responses_to_chat(body, &err);
    json_decref(body);
    if (!chat) {
        server_res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    server_complete_body(sc, req, res, chat, COMPL_MODE_OAI_RESP, NULL);
}
