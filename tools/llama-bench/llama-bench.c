// llama-bench: prompt-processing and token-generation throughput, with llama.cpp's flags, test matrix and
// output formats (markdown table, csv, json, jsonl), so that its figures and scripts carry over.
//
// Beyond llama.cpp: token generation reads every matmul weight once per token, so for tg tests we also
// report the weight bytes read per second and that as a share of the machine's read bandwidth, measured
// in this process with the same thread count (a second table after the main one, so that scripts parsing
// the llama.cpp table keep working).

#include "common.h"
#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "gguf.h"
#include "llama.h"
#include "llama-bench-options.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

static uint64_t time_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

//
// growable lists
//

struct int_list {
    int * v;
    int   n;
    int   cap;
};

static bool int_list_push(struct int_list * l, int x) {
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 8;
        int * nv = realloc(l->v, (size_t) cap * sizeof(int));
        if (!nv) {
            return false;
        }
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return true;
}

struct str_list {
    char ** v;
    int     n;
    int     cap;
};

static bool str_list_push(struct str_list * l, const char * s, size_t len) {
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 8;
        char ** nv = realloc(l->v, (size_t) cap * sizeof(char *));
        if (!nv) {
            return false;
        }
        l->v = nv;
        l->cap = cap;
    }
    char * c = malloc(len + 1);
    if (!c) {
        return false;
    }
    memcpy(c, s, len);
    c[len] = '\0';
    l->v[l->n++] = c;
    return true;
}

static void str_list_free(struct str_list * l) {
    for (int i = 0; i < l->n; i++) {
        free(l->v[i]);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

// tensor splits: groups of BENCH_MAX_DEVICES proportions
struct ts_list {
    float * v;
    int     n;
    int     cap;
};

static bool ts_list_push(struct ts_list * l, const float * ts) {
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 4;
        float * nv = realloc(l->v, (size_t) cap * BENCH_MAX_DEVICES * sizeof(float));
        if (!nv) {
            return false;
        }
        l->v = nv;
        l->cap = cap;
    }
    memcpy(l->v + (size_t) l->n * BENCH_MAX_DEVICES, ts, BENCH_MAX_DEVICES * sizeof(float));
    l->n++;
    return true;
}

struct dev_list {
    struct bench_devices * v;
    int n;
    int cap;
};

static bool dev_list_push(struct dev_list * l, const struct bench_devices * d) {
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 4;
        struct bench_devices * nv = realloc(l->v, (size_t) cap * sizeof(*nv));
        if (!nv) {
            return false;
        }
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = *d;
    return true;
}

struct ot_list {
    struct bench_overrides * v;
    int n;
    int cap;
};

// takes ownership of *o
static bool ot_list_push(struct ot_list * l, struct bench_overrides * o) {
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 4;
        struct bench_overrides * nv = realloc(l->v, (size_t) cap * sizeof(*nv));
        if (!nv) {
            bench_overrides_free(o);
            return false;
        }
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = *o;
    return true;
}

//
// command line
//

enum output_format { OUT_NONE, OUT_CSV, OUT_JSON, OUT_JSONL, OUT_MD };

static const char * output_format_str(enum output_format f) {
    switch (f) {
        case OUT_NONE:  return "none";
        case OUT_CSV:   return "csv";
        case OUT_JSON:  return "json";
        case OUT_JSONL: return "jsonl";
        case OUT_MD:    return "md";
    }
    return "?";
}

static bool output_format_from_str(const char * s, enum output_format * f) {
    if (strcmp(s, "none") == 0) {
        *f = OUT_NONE;
    } else if (strcmp(s, "csv") == 0) {
        *f = OUT_CSV;
    } else if (strcmp(s, "json") == 0) {
        *f = OUT_JSON;
    } else if (strcmp(s, "jsonl") == 0) {
        *f = OUT_JSONL;
    } else if (strcmp(s, "md") == 0) {
        *f = OUT_MD;
    } else {
        return false;
    }
    return true;
}

struct cmd_params {
    struct str_list model;
    struct int_list n_prompt;
    struct int_list n_gen;
    struct int_list n_pg;       // pairs: pp, tg
    struct int_list n_depth;
    struct int_list n_batch;
    struct int_list n_ubatch;
    struct int_list type_k;     // enum ggml_type
    struct int_list type_v;
    struct int_list n_threads;
    struct int_list flash_attn; // enum llama_flash_attn_type
    struct int_list n_gpu_layers;
    struct str_list cpu_mask;   // validated hex masks
    struct int_list cpu_strict; // 0/1
    struct int_list poll;
    struct int_list n_cpu_moe;
    struct int_list split_mode; // enum llama_split_mode
    struct int_list main_gpu;
    struct int_list no_kv_offload;
    struct int_list use_mmap;
    struct int_list use_direct_io;
    struct int_list embeddings;
    struct int_list no_op_offload;
    struct int_list no_host;
    struct ts_list  tensor_split;
    struct dev_list devices;
    struct ot_list  overrides;
    enum ggml_numa_strategy numa;
    int  prio;                  // enum ggml_sched_priority
    int  reps;
    int  delay;
    bool verbose;
    bool progress;
    bool no_warmup;
    enum output_format output_format;
    enum output_format output_format_stderr;
};

#define DEFAULT_MODEL "models/7B/ggml-model-q4_0.gguf"

static void print_usage(const char * argv0) {
    printf("usage: %s [options]\n", argv0);
    printf("\n");
    printf("options:\n");
    printf("  -h, --help\n");
    printf("  --numa <distribute|isolate|numactl>         numa mode (default: disabled)\n");
    printf("                                              (accepted and passed to ggml_numa_init; this build does\n");
    printf("                                              not place memory or threads by node)\n");
    printf("  -r, --repetitions <n>                       number of times to repeat each test (default: 5)\n");
    printf("  --prio <-1|0|1|2|3>                         process/thread priority (default: 0)\n");
    printf("                                              (sets the process nice level: 5, 0, -5, -10, -20)\n");
    printf("  --delay <0...N> (seconds)                   delay between each test (default: 0)\n");
    printf("  -o, --output <csv|json|jsonl|md>            output format printed to stdout (default: %s)\n",
           output_format_str(OUT_MD));
    printf("  -oe, --output-err <csv|json|jsonl|md>       output format printed to stderr (default: %s)\n",
           output_format_str(OUT_NONE));
    printf("  --list-devices                              list available devices and exit\n");
    printf("  -v, --verbose                               verbose output\n");
    printf("  --progress                                  print test progress indicators\n");
    printf("  --no-warmup                                 skip warmup runs before benchmarking\n");
    printf("\n");
    printf("test parameters:\n");
    printf("  -m, --model <filename>                    (default: %s)\n", DEFAULT_MODEL);
    printf("  -p, --n-prompt <n>                        (default: 512)\n");
    printf("  -n, --n-gen <n>                           (default: 128)\n");
    printf("  -pg <pp,tg>                               (default: )\n");
    printf("  -d, --n-depth <n>                         (default: 0)\n");
    printf("  -b, --batch-size <n>                      (default: 2048)\n");
    printf("  -ub, --ubatch-size <n>                    (default: 512)\n");
    printf("  -ctk, --cache-type-k <t>                  (default: f16)\n");
    printf("  -ctv, --cache-type-v <t>                  (default: f16)\n");
    printf("  -t, --threads <n>                         (default: %d)\n", common_cpu_get_num_math());
    printf("  -C, --cpu-mask <hex,hex>                  (default: 0x0)\n");
    printf("                                            (validated and recorded; the thread pool does not pin\n");
    printf("                                            threads in this build)\n");
    printf("  --cpu-strict <0|1>                        (default: 0) (recorded; no pinning in this build)\n");
    printf("  --poll <0...100>                          (default: 50)\n");
    printf("  -ngl, --n-gpu-layers <n>                  (default: -1)\n");
    printf("  -ncmoe, --n-cpu-moe <n>                   (default: 0) (CPU-only build: all weights are on the CPU)\n");
    printf("  -sm, --split-mode <none|layer|row|tensor> (default: layer) (no effect with a single CPU device)\n");
    printf("  -mg, --main-gpu <i>                       (default: 0) (no effect without GPUs)\n");
    printf("  -nkvo, --no-kv-offload <0|1>              (default: 0) (no effect on the CPU: nothing to offload)\n");
    printf("  -fa, --flash-attn <on|off|auto>           (default: auto)\n");
    printf("  -dev, --device <dev0/dev1/...>            (default: auto)\n");
    printf("  -mmp, --mmap <0|1>                        (default: 1)\n");
    printf("  -dio, --direct-io <0|1>                   (default: 0) (recorded; this build has no direct-I/O\n");
    printf("                                            loader: the model loads as -mmp says)\n");
    printf("  -embd, --embeddings <0|1>                 (default: 0)\n");
    printf("  -ts, --tensor-split <ts0/ts1/..>          (default: 0) (no effect without GPUs)\n");
    printf("  -ot --override-tensor <tensor name pattern>=<buffer type>;...\n");
    printf("                                            (default: disabled) (validated and recorded; the\n");
    printf("                                            loader of this build does not apply overrides)\n");
    printf("  -nopo, --no-op-offload <0|1>              (default: 0) (no effect on the CPU)\n");
    printf("  --no-host <0|1>                           (default: 0) (no effect on the CPU)\n");
    printf("\n");
    printf("Multiple values can be given for each parameter by separating them with ','\n");
    printf("or by specifying the parameter multiple times. Ranges can be given as\n");
    printf("'first-last' or 'first-last+step' or 'first-last*mult'.\n");
}

static void arg_error(const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

// one non-negative (or, when allowed, negative) decimal integer at *p, advancing *p
static bool scan_int(const char ** p, bool allow_negative, long * out) {
    const char * s = *p;
    bool neg = false;
    if (allow_negative && *s == '-') {
        neg = true;
        s++;
    }
    if (*s < '0' || *s > '9') {
        return false;
    }
    long v = 0;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > INT_MAX) {
            return false;
        }
        s++;
    }
    *p = s;
    *out = neg ? -v : v;
    return true;
}

// llama.cpp's int lists: comma-separated items, each first[-last[(+|*)step]]
static bool parse_int_range(const char * s, bool allow_negative, struct int_list * out) {
    const char * p = s;
    while (*p) {
        long first, last, step = 1;
        char op = '+';
        if (!scan_int(&p, allow_negative, &first)) {
            return false;
        }
        last = first;
        if (*p == '-') {
            p++;
            if (!scan_int(&p, false, &last)) {
                return false;
            }
            if (*p == '+' || *p == '*') {
                op = *p++;
                if (!scan_int(&p, false, &step)) {
                    return false;
                }
            }
        }
        if (*p == ',') {
            p++;
            if (!*p) {
                return false;
            }
        } else if (*p) {
            return false;
        }
        // llama.cpp silently yields nothing for an empty range (and then falls back to the default)
        if (last < first) {
            return false;
        }
        for (long i = first; i <= last;) {
            if (out->n > 100000 || !int_list_push(out, (int) i)) {
                return false;
            }
            const long prev = i;
            i = op == '+' ? i + step : i * step;
            if (i <= prev) {
                return false;
            }
        }
    }
    return true;
}

static bool split_str_list(const char * s, struct str_list * out) {
    const char * p = s;
    for (;;) {
        const char * c = strchr(p, ',');
        const size_t len = c ? (size_t) (c - p) : strlen(p);
        if (len == 0 || !str_list_push(out, p, len)) {
            return false;
        }
        if (!c) {
            return true;
        }
        p = c + 1;
    }
}

static enum ggml_type kv_type_from_name(const char * name) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * tn = ggml_type_name((enum ggml_type) t);
        if (tn && strcmp(tn, name) == 0) {
            return (enum ggml_type) t;
        }
    }
    return GGML_TYPE_COUNT;
}

static bool parse_type_list(const char * s, struct int_list * out) {
    struct str_list names = { 0 };
    bool ok = split_str_list(s, &names);
    for (int i = 0; ok && i < names.n; i++) {
        const enum ggml_type t = kv_type_from_name(names.v[i]);
        ok = t != GGML_TYPE_COUNT && int_list_push(out, (int) t);
    }
    str_list_free(&names);
    return ok;
}

static bool parse_fa_list(const char * s, struct int_list * out) {
    struct str_list names = { 0 };
    bool ok = split_str_list(s, &names);
    for (int i = 0; ok && i < names.n; i++) {
        const char * v = names.v[i];
        int fa;
        if (strcmp(v, "on") == 0 || strcmp(v, "1") == 0 || strcmp(v, "enabled") == 0) {
            fa = LLAMA_FLASH_ATTN_TYPE_ENABLED;
        } else if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0 || strcmp(v, "disabled") == 0) {
            fa = LLAMA_FLASH_ATTN_TYPE_DISABLED;
        } else if (strcmp(v, "auto") == 0 || strcmp(v, "-1") == 0) {
            fa = LLAMA_FLASH_ATTN_TYPE_AUTO;
        } else {
            ok = false;
            break;
        }
        ok = int_list_push(out, fa);
    }
    str_list_free(&names);
    return ok;
}

// llama.cpp reads these lists with string_split<bool>: each item 0 or 1
static bool parse_bool_list(const char * s, struct int_list * out) {
    struct str_list items = { 0 };
    bool ok = split_str_list(s, &items);
    for (int i = 0; ok && i < items.n; i++) {
        const char * v = items.v[i];
        ok = (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) && int_list_push(out, v[0] == '1');
    }
    str_list_free(&items);
    return ok;
}

static const char * split_mode_str(enum llama_split_mode m) {
    switch (m) {
        case LLAMA_SPLIT_MODE_NONE:   return "none";
        case LLAMA_SPLIT_MODE_LAYER:  return "layer";
        case LLAMA_SPLIT_MODE_ROW:    return "row";
        case LLAMA_SPLIT_MODE_TENSOR: return "tensor";
    }
    return "?";
}

static bool parse_split_mode_list(const char * s, struct int_list * out) {
    struct str_list items = { 0 };
    bool ok = split_str_list(s, &items);
    for (int i = 0; ok && i < items.n; i++) {
        int m = -1;
        for (int k = LLAMA_SPLIT_MODE_NONE; k <= LLAMA_SPLIT_MODE_TENSOR; k++) {
            if (strcmp(items.v[i], split_mode_str((enum llama_split_mode) k)) == 0) {
                m = k;
            }
        }
        ok = m >= 0 && int_list_push(out, m);
    }
    str_list_free(&items);
    return ok;
}

// the options whose values need more than "invalid value" to explain a rejection
static bool parse_cpu_mask_list(const char * s, struct str_list * out, char * err, size_t n_err) {
    struct str_list items = { 0 };
    bool ok = split_str_list(s, &items);
    bool * mask = malloc(GGML_MAX_N_THREADS * sizeof(bool));
    ok = ok && mask != NULL;
    for (int i = 0; ok && i < items.n; i++) {
        ok = bench_parse_cpu_mask(items.v[i], mask, err, n_err) &&
             str_list_push(out, items.v[i], strlen(items.v[i]));
    }
    free(mask);
    str_list_free(&items);
    return ok;
}

static bool parse_ts_list(const char * s, struct ts_list * out, char * err, size_t n_err) {
    struct str_list items = { 0 };
    bool ok = split_str_list(s, &items);
    float ts[BENCH_MAX_DEVICES];
    for (int i = 0; ok && i < items.n; i++) {
        ok = bench_parse_tensor_split(items.v[i], ts, err, n_err) && ts_list_push(out, ts);
    }
    str_list_free(&items);
    return ok;
}

static bool parse_dev_list(const char * s, struct dev_list * out, char * err, size_t n_err) {
    struct str_list items = { 0 };
    bool ok = split_str_list(s, &items);
    struct bench_devices d;
    for (int i = 0; ok && i < items.n; i++) {
        ok = bench_parse_devices(items.v[i], &d, err, n_err) && dev_list_push(out, &d);
    }
    str_list_free(&items);
    return ok;
}

// -ot: ','-separated groups (one test each), an empty group meaning no overrides
static bool parse_ot_list(const char * s, struct ot_list * out, char * err, size_t n_err) {
    const char * p = s;
    for (;;) {
        const char * c = strchr(p, ',');
        const size_t len = c ? (size_t) (c - p) : strlen(p);
        struct bench_overrides o;
        if (!bench_parse_overrides(p, len, &o, err, n_err) || !ot_list_push(out, &o)) {
            return false;
        }
        if (!c) {
            return true;
        }
        p = c + 1;
    }
}

// returns 0 = run, 1 = exit 0 (help), -1 = error (message printed)
static int parse_cmd_params(int argc, char ** argv, struct cmd_params * params) {
    params->reps = 5;
    params->output_format = OUT_MD;
    params->output_format_stderr = OUT_NONE;

    params->prio = GGML_SCHED_PRIO_NORMAL;
    params->numa = GGML_NUMA_STRATEGY_DISABLED;

    char arg_buf[64];
    char err[512];
    for (int i = 1; i < argc; i++) {
        const char * arg = argv[i];
        // like llama.cpp, long options may be spelled with '_' for '-'
        if (strncmp(arg, "--", 2) == 0 && strlen(arg) < sizeof(arg_buf)) {
            snprintf(arg_buf, sizeof(arg_buf), "%s", arg);
            for (char * c = arg_buf; *c; c++) {
                *c = *c == '_' ? '-' : *c;
            }
            arg = arg_buf;
        }
        err[0] = '\0';
        // flags without a value
        if (strcmp(arg, "--list-devices") == 0) {
            common_print_devices(true);
            return 1;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_usage(argv[0]);
            return 1;
        }
        if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            params->verbose = true;
            continue;
        }
        if (strcmp(arg, "--progress") == 0) {
            params->progress = true;
            continue;
        }
        if (strcmp(arg, "--no-warmup") == 0) {
            params->no_warmup = true;
            continue;
        }

        if (i + 1 >= argc) {
            arg_error("unknown argument or missing value: %s", arg);
            return -1;
        }
        const char * val = argv[++i];
        bool ok = true;
        if (strcmp(arg, "-m") == 0 || strcmp(arg, "--model") == 0) {
            ok = split_str_list(val, &params->model);
        } else if (strcmp(arg, "-p") == 0 || strcmp(arg, "--n-prompt") == 0) {
            ok = parse_int_range(val, false, &params->n_prompt);
        } else if (strcmp(arg, "-n") == 0 || strcmp(arg, "--n-gen") == 0) {
            ok = parse_int_range(val, false, &params->n_gen);
        } else if (strcmp(arg, "-pg") == 0) {
            struct int_list pair = { 0 };
            ok = parse_int_range(val, false, &pair) && pair.n == 2 &&
                 int_list_push(&params->n_pg, pair.v[0]) && int_list_push(&params->n_pg, pair.v[1]);
            free(pair.v);
        } else if (strcmp(arg, "-d") == 0 || strcmp(arg, "--n-depth") == 0) {
            ok = parse_int_range(val, false, &params->n_depth);
        } else if (strcmp(arg, "-b") == 0 || strcmp(arg, "--batch-size") == 0) {
            ok = parse_int_range(val, false, &params->n_batch);
        } else if (strcmp(arg, "-ub") == 0 || strcmp(arg, "--ubatch-size") == 0) {
            ok = parse_int_range(val, false, &params->n_ubatch);
        } else if (strcmp(arg, "-ctk") == 0 || strcmp(arg, "--cache-type-k") == 0) {
            ok = parse_type_list(val, &params->type_k);
        } else if (strcmp(arg, "-ctv") == 0 || strcmp(arg, "--cache-type-v") == 0) {
            ok = parse_type_list(val, &params->type_v);
        } else if (strcmp(arg, "-t") == 0 || strcmp(arg, "--threads") == 0) {
            ok = parse_int_range(val, false, &params->n_threads);
        } else if (strcmp(arg, "-ngl") == 0 || strcmp(arg, "--n-gpu-layers") == 0) {
            ok = parse_int_range(val, true, &params->n_gpu_layers);
        } else if (strcmp(arg, "-fa") == 0 || strcmp(arg, "--flash-attn") == 0) {
            ok = parse_fa_list(val, &params->flash_attn);
        } else if (strcmp(arg, "-C") == 0 || strcmp(arg, "--cpu-mask") == 0) {
            ok = parse_cpu_mask_list(val, &params->cpu_mask, err, sizeof(err));
        } else if (strcmp(arg, "--cpu-strict") == 0) {
            ok = parse_bool_list(val, &params->cpu_strict);
        } else if (strcmp(arg, "--poll") == 0) {
            const int n0 = params->poll.n;
            ok = parse_int_range(val, false, &params->poll);
            for (int k = n0; ok && k < params->poll.n; k++) {
                if (params->poll.v[k] > 100) {
                    snprintf(err, sizeof(err), "poll level %d is out of range 0...100", params->poll.v[k]);
                    ok = false;
                }
            }
        } else if (strcmp(arg, "-ncmoe") == 0 || strcmp(arg, "--n-cpu-moe") == 0) {
            ok = parse_int_range(val, false, &params->n_cpu_moe);
        } else if (strcmp(arg, "-sm") == 0 || strcmp(arg, "--split-mode") == 0) {
            ok = parse_split_mode_list(val, &params->split_mode);
        } else if (strcmp(arg, "-mg") == 0 || strcmp(arg, "--main-gpu") == 0) {
            // llama.cpp replaces the list rather than appending to it
            params->main_gpu.n = 0;
            ok = parse_int_range(val, false, &params->main_gpu);
        } else if (strcmp(arg, "-nkvo") == 0 || strcmp(arg, "--no-kv-offload") == 0) {
            ok = parse_bool_list(val, &params->no_kv_offload);
        } else if (strcmp(arg, "-mmp") == 0 || strcmp(arg, "--mmap") == 0) {
            ok = parse_bool_list(val, &params->use_mmap);
        } else if (strcmp(arg, "-dio") == 0 || strcmp(arg, "--direct-io") == 0) {
            ok = parse_bool_list(val, &params->use_direct_io);
        } else if (strcmp(arg, "-embd") == 0 || strcmp(arg, "--embeddings") == 0) {
            ok = parse_bool_list(val, &params->embeddings);
        } else if (strcmp(arg, "-nopo") == 0 || strcmp(arg, "--no-op-offload") == 0) {
            ok = parse_bool_list(val, &params->no_op_offload);
        } else if (strcmp(arg, "--no-host") == 0) {
            ok = parse_bool_list(val, &params->no_host);
        } else if (strcmp(arg, "-ts") == 0 || strcmp(arg, "--tensor-split") == 0) {
            ok = parse_ts_list(val, &params->tensor_split, err, sizeof(err));
        } else if (strcmp(arg, "-dev") == 0 || strcmp(arg, "--device") == 0) {
            ok = parse_dev_list(val, &params->devices, err, sizeof(err));
        } else if (strcmp(arg, "-ot") == 0 || strcmp(arg, "--override-tensor") == 0) {
            ok = parse_ot_list(val, &params->overrides, err, sizeof(err));
        } else if (strcmp(arg, "--numa") == 0) {
            if (strcmp(val, "distribute") == 0 || val[0] == '\0') {
                params->numa = GGML_NUMA_STRATEGY_DISTRIBUTE;
            } else if (strcmp(val, "isolate") == 0) {
                params->numa = GGML_NUMA_STRATEGY_ISOLATE;
            } else if (strcmp(val, "numactl") == 0) {
                params->numa = GGML_NUMA_STRATEGY_NUMACTL;
            } else {
                ok = false;
            }
        } else if (strcmp(arg, "--prio") == 0) {
            const char * q = val;
            long v;
            ok = scan_int(&q, true, &v) && *q == '\0' && v >= GGML_SCHED_PRIO_LOW && v <= GGML_SCHED_PRIO_REALTIME;
            params->prio = ok ? (int) v : params->prio;
        } else if (strcmp(arg, "-r") == 0 || strcmp(arg, "--repetitions") == 0) {
            const char * p = val;
            long v;
            ok = scan_int(&p, false, &v) && *p == '\0' && v >= 1;
            params->reps = ok ? (int) v : params->reps;
        } else if (strcmp(arg, "--delay") == 0) {
            const char * p = val;
            long v;
            ok = scan_int(&p, false, &v) && *p == '\0';
            params->delay = ok ? (int) v : 0;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            ok = output_format_from_str(val, &params->output_format);
        } else if (strcmp(arg, "-oe") == 0 || strcmp(arg, "--output-err") == 0) {
            ok = output_format_from_str(val, &params->output_format_stderr);
        } else {
            arg_error("unknown argument: %s", arg);
            return -1;
        }
        if (!ok) {
            if (err[0]) {
                arg_error("invalid value for %s: '%s': %s", arg, val, err);
            } else {
                arg_error("invalid value for %s: '%s'", arg, val);
            }
            return -1;
        }
    }

    // an option not given takes llama.cpp's default
    bool ok = true;
    if (params->model.n == 0) {
        ok = ok && str_list_push(&params->model, DEFAULT_MODEL, strlen(DEFAULT_MODEL));
    }
    if (params->n_prompt.n == 0) {
        ok = ok && int_list_push(&params->n_prompt, 512);
    }
    if (params->n_gen.n == 0) {
        ok = ok && int_list_push(&params->n_gen, 128);
    }
    if (params->n_depth.n == 0) {
        ok = ok && int_list_push(&params->n_depth, 0);
    }
    if (params->n_batch.n == 0) {
        ok = ok && int_list_push(&params->n_batch, 2048);
    }
    if (params->n_ubatch.n == 0) {
        ok = ok && int_list_push(&params->n_ubatch, 512);
    }
    if (params->type_k.n == 0) {
        ok = ok && int_list_push(&params->type_k, GGML_TYPE_F16);
    }
    if (params->type_v.n == 0) {
        ok = ok && int_list_push(&params->type_v, GGML_TYPE_F16);
    }
    if (params->n_threads.n == 0) {
        ok = ok && int_list_push(&params->n_threads, common_cpu_get_num_math());
    }
    if (params->flash_attn.n == 0) {
        ok = ok && int_list_push(&params->flash_attn, LLAMA_FLASH_ATTN_TYPE_AUTO);
    }
    if (params->n_gpu_layers.n == 0) {
        ok = ok && int_list_push(&params->n_gpu_layers, -1);
    }
    if (params->cpu_mask.n == 0) {
        ok = ok && str_list_push(&params->cpu_mask, "0x0", 3);
    }
    struct { struct int_list * l; int def; } int_defaults[] = {
        { &params->cpu_strict, 0 }, { &params->poll, 50 }, { &params->n_cpu_moe, 0 },
        { &params->split_mode, LLAMA_SPLIT_MODE_LAYER }, { &params->main_gpu, 0 }, { &params->no_kv_offload, 0 },
        { &params->use_mmap, 1 }, { &params->use_direct_io, 0 }, { &params->embeddings, 0 },
        { &params->no_op_offload, 0 }, { &params->no_host, 0 },
    };
    for (size_t k = 0; k < sizeof(int_defaults) / sizeof(int_defaults[0]); k++) {
        if (int_defaults[k].l->n == 0) {
            ok = ok && int_list_push(int_defaults[k].l, int_defaults[k].def);
        }
    }
    if (params->tensor_split.n == 0) {
        const float zero[BENCH_MAX_DEVICES] = { 0 };
        ok = ok && ts_list_push(&params->tensor_split, zero);
    }
    if (params->devices.n == 0) {
        struct bench_devices d = { .is_auto = true };
        ok = ok && dev_list_push(&params->devices, &d);
    }
    if (params->overrides.n == 0) {
        struct bench_overrides o = { 0 };
        ok = ok && ot_list_push(&params->overrides, &o);
    }
    if (!ok) {
        arg_error("out of memory");
        return -1;
    }
    for (int i = 0; i < params->n_batch.n; i++) {
        if (params->n_batch.v[i] < 1) {
            arg_error("batch size must be >= 1");
            return -1;
        }
    }
    for (int i = 0; i < params->n_ubatch.n; i++) {
        if (params->n_ubatch.v[i] < 1) {
            arg_error("ubatch size must be >= 1");
            return -1;
        }
    }
    for (int i = 0; i < params->n_threads.n; i++) {
        if (params->n_threads.v[i] < 1 || params->n_threads.v[i] > GGML_MAX_N_THREADS) {
            arg_error("thread count must be in [1, %d]", GGML_MAX_N_THREADS);
            return -1;
        }
    }
    return 0;
}

static void cmd_params_free(struct cmd_params * p) {
    str_list_free(&p->model);
    str_list_free(&p->cpu_mask);
    struct int_list * lists[] = { &p->n_prompt, &p->n_gen, &p->n_pg, &p->n_depth, &p->n_batch, &p->n_ubatch,
                                  &p->type_k, &p->type_v, &p->n_threads, &p->flash_attn, &p->n_gpu_layers,
                                  &p->cpu_strict, &p->poll, &p->n_cpu_moe, &p->split_mode, &p->main_gpu,
                                  &p->no_kv_offload, &p->use_mmap, &p->use_direct_io, &p->embeddings,
                                  &p->no_op_offload, &p->no_host };
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        free(lists[i]->v);
    }
    free(p->tensor_split.v);
    free(p->devices.v);
    for (int i = 0; i < p->overrides.n; i++) {
        bench_overrides_free(&p->overrides.v[i]);
    }
    free(p->overrides.v);
    memset(p, 0, sizeof(*p));
}

static bool list_is_default(const struct int_list * l, int def) {
    return l->n == 1 && l->v[0] == def;
}

//
// tests
//

struct test_inst {
    const char * model;
    int n_prompt, n_gen, n_depth;
    int n_batch, n_ubatch;
    enum ggml_type type_k, type_v;
    int n_threads;
    int n_gpu_layers;
    enum llama_flash_attn_type flash_attn;
    // point into cmd_params, which outlives every test
    const char * cpu_mask;
    bool cpu_strict;
    int  poll;
    int  n_cpu_moe;
    enum llama_split_mode split_mode;
    int  main_gpu;
    bool no_kv_offload;
    const struct bench_devices * devices;
    const float * tensor_split; // BENCH_MAX_DEVICES values
    const struct bench_overrides * overrides;
    bool use_mmap;
    bool use_direct_io;
    bool embeddings;
    bool no_op_offload;
    bool no_host;
};

struct test_result {
    struct test_inst inst;
    char     model_type[128];
    uint64_t model_size;
    uint64_t model_n_params;
    char     test_time[32];
    uint64_t * samples_ns;
    int      n_samples;
    uint64_t weight_bytes_per_token; // 0 = unknown
    double * read_bps; // tg tests with known weight bytes: the read bandwidth measured before each sample
};

// a tg test relates its weight bytes per second to the machine's read bandwidth
static bool is_bandwidth_test(const struct test_inst * inst, uint64_t weight_bytes_per_token) {
    return inst->n_gen > 0 && inst->n_prompt == 0 && weight_bytes_per_token > 0;
}

static double sample_ts(const struct test_result * t, int i) {
    const int n_tokens = t->inst.n_prompt + t->inst.n_gen;
    return 1e9 * n_tokens / (double) t->samples_ns[i];
}

static double avg_ts(const struct test_result * t) {
    if (t->n_samples == 0) {
        return 0;
    }
    double s = 0;
    for (int i = 0; i < t->n_samples; i++) {
        s += sample_ts(t, i);
    }
    return s / t->n_samples;
}

// sample standard deviation, in the same form as llama.cpp so the figures compare
static double stdev_of(const double * v, int n) {
    if (n <= 1) {
        return 0;
    }
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        sum += v[i];
        sq += v[i] * v[i];
    }
    const double mean = sum / n;
    const double var = sq / (n - 1) - mean * mean * n / (n - 1);
    return var > 0 ? sqrt(var) : 0;
}

static double stdev_ts(const struct test_result * t) {
    double * v = malloc((size_t) (t->n_samples > 0 ? t->n_samples : 1) * sizeof(double));
    if (!v) {
        return 0;
    }
    for (int i = 0; i < t->n_samples; i++) {
        v[i] = sample_ts(t, i);
    }
    const double s = stdev_of(v, t->n_samples);
    free(v);
    return s;
}

static uint64_t avg_ns(const struct test_result * t) {
    if (t->n_samples == 0) {
        return 0;
    }
    uint64_t s = 0;
    for (int i = 0; i < t->n_samples; i++) {
        s += t->samples_ns[i];
    }
    return s / (uint64_t) t->n_samples;
}

static uint64_t stdev_ns(const struct test_result * t) {
    double * v = malloc((size_t) (t->n_samples > 0 ? t->n_samples : 1) * sizeof(double));
    if (!v) {
        return 0;
    }
    for (int i = 0; i < t->n_samples; i++) {
        v[i] = (double) t->samples_ns[i];
    }
    const double s = stdev_of(v, t->n_samples);
    free(v);
    return (uint64_t) s;
}

static const char * get_backend(void) {
    static char buf[256];
    buf[0] = '\0';
    for (size_t i = 0; i < ggml_backend_reg_count(); i++) {
        const char * name = ggml_backend_reg_name(ggml_backend_reg_get(i));
        if (!name || strcmp(name, "CPU") == 0) {
            continue;
        }
        if (buf[0]) {
            strncat(buf, ",", sizeof(buf) - strlen(buf) - 1);
        }
        strncat(buf, name, sizeof(buf) - strlen(buf) - 1);
    }
    return buf[0] ? buf : "CPU";
}

// descriptions of the devices of type a or b, comma-separated (static buffer)
static const char * dev_descriptions(enum ggml_backend_dev_type a, enum ggml_backend_dev_type b) {
    static char buf[512];
    buf[0] = '\0';
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        const enum ggml_backend_dev_type t = ggml_backend_dev_type(dev);
        if (t == a || t == b) {
            const char * d = ggml_backend_dev_description(dev);
            if (buf[0]) {
                strncat(buf, ", ", sizeof(buf) - strlen(buf) - 1);
            }
            strncat(buf, d ? d : "", sizeof(buf) - strlen(buf) - 1);
        }
    }
    return buf;
}

//
// fields: llama.cpp's names, order and types (csv / json / jsonl)
//

enum field_type { F_STRING, F_BOOL, F_INT, F_FLOAT };

static const char * const k_fields[] = {
    "build_commit",   "build_number",   "cpu_info",      "gpu_info",       "backends",
    "model_filename", "model_type",     "model_size",    "model_n_params", "n_batch",
    "n_ubatch",       "n_threads",      "cpu_mask",      "cpu_strict",     "poll",
    "type_k",         "type_v",         "n_gpu_layers",  "n_cpu_moe",      "split_mode",
    "main_gpu",       "no_kv_offload",  "flash_attn",    "devices",        "tensor_split",
    "tensor_buft_overrides",            "use_mmap",      "use_direct_io",  "embeddings",
    "no_op_offload",  "no_host",        "fit_target",    "fit_min_ctx",
    "n_prompt",       "n_gen",          "n_depth",
    "test_time",      "avg_ns",         "stddev_ns",     "avg_ts",         "stddev_ts",
};
#define N_FIELDS ((int) (sizeof(k_fields) / sizeof(k_fields[0])))

static enum field_type field_type(const char * f) {
    static const char * const ints[] = {
        "build_number", "n_batch", "n_ubatch", "n_threads", "poll", "model_size", "model_n_params",
        "n_gpu_layers", "main_gpu", "n_prompt", "n_gen", "n_depth", "avg_ns", "stddev_ns", "no_op_offload",
        "n_cpu_moe", "fit_target", "fit_min_ctx", "flash_attn",
    };
    static const char * const bools[] = { "no_kv_offload", "cpu_strict", "use_mmap", "use_direct_io", "embeddings",
                                          "no_host" };
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        if (strcmp(f, ints[i]) == 0) {
            return F_INT;
        }
    }
    for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
        if (strcmp(f, bools[i]) == 0) {
            return F_BOOL;
        }
    }
    if (strcmp(f, "avg_ts") == 0 || strcmp(f, "stddev_ts") == 0) {
        return F_FLOAT;
    }
    return F_STRING;
}

// the value of field i as llama.cpp formats it (std::to_string: integers plain, doubles with %f)
static void field_value(const struct test_result * t, int i, char * buf, size_t n) {
    const char * f = k_fields[i];
    const struct test_inst * in = &t->inst;
    if (strcmp(f, "build_commit") == 0) {
        snprintf(buf, n, "%s", LLAMA_COMMIT);
    } else if (strcmp(f, "build_number") == 0) {
        snprintf(buf, n, "%d", LLAMA_BUILD_NUMBER);
    } else if (strcmp(f, "cpu_info") == 0) {
        snprintf(buf, n, "%s", dev_descriptions(GGML_BACKEND_DEVICE_TYPE_CPU, GGML_BACKEND_DEVICE_TYPE_ACCEL));
    } else if (strcmp(f, "gpu_info") == 0) {
        snprintf(buf, n, "%s", dev_descriptions(GGML_BACKEND_DEVICE_TYPE_GPU, GGML_BACKEND_DEVICE_TYPE_IGPU));
    } else if (strcmp(f, "backends") == 0) {
        snprintf(buf, n, "%s", get_backend());
    } else if (strcmp(f, "model_filename") == 0) {
        snprintf(buf, n, "%s", in->model);
    } else if (strcmp(f, "model_type") == 0) {
        snprintf(buf, n, "%s", t->model_type);
    } else if (strcmp(f, "model_size") == 0) {
        snprintf(buf, n, "%llu", (unsigned long long) t->model_size);
    } else if (strcmp(f, "model_n_params") == 0) {
        snprintf(buf, n, "%llu", (unsigned long long) t->model_n_params);
    } else if (strcmp(f, "n_batch") == 0) {
        snprintf(buf, n, "%d", in->n_batch);
    } else if (strcmp(f, "n_ubatch") == 0) {
        snprintf(buf, n, "%d", in->n_ubatch);
    } else if (strcmp(f, "n_threads") == 0) {
        snprintf(buf, n, "%d", in->n_threads);
    } else if (strcmp(f, "cpu_mask") == 0) {
        snprintf(buf, n, "%s", in->cpu_mask);
    } else if (strcmp(f, "cpu_strict") == 0) {
        snprintf(buf, n, "%d", in->cpu_strict);
    } else if (strcmp(f, "poll") == 0) {
        snprintf(buf, n, "%d", in->poll);
    } else if (strcmp(f, "type_k") == 0) {
        snprintf(buf, n, "%s", ggml_type_name(in->type_k));
    } else if (strcmp(f, "type_v") == 0) {
        snprintf(buf, n, "%s", ggml_type_name(in->type_v));
    } else if (strcmp(f, "n_gpu_layers") == 0) {
        snprintf(buf, n, "%d", in->n_gpu_layers);
    } else if (strcmp(f, "n_cpu_moe") == 0) {
        snprintf(buf, n, "%d", in->n_cpu_moe);
    } else if (strcmp(f, "split_mode") == 0) {
        snprintf(buf, n, "%s", split_mode_str(in->split_mode));
    } else if (strcmp(f, "main_gpu") == 0) {
        snprintf(buf, n, "%d", in->main_gpu);
    } else if (strcmp(f, "no_kv_offload") == 0) {
        snprintf(buf, n, "%d", in->no_kv_offload);
    } else if (strcmp(f, "flash_attn") == 0) {
        snprintf(buf, n, "%d", (int) in->flash_attn);
    } else if (strcmp(f, "devices") == 0) {
        bench_devices_str(in->devices, buf, n);
    } else if (strcmp(f, "tensor_split") == 0) {
        bench_tensor_split_str(in->tensor_split, buf, n);
    } else if (strcmp(f, "tensor_buft_overrides") == 0) {
        bench_overrides_str(in->overrides, buf, n);
    } else if (strcmp(f, "use_mmap") == 0) {
        snprintf(buf, n, "%d", in->use_mmap);
    } else if (strcmp(f, "use_direct_io") == 0) {
        snprintf(buf, n, "%d", in->use_direct_io);
    } else if (strcmp(f, "embeddings") == 0) {
        snprintf(buf, n, "%d", in->embeddings);
    } else if (strcmp(f, "no_op_offload") == 0) {
        snprintf(buf, n, "%d", in->no_op_offload);
    } else if (strcmp(f, "no_host") == 0) {
        snprintf(buf, n, "%d", in->no_host);
    } else if (strcmp(f, "n_prompt") == 0) {
        snprintf(buf, n, "%d", in->n_prompt);
    } else if (strcmp(f, "n_gen") == 0) {
        snprintf(buf, n, "%d", in->n_gen);
    } else if (strcmp(f, "n_depth") == 0) {
        snprintf(buf, n, "%d", in->n_depth);
    } else if (strcmp(f, "test_time") == 0) {
        snprintf(buf, n, "%s", t->test_time);
    } else if (strcmp(f, "avg_ns") == 0) {
        snprintf(buf, n, "%llu", (unsigned long long) avg_ns(t));
    } else if (strcmp(f, "stddev_ns") == 0) {
        snprintf(buf, n, "%llu", (unsigned long long) stdev_ns(t));
    } else if (strcmp(f, "avg_ts") == 0) {
        snprintf(buf, n, "%f", avg_ts(t));
    } else if (strcmp(f, "stddev_ts") == 0) {
        snprintf(buf, n, "%f", stdev_ts(t));
    } else {
        // fit_target, fit_min_ctx: -fitt / -fitc are not implemented; llama.cpp's "off" values
        snprintf(buf, n, "0");
    }
}

//
// printers
//

static void print_csv_escaped(FILE * f, const char * s) {
    fputc('"', f);
    for (const char * c = s; *c; c++) {
        if (*c == '"') {
            fputc('"', f);
        }
        fputc(*c, f);
    }
    fputc('"', f);
}

static void print_json_escaped(FILE * f, const char * s) {
    for (const unsigned char * c = (const unsigned char *) s; *c; c++) {
        if (*c == '"') {
            fputs("\\\"", f);
        } else if (*c == '\\') {
            fputs("\\\\", f);
        } else if (*c <= 0x1f) {
            fprintf(f, "\\u%04x", *c);
        } else {
            fputc(*c, f);
        }
    }
}

static void print_json_value(FILE * f, int i, const char * v) {
    switch (field_type(k_fields[i])) {
        case F_STRING:
            fputc('"', f);
            print_json_escaped(f, v);
            fputc('"', f);
            break;
        case F_BOOL:
            fputs(strcmp(v, "0") == 0 ? "false" : "true", f);
            break;
        default:
            fputs(v, f);
            break;
    }
}

// std::ostream's default formatting of a double (6 significant digits, %g-like)
static void print_samples(FILE * f, const struct test_result * t, bool ts) {
    for (int i = 0; i < t->n_samples; i++) {
        if (ts) {
            fprintf(f, "%s%g", i ? ", " : "", sample_ts(t, i));
        } else {
            fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long) t->samples_ns[i]);
        }
    }
}

struct md_field {
    const char * name;
    const char * display;
    int width;
};

struct printer {
    enum output_format fmt;
    FILE * fout;
    bool first;
    struct md_field md[32];
    int n_md;
};

static void md_add(struct printer * p, const char * name, const char * display, int width) {
    p->md[p->n_md].name = name;
    p->md[p->n_md].display = display;
    p->md[p->n_md].width = width;
    p->n_md++;
}

static void printer_header(struct printer * p, const struct cmd_params * params) {
    FILE * f = p->fout;
    p->first = true;
    switch (p->fmt) {
        case OUT_NONE:
        case OUT_JSONL:
            break;
        case OUT_CSV:
            for (int i = 0; i < N_FIELDS; i++) {
                fprintf(f, "%s%s", i ? "," : "", k_fields[i]);
            }
            fprintf(f, "\n");
            break;
        case OUT_JSON:
            fprintf(f, "[\n");
            break;
        case OUT_MD: {
            p->n_md = 0;
            md_add(p, "model", "model", -30);
            md_add(p, "size", "size", 10);
            md_add(p, "params", "params", 10);
            md_add(p, "backend", "backend", -10);
            const bool is_cpu = strstr(get_backend(), "CPU") != NULL;
            if (!is_cpu) {
                md_add(p, "n_gpu_layers", "ngl", 3);
            }
            if (!list_is_default(&params->n_cpu_moe, 0)) {
                md_add(p, "n_cpu_moe", "n_cpu_moe", 10);
            }
            // llama.cpp always shows the thread count on CPU backends
            md_add(p, "n_threads", "threads", 7);
            if (params->cpu_mask.n != 1 || strcmp(params->cpu_mask.v[0], "0x0") != 0) {
                md_add(p, "cpu_mask", "cpu_mask", -10);
            }
            if (!list_is_default(&params->cpu_strict, 0)) {
                md_add(p, "cpu_strict", "cpu_strict", 10);
            }
            if (!list_is_default(&params->poll, 50)) {
                md_add(p, "poll", "poll", 10);
            }
            if (!list_is_default(&params->n_batch, 2048)) {
                md_add(p, "n_batch", "n_batch", 7);
            }
            if (!list_is_default(&params->n_ubatch, 512)) {
                md_add(p, "n_ubatch", "n_ubatch", 8);
            }
            if (!list_is_default(&params->type_k, GGML_TYPE_F16)) {
                md_add(p, "type_k", "type_k", 6);
            }
            if (!list_is_default(&params->type_v, GGML_TYPE_F16)) {
                md_add(p, "type_v", "type_v", 6);
            }
            if (!list_is_default(&params->main_gpu, 0)) {
                md_add(p, "main_gpu", "main_gpu", 10);
            }
            if (!list_is_default(&params->split_mode, LLAMA_SPLIT_MODE_LAYER)) {
                md_add(p, "split_mode", "sm", 6);
            }
            if (!list_is_default(&params->no_kv_offload, 0)) {
                md_add(p, "no_kv_offload", "nkvo", 13);
            }
            if (!list_is_default(&params->flash_attn, LLAMA_FLASH_ATTN_TYPE_AUTO)) {
                md_add(p, "flash_attn", "fa", 3);
            }
            if (params->devices.n != 1 || !params->devices.v[0].is_auto) {
                md_add(p, "devices", "dev", -12);
            }
            bool ts_default = params->tensor_split.n == 1;
            for (int k = 0; ts_default && k < BENCH_MAX_DEVICES; k++) {
                ts_default = params->tensor_split.v[k] == 0.0f;
            }
            if (!ts_default) {
                md_add(p, "tensor_split", "ts", -12);
            }
            if (params->overrides.n != 1 || params->overrides.v[0].n != 0) {
                md_add(p, "tensor_buft_overrides", "ot", -21);
            }
            if (!list_is_default(&params->use_mmap, 1)) {
                md_add(p, "use_mmap", "mmap", 4);
            }
            if (!list_is_default(&params->use_direct_io, 0)) {
                md_add(p, "use_direct_io", "dio", 3);
            }
            if (!list_is_default(&params->embeddings, 0)) {
                md_add(p, "embeddings", "embd", 10);
            }
            if (!list_is_default(&params->no_op_offload, 0)) {
                md_add(p, "no_op_offload", "nopo", 4);
            }
            if (!list_is_default(&params->no_host, 0)) {
                md_add(p, "no_host", "noh", 4);
            }
            md_add(p, "test", "test", 15);
            md_add(p, "t/s", "t/s", 20);

            fprintf(f, "|");
            for (int i = 0; i < p->n_md; i++) {
                fprintf(f, " %*s |", p->md[i].width, p->md[i].display);
            }
            fprintf(f, "\n|");
            for (int i = 0; i < p->n_md; i++) {
                const int w = abs(p->md[i].width);
                fputc(' ', f);
                for (int k = 0; k < w - 1; k++) {
                    fputc('-', f);
                }
                fprintf(f, "%s |", p->md[i].width > 0 ? ":" : "-");
            }
            fprintf(f, "\n");
            break;
        }
    }
}

static void test_name(const struct test_result * t, char * buf, size_t n) {
    const struct test_inst * in = &t->inst;
    if (in->n_prompt > 0 && in->n_gen == 0) {
        snprintf(buf, n, "pp%d", in->n_prompt);
    } else if (in->n_gen > 0 && in->n_prompt == 0) {
        snprintf(buf, n, "tg%d", in->n_gen);
    } else {
        snprintf(buf, n, "pp%d+tg%d", in->n_prompt, in->n_gen);
    }
    if (in->n_depth > 0) {
        const size_t len = strlen(buf);
        snprintf(buf + len, n - len, " @ d%d", in->n_depth);
    }
}

static void format_size(uint64_t size, char * buf, size_t n) {
    if (size < 1024ull * 1024 * 1024) {
        snprintf(buf, n, "%.2f MiB", (double) size / 1024.0 / 1024.0);
    } else {
        snprintf(buf, n, "%.2f GiB", (double) size / 1024.0 / 1024.0 / 1024.0);
    }
}

static void printer_test(struct printer * p, const struct test_result * t) {
    FILE * f = p->fout;
    char v[1024];
    switch (p->fmt) {
        case OUT_NONE:
            break;
        case OUT_CSV:
            for (int i = 0; i < N_FIELDS; i++) {
                field_value(t, i, v, sizeof(v));
                if (i) {
                    fputc(',', f);
                }
                print_csv_escaped(f, v);
            }
            fprintf(f, "\n");
            break;
        case OUT_JSON:
            if (!p->first) {
                fprintf(f, ",\n");
            }
            p->first = false;
            fprintf(f, "  {\n");
            for (int i = 0; i < N_FIELDS; i++) {
                field_value(t, i, v, sizeof(v));
                fprintf(f, "    \"%s\": ", k_fields[i]);
                print_json_value(f, i, v);
                fprintf(f, ",\n");
            }
            fprintf(f, "    \"samples_ns\": [ ");
            print_samples(f, t, false);
            fprintf(f, " ],\n    \"samples_ts\": [ ");
            print_samples(f, t, true);
            fprintf(f, " ]\n  }");
            break;
        case OUT_JSONL:
            fprintf(f, "{");
            for (int i = 0; i < N_FIELDS; i++) {
                field_value(t, i, v, sizeof(v));
                fprintf(f, "\"%s\": ", k_fields[i]);
                print_json_value(f, i, v);
                fprintf(f, ", ");
            }
            fprintf(f, "\"samples_ns\": [ ");
            print_samples(f, t, false);
            fprintf(f, " ],\"samples_ts\": [ ");
            print_samples(f, t, true);
            fprintf(f, " ]}\n");
            break;
        case OUT_MD:
            fprintf(f, "|");
            for (int i = 0; i < p->n_md; i++) {
                const char * name = p->md[i].name;
                int width = p->md[i].width;
                if (strcmp(name, "model") == 0) {
                    snprintf(v, sizeof(v), "%s", t->model_type);
                } else if (strcmp(name, "size") == 0) {
                    format_size(t->model_size, v, sizeof(v));
                } else if (strcmp(name, "params") == 0) {
                    if (t->model_n_params < 1000ull * 1000 * 1000) {
                        snprintf(v, sizeof(v), "%.2f M", (double) t->model_n_params / 1e6);
                    } else {
                        snprintf(v, sizeof(v), "%.2f B", (double) t->model_n_params / 1e9);
                    }
                } else if (strcmp(name, "backend") == 0) {
                    snprintf(v, sizeof(v), "%s", get_backend());
                } else if (strcmp(name, "test") == 0) {
                    test_name(t, v, sizeof(v));
                } else if (strcmp(name, "t/s") == 0) {
                    snprintf(v, sizeof(v), "%.2f ± %.2f", avg_ts(t), stdev_ts(t));
                    // '±' is two bytes in UTF-8 but one column
                    width += 1;
                } else {
                    int fi = 0;
                    while (fi < N_FIELDS && strcmp(k_fields[fi], name) != 0) {
                        fi++;
                    }
                    field_value(t, fi < N_FIELDS ? fi : 0, v, sizeof(v));
                }
                fprintf(f, " %*s |", width, v);
            }
            fprintf(f, "\n");
            break;
    }
    fflush(f);
}

static void printer_footer(struct printer * p) {
    switch (p->fmt) {
        case OUT_JSON:
            fprintf(p->fout, "\n]\n");
            break;
        case OUT_MD:
            fprintf(p->fout, "\nbuild: %s (%d)\n", LLAMA_COMMIT, LLAMA_BUILD_NUMBER);
            break;
        default:
            break;
    }
    fflush(p->fout);
}

//
// weight bytes read per generated token, from the GGUF tensor index
//

static bool str_ends_with(const char * s, const char * suffix) {
    const size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

// Every matrix multiplied by the hidden state is read in full for each token; tables indexed by token
// (token_embd, unless it doubles as the output matrix) contribute one row. Norms and biases are small
// vectors and are left out, as in BENCHMARKS.md. 0 when the file cannot be read.
static uint64_t weight_bytes_per_token(const char * path) {
    struct ggml_context * meta = NULL;
    struct gguf_init_params gp = { .no_alloc = true, .ctx = &meta };
    struct gguf_context * g = gguf_init_from_file(path, gp);
    if (!g) {
        return 0;
    }
    bool has_output = false;
    for (struct ggml_tensor * t = ggml_get_first_tensor(meta); t; t = ggml_get_next_tensor(meta, t)) {
        if (strcmp(t->name, "output.weight") == 0) {
            has_output = true;
        }
    }
    uint64_t total = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(meta); t; t = ggml_get_next_tensor(meta, t)) {
        if (ggml_n_dims(t) < 2 || !str_ends_with(t->name, ".weight")) {
            continue;
        }
        const bool lookup = strcmp(t->name, "token_embd.weight") == 0 || strstr(t->name, "position_embd") ||
                            strstr(t->name, "token_types");
        if (lookup) {
            total += ggml_row_size(t->type, t->ne[0]);
            if (!has_output && strcmp(t->name, "token_embd.weight") == 0) {
                total += ggml_nbytes(t); // tied output matrix
            }
        } else {
            total += ggml_nbytes(t);
        }
    }
    gguf_free(g);
    ggml_free(meta);
    return total;
}

//
// machine read bandwidth: a STREAM-like read of a large buffer with n threads. On a shared machine the
// bandwidth available moves by tens of percent within minutes, so a tg test measures it just before each of
// its repetitions and relates each repetition to its own measurement.
//

#define BW_BUF_BYTES (1ull << 30)
#define BW_PASSES    2 // per measurement, the best one counts

struct bw_shared {
    const uint64_t * buf;
    size_t n_words;
    int n_threads;
    pthread_barrier_t barrier;
    volatile uint64_t sink[GGML_MAX_N_THREADS];
};

struct bw_worker {
    struct bw_shared * sh;
    int ith;
};

static uint64_t bw_read_slice(const uint64_t * p, size_t n) {
    // independent accumulators so the loop is bound by loads, not by one add chain
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        a0 += p[i + 0];
        a1 += p[i + 1];
        a2 += p[i + 2];
        a3 += p[i + 3];
        a4 += p[i + 4];
        a5 += p[i + 5];
        a6 += p[i + 6];
        a7 += p[i + 7];
    }
    for (; i < n; i++) {
        a0 += p[i];
    }
    return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

static void bw_run_one(struct bw_worker * w) {
    struct bw_shared * sh = w->sh;
    const size_t per = sh->n_words / (size_t) sh->n_threads;
    const size_t begin = per * (size_t) w->ith;
    const size_t n = w->ith == sh->n_threads - 1 ? sh->n_words - begin : per;
    sh->sink[w->ith] += bw_read_slice(sh->buf + begin, n);
}

static void * bw_thread(void * arg) {
    struct bw_worker * w = arg;
    for (int r = 0; r < BW_PASSES; r++) {
        pthread_barrier_wait(&w->sh->barrier);
        bw_run_one(w);
        pthread_barrier_wait(&w->sh->barrier);
    }
    return NULL;
}

// the probe's buffer, filled once (distinct values on every page so nothing is backed by a shared zero page).
// It asks for transparent huge pages as the CPU backend does for weight buffers (and as the kernel maps large
// page-cache folios of an mmapped model): on 4 KiB pages the same read is up to a third slower, which would
// understate the machine's bandwidth.
static uint64_t * bw_buffer(void) {
    static uint64_t * buf = NULL;
    if (buf == NULL) {
        if (posix_memalign((void **) &buf, (size_t) 2 << 20, BW_BUF_BYTES) != 0) {
            buf = NULL;
            return NULL;
        }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        (void) madvise(buf, BW_BUF_BYTES, MADV_HUGEPAGE);
#endif
        const size_t n_words = BW_BUF_BYTES / sizeof(uint64_t);
        for (size_t i = 0; i < n_words; i++) {
            buf[i] = (uint64_t) i * 0x9E3779B97F4A7C15ull;
        }
    }
    return buf;
}

// bytes per second, best of BW_PASSES reads of the whole buffer by n_threads threads; 0 on failure
static double measure_read_bandwidth(int n_threads) {
    uint64_t * buf = bw_buffer();
    if (buf == NULL) {
        return 0;
    }
    const size_t n_words = BW_BUF_BYTES / sizeof(uint64_t);

    struct bw_shared sh;
    memset((void *) &sh, 0, sizeof(sh));
    sh.buf = buf;
    sh.n_words = n_words;
    sh.n_threads = n_threads;
    if (pthread_barrier_init(&sh.barrier, NULL, (unsigned) n_threads) != 0) {
        return 0;
    }
    struct bw_worker * workers = calloc((size_t) n_threads, sizeof(*workers));
    pthread_t * tids = calloc((size_t) n_threads, sizeof(*tids));
    if (!workers || !tids) {
        free(workers);
        free(tids);
        pthread_barrier_destroy(&sh.barrier);
        return 0;
    }
    for (int i = 0; i < n_threads; i++) {
        workers[i].sh = &sh;
        workers[i].ith = i;
    }
    for (int i = 1; i < n_threads; i++) {
        if (pthread_create(&tids[i], NULL, bw_thread, &workers[i]) != 0) {
            // threads that did start wait at a barrier sized for n_threads: they cannot be released cleanly
            fprintf(stderr, "llama-bench: failed to start bandwidth threads\n");
            exit(1);
        }
    }
    double best = 0;
    for (int r = 0; r < BW_PASSES; r++) {
        pthread_barrier_wait(&sh.barrier);
        const uint64_t t0 = time_ns();
        bw_run_one(&workers[0]);
        pthread_barrier_wait(&sh.barrier);
        const uint64_t t1 = time_ns();
        const double bps = (double) BW_BUF_BYTES / ((double) (t1 - t0) * 1e-9);
        best = bps > best ? bps : best;
    }
    for (int i = 1; i < n_threads; i++) {
        pthread_join(tids[i], NULL);
    }
    pthread_barrier_destroy(&sh.barrier);
    free(workers);
    free(tids);
    return best;
}


//
// running the tests
//

static bool test_prompt(struct llama_context * ctx, int n_prompt, int n_batch, int n_threads, llama_token * tokens) {
    llama_set_n_threads(ctx, n_threads, n_threads);
    const struct llama_vocab * vocab = llama_model_get_vocab(llama_get_model(ctx));
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    int n_processed = 0;
    while (n_processed < n_prompt) {
        const int n_tokens = n_prompt - n_processed < n_batch ? n_prompt - n_processed : n_batch;
        tokens[0] = n_processed == 0 && llama_vocab_get_add_bos(vocab) ? llama_vocab_bos(vocab) : rand() % n_vocab;
        for (int i = 1; i < n_tokens; i++) {
            tokens[i] = rand() % n_vocab;
        }
        const int res = llama_decode(ctx, llama_batch_get_one(tokens, n_tokens));
        if (res != 0) {
            fprintf(stderr, "test_prompt: failed to decode prompt batch, res = %d\n", res);
            return false;
        }
        n_processed += n_tokens;
    }
    llama_synchronize(ctx);
    return true;
}

static bool test_gen(struct llama_context * ctx, int n_gen, int n_threads) {
    llama_set_n_threads(ctx, n_threads, n_threads);
    const struct llama_vocab * vocab = llama_model_get_vocab(llama_get_model(ctx));
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    llama_token token = llama_vocab_get_add_bos(vocab) ? llama_vocab_bos(vocab) : rand() % n_vocab;
    for (int i = 0; i < n_gen; i++) {
        const int res = llama_decode(ctx, llama_batch_get_one(&token, 1));
        if (res != 0) {
            fprintf(stderr, "test_gen: failed to decode generation batch, res = %d\n", res);
            return false;
        }
        llama_synchronize(ctx);
        token = rand() % n_vocab;
    }
    return true;
}

static void null_log_callback(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) text;
    (void) user_data;
}

struct inst_list {
    struct test_inst * v;
    int n;
    int cap;
};

static bool inst_push(struct inst_list * l, struct test_inst t) {
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 16;
        struct test_inst * nv = realloc(l->v, (size_t) cap * sizeof(*nv));
        if (!nv) {
            return false;
        }
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = t;
    return true;
}

// llama.cpp's order: the model outermost so that each model is loaded once
static bool build_instances(const struct cmd_params * p, struct inst_list * out) {
    // model parameters outermost, then context parameters, in llama.cpp's order
    for (int im = 0; im < p->model.n; im++)
    for (int ingl = 0; ingl < p->n_gpu_layers.n; ingl++)
    for (int incm = 0; incm < p->n_cpu_moe.n; incm++)
    for (int ism = 0; ism < p->split_mode.n; ism++)
    for (int img = 0; img < p->main_gpu.n; img++)
    for (int idev = 0; idev < p->devices.n; idev++)
    for (int its = 0; its < p->tensor_split.n; its++)
    for (int iot = 0; iot < p->overrides.n; iot++)
    for (int immp = 0; immp < p->use_mmap.n; immp++)
    for (int idio = 0; idio < p->use_direct_io.n; idio++)
    for (int inoh = 0; inoh < p->no_host.n; inoh++)
    for (int iembd = 0; iembd < p->embeddings.n; iembd++)
    for (int inopo = 0; inopo < p->no_op_offload.n; inopo++)
    for (int ib = 0; ib < p->n_batch.n; ib++)
    for (int iub = 0; iub < p->n_ubatch.n; iub++)
    for (int ik = 0; ik < p->type_k.n; ik++)
    for (int iv = 0; iv < p->type_v.n; iv++)
    for (int inkvo = 0; inkvo < p->no_kv_offload.n; inkvo++)
    for (int ifa = 0; ifa < p->flash_attn.n; ifa++)
    for (int it = 0; it < p->n_threads.n; it++)
    for (int icm = 0; icm < p->cpu_mask.n; icm++)
    for (int ics = 0; ics < p->cpu_strict.n; ics++)
    for (int id = 0; id < p->n_depth.n; id++)
    for (int ipl = 0; ipl < p->poll.n; ipl++) {
        struct test_inst base = {
            .model = p->model.v[im],
            .n_depth = p->n_depth.v[id],
            .n_batch = p->n_batch.v[ib],
            .n_ubatch = p->n_ubatch.v[iub],
            .type_k = (enum ggml_type) p->type_k.v[ik],
            .type_v = (enum ggml_type) p->type_v.v[iv],
            .n_threads = p->n_threads.v[it],
            .n_gpu_layers = p->n_gpu_layers.v[ingl],
            .flash_attn = (enum llama_flash_attn_type) p->flash_attn.v[ifa],
            .cpu_mask = p->cpu_mask.v[icm],
            .cpu_strict = p->cpu_strict.v[ics] != 0,
            .poll = p->poll.v[ipl],
            .n_cpu_moe = p->n_cpu_moe.v[incm],
            .split_mode = (enum llama_split_mode) p->split_mode.v[ism],
            .main_gpu = p->main_gpu.v[img],
            .no_kv_offload = p->no_kv_offload.v[inkvo] != 0,
            .devices = &p->devices.v[idev],
            .tensor_split = p->tensor_split.v + (size_t) its * BENCH_MAX_DEVICES,
            .overrides = &p->overrides.v[iot],
            .use_mmap = p->use_mmap.v[immp] != 0,
            .use_direct_io = p->use_direct_io.v[idio] != 0,
            .embeddings = p->embeddings.v[iembd] != 0,
            .no_op_offload = p->no_op_offload.v[inopo] != 0,
            .no_host = p->no_host.v[inoh] != 0,
        };
        for (int i = 0; i < p->n_prompt.n; i++) {
            if (p->n_prompt.v[i] == 0) {
                continue;
            }
            struct test_inst t = base;
            t.n_prompt = p->n_prompt.v[i];
            if (!inst_push(out, t)) {
                return false;
            }
        }
        for (int i = 0; i < p->n_gen.n; i++) {
            if (p->n_gen.v[i] == 0) {
                continue;
            }
            struct test_inst t = base;
            t.n_gen = p->n_gen.v[i];
            if (!inst_push(out, t)) {
                return false;
            }
        }
        for (int i = 0; i + 1 < p->n_pg.n; i += 2) {
            if (p->n_pg.v[i] == 0 && p->n_pg.v[i + 1] == 0) {
                continue;
            }
            struct test_inst t = base;
            t.n_prompt = p->n_pg.v[i];
            t.n_gen = p->n_pg.v[i + 1];
            if (!inst_push(out, t)) {
                return false;
            }
        }
    }
    return true;
}

static int cmp_double(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

// median of n values (sorted in place)
static double median_of(double * v, int n) {
    qsort(v, (size_t) n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// the extra table: weight bytes read per second in tg tests against the read bandwidth measured just before
// each repetition
static void print_bandwidth_table(FILE * f, const struct test_result * results, int n) {
    bool any = false;
    for (int i = 0; i < n; i++) {
        any = any || (results[i].read_bps != NULL && results[i].n_samples > 0);
    }
    if (!any) {
        return;
    }
    fprintf(f, "\nweight bandwidth (tg: bytes of matmul weights + one embedding row per token; read bw: STREAM-like read "
               "of 1 GiB by the same thread count just before each repetition, best of %d passes, median over the "
               "repetitions; %% of bw: median over the repetitions of weights GB/s / that repetition's read bw)\n\n",
            BW_PASSES);
    fprintf(f, "| %-30s | %7s | %15s | %14s | %12s | %11s | %9s |\n", "model", "threads", "test", "weights/token",
            "weights GB/s", "read GB/s", "% of bw");
    fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", "------------------------------", "------:", "--------------:",
            "-------------:", "-----------:", "----------:", "--------:");
    for (int i = 0; i < n; i++) {
        const struct test_result * t = &results[i];
        if (t->read_bps == NULL || t->n_samples == 0) {
            continue;
        }
        char name[64];
        test_name(t, name, sizeof(name));
        const double wbps = (double) t->weight_bytes_per_token * avg_ts(t);
        double * bws = malloc(sizeof(double) * (size_t) t->n_samples);
        double * pcts = malloc(sizeof(double) * (size_t) t->n_samples);
        if (!bws || !pcts) {
            free(bws);
            free(pcts);
            return;
        }
        int n_ok = 0;
        for (int r = 0; r < t->n_samples; r++) {
            if (t->read_bps[r] > 0) {
                bws[n_ok]  = t->read_bps[r];
                pcts[n_ok] = 100.0 * (double) t->weight_bytes_per_token * sample_ts(t, r) / t->read_bps[r];
                n_ok++;
            }
        }
        const double rbps = n_ok > 0 ? median_of(bws, n_ok) : 0;
        char pct[32];
        if (n_ok > 0) {
            snprintf(pct, sizeof(pct), "%.1f %%", median_of(pcts, n_ok));
        } else {
            snprintf(pct, sizeof(pct), "n/a");
        }
        free(bws);
        free(pcts);
        // small models in MB so the figure keeps its digits
        const bool gb = t->weight_bytes_per_token >= 100000000ull;
        fprintf(f, "| %-30s | %7d | %15s | %11.3f %s | %12.2f | %11.2f | %9s |\n", t->model_type, t->inst.n_threads,
                name, (double) t->weight_bytes_per_token / (gb ? 1e9 : 1e6), gb ? "GB" : "MB", wbps / 1e9, rbps / 1e9,
                pct);
    }
    fflush(f);
}

// the parameters that need a model reload when they change (llama.cpp's equal_mparams)
static bool equal_mparams(const struct test_inst * a, const struct test_inst * b) {
    return strcmp(a->model, b->model) == 0 && a->n_gpu_layers == b->n_gpu_layers && a->n_cpu_moe == b->n_cpu_moe &&
           a->split_mode == b->split_mode && a->main_gpu == b->main_gpu &&
           memcmp(a->tensor_split, b->tensor_split, BENCH_MAX_DEVICES * sizeof(float)) == 0 &&
           a->use_mmap == b->use_mmap && a->use_direct_io == b->use_direct_io &&
           bench_devices_equal(a->devices, b->devices) && a->no_host == b->no_host &&
           bench_overrides_equal(a->overrides, b->overrides);
}

static struct llama_model_params to_llama_mparams(const struct test_inst * inst) {
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = inst->n_gpu_layers;
    if (!inst->devices->is_auto) {
        // the library reads the NULL-terminated list and does not change it
        mp.devices = (ggml_backend_dev_t *) (uintptr_t) inst->devices->devs;
    }
    mp.split_mode = inst->split_mode;
    mp.main_gpu = inst->main_gpu;
    mp.tensor_split = inst->tensor_split;
    mp.use_mmap = inst->use_mmap;
    mp.use_direct_io = inst->use_direct_io;
    mp.no_host = inst->no_host;
    mp.tensor_buft_overrides = inst->overrides->n > 0 ? inst->overrides->list : NULL;
    // -ncmoe keeps the first n layers' expert weights in CPU memory; with the CPU as the only device that is
    // where every weight is already, so there is nothing to add here
    return mp;
}

int main(int argc, char ** argv) {
    setlocale(LC_NUMERIC, "C");

#if !defined(__OPTIMIZE__)
    fprintf(stderr, "warning: debug build, performance may be affected\n");
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    fprintf(stderr, "warning: sanitizer enabled, performance may be affected\n");
#endif

    struct cmd_params params;
    memset(&params, 0, sizeof(params));
    const int prc = parse_cmd_params(argc, argv, &params);
    if (prc != 0) {
        cmd_params_free(&params);
        if (prc < 0) {
            print_usage(argv[0]);
            return 1;
        }
        return 0;
    }

    if (!params.verbose) {
        llama_log_set(null_log_callback, NULL);
    }
    llama_backend_init();
    if (params.numa != GGML_NUMA_STRATEGY_DISABLED) {
        ggml_numa_init(params.numa);
    }
    if (!set_process_priority((enum ggml_sched_priority) params.prio)) {
        fprintf(stderr, "llama-bench: error: failed to set process priority\n");
        cmd_params_free(&params);
        llama_backend_free();
        return 1;
    }

    struct inst_list insts = { 0 };
    if (!build_instances(&params, &insts)) {
        fprintf(stderr, "llama-bench: out of memory\n");
        cmd_params_free(&params);
        return 1;
    }

    struct printer p = { .fmt = params.output_format, .fout = stdout };
    struct printer pe = { .fmt = params.output_format_stderr, .fout = stderr };
    printer_header(&p, &params);
    printer_header(&pe, &params);

    struct test_result * results = calloc((size_t) (insts.n > 0 ? insts.n : 1), sizeof(*results));
    if (!results) {
        fprintf(stderr, "llama-bench: out of memory\n");
        cmd_params_free(&params);
        free(insts.v);
        return 1;
    }
    int n_results = 0;

    struct llama_model * lmodel = NULL;
    const struct test_inst * loaded_inst = NULL; // the model parameters lmodel was loaded with
    uint64_t loaded_wbpt = 0;
    int failed = 0;

    // context state at the depth of the previous test, so repeated depth runs skip refilling the cache
    int cached_depth = -1;
    uint8_t * cached_state = NULL;
    size_t cached_state_size = 0;

    for (int ii = 0; ii < insts.n; ii++) {
        const struct test_inst * inst = &insts.v[ii];
        if (params.progress) {
            fprintf(stderr, "llama-bench: benchmark %d/%d: starting\n", ii + 1, insts.n);
        }

        // the model is reloaded only when a model parameter changes
        if (!lmodel || !loaded_inst || !equal_mparams(loaded_inst, inst)) {
            if (lmodel) {
                llama_model_free(lmodel);
                lmodel = NULL;
            }
            struct llama_model_params mp = to_llama_mparams(inst);
            lmodel = llama_model_load_from_file(inst->model, mp);
            if (!lmodel) {
                fprintf(stderr, "llama-bench: error: failed to load model '%s'\n", inst->model);
                failed++;
                loaded_inst = NULL;
                cached_depth = -1;
                continue;
            }
            loaded_inst = inst;
            loaded_wbpt = weight_bytes_per_token(inst->model);
            cached_depth = -1;
        }

        struct llama_context_params cp = llama_context_default_params();
        cp.offload_kqv = !inst->no_kv_offload;
        cp.embeddings = inst->embeddings;
        cp.op_offload = !inst->no_op_offload;
        cp.n_ctx = (uint32_t) (inst->n_prompt + inst->n_gen + inst->n_depth);
        cp.n_batch = (uint32_t) inst->n_batch;
        cp.n_ubatch = (uint32_t) inst->n_ubatch;
        cp.type_k = inst->type_k;
        cp.type_v = inst->type_v;
        cp.flash_attn_type = inst->flash_attn;
        cp.n_threads = inst->n_threads;
        cp.n_threads_batch = inst->n_threads;

        struct llama_context * ctx = llama_init_from_model(lmodel, cp);
        if (!ctx) {
            fprintf(stderr, "llama-bench: error: failed to create context with model '%s'\n", inst->model);
            llama_model_free(lmodel);
            lmodel = NULL;
            loaded_inst = NULL;
            failed++;
            cached_depth = -1;
            continue;
        }

        struct test_result * t = &results[n_results];
        t->inst = *inst;
        llama_model_desc(lmodel, t->model_type, sizeof(t->model_type));
        t->model_size = llama_model_size(lmodel);
        t->model_n_params = llama_model_n_params(lmodel);
        t->weight_bytes_per_token = loaded_wbpt;
        {
            const time_t now = time(NULL);
            struct tm tmv;
            gmtime_r(&now, &tmv);
            strftime(t->test_time, sizeof(t->test_time), "%Y-%m-%dT%H:%M:%SZ", &tmv);
        }
        t->samples_ns = calloc((size_t) params.reps, sizeof(uint64_t));
        t->read_bps = is_bandwidth_test(inst, t->weight_bytes_per_token) ? calloc((size_t) params.reps, sizeof(double)) : NULL;
        const int tok_cap = inst->n_batch > 1 ? inst->n_batch : 1;
        llama_token * tokens = malloc((size_t) tok_cap * sizeof(llama_token));
        if (!t->samples_ns || !tokens || (is_bandwidth_test(inst, t->weight_bytes_per_token) && !t->read_bps)) {
            fprintf(stderr, "llama-bench: out of memory\n");
            free(tokens);
            free(t->samples_ns);
            free(t->read_bps);
            memset(t, 0, sizeof(*t));
            llama_free(ctx);
            failed++;
            break;
        }

        // the test's own thread pool, as llama.cpp's llama-bench attaches one: -C, --cpu-strict, --poll, --prio
        struct ggml_threadpool_params tpp = ggml_threadpool_params_default(inst->n_threads);
        char mask_err[128];
        (void) bench_parse_cpu_mask(inst->cpu_mask, tpp.cpumask, mask_err, sizeof(mask_err)); // validated when parsed
        tpp.strict_cpu = inst->cpu_strict;
        tpp.poll = (uint32_t) inst->poll;
        tpp.prio = (enum ggml_sched_priority) params.prio;
        struct ggml_threadpool * threadpool = ggml_threadpool_new(&tpp);
        if (!threadpool) {
            fprintf(stderr, "llama-bench: error: failed to create a thread pool of %d threads\n", inst->n_threads);
            free(tokens);
            free(t->samples_ns);
            free(t->read_bps);
            memset(t, 0, sizeof(*t));
            llama_free(ctx);
            failed++;
            continue;
        }
        llama_attach_threadpool(ctx, threadpool, NULL);

        llama_memory_clear(llama_get_memory(ctx), false);

        if (params.delay) {
            sleep((unsigned) params.delay);
        }

        bool ok = true;
        if (!params.no_warmup) {
            if (inst->n_prompt > 0) {
                if (params.progress) {
                    fprintf(stderr, "llama-bench: benchmark %d/%d: warmup prompt run\n", ii + 1, insts.n);
                }
                ok = test_prompt(ctx, inst->n_prompt, inst->n_batch, inst->n_threads, tokens);
            }
            if (ok && inst->n_gen > 0) {
                if (params.progress) {
                    fprintf(stderr, "llama-bench: benchmark %d/%d: warmup generation run\n", ii + 1, insts.n);
                }
                ok = test_gen(ctx, 1, inst->n_threads);
            }
            if (!ok) {
                fprintf(stderr, "llama-bench: error: warmup run failed\n");
            }
        }

        for (int r = 0; ok && r < params.reps; r++) {
            llama_memory_clear(llama_get_memory(ctx), false);

            if (inst->n_depth > 0) {
                bool is_cached = inst->n_depth == cached_depth && cached_state;
                if (is_cached && llama_state_seq_set_data(ctx, cached_state, cached_state_size, 0) == 0) {
                    // the saved state does not fit this context: fill the cache again
                    is_cached = false;
                }
                if (!is_cached) {
                    if (params.progress) {
                        fprintf(stderr, "llama-bench: benchmark %d/%d: depth run %d/%d\n", ii + 1, insts.n, r + 1,
                                params.reps);
                    }
                    if (!test_prompt(ctx, inst->n_depth, inst->n_batch, inst->n_threads, tokens)) {
                        fprintf(stderr, "llama-bench: error: failed to run depth\n");
                        ok = false;
                        break;
                    }
                    const size_t sz = llama_state_seq_get_size(ctx, 0);
                    uint8_t * nb = sz ? realloc(cached_state, sz) : NULL;
                    if (nb) {
                        cached_state = nb;
                        cached_state_size = llama_state_seq_get_data(ctx, cached_state, sz, 0);
                        cached_depth = cached_state_size ? inst->n_depth : -1;
                    } else {
                        cached_depth = -1;
                    }
                } else if (params.progress) {
                    fprintf(stderr, "llama-bench: benchmark %d/%d: depth run %d/%d (cached)\n", ii + 1, insts.n,
                            r + 1, params.reps);
                }
            }

            if (t->read_bps) {
                t->read_bps[r] = measure_read_bandwidth(inst->n_threads);
            }
            const uint64_t t_start = time_ns();
            if (inst->n_prompt > 0) {
                if (params.progress) {
                    fprintf(stderr, "llama-bench: benchmark %d/%d: prompt run %d/%d\n", ii + 1, insts.n, r + 1,
                            params.reps);
                }
                if (!test_prompt(ctx, inst->n_prompt, inst->n_batch, inst->n_threads, tokens)) {
                    fprintf(stderr, "llama-bench: error: failed to run prompt\n");
                    ok = false;
                    break;
                }
            }
            if (inst->n_gen > 0) {
                if (params.progress) {
                    fprintf(stderr, "llama-bench: benchmark %d/%d: generation run %d/%d\n", ii + 1, insts.n, r + 1,
                            params.reps);
                }
                if (!test_gen(ctx, inst->n_gen, inst->n_threads)) {
                    fprintf(stderr, "llama-bench: error: failed to run gen\n");
                    ok = false;
                    break;
                }
            }
            t->samples_ns[t->n_samples++] = time_ns() - t_start;
        }

        free(tokens);
        if (params.verbose) {
            llama_perf_context_print(ctx);
        }
        llama_free(ctx);
        ggml_threadpool_free(threadpool);

        if (!ok) {
            failed++;
            free(t->samples_ns);
            free(t->read_bps);
            memset(t, 0, sizeof(*t));
            continue;
        }
        n_results++;
        printer_test(&p, t);
        printer_test(&pe, t);
    }

    if (lmodel) {
        llama_model_free(lmodel);
    }
    free(cached_state);

    printer_footer(&p);
    printer_footer(&pe);

    // machine-readable formats keep stdout clean; the extra table then goes to stderr
    print_bandwidth_table(params.output_format == OUT_MD ? stdout : stderr, results, n_results);

    for (int i = 0; i < n_results; i++) {
        free(results[i].samples_ns);
        free(results[i].read_bps);
    }
    free(results);
    free(insts.v);
    cmd_params_free(&params);
    llama_backend_free();
    return failed == 0 ? 0 : 1;
}
