// The high-level ggml-opt loops, built only on the public API: one epoch over a dataset (train on the front,
// evaluate on the back), a progress bar callback, and ggml_opt_fit (context, shuffling, epochs).

#include "ggml-opt.h"

#include "ggml-impl.h"

#include <inttypes.h>
#include <stdio.h>

void ggml_opt_epoch(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, ggml_opt_result_t result_train,
                    ggml_opt_result_t result_eval, int64_t idata_split, ggml_opt_epoch_callback callback_train,
                    ggml_opt_epoch_callback callback_eval) {
    GGML_ASSERT(ggml_opt_static_graphs(opt_ctx) && "ggml_opt_epoch requires static graphs");
    struct ggml_tensor * inputs = ggml_opt_inputs(opt_ctx);
    struct ggml_tensor * labels = ggml_opt_labels(opt_ctx);
    struct ggml_tensor * data   = ggml_opt_dataset_data(dataset);
    GGML_ASSERT(data->ne[0] == inputs->ne[0] && "dataset and inputs disagree on the datapoint size");

    const int64_t ndata       = data->ne[1];
    const int64_t ndata_batch = inputs->ne[1];
    GGML_ASSERT(ndata % ndata_batch == 0 && "the dataset must hold a whole number of batches");
    const int64_t nbatches = ndata / ndata_batch;

    idata_split = idata_split < 0 ? ndata : idata_split;
    GGML_ASSERT(idata_split <= ndata && idata_split % ndata_batch == 0);
    const int64_t ibatch_split = idata_split / ndata_batch;

    int64_t ibatch       = 0;
    int64_t t_loop_start = ggml_time_us();
    for (; ibatch < ibatch_split; ibatch++) {
        ggml_opt_alloc(opt_ctx, true);
        ggml_opt_dataset_get_batch(dataset, inputs, labels, ibatch);
        ggml_opt_eval(opt_ctx, result_train);
        if (callback_train) {
            callback_train(true, opt_ctx, dataset, result_train, ibatch + 1, ibatch_split, t_loop_start);
        }
    }
    t_loop_start = ggml_time_us();
    for (; ibatch < nbatches; ibatch++) {
        ggml_opt_alloc(opt_ctx, false);
        ggml_opt_dataset_get_batch(dataset, inputs, labels, ibatch);
        ggml_opt_eval(opt_ctx, result_eval);
        if (callback_eval) {
            callback_eval(false, opt_ctx, dataset, result_eval, ibatch + 1 - ibatch_split, nbatches - ibatch_split, t_loop_start);
        }
    }
}

static void split_hms(int64_t us, int64_t * h, int64_t * m, int64_t * s) {
    int64_t t = us / 1000000;
    *h = t / 3600;
    t -= *h * 3600;
    *m = t / 60;
    *s = t - *m * 60;
}

void ggml_opt_epoch_callback_progress_bar(bool train, ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset,
                                          ggml_opt_result_t result, int64_t ibatch, int64_t ibatch_max, int64_t t_start_us) {
    GGML_UNUSED(dataset);
    fprintf(stderr, "%s[", train ? "train: " : "val:   ");

    // 8 cells, each with 8 fill levels (U+2588 full block ... U+258F one eighth)
    static const char * const levels[8] = { "\u258F", "\u258E", "\u258D", "\u258C", "\u258B", "\u258A", "\u2589", "\u2588" };
    const int64_t bar_length = 8;
    for (int64_t j = 0; j < bar_length; j++) {
        // eighths of this cell that are done
        const int64_t done = ibatch_max > 0 ? (8 * bar_length * ibatch) / ibatch_max - 8 * j : 0;
        if (done >= 8) {
            fprintf(stderr, "%s", levels[7]);
        } else if (done >= 1) {
            fprintf(stderr, "%s", levels[done - 1]);
        } else {
            fprintf(stderr, " ");
        }
    }

    const int64_t batch_size = ggml_opt_inputs(opt_ctx)->ne[1];
    double loss, loss_unc, acc, acc_unc;
    ggml_opt_result_loss(result, &loss, &loss_unc);
    ggml_opt_result_accuracy(result, &acc, &acc_unc);

    const int64_t t_us  = ggml_time_us() - t_start_us;
    const int64_t eta_us = ibatch > 0 ? t_us * (ibatch_max - ibatch) / ibatch : 0;
    int64_t th, tm, ts, eh, em, es;
    split_hms(t_us, &th, &tm, &ts);
    split_hms(eta_us, &eh, &em, &es);

    fprintf(stderr,
            "] data=%07" PRId64 "/%07" PRId64 " loss=%.5lf\u00b1%.5lf acc=%.2lf\u00b1%.2lf%% "
            "t=%02" PRId64 ":%02" PRId64 ":%02" PRId64 " ETA=%02" PRId64 ":%02" PRId64 ":%02" PRId64 " \r",
            ibatch * batch_size, ibatch_max * batch_size, loss, loss_unc, 100.0 * acc, 100.0 * acc_unc, th, tm, ts, eh, em, es);
    if (ibatch == ibatch_max) {
        fprintf(stderr, "\n");
    }
    fflush(stderr);
}

void ggml_opt_fit(ggml_backend_sched_t backend_sched, struct ggml_context * ctx_compute, struct ggml_tensor * inputs,
                  struct ggml_tensor * outputs, ggml_opt_dataset_t dataset, enum ggml_opt_loss_type loss_type,
                  enum ggml_opt_optimizer_type optimizer, ggml_opt_get_optimizer_params get_opt_pars, int64_t nepoch,
                  int64_t nbatch_logical, float val_split, bool silent) {
    ggml_time_init();
    const int64_t t_start_us = ggml_time_us();

    const int64_t ndata           = ggml_opt_dataset_data(dataset)->ne[1];
    const int64_t nbatch_physical = inputs->ne[1];
    if (nbatch_logical <= 0 || ndata % nbatch_logical != 0 || nbatch_logical % nbatch_physical != 0 ||
        !(val_split >= 0.0f && val_split < 1.0f) || nepoch < 0) {
        GGML_LOG_ERROR("%s: need ndata (%" PRId64 ") a multiple of nbatch_logical (%" PRId64 "), itself a multiple of "
                       "the physical batch (%" PRId64 "), val_split in [0, 1) (got %f) and nepoch >= 0\n",
                       __func__, ndata, nbatch_logical, nbatch_physical, (double) val_split);
        return;
    }
    const int64_t opt_period       = nbatch_logical / nbatch_physical;
    const int64_t nbatches_logical = ndata / nbatch_logical;

    // the split falls on a logical batch boundary: validation data never takes part in an optimizer step
    const int64_t ibatch_split = (int64_t) ((1.0f - val_split) * (float) nbatches_logical) * opt_period;
    const int64_t idata_split  = ibatch_split * nbatch_physical;

    int64_t epoch = 1;

    struct ggml_opt_params params = ggml_opt_default_params(backend_sched, loss_type);
    params.ctx_compute     = ctx_compute;
    params.inputs          = inputs;
    params.outputs         = outputs;
    params.opt_period      = (int32_t) opt_period;
    params.get_opt_pars    = get_opt_pars;
    params.get_opt_pars_ud = &epoch;
    params.optimizer       = optimizer;
    ggml_opt_context_t opt_ctx = ggml_opt_init(params);
    if (opt_ctx == NULL) {
        return;
    }

    // shuffling only matters when a batch does not take all the data
    if (nbatch_logical < ndata) {
        ggml_opt_dataset_shuffle(opt_ctx, dataset, -1); // train and validation
    }

    ggml_opt_result_t result_train = ggml_opt_result_init();
    ggml_opt_result_t result_val   = ggml_opt_result_init();
    ggml_opt_epoch_callback cb     = silent ? NULL : ggml_opt_epoch_callback_progress_bar;

    for (; epoch <= nepoch; epoch++) {
        if (nbatch_logical < idata_split) {
            ggml_opt_dataset_shuffle(opt_ctx, dataset, idata_split); // the training part only
        }
        ggml_opt_result_reset(result_train);
        ggml_opt_result_reset(result_val);
        if (!silent) {
            fprintf(stderr, "%s: epoch %04" PRId64 "/%04" PRId64 ":\n", __func__, epoch, nepoch);
        }
        ggml_opt_epoch(opt_ctx, dataset, result_train, result_val, idata_split, cb, cb);
        if (!silent) {
            fprintf(stderr, "\n");
        }
    }

    if (!silent) {
        int64_t h, m, s;
        split_hms(ggml_time_us() - t_start_us, &h, &m, &s);
        fprintf(stderr, "%s: training took %02" PRId64 ":%02" PRId64 ":%02" PRId64 "\n", __func__, h, m, s);
    }

    ggml_opt_free(opt_ctx);
    ggml_opt_result_free(result_train);
    ggml_opt_result_free(result_val);
}
