// common_init_from_params: kept apart from common.c because it is the only part of common that needs the
// context/decode half of libllama.
#include "common.h"

#include <stdlib.h>
#include <string.h>

// --poll: llama.cpp's programs attach a thread pool built from cpuparams. Here a context gets one when the polling
// level differs from the CPU backend's default pool (50); it lives until common_init_result_free frees the context.
#define COMMON_INIT_MAX_POOLS 8
static struct {
    struct llama_context    * ctx;
    struct ggml_threadpool  * pool;
} g_pools[COMMON_INIT_MAX_POOLS];

static void attach_pool(struct llama_context * ctx, const struct common_params * params) {
    const struct common_cpu_params * cp = &params->cpuparams;
    if (cp->poll == 50) {
        return;
    }
    int slot = -1;
    for (int i = 0; i < COMMON_INIT_MAX_POOLS && slot < 0; i++) {
        slot = g_pools[i].ctx == NULL ? i : -1;
    }
    if (slot < 0) {
        LOG_WRN("%s: too many contexts; --poll %u does not apply to this one\n", __func__, (unsigned) cp->poll);
        return;
    }
    // one pool serves generation and batches: size it for the larger thread count
    const int n_threads = (int) (llama_n_threads(ctx) > llama_n_threads_batch(ctx) ? llama_n_threads(ctx)
                                                                                    : llama_n_threads_batch(ctx));
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
    tpp.poll = cp->poll;
    tpp.prio = cp->priority;
    tpp.strict_cpu = cp->strict_cpu;
    if (cp->mask_valid) {
        memcpy(tpp.cpumask, cp->cpumask, sizeof(tpp.cpumask));
    }
    struct ggml_threadpool * pool = ggml_threadpool_new(&tpp);
    if (!pool) {
        LOG_WRN("%s: failed to create a thread pool of %d threads; --poll %u does not apply\n", __func__, n_threads,
                (unsigned) cp->poll);
        return;
    }
    llama_attach_threadpool(ctx, pool, NULL);
    g_pools[slot].ctx  = ctx;
    g_pools[slot].pool = pool;
}

// the pool attached to ctx (NULL: none), forgotten here: the caller frees it after the context
static struct ggml_threadpool * take_pool(const struct llama_context * ctx) {
    for (int i = 0; i < COMMON_INIT_MAX_POOLS; i++) {
        if (g_pools[i].ctx == ctx) {
            struct ggml_threadpool * pool = g_pools[i].pool;
            g_pools[i].ctx  = NULL;
            g_pools[i].pool = NULL;
            return pool;
        }
    }
    return NULL;
}

struct common_init_result common_init_from_params(struct common_params * params) {
    struct common_init_result res = { NULL, NULL };

    if (!params->model.path || !params->model.path[0]) {
        LOG_ERR("%s: no model file given (use -m FILE)\n", __func__);
        return res;
    }

    // what llama.cpp's programs do in main before loading: --numa (once per process) and --prio
    static bool numa_done = false;
    if (!numa_done && params->numa != GGML_NUMA_STRATEGY_DISABLED) {
        llama_numa_init(params->numa);
        numa_done = true;
    }
    if (params->cpuparams.priority != GGML_SCHED_PRIO_NORMAL) {
        (void) set_process_priority(params->cpuparams.priority);
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

    attach_pool(lctx, params);

    if (!common_adapters_apply(params, model, lctx)) {
        struct ggml_threadpool * pool = take_pool(lctx);
        llama_free(lctx);
        if (pool) {
            ggml_threadpool_free(pool);
        }
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
        struct ggml_threadpool * pool = take_pool(res->context);
        llama_free(res->context);
        if (pool) {
            ggml_threadpool_free(pool);
        }
    }
    if (res->model) {
        llama_model_free(res->model);
    }
    res->context = NULL;
    res->model   = NULL;
}
