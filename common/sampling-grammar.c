// The grammar sampler of a common_sampler (sampling.c): plain, or lazy with llama.cpp's trigger rules
// (common_sampler_init in llama.cpp's common/sampling.cpp): word triggers are escaped and, with the PATTERN
// triggers, joined into one "^[\s\S]*?(w1|w2|p1...)[\s\S]*" pattern (found anywhere, the grammar starting at the
// trigger); PATTERN_FULL triggers must match the whole output (anchored here, as our lazy sampler only
// full-matches "^...$" patterns); TOKEN triggers are tokens.
#include "sampling.h"

#include "log.h"
#include "string-builder.h"

#include <stdlib.h>
#include <string.h>

char * regex_escape(const char * s) {
    static const char special[] = ".^$|()*+?[]{}\\";
    const size_t n = strlen(s);
    char * out = malloc(2 * n + 1);
    if (!out) {
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (strchr(special, s[i])) {
            out[o++] = '\\';
        }
        out[o++] = s[i];
    }
    out[o] = '\0';
    return out;
}

static char * anchored(const char * p) {
    const size_t n = strlen(p);
    char * out = malloc(n + 3);
    if (!out) {
        return NULL;
    }
    size_t o = 0;
    if (n == 0 || p[0] != '^') {
        out[o++] = '^';
    }
    memcpy(out + o, p, n);
    o += n;
    if (n == 0 || p[n - 1] != '$') {
        out[o++] = '$';
    }
    out[o] = '\0';
    return out;
}

struct llama_sampler * common_sampler_init_grammar(const struct llama_vocab * vocab,
                                                   const struct common_params_sampling * params) {
    if (!params->grammar_lazy) {
        return llama_sampler_init_grammar(vocab, params->grammar, "root");
    }
    const size_t nt = params->n_grammar_triggers > 0 ? (size_t) params->n_grammar_triggers : 0;
    if (nt == 0) {
        LOG_ERR("%s: no triggers set for lazy grammar\n", __func__);
        return NULL;
    }
    char ** patterns = calloc(nt + 1, sizeof(char *));
    llama_token * tokens = calloc(nt, sizeof(llama_token));
    size_t n_pat = 0, n_tok = 0, n_anywhere = 0;
    struct common_sb any = { 0 };
    bool ok = patterns && tokens;
    common_sb_add(&any, "^[\\s\\S]*?(");
    for (size_t i = 0; ok && i < nt; i++) {
        const struct common_grammar_trigger * t = &params->grammar_triggers[i];
        const char * v = t->value ? t->value : "";
        switch (t->type) {
            case COMMON_GRAMMAR_TRIGGER_TYPE_WORD: {
                char * e = regex_escape(v);
                ok = e != NULL;
                if (e) {
                    common_sb_add(&any, n_anywhere++ ? "|" : "");
                    common_sb_add(&any, e);
                }
                free(e);
                break;
            }
            case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN:
                common_sb_add(&any, n_anywhere++ ? "|" : "");
                common_sb_add(&any, v);
                break;
            case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL:
                patterns[n_pat] = anchored(v);
                ok = patterns[n_pat++] != NULL;
                break;
            case COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN:
                tokens[n_tok++] = t->token;
                break;
            default:
                LOG_ERR("%s: unknown grammar trigger type %d\n", __func__, (int) t->type);
                ok = false;
                break;
        }
    }
    common_sb_add(&any, ")[\\s\\S]*");
    ok = ok && !any.oom;
    if (ok && n_anywhere > 0) {
        patterns[n_pat++] = any.s;
        any.s = NULL;
    }
    struct llama_sampler * s = NULL;
    if (ok) {
        s = llama_sampler_init_grammar_lazy_patterns(vocab, params->grammar, "root", (const char **) patterns, n_pat,
                                                     tokens, n_tok);
    } else {
        LOG_ERR("%s: out of memory or bad trigger\n", __func__);
    }
    for (size_t i = 0; patterns && i < n_pat; i++) {
        free(patterns[i]);
    }
    free(patterns);
    free(tokens);
    free(any.s);
    return s;
}
