// common_params_sampling: the sampling options of the programs, with llama.cpp's defaults.
// Kept apart from common.h so that common/sampling.c (the sampler chain) can include it alone.
#pragma once

#include "llama.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum common_sampler_type {
    COMMON_SAMPLER_TYPE_NONE        = 0,
    COMMON_SAMPLER_TYPE_DRY         = 1,
    COMMON_SAMPLER_TYPE_TOP_K       = 2,
    COMMON_SAMPLER_TYPE_TOP_P       = 3,
    COMMON_SAMPLER_TYPE_MIN_P       = 4,
  //COMMON_SAMPLER_TYPE_TFS_Z       = 5,
    COMMON_SAMPLER_TYPE_TYPICAL_P   = 6,
    COMMON_SAMPLER_TYPE_TEMPERATURE = 7,
    COMMON_SAMPLER_TYPE_XTC         = 8,
    COMMON_SAMPLER_TYPE_INFILL      = 9,
    COMMON_SAMPLER_TYPE_PENALTIES   = 10,
    COMMON_SAMPLER_TYPE_TOP_N_SIGMA = 11,
    COMMON_SAMPLER_TYPE_ADAPTIVE_P  = 12,
};

// bits of common_params_sampling.user_sampling_config: which options the user set explicitly
// (model metadata defaults, general.sampling.*, must not override those)
enum common_params_sampling_config {
    COMMON_PARAMS_SAMPLING_CONFIG_SAMPLERS        = 1 << 0,
    COMMON_PARAMS_SAMPLING_CONFIG_TOP_K           = 1 << 1,
    COMMON_PARAMS_SAMPLING_CONFIG_TOP_P           = 1 << 2,
    COMMON_PARAMS_SAMPLING_CONFIG_MIN_P           = 1 << 3,
    COMMON_PARAMS_SAMPLING_CONFIG_XTC_PROBABILITY = 1 << 4,
    COMMON_PARAMS_SAMPLING_CONFIG_XTC_THRESHOLD   = 1 << 5,
    COMMON_PARAMS_SAMPLING_CONFIG_TEMP            = 1 << 6,
    COMMON_PARAMS_SAMPLING_CONFIG_PENALTY_LAST_N  = 1 << 7,
    COMMON_PARAMS_SAMPLING_CONFIG_PENALTY_REPEAT  = 1 << 8,
    COMMON_PARAMS_SAMPLING_CONFIG_MIROSTAT        = 1 << 9,
    COMMON_PARAMS_SAMPLING_CONFIG_MIROSTAT_TAU    = 1 << 10,
    COMMON_PARAMS_SAMPLING_CONFIG_MIROSTAT_ETA    = 1 << 11,
};

// what wakes a lazy grammar (llama.cpp's common_grammar_trigger): a token, a word anywhere in the output, a regex
// found anywhere (the grammar starts at its first capture group, else at the match), or a regex the whole output
// must match (PATTERN_FULL)
enum common_grammar_trigger_type {
    COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN,
    COMMON_GRAMMAR_TRIGGER_TYPE_WORD,
    COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN,
    COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL,
};

struct common_grammar_trigger {
    enum common_grammar_trigger_type type;
    char *      value;  // the word or pattern (TOKEN: the token's text)
    llama_token token;  // TOKEN only
};

#define COMMON_SAMPLERS_MAX        16
#define COMMON_DRY_BREAKERS_MAX    16
#define COMMON_DRY_BREAKER_LEN_MAX 64

struct common_params_sampling {
    uint32_t seed; // LLAMA_DEFAULT_SEED = random

    int32_t n_prev;             // 64: number of previous tokens to remember
    int32_t n_probs;            // 0: if > 0, output the probabilities of the top n_probs tokens
    int32_t min_keep;           // 0: samplers keep at least this many tokens (0 = disabled)
    int32_t top_k;              // 40: <= 0 = vocab size
    float   top_p;              // 0.95: 1.0 = disabled
    float   min_p;              // 0.05: 0.0 = disabled
    float   xtc_probability;    // 0.0 = disabled
    float   xtc_threshold;      // 0.1: > 0.5 disables XTC
    float   typ_p;              // 1.0 = disabled
    float   temp;               // 0.8: <= 0.0 samples greedily
    float   dynatemp_range;     // 0.0 = disabled
    float   dynatemp_exponent;  // 1.0
    int32_t penalty_last_n;     // 64: last n tokens to penalize (0 = disabled, -1 = context size)
    float   penalty_repeat;     // 1.0 = disabled
    float   penalty_freq;       // 0.0 = disabled
    float   penalty_present;    // 0.0 = disabled
    float   dry_multiplier;     // 0.0 = disabled
    float   dry_base;           // 1.75
    int32_t dry_allowed_length; // 2
    int32_t dry_penalty_last_n; // 64: tokens scanned for repetitions (0 = disabled, -1 = context size)
    float   adaptive_target;    // -1.0 = disabled
    float   adaptive_decay;     // 0.9
    int32_t mirostat;           // 0 = disabled, 1 = mirostat, 2 = mirostat 2.0
    float   top_n_sigma;        // -1.0 = disabled
    float   mirostat_tau;       // 5.0: target entropy
    float   mirostat_eta;       // 0.1: learning rate
    bool    ignore_eos;
    bool    no_perf;
    bool    timing_per_token;
    bool    backend_sampling;   // -bs: run the sampler chain on the backend

    uint64_t user_sampling_config; // common_params_sampling_config bits

    int32_t n_dry_sequence_breakers;
    char    dry_sequence_breakers[COMMON_DRY_BREAKERS_MAX][COMMON_DRY_BREAKER_LEN_MAX];

    int32_t                  n_samplers;
    enum common_sampler_type samplers[COMMON_SAMPLERS_MAX];

    // --logit-bias; owned by the params (common_params_free releases it)
    int32_t            n_logit_bias;
    llama_logit_bias * logit_bias;

    // --grammar / --grammar-file text, owned; NULL = none
    char * grammar;

    // lazy grammar: constrain only from a trigger on (tool calls). The triggers are the caller's, read during
    // common_sampler_init only (NULL / 0 by default); a lazy grammar without triggers is refused.
    bool grammar_lazy;
    const struct common_grammar_trigger * grammar_triggers;
    int32_t n_grammar_triggers;
};

// llama.cpp's defaults
struct common_params_sampling common_params_sampling_default(void);

#ifdef __cplusplus
}
#endif
