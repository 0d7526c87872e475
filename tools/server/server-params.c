// llama-server's command line: llama.cpp's flag names and defaults.
#include "server-context.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void server_params_free(struct server_params * p) {
    free(p->model_path);
    free(p->alias);
    free(p->host);
    for (size_t i = 0; i < p->n_api_keys; i++) {
        free(p->api_keys[i]);
    }
    free(p->api_keys);
    free(p->chat_template);
    free(p->speculative.draft.mparams.path);
    p->speculative.draft.mparams.path = NULL;
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

static bool parse_float_arg(const char * s, float lo, float hi, float * out) {
    if (!s || !*s) {
        return false;
    }
    errno = 0;
    char * end = NULL;
    const double v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v >= lo && v <= hi)) {
        return false;
    }
    *out = (float) v;
    return true;
}

// a ggml type by name (f32, f16, q8_0, ...), -1 when unknown
static int parse_ggml_type(const char * v) {
    for (int ty = 0; ty < GGML_TYPE_COUNT; ty++) {
        const char * tn = ggml_type_name((enum ggml_type) ty);
        if (tn && strcmp(tn, v) == 0) {
            return ty;
        }
    }
    return -1;
}

// --spec-type: comma-separated names; false on an unknown name or too many
static bool parse_spec_types(const char * v, struct common_params_speculative * sp) {
    int32_t n = 0;
    const char * s = v;
    while (*s) {
        const char * e = strchr(s, ',');
        const size_t len = e ? (size_t) (e - s) : strlen(s);
        char name[64];
        if (len == 0 || len >= sizeof(name) || n >= COMMON_SPEC_TYPES_MAX) {
            return false;
        }
        memcpy(name, s, len);
        name[len] = '\0';
        const enum common_speculative_type ty = common_speculative_type_from_str(name);
        if (ty == COMMON_SPECULATIVE_TYPE_COUNT) {
            return false;
        }
        sp->types[n++] = ty;
        s += len;
        if (*s == ',') {
            s++;
        }
    }
    if (n == 0) {
        return false;
    }
    sp->n_types = n;
    return true;
}

static void print_usage(const char * argv0) {
    printf("usage: %s -m MODEL [options]\n\n"
           "  -m,  --model FNAME          model path (GGUF)\n"
           "  -a,  --alias NAME           model name reported by the API (default: the model file name)\n"
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
           "  -bs, --backend-sampling     run the supported samplers of each slot inside llama_decode\n"
           "  -md, --model-draft FNAME    draft model for speculative decoding (also --spec-draft-model)\n"
           "       --spec-type TYPE[,..]  none, draft-simple, ngram-simple (default: draft-simple with -md, else none)\n"
           "       --spec-draft-n-max N   tokens to draft per step (default: 3)\n"
           "       --spec-draft-n-min N   fewest draft tokens worth verifying (default: 0)\n"
           "       --spec-draft-p-min P   least draft-model probability to keep drafting (default: 0.00)\n"
           "       --spec-ngram-simple-size-n N  ngram-simple: length of the looked-up n-gram (default: 12)\n"
           "       --spec-ngram-simple-size-m N  ngram-simple: longest draft m-gram (default: 48)\n"
           "  -td, --threads-draft N      threads of the draft model (also --spec-draft-threads)\n"
           "  -cd, --ctx-size-draft N     draft context size per slot (default: 0 = the slot's)\n"
           "  -ctkd, -ctvd TYPE           draft KV cache data types (default: f16)\n"
           "  -v,  --verbose              print library messages\n"
           "       --log-disable          print nothing\n"
           "  -h,  --help\n", argv0);
}

// 0 = ok, 1 = printed help, -1 = error (message printed)
int server_params_parse(int argc, char ** argv, struct server_params * p) {
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
    p->max_body       = SERVER_DEFAULT_MAX_BODY;
    {
        // llama.cpp's speculative defaults; the owned strings of the defaults are all NULL
        struct common_params def = common_params_default();
        p->speculative = def.speculative;
        p->speculative.draft.mparams = (struct common_params_model) { 0 };
        p->speculative.lookup_cache_static = NULL;
        p->speculative.lookup_cache_dynamic = NULL;
        common_params_free(&def);
    }
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
        } else if (ARG_IS("-bs", "--backend-sampling")) {
            p->backend_sampling = true;
        } else if (ARG_IS("-md", "--model-draft") || ARG_IS("--spec-draft-model", NULL)) {
            NEED_VALUE(); if (!set_str(&p->speculative.draft.mparams.path, v)) return -1;
        } else if (ARG_IS("--spec-type", NULL)) {
            NEED_VALUE(); if (!parse_spec_types(v, &p->speculative)) BAD_VALUE();
        } else if (ARG_IS("--spec-draft-n-max", NULL)) {
            NEED_VALUE(); if (!parse_int_arg(v, 0, 1024, &p->speculative.draft.n_max)) BAD_VALUE();
        } else if (ARG_IS("--spec-ngram-simple-size-n", NULL) || ARG_IS("--spec-ngram-simple-size-m", NULL)) {
            const bool is_n = ARG_IS("--spec-ngram-simple-size-n", NULL);
            int sz = 0;
            NEED_VALUE(); if (!parse_int_arg(v, 1, 1024, &sz)) BAD_VALUE();
            *(is_n ? &p->speculative.ngram_simple.size_n : &p->speculative.ngram_simple.size_m) = (uint16_t) sz;
        } else if (ARG_IS("--spec-draft-n-min", NULL)) {
            NEED_VALUE(); if (!parse_int_arg(v, 0, 1024, &p->speculative.draft.n_min)) BAD_VALUE();
        } else if (ARG_IS("--spec-draft-p-min", NULL)) {
            NEED_VALUE(); if (!parse_float_arg(v, 0.0f, 1.0f, &p->speculative.draft.p_min)) BAD_VALUE();
        } else if (ARG_IS("-td", "--threads-draft") || ARG_IS("--spec-draft-threads", NULL)) {
            NEED_VALUE(); if (!parse_int_arg(v, -1, 4096, &p->speculative.draft.cpuparams.n_threads)) BAD_VALUE();
        } else if (ARG_IS("-cd", "--ctx-size-draft")) {
            NEED_VALUE(); if (!parse_int_arg(v, 0, INT_MAX, &p->speculative.draft.n_ctx)) BAD_VALUE();
        } else if (ARG_IS("-ctkd", "--cache-type-k-draft") || ARG_IS("-ctvd", "--cache-type-v-draft")) {
            const bool is_k = ARG_IS("-ctkd", "--cache-type-k-draft");
            NEED_VALUE();
            const int ty = parse_ggml_type(v);
            if (ty < 0) BAD_VALUE();
            *(is_k ? &p->speculative.draft.cache_type_k : &p->speculative.draft.cache_type_v) = (enum ggml_type) ty;
        } else if (ARG_IS("-ngld", "--gpu-layers-draft") || ARG_IS("--n-gpu-layers-draft", NULL)) {
            NEED_VALUE(); // accepted for compatibility: this build offloads nothing
        } else if (ARG_IS("-v", "--verbose")) {
            server_log_verbosity = 1;
        } else if (ARG_IS("--log-disable", NULL)) {
            server_log_disabled = true;
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
    if (p->speculative.draft.mparams.path && p->speculative.n_types == 1 &&
        p->speculative.types[0] == COMMON_SPECULATIVE_TYPE_NONE) {
        // -md alone means draft-simple, as in llama.cpp
        p->speculative.types[0] = COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE;
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
