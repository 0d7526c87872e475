// common_sampler: the programs' sampler chain, grammar check and accepted-token history (see sampling.h).

#include "sampling.h"

#include "log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct common_sampler {
    struct common_params_sampling params; // grammar / logit_bias pointers are the caller's, not used after init

    struct llama_sampler * grmr;  // NULL: no grammar
    struct llama_sampler * chain;

    // accepted tokens, a ring of cap_prev
    llama_token * prev;
    size_t cap_prev;
    size_t first_prev;
    size_t n_prev;

    // candidates of the last sample
    llama_token_data * cur;
    size_t cap_cur;
    llama_token_data_array cur_p;

    int64_t t_total_us;
};

char common_sampler_type_to_chr(enum common_sampler_type type) {
    switch (type) {
        case COMMON_SAMPLER_TYPE_DRY:         return 'd';
        case COMMON_SAMPLER_TYPE_TOP_K:       return 'k';
        case COMMON_SAMPLER_TYPE_TYPICAL_P:   return 'y';
        case COMMON_SAMPLER_TYPE_TOP_P:       return 'p';
        case COMMON_SAMPLER_TYPE_TOP_N_SIGMA: return 's';
        case COMMON_SAMPLER_TYPE_MIN_P:       return 'm';
        case COMMON_SAMPLER_TYPE_TEMPERATURE: return 't';
        case COMMON_SAMPLER_TYPE_XTC:         return 'x';
        case COMMON_SAMPLER_TYPE_INFILL:      return 'i';
        case COMMON_SAMPLER_TYPE_PENALTIES:   return 'e';
        case COMMON_SAMPLER_TYPE_ADAPTIVE_P:  return 'a';
        default:                              return '?';
    }
}

const char * common_sampler_type_to_str(enum common_sampler_type type) {
    switch (type) {
        case COMMON_SAMPLER_TYPE_DRY:         return "dry";
        case COMMON_SAMPLER_TYPE_TOP_K:       return "top_k";
        case COMMON_SAMPLER_TYPE_TYPICAL_P:   return "typ_p";
        case COMMON_SAMPLER_TYPE_TOP_P:       return "top_p";
        case COMMON_SAMPLER_TYPE_TOP_N_SIGMA: return "top_n_sigma";
        case COMMON_SAMPLER_TYPE_MIN_P:       return "min_p";
        case COMMON_SAMPLER_TYPE_TEMPERATURE: return "temperature";
        case COMMON_SAMPLER_TYPE_XTC:         return "xtc";
        case COMMON_SAMPLER_TYPE_INFILL:      return "infill";
        case COMMON_SAMPLER_TYPE_PENALTIES:   return "penalties";
        case COMMON_SAMPLER_TYPE_ADAPTIVE_P:  return "adaptive_p";
        default:                              return "";
    }
}

// adds s to the chain; false when its init failed (NULL)
static bool chain_add(struct llama_sampler * chain, struct llama_sampler * s, const char * what) {
    if (!s) {
        LOG_ERR("%s: failed to create the %s sampler\n", __func__, what);
        return false;
    }
    llama_sampler_chain_add(chain, s);
    return true;
}

static bool build_chain(struct common_sampler * g, const struct llama_model * model, const struct common_params_sampling * p) {
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    const size_t min_keep = p->min_keep > 0 ? (size_t) p->min_keep : 0;
    struct llama_sampler * c = g->chain;

    if (!chain_add(c, llama_sampler_init_logit_bias(n_vocab, p->n_logit_bias, p->logit_bias), "logit-bias")) {
        return false;
    }
    if (p->mirostat == 1) {
        return chain_add(c, llama_sampler_init_temp(p->temp), "temp") &&
               chain_add(c, llama_sampler_init_mirostat(n_vocab, p->seed, p->mirostat_tau, p->mirostat_eta, 100), "mirostat");
    }
    if (p->mirostat == 2) {
        return chain_add(c, llama_sampler_init_temp(p->temp), "temp") &&
               chain_add(c, llama_sampler_init_mirostat_v2(p->seed, p->mirostat_tau, p->mirostat_eta), "mirostat-v2");
    }
    // adaptive-p selects the token itself (like dist and mirostat): listed anywhere in --samplers, it replaces the
    // final dist, as in llama.cpp
    bool use_adaptive_p = false;
    for (int32_t i = 0; i < p->n_samplers && i < COMMON_SAMPLERS_MAX; i++) {
        bool ok = true;
        switch (p->samplers[i]) {
            case COMMON_SAMPLER_TYPE_DRY: {
                const char * breakers[COMMON_DRY_BREAKERS_MAX];
                const int32_t nb = p->n_dry_sequence_breakers < COMMON_DRY_BREAKERS_MAX ? p->n_dry_sequence_breakers
                                                                                         : COMMON_DRY_BREAKERS_MAX;
                for (int32_t b = 0; b < nb; b++) {
                    breakers[b] = p->dry_sequence_breakers[b];
                }
                ok = chain_add(c, llama_sampler_init_dry(vocab, p->dry_multiplier, p->dry_base, p->dry_allowed_length,
                        p->dry_penalty_last_n, breakers, nb > 0 ? (size_t) nb : 0), "dry");
                break;
            }
            case COMMON_SAMPLER_TYPE_TOP_K:
                ok = chain_add(c, llama_sampler_init_top_k(p->top_k), "top-k");
                break;
            case COMMON_SAMPLER_TYPE_TOP_P:
                ok = chain_add(c, llama_sampler_init_top_p(p->top_p, min_keep), "top-p");
                break;
            case COMMON_SAMPLER_TYPE_TOP_N_SIGMA:
                ok = chain_add(c, llama_sampler_init_top_n_sigma(p->top_n_sigma), "top-n-sigma");
                break;
            case COMMON_SAMPLER_TYPE_MIN_P:
                ok = chain_add(c, llama_sampler_init_min_p(p->min_p, min_keep), "min-p");
                break;
            case COMMON_SAMPLER_TYPE_XTC:
                ok = chain_add(c, llama_sampler_init_xtc(p->xtc_probability, p->xtc_threshold, min_keep, p->seed), "xtc");
                break;
            case COMMON_SAMPLER_TYPE_TYPICAL_P:
                ok = chain_add(c, llama_sampler_init_typical(p->typ_p, min_keep), "typical");
                break;
            case COMMON_SAMPLER_TYPE_TEMPERATURE:
                ok = chain_add(c, llama_sampler_init_temp_ext(p->temp, p->dynatemp_range, p->dynatemp_exponent), "temp-ext");
                break;
            case COMMON_SAMPLER_TYPE_INFILL:
                ok = chain_add(c, llama_sampler_init_infill(vocab), "infill");
                break;
            case COMMON_SAMPLER_TYPE_PENALTIES:
                ok = chain_add(c, llama_sampler_init_penalties(p->penalty_last_n, p->penalty_repeat,
                        p->penalty_freq, p->penalty_present), "penalties");
                break;
            case COMMON_SAMPLER_TYPE_ADAPTIVE_P:
                use_adaptive_p = true;
                break;
            default:
                LOG_ERR("%s: unknown sampler type %d\n", __func__, (int) p->samplers[i]);
                ok = false;
                break;
        }
        if (!ok) {
            return false;
        }
    }
    if (use_adaptive_p) {
        return chain_add(c, llama_sampler_init_adaptive_p(p->adaptive_target, p->adaptive_decay, p->seed), "adaptive-p");
    }
    return chain_add(c, llama_sampler_init_dist(p->seed), "dist");
}

struct common_sampler * common_sampler_init(const struct llama_model * model, const struct common_params_sampling * params) {
    if (!model || !params) {
        LOG_ERR("%s: %s is NULL\n", __func__, model ? "params" : "model");
        return NULL;
    }
    struct common_sampler * g = calloc(1, sizeof(*g));
    if (!g) {
        LOG_ERR("%s: out of memory\n", __func__);
        return NULL;
    }
    g->params = *params;
    g->params.logit_bias = NULL;
    g->params.grammar = NULL;
    g->params.grammar_triggers = NULL;
    g->params.n_grammar_triggers = 0;

    struct llama_sampler_chain_params cp = llama_sampler_chain_default_params();
    cp.no_perf = params->no_perf;
    g->chain = llama_sampler_chain_init(cp);
    g->cap_prev = params->n_prev > 32 ? (size_t) params->n_prev : 32;
    g->prev = malloc(g->cap_prev * sizeof(llama_token));
    if (!g->chain || !g->prev || !build_chain(g, model, params)) {
        common_sampler_free(g);
        return NULL;
    }
    if (params->grammar && params->grammar[0]) {
        g->grmr = common_sampler_init_grammar(llama_model_get_vocab(model), params);
        if (!g->grmr) {
            LOG_ERR("%s: failed to parse the grammar\n", __func__);
            common_sampler_free(g);
            return NULL;
        }
    }
    return g;
}

void common_sampler_free(struct common_sampler * gsmpl) {
    if (!gsmpl) {
        return;
    }
    llama_sampler_free(gsmpl->grmr);
    llama_sampler_free(gsmpl->chain);
    free(gsmpl->prev);
    free(gsmpl->cur);
    free(gsmpl);
}

static void prev_push(struct common_sampler * g, llama_token t) {
    if (g->n_prev == g->cap_prev) {
        g->prev[g->first_prev] = t;
        g->first_prev = (g->first_prev + 1) % g->cap_prev;
    } else {
        g->prev[(g->first_prev + g->n_prev) % g->cap_prev] = t;
        g->n_prev++;
    }
}

// i-th most recent accepted token (0 = last)
static llama_token prev_rat(const struct common_sampler * g, size_t i) {
    return g->prev[(g->first_prev + g->n_prev - 1 - i) % g->cap_prev];
}

void common_sampler_accept(struct common_sampler * gsmpl, llama_token token, bool accept_grammar) {
    if (!gsmpl) {
        return;
    }
    const int64_t t0 = ggml_time_us();
    if (gsmpl->grmr && accept_grammar) {
        llama_sampler_accept(gsmpl->grmr, token);
    }
    llama_sampler_accept(gsmpl->chain, token);
    prev_push(gsmpl, token);
    gsmpl->t_total_us += ggml_time_us() - t0;
}

void common_sampler_reset(struct common_sampler * gsmpl) {
    if (!gsmpl) {
        return;
    }
    if (gsmpl->grmr) {
        llama_sampler_reset(gsmpl->grmr);
    }
    llama_sampler_reset(gsmpl->chain);
    gsmpl->first_prev = 0;
    gsmpl->n_prev = 0;
}

struct common_sampler * common_sampler_clone(const struct common_sampler * gsmpl) {
    if (!gsmpl) {
        return NULL;
    }
    struct common_sampler * r = calloc(1, sizeof(*r));
    if (!r) {
        return NULL;
    }
    *r = *gsmpl;
    r->grmr = gsmpl->grmr ? llama_sampler_clone(gsmpl->grmr) : NULL;
    r->chain = llama_sampler_clone(gsmpl->chain);
    r->prev = malloc(gsmpl->cap_prev * sizeof(llama_token));
    r->cur = NULL;
    r->cap_cur = 0;
    r->cur_p.data = NULL;
    r->cur_p.size = 0;
    if (!r->chain || !r->prev || (gsmpl->grmr && !r->grmr)) {
        common_sampler_free(r);
        return NULL;
    }
    memcpy(r->prev, gsmpl->prev, gsmpl->cap_prev * sizeof(llama_token));
    return r;
}

static bool reserve_cur(struct common_sampler * g, size_t n) {
    if (n > g->cap_cur) {
        llama_token_data * p = realloc(g->cur, n * sizeof(*p));
        if (!p) {
            LOG_ERR("%s: out of memory for %zu candidates\n", __func__, n);
            return false;
        }
        g->cur = p;
        g->cap_cur = n;
    }
    return true;
}

void common_sampler_copy(const struct common_sampler * src, struct common_sampler * dst) {
    if (!src || !dst || src == dst) {
        return;
    }
    if ((src->grmr == NULL) != (dst->grmr == NULL)) {
        LOG_ERR("%s: one sampler has a grammar and the other not; destination left unchanged\n", __func__);
        return;
    }
    if (src->grmr) {
        llama_sampler_copy(src->grmr, dst->grmr);
    }
    llama_sampler_copy(src->chain, dst->chain);
    dst->params = src->params;
    if (dst->cap_prev == src->cap_prev) {
        memcpy(dst->prev, src->prev, src->cap_prev * sizeof(llama_token));
        dst->first_prev = src->first_prev;
        dst->n_prev = src->n_prev;
    }
    // the candidates are copied into dst's own buffer and cur_p re-pointed at it
    dst->cur_p = src->cur_p;
    dst->cur_p.data = NULL;
    if (src->cur_p.data && src->cur_p.size > 0 && reserve_cur(dst, src->cur_p.size)) {
        memcpy(dst->cur, src->cur_p.data, src->cur_p.size * sizeof(llama_token_data));
        dst->cur_p.data = dst->cur;
    } else {
        dst->cur_p.size = 0;
    }
    dst->t_total_us = src->t_total_us;
}

void common_perf_print(const struct llama_context * ctx, const struct common_sampler * gsmpl) {
    if (gsmpl) {
        llama_perf_sampler_print(gsmpl->chain);
    }
    if (ctx) {
        llama_perf_context_print(ctx);
    }
}

// fills cur_p from output idx: the backend's filtered candidates when present, else the full logits
static bool set_logits(struct common_sampler * g, struct llama_context * ctx, int idx) {
    const float * probs = llama_get_sampled_probs_ith(ctx, idx);
    const float * logits = llama_get_sampled_logits_ith(ctx, idx);
    const llama_token * ids = llama_get_sampled_candidates_ith(ctx, idx);
    size_t n = 0;
    if (logits) {
        n = probs ? llama_get_sampled_probs_count_ith(ctx, idx) : llama_get_sampled_logits_count_ith(ctx, idx);
    } else {
        logits = llama_get_logits_ith(ctx, idx);
        if (!logits) {
            LOG_ERR("%s: no logits for output %d\n", __func__, idx);
            return false;
        }
        n = (size_t) llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(ctx)));
        probs = NULL;
        ids = NULL;
    }
    if (n == 0 || !reserve_cur(g, n)) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        g->cur[i].id = ids ? ids[i] : (llama_token) i;
        g->cur[i].logit = logits[i];
        g->cur[i].p = probs ? probs[i] : 0.0f;
    }
    g->cur_p.data = g->cur;
    g->cur_p.size = n;
    g->cur_p.selected = -1;
    g->cur_p.sorted = false;
    return true;
}

llama_token common_sampler_sample(struct common_sampler * gsmpl, struct llama_context * ctx, int idx, bool grammar_first) {
    if (!gsmpl || !ctx) {
        return LLAMA_TOKEN_NULL;
    }
    const int64_t t0 = ggml_time_us();
    llama_token id = llama_get_sampled_token_ith(ctx, idx);
    if (id != LLAMA_TOKEN_NULL) {
        // the whole chain ran in the graph; expose the choice as the only candidate
        if (reserve_cur(gsmpl, 1)) {
            gsmpl->cur[0].id = id;
            gsmpl->cur[0].logit = 0.0f;
            gsmpl->cur[0].p = 1.0f;
            gsmpl->cur_p.data = gsmpl->cur;
            gsmpl->cur_p.size = 1;
            gsmpl->cur_p.selected = 0;
            gsmpl->cur_p.sorted = true;
        }
        gsmpl->t_total_us += ggml_time_us() - t0;
        return id;
    }
    if (!set_logits(gsmpl, ctx, idx)) {
        return LLAMA_TOKEN_NULL;
    }
    if (gsmpl->grmr && grammar_first) {
        llama_sampler_apply(gsmpl->grmr, &gsmpl->cur_p);
    }
    llama_sampler_apply(gsmpl->chain, &gsmpl->cur_p);
    if (gsmpl->cur_p.selected < 0 || (size_t) gsmpl->cur_p.selected >= gsmpl->cur_p.size) {
        LOG_ERR("%s: the sampler chain selected no token\n", __func__);
        return LLAMA_TOKEN_NULL;
    }
    id = gsmpl->cur_p.data[gsmpl->cur_p.selected].id;
    if (gsmpl->grmr && !grammar_first) {
        // cheap check of the chosen token; only when the grammar rejects it, constrain all candidates and resample
        llama_token_data single = { id, 1.0f, 0.0f };
        llama_token_data_array one = { &single, 1, -1, false };
        llama_sampler_apply(gsmpl->grmr, &one);
        if (isinf(one.data[0].logit) && one.data[0].logit < 0.0f) {
            if (!set_logits(gsmpl, ctx, idx)) {
                return LLAMA_TOKEN_NULL;
            }
            llama_sampler_apply(gsmpl->grmr, &gsmpl->cur_p);
            llama_sampler_apply(gsmpl->chain, &gsmpl->cur_p);
            if (gsmpl->cur_p.selected < 0 || (size_t) gsmpl->cur_p.selected >= gsmpl->cur_p.size) {
                LOG_ERR("%s: no token satisfies the grammar\n", __func__);
                return LLAMA_TOKEN_NULL;
            }
            id = gsmpl->cur_p.data[gsmpl->cur_p.selected].id;
        }
    }
    gsmpl->t_total_us += ggml_time_us() - t0;
    return id;
}

size_t common_sampler_sample_and_accept_n(struct common_sampler * gsmpl, struct llama_context * ctx,
        const int * idxs, const llama_token * draft, size_t n_draft, llama_token * out, bool grammar_first) {
    size_t n = 0;
    for (size_t i = 0; i <= n_draft; i++) {
        const llama_token id = common_sampler_sample(gsmpl, ctx, idxs[i], grammar_first);
        if (id == LLAMA_TOKEN_NULL) {
            break;
        }
        // accepting in output order commits the backend's staged draws one by one
        common_sampler_accept(gsmpl, id, true);
        out[n++] = id;
        if (i == n_draft || draft[i] != id) {
            break;
        }
    }
    return n;
}

uint32_t common_sampler_get_seed(const struct common_sampler * gsmpl) {
    return gsmpl ? llama_sampler_get_seed(gsmpl->chain) : LLAMA_DEFAULT_SEED;
}

static int cmp_logit_desc(const void * a, const void * b) {
    const float x = ((const llama_token_data *) a)->logit, y = ((const llama_token_data *) b)->logit;
    return x < y ? 1 : x > y ? -1 : 0;
}

llama_token_data_array * common_sampler_get_candidates(struct common_sampler * gsmpl, bool do_sort) {
    if (!gsmpl) {
        return NULL;
    }
    if (do_sort && !gsmpl->cur_p.sorted && gsmpl->cur_p.data && gsmpl->cur_p.size > 1) {
        const llama_token sel = gsmpl->cur_p.selected >= 0 ? gsmpl->cur_p.data[gsmpl->cur_p.selected].id : LLAMA_TOKEN_NULL;
        qsort(gsmpl->cur_p.data, gsmpl->cur_p.size, sizeof(llama_token_data), cmp_logit_desc);
        gsmpl->cur_p.sorted = true;
        for (size_t i = 0; i < gsmpl->cur_p.size && sel != LLAMA_TOKEN_NULL; i++) {
            if (gsmpl->cur_p.data[i].id == sel) {
                gsmpl->cur_p.selected = (int64_t) i;
                break;
            }
        }
    }
    return &gsmpl->cur_p;
}

llama_token common_sampler_last(const struct common_sampler * gsmpl) {
    return gsmpl && gsmpl->n_prev > 0 ? prev_rat(gsmpl, 0) : LLAMA_TOKEN_NULL;
}

struct llama_sampler * common_sampler_get(const struct common_sampler * gsmpl) {
    return gsmpl ? gsmpl->chain : NULL;
}

int common_sampler_print(const struct common_sampler * gsmpl, char * buf, size_t size) {
    if (!gsmpl) {
        return -1;
    }
    size_t len = 0;
    int w = snprintf(buf, size, "logits ");
    len += w > 0 ? (size_t) w : 0;
    const int n = llama_sampler_chain_n(gsmpl->chain);
    for (int i = 0; i < n; i++) {
        const char * name = llama_sampler_name(llama_sampler_chain_get(gsmpl->chain, i));
        w = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "-> %s ", name);
        len += w > 0 ? (size_t) w : 0;
    }
    return (int) len;
}

int common_sampler_prev_str(const struct common_sampler * gsmpl, const struct llama_context * ctx, int n,
        char * buf, size_t size) {
    if (!gsmpl || !ctx || n <= 0) {
        if (size > 0) {
            buf[0] = '\0';
        }
        return 0;
    }
    const struct llama_vocab * vocab = llama_model_get_vocab(llama_get_model(ctx));
    size_t k = (size_t) n < gsmpl->n_prev ? (size_t) n : gsmpl->n_prev;
    size_t len = 0;
    if (size > 0) {
        buf[0] = '\0';
    }
    char piece[256];
    for (size_t i = k; i-- > 0;) {
        const int32_t m = llama_token_to_piece(vocab, prev_rat(gsmpl, i), piece, (int32_t) sizeof(piece) - 1, 0, true);
        if (m <= 0) {
            continue;
        }
        piece[m] = '\0';
        const int w = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s", piece);
        len += w > 0 ? (size_t) w : 0;
    }
    return (int) len;
}
