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

#include "llama.h"

#include <errno.h>
#include <limits.h>
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
    char small[64];
    int32_t n = llama_token_to_piece(vocab, tok, small, (int32_t) sizeof(small), 0, true);
    char * out;
    if (n >= 0) {
        out = malloc((size_t) n + 1);
        if (out) {
            memcpy(out, small, (size_t) n);
        }
    } else {
        const int32_t need = -n;
        out = malloc((size_t) need + 1);
        if (out) {
            n = llama_token_to_piece(vocab, tok, out, need, 0, true);
            if (n < 0) {
                n = 0;
            }
        }
    }
    if (!out) {
        return NULL;
    }
    out[n] = '\0';
    *len = (size_t) n;
    return out;
}

// tokenize text[0..len); returns the count (>= 0) with *out malloc'd, or -1
static int tokenize_text(const struct llama_vocab * vocab, const char * text, size_t len, bool add_special,
                         bool parse_special, llama_token ** out) {
    *out = NULL;
    if (len > INT32_MAX - 8) {
        return -1;
    }
    int32_t cap = (int32_t) len + 4;
    llama_token * toks = malloc((size_t) cap * sizeof(llama_token));
    if (!toks) {
        return -1;
    }
    int32_t n = llama_tokenize(vocab, text, (int32_t) len, toks, cap, add_special, parse_special);
    if (n < 0 && n != INT32_MIN) {
        cap = -n;
        llama_token * nt = realloc(toks, (size_t) cap * sizeof(llama_token));
        if (!nt) {
            free(toks);
            return -1;
        }
        toks = nt;
        n = llama_tokenize(vocab, text, (int32_t) len, toks, cap, add_special, parse_special);
    }
    if (n < 0) {
        free(toks);
        return -1;
    }
    *out = toks;
    return n;
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

// post a METRICS task and wait for the inference thread's snapshot; NULL (response set) on failure
static json_t * fetch_metrics(struct server_context * sc, bool reset_bucket, struct server_http_res * res) {
    struct server_task * t = server_task_new(SERVER_TASK_TYPE_METRICS);
    if (!t) {
        res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return NULL;
    }
    t->reset_bucket = reset_bucket;
    server_queue_post(&sc->queue, t);
    json_t * out = NULL;
    if (server_task_wait(t)) {
        out = json_incref(t->result);
    } else {
        res_err(res, "the server is shutting down", ERROR_TYPE_UNAVAILABLE);
    }
    server_task_release(t);
    return out;
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
    json_t * slots = json_incref(json_object_get(m, "slots"));
    json_decref(m);
    res_json(res, slots);
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
        // part 2 polls without blocking while slots are busy; idle, the loop sleeps until a task arrives
        struct server_task * t = server_queue_pop(&sc->queue, -1);
        if (!t) {
            continue;
        }
        switch (t->type) {
            case SERVER_TASK_TYPE_METRICS:
                process_metrics_task(sc, t);
                break;
            case SERVER_TASK_TYPE_COMPLETION:
            default:
                server_task_complete(t, NULL, 501);
                break;
        }
        server_task_release(t);
    }
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

    // part 2 creates the llama_context here and takes n_ctx / n_ctx_seq from it
    const int n_ctx_train = llama_model_n_ctx_train(sc->model);
    sc->n_ctx = sc->params.n_ctx > 0 ? sc->params.n_ctx : (n_ctx_train > 0 ? n_ctx_train : 4096);
    sc->n_ctx_slot = sc->params.kv_unified ? sc->n_ctx : sc->n_ctx / sc->params.n_parallel;
    if (sc->n_ctx_slot < 1) {
        SRV_ERR("%s: context size %d is too small for %d slots\n", __func__, sc->n_ctx, sc->params.n_parallel);
        return false;
    }

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
    ok &= server_http_route(h, "GET",  "/props",          handle_props,          sc, false, false);
    ok &= server_http_route(h, "POST", "/props",          handle_props_change,   sc, false, false);
    ok &= server_http_route(h, "GET",  "/slots",          handle_slots,          sc, false, false);
    ok &= server_http_route(h, "GET",  "/metrics",        handle_metrics,        sc, false, false);
    ok &= server_http_route(h, "POST", "/tokenize",       handle_tokenize,       sc, false, false);
    ok &= server_http_route(h, "POST", "/detokenize",     handle_detokenize,     sc, false, false);
    ok &= server_http_route(h, "POST", "/apply-template", handle_apply_template, sc, false, false);
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
