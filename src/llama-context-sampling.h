// Backend sampling inside llama_decode (SEEDS-SPEC §1.2, 1.5-1.8): the per-sequence sampler registry, the
// decode-time output limit, the sampling subgraph per output row, and the sampled outputs of the last decode.
// llama-context.c calls these hooks; everything here hangs off ctx->sampling.
#pragma once

#include "llama.h"
#include "llama-graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct llama_context;
struct llama_ctx_sampling;

// after the cparams are resolved (n_outputs_max_per_seq known): registers params->samplers. false (logged)
// when a sampler is not a chain, a seq id is out of range, or out of memory.
bool   llama_ctx_sampling_init(struct llama_context * ctx, const struct llama_context_params * params);
void   llama_ctx_sampling_free(struct llama_context * ctx);

// graph nodes the sampling subgraphs may add to one ubatch graph of n_tokens tokens (SEEDS-SPEC §1.6)
size_t llama_ctx_sampling_graph_nodes(const struct llama_context * ctx, uint32_t n_tokens);

// decode, before the ubatch loop: false (logged) when a sequence with a backend sampler has more outputs than
// n_outputs_max_per_seq (decode returns -1)
bool   llama_ctx_sampling_check_batch(const struct llama_context * ctx, const struct llama_batch * batch);
// decode, before the ubatch loop: sizes the sampled-output buffers to n_outputs rows, clears them and starts a
// sampling transaction on every sampler (once per logical batch). false when out of memory.
bool   llama_ctx_sampling_begin(struct llama_context * ctx, uint32_t n_outputs);

// after llm_graph_build: adds the sampling subgraphs for the output rows of g->ub. false (logged) on failure.
bool   llama_ctx_sampling_build(struct llama_context * ctx, struct llm_graph * g);
// graph reuse: true when the sampling subgraphs of the kept graph (from the last llama_ctx_sampling_build) serve
// the n_out output rows of ub as well (the same sampler on every row); they then become the current ones again
bool   llama_ctx_sampling_reuse(struct llama_context * ctx, const struct llama_ubatch * ub, uint32_t n_out);
// llama.cpp's needs_raw_logits: false when every output of ub belongs only to sequences with a backend sampler,
// whose rows the samplers return; the raw logits are then not copied out (llama_get_logits_ith gives a row
// that holds no logits of this decode, as in llama.cpp)
bool   llama_ctx_sampling_needs_raw_logits(const struct llama_context * ctx, const struct llama_ubatch * ub);
// after the graph inputs are uploaded
void   llama_ctx_sampling_set_inputs(struct llama_context * ctx);
// after a successful compute: copies the sampled rows to rows row_off.. of the output buffers
void   llama_ctx_sampling_copy_outputs(struct llama_context * ctx, size_t row_off);

#ifdef __cplusplus
}
#endif
