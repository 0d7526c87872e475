#include "sampling-init.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct common_sampler * common_sampler_init_checked(const struct llama_model * model,
                                                    const struct common_params_sampling * sp, char * err,
                                                    size_t err_size) {
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    for (int32_t i = 0; i < sp->n_logit_bias; i++) {
        if (sp->logit_bias[i].token < 0 || sp->logit_bias[i].token >= n_vocab) {
            snprintf(err, err_size, "logit bias token %d is out of range (the vocabulary has %d tokens)",
                     sp->logit_bias[i].token, n_vocab);
            return NULL;
        }
    }
    struct common_params_sampling merged = *sp;
    llama_logit_bias * bias = NULL;
    if (sp->ignore_eos) {
        int32_t n_eog = 0;
        for (llama_token t = 0; t < n_vocab; t++) {
            n_eog += llama_vocab_is_eog(vocab, t) ? 1 : 0;
        }
        if (n_eog > 0) {
            bias = malloc(((size_t) sp->n_logit_bias + (size_t) n_eog) * sizeof(*bias));
            if (!bias) {
                snprintf(err, err_size, "out of memory");
                return NULL;
            }
            if (sp->n_logit_bias > 0) {
                memcpy(bias, sp->logit_bias, (size_t) sp->n_logit_bias * sizeof(*bias));
            }
            int32_t n = sp->n_logit_bias;
            for (llama_token t = 0; t < n_vocab; t++) {
                if (llama_vocab_is_eog(vocab, t)) {
                    bias[n].token = t;
                    bias[n].bias  = -INFINITY;
                    n++;
                }
            }
            merged.logit_bias   = bias;
            merged.n_logit_bias = n;
        }
    }
    struct common_sampler * smpl = common_sampler_init(model, &merged);
    free(bias);
    if (!smpl) {
        snprintf(err, err_size, "failed to initialize the sampler");
    }
    return smpl;
}
