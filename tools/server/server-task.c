#include "server-task.h"

#include "common.h"
#include "llama.h"

struct server_slot_params server_slot_params_default(void) {
    struct server_slot_params p = {
        .n_predict           = -1,
        .n_keep              = 0,
        .n_discard           = 0,
        .stream              = true,
        .ignore_eos          = false,
        .timings_per_token   = false,
        .post_sampling_probs = false,
        .backend_sampling    = false,
        .seed                = LLAMA_DEFAULT_SEED,
        .temperature         = 0.8f,
        .dynatemp_range      = 0.0f,
        .dynatemp_exponent   = 1.0f,
        .top_k               = 40,
        .top_p               = 0.95f,
        .min_p               = 0.05f,
        .top_n_sigma         = -1.0f,
        .xtc_probability     = 0.0f,
        .xtc_threshold       = 0.1f,
        .typical_p           = 1.0f,
        .repeat_last_n       = 64,
        .repeat_penalty      = 1.0f,
        .presence_penalty    = 0.0f,
        .frequency_penalty   = 0.0f,
        .dry_multiplier      = 0.0f,
        .dry_base            = 1.75f,
        .dry_allowed_length  = 2,
        .dry_penalty_last_n  = -1,
        .mirostat            = 0,
        .mirostat_tau        = 5.0f,
        .mirostat_eta        = 0.1f,
        .n_probs             = 0,
        .min_keep            = 0,
        .speculative_n_max   = 16,
        .speculative_n_min   = 0,
        .speculative_p_min   = 0.75f,
        .grammar             = NULL,
    };
    return p;
}

struct server_slot_params server_slot_params_from_common(const struct common_params * cp) {
    struct server_slot_params p = server_slot_params_default();
    const struct common_params_sampling * sp = &cp->sampling;
    p.n_predict          = cp->n_predict;
    p.n_keep             = cp->n_keep;
    p.seed               = sp->seed;
    p.ignore_eos         = sp->ignore_eos;
    p.backend_sampling   = sp->backend_sampling;
    p.temperature        = sp->temp;
    p.dynatemp_range     = sp->dynatemp_range;
    p.dynatemp_exponent  = sp->dynatemp_exponent;
    p.top_k              = sp->top_k;
    p.top_p              = sp->top_p;
    p.min_p              = sp->min_p;
    p.top_n_sigma        = sp->top_n_sigma;
    p.xtc_probability    = sp->xtc_probability;
    p.xtc_threshold      = sp->xtc_threshold;
    p.typical_p          = sp->typ_p;
    p.repeat_last_n      = sp->penalty_last_n;
    p.repeat_penalty     = sp->penalty_repeat;
    p.presence_penalty   = sp->penalty_present;
    p.frequency_penalty  = sp->penalty_freq;
    p.dry_multiplier     = sp->dry_multiplier;
    p.dry_base           = sp->dry_base;
    p.dry_allowed_length = sp->dry_allowed_length;
    // common's default here (64) is not llama.cpp's (-1 = the context): only a --dry-penalty-last-n given on
    // the command line replaces the server's default
    if (sp->dry_penalty_last_n != common_params_sampling_default().dry_penalty_last_n) {
        p.dry_penalty_last_n = sp->dry_penalty_last_n;
    }
    p.mirostat           = sp->mirostat;
    p.mirostat_tau       = sp->mirostat_tau;
    p.mirostat_eta       = sp->mirostat_eta;
    p.n_probs            = sp->n_probs;
    p.min_keep           = sp->min_keep;
    p.grammar            = sp->grammar;
    return p;
}

json_t * server_slot_params_to_json(const struct server_slot_params * p) {
    static const char * const dry_breakers[] = { "\n", ":", "\"", "*" };
    // llama.cpp's default sampler order
    static const char * const samplers[] = {
        "penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature",
    };
    json_t * breakers = json_array();
    for (size_t i = 0; i < sizeof(dry_breakers) / sizeof(dry_breakers[0]); i++) {
        json_array_append_new(breakers, json_string(dry_breakers[i]));
    }
    json_t * smpl = json_array();
    for (size_t i = 0; i < sizeof(samplers) / sizeof(samplers[0]); i++) {
        json_array_append_new(smpl, json_string(samplers[i]));
    }
    // llama.cpp's per-request adapter list: every adapter with the scale this request runs it at
    json_t * lora = json_array();
    for (int32_t i = 0; lora && p->lora && i < p->n_lora; i++) {
        json_array_append_new(lora, json_pack("{s:i, s:f}", "id", (int) i, "scale", (double) p->lora[i]));
    }
    json_t * o = json_pack("{s:i, s:I, s:f, s:f, s:f, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:f, s:f, s:f,"
                           " s:f, s:f, s:i, s:i, s:o, s:i, s:f, s:f, s:[], s:i, s:i, s:i, s:b, s:b, s:[],"
                           " s:i, s:i, s:s, s:b, s:o, s:o, s:o, s:i, s:i, s:f, s:b, s:b, s:b, s:o}",
                           "n_predict",             p->n_predict,
                           "seed",                  (json_int_t) p->seed,
                           "temperature",           (double) p->temperature,
                           "dynatemp_range",        (double) p->dynatemp_range,
                           "dynatemp_exponent",     (double) p->dynatemp_exponent,
                           "top_k",                 p->top_k,
                           "top_p",                 (double) p->top_p,
                           "min_p",                 (double) p->min_p,
                           "top_n_sigma",           (double) p->top_n_sigma,
                           "xtc_probability",       (double) p->xtc_probability,
                           "xtc_threshold",         (double) p->xtc_threshold,
                           "typical_p",             (double) p->typical_p,
                           "repeat_last_n",         p->repeat_last_n,
                           "repeat_penalty",        (double) p->repeat_penalty,
                           "presence_penalty",      (double) p->presence_penalty,
                           "frequency_penalty",     (double) p->frequency_penalty,
                           "dry_multiplier",        (double) p->dry_multiplier,
                           "dry_base",              (double) p->dry_base,
                           "dry_allowed_length",    p->dry_allowed_length,
                           "dry_penalty_last_n",    p->dry_penalty_last_n,
                           "dry_sequence_breakers", breakers,
                           "mirostat",              p->mirostat,
                           "mirostat_tau",          (double) p->mirostat_tau,
                           "mirostat_eta",          (double) p->mirostat_eta,
                           "stop",
                           "max_tokens",            p->n_predict,
                           "n_keep",                p->n_keep,
                           "n_discard",             p->n_discard,
                           "ignore_eos",            (int) p->ignore_eos,
                           "stream",                (int) p->stream,
                           "logit_bias",
                           "n_probs",               p->n_probs,
                           "min_keep",              p->min_keep,
                           "grammar",               p->grammar ? p->grammar : "",
                           "grammar_lazy",          (int) p->grammar_lazy,
                           "grammar_triggers",      p->grammar_triggers ? json_deep_copy(p->grammar_triggers) : json_array(),
                           "preserved_tokens",      p->preserved_tokens ? json_deep_copy(p->preserved_tokens) : json_array(),
                           "samplers",              smpl,
                           "speculative.n_max",     p->speculative_n_max,
                           "speculative.n_min",     p->speculative_n_min,
                           "speculative.p_min",     (double) p->speculative_p_min,
                           "timings_per_token",     (int) p->timings_per_token,
                           "post_sampling_probs",   (int) p->post_sampling_probs,
                           "backend_sampling",      (int) p->backend_sampling,
                           "lora",                  lora ? lora : json_array());
    return o;
}
