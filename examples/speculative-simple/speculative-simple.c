// llama-speculative-simple: target + one draft source (draft model or n-grams); output is token-identical to
// plain decoding with the same sampler because every emitted token is sampled from the target's logits.
#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"
#include "sampling.h"
#include "speculative.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char ** argv) {
    struct common_params params = common_params_default();
    if (!common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_SPECULATIVE, NULL)) {
        common_params_free(&params);
        return 1;
    }
    common_init();

    const bool has_draft_model = params.speculative.draft.mparams.path && params.speculative.draft.mparams.path[0];
    // -md alone means draft-simple, as in llama.cpp
    if (has_draft_model && params.speculative.n_types == 1 &&
        params.speculative.types[0] == COMMON_SPECULATIVE_TYPE_NONE) {
        params.speculative.types[0] = COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE;
    }
    const int32_t n_draft_max = common_speculative_n_max(&params.speculative);

    // the target verifies 1 + n_draft tokens per step
    const struct common_speculative_output_limits lim =
        common_speculative_get_output_limits(params.n_batch, 1, n_draft_max);
    params.n_outputs_max         = lim.total;
    params.n_outputs_max_per_seq = lim.per_seq;

    llama_backend_init();

    int ret = 1;
    struct llama_model * model_dft = NULL;
    struct llama_context * ctx_dft = NULL;
    struct common_speculative * spec = NULL;
    struct common_sampler * smpl = NULL;
    llama_token * inp = NULL;
    llama_token * prompt_tgt = NULL;
    llama_token * out_ids = NULL;
    llama_token * draft = NULL;
    llama_token * ids = NULL;  // the tokens accepted in one step
    int * idxs = NULL;         // output index of each verified position: 0, 1, ..., n_draft_max
    int32_t n_prompt_tgt = 0, cap_prompt_tgt = 0, n_out = 0, cap_out = 0;
    struct llama_batch batch_tgt = { 0 };
    bool batch_ok = false;

    struct common_init_result init = common_init_from_params(&params);
    if (!init.model) {
        goto done;
    }
    struct llama_context * ctx_tgt = init.context;
    const struct llama_vocab * vocab = llama_model_get_vocab(init.model);

    if (has_draft_model && n_draft_max > 0) {
        struct llama_model_params mp = common_model_params_to_llama(&params);
        mp.n_gpu_layers = params.speculative.draft.n_gpu_layers;
        model_dft = llama_model_load_from_file(params.speculative.draft.mparams.path, mp);
        if (!model_dft) {
            LOG_ERR("%s: failed to load draft model '%s'\n", __func__, params.speculative.draft.mparams.path);
            goto done;
        }
        ctx_dft = llama_init_from_model(model_dft, common_base_params_to_speculative(&params));
        if (!ctx_dft) {
            LOG_ERR("%s: failed to create the draft context\n", __func__);
            goto done;
        }
    }
    if (n_draft_max > 0) {
        spec = common_speculative_init(&params.speculative, ctx_tgt, ctx_dft);
        if (!spec) {
            goto done;
        }
    }

    int32_t n_inp = 0;
    if (!common_tokenize(vocab, params.prompt ? params.prompt : "", -1, true, true, &inp, &n_inp) || n_inp < 1) {
        LOG_ERR("%s: the prompt gives no tokens\n", __func__);
        goto done;
    }

    smpl = common_sampler_init(init.model, &params.sampling);
    if (!smpl) {
        goto done;
    }
    if (params.sampling.backend_sampling) {
        llama_set_sampler(ctx_tgt, 0, common_sampler_get(smpl));
    }

    common_log_tokens_text(vocab, inp, n_inp);

    const int64_t t_enc_start = llama_time_us();
    // everything but the last prompt token; the loop decodes that one together with the draft. No output is
    // requested: with -bs and one output per sequence (no draft) the dist sampler draws for every output at
    // decode time, so an unread output would use up a draw and shift the seeded stream
    if (n_inp > 1 && !common_decode_no_output(ctx_tgt, inp, n_inp - 1)) {
        goto done;
    }
    const int64_t t_enc_end = llama_time_us();

    if (!common_tokens_append(&prompt_tgt, &n_prompt_tgt, &cap_prompt_tgt, inp, n_inp - 1)) {
        goto done;
    }
    llama_token id_last = inp[n_inp - 1];
    int32_t n_past = n_inp - 1;
    const int32_t n_predict = params.n_predict < 0 ? INT32_MAX / 2 : params.n_predict;

    batch_tgt = llama_batch_init(lim.per_seq > 1 ? lim.per_seq : 1, 0, 1);
    batch_ok = batch_tgt.token != NULL;
    draft = malloc((size_t) (n_draft_max + 1) * sizeof(*draft));
    ids = malloc((size_t) (n_draft_max + 1) * sizeof(*ids));
    idxs = malloc((size_t) (n_draft_max + 1) * sizeof(*idxs));
    if (!batch_ok || !draft || !ids || !idxs) {
        LOG_ERR("%s: out of memory\n", __func__);
        goto done;
    }
    for (int32_t i = 0; i <= n_draft_max; i++) {
        idxs[i] = i;
    }

    int64_t n_drafted = 0, n_accept = 0, n_steps = 0;
    int64_t t_draft_us = 0; // time spent producing drafts (draft model decode + sampling, or n-gram lookup)
    bool has_eos = false;
    const int64_t t_dec_start = llama_time_us();
    while (n_out < n_predict && !has_eos) {
        const int64_t t_draft0 = llama_time_us();
        int32_t n_draft = spec ? common_speculative_gen_draft(spec, prompt_tgt, n_prompt_tgt, id_last, draft) : 0;
        t_draft_us += llama_time_us() - t_draft0;
        if (n_draft > n_predict - n_out - 1) {
            n_draft = n_predict - n_out - 1 > 0 ? n_predict - n_out - 1 : 0;
        }
        const size_t n_ids = common_speculative_verify(ctx_tgt, smpl, &batch_tgt, 0, n_past, id_last, draft, n_draft,
                                                       idxs, ids);
        if (n_ids == 0) {
            goto done;
        }
        n_steps++;
        n_drafted += n_draft;
        n_accept  += (int64_t) n_ids - 1;
        common_speculative_accept(spec, (int32_t) n_ids - 1);
        if (!common_tokens_append(&prompt_tgt, &n_prompt_tgt, &cap_prompt_tgt, &id_last, 1) ||
            !common_tokens_append(&prompt_tgt, &n_prompt_tgt, &cap_prompt_tgt, ids, (int32_t) n_ids - 1)) {
            goto done;
        }
        if (!common_emit_tokens(vocab, ids, n_ids, params.special, n_predict, &out_ids, &n_out, &cap_out, &has_eos)) {
            goto done;
        }
        id_last = ids[n_ids - 1];
        n_past += (int32_t) n_ids;
    }
    const int64_t t_dec_end = llama_time_us();
    LOG("\n\n");

    common_log_speed(n_inp, t_enc_end - t_enc_start, n_out, t_dec_end - t_dec_start);
    LOG_INF("\n");
    LOG_INF("n_draft   = %d\n", n_draft_max);
    LOG_INF("n_predict = %d\n", n_out);
    LOG_INF("n_drafted = %lld\n", (long long) n_drafted);
    LOG_INF("n_accept  = %lld\n", (long long) n_accept);
    LOG_INF("accept    = %.3f%%\n", n_drafted > 0 ? 100.0 * (double) n_accept / (double) n_drafted : 0.0);
    LOG_INF("n_steps   = %lld\n", (long long) n_steps);
    LOG_INF("t_draft   = %.2f ms, %.2f us per step, %.2f us per drafted token\n", (double) t_draft_us * 1e-3,
            n_steps > 0 ? (double) t_draft_us / (double) n_steps : 0.0,
            n_drafted > 0 ? (double) t_draft_us / (double) n_drafted : 0.0);
    if (ctx_dft) {
        LOG_INF("\ndraft:\n\n");
        llama_perf_context_print(ctx_dft);
    }
    LOG_INF("\ntarget:\n\n");
    common_perf_print(ctx_tgt, smpl);
    // machine-readable: the generated ids (tests compare these across runs)
    common_print_ids(out_ids, n_out);
    ret = 0;

done:
    if (batch_ok) {
        llama_batch_free(batch_tgt);
    }
    free(draft);
    free(ids);
    free(idxs);
    free(out_ids);
    free(prompt_tgt);
    free(inp);
    common_sampler_free(smpl);
    common_speculative_free(spec);
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
