// Tokenizer vectors: test-tokenizer <vocab-name> [--roundtrip | --no-vectors]
//
// Loads ../shared/models/vocab/ggml-vocab-<name>.gguf and checks every case of its .inp/.out vectors (made by
// llama.cpp's test-tokenizer-0: cases separated by "\n__ggml_vocab_test__\n", one line of ids per case,
// tokenized with add_special = false, parse_special = false). With --roundtrip, also checks that
// detokenize(tokenize(x)) == x for every case (the vocabulary is lossless; with clean_spaces the cases that
// the clean-up rules rewrite are skipped). With --no-vectors (baichuan, gpt-neox: llama.cpp ships none) the
// vocabulary must load and round-trip a fixed text; otherwise missing vectors are missing test data.

#include "harness.h"

#include "gguf.h"
#include "llama.h"
#include "llama-vocab.h"

#include <stdint.h>

static int32_t * tokenize(const struct llama_vocab * v, const char * s, size_t n, bool add_special, bool parse_special,
                          int32_t * n_out) {
    int32_t cap = (int32_t) n + 16;
    int32_t * t = malloc((size_t) cap * sizeof(int32_t));
    int32_t k = llama_tokenize(v, s, (int32_t) n, t, cap, add_special, parse_special);
    if (k < 0 && k != INT32_MIN) {
        cap = -k;
        t = realloc(t, (size_t) cap * sizeof(int32_t));
        k = llama_tokenize(v, s, (int32_t) n, t, cap, add_special, parse_special);
    }
    *n_out = k;
    return t;
}

static char * detokenize(const struct llama_vocab * v, const int32_t * t, int32_t n, int32_t * len) {
    int32_t cap = 16;
    char * s = malloc((size_t) cap);
    int32_t k = llama_detokenize(v, t, n, s, cap, false, false);
    if (k < 0) {
        cap = -k;
        s = realloc(s, (size_t) cap + 1);
        k = llama_detokenize(v, t, n, s, cap, false, false);
    }
    *len = k;
    return s;
}

// true if the clean_spaces passes of detokenization would rewrite s
static bool cleanup_touches(const char * s, size_t n) {
    for (size_t i = 1; i < n; ++i) {
        if (s[i - 1] == ' ' && (s[i] == '?' || s[i] == '!' || s[i] == '.' || s[i] == ',' || s[i] == '\'')) {
            return true;
        }
    }
    return false;
}

static bool is_valid_utf8(const char * s, size_t n) {
    size_t i = 0;
    while (i < n) {
        const unsigned char c = (unsigned char) s[i];
        size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (k == 0 || i + k > n) return false;
        for (size_t j = 1; j < k; ++j) if (((unsigned char) s[i + j] & 0xC0) != 0x80) return false;
        i += k;
    }
    return true;
}

int main(int argc, char ** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <vocab-name> [--roundtrip | --no-vectors]\n", argv[0]);
        return 2;
    }
    const char * name = argv[1];
    const bool roundtrip  = argc > 2 && strcmp(argv[2], "--roundtrip") == 0;
    const bool no_vectors = argc > 2 && strcmp(argv[2], "--no-vectors") == 0;
    const char * fname = th_data_path("models/vocab/ggml-vocab-%s.gguf", name);
    if (!th_require_file(fname)) {
        return th_finish();
    }
    struct gguf_init_params gp = { true, NULL };
    struct gguf_context * g = gguf_init_from_file(fname, gp);
    TH_CHECK(g != NULL, "gguf_init_from_file(%s)", fname);
    if (!g) {
        return th_finish();
    }
    struct llama_vocab * v = llama_vocab_load(g);
    gguf_free(g);
    TH_CHECK(v != NULL, "llama_vocab_load(%s)", fname);
    if (!v) {
        return th_finish();
    }

    if (no_vectors) {
        // the vocabulary loads, tokenizes and round-trips a fixed text
        const char * text = "Hello world! 1234 привет 🦙\n\tx";
        int32_t n = 0;
        int32_t * t = tokenize(v, text, strlen(text), false, false, &n);
        TH_CHECK(n > 0, "tokenize fixed text on %s: %d", name, n);
        int32_t dl = 0;
        char * d = detokenize(v, t, n, &dl);
        TH_CHECK(dl == (int32_t) strlen(text) && memcmp(d, text, (size_t) dl) == 0, "round trip on %s: '%.*s'", name,
                 dl > 0 ? dl : 0, d);
        free(t);
        free(d);
        llama_vocab_free(v);
        return th_finish();
    }

    const char * finp = th_data_path("models/vocab/ggml-vocab-%s.gguf.inp", name);
    const char * fout = th_data_path("models/vocab/ggml-vocab-%s.gguf.out", name);
    if (!th_require_file(finp) || !th_require_file(fout)) {
        llama_vocab_free(v);
        return th_finish();
    }
    size_t ninp = 0, nout = 0;
    char * inp = th_read_file(finp, &ninp);
    char * out = th_read_file(fout, &nout);
    TH_CHECK(inp && out, "read %s and %s", finp, fout);
    if (!inp || !out) {
        free(inp);
        free(out);
        llama_vocab_free(v);
        return th_finish();
    }

    const char * sep = "\n__ggml_vocab_test__\n";
    const size_t sep_len = strlen(sep);
    int n_cases = 0, n_rt = 0, n_rt_skipped = 0;
    char * ip = inp;
    char * op = out;
    char * iend = inp + ninp;
    for (;;) {
        if (ip >= iend || *op == '\0') {
            break;
        }
        char * next = memmem(ip, (size_t) (iend - ip), sep, sep_len);
        const size_t len = next ? (size_t) (next - ip) : (size_t) (iend - ip);
        char * eol = strchr(op, '\n');
        if (eol) *eol = '\0';
        // expected ids
        int32_t expect[4096];
        int n_expect = 0;
        for (char * q = op; *q;) {
            while (*q == ' ') q++;
            if (!*q) break;
            expect[n_expect++] = (int32_t) strtol(q, &q, 10);
        }
        int32_t n = 0;
        int32_t * t = tokenize(v, ip, len, false, false, &n);
        bool same = n == n_expect;
        for (int i = 0; same && i < n; ++i) same = t[i] == expect[i];
        TH_CHECK(same, "%s case %d '%.*s': got %d tokens, expected %d", name, n_cases, (int) len, ip, n, n_expect);
        if (!same) {
            fprintf(stderr, "  got:     ");
            for (int i = 0; i < n; ++i) fprintf(stderr, " %d", t[i]);
            fprintf(stderr, "\n  expected:");
            for (int i = 0; i < n_expect; ++i) fprintf(stderr, " %d", expect[i]);
            fprintf(stderr, "\n");
        }
        if (roundtrip) {
            const bool skip = !is_valid_utf8(ip, len) || (llama_vocab_type(v) == LLAMA_VOCAB_TYPE_BPE &&
                                                          cleanup_touches(ip, len) &&
                                                          strcmp(name, "deepseek-llm") != 0 &&
                                                          strcmp(name, "deepseek-coder") != 0);
            if (skip) {
                n_rt_skipped++;
            } else {
                int32_t dl = 0;
                char * d = detokenize(v, t, n, &dl);
                TH_CHECK(dl == (int32_t) len && memcmp(d, ip, len) == 0, "%s round trip case %d: '%.*s' -> '%.*s'",
                         name, n_cases, (int) len, ip, dl > 0 ? dl : 0, d);
                free(d);
                n_rt++;
            }
        }
        free(t);
        n_cases++;
        if (!next || !eol) {
            break;
        }
        ip = next + sep_len;
        op = eol + 1;
    }
    printf("%s: %d cases checked, %d round trips (%d skipped by the clean-up rules)\n", name, n_cases, n_rt, n_rt_skipped);
    TH_CHECK(n_cases >= 40, "%s: only %d cases read", name, n_cases);
    free(inp);
    free(out);
    llama_vocab_free(v);
    return th_finish();
}
