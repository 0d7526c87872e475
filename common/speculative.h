// speculative decoding helpers: output budgets, draft-context params, a draft source (draft model or n-grams)
#pragma once

#include "common.h"
#include "llama.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct common_speculative_output_limits {
    int32_t total;   // outputs in one batch
    int32_t per_seq; // outputs per sequence
};

// per_seq = 1 + max(0, n_draft), total = n_parallel * per_seq, both computed in int64 and clamped to n_batch
struct common_speculative_output_limits common_speculative_get_output_limits(int32_t n_batch, int32_t n_parallel,
                                                                             int32_t n_draft);

// context params for a draft model: the draft cache types, threads and n_ctx; one output per sequence
struct llama_context_params common_base_params_to_speculative(const struct common_params * params);

// the number of tokens one step may draft: the largest over the enabled types (draft model: --spec-draft-n-max,
// ngram-simple / ngram-map-k: their size_m, ngram-mod: its n_max, ngram-cache: 8); 0 when no type is enabled
int32_t common_speculative_n_max(const struct common_params_speculative * params);

// llama.cpp's rule: same vocab type, same BOS/EOS and add-BOS, vocab sizes within 128, identical token texts
// from id 5 on (for the overlap). Logs one line naming the mismatch.
bool common_speculative_are_compatible(const struct llama_context * ctx_tgt, const struct llama_context * ctx_dft);

struct common_speculative;

// ctx_dft: the draft model's context (not owned) for draft-simple; NULL for the n-gram types. With
// params->draft.backend_sampling (--spec-draft-backend-sampling, the default) the draft's sampler chain { top_k(10) }
// is attached to ctx_dft's sequence 0 with llama_set_sampler and runs in the draft graph; when the context refuses it
// (logged) drafting samples on the CPU. Either way the draft token is the best of the ten and its probability among
// them is checked against --spec-draft-p-min. Free the state before ctx_dft (it detaches the chain).
// NULL (logged) when the parameters are unusable or the vocabularies are incompatible.
struct common_speculative * common_speculative_init(const struct common_params_speculative * params,
                                                    struct llama_context * ctx_tgt,
                                                    struct llama_context * ctx_dft);
void common_speculative_free(struct common_speculative * spec);

// true when the draft model's sampler chain runs on the backend (attached to ctx_dft's sequence 0); false for CPU
// draft sampling (flag off, refused by the context) and for the n-gram types
bool common_speculative_draft_backend(const struct common_speculative * spec);

// Types: draft-simple (needs ctx_dft), ngram-simple, ngram-map-k, ngram-map-k4v, ngram-mod, ngram-cache (static/dynamic caches
// from params->lookup_cache_static/dynamic). When several are enabled the draftless ones are asked first, in that
// order, then the draft model; the first non-empty proposal is the draft.

// a new token history starts for this state (a new prompt): n-gram state tied to the old history is reset.
// gen_draft calls it itself on its first call and whenever the history got shorter.
void common_speculative_begin(struct common_speculative * spec, const llama_token * prompt, int32_t n_prompt);

// drafts tokens to follow prompt_tgt[0..n_prompt) + id_last into out (room for common_speculative_n_max(params)
// tokens); returns how many (0 when nothing is proposed, or the draft model found fewer than n_min).
// prompt_tgt should only grow between calls (the tokens in the target's memory).
int32_t common_speculative_gen_draft(struct common_speculative * spec, const llama_token * prompt_tgt,
                                     int32_t n_prompt, llama_token id_last, llama_token * out);

// reports that n_accepted of the last draft were accepted (ngram-map-k and ngram-mod adapt to it)
void common_speculative_accept(struct common_speculative * spec, int32_t n_accepted);

// One verification step of speculative decoding on sequence seq: decodes id_last at n_past followed by the
// n_draft drafted tokens, all with outputs, samples with smpl until the first token that differs from the draft
// (common_sampler_sample_and_accept_n; idxs = 0..n_draft, ids has room for n_draft + 1), and drops the rejected
// draft positions from the KV cache (everything from n_past + result on). Returns the number of ids, 0 on error.
struct common_sampler;
size_t common_speculative_verify(struct llama_context * ctx, struct common_sampler * smpl, struct llama_batch * batch,
                                 llama_seq_id seq, llama_pos n_past, llama_token id_last, const llama_token * draft,
                                 int32_t n_draft, const int * idxs, llama_token * ids);

#ifdef __cplusplus
}
#endif
