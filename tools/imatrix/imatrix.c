// llama-imatrix: the importance matrix of a model over a text (llama.cpp's tool, GGUF output). The text is
// tokenized once with BOS and cut into chunks of -c tokens; each chunk is decoded from an empty cache with
// its first token replaced by BOS (n_batch / n_ctx chunks side by side as separate sequences), and every
// matrix multiplication by a weight adds the squares of its input rows to that weight's sums
// (imatrix-collect.c). Unless --no-ppl, the perplexity over the second half of each chunk is printed as
// llama-perplexity does. --in-file merges earlier results (and alone, without -f, just combines them).
#include "imatrix-collect.h"
#include "imatrix-stats.h"

#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void print_usage(int argc, char ** argv) {
    (void) argc;
    LOG("\nexample usage:\n");
    LOG("\n    %s \\\n"
        "       -m model.gguf -f some-text.txt [-o imatrix.gguf] [--no-ppl] \\\n"
        "       [--process-output] [--chunk 123] [--save-frequency 0] [--output-frequency 10] \\\n"
        "       [--in-file imatrix-prev-0.gguf --in-file imatrix-prev-1.gguf ...] [--parse-special] \\\n"
        "       [--show-statistics] [...]\n", argv[0]);
    LOG("\n");
}

struct imatrix_run {
    struct imatrix_collector * col;
    const struct common_params * params;
    double t_decode;   // seconds spent decoding chunks
    int    n_chunks;   // chunks decoded
};

static bool save(struct imatrix_collector * col, const struct common_params * params, int32_t at_chunk) {
    char name[4096];
    if (at_chunk > 0) {
        snprintf(name, sizeof(name), "%s.at_%d", params->out_file, at_chunk);
    } else {
        snprintf(name, sizeof(name), "%s", params->out_file);
    }
    if (!imatrix_save(col, name, params->prompt_file)) {
        LOG_ERR("imatrix: failed to save %s: %s\n", name, col->err);
        return false;
    }
    LOG_DBG("imatrix: stored collected data after %d chunks in %s\n", col->last_chunk, name);
    return true;
}

// after each decoded group of chunks: the periodic outputs (llama.cpp's --output-frequency rule: write when
// the chunk count crossed a multiple of N)
static bool periodic_save(struct imatrix_collector * col, const struct common_params * params) {
    const int32_t prev = col->last_chunk;
    imatrix_update_last_chunk(col);
    if (col->last_chunk <= prev) {
        return true;
    }
    const int32_t step = col->last_chunk - prev;
    if ((col->last_chunk % params->n_out_freq) / step == 0 && !save(col, params, 0)) {
        return false;
    }
    if (params->n_save_freq > 0 && (col->last_chunk % params->n_save_freq) / step == 0 &&
        !save(col, params, col->last_chunk)) {
        return false;
    }
    return true;
}

// -log p(tok) under softmax(logits), exponentials summed in double as llama.cpp does
static double token_nll(int n_vocab, const float * logits, int tok) {
    float max_logit = logits[0];
    for (int i = 1; i < n_vocab; i++) {
        max_logit = logits[i] > max_logit ? logits[i] : max_logit;
    }
    double sum_exp = 0.0;
    for (int i = 0; i < n_vocab; i++) {
        sum_exp += expf(logits[i] - max_logit);
    }
    return -((double) (logits[tok] - max_logit) - log(sum_exp));
}

static bool compute_imatrix(struct llama_context * ctx, struct imatrix_run * run, int n_ctx) {
    const struct common_params * params = run->params;
    struct imatrix_collector * col = run->col;
    const struct llama_vocab * vocab = llama_model_get_vocab(llama_get_model(ctx));
    const bool add_bos = llama_vocab_get_add_bos(vocab);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    if (llama_vocab_get_add_eos(vocab)) {
        LOG_ERR("imatrix: models that append EOS to every text are not supported\n");
        return false;
    }

    LOG_INF("imatrix: tokenizing the input ..\n");
    const double t_tok0 = now_s();
    llama_token * tokens = NULL;
    int32_t n_tokens = 0;
    if (!common_tokenize(vocab, params->prompt, -1, true, params->parse_special, &tokens, &n_tokens)) {
        LOG_ERR("imatrix: failed to tokenize the input\n");
        return false;
    }
    LOG_INF("imatrix: tokenization took %g ms\n", 1e3 * (now_s() - t_tok0));

    bool ok = false;
    float * logits_acc = NULL;
    struct llama_batch batch = { 0 };
    bool batch_ok = false;
    llama_token * tok = tokens;

    if (params->i_chunk > 0) {
        if ((int64_t) (params->i_chunk + 2) * n_ctx >= n_tokens) {
            LOG_ERR("imatrix: there will be not enough tokens left after removing %d chunks\n", params->i_chunk);
            goto done;
        }
        LOG_INF("imatrix: removing initial %d chunks (%d tokens)\n", params->i_chunk, params->i_chunk * n_ctx);
        tok += (size_t) params->i_chunk * n_ctx;
        n_tokens -= params->i_chunk * n_ctx;
    }
    if (n_tokens < 2 * n_ctx) {
        LOG_ERR("imatrix: you need at least %d tokens for a context of %d tokens\n", 2 * n_ctx, n_ctx);
        LOG_ERR("imatrix: the data file you provided tokenizes to only %d tokens\n", n_tokens);
        goto done;
    }

    const int n_chunk_max = n_tokens / n_ctx;
    const int n_chunk = params->n_chunks < 0 || params->n_chunks > n_chunk_max ? n_chunk_max : params->n_chunks;
    const int n_batch = params->n_batch;
    const int num_batches = (n_ctx + n_batch - 1) / n_batch;
    const int n_seq = n_batch / n_ctx > 1 ? n_batch / n_ctx : 1;
    const int first = n_ctx / 2;

    if (!(n_batch < n_ctx || n_batch % n_ctx == 0)) {
        LOG_ERR("imatrix: batch size %d must be smaller than the context %d or a multiple of it\n", n_batch, n_ctx);
        goto done;
    }
    batch = llama_batch_init(n_batch < n_ctx * n_seq ? n_batch : n_ctx * n_seq, 0, 1);
    batch_ok = true;
    if (params->compute_ppl && num_batches > 1) {
        logits_acc = malloc((size_t) n_ctx * (size_t) n_vocab * sizeof(float));
        if (!logits_acc) {
            LOG_ERR("imatrix: out of memory for %d x %d logits\n", n_ctx, n_vocab);
            goto done;
        }
    }

    LOG_INF("imatrix: computing over %d chunks, n_ctx=%d, batch_size=%d, n_seq=%d\n", n_chunk, n_ctx, n_batch, n_seq);

    double nll = 0.0, nll2 = 0.0;
    int count = 0;
    for (int i = 0; i < n_chunk; i += n_seq) {
        const int start = i * n_ctx;
        const int end = start + n_ctx;
        const int n_seq_batch = n_seq < n_chunk - i ? n_seq : n_chunk - i;
        const double t_start = now_s();
        int n_acc = 0;

        llama_memory_clear(llama_get_memory(ctx), true);

        for (int j = 0; j < num_batches; j++) {
            const int batch_start = start + j * n_batch;
            const int batch_size = end - batch_start < n_batch ? end - batch_start : n_batch;
            common_batch_clear(&batch);
            for (int seq = 0; seq < n_seq_batch; seq++) {
                const int seq_start = batch_start + seq * n_ctx;
                const llama_seq_id sid = seq;
                for (int k = 0; k < batch_size; k++) {
                    // every position is an output: the perplexity needs them and output.weight sees them all
                    const llama_token t = (add_bos && j == 0 && k == 0) ? llama_vocab_bos(vocab) : tok[seq_start + k];
                    common_batch_add(&batch, t, j * n_batch + k, &sid, 1, true);
                }
            }
            if (llama_decode(ctx, batch) != 0 || col->failed) {
                if (col->failed) {
                    LOG_ERR("imatrix: %s\n", col->err);
                } else {
                    LOG_ERR("imatrix: failed to decode chunk %d\n", i + 1);
                }
                goto done;
            }
            if (params->compute_ppl && num_batches > 1) {
                const float * bl = llama_get_logits(ctx);
                if (!bl) {
                    LOG_ERR("imatrix: no logits after decoding chunk %d\n", i + 1);
                    goto done;
                }
                memcpy(logits_acc + (size_t) n_acc * n_vocab, bl, (size_t) batch_size * n_vocab * sizeof(float));
                n_acc += batch_size;
            }
        }
        llama_synchronize(ctx);
        const double t_pass = now_s() - t_start;
        run->t_decode += t_pass;
        run->n_chunks += n_seq_batch;

        if (i == 0) {
            LOG_INF("imatrix: %.2f seconds per pass - ETA ", t_pass);
            int total = (int) (t_pass * n_chunk / n_seq);
            if (total >= 3600) {
                LOG("%d hours ", total / 3600);
                total %= 3600;
            }
            LOG("%.2f minutes\n", total / 60.0);
        }

        if (params->compute_ppl) {
            for (int seq = 0; seq < n_seq_batch; seq++) {
                const float * all = num_batches > 1 ? logits_acc : llama_get_logits_ith(ctx, seq * n_ctx);
                if (!all) {
                    LOG_ERR("imatrix: no logits for chunk %d\n", i + seq + 1);
                    goto done;
                }
                const llama_token * tk = tok + start + seq * n_ctx + first;
                for (int k = 0; k < n_ctx - 1 - first; k++) {
                    const double v = token_nll(n_vocab, all + (size_t) (first + k) * n_vocab, tk[k + 1]);
                    nll += v;
                    nll2 += v * v;
                }
                count += n_ctx - 1 - first;
                LOG("[%d]%.4lf,", i + seq + 1, exp(nll / count));
            }
            fflush(stdout);
        }

        if (!periodic_save(col, params)) {
            goto done;
        }
    }
    LOG("\n");

    if (params->compute_ppl && count > 1) {
        nll2 /= count;
        nll /= count;
        const double ppl = exp(nll);
        nll2 -= nll * nll;
        if (nll2 > 0) {
            LOG("Final estimate: PPL = %.4lf +/- %.5lf\n", ppl, sqrt(nll2 / (count - 1)) * ppl);
        } else {
            LOG("Unexpected negative standard deviation of log(prob)\n");
        }
    }
    ok = true;

done:
    if (batch_ok) {
        llama_batch_free(batch);
    }
    free(logits_acc);
    free(tokens);
    return ok;
}

int main(int argc, char ** argv) {
    setlocale(LC_NUMERIC, "C");

    struct common_params params = common_params_default();
    params.n_ctx = 512;
    params.escape = false;
    if (!common_params_set_str(&params.out_file, "imatrix.gguf") ||
        !common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_IMATRIX, print_usage)) {
        common_params_free(&params);
        return 1;
    }

    int rc = 1;
    struct imatrix_collector col;
    struct common_init_result init = { NULL, NULL };
    bool backend = false;

    if (params.show_statistics) {
        imatrix_collector_init(&col, params.n_ctx > 0 ? params.n_ctx : 512, false);
        rc = imatrix_show_statistics(&col, &params) ? 0 : 1;
        goto done;
    }

    common_init();

    const int32_t n_ctx = params.n_ctx;
    if (n_ctx <= 0) {
        LOG_ERR("main: imatrix tool requires '--ctx-size' > 0\n");
        common_params_free(&params);
        return 1;
    }
    common_params_chunks_per_batch(&params);

    imatrix_collector_init(&col, n_ctx, params.process_output);

    for (int i = 0; i < params.n_in_files; i++) {
        LOG_INF("main: loading imatrix from '%s'\n", params.in_files[i]);
        if (!imatrix_load(&col, params.in_files[i])) {
            LOG_ERR("main: failed to load %s: %s\n", params.in_files[i], col.err);
            goto done;
        }
    }

    if (!params.prompt) {
        if (params.n_in_files == 0) {
            LOG_ERR("Error: No prompt provided and no precomputed matrices (--in-file) to combine.\n");
            goto done;
        }
        LOG_INF("No prompt provided; combining precomputed matrices only.\n");
        LOG_INF("main: saving %simatrix to '%s'\n", params.n_in_files > 1 ? "combined " : "", params.out_file);
        rc = save(&col, &params, 0) ? 0 : 1;
        goto done;
    }

    // the output must be writable before minutes are spent computing it
    if (!common_output_writable(params.out_file)) {
        LOG_ERR("imatrix: cannot write the output %s: %s\n", params.out_file, strerror(errno));
        goto done;
    }

    llama_backend_init();
    backend = true;
    llama_numa_init(params.numa);

    // the scheduler shows every node to the collector as the graph is computed
    params.cb_eval = imatrix_collect;
    params.cb_eval_user_data = &col;
    params.warmup = false;

    init = common_init_from_params(&params);
    if (!init.model || !init.context) {
        LOG_ERR("main: failed to init\n");
        goto done;
    }
    const int n_ctx_train = llama_model_n_ctx_train(init.model);
    if (params.n_ctx > n_ctx_train) {
        LOG_WRN("main: model was trained on only %d context tokens (%d specified)\n", n_ctx_train, params.n_ctx);
    }
    LOG_INF("\n");
    LOG_INF("%s\n", common_params_get_system_info(&params));

    struct imatrix_run run = { &col, &params, 0.0, 0 };
    if (!compute_imatrix(init.context, &run, n_ctx)) {
        goto done;
    }
    imatrix_update_last_chunk(&col);
    if (col.n_entries == 0) {
        LOG_ERR("main: no activations were collected (chunks of fewer than 16 tokens are not collected)\n");
        goto done;
    }
    if (!save(&col, &params, 0)) {
        goto done;
    }
    LOG_INF("main: %d chunks of %d tokens in %.3f s (%.1f ms per chunk), imatrix written to %s\n", run.n_chunks,
            n_ctx, run.t_decode, run.n_chunks ? 1e3 * run.t_decode / run.n_chunks : 0.0, params.out_file);
    LOG("\n");
    llama_perf_context_print(init.context);
    rc = 0;

done:
    common_init_result_free(&init);
    imatrix_collector_free(&col);
    common_params_free(&params);
    if (backend) {
        llama_backend_free();
    }
    return rc;
}
