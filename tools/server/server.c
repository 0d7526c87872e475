// llama-server: llama.cpp's HTTP API over libllama.
//
// Threads: libmicrohttpd's pool answers HTTP (server-http.c); the main thread loads the model (HTTP answers
// 503 "Loading model" meanwhile) and then runs the inference loop, the only place that touches slots and,
// in part 2, the llama_context. Handlers that need slot state post a task (server-queue.h) and wait for the
// result; handlers that only need the read-only model and vocabulary (tokenize, detokenize, templates,
// props) run on the HTTP threads directly, as llama.cpp's do.
#include "server-errors.h"
#include "server-http.h"
#include "server-json.h"
#include "server-queue.h"
#include "server-task.h"

#include "common.h"
#include "llama.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// llama.c has no build numbering yet; same value as common.h's LLAMA_C_BUILD_NUMBER / LLAMA_C_COMMIT
#define SERVER_BUILD_INFO "b1-unknown"

#define DEFAULT_MAX_BODY ((size_t) 16 * 1024 * 1024)

//
// logging (to move onto common/log.h once the programs share it)
//

static int g_verbosity = 0;
static bool g_log_disabled = false;

static void srv_log(const char * level, const char * fmt, ...) __attribute__((format(printf, 2, 3)));
static void srv_log(const char * level, const char * fmt, ...) {
    if (g_log_disabled) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s", level);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

#define SRV_INF(...) srv_log("srv  ", __VA_ARGS__)
#define SRV_WRN(...) srv_log("srv  W ", __VA_ARGS__)
#define SRV_ERR(...) srv_log("srv  E ", __VA_ARGS__)

static void llama_log_cb(enum ggml_log_level level, const char * text, void * ud) {
    (void) ud;
    if (g_log_disabled) {
        return;
    }
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN || g_verbosity > 0) {
        fputs(text, stderr);
    }
}

//
// parameters
//

struct server_params {
    char * model_path;
    char * alias;
    char * host;
    int    port;
    int    timeout;
    int    n_threads_http;
    char ** api_keys;
    size_t n_api_keys;
    bool   endpoint_metrics;
    bool   endpoint_slots;
    bool   endpoint_props;   // POST /props (changing properties)
    int    n_parallel;       // -1 = auto (4, unified KV)
    bool   kv_unified;
    int    n_ctx;            // 0 = from the model
    int    n_batch;
    int    n_ubatch;
    int    n_threads;
    int    flash_attn;       // llama_flash_attn_type
    int    type_k, type_v;   // ggml_type of the KV cache
    bool   embedding;        // embeddings-only server (--embedding)
    int    pooling;          // llama_pooling_type; -1 = the model's
    char * chat_template;
    size_t max_body;
};

static void params_free(struct server_params * p) {
    free(p->model_path);
    free(p->alias);
    free(p->host);
    for (size_t i = 0; i < p->n_api_keys; i++) {
        free(p->api_keys[i]);
    }
    free(p->api_keys);
    free(p->chat_template);
}

static bool add_api_key(struct server_params * p, const char * key, size_t len) {
    if (len == 0) {
        return true;
    }
    char ** nk = realloc(p->api_keys, (p->n_api_keys + 1) * sizeof(char *));
    if (!nk) {
        return false;
    }
    p->api_keys = nk;
    p->api_keys[p->n_api_keys] = strndup(key, len);
    if (!p->api_keys[p->n_api_keys]) {
        return false;
    }
    p->n_api_keys++;
    return true;
}

// comma-separated keys, as llama.cpp's --api-key
static bool add_api_keys_csv(struct server_params * p, const char * csv) {
    const char * s = csv;
    while (*s) {
        const char * e = strchr(s, ',');
        const size_t len = e ? (size_t) (e - s) : strlen(s);
        if (!add_api_key(p, s, len)) {
            return false;
        }
        s += len;
        if (*s == ',') {
            s++;
        }
    }
    return true;
}

// one key per line; blank lines skipped
static bool add_api_keys_file(struct server_params * p, const char * path) {
    FILE * f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "error: cannot open API key file '%s': %s\n", path, strerror(errno));
        return false;
    }
    char line[4096];
    bool ok = true;
    while (ok && fgets(line, sizeof(line), f)) {
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) {
            line[--n] = '\0';
        }
        ok = add_api_key(p, line, n);
    }
    fclose(f);
    return ok;
}

static bool parse_int_arg(const char * s, int lo, int hi, int * out) {
    if (!s || !*s) {
        return false;
    }
    errno = 0;
    char * end = NULL;
    const long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) {
        return false;
    }
    *out = (int) v;
    return true;
}

static bool set_str(char ** dst, const char * v) {
    free(*dst);
    *dst = strdup(v);
    return *dst != NULL;
}

static void print_usage(const char * argv0) {
    printf("usage: %s -m MODEL [options]\n\n"
           "  -m,  --model FNAME          model path (GGUF)\n"
           "  -a,  --alias NAME           model name reported by the API (default: the model path)\n"
           "       --host HOST            address to listen on (default: 127.0.0.1)\n"
           "       --port PORT            port to listen on (default: 8080; 0 = any free port)\n"
           "  -to, --timeout N            read/write timeout in seconds (default: 600)\n"
           "       --threads-http N       HTTP worker threads (default: max(np + 2, cores - 1))\n"
           "       --api-key KEY[,KEY..]  require one of these keys (Authorization: Bearer KEY)\n"
           "       --api-key-file FNAME   keys, one per line\n"
           "       --metrics              enable GET /metrics (Prometheus)\n"
           "       --slots / --no-slots   enable / disable GET /slots (default: enabled)\n"
           "       --props                enable POST /props\n"
           "  -np, --parallel N           number of slots (default: -1 = auto: 4 with a unified KV cache)\n"
           "  -kvu, --kv-unified          one KV buffer shared by all slots\n"
           "  -c,  --ctx-size N           context size (default: 0 = from the model)\n"
           "  -b,  --batch-size N         logical batch size (default: 2048)\n"
           "  -ub, --ubatch-size N        physical batch size (default: 512)\n"
           "  -t,  --threads N            threads for generation\n"
           "  -fa, --flash-attn on|off|auto  flash attention (default: auto)\n"
           "  -ctk, -ctv TYPE             KV cache data types (default: f16)\n"
           "       --embedding            embeddings-only server (/embedding, /v1/embeddings)\n"
           "       --pooling TYPE         none|mean|cls|last|rank (default: the model's)\n"
           "       --chat-template NAME   built-in chat template to use instead of the model's\n"
           "       --http-max-body N      largest request body in bytes (llama.c; default: 16 MiB)\n"
           "  -v,  --verbose              print library messages\n"
           "       --log-disable          print nothing\n"
           "  -h,  --help\n", argv0);
}

// 0 = ok, 1 = printed help, -1 = error (message printed)
static int params_parse(int argc, char ** argv, struct server_params * p) {
    memset(p, 0, sizeof(*p));
    p->port           = 8080;
    p->timeout        = 600;
    p->n_threads_http = -1;
    p->endpoint_slots = true;
    p->n_parallel     = -1;
    p->n_batch        = 2048;
    p->n_ubatch       = 512;
    p->n_threads      = -1;
    p->flash_attn     = LLAMA_FLASH_ATTN_TYPE_AUTO;
    p->type_k         = GGML_TYPE_F16;
    p->type_v         = GGML_TYPE_F16;
    p->pooling        = LLAMA_POOLING_TYPE_UNSPECIFIED;
    p->max_body       = DEFAULT_MAX_BODY;
    if (!set_str(&p->host, "127.0.0.1")) {
        return -1;
    }

    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        const char * v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG_IS(s1, s2) (strcmp(a, s1) == 0 || ((s2) != NULL && strcmp(a, (s2) ? (s2) : "") == 0))
#define NEED_VALUE() do { if (!v) { fprintf(stderr, "error: %s needs a value\n", a); return -1; } i++; } while (0)
#define BAD_VALUE() do { fprintf(stderr, "error: invalid value for %s: '%s'\n", a, v); return -1; } while (0)
        if (ARG_IS("-h", "--help")) {
            print_usage(argv[0]);
            return 1;
        } else if (ARG_IS("-m", "--model")) {
            NEED_VALUE(); if (!set_str(&p->model_path, v)) return -1;
        } else if (ARG_IS("-a", "--alias")) {
            NEED_VALUE(); if (!set_str(&p->alias, v)) return -1;
        } else if (ARG_IS("--host", NULL)) {
            NEED_VALUE(); if (!set_str(&p->host, v)) return -1;
        } else if (ARG_IS("--port", NULL)) {
            NEED_VALUE(); if (!parse_int_arg(v, 0, 65535, &p->port)) BAD_VALUE();
        } else if (ARG_IS("-to", "--timeout")) {
            NEED_VALUE(); if (!parse_int_arg(v, 0, INT_MAX, &p->timeout)) BAD_VALUE();
        } else if (ARG_IS("--threads-http", NULL)) {
            NEED_VALUE(); if (!parse_int_arg(v, -1, 1024, &p->n_threads_http)) BAD_VALUE();
        } else if (ARG_IS("--api-key", NULL)) {
            NEED_VALUE(); if (!add_api_keys_csv(p, v)) return -1;
        } else if (ARG_IS("--api-key-file", NULL)) {
            NEED_VALUE(); if (!add_api_keys_file(p, v)) return -1;
        } else if (ARG_IS("--metrics", NULL)) {
            p->endpoint_metrics = true;
        } else if (ARG_IS("--slots", NULL)) {
            p->endpoint_slots = true;
        } else if (ARG_IS("--no-slots", NULL)) {
            p->endpoint_slots = false;
        } else if (ARG_IS("--props", NULL)) {
            p->endpoint_props = true;
        } else if (ARG_IS("-np", "--parallel")) {
            NEED_VALUE(); if (!parse_int_arg(v, -1, 256, &p->n_parallel) || p->n_parallel == 0) BAD_VALUE();
        } else if (ARG_IS("-kvu", "--kv-unified")) {
            p->kv_unified = true;
        } else if (ARG_IS("-c", "--ctx-size")) {
            NEED_VALUE(); if (!parse_int_arg(v, 0, INT_MAX, &p->n_ctx)) BAD_VALUE();
        } else if (ARG_IS("-b", "--batch-size")) {
            NEED_VALUE(); if (!parse_int_arg(v, 1, INT_MAX, &p->n_batch)) BAD_VALUE();
        } else if (ARG_IS("-ub", "--ubatch-size")) {
            NEED_VALUE(); if (!parse_int_arg(v, 1, INT_MAX, &p->n_ubatch)) BAD_VALUE();
        } else if (ARG_IS("-t", "--threads")) {
            NEED_VALUE(); if (!parse_int_arg(v, -1, 4096, &p->n_threads)) BAD_VALUE();
        } else if (ARG_IS("-fa", "--flash-attn")) {
            NEED_VALUE();
            if (strcmp(v, "on") == 0 || strcmp(v, "1") == 0) p->flash_attn = LLAMA_FLASH_ATTN_TYPE_ENABLED;
            else if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0) p->flash_attn = LLAMA_FLASH_ATTN_TYPE_DISABLED;
            else if (strcmp(v, "auto") == 0) p->flash_attn = LLAMA_FLASH_ATTN_TYPE_AUTO;
            else BAD_VALUE();
        } else if (ARG_IS("-ctk", "--cache-type-k") || ARG_IS("-ctv", "--cache-type-v")) {
            const bool is_k = ARG_IS("-ctk", "--cache-type-k");
            NEED_VALUE();
            int found = -1;
            for (int ty = 0; ty < GGML_TYPE_COUNT; ty++) {
                const char * tn = ggml_type_name((enum ggml_type) ty);
                if (tn && strcmp(tn, v) == 0) {
                    found = ty;
                }
            }
            if (found < 0) BAD_VALUE();
            *(is_k ? &p->type_k : &p->type_v) = found;
        } else if (ARG_IS("--embedding", "--embeddings")) {
            p->embedding = true;
        } else if (ARG_IS("--pooling", NULL)) {
            NEED_VALUE();
            if (strcmp(v, "none") == 0) p->pooling = LLAMA_POOLING_TYPE_NONE;
            else if (strcmp(v, "mean") == 0) p->pooling = LLAMA_POOLING_TYPE_MEAN;
            else if (strcmp(v, "cls") == 0) p->pooling = LLAMA_POOLING_TYPE_CLS;
            else if (strcmp(v, "last") == 0) p->pooling = LLAMA_POOLING_TYPE_LAST;
            else if (strcmp(v, "rank") == 0) p->pooling = LLAMA_POOLING_TYPE_RANK;
            else BAD_VALUE();
        } else if (ARG_IS("--chat-template", NULL)) {
            NEED_VALUE(); if (!set_str(&p->chat_template, v)) return -1;
        } else if (ARG_IS("--http-max-body", NULL)) {
            int mb = 0;
            NEED_VALUE(); if (!parse_int_arg(v, 1, INT_MAX, &mb)) BAD_VALUE();
            p->max_body = (size_t) mb;
        } else if (ARG_IS("-v", "--verbose")) {
            g_verbosity = 1;
        } else if (ARG_IS("--log-disable", NULL)) {
            g_log_disabled = true;
        } else {
            fprintf(stderr, "error: invalid argument: %s\n", a);
            return -1;
        }
#undef ARG_IS
#undef NEED_VALUE
#undef BAD_VALUE
    }
    if (!p->model_path) {
        fprintf(stderr, "error: no model given (-m FNAME)\n");
        return -1;
    }
    if (p->n_parallel < 0) {
        // llama.cpp's automatic setting: 4 slots sharing one KV buffer
        p->n_parallel = 4;
        p->kv_unified = true;
    }
    if (p->n_threads_http < 1) {
        const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        const int hw = ncpu > 1 ? (int) ncpu - 1 : 1;
        p->n_threads_http = p->n_parallel + 2 > hw ? p->n_parallel + 2 : hw;
    }
    return 0;
}

//
// server state
//

enum slot_state {
    SLOT_STATE_IDLE,
    SLOT_STATE_STARTED,
    SLOT_STATE_PROCESSING_PROMPT,
    SLOT_STATE_DONE_PROMPT,
    SLOT_STATE_GENERATING,
};

// one slot per sequence id (slot id == seq id); owned by the inference thread
struct server_slot {
    int id;
    int id_task;           // -1 when idle
    int n_ctx;             // context available to this slot
    enum slot_state state;
    struct server_slot_params params;
    bool    has_next_token;
    bool    has_new_line;
    int32_t n_remain;
    int32_t n_decoded;

    // part 2: the request being served
    struct server_task   * task;
    struct llama_sampler * smpl;
    int   mode;                 // COMPL_MODE_*
    bool  cache_prompt;
    bool  return_tokens;
    llama_token * prompt;       // borrowed from task->tokens
    int   n_prompt;
    int   n_prompt_done;        // prompt tokens already in the KV cache (reused + evaluated)
    int   n_prompt_reused;
    llama_token * cache;        // the tokens in this slot's sequence, in position order
    int   n_cache, cap_cache;
    llama_token next_tok;       // sampled, not yet decoded
    int   i_batch;              // row of this slot's output in the current batch, -1 = none
    char * text;                // generated text (stop strings cut off)
    size_t n_text, cap_text, n_sent;
    json_t * gen_tokens;
    json_t * probs;
    const char * stop_type;
    char * stopping_word;
    int64_t t_start_prompt, t_start_gen;
    double  t_prompt_ms, t_gen_ms;
    char    oai_id[40];
    int64_t created;
};

// counters in llama.cpp's /metrics; the *_bucket values restart on each /metrics read
struct server_metrics {
    int64_t  t_start;
    uint64_t n_prompt_tokens_processed_total;
    uint64_t t_prompt_processing_total;   // ms
    uint64_t n_tokens_predicted_total;
    uint64_t t_tokens_generation_total;   // ms
    uint64_t n_prompt_tokens_processed;   // bucket
    uint64_t t_prompt_processing;         // bucket, ms
    uint64_t n_tokens_predicted;          // bucket
    uint64_t t_tokens_generation;         // bucket, ms
    uint64_t n_decode_total;
    uint64_t n_busy_slots_total;
    uint64_t n_tokens_max;
};

struct server_context {
    struct server_params params;
    struct server_http * http;
    struct server_queue  queue;

    // set once before the HTTP gate opens, read-only afterwards
    struct llama_model * model;
    const struct llama_vocab * vocab;
    char * model_name;
    int    n_ctx;        // whole context
    int    n_ctx_slot;   // per slot
    char * chat_template; // name or template text used for /apply-template; NULL = llama.cpp's default
    bool   has_chat;     // llama_chat_apply_template is available and accepted the template

    // inference thread only
    struct server_slot * slots;
    int n_slots;
    struct llama_context * ctx;
    struct llama_batch batch;
    int n_batch;
    struct server_task * deferred_head, * deferred_tail; // waiting for a free slot
    struct server_metrics metrics;

    atomic_bool shutting_down;
};

//
// helpers for handlers
//

static void res_err(struct server_http_res * res, const char * message, enum server_error_type type) {
    int status = 500;
    char * body = server_error_body(message, type, 0, &status);
    server_http_res_take_body(res, status, body);
}

static void res_json(struct server_http_res * res, json_t * value) {
    if (!value) {
        res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    char * body = sj_dumps(value);
    json_decref(value);
    if (!body) {
        res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    server_http_res_take_body(res, 200, body);
}

// parse the body as a JSON object or answer 400
static json_t * parse_body(const struct server_http_req * req, struct server_http_res * res) {
    struct sj_err err;
    json_t * body = sj_parse_object(req->body, req->body_len, &err);
    if (!body) {
        res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
    }
    return body;
}

// the piece of a token with special tokens rendered (llama.cpp's common_token_to_piece(..., true));
// malloc'd, *len its length
static char * token_piece(const struct llama_vocab * vocab, llama_token tok, size_t * len) {
    int32_t n = 0;
    char * out = common_token_to_piece(vocab, tok, true, &n);
    *len = (size_t) n;
    return out;
}

// tokenize text[0..len); returns the count (>= 0) with *out malloc'd, or -1
static int tokenize_text(const struct llama_vocab * vocab, const char * text, size_t len, bool add_special,
                         bool parse_special, llama_token ** out) {
    int32_t n = 0;
    if (len > INT32_MAX) {
        *out = NULL;
        return -1;
    }
    return common_tokenize(vocab, text, (int32_t) len, add_special, parse_special, out, &n) ? n : -1;
}

struct token_vec {
    llama_token * data;
    size_t n;
    size_t cap;
};

static bool tv_append(struct token_vec * v, const llama_token * t, size_t n) {
    if (n > v->cap - v->n) {
        size_t cap = v->cap ? v->cap : 64;
        while (cap - v->n < n) {
            if (cap > SIZE_MAX / (2 * sizeof(llama_token))) {
                return false;
            }
            cap *= 2;
        }
        llama_token * nd = realloc(v->data, cap * sizeof(llama_token));
        if (!nd) {
            return false;
        }
        v->data = nd;
        v->cap = cap;
    }
    memcpy(v->data + v->n, t, n * sizeof(llama_token));
    v->n += n;
    return true;
}

// llama.cpp's tokenize_mixed: a string, or an array of strings and token ids (only the first element gets
// the special tokens). false with err set on a bad element.
static bool tokenize_mixed(const struct llama_vocab * vocab, const json_t * content, bool add_special,
                           bool parse_special, struct token_vec * out, struct sj_err * err) {
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    if (json_is_string(content)) {
        llama_token * toks = NULL;
        const int n = tokenize_text(vocab, json_string_value(content), json_string_length(content), add_special,
                                    parse_special, &toks);
        if (n < 0 || !tv_append(out, toks, (size_t) n)) {
            free(toks);
            snprintf(err->msg, sizeof(err->msg), "failed to tokenize \"content\"");
            return false;
        }
        free(toks);
        return true;
    }
    if (!json_is_array(content)) {
        snprintf(err->msg, sizeof(err->msg), "\"content\" must be a string or an array of strings and token ids, got %s",
                 sj_type_name(content));
        return false;
    }
    bool first = true;
    size_t i;
    const json_t * el;
    json_array_foreach(content, i, el) {
        if (json_is_string(el)) {
            llama_token * toks = NULL;
            const int n = tokenize_text(vocab, json_string_value(el), json_string_length(el), first && add_special,
                                        parse_special, &toks);
            if (n < 0 || !tv_append(out, toks, (size_t) n)) {
                free(toks);
                snprintf(err->msg, sizeof(err->msg), "failed to tokenize \"content\"[%zu]", i);
                return false;
            }
            free(toks);
        } else if (json_is_integer(el)) {
            const json_int_t id = json_integer_value(el);
            if (id < 0 || id >= n_vocab) {
                snprintf(err->msg, sizeof(err->msg), "\"content\"[%zu]: token id %lld out of range [0, %d)", i,
                         (long long) id, n_vocab);
                return false;
            }
            const llama_token t = (llama_token) id;
            if (!tv_append(out, &t, 1)) {
                snprintf(err->msg, sizeof(err->msg), "out of memory");
                return false;
            }
        } else {
            snprintf(err->msg, sizeof(err->msg), "\"content\"[%zu] must be a string or a token id, got %s", i,
                     sj_type_name(el));
            return false;
        }
        first = false;
    }
    return true;
}

//
// handlers
//

static void handle_health(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    (void) ud;
    res_json(res, json_pack("{s:s}", "status", "ok"));
}

static json_t * model_meta_json(struct server_context * sc) {
    if (!sc->model) {
        return json_null();
    }
    return json_pack("{s:i, s:i, s:i, s:i, s:I, s:I}",
                     "vocab_type",  (int) llama_vocab_type(sc->vocab),
                     "n_vocab",     (int) llama_vocab_n_tokens(sc->vocab),
                     "n_ctx_train", (int) llama_model_n_ctx_train(sc->model),
                     "n_embd",      (int) llama_model_n_embd(sc->model),
                     "n_params",    (json_int_t) llama_model_n_params(sc->model),
                     "size",        (json_int_t) llama_model_size(sc->model));
}

static void handle_models(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    struct server_context * sc = ud;
    // before the model is loaded the gate lets this endpoint through, with "meta": null
    // model_name and the model are written by the loader before the gate opens: read them only after
    const bool ready = server_http_is_ready(sc->http);
    const char * name = ready ? sc->model_name : (sc->params.alias ? sc->params.alias : sc->params.model_path);
    json_t * meta = ready ? model_meta_json(sc) : json_null();
    json_t * out = json_pack(
        "{s:[{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:[s], s:[s], s:s,"
        "     s:{s:s, s:s, s:s, s:[s], s:s, s:s}}],"
        " s:s,"
        " s:[{s:s, s:s, s:I, s:s, s:o}]}",
        "models",
            "name", name, "model", name, "modified_at", "", "size", "", "digest", "", "type", "model",
            "description", "", "tags", "", "capabilities", "completion", "parameters", "",
            "details", "parent_model", "", "format", "gguf", "family", "", "families", "", "parameter_size", "",
                       "quantization_level", "",
        "object", "list",
        "data", "id", name, "object", "model", "created", (json_int_t) time(NULL), "owned_by", "llamacpp",
                "meta", meta);
    res_json(res, out);
}

static void handle_props(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    struct server_context * sc = ud;
    const struct server_slot_params defaults = server_slot_params_default();
    size_t bos_len = 0, eos_len = 0;
    const llama_token bos = llama_vocab_bos(sc->vocab);
    const llama_token eos = llama_vocab_eos(sc->vocab);
    char * bos_txt = bos != LLAMA_TOKEN_NULL ? token_piece(sc->vocab, bos, &bos_len) : strdup("");
    char * eos_txt = eos != LLAMA_TOKEN_NULL ? token_piece(sc->vocab, eos, &eos_len) : strdup("");
    const char * tmpl = sc->chat_template ? sc->chat_template : "";
    json_t * out = json_pack(
        "{s:{s:o, s:i}, s:i, s:s, s:s, s:{s:b, s:b}, s:b, s:b, s:b, s:b, s:s, s:{}, s:o, s:o, s:s, s:b}",
        "default_generation_settings",
            "params", server_slot_params_to_json(&defaults),
            "n_ctx",  sc->n_ctx_slot,
        "total_slots",      sc->n_slots,
        "model_alias",      sc->model_name ? sc->model_name : "",
        "model_path",       sc->params.model_path,
        "modalities",       "vision", 0, "audio", 0,
        "endpoint_slots",   (int) sc->params.endpoint_slots,
        "endpoint_props",   (int) sc->params.endpoint_props,
        "endpoint_metrics", (int) sc->params.endpoint_metrics,
        "webui",            0,
        "chat_template",    tmpl,
        "chat_template_caps",
        "bos_token",        sj_string_lossy(bos_txt, bos_txt ? bos_len : 0),
        "eos_token",        sj_string_lossy(eos_txt, eos_txt ? eos_len : 0),
        "build_info",       SERVER_BUILD_INFO,
        "is_sleeping",      0);
    free(bos_txt);
    free(eos_txt);
    res_json(res, out);
}

static void handle_props_change(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    if (!sc->params.endpoint_props) {
        res_err(res, "This server does not support changing global properties. Start it with `--props`",
                ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    json_t * body = parse_body(req, res);
    if (!body) {
        return;
    }
    // no property is changeable yet; llama.cpp answers success and ignores unknown ones
    json_decref(body);
    res_json(res, json_pack("{s:b}", "success", 1));
}

static void handle_tokenize(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    json_t * body = parse_body(req, res);
    if (!body) {
        return;
    }
    struct sj_err err;
    bool add_special = false, parse_special = true, with_pieces = false;
    if (!sj_get_bool(body, "add_special", &add_special, &err) ||
        !sj_get_bool(body, "parse_special", &parse_special, &err) ||
        !sj_get_bool(body, "with_pieces", &with_pieces, &err)) {
        json_decref(body);
        res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    struct token_vec toks = { 0 };
    const json_t * content = json_object_get(body, "content");
    if (content && !json_is_null(content) &&
        !tokenize_mixed(sc->vocab, content, add_special, parse_special, &toks, &err)) {
        json_decref(body);
        free(toks.data);
        res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    json_decref(body);

    json_t * arr = json_array();
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < toks.n; i++) {
        if (!with_pieces) {
            ok = json_array_append_new(arr, json_integer(toks.data[i])) == 0;
            continue;
        }
        size_t plen = 0;
        char * piece = token_piece(sc->vocab, toks.data[i], &plen);
        if (!piece) {
            ok = false;
            break;
        }
        json_t * pj;
        if (sj_is_valid_utf8(piece, plen)) {
            pj = json_stringn(piece, plen);
        } else {
            // a partial UTF-8 sequence (byte tokens): its bytes as numbers, as llama.cpp does
            pj = json_array();
            for (size_t k = 0; pj && k < plen; k++) {
                json_array_append_new(pj, json_integer((unsigned char) piece[k]));
            }
        }
        free(piece);
        ok = json_array_append_new(arr, json_pack("{s:i, s:o}", "id", toks.data[i], "piece", pj)) == 0;
    }
    free(toks.data);
    if (!ok) {
        json_decref(arr);
        res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    res_json(res, json_pack("{s:o}", "tokens", arr));
}

static void handle_detokenize(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    json_t * body = parse_body(req, res);
    if (!body) {
        return;
    }
    const json_t * tokens = json_object_get(body, "tokens");
    const int32_t n_vocab = llama_vocab_n_tokens(sc->vocab);
    char * text = NULL;
    size_t len = 0, cap = 0;
    char msg[256] = "";
    if (tokens && !json_is_null(tokens)) {
        if (!json_is_array(tokens)) {
            snprintf(msg, sizeof(msg), "\"tokens\" must be an array of token ids, got %s", sj_type_name(tokens));
        } else {
            size_t i;
            const json_t * el;
            json_array_foreach(tokens, i, el) {
                if (!json_is_integer(el)) {
                    snprintf(msg, sizeof(msg), "\"tokens\"[%zu] must be a token id, got %s", i, sj_type_name(el));
                    break;
                }
                const json_int_t id = json_integer_value(el);
                if (id < 0 || id >= n_vocab) {
                    snprintf(msg, sizeof(msg), "\"tokens\"[%zu]: token id %lld out of range [0, %d)", i,
                             (long long) id, n_vocab);
                    break;
                }
                size_t plen = 0;
                char * piece = token_piece(sc->vocab, (llama_token) id, &plen);
                if (!piece) {
                    snprintf(msg, sizeof(msg), "out of memory");
                    break;
                }
                if (len + plen + 1 > cap) {
                    size_t ncap = cap ? cap * 2 : 256;
                    while (ncap < len + plen + 1) {
                        ncap *= 2;
                    }
                    char * nt = realloc(text, ncap);
                    if (!nt) {
                        free(piece);
                        snprintf(msg, sizeof(msg), "out of memory");
                        break;
                    }
                    text = nt;
                    cap = ncap;
                }
                memcpy(text + len, piece, plen);
                len += plen;
                free(piece);
            }
        }
    }
    json_decref(body);
    if (msg[0]) {
        free(text);
        res_err(res, msg, strcmp(msg, "out of memory") == 0 ? ERROR_TYPE_SERVER : ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    json_t * content = sj_string_lossy(text ? text : "", len);
    free(text);
    res_json(res, json_pack("{s:o}", "content", content));
}

#ifdef LLAMA_SERVER_HAVE_CHAT
// messages -> llama_chat_message array; the strings point into msgs (or into *owned for joined parts)
static bool chat_messages(const json_t * msgs, struct llama_chat_message ** out, char *** owned, size_t * n,
                          struct sj_err * err) {
    *n = json_array_size(msgs);
    *out = calloc(*n ? *n : 1, sizeof(**out));
    *owned = calloc(*n ? *n : 1, sizeof(char *));
    if (!*out || !*owned) {
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return false;
    }
    size_t i;
    const json_t * m;
    json_array_foreach(msgs, i, m) {
        if (!json_is_object(m)) {
            snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu] must be an object, got %s", i, sj_type_name(m));
            return false;
        }
        const json_t * role = json_object_get(m, "role");
        const json_t * content = json_object_get(m, "content");
        if (!json_is_string(role)) {
            snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu].role must be a string", i);
            return false;
        }
        (*out)[i].role = json_string_value(role);
        if (!content || json_is_null(content)) {
            (*out)[i].content = "";
        } else if (json_is_string(content)) {
            (*out)[i].content = json_string_value(content);
        } else if (json_is_array(content)) {
            // OpenAI content parts: only text parts are supported; they are joined with newlines
            size_t total = 1, k;
            const json_t * part;
            json_array_foreach(content, k, part) {
                const json_t * type = json_object_get(part, "type");
                const json_t * text = json_object_get(part, "text");
                if (!json_is_object(part) || !json_is_string(type) || strcmp(json_string_value(type), "text") != 0 ||
                    !json_is_string(text)) {
                    snprintf(err->msg, sizeof(err->msg),
                             "\"messages\"[%zu].content[%zu] must be {\"type\":\"text\",\"text\":...}", i, k);
                    return false;
                }
                total += json_string_length(text) + 1;
            }
            char * joined = malloc(total);
            if (!joined) {
                snprintf(err->msg, sizeof(err->msg), "out of memory");
                return false;
            }
            size_t o = 0;
            json_array_foreach(content, k, part) {
                const json_t * text = json_object_get(part, "text");
                if (k > 0) {
                    joined[o++] = '\n';
                }
                memcpy(joined + o, json_string_value(text), json_string_length(text));
                o += json_string_length(text);
            }
            joined[o] = '\0';
            (*owned)[i] = joined;
            (*out)[i].content = joined;
        } else {
            snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu].content must be a string or an array, got %s", i,
                     sj_type_name(content));
            return false;
        }
    }
    return true;
}

// the formatted prompt (malloc'd) or NULL with err set
static char * apply_chat_template(const struct server_context * sc, const json_t * msgs, bool add_ass,
                                  struct sj_err * err) {
    struct llama_chat_message * chat = NULL;
    char ** owned = NULL;
    size_t n = 0;
    char * buf = NULL;
    if (chat_messages(msgs, &chat, &owned, &n, err)) {
        int32_t cap = 4096;
        buf = malloc((size_t) cap);
        int32_t r = buf ? llama_chat_apply_template(sc->chat_template, chat, n, add_ass, buf, cap) : -1;
        if (buf && r > cap) {
            char * nb = realloc(buf, (size_t) r + 1);
            if (nb) {
                buf = nb;
                cap = r + 1;
                r = llama_chat_apply_template(sc->chat_template, chat, n, add_ass, buf, cap);
            } else {
                r = -1;
            }
        }
        if (r < 0 || r >= cap) {
            free(buf);
            buf = NULL;
            snprintf(err->msg, sizeof(err->msg), "failed to apply the chat template");
        } else {
            buf[r] = '\0';
        }
    }
    for (size_t i = 0; owned && i < n; i++) {
        free(owned[i]);
    }
    free(owned);
    free(chat);
    return buf;
}
#endif

static void handle_apply_template(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    json_t * body = parse_body(req, res);
    if (!body) {
        return;
    }
    const json_t * msgs = json_object_get(body, "messages");
    if (!msgs || json_is_null(msgs)) {
        json_decref(body);
        res_err(res, "'messages' is required", ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    if (!json_is_array(msgs)) {
        char msg[128];
        snprintf(msg, sizeof(msg), "Expected 'messages' to be an array, got %s", sj_type_name(msgs));
        json_decref(body);
        res_err(res, msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    struct sj_err err;
    bool add_ass = true;
    if (!sj_get_bool(body, "add_generation_prompt", &add_ass, &err)) {
        json_decref(body);
        res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        return;
    }
#ifdef LLAMA_SERVER_HAVE_CHAT
    if (sc->has_chat) {
        char * prompt = apply_chat_template(sc, msgs, add_ass, &err);
        json_decref(body);
        if (!prompt) {
            res_err(res, err.msg, strcmp(err.msg, "failed to apply the chat template") == 0 ? ERROR_TYPE_SERVER
                                                                                          : ERROR_TYPE_INVALID_REQUEST);
            return;
        }
        json_t * pj = sj_string_lossy(prompt, strlen(prompt));
        free(prompt);
        res_json(res, json_pack("{s:o}", "prompt", pj));
        return;
    }
#endif
    (void) sc;
    json_decref(body);
    res_err(res, "chat templates are not available in this build", ERROR_TYPE_NOT_SUPPORTED);
}

// posts t to the inference thread and waits for it (the caller's reference is released): its result, with
// its status in *status; NULL (response set) when the server is shutting down
static json_t * run_task(struct server_context * sc, struct server_task * t, int * status,
                         struct server_http_res * res) {
    server_queue_post(&sc->queue, t); // on failure the task is completed without a result
    json_t * out = NULL;
    if (server_task_wait(t)) {
        *status = t->status;
        out = server_task_take_result(t);
    } else {
        res_err(res, "the server is shutting down", ERROR_TYPE_UNAVAILABLE);
    }
    server_task_release(t);
    return out;
}

// run_task, then the result as the JSON response with the task's status
static void respond_task(struct server_context * sc, struct server_task * t, struct server_http_res * res) {
    int status = 200;
    json_t * r = run_task(sc, t, &status, res);
    if (!r) {
        return;
    }
    char * out = sj_dumps(r);
    json_decref(r);
    if (!out) {
        res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    server_http_res_take_body(res, status, out);
}

// post a METRICS task and wait for the inference thread's snapshot; NULL (response set) on failure
static json_t * fetch_metrics(struct server_context * sc, bool reset_bucket, struct server_http_res * res) {
    struct server_task * t = server_task_new(SERVER_TASK_TYPE_METRICS);
    if (!t) {
        res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return NULL;
    }
    t->reset_bucket = reset_bucket;
    int status = 200;
    return run_task(sc, t, &status, res);
}

static void handle_slots(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    if (!sc->params.endpoint_slots) {
        res_err(res, "This server does not support slots endpoint. Start it with `--slots`", ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    json_t * m = fetch_metrics(sc, false, res);
    if (!m) {
        return;
    }
    const char * fail = server_http_req_query(req, "fail_on_no_slot");
    if (fail && *fail && json_integer_value(json_object_get(m, "idle")) == 0) {
        json_decref(m);
        res_err(res, "no slot available", ERROR_TYPE_UNAVAILABLE);
        return;
    }
    char * body = sj_dumps(json_object_get(m, "slots"));
    json_decref(m);
    if (!body) {
        res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    server_http_res_take_body(res, 200, body);
}

struct prom_buf {
    char * s;
    size_t len;
    size_t cap;
    bool   oom;
};

static void prom_add(struct prom_buf * b, const char * name, const char * type, const char * help, double value) {
    char line[512];
    int n;
    if (value == (double) (int64_t) value) {
        n = snprintf(line, sizeof(line), "# HELP llamacpp:%s %s\n# TYPE llamacpp:%s %s\nllamacpp:%s %lld\n",
                     name, help, name, type, name, (long long) value);
    } else {
        n = snprintf(line, sizeof(line), "# HELP llamacpp:%s %s\n# TYPE llamacpp:%s %s\nllamacpp:%s %.9g\n",
                     name, help, name, type, name, value);
    }
    if (n < 0 || (size_t) n >= sizeof(line) || b->oom) {
        b->oom = true;
        return;
    }
    if (b->len + (size_t) n + 1 > b->cap) {
        const size_t cap = (b->cap ? b->cap * 2 : 2048) + (size_t) n;
        char * ns = realloc(b->s, cap);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, line, (size_t) n + 1);
    b->len += (size_t) n;
}

static double jnum(const json_t * o, const char * key) {
    return json_number_value(json_object_get(o, key));
}

static void handle_metrics(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    struct server_context * sc = ud;
    if (!sc->params.endpoint_metrics) {
        res_err(res, "This server does not support metrics endpoint. Start it with `--metrics`",
                ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    json_t * m = fetch_metrics(sc, true, res);
    if (!m) {
        return;
    }
    const double n_prompt = jnum(m, "n_prompt_tokens_processed");
    const double t_prompt = jnum(m, "t_prompt_processing");
    const double n_gen    = jnum(m, "n_tokens_predicted");
    const double t_gen    = jnum(m, "t_tokens_generation");
    const double n_decode = jnum(m, "n_decode_total");
    const double n_busy   = jnum(m, "n_busy_slots_total");

    struct prom_buf b = { 0 };
    prom_add(&b, "prompt_tokens_total", "counter", "Number of prompt tokens processed.",
             jnum(m, "n_prompt_tokens_processed_total"));
    prom_add(&b, "prompt_seconds_total", "counter", "Prompt process time",
             jnum(m, "t_prompt_processing_total") / 1.e3);
    prom_add(&b, "tokens_predicted_total", "counter", "Number of generation tokens processed.",
             jnum(m, "n_tokens_predicted_total"));
    prom_add(&b, "tokens_predicted_seconds_total", "counter", "Predict process time",
             jnum(m, "t_tokens_generation_total") / 1.e3);
    prom_add(&b, "n_decode_total", "counter", "Total number of llama_decode() calls", n_decode);
    prom_add(&b, "n_tokens_max", "counter", "Largest observed n_tokens.", jnum(m, "n_tokens_max"));
    prom_add(&b, "n_busy_slots_per_decode", "counter", "Average number of busy slots per llama_decode() call",
             n_decode > 0 ? n_busy / n_decode : 0.0);
    prom_add(&b, "prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.",
             t_prompt > 0 ? 1.e3 / t_prompt * n_prompt : 0.0);
    prom_add(&b, "predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.",
             t_gen > 0 ? 1.e3 / t_gen * n_gen : 0.0);
    prom_add(&b, "requests_processing", "gauge", "Number of requests processing.", jnum(m, "processing"));
    prom_add(&b, "requests_deferred", "gauge", "Number of requests deferred.", jnum(m, "deferred"));

    char start[32];
    snprintf(start, sizeof(start), "%lld", (long long) json_integer_value(json_object_get(m, "t_start")));
    json_decref(m);
    if (b.oom) {
        free(b.s);
        res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    free(res->body);
    res->status       = 200;
    res->content_type = "text/plain; version=0.0.4";
    res->body         = b.s;
    res->body_len     = b.len;
    server_http_res_add_header(res, "Process-Start-Time-Unix", start);
}

//
// completions (part 2): request parsing on the HTTP threads, slots and continuous batching on the inference
// thread
//

enum { COMPL_MODE_NATIVE = 0, COMPL_MODE_OAI_COMPL = 1, COMPL_MODE_OAI_CHAT = 2 };

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

// request fields -> slot params; the same pure read runs on the HTTP thread (to answer 400) and on the
// inference thread (after the hand-over), so the task carries only the request JSON
static bool read_slot_params(const json_t * body, int mode, int n_vocab, struct server_slot_params * p,
                             struct sj_err * err) {
    *p = server_slot_params_default();
    int64_t iv;
    double  dv;
#define GET_I(key, field, lo, hi) do { iv = p->field; if (!sj_get_int(body, key, &iv, err)) return false; \
        if (iv < (lo) || iv > (hi)) { snprintf(err->msg, sizeof(err->msg), "\"%s\" must be in [%lld, %lld]", key, \
        (long long) (lo), (long long) (hi)); return false; } p->field = (int32_t) iv; } while (0)
#define GET_F(key, field) do { dv = p->field; if (!sj_get_float(body, key, &dv, err)) return false; \
        if (!isfinite(dv)) { snprintf(err->msg, sizeof(err->msg), "\"%s\" must be finite", key); return false; } \
        p->field = (float) dv; } while (0)
    if (mode != COMPL_MODE_NATIVE) {
        GET_I("max_tokens", n_predict, -1, INT32_MAX);
        GET_I("max_completion_tokens", n_predict, -1, INT32_MAX);
    }
    GET_I("n_predict", n_predict, -1, INT32_MAX);
    GET_I("top_k", top_k, INT32_MIN, INT32_MAX);
    // top-n log-probabilities are computed per token on the inference thread: keep the work bounded
    GET_I("n_probs", n_probs, 0, n_vocab < 100 ? n_vocab : 100);
    GET_I("repeat_last_n", repeat_last_n, -1, INT32_MAX);
    GET_I("min_keep", min_keep, 0, n_vocab);
    GET_F("temperature", temperature);
    GET_F("dynatemp_range", dynatemp_range);
    GET_F("dynatemp_exponent", dynatemp_exponent);
    GET_F("top_p", top_p);
    GET_F("min_p", min_p);
    GET_F("typical_p", typical_p);
    GET_F("repeat_penalty", repeat_penalty);
    GET_F("presence_penalty", presence_penalty);
    GET_F("frequency_penalty", frequency_penalty);
    if (p->repeat_penalty <= 0.0f) {
        snprintf(err->msg, sizeof(err->msg), "\"repeat_penalty\" must be > 0");
        return false;
    }
    iv = p->seed;
    if (!sj_get_int(body, "seed", &iv, err)) {
        return false;
    }
    p->seed = (uint32_t) iv; // -1 wraps to LLAMA_DEFAULT_SEED (random), as llama.cpp
    if (!sj_get_bool(body, "stream", &p->stream, err) || !sj_get_bool(body, "ignore_eos", &p->ignore_eos, err)) {
        return false;
    }
#undef GET_I
#undef GET_F
    const json_t * stop = json_object_get(body, "stop");
    if (stop && !json_is_null(stop)) {
        if (json_is_string(stop) && mode != COMPL_MODE_NATIVE) {
            // OpenAI allows one string
        } else if (!json_is_array(stop) || json_array_size(stop) > SERVER_MAX_STOP_WORDS) {
            snprintf(err->msg, sizeof(err->msg), "\"stop\" must be an array of at most %d strings",
                     SERVER_MAX_STOP_WORDS);
            return false;
        } else {
            size_t i;
            const json_t * w;
            json_array_foreach(stop, i, w) {
                if (!json_is_string(w)) {
                    snprintf(err->msg, sizeof(err->msg), "\"stop\"[%zu] must be a string, got %s", i, sj_type_name(w));
                    return false;
                }
            }
        }
    }
    const json_t * lb = json_object_get(body, "logit_bias");
    if (lb && !json_is_null(lb) && !json_is_array(lb) && !json_is_object(lb)) {
        snprintf(err->msg, sizeof(err->msg), "\"logit_bias\" must be an array or an object, got %s", sj_type_name(lb));
        return false;
    }
    const json_t * smp = json_object_get(body, "samplers");
    if (smp && !json_is_null(smp) && !json_is_array(smp)) {
        snprintf(err->msg, sizeof(err->msg), "\"samplers\" must be an array of names, got %s", sj_type_name(smp));
        return false;
    }
    return true;
}

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
        nt = tokenize_text(vocab, json_string_value(key), json_string_length(key), false, false, &toks);
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

// the per-request chain (llama.cpp's default order: penalties, top_k, typ_p, top_p, min_p, temperature, dist);
// to be swapped for common_sampler once it lands
static struct llama_sampler * build_sampler(const struct server_context * sc, const json_t * body,
                                            const struct server_slot_params * p) {
    const int n_vocab = llama_vocab_n_tokens(sc->vocab);
    struct llama_sampler * ch = llama_sampler_chain_init(llama_sampler_chain_default_params());
    if (!ch) {
        return NULL;
    }
    const json_t * lb = json_object_get(body, "logit_bias");
    llama_logit_bias * biases = NULL;
    int nb = 0, cb = 0;
    if (json_is_array(lb)) {
        size_t i;
        const json_t * el;
        json_array_foreach(lb, i, el) {
            if (json_is_array(el) && json_array_size(el) == 2) {
                add_bias(sc->vocab, n_vocab, json_array_get(el, 0), json_array_get(el, 1), &biases, &nb, &cb);
            }
        }
    } else if (json_is_object(lb)) {
        const char * k;
        const json_t * v;
        json_object_foreach((json_t *) lb, k, v) {
            char * end = NULL;
            const long id = strtol(k, &end, 10);
            json_t * key = (*k && end && *end == '\0') ? json_integer(id) : json_string(k);
            if (key) {
                add_bias(sc->vocab, n_vocab, key, v, &biases, &nb, &cb);
                json_decref(key);
            }
        }
    }
    if (p->ignore_eos) {
        // as llama.cpp: ignore_eos is a -inf bias on every end-of-generation token
        for (llama_token t = 0; t < n_vocab; t++) {
            if (llama_vocab_is_eog(sc->vocab, t)) {
                bias_push(&biases, &nb, &cb, t, -INFINITY);
            }
        }
    }
    if (nb > 0) {
        llama_sampler_chain_add(ch, llama_sampler_init_logit_bias(n_vocab, nb, biases));
    }
    free(biases);
    static const char * const def_order[] = { "penalties", "top_k", "typ_p", "top_p", "min_p", "temperature" };
    const json_t * smp = json_object_get(body, "samplers");
    const size_t n_order = json_is_array(smp) ? json_array_size(smp) : sizeof(def_order) / sizeof(def_order[0]);
    const size_t min_keep = (size_t) (p->min_keep > 0 ? p->min_keep : 0);
    for (size_t i = 0; i < n_order; i++) {
        const char * name = json_is_array(smp) ? json_string_value(json_array_get(smp, i)) : def_order[i];
        if (!name) {
            continue;
        }
        if (strcmp(name, "penalties") == 0) {
            llama_sampler_chain_add(ch, llama_sampler_init_penalties(n_vocab, p->repeat_last_n, p->repeat_penalty,
                                                                     p->frequency_penalty, p->presence_penalty));
        } else if (strcmp(name, "top_k") == 0) {
            llama_sampler_chain_add(ch, llama_sampler_init_top_k(p->top_k));
        } else if (strcmp(name, "typ_p") == 0 || strcmp(name, "typical_p") == 0) {
            llama_sampler_chain_add(ch, llama_sampler_init_typical(p->typical_p, min_keep));
        } else if (strcmp(name, "top_p") == 0) {
            llama_sampler_chain_add(ch, llama_sampler_init_top_p(p->top_p, min_keep));
        } else if (strcmp(name, "min_p") == 0) {
            llama_sampler_chain_add(ch, llama_sampler_init_min_p(p->min_p, min_keep));
        } else if (strcmp(name, "temperature") == 0 && p->temperature > 0.0f) {
            llama_sampler_chain_add(ch, llama_sampler_init_temp_ext(p->temperature, p->dynatemp_range,
                                                                    p->dynatemp_exponent));
        }
    }
    // temperature <= 0 is greedy decoding; otherwise dist draws, also when "samplers" leaves temperature out
    // (as llama.cpp's chain, which always ends with dist)
    llama_sampler_chain_add(ch, p->temperature > 0.0f ? llama_sampler_init_dist(p->seed) : llama_sampler_init_greedy());
    return ch;
}

static bool sb_add(char ** s, size_t * n, size_t * cap, const char * d, size_t len) {
    if (len + 1 > *cap - *n || !*s) {
        size_t nc = *cap ? *cap : 256;
        while (nc - *n < len + 1) {
            nc *= 2;
        }
        char * ns = realloc(*s, nc);
        if (!ns) {
            return false;
        }
        *s = ns;
        *cap = nc;
    }
    memcpy(*s + *n, d, len);
    *n += len;
    (*s)[*n] = '\0';
    return true;
}

// HTTP thread: validate, build the prompt, tokenize; on error answer and return NULL
static struct server_task * make_completion_task(struct server_context * sc, const struct server_http_req * req,
                                                 struct server_http_res * res, int mode) {
    json_t * body = parse_body(req, res);
    if (!body) {
        return NULL;
    }
    struct sj_err err = { { 0 } };
    struct server_slot_params p;
    const int n_vocab = llama_vocab_n_tokens(sc->vocab);
    if (!read_slot_params(body, mode, n_vocab, &p, &err)) {
        res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        json_decref(body);
        return NULL;
    }
    bool b = true;
    if (!sj_get_bool(body, "cache_prompt", &b, &err) || !sj_get_bool(body, "return_tokens", &b, &err)) {
        res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        json_decref(body);
        return NULL;
    }
    int64_t id_slot = -1;
    if (!sj_get_int(body, "id_slot", &id_slot, &err) || id_slot < -1 || id_slot >= sc->n_slots) {
        if (!err.msg[0]) {
            snprintf(err.msg, sizeof(err.msg), "\"id_slot\" must be -1 or a slot id below %d", sc->n_slots);
        }
        res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
        json_decref(body);
        return NULL;
    }
    struct token_vec toks = { 0 };
    if (mode == COMPL_MODE_OAI_CHAT) {
#ifdef LLAMA_SERVER_HAVE_CHAT
        const json_t * msgs = json_object_get(body, "messages");
        if (!json_is_array(msgs)) {
            res_err(res, "\"messages\" must be an array", ERROR_TYPE_INVALID_REQUEST);
            json_decref(body);
            return NULL;
        }
        char * text = apply_chat_template(sc, msgs, true, &err);
        if (!text) {
            res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
            json_decref(body);
            return NULL;
        }
        json_t * js = json_string(text);
        free(text);
        const bool ok = js && tokenize_mixed(sc->vocab, js, true, true, &toks, &err);
        json_decref(js);
        if (!ok) {
            free(toks.data);
            res_err(res, err.msg[0] ? err.msg : "out of memory", ERROR_TYPE_INVALID_REQUEST);
            json_decref(body);
            return NULL;
        }
#else
        res_err(res, "chat templates are not available in this build", ERROR_TYPE_NOT_SUPPORTED);
        json_decref(body);
        return NULL;
#endif
    } else {
        const json_t * prompt = json_object_get(body, "prompt");
        if (!prompt) {
            res_err(res, "\"prompt\" is required", ERROR_TYPE_INVALID_REQUEST);
            json_decref(body);
            return NULL;
        }
        // OpenAI clients send one prompt as a one-element array
        if (json_is_array(prompt) && json_array_size(prompt) == 1 &&
            (json_is_string(json_array_get(prompt, 0)) || json_is_array(json_array_get(prompt, 0)))) {
            prompt = json_array_get(prompt, 0);
        }
        if (!tokenize_mixed(sc->vocab, prompt, true, true, &toks, &err)) {
            free(toks.data);
            res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
            json_decref(body);
            return NULL;
        }
    }
    if (toks.n == 0) {
        free(toks.data);
        res_err(res, "the prompt is empty", ERROR_TYPE_INVALID_REQUEST);
        json_decref(body);
        return NULL;
    }
    if (toks.n >= (size_t) sc->n_ctx_slot) {
        int status = 400;
        char * eb = server_error_body_exceed_context((int) (toks.n > INT_MAX ? INT_MAX : toks.n), sc->n_ctx_slot,
                                                     &status);
        server_http_res_take_body(res, status, eb);
        free(toks.data);
        json_decref(body);
        return NULL;
    }
    struct server_task * t = server_task_new(SERVER_TASK_TYPE_COMPLETION);
    if (!t) {
        free(toks.data);
        json_decref(body);
        res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return NULL;
    }
    json_object_set_new(body, "__mode", json_integer(mode));
    t->data     = body;
    t->id_slot  = (int) id_slot;
    t->tokens   = toks.data;
    t->n_tokens = toks.n;
    return t;
}

static void handle_completion_mode(const struct server_http_req * req, struct server_http_res * res,
                                   struct server_context * sc, int mode) {
    if (sc->params.embedding) {
        res_err(res, "This server does not support completions. Start it without `--embeddings`",
                ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    struct server_task * t = make_completion_task(sc, req, res, mode);
    if (!t) {
        return;
    }
    const json_t * st = json_object_get(t->data, "stream");
    const bool stream = json_is_true(st);
    if (stream) {
        struct server_http_stream * s = server_http_stream_create(sc->http);
        if (!s) {
            server_task_release(t);
            server_task_release(t);
            res_err(res, "out of memory", ERROR_TYPE_SERVER);
            return;
        }
        res->stream       = s;
        res->content_type = "text/event-stream";
        t->stream         = s; // the producer's reference travels with the task
        server_queue_post(&sc->queue, t); // on failure the queue dropped its reference (which ended the stream)
        server_task_release(t);
        return;
    }
    respond_task(sc, t, res);
}

static void handle_completion(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    handle_completion_mode(req, res, ud, COMPL_MODE_NATIVE);
}
static void handle_oai_completion(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    handle_completion_mode(req, res, ud, COMPL_MODE_OAI_COMPL);
}
static void handle_oai_chat(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    handle_completion_mode(req, res, ud, COMPL_MODE_OAI_CHAT);
}

//
// inference thread: slots
//

static bool cache_push(struct server_slot * s, llama_token t) {
    if (s->n_cache == s->cap_cache) {
        const int nc = s->cap_cache ? s->cap_cache * 2 : 256;
        llama_token * n = realloc(s->cache, (size_t) nc * sizeof(llama_token));
        if (!n) {
            return false;
        }
        s->cache = n;
        s->cap_cache = nc;
    }
    s->cache[s->n_cache++] = t;
    return true;
}

static const char * finish_reason(const struct server_slot * s) {
    return (s->stop_type && strcmp(s->stop_type, "limit") == 0) ? "length" : "stop";
}

static json_t * timings_json(const struct server_slot * s) {
    const int n_eval = s->n_prompt - s->n_prompt_reused;
    return json_pack("{s:i, s:i, s:f, s:f, s:f, s:i, s:f, s:f, s:f, s:i, s:i}",
                     "cache_n", s->n_prompt_reused,
                     "prompt_n", n_eval,
                     "prompt_ms", s->t_prompt_ms,
                     "prompt_per_token_ms", n_eval > 0 ? s->t_prompt_ms / n_eval : 0.0,
                     "prompt_per_second", s->t_prompt_ms > 0 ? 1e3 * n_eval / s->t_prompt_ms : 0.0,
                     "predicted_n", s->n_decoded,
                     "predicted_ms", s->t_gen_ms,
                     "predicted_per_token_ms", s->n_decoded > 0 ? s->t_gen_ms / s->n_decoded : 0.0,
                     "predicted_per_second", s->t_gen_ms > 0 ? 1e3 * s->n_decoded / s->t_gen_ms : 0.0,
                     "draft_n", 0,
                     "draft_n_accepted", 0);
}

static json_t * usage_json(const struct server_slot * s) {
    return json_pack("{s:i, s:i, s:i}", "completion_tokens", s->n_decoded, "prompt_tokens", s->n_prompt,
                     "total_tokens", s->n_decoded + s->n_prompt);
}

static json_t * oai_base(const struct server_context * sc, const struct server_slot * s, const char * object) {
    return json_pack("{s:I, s:s, s:s, s:s, s:s}", "created", (json_int_t) s->created, "id", s->oai_id,
                     "model", sc->model_name, "system_fingerprint", SERVER_BUILD_INFO, "object", object);
}

// the final (non-streamed) result in the request's shape
static json_t * final_json(const struct server_context * sc, const struct server_slot * s) {
    json_t * content = sj_string_lossy(s->text ? s->text : "", s->n_text);
    if (s->mode == COMPL_MODE_OAI_CHAT) {
        json_t * o = oai_base(sc, s, "chat.completion");
        json_object_set_new(o, "choices", json_pack("[{s:s, s:i, s:{s:s, s:o}}]", "finish_reason", finish_reason(s),
                                                    "index", 0, "message", "role", "assistant", "content", content));
        json_object_set_new(o, "usage", usage_json(s));
        json_object_set_new(o, "timings", timings_json(s));
        return o;
    }
    if (s->mode == COMPL_MODE_OAI_COMPL) {
        json_t * o = oai_base(sc, s, "text_completion");
        json_object_set_new(o, "choices", json_pack("[{s:o, s:i, s:n, s:s}]", "text", content, "index", 0,
                                                    "logprobs", "finish_reason", finish_reason(s)));
        json_object_set_new(o, "usage", usage_json(s));
        json_object_set_new(o, "timings", timings_json(s));
        return o;
    }
    json_t * o = json_pack("{s:o, s:i, s:i, s:b, s:s, s:i, s:i, s:o, s:b, s:b, s:s, s:s, s:i, s:o}",
                           "content", content,
                           "id_slot", s->id,
                           "index", 0,
                           "stop", 1,
                           "model", sc->model_name,
                           "tokens_predicted", s->n_decoded,
                           "tokens_evaluated", s->n_prompt,
                           "generation_settings", server_slot_params_to_json(&s->params),
                           "has_new_line", (int) s->has_new_line,
                           "truncated", 0,
                           "stop_type", s->stop_type ? s->stop_type : "none",
                           "stopping_word", s->stopping_word ? s->stopping_word : "",
                           "tokens_cached", s->n_cache,
                           "timings", timings_json(s));
    json_t * gs = json_object_get(o, "generation_settings");
    const json_t * stop = json_object_get(s->task->data, "stop");
    if (gs && json_is_array(stop)) {
        json_object_set_new(gs, "stop", json_deep_copy(stop));
    }
    json_object_set(o, "tokens", s->return_tokens ? s->gen_tokens : json_array());
    if (!s->return_tokens) {
        json_decref(json_object_get(o, "tokens"));
    }
    if (s->params.n_probs > 0) {
        json_object_set(o, "completion_probabilities", s->probs);
    }
    return o;
}

static bool stream_send(struct server_slot * s, json_t * chunk) {
    char * d = chunk ? sj_dumps(chunk) : NULL;
    json_decref(chunk);
    if (!d) {
        return false;
    }
    const size_t n = strlen(d);
    bool ok = server_http_stream_write(s->task->stream, "data: ", 6) &&
              server_http_stream_write(s->task->stream, d, n) &&
              server_http_stream_write(s->task->stream, "\n\n", 2);
    free(d);
    return ok;
}

// a streamed partial: delta text (and, native, the tokens / probabilities of this step)
static bool stream_partial(const struct server_context * sc, struct server_slot * s, const char * d, size_t n,
                           json_t * toks, json_t * probs) {
    json_t * c;
    if (s->mode == COMPL_MODE_OAI_CHAT) {
        c = oai_base(sc, s, "chat.completion.chunk");
        json_object_set_new(c, "choices", json_pack("[{s:n, s:i, s:{s:o}}]", "finish_reason", "index", 0,
                                                    "delta", "content", sj_string_lossy(d, n)));
        json_decref(toks);
        json_decref(probs);
    } else if (s->mode == COMPL_MODE_OAI_COMPL) {
        c = oai_base(sc, s, "text_completion");
        json_object_set_new(c, "choices", json_pack("[{s:o, s:i, s:n, s:n}]", "text", sj_string_lossy(d, n),
                                                    "index", 0, "logprobs", "finish_reason"));
        json_decref(toks);
        json_decref(probs);
    } else {
        c = json_pack("{s:o, s:o, s:b, s:i, s:i, s:i, s:i}", "content", sj_string_lossy(d, n), "tokens", toks,
                      "stop", 0, "id_slot", s->id, "index", 0, "tokens_predicted", s->n_decoded,
                      "tokens_evaluated", s->n_prompt);
        if (c && probs) {
            json_object_set_new(c, "completion_probabilities", probs);
        } else {
            json_decref(probs);
        }
    }
    return stream_send(s, c);
}

static void slot_release(struct server_context * sc, struct server_slot * s) {
    struct server_metrics * m = &sc->metrics;
    m->n_tokens_predicted_total += (uint64_t) s->n_decoded;
    m->n_tokens_predicted       += (uint64_t) s->n_decoded;
    m->t_tokens_generation_total += (uint64_t) s->t_gen_ms;
    m->t_tokens_generation       += (uint64_t) s->t_gen_ms;
    if (s->smpl) {
        llama_sampler_free(s->smpl);
        s->smpl = NULL;
    }
    if (s->task) {
        if (s->task->stream) {
            server_http_stream_end(s->task->stream);
            s->task->stream = NULL;
        }
        server_task_complete(s->task, NULL, 500); // no-op when already completed
        server_task_release(s->task);
        s->task = NULL;
    }
    json_decref(s->gen_tokens);
    json_decref(s->probs);
    s->gen_tokens = s->probs = NULL;
    free(s->text);
    s->text = NULL;
    s->n_text = s->cap_text = s->n_sent = 0;
    free(s->stopping_word);
    s->stopping_word = NULL;
    s->prompt   = NULL;
    s->state    = SLOT_STATE_IDLE;
    s->id_task  = -1;
    s->i_batch  = -1;
}

static void slot_finish(struct server_context * sc, struct server_slot * s) {
    s->has_next_token = false;
    if (s->task->stream) {
        // the unsent rest (held back while it could have begun a stop string), then the final chunk
        bool ok = true;
        if (s->n_sent < s->n_text) {
            ok = stream_partial(sc, s, s->text + s->n_sent, s->n_text - s->n_sent, json_array(), NULL);
            s->n_sent = s->n_text;
        }
        if (ok) {
            if (s->mode == COMPL_MODE_NATIVE) {
                json_t * f = final_json(sc, s);
                json_object_set_new(f, "content", json_string(""));
                ok = stream_send(s, f);
            } else {
                json_t * c = oai_base(sc, s, s->mode == COMPL_MODE_OAI_CHAT ? "chat.completion.chunk"
                                                                             : "text_completion");
                if (s->mode == COMPL_MODE_OAI_CHAT) {
                    json_object_set_new(c, "choices", json_pack("[{s:s, s:i, s:{}}]", "finish_reason",
                                                                finish_reason(s), "index", 0, "delta"));
                } else {
                    json_object_set_new(c, "choices", json_pack("[{s:s, s:i, s:n, s:s}]", "text", "", "index", 0,
                                                                "logprobs", "finish_reason", finish_reason(s)));
                }
                json_object_set_new(c, "usage", usage_json(s));
                json_object_set_new(c, "timings", timings_json(s));
                ok = stream_send(s, c) && server_http_stream_write(s->task->stream, "data: [DONE]\n\n", 14);
            }
        }
        (void) ok;
    } else {
        json_t * r = final_json(sc, s);
        server_task_complete(s->task, r, r ? 200 : 500);
    }
    slot_release(sc, s);
}

static void task_fail(struct server_task * t, const char * msg, enum server_error_type type) {
    if (t->stream) {
        json_t * e = json_pack("{s:o}", "error", server_error_object(msg, type));
        char * d = e ? sj_dumps(e) : NULL;
        json_decref(e);
        if (d) {
            server_http_stream_write(t->stream, "error: ", 7);
            server_http_stream_write(t->stream, d, strlen(d));
            server_http_stream_write(t->stream, "\n\n", 2);
            free(d);
        }
        server_http_stream_end(t->stream);
        t->stream = NULL;
        server_task_complete(t, NULL, 500);
    } else {
        server_task_complete(t, json_pack("{s:o}", "error", server_error_object(msg, type)),
                             server_error_status(type));
    }
}

// a slot for the task: the requested one, else the idle slot with the longest common prefix (cache reuse),
// else NULL (the task waits)
static struct server_slot * pick_slot(struct server_context * sc, const struct server_task * t) {
    if (t->id_slot >= 0) {
        struct server_slot * s = &sc->slots[t->id_slot];
        return s->state == SLOT_STATE_IDLE ? s : NULL;
    }
    struct server_slot * best = NULL;
    int best_lcp = -1;
    for (int i = 0; i < sc->n_slots; i++) {
        struct server_slot * s = &sc->slots[i];
        if (s->state != SLOT_STATE_IDLE) {
            continue;
        }
        int lcp = 0;
        while (lcp < s->n_cache && (size_t) lcp < t->n_tokens && s->cache[lcp] == t->tokens[lcp]) {
            lcp++;
        }
        if (lcp > best_lcp) {
            best_lcp = lcp;
            best = s;
        }
    }
    return best;
}

// false: the task was answered (error) and released
static bool slot_launch(struct server_context * sc, struct server_slot * s, struct server_task * t) {
    const json_t * body = t->data;
    struct sj_err err = { { 0 } };
    const int mode = (int) json_integer_value(json_object_get(body, "__mode"));
    if (!read_slot_params(body, mode, llama_vocab_n_tokens(sc->vocab), &s->params, &err)) {
        task_fail(t, err.msg, ERROR_TYPE_INVALID_REQUEST);
        server_task_release(t);
        return false;
    }
    s->smpl = build_sampler(sc, body, &s->params);
    if (!s->smpl) {
        task_fail(t, "failed to create the sampler", ERROR_TYPE_SERVER);
        server_task_release(t);
        return false;
    }
    s->params.stream = t->stream != NULL;
    s->task = t;
    s->id_task = t->id;
    s->mode = mode;
    bool b = true;
    sj_get_bool(body, "cache_prompt", &b, &err);
    s->cache_prompt = b;
    b = false;
    sj_get_bool(body, "return_tokens", &b, &err);
    s->return_tokens = b;
    s->prompt   = t->tokens;
    s->n_prompt = (int) t->n_tokens;
    s->n_decoded = 0;
    s->n_remain = s->params.n_predict;
    s->has_next_token = true;
    s->has_new_line = false;
    s->stop_type = NULL;
    s->gen_tokens = json_array();
    s->probs = json_array();
    s->created = (int64_t) time(NULL);
    snprintf(s->oai_id, sizeof(s->oai_id), "chatcmpl-%08x%08x", (unsigned) rand(), (unsigned) t->id);
    s->t_prompt_ms = s->t_gen_ms = 0;
    s->t_start_prompt = now_us();

    // reuse the longest common prefix of what this sequence holds; at least one prompt token is evaluated so
    // there are logits to sample from
    int lcp = 0;
    if (s->cache_prompt) {
        while (lcp < s->n_cache && lcp < s->n_prompt && s->cache[lcp] == s->prompt[lcp]) {
            lcp++;
        }
        if (lcp == s->n_prompt) {
            lcp--;
        }
    }
    if (!llama_memory_seq_rm(llama_get_memory(sc->ctx), s->id, lcp, -1)) {
        lcp = 0;
        llama_memory_seq_rm(llama_get_memory(sc->ctx), s->id, -1, -1);
    }
    s->n_cache = lcp;
    s->n_prompt_done = lcp;
    s->n_prompt_reused = lcp;
    s->i_batch = -1;
    s->state = SLOT_STATE_PROCESSING_PROMPT;
    return true;
}

// is the tail of text[0..n) a (proper) beginning of a stop word? returns the length to hold back
static size_t partial_stop(const json_t * stop, const char * text, size_t n) {
    size_t hold = 0;
    size_t i;
    const json_t * w;
    json_array_foreach(stop, i, w) {
        const char * ws = json_string_value(w);
        const size_t wl = json_string_length(w);
        for (size_t k = wl > 1 ? wl - 1 : 0; k > hold; k--) {
            if (k <= n && memcmp(text + n - k, ws, k) == 0) {
                hold = k;
                break;
            }
        }
    }
    return hold;
}

// bytes at the end of text that are an incomplete UTF-8 sequence
static size_t utf8_incomplete(const char * text, size_t n) {
    for (size_t k = 1; k <= 4 && k <= n; k++) {
        const unsigned char c = (unsigned char) text[n - k];
        if ((c & 0xC0) == 0x80) {
            continue;
        }
        size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        return need > k ? k : 0;
    }
    return 0;
}

static json_t * probs_json(const struct server_context * sc, struct server_slot * s, llama_token tok, int idx) {
    const float * logits = llama_get_logits_ith(sc->ctx, idx);
    const int n_vocab = llama_vocab_n_tokens(sc->vocab);
    if (!logits) {
        return NULL;
    }
    float mx = -INFINITY;
    for (int i = 0; i < n_vocab; i++) {
        mx = logits[i] > mx ? logits[i] : mx;
    }
    double sum = 0;
    for (int i = 0; i < n_vocab; i++) {
        sum += exp((double) (logits[i] - mx));
    }
    const double lse = mx + log(sum);
    const int k = s->params.n_probs;
    int * top = malloc((size_t) k * sizeof(int));
    if (!top) {
        return NULL;
    }
    // partial selection: n_probs is small next to the vocabulary
    int nt = 0;
    for (int i = 0; i < n_vocab; i++) {
        if (nt < k || logits[i] > logits[top[nt - 1]]) {
            int j = nt < k ? nt++ : nt - 1;
            while (j > 0 && logits[top[j - 1]] < logits[i]) {
                top[j] = top[j - 1];
                j--;
            }
            top[j] = i;
        }
    }
    json_t * tl = json_array();
    for (int i = 0; i < nt; i++) {
        size_t pl = 0;
        char * piece = token_piece(sc->vocab, top[i], &pl);
        json_array_append_new(tl, json_pack("{s:i, s:o, s:f}", "id", top[i], "token",
                                            sj_string_lossy(piece ? piece : "", piece ? pl : 0),
                                            "logprob", (double) logits[top[i]] - lse));
        free(piece);
    }
    free(top);
    size_t pl = 0;
    char * piece = token_piece(sc->vocab, tok, &pl);
    json_t * o = json_pack("{s:i, s:o, s:f, s:o}", "id", tok, "token",
                           sj_string_lossy(piece ? piece : "", piece ? pl : 0), "logprob",
                           (double) logits[tok] - lse, "top_logprobs", tl);
    free(piece);
    return o;
}

// one sampled token: text, stop conditions, streaming
static void slot_on_token(struct server_context * sc, struct server_slot * s, llama_token tok) {
    s->n_decoded++;
    if (s->n_remain > 0) {
        s->n_remain--;
    }
    json_t * pj = s->params.n_probs > 0 ? probs_json(sc, s, tok, s->i_batch) : NULL;
    if (llama_vocab_is_eog(sc->vocab, tok) && !s->params.ignore_eos) {
        s->stop_type = "eos";
        json_decref(pj);
        slot_finish(sc, s);
        return;
    }
    if (pj) {
        json_array_append(s->probs, pj);
    }
    json_array_append_new(s->gen_tokens, json_integer(tok));
    size_t pl = 0;
    char * piece = token_piece(sc->vocab, tok, &pl);
    const size_t old = s->n_text;
    if (!piece || !sb_add(&s->text, &s->n_text, &s->cap_text, piece, pl)) {
        free(piece);
        json_decref(pj);
        task_fail(s->task, "out of memory", ERROR_TYPE_SERVER);
        slot_release(sc, s);
        return;
    }
    free(piece);
    if (memchr(s->text + old, '\n', pl)) {
        s->has_new_line = true;
    }
    // a full stop string ends the generation; the text is cut before it
    const json_t * stop = json_object_get(s->task->data, "stop");
    json_t * stop_arr = NULL;
    if (json_is_string(stop)) {
        stop_arr = json_pack("[O]", stop);
        stop = stop_arr;
    }
    if (json_is_array(stop)) {
        // a stop word may have begun in earlier pieces
        size_t max_wl = 0;
        size_t wi;
        const json_t * ww;
        json_array_foreach(stop, wi, ww) {
            max_wl = json_string_length(ww) > max_wl ? json_string_length(ww) : max_wl;
        }
        const size_t from = old > max_wl ? old - max_wl : 0;
        size_t best = SIZE_MAX;
        const char * best_w = NULL;
        size_t i;
        const json_t * w;
        json_array_foreach(stop, i, w) {
            const size_t wl = json_string_length(w);
            if (wl == 0) {
                continue;
            }
            const char * f = memmem(s->text + from, s->n_text - from, json_string_value(w), wl);
            if (f && (size_t) (f - s->text) < best) {
                best = (size_t) (f - s->text);
                best_w = json_string_value(w);
            }
        }
        if (best_w) {
            s->n_text = best < s->n_sent ? s->n_sent : best;
            s->text[s->n_text] = '\0';
            s->stop_type = "word";
            s->stopping_word = strdup(best_w);
            json_decref(stop_arr);
            json_decref(pj);
            slot_finish(sc, s);
            return;
        }
    }
    if (s->task->stream) {
        size_t hold = json_is_array(stop) ? partial_stop(stop, s->text, s->n_text) : 0;
        const size_t inc = utf8_incomplete(s->text, s->n_text);
        hold = hold > inc ? hold : inc;
        const size_t upto = s->n_text - hold > s->n_sent ? s->n_text - hold : s->n_sent;
        json_t * tk = json_array();
        json_array_append_new(tk, json_integer(tok));
        json_t * parr = NULL;
        if (pj) {
            parr = json_array();
            json_array_append(parr, pj);
        }
        if (!stream_partial(sc, s, s->text + s->n_sent, upto - s->n_sent, tk, parr)) {
            json_decref(stop_arr);
            json_decref(pj);
            slot_release(sc, s); // the client went away
            return;
        }
        s->n_sent = upto;
    }
    json_decref(stop_arr);
    json_decref(pj);
    if (s->params.n_predict >= 0 && s->n_decoded >= s->params.n_predict) {
        s->stop_type = "limit";
        slot_finish(sc, s);
        return;
    }
    if (s->n_cache + 1 >= s->n_ctx) {
        // the slot's context is full and there is no context shift
        s->stop_type = "limit";
        slot_finish(sc, s);
        return;
    }
    s->next_tok = tok;
    s->state = SLOT_STATE_GENERATING;
}

static void queue_deferred(struct server_context * sc, struct server_task * t) {
    t->next = NULL;
    if (sc->deferred_tail) {
        sc->deferred_tail->next = t;
    } else {
        sc->deferred_head = t;
    }
    sc->deferred_tail = t;
}

// assign waiting tasks to free slots, in arrival order
static void assign_deferred(struct server_context * sc) {
    struct server_task * prev = NULL, * t = sc->deferred_head;
    while (t) {
        struct server_task * next = t->next;
        struct server_slot * s = pick_slot(sc, t);
        if (s) {
            if (prev) {
                prev->next = next;
            } else {
                sc->deferred_head = next;
            }
            if (sc->deferred_tail == t) {
                sc->deferred_tail = prev;
            }
            t->next = NULL;
            slot_launch(sc, s, t);
        } else {
            prev = t;
        }
        t = next;
    }
}

// one step: every generating slot's last token plus prompt chunks up to n_batch, one llama_decode
static void inference_step(struct server_context * sc) {
    struct llama_batch * b = &sc->batch;
    b->n_tokens = 0;
    // a client that disconnected frees its slot before the next decode
    for (int i = 0; i < sc->n_slots; i++) {
        struct server_slot * s = &sc->slots[i];
        if (s->state != SLOT_STATE_IDLE && s->task && s->task->stream && server_http_stream_cancelled(s->task->stream)) {
            slot_release(sc, s);
        }
    }
    for (int i = 0; i < sc->n_slots; i++) {
        struct server_slot * s = &sc->slots[i];
        s->i_batch = -1;
        if (s->state != SLOT_STATE_GENERATING || b->n_tokens >= sc->n_batch) {
            continue;
        }
        const int k = b->n_tokens++;
        b->token[k] = s->next_tok;
        b->pos[k] = s->n_cache;
        b->n_seq_id[k] = 1;
        b->seq_id[k][0] = s->id;
        b->logits[k] = 1;
        s->i_batch = k;
        cache_push(s, s->next_tok);
    }
    for (int i = 0; i < sc->n_slots && b->n_tokens < sc->n_batch; i++) {
        struct server_slot * s = &sc->slots[i];
        if (s->state != SLOT_STATE_PROCESSING_PROMPT) {
            continue;
        }
        while (s->n_prompt_done < s->n_prompt && b->n_tokens < sc->n_batch) {
            const int k = b->n_tokens++;
            b->token[k] = s->prompt[s->n_prompt_done];
            b->pos[k] = s->n_cache;
            b->n_seq_id[k] = 1;
            b->seq_id[k][0] = s->id;
            b->logits[k] = s->n_prompt_done == s->n_prompt - 1;
            if (b->logits[k]) {
                s->i_batch = k;
            }
            cache_push(s, s->prompt[s->n_prompt_done]);
            s->n_prompt_done++;
        }
    }
    if (b->n_tokens == 0) {
        return;
    }
    const int64_t t0 = now_us();
    const int32_t rc = llama_decode(sc->ctx, *b);
    const int64_t t1 = now_us();
    sc->metrics.n_decode_total++;
    if ((uint64_t) b->n_tokens > sc->metrics.n_tokens_max) {
        sc->metrics.n_tokens_max = (uint64_t) b->n_tokens;
    }
    if (rc != 0) {
        SRV_ERR("%s: llama_decode failed (%d) for a batch of %d tokens\n", __func__, rc, b->n_tokens);
        for (int i = 0; i < sc->n_slots; i++) {
            struct server_slot * s = &sc->slots[i];
            if (s->state != SLOT_STATE_IDLE) {
                task_fail(s->task, "llama_decode failed", ERROR_TYPE_SERVER);
                llama_memory_seq_rm(llama_get_memory(sc->ctx), s->id, -1, -1);
                s->n_cache = 0;
                slot_release(sc, s);
            }
        }
        return;
    }
    int n_busy = 0;
    for (int i = 0; i < sc->n_slots; i++) {
        struct server_slot * s = &sc->slots[i];
        if (s->state == SLOT_STATE_IDLE) {
            continue;
        }
        n_busy++;
        if (s->state == SLOT_STATE_GENERATING) {
            s->t_gen_ms += (double) (t1 - t0) / 1e3;
        }
        if (s->i_batch < 0) {
            continue;
        }
        if (s->state == SLOT_STATE_PROCESSING_PROMPT) {
            s->t_prompt_ms = (double) (t1 - s->t_start_prompt) / 1e3;
            s->t_start_gen = t1;
            const int n_eval = s->n_prompt - s->n_prompt_reused;
            sc->metrics.n_prompt_tokens_processed_total += (uint64_t) n_eval;
            sc->metrics.n_prompt_tokens_processed       += (uint64_t) n_eval;
            sc->metrics.t_prompt_processing_total       += (uint64_t) s->t_prompt_ms;
            sc->metrics.t_prompt_processing             += (uint64_t) s->t_prompt_ms;
        }
        const llama_token tok = llama_sampler_sample(s->smpl, sc->ctx, s->i_batch);
        slot_on_token(sc, s, tok);
    }
    sc->metrics.n_busy_slots_total += (uint64_t) n_busy;
}

static bool any_busy(const struct server_context * sc) {
    for (int i = 0; i < sc->n_slots; i++) {
        if (sc->slots[i].state != SLOT_STATE_IDLE) {
            return true;
        }
    }
    return false;
}

//
// embeddings (--embedding): the server is embedding-only, as llama.cpp's; each input is decoded alone on
// sequence 0 in one batch
//

static void handle_embeddings_mode(const struct server_http_req * req, struct server_http_res * res,
                                   struct server_context * sc, bool oai) {
    if (!sc->params.embedding) {
        res_err(res, "This server does not support embeddings. Start it with `--embeddings`", ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    json_t * body = parse_body(req, res);
    if (!body) {
        return;
    }
    const json_t * in = json_object_get(body, oai ? "input" : "content");
    if (!in) {
        in = json_object_get(body, oai ? "content" : "input");
    }
    if (!json_is_string(in) && !json_is_array(in)) {
        res_err(res, "\"input\" (or \"content\") must be a string or an array", ERROR_TYPE_INVALID_REQUEST);
        json_decref(body);
        return;
    }
    struct server_task * t = server_task_new(SERVER_TASK_TYPE_EMBEDDING);
    if (!t) {
        json_decref(body);
        res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    json_object_set_new(body, "__oai", json_boolean(oai));
    t->data = body;
    respond_task(sc, t, res);
}

static void handle_embedding(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    handle_embeddings_mode(req, res, ud, false);
}
static void handle_oai_embeddings(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    handle_embeddings_mode(req, res, ud, true);
}

static json_t * embd_row(const float * e, int n, bool normalize) {
    double norm = 0;
    for (int i = 0; i < n; i++) {
        norm += (double) e[i] * e[i];
    }
    norm = sqrt(norm);
    const double scale = (normalize && norm > 0) ? 1.0 / norm : 1.0;
    json_t * a = json_array();
    for (int i = 0; i < n; i++) {
        json_array_append_new(a, json_real(e[i] * scale));
    }
    return a;
}

static void process_embedding_task(struct server_context * sc, struct server_task * t) {
    const bool oai = json_is_true(json_object_get(t->data, "__oai"));
    const json_t * in = json_object_get(t->data, oai ? "input" : "content");
    if (!in) {
        in = json_object_get(t->data, oai ? "content" : "input");
    }
    // one input: a string or a token array; several: an array of those
    json_t * inputs = NULL;
    if (json_is_string(in) || (json_is_array(in) && json_array_size(in) > 0 && json_is_integer(json_array_get(in, 0)))) {
        inputs = json_pack("[O]", in);
    } else {
        inputs = json_incref((json_t *) in);
    }
    int64_t norm = 2;
    struct sj_err err = { { 0 } };
    sj_get_int(t->data, "embd_normalize", &norm, &err);
    const enum llama_pooling_type pool = llama_pooling_type(sc->ctx);
    if (oai && pool == LLAMA_POOLING_TYPE_NONE) {
        json_decref(inputs);
        task_fail(t, "Pooling type 'none' is not OAI compatible. Please use a different pooling type",
                  ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    const int n_embd = llama_model_n_embd(sc->model);
    json_t * data = json_array();
    int n_total = 0;
    size_t idx;
    const json_t * one;
    json_array_foreach(inputs, idx, one) {
        struct token_vec toks = { 0 };
        if (!tokenize_mixed(sc->vocab, one, true, true, &toks, &err) || toks.n == 0 ||
            toks.n > (size_t) sc->n_batch || toks.n > (size_t) sc->n_ctx_slot) {
            char msg[300];
            snprintf(msg, sizeof(msg), "input %zu: %s", idx,
                     err.msg[0] ? err.msg : toks.n == 0 ? "the input is empty"
                                                        : "input is too large to process. increase the physical batch size");
            free(toks.data);
            json_decref(inputs);
            json_decref(data);
            task_fail(t, msg, ERROR_TYPE_INVALID_REQUEST);
            return;
        }
        llama_memory_seq_rm(llama_get_memory(sc->ctx), 0, -1, -1);
        struct llama_batch * b = &sc->batch;
        b->n_tokens = (int32_t) toks.n;
        for (size_t i = 0; i < toks.n; i++) {
            b->token[i] = toks.data[i];
            b->pos[i] = (llama_pos) i;
            b->n_seq_id[i] = 1;
            b->seq_id[i][0] = 0;
            b->logits[i] = 1;
        }
        const int32_t rc = llama_decode(sc->ctx, *b);
        llama_memory_seq_rm(llama_get_memory(sc->ctx), 0, -1, -1);
        json_t * emb = NULL;
        if (rc == 0 && pool != LLAMA_POOLING_TYPE_NONE) {
            const float * e = llama_get_embeddings_seq(sc->ctx, 0);
            emb = e ? embd_row(e, pool == LLAMA_POOLING_TYPE_RANK ? 1 : n_embd, norm == 2) : NULL;
        } else if (rc == 0) {
            emb = json_array();
            for (size_t i = 0; i < toks.n; i++) {
                const float * e = llama_get_embeddings_ith(sc->ctx, (int32_t) i);
                json_array_append_new(emb, e ? embd_row(e, n_embd, norm == 2) : json_array());
            }
        }
        n_total += (int) toks.n;
        free(toks.data);
        if (!emb) {
            json_decref(inputs);
            json_decref(data);
            task_fail(t, "failed to compute the embedding", ERROR_TYPE_SERVER);
            return;
        }
        if (oai) {
            json_array_append_new(data, json_pack("{s:o, s:i, s:s}", "embedding", emb, "index", (int) idx,
                                                  "object", "embedding"));
        } else {
            // llama.cpp's native shape: one row per token without pooling, else one pooled row
            json_t * rows = pool == LLAMA_POOLING_TYPE_NONE ? emb : json_pack("[o]", emb);
            json_array_append_new(data, json_pack("{s:i, s:o}", "index", (int) idx, "embedding", rows));
        }
    }
    json_decref(inputs);
    json_t * out = data;
    if (oai) {
        out = json_pack("{s:s, s:s, s:{s:i, s:i}, s:o}", "model", sc->model_name, "object", "list", "usage",
                        "prompt_tokens", n_total, "total_tokens", n_total, "data", data);
    }
    server_task_complete(t, out, out ? 200 : 500);
}

//
// inference thread
//

static json_t * slot_to_json(const struct server_slot * s) {
    return json_pack("{s:i, s:i, s:i, s:b, s:b, s:o, s:s, s:[{s:b, s:b, s:i, s:i, s:s}]}",
                     "id",            s->id,
                     "id_task",       s->id_task,
                     "n_ctx",         s->n_ctx,
                     "speculative",   0,
                     "is_processing", (int) (s->state != SLOT_STATE_IDLE),
                     "params",        server_slot_params_to_json(&s->params),
                     "prompt",        "",
                     "next_token",
                         "has_next_token", (int) s->has_next_token,
                         "has_new_line",   (int) s->has_new_line,
                         "n_remain",       s->n_remain,
                         "n_decoded",      s->n_decoded,
                         "stopping_word",  "");
}

static void process_metrics_task(struct server_context * sc, struct server_task * t) {
    json_t * slots = json_array();
    int n_idle = 0, n_processing = 0;
    for (int i = 0; i < sc->n_slots; i++) {
        const struct server_slot * s = &sc->slots[i];
        if (s->state == SLOT_STATE_IDLE) {
            n_idle++;
        } else {
            n_processing++;
        }
        json_array_append_new(slots, slot_to_json(s));
    }
    struct server_metrics * m = &sc->metrics;
    json_t * out = json_pack("{s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
                             "idle",       n_idle,
                             "processing", n_processing,
                             "deferred",   0,
                             "t_start",    (json_int_t) m->t_start,
                             "n_prompt_tokens_processed_total", (json_int_t) m->n_prompt_tokens_processed_total,
                             "t_prompt_processing_total",       (json_int_t) m->t_prompt_processing_total,
                             "n_tokens_predicted_total",        (json_int_t) m->n_tokens_predicted_total,
                             "t_tokens_generation_total",       (json_int_t) m->t_tokens_generation_total,
                             "n_prompt_tokens_processed",       (json_int_t) m->n_prompt_tokens_processed,
                             "t_prompt_processing",             (json_int_t) m->t_prompt_processing,
                             "n_tokens_predicted",              (json_int_t) m->n_tokens_predicted,
                             "t_tokens_generation",             (json_int_t) m->t_tokens_generation,
                             "n_decode_total",                  (json_int_t) m->n_decode_total,
                             "n_busy_slots_total",              (json_int_t) m->n_busy_slots_total,
                             "n_tokens_max",                    (json_int_t) m->n_tokens_max,
                             "slots", slots);
    if (t->reset_bucket) {
        m->n_prompt_tokens_processed = 0;
        m->t_prompt_processing       = 0;
        m->n_tokens_predicted        = 0;
        m->t_tokens_generation       = 0;
    }
    server_task_complete(t, out, out ? 200 : 500);
}

static void inference_loop(struct server_context * sc) {
    while (!atomic_load(&sc->shutting_down)) {
        // busy slots: take what arrived without waiting, then decode; idle: sleep until a task arrives
        int wait_ms = any_busy(sc) ? 0 : -1;
        struct server_task * t;
        while ((t = server_queue_pop(&sc->queue, wait_ms)) != NULL) {
            wait_ms = 0;
            switch (t->type) {
                case SERVER_TASK_TYPE_METRICS:
                    process_metrics_task(sc, t);
                    server_task_release(t);
                    break;
                case SERVER_TASK_TYPE_EMBEDDING:
                    process_embedding_task(sc, t);
                    server_task_release(t);
                    break;
                case SERVER_TASK_TYPE_COMPLETION:
                default:
                    queue_deferred(sc, t); // joins the running batch as soon as a slot is free
                    break;
            }
        }
        assign_deferred(sc);
        if (any_busy(sc)) {
            inference_step(sc);
        }
    }
    for (int i = 0; i < sc->n_slots; i++) {
        if (sc->slots[i].state != SLOT_STATE_IDLE) {
            task_fail(sc->slots[i].task, "the server is shutting down", ERROR_TYPE_UNAVAILABLE);
            slot_release(sc, &sc->slots[i]);
        }
    }
    while (sc->deferred_head) {
        struct server_task * dt = sc->deferred_head;
        sc->deferred_head = dt->next;
        task_fail(dt, "the server is shutting down", ERROR_TYPE_UNAVAILABLE);
        server_task_release(dt);
    }
    sc->deferred_tail = NULL;
}

//
// startup / shutdown
//

static struct server_context * g_sc = NULL;
static atomic_bool g_exiting; // main is done: the next signal only wakes the signal thread

static void * signal_thread(void * arg) {
    sigset_t * set = arg;
    int sig = 0;
    int n_signals = 0;
    while (sigwait(set, &sig) == 0) {
        if (atomic_load(&g_exiting)) {
            break;
        }
        if (sig != SIGINT && sig != SIGTERM) {
            continue;
        }
        if (++n_signals > 1) {
            // as llama.cpp: a second interrupt ends a server that does not stop by itself
            fprintf(stderr, "Received second interrupt, terminating immediately.\n");
            _exit(1);
        }
        SRV_INF("%s: received signal %d, shutting down\n", __func__, sig);
        atomic_store(&g_sc->shutting_down, true);
        server_queue_stop(&g_sc->queue);
    }
    return NULL;
}

static bool load_progress(float progress, void * ud) {
    (void) progress;
    const struct server_context * sc = ud;
    return !atomic_load(&sc->shutting_down);
}

static bool load_model(struct server_context * sc) {
    struct llama_model_params mp = llama_model_default_params();
    mp.progress_callback           = load_progress;
    mp.progress_callback_user_data = sc;
    sc->model = llama_model_load_from_file(sc->params.model_path, mp);
    if (!sc->model) {
        return false;
    }
    sc->vocab = llama_model_get_vocab(sc->model);
    sc->model_name = strdup(sc->params.alias ? sc->params.alias : sc->params.model_path);
    if (!sc->model_name) {
        return false;
    }

    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx      = (uint32_t) (sc->params.n_ctx > 0 ? sc->params.n_ctx : 0);
    cp.n_batch    = (uint32_t) sc->params.n_batch;
    cp.n_ubatch   = (uint32_t) sc->params.n_ubatch;
    cp.n_seq_max  = (uint32_t) sc->params.n_parallel;
    cp.kv_unified = sc->params.kv_unified;
    cp.flash_attn_type = (enum llama_flash_attn_type) sc->params.flash_attn;
    cp.type_k     = (enum ggml_type) sc->params.type_k;
    cp.type_v     = (enum ggml_type) sc->params.type_v;
    cp.embeddings = sc->params.embedding;
    cp.pooling_type = (enum llama_pooling_type) sc->params.pooling;
    if (sc->params.embedding) {
        // a pooled sequence has to fit one ubatch
        cp.n_ubatch = cp.n_batch;
    }
    if (sc->params.n_threads > 0) {
        cp.n_threads       = sc->params.n_threads;
        cp.n_threads_batch = sc->params.n_threads;
    }
    sc->ctx = llama_init_from_model(sc->model, cp);
    if (!sc->ctx) {
        SRV_ERR("%s: failed to create the llama_context\n", __func__);
        return false;
    }
    sc->n_ctx      = (int) llama_n_ctx(sc->ctx);
    sc->n_ctx_slot = (int) llama_n_ctx_seq(sc->ctx);
    if (!sc->params.kv_unified && sc->params.n_parallel > 1 && sc->n_ctx_slot == sc->n_ctx) {
        sc->n_ctx_slot = sc->n_ctx / sc->params.n_parallel;
    }
    if (sc->n_ctx_slot < 1) {
        SRV_ERR("%s: context size %d is too small for %d slots\n", __func__, sc->n_ctx, sc->params.n_parallel);
        return false;
    }
    sc->n_batch = (int) llama_n_batch(sc->ctx);
    sc->batch = llama_batch_init(sc->n_batch, 0, 1);

    sc->n_slots = sc->params.n_parallel;
    sc->slots = calloc((size_t) sc->n_slots, sizeof(struct server_slot));
    if (!sc->slots) {
        return false;
    }
    for (int i = 0; i < sc->n_slots; i++) {
        struct server_slot * s = &sc->slots[i];
        s->id             = i;
        s->id_task        = -1;
        s->n_ctx          = sc->n_ctx_slot;
        s->state          = SLOT_STATE_IDLE;
        s->params         = server_slot_params_default();
        s->has_next_token = true;
        s->n_remain       = -1;
        s->i_batch        = -1;
    }

    // chat template: --chat-template, else the model's, else llama.cpp's fallback (chatml)
    const char * tmpl = sc->params.chat_template ? sc->params.chat_template : llama_model_chat_template(sc->model, NULL);
    sc->chat_template = strdup(tmpl ? tmpl : "chatml");
    if (!sc->chat_template) {
        return false;
    }
#ifdef LLAMA_SERVER_HAVE_CHAT
    {
        // refuse to start with a template we cannot format, as llama.cpp does
        const struct llama_chat_message probe[] = { { "user", "test" } };
        char buf[256];
        if (llama_chat_apply_template(sc->chat_template, probe, 1, true, buf, (int32_t) sizeof(buf)) < 0) {
            if (sc->params.chat_template) {
                SRV_ERR("%s: the chat template '%s' is not supported\n", __func__, sc->params.chat_template);
                return false;
            }
            SRV_WRN("%s: the model's chat template is not supported, using chatml\n", __func__);
            free(sc->chat_template);
            sc->chat_template = strdup("chatml");
            if (!sc->chat_template) {
                return false;
            }
        }
        sc->has_chat = true;
    }
#endif
    return true;
}

static bool register_routes(struct server_context * sc) {
    struct server_http * h = sc->http;
    bool ok = true;
    ok &= server_http_route(h, "GET",  "/health",         handle_health,         sc, true,  false);
    ok &= server_http_route(h, "GET",  "/v1/health",      handle_health,         sc, true,  false);
    ok &= server_http_route(h, "GET",  "/models",         handle_models,         sc, true,  true);
    ok &= server_http_route(h, "GET",  "/v1/models",      handle_models,         sc, true,  true);
    ok &= server_http_route(h, "GET",  "/api/tags",       handle_models,         sc, true,  true); // ollama clients
    ok &= server_http_route(h, "GET",  "/props",          handle_props,          sc, false, false);
    ok &= server_http_route(h, "POST", "/props",          handle_props_change,   sc, false, false);
    ok &= server_http_route(h, "GET",  "/slots",          handle_slots,          sc, false, false);
    ok &= server_http_route(h, "GET",  "/metrics",        handle_metrics,        sc, false, false);
    ok &= server_http_route(h, "POST", "/tokenize",       handle_tokenize,       sc, false, false);
    ok &= server_http_route(h, "POST", "/detokenize",     handle_detokenize,     sc, false, false);
    ok &= server_http_route(h, "POST", "/apply-template", handle_apply_template, sc, false, false);
    ok &= server_http_route(h, "POST", "/completion",     handle_completion,     sc, false, false);
    ok &= server_http_route(h, "POST", "/completions",    handle_completion,     sc, false, false);
    ok &= server_http_route(h, "POST", "/v1/completions", handle_oai_completion, sc, false, false);
    ok &= server_http_route(h, "POST", "/embedding",      handle_embedding,      sc, false, false);
    ok &= server_http_route(h, "POST", "/embeddings",     handle_embedding,      sc, false, false);
    ok &= server_http_route(h, "POST", "/v1/embeddings",  handle_oai_embeddings, sc, false, false);
    ok &= server_http_route(h, "POST", "/chat/completions",    handle_oai_chat,  sc, false, false);
    ok &= server_http_route(h, "POST", "/v1/chat/completions", handle_oai_chat,  sc, false, false);
    return ok;
}

int main(int argc, char ** argv) {
    static struct server_context ctx;
    struct server_context * sc = &ctx;
    atomic_init(&sc->shutting_down, false);
    atomic_init(&g_exiting, false);

    const int pr = params_parse(argc, argv, &sc->params);
    if (pr != 0) {
        params_free(&sc->params);
        return pr > 0 ? 0 : 1;
    }

    // signals are taken by one thread with sigwait, so no handler runs inside library code
    static sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    llama_log_set(llama_log_cb, NULL);
    llama_backend_init();
    server_queue_init(&sc->queue);
    sc->metrics.t_start = (int64_t) time(NULL);

    struct server_http_params hp = {
        .host       = sc->params.host,
        .port       = sc->params.port,
        .n_threads  = sc->params.n_threads_http,
        .timeout_s  = sc->params.timeout,
        .max_body   = sc->params.max_body,
        .api_keys   = (const char * const *) sc->params.api_keys,
        .n_api_keys = sc->params.n_api_keys,
        .log_requests = g_verbosity > 0 && !g_log_disabled,
    };
    sc->http = server_http_init(&hp);
    int rc = 1;
    pthread_t sig_thread;
    bool sig_thread_started = false;
    if (!sc->http || !register_routes(sc)) {
        SRV_ERR("%s: failed to initialize the HTTP server\n", __func__);
        goto done;
    }
    g_sc = sc;
    if (pthread_create(&sig_thread, NULL, signal_thread, &sigs) == 0) {
        sig_thread_started = true;
    }
    if (!server_http_start(sc->http)) {
        SRV_ERR("%s: couldn't bind HTTP server socket, hostname: %s, port: %d\n", __func__, sc->params.host,
                sc->params.port);
        goto done;
    }
    SRV_INF("%s: HTTP server is listening, hostname: %s, port: %d, http threads: %d\n", __func__, sc->params.host,
            server_http_port(sc->http), sc->params.n_threads_http);
    SRV_INF("%s: loading model\n", __func__);

    if (!load_model(sc)) {
        if (!atomic_load(&sc->shutting_down)) {
            SRV_ERR("%s: exiting due to model loading error\n", __func__);
        }
        goto done;
    }
    server_http_set_ready(sc->http, true);
    SRV_INF("%s: model loaded\n", __func__);
    SRV_INF("%s: server is listening on http://%s:%d - starting the main loop\n", __func__, sc->params.host,
            server_http_port(sc->http));

    inference_loop(sc);
    rc = 0;

done:
    atomic_store(&sc->shutting_down, true);
    server_queue_stop(&sc->queue);
    server_http_free(sc->http);
    if (sig_thread_started) {
        atomic_store(&g_exiting, true);
        pthread_kill(sig_thread, SIGTERM);
        pthread_join(sig_thread, NULL);
    }
    g_sc = NULL;
    server_queue_destroy(&sc->queue);
    for (int i = 0; sc->slots && i < sc->n_slots; i++) {
        free(sc->slots[i].cache);
    }
    if (sc->ctx) {
        llama_batch_free(sc->batch);
        llama_free(sc->ctx);
    }
    free(sc->slots);
    free(sc->model_name);
    free(sc->chat_template);
    if (sc->model) {
        llama_model_free(sc->model);
    }
    llama_backend_free();
    params_free(&sc->params);
    return rc;
}
