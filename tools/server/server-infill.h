// /infill's prompt layout (llama.cpp's format_prompt_infill), apart from the server so a test can drive it with
// any vocabulary.
#pragma once

#include "llama.h"

#include <jansson.h>

#include <stdbool.h>
#include <stddef.h>

// The FIM prompt, repo-level pattern (https://arxiv.org/pdf/2409.12186):
//   [extra] [BOS] FIM_PRE prefix prompt FIM_SUF suffix FIM_MID        (spm: FIM_SUF suffix ... FIM_PRE prefix prompt)
// extra = FIM_REP "myproject\n" (when the vocabulary has FIM_REP), then per input_extra chunk FIM_SEP filename "\n"
// (or a "--- snippet ---" separator without FIM_SEP) and its text, then FIM_SEP "filename\n".
// Budget, as llama.cpp: the last 3*(n_batch/4) prefix tokens, the first n_batch/4 - (2 + n_prompt) suffix tokens,
// the last n_ctx - n_batch - 2*n_predict extra tokens. extra is an array of {"text", "filename"} objects (checked
// by the caller). Returns the tokens (malloc'd, *n_out their count) or NULL when out of memory.
llama_token * server_infill_layout(const struct llama_vocab * vocab, const llama_token * prefix, size_t n_prefix,
                                   const llama_token * suffix, size_t n_suffix, const json_t * extra, int n_batch,
                                   int n_predict, int n_ctx, bool spm, const llama_token * prompt, size_t n_prompt,
                                   size_t * n_out);
