// Contexts: parameter resolution, decode (validate -> ubatches -> KV slots -> graph -> outputs), output getters,
// embeddings pooling, threads / callbacks, perf counters.
#include "llama-context.h"
#include "llama-context-sampling.h"

#include "llama-impl.h"
#include "llama-kv-cache.h"
#include "llama-model.h"
#include "llama-opt.h"
#include "llama-vocab.h"

#include "ggml-alloc.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t n_seq_max_eff(const struct llama_context * ctx) {
    return ctx->cparams.kv_unified ? LLAMA_MAX_SEQ : ctx->cparams.n_seq_max;
}

static bool resolve_cparams(const struct llama_model * model, const struct llama_context_params * p,
        struct llama_cparams * cp) {
    const struct llama_hparams * hp = &model->hparams;
    memset(cp, 0, sizeof(*cp));
    // reject out-of-range type ids before anything asks the type traits about them
    if ((int) p->type_k < 0 || p->type_k >= GGML_TYPE_COUNT || (int) p->type_v < 0 || p->type_v >= GGML_TYPE_COUNT) {
        LLAMA_LOG_ERROR("llama_init_from_model: invalid KV cache type (type_k = %d, type_v = %d)\n",
                (int) p->type_k, (int) p->type_v);
        return false;
    }
    if (p->n_seq_max == 0 || p->n_seq_max > LLAMA_MAX_SEQ) {
        LLAMA_LOG_ERROR("llama_init_from_model: n_seq_max = %u must be in [1, %d]\n", p->n_seq_max, LLAMA_MAX_SEQ);
        return false;
    }
    if (p->n_batch == 0) {
        LLAMA_LOG_ERROR("llama_init_from_model: n_batch must be > 0\n");
        return false;
    }
    cp->n_seq_max  = p->n_seq_max;
    cp->n_rs_seq   = p->n_rs_seq;
    cp->kv_unified = p->kv_unified;
    cp->n_ctx      = p->n_ctx == 0 ? hp->n_ctx_train : p->n_ctx;
    if (cp->n_ctx == 0) {
        LLAMA_LOG_ERROR("llama_init_from_model: n_ctx is 0 and the model states no training context\n");
        return false;
    }
    if (cp->kv_unified) {
        cp->n_ctx_seq = cp->n_ctx;
    } else {
        cp->n_ctx_seq = cp->n_ctx / cp->n_seq_max;
        if (cp->n_ctx_seq == 0) {
            LLAMA_LOG_ERROR("llama_init_from_model: n_ctx = %u is smaller than n_seq_max = %u\n", cp->n_ctx, cp->n_seq_max);
            return false;
        }
        cp->n_ctx = cp->n_ctx_seq * cp->n_seq_max;
    }

    cp->causal_attn = hp->causal_attn;
    if (p->attention_type != LLAMA_ATTENTION_TYPE_UNSPECIFIED) {
        cp->causal_attn = p->attention_type == LLAMA_ATTENTION_TYPE_CAUSAL;
    }
    // a causal model never needs more tokens in one batch than the context holds
    cp->n_batch  = cp->causal_attn && p->n_batch > cp->n_ctx ? cp->n_ctx : p->n_batch;
    cp->n_ubatch = p->n_ubatch == 0 ? cp->n_batch : (p->n_ubatch < cp->n_batch ? p->n_ubatch : cp->n_batch);

    cp->n_outputs_max = p->n_outputs_max == 0 ? cp->n_batch : p->n_outputs_max;
    cp->n_outputs_max_per_seq = p->n_outputs_max_per_seq == 0 ? cp->n_outputs_max
        : (p->n_outputs_max_per_seq < cp->n_outputs_max ? p->n_outputs_max_per_seq : cp->n_outputs_max);

    cp->n_threads       = p->n_threads > 0 ? p->n_threads : GGML_DEFAULT_N_THREADS;
    cp->n_threads_batch = p->n_threads_batch > 0 ? p->n_threads_batch : GGML_DEFAULT_N_THREADS;

    cp->rope_freq_base  = p->rope_freq_base  != 0.0f ? p->rope_freq_base  : hp->rope_freq_base_train;
    cp->rope_freq_scale = p->rope_freq_scale != 0.0f ? p->rope_freq_scale : hp->rope_freq_scale_train;
    cp->n_ctx_orig_yarn = p->yarn_orig_ctx != 0 ? p->yarn_orig_ctx
                        : hp->n_ctx_orig_yarn != 0 ? hp->n_ctx_orig_yarn : hp->n_ctx_train;
    enum llama_rope_scaling_type rst = p->rope_scaling_type == LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED
        ? hp->rope_scaling_type_train : p->rope_scaling_type;
    cp->yarn_ext_factor = p->yarn_ext_factor >= 0.0f ? p->yarn_ext_factor
                        : (rst == LLAMA_ROPE_SCALING_TYPE_YARN ? (hp->yarn_ext_factor >= 0.0f ? hp->yarn_ext_factor : 1.0f) : 0.0f);
    cp->yarn_attn_factor = p->yarn_attn_factor >= 0.0f ? p->yarn_attn_factor : hp->yarn_attn_factor;
    cp->yarn_beta_fast   = p->yarn_beta_fast   >= 0.0f ? p->yarn_beta_fast   : hp->yarn_beta_fast;
    cp->yarn_beta_slow   = p->yarn_beta_slow   >= 0.0f ? p->yarn_beta_slow   : hp->yarn_beta_slow;

    cp->pooling_type = p->pooling_type == LLAMA_POOLING_TYPE_UNSPECIFIED ? hp->pooling_type : p->pooling_type;
    cp->embeddings   = p->embeddings;
    cp->offload_kqv  = p->offload_kqv;
    cp->no_perf      = p->no_perf;
    cp->op_offload   = p->op_offload;
    cp->swa_full     = p->swa_full;

    // the CPU backend runs flash attention for every supported head size, so "auto" means enabled
    cp->flash_attn = p->flash_attn_type != LLAMA_FLASH_ATTN_TYPE_DISABLED;
    if (ggml_is_quantized(p->type_v) && !cp->flash_attn) {
        LLAMA_LOG_ERROR("llama_init_from_model: V cache quantization (%s) requires flash_attn\n", ggml_type_name(p->type_v));
        return false;
    }
    return true;
}

static bool has_swa_layers(const struct llama_hparams * hp) {
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        if (llama_hparams_is_swa(hp, il)) {
            return true;
        }
    }
    return false;
}

// cells of the SWA cache as llama.cpp sizes it: the window of every sequence plus one ubatch, padded to 256,
// never more than the full cache; without a unified cache each sequence gets that share
static uint32_t swa_cache_size(const struct llama_cparams * cp, const struct llama_hparams * hp) {
    if (cp->kv_unified) {
        const uint64_t want = GGML_PAD((uint64_t) hp->n_swa * cp->n_seq_max + cp->n_ubatch, 256);
        return want < cp->n_ctx ? (uint32_t) want : cp->n_ctx;
    }
    const uint64_t want = GGML_PAD((uint64_t) hp->n_swa + cp->n_ubatch, 256);
    const uint32_t per  = want < cp->n_ctx_seq ? (uint32_t) want : cp->n_ctx_seq;
    return per * cp->n_seq_max;
}

static void log_cparams(const struct llama_cparams * cp, const struct llama_hparams * hp) {
    LLAMA_LOG_INFO("llama_context: n_seq_max             = %u\n", cp->n_seq_max);
    LLAMA_LOG_INFO("llama_context: n_ctx                 = %u\n", cp->n_ctx);
    LLAMA_LOG_INFO("llama_context: n_ctx_seq             = %u\n", cp->n_ctx_seq);
    LLAMA_LOG_INFO("llama_context: n_batch               = %u\n", cp->n_batch);
    LLAMA_LOG_INFO("llama_context: n_ubatch              = %u\n", cp->n_ubatch);
    LLAMA_LOG_INFO("llama_context: causal_attn           = %d\n", cp->causal_attn);
    LLAMA_LOG_INFO("llama_context: flash_attn            = %s\n", cp->flash_attn ? "enabled" : "disabled");
    LLAMA_LOG_INFO("llama_context: kv_unified            = %s\n", cp->kv_unified ? "true" : "false");
    LLAMA_LOG_INFO("llama_context: freq_base             = %.1f\n", (double) cp->rope_freq_base);
    LLAMA_LOG_INFO("llama_context: freq_scale            = %g\n", (double) cp->rope_freq_scale);
    LLAMA_LOG_INFO("llama_context: n_rs_seq              = %u\n", cp->n_rs_seq);
    LLAMA_LOG_INFO("llama_context: n_outputs_max         = %u\n", cp->n_outputs_max);
    LLAMA_LOG_INFO("llama_context: n_outputs_max_per_seq = %u\n", cp->n_outputs_max_per_seq);
    if (cp->n_ctx_seq < hp->n_ctx_train) {
        LLAMA_LOG_WARN("llama_context: n_ctx_seq (%u) < n_ctx_train (%u) -- the full capacity of the model will not be utilized\n",
                cp->n_ctx_seq, hp->n_ctx_train);
    }
}

struct llama_context * llama_init_from_model(struct llama_model * model, struct llama_context_params params) {
    if (!model) {
        LLAMA_LOG_ERROR("llama_init_from_model: model is NULL\n");
        return NULL;
    }
    const struct llama_hparams * hp = &model->hparams;
    if (hp->vocab_only || !model->layers) {
        LLAMA_LOG_ERROR("llama_init_from_model: the model was loaded without weights (vocab_only)\n");
        return NULL;
    }
    if (params.ctx_type == LLAMA_CONTEXT_TYPE_MTP) {
        if (hp->n_layer_nextn == 0 || hp->router_layer >= 0) {
            LLAMA_LOG_WARN("llama_init_from_model: the model has no MTP layers\n");
        } else {
            LLAMA_LOG_WARN("llama_init_from_model: MTP contexts are not supported\n");
        }
        return NULL;
    }
    struct llama_context * ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        return NULL;
    }
    ctx->model = model;
    ctx->adapters.cvec.layer_start = -1; // no control vector
    ctx->adapters.cvec.layer_end   = -1;
    ctx->t_start_us = model->t_start_us;
    ctx->t_load_us  = model->t_load_us;
    llama_batch_allocr_init_empty(&ctx->balloc);
    if (!resolve_cparams(model, &params, &ctx->cparams)) {
        free(ctx);
        return NULL;
    }
    struct llama_cparams * cp = &ctx->cparams;
    ctx->abort_callback      = params.abort_callback;
    ctx->abort_callback_data = params.abort_callback_data;
    const char * reuse_off = getenv("LLAMA_GRAPH_REUSE_DISABLE");
    ctx->graph_reuse_disable = reuse_off && atoi(reuse_off) != 0;
    if (ctx->graph_reuse_disable) {
        LLAMA_LOG_WARN("llama_init_from_model: graph reuse disabled\n");
    }
    ctx->cb_eval             = params.cb_eval;
    ctx->cb_eval_user_data   = params.cb_eval_user_data;

    ctx->backend_cpu = ggml_backend_cpu_init();
    if (!ctx->backend_cpu) {
        LLAMA_LOG_ERROR("llama_init_from_model: failed to initialize the CPU backend\n");
        llama_free(ctx);
        return NULL;
    }
    ggml_backend_cpu_set_n_threads(ctx->backend_cpu, cp->n_threads);
    ggml_backend_cpu_set_abort_callback(ctx->backend_cpu, ctx->abort_callback, ctx->abort_callback_data);

    struct llama_kv_rope rope = {
        .freq_base      = cp->rope_freq_base,
        .freq_base_swa  = hp->rope_freq_base_train_swa,
        .freq_scale     = cp->rope_freq_scale,
        .freq_scale_swa = hp->rope_freq_scale_train_swa,
        .n_ctx_orig     = cp->n_ctx_orig_yarn,
        .ext_factor     = cp->yarn_ext_factor,
        .attn_factor    = cp->yarn_attn_factor,
        .beta_fast      = cp->yarn_beta_fast,
        .beta_slow      = cp->yarn_beta_slow,
    };
    // without flash attention V is kept transposed, the layout the KQ·V product reads
    const bool iswa = has_swa_layers(hp) && !cp->swa_full;
    ctx->mem = llama_kv_cache_init(model, cp->n_ctx, params.type_k, params.type_v, !cp->flash_attn,
            n_seq_max_eff(ctx), cp->kv_unified, iswa ? LLAMA_KV_LAYERS_NON_SWA : LLAMA_KV_LAYERS_ALL, &rope);
    if (ctx->mem && iswa) {
        ctx->mem->swa = llama_kv_cache_init(model, swa_cache_size(cp, hp), params.type_k, params.type_v,
                !cp->flash_attn, n_seq_max_eff(ctx), cp->kv_unified, LLAMA_KV_LAYERS_SWA, &rope);
        if (!ctx->mem->swa) {
            llama_kv_cache_free(ctx->mem);
            ctx->mem = NULL;
        }
    }
    if (!ctx->mem) {
        LLAMA_LOG_ERROR("llama_init_from_model: failed to initialize the KV cache (n_ctx = %u)\n", cp->n_ctx);
        llama_free(ctx);
        return NULL;
    }

    // samplers after the cparams (they need n_outputs_max_per_seq) and before the graph is sized
    if (!llama_ctx_sampling_init(ctx, &params)) {
        llama_free(ctx);
        return NULL;
    }
    ctx->max_nodes = llm_graph_max_nodes(model) + llama_ctx_sampling_graph_nodes(ctx, cp->n_ubatch);
    ctx->buf_meta_size = ggml_tensor_overhead() * ctx->max_nodes + ggml_graph_overhead_custom(ctx->max_nodes, false);
    ctx->buf_meta = malloc(ctx->buf_meta_size);
    ggml_backend_t backends[1] = { ctx->backend_cpu };
    ctx->sched = ggml_backend_sched_new(backends, NULL, 1, ctx->max_nodes, false, cp->op_offload);
    if (!ctx->buf_meta || !ctx->sched) {
        LLAMA_LOG_ERROR("llama_init_from_model: failed to create the graph scheduler\n");
        llama_free(ctx);
        return NULL;
    }
    const uint32_t n_seq = n_seq_max_eff(ctx);
    ctx->embd_seq    = calloc((size_t) n_seq * hp->n_embd, sizeof(float));
    ctx->embd_seq_ok = calloc(n_seq, sizeof(bool));
    if (!ctx->embd_seq || !ctx->embd_seq_ok) {
        llama_free(ctx);
        return NULL;
    }
    log_cparams(cp, hp);
    return ctx;
}

struct llama_context * llama_new_context_with_model(struct llama_model * model, struct llama_context_params params) {
    return llama_init_from_model(model, params);
}

void llama_free(struct llama_context * ctx) {
    if (!ctx) {
        return;
    }
    llama_context_drop_graph(ctx);
    llama_opt_state_free(ctx->opt);
    if (ctx->sched) {
        ggml_backend_sched_free(ctx->sched);
    }
    if (ctx->backend_cpu) {
        ggml_backend_free(ctx->backend_cpu);
    }
    llama_ctx_sampling_free(ctx);
    llama_ctx_adapters_free(&ctx->adapters);
    llama_kv_cache_free(ctx->mem);
    llama_batch_allocr_free(&ctx->balloc);
    free(ctx->buf_meta);
    free(ctx->logits);
    free(ctx->embd);
    free(ctx->output_ids);
    free(ctx->embd_seq);
    free(ctx->embd_seq_ok);
    free(ctx);
}

// ---- simple getters / setters -----------------------------------------------------------------------------

uint32_t llama_n_ctx      (const struct llama_context * ctx) { return ctx->cparams.n_ctx; }
uint32_t llama_n_ctx_seq  (const struct llama_context * ctx) { return ctx->cparams.n_ctx_seq; }
uint32_t llama_n_batch    (const struct llama_context * ctx) { return ctx->cparams.n_batch; }
uint32_t llama_n_ubatch   (const struct llama_context * ctx) { return ctx->cparams.n_ubatch; }
uint32_t llama_n_seq_max  (const struct llama_context * ctx) { return ctx->cparams.n_seq_max; }
uint32_t llama_n_rs_seq   (const struct llama_context * ctx) { return ctx->cparams.n_rs_seq; }

const struct llama_model * llama_get_model(const struct llama_context * ctx) { return ctx->model; }
llama_memory_t llama_get_memory(const struct llama_context * ctx) { return ctx->mem; }
enum llama_pooling_type llama_pooling_type(const struct llama_context * ctx) { return ctx->cparams.pooling_type; }

void llama_set_n_threads(struct llama_context * ctx, int32_t n_threads, int32_t n_threads_batch) {
    if (n_threads > 0) {
        ctx->cparams.n_threads = n_threads;
    }
    if (n_threads_batch > 0) {
        ctx->cparams.n_threads_batch = n_threads_batch;
    }
}

int32_t llama_n_threads(struct llama_context * ctx) { return ctx->cparams.n_threads; }
int32_t llama_n_threads_batch(struct llama_context * ctx) { return ctx->cparams.n_threads_batch; }

void llama_set_embeddings(struct llama_context * ctx, bool embeddings) { ctx->cparams.embeddings = embeddings; }
void llama_set_causal_attn(struct llama_context * ctx, bool causal_attn) { ctx->cparams.causal_attn = causal_attn; }
void llama_set_warmup(struct llama_context * ctx, bool warmup) { ctx->cparams.warmup = warmup; }

void llama_set_abort_callback(struct llama_context * ctx, ggml_abort_callback abort_callback, void * abort_callback_data) {
    ctx->abort_callback      = abort_callback;
    ctx->abort_callback_data = abort_callback_data;
    ggml_backend_cpu_set_abort_callback(ctx->backend_cpu, abort_callback, abort_callback_data);
}

void llama_synchronize(struct llama_context * ctx) {
    // graphs run synchronously on the CPU backend; nothing is in flight after llama_decode returns
    ggml_backend_sched_synchronize(ctx->sched);
}

void llama_attach_threadpool(struct llama_context * ctx, struct ggml_threadpool * threadpool,
        struct ggml_threadpool * threadpool_batch) {
    (void) threadpool_batch;
    ggml_backend_cpu_set_threadpool(ctx->backend_cpu, threadpool);
}

void llama_detach_threadpool(struct llama_context * ctx) {
    ggml_backend_cpu_set_threadpool(ctx->backend_cpu, NULL);
}

// ---- decode -----------------------------------------------------------------------------------------------

bool llama_context_reserve_outputs(struct llama_context * ctx, size_t n_outputs, size_t n_tokens) {
    const size_t n_vocab = ctx->model->hparams.n_vocab;
    const size_t n_embd  = ctx->model->hparams.n_embd;
    if (n_outputs > ctx->logits_cap) {
        float * l = realloc(ctx->logits, n_outputs * n_vocab * sizeof(float));
        if (!l) {
            return false;
        }
        // rows whose token a backend sampler picked are not copied out: never let them be uninitialized memory
        memset(l + ctx->logits_cap * n_vocab, 0, (n_outputs - ctx->logits_cap) * n_vocab * sizeof(float));
        ctx->logits = l;
        ctx->logits_cap = n_outputs;
    }
    if (ctx->cparams.embeddings && n_outputs > ctx->embd_cap) {
        float * e = realloc(ctx->embd, n_outputs * n_embd * sizeof(float));
        if (!e) {
            return false;
        }
        ctx->embd = e;
        ctx->embd_cap = n_outputs;
    }
    if (n_tokens > ctx->output_ids_cap) {
        int32_t * o = realloc(ctx->output_ids, n_tokens * sizeof(int32_t));
        if (!o) {
            return false;
        }
        ctx->output_ids = o;
        ctx->output_ids_cap = n_tokens;
    }
    return true;
}

static struct ggml_context * graph_ctx(struct llama_context * ctx) {
    struct ggml_init_params ip = {
        .mem_size   = ctx->buf_meta_size,
        .mem_buffer = ctx->buf_meta,
        .no_alloc   = true,
    };
    return ggml_init(ip);
}

static enum ggml_status compute(struct llama_context * ctx, struct ggml_cgraph * gf, int n_threads) {
    ggml_backend_cpu_set_n_threads(ctx->backend_cpu, n_threads);
    return ggml_backend_sched_graph_compute(ctx->sched, gf);
}

// re-rotates the K of one cache where seq_add / seq_div moved positions
static bool apply_kv_shift_one(struct llama_context * ctx, struct llama_memory_i * kv) {
    llama_context_drop_graph(ctx);
    struct ggml_context * ctx0 = graph_ctx(ctx);
    if (!ctx0) {
        return false;
    }
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx0, ctx->max_nodes, false);
    struct ggml_tensor * pos = NULL;
    bool ok = true;
    if (llama_kv_cache_build_shift(kv, ctx0, gf, &pos)) {
        ggml_backend_sched_reset(ctx->sched);
        ok = ggml_backend_sched_alloc_graph(ctx->sched, gf);
        if (ok) {
            int32_t * d = malloc((size_t) kv->size * sizeof(int32_t));
            ok = d != NULL;
            if (ok) {
                llama_kv_cache_fill_shift(kv, d);
                ggml_backend_tensor_set(pos, d, 0, (size_t) kv->size * sizeof(int32_t));
                free(d);
                ok = compute(ctx, gf, ctx->cparams.n_threads) == GGML_STATUS_SUCCESS;
            }
        }
        ggml_backend_sched_reset(ctx->sched);
    }
    ggml_free(ctx0);
    if (ok) {
        llama_kv_cache_shift_done(kv);
    } else {
        LLAMA_LOG_ERROR("llama_decode: failed to apply the KV cache shift\n");
    }
    return ok;
}

static bool apply_kv_shift(struct llama_context * ctx) {
    struct llama_memory_i * caches[2] = { ctx->mem, ctx->mem->swa };
    for (int i = 0; i < 2; i++) {
        if (caches[i] && caches[i]->has_shift && !apply_kv_shift_one(ctx, caches[i])) {
            return false;
        }
    }
    return true;
}

void llama_context_drop_graph(struct llama_context * ctx) {
    if (ctx->gf_ctx) {
        ggml_free(ctx->gf_ctx);
        ctx->gf_ctx = NULL;
        memset(&ctx->gf_res, 0, sizeof(ctx->gf_res));
    }
    if (ctx->sched) {
        ggml_backend_sched_reset(ctx->sched);
    }
}

// builds and allocates the graph of ub into ctx->gf_res (kept for reuse); false (logged) on failure
static bool build_graph(struct llama_context * ctx, const struct llama_ubatch * ub, uint32_t n_out) {
    llama_context_drop_graph(ctx);
    struct ggml_context * ctx0 = graph_ctx(ctx);
    if (!ctx0) {
        return false;
    }
    struct llm_graph * g = &ctx->gf_res;
    memset(g, 0, sizeof(*g));
    g->ctx0      = ctx0;
    g->gf        = ggml_new_graph_custom(ctx0, ctx->max_nodes, false);
    g->model     = ctx->model;
    g->hp        = &ctx->model->hparams;
    g->cp        = &ctx->cparams;
    g->ub        = ub;
    g->kv        = ctx->mem;
    g->n_tokens  = ub->n_tokens;
    g->n_outputs = n_out;
    g->n_kv      = ctx->gf_key.n_kv;
    g->n_kv_swa  = ctx->gf_key.n_kv_swa;
    g->adapters  = &ctx->adapters;
    if (!llm_graph_build(g) || !llama_ctx_sampling_build(ctx, g)) {
        ggml_free(ctx0);
        memset(g, 0, sizeof(*g));
        return false;
    }
    if (!ggml_backend_sched_alloc_graph(ctx->sched, g->gf)) {
        LLAMA_LOG_ERROR("llama_decode: failed to allocate the compute graph (%u tokens)\n", ub->n_tokens);
        ggml_free(ctx0);
        memset(g, 0, sizeof(*g));
        ggml_backend_sched_reset(ctx->sched);
        return false;
    }
    ctx->gf_ctx = ctx0;
    return true;
}

// runs one ubatch; 0 ok, 2 aborted, -3 failure. Output rows go to row_off.. in emission order.
static int process_ubatch(struct llama_context * ctx, const struct llama_ubatch * ub, const int64_t * idxs,
        const int64_t * idxs_swa, uint32_t n_out, size_t row_off) {
    struct llm_graph_key key;
    memset(&key, 0, sizeof(key));
    key.n_tokens    = ub->n_tokens;
    key.n_outputs   = n_out;
    key.n_kv        = llama_kv_cache_n_kv(ctx->mem);
    key.n_kv_swa    = ctx->mem->swa ? llama_kv_cache_n_kv(ctx->mem->swa) : 0;
    key.has_token   = ub->token != NULL;
    key.causal_attn = ctx->cparams.causal_attn;
    key.embeddings  = ctx->cparams.embeddings;
    const bool reuse = ctx->gf_ctx && !ctx->graph_reuse_disable && llm_graph_key_equal(&key, &ctx->gf_key) &&
                       llama_ctx_sampling_reuse(ctx, ub, n_out);
    ctx->gf_key = key;
    if (reuse) {
        ctx->n_reused++;
    } else if (!build_graph(ctx, ub, n_out)) {
        llama_context_drop_graph(ctx);
        return -3;
    }
    struct llm_graph * g = &ctx->gf_res;
    // the kept graph reads this ubatch's data
    g->ub         = ub;
    g->k_idxs     = idxs;
    g->k_idxs_swa = ctx->mem->swa ? idxs_swa : NULL;
    ggml_backend_sched_set_eval_callback(ctx->sched, ctx->cb_eval, ctx->cb_eval_user_data);
    llm_graph_set_inputs(g);
    llama_ctx_sampling_set_inputs(ctx);
    const int n_threads = ub->n_tokens == 1 ? ctx->cparams.n_threads : ctx->cparams.n_threads_batch;
    const enum ggml_status st = compute(ctx, g->gf, n_threads);
    int rc = 0;
    if (st == GGML_STATUS_ABORTED) {
        rc = 2;
    } else if (st != GGML_STATUS_SUCCESS) {
        LLAMA_LOG_ERROR("llama_decode: graph compute failed (status %d)\n", (int) st);
        llama_context_drop_graph(ctx);
        rc = -3;
    } else if (n_out > 0) {
        llama_ctx_sampling_copy_outputs(ctx, row_off);
        const size_t n_vocab = ctx->model->hparams.n_vocab;
        const size_t n_embd  = ctx->model->hparams.n_embd;
        if (g->t_logits && llama_ctx_sampling_needs_raw_logits(ctx, ub)) {
            ggml_backend_tensor_get(g->t_logits, ctx->logits + row_off * n_vocab, 0, n_out * n_vocab * sizeof(float));
        }
        if (ctx->cparams.embeddings && g->t_embd) {
            ggml_backend_tensor_get(g->t_embd, ctx->embd + row_off * n_embd, 0, n_out * n_embd * sizeof(float));
        }
    }
    return rc;
}

// outputs were produced in ubatch order (ba->out_ids); put the rows in batch order and map batch index -> row
static bool finish_outputs(struct llama_context * ctx, int32_t n_tokens) {
    const struct llama_batch_allocr * ba = &ctx->balloc;
    const size_t n_out = ba->n_out_ids;
    // every batch token is emitted at most once: first map each output token to its emission row
    for (int32_t i = 0; i < n_tokens; i++) {
        ctx->output_ids[i] = -1;
    }
    bool sorted = true;
    for (size_t r = 0; r < n_out; r++) {
        ctx->output_ids[ba->out_ids[r]] = (int32_t) r;
        sorted = sorted && (r == 0 || ba->out_ids[r] > ba->out_ids[r - 1]);
    }
    if (sorted) {
        // emission order is batch order: the emission row is the row
        ctx->n_outputs = (int32_t) n_out;
        ctx->n_batch_last = n_tokens;
        return true;
    }
    // rows in batch order: row k is the k-th output token in the batch, taken from emission row perm[k]
    const size_t n_vocab = ctx->model->hparams.n_vocab;
    const size_t n_embd  = ctx->model->hparams.n_embd;
    int32_t * perm = malloc(n_out * sizeof(int32_t));
    float   * tmp  = malloc(n_out * (n_vocab > n_embd ? n_vocab : n_embd) * sizeof(float));
    if (!perm || !tmp) {
        free(perm);
        free(tmp);
        return false;
    }
    int32_t row = 0;
    for (int32_t i = 0; i < n_tokens; i++) {
        if (ctx->output_ids[i] >= 0) {
            perm[row] = ctx->output_ids[i];
            ctx->output_ids[i] = row++;
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        float * src = pass == 0 ? ctx->logits : ctx->embd;
        const size_t w = pass == 0 ? n_vocab : n_embd;
        if (!src || (pass == 1 && !ctx->cparams.embeddings)) {
            continue;
        }
        for (size_t k = 0; k < n_out; k++) {
            memcpy(tmp + k * w, src + (size_t) perm[k] * w, w * sizeof(float));
        }
        memcpy(src, tmp, n_out * w * sizeof(float));
    }
    free(perm);
    free(tmp);
    ctx->n_outputs = (int32_t) n_out;
    ctx->n_batch_last = n_tokens;
    return true;
}

// pooled embeddings per sequence from the per-token rows (every token is an output with embeddings on)
static void pool_embeddings(struct llama_context * ctx) {
    const enum llama_pooling_type pt = ctx->cparams.pooling_type;
    const uint32_t n_seq  = n_seq_max_eff(ctx);
    const size_t   n_embd = ctx->model->hparams.n_embd;
    memset(ctx->embd_seq_ok, 0, n_seq * sizeof(bool));
    if (pt != LLAMA_POOLING_TYPE_MEAN && pt != LLAMA_POOLING_TYPE_CLS && pt != LLAMA_POOLING_TYPE_LAST) {
        return;
    }
    const struct llama_batch * b = &ctx->balloc.batch;
    for (uint32_t s = 0; s < n_seq; s++) {
        float * dst = ctx->embd_seq + s * n_embd;
        int32_t n = 0;
        llama_pos best = -1;
        for (int32_t i = 0; i < b->n_tokens; i++) {
            const int32_t row = ctx->output_ids[i];
            bool has = false;
            for (int32_t k = 0; k < b->n_seq_id[i]; k++) {
                has |= b->seq_id[i][k] == (llama_seq_id) s;
            }
            if (!has || row < 0) {
                continue;
            }
            const float * e = ctx->embd + (size_t) row * n_embd;
            if (pt == LLAMA_POOLING_TYPE_MEAN) {
                if (n == 0) {
                    memset(dst, 0, n_embd * sizeof(float));
                }
                for (size_t j = 0; j < n_embd; j++) {
                    dst[j] += e[j];
                }
                n++;
            } else if ((pt == LLAMA_POOLING_TYPE_CLS && (best < 0 || b->pos[i] < best)) ||
                       (pt == LLAMA_POOLING_TYPE_LAST && (best < 0 || b->pos[i] > best))) {
                best = b->pos[i];
                memcpy(dst, e, n_embd * sizeof(float));
                n = 1;
            }
        }
        if (n > 0 && pt == LLAMA_POOLING_TYPE_MEAN) {
            for (size_t j = 0; j < n_embd; j++) {
                dst[j] /= (float) n;
            }
        }
        ctx->embd_seq_ok[s] = n > 0;
    }
}

int32_t llama_decode(struct llama_context * ctx, struct llama_batch batch) {
    if (!ctx) {
        return -1;
    }
    const int64_t t_start = ggml_time_us();
    const struct llama_hparams * hp = &ctx->model->hparams;
    if (batch.n_tokens <= 0) {
        LLAMA_LOG_ERROR("llama_decode: n_tokens = %d must be > 0\n", batch.n_tokens);
        return -1;
    }
    if ((uint32_t) batch.n_tokens > ctx->cparams.n_batch) {
        LLAMA_LOG_ERROR("llama_decode: n_tokens = %d exceeds n_batch = %u\n", batch.n_tokens, ctx->cparams.n_batch);
        return -1;
    }
    const uint32_t n_seq = n_seq_max_eff(ctx);
    // one pass over the cells: a unified cache has LLAMA_MAX_SEQ sequences, one scan each would dominate a decode
    llama_pos mem_pos_max[LLAMA_MAX_SEQ];
    llama_kv_cache_seq_pos_max_all(ctx->mem, mem_pos_max);
    for (uint32_t s = n_seq; s < LLAMA_MAX_SEQ; s++) {
        mem_pos_max[s] = -1;
    }
    if (!llama_batch_allocr_init(&ctx->balloc, batch, (int32_t) hp->n_vocab, hp->n_embd, n_seq, mem_pos_max,
            ctx->cparams.embeddings)) {
        return -1;
    }
    struct llama_batch_allocr * ba = &ctx->balloc;
    const uint32_t n_outputs_all = ba->n_outputs;
    if (!llama_ctx_sampling_check_batch(ctx, &ba->batch)) {
        return -1;
    }
    if (!llama_ctx_sampling_begin(ctx, n_outputs_all)) {
        LLAMA_LOG_ERROR("llama_decode: out of memory for the sampled outputs\n");
        return -3;
    }
    if (!llama_context_reserve_outputs(ctx, n_outputs_all, (size_t) batch.n_tokens)) {
        LLAMA_LOG_ERROR("llama_decode: out of memory for %u outputs\n", n_outputs_all);
        return -3;
    }
    ctx->n_outputs = 0;
    ctx->n_batch_last = 0;
    struct llama_memory_i * swa = ctx->mem->swa;
    if ((ctx->mem->has_shift || (swa && swa->has_shift)) && !apply_kv_shift(ctx)) {
        return -3;
    }
    // cells of every ubatch so far, per cache: idxs + n_done is the current ubatch's. Only the small SWA cache
    // is saved for an undo: it may reuse and prune occupied cells. The main cache only fills empty cells (and
    // takes none when it fails), so freeing the cells the batch took undoes it, without copying all n_ctx cells
    // on every decode.
    struct llama_kv_cell * saved_swa = swa ? llama_kv_cache_cells_save(swa) : NULL;
    int64_t * idxs     = malloc((size_t) batch.n_tokens * sizeof(int64_t));
    int64_t * idxs_swa = swa ? malloc((size_t) batch.n_tokens * sizeof(int64_t)) : NULL;
    if (!idxs || (swa && (!saved_swa || !idxs_swa))) {
        free(saved_swa);
        free(idxs);
        free(idxs_swa);
        return -3;
    }
    llama_batch_allocr_split_reset(ba);
    size_t row_off = 0;
    uint32_t n_done = 0;
    int rc = 0;
    while (!llama_batch_allocr_done(ba)) {
        const uint32_t n_out_before = ba->n_out_ids;
        struct llama_ubatch ub = llama_batch_allocr_split_simple(ba, ctx->cparams.n_ubatch);
        if (ub.n_tokens == 0) {
            LLAMA_LOG_ERROR("llama_decode: failed to split the batch\n");
            rc = -3;
            break;
        }
        const bool slot_mem = llama_kv_cache_find_slot(ctx->mem, &ub, idxs + n_done);
        if (!slot_mem || (swa && !llama_kv_cache_find_slot(swa, &ub, idxs_swa + n_done))) {
            LLAMA_LOG_WARN("llama_decode: failed to find a memory slot for a batch of %u tokens (n_ctx = %u)\n",
                    ub.n_tokens, ctx->cparams.n_ctx);
            // undo the whole batch; SWA cells reused by earlier ubatches hold new data and stay free
            llama_kv_cache_drop_cells(ctx->mem, idxs, n_done + (slot_mem ? ub.n_tokens : 0));
            llama_kv_cache_cells_restore(swa, saved_swa, idxs_swa, n_done);
            saved_swa = NULL;
            rc = 1;
            break;
        }
        const uint32_t n_out = ba->n_out_ids - n_out_before;
        const int r = process_ubatch(ctx, &ub, idxs + n_done, swa ? idxs_swa + n_done : NULL, n_out, row_off);
        if (r != 0) {
            llama_kv_cache_drop_cells(ctx->mem, idxs + n_done, ub.n_tokens);
            if (swa) {
                llama_kv_cache_drop_cells(swa, idxs_swa + n_done, ub.n_tokens);
            }
            rc = r;
            break;
        }
        n_done  += ub.n_tokens;
        row_off += n_out;
    }
    free(saved_swa);
    free(idxs);
    free(idxs_swa);
    if (rc != 0) {
        return rc;
    }
    if (!finish_outputs(ctx, batch.n_tokens)) {
        return -3;
    }
    if (ctx->cparams.embeddings) {
        pool_embeddings(ctx);
    }
    if (!ctx->cparams.no_perf) {
        const int64_t dt = ggml_time_us() - t_start;
        if (batch.n_tokens > 1) {
            ctx->t_p_eval_us += dt;
            ctx->n_p_eval    += batch.n_tokens;
        } else {
            ctx->t_eval_us += dt;
            ctx->n_eval    += 1;
        }
    }
    return 0;
}

int32_t llama_encode(struct llama_context * ctx, struct llama_batch batch) {
    (void) batch;
    if (!ctx) {
        return -1;
    }
    LLAMA_LOG_ERROR("llama_encode: architecture '%s' has no encoder; use llama_decode\n",
            llm_arch_name(ctx->model->arch));
    return -1;
}

// ---- outputs ----------------------------------------------------------------------------------------------

float * llama_get_logits(struct llama_context * ctx) {
    return ctx->n_outputs > 0 ? ctx->logits : NULL;
}

static int32_t output_row(struct llama_context * ctx, int32_t i, const char * fn) {
    if (ctx->n_outputs <= 0) {
        LLAMA_LOG_ERROR("%s: no outputs (the last decode requested none)\n", fn);
        return -1;
    }
    if (i < 0) {
        if (i < -ctx->n_outputs) {
            LLAMA_LOG_ERROR("%s: invalid index %d (only %d outputs)\n", fn, i, ctx->n_outputs);
            return -1;
        }
        return ctx->n_outputs + i;
    }
    if (i >= ctx->n_batch_last) {
        LLAMA_LOG_ERROR("%s: index %d is out of range [0, %d)\n", fn, i, ctx->n_batch_last);
        return -1;
    }
    if (ctx->output_ids[i] < 0) {
        LLAMA_LOG_ERROR("%s: batch token %d has no output (its logits flag was 0)\n", fn, i);
        return -1;
    }
    return ctx->output_ids[i];
}

float * llama_get_logits_ith(struct llama_context * ctx, int32_t i) {
    const int32_t r = output_row(ctx, i, __func__);
    return r < 0 ? NULL : ctx->logits + (size_t) r * ctx->model->hparams.n_vocab;
}

float * llama_get_embeddings(struct llama_context * ctx) {
    return ctx->cparams.embeddings && ctx->n_outputs > 0 ? ctx->embd : NULL;
}

float * llama_get_embeddings_ith(struct llama_context * ctx, int32_t i) {
    if (!ctx->cparams.embeddings || !ctx->embd) {
        LLAMA_LOG_ERROR("%s: embeddings are disabled in this context\n", __func__);
        return NULL;
    }
    const int32_t r = output_row(ctx, i, __func__);
    return r < 0 ? NULL : ctx->embd + (size_t) r * ctx->model->hparams.n_embd;
}

float * llama_get_embeddings_seq(struct llama_context * ctx, llama_seq_id seq_id) {
    if (seq_id < 0 || (uint32_t) seq_id >= n_seq_max_eff(ctx) || !ctx->cparams.embeddings ||
        !ctx->embd_seq_ok[seq_id]) {
        return NULL;
    }
    return ctx->embd_seq + (size_t) seq_id * ctx->model->hparams.n_embd;
}

// ---- perf -------------------------------------------------------------------------------------------------

struct llama_perf_context_data llama_perf_context(const struct llama_context * ctx) {
    struct llama_perf_context_data d;
    memset(&d, 0, sizeof(d));
    if (!ctx) {
        return d;
    }
    d.t_start_ms  = 1e-3 * (double) ctx->t_start_us;
    d.t_load_ms   = 1e-3 * (double) ctx->t_load_us;
    d.t_p_eval_ms = 1e-3 * (double) ctx->t_p_eval_us;
    d.t_eval_ms   = 1e-3 * (double) ctx->t_eval_us;
    d.n_p_eval    = ctx->n_p_eval > 1 ? ctx->n_p_eval : 1;
    d.n_eval      = ctx->n_eval > 1 ? ctx->n_eval : 1;
    d.n_reused    = ctx->n_reused > 0 ? ctx->n_reused : 0;
    return d;
}

void llama_perf_context_print(const struct llama_context * ctx) {
    const struct llama_perf_context_data d = llama_perf_context(ctx);
    const double t_end_ms = 1e-3 * (double) ggml_time_us();
    LLAMA_LOG_INFO("llama_perf_context_print:        load time = %10.2f ms\n", d.t_load_ms);
    LLAMA_LOG_INFO("llama_perf_context_print: prompt eval time = %10.2f ms / %5d tokens (%8.2f ms per token, %8.2f tokens per second)\n",
            d.t_p_eval_ms, d.n_p_eval, d.t_p_eval_ms / d.n_p_eval, 1e3 / d.t_p_eval_ms * d.n_p_eval);
    LLAMA_LOG_INFO("llama_perf_context_print:        eval time = %10.2f ms / %5d runs   (%8.2f ms per token, %8.2f tokens per second)\n",
            d.t_eval_ms, d.n_eval, d.t_eval_ms / d.n_eval, 1e3 / d.t_eval_ms * d.n_eval);
    LLAMA_LOG_INFO("llama_perf_context_print:       total time = %10.2f ms / %5d tokens\n",
            t_end_ms - d.t_start_ms, d.n_p_eval + d.n_eval);
    LLAMA_LOG_INFO("llama_perf_context_print:    graphs reused = %10d\n", d.n_reused);
}

void llama_perf_context_reset(struct llama_context * ctx) {
    if (!ctx) {
        return;
    }
    ctx->t_start_us  = ggml_time_us();
    ctx->t_p_eval_us = 0;
    ctx->t_eval_us   = 0;
    ctx->n_p_eval    = 0;
    ctx->n_eval      = 0;
    ctx->n_reused    = 0;
}
