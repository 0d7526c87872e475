// LoRA adapters and control vectors (stories260K-f32): an adapter written here (random rank-4 A/B on seven
// weights incl. token_embd and output, alpha 8) must give the logits of a merged model W' = W + s·B·A that this
// test computes in double and writes as a plain model, for user scales 1 and 0.5; clearing it must restore the
// base logits bit for bit and add no graph nodes. Control vectors: zeros change nothing, the layer range is
// inclusive and starts at data row "layer 1", and a huge vector on the last layer makes the logits those of
// output·norm(v), computed here from the model file. Bad adapter files give NULL and an error message.
#include "harness.h"

#include "llama.h"
#include "gguf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RANK   4
#define ALPHA  8.0f
#define NTOK   8

static const llama_token PROMPT[NTOK] = { 1, 482, 82, 508, 499, 496, 482, 120 };

static const char * const ADAPTED[] = {
    "token_embd.weight", "blk.0.attn_q.weight", "blk.1.attn_v.weight", "blk.2.ffn_down.weight",
    "blk.3.ffn_gate.weight", "blk.4.attn_output.weight", "output.weight",
};
#define N_ADAPTED ((int) (sizeof(ADAPTED) / sizeof(ADAPTED[0])))

static char g_dir[256];
static int  g_n_errors; // error lines logged since the last reset

static void log_cb(enum ggml_log_level level, const char * text, void * ud) {
    (void) ud;
    if (level == GGML_LOG_LEVEL_ERROR) {
        g_n_errors++;
        if (getenv("TEST_LORA_VERBOSE")) {
            fputs(text, stderr);
        }
    }
}

static const char * tmp_path(const char * name) {
    static char bufs[4][512];
    static int slot = 0;
    char * p = bufs[slot];
    slot = (slot + 1) % 4;
    snprintf(p, sizeof(bufs[0]), "%s/%s", g_dir, name);
    return p;
}

static float urand(uint64_t * s) {
    return (float) ((double) (th_xorshift64star(s) >> 11) / 9007199254740992.0) - 0.5f;
}

// the random A [n_in, RANK] / B [RANK, n_out] (ggml order) of each adapted weight; token_embd's pair has the
// lookup layout A [RANK, n_vocab], B [RANK, n_embd]
struct pair {
    int64_t a_ne[2], b_ne[2];
    float * a;
    float * b;
};
static struct pair g_pairs[N_ADAPTED];

static void make_pairs(struct ggml_context * base) {
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < N_ADAPTED; i++) {
        const struct ggml_tensor * w = ggml_get_tensor(base, ADAPTED[i]);
        struct pair * p = &g_pairs[i];
        if (i == 0) {
            p->a_ne[0] = RANK; p->a_ne[1] = w->ne[1];
            p->b_ne[0] = RANK; p->b_ne[1] = w->ne[0];
        } else {
            p->a_ne[0] = w->ne[0]; p->a_ne[1] = RANK;
            p->b_ne[0] = RANK;     p->b_ne[1] = w->ne[1];
        }
        p->a = malloc((size_t) (p->a_ne[0] * p->a_ne[1]) * sizeof(float));
        p->b = malloc((size_t) (p->b_ne[0] * p->b_ne[1]) * sizeof(float));
        for (int64_t k = 0; k < p->a_ne[0] * p->a_ne[1]; k++) {
            p->a[k] = 0.5f * urand(&s);
        }
        for (int64_t k = 0; k < p->b_ne[0] * p->b_ne[1]; k++) {
            p->b[k] = 0.5f * urand(&s);
        }
    }
}

// options for writing (possibly broken) adapter files
struct adapter_opts {
    const char * arch;       // general.architecture
    const char * gtype;      // general.type
    const char * atype;      // adapter.type
    bool transpose_first;    // write the first pair with A/B shapes swapped
    bool drop_b_first;       // omit the first pair's lora_b
    bool bad_base_name;      // adapt a tensor the model does not have
    bool rank_mismatch;      // lora_b of the second pair with rank 3
    bool alora;              // adapter.alora.invocation_tokens = [5, 6, 7]
};

static bool write_adapter(const char * path, struct adapter_opts o) {
    struct ggml_init_params ip = { .mem_size = 8 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * g = gguf_init_empty();
    gguf_set_val_str(g, "general.architecture", o.arch ? o.arch : "llama");
    gguf_set_val_str(g, "general.type", o.gtype ? o.gtype : "adapter");
    gguf_set_val_str(g, "adapter.type", o.atype ? o.atype : "lora");
    gguf_set_val_f32(g, "adapter.lora.alpha", ALPHA);
    if (o.alora) {
        const uint32_t toks[3] = { 5, 6, 7 };
        gguf_set_arr_data(g, "adapter.alora.invocation_tokens", GGUF_TYPE_UINT32, toks, 3);
    }
    for (int i = 0; i < N_ADAPTED; i++) {
        const struct pair * p = &g_pairs[i];
        char name[128];
        const bool swap = o.transpose_first && i == 1;
        struct ggml_tensor * a = swap ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, p->a_ne[1], p->a_ne[0])
                                      : ggml_new_tensor_2d(ctx, GGML_TYPE_F32, p->a_ne[0], p->a_ne[1]);
        const int64_t b_rank = o.rank_mismatch && i == 2 ? RANK - 1 : p->b_ne[0];
        struct ggml_tensor * b = swap ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, p->b_ne[1], p->b_ne[0])
                                      : ggml_new_tensor_2d(ctx, GGML_TYPE_F32, b_rank, p->b_ne[1]);
        memcpy(a->data, p->a, ggml_nbytes(a));
        memcpy(b->data, p->b, ggml_nbytes(b));
        const char * base = o.bad_base_name && i == 3 ? "blk.9.ffn_down.weight" : ADAPTED[i];
        snprintf(name, sizeof(name), "%s.lora_a", base);
        ggml_set_name(a, name);
        snprintf(name, sizeof(name), "%s.lora_b", base);
        ggml_set_name(b, name);
        gguf_add_tensor(g, a);
        if (!(o.drop_b_first && i == 1)) {
            gguf_add_tensor(g, b);
        }
    }
    const bool ok = gguf_write_to_file(g, path, false);
    gguf_free(g);
    ggml_free(ctx);
    return ok;
}

// the base file with every adapted weight replaced by W + s·B·A (double precision)
static bool write_merged(const char * path, const char * base_path, float user_scale) {
    struct ggml_context * ctx = NULL;
    struct gguf_init_params gp = { .no_alloc = false, .ctx = &ctx };
    struct gguf_context * src = gguf_init_from_file(base_path, gp);
    if (!src) {
        return false;
    }
    const double s = (double) user_scale * ALPHA / RANK;
    for (int i = 0; i < N_ADAPTED; i++) {
        struct ggml_tensor * w = ggml_get_tensor(ctx, ADAPTED[i]);
        const struct pair * p = &g_pairs[i];
        float * wd = (float *) w->data;
        const int64_t n0 = w->ne[0], n1 = w->ne[1];
        for (int64_t j1 = 0; j1 < n1; j1++) {
            for (int64_t j0 = 0; j0 < n0; j0++) {
                double d = 0;
                for (int r = 0; r < RANK; r++) {
                    if (i == 0) {
                        // embedding row j1 (token), element j0: sum_r B(r, j0) A(r, j1)
                        d += (double) p->b[j0 * RANK + r] * (double) p->a[j1 * RANK + r];
                    } else {
                        // W(j0 = in, j1 = out): sum_r B(r, j1) A(j0, r)
                        d += (double) p->b[j1 * RANK + r] * (double) p->a[r * n0 + j0];
                    }
                }
                wd[j1 * n0 + j0] = (float) ((double) wd[j1 * n0 + j0] + s * d);
            }
        }
    }
    struct gguf_context * dst = gguf_init_empty();
    gguf_set_kv(dst, src);
    for (int64_t t = 0; t < gguf_get_n_tensors(src); t++) {
        gguf_add_tensor(dst, ggml_get_tensor(ctx, gguf_get_tensor_name(src, t)));
    }
    const bool ok = gguf_write_to_file(dst, path, false);
    gguf_free(dst);
    gguf_free(src);
    ggml_free(ctx);
    return ok;
}

static int g_n_nodes;
static bool count_cb(struct ggml_tensor * t, bool ask, void * ud) {
    (void) t;
    (void) ud;
    if (ask) {
        g_n_nodes++;
    }
    return false; // observe nothing; only count what the scheduler offers
}

static struct llama_context * new_ctx(struct llama_model * m, bool count_nodes) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 64;
    cp.n_batch = 64;
    cp.n_ubatch = 64;
    cp.n_threads = 2;
    cp.n_threads_batch = 2;
    cp.type_k = GGML_TYPE_F32;
    cp.type_v = GGML_TYPE_F32;
    if (count_nodes) {
        cp.cb_eval = count_cb;
    }
    return llama_init_from_model(m, cp);
}

// logits of all NTOK prompt tokens from an empty cache ([NTOK][n_vocab], caller frees); NULL on failure
static float * run(struct llama_context * ctx, int n_vocab) {
    llama_memory_clear(llama_get_memory(ctx), true);
    struct llama_batch b = llama_batch_init(NTOK, 0, 1);
    for (int i = 0; i < NTOK; i++) {
        b.token[i] = PROMPT[i];
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = 1;
    }
    b.n_tokens = NTOK;
    float * out = NULL;
    if (llama_decode(ctx, b) == 0) {
        out = malloc((size_t) NTOK * n_vocab * sizeof(float));
        for (int i = 0; i < NTOK; i++) {
            memcpy(out + (size_t) i * n_vocab, llama_get_logits_ith(ctx, i), (size_t) n_vocab * sizeof(float));
        }
    }
    llama_batch_free(b);
    return out;
}

static double maxabs(const float * a, int n) {
    double m = 0;
    for (int i = 0; i < n; i++) {
        m = fabs(a[i]) > m ? fabs(a[i]) : m;
    }
    return m;
}

static double maxdiff(const float * a, const float * b, int n) {
    if (!a || !b) {
        return INFINITY;
    }
    double m = 0;
    for (int i = 0; i < n; i++) {
        const double d = fabs((double) a[i] - (double) b[i]);
        m = d > m || isnan(d) ? d : m;
    }
    return m;
}

static bool same_bits(const float * a, const float * b, int n) {
    return a && b && memcmp(a, b, (size_t) n * sizeof(float)) == 0;
}

static float * merged_logits(const char * base_path, float scale, int n_vocab) {
    const char * path = tmp_path(scale == 1.0f ? "merged-1.gguf" : "merged-h.gguf");
    if (!write_merged(path, base_path, scale)) {
        return NULL;
    }
    struct llama_model * m = llama_model_load_from_file(path, llama_model_default_params());
    struct llama_context * ctx = m ? new_ctx(m, false) : NULL;
    float * out = ctx ? run(ctx, n_vocab) : NULL;
    llama_free(ctx);
    llama_model_free(m);
    unlink(path);
    return out;
}

static void test_lora(const char * base_path, struct llama_model * model, int n_vocab) {
    const int n = NTOK * n_vocab;
    const char * apath = tmp_path("adapter.gguf");
    TH_CHECK(write_adapter(apath, (struct adapter_opts) { .alora = true }), "writing the adapter");
    struct llama_adapter_lora * ad = llama_adapter_lora_init(model, apath);
    TH_CHECK(ad != NULL, "loading a valid adapter");
    if (!ad) {
        return;
    }
    char buf[64];
    TH_CHECK(llama_adapter_meta_val_str(ad, "adapter.type", buf, sizeof(buf)) == 4 && strcmp(buf, "lora") == 0, "adapter.type = %s", buf);
    TH_CHECK(llama_adapter_meta_val_str(ad, "adapter.lora.alpha", buf, sizeof(buf)) > 0 && atof(buf) == 8.0, "alpha = %s", buf);
    TH_CHECK(llama_adapter_meta_val_str(ad, "no.such.key", buf, sizeof(buf)) == -1 && buf[0] == '\0', "missing key");
    TH_CHECK(llama_adapter_meta_count(ad) == 4, "4 scalar keys (the alora array is not one), got %d", llama_adapter_meta_count(ad));
    TH_CHECK(llama_adapter_meta_key_by_index(ad, 0, buf, sizeof(buf)) > 0 && strcmp(buf, "general.architecture") == 0, "key 0 = %s", buf);
    TH_CHECK(llama_adapter_meta_val_str_by_index(ad, 99, buf, sizeof(buf)) == -1, "index out of range");
    const llama_token * inv = llama_adapter_get_alora_invocation_tokens(ad);
    TH_CHECK(llama_adapter_get_alora_n_invocation_tokens(ad) == 3 && inv && inv[0] == 5 && inv[2] == 7, "alora tokens");

    struct llama_context * ctx = new_ctx(model, true);
    g_n_nodes = 0;
    float * base = run(ctx, n_vocab);
    const int nodes_base = g_n_nodes;
    float * merged1 = merged_logits(base_path, 1.0f, n_vocab);
    float * mergedh = merged_logits(base_path, 0.5f, n_vocab);
    TH_CHECK(base && merged1 && mergedh, "base and merged runs");
    const double tol = 1e-4 * (1.0 + maxabs(base, n));
    TH_CHECK(maxdiff(base, merged1, n) > 0.1, "the adapter changes the logits (diff %g)", maxdiff(base, merged1, n));

    float scale1 = 1.0f, scaleh = 0.5f;
    TH_CHECK(llama_set_adapters_lora(ctx, &ad, 1, &scale1) == 0, "set adapter, scale 1");
    g_n_nodes = 0;
    float * l1 = run(ctx, n_vocab);
    TH_CHECK(g_n_nodes > nodes_base, "the adapter adds graph nodes (%d vs %d)", g_n_nodes, nodes_base);
    TH_CHECK(maxdiff(l1, merged1, n) < tol, "scale 1: adapter vs merged model diff %g (tol %g)", maxdiff(l1, merged1, n), tol);
    TH_CHECK(llama_set_adapters_lora(ctx, &ad, 1, &scaleh) == 0, "set adapter, scale 0.5");
    float * lh = run(ctx, n_vocab);
    TH_CHECK(maxdiff(lh, mergedh, n) < tol, "scale 0.5: adapter vs merged model diff %g (tol %g)", maxdiff(lh, mergedh, n), tol);
    TH_CHECK(maxdiff(lh, l1, n) > 0.05, "the scale matters");

    TH_CHECK(llama_set_adapters_lora(ctx, NULL, 0, NULL) == 0, "clear the adapters");
    g_n_nodes = 0;
    float * cleared = run(ctx, n_vocab);
    TH_CHECK(same_bits(cleared, base, n), "cleared: base logits bit for bit (diff %g)", maxdiff(cleared, base, n));
    TH_CHECK(g_n_nodes == nodes_base, "cleared: the graph has its %d nodes again (got %d)", nodes_base, g_n_nodes);

    // the same adapter twice at half scale each = once at scale 1
    struct llama_adapter_lora * two[2] = { ad, ad };
    float halves[2] = { 0.5f, 0.5f };
    TH_CHECK(llama_set_adapters_lora(ctx, two, 2, halves) == 0, "two adapters");
    float * l2 = run(ctx, n_vocab);
    TH_CHECK(maxdiff(l2, merged1, n) < tol, "two halves vs merged scale 1: diff %g", maxdiff(l2, merged1, n));
    TH_CHECK(llama_set_adapters_lora(ctx, two, 2, NULL) == -1, "adapters without scales are refused");

    // freeing the adapter after taking it off the context; the model frees the ones left
    TH_CHECK(llama_set_adapters_lora(ctx, NULL, 0, NULL) == 0, "clear again");
    llama_adapter_lora_free(ad);
    TH_CHECK(llama_adapter_lora_init(model, apath) != NULL, "a second adapter, left for llama_model_free");
    free(base); free(merged1); free(mergedh); free(l1); free(lh); free(cleared); free(l2);
    llama_free(ctx);
    unlink(apath);
}

static void test_bad_adapters(struct llama_model * model) {
    struct { const char * what; struct adapter_opts o; } cases[] = {
        { "A and B transposed",          { .transpose_first = true } },
        { "general.type is not adapter", { .gtype = "model" } },
        { "adapter.type is not lora",    { .atype = "ia3" } },
        { "another architecture",        { .arch = "qwen2" } },
        { "lora_b missing",              { .drop_b_first = true } },
        { "unknown base tensor",         { .bad_base_name = true } },
        { "rank mismatch",               { .rank_mismatch = true } },
    };
    const char * path = tmp_path("bad.gguf");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        TH_CHECK(write_adapter(path, cases[i].o), "writing '%s'", cases[i].what);
        g_n_errors = 0;
        TH_CHECK(llama_adapter_lora_init(model, path) == NULL, "%s: NULL", cases[i].what);
        TH_CHECK(g_n_errors > 0, "%s: an error is logged", cases[i].what);
    }
    // truncated: the tensor data ends early
    TH_CHECK(write_adapter(path, (struct adapter_opts) { 0 }), "writing the adapter to truncate");
    FILE * f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fclose(f);
    TH_CHECK(truncate(path, size - 100) == 0, "truncate");
    g_n_errors = 0;
    TH_CHECK(llama_adapter_lora_init(model, path) == NULL && g_n_errors > 0, "truncated file: NULL + message");
    TH_CHECK(truncate(path, 40) == 0, "truncate the header");
    g_n_errors = 0;
    TH_CHECK(llama_adapter_lora_init(model, path) == NULL && g_n_errors > 0, "truncated header: NULL + message");
    g_n_errors = 0;
    TH_CHECK(llama_adapter_lora_init(model, tmp_path("does-not-exist.gguf")) == NULL && g_n_errors > 0, "missing file");
    TH_CHECK(llama_adapter_lora_init(NULL, path) == NULL, "NULL model");
    unlink(path);
}

static void test_cvec(const char * base_path, struct llama_model * model, int n_vocab) {
    const int n = NTOK * n_vocab;
    const int n_embd = llama_model_n_embd(model);
    const int n_layer = llama_model_n_layer(model);
    const size_t len = (size_t) n_embd * (size_t) (n_layer - 1); // rows for layers 1..n_layer-1
    float * data = calloc(len, sizeof(float));
    struct llama_context * ctx = new_ctx(model, false);
    float * base = run(ctx, n_vocab);

    TH_CHECK(llama_set_adapter_cvec(ctx, data, len, n_embd, 1, n_layer) == 0, "zero control vector");
    float * z = run(ctx, n_vocab);
    TH_CHECK(same_bits(z, base, n), "zero control vector: base logits bit for bit");
    TH_CHECK(llama_set_adapter_cvec(ctx, data, len, n_embd + 1, 1, n_layer) == -1, "wrong n_embd is refused");

    // a direction on layer 2 only (data row 1)
    uint64_t s = 12345;
    for (int e = 0; e < n_embd; e++) {
        data[(size_t) n_embd * 1 + e] = urand(&s);
    }
    llama_set_adapter_cvec(ctx, data, len, n_embd, 1, n_layer - 1);
    float * all = run(ctx, n_vocab);
    TH_CHECK(maxdiff(all, base, n) > 1e-3, "layer-2 direction changes the logits (%g)", maxdiff(all, base, n));
    llama_set_adapter_cvec(ctx, data, len, n_embd, 2, 2);
    float * only2 = run(ctx, n_vocab);
    TH_CHECK(same_bits(only2, all, n), "range [2, 2] = range [1, n_layer-1] when only layer 2 is non-zero");
    llama_set_adapter_cvec(ctx, data, len, n_embd, 3, n_layer - 1);
    float * after = run(ctx, n_vocab);
    TH_CHECK(same_bits(after, base, n), "range [3, ..] leaves out layer 2");
    llama_set_adapter_cvec(ctx, data, len, n_embd, 0, 1);
    float * before = run(ctx, n_vocab);
    TH_CHECK(same_bits(before, base, n), "range [0, 1] leaves out layer 2");
    TH_CHECK(llama_set_adapter_cvec(ctx, NULL, 0, n_embd, 0, 0) == 0, "clear");
    float * cleared = run(ctx, n_vocab);
    TH_CHECK(same_bits(cleared, base, n), "cleared: base logits");

    // a vector of magnitude 1e5 on the last layer swamps the residual stream: every row's logits become
    // output · (output_norm ⊙ v / rms(v)), computed here from the file
    memset(data, 0, len * sizeof(float));
    float * v = data + (size_t) n_embd * (size_t) (n_layer - 2);
    double ss = 0;
    for (int e = 0; e < n_embd; e++) {
        v[e] = 1e5f * (urand(&s) + (e % 2 ? 0.75f : -0.75f));
        ss += (double) v[e] * v[e];
    }
    const double rms = sqrt(ss / n_embd + 1e-5);
    struct ggml_context * mctx = NULL;
    struct gguf_init_params gp = { .no_alloc = false, .ctx = &mctx };
    struct gguf_context * g = gguf_init_from_file(base_path, gp);
    const float * nw = (const float *) ggml_get_tensor(mctx, "output_norm.weight")->data;
    const float * wo = (const float *) ggml_get_tensor(mctx, "output.weight")->data; // [n_embd, n_vocab]
    float * expect = malloc((size_t) n_vocab * sizeof(float));
    for (int o = 0; o < n_vocab; o++) {
        double acc = 0;
        for (int e = 0; e < n_embd; e++) {
            acc += (double) wo[(size_t) o * n_embd + e] * nw[e] * (v[e] / rms);
        }
        expect[o] = (float) acc;
    }
    llama_set_adapter_cvec(ctx, data, len, n_embd, n_layer - 1, n_layer - 1);
    float * big = run(ctx, n_vocab);
    const double tol = 1e-3 * (1.0 + maxabs(expect, n_vocab));
    for (int t = 0; big && t < NTOK; t++) {
        TH_CHECK(maxdiff(big + (size_t) t * n_vocab, expect, n_vocab) < tol, "row %d vs output·norm(v): diff %g (tol %g)",
                t, maxdiff(big + (size_t) t * n_vocab, expect, n_vocab), tol);
    }
    llama_set_adapter_cvec(ctx, data, len, n_embd, 1, n_layer - 2);
    float * not_last = run(ctx, n_vocab);
    TH_CHECK(same_bits(not_last, base, n), "the last-layer row is not applied for range [1, n_layer-2]");

    gguf_free(g);
    ggml_free(mctx);
    free(expect); free(big); free(not_last);
    free(data); free(base); free(z); free(all); free(only2); free(after); free(before); free(cleared);
    llama_free(ctx);
}

int main(void) {
    const char * base_path = th_data_path("models/stories260K-f32.gguf");
    if (!th_require_file(base_path)) {
        return th_finish();
    }
    llama_log_set(log_cb, NULL);
    llama_backend_init();
    snprintf(g_dir, sizeof(g_dir), "/tmp/test-lora-XXXXXX");
    if (!mkdtemp(g_dir)) {
        TH_CHECK(false, "mkdtemp");
        return th_finish();
    }
    struct ggml_context * bctx = NULL;
    struct gguf_init_params gp = { .no_alloc = false, .ctx = &bctx };
    struct gguf_context * bg = gguf_init_from_file(base_path, gp);
    TH_CHECK(bg != NULL, "reading the base model");
    make_pairs(bctx);
    gguf_free(bg);
    ggml_free(bctx);

    struct llama_model * model = llama_model_load_from_file(base_path, llama_model_default_params());
    TH_CHECK(model != NULL, "loading the base model");
    if (model) {
        const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
        test_lora(base_path, model, n_vocab);
        test_bad_adapters(model);
        test_cvec(base_path, model, n_vocab);
        llama_model_free(model);
    }
    for (int i = 0; i < N_ADAPTED; i++) {
        free(g_pairs[i].a);
        free(g_pairs[i].b);
    }
    rmdir(g_dir);
    llama_backend_free();
    return th_finish();
}
