// llama-finetune: trains all F32 weights of a model (token embeddings excepted) on a text file with
// llama_opt_epoch, evaluating on the last val-split fraction, then saves the model. Flags follow llama.cpp's
// finetune example: -c tokens per datapoint, -b tokens per optimizer step, -ub tokens per micro-batch.

#include "common.h"
#include "llama.h"

#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(const char * argv0) {
    fprintf(stderr,
            "usage: %s -m MODEL (-f FILE | -p TEXT) [options]\n"
            "  -m,   --model FNAME                 model to finetune (F32 weights are trained)\n"
            "  -f,   --file FNAME                  training text\n"
            "  -p,   --prompt TEXT                 training text given inline\n"
            "  -o,   --output, --output-file FNAME where to save the model (default: finetuned-model.gguf)\n"
            "  -c,   --ctx-size N                  tokens per datapoint (default: 512, at most the model's context)\n"
            "  -b,   --batch-size N                tokens per optimizer step, divides ctx-size (default: 2048, at most ctx-size)\n"
            "  -ub,  --ubatch-size N               tokens per micro-batch, divides batch-size (default: 512, at most batch-size)\n"
            "  -t,   --threads N                   threads (default: all cores)\n"
            "  -lr,  --learning-rate ALPHA         learning rate (adamw or sgd, default: 1e-5)\n"
            "  -lr-min, --learning-rate-min ALPHA  final learning rate after decay (default: -1, no decay)\n"
            "  -decay-epochs, --learning-rate-decay-epochs E  decay the learning rate over E epochs (default: all)\n"
            "  -wd,  --weight-decay WD             weight decay (default: 0)\n"
            "  -val-split, --val-split FRACTION    fraction of the data used for validation (default: 0.05)\n"
            "  -epochs, --epochs N                 epochs (default: 2)\n"
            "  -opt, --optimizer adamw|sgd         optimizer (default: adamw)\n",
            argv0);
}

static bool is(const char * a, const char * s, const char * l) {
    return strcmp(a, s) == 0 || (l && strcmp(a, l) == 0);
}

int main(int argc, char ** argv) {
    setlocale(LC_NUMERIC, "C");

    const char * model_path = NULL, * file = NULL, * prompt = NULL, * out = "finetuned-model.gguf";
    int32_t n_ctx = 512, n_batch = 2048, n_ubatch = 512;
    int32_t n_threads = (int32_t) sysconf(_SC_NPROCESSORS_ONLN);
    float   val_split = 0.05f;
    enum ggml_opt_optimizer_type optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    struct lr_opt lr = lr_opt_default();

    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        if (is(a, "-h", "--help")) {
            usage(argv[0]);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "error: %s needs a value (or is unknown)\n", a);
            usage(argv[0]);
            return 1;
        }
        const char * v = argv[++i];
        if      (is(a, "-m", "--model"))                        { model_path = v; }
        else if (is(a, "-f", "--file"))                         { file = v; }
        else if (is(a, "-p", "--prompt"))                       { prompt = v; }
        else if (is(a, "-o", "--output") || is(a, "--output-file", NULL)) { out = v; }
        else if (is(a, "-c", "--ctx-size"))                     { n_ctx = atoi(v); }
        else if (is(a, "-b", "--batch-size"))                   { n_batch = atoi(v); }
        else if (is(a, "-ub", "--ubatch-size"))                 { n_ubatch = atoi(v); }
        else if (is(a, "-t", "--threads"))                      { n_threads = atoi(v); }
        else if (is(a, "-lr", "--learning-rate"))               { lr.lr0 = strtof(v, NULL); }
        else if (is(a, "-lr-min", "--learning-rate-min"))       { lr.lr_min = strtof(v, NULL); }
        else if (is(a, "-decay-epochs", "--learning-rate-decay-epochs")) { lr.decay_epochs = strtof(v, NULL); }
        else if (is(a, "-wd", "--weight-decay"))                { lr.wd = strtof(v, NULL); }
        else if (is(a, "-val-split", "--val-split"))            { val_split = strtof(v, NULL); }
        else if (is(a, "-epochs", "--epochs"))                  { lr.epochs = (unsigned) atoi(v); }
        else if (is(a, "-opt", "--optimizer")) {
            if (strcmp(v, "adamw") == 0) {
                optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
            } else if (strcmp(v, "sgd") == 0) {
                optimizer = GGML_OPT_OPTIMIZER_TYPE_SGD;
            } else {
                fprintf(stderr, "error: invalid optimizer '%s' (adamw or sgd)\n", v);
                return 1;
            }
        } else {
            fprintf(stderr, "error: unknown argument: %s\n", a);
            usage(argv[0]);
            return 1;
        }
    }
    if (model_path == NULL || (file == NULL && prompt == NULL)) {
        usage(argv[0]);
        return 1;
    }
    n_batch  = n_batch < n_ctx ? n_batch : n_ctx;
    n_ubatch = n_ubatch < n_batch ? n_ubatch : n_batch;
    if (n_ctx <= 0 || n_batch <= 0 || n_ubatch <= 0 || n_ctx % n_batch != 0 || n_batch % n_ubatch != 0 || n_threads <= 0 ||
        !(val_split >= 0.0f && val_split < 1.0f) || lr.lr0 <= 0.0f || lr.wd < 0.0f || lr.wd > 1.0f) {
        fprintf(stderr, "error: need -c > 0, -b dividing -c, -ub dividing -b, -t > 0, -val-split in [0, 1), -lr > 0, "
                        "-wd in [0, 1]\n");
        return 1;
    }
    lr_opt_init(&lr);

    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.use_mmap        = false; // the weights must be writable
    mp.use_extra_bufts = false; // and readable by the backward pass (no repacking)
    struct llama_model * model = llama_model_load_from_file(model_path, mp);
    if (model == NULL) {
        fprintf(stderr, "error: unable to load model %s\n", model_path);
        return 1;
    }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx           = (uint32_t) n_ctx;
    cp.n_batch         = (uint32_t) n_batch;
    cp.n_ubatch        = (uint32_t) n_ubatch;
    cp.n_threads       = n_threads;
    cp.n_threads_batch = n_threads;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    if (ctx == NULL) {
        fprintf(stderr, "error: failed to create the context\n");
        llama_model_free(model);
        return 1;
    }

    char * text = prompt ? NULL : common_read_file(file, NULL);
    if (!prompt && text == NULL) {
        fprintf(stderr, "error: cannot read %s\n", file);
        llama_free(ctx);
        llama_model_free(model);
        return 1;
    }
    llama_token * tokens = NULL;
    int32_t n_tokens = 0;
    const bool tok_ok = common_tokenize(llama_model_get_vocab(model), prompt ? prompt : text, -1, true, false, &tokens, &n_tokens);
    free(text);
    ggml_opt_dataset_t dataset = tok_ok ? common_opt_dataset_init(ctx, tokens, n_tokens, llama_n_ctx(ctx) / 2) : NULL;
    free(tokens);
    if (dataset == NULL) {
        fprintf(stderr, "error: no training data (%d tokens for a context of %d)\n", n_tokens, n_ctx);
        llama_free(ctx);
        llama_model_free(model);
        return 1;
    }

    fprintf(stderr, "-optimizer %s -lr0 %.2g -wd %.2g -lr-min %.2g -min-epochs %.2g -epochs %u -period %.2g -val %.2g\n",
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
            fprintf(stderr, "error: training did not run (see the log above)\n");
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
        llama_model_save_to_file(model, out);
        fprintf(stderr, "saved the finetuned model to %s\n", out);
    }
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return rc;
}
