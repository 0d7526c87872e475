// llama-batched: n_parallel sequences continue one shared prompt. The prompt is decoded once with every
// sequence id on each token; then each step decodes one new token per unfinished sequence in a single batch.
#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_usage(int argc, char ** argv) {
    (void) argc;
    LOG("\nexample usage:\n");
    LOG("\n    %s -m model.gguf -p \"Hello my name is\" -n 32 -np 4\n", argv[0]);
    LOG("\n");
}

// growable text of one stream
struct stream {
    char * text;
    size_t len;
    size_t cap;
};

static bool stream_append(struct stream * s, const char * piece, size_t n) {
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->len + n + 1) {
            cap *= 2;
        }
        char * t = realloc(s->text, cap);
        if (!t) {
            return false;
        }
        s->text = t;
        s->cap  = cap;
    }
    memcpy(s->text + s->len, piece, n);
    s->len += n;
    s->text[s->len] = '\0';
    return true;
}

int main(int argc, char ** argv) {
    struct common_params params = common_params_default();
    common_params_set_str(&params.prompt, "Hello my name is");
    params.n_predict = 32;

    common_init();
    if (!common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_BATCHED, print_usage)) {
        common_params_free(&params);
        return 1;
    }

    // total number of sequences; n_predict is the length of each sequence, prompt included
    const int n_parallel = params.n_parallel;
    const int n_predict  = params.n_predict;

    int rc = 1;
    struct llama_model * model = NULL;
    struct llama_context * ctx = NULL;
    struct llama_sampler * smpl = NULL;
    llama_token * tokens = NULL;
    struct stream * streams = NULL;
    int32_t * i_batch = NULL;
    struct llama_batch batch = { 0 };
    bool batch_ok = false;

    llama_backend_init();

    struct llama_model_params model_params = common_model_params_to_llama(&params);
    if (!params.model.path) {
        LOG_ERR("%s: error: no model given (-m)\n", __func__);
        goto done;
    }
    model = llama_model_load_from_file(params.model.path, model_params);
    if (!model) {
        LOG_ERR("%s: error: unable to load model\n", __func__);
        goto done;
    }
    const struct llama_vocab * vocab = llama_model_get_vocab(model);

    int32_t n_prompt = 0;
    if (!common_tokenize(vocab, params.prompt ? params.prompt : "", -1, true, true, &tokens, &n_prompt) || n_prompt == 0) {
        LOG_ERR("%s: error: failed to tokenize the prompt (or it is empty)\n", __func__);
        goto done;
    }

    const long long n_kv_req = (long long) n_prompt + (long long) (n_predict - n_prompt) * n_parallel;

    // one unified cache: the prompt's cells are shared by all sequences, which is what n_kv_req counts
    params.kv_unified = true;
    struct llama_context_params ctx_params = common_context_params_to_llama(&params);
    // the prompt itself must fit in n_predict (with n_parallel 1 a short n_predict still gives n_kv_req > 0)
    if (n_predict < n_prompt || n_kv_req <= 0 || n_kv_req > INT32_MAX) {
        LOG_ERR("%s: error: n_predict (%d) is the total length of each sequence and must not be less than the prompt (%d tokens)\n", __func__, n_predict, n_prompt);
        goto done;
    }
    ctx_params.n_ctx   = (uint32_t) n_kv_req;
    ctx_params.n_batch = (uint32_t) (n_predict > n_parallel ? n_predict : n_parallel);
    if ((int) ctx_params.n_batch < n_prompt) {
        ctx_params.n_batch = (uint32_t) n_prompt;
    }

    ctx = llama_init_from_model(model, ctx_params);
    if (!ctx) {
        LOG_ERR("%s: error: failed to create the llama_context\n", __func__);
        goto done;
    }

    struct llama_sampler_chain_params sparams = llama_sampler_chain_default_params();
    sparams.no_perf = false;
    smpl = llama_sampler_chain_init(sparams);
    llama_sampler_chain_add(smpl, llama_sampler_init_top_k(params.sampling.top_k));
    llama_sampler_chain_add(smpl, llama_sampler_init_top_p(params.sampling.top_p, (size_t) params.sampling.min_keep));
    llama_sampler_chain_add(smpl, llama_sampler_init_temp(params.sampling.temp));
    llama_sampler_chain_add(smpl, llama_sampler_init_dist(params.sampling.seed));

    const int n_ctx = (int) llama_n_ctx(ctx);
    LOG_INF("\n%s: n_predict = %d, n_ctx = %d, n_batch = %u, n_parallel = %d, n_kv_req = %lld\n", __func__,
            n_predict, n_ctx, ctx_params.n_batch, n_parallel, n_kv_req);

    if (n_ctx < n_kv_req) {
        LOG_ERR("%s: error: n_kv_req > n_ctx, the required KV cache size is not big enough\n", __func__);
        LOG_ERR("%s:        either reduce n_parallel or increase n_ctx\n", __func__);
        goto done;
    }

    // the prompt
    LOG("\n");
    for (int32_t i = 0; i < n_prompt; i++) {
        char * piece = common_token_to_piece(vocab, tokens[i], false, NULL);
        if (piece) {
            LOG("%s", piece);
            free(piece);
        }
    }

    batch = llama_batch_init(n_prompt > n_parallel ? n_prompt : n_parallel, 0, n_parallel);
    batch_ok = true;
    llama_seq_id * seq_ids = malloc((size_t) n_parallel * sizeof(llama_seq_id));
    if (!seq_ids) {
        goto done;
    }
    for (int i = 0; i < n_parallel; i++) {
        seq_ids[i] = i;
    }
    // every sequence shares the prompt's cache cells
    for (int32_t i = 0; i < n_prompt; i++) {
        common_batch_add(&batch, tokens[i], i, seq_ids, n_parallel, false);
    }
    free(seq_ids);
    // only the last prompt token's logits are needed
    batch.logits[batch.n_tokens - 1] = 1;

    if (llama_model_has_encoder(model)) {
        LOG_ERR("%s: encoder-decoder models are not supported by llama-batched here\n", __func__);
        goto done;
    }

    if (llama_decode(ctx, batch) != 0) {
        LOG_ERR("%s: llama_decode() failed\n", __func__);
        goto done;
    }

    if (n_parallel > 1) {
        LOG("\n\n%s: generating %d sequences ...\n", __func__, n_parallel);
    }

    streams = calloc((size_t) n_parallel, sizeof(*streams));
    i_batch = malloc((size_t) n_parallel * sizeof(*i_batch));
    if (!streams || !i_batch) {
        goto done;
    }
    // where each sequence's next logits are in the batch; -1 = finished
    for (int i = 0; i < n_parallel; i++) {
        i_batch[i] = batch.n_tokens - 1;
    }

    int n_cur    = batch.n_tokens;
    int n_decode = 0;

    const int64_t t_main_start = ggml_time_us();

    while (n_cur <= n_predict) {
        common_batch_clear(&batch);

        for (int32_t i = 0; i < n_parallel; i++) {
            if (i_batch[i] < 0) {
                continue;
            }
            const llama_token new_token_id = llama_sampler_sample(smpl, ctx, i_batch[i]);

            if (llama_vocab_is_eog(vocab, new_token_id) || n_cur == n_predict) {
                i_batch[i] = -1;
                LOG("\n");
                if (n_parallel > 1) {
                    LOG_INF("%s: stream %d finished at n_cur = %d\n", __func__, i, n_cur);
                }
                continue;
            }

            int32_t len = 0;
            char * piece = common_token_to_piece(vocab, new_token_id, false, &len);
            if (piece) {
                if (n_parallel == 1) {
                    LOG("%s", piece);
                }
                if (!stream_append(&streams[i], piece, (size_t) len)) {
                    free(piece);
                    goto done;
                }
                free(piece);
            }

            i_batch[i] = batch.n_tokens;
            const llama_seq_id sid = i;
            common_batch_add(&batch, new_token_id, n_cur, &sid, 1, true);
            n_decode += 1;
        }

        if (batch.n_tokens == 0) {
            break;
        }

        n_cur += 1;

        if (llama_decode(ctx, batch) != 0) {
            LOG_ERR("%s : failed to eval\n", __func__);
            goto done;
        }
    }

    if (n_parallel > 1) {
        LOG("\n");
        for (int32_t i = 0; i < n_parallel; i++) {
            LOG("sequence %d:\n\n%s%s\n\n", i, params.prompt ? params.prompt : "", streams[i].text ? streams[i].text : "");
        }
    }

    const int64_t t_main_end = ggml_time_us();
    const double secs = (double) (t_main_end - t_main_start) / 1000000.0;
    LOG_INF("%s: decoded %d tokens in %.2f s, speed: %.2f t/s\n", __func__, n_decode, secs,
            secs > 0.0 ? n_decode / secs : 0.0);

    LOG_INF("\n");
    llama_perf_sampler_print(smpl);
    llama_perf_context_print(ctx);
    fprintf(stderr, "\n");
    rc = 0;

done:
    if (streams) {
        for (int i = 0; i < n_parallel; i++) {
            free(streams[i].text);
        }
        free(streams);
    }
    free(i_batch);
    free(tokens);
    if (batch_ok) {
        llama_batch_free(batch);
    }
    if (smpl) {
        llama_sampler_free(smpl);
    }
    if (ctx) {
        llama_free(ctx);
    }
    if (model) {
        llama_model_free(model);
    }
    common_params_free(&params);
    llama_backend_free();
    return rc;
}
