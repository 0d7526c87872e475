// common_init_from_params: kept apart from common.c because it is the only part of common that needs the
// context/decode half of libllama.
#include "common.h"

#include <stdlib.h>

struct common_init_result common_init_from_params(struct common_params * params) {
    struct common_init_result res = { NULL, NULL };

    if (!params->model.path || !params->model.path[0]) {
        LOG_ERR("%s: no model file given (use -m FILE)\n", __func__);
        return res;
    }

    struct llama_model_params mparams = common_model_params_to_llama(params);
    struct llama_model * model = llama_model_load_from_file(params->model.path, mparams);
    if (!model) {
        LOG_ERR("%s: failed to load model '%s'\n", __func__, params->model.path);
        return res;
    }

    struct llama_context_params cparams = common_context_params_to_llama(params);
    struct llama_context * lctx = llama_init_from_model(model, cparams);
    if (!lctx) {
        LOG_ERR("%s: failed to create context with model '%s'\n", __func__, params->model.path);
        llama_model_free(model);
        return res;
    }

    if (!common_adapters_apply(params, model, lctx)) {
        llama_free(lctx);
        llama_model_free(model);
        return res;
    }

    // -1 means "the whole context" for the penalty windows
    if (params->sampling.penalty_last_n == -1) {
        params->sampling.penalty_last_n = (int32_t) llama_n_ctx(lctx);
    }
    if (params->sampling.dry_penalty_last_n == -1) {
        params->sampling.dry_penalty_last_n = (int32_t) llama_n_ctx(lctx);
    }

    if (params->ctx_shift && !llama_memory_can_shift(llama_get_memory(lctx))) {
        LOG_WRN("%s: KV cache shifting is not supported for this context, disabling KV cache shifting\n", __func__);
        params->ctx_shift = false;
    }

    if (params->warmup) {
        LOG_WRN("%s: warming up the model with an empty run - please wait ... (--no-warmup to disable)\n", __func__);

        const struct llama_vocab * vocab = llama_model_get_vocab(model);
        llama_token tmp[2];
        int32_t n_tmp = 0;
        const llama_token bos = llama_vocab_bos(vocab);
        const llama_token eos = llama_vocab_eos(vocab);
        if (bos != LLAMA_TOKEN_NULL) {
            tmp[n_tmp++] = bos;
        }
        if (eos != LLAMA_TOKEN_NULL) {
            tmp[n_tmp++] = eos;
        }
        if (n_tmp == 0) {
            tmp[n_tmp++] = 0;
        }
        if ((uint32_t) n_tmp > llama_n_batch(lctx)) {
            n_tmp = (int32_t) llama_n_batch(lctx);
        }

        if (llama_model_has_encoder(model)) {
            llama_encode(lctx, llama_batch_get_one(tmp, n_tmp));
            llama_token start = llama_model_decoder_start_token(model);
            if (start == LLAMA_TOKEN_NULL) {
                start = bos;
            }
            tmp[0] = start;
            n_tmp  = 1;
        }
        if (llama_model_has_decoder(model)) {
            // a failed warmup is harmless: the real decode reports the problem
            (void) llama_decode(lctx, llama_batch_get_one(tmp, n_tmp));
        }
        llama_memory_clear(llama_get_memory(lctx), true);
        llama_synchronize(lctx);
        llama_perf_context_reset(lctx);
    }

    res.model   = model;
    res.context = lctx;
    return res;
}

void common_init_result_free(struct common_init_result * res) {
    if (!res) {
        return;
    }
    if (res->context) {
        llama_free(res->context);
    }
    if (res->model) {
        llama_model_free(res->model);
    }
    res->context = NULL;
    res->model   = NULL;
}
