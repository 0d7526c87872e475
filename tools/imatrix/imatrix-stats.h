// --show-statistics: per-tensor and per-layer statistics of one imatrix file (llama.cpp's table for files
// that hold sums of squares only: Σ E[Act²], min, max, mean, σ, entropy, ZD score, cosine similarity with
// the same tensor of the previous layer).
#pragma once

#include "imatrix-collect.h"

#include "common.h"

// loads params->in_files[0] (exactly one is required) into c and prints the tables; false on error (logged)
bool imatrix_show_statistics(struct imatrix_collector * c, const struct common_params * params);
