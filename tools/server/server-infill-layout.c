// /infill's prompt layout; see server-infill.h.
#include "server-infill.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct tok_buf {
    llama_token * d;
    size_t n, cap;
    bool oom;
};

static void tb_push(struct tok_buf * b, const llama_token * t, size_t n) {
    if (b->oom || n == 0) {
        return;
    }
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : 64;
        while (nc < b->n + n) {
            nc *= 2;
        }
        llama_token * nd = realloc(b->d, nc * sizeof(llama_token));
        if (!nd) {
            b->oom = true;
            return;
        }
        b->d = nd;
        b->cap = nc;
    }
    memcpy(b->d + b->n, t, n * sizeof(llama_token));
    b->n += n;
}

static void tb_push1(struct tok_buf * b, llama_token t) {
    tb_push(b, &t, 1);
}

// plain text, no special tokens added or parsed (llama.cpp's common_tokenize(vocab, text, false, false))
static void tb_push_text(struct tok_buf * b, const struct llama_vocab * vocab, const char * text, size_t len) {
    if (b->oom || len == 0 || len > INT32_MAX) {
        return;
    }
    int32_t cap = (int32_t) len + 8;
    llama_token * t = malloc((size_t) cap * sizeof(llama_token));
    int32_t n = t ? llama_tokenize(vocab, text, (int32_t) len, t, cap, false, false) : 0;
    if (t && n < 0) {
        cap = -n;
        llama_token * nt = realloc(t, (size_t) cap * sizeof(llama_token));
        if (nt) {
            t = nt;
            n = llama_tokenize(vocab, text, (int32_t) len, t, cap, false, false);
        }
    }
    if (!t || n < 0) {
        b->oom = true;
    } else {
        tb_push(b, t, (size_t) n);
    }
    free(t);
}

static size_t min_sz(size_t a, long long b) {
    if (b < 0) {
        b = 0;
    }
    return (unsigned long long) b < a ? (size_t) b : a;
}

llama_token * server_infill_layout(const struct llama_vocab * vocab, const llama_token * prefix, size_t n_prefix,
                                   const llama_token * suffix, size_t n_suffix, const json_t * extra, int n_batch,
                                   int n_predict, int n_ctx, bool spm, const llama_token * prompt, size_t n_prompt,
                                   size_t * n_out) {
    const llama_token rep = llama_vocab_fim_rep(vocab);
    const llama_token sep = llama_vocab_fim_sep(vocab);
    struct tok_buf ex = { 0 };
    if (rep != LLAMA_TOKEN_NULL) {
        tb_push1(&ex, rep);
        tb_push_text(&ex, vocab, "myproject\n", 10);
    }
    size_t i;
    const json_t * chunk;
    json_array_foreach(extra, i, chunk) {
        const json_t * text = json_object_get(chunk, "text");
        const json_t * fname = json_object_get(chunk, "filename");
        if (sep != LLAMA_TOKEN_NULL) {
            const char * f = json_is_string(fname) ? json_string_value(fname) : "tmp";
            const size_t fl = json_is_string(fname) ? json_string_length(fname) : 3;
            char * line = malloc(fl + 2);
            if (!line) {
                ex.oom = true;
                break;
            }
            memcpy(line, f, fl);
            line[fl] = '\n';
            tb_push1(&ex, sep);
            tb_push_text(&ex, vocab, line, fl + 1);
            free(line);
        } else {
            static const char snippet[] = "\n\n--- snippet ---\n\n";
            tb_push_text(&ex, vocab, snippet, sizeof(snippet) - 1);
        }
        if (json_is_string(text)) {
            tb_push_text(&ex, vocab, json_string_value(text), json_string_length(text));
        }
    }
    if (sep != LLAMA_TOKEN_NULL) {
        tb_push1(&ex, sep);
        tb_push_text(&ex, vocab, "filename\n", 9);
    }

    // prefix : suffix = 3 : 1 of a batch, the rest of the context for the extra chunks
    const size_t n_prefix_take = min_sz(n_prefix, 3LL * (n_batch / 4));
    const size_t n_suffix_take = min_sz(n_suffix, (long long) (n_batch / 4) - (2 + (long long) n_prompt));
    const size_t n_extra_take  = min_sz(ex.n, (long long) n_ctx - n_batch - 2LL * n_predict);

    struct tok_buf pre = { 0 }, suf = { 0 }, out = { 0 };
    tb_push1(&pre, llama_vocab_fim_pre(vocab));
    if (n_prefix_take > 0) {
        tb_push(&pre, prefix + (n_prefix - n_prefix_take), n_prefix_take);
    }
    tb_push(&pre, prompt, n_prompt);
    tb_push1(&suf, llama_vocab_fim_suf(vocab));
    tb_push(&suf, suffix, n_suffix_take);

    const struct tok_buf * first = spm ? &suf : &pre;
    const struct tok_buf * last  = spm ? &pre : &suf;
    if (n_extra_take > 0) {
        tb_push(&out, ex.d + (ex.n - n_extra_take), n_extra_take);
    }
    if (llama_vocab_get_add_bos(vocab)) {
        tb_push1(&out, llama_vocab_bos(vocab));
    }
    tb_push(&out, first->d, first->n);
    tb_push(&out, last->d, last->n);
    tb_push1(&out, llama_vocab_fim_mid(vocab));

    const bool oom = ex.oom || pre.oom || suf.oom || out.oom;
    free(ex.d);
    free(pre.d);
    free(suf.d);
    if (oom) {
        free(out.d);
        return NULL;
    }
    *n_out = out.n;
    return out.d;
}
