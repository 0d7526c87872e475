// The per-request sampler: a common_sampler (llama.cpp's chain: logit bias, the "samplers" order, dist) built
// from the request's fields, so that the server samples exactly as the other programs and can register the
// chain for backend sampling (llama_set_sampler) and speculative verification.
#include "server-context.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool bias_push(llama_logit_bias ** out, int * n, int * cap, llama_token tok, float bias) {
    if (*n == *cap) {
        const int nc = *cap ? *cap * 2 : 16;
        llama_logit_bias * nb = realloc(*out, (size_t) nc * sizeof(**out));
        if (!nb) {
            return false;
        }
        *out = nb;
        *cap = nc;
    }
    (*out)[*n].token = tok;
    (*out)[*n].bias  = bias;
    (*n)++;
    return true;
}

// one logit_bias entry: token id (or a string whose tokens all get the bias) and a number or false (= -inf)
static bool add_bias(const struct llama_vocab * vocab, int n_vocab, const json_t * key, const json_t * val,
                     llama_logit_bias ** out, int * n, int * cap) {
    float bias;
    if (json_is_number(val)) {
        bias = (float) json_number_value(val);
    } else if (json_is_false(val)) {
        bias = -INFINITY;
    } else {
        return true; // llama.cpp ignores entries it cannot read
    }
    llama_token * toks = NULL;
    int nt = 0;
    llama_token one;
    if (json_is_integer(key)) {
        const json_int_t id = json_integer_value(key);
        if (id < 0 || id >= n_vocab) {
            return true;
        }
        one = (llama_token) id;
        toks = &one;
        nt = 1;
    } else if (json_is_string(key)) {
        nt = server_tokenize_text(vocab, json_string_value(key), json_string_length(key), false, false, &toks);
        if (nt < 0) {
            return false;
        }
    }
    bool ok = true;
    for (int i = 0; ok && i < nt; i++) {
        ok = bias_push(out, n, cap, toks[i], bias);
    }
    if (toks != &one) {
        free(toks);
    }
    return ok;
}

// "samplers": llama.cpp's names; unknown names are skipped as llama.cpp does
static void read_sampler_order(const json_t * smp, struct common_params_sampling * sp) {
    static const struct { const char * name; enum common_sampler_type type; } names[] = {
        { "penalties",   COMMON_SAMPLER_TYPE_PENALTIES   },
        { "dry",         COMMON_SAMPLER_TYPE_DRY         },
        { "top_n_sigma", COMMON_SAMPLER_TYPE_TOP_N_SIGMA },
        { "top_k",       COMMON_SAMPLER_TYPE_TOP_K       },
        { "typ_p",       COMMON_SAMPLER_TYPE_TYPICAL_P   },
        { "typical_p",   COMMON_SAMPLER_TYPE_TYPICAL_P   },
        { "top_p",       COMMON_SAMPLER_TYPE_TOP_P       },
        { "min_p",       COMMON_SAMPLER_TYPE_MIN_P       },
        { "xtc",         COMMON_SAMPLER_TYPE_XTC         },
        { "temperature", COMMON_SAMPLER_TYPE_TEMPERATURE },
    };
    if (!json_is_array(smp)) {
        return; // the defaults' order
    }
    sp->n_samplers = 0;
    size_t i;
    const json_t * el;
    json_array_foreach(smp, i, el) {
        const char * name = json_string_value(el);
        for (size_t k = 0; name && k < sizeof(names) / sizeof(names[0]); k++) {
            if (strcmp(name, names[k].name) == 0 && sp->n_samplers < COMMON_SAMPLERS_MAX) {
                sp->samplers[sp->n_samplers++] = names[k].type;
                break;
            }
        }
    }
}

struct common_sampler * server_sampler_init(const struct server_context * sc, const json_t * body,
                                            const struct server_slot_params * p,
                                            const struct server_grammar_lazy * lazy) {
    const int n_vocab = llama_vocab_n_tokens(sc->vocab);
    struct common_params_sampling sp = common_params_sampling_default();
    // the command line's sampler order (--samplers) and DRY breakers are the defaults a request may replace
    sp.n_samplers = sc->params.sampling.n_samplers;
    memcpy(sp.samplers, sc->params.sampling.samplers, sizeof(sp.samplers));
    sp.n_dry_sequence_breakers = sc->params.sampling.n_dry_sequence_breakers;
    memcpy(sp.dry_sequence_breakers, sc->params.sampling.dry_sequence_breakers, sizeof(sp.dry_sequence_breakers));
    sp.seed              = p->seed;
    sp.n_probs           = p->n_probs;
    sp.min_keep          = p->min_keep;
    sp.top_k             = p->top_k;
    sp.top_p             = p->top_p;
    sp.min_p             = p->min_p;
    sp.xtc_probability   = p->xtc_probability;
    sp.xtc_threshold     = p->xtc_threshold;
    sp.typ_p             = p->typical_p;
    sp.temp              = p->temperature;
    sp.dynatemp_range    = p->dynatemp_range;
    sp.dynatemp_exponent = p->dynatemp_exponent;
    sp.penalty_last_n    = p->repeat_last_n;
    sp.penalty_repeat    = p->repeat_penalty;
    sp.penalty_freq      = p->frequency_penalty;
    sp.penalty_present   = p->presence_penalty;
    sp.dry_multiplier    = p->dry_multiplier;
    sp.dry_base          = p->dry_base;
    sp.dry_allowed_length = p->dry_allowed_length;
    sp.dry_penalty_last_n = p->dry_penalty_last_n;
    sp.mirostat          = p->mirostat;
    sp.mirostat_tau      = p->mirostat_tau;
    sp.mirostat_eta      = p->mirostat_eta;
    sp.top_n_sigma       = p->top_n_sigma;
    sp.ignore_eos        = p->ignore_eos;
    sp.backend_sampling  = p->backend_sampling;
    sp.no_perf           = true;
    sp.grammar           = (char *) p->grammar; // read during common_sampler_init only
    read_sampler_order(json_object_get(body, "samplers"), &sp);

    const json_t * lb = json_object_get(body, "logit_bias");
    llama_logit_bias * biases = NULL;
    int nb = 0, cb = 0;
    bool ok = true;
    if (json_is_array(lb)) {
        size_t i;
        const json_t * el;
        json_array_foreach(lb, i, el) {
            if (ok && json_is_array(el) && json_array_size(el) == 2) {
                ok = add_bias(sc->vocab, n_vocab, json_array_get(el, 0), json_array_get(el, 1), &biases, &nb, &cb);
            }
        }
    } else if (json_is_object(lb)) {
        const char * k;
        const json_t * v;
        json_object_foreach((json_t *) lb, k, v) {
            char * end = NULL;
            const long id = strtol(k, &end, 10);
            json_t * key = (*k && end && *end == '\0') ? json_integer(id) : json_string(k);
            if (key && ok) {
                ok = add_bias(sc->vocab, n_vocab, key, v, &biases, &nb, &cb);
            }
            json_decref(key);
        }
    }
    if (p->ignore_eos) {
        // as llama.cpp: ignore_eos is a -inf bias on every end-of-generation token
        for (llama_token t = 0; ok && t < n_vocab; t++) {
            if (llama_vocab_is_eog(sc->vocab, t)) {
                ok = bias_push(&biases, &nb, &cb, t, -INFINITY);
            }
        }
    }
    // a lazy grammar waits for its triggers (tool calls); common_sampler_init copies them
    sp.grammar_lazy       = lazy->lazy;
    sp.grammar_triggers   = lazy->triggers;
    sp.n_grammar_triggers = (int32_t) lazy->n_triggers;
    struct common_sampler * smpl = NULL;
    if (ok) {
        sp.n_logit_bias = nb;
        sp.logit_bias   = biases;
        smpl = common_sampler_init(sc->model, &sp);
    }
    free(biases);
    return smpl;
}
