// speculative decoding: the output-limit helper (SEEDS-SPEC §1.4 vectors), the draft-context params, the n-gram
// cache (hand-computed counts and drafts, llama.cpp's file format byte for byte, malformed files), the ngram-mod
// and ngram-map-k drafters, and token identity: llama-speculative-simple (draft model, ngram-simple, ngram-cache,
// ngram-map-k, ngram-mod), llama-lookup and llama-speculative (greedy tree) must print exactly what plain decoding
// (llama-completion) prints, greedy and (except the tree) with a seeded stochastic chain, while accepting drafts;
// the draft model drafts the same tokens with its sampler on the backend (default) and on the CPU.
#include "common.h"
#include "ngram-cache.h"
#include "ngram-map.h"
#include "ngram-mod.h"
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

// the number after "name", any spaces and '=' (llama.cpp aligns these differently per program)
static long field(const char * text, const char * name) {
    const char * s = text ? strstr(text, name) : NULL;
    if (!s) {
        return -1;
    }
    s += strlen(name);
    while (*s == ' ' || *s == '=') {
        s++;
    }
    return strtol(s, NULL, 10);
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
    // "none": no draft source, so the target context has one output per sequence (non-transactional dist with
    // -bs); the stream must still equal plain decoding
    // the draft model samples on the backend by default (--spec-draft-backend-sampling); "-cpu" cases run the same
    // drafts on the CPU and must draft and accept exactly as many tokens (same top-10 rule, same p-min test)
    struct { const char * tag; const char * prompt; char draft_args[4200]; } cases[8];
    cases[0].tag = "draft-f32";  cases[0].prompt = prompt_model;
    snprintf(cases[0].draft_args, sizeof(cases[0].draft_args), "-md '%s'", dft);
    cases[1].tag = "draft-q4_0"; cases[1].prompt = prompt_model;
    snprintf(cases[1].draft_args, sizeof(cases[1].draft_args), "-md '%s'", dft_q4);
    cases[2].tag = "ngram";      cases[2].prompt = prompt_ngram;
    // ngram-simple drafts up to --spec-ngram-simple-size-m (48) tokens; 8 keeps the rejected verify work small
    snprintf(cases[2].draft_args, sizeof(cases[2].draft_args), "--spec-type ngram-simple --spec-ngram-simple-size-m 8");
    cases[3].tag = "none";       cases[3].prompt = prompt_model;
    cases[3].draft_args[0] = '\0';
    cases[4].tag = "draft-f32-cpu"; cases[4].prompt = prompt_model;
    snprintf(cases[4].draft_args, sizeof(cases[4].draft_args), "-md '%s' --no-spec-draft-backend-sampling", dft);
    // a p-min that stops some drafts early: the probability among the ten candidates decides on both paths
    cases[5].tag = "draft-pmin"; cases[5].prompt = prompt_model;
    snprintf(cases[5].draft_args, sizeof(cases[5].draft_args),
             "-md '%s' --spec-draft-n-max 6 --spec-draft-p-min 0.5 --spec-draft-backend-sampling", dft);
    cases[6].tag = "draft-pmin-cpu"; cases[6].prompt = prompt_model;
    snprintf(cases[6].draft_args, sizeof(cases[6].draft_args),
             "-md '%s' --spec-draft-n-max 6 --spec-draft-p-min 0.5 --no-spec-draft-backend-sampling", dft);
    const int n_cases = 7;
    // backend / CPU pairs of draft cases: (backend index, cpu index)
    const int pairs[2][2] = { { 0, 4 }, { 5, 6 } };

    for (int m = 0; m < 2; m++) {
        // plain decoding depends on the prompt and mode only: run it once per prompt
        char * plain_model = NULL;
        char * plain_ngram = NULL;
        long counts[8][2] = { { 0 } }; // n_drafted, n_accept per case
        for (int c = 0; c < n_cases; c++) {
            char cmd[16384], tag[128];
            char * err_base = NULL;
            char * err_spec = NULL;
            char ** slot = cases[c].prompt == prompt_model ? &plain_model : &plain_ngram;
            if (!*slot) {
                snprintf(cmd, sizeof(cmd), "'%s' -m '%s' -p '%s' -n 64 %s -no-cnv", completion, tgt, cases[c].prompt,
                         modes[m][1]);
                snprintf(tag, sizeof(tag), "%s-%s-plain", modes[m][0], cases[c].tag);
                *slot = run_capture(cmd, dir, tag, &err_base);
            }
            const char * base = *slot;
            snprintf(cmd, sizeof(cmd), "'%s' -m '%s' -p '%s' -n 64 %s %s", spec, tgt, cases[c].prompt, modes[m][1],
                     cases[c].draft_args);
            snprintf(tag, sizeof(tag), "%s-%s-spec", modes[m][0], cases[c].tag);
            char * got = run_capture(cmd, dir, tag, &err_spec);
            TH_CHECK(base && got && strcmp(base, got) == 0, "%s: speculative output differs from plain decoding\n"
                     "plain: %s\nspec:  %s", tag, base ? base : "(none)", got ? got : "(none)");
            const long n_predict = field(err_spec, "n_predict");
            const long n_drafted = field(err_spec, "n_drafted");
            const long n_accept  = field(err_spec, "n_accept ");
            TH_CHECK(n_predict == 64, "%s: %ld tokens generated, expected 64", tag, n_predict);
            // ngram-simple keys on 12-grams: a sampled (temp 0.8) continuation rarely repeats one, so only the
            // greedy n-gram run is required to accept drafts
            const bool need_accept = !(c == 2 && m == 1) && c != 3;
            TH_CHECK(n_drafted >= 0 && n_accept >= 0 && n_accept <= n_drafted && (!need_accept || n_accept > 0),
                     "%s: n_drafted %ld n_accept %ld", tag, n_drafted, n_accept);
            fprintf(stderr, "%s: n_drafted %ld n_accept %ld\n", tag, n_drafted, n_accept);
            counts[c][0] = n_drafted;
            counts[c][1] = n_accept;
            if (m == 0 && (c == 0 || c == 4)) {
                // greedy runs no target sampler on the backend: the only backend chain is the draft's
                const bool attached = err_spec && strstr(err_spec, "setting backend sampler for seq_id 0") != NULL;
                TH_CHECK(attached == (c == 0), "%s: draft backend sampler %s", tag,
                         attached ? "attached with --no-spec-draft-backend-sampling" : "not attached by default");
            }
            free(got);
            free(err_base);
            free(err_spec);
        }
        for (int k = 0; k < 2; k++) {
            const int b = pairs[k][0], c = pairs[k][1];
            TH_CHECK(counts[b][0] == counts[c][0] && counts[b][1] == counts[c][1],
                     "%s %s: backend draft sampling drafted/accepted %ld/%ld, CPU %ld/%ld", modes[m][0],
                     cases[b].tag, counts[b][0], counts[b][1], counts[c][0], counts[c][1]);
        }
        free(plain_model);
        free(plain_ngram);
    }
    char rm[4200];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    if (system(rm) != 0) {
        fprintf(stderr, "warning: could not remove %s\n", dir);
    }
}

//
// n-gram cache, ngram-mod, ngram-map-k: hand-computed cases
//

static int32_t count_of(const struct common_ngram_cache * c, const llama_token * g, int n, llama_token t) {
    const struct common_ngram ng = common_ngram_make(g, n);
    return common_ngram_cache_count(c, &ng, t, NULL);
}

static void test_ngram_cache_counts(void) {
    // 1 2 3 1 2 3 1 2: each n-gram counts the token after it
    const llama_token inp[] = { 1, 2, 3, 1, 2, 3, 1, 2 };
    struct common_ngram_cache * c = common_ngram_cache_init();
    TH_CHECK(c && common_ngram_cache_update(c, 1, 2, inp, 8, 8, false), "update");
    TH_CHECK(common_ngram_cache_size(c) == 6, "%zu distinct n-grams, expected 6", common_ngram_cache_size(c));
    const llama_token g1[] = { 1 }, g2[] = { 2 }, g3[] = { 3 }, g12[] = { 1, 2 }, g23[] = { 2, 3 }, g31[] = { 3, 1 };
    TH_CHECK(count_of(c, g1, 1, 2) == 3 && count_of(c, g2, 1, 3) == 2 && count_of(c, g3, 1, 1) == 2, "unigram counts");
    TH_CHECK(count_of(c, g12, 2, 3) == 2 && count_of(c, g23, 2, 1) == 2 && count_of(c, g31, 2, 2) == 2, "bigram counts");
    TH_CHECK(count_of(c, g1, 1, 3) == 0 && count_of(c, g12, 2, 1) == 0, "unseen pairs count 0");

    // appending with nnew gives the same counts as building at once
    struct common_ngram_cache * inc = common_ngram_cache_init();
    TH_CHECK(inc && common_ngram_cache_update(inc, 1, 2, inp, 5, 5, false) &&
             common_ngram_cache_update(inc, 1, 2, inp, 8, 3, false), "incremental update");
    TH_CHECK(common_ngram_cache_size(inc) == 6 && count_of(inc, g1, 1, 2) == 3 && count_of(inc, g31, 2, 2) == 2 &&
             count_of(inc, g23, 2, 1) == 2, "incremental counts");

    // draft from the context cache alone: (1 2) -> 3, (2 3) -> 1, (3 1) -> 2
    llama_token draft[5] = { 2 };
    const struct common_ngram_cache * empty = common_ngram_cache_init();
    int len = common_ngram_cache_draft(inp, 8, draft, 3, 1, 2, c, empty, empty);
    TH_CHECK(len == 4 && draft[1] == 3 && draft[2] == 1 && draft[3] == 2, "draft len %d: %d %d %d", len, draft[1],
             draft[2], draft[3]);
    // n_draft bounds it
    len = common_ngram_cache_draft(inp, 8, draft, 1, 1, 2, c, empty, empty);
    TH_CHECK(len == 2 && draft[1] == 3, "n_draft 1: len %d", len);

    // (5) -> {6: 1, 7: 1}: a 50% share is below the context cache's 66% for unigrams, so nothing is drafted;
    // with a third 6 (67%) it is
    const llama_token tie[] = { 5, 6, 5, 7, 5 };
    struct common_ngram_cache * ct = common_ngram_cache_init();
    TH_CHECK(ct && common_ngram_cache_update(ct, 1, 1, tie, 5, 5, false), "update tie");
    llama_token d2[4] = { 5 };
    TH_CHECK(common_ngram_cache_draft(tie, 5, d2, 2, 1, 1, ct, empty, empty) == 1, "tie must not draft");
    const struct common_ngram g5 = common_ngram_make(tie, 1);
    TH_CHECK(common_ngram_cache_add(ct, &g5, 6, 1), "add");
    len = common_ngram_cache_draft(tie, 5, d2, 1, 1, 1, ct, empty, empty);
    TH_CHECK(len == 2 && d2[1] == 6, "67%% share drafts 6 (len %d)", len);
    // the static cache weighs the candidates: seen after (7 5) it makes 7 win despite fewer context hits
    struct common_ngram_cache * st = common_ngram_cache_init();
    const llama_token g75[] = { 7, 5 };
    const struct common_ngram ng75 = common_ngram_make(g75, 2);
    TH_CHECK(st && common_ngram_cache_add(st, &ng75, 7, 5), "static add");
    const llama_token hist[] = { 5, 6, 5, 6, 5, 7, 5 };
    struct common_ngram_cache * ch = common_ngram_cache_init();
    TH_CHECK(ch && common_ngram_cache_update(ch, 1, 1, hist, 7, 7, false), "update hist");
    // context (5): {6: 2, 7: 1}; weights 2*1 vs 1*500: 7 wins; its share 1/3 < 66% so the context cache gives up,
    // the dynamic cache is empty, and the static cache alone has (7 5) -> {7: 5}: 7
    llama_token d3[3] = { 5 };
    len = common_ngram_cache_draft(hist, 7, d3, 1, 1, 1, ch, empty, st);
    TH_CHECK(len == 2 && d3[1] == 7, "static cache draft: len %d tok %d", len, d3[1]);

    common_ngram_cache_free(ch);
    common_ngram_cache_free(st);
    common_ngram_cache_free(ct);
    common_ngram_cache_free((struct common_ngram_cache *) empty);
    common_ngram_cache_free(inc);
    common_ngram_cache_free(c);
}

static void test_ngram_cache_files(void) {
    char dir[] = "/tmp/test-ngram-cache-XXXXXX";
    if (!mkdtemp(dir)) {
        TH_CHECK(false, "mkdtemp failed");
        return;
    }
    char path[256], path2[256];
    snprintf(path, sizeof(path), "%s/a.bin", dir);
    snprintf(path2, sizeof(path2), "%s/b.bin", dir);

    // one n-gram (1 2) -> {3: 2}: llama.cpp's layout is 4 int32 tokens (-1 padded), int32 n, then n (token, count)
    struct common_ngram_cache * c = common_ngram_cache_init();
    const llama_token g12[] = { 1, 2 };
    const struct common_ngram ng = common_ngram_make(g12, 2);
    TH_CHECK(c && common_ngram_cache_add(c, &ng, 3, 2) && common_ngram_cache_save(c, path), "save");
    size_t size = 0;
    int32_t * raw = th_read_file(path, &size);
    const int32_t expect[] = { 1, 2, -1, -1, 1, 3, 2 };
    TH_CHECK(raw && size == sizeof(expect) && memcmp(raw, expect, sizeof(expect)) == 0, "file bytes (%zu bytes)", size);
    free(raw);
    common_ngram_cache_free(c);

    // round trip of a bigger cache: every count survives
    llama_token inp[300];
    uint64_t rs = 42;
    for (int i = 0; i < 300; i++) {
        inp[i] = (llama_token) (th_xorshift64(&rs) % 23);
    }
    c = common_ngram_cache_init();
    TH_CHECK(c && common_ngram_cache_update(c, 1, 4, inp, 300, 300, false) && common_ngram_cache_save(c, path),
             "save big");
    struct common_ngram_cache * l = common_ngram_cache_load(path);
    TH_CHECK(l && common_ngram_cache_size(l) == common_ngram_cache_size(c), "loaded %zu n-grams, saved %zu",
             common_ngram_cache_size(l), common_ngram_cache_size(c));
    int bad = 0;
    for (int n = 1; n <= 4; n++) {
        for (int i = n; i < 300; i++) {
            const struct common_ngram g = common_ngram_make(inp + i - n, n);
            int32_t nt_a = 0, nt_b = 0;
            if (common_ngram_cache_count(c, &g, inp[i], &nt_a) != common_ngram_cache_count(l, &g, inp[i], &nt_b) ||
                nt_a != nt_b) {
                bad++;
            }
        }
    }
    TH_CHECK(bad == 0, "%d counts differ after the round trip", bad);
    // merge adds counts: merging a copy doubles every count
    TH_CHECK(l && common_ngram_cache_merge(l, c), "merge");
    const struct common_ngram g0 = common_ngram_make(inp, 2);
    TH_CHECK(common_ngram_cache_count(l, &g0, inp[2], NULL) == 2 * common_ngram_cache_count(c, &g0, inp[2], NULL),
             "merged count");
    common_ngram_cache_free(l);
    common_ngram_cache_free(c);

    // malformed files are rejected, never half-loaded
    const int32_t truncated[] = { 1, 2, -1, -1, 2, 3, 2 }; // announces 2 pairs, holds 1
    const int32_t zero_n[]    = { 1, 2, -1, -1, 0 };
    const int32_t zero_cnt[]  = { 1, 2, -1, -1, 1, 3, 0 };
    const int32_t short_hdr[] = { 1, 2, -1 };
    TH_CHECK(th_write_file(path2, truncated, sizeof(truncated)) && !common_ngram_cache_load(path2), "truncated record");
    TH_CHECK(th_write_file(path2, zero_n, sizeof(zero_n)) && !common_ngram_cache_load(path2), "n == 0");
    TH_CHECK(th_write_file(path2, zero_cnt, sizeof(zero_cnt)) && !common_ngram_cache_load(path2), "count == 0");
    TH_CHECK(th_write_file(path2, short_hdr, sizeof(short_hdr)) && !common_ngram_cache_load(path2), "short header");
    TH_CHECK(th_write_file(path2, "", 0) && (l = common_ngram_cache_load(path2)) && common_ngram_cache_size(l) == 0,
             "empty file is an empty cache");
    common_ngram_cache_free(l);
    snprintf(path2, sizeof(path2), "%s/missing.bin", dir);
    TH_CHECK(!common_ngram_cache_load(path2), "missing file");

    char rm[512];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    if (system(rm) != 0) {
        fprintf(stderr, "warning: could not remove %s\n", dir);
    }
}

static void test_ngram_mod_map(void) {
    // ngram-mod: the hash is llama.cpp's res = res * 6364136223846793005 + token (mod 2^64), then mod size
    struct common_ngram_mod * m = common_ngram_mod_init(2, 1000);
    const llama_token t[] = { 3, 4, 9, 3, 4 };
    const uint64_t h = (uint64_t) 3 * 6364136223846793005ull + 4;
    TH_CHECK(m && common_ngram_mod_idx(m, t) == (size_t) (h % 1000), "idx %zu expected %llu", common_ngram_mod_idx(m, t),
             (unsigned long long) (h % 1000));
    TH_CHECK(common_ngram_mod_get(m, t) == COMMON_NGRAM_MOD_EMPTY, "empty table");
    common_ngram_mod_add(m, t); // (3 4) -> 9
    TH_CHECK(common_ngram_mod_get(m, t + 3) == 9 && common_ngram_mod_get_used(m) == 0, "get after add");
    common_ngram_mod_reset(m);
    TH_CHECK(common_ngram_mod_get(m, t) == COMMON_NGRAM_MOD_EMPTY, "reset");
    common_ngram_mod_free(m);

    // ngram-map-k with n = 2, m = 3: history 1 2 5 6 7 8 9 9 9 1 and sampled 2 -> key (1 2) at 0 -> draft 5 6 7
    struct common_ngram_map map;
    common_ngram_map_init(&map, 2, 3, true, 1);
    const llama_token h1[] = { 1, 2, 5, 6, 7, 8, 9, 9, 9, 1 };
    llama_token out[8];
    int32_t n = common_ngram_map_draft(&map, h1, 10, 2, out, 8);
    // position 0 is never a match in llama.cpp (0 means "no match"), so the key must occur later: none here
    TH_CHECK(n == 0, "match at position 0 is ignored (got %d)", n);
    const llama_token h2[] = { 0, 1, 2, 5, 6, 7, 8, 9, 9, 1 };
    n = common_ngram_map_draft(&map, h2, 10, 2, out, 8);
    TH_CHECK(n == 3 && out[0] == 5 && out[1] == 6 && out[2] == 7, "draft %d: %d %d %d", n, out[0], out[1], out[2]);
    // one accepted token: the next draft for this key is one token long
    common_ngram_map_accept(&map, 1);
    n = common_ngram_map_draft(&map, h2, 10, 2, out, 8);
    TH_CHECK(n == 1 && out[0] == 5, "draft after accept(1): %d", n);
    // the caller's room bounds the draft
    common_ngram_map_accept(&map, 3);
    n = common_ngram_map_draft(&map, h2, 10, 2, out, 2);
    TH_CHECK(n == 2, "room 2: %d", n);
    common_ngram_map_free(&map);

    // ngram-map-k4v (n = 1, m = 2, min_hits 1): after (7) came 1 2 three times and 3 4 once: 3 >= 3 * 1, so the
    // most frequent value 1 2 is drafted
    const llama_token h3[] = { 0, 7, 1, 2, 7, 3, 4, 7, 1, 2, 7, 1, 2, 9, 9, 9 };
    common_ngram_map_init(&map, 1, 2, false, 1);
    n = common_ngram_map_draft(&map, h3, 16, 7, out, 8);
    TH_CHECK(n == 2 && out[0] == 1 && out[1] == 2, "k4v draft %d: %d %d", n, out[0], out[1]);
    common_ngram_map_free(&map);
    // with 1 2 twice and 3 4 once the winner does not dominate: no draft
    const llama_token h4[] = { 0, 7, 1, 2, 7, 3, 4, 7, 1, 2, 9, 9, 9, 9 };
    common_ngram_map_init(&map, 1, 2, false, 1);
    n = common_ngram_map_draft(&map, h4, 14, 7, out, 8);
    TH_CHECK(n == 0, "k4v without a dominant value drafts nothing (%d)", n);
    common_ngram_map_free(&map);
}

//
// token identity of the other programs and drafters
//

struct id_case {
    const char * tag;
    const char * prog;   // the speculative program
    const char * prompt;
    const char * args;   // drafter arguments
    bool dist;           // also run the seeded stochastic mode
    bool need_accept_dist;
};

static void run_identity(const char * completion, const struct id_case * cases, int n_cases) {
    const char * tgt = th_data_path("models/kjv/kjv-target-f32.gguf");
    const char * dft = th_data_path("models/kjv/kjv-draft-f32.gguf");
    if (!th_require_file(tgt) || !th_require_file(dft)) {
        return;
    }
    char dir[] = "/tmp/test-speculative-XXXXXX";
    if (!mkdtemp(dir)) {
        TH_CHECK(false, "mkdtemp failed");
        return;
    }
    const char * modes[2][2] = {
        { "greedy", "--temp 0" },
        { "dist",   "--temp 0.8 --top-k 40 --seed 4242 -bs" },
    };
    // plain outputs, computed once per prompt and mode
    const char * plain_prompt[8] = { NULL };
    char * plain_out[8][2] = { { NULL } };
    int n_plain = 0;
    for (int c = 0; c < n_cases; c++) {
        for (int m = 0; m < (cases[c].dist ? 2 : 1); m++) {
            int pi = 0;
            while (pi < n_plain && strcmp(plain_prompt[pi], cases[c].prompt) != 0) {
                pi++;
            }
            if (pi == n_plain && n_plain < 8) {
                plain_prompt[n_plain++] = cases[c].prompt;
            }
            char cmd[16384], tag[128];
            char * err = NULL;
            if (!plain_out[pi][m]) {
                snprintf(cmd, sizeof(cmd), "'%s' -m '%s' -p '%s' -n 64 %s -no-cnv", completion, tgt, cases[c].prompt,
                         modes[m][1]);
                snprintf(tag, sizeof(tag), "plain-%d-%s", pi, modes[m][0]);
                plain_out[pi][m] = run_capture(cmd, dir, tag, &err);
                free(err);
            }
            char args[4096];
            snprintf(args, sizeof(args), cases[c].args, dft);
            snprintf(cmd, sizeof(cmd), "'%s' -m '%s' -p '%s' -n 64 %s %s", cases[c].prog, tgt, cases[c].prompt,
                     modes[m][1], args);
            snprintf(tag, sizeof(tag), "%s-%s", cases[c].tag, modes[m][0]);
            char * got = run_capture(cmd, dir, tag, &err);
            const char * base = plain_out[pi][m];
            TH_CHECK(base && got && strcmp(base, got) == 0, "%s: speculative output differs from plain decoding\n"
                     "plain: %s\nspec:  %s", tag, base ? base : "(none)", got ? got : "(none)");
            const long n_predict = field(err, "n_predict");
            const long n_drafted = field(err, "n_drafted");
            const long n_accept  = field(err, "n_accept ");
            TH_CHECK(n_predict == 64, "%s: %ld tokens generated, expected 64", tag, n_predict);
            const bool need_accept = m == 0 || cases[c].need_accept_dist;
            TH_CHECK(n_drafted >= 0 && n_accept >= 0 && (!need_accept || n_accept > 0),
                     "%s: n_drafted %ld n_accept %ld", tag, n_drafted, n_accept);
            fprintf(stderr, "%s: n_drafted %ld n_accept %ld\n", tag, n_drafted, n_accept);
            free(got);
            free(err);
        }
    }
    for (int i = 0; i < n_plain; i++) {
        free(plain_out[i][0]);
        free(plain_out[i][1]);
    }
    char rm[4200];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    if (system(rm) != 0) {
        fprintf(stderr, "warning: could not remove %s\n", dir);
    }
}

// a prompt whose continuation repeats earlier text, so that n-gram drafts get accepted
#define REPETITIVE_PROMPT                                                                                   \
    "In the beginning God created the heaven and the earth. In the beginning God created the heaven and "  \
    "the earth. In the beginning God created the heaven and the earth. In the beginning God created the "  \
    "heaven and the earth. In the beginning God created the heaven and the earth.  In the beginning"

static void test_identity_ngram_types(const char * completion, const char * spec) {
    const struct id_case cases[] = {
        { "ngram-cache", spec, REPETITIVE_PROMPT, "--spec-type ngram-cache", true, true },
        // a sampled continuation rarely repeats the long keys of these two: only greedy must accept
        { "ngram-map-k", spec, REPETITIVE_PROMPT,
          "--spec-type ngram-map-k --spec-ngram-map-k-size-n 3 --spec-ngram-map-k-size-m 8", true, false },
        { "ngram-map-k4v", spec, REPETITIVE_PROMPT,
          "--spec-type ngram-map-k4v --spec-ngram-map-k4v-size-n 3 --spec-ngram-map-k4v-size-m 8", false, false },
        { "ngram-mod",   spec, REPETITIVE_PROMPT,
          "--spec-type ngram-mod --spec-ngram-mod-n-match 4 --spec-ngram-mod-n-min 1 --spec-ngram-mod-n-max 8", true,
          false },
    };
    run_identity(completion, cases, (int) (sizeof(cases) / sizeof(cases[0])));
}

static void test_identity_lookup(const char * completion, const char * lookup) {
    const struct id_case cases[] = {
        { "lookup", lookup, REPETITIVE_PROMPT, "--spec-draft-n-max 8", true, true },
    };
    run_identity(completion, cases, 1);
}

static void test_identity_tree(const char * completion, const char * speculative) {
    const struct id_case cases[] = {
        { "tree-np1", speculative, "In the beginning God created", "-md '%s' --spec-draft-n-max 6 -np 1", false, false },
        { "tree-np3", speculative, "In the beginning God created",
          "-md '%s' --spec-draft-n-max 6 -np 3 --spec-draft-p-split 0.05", false, false },
    };
    run_identity(completion, cases, 2);
}

int main(int argc, char ** argv) {
    if (argc >= 2 && strcmp(argv[1], "limits") == 0) {
        test_limits();
    } else if (argc >= 2 && strcmp(argv[1], "ngram") == 0) {
        test_ngram_cache_counts();
        test_ngram_cache_files();
        test_ngram_mod_map();
    } else if (argc >= 4 && strcmp(argv[1], "identity") == 0) {
        test_identity(argv[2], argv[3]);
    } else if (argc >= 4 && strcmp(argv[1], "ngram-types") == 0) {
        test_identity_ngram_types(argv[2], argv[3]);
    } else if (argc >= 4 && strcmp(argv[1], "lookup") == 0) {
        test_identity_lookup(argv[2], argv[3]);
    } else if (argc >= 4 && strcmp(argv[1], "tree") == 0) {
        test_identity_tree(argv[2], argv[3]);
    } else {
        fprintf(stderr, "usage: %s limits | ngram | identity|ngram-types LLAMA_COMPLETION LLAMA_SPECULATIVE_SIMPLE |\n"
                        "       lookup LLAMA_COMPLETION LLAMA_LOOKUP | tree LLAMA_COMPLETION LLAMA_SPECULATIVE\n", argv[0]);
        return 2;
    }
    return th_finish();
}
