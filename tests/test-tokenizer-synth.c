// Tokenizers without shared test files, on small vocabularies built in memory; the expected ids are worked
// out by hand in the comments (UGM Viterbi scores, RWKV longest match). Also: a malformed tokenizer section
// makes llama_vocab_load return NULL instead of crashing.

#include "harness.h"

#include "gguf.h"
#include "llama.h"
#include "llama-vocab.h"

#include <stdint.h>

static bool ids_are(const struct llama_vocab * v, const char * text, bool add_special, bool parse_special,
                    const int32_t * expect, int32_t n_expect) {
    int32_t t[64];
    const int32_t n = llama_tokenize(v, text, (int32_t) strlen(text), t, 64, add_special, parse_special);
    bool same = n == n_expect;
    for (int32_t i = 0; same && i < n; ++i) same = t[i] == expect[i];
    if (!same) {
        fprintf(stderr, "'%s' ->", text);
        for (int32_t i = 0; i < n; ++i) fprintf(stderr, " %d", t[i]);
        fprintf(stderr, " (expected");
        for (int32_t i = 0; i < n_expect; ++i) fprintf(stderr, " %d", expect[i]);
        fprintf(stderr, ")\n");
    }
    return same;
}

#define IDS(...) (const int32_t[]) { __VA_ARGS__ }, (int32_t) (sizeof((const int32_t[]) { __VA_ARGS__ }) / sizeof(int32_t))

static struct gguf_context * ugm_gguf(void) {
    static const char * toks[] = { "<pad>", "</s>", "<unk>", "\xe2\x96\x81", "\xe2\x96\x81" "a", "b", "ab",
                                   "\xe2\x96\x81" "ab", "c", "<x>" };
    static const float scores[] = { 0, 0, 0, -2.0f, -1.0f, -2.0f, -1.5f, -4.0f, -1.0f, 0 };
    static const int32_t types[] = { 3, 3, 2, 1, 1, 1, 1, 1, 1, 4 };
    struct gguf_context * g = gguf_init_empty();
    gguf_set_val_str(g, "general.architecture", "t5");
    gguf_set_val_str(g, "tokenizer.ggml.model", "t5");
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", toks, 10);
    gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, 10);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, 10);
    gguf_set_val_bool(g, "tokenizer.ggml.add_space_prefix", true);
    gguf_set_val_bool(g, "tokenizer.ggml.remove_extra_whitespaces", true);
    return g;
}

static void test_ugm(void) {
    struct gguf_context * g = ugm_gguf();
    struct llama_vocab * v = llama_vocab_load(g);
    gguf_free(g);
    TH_CHECK(v != NULL, "UGM vocab loads");
    if (!v) return;
    TH_CHECK(llama_vocab_type(v) == LLAMA_VOCAB_TYPE_UGM, "type UGM");
    // "ab c" normalizes to "▁ab▁c" (dummy prefix, the space becomes the next word's ▁).
    // Best path scores (unknown = min score -4 - 10 = -14): ▁a (-1) at 4, then b (-3) beats ▁ab (-4) and
    // ▁+ab (-3.5) at 5, ▁ (-5) at 8, c (-6) at 9  =>  ▁a b ▁ c
    TH_CHECK(ids_are(v, "ab c", false, false, IDS(4, 5, 3, 8)), "UGM 'ab c'");
    // EOS is added by default for UGM
    TH_CHECK(ids_are(v, "ab c", true, false, IDS(4, 5, 3, 8, 1)), "UGM 'ab c' + EOS");
    // extra whitespace is merged: same as above
    TH_CHECK(ids_are(v, "  ab   c ", false, false, IDS(4, 5, 3, 8)), "UGM merged whitespace");
    // user-defined <x> is cut out first; each side is normalized on its own: "▁a" -> ▁a; "▁b" -> ▁ b
    TH_CHECK(ids_are(v, "a<x>b", false, false, IDS(4, 9, 3, 5)), "UGM user-defined token");
    // unknown characters: "▁zz" -> ▁ then one <unk> for the run of two unknowns
    TH_CHECK(ids_are(v, "zz", false, false, IDS(3, 2)), "UGM unknown run merged");
    char buf[64];
    const int32_t n = llama_detokenize(v, IDS(4, 5, 3, 8), buf, sizeof(buf), false, false);
    TH_CHECK(n == 4 && memcmp(buf, "ab c", 4) == 0, "UGM detokenize '%.*s'", n > 0 ? n : 0, buf);
    TH_CHECK(llama_vocab_eos(v) == 1 && llama_vocab_get_add_eos(v) && !llama_vocab_get_add_bos(v), "UGM specials");
    // without a charsmap "A" is unknown: "▁A" -> ▁ <unk>
    TH_CHECK(ids_are(v, "A", false, false, IDS(3, 2)), "UGM 'A' without charsmap");
    llama_vocab_free(v);

    // a precompiled charsmap (XOR-compressed double array) that maps "A" to "a": root base 1; node 1^'A' = 64
    // checks 'A', is a leaf and has base 2; node 64^2 = 66 holds the replacement offset 0 ("a\0")
    uint32_t xcda[300] = { 0 };
    xcda[0]  = 1u << 10;
    xcda[64] = 0x41u | (1u << 8) | (2u << 10);
    xcda[66] = 0;
    uint8_t blob[4 + sizeof(xcda) + 2];
    const uint32_t xcda_bytes = sizeof(xcda);
    memcpy(blob, &xcda_bytes, 4);
    memcpy(blob + 4, xcda, sizeof(xcda));
    blob[4 + sizeof(xcda)] = 'a';
    blob[4 + sizeof(xcda) + 1] = 0;
    g = ugm_gguf();
    gguf_set_arr_data(g, "tokenizer.ggml.precompiled_charsmap", GGUF_TYPE_UINT8, blob, sizeof(blob));
    v = llama_vocab_load(g);
    TH_CHECK(v != NULL, "UGM vocab with charsmap loads");
    if (v) {
        // "A" normalizes to "a": "▁a" is one token; "Ab" -> "▁ab" -> ▁a b as above
        TH_CHECK(ids_are(v, "A", false, false, IDS(4)), "UGM charsmap 'A'");
        TH_CHECK(ids_are(v, "Ab", false, false, IDS(4, 5)), "UGM charsmap 'Ab'");
        llama_vocab_free(v);
    }
    // a charsmap whose array claims more bytes than it has is rejected
    const uint32_t lie = 1u << 20;
    memcpy(blob, &lie, 4);
    gguf_set_arr_data(g, "tokenizer.ggml.precompiled_charsmap", GGUF_TYPE_UINT8, blob, sizeof(blob));
    v = llama_vocab_load(g);
    TH_CHECK(v == NULL, "UGM charsmap with a lying size is rejected");
    gguf_free(g);
}

static void test_rwkv(void) {
    // escaped texts: \n is a newline, \x41 is 'A'
    static const char * toks[] = { "a", "b", "ab", "\\n", "c", "abc", "\\x41" };
    struct gguf_context * g = gguf_init_empty();
    gguf_set_val_str(g, "tokenizer.ggml.model", "rwkv");
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", toks, 7);
    struct llama_vocab * v = llama_vocab_load(g);
    gguf_free(g);
    TH_CHECK(v != NULL, "RWKV vocab loads");
    if (!v) return;
    // greedy longest match: abc | ab | \n | A ; 'z' has no token and no <unk> exists, so it is dropped
    TH_CHECK(ids_are(v, "abcab\nAz", true, false, IDS(5, 2, 3, 6)), "RWKV greedy");
    TH_CHECK(llama_vocab_nl(v) == 3, "RWKV newline token %d", llama_vocab_nl(v));
    char buf[16];
    const int32_t n = llama_token_to_piece(v, 6, buf, sizeof(buf), 0, false);
    TH_CHECK(n == 1 && buf[0] == 'A', "RWKV piece unescaped");
    llama_vocab_free(v);
}

// a minimal SPM section, then one defect at a time
static struct gguf_context * spm_gguf(int defect) {
    static const char * toks[] = { "<unk>", "<s>", "</s>", "a", "b", "a" };
    static const float scores[] = { 0, 0, 0, -1, -2, -3 };
    static const int32_t types[] = { 2, 3, 3, 1, 1, 1 };
    const size_t n = defect == 4 ? 6 : 5;
    struct gguf_context * g = gguf_init_empty();
    if (defect != 1) gguf_set_val_str(g, "tokenizer.ggml.model", defect == 2 ? "no-such-tokenizer" : "llama");
    if (defect != 3) gguf_set_arr_str(g, "tokenizer.ggml.tokens", toks, n);
    gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, defect == 5 ? 3 : n);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, defect == 6 ? 2 : n);
    if (defect == 7) gguf_set_val_u32(g, "tokenizer.ggml.add_bos_token", 7);
    if (defect == 8) gguf_set_val_str(g, "tokenizer.ggml.add_bos_token", "yes");
    if (defect == 9) gguf_set_val_str(g, "tokenizer.ggml.bos_token_id", "1");
    if (defect == 10) gguf_set_arr_data(g, "tokenizer.ggml.tokens", GGUF_TYPE_INT32, types, 5);
    return g;
}

static void test_bad_sections(void) {
    struct gguf_context * g = spm_gguf(0);
    struct llama_vocab * v = llama_vocab_load(g);
    gguf_free(g);
    TH_CHECK(v != NULL, "minimal SPM section loads");
    if (v) {
        // "ab" -> "▁ab": ▁ has no token and no byte tokens exist -> <unk>, then a, b (no "ab" token)
        TH_CHECK(ids_are(v, "ab", true, false, IDS(1, 0, 3, 4)), "minimal SPM tokenizes");
        llama_vocab_free(v);
    }
    static const char * what[] = { "", "missing tokenizer.ggml.model", "unknown model", "missing tokens",
                                   "duplicate token", "short scores", "short token_type", NULL,
                                   "string add_bos_token", "string bos id", "tokens not strings" };
    for (int d = 1; d <= 10; ++d) {
        if (!what[d]) continue;
        g = spm_gguf(d);
        v = llama_vocab_load(g);
        gguf_free(g);
        TH_CHECK(v == NULL, "defect '%s' is rejected", what[d]);
        llama_vocab_free(v);
    }
    // BPE: unknown pre-tokenizer, missing merges
    {
        static const char * toks[] = { "a", "b", "ab" };
        static const char * merges[] = { "a b" };
        g = gguf_init_empty();
        gguf_set_val_str(g, "tokenizer.ggml.model", "gpt2");
        gguf_set_val_str(g, "tokenizer.ggml.pre", "no-such-pre");
        gguf_set_arr_str(g, "tokenizer.ggml.tokens", toks, 3);
        gguf_set_arr_str(g, "tokenizer.ggml.merges", merges, 1);
        v = llama_vocab_load(g);
        TH_CHECK(v == NULL, "unknown pre-tokenizer is rejected");
        gguf_set_val_str(g, "tokenizer.ggml.pre", "gpt-2");
        v = llama_vocab_load(g);
        TH_CHECK(v != NULL, "tiny gpt-2 vocab loads");
        if (v) {
            TH_CHECK(ids_are(v, "ab", false, false, IDS(2)), "tiny BPE merges a+b");
            llama_vocab_free(v);
        }
        gguf_remove_key(g, "tokenizer.ggml.merges");
        v = llama_vocab_load(g);
        TH_CHECK(v == NULL, "BPE without merges is rejected");
        gguf_free(g);
    }
    TH_CHECK(llama_vocab_load(NULL) == NULL, "NULL gguf is rejected");
}

int main(void) {
    test_ugm();
    test_rwkv();
    test_bad_sections();
    return th_finish();
}
