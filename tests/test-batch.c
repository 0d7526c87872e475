// llama_batch_init / get_one / free, batch validation with its generated defaults, and the three ways of
// splitting a batch into ubatches (expected splits worked out by hand below, plus invariants on random batches).
#include "harness.h"

#include "llama.h"
#include "llama-batch.h"

#include <stdint.h>
#include <string.h>

static char   g_log[1 << 14];
static size_t g_log_len = 0;

static void capture_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) user_data;
    const size_t n = strlen(text);
    if (g_log_len + n < sizeof(g_log)) {
        memcpy(g_log + g_log_len, text, n + 1);
        g_log_len += n;
    }
}

static void log_clear(void) {
    g_log_len = 0;
    g_log[0] = '\0';
}

static bool log_has(const char * s) {
    return strstr(g_log, s) != NULL;
}

static void test_init_free(void) {
    struct llama_batch b = llama_batch_init(8, 0, 3);
    TH_CHECK(b.n_tokens == 0 && b.token && !b.embd && b.pos && b.n_seq_id && b.seq_id && b.logits, "init tokens");
    bool all = true;
    for (int i = 0; i < 8; i++) {
        all = all && b.seq_id[i] != NULL;
        b.token[i] = i;
        b.pos[i] = i;
        b.n_seq_id[i] = 3;
        b.seq_id[i][0] = 0;
        b.seq_id[i][1] = 1;
        b.seq_id[i][2] = 2;
        b.logits[i] = 1;
    }
    TH_CHECK(all && b.seq_id[8] == NULL, "seq_id slots and terminator");
    llama_batch_free(b);

    b = llama_batch_init(4, 16, 1);
    TH_CHECK(b.embd && !b.token && b.pos && b.seq_id && b.seq_id[4] == NULL, "init embd");
    for (int i = 0; i < 4 * 16; i++) {
        b.embd[i] = (float) i;
    }
    llama_batch_free(b);

    log_clear();
    b = llama_batch_init(0, 0, 1);
    TH_CHECK(!b.token && !b.pos && !b.seq_id && b.n_tokens == 0 && log_has("n_tokens = 0"), "init of 0 tokens");
    llama_batch_free(b);
    b = llama_batch_init(4, 0, 0);
    TH_CHECK(!b.token && !b.seq_id, "init with n_seq_max 0");
    llama_batch_free(b);

    llama_token toks[5] = { 1, 2, 3, 4, 5 };
    b = llama_batch_get_one(toks, 5);
    TH_CHECK(b.n_tokens == 5 && b.token == toks && !b.embd && !b.pos && !b.n_seq_id && !b.seq_id && !b.logits, "get_one");
}

static void test_defaults(void) {
    llama_token toks[5] = { 1, 2, 3, 4, 5 };
    struct llama_batch_allocr ba;
    llama_batch_allocr_init_empty(&ba);

    TH_CHECK(llama_batch_allocr_init(&ba, llama_batch_get_one(toks, 5), 100, 8, 1, NULL, false), "init get_one");
    bool ok = ba.batch.pos && ba.batch.seq_id && ba.batch.logits && ba.n_outputs == 1;
    for (int i = 0; ok && i < 5; i++) {
        ok = ba.batch.pos[i] == i && ba.batch.n_seq_id[i] == 1 && ba.batch.seq_id[i][0] == 0 &&
             ba.batch.logits[i] == (i == 4);
    }
    TH_CHECK(ok, "defaults: positions 0..4, sequence 0, last token output");

    const llama_pos mem[1] = { 9 };
    TH_CHECK(llama_batch_allocr_init(&ba, llama_batch_get_one(toks, 5), 100, 8, 1, mem, true), "init with memory");
    ok = ba.n_outputs == 5;
    for (int i = 0; ok && i < 5; i++) {
        ok = ba.batch.pos[i] == 10 + i && ba.batch.logits[i] == 1;
    }
    TH_CHECK(ok, "positions continue after the memory; output_all flags every token");

    // output_all overrides partial flags (with a warning)
    int8_t lg[5] = { 0, 1, 0, 0, 1 };
    struct llama_batch b = llama_batch_get_one(toks, 5);
    b.logits = lg;
    log_clear();
    TH_CHECK(llama_batch_allocr_init(&ba, b, 100, 8, 1, NULL, true) && ba.n_outputs == 5 && log_has("overriding"),
             "output_all override");
    TH_CHECK(llama_batch_allocr_init(&ba, b, 100, 8, 1, NULL, false) && ba.n_outputs == 2 && ba.batch.logits == lg,
             "caller's output flags kept");

    // a token shared by two sequences advances both
    {
        llama_seq_id s01[2] = { 0, 1 }, s0[1] = { 0 }, s1[1] = { 1 };
        llama_seq_id * sid[3] = { s01, s0, s1 };
        int32_t nsid[3] = { 2, 1, 1 };
        struct llama_batch c = llama_batch_get_one(toks, 3);
        c.seq_id = sid;
        c.n_seq_id = nsid;
        const llama_pos m2[2] = { 3, 3 };
        TH_CHECK(llama_batch_allocr_init(&ba, c, 100, 8, 2, m2, false) && ba.batch.pos[0] == 4 &&
                 ba.batch.pos[1] == 5 && ba.batch.pos[2] == 5 && ba.has_cpl, "shared token positions");
    }
    llama_batch_allocr_free(&ba);
}

static void expect_invalid(const char * label, struct llama_batch b, int32_t n_vocab, uint32_t n_seq_max,
                           const llama_pos * mem, const char * needle1, const char * needle2) {
    struct llama_batch_allocr ba;
    llama_batch_allocr_init_empty(&ba);
    log_clear();
    const bool ok = llama_batch_allocr_init(&ba, b, n_vocab, 8, n_seq_max, mem, false);
    TH_CHECK(!ok, "%s: accepted", label);
    TH_CHECK(log_has(needle1) && (!needle2 || log_has(needle2)), "%s: log '%s'", label, g_log);
    struct llama_ubatch u = llama_batch_allocr_split_simple(&ba, 4);
    TH_CHECK(u.n_tokens == 0, "%s: split after a failed init", label);
    llama_batch_allocr_free(&ba);
}

static void test_invalid(void) {
    llama_token toks[4] = { 1, 2, 100, 3 };
    expect_invalid("token out of range", llama_batch_get_one(toks, 4), 100, 1, NULL, "token[2] = 100", NULL);
    toks[2] = -1;
    expect_invalid("negative token", llama_batch_get_one(toks, 4), 100, 1, NULL, "token[2] = -1", NULL);
    toks[2] = 7;
    expect_invalid("empty batch", llama_batch_get_one(toks, 0), 100, 1, NULL, "n_tokens = 0", NULL);
    expect_invalid("no token, no embd", llama_batch_get_one(NULL, 4), 100, 1, NULL, "neither token nor embd", NULL);

    llama_seq_id s0[1] = { 0 }, s3[1] = { 3 };
    llama_seq_id * sid[4] = { s0, s3, s0, s0 };
    int32_t nsid[4] = { 1, 1, 1, 1 };
    struct llama_batch b = llama_batch_get_one(toks, 4);
    b.seq_id = sid;
    b.n_seq_id = nsid;
    expect_invalid("seq id >= n_seq_max", b, 100, 2, NULL, "seq_id[1][0] = 3", NULL);
    sid[1] = s0;
    nsid[2] = 0;
    expect_invalid("n_seq_id 0", b, 100, 2, NULL, "n_seq_id[2] = 0", NULL);
    nsid[2] = 1;

    llama_pos pos[4] = { 3, 4, 5, 6 };
    b.pos = pos;
    const llama_pos mem[2] = { 5, -1 };
    expect_invalid("position before the memory end", b, 100, 2, mem, "X = 5", "Y = 3");
    pos[1] = -2;
    expect_invalid("negative position", b, 100, 2, NULL, "pos[1] = -2", NULL);
    pos[0] = 0; pos[1] = 1; pos[2] = 3; pos[3] = 4;
    expect_invalid("hole in positions", b, 100, 2, NULL, "sequence 0 positions are not continuous", NULL);

    // accepted: continuing at X + 1, and a later start (llama.cpp allows gaps after the memory)
    struct llama_batch_allocr ba;
    llama_batch_allocr_init_empty(&ba);
    pos[0] = 6; pos[1] = 7; pos[2] = 8; pos[3] = 9;
    TH_CHECK(llama_batch_allocr_init(&ba, b, 100, 8, 2, mem, false), "continue at X + 1");
    pos[0] = 8; pos[1] = 9; pos[2] = 10; pos[3] = 11;
    TH_CHECK(llama_batch_allocr_init(&ba, b, 100, 8, 2, mem, false), "start after X + 1");
    // repeated positions of one sequence are not holes
    pos[0] = 0; pos[1] = 1; pos[2] = 1; pos[3] = 2;
    TH_CHECK(llama_batch_allocr_init(&ba, b, 100, 8, 2, NULL, false), "repeated position");
    llama_batch_allocr_free(&ba);
}

static void test_split_simple(void) {
    llama_token toks[10];
    int8_t lg[10] = { 0, 1, 0, 0, 0, 1, 0, 0, 0, 1 };
    for (int i = 0; i < 10; i++) {
        toks[i] = 10 + i;
    }
    struct llama_batch b = llama_batch_get_one(toks, 10);
    b.logits = lg;
    struct llama_batch_allocr ba;
    llama_batch_allocr_init_empty(&ba);
    TH_CHECK(llama_batch_allocr_init(&ba, b, 100, 8, 1, NULL, false), "init");
    const uint32_t sizes[4] = { 4, 4, 2, 0 };
    int next = 0;
    for (int k = 0; k < 4; k++) {
        struct llama_ubatch u = llama_batch_allocr_split_simple(&ba, 4);
        TH_CHECK(u.n_tokens == sizes[k], "simple ubatch %d has %u tokens", k, u.n_tokens);
        bool ok = !u.equal_seqs && u.n_seqs == (u.n_tokens ? 1u : 0u);
        for (uint32_t i = 0; ok && i < u.n_tokens; i++, next++) {
            ok = u.idx[i] == next && u.token[i] == 10 + next && u.pos[i] == next && u.output[i] == lg[next] &&
                 u.seq_id[i][0] == 0 && u.n_seq_id[i] == 1;
        }
        if (u.n_tokens) {
            ok = ok && u.n_seqs_unq == 1 && u.seq_id_unq[0] == 0 && u.seq_idx[0] == 0 && u.seq_idx[1] == -1;
        }
        TH_CHECK(ok, "simple ubatch %d contents", k);
    }
    TH_CHECK(llama_batch_allocr_done(&ba) && ba.n_out_ids == 3 && ba.out_ids[0] == 1 && ba.out_ids[1] == 5 &&
             ba.out_ids[2] == 9, "simple out_ids");

    // reset splits again from the start
    llama_batch_allocr_split_reset(&ba);
    struct llama_ubatch u = llama_batch_allocr_split_simple(&ba, 100);
    TH_CHECK(u.n_tokens == 10 && ba.n_out_ids == 3 && llama_batch_allocr_done(&ba), "reset + one ubatch");
    llama_batch_allocr_free(&ba);
}

// builds a batch where token i belongs to the sequences of sets[i] (bit mask), positions consecutive per sequence
struct test_batch {
    llama_token   tok[64];
    llama_pos     pos[64];
    int32_t       nsid[64];
    llama_seq_id  ids[64][4];
    llama_seq_id *sid[64];
    int8_t        lg[64];
    struct llama_batch b;
};

// (with narrow, a shared token whose sequences are at different positions is narrowed to its first sequence,
// in sets[] too, so that no sequence gets a hole)
static void make_batch(struct test_batch * t, unsigned * sets, int n, bool narrow) {
    llama_pos next[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < n; i++) {
        int first = -1;
        for (int s = 0; narrow && s < 4; s++) {
            if (sets[i] & (1u << s)) {
                if (first < 0) {
                    first = s;
                } else if (next[s] != next[first]) {
                    sets[i] = 1u << first;
                    break;
                }
            }
        }
        t->tok[i] = i;
        t->nsid[i] = 0;
        llama_pos p = 0;
        for (int s = 0; s < 4; s++) {
            if (sets[i] & (1u << s)) {
                t->ids[i][t->nsid[i]++] = s;
                p = next[s] > p ? next[s] : p;
            }
        }
        // a shared token sits at the same position in all its sequences
        for (int s = 0; s < 4; s++) {
            if (sets[i] & (1u << s)) {
                next[s] = p + 1;
            }
        }
        t->pos[i] = p;
        t->sid[i] = t->ids[i];
        t->lg[i] = (int8_t) (i % 3 == 0);
    }
    t->b = llama_batch_get_one(t->tok, n);
    t->b.pos = t->pos;
    t->b.n_seq_id = t->nsid;
    t->b.seq_id = t->sid;
    t->b.logits = t->lg;
}

static bool idx_list_is(const struct llama_ubatch * u, const int * want, uint32_t n) {
    if (u->n_tokens != n) {
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (u->idx[i] != want[i]) {
            return false;
        }
    }
    return true;
}

static void test_split_equal(void) {
    // sequences: t0 0, t1 1, t2 0, t3 1, t4 0, t5 1, t6 0, t7 0, t8 2, t9 2
    unsigned sets[10] = { 1, 2, 1, 2, 1, 2, 1, 1, 4, 4 };
    struct test_batch t;
    make_batch(&t, sets, 10, false);
    struct llama_batch_allocr ba;
    llama_batch_allocr_init_empty(&ba);
    for (int sequential = 0; sequential < 2; sequential++) {
        TH_CHECK(llama_batch_allocr_init(&ba, t.b, 100, 8, 3, NULL, false), "init");
        // round 1: three sets, 6 / 3 = 2 tokens each
        struct llama_ubatch u = llama_batch_allocr_split_equal(&ba, 6, sequential);
        const int r1[6] = { 0, 2, 1, 3, 8, 9 };
        TH_CHECK(idx_list_is(&u, r1, 6) && u.equal_seqs && u.n_seqs == 3 && u.n_seq_tokens == 2 &&
                 u.n_seqs_unq == 3 && u.seq_id_unq[2] == 2 && u.seq_idx[2] == 2, "equal round 1 (seq %d)", sequential);
        // round 2: sets {0}, {1}; sequence 1 has one token left
        u = llama_batch_allocr_split_equal(&ba, 6, sequential);
        const int r2[2] = { 4, 5 };
        TH_CHECK(idx_list_is(&u, r2, 2) && u.n_seqs == 2 && u.n_seq_tokens == 1, "equal round 2 (seq %d)", sequential);
        u = llama_batch_allocr_split_equal(&ba, 6, sequential);
        const int r3[2] = { 6, 7 };
        TH_CHECK(idx_list_is(&u, r3, 2) && u.n_seqs == 1 && u.n_seq_tokens == 2, "equal round 3 (seq %d)", sequential);
        u = llama_batch_allocr_split_equal(&ba, 6, sequential);
        TH_CHECK(u.n_tokens == 0 && llama_batch_allocr_done(&ba), "equal done (seq %d)", sequential);
    }

    // a small n_ubatch limits the number of sets
    TH_CHECK(llama_batch_allocr_init(&ba, t.b, 100, 8, 3, NULL, false), "init");
    struct llama_ubatch u = llama_batch_allocr_split_equal(&ba, 2, false);
    const int q1[2] = { 0, 1 };
    TH_CHECK(idx_list_is(&u, q1, 2) && u.n_seqs == 2, "equal with n_ubatch 2");

    // a token of two sequences ahead of single-sequence tokens keeps each sequence in order
    unsigned sets2[3] = { 1, 3, 2 };
    make_batch(&t, sets2, 3, false);
    TH_CHECK(llama_batch_allocr_init(&ba, t.b, 100, 8, 2, NULL, false), "init coupled");
    const int e1[1] = { 0 }, e2[1] = { 1 }, e3[1] = { 2 };
    u = llama_batch_allocr_split_equal(&ba, 4, false);
    TH_CHECK(idx_list_is(&u, e1, 1), "coupled equal 1");
    u = llama_batch_allocr_split_equal(&ba, 4, false);
    TH_CHECK(idx_list_is(&u, e2, 1) && u.n_seqs_unq == 2, "coupled equal 2");
    u = llama_batch_allocr_split_equal(&ba, 4, false);
    TH_CHECK(idx_list_is(&u, e3, 1), "coupled equal 3");

    // sequential splits refuse coupled sequences
    TH_CHECK(llama_batch_allocr_init(&ba, t.b, 100, 8, 2, NULL, false), "init coupled");
    log_clear();
    u = llama_batch_allocr_split_equal(&ba, 4, true);
    TH_CHECK(u.n_tokens == 0 && log_has("coupled sequences"), "sequential + coupled");

    // split_seq on the same batch: [t0], then t1 {0,1} narrows to t2 {1}
    TH_CHECK(llama_batch_allocr_init(&ba, t.b, 100, 8, 2, NULL, false), "init coupled");
    u = llama_batch_allocr_split_seq(&ba, 8);
    TH_CHECK(idx_list_is(&u, e1, 1), "seq split 1");
    u = llama_batch_allocr_split_seq(&ba, 8);
    const int s2[2] = { 1, 2 };
    TH_CHECK(idx_list_is(&u, s2, 2) && u.n_seqs_unq == 2 && u.seq_id_unq[0] == 0 && u.seq_id_unq[1] == 1, "seq split 2");
    u = llama_batch_allocr_split_seq(&ba, 8);
    TH_CHECK(u.n_tokens == 0, "seq split done");
    llama_batch_allocr_free(&ba);
}

// random batches: every split mode uses each token exactly once, keeps each sequence's tokens in batch order,
// respects n_ubatch, keeps equal-split groups uniform, and emits every output once
static uint32_t g_rng = 12345;
static uint32_t rnd(uint32_t n) {
    g_rng = g_rng * 1664525u + 1013904223u;
    return (g_rng >> 8) % n;
}

static void test_split_random(void) {
    struct llama_batch_allocr ba;
    llama_batch_allocr_init_empty(&ba);
    int n_bad = 0;
    for (int iter = 0; iter < 300; iter++) {
        const int n = 1 + (int) rnd(64);
        unsigned sets[64];
        for (int i = 0; i < n; i++) {
            // mostly single sequences, sometimes a shared token
            sets[i] = rnd(6) == 0 ? (1u | (1u << (1 + rnd(3)))) : (1u << rnd(4));
        }
        struct test_batch t;
        make_batch(&t, sets, n, true);
        const uint32_t n_ubatch = 1 + rnd(16);
        const int mode = iter % 3;
        if (!llama_batch_allocr_init(&ba, t.b, 100, 8, 4, NULL, false)) {
            n_bad++;
            continue;
        }
        int seen[64] = {0};
        int last_idx_per_seq[4] = { -1, -1, -1, -1 };
        int n_ub = 0;
        for (;;) {
            struct llama_ubatch u = mode == 0 ? llama_batch_allocr_split_simple(&ba, n_ubatch)
                                  : mode == 1 ? llama_batch_allocr_split_equal(&ba, n_ubatch, false)
                                              : llama_batch_allocr_split_seq(&ba, n_ubatch);
            if (u.n_tokens == 0) {
                break;
            }
            if (++n_ub > 200 || u.n_tokens > n_ubatch) {
                n_bad++;
                break;
            }
            if (u.equal_seqs && u.n_seqs * u.n_seq_tokens != u.n_tokens) {
                n_bad++;
            }
            if (mode == 1) {
                for (uint32_t g = 0; g < u.n_seqs; g++) {
                    for (uint32_t k = 1; k < u.n_seq_tokens; k++) {
                        if (sets[u.idx[g * u.n_seq_tokens + k]] != sets[u.idx[g * u.n_seq_tokens]]) {
                            n_bad++;
                        }
                    }
                }
            }
            // per-sequence order: within the ubatch, a sequence's tokens are in batch order and after all its
            // tokens of earlier ubatches (equal splits group by set, which keeps each set in order)
            for (uint32_t i = 0; i < u.n_tokens; i++) {
                const int j = u.idx[i];
                seen[j]++;
                for (int s = 0; s < 4; s++) {
                    if (sets[j] & (1u << s)) {
                        if (j < last_idx_per_seq[s]) {
                            n_bad++;
                        }
                        last_idx_per_seq[s] = j;
                    }
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (seen[i] != 1) {
                n_bad++;
            }
        }
        int n_out = 0;
        for (int i = 0; i < n; i++) {
            n_out += t.lg[i] != 0;
        }
        if ((int) ba.n_out_ids != n_out || !llama_batch_allocr_done(&ba)) {
            n_bad++;
        }
    }
    TH_CHECK(n_bad == 0, "random splits: %d violations", n_bad);
    llama_batch_allocr_free(&ba);
}

static void test_embd_batch(void) {
    struct llama_batch b = llama_batch_init(3, 4, 1);
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 4; k++) {
            b.embd[i * 4 + k] = (float) (i * 10 + k);
        }
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = 1;
    }
    b.n_tokens = 3;
    struct llama_batch_allocr ba;
    llama_batch_allocr_init_empty(&ba);
    TH_CHECK(llama_batch_allocr_init(&ba, b, 100, 4, 1, NULL, false), "embd init");
    (void) llama_batch_allocr_split_simple(&ba, 1);
    struct llama_ubatch u = llama_batch_allocr_split_simple(&ba, 2);
    TH_CHECK(u.n_tokens == 2 && !u.token && u.embd && u.embd[0] == 10.0f && u.embd[7] == 23.0f, "embd ubatch copy");
    llama_batch_allocr_free(&ba);
    llama_batch_free(b);
}

int main(void) {
    llama_log_set(capture_log, NULL);
    test_init_free();
    test_defaults();
    test_invalid();
    test_split_simple();
    test_split_equal();
    test_split_random();
    test_embd_batch();
    llama_log_set(NULL, NULL);
    return th_finish();
}
