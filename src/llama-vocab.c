// Vocabulary and tokenizers: SPM (llama), BPE (gpt2, with the pre-tokenizers), WPM (bert), UGM (t5), RWKV.
//
// The token ids must equal llama.cpp's, so the algorithms keep llama.cpp's observable rules, including their
// quirks: how special tokens are cut out of the text (longest first, lstrip/rstrip), how invalid UTF-8 turns
// into U+FFFD, how BPE breaks ties (lowest rank, then leftmost pair), how SPM breaks ties (highest score, then
// leftmost pair), the byte fallbacks, and the clean-up passes of detokenization.

#include "llama-vocab.h"
#include "llama-unicode.h"

#include "ggml-impl.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_ERR(...)  GGML_LOG_ERROR(__VA_ARGS__)
#define LOG_WARN(...) GGML_LOG_WARN(__VA_ARGS__)
#define LOG_INFO(...) GGML_LOG_INFO(__VA_ARGS__)

// ---- small containers -----------------------------------------------------------------------------------

// open-addressing map from byte strings (not owned) to int32 values
struct strmap {
    uint32_t      mask;
    int32_t *     slots; // entry index, -1 = empty
    const char ** keys;
    uint32_t *    lens;
    int32_t *     vals;
    uint32_t      n;
    uint32_t      cap;
};

static uint64_t hash_bytes(const char * s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) {
        h ^= (uint8_t) s[i];
        h *= 0x100000001b3ull;
    }
    return h ^ (h >> 29);
}

static bool strmap_init(struct strmap * m, uint32_t n_max) {
    memset(m, 0, sizeof(*m));
    uint32_t size = 16;
    while (size < 2u * n_max + 16u) {
        if (size > (1u << 30)) {
            return false;
        }
        size *= 2;
    }
    m->mask  = size - 1;
    m->cap   = n_max > 0 ? n_max : 1;
    m->slots = (int32_t *) malloc(size * sizeof(int32_t));
    m->keys  = (const char **) malloc(m->cap * sizeof(const char *));
    m->lens  = (uint32_t *) malloc(m->cap * sizeof(uint32_t));
    m->vals  = (int32_t *) malloc(m->cap * sizeof(int32_t));
    if (!m->slots || !m->keys || !m->lens || !m->vals) {
        return false;
    }
    memset(m->slots, 0xff, size * sizeof(int32_t));
    return true;
}

static void strmap_free(struct strmap * m) {
    free(m->slots);
    free(m->keys);
    free(m->lens);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

// slot of key, or of the empty slot where it would go
static uint32_t strmap_find(const struct strmap * m, const char * s, size_t n) {
    uint32_t i = (uint32_t) hash_bytes(s, n) & m->mask;
    for (;;) {
        const int32_t e = m->slots[i];
        if (e < 0 || (m->lens[e] == n && memcmp(m->keys[e], s, n) == 0)) {
            return i;
        }
        i = (i + 1) & m->mask;
    }
}

static int32_t strmap_get(const struct strmap * m, const char * s, size_t n) {
    if (!m->slots) {
        return -1;
    }
    const int32_t e = m->slots[strmap_find(m, s, n)];
    return e < 0 ? -1 : m->vals[e];
}

// inserts key -> val; if the key exists: keeps the old value unless overwrite. Returns the entry's value
// before the call (-1 if new), or -2 when full.
static int32_t strmap_put(struct strmap * m, const char * s, uint32_t n, int32_t val, bool overwrite) {
    const uint32_t i = strmap_find(m, s, n);
    const int32_t  e = m->slots[i];
    if (e >= 0) {
        const int32_t old = m->vals[e];
        if (overwrite) {
            m->vals[e] = val;
        }
        return old;
    }
    if (m->n >= m->cap) {
        return -2;
    }
    m->keys[m->n] = s;
    m->lens[m->n] = n;
    m->vals[m->n] = val;
    m->slots[i] = (int32_t) m->n;
    m->n++;
    return -1;
}

// Returns d with room for element n: grown (doubling, first_cap to start) when n reaches *cap. NULL when the
// array is already marked *oom or runs out of memory now (it is then marked); d stays valid and unchanged.
static void * grow_array(void * d, size_t n, size_t * cap, size_t elem, size_t first_cap, bool * oom) {
    if (*oom) {
        return NULL;
    }
    if (n < *cap) {
        return d;
    }
    const size_t c = *cap ? *cap * 2 : first_cap;
    void * nd = realloc(d, c * elem);
    if (nd) {
        *cap = c;
    } else {
        *oom = true;
    }
    return nd;
}

struct tokvec {
    llama_token * d;
    size_t n;
    size_t cap;
    bool   oom;
};

static void tv_push(struct tokvec * v, llama_token t) {
    llama_token * d = (llama_token *) grow_array(v->d, v->n, &v->cap, sizeof(llama_token), 64, &v->oom);
    if (!d) {
        return;
    }
    v->d = d;
    v->d[v->n++] = t;
}

struct sbuf {
    char * d;
    size_t n;
    size_t cap;
    bool   oom;
};

static void sb_add(struct sbuf * b, const char * s, size_t n) {
    if (b->oom) {
        return;
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) {
            cap *= 2;
        }
        char * d = (char *) realloc(b->d, cap);
        if (!d) {
            b->oom = true;
            return;
        }
        b->d = d;
        b->cap = cap;
    }
    if (n) {
        memcpy(b->d + b->n, s, n);
    }
    b->n += n;
    b->d[b->n] = '\0';
}

static void sb_add_cpt(struct sbuf * b, uint32_t cpt) {
    char u[4];
    int k = llama_unicode_cpt_to_utf8(cpt, u);
    if (k == 0) { // beyond U+10FFFF (possible from 4-byte sequences up to 0x1FFFFF): use U+FFFD
        k = llama_unicode_cpt_to_utf8(0xFFFD, u);
    }
    sb_add(b, u, (size_t) k);
}

static bool ascii_isspace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// ---- the vocabulary -------------------------------------------------------------------------------------

struct vtoken {
    const char * text;
    uint32_t     len;
    float        score;
    int32_t      attr;
};

struct llama_vocab {
    enum llama_vocab_type     type;
    enum llama_vocab_pre_type pre_type;
    char tokenizer_model[64];
    char tokenizer_pre[64];

    uint32_t n_token_types;
    int32_t  n_tokens;
    int32_t  max_token_len;

    struct vtoken * tok;
    char *          tok_arena;
    struct strmap   tok_map;

    struct strmap merges;
    char *        merges_arena;
    uint32_t      n_merges;

    llama_token bos, eos, eot, eom, unk, sep, pad, mask, nl;
    llama_token fim_pre, fim_suf, fim_mid, fim_pad, fim_rep, fim_sep;

    bool add_space_prefix;
    bool add_bos;
    bool add_eos;
    bool add_sep;
    bool ignore_merges;
    bool clean_spaces;
    bool remove_extra_whitespaces;
    bool escape_whitespaces;
    bool treat_whitespace_as_suffix;
    bool lowercase;
    bool strip_accents;

    uint8_t * eog; // per token: 1 if it ends generation

    llama_token * special_cache; // control / user-defined / unknown tokens, longest text first
    int32_t       n_special_cache;

    char *     piece_arena; // token_to_piece(special = true) of every token
    size_t *   piece_off;
    uint32_t * piece_len;

    // SPM: ASCII bytes that occur in some token of two or more bytes
    bool spm_joinable[128];

    // BPE
    struct llama_unicode_splitter * splitter;
    bool byte_encode;

    // UGM
    uint8_t *        charsmap;
    size_t           charsmap_size;
    const uint32_t * xcda;
    size_t           xcda_size;
    const char *     prefix_repl;
    size_t           prefix_repl_size;
    double           ugm_unknown_score;
    struct strmap    ugm_ud_prefixes; // every prefix of every user-defined token
    int32_t          ugm_ud_max_len;

    // RWKV
    struct strmap rwkv_map;
    char *        rwkv_arena;
};

static bool tok_valid(const struct llama_vocab * v, llama_token t) {
    return v && t >= 0 && t < v->n_tokens;
}

static int32_t tok_attr(const struct llama_vocab * v, llama_token t) {
    return v->tok[t].attr;
}

static llama_token text_to_token(const struct llama_vocab * v, const char * s, size_t n) {
    const int32_t id = strmap_get(&v->tok_map, s, n);
    return id < 0 ? LLAMA_TOKEN_NULL : id;
}

llama_token llama_vocab_text_to_token(const struct llama_vocab * vocab, const char * text, size_t len) {
    if (!vocab || !text || vocab->type == LLAMA_VOCAB_TYPE_NONE) {
        return LLAMA_TOKEN_NULL;
    }
    return text_to_token(vocab, text, len);
}

static llama_token byte_to_token(const struct llama_vocab * v, uint8_t ch) {
    static const char * hex = "0123456789ABCDEF";
    switch (v->type) {
        case LLAMA_VOCAB_TYPE_SPM:
        case LLAMA_VOCAB_TYPE_UGM: {
            const char buf[6] = { '<', '0', 'x', hex[ch >> 4], hex[ch & 15], '>' };
            llama_token t = text_to_token(v, buf, 6);
            if (t != LLAMA_TOKEN_NULL) {
                return t;
            }
            const char c = (char) ch;
            return text_to_token(v, &c, 1);
        }
        case LLAMA_VOCAB_TYPE_WPM:
        case LLAMA_VOCAB_TYPE_BPE: {
            struct sbuf b = { NULL, 0, 0, false };
            sb_add_cpt(&b, llama_unicode_byte_to_cpt(ch));
            const llama_token t = b.oom ? LLAMA_TOKEN_NULL : text_to_token(v, b.d, b.n);
            free(b.d);
            return t;
        }
        default:
            return LLAMA_TOKEN_NULL;
    }
}

static uint8_t token_to_byte(const struct llama_vocab * v, llama_token id) {
    const struct vtoken * t = &v->tok[id];
    // "<0xXX>"; anything else is a malformed byte token and reads as 0
    if (t->len >= 5) {
        char h[3] = { t->text[3], t->text[4], 0 };
        return (uint8_t) strtol(h, NULL, 16);
    }
    return 0;
}

// ---- symbol merging (shared by SPM and BPE) -------------------------------------------------------------

struct symbol {
    int32_t      prev;
    int32_t      next;
    const char * text;
    size_t       n;
};

// A queued merge of two neighbouring symbols. The queue pops the lowest prio first, then the leftmost pair:
// SPM queues the negated token score, BPE the merge rank (both exact in a double, so the order is unchanged).
struct merge_pair {
    int32_t left;
    int32_t right;
    double  prio;
    size_t  ln; // the sizes when queued: the pair is stale once either side has changed
    size_t  rn;
};

static bool merge_before(const struct merge_pair * a, const struct merge_pair * b) {
    return a->prio < b->prio || (a->prio == b->prio && a->left < b->left);
}

struct merge_heap {
    struct merge_pair * d;
    size_t n;
    size_t cap;
    bool   oom;
};

static void merge_heap_push(struct merge_heap * h, struct merge_pair b) {
    struct merge_pair * d = (struct merge_pair *) grow_array(h->d, h->n, &h->cap, sizeof(*d), 64, &h->oom);
    if (!d) {
        return;
    }
    h->d = d;
    size_t i = h->n++;
    h->d[i] = b;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!merge_before(&h->d[i], &h->d[p])) {
            break;
        }
        struct merge_pair t = h->d[i]; h->d[i] = h->d[p]; h->d[p] = t;
        i = p;
    }
}

static struct merge_pair merge_heap_pop(struct merge_heap * h) {
    struct merge_pair top = h->d[0];
    h->d[0] = h->d[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && merge_before(&h->d[l], &h->d[m])) m = l;
        if (r < h->n && merge_before(&h->d[r], &h->d[m])) m = r;
        if (m == i) break;
        struct merge_pair t = h->d[i]; h->d[i] = h->d[m]; h->d[m] = t;
        i = m;
    }
    return top;
}

// scratch reused across the words (BPE) or segments (SPM) of one text
struct merge_session {
    const struct llama_vocab * v;
    bool              bpe;     // pairs ranked by the merges table, else by the score of the joined token
    struct symbol *   sym;
    size_t            sym_cap;
    struct merge_heap heap;
    struct sbuf       key;     // BPE: "left right" scratch
};

static void merge_session_free(struct merge_session * s) {
    free(s->sym);
    free(s->heap.d);
    free(s->key.d);
}

// readies the session for a text of n bytes (one symbol per byte at most); false when there is nothing to do:
// an empty text, or no memory (out is then marked)
static bool merge_begin(struct merge_session * s, size_t n, struct tokvec * out) {
    if (n == 0) {
        return false;
    }
    if (n > s->sym_cap) {
        struct symbol * d = (struct symbol *) realloc(s->sym, n * sizeof(struct symbol));
        if (!d) {
            out->oom = true;
            return false;
        }
        s->sym = d;
        s->sym_cap = n;
    }
    return true;
}

// one symbol per UTF-8 character; a truncated last character keeps the bytes that are there
static int32_t merge_split_chars(struct symbol * sym, const char * text, size_t len) {
    int32_t n_sym = 0;
    size_t off = 0;
    while (off < len) {
        size_t cl = llama_unicode_len_utf8(text[off]);
        if (cl > len - off) {
            cl = len - off;
        }
        sym[n_sym].text = text + off;
        sym[n_sym].n    = cl;
        off += cl;
        sym[n_sym].prev = n_sym - 1;
        sym[n_sym].next = off == len ? -1 : n_sym + 1;
        n_sym++;
    }
    return n_sym;
}

static void merge_queue(struct merge_session * s, int32_t l, int32_t r) {
    if (l == -1 || r == -1) {
        return;
    }
    const struct symbol * ls = &s->sym[l];
    const struct symbol * rs = &s->sym[r];
    double prio;
    if (s->bpe) {
        s->key.n = 0;
        sb_add(&s->key, ls->text, ls->n);
        sb_add(&s->key, " ", 1);
        sb_add(&s->key, rs->text, rs->n);
        if (s->key.oom) {
            s->heap.oom = true;
            return;
        }
        const int32_t rank = strmap_get(&s->v->merges, s->key.d, s->key.n);
        if (rank < 0) {
            return;
        }
        prio = rank;
    } else {
        // the symbols are adjacent in the text, so the joined text starts at the left one
        const llama_token t = text_to_token(s->v, ls->text, ls->n + rs->n);
        if (t == LLAMA_TOKEN_NULL) {
            return;
        }
        prio = -(double) s->v->tok[t].score;
    }
    struct merge_pair b = { l, r, prio, ls->n, rs->n };
    merge_heap_push(&s->heap, b);
}

// queues every neighbouring pair of the n_sym symbols, then merges best pair first until none is left;
// leaves s->heap.oom set when out of memory
static void merge_run(struct merge_session * s, int32_t n_sym) {
    struct symbol * sym = s->sym;
    s->heap.n = 0;
    for (int32_t i = 1; i < n_sym; ++i) {
        merge_queue(s, i - 1, i);
    }
    while (s->heap.n > 0 && !s->heap.oom) {
        const struct merge_pair b = merge_heap_pop(&s->heap);
        struct symbol * ls = &sym[b.left];
        struct symbol * rs = &sym[b.right];
        if (ls->n == 0 || rs->n == 0 || ls->n != b.ln || rs->n != b.rn) {
            continue; // stale: one side was merged since
        }
        ls->n += rs->n;
        rs->n = 0;
        ls->next = rs->next;
        if (rs->next >= 0) {
            sym[rs->next].prev = b.left;
        }
        merge_queue(s, ls->prev, b.left);
        merge_queue(s, b.left, ls->next);
    }
}

// ---- SPM ------------------------------------------------------------------------------------------------

static void spm_tokenize_segment(struct merge_session * s, const char * text, size_t len, struct tokvec * out) {
    const struct llama_vocab * v = s->v;
    if (!merge_begin(s, len, out)) {
        return;
    }
    struct symbol * sym = s->sym;
    const int32_t n_sym = merge_split_chars(sym, text, len);
    merge_run(s, n_sym);
    if (s->heap.oom) {
        out->oom = true;
    }
    // every merged symbol is a token (pairs enter the queue only as tokens), so what is not a token is one
    // unmerged character: byte fallback
    for (int32_t i = 0; i != -1 && n_sym > 0; i = sym[i].next) {
        const llama_token t = text_to_token(v, sym[i].text, sym[i].n);
        if (t != LLAMA_TOKEN_NULL) {
            tv_push(out, t);
            continue;
        }
        bool all_bytes = true;
        for (size_t j = 0; j < sym[i].n && all_bytes; ++j) {
            all_bytes = byte_to_token(v, (uint8_t) sym[i].text[j]) != LLAMA_TOKEN_NULL;
        }
        if (!all_bytes) {
            // llama.cpp throws here; a vocabulary without byte tokens gets one <unk> for the character
            if (v->unk != LLAMA_TOKEN_NULL) {
                tv_push(out, v->unk);
            }
            continue;
        }
        for (size_t j = 0; j < sym[i].n; ++j) {
            tv_push(out, byte_to_token(v, (uint8_t) sym[i].text[j]));
        }
    }
}

// An ASCII character that occurs in no token longer than one byte can never be part of a merged symbol: no
// pair spanning it is a token. Cutting the text at such characters therefore leaves the result unchanged and
// keeps the merge queue small (lines instead of the whole text).
static void spm_tokenize(const struct llama_vocab * v, const char * text, size_t len, struct tokvec * out) {
    struct merge_session s = { v, false, NULL, 0, { NULL, 0, 0, false }, { NULL, 0, 0, false } };
    size_t start = 0;
    for (size_t i = 0; i < len; ++i) {
        const uint8_t c = (uint8_t) text[i];
        if (c < 0x80 && !v->spm_joinable[c]) {
            spm_tokenize_segment(&s, text + start, i - start, out);
            spm_tokenize_segment(&s, text + i, 1, out);
            start = i + 1;
        }
    }
    spm_tokenize_segment(&s, text + start, len - start, out);
    merge_session_free(&s);
}

// ---- BPE ------------------------------------------------------------------------------------------------

// BPE merges inside one pre-tokenized word, then maps the resulting symbols to tokens
static void bpe_word(struct merge_session * s, const char * word, size_t len, struct tokvec * out) {
    const struct llama_vocab * v = s->v;
    if (!merge_begin(s, len, out)) {
        return;
    }
    struct symbol * sym = s->sym;
    // a word that is one token stays unmerged
    bool whole = v->ignore_merges && text_to_token(v, word, len) != LLAMA_TOKEN_NULL;
    if (!whole && v->pre_type == LLAMA_VOCAB_PRE_TYPE_GEMMA4) {
        size_t k = 0;
        while (k < len && word[k] == '\n') {
            k++;
        }
        whole = k == len && text_to_token(v, word, len) != LLAMA_TOKEN_NULL;
    }
    int32_t n_sym;
    if (whole) {
        sym[0] = (struct symbol) { -1, -1, word, len };
        n_sym = 1;
    } else {
        n_sym = merge_split_chars(sym, word, len);
    }
    merge_run(s, n_sym);
    if (s->heap.oom) {
        out->oom = true;
        return;
    }
    for (int32_t i = 0; i < n_sym; ++i) {
        if (sym[i].n == 0) {
            continue;
        }
        const llama_token t = text_to_token(v, sym[i].text, sym[i].n);
        if (t != LLAMA_TOKEN_NULL) {
            tv_push(out, t);
            continue;
        }
        // a symbol without a token: llama.cpp looks up each of its bytes as a one-byte token text
        for (size_t j = 0; j < sym[i].n; ++j) {
            llama_token bt;
            if (v->byte_encode) {
                bt = text_to_token(v, sym[i].text + j, 1);
            } else {
                static const char * hex = "0123456789ABCDEF";
                const uint8_t ch = (uint8_t) sym[i].text[j];
                const char buf[6] = { '<', '0', 'x', hex[ch >> 4], hex[ch & 15], '>' };
                bt = text_to_token(v, buf, 6);
            }
            if (bt != LLAMA_TOKEN_NULL) {
                tv_push(out, bt);
            }
        }
    }
}

static void bpe_tokenize(const struct llama_vocab * v, const char * text, size_t len, struct tokvec * out) {
    if (len == 0) {
        return;
    }
    uint32_t * cpts = (uint32_t *) malloc(len * sizeof(uint32_t));
    if (!cpts) {
        out->oom = true;
        return;
    }
    const size_t n_cpts = llama_unicode_cpts_from_utf8(text, len, cpts);
    struct llama_unicode_offsets offs = { NULL, 0, 0 };
    if (!llama_unicode_split(v->splitter, cpts, n_cpts, &offs)) {
        free(cpts);
        out->oom = true;
        return;
    }
    struct merge_session s = { v, true, NULL, 0, { NULL, 0, 0, false }, { NULL, 0, 0, false } };
    struct sbuf word = { NULL, 0, 0, false };
    size_t start = 0;
    for (size_t i = 0; i < offs.n && !out->oom; ++i) {
        word.n = 0;
        for (size_t k = start; k < start + offs.data[i]; ++k) {
            if (!v->byte_encode) {
                sb_add_cpt(&word, cpts[k]);
                continue;
            }
            char u[4];
            int nb = llama_unicode_cpt_to_utf8(cpts[k], u);
            if (nb == 0) {
                nb = llama_unicode_cpt_to_utf8(0xFFFD, u);
            }
            for (int j = 0; j < nb; ++j) {
                sb_add_cpt(&word, llama_unicode_byte_to_cpt((uint8_t) u[j]));
            }
        }
        start += offs.data[i];
        if (word.oom) {
            out->oom = true;
            break;
        }
        bpe_word(&s, word.d, word.n, out);
    }
    free(word.d);
    merge_session_free(&s);
    llama_unicode_offsets_free(&offs);
    free(cpts);
}

// ---- WPM ------------------------------------------------------------------------------------------------

static bool is_chinese_char(uint32_t c) {
    return (c >= 0x04E00 && c <= 0x09FFF) || (c >= 0x03400 && c <= 0x04DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) ||
           (c >= 0x2B920 && c <= 0x2CEAF) || // HF's rust code has 0x2B920 here, llama.cpp keeps it
           (c >= 0x0F900 && c <= 0x0FAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

static void wpm_tokenize(const struct llama_vocab * v, const char * text, size_t len, struct tokvec * out) {
    if (len == 0) {
        return;
    }
    uint32_t * cpts = (uint32_t *) malloc(len * sizeof(uint32_t));
    size_t *   wofs = (size_t *) malloc((2 * len + 2) * sizeof(size_t)); // word boundaries in buf
    struct sbuf buf  = { NULL, 0, 0, false };
    struct sbuf word = { NULL, 0, 0, false };
    if (!cpts || !wofs) {
        free(cpts);
        free(wofs);
        out->oom = true;
        return;
    }
    const size_t n_cpts = llama_unicode_cpts_from_utf8(text, len, cpts);
    size_t n_words = 0;
    size_t wstart = 0;
    sb_add(&buf, "", 0);
#define END_WORD() do { if (buf.n > wstart) { wofs[2 * n_words] = wstart; wofs[2 * n_words + 1] = buf.n; n_words++; wstart = buf.n; } } while (0)
    for (size_t i = 0; i < n_cpts; ++i) {
        uint32_t cpt = cpts[i];
        if (v->strip_accents) {
            cpt = llama_unicode_nfd_first(cpt);
        }
        const uint16_t fl = llama_unicode_cpt_flags(cpt);
        if (fl & LLAMA_CPT_WHITESPACE) {
            END_WORD();
            continue;
        }
        if (cpt == 0 || cpt == 0xFFFD || (fl & LLAMA_CPT_CONTROL)) {
            continue;
        }
        if (v->strip_accents && (fl & LLAMA_CPT_ACCENT_MARK)) {
            continue;
        }
        const uint32_t c2 = v->lowercase ? llama_unicode_tolower(cpt) : cpt;
        if ((fl & LLAMA_CPT_PUNCTUATION) || (cpt < 0x7F && (fl & LLAMA_CPT_SYMBOL)) || is_chinese_char(cpt)) {
            END_WORD();
            sb_add_cpt(&buf, c2);
            END_WORD();
        } else {
            sb_add_cpt(&buf, c2);
        }
    }
    END_WORD();
#undef END_WORD
    if (buf.oom) {
        out->oom = true;
    }
    for (size_t w = 0; w < n_words && !buf.oom; ++w) {
        word.n = 0;
        sb_add(&word, "\xe2\x96\x81", 3);
        sb_add(&word, buf.d + wofs[2 * w], wofs[2 * w + 1] - wofs[2 * w]);
        if (word.oom) {
            out->oom = true;
            break;
        }
        const size_t n = word.n;
        const size_t before = out->n;
        for (size_t i = 0; i < n; ++i) {
            bool match = false;
            size_t jmax = i + (size_t) v->max_token_len + 1;
            if (jmax > n) {
                jmax = n;
            }
            for (size_t j = jmax; j > i; j--) {
                const llama_token id = text_to_token(v, word.d + i, j - i);
                if (id != LLAMA_TOKEN_NULL) {
                    tv_push(out, id);
                    match = true;
                    i = j - 1;
                    break;
                }
            }
            if (!match) {
                out->n = before; // a word that cannot be spelled completely becomes one [UNK]
                break;
            }
        }
        if (out->n == before && v->unk != LLAMA_TOKEN_NULL) {
            tv_push(out, v->unk);
        }
    }
    free(buf.d);
    free(word.d);
    free(wofs);
    free(cpts);
}

// ---- UGM ------------------------------------------------------------------------------------------------

// XOR-compressed compact double array of sentencepiece's precompiled charsmap; out-of-range reads end the walk
static bool xcda_node(const struct llama_vocab * v, size_t i, uint32_t * node) {
    if (i >= v->xcda_size) {
        return false;
    }
    *node = v->xcda[i];
    return true;
}

static uint32_t xcda_base(uint32_t n)   { return (n >> 10) << ((n & (1U << 9)) >> 6); }
static uint32_t xcda_lcheck(uint32_t n) { return n & ((1U << 31) | 0xff); }
static bool     xcda_leaf(uint32_t n)   { return (n >> 8) & 1; }
static uint32_t xcda_value(uint32_t n)  { return n & ((1U << 31) - 1); }

// normalizes the prefix at off: *repl/*repl_len the replacement, returns the input bytes consumed
static size_t ugm_normalize_prefix(const struct llama_vocab * v, const char * in, size_t len, size_t off,
                                   const char ** repl, size_t * repl_len) {
    // a user-defined token (or a prefix of one, as llama.cpp's trie walk reports it) passes unchanged
    if (v->ugm_ud_max_len > 0) {
        size_t best = 0;
        for (size_t l = 1; l <= (size_t) v->ugm_ud_max_len && off + l <= len; ++l) {
            if (strmap_get(&v->ugm_ud_prefixes, in + off, l) < 0) {
                break;
            }
            best = l;
        }
        if (best > 0) {
            *repl = in + off;
            *repl_len = best;
            return best;
        }
    }

    size_t longest_len = 0;
    size_t longest_off = 0;
    if (v->xcda_size > 0) {
        uint32_t node;
        uint32_t idx = 0;
        if (xcda_node(v, 0, &node)) {
            idx = xcda_base(node);
            for (size_t p = off; p < len; ++p) {
                const uint8_t c = (uint8_t) in[p];
                if (c == 0) {
                    break;
                }
                idx ^= c;
                if (!xcda_node(v, idx, &node) || xcda_lcheck(node) != c) {
                    break;
                }
                const bool leaf = xcda_leaf(node);
                idx ^= xcda_base(node);
                if (leaf) {
                    uint32_t vn;
                    if (!xcda_node(v, idx, &vn)) {
                        break;
                    }
                    longest_len = p - off + 1;
                    longest_off = xcda_value(vn);
                }
            }
        }
    }
    if (longest_len > 0 && longest_off < v->prefix_repl_size) {
        const char * r = v->prefix_repl + longest_off;
        const size_t max = v->prefix_repl_size - longest_off;
        size_t rl = 0;
        while (rl < max && r[rl] != '\0') {
            rl++;
        }
        if (rl < max) {
            *repl = r;
            *repl_len = rl;
            return longest_len;
        }
        // unterminated replacement (llama.cpp throws): fall through to the unmodified character
    }
    size_t o = off;
    uint32_t cpt;
    if (llama_unicode_cpt_from_utf8(in, len, &o, &cpt)) {
        *repl = in + off;
        *repl_len = o - off;
        return o - off;
    }
    *repl = "\xEF\xBF\xBD";
    *repl_len = 3;
    return 1;
}

static void ugm_normalize(const struct llama_vocab * v, const char * in, size_t len, struct sbuf * out) {
    const char * space = v->escape_whitespaces ? "\xE2\x96\x81" : " ";
    const size_t space_len = strlen(space);
    const bool prepend = !v->treat_whitespace_as_suffix && v->add_space_prefix;
    const bool append  =  v->treat_whitespace_as_suffix && v->add_space_prefix;
    const bool merge   =  v->remove_extra_whitespaces;
    bool space_prepended = false;
    bool in_non_ws = false;
    for (size_t off = 0; off < len;) {
        const char * r;
        size_t rl;
        const size_t used = ugm_normalize_prefix(v, in, len, off, &r, &rl);
        for (size_t i = 0; i < rl; ++i) {
            const char c = r[i];
            if (c != ' ') {
                if (!in_non_ws) {
                    in_non_ws = true;
                    if ((prepend && !space_prepended) || merge) {
                        sb_add(out, space, space_len);
                        space_prepended = true;
                    }
                }
                sb_add(out, &c, 1);
            } else {
                in_non_ws = false;
                if (!merge) {
                    sb_add(out, space, space_len);
                }
            }
        }
        off += used;
    }
    if (append) {
        sb_add(out, space, space_len);
    }
}

struct ugm_best {
    llama_token token;
    size_t      input_offset;
    double      score_sum;
};

static bool ugm_matchable(const struct llama_vocab * v, llama_token t) {
    return (v->tok[t].attr & (LLAMA_TOKEN_ATTR_NORMAL | LLAMA_TOKEN_ATTR_USER_DEFINED | LLAMA_TOKEN_ATTR_UNUSED)) != 0;
}

static void ugm_tokenize(const struct llama_vocab * v, const char * text, size_t len, struct tokvec * out) {
    struct sbuf norm = { NULL, 0, 0, false };
    sb_add(&norm, "", 0);
    ugm_normalize(v, text, len, &norm);
    if (norm.oom) {
        out->oom = true;
        free(norm.d);
        return;
    }
    const size_t n = norm.n;
    if (n == 0) {
        free(norm.d);
        return;
    }
    struct ugm_best * best = (struct ugm_best *) malloc((n + 1) * sizeof(struct ugm_best));
    if (!best) {
        out->oom = true;
        free(norm.d);
        return;
    }
    for (size_t i = 0; i <= n; ++i) {
        best[i] = (struct ugm_best) { v->unk, 0, -DBL_MAX };
    }
    best[0].score_sum = 0;
    const char * s = norm.d;
    for (size_t off = 0; off < n;) {
        size_t cl = llama_unicode_len_utf8(s[off]);
        if (cl > n - off) {
            cl = n - off;
        }
        bool single_found = false;
        const double cur = best[off].score_sum;
        for (size_t l = 1; l <= (size_t) v->max_token_len && off + l <= n; ++l) {
            const llama_token t = text_to_token(v, s + off, l);
            if (t == LLAMA_TOKEN_NULL || !ugm_matchable(v, t)) {
                continue;
            }
            if (l == cl) {
                single_found = true;
            }
            // user-defined tokens score 0 so that they win over the (negative) log-probabilities
            const double ts = (v->tok[t].attr & LLAMA_TOKEN_ATTR_USER_DEFINED) ? 0.0 : (double) v->tok[t].score;
            const double ch = cur + ts;
            if (ch > best[off + l].score_sum) {
                best[off + l] = (struct ugm_best) { t, off, ch };
            }
        }
        if (!single_found) {
            const double ch = cur + v->ugm_unknown_score;
            if (ch > best[off + cl].score_sum) {
                best[off + cl] = (struct ugm_best) { v->unk, off, ch };
            }
        }
        off += cl;
    }
    // backtrack, merging runs of unknown tokens into one
    const size_t first = out->n;
    bool prev_unk = false;
    size_t pos = n;
    for (;;) {
        const struct ugm_best b = best[pos];
        const bool is_unk = b.token == v->unk;
        if (!(prev_unk && is_unk) && b.token != LLAMA_TOKEN_NULL) {
            tv_push(out, b.token);
        }
        if (b.input_offset == 0) {
            break;
        }
        prev_unk = is_unk;
        pos = b.input_offset;
    }
    if (!out->oom) {
        for (size_t i = first, j = out->n - 1; i < j; ++i, --j) {
            llama_token t = out->d[i]; out->d[i] = out->d[j]; out->d[j] = t;
        }
    }
    free(best);
    free(norm.d);
}

// ---- RWKV -----------------------------------------------------------------------------------------------

// token texts are escaped: \t \n \r \xNN and \<char>
static size_t rwkv_unescape(const char * s, size_t n, char * out) {
    size_t k = 0;
    bool esc = false;
    int hex_left = 0;
    uint8_t acc = 0;
    for (size_t i = 0; i < n; ++i) {
        const char c = s[i];
        if (hex_left) {
            const uint8_t val = (uint8_t) ((c >= 'a') ? (c - 'a' + 10) : (c - '0'));
            acc = (uint8_t) ((acc << 4) + val);
            if (--hex_left == 0) {
                out[k++] = (char) acc;
                acc = 0;
            }
            continue;
        }
        if (esc) {
            if (c == 't') out[k++] = '\t';
            else if (c == 'n') out[k++] = '\n';
            else if (c == 'r') out[k++] = '\r';
            else if (c == 'x') hex_left = 2;
            else out[k++] = c;
            esc = false;
            continue;
        }
        if (c == '\\') {
            esc = true;
            continue;
        }
        out[k++] = c;
    }
    return k;
}

static void rwkv_tokenize(const struct llama_vocab * v, const char * text, size_t len, struct tokvec * out) {
    size_t pos = 0;
    while (pos < len) {
        llama_token best = LLAMA_TOKEN_NULL;
        size_t best_len = 0;
        for (size_t l = 1; l <= (size_t) v->max_token_len && pos + l <= len; ++l) {
            const int32_t id = strmap_get(&v->rwkv_map, text + pos, l);
            if (id >= 0) {
                best = id;
                best_len = l;
            }
        }
        if (best == LLAMA_TOKEN_NULL) {
            // llama.cpp emits the unknown id even when the vocabulary has none (-1); we leave the byte out then
            if (v->unk != LLAMA_TOKEN_NULL) {
                tv_push(out, v->unk);
            }
            pos += 1;
            continue;
        }
        tv_push(out, best);
        pos += best_len;
    }
}

// ---- special-token partition ----------------------------------------------------------------------------

struct fragment {
    llama_token token; // LLAMA_TOKEN_NULL for raw text
    size_t off;
    size_t len;
};

struct fragvec {
    struct fragment * d;
    size_t n;
    size_t cap;
    bool   oom;
};

static void fv_push(struct fragvec * v, struct fragment f) {
    struct fragment * d = (struct fragment *) grow_array(v->d, v->n, &v->cap, sizeof(*d), 16, &v->oom);
    if (!d) {
        return;
    }
    v->d = d;
    v->d[v->n++] = f;
}

// cuts the special tokens out of the text, longest token first, each at all its occurrences
static bool partition_special(const struct llama_vocab * v, const char * text, size_t len, bool parse_special,
                              struct fragvec * frags) {
    fv_push(frags, (struct fragment) { LLAMA_TOKEN_NULL, 0, len });
    bool present[256] = { false };
    for (size_t i = 0; i < len; ++i) {
        present[(uint8_t) text[i]] = true;
    }
    struct fragvec next = { NULL, 0, 0, false };
    for (int32_t si = 0; si < v->n_special_cache && !frags->oom; ++si) {
        const llama_token id = v->special_cache[si];
        const struct vtoken * t = &v->tok[id];
        if (!parse_special && (t->attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN))) {
            continue;
        }
        bool possible = t->len > 0 && t->len <= len;
        for (uint32_t k = 0; possible && k < t->len; ++k) {
            possible = present[(uint8_t) t->text[k]];
        }
        if (!possible) {
            continue;
        }
        next.n = 0;
        bool changed = false;
        for (size_t fi = 0; fi < frags->n; ++fi) {
            const struct fragment f = frags->d[fi];
            if (f.token != LLAMA_TOKEN_NULL) {
                fv_push(&next, f);
                continue;
            }
            size_t off = f.off;
            size_t flen = f.len;
            while (flen > 0) {
                const char * m = (const char *) memmem(text + off, flen, t->text, t->len);
                if (!m) {
                    break;
                }
                changed = true;
                const size_t mpos = (size_t) (m - text);
                size_t left_len = mpos - off;
                if (t->attr & LLAMA_TOKEN_ATTR_LSTRIP) {
                    while (left_len > 0 && ascii_isspace(text[off + left_len - 1])) {
                        left_len--;
                    }
                }
                if (left_len > 0) {
                    fv_push(&next, (struct fragment) { LLAMA_TOKEN_NULL, off, left_len });
                }
                fv_push(&next, (struct fragment) { id, 0, 0 });
                size_t roff = mpos + t->len;
                size_t rlen = off + flen - roff;
                if ((t->attr & LLAMA_TOKEN_ATTR_RSTRIP) && rlen > 0) {
                    while (rlen > 0 && ascii_isspace(text[roff])) {
                        roff++;
                        rlen--;
                    }
                }
                off = roff;
                flen = rlen;
            }
            if (flen > 0) {
                fv_push(&next, (struct fragment) { LLAMA_TOKEN_NULL, off, flen });
            }
        }
        if (next.oom) {
            frags->oom = true;
            break;
        }
        if (changed) {
            struct fragvec tmp = *frags;
            *frags = next;
            next = tmp;
        }
    }
    free(next.d);
    return !frags->oom;
}

// ---- tokenize -------------------------------------------------------------------------------------------

static void escape_spaces(struct sbuf * b, const char * s, size_t n) {
    size_t run = 0;
    for (size_t i = 0; i < n; ++i) {
        if (s[i] == ' ') {
            sb_add(b, s + run, i - run);
            sb_add(b, "\xe2\x96\x81", 3);
            run = i + 1;
        }
    }
    sb_add(b, s + run, n - run);
}

// llama.cpp warns (and keeps both) when the model adds a BOS and the prompt already starts with one
static void warn_double_bos(const struct llama_vocab * v, bool add_special, const struct tokvec * out) {
    if (add_special && v->add_bos && out->n >= 2 && out->d[1] == v->bos) {
        LOG_WARN("%s: Added a BOS token to the prompt as specified by the model but the prompt also starts "
                 "with a BOS token. So now the final prompt starts with 2 BOS tokens.\n", "vocab_tokenize");
    }
}

typedef void (*text_tokenizer)(const struct llama_vocab * v, const char * text, size_t len, struct tokvec * out);

// special-token fragments go out as they are, the raw-text ones through the vocabulary's tokenizer
static void tokenize_fragments(const struct llama_vocab * v, const char * text, const struct fragvec * frags,
                               text_tokenizer tokenize, struct tokvec * out) {
    for (size_t i = 0; i < frags->n; ++i) {
        const struct fragment * f = &frags->d[i];
        if (f->token != LLAMA_TOKEN_NULL) {
            tv_push(out, f->token);
        } else {
            tokenize(v, text + f->off, f->len, out);
        }
    }
}

// tokenizes s[0..n) with its spaces escaped as U+2581 (and one more in front with space_prefix), through buf;
// false when out of memory (out is then marked)
static bool tokenize_escaped(const struct llama_vocab * v, struct sbuf * buf, const char * s, size_t n,
                             bool space_prefix, text_tokenizer tokenize, struct tokvec * out) {
    buf->n = 0;
    if (space_prefix) {
        sb_add(buf, "\xe2\x96\x81", 3);
    }
    escape_spaces(buf, s, n);
    if (buf->oom) {
        out->oom = true;
        return false;
    }
    tokenize(v, buf->d, buf->n, out);
    return true;
}

static bool vocab_tokenize(const struct llama_vocab * v, const char * text, size_t len, bool add_special,
                           bool parse_special, struct tokvec * out) {
    struct fragvec frags = { NULL, 0, 0, false };
    if (len > 0 && !partition_special(v, text, len, parse_special, &frags)) {
        free(frags.d);
        return false;
    }
    struct sbuf buf = { NULL, 0, 0, false };

    switch (v->type) {
        case LLAMA_VOCAB_TYPE_SPM: {
            bool prev_special = true; // the first text fragment gets the dummy prefix
            if (add_special && v->add_bos) {
                tv_push(out, v->bos);
            }
            for (size_t i = 0; i < frags.n; ++i) {
                const struct fragment * f = &frags.d[i];
                if (f->token != LLAMA_TOKEN_NULL) {
                    tv_push(out, f->token);
                    prev_special = true;
                    continue;
                }
                if (!tokenize_escaped(v, &buf, text + f->off, f->len, v->add_space_prefix && prev_special,
                                      spm_tokenize, out)) {
                    break;
                }
                prev_special = false;
            }
            warn_double_bos(v, add_special, out);
            if (add_special && v->add_eos) {
                tv_push(out, v->eos);
            }
        } break;
        case LLAMA_VOCAB_TYPE_BPE: {
            if (add_special && v->add_bos) {
                tv_push(out, v->bos);
            }
            for (size_t i = 0; i < frags.n; ++i) {
                const struct fragment * f = &frags.d[i];
                if (f->token != LLAMA_TOKEN_NULL) {
                    tv_push(out, f->token);
                    continue;
                }
                if (v->escape_whitespaces) {
                    if (!tokenize_escaped(v, &buf, text + f->off, f->len, false, bpe_tokenize, out)) {
                        break;
                    }
                } else {
                    bpe_tokenize(v, text + f->off, f->len, out);
                }
            }
            if (add_special && v->add_eos) {
                tv_push(out, v->eos);
            }
            warn_double_bos(v, add_special, out);
        } break;
        case LLAMA_VOCAB_TYPE_WPM: {
            if (add_special && v->bos != LLAMA_TOKEN_NULL) {
                tv_push(out, v->bos);
            }
            tokenize_fragments(v, text, &frags, wpm_tokenize, out);
            if (add_special && v->sep != LLAMA_TOKEN_NULL) {
                tv_push(out, v->sep);
            }
        } break;
        case LLAMA_VOCAB_TYPE_UGM: {
            if (add_special && v->add_bos) {
                tv_push(out, v->bos);
            }
            tokenize_fragments(v, text, &frags, ugm_tokenize, out);
            if (add_special && v->add_eos) {
                tv_push(out, v->eos);
            }
        } break;
        case LLAMA_VOCAB_TYPE_RWKV: {
            tokenize_fragments(v, text, &frags, rwkv_tokenize, out);
        } break;
        default:
            break;
    }
    free(buf.d);
    free(frags.d);
    return !out->oom && !buf.oom;
}

// ---- token -> piece -------------------------------------------------------------------------------------

// GPT-2 byte-level text back to bytes; characters outside the byte map keep llama.cpp's [UNK_BYTE_..] form
static void decode_byte_level(const char * text, size_t len, struct sbuf * out) {
    size_t off = 0;
    while (off < len) {
        uint32_t cpt;
        if (!llama_unicode_cpt_from_utf8(text, len, &off, &cpt)) {
            off++;
            cpt = 0xFFFD;
        }
        const int b = llama_unicode_cpt_to_byte(cpt);
        if (b >= 0) {
            const char c = (char) b;
            sb_add(out, &c, 1);
            continue;
        }
        char u[4];
        int k = llama_unicode_cpt_to_utf8(cpt, u);
        sb_add(out, "[UNK_BYTE_0x", 12);
        for (int j = 0; j < k; ++j) {
            char hx[3];
            snprintf(hx, sizeof(hx), "%02x", (uint8_t) u[j]);
            sb_add(out, hx, 2);
        }
        sb_add(out, text, len);
        sb_add(out, "]", 1);
    }
}

static void unescape_spaces(const char * s, size_t n, struct sbuf * out) {
    size_t run = 0;
    for (size_t i = 0; i + 3 <= n;) {
        if (memcmp(s + i, "\xe2\x96\x81", 3) == 0) {
            sb_add(out, s + run, i - run);
            sb_add(out, " ", 1);
            i += 3;
            run = i;
        } else {
            i++;
        }
    }
    sb_add(out, s + run, n - run);
}

// the piece of a token as llama.cpp renders it before any cache exists (special: render control tokens)
static void piece_uncached(const struct llama_vocab * v, llama_token id, bool special, struct sbuf * out) {
    const int32_t attr = tok_attr(v, id);
    const int32_t attr_special = LLAMA_TOKEN_ATTR_UNKNOWN | LLAMA_TOKEN_ATTR_CONTROL;
    if (!special && (attr & attr_special)) {
        return;
    }
    const struct vtoken * t = &v->tok[id];
    switch (v->type) {
        case LLAMA_VOCAB_TYPE_WPM:
        case LLAMA_VOCAB_TYPE_SPM:
        case LLAMA_VOCAB_TYPE_UGM:
            if (attr & (attr_special | LLAMA_TOKEN_ATTR_USER_DEFINED)) {
                sb_add(out, t->text, t->len);
            } else if (attr & LLAMA_TOKEN_ATTR_NORMAL) {
                unescape_spaces(t->text, t->len, out);
            } else if (attr & LLAMA_TOKEN_ATTR_BYTE) {
                const char c = (char) token_to_byte(v, id);
                sb_add(out, &c, 1);
            }
            break;
        case LLAMA_VOCAB_TYPE_BPE:
            if (attr & (attr_special | LLAMA_TOKEN_ATTR_USER_DEFINED)) {
                sb_add(out, t->text, t->len);
            } else if (attr & LLAMA_TOKEN_ATTR_NORMAL) {
                if (v->escape_whitespaces) {
                    unescape_spaces(t->text, t->len, out);
                } else {
                    decode_byte_level(t->text, t->len, out);
                }
            } else if (attr & LLAMA_TOKEN_ATTR_BYTE) {
                const char c = (char) token_to_byte(v, id);
                sb_add(out, &c, 1);
            }
            break;
        case LLAMA_VOCAB_TYPE_RWKV: {
            char * tmp = (char *) malloc(t->len + 1);
            if (!tmp) {
                out->oom = true;
                return;
            }
            const size_t k = rwkv_unescape(t->text, t->len, tmp);
            sb_add(out, tmp, k);
            free(tmp);
        } break;
        default:
            break;
    }
}

static int32_t copy_piece(const char * p, size_t size, char * buf, int32_t length, int32_t lstrip) {
    for (int32_t i = 0; i < lstrip && size && *p == ' '; ++i) {
        p++;
        size--;
    }
    if (size > (size_t) INT32_MAX) {
        return INT32_MIN;
    }
    if (length < (int32_t) size) {
        return -(int32_t) size;
    }
    if (size) {
        memcpy(buf, p, size);
    }
    return (int32_t) size;
}

static int32_t vocab_token_to_piece(const struct llama_vocab * v, llama_token token, char * buf, int32_t length,
                                    int32_t lstrip, bool special) {
    const int32_t attr = tok_attr(v, token);
    if (!special && (attr & (LLAMA_TOKEN_ATTR_UNKNOWN | LLAMA_TOKEN_ATTR_CONTROL))) {
        return 0;
    }
    if (v->piece_off) {
        return copy_piece(v->piece_arena + v->piece_off[token], v->piece_len[token], buf, length, lstrip);
    }
    struct sbuf b = { NULL, 0, 0, false };
    piece_uncached(v, token, special, &b);
    const int32_t r = b.oom ? 0 : copy_piece(b.d ? b.d : "", b.n, buf, length, lstrip);
    free(b.d);
    return r;
}

// ---- public API -----------------------------------------------------------------------------------------

int32_t llama_vocab_n_tokens(const struct llama_vocab * vocab) {
    return vocab ? vocab->n_tokens : 0;
}

enum llama_vocab_type llama_vocab_type(const struct llama_vocab * vocab) {
    return vocab ? vocab->type : LLAMA_VOCAB_TYPE_NONE;
}

static bool check_token(const struct llama_vocab * v, llama_token t, const char * fn) {
    if (!v || v->type == LLAMA_VOCAB_TYPE_NONE || !tok_valid(v, t)) {
        LOG_ERR("%s: invalid token id %d (vocabulary has %d tokens)\n", fn, t, v ? v->n_tokens : 0);
        return false;
    }
    return true;
}

const char * llama_vocab_get_text(const struct llama_vocab * vocab, llama_token token) {
    return check_token(vocab, token, __func__) ? vocab->tok[token].text : NULL;
}

float llama_vocab_get_score(const struct llama_vocab * vocab, llama_token token) {
    return check_token(vocab, token, __func__) ? vocab->tok[token].score : 0.0f;
}

enum llama_token_attr llama_vocab_get_attr(const struct llama_vocab * vocab, llama_token token) {
    return check_token(vocab, token, __func__) ? (enum llama_token_attr) vocab->tok[token].attr
                                               : LLAMA_TOKEN_ATTR_UNDEFINED;
}

bool llama_vocab_is_eog(const struct llama_vocab * vocab, llama_token token) {
    return vocab && token != LLAMA_TOKEN_NULL && tok_valid(vocab, token) && vocab->eog[token];
}

bool llama_vocab_is_control(const struct llama_vocab * vocab, llama_token token) {
    return vocab && tok_valid(vocab, token) && vocab->type != LLAMA_VOCAB_TYPE_NONE &&
           (vocab->tok[token].attr & LLAMA_TOKEN_ATTR_CONTROL);
}

llama_token llama_vocab_bos(const struct llama_vocab * vocab) { return vocab ? vocab->bos : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_eos(const struct llama_vocab * vocab) { return vocab ? vocab->eos : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_eot(const struct llama_vocab * vocab) { return vocab ? vocab->eot : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_eom(const struct llama_vocab * vocab) { return vocab ? vocab->eom : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_unk(const struct llama_vocab * vocab) { return vocab ? vocab->unk : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_sep(const struct llama_vocab * vocab) { return vocab ? vocab->sep : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_nl (const struct llama_vocab * vocab) { return vocab ? vocab->nl  : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_pad(const struct llama_vocab * vocab) { return vocab ? vocab->pad : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_mask(const struct llama_vocab * vocab) { return vocab ? vocab->mask : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_cls(const struct llama_vocab * vocab) { return llama_vocab_bos(vocab); }

llama_token llama_vocab_fim_pre(const struct llama_vocab * vocab) { return vocab ? vocab->fim_pre : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_fim_suf(const struct llama_vocab * vocab) { return vocab ? vocab->fim_suf : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_fim_mid(const struct llama_vocab * vocab) { return vocab ? vocab->fim_mid : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_fim_pad(const struct llama_vocab * vocab) { return vocab ? vocab->fim_pad : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_fim_rep(const struct llama_vocab * vocab) { return vocab ? vocab->fim_rep : LLAMA_TOKEN_NULL; }
llama_token llama_vocab_fim_sep(const struct llama_vocab * vocab) { return vocab ? vocab->fim_sep : LLAMA_TOKEN_NULL; }

bool llama_vocab_get_add_bos(const struct llama_vocab * vocab) { return vocab && vocab->add_bos; }
bool llama_vocab_get_add_eos(const struct llama_vocab * vocab) { return vocab && vocab->add_eos; }
bool llama_vocab_get_add_sep(const struct llama_vocab * vocab) { return vocab && vocab->add_sep; }

// deprecated names
int32_t llama_n_vocab(const struct llama_vocab * vocab) { return llama_vocab_n_tokens(vocab); }
const char * llama_token_get_text(const struct llama_vocab * vocab, llama_token token) { return llama_vocab_get_text(vocab, token); }
float llama_token_get_score(const struct llama_vocab * vocab, llama_token token) { return llama_vocab_get_score(vocab, token); }
enum llama_token_attr llama_token_get_attr(const struct llama_vocab * vocab, llama_token token) { return llama_vocab_get_attr(vocab, token); }
bool llama_token_is_eog(const struct llama_vocab * vocab, llama_token token) { return llama_vocab_is_eog(vocab, token); }
bool llama_token_is_control(const struct llama_vocab * vocab, llama_token token) { return llama_vocab_is_control(vocab, token); }
llama_token llama_token_bos(const struct llama_vocab * vocab) { return llama_vocab_bos(vocab); }
llama_token llama_token_eos(const struct llama_vocab * vocab) { return llama_vocab_eos(vocab); }
llama_token llama_token_eot(const struct llama_vocab * vocab) { return llama_vocab_eot(vocab); }
llama_token llama_token_cls(const struct llama_vocab * vocab) { return llama_vocab_bos(vocab); }
llama_token llama_token_sep(const struct llama_vocab * vocab) { return llama_vocab_sep(vocab); }
llama_token llama_token_nl (const struct llama_vocab * vocab) { return llama_vocab_nl(vocab); }
llama_token llama_token_pad(const struct llama_vocab * vocab) { return llama_vocab_pad(vocab); }
bool llama_add_bos_token(const struct llama_vocab * vocab) { return llama_vocab_get_add_bos(vocab); }
bool llama_add_eos_token(const struct llama_vocab * vocab) { return llama_vocab_get_add_eos(vocab); }
llama_token llama_token_fim_pre(const struct llama_vocab * vocab) { return llama_vocab_fim_pre(vocab); }
llama_token llama_token_fim_suf(const struct llama_vocab * vocab) { return llama_vocab_fim_suf(vocab); }
llama_token llama_token_fim_mid(const struct llama_vocab * vocab) { return llama_vocab_fim_mid(vocab); }
llama_token llama_token_fim_pad(const struct llama_vocab * vocab) { return llama_vocab_fim_pad(vocab); }
llama_token llama_token_fim_rep(const struct llama_vocab * vocab) { return llama_vocab_fim_rep(vocab); }
llama_token llama_token_fim_sep(const struct llama_vocab * vocab) { return llama_vocab_fim_sep(vocab); }

enum llama_vocab_pre_type llama_vocab_get_pre_type(const struct llama_vocab * vocab) {
    return vocab ? vocab->pre_type : LLAMA_VOCAB_PRE_TYPE_DEFAULT;
}

uint32_t llama_vocab_n_token_types(const struct llama_vocab * vocab) {
    return vocab ? vocab->n_token_types : 0;
}

int32_t llama_vocab_max_token_len(const struct llama_vocab * vocab) {
    return vocab ? vocab->max_token_len : 0;
}

const char * llama_vocab_token_piece(const struct llama_vocab * vocab, llama_token token, size_t * len) {
    if (!vocab || !tok_valid(vocab, token) || !vocab->piece_off) {
        return NULL;
    }
    if (len) {
        *len = vocab->piece_len[token];
    }
    return vocab->piece_arena + vocab->piece_off[token];
}

int32_t llama_tokenize(const struct llama_vocab * vocab, const char * text, int32_t text_len, llama_token * tokens,
                       int32_t n_tokens_max, bool add_special, bool parse_special) {
    if (!vocab || text_len < 0 || (!text && text_len > 0) || (!tokens && n_tokens_max > 0)) {
        LOG_ERR("%s: invalid arguments (vocab %p, text %p, text_len %d, tokens %p, n_tokens_max %d)\n", __func__,
                (const void *) vocab, (const void *) text, text_len, (void *) tokens, n_tokens_max);
        return INT32_MIN;
    }
    if (vocab->type == LLAMA_VOCAB_TYPE_NONE) {
        LOG_ERR("%s: the model has no vocabulary\n", __func__);
        return INT32_MIN;
    }
    struct tokvec out = { NULL, 0, 0, false };
    if (!vocab_tokenize(vocab, text ? text : "", (size_t) text_len, add_special, parse_special, &out)) {
        LOG_ERR("%s: out of memory tokenizing %d bytes\n", __func__, text_len);
        free(out.d);
        return INT32_MIN;
    }
    if (out.n >= (size_t) INT32_MAX) {
        LOG_ERR("%s: tokenization result size %zu exceeds int32_t limit\n", __func__, out.n);
        free(out.d);
        return INT32_MIN;
    }
    const int32_t n = (int32_t) out.n;
    if (n_tokens_max < n) {
        free(out.d);
        return -n;
    }
    if (n > 0) {
        memcpy(tokens, out.d, (size_t) n * sizeof(llama_token));
    }
    free(out.d);
    return n;
}

int32_t llama_token_to_piece(const struct llama_vocab * vocab, llama_token token, char * buf, int32_t length,
                             int32_t lstrip, bool special) {
    if (!check_token(vocab, token, __func__)) {
        return 0;
    }
    if (!buf) {
        length = 0;
    }
    return vocab_token_to_piece(vocab, token, buf, length, lstrip, special);
}

int32_t llama_detokenize(const struct llama_vocab * vocab, const llama_token * tokens, int32_t n_tokens, char * text,
                         int32_t text_len_max, bool remove_special, bool unparse_special) {
    if (!vocab || vocab->type == LLAMA_VOCAB_TYPE_NONE) {
        return 0;
    }
    if (n_tokens < 0 || (!tokens && n_tokens > 0)) {
        LOG_ERR("%s: invalid arguments (tokens %p, n_tokens %d)\n", __func__, (const void *) tokens, n_tokens);
        return 0;
    }
    if (!text || text_len_max < 0) {
        text_len_max = 0;
    }
    int32_t avail = text_len_max;
    int64_t total = 0;
    bool remove_space = vocab->add_space_prefix;

    if (remove_special && vocab->add_bos && n_tokens > 0 && tokens[0] == vocab->bos) {
        remove_space = false;
        n_tokens--;
        tokens++;
    }
    if (remove_special && vocab->add_eos && n_tokens > 0 && tokens[n_tokens - 1] == vocab->eos) {
        n_tokens--;
    }

    char * p = text;
    for (int32_t i = 0; i < n_tokens; ++i) {
        if (!tok_valid(vocab, tokens[i])) {
            LOG_ERR("%s: skipping invalid token id %d\n", __func__, tokens[i]);
            continue;
        }
        const int32_t n_chars = vocab_token_to_piece(vocab, tokens[i], p, avail, remove_space, unparse_special);
        remove_space = false;
        if (n_chars == INT32_MIN) {
            return INT32_MIN;
        }
        if (n_chars < 0) {
            avail = 0;
            total -= n_chars;
        } else if (n_chars > 0) {
            avail -= n_chars;
            p += n_chars;
            total += n_chars;
        }
        if (total > INT32_MAX) {
            LOG_ERR("%s: detokenized text exceeds int32_t limit\n", __func__);
            return INT32_MIN;
        }
    }
    if (total > text_len_max) {
        return (int32_t) -total;
    }

    int32_t tot = (int32_t) total;
    if (vocab->clean_spaces && tot > 0) {
        char * t = text;
        // pass 1: " ?", " !", " .", " ,"  -> drop the space
        const int32_t total1 = tot;
        tot = 1;
        for (int32_t i = 1; i < total1; ++i) {
            const char x = t[i];
            if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) {
                tot--;
            }
            t[tot++] = x;
        }
        // pass 2: a single apostrophe between spaces: " ' " -> "'"
        const int32_t total2 = tot;
        tot = 1;
        for (int32_t i = 1; i < total2; ++i) {
            const char x = t[i];
            if (x == '\'' && i + 1 < total2 && t[i - 1] == ' ' && t[i + 1] == ' ') {
                tot--;
                t[++i] = '\0';
            }
            t[tot++] = x;
        }
        // pass 3: contractions " 's", " 'm", " 're", " 've" lose the space
        const int32_t total3 = tot;
        tot = 1;
        for (int32_t i = 1; i < total3; ++i) {
            const char x = t[i];
            if (t[i - 1] == ' ' && x == '\'' && i + 1 < total3) {
                const char x1 = t[i + 1];
                if (x1 == 's' || x1 == 'm') {
                    tot--;
                } else if (x1 != 't' && x1 != 'd' && i + 2 < total3) {
                    const char x2 = t[i + 2];
                    if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) {
                        tot--;
                    }
                }
            }
            t[tot++] = x;
        }
    }
    return tot <= text_len_max ? tot : -tot;
}

// ---- loading --------------------------------------------------------------------------------------------

void llama_vocab_free(struct llama_vocab * v) {
    if (!v) {
        return;
    }
    free(v->tok);
    free(v->tok_arena);
    strmap_free(&v->tok_map);
    strmap_free(&v->merges);
    free(v->merges_arena);
    free(v->eog);
    free(v->special_cache);
    free(v->piece_arena);
    free(v->piece_off);
    free(v->piece_len);
    llama_unicode_splitter_free(v->splitter);
    free(v->charsmap);
    strmap_free(&v->ugm_ud_prefixes);
    strmap_free(&v->rwkv_map);
    free(v->rwkv_arena);
    free(v);
}

// key readers: false + one log line when present with an unusable type
static bool kv_get_str(const struct gguf_context * g, const char * key, const char ** out) {
    const int64_t id = gguf_find_key(g, key);
    if (id < 0) {
        return true;
    }
    if (gguf_get_kv_type(g, id) != GGUF_TYPE_STRING) {
        LOG_ERR("llama_vocab_load: key %s has type %s, expected string\n", key, gguf_type_name(gguf_get_kv_type(g, id)));
        return false;
    }
    *out = gguf_get_val_str(g, id);
    return true;
}

// integer keys are accepted in any integer type; *found tells whether the key exists
static bool kv_get_int(const struct gguf_context * g, const char * key, int64_t * out, bool * found) {
    *found = false;
    const int64_t id = gguf_find_key(g, key);
    if (id < 0) {
        return true;
    }
    switch (gguf_get_kv_type(g, id)) {
        case GGUF_TYPE_UINT8:  *out = gguf_get_val_u8(g, id);  break;
        case GGUF_TYPE_INT8:   *out = gguf_get_val_i8(g, id);  break;
        case GGUF_TYPE_UINT16: *out = gguf_get_val_u16(g, id); break;
        case GGUF_TYPE_INT16:  *out = gguf_get_val_i16(g, id); break;
        case GGUF_TYPE_UINT32: *out = gguf_get_val_u32(g, id); break;
        case GGUF_TYPE_INT32:  *out = gguf_get_val_i32(g, id); break;
        case GGUF_TYPE_UINT64: {
            const uint64_t u = gguf_get_val_u64(g, id);
            *out = u > (uint64_t) INT64_MAX ? INT64_MAX : (int64_t) u;
        } break;
        case GGUF_TYPE_INT64:  *out = gguf_get_val_i64(g, id); break;
        default:
            LOG_ERR("llama_vocab_load: key %s has type %s, expected an integer\n", key,
                    gguf_type_name(gguf_get_kv_type(g, id)));
            return false;
    }
    *found = true;
    return true;
}

static bool kv_get_bool(const struct gguf_context * g, const char * key, bool * out) {
    const int64_t id = gguf_find_key(g, key);
    if (id < 0) {
        return true;
    }
    if (gguf_get_kv_type(g, id) == GGUF_TYPE_BOOL) {
        *out = gguf_get_val_bool(g, id);
        return true;
    }
    const enum gguf_type t = gguf_get_kv_type(g, id);
    bool found;
    int64_t v;
    if (t != GGUF_TYPE_STRING && t != GGUF_TYPE_ARRAY && t != GGUF_TYPE_FLOAT32 && t != GGUF_TYPE_FLOAT64 &&
        kv_get_int(g, key, &v, &found) && found) {
        *out = v != 0;
        return true;
    }
    LOG_ERR("llama_vocab_load: key %s has type %s, expected bool\n", key, gguf_type_name(gguf_get_kv_type(g, id)));
    return false;
}

static const char * const k_regex_llama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char * const k_regex_gpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
static const char * const k_regex_qwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char * const k_regex_gpt4o =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char * const k_regex_deepseek3 =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";

// the pre-tokenizer regexes of each type (llama.cpp's table); returns the count, 0 for unsupported
static int pre_regexes(enum llama_vocab_pre_type t, const char ** r, bool * byte_encode) {
    *byte_encode = true;
    switch (t) {
        case LLAMA_VOCAB_PRE_TYPE_LLAMA3:
        case LLAMA_VOCAB_PRE_TYPE_DBRX:
        case LLAMA_VOCAB_PRE_TYPE_SMAUG:
        case LLAMA_VOCAB_PRE_TYPE_CHATGLM4:
            r[0] = k_regex_llama3;
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_JAIS2:
            r[0] = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}";
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_LLM:
            r[0] = "[\r\n]";
            r[1] = "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+";
            r[2] = "\\s?[!-/:-~！-／：-～‘-‟　-。]+";
            r[3] = "\\s+$";
            r[4] = "[一-龥ࠀ-一가-퟿]+";
            r[5] = "\\p{N}+";
            return 6;
        case LLAMA_VOCAB_PRE_TYPE_DEEPSEEK3_LLM:
        case LLAMA_VOCAB_PRE_TYPE_HUNYUAN_DENSE:
        case LLAMA_VOCAB_PRE_TYPE_JOYAI_LLM:
            r[0] = "\\p{N}{1,3}";
            r[1] = "[一-龥぀-ゟ゠-ヿ]+";
            r[2] = k_regex_deepseek3;
            return 3;
        case LLAMA_VOCAB_PRE_TYPE_YOUTU:
            r[0] = "[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+";
            r[1] = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
            return 2;
        case LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_CODER:
            r[0] = "[\r\n]";
            r[1] = "\\s?\\p{L}+";
            r[2] = "\\s?\\p{P}+";
            r[3] = "[一-龥ࠀ-一가-퟿]+";
            r[4] = "\\p{N}";
            return 5;
        case LLAMA_VOCAB_PRE_TYPE_FALCON:
            r[0] = "[\\p{P}\\$\\+<=>\\^~\\|`]+";
            r[1] = k_regex_gpt2;
            r[2] = "[0-9][0-9][0-9]";
            return 3;
        case LLAMA_VOCAB_PRE_TYPE_STARCODER:
        case LLAMA_VOCAB_PRE_TYPE_REFACT:
        case LLAMA_VOCAB_PRE_TYPE_COMMAND_R:
        case LLAMA_VOCAB_PRE_TYPE_SMOLLM:
        case LLAMA_VOCAB_PRE_TYPE_CODESHELL:
        case LLAMA_VOCAB_PRE_TYPE_EXAONE:
        case LLAMA_VOCAB_PRE_TYPE_MINERVA:
            r[0] = "\\p{N}";
            r[1] = k_regex_gpt2;
            return 2;
        case LLAMA_VOCAB_PRE_TYPE_GPT2:
        case LLAMA_VOCAB_PRE_TYPE_MPT:
        case LLAMA_VOCAB_PRE_TYPE_OLMO:
        case LLAMA_VOCAB_PRE_TYPE_JAIS:
        case LLAMA_VOCAB_PRE_TYPE_TRILLION:
        case LLAMA_VOCAB_PRE_TYPE_GRANITE_DOCLING:
            r[0] = k_regex_gpt2;
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_STABLELM2:
        case LLAMA_VOCAB_PRE_TYPE_QWEN2:
        case LLAMA_VOCAB_PRE_TYPE_HUNYUAN:
        case LLAMA_VOCAB_PRE_TYPE_SOLAR_OPEN:
        case LLAMA_VOCAB_PRE_TYPE_GROK_2:
            r[0] = k_regex_qwen2;
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_QWEN35:
            r[0] = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_PORO:
        case LLAMA_VOCAB_PRE_TYPE_BLOOM:
        case LLAMA_VOCAB_PRE_TYPE_GPT3_FINNISH:
            r[0] = " ?[^(\\s|.,!?…。，、।۔،)]+";
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_VIKING:
            r[0] = " ?[^(\\s|.,!?…。，、।۔،)]+";
            r[1] = "\\p{N}";
            return 2;
        case LLAMA_VOCAB_PRE_TYPE_TEKKEN:
            r[0] = "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_CHAMELEON:
            r[0] = "<sentinel:[0-9]+>";
            r[1] = "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z";
            r[2] = "([\\t\\n]|    |  )";
            r[3] = "\\p{N}";
            r[4] = "[\\p{P}!-/:-@\\[-`{-~]";
            r[5] = k_regex_gpt2;
            return 6;
        case LLAMA_VOCAB_PRE_TYPE_GPT4O:
        case LLAMA_VOCAB_PRE_TYPE_MINIMAX_M2:
            r[0] = k_regex_gpt4o;
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_TINY_AYA:
            r[0] = "\\d{1,3}(?=(?:\\d{3})*\\b)";
            r[1] = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
            return 2;
        case LLAMA_VOCAB_PRE_TYPE_SUPERBPE:
            r[0] = "\\p{N}+";
            r[1] = "(?=(\\d{3})+(?!\\d))";
            return 2;
        case LLAMA_VOCAB_PRE_TYPE_BAILINGMOE:
            r[0] = "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_SEED_CODER:
            r[0] = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_EXAONE_MOE:
            r[0] = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_GEMMA4:
            r[0] = "[^\\n]+|[\\n]+";
            *byte_encode = false;
            return 1;
        case LLAMA_VOCAB_PRE_TYPE_DEFAULT:
            r[0] = "[\\p{P}\\$\\+<=>\\^~\\|]+";
            r[1] = k_regex_gpt2;
            r[2] = "\\p{N}+";
            r[3] = "[0-9][0-9][0-9]";
            return 4;
        default:
            return 0;
    }
}

struct pre_name {
    const char * name;
    enum llama_vocab_pre_type type;
    int8_t clean_spaces;  // -1 keep, 0/1 set
    bool ignore_merges;
    bool add_bos;
};

static const struct pre_name k_pre_names[] = {
    { "default",          LLAMA_VOCAB_PRE_TYPE_DEFAULT,        -1, false, false },
    { "llama3",           LLAMA_VOCAB_PRE_TYPE_LLAMA3,         -1, true,  true  },
    { "llama-v3",         LLAMA_VOCAB_PRE_TYPE_LLAMA3,         -1, true,  true  },
    { "llama-bpe",        LLAMA_VOCAB_PRE_TYPE_LLAMA3,         -1, true,  true  },
    { "falcon3",          LLAMA_VOCAB_PRE_TYPE_LLAMA3,         -1, true,  true  },
    { "falcon-h1",        LLAMA_VOCAB_PRE_TYPE_LLAMA3,         -1, true,  true  },
    { "pixtral",          LLAMA_VOCAB_PRE_TYPE_LLAMA3,         -1, true,  true  },
    { "midm-2.0",         LLAMA_VOCAB_PRE_TYPE_LLAMA3,         -1, true,  true  },
    { "lfm2",             LLAMA_VOCAB_PRE_TYPE_LLAMA3,         -1, true,  true  },
    { "deepseek-llm",     LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_LLM,    0, false, false },
    { "deepseek-coder",   LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_CODER,  0, false, false },
    { "deepseek-v3",      LLAMA_VOCAB_PRE_TYPE_DEEPSEEK3_LLM,   0, false, false },
    { "youtu",            LLAMA_VOCAB_PRE_TYPE_YOUTU,           0, true,  false },
    { "falcon",           LLAMA_VOCAB_PRE_TYPE_FALCON,         -1, false, false },
    { "mpt",              LLAMA_VOCAB_PRE_TYPE_MPT,            -1, false, false },
    { "starcoder",        LLAMA_VOCAB_PRE_TYPE_STARCODER,      -1, false, false },
    { "gpt-2",            LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "phi-2",            LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "jina-es",          LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "jina-de",          LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "gigachat",         LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "jina-v2-es",       LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "jina-v2-de",       LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "a.x-4.0",          LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "mellum",           LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "modern-bert",      LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "jina-v1-en",       LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "jina-v2-code",     LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "roberta-bpe",      LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "jais-2",           LLAMA_VOCAB_PRE_TYPE_JAIS2,          -1, false, false },
    { "refact",           LLAMA_VOCAB_PRE_TYPE_REFACT,         -1, false, false },
    { "command-r",        LLAMA_VOCAB_PRE_TYPE_COMMAND_R,       0, false, false },
    { "qwen2",            LLAMA_VOCAB_PRE_TYPE_QWEN2,           0, false, false },
    { "deepseek-r1-qwen", LLAMA_VOCAB_PRE_TYPE_QWEN2,           0, false, false },
    { "kormo",            LLAMA_VOCAB_PRE_TYPE_QWEN2,           0, false, false },
    { "qwen35",           LLAMA_VOCAB_PRE_TYPE_QWEN35,          0, false, false },
    { "stablelm2",        LLAMA_VOCAB_PRE_TYPE_STABLELM2,      -1, false, false },
    { "olmo",             LLAMA_VOCAB_PRE_TYPE_OLMO,           -1, false, false },
    { "dbrx",             LLAMA_VOCAB_PRE_TYPE_DBRX,           -1, false, false },
    { "smaug-bpe",        LLAMA_VOCAB_PRE_TYPE_SMAUG,          -1, false, false },
    { "poro-chat",        LLAMA_VOCAB_PRE_TYPE_PORO,            0, false, false },
    { "glm4",             LLAMA_VOCAB_PRE_TYPE_CHATGLM4,       -1, false, false },
    { "chatglm-bpe",      LLAMA_VOCAB_PRE_TYPE_CHATGLM4,       -1, false, false },
    { "viking",           LLAMA_VOCAB_PRE_TYPE_VIKING,          0, false, false },
    { "jais",             LLAMA_VOCAB_PRE_TYPE_JAIS,           -1, false, false },
    { "tekken",           LLAMA_VOCAB_PRE_TYPE_TEKKEN,          0, true,  true  },
    { "smollm",           LLAMA_VOCAB_PRE_TYPE_SMOLLM,          0, false, false },
    { "codeshell",        LLAMA_VOCAB_PRE_TYPE_CODESHELL,      -1, false, false },
    { "bloom",            LLAMA_VOCAB_PRE_TYPE_BLOOM,          -1, false, false },
    { "gpt3-finnish",     LLAMA_VOCAB_PRE_TYPE_GPT3_FINNISH,   -1, false, false },
    { "exaone",           LLAMA_VOCAB_PRE_TYPE_EXAONE,         -1, false, false },
    { "exaone4",          LLAMA_VOCAB_PRE_TYPE_GPT2,           -1, false, false },
    { "exaone-moe",       LLAMA_VOCAB_PRE_TYPE_EXAONE_MOE,     -1, false, false },
    { "chameleon",        LLAMA_VOCAB_PRE_TYPE_CHAMELEON,       0, false, true  },
    { "minerva-7b",       LLAMA_VOCAB_PRE_TYPE_MINERVA,        -1, false, false },
    { "megrez",           LLAMA_VOCAB_PRE_TYPE_QWEN2,          -1, false, false },
    { "gpt-4o",           LLAMA_VOCAB_PRE_TYPE_GPT4O,           0, false, false },
    { "llama4",           LLAMA_VOCAB_PRE_TYPE_GPT4O,           0, false, false },
    { "tiny_aya",         LLAMA_VOCAB_PRE_TYPE_TINY_AYA,        0, false, false },
    { "superbpe",         LLAMA_VOCAB_PRE_TYPE_SUPERBPE,        0, false, false },
    { "trillion",         LLAMA_VOCAB_PRE_TYPE_TRILLION,        0, false, false },
    { "granite-docling",  LLAMA_VOCAB_PRE_TYPE_GRANITE_DOCLING, 0, false, false },
    { "bailingmoe",       LLAMA_VOCAB_PRE_TYPE_BAILINGMOE,      0, false, false },
    { "bailingmoe2",      LLAMA_VOCAB_PRE_TYPE_BAILINGMOE,      0, false, false },
    { "llada-moe",        LLAMA_VOCAB_PRE_TYPE_BAILINGMOE,      0, false, false },
    { "seed-coder",       LLAMA_VOCAB_PRE_TYPE_SEED_CODER,      0, false, false },
    { "hunyuan",          LLAMA_VOCAB_PRE_TYPE_HUNYUAN,         0, false, false },
    { "hunyuan-dense",    LLAMA_VOCAB_PRE_TYPE_HUNYUAN_DENSE,   0, false, false },
    { "joyai-llm",        LLAMA_VOCAB_PRE_TYPE_JOYAI_LLM,       0, false, false },
    { "grok-2",           LLAMA_VOCAB_PRE_TYPE_GROK_2,          0, false, false },
    { "minimax-m2",       LLAMA_VOCAB_PRE_TYPE_MINIMAX_M2,      0, false, false },
    { "solar-open",       LLAMA_VOCAB_PRE_TYPE_SOLAR_OPEN,      0, false, false },
    { "gemma4",           LLAMA_VOCAB_PRE_TYPE_GEMMA4,         -1, false, false },
};

static bool str_contains(const char * s, const char * sub) {
    return s && strstr(s, sub) != NULL;
}

static void set_attr(struct llama_vocab * v, llama_token id, int32_t attr, bool on) {
    if (on) {
        v->tok[id].attr |= attr;
    } else {
        v->tok[id].attr &= ~attr;
    }
}

static void mark_control(struct llama_vocab * v, llama_token id) {
    if ((v->tok[id].attr & LLAMA_TOKEN_ATTR_CONTROL) == 0) {
        LOG_WARN("llama_vocab_load: control-looking token: %6d '%s' was not control-type; this is probably a bug in "
                 "the model. its type will be overridden\n", id, v->tok[id].text);
        v->tok[id].attr |= LLAMA_TOKEN_ATTR_CONTROL;
    }
}

static bool text_is_any(const struct vtoken * t, const char * const * list) {
    for (; *list; ++list) {
        if (strlen(*list) == t->len && memcmp(*list, t->text, t->len) == 0) {
            return true;
        }
    }
    return false;
}

static int cmp_special_len_desc(const void * a, const void * b, void * ctx) {
    const struct llama_vocab * v = (const struct llama_vocab *) ctx;
    const llama_token x = *(const llama_token *) a;
    const llama_token y = *(const llama_token *) b;
    const uint32_t lx = v->tok[x].len, ly = v->tok[y].len;
    if (lx != ly) {
        return lx > ly ? -1 : 1;
    }
    return x < y ? -1 : (x > y); // ties: by id, for a deterministic order
}

static llama_token find_text(const struct llama_vocab * v, const char * s) {
    return text_to_token(v, s, strlen(s));
}

// sets a token attribute by token text; false (with a log line) when the text is not in the vocabulary, which
// llama.cpp treats as a load error
static bool set_attr_by_text(struct llama_vocab * v, const char * text, int32_t attr, bool on) {
    const llama_token id = find_text(v, text);
    if (id == LLAMA_TOKEN_NULL) {
        LOG_ERR("llama_vocab_load: token '%s' needed by the model's token attribute rules is missing\n", text);
        return false;
    }
    set_attr(v, id, attr, on);
    return true;
}

#define FAIL(...) do { LOG_ERR(__VA_ARGS__); goto fail; } while (0)

struct llama_vocab * llama_vocab_load(const struct gguf_context * g) {
    if (!g) {
        LOG_ERR("%s: no GGUF context\n", __func__);
        return NULL;
    }
    struct llama_vocab * v = (struct llama_vocab *) calloc(1, sizeof(struct llama_vocab));
    if (!v) {
        LOG_ERR("%s: out of memory\n", __func__);
        return NULL;
    }
    v->type = LLAMA_VOCAB_TYPE_SPM;
    v->pre_type = LLAMA_VOCAB_PRE_TYPE_DEFAULT;
    v->bos = 1; v->eos = 2; v->eot = LLAMA_TOKEN_NULL; v->eom = LLAMA_TOKEN_NULL; v->unk = 0;
    v->sep = LLAMA_TOKEN_NULL; v->pad = LLAMA_TOKEN_NULL; v->mask = LLAMA_TOKEN_NULL; v->nl = 13;
    v->fim_pre = v->fim_suf = v->fim_mid = v->fim_pad = v->fim_rep = v->fim_sep = LLAMA_TOKEN_NULL;
    v->escape_whitespaces = true;
    v->lowercase = true;
    v->byte_encode = true;

    const char * model = NULL;
    const char * pre = NULL;
    const char * general_name = NULL;
    const char * general_arch = NULL;
    if (!kv_get_str(g, "tokenizer.ggml.model", &model) || !kv_get_str(g, "tokenizer.ggml.pre", &pre) ||
        !kv_get_str(g, "general.name", &general_name) || !kv_get_str(g, "general.architecture", &general_arch)) {
        goto fail;
    }
    if (!model) {
        FAIL("%s: key not found in model: tokenizer.ggml.model\n", __func__);
    }
    snprintf(v->tokenizer_model, sizeof(v->tokenizer_model), "%s", model);
    snprintf(v->tokenizer_pre, sizeof(v->tokenizer_pre), "%s", pre ? pre : "");
    {
        bool found;
        int64_t n;
        if (!kv_get_int(g, "tokenizer.ggml.token_type_count", &n, &found)) {
            goto fail;
        }
        if (found) {
            v->n_token_types = (uint32_t) (n < 0 ? 0 : n > UINT32_MAX ? UINT32_MAX : n);
        }
    }

    if (strcmp(model, "no_vocab") == 0 || strcmp(model, "none") == 0) {
        v->type = LLAMA_VOCAB_TYPE_NONE;
        v->bos = v->eos = v->unk = v->sep = v->pad = v->mask = v->nl = LLAMA_TOKEN_NULL;
        char key[256];
        snprintf(key, sizeof(key), "%s.vocab_size", general_arch ? general_arch : "");
        bool found;
        int64_t n = 0;
        if (!kv_get_int(g, key, &n, &found)) {
            goto fail;
        }
        if (found) {
            if (n < 0 || n > INT32_MAX) {
                FAIL("%s: %s = %lld is out of range\n", __func__, key, (long long) n);
            }
            LOG_WARN("%s: adding %lld dummy tokens\n", __func__, (long long) n);
            v->n_tokens = (int32_t) n;
            v->tok = (struct vtoken *) calloc(n > 0 ? (size_t) n : 1, sizeof(struct vtoken));
            v->eog = (uint8_t *) calloc(n > 0 ? (size_t) n : 1, 1);
            if (!v->tok || !v->eog) {
                FAIL("%s: out of memory\n", __func__);
            }
            for (int32_t i = 0; i < v->n_tokens; ++i) {
                v->tok[i].text = "";
            }
        }
        return v;
    }

    const bool is_bpe_model = strcmp(model, "gpt2") == 0 || strcmp(model, "gemma4") == 0;
    if (strcmp(model, "llama") == 0) {
        v->type = LLAMA_VOCAB_TYPE_SPM;
    } else if (strcmp(model, "bert") == 0) {
        v->type = LLAMA_VOCAB_TYPE_WPM;
        v->bos = 101; v->eos = LLAMA_TOKEN_NULL; v->unk = 100; v->sep = 102; v->pad = 0; v->mask = 103;
        v->add_sep = true;
    } else if (is_bpe_model) {
        v->type = LLAMA_VOCAB_TYPE_BPE;
        const int64_t mid = gguf_find_key(g, "tokenizer.ggml.merges");
        if (mid < 0) {
            FAIL("%s: cannot find tokenizer merges in model file (tokenizer.ggml.merges)\n", __func__);
        }
        if (gguf_get_kv_type(g, mid) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, mid) != GGUF_TYPE_STRING) {
            FAIL("%s: invalid gguf type for tokenizer.ggml.merges (expected an array of strings)\n", __func__);
        }
        const size_t n_merges = gguf_get_arr_n(g, mid);
        if (n_merges > (size_t) INT32_MAX / 4) {
            FAIL("%s: tokenizer.ggml.merges has %zu entries, too many\n", __func__, n_merges);
        }
        size_t total = 0;
        for (size_t i = 0; i < n_merges; ++i) {
            total += strlen(gguf_get_arr_str(g, mid, i)) + 1;
        }
        v->merges_arena = (char *) malloc(total + 1);
        if (!v->merges_arena || !strmap_init(&v->merges, (uint32_t) n_merges)) {
            FAIL("%s: out of memory for %zu merges\n", __func__, n_merges);
        }
        char * p = v->merges_arena;
        for (size_t i = 0; i < n_merges; ++i) {
            const char * w = gguf_get_arr_str(g, mid, i);
            const size_t wl = strlen(w);
            // the pair splits at the first space after the first byte; a line without one is an empty pair
            const char * sp = wl > 1 ? memchr(w + 1, ' ', wl - 1) : NULL;
            if (!sp) {
                continue;
            }
            memcpy(p, w, wl);
            p[wl] = '\0';
            strmap_put(&v->merges, p, (uint32_t) wl, (int32_t) i, false);
            p += wl + 1;
        }
        v->n_merges = (uint32_t) n_merges;
        v->bos = 11; v->eos = 11; v->unk = LLAMA_TOKEN_NULL;
        if (strcmp(model, "gemma4") == 0) {
            v->bos = v->eos = LLAMA_TOKEN_NULL;
            snprintf(v->tokenizer_pre, sizeof(v->tokenizer_pre), "gemma4");
        }
    } else if (strcmp(model, "t5") == 0) {
        v->type = LLAMA_VOCAB_TYPE_UGM;
        v->bos = LLAMA_TOKEN_NULL; v->eos = 1; v->unk = 2; v->pad = 0;
        const int64_t cid = gguf_find_key(g, "tokenizer.ggml.precompiled_charsmap");
        if (cid >= 0) {
            if (gguf_get_kv_type(g, cid) != GGUF_TYPE_ARRAY ||
                (gguf_get_arr_type(g, cid) != GGUF_TYPE_INT8 && gguf_get_arr_type(g, cid) != GGUF_TYPE_UINT8)) {
                FAIL("%s: invalid gguf type for tokenizer.ggml.precompiled_charsmap (expected a byte array)\n", __func__);
            }
            const size_t n = gguf_get_arr_n(g, cid);
            if (n < 4) {
                FAIL("%s: tokenizer.ggml.precompiled_charsmap has %zu bytes, too small for its header\n", __func__, n);
            }
            v->charsmap = (uint8_t *) malloc(n);
            if (!v->charsmap) {
                FAIL("%s: out of memory\n", __func__);
            }
            memcpy(v->charsmap, gguf_get_arr_data(g, cid), n);
            v->charsmap_size = n;
            uint32_t xcda_bytes;
            memcpy(&xcda_bytes, v->charsmap, 4);
            if ((uint64_t) xcda_bytes + 4 >= n) {
                FAIL("%s: tokenizer.ggml.precompiled_charsmap: XCDA size %u exceeds the %zu-byte blob\n", __func__,
                     xcda_bytes, n);
            }
            v->xcda = (const uint32_t *) (v->charsmap + 4); // malloc'd, so 4-byte aligned
            v->xcda_size = xcda_bytes / 4;
            v->prefix_repl = (const char *) v->charsmap + 4 + xcda_bytes;
            v->prefix_repl_size = n - 4 - xcda_bytes;
        }
    } else if (strcmp(model, "rwkv") == 0) {
        v->type = LLAMA_VOCAB_TYPE_RWKV;
        v->bos = v->eos = v->unk = v->sep = v->pad = LLAMA_TOKEN_NULL;
    } else {
        FAIL("%s: unknown tokenizer: '%s' (tokenizer.ggml.model)\n", __func__, model);
    }

    if (v->type == LLAMA_VOCAB_TYPE_BPE) {
        v->add_space_prefix = false;
        v->escape_whitespaces = false;
        v->clean_spaces = true;
        if (v->tokenizer_pre[0] == '\0') {
            LOG_WARN("%s: missing pre-tokenizer type, using: 'default'; GENERATION QUALITY WILL BE DEGRADED!\n",
                     __func__);
            v->pre_type = LLAMA_VOCAB_PRE_TYPE_DEFAULT;
        } else {
            const struct pre_name * pn = NULL;
            for (size_t i = 0; i < sizeof(k_pre_names) / sizeof(k_pre_names[0]); ++i) {
                if (strcmp(k_pre_names[i].name, v->tokenizer_pre) == 0) {
                    pn = &k_pre_names[i];
                    break;
                }
            }
            if (!pn) {
                FAIL("%s: unknown pre-tokenizer type: '%s' (tokenizer.ggml.pre)\n", __func__, v->tokenizer_pre);
            }
            v->pre_type = pn->type;
            if (pn->clean_spaces >= 0) {
                v->clean_spaces = pn->clean_spaces != 0;
            }
            v->ignore_merges = pn->ignore_merges;
            if (pn->add_bos) {
                v->add_bos = true;
            }
            if (strcmp(pn->name, "jina-v1-en") == 0 || strcmp(pn->name, "jina-v2-code") == 0 ||
                strcmp(pn->name, "roberta-bpe") == 0) {
                v->add_sep = true;
            }
            if (pn->type == LLAMA_VOCAB_PRE_TYPE_CHATGLM4) {
                v->bos = LLAMA_TOKEN_NULL;
            }
            if (pn->type == LLAMA_VOCAB_PRE_TYPE_GEMMA4) {
                v->escape_whitespaces = true;
            }
        }
    } else if (v->type == LLAMA_VOCAB_TYPE_SPM) {
        v->add_space_prefix = true;
        v->clean_spaces = false;
        v->add_bos = true;
        v->add_eos = false;
    } else if (v->type == LLAMA_VOCAB_TYPE_WPM) {
        v->add_space_prefix = false;
        v->clean_spaces = true;
        v->add_bos = true;
        v->add_eos = false;
        v->add_sep = true;
    } else if (v->type == LLAMA_VOCAB_TYPE_UGM) {
        v->add_bos = false;
        v->add_eos = true;
    } else if (v->type == LLAMA_VOCAB_TYPE_RWKV) {
        v->add_space_prefix = false;
        v->clean_spaces = false;
        v->add_bos = false;
        v->add_eos = false;
    }
    if (!kv_get_bool(g, "tokenizer.ggml.add_space_prefix", &v->add_space_prefix) ||
        !kv_get_bool(g, "tokenizer.ggml.remove_extra_whitespaces", &v->remove_extra_whitespaces)) {
        goto fail;
    }

    // tokens, scores, types
    {
        const int64_t tid = gguf_find_key(g, "tokenizer.ggml.tokens");
        if (tid < 0) {
            FAIL("%s: cannot find tokenizer vocab in model file (tokenizer.ggml.tokens)\n", __func__);
        }
        if (gguf_get_kv_type(g, tid) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, tid) != GGUF_TYPE_STRING) {
            FAIL("%s: invalid gguf type for tokenizer.ggml.tokens (expected an array of strings)\n", __func__);
        }
        const size_t n = gguf_get_arr_n(g, tid);
        if (n > (size_t) INT32_MAX / 2) {
            FAIL("%s: tokenizer.ggml.tokens has %zu entries, too many\n", __func__, n);
        }
        const float *   scores  = NULL;
        const int32_t * iscores = NULL;
        const int64_t sid = gguf_find_key(g, "tokenizer.ggml.scores");
        if (sid >= 0) {
            const enum gguf_type at = gguf_get_kv_type(g, sid) == GGUF_TYPE_ARRAY ? gguf_get_arr_type(g, sid) : GGUF_TYPE_COUNT;
            if (at != GGUF_TYPE_FLOAT32 && at != GGUF_TYPE_INT32) {
                FAIL("%s: invalid gguf type for tokenizer.ggml.scores (expected an array of float32 or int32)\n", __func__);
            }
            if (gguf_get_arr_n(g, sid) < n) {
                FAIL("%s: tokenizer.ggml.scores has %zu entries, fewer than the %zu tokens\n", __func__,
                     gguf_get_arr_n(g, sid), n);
            }
            if (at == GGUF_TYPE_FLOAT32) {
                scores = (const float *) gguf_get_arr_data(g, sid);
            } else {
                iscores = (const int32_t *) gguf_get_arr_data(g, sid);
            }
        }
        const int32_t * types = NULL;
        const int64_t yid = gguf_find_key(g, "tokenizer.ggml.token_type");
        if (yid >= 0) {
            if (gguf_get_kv_type(g, yid) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, yid) != GGUF_TYPE_INT32) {
                FAIL("%s: invalid gguf type for tokenizer.ggml.token_type (expected an array of int32)\n", __func__);
            }
            if (gguf_get_arr_n(g, yid) < n) {
                FAIL("%s: tokenizer.ggml.token_type has %zu entries, fewer than the %zu tokens\n", __func__,
                     gguf_get_arr_n(g, yid), n);
            }
            types = (const int32_t *) gguf_get_arr_data(g, yid);
        }

        size_t total = 0;
        for (size_t i = 0; i < n; ++i) {
            const size_t l = strlen(gguf_get_arr_str(g, tid, i));
            total += (l ? l : 32) + 1;
        }
        v->n_tokens  = (int32_t) n;
        v->tok       = (struct vtoken *) calloc(n ? n : 1, sizeof(struct vtoken));
        v->tok_arena = (char *) malloc(total + 1);
        v->eog       = (uint8_t *) calloc(n ? n : 1, 1);
        if (!v->tok || !v->tok_arena || !v->eog || !strmap_init(&v->tok_map, (uint32_t) n)) {
            FAIL("%s: out of memory for %zu tokens\n", __func__, n);
        }
        char * p = v->tok_arena;
        for (size_t i = 0; i < n; ++i) {
            const char * w = gguf_get_arr_str(g, tid, i);
            size_t wl = strlen(w);
            if (wl == 0) {
                LOG_WARN("%s: empty token at index %zu\n", __func__, i);
                wl = (size_t) snprintf(p, 32, "[EMPTY_%zu]", i);
            } else {
                memcpy(p, w, wl);
                p[wl] = '\0';
            }
            const int32_t prev = strmap_put(&v->tok_map, p, (uint32_t) wl, (int32_t) i, false);
            if (prev >= 0) {
                FAIL("%s: duplicate token in vocabulary: '%s' has ids %d and %zu\n", __func__, p, prev, i);
            }
            struct vtoken * t = &v->tok[i];
            t->text = p;
            t->len = (uint32_t) wl;
            t->score = scores ? scores[i] : iscores ? (float) iscores[i] : 0.0f;
            t->attr = LLAMA_TOKEN_ATTR_NORMAL;
            if (types) {
                switch (types[i]) {
                    case LLAMA_TOKEN_TYPE_UNKNOWN:      t->attr = LLAMA_TOKEN_ATTR_UNKNOWN;      break;
                    case LLAMA_TOKEN_TYPE_UNUSED:       t->attr = LLAMA_TOKEN_ATTR_UNUSED;       break;
                    case LLAMA_TOKEN_TYPE_NORMAL:       t->attr = LLAMA_TOKEN_ATTR_NORMAL;       break;
                    case LLAMA_TOKEN_TYPE_CONTROL:      t->attr = LLAMA_TOKEN_ATTR_CONTROL;      break;
                    case LLAMA_TOKEN_TYPE_USER_DEFINED: t->attr = LLAMA_TOKEN_ATTR_USER_DEFINED; break;
                    case LLAMA_TOKEN_TYPE_BYTE:         t->attr = LLAMA_TOKEN_ATTR_BYTE;         break;
                    default:                            t->attr = LLAMA_TOKEN_ATTR_UNDEFINED;    break;
                }
            }
            if ((int32_t) wl > v->max_token_len) {
                v->max_token_len = (int32_t) wl;
            }
            p += wl + 1;
        }
    }

    // the tokenizer's own tables
    for (int32_t i = 0; i < v->n_tokens; ++i) {
        if (v->tok[i].len >= 2) {
            for (uint32_t k = 0; k < v->tok[i].len; ++k) {
                const uint8_t c = (uint8_t) v->tok[i].text[k];
                if (c < 0x80) {
                    v->spm_joinable[c] = true;
                }
            }
        }
    }
    if (v->type == LLAMA_VOCAB_TYPE_BPE) {
        const char * rx[8];
        const int n_rx = pre_regexes(v->pre_type, rx, &v->byte_encode);
        if (n_rx == 0) {
            FAIL("%s: pre-tokenizer '%s' is not supported\n", __func__, v->tokenizer_pre);
        }
        v->splitter = llama_unicode_splitter_init(rx, n_rx);
        if (!v->splitter) {
            FAIL("%s: cannot build the pre-tokenizer '%s'\n", __func__, v->tokenizer_pre);
        }
    } else if (v->type == LLAMA_VOCAB_TYPE_UGM) {
        float min_score = FLT_MAX;
        size_t n_prefixes = 0;
        for (int32_t i = 0; i < v->n_tokens; ++i) {
            if ((v->tok[i].attr & LLAMA_TOKEN_ATTR_NORMAL) && v->tok[i].score < min_score) {
                min_score = v->tok[i].score;
            }
            if (v->tok[i].attr & LLAMA_TOKEN_ATTR_USER_DEFINED) {
                n_prefixes += v->tok[i].len;
                if ((int32_t) v->tok[i].len > v->ugm_ud_max_len) {
                    v->ugm_ud_max_len = (int32_t) v->tok[i].len;
                }
            }
        }
        v->ugm_unknown_score = (double) min_score - 10.0;
        if (n_prefixes > 0) {
            if (n_prefixes > UINT32_MAX / 4 || !strmap_init(&v->ugm_ud_prefixes, (uint32_t) n_prefixes)) {
                FAIL("%s: out of memory\n", __func__);
            }
            for (int32_t i = 0; i < v->n_tokens; ++i) {
                if (v->tok[i].attr & LLAMA_TOKEN_ATTR_USER_DEFINED) {
                    for (uint32_t l = 1; l <= v->tok[i].len; ++l) {
                        strmap_put(&v->ugm_ud_prefixes, v->tok[i].text, l, i, false);
                    }
                }
            }
        }
    } else if (v->type == LLAMA_VOCAB_TYPE_RWKV) {
        size_t total = 0;
        for (int32_t i = 0; i < v->n_tokens; ++i) {
            total += v->tok[i].len + 1;
        }
        v->rwkv_arena = (char *) malloc(total + 1);
        if (!v->rwkv_arena || !strmap_init(&v->rwkv_map, (uint32_t) v->n_tokens)) {
            FAIL("%s: out of memory\n", __func__);
        }
        char * p = v->rwkv_arena;
        for (int32_t i = 0; i < v->n_tokens; ++i) {
            const size_t k = rwkv_unescape(v->tok[i].text, v->tok[i].len, p);
            if (k > 0) {
                strmap_put(&v->rwkv_map, p, (uint32_t) k, i, true); // later ids win, as in a trie insert
            }
            p += k + 1;
        }
    }

    // newline token: SPM's <0x0A>, else what "\n" tokenizes to
    if (v->type == LLAMA_VOCAB_TYPE_SPM) {
        const llama_token t = byte_to_token(v, '\n');
        if (t == LLAMA_TOKEN_NULL) {
            LOG_WARN("%s: SPM vocabulary, but newline token not found! Using special_pad_id instead.\n", __func__);
        }
        v->nl = t != LLAMA_TOKEN_NULL ? t : v->pad;
    } else if (v->type == LLAMA_VOCAB_TYPE_WPM) {
        v->nl = v->pad;
    } else {
        struct tokvec nl = { NULL, 0, 0, false };
        vocab_tokenize(v, "\n", 1, false, false, &nl);
        if (nl.n == 0) {
            LOG_WARN("%s: model vocab missing newline token, using special_pad_id instead\n", __func__);
        }
        v->nl = nl.n > 0 ? nl.d[0] : v->pad;
        free(nl.d);
    }

    // special token ids
    {
        struct { const char * key; llama_token * id; } sk[] = {
            { "tokenizer.ggml.bos_token_id",       &v->bos     },
            { "tokenizer.ggml.eos_token_id",       &v->eos     },
            { "tokenizer.ggml.eot_token_id",       &v->eot     },
            { "tokenizer.ggml.eom_token_id",       &v->eom     },
            { "tokenizer.ggml.unknown_token_id",   &v->unk     },
            { "tokenizer.ggml.seperator_token_id", &v->sep     },
            { "tokenizer.ggml.padding_token_id",   &v->pad     },
            { "tokenizer.ggml.mask_token_id",      &v->mask    },
            { "tokenizer.ggml.fim_pre_token_id",   &v->fim_pre },
            { "tokenizer.ggml.fim_suf_token_id",   &v->fim_suf },
            { "tokenizer.ggml.fim_mid_token_id",   &v->fim_mid },
            { "tokenizer.ggml.fim_pad_token_id",   &v->fim_pad },
            { "tokenizer.ggml.fim_rep_token_id",   &v->fim_rep },
            { "tokenizer.ggml.fim_sep_token_id",   &v->fim_sep },
            // deprecated names
            { "tokenizer.ggml.prefix_token_id",    &v->fim_pre },
            { "tokenizer.ggml.suffix_token_id",    &v->fim_suf },
            { "tokenizer.ggml.middle_token_id",    &v->fim_mid },
        };
        for (size_t i = 0; i < sizeof(sk) / sizeof(sk[0]); ++i) {
            llama_token * id = sk[i].id;
            if (*id >= 0 && *id >= v->n_tokens) {
                LOG_WARN("%s: default special token '%s' = %d out of vocab range, disabling\n", __func__, sk[i].key, *id);
                *id = LLAMA_TOKEN_NULL;
            }
            bool found;
            int64_t nid;
            if (!kv_get_int(g, sk[i].key, &nid, &found)) {
                goto fail;
            }
            if (!found) {
                continue;
            }
            if (nid < 0 || nid >= v->n_tokens) {
                LOG_WARN("%s: bad special token: '%s' = %lld, using default id %d\n", __func__, sk[i].key,
                         (long long) nid, *id);
            } else {
                *id = (llama_token) nid;
            }
        }

        if (!kv_get_bool(g, "tokenizer.ggml.add_bos_token", &v->add_bos) ||
            !kv_get_bool(g, "tokenizer.ggml.add_eos_token", &v->add_eos) ||
            !kv_get_bool(g, "tokenizer.ggml.add_sep_token", &v->add_sep)) {
            goto fail;
        }
        if (v->pre_type == LLAMA_VOCAB_PRE_TYPE_GEMMA4 && !v->add_bos) {
            v->add_bos = true;
            LOG_WARN("%s: override 'tokenizer.ggml.add_bos_token' to 'true' for Gemma4\n", __func__);
        }
        if (v->add_bos && v->bos == LLAMA_TOKEN_NULL) {
            FAIL("%s: tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id is not set\n", __func__);
        }
        if (v->add_eos && v->eos == LLAMA_TOKEN_NULL) {
            FAIL("%s: tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id is not set\n", __func__);
        }
        if (v->add_sep && v->sep == LLAMA_TOKEN_NULL) {
            FAIL("%s: tokenizer.ggml.add_sep_token is true, but tokenizer.ggml.seperator_token_id is not set\n", __func__);
        }

        if (!kv_get_bool(g, "tokenizer.ggml.normalizer.lowercase", &v->lowercase)) {
            goto fail;
        }
        v->strip_accents = v->lowercase;
        if (!kv_get_bool(g, "tokenizer.ggml.normalizer.strip_accents", &v->strip_accents)) {
            goto fail;
        }

        // tokens recognised by their text (the converters do not always set the ids); id order decides ties
        static const char * const eot_names[] = { "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
            "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>",
            "<end_of_utterance>", NULL };
        static const char * const eom_names[] = { "<|eom_id|>", NULL };
        static const char * const fim_pre_names[] = { "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
            "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>", NULL };
        static const char * const fim_suf_names[] = { "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
            "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>", NULL };
        static const char * const fim_mid_names[] = { "<|fim_middle|>", "<fim-middle>", "<fim_middle>",
            "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>", NULL };
        static const char * const fim_pad_names[] = { "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", NULL };
        static const char * const fim_rep_names[] = { "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
            "<reponame>", NULL };
        static const char * const fim_sep_names[] = { "<|file_sep|>", NULL };
        struct { llama_token * id; const char * const * names; } auto_ids[] = {
            { &v->eot, eot_names }, { &v->eom, eom_names }, { &v->fim_pre, fim_pre_names },
            { &v->fim_suf, fim_suf_names }, { &v->fim_mid, fim_mid_names }, { &v->fim_pad, fim_pad_names },
            { &v->fim_rep, fim_rep_names }, { &v->fim_sep, fim_sep_names },
        };
        for (int32_t i = 0; i < v->n_tokens; ++i) {
            for (size_t k = 0; k < sizeof(auto_ids) / sizeof(auto_ids[0]); ++k) {
                if (*auto_ids[k].id == LLAMA_TOKEN_NULL && text_is_any(&v->tok[i], auto_ids[k].names)) {
                    *auto_ids[k].id = i;
                    mark_control(v, i);
                }
            }
        }

        // control tokens named "unused..." are unused
        uint32_t n_unused = 0;
        for (int32_t i = 0; i < v->n_tokens; ++i) {
            struct vtoken * t = &v->tok[i];
            if (!(t->attr & LLAMA_TOKEN_ATTR_CONTROL)) {
                continue;
            }
            if (!(t->attr & LLAMA_TOKEN_ATTR_UNUSED) && strstr(t->text, "unused")) {
                t->attr |= LLAMA_TOKEN_ATTR_UNUSED;
            }
            if (t->attr & LLAMA_TOKEN_ATTR_UNUSED) {
                n_unused++;
            }
        }
        (void) n_unused;

        // end-of-generation set
        if (v->fim_pad != LLAMA_TOKEN_NULL) v->eog[v->fim_pad] = 1;
        if (v->fim_rep != LLAMA_TOKEN_NULL) v->eog[v->fim_rep] = 1;
        if (v->fim_sep != LLAMA_TOKEN_NULL) v->eog[v->fim_sep] = 1;
        static const char * const eog_names[] = { "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>",
            "<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>",
            "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
            "<｜end▁of▁sentence｜>", "[e~[", NULL };
        for (int32_t i = 0; i < v->n_tokens; ++i) {
            if (text_is_any(&v->tok[i], eog_names)) {
                v->eog[i] = 1;
                mark_control(v, i);
            }
        }
        // gpt-oss renders these as text
        static const char * const user_defined_names[] = { "<|channel|>", "<|message|>", "<|start|>",
            "<|constrain|>", NULL };
        for (int32_t i = 0; i < v->n_tokens; ++i) {
            if (text_is_any(&v->tok[i], user_defined_names)) {
                v->tok[i].attr = LLAMA_TOKEN_ATTR_USER_DEFINED;
            }
        }
        if (v->eos != LLAMA_TOKEN_NULL && !v->eog[v->eos]) {
            v->eog[v->eos] = 1;
            LOG_WARN("%s: special_eos_id is not in special_eog_ids - the tokenizer config may be incorrect\n", __func__);
        }
        if (v->eot != LLAMA_TOKEN_NULL && !v->eog[v->eot]) {
            v->eog[v->eot] = 1;
            LOG_WARN("%s: special_eot_id is not in special_eog_ids - the tokenizer config may be incorrect\n", __func__);
        }
        if (v->eom != LLAMA_TOKEN_NULL && !v->eog[v->eom]) {
            v->eog[v->eom] = 1;
            LOG_WARN("%s: special_eom_id is not in special_eog_ids - the tokenizer config may be incorrect\n", __func__);
        }
        // o200k_harmony / solar-open: "<|end|>" is not the end of generation there
        {
            bool has_return = false, has_call = false, has_flush = false, has_end = false;
            llama_token end_id = LLAMA_TOKEN_NULL;
            for (int32_t i = 0; i < v->n_tokens; ++i) {
                if (!v->eog[i]) {
                    continue;
                }
                const char * t = v->tok[i].text;
                if (strcmp(t, "<|return|>") == 0) {
                    has_return = true;
                } else if (strcmp(t, "<|call|>") == 0 || strcmp(t, "<|calls|>") == 0) {
                    has_call = true;
                } else if (strcmp(t, "<|flush|>") == 0) {
                    has_flush = true;
                } else if (strcmp(t, "<|end|>") == 0) {
                    has_end = true;
                    end_id = i;
                }
            }
            if ((has_return && has_call && has_end) || (has_call && has_flush && has_end)) {
                v->eog[end_id] = 0;
                v->tok[end_id].attr = LLAMA_TOKEN_ATTR_USER_DEFINED;
            }
        }
        // gemma4 / paddleocr: "</s>" is not the end of generation when "<|tool_response>" is
        {
            bool has_tool_response = false;
            llama_token s_id = LLAMA_TOKEN_NULL;
            for (int32_t i = 0; i < v->n_tokens; ++i) {
                if (!v->eog[i]) {
                    continue;
                }
                if (strcmp(v->tok[i].text, "<|tool_response>") == 0) {
                    has_tool_response = true;
                } else if (strcmp(v->tok[i].text, "</s>") == 0) {
                    s_id = i;
                }
            }
            if (has_tool_response && s_id != LLAMA_TOKEN_NULL) {
                v->eog[s_id] = 0;
                v->tok[s_id].attr = LLAMA_TOKEN_ATTR_NORMAL;
            }
        }
    }

    // special-token cache, longest text first
    {
        v->special_cache = (llama_token *) malloc((size_t) (v->n_tokens > 0 ? v->n_tokens : 1) * sizeof(llama_token));
        if (!v->special_cache) {
            FAIL("%s: out of memory\n", __func__);
        }
        for (int32_t i = 0; i < v->n_tokens; ++i) {
            if (v->tok[i].attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED | LLAMA_TOKEN_ATTR_UNKNOWN)) {
                v->special_cache[v->n_special_cache++] = i;
            }
        }
        qsort_r(v->special_cache, (size_t) v->n_special_cache, sizeof(llama_token), cmp_special_len_desc, v);
    }

    // token -> piece cache (special = true)
    {
        struct sbuf arena = { NULL, 0, 0, false };
        v->piece_off = (size_t *) malloc((size_t) (v->n_tokens > 0 ? v->n_tokens : 1) * sizeof(size_t));
        v->piece_len = (uint32_t *) malloc((size_t) (v->n_tokens > 0 ? v->n_tokens : 1) * sizeof(uint32_t));
        if (!v->piece_off || !v->piece_len) {
            free(v->piece_off);
            free(v->piece_len);
            v->piece_off = NULL;
            v->piece_len = NULL;
            FAIL("%s: out of memory\n", __func__);
        }
        sb_add(&arena, "", 0);
        for (int32_t i = 0; i < v->n_tokens; ++i) {
            const size_t before = arena.n;
            piece_uncached(v, i, true, &arena);
            v->piece_off[i] = before;
            v->piece_len[i] = (uint32_t) (arena.n - before);
        }
        if (arena.oom) {
            free(arena.d);
            free(v->piece_off);
            free(v->piece_len);
            v->piece_off = NULL;
            v->piece_len = NULL;
            FAIL("%s: out of memory\n", __func__);
        }
        v->piece_arena = arena.d;
    }

    // per-model token attributes (not stored in GGUF)
    {
        char name[256] = { 0 };
        if (general_name) {
            size_t i = 0;
            for (; general_name[i] && i + 1 < sizeof(name); ++i) {
                const char c = general_name[i];
                name[i] = (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
            }
            name[i] = '\0';
        }
        const char * tp = pre ? pre : "";
        if (str_contains(tp, "jina-v2-de") || str_contains(tp, "jina-v2-es") || str_contains(tp, "jina-v2-code") ||
            str_contains(general_arch, "nomic-bert-moe") || str_contains(general_arch, "jina-bert-v3")) {
            if (find_text(v, "<mask>") == LLAMA_TOKEN_NULL) {
                LOG_WARN("%s: Mask token is missing in vocab, please reconvert model!\n", __func__);
            } else {
                set_attr(v, find_text(v, "<mask>"), LLAMA_TOKEN_ATTR_LSTRIP, true);
            }
        } else if (strstr(name, "phi-3") || strstr(name, "phi3")) {
            for (int32_t i = 0; i < v->n_special_cache; ++i) {
                set_attr(v, v->special_cache[i], LLAMA_TOKEN_ATTR_RSTRIP, true);
            }
            if (!set_attr_by_text(v, "</s>", LLAMA_TOKEN_ATTR_RSTRIP, true) ||
                !set_attr_by_text(v, "<unk>", LLAMA_TOKEN_ATTR_RSTRIP, false) ||
                !set_attr_by_text(v, "<s>", LLAMA_TOKEN_ATTR_RSTRIP, false) ||
                !set_attr_by_text(v, "<|endoftext|>", LLAMA_TOKEN_ATTR_RSTRIP, false)) {
                goto fail;
            }
        } else if (strstr(name, "modern-bert")) {
            if (find_text(v, "[MASK]") == LLAMA_TOKEN_NULL) {
                LOG_WARN("%s: Mask token missing in vocab!\n", __func__);
            } else {
                set_attr(v, find_text(v, "[MASK]"), LLAMA_TOKEN_ATTR_LSTRIP, true);
            }
        }
    }
    return v;

fail:
    llama_vocab_free(v);
    return NULL;
}

void llama_vocab_print_info(const struct llama_vocab * v) {
    if (!v) {
        return;
    }
    static const char * names[] = { "no vocab", "SPM", "BPE", "WPM", "UGM", "RWKV", "PLaMo2" };
    LOG_INFO("%s: vocab type            = %s\n", __func__, (unsigned) v->type < 7 ? names[v->type] : "unknown");
    LOG_INFO("%s: n_vocab               = %d\n", __func__, v->n_tokens);
    LOG_INFO("%s: n_merges              = %u\n", __func__, v->n_merges);
    struct { const char * what; llama_token id; } sp[] = {
        { "BOS token", v->bos }, { "EOS token", v->eos }, { "EOT token", v->eot }, { "EOM token", v->eom },
        { "UNK token", v->unk }, { "SEP token", v->sep }, { "PAD token", v->pad }, { "MASK token", v->mask },
        { "LF token", v->nl }, { "FIM PRE token", v->fim_pre }, { "FIM SUF token", v->fim_suf },
        { "FIM MID token", v->fim_mid }, { "FIM PAD token", v->fim_pad }, { "FIM REP token", v->fim_rep },
        { "FIM SEP token", v->fim_sep },
    };
    for (size_t i = 0; i < sizeof(sp) / sizeof(sp[0]); ++i) {
        if (tok_valid(v, sp[i].id)) {
            LOG_INFO("%s: %-21s = %d '%s'\n", __func__, sp[i].what, sp[i].id, v->tok[sp[i].id].text);
        }
    }
    for (int32_t i = 0; i < v->n_tokens; ++i) {
        if (v->eog[i]) {
            LOG_INFO("%s: EOG token             = %d '%s'\n", __func__, i, v->tok[i].text);
        }
    }
    LOG_INFO("%s: max token length      = %d\n", __func__, v->max_token_len);
}
