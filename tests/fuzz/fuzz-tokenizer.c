// libFuzzer target for tokenize / detokenize / token_to_piece.
//
// The vocabularies come from $LLAMA_TEST_DATA/models (default ../shared/models), loaded once. The first input
// byte picks the vocabulary and the flags; the rest is either text (tokenized, detokenized, and for lossless
// vocabularies checked to round-trip when valid UTF-8 without special tokens), text with special-token texts
// spliced in at the positions the input names, or an array of token ids (valid and invalid) to detokenize.
//
//   LLAMA_TEST_DATA=../shared ./build-fuzz/bin/fuzz-tokenizer -max_total_time=600 corpus/

#include "gguf.h"
#include "llama.h"
#include "llama-vocab.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

static const char * k_files[] = {
    "models/vocab/ggml-vocab-llama-spm.gguf",
    "models/vocab/ggml-vocab-gpt-2.gguf",
    "models/vocab/ggml-vocab-bert-bge.gguf",
    "models/vocab/ggml-vocab-deepseek-llm.gguf",
    "models/vocab/ggml-vocab-deepseek-coder.gguf",
    "models/vocab/ggml-vocab-falcon.gguf",
    "models/vocab/ggml-vocab-phi-3.gguf",
    "models/vocab/ggml-vocab-mpt.gguf",
};
#define N_FILES (sizeof(k_files) / sizeof(k_files[0]))

static struct llama_vocab * g_vocab[N_FILES];
static bool g_loaded = false;

static void quiet(enum ggml_log_level level, const char * text, void * ud) {
    (void) level; (void) text; (void) ud;
}

static void load_all(void) {
    const char * dir = getenv("LLAMA_TEST_DATA");
    if (!dir || !*dir) {
        dir = "../shared";
    }
    ggml_log_set(quiet, NULL);
    for (size_t i = 0; i < N_FILES; ++i) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, k_files[i]);
        struct gguf_init_params gp = { true, NULL };
        struct gguf_context * g = gguf_init_from_file(path, gp);
        if (g) {
            g_vocab[i] = llama_vocab_load(g);
            gguf_free(g);
        }
        if (!g_vocab[i]) {
            fprintf(stderr, "fuzz-tokenizer: cannot load %s (set LLAMA_TEST_DATA)\n", path);
            abort();
        }
    }
    g_loaded = true;
}

// strict UTF-8: no overlong forms, nothing above U+10FFFF (those do not survive decoding and re-encoding)
static bool valid_utf8(const char * s, size_t n) {
    size_t i = 0;
    while (i < n) {
        const unsigned char c = (unsigned char) s[i];
        const size_t k = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >> 4) == 14 ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
        if (k == 0 || i + k > n) return false;
        for (size_t j = 1; j < k; ++j) if (((unsigned char) s[i + j] & 0xC0) != 0x80) return false;
        const unsigned char c1 = (unsigned char) s[i + (k > 1 ? 1 : 0)];
        if (c == 0xE0 && c1 < 0xA0) return false;
        if (c == 0xF0 && c1 < 0x90) return false;
        if (c == 0xF4 && c1 > 0x8F) return false;
        i += k;
    }
    return true;
}

static void run_text(const struct llama_vocab * v, const char * text, size_t n, bool add_special, bool parse_special,
                     bool check_roundtrip) {
    int32_t cap = (int32_t) n + 8;
    llama_token * toks = malloc((size_t) cap * sizeof(llama_token));
    int32_t nt = llama_tokenize(v, text, (int32_t) n, toks, cap, add_special, parse_special);
    if (nt < 0 && nt != INT32_MIN) {
        cap = -nt;
        toks = realloc(toks, (size_t) cap * sizeof(llama_token));
        const int32_t nt2 = llama_tokenize(v, text, (int32_t) n, toks, cap, add_special, parse_special);
        if (nt2 != cap) abort(); // the size it asked for must be the size it uses
        nt = nt2;
    }
    if (nt < 0) abort(); // valid arguments never fail
    const int32_t n_vocab = llama_vocab_n_tokens(v);
    for (int32_t i = 0; i < nt; ++i) {
        if (toks[i] < 0 || toks[i] >= n_vocab) abort();
    }
    // a negative result is the size the raw pieces need (the clean-up passes may shrink the text afterwards)
    int32_t out_cap = 8;
    char * out = malloc((size_t) out_cap + 1);
    int32_t got = llama_detokenize(v, toks, nt, out, out_cap, false, parse_special);
    if (got < 0) {
        out_cap = -got;
        out = realloc(out, (size_t) out_cap + 1);
        got = llama_detokenize(v, toks, nt, out, out_cap, false, parse_special);
    }
    if (got < 0 || got > out_cap) abort();
    if (check_roundtrip && (got != (int32_t) n || memcmp(out, text, n) != 0)) {
        fprintf(stderr, "round trip differs: %zu bytes in, %d out\n", n, got);
        abort();
    }
    for (int32_t i = 0; i < nt; ++i) {
        char piece[64];
        (void) llama_token_to_piece(v, toks[i], piece, (int32_t) sizeof(piece), i & 1, (i & 2) != 0);
    }
    free(out);
    free(toks);
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (!g_loaded) {
        load_all();
    }
    if (size < 2) {
        return 0;
    }
    const uint8_t sel = data[0];
    const struct llama_vocab * v = g_vocab[(sel & 7) % N_FILES];
    const bool add_special   = (sel & 0x08) != 0;
    const bool parse_special = (sel & 0x10) != 0;
    const int mode = (sel >> 5) & 3;
    const char * text = (const char *) data + 1;
    const size_t n = size - 1;

    if (mode == 0 || mode == 1) {
        // lossless: SPM and the byte-level BPE vocabularies without clean-up (deepseek)
        const enum llama_vocab_type t = llama_vocab_type(v);
        const bool lossless = (sel & 7) == 0 || (sel & 7) == 3 || (sel & 7) == 4 || (sel & 7) == 6;
        bool rt = mode == 0 && lossless && !add_special && !parse_special && valid_utf8(text, n) &&
                  memchr(text, 0, n) == NULL && (t == LLAMA_VOCAB_TYPE_SPM || t == LLAMA_VOCAB_TYPE_BPE);
        if (rt) {
            // user-defined tokens are cut out even without parse_special; their text round-trips, but phi-3's
            // rstrip eats the whitespace after them, so skip texts with '<' on that vocabulary
            if ((sel & 7) == 6 && memchr(text, '<', n)) rt = false;
            // SPM renders its whitespace marker U+2581 as a space, so a literal one does not come back
            if (t == LLAMA_VOCAB_TYPE_SPM && memmem(text, n, "\xe2\x96\x81", 3)) rt = false;
        }
        run_text(v, text, n, add_special, parse_special, rt);
    } else if (mode == 2) {
        // splice special-token texts into the text: each 0xFF byte is followed by a token-id byte pair
        char * buf = malloc(n * 64 + 1);
        size_t o = 0;
        const int32_t n_vocab = llama_vocab_n_tokens(v);
        for (size_t i = 0; i < n; ++i) {
            if ((uint8_t) text[i] == 0xFF && i + 2 < n) {
                const int32_t id = (int32_t) ((((uint8_t) text[i + 1] << 8) | (uint8_t) text[i + 2]) % n_vocab);
                const enum llama_token_attr a = llama_vocab_get_attr(v, id);
                // prefer special tokens: map to the nearest control / user-defined one below, if any
                int32_t sid = id;
                for (int32_t k = 0; k < 512 && sid >= 0; ++k, --sid) {
                    if (llama_vocab_get_attr(v, sid) & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED)) break;
                }
                const char * t = llama_vocab_get_text(v, sid >= 0 ? sid : id);
                (void) a;
                const size_t tl = t ? strlen(t) : 0;
                if (tl < 60) {
                    memcpy(buf + o, t, tl);
                    o += tl;
                }
                i += 2;
            } else {
                buf[o++] = text[i];
            }
        }
        run_text(v, buf, o, add_special, parse_special, false);
        free(buf);
    } else {
        // detokenize arbitrary ids, valid and invalid
        const size_t nt = n / 4;
        llama_token * ids = malloc((nt ? nt : 1) * sizeof(llama_token));
        memcpy(ids, text, nt * sizeof(llama_token));
        const int32_t n_vocab = llama_vocab_n_tokens(v);
        for (size_t i = 0; i < nt; ++i) {
            if (!(sel & 0x10)) {
                ids[i] = (llama_token) ((uint32_t) ids[i] % (uint32_t) n_vocab);
            }
        }
        char * out = malloc(nt * 256 + 16);
        const int32_t r = llama_detokenize(v, ids, (int32_t) nt, out, (int32_t) (nt * 256 + 16), add_special, parse_special);
        (void) r;
        for (size_t i = 0; i < nt; ++i) {
            char piece[4];
            (void) llama_token_to_piece(v, ids[i], piece, (int32_t) sizeof(piece), 1, true);
        }
        free(out);
        free(ids);
    }
    return 0;
}
