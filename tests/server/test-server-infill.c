// /infill's prompt layout (tools/server/server-infill-layout.c) on real FIM vocabularies (vocab-only files):
// the order of the FIM tokens, BOS, the prompt, the extra chunks, and llama.cpp's budget split (last
// 3*(n_batch/4) prefix tokens, first n_batch/4 - (2 + n_prompt) suffix tokens, last n_ctx - n_batch - 2*n_predict
// extra tokens). Expected sequences are assembled here by hand from the rule; the FIM ids are the vocabularies'
// published ones (DeepSeek-Coder: <｜fim▁hole｜> 32015, <｜fim▁begin｜> 32016, <｜fim▁end｜> 32017, BOS 32013;
// Refact: <fim_prefix> 1, <fim_middle> 2, <fim_suffix> 3), and the pieces' ids come from the tokenizer, which the
// tokenizer tests check against llama.cpp's vectors.
#include "harness.h"

#include "server-infill.h"

#include "llama.h"

#include <jansson.h>

struct seq {
    llama_token t[4096];
    size_t n;
};

static void put(struct seq * s, llama_token t) {
    if (s->n < sizeof(s->t) / sizeof(s->t[0])) {
        s->t[s->n++] = t;
    }
}

static void put_seq(struct seq * s, const struct seq * o, size_t from, size_t count) {
    for (size_t i = 0; i < count; i++) {
        put(s, o->t[from + i]);
    }
}

static struct seq tok(const struct llama_vocab * v, const char * text) {
    struct seq s = { .n = 0 };
    const int32_t n = llama_tokenize(v, text, (int32_t) strlen(text), s.t, 4096, false, false);
    s.n = n > 0 ? (size_t) n : 0;
    return s;
}

static bool same(const llama_token * got, size_t n_got, const struct seq * want) {
    if (n_got != want->n) {
        fprintf(stderr, "  length %zu, expected %zu\n", n_got, want->n);
        return false;
    }
    for (size_t i = 0; i < n_got; i++) {
        if (got[i] != want->t[i]) {
            fprintf(stderr, "  token %zu: %d, expected %d\n", i, got[i], want->t[i]);
            return false;
        }
    }
    return true;
}

static struct llama_model * load_vocab(const char * name) {
    const char * path = th_data_path("models/vocab/%s", name);
    if (!th_require_file(path)) {
        return NULL;
    }
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model * m = llama_model_load_from_file(path, mp);
    TH_CHECK(m != NULL, "load %s", name);
    return m;
}

static const char * PREFIX = "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + ";
static const char * SUFFIX = "\n\nfor i in range(10):\n    print(fibonacci(i))\n";

static void test_deepseek_coder(void) {
    struct llama_model * m = load_vocab("ggml-vocab-deepseek-coder.gguf");
    if (!m) {
        return;
    }
    const struct llama_vocab * v = llama_model_get_vocab(m);
    const llama_token BOS = 32013, HOLE = 32015, BEGIN = 32016, END = 32017;
    TH_CHECK(llama_vocab_fim_pre(v) == BEGIN && llama_vocab_fim_suf(v) == HOLE && llama_vocab_fim_mid(v) == END,
             "deepseek-coder FIM ids");
    TH_CHECK(llama_vocab_fim_rep(v) == LLAMA_TOKEN_NULL && llama_vocab_fim_sep(v) == LLAMA_TOKEN_NULL,
             "deepseek-coder has no repo/file tokens");
    TH_CHECK(llama_vocab_bos(v) == BOS && llama_vocab_get_add_bos(v), "deepseek-coder adds BOS");
    const struct seq P = tok(v, PREFIX), S = tok(v, SUFFIX), Q = tok(v, "fibonacci(");
    TH_CHECK(P.n > 12 && S.n > 4 && Q.n >= 1, "piece lengths %zu %zu %zu", P.n, S.n, Q.n);
    json_t * none = json_array();
    size_t n = 0;
    llama_token * got;

    // everything fits: BOS PRE prefix SUF suffix MID
    struct seq w = { .n = 0 };
    put(&w, BOS); put(&w, BEGIN); put_seq(&w, &P, 0, P.n); put(&w, HOLE); put_seq(&w, &S, 0, S.n); put(&w, END);
    got = server_infill_layout(v, P.t, P.n, S.t, S.n, none, 2048, -1, 4096, false, NULL, 0, &n);
    TH_CHECK(got && same(got, n, &w), "psm, whole prefix and suffix");
    free(got);

    // n_batch 16: the last 12 prefix tokens, the first 16/4 - 2 = 2 suffix tokens
    w.n = 0;
    put(&w, BOS); put(&w, BEGIN); put_seq(&w, &P, P.n - 12, 12); put(&w, HOLE); put_seq(&w, &S, 0, 2); put(&w, END);
    got = server_infill_layout(v, P.t, P.n, S.t, S.n, none, 16, -1, 4096, false, NULL, 0, &n);
    TH_CHECK(got && same(got, n, &w), "psm, n_batch 16 budget");
    free(got);

    // with a prompt of |Q| tokens after the prefix, n_batch 32: the last 24 prefix tokens, the first
    // 32/4 - (2 + |Q|) suffix tokens
    const size_t s_take = 8 - (2 + Q.n);
    const size_t p_take = P.n < 24 ? P.n : 24;
    w.n = 0;
    put(&w, BOS); put(&w, BEGIN); put_seq(&w, &P, P.n - p_take, p_take); put_seq(&w, &Q, 0, Q.n); put(&w, HOLE);
    put_seq(&w, &S, 0, s_take); put(&w, END);
    got = server_infill_layout(v, P.t, P.n, S.t, S.n, none, 32, -1, 4096, false, Q.t, Q.n, &n);
    TH_CHECK(got && same(got, n, &w), "psm with a prompt, n_batch 32");
    free(got);

    // a prompt as long as the suffix budget leaves no suffix tokens (max(0, ...))
    got = server_infill_layout(v, P.t, P.n, S.t, S.n, none, 8, -1, 4096, false, Q.t, Q.n, &n);
    w.n = 0;
    put(&w, BOS); put(&w, BEGIN); put_seq(&w, &P, P.n - 6, 6); put_seq(&w, &Q, 0, Q.n); put(&w, HOLE); put(&w, END);
    TH_CHECK(got && same(got, n, &w), "suffix budget exhausted");
    free(got);

    // spm: BOS SUF suffix PRE prefix prompt MID
    w.n = 0;
    put(&w, BOS); put(&w, HOLE); put_seq(&w, &S, 0, S.n); put(&w, BEGIN); put_seq(&w, &P, 0, P.n);
    put_seq(&w, &Q, 0, Q.n); put(&w, END);
    got = server_infill_layout(v, P.t, P.n, S.t, S.n, none, 2048, -1, 4096, true, Q.t, Q.n, &n);
    TH_CHECK(got && same(got, n, &w), "spm order");
    free(got);

    // extra chunks without FIM_SEP: "\n\n--- snippet ---\n\n" then the text, per chunk, before BOS
    json_t * extra = json_pack("[{s:s, s:s}, {s:s}]", "filename", "a.py", "text", "x = 1\n", "text", "y = 2\n");
    const struct seq SN = tok(v, "\n\n--- snippet ---\n\n"), X = tok(v, "x = 1\n"), Y = tok(v, "y = 2\n");
    struct seq E = { .n = 0 };
    put_seq(&E, &SN, 0, SN.n); put_seq(&E, &X, 0, X.n); put_seq(&E, &SN, 0, SN.n); put_seq(&E, &Y, 0, Y.n);
    w.n = 0;
    put_seq(&w, &E, 0, E.n); put(&w, BOS); put(&w, BEGIN); put_seq(&w, &P, 0, P.n); put(&w, HOLE);
    put_seq(&w, &S, 0, S.n); put(&w, END);
    got = server_infill_layout(v, P.t, P.n, S.t, S.n, extra, 2048, -1, 4096, false, NULL, 0, &n);
    TH_CHECK(got && same(got, n, &w), "extra chunks, all of them");
    free(got);

    // extra budget n_ctx - n_batch - 2*n_predict = 2100 - 2048 - 2*24 = 4: the last 4 extra tokens
    w.n = 0;
    put_seq(&w, &E, E.n - 4, 4); put(&w, BOS); put(&w, BEGIN); put_seq(&w, &P, 0, P.n); put(&w, HOLE);
    put_seq(&w, &S, 0, S.n); put(&w, END);
    got = server_infill_layout(v, P.t, P.n, S.t, S.n, extra, 2048, 24, 2100, false, NULL, 0, &n);
    TH_CHECK(got && same(got, n, &w), "extra budget 4");
    free(got);

    // no room at all (negative budget clamps to 0)
    w.n = 0;
    put(&w, BOS); put(&w, BEGIN); put_seq(&w, &P, 0, P.n); put(&w, HOLE); put_seq(&w, &S, 0, S.n); put(&w, END);
    got = server_infill_layout(v, P.t, P.n, S.t, S.n, extra, 2048, 100, 2048, false, NULL, 0, &n);
    TH_CHECK(got && same(got, n, &w), "extra budget 0");
    free(got);

    // empty prefix and suffix: just the frame
    w.n = 0;
    put(&w, BOS); put(&w, BEGIN); put(&w, HOLE); put(&w, END);
    got = server_infill_layout(v, NULL, 0, NULL, 0, none, 2048, -1, 4096, false, NULL, 0, &n);
    TH_CHECK(got && same(got, n, &w), "empty prefix and suffix");
    free(got);

    json_decref(extra);
    json_decref(none);
    llama_model_free(m);
}

// Refact: FIM_REP (no FIM_SEP, no BOS): the extra part opens with FIM_REP "myproject\n"
static void test_refact(void) {
    struct llama_model * m = load_vocab("ggml-vocab-refact.gguf");
    if (!m) {
        return;
    }
    const struct llama_vocab * v = llama_model_get_vocab(m);
    const llama_token PRE = 1, MID = 2, SUF = 3;
    TH_CHECK(llama_vocab_fim_pre(v) == PRE && llama_vocab_fim_suf(v) == SUF && llama_vocab_fim_mid(v) == MID,
             "refact FIM ids");
    const llama_token REP = llama_vocab_fim_rep(v);
    TH_CHECK(REP != LLAMA_TOKEN_NULL && llama_vocab_fim_sep(v) == LLAMA_TOKEN_NULL && !llama_vocab_get_add_bos(v),
             "refact: repo token, no file separator, no BOS");
    const struct seq P = tok(v, PREFIX), S = tok(v, SUFFIX), MP = tok(v, "myproject\n"), T = tok(v, "z = 3\n"),
                     SN = tok(v, "\n\n--- snippet ---\n\n");
    json_t * extra = json_pack("[{s:s}]", "text", "z = 3\n");
    struct seq w = { .n = 0 };
    put(&w, REP); put_seq(&w, &MP, 0, MP.n); put_seq(&w, &SN, 0, SN.n); put_seq(&w, &T, 0, T.n);
    put(&w, PRE); put_seq(&w, &P, 0, P.n); put(&w, SUF); put_seq(&w, &S, 0, S.n); put(&w, MID);
    size_t n = 0;
    llama_token * got = server_infill_layout(v, P.t, P.n, S.t, S.n, extra, 2048, -1, 8192, false, NULL, 0, &n);
    TH_CHECK(got && same(got, n, &w), "refact: repo-level extra");
    free(got);
    // without chunks the repo header still leads
    json_t * none = json_array();
    w.n = 0;
    put(&w, REP); put_seq(&w, &MP, 0, MP.n); put(&w, PRE); put_seq(&w, &P, 0, P.n); put(&w, SUF);
    put_seq(&w, &S, 0, S.n); put(&w, MID);
    got = server_infill_layout(v, P.t, P.n, S.t, S.n, none, 2048, -1, 8192, false, NULL, 0, &n);
    TH_CHECK(got && same(got, n, &w), "refact: repo header alone");
    free(got);
    json_decref(none);
    json_decref(extra);
    llama_model_free(m);
}

int main(void) {
    llama_backend_init();
    test_deepseek_coder();
    test_refact();
    llama_backend_free();
    return th_finish();
}
