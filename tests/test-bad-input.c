// Deterministic versions of what fuzz-decode and fuzz-model-load throw at libllama: bad llama_context_params
// (rejected with NULL or resolved the way llama.cpp resolves them), malformed batches (llama_decode must return
// non-zero and leave the memory untouched), out-of-range output indices, memory operations with odd arguments,
// and truncated / corrupted model files. After every bad call the context must still decode and give the same
// logits as a fresh context does for the same tokens.
#include "harness-ggml.h"

#include "llama.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_CTX   64
#define N_BATCH 32
#define N_SEQ   4

static const llama_token PROMPT[4] = { 1, 403, 261, 378 };

static struct llama_context_params base_params(void) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = N_CTX;
    cp.n_batch = N_BATCH;
    cp.n_ubatch = 16;
    cp.n_seq_max = N_SEQ;
    cp.n_threads = 1;
    cp.n_threads_batch = 1;
    cp.no_perf = true;
    return cp;
}

static int32_t g_n_vocab;
static float * g_ref; // logits of PROMPT's last token on a fresh context

// decodes PROMPT on sequence 0 of an emptied memory; true when its logits equal g_ref
static bool still_works(struct llama_context * ctx) {
    llama_memory_clear(llama_get_memory(ctx), true);
    llama_token toks[4];
    memcpy(toks, PROMPT, sizeof(toks));
    if (llama_decode(ctx, llama_batch_get_one(toks, 4)) != 0) {
        return false;
    }
    const float * l = llama_get_logits_ith(ctx, -1);
    if (!l) {
        return false;
    }
    for (int32_t i = 0; i < g_n_vocab; i++) {
        if (fabsf(l[i] - g_ref[i]) > 1e-4f) {
            return false;
        }
    }
    return true;
}

// a batch with its own arrays: one sequence id slot per token (n_seq_id 1, seq 0), positions 0.., last output
struct tbatch {
    struct llama_batch b;
    llama_seq_id ids[80][8];
    llama_seq_id * idp[80];
    llama_token tok[80];
    llama_pos pos[80];
    int32_t nsid[80];
    int8_t logits[80];
};

static void tb_init(struct tbatch * t, int32_t n, llama_pos p0) {
    memset(t, 0, sizeof(*t));
    for (int32_t i = 0; i < 80; i++) {
        t->tok[i] = PROMPT[i % 4];
        t->pos[i] = (int64_t) p0 + i > INT32_MAX ? INT32_MAX : p0 + i; // only the first n matter
        t->nsid[i] = 1;
        t->idp[i] = t->ids[i];
    }
    t->logits[n > 0 ? n - 1 : 0] = 1;
    t->b.n_tokens = n;
    t->b.token = t->tok;
    t->b.pos = t->pos;
    t->b.n_seq_id = t->nsid;
    t->b.seq_id = t->idp;
    t->b.logits = t->logits;
}

// decode of t must fail, leave sequence 0's memory as it was, and the context must work afterwards
static void expect_rejected(struct llama_context * ctx, struct tbatch * t, const char * what) {
    llama_memory_t mem = llama_get_memory(ctx);
    llama_memory_clear(mem, true);
    llama_token one = PROMPT[0];
    TH_CHECK(llama_decode(ctx, llama_batch_get_one(&one, 1)) == 0, "setup decode before %s", what);
    const llama_pos before = llama_memory_seq_pos_max(mem, 0);
    const int32_t ret = llama_decode(ctx, t->b);
    TH_CHECK(ret != 0, "%s: llama_decode returned %d, expected an error", what, ret);
    TH_CHECK(llama_memory_seq_pos_max(mem, 0) == before, "%s: memory of seq 0 changed (%d -> %d)", what, before,
             llama_memory_seq_pos_max(mem, 0));
    for (llama_seq_id s = 1; s < N_SEQ; s++) {
        TH_EXPECT(llama_memory_seq_pos_max(mem, s) == -1, "%s: seq %d got cells", what, s);
    }
    TH_CHECK(still_works(ctx), "%s: context broken afterwards", what);
}

static void test_params(struct llama_model * model) {
    struct llama_context_params cp;
    struct llama_context * ctx;

    cp = base_params(); cp.n_seq_max = 0;
    ctx = llama_init_from_model(model, cp);
    TH_CHECK(ctx == NULL, "n_seq_max 0 accepted");
    llama_free(ctx);

    cp = base_params(); cp.n_seq_max = 100000;
    ctx = llama_init_from_model(model, cp);
    TH_CHECK(ctx == NULL, "n_seq_max 100000 accepted");
    llama_free(ctx);

    cp = base_params(); cp.n_seq_max = UINT32_MAX;
    ctx = llama_init_from_model(model, cp);
    TH_CHECK(ctx == NULL, "n_seq_max UINT32_MAX accepted");
    llama_free(ctx);

    cp = base_params(); cp.n_batch = 0; cp.n_ubatch = 0;
    ctx = llama_init_from_model(model, cp);
    TH_CHECK(ctx == NULL, "n_batch = n_ubatch = 0 accepted");
    llama_free(ctx);

    // llama.cpp: n_ctx 0 takes the training context
    cp = base_params(); cp.n_ctx = 0; cp.n_seq_max = 1;
    ctx = llama_init_from_model(model, cp);
    TH_CHECK(ctx != NULL, "n_ctx 0 rejected");
    if (ctx) {
        TH_CHECK(llama_n_ctx(ctx) == (uint32_t) llama_model_n_ctx_train(model), "n_ctx 0 -> %u, train %d",
                 llama_n_ctx(ctx), llama_model_n_ctx_train(model));
        llama_free(ctx);
    }

    // llama.cpp clamps n_ubatch to n_batch
    cp = base_params(); cp.n_ubatch = 4 * N_BATCH;
    ctx = llama_init_from_model(model, cp);
    TH_CHECK(ctx != NULL, "n_ubatch > n_batch rejected");
    if (ctx) {
        TH_CHECK(llama_n_ubatch(ctx) == llama_n_batch(ctx), "n_ubatch %u n_batch %u", llama_n_ubatch(ctx),
                 llama_n_batch(ctx));
        TH_CHECK(still_works(ctx), "n_ubatch clamped context broken");
        llama_free(ctx);
    }

    cp = base_params(); cp.n_ctx = 2; cp.n_seq_max = 4;
    ctx = llama_init_from_model(model, cp);
    TH_CHECK(ctx == NULL, "n_ctx < n_seq_max accepted");
    llama_free(ctx);

    // llama.cpp: non-positive thread counts mean the default
    const int32_t threads[] = { 0, -1, INT32_MIN };
    for (size_t i = 0; i < 3; i++) {
        cp = base_params(); cp.n_threads = threads[i]; cp.n_threads_batch = threads[i];
        ctx = llama_init_from_model(model, cp);
        TH_CHECK(ctx != NULL, "n_threads %d rejected", threads[i]);
        if (ctx) {
            TH_CHECK(llama_n_threads(ctx) > 0 && llama_n_threads_batch(ctx) > 0, "n_threads %d -> %d / %d",
                     threads[i], llama_n_threads(ctx), llama_n_threads_batch(ctx));
            TH_CHECK(still_works(ctx), "n_threads %d context broken", threads[i]);
            llama_set_n_threads(ctx, -5, 0);
            TH_CHECK(llama_n_threads(ctx) > 0 && llama_n_threads_batch(ctx) > 0, "llama_set_n_threads(-5, 0)");
            llama_free(ctx);
        }
    }

    // an out-of-enum flash_attn_type: llama.cpp treats anything but DISABLED as "use it"; either way no crash
    cp = base_params(); cp.flash_attn_type = (enum llama_flash_attn_type) 42;
    ctx = llama_init_from_model(model, cp);
    if (ctx) {
        llama_memory_clear(llama_get_memory(ctx), true);
        llama_token toks[4];
        memcpy(toks, PROMPT, sizeof(toks));
        TH_CHECK(llama_decode(ctx, llama_batch_get_one(toks, 4)) == 0, "flash_attn_type 42 decode");
        llama_free(ctx);
    } else {
        TH_CHECK(true, "flash_attn_type 42 rejected");
    }

    TH_CHECK(llama_init_from_model(NULL, base_params()) == NULL, "NULL model accepted");
}

// KV cache types outside the enum (or removed ids) must be rejected, not looked up in the type table
static void test_bad_cache_types(struct llama_model * model) {
    struct llama_context_params cp;
    struct llama_context * ctx;
    const int32_t bad_types[] = { GGML_TYPE_COUNT, GGML_TYPE_COUNT + 7, -1, 4 /* removed Q4_2 */, INT32_MAX };
    for (size_t i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
        cp = base_params(); cp.type_k = (enum ggml_type) bad_types[i];
        ctx = llama_init_from_model(model, cp);
        TH_CHECK(ctx == NULL, "type_k %d accepted", bad_types[i]);
        llama_free(ctx);
        cp = base_params(); cp.type_v = (enum ggml_type) bad_types[i];
        ctx = llama_init_from_model(model, cp);
        TH_CHECK(ctx == NULL, "type_v %d accepted", bad_types[i]);
        llama_free(ctx);
    }

}

static void test_batches(struct llama_context * ctx) {
    struct tbatch * t = malloc(sizeof(*t));
    if (!t) {
        abort();
    }

    tb_init(t, 0, 1);               expect_rejected(ctx, t, "n_tokens 0");
    tb_init(t, 4, 1); t->b.n_tokens = -1; expect_rejected(ctx, t, "n_tokens -1");
    tb_init(t, N_BATCH + 1, 1);     expect_rejected(ctx, t, "n_tokens > n_batch");
    tb_init(t, N_CTX + 8, 1);       expect_rejected(ctx, t, "n_tokens > n_ctx");
    tb_init(t, 4, 1); t->b.token = NULL; expect_rejected(ctx, t, "neither token nor embd");

    const llama_token bad_tok[] = { -1, INT32_MIN, 0x7fffffff };
    for (int i = 0; i < 3; i++) {
        tb_init(t, 4, 1); t->tok[2] = bad_tok[i]; expect_rejected(ctx, t, "token id out of range");
    }
    tb_init(t, 4, 1); t->tok[3] = g_n_vocab; expect_rejected(ctx, t, "token id == n_vocab");

    tb_init(t, 4, 1); t->pos[0] = -5; t->pos[1] = -4; t->pos[2] = -3; t->pos[3] = -2;
    expect_rejected(ctx, t, "negative positions");
    tb_init(t, 4, 1); t->pos[2] = 7;          expect_rejected(ctx, t, "hole in positions");
    tb_init(t, 4, 1); t->pos[1] = 100000;     expect_rejected(ctx, t, "huge position");
    tb_init(t, 4, 0);                          expect_rejected(ctx, t, "sequence overlaps the memory");

    // positions spanning [0, INT32_MAX] in one sequence: max - min + 1 overflowed in the hole check
    tb_init(t, 2, 0); t->ids[0][0] = 1; t->ids[1][0] = 1; t->pos[1] = INT32_MAX;
    expect_rejected(ctx, t, "positions 0 and INT32_MAX");

    // a sequence at the largest position cannot be continued with automatic positions
    {
        llama_memory_clear(llama_get_memory(ctx), true);
        tb_init(t, 1, INT32_MAX); t->ids[0][0] = 2;
        const int32_t r1 = llama_decode(ctx, t->b);
        if (r1 == 0) {
            TH_CHECK(llama_memory_seq_pos_max(llama_get_memory(ctx), 2) == INT32_MAX, "pos INT32_MAX stored");
            tb_init(t, 1, 0); t->ids[0][0] = 2; t->b.pos = NULL;
            TH_CHECK(llama_decode(ctx, t->b) != 0, "automatic position after INT32_MAX accepted");
        } else {
            TH_CHECK(true, "pos INT32_MAX rejected (%d)", r1);
        }
        TH_CHECK(still_works(ctx), "after the INT32_MAX position");
    }

    const llama_seq_id bad_seq[] = { -1, N_SEQ, 1000, INT32_MAX, INT32_MIN };
    for (int i = 0; i < 5; i++) {
        tb_init(t, 4, 1); t->ids[1][0] = bad_seq[i]; expect_rejected(ctx, t, "sequence id out of range");
    }
    tb_init(t, 4, 1); t->nsid[2] = 0;              expect_rejected(ctx, t, "n_seq_id 0");
    tb_init(t, 4, 1); t->nsid[2] = -3;             expect_rejected(ctx, t, "n_seq_id negative");
    tb_init(t, 4, 1); t->nsid[2] = 5;              // 5 ids, all valid numbers but more than n_seq_max
    for (int k = 0; k < 5; k++) {
        t->ids[2][k] = k % N_SEQ;
    }
    expect_rejected(ctx, t, "n_seq_id > n_seq_max");

    // a batch that is fine apart from its output flags: any flag pattern must work, including none
    tb_init(t, 4, 0); memset(t->logits, 0, sizeof(t->logits));
    llama_memory_clear(llama_get_memory(ctx), true);
    TH_CHECK(llama_decode(ctx, t->b) == 0, "batch without outputs rejected");
    TH_CHECK(llama_get_logits_ith(ctx, 3) == NULL, "logits of an unflagged token");
    TH_CHECK(llama_get_logits_ith(ctx, -1) == NULL, "logits(-1) with no outputs");
    tb_init(t, 4, 4); for (int i = 0; i < 4; i++) t->logits[i] = (int8_t) (i + 1) * 40;
    TH_CHECK(llama_decode(ctx, t->b) == 0, "batch with odd non-zero flags rejected");
    for (int i = 0; i < 4; i++) {
        TH_CHECK(llama_get_logits_ith(ctx, i) != NULL, "flagged token %d has no logits", i);
    }
    const int32_t bad_idx[] = { 4, 80, -5, INT32_MAX };
    for (int i = 0; i < 4; i++) {
        TH_CHECK(llama_get_logits_ith(ctx, bad_idx[i]) == NULL, "logits index %d", bad_idx[i]);
        TH_CHECK(llama_get_embeddings_ith(ctx, bad_idx[i]) == NULL, "embeddings index %d", bad_idx[i]);
    }
    TH_CHECK(llama_get_embeddings_seq(ctx, -1) == NULL && llama_get_embeddings_seq(ctx, 9999) == NULL,
             "embeddings of a bad sequence");
    TH_CHECK(still_works(ctx), "after the output checks");

    // decode with an invalid context pointer
    tb_init(t, 4, 0);
    TH_CHECK(llama_decode(NULL, t->b) != 0, "NULL context");
    free(t);
}

static void test_memory_ops(struct llama_context * ctx) {
    llama_memory_t mem = llama_get_memory(ctx);
    llama_memory_clear(mem, true);
    llama_token toks[4];
    memcpy(toks, PROMPT, sizeof(toks));
    TH_CHECK(llama_decode(ctx, llama_batch_get_one(toks, 4)) == 0, "memory ops setup");
    const llama_seq_id bad[] = { N_SEQ, 1000, INT32_MAX, INT32_MIN, -7 };
    for (int i = 0; i < 5; i++) {
        const llama_seq_id s = bad[i];
        if (s >= 0) { // a negative id means every sequence for seq_rm (llama.cpp)
            TH_EXPECT(!llama_memory_seq_rm(mem, s, 0, -1), "seq_rm(%d) accepted", s);
        }
        llama_memory_seq_cp(mem, 0, s, -1, -1);
        llama_memory_seq_cp(mem, s, 0, -1, -1);
        llama_memory_seq_keep(mem, s);
        llama_memory_seq_add(mem, s, 0, -1, 3);
        llama_memory_seq_div(mem, s, 0, -1, 2);
        TH_EXPECT(llama_memory_seq_pos_min(mem, s) == -1 && llama_memory_seq_pos_max(mem, s) == -1,
                  "pos_min/max of seq %d", s);
        if (s >= 0) {
            TH_EXPECT(llama_memory_seq_pos_max(mem, 0) == 3 && llama_memory_seq_pos_min(mem, 0) == 0,
                      "seq 0 changed by an op on seq %d: [%d, %d]", s, llama_memory_seq_pos_min(mem, 0),
                      llama_memory_seq_pos_max(mem, 0));
        }
    }
    // inverted / odd ranges and divisors
    TH_CHECK(llama_memory_seq_rm(mem, 0, 3, 1), "seq_rm inverted range");
    TH_CHECK(llama_memory_seq_pos_max(mem, 0) == 3, "inverted range removed cells");
    llama_memory_seq_div(mem, 0, 0, -1, 0);
    llama_memory_seq_div(mem, 0, 0, -1, -3);
    llama_memory_seq_div(mem, 0, 0, -1, INT_MIN);
    TH_CHECK(llama_memory_seq_pos_max(mem, 0) == 3, "seq_div by d <= 0 changed positions");
    llama_memory_seq_cp(mem, 0, 0, -1, -1);
    TH_CHECK(llama_memory_seq_pos_max(mem, 0) == 3, "seq_cp onto itself");
    llama_memory_seq_add(mem, 0, INT32_MIN, INT32_MAX, -5);
    TH_CHECK(still_works(ctx), "after memory ops with odd arguments");
    TH_CHECK(!llama_memory_seq_rm(NULL, 0, 0, -1), "seq_rm on NULL memory");
    llama_memory_clear(NULL, true);
}

// a model file cut at many lengths and with flipped bytes: loading returns NULL or a model, never crashes
static void test_corrupt_files(const char * path) {
    size_t size = 0;
    uint8_t * data = th_read_file(path, &size);
    TH_CHECK(data != NULL, "read %s", path);
    if (!data) {
        return;
    }
    char tmp[] = "/tmp/test-bad-input-XXXXXX";
    const int fd = mkstemp(tmp);
    TH_CHECK(fd >= 0, "mkstemp");
    if (fd < 0) {
        free(data);
        return;
    }
    int n_loaded = 0, n_tried = 0;
    const size_t cuts[] = { 0, 3, 4, 8, 16, 24, 100, 1000, size / 3, size / 2, size - 1000, size - 1 };
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        if (cuts[i] >= size) {
            continue;
        }
        TH_CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, data, cuts[i], 0) == (ssize_t) cuts[i], "write cut");
        for (int vo = 0; vo < 2; vo++) {
            struct llama_model_params mp = llama_model_default_params();
            mp.vocab_only = vo;
            struct llama_model * m = llama_model_load_from_file(tmp, mp);
            n_tried++;
            n_loaded += m != NULL;
            if (!vo) {
                TH_CHECK(m == NULL, "model truncated to %zu of %zu bytes loaded", cuts[i], size);
            }
            llama_model_free(m);
        }
    }
    // flip bytes inside the header / metadata area
    uint32_t rng = 12345;
    for (int i = 0; i < 40; i++) {
        rng = rng * 1103515245u + 12345u;
        const size_t off = (rng >> 8) % (size < 4096 ? size : 4096);
        const uint8_t old = data[off];
        data[off] ^= (uint8_t) (1u << (rng & 7)) | 0x80;
        TH_CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t) size, "write flipped");
        struct llama_model_params mp = llama_model_default_params();
        mp.vocab_only = (i & 1) != 0;
        struct llama_model * m = llama_model_load_from_file(tmp, mp);
        n_tried++;
        n_loaded += m != NULL;
        llama_model_free(m);
        data[off] = old;
    }
    fprintf(stderr, "corrupt files: %d tried, %d still loaded\n", n_tried, n_loaded);
    TH_CHECK(llama_model_load_from_file("/nonexistent/model.gguf", llama_model_default_params()) == NULL,
             "missing file loaded");
    TH_CHECK(llama_model_load_from_file("/tmp", llama_model_default_params()) == NULL, "directory loaded");
    close(fd);
    unlink(tmp);
    free(data);
}

int main(void) {
    llama_log_set(th_log_silent, NULL);
    llama_backend_init();
    const char * path = th_data_path("models/stories260K-f32.gguf");
    if (!th_require_file(path)) {
        return th_finish();
    }
    struct llama_model * model = llama_model_load_from_file(path, llama_model_default_params());
    TH_CHECK(model != NULL, "load %s", path);
    if (!model) {
        return th_finish();
    }
    g_n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    g_ref = malloc((size_t) g_n_vocab * sizeof(float));
    {
        struct llama_context * ref = llama_init_from_model(model, base_params());
        TH_CHECK(ref != NULL, "reference context");
        llama_token toks[4];
        memcpy(toks, PROMPT, sizeof(toks));
        TH_CHECK(ref && llama_decode(ref, llama_batch_get_one(toks, 4)) == 0, "reference decode");
        const float * l = ref ? llama_get_logits_ith(ref, -1) : NULL;
        TH_CHECK(l != NULL, "reference logits");
        if (!l) {
            return th_finish();
        }
        memcpy(g_ref, l, (size_t) g_n_vocab * sizeof(float));
        llama_free(ref);
    }

    test_params(model);

    struct llama_context * ctx = llama_init_from_model(model, base_params());
    TH_CHECK(ctx != NULL, "context");
    if (ctx) {
        test_batches(ctx);
        test_memory_ops(ctx);
        llama_free(ctx);
    }
    llama_model_free(model);
    test_corrupt_files(path);
    test_corrupt_files(th_data_path("models/synthetic/qwen3-Q4_K_M.gguf"));
    // last: until llama-context.c checks the range, an invalid type aborts in ggml_get_type_traits
    model = llama_model_load_from_file(path, llama_model_default_params());
    if (model) {
        // INT32_MIN as an output index: -i overflowed in llama-context.c's output_row (UBSan abort)
        struct llama_context * ctx2 = llama_init_from_model(model, base_params());
        llama_token toks[4];
        memcpy(toks, PROMPT, sizeof(toks));
        TH_CHECK(ctx2 && llama_decode(ctx2, llama_batch_get_one(toks, 4)) == 0, "decode for the index check");
        if (ctx2) {
            TH_CHECK(llama_get_logits_ith(ctx2, INT32_MIN) == NULL, "logits index INT32_MIN");
            TH_CHECK(llama_get_embeddings_ith(ctx2, INT32_MIN) == NULL, "embeddings index INT32_MIN");
            llama_free(ctx2);
        }
        // shifting past the int range: c->pos += delta overflowed in llama-kv-cache.c (UBSan abort)
        struct llama_context * ctx3 = llama_init_from_model(model, base_params());
        if (ctx3) {
            llama_memory_t mem = llama_get_memory(ctx3);
            TH_CHECK(llama_decode(ctx3, llama_batch_get_one(toks, 4)) == 0, "decode for the shift check");
            llama_memory_seq_add(mem, 0, 0, -1, INT32_MAX);
            llama_memory_seq_add(mem, 0, 0, -1, INT32_MAX);
            llama_memory_seq_add(mem, 0, 0, -1, INT32_MIN);
            TH_CHECK(still_works(ctx3), "after shifts past the int range");
            llama_free(ctx3);
        }
        test_bad_cache_types(model);
        llama_model_free(model);
    }
    free(g_ref);
    return th_finish();
}
