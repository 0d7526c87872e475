// Results of /v1/messages (Anthropic Messages API) and /v1/responses (OpenAI Responses API) in llama.cpp's
// shapes: the final objects and the named SSE events of their streams. The generation itself is the chat path's;
// only the rendering differs. Tool calls and reasoning are not parsed out of the text by this server, so the
// only content block is the text.
#include "server-context.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

// llama.cpp: a stop string or EOS ends the turn; every other end is a limit
static const char * anthropic_stop_reason(const struct server_slot * s) {
    const bool stopped = s->stop_type && (strcmp(s->stop_type, "word") == 0 || strcmp(s->stop_type, "eos") == 0);
    return stopped ? "end_turn" : "max_tokens";
}

static json_t * anthropic_stop_sequence(const struct server_slot * s) {
    return s->stopping_word && s->stopping_word[0] ? json_string(s->stopping_word) : json_null();
}

static json_t * anthropic_usage(const struct server_slot * s, int output_tokens) {
    return json_pack("{s:i, s:i, s:i}", "cache_read_input_tokens", s->n_prompt_reused, "input_tokens",
                     s->n_prompt - s->n_prompt_reused, "output_tokens", output_tokens);
}

json_t * server_final_json_anthropic(const struct server_context * sc, const struct server_slot * s) {
    json_t * content = json_array();
    if (s->n_text > 0) {
        json_array_append_new(content, json_pack("{s:s, s:o}", "type", "text", "text",
                                                 sj_string_lossy(s->text, s->n_text)));
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

bool server_stream_partial_anthropic(const struct server_context * sc, struct server_slot * s, const char * d,
                                     size_t n) {
    if (!anthropic_begin(sc, s)) {
        return false;
    }
    if (n == 0) {
        return true;
    }
    if (!s->sse_text_begun) {
        s->sse_text_begun = true;
        json_t * ev = json_pack("{s:s, s:i, s:{s:s, s:s}}", "type", "content_block_start", "index", 0,
                                "content_block", "type", "text", "text", "");
        if (!server_stream_send_event(s, "content_block_start", ev)) {
            return false;
        }
    }
    json_t * ev = json_pack("{s:s, s:i, s:{s:s, s:o}}", "type", "content_block_delta", "index", 0, "delta", "type",
                            "text_delta", "text", sj_string_lossy(d, n));
    return server_stream_send_event(s, "content_block_delta", ev);
}

bool server_stream_final_anthropic(const struct server_context * sc, struct server_slot * s) {
    if (!anthropic_begin(sc, s)) {
        return false;
    }
    if (s->sse_text_begun &&
        !server_stream_send_event(s, "content_block_stop",
                                  json_pack("{s:s, s:i}", "type", "content_block_stop", "index", 0))) {
        return false;
    }
    json_t * md = json_pack("{s:s, s:{s:s, s:o}, s:{s:i}}", "type", "message_delta", "delta", "stop_reason",
                            anthropic_stop_reason(s), "stop_sequence", anthropic_stop_sequence(s), "usage",
                            "output_tokens", s->n_decoded);
    // no [DONE]: message_stop ends an Anthropic stream
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
                     sj_string_lossy(s->text ? s->text : "", s->n_text));
}

static json_t * resp_message_item(const struct server_slot * s) {
    return json_pack("{s:s, s:s, s:[o], s:s, s:s}", "type", "message", "status", "completed", "content",
                     resp_text_part(s), "id", s->resp_msg_id, "role", "assistant");
}

// the output items: one message when there is text (llama.cpp leaves an empty message out)
static json_t * resp_output(const struct server_slot * s) {
    json_t * out = json_array();
    if (s->n_text > 0) {
        json_array_append_new(out, resp_message_item(s));
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

bool server_stream_partial_resp(const struct server_context * sc, struct server_slot * s, const char * d, size_t n) {
    (void) sc;
    if (!resp_begin(s)) {
        return false;
    }
    if (n == 0) {
        return true;
    }
    if (!s->sse_text_begun) {
        s->sse_text_begun = true;
        json_t * item = json_pack("{s:[], s:s, s:s, s:s, s:s}", "content", "id", s->resp_msg_id, "role", "assistant",
                                  "status", "in_progress", "type", "message");
        if (!server_stream_send_event(s, "response.output_item.added",
                                      json_pack("{s:s, s:o}", "type", "response.output_item.added", "item", item)) ||
            !server_stream_send_event(s, "response.content_part.added",
                                      json_pack("{s:s, s:s, s:{s:s, s:s}}", "type", "response.content_part.added",
                                                "item_id", s->resp_msg_id, "part", "type", "output_text", "text",
                                                ""))) {
            return false;
        }
    }
    return server_stream_send_event(s, "response.output_text.delta",
                                    json_pack("{s:s, s:s, s:o}", "type", "response.output_text.delta", "item_id",
                                              s->resp_msg_id, "delta", sj_string_lossy(d, n)));
}

bool server_stream_final_resp(const struct server_context * sc, struct server_slot * s) {
    if (!resp_begin(s)) {
        return false;
    }
    if (s->n_text > 0) {
        if (!server_stream_send_event(s, "response.output_text.done",
                                      json_pack("{s:s, s:s, s:o}", "type", "response.output_text.done", "item_id",
                                                s->resp_msg_id, "text", sj_string_lossy(s->text, s->n_text))) ||
            !server_stream_send_event(s, "response.content_part.done",
                                      json_pack("{s:s, s:s, s:o}", "type", "response.content_part.done", "item_id",
                                                s->resp_msg_id, "part", resp_text_part(s))) ||
            !server_stream_send_event(s, "response.output_item.done",
                                      json_pack("{s:s, s:o}", "type", "response.output_item.done", "item",
                                                resp_message_item(s)))) {
            return false;
        }
    }
    json_t * r = json_pack("{s:s, s:s, s:I, s:s, s:s, s:o, s:o}", "id", s->resp_id, "object", "response",
                           "created_at", (json_int_t) time(NULL), "status", "completed", "model", sc->model_name,
                           "output", resp_output(s), "usage", resp_usage(s));
    json_t * done = json_pack("{s:s, s:o, s:o}", "type", "response.completed", "response", r, "timings",
                              server_timings_json(s));
    // then [DONE], as llama.cpp ends every OpenAI-shaped stream
    return server_stream_send_event(s, "response.completed", done) &&
           server_http_stream_write(s->task->stream, "data: [DONE]\n\n", 14);
}
