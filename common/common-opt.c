// Training helpers shared by programs (llama.cpp's common_opt_dataset_init, lr_opt, common_opt_lr_pars): a
// next-token dataset from a token sequence and a halving learning-rate schedule.

#include "common.h"

#include <math.h>
#include <string.h>

struct lr_opt lr_opt_default(void) {
    struct lr_opt lr;
    memset(&lr, 0, sizeof(lr));
    lr.lr0          = 1e-5f;
    lr.lr_min       = -1.0f;
    lr.decay_epochs = -1.0f;
    lr.wd           = 0.0f;
    lr.epochs       = 2;
    return lr;
}

void lr_opt_init(struct lr_opt * lr) {
    if (lr->lr_min > 0 && lr->lr_min < lr->lr0) {
        // halvings from lr0 to lr_min, spread over the decay epochs
        const float nhalf = logf(lr->lr0 / lr->lr_min) / logf(2.0f);
        float e = (float) lr->epochs;
        if (lr->decay_epochs > 0 && lr->decay_epochs < e) {
            e = lr->decay_epochs;
        } else {
            lr->decay_epochs = e;
        }
        lr->scale_epoch = nhalf / e;
    }
}

float lr_opt_get_lr(const struct lr_opt * lr, float epoch) {
    const float r = lr->lr_min <= 0 ? lr->lr0
                  : epoch >= lr->decay_epochs ? lr->lr_min
                  : lr->lr0 * powf(0.5f, epoch * lr->scale_epoch);
    LOG_INF("epoch %.2g lr=%.2g\n", (double) epoch, (double) r);
    return r;
}

struct ggml_opt_optimizer_params common_opt_lr_pars(void * userdata) {
    const struct lr_opt * d = userdata;
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    const float lr = lr_opt_get_lr(d, (float) d->epoch);
    p.adamw.alpha = lr;
    p.sgd.alpha   = lr;
    p.adamw.wd    = d->wd;
    p.sgd.wd      = d->wd;
    return p;
}

ggml_opt_dataset_t common_opt_dataset_init(struct llama_context * ctx, const llama_token * tokens, int64_t n_tokens,
                                           int64_t stride) {
    const int64_t ne_datapoint = llama_n_ctx(ctx);
    const int64_t ndata        = stride > 0 ? (n_tokens - ne_datapoint - 1) / stride : 0;
    if (stride <= 0 || ndata <= 0) {
        LOG_ERR("%s: %lld tokens give no datapoint of %lld tokens (+1 label) with stride %lld\n", __func__,
                (long long) n_tokens, (long long) ne_datapoint, (long long) stride);
        return NULL;
    }
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_I32, GGML_TYPE_I32, ne_datapoint, ne_datapoint, ndata, 1);
    if (ds == NULL) {
        return NULL;
    }
    llama_token * data   = (llama_token *) ggml_opt_dataset_data(ds)->data;
    llama_token * labels = (llama_token *) ggml_opt_dataset_labels(ds)->data;
    for (int64_t i = 0; i < ndata; i++) {
        memcpy(data + i * ne_datapoint, tokens + i * stride, (size_t) ne_datapoint * sizeof(llama_token));
        memcpy(labels + i * ne_datapoint, tokens + i * stride + 1, (size_t) ne_datapoint * sizeof(llama_token));
    }
    return ds;
}
