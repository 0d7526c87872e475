// Internals shared by the ggml-opt*.c files (not part of the public API).
#pragma once

#include "ggml-opt.h"

#include <stdint.h>

// next value of the optimization context's random number generator (used to shuffle datasets)
uint64_t ggml_opt_rng_next(ggml_opt_context_t opt_ctx);

// add one evaluated physical batch of ndata datapoints to result: its loss, its predictions (pred may be NULL)
// and its number of correct predictions (ncorrect < 0: not known, the accuracy becomes NaN). opt_period and
// loss_per_datapoint describe how the loss was scaled; they must not change while the result accumulates.
void ggml_opt_result_add(ggml_opt_result_t result, int64_t ndata, float loss, const int32_t * pred, int64_t ncorrect,
                         int32_t opt_period, bool loss_per_datapoint);
