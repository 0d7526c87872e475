// Result JSON of a completion: final responses, streamed chunks, errors, token probabilities.
#include "server-context.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char * server_finish_reason(const struct server_slot * s) {
    return (s->stop_type && strcmp(s->stop_type, "limit") == 0) ? "length" : "stop";
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
                     "model", sc->model_name, "system_fingerprint", SERVER_BUILD_INFO, "object", object);
}

// the final (non-streamed) result in the request's shape
json_t * server_final_json(const struct server_context * sc, const struct server_slot * s) {
    json_t * content = sj_string_lossy(s->text ? s->text : "", s->n_text);
    if (s->mode == COMPL_MODE_OAI_CHAT) {
        json_t * o = server_oai_base(sc, s, "chat.completion");
        json_object_set_new(o, "choices", json_pack("[{s:s, s:i, s:{s:s, s:o}}]", "finish_reason", server_finish_reason(s),
                                                    "index", 0, "message", "role", "assistant", "content", content));
        json_object_set_new(o, "usage", server_usage_json(s));
        json_object_set_new(o, "timings", server_timings_json(s));
        return o;
    }
    if (s->mode == COMPL_MODE_OAI_COMPL) {
        json_t * o = server_oai_base(sc, s, "text_completion");
        json_object_set_new(o, "choices", json_pack("[{s:o, s:i, s:n, s:s}]", "text", content, "index", 0,
                                                    "logprobs", "finish_reason", server_finish_reason(s)));
        json_object_set_new(o, "usage", server_usage_json(s));
        json_object_set_new(o, "timings", server_timings_json(s));
        return o;
    }
    json_t * o = json_pack("{s:o, s:i, s:i, s:b, s:s, s:i, s:i, s:o, s:b, s:b, s:s, s:s, s:i, s:o}",
                           "content", content,
                           "id_slot", s->id,
                           "index", 0,
                           "stop", 1,
                           "model", sc->model_name,
                           "tokens_predicted", s->n_decoded,
                           "tokens_evaluated", s->n_prompt,
                           "generation_settings", server_slot_params_to_json(&s->params),
                           "has_new_line", (int) s->has_new_line,
                           "truncated", 0,
                           "stop_type", s->stop_type ? s->stop_type : "none",
                           "stopping_word", s->stopping_word ? s->stopping_word : "",
                           "tokens_cached", s->n_cache,
                           "timings", server_timings_json(s));
    json_t * gs = json_object_get(o, "generation_settings");
    const json_t * stop = json_object_get(s->task->data, "stop");
    if (gs && json_is_array(stop)) {
        json_object_set_new(gs, "stop", json_deep_copy(stop));
    }
    json_object_set(o, "tokens", s->return_tokens ? s->gen_tokens : json_array());
    if (!s->return_tokens) {
        json_decref(json_object_get(o, "tokens"));
    }
    if (s->params.n_probs > 0) {
        json_object_set(o, "completion_probabilities", s->probs);
    }
    return o;
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
    if (s->mode == COMPL_MODE_OAI_CHAT) {
        c = server_oai_base(sc, s, "chat.completion.chunk");
        json_object_set_new(c, "choices", json_pack("[{s:n, s:i, s:{s:o}}]", "finish_reason", "index", 0,
                                                    "delta", "content", sj_string_lossy(d, n)));
        json_decref(toks);
        json_decref(probs);
    } else if (s->mode == COMPL_MODE_OAI_COMPL) {
        c = server_oai_base(sc, s, "text_completion");
        json_object_set_new(c, "choices", json_pack("[{s:o, s:i, s:n, s:n}]", "text", sj_string_lossy(d, n),
                                                    "index", 0, "logprobs", "finish_reason"));
        json_decref(toks);
        json_decref(probs);
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
        json_t * e = json_pack("{s:o}", "error", server_error_object(msg, type));
        char * d = e ? sj_dumps(e) : NULL;
        json_decref(e);
        if (d) {
            server_http_stream_write(t->stream, "error: ", 7);
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
        json_array_append_new(tl, json_pack("{s:i, s:o, s:f}", "id", top[i], "token",
                                            sj_string_lossy(piece ? piece : "", piece ? pl : 0),
                                            "logprob", (double) logits[top[i]] - lse));
        free(piece);
    }
    free(top);
    size_t pl = 0;
    char * piece = server_token_piece(sc->vocab, tok, &pl);
    json_t * o = json_pack("{s:i, s:o, s:f, s:o}", "id", tok, "token",
                           sj_string_lossy(piece ? piece : "", piece ? pl : 0), "logprob",
                           (double) logits[tok] - lse, "top_logprobs", tl);
    free(piece);
    return o;
}

