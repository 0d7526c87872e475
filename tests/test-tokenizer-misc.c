// Tokenizer checks beyond the vocab vectors:
//  - stories260K and the synthetic models: llama.cpp's token ids for their reference texts (with BOS)
//  - KJV: llama-tokenize's ids for 200 lines one by one and as one block (../shared/reference/kjv/index.json)
//  - the hand-written GPT-2 / Llama-3 splitters against PCRE2 (UTF | UCP) running the same regex
//  - bad input (invalid UTF-8, lone surrogates, NUL bytes, 1 MB of text) on every vocabulary: no crash, and
//    the buffer-size protocol of llama_tokenize / llama_token_to_piece / llama_detokenize

#define PCRE2_CODE_UNIT_WIDTH 8

#include "harness.h"

#include "gguf.h"
#include "llama.h"
#include "llama-unicode.h"
#include "llama-vocab.h"

#include <jansson.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdint.h>

static struct llama_vocab * load_vocab(const char * rel) {
    const char * fname = th_data_path("%s", rel);
    if (!th_require_file(fname)) {
        return NULL;
    }
    struct gguf_init_params gp = { true, NULL };
    struct gguf_context * g = gguf_init_from_file(fname, gp);
    TH_CHECK(g != NULL, "gguf_init_from_file(%s)", fname);
    if (!g) {
        return NULL;
    }
    struct llama_vocab * v = llama_vocab_load(g);
    gguf_free(g);
    TH_CHECK(v != NULL, "llama_vocab_load(%s)", fname);
    return v;
}

static int32_t * tokenize(const struct llama_vocab * v, const char * s, size_t n, bool add_special, bool parse_special,
                          int32_t * n_out) {
    int32_t cap = 8;
    int32_t * t = malloc((size_t) cap * sizeof(int32_t));
    int32_t k = llama_tokenize(v, s, (int32_t) n, t, cap, add_special, parse_special);
    if (k < 0 && k != INT32_MIN) {
        cap = -k;
        t = realloc(t, (size_t) cap * sizeof(int32_t));
        const int32_t k2 = llama_tokenize(v, s, (int32_t) n, t, cap, add_special, parse_special);
        TH_EXPECT(k2 == cap, "second llama_tokenize call returned %d, first asked for %d", k2, cap);
        k = k2;
    }
    *n_out = k;
    return t;
}

static bool ids_equal_json(const int32_t * t, int32_t n, json_t * arr) {
    if (!json_is_array(arr) || (size_t) n != json_array_size(arr)) {
        return false;
    }
    for (int32_t i = 0; i < n; ++i) {
        if (json_integer_value(json_array_get(arr, (size_t) i)) != t[i]) {
            return false;
        }
    }
    return true;
}

static void test_stories_and_synthetic(void) {
    static const int32_t expect[] = { 1, 482, 82, 508, 499, 496, 482, 120, 488, 114, 508, 267, 482, 119, 108, 112, 496 };
    struct llama_vocab * v = load_vocab("models/stories260K-f32.gguf");
    if (v) {
        int32_t n = 0;
        int32_t * t = tokenize(v, "Once upon a time", 16, true, false, &n);
        bool same = n == (int32_t) (sizeof(expect) / sizeof(expect[0]));
        for (int32_t i = 0; same && i < n; ++i) same = t[i] == expect[i];
        TH_CHECK(same, "stories260K 'Once upon a time' (%d tokens)", n);
        free(t);
        llama_vocab_free(v);
    }

    size_t len = 0;
    char * js = th_read_file(th_data_path("reference/synthetic/index.json"), &len);
    if (!js) {
        th_require_file(th_data_path("reference/synthetic/index.json"));
        return;
    }
    json_error_t err;
    json_t * root = json_loadb(js, len, 0, &err);
    free(js);
    TH_CHECK(root != NULL, "synthetic index.json parses: %s", err.text);
    if (!root) return;
    json_t * cases = json_object_get(root, "cases");
    int checked = 0;
    // one case per model file is enough: they share the tokenizer, but each file carries its own copy
    const char * seen[64];
    int n_seen = 0;
    for (size_t i = 0; i < json_array_size(cases); ++i) {
        json_t * c = json_array_get(cases, i);
        const char * model = json_string_value(json_object_get(c, "model_file"));
        const char * text  = json_string_value(json_object_get(c, "text"));
        if (!model || !text) continue;
        bool dup = false;
        for (int k = 0; k < n_seen; ++k) dup = dup || strcmp(seen[k], model) == 0;
        if (dup || n_seen >= 64) continue;
        seen[n_seen++] = model;
        char rel[512];
        snprintf(rel, sizeof(rel), "models/synthetic/%s", model);
        struct llama_vocab * sv = load_vocab(rel);
        if (!sv) continue;
        int32_t n = 0;
        int32_t * t = tokenize(sv, text, strlen(text), true, false, &n);
        TH_CHECK(ids_equal_json(t, n, json_object_get(c, "tokens")), "synthetic %s sequence A ids", model);
        free(t);
        llama_vocab_free(sv);
        checked++;
    }
    TH_CHECK(checked >= 20, "synthetic models checked: %d", checked);
    json_decref(root);
}

static void test_kjv(void) {
    size_t len = 0;
    char * js = th_read_file(th_data_path("reference/kjv/index.json"), &len);
    if (!js) {
        th_require_file(th_data_path("reference/kjv/index.json"));
        return;
    }
    json_error_t err;
    json_t * root = json_loadb(js, len, 0, &err);
    free(js);
    TH_CHECK(root != NULL, "kjv index.json parses: %s", err.text);
    if (!root) return;
    struct llama_vocab * v = load_vocab("models/kjv/kjv-target-f32.gguf");
    if (!v) {
        json_decref(root);
        return;
    }
    json_t * tk = json_object_get(root, "tokenize");
    json_t * lines = json_object_get(tk, "lines");
    json_t * per_line = json_object_get(tk, "per_line_ids");
    int ok_lines = 0;
    size_t n_lines = json_array_size(lines);
    size_t block_len = 0;
    for (size_t i = 0; i < n_lines; ++i) {
        const char * line = json_string_value(json_array_get(lines, i));
        int32_t n = 0;
        int32_t * t = tokenize(v, line, strlen(line), true, false, &n);
        const bool same = ids_equal_json(t, n, json_array_get(per_line, i));
        TH_EXPECT(same, "kjv line %zu '%s'", i, line);
        ok_lines += same;
        block_len += strlen(line) + 1;
        free(t);
    }
    TH_CHECK(n_lines == 200 && ok_lines == 200, "kjv per-line ids: %d of %zu lines equal", ok_lines, n_lines);
    // the block: the lines joined with newlines, final newline included
    char * block = malloc(block_len + 1);
    size_t off = 0;
    for (size_t i = 0; i < n_lines; ++i) {
        const char * line = json_string_value(json_array_get(lines, i));
        memcpy(block + off, line, strlen(line));
        off += strlen(line);
        block[off++] = '\n';
    }
    int32_t n = 0;
    int32_t * t = tokenize(v, block, off, true, false, &n);
    TH_CHECK(ids_equal_json(t, n, json_object_get(tk, "block_ids")), "kjv block ids (%d tokens)", n);
    free(t);
    free(block);

    // prompts of the greedy runs
    json_t * greedy = json_object_get(root, "greedy");
    int ok_prompts = 0;
    for (size_t i = 0; i < json_array_size(greedy); ++i) {
        json_t * c = json_array_get(greedy, i);
        const char * p = json_string_value(json_object_get(c, "prompt"));
        int32_t np = 0;
        int32_t * tp = tokenize(v, p, strlen(p), true, false, &np);
        const bool same = ids_equal_json(tp, np, json_object_get(c, "prompt_ids"));
        TH_EXPECT(same, "kjv greedy prompt '%s'", p);
        ok_prompts += same;
        // generated ids detokenize to the generated text
        json_t * gen = json_object_get(c, "generated_ids");
        const char * gtext = json_string_value(json_object_get(c, "generated_text"));
        int32_t gids[256];
        int32_t ng = 0;
        for (size_t k = 0; k < json_array_size(gen) && k < 256; ++k) gids[ng++] = (int32_t) json_integer_value(json_array_get(gen, k));
        char buf[4096];
        const int32_t dl = llama_detokenize(v, gids, ng, buf, sizeof(buf), false, false);
        // generated text continues a prompt, so its first space is kept: render without the leading-space strip
        char buf2[4096];
        int32_t o = 0;
        for (int32_t k = 0; k < ng; ++k) {
            int32_t r = llama_token_to_piece(v, gids[k], buf2 + o, (int32_t) sizeof(buf2) - o, 0, false);
            if (r > 0) o += r;
        }
        TH_EXPECT(gtext && o == (int32_t) strlen(gtext) && memcmp(buf2, gtext, (size_t) o) == 0,
                  "kjv generated text of '%s'", p);
        const int32_t sp = (o > 0 && buf2[0] == ' ') ? 1 : 0;
        TH_EXPECT(dl > 0 && dl == o - sp && memcmp(buf, buf2 + sp, (size_t) dl) == 0,
                  "kjv detokenize drops the dummy-prefix space of '%s'", p);
        free(tp);
    }
    TH_CHECK(ok_prompts == (int) json_array_size(greedy) && ok_prompts > 0, "kjv greedy prompt ids %d", ok_prompts);
    llama_vocab_free(v);
    json_decref(root);
}

// random valid text mixing the character classes the pre-tokenizers care about
static size_t random_text(uint32_t * seed, char * out, size_t max) {
    static const uint32_t pool[] = {
        'a', 'b', 'Z', 'e', ' ', ' ', ' ', '\n', '\r', '\t', '0', '7', '9', '\'', 's', 't', 'l', 'L', 'r', 'E', 'v', 'd',
        'M', '.', ',', '!', '?', '(', ')', '$', '+', '<', '=', '^', '`', '|', '~', '_', '-', '/', 0x0B, 0x0C,
        0xA0, 0x85, 0x2003, 0x3000, 0x2028, 0xE9, 0x438, 0x4E2D, 0x1F999, 0x0301, 0x0663, 0x2167, 0xBD, 0xAB, 0x2014,
        0x20AC, 0xB0, 0x1F600, 0xE000, 0x200B, 0xFEFF, 0x10FFFD, 0x1E00, 0x3042, 0xAC00,
    };
    size_t n = 0;
    const size_t len = 1 + (*seed % 40);
    for (size_t i = 0; i < len; ++i) {
        *seed = *seed * 1103515245u + 12345u;
        const uint32_t c = pool[(*seed >> 8) % (sizeof(pool) / sizeof(pool[0]))];
        char u[4];
        const int k = llama_unicode_cpt_to_utf8(c, u);
        if (n + (size_t) k >= max) break;
        memcpy(out + n, u, (size_t) k);
        n += (size_t) k;
    }
    return n;
}

// splits with PCRE2 (UTF | UCP) the way llama.cpp's std::regex loop keeps matches and gaps; lengths in codepoints
static size_t pcre_split(pcre2_code * re, const char * s, size_t n, size_t * lens) {
    pcre2_match_data * md = pcre2_match_data_create(1, NULL);
    size_t count = 0, off = 0, prev = 0;
    for (;;) {
        int rc = pcre2_match(re, (PCRE2_SPTR) s, n, off, 0, md, NULL);
        if (rc < 0) break;
        PCRE2_SIZE * ov = pcre2_get_ovector_pointer(md);
        size_t cp_gap = 0, cp_m = 0;
        for (size_t i = prev; i < ov[0]; ++i) cp_gap += ((unsigned char) s[i] & 0xC0) != 0x80;
        for (size_t i = ov[0]; i < ov[1]; ++i) cp_m += ((unsigned char) s[i] & 0xC0) != 0x80;
        if (cp_gap) lens[count++] = cp_gap;
        if (cp_m) lens[count++] = cp_m;
        prev = ov[1];
        off = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
        if (off > n) break;
    }
    size_t tail = 0;
    for (size_t i = prev; i < n; ++i) tail += ((unsigned char) s[i] & 0xC0) != 0x80;
    if (tail) lens[count++] = tail;
    pcre2_match_data_free(md);
    return count;
}

static void test_splitters_vs_pcre2(void) {
    static const char * rx_gpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
    static const char * rx_llama3 =
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    int err;
    PCRE2_SIZE eo;
    pcre2_code * re_gpt2   = pcre2_compile((PCRE2_SPTR) rx_gpt2, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &err, &eo, NULL);
    pcre2_code * re_llama3 = pcre2_compile((PCRE2_SPTR) rx_llama3, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &err, &eo, NULL);
    TH_CHECK(re_gpt2 && re_llama3, "reference regexes compile");
    if (!re_gpt2 || !re_llama3) return;
    uint32_t seed = 12345;
    char text[256];
    uint32_t cpts[256];
    size_t ref[256];
    int bad_gpt2 = 0, bad_llama3 = 0;
    const int n_iter = 20000;
    for (int it = 0; it < n_iter; ++it) {
        seed = seed * 1664525u + 1013904223u;
        const size_t n = random_text(&seed, text, sizeof(text));
        const size_t nc = llama_unicode_cpts_from_utf8(text, n, cpts);
        struct llama_unicode_offsets o = { NULL, 0, 0 };
        for (int which = 0; which < 2; ++which) {
            o.n = 0;
            const bool ok = which == 0 ? llama_unicode_split_gpt2(cpts, nc, &o) : llama_unicode_split_llama3(cpts, nc, &o);
            const size_t nr = pcre_split(which == 0 ? re_gpt2 : re_llama3, text, n, ref);
            bool same = ok && nr == o.n;
            for (size_t i = 0; same && i < nr; ++i) same = ref[i] == o.data[i];
            if (!same) {
                if ((which == 0 ? bad_gpt2 : bad_llama3) < 5) {
                    fprintf(stderr, "%s splitter differs from PCRE2 on '%.*s':", which == 0 ? "gpt2" : "llama3", (int) n, text);
                    for (size_t i = 0; i < o.n; ++i) fprintf(stderr, " %zu", o.data[i]);
                    fprintf(stderr, " vs");
                    for (size_t i = 0; i < nr; ++i) fprintf(stderr, " %zu", ref[i]);
                    fprintf(stderr, "\n");
                }
                if (which == 0) {
                    bad_gpt2++;
                } else {
                    bad_llama3++;
                }
            }
        }
        llama_unicode_offsets_free(&o);
    }
    TH_CHECK(bad_gpt2 == 0, "gpt2 splitter equals PCRE2 on %d random texts (%d differ)", n_iter, bad_gpt2);
    TH_CHECK(bad_llama3 == 0, "llama3 splitter equals PCRE2 on %d random texts (%d differ)", n_iter, bad_llama3);
    pcre2_code_free(re_gpt2);
    pcre2_code_free(re_llama3);
}

static void test_bad_input(const char * rel) {
    struct llama_vocab * v = load_vocab(rel);
    if (!v) return;
    static const char * cases[] = {
        "\xff\xfe\xfd", "\xc3", "a\xe2\x82", "\xed\xa0\x80", "x\xed\xbf\xbfy", "\xf4\x90\x80\x80", "\xf7\xbf\xbf\xbf",
        "\xc0\x80", "\x80\x80\x80 abc", "\xe2\x96\x81\xe2\x96", "<s></s><unk>", "<|endoftext|>a<|endoftext|>",
        "[CLS] [SEP] [MASK]", "   \n\n\t  ", "'s'S'll'LL", "\xf0\x9f\xa6\x99\xf0\x9f",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        for (int mode = 0; mode < 4; ++mode) {
            int32_t n = 0;
            int32_t * t = tokenize(v, cases[i], strlen(cases[i]), mode & 1, mode & 2, &n);
            TH_EXPECT(n >= 0, "%s: tokenize bad case %zu mode %d returned %d", rel, i, mode, n);
            for (int32_t k = 0; k < n; ++k) {
                TH_EXPECT(t[k] >= 0 && t[k] < llama_vocab_n_tokens(v), "%s: token %d out of range", rel, t[k]);
            }
            char buf[256];
            (void) llama_detokenize(v, t, n, buf, sizeof(buf), mode & 1, mode & 2);
            free(t);
        }
    }
    // NUL bytes inside the text are text
    {
        const char nul[] = { 'a', 0, 'b', 0, 0, ' ', 'c' };
        int32_t n = 0;
        int32_t * t = tokenize(v, nul, sizeof(nul), false, false, &n);
        TH_EXPECT(n > 0, "%s: NUL text tokenizes (%d)", rel, n);
        free(t);
    }
    // 1 MB: text of every kind, with special tokens sprinkled in
    {
        const size_t big = 1 << 20;
        char * s = malloc(big);
        uint32_t seed = 7;
        size_t off = 0;
        while (off + 64 < big) {
            off += random_text(&seed, s + off, 64);
            seed = seed * 22695477u + 1u;
            if ((seed >> 16) % 50 == 0) {
                memcpy(s + off, "</s>", 4);
                off += 4;
            }
            if ((seed >> 16) % 97 == 0) {
                s[off++] = (char) 0xff;
            }
        }
        int32_t n = 0;
        int32_t * t = tokenize(v, s, off, true, true, &n);
        TH_EXPECT(n > 0, "%s: 1 MB tokenizes (%d)", rel, n);
        int32_t dl = llama_detokenize(v, t, n, NULL, 0, false, true);
        TH_EXPECT(dl <= 0, "%s: detokenize into no buffer returns the needed size (%d)", rel, dl);
        free(t);
        free(s);
    }
    // buffer protocol
    {
        const char * text = "Hello world, hello tokenizer";
        int32_t need = llama_tokenize(v, text, (int32_t) strlen(text), NULL, 0, true, false);
        TH_EXPECT(need < 0, "%s: tokenize into 0 slots returns -needed (%d)", rel, need);
        int32_t ids[64];
        int32_t n = llama_tokenize(v, text, (int32_t) strlen(text), ids, 64, true, false);
        TH_EXPECT(n == -need, "%s: needed %d, got %d", rel, -need, n);
        char small[2];
        for (int32_t k = 0; k < n; ++k) {
            const int32_t r = llama_token_to_piece(v, ids[k], small, 0, 0, true);
            char piece[256];
            const int32_t r2 = llama_token_to_piece(v, ids[k], piece, sizeof(piece), 0, true);
            TH_EXPECT(r == -r2 || (r == 0 && r2 == 0), "%s: token_to_piece size protocol (%d vs %d)", rel, r, r2);
        }
        TH_EXPECT(llama_token_to_piece(v, -1, small, 2, 0, true) == 0, "%s: invalid token gives 0", rel);
        TH_EXPECT(llama_token_to_piece(v, llama_vocab_n_tokens(v), small, 2, 0, true) == 0, "%s: invalid token", rel);
        TH_EXPECT(llama_vocab_get_text(v, -5) == NULL, "%s: get_text(-5) is NULL", rel);
        TH_EXPECT(llama_tokenize(v, NULL, 5, ids, 64, true, false) == INT32_MIN, "%s: NULL text rejected", rel);
        TH_EXPECT(llama_tokenize(v, text, -1, ids, 64, true, false) == INT32_MIN, "%s: negative length rejected", rel);
    }
    TH_CHECK(true, "%s: bad input survived", rel);
    llama_vocab_free(v);
}


// the vocabulary is read-only after loading: threads tokenizing at once get the single-thread ids
struct mt_job {
    const struct llama_vocab * v;
    const char * text;
    size_t len;
    const int32_t * expect;
    int32_t n_expect;
    int mismatches;
};

static void * mt_worker(void * arg) {
    struct mt_job * j = (struct mt_job *) arg;
    for (int r = 0; r < 20; ++r) {
        int32_t n = 0;
        int32_t * t = tokenize(j->v, j->text, j->len, true, true, &n);
        if (n != j->n_expect || memcmp(t, j->expect, (size_t) n * sizeof(int32_t)) != 0) {
            j->mismatches++;
        }
        free(t);
    }
    return NULL;
}

static void test_threads(const char * rel) {
    struct llama_vocab * v = load_vocab(rel);
    if (!v) return;
    char text[8192];
    uint32_t seed = 99;
    size_t off = 0;
    while (off + 64 < sizeof(text)) {
        off += random_text(&seed, text + off, 64);
    }
    int32_t n = 0;
    int32_t * expect = tokenize(v, text, off, true, true, &n);
    struct mt_job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; ++i) {
        jobs[i] = (struct mt_job) { v, text, off, expect, n, 0 };
        pthread_create(&th[i], NULL, mt_worker, &jobs[i]);
    }
    int bad = 0;
    for (int i = 0; i < 4; ++i) {
        pthread_join(th[i], NULL);
        bad += jobs[i].mismatches;
    }
    TH_CHECK(bad == 0 && n > 0, "%s: 4 threads x 20 runs agree with one thread (%d mismatches)", rel, bad);
    free(expect);
    llama_vocab_free(v);
}

int main(void) {
    test_stories_and_synthetic();
    test_kjv();
    test_splitters_vs_pcre2();
    test_threads("models/vocab/ggml-vocab-deepseek-llm.gguf");
    test_threads("models/vocab/ggml-vocab-llama-spm.gguf");
    static const char * vocabs[] = {
        "models/vocab/ggml-vocab-llama-spm.gguf", "models/vocab/ggml-vocab-gpt-2.gguf",
        "models/vocab/ggml-vocab-bert-bge.gguf", "models/vocab/ggml-vocab-deepseek-llm.gguf",
        "models/vocab/ggml-vocab-deepseek-coder.gguf", "models/vocab/ggml-vocab-falcon.gguf",
        "models/vocab/ggml-vocab-phi-3.gguf", "models/vocab/ggml-vocab-starcoder.gguf",
        "models/vocab/ggml-vocab-refact.gguf", "models/vocab/ggml-vocab-mpt.gguf",
        "models/vocab/ggml-vocab-baichuan.gguf", "models/vocab/ggml-vocab-gpt-neox.gguf",
    };
    for (size_t i = 0; i < sizeof(vocabs) / sizeof(vocabs[0]); ++i) {
        test_bad_input(vocabs[i]);
    }
    return th_finish();
}
