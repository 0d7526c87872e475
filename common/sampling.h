// common_sampler: the programs' sampler chain built from common_params_sampling (logit bias, the --samplers order,
// then dist; or mirostat), an optional grammar sampler checked after sampling, and the history of accepted
// tokens. With --backend-sampling the chain (common_sampler_get) is registered on the context with
// llama_set_sampler and its backend prefix runs inside llama_decode.
#pragma once

#include "llama.h"
#include "sampling-params.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct common_sampler;

// NULL (logged) when a sampler cannot be built (bad grammar, out of memory)
struct common_sampler * common_sampler_init(const struct llama_model * model, const struct common_params_sampling * params);
void                    common_sampler_free(struct common_sampler * gsmpl);

// records token: the chain's state (penalties, dist draws), the grammar when accept_grammar, the history
void common_sampler_accept(struct common_sampler * gsmpl, llama_token token, bool accept_grammar);
void common_sampler_reset (struct common_sampler * gsmpl);

// an independent copy with the same state; NULL on failure
struct common_sampler * common_sampler_clone(const struct common_sampler * gsmpl);
// copies src's state into dst in place (dst keeps its identity, e.g. as a context's backend sampler); both must
// come from the same parameters. No-op on NULL or src == dst.
void common_sampler_copy(const struct common_sampler * src, struct common_sampler * dst);

void common_perf_print(const struct llama_context * ctx, const struct common_sampler * gsmpl);

// samples output idx of the last decode (does not accept). A token the backend already sampled is returned as it
// is. grammar_first: constrain the candidates by the grammar before the chain instead of checking afterwards.
llama_token common_sampler_sample(struct common_sampler * gsmpl, struct llama_context * ctx, int idx, bool grammar_first);

// speculative verification: samples and accepts idxs[0], idxs[1], ... while the sampled token equals draft[i];
// idxs has n_draft + 1 entries and out room for n_draft + 1 tokens. Returns the number of tokens written (>= 1
// unless sampling fails).
size_t common_sampler_sample_and_accept_n(struct common_sampler * gsmpl, struct llama_context * ctx,
        const int * idxs, const llama_token * draft, size_t n_draft, llama_token * out, bool grammar_first);

uint32_t common_sampler_get_seed(const struct common_sampler * gsmpl);

// candidates of the last common_sampler_sample (sorted by logit when do_sort)
llama_token_data_array * common_sampler_get_candidates(struct common_sampler * gsmpl, bool do_sort);

// the last accepted token (LLAMA_TOKEN_NULL when none)
llama_token common_sampler_last(const struct common_sampler * gsmpl);

// the chain: register it with llama_set_sampler for backend sampling
struct llama_sampler * common_sampler_get(const struct common_sampler * gsmpl);

// "logits -> logit-bias -> penalties -> ..." into buf (snprintf semantics: returns the full length)
int common_sampler_print(const struct common_sampler * gsmpl, char * buf, size_t size);

// text of the last n accepted tokens into buf (snprintf semantics)
int common_sampler_prev_str(const struct common_sampler * gsmpl, const struct llama_context * ctx, int n,
        char * buf, size_t size);

// the grammar sampler for params->grammar (non-empty): plain, or lazy (params->grammar_lazy) with llama.cpp's
// trigger rules (sampling-grammar.c). NULL when the grammar or a trigger pattern does not parse, when a lazy
// grammar has no trigger, or when out of memory.
struct llama_sampler * common_sampler_init_grammar(const struct llama_vocab * vocab,
                                                   const struct common_params_sampling * params);

// s with the regex metacharacters .^$|()*+?[]{}\ escaped (llama.cpp's regex_escape); malloc'd, NULL when out of
// memory
char * regex_escape(const char * s);

char         common_sampler_type_to_chr(enum common_sampler_type type);
const char * common_sampler_type_to_str(enum common_sampler_type type);

#ifdef __cplusplus
}
#endif
