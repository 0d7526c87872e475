// Slots and continuous batching on the inference thread: launching a task on a slot, prompt processing,
// token handling (stop strings, streaming), one llama_decode per step for all slots.
#include "server-context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool server_slot_cache_push(struct server_slot * s, llama_token t) {
    if (s->n_cache == s->cap_cache) {
        const int nc = s->cap_cache ? s->cap_cache * 2 : 256;
        llama_token * n = realloc(s->cache, (size_t) nc * sizeof(llama_token));
        if (!n) {
            return false;
        }
        s->cache = n;
        s->cap_cache = nc;
    }
    s->cache[s->n_cache++] = t;
    return true;
}

void server_slot_release(struct server_context * sc, struct server_slot * s) {
    struct server_metrics * m = &sc->metrics;
    m->n_tokens_predicted_total += (uint64_t) s->n_decoded;
    m->n_tokens_predicted       += (uint64_t) s->n_decoded;
    m->t_tokens_generation_total += (uint64_t) s->t_gen_ms;
    m->t_tokens_generation       += (uint64_t) s->t_gen_ms;
    if (s->smpl) {
        // unregister before freeing: the context must not run a chain it no longer owns
        if (s->backend_sampling) {
            llama_set_sampler(sc->ctx, s->id, NULL);
            s->backend_sampling = false;
        }
        common_sampler_free(s->smpl);
        s->smpl = NULL;
    }
    s->n_draft = 0;
    if (s->task) {
        if (s->task->stream) {
            server_http_stream_end(s->task->stream);
            s->task->stream = NULL;
        }
        server_task_complete(s->task, NULL, 500); // no-op when already completed
        server_task_release(s->task);
        s->task = NULL;
    }
    json_decref(s->gen_tokens);
    json_decref(s->probs);
    s->gen_tokens = s->probs = NULL;
    free(s->text);
    s->text = NULL;
    s->n_text = s->cap_text = s->n_sent = 0;
    free(s->stopping_word);
    s->stopping_word = NULL;
    server_chat_msg_release(s);
    free(s->sse_tool_blocks);
    s->sse_tool_blocks = NULL;
    s->n_sse_tool_blocks = 0;
    s->prompt   = NULL;
    s->t_last_used = ggml_time_us();
    s->state    = SLOT_STATE_IDLE;
    s->id_task  = -1;
    s->i_batch  = -1;
}

void server_slot_finish(struct server_context * sc, struct server_slot * s) {
    s->has_next_token = false;
    if (s->task->stream) {
        (void) server_stream_end(sc, s); // false: the client went away, nothing more to tell it
    } else {
        if (s->chat_parse) {
            server_chat_msg_final(s, NULL, NULL);  // out of memory: the last parse stands
        }
        json_t * r = server_final_json(sc, s);
        server_task_complete(s->task, r, r ? 200 : 500);
    }
    server_slot_release(sc, s);
}

// a slot for the task, as llama.cpp's get_available_slot: the requested one; else (-sps != 0) the idle slot whose
// cached tokens share the largest fraction of the prompt as a prefix, if that fraction exceeds -sps; else the
// least recently used idle slot; NULL: none is idle (the task waits)
static struct server_slot * pick_slot(struct server_context * sc, const struct server_task * t) {
    if (t->id_slot >= 0) {
        struct server_slot * s = &sc->slots[t->id_slot];
        return s->state == SLOT_STATE_IDLE ? s : NULL;
    }
    struct server_slot * best = NULL;
    const float sps = sc->params.slot_prompt_similarity;
    if (sps != 0.0f && t->n_tokens > 0) {
        float sim_best = 0.0f;
        for (int i = 0; i < sc->n_slots; i++) {
            struct server_slot * s = &sc->slots[i];
            if (s->state != SLOT_STATE_IDLE || s->n_cache == 0) {
                continue;
            }
            int lcp = 0;
            while (lcp < s->n_cache && (size_t) lcp < t->n_tokens && s->cache[lcp] == t->tokens[lcp]) {
                lcp++;
            }
            const float sim = (float) lcp / (float) t->n_tokens;
            if (sim > sim_best && sim > sps) {
                sim_best = sim;
                best = s;
            }
        }
    }
    if (!best) {
        for (int i = 0; i < sc->n_slots; i++) {
            struct server_slot * s = &sc->slots[i];
            if (s->state == SLOT_STATE_IDLE && (!best || s->t_last_used < best->t_last_used)) {
                best = s;
            }
        }
    }
    return best;
}

// --cache-reuse (llama.cpp's chunk reuse): after the common prefix n_past, look through the rest of the slot's
// cache for runs of at least n_min tokens that continue the new prompt where it stands, and move each one's KV
// cells to its new place (drop the cells in between, shift the run down). The new prompt must be the cached one
// with pieces cut out: a run is only looked for at the prompt's current position, so inserted text ends the
// reuse. Returns the new n_past; s->cache[0..n_past) then holds the tokens in their new positions.
static int slot_reuse_chunks(struct server_context * sc, struct server_slot * s, int n_past, int n_min) {
    llama_memory_t mem = llama_get_memory(sc->ctx);
    int head_c = n_past; // in the cache (old positions)
    int head_p = n_past; // in the prompt (new positions)
    while (head_c < s->n_cache && head_p < s->n_prompt) {
        int n_match = 0;
        while (head_c + n_match < s->n_cache && head_p + n_match < s->n_prompt &&
               s->cache[head_c + n_match] == s->prompt[head_p + n_match]) {
            n_match++;
        }
        if (n_match < n_min) {
            head_c++;
            continue;
        }
        SRV_INF("slot %d: reusing chunk with size %d, shifting KV cache [%d, %d) -> [%d, %d)\n", s->id, n_match,
                head_c, head_c + n_match, head_p, head_p + n_match);
        llama_memory_seq_rm(mem, s->id, head_p, head_c);
        llama_memory_seq_add(mem, s->id, head_c, head_c + n_match, head_p - head_c);
        // forward copy: what is overwritten lies before head_c, already read
        memmove(s->cache + head_p, s->cache + head_c, (size_t) n_match * sizeof(llama_token));
        n_past += n_match;
        head_c += n_match;
        head_p += n_match;
    }
    return n_past;
}

// false: the task was answered (error) and released
static bool slot_launch(struct server_context * sc, struct server_slot * s, struct server_task * t) {
    const json_t * body = t->data;
    struct sj_err err = { { 0 } };
    const int mode = (int) json_integer_value(json_object_get(body, "__mode"));
    if (!server_read_slot_params(sc, body, mode, &s->params, &err)) {
        server_task_fail(t, err.msg, ERROR_TYPE_INVALID_REQUEST);
        server_task_release(t);
        return false;
    }
    // pre-sampling probabilities need the full logits, which backend sampling replaces (as llama.cpp)
    s->params.backend_sampling = s->params.backend_sampling && s->params.n_probs == 0;
    bool grammar_ok = true;
    free(s->grammar);
    s->grammar = server_read_grammar(sc, body, mode, &grammar_ok, &err);
    s->params.grammar = s->grammar;
    if (!grammar_ok) {
        server_task_fail(t, err.msg, ERROR_TYPE_INVALID_REQUEST);
        server_task_release(t);
        return false;
    }
    // the lazy grammar the HTTP thread read, for the sampler and, as JSON, for /slots and the response's
    // generation_settings
    static const struct server_grammar_lazy no_lazy = { 0 };
    const struct server_grammar_lazy * gl = t->grammar_lazy ? t->grammar_lazy : &no_lazy;
    json_decref(s->grammar_triggers);
    json_decref(s->preserved_tokens);
    s->grammar_triggers = server_grammar_triggers_json(gl);
    s->preserved_tokens = json_array();
    for (size_t i = 0; s->preserved_tokens && i < gl->n_preserved; i++) {
        json_array_append_new(s->preserved_tokens, json_integer(gl->preserved[i]));
    }
    s->params.grammar_lazy     = gl->lazy;
    s->params.grammar_triggers = s->grammar_triggers;
    s->params.preserved_tokens = s->preserved_tokens;
    // the slot's adapter scales (set below from the request), as /slots shows them
    s->params.lora   = s->lora;
    s->params.n_lora = sc->n_lora;
    s->smpl = server_sampler_init(sc, body, &s->params, gl);
    if (!s->smpl) {
        // the HTTP thread checked the grammar already; as llama.cpp, a sampler that fails with one is the grammar's fault
        if (s->grammar) {
            server_task_fail(t, SERVER_GRAMMAR_PARSE_ERROR, ERROR_TYPE_INVALID_REQUEST);
        } else {
            server_task_fail(t, "failed to create the sampler", ERROR_TYPE_SERVER);
        }
        server_task_release(t);
        return false;
    }
    // the prompt is part of the sampler's history (penalties), as in llama.cpp
    for (size_t i = 0; i < t->n_tokens; i++) {
        common_sampler_accept(s->smpl, t->tokens[i], false);
    }
    s->backend_sampling = false;
    if (s->params.backend_sampling) {
        if (!llama_set_sampler(sc->ctx, s->id, common_sampler_get(s->smpl))) {
            common_sampler_free(s->smpl);
            s->smpl = NULL;
            server_task_fail(t, "failed to set the backend sampler", ERROR_TYPE_SERVER);
            server_task_release(t);
            return false;
        }
        s->backend_sampling = true;
    }
    if (!server_spec_launch(sc, s)) {
        if (s->backend_sampling) {
            llama_set_sampler(sc->ctx, s->id, NULL);
            s->backend_sampling = false;
        }
        common_sampler_free(s->smpl);
        s->smpl = NULL;
        server_task_fail(t, "failed to set up speculative decoding", ERROR_TYPE_SERVER);
        server_task_release(t);
        return false;
    }
    s->n_draft = 0;
    s->n_draft_total = 0;
    s->n_draft_accepted = 0;
    s->params.stream = t->stream != NULL;
    s->task = t;
    s->id_task = t->id;
    s->mode = mode;
    bool b = true;
    sj_get_bool(body, "cache_prompt", &b, &err);
    s->cache_prompt = b;
    b = false;
    sj_get_bool(body, "return_tokens", &b, &err);
    s->return_tokens = b;
    s->prompt   = t->tokens;
    s->n_prompt = (int) t->n_tokens;
    s->n_decoded = 0;
    s->n_remain = s->params.n_predict;
    s->has_next_token = true;
    s->has_new_line = false;
    s->stop_type = NULL;
    s->truncated = false;
    s->gen_tokens = json_array();
    s->probs = json_array();
    s->created = (int64_t) time(NULL);
    snprintf(s->oai_id, sizeof(s->oai_id), "chatcmpl-%08x%08x", (unsigned) rand(), (unsigned) t->id);
    snprintf(s->resp_id, sizeof(s->resp_id), "resp_%08x%08x", (unsigned) rand(), (unsigned) t->id);
    snprintf(s->resp_msg_id, sizeof(s->resp_msg_id), "msg_%08x%08x", (unsigned) rand(), (unsigned) t->id);
    snprintf(s->resp_rs_id, sizeof(s->resp_rs_id), "rs_%08x%08x", (unsigned) rand(), (unsigned) t->id);
    s->sse_next_block = 0;
    s->sse_think_block = s->sse_text_block = -1;
    s->n_sse_tool_blocks = 0;
    s->sse_begun = false;
    s->sse_text_begun = false;
    server_chat_msg_launch(sc, s, body);
    s->t_prompt_ms = s->t_gen_ms = 0;
    s->t_start_prompt = server_now_us();

    // the request's LoRA scales: a slot whose scales change cannot reuse KV computed with the old ones
    if (sc->n_lora > 0) {
        float * set = malloc((size_t) sc->n_lora * sizeof(float));
        if (!set || !server_lora_from_request(sc, body, set, &err)) {
            free(set);
            // the slot holds the task now: answer it, then release the slot (which drops the task)
            server_task_fail(t, err.msg[0] ? err.msg : "out of memory", ERROR_TYPE_INVALID_REQUEST);
            server_slot_release(sc, s);
            return false;
        }
        if (!server_lora_same(sc, s->lora, set)) {
            memcpy(s->lora, set, (size_t) sc->n_lora * sizeof(float));
            s->n_cache = 0;
        }
        free(set);
    }

    // reuse the longest common prefix of what this sequence holds, then (--cache-reuse / n_cache_reuse) chunks
    // further on; at least one prompt token is evaluated so there are logits to sample from
    int lcp = 0;
    if (s->cache_prompt) {
        while (lcp < s->n_cache && lcp < s->n_prompt && s->cache[lcp] == s->prompt[lcp]) {
            lcp++;
        }
        int64_t n_reuse = sc->params.n_cache_reuse;
        sj_get_int(body, "n_cache_reuse", &n_reuse, &err);
        if (n_reuse > 0 && llama_memory_can_shift(llama_get_memory(sc->ctx))) {
            lcp = slot_reuse_chunks(sc, s, lcp, n_reuse > INT32_MAX ? INT32_MAX : (int) n_reuse);
        }
        if (lcp == s->n_prompt) {
            lcp--;
        }
    }
    if (!llama_memory_seq_rm(llama_get_memory(sc->ctx), s->id, lcp, -1)) {
        lcp = 0;
        llama_memory_seq_rm(llama_get_memory(sc->ctx), s->id, -1, -1);
    }
    s->n_cache = lcp;
    s->n_prompt_done = lcp;
    s->n_prompt_reused = lcp;
    s->i_batch = -1;
    s->state = SLOT_STATE_PROCESSING_PROMPT;
    return true;
}

// is the tail of text[0..n) a (proper) beginning of a stop word? returns the length to hold back
static size_t partial_stop(const json_t * stop, const char * text, size_t n) {
    size_t hold = 0;
    size_t i;
    const json_t * w;
    json_array_foreach(stop, i, w) {
        const char * ws = json_string_value(w);
        const size_t wl = json_string_length(w);
        for (size_t k = wl > 1 ? wl - 1 : 0; k > hold; k--) {
            if (k <= n && memcmp(text + n - k, ws, k) == 0) {
                hold = k;
                break;
            }
        }
    }
    return hold;
}

// bytes at the end of text that are an incomplete UTF-8 sequence
static size_t utf8_incomplete(const char * text, size_t n) {
    for (size_t k = 1; k <= 4 && k <= n; k++) {
        const unsigned char c = (unsigned char) text[n - k];
        if ((c & 0xC0) == 0x80) {
            continue;
        }
        size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        return need > k ? k : 0;
    }
    return 0;
}

// one sampled token: text, stop conditions, streaming
void server_slot_on_token(struct server_context * sc, struct server_slot * s, llama_token tok, int idx) {
    s->n_decoded++;
    if (s->n_remain > 0) {
        s->n_remain--;
    }
    json_t * pj = s->params.n_probs > 0 ? server_probs_json(sc, s, tok, idx) : NULL;
    if (llama_vocab_is_eog(sc->vocab, tok) && !s->params.ignore_eos) {
        s->stop_type = "eos";
        json_decref(pj);
        server_slot_finish(sc, s);
        return;
    }
    if (pj) {
        json_array_append(s->probs, pj);
    }
    json_array_append_new(s->gen_tokens, json_integer(tok));
    size_t pl = 0;
    char * piece = server_token_piece(sc->vocab, tok, &pl);
    const size_t old = s->n_text;
    if (!piece || !server_sb_add(&s->text, &s->n_text, &s->cap_text, piece, pl)) {
        free(piece);
        json_decref(pj);
        server_task_fail(s->task, "out of memory", ERROR_TYPE_SERVER);
        server_slot_release(sc, s);
        return;
    }
    free(piece);
    if (memchr(s->text + old, '\n', pl)) {
        s->has_new_line = true;
    }
    // a full stop string ends the generation; the text is cut before it
    const json_t * stop = json_object_get(s->task->data, "stop");
    json_t * stop_arr = NULL;
    if (json_is_string(stop)) {
        stop_arr = json_pack("[O]", stop);
        stop = stop_arr;
    }
    if (json_is_array(stop)) {
        // a stop word may have begun in earlier pieces
        size_t max_wl = 0;
        size_t wi;
        const json_t * ww;
        json_array_foreach(stop, wi, ww) {
            max_wl = json_string_length(ww) > max_wl ? json_string_length(ww) : max_wl;
        }
        const size_t from = old > max_wl ? old - max_wl : 0;
        size_t best = SIZE_MAX;
        const char * best_w = NULL;
        size_t i;
        const json_t * w;
        json_array_foreach(stop, i, w) {
            const size_t wl = json_string_length(w);
            if (wl == 0) {
                continue;
            }
            const char * f = memmem(s->text + from, s->n_text - from, json_string_value(w), wl);
            if (f && (size_t) (f - s->text) < best) {
                best = (size_t) (f - s->text);
                best_w = json_string_value(w);
            }
        }
        if (best_w) {
            s->n_text = best < s->n_sent ? s->n_sent : best;
            s->text[s->n_text] = '\0';
            s->stop_type = "word";
            s->stopping_word = strdup(best_w);
            json_decref(stop_arr);
            json_decref(pj);
            server_slot_finish(sc, s);
            return;
        }
    }
    if (s->task->stream) {
        size_t hold = json_is_array(stop) ? partial_stop(stop, s->text, s->n_text) : 0;
        const size_t inc = utf8_incomplete(s->text, s->n_text);
        hold = hold > inc ? hold : inc;
        const size_t upto = s->n_text - hold > s->n_sent ? s->n_text - hold : s->n_sent;
        json_t * tk = json_array();
        json_array_append_new(tk, json_integer(tok));
        json_t * parr = NULL;
        if (pj) {
            parr = json_array();
            json_array_append(parr, pj);
        }
        if (!server_stream_partial(sc, s, s->text + s->n_sent, upto - s->n_sent, tk, parr)) {
            json_decref(stop_arr);
            json_decref(pj);
            server_slot_release(sc, s); // the client went away
            return;
        }
        s->n_sent = upto;
    }
    json_decref(stop_arr);
    json_decref(pj);
    if (s->params.n_predict >= 0 && s->n_decoded >= s->params.n_predict) {
        s->stop_type = "limit";
        server_slot_finish(sc, s);
        return;
    }
    if (!sc->params.ctx_shift && s->n_cache + 1 >= s->n_ctx) {
        // the slot's context is full and there is no context shift (with it, the next step shifts)
        s->truncated = true;
        s->stop_type = "limit";
        server_slot_finish(sc, s);
        return;
    }
    s->next_tok = tok;
    s->state = SLOT_STATE_GENERATING;
}

void server_queue_deferred(struct server_context * sc, struct server_task * t) {
    t->next = NULL;
    if (sc->deferred_tail) {
        sc->deferred_tail->next = t;
    } else {
        sc->deferred_head = t;
    }
    sc->deferred_tail = t;
}

// assign waiting tasks to free slots, in arrival order
void server_assign_deferred(struct server_context * sc) {
    struct server_task * prev = NULL, * t = sc->deferred_head;
    while (t) {
        struct server_task * next = t->next;
        // a waiting task whose client went away is dropped without taking a slot
        const bool gone = atomic_load(&t->cancelled) || (t->stream && server_http_stream_cancelled(t->stream));
        const bool is_action = t->type == SERVER_TASK_TYPE_SLOT_ACTION;
        struct server_slot * s = gone || is_action ? NULL : pick_slot(sc, t);
        // a slot action runs (and leaves the list) once its slot is idle
        const bool done = !gone && is_action && server_process_slot_action(sc, t);
        if (gone || s || done) {
            if (prev) {
                prev->next = next;
            } else {
                sc->deferred_head = next;
            }
            if (sc->deferred_tail == t) {
                sc->deferred_tail = prev;
            }
            t->next = NULL;
            if (gone) {
                if (t->stream) {
                    server_http_stream_end(t->stream);
                    t->stream = NULL;
                }
                server_task_complete(t, NULL, 500);
                server_task_release(t);
            } else if (done) {
                server_task_release(t);
            } else {
                slot_launch(sc, s, t);
            }
        } else {
            prev = t;
        }
        t = next;
    }
}

// --context-shift, llama.cpp's rule: a generating slot whose context is full keeps its first n_keep tokens (the
// request's n_keep, -1 = the whole prompt, plus one for BOS; at most n_ctx - 4), drops n_discard of the rest
// (the request's n_discard, else half) and slides the remainder down in the KV cache and in its token list
static void slot_context_shift(struct server_context * sc, struct server_slot * s) {
    int n_keep = s->params.n_keep < 0 ? s->n_prompt : s->params.n_keep;
    if (llama_vocab_get_add_bos(sc->vocab)) {
        n_keep += 1;
    }
    n_keep = n_keep < s->n_ctx - 4 ? n_keep : s->n_ctx - 4;
    if (n_keep < 0) {
        n_keep = 0;
    }
    const int n_left = s->n_cache - n_keep;
    int n_discard = s->params.n_discard ? s->params.n_discard : n_left / 2;
    const int max_discard = n_left - 1 > 0 ? n_left - 1 : 0;
    n_discard = n_discard < 0 ? 0 : n_discard > max_discard ? max_discard : n_discard;
    SRV_WRN("slot %d: context shift, n_keep = %d, n_left = %d, n_discard = %d\n", s->id, n_keep, n_left, n_discard);
    llama_memory_t mem = llama_get_memory(sc->ctx);
    llama_memory_seq_rm(mem, s->id, n_keep, n_keep + n_discard);
    llama_memory_seq_add(mem, s->id, n_keep + n_discard, s->n_cache, -n_discard);
    memmove(s->cache + n_keep, s->cache + n_keep + n_discard,
            (size_t) (s->n_cache - n_keep - n_discard) * sizeof(llama_token));
    s->n_cache -= n_discard;
    s->truncated = true;
}

// one step: every generating slot's last token (and draft) plus prompt chunks up to n_batch, one llama_decode
void server_inference_step(struct server_context * sc) {
    struct llama_batch * b = &sc->batch;
    b->n_tokens = 0;
    // a client that disconnected frees its slot before the next decode
    for (int i = 0; i < sc->n_slots; i++) {
        struct server_slot * s = &sc->slots[i];
        if (s->state != SLOT_STATE_IDLE && s->task &&
            (atomic_load(&s->task->cancelled) || (s->task->stream && server_http_stream_cancelled(s->task->stream)))) {
            server_slot_release(sc, s);
        }
    }
    for (int i = 0; i < sc->n_slots; i++) {
        struct server_slot * s = &sc->slots[i];
        if (sc->params.ctx_shift && s->state == SLOT_STATE_GENERATING && s->n_cache + 1 >= s->n_ctx) {
            slot_context_shift(sc, s);
        }
    }
    // one decode runs one LoRA set: this step's is that of the first busy slot from a start that turns round
    // (so slots with different sets take turns), and slots with another set sit this step out (llama.cpp
    // batches only slots whose adapters are equal)
    const float * lora_set = NULL;
    if (sc->n_lora > 0) {
        for (int k = 0; k < sc->n_slots && !lora_set; k++) {
            const struct server_slot * s = &sc->slots[(sc->lora_rr + k) % sc->n_slots];
            if (s->state == SLOT_STATE_GENERATING || s->state == SLOT_STATE_PROCESSING_PROMPT) {
                lora_set = s->lora;
            }
        }
        sc->lora_rr = (sc->lora_rr + 1) % sc->n_slots;
    }
    for (int i = 0; i < sc->n_slots; i++) {
        struct server_slot * s = &sc->slots[i];
        s->i_batch = -1;
        s->n_draft = 0;
        if (s->state != SLOT_STATE_GENERATING || b->n_tokens >= sc->n_batch) {
            continue;
        }
        if (lora_set && !server_lora_same(sc, s->lora, lora_set)) {
            continue;
        }
        // next_tok, plus a draft when the slot speculates
        server_spec_add_to_batch(sc, s, sc->n_batch - b->n_tokens);
    }
    // -nocb (llama.cpp): prompts are taken only into a batch that carries no generating slot's token
    const bool take_prompts = sc->params.cont_batching || b->n_tokens == 0;
    for (int i = 0; take_prompts && i < sc->n_slots && b->n_tokens < sc->n_batch; i++) {
        struct server_slot * s = &sc->slots[i];
        if (s->state != SLOT_STATE_PROCESSING_PROMPT) {
            continue;
        }
        if (lora_set && !server_lora_same(sc, s->lora, lora_set)) {
            continue;
        }
        while (s->n_prompt_done < s->n_prompt && b->n_tokens < sc->n_batch) {
            const int k = b->n_tokens++;
            b->token[k] = s->prompt[s->n_prompt_done];
            b->pos[k] = s->n_cache;
            b->n_seq_id[k] = 1;
            b->seq_id[k][0] = s->id;
            b->logits[k] = s->n_prompt_done == s->n_prompt - 1;
            if (b->logits[k]) {
                s->i_batch = k;
            }
            server_slot_cache_push(s, s->prompt[s->n_prompt_done]);
            s->n_prompt_done++;
        }
    }
    if (b->n_tokens == 0) {
        return;
    }
    const int64_t t0 = server_now_us();
    const int32_t rc = lora_set && !server_lora_apply(sc, lora_set) ? -1 : llama_decode(sc->ctx, *b);
    const int64_t t1 = server_now_us();
    sc->metrics.n_decode_total++;
    if ((uint64_t) b->n_tokens > sc->metrics.n_tokens_max) {
        sc->metrics.n_tokens_max = (uint64_t) b->n_tokens;
    }
    if (rc != 0) {
        SRV_ERR("%s: llama_decode failed (%d) for a batch of %d tokens\n", __func__, rc, b->n_tokens);
        for (int i = 0; i < sc->n_slots; i++) {
            struct server_slot * s = &sc->slots[i];
            if (s->state != SLOT_STATE_IDLE) {
                server_task_fail(s->task, "llama_decode failed", ERROR_TYPE_SERVER);
                llama_memory_seq_rm(llama_get_memory(sc->ctx), s->id, -1, -1);
                s->n_cache = 0;
                server_slot_release(sc, s);
            }
        }
        return;
    }
    int n_busy = 0;
    for (int i = 0; i < sc->n_slots; i++) {
        struct server_slot * s = &sc->slots[i];
        if (s->state == SLOT_STATE_IDLE) {
            continue;
        }
        n_busy++;
        if (s->state == SLOT_STATE_GENERATING) {
            s->t_gen_ms += (double) (t1 - t0) / 1e3;
        }
        if (s->i_batch < 0) {
            continue;
        }
        if (s->state == SLOT_STATE_PROCESSING_PROMPT) {
            s->t_prompt_ms = (double) (t1 - s->t_start_prompt) / 1e3;
            s->t_start_gen = t1;
            const int n_eval = s->n_prompt - s->n_prompt_reused;
            sc->metrics.n_prompt_tokens_processed_total += (uint64_t) n_eval;
            sc->metrics.n_prompt_tokens_processed       += (uint64_t) n_eval;
            sc->metrics.t_prompt_processing_total       += (uint64_t) s->t_prompt_ms;
            sc->metrics.t_prompt_processing             += (uint64_t) s->t_prompt_ms;
        }
        if (s->state == SLOT_STATE_PROCESSING_PROMPT) {
            // the prompt's last output: one token, no draft
            s->n_draft = 0;
            s->i_batch_dft[0] = s->i_batch;
        }
        server_spec_accept(sc, s);
    }
    sc->metrics.n_busy_slots_total += (uint64_t) n_busy;
}

bool server_any_busy(const struct server_context * sc) {
    for (int i = 0; i < sc->n_slots; i++) {
        if (sc->slots[i].state != SLOT_STATE_IDLE) {
            return true;
        }
    }
    return false;
}
