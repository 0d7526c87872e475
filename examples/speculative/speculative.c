// llama-speculative: llama.cpp's tree-based speculative decoding (examples/speculative). The draft model proposes
// up to --spec-draft-n-max tokens; a branch splits into a new sequence (up to -np) when an alternative candidate is
// more likely than --spec-draft-p-split. The target verifies all branches in one decode. Greedy (--temp 0) keeps
// the target's own choice at each position, so the output equals plain greedy decoding; with --temp > 0 a drafted
// token is accepted with probability p_target / p_draft and a rejection samples from the residual distribution
// (stochastic acceptance, as in llama.cpp), which has the target's distribution but not plain decoding's draws.
#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"
#include "sampling.h"
#include "speculative.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// one branch of the draft tree
struct seq_draft {
    bool active;
    bool drafting;
    bool skip;

    int i_batch_dft;

    int n;                      // drafted tokens (the first is the target's last token until it is erased)
    llama_token * tokens;       // [cap]
    int * i_batch_tgt;          // [cap] output index in the target batch of each token
    llama_token_data ** dists;  // [cap] the draft distribution each token was drawn from (stochastic mode)
    size_t * n_dists;           // [cap]

    struct common_sampler * smpl;
};

// splitmix64: the acceptance test and residual draws (llama.cpp uses std::default_random_engine)
static uint64_t rng_next(uint64_t * s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_uniform(uint64_t * s) {
    return (double) (rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

// softmax over the candidates' logits: the distribution the chain sampled from (temperature and filters are
// already applied to these logits; for greedy they are the model's)
static void cand_probs(llama_token_data_array * a) {
    if (!a->size) {
        return;
    }
    float mx = a->data[0].logit;
    for (size_t i = 1; i < a->size; i++) {
        mx = a->data[i].logit > mx ? a->data[i].logit : mx;
    }
    double sum = 0.0;
    for (size_t i = 0; i < a->size; i++) {
        const double e = isfinite(a->data[i].logit) ? exp((double) a->data[i].logit - mx) : 0.0;
        a->data[i].p = (float) e;
        sum += e;
    }
    for (size_t i = 0; i < a->size; i++) {
        a->data[i].p = sum > 0 ? (float) (a->data[i].p / sum) : 0.0f;
    }
}

// the k most likely tokens of output idx with their softmax probabilities over the whole vocabulary, most likely
// first. Greedy drafting uses these: a greedy chain leaves a single candidate, which would never split a branch
// (llama.cpp asks its sampler for 128 probabilities for the same reason)
static size_t top_candidates(struct llama_context * ctx, int idx, int32_t n_vocab, llama_token_data * out, size_t k) {
    const float * logits = llama_get_logits_ith(ctx, idx);
    if (!logits || n_vocab <= 0) {
        return 0;
    }
    size_t n = 0;
    float mx = logits[0];
    for (int32_t t = 0; t < n_vocab; t++) {
        mx = logits[t] > mx ? logits[t] : mx;
        // insertion into the sorted top-k
        if (n < k || logits[t] > out[n - 1].logit) {
            size_t j = n < k ? n++ : k - 1;
            while (j > 0 && out[j - 1].logit < logits[t]) {
                out[j] = out[j - 1];
                j--;
            }
            out[j].id    = t;
            out[j].logit = logits[t];
        }
    }
    double sum = 0.0;
    for (int32_t t = 0; t < n_vocab; t++) {
        sum += exp((double) logits[t] - mx);
    }
    for (size_t i = 0; i < n; i++) {
        out[i].p = (float) (exp((double) out[i].logit - mx) / sum);
    }
    return n;
}

static void draft_clear(struct seq_draft * d) {
    for (int i = 0; i < d->n; i++) {
        free(d->dists[i]);
        d->dists[i]   = NULL;
        d->n_dists[i] = 0;
    }
    d->n = 0;
}

// appends a token (and a copy of its distribution when dist != NULL)
static bool draft_push(struct seq_draft * d, llama_token t, int i_tgt, const llama_token_data * dist, size_t n_dist) {
    d->tokens[d->n]      = t;
    d->i_batch_tgt[d->n] = i_tgt;
    d->dists[d->n]       = NULL;
    d->n_dists[d->n]     = 0;
    if (dist && n_dist) {
        d->dists[d->n] = malloc(n_dist * sizeof(*dist));
        if (!d->dists[d->n]) {
            return false;
        }
        memcpy(d->dists[d->n], dist, n_dist * sizeof(*dist));
        d->n_dists[d->n] = n_dist;
    }
    d->n++;
    return true;
}

static bool draft_copy(struct seq_draft * dst, const struct seq_draft * src) {
    draft_clear(dst);
    for (int i = 0; i < src->n; i++) {
        if (!draft_push(dst, src->tokens[i], src->i_batch_tgt[i], src->dists[i], src->n_dists[i])) {
            return false;
        }
    }
    dst->i_batch_dft = src->i_batch_dft;
    return true;
}

// drops the first token (the target's own token that started the round). i_batch_tgt keeps its entries: the
// output at i_batch_tgt[k] is the target's prediction for tokens[k] after the shift
static void draft_erase_first(struct seq_draft * d) {
    if (d->n == 0) {
        return;
    }
    free(d->dists[0]);
    memmove(d->tokens, d->tokens + 1, (size_t) (d->n - 1) * sizeof(*d->tokens));
    memmove(d->dists, d->dists + 1, (size_t) (d->n - 1) * sizeof(*d->dists));
    memmove(d->n_dists, d->n_dists + 1, (size_t) (d->n - 1) * sizeof(*d->n_dists));
    d->n--;
    d->dists[d->n]   = NULL;
    d->n_dists[d->n] = 0;
}

static float dist_p(const llama_token_data * d, size_t n, llama_token t) {
    for (size_t i = 0; i < n; i++) {
        if (d[i].id == t) {
            return d[i].p;
        }
    }
    return 0.0f;
}

int main(int argc, char ** argv) {
    struct common_params params = common_params_default();
    if (!common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_SPECULATIVE, NULL)) {
        common_params_free(&params);
        return 1;
    }
    common_init();

    if (params.n_predict < -1) {
        LOG_ERR("%s: --n-predict must be >= -1\n", __func__);
        common_params_free(&params);
        return 1;
    }
    if (!params.speculative.draft.mparams.path || !params.speculative.draft.mparams.path[0]) {
        LOG_ERR("%s: --model-draft is required\n", __func__);
        common_params_free(&params);
        return 1;
    }
    if (params.speculative.draft.n_max < 1) {
        LOG_ERR("%s: --spec-draft-n-max must be at least 1\n", __func__);
        common_params_free(&params);
        return 1;
    }
    if (params.sampling.backend_sampling) {
        // several branches share the target batch: verification samples on the CPU
        LOG_WRN("%s: backend sampling is not used by llama-speculative\n", __func__);
        params.sampling.backend_sampling = false;
    }

    // max number of parallel drafting sequences (i.e. tree branches)
    const int n_seq_dft = params.n_parallel;
    // the branches share the accepted prefix: one KV stream of n_ctx cells for all of them, not n_ctx / n_seq each
    params.kv_unified = true;
    const int n_draft   = params.speculative.draft.n_max;

    const struct common_speculative_output_limits lim =
        common_speculative_get_output_limits(params.n_batch, params.n_parallel, n_draft);
    params.n_outputs_max         = lim.total;
    params.n_outputs_max_per_seq = lim.per_seq;

    // probability threshold for splitting a draft branch (only for n_seq_dft > 1)
    const float p_draft_split = params.speculative.draft.p_split;

    uint64_t rng = params.sampling.seed == LLAMA_DEFAULT_SEED ? (uint64_t) llama_time_us() : params.sampling.seed;

    llama_backend_init();

    int ret = 1;
    struct llama_model * model_dft = NULL;
    struct llama_context * ctx_dft = NULL;
    struct common_sampler * smpl = NULL;
    struct seq_draft * drafts = NULL;
    llama_token * inp = NULL;
    llama_token * out_ids = NULL;
    int32_t n_inp = 0, n_out = 0;
    struct llama_batch batch_dft = { 0 }, batch_tgt = { 0 };
    bool batches_ok = false;
    float * res_p = NULL;
    const int cap = n_draft + 2;

    struct common_init_result init = common_init_from_params(&params);
    if (!init.model) {
        goto done;
    }
    struct llama_context * ctx_tgt = init.context;
    const struct llama_vocab * vocab_tgt = llama_model_get_vocab(init.model);
    const int32_t n_vocab = llama_vocab_n_tokens(vocab_tgt);
    {
        struct llama_model_params mp = common_model_params_to_llama(&params);
        mp.n_gpu_layers = params.speculative.draft.n_gpu_layers;
        model_dft = llama_model_load_from_file(params.speculative.draft.mparams.path, mp);
        if (!model_dft) {
            LOG_ERR("%s: failed to load draft model '%s'\n", __func__, params.speculative.draft.mparams.path);
            goto done;
        }
        // the draft context samples one token per branch per step
        ctx_dft = llama_init_from_model(model_dft, common_base_params_to_speculative(&params));
        if (!ctx_dft) {
            LOG_ERR("%s: failed to create the draft context\n", __func__);
            goto done;
        }
    }
    if (!common_speculative_are_compatible(ctx_tgt, ctx_dft)) {
        goto done;
    }
    llama_memory_t mem_tgt = llama_get_memory(ctx_tgt);
    llama_memory_t mem_dft = llama_get_memory(ctx_dft);

    if (!common_tokenize(vocab_tgt, params.prompt ? params.prompt : "", -1, true, true, &inp, &n_inp) || n_inp < 1) {
        LOG_ERR("%s: the prompt gives no tokens\n", __func__);
        goto done;
    }
    if (n_inp > (int32_t) llama_n_ctx(ctx_tgt) - 4) {
        LOG_ERR("%s: prompt too long (%d tokens, max %d)\n", __func__, n_inp, (int32_t) llama_n_ctx(ctx_tgt) - 4);
        goto done;
    }
    common_log_tokens_text(vocab_tgt, inp, n_inp);

    const int64_t t_enc_start = llama_time_us();
    // eval the prompt with both models; the target's last prompt token alone, so its output is index 0
    if ((n_inp > 1 && llama_decode(ctx_tgt, llama_batch_get_one(inp, n_inp - 1)) != 0) ||
        llama_decode(ctx_tgt, llama_batch_get_one(inp + n_inp - 1, 1)) != 0 ||
        llama_decode(ctx_dft, llama_batch_get_one(inp, n_inp)) != 0) {
        LOG_ERR("%s: prompt decode failed\n", __func__);
        goto done;
    }
    const int64_t t_enc_end = llama_time_us();

    const bool stochastic = params.sampling.temp > 0.0f;
    const int32_t n_predict_max = params.n_predict < 0 ? INT32_MAX / 2 : params.n_predict;
    int n_predict = 0, n_drafted = 0, n_accept = 0;
    int n_past_tgt = n_inp, n_past_dft = n_inp;
    bool has_eos = false;

    smpl   = common_sampler_init(init.model, &params.sampling);
    drafts = calloc((size_t) n_seq_dft, sizeof(*drafts));
    out_ids = malloc((size_t) (n_predict_max < 4096 ? n_predict_max + 1 : 4096) * sizeof(*out_ids));
    res_p  = calloc((size_t) n_vocab, sizeof(*res_p));
    if (!smpl || !drafts || !out_ids || !res_p) {
        LOG_ERR("%s: out of memory\n", __func__);
        goto done;
    }
    int32_t cap_out = n_predict_max < 4096 ? n_predict_max + 1 : 4096;
    for (int s = 0; s < n_seq_dft; s++) {
        struct seq_draft * d = &drafts[s];
        d->tokens      = malloc((size_t) cap * sizeof(*d->tokens));
        d->i_batch_tgt = malloc((size_t) cap * sizeof(*d->i_batch_tgt));
        d->dists       = calloc((size_t) cap, sizeof(*d->dists));
        d->n_dists     = calloc((size_t) cap, sizeof(*d->n_dists));
        d->smpl        = common_sampler_init(model_dft, &params.sampling);
        if (!d->tokens || !d->i_batch_tgt || !d->dists || !d->n_dists || !d->smpl) {
            LOG_ERR("%s: out of memory\n", __func__);
            goto done;
        }
    }
    batch_dft  = llama_batch_init(n_seq_dft, 0, 1);
    batch_tgt  = llama_batch_init(n_draft + n_seq_dft + 1, 0, n_seq_dft);
    batches_ok = batch_dft.token && batch_tgt.token;
    if (!batches_ok) {
        LOG_ERR("%s: out of memory\n", __func__);
        goto done;
    }

    const int64_t t_dec_start = llama_time_us();

    // the first round samples the output of the last prompt token (index 0); no branch is active yet
    drafts[0].i_batch_tgt[0] = 0;

    bool done_gen = false;
    while (!done_gen) {
        int i_dft  = 0;
        int s_keep = 0;
        llama_token token_id = LLAMA_TOKEN_NULL;

        // loop until we fail to accept a drafted token or we run out of drafted tokens
        for (;;) {
            bool accept = false;
            const int idx = drafts[s_keep].i_batch_tgt[i_dft];
            if (stochastic) {
                common_sampler_sample(smpl, ctx_tgt, idx, true);
                llama_token_data_array * dist_tgt = common_sampler_get_candidates(smpl, true);
                cand_probs(dist_tgt);
                // the residual distribution starts as the target's
                for (size_t i = 0; i < dist_tgt->size; i++) {
                    res_p[dist_tgt->data[i].id] = dist_tgt->data[i].p;
                }
                for (;;) {
                    // randomly select a sequence to verify among the active ones
                    int n_active = 0;
                    for (int s = 0; s < n_seq_dft; s++) {
                        n_active += drafts[s].active;
                    }
                    if (n_active == 0) {
                        break;
                    }
                    int pick = (int) (rng_next(&rng) % (uint64_t) n_active), s = 0;
                    for (s = 0; s < n_seq_dft; s++) {
                        if (drafts[s].active && pick-- == 0) {
                            break;
                        }
                    }
                    struct seq_draft * d = &drafts[s];
                    if (i_dft >= d->n) {
                        d->active = false;
                        continue;
                    }
                    const llama_token t = d->tokens[i_dft];
                    const float p_tgt = res_p[t];
                    const float p_dft = dist_p(d->dists[i_dft], d->n_dists[i_dft], t);
                    const double r = rng_uniform(&rng);
                    if (p_dft <= 0.0f ? p_tgt > 0.0f : r <= (double) p_tgt / (double) p_dft) {
                        s_keep   = s;
                        accept   = true;
                        token_id = t;
                        common_sampler_accept(smpl, token_id, true);
                        // branches with the same token continue to the next position, the others end here
                        for (int o = 0; o < n_seq_dft; o++) {
                            if (drafts[o].active && (i_dft >= drafts[o].n || drafts[o].tokens[i_dft] != t)) {
                                drafts[o].active = false;
                            }
                        }
                        break;
                    }
                    // rejected: the residual is max(0, p_tgt - p_dft), renormalised below when drawn from
                    d->active = false;
                    for (size_t i = 0; i < d->n_dists[i_dft]; i++) {
                        const llama_token id = d->dists[i_dft][i].id;
                        if (id >= 0 && id < n_vocab) {
                            const float v = res_p[id] - d->dists[i_dft][i].p;
                            res_p[id] = v > 0.0f ? v : 0.0f;
                        }
                    }
                    // branches that drafted the same token are rejected with it
                    for (int o = 0; o < n_seq_dft; o++) {
                        if (o != s && drafts[o].active && i_dft < drafts[o].n && drafts[o].tokens[i_dft] == t) {
                            drafts[o].active = false;
                        }
                    }
                }
                if (!accept) {
                    // every drafted token was rejected: sample from the residual distribution
                    double sum = 0.0;
                    for (size_t i = 0; i < dist_tgt->size; i++) {
                        sum += res_p[dist_tgt->data[i].id];
                    }
                    double r = rng_uniform(&rng) * sum;
                    token_id = dist_tgt->size ? dist_tgt->data[0].id : 0;
                    for (size_t i = 0; i < dist_tgt->size; i++) {
                        r -= res_p[dist_tgt->data[i].id];
                        if (r < 0.0) {
                            token_id = dist_tgt->data[i].id;
                            break;
                        }
                    }
                    common_sampler_accept(smpl, token_id, true);
                }
                for (size_t i = 0; i < dist_tgt->size; i++) {
                    res_p[dist_tgt->data[i].id] = 0.0f;
                }
            } else {
                // greedy verification: the target's own token; branches that drafted it stay
                token_id = common_sampler_sample(smpl, ctx_tgt, idx, true);
                if (token_id == LLAMA_TOKEN_NULL) {
                    LOG_ERR("%s: sampling failed\n", __func__);
                    goto done;
                }
                common_sampler_accept(smpl, token_id, true);
                for (int s = 0; s < n_seq_dft; s++) {
                    if (!drafts[s].active) {
                        continue;
                    }
                    if (i_dft < drafts[s].n && token_id == drafts[s].tokens[i_dft]) {
                        s_keep = s;
                        accept = true;
                    } else {
                        drafts[s].active = false;
                    }
                }
            }

            if (llama_vocab_is_eog(vocab_tgt, token_id)) {
                has_eos = true;
            }
            ++n_predict;
            if (!common_tokens_append(&out_ids, &n_out, &cap_out, &token_id, 1)) {
                goto done;
            }
            if (!has_eos) {
                char * piece = common_token_to_piece(vocab_tgt, token_id, params.special, NULL);
                if (piece) {
                    LOG("%s", piece);
                    free(piece);
                }
            }
            if (n_predict >= n_predict_max || has_eos) {
                if (accept) {
                    ++n_accept;
                }
                done_gen = true;
                break;
            }
            if (accept) {
                ++n_accept;
                ++n_past_tgt;
                ++n_past_dft;
                ++i_dft;
                continue;
            }
            break;
        }
        if (done_gen) {
            break;
        }

        // keep the accepted branch in both memories as sequence 0
        llama_memory_seq_keep(mem_dft, s_keep);
        llama_memory_seq_cp  (mem_dft, s_keep, 0, -1, -1);
        llama_memory_seq_keep(mem_dft, 0);

        llama_memory_seq_rm  (mem_tgt, s_keep, n_past_tgt, -1);
        llama_memory_seq_keep(mem_tgt, s_keep);
        llama_memory_seq_cp  (mem_tgt, s_keep, 0, -1, -1);
        llama_memory_seq_keep(mem_tgt, 0);

        for (int s = 0; s < n_seq_dft; s++) {
            drafts[s].active = false;
            draft_clear(&drafts[s]);
        }
        // erased again after the speculation phase
        draft_push(&drafts[0], token_id, 0, NULL, 0);

        common_batch_clear(&batch_dft);
        const llama_seq_id seq0 = 0;
        common_batch_add(&batch_dft, token_id, n_past_dft, &seq0, 1, true);
        llama_memory_seq_rm(mem_dft, 0, n_past_dft, -1);
        if (llama_decode(ctx_dft, batch_dft) != 0) {
            LOG_ERR("%s: draft decode failed\n", __func__);
            goto done;
        }
        ++n_past_dft;

        if (n_past_tgt + n_draft + 2 > (int) llama_n_ctx(ctx_tgt) || n_past_dft + n_draft + 2 > (int) llama_n_ctx(ctx_dft)) {
            LOG_WRN("%s: context full, stopping\n", __func__);
            break;
        }

        // the first branch drafts with the target sampler's state
        common_sampler_free(drafts[0].smpl);
        drafts[0].smpl = common_sampler_clone(smpl);
        if (!drafts[0].smpl) {
            goto done;
        }

        int n_seq_cur  = 1;
        int n_past_cur = n_past_dft;
        for (int s = 0; s < n_seq_dft; s++) {
            drafts[s].active   = false;
            drafts[s].drafting = false;
        }
        drafts[0].active      = true;
        drafts[0].drafting    = true;
        drafts[0].i_batch_dft = 0;

        common_batch_clear(&batch_tgt);
        common_batch_add(&batch_tgt, drafts[0].tokens[0], n_past_tgt, &seq0, 1, true);

        // sample n_draft tokens from the draft model using tree-based sampling
        llama_token_data top[8];
        for (int i = 0; i < n_draft; i++) {
            common_batch_clear(&batch_dft);
            for (int s = 0; s < n_seq_dft; s++) {
                drafts[s].skip = false;
            }
            for (int s = 0; s < n_seq_dft; s++) {
                if (!drafts[s].drafting || drafts[s].skip) {
                    continue;
                }
                llama_token_data_array top_arr = { top, 0, -1, true };
                llama_token_data_array * cur_p = &top_arr;
                if (stochastic) {
                    common_sampler_sample(drafts[s].smpl, ctx_dft, drafts[s].i_batch_dft, true);
                    cur_p = common_sampler_get_candidates(drafts[s].smpl, true);
                    cand_probs(cur_p);
                } else {
                    top_arr.size = top_candidates(ctx_dft, drafts[s].i_batch_dft, llama_vocab_n_tokens(
                                                  llama_model_get_vocab(model_dft)), top, 8);
                }
                if (cur_p->size == 0) {
                    drafts[s].drafting = false;
                    continue;
                }

                int sa[8];
                int n_sa = 0;
                sa[n_sa++] = s;
                // attempt to split the branch if the probability is high enough
                for (int f = 1; f < 8 && (size_t) f < cur_p->size; f++) {
                    if (n_seq_cur < n_seq_dft && cur_p->data[f].p > p_draft_split) {
                        llama_memory_seq_rm(mem_dft, n_seq_cur, -1, -1);
                        llama_memory_seq_cp(mem_dft, s, n_seq_cur, -1, -1);
                        // all previous tokens of this branch are now also part of the new branch
                        for (int t = 0; t < batch_tgt.n_tokens; t++) {
                            for (int q = 0; q < batch_tgt.n_seq_id[t]; q++) {
                                if (batch_tgt.seq_id[t][q] == s) {
                                    batch_tgt.seq_id[t][batch_tgt.n_seq_id[t]++] = n_seq_cur;
                                    break;
                                }
                            }
                        }
                        struct seq_draft * nd = &drafts[n_seq_cur];
                        nd->active   = true;
                        nd->drafting = true;
                        nd->skip     = true;
                        if (!draft_copy(nd, &drafts[s])) {
                            goto done;
                        }
                        common_sampler_free(nd->smpl);
                        nd->smpl = common_sampler_clone(drafts[s].smpl);
                        if (!nd->smpl) {
                            goto done;
                        }
                        sa[n_sa++] = n_seq_cur;
                        n_seq_cur++;
                    } else {
                        break;
                    }
                }

                // add the drafted token of each sequence
                for (int is = 0; is < n_sa; is++) {
                    const llama_token id = cur_p->data[is].id;
                    const int ss = sa[is];
                    common_sampler_accept(drafts[ss].smpl, id, true);
                    if (!draft_push(&drafts[ss], id, batch_tgt.n_tokens, stochastic ? cur_p->data : NULL, cur_p->size)) {
                        goto done;
                    }
                    const llama_seq_id sid = ss;
                    common_batch_add(&batch_tgt, id, n_past_tgt + i + 1, &sid, 1, true);
                    drafts[ss].i_batch_dft = batch_dft.n_tokens;
                    common_batch_add(&batch_dft, id, n_past_cur, &sid, 1, true);
                    if (batch_tgt.n_tokens > n_draft) {
                        drafts[ss].drafting = false;
                    }
                }
            }
            // no sequence is drafting anymore
            if (batch_dft.n_tokens == 0) {
                break;
            }
            if (llama_decode(ctx_dft, batch_dft) != 0) {
                LOG_ERR("%s: draft decode failed\n", __func__);
                goto done;
            }
            ++n_past_cur;
            ++n_drafted;
            if (batch_tgt.n_tokens > n_draft) {
                break;
            }
        }

        // evaluate the target model on the drafted tokens of all branches
        llama_memory_seq_keep(mem_tgt, 0);
        for (int s = 1; s < n_seq_dft; s++) {
            llama_memory_seq_cp(mem_tgt, 0, s, -1, -1);
        }
        if (llama_decode(ctx_tgt, batch_tgt) != 0) {
            LOG_ERR("%s: target decode failed\n", __func__);
            goto done;
        }
        ++n_past_tgt;

        // the first token was proposed by the target before the speculation loop
        for (int s = 0; s < n_seq_dft; s++) {
            if (drafts[s].active) {
                draft_erase_first(&drafts[s]);
            }
        }
    }
    const int64_t t_dec_end = llama_time_us();
    LOG("\n\n");

    common_log_speed(n_inp, t_enc_end - t_enc_start, n_predict, t_dec_end - t_dec_start);
    LOG_INF("\n");
    LOG_INF("n_draft   = %d\n", n_draft);
    LOG_INF("n_predict = %d\n", n_predict);
    LOG_INF("n_drafted = %d\n", n_drafted);
    LOG_INF("n_accept  = %d\n", n_accept);
    LOG_INF("accept    = %.3f%%\n", n_drafted > 0 ? 100.0 * n_accept / n_drafted : 0.0);
    LOG_INF("\n");
    LOG_INF("draft:\n\n");
    llama_perf_context_print(ctx_dft);
    LOG_INF("\n");
    LOG_INF("target:\n\n");
    common_perf_print(ctx_tgt, smpl);
    // machine-readable: the generated ids (tests compare these across runs)
    common_print_ids(out_ids, n_out);
    ret = 0;

done:
    if (batch_dft.token) {
        llama_batch_free(batch_dft);
    }
    if (batch_tgt.token) {
        llama_batch_free(batch_tgt);
    }
    for (int s = 0; drafts && s < n_seq_dft; s++) {
        if (drafts[s].dists) {
            draft_clear(&drafts[s]);
        }
        free(drafts[s].tokens);
        free(drafts[s].i_batch_tgt);
        free(drafts[s].dists);
        free(drafts[s].n_dists);
        common_sampler_free(drafts[s].smpl);
    }
    free(drafts);
    free(res_p);
    free(out_ids);
    free(inp);
    common_sampler_free(smpl);
    if (ctx_dft) {
        llama_free(ctx_dft);
    }
    if (model_dft) {
        llama_model_free(model_dft);
    }
    common_init_result_free(&init);
    llama_backend_free();
    common_params_free(&params);
    return ret;
}
