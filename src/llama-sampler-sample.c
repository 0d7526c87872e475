// llama_sampler_sample: the bridge from a decoded output to a sampled token (backend-sampled or CPU-sampled).

#include "llama-sampler.h"

#include "llama-impl.h"

#include <stdlib.h>

llama_token llama_sampler_sample(struct llama_sampler * smpl, struct llama_context * ctx, int32_t idx) {
    if (!smpl || !ctx) {
        LLAMA_LOG_ERROR("%s: %s is NULL\n", __func__, smpl ? "ctx" : "smpl");
        return LLAMA_TOKEN_NULL;
    }

    // the backend part of the chain already picked a token: accept it so the CPU-side state (penalty history,
    // the dist sampler's committed draws) advances exactly as if the CPU had sampled it
    const llama_token sampled_token = llama_get_sampled_token_ith(ctx, idx);
    if (sampled_token != LLAMA_TOKEN_NULL) {
        LLAMA_LOG_DEBUG("%s: backend sampler selected token for idx %d, skipping CPU samplers\n", __func__, idx);
        llama_sampler_accept(smpl, sampled_token);
        return sampled_token;
    }

    const float       * sampled_probs  = llama_get_sampled_probs_ith     (ctx, idx);
    const float       * sampled_logits = llama_get_sampled_logits_ith    (ctx, idx);
    const llama_token * sampled_ids    = llama_get_sampled_candidates_ith(ctx, idx);

    size_t n = 0;
    const float * logits = NULL;
    if (sampled_logits) {
        // the backend filtered the candidates (e.g. top-k): continue from its reduced set
        n = sampled_probs ? llama_get_sampled_probs_count_ith(ctx, idx) : llama_get_sampled_logits_count_ith(ctx, idx);
        logits = sampled_logits;
    } else {
        logits = llama_get_logits_ith(ctx, idx);
        if (!logits) {
            LLAMA_LOG_ERROR("%s: no logits for output %d\n", __func__, idx);
            return LLAMA_TOKEN_NULL;
        }
        const struct llama_model * model = llama_get_model(ctx);
        const int32_t n_vocab = model ? llama_vocab_n_tokens(llama_model_get_vocab(model)) : 0;
        if (n_vocab <= 0) {
            LLAMA_LOG_ERROR("%s: the context has no vocabulary\n", __func__);
            return LLAMA_TOKEN_NULL;
        }
        n = (size_t) n_vocab;
        sampled_probs = NULL;
        sampled_ids   = NULL;
    }
    if (n == 0) {
        LLAMA_LOG_ERROR("%s: no candidates for output %d\n", __func__, idx);
        return LLAMA_TOKEN_NULL;
    }

    // a chain keeps its candidate buffer between calls; other samplers get a temporary one
    llama_token_data * cur = NULL;
    llama_token_data * cur_local = NULL;
    if (llama_sampler_is_chain(smpl)) {
        cur = llama_sampler_chain_reserve_cur(smpl->ctx, n);
    } else {
        cur = cur_local = malloc(n * sizeof(*cur));
    }
    if (!cur) {
        LLAMA_LOG_ERROR("%s: out of memory for %zu candidates\n", __func__, n);
        return LLAMA_TOKEN_NULL;
    }

    for (size_t i = 0; i < n; ++i) {
        cur[i].id    = sampled_ids ? sampled_ids[i] : (llama_token) i;
        cur[i].logit = logits[i];
        cur[i].p     = sampled_probs ? sampled_probs[i] : 0.0f;
    }

    llama_token_data_array cur_p = {
        /* .data     = */ cur,
        /* .size     = */ n,
        /* .selected = */ -1,
        /* .sorted   = */ false,
    };

    llama_sampler_apply(smpl, &cur_p);

    llama_token token = LLAMA_TOKEN_NULL;
    if (cur_p.selected >= 0 && (size_t) cur_p.selected < cur_p.size) {
        token = cur_p.data[cur_p.selected].id;
    } else {
        LLAMA_LOG_ERROR("%s: the sampler '%s' selected no token (selected = %lld of %zu); does the chain end with a "
                "selecting sampler such as dist or greedy?\n", __func__, llama_sampler_name(smpl),
                (long long) cur_p.selected, cur_p.size);
    }

    free(cur_local);

    if (token != LLAMA_TOKEN_NULL) {
        llama_sampler_accept(smpl, token);
    }
    return token;
}
