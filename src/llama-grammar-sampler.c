// The grammar sampler: llama_sampler_init_grammar and its lazy form, driving the GBNF matcher (llama-grammar.c)
// with token pieces. It lives apart from llama-sampler-filters.c because it needs the vocabulary.
//
// Token pieces are rendered once per vocabulary (special tokens as text, as llama.cpp's piece cache does) and
// decoded to code points; the decoded pieces, sorted by code points, are shared by a sampler and its clones. apply
// walks the sorted pieces like a trie, so a prefix shared by many tokens is matched once.
//
// Lazy grammars wait for a trigger: one of the trigger tokens, or one of the trigger patterns found in the text
// generated so far (PCRE2 stands in for llama.cpp's std::regex: patterns run on bytes, "^...$" patterns must match
// the whole text, others may match anywhere). The grammar is then fed the text from the first non-empty capture
// group of the match (or the match itself) on, token by token.

#define PCRE2_CODE_UNIT_WIDTH 8

#include "llama-grammar.h"
#include "llama-sampler.h"

#include "llama-impl.h"

#include <pcre2.h>

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

//
// pieces of a vocabulary, decoded once
//

enum {
    PIECE_EOG      = 1, // end-of-generation token: allowed when the grammar is complete
    PIECE_UNUSABLE = 2, // empty piece or one starting with NUL: never allowed (as in llama.cpp)
};

struct grammar_pieces {
    atomic_int refs;
    int32_t    n_vocab;

    char     * bytes;     // every piece, back to back
    size_t   * piece_off; // [n_vocab + 1]
    uint32_t * cps;       // every piece decoded from a clean UTF-8 state
    size_t   * cps_off;   // [n_vocab + 1]
    struct llama_partial_utf8 * tail; // [n_vocab]
    uint8_t  * flags;     // [n_vocab]

    struct llama_grammar_candidate * sorted; // [n_sorted] the usable non-EOG tokens, sorted by code points
    size_t     n_sorted;
    int32_t  * rank;      // [n_vocab] position of a token in sorted, -1 if absent
};

static void pieces_release(struct grammar_pieces * pc) {
    if (!pc || atomic_fetch_sub(&pc->refs, 1) != 1) {
        return;
    }
    free(pc->bytes);
    free(pc->piece_off);
    free(pc->cps);
    free(pc->cps_off);
    free(pc->tail);
    free(pc->flags);
    free(pc->sorted);
    free(pc->rank);
    free(pc);
}

static struct grammar_pieces * pieces_build(const struct llama_vocab * vocab) {
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    if (n_vocab <= 0) {
        LLAMA_LOG_ERROR("%s: the vocabulary has no tokens\n", __func__);
        return NULL;
    }
    struct grammar_pieces * pc = calloc(1, sizeof(*pc));
    if (!pc) {
        return NULL;
    }
    atomic_init(&pc->refs, 1);
    pc->n_vocab   = n_vocab;
    pc->piece_off = malloc(((size_t) n_vocab + 1) * sizeof(*pc->piece_off));
    pc->cps_off   = malloc(((size_t) n_vocab + 1) * sizeof(*pc->cps_off));
    pc->tail      = calloc((size_t) n_vocab, sizeof(*pc->tail));
    pc->flags     = calloc((size_t) n_vocab, sizeof(*pc->flags));
    pc->rank      = malloc((size_t) n_vocab * sizeof(*pc->rank));
    size_t cap_bytes = (size_t) n_vocab * 8;
    pc->bytes     = malloc(cap_bytes);
    bool ok = pc->piece_off && pc->cps_off && pc->tail && pc->flags && pc->rank && pc->bytes;

    // render the pieces
    size_t n_bytes = 0;
    for (int32_t id = 0; id < n_vocab && ok; ++id) {
        pc->piece_off[id] = n_bytes;
        for (;;) {
            const size_t room = cap_bytes - n_bytes;
            const int32_t n = llama_token_to_piece(vocab, id, pc->bytes + n_bytes, room > INT32_MAX ? INT32_MAX : (int32_t) room, 0, true);
            if (n >= 0) {
                n_bytes += (size_t) n;
                break;
            }
            cap_bytes = 2 * cap_bytes + (size_t) -n;
            char * b = realloc(pc->bytes, cap_bytes);
            if (!b) {
                ok = false;
                break;
            }
            pc->bytes = b;
        }
    }
    if (ok) {
        pc->piece_off[n_vocab] = n_bytes;
        pc->cps = malloc((n_bytes + 1) * sizeof(*pc->cps));
        ok = pc->cps != NULL;
    }

    // decode them and sort the usable ones
    size_t n_cps = 0;
    for (int32_t id = 0; id < n_vocab && ok; ++id) {
        const char * piece = pc->bytes + pc->piece_off[id];
        const size_t len = pc->piece_off[id + 1] - pc->piece_off[id];
        pc->cps_off[id] = n_cps;
        if (llama_vocab_is_eog(vocab, id)) {
            pc->flags[id] |= PIECE_EOG;
        }
        if (len == 0 || piece[0] == '\0') {
            pc->flags[id] |= PIECE_UNUSABLE;
        }
        struct llama_partial_utf8 partial = { 0, 0, 0 };
        n_cps += llama_grammar_decode_utf8(piece, len, &partial, pc->cps + n_cps);
        pc->tail[id] = partial;
    }
    if (ok) {
        pc->cps_off[n_vocab] = n_cps;
        pc->sorted = malloc((size_t) n_vocab * sizeof(*pc->sorted));
        ok = pc->sorted != NULL;
    }
    if (ok) {
        for (int32_t id = 0; id < n_vocab; ++id) {
            pc->rank[id] = -1;
            if (pc->flags[id]) {
                continue;
            }
            pc->sorted[pc->n_sorted++] = (struct llama_grammar_candidate) {
                pc->cps + pc->cps_off[id], (uint32_t) (pc->cps_off[id + 1] - pc->cps_off[id]), pc->tail[id], id, 0, false,
            };
        }
        qsort(pc->sorted, pc->n_sorted, sizeof(*pc->sorted), llama_grammar_candidate_cmp);
        for (size_t i = 0; i < pc->n_sorted; ++i) {
            pc->rank[pc->sorted[i].id] = (int32_t) i;
        }
    }
    if (!ok) {
        LLAMA_LOG_ERROR("%s: out of memory for the pieces of %d tokens\n", __func__, n_vocab);
        pieces_release(pc);
        return NULL;
    }
    return pc;
}

//
// the sampler
//

struct trigger_token_pos {
    llama_token token;
    size_t      beg; // the token's piece in trigger_buf
    size_t      end;
};

struct sampler_grammar {
    const struct llama_vocab * vocab;
    struct llama_grammar     * grammar; // NULL: empty grammar, the sampler does nothing
    struct grammar_pieces    * pieces;  // shared with clones

    // lazy mode
    bool          lazy;
    bool          awaiting_trigger;
    llama_token * trigger_tokens;
    size_t        n_trigger_tokens;
    char       ** trigger_patterns;
    pcre2_code ** trigger_re;
    size_t        n_trigger_patterns;
    char        * trigger_buf;     // text generated while waiting
    size_t        n_trigger_buf;
    size_t        cap_trigger_buf;
    struct trigger_token_pos * trigger_pos;
    size_t        n_trigger_pos;
    size_t        cap_trigger_pos;

    // scratch of apply
    struct llama_grammar_candidate * full;  // [pieces->n_sorted] private copy of pieces->sorted
    struct llama_grammar_candidate * cands; // [cap_cands]
    size_t     cap_cands;
    uint32_t * dec;                         // code points decoded from a cut UTF-8 state
    size_t     cap_dec;
};

static const char * grammar_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "grammar";
}

static bool grow_cands(struct sampler_grammar * ctx, size_t n) {
    if (n <= ctx->cap_cands) {
        return true;
    }
    struct llama_grammar_candidate * c = realloc(ctx->cands, n * sizeof(*c));
    if (!c) {
        return false;
    }
    ctx->cands     = c;
    ctx->cap_cands = n;
    return true;
}

static void grammar_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct sampler_grammar * ctx = smpl->ctx;
    if (!ctx->grammar || ctx->awaiting_trigger || cur_p->size == 0) {
        return;
    }
    const struct grammar_pieces * pc = ctx->pieces;
    const bool allow_eog = llama_grammar_is_complete(ctx->grammar);
    const struct llama_partial_utf8 partial = llama_grammar_partial(ctx->grammar);

    // the full-vocabulary path matches every piece in the shared sorted order and reads the verdicts by rank;
    // a smaller candidate set is sorted on its own
    const bool use_full = partial.n_remain <= 0 && cur_p->size >= pc->n_sorted / 2;
    size_t n = 0;
    if (!use_full && !grow_cands(ctx, cur_p->size)) {
        LLAMA_LOG_ERROR("%s: out of memory for %zu candidates\n", __func__, cur_p->size);
        return;
    }
    size_t n_dec = 0;
    if (!use_full && partial.n_remain > 0) {
        // each piece continues the cut sequence: decode them again (code points <= bytes + 1 each)
        size_t need = 0;
        for (size_t i = 0; i < cur_p->size; ++i) {
            const llama_token id = cur_p->data[i].id;
            if (id >= 0 && id < pc->n_vocab) {
                need += pc->piece_off[id + 1] - pc->piece_off[id] + 1;
            }
        }
        if (need > ctx->cap_dec) {
            uint32_t * d = realloc(ctx->dec, need * sizeof(*d));
            if (!d) {
                LLAMA_LOG_ERROR("%s: out of memory decoding %zu candidates\n", __func__, cur_p->size);
                return;
            }
            ctx->dec     = d;
            ctx->cap_dec = need;
        }
    }
    for (size_t i = 0; i < cur_p->size; ++i) {
        const llama_token id = cur_p->data[i].id;
        if (id < 0 || id >= pc->n_vocab) {
            cur_p->data[i].logit = -INFINITY;
            continue;
        }
        if (pc->flags[id] & PIECE_EOG) {
            if (!allow_eog) {
                cur_p->data[i].logit = -INFINITY;
            }
            continue;
        }
        if (pc->flags[id] & PIECE_UNUSABLE) {
            cur_p->data[i].logit = -INFINITY;
            continue;
        }
        if (use_full) {
            continue;
        }
        struct llama_grammar_candidate * c = &ctx->cands[n++];
        if (partial.n_remain > 0) {
            const char * piece = pc->bytes + pc->piece_off[id];
            const size_t len = pc->piece_off[id + 1] - pc->piece_off[id];
            struct llama_partial_utf8 p = partial;
            const size_t k = llama_grammar_decode_utf8(piece, len, &p, ctx->dec + n_dec);
            *c = (struct llama_grammar_candidate) { ctx->dec + n_dec, (uint32_t) k, p, id, i, false };
            n_dec += k;
        } else {
            *c = (struct llama_grammar_candidate) {
                pc->cps + pc->cps_off[id], (uint32_t) (pc->cps_off[id + 1] - pc->cps_off[id]), pc->tail[id], id, i, false,
            };
        }
    }

    if (use_full) {
        if (!llama_grammar_match_candidates(ctx->grammar, ctx->full, pc->n_sorted)) {
            LLAMA_LOG_ERROR("%s: out of memory matching the grammar\n", __func__);
            return;
        }
        for (size_t i = 0; i < cur_p->size; ++i) {
            const llama_token id = cur_p->data[i].id;
            if (id >= 0 && id < pc->n_vocab && pc->rank[id] >= 0 && !ctx->full[pc->rank[id]].accepted) {
                cur_p->data[i].logit = -INFINITY;
            }
        }
        return;
    }

    qsort(ctx->cands, n, sizeof(*ctx->cands), llama_grammar_candidate_cmp);
    if (!llama_grammar_match_candidates(ctx->grammar, ctx->cands, n)) {
        LLAMA_LOG_ERROR("%s: out of memory matching the grammar\n", __func__);
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        if (!ctx->cands[i].accepted) {
            cur_p->data[ctx->cands[i].index].logit = -INFINITY;
        }
    }
}

static const char * piece_of(const struct grammar_pieces * pc, llama_token token, size_t * len) {
    *len = pc->piece_off[token + 1] - pc->piece_off[token];
    return pc->bytes + pc->piece_off[token];
}

static void grammar_feed(struct sampler_grammar * ctx, llama_token token, const char * piece, size_t len) {
    if (!llama_grammar_accept_token(ctx->grammar, token, piece, len)) {
        LLAMA_LOG_ERROR("%s: the grammar does not accept token %d ('%.*s'); grammar state left unchanged\n", __func__,
                token, (int) (len > 64 ? 64 : len), piece);
    }
}

// where the grammar starts in text for pattern k: the first non-empty capture group, else the whole match;
// SIZE_MAX when the pattern is not found
static size_t trigger_find(const struct sampler_grammar * ctx, size_t k, const char * text, size_t len) {
    const char * pat = ctx->trigger_patterns[k];
    const size_t plen = strlen(pat);
    const bool whole = plen > 0 && pat[0] == '^' && pat[plen - 1] == '$';
    pcre2_match_data * md = pcre2_match_data_create_from_pattern(ctx->trigger_re[k], NULL);
    if (!md) {
        return SIZE_MAX;
    }
    size_t start = SIZE_MAX;
    const uint32_t opts = whole ? (PCRE2_ANCHORED | PCRE2_ENDANCHORED) : 0;
    int rc = pcre2_match(ctx->trigger_re[k], (PCRE2_SPTR) text, len, 0, opts, md, NULL);
    if (rc < 0 && whole) {
        rc = pcre2_match(ctx->trigger_re[k], (PCRE2_SPTR) text, len, 0, 0, md, NULL);
    }
    if (rc >= 0) {
        const PCRE2_SIZE * ov = pcre2_get_ovector_pointer(md);
        const uint32_t n_pairs = pcre2_get_ovector_count(md);
        for (uint32_t i = 1; i < n_pairs && i < (uint32_t) (rc > 0 ? rc : (int) n_pairs); ++i) {
            if (ov[2 * i] != PCRE2_UNSET && ov[2 * i + 1] > ov[2 * i]) {
                start = ov[2 * i];
                break;
            }
        }
        if (start == SIZE_MAX) {
            start = ov[0];
        }
    }
    pcre2_match_data_free(md);
    return start;
}

static bool trigger_buf_append(struct sampler_grammar * ctx, llama_token token, const char * piece, size_t len) {
    if (ctx->n_trigger_buf + len > ctx->cap_trigger_buf) {
        size_t cap = ctx->cap_trigger_buf ? 2 * ctx->cap_trigger_buf : 256;
        while (cap < ctx->n_trigger_buf + len) {
            cap *= 2;
        }
        char * b = realloc(ctx->trigger_buf, cap);
        if (!b) {
            return false;
        }
        ctx->trigger_buf     = b;
        ctx->cap_trigger_buf = cap;
    }
    if (ctx->n_trigger_pos == ctx->cap_trigger_pos) {
        const size_t cap = ctx->cap_trigger_pos ? 2 * ctx->cap_trigger_pos : 32;
        struct trigger_token_pos * p = realloc(ctx->trigger_pos, cap * sizeof(*p));
        if (!p) {
            return false;
        }
        ctx->trigger_pos     = p;
        ctx->cap_trigger_pos = cap;
    }
    memcpy(ctx->trigger_buf + ctx->n_trigger_buf, piece, len);
    ctx->trigger_pos[ctx->n_trigger_pos++] = (struct trigger_token_pos) { token, ctx->n_trigger_buf, ctx->n_trigger_buf + len };
    ctx->n_trigger_buf += len;
    return true;
}

static void grammar_accept(struct llama_sampler * smpl, llama_token token) {
    struct sampler_grammar * ctx = smpl->ctx;
    if (!ctx->grammar) {
        return;
    }
    const struct grammar_pieces * pc = ctx->pieces;
    if (token < 0 || token >= pc->n_vocab) {
        LLAMA_LOG_ERROR("%s: token %d is outside the vocabulary (%d tokens)\n", __func__, token, pc->n_vocab);
        return;
    }
    size_t len;
    const char * piece = piece_of(pc, token, &len);

    if (ctx->awaiting_trigger) {
        for (size_t i = 0; i < ctx->n_trigger_tokens; ++i) {
            if (ctx->trigger_tokens[i] == token) {
                ctx->awaiting_trigger = false;
                ctx->n_trigger_buf = 0;
                ctx->n_trigger_pos = 0;
                grammar_feed(ctx, token, piece, len);
                return;
            }
        }
        if (!trigger_buf_append(ctx, token, piece, len)) {
            LLAMA_LOG_ERROR("%s: out of memory for the trigger text\n", __func__);
            return;
        }
        for (size_t k = 0; k < ctx->n_trigger_patterns; ++k) {
            const size_t start = trigger_find(ctx, k, ctx->trigger_buf, ctx->n_trigger_buf);
            if (start == SIZE_MAX) {
                continue;
            }
            ctx->awaiting_trigger = false;
            // replay the tokens from the trigger on, the first one possibly cut
            for (size_t i = 0; i < ctx->n_trigger_pos; ++i) {
                const struct trigger_token_pos tp = ctx->trigger_pos[i];
                if (tp.end <= start) {
                    continue;
                }
                const size_t beg = tp.beg < start ? start : tp.beg;
                grammar_feed(ctx, tp.token, ctx->trigger_buf + beg, tp.end - beg);
            }
            ctx->n_trigger_buf = 0;
            ctx->n_trigger_pos = 0;
            return;
        }
        return;
    }

    if (pc->flags[token] & PIECE_EOG) {
        if (!llama_grammar_is_complete(ctx->grammar)) {
            LLAMA_LOG_ERROR("%s: end-of-generation token %d before the grammar is complete; grammar state left unchanged\n",
                    __func__, token);
        }
        return;
    }
    grammar_feed(ctx, token, piece, len);
}

static void grammar_reset(struct llama_sampler * smpl) {
    struct sampler_grammar * ctx = smpl->ctx;
    if (!ctx->grammar) {
        return;
    }
    llama_grammar_reset(ctx->grammar);
    ctx->awaiting_trigger = ctx->lazy;
    ctx->n_trigger_buf    = 0;
    ctx->n_trigger_pos    = 0;
}

static void grammar_ctx_free(struct sampler_grammar * ctx) {
    if (!ctx) {
        return;
    }
    llama_grammar_free_impl(ctx->grammar);
    pieces_release(ctx->pieces);
    free(ctx->trigger_tokens);
    for (size_t i = 0; i < ctx->n_trigger_patterns; ++i) {
        if (ctx->trigger_patterns) {
            free(ctx->trigger_patterns[i]);
        }
        if (ctx->trigger_re) {
            pcre2_code_free(ctx->trigger_re[i]);
        }
    }
    free(ctx->trigger_patterns);
    free(ctx->trigger_re);
    free(ctx->trigger_buf);
    free(ctx->trigger_pos);
    free(ctx->full);
    free(ctx->cands);
    free(ctx->dec);
    free(ctx);
}

static void grammar_free(struct llama_sampler * smpl) {
    grammar_ctx_free(smpl->ctx);
    smpl->ctx = NULL;
}

static bool copy_trigger_text(struct sampler_grammar * dst, const struct sampler_grammar * src) {
    dst->n_trigger_buf = 0;
    dst->n_trigger_pos = 0;
    for (size_t i = 0; i < src->n_trigger_pos; ++i) {
        const struct trigger_token_pos tp = src->trigger_pos[i];
        if (!trigger_buf_append(dst, tp.token, src->trigger_buf + tp.beg, tp.end - tp.beg)) {
            return false;
        }
    }
    return true;
}

// a sampler context with the configuration of src (vocabulary, pieces, triggers) but no grammar yet
static struct sampler_grammar * grammar_ctx_new(const struct llama_vocab * vocab, struct grammar_pieces * pieces,
        bool lazy, const char ** patterns, size_t n_patterns, const llama_token * tokens, size_t n_tokens);

static struct llama_sampler_i llama_sampler_grammar_i;

static struct llama_sampler * grammar_clone(const struct llama_sampler * smpl) {
    const struct sampler_grammar * src = smpl->ctx;
    if (src->pieces) {
        atomic_fetch_add(&src->pieces->refs, 1);
    }
    struct sampler_grammar * ctx = grammar_ctx_new(src->vocab, src->pieces, src->lazy, (const char **) src->trigger_patterns,
            src->n_trigger_patterns, src->trigger_tokens, src->n_trigger_tokens);
    if (!ctx) {
        return NULL;
    }
    if (src->grammar) {
        ctx->grammar = llama_grammar_clone_impl(src->grammar);
        if (!ctx->grammar || !copy_trigger_text(ctx, src)) {
            LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
            grammar_ctx_free(ctx);
            return NULL;
        }
    }
    ctx->awaiting_trigger = src->awaiting_trigger;
    struct llama_sampler * r = llama_sampler_init(&llama_sampler_grammar_i, ctx);
    if (!r) {
        grammar_ctx_free(ctx);
    }
    return r;
}

static void grammar_copy_state(const struct llama_sampler * src, struct llama_sampler * dst) {
    const struct sampler_grammar * s = src->ctx;
    struct sampler_grammar * d = dst->ctx;
    if ((s->grammar == NULL) != (d->grammar == NULL)) {
        LLAMA_LOG_ERROR("%s: cannot copy between an empty and a non-empty grammar\n", __func__);
        return;
    }
    if (!s->grammar) {
        return;
    }
    if (!llama_grammar_copy_state(s->grammar, d->grammar) || !copy_trigger_text(d, s)) {
        LLAMA_LOG_ERROR("%s: out of memory; destination grammar state may be incomplete\n", __func__);
        return;
    }
    d->awaiting_trigger = s->awaiting_trigger;
}

static struct llama_sampler_i llama_sampler_grammar_i = {
    /* .name              = */ grammar_name,
    /* .accept            = */ grammar_accept,
    /* .apply             = */ grammar_apply,
    /* .reset             = */ grammar_reset,
    /* .clone             = */ grammar_clone,
    /* .free              = */ grammar_free,
    /* .backend_init      = */ NULL,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ NULL,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ grammar_copy_state,
};

static struct sampler_grammar * grammar_ctx_new(const struct llama_vocab * vocab, struct grammar_pieces * pieces,
        bool lazy, const char ** patterns, size_t n_patterns, const llama_token * tokens, size_t n_tokens) {
    struct sampler_grammar * ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        pieces_release(pieces);
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    ctx->vocab            = vocab;
    ctx->pieces           = pieces;
    ctx->lazy             = lazy;
    ctx->awaiting_trigger = lazy;
    bool ok = true;
    if (pieces) {
        ctx->full = malloc((pieces->n_sorted ? pieces->n_sorted : 1) * sizeof(*ctx->full));
        ok = ctx->full != NULL;
        if (ok) {
            memcpy(ctx->full, pieces->sorted, pieces->n_sorted * sizeof(*ctx->full));
        }
    }
    if (ok && n_tokens > 0) {
        ctx->trigger_tokens = malloc(n_tokens * sizeof(*ctx->trigger_tokens));
        ok = ctx->trigger_tokens != NULL;
        if (ok) {
            memcpy(ctx->trigger_tokens, tokens, n_tokens * sizeof(*tokens));
            ctx->n_trigger_tokens = n_tokens;
        }
    }
    if (ok && n_patterns > 0) {
        ctx->trigger_patterns = calloc(n_patterns, sizeof(*ctx->trigger_patterns));
        ctx->trigger_re       = calloc(n_patterns, sizeof(*ctx->trigger_re));
        ok = ctx->trigger_patterns && ctx->trigger_re;
        for (size_t i = 0; i < n_patterns && ok; ++i) {
            ctx->n_trigger_patterns = i + 1;
            const size_t len = strlen(patterns[i]);
            ctx->trigger_patterns[i] = malloc(len + 1);
            if (!ctx->trigger_patterns[i]) {
                ok = false;
                break;
            }
            memcpy(ctx->trigger_patterns[i], patterns[i], len + 1);
            int err;
            PCRE2_SIZE off;
            ctx->trigger_re[i] = pcre2_compile((PCRE2_SPTR) patterns[i], len, PCRE2_DOLLAR_ENDONLY, &err, &off, NULL);
            if (!ctx->trigger_re[i]) {
                PCRE2_UCHAR msg[128];
                pcre2_get_error_message(err, msg, sizeof(msg));
                LLAMA_LOG_ERROR("%s: trigger pattern '%s': %s at offset %zu\n", __func__, patterns[i], (const char *) msg, (size_t) off);
                ok = false;
            }
        }
    }
    if (!ok) {
        grammar_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

static struct llama_sampler * grammar_init(const struct llama_vocab * vocab, const char * grammar_str,
        const char * grammar_root, bool lazy, const char ** patterns, size_t n_patterns, const llama_token * tokens,
        size_t n_tokens, const char * func) {
    if (grammar_str == NULL || grammar_str[0] == '\0') {
        // an empty grammar constrains nothing (as in llama.cpp)
        struct sampler_grammar * ctx = grammar_ctx_new(vocab, NULL, false, NULL, 0, NULL, 0);
        return ctx ? llama_sampler_new_owned(&llama_sampler_grammar_i, ctx) : NULL;
    }
    if (!vocab) {
        LLAMA_LOG_ERROR("%s: a grammar needs the vocabulary (vocab is NULL)\n", func);
        return NULL;
    }
    if ((n_patterns > 0 && !patterns) || (n_tokens > 0 && !tokens)) {
        LLAMA_LOG_ERROR("%s: %zu trigger patterns / %zu trigger tokens given without their array\n", func, n_patterns, n_tokens);
        return NULL;
    }
    for (size_t i = 0; i < n_patterns; ++i) {
        if (!patterns[i]) {
            LLAMA_LOG_ERROR("%s: trigger pattern %zu is NULL\n", func, i);
            return NULL;
        }
    }
    char err[256];
    struct llama_grammar * g = llama_grammar_init_impl(vocab, grammar_str, grammar_root, err, sizeof(err));
    if (!g) {
        LLAMA_LOG_ERROR("%s: failed to parse grammar\n", func);
        return NULL;
    }
    struct grammar_pieces * pieces = pieces_build(vocab);
    if (!pieces) {
        llama_grammar_free_impl(g);
        return NULL;
    }
    struct sampler_grammar * ctx = grammar_ctx_new(vocab, pieces, lazy, patterns, n_patterns, tokens, n_tokens);
    if (!ctx) {
        llama_grammar_free_impl(g);
        return NULL;
    }
    ctx->grammar = g;
    struct llama_sampler * smpl = llama_sampler_init(&llama_sampler_grammar_i, ctx);
    if (!smpl) {
        grammar_ctx_free(ctx);
    }
    return smpl;
}

struct llama_sampler * llama_sampler_init_grammar(const struct llama_vocab * vocab, const char * grammar_str, const char * grammar_root) {
    return grammar_init(vocab, grammar_str, grammar_root, false, NULL, 0, NULL, 0, __func__);
}

struct llama_sampler * llama_sampler_init_grammar_lazy_patterns(
        const struct llama_vocab * vocab,
                      const char * grammar_str,
                      const char * grammar_root,
                     const char ** trigger_patterns,
                            size_t num_trigger_patterns,
               const llama_token * trigger_tokens,
                            size_t num_trigger_tokens) {
    return grammar_init(vocab, grammar_str, grammar_root, true, trigger_patterns, num_trigger_patterns, trigger_tokens,
            num_trigger_tokens, __func__);
}
