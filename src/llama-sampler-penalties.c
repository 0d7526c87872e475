// Samplers that look at the generated history: repetition penalties and DRY ("don't repeat yourself").

#include "llama-sampler.h"

#include "llama-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

//
// token -> int map (open addressing, linear probing); holds at most one entry per token of a history window
//

struct token_map {
    llama_token * keys; // [cap]
    int32_t     * vals; // [cap]
    uint8_t     * used; // [cap]
    size_t        cap;  // power of two, or 0
    size_t        n;
};

static size_t token_map_slot(const struct token_map * m, llama_token key) {
    uint32_t h = (uint32_t) key * 2654435761u; // Knuth's multiplicative hash
    return (size_t) (h ^ (h >> 15)) & (m->cap - 1);
}

static void token_map_free(struct token_map * m) {
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof(*m));
}

static void token_map_clear(struct token_map * m) {
    if (m->cap) {
        memset(m->used, 0, m->cap);
    }
    m->n = 0;
}

static bool token_map_rehash(struct token_map * m, size_t cap) {
    struct token_map r = { 0 };
    r.keys = malloc(cap * sizeof(*r.keys));
    r.vals = malloc(cap * sizeof(*r.vals));
    r.used = calloc(cap, 1);
    r.cap  = cap;
    if (!r.keys || !r.vals || !r.used) {
        token_map_free(&r);
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
        return false;
    }
    for (size_t i = 0; i < m->cap; ++i) {
        if (m->used[i]) {
            size_t s = token_map_slot(&r, m->keys[i]);
            while (r.used[s]) {
                s = (s + 1) & (cap - 1);
            }
            r.used[s] = 1;
            r.keys[s] = m->keys[i];
            r.vals[s] = m->vals[i];
            r.n++;
        }
    }
    token_map_free(m);
    *m = r;
    return true;
}

static int32_t * token_map_find(const struct token_map * m, llama_token key) {
    if (m->n == 0) {
        return NULL;
    }
    for (size_t s = token_map_slot(m, key); m->used[s]; s = (s + 1) & (m->cap - 1)) {
        if (m->keys[s] == key) {
            return &m->vals[s];
        }
    }
    return NULL;
}

// value slot for key, inserted with value 0 if missing; NULL when out of memory
static int32_t * token_map_get_or_add(struct token_map * m, llama_token key) {
    int32_t * v = token_map_find(m, key);
    if (v) {
        return v;
    }
    // keep the load at or below 1/2 so probe chains stay short
    if (2 * (m->n + 1) > m->cap && !token_map_rehash(m, m->cap ? 2 * m->cap : 16)) {
        return NULL;
    }
    size_t s = token_map_slot(m, key);
    while (m->used[s]) {
        s = (s + 1) & (m->cap - 1);
    }
    m->used[s] = 1;
    m->keys[s] = key;
    m->vals[s] = 0;
    m->n++;
    return &m->vals[s];
}

static void token_map_remove(struct token_map * m, llama_token key) {
    if (m->n == 0) {
        return;
    }
    const size_t mask = m->cap - 1;
    size_t s = token_map_slot(m, key);
    while (m->used[s] && m->keys[s] != key) {
        s = (s + 1) & mask;
    }
    if (!m->used[s]) {
        return;
    }
    // backward-shift deletion: move later members of the probe run into the hole when their home allows it
    size_t hole = s;
    for (size_t j = (s + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        const size_t home = token_map_slot(m, m->keys[j]);
        // j may move to hole iff home is not cyclically inside (hole, j]
        const bool home_in_range = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!home_in_range) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->used[hole] = 0;
    m->n--;
}

static bool token_map_copy(struct token_map * dst, const struct token_map * src) {
    if (dst->cap != src->cap) {
        token_map_free(dst);
        if (src->cap) {
            dst->keys = malloc(src->cap * sizeof(*dst->keys));
            dst->vals = malloc(src->cap * sizeof(*dst->vals));
            dst->used = malloc(src->cap);
            if (!dst->keys || !dst->vals || !dst->used) {
                token_map_free(dst);
                LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
                return false;
            }
            dst->cap = src->cap;
        }
    }
    if (src->cap) {
        memcpy(dst->keys, src->keys, src->cap * sizeof(*dst->keys));
        memcpy(dst->vals, src->vals, src->cap * sizeof(*dst->vals));
        memcpy(dst->used, src->used, src->cap);
    }
    dst->n = src->n;
    return true;
}

//
// fixed-capacity ring of tokens: pushing into a full ring drops the oldest
//

struct token_ring {
    llama_token * data; // [cap]
    size_t cap;
    size_t first;
    size_t size;
};

static bool token_ring_init(struct token_ring * r, size_t cap) {
    memset(r, 0, sizeof(*r));
    if (cap > 0) {
        if (cap > SIZE_MAX / sizeof(llama_token) || !(r->data = malloc(cap * sizeof(llama_token)))) {
            LLAMA_LOG_ERROR("%s: cannot allocate a history of %zu tokens\n", __func__, cap);
            return false;
        }
    }
    r->cap = cap;
    return true;
}

static void token_ring_push(struct token_ring * r, llama_token t) {
    if (r->cap == 0) {
        return;
    }
    if (r->size == r->cap) {
        r->data[r->first] = t;
        r->first = (r->first + 1) % r->cap;
    } else {
        r->data[(r->first + r->size) % r->cap] = t;
        r->size++;
    }
}

// i-th most recent token (0 = last pushed)
static llama_token token_ring_rat(const struct token_ring * r, size_t i) {
    return r->data[(r->first + r->size - i - 1) % r->cap];
}

static void token_ring_copy(struct token_ring * dst, const struct token_ring * src) {
    // same configuration, hence same capacity
    if (src->cap && dst->cap == src->cap) {
        memcpy(dst->data, src->data, src->cap * sizeof(llama_token));
        dst->first = src->first;
        dst->size  = src->size;
    }
}

//
// penalties (repeat / frequency / presence over the last n accepted tokens)
//

struct sampler_penalties {
    int32_t n_vocab;
    int32_t penalty_last_n;
    float   penalty_repeat;
    float   penalty_freq;
    float   penalty_present;

    struct token_ring prev;
    struct token_map  token_count; // occurrences of each token in prev

    // backend (one output per sequence): per-token factor r + step(logit) * a, then minus sub; F32 [n_vocab] each
    struct ggml_tensor * inp_r;
    struct ggml_tensor * inp_a;
    struct ggml_tensor * inp_sub;
};

static bool penalties_disabled(int32_t last_n, float repeat, float freq, float present) {
    return last_n == 0 || (repeat == 1.0f && freq == 0.0f && present == 0.0f);
}

static const char * penalties_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "penalties";
}

static void penalties_accept(struct llama_sampler * smpl, llama_token token) {
    struct sampler_penalties * ctx = smpl->ctx;
    if (ctx->penalty_last_n == 0) {
        return;
    }

    int32_t * c = token_map_get_or_add(&ctx->token_count, token);
    if (!c) {
        return; // out of memory (logged); the history is left as it was
    }
    (*c)++;

    // the oldest token leaves the window when it is full
    if (ctx->prev.size >= (size_t) ctx->penalty_last_n) {
        const llama_token old = token_ring_rat(&ctx->prev, ctx->prev.size - 1);
        int32_t * co = token_map_find(&ctx->token_count, old);
        if (co && --(*co) == 0) {
            token_map_remove(&ctx->token_count, old);
        }
    }

    token_ring_push(&ctx->prev, token);
}

static void penalties_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    const struct sampler_penalties * ctx = smpl->ctx;

    if (penalties_disabled(ctx->penalty_last_n, ctx->penalty_repeat, ctx->penalty_freq, ctx->penalty_present)) {
        return;
    }

    for (size_t i = 0; i < cur_p->size; ++i) {
        const int32_t * c = token_map_find(&ctx->token_count, cur_p->data[i].id);
        if (!c) {
            continue;
        }
        const int32_t count = *c;

        // dividing a negative logit would make the token more likely: scale towards -inf instead
        if (cur_p->data[i].logit <= 0) {
            cur_p->data[i].logit *= ctx->penalty_repeat;
        } else {
            cur_p->data[i].logit /= ctx->penalty_repeat;
        }

        cur_p->data[i].logit -= (float) count * ctx->penalty_freq + (float) (count > 0) * ctx->penalty_present;
    }

    cur_p->sorted = false;
}

static void penalties_reset(struct llama_sampler * smpl) {
    struct sampler_penalties * ctx = smpl->ctx;
    ctx->prev.first = 0;
    ctx->prev.size  = 0;
    token_map_clear(&ctx->token_count);
}

static void penalties_copy_state(const struct llama_sampler * src, struct llama_sampler * dst) {
    const struct sampler_penalties * s = src->ctx;
    struct sampler_penalties * d = dst->ctx;
    token_ring_copy(&d->prev, &s->prev);
    token_map_copy(&d->token_count, &s->token_count);
}

static struct llama_sampler * penalties_clone(const struct llama_sampler * smpl) {
    const struct sampler_penalties * ctx = smpl->ctx;
    struct llama_sampler * result = llama_sampler_init_penalties(
            ctx->penalty_last_n, ctx->penalty_repeat, ctx->penalty_freq, ctx->penalty_present);
    if (result) {
        penalties_copy_state(smpl, result);
        llama_sampler_penalties_set_n_vocab(result, ctx->n_vocab);
    }
    return result;
}

static void penalties_free(struct llama_sampler * smpl) {
    struct sampler_penalties * ctx = smpl->ctx;
    if (ctx) {
        free(ctx->prev.data);
        token_map_free(&ctx->token_count);
        free(ctx);
        smpl->ctx = NULL;
    }
}

// the history changes between decodes, so it enters the graph as per-token inputs rather than constants
static bool penalties_backend_init(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft, uint32_t n_outputs_max_per_seq) {
    // one graph sees one history: several outputs of a sequence would each need the tokens accepted before them
    if (n_outputs_max_per_seq > 1) {
        return false;
    }
    // the graph part works on dense per-token tables; without the vocabulary size (set by the context that
    // takes the chain, see llama_sampler_penalties_set_n_vocab) it stays on the CPU
    const struct sampler_penalties * c = smpl->ctx;
    if (c->n_vocab <= 0) {
        return false;
    }
    return llama_sampler_backend_support(smpl, buft);
}

static void penalties_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data) {
    GGML_UNUSED(gf);
    struct sampler_penalties * c = smpl->ctx;
    if (penalties_disabled(c->penalty_last_n, c->penalty_repeat, c->penalty_freq, c->penalty_present)) {
        return;
    }
    if (!c->inp_r) {
        c->inp_r   = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, c->n_vocab);
        c->inp_a   = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, c->n_vocab);
        c->inp_sub = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, c->n_vocab);
        ggml_set_name(c->inp_r, "penalties_r");
        ggml_set_name(c->inp_a, "penalties_a");
        ggml_set_name(c->inp_sub, "penalties_sub");
        ggml_set_input(c->inp_r);
        ggml_set_input(c->inp_a);
        ggml_set_input(c->inp_sub);
    }
    struct ggml_tensor * r = c->inp_r, * a = c->inp_a, * sub = c->inp_sub;
    if (data->candidates) {
        const int64_t n = data->candidates->ne[0];
        r   = ggml_reshape_1d(ctx, ggml_get_rows(ctx, ggml_reshape_2d(ctx, r,   1, c->n_vocab), data->candidates), n);
        a   = ggml_reshape_1d(ctx, ggml_get_rows(ctx, ggml_reshape_2d(ctx, a,   1, c->n_vocab), data->candidates), n);
        sub = ggml_reshape_1d(ctx, ggml_get_rows(ctx, ggml_reshape_2d(ctx, sub, 1, c->n_vocab), data->candidates), n);
    } else if (data->logits->ne[0] != c->n_vocab) {
        return; // probe graph or a foreign vocabulary size
    }
    struct ggml_tensor * factor = ggml_add(ctx, r, ggml_mul(ctx, ggml_step(ctx, data->logits), a));
    data->logits = ggml_sub(ctx, ggml_mul(ctx, data->logits, factor), sub);
}

static void penalties_backend_set_input(struct llama_sampler * smpl) {
    struct sampler_penalties * c = smpl->ctx;
    if (!c->inp_r || !c->inp_r->buffer) {
        return;
    }
    const size_t n = (size_t) c->n_vocab;
    float * buf = malloc(3 * n * sizeof(float));
    if (!buf) {
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
        return;
    }
    float * r = buf, * a = buf + n, * sub = buf + 2 * n;
    for (size_t i = 0; i < n; ++i) {
        r[i] = 1.0f;
        a[i] = 0.0f;
        sub[i] = 0.0f;
    }
    // every token of the history window, with its count
    const struct token_map * m = &c->token_count;
    for (size_t s = 0; s < m->cap; ++s) {
        if (!m->used[s]) {
            continue;
        }
        const llama_token t = m->keys[s];
        if (t < 0 || (size_t) t >= n) {
            continue;
        }
        const int32_t cnt = m->vals[s];
        // logit <= 0: logit * repeat; logit > 0: logit / repeat
        r[t]   = c->penalty_repeat;
        a[t]   = 1.0f / c->penalty_repeat - c->penalty_repeat;
        sub[t] = (float) cnt * c->penalty_freq + (float) (cnt > 0) * c->penalty_present;
    }
    ggml_backend_tensor_set(c->inp_r,   r,   0, n * sizeof(float));
    ggml_backend_tensor_set(c->inp_a,   a,   0, n * sizeof(float));
    ggml_backend_tensor_set(c->inp_sub, sub, 0, n * sizeof(float));
    free(buf);
}

static void penalties_backend_reset(struct llama_sampler * smpl) {
    struct sampler_penalties * c = smpl->ctx;
    c->inp_r = c->inp_a = c->inp_sub = NULL;
}

static struct llama_sampler_i llama_sampler_penalties_i = {
    /* .name              = */ penalties_name,
    /* .accept            = */ penalties_accept,
    /* .apply             = */ penalties_apply,
    /* .reset             = */ penalties_reset,
    /* .clone             = */ penalties_clone,
    /* .free              = */ penalties_free,
    /* .backend_init      = */ penalties_backend_init,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ penalties_backend_apply,
    /* .backend_set_input = */ penalties_backend_set_input,
    /* .backend_reset     = */ penalties_backend_reset,
    /* .copy_state        = */ penalties_copy_state,
};

void llama_sampler_penalties_set_n_vocab(struct llama_sampler * smpl, int32_t n_vocab) {
    if (smpl && smpl->iface == &llama_sampler_penalties_i) {
        struct sampler_penalties * c = smpl->ctx;
        c->n_vocab = n_vocab;
    }
}

struct llama_sampler * llama_sampler_init_penalties(
        int32_t penalty_last_n,
        float   penalty_repeat,
        float   penalty_freq,
        float   penalty_present) {
    if (penalty_last_n < 0) {
        penalty_last_n = 0;
    }
    if (penalties_disabled(penalty_last_n, penalty_repeat, penalty_freq, penalty_present)) {
        return llama_sampler_init_empty("?penalties");
    }
    if (!(penalty_repeat > 0.0f) || !isfinite(penalty_repeat) || !isfinite(penalty_freq) || !isfinite(penalty_present)) {
        LLAMA_LOG_ERROR("%s: invalid penalties (repeat %g must be > 0 and finite, freq %g and present %g finite)\n",
                __func__, (double) penalty_repeat, (double) penalty_freq, (double) penalty_present);
        return NULL;
    }

    struct sampler_penalties * ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    ctx->n_vocab         = 0; // known once a context takes the sampler for backend sampling
    ctx->penalty_last_n  = penalty_last_n;
    ctx->penalty_repeat  = penalty_repeat;
    ctx->penalty_freq    = penalty_freq;
    ctx->penalty_present = penalty_present;
    if (!token_ring_init(&ctx->prev, (size_t) penalty_last_n)) {
        free(ctx);
        return NULL;
    }

    struct llama_sampler * smpl = llama_sampler_init(&llama_sampler_penalties_i, ctx);
    if (!smpl) {
        struct llama_sampler tmp = { NULL, ctx };
        penalties_free(&tmp);
    }
    return smpl;
}

//
// DRY (Koboldcpp's design by p-e-w and pi6am: penalise tokens that would extend a repetition of the context)
//

struct sampler_dry {
    float   dry_multiplier;
    float   dry_base;
    int32_t dry_allowed_length;
    int32_t dry_penalty_last_n;

    // restart sequences, sorted by head token
    struct llama_sampler_dry_breaker * breakers; // [n_breakers]
    size_t n_breakers;

    struct token_ring last_tokens;

    // scratch for apply, [dry_penalty_last_n] each
    int32_t * repeat_count; // capped repeat length of the suffix ending at each context position
    int32_t * z;            // Z-function of the reversed context
    struct token_map max_token_repeat;
};

bool llama_sampler_dry_enabled(float multiplier, float base, int32_t last_n) {
    return multiplier != 0.0f && base >= 1.0f && last_n != 0;
}

static int dry_breaker_cmp(const void * pa, const void * pb) {
    const llama_token a = ((const struct llama_sampler_dry_breaker *) pa)->head;
    const llama_token b = ((const struct llama_sampler_dry_breaker *) pb)->head;
    return (a > b) - (a < b);
}

// [*first, *last) = breakers whose head is token
static void dry_breakers_of(const struct sampler_dry * ctx, llama_token token, size_t * first, size_t * last) {
    size_t lo = 0;
    size_t hi = ctx->n_breakers;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (ctx->breakers[mid].head < token) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    size_t end = lo;
    while (end < ctx->n_breakers && ctx->breakers[end].head == token) {
        end++;
    }
    *first = lo;
    *last  = end;
}

static const char * dry_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "dry";
}

static void dry_accept(struct llama_sampler * smpl, llama_token token) {
    struct sampler_dry * ctx = smpl->ctx;
    if (!llama_sampler_dry_enabled(ctx->dry_multiplier, ctx->dry_base, ctx->dry_penalty_last_n)) {
        return;
    }
    token_ring_push(&ctx->last_tokens, token);
}

static void dry_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct sampler_dry * ctx = smpl->ctx;

    if (!llama_sampler_dry_enabled(ctx->dry_multiplier, ctx->dry_base, ctx->dry_penalty_last_n)) {
        return;
    }

    const int32_t n_ctx = (int32_t) ctx->last_tokens.size < ctx->dry_penalty_last_n ? (int32_t) ctx->last_tokens.size : ctx->dry_penalty_last_n;
    if (n_ctx <= ctx->dry_allowed_length) {
        return;
    }

    const struct token_ring * hist = &ctx->last_tokens;

    // 1. the most recent complete restart sequence bounds how far back a repetition may reach
    int32_t rep_limit = n_ctx;
    for (int32_t i = 0; i < n_ctx; ++i) {
        size_t b0, b1;
        dry_breakers_of(ctx, token_ring_rat(hist, (size_t) i), &b0, &b1);
        if (b0 == b1) {
            continue;
        }
        int32_t longest = -1;
        for (size_t b = b0; b < b1; ++b) {
            const struct llama_sampler_dry_breaker * br = &ctx->breakers[b];
            // the tail follows the head in time, i.e. sits at more recent positions
            if (br->n_tail > longest && br->n_tail <= i) {
                bool match = true;
                for (int32_t off = 0; off < br->n_tail; ++off) {
                    if (br->tail[off] != token_ring_rat(hist, (size_t) (i - off - 1))) {
                        match = false;
                        break;
                    }
                }
                if (match) {
                    longest = br->n_tail;
                }
            }
        }
        if (longest >= 0) {
            rep_limit = i - longest;
            break;
        }
    }
    if (rep_limit < ctx->dry_allowed_length) {
        return;
    }

    // 2. for every earlier position, the length of the longest sequence ending there that equals the end of the
    //    context: the Z-function of the context read backwards (s[i] = i-th most recent token), capped at rep_limit
    {
        int32_t * z = ctx->z;
        int32_t l = 0;
        int32_t r = 0; // s[l..r) == s[0..r-l)
        for (int32_t k = 1; k < n_ctx; ++k) {
            int32_t len = 0;
            if (k < r) {
                len = r - k < z[k - l] ? r - k : z[k - l];
            }
            while (k + len < n_ctx && token_ring_rat(hist, (size_t) len) == token_ring_rat(hist, (size_t) (k + len))) {
                len++;
            }
            if (k + len > r) {
                l = k;
                r = k + len;
            }
            z[k] = len;
        }
        const int32_t last = n_ctx - 1;
        ctx->repeat_count[last] = 0;
        for (int32_t k = 1; k < n_ctx; ++k) {
            ctx->repeat_count[last - k] = z[k] < rep_limit ? z[k] : rep_limit;
        }
    }

    // 3. the token right after a repeated sequence would extend it: remember the longest extension per token
    token_map_clear(&ctx->max_token_repeat);
    for (int32_t i = 0; i < n_ctx - 1; ++i) {
        const int32_t repeat_len = ctx->repeat_count[i];
        if (repeat_len >= ctx->dry_allowed_length) {
            const llama_token token = token_ring_rat(hist, (size_t) (n_ctx - 2 - i));
            int32_t * v = token_map_get_or_add(&ctx->max_token_repeat, token);
            if (!v) {
                return; // out of memory (logged): no penalty this time
            }
            if (*v < repeat_len) {
                *v = repeat_len;
            }
        }
    }

    // 4. penalty multiplier * base^(length - allowed), with the exponent capped so the power stays finite in float
    const float float_max_log = 88.7228391f;
    int32_t max_exponent = 0;
    if (ctx->dry_base > 1.000001f) {
        max_exponent = (int32_t) (float_max_log / logf(ctx->dry_base));
    }

    for (size_t i = 0; i < cur_p->size; ++i) {
        const int32_t * rep = token_map_find(&ctx->max_token_repeat, cur_p->data[i].id);
        if (!rep) {
            continue;
        }
        // a token that is a whole restart sequence by itself is never penalised
        size_t b0, b1;
        dry_breakers_of(ctx, cur_p->data[i].id, &b0, &b1);
        bool single_token_breaker = false;
        for (size_t b = b0; b < b1; ++b) {
            if (ctx->breakers[b].n_tail == 0) {
                single_token_breaker = true;
                break;
            }
        }
        if (single_token_breaker) {
            continue;
        }
        int32_t repeat_exp = *rep - ctx->dry_allowed_length;
        if (max_exponent > 0 && repeat_exp > max_exponent) {
            repeat_exp = max_exponent;
        }
        const float penalty = (float) ((double) ctx->dry_multiplier * pow((double) ctx->dry_base, (double) repeat_exp));
        cur_p->data[i].logit -= penalty;
    }

    cur_p->sorted = false;
}

static void dry_reset(struct llama_sampler * smpl) {
    struct sampler_dry * ctx = smpl->ctx;
    ctx->last_tokens.first = 0;
    ctx->last_tokens.size  = 0;
    token_map_clear(&ctx->max_token_repeat);
}

static struct llama_sampler * dry_clone(const struct llama_sampler * smpl) {
    const struct sampler_dry * ctx = smpl->ctx;
    struct llama_sampler * result = llama_sampler_init_dry_from_breakers(ctx->dry_multiplier, ctx->dry_base,
            ctx->dry_allowed_length, ctx->dry_penalty_last_n, ctx->breakers, ctx->n_breakers);
    if (result && result->iface == smpl->iface) {
        struct sampler_dry * r = result->ctx;
        token_ring_copy(&r->last_tokens, &ctx->last_tokens);
    }
    return result;
}

static void dry_free(struct llama_sampler * smpl) {
    struct sampler_dry * ctx = smpl->ctx;
    if (!ctx) {
        return;
    }
    for (size_t i = 0; i < ctx->n_breakers; ++i) {
        free(ctx->breakers[i].tail);
    }
    free(ctx->breakers);
    free(ctx->last_tokens.data);
    free(ctx->repeat_count);
    free(ctx->z);
    token_map_free(&ctx->max_token_repeat);
    free(ctx);
    smpl->ctx = NULL;
}

static struct llama_sampler_i llama_sampler_dry_i = {
    /* .name              = */ dry_name,
    /* .accept            = */ dry_accept,
    /* .apply             = */ dry_apply,
    /* .reset             = */ dry_reset,
    /* .clone             = */ dry_clone,
    /* .free              = */ dry_free,
    /* .backend_init      = */ NULL,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ NULL,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ NULL,
};

struct llama_sampler * llama_sampler_init_dry_from_breakers(
        float   dry_multiplier,
        float   dry_base,
        int32_t dry_allowed_length,
        int32_t dry_penalty_last_n,
        const struct llama_sampler_dry_breaker * breakers,
        size_t  n_breakers) {
    if (dry_penalty_last_n < 0) {
        dry_penalty_last_n = 0;
    }
    if (!llama_sampler_dry_enabled(dry_multiplier, dry_base, dry_penalty_last_n)) {
        return llama_sampler_init_empty("?dry");
    }
    if (n_breakers > 0 && !breakers) {
        LLAMA_LOG_ERROR("%s: n_breakers = %zu but breakers is NULL\n", __func__, n_breakers);
        return NULL;
    }

    struct sampler_dry * ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    struct llama_sampler tmp = { NULL, ctx };

    ctx->dry_multiplier     = dry_multiplier;
    ctx->dry_base           = dry_base;
    ctx->dry_allowed_length = dry_allowed_length;
    ctx->dry_penalty_last_n = dry_penalty_last_n;

    const size_t n = (size_t) dry_penalty_last_n;
    ctx->repeat_count = malloc(n * sizeof(int32_t));
    ctx->z            = malloc(n * sizeof(int32_t));
    if (!ctx->repeat_count || !ctx->z || !token_ring_init(&ctx->last_tokens, n)) {
        LLAMA_LOG_ERROR("%s: cannot allocate a history of %zu tokens\n", __func__, n);
        dry_free(&tmp);
        return NULL;
    }

    if (n_breakers > 0) {
        ctx->breakers = calloc(n_breakers, sizeof(*ctx->breakers));
        if (!ctx->breakers) {
            LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
            dry_free(&tmp);
            return NULL;
        }
        for (size_t i = 0; i < n_breakers; ++i) {
            const struct llama_sampler_dry_breaker * b = &breakers[i];
            struct llama_sampler_dry_breaker * d = &ctx->breakers[ctx->n_breakers];
            d->head   = b->head;
            d->n_tail = b->n_tail > 0 ? b->n_tail : 0;
            if (d->n_tail > 0) {
                if (!b->tail || !(d->tail = malloc((size_t) d->n_tail * sizeof(llama_token)))) {
                    LLAMA_LOG_ERROR("%s: breaker %zu has %d tail tokens but no data, or out of memory\n", __func__, i, b->n_tail);
                    dry_free(&tmp);
                    return NULL;
                }
                memcpy(d->tail, b->tail, (size_t) d->n_tail * sizeof(llama_token));
            }
            ctx->n_breakers++;
        }
        qsort(ctx->breakers, ctx->n_breakers, sizeof(*ctx->breakers), dry_breaker_cmp);
    }

    struct llama_sampler * smpl = llama_sampler_init(&llama_sampler_dry_i, ctx);
    if (!smpl) {
        dry_free(&tmp);
    }
    return smpl;
}

struct llama_sampler * llama_sampler_init_dry_testing(
        float               dry_multiplier,
        float               dry_base,
        int32_t             dry_allowed_length,
        int32_t             dry_penalty_last_n,
        const llama_token * const * seq_breakers,
        const size_t      * seq_breaker_lens,
        size_t              n_seq_breakers) {
    struct llama_sampler_dry_breaker * list = NULL;
    size_t n = 0;
    if (n_seq_breakers > 0) {
        list = calloc(n_seq_breakers, sizeof(*list));
        if (!list) {
            return NULL;
        }
        for (size_t i = 0; i < n_seq_breakers; ++i) {
            if (seq_breaker_lens[i] == 0) {
                LLAMA_LOG_WARN("%s: skipping empty DRY sequence breaker\n", __func__);
                continue;
            }
            list[n].head   = seq_breakers[i][0];
            list[n].tail   = (llama_token *) (seq_breakers[i] + 1);
            list[n].n_tail = (int32_t) seq_breaker_lens[i] - 1;
            n++;
        }
    }
    struct llama_sampler * smpl = llama_sampler_init_dry_from_breakers(
            dry_multiplier, dry_base, dry_allowed_length, dry_penalty_last_n, list, n);
    free(list);
    return smpl;
}
