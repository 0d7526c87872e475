// llama-lookup: lookup decoding with n-gram caches (llama.cpp's examples/lookup). Drafts come from a context cache
// built from the prompt and the generated tokens, validated by an optional static cache (-lcs) and helped by an
// optional dynamic cache (-lcd) that is updated and saved at the end. The target verifies 1 + n_draft tokens per
// decode and samples every emitted token itself, so the output equals plain decoding with the same sampler.
#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"
#include "ngram-cache.h"
#include "sampling.h"
#include "speculative.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char ** argv) {
    struct common_params params = common_params_default();
    if (!common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_LOOKUP, NULL)) {
        common_params_free(&params);
        return 1;
    }
    common_init();

    // max. number of additional tokens to draft if a match is found
    const int32_t n_draft = params.speculative.draft.n_max;
    if (n_draft < 0) {
        LOG_ERR("%s: --spec-draft-n-max must be >= 0\n", __func__);
        common_params_free(&params);
        return 1;
    }
    const struct common_speculative_output_limits lim =
        common_speculative_get_output_limits(params.n_batch, params.n_parallel, n_draft);
    params.n_outputs_max         = lim.total;
    params.n_outputs_max_per_seq = lim.per_seq;

    llama_backend_init();

    int ret = 1;
    struct common_ngram_cache * nc_context = NULL;
    struct common_ngram_cache * nc_dynamic = NULL;
    struct common_ngram_cache * nc_static  = NULL;
    struct common_sampler * smpl = NULL;
    llama_token * hist = NULL;   // prompt + generated tokens; its last token is the one to decode next
    llama_token * out_ids = NULL;
    llama_token * draft = NULL;
    llama_token * ids = NULL;
    int * idxs = NULL;
    int32_t n_hist = 0, cap_hist = 0, n_out = 0, cap_out = 0;
    struct llama_batch batch_tgt = { 0 };
    bool batch_ok = false;
    int64_t t_draft_flat_us = 0, t_draft_us = 0;

    struct common_init_result init = common_init_from_params(&params);
    if (!init.model) {
        goto done;
    }
    struct llama_context * ctx = init.context;
    const struct llama_vocab * vocab = llama_model_get_vocab(init.model);

    if (!common_tokenize(vocab, params.prompt ? params.prompt : "", -1, true, true, &hist, &n_hist) || n_hist < 1) {
        LOG_ERR("%s: the prompt gives no tokens\n", __func__);
        goto done;
    }
    cap_hist = n_hist;

    {
        const int64_t t0 = llama_time_us();
        nc_context = common_ngram_cache_init();
        if (!nc_context || !common_ngram_cache_update(nc_context, LLAMA_NGRAM_MIN, LLAMA_NGRAM_MAX, hist, n_hist,
                                                      n_hist, false)) {
            LOG_ERR("%s: out of memory\n", __func__);
            goto done;
        }
        const char * lcs = params.speculative.lookup_cache_static;
        const char * lcd = params.speculative.lookup_cache_dynamic;
        if (lcs && lcs[0]) {
            nc_static = common_ngram_cache_load(lcs);
            if (!nc_static) {
                LOG_ERR("%s: failed to open static lookup cache: %s\n", __func__, lcs);
                goto done;
            }
        } else {
            nc_static = common_ngram_cache_init();
        }
        // a dynamic cache that does not exist yet is created at the end
        if (lcd && lcd[0] && access(lcd, F_OK) == 0) {
            nc_dynamic = common_ngram_cache_load(lcd);
            if (!nc_dynamic) {
                LOG_ERR("%s: failed to read dynamic lookup cache: %s\n", __func__, lcd);
                goto done;
            }
        } else {
            nc_dynamic = common_ngram_cache_init();
        }
        if (!nc_static || !nc_dynamic) {
            LOG_ERR("%s: out of memory\n", __func__);
            goto done;
        }
        t_draft_flat_us += llama_time_us() - t0;
    }

    const int32_t max_tokens_list_size = (int32_t) llama_n_ctx(ctx) - 4;
    if (n_hist > max_tokens_list_size) {
        LOG_ERR("%s: prompt too long (%d tokens, max %d)\n", __func__, n_hist, max_tokens_list_size);
        goto done;
    }

    smpl = common_sampler_init(init.model, &params.sampling);
    if (!smpl) {
        goto done;
    }
    if (params.sampling.backend_sampling) {
        llama_set_sampler(ctx, 0, common_sampler_get(smpl));
    }

    common_log_tokens_text(vocab, hist, n_hist);

    const int32_t n_input = n_hist;
    const int64_t t_enc_start = llama_time_us();
    // everything but the last prompt token; the loop decodes that one together with the draft. No output is
    // requested: with backend sampling every output draws from the seeded stream, even one nobody reads
    if (n_hist > 1 && !common_decode_no_output(ctx, hist, n_hist - 1)) {
        goto done;
    }
    const int64_t t_enc_end = llama_time_us();

    int32_t n_past = n_hist - 1;
    const int32_t n_predict = params.n_predict < 0 ? INT32_MAX / 2 : params.n_predict;

    batch_tgt = llama_batch_init(lim.per_seq > 1 ? lim.per_seq : 1, 0, 1);
    batch_ok = batch_tgt.token != NULL;
    draft = malloc((size_t) (n_draft + 1) * sizeof(*draft));
    ids   = malloc((size_t) (n_draft + 1) * sizeof(*ids));
    idxs  = malloc((size_t) (n_draft + 1) * sizeof(*idxs));
    if (!batch_ok || !draft || !ids || !idxs) {
        LOG_ERR("%s: out of memory\n", __func__);
        goto done;
    }
    for (int32_t i = 0; i <= n_draft; i++) {
        idxs[i] = i;
    }

    int64_t n_drafted = 0, n_accept = 0;
    bool has_eos = false;
    const int64_t t_dec_start = llama_time_us();
    while (n_out < n_predict && !has_eos) {
        if (n_past + 1 + n_draft > (int32_t) llama_n_ctx(ctx)) {
            LOG_WRN("%s: context full, stopping\n", __func__);
            break;
        }
        const llama_token id_last = hist[n_hist - 1];
        int32_t n_room = n_predict - n_out - 1;
        n_room = n_room < n_draft ? n_room : n_draft;
        draft[0] = id_last;
        const int64_t t0 = llama_time_us();
        const int len = common_ngram_cache_draft(hist, n_hist, draft, n_room, LLAMA_NGRAM_MIN, LLAMA_NGRAM_MAX,
                                                 nc_context, nc_dynamic, nc_static);
        t_draft_us += llama_time_us() - t0;
        const int32_t n_cur = len - 1;

        const size_t n_ids = common_speculative_verify(ctx, smpl, &batch_tgt, 0, n_past, id_last, draft + 1, n_cur,
                                                       idxs, ids);
        if (n_ids == 0) {
            goto done;
        }
        n_drafted += n_cur;
        n_accept  += (int64_t) n_ids - 1;
        if (!common_tokens_append(&hist, &n_hist, &cap_hist, ids, (int32_t) n_ids)) {
            LOG_ERR("%s: out of memory\n", __func__);
            goto done;
        }
        {
            // the context cache learns every accepted token
            const int64_t t1 = llama_time_us();
            if (!common_ngram_cache_update(nc_context, LLAMA_NGRAM_MIN, LLAMA_NGRAM_MAX, hist, n_hist,
                                           (int64_t) n_ids, false)) {
                goto done;
            }
            t_draft_us += llama_time_us() - t1;
        }
        if (!common_emit_tokens(vocab, ids, n_ids, params.special, n_predict, &out_ids, &n_out, &cap_out, &has_eos)) {
            goto done;
        }
        n_past += (int32_t) n_ids;
    }
    const int64_t t_dec_end = llama_time_us();

    {
        // the dynamic cache keeps what this generation saw
        const char * lcd = params.speculative.lookup_cache_dynamic;
        if (!common_ngram_cache_merge(nc_dynamic, nc_context)) {
            LOG_ERR("%s: out of memory\n", __func__);
            goto done;
        }
        if (lcd && lcd[0] && !common_ngram_cache_save(nc_dynamic, lcd)) {
            goto done;
        }
    }

    LOG("\n\n");
    common_log_speed(n_input, t_enc_end - t_enc_start, n_out, t_dec_end - t_dec_start);
    LOG_INF("\n");
    LOG_INF("n_draft      = %d\n", n_draft);
    LOG_INF("n_predict    = %d\n", n_out);
    LOG_INF("n_drafted    = %lld\n", (long long) n_drafted);
    LOG_INF("t_draft_flat = %.2f ms\n", (double) t_draft_flat_us * 1e-3);
    LOG_INF("t_draft      = %.2f ms, %.2f us per token, %.2f tokens per second\n", (double) t_draft_us * 1e-3,
            n_drafted > 0 ? (double) t_draft_us / (double) n_drafted : 0.0,
            t_draft_us > 0 ? (double) n_drafted / (1e-6 * (double) t_draft_us) : 0.0);
    LOG_INF("n_accept     = %lld\n", (long long) n_accept);
    LOG_INF("accept       = %.3f%%\n", n_drafted > 0 ? 100.0 * (double) n_accept / (double) n_drafted : 0.0);
    LOG_INF("\ntarget:\n\n");
    common_perf_print(ctx, smpl);
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
    free(hist);
    common_sampler_free(smpl);
    common_ngram_cache_free(nc_context);
    common_ngram_cache_free(nc_dynamic);
    common_ngram_cache_free(nc_static);
    common_init_result_free(&init);
    llama_backend_free();
    common_params_free(&params);
    return ret;
}
