// Saved states: the whole context (outputs of the last decode + KV cache) or one sequence's KV cells, in memory
// or in session files (magic, version, prompt tokens, then the state bytes).
//
// Context state layout: u32 tag, u32 n_vocab, u32 n_embd, i32 n_outputs, i32 n_batch_last,
// i32 output_ids[n_batch_last], f32 logits[n_outputs * n_vocab], u32 has_embd, f32 embd[n_outputs * n_embd]
// when has_embd, then the KV cache part (llama_kv_cache_state_write).
#include "llama-context.h"

#include "llama-impl.h"
#include "llama-kv-cache.h"
#include "llama-model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE_TAG 0x4c4c5354u // "LLST"

struct sbuf {
    uint8_t * p;
    size_t cap;
    size_t n;
};

static void sput(struct sbuf * w, const void * src, size_t n) {
    if (w->p && n > 0 && w->n + n <= w->cap) {
        memcpy(w->p + w->n, src, n);
    }
    w->n += n;
}

static size_t state_write(struct llama_context * ctx, uint8_t * dst, size_t cap) {
    const struct llama_hparams * hp = &ctx->model->hparams;
    struct sbuf w = { dst, cap, 0 };
    const uint32_t tag = STATE_TAG, n_vocab = hp->n_vocab, n_embd = hp->n_embd;
    sput(&w, &tag, 4);
    sput(&w, &n_vocab, 4);
    sput(&w, &n_embd, 4);
    sput(&w, &ctx->n_outputs, 4);
    sput(&w, &ctx->n_batch_last, 4);
    sput(&w, ctx->output_ids, (size_t) ctx->n_batch_last * sizeof(int32_t));
    sput(&w, ctx->logits, (size_t) ctx->n_outputs * n_vocab * sizeof(float));
    const uint32_t has_embd = ctx->cparams.embeddings && ctx->embd && ctx->n_outputs > 0;
    sput(&w, &has_embd, 4);
    if (has_embd) {
        sput(&w, ctx->embd, (size_t) ctx->n_outputs * n_embd * sizeof(float));
    }
    const size_t kv_cap = dst && w.n <= cap ? cap - w.n : 0;
    w.n += llama_kv_cache_state_write(ctx->mem, -1, dst ? dst + (w.n <= cap ? w.n : cap) : NULL, kv_cap);
    return w.n;
}

size_t llama_state_get_size(struct llama_context * ctx) {
    return ctx ? state_write(ctx, NULL, 0) : 0;
}

size_t llama_state_get_data(struct llama_context * ctx, uint8_t * dst, size_t size) {
    if (!ctx || !dst) {
        return 0;
    }
    const size_t need = state_write(ctx, NULL, 0);
    if (need > size) {
        LLAMA_LOG_ERROR("llama_state_get_data: buffer of %zu bytes is too small (%zu needed)\n", size, need);
        return 0;
    }
    return state_write(ctx, dst, size);
}

size_t llama_state_set_data(struct llama_context * ctx, const uint8_t * src, size_t size) {
    if (!ctx || !src) {
        return 0;
    }
    const struct llama_hparams * hp = &ctx->model->hparams;
    size_t off = 0;
    uint32_t hdr[3];
    int32_t n_outputs = 0, n_batch = 0;
    if (size < 20) {
        LLAMA_LOG_ERROR("llama_state_set_data: %zu bytes is too short for a state\n", size);
        return 0;
    }
    memcpy(hdr, src, 12);
    memcpy(&n_outputs, src + 12, 4);
    memcpy(&n_batch, src + 16, 4);
    off = 20;
    if (hdr[0] != STATE_TAG || hdr[1] != hp->n_vocab || hdr[2] != hp->n_embd || n_outputs < 0 || n_batch < 0 ||
        n_outputs > n_batch) {
        LLAMA_LOG_ERROR("llama_state_set_data: the state is not from this model (tag/n_vocab/n_embd mismatch)\n");
        return 0;
    }
    const size_t ids_b = (size_t) n_batch * sizeof(int32_t);
    const size_t log_b = (size_t) n_outputs * hp->n_vocab * sizeof(float);
    if (off + ids_b + log_b + 4 > size) {
        LLAMA_LOG_ERROR("llama_state_set_data: state truncated (outputs)\n");
        return 0;
    }
    if (!llama_context_reserve_outputs(ctx, (size_t) n_outputs, (size_t) n_batch)) {
        return 0;
    }
    memcpy(ctx->output_ids, src + off, ids_b);
    off += ids_b;
    for (int32_t i = 0; i < n_batch; i++) {
        if (ctx->output_ids[i] >= n_outputs) {
            LLAMA_LOG_ERROR("llama_state_set_data: output id %d of token %d is out of range\n", ctx->output_ids[i], i);
            return 0;
        }
    }
    if (log_b) {
        memcpy(ctx->logits, src + off, log_b);
    }
    off += log_b;
    uint32_t has_embd = 0;
    memcpy(&has_embd, src + off, 4);
    off += 4;
    if (has_embd) {
        const size_t emb_b = (size_t) n_outputs * hp->n_embd * sizeof(float);
        if (off + emb_b > size) {
            LLAMA_LOG_ERROR("llama_state_set_data: state truncated (embeddings)\n");
            return 0;
        }
        if (ctx->cparams.embeddings && ctx->embd) {
            memcpy(ctx->embd, src + off, emb_b);
        }
        off += emb_b;
    }
    const size_t kv_n = llama_kv_cache_state_read(ctx->mem, -1, src + off, size - off);
    if (kv_n == 0) {
        ctx->n_outputs = 0;
        ctx->n_batch_last = 0;
        return 0;
    }
    ctx->n_outputs = n_outputs;
    ctx->n_batch_last = n_batch;
    return off + kv_n;
}

size_t llama_get_state_size(struct llama_context * ctx) {
    return llama_state_get_size(ctx);
}

size_t llama_copy_state_data(struct llama_context * ctx, uint8_t * dst) {
    return llama_state_get_data(ctx, dst, llama_state_get_size(ctx));
}

size_t llama_set_state_data(struct llama_context * ctx, const uint8_t * src) {
    // the old API carries no size: trust the caller's buffer to hold a whole state
    return llama_state_set_data(ctx, src, SIZE_MAX);
}

// ---- files ------------------------------------------------------------------------------------------------

static bool write_file(const char * path, uint32_t magic, uint32_t version, const llama_token * tokens,
        size_t n_tokens, const uint8_t * data, size_t n) {
    FILE * f = fopen(path, "wb");
    if (!f) {
        LLAMA_LOG_ERROR("llama_state: cannot open '%s' for writing\n", path);
        return false;
    }
    const uint32_t nt = (uint32_t) n_tokens;
    bool ok = fwrite(&magic, 4, 1, f) == 1 && fwrite(&version, 4, 1, f) == 1 && fwrite(&nt, 4, 1, f) == 1 &&
              (n_tokens == 0 || fwrite(tokens, sizeof(llama_token), n_tokens, f) == n_tokens) &&
              (n == 0 || fwrite(data, 1, n, f) == n);
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        LLAMA_LOG_ERROR("llama_state: failed to write '%s'\n", path);
    }
    return ok;
}

// reads the header and tokens; returns the rest of the file (malloc'd) in *data / *n
static bool read_file(const char * path, uint32_t magic, uint32_t version, llama_token * tokens_out,
        size_t n_token_capacity, size_t * n_token_count_out, uint8_t ** data, size_t * n) {
    *data = NULL;
    *n = 0;
    FILE * f = fopen(path, "rb");
    if (!f) {
        LLAMA_LOG_ERROR("llama_state: cannot open '%s'\n", path);
        return false;
    }
    uint32_t hdr[3] = { 0, 0, 0 };
    bool ok = fread(hdr, 4, 3, f) == 3;
    if (!ok || hdr[0] != magic || hdr[1] != version) {
        LLAMA_LOG_ERROR("llama_state: '%s' is not a state file of this kind/version (magic 0x%08x version %u)\n",
                path, hdr[0], hdr[1]);
        fclose(f);
        return false;
    }
    if (hdr[2] > n_token_capacity) {
        LLAMA_LOG_ERROR("llama_state: '%s' holds %u tokens, more than the capacity %zu\n", path, hdr[2], n_token_capacity);
        fclose(f);
        return false;
    }
    if (hdr[2] > 0 && (!tokens_out || fread(tokens_out, sizeof(llama_token), hdr[2], f) != hdr[2])) {
        LLAMA_LOG_ERROR("llama_state: '%s' is truncated (tokens)\n", path);
        fclose(f);
        return false;
    }
    if (n_token_count_out) {
        *n_token_count_out = hdr[2];
    }
    const long start = ftell(f);
    fseek(f, 0, SEEK_END);
    const long end = ftell(f);
    fseek(f, start, SEEK_SET);
    if (start < 0 || end < start) {
        fclose(f);
        return false;
    }
    *n = (size_t) (end - start);
    *data = malloc(*n ? *n : 1);
    ok = *data && (*n == 0 || fread(*data, 1, *n, f) == *n);
    fclose(f);
    if (!ok) {
        free(*data);
        *data = NULL;
    }
    return ok;
}

bool llama_state_save_file(struct llama_context * ctx, const char * path_session, const llama_token * tokens,
        size_t n_token_count) {
    if (!ctx || !path_session) {
        return false;
    }
    const size_t n = llama_state_get_size(ctx);
    uint8_t * buf = malloc(n ? n : 1);
    if (!buf) {
        return false;
    }
    const bool ok = llama_state_get_data(ctx, buf, n) == n &&
        write_file(path_session, LLAMA_SESSION_MAGIC, LLAMA_SESSION_VERSION, tokens, n_token_count, buf, n);
    free(buf);
    return ok;
}

bool llama_state_load_file(struct llama_context * ctx, const char * path_session, llama_token * tokens_out,
        size_t n_token_capacity, size_t * n_token_count_out) {
    if (!ctx || !path_session) {
        return false;
    }
    uint8_t * data = NULL;
    size_t n = 0;
    if (!read_file(path_session, LLAMA_SESSION_MAGIC, LLAMA_SESSION_VERSION, tokens_out, n_token_capacity,
            n_token_count_out, &data, &n)) {
        return false;
    }
    const size_t r = llama_state_set_data(ctx, data, n);
    free(data);
    return r == n;
}

bool llama_save_session_file(struct llama_context * ctx, const char * path_session, const llama_token * tokens,
        size_t n_token_count) {
    return llama_state_save_file(ctx, path_session, tokens, n_token_count);
}

bool llama_load_session_file(struct llama_context * ctx, const char * path_session, llama_token * tokens_out,
        size_t n_token_capacity, size_t * n_token_count_out) {
    return llama_state_load_file(ctx, path_session, tokens_out, n_token_capacity, n_token_count_out);
}

// ---- one sequence -----------------------------------------------------------------------------------------

static bool seq_id_ok(const struct llama_context * ctx, llama_seq_id s, const char * fn) {
    if (s < 0 || (uint32_t) s >= ctx->mem->n_seq_max) {
        LLAMA_LOG_ERROR("%s: seq_id %d is out of range [0, %u)\n", fn, s, ctx->mem->n_seq_max);
        return false;
    }
    return true;
}

size_t llama_state_seq_get_size_ext(struct llama_context * ctx, llama_seq_id seq_id, llama_state_seq_flags flags) {
    (void) flags; // one cache kind, kept in host memory: every flag reads the same cells
    if (!ctx || !seq_id_ok(ctx, seq_id, __func__)) {
        return 0;
    }
    return llama_kv_cache_state_write(ctx->mem, seq_id, NULL, 0);
}

size_t llama_state_seq_get_data_ext(struct llama_context * ctx, uint8_t * dst, size_t size, llama_seq_id seq_id,
        llama_state_seq_flags flags) {
    (void) flags;
    if (!ctx || !dst || !seq_id_ok(ctx, seq_id, __func__)) {
        return 0;
    }
    const size_t need = llama_kv_cache_state_write(ctx->mem, seq_id, NULL, 0);
    if (need > size) {
        LLAMA_LOG_ERROR("llama_state_seq_get_data: buffer of %zu bytes is too small (%zu needed)\n", size, need);
        return 0;
    }
    return llama_kv_cache_state_write(ctx->mem, seq_id, dst, size);
}

size_t llama_state_seq_set_data_ext(struct llama_context * ctx, const uint8_t * src, size_t size,
        llama_seq_id dest_seq_id, llama_state_seq_flags flags) {
    (void) flags;
    if (!ctx || !src || !seq_id_ok(ctx, dest_seq_id, __func__)) {
        return 0;
    }
    return llama_kv_cache_state_read(ctx->mem, dest_seq_id, src, size);
}

size_t llama_state_seq_get_size(struct llama_context * ctx, llama_seq_id seq_id) {
    return llama_state_seq_get_size_ext(ctx, seq_id, 0);
}

size_t llama_state_seq_get_data(struct llama_context * ctx, uint8_t * dst, size_t size, llama_seq_id seq_id) {
    return llama_state_seq_get_data_ext(ctx, dst, size, seq_id, 0);
}

size_t llama_state_seq_set_data(struct llama_context * ctx, const uint8_t * src, size_t size, llama_seq_id dest_seq_id) {
    return llama_state_seq_set_data_ext(ctx, src, size, dest_seq_id, 0);
}

size_t llama_state_seq_save_file(struct llama_context * ctx, const char * filepath, llama_seq_id seq_id,
        const llama_token * tokens, size_t n_token_count) {
    if (!ctx || !filepath) {
        return 0;
    }
    const size_t n = llama_state_seq_get_size(ctx, seq_id);
    if (n == 0) {
        return 0;
    }
    uint8_t * buf = malloc(n);
    if (!buf) {
        return 0;
    }
    const bool ok = llama_state_seq_get_data(ctx, buf, n, seq_id) == n &&
        write_file(filepath, LLAMA_STATE_SEQ_MAGIC, LLAMA_STATE_SEQ_VERSION, tokens, n_token_count, buf, n);
    free(buf);
    return ok ? 12 + n_token_count * sizeof(llama_token) + n : 0;
}

size_t llama_state_seq_load_file(struct llama_context * ctx, const char * filepath, llama_seq_id dest_seq_id,
        llama_token * tokens_out, size_t n_token_capacity, size_t * n_token_count_out) {
    if (!ctx || !filepath) {
        return 0;
    }
    uint8_t * data = NULL;
    size_t n = 0;
    size_t nt = 0;
    if (!read_file(filepath, LLAMA_STATE_SEQ_MAGIC, LLAMA_STATE_SEQ_VERSION, tokens_out, n_token_capacity, &nt,
            &data, &n)) {
        return 0;
    }
    if (n_token_count_out) {
        *n_token_count_out = nt;
    }
    const size_t r = llama_state_seq_set_data(ctx, data, n, dest_seq_id);
    free(data);
    return r == n ? 12 + nt * sizeof(llama_token) + n : 0;
}
