// speculative decoding: the output-limit helper (SEEDS-SPEC §1.4 vectors), the draft-context params, and token
// identity: llama-speculative-simple with a draft model or n-gram drafts must print exactly what plain decoding
// (llama-completion) prints, greedy and with a seeded stochastic chain, while accepting drafted tokens.
#include "common.h"
#include "speculative.h"
#include "harness.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_limits(void) {
    struct { int32_t b, p, d, total, per_seq; } v[] = {
        { 16, 2,  3, 8, 4 },
        { 16, 2, -1, 2, 1 },
        {  6, 2,  3, 6, 4 },
        {  2, 1,  3, 2, 2 },
        { INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX },
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        struct common_speculative_output_limits r = common_speculative_get_output_limits(v[i].b, v[i].p, v[i].d);
        TH_CHECK(r.total == v[i].total && r.per_seq == v[i].per_seq, "(%d,%d,%d) -> (%d,%d), expected (%d,%d)",
                 v[i].b, v[i].p, v[i].d, r.total, r.per_seq, v[i].total, v[i].per_seq);
    }

    struct common_params p = common_params_default();
    p.n_parallel = 4;
    p.n_outputs_max_per_seq = 8;
    p.speculative.draft.cache_type_k = GGML_TYPE_Q8_0;
    p.speculative.draft.cache_type_v = GGML_TYPE_Q4_0;
    struct llama_context_params cp = common_base_params_to_speculative(&p);
    TH_CHECK(cp.n_outputs_max == 4 && cp.n_outputs_max_per_seq == 1, "draft outputs %u/%u, expected 4/1",
             cp.n_outputs_max, cp.n_outputs_max_per_seq);
    TH_CHECK(cp.type_k == GGML_TYPE_Q8_0 && cp.type_v == GGML_TYPE_Q4_0, "draft cache types not copied");

    TH_CHECK(common_speculative_n_max(&p.speculative) == 0, "no speculative type: n_max must be 0");
    p.speculative.types[0] = COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE;
    TH_CHECK(common_speculative_n_max(&p.speculative) == 3, "draft-simple: n_max must be the default 3");
    common_params_free(&p);
}

static char * run_capture(const char * cmd, const char * dir, const char * tag, char ** err_out) {
    char out_path[4096], err_path[4096], full[16384];
    snprintf(out_path, sizeof(out_path), "%s/%s.out", dir, tag);
    snprintf(err_path, sizeof(err_path), "%s/%s.err", dir, tag);
    snprintf(full, sizeof(full), "%s >'%s' 2>'%s'", cmd, out_path, err_path);
    const int rc = system(full);
    TH_CHECK(rc == 0, "%s: exit status %d (%s)", tag, rc, full);
    char * out = th_read_file(out_path, NULL);
    *err_out = th_read_file(err_path, NULL);
    return out;
}

static long field(const char * text, const char * name) {
    const char * s = text ? strstr(text, name) : NULL;
    return s ? strtol(s + strlen(name), NULL, 10) : -1;
}

static void test_identity(const char * completion, const char * spec) {
    const char * tgt    = th_data_path("models/kjv/kjv-target-f32.gguf");
    const char * dft    = th_data_path("models/kjv/kjv-draft-f32.gguf");
    const char * dft_q4 = th_data_path("models/kjv/kjv-target-q4_0.gguf");
    if (!th_require_file(tgt) || !th_require_file(dft) || !th_require_file(dft_q4)) {
        return;
    }
    char dir[] = "/tmp/test-speculative-XXXXXX";
    if (!mkdtemp(dir)) {
        TH_CHECK(false, "mkdtemp failed");
        return;
    }
    // the n-gram case needs a prompt whose continuation repeats earlier text
    const char * prompt_model = "In the beginning God created";
    const char * prompt_ngram = "In the beginning God created the heaven and the earth. "
                                "In the beginning God created the heaven and the earth. "
                                "In the beginning God created the heaven and the earth. "
                                "In the beginning God created the heaven and the earth. "
                                "In the beginning God created the heaven and the earth.  In the beginning";
    const char * modes[2][2] = {
        { "greedy", "--temp 0" },
        { "dist",   "--temp 0.8 --top-k 40 --seed 4242 -bs" },
    };
    struct { const char * tag; const char * prompt; char draft_args[4200]; } cases[3];
    cases[0].tag = "draft-f32";  cases[0].prompt = prompt_model;
    snprintf(cases[0].draft_args, sizeof(cases[0].draft_args), "-md '%s'", dft);
    cases[1].tag = "draft-q4_0"; cases[1].prompt = prompt_model;
    snprintf(cases[1].draft_args, sizeof(cases[1].draft_args), "-md '%s'", dft_q4);
    cases[2].tag = "ngram";      cases[2].prompt = prompt_ngram;
    snprintf(cases[2].draft_args, sizeof(cases[2].draft_args), "--spec-type ngram-simple");

    for (int m = 0; m < 2; m++) {
        for (int c = 0; c < 3; c++) {
            char cmd[16384], tag[128];
            char * err_base = NULL;
            char * err_spec = NULL;
            snprintf(cmd, sizeof(cmd), "'%s' -m '%s' -p '%s' -n 64 %s -no-cnv", completion, tgt, cases[c].prompt,
                     modes[m][1]);
            snprintf(tag, sizeof(tag), "%s-%s-plain", modes[m][0], cases[c].tag);
            char * base = run_capture(cmd, dir, tag, &err_base);
            snprintf(cmd, sizeof(cmd), "'%s' -m '%s' -p '%s' -n 64 %s %s", spec, tgt, cases[c].prompt, modes[m][1],
                     cases[c].draft_args);
            snprintf(tag, sizeof(tag), "%s-%s-spec", modes[m][0], cases[c].tag);
            char * got = run_capture(cmd, dir, tag, &err_spec);
            TH_CHECK(base && got && strcmp(base, got) == 0, "%s: speculative output differs from plain decoding\n"
                     "plain: %s\nspec:  %s", tag, base ? base : "(none)", got ? got : "(none)");
            const long n_predict = field(err_spec, "n_predict = ");
            const long n_drafted = field(err_spec, "n_drafted = ");
            const long n_accept  = field(err_spec, "n_accept  = ");
            TH_CHECK(n_predict == 64, "%s: %ld tokens generated, expected 64", tag, n_predict);
            // ngram-simple keys on 12-grams: a sampled (temp 0.8) continuation rarely repeats one, so only the
            // greedy n-gram run is required to accept drafts
            const bool need_accept = !(c == 2 && m == 1);
            TH_CHECK(n_drafted >= 0 && n_accept >= 0 && n_accept <= n_drafted && (!need_accept || n_accept > 0),
                     "%s: n_drafted %ld n_accept %ld", tag, n_drafted, n_accept);
            fprintf(stderr, "%s: n_drafted %ld n_accept %ld\n", tag, n_drafted, n_accept);
            free(base);
            free(got);
            free(err_base);
            free(err_spec);
        }
    }
    char rm[4200];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    if (system(rm) != 0) {
        fprintf(stderr, "warning: could not remove %s\n", dir);
    }
}

int main(int argc, char ** argv) {
    if (argc >= 2 && strcmp(argv[1], "limits") == 0) {
        test_limits();
    } else if (argc >= 4 && strcmp(argv[1], "identity") == 0) {
        test_identity(argv[2], argv[3]);
    } else {
        fprintf(stderr, "usage: %s limits | identity LLAMA_COMPLETION LLAMA_SPECULATIVE_SIMPLE\n", argv[0]);
        return 2;
    }
    return th_finish();
}
