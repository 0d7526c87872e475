#include "ngram-cache.h"

#include "log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// one n-gram and the tokens that followed it, in the order they were first seen
struct ngram_follow {
    llama_token token;
    int32_t     count;
};

struct ngram_slot {
    struct common_ngram   key;
    bool                  used;
    int32_t               n;
    int32_t               cap;
    struct ngram_follow * items;
};

// open addressing with linear probing; cap is a power of two and at most half full
struct common_ngram_cache {
    struct ngram_slot * slots;
    size_t cap;
    size_t n_used;
};

struct common_ngram common_ngram_make(const llama_token * input, int n) {
    struct common_ngram g;
    for (int i = 0; i < LLAMA_NGRAM_MAX; i++) {
        g.tokens[i] = i < n ? input[i] : -1;
    }
    return g;
}

static uint64_t ngram_hash(const struct common_ngram * g) {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < LLAMA_NGRAM_MAX; i++) {
        h ^= (uint64_t) (uint32_t) g->tokens[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

static bool ngram_eq(const struct common_ngram * a, const struct common_ngram * b) {
    return memcmp(a->tokens, b->tokens, sizeof(a->tokens)) == 0;
}

struct common_ngram_cache * common_ngram_cache_init(void) {
    struct common_ngram_cache * c = calloc(1, sizeof(*c));
    if (!c) {
        return NULL;
    }
    c->cap   = 64;
    c->slots = calloc(c->cap, sizeof(*c->slots));
    if (!c->slots) {
        free(c);
        return NULL;
    }
    return c;
}

void common_ngram_cache_free(struct common_ngram_cache * cache) {
    if (!cache) {
        return;
    }
    for (size_t i = 0; i < cache->cap; i++) {
        free(cache->slots[i].items);
    }
    free(cache->slots);
    free(cache);
}

size_t common_ngram_cache_size(const struct common_ngram_cache * cache) {
    return cache ? cache->n_used : 0;
}

static const struct ngram_slot * find_slot(const struct common_ngram_cache * c, const struct common_ngram * g) {
    if (!c) {
        return NULL;
    }
    const size_t mask = c->cap - 1;
    for (size_t i = (size_t) ngram_hash(g) & mask;; i = (i + 1) & mask) {
        const struct ngram_slot * s = &c->slots[i];
        if (!s->used) {
            return NULL;
        }
        if (ngram_eq(&s->key, g)) {
            return s;
        }
    }
}

static bool grow(struct common_ngram_cache * c) {
    const size_t cap = c->cap * 2;
    struct ngram_slot * slots = calloc(cap, sizeof(*slots));
    if (!slots) {
        return false;
    }
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->slots[i].used) {
            continue;
        }
        size_t j = (size_t) ngram_hash(&c->slots[i].key) & (cap - 1);
        while (slots[j].used) {
            j = (j + 1) & (cap - 1);
        }
        slots[j] = c->slots[i];
    }
    free(c->slots);
    c->slots = slots;
    c->cap   = cap;
    return true;
}

// the slot of g, created empty when missing; NULL when out of memory
static struct ngram_slot * get_slot(struct common_ngram_cache * c, const struct common_ngram * g) {
    if ((c->n_used + 1) * 2 > c->cap && !grow(c)) {
        return NULL;
    }
    const size_t mask = c->cap - 1;
    for (size_t i = (size_t) ngram_hash(g) & mask;; i = (i + 1) & mask) {
        struct ngram_slot * s = &c->slots[i];
        if (!s->used) {
            s->used = true;
            s->key  = *g;
            c->n_used++;
            return s;
        }
        if (ngram_eq(&s->key, g)) {
            return s;
        }
    }
}

static struct ngram_follow * slot_find(const struct ngram_slot * s, llama_token token) {
    for (int32_t i = 0; s && i < s->n; i++) {
        if (s->items[i].token == token) {
            return &s->items[i];
        }
    }
    return NULL;
}

bool common_ngram_cache_add(struct common_ngram_cache * cache, const struct common_ngram * ngram, llama_token token,
                            int32_t count) {
    if (!cache || !ngram || count <= 0) {
        return false;
    }
    struct ngram_slot * s = get_slot(cache, ngram);
    if (!s) {
        return false;
    }
    struct ngram_follow * f = slot_find(s, token);
    if (f) {
        // counts saturate instead of wrapping: a corpus this large is beyond what the format can say anyway
        f->count = f->count > INT32_MAX - count ? INT32_MAX : f->count + count;
        return true;
    }
    if (s->n == s->cap) {
        const int32_t cap = s->cap ? s->cap * 2 : 2;
        struct ngram_follow * items = realloc(s->items, (size_t) cap * sizeof(*items));
        if (!items) {
            return false;
        }
        s->items = items;
        s->cap   = cap;
    }
    s->items[s->n].token = token;
    s->items[s->n].count = count;
    s->n++;
    return true;
}

int32_t common_ngram_cache_count(const struct common_ngram_cache * cache, const struct common_ngram * ngram,
                                 llama_token token, int32_t * n_tokens) {
    const struct ngram_slot * s = find_slot(cache, ngram);
    if (n_tokens) {
        *n_tokens = s ? s->n : 0;
    }
    const struct ngram_follow * f = slot_find(s, token);
    return f ? f->count : 0;
}

bool common_ngram_cache_update(struct common_ngram_cache * cache, int ngram_min, int ngram_max,
                               const llama_token * inp, int64_t n_inp, int64_t nnew, bool print_progress) {
    if (!cache || ngram_min < 1 || ngram_max > LLAMA_NGRAM_MAX || ngram_min > ngram_max || n_inp < 0 ||
        (n_inp > 0 && !inp)) {
        LOG_ERR("%s: invalid arguments (ngram sizes %d..%d, %" PRId64 " tokens)\n", __func__, ngram_min, ngram_max,
                n_inp);
        return false;
    }
    const int64_t t_start_ms = ggml_time_ms();
    const int64_t n_todo = n_inp * (ngram_max - ngram_min + 1);
    int64_t n_done = 0;
    for (int64_t size = ngram_min; size <= ngram_max; size++) {
        const int64_t i_start = n_inp - nnew > size ? n_inp - nnew : size;
        for (int64_t i = i_start; i < n_inp; i++) {
            const struct common_ngram g = common_ngram_make(inp + i - size, (int) size);
            if (!common_ngram_cache_add(cache, &g, inp[i], 1)) {
                LOG_ERR("%s: out of memory\n", __func__);
                return false;
            }
            n_done++;
            if (print_progress && n_done % 10000000 == 0) {
                const int64_t t_now_ms = ggml_time_ms();
                const int64_t eta_ms   = (n_todo - n_done) * (t_now_ms - t_start_ms) / n_done;
                fprintf(stderr, "%s: %" PRId64 "/%" PRId64 " done, ETA: %02" PRId64 ":%02" PRId64 "\n", __func__,
                        n_done, n_todo, eta_ms / 60000, (eta_ms % 60000) / 1000);
            }
        }
    }
    return true;
}

// llama.cpp's thresholds, indexed by n-gram size - 1 (lax: context cache, strict: dynamic cache): a draft is
// abandoned when the sample is smaller than the size or the best token's share is below the percentage
static const int k_min_sample_size_lax[LLAMA_NGRAM_MAX]    = { 2,  2,  1,  1 };
static const int k_min_percent_lax[LLAMA_NGRAM_MAX]        = { 66, 50, 50, 50 };
static const int k_min_sample_size_strict[LLAMA_NGRAM_MAX] = { 4,  3,  2,  2 };
static const int k_min_percent_strict[LLAMA_NGRAM_MAX]     = { 75, 66, 66, 66 };

// a token from the static cache alone
static llama_token try_draft_static(const struct common_ngram_cache * nc_static, const struct common_ngram * g) {
    const struct ngram_slot * s = find_slot(nc_static, g);
    if (!s) {
        return LLAMA_TOKEN_NULL;
    }
    int64_t max_count = 0, sum_count = 0;
    llama_token max_token = LLAMA_TOKEN_NULL;
    for (int32_t i = 0; i < s->n; i++) {
        if (s->items[i].count > max_count) {
            max_count = s->items[i].count;
            max_token = s->items[i].token;
        }
        sum_count += s->items[i].count;
    }
    if (sum_count < k_min_sample_size_lax[LLAMA_NGRAM_STATIC - 1] ||
        100 * max_count < k_min_percent_lax[LLAMA_NGRAM_STATIC - 1] * sum_count) {
        return LLAMA_TOKEN_NULL;
    }
    return max_token;
}

// a token from a primary cache (context or dynamic), longest n-gram first, each candidate weighted by how often
// the static cache saw it (x100, or x1 when never)
static llama_token try_draft_primary(const struct common_ngram_cache * nc, const struct common_ngram * grams,
                                     const bool * valid, int n_grams, const struct ngram_slot * part_static,
                                     const int * min_sample_size, const int * min_percent) {
    for (int i = n_grams - 1; i >= 0; i--) {
        if (!valid[i]) {
            continue;
        }
        const struct ngram_slot * s = find_slot(nc, &grams[i]);
        if (!s) {
            continue;
        }
        int64_t max_primary = 0, max_static = 0, sum_primary = 0;
        llama_token max_token = LLAMA_TOKEN_NULL;
        for (int32_t k = 0; k < s->n; k++) {
            const struct ngram_follow * fs = slot_find(part_static, s->items[k].token);
            const int64_t c_primary = s->items[k].count;
            const int64_t c_static  = fs ? 100 * (int64_t) fs->count : 1;
            if (c_primary * c_static > max_primary * max_static) {
                max_token   = s->items[k].token;
                max_primary = c_primary;
                max_static  = c_static;
            }
            sum_primary += c_primary;
        }
        if (sum_primary < min_sample_size[i] || 100 * max_primary < min_percent[i] * sum_primary) {
            continue;
        }
        return max_token;
    }
    return LLAMA_TOKEN_NULL;
}

int common_ngram_cache_draft(const llama_token * inp, int n_inp, llama_token * draft, int n_draft,
                             int ngram_min, int ngram_max,
                             const struct common_ngram_cache * nc_context,
                             const struct common_ngram_cache * nc_dynamic,
                             const struct common_ngram_cache * nc_static) {
    int len = 1;
    if (!inp || !draft || n_inp < LLAMA_NGRAM_STATIC || ngram_min < 1 || ngram_max > LLAMA_NGRAM_MAX ||
        ngram_min > ngram_max) {
        return len;
    }
    // position i of the token history extended by the draft so far
#define TOK_AT(i) ((i) < n_inp ? inp[(i)] : draft[1 + (i) - n_inp])
    while (len - 1 < n_draft) {
        llama_token g_static[LLAMA_NGRAM_STATIC];
        const int start_static = n_inp - LLAMA_NGRAM_STATIC + len - 1;
        for (int j = 0; j < LLAMA_NGRAM_STATIC; j++) {
            g_static[j] = TOK_AT(start_static + j);
        }
        const struct common_ngram ngram_static = common_ngram_make(g_static, LLAMA_NGRAM_STATIC);
        const struct ngram_slot * part_static = find_slot(nc_static, &ngram_static);

        // cd = context + dynamic; n-grams that would start before the history are left out
        struct common_ngram grams[LLAMA_NGRAM_MAX];
        bool valid[LLAMA_NGRAM_MAX] = { false };
        const int n_grams = ngram_max - ngram_min + 1;
        for (int k = 0; k < n_grams; k++) {
            const int size  = ngram_min + k;
            const int start = n_inp - size + len - 1;
            if (start < 0) {
                continue;
            }
            llama_token t[LLAMA_NGRAM_MAX];
            for (int j = 0; j < size; j++) {
                t[j] = TOK_AT(start + j);
            }
            grams[k] = common_ngram_make(t, size);
            valid[k] = true;
        }
        llama_token tok = try_draft_primary(nc_context, grams, valid, n_grams, part_static, k_min_sample_size_lax,
                                            k_min_percent_lax);
        if (tok == LLAMA_TOKEN_NULL) {
            tok = try_draft_primary(nc_dynamic, grams, valid, n_grams, part_static, k_min_sample_size_strict,
                                    k_min_percent_strict);
        }
        if (tok == LLAMA_TOKEN_NULL) {
            tok = try_draft_static(nc_static, &ngram_static);
        }
        if (tok == LLAMA_TOKEN_NULL) {
            break;
        }
        draft[len++] = tok;
    }
#undef TOK_AT
    return len;
}

bool common_ngram_cache_save(const struct common_ngram_cache * cache, const char * filename) {
    if (!cache || !filename) {
        return false;
    }
    FILE * f = fopen(filename, "wb");
    if (!f) {
        LOG_ERR("%s: cannot open '%s' for writing\n", __func__, filename);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < cache->cap && ok; i++) {
        const struct ngram_slot * s = &cache->slots[i];
        if (!s->used || s->n == 0) {
            continue;
        }
        int32_t hdr[LLAMA_NGRAM_MAX + 1];
        for (int k = 0; k < LLAMA_NGRAM_MAX; k++) {
            hdr[k] = s->key.tokens[k];
        }
        hdr[LLAMA_NGRAM_MAX] = s->n;
        ok = fwrite(hdr, sizeof(hdr), 1, f) == 1;
        for (int32_t k = 0; k < s->n && ok; k++) {
            const int32_t pair[2] = { s->items[k].token, s->items[k].count };
            ok = fwrite(pair, sizeof(pair), 1, f) == 1;
        }
    }
    if (fclose(f) != 0) {
        ok = false;
    }
    if (!ok) {
        LOG_ERR("%s: write error on '%s'\n", __func__, filename);
    }
    return ok;
}

struct common_ngram_cache * common_ngram_cache_load(const char * filename) {
    if (!filename) {
        return NULL;
    }
    FILE * f = fopen(filename, "rb");
    if (!f) {
        LOG_ERR("%s: unable to open file '%s'\n", __func__, filename);
        return NULL;
    }
    struct common_ngram_cache * c = common_ngram_cache_init();
    if (!c) {
        fclose(f);
        return NULL;
    }
    long offset = 0;
    const char * why = NULL;
    for (;;) {
        int32_t hdr[LLAMA_NGRAM_MAX + 1];
        const size_t got = fread(hdr, 1, sizeof(hdr), f);
        if (got == 0 && feof(f)) {
            break;
        }
        if (got != sizeof(hdr)) {
            why = "truncated n-gram record";
            break;
        }
        const int32_t n = hdr[LLAMA_NGRAM_MAX];
        if (n <= 0) {
            why = "n-gram record with no tokens";
            break;
        }
        struct common_ngram g;
        memcpy(g.tokens, hdr, sizeof(g.tokens));
        // llama.cpp's loader keeps the first record of an n-gram and of a token; later duplicates are ignored
        const bool seen = find_slot(c, &g) != NULL;
        for (int32_t k = 0; k < n && !why; k++) {
            int32_t pair[2];
            if (fread(pair, sizeof(pair), 1, f) != 1) {
                why = "truncated token count";
            } else if (pair[1] <= 0) {
                why = "token count <= 0";
            } else if (!seen && common_ngram_cache_count(c, &g, pair[0], NULL) == 0 &&
                       !common_ngram_cache_add(c, &g, pair[0], pair[1])) {
                why = "out of memory";
            }
        }
        if (why) {
            break;
        }
        offset = ftell(f);
    }
    fclose(f);
    if (why) {
        LOG_ERR("%s: '%s' is not a valid n-gram cache: %s (record at byte %ld)\n", __func__, filename, why, offset);
        common_ngram_cache_free(c);
        return NULL;
    }
    return c;
}

bool common_ngram_cache_merge(struct common_ngram_cache * target, const struct common_ngram_cache * add) {
    if (!target || !add) {
        return false;
    }
    for (size_t i = 0; i < add->cap; i++) {
        const struct ngram_slot * s = &add->slots[i];
        for (int32_t k = 0; s->used && k < s->n; k++) {
            if (!common_ngram_cache_add(target, &s->key, s->items[k].token, s->items[k].count)) {
                return false;
            }
        }
    }
    return true;
}
