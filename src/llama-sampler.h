// Internal sampler interface of libllama: the chain layout (read by llama_sampler_sample and, later, by the
// context's backend-sampling code), helpers shared by the sampler source files, and test hooks.
#pragma once

#include "llama.h"
#include "llama-rng.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct llama_sampler_chain_entry {
    bool                   is_backend; // runs inside the decode graph (a prefix of the chain, see backend_init)
    struct llama_sampler * ptr;        // owned by the chain
};

struct llama_sampler_chain {
    struct llama_sampler_chain_params params;

    // has .backend_init() been called?
    bool     is_init;
    // graph nodes the backend part of the chain needs (set by backend_init)
    uint32_t n_nodes;

    struct llama_sampler_chain_entry * samplers; // [n_samplers]
    size_t n_samplers;
    size_t cap_samplers;

    // candidate buffer reused by llama_sampler_sample
    llama_token_data * cur; // [cap_cur]
    size_t cap_cur;

    int64_t t_sample_us;
    int32_t n_sample;
};

bool llama_sampler_is_chain(const struct llama_sampler * smpl);
bool llama_sampler_is_dist (const struct llama_sampler * smpl);

// grow chain->cur to hold n candidates; NULL when out of memory
llama_token_data * llama_sampler_chain_reserve_cur(struct llama_sampler_chain * chain, size_t n);

// graph nodes needed by the backend part of an initialised chain
uint32_t llama_sampler_backend_n_nodes(const struct llama_sampler * sampler);
// start a new decode for a (chain of) backend sampler(s): transactional dist samplers forget unaccepted draws
void     llama_sampler_backend_begin(struct llama_sampler * sampler);

// dist sampler, backend side (SEEDS-SPEC §2.5). set_transactional is what backend_init does with
// n_outputs_max_per_seq > 1; draw_backend fills out[0..n) with the uniforms of one graph run: from the staging
// RNG when transactional (each draw is committed later by accept), from the real RNG otherwise.
void     llama_sampler_dist_set_transactional(struct llama_sampler * smpl, bool transactional);
void     llama_sampler_dist_draw_backend(struct llama_sampler * smpl, float * out, size_t n);

// ---- backend sampling (llama-sampler-backend.c) ----
// true when the device behind buft runs every op of smpl's row subgraph (always for the CPU)
bool llama_sampler_backend_support(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft);
// backend_init of samplers that work for any number of outputs per sequence
bool llama_sampler_backend_init_default(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft,
        uint32_t n_outputs_max_per_seq);

// row subgraphs: each rewrites data (logits / candidates / probs / sampled) for one output row
void llama_sampler_backend_greedy    (struct ggml_context * ctx, struct llama_sampler_data * data);
void llama_sampler_backend_top_k     (struct ggml_context * ctx, struct llama_sampler_data * data, int32_t k);
void llama_sampler_backend_top_p     (struct ggml_context * ctx, struct llama_sampler_data * data, float p, size_t min_keep);
void llama_sampler_backend_min_p     (struct ggml_context * ctx, struct llama_sampler_data * data, float p, size_t min_keep);
void llama_sampler_backend_temp      (struct ggml_context * ctx, struct llama_sampler_data * data, float temp);
void llama_sampler_backend_temp_ext  (struct ggml_context * ctx, struct llama_sampler_data * data, float temp,
        float delta, float exponent);
// uniform: F32 [1] input holding the draw in [0, 1)
void llama_sampler_backend_dist      (struct ggml_context * ctx, struct llama_sampler_data * data, struct ggml_tensor * uniform);
// bias_full: F32 [n_vocab] bias of every token
void llama_sampler_backend_logit_bias(struct ggml_context * ctx, struct llama_sampler_data * data, struct ggml_tensor * bias_full);

// the chain's backend slots: prefix rule and node budget probe (SEEDS-SPEC §2.3)
// the vocabulary size, which the graph part of the penalties sampler needs and llama.h's constructor does not
// take: set on every penalties sampler of a chain (nested chains too) by the context that takes the chain
void llama_sampler_penalties_set_n_vocab(struct llama_sampler * smpl, int32_t n_vocab);
void llama_sampler_chain_set_n_vocab    (struct llama_sampler * smpl, int32_t n_vocab);
bool llama_sampler_chain_backend_init     (struct llama_sampler * smpl, ggml_backend_buffer_type_t buft, uint32_t n_outputs_max_per_seq);
void llama_sampler_chain_backend_apply    (struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data);
void llama_sampler_chain_backend_set_input(struct llama_sampler * smpl);
void llama_sampler_chain_backend_accept   (struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct ggml_tensor * selected);

// graph input tensors a sampler created for the current sampling graph (one per row, or one per graph)
struct llama_sampler_inputs {
    struct ggml_tensor ** t;
    size_t n;
    size_t cap;
};
bool llama_sampler_inputs_push(struct llama_sampler_inputs * in, struct ggml_tensor * t);
void llama_sampler_inputs_free(struct llama_sampler_inputs * in);

// a sampler that does nothing; llama.cpp returns it (named "?top-k" etc.) for disabled settings
struct llama_sampler * llama_sampler_init_empty(const char * name);

// shared by the sampler files
void     llama_sampler_softmax_impl(llama_token_data_array * cur_p, bool do_sort);
void     llama_sampler_top_k_impl  (llama_token_data_array * cur_p, int32_t k);
void     llama_sampler_temp_impl   (llama_token_data_array * cur_p, float temp);
// index drawn with std::discrete_distribution over the candidates' p; -1 when out of memory
int      llama_sampler_sample_discrete(llama_token_data_array * cur_p, struct llama_mt19937 * rng);
// sorts data[0..n) by logit, descending (NaN last)
void     llama_token_data_sort_desc(llama_token_data * data, size_t n);
// moves the k best of data[0..n) to the front, sorted
void     llama_token_data_top_k(llama_token_data * data, size_t n, size_t k);
// keeps the k best candidates, sorted
void     llama_token_data_array_top_k_inplace(llama_token_data_array * cur_p, size_t k);
// seed, or a random one for LLAMA_DEFAULT_SEED
uint32_t llama_sampler_rng_seed(uint32_t seed);
void     llama_sampler_timing_add(int64_t * t_us, int64_t t_start_us, bool no_perf);
// seed_cur of a mirostat (v1 or v2) sampler, LLAMA_DEFAULT_SEED for other samplers
uint32_t llama_sampler_mirostat_seed(const struct llama_sampler * smpl);

// sampler construction helpers: zeroed context (logs on failure); wrap ctx into a sampler, freeing ctx (plain
// free) when ctx is NULL or the wrapper cannot be allocated; free a plain context; copy_state of samplers whose
// context is immutable configuration
void *                 llama_sampler_ctx_calloc(size_t size, const char * what);
struct llama_sampler * llama_sampler_new_owned(struct llama_sampler_i * iface, void * ctx);
void                   llama_sampler_free_ctx(struct llama_sampler * smpl);
void                   llama_sampler_copy_state_none(const struct llama_sampler * src, struct llama_sampler * dst);

// DRY does anything with these settings (a disabled DRY is the empty sampler "?dry")
bool llama_sampler_dry_enabled(float multiplier, float base, int32_t last_n);

// DRY: a sequence breaker as the head token plus the tokens that must follow it
struct llama_sampler_dry_breaker {
    llama_token   head;
    llama_token * tail;   // [n_tail]
    int32_t       n_tail;
};

// DRY from already tokenized breakers (copied); the vocab-based llama_sampler_init_dry builds them from strings
struct llama_sampler * llama_sampler_init_dry_from_breakers(
        float   dry_multiplier,
        float   dry_base,
        int32_t dry_allowed_length,
        int32_t dry_penalty_last_n,
        const struct llama_sampler_dry_breaker * breakers,
        size_t  n_breakers);

// test hook (tests/test-sampling.c): breakers given as token sequences, the first token being the head
struct llama_sampler * llama_sampler_init_dry_testing(
        float               dry_multiplier,
        float               dry_base,
        int32_t             dry_allowed_length,
        int32_t             dry_penalty_last_n,
        const llama_token * const * seq_breakers,
        const size_t      * seq_breaker_lens,
        size_t              n_seq_breakers);
