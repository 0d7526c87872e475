// Result JSON of a completion: final responses, streamed chunks, errors, token probabilities.
#include "server-context.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char * server_finish_reason(const struct server_slot * s) {
    if (s->stop_type && strcmp(s->stop_type, "limit") == 0) {
        return "length";
    }
    // llama.cpp: a chat turn that ends with tool calls asks for them
    return s->chat_parse && s->chat_msg.n_tool_calls > 0 ? "tool_calls" : "stop";
}

json_t * server_timings_json(const struct server_slot * s) {
    const int n_eval = s->n_prompt - s->n_prompt_reused;
    return json_pack("{s:i, s:i, s:f, s:f, s:f, s:i, s:f, s:f, s:f, s:i, s:i}",
                     "cache_n", s->n_prompt_reused,
                     "prompt_n", n_eval,
                     "prompt_ms", s->t_prompt_ms,
                     "prompt_per_token_ms", n_eval > 0 ? s->t_prompt_ms / n_eval : 0.0,
                     "prompt_per_second", s->t_prompt_ms > 0 ? 1e3 * n_eval / s->t_prompt_ms : 0.0,
                     "predicted_n", s->n_decoded,
                     "predicted_ms", s->t_gen_ms,
                     "predicted_per_token_ms", s->n_decoded > 0 ? s->t_gen_ms / s->n_decoded : 0.0,
                     "predicted_per_second", s->t_gen_ms > 0 ? 1e3 * s->n_decoded / s->t_gen_ms : 0.0,
                     "draft_n", s->n_draft_total,
                     "draft_n_accepted", s->n_draft_accepted);
}

json_t * server_usage_json(const struct server_slot * s) {
    return json_pack("{s:i, s:i, s:i}", "completion_tokens", s->n_decoded, "prompt_tokens", s->n_prompt,
                     "total_tokens", s->n_decoded + s->n_prompt);
}

json_t * server_oai_base(const struct server_context * sc, const struct server_slot * s, const char * object) {
    return json_pack("{s:I, s:s, s:s, s:s, s:s}", "created", (json_int_t) s->created, "id", s->oai_id,
                     "model", sc->model_name, "system_fingerprint", server_build_info(), "object", object);
}

// the prompt as text, special tokens rendered (llama.cpp's tokens.detokenize(ctx, true))
static json_t * prompt_text(const struct server_context * sc, const struct server_slot * s) {
    int32_t cap = 256 + 8 * s->n_prompt;
    char * buf = malloc((size_t) cap);
    int32_t n = buf ? llama_detokenize(sc->vocab, s->prompt, s->n_prompt, buf, cap, false, true) : 0;
    if (buf && n < 0) {
        cap = -n + 1;
        char * nb = realloc(buf, (size_t) cap);
        buf = nb ? nb : buf;
        n = nb ? llama_detokenize(sc->vocab, s->prompt, s->n_prompt, buf, cap, false, true) : 0;
    }
    json_t * out = sj_string_lossy(buf ? buf : "", (buf && n > 0) ? (size_t) n : 0);
    free(buf);
    return out;
}

// the final (non-streamed) result in the request's shape
json_t * server_final_json(const struct server_context * sc, const struct server_slot * s) {
    if (s->mode == COMPL_MODE_ANTHROPIC) {
        return server_final_json_anthropic(sc, s);
    }
    if (s->mode == COMPL_MODE_OAI_RESP) {
        return server_final_json_resp(sc, s);
    }
    json_t * content = sj_string_lossy(s->text ? s->text : "", s->n_text);
    // llama.cpp: OpenAI logprobs are {"content": [per-token entries]} and only when there are any
    json_t * logprobs = (s->params.n_probs > 0 && json_array_size(s->probs) > 0)
                            ? json_pack("{s:O}", "content", s->probs) : NULL;
    if (s->mode == COMPL_MODE_OAI_CHAT) {
        json_t * o = server_oai_base(sc, s, "chat.completion");
        json_t * message;
        if (s->chat_parse) {
            json_decref(content);
            message = server_chat_msg_oai_json(&s->chat_msg);
        } else {
            message = json_pack("{s:s, s:o}", "role", "assistant", "content", content);
        }
        json_object_set_new(o, "choices", json_pack("[{s:s, s:i, s:o}]", "finish_reason", server_finish_reason(s),
                                                    "index", 0, "message", message));
        if (logprobs) {
            json_object_set_new(json_array_get(json_object_get(o, "choices"), 0), "logprobs", logprobs);
        }
        json_object_set_new(o, "usage", server_usage_json(s));
        json_object_set_new(o, "timings", server_timings_json(s));
        return o;
    }
    if (s->mode == COMPL_MODE_OAI_COMPL) {
        json_t * o = server_oai_base(sc, s, "text_completion");
        json_object_set_new(o, "choices", json_pack("[{s:o, s:i, s:o, s:s}]", "text", content, "index", 0,
                                                    "logprobs", logprobs ? logprobs : json_null(),
                                                    "finish_reason", server_finish_reason(s)));
        json_object_set_new(o, "usage", server_usage_json(s));
        json_object_set_new(o, "timings", server_timings_json(s));
        return o;
    }
    json_decref(logprobs);
    // llama.cpp: a stream's final event carries no text, tokens or probabilities (the partial events had them)
    const bool stream = s->task->stream != NULL;
    if (stream) {
        json_decref(content);
        content = json_string("");
    }
    json_t * o = json_pack("{s:o, s:i, s:i, s:b, s:s, s:i, s:i, s:o, s:o, s:b, s:b, s:s, s:s, s:i, s:o}",
                           "content", content,
                           "id_slot", s->id,
                           "index", 0,
                           "stop", 1,
                           "model", sc->model_name,
                           "tokens_predicted", s->n_decoded,
                           "tokens_evaluated", s->n_prompt,
                           "generation_settings", server_slot_params_to_json(&s->params),
                           "prompt", prompt_text(sc, s),
                           "has_new_line", (int) s->has_new_line,
                           "truncated", (int) s->truncated,
                           "stop_type", s->stop_type ? s->stop_type : "none",
                           "stopping_word", s->stopping_word ? s->stopping_word : "",
                           "tokens_cached", s->n_cache,
                           "timings", server_timings_json(s));
    json_t * gs = json_object_get(o, "generation_settings");
    const json_t * stop = json_object_get(s->task->data, "stop");
    if (gs && json_is_array(stop)) {
        json_object_set_new(gs, "stop", json_deep_copy(stop));
    }
    if (s->return_tokens && !stream) {
        json_object_set(o, "tokens", s->gen_tokens);
    } else {
        json_object_set_new(o, "tokens", json_array());
    }
    if (s->params.n_probs > 0 && !stream && json_array_size(s->probs) > 0) {
        json_object_set(o, "completion_probabilities", s->probs);
    }
    return o;
}

// one chat.completion.chunk per diff; probs (consumed, may be NULL) ride on the last one, or are dropped when
// there is none (llama.cpp sends nothing for a step that changed nothing)
static bool server_stream_diffs(const struct server_context * sc, struct server_slot * s,
                                const struct common_chat_msg_diff * diffs, size_t n_diffs, json_t * probs) {
    bool ok = true;
    for (size_t i = 0; i < n_diffs && ok; i++) {
        json_t * c = server_oai_base(sc, s, "chat.completion.chunk");
        json_t * choice = json_pack("{s:n, s:i, s:o}", "finish_reason", "index", 0, "delta",
                                    server_chat_diff_oai_json(&diffs[i]));
        if (i + 1 == n_diffs && probs) {
            json_object_set_new(choice, "logprobs", json_pack("{s:o}", "content", probs));
            probs = NULL;
        }
        json_object_set_new(c, "choices", json_pack("[o]", choice));
        ok = server_stream_send(s, c);
    }
    json_decref(probs);
    return ok;
}

// the parse's changes of one step in the stream's wire format: Anthropic content-block events, Responses
// output-item events (both open their stream on first use, even with no change), or OpenAI chat chunks
static bool stream_chat_diffs(const struct server_context * sc, struct server_slot * s,
                              const struct common_chat_msg_diff * diffs, size_t n_diffs) {
    if (s->mode == COMPL_MODE_ANTHROPIC) {
        return server_stream_partial_anthropic(sc, s, diffs, n_diffs);
    }
    if (s->mode == COMPL_MODE_OAI_RESP) {
        return server_stream_partial_resp(sc, s, diffs, n_diffs);
    }
    return server_stream_diffs(sc, s, diffs, n_diffs, NULL);
}

// the last chunk(s) of an OpenAI stream, llama.cpp's. Chat: a chunk with the finish_reason and an empty delta,
// and with stream_options.include_usage one more with "choices": [] and the usage (OpenAI's spec); timings go on
// the last chunk. Completions: the final object, usage included.
static bool stream_close_oai(const struct server_context * sc, struct server_slot * s) {
    json_t * last;
    bool ok = true;
    if (s->mode == COMPL_MODE_OAI_CHAT) {
        last = server_oai_base(sc, s, "chat.completion.chunk");
        json_object_set_new(last, "choices", json_pack("[{s:s, s:i, s:{}}]", "finish_reason", server_finish_reason(s),
                                                       "index", 0, "delta"));
        const json_t * so = json_object_get(s->task->data, "stream_options");
        if (json_is_object(so) && json_is_true(json_object_get(so, "include_usage"))) {
            ok = server_stream_send(s, last);
            last = server_oai_base(sc, s, "chat.completion.chunk");
            json_object_set_new(last, "choices", json_array());
            json_object_set_new(last, "usage", server_usage_json(s));
        }
    } else {
        last = server_oai_base(sc, s, "text_completion");
        json_object_set_new(last, "choices", json_pack("[{s:s, s:i, s:n, s:s}]", "text", "", "index", 0,
                                                       "logprobs", "finish_reason", server_finish_reason(s)));
        json_object_set_new(last, "usage", server_usage_json(s));
    }
    json_object_set_new(last, "timings", server_timings_json(s));
    if (!ok) {
        json_decref(last);
        return false;
    }
    return server_stream_send(s, last);
}

bool server_stream_end(const struct server_context * sc, struct server_slot * s) {
    // the unsent rest (held back while it could have begun a stop string)
    if (s->n_sent < s->n_text) {
        const bool ok = server_stream_partial(sc, s, s->text + s->n_sent, s->n_text - s->n_sent, json_array(), NULL);
        s->n_sent = s->n_text;
        if (!ok) {
            return false;
        }
    }
    if (s->mode == COMPL_MODE_NATIVE) {
        // llama.cpp: the final object ends a native stream, no [DONE]
        return server_stream_send(s, server_final_json(sc, s));
    }
    if (server_mode_is_chat(s->mode)) {
        // what the parse of the complete text adds (e.g. a tool call held back while the text could still grow)
        struct common_chat_msg_diff * diffs = NULL;
        size_t n_diffs = 0;
        const bool parsed = s->chat_parse && server_chat_msg_final(s, &diffs, &n_diffs);
        const bool ok = stream_chat_diffs(sc, s, parsed ? diffs : NULL, parsed ? n_diffs : 0);
        if (parsed) {
            common_chat_msg_diffs_free(diffs, n_diffs);
        }
        if (!ok) {
            return false;
        }
    }
    if (s->mode == COMPL_MODE_ANTHROPIC) {
        // no [DONE]: message_stop ends an Anthropic stream
        return server_stream_close_anthropic(sc, s);
    }
    const bool ok = s->mode == COMPL_MODE_OAI_RESP ? server_stream_close_resp(sc, s) : stream_close_oai(sc, s);
    // then [DONE], as llama.cpp ends every OpenAI-shaped stream
    return ok && server_http_stream_write(s->task->stream, "data: [DONE]\n\n", 14);
}

bool server_stream_send_event(struct server_slot * s, const char * name, json_t * data) {
    char * d = data ? sj_dumps(data) : NULL;
    json_decref(data);
    if (!d) {
        return false;
    }
    struct server_http_stream * st = s->task->stream;
    const bool ok = server_http_stream_write(st, "event: ", 7) && server_http_stream_write(st, name, strlen(name)) &&
                    server_http_stream_write(st, "\ndata: ", 7) && server_http_stream_write(st, d, strlen(d)) &&
                    server_http_stream_write(st, "\n\n", 2);
    free(d);
    return ok;
}

bool server_stream_send(struct server_slot * s, json_t * chunk) {
    char * d = chunk ? sj_dumps(chunk) : NULL;
    json_decref(chunk);
    if (!d) {
        return false;
    }
    const size_t n = strlen(d);
    bool ok = server_http_stream_write(s->task->stream, "data: ", 6) &&
              server_http_stream_write(s->task->stream, d, n) &&
              server_http_stream_write(s->task->stream, "\n\n", 2);
    free(d);
    return ok;
}

// a streamed partial: delta text (and, native, the tokens / probabilities of this step)
bool server_stream_partial(const struct server_context * sc, struct server_slot * s, const char * d, size_t n,
                           json_t * toks, json_t * probs) {
    json_t * c;
    if (s->mode == COMPL_MODE_ANTHROPIC || s->mode == COMPL_MODE_OAI_RESP) {
        // these protocols carry no per-token log-probabilities; their events follow the parsed message's changes
        (void) d;
        json_decref(toks);
        json_decref(probs);
        struct common_chat_msg_diff * diffs = NULL;
        size_t n_diffs = 0;
        if (!server_chat_msg_update(s, s->n_sent + n, true, &diffs, &n_diffs)) {
            return false;
        }
        const bool ok = stream_chat_diffs(sc, s, diffs, n_diffs);
        common_chat_msg_diffs_free(diffs, n_diffs);
        return ok;
    }
    if (s->mode == COMPL_MODE_OAI_CHAT) {
        // llama.cpp: the partial result of the first generated token opens with a role chunk (not the flush of
        // held-back text at the end, which passes no tokens); then one chunk per text delta (none for an empty
        // one); this step's logprobs ride on the last chunk sent
        const bool first = s->n_decoded == 1 && json_array_size(toks) > 0;
        json_decref(toks);
        json_t * role = NULL;
        if (first) {
            role = server_oai_base(sc, s, "chat.completion.chunk");
            json_object_set_new(role, "choices", json_pack("[{s:n, s:i, s:{s:s, s:n}}]", "finish_reason", "index", 0,
                                                           "delta", "role", "assistant", "content"));
        }
        c = NULL;
        if (s->chat_parse) {
            // llama.cpp: the text so far parsed again; one chunk per change (reasoning, content, tool call)
            struct common_chat_msg_diff * diffs = NULL;
            size_t n_diffs = 0;
            if (!server_chat_msg_update(s, s->n_sent + n, true, &diffs, &n_diffs)) {
                json_decref(role);
                json_decref(probs);
                return false;
            }
            if (role && n_diffs == 0 && probs) {
                json_object_set_new(json_array_get(json_object_get(role, "choices"), 0), "logprobs",
                                    json_pack("{s:o}", "content", probs));
                probs = NULL;
            }
            if (role && !server_stream_send(s, role)) {
                common_chat_msg_diffs_free(diffs, n_diffs);
                json_decref(probs);
                return false;
            }
            const bool ok = server_stream_diffs(sc, s, diffs, n_diffs, probs);
            common_chat_msg_diffs_free(diffs, n_diffs);
            return ok;
        }
        if (n > 0) {
            c = server_oai_base(sc, s, "chat.completion.chunk");
            json_object_set_new(c, "choices", json_pack("[{s:n, s:i, s:{s:o}}]", "finish_reason", "index", 0,
                                                        "delta", "content", sj_string_lossy(d, n)));
        }
        json_t * last = c ? c : role;
        if (last && probs) {
            json_object_set_new(json_array_get(json_object_get(last, "choices"), 0), "logprobs",
                                json_pack("{s:o}", "content", probs));
        } else {
            json_decref(probs);
        }
        if (role && !server_stream_send(s, role)) {
            json_decref(c);
            return false;
        }
        return c ? server_stream_send(s, c) : true;
    } else if (s->mode == COMPL_MODE_OAI_COMPL) {
        c = server_oai_base(sc, s, "text_completion");
        json_object_set_new(c, "choices", json_pack("[{s:o, s:i, s:o, s:n}]", "text", sj_string_lossy(d, n),
                                                    "index", 0, "logprobs",
                                                    probs ? json_pack("{s:o}", "content", probs) : json_null(),
                                                    "finish_reason"));
        json_decref(toks);
    } else {
        c = json_pack("{s:o, s:o, s:b, s:i, s:i, s:i, s:i}", "content", sj_string_lossy(d, n), "tokens", toks,
                      "stop", 0, "id_slot", s->id, "index", 0, "tokens_predicted", s->n_decoded,
                      "tokens_evaluated", s->n_prompt);
        if (c && probs) {
            json_object_set_new(c, "completion_probabilities", probs);
        } else {
            json_decref(probs);
        }
    }
    return server_stream_send(s, c);
}

void server_task_fail(struct server_task * t, const char * msg, enum server_error_type type) {
    if (t->stream) {
        // llama.cpp: an Anthropic stream ends with "event: error" and the bare error object
        const bool anthropic =
            json_integer_value(json_object_get(t->data, "__mode")) == COMPL_MODE_ANTHROPIC;
        json_t * e = anthropic ? server_error_object(msg, type)
                               : json_pack("{s:o}", "error", server_error_object(msg, type));
        char * d = e ? sj_dumps(e) : NULL;
        json_decref(e);
        if (d) {
            if (anthropic) {
                server_http_stream_write(t->stream, "event: error\ndata: ", 19);
            } else {
                server_http_stream_write(t->stream, "error: ", 7);
            }
            server_http_stream_write(t->stream, d, strlen(d));
            server_http_stream_write(t->stream, "\n\n", 2);
            free(d);
        }
        server_http_stream_end(t->stream);
        t->stream = NULL;
        server_task_complete(t, NULL, 500);
    } else {
        server_task_complete(t, json_pack("{s:o}", "error", server_error_object(msg, type)),
                             server_error_status(type));
    }
}
// the raw bytes of a piece (llama.cpp's "bytes": OpenAI's field for text that is not valid UTF-8 on its own)
static json_t * bytes_json(const char * piece, size_t n) {
    json_t * a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_array_append_new(a, json_integer((unsigned char) piece[i]));
    }
    return a;
}

json_t * server_probs_json(const struct server_context * sc, struct server_slot * s, llama_token tok, int idx) {
    const float * logits = llama_get_logits_ith(sc->ctx, idx);
    const int n_vocab = llama_vocab_n_tokens(sc->vocab);
    if (!logits) {
        return NULL;
    }
    float mx = -INFINITY;
    for (int i = 0; i < n_vocab; i++) {
        mx = logits[i] > mx ? logits[i] : mx;
    }
    double sum = 0;
    for (int i = 0; i < n_vocab; i++) {
        sum += exp((double) (logits[i] - mx));
    }
    const double lse = mx + log(sum);
    const int k = s->params.n_probs;
    int * top = malloc((size_t) k * sizeof(int));
    if (!top) {
        return NULL;
    }
    // partial selection: n_probs is small next to the vocabulary
    int nt = 0;
    for (int i = 0; i < n_vocab; i++) {
        if (nt < k || logits[i] > logits[top[nt - 1]]) {
            int j = nt < k ? nt++ : nt - 1;
            while (j > 0 && logits[top[j - 1]] < logits[i]) {
                top[j] = top[j - 1];
                j--;
            }
            top[j] = i;
        }
    }
    json_t * tl = json_array();
    for (int i = 0; i < nt; i++) {
        size_t pl = 0;
        char * piece = server_token_piece(sc->vocab, top[i], &pl);
        json_array_append_new(tl, json_pack("{s:i, s:o, s:o, s:f}", "id", top[i], "token",
                                            sj_string_lossy(piece ? piece : "", piece ? pl : 0),
                                            "bytes", bytes_json(piece, piece ? pl : 0),
                                            "logprob", (double) logits[top[i]] - lse));
        free(piece);
    }
    free(top);
    size_t pl = 0;
    char * piece = server_token_piece(sc->vocab, tok, &pl);
    json_t * o = json_pack("{s:i, s:o, s:o, s:f, s:o}", "id", tok, "token",
                           sj_string_lossy(piece ? piece : "", piece ? pl : 0),
                           "bytes", bytes_json(piece, piece ? pl : 0), "logprob",
                           (double) logits[tok] - lse, "top_logprobs", tl);
    free(piece);
    return o;
}

