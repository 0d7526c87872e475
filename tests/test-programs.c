// End-to-end tests of llama-simple, llama-completion, llama-batched and llama-embedding: the programs are
// run as child processes and their stdout is compared with llama.cpp's outputs in reference/kjv/index.json
// (greedy and seeded-sampling cases); bad command lines and bad files must end with status 1 and an error
// message, never with a signal.
//
// usage: test-programs MODE simple completion batched embedding
//   MODE = basic    : kjv-target-f32 greedy (simple, completion, batched), embedding checks, error cases
//          quant    : greedy completion for the other six kjv model files
//          sampling : the six seeded sampling cases: llama.cpp's chain, CPU == -bs, repeatable
#include "harness.h"
#include "harness-run.h"

#include "gguf.h"

#include <errno.h>
#include <jansson.h>
#include <unistd.h>

static const char * g_bin_simple;
static const char * g_bin_completion;
static const char * g_bin_batched;
static const char * g_bin_embedding;

// runs argv (NULL-terminated) with stdout/stderr captured
static struct th_run_result run(char * const argv[]) {
    return th_run(argv, NULL);
}

static json_t * load_index(void) {
    const char * path = th_data_path("reference/kjv/index.json");
    if (!th_require_file(path)) {
        return NULL;
    }
    json_error_t jerr;
    json_t * root = json_load_file(path, 0, &jerr);
    TH_CHECK(root != NULL, "index.json: %s", jerr.text);
    return root;
}

static const char * jstr(const json_t * o, const char * key) {
    const json_t * v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static int count_lines(const char * s) {
    int n = 0;
    for (; *s; s++) {
        n += *s == '\n';
    }
    return n;
}

// one greedy case through llama-completion: stdout must equal llama.cpp's byte for byte
static void check_completion_case(const json_t * c, const char * extra_sampling_args[]) {
    const char * model  = jstr(c, "model");
    const char * prompt = jstr(c, "prompt");
    const char * expect = jstr(c, "stdout");
    const char * mpath  = th_data_path("models/kjv/%s", model);
    if (!th_require_file(mpath)) {
        return;
    }
    char * argv[40];
    int a = 0;
    argv[a++] = (char *) g_bin_completion;
    argv[a++] = "-m"; argv[a++] = (char *) mpath;
    argv[a++] = "-p"; argv[a++] = (char *) prompt;
    argv[a++] = "-n"; argv[a++] = "64";
    argv[a++] = "-no-cnv";
    argv[a++] = "-t"; argv[a++] = "1";
    for (int k = 0; extra_sampling_args[k]; k++) {
        argv[a++] = (char *) extra_sampling_args[k];
    }
    argv[a] = NULL;
    struct th_run_result r = run(argv);
    TH_CHECK(r.status == 0, "%s '%s': exit %d\n%s", model, prompt, r.status, r.err);
    TH_CHECK(strcmp(r.out, expect) == 0, "%s '%s' (%s):\n  got      '%s'\n  expected '%s'", model, prompt,
             jstr(c, "sampler"), r.out, expect);
    th_run_free(&r);
}

static void test_greedy_completion(const json_t * root, bool f32_only) {
    const char * greedy_args[] = { "--temp", "0", NULL };
    const json_t * cases = json_object_get(root, "greedy");
    size_t i;
    const json_t * c;
    int n = 0;
    json_array_foreach(cases, i, c) {
        const bool is_f32 = strcmp(jstr(c, "model"), "kjv-target-f32.gguf") == 0;
        if (is_f32 != f32_only) {
            continue;
        }
        check_completion_case(c, greedy_args);
        n++;
    }
    TH_CHECK(n == (f32_only ? 5 : 30), "greedy cases run: %d", n);
}

// The seeded cases through llama-completion. llama.cpp's ids themselves are checked fed-reference style in
// test-backend-sampler (kjv_reference): free-running text cannot equal llama.cpp's here because the reference
// build's dist drew nothing for a single candidate, while the seeds' dist (ours) draws once even then. What the
// program must show: the command line gives llama.cpp's chain and prompt echo, the run is repeatable, and the
// backend chain (-bs) gives the same text as the CPU chain.
static void test_sampling(const json_t * root) {
    const json_t * cases = json_object_get(root, "sampling");
    const char * mpath = th_data_path("models/kjv/kjv-target-f32.gguf");
    if (!th_require_file(mpath)) {
        return;
    }
    size_t i;
    const json_t * c;
    int n = 0;
    json_array_foreach(cases, i, c) {
        // the sampler options are the part of the command between -n 64 and -no-cnv
        const char * cmd = jstr(c, "command");
        const char * from = strstr(cmd, "-n 64 ");
        const char * to   = strstr(cmd, " -no-cnv");
        TH_CHECK(from && to && to > from, "command shape: %s", cmd);
        if (!from || !to || to <= from) {
            continue;
        }
        from += 6;
        char opts[512];
        snprintf(opts, sizeof(opts), "%.*s", (int) (to - from), from);
        char * argv[48];
        int a = 0;
        argv[a++] = (char *) g_bin_completion;
        argv[a++] = "-m"; argv[a++] = (char *) mpath;
        argv[a++] = "-p"; argv[a++] = (char *) jstr(c, "prompt");
        argv[a++] = "-n"; argv[a++] = "64";
        argv[a++] = "-no-cnv";
        argv[a++] = "-t"; argv[a++] = "1";
        for (char * tok = strtok(opts, " "); tok && a < 40; tok = strtok(NULL, " ")) {
            argv[a++] = tok;
        }
        argv[a] = NULL;
        struct th_run_result cpu = run(argv);
        argv[a++] = "-bs";
        argv[a] = NULL;
        struct th_run_result bk = run(argv);
        const char * what = jstr(c, "sampler");
        TH_CHECK(cpu.status == 0 && bk.status == 0, "%s: exit %d / %d (-bs)\n%s", what, cpu.status, bk.status, bk.err);
        // llama.cpp's stdout starts with the echoed prompt (dummy-prefix space) and ends with "\n\n"
        char echo[512];
        snprintf(echo, sizeof(echo), " %s", jstr(c, "prompt"));
        const size_t lo = strlen(cpu.out);
        TH_CHECK(strncmp(cpu.out, echo, strlen(echo)) == 0 && lo > strlen(echo) + 2 &&
                 strcmp(cpu.out + lo - 2, "\n\n") == 0, "%s: output shape '%s'", what, cpu.out);
        TH_CHECK(strcmp(cpu.out, bk.out) == 0, "%s '%s': -bs differs from the CPU chain:\n  cpu '%s'\n  -bs '%s'", what,
                 jstr(c, "prompt"), cpu.out, bk.out);
        // llama.cpp's chain for these options, printed as llama.cpp does
        const bool penalties = strstr(what, "repeat-penalty") != NULL;
        const bool filters   = strstr(what, "pure-temp") == NULL;
        char chain[256];
        // (a "?" marks a sampler its parameters disable, e.g. temp-ext at temperature 1)
        snprintf(chain, sizeof(chain), "sampler chain: logits -> ?logit-bias -> %s -> ?dry -> ?top-n-sigma -> %s -> "
                 "?typical -> %s -> %s -> ?xtc -> %s -> dist", penalties ? "penalties" : "?penalties",
                 filters ? "top-k" : "?top-k", filters ? "top-p" : "?top-p",
                 strstr(what, "minp0.05") ? "min-p" : "?min-p", filters ? "temp-ext" : "?temp-ext");
        TH_CHECK(strstr(cpu.err, chain) != NULL, "%s: expected '%s' in the log:\n%s", what, chain, cpu.err);
        TH_CHECK(strstr(cpu.err, "sampler seed: 4242") != NULL, "%s: seed line missing", what);
        struct th_run_result again = run(argv);
        TH_CHECK(again.status == 0 && strcmp(again.out, bk.out) == 0, "%s: a second -bs run differs", what);
        th_run_free(&again);
        th_run_free(&cpu);
        th_run_free(&bk);
        n++;
    }
    TH_CHECK(n == 6, "sampling cases run: %d", n);
}

static void test_simple(const json_t * root) {
    const json_t * cases = json_object_get(root, "greedy");
    size_t i;
    const json_t * c;
    json_array_foreach(cases, i, c) {
        if (strcmp(jstr(c, "model"), "kjv-target-f32.gguf") != 0) {
            continue;
        }
        const char * mpath = th_data_path("models/kjv/%s", jstr(c, "model"));
        if (!th_require_file(mpath)) {
            return;
        }
        // llama-simple takes the prompt as trailing words and renders special tokens (BOS = "<s>")
        char * argv[] = { (char *) g_bin_simple, "-m", (char *) mpath, "-n", "64", (char *) jstr(c, "prompt"), NULL };
        struct th_run_result r = run(argv);
        char expect[4096];
        snprintf(expect, sizeof(expect), "<s> %s%s\n", jstr(c, "prompt"), jstr(c, "generated_text"));
        TH_CHECK(r.status == 0, "simple exit %d: %s", r.status, r.err);
        TH_CHECK(strcmp(r.out, expect) == 0, "simple '%s':\n  got      '%s'\n  expected '%s'", jstr(c, "prompt"), r.out, expect);
        TH_CHECK(strstr(r.err, "main: decoded 64 tokens in ") != NULL && strstr(r.err, " t/s") != NULL,
                 "simple timing line missing:\n%s", r.err);
        th_run_free(&r);
    }
}

static void test_batched(const json_t * root) {
    const char * mpath = th_data_path("models/kjv/kjv-target-f32.gguf");
    if (!th_require_file(mpath)) {
        return;
    }
    const json_t * cases = json_object_get(root, "greedy");
    size_t i;
    const json_t * c;
    json_array_foreach(cases, i, c) {
        if (strcmp(jstr(c, "model"), "kjv-target-f32.gguf") != 0 || strcmp(jstr(c, "prompt"), "And God said") != 0) {
            continue;
        }
        // 4 greedy sequences of 40 tokens (prompt included) over one shared prompt: each must be the start of
        // the greedy reference text
        char * argv[] = { (char *) g_bin_batched, "-m", (char *) mpath, "-p", "And God said", "-n", "40", "-np", "4",
                          "--temp", "0", "-t", "1", NULL };
        struct th_run_result r = run(argv);
        TH_CHECK(r.status == 0, "batched exit %d: %s", r.status, r.err);
        const char * gen = jstr(c, "generated_text");
        for (int s = 0; s < 4; s++) {
            char head[64];
            snprintf(head, sizeof(head), "sequence %d:\n\nAnd God said", s);
            const char * at = strstr(r.out, head);
            TH_CHECK(at != NULL, "batched: '%s' missing in\n%s", head, r.out);
            if (!at) {
                continue;
            }
            at += strlen(head);
            const char * end = strstr(at, "\n\n");
            const size_t len = end ? (size_t) (end - at) : strlen(at);
            // 40 - 4 prompt tokens = 36 generated tokens; at least a good part of the text must be there
            TH_CHECK(len > 40 && strncmp(at, gen, len) == 0, "batched sequence %d: '%.*s' is not a prefix of '%s'",
                     s, (int) len, at, gen);
        }
        th_run_free(&r);
    }
}

// parses the numbers after "embedding K: " on one line
static int parse_embedding_line(const char * out, int k, float * vals, int max) {
    char head[32];
    snprintf(head, sizeof(head), "embedding %d: ", k);
    const char * p = strstr(out, head);
    if (!p) {
        return -1;
    }
    p += strlen(head);
    int n = 0;
    while (n < max) {
        char * end = NULL;
        float v = strtof(p, &end);
        if (end == p) {
            break;
        }
        vals[n++] = v;
        p = end;
    }
    return n;
}

static void test_embedding(void) {
    const char * mpath = th_data_path("models/kjv/kjv-target-f32.gguf");
    if (!th_require_file(mpath)) {
        return;
    }
    enum { N_EMBD_MAX = 4096 };
    static float one[N_EMBD_MAX], pair0[N_EMBD_MAX], pair1[N_EMBD_MAX];

    // one prompt: the full embedding, L2-normalized by default
    char * argv1[] = { (char *) g_bin_embedding, "-m", (char *) mpath, "-p", "In the beginning", "--pooling", "mean",
                       "-t", "1", NULL };
    struct th_run_result r = run(argv1);
    TH_CHECK(r.status == 0, "embedding exit %d: %s", r.status, r.err);
    const int n_embd = parse_embedding_line(r.out, 0, one, N_EMBD_MAX);
    TH_CHECK(n_embd > 16, "embedding values: %d\n%s", n_embd, r.out);
    double norm = 0.0;
    for (int i = 0; i < n_embd; i++) {
        norm += (double) one[i] * one[i];
    }
    TH_CHECK(fabs(sqrt(norm) - 1.0) < 1e-3, "L2 norm %f", sqrt(norm));
    th_run_free(&r);

    // two prompts in one batch give the same embeddings as each alone (pooling keeps sequences apart)
    char * argv2[] = { (char *) g_bin_embedding, "-m", (char *) mpath, "-p", "And God said\nIn the beginning",
                       "--pooling", "mean", "--embd-output-format", "array", "-t", "1", NULL };
    r = run(argv2);
    TH_CHECK(r.status == 0, "embedding (2) exit %d: %s", r.status, r.err);
    {
        // "[[a,b,...],[c,d,...]]"
        const char * p = strstr(r.out, "[[");
        int k = 0, n0 = 0, n1 = 0;
        if (p) {
            p += 2;
            while (*p && k < 2) {
                char * end = NULL;
                float v = strtof(p, &end);
                if (end == p) {
                    break;
                }
                if (k == 0 && n0 < N_EMBD_MAX) pair0[n0++] = v;
                if (k == 1 && n1 < N_EMBD_MAX) pair1[n1++] = v;
                p = end;
                if (*p == ',') {
                    p++;
                } else if (strncmp(p, "],[", 3) == 0) {
                    p += 3;
                    k++;
                } else {
                    break;
                }
            }
        }
        TH_CHECK(n0 == n_embd && n1 == n_embd, "array output sizes %d %d (n_embd %d)", n0, n1, n_embd);
        float max_diff = 0.0f;
        for (int i = 0; i < n1 && i < n_embd; i++) {
            float d = fabsf(pair1[i] - one[i]);
            max_diff = d > max_diff ? d : max_diff;
        }
        TH_CHECK(max_diff < 2e-5f, "second prompt in a batch differs from it alone by %g", max_diff);
        // the two prompts differ, so their embeddings must too
        float d01 = 0.0f;
        for (int i = 0; i < n0 && i < n1; i++) {
            d01 += fabsf(pair0[i] - pair1[i]);
        }
        TH_CHECK(d01 > 1e-3f, "different prompts gave the same embedding");
    }
    th_run_free(&r);

    // identical lines: cosine similarity 1.00 in the matrix
    char * argv3[] = { (char *) g_bin_embedding, "-m", (char *) mpath, "-p", "Amen\nAmen", "--pooling", "last",
                       "-t", "1", NULL };
    r = run(argv3);
    TH_CHECK(r.status == 0, "embedding (3) exit %d: %s", r.status, r.err);
    TH_CHECK(strstr(r.out, "cosine similarity matrix:") != NULL && strstr(r.out, "  1.00   1.00 Amen") != NULL,
             "similarity matrix:\n%s", r.out);
    th_run_free(&r);

    char * argv4[] = { (char *) g_bin_embedding, "-m", (char *) mpath, "-p", "x", "--pooling", "max", NULL };
    r = run(argv4);
    TH_CHECK(r.status == 1 && strstr(r.err, "invalid pooling type 'max'") != NULL, "bad pooling: %d %s", r.status, r.err);
    th_run_free(&r);
}

static void expect_failure(char * const argv[], const char * needle, bool one_line) {
    struct th_run_result r = run(argv);
    TH_CHECK(r.status == 1, "%s %s: exit status %d (want 1, no signal)\n%s", argv[0], argv[1] ? argv[1] : "", r.status, r.err);
    TH_CHECK(strstr(r.err, needle) != NULL, "stderr lacks '%s':\n%s", needle, r.err);
    if (one_line) {
        TH_CHECK(count_lines(r.err) == 1, "want one error line, got:\n%s", r.err);
    }
    th_run_free(&r);
}

static void test_errors(void) {
    const char * mpath = th_data_path("models/kjv/kjv-target-f32.gguf");
    if (!th_require_file(mpath)) {
        return;
    }
    {
        char * argv[] = { (char *) g_bin_completion, "-m", (char *) mpath, "--bogus", NULL };
        expect_failure(argv, "error: invalid argument: --bogus", true);
    }
    {
        char * argv[] = { (char *) g_bin_completion, "-m", (char *) mpath, "-n", NULL };
        expect_failure(argv, "error: expected value for argument: -n", true);
    }
    {
        char * argv[] = { (char *) g_bin_completion, "-m", (char *) mpath, "-c", "lots", NULL };
        expect_failure(argv, "invalid integer 'lots'", true);
    }
    {
        char * argv[] = { (char *) g_bin_batched, "-m", (char *) mpath, "--pooling", "mean", NULL };
        expect_failure(argv, "argument --pooling is not supported by this program", true);
    }
    {
        char * argv[] = { (char *) g_bin_completion, "-m", "/nonexistent/model.gguf", "-p", "x", "-no-cnv", NULL };
        expect_failure(argv, "unable to load model", false);
    }
    {
        char * argv[] = { (char *) g_bin_simple, "-m", "/nonexistent/model.gguf", "x", NULL };
        expect_failure(argv, "unable to load model", false);
    }
    {
        char * argv[] = { (char *) g_bin_simple, "-n", "many", NULL };
        expect_failure(argv, "-n expects", false);
    }
    {
        char * argv[] = { (char *) g_bin_embedding, "-m", "/nonexistent/model.gguf", "-p", "x", NULL };
        expect_failure(argv, "unable to load model", false);
    }
    // a GGUF whose architecture nobody knows
    const char * bad_arch = "/tmp/test-programs-bad-arch.gguf";
    {
        struct gguf_init_params gp = { true, NULL };
        struct gguf_context * g = gguf_init_from_file(mpath, gp);
        TH_CHECK(g != NULL, "read model header");
        if (g) {
            gguf_set_val_str(g, "general.architecture", "no-such-arch");
            TH_CHECK(gguf_write_to_file(g, bad_arch, true), "write bad-arch file");
            gguf_free(g);
            char * argv[] = { (char *) g_bin_completion, "-m", (char *) bad_arch, "-p", "x", "-no-cnv", NULL };
            expect_failure(argv, "unable to load model", false);
            unlink(bad_arch);
        }
    }
    // not a GGUF at all
    const char * junk = "/tmp/test-programs-junk.gguf";
    {
        FILE * f = fopen(junk, "wb");
        if (f) {
            fputs("this is not a model\n", f);
            fclose(f);
        }
        char * argv[] = { (char *) g_bin_completion, "-m", (char *) junk, "-p", "x", "-no-cnv", NULL };
        expect_failure(argv, "unable to load model", false);
        unlink(junk);
    }
    // a context far larger than memory (sanitizer builds must let the huge allocation fail instead of aborting)
    {
        // a copy: setenv may replace the string getenv returned
        char prev_buf[512];
        const char * prev_env = getenv("ASAN_OPTIONS");
        const char * prev = NULL;
        if (prev_env) {
            snprintf(prev_buf, sizeof(prev_buf), "%s", prev_env);
            prev = prev_buf;
        }
        char opts[1024];
        snprintf(opts, sizeof(opts), "%s%sallocator_may_return_null=1", prev ? prev : "", prev && *prev ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
        char * argv[] = { (char *) g_bin_completion, "-m", (char *) mpath, "-c", "2000000000", "-p", "x", "-no-cnv", NULL };
        expect_failure(argv, "unable to load model", false);
        if (prev) {
            setenv("ASAN_OPTIONS", prev, 1);
        } else {
            unsetenv("ASAN_OPTIONS");
        }
    }
    // a prompt longer than the context
    {
        char * argv[] = { (char *) g_bin_completion, "-m", (char *) mpath, "-c", "16", "-p",
                          "In the beginning God created the heaven and the earth. And the earth was without form",
                          "-no-cnv", "--no-warmup", NULL };
        expect_failure(argv, "prompt is too long", false);
    }
    // --help exits 0 with the usage on stdout
    {
        char * argv[] = { (char *) g_bin_completion, "--help", NULL };
        struct th_run_result r = run(argv);
        TH_CHECK(r.status == 0 && strstr(r.out, "-m,    --model") == NULL && strstr(r.out, "-m, --model FNAME") != NULL &&
                 strstr(r.out, "example usage") != NULL, "--help: %d\n%s", r.status, r.out);
        th_run_free(&r);
    }
}

// context full: stop cleanly without --context-shift, keep going with it; --log-disable silences everything
static void test_context_and_logging(const json_t * root) {
    const char * mpath = th_data_path("models/kjv/kjv-target-f32.gguf");
    if (!th_require_file(mpath)) {
        return;
    }
    const char * ref = NULL;
    size_t i;
    const json_t * c;
    json_array_foreach(json_object_get(root, "greedy"), i, c) {
        if (strcmp(jstr(c, "model"), "kjv-target-f32.gguf") == 0 && strcmp(jstr(c, "prompt"), "In the beginning") == 0) {
            ref = jstr(c, "stdout");
        }
    }
    TH_CHECK(ref != NULL, "greedy reference for 'In the beginning'");
    if (!ref) {
        return;
    }

    char * argv1[] = { (char *) g_bin_completion, "-m", (char *) mpath, "-p", "In the beginning", "-c", "32", "-n", "64",
                       "--temp", "0", "-no-cnv", "-t", "1", NULL };
    struct th_run_result r1 = run(argv1);
    TH_CHECK(r1.status == 0, "context-full run exit %d", r1.status);
    TH_CHECK(strstr(r1.err, "context full and context shift is disabled => stopping") != NULL, "context-full message:\n%s", r1.err);
    // the text before the stop is the greedy text: prompt + generation, then "\n\n"
    const size_t n1 = strlen(r1.out);
    TH_CHECK(n1 > 20 && n1 < strlen(ref) && strncmp(r1.out, ref, n1 - 2) == 0, "context-full output:\n'%s'", r1.out);

    char * argv2[] = { (char *) g_bin_completion, "-m", (char *) mpath, "-p", "In the beginning", "-c", "32", "-n", "64",
                       "--temp", "0", "-no-cnv", "-t", "1", "--context-shift", NULL };
    struct th_run_result r2 = run(argv2);
    TH_CHECK(r2.status == 0, "context-shift run exit %d: %s", r2.status, r2.err);
    TH_CHECK(strlen(r2.out) > n1 + 20, "context shift generated no more text:\n'%s'", r2.out);
    TH_CHECK(strstr(r2.err, "eval time =") != NULL, "perf lines on stderr");
    th_run_free(&r1);
    th_run_free(&r2);

    char * argv3[] = { (char *) g_bin_completion, "-m", (char *) mpath, "-p", "In the beginning", "-n", "4", "--temp", "0",
                       "-no-cnv", "--log-disable", NULL };
    struct th_run_result r3 = run(argv3);
    TH_CHECK(r3.status == 0 && r3.out[0] == '\0' && r3.err[0] == '\0', "--log-disable: %d '%s' '%s'", r3.status, r3.out, r3.err);
    th_run_free(&r3);

    // -r: generation stops right after the reverse prompt appears
    char * argv6[] = { (char *) g_bin_completion, "-m", (char *) mpath, "-p", "In the beginning", "-n", "64", "--temp", "0",
                       "-no-cnv", "-t", "1", "-r", "Egypt", NULL };
    struct th_run_result r6 = run(argv6);
    TH_CHECK(r6.status == 0 && strcmp(r6.out, " In the beginning of the LORD, and in the land of Egypt\n\n") == 0,
             "-r run: '%s'", r6.out);
    th_run_free(&r6);

    // the prompt from a file (-f), its final newline dropped, and --no-display-prompt
    const char * pf = "/tmp/test-programs-prompt.txt";
    FILE * f = fopen(pf, "wb");
    if (f) {
        fputs("In the beginning\n", f);
        fclose(f);
    }
    char * argv4[] = { (char *) g_bin_completion, "-m", (char *) mpath, "-f", (char *) pf, "-n", "64", "--temp", "0",
                       "-no-cnv", "-t", "1", NULL };
    struct th_run_result r4 = run(argv4);
    TH_CHECK(r4.status == 0 && strcmp(r4.out, ref) == 0, "-f run:\n'%s'", r4.out);
    th_run_free(&r4);
    char * argv5[] = { (char *) g_bin_completion, "-m", (char *) mpath, "-f", (char *) pf, "-n", "64", "--temp", "0",
                       "-no-cnv", "-t", "1", "--no-display-prompt", NULL };
    struct th_run_result r5 = run(argv5);
    const char * gen_only = ref + strlen(" In the beginning");
    TH_CHECK(r5.status == 0 && strcmp(r5.out, gen_only) == 0, "--no-display-prompt:\n'%s'", r5.out);
    th_run_free(&r5);
    unlink(pf);
}

int main(int argc, char ** argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s basic|quant|sampling SIMPLE COMPLETION BATCHED EMBEDDING\n", argv[0]);
        return 2;
    }
    const char * mode = argv[1];
    g_bin_simple     = argv[2];
    g_bin_completion = argv[3];
    g_bin_batched    = argv[4];
    g_bin_embedding  = argv[5];

    json_t * root = load_index();
    if (root) {
        if (strcmp(mode, "basic") == 0) {
            test_greedy_completion(root, true);
            test_simple(root);
            test_batched(root);
            test_embedding();
            test_errors();
            test_context_and_logging(root);
        } else if (strcmp(mode, "quant") == 0) {
            test_greedy_completion(root, false);
        } else if (strcmp(mode, "sampling") == 0) {
            test_sampling(root);
        } else {
            TH_CHECK(false, "unknown mode %s", mode);
        }
        json_decref(root);
    }
    return th_finish();
}
