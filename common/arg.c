#include "arg.h"
#include "json-schema-to-grammar.h"

#include <jansson.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// how an option stores its value
enum arg_kind {
    ARG_INT,    // int32 field, range [lo, hi]
    ARG_FLOAT,  // float field, range [lo, hi]
    ARG_STR,    // owned char * field
    ARG_TRUE,   // flag: bool field = true
    ARG_FALSE,  // flag: bool field = false
    ARG_FN,     // handler with a value
    ARG_FN0,    // handler without a value (flag)
    ARG_FN2,    // handler with two values (the two words of value_hint), passed joined by '\n'
};

enum arg_group {
    GROUP_COMMON,
    GROUP_SAMPLING,
    GROUP_EXAMPLE,
};

// a handler returns NULL on success or a message (static, or written into arg_errbuf)
typedef const char * (*arg_handler)(struct common_params * p, const char * value);

struct common_arg {
    const char * names[5];   // NULL-terminated
    const char * value_hint; // NULL: a flag
    const char * help;
    const char * env;        // NULL: LLAMA_ARG_<first long name>; "" = none
    uint64_t     examples;   // bit per llama_example; 0 = every program
    enum arg_kind kind;
    size_t       off;
    double       lo, hi;
    arg_handler  fn;
    enum arg_group group;
    uint64_t     sampling_bit; // user_sampling_config bit
};

static _Thread_local char arg_errbuf[512];
// per-parse state: whether --dry-sequence-breaker was already seen (reset by common_params_parse_ex)
static _Thread_local bool g_dry_breakers_given = false;

static const char * arg_errorf(const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(arg_errbuf, sizeof(arg_errbuf), fmt, args);
    va_end(args);
    return arg_errbuf;
}

#define EX(e) (1ull << (e))
#define OFF(field) offsetof(struct common_params, field)

//
// value parsing
//

static bool parse_i64(const char * s, long long * out) {
    if (!s || !*s) {
        return false;
    }
    errno = 0;
    char * end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0') {
        return false;
    }
    *out = v;
    return true;
}

static bool parse_f64(const char * s, double * out) {
    if (!s || !*s) {
        return false;
    }
    errno = 0;
    char * end = NULL;
    double v = strtod(s, &end);
    if (errno == ERANGE || end == s || *end != '\0' || isnan(v)) {
        return false;
    }
    *out = v;
    return true;
}

static int parse_bool_word(const char * s) {
    static const char * const yes[] = { "1", "true", "on", "enabled", "yes" };
    static const char * const no[]  = { "0", "false", "off", "disabled", "no" };
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            return 1;
        }
        if (strcasecmp(s, no[i]) == 0) {
            return 0;
        }
    }
    return -1;
}

// one accepted word of an enum-valued option and the value it stands for
struct arg_choice {
    const char * name;
    int          value;
};

// the value of the word v in tab[0..n); false when v is none of them
static bool parse_choice(const char * v, const struct arg_choice * tab, size_t n, int * out) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v, tab[i].name) == 0) {
            *out = tab[i].value;
            return true;
        }
    }
    return false;
}

#define N_CHOICES(tab) (sizeof(tab) / sizeof((tab)[0]))

//
// handlers
//

static const char * h_help(struct common_params * p, const char * v) {
    (void) v;
    p->usage = true;
    return NULL;
}

static const char * h_version(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return NULL; // handled by the parser loop
}

static const char * h_threads_into(int32_t * dst, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < -1 || n == 0 || n > GGML_MAX_N_THREADS) {
        return arg_errorf("invalid thread count '%s' (expected 1..%d, or -1 for the default)", v, GGML_MAX_N_THREADS);
    }
    *dst = (int32_t) n;
    return NULL;
}

static const char * h_threads(struct common_params * p, const char * v) {
    return h_threads_into(&p->cpuparams.n_threads, v);
}
static const char * h_threads_batch(struct common_params * p, const char * v) {
    return h_threads_into(&p->cpuparams_batch.n_threads, v);
}
static const char * h_threads_draft(struct common_params * p, const char * v) {
    return h_threads_into(&p->speculative.draft.cpuparams.n_threads, v);
}
static const char * h_threads_batch_draft(struct common_params * p, const char * v) {
    return h_threads_into(&p->speculative.draft.cpuparams_batch.n_threads, v);
}

// reads a prompt file into *dst (replacing it); llama.cpp drops one final newline: a file written by an editor
// should not end the prompt with "\n"
static const char * read_prompt_file(char ** dst, const char * path) {
    size_t len = 0;
    char * text = common_read_file(path, &len);
    if (!text) {
        return arg_errorf("failed to open file '%s'", path);
    }
    if (len > 0 && text[len - 1] == '\n') {
        text[len - 1] = '\0';
    }
    free(*dst);
    *dst = text;
    return NULL;
}

static const char * h_file(struct common_params * p, const char * v) {
    const char * err = read_prompt_file(&p->prompt, v);
    if (err) {
        return err;
    }
    if (!common_params_set_str(&p->prompt_file, v)) {
        return "out of memory";
    }
    return NULL;
}

// -sysf: like -f
static const char * h_system_prompt_file(struct common_params * p, const char * v) {
    return read_prompt_file(&p->system_prompt, v);
}

static const char * h_seed(struct common_params * p, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < -1 || n > (long long) UINT32_MAX) {
        return arg_errorf("invalid seed '%s' (expected 0..%u, or -1 for a random seed)", v, UINT32_MAX);
    }
    p->sampling.seed = n == -1 ? LLAMA_DEFAULT_SEED : (uint32_t) n;
    return NULL;
}

static const char * h_flash_attn(struct common_params * p, const char * v) {
    if (strcmp(v, "auto") == 0 || strcmp(v, "-1") == 0) {
        p->flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO;
        return NULL;
    }
    int b = parse_bool_word(v);
    if (b < 0) {
        return arg_errorf("unknown value for --flash-attn: '%s' (expected on, off or auto)", v);
    }
    p->flash_attn_type = b ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    return NULL;
}

static const char * h_cache_type(enum ggml_type * dst, const char * v) {
    enum ggml_type t = common_kv_cache_type_from_str(v);
    if (t == GGML_TYPE_COUNT) {
        return arg_errorf("unsupported cache type '%s' (expected f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0 or q5_1)", v);
    }
    *dst = t;
    return NULL;
}

static const char * h_ctk(struct common_params * p, const char * v)  { return h_cache_type(&p->cache_type_k, v); }
static const char * h_ctv(struct common_params * p, const char * v)  { return h_cache_type(&p->cache_type_v, v); }
static const char * h_ctkd(struct common_params * p, const char * v) { return h_cache_type(&p->speculative.draft.cache_type_k, v); }
static const char * h_ctvd(struct common_params * p, const char * v) { return h_cache_type(&p->speculative.draft.cache_type_v, v); }

static const char * h_ngl_into(int32_t * dst, const char * v) {
    long long n;
    if (strcmp(v, "auto") == 0) {
        *dst = -1;
    } else if (strcmp(v, "all") == 0) {
        *dst = -2;
    } else if (parse_i64(v, &n) && n >= INT32_MIN && n <= INT32_MAX) {
        *dst = (int32_t) n;
    } else {
        return arg_errorf("invalid number of GPU layers '%s' (expected a number, 'auto' or 'all')", v);
    }
    return NULL;
}

static const char * h_ngl(struct common_params * p, const char * v)  { return h_ngl_into(&p->n_gpu_layers, v); }
static const char * h_ngld(struct common_params * p, const char * v) { return h_ngl_into(&p->speculative.draft.n_gpu_layers, v); }

static const char * h_split_mode(struct common_params * p, const char * v) {
    static const struct arg_choice tab[] = {
        { "none", LLAMA_SPLIT_MODE_NONE }, { "layer", LLAMA_SPLIT_MODE_LAYER }, { "row", LLAMA_SPLIT_MODE_ROW },
    };
    int x;
    if (!parse_choice(v, tab, N_CHOICES(tab), &x)) {
        return arg_errorf("invalid split mode '%s' (expected none, layer or row)", v);
    }
    p->split_mode = (enum llama_split_mode) x;
    return NULL;
}

static const char * h_pooling(struct common_params * p, const char * v) {
    static const struct arg_choice tab[] = {
        { "none", LLAMA_POOLING_TYPE_NONE }, { "mean", LLAMA_POOLING_TYPE_MEAN }, { "cls", LLAMA_POOLING_TYPE_CLS },
        { "last", LLAMA_POOLING_TYPE_LAST }, { "rank", LLAMA_POOLING_TYPE_RANK },
    };
    int x;
    if (!parse_choice(v, tab, N_CHOICES(tab), &x)) {
        return arg_errorf("invalid pooling type '%s' (expected none, mean, cls, last or rank)", v);
    }
    p->pooling_type = (enum llama_pooling_type) x;
    return NULL;
}

// --rerank: the server's reranking endpoint needs embeddings with rank pooling (llama.cpp sets both)
static const char * h_reranking(struct common_params * p, const char * v) {
    (void) v;
    p->embedding    = true;
    p->pooling_type = LLAMA_POOLING_TYPE_RANK;
    return NULL;
}

static const char * h_attention(struct common_params * p, const char * v) {
    static const struct arg_choice tab[] = {
        { "causal", LLAMA_ATTENTION_TYPE_CAUSAL }, { "non-causal", LLAMA_ATTENTION_TYPE_NON_CAUSAL },
    };
    int x;
    if (!parse_choice(v, tab, N_CHOICES(tab), &x)) {
        return arg_errorf("invalid attention type '%s' (expected causal or non-causal)", v);
    }
    p->attention_type = (enum llama_attention_type) x;
    return NULL;
}

static const char * h_rope_scaling(struct common_params * p, const char * v) {
    static const struct arg_choice tab[] = {
        { "none", LLAMA_ROPE_SCALING_TYPE_NONE }, { "linear", LLAMA_ROPE_SCALING_TYPE_LINEAR },
        { "yarn", LLAMA_ROPE_SCALING_TYPE_YARN },
    };
    int x;
    if (!parse_choice(v, tab, N_CHOICES(tab), &x)) {
        return arg_errorf("invalid RoPE scaling '%s' (expected none, linear or yarn)", v);
    }
    p->rope_scaling_type = (enum llama_rope_scaling_type) x;
    return NULL;
}

static const char * h_rope_scale(struct common_params * p, const char * v) {
    double d;
    if (!parse_f64(v, &d) || d <= 0.0) {
        return arg_errorf("invalid RoPE context scale '%s' (expected a positive number)", v);
    }
    p->rope_freq_scale = (float) (1.0 / d);
    return NULL;
}

static const char * h_embd_out(struct common_params * p, const char * v) {
    if (strcmp(v, "") != 0 && strcmp(v, "array") != 0 && strcmp(v, "json") != 0 && strcmp(v, "json+") != 0) {
        return arg_errorf("invalid embedding output format '%s' (expected array, json or json+)", v);
    }
    return common_params_set_str(&p->embd_out, v) ? NULL : "out of memory";
}

static const char * h_temp(struct common_params * p, const char * v) {
    double d;
    if (!parse_f64(v, &d)) {
        return arg_errorf("invalid number '%s'", v);
    }
    // a negative temperature means greedy, the same as 0
    p->sampling.temp = d < 0.0 ? 0.0f : (float) d;
    return NULL;
}

static const char * h_perf(struct common_params * p, const char * v) {
    (void) v;
    p->no_perf = false;
    p->sampling.no_perf = false;
    return NULL;
}

static const char * h_no_perf(struct common_params * p, const char * v) {
    (void) v;
    p->no_perf = true;
    p->sampling.no_perf = true;
    return NULL;
}

static const char * h_cnv(struct common_params * p, const char * v) {
    (void) v;
    p->conversation_mode = COMMON_CONVERSATION_MODE_ENABLED;
    return NULL;
}

static const char * h_no_cnv(struct common_params * p, const char * v) {
    (void) v;
    p->conversation_mode = COMMON_CONVERSATION_MODE_DISABLED;
    return NULL;
}

static const char * h_reverse_prompt(struct common_params * p, const char * v) {
    char ** grown = realloc(p->antiprompt, ((size_t) p->n_antiprompt + 1) * sizeof(char *));
    if (!grown) {
        return "out of memory";
    }
    p->antiprompt = grown;
    p->antiprompt[p->n_antiprompt] = NULL;
    if (!common_params_set_str(&p->antiprompt[p->n_antiprompt], v)) {
        return "out of memory";
    }
    p->n_antiprompt++;
    return NULL;
}

static const char * h_verbose(struct common_params * p, const char * v) {
    (void) v;
    p->verbosity = INT_MAX;
    common_log_set_verbosity_thold(INT_MAX);
    return NULL;
}

static const char * h_verbosity(struct common_params * p, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < INT32_MIN || n > INT32_MAX) {
        return arg_errorf("invalid verbosity '%s'", v);
    }
    p->verbosity = (int32_t) n;
    common_log_set_verbosity_thold((int) n);
    return NULL;
}

static const char * h_log_disable(struct common_params * p, const char * v) {
    (void) p; (void) v;
    common_log_pause();
    return NULL;
}

static const char * h_log_prefix(struct common_params * p, const char * v) {
    (void) p; (void) v;
    common_log_set_prefix(true);
    return NULL;
}

static const char * h_log_timestamps(struct common_params * p, const char * v) {
    (void) p; (void) v;
    common_log_set_timestamps(true);
    return NULL;
}

static const char * h_samplers(struct common_params * p, const char * v) {
    static const struct { const char * name; enum common_sampler_type type; } tab[] = {
        { "dry", COMMON_SAMPLER_TYPE_DRY },           { "top_k", COMMON_SAMPLER_TYPE_TOP_K },
        { "top_p", COMMON_SAMPLER_TYPE_TOP_P },       { "min_p", COMMON_SAMPLER_TYPE_MIN_P },
        { "typ_p", COMMON_SAMPLER_TYPE_TYPICAL_P },   { "typical_p", COMMON_SAMPLER_TYPE_TYPICAL_P },
        { "typical", COMMON_SAMPLER_TYPE_TYPICAL_P }, { "temperature", COMMON_SAMPLER_TYPE_TEMPERATURE },
        { "temp", COMMON_SAMPLER_TYPE_TEMPERATURE },  { "xtc", COMMON_SAMPLER_TYPE_XTC },
        { "infill", COMMON_SAMPLER_TYPE_INFILL },     { "penalties", COMMON_SAMPLER_TYPE_PENALTIES },
        { "top_n_sigma", COMMON_SAMPLER_TYPE_TOP_N_SIGMA }, { "adaptive_p", COMMON_SAMPLER_TYPE_ADAPTIVE_P },
    };
    enum common_sampler_type out[COMMON_SAMPLERS_MAX];
    int n = 0;
    const char * s = v;
    while (*s) {
        const char * e = s;
        while (*e && *e != ';') {
            e++;
        }
        size_t len = (size_t) (e - s);
        if (len > 0) {
            bool found = false;
            for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
                if (strlen(tab[i].name) == len && strncmp(tab[i].name, s, len) == 0) {
                    if (n >= COMMON_SAMPLERS_MAX) {
                        return arg_errorf("too many samplers (at most %d)", COMMON_SAMPLERS_MAX);
                    }
                    out[n++] = tab[i].type;
                    found = true;
                    break;
                }
            }
            if (!found) {
                return arg_errorf("unknown sampler '%.*s'", (int) len, s);
            }
        }
        s = *e ? e + 1 : e;
    }
    memcpy(p->sampling.samplers, out, (size_t) n * sizeof(out[0]));
    p->sampling.n_samplers = n;
    return NULL;
}

static const char * h_sampling_seq(struct common_params * p, const char * v) {
    enum common_sampler_type out[COMMON_SAMPLERS_MAX];
    int n = 0;
    for (const char * c = v; *c; c++) {
        enum common_sampler_type t;
        switch (*c) {
            case 'd': t = COMMON_SAMPLER_TYPE_DRY;         break;
            case 'k': t = COMMON_SAMPLER_TYPE_TOP_K;       break;
            case 'y': t = COMMON_SAMPLER_TYPE_TYPICAL_P;   break;
            case 'p': t = COMMON_SAMPLER_TYPE_TOP_P;       break;
            case 's': t = COMMON_SAMPLER_TYPE_TOP_N_SIGMA; break;
            case 'm': t = COMMON_SAMPLER_TYPE_MIN_P;       break;
            case 't': t = COMMON_SAMPLER_TYPE_TEMPERATURE; break;
            case 'x': t = COMMON_SAMPLER_TYPE_XTC;         break;
            case 'i': t = COMMON_SAMPLER_TYPE_INFILL;      break;
            case 'e': t = COMMON_SAMPLER_TYPE_PENALTIES;   break;
            case 'a': t = COMMON_SAMPLER_TYPE_ADAPTIVE_P;  break;
            default: return arg_errorf("unknown sampler letter '%c'", *c);
        }
        if (n >= COMMON_SAMPLERS_MAX) {
            return arg_errorf("too many samplers (at most %d)", COMMON_SAMPLERS_MAX);
        }
        out[n++] = t;
    }
    memcpy(p->sampling.samplers, out, (size_t) n * sizeof(out[0]));
    p->sampling.n_samplers = n;
    return NULL;
}

static const char * h_repeat_last_n(struct common_params * p, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < -1 || n > INT32_MAX) {
        return arg_errorf("invalid repeat-last-n '%s' (expected >= -1)", v);
    }
    p->sampling.penalty_last_n = (int32_t) n;
    p->sampling.n_prev = p->sampling.n_prev > (int32_t) n ? p->sampling.n_prev : (int32_t) n;
    return NULL;
}

static const char * h_dry_breaker(struct common_params * p, const char * v) {
    // the first use in a parse replaces the defaults; "none" means no breakers at all
    if (!g_dry_breakers_given) {
        g_dry_breakers_given = true;
        p->sampling.n_dry_sequence_breakers = 0;
    }
    if (strcmp(v, "none") == 0) {
        p->sampling.n_dry_sequence_breakers = 0;
        return NULL;
    }
    if (p->sampling.n_dry_sequence_breakers >= COMMON_DRY_BREAKERS_MAX) {
        return arg_errorf("too many DRY sequence breakers (at most %d)", COMMON_DRY_BREAKERS_MAX);
    }
    if (strlen(v) >= COMMON_DRY_BREAKER_LEN_MAX) {
        return arg_errorf("DRY sequence breaker too long (at most %d bytes)", COMMON_DRY_BREAKER_LEN_MAX - 1);
    }
    char tmp[COMMON_DRY_BREAKER_LEN_MAX];
    snprintf(tmp, sizeof(tmp), "%s", v);
    common_string_process_escapes(tmp);
    snprintf(p->sampling.dry_sequence_breakers[p->sampling.n_dry_sequence_breakers++], COMMON_DRY_BREAKER_LEN_MAX, "%s", tmp);
    return NULL;
}

static const char * h_logit_bias(struct common_params * p, const char * v) {
    // TOKEN_ID(+|-)BIAS, e.g. 15043+1 or 15043-inf
    char * end = NULL;
    errno = 0;
    long long tok = strtoll(v, &end, 10);
    if (end == v || errno != 0 || tok < 0 || tok > INT32_MAX || (*end != '+' && *end != '-')) {
        return arg_errorf("invalid logit bias '%s' (expected TOKEN_ID(+/-)BIAS)", v);
    }
    double bias;
    if (!parse_f64(end, &bias) && !(strcmp(end, "-inf") == 0 || strcmp(end, "+inf") == 0)) {
        return arg_errorf("invalid logit bias '%s' (expected TOKEN_ID(+/-)BIAS)", v);
    }
    if (strcmp(end, "-inf") == 0) {
        bias = -INFINITY;
    } else if (strcmp(end, "+inf") == 0) {
        bias = INFINITY;
    }
    llama_logit_bias * grown = realloc(p->sampling.logit_bias, ((size_t) p->sampling.n_logit_bias + 1) * sizeof(*grown));
    if (!grown) {
        return "out of memory";
    }
    p->sampling.logit_bias = grown;
    grown[p->sampling.n_logit_bias].token = (llama_token) tok;
    grown[p->sampling.n_logit_bias].bias  = (float) bias;
    p->sampling.n_logit_bias++;
    return NULL;
}

static const char * h_grammar(struct common_params * p, const char * v) {
    return common_params_set_str(&p->sampling.grammar, v) ? NULL : "out of memory";
}

static const char * h_grammar_file(struct common_params * p, const char * v) {
    char * text = common_read_file(v, NULL);
    if (!text) {
        return arg_errorf("failed to open file '%s'", v);
    }
    free(p->sampling.grammar);
    p->sampling.grammar = text;
    return NULL;
}

// -j / -jf: the schema becomes the grammar at parse time, as llama.cpp (a bad schema is an argument error)
static const char * set_grammar_from_schema(struct common_params * p, const char * schema_text) {
    char * g = json_schema_to_grammar_str(schema_text, arg_errbuf, sizeof(arg_errbuf));
    if (!g) {
        return arg_errbuf;
    }
    free(p->sampling.grammar);
    p->sampling.grammar = g;
    return NULL;
}

static const char * h_json_schema(struct common_params * p, const char * v) {
    return set_grammar_from_schema(p, v);
}

static const char * h_json_schema_file(struct common_params * p, const char * v) {
    char * text = common_read_file(v, NULL);
    if (!text) {
        return arg_errorf("failed to open file '%s'", v);
    }
    const char * err = set_grammar_from_schema(p, text);
    free(text);
    return err;
}

const char * common_parse_kv_override(const char * v, struct llama_model_kv_override * out) {
    // KEY=TYPE:VALUE with TYPE int, float, bool or str
    const char * eq = strchr(v, '=');
    if (!eq || eq == v || (size_t) (eq - v) >= 128) {
        return arg_errorf("invalid override '%s' (expected KEY=TYPE:VALUE)", v);
    }
    struct llama_model_kv_override kvo;
    memset(&kvo, 0, sizeof(kvo));
    memcpy(kvo.key, v, (size_t) (eq - v));
    const char * tv = eq + 1;
    if (strncmp(tv, "int:", 4) == 0) {
        long long n;
        if (!parse_i64(tv + 4, &n)) {
            return arg_errorf("invalid integer in override '%s'", v);
        }
        kvo.tag = LLAMA_KV_OVERRIDE_TYPE_INT;
        kvo.val_i64 = n;
    } else if (strncmp(tv, "float:", 6) == 0) {
        double d;
        if (!parse_f64(tv + 6, &d)) {
            return arg_errorf("invalid float in override '%s'", v);
        }
        kvo.tag = LLAMA_KV_OVERRIDE_TYPE_FLOAT;
        kvo.val_f64 = d;
    } else if (strncmp(tv, "bool:", 5) == 0) {
        if (strcmp(tv + 5, "true") == 0) {
            kvo.val_bool = true;
        } else if (strcmp(tv + 5, "false") == 0) {
            kvo.val_bool = false;
        } else {
            return arg_errorf("invalid boolean in override '%s' (expected true or false)", v);
        }
        kvo.tag = LLAMA_KV_OVERRIDE_TYPE_BOOL;
    } else if (strncmp(tv, "str:", 4) == 0) {
        if (strlen(tv + 4) >= sizeof(kvo.val_str)) {
            return arg_errorf("string value too long in override '%s' (at most 127 bytes)", v);
        }
        kvo.tag = LLAMA_KV_OVERRIDE_TYPE_STR;
        snprintf(kvo.val_str, sizeof(kvo.val_str), "%s", tv + 4);
    } else {
        return arg_errorf("invalid type in override '%s' (expected int, float, bool or str)", v);
    }
    *out = kvo;
    return NULL;
}

static const char * h_override_kv(struct common_params * p, const char * v) {
    struct llama_model_kv_override kvo;
    const char * e = common_parse_kv_override(v, &kvo);
    if (e) {
        return e;
    }
    // room for the terminating empty entry added after parsing
    struct llama_model_kv_override * grown = realloc(p->kv_overrides, ((size_t) p->n_kv_overrides + 2) * sizeof(*grown));
    if (!grown) {
        return "out of memory";
    }
    p->kv_overrides = grown;
    grown[p->n_kv_overrides++] = kvo;
    memset(&grown[p->n_kv_overrides], 0, sizeof(grown[0]));
    return NULL;
}

static const char * h_spec_type(struct common_params * p, const char * v) {
    enum common_speculative_type out[COMMON_SPEC_TYPES_MAX];
    int n = 0;
    const char * s = v;
    while (*s) {
        const char * e = s;
        while (*e && *e != ',') {
            e++;
        }
        char name[64];
        size_t len = (size_t) (e - s);
        if (len == 0 || len >= sizeof(name)) {
            return arg_errorf("invalid speculative type list '%s'", v);
        }
        memcpy(name, s, len);
        name[len] = '\0';
        enum common_speculative_type t = common_speculative_type_from_str(name);
        if (t == COMMON_SPECULATIVE_TYPE_COUNT) {
            return arg_errorf("unknown speculative type '%s'", name);
        }
        if (n >= COMMON_SPEC_TYPES_MAX) {
            return arg_errorf("too many speculative types (at most %d)", COMMON_SPEC_TYPES_MAX);
        }
        out[n++] = t;
        s = *e ? e + 1 : e;
    }
    if (n == 0) {
        return arg_errorf("empty speculative type list");
    }
    // llama.cpp: "none" anywhere in the list disables speculative decoding
    for (int i = 0; i < n; i++) {
        if (out[i] == COMMON_SPECULATIVE_TYPE_NONE) {
            out[0] = COMMON_SPECULATIVE_TYPE_NONE;
            n = 1;
        }
    }
    memcpy(p->speculative.types, out, (size_t) n * sizeof(out[0]));
    p->speculative.n_types = n;
    return NULL;
}

static const char * h_model_draft(struct common_params * p, const char * v) {
    return common_params_set_str(&p->speculative.draft.mparams.path, v) ? NULL : "out of memory";
}

// the n-gram size options are uint16 fields
static const char * h_u16_into(uint16_t * dst, const char * v, long long lo, long long hi) {
    long long n;
    if (!parse_i64(v, &n) || n < lo || n > hi) {
        return arg_errorf("invalid value '%s' (expected %lld..%lld)", v, lo, hi);
    }
    *dst = (uint16_t) n;
    return NULL;
}

#define NGRAM_SIZE_HANDLERS(kind)                                                                      \
    static const char * h_##kind##_size_n(struct common_params * p, const char * v) {                  \
        return h_u16_into(&p->speculative.kind.size_n, v, 1, 1024);                                    \
    }                                                                                                  \
    static const char * h_##kind##_size_m(struct common_params * p, const char * v) {                  \
        return h_u16_into(&p->speculative.kind.size_m, v, 1, 1024);                                    \
    }                                                                                                  \
    static const char * h_##kind##_min_hits(struct common_params * p, const char * v) {                \
        return h_u16_into(&p->speculative.kind.min_hits, v, 0, 1024);                                  \
    }

NGRAM_SIZE_HANDLERS(ngram_simple)
NGRAM_SIZE_HANDLERS(ngram_map_k)
NGRAM_SIZE_HANDLERS(ngram_map_k4v)

// llama.cpp removed these options; they stay in the table so that using one says what replaced it
static const char * h_removed_draft_max(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return "the argument has been removed. use --spec-draft-n-max or --spec-ngram-mod-n-max";
}
static const char * h_removed_draft_min(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return "the argument has been removed. use --spec-draft-n-min or --spec-ngram-mod-n-min";
}
static const char * h_removed_ngram_size_n(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return "the argument has been removed. use the respective --spec-ngram-*-size-n or --spec-ngram-mod-n-match";
}
static const char * h_removed_ngram_size_m(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return "the argument has been removed. use the respective --spec-ngram-*-size-m";
}
static const char * h_removed_ngram_min_hits(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return "the argument has been removed. use the respective --spec-ngram-*-min-hits";
}

// calls add(p, item, len) for every comma-separated item of v; the first error stops
static const char * for_each_csv(struct common_params * p, const char * v,
        const char * (*add)(struct common_params * p, const char * item, size_t len)) {
    for (const char * s = v;;) {
        const char * c = strchr(s, ',');
        const size_t n = c ? (size_t) (c - s) : strlen(s);
        const char * e = add(p, s, n);
        if (e || !c) {
            return e;
        }
        s = c + 1;
    }
}

// "FNAME" (scale 1) or, with scaled, "FNAME:SCALE" (split at the last ':', as paths may hold one)
static const char * split_scaled(const char * item, size_t len, bool scaled, char ** path, float * scale) {
    size_t plen = len;
    *scale = 1.0f;
    if (scaled) {
        const char * colon = NULL;
        for (size_t i = 0; i < len; i++) {
            colon = item[i] == ':' ? item + i : colon;
        }
        char num[64];
        const size_t nlen = colon ? len - (size_t) (colon - item) - 1 : 0;
        double d;
        if (!colon || nlen == 0 || nlen >= sizeof(num)) {
            return arg_errorf("expected FNAME:SCALE, got '%.*s'", (int) len, item);
        }
        memcpy(num, colon + 1, nlen);
        num[nlen] = '\0';
        if (!parse_f64(num, &d)) {
            return arg_errorf("invalid scale '%s' in '%.*s'", num, (int) len, item);
        }
        *scale = (float) d;
        plen = (size_t) (colon - item);
    }
    if (plen == 0) {
        return "empty file name";
    }
    *path = malloc(plen + 1);
    if (!*path) {
        return "out of memory";
    }
    memcpy(*path, item, plen);
    (*path)[plen] = '\0';
    return NULL;
}

static const char * add_lora(struct common_params * p, const char * item, size_t len, bool scaled) {
    struct common_adapter_lora_info info;
    const char * e = split_scaled(item, len, scaled, &info.path, &info.scale);
    if (e) {
        return e;
    }
    struct common_adapter_lora_info * grown = realloc(p->lora_adapters, ((size_t) p->n_lora_adapters + 1) * sizeof(*grown));
    if (!grown) {
        free(info.path);
        return "out of memory";
    }
    p->lora_adapters = grown;
    p->lora_adapters[p->n_lora_adapters++] = info;
    return NULL;
}

static const char * add_cvec(struct common_params * p, const char * item, size_t len, bool scaled) {
    struct common_control_vector_load_info info;
    const char * e = split_scaled(item, len, scaled, &info.fname, &info.strength);
    if (e) {
        return e;
    }
    struct common_control_vector_load_info * grown = realloc(p->control_vectors, ((size_t) p->n_control_vectors + 1) * sizeof(*grown));
    if (!grown) {
        free(info.fname);
        return "out of memory";
    }
    p->control_vectors = grown;
    p->control_vectors[p->n_control_vectors++] = info;
    return NULL;
}

static const char * add_lora_1  (struct common_params * p, const char * s, size_t n) { return add_lora(p, s, n, false); }
static const char * add_lora_sc (struct common_params * p, const char * s, size_t n) { return add_lora(p, s, n, true); }
static const char * add_cvec_1  (struct common_params * p, const char * s, size_t n) { return add_cvec(p, s, n, false); }
static const char * add_cvec_sc (struct common_params * p, const char * s, size_t n) { return add_cvec(p, s, n, true); }

static const char * h_lora(struct common_params * p, const char * v)         { return for_each_csv(p, v, add_lora_1); }
static const char * h_lora_scaled(struct common_params * p, const char * v)  { return for_each_csv(p, v, add_lora_sc); }
static const char * h_cvec(struct common_params * p, const char * v)         { return for_each_csv(p, v, add_cvec_1); }
static const char * h_cvec_scaled(struct common_params * p, const char * v)  { return for_each_csv(p, v, add_cvec_sc); }

// "START\nEND" (ARG_FN2)
static const char * h_cvec_layer_range(struct common_params * p, const char * v) {
    const char * nl = strchr(v, '\n');
    char a[32];
    long long s0, s1;
    if (!nl || (size_t) (nl - v) >= sizeof(a)) {
        return "expected START END";
    }
    memcpy(a, v, (size_t) (nl - v));
    a[nl - v] = '\0';
    if (!parse_i64(a, &s0) || !parse_i64(nl + 1, &s1) || s0 < INT32_MIN || s0 > INT32_MAX || s1 < INT32_MIN || s1 > INT32_MAX) {
        return arg_errorf("invalid layer range '%s' '%s' (expected two integers)", a, nl + 1);
    }
    p->control_vector_layer_start = (int32_t) s0;
    p->control_vector_layer_end   = (int32_t) s1;
    return NULL;
}

static const char * h_model(struct common_params * p, const char * v) {
    return common_params_set_str(&p->model.path, v) ? NULL : "out of memory";
}

static const char * h_parallel(struct common_params * p, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < -1 || n == 0 || n > 4096) {
        return arg_errorf("invalid number of parallel sequences '%s' (expected 1..4096, or -1 = auto)", v);
    }
    // -1: the program's automatic choice (llama-server: 4 slots sharing a unified KV cache)
    p->n_parallel = n < 0 ? 1 : (int32_t) n;
    p->n_parallel_explicit = n > 0;
    return NULL;
}

//
// server handlers
//

static const char * h_timeout(struct common_params * p, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < 0 || n > INT32_MAX) {
        return arg_errorf("invalid timeout '%s' (expected seconds >= 0)", v);
    }
    p->timeout_read  = (int32_t) n;
    p->timeout_write = (int32_t) n;
    return NULL;
}

static const char * add_api_key(struct common_params * p, const char * key, size_t len) {
    if (len == 0) {
        return NULL; // empty entries (",,", blank lines) are skipped
    }
    char ** grown = realloc(p->api_keys, ((size_t) p->n_api_keys + 1) * sizeof(char *));
    if (!grown) {
        return "out of memory";
    }
    p->api_keys = grown;
    p->api_keys[p->n_api_keys] = strndup(key, len);
    if (!p->api_keys[p->n_api_keys]) {
        return "out of memory";
    }
    p->n_api_keys++;
    return NULL;
}

// --api-key: a comma-separated list
static const char * h_api_key(struct common_params * p, const char * v) {
    for (const char * s = v; *s;) {
        const char * e = strchr(s, ',');
        const size_t len = e ? (size_t) (e - s) : strlen(s);
        const char * err = add_api_key(p, s, len);
        if (err) {
            return err;
        }
        s += len + (e ? 1 : 0);
    }
    return NULL;
}

// --api-key-file: one key per line, surrounding blanks dropped, blank lines skipped
static const char * h_api_key_file(struct common_params * p, const char * v) {
    size_t len = 0;
    char * text = common_read_file(v, &len);
    if (!text) {
        return arg_errorf("failed to open API key file '%s': %s", v, strerror(errno));
    }
    const char * err = NULL;
    for (char * line = text; !err && line < text + len;) {
        char * nl = memchr(line, '\n', (size_t) (text + len - line));
        char * end = nl ? nl : text + len;
        char * b = line;
        while (b < end && isspace((unsigned char) *b)) {
            b++;
        }
        char * e = end;
        while (e > b && isspace((unsigned char) e[-1])) {
            e--;
        }
        err = add_api_key(p, b, (size_t) (e - b));
        line = nl ? nl + 1 : text + len;
    }
    free(text);
    return err;
}

//
// llama.cpp options for what this build does differently: each one parses and validates as llama.cpp does, then
// either takes effect, says once that it has none here, or refuses with the reason
//

static void warn_no_effect(const char * flag, const char * why) {
    LOG_WRN("warning: %s has no effect in this build: %s\n", flag, why);
}

// bools written as llama.cpp's std::stoul(value) != 0: an unsigned decimal number
static const char * parse_flag01(const char * v, bool * out) {
    long long n;
    if (!parse_i64(v, &n) || n < 0) {
        return arg_errorf("invalid value '%s' (expected 0 or 1)", v);
    }
    *out = n != 0;
    return NULL;
}

// -C / -Cb: llama.cpp's mask syntax (common.c's parse_cpu_mask)
static const char * parse_cpu_mask_arg(const char * v, bool * mask) {
    if (!parse_cpu_mask(v, mask)) {
        return arg_errorf("invalid cpumask '%s' (expected 1..%d hex digits)", v, GGML_MAX_N_THREADS / 4);
    }
    return NULL;
}

// llama.cpp's parse_cpu_range: "lo-hi", either side may be empty (0 / the last CPU); sets those bits
static const char * parse_cpu_range(const char * v, bool * mask) {
    const char * dash = strchr(v, '-');
    long long lo = 0, hi = GGML_MAX_N_THREADS - 1;
    char a[32];
    if (!dash || (size_t) (dash - v) >= sizeof(a)) {
        return arg_errorf("invalid range '%s' (expected lo-hi)", v);
    }
    memcpy(a, v, (size_t) (dash - v));
    a[dash - v] = '\0';
    if ((a[0] && !parse_i64(a, &lo)) || (dash[1] && !parse_i64(dash + 1, &hi)) || lo < 0 || hi >= GGML_MAX_N_THREADS ||
        lo > hi) {
        return arg_errorf("invalid range '%s' (expected lo-hi within 0..%d)", v, GGML_MAX_N_THREADS - 1);
    }
    for (long long i = lo; i <= hi; i++) {
        mask[i] = true;
    }
    return NULL;
}

static const char * cpu_mask_into(struct common_cpu_params * c, const char * v) {
    c->mask_valid = true;
    return parse_cpu_mask_arg(v, c->cpumask);
}
static const char * cpu_range_into(struct common_cpu_params * c, const char * v) {
    c->mask_valid = true;
    return parse_cpu_range(v, c->cpumask);
}
static const char * cpu_strict_into(struct common_cpu_params * c, const char * v) {
    return parse_flag01(v, &c->strict_cpu);
}
static const char * cpu_prio_into(struct common_cpu_params * c, const char * v, int lo) {
    long long n;
    if (!parse_i64(v, &n) || n < lo || n > GGML_SCHED_PRIO_REALTIME) {
        return arg_errorf("invalid priority '%s' (expected %d..3)", v, lo);
    }
    c->priority = (enum ggml_sched_priority) n;
    return NULL;
}
static const char * cpu_poll_into(struct common_cpu_params * c, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < 0 || n > 100) {
        return arg_errorf("invalid polling level '%s' (expected 0..100)", v);
    }
    c->poll = (uint32_t) n;
    return NULL;
}

static const char * h_cpu_mask(struct common_params * p, const char * v)         { return cpu_mask_into(&p->cpuparams, v); }
static const char * h_cpu_range(struct common_params * p, const char * v)        { return cpu_range_into(&p->cpuparams, v); }
static const char * h_cpu_strict(struct common_params * p, const char * v)       { return cpu_strict_into(&p->cpuparams, v); }
static const char * h_prio(struct common_params * p, const char * v)             { return cpu_prio_into(&p->cpuparams, v, GGML_SCHED_PRIO_LOW); }
static const char * h_poll(struct common_params * p, const char * v)             { return cpu_poll_into(&p->cpuparams, v); }
static const char * h_cpu_mask_batch(struct common_params * p, const char * v)   { return cpu_mask_into(&p->cpuparams_batch, v); }
static const char * h_cpu_range_batch(struct common_params * p, const char * v)  { return cpu_range_into(&p->cpuparams_batch, v); }
static const char * h_cpu_strict_batch(struct common_params * p, const char * v) { return cpu_strict_into(&p->cpuparams_batch, v); }
static const char * h_prio_batch(struct common_params * p, const char * v)       { return cpu_prio_into(&p->cpuparams_batch, v, 0); }
static const char * h_poll_batch(struct common_params * p, const char * v)       { return cpu_poll_into(&p->cpuparams_batch, v); }

static const char * h_numa(struct common_params * p, const char * v) {
    static const struct arg_choice tab[] = {
        { "distribute", GGML_NUMA_STRATEGY_DISTRIBUTE }, { "", GGML_NUMA_STRATEGY_DISTRIBUTE },
        { "isolate", GGML_NUMA_STRATEGY_ISOLATE },       { "numactl", GGML_NUMA_STRATEGY_NUMACTL },
    };
    int x;
    if (!parse_choice(v, tab, N_CHOICES(tab), &x)) {
        return arg_errorf("invalid NUMA strategy '%s' (expected distribute, isolate or numactl)", v);
    }
    p->numa = (enum ggml_numa_strategy) x;
    return NULL;
}

static const char * h_defrag_thold(struct common_params * p, const char * v) {
    (void) p; (void) v;
    LOG_WRN("DEPRECATED: --defrag-thold is deprecated and no longer necessary to specify\n");
    return NULL;
}

// -dev: "none", or non-CPU device names; the list becomes NULL-terminated
static const char * h_device(struct common_params * p, const char * v) {
    if (!v[0]) {
        return "no devices specified";
    }
    size_t n = 1;
    for (const char * c = v; *c; c++) {
        n += *c == ',';
    }
    ggml_backend_dev_t * devs = calloc(n + 1, sizeof(*devs));
    if (!devs) {
        return "out of memory";
    }
    size_t k = 0;
    if (strcmp(v, "none") != 0) {
        for (const char * s = v;;) {
            const char * c = strchr(s, ',');
            const size_t len = c ? (size_t) (c - s) : strlen(s);
            char name[128];
            ggml_backend_dev_t dev = NULL;
            if (len > 0 && len < sizeof(name)) {
                memcpy(name, s, len);
                name[len] = '\0';
                dev = ggml_backend_dev_by_name(name);
            }
            if (!dev || ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU) {
                free(devs);
                return arg_errorf("invalid device: %.*s (use --list-devices to see the available devices)", (int) len, s);
            }
            devs[k++] = dev;
            if (!c) {
                break;
            }
            s = c + 1;
        }
        warn_no_effect("--device", "the model loader does not select devices");
    }
    free(p->devices);
    p->devices = devs;
    return NULL;
}

// --list-devices: llama.cpp prints the non-CPU devices and exits (done by the parser after the loop)
static _Thread_local bool g_list_devices = false;

static const char * h_list_devices(struct common_params * p, const char * v) {
    (void) p; (void) v;
    g_list_devices = true;
    return NULL;
}

// appends one override (pattern copied) keeping the { NULL, NULL } terminator
static const char * add_buft_override(struct common_params * p, const char * pattern, size_t len,
                                      ggml_backend_buffer_type_t buft) {
    struct llama_model_tensor_buft_override * grown =
        realloc(p->tensor_buft_overrides, ((size_t) p->n_tensor_buft_overrides + 2) * sizeof(*grown));
    if (!grown) {
        return "out of memory";
    }
    p->tensor_buft_overrides = grown;
    char * pat = strndup(pattern, len);
    if (!pat) {
        return "out of memory";
    }
    grown[p->n_tensor_buft_overrides].pattern = pat;
    grown[p->n_tensor_buft_overrides].buft    = buft;
    p->n_tensor_buft_overrides++;
    grown[p->n_tensor_buft_overrides].pattern = NULL;
    grown[p->n_tensor_buft_overrides].buft    = NULL;
    return NULL;
}

// where the weights go is decided by the device: on a CPU-only build every tensor already sits in CPU memory,
// so an override to CPU is what happens anyway; a GPU build's loader does not read the overrides
static void warn_overrides_gpu(const char * flag) {
    if (llama_supports_gpu_offload()) {
        warn_no_effect(flag, "the model loader does not apply tensor buffer overrides");
    }
}

// -ot: PATTERN=BUFT,... with BUFT the buffer type name of a device
static const char * h_override_tensor(struct common_params * p, const char * v) {
    for (const char * s = v;;) {
        const char * c = strchr(s, ',');
        const size_t len = c ? (size_t) (c - s) : strlen(s);
        const char * eq = memchr(s, '=', len);
        if (!eq) {
            return arg_errorf("invalid value '%.*s' (expected <tensor name pattern>=<buffer type>)", (int) len, s);
        }
        const char * bname = eq + 1;
        const size_t blen = len - (size_t) (bname - s);
        ggml_backend_buffer_type_t buft = NULL;
        for (size_t i = 0; i < ggml_backend_dev_count() && !buft; i++) {
            ggml_backend_buffer_type_t b = ggml_backend_dev_buffer_type(ggml_backend_dev_get(i));
            const char * name = b ? ggml_backend_buft_name(b) : NULL;
            if (name && strlen(name) == blen && strncmp(name, bname, blen) == 0) {
                buft = b;
            }
        }
        if (!buft) {
            LOG_ERR("Available buffer types:\n");
            for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
                ggml_backend_buffer_type_t b = ggml_backend_dev_buffer_type(ggml_backend_dev_get(i));
                if (b) {
                    LOG_ERR("  %s\n", ggml_backend_buft_name(b));
                }
            }
            return arg_errorf("unknown buffer type '%.*s'", (int) blen, bname);
        }
        const char * e = add_buft_override(p, s, (size_t) (eq - s), buft);
        if (e) {
            return e;
        }
        if (!c) {
            break;
        }
        s = c + 1;
    }
    warn_overrides_gpu("--override-tensor");
    return NULL;
}

// llama.cpp's MoE expert-weight patterns (llm_ffn_exps_cpu_override / llm_ffn_exps_block_regex)
static const char * h_cpu_moe(struct common_params * p, const char * v) {
    (void) v;
    static const char pat[] = "\\.ffn_(up|down|gate|gate_up)_(ch|)exps";
    const char * e = add_buft_override(p, pat, strlen(pat), ggml_backend_cpu_buffer_type());
    warn_overrides_gpu("--cpu-moe");
    return e;
}

static const char * h_n_cpu_moe(struct common_params * p, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < 0 || n > 100000) {
        return arg_errorf("invalid value '%s' (expected a number of layers >= 0)", v);
    }
    for (long long i = 0; i < n; i++) {
        char pat[96];
        const int len = snprintf(pat, sizeof(pat), "blk\\.%lld\\.ffn_(up|down|gate|gate_up)_(ch|)exps", i);
        const char * e = add_buft_override(p, pat, (size_t) len, ggml_backend_cpu_buffer_type());
        if (e) {
            return e;
        }
    }
    warn_overrides_gpu("--n-cpu-moe");
    return NULL;
}

// -ts: proportions separated by ',' or '/'
static const char * h_tensor_split(struct common_params * p, const char * v) {
    float ts[16] = { 0 };
    const size_t max_dev = llama_max_devices() < 16 ? llama_max_devices() : 16;
    size_t n = 0;
    for (const char * s = v; *s;) {
        while (*s == ',' || *s == '/') {
            s++;
        }
        if (!*s) {
            break;
        }
        const char * e = s;
        while (*e && *e != ',' && *e != '/') {
            e++;
        }
        char num[64];
        double d;
        const size_t len = (size_t) (e - s);
        if (len >= sizeof(num)) {
            return arg_errorf("invalid tensor split '%s'", v);
        }
        memcpy(num, s, len);
        num[len] = '\0';
        if (!parse_f64(num, &d) || d < 0.0) {
            return arg_errorf("invalid proportion '%s' in tensor split '%s'", num, v);
        }
        if (n >= max_dev) {
            return arg_errorf("got more than %zu input configs, but system only has %zu devices", max_dev - 1, max_dev);
        }
        ts[n++] = (float) d;
        s = e;
    }
    if (n >= max_dev) {
        return arg_errorf("got %zu input configs, but system only has %zu devices", n, max_dev);
    }
    memcpy(p->tensor_split, ts, sizeof(ts));
    warn_no_effect("--tensor-split", "the model loader does not split the model across devices");
    return NULL;
}

static const char * h_direct_io(struct common_params * p, const char * v) {
    (void) v;
    p->use_direct_io = true;
    warn_no_effect("--direct-io", "the model loader reads through mmap or read(); DirectIO is not implemented");
    return NULL;
}

static const char * h_no_direct_io(struct common_params * p, const char * v) {
    (void) v;
    p->use_direct_io = false;
    return NULL;
}

// --load-mode: llama.cpp's successor of --mmap / --mlock / --direct-io
static const char * h_load_mode(struct common_params * p, const char * v) {
    bool mmap_ = false, mlock_ = false, dio = false;
    if (strcmp(v, "auto") == 0 || strcmp(v, "mmap") == 0) {
        mmap_ = true;
    } else if (strcmp(v, "mlock") == 0) {
        mlock_ = true;
    } else if (strcmp(v, "mmap+mlock") == 0) {
        mmap_ = mlock_ = true;
    } else if (strcmp(v, "dio") == 0) {
        dio = true;
    } else if (strcmp(v, "none") != 0) {
        return arg_errorf("invalid load mode '%s' (expected auto, none, mmap, mlock, mmap+mlock or dio)", v);
    }
    p->use_mmap  = mmap_;
    p->use_mlock = mlock_;
    p->use_direct_io = dio;
    if (dio) {
        warn_no_effect("--load-mode dio", "DirectIO is not implemented; the model is read with read()");
    }
    return NULL;
}

static const char * h_fit(struct common_params * p, const char * v) {
    const int b = parse_bool_word(v);
    if (b < 0 || strcmp(v, "yes") == 0 || strcmp(v, "no") == 0) {
        return arg_errorf("unknown value for --fit: '%s' (expected on or off)", v);
    }
    p->fit_params = b == 1;
    if (p->fit_params && llama_supports_gpu_offload()) {
        warn_no_effect("--fit", "parameters are not fitted to device memory");
    }
    return NULL;
}

static const char * h_fit_target(struct common_params * p, const char * v) {
    (void) p;
    for (const char * s = v;;) {
        const char * c = strchr(s, ',');
        char num[32];
        const size_t len = c ? (size_t) (c - s) : strlen(s);
        long long n;
        if (len == 0 || len >= sizeof(num)) {
            return arg_errorf("invalid fit target '%s' (expected MiB0,MiB1,...)", v);
        }
        memcpy(num, s, len);
        num[len] = '\0';
        if (!parse_i64(num, &n) || n < 0 || n > INT32_MAX) {
            return arg_errorf("invalid fit target '%s' (expected MiB0,MiB1,...)", v);
        }
        if (!c) {
            break;
        }
        s = c + 1;
    }
    if (llama_supports_gpu_offload()) {
        warn_no_effect("--fit-target", "parameters are not fitted to device memory");
    }
    return NULL;
}

static const char * h_ctx_checkpoints(struct common_params * p, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < 0 || n > INT32_MAX) {
        return arg_errorf("invalid number of checkpoints '%s' (expected >= 0)", v);
    }
    p->n_ctx_checkpoints = (int32_t) n;
    if (n > 0) {
        warn_no_effect("--ctx-checkpoints", "no context checkpoints are made (SWA/recurrent prompts are reprocessed)");
    }
    return NULL;
}

static const char * h_cache_ram(struct common_params * p, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < -1 || n > INT32_MAX) {
        return arg_errorf("invalid cache size '%s' (expected MiB, -1 = no limit, 0 = disable)", v);
    }
    p->cache_ram_mib = (int32_t) n;
    if (n != 0) {
        warn_no_effect("--cache-ram", "there is no host-memory prompt cache; each slot keeps only its own KV cache");
    }
    return NULL;
}

static const char * h_log_file(struct common_params * p, const char * v) {
    (void) p;
    if (!common_log_set_file(v)) {
        return arg_errorf("failed to open log file '%s': %s", v, strerror(errno));
    }
    return NULL;
}

static const char * h_log_colors(struct common_params * p, const char * v) {
    (void) p;
    if (strcmp(v, "auto") == 0 || strcmp(v, "-1") == 0) {
        common_log_set_colors(-1);
        return NULL;
    }
    const int b = parse_bool_word(v);
    if (b < 0 || strcmp(v, "yes") == 0 || strcmp(v, "no") == 0) {
        return arg_errorf("unknown value for --log-colors: '%s' (expected on, off or auto)", v);
    }
    common_log_set_colors(b);
    return NULL;
}

// options that need what this build does not have: they stop the program with the reason
static const char * h_refuse_download(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return "this build cannot download models (no network support); download the GGUF file and pass it with -m";
}
static const char * h_refuse_multimodal(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return "multimodal input (mmproj, images, audio) is not supported by this build";
}
static const char * h_refuse_rpc(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return "this build has no RPC backend";
}
static const char * h_refuse_ssl(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return "this server has no SSL support; put it behind a TLS-terminating proxy";
}
static const char * h_refuse_path(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return "this server has no web UI and does not serve static files";
}

static const char * h_hf_token(struct common_params * p, const char * v) {
    (void) p; (void) v;
    warn_no_effect("--hf-token", "nothing is downloaded");
    return NULL;
}

static const char * h_noop_multimodal(struct common_params * p, const char * v) {
    (void) p; (void) v;
    return NULL; // disabling or tuning the projector is what happens anyway: there is none
}

static const char * h_image_tokens(struct common_params * p, const char * v) {
    (void) p;
    long long n;
    if (!parse_i64(v, &n) || n < INT32_MIN || n > INT32_MAX) {
        return arg_errorf("invalid integer '%s'", v);
    }
    warn_no_effect("--image-min-tokens/--image-max-tokens", "multimodal input is not supported");
    return NULL;
}

static const char * h_offline(struct common_params * p, const char * v) {
    (void) v;
    p->offline = true; // what this build always does: it never reaches the network
    return NULL;
}

static const char * h_chat_template_file(struct common_params * p, const char * v) {
    size_t len = 0;
    char * text = common_read_file(v, &len);
    if (!text) {
        return arg_errorf("failed to open file '%s'", v);
    }
    free(p->chat_template);
    p->chat_template = text;
    return NULL;
}

// --chat-template-kwargs: a JSON object; later uses add to (and override keys of) earlier ones
static const char * h_chat_template_kwargs(struct common_params * p, const char * v) {
    json_error_t jerr;
    json_t * obj = json_loads(v, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj || !json_is_object(obj)) {
        json_decref(obj);
        return arg_errorf("--chat-template-kwargs must be a valid JSON object string, e.g. '{\"key1\":\"value1\"}'");
    }
    if (p->default_template_kwargs) {
        json_t * old = json_loads(p->default_template_kwargs, 0, NULL);
        if (old && json_object_update(old, obj) == 0) {
            json_decref(obj);
            obj = old;
        } else {
            json_decref(old);
        }
    }
    char * text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(obj);
    if (!text) {
        return "out of memory";
    }
    free(p->default_template_kwargs);
    p->default_template_kwargs = text;
    return NULL;
}

static const char * h_reasoning_format(struct common_params * p, const char * v) {
    static const struct arg_choice tab[] = {
        { "none", COMMON_REASONING_FORMAT_NONE }, { "auto", COMMON_REASONING_FORMAT_AUTO },
        { "deepseek-legacy", COMMON_REASONING_FORMAT_DEEPSEEK_LEGACY }, { "deepseek", COMMON_REASONING_FORMAT_DEEPSEEK },
    };
    int x;
    if (!parse_choice(v, tab, N_CHOICES(tab), &x)) {
        return arg_errorf("Unknown reasoning format: %s", v);
    }
    // llama-server parses thoughts out of the chat output with it (common/chat-parse.c)
    p->reasoning_format = (enum common_reasoning_format) x;
    return NULL;
}

static const char * h_reasoning_budget(struct common_params * p, const char * v) {
    long long n;
    if (!parse_i64(v, &n) || n < -1 || n > INT32_MAX) {
        return arg_errorf("invalid reasoning budget '%s' (expected -1, 0 or a number of tokens)", v);
    }
    p->reasoning_budget = (int32_t) n;
    if (n != -1) {
        warn_no_effect("--reasoning-budget", "thinking is not limited (no reasoning-budget sampler)");
    }
    return NULL;
}

static const char * h_slot_prompt_similarity(struct common_params * p, const char * v) {
    double d;
    if (!parse_f64(v, &d) || d < 0.0 || d > 1.0) {
        return arg_errorf("invalid similarity '%s' (expected 0.0..1.0)", v);
    }
    p->slot_prompt_similarity = (float) d;
    return NULL;
}

static const char * h_api_prefix(struct common_params * p, const char * v) {
    if (v[0] && (v[0] != '/' || v[strlen(v) - 1] == '/' || strlen(v) > 256)) {
        return arg_errorf("invalid API prefix '%s' (expected /path without the trailing slash)", v);
    }
    return common_params_set_str(&p->api_prefix, v[0] ? v : NULL) ? NULL : "out of memory";
}

// the server always renders the messages with the generation prompt: a final assistant message is not continued
static const char * h_prefill_assistant(struct common_params * p, const char * v) {
    (void) v;
    p->prefill_assistant = true;
    warn_no_effect("--prefill-assistant", "a final assistant message is rendered as a whole turn, not continued");
    return NULL;
}

static const char * h_no_prefill_assistant(struct common_params * p, const char * v) {
    (void) v;
    p->prefill_assistant = false;
    return NULL;
}

// --in-file: one more imatrix file to combine (repeatable)
static const char * h_in_file(struct common_params * p, const char * v) {
    char ** grown = realloc(p->in_files, ((size_t) p->n_in_files + 1) * sizeof(char *));
    if (!grown) {
        return "out of memory";
    }
    p->in_files = grown;
    p->in_files[p->n_in_files] = NULL;
    if (!common_params_set_str(&p->in_files[p->n_in_files], v)) {
        return "out of memory";
    }
    p->n_in_files++;
    return NULL;
}

static const char * h_optimizer(struct common_params * p, const char * v) {
    if (strcmp(v, "adamw") == 0) {
        p->optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    } else if (strcmp(v, "sgd") == 0) {
        p->optimizer = GGML_OPT_OPTIMIZER_TYPE_SGD;
    } else {
        return "invalid optimizer (adamw or sgd)";
    }
    return NULL;
}

//
// the table
//

#define SAMPLING_PROGRAMS 0
#define GEN_PROGRAMS (EX(LLAMA_EXAMPLE_COMPLETION) | EX(LLAMA_EXAMPLE_CLI))
#define SPEC_PROGRAMS (EX(LLAMA_EXAMPLE_SPECULATIVE) | EX(LLAMA_EXAMPLE_LOOKUP) | EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI))
#define PPL_PROGRAMS EX(LLAMA_EXAMPLE_PERPLEXITY)
#define IMATRIX_PROGRAMS EX(LLAMA_EXAMPLE_IMATRIX)
#define FINETUNE_PROGRAMS EX(LLAMA_EXAMPLE_FINETUNE)
// -epochs is an ARG_INT row over lr.epochs (unsigned): same size, range checked to [1, INT32_MAX]
_Static_assert(sizeof(((struct common_params *) 0)->lr.epochs) == sizeof(int32_t), "lr.epochs must be 32-bit");
#define EMBD_PROGRAMS (EX(LLAMA_EXAMPLE_EMBEDDING) | EX(LLAMA_EXAMPLE_RETRIEVAL) | EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_DEBUG))

#define MMPROJ_PROGRAMS (EX(LLAMA_EXAMPLE_MTMD) | EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI))

#define NO_RANGE 1.0, 0.0

static const struct common_arg k_args[] = {
    // ----- common -----
    { {"-h", "--help", "--usage", NULL}, NULL, "print usage and exit", "", 0, ARG_FN0, 0, NO_RANGE, h_help, GROUP_COMMON, 0 },
    { {"--version", NULL}, NULL, "show version and build info", "", 0, ARG_FN0, 0, NO_RANGE, h_version, GROUP_COMMON, 0 },
    { {"-t", "--threads", NULL}, "N", "number of CPU threads to use during generation (default: -1 = physical cores)",
      "LLAMA_ARG_THREADS", 0, ARG_FN, 0, NO_RANGE, h_threads, GROUP_COMMON, 0 },
    { {"-tb", "--threads-batch", NULL}, "N", "number of threads to use during batch and prompt processing (default: same as --threads)",
      "LLAMA_ARG_THREADS_BATCH", 0, ARG_FN, 0, NO_RANGE, h_threads_batch, GROUP_COMMON, 0 },
    { {"-c", "--ctx-size", NULL}, "N", "size of the prompt context (default: 0, 0 = loaded from model)",
      "LLAMA_ARG_CTX_SIZE", 0, ARG_INT, OFF(n_ctx), 0, INT32_MAX, NULL, GROUP_COMMON, 0 },
    { {"-n", "--predict", "--n-predict", NULL}, "N", "number of tokens to predict (default: -1, -1 = infinity)",
      "LLAMA_ARG_N_PREDICT", 0, ARG_INT, OFF(n_predict), -2, INT32_MAX, NULL, GROUP_COMMON, 0 },
    { {"-b", "--batch-size", NULL}, "N", "logical maximum batch size (default: 2048)",
      "LLAMA_ARG_BATCH", 0, ARG_INT, OFF(n_batch), 1, INT32_MAX, NULL, GROUP_COMMON, 0 },
    { {"-ub", "--ubatch-size", NULL}, "N", "physical maximum batch size (default: 512)",
      "LLAMA_ARG_UBATCH", 0, ARG_INT, OFF(n_ubatch), 1, INT32_MAX, NULL, GROUP_COMMON, 0 },
    { {"--keep", NULL}, "N", "number of tokens to keep from the initial prompt (default: 0, -1 = all)",
      NULL, 0, ARG_INT, OFF(n_keep), -1, INT32_MAX, NULL, GROUP_COMMON, 0 },
    { {"--context-shift", NULL}, NULL, "enable context shift on infinite text generation (default: disabled)",
      "LLAMA_ARG_CONTEXT_SHIFT", 0, ARG_TRUE, OFF(ctx_shift), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--no-context-shift", NULL}, NULL, "disable context shift on infinite text generation (default)",
      "LLAMA_ARG_NO_CONTEXT_SHIFT", 0, ARG_FALSE, OFF(ctx_shift), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-fa", "--flash-attn", NULL}, "[on|off|auto]", "set Flash Attention use (default: auto)",
      "LLAMA_ARG_FLASH_ATTN", 0, ARG_FN, 0, NO_RANGE, h_flash_attn, GROUP_COMMON, 0 },
    { {"-p", "--prompt", NULL}, "PROMPT", "prompt to start generation with",
      NULL, 0, ARG_STR, OFF(prompt), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-sys", "--system-prompt", NULL}, "PROMPT", "system prompt to use with the model (conversation mode)",
      NULL, GEN_PROGRAMS | EX(LLAMA_EXAMPLE_SERVER), ARG_STR, OFF(system_prompt), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--perf", NULL}, NULL, "enable internal libllama performance timings (default: true)",
      "LLAMA_ARG_PERF", 0, ARG_FN0, 0, NO_RANGE, h_perf, GROUP_COMMON, 0 },
    { {"--no-perf", NULL}, NULL, "disable internal libllama performance timings",
      "LLAMA_ARG_NO_PERF", 0, ARG_FN0, 0, NO_RANGE, h_no_perf, GROUP_COMMON, 0 },
    { {"-f", "--file", NULL}, "FNAME", "a file containing the prompt (default: none)",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_file, GROUP_COMMON, 0 },
    { {"-e", "--escape", NULL}, NULL, "process escape sequences (\\n, \\r, \\t, \\', \\\", \\\\) (default: true)",
      NULL, 0, ARG_TRUE, OFF(escape), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--no-escape", NULL}, NULL, "do not process escape sequences",
      NULL, 0, ARG_FALSE, OFF(escape), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-sp", "--special", NULL}, NULL, "special tokens output enabled (default: false)",
      NULL, 0, ARG_TRUE, OFF(special), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--verbose-prompt", NULL}, NULL, "print a verbose prompt before generation (default: false)",
      NULL, 0, ARG_TRUE, OFF(verbose_prompt), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--no-display-prompt", NULL}, NULL, "don't print prompt at generation (default: false)",
      NULL, GEN_PROGRAMS, ARG_FALSE, OFF(display_prompt), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--display-prompt", NULL}, NULL, "print prompt at generation (default: true)",
      NULL, GEN_PROGRAMS, ARG_TRUE, OFF(display_prompt), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"-cnv", "--conversation", NULL}, NULL, "run in conversation mode (default: auto, if the model has a chat template)",
      NULL, GEN_PROGRAMS, ARG_FN0, 0, NO_RANGE, h_cnv, GROUP_EXAMPLE, 0 },
    { {"-no-cnv", "--no-conversation", NULL}, NULL, "force disable conversation mode (default: false)",
      NULL, GEN_PROGRAMS, ARG_FN0, 0, NO_RANGE, h_no_cnv, GROUP_EXAMPLE, 0 },
    { {"-st", "--single-turn", NULL}, NULL, "run conversation for a single turn only, then exit",
      NULL, GEN_PROGRAMS, ARG_TRUE, OFF(single_turn), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"-i", "--interactive", NULL}, NULL, "run in interactive mode (default: false)",
      NULL, EX(LLAMA_EXAMPLE_COMPLETION), ARG_TRUE, OFF(interactive), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"-if", "--interactive-first", NULL}, NULL, "run in interactive mode and wait for input right away (default: false)",
      NULL, EX(LLAMA_EXAMPLE_COMPLETION), ARG_TRUE, OFF(interactive_first), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"-mli", "--multiline-input", NULL}, NULL, "allows you to write or paste multiple lines without ending each in '\\'",
      NULL, GEN_PROGRAMS, ARG_TRUE, OFF(multiline_input), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--show-timings", NULL}, NULL, "show timing information after each response (default: true)",
      "LLAMA_ARG_SHOW_TIMINGS", EX(LLAMA_EXAMPLE_CLI), ARG_TRUE, OFF(show_timings), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--no-show-timings", NULL}, NULL, "do not show timing information after each response",
      "", EX(LLAMA_EXAMPLE_CLI), ARG_FALSE, OFF(show_timings), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"-sysf", "--system-prompt-file", NULL}, "FNAME", "a file containing the system prompt (default: none)",
      NULL, GEN_PROGRAMS, ARG_FN, 0, NO_RANGE, h_system_prompt_file, GROUP_EXAMPLE, 0 },
    { {"--simple-io", NULL}, NULL, "use basic IO for better compatibility in subprocesses and limited consoles\n"
      "(llama-cli here always reads plain lines from stdin)",
      "", EX(LLAMA_EXAMPLE_CLI), ARG_TRUE, OFF(simple_io), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"-r", "--reverse-prompt", NULL}, "PROMPT", "halt generation at PROMPT",
      NULL, GEN_PROGRAMS | EX(LLAMA_EXAMPLE_SERVER), ARG_FN, 0, NO_RANGE, h_reverse_prompt, GROUP_EXAMPLE, 0 },
    { {"--in-prefix-bos", NULL}, NULL, "prefix BOS to user inputs, preceding the `--in-prefix` string",
      NULL, GEN_PROGRAMS, ARG_TRUE, OFF(input_prefix_bos), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--in-prefix", NULL}, "STRING", "string to prefix user inputs with (default: empty)",
      NULL, GEN_PROGRAMS, ARG_STR, OFF(input_prefix), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--in-suffix", NULL}, "STRING", "string to suffix after user inputs with (default: empty)",
      NULL, GEN_PROGRAMS, ARG_STR, OFF(input_suffix), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--no-warmup", NULL}, NULL, "skip warming up the model with an empty run",
      NULL, 0, ARG_FALSE, OFF(warmup), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--warmup", NULL}, NULL, "warm up the model with an empty run (default)",
      NULL, 0, ARG_TRUE, OFF(warmup), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-np", "--parallel", NULL}, "N", "number of parallel sequences to decode (default: 1; llama-server: -1 = auto, 4 slots)",
      "LLAMA_ARG_N_PARALLEL", 0, ARG_FN, 0, NO_RANGE, h_parallel, GROUP_COMMON, 0 },
    { {"-ns", "--sequences", NULL}, "N", "number of sequences to decode (default: 1)",
      NULL, EX(LLAMA_EXAMPLE_PARALLEL), ARG_INT, OFF(n_sequences), 1, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"-cb", "--cont-batching", NULL}, NULL, "enable continuous batching (default: enabled)",
      "LLAMA_ARG_CONT_BATCHING", 0, ARG_TRUE, OFF(cont_batching), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-nocb", "--no-cont-batching", NULL}, NULL, "disable continuous batching",
      "LLAMA_ARG_NO_CONT_BATCHING", 0, ARG_FALSE, OFF(cont_batching), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--rope-scaling", NULL}, "{none,linear,yarn}", "RoPE frequency scaling method (default: from model)",
      "LLAMA_ARG_ROPE_SCALING_TYPE", 0, ARG_FN, 0, NO_RANGE, h_rope_scaling, GROUP_COMMON, 0 },
    { {"--rope-scale", NULL}, "N", "RoPE context scaling factor, expands context by a factor of N",
      "LLAMA_ARG_ROPE_SCALE", 0, ARG_FN, 0, NO_RANGE, h_rope_scale, GROUP_COMMON, 0 },
    { {"--rope-freq-base", NULL}, "N", "RoPE base frequency (default: loaded from model)",
      "LLAMA_ARG_ROPE_FREQ_BASE", 0, ARG_FLOAT, OFF(rope_freq_base), 0, 1e30, NULL, GROUP_COMMON, 0 },
    { {"--rope-freq-scale", NULL}, "N", "RoPE frequency scaling factor, expands context by a factor of 1/N",
      "LLAMA_ARG_ROPE_FREQ_SCALE", 0, ARG_FLOAT, OFF(rope_freq_scale), 0, 1e30, NULL, GROUP_COMMON, 0 },
    { {"--yarn-orig-ctx", NULL}, "N", "YaRN: original context size of model (default: 0 = model training context size)",
      "LLAMA_ARG_YARN_ORIG_CTX", 0, ARG_INT, OFF(yarn_orig_ctx), 0, INT32_MAX, NULL, GROUP_COMMON, 0 },
    { {"--yarn-ext-factor", NULL}, "N", "YaRN: extrapolation mix factor (default: -1.0, 0.0 = full interpolation)",
      "LLAMA_ARG_YARN_EXT_FACTOR", 0, ARG_FLOAT, OFF(yarn_ext_factor), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--yarn-attn-factor", NULL}, "N", "YaRN: scale sqrt(t) or attention magnitude (default: -1.0)",
      "LLAMA_ARG_YARN_ATTN_FACTOR", 0, ARG_FLOAT, OFF(yarn_attn_factor), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--yarn-beta-slow", NULL}, "N", "YaRN: high correction dim or alpha (default: -1.0)",
      "LLAMA_ARG_YARN_BETA_SLOW", 0, ARG_FLOAT, OFF(yarn_beta_slow), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--yarn-beta-fast", NULL}, "N", "YaRN: low correction dim or beta (default: -1.0)",
      "LLAMA_ARG_YARN_BETA_FAST", 0, ARG_FLOAT, OFF(yarn_beta_fast), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-nkvo", "--no-kv-offload", NULL}, NULL, "disable KV offload",
      "LLAMA_ARG_NO_KV_OFFLOAD", 0, ARG_TRUE, OFF(no_kv_offload), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-nr", "--no-repack", NULL}, NULL, "disable weight repacking",
      "LLAMA_ARG_NO_REPACK", 0, ARG_TRUE, OFF(no_extra_bufts), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--no-host", NULL}, NULL, "bypass host buffer allowing extra buffers to be used",
      "LLAMA_ARG_NO_HOST", 0, ARG_TRUE, OFF(no_host), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-ctk", "--cache-type-k", NULL}, "TYPE", "KV cache data type for K: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1 (default: f16)",
      "LLAMA_ARG_CACHE_TYPE_K", 0, ARG_FN, 0, NO_RANGE, h_ctk, GROUP_COMMON, 0 },
    { {"-ctv", "--cache-type-v", NULL}, "TYPE", "KV cache data type for V: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1 (default: f16)",
      "LLAMA_ARG_CACHE_TYPE_V", 0, ARG_FN, 0, NO_RANGE, h_ctv, GROUP_COMMON, 0 },
    { {"-kvu", "--kv-unified", NULL}, NULL, "use a single unified KV buffer shared across all sequences",
      "LLAMA_ARG_KV_UNIFIED", 0, ARG_TRUE, OFF(kv_unified), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--swa-full", NULL}, NULL, "use full-size SWA cache (default: false)",
      "LLAMA_ARG_SWA_FULL", 0, ARG_TRUE, OFF(swa_full), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--mlock", NULL}, NULL, "force system to keep model in RAM rather than swapping or compressing",
      "LLAMA_ARG_MLOCK", 0, ARG_TRUE, OFF(use_mlock), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--mmap", NULL}, NULL, "memory-map model (default: enabled)",
      "LLAMA_ARG_MMAP", 0, ARG_TRUE, OFF(use_mmap), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--no-mmap", NULL}, NULL, "do not memory-map model (slower load but may reduce pageouts if not using mlock)",
      "LLAMA_ARG_NO_MMAP", 0, ARG_FALSE, OFF(use_mmap), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--check-tensors", NULL}, NULL, "check model tensor data for invalid values (default: false)",
      NULL, 0, ARG_TRUE, OFF(check_tensors), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--override-kv", NULL}, "KEY=TYPE:VALUE", "override model metadata by key (types: int, float, bool, str); may be repeated",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_override_kv, GROUP_COMMON, 0 },
    { {"--no-op-offload", NULL}, NULL, "disable offloading host tensor operations to device (default: false)",
      NULL, 0, ARG_TRUE, OFF(no_op_offload), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-ngl", "--gpu-layers", "--n-gpu-layers", NULL}, "N", "max. number of layers to store in VRAM, 'auto' or 'all' (default: auto)",
      "LLAMA_ARG_N_GPU_LAYERS", 0, ARG_FN, 0, NO_RANGE, h_ngl, GROUP_COMMON, 0 },
    { {"-sm", "--split-mode", NULL}, "{none,layer,row}", "how to split the model across multiple GPUs (default: layer)",
      "LLAMA_ARG_SPLIT_MODE", 0, ARG_FN, 0, NO_RANGE, h_split_mode, GROUP_COMMON, 0 },
    { {"-mg", "--main-gpu", NULL}, "INDEX", "the GPU to use for the model with split-mode = none (default: 0)",
      "LLAMA_ARG_MAIN_GPU", 0, ARG_INT, OFF(main_gpu), 0, INT32_MAX, NULL, GROUP_COMMON, 0 },
    { {"--lora", NULL}, "FNAME", "path to LoRA adapter (use comma-separated values to load multiple adapters)",
      "", 0, ARG_FN, 0, NO_RANGE, h_lora, GROUP_COMMON, 0 },
    { {"--lora-scaled", NULL}, "FNAME:SCALE,...", "path to LoRA adapter with user defined scaling (format: FNAME:SCALE,...)\nnote: use comma-separated values",
      "", 0, ARG_FN, 0, NO_RANGE, h_lora_scaled, GROUP_COMMON, 0 },
    { {"--lora-init-without-apply", NULL}, NULL, "load LoRA adapters without applying them (default: disabled)",
      "", 0, ARG_TRUE, OFF(lora_init_without_apply), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--control-vector", NULL}, "FNAME", "add a control vector\nnote: use comma-separated values to add multiple control vectors",
      "", 0, ARG_FN, 0, NO_RANGE, h_cvec, GROUP_COMMON, 0 },
    { {"--control-vector-scaled", NULL}, "FNAME:SCALE,...", "add a control vector with user defined scaling SCALE\nnote: use comma-separated values (format: FNAME:SCALE,...)",
      "", 0, ARG_FN, 0, NO_RANGE, h_cvec_scaled, GROUP_COMMON, 0 },
    { {"--control-vector-layer-range", NULL}, "START END", "layer range to apply the control vector(s) to, start and end inclusive",
      "", 0, ARG_FN2, 0, NO_RANGE, h_cvec_layer_range, GROUP_COMMON, 0 },
    { {"-m", "--model", NULL}, "FNAME", "model path to load",
      "LLAMA_ARG_MODEL", 0, ARG_FN, 0, NO_RANGE, h_model, GROUP_COMMON, 0 },
    { {"-bs", "--backend-sampling", NULL}, NULL, "run the supported samplers on the model backend (default: disabled)",
      "LLAMA_ARG_BACKEND_SAMPLING", 0, ARG_TRUE, OFF(sampling.backend_sampling), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-v", "--verbose", "--log-verbose", NULL}, NULL, "set verbosity level to infinity (i.e. log all messages, useful for debugging)",
      "", 0, ARG_FN0, 0, NO_RANGE, h_verbose, GROUP_COMMON, 0 },
    { {"-lv", "--verbosity", "--log-verbosity", NULL}, "N", "set the verbosity threshold: messages with a higher verbosity are ignored",
      "LLAMA_LOG_VERBOSITY", 0, ARG_FN, 0, NO_RANGE, h_verbosity, GROUP_COMMON, 0 },
    { {"--log-disable", NULL}, NULL, "log disable",
      "", 0, ARG_FN0, 0, NO_RANGE, h_log_disable, GROUP_COMMON, 0 },
    { {"--log-prefix", NULL}, NULL, "enable prefix in log messages",
      "LLAMA_LOG_PREFIX", 0, ARG_FN0, 0, NO_RANGE, h_log_prefix, GROUP_COMMON, 0 },
    { {"--log-timestamps", NULL}, NULL, "enable timestamps in log messages",
      "LLAMA_LOG_TIMESTAMPS", 0, ARG_FN0, 0, NO_RANGE, h_log_timestamps, GROUP_COMMON, 0 },
    { {"--log-file", NULL}, "FNAME", "Log to file",
      "LLAMA_ARG_LOG_FILE", 0, ARG_FN, 0, NO_RANGE, h_log_file, GROUP_COMMON, 0 },
    { {"--log-colors", NULL}, "[on|off|auto]", "Set colored logging ('on', 'off', or 'auto', default: 'auto')\n"
      "'auto' enables colors when output is to a terminal",
      "LLAMA_ARG_LOG_COLORS", 0, ARG_FN, 0, NO_RANGE, h_log_colors, GROUP_COMMON, 0 },
    { {"--offline", NULL}, NULL, "Offline mode: forces use of cache, prevents network access\n"
      "(this build never uses the network)",
      "LLAMA_ARG_OFFLINE", 0, ARG_FN0, 0, NO_RANGE, h_offline, GROUP_COMMON, 0 },
    { {"-C", "--cpu-mask", NULL}, "M", "CPU affinity mask: arbitrarily long hex. Complements cpu-range (default: \"\")\n"
      "(recorded; the thread pool here does not pin threads)",
      "", 0, ARG_FN, 0, NO_RANGE, h_cpu_mask, GROUP_COMMON, 0 },
    { {"-Cr", "--cpu-range", NULL}, "lo-hi", "range of CPUs for affinity. Complements --cpu-mask\n"
      "(recorded; the thread pool here does not pin threads)",
      "", 0, ARG_FN, 0, NO_RANGE, h_cpu_range, GROUP_COMMON, 0 },
    { {"--cpu-strict", NULL}, "<0|1>", "use strict CPU placement (default: 0)\n(recorded; no effect here)",
      "", 0, ARG_FN, 0, NO_RANGE, h_cpu_strict, GROUP_COMMON, 0 },
    { {"--prio", NULL}, "N", "set process/thread priority : low(-1), normal(0), medium(1), high(2), realtime(3) (default: 0)\n"
      "(sets the process priority)",
      "", 0, ARG_FN, 0, NO_RANGE, h_prio, GROUP_COMMON, 0 },
    { {"--poll", NULL}, "<0...100>", "use polling level to wait for work (0 - no polling, default: 50)\n"
      "(a thread pool with this level is attached to the programs' contexts; llama-server keeps the default)",
      "", 0, ARG_FN, 0, NO_RANGE, h_poll, GROUP_COMMON, 0 },
    { {"-Cb", "--cpu-mask-batch", NULL}, "M", "CPU affinity mask: arbitrarily long hex. Complements cpu-range-batch (default: same as --cpu-mask)\n"
      "(recorded; the thread pool here does not pin threads)",
      "", 0, ARG_FN, 0, NO_RANGE, h_cpu_mask_batch, GROUP_COMMON, 0 },
    { {"-Crb", "--cpu-range-batch", NULL}, "lo-hi", "ranges of CPUs for affinity. Complements --cpu-mask-batch\n"
      "(recorded; the thread pool here does not pin threads)",
      "", 0, ARG_FN, 0, NO_RANGE, h_cpu_range_batch, GROUP_COMMON, 0 },
    { {"--cpu-strict-batch", NULL}, "<0|1>", "use strict CPU placement (default: same as --cpu-strict)\n(recorded; no effect here)",
      "", 0, ARG_FN, 0, NO_RANGE, h_cpu_strict_batch, GROUP_COMMON, 0 },
    { {"--prio-batch", NULL}, "N", "set process/thread priority : 0-normal, 1-medium, 2-high, 3-realtime (default: 0)\n"
      "(recorded; the process priority comes from --prio)",
      "", 0, ARG_FN, 0, NO_RANGE, h_prio_batch, GROUP_COMMON, 0 },
    { {"--poll-batch", NULL}, "<0...100>", "use polling to wait for work (default: same as --poll)\n"
      "(one thread pool serves generation and batches here: --poll applies)",
      "", 0, ARG_FN, 0, NO_RANGE, h_poll_batch, GROUP_COMMON, 0 },
    { {"--numa", NULL}, "TYPE", "attempt optimizations that help on some NUMA systems\n"
      "- distribute: spread execution evenly over all nodes\n"
      "- isolate: only spawn threads on CPUs on the node that execution started on\n"
      "- numactl: use the CPU map provided by numactl",
      "LLAMA_ARG_NUMA", 0, ARG_FN, 0, NO_RANGE, h_numa, GROUP_COMMON, 0 },
    { {"-dt", "--defrag-thold", NULL}, "N", "KV cache defragmentation threshold (DEPRECATED)",
      "LLAMA_ARG_DEFRAG_THOLD", 0, ARG_FN, 0, NO_RANGE, h_defrag_thold, GROUP_COMMON, 0 },
    { {"-kvo", "--kv-offload", NULL}, NULL, "enable KV cache offloading (default: enabled)",
      "LLAMA_ARG_KV_OFFLOAD", 0, ARG_FALSE, OFF(no_kv_offload), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--repack", NULL}, NULL, "enable weight repacking (default: enabled)",
      "LLAMA_ARG_REPACK", 0, ARG_FALSE, OFF(no_extra_bufts), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"--op-offload", NULL}, NULL, "offload host tensor operations to device (default: true)",
      "", 0, ARG_FALSE, OFF(no_op_offload), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-no-kvu", "--no-kv-unified", NULL}, NULL, "use one KV buffer per sequence",
      "LLAMA_ARG_NO_KV_UNIFIED", 0, ARG_FALSE, OFF(kv_unified), NO_RANGE, NULL, GROUP_COMMON, 0 },
    { {"-dio", "--direct-io", NULL}, NULL, "DEPRECATED in favor of `--load-mode`: use DirectIO if available\n(not implemented here: warns)",
      "LLAMA_ARG_DIO", 0, ARG_FN0, 0, NO_RANGE, h_direct_io, GROUP_COMMON, 0 },
    { {"-ndio", "--no-direct-io", NULL}, NULL, "do not use DirectIO (default)",
      "LLAMA_ARG_NO_DIO", 0, ARG_FN0, 0, NO_RANGE, h_no_direct_io, GROUP_COMMON, 0 },
    { {"-lm", "--load-mode", NULL}, "MODE", "model loading mode (default: auto)\n"
      "- auto, mmap: memory-map model\n- none: read the model into memory\n- mlock: read the model and keep it in RAM\n"
      "- mmap+mlock: mmap + keep the model in RAM\n- dio: use DirectIO if available (not implemented here: read)",
      "LLAMA_ARG_LOAD_MODE", 0, ARG_FN, 0, NO_RANGE, h_load_mode, GROUP_COMMON, 0 },
    { {"-dev", "--device", NULL}, "<dev1,dev2,..>", "comma-separated list of devices to use for offloading (none = don't offload)\n"
      "use --list-devices to see a list of available devices",
      "LLAMA_ARG_DEVICE", 0, ARG_FN, 0, NO_RANGE, h_device, GROUP_COMMON, 0 },
    { {"--list-devices", NULL}, NULL, "print list of available devices and exit",
      "", 0, ARG_FN0, 0, NO_RANGE, h_list_devices, GROUP_COMMON, 0 },
    { {"--override-tensor", "-ot", NULL}, "<tensor name pattern>=<buffer type>,...", "override tensor buffer type",
      "LLAMA_ARG_OVERRIDE_TENSOR", 0, ARG_FN, 0, NO_RANGE, h_override_tensor, GROUP_COMMON, 0 },
    { {"--cpu-moe", "-cmoe", NULL}, NULL, "keep all Mixture of Experts (MoE) weights in the CPU",
      "LLAMA_ARG_CPU_MOE", 0, ARG_FN0, 0, NO_RANGE, h_cpu_moe, GROUP_COMMON, 0 },
    { {"--n-cpu-moe", "-ncmoe", NULL}, "N", "keep the Mixture of Experts (MoE) weights of the first N layers in the CPU",
      "LLAMA_ARG_N_CPU_MOE", 0, ARG_FN, 0, NO_RANGE, h_n_cpu_moe, GROUP_COMMON, 0 },
    { {"-ts", "--tensor-split", NULL}, "N0,N1,N2,...", "fraction of the model to offload to each GPU, comma-separated list of proportions, e.g. 3,1\n"
      "(not applied by this loader: warns)",
      "LLAMA_ARG_TENSOR_SPLIT", 0, ARG_FN, 0, NO_RANGE, h_tensor_split, GROUP_COMMON, 0 },
    { {"-fit", "--fit", NULL}, "[on|off]", "whether to adjust unset arguments to fit in device memory ('on' or 'off', default: 'on')\n"
      "(nothing to fit on a CPU-only build)",
      "LLAMA_ARG_FIT", 0, ARG_FN, 0, NO_RANGE, h_fit, GROUP_COMMON, 0 },
    { {"-fitt", "--fit-target", NULL}, "MiB0,MiB1,MiB2,...", "target margin per device for --fit, comma-separated list of values (default: 1024)",
      "LLAMA_ARG_FIT_TARGET", 0, ARG_FN, 0, NO_RANGE, h_fit_target, GROUP_COMMON, 0 },
    { {"-fitc", "--fit-ctx", NULL}, "N", "minimum ctx size that can be set by --fit option, default: 4096",
      "LLAMA_ARG_FIT_CTX", 0, ARG_INT, OFF(fit_params_min_ctx), 0, INT32_MAX, NULL, GROUP_COMMON, 0 },
    { {"--rpc", NULL}, "SERVERS", "comma-separated list of RPC servers (host:port) (refused: no RPC backend)",
      "LLAMA_ARG_RPC", 0, ARG_FN, 0, NO_RANGE, h_refuse_rpc, GROUP_COMMON, 0 },
    { {"-mu", "--model-url", NULL}, "MODEL_URL", "model download url (refused: no network downloads here)",
      "LLAMA_ARG_MODEL_URL", 0, ARG_FN, 0, NO_RANGE, h_refuse_download, GROUP_COMMON, 0 },
    { {"-dr", "--docker-repo", NULL}, "[<repo>/]<model>[:quant]", "Docker Hub model repository (refused: no network downloads here)",
      "LLAMA_ARG_DOCKER_REPO", 0, ARG_FN, 0, NO_RANGE, h_refuse_download, GROUP_COMMON, 0 },
    { {"-hf", "-hfr", "--hf-repo", NULL}, "<user>/<model>[:quant]", "Hugging Face model repository (refused: no network downloads here)",
      "LLAMA_ARG_HF_REPO", 0, ARG_FN, 0, NO_RANGE, h_refuse_download, GROUP_COMMON, 0 },
    { {"-hff", "--hf-file", NULL}, "FILE", "Hugging Face model file (refused: no network downloads here)",
      "LLAMA_ARG_HF_FILE", 0, ARG_FN, 0, NO_RANGE, h_refuse_download, GROUP_COMMON, 0 },
    { {"-hft", "--hf-token", NULL}, "TOKEN", "Hugging Face access token (accepted; nothing is downloaded)",
      "", 0, ARG_FN, 0, NO_RANGE, h_hf_token, GROUP_COMMON, 0 },
    { {"--spec-draft-hf", "-hfd", "-hfrd", "--hf-repo-draft", NULL}, "<user>/<model>[:quant]",
      "Same as --hf-repo, but for the draft model (refused: no network downloads here)",
      "LLAMA_ARG_SPEC_DRAFT_HF_REPO", 0, ARG_FN, 0, NO_RANGE, h_refuse_download, GROUP_COMMON, 0 },

    // ----- sampling -----
    { {"--samplers", NULL}, "SAMPLERS", "samplers used for generation in order, separated by ';' (default: penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature)",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_samplers, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_SAMPLERS },
    { {"--sampling-seq", "--sampler-seq", NULL}, "SEQUENCE", "simplified sequence for samplers (default: edskypmxt)",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_sampling_seq, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_SAMPLERS },
    { {"-s", "--seed", NULL}, "SEED", "RNG seed (default: -1, use random seed for -1)",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_seed, GROUP_SAMPLING, 0 },
    { {"--ignore-eos", NULL}, NULL, "ignore end of stream token and continue generating",
      NULL, 0, ARG_TRUE, OFF(sampling.ignore_eos), NO_RANGE, NULL, GROUP_SAMPLING, 0 },
    { {"--temp", "--temperature", NULL}, "N", "temperature (default: 0.80)",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_temp, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_TEMP },
    { {"--top-k", NULL}, "N", "top-k sampling (default: 40, 0 = disabled)",
      NULL, 0, ARG_INT, OFF(sampling.top_k), INT32_MIN, INT32_MAX, NULL, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_TOP_K },
    { {"--top-p", NULL}, "N", "top-p sampling (default: 0.95, 1.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.top_p), NO_RANGE, NULL, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_TOP_P },
    { {"--min-p", NULL}, "N", "min-p sampling (default: 0.05, 0.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.min_p), NO_RANGE, NULL, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_MIN_P },
    { {"--top-nsigma", "--top-n-sigma", NULL}, "N", "top-n-sigma sampling (default: -1.0, -1.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.top_n_sigma), NO_RANGE, NULL, GROUP_SAMPLING, 0 },
    { {"--xtc-probability", NULL}, "N", "xtc probability (default: 0.00, 0.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.xtc_probability), NO_RANGE, NULL, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_XTC_PROBABILITY },
    { {"--xtc-threshold", NULL}, "N", "xtc threshold (default: 0.10, 1.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.xtc_threshold), NO_RANGE, NULL, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_XTC_THRESHOLD },
    { {"--typical", "--typical-p", NULL}, "N", "locally typical sampling, parameter p (default: 1.00, 1.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.typ_p), NO_RANGE, NULL, GROUP_SAMPLING, 0 },
    { {"--repeat-last-n", NULL}, "N", "last n tokens to consider for penalize (default: 64, 0 = disabled, -1 = ctx_size)",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_repeat_last_n, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_PENALTY_LAST_N },
    { {"--repeat-penalty", NULL}, "N", "penalize repeat sequence of tokens (default: 1.00, 1.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.penalty_repeat), NO_RANGE, NULL, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_PENALTY_REPEAT },
    { {"--presence-penalty", NULL}, "N", "repeat alpha presence penalty (default: 0.00, 0.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.penalty_present), NO_RANGE, NULL, GROUP_SAMPLING, 0 },
    { {"--frequency-penalty", NULL}, "N", "repeat alpha frequency penalty (default: 0.00, 0.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.penalty_freq), NO_RANGE, NULL, GROUP_SAMPLING, 0 },
    { {"--dry-multiplier", NULL}, "N", "set DRY sampling multiplier (default: 0.00, 0.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.dry_multiplier), NO_RANGE, NULL, GROUP_SAMPLING, 0 },
    { {"--dry-base", NULL}, "N", "set DRY sampling base value (default: 1.75)",
      NULL, 0, ARG_FLOAT, OFF(sampling.dry_base), NO_RANGE, NULL, GROUP_SAMPLING, 0 },
    { {"--dry-allowed-length", NULL}, "N", "set allowed length for DRY sampling (default: 2)",
      NULL, 0, ARG_INT, OFF(sampling.dry_allowed_length), 0, INT32_MAX, NULL, GROUP_SAMPLING, 0 },
    { {"--dry-penalty-last-n", NULL}, "N", "set DRY penalty for the last n tokens (default: 64, 0 = disable, -1 = context size)",
      NULL, 0, ARG_INT, OFF(sampling.dry_penalty_last_n), -1, INT32_MAX, NULL, GROUP_SAMPLING, 0 },
    { {"--dry-sequence-breaker", NULL}, "STRING", "add sequence breaker for DRY sampling, clearing out default breakers ('\\n', ':', '\"', '*'); use \"none\" to not use any",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_dry_breaker, GROUP_SAMPLING, 0 },
    { {"--dynatemp-range", NULL}, "N", "dynamic temperature range (default: 0.00, 0.0 = disabled)",
      NULL, 0, ARG_FLOAT, OFF(sampling.dynatemp_range), NO_RANGE, NULL, GROUP_SAMPLING, 0 },
    { {"--dynatemp-exp", NULL}, "N", "dynamic temperature exponent (default: 1.00)",
      NULL, 0, ARG_FLOAT, OFF(sampling.dynatemp_exponent), NO_RANGE, NULL, GROUP_SAMPLING, 0 },
    { {"--mirostat", NULL}, "N", "use Mirostat sampling: 0 = disabled, 1 = Mirostat, 2 = Mirostat 2.0 (default: 0)",
      NULL, 0, ARG_INT, OFF(sampling.mirostat), 0, 2, NULL, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_MIROSTAT },
    { {"--mirostat-lr", NULL}, "N", "Mirostat learning rate, parameter eta (default: 0.10)",
      NULL, 0, ARG_FLOAT, OFF(sampling.mirostat_eta), NO_RANGE, NULL, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_MIROSTAT_ETA },
    { {"--mirostat-ent", NULL}, "N", "Mirostat target entropy, parameter tau (default: 5.00)",
      NULL, 0, ARG_FLOAT, OFF(sampling.mirostat_tau), NO_RANGE, NULL, GROUP_SAMPLING, COMMON_PARAMS_SAMPLING_CONFIG_MIROSTAT_TAU },
    { {"-l", "--logit-bias", NULL}, "TOKEN_ID(+/-)BIAS", "modifies the likelihood of token appearing in the completion, e.g. `--logit-bias 15043+1`",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_logit_bias, GROUP_SAMPLING, 0 },
    { {"--grammar", NULL}, "GRAMMAR", "BNF-like grammar to constrain generations (default: none)",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_grammar, GROUP_SAMPLING, 0 },
    { {"--grammar-file", NULL}, "FNAME", "file to read grammar from",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_grammar_file, GROUP_SAMPLING, 0 },
    { {"-j", "--json-schema", NULL}, "SCHEMA",
      "JSON schema to constrain generations (https://json-schema.org/), e.g. `{}` for any JSON object\n"
      "For schemas w/ external $refs, use --grammar + example/json_schema_to_grammar.py instead",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_json_schema, GROUP_SAMPLING, 0 },
    { {"-jf", "--json-schema-file", NULL}, "FILE",
      "File containing a JSON schema to constrain generations (https://json-schema.org/), e.g. `{}` for any JSON object\n"
      "For schemas w/ external $refs, use --grammar + example/json_schema_to_grammar.py instead",
      NULL, 0, ARG_FN, 0, NO_RANGE, h_json_schema_file, GROUP_SAMPLING, 0 },

    // ----- program-specific -----
    { {"--pooling", NULL}, "{none,mean,cls,last,rank}", "pooling type for embeddings, use model default if unspecified",
      "LLAMA_ARG_POOLING", EMBD_PROGRAMS, ARG_FN, 0, NO_RANGE, h_pooling, GROUP_EXAMPLE, 0 },
    { {"--attention", NULL}, "{causal,non-causal}", "attention type for embeddings, use model default if unspecified",
      NULL, EMBD_PROGRAMS, ARG_FN, 0, NO_RANGE, h_attention, GROUP_EXAMPLE, 0 },
    { {"--embd-normalize", NULL}, "N", "normalisation for embeddings (default: 2) (-1=none, 0=max absolute int16, 1=taxicab, 2=euclidean, >2=p-norm)",
      NULL, EMBD_PROGRAMS, ARG_INT, OFF(embd_normalize), -1, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"--embd-output-format", NULL}, "FORMAT", "empty = default, \"array\" = [[],[]...], \"json\" = openai style, \"json+\" = same \"json\" + cosine similarity matrix",
      NULL, EMBD_PROGRAMS, ARG_FN, 0, NO_RANGE, h_embd_out, GROUP_EXAMPLE, 0 },
    { {"--embd-separator", NULL}, "STRING", "separator of embeddings (default \\n) for example \"<#sep#>\"",
      NULL, EMBD_PROGRAMS, ARG_STR, OFF(embd_sep), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--cls-separator", NULL}, "STRING", "separator of classification sequences (default \\t) for example \"<#seq#>\"",
      NULL, EMBD_PROGRAMS, ARG_STR, OFF(cls_sep), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--embedding", "--embeddings", NULL}, NULL, "restrict to only support embedding use case; use only with dedicated embedding models (default: disabled)",
      "LLAMA_ARG_EMBEDDINGS", EX(LLAMA_EXAMPLE_SERVER), ARG_TRUE, OFF(embedding), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--rerank", "--reranking", NULL}, NULL, "enable reranking endpoint on server (default: disabled)",
      "LLAMA_ARG_RERANKING", EX(LLAMA_EXAMPLE_SERVER), ARG_FN0, 0, NO_RANGE, h_reranking, GROUP_EXAMPLE, 0 },
    { {"--spm-infill", NULL}, NULL, "use Suffix/Prefix/Middle pattern for infill (instead of Prefix/Suffix/Middle) as some models prefer this. (default: disabled)",
      NULL, EX(LLAMA_EXAMPLE_SERVER), ARG_TRUE, OFF(spm_infill), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },

    { {"--ppl-stride", NULL}, "N", "stride for perplexity calculation (default: 0)",
      NULL, PPL_PROGRAMS, ARG_INT, OFF(ppl_stride), 0, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"--ppl-output-type", NULL}, "{0,1}", "output type for perplexity calculation (default: 0)",
      NULL, PPL_PROGRAMS, ARG_INT, OFF(ppl_output_type), 0, 1, NULL, GROUP_EXAMPLE, 0 },
    { {"--chunks", NULL}, "N", "max number of chunks to process (default: -1, -1 = all)",
      NULL, PPL_PROGRAMS | EX(LLAMA_EXAMPLE_IMATRIX), ARG_INT, OFF(n_chunks), -1, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"-o", "--output", "--output-file", NULL}, "FNAME",
      "output file (default: 'imatrix.gguf'; llama-finetune: 'finetuned-model.gguf')",
      "", IMATRIX_PROGRAMS | FINETUNE_PROGRAMS, ARG_STR, OFF(out_file), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    // ----- finetune -----
    { {"-lr", "--learning-rate", NULL}, "ALPHA",
      "adamw or sgd optimizer alpha (default: 1e-05); note: sgd alpha recommended ~10x (no momentum)",
      "", FINETUNE_PROGRAMS, ARG_FLOAT, OFF(lr.lr0), 1e-30, 1e30, NULL, GROUP_EXAMPLE, 0 },
    { {"-lr-min", "--learning-rate-min", NULL}, "ALPHA",
      "(if >0) final learning rate after decay (if -decay-epochs is set, default: -1)",
      "", FINETUNE_PROGRAMS, ARG_FLOAT, OFF(lr.lr_min), -1e30, 1e30, NULL, GROUP_EXAMPLE, 0 },
    { {"-decay-epochs", "--learning-rate-decay-epochs", NULL}, "ALPHA",
      "(if >0) decay learning rate to -lr-min after this many epochs (exponential decay, default: -1)",
      "", FINETUNE_PROGRAMS, ARG_FLOAT, OFF(lr.decay_epochs), -1e30, 1e30, NULL, GROUP_EXAMPLE, 0 },
    { {"-wd", "--weight-decay", NULL}, "WD",
      "adamw or sgd optimizer weight decay (0 is off; recommend very small e.g. 1e-9) (default: 0)",
      "", FINETUNE_PROGRAMS, ARG_FLOAT, OFF(lr.wd), 0, 1, NULL, GROUP_EXAMPLE, 0 },
    { {"-val-split", "--val-split", NULL}, "FRACTION",
      "fraction of data to use as validation set for training (default: 0.05)",
      "", FINETUNE_PROGRAMS, ARG_FLOAT, OFF(val_split), 0, 0.999999, NULL, GROUP_EXAMPLE, 0 },
    { {"-epochs", "--epochs", NULL}, "N", "optimizer max # of epochs (default: 2)",
      "", FINETUNE_PROGRAMS, ARG_INT, OFF(lr.epochs), 1, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"-opt", "--optimizer", NULL}, "sgd|adamw", "adamw or sgd (default: adamw)",
      "", FINETUNE_PROGRAMS, ARG_FN, 0, NO_RANGE, h_optimizer, GROUP_EXAMPLE, 0 },
    { {"-ofreq", "--output-frequency", NULL}, "N", "output the imatrix every N iterations (default: 10)",
      "", IMATRIX_PROGRAMS, ARG_INT, OFF(n_out_freq), 1, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"--save-frequency", NULL}, "N", "save an imatrix copy every N iterations (default: 0)",
      "", IMATRIX_PROGRAMS, ARG_INT, OFF(n_save_freq), 0, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"--process-output", NULL}, NULL, "collect data for the output tensor (default: false)",
      "", IMATRIX_PROGRAMS, ARG_TRUE, OFF(process_output), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--no-ppl", NULL}, NULL, "do not compute perplexity (default: true)",
      "", IMATRIX_PROGRAMS, ARG_FALSE, OFF(compute_ppl), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--chunk", "--from-chunk", NULL}, "N", "start processing the input from chunk N (default: 0)",
      "", IMATRIX_PROGRAMS, ARG_INT, OFF(i_chunk), 0, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"--in-file", NULL}, "FNAME", "additional imatrix file(s) to combine (repeatable)",
      "", IMATRIX_PROGRAMS, ARG_FN, 0, NO_RANGE, h_in_file, GROUP_EXAMPLE, 0 },
    { {"--parse-special", NULL}, NULL, "parse special tokens (chat, tool, etc) (default: false)",
      "", IMATRIX_PROGRAMS, ARG_TRUE, OFF(parse_special), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--show-statistics", NULL}, NULL, "show imatrix statistics and then exit (default: false)",
      "", IMATRIX_PROGRAMS, ARG_TRUE, OFF(show_statistics), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--hellaswag", NULL}, NULL, "compute HellaSwag score over random tasks from datafile supplied with -f",
      NULL, PPL_PROGRAMS, ARG_TRUE, OFF(hellaswag), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--winogrande", NULL}, NULL, "compute Winogrande score over random tasks from datafile supplied with -f",
      NULL, PPL_PROGRAMS, ARG_TRUE, OFF(winogrande), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--multiple-choice", NULL}, NULL, "compute multiple choice score over random tasks from datafile supplied with -f",
      NULL, PPL_PROGRAMS, ARG_TRUE, OFF(multiple_choice), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--kl-divergence", NULL}, NULL, "computes KL-divergence to logits provided via --kl-divergence-base",
      NULL, PPL_PROGRAMS, ARG_TRUE, OFF(kl_divergence), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--save-all-logits", "--kl-divergence-base", NULL}, "FNAME", "set logits file",
      NULL, PPL_PROGRAMS, ARG_STR, OFF(logits_file), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },

    { {"--host", NULL}, "HOST", "ip address to listen (default: 127.0.0.1)",
      "LLAMA_ARG_HOST", EX(LLAMA_EXAMPLE_SERVER), ARG_STR, OFF(hostname), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--port", NULL}, "PORT", "port to listen (default: 8080)",
      "LLAMA_ARG_PORT", EX(LLAMA_EXAMPLE_SERVER), ARG_INT, OFF(port), 0, 65535, NULL, GROUP_EXAMPLE, 0 },
    { {"-to", "--timeout", NULL}, "N", "server read/write timeout in seconds (default: 600)",
      "LLAMA_ARG_TIMEOUT", EX(LLAMA_EXAMPLE_SERVER), ARG_FN, 0, NO_RANGE, h_timeout, GROUP_EXAMPLE, 0 },
    { {"--threads-http", NULL}, "N", "number of threads used to process HTTP requests (default: -1)",
      "LLAMA_ARG_THREADS_HTTP", EX(LLAMA_EXAMPLE_SERVER), ARG_INT, OFF(n_threads_http), -1, 1024, NULL, GROUP_EXAMPLE, 0 },
    { {"--http-max-body", NULL}, "N", "largest accepted request body in bytes (llama.c; default: 16777216)",
      NULL, EX(LLAMA_EXAMPLE_SERVER), ARG_INT, OFF(http_max_body), 1, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"--cache-reuse", NULL}, "N", "min chunk size to attempt reusing from the cache via KV shifting (default: 0)\n"
      "(accepted; this server reuses the common prefix only)",
      "LLAMA_ARG_CACHE_REUSE", EX(LLAMA_EXAMPLE_SERVER), ARG_INT, OFF(n_cache_reuse), 0, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"-a", "--alias", NULL}, "STRING", "set alias for model name (to be used by REST API); comma-separated for several",
      "LLAMA_ARG_ALIAS", EX(LLAMA_EXAMPLE_SERVER), ARG_STR, OFF(model_alias), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--api-key", NULL}, "KEY", "API key to use for authentication, multiple keys can be provided as a comma-separated list (default: none)",
      "LLAMA_API_KEY", EX(LLAMA_EXAMPLE_SERVER), ARG_FN, 0, NO_RANGE, h_api_key, GROUP_EXAMPLE, 0 },
    { {"--api-key-file", NULL}, "FNAME", "path to file containing API keys (default: none)",
      "", EX(LLAMA_EXAMPLE_SERVER), ARG_FN, 0, NO_RANGE, h_api_key_file, GROUP_EXAMPLE, 0 },
    { {"--metrics", NULL}, NULL, "enable prometheus compatible metrics endpoint (default: disabled)",
      "LLAMA_ARG_ENDPOINT_METRICS", EX(LLAMA_EXAMPLE_SERVER), ARG_TRUE, OFF(endpoint_metrics), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--props", NULL}, NULL, "enable changing global properties via POST /props (default: disabled)",
      "LLAMA_ARG_ENDPOINT_PROPS", EX(LLAMA_EXAMPLE_SERVER), ARG_TRUE, OFF(endpoint_props), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--slots", NULL}, NULL, "enable slots monitoring endpoint (default: enabled)",
      "LLAMA_ARG_ENDPOINT_SLOTS", EX(LLAMA_EXAMPLE_SERVER), ARG_TRUE, OFF(endpoint_slots), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--no-slots", NULL}, NULL, "disables slots monitoring endpoint",
      "LLAMA_ARG_NO_ENDPOINT_SLOTS", EX(LLAMA_EXAMPLE_SERVER), ARG_FALSE, OFF(endpoint_slots), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--slot-save-path", NULL}, "PATH", "path to save slot kv cache (default: disabled)",
      "", EX(LLAMA_EXAMPLE_SERVER), ARG_STR, OFF(slot_save_path), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--chat-template", NULL}, "JINJA_TEMPLATE", "set custom chat template (default: template taken from model's metadata)\n"
      "a Jinja template text (rendered by the Jinja engine unless --no-jinja) or a built-in template name",
      "LLAMA_ARG_CHAT_TEMPLATE", EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI) | EX(LLAMA_EXAMPLE_COMPLETION), ARG_STR, OFF(chat_template), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--jinja", NULL}, NULL, "use jinja template for chat (default: enabled)",
      "LLAMA_ARG_JINJA", EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI) | EX(LLAMA_EXAMPLE_COMPLETION), ARG_TRUE, OFF(use_jinja), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--no-jinja", NULL}, NULL, "disable jinja template for chat",
      "LLAMA_ARG_NO_JINJA", EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI) | EX(LLAMA_EXAMPLE_COMPLETION), ARG_FALSE, OFF(use_jinja), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--webui", NULL}, NULL, "enable the Web UI (default: enabled; accepted, no Web UI is built)",
      "LLAMA_ARG_WEBUI", EX(LLAMA_EXAMPLE_SERVER), ARG_TRUE, OFF(webui), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--no-webui", NULL}, NULL, "disable the Web UI",
      "LLAMA_ARG_NO_WEBUI", EX(LLAMA_EXAMPLE_SERVER), ARG_FALSE, OFF(webui), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },

    { {"--ctx-checkpoints", "--swa-checkpoints", "-ctxcp", NULL}, "N", "max number of context checkpoints to create per slot (default: 32)\n"
      "(none are made here: warns unless 0)",
      "LLAMA_ARG_CTX_CHECKPOINTS", EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI), ARG_FN, 0, NO_RANGE, h_ctx_checkpoints, GROUP_EXAMPLE, 0 },
    { {"--cache-ram", "-cram", NULL}, "N", "set the maximum cache size in MiB (default: 8192, -1 - no limit, 0 - disable)\n"
      "(there is no host prompt cache here: warns unless 0)",
      "LLAMA_ARG_CACHE_RAM", EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI), ARG_FN, 0, NO_RANGE, h_cache_ram, GROUP_EXAMPLE, 0 },
    { {"-mm", "--mmproj", NULL}, "FILE", "path to a multimodal projector file (refused: multimodal is not supported here)",
      "LLAMA_ARG_MMPROJ", MMPROJ_PROGRAMS, ARG_FN, 0, NO_RANGE, h_refuse_multimodal, GROUP_EXAMPLE, 0 },
    { {"-mmu", "--mmproj-url", NULL}, "URL", "URL to a multimodal projector file (refused: multimodal is not supported here)",
      "LLAMA_ARG_MMPROJ_URL", MMPROJ_PROGRAMS, ARG_FN, 0, NO_RANGE, h_refuse_multimodal, GROUP_EXAMPLE, 0 },
    { {"--mmproj-auto", "--no-mmproj", "--no-mmproj-auto", NULL}, NULL, "whether to use multimodal projector file (if available)\n"
      "(accepted: no projector is ever used here)",
      "", MMPROJ_PROGRAMS, ARG_FN0, 0, NO_RANGE, h_noop_multimodal, GROUP_EXAMPLE, 0 },
    { {"--mmproj-offload", "--no-mmproj-offload", NULL}, NULL, "whether to enable GPU offloading for multimodal projector\n"
      "(accepted: no projector is ever used here)",
      "", MMPROJ_PROGRAMS, ARG_FN0, 0, NO_RANGE, h_noop_multimodal, GROUP_EXAMPLE, 0 },
    { {"--image", "--audio", NULL}, "FILE", "path to an image or audio file (refused: multimodal is not supported here)",
      "", EX(LLAMA_EXAMPLE_MTMD) | EX(LLAMA_EXAMPLE_CLI), ARG_FN, 0, NO_RANGE, h_refuse_multimodal, GROUP_EXAMPLE, 0 },
    { {"--image-min-tokens", NULL}, "N", "minimum number of tokens each image can take (no effect: no multimodal)",
      "LLAMA_ARG_IMAGE_MIN_TOKENS", MMPROJ_PROGRAMS, ARG_FN, 0, NO_RANGE, h_image_tokens, GROUP_EXAMPLE, 0 },
    { {"--image-max-tokens", NULL}, "N", "maximum number of tokens each image can take (no effect: no multimodal)",
      "LLAMA_ARG_IMAGE_MAX_TOKENS", MMPROJ_PROGRAMS, ARG_FN, 0, NO_RANGE, h_image_tokens, GROUP_EXAMPLE, 0 },
    { {"--chat-template-file", NULL}, "JINJA_TEMPLATE_FILE", "set custom jinja chat template file (default: template taken from model's metadata)",
      "LLAMA_ARG_CHAT_TEMPLATE_FILE", EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI) | EX(LLAMA_EXAMPLE_COMPLETION), ARG_FN, 0, NO_RANGE, h_chat_template_file, GROUP_EXAMPLE, 0 },
    { {"--chat-template-kwargs", NULL}, "STRING", "sets additional params for the json template parser, must be a valid json object string, e.g. '{\"key1\":\"value1\",\"key2\":\"value2\"}'\n"
      "(the server's default; a request's chat_template_kwargs override its keys)",
      "LLAMA_ARG_CHAT_TEMPLATE_KWARGS", EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI), ARG_FN, 0, NO_RANGE, h_chat_template_kwargs, GROUP_EXAMPLE, 0 },
    { {"--reasoning-format", NULL}, "FORMAT", "controls whether thought tags are allowed and/or extracted from the response: none, deepseek, deepseek-legacy, auto (default: auto)\n"
      "(thoughts are never extracted here: they stay in the content, as with 'none')",
      "LLAMA_ARG_THINK", EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI) | EX(LLAMA_EXAMPLE_COMPLETION), ARG_FN, 0, NO_RANGE, h_reasoning_format, GROUP_EXAMPLE, 0 },
    { {"--reasoning-budget", NULL}, "N", "token budget for thinking: -1 for unrestricted, 0 for immediate end, N>0 for token budget (default: -1)\n"
      "(not enforced here: warns unless -1)",
      "LLAMA_ARG_THINK_BUDGET", EX(LLAMA_EXAMPLE_SERVER) | EX(LLAMA_EXAMPLE_CLI) | EX(LLAMA_EXAMPLE_COMPLETION), ARG_FN, 0, NO_RANGE, h_reasoning_budget, GROUP_EXAMPLE, 0 },
    { {"-sps", "--slot-prompt-similarity", NULL}, "SIMILARITY", "how much the prompt of a request must match the prompt of a slot in order to use that slot (default: 0.10, 0.0 = disabled)",
      "", EX(LLAMA_EXAMPLE_SERVER), ARG_FN, 0, NO_RANGE, h_slot_prompt_similarity, GROUP_EXAMPLE, 0 },
    { {"--api-prefix", NULL}, "PREFIX", "prefix path the server serves from, without the trailing slash (default: )",
      "LLAMA_ARG_API_PREFIX", EX(LLAMA_EXAMPLE_SERVER), ARG_FN, 0, NO_RANGE, h_api_prefix, GROUP_EXAMPLE, 0 },
    { {"--path", NULL}, "PATH", "path to serve static files from (refused: no web UI / static files here)",
      "LLAMA_ARG_STATIC_PATH", EX(LLAMA_EXAMPLE_SERVER), ARG_FN, 0, NO_RANGE, h_refuse_path, GROUP_EXAMPLE, 0 },
    { {"--ssl-key-file", NULL}, "FNAME", "path to file a PEM-encoded SSL private key (refused: no SSL here)",
      "LLAMA_ARG_SSL_KEY_FILE", EX(LLAMA_EXAMPLE_SERVER), ARG_FN, 0, NO_RANGE, h_refuse_ssl, GROUP_EXAMPLE, 0 },
    { {"--ssl-cert-file", NULL}, "FNAME", "path to file a PEM-encoded SSL certificate (refused: no SSL here)",
      "LLAMA_ARG_SSL_CERT_FILE", EX(LLAMA_EXAMPLE_SERVER), ARG_FN, 0, NO_RANGE, h_refuse_ssl, GROUP_EXAMPLE, 0 },
    { {"--prefill-assistant", NULL}, NULL, "prefill the assistant's response if the last message is an assistant message\n"
      "(not done here: warns)",
      "LLAMA_ARG_PREFILL_ASSISTANT", EX(LLAMA_EXAMPLE_SERVER), ARG_FN0, 0, NO_RANGE, h_prefill_assistant, GROUP_EXAMPLE, 0 },
    { {"--no-prefill-assistant", NULL}, NULL, "a final assistant message is treated as a full message (this server's behaviour)",
      "LLAMA_ARG_NO_PREFILL_ASSISTANT", EX(LLAMA_EXAMPLE_SERVER), ARG_FN0, 0, NO_RANGE, h_no_prefill_assistant, GROUP_EXAMPLE, 0 },

    { {"--spec-type", NULL}, "none,draft-simple,draft-eagle3,draft-mtp,ngram-simple,ngram-map-k,ngram-map-k4v,ngram-mod,ngram-cache",
      "comma-separated list of types of speculative decoding to use (default: none)\n"
      "implemented here: draft-simple, ngram-simple, ngram-map-k, ngram-map-k4v, ngram-mod, ngram-cache",
      "LLAMA_ARG_SPEC_TYPE", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_spec_type, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-model", "-md", "--model-draft", NULL}, "FNAME", "draft model for speculative decoding (default: unused)",
      "LLAMA_ARG_SPEC_DRAFT_MODEL", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_model_draft, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-n-max", NULL}, "N", "number of tokens to draft for speculative decoding (default: 3)",
      "LLAMA_ARG_SPEC_DRAFT_N_MAX", SPEC_PROGRAMS, ARG_INT, OFF(speculative.draft.n_max), 0, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-n-min", NULL}, "N", "minimum number of draft tokens to use for speculative decoding (default: 0)",
      "LLAMA_ARG_SPEC_DRAFT_N_MIN", SPEC_PROGRAMS, ARG_INT, OFF(speculative.draft.n_min), 0, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-p-split", "--draft-p-split", NULL}, "P", "speculative decoding split probability (default: 0.10)",
      "LLAMA_ARG_SPEC_DRAFT_P_SPLIT", SPEC_PROGRAMS, ARG_FLOAT, OFF(speculative.draft.p_split), 0, 1, NULL, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-p-min", "--draft-p-min", NULL}, "P", "minimum speculative decoding probability (greedy) (default: 0.00)",
      "LLAMA_ARG_SPEC_DRAFT_P_MIN", SPEC_PROGRAMS, ARG_FLOAT, OFF(speculative.draft.p_min), 0, 1, NULL, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-backend-sampling", NULL}, NULL, "offload draft sampling to the backend (default: enabled)",
      NULL, SPEC_PROGRAMS, ARG_TRUE, OFF(speculative.draft.backend_sampling), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"--no-spec-draft-backend-sampling", NULL}, NULL, "sample draft tokens on the CPU",
      NULL, SPEC_PROGRAMS, ARG_FALSE, OFF(speculative.draft.backend_sampling), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"-cd", "--ctx-size-draft", NULL}, "N", "size of the prompt context for the draft model (default: 0, 0 = loaded from model)",
      "LLAMA_ARG_CTX_SIZE_DRAFT", SPEC_PROGRAMS, ARG_INT, OFF(speculative.draft.n_ctx), 0, INT32_MAX, NULL, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-ngl", "-ngld", "--gpu-layers-draft", "--n-gpu-layers-draft", NULL}, "N",
      "max. number of draft model layers to store in VRAM, either an exact number, 'auto', or 'all' (default: auto)",
      "LLAMA_ARG_N_GPU_LAYERS_DRAFT", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ngld, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-threads", "-td", "--threads-draft", NULL}, "N",
      "number of threads to use during generation (default: same as --threads)",
      NULL, SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_threads_draft, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-threads-batch", "-tbd", "--threads-batch-draft", NULL}, "N",
      "number of threads to use during batch and prompt processing (default: same as --threads-draft)",
      NULL, SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_threads_batch_draft, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-type-k", "-ctkd", "--cache-type-k-draft", NULL}, "TYPE",
      "KV cache data type for K for the draft model\nallowed values: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1\n(default: f16)",
      "LLAMA_ARG_SPEC_DRAFT_CACHE_TYPE_K", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ctkd, GROUP_EXAMPLE, 0 },
    { {"--spec-draft-type-v", "-ctvd", "--cache-type-v-draft", NULL}, "TYPE",
      "KV cache data type for V for the draft model\nallowed values: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1\n(default: f16)",
      "LLAMA_ARG_SPEC_DRAFT_CACHE_TYPE_V", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ctvd, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-mod-n-min", NULL}, "N", "minimum number of ngram tokens to use for ngram-based speculative decoding (default: 48)",
      "", SPEC_PROGRAMS, ARG_INT, OFF(speculative.ngram_mod.n_min), 1, 1024, NULL, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-mod-n-max", NULL}, "N", "maximum number of ngram tokens to use for ngram-based speculative decoding (default: 64)",
      "", SPEC_PROGRAMS, ARG_INT, OFF(speculative.ngram_mod.n_max), 1, 1024, NULL, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-mod-n-match", NULL}, "N", "ngram-mod lookup length (default: 24)",
      "", SPEC_PROGRAMS, ARG_INT, OFF(speculative.ngram_mod.n_match), 1, 1024, NULL, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-simple-size-n", NULL}, "N", "ngram size N for ngram-simple speculative decoding, length of lookup n-gram (default: 12)",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ngram_simple_size_n, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-simple-size-m", NULL}, "N", "ngram size M for ngram-simple speculative decoding, length of draft m-gram (default: 48)",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ngram_simple_size_m, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-simple-min-hits", NULL}, "N", "minimum hits for ngram-simple speculative decoding (default: 1)",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ngram_simple_min_hits, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-map-k-size-n", NULL}, "N", "ngram size N for ngram-map-k speculative decoding, length of lookup n-gram (default: 12)",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ngram_map_k_size_n, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-map-k-size-m", NULL}, "N", "ngram size M for ngram-map-k speculative decoding, length of draft m-gram (default: 48)",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ngram_map_k_size_m, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-map-k-min-hits", NULL}, "N", "minimum hits for ngram-map-k speculative decoding (default: 1)",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ngram_map_k_min_hits, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-map-k4v-size-n", NULL}, "N", "ngram size N for ngram-map-k4v speculative decoding, length of lookup n-gram (default: 12)",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ngram_map_k4v_size_n, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-map-k4v-size-m", NULL}, "N", "ngram size M for ngram-map-k4v speculative decoding, length of draft m-gram (default: 48)",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ngram_map_k4v_size_m, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-map-k4v-min-hits", NULL}, "N", "minimum hits for ngram-map-k4v speculative decoding (default: 1)",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_ngram_map_k4v_min_hits, GROUP_EXAMPLE, 0 },
    { {"--draft", "--draft-n", "--draft-max", NULL}, "N", "the argument has been removed. use --spec-draft-n-max or --spec-ngram-mod-n-max",
      "LLAMA_ARG_DRAFT_MAX", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_removed_draft_max, GROUP_EXAMPLE, 0 },
    { {"--draft-min", "--draft-n-min", NULL}, "N", "the argument has been removed. use --spec-draft-n-min or --spec-ngram-mod-n-min",
      "LLAMA_ARG_DRAFT_MIN", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_removed_draft_min, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-size-n", NULL}, "N", "the argument has been removed. use the respective --spec-ngram-*-size-n or --spec-ngram-mod-n-match",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_removed_ngram_size_n, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-size-m", NULL}, "N", "the argument has been removed. use the respective --spec-ngram-*-size-m",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_removed_ngram_size_m, GROUP_EXAMPLE, 0 },
    { {"--spec-ngram-min-hits", NULL}, "N", "the argument has been removed. use the respective --spec-ngram-*-min-hits",
      "", SPEC_PROGRAMS, ARG_FN, 0, NO_RANGE, h_removed_ngram_min_hits, GROUP_EXAMPLE, 0 },
    { {"-lcs", "--lookup-cache-static", NULL}, "FNAME", "path to static lookup cache to use for lookup decoding (not updated by generation)",
      NULL, SPEC_PROGRAMS, ARG_STR, OFF(speculative.lookup_cache_static), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
    { {"-lcd", "--lookup-cache-dynamic", NULL}, "FNAME", "path to dynamic lookup cache to use for lookup decoding (updated by generation)",
      NULL, SPEC_PROGRAMS, ARG_STR, OFF(speculative.lookup_cache_dynamic), NO_RANGE, NULL, GROUP_EXAMPLE, 0 },
};

#define N_ARGS ((int32_t) (sizeof(k_args) / sizeof(k_args[0])))

int32_t common_arg_count(void) {
    return N_ARGS;
}

const char * const * common_arg_names(int32_t i) {
    return (i >= 0 && i < N_ARGS) ? k_args[i].names : NULL;
}

const char * common_arg_value_hint(int32_t i) {
    return (i >= 0 && i < N_ARGS) ? k_args[i].value_hint : NULL;
}

bool common_arg_applies(int32_t i, enum llama_example ex) {
    if (i < 0 || i >= N_ARGS) {
        return false;
    }
    const uint64_t m = k_args[i].examples;
    return m == 0 || (m & EX(ex)) != 0 || ex == LLAMA_EXAMPLE_COMMON;
}

// the env variable of an option: explicit, or LLAMA_ARG_ + the first long name in upper case; NULL = none
static const char * arg_env(const struct common_arg * a, char * buf, size_t size) {
    if (a->env) {
        return a->env[0] ? a->env : NULL;
    }
    const char * lname = NULL;
    for (int k = 0; a->names[k]; k++) {
        if (strncmp(a->names[k], "--", 2) == 0) {
            lname = a->names[k] + 2;
            break;
        }
    }
    if (!lname) {
        return NULL;
    }
    int n = snprintf(buf, size, "LLAMA_ARG_");
    if (n < 0 || (size_t) n >= size) {
        return NULL;
    }
    size_t w = (size_t) n;
    for (const char * c = lname; *c && w + 1 < size; c++) {
        buf[w++] = *c == '-' ? '_' : (char) toupper((unsigned char) *c);
    }
    buf[w] = '\0';
    return buf;
}

const char * common_arg_env(int32_t i, char * buf, size_t buf_size) {
    if (i < 0 || i >= N_ARGS) {
        return NULL;
    }
    return arg_env(&k_args[i], buf, buf_size);
}

// stores `value` (NULL for a flag) into params according to the option's kind
static const char * arg_apply(const struct common_arg * a, struct common_params * p, const char * value) {
    char * base = (char *) p;
    const bool ranged = a->lo <= a->hi;
    switch (a->kind) {
        case ARG_INT: {
            long long n;
            if (!parse_i64(value, &n) || n < INT32_MIN || n > INT32_MAX) {
                return arg_errorf("invalid integer '%s'", value);
            }
            if (ranged && (n < (long long) a->lo || n > (long long) a->hi)) {
                return arg_errorf("value %lld out of range [%lld, %lld]", n, (long long) a->lo, (long long) a->hi);
            }
            int32_t v = (int32_t) n;
            memcpy(base + a->off, &v, sizeof(v));
        } break;
        case ARG_FLOAT: {
            double d;
            if (!parse_f64(value, &d)) {
                return arg_errorf("invalid number '%s'", value);
            }
            if (ranged && (d < a->lo || d > a->hi)) {
                return arg_errorf("value %g out of range [%g, %g]", d, a->lo, a->hi);
            }
            float f = (float) d;
            memcpy(base + a->off, &f, sizeof(f));
        } break;
        case ARG_STR: {
            char ** field = (char **) (void *) (base + a->off);
            if (!common_params_set_str(field, value)) {
                return "out of memory";
            }
        } break;
        case ARG_TRUE:
        case ARG_FALSE: {
            bool b = a->kind == ARG_TRUE;
            memcpy(base + a->off, &b, sizeof(b));
        } break;
        case ARG_FN:
        case ARG_FN0:
        case ARG_FN2: {
            const char * e = a->fn(p, value);
            if (e) {
                return e;
            }
        } break;
    }
    p->sampling.user_sampling_config |= a->sampling_bit;
    return NULL;
}

static bool arg_takes_value(const struct common_arg * a) {
    return a->value_hint != NULL;
}

static const struct common_arg * arg_find(const char * name_in, enum llama_example ex, bool * other_program) {
    *other_program = false;
    // llama.cpp: in a "--" option, '_' stands for '-' (--ctx_size = --ctx-size)
    char norm[128];
    const char * name = name_in;
    if (strncmp(name_in, "--", 2) == 0 && strchr(name_in, '_') && strlen(name_in) < sizeof(norm)) {
        size_t i = 0;
        for (; name_in[i]; i++) {
            norm[i] = name_in[i] == '_' ? '-' : name_in[i];
        }
        norm[i] = '\0';
        name = norm;
    }
    for (int32_t i = 0; i < N_ARGS; i++) {
        for (int k = 0; k < 4 && k_args[i].names[k]; k++) {
            if (strcmp(k_args[i].names[k], name) == 0) {
                if (common_arg_applies(i, ex)) {
                    return &k_args[i];
                }
                *other_program = true;
            }
        }
    }
    return NULL;
}

static void set_err(char * err, size_t err_size, const char * fmt, ...) COMMON_LOG_ATTRIBUTE_FORMAT(3, 4);

static void set_err(char * err, size_t err_size, const char * fmt, ...) {
    if (!err || err_size == 0) {
        return;
    }
    va_list args;
    va_start(args, fmt);
    vsnprintf(err, err_size, fmt, args);
    va_end(args);
}

// llama.cpp's postprocess_cpu_params: a role without its own thread count takes all of the model role's CPU
// settings (count, mask, priority, polling)
static void postprocess_cpu(struct common_cpu_params * c, const struct common_cpu_params * role) {
    if (c->n_threads < 0) {
        if (role) {
            *c = *role;
        } else {
            c->n_threads = common_cpu_get_num_math();
        }
    }
    int n_set = 0;
    for (int i = 0; i < GGML_MAX_N_THREADS; i++) {
        n_set += c->cpumask[i] ? 1 : 0;
    }
    if (n_set > 0 && n_set < c->n_threads) {
        LOG_WRN("Not enough set bits in CPU mask (%d) to satisfy requested thread count: %d\n", n_set, c->n_threads);
    }
}

static void print_version(void) {
    printf("version: %d (%s)\n", LLAMA_BUILD_NUMBER, LLAMA_COMMIT);
    printf("built with %s for %s\n", LLAMA_COMPILER, LLAMA_BUILD_TARGET);
}

enum common_arg_status common_params_parse_ex(int argc, char ** argv, struct common_params * params,
                                              enum llama_example ex, char * err, size_t err_size) {
    if (err && err_size) {
        err[0] = '\0';
    }
    g_dry_breakers_given = false;
    g_list_devices = false;

    // environment first, so that the command line overrides it
    for (int32_t i = 0; i < N_ARGS; i++) {
        const struct common_arg * a = &k_args[i];
        if (!common_arg_applies(i, ex)) {
            continue;
        }
        char envbuf[128];
        const char * env = arg_env(a, envbuf, sizeof(envbuf));
        const char * val = env ? getenv(env) : NULL;
        if (!val) {
            continue;
        }
        const char * e = NULL;
        if (arg_takes_value(a)) {
            e = arg_apply(a, params, val);
        } else {
            int b = parse_bool_word(val);
            if (b < 0) {
                e = "expected a boolean (1/0, true/false, on/off, enabled/disabled)";
            } else if (b == 1) {
                e = arg_apply(a, params, NULL);
            }
        }
        if (e) {
            set_err(err, err_size, "error while handling environment variable \"%s\": %s", env, e);
            return COMMON_ARG_ERROR;
        }
    }

    bool want_version = false;
    for (int i = 1; i < argc; i++) {
        const char * arg = argv[i];
        if (!arg) {
            break;
        }
        bool other = false;
        const struct common_arg * a = arg_find(arg, ex, &other);
        if (!a) {
            if (other) {
                set_err(err, err_size, "error: argument %s is not supported by this program", arg);
            } else {
                set_err(err, err_size, "error: invalid argument: %s", arg);
            }
            return COMMON_ARG_ERROR;
        }
        if (a->fn == h_version) {
            want_version = true;
            continue;
        }
        const char * value = NULL;
        if (arg_takes_value(a)) {
            if (i + 1 >= argc || !argv[i + 1]) {
                set_err(err, err_size, "error: expected value for argument: %s", arg);
                return COMMON_ARG_ERROR;
            }
            value = argv[++i];
        }
        char two[1024];
        if (a->kind == ARG_FN2) {
            if (i + 1 >= argc || !argv[i + 1]) {
                set_err(err, err_size, "error: expected two values for argument: %s", arg);
                return COMMON_ARG_ERROR;
            }
            const int n2 = snprintf(two, sizeof(two), "%s\n%s", value, argv[++i]);
            if (n2 < 0 || (size_t) n2 >= sizeof(two)) {
                set_err(err, err_size, "error: values too long for argument: %s", arg);
                return COMMON_ARG_ERROR;
            }
            value = two;
        }
        const char * e = arg_apply(a, params, value);
        if (e) {
            set_err(err, err_size, "error while handling argument \"%s\": %s", arg, e);
            return COMMON_ARG_ERROR;
        }
    }

    if (params->usage) {
        common_params_print_usage(stdout, ex);
        return COMMON_ARG_EXIT;
    }
    if (want_version) {
        print_version();
        return COMMON_ARG_EXIT;
    }
    if (g_list_devices) {
        common_print_devices(false);
        return COMMON_ARG_EXIT;
    }

    postprocess_cpu(&params->cpuparams, NULL);
    postprocess_cpu(&params->cpuparams_batch, &params->cpuparams);
    postprocess_cpu(&params->speculative.draft.cpuparams, &params->cpuparams);
    postprocess_cpu(&params->speculative.draft.cpuparams_batch, &params->speculative.draft.cpuparams);

    if (params->escape) {
        common_string_process_escapes(params->prompt);
        common_string_process_escapes(params->input_prefix);
        common_string_process_escapes(params->input_suffix);
        for (int i = 0; i < params->n_antiprompt; i++) {
            common_string_process_escapes(params->antiprompt[i]);
        }
    }

    if (params->n_ubatch > params->n_batch) {
        // llama.cpp clamps ubatch to batch inside the context; doing it here keeps printed values honest
        params->n_ubatch = params->n_batch;
    }

    return COMMON_ARG_OK;
}

bool common_params_parse(int argc, char ** argv, struct common_params * params, enum llama_example ex,
                         void (*print_usage)(int, char **)) {
    char err[640];
    enum common_arg_status st = common_params_parse_ex(argc, argv, params, ex, err, sizeof(err));
    if (st == COMMON_ARG_ERROR) {
        fprintf(stderr, "%s\n", err);
        return false;
    }
    if (st == COMMON_ARG_EXIT) {
        if (params->usage && print_usage) {
            print_usage(argc, argv);
        }
        fflush(stdout);
        exit(0);
    }
    return true;
}

static void print_group(FILE * out, enum llama_example ex, enum arg_group group) {
    for (int32_t i = 0; i < N_ARGS; i++) {
        const struct common_arg * a = &k_args[i];
        if (a->group != group || !common_arg_applies(i, ex)) {
            continue;
        }
        char left[160];
        size_t w = 0;
        left[0] = '\0';
        for (int k = 0; a->names[k]; k++) {
            int n = snprintf(left + w, sizeof(left) - w, "%s%s", k ? ", " : "", a->names[k]);
            if (n < 0 || (size_t) n >= sizeof(left) - w) {
                break;
            }
            w += (size_t) n;
        }
        if (a->value_hint && w < sizeof(left)) {
            snprintf(left + w, sizeof(left) - w, " %s", a->value_hint);
        }
        char envbuf[128];
        const char * env = arg_env(a, envbuf, sizeof(envbuf));
        if (strlen(left) <= 40) {
            fprintf(out, "%-40s ", left);
        } else {
            fprintf(out, "%s\n%-40s ", left, "");
        }
        // continuation lines of a multi-line help line up under its first line
        for (const char * h = a->help; *h; h++) {
            fputc(*h, out);
            if (*h == '\n' && h[1]) {
                fprintf(out, "%-40s ", "");
            }
        }
        if (env) {
            fprintf(out, "\n%-40s (env: %s)", "", env);
        }
        fputc('\n', out);
    }
}

void common_params_print_usage(FILE * out, enum llama_example ex) {
    fprintf(out, "----- common params -----\n\n");
    print_group(out, ex, GROUP_COMMON);
    fprintf(out, "\n\n----- sampling params -----\n\n");
    print_group(out, ex, GROUP_SAMPLING);
    fprintf(out, "\n\n----- example-specific params -----\n\n");
    print_group(out, ex, GROUP_EXAMPLE);
    fputc('\n', out);
}
