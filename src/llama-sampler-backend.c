// Backend sampling: the ggml subgraphs samplers add to the decode graph, one per output row (SEEDS-SPEC §2),
// the chain's backend slots (prefix rule, node budget probe) and the device support check.
//
// Conventions of llama_sampler_data inside one row's subgraph: logits F32 [n] are the current candidates'
// logits; candidates I32 [n] their token ids (NULL: the identity, i.e. still the whole vocabulary in order);
// probs F32 [n] (set by dist); sampled I32 [1] (set by a selecting sampler). Masked candidates keep their
// slot with logit -inf, so the candidate count of a row is fixed when the graph is built.

#include "llama-sampler.h"

#include "llama-impl.h"

#include "ggml.h"
#include "ggml-backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---- support check ----------------------------------------------------------------------------------------

enum { PROBE_N_CANDIDATES = 1024 * 1024 };

// builds one row's subgraph of smpl on a dummy input in a private no-alloc context; returns that context
// (the caller frees it) and the graph, or NULL when out of memory
static struct ggml_context * probe_graph(struct llama_sampler * smpl, int64_t n, size_t max_nodes,
        bool with_candidates, struct ggml_cgraph ** gf_out) {
    struct ggml_init_params ip = {
        /* .mem_size   = */ max_nodes * ggml_tensor_overhead() + ggml_graph_overhead_custom(max_nodes, false),
        /* .mem_buffer = */ NULL,
        /* .no_alloc   = */ true,
    };
    struct ggml_context * ctx = ggml_init(ip);
    if (!ctx) {
        return NULL;
    }
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, max_nodes, false);
    struct llama_sampler_data data = { NULL, NULL, NULL, NULL };
    data.logits = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
    ggml_set_input(data.logits);
    if (with_candidates) {
        data.candidates = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
        ggml_set_input(data.candidates);
    }
    if (smpl->iface->backend_reset) {
        smpl->iface->backend_reset(smpl);
    }
    smpl->iface->backend_apply(smpl, ctx, gf, &data);
    // the probe's inputs must not linger as references into a freed context
    if (smpl->iface->backend_reset) {
        smpl->iface->backend_reset(smpl);
    }
    struct ggml_tensor * outs[4] = { data.logits, data.probs, data.sampled, data.candidates };
    for (int i = 0; i < 4; i++) {
        if (outs[i]) {
            ggml_build_forward_expand(gf, outs[i]);
        }
    }
    *gf_out = gf;
    return ctx;
}

bool llama_sampler_backend_support(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft) {
    ggml_backend_dev_t dev = buft ? ggml_backend_buft_get_device(buft) : NULL;
    // the CPU backend implements every op the sampler graphs use
    if (!dev || ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU) {
        return true;
    }
    struct ggml_cgraph * gf = NULL;
    struct ggml_context * ctx = probe_graph(smpl, PROBE_N_CANDIDATES, GGML_DEFAULT_GRAPH_SIZE, true, &gf);
    if (!ctx) {
        LLAMA_LOG_ERROR("%s: out of memory for the probe graph of sampler '%s'\n", __func__, llama_sampler_name(smpl));
        return false;
    }
    bool ok = true;
    for (int i = 0; i < ggml_graph_n_nodes(gf) && ok; i++) {
        struct ggml_tensor * t = ggml_graph_node(gf, i);
        if (!ggml_backend_dev_supports_op(dev, t)) {
            LLAMA_LOG_WARN("%s: device '%s' does not have support for op %s needed for sampler '%s'\n", __func__,
                    ggml_backend_dev_name(dev), ggml_op_name(t->op), llama_sampler_name(smpl));
            ok = false;
        }
    }
    ggml_free(ctx);
    return ok;
}

bool llama_sampler_backend_init_default(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft,
        uint32_t n_outputs_max_per_seq) {
    GGML_UNUSED(n_outputs_max_per_seq);
    return llama_sampler_backend_support(smpl, buft);
}

// ---- row subgraphs ----------------------------------------------------------------------------------------

// token ids of the current candidates at the I32 positions idx
static struct ggml_tensor * ids_at(struct ggml_context * ctx, struct llama_sampler_data * data, struct ggml_tensor * idx) {
    if (!data->candidates) {
        return idx;
    }
    struct ggml_tensor * c2 = ggml_reshape_2d(ctx, data->candidates, 1, data->candidates->ne[0]);
    return ggml_reshape_1d(ctx, ggml_get_rows(ctx, c2, idx), idx->ne[0]);
}

static struct ggml_tensor * logits_at(struct ggml_context * ctx, struct ggml_tensor * logits, struct ggml_tensor * idx) {
    struct ggml_tensor * l2 = ggml_reshape_2d(ctx, logits, 1, logits->ne[0]);
    return ggml_reshape_1d(ctx, ggml_get_rows(ctx, l2, idx), idx->ne[0]);
}

// the largest logit, F32 [1]
static struct ggml_tensor * max_logit(struct ggml_context * ctx, struct ggml_tensor * logits) {
    return logits_at(ctx, logits, ggml_argmax(ctx, ggml_reshape_2d(ctx, logits, logits->ne[0], 1)));
}

// logits where keep is 1, -inf where keep is 0 (log 0 = -inf, so no 0 * inf products)
static struct ggml_tensor * mask_logits(struct ggml_context * ctx, struct ggml_tensor * logits, struct ggml_tensor * keep) {
    return ggml_add(ctx, logits, ggml_log(ctx, keep));
}

void llama_sampler_backend_greedy(struct ggml_context * ctx, struct llama_sampler_data * data) {
    struct ggml_tensor * idx = ggml_argmax(ctx, ggml_reshape_2d(ctx, data->logits, data->logits->ne[0], 1));
    data->sampled = ids_at(ctx, data, idx);
}

void llama_sampler_backend_top_k(struct ggml_context * ctx, struct llama_sampler_data * data, int32_t k) {
    const int64_t n = data->logits->ne[0];
    if (k <= 0 || k >= n) {
        return;
    }
    struct ggml_tensor * idx = ggml_top_k(ctx, data->logits, k);
    data->logits     = logits_at(ctx, data->logits, idx);
    data->candidates = ids_at(ctx, data, idx);
}

void llama_sampler_backend_top_p(struct ggml_context * ctx, struct llama_sampler_data * data, float p, size_t min_keep) {
    const int64_t n = data->logits->ne[0];
    if (p >= 1.0f || n <= 1) {
        return;
    }
    struct ggml_tensor * order  = ggml_argsort(ctx, data->logits, GGML_SORT_ORDER_DESC);
    struct ggml_tensor * sorted = logits_at(ctx, data->logits, order);
    struct ggml_tensor * probs  = ggml_soft_max(ctx, sorted);
    // probability mass strictly before each candidate: a candidate stays while that mass is below p, which keeps
    // the first candidate whose inclusive cumulative mass reaches p (the CPU rule)
    struct ggml_tensor * before = ggml_sub(ctx, ggml_cumsum(ctx, probs), probs);
    struct ggml_tensor * keep   = ggml_step(ctx, ggml_scale_bias(ctx, before, -1.0f, p));
    if (min_keep > 1) {
        struct ggml_tensor * pos = ggml_arange(ctx, 0.0f, (float) n, 1.0f);
        struct ggml_tensor * first = ggml_step(ctx, ggml_scale_bias(ctx, pos, -1.0f, (float) min_keep));
        keep = ggml_clamp(ctx, ggml_add(ctx, keep, first), 0.0f, 1.0f);
    }
    data->logits     = mask_logits(ctx, sorted, keep);
    data->candidates = ids_at(ctx, data, order);
}

void llama_sampler_backend_min_p(struct ggml_context * ctx, struct llama_sampler_data * data, float p, size_t min_keep) {
    GGML_UNUSED(min_keep); // the best candidate always survives, and masking never removes more than the CPU rule
    if (p <= 0.0f || data->logits->ne[0] <= 1) {
        return;
    }
    // keep logit >= max + log(p)  <=>  p_i >= p * p_max
    struct ggml_tensor * thr  = ggml_scale_bias(ctx, max_logit(ctx, data->logits), 1.0f, logf(p));
    struct ggml_tensor * diff = ggml_sub(ctx, data->logits, thr);
    // step() is x > 0; nudge so that equality keeps the candidate like the CPU's >=
    struct ggml_tensor * keep = ggml_step(ctx, ggml_scale_bias(ctx, diff, 1.0f, 1e-6f));
    data->logits = mask_logits(ctx, data->logits, keep);
}

void llama_sampler_backend_temp(struct ggml_context * ctx, struct llama_sampler_data * data, float temp) {
    if (temp <= 0.0f) {
        // zero temperature keeps only the best candidate
        struct ggml_tensor * idx = ggml_argmax(ctx, ggml_reshape_2d(ctx, data->logits, data->logits->ne[0], 1));
        data->logits     = logits_at(ctx, data->logits, idx);
        data->candidates = ids_at(ctx, data, idx);
        return;
    }
    if (temp == 1.0f) {
        return;
    }
    data->logits = ggml_scale(ctx, data->logits, 1.0f / temp);
}

void llama_sampler_backend_temp_ext(struct ggml_context * ctx, struct llama_sampler_data * data, float temp,
        float delta, float exponent) {
    const int64_t n = data->logits->ne[0];
    if (delta <= 0.0f || n <= 1) {
        llama_sampler_backend_temp(ctx, data, temp);
        return;
    }
    const float min_temp = fmaxf(0.0f, temp - delta);
    const float max_temp = temp + delta;
    const float max_entropy = -logf(1.0f / (float) n);

    // entropy of softmax(logits); masked candidates have p = 0 and contribute 0 (log of a clamped p)
    struct ggml_tensor * probs = ggml_soft_max(ctx, data->logits);
    struct ggml_tensor * plogp = ggml_mul(ctx, probs, ggml_log(ctx, ggml_clamp(ctx, probs, 1e-30f, 1.0f)));
    struct ggml_tensor * ent_n = ggml_scale(ctx, ggml_sum(ctx, plogp), -1.0f / max_entropy);
    // normalized_entropy ^ exponent = exp(exponent * log(x)); x = 0 gives exp(-inf) = 0
    struct ggml_tensor * powe  = ggml_exp(ctx, ggml_scale(ctx, ggml_log(ctx, ent_n), exponent));
    struct ggml_tensor * dyn_t = ggml_scale_bias(ctx, powe, max_temp - min_temp, min_temp);
    data->logits = ggml_div(ctx, data->logits, dyn_t);
}

void llama_sampler_backend_dist(struct ggml_context * ctx, struct llama_sampler_data * data, struct ggml_tensor * uniform) {
    const int64_t n = data->logits->ne[0];
    struct ggml_tensor * probs  = ggml_soft_max(ctx, data->logits);
    struct ggml_tensor * cdf    = ggml_cumsum(ctx, probs);
    // candidates whose cumulative mass exceeds u form a suffix; its length gives the first such index
    struct ggml_tensor * above  = ggml_step(ctx, ggml_sub(ctx, cdf, uniform));
    struct ggml_tensor * n_abv  = ggml_clamp(ctx, ggml_sum(ctx, above), 1.0f, (float) n);
    struct ggml_tensor * idxf   = ggml_scale_bias(ctx, n_abv, -1.0f, (float) n);
    struct ggml_tensor * idx    = ggml_cast(ctx, idxf, GGML_TYPE_I32);
    data->probs   = probs;
    data->sampled = ids_at(ctx, data, idx);
}

void llama_sampler_backend_logit_bias(struct ggml_context * ctx, struct llama_sampler_data * data,
        struct ggml_tensor * bias_full) {
    struct ggml_tensor * b = bias_full;
    if (data->candidates) {
        b = logits_at(ctx, bias_full, data->candidates);
    }
    if (b->ne[0] != data->logits->ne[0]) {
        return; // the vocabulary sizes disagree; backend_init refused such a context already
    }
    data->logits = ggml_add(ctx, data->logits, b);
}

// ---- chain ------------------------------------------------------------------------------------------------

void llama_sampler_chain_set_n_vocab(struct llama_sampler * smpl, int32_t n_vocab) {
    if (!llama_sampler_is_chain(smpl)) {
        llama_sampler_penalties_set_n_vocab(smpl, n_vocab);
        return;
    }
    const struct llama_sampler_chain * chain = smpl->ctx;
    for (size_t i = 0; i < chain->n_samplers; i++) {
        llama_sampler_chain_set_n_vocab(chain->samplers[i].ptr, n_vocab);
    }
}

bool llama_sampler_chain_backend_init(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft,
        uint32_t n_outputs_max_per_seq) {
    struct llama_sampler_chain * chain = smpl->ctx;
    if (chain->is_init) {
        LLAMA_LOG_WARN("%s: backend_init called twice on a chain; keeping the first initialisation\n", __func__);
        for (size_t i = 0; i < chain->n_samplers; ++i) {
            if (!chain->samplers[i].is_backend) {
                return false;
            }
        }
        return true;
    }
    chain->is_init = true;
    bool all = true;
    for (size_t i = 0; i < chain->n_samplers; ++i) {
        struct llama_sampler_chain_entry * e = &chain->samplers[i];
        // prefix rule: once one sampler stays on the CPU, everything after it does too
        e->is_backend = all && e->ptr->iface->backend_init && e->ptr->iface->backend_apply &&
                        e->ptr->iface->backend_init(e->ptr, buft, n_outputs_max_per_seq);
        all = all && e->is_backend;
    }

    chain->n_nodes = 0;
    bool any = chain->n_samplers > 0 && chain->samplers[0].is_backend;
    if (any) {
        struct ggml_cgraph * gf = NULL;
        struct ggml_context * ctx = probe_graph(smpl, PROBE_N_CANDIDATES, GGML_DEFAULT_GRAPH_SIZE, false, &gf);
        if (ctx) {
            uint32_t n_tensors = 0;
            for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
                n_tensors++;
            }
            const uint32_t n_graph = (uint32_t) ggml_graph_n_nodes(gf);
            chain->n_nodes = n_graph > n_tensors ? n_graph : n_tensors;
            ggml_free(ctx);
        } else {
            chain->n_nodes = GGML_DEFAULT_GRAPH_SIZE;
        }
    }
    return all;
}

void llama_sampler_chain_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx,
        struct ggml_cgraph * gf, struct llama_sampler_data * data) {
    struct llama_sampler_chain * chain = smpl->ctx;
    for (size_t i = 0; i < chain->n_samplers; ++i) {
        struct llama_sampler_chain_entry * e = &chain->samplers[i];
        if (!e->is_backend) {
            break;
        }
        e->ptr->iface->backend_apply(e->ptr, ctx, gf, data);
    }
}

void llama_sampler_chain_backend_set_input(struct llama_sampler * smpl) {
    struct llama_sampler_chain * chain = smpl->ctx;
    for (size_t i = 0; i < chain->n_samplers; ++i) {
        struct llama_sampler_chain_entry * e = &chain->samplers[i];
        if (!e->is_backend) {
            break;
        }
        if (e->ptr->iface->backend_set_input) {
            e->ptr->iface->backend_set_input(e->ptr);
        }
    }
}

void llama_sampler_chain_backend_accept(struct llama_sampler * smpl, struct ggml_context * ctx,
        struct ggml_cgraph * gf, struct ggml_tensor * selected) {
    struct llama_sampler_chain * chain = smpl->ctx;
    for (size_t i = 0; i < chain->n_samplers; ++i) {
        struct llama_sampler_chain_entry * e = &chain->samplers[i];
        if (!e->is_backend) {
            break;
        }
        if (e->ptr->iface->backend_accept) {
            e->ptr->iface->backend_accept(e->ptr, ctx, gf, selected);
        }
    }
}

// ---- input lists --------------------------------------------------------------------------------------------

bool llama_sampler_inputs_push(struct llama_sampler_inputs * in, struct ggml_tensor * t) {
    if (in->n == in->cap) {
        const size_t cap = in->cap ? 2 * in->cap : 8;
        struct ggml_tensor ** p = realloc(in->t, cap * sizeof(*p));
        if (!p) {
            LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
            return false;
        }
        in->t = p;
        in->cap = cap;
    }
    in->t[in->n++] = t;
    return true;
}

void llama_sampler_inputs_free(struct llama_sampler_inputs * in) {
    free(in->t);
    in->t = NULL;
    in->n = in->cap = 0;
}
