// Per-request generation parameters (llama.cpp's slot_params) with the server's defaults and their JSON form
// as /props and /slots show it. Part 2 (completions) adds the request parser on top.
#pragma once

#include <jansson.h>

#include <stdbool.h>
#include <stdint.h>

#define SERVER_MAX_STOP_WORDS 16

struct server_slot_params {
    int32_t  n_predict;          // -1 = unlimited
    int32_t  n_keep;
    int32_t  n_discard;
    bool     stream;
    bool     ignore_eos;
    bool     timings_per_token;
    bool     post_sampling_probs;
    bool     backend_sampling;
    uint32_t seed;               // LLAMA_DEFAULT_SEED = random
    float    temperature;
    float    dynatemp_range;
    float    dynatemp_exponent;
    int32_t  top_k;
    float    top_p;
    float    min_p;
    float    top_n_sigma;
    float    xtc_probability;
    float    xtc_threshold;
    float    typical_p;
    int32_t  repeat_last_n;
    float    repeat_penalty;
    float    presence_penalty;
    float    frequency_penalty;
    float    dry_multiplier;
    float    dry_base;
    int32_t  dry_allowed_length;
    int32_t  dry_penalty_last_n;
    int32_t  mirostat;
    float    mirostat_tau;
    float    mirostat_eta;
    int32_t  n_probs;
    int32_t  min_keep;
    int32_t  speculative_n_max;
    int32_t  speculative_n_min;
    float    speculative_p_min;
    const char * grammar;        // GBNF text, NULL = none; borrowed (the slot's or the command line's copy)
    bool     grammar_lazy;
    const json_t * grammar_triggers;  // borrowed: [{"type", "value"[, "token"]}] (the slot's copy), NULL = []
    const json_t * preserved_tokens;  // borrowed: [token ids] (the slot's copy), NULL = []
    const float  * lora;              // borrowed: the LoRA adapter scales (n_lora of them), NULL = none
    int32_t  n_lora;
};

// llama.cpp's defaults (common_params_sampling + slot_params)
struct server_slot_params server_slot_params_default(void);

struct common_params;
// the request defaults of a server started with these parameters: as llama.cpp, the command line's sampling
// options (--temp, --top-k, -s, ...), -n and --keep (the speculative limits are set by the caller)
struct server_slot_params server_slot_params_from_common(const struct common_params * cp);

// the "params" object of /props and /slots; NULL when out of memory
json_t * server_slot_params_to_json(const struct server_slot_params * p);
