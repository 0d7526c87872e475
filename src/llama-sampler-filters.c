// Candidate filters and transforms: top-k, top-p, min-p, typical, temp, temp-ext, xtc, top-n-sigma, logit-bias.
// Numerics follow llama.cpp (see llama-sampler.c). The grammar sampler needs the vocabulary and lives in
// llama-grammar-sampler.c.

#include "llama-sampler.h"

#include "llama-impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

//
// top-k
//

struct sampler_top_k {
    int32_t k;
};

static const char * top_k_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "top-k";
}

static void top_k_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    const struct sampler_top_k * ctx = smpl->ctx;
    llama_sampler_top_k_impl(cur_p, ctx->k);
}

static struct llama_sampler * top_k_clone(const struct llama_sampler * smpl) {
    return llama_sampler_init_top_k(((const struct sampler_top_k *) smpl->ctx)->k);
}

static void top_k_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data) {
    GGML_UNUSED(gf);
    llama_sampler_backend_top_k(ctx, data, ((const struct sampler_top_k *) smpl->ctx)->k);
}

static struct llama_sampler_i llama_sampler_top_k_i = {
    /* .name              = */ top_k_name,
    /* .accept            = */ NULL,
    /* .apply             = */ top_k_apply,
    /* .reset             = */ NULL,
    /* .clone             = */ top_k_clone,
    /* .free              = */ llama_sampler_free_ctx,
    /* .backend_init      = */ llama_sampler_backend_init_default,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ top_k_backend_apply,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ llama_sampler_copy_state_none,
};

struct llama_sampler * llama_sampler_init_top_k(int32_t k) {
    if (k <= 0) {
        return llama_sampler_init_empty("?top-k");
    }
    struct sampler_top_k * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->k = k;
    }
    return llama_sampler_new_owned(&llama_sampler_top_k_i, ctx);
}

//
// top-p
//

struct sampler_top_p {
    float  p;
    size_t min_keep;

    // sorted copy of the candidates when they arrive unsorted
    llama_token_data * buf;
    size_t             cap_buf;
};

static const char * top_p_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "top-p";
}

static void top_p_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct sampler_top_p * ctx = smpl->ctx;

    if (ctx->p >= 1.0f || cur_p->size == 0) {
        return;
    }

    llama_sampler_softmax_impl(cur_p, false);

    const llama_token_data * pdata = cur_p->data;
    bool in_buf = false;

    if (!cur_p->sorted) {
        if (cur_p->size > 1024) {
            // most of the mass is usually in the first few hundred tokens: sort only the best 256 of a copy
            // first and the rest only if the running sum does not reach p within them
            if (ctx->cap_buf < cur_p->size) {
                llama_token_data * b = realloc(ctx->buf, cur_p->size * sizeof(*b));
                if (!b) {
                    LLAMA_LOG_ERROR("%s: out of memory for %zu candidates\n", __func__, cur_p->size);
                    return;
                }
                ctx->buf     = b;
                ctx->cap_buf = cur_p->size;
            }
            memcpy(ctx->buf, cur_p->data, cur_p->size * sizeof(*ctx->buf));
            llama_token_data_top_k(ctx->buf, cur_p->size, 256);
            pdata  = ctx->buf;
            in_buf = true;
        } else {
            llama_token_data_array_top_k_inplace(cur_p, cur_p->size);
        }
    }

    size_t k = in_buf ? 256 : cur_p->size;
    float cum_sum = 0.0f;
    size_t last_idx = cur_p->size;

    for (size_t i = 0; i < cur_p->size; ++i) {
        cum_sum += pdata[i].p;

        // keep the token that makes the sum reach p, once at least min_keep are kept
        if (cum_sum >= ctx->p && i + 1 >= ctx->min_keep) {
            last_idx = i + 1;
            break;
        }

        if (in_buf && i == k - 1) {
            // the first k were not enough: sort the rest too (the first k stay as they are)
            llama_token_data_sort_desc(ctx->buf + k, cur_p->size - k);
            k = cur_p->size;
        }
    }

    if (in_buf) {
        memcpy(cur_p->data, ctx->buf, last_idx * sizeof(*cur_p->data));
        cur_p->sorted = true;
    }

    cur_p->size = last_idx;
}

static struct llama_sampler * top_p_clone(const struct llama_sampler * smpl) {
    const struct sampler_top_p * ctx = smpl->ctx;
    return llama_sampler_init_top_p(ctx->p, ctx->min_keep);
}

static void top_p_free(struct llama_sampler * smpl) {
    struct sampler_top_p * ctx = smpl->ctx;
    if (ctx) {
        free(ctx->buf);
    }
    llama_sampler_free_ctx(smpl);
}

static void top_p_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data) {
    GGML_UNUSED(gf);
    const struct sampler_top_p * c = smpl->ctx;
    llama_sampler_backend_top_p(ctx, data, c->p, c->min_keep);
}

static struct llama_sampler_i llama_sampler_top_p_i = {
    /* .name              = */ top_p_name,
    /* .accept            = */ NULL,
    /* .apply             = */ top_p_apply,
    /* .reset             = */ NULL,
    /* .clone             = */ top_p_clone,
    /* .free              = */ top_p_free,
    /* .backend_init      = */ llama_sampler_backend_init_default,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ top_p_backend_apply,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ llama_sampler_copy_state_none,
};

struct llama_sampler * llama_sampler_init_top_p(float p, size_t min_keep) {
    if (p >= 1.0f) {
        return llama_sampler_init_empty("?top-p");
    }
    struct sampler_top_p * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->p        = p;
        ctx->min_keep = min_keep;
    }
    return llama_sampler_new_owned(&llama_sampler_top_p_i, ctx);
}

//
// min-p
//

struct sampler_min_p {
    float  p;
    size_t min_keep;
};

static const char * min_p_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "min-p";
}

static void min_p_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    const struct sampler_min_p * ctx = smpl->ctx;

    if (ctx->p <= 0.0f || cur_p->size == 0) {
        return;
    }

    bool applied = false;

    if (!cur_p->sorted) {
        // p_i >= p * p_max  <=>  logit_i >= logit_max + log(p): filter in place, keeping the order
        float max_logit = -FLT_MAX;
        for (size_t i = 0; i < cur_p->size; ++i) {
            max_logit = fmaxf(max_logit, cur_p->data[i].logit);
        }
        const float min_logit = max_logit + logf(ctx->p);

        size_t n_keep = 0;
        for (size_t i = 0; i < cur_p->size; ++i) {
            if (cur_p->data[i].logit >= min_logit) {
                n_keep++;
            }
        }
        if (n_keep > 0 && n_keep >= ctx->min_keep) {
            size_t j = 0;
            for (size_t i = 0; i < cur_p->size; ++i) {
                if (cur_p->data[i].logit >= min_logit) {
                    cur_p->data[j++] = cur_p->data[i];
                }
            }
            cur_p->size = j;
            applied = true;
        }
    }

    if (!applied) {
        if (!cur_p->sorted) {
            llama_token_data_array_top_k_inplace(cur_p, cur_p->size);
        }
        const float min_logit = cur_p->data[0].logit + logf(ctx->p);
        size_t i = 1; // the first token always stays
        for (; i < cur_p->size; ++i) {
            if (cur_p->data[i].logit < min_logit && i >= ctx->min_keep) {
                break;
            }
        }
        cur_p->size = i;
    }
}

static struct llama_sampler * min_p_clone(const struct llama_sampler * smpl) {
    const struct sampler_min_p * ctx = smpl->ctx;
    return llama_sampler_init_min_p(ctx->p, ctx->min_keep);
}

static void min_p_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data) {
    GGML_UNUSED(gf);
    const struct sampler_min_p * c = smpl->ctx;
    llama_sampler_backend_min_p(ctx, data, c->p, c->min_keep);
}

static struct llama_sampler_i llama_sampler_min_p_i = {
    /* .name              = */ min_p_name,
    /* .accept            = */ NULL,
    /* .apply             = */ min_p_apply,
    /* .reset             = */ NULL,
    /* .clone             = */ min_p_clone,
    /* .free              = */ llama_sampler_free_ctx,
    /* .backend_init      = */ llama_sampler_backend_init_default,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ min_p_backend_apply,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ llama_sampler_copy_state_none,
};

struct llama_sampler * llama_sampler_init_min_p(float p, size_t min_keep) {
    if (p <= 0.0f) {
        return llama_sampler_init_empty("?min-p");
    }
    struct sampler_min_p * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->p        = p;
        ctx->min_keep = min_keep;
    }
    return llama_sampler_new_owned(&llama_sampler_min_p_i, ctx);
}

//
// typical
//

struct sampler_typical {
    float  p;
    size_t min_keep;
};

static const char * typical_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "typical";
}

static void typical_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    const struct sampler_typical * ctx = smpl->ctx;

    if (ctx->p >= 1.0f || cur_p->size == 0) {
        return;
    }

    llama_sampler_softmax_impl(cur_p, true);

    float entropy = 0.0f;
    for (size_t i = 0; i < cur_p->size; ++i) {
        entropy += -cur_p->data[i].p * logf(cur_p->data[i].p);
    }

    // order by |-log p - entropy| ascending: sort (index, -score) pairs with the descending logit sort
    llama_token_data * order = malloc(cur_p->size * sizeof(*order));
    llama_token_data * orig  = malloc(cur_p->size * sizeof(*orig));
    if (!order || !orig) {
        LLAMA_LOG_ERROR("%s: out of memory for %zu candidates\n", __func__, cur_p->size);
        free(order);
        free(orig);
        return;
    }
    for (size_t i = 0; i < cur_p->size; ++i) {
        order[i].id    = (llama_token) i;
        order[i].logit = -fabsf(-logf(cur_p->data[i].p) - entropy);
        order[i].p     = 0.0f;
        orig[i]        = cur_p->data[i];
    }
    llama_token_data_sort_desc(order, cur_p->size);

    // most typical first, until their mass exceeds p (and min_keep tokens are kept)
    float cum_sum = 0.0f;
    size_t last_idx = cur_p->size;
    for (size_t i = 0; i < cur_p->size; ++i) {
        cum_sum += orig[order[i].id].p;
        if (cum_sum > ctx->p && (ctx->min_keep == 0 || i >= ctx->min_keep - 1)) {
            last_idx = i + 1;
            break;
        }
    }

    for (size_t i = 0; i < last_idx; ++i) {
        cur_p->data[i] = orig[order[i].id];
    }
    free(order);
    free(orig);

    cur_p->size   = last_idx;
    cur_p->sorted = false;
}

static struct llama_sampler * typical_clone(const struct llama_sampler * smpl) {
    const struct sampler_typical * ctx = smpl->ctx;
    return llama_sampler_init_typical(ctx->p, ctx->min_keep);
}

static struct llama_sampler_i llama_sampler_typical_i = {
    /* .name              = */ typical_name,
    /* .accept            = */ NULL,
    /* .apply             = */ typical_apply,
    /* .reset             = */ NULL,
    /* .clone             = */ typical_clone,
    /* .free              = */ llama_sampler_free_ctx,
    /* .backend_init      = */ NULL,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ NULL,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ NULL,
};

struct llama_sampler * llama_sampler_init_typical(float p, size_t min_keep) {
    if (p >= 1.0f) {
        return llama_sampler_init_empty("?typical");
    }
    struct sampler_typical * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->p        = p;
        ctx->min_keep = min_keep;
    }
    return llama_sampler_new_owned(&llama_sampler_typical_i, ctx);
}

//
// temp
//

struct sampler_temp {
    float temp;
};

static const char * temp_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "temp";
}

static void temp_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    llama_sampler_temp_impl(cur_p, ((const struct sampler_temp *) smpl->ctx)->temp);
}

static struct llama_sampler * temp_clone(const struct llama_sampler * smpl) {
    return llama_sampler_init_temp(((const struct sampler_temp *) smpl->ctx)->temp);
}

static void temp_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data) {
    GGML_UNUSED(gf);
    llama_sampler_backend_temp(ctx, data, ((const struct sampler_temp *) smpl->ctx)->temp);
}

static struct llama_sampler_i llama_sampler_temp_i = {
    /* .name              = */ temp_name,
    /* .accept            = */ NULL,
    /* .apply             = */ temp_apply,
    /* .reset             = */ NULL,
    /* .clone             = */ temp_clone,
    /* .free              = */ llama_sampler_free_ctx,
    /* .backend_init      = */ llama_sampler_backend_init_default,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ temp_backend_apply,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ llama_sampler_copy_state_none,
};

struct llama_sampler * llama_sampler_init_temp(float temp) {
    if (temp == 1.0f) {
        return llama_sampler_init_empty("?temp");
    }
    struct sampler_temp * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->temp = temp;
    }
    return llama_sampler_new_owned(&llama_sampler_temp_i, ctx);
}

//
// temp-ext (dynamic temperature)
//

struct sampler_temp_ext {
    float temp;
    float delta;
    float exponent;
};

static const char * temp_ext_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "temp-ext";
}

static void temp_ext_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    const struct sampler_temp_ext * ctx = smpl->ctx;

    if (ctx->delta <= 0.0f) {
        llama_sampler_temp_impl(cur_p, ctx->temp);
        return;
    }

    const float min_temp = fmaxf(0.0f, ctx->temp - ctx->delta);
    const float max_temp = ctx->temp + ctx->delta;

    if (cur_p->size <= 1) {
        return;
    }

    const float max_entropy = -logf(1.0f / (float) cur_p->size);

    llama_sampler_softmax_impl(cur_p, true);

    float entropy = 0.0f;
    for (size_t i = 0; i < cur_p->size; ++i) {
        const float prob = cur_p->data[i].p;
        if (prob > 0.0f) {
            entropy -= prob * logf(prob);
        }
    }

    // the entropy, relative to its maximum, picks the temperature in [min_temp, max_temp]
    const float normalized_entropy = entropy / max_entropy;
    const float dyn_temp = min_temp + (max_temp - min_temp) * powf(normalized_entropy, ctx->exponent);

    llama_sampler_temp_impl(cur_p, dyn_temp);

    // probabilities for the new logits, in double
    const double max_l = cur_p->data[0].logit;
    double cum_sum = 0.0;
    for (size_t i = 0; i < cur_p->size; ++i) {
        const double p = exp(cur_p->data[i].logit - max_l);
        cur_p->data[i].p = (float) p;
        cum_sum += p;
    }
    for (size_t i = 0; i < cur_p->size; ++i) {
        cur_p->data[i].p = (float) (cur_p->data[i].p / cum_sum);
    }
}

static struct llama_sampler * temp_ext_clone(const struct llama_sampler * smpl) {
    const struct sampler_temp_ext * ctx = smpl->ctx;
    return llama_sampler_init_temp_ext(ctx->temp, ctx->delta, ctx->exponent);
}

static void temp_ext_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data) {
    GGML_UNUSED(gf);
    const struct sampler_temp_ext * c = smpl->ctx;
    llama_sampler_backend_temp_ext(ctx, data, c->temp, c->delta, c->exponent);
}

static struct llama_sampler_i llama_sampler_temp_ext_i = {
    /* .name              = */ temp_ext_name,
    /* .accept            = */ NULL,
    /* .apply             = */ temp_ext_apply,
    /* .reset             = */ NULL,
    /* .clone             = */ temp_ext_clone,
    /* .free              = */ llama_sampler_free_ctx,
    /* .backend_init      = */ llama_sampler_backend_init_default,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ temp_ext_backend_apply,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ llama_sampler_copy_state_none,
};

struct llama_sampler * llama_sampler_init_temp_ext(float temp, float delta, float exponent) {
    if (temp == 1.0f && delta <= 0.0f) {
        return llama_sampler_init_empty("?temp-ext");
    }
    struct sampler_temp_ext * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->temp     = temp;
        ctx->delta    = delta;
        ctx->exponent = exponent;
    }
    return llama_sampler_new_owned(&llama_sampler_temp_ext_i, ctx);
}

//
// xtc (exclude top choices)
//

struct sampler_xtc {
    float    probability;
    float    threshold;
    size_t   min_keep;

    uint32_t seed;
    uint32_t seed_cur;

    struct llama_mt19937 rng;
};

static const char * xtc_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "xtc";
}

static void xtc_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct sampler_xtc * ctx = smpl->ctx;

    if (ctx->probability <= 0.0f || ctx->threshold > 0.5f || cur_p->size < 2) {
        return;
    }

    const float chance = llama_rng_uniform_float(&ctx->rng);
    if (chance > ctx->probability) {
        return;
    }

    llama_sampler_softmax_impl(cur_p, true);

    // the last of the leading tokens at or above the threshold stays; those before it go
    size_t pos_last = 0;
    for (size_t i = 0; i < cur_p->size; ++i) {
        if (cur_p->data[i].p >= ctx->threshold) {
            pos_last = i;
        } else {
            break;
        }
    }

    if (cur_p->size - pos_last >= ctx->min_keep && pos_last > 0) {
        cur_p->data += pos_last;
        cur_p->size -= pos_last;
    }
}

static void xtc_reset(struct llama_sampler * smpl) {
    struct sampler_xtc * ctx = smpl->ctx;
    ctx->seed_cur = llama_sampler_rng_seed(ctx->seed);
    llama_mt19937_seed(&ctx->rng, ctx->seed_cur);
}

static struct llama_sampler * xtc_clone(const struct llama_sampler * smpl) {
    const struct sampler_xtc * ctx = smpl->ctx;
    struct llama_sampler * result = llama_sampler_init_xtc(ctx->probability, ctx->threshold, ctx->min_keep, ctx->seed);
    if (result && result->iface == smpl->iface) {
        struct sampler_xtc * r = result->ctx;
        r->seed_cur = ctx->seed_cur;
        r->rng      = ctx->rng;
    }
    return result;
}

static struct llama_sampler_i llama_sampler_xtc_i = {
    /* .name              = */ xtc_name,
    /* .accept            = */ NULL,
    /* .apply             = */ xtc_apply,
    /* .reset             = */ xtc_reset,
    /* .clone             = */ xtc_clone,
    /* .free              = */ llama_sampler_free_ctx,
    /* .backend_init      = */ NULL,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ NULL,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ NULL,
};

struct llama_sampler * llama_sampler_init_xtc(float p, float t, size_t min_keep, uint32_t seed) {
    if (p <= 0.0f || t > 0.5f) {
        return llama_sampler_init_empty("?xtc");
    }
    struct sampler_xtc * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->probability = p;
        ctx->threshold   = t;
        ctx->min_keep    = min_keep;
        ctx->seed        = seed;
        ctx->seed_cur    = llama_sampler_rng_seed(seed);
        llama_mt19937_seed(&ctx->rng, ctx->seed_cur);
    }
    return llama_sampler_new_owned(&llama_sampler_xtc_i, ctx);
}

//
// top-n-sigma
//

struct sampler_top_n_sigma {
    float n;
};

static const char * top_n_sigma_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "top-n-sigma";
}

static void top_n_sigma_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    const struct sampler_top_n_sigma * ctx = smpl->ctx;

    if (ctx->n <= 0.0f || cur_p->size <= 1) {
        return;
    }

    // max and mean over the logits that are not already masked (-inf)
    float max = cur_p->data[0].logit;
    float logits_sum = 0.0f;
    size_t valid_count = 0;
    for (size_t i = 0; i < cur_p->size; ++i) {
        if (cur_p->data[i].logit != -INFINITY) {
            max = fmaxf(max, cur_p->data[i].logit);
            logits_sum += cur_p->data[i].logit;
            valid_count++;
        }
    }
    const float mean = valid_count > 0 ? logits_sum / (float) valid_count : 0.0f;

    // llama.cpp squares in double and accumulates in float
    float acc = 0.0f;
    for (size_t i = 0; i < cur_p->size; ++i) {
        if (cur_p->data[i].logit != -INFINITY) {
            const double d = (double) (cur_p->data[i].logit - mean);
            acc = (float) ((double) acc + d * d);
        }
    }
    const float std = valid_count > 0 ? (float) sqrt((double) (acc / (float) valid_count)) : 0.0f;

    for (size_t i = 0; i < cur_p->size; ++i) {
        if (cur_p->data[i].logit < max - ctx->n * std) {
            cur_p->data[i].logit = -INFINITY;
        }
    }
}

static struct llama_sampler * top_n_sigma_clone(const struct llama_sampler * smpl) {
    return llama_sampler_init_top_n_sigma(((const struct sampler_top_n_sigma *) smpl->ctx)->n);
}

static struct llama_sampler_i llama_sampler_top_n_sigma_i = {
    /* .name              = */ top_n_sigma_name,
    /* .accept            = */ NULL,
    /* .apply             = */ top_n_sigma_apply,
    /* .reset             = */ NULL,
    /* .clone             = */ top_n_sigma_clone,
    /* .free              = */ llama_sampler_free_ctx,
    /* .backend_init      = */ NULL,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ NULL,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ NULL,
};

struct llama_sampler * llama_sampler_init_top_n_sigma(float n) {
    if (n <= 0.0f) {
        return llama_sampler_init_empty("?top-n-sigma");
    }
    struct sampler_top_n_sigma * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->n = n;
    }
    return llama_sampler_new_owned(&llama_sampler_top_n_sigma_i, ctx);
}

//
// logit-bias
//

struct sampler_logit_bias {
    int32_t            n_vocab;
    int32_t            n_bias;
    llama_logit_bias * bias;      // [n_bias]
    llama_logit_bias * to_search; // [n_bias] scratch

    // backend: one F32 [n_vocab] bias input per sampling graph, shared by its rows
    struct ggml_tensor * inp_bias;
};

static const char * logit_bias_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "logit-bias";
}

static void logit_bias_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct sampler_logit_bias * ctx = smpl->ctx;

    // fast path: candidates still in vocabulary order have token t at index t
    int32_t n_search = 0;
    for (int32_t j = 0; j < ctx->n_bias; ++j) {
        const llama_logit_bias lb = ctx->bias[j];
        if (lb.token >= 0 && cur_p->size > (size_t) lb.token && cur_p->data[lb.token].id == lb.token) {
            cur_p->data[lb.token].logit += lb.bias;
        } else {
            ctx->to_search[n_search++] = lb;
        }
    }
    if (n_search == 0) {
        return;
    }
    for (size_t i = 0; i < cur_p->size; ++i) {
        for (int32_t j = 0; j < n_search; ++j) {
            if (cur_p->data[i].id == ctx->to_search[j].token) {
                cur_p->data[i].logit += ctx->to_search[j].bias;
                break;
            }
        }
    }
}

static struct llama_sampler * logit_bias_clone(const struct llama_sampler * smpl) {
    const struct sampler_logit_bias * ctx = smpl->ctx;
    return llama_sampler_init_logit_bias(ctx->n_vocab, ctx->n_bias, ctx->bias);
}

static void logit_bias_free(struct llama_sampler * smpl) {
    struct sampler_logit_bias * ctx = smpl->ctx;
    if (ctx) {
        free(ctx->bias);
        free(ctx->to_search);
    }
    llama_sampler_free_ctx(smpl);
}

static void logit_bias_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data) {
    GGML_UNUSED(gf);
    struct sampler_logit_bias * c = smpl->ctx;
    if (!c->inp_bias) {
        c->inp_bias = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, c->n_vocab);
        ggml_set_name(c->inp_bias, "logit_bias");
        ggml_set_input(c->inp_bias);
    }
    llama_sampler_backend_logit_bias(ctx, data, c->inp_bias);
}

static void logit_bias_backend_set_input(struct llama_sampler * smpl) {
    struct sampler_logit_bias * c = smpl->ctx;
    if (!c->inp_bias || !c->inp_bias->buffer) {
        return;
    }
    float * full = calloc((size_t) c->n_vocab, sizeof(float));
    if (!full) {
        LLAMA_LOG_ERROR("%s: out of memory for %d biases\n", __func__, c->n_vocab);
        return;
    }
    for (int32_t j = 0; j < c->n_bias; ++j) {
        const llama_logit_bias lb = c->bias[j];
        if (lb.token >= 0 && lb.token < c->n_vocab) {
            full[lb.token] += lb.bias;
        }
    }
    ggml_backend_tensor_set(c->inp_bias, full, 0, (size_t) c->n_vocab * sizeof(float));
    free(full);
}

static void logit_bias_backend_reset(struct llama_sampler * smpl) {
    ((struct sampler_logit_bias *) smpl->ctx)->inp_bias = NULL;
}

static struct llama_sampler_i llama_sampler_logit_bias_i = {
    /* .name              = */ logit_bias_name,
    /* .accept            = */ NULL,
    /* .apply             = */ logit_bias_apply,
    /* .reset             = */ NULL,
    /* .clone             = */ logit_bias_clone,
    /* .free              = */ logit_bias_free,
    /* .backend_init      = */ llama_sampler_backend_init_default,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ logit_bias_backend_apply,
    /* .backend_set_input = */ logit_bias_backend_set_input,
    /* .backend_reset     = */ logit_bias_backend_reset,
    /* .copy_state        = */ llama_sampler_copy_state_none,
};

struct llama_sampler * llama_sampler_init_logit_bias(int32_t n_vocab, int32_t n_logit_bias, const llama_logit_bias * logit_bias) {
    if (n_logit_bias <= 0) {
        return llama_sampler_init_empty("?logit-bias");
    }
    if (!logit_bias) {
        LLAMA_LOG_ERROR("%s: n_logit_bias = %d but logit_bias is NULL\n", __func__, n_logit_bias);
        return NULL;
    }
    struct sampler_logit_bias * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (!ctx) {
        return NULL;
    }
    ctx->n_vocab   = n_vocab;
    ctx->n_bias    = n_logit_bias;
    ctx->bias      = malloc((size_t) n_logit_bias * sizeof(*ctx->bias));
    ctx->to_search = malloc((size_t) n_logit_bias * sizeof(*ctx->to_search));
    if (!ctx->bias || !ctx->to_search) {
        LLAMA_LOG_ERROR("%s: out of memory for %d biases\n", __func__, n_logit_bias);
        free(ctx->bias);
        free(ctx->to_search);
        free(ctx);
        return NULL;
    }
    memcpy(ctx->bias, logit_bias, (size_t) n_logit_bias * sizeof(*ctx->bias));

    struct llama_sampler * smpl = llama_sampler_init(&llama_sampler_logit_bias_i, ctx);
    if (!smpl) {
        struct llama_sampler tmp = { NULL, ctx };
        logit_bias_free(&tmp);
    }
    return smpl;
}
