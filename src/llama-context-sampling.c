// Backend sampling inside llama_decode: samplers registered per sequence run as ggml subgraphs on the output
// rows of each ubatch (rows of one sequence in output order), and their results are copied out after compute.

#include "llama-context-sampling.h"

#include "llama-context.h"
#include "llama-impl.h"
#include "llama-model.h"
#include "llama-sampler.h"

#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <stdlib.h>
#include <string.h>

struct llama_ctx_sampling {
    struct llama_sampler * samplers[LLAMA_MAX_SEQ]; // by seq id; not owned
    uint32_t n_samplers;

    // outputs of the last decode, by emission row (the order ubatches produce outputs)
    size_t        cap_rows;
    size_t        n_rows;
    llama_token * sampled;          // [cap_rows], LLAMA_TOKEN_NULL where nothing was sampled
    float       * logits;           // [cap_rows][n_vocab]
    float       * probs;            // [cap_rows][n_vocab]
    llama_token * candidates;       // [cap_rows][n_vocab]
    uint32_t    * logits_count;     // [cap_rows]
    uint32_t    * probs_count;      // [cap_rows]
    uint32_t    * candidates_count; // [cap_rows]

    // the current ubatch graph: sampling tensors by output row of the ubatch (NULL: none)
    size_t                cap_ub;
    size_t                n_ub;
    struct ggml_tensor ** t_sampled;    // [cap_ub]
    struct ggml_tensor ** t_logits;     // [cap_ub]
    struct ggml_tensor ** t_probs;      // [cap_ub]
    struct ggml_tensor ** t_candidates; // [cap_ub]
    bool                  active[LLAMA_MAX_SEQ]; // sampler of seq s has rows in the current graph

    // what the last build made, for graph reuse: rows, and per row the seq whose sampler got it (-1: none)
    size_t         n_built;
    llama_seq_id * row_sampler;  // [cap_ub]
};

static uint32_t n_seq_eff(const struct llama_context * ctx) {
    return ctx->cparams.kv_unified ? LLAMA_MAX_SEQ : ctx->cparams.n_seq_max;
}

static size_t n_vocab_of(const struct llama_context * ctx) {
    return ctx->model->hparams.n_vocab;
}

static struct llama_ctx_sampling * get_or_create(struct llama_context * ctx) {
    if (!ctx->sampling) {
        ctx->sampling = calloc(1, sizeof(*ctx->sampling));
        if (!ctx->sampling) {
            LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
        }
    }
    return ctx->sampling;
}

// the scheduler and graph buffers are sized once; a sampler added later may need a larger graph
bool llama_context_ensure_graph_capacity(struct llama_context * ctx) {
    if (!ctx->sched) {
        return true; // still constructing: llama_init_from_model sizes the graph after the samplers
    }
    const size_t need = llm_graph_max_nodes(ctx->model) + llama_ctx_sampling_graph_nodes(ctx, ctx->cparams.n_ubatch);
    if (need <= ctx->max_nodes) {
        return true;
    }
    const size_t meta = ggml_tensor_overhead() * need + ggml_graph_overhead_custom(need, false);
    void * buf = malloc(meta);
    ggml_backend_t backends[1] = { ctx->backend_cpu };
    ggml_backend_sched_t sched = buf ? ggml_backend_sched_new(backends, NULL, 1, need, false, ctx->cparams.op_offload) : NULL;
    if (!sched) {
        free(buf);
        LLAMA_LOG_ERROR("%s: out of memory for a graph of %zu nodes\n", __func__, need);
        return false;
    }
    ggml_backend_sched_free(ctx->sched);
    free(ctx->buf_meta);
    ctx->sched         = sched;
    ctx->buf_meta      = buf;
    ctx->buf_meta_size = meta;
    ctx->max_nodes     = need;
    return true;
}

bool llama_set_sampler(struct llama_context * ctx, llama_seq_id seq_id, struct llama_sampler * smpl) {
    if (!ctx) {
        LLAMA_LOG_ERROR("%s: ctx is NULL\n", __func__);
        return false;
    }
    if (seq_id < 0 || (uint32_t) seq_id >= n_seq_eff(ctx)) {
        LLAMA_LOG_ERROR("%s: seq_id %d is out of range [0, %u)\n", __func__, seq_id, n_seq_eff(ctx));
        return false;
    }
    struct llama_ctx_sampling * s = get_or_create(ctx);
    if (!s) {
        return false;
    }
    // the kept graph holds the old samplers' subgraphs (and backend_init may reset the new one's inputs)
    llama_context_drop_graph(ctx);
    if (!smpl) {
        if (s->samplers[seq_id]) {
            s->samplers[seq_id] = NULL;
            s->n_samplers--;
        }
        return true;
    }
    if (llama_sampler_chain_get(smpl, -1) == NULL) {
        LLAMA_LOG_ERROR("%s: the backend samplers must be of type llama_sampler_chain (seq_id %d)\n", __func__, seq_id);
        return false;
    }
    const struct llama_sampler_chain * chain = smpl->ctx;
    if (!chain->is_init) {
        llama_sampler_chain_set_n_vocab(smpl, llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(ctx))));
        smpl->iface->backend_init(smpl, ggml_backend_cpu_buffer_type(), ctx->cparams.n_outputs_max_per_seq);
    }
    if (!s->samplers[seq_id]) {
        s->n_samplers++;
    }
    s->samplers[seq_id] = smpl;
    LLAMA_LOG_INFO("%s: setting backend sampler for seq_id %d (n = %d)\n", __func__, seq_id, llama_sampler_chain_n(smpl));
    return llama_context_ensure_graph_capacity(ctx);
}

bool llama_ctx_sampling_init(struct llama_context * ctx, const struct llama_context_params * params) {
    if (params->n_samplers > 0 && !params->samplers) {
        LLAMA_LOG_ERROR("%s: n_samplers = %zu but samplers is NULL\n", __func__, params->n_samplers);
        return false;
    }
    for (size_t i = 0; i < params->n_samplers; ++i) {
        const struct llama_sampler_seq_config * c = &params->samplers[i];
        // llama_set_sampler checks the seq id and that the sampler is a chain
        if (c->sampler && !llama_set_sampler(ctx, c->seq_id, c->sampler)) {
            return false;
        }
    }
    return true;
}

void llama_ctx_sampling_free(struct llama_context * ctx) {
    struct llama_ctx_sampling * s = ctx->sampling;
    if (!s) {
        return;
    }
    free(s->sampled);
    free(s->logits);
    free(s->probs);
    free(s->candidates);
    free(s->logits_count);
    free(s->probs_count);
    free(s->candidates_count);
    free(s->t_sampled);
    free(s->t_logits);
    free(s->t_probs);
    free(s->t_candidates);
    free(s->row_sampler);
    free(s);
    ctx->sampling = NULL;
}

size_t llama_ctx_sampling_graph_nodes(const struct llama_context * ctx, uint32_t n_tokens) {
    const struct llama_ctx_sampling * s = ctx->sampling;
    if (!s || s->n_samplers == 0) {
        return 0;
    }
    const struct llama_cparams * cp = &ctx->cparams;
    size_t sum = 0;
    size_t max = 0;
    for (uint32_t q = 0; q < LLAMA_MAX_SEQ; ++q) {
        if (s->samplers[q]) {
            const size_t n = llama_sampler_backend_n_nodes(s->samplers[q]);
            sum += n;
            max = n > max ? n : max;
        }
    }
    size_t n_out = n_tokens < cp->n_outputs_max ? n_tokens : cp->n_outputs_max;
    const size_t n_seq_out = (size_t) cp->n_seq_max * cp->n_outputs_max_per_seq;
    n_out = n_out < n_seq_out ? n_out : n_seq_out;
    size_t res = sum;
    if (cp->n_outputs_max_per_seq > 1 && n_out > 1) {
        res += (n_out - 1) * max;
    }
    // the row view and the output expansions of each row
    return res + 8 * (n_out + s->n_samplers);
}

bool llama_ctx_sampling_check_batch(const struct llama_context * ctx, const struct llama_batch * batch) {
    const struct llama_ctx_sampling * s = ctx->sampling;
    const bool output_all = ctx->cparams.embeddings;
    if (!s || s->n_samplers == 0 || (!output_all && !batch->logits)) {
        return true;
    }
    const uint32_t n_seq = n_seq_eff(ctx);
    int32_t counts[LLAMA_MAX_SEQ];
    memset(counts, 0, sizeof(counts));
    for (int32_t i = 0; i < batch->n_tokens; ++i) {
        if (!output_all && batch->logits[i] == 0) {
            continue;
        }
        const int32_t n_ids = batch->seq_id ? batch->n_seq_id[i] : 1;
        for (int32_t k = 0; k < n_ids; ++k) {
            const llama_seq_id q = batch->seq_id ? batch->seq_id[i][k] : 0;
            if (q < 0 || (uint32_t) q >= n_seq) {
                continue;
            }
            counts[q]++;
        }
    }
    for (uint32_t q = 0; q < n_seq; ++q) {
        if (s->samplers[q] && counts[q] > (int32_t) ctx->cparams.n_outputs_max_per_seq) {
            LLAMA_LOG_ERROR("%s: backend sampling supports at most %u outputs per sequence (seq_id %u had %d)\n",
                    __func__, ctx->cparams.n_outputs_max_per_seq, q, counts[q]);
            return false;
        }
    }
    return true;
}

#define GROW(field, n) do { void * p_ = realloc(s->field, (n) * sizeof(*s->field)); if (!p_) { return false; } \
        s->field = p_; } while (0)

bool llama_ctx_sampling_begin(struct llama_context * ctx, uint32_t n_outputs) {
    struct llama_ctx_sampling * s = ctx->sampling;
    if (!s) {
        return true;
    }
    s->n_rows = 0;
    if (s->n_samplers == 0) {
        return true;
    }
    const size_t n_vocab = n_vocab_of(ctx);
    if (n_outputs > s->cap_rows) {
        GROW(sampled,          n_outputs);
        GROW(logits_count,     n_outputs);
        GROW(probs_count,      n_outputs);
        GROW(candidates_count, n_outputs);
        GROW(logits,           (size_t) n_outputs * n_vocab);
        GROW(probs,            (size_t) n_outputs * n_vocab);
        GROW(candidates,       (size_t) n_outputs * n_vocab);
        s->cap_rows = n_outputs;
    }
    s->n_rows = n_outputs;
    for (size_t r = 0; r < n_outputs; ++r) {
        s->sampled[r] = LLAMA_TOKEN_NULL;
        s->logits_count[r] = s->probs_count[r] = s->candidates_count[r] = 0;
    }
    // one sampling transaction per logical batch, however many ubatches it takes
    for (uint32_t q = 0; q < LLAMA_MAX_SEQ; ++q) {
        if (s->samplers[q]) {
            llama_sampler_backend_begin(s->samplers[q]);
        }
    }
    return true;
}

bool llama_ctx_sampling_build(struct llama_context * ctx, struct llm_graph * g) {
    struct llama_ctx_sampling * s = ctx->sampling;
    if (!s || s->n_samplers == 0) {
        return true;
    }
    s->n_ub = 0;
    s->n_built = 0;
    memset(s->active, 0, sizeof(s->active));
    const struct llama_ubatch * ub = g->ub;
    const size_t n_out = g->n_outputs;
    if (n_out == 0 || !g->t_logits) {
        return true;
    }
    if (n_out > s->cap_ub) {
        GROW(t_sampled,    n_out);
        GROW(t_logits,     n_out);
        GROW(t_probs,      n_out);
        GROW(t_candidates, n_out);
        GROW(row_sampler,  n_out);
        s->cap_ub = n_out;
    }
    s->n_ub = n_out;
    for (size_t r = 0; r < n_out; ++r) {
        s->t_sampled[r] = s->t_logits[r] = s->t_probs[r] = s->t_candidates[r] = NULL;
    }
    // the sequence of each output row (rows of t_logits follow the ubatch's output tokens)
    llama_seq_id * row_seq = malloc(n_out * sizeof(*row_seq));
    if (!row_seq) {
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
        return false;
    }
    size_t r = 0;
    for (uint32_t i = 0; i < ub->n_tokens && r < n_out; ++i) {
        if (ub->output[i]) {
            row_seq[r++] = ub->seq_id[i][0];
        }
    }
    for (size_t k = 0; k < n_out; ++k) {
        s->row_sampler[k] = k < r && s->samplers[row_seq[k]] ? row_seq[k] : -1;
    }
    s->n_built = n_out;
    for (uint32_t q = 0; q < LLAMA_MAX_SEQ; ++q) {
        if (s->samplers[q] && s->samplers[q]->iface->backend_reset) {
            s->samplers[q]->iface->backend_reset(s->samplers[q]);
        }
    }
    struct ggml_context * c0 = g->ctx0;
    struct ggml_tensor * logits = g->t_logits; // [n_vocab, n_out]
    const int64_t n_vocab = logits->ne[0];
    // sequences in id order, each one's rows in output order: draws and accepts follow that order
    for (uint32_t q = 0; q < LLAMA_MAX_SEQ; ++q) {
        struct llama_sampler * smpl = s->samplers[q];
        if (!smpl) {
            continue;
        }
        for (size_t k = 0; k < n_out; ++k) {
            if (row_seq[k] != (llama_seq_id) q) {
                continue;
            }
            s->active[q] = true;
            struct llama_sampler_data data = { NULL, NULL, NULL, NULL };
            data.logits = ggml_view_1d(c0, logits, n_vocab, k * logits->nb[1]);
            ggml_format_name(data.logits, "logits_seq_%u_%zu", q, k);
            smpl->iface->backend_apply(smpl, c0, g->gf, &data);
            struct ggml_tensor * outs[4] = { data.sampled, data.logits, data.probs, data.candidates };
            struct ggml_tensor ** dst[4] = { &s->t_sampled[k], &s->t_logits[k], &s->t_probs[k], &s->t_candidates[k] };
            for (int o = 0; o < 4; ++o) {
                if (!outs[o]) {
                    continue;
                }
                if (!ggml_is_contiguous(outs[o])) {
                    outs[o] = ggml_cont(c0, outs[o]);
                }
                // the allocator keeps a view's memory only while its source is an output
                for (struct ggml_tensor * t = outs[o]; t; t = t->view_src) {
                    ggml_set_output(t);
                }
                ggml_build_forward_expand(g->gf, outs[o]);
                *dst[o] = outs[o];
            }
        }
    }
    free(row_seq);
    return true;
}

bool llama_ctx_sampling_reuse(struct llama_context * ctx, const struct llama_ubatch * ub, uint32_t n_out) {
    struct llama_ctx_sampling * s = ctx->sampling;
    // llama_set_sampler drops the kept graph, so the samplers are the ones it was built with
    if (!s || s->n_samplers == 0) {
        return true;
    }
    if (n_out != s->n_built) {
        return false;
    }
    size_t r = 0;
    for (uint32_t i = 0; i < ub->n_tokens && r < n_out; ++i) {
        if (!ub->output[i]) {
            continue;
        }
        const llama_seq_id q = ub->seq_id[i][0];
        if ((s->samplers[q] ? q : -1) != s->row_sampler[r]) {
            return false;
        }
        r++;
    }
    if (r != n_out) {
        return false;
    }
    s->n_ub = n_out;
    return true;
}

bool llama_ctx_sampling_needs_raw_logits(const struct llama_context * ctx, const struct llama_ubatch * ub) {
    const struct llama_ctx_sampling * s = ctx->sampling;
    if (!s || s->n_samplers == 0) {
        return true;
    }
    for (uint32_t i = 0; i < ub->n_tokens; ++i) {
        if (!ub->output[i]) {
            continue;
        }
        for (int32_t k = 0; k < ub->n_seq_id[i]; ++k) {
            if (!s->samplers[ub->seq_id[i][k]]) {
                return true;
            }
        }
    }
    return false;
}

void llama_ctx_sampling_set_inputs(struct llama_context * ctx) {
    struct llama_ctx_sampling * s = ctx->sampling;
    if (!s || s->n_ub == 0) {
        return;
    }
    for (uint32_t q = 0; q < LLAMA_MAX_SEQ; ++q) {
        if (s->active[q] && s->samplers[q]->iface->backend_set_input) {
            s->samplers[q]->iface->backend_set_input(s->samplers[q]);
        }
    }
}

void llama_ctx_sampling_copy_outputs(struct llama_context * ctx, size_t row_off) {
    struct llama_ctx_sampling * s = ctx->sampling;
    if (!s || s->n_ub == 0) {
        return;
    }
    const size_t n_vocab = n_vocab_of(ctx);
    for (size_t k = 0; k < s->n_ub; ++k) {
        const size_t row = row_off + k;
        GGML_ASSERT(row < s->n_rows);
        struct ggml_tensor * t = s->t_sampled[k];
        if (t) {
            ggml_backend_tensor_get(t, &s->sampled[row], 0, sizeof(llama_token));
        }
        struct ggml_tensor * ts[3] = { s->t_logits[k], s->t_probs[k], s->t_candidates[k] };
        void *     dsts[3]   = { s->logits + row * n_vocab, s->probs + row * n_vocab, s->candidates + row * n_vocab };
        uint32_t * counts[3] = { &s->logits_count[row], &s->probs_count[row], &s->candidates_count[row] };
        for (int o = 0; o < 3; ++o) {
            t = ts[o];
            if (!t) {
                continue;
            }
            const int64_t n = ggml_nelements(t);
            GGML_ASSERT(n >= 0 && (size_t) n <= n_vocab);
            ggml_backend_tensor_get(t, dsts[o], 0, (size_t) n * ggml_element_size(t));
            *counts[o] = (uint32_t) n;
        }
    }
    s->n_ub = 0;
}

// ---- getters ------------------------------------------------------------------------------------------------

// emission row of output i (batch index, or -1.. for the last outputs); -1 when there is none
static int64_t sampled_row(struct llama_context * ctx, int32_t i) {
    const struct llama_ctx_sampling * s = ctx->sampling;
    if (!s || s->n_rows == 0 || ctx->n_outputs <= 0) {
        return -1;
    }
    int32_t b = i;
    if (i < 0) {
        const int32_t rank = ctx->n_outputs + i;
        if (rank < 0) {
            return -1;
        }
        b = -1;
        for (int32_t j = 0; j < ctx->n_batch_last; ++j) {
            if (ctx->output_ids[j] == rank) {
                b = j;
                break;
            }
        }
    }
    if (b < 0 || b >= ctx->n_batch_last || ctx->output_ids[b] < 0) {
        return -1;
    }
    const struct llama_batch_allocr * ba = &ctx->balloc;
    const int32_t rank = ctx->output_ids[b];
    if ((uint32_t) rank < ba->n_out_ids && ba->out_ids[rank] == b) {
        return rank;
    }
    for (uint32_t e = 0; e < ba->n_out_ids; ++e) {
        if (ba->out_ids[e] == b) {
            return e;
        }
    }
    return -1;
}

llama_token llama_get_sampled_token_ith(struct llama_context * ctx, int32_t i) {
    const int64_t r = ctx ? sampled_row(ctx, i) : -1;
    return r < 0 ? LLAMA_TOKEN_NULL : ctx->sampling->sampled[r];
}

float * llama_get_sampled_probs_ith(struct llama_context * ctx, int32_t i) {
    const int64_t r = ctx ? sampled_row(ctx, i) : -1;
    if (r < 0 || ctx->sampling->probs_count[r] == 0) {
        return NULL;
    }
    return ctx->sampling->probs + (size_t) r * n_vocab_of(ctx);
}

uint32_t llama_get_sampled_probs_count_ith(struct llama_context * ctx, int32_t i) {
    const int64_t r = ctx ? sampled_row(ctx, i) : -1;
    return r < 0 ? 0 : ctx->sampling->probs_count[r];
}

float * llama_get_sampled_logits_ith(struct llama_context * ctx, int32_t i) {
    const int64_t r = ctx ? sampled_row(ctx, i) : -1;
    if (r < 0 || ctx->sampling->logits_count[r] == 0) {
        return NULL;
    }
    return ctx->sampling->logits + (size_t) r * n_vocab_of(ctx);
}

uint32_t llama_get_sampled_logits_count_ith(struct llama_context * ctx, int32_t i) {
    const int64_t r = ctx ? sampled_row(ctx, i) : -1;
    return r < 0 ? 0 : ctx->sampling->logits_count[r];
}

llama_token * llama_get_sampled_candidates_ith(struct llama_context * ctx, int32_t i) {
    const int64_t r = ctx ? sampled_row(ctx, i) : -1;
    if (r < 0 || ctx->sampling->candidates_count[r] == 0) {
        return NULL;
    }
    return ctx->sampling->candidates + (size_t) r * n_vocab_of(ctx);
}

uint32_t llama_get_sampled_candidates_count_ith(struct llama_context * ctx, int32_t i) {
    const int64_t r = ctx ? sampled_row(ctx, i) : -1;
    return r < 0 ? 0 : ctx->sampling->candidates_count[r];
}
