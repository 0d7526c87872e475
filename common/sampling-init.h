// The sampler a generating program builds from its parameters, checked against the model: llama.cpp builds it in
// common_init_from_params, which also turns --ignore-eos into biases. Shared by llama-completion and llama-cli.
#pragma once

#include "sampling.h"

#include <stddef.h>

// common_sampler_init with every --logit-bias token checked against the vocabulary, and --ignore-eos as a -inf bias
// on every end-of-generation token, placed after the user's biases (as llama.cpp's common_init_from_params adds
// them). NULL with a one-line reason in err on bad parameters or when out of memory.
struct common_sampler * common_sampler_init_checked(const struct llama_model * model,
                                                    const struct common_params_sampling * sp, char * err,
                                                    size_t err_size);
