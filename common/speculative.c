#include "speculative.h"

#include "log.h"
#include "ngram-cache.h"
#include "ngram-map.h"
#include "ngram-mod.h"
#include "sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// vocab sizes may differ by this much (extra special tokens appended by a fine-tune) and still count as compatible
#define SPEC_VOCAB_MAX_SIZE_DIFFERENCE 128
// the first ids are control tokens whose texts vary between conversions: llama.cpp starts comparing here
#define SPEC_VOCAB_CHECK_START_TOKEN_ID 5
// llama.cpp's draft sampler is the chain { top_k(10) } (+ dist): the draft token is the best of those ten and its
// probability, compared with --spec-draft-p-min, is its share among them
#define SPEC_DRAFT_TOP_K 10

struct common_speculative_output_limits common_speculative_get_output_limits(int32_t n_batch, int32_t n_parallel,
                                                                             int32_t n_draft) {
    // int64 so that INT32_MAX inputs cannot overflow before the clamp
    const int64_t per_seq = 1 + (int64_t) (n_draft > 0 ? n_draft : 0);
    const int64_t total   = (int64_t) n_parallel * per_seq;
    struct common_speculative_output_limits r;
    r.total   = (int32_t) (total   < (int64_t) n_batch ? total   : (int64_t) n_batch);
    r.per_seq = (int32_t) (per_seq < (int64_t) n_batch ? per_seq : (int64_t) n_batch);
    return r;
}

struct llama_context_params common_base_params_to_speculative(const struct common_params * params) {
    struct llama_context_params cp = common_context_params_to_llama(params);
    const struct common_params_speculative_draft * d = &params->speculative.draft;
    if (d->n_ctx > 0) {
        cp.n_ctx = (uint32_t) d->n_ctx;
    }
    if (d->cpuparams.n_threads > 0) {
        cp.n_threads = d->cpuparams.n_threads;
    }
    if (d->cpuparams_batch.n_threads > 0) {
        cp.n_threads_batch = d->cpuparams_batch.n_threads;
    }
    cp.type_k = d->cache_type_k;
    cp.type_v = d->cache_type_v;
    // a draft step samples one token per sequence
    cp.n_outputs_max         = (uint32_t) (params->n_parallel > 0 ? params->n_parallel : 1);
    cp.n_outputs_max_per_seq = 1;
    return cp;
}

static bool spec_has_type(const struct common_params_speculative * p, enum common_speculative_type t) {
    for (int32_t i = 0; i < p->n_types && i < COMMON_SPEC_TYPES_MAX; i++) {
        if (p->types[i] == t) {
            return true;
        }
    }
    return false;
}

// llama.cpp's fixed draft length of the ngram-cache type
#define SPEC_NGRAM_CACHE_N_DRAFT 8
// entries of the shared ngram-mod table (llama.cpp: 4M)
#define SPEC_NGRAM_MOD_SIZE (4u * 1024u * 1024u)

int32_t common_speculative_n_max(const struct common_params_speculative * params) {
    // the largest draft any enabled type can propose
    int32_t n_max = 0;
    for (int32_t i = 0; i < params->n_types && i < COMMON_SPEC_TYPES_MAX; i++) {
        int32_t n = 0;
        switch (params->types[i]) {
            case COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE:
            case COMMON_SPECULATIVE_TYPE_DRAFT_EAGLE3:
            case COMMON_SPECULATIVE_TYPE_DRAFT_MTP:
                n = params->draft.n_max;
                break;
            case COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE:
                n = params->ngram_simple.size_m;
                break;
            case COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K:
                n = params->ngram_map_k.size_m;
                break;
            case COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V:
                n = params->ngram_map_k4v.size_m;
                break;
            case COMMON_SPECULATIVE_TYPE_NGRAM_MOD:
                n = params->ngram_mod.n_max;
                break;
            case COMMON_SPECULATIVE_TYPE_NGRAM_CACHE:
                n = SPEC_NGRAM_CACHE_N_DRAFT;
                break;
            default:
                break;
        }
        if (n > n_max) {
            n_max = n;
        }
    }
    return n_max;
}

bool common_speculative_are_compatible(const struct llama_context * ctx_tgt, const struct llama_context * ctx_dft) {
    const struct llama_vocab * vt = llama_model_get_vocab(llama_get_model(ctx_tgt));
    const struct llama_vocab * vd = llama_model_get_vocab(llama_get_model(ctx_dft));
    if (llama_vocab_type(vt) != llama_vocab_type(vd)) {
        LOG_ERR("%s: draft model vocab type differs from the target's\n", __func__);
        return false;
    }
    if (llama_vocab_get_add_bos(vt) != llama_vocab_get_add_bos(vd) ||
        (llama_vocab_get_add_bos(vt) && llama_vocab_bos(vt) != llama_vocab_bos(vd)) ||
        llama_vocab_eos(vt) != llama_vocab_eos(vd)) {
        LOG_ERR("%s: draft model special tokens (BOS/EOS) differ from the target's\n", __func__);
        return false;
    }
    const int32_t nt = llama_vocab_n_tokens(vt);
    const int32_t nd = llama_vocab_n_tokens(vd);
    const int32_t diff = nt > nd ? nt - nd : nd - nt;
    if (diff > SPEC_VOCAB_MAX_SIZE_DIFFERENCE) {
        LOG_ERR("%s: draft vocab size %d differs from the target's %d by more than %d\n", __func__, nd, nt,
                SPEC_VOCAB_MAX_SIZE_DIFFERENCE);
        return false;
    }
    const int32_t n = nt < nd ? nt : nd;
    for (int32_t i = SPEC_VOCAB_CHECK_START_TOKEN_ID; i < n; i++) {
        const char * a = llama_vocab_get_text(vt, i);
        const char * b = llama_vocab_get_text(vd, i);
        if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0)) {
            LOG_ERR("%s: token %d differs between target and draft vocab\n", __func__, i);
            return false;
        }
    }
    return true;
}

struct common_speculative {
    struct common_params_speculative params; // shallow: only the scalar members are used
    struct llama_context * ctx_tgt;
    struct llama_context * ctx_dft;  // NULL: n-gram drafting only

    struct llama_batch batch;        // draft-model batch
    int32_t n_batch;
    // --spec-draft-backend-sampling: the draft's top_k chain runs in the draft context's graph (seq 0); NULL when
    // sampling on the CPU (flag off, or the context refused the chain)
    struct llama_sampler * dft_chain;

    llama_token * prompt_dft;        // tokens whose KV the draft context holds (seq 0, positions 0..)
    int32_t n_prompt_dft;
    int32_t cap_prompt_dft;

    int32_t n_max;                   // common_speculative_n_max(params): the room callers give gen_draft
    bool    begun;                   // begin() ran for the current history
    int32_t n_hist_last;             // history length at the last gen_draft (a shorter one starts over)
    enum common_speculative_type last_type; // which type proposed the last draft (NONE: none)

    // ngram-map-k, ngram-map-k4v
    bool has_map_k;
    bool has_map_k4v;
    struct common_ngram_map map_k;
    struct common_ngram_map map_k4v;

    // ngram-mod (llama.cpp shares the table between sequences; here there is one)
    struct common_ngram_mod * mod;
    size_t  mod_i_last;              // history positions below this are in the table
    size_t  mod_n_draft_last;
    int32_t mod_n_low;               // consecutive drafts with less than a quarter accepted

    // ngram-cache
    struct common_ngram_cache * nc_context;
    struct common_ngram_cache * nc_dynamic;
    struct common_ngram_cache * nc_static;
    int64_t nc_n_tokens;             // history tokens already counted in nc_context
    llama_token * nc_inp;            // scratch: history + id_last
    int32_t cap_nc_inp;
};

void common_speculative_free(struct common_speculative * spec) {
    if (!spec) {
        return;
    }
    if (spec->ctx_dft) {
        llama_batch_free(spec->batch);
    }
    if (spec->dft_chain) {
        // detach first: the draft context outlives this state and must not keep a freed sampler
        llama_set_sampler(spec->ctx_dft, 0, NULL);
        llama_sampler_free(spec->dft_chain);
    }
    if (spec->has_map_k) {
        common_ngram_map_free(&spec->map_k);
    }
    if (spec->has_map_k4v) {
        common_ngram_map_free(&spec->map_k4v);
    }
    common_ngram_mod_free(spec->mod);
    common_ngram_cache_free(spec->nc_context);
    common_ngram_cache_free(spec->nc_dynamic);
    common_ngram_cache_free(spec->nc_static);
    free(spec->nc_inp);
    free(spec->prompt_dft);
    free(spec);
}

bool common_speculative_draft_backend(const struct common_speculative * spec) {
    return spec && spec->dft_chain != NULL;
}

static bool spec_type_supported(enum common_speculative_type t) {
    switch (t) {
        case COMMON_SPECULATIVE_TYPE_NONE:
        case COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE:
        case COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE:
        case COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K:
        case COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V:
        case COMMON_SPECULATIVE_TYPE_NGRAM_MOD:
        case COMMON_SPECULATIVE_TYPE_NGRAM_CACHE:
            return true;
        default:
            return false;
    }
}

static bool spec_init_ngram_cache(struct common_speculative * s, const struct common_params_speculative * params) {
    s->nc_context = common_ngram_cache_init();
    if (!s->nc_context) {
        return false;
    }
    const char * path_static  = params->lookup_cache_static;
    const char * path_dynamic = params->lookup_cache_dynamic;
    s->nc_static  = path_static && path_static[0] ? common_ngram_cache_load(path_static) : common_ngram_cache_init();
    if (!s->nc_static) {
        LOG_ERR("common_speculative_init: failed to load the static lookup cache '%s'\n", path_static);
        return false;
    }
    s->nc_dynamic = path_dynamic && path_dynamic[0] ? common_ngram_cache_load(path_dynamic) : common_ngram_cache_init();
    if (!s->nc_dynamic) {
        LOG_ERR("common_speculative_init: failed to load the dynamic lookup cache '%s'\n", path_dynamic);
        return false;
    }
    return true;
}

// attaches the draft chain to the draft context (seq 0); on refusal drafting stays on the CPU (same tokens)
static void spec_draft_backend_init(struct common_speculative * s) {
    struct llama_sampler * chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    struct llama_sampler * top_k = chain ? llama_sampler_init_top_k(SPEC_DRAFT_TOP_K) : NULL;
    if (!top_k) {
        llama_sampler_free(chain);
        LOG_WRN("common_speculative: out of memory for the draft backend sampler; sampling on the CPU\n");
        return;
    }
    llama_sampler_chain_add(chain, top_k);
    if (!llama_set_sampler(s->ctx_dft, 0, chain)) {
        LOG_WRN("common_speculative: backend offload of the draft sampler failed; sampling on the CPU\n");
        llama_sampler_free(chain);
        return;
    }
    s->dft_chain = chain;
}

struct common_speculative * common_speculative_init(const struct common_params_speculative * params,
                                                    struct llama_context * ctx_tgt,
                                                    struct llama_context * ctx_dft) {
    if (!params || !ctx_tgt) {
        LOG_ERR("%s: missing parameters or target context\n", __func__);
        return NULL;
    }
    for (int32_t i = 0; i < params->n_types && i < COMMON_SPEC_TYPES_MAX; i++) {
        if (!spec_type_supported(params->types[i])) {
            LOG_ERR("%s: speculative type '%s' is not supported (supported: draft-simple, ngram-simple, ngram-map-k, "
                    "ngram-map-k4v, ngram-mod, ngram-cache)\n", __func__, common_speculative_type_to_str(params->types[i]));
            return NULL;
        }
    }
    const bool want_draft = spec_has_type(params, COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE);
    const bool want_ngram = spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE) ||
                            spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K) ||
                            spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V) ||
                            spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_MOD) ||
                            spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_CACHE);
    if (want_draft && !ctx_dft) {
        LOG_ERR("%s: draft-simple needs a draft model (-md)\n", __func__);
        return NULL;
    }
    if (!want_draft && !want_ngram) {
        LOG_ERR("%s: no speculative type enabled (--spec-type)\n", __func__);
        return NULL;
    }
    if (want_draft && params->draft.n_max < 1) {
        LOG_ERR("%s: --spec-draft-n-max must be at least 1 (got %d)\n", __func__, params->draft.n_max);
        return NULL;
    }
    if (spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_MOD) &&
        (params->ngram_mod.n_match < 1 || params->ngram_mod.n_max < 1 || params->ngram_mod.n_match > UINT16_MAX)) {
        LOG_ERR("%s: ngram-mod needs --spec-ngram-mod-n-match >= 1 and --spec-ngram-mod-n-max >= 1\n", __func__);
        return NULL;
    }
    if (want_draft && !common_speculative_are_compatible(ctx_tgt, ctx_dft)) {
        return NULL;
    }
    struct common_speculative * s = calloc(1, sizeof(*s));
    if (!s) {
        LOG_ERR("%s: out of memory\n", __func__);
        return NULL;
    }
    s->params    = *params;
    s->ctx_tgt   = ctx_tgt;
    s->ctx_dft   = want_draft ? ctx_dft : NULL;
    s->n_max     = common_speculative_n_max(params);
    s->last_type = COMMON_SPECULATIVE_TYPE_NONE;
    if (s->ctx_dft) {
        s->n_batch = (int32_t) llama_n_batch(ctx_dft);
        s->batch   = llama_batch_init(s->n_batch, 0, 1);
        if (!s->batch.token) {
            LOG_ERR("%s: out of memory for the draft batch\n", __func__);
            free(s);
            return NULL;
        }
        if (params->draft.backend_sampling) {
            spec_draft_backend_init(s);
        }
    }
    if (spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K)) {
        common_ngram_map_init(&s->map_k, params->ngram_map_k.size_n, params->ngram_map_k.size_m, true,
                              params->ngram_map_k.min_hits);
        s->has_map_k = true;
    }
    if (spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V)) {
        common_ngram_map_init(&s->map_k4v, params->ngram_map_k4v.size_n, params->ngram_map_k4v.size_m, false,
                              params->ngram_map_k4v.min_hits);
        s->has_map_k4v = true;
    }
    if (spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_MOD)) {
        s->mod = common_ngram_mod_init((uint16_t) params->ngram_mod.n_match, SPEC_NGRAM_MOD_SIZE);
        if (!s->mod) {
            LOG_ERR("%s: out of memory for the ngram-mod table\n", __func__);
            common_speculative_free(s);
            return NULL;
        }
        if (params->ngram_mod.n_match < 16) {
            LOG_WRN("%s: ngram_mod n_match=%d is too small - poor quality is possible\n", __func__,
                    params->ngram_mod.n_match);
        }
    }
    if (spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_CACHE) && !spec_init_ngram_cache(s, params)) {
        common_speculative_free(s);
        return NULL;
    }
    return s;
}

static bool spec_prompt_reserve(struct common_speculative * s, int32_t n) {
    if (!common_tokens_reserve(&s->prompt_dft, &s->cap_prompt_dft, n)) {
        LOG_ERR("common_speculative: out of memory\n");
        return false;
    }
    return true;
}

// the best of n logits (the lowest index among equals) and its probability among the SPEC_DRAFT_TOP_K best:
// llama.cpp's draft chain keeps ten candidates and renormalizes over them
static int32_t spec_top_k_best(const float * logits, int32_t n, float * prob) {
    float top[SPEC_DRAFT_TOP_K]; // the largest logits seen so far, descending
    int32_t n_top = 0;
    int32_t best = 0;
    for (int32_t i = 0; i < n; i++) {
        const float v = logits[i];
        if (v > logits[best]) {
            best = i;
        }
        if (n_top == SPEC_DRAFT_TOP_K && !(v > top[n_top - 1])) {
            continue;
        }
        int32_t j = n_top < SPEC_DRAFT_TOP_K ? n_top++ : n_top - 1;
        while (j > 0 && top[j - 1] < v) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = v;
    }
    double sum = 0.0;
    for (int32_t k = 0; k < n_top; k++) {
        sum += exp((double) top[k] - (double) logits[best]);
    }
    *prob = sum > 0.0 ? (float) (1.0 / sum) : 0.0f;
    return best;
}

// the draft token of output idx of the draft context and its probability (see spec_top_k_best); with the backend
// chain the context already holds the ten candidates and their logits
static llama_token spec_draft_pick(const struct common_speculative * s, int32_t idx, float * prob) {
    struct llama_context * ctx = s->ctx_dft;
    if (s->dft_chain) {
        const float * logits = llama_get_sampled_logits_ith(ctx, idx);
        const uint32_t n = llama_get_sampled_logits_count_ith(ctx, idx);
        const llama_token * cand = llama_get_sampled_candidates_ith(ctx, idx);
        if (logits && n > 0) {
            // the candidates come in no particular order: among equal logits take the lowest token id, as the
            // CPU path does
            int32_t best = -1;
            for (uint32_t i = 0; i < n; i++) {
                const llama_token id = cand ? cand[i] : (llama_token) i;
                if (best < 0 || logits[i] > logits[best] ||
                    (logits[i] == logits[best] && id < (cand ? cand[best] : (llama_token) best))) {
                    best = (int32_t) i;
                }
            }
            double sum = 0.0;
            for (uint32_t i = 0; i < n; i++) {
                sum += exp((double) logits[i] - (double) logits[best]);
            }
            *prob = (float) (1.0 / sum);
            return cand ? cand[best] : (llama_token) best;
        }
        // nothing sampled for this output (should not happen): fall through to the full logits
    }
    const float * logits = llama_get_logits_ith(ctx, idx);
    if (!logits) {
        return LLAMA_TOKEN_NULL;
    }
    const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(ctx)));
    return spec_top_k_best(logits, n_vocab, prob);
}

static int32_t spec_draft_model(struct common_speculative * s, const llama_token * prompt, int32_t n_prompt,
                                llama_token id_last, llama_token * out, int32_t n_max) {
    struct llama_context * ctx = s->ctx_dft;
    // the draft KV keeps the longest prefix shared with the target's tokens; the rest is re-decoded
    int32_t reuse = 0;
    while (reuse < n_prompt && reuse < s->n_prompt_dft && s->prompt_dft[reuse] == prompt[reuse]) {
        reuse++;
    }
    if (!llama_memory_seq_rm(llama_get_memory(ctx), 0, reuse, -1)) {
        // a memory that cannot drop a tail: start over
        llama_memory_clear(llama_get_memory(ctx), true);
        reuse = 0;
    }
    s->n_prompt_dft = reuse;
    if (!spec_prompt_reserve(s, n_prompt + 1 + n_max)) {
        return 0;
    }
    // prompt tail + id_last, in chunks of n_batch; logits only for id_last
    int32_t pos = reuse;
    const int32_t n_total = n_prompt + 1;
    while (pos < n_total) {
        common_batch_clear(&s->batch);
        while (pos < n_total && s->batch.n_tokens < s->n_batch) {
            const llama_token t = pos < n_prompt ? prompt[pos] : id_last;
            const llama_seq_id seq = 0;
            common_batch_add(&s->batch, t, pos, &seq, 1, pos == n_total - 1);
            s->prompt_dft[pos] = t;
            pos++;
        }
        if (llama_decode(ctx, s->batch) != 0) {
            LOG_ERR("common_speculative: draft decode failed\n");
            llama_memory_seq_rm(llama_get_memory(ctx), 0, s->n_prompt_dft, -1);
            return 0;
        }
        s->n_prompt_dft = pos;
    }
    int32_t n = 0;
    int32_t idx = s->batch.n_tokens - 1;
    while (n < n_max) {
        float p = 0.0f;
        const llama_token t = spec_draft_pick(s, idx, &p);
        // an unlikely draft token would almost surely be rejected: stop drafting there
        if (t == LLAMA_TOKEN_NULL || p < s->params.draft.p_min) {
            break;
        }
        out[n++] = t;
        if (n == n_max || llama_vocab_is_eog(llama_model_get_vocab(llama_get_model(ctx)), t)) {
            break;
        }
        common_batch_clear(&s->batch);
        const llama_seq_id seq = 0;
        common_batch_add(&s->batch, t, s->n_prompt_dft, &seq, 1, true);
        if (llama_decode(ctx, s->batch) != 0) {
            break;
        }
        s->prompt_dft[s->n_prompt_dft++] = t;
        idx = 0;
    }
    return n;
}

// the most recent earlier occurrence of the last size_n tokens; proposes what followed it
static int32_t spec_ngram(const struct common_speculative * s, const llama_token * prompt, int32_t n_prompt,
                          llama_token id_last, llama_token * out, int32_t n_max) {
    const int32_t size_n = s->params.ngram_simple.size_n > 0 ? s->params.ngram_simple.size_n : 1;
    const int32_t n = n_prompt + 1;
    if (n <= size_n) {
        return 0;
    }
#define TOK(i) ((i) < n_prompt ? prompt[(i)] : id_last)
    const int32_t key = n - size_n;
    for (int32_t start = key - 1; start >= 0; start--) {
        int32_t k = 0;
        while (k < size_n && TOK(start + k) == TOK(key + k)) {
            k++;
        }
        if (k < size_n) {
            continue;
        }
        int32_t m = 0;
        int32_t lim = s->params.ngram_simple.size_m > 0 ? s->params.ngram_simple.size_m : n_max;
        if (lim > n_max) {
            lim = n_max;
        }
        while (m < lim && start + size_n + m < n) {
            out[m] = TOK(start + size_n + m);
            m++;
        }
        return m;
    }
#undef TOK
    return 0;
}

// scratch room for n tokens in s->nc_inp
static bool spec_scratch(struct common_speculative * s, int32_t n) {
    if (!common_tokens_reserve(&s->nc_inp, &s->cap_nc_inp, n)) {
        LOG_ERR("common_speculative: out of memory\n");
        return false;
    }
    return true;
}

static void spec_mod_begin(struct common_speculative * s, const llama_token * prompt, int32_t n_prompt) {
    s->mod_i_last       = 0;
    s->mod_n_draft_last = 0;
    const size_t n = common_ngram_mod_get_n(s->mod);
    if ((size_t) n_prompt < n) {
        return;
    }
    for (size_t i = 0; i + n < (size_t) n_prompt; i++) {
        common_ngram_mod_add(s->mod, prompt + i);
    }
    s->mod_i_last = (size_t) n_prompt - n;
    // a table that is filling up mostly holds collisions: llama.cpp starts it over past a quarter
    const double f = (double) common_ngram_mod_get_used(s->mod) / (double) common_ngram_mod_size(s->mod);
    if (f > 0.25) {
        LOG_WRN("common_speculative: ngram_mod occupancy %.2f exceeds threshold (0.25) - resetting\n", f);
        common_ngram_mod_reset(s->mod);
        s->mod_i_last = 0;
    }
}

void common_speculative_begin(struct common_speculative * spec, const llama_token * prompt, int32_t n_prompt) {
    if (!spec || n_prompt < 0 || (n_prompt > 0 && !prompt)) {
        return;
    }
    spec->begun       = true;
    spec->n_hist_last = n_prompt;
    spec->last_type   = COMMON_SPECULATIVE_TYPE_NONE;
    if (spec->has_map_k) {
        common_ngram_map_begin(&spec->map_k, prompt, (size_t) n_prompt);
    }
    if (spec->has_map_k4v) {
        common_ngram_map_begin(&spec->map_k4v, prompt, (size_t) n_prompt);
    }
    if (spec->mod) {
        spec_mod_begin(spec, prompt, n_prompt);
    }
    if (spec->nc_context && spec->nc_n_tokens > 0) {
        // the context cache describes the old history: start it over
        struct common_ngram_cache * fresh = common_ngram_cache_init();
        if (fresh) {
            common_ngram_cache_free(spec->nc_context);
            spec->nc_context  = fresh;
            spec->nc_n_tokens = 0;
        }
    }
}

static int32_t spec_ngram_mod(struct common_speculative * s, const llama_token * prompt, int32_t n_prompt,
                              llama_token id_last, llama_token * out, int32_t n_max) {
    s->mod_n_draft_last = 0;
    const size_t n = common_ngram_mod_get_n(s->mod);
    const size_t cur_len = (size_t) n_prompt;
    if (cur_len < n) {
        return 0;
    }
    // new n-grams go into the table in chunks of 32 tokens (llama.cpp)
    if (s->mod_i_last + 32 < cur_len) {
        for (size_t i = s->mod_i_last; i + n < cur_len; i++) {
            common_ngram_mod_add(s->mod, prompt + i);
        }
        s->mod_i_last = cur_len - n;
    }
    const int32_t lim = s->params.ngram_mod.n_max < n_max ? s->params.ngram_mod.n_max : n_max;
    if (lim <= 0 || !spec_scratch(s, (int32_t) n + lim)) {
        return 0;
    }
    llama_token * buf = s->nc_inp;
    memcpy(buf, prompt + cur_len - n + 1, (n - 1) * sizeof(*buf));
    buf[n - 1] = id_last;
    int32_t m = 0;
    for (; m < lim; m++) {
        const llama_token t = common_ngram_mod_get(s->mod, buf + m);
        if (t == COMMON_NGRAM_MOD_EMPTY) {
            if (m < s->params.ngram_mod.n_min) {
                return 0;
            }
            break;
        }
        buf[n + (size_t) m] = t;
    }
    memcpy(out, buf + n, (size_t) m * sizeof(*out));
    s->mod_n_draft_last = (size_t) m;
    return m;
}

static int32_t spec_ngram_cache(struct common_speculative * s, const llama_token * prompt, int32_t n_prompt,
                                llama_token id_last, llama_token * out, int32_t n_max) {
    const int32_t n_hist = n_prompt + 1;
    if (!spec_scratch(s, n_hist)) {
        return 0;
    }
    if (n_prompt > 0) {
        memcpy(s->nc_inp, prompt, (size_t) n_prompt * sizeof(*prompt));
    }
    s->nc_inp[n_prompt] = id_last;
    // the history only grows between begins: count the n-grams that end in the new tokens
    if (s->nc_n_tokens < n_hist) {
        if (!common_ngram_cache_update(s->nc_context, LLAMA_NGRAM_MIN, LLAMA_NGRAM_MAX, s->nc_inp, n_hist,
                                       n_hist - s->nc_n_tokens, false)) {
            return 0;
        }
        s->nc_n_tokens = n_hist;
    }
    llama_token draft[1 + SPEC_NGRAM_CACHE_N_DRAFT];
    draft[0] = id_last;
    const int32_t lim = n_max < SPEC_NGRAM_CACHE_N_DRAFT ? n_max : SPEC_NGRAM_CACHE_N_DRAFT;
    const int len = common_ngram_cache_draft(s->nc_inp, n_hist, draft, lim, LLAMA_NGRAM_MIN, LLAMA_NGRAM_MAX,
                                             s->nc_context, s->nc_dynamic, s->nc_static);
    memcpy(out, draft + 1, (size_t) (len - 1) * sizeof(*out));
    return len - 1;
}

int32_t common_speculative_gen_draft(struct common_speculative * spec, const llama_token * prompt_tgt,
                                     int32_t n_prompt, llama_token id_last, llama_token * out) {
    if (!spec || (n_prompt > 0 && !prompt_tgt) || !out || n_prompt < 0) {
        return 0;
    }
    if (!spec->begun || n_prompt < spec->n_hist_last) {
        common_speculative_begin(spec, prompt_tgt, n_prompt);
    }
    spec->n_hist_last = n_prompt;
    spec->last_type   = COMMON_SPECULATIVE_TYPE_NONE;

    const int32_t n_max = spec->n_max;
    // llama.cpp's precedence: the draftless types first, the draft model last; the first proposal wins
    static const enum common_speculative_type order[] = {
        COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE, COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K, COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V,
        COMMON_SPECULATIVE_TYPE_NGRAM_MOD,    COMMON_SPECULATIVE_TYPE_NGRAM_CACHE, COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE,
    };
    int32_t n = 0;
    for (size_t k = 0; k < sizeof(order) / sizeof(order[0]) && n == 0; k++) {
        const enum common_speculative_type t = order[k];
        if (!spec_has_type(&spec->params, t)) {
            continue;
        }
        switch (t) {
            case COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE:
                n = spec_ngram(spec, prompt_tgt, n_prompt, id_last, out, n_max);
                break;
            case COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K:
                n = common_ngram_map_draft(&spec->map_k, prompt_tgt, (size_t) n_prompt, id_last, out, n_max);
                break;
            case COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V:
                n = common_ngram_map_draft(&spec->map_k4v, prompt_tgt, (size_t) n_prompt, id_last, out, n_max);
                break;
            case COMMON_SPECULATIVE_TYPE_NGRAM_MOD:
                n = spec_ngram_mod(spec, prompt_tgt, n_prompt, id_last, out, n_max);
                break;
            case COMMON_SPECULATIVE_TYPE_NGRAM_CACHE:
                n = spec_ngram_cache(spec, prompt_tgt, n_prompt, id_last, out, n_max);
                break;
            case COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE:
                n = spec_draft_model(spec, prompt_tgt, n_prompt, id_last, out,
                                     spec->params.draft.n_max < n_max ? spec->params.draft.n_max : n_max);
                // n_min applies to the draft model only (llama.cpp)
                if (n < spec->params.draft.n_min) {
                    n = 0;
                }
                break;
            default:
                break;
        }
        if (n > 0) {
            spec->last_type = t;
        }
    }
    return n;
}

void common_speculative_accept(struct common_speculative * spec, int32_t n_accepted) {
    if (!spec || n_accepted < 0) {
        return;
    }
    // only the type that proposed the draft learns from it
    switch (spec->last_type) {
        case COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K:
            common_ngram_map_accept(&spec->map_k, (uint16_t) (n_accepted > UINT16_MAX ? UINT16_MAX : n_accepted));
            break;
        case COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V:
            common_ngram_map_accept(&spec->map_k4v, (uint16_t) (n_accepted > UINT16_MAX ? UINT16_MAX : n_accepted));
            break;
        case COMMON_SPECULATIVE_TYPE_NGRAM_MOD:
            if (spec->mod_n_draft_last > 0) {
                const double f_acc = (double) n_accepted / (double) spec->mod_n_draft_last;
                if (f_acc < 0.25) {
                    // five poor drafts in a row: the table has gone stale, start it over
                    if (++spec->mod_n_low >= 5) {
                        common_ngram_mod_reset(spec->mod);
                        spec->mod_n_low  = 0;
                        spec->mod_i_last = 0;
                    }
                } else {
                    spec->mod_n_low = 0;
                }
            }
            break;
        default:
            break;
    }
    spec->last_type = COMMON_SPECULATIVE_TYPE_NONE;
}

size_t common_speculative_verify(struct llama_context * ctx, struct common_sampler * smpl, struct llama_batch * batch,
                                 llama_seq_id seq, llama_pos n_past, llama_token id_last, const llama_token * draft,
                                 int32_t n_draft, const int * idxs, llama_token * ids) {
    common_batch_clear(batch);
    common_batch_add(batch, id_last, n_past, &seq, 1, true);
    for (int32_t i = 0; i < n_draft; i++) {
        common_batch_add(batch, draft[i], n_past + 1 + i, &seq, 1, true);
    }
    if (llama_decode(ctx, *batch) != 0) {
        LOG_ERR("%s: target decode failed\n", __func__);
        return 0;
    }
    const size_t n_ids = common_sampler_sample_and_accept_n(smpl, ctx, idxs, draft, (size_t) n_draft, ids, true);
    if (n_ids == 0) {
        LOG_ERR("%s: sampling failed\n", __func__);
        return 0;
    }
    // id_last and the accepted drafts stay in the KV cache; the rejected draft positions go
    llama_memory_seq_rm(llama_get_memory(ctx), seq, n_past + (llama_pos) n_ids, -1);
    return n_ids;
}
