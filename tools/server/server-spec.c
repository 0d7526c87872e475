// Speculative decoding per slot. Each generating slot with a drafter (its own draft-model context, or n-gram
// lookup over its tokens) puts next_tok and up to n_max draft tokens into the shared target batch, all with
// outputs. After the decode the slot's sampler samples output 0, 1, ... in order and stops at the first token
// that differs from the draft (common_sampler_sample_and_accept_n), so every emitted token is drawn from the
// target's distribution exactly as without a draft: the sampler only ever sees the outputs it would have seen
// one step at a time, and the draws for rejected outputs are never committed (with backend sampling the dist
// sampler's draws are transactional and replayed from the committed position at the next decode). The KV
// cache is then cut back to the accepted tokens.
#include "server-context.h"

#include <stdlib.h>
#include <string.h>

static bool spec_has_type(const struct common_params_speculative * sp, enum common_speculative_type ty) {
    for (int32_t i = 0; i < sp->n_types && i < COMMON_SPEC_TYPES_MAX; i++) {
        if (sp->types[i] == ty) {
            return true;
        }
    }
    return false;
}

bool server_spec_load(struct server_context * sc) {
    const struct common_params_speculative * sp = &sc->params.speculative;
    sc->n_draft_max = sc->params.embedding ? 0 : common_speculative_n_max(sp);
    if (sc->n_draft_max == 0) {
        return true;
    }
    if (llama_model_is_recurrent(sc->model) || llama_model_is_hybrid(sc->model)) {
        // a recurrent state cannot drop the rejected draft tokens (no rollback snapshots here)
        SRV_WRN("%s: speculative decoding is not supported with recurrent models: disabled\n", __func__);
        sc->n_draft_max = 0;
        return true;
    }
    if (!spec_has_type(sp, COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE)) {
        return true; // draftless: nothing to load
    }
    if (!sp->draft.mparams.path || !sp->draft.mparams.path[0]) {
        SRV_ERR("%s: --spec-type draft-simple needs a draft model (-md FNAME)\n", __func__);
        return false;
    }
    SRV_INF("%s: loading draft model '%s'\n", __func__, sp->draft.mparams.path);
    sc->model_dft = llama_model_load_from_file(sp->draft.mparams.path, llama_model_default_params());
    if (!sc->model_dft) {
        SRV_ERR("%s: failed to load the draft model '%s'\n", __func__, sp->draft.mparams.path);
        return false;
    }
    return true;
}

// the slot's drafter with the server's parameters and the request's p_min; n_min is applied by the caller
// after the draft is cut to the request's n_max. Its drafts fit s->draft: at most common_speculative_n_max of
// the server's parameters (sc->n_draft_max) tokens.
static struct common_speculative * spec_make(struct server_context * sc, struct server_slot * s, float p_min) {
    struct common_params_speculative sp = sc->params.speculative;
    sp.draft.n_min = 0;
    sp.draft.p_min = p_min;
    struct common_speculative * spec = common_speculative_init(&sp, sc->ctx, s->ctx_dft);
    if (spec) {
        s->spec_n_max = sc->n_draft_max;
        s->spec_n_min = 0;
        s->spec_p_min = p_min;
    }
    return spec;
}

bool server_spec_init_slot(struct server_context * sc, struct server_slot * s) {
    const size_t n_rows = (size_t) sc->n_draft_max + 1;
    s->i_batch_dft = malloc(n_rows * sizeof(int));
    s->ids         = malloc(n_rows * sizeof(llama_token));
    if (!s->i_batch_dft || !s->ids) {
        SRV_ERR("%s: out of memory\n", __func__);
        return false;
    }
    if (sc->n_draft_max == 0) {
        return true;
    }
    s->draft = malloc((size_t) sc->n_draft_max * sizeof(llama_token));
    if (!s->draft) {
        SRV_ERR("%s: out of memory\n", __func__);
        return false;
    }
    const struct common_params_speculative_draft * d = &sc->params.speculative.draft;
    if (sc->model_dft) {
        // one sequence, one output per draft step (llama.cpp's common_base_params_to_speculative)
        struct llama_context_params cp = llama_context_default_params();
        cp.n_ctx          = (uint32_t) (d->n_ctx > 0 ? d->n_ctx : sc->n_ctx_slot);
        cp.n_batch        = (uint32_t) sc->params.n_batch;
        cp.n_ubatch       = (uint32_t) sc->params.n_ubatch;
        cp.n_seq_max      = 1;
        cp.n_outputs_max  = 1;
        cp.n_outputs_max_per_seq = 1;
        cp.type_k         = d->cache_type_k;
        cp.type_v         = d->cache_type_v;
        cp.flash_attn_type = (enum llama_flash_attn_type) sc->params.flash_attn_type;
        const int nt = d->cpuparams.n_threads > 0 ? d->cpuparams.n_threads : sc->params.cpuparams.n_threads;
        if (nt > 0) {
            cp.n_threads       = nt;
            cp.n_threads_batch = nt;
        }
        s->ctx_dft = llama_init_from_model(sc->model_dft, cp);
        if (!s->ctx_dft) {
            SRV_ERR("%s: failed to create the draft context of slot %d\n", __func__, s->id);
            return false;
        }
    }
    s->spec = spec_make(sc, s, d->p_min);
    if (!s->spec) {
        SRV_ERR("%s: failed to set up speculative decoding for slot %d\n", __func__, s->id);
        return false;
    }
    if (s->ctx_dft) {
        // --spec-draft-backend-sampling (default): common_speculative runs the draft's top-k chain in the draft graph
        SRV_INF("slot %d: draft sampling on the %s\n", s->id,
                common_speculative_draft_backend(s->spec) ? "backend" : "CPU");
    }
    return true;
}

void server_spec_free_slot(struct server_slot * s) {
    common_speculative_free(s->spec);
    s->spec = NULL;
    if (s->ctx_dft) {
        llama_free(s->ctx_dft);
        s->ctx_dft = NULL;
    }
    free(s->draft);
    free(s->i_batch_dft);
    free(s->ids);
    s->draft = NULL;
    s->i_batch_dft = NULL;
    s->ids = NULL;
}

bool server_spec_launch(struct server_context * sc, struct server_slot * s) {
    struct server_slot_params * p = &s->params;
    // a request may draft less than the server, never more: the target's output budget is fixed
    if (p->speculative_n_max > sc->n_draft_max) {
        p->speculative_n_max = sc->n_draft_max;
    }
    if (p->speculative_n_min > p->speculative_n_max) {
        p->speculative_n_min = p->speculative_n_max;
    }
    if (p->speculative_p_min < 0.0f) {
        p->speculative_p_min = 0.0f;
    }
    if (!s->spec || p->speculative_n_max == 0 || p->speculative_p_min == s->spec_p_min) {
        return true;
    }
    // p_min steers the draft model while it drafts: rebuild the drafter (the draft KV is re-synced by prefix). The
    // old one goes first: freeing it detaches the draft context's backend sampler, which would be the new one's
    const float p_min_old = s->spec_p_min;
    common_speculative_free(s->spec);
    s->spec = spec_make(sc, s, p->speculative_p_min);
    if (!s->spec) {
        // keep the slot speculating for later requests with the server's settings
        s->spec = spec_make(sc, s, p_min_old);
        return false;
    }
    return true;
}

static void batch_add(struct llama_batch * b, llama_token tok, llama_pos pos, llama_seq_id seq) {
    const int k = b->n_tokens++;
    b->token[k]     = tok;
    b->pos[k]       = pos;
    b->n_seq_id[k]  = 1;
    b->seq_id[k][0] = seq;
    b->logits[k]    = 1;
}

void server_spec_add_to_batch(struct server_context * sc, struct server_slot * s, int room) {
    struct llama_batch * b = &sc->batch;
    const int pos = s->n_cache; // next_tok's position; the sequence holds s->cache[0..pos)
    s->n_draft = 0;
    s->i_batch = b->n_tokens;
    s->i_batch_dft[0] = b->n_tokens;
    batch_add(b, s->next_tok, pos, s->id);
    server_slot_cache_push(s, s->next_tok);

    if (!s->spec || s->params.speculative_n_max <= 0) {
        return;
    }
    // draft no more than the batch, the slot's context and the tokens still to generate can take
    int lim = s->params.speculative_n_max;
    lim = lim < room - 1 ? lim : room - 1;
    lim = lim < s->n_ctx - 2 - pos ? lim : s->n_ctx - 2 - pos;
    if (s->params.n_predict >= 0) {
        const int left = s->params.n_predict - s->n_decoded - 1;
        lim = lim < left ? lim : left;
    }
    const int n_min = s->params.speculative_n_min > 1 ? s->params.speculative_n_min : 1;
    if (lim < n_min) {
        return;
    }
    int n = common_speculative_gen_draft(s->spec, s->cache, pos, s->next_tok, s->draft);
    n = n < lim ? n : lim;
    if (n < n_min) {
        return;
    }
    for (int i = 0; i < n; i++) {
        s->i_batch_dft[1 + i] = b->n_tokens;
        batch_add(b, s->draft[i], pos + 1 + i, s->id);
    }
    s->n_draft = n;
    s->n_draft_total += n;
}

void server_spec_accept(struct server_context * sc, struct server_slot * s) {
    const int n_draft = s->n_draft;
    const size_t n_ids = common_sampler_sample_and_accept_n(s->smpl, sc->ctx, s->i_batch_dft, s->draft,
                                                            (size_t) n_draft, s->ids, false);
    s->n_draft = 0;
    if (n_ids == 0) {
        server_task_fail(s->task, "failed to sample a token", ERROR_TYPE_SERVER);
        llama_memory_seq_rm(llama_get_memory(sc->ctx), s->id, s->n_cache, -1);
        server_slot_release(sc, s);
        return;
    }
    if (n_draft > 0) {
        s->n_draft_accepted += (int32_t) n_ids - 1;
        common_speculative_accept(s->spec, (int32_t) n_ids - 1);
    }
    for (size_t j = 0; j < n_ids; j++) {
        if (j > 0) {
            // ids[j - 1] == draft[j - 1] is in the KV cache at the next position
            server_slot_cache_push(s, s->ids[j - 1]);
        }
        server_slot_on_token(sc, s, s->ids[j], s->i_batch_dft[j]);
        if (s->state != SLOT_STATE_GENERATING) {
            break; // finished (or released) on this token
        }
    }
    if (n_draft > 0) {
        // the rejected draft positions (and accepted ones past the end of the generation) leave the cache
        llama_memory_seq_rm(llama_get_memory(sc->ctx), s->id, s->n_cache, -1);
    }
}
