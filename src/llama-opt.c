// Training through libllama: llama_opt_init marks the trainable weights and makes a ggml-opt context with a
// cross-entropy loss; llama_opt_epoch feeds it one context-sized datapoint at a time, in micro-batches of
// n_ubatch tokens with an optimizer step every n_batch tokens (as llama.cpp). The graph is the model's own
// (llm_graph_build) in training mode: the attention keeps the micro-batch's K / V differentiable and reads the
// earlier micro-batches' from the KV cache as constants (see attn_training in llama-graph.c), so every op has a
// backward pass. The graphs are rebuilt per micro-batch (ggml-opt's non-static mode) and run on a scheduler of
// their own, sized for the forward + backward + optimizer graph.

#include "llama-opt.h"

#include "llama-context.h"
#include "llama-graph.h"
#include "llama-arch.h"
#include "llama-impl.h"
#include "llama-kv-cache.h"
#include "llama-model.h"

#include "ggml-cpu.h"

#include <stdlib.h>
#include <string.h>

struct llama_opt_state {
    ggml_opt_context_t   opt_ctx;
    ggml_backend_sched_t sched;      // for the training graphs
    size_t               graph_size; // nodes of a training graph (forward + backward + optimizer)
    uint32_t             n_ctx;      // tokens per datapoint
    uint32_t             n_ubatch;   // tokens per micro-batch
    float              * onehot;     // n_ubatch x n_vocab labels, all zeros between micro-batches
};

void llama_opt_state_free(struct llama_opt_state * st) {
    if (st == NULL) {
        return;
    }
    ggml_opt_free(st->opt_ctx);
    free(st->onehot);
    if (st->sched) {
        ggml_backend_sched_free(st->sched);
    }
    free(st);
}

bool llama_opt_param_filter_all(const struct ggml_tensor * tensor, void * userdata) {
    (void) tensor;
    (void) userdata;
    return true;
}

// F32 weights passing the filter become parameters; token_embd and rope_freqs stay fixed as in llama.cpp
// (the embeddings' gradient would be a scatter over the vocabulary; rope_freqs is not a learned weight)
static int set_params(struct llama_model * model, llama_opt_param_filter filter, void * ud) {
    int n = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(model->ctx_w); t; t = ggml_get_next_tensor(model->ctx_w, t)) {
        if (t->type != GGML_TYPE_F32 || !filter(t, ud)) {
            continue;
        }
        if (strcmp(t->name, "token_embd.weight") == 0 || strstr(t->name, "rope_freqs") != NULL) {
            continue;
        }
        ggml_set_param(t);
        n++;
    }
    return n;
}

// whether the backward pass can go through model's graph; false (logged) otherwise. The ops it lacks a gradient
// for: the router of mixture-of-experts layers, GELU FFNs (geglu), the fused up+gate FFN; and the weights must
// be readable by the gradient ops (repacked weights are only readable by the forward matmul).
static bool trainable_model(const struct llama_model * model) {
    if (model->arch == LLM_ARCH_GEMMA3) {
        LLAMA_LOG_ERROR("llama_opt_init: %s uses a GELU-gated FFN, which has no backward pass\n", llm_arch_name(model->arch));
        return false;
    }
    for (uint32_t il = 0; il < model->hparams.n_layer; il++) {
        const struct llama_layer * L = &model->layers[il];
        if (L->ffn_gate_inp != NULL) {
            LLAMA_LOG_ERROR("llama_opt_init: mixture-of-experts layers (expert routing) have no backward pass\n");
            return false;
        }
        if (L->ffn_gate == NULL) {
            LLAMA_LOG_ERROR("llama_opt_init: the fused up+gate FFN (%s) has no backward pass\n", llm_arch_name(model->arch));
            return false;
        }
    }
    for (struct ggml_tensor * t = ggml_get_first_tensor(model->ctx_w); t; t = ggml_get_next_tensor(model->ctx_w, t)) {
        if (t->buffer != NULL && !ggml_backend_buffer_is_host(t->buffer)) {
            LLAMA_LOG_ERROR("llama_opt_init: weight %s is repacked (not readable by the backward pass); load the model "
                            "with use_extra_bufts = false to train\n", t->name);
            return false;
        }
    }
    return true;
}

void llama_opt_init(struct llama_context * lctx, struct llama_model * model, struct llama_opt_params lopt_params) {
    if (lctx == NULL || model == NULL || lctx->model != model) {
        LLAMA_LOG_ERROR("%s: need a context and the model it was created from\n", __func__);
        return;
    }
    if (lctx->opt != NULL) {
        LLAMA_LOG_ERROR("%s: the context is already set up for training\n", __func__);
        return;
    }
    if (lopt_params.param_filter == NULL || lopt_params.get_opt_pars == NULL) {
        LLAMA_LOG_ERROR("%s: param_filter and get_opt_pars must be set\n", __func__);
        return;
    }
    if (model->n_mappings > 0) {
        LLAMA_LOG_ERROR("%s: the model weights are memory-mapped from the file; load it with use_mmap = false to train\n",
                        __func__);
        return;
    }
    if (!trainable_model(model)) {
        return;
    }
    const struct llama_cparams * cp = &lctx->cparams;
    const uint32_t n_ctx = cp->n_ctx;
    if (lopt_params.n_ctx_train != 0 && lopt_params.n_ctx_train != n_ctx) {
        LLAMA_LOG_ERROR("%s: n_ctx_train = %u must be 0 or the context size %u (the datapoint length)\n", __func__,
                        lopt_params.n_ctx_train, n_ctx);
        return;
    }
    const uint32_t n_batch  = cp->n_batch < n_ctx ? cp->n_batch : n_ctx;
    const uint32_t n_ubatch = cp->n_ubatch < n_batch ? cp->n_ubatch : n_batch;
    if (n_ctx % n_batch != 0 || n_batch % n_ubatch != 0) {
        LLAMA_LOG_ERROR("%s: need n_ctx (%u) a multiple of n_batch (%u), itself a multiple of n_ubatch (%u)\n", __func__,
                        n_ctx, n_batch, n_ubatch);
        return;
    }
    // the micro-batches of a datapoint go to cache cells 0 .. n_ctx-1 (also in the sliding-window cache)
    const struct llama_memory_i * mem = lctx->mem;
    const struct llama_memory_i * caches[2] = { mem, mem ? mem->swa : NULL };
    for (int i = 0; i < 2; i++) {
        if ((i == 0 && caches[i] == NULL) || (caches[i] != NULL && caches[i]->size < n_ctx)) {
            LLAMA_LOG_ERROR("%s: training needs a KV cache of at least n_ctx = %u cells in every layer "
                            "(use swa_full with sliding-window models)\n", __func__, n_ctx);
            return;
        }
    }

    struct llama_opt_state * st = calloc(1, sizeof(*st));
    if (st == NULL) {
        return;
    }
    st->n_ctx    = n_ctx;
    st->n_ubatch = n_ubatch;
    // the backward pass adds a few nodes per forward node, the optimizer one per parameter
    st->graph_size = 8 * llm_graph_max_nodes(model);

    const int n_params = set_params(model, lopt_params.param_filter, lopt_params.param_filter_ud);
    if (n_params == 0) {
        LLAMA_LOG_ERROR("%s: no trainable tensors (only F32 weights passing the filter can be trained)\n", __func__);
        free(st);
        return;
    }

    st->sched = ggml_backend_sched_new(&lctx->backend_cpu, NULL, 1, st->graph_size, false, false);
    if (st->sched == NULL) {
        LLAMA_LOG_ERROR("%s: failed to create the training scheduler\n", __func__);
        free(st);
        return;
    }
    struct ggml_opt_params op = ggml_opt_default_params(st->sched, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    op.opt_period      = (int32_t) (n_batch / n_ubatch);
    op.get_opt_pars    = lopt_params.get_opt_pars;
    op.get_opt_pars_ud = lopt_params.get_opt_pars_ud;
    op.optimizer       = lopt_params.optimizer_type;
    st->opt_ctx = ggml_opt_init(op);
    if (st->opt_ctx == NULL) {
        llama_opt_state_free(st);
        return;
    }
    LLAMA_LOG_INFO("%s: %d trainable tensors, optimizer %s, %u tokens per step\n", __func__, n_params,
                   ggml_opt_optimizer_name(lopt_params.optimizer_type), n_batch);
    lctx->opt = st;
}

// where a micro-batch sits in the epoch, for the callback
struct opt_progress {
    ggml_opt_dataset_t      dataset;
    ggml_opt_epoch_callback cb;
    int64_t                 ibatch; // micro-batches done after this one
    int64_t                 ibatch_max;
    int64_t                 t_start_us;
};

// one micro-batch: tokens[0..n) at positions p0..p0+n-1 predicting labels[0..n), the earlier positions of the
// sequence being in cache cells 0..p0-1 (written by the previous micro-batches); false (logged) on failure. The
// callback runs before the graph's context goes (ggml_opt_inputs & co. point into it).
static bool opt_iter(struct llama_context * lctx, uint32_t p0, const llama_token * tokens, const llama_token * labels,
                     bool train, ggml_opt_result_t result, const struct opt_progress * pr) {
    struct llama_opt_state * st = lctx->opt;
    const struct llama_model * model = lctx->model;
    const uint32_t n       = st->n_ubatch;
    const int32_t  n_vocab = (int32_t) model->hparams.n_vocab;
    for (uint32_t i = 0; i < n; i++) {
        if (tokens[i] < 0 || tokens[i] >= n_vocab || labels[i] < 0 || labels[i] >= n_vocab) {
            LLAMA_LOG_ERROR("llama_opt_epoch: token %d or label %d at %u is outside the vocabulary (%d)\n", tokens[i],
                            labels[i], i, n_vocab);
            return false;
        }
    }

    // the ubatch: one sequence, every token an output
    llama_pos    * pos    = malloc(n * sizeof(llama_pos));
    int32_t      * nsid   = malloc(n * sizeof(int32_t));
    llama_seq_id * sid0   = calloc(n, sizeof(llama_seq_id));
    llama_seq_id ** sids  = malloc(n * sizeof(llama_seq_id *));
    int8_t       * output = malloc(n);
    int32_t      * idx    = malloc(n * sizeof(int32_t));
    llama_token  * tok    = malloc(n * sizeof(llama_token));
    // the labels' one-hot rows (n_ubatch x n_vocab floats, tens of MB) are allocated once and only the entries
    // of this micro-batch are set and cleared again, not zeroed whole each time
    GGML_ASSERT(n <= st->n_ubatch);
    if (st->onehot == NULL) {
        st->onehot = calloc((size_t) st->n_ubatch * (size_t) n_vocab, sizeof(float));
    }
    float * onehot = st->onehot;
    bool ok = pos && nsid && sid0 && sids && output && idx && tok && onehot;
    struct ggml_context * ctx0 = NULL;
    if (ok) {
        struct ggml_init_params ip = {
            4 * st->graph_size * ggml_tensor_overhead() + 3 * ggml_graph_overhead_custom(st->graph_size, true), NULL, true
        };
        ctx0 = ggml_init(ip);
        ok = ctx0 != NULL;
    }
    if (!ok) {
        LLAMA_LOG_ERROR("llama_opt_epoch: out of memory\n");
        goto done;
    }
    llama_seq_id seq_unq = 0;
    int32_t seq_idx[LLAMA_MAX_SEQ];
    for (int s = 0; s < LLAMA_MAX_SEQ; s++) {
        seq_idx[s] = -1;
    }
    seq_idx[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        pos[i]    = (llama_pos) (p0 + i);
        nsid[i]   = 1;
        sids[i]   = &sid0[i];
        output[i] = 1;
        idx[i]    = (int32_t) i;
        tok[i]    = tokens[i];
    }
    struct llama_ubatch ub;
    memset(&ub, 0, sizeof(ub));
    ub.n_tokens     = n;
    ub.n_seq_tokens = n;
    ub.n_seqs       = 1;
    ub.n_seqs_unq   = 1;
    ub.n_pos        = 1;
    ub.token        = tok;
    ub.pos          = pos;
    ub.n_seq_id     = nsid;
    ub.seq_id       = sids;
    ub.seq_id_unq   = &seq_unq;
    ub.seq_idx      = seq_idx;
    ub.output       = output;
    ub.idx          = idx;

    struct llm_graph g;
    memset(&g, 0, sizeof(g));
    g.ctx0      = ctx0;
    g.gf        = ggml_new_graph_custom(ctx0, st->graph_size, false);
    g.model     = model;
    g.hp        = &model->hparams;
    g.cp        = &lctx->cparams;
    g.ub        = &ub;
    g.kv        = lctx->mem;
    g.n_tokens  = n;
    g.n_outputs = n;
    g.n_kv      = p0 + n;
    g.n_kv_swa  = p0 + n;
    g.adapters  = &lctx->adapters;
    g.training  = true;
    if (!llm_graph_build(&g) || g.inp_tokens == NULL || g.t_logits == NULL) {
        LLAMA_LOG_ERROR("llama_opt_epoch: failed to build the training graph\n");
        ok = false;
        goto done;
    }

    ggml_opt_prepare_alloc(st->opt_ctx, ctx0, g.gf, g.inp_tokens, g.t_logits);
    ggml_opt_alloc(st->opt_ctx, train);
    llm_graph_set_inputs(&g);
    struct ggml_tensor * lab = ggml_opt_labels(st->opt_ctx);
    GGML_ASSERT(lab->ne[0] == n_vocab && lab->ne[1] == (int64_t) n);
    for (uint32_t i = 0; i < n; i++) {
        onehot[(size_t) i * (size_t) n_vocab + (size_t) labels[i]] = 1.0f;
    }
    ggml_backend_tensor_set(lab, onehot, 0, ggml_nbytes(lab));
    for (uint32_t i = 0; i < n; i++) {
        onehot[(size_t) i * (size_t) n_vocab + (size_t) labels[i]] = 0.0f;
    }
    ggml_backend_cpu_set_n_threads(lctx->backend_cpu, lctx->cparams.n_threads_batch);
    ggml_opt_eval(st->opt_ctx, result);
    if (pr->cb) {
        pr->cb(train, st->opt_ctx, pr->dataset, result, pr->ibatch, pr->ibatch_max, pr->t_start_us);
    }

done:
    ggml_free(ctx0);
    free(pos);
    free(nsid);
    free(sid0);
    free(sids);
    free(output);
    free(idx);
    free(tok);
    return ok;
}

void llama_opt_epoch(struct llama_context * lctx, ggml_opt_dataset_t dataset, ggml_opt_result_t result_train,
                     ggml_opt_result_t result_eval, int64_t idata_split, ggml_opt_epoch_callback callback_train,
                     ggml_opt_epoch_callback callback_eval) {
    if (lctx == NULL || lctx->opt == NULL || dataset == NULL) {
        LLAMA_LOG_ERROR("%s: the context is not set up for training (llama_opt_init)\n", __func__);
        return;
    }
    struct llama_opt_state * st = lctx->opt;
    const uint32_t n_ctx = st->n_ctx;
    const int64_t  ndata = ggml_opt_dataset_ndata(dataset);
    const struct ggml_tensor * data   = ggml_opt_dataset_data(dataset);
    const struct ggml_tensor * labels = ggml_opt_dataset_labels(dataset);
    if (data->type != GGML_TYPE_I32 || data->ne[0] != (int64_t) n_ctx || labels == NULL ||
        labels->type != GGML_TYPE_I32 || labels->ne[0] != (int64_t) n_ctx) {
        LLAMA_LOG_ERROR("%s: the dataset must hold I32 token datapoints and labels of n_ctx = %u tokens\n", __func__, n_ctx);
        return;
    }
    if (idata_split < 0 || idata_split > ndata) {
        LLAMA_LOG_ERROR("%s: idata_split = %lld outside [0, %lld]\n", __func__, (long long) idata_split, (long long) ndata);
        return;
    }
    // a kept inference graph would share nothing with training, but its scheduler memory can go; the KV cache
    // holds the training sequence's K / V from now on (cleared as in llama.cpp)
    llama_context_drop_graph(lctx);
    llama_memory_clear(llama_get_memory(lctx), true);

    const int64_t ubatch_per_ctx = n_ctx / st->n_ubatch;
    llama_token * tokens = malloc(n_ctx * sizeof(llama_token));
    llama_token * lbls   = malloc(n_ctx * sizeof(llama_token));
    if (tokens == NULL || lbls == NULL) {
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
        free(tokens);
        free(lbls);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        const bool    train = pass == 0;
        const int64_t i0    = train ? 0 : idata_split;
        const int64_t i1    = train ? idata_split : ndata;
        ggml_opt_result_t       result = train ? result_train : result_eval;
        ggml_opt_epoch_callback cb     = train ? callback_train : callback_eval;
        const int64_t t_start = ggml_time_us();
        for (int64_t idata = i0; idata < i1; idata++) {
            ggml_opt_dataset_get_batch_host(dataset, tokens, n_ctx * sizeof(llama_token), lbls, idata);
            for (int64_t iu = 0; iu < ubatch_per_ctx; iu++) {
                const size_t off = (size_t) iu * st->n_ubatch;
                const struct opt_progress pr = { dataset, cb, (idata - i0) * ubatch_per_ctx + iu + 1,
                                                 (i1 - i0) * ubatch_per_ctx, t_start };
                if (!opt_iter(lctx, (uint32_t) off, tokens + off, lbls + off, train, result, &pr)) {
                    free(tokens);
                    free(lbls);
                    return;
                }
            }
        }
    }
    free(tokens);
    free(lbls);
}
