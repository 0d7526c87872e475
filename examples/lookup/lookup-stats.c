// llama-lookup-stats: how well lookup decoding would do on a text (llama.cpp's examples/lookup/lookup-stats). The
// text (-f/-p) is tokenized and cut into chunks of n_ctx tokens; each chunk is replayed as if it were being
// generated: the n-gram caches (context, built from the chunk so far; dynamic, -lcd plus every earlier chunk;
// static, -lcs) draft up to --spec-draft-n-max tokens, the drafted tokens that match the text count as accepted, and
// the next text token stands for the one the target would have sampled. No model evaluation takes place; the model
// is loaded only for its vocabulary and context size. Prints n_draft, n_predict, n_drafted, n_accept, the accept
// rate and the time spent drafting.
#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"
#include "ngram-cache.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// one cache path: the file's cache, or an empty cache when the path is unset (or, for the dynamic cache, names no
// file yet: llama.cpp starts such a cache empty). NULL (logged) when the file is unreadable or malformed.
static struct common_ngram_cache * load_cache(const char * path, bool may_be_missing, const char * what) {
    if (!path || !path[0] || (may_be_missing && access(path, F_OK) != 0)) {
        struct common_ngram_cache * c = common_ngram_cache_init();
        if (!c) {
            LOG_ERR("lookup-stats: out of memory\n");
        }
        return c;
    }
    struct common_ngram_cache * c = common_ngram_cache_load(path);
    if (!c) {
        LOG_ERR("lookup-stats: failed to open %s lookup cache: %s\n", what, path);
    }
    return c;
}

// the n-gram counts of the token just appended to out[0..n_out)
static bool learn_last(struct common_ngram_cache * nc_context, const llama_token * out, int32_t n_out,
                       int64_t * t_draft_us) {
    const int64_t t0 = llama_time_us();
    const bool ok = common_ngram_cache_update(nc_context, LLAMA_NGRAM_MIN, LLAMA_NGRAM_MAX, out, n_out, 1, false);
    *t_draft_us += llama_time_us() - t0;
    return ok;
}

int main(int argc, char ** argv) {
    struct common_params params = common_params_default();
    if (!common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_LOOKUP, NULL)) {
        common_params_free(&params);
        return 1;
    }
    common_init();

    const int32_t n_draft = params.speculative.draft.n_max;
    if (n_draft < 0) {
        LOG_ERR("%s: --spec-draft-n-max must be >= 0\n", __func__);
        common_params_free(&params);
        return 1;
    }

    llama_backend_init();

    int ret = 1;
    llama_token * inp = NULL;
    llama_token * out = NULL;   // the chunk "generated" so far
    llama_token * draft = NULL; // draft[0]: the last token of out; draft[1..]: the drafted tokens
    struct common_ngram_cache * nc_context = NULL;
    struct common_ngram_cache * nc_dynamic = NULL;
    struct common_ngram_cache * nc_static  = NULL;
    int64_t t_draft_flat_us = 0, t_draft_us = 0;

    struct common_init_result init = common_init_from_params(&params);
    if (!init.model) {
        goto done;
    }
    const struct llama_vocab * vocab = llama_model_get_vocab(init.model);

    int32_t n_input = 0;
    if (!common_tokenize(vocab, params.prompt ? params.prompt : "", -1, true, true, &inp, &n_input)) {
        LOG_ERR("%s: tokenization failed\n", __func__);
        goto done;
    }

    {
        const int64_t t0 = llama_time_us();
        nc_static  = load_cache(params.speculative.lookup_cache_static, false, "static");
        nc_dynamic = load_cache(params.speculative.lookup_cache_dynamic, true, "dynamic");
        nc_context = common_ngram_cache_init();
        if (!nc_static || !nc_dynamic || !nc_context) {
            goto done;
        }
        t_draft_flat_us += llama_time_us() - t0;
    }

    const int32_t n_ctx = (int32_t) llama_n_ctx(init.context);
    out   = malloc((size_t) n_ctx * sizeof(*out));
    draft = malloc(((size_t) n_draft + 1) * sizeof(*draft));
    if (!out || !draft) {
        LOG_ERR("%s: out of memory\n", __func__);
        goto done;
    }

    int64_t n_drafted = 0, n_accept = 0;
    const int64_t t_start_ms = ggml_time_ms();

    // each chunk of n_ctx tokens is replayed as one generation with the text as the sampled tokens, so the result
    // does not depend on a model; like llama.cpp, a final partial (or exactly fitting) chunk is left out
    for (int32_t i_start = 0; (int64_t) i_start + n_ctx < n_input; i_start += n_ctx) {
        const llama_token * chunk = inp + i_start;
        int32_t n_out = 0;
        out[n_out++] = chunk[0];

        while (n_out < n_ctx) {
            draft[0] = out[n_out - 1];
            const int64_t t0 = llama_time_us();
            const int len = common_ngram_cache_draft(out, n_out, draft, n_draft, LLAMA_NGRAM_MIN, LLAMA_NGRAM_MAX,
                                                     nc_context, nc_dynamic, nc_static);
            t_draft_us += llama_time_us() - t0;
            n_drafted += len - 1;

            // the drafted tokens that match the text are accepted, up to the first mismatch
            for (int j = 1; j < len && n_out < n_ctx; j++) {
                if (draft[j] != chunk[n_out]) {
                    break;
                }
                n_accept++;
                out[n_out] = chunk[n_out];
                n_out++;
                if (!learn_last(nc_context, out, n_out, &t_draft_us)) {
                    goto done;
                }
            }
            // then the target's own sample: the next text token
            if (n_out < n_ctx) {
                out[n_out] = chunk[n_out];
                n_out++;
                if (!learn_last(nc_context, out, n_out, &t_draft_us)) {
                    goto done;
                }
            }
        }

        if (i_start > 0 && i_start / 100000 != (i_start - n_ctx) / 100000) {
            const int64_t t_now_ms = ggml_time_ms();
            const int64_t eta_ms   = (int64_t) (n_input - i_start) * (t_now_ms - t_start_ms) / i_start;
            LOG_INF("lookup-stats: %d/%d done, ETA: %02" PRId64 ":%02" PRId64 "\n", i_start, n_input,
                    eta_ms / 60000, (eta_ms % 60000) / 1000);
        }

        // what this chunk taught goes into the dynamic cache; the next chunk starts with an empty context cache
        struct common_ngram_cache * fresh = common_ngram_cache_init();
        if (!fresh || !common_ngram_cache_merge(nc_dynamic, nc_context)) {
            common_ngram_cache_free(fresh);
            LOG_ERR("%s: out of memory\n", __func__);
            goto done;
        }
        common_ngram_cache_free(nc_context);
        nc_context = fresh;
    }

    LOG("\n");
    LOG_INF("\n");
    LOG_INF("n_draft      = %d\n", n_draft);
    LOG_INF("n_predict    = %d\n", n_input - n_input % n_ctx);
    LOG_INF("n_drafted    = %" PRId64 "\n", n_drafted);
    LOG_INF("t_draft_flat = %.2f ms\n", (double) t_draft_flat_us * 1e-3);
    LOG_INF("t_draft      = %.2f ms, %.2f us per token, %.2f tokens per second\n", (double) t_draft_us * 1e-3,
            n_drafted > 0 ? (double) t_draft_us / (double) n_drafted : 0.0,
            t_draft_us > 0 ? (double) n_drafted / (1e-6 * (double) t_draft_us) : 0.0);
    LOG_INF("n_accept     = %" PRId64 "\n", n_accept);
    LOG_INF("accept       = %.3f%%\n", n_drafted > 0 ? 100.0 * (double) n_accept / (double) n_drafted : 0.0);
    LOG("\n\n");
    ret = 0;

done:
    free(draft);
    free(out);
    free(inp);
    common_ngram_cache_free(nc_context);
    common_ngram_cache_free(nc_dynamic);
    common_ngram_cache_free(nc_static);
    common_init_result_free(&init);
    llama_backend_free();
    common_params_free(&params);
    return ret;
}
