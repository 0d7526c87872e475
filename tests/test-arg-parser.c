// common/arg.c and common/common.c: every flag form of the option table, per-program selection, env
// variables, error messages, and the token / embedding / string helpers (tokenizer checked against the
// llama.cpp reference ids in reference/kjv/index.json).
#include "harness.h"

#include "arg.h"
#include "common.h"

#include <limits.h>
#include <stdint.h>
#include <unistd.h>

#define ARGV(...) ((char *[]) { "prog", __VA_ARGS__, NULL })
#define ARGC(...) ((int) (sizeof((char *[]) { "prog", __VA_ARGS__ }) / sizeof(char *)))

static char g_err[640];

// parses a fresh default params; returns the status, params in *out (caller frees)
static enum common_arg_status parse(struct common_params * out, enum llama_example ex, int argc, char ** argv) {
    *out = common_params_default();
    return common_params_parse_ex(argc, argv, out, ex, g_err, sizeof(g_err));
}

#define PARSE_OK(p, ex, ...)                                                                       \
    do {                                                                                           \
        enum common_arg_status st_ = parse(&(p), (ex), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__));     \
        TH_CHECK(st_ == COMMON_ARG_OK, "parse of %s failed: %s", #__VA_ARGS__, g_err);             \
    } while (0)

#define PARSE_ERR(ex, needle, ...)                                                                 \
    do {                                                                                           \
        struct common_params p_;                                                                   \
        enum common_arg_status st_ = parse(&p_, (ex), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__));      \
        TH_CHECK(st_ == COMMON_ARG_ERROR, "parse of %s should fail", #__VA_ARGS__);                \
        TH_CHECK(strstr(g_err, (needle)) != NULL && strchr(g_err, '\n') == NULL,                   \
                 "error for %s: got '%s', expected it to contain '%s' on one line", #__VA_ARGS__, \
                 g_err, (needle));                                                                 \
        common_params_free(&p_);                                                                   \
    } while (0)

static void test_defaults(void) {
    struct common_params p = common_params_default();
    TH_CHECK(p.n_predict == -1, "n_predict %d", p.n_predict);
    TH_CHECK(p.n_ctx == 0, "n_ctx %d", p.n_ctx);
    TH_CHECK(p.n_batch == 2048 && p.n_ubatch == 512, "batch %d/%d", p.n_batch, p.n_ubatch);
    TH_CHECK(p.n_parallel == 1 && p.n_sequences == 1, "parallel %d seq %d", p.n_parallel, p.n_sequences);
    TH_CHECK(p.n_outputs_max == 0 && p.n_outputs_max_per_seq == 1, "outputs %d/%d", p.n_outputs_max, p.n_outputs_max_per_seq);
    TH_CHECK(p.cpuparams.n_threads == -1, "threads %d", p.cpuparams.n_threads);
    TH_CHECK(p.flash_attn_type == LLAMA_FLASH_ATTN_TYPE_AUTO, "fa");
    TH_CHECK(p.cache_type_k == GGML_TYPE_F16 && p.cache_type_v == GGML_TYPE_F16, "cache types");
    TH_CHECK(p.warmup && p.escape && p.display_prompt && p.use_mmap && !p.special, "bool defaults");
    TH_CHECK(p.conversation_mode == COMMON_CONVERSATION_MODE_AUTO, "cnv");
    TH_CHECK(p.embd_normalize == 2 && strcmp(p.embd_sep, "\n") == 0 && strcmp(p.embd_out, "") == 0, "embd");
    TH_CHECK(p.pooling_type == LLAMA_POOLING_TYPE_UNSPECIFIED, "pooling");
    const struct common_params_sampling * s = &p.sampling;
    TH_CHECK(s->seed == LLAMA_DEFAULT_SEED, "seed");
    TH_CHECK(s->top_k == 40 && s->top_p == 0.95f && s->min_p == 0.05f && s->temp == 0.80f, "sampling defaults");
    TH_CHECK(s->penalty_last_n == 64 && s->penalty_repeat == 1.0f && s->typ_p == 1.0f, "penalty defaults");
    TH_CHECK(s->xtc_threshold == 0.10f && s->xtc_probability == 0.0f && s->top_n_sigma == -1.0f, "xtc/sigma");
    TH_CHECK(s->dry_multiplier == 0.0f && s->dry_base == 1.75f && s->dry_allowed_length == 2, "dry");
    TH_CHECK(s->n_dry_sequence_breakers == 4 && strcmp(s->dry_sequence_breakers[0], "\n") == 0, "dry breakers");
    TH_CHECK(s->mirostat == 0 && s->mirostat_tau == 5.0f && s->mirostat_eta == 0.1f, "mirostat");
    TH_CHECK(s->n_samplers == 9 && s->samplers[0] == COMMON_SAMPLER_TYPE_PENALTIES &&
             s->samplers[3] == COMMON_SAMPLER_TYPE_TOP_K && s->samplers[8] == COMMON_SAMPLER_TYPE_TEMPERATURE, "chain");
    TH_CHECK(p.speculative.draft.n_max == 3 && p.speculative.n_types == 1 &&
             p.speculative.types[0] == COMMON_SPECULATIVE_TYPE_NONE, "speculative");
    common_params_set_str(&p.prompt, "x");
    common_params_free(&p);
    // free clears the owned pointers, keeps the rest, and may be repeated
    TH_CHECK(p.n_batch == 2048 && p.prompt == NULL && p.embd_sep == NULL && p.hostname == NULL, "after free");
    common_params_free(&p);
}

static void test_flag_forms(void) {
    struct common_params p;
    const enum llama_example C = LLAMA_EXAMPLE_COMPLETION;

    PARSE_OK(p, C, "-m", "a.gguf", "-p", "hello", "-n", "12", "-c", "128", "-b", "64", "-ub", "32", "-t", "3", "-s", "42");
    TH_CHECK(p.model.path && strcmp(p.model.path, "a.gguf") == 0, "model");
    TH_CHECK(p.prompt && strcmp(p.prompt, "hello") == 0, "prompt");
    TH_CHECK(p.n_predict == 12 && p.n_ctx == 128 && p.n_batch == 64 && p.n_ubatch == 32, "ints %d %d %d %d",
             p.n_predict, p.n_ctx, p.n_batch, p.n_ubatch);
    TH_CHECK(p.cpuparams.n_threads == 3 && p.cpuparams_batch.n_threads == 3, "threads %d/%d",
             p.cpuparams.n_threads, p.cpuparams_batch.n_threads);
    TH_CHECK(p.sampling.seed == 42, "seed %u", p.sampling.seed);
    common_params_free(&p);

    PARSE_OK(p, C, "--model", "b.gguf", "--prompt", "x", "--predict", "7", "--ctx-size", "99", "--batch-size", "17",
             "--ubatch-size", "9", "--threads", "2", "--threads-batch", "5", "--seed", "-1");
    TH_CHECK(strcmp(p.model.path, "b.gguf") == 0 && p.n_predict == 7 && p.n_ctx == 99 && p.n_batch == 17 &&
             p.n_ubatch == 9, "long forms");
    TH_CHECK(p.cpuparams.n_threads == 2 && p.cpuparams_batch.n_threads == 5, "threads-batch");
    TH_CHECK(p.sampling.seed == LLAMA_DEFAULT_SEED, "seed -1");
    common_params_free(&p);

    PARSE_OK(p, C, "--n-predict", "-1", "--temp", "0", "--top-k", "20", "--top-p", "0.9", "--min-p", "0.0",
             "--repeat-penalty", "1.1", "--repeat-last-n", "32", "-no-cnv", "--ignore-eos", "--no-warmup");
    TH_CHECK(p.n_predict == -1, "n-predict");
    TH_CHECK(p.sampling.temp == 0.0f && p.sampling.top_k == 20 && p.sampling.top_p == 0.9f && p.sampling.min_p == 0.0f,
             "sampling values");
    TH_CHECK(p.sampling.penalty_repeat == 1.1f && p.sampling.penalty_last_n == 32, "penalties");
    TH_CHECK(p.conversation_mode == COMMON_CONVERSATION_MODE_DISABLED, "-no-cnv");
    TH_CHECK(p.sampling.ignore_eos && !p.warmup, "ignore-eos / no-warmup");
    TH_CHECK((p.sampling.user_sampling_config & COMMON_PARAMS_SAMPLING_CONFIG_TEMP) &&
             (p.sampling.user_sampling_config & COMMON_PARAMS_SAMPLING_CONFIG_TOP_K) &&
             !(p.sampling.user_sampling_config & COMMON_PARAMS_SAMPLING_CONFIG_MIROSTAT), "user config bits");
    common_params_free(&p);

    PARSE_OK(p, C, "--temp", "-3", "--no-conversation");
    TH_CHECK(p.sampling.temp == 0.0f, "negative temp clamps to 0: %f", p.sampling.temp);
    TH_CHECK(p.conversation_mode == COMMON_CONVERSATION_MODE_DISABLED, "--no-conversation");
    common_params_free(&p);

    const char * fa_vals[]  = { "on", "off", "auto", "enabled", "disabled", "1", "0" };
    const int    fa_types[] = { LLAMA_FLASH_ATTN_TYPE_ENABLED, LLAMA_FLASH_ATTN_TYPE_DISABLED, LLAMA_FLASH_ATTN_TYPE_AUTO,
                                LLAMA_FLASH_ATTN_TYPE_ENABLED, LLAMA_FLASH_ATTN_TYPE_DISABLED,
                                LLAMA_FLASH_ATTN_TYPE_ENABLED, LLAMA_FLASH_ATTN_TYPE_DISABLED };
    for (int i = 0; i < 7; i++) {
        PARSE_OK(p, C, "-fa", (char *) fa_vals[i]);
        TH_CHECK((int) p.flash_attn_type == fa_types[i], "-fa %s -> %d", fa_vals[i], (int) p.flash_attn_type);
        common_params_free(&p);
    }
    PARSE_OK(p, C, "--flash-attn", "off", "-ctk", "q8_0", "-ctv", "q4_0");
    TH_CHECK(p.flash_attn_type == LLAMA_FLASH_ATTN_TYPE_DISABLED, "--flash-attn");
    TH_CHECK(p.cache_type_k == GGML_TYPE_Q8_0 && p.cache_type_v == GGML_TYPE_Q4_0, "-ctk/-ctv");
    common_params_free(&p);
    PARSE_OK(p, C, "--cache-type-k", "f32", "--cache-type-v", "bf16");
    TH_CHECK(p.cache_type_k == GGML_TYPE_F32 && p.cache_type_v == GGML_TYPE_BF16, "long cache types");
    common_params_free(&p);

    PARSE_OK(p, C, "-ngl", "99", "-sp", "--no-mmap", "--mlock", "-kvu", "--no-perf");
    TH_CHECK(p.n_gpu_layers == 99 && p.special && !p.use_mmap && p.use_mlock && p.kv_unified && p.no_perf &&
             p.sampling.no_perf, "misc flags");
    common_params_free(&p);
    PARSE_OK(p, C, "--n-gpu-layers", "all", "--gpu-layers", "auto");
    TH_CHECK(p.n_gpu_layers == -1, "ngl auto (last wins) %d", p.n_gpu_layers);
    common_params_free(&p);

    // -t -1 means the default: physical cores
    PARSE_OK(p, C, "-t", "-1");
    TH_CHECK(p.cpuparams.n_threads >= 1 && p.cpuparams.n_threads == common_cpu_get_num_math(), "threads default");
    common_params_free(&p);

    // batched / embedding / speculative options
    PARSE_OK(p, LLAMA_EXAMPLE_BATCHED, "-np", "4");
    TH_CHECK(p.n_parallel == 4 && p.n_parallel_explicit, "-np");
    common_params_free(&p);
    PARSE_OK(p, LLAMA_EXAMPLE_EMBEDDING, "--parallel", "3", "--pooling", "mean", "--embd-normalize", "-1",
             "--embd-output-format", "json", "--embd-separator", "<#sep#>");
    TH_CHECK(p.n_parallel == 3 && p.pooling_type == LLAMA_POOLING_TYPE_MEAN && p.embd_normalize == -1 &&
             strcmp(p.embd_out, "json") == 0 && strcmp(p.embd_sep, "<#sep#>") == 0, "embedding options");
    common_params_free(&p);
    const char * pools[] = { "none", "mean", "cls", "last", "rank" };
    for (int i = 0; i < 5; i++) {
        PARSE_OK(p, LLAMA_EXAMPLE_EMBEDDING, "--pooling", (char *) pools[i]);
        TH_CHECK((int) p.pooling_type == i, "--pooling %s", pools[i]);
        common_params_free(&p);
    }
    PARSE_OK(p, LLAMA_EXAMPLE_SPECULATIVE, "-md", "d.gguf", "--spec-type", "draft-simple", "--spec-draft-n-max", "8",
             "-td", "1");
    TH_CHECK(strcmp(p.speculative.draft.mparams.path, "d.gguf") == 0 && p.speculative.n_types == 1 &&
             p.speculative.types[0] == COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE && p.speculative.draft.n_max == 8 &&
             p.speculative.draft.cpuparams.n_threads == 1, "speculative options");
    common_params_free(&p);

    // sampler chain, logit bias, kv overrides, DRY breakers
    PARSE_OK(p, C, "--samplers", "top_k;temperature", "-l", "15+1.5", "--logit-bias", "2-inf",
             "--override-kv", "a.b=int:7", "--override-kv", "c=str:hi", "--dry-sequence-breaker", "x");
    TH_CHECK(p.sampling.n_samplers == 2 && p.sampling.samplers[0] == COMMON_SAMPLER_TYPE_TOP_K &&
             p.sampling.samplers[1] == COMMON_SAMPLER_TYPE_TEMPERATURE, "--samplers");
    TH_CHECK(p.sampling.n_logit_bias == 2 && p.sampling.logit_bias[0].token == 15 &&
             p.sampling.logit_bias[0].bias == 1.5f && p.sampling.logit_bias[1].token == 2 &&
             isinf(p.sampling.logit_bias[1].bias) && p.sampling.logit_bias[1].bias < 0, "logit bias");
    TH_CHECK(p.n_kv_overrides == 2 && strcmp(p.kv_overrides[0].key, "a.b") == 0 &&
             p.kv_overrides[0].tag == LLAMA_KV_OVERRIDE_TYPE_INT && p.kv_overrides[0].val_i64 == 7 &&
             strcmp(p.kv_overrides[1].val_str, "hi") == 0 && p.kv_overrides[2].key[0] == 0, "override-kv");
    TH_CHECK(p.sampling.n_dry_sequence_breakers == 1 && strcmp(p.sampling.dry_sequence_breakers[0], "x") == 0, "dry");
    common_params_free(&p);
    // a second parse into the same struct starts from the defaults again, then two breakers replace them
    PARSE_OK(p, C, "--dry-sequence-breaker", "a", "--dry-sequence-breaker", "\\n");
    TH_CHECK(p.sampling.n_dry_sequence_breakers == 2 && strcmp(p.sampling.dry_sequence_breakers[0], "a") == 0 &&
             strcmp(p.sampling.dry_sequence_breakers[1], "\n") == 0, "dry breakers: %d", p.sampling.n_dry_sequence_breakers);
    common_params_free(&p);
    PARSE_OK(p, C, "--dry-sequence-breaker", "none");
    TH_CHECK(p.sampling.n_dry_sequence_breakers == 0, "dry none");
    common_params_free(&p);
    PARSE_OK(p, C, "--sampling-seq", "kt");
    TH_CHECK(p.sampling.n_samplers == 2 && p.sampling.samplers[1] == COMMON_SAMPLER_TYPE_TEMPERATURE, "--sampling-seq");
    common_params_free(&p);

    // escapes
    PARSE_OK(p, C, "-p", "a\\nb\\t\\\\c");
    TH_CHECK(strcmp(p.prompt, "a\nb\t\\c") == 0, "escapes: '%s'", p.prompt);
    common_params_free(&p);
    PARSE_OK(p, C, "-p", "a\\nb", "--no-escape");
    TH_CHECK(strcmp(p.prompt, "a\\nb") == 0, "no-escape: '%s'", p.prompt);
    common_params_free(&p);

    // -f: the file, minus one final newline
    const char * path = "/tmp/test-arg-parser-prompt.txt";
    FILE * f = fopen(path, "wb");
    TH_CHECK(f != NULL, "temp file");
    if (f) {
        fputs("line one\nline two\n\n", f);
        fclose(f);
        PARSE_OK(p, C, "-f", (char *) path);
        TH_CHECK(p.prompt && strcmp(p.prompt, "line one\nline two\n") == 0, "-f content '%s'", p.prompt ? p.prompt : "");
        TH_CHECK(p.prompt_file && strcmp(p.prompt_file, path) == 0, "prompt_file");
        common_params_free(&p);
        PARSE_OK(p, C, "--file", (char *) path);
        TH_CHECK(p.prompt && strncmp(p.prompt, "line one", 8) == 0, "--file");
        common_params_free(&p);
        unlink(path);
    }

    // ubatch larger than batch is clamped
    PARSE_OK(p, C, "-b", "16", "-ub", "64");
    TH_CHECK(p.n_batch == 16 && p.n_ubatch == 16, "ubatch clamp %d", p.n_ubatch);
    common_params_free(&p);
}

static void test_errors(void) {
    const enum llama_example C = LLAMA_EXAMPLE_COMPLETION;
    PARSE_ERR(C, "invalid argument: --bogus", "--bogus");
    PARSE_ERR(C, "invalid argument: prompt-without-flag", "prompt-without-flag");
    PARSE_ERR(C, "expected value for argument: -n", "-n");
    PARSE_ERR(C, "expected value for argument: --model", "--model");
    PARSE_ERR(C, "invalid integer 'abc'", "-n", "abc");
    PARSE_ERR(C, "invalid integer '12x'", "-c", "12x");
    PARSE_ERR(C, "invalid integer ''", "-c", "");
    PARSE_ERR(C, "invalid integer '99999999999'", "-c", "99999999999");
    PARSE_ERR(C, "out of range", "-c", "-5");
    PARSE_ERR(C, "out of range", "-b", "0");
    PARSE_ERR(C, "invalid number 'hot'", "--temp", "hot");
    PARSE_ERR(C, "invalid number '0.5.1'", "--top-p", "0.5.1");
    PARSE_ERR(C, "invalid thread count '0'", "-t", "0");
    PARSE_ERR(C, "invalid seed", "-s", "-7");
    PARSE_ERR(C, "invalid seed", "-s", "4294967296");
    PARSE_ERR(C, "unknown value for --flash-attn: 'maybe'", "-fa", "maybe");
    PARSE_ERR(C, "unsupported cache type 'q3_k'", "-ctk", "q3_k");
    PARSE_ERR(C, "failed to open file '/nonexistent/prompt.txt'", "-f", "/nonexistent/prompt.txt");
    PARSE_ERR(C, "unknown sampler 'foo'", "--samplers", "top_k;foo");
    PARSE_ERR(C, "invalid logit bias", "-l", "15");
    PARSE_ERR(C, "invalid type in override", "--override-kv", "k=u8:1");
    PARSE_ERR(C, "out of range", "--mirostat", "3");
    // options of other programs
    PARSE_ERR(C, "argument --pooling is not supported by this program", "--pooling", "mean");
    PARSE_ERR(LLAMA_EXAMPLE_EMBEDDING, "argument -no-cnv is not supported by this program", "-no-cnv");
    PARSE_ERR(LLAMA_EXAMPLE_EMBEDDING, "invalid pooling type 'max'", "--pooling", "max");
    PARSE_ERR(LLAMA_EXAMPLE_EMBEDDING, "invalid embedding output format", "--embd-output-format", "xml");
    PARSE_ERR(LLAMA_EXAMPLE_SPECULATIVE, "unknown speculative type 'fast'", "--spec-type", "fast");
    // a value that looks like the next flag is still the value
    struct common_params p;
    PARSE_OK(p, C, "-p", "-n");
    TH_CHECK(strcmp(p.prompt, "-n") == 0, "flag-like value");
    common_params_free(&p);
}

static void test_env(void) {
    struct common_params p;
    const enum llama_example C = LLAMA_EXAMPLE_COMPLETION;
    setenv("LLAMA_ARG_CTX_SIZE", "123", 1);
    setenv("LLAMA_ARG_NO_MMAP", "1", 1);
    setenv("LLAMA_ARG_FLASH_ATTN", "off", 1);
    PARSE_OK(p, C, "-n", "1");
    TH_CHECK(p.n_ctx == 123 && !p.use_mmap && p.flash_attn_type == LLAMA_FLASH_ATTN_TYPE_DISABLED, "env applied");
    common_params_free(&p);
    PARSE_OK(p, C, "-c", "77");
    TH_CHECK(p.n_ctx == 77, "command line overrides env: %d", p.n_ctx);
    common_params_free(&p);
    setenv("LLAMA_ARG_NO_MMAP", "false", 1);
    PARSE_OK(p, C, "-n", "1");
    TH_CHECK(p.use_mmap, "false flag env leaves the default");
    common_params_free(&p);
    setenv("LLAMA_ARG_NO_MMAP", "sometimes", 1);
    PARSE_ERR(C, "LLAMA_ARG_NO_MMAP", "-n", "1");
    unsetenv("LLAMA_ARG_NO_MMAP");
    setenv("LLAMA_ARG_CTX_SIZE", "lots", 1);
    PARSE_ERR(C, "error while handling environment variable \"LLAMA_ARG_CTX_SIZE\"", "-n", "1");
    unsetenv("LLAMA_ARG_CTX_SIZE");
    unsetenv("LLAMA_ARG_FLASH_ATTN");
    // env of an option that does not apply to this program is ignored
    setenv("LLAMA_ARG_POOLING", "cls", 1);
    PARSE_OK(p, C, "-n", "1");
    TH_CHECK(p.pooling_type == LLAMA_POOLING_TYPE_UNSPECIFIED, "foreign env ignored");
    common_params_free(&p);
    PARSE_OK(p, LLAMA_EXAMPLE_EMBEDDING, "-n", "1");
    TH_CHECK(p.pooling_type == LLAMA_POOLING_TYPE_CLS, "env for embedding");
    common_params_free(&p);
    unsetenv("LLAMA_ARG_POOLING");
    setenv("LLAMA_ARG_MODEL", "env.gguf", 1);
    setenv("LLAMA_ARG_N_PARALLEL", "2", 1);
    PARSE_OK(p, LLAMA_EXAMPLE_BATCHED, "-n", "1");
    TH_CHECK(p.model.path && strcmp(p.model.path, "env.gguf") == 0 && p.n_parallel == 2, "model / np env");
    common_params_free(&p);
    unsetenv("LLAMA_ARG_MODEL");
    unsetenv("LLAMA_ARG_N_PARALLEL");
}

static void test_table(void) {
    // every name unique within each program, every name starts with '-', value options have a hint
    const int32_t n = common_arg_count();
    TH_CHECK(n > 50, "option count %d", n);
    for (int ex = 0; ex < LLAMA_EXAMPLE_COUNT; ex++) {
        for (int32_t i = 0; i < n; i++) {
            if (!common_arg_applies(i, (enum llama_example) ex)) {
                continue;
            }
            const char * const * ni = common_arg_names(i);
            for (int a = 0; ni[a]; a++) {
                TH_EXPECT(ni[a][0] == '-', "name %s", ni[a]);
                for (int32_t j = i; j < n; j++) {
                    if (!common_arg_applies(j, (enum llama_example) ex)) {
                        continue;
                    }
                    const char * const * nj = common_arg_names(j);
                    for (int b = (j == i ? a + 1 : 0); nj[b]; b++) {
                        TH_EXPECT(strcmp(ni[a], nj[b]) != 0, "duplicate %s in example %d", ni[a], ex);
                    }
                }
            }
        }
    }
    // the env names llama.cpp documents
    const struct { const char * flag; const char * env; } known[] = {
        { "-m", "LLAMA_ARG_MODEL" }, { "-c", "LLAMA_ARG_CTX_SIZE" }, { "-n", "LLAMA_ARG_N_PREDICT" },
        { "-b", "LLAMA_ARG_BATCH" }, { "-ub", "LLAMA_ARG_UBATCH" }, { "-t", "LLAMA_ARG_THREADS" },
        { "-fa", "LLAMA_ARG_FLASH_ATTN" }, { "-ngl", "LLAMA_ARG_N_GPU_LAYERS" }, { "-np", "LLAMA_ARG_N_PARALLEL" },
        { "-ctk", "LLAMA_ARG_CACHE_TYPE_K" }, { "-ctv", "LLAMA_ARG_CACHE_TYPE_V" }, { "--pooling", "LLAMA_ARG_POOLING" },
        { "--top-k", "LLAMA_ARG_TOP_K" }, { "--temp", "LLAMA_ARG_TEMP" }, { "--port", "LLAMA_ARG_PORT" },
    };
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
        bool found = false;
        for (int32_t i = 0; i < n && !found; i++) {
            const char * const * ni = common_arg_names(i);
            for (int a = 0; ni[a]; a++) {
                if (strcmp(ni[a], known[k].flag) == 0) {
                    char buf[128];
                    const char * env = common_arg_env(i, buf, sizeof(buf));
                    TH_CHECK(env && strcmp(env, known[k].env) == 0, "env of %s: %s", known[k].flag, env ? env : "(none)");
                    found = true;
                    break;
                }
            }
        }
        TH_CHECK(found, "flag %s in the table", known[k].flag);
    }

    // -h asks the program to exit; usage lists the option with its env
    struct common_params p = common_params_default();
    FILE * saved = stdout;
    FILE * sink = fopen("/dev/null", "w");
    if (sink) {
        stdout = sink;
    }
    enum common_arg_status st = common_params_parse_ex(ARGC("-h"), ARGV("-h"), &p, LLAMA_EXAMPLE_COMPLETION, g_err, sizeof(g_err));
    if (sink) {
        stdout = saved;
        fclose(sink);
    }
    TH_CHECK(st == COMMON_ARG_EXIT, "-h status %d", (int) st);
    common_params_free(&p);

    char * buf = NULL;
    size_t len = 0;
    FILE * mem = open_memstream(&buf, &len);
    TH_CHECK(mem != NULL, "memstream");
    if (mem) {
        common_params_print_usage(mem, LLAMA_EXAMPLE_COMPLETION);
        fclose(mem);
        TH_CHECK(strstr(buf, "-c, --ctx-size N") != NULL, "usage shows -c");
        TH_CHECK(strstr(buf, "(env: LLAMA_ARG_CTX_SIZE)") != NULL, "usage shows env");
        TH_CHECK(strstr(buf, "--pooling") == NULL, "usage hides other programs' options");
        free(buf);
    }
}

static void test_helpers(void) {
    // normalisation, computed by hand
    const float v[2] = { 3.0f, -4.0f };
    float out[2];
    common_embd_normalize(v, out, 2, 2);
    TH_CHECK(fabsf(out[0] - 0.6f) < 1e-6f && fabsf(out[1] + 0.8f) < 1e-6f, "euclid %f %f", out[0], out[1]);
    common_embd_normalize(v, out, 2, 1);
    TH_CHECK(fabsf(out[0] - 3.0f / 7) < 1e-6f && fabsf(out[1] + 4.0f / 7) < 1e-6f, "taxicab");
    common_embd_normalize(v, out, 2, 0);
    TH_CHECK(fabsf(out[0] - 3.0f * 32760 / 4) < 1e-2f && fabsf(out[1] + 32760.0f) < 1e-2f, "max abs %f %f", out[0], out[1]);
    common_embd_normalize(v, out, 2, -1);
    TH_CHECK(out[0] == 3.0f && out[1] == -4.0f, "none");
    common_embd_normalize(v, out, 2, 3);
    const float p3 = cbrtf(27.0f + 64.0f);
    TH_CHECK(fabsf(out[0] - 3.0f / p3) < 1e-5f, "p-norm 3");
    const float a[3] = { 1, 0, 0 }, b[3] = { 1, 1, 0 }, z[3] = { 0, 0, 0 };
    TH_CHECK(fabsf(common_embd_similarity_cos(a, b, 3) - 1.0f / sqrtf(2.0f)) < 1e-6f, "cos");
    TH_CHECK(common_embd_similarity_cos(a, z, 3) == 0.0f && common_embd_similarity_cos(z, z, 3) == 1.0f, "cos zero");

    char s1[] = "x\\ty\\x41\\q\\";
    common_string_process_escapes(s1);
    TH_CHECK(strcmp(s1, "x\tyA\\q\\") == 0, "escapes '%s'", s1);

    TH_CHECK(common_kv_cache_type_from_str("iq4_nl") == GGML_TYPE_IQ4_NL, "iq4_nl");
    TH_CHECK(common_kv_cache_type_from_str("q2_K") == GGML_TYPE_COUNT, "q2_K not a cache type");

    // batch helpers
    struct llama_batch batch = llama_batch_init(8, 0, 2);
    const llama_seq_id seqs[2] = { 0, 1 };
    common_batch_add(&batch, 5, 0, seqs, 2, false);
    common_batch_add(&batch, 6, 1, seqs + 1, 1, true);
    TH_CHECK(batch.n_tokens == 2 && batch.token[1] == 6 && batch.pos[1] == 1 && batch.n_seq_id[0] == 2 &&
             batch.seq_id[0][1] == 1 && batch.seq_id[1][0] == 1 && batch.logits[0] == 0 && batch.logits[1] == 1,
             "batch add");
    common_batch_clear(&batch);
    TH_CHECK(batch.n_tokens == 0, "batch clear");
    llama_batch_free(batch);
}

static void test_tokenize(void) {
    const char * model_path = th_data_path("models/kjv/kjv-target-f32.gguf");
    if (!th_require_file(model_path)) {
        return;
    }
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model * model = llama_model_load_from_file(model_path, mp);
    TH_CHECK(model != NULL, "vocab load");
    if (!model) {
        return;
    }
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    // reference/kjv/README.md: "In the beginning" -> [1, 1025, 261, 1921, 1286]
    const llama_token expect[5] = { 1, 1025, 261, 1921, 1286 };
    llama_token * toks = NULL;
    int32_t n = 0;
    TH_CHECK(common_tokenize(vocab, "In the beginning", -1, true, true, &toks, &n), "tokenize");
    TH_CHECK(n == 5 && toks && memcmp(toks, expect, sizeof(expect)) == 0, "ids (n=%d)", n);
    char * text = toks ? common_detokenize(vocab, toks + 1, n - 1, false) : NULL;
    TH_CHECK(text && strcmp(text, "In the beginning") == 0, "detokenize '%s'", text ? text : "(null)");
    free(text);
    int32_t len = -1;
    char * piece = common_token_to_piece(vocab, 1025, false, &len);
    TH_CHECK(piece && strcmp(piece, " In") == 0 && len == 3, "piece '%s'", piece ? piece : "(null)");
    free(piece);
    piece = common_token_to_piece(vocab, 1, false, &len);
    TH_CHECK(piece && len == 0, "BOS renders empty without special");
    free(piece);
    free(toks);
    // a long text needs more than the first guess only if a token is longer than a byte: never for SPM, but
    // the empty text must work too
    TH_CHECK(common_tokenize(vocab, "", -1, false, false, &toks, &n) && n == 0, "empty text");
    free(toks);
    llama_model_free(model);
}

// the seed-era speculative options: new names and aliases, n-gram sizes, type lists, and the removed old names
// that must fail with a message naming their replacement
static void test_spec_flags(void) {
    struct common_params p;
    PARSE_OK(p, LLAMA_EXAMPLE_SPECULATIVE, "--spec-draft-model", "d.gguf", "--spec-draft-n-max", "5",
             "--spec-draft-n-min", "2", "--spec-draft-p-min", "0.5", "--spec-draft-p-split", "0.25",
             "--spec-draft-threads", "3", "--spec-draft-threads-batch", "4", "--spec-draft-type-k", "q8_0",
             "--spec-draft-type-v", "q4_0", "--no-spec-draft-backend-sampling", "--spec-draft-ngl", "7");
    const struct common_params_speculative_draft * d = &p.speculative.draft;
    TH_CHECK(strcmp(d->mparams.path, "d.gguf") == 0 && d->n_max == 5 && d->n_min == 2 && d->p_min == 0.5f &&
             d->p_split == 0.25f, "draft sizes");
    TH_CHECK(d->cpuparams.n_threads == 3 && d->cpuparams_batch.n_threads == 4, "draft threads %d/%d",
             d->cpuparams.n_threads, d->cpuparams_batch.n_threads);
    TH_CHECK(d->cache_type_k == GGML_TYPE_Q8_0 && d->cache_type_v == GGML_TYPE_Q4_0, "draft cache types");
    TH_CHECK(!d->backend_sampling && d->n_gpu_layers == 7, "draft backend sampling / ngl");
    common_params_free(&p);

    // llama.cpp keeps the short and old long forms as aliases of the new names
    PARSE_OK(p, LLAMA_EXAMPLE_SPECULATIVE, "-ctkd", "q8_0", "--cache-type-v-draft", "f32", "-td", "2",
             "--draft-p-min", "0.75", "-ngld", "all", "--model-draft", "m.gguf");
    TH_CHECK(p.speculative.draft.cache_type_k == GGML_TYPE_Q8_0 && p.speculative.draft.cache_type_v == GGML_TYPE_F32 &&
             p.speculative.draft.cpuparams.n_threads == 2 && p.speculative.draft.p_min == 0.75f &&
             p.speculative.draft.n_gpu_layers == -2 && strcmp(p.speculative.draft.mparams.path, "m.gguf") == 0,
             "draft aliases");
    common_params_free(&p);

    // defaults of the n-gram types (llama.cpp's common.h)
    p = common_params_default();
    TH_CHECK(p.speculative.ngram_mod.n_match == 24 && p.speculative.ngram_mod.n_min == 48 &&
             p.speculative.ngram_mod.n_max == 64, "ngram-mod defaults");
    TH_CHECK(p.speculative.ngram_map_k.size_n == 12 && p.speculative.ngram_map_k.size_m == 48 &&
             p.speculative.ngram_map_k.min_hits == 1, "ngram-map-k defaults");
    common_params_free(&p);

    PARSE_OK(p, LLAMA_EXAMPLE_LOOKUP, "--spec-type", "ngram-map-k,ngram-mod,ngram-cache", "--spec-ngram-mod-n-match",
             "8", "--spec-ngram-mod-n-min", "2", "--spec-ngram-mod-n-max", "16", "--spec-ngram-map-k-size-n", "3",
             "--spec-ngram-map-k-size-m", "5", "--spec-ngram-map-k-min-hits", "2", "--spec-ngram-simple-size-n", "4",
             "--spec-ngram-map-k4v-size-m", "9", "-lcs", "s.bin", "-lcd", "d.bin");
    TH_CHECK(p.speculative.n_types == 3 && p.speculative.types[0] == COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K &&
             p.speculative.types[1] == COMMON_SPECULATIVE_TYPE_NGRAM_MOD &&
             p.speculative.types[2] == COMMON_SPECULATIVE_TYPE_NGRAM_CACHE, "type list");
    TH_CHECK(p.speculative.ngram_mod.n_match == 8 && p.speculative.ngram_mod.n_min == 2 &&
             p.speculative.ngram_mod.n_max == 16, "ngram-mod sizes");
    TH_CHECK(p.speculative.ngram_map_k.size_n == 3 && p.speculative.ngram_map_k.size_m == 5 &&
             p.speculative.ngram_map_k.min_hits == 2 && p.speculative.ngram_simple.size_n == 4 &&
             p.speculative.ngram_map_k4v.size_m == 9, "ngram sizes");
    TH_CHECK(strcmp(p.speculative.lookup_cache_static, "s.bin") == 0 &&
             strcmp(p.speculative.lookup_cache_dynamic, "d.bin") == 0, "lookup caches");
    common_params_free(&p);

    // "none" anywhere disables speculative decoding (llama.cpp)
    PARSE_OK(p, LLAMA_EXAMPLE_SPECULATIVE, "--spec-type", "ngram-mod,none");
    TH_CHECK(p.speculative.n_types == 1 && p.speculative.types[0] == COMMON_SPECULATIVE_TYPE_NONE, "none wins");
    common_params_free(&p);

    PARSE_ERR(LLAMA_EXAMPLE_SPECULATIVE, "out of range", "--spec-ngram-mod-n-match", "0");
    PARSE_ERR(LLAMA_EXAMPLE_SPECULATIVE, "invalid value", "--spec-ngram-map-k-size-n", "70000");

    // removed options: an error that names the replacement, whatever the spelling
    PARSE_ERR(LLAMA_EXAMPLE_SPECULATIVE, "use --spec-draft-n-max", "--draft-max", "4");
    PARSE_ERR(LLAMA_EXAMPLE_SPECULATIVE, "use --spec-draft-n-max", "--draft", "4");
    PARSE_ERR(LLAMA_EXAMPLE_SPECULATIVE, "use --spec-draft-n-max", "--draft-n", "4");
    PARSE_ERR(LLAMA_EXAMPLE_LOOKUP, "use --spec-draft-n-min", "--draft-min", "1");
    PARSE_ERR(LLAMA_EXAMPLE_SERVER, "use --spec-draft-n-min", "--draft-n-min", "1");
    PARSE_ERR(LLAMA_EXAMPLE_SPECULATIVE, "--spec-ngram-mod-n-match", "--spec-ngram-size-n", "12");
    PARSE_ERR(LLAMA_EXAMPLE_SPECULATIVE, "--spec-ngram-*-size-m", "--spec-ngram-size-m", "12");
    PARSE_ERR(LLAMA_EXAMPLE_SPECULATIVE, "has been removed", "--draft-max", "4");

    // the removed names fail from the environment too
    setenv("LLAMA_ARG_DRAFT_MAX", "8", 1);
    {
        struct common_params q;
        enum common_arg_status st = parse(&q, LLAMA_EXAMPLE_SPECULATIVE, 1, ARGV(NULL));
        TH_CHECK(st == COMMON_ARG_ERROR && strstr(g_err, "--spec-draft-n-max") != NULL, "env LLAMA_ARG_DRAFT_MAX: %s",
                 g_err);
        common_params_free(&q);
    }
    unsetenv("LLAMA_ARG_DRAFT_MAX");
}

// llama.cpp's options that this build added later: their fields, syntax errors, env names and program masks.
// Expected values follow llama.cpp's definitions (common/arg.cpp): hex masks with the last digit for CPUs 0-3,
// inclusive "lo-hi" ranges, llama.cpp's MoE override patterns, its example masks.
static void test_llamacpp_flags(void) {
    struct common_params p;
    const enum llama_example C = LLAMA_EXAMPLE_COMPLETION;
    const enum llama_example S = LLAMA_EXAMPLE_SERVER;

    // CPU placement, priority and polling
    PARSE_OK(p, C, "-C", "0x5", "-Crb", "2-4", "--cpu-strict", "1", "--prio", "-1", "--poll", "0",
             "--prio-batch", "2", "--poll-batch", "100", "--cpu-strict-batch", "0", "-tb", "2");
    TH_CHECK(p.cpuparams.mask_valid && p.cpuparams.cpumask[0] && !p.cpuparams.cpumask[1] && p.cpuparams.cpumask[2] &&
             !p.cpuparams.cpumask[3], "cpu mask 0x5");
    TH_CHECK(p.cpuparams.strict_cpu && p.cpuparams.priority == GGML_SCHED_PRIO_LOW && p.cpuparams.poll == 0, "cpu knobs");
    TH_CHECK(p.cpuparams_batch.mask_valid && !p.cpuparams_batch.cpumask[1] && p.cpuparams_batch.cpumask[2] &&
             p.cpuparams_batch.cpumask[4] && !p.cpuparams_batch.cpumask[5], "cpu range 2-4");
    TH_CHECK(p.cpuparams_batch.priority == GGML_SCHED_PRIO_HIGH && p.cpuparams_batch.poll == 100 &&
             !p.cpuparams_batch.strict_cpu && p.cpuparams_batch.n_threads == 2, "batch cpu knobs");
    common_params_free(&p);
    // a role without its own thread count takes the model role's settings (llama.cpp's postprocess_cpu_params)
    PARSE_OK(p, C, "-t", "3", "--poll", "7", "-Cr", "1-");
    TH_CHECK(p.cpuparams_batch.n_threads == 3 && p.cpuparams_batch.poll == 7 && p.cpuparams_batch.cpumask[1] &&
             p.cpuparams_batch.cpumask[GGML_MAX_N_THREADS - 1] && !p.cpuparams_batch.cpumask[0], "batch inherits");
    common_params_free(&p);
    // -C adds its CPUs to --cpu-range's, in either order (llama.cpp's parse_cpu_mask ORs into the mask)
    for (int order = 0; order < 2; order++) {
        if (order == 0) {
            PARSE_OK(p, C, "-Cr", "8-9", "-C", "1");
        } else {
            PARSE_OK(p, C, "-C", "1", "-Cr", "8-9");
        }
        TH_CHECK(p.cpuparams.cpumask[0] && p.cpuparams.cpumask[8] && p.cpuparams.cpumask[9] && !p.cpuparams.cpumask[1] &&
                 !p.cpuparams.cpumask[10], "-C with -Cr (order %d): CPUs 0, 8, 9", order);
        common_params_free(&p);
    }
    PARSE_ERR(C, "invalid cpumask 'xyz'", "-C", "xyz");
    PARSE_ERR(C, "invalid cpumask ''", "-Cb", "");
    PARSE_ERR(C, "invalid range '5-2'", "-Cr", "5-2");
    PARSE_ERR(C, "invalid range '7'", "-Cr", "7");
    PARSE_ERR(C, "invalid priority '4'", "--prio", "4");
    PARSE_ERR(C, "invalid priority '-1'", "--prio-batch", "-1");
    PARSE_ERR(C, "invalid polling level '101'", "--poll", "101");
    PARSE_ERR(C, "invalid value 'yes'", "--cpu-strict", "yes");

    // memory, devices, placement
    PARSE_OK(p, C, "--numa", "isolate", "-dt", "0.1", "-kvo", "--repack", "--op-offload", "-no-kvu", "-fitc", "1024",
             "--fit", "off", "-fitt", "512,256", "-ncmoe", "2", "-cmoe", "-ot", "token_embd=CPU", "-dev", "none");
    TH_CHECK(p.numa == GGML_NUMA_STRATEGY_ISOLATE, "numa");
    TH_CHECK(!p.no_kv_offload && !p.no_extra_bufts && !p.no_op_offload && !p.kv_unified, "positive forms");
    TH_CHECK(!p.fit_params && p.fit_params_min_ctx == 1024, "fit");
    TH_CHECK(p.n_tensor_buft_overrides == 4 && p.tensor_buft_overrides[4].pattern == NULL, "overrides %d",
             p.n_tensor_buft_overrides);
    TH_CHECK(p.n_tensor_buft_overrides == 4 &&
             strcmp(p.tensor_buft_overrides[0].pattern, "blk\\.0\\.ffn_(up|down|gate|gate_up)_(ch|)exps") == 0 &&
             strcmp(p.tensor_buft_overrides[1].pattern, "blk\\.1\\.ffn_(up|down|gate|gate_up)_(ch|)exps") == 0 &&
             strcmp(p.tensor_buft_overrides[2].pattern, "\\.ffn_(up|down|gate|gate_up)_(ch|)exps") == 0 &&
             strcmp(p.tensor_buft_overrides[3].pattern, "token_embd") == 0 &&
             p.tensor_buft_overrides[3].buft == ggml_backend_cpu_buffer_type(), "override patterns");
    TH_CHECK(p.devices && p.devices[0] == NULL, "-dev none");
    struct llama_model_params mp = common_model_params_to_llama(&p);
    TH_CHECK(mp.tensor_buft_overrides == p.tensor_buft_overrides && mp.devices == p.devices, "model params");
    common_params_free(&p);
    TH_CHECK(p.tensor_buft_overrides == NULL && p.devices == NULL, "freed");
    PARSE_OK(p, C, "-ts", "3,1", "-lm", "mmap+mlock");
    TH_CHECK(p.tensor_split[0] == 3.0f && p.tensor_split[1] == 1.0f && p.tensor_split[2] == 0.0f, "tensor split");
    TH_CHECK(p.use_mmap && p.use_mlock && !p.use_direct_io, "load mode");
    common_params_free(&p);
    PARSE_OK(p, C, "--load-mode", "none", "-dio");
    TH_CHECK(!p.use_mmap && !p.use_mlock && p.use_direct_io, "load mode none + dio");
    common_params_free(&p);
    PARSE_ERR(C, "invalid NUMA strategy 'all'", "--numa", "all");
    PARSE_ERR(C, "invalid device: CPU", "-dev", "CPU");
    PARSE_ERR(C, "invalid device: nosuchgpu", "--device", "nosuchgpu");
    PARSE_ERR(C, "unknown buffer type 'VRAM9'", "-ot", "x=VRAM9");
    PARSE_ERR(C, "expected <tensor name pattern>=<buffer type>", "-ot", "exps");
    PARSE_ERR(C, "invalid value '-1'", "-ncmoe", "-1");
    PARSE_ERR(C, "invalid proportion 'a'", "-ts", "1,a");
    PARSE_ERR(C, "but system only has 16 devices", "-ts", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1");
    PARSE_ERR(C, "unknown value for --fit: 'maybe'", "-fit", "maybe");
    PARSE_ERR(C, "invalid fit target", "-fitt", "1,,2");
    PARSE_ERR(C, "invalid load mode 'fast'", "-lm", "fast");

    // refused with the reason instead of "invalid argument"
    PARSE_ERR(C, "cannot download models", "-hf", "ggml-org/x-GGUF");
    PARSE_ERR(C, "cannot download models", "--hf-file", "x.gguf");
    PARSE_ERR(C, "cannot download models", "-mu", "https://example.com/x.gguf");
    PARSE_ERR(C, "cannot download models", "-hfd", "a/b");
    PARSE_ERR(C, "no RPC backend", "--rpc", "127.0.0.1:50052");
    PARSE_ERR(S, "multimodal input", "--mmproj", "mm.gguf");
    PARSE_ERR(LLAMA_EXAMPLE_CLI, "multimodal input", "--image", "a.png");
    PARSE_ERR(S, "no web UI", "--path", "/srv/www");
    PARSE_ERR(S, "no SSL support", "--ssl-key-file", "k.pem");
    PARSE_OK(p, S, "--no-mmproj", "--no-mmproj-offload", "-hft", "hf_x", "--offline", "--image-max-tokens", "64");
    TH_CHECK(p.offline, "accepted no-ops");
    common_params_free(&p);
    // llama.cpp's example masks
    PARSE_ERR(C, "argument --mmproj is not supported by this program", "--mmproj", "mm.gguf");
    PARSE_ERR(S, "argument --image is not supported by this program", "--image", "a.png");
    PARSE_ERR(C, "argument -sps is not supported by this program", "-sps", "0.5");
    PARSE_ERR(C, "argument --api-prefix is not supported by this program", "--api-prefix", "/x");
    PARSE_ERR(C, "argument --cache-ram is not supported by this program", "--cache-ram", "0");
    PARSE_ERR(LLAMA_EXAMPLE_PERPLEXITY, "argument --chat-template-file is not supported by this program",
              "--chat-template-file", "t.jinja");

    // server and chat options
    char tmpl_path[] = "/tmp/argsgap-tmpl-XXXXXX";
    const int fd = mkstemp(tmpl_path);
    TH_CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
        const char * t = "{{ messages[0].content }}|\n";
        TH_CHECK(write(fd, t, strlen(t)) == (ssize_t) strlen(t), "write template");
        close(fd);
        PARSE_OK(p, S, "--chat-template-file", tmpl_path, "--chat-template-kwargs", "{\"a\":1,\"b\":\"x\"}",
                 "--chat-template-kwargs", "{\"b\":\"y\"}", "-sps", "0.5", "--api-prefix", "/v9",
                 "--reasoning-format", "none", "--reasoning-budget", "-1", "--ctx-checkpoints", "0", "-cram", "0",
                 "--no-prefill-assistant");
        // the whole file, final newline kept (llama.cpp's read_file)
        TH_CHECK(p.chat_template && strcmp(p.chat_template, t) == 0, "template file '%s'", p.chat_template);
        TH_CHECK(p.default_template_kwargs && strcmp(p.default_template_kwargs, "{\"a\":1,\"b\":\"y\"}") == 0,
                 "kwargs merged '%s'", p.default_template_kwargs);
        TH_CHECK(p.slot_prompt_similarity == 0.5f && p.api_prefix && strcmp(p.api_prefix, "/v9") == 0, "sps/prefix");
        TH_CHECK(p.reasoning_format == COMMON_REASONING_FORMAT_NONE && p.reasoning_budget == -1, "reasoning");
        TH_CHECK(p.n_ctx_checkpoints == 0 && p.cache_ram_mib == 0 && !p.prefill_assistant, "checkpoints/cache/prefill");
        common_params_free(&p);
        unlink(tmpl_path);
    }
    PARSE_OK(p, S, "-m", "x.gguf");
    TH_CHECK(p.slot_prompt_similarity == 0.10f && p.api_prefix == NULL && p.default_template_kwargs == NULL &&
             p.reasoning_format == COMMON_REASONING_FORMAT_AUTO && p.n_ctx_checkpoints == 32 && p.cache_ram_mib == 8192,
             "server defaults");
    common_params_free(&p);
    PARSE_ERR(S, "failed to open file '/nonexistent/t.jinja'", "--chat-template-file", "/nonexistent/t.jinja");
    PARSE_ERR(S, "must be a valid JSON object", "--chat-template-kwargs", "[1]");
    PARSE_ERR(S, "must be a valid JSON object", "--chat-template-kwargs", "{bad");
    PARSE_ERR(S, "invalid similarity '1.5'", "-sps", "1.5");
    PARSE_ERR(S, "invalid API prefix 'x'", "--api-prefix", "x");
    PARSE_ERR(S, "invalid API prefix '/x/'", "--api-prefix", "/x/");
    PARSE_ERR(S, "Unknown reasoning format: think", "--reasoning-format", "think");
    PARSE_ERR(S, "invalid reasoning budget '-2'", "--reasoning-budget", "-2");
    PARSE_ERR(S, "invalid number of checkpoints", "--swa-checkpoints", "-1");
    PARSE_ERR(S, "invalid cache size", "-cram", "-2");
    PARSE_ERR(S, "unknown value for --log-colors: 'bright'", "--log-colors", "bright");

    // '_' stands for '-' in long options, as in llama.cpp
    PARSE_OK(p, C, "--ctx_size", "64", "--n_predict", "3");
    TH_CHECK(p.n_ctx == 64 && p.n_predict == 3, "underscores");
    common_params_free(&p);
    PARSE_ERR(C, "invalid argument: -n_predict", "-n_predict", "3");

    // env names
    setenv("LLAMA_ARG_API_PREFIX", "/env", 1);
    setenv("LLAMA_ARG_CHAT_TEMPLATE_KWARGS", "{\"k\":true}", 1);
    setenv("LLAMA_ARG_NUMA", "distribute", 1);
    setenv("LLAMA_ARG_CACHE_RAM", "0", 1);
    PARSE_OK(p, S, "-m", "x.gguf");
    TH_CHECK(p.api_prefix && strcmp(p.api_prefix, "/env") == 0 && p.default_template_kwargs &&
             strcmp(p.default_template_kwargs, "{\"k\":true}") == 0 && p.numa == GGML_NUMA_STRATEGY_DISTRIBUTE &&
             p.cache_ram_mib == 0, "server env");
    common_params_free(&p);
    unsetenv("LLAMA_ARG_API_PREFIX");
    unsetenv("LLAMA_ARG_CHAT_TEMPLATE_KWARGS");
    unsetenv("LLAMA_ARG_NUMA");
    unsetenv("LLAMA_ARG_CACHE_RAM");
    setenv("LLAMA_ARG_HF_REPO", "a/b", 1);
    PARSE_ERR(C, "error while handling environment variable \"LLAMA_ARG_HF_REPO\"", "-n", "1");
    unsetenv("LLAMA_ARG_HF_REPO");

    // --list-devices prints and stops the program
    PARSE_OK(p, C, "-n", "1");
    common_params_free(&p);
    TH_CHECK(parse(&p, C, ARGC("--list-devices"), ARGV("--list-devices")) == COMMON_ARG_EXIT, "--list-devices exits");
    common_params_free(&p);

    // --log-file: every message, also the ones for stdout, lands in the file
    char log_path[] = "/tmp/argsgap-log-XXXXXX";
    const int lfd = mkstemp(log_path);
    TH_CHECK(lfd >= 0, "mkstemp log");
    if (lfd >= 0) {
        close(lfd);
        PARSE_OK(p, C, "--log-file", log_path);
        common_params_free(&p);
        LOG_INF("argsgap-info %d\n", 42);
        LOG_WRN("argsgap-warn\n");
        TH_CHECK(common_log_set_file(NULL), "close log file");
        size_t len = 0;
        char * text = common_read_file(log_path, &len);
        TH_CHECK(text && strstr(text, "argsgap-info 42\n") && strstr(text, "argsgap-warn\n"), "log file: '%s'",
                 text ? text : "(null)");
        free(text);
        unlink(log_path);
    }
    PARSE_ERR(C, "failed to open log file '/nonexistent/dir/x.log'", "--log-file", "/nonexistent/dir/x.log");
}

int main(void) {
    test_defaults();
    test_spec_flags();
    test_flag_forms();
    test_errors();
    test_env();
    test_table();
    test_helpers();
    test_tokenize();
    test_llamacpp_flags();
    return th_finish();
}
