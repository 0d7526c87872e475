// Results of /v1/messages (Anthropic Messages API) and /v1/responses (OpenAI Responses API) in llama.cpp's
// shapes: the final objects and the named SSE events of their streams. The generation itself is the chat path's;
// only the rendering differs. The text is the chat output parsed in the template's format (server-chat-msg.c):
// Anthropic gets thinking / text / tool_use blocks, Responses reasoning / message / function_call items, streamed
// from the same diffs as /v1/chat/completions' deltas.
#include "server-context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// llama.cpp: a stop string or EOS ends the turn (or asks for the tools it called); every other end is a limit
static const char * anthropic_stop_reason(const struct server_slot * s) {
    const bool stopped = s->stop_type && (strcmp(s->stop_type, "word") == 0 || strcmp(s->stop_type, "eos") == 0);
    if (!stopped) {
        return "max_tokens";
    }
    return s->chat_msg.n_tool_calls > 0 ? "tool_use" : "end_turn";
}

static json_t * str_json(const char * v) {
    return sj_string_lossy(v ? v : "", v ? strlen(v) : 0);
}

static bool nonempty(const char * v) {
    return v && v[0];
}

static json_t * anthropic_stop_sequence(const struct server_slot * s) {
    return s->stopping_word && s->stopping_word[0] ? json_string(s->stopping_word) : json_null();
}

static json_t * anthropic_usage(const struct server_slot * s, int output_tokens) {
    return json_pack("{s:i, s:i, s:i}", "cache_read_input_tokens", s->n_prompt_reused, "input_tokens",
                     s->n_prompt - s->n_prompt_reused, "output_tokens", output_tokens);
}

// a tool call's arguments as the JSON value Anthropic's tool_use.input wants ({} when they do not parse)
static json_t * tool_input(const struct common_chat_tool_call * tc) {
    json_t * v = tc->arguments ? json_loads(tc->arguments, JSON_DECODE_ANY, NULL) : NULL;
    return v ? v : json_object();
}

json_t * server_final_json_anthropic(const struct server_context * sc, const struct server_slot * s) {
    const struct common_chat_msg * m = &s->chat_msg;
    json_t * content = json_array();
    if (nonempty(m->reasoning_content)) {
        // an empty signature: local models cannot sign their thoughts
        json_array_append_new(content, json_pack("{s:s, s:o, s:s}", "type", "thinking", "thinking",
                                                 str_json(m->reasoning_content), "signature", ""));
    }
    if (nonempty(m->content)) {
        json_array_append_new(content, json_pack("{s:s, s:o}", "type", "text", "text", str_json(m->content)));
    }
    for (size_t i = 0; i < m->n_tool_calls; i++) {
        const struct common_chat_tool_call * tc = &m->tool_calls[i];
        json_array_append_new(content, json_pack("{s:s, s:o, s:o, s:o}", "type", "tool_use", "id", str_json(tc->id),
                                                 "name", str_json(tc->name), "input", tool_input(tc)));
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:o, s:o}", "id", s->oai_id, "type", "message", "role",
                     "assistant", "content", content, "model", sc->model_name, "stop_reason",
                     anthropic_stop_reason(s), "stop_sequence", anthropic_stop_sequence(s), "usage",
                     anthropic_usage(s, s->n_decoded));
}

// message_start once, before anything else of the stream
static bool anthropic_begin(const struct server_context * sc, struct server_slot * s) {
    if (s->sse_begun) {
        return true;
    }
    s->sse_begun = true;
    json_t * msg = json_pack("{s:s, s:s, s:s, s:[], s:s, s:n, s:n, s:o}", "id", s->oai_id, "type", "message", "role",
                             "assistant", "content", "model", sc->model_name, "stop_reason", "stop_sequence",
                             "usage", anthropic_usage(s, 0));
    return server_stream_send_event(s, "message_start",
                                    json_pack("{s:s, s:o}", "type", "message_start", "message", msg));
}

static bool block_event(struct server_slot * s, const char * name, int index, const char * key, json_t * value) {
    return server_stream_send_event(s, name, json_pack("{s:s, s:i, s:o}", "type", name, "index", index, key, value));
}

// content blocks are numbered in the order they open: thinking, text, then one per tool call
static int open_block(struct server_slot * s, int * index, json_t * block) {
    if (*index >= 0) {
        json_decref(block);
        return *index;
    }
    *index = s->sse_next_block++;
    return block_event(s, "content_block_start", *index, "content_block", block) ? *index : -1;
}

static bool record_tool_block(struct server_slot * s, size_t i, int index) {
    if (i >= s->n_sse_tool_blocks) {
        int * v = realloc(s->sse_tool_blocks, (i + 1) * sizeof(int));
        if (!v) {
            return false;
        }
        s->sse_tool_blocks = v;
        while (s->n_sse_tool_blocks <= i) {
            s->sse_tool_blocks[s->n_sse_tool_blocks++] = -1;
        }
    }
    s->sse_tool_blocks[i] = index;
    return true;
}

bool server_stream_partial_anthropic(const struct server_context * sc, struct server_slot * s,
                                     const struct common_chat_msg_diff * diffs, size_t n_diffs) {
    if (!anthropic_begin(sc, s)) {
        return false;
    }
    for (size_t i = 0; i < n_diffs; i++) {
        const struct common_chat_msg_diff * d = &diffs[i];
        if (d->reasoning_content_delta[0]) {
            const int b = open_block(s, &s->sse_think_block, json_pack("{s:s, s:s}", "type", "thinking", "thinking", ""));
            if (b < 0 || !block_event(s, "content_block_delta", b, "delta",
                                      json_pack("{s:s, s:o}", "type", "thinking_delta", "thinking",
                                                str_json(d->reasoning_content_delta)))) {
                return false;
            }
        }
        if (d->content_delta[0]) {
            const int b = open_block(s, &s->sse_text_block, json_pack("{s:s, s:s}", "type", "text", "text", ""));
            if (b < 0 || !block_event(s, "content_block_delta", b, "delta",
                                      json_pack("{s:s, s:o}", "type", "text_delta", "text", str_json(d->content_delta)))) {
                return false;
            }
        }
        if (d->tool_call_index != SIZE_MAX) {
            const size_t k = d->tool_call_index;
            int b = k < s->n_sse_tool_blocks ? s->sse_tool_blocks[k] : -1;
            if (b < 0) {
                const struct common_chat_tool_call * tc = k < s->chat_msg.n_tool_calls ? &s->chat_msg.tool_calls[k]
                                                                                        : &d->tool_call_delta;
                b = open_block(s, &b, json_pack("{s:s, s:o, s:o, s:{}}", "type", "tool_use", "id", str_json(tc->id),
                                                "name", str_json(tc->name), "input"));
                if (b < 0 || !record_tool_block(s, k, b)) {
                    return false;
                }
            }
            if (d->tool_call_delta.arguments[0] &&
                !block_event(s, "content_block_delta", b, "delta",
                             json_pack("{s:s, s:o}", "type", "input_json_delta", "partial_json",
                                       str_json(d->tool_call_delta.arguments)))) {
                return false;
            }
        }
    }
    return true;
}

bool server_stream_close_anthropic(const struct server_context * sc, struct server_slot * s) {
    (void) sc;
    // every open block closes, in order; a thinking block gets llama.cpp's empty signature first
    for (int b = 0; b < s->sse_next_block; b++) {
        if (b == s->sse_think_block &&
            !block_event(s, "content_block_delta", b, "delta", json_pack("{s:s, s:s}", "type", "signature_delta",
                                                                         "signature", ""))) {
            return false;
        }
        if (!server_stream_send_event(s, "content_block_stop",
                                      json_pack("{s:s, s:i}", "type", "content_block_stop", "index", b))) {
            return false;
        }
    }
    json_t * md = json_pack("{s:s, s:{s:s, s:o}, s:{s:i}}", "type", "message_delta", "delta", "stop_reason",
                            anthropic_stop_reason(s), "stop_sequence", anthropic_stop_sequence(s), "usage",
                            "output_tokens", s->n_decoded);
    return server_stream_send_event(s, "message_delta", md) &&
           server_stream_send_event(s, "message_stop", json_pack("{s:s}", "type", "message_stop"));
}

//
// OpenAI Responses API
//

static json_t * resp_usage(const struct server_slot * s) {
    return json_pack("{s:i, s:i, s:i, s:{s:i}}", "input_tokens", s->n_prompt, "output_tokens", s->n_decoded,
                     "total_tokens", s->n_prompt + s->n_decoded, "input_tokens_details", "cached_tokens",
                     s->n_prompt_reused);
}

static json_t * resp_text_part(const struct server_slot * s) {
    return json_pack("{s:s, s:[], s:[], s:o}", "type", "output_text", "annotations", "logprobs", "text",
                     str_json(s->chat_msg.content));
}

static json_t * resp_message_item(const struct server_slot * s) {
    return json_pack("{s:s, s:s, s:[o], s:s, s:s}", "type", "message", "status", "completed", "content",
                     resp_text_part(s), "id", s->resp_msg_id, "role", "assistant");
}

static json_t * resp_reasoning_item(const struct server_slot * s) {
    return json_pack("{s:s, s:[], s:s, s:[{s:o, s:s}], s:s, s:s}", "id", s->resp_rs_id, "summary", "type",
                     "reasoning", "content", "text", str_json(s->chat_msg.reasoning_content), "type", "reasoning_text",
                     "encrypted_content", "", "status", "completed");
}

// llama.cpp names a call's item "fc_<id>" and its call_id "call_<id>"
static json_t * resp_call_item(const struct common_chat_tool_call * tc, const char * status) {
    char id[160], call_id[160];
    snprintf(id, sizeof(id), "fc_%.150s", tc->id ? tc->id : "");
    snprintf(call_id, sizeof(call_id), "call_%.150s", tc->id ? tc->id : "");
    return json_pack("{s:s, s:s, s:s, s:o, s:s, s:o}", "id", id, "type", "function_call", "status", status,
                     "arguments", str_json(tc->arguments), "call_id", call_id, "name", str_json(tc->name));
}

// the output items: reasoning, the message when there is text (llama.cpp leaves an empty one out), the calls
static json_t * resp_output(const struct server_slot * s) {
    json_t * out = json_array();
    if (nonempty(s->chat_msg.reasoning_content)) {
        json_array_append_new(out, resp_reasoning_item(s));
    }
    if (nonempty(s->chat_msg.content)) {
        json_array_append_new(out, resp_message_item(s));
    }
    for (size_t i = 0; i < s->chat_msg.n_tool_calls; i++) {
        json_array_append_new(out, resp_call_item(&s->chat_msg.tool_calls[i], "completed"));
    }
    return out;
}

json_t * server_final_json_resp(const struct server_context * sc, const struct server_slot * s) {
    const json_int_t t = (json_int_t) time(NULL);
    return json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:s, s:o}", "completed_at", t, "created_at", t, "id", s->resp_id,
                     "model", sc->model_name, "object", "response", "output", resp_output(s), "status", "completed",
                     "usage", resp_usage(s));
}

static bool resp_begin(struct server_slot * s) {
    if (s->sse_begun) {
        return true;
    }
    s->sse_begun = true;
    return server_stream_send_event(s, "response.created",
                                    json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "response.created", "response",
                                              "id", s->resp_id, "object", "response", "status", "in_progress")) &&
           server_stream_send_event(s, "response.in_progress",
                                    json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "response.in_progress", "response",
                                              "id", s->resp_id, "object", "response", "status", "in_progress"));
}

static bool resp_event(struct server_slot * s, const char * name, json_t * data) {
    if (data) {
        json_object_set_new(data, "type", json_string(name));
    }
    return server_stream_send_event(s, name, data);
}

bool server_stream_partial_resp(const struct server_context * sc, struct server_slot * s,
                                const struct common_chat_msg_diff * diffs, size_t n_diffs) {
    (void) sc;
    if (!resp_begin(s)) {
        return false;
    }
    for (size_t i = 0; i < n_diffs; i++) {
        const struct common_chat_msg_diff * d = &diffs[i];
        if (d->reasoning_content_delta[0]) {
            if (s->sse_think_block < 0) {
                s->sse_think_block = 0;
                json_t * item = json_pack("{s:s, s:[], s:s, s:[], s:s, s:s}", "id", s->resp_rs_id, "summary", "type",
                                          "reasoning", "content", "encrypted_content", "", "status", "in_progress");
                if (!resp_event(s, "response.output_item.added", json_pack("{s:o}", "item", item))) {
                    return false;
                }
            }
            if (!resp_event(s, "response.reasoning_text.delta",
                            json_pack("{s:o, s:s}", "delta", str_json(d->reasoning_content_delta), "item_id",
                                      s->resp_rs_id))) {
                return false;
            }
        }
        if (d->content_delta[0]) {
            if (!s->sse_text_begun) {
                s->sse_text_begun = true;
                json_t * item = json_pack("{s:[], s:s, s:s, s:s, s:s}", "content", "id", s->resp_msg_id, "role",
                                          "assistant", "status", "in_progress", "type", "message");
                if (!resp_event(s, "response.output_item.added", json_pack("{s:o}", "item", item)) ||
                    !resp_event(s, "response.content_part.added",
                                json_pack("{s:s, s:{s:s, s:s}}", "item_id", s->resp_msg_id, "part", "type",
                                          "output_text", "text", ""))) {
                    return false;
                }
            }
            if (!resp_event(s, "response.output_text.delta",
                            json_pack("{s:s, s:o}", "item_id", s->resp_msg_id, "delta", str_json(d->content_delta)))) {
                return false;
            }
        }
        if (d->tool_call_index != SIZE_MAX) {
            const struct common_chat_tool_call * tc = &d->tool_call_delta;
            const size_t k = d->tool_call_index;
            const struct common_chat_tool_call * full = k < s->chat_msg.n_tool_calls ? &s->chat_msg.tool_calls[k] : tc;
            if (k >= s->n_sse_tool_blocks || s->sse_tool_blocks[k] < 0) {
                json_t * item = resp_call_item(full, "in_progress");
                json_object_set_new(item, "arguments", json_string(""));
                if (!record_tool_block(s, k, (int) k) ||
                    !resp_event(s, "response.output_item.added", json_pack("{s:o}", "item", item))) {
                    return false;
                }
            }
            char item_id[160];
            snprintf(item_id, sizeof(item_id), "fc_%.150s", full->id ? full->id : "");
            if (tc->arguments[0] &&
                !resp_event(s, "response.function_call_arguments.delta",
                            json_pack("{s:o, s:s}", "delta", str_json(tc->arguments), "item_id", item_id))) {
                return false;
            }
        }
    }
    return true;
}

bool server_stream_close_resp(const struct server_context * sc, struct server_slot * s) {
    const struct common_chat_msg * m = &s->chat_msg;
    if (nonempty(m->reasoning_content) &&
        !resp_event(s, "response.output_item.done", json_pack("{s:o}", "item", resp_reasoning_item(s)))) {
        return false;
    }
    if (nonempty(m->content)) {
        if (!resp_event(s, "response.output_text.done",
                        json_pack("{s:s, s:o}", "item_id", s->resp_msg_id, "text", str_json(m->content))) ||
            !resp_event(s, "response.content_part.done",
                        json_pack("{s:s, s:o}", "item_id", s->resp_msg_id, "part", resp_text_part(s))) ||
            !resp_event(s, "response.output_item.done", json_pack("{s:o}", "item", resp_message_item(s)))) {
            return false;
        }
    }
    for (size_t i = 0; i < m->n_tool_calls; i++) {
        if (!resp_event(s, "response.output_item.done",
                        json_pack("{s:o}", "item", resp_call_item(&m->tool_calls[i], "completed")))) {
            return false;
        }
    }
    json_t * r = json_pack("{s:s, s:s, s:I, s:s, s:s, s:o, s:o}", "id", s->resp_id, "object", "response",
                           "created_at", (json_int_t) time(NULL), "status", "completed", "model", sc->model_name,
                           "output", resp_output(s), "usage", resp_usage(s));
    json_t * done = json_pack("{s:s, s:o, s:o}", "type", "response.completed", "response", r, "timings",
                              server_timings_json(s));
    return server_stream_send_event(s, "response.completed", done);
}
