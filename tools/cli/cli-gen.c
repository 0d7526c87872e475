#include "cli-gen.h"

#include "console-input.h"
#include "log.h"
#include "sampling-init.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_gen_init(struct cli_gen * g, struct llama_context * ctx, const struct common_params * params) {
    memset(g, 0, sizeof(*g));
    g->ctx    = ctx;
    g->model  = llama_get_model(ctx);
    g->vocab  = llama_model_get_vocab(g->model);
    g->params = params;
    g->n_ctx  = (int32_t) llama_n_ctx(ctx);
}

void cli_gen_free(struct cli_gen * g) {
    free(g->cache);
    memset(g, 0, sizeof(*g));
}

static void set_err(char * err, size_t size, const char * fmt, ...) COMMON_LOG_ATTRIBUTE_FORMAT(3, 4);

static void set_err(char * err, size_t size, const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(err, size, fmt, args);
    va_end(args);
}

// decodes toks[0..n) after what the cache holds, in n_batch chunks; the logits of the last token are kept
static bool decode_tokens(struct cli_gen * g, const llama_token * toks, int32_t n) {
    // the context's value: n_batch is clamped there (e.g. to n_ctx)
    const int32_t n_batch = llama_n_batch(g->ctx) > 0 ? (int32_t) llama_n_batch(g->ctx) : 1;
    for (int32_t i = 0; i < n; i += n_batch) {
        const int32_t n_eval = n - i < n_batch ? n - i : n_batch;
        const int ret = llama_decode(g->ctx, llama_batch_get_one((llama_token *) &toks[i], n_eval));
        if (ret != 0) {
            LOG_ERR("%s: llama_decode returned %d\n", __func__, ret);
            // what this call managed to place may be partial: forget from the first token it tried
            llama_memory_seq_rm(llama_get_memory(g->ctx), 0, g->n_cache, -1);
            return false;
        }
        if (!common_tokens_append(&g->cache, &g->n_cache, &g->cap_cache, &toks[i], n_eval)) {
            llama_memory_seq_rm(llama_get_memory(g->ctx), 0, g->n_cache, -1);
            return false;
        }
    }
    return true;
}

// makes the cache hold at most the first keep tokens; a memory that cannot drop a suffix (recurrent state) is
// cleared instead and the cache is then empty
static void cache_truncate(struct cli_gen * g, int32_t keep) {
    if (keep >= g->n_cache) {
        return;
    }
    llama_memory_t mem = llama_get_memory(g->ctx);
    if (!llama_memory_seq_rm(mem, 0, keep, -1)) {
        llama_memory_clear(mem, true);
        keep = 0;
    }
    g->n_cache = keep;
}

// --context-shift: drop half of what follows the kept prefix (BOS + --keep) and slide the rest down, as the
// server does for a slot that runs out of room while generating. false when nothing can be dropped.
static bool context_shift(struct cli_gen * g) {
    int32_t n_keep = (g->params->n_keep > 0 ? g->params->n_keep : 0) + (llama_vocab_get_add_bos(g->vocab) ? 1 : 0);
    if (n_keep > g->n_cache - 2) {
        n_keep = g->n_cache - 2 > 0 ? g->n_cache - 2 : 0;
    }
    const int32_t n_left    = g->n_cache - n_keep;
    const int32_t n_discard = n_left / 2;
    if (n_discard <= 0) {
        return false;
    }
    llama_memory_t mem = llama_get_memory(g->ctx);
    if (!llama_memory_seq_rm(mem, 0, n_keep, n_keep + n_discard)) {
        return false;
    }
    llama_memory_seq_add(mem, 0, n_keep + n_discard, g->n_cache, -n_discard);
    memmove(g->cache + n_keep, g->cache + n_keep + n_discard,
            (size_t) (g->n_cache - n_keep - n_discard) * sizeof(llama_token));
    g->n_cache -= n_discard;
    LOG_DBG("%s: context shift: kept %d, discarded %d, now %d tokens\n", __func__, n_keep, n_discard, g->n_cache);
    return true;
}

// the reply text and how much of it was shown
struct reply_text {
    char * buf;
    size_t len;
    size_t cap;
    size_t sent;
};

static bool text_append(struct reply_text * t, const char * s, size_t n) {
    if (t->len + n + 1 > t->cap) {
        size_t nc = t->cap ? t->cap : 256;
        while (nc < t->len + n + 1) {
            nc *= 2;
        }
        char * grown = realloc(t->buf, nc);
        if (!grown) {
            return false;
        }
        t->buf = grown;
        t->cap = nc;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
    return true;
}

// bytes at the end of s[0..n) that start a UTF-8 sequence not yet complete
static size_t utf8_incomplete_tail(const char * s, size_t n) {
    for (size_t back = 1; back <= 4 && back <= n; back++) {
        const unsigned char c = (unsigned char) s[n - back];
        if ((c & 0xC0) == 0x80) {
            continue; // continuation byte: look further back for the lead
        }
        size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        return need > back ? back : 0;
    }
    return 0;
}

// Looks for a reverse prompt in the text added since prev_len; on a hit the text is cut where it starts and true
// is returned. Otherwise *hold is the length of the longest tail that could still grow into one.
static bool find_stop(const struct common_params * params, struct reply_text * t, size_t prev_len, size_t * hold) {
    size_t cut = t->len;
    bool hit = false;
    *hold = 0;
    for (int32_t k = 0; k < params->n_antiprompt; k++) {
        const char * a = params->antiprompt[k];
        const size_t la = strlen(a);
        if (la == 0) {
            continue;
        }
        const size_t from = prev_len + 1 >= la ? prev_len + 1 - la : 0;
        for (size_t p = from; p + la <= t->len; p++) {
            if (memcmp(t->buf + p, a, la) == 0) {
                if (p < cut) {
                    cut = p;
                }
                hit = true;
                break;
            }
        }
        for (size_t m = la - 1 < t->len ? la - 1 : t->len; m > *hold; m--) {
            if (memcmp(t->buf + t->len - m, a, m) == 0) {
                *hold = m;
                break;
            }
        }
    }
    if (hit) {
        t->len = cut;
        t->buf[cut] = '\0';
        *hold = 0;
    }
    return hit;
}

// shows what is safe to show: everything when final, else all but a partial reverse prompt or UTF-8 sequence
static void text_flush(struct reply_text * t, size_t hold, bool final, cli_emit_fn emit, void * ud) {
    size_t upto = t->len;
    if (!final) {
        upto = hold <= upto - t->sent ? upto - hold : t->sent;
        upto -= utf8_incomplete_tail(t->buf + t->sent, upto - t->sent);
    }
    if (upto > t->sent) {
        if (emit) {
            emit(t->buf + t->sent, upto - t->sent, ud);
        }
        t->sent = upto;
    }
}

enum cli_gen_status cli_gen_reply(struct cli_gen * g, const char * prompt, cli_emit_fn emit, void * user_data,
                                  char ** content, struct cli_gen_timings * timings, bool * context_full,
                                  char * err, size_t err_size) {
    const struct common_params * params = g->params;
    memset(timings, 0, sizeof(*timings));
    *context_full = false;
    *content = NULL;

    enum cli_gen_status status = CLI_GEN_DONE;
    llama_token * toks = NULL;
    int32_t n_toks = 0;
    struct common_sampler * smpl = NULL;
    struct reply_text text = { NULL, 0, 0, 0 };

    if (!text_append(&text, "", 0)) {
        set_err(err, err_size, "out of memory");
        return CLI_GEN_FAILED;
    }
    if (!common_tokenize(g->vocab, prompt, -1, true, true, &toks, &n_toks)) {
        set_err(err, err_size, "failed to tokenize the prompt");
        status = CLI_GEN_FAILED;
        goto done;
    }
    if (n_toks == 0) {
        set_err(err, err_size, "the prompt is empty");
        status = CLI_GEN_FAILED;
        goto done;
    }
    if (n_toks >= g->n_ctx) {
        set_err(err, err_size, "request (%d tokens) exceeds the available context size (%d tokens), try increasing it",
                n_toks, g->n_ctx);
        status = CLI_GEN_FAILED;
        goto done;
    }

    smpl = common_sampler_init_checked(g->model, &params->sampling, err, err_size);
    if (!smpl) {
        status = CLI_GEN_FAILED;
        goto done;
    }
    // the prompt feeds the penalty history, as the server does for each task
    for (int32_t i = 0; i < n_toks; i++) {
        common_sampler_accept(smpl, toks[i], false);
    }

    // reuse the common prefix; at least the last prompt token is decoded again so that its logits exist
    int32_t n_past = 0;
    while (n_past < g->n_cache && n_past < n_toks && g->cache[n_past] == toks[n_past]) {
        n_past++;
    }
    if (n_past == n_toks) {
        n_past--;
    }
    cache_truncate(g, n_past);
    n_past = g->n_cache;
    LOG_DBG("%s: prompt %d tokens, %d reused from the cache\n", __func__, n_toks, n_past);

    const int64_t t_start = ggml_time_us();
    if (!decode_tokens(g, toks + n_past, n_toks - n_past)) {
        set_err(err, err_size, "failed to decode the prompt");
        status = CLI_GEN_FAILED;
        goto done;
    }
    const int64_t t_prompt_end = ggml_time_us();
    timings->n_prompt    = n_toks - n_past;
    timings->t_prompt_us = t_prompt_end - t_start;

    for (;;) {
        if (params->n_predict >= 0 && timings->n_gen >= params->n_predict) {
            break;
        }
        if (common_console_interrupted()) {
            status = CLI_GEN_INTERRUPTED;
            break;
        }
        const llama_token id = common_sampler_sample(smpl, g->ctx, -1, false);
        common_sampler_accept(smpl, id, true);
        timings->n_gen++;

        if (llama_vocab_is_eog(g->vocab, id)) {
            break;
        }
        int32_t plen = 0;
        char * piece = common_token_to_piece(g->vocab, id, params->special, &plen);
        if (!piece || !text_append(&text, piece, (size_t) plen)) {
            free(piece);
            set_err(err, err_size, "out of memory");
            status = CLI_GEN_FAILED;
            break;
        }
        free(piece);
        size_t hold = 0;
        const bool stop = find_stop(params, &text, text.len - (size_t) plen, &hold);
        text_flush(&text, hold, false, emit, user_data);
        if (stop) {
            break;
        }
        if (params->n_predict >= 0 && timings->n_gen >= params->n_predict) {
            break; // the last token is not decoded: the next turn re-templates the reply anyway
        }

        // room for the token just sampled
        // (-n -2: stop when the context is full, even with --context-shift)
        if (g->n_cache >= g->n_ctx && !(params->ctx_shift && params->n_predict != -2 && context_shift(g))) {
            *context_full = true;
            break;
        }
        if (!decode_tokens(g, &id, 1)) {
            set_err(err, err_size, "failed to decode the generated token");
            status = CLI_GEN_FAILED;
            break;
        }
    }
    timings->t_gen_us = ggml_time_us() - t_prompt_end;
    text_flush(&text, 0, true, emit, user_data);

done:
    common_sampler_free(smpl);
    free(toks);
    *content = text.buf;
    return status;
}
