// ggml-opt results: per physical batch losses, predictions, and a count of correct predictions.
//
// Loss: a per-datapoint loss (mean, cross-entropy, MSE) is scaled by 1/opt_period in the graph so that the
// accumulated gradient is the mean over the logical batch; the result undoes that scaling and reports the mean
// over batches, with the standard error of that mean as uncertainty. A summed loss reports the total, with the
// uncertainty of a sum of nbatches values. Accuracy: ncorrect/ndata, with the binomial standard error.

#include "ggml-opt-impl.h"

#include "ggml-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ggml_opt_result {
    int64_t   ndata;
    float   * loss;     // [nloss] one per physical batch
    int64_t   nloss;
    int64_t   cap_loss;
    int32_t * pred;     // [npred]
    int64_t   npred;
    int64_t   cap_pred;
    int64_t   ncorrect; // -1: unknown

    int32_t opt_period;
    bool    loss_per_datapoint;
};

ggml_opt_result_t ggml_opt_result_init(void) {
    return calloc(1, sizeof(struct ggml_opt_result));
}

void ggml_opt_result_free(ggml_opt_result_t result) {
    if (result == NULL) {
        return;
    }
    free(result->loss);
    free(result->pred);
    free(result);
}

void ggml_opt_result_reset(ggml_opt_result_t result) {
    result->ndata    = 0;
    result->nloss    = 0;
    result->npred    = 0;
    result->ncorrect = 0;
}

// grows *buf (elements of size elt) to hold at least need elements
static void grow(void ** buf, int64_t * cap, int64_t need, size_t elt) {
    if (need <= *cap) {
        return;
    }
    int64_t n = *cap > 0 ? *cap : 16;
    while (n < need) {
        n *= 2;
    }
    void * p = realloc(*buf, (size_t) n * elt);
    GGML_ASSERT(p != NULL && "out of memory");
    *buf = p;
    *cap = n;
}

void ggml_opt_result_add(ggml_opt_result_t result, int64_t ndata, float loss, const int32_t * pred, int64_t ncorrect,
                         int32_t opt_period, bool loss_per_datapoint) {
    if (result->ndata == 0) {
        result->opt_period         = opt_period;
        result->loss_per_datapoint = loss_per_datapoint;
    } else {
        GGML_ASSERT(result->opt_period == opt_period && result->loss_per_datapoint == loss_per_datapoint &&
                    "a result cannot mix optimization contexts with different losses");
    }
    GGML_ASSERT(result->ndata == ndata * result->nloss && "varying batch size not supported");

    result->ndata += ndata;
    grow((void **) &result->loss, &result->cap_loss, result->nloss + 1, sizeof(float));
    result->loss[result->nloss++] = loss;

    if (pred) {
        grow((void **) &result->pred, &result->cap_pred, result->npred + ndata, sizeof(int32_t));
        memcpy(result->pred + result->npred, pred, (size_t) ndata * sizeof(int32_t));
        result->npred += ndata;
    }
    if (ncorrect < 0 || result->ncorrect < 0) {
        result->ncorrect = -1;
    } else {
        result->ncorrect += ncorrect;
    }
}

void ggml_opt_result_ndata(ggml_opt_result_t result, int64_t * ndata) {
    *ndata = result->ndata;
}

void ggml_opt_result_loss(ggml_opt_result_t result, double * loss, double * unc) {
    const int64_t nbatches = result->nloss;
    if (nbatches == 0) {
        *loss = 0.0;
        if (unc) {
            *unc = NAN;
        }
        return;
    }

    double sum = 0.0, sum_sq = 0.0;
    for (int64_t i = 0; i < nbatches; i++) {
        const double l = result->loss_per_datapoint ? (double) result->loss[i] * result->opt_period : (double) result->loss[i];
        sum    += l;
        sum_sq += l * l;
    }
    const double mean = sum / (double) nbatches;
    *loss = result->loss_per_datapoint ? mean : sum;

    if (!unc) {
        return;
    }
    if (nbatches < 2) {
        *unc = NAN;
        return;
    }
    // population variance; the Bessel correction n/(n-1) is folded into the factors below
    const double var = sum_sq / (double) nbatches - mean * mean;
    *unc = result->loss_per_datapoint ? sqrt(var / (double) (nbatches - 1))
                                      : sqrt(var * (double) nbatches / (double) (nbatches - 1));
}

void ggml_opt_result_pred(ggml_opt_result_t result, int32_t * pred) {
    if (result->npred > 0) {
        memcpy(pred, result->pred, (size_t) result->npred * sizeof(int32_t));
    }
}

void ggml_opt_result_accuracy(ggml_opt_result_t result, double * accuracy, double * unc) {
    const bool known = result->ncorrect >= 0 && result->ndata > 0;
    *accuracy = known ? (double) result->ncorrect / (double) result->ndata : NAN;
    if (!unc) {
        return;
    }
    *unc = known && result->ndata >= 2 ? sqrt(*accuracy * (1.0 - *accuracy) / (double) (result->ndata - 1)) : NAN;
}
