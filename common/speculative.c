#include "speculative.h"

#include "log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// vocab sizes may differ by this much (extra special tokens appended by a fine-tune) and still count as compatible
#define SPEC_VOCAB_MAX_SIZE_DIFFERENCE 128
// the first ids are control tokens whose texts vary between conversions: llama.cpp starts comparing here
#define SPEC_VOCAB_CHECK_START_TOKEN_ID 5

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

int32_t common_speculative_n_max(const struct common_params_speculative * params) {
    bool any = false;
    for (int32_t i = 0; i < params->n_types && i < COMMON_SPEC_TYPES_MAX; i++) {
        if (params->types[i] != COMMON_SPECULATIVE_TYPE_NONE) {
            any = true;
        }
    }
    return any ? (params->draft.n_max > 0 ? params->draft.n_max : 0) : 0;
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

    llama_token * prompt_dft;        // tokens whose KV the draft context holds (seq 0, positions 0..)
    int32_t n_prompt_dft;
    int32_t cap_prompt_dft;
};

void common_speculative_free(struct common_speculative * spec) {
    if (!spec) {
        return;
    }
    if (spec->ctx_dft) {
        llama_batch_free(spec->batch);
    }
    free(spec->prompt_dft);
    free(spec);
}

struct common_speculative * common_speculative_init(const struct common_params_speculative * params,
                                                    struct llama_context * ctx_tgt,
                                                    struct llama_context * ctx_dft) {
    if (!params || !ctx_tgt) {
        LOG_ERR("%s: missing parameters or target context\n", __func__);
        return NULL;
    }
    const bool want_draft = spec_has_type(params, COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE);
    const bool want_ngram = spec_has_type(params, COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE);
    if (want_draft && !ctx_dft) {
        LOG_ERR("%s: draft-simple needs a draft model (-md)\n", __func__);
        return NULL;
    }
    if (!want_draft && !want_ngram) {
        LOG_ERR("%s: no supported speculative type enabled (draft-simple, ngram-simple)\n", __func__);
        return NULL;
    }
    if (params->draft.n_max < 1) {
        LOG_ERR("%s: --spec-draft-n-max must be at least 1 (got %d)\n", __func__, params->draft.n_max);
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
    if (s->ctx_dft) {
        s->n_batch = (int32_t) llama_n_batch(ctx_dft);
        s->batch   = llama_batch_init(s->n_batch, 0, 1);
        if (!s->batch.token) {
            LOG_ERR("%s: out of memory for the draft batch\n", __func__);
            free(s);
            return NULL;
        }
    }
    return s;
}

static bool spec_prompt_reserve(struct common_speculative * s, int32_t n) {
    if (n <= s->cap_prompt_dft) {
        return true;
    }
    int32_t cap = s->cap_prompt_dft ? s->cap_prompt_dft : 256;
    while (cap < n) {
        cap *= 2;
    }
    llama_token * p = realloc(s->prompt_dft, (size_t) cap * sizeof(*p));
    if (!p) {
        LOG_ERR("common_speculative: out of memory\n");
        return false;
    }
    s->prompt_dft     = p;
    s->cap_prompt_dft = cap;
    return true;
}

// argmax of the logits of output idx and its softmax probability
static llama_token spec_greedy(struct llama_context * ctx, int32_t idx, float * prob) {
    const float * logits = llama_get_logits_ith(ctx, idx);
    if (!logits) {
        return LLAMA_TOKEN_NULL;
    }
    const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(ctx)));
    int32_t best = 0;
    for (int32_t i = 1; i < n_vocab; i++) {
        if (logits[i] > logits[best]) {
            best = i;
        }
    }
    double sum = 0.0;
    for (int32_t i = 0; i < n_vocab; i++) {
        sum += exp((double) logits[i] - (double) logits[best]);
    }
    *prob = (float) (1.0 / sum);
    return best;
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
        const llama_token t = spec_greedy(ctx, idx, &p);
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

int32_t common_speculative_gen_draft(struct common_speculative * spec, const llama_token * prompt_tgt,
                                     int32_t n_prompt, llama_token id_last, llama_token * out) {
    if (!spec || (n_prompt > 0 && !prompt_tgt) || !out || n_prompt < 0) {
        return 0;
    }
    const int32_t n_max = spec->params.draft.n_max;
    int32_t n = 0;
    for (int32_t i = 0; i < spec->params.n_types && n == 0; i++) {
        switch (spec->params.types[i]) {
            case COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE:
                n = spec_draft_model(spec, prompt_tgt, n_prompt, id_last, out, n_max);
                break;
            case COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE:
                n = spec_ngram(spec, prompt_tgt, n_prompt, id_last, out, n_max);
                break;
            default:
                break;
        }
    }
    if (n < spec->params.draft.n_min) {
        n = 0;
    }
    return n;
}

void common_speculative_accept(struct common_speculative * spec, int32_t n_accepted) {
    // drafting re-syncs with the target's tokens on the next call, so only the prefix match matters
    (void) spec;
    (void) n_accepted;
}
