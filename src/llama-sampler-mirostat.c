// Samplers that select a token with std::discrete_distribution draws: mirostat v1 and v2, adaptive-p.

#include "llama-sampler.h"

#include "llama-impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

//
// what mirostat v1 and v2 share: the target surprise tau, the learning rate eta, the running bound mu and the
// rng; both sample from the truncated candidates and move mu by the observed surprise's error
//

struct mirostat_state {
    uint32_t seed;
    uint32_t seed_cur;

    float    tau;
    float    eta;

    float    mu;

    struct llama_mt19937 rng;
};

static void mirostat_state_reset(struct mirostat_state * st) {
    st->mu = 2.0f * st->tau;
    st->seed_cur = llama_sampler_rng_seed(st->seed);
    llama_mt19937_seed(&st->rng, st->seed_cur);
}

// a clone continues where the original is: same seed, mu and rng position
static void mirostat_state_copy_progress(struct mirostat_state * dst, const struct mirostat_state * src) {
    dst->seed_cur = src->seed_cur;
    dst->mu       = src->mu;
    dst->rng      = src->rng;
}

// renormalizes the truncated candidates, samples one and updates mu from its surprise
static void mirostat_select(struct mirostat_state * st, llama_token_data_array * cur_p) {
    llama_sampler_softmax_impl(cur_p, true);

    const int idx = llama_sampler_sample_discrete(cur_p, &st->rng);
    if (idx < 0) {
        cur_p->selected = -1;
        return;
    }
    cur_p->selected = idx;

    const float observed_surprise = -log2f(cur_p->data[idx].p);
    const float e = observed_surprise - st->tau;

    st->mu = st->mu - st->eta * e;
}

//
// mirostat
//

struct sampler_mirostat {
    struct mirostat_state st;
    int32_t n_vocab;
    int32_t m;
};

static const char * mirostat_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "mirostat";
}

static void mirostat_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct sampler_mirostat * ctx = smpl->ctx;

    if (cur_p->size == 0) {
        cur_p->selected = -1;
        return;
    }

    llama_sampler_softmax_impl(cur_p, true);

    // estimate s_hat (Zipf exponent) from the m most probable tokens
    float sum_ti_bi = 0.0f;
    float sum_ti_sq = 0.0f;
    // m <= 0 wraps to "all" in llama.cpp's size_t arithmetic
    const size_t n_est = ctx->m > 0 ? (size_t) ctx->m - 1 : SIZE_MAX;
    for (size_t i = 0; i < n_est && i + 1 < cur_p->size; ++i) {
        const float t_i = logf((float) (i + 2) / (float) (i + 1));
        const float b_i = logf(cur_p->data[i].p / cur_p->data[i + 1].p);
        sum_ti_bi += t_i * b_i;
        sum_ti_sq += t_i * t_i;
    }
    const float s_hat = sum_ti_bi / sum_ti_sq;

    // k from s_hat and the current mu
    const float epsilon_hat = s_hat - 1;
    const float k = powf((epsilon_hat * powf(2, ctx->st.mu)) / (1 - powf((float) ctx->n_vocab, -epsilon_hat)),
                         1 / s_hat);

    // int(k) of a huge or undefined k is undefined in C: such k keep everything
    int32_t ki = (isfinite(k) && k < (float) INT32_MAX) ? (int32_t) k : INT32_MAX;
    llama_sampler_top_k_impl(cur_p, ki > 1 ? ki : 1);

    mirostat_select(&ctx->st, cur_p);
}

static void mirostat_reset(struct llama_sampler * smpl) {
    struct sampler_mirostat * ctx = smpl->ctx;
    mirostat_state_reset(&ctx->st);
}

static struct llama_sampler * mirostat_clone(const struct llama_sampler * smpl) {
    const struct sampler_mirostat * ctx = smpl->ctx;
    struct llama_sampler * result =
        llama_sampler_init_mirostat(ctx->n_vocab, ctx->st.seed, ctx->st.tau, ctx->st.eta, ctx->m);
    if (result) {
        struct sampler_mirostat * r = result->ctx;
        mirostat_state_copy_progress(&r->st, &ctx->st);
    }
    return result;
}

static struct llama_sampler_i llama_sampler_mirostat_i = {
    /* .name              = */ mirostat_name,
    /* .accept            = */ NULL,
    /* .apply             = */ mirostat_apply,
    /* .reset             = */ mirostat_reset,
    /* .clone             = */ mirostat_clone,
    /* .free              = */ llama_sampler_free_ctx,
    /* .backend_init      = */ NULL,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ NULL,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ NULL,
};

struct llama_sampler * llama_sampler_init_mirostat(int32_t n_vocab, uint32_t seed, float tau, float eta, int32_t m) {
    struct sampler_mirostat * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->n_vocab  = n_vocab;
        ctx->st.seed  = seed;
        ctx->st.tau   = tau;
        ctx->st.eta   = eta;
        ctx->m        = m;
        mirostat_reset(&(struct llama_sampler){ NULL, ctx });
    }
    return llama_sampler_new_owned(&llama_sampler_mirostat_i, ctx);
}

//
// mirostat v2
//

struct sampler_mirostat_v2 {
    struct mirostat_state st;
};

static const char * mirostat_v2_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "mirostat-v2";
}

static void mirostat_v2_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct sampler_mirostat_v2 * ctx = smpl->ctx;

    if (cur_p->size == 0) {
        cur_p->selected = -1;
        return;
    }

    llama_sampler_softmax_impl(cur_p, true);

    // drop everything from the first token whose surprise exceeds mu (keep at least one)
    size_t n = 0;
    while (n < cur_p->size && !(-log2f(cur_p->data[n].p) > ctx->st.mu)) {
        n++;
    }
    cur_p->size = n > 0 ? n : 1;

    mirostat_select(&ctx->st, cur_p);
}

static void mirostat_v2_reset(struct llama_sampler * smpl) {
    struct sampler_mirostat_v2 * ctx = smpl->ctx;
    mirostat_state_reset(&ctx->st);
}

static struct llama_sampler * mirostat_v2_clone(const struct llama_sampler * smpl) {
    const struct sampler_mirostat_v2 * ctx = smpl->ctx;
    struct llama_sampler * result = llama_sampler_init_mirostat_v2(ctx->st.seed, ctx->st.tau, ctx->st.eta);
    if (result) {
        struct sampler_mirostat_v2 * r = result->ctx;
        mirostat_state_copy_progress(&r->st, &ctx->st);
    }
    return result;
}

static struct llama_sampler_i llama_sampler_mirostat_v2_i = {
    /* .name              = */ mirostat_v2_name,
    /* .accept            = */ NULL,
    /* .apply             = */ mirostat_v2_apply,
    /* .reset             = */ mirostat_v2_reset,
    /* .clone             = */ mirostat_v2_clone,
    /* .free              = */ llama_sampler_free_ctx,
    /* .backend_init      = */ NULL,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ NULL,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ NULL,
};

struct llama_sampler * llama_sampler_init_mirostat_v2(uint32_t seed, float tau, float eta) {
    struct sampler_mirostat_v2 * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->st.seed = seed;
        ctx->st.tau  = tau;
        ctx->st.eta  = eta;
        mirostat_v2_reset(&(struct llama_sampler){ NULL, ctx });
    }
    return llama_sampler_new_owned(&llama_sampler_mirostat_v2_i, ctx);
}

//
// adaptive-p
//

struct sampler_adaptive_p {
    float    target;       // negative = disabled (plain sampling from the distribution)
    float    decay;        // in [0, 0.99]
    uint32_t seed;
    uint32_t seed_cur;
    struct llama_mt19937 rng;

    float    weighted_sum; // sum of p_i * decay^i over the selected tokens' original probabilities
    float    total_weight; // sum of decay^i

    float *  original_probs; // [cap_probs] probabilities before the transform, for the EMA update in accept
    size_t   cap_probs;

    llama_token pending_token_id;
    int32_t     pending_token_idx;
};

// shape of the transform: peak logit at the target, quadratic near it, linear further away
#define ADAPTIVE_P_WIDTH     0.3f
#define ADAPTIVE_P_PEAK      5.0f
#define ADAPTIVE_P_SHARPNESS 10.0f

static const char * adaptive_p_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "adaptive-p";
}

static float clampf(float x, float lo, float hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

static void adaptive_p_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct sampler_adaptive_p * ctx = smpl->ctx;

    if (cur_p->size == 0) {
        cur_p->selected = -1;
        return;
    }

    llama_sampler_softmax_impl(cur_p, false);

    if (ctx->target < 0.0f) {
        const int idx = llama_sampler_sample_discrete(cur_p, &ctx->rng);
        cur_p->selected = idx;
        return;
    }

    if (ctx->cap_probs < cur_p->size) {
        float * p = realloc(ctx->original_probs, cur_p->size * sizeof(float));
        if (!p) {
            LLAMA_LOG_ERROR("%s: out of memory for %zu candidates\n", __func__, cur_p->size);
            cur_p->selected = -1;
            return;
        }
        ctx->original_probs = p;
        ctx->cap_probs      = cur_p->size;
    }
    for (size_t i = 0; i < cur_p->size; ++i) {
        ctx->original_probs[i] = cur_p->data[i].p;
    }

    const float target = clampf(ctx->target, 0.0f, 1.0f);
    const float adapted_target = clampf(
            ctx->total_weight == 0.0f ? target : 2.0f * target - (ctx->weighted_sum / ctx->total_weight),
            0.0f, 1.0f);

    const float inv_width = 1.0f / ADAPTIVE_P_WIDTH;
    for (size_t i = 0; i < cur_p->size; ++i) {
        if (cur_p->data[i].logit == -INFINITY) {
            continue; // masked by an earlier sampler: stays masked
        }
        const float dist = fabsf((cur_p->data[i].p - adapted_target) * inv_width);
        cur_p->data[i].logit = ADAPTIVE_P_PEAK - ADAPTIVE_P_SHARPNESS * dist * dist / (1.0f + dist);
    }

    llama_sampler_softmax_impl(cur_p, false);
    const int idx = llama_sampler_sample_discrete(cur_p, &ctx->rng);
    cur_p->selected = idx;
    if (idx < 0) {
        return;
    }

    ctx->pending_token_id  = cur_p->data[idx].id;
    ctx->pending_token_idx = idx;
}

static void adaptive_p_accept(struct llama_sampler * smpl, llama_token token) {
    struct sampler_adaptive_p * ctx = smpl->ctx;
    if (ctx->pending_token_id == token && ctx->pending_token_id != LLAMA_TOKEN_NULL && ctx->pending_token_idx >= 0 &&
            (size_t) ctx->pending_token_idx < ctx->cap_probs) {
        ctx->weighted_sum = ctx->original_probs[ctx->pending_token_idx] + ctx->decay * ctx->weighted_sum;
        ctx->total_weight = 1.0f + ctx->decay * ctx->total_weight;
    }
    ctx->pending_token_id  = LLAMA_TOKEN_NULL;
    ctx->pending_token_idx = -1;
}

static void adaptive_p_reset(struct llama_sampler * smpl) {
    struct sampler_adaptive_p * ctx = smpl->ctx;
    ctx->weighted_sum      = ctx->target / (1.0f - ctx->decay);
    ctx->total_weight      = 1.0f / (1.0f - ctx->decay);
    ctx->pending_token_id  = LLAMA_TOKEN_NULL;
    ctx->pending_token_idx = -1;
    ctx->seed_cur          = llama_sampler_rng_seed(ctx->seed);
    llama_mt19937_seed(&ctx->rng, ctx->seed_cur);
}

static struct llama_sampler * adaptive_p_clone(const struct llama_sampler * smpl) {
    const struct sampler_adaptive_p * ctx = smpl->ctx;
    struct llama_sampler * result = llama_sampler_init_adaptive_p(ctx->target, ctx->decay, ctx->seed);
    if (result) {
        struct sampler_adaptive_p * r = result->ctx;
        r->weighted_sum      = ctx->weighted_sum;
        r->total_weight      = ctx->total_weight;
        r->seed_cur          = ctx->seed_cur;
        r->rng               = ctx->rng;
        // a pending selection refers to original_probs, so they travel with it
        if (ctx->pending_token_idx >= 0 && ctx->cap_probs > 0) {
            r->original_probs = malloc(ctx->cap_probs * sizeof(float));
            if (r->original_probs) {
                memcpy(r->original_probs, ctx->original_probs, ctx->cap_probs * sizeof(float));
                r->cap_probs         = ctx->cap_probs;
                r->pending_token_id  = ctx->pending_token_id;
                r->pending_token_idx = ctx->pending_token_idx;
            }
        }
    }
    return result;
}

static void adaptive_p_free(struct llama_sampler * smpl) {
    struct sampler_adaptive_p * ctx = smpl->ctx;
    if (ctx) {
        free(ctx->original_probs);
    }
    llama_sampler_free_ctx(smpl);
}

static struct llama_sampler_i llama_sampler_adaptive_p_i = {
    /* .name              = */ adaptive_p_name,
    /* .accept            = */ adaptive_p_accept,
    /* .apply             = */ adaptive_p_apply,
    /* .reset             = */ adaptive_p_reset,
    /* .clone             = */ adaptive_p_clone,
    /* .free              = */ adaptive_p_free,
    /* .backend_init      = */ NULL,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ NULL,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ NULL,
};

struct llama_sampler * llama_sampler_init_adaptive_p(float target, float decay, uint32_t seed) {
    struct sampler_adaptive_p * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->target = target;
        ctx->decay  = clampf(decay, 0.0f, 0.99f);
        ctx->seed   = seed;
        adaptive_p_reset(&(struct llama_sampler){ NULL, ctx });
    }
    return llama_sampler_new_owned(&llama_sampler_adaptive_p_i, ctx);
}

uint32_t llama_sampler_mirostat_seed(const struct llama_sampler * smpl) {
    if (smpl->iface == &llama_sampler_mirostat_i) {
        return ((const struct sampler_mirostat *) smpl->ctx)->st.seed_cur;
    }
    if (smpl->iface == &llama_sampler_mirostat_v2_i) {
        return ((const struct sampler_mirostat_v2 *) smpl->ctx)->st.seed_cur;
    }
    return LLAMA_DEFAULT_SEED;
}
