// llama-finetune: trains all F32 weights of a model (token embeddings excepted) on a text file with
// llama_opt_epoch, evaluating on the last val-split fraction, then saves the model. Flags follow llama.cpp's
// finetune example (common's option table, LLAMA_EXAMPLE_FINETUNE): -c tokens per datapoint, -b tokens per
// optimizer step, -ub tokens per micro-batch, -lr/-lr-min/-decay-epochs/-wd/-epochs/-opt/-val-split, -o output.

#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"

#include "gguf.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void print_usage(int argc, char ** argv) {
    (void) argc;
    LOG("\nexample usage:\n\n    %s -m model-f32.gguf -f train.txt -c 512 -b 512 -ub 512 -epochs 2 -o finetuned.gguf\n\n",
        argv[0]);
}

int main(int argc, char ** argv) {
    setlocale(LC_NUMERIC, "C");

    struct common_params params = common_params_default();
    params.n_ctx  = 512;
    params.escape = false;
    if (!common_params_set_str(&params.out_file, "finetuned-model.gguf") ||
        !common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_FINETUNE, print_usage)) {
        common_params_free(&params);
        return 1;
    }
    common_init();

    const char * model_path = params.model.path;
    const char * out = params.out_file;
    int32_t n_ctx = params.n_ctx, n_batch = params.n_batch, n_ubatch = params.n_ubatch;
    const float val_split = params.val_split;
    const enum ggml_opt_optimizer_type optimizer = params.optimizer;
    struct lr_opt lr = params.lr;

    if (model_path == NULL || params.prompt == NULL || params.prompt[0] == '\0') {
        LOG_ERR("error: need a model (-m) and training text (-f FILE or -p TEXT)\n");
        common_params_free(&params);
        return 1;
    }
    n_batch  = n_batch < n_ctx ? n_batch : n_ctx;
    n_ubatch = n_ubatch < n_batch ? n_ubatch : n_batch;
    if (n_ctx <= 0 || n_ctx % n_batch != 0 || n_batch % n_ubatch != 0) {
        LOG_ERR("error: need -c > 0, -b dividing -c and -ub dividing -b (got %d, %d, %d)\n", n_ctx, n_batch, n_ubatch);
        common_params_free(&params);
        return 1;
    }
    // the output must be writable before the run, not found unwritable after it
    if (!common_output_writable(out)) {
        LOG_ERR("error: cannot write the output %s: %s\n", out, strerror(errno));
        common_params_free(&params);
        return 1;
    }
    lr_opt_init(&lr);

    llama_backend_init();
    struct llama_model_params mp = common_model_params_to_llama(&params);
    mp.use_mmap        = false; // the weights must be writable
    mp.use_extra_bufts = false; // and readable by the backward pass (no repacking)
    struct llama_model * model = llama_model_load_from_file(model_path, mp);
    if (model == NULL) {
        LOG_ERR("error: unable to load model %s\n", model_path);
        common_params_free(&params);
        return 1;
    }
    struct llama_context_params cp = common_context_params_to_llama(&params);
    cp.n_ctx    = (uint32_t) n_ctx;
    cp.n_batch  = (uint32_t) n_batch;
    cp.n_ubatch = (uint32_t) n_ubatch;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    if (ctx == NULL) {
        LOG_ERR("error: failed to create the context\n");
        llama_model_free(model);
        common_params_free(&params);
        return 1;
    }

    llama_token * tokens = NULL;
    int32_t n_tokens = 0;
    const bool tok_ok = common_tokenize(llama_model_get_vocab(model), params.prompt, -1, true, false, &tokens, &n_tokens);
    ggml_opt_dataset_t dataset = tok_ok ? common_opt_dataset_init(ctx, tokens, n_tokens, llama_n_ctx(ctx) / 2) : NULL;
    free(tokens);
    if (dataset == NULL) {
        LOG_ERR("error: no training data (%d tokens for a context of %d)\n", n_tokens, n_ctx);
        llama_free(ctx);
        llama_model_free(model);
        common_params_free(&params);
        return 1;
    }

    LOG_INF("-optimizer %s -lr0 %.2g -wd %.2g -lr-min %.2g -min-epochs %.2g -epochs %u -period %.2g -val %.2g\n",
            ggml_opt_optimizer_name(optimizer), (double) lr.lr0, (double) lr.wd, (double) lr.lr_min,
            (double) lr.decay_epochs, lr.epochs, (double) n_batch / n_ubatch, (double) val_split);

    struct llama_opt_params lopt = {
        .n_ctx_train     = 0,
        .param_filter    = llama_opt_param_filter_all,
        .param_filter_ud = NULL,
        .get_opt_pars    = common_opt_lr_pars,
        .get_opt_pars_ud = &lr,
        .optimizer_type  = optimizer,
    };
    llama_opt_init(ctx, model, lopt);

    const int64_t idata_split = (int64_t) ((double) ggml_opt_dataset_ndata(dataset) * (1.0 - val_split));
    ggml_opt_result_t result_train = ggml_opt_result_init();
    ggml_opt_result_t result_eval  = ggml_opt_result_init();
    int rc = 0;
    for (lr.epoch = 0; lr.epoch < lr.epochs; lr.epoch++) {
        llama_opt_epoch(ctx, dataset, result_train, result_eval, idata_split, ggml_opt_epoch_callback_progress_bar,
                        ggml_opt_epoch_callback_progress_bar);
        fprintf(stderr, "\n");
        int64_t nd;
        ggml_opt_result_ndata(result_train, &nd);
        if (nd == 0 && idata_split > 0) {
            LOG_ERR("error: training did not run (see the log above)\n");
            rc = 1;
            break;
        }
        ggml_opt_result_reset(result_train);
        ggml_opt_result_reset(result_eval);
    }
    ggml_opt_result_free(result_train);
    ggml_opt_result_free(result_eval);
    ggml_opt_dataset_free(dataset);

    if (rc == 0) {
        // llama_model_save_to_file returns nothing: it writes a temporary name, which is read back to know that
        // it was written, and only then replaces the output
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.tmp", out);
        unlink(tmp);
        llama_model_save_to_file(model, tmp);
        struct gguf_init_params gp = { .no_alloc = true, .ctx = NULL };
        struct gguf_context * saved = gguf_init_from_file(tmp, gp);
        if (saved && rename(tmp, out) == 0) {
            LOG_INF("saved the finetuned model to %s\n", out);
        } else {
            LOG_ERR("error: saving the finetuned model to %s failed (see the log above)\n", out);
            unlink(tmp);
            rc = 1;
        }
        gguf_free(saved);
    }
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    common_params_free(&params);
    return rc;
}
