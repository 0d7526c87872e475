// llama-cli's generation: one assistant reply for a rendered conversation. The KV cache (sequence 0) is kept
// between replies together with the tokens it holds, so each turn decodes only what follows the common prefix
// of the new prompt and the cached tokens (as llama-server does per slot).
#pragma once

#include "common.h"
#include "llama.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cli_gen {
    struct llama_context      * ctx;
    const struct llama_model  * model;
    const struct llama_vocab  * vocab;
    const struct common_params * params;

    llama_token * cache;   // the tokens in the KV cache, at positions 0..n_cache-1
    int32_t       n_cache;
    int32_t       cap_cache;
    int32_t       n_ctx;
};

struct cli_gen_timings {
    int32_t n_prompt;     // prompt tokens decoded (the cached prefix is not counted)
    int64_t t_prompt_us;
    int32_t n_gen;        // tokens sampled
    int64_t t_gen_us;
};

enum cli_gen_status {
    CLI_GEN_DONE,        // end of generation, -n reached, a reverse prompt, or the context is full
    CLI_GEN_INTERRUPTED, // Ctrl+C: the partial reply is kept
    CLI_GEN_FAILED,      // nothing usable (err says why); the cache stays consistent
};

// receives the reply text as it is produced (never splits a UTF-8 sequence, never shows a reverse prompt)
typedef void (*cli_emit_fn)(const char * text, size_t len, void * user_data);

void cli_gen_init(struct cli_gen * g, struct llama_context * ctx, const struct common_params * params);
void cli_gen_free(struct cli_gen * g);

// Generates the reply to `prompt` (the rendered conversation). *content receives the reply text (malloc'd, caller
// frees; "" when nothing was generated, NULL only when out of memory). *context_full is set when the reply stopped
// because the context ran out (no --context-shift). On CLI_GEN_FAILED err holds one line.
enum cli_gen_status cli_gen_reply(struct cli_gen * g, const char * prompt, cli_emit_fn emit, void * user_data,
                                  char ** content, struct cli_gen_timings * timings, bool * context_full,
                                  char * err, size_t err_size);
