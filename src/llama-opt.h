// Training through libllama (llama_opt_init / llama_opt_epoch, llama-opt.c): the per-context state.
#pragma once

#include "ggml-backend.h"
#include "ggml-opt.h"

#ifdef __cplusplus
extern "C" {
#endif

struct llama_opt_state;

// frees the training state of a context (NULL: nothing)
void llama_opt_state_free(struct llama_opt_state * st);

#ifdef __cplusplus
}
#endif
