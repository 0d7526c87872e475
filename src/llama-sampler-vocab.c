// Samplers that need the vocabulary: DRY with sequence breakers given as strings, and fill-in-the-middle infill.

#include "llama-sampler.h"

#include "llama-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

//
// DRY: sequence breakers from strings
//

// limits that keep breaker processing and the restart-sequence scan cheap
#define DRY_MAX_CHAR_LEN 40
#define DRY_MAX_SEQ_LEN  20

struct breaker_list {
    struct llama_sampler_dry_breaker * items;
    size_t n;
    size_t cap;
};

static void breaker_list_free(struct breaker_list * l) {
    for (size_t i = 0; i < l->n; ++i) {
        free(l->items[i].tail);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

// appends (head, tail[0..n_tail)); the tail is copied
static bool breaker_list_add(struct breaker_list * l, llama_token head, const llama_token * tail, int32_t n_tail) {
    if (l->n == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 64;
        struct llama_sampler_dry_breaker * p = realloc(l->items, cap * sizeof(*p));
        if (!p) {
            return false;
        }
        l->items = p;
        l->cap   = cap;
    }
    struct llama_sampler_dry_breaker * b = &l->items[l->n];
    b->head   = head;
    b->tail   = NULL;
    b->n_tail = n_tail;
    if (n_tail > 0) {
        b->tail = malloc((size_t) n_tail * sizeof(llama_token));
        if (!b->tail) {
            return false;
        }
        memcpy(b->tail, tail, (size_t) n_tail * sizeof(llama_token));
    }
    l->n++;
    return true;
}

// is (head, tail) already among the entries from index `from` on? (entries of one head are contiguous)
static bool breaker_list_has(const struct breaker_list * l, size_t from, llama_token head, const llama_token * tail, int32_t n_tail) {
    for (size_t i = from; i < l->n; ++i) {
        const struct llama_sampler_dry_breaker * b = &l->items[i];
        if (b->head == head && b->n_tail == n_tail &&
                (n_tail == 0 || memcmp(b->tail, tail, (size_t) n_tail * sizeof(llama_token)) == 0)) {
            return true;
        }
    }
    return false;
}

// text of one token, special tokens rendered; grows *buf as needed. Returns the length or -1.
static int32_t token_text(const struct llama_vocab * vocab, llama_token id, char ** buf, int32_t * cap) {
    llama_token tok = id;
    int32_t n = llama_detokenize(vocab, &tok, 1, *buf, *cap, false, true);
    if (n < 0) {
        char * p = realloc(*buf, (size_t) -n);
        if (!p) {
            return -1;
        }
        *buf = p;
        *cap = -n;
        n = llama_detokenize(vocab, &tok, 1, *buf, *cap, false, true);
    }
    return n;
}

// tokens of text (no special handling), at most max_len of them; returns the count or -1
static int32_t tokenize_prefix(const struct llama_vocab * vocab, const char * text, int32_t len,
        llama_token ** toks, int32_t * cap, int32_t max_len) {
    int32_t n = llama_tokenize(vocab, text, len, *toks, *cap, false, false);
    if (n < 0 && n != INT32_MIN) {
        llama_token * p = realloc(*toks, (size_t) -n * sizeof(llama_token));
        if (!p) {
            return -1;
        }
        *toks = p;
        *cap  = -n;
        n = llama_tokenize(vocab, text, len, *toks, *cap, false, false);
    }
    if (n < 0) {
        return -1;
    }
    return n < max_len ? n : max_len;
}

struct breaker_str {
    const char * s;
    size_t       len;
};

// Every token that can start a breaker string gets an entry: a token containing the whole string is a breaker by
// itself (empty tail); a token ending with a prefix of the string needs the rest of the string, tokenized, to follow.
// Each token's text is rendered once and checked against all strings.
static bool dry_breakers_from_strings(const struct llama_vocab * vocab, const struct breaker_str * strs, size_t n_strs,
        struct breaker_list * out) {
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    char * word = NULL;
    int32_t word_cap = 0;
    llama_token * toks = NULL;
    int32_t toks_cap = 0;
    bool ok = true;

    for (llama_token id = 0; id < n_vocab && ok; ++id) {
        const int32_t word_len = token_text(vocab, id, &word, &word_cap);
        if (word_len < 0) {
            ok = false;
            break;
        }
        if (word_len == 0) {
            continue;
        }
        const size_t first_of_token = out->n;
        for (size_t k = 0; k < n_strs && ok; ++k) {
            const char * str = strs[k].s;
            const size_t str_len = strs[k].len;
            if (memmem(word, (size_t) word_len, str, str_len) != NULL) {
                ok = breaker_list_add(out, id, NULL, 0);
                continue;
            }
            for (int32_t pos = 0; pos < word_len && ok; ++pos) {
                if (word[pos] != str[0]) {
                    continue;
                }
                // does the end of the word, from pos, start the string?
                size_t i = 1;
                bool match = true;
                for (; i < str_len && (size_t) pos + i < (size_t) word_len; ++i) {
                    if (word[pos + i] != str[i]) {
                        match = false;
                        break;
                    }
                }
                if (!match) {
                    continue;
                }
                const int32_t n_tail = tokenize_prefix(vocab, str + i, (int32_t) (str_len - i), &toks, &toks_cap, DRY_MAX_SEQ_LEN);
                if (n_tail < 0) {
                    ok = false;
                    break;
                }
                if (!breaker_list_has(out, first_of_token, id, toks, n_tail)) {
                    ok = breaker_list_add(out, id, toks, n_tail);
                }
            }
        }
    }

    free(word);
    free(toks);
    return ok;
}

struct llama_sampler * llama_sampler_init_dry(const struct llama_vocab * vocab, float dry_multiplier, float dry_base,
        int32_t dry_allowed_length, int32_t dry_penalty_last_n, const char ** seq_breakers, size_t num_breakers) {
    if (dry_penalty_last_n < 0) {
        dry_penalty_last_n = 0;
    }
    // checked before the vocabulary scan that building the breakers takes
    if (!llama_sampler_dry_enabled(dry_multiplier, dry_base, dry_penalty_last_n)) {
        return llama_sampler_init_empty("?dry");
    }

    struct breaker_list list = { 0 };
    if (seq_breakers != NULL && num_breakers > 0) {
        if (!vocab) {
            LLAMA_LOG_ERROR("%s: sequence breakers need a vocabulary (vocab is NULL)\n", __func__);
            return NULL;
        }
        struct breaker_str * strs = calloc(num_breakers, sizeof(*strs));
        if (!strs) {
            LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
            return NULL;
        }
        size_t n_strs = 0;
        for (size_t i = 0; i < num_breakers; ++i) {
            if (seq_breakers[i] == NULL || seq_breakers[i][0] == '\0') {
                LLAMA_LOG_WARN("%s: skipping null or empty DRY sequence breaker at index %zu\n", __func__, i);
                continue;
            }
            size_t len = strlen(seq_breakers[i]);
            if (len > DRY_MAX_CHAR_LEN) {
                LLAMA_LOG_WARN("%s: truncating DRY sequence breaker to %d characters\n", __func__, DRY_MAX_CHAR_LEN);
                len = DRY_MAX_CHAR_LEN;
            }
            strs[n_strs].s   = seq_breakers[i];
            strs[n_strs].len = len;
            n_strs++;
        }
        const bool ok = n_strs == 0 || dry_breakers_from_strings(vocab, strs, n_strs, &list);
        free(strs);
        if (!ok) {
            LLAMA_LOG_ERROR("%s: could not process the DRY sequence breakers (out of memory or tokenizer error)\n", __func__);
            breaker_list_free(&list);
            return NULL;
        }
    }

    struct llama_sampler * smpl = llama_sampler_init_dry_from_breakers(
            dry_multiplier, dry_base, dry_allowed_length, dry_penalty_last_n, list.items, list.n);
    breaker_list_free(&list);
    return smpl;
}

//
// infill
//

struct sampler_infill {
    const struct llama_vocab * vocab;

    char *  buf0;
    int32_t cap0;
    char *  buf1;
    int32_t cap1;
};

static const char * infill_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "infill";
}

// piece of a token (special tokens not rendered); grows the buffer as needed; returns the length (<= 0: none)
static int32_t infill_piece(const struct llama_vocab * vocab, llama_token id, char ** buf, int32_t * cap) {
    int32_t n = llama_token_to_piece(vocab, id, *buf, *cap, 0, false);
    if (n < 0) {
        char * p = realloc(*buf, (size_t) -n);
        if (!p) {
            return 0;
        }
        *buf = p;
        *cap = -n;
        n = llama_token_to_piece(vocab, id, *buf, *cap, 0, false);
    }
    return n;
}

static void infill_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct sampler_infill * ctx = smpl->ctx;

    if (cur_p->size == 0) {
        return;
    }

    llama_sampler_softmax_impl(cur_p, true);

    float p_txt_sum = 0.0f;
    float p_eog_sum = 0.0f;
    for (size_t i = 0; i < cur_p->size; ++i) {
        if (llama_vocab_is_eog(ctx->vocab, cur_p->data[i].id)) {
            p_eog_sum += cur_p->data[i].p;
        } else {
            p_txt_sum += cur_p->data[i].p;
        }
    }

    // end-of-generation is likely enough: keep only the EOG tokens
    if (3 * p_eog_sum * (float) cur_p->size > p_txt_sum) {
        const size_t size_org = cur_p->size;
        float p_sum = 0.0f;
        cur_p->size = 0;
        for (size_t i = 0; i < size_org; ++i) {
            if (llama_vocab_is_eog(ctx->vocab, cur_p->data[i].id)) {
                p_sum += cur_p->data[i].p;
                cur_p->data[cur_p->size++] = cur_p->data[i];
            }
        }
        for (size_t i = 0; i < cur_p->size; ++i) {
            cur_p->data[i].p /= p_sum;
        }
        return;
    }

    // a token whose text is a prefix of another's: merge both into the more probable one
    for (size_t i0 = 0; i0 < cur_p->size; ++i0) {
        if (cur_p->data[i0].logit == -INFINITY) {
            continue;
        }
        // i0's piece is the same for every i1: render it once
        const int32_t len0 = infill_piece(ctx->vocab, cur_p->data[i0].id, &ctx->buf0, &ctx->cap0);
        if (len0 <= 0) {
            continue;
        }
        for (size_t i1 = 0; i1 < cur_p->size; ++i1) {
            if (cur_p->data[i0].logit == -INFINITY) {
                break;
            }
            if (i0 == i1 || cur_p->data[i1].logit == -INFINITY) {
                continue;
            }
            const int32_t len1 = infill_piece(ctx->vocab, cur_p->data[i1].id, &ctx->buf1, &ctx->cap1);

            if (len0 <= len1 && memcmp(ctx->buf0, ctx->buf1, (size_t) len0) == 0) {
                size_t dst = i0;
                size_t src = i1;
                if (cur_p->data[i1].p > cur_p->data[i0].p) {
                    dst = i1;
                    src = i0;
                }
                cur_p->data[dst].p += cur_p->data[src].p;
                cur_p->data[src].logit = -INFINITY;
                cur_p->data[src].p     = 0.0f;
            }
        }
    }

    // drop unlikely text tokens (EOG tokens always stay)
    size_t n_non_eog = 0;
    size_t size_org = cur_p->size;
    float p_sum = 0.0f;
    float thold = 0.2f;

    cur_p->size = 0;
    for (size_t i = 0; i < size_org; ++i) {
        const bool is_eog = llama_vocab_is_eog(ctx->vocab, cur_p->data[i].id);
        if (cur_p->data[i].p < thold && !is_eog) {
            continue;
        }
        if (!is_eog) {
            ++n_non_eog;
        }
        p_sum += cur_p->data[i].p;
        cur_p->data[cur_p->size++] = cur_p->data[i];
    }

    // nothing but EOG left: end the infill with EOT (or EOS)
    if (n_non_eog == 0) {
        llama_token eot = llama_vocab_eot(ctx->vocab);
        if (eot == LLAMA_TOKEN_NULL) {
            eot = llama_vocab_eos(ctx->vocab);
        }
        if (eot == LLAMA_TOKEN_NULL) {
            // keep the best remaining candidate rather than invent a token id
            LLAMA_LOG_ERROR("%s: the vocabulary has neither an EOT nor an EOS token\n", __func__);
            cur_p->size = 1;
            return;
        }
        cur_p->size = 1;
        cur_p->data[0].id    = eot;
        cur_p->data[0].logit = 1.0f;
        return;
    }

    for (size_t i = 0; i < cur_p->size; ++i) {
        cur_p->data[i].p /= p_sum;
    }

    // second cut, relative to the number of text candidates left
    size_org = cur_p->size;
    p_sum = 0.0f;
    thold = 1.0f / (float) (n_non_eog + 1);

    cur_p->size = 0;
    for (size_t i = 0; i < size_org; ++i) {
        const bool is_eog = llama_vocab_is_eog(ctx->vocab, cur_p->data[i].id);
        if (cur_p->data[i].p < thold && !is_eog) {
            continue;
        }
        p_sum += cur_p->data[i].p;
        cur_p->data[cur_p->size++] = cur_p->data[i];
    }

    for (size_t i = 0; i < cur_p->size; ++i) {
        cur_p->data[i].p /= p_sum;
    }
}

static struct llama_sampler * infill_clone(const struct llama_sampler * smpl) {
    return llama_sampler_init_infill(((const struct sampler_infill *) smpl->ctx)->vocab);
}

static void infill_free(struct llama_sampler * smpl) {
    struct sampler_infill * ctx = smpl->ctx;
    if (ctx) {
        free(ctx->buf0);
        free(ctx->buf1);
        free(ctx);
        smpl->ctx = NULL;
    }
}

static struct llama_sampler_i llama_sampler_infill_i = {
    /* .name              = */ infill_name,
    /* .accept            = */ NULL,
    /* .apply             = */ infill_apply,
    /* .reset             = */ NULL,
    /* .clone             = */ infill_clone,
    /* .free              = */ infill_free,
    /* .backend_init      = */ NULL,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ NULL,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ NULL,
};

struct llama_sampler * llama_sampler_init_infill(const struct llama_vocab * vocab) {
    if (!vocab) {
        LLAMA_LOG_ERROR("%s: vocab is NULL\n", __func__);
        return NULL;
    }
    struct sampler_infill * ctx = calloc(1, sizeof(*ctx));
    if (ctx) {
        ctx->vocab = vocab;
        ctx->cap0  = 512;
        ctx->cap1  = 512;
        ctx->buf0  = malloc((size_t) ctx->cap0);
        ctx->buf1  = malloc((size_t) ctx->cap1);
    }
    if (!ctx || !ctx->buf0 || !ctx->buf1) {
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
        if (ctx) {
            free(ctx->buf0);
            free(ctx->buf1);
            free(ctx);
        }
        return NULL;
    }
    struct llama_sampler * smpl = llama_sampler_init(&llama_sampler_infill_i, ctx);
    if (!smpl) {
        struct llama_sampler tmp = { NULL, ctx };
        infill_free(&tmp);
    }
    return smpl;
}
