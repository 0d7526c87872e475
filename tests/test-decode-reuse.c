// The per-decode shortcuts of llama_decode must not change what it computes (kjv-target-f32):
//  - graph reuse: a context that reuses its ubatch graph gives bit-identical logits to one that rebuilds every
//    graph (LLAMA_GRAPH_REUSE_DISABLE=1), through greedy generation, batches of other shapes, several sequences,
//    seq_rm, a K-shift (seq_add) and a backend sampler set and removed midway; the reusing context reports its
//    reuses in llama_perf_context, the other none;
//  - the thread pool runs small nodes on one thread: 2 threads give the same bits as 1;
//  - an abort requested after any node (small single-thread ones included) returns 2 without hanging, and
//    the context decodes correctly afterwards;
//  - a batch whose later ubatch finds no room leaves the cache as it was (the main cache is undone by freeing the
//    cells the batch took, not from a copy of every cell);
//  - outputs whose token a backend sampler picked skip the raw logits copy: the sampled token still equals the
//    argmax of the plain logits, and llama_get_logits_ith still returns a row (llama.cpp's semantics).
#include "harness.h"

#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct llama_model * g_model;
static int g_n_vocab;

static struct llama_context * new_ctx(int n_threads, bool reuse, uint32_t n_seq_max) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 256;
    cp.n_batch = 64;
    cp.n_seq_max = n_seq_max;
    cp.n_threads = n_threads;
    cp.n_threads_batch = n_threads;
    if (!reuse) {
        setenv("LLAMA_GRAPH_REUSE_DISABLE", "1", 1);
    }
    struct llama_context * ctx = llama_init_from_model(g_model, cp);
    unsetenv("LLAMA_GRAPH_REUSE_DISABLE");
    TH_CHECK(ctx != NULL, "context (threads %d, reuse %d)", n_threads, (int) reuse);
    return ctx;
}

static int argmax(const float * x) {
    int best = 0;
    for (int i = 1; i < g_n_vocab; i++) {
        best = x[i] > x[best] ? i : best;
    }
    return best;
}

// one token of seq s at pos, an output
static int decode_one(struct llama_context * ctx, llama_token t, llama_pos pos, llama_seq_id s) {
    struct llama_batch b = llama_batch_init(1, 0, 1);
    b.n_tokens = 1;
    b.token[0] = t;
    b.pos[0] = pos;
    b.n_seq_id[0] = 1;
    b.seq_id[0][0] = s;
    b.logits[0] = 1;
    const int rc = llama_decode(ctx, b);
    llama_batch_free(b);
    return rc;
}

// n tokens of seq s from pos p0, every one an output (only the last one unless all_out)
static int decode_run_out(struct llama_context * ctx, const llama_token * toks, int n, llama_pos p0, llama_seq_id s,
        bool all_out) {
    struct llama_batch b = llama_batch_init(n, 0, 1);
    b.n_tokens = n;
    for (int i = 0; i < n; i++) {
        b.token[i] = toks[i];
        b.pos[i] = p0 + i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = s;
        b.logits[i] = all_out || i == n - 1;
    }
    const int rc = llama_decode(ctx, b);
    llama_batch_free(b);
    return rc;
}

static int decode_run(struct llama_context * ctx, const llama_token * toks, int n, llama_pos p0, llama_seq_id s) {
    return decode_run_out(ctx, toks, n, p0, s, true);
}

static bool same_outputs(struct llama_context * a, struct llama_context * b, int n_out, const char * what) {
    for (int i = 0; i < n_out; i++) {
        const float * la = llama_get_logits_ith(a, i);
        const float * lb = llama_get_logits_ith(b, i);
        if (!la || !lb || memcmp(la, lb, (size_t) g_n_vocab * sizeof(float)) != 0) {
            TH_CHECK(false, "%s: output %d differs", what, i);
            return false;
        }
    }
    return true;
}

static const llama_token PROMPT[8] = { 1, 100, 200, 300, 400, 500, 600, 700 };

// the same sequence of decodes on both contexts, compared bit for bit after every one
static void run_script(struct llama_context * a, struct llama_context * b, const char * what) {
    struct llama_context * cs[2] = { a, b };
    int ok = 1;
    for (int c = 0; c < 2; c++) {
        ok &= decode_run(cs[c], PROMPT, 8, 0, 0) == 0;
    }
    TH_CHECK(ok, "%s: prompt", what);
    ok = ok && same_outputs(a, b, 8, what);
    // greedy generation: one graph shape for 32 positions at a time
    llama_pos pos = 8;
    llama_token t = (llama_token) argmax(llama_get_logits_ith(a, -1));
    for (int i = 0; i < 60 && ok; i++, pos++) {
        for (int c = 0; c < 2; c++) {
            ok &= decode_one(cs[c], t, pos, 0) == 0;
        }
        ok = ok && same_outputs(a, b, 1, what);
        t = ok ? (llama_token) argmax(llama_get_logits_ith(a, 0)) : 0;
    }
    TH_CHECK(ok, "%s: greedy generation", what);
    // other shapes in between: 3 tokens, then one token again, then a second sequence
    const llama_token three[3] = { 10, 20, 30 };
    for (int c = 0; c < 2 && ok; c++) {
        ok &= decode_run(cs[c], three, 3, pos, 0) == 0;
    }
    ok = ok && same_outputs(a, b, 3, what);
    pos += 3;
    for (int c = 0; c < 2 && ok; c++) {
        ok &= decode_one(cs[c], 40, pos, 0) == 0 && decode_run(cs[c], PROMPT, 8, 0, 1) == 0;
    }
    ok = ok && same_outputs(a, b, 8, what);
    for (int i = 0; i < 5 && ok; i++) {
        for (int c = 0; c < 2; c++) {
            ok &= decode_one(cs[c], (llama_token) (50 + i), 8 + i, 1) == 0;
        }
        ok = ok && same_outputs(a, b, 1, what);
    }
    TH_CHECK(ok, "%s: other shapes and a second sequence", what);
    // drop half of sequence 0 and decode over it again; then move sequence 1 (a K-shift runs its own graph)
    for (int c = 0; c < 2 && ok; c++) {
        ok &= llama_memory_seq_rm(llama_get_memory(cs[c]), 0, 20, -1);
        ok &= decode_one(cs[c], 7, 20, 0) == 0;
    }
    ok = ok && same_outputs(a, b, 1, what);
    for (int c = 0; c < 2 && ok; c++) {
        llama_memory_seq_add(llama_get_memory(cs[c]), 1, 0, -1, 3);
        ok &= decode_one(cs[c], 9, 16, 1) == 0;
    }
    ok = ok && same_outputs(a, b, 1, what);
    for (int c = 0; c < 2 && ok; c++) {
        ok &= decode_one(cs[c], 11, 17, 1) == 0;
    }
    ok = ok && same_outputs(a, b, 1, what);
    TH_CHECK(ok, "%s: seq_rm and K-shift", what);
}

static void test_reuse_vs_rebuild(int n_threads) {
    struct llama_context * a = new_ctx(n_threads, true, 2);
    struct llama_context * b = new_ctx(n_threads, false, 2);
    if (a && b) {
        char what[64];
        snprintf(what, sizeof(what), "reuse vs rebuild, %d threads", n_threads);
        run_script(a, b, what);
        const int ra = llama_perf_context(a).n_reused;
        const int rb = llama_perf_context(b).n_reused;
        TH_CHECK(ra >= 50, "%s: the reusing context reused %d graphs", what, ra);
        TH_CHECK(rb == 0, "%s: the rebuilding context reused %d graphs", what, rb);
    }
    llama_free(a);
    llama_free(b);
}

static void test_threads(void) {
    struct llama_context * a = new_ctx(2, true, 2);
    struct llama_context * b = new_ctx(1, true, 2);
    if (a && b) {
        run_script(a, b, "2 threads vs 1");
    }
    llama_free(a);
    llama_free(b);
}

static bool abort_at(void * data) {
    int * left = data;
    return --(*left) == 0;
}

// abort after the k-th node for every k the graph has: decode returns 2 each time and nothing hangs
static void test_abort_every_node(void) {
    struct llama_context * ctx = new_ctx(2, true, 1);
    struct llama_context * ref = new_ctx(1, false, 1);
    if (!ctx || !ref) {
        llama_free(ctx);
        llama_free(ref);
        return;
    }
    bool ok = decode_run(ctx, PROMPT, 8, 0, 0) == 0 && decode_run(ref, PROMPT, 8, 0, 0) == 0;
    int n_aborted = 0;
    for (int k = 1; ok; k++) {
        int left = k;
        llama_set_abort_callback(ctx, abort_at, &left);
        const int rc = decode_one(ctx, 42, 8, 0);
        llama_set_abort_callback(ctx, NULL, NULL);
        if (rc == 0) {
            break; // the callback ran out of nodes before k: every node was covered
        }
        ok = rc == 2 && left == 0;
        n_aborted += ok;
        ok = ok && llama_memory_seq_pos_max(llama_get_memory(ctx), 0) == 7;
    }
    TH_CHECK(ok && n_aborted >= 20, "abort after each node: %d aborted decodes", n_aborted);
    // the successful decode at the end of the loop must equal an undisturbed one
    TH_CHECK(decode_one(ref, 42, 8, 0) == 0, "reference decode");
    TH_CHECK(ok && same_outputs(ctx, ref, 1, "after the aborts"), "logits after the aborted decodes");
    llama_free(ctx);
    llama_free(ref);
}

// greedy on the backend for seq 0: no raw logits copy, same tokens as the plain argmax, reuse stays on; after
// the sampler is removed the plain logits are back
static void test_backend_sampler(void) {
    struct llama_sampler * chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(chain, llama_sampler_init_greedy());
    struct llama_context * ctx = new_ctx(2, true, 1);
    struct llama_context * ref = new_ctx(2, true, 1);
    if (!ctx || !ref) {
        llama_free(ctx);
        llama_free(ref);
        llama_sampler_free(chain);
        return;
    }
    TH_CHECK(llama_set_sampler(ctx, 0, chain), "set_sampler");
    // a backend sampler takes one output per sequence (n_outputs_max_per_seq = 1)
    bool ok = decode_run_out(ctx, PROMPT, 8, 0, 0, false) == 0 && decode_run_out(ref, PROMPT, 8, 0, 0, false) == 0;
    TH_CHECK(ok, "backend sampler: prompt");
    llama_pos pos = 8;
    for (int i = 0; i < 40 && ok; i++, pos++) {
        const llama_token want = (llama_token) argmax(llama_get_logits_ith(ref, -1));
        const llama_token got = llama_get_sampled_token_ith(ctx, -1);
        ok = got == want && llama_get_logits_ith(ctx, -1) != NULL;
        TH_EXPECT(ok, "backend greedy step %d: %d, plain argmax %d", i, got, want);
        ok = ok && decode_one(ctx, got, pos, 0) == 0 && decode_one(ref, got, pos, 0) == 0;
    }
    TH_CHECK(ok, "backend greedy follows the plain argmax for 40 tokens");
    TH_CHECK(llama_perf_context(ctx).n_reused >= 20, "graphs reused with a backend sampler: %d",
            llama_perf_context(ctx).n_reused);
    TH_CHECK(llama_set_sampler(ctx, 0, NULL), "remove the sampler");
    ok = ok && decode_one(ctx, 5, pos, 0) == 0 && decode_one(ref, 5, pos, 0) == 0;
    TH_CHECK(ok && llama_get_sampled_token_ith(ctx, -1) == LLAMA_TOKEN_NULL, "nothing sampled after removal");
    TH_CHECK(ok && same_outputs(ctx, ref, 1, "after removal"), "plain logits after removal");
    llama_free(ctx);
    llama_free(ref);
    llama_sampler_free(chain);
}

// n_ctx 32, ubatches of 8: after 20 tokens a batch of 16 fails at its second ubatch; the 12 free cells are
// still free afterwards, and the continuation is bit-identical to a context whose first 8 of those tokens
// succeeded and were then removed with seq_rm (the same cells in the same order)
static void test_failed_batch_undo(void) {
    struct llama_context * cs[2] = { NULL, NULL };
    for (int c = 0; c < 2; c++) {
        struct llama_context_params cp = llama_context_default_params();
        cp.n_ctx = 32;
        cp.n_batch = 32;
        cp.n_ubatch = 8;
        cp.n_threads = 2;
        cp.n_threads_batch = 2;
        cs[c] = llama_init_from_model(g_model, cp);
    }
    TH_CHECK(cs[0] && cs[1], "contexts with n_ctx 32");
    if (cs[0] && cs[1]) {
        llama_token toks[40];
        for (int i = 0; i < 40; i++) {
            toks[i] = (llama_token) (1 + (i * 37) % (g_n_vocab - 1));
        }
        bool ok = decode_run(cs[0], toks, 20, 0, 0) == 0;
        const int rc = ok ? decode_run(cs[0], toks + 20, 16, 20, 0) : -100;
        TH_CHECK(rc == 1, "a batch that does not fit returns 1 (%d)", rc);
        TH_CHECK(llama_memory_seq_pos_max(llama_get_memory(cs[0]), 0) == 19, "the failed batch left no cells");
        TH_CHECK(decode_run(cs[0], toks + 20, 12, 20, 0) == 0, "the 12 free cells are still free");
        // the reference takes the same cells: the first ubatch of the failed batch succeeds there and is removed
        ok = decode_run(cs[1], toks, 20, 0, 0) == 0 && decode_run(cs[1], toks + 20, 8, 20, 0) == 0 &&
             llama_memory_seq_rm(llama_get_memory(cs[1]), 0, 20, -1) && decode_run(cs[1], toks + 20, 12, 20, 0) == 0;
        TH_CHECK(ok, "reference decodes");
        TH_CHECK(ok && same_outputs(cs[0], cs[1], 12, "after the failed batch"), "logits after the failed batch");
    }
    llama_free(cs[0]);
    llama_free(cs[1]);
}

int main(void) {
    const char * path = th_data_path("models/kjv/kjv-target-f32.gguf");
    if (!th_require_file(path)) {
        return th_finish();
    }
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    g_model = llama_model_load_from_file(path, mp);
    TH_CHECK(g_model != NULL, "load %s", path);
    if (g_model) {
        g_n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(g_model));
        test_reuse_vs_rebuild(1);
        test_reuse_vs_rebuild(2);
        test_threads();
        test_abort_every_node();
        test_failed_batch_undo();
        test_backend_sampler();
        llama_model_free(g_model);
    }
    llama_backend_free();
    return th_finish();
}
