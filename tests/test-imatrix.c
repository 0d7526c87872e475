// llama-imatrix end to end on stories260K (and the synthetic qwen3moe for the expert path). The output is read
// back with gguf.h and checked against values computed here independently of the tool:
//   - keys (general.type, imatrix.datasets, chunk_count, chunk_size), every attn/ffn weight present with its
//     shape, tensors in name order, counts = tokens processed;
//   - blk.0.attn_q/k/v: in_sum2 equals the sum over the processed tokens of the squares of
//     rms_norm(token_embd[tok]) * attn_norm, computed in double from the model file's tensors;
//   - output.weight (--process-output): in_sum2 equals the squares of the "result_norm" node summed over a
//     separate in-process decode of the same chunks with this test's own eval callback;
//   - --in-file: two copies combine to twice the sums and counts (and -f + --in-file adds a run);
//   - --output-frequency / --save-frequency intermediate files; --show-statistics prints its tables;
//   - the running perplexity printed per chunk against llama.cpp's llama-perplexity figures on the KJV model
//     (reference/kjv/index.json, same chunking);
//   - experts: per-expert sums of the shape [n_embd, n_expert], counts summing to tokens x experts used;
//   - bad input (missing model / text, text shorter than two chunks, unwritable output, a broken --in-file,
//     nothing to do) ends with status 1 and a message, never a signal, and leaves no file behind.
//
// usage: test-imatrix path/to/llama-imatrix path/to/temp-dir
#include "harness.h"
#include "harness-run.h"

#include "ggml.h"
#include "gguf.h"
#include "llama.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <unistd.h>

static const char * g_bin;
static const char * g_dir;

enum { CHUNK = 64, N_CHUNKS = 4, N_TOKENS = CHUNK * N_CHUNKS };

// ---- running the tool ----------------------------------------------------------------------------------

struct run_result {
    int    status; // exit code, or -signal
    char * out;    // stdout + stderr
};

static struct run_result run_tool(const char * const * args) {
    char * argv[48];
    int a = 0;
    argv[a++] = (char *) g_bin;
    for (int i = 0; args[i] && a < 47; i++) {
        argv[a++] = (char *) args[i];
    }
    argv[a] = NULL;
    struct th_run_result t = th_run(argv, g_dir);
    const size_t no = strlen(t.out), ne = strlen(t.err);
    struct run_result r = { t.status, malloc(no + ne + 1) };
    if (r.out) {
        memcpy(r.out, t.out, no);
        memcpy(r.out + no, t.err, ne + 1);
    }
    th_run_free(&t);
    return r;
}

static const char * tmp_path(const char * name) {
    static char bufs[8][4096];
    static int slot = 0;
    char * out = bufs[slot];
    slot = (slot + 1) % 8;
    snprintf(out, sizeof(bufs[0]), "%s/%s", g_dir, name);
    return out;
}

static bool file_exists(const char * path) {
    struct stat st;
    return stat(path, &st) == 0;
}

// entries of the temp dir other than . and ..
static int count_files(void) {
    DIR * d = opendir(g_dir);
    int n = 0;
    if (!d) {
        return -1;
    }
    for (struct dirent * e; (e = readdir(d)) != NULL;) {
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    }
    closedir(d);
    return n;
}

static void clean_dir(void) {
    th_clear_dir(g_dir);
}

// ---- reading an imatrix file ---------------------------------------------------------------------------

struct imat {
    struct gguf_context * gg;
    struct ggml_context * ctx;
};

static bool imat_open(struct imat * m, const char * path) {
    m->ctx = NULL;
    struct gguf_init_params gp = { false, &m->ctx };
    m->gg = gguf_init_from_file(path, gp);
    return m->gg != NULL;
}

static void imat_close(struct imat * m) {
    if (m->gg) {
        gguf_free(m->gg);
    }
    if (m->ctx) {
        ggml_free(m->ctx);
    }
    m->gg = NULL;
    m->ctx = NULL;
}

static const struct ggml_tensor * imat_get(const struct imat * m, const char * weight, const char * suffix) {
    char name[256];
    snprintf(name, sizeof(name), "%s.%s", weight, suffix);
    return ggml_get_tensor(m->ctx, name);
}

static int64_t imat_u32(const struct imat * m, const char * key) {
    const int64_t k = gguf_find_key(m->gg, key);
    if (k < 0 || gguf_get_kv_type(m->gg, k) != GGUF_TYPE_UINT32) {
        return -1;
    }
    return gguf_get_val_u32(m->gg, k);
}

// ---- the model's own numbers ---------------------------------------------------------------------------

struct model_file {
    struct gguf_context * gg;
    struct ggml_context * ctx;
};

static int64_t model_u32(const struct model_file * mf, const char * key) {
    const int64_t k = gguf_find_key(mf->gg, key);
    return k < 0 ? -1 : (int64_t) gguf_get_val_u32(mf->gg, k);
}

// the tokens of the text as -f reads it (one final newline dropped), with BOS, through libllama's tokenizer
static llama_token * tokenize_text(const struct llama_vocab * vocab, const char * path, int32_t * n_out) {
    size_t len = 0;
    char * text = th_read_file(path, &len);
    if (!text) {
        return NULL;
    }
    if (len > 0 && text[len - 1] == '\n') {
        text[--len] = '\0';
    }
    int32_t n = -llama_tokenize(vocab, text, (int32_t) len, NULL, 0, true, false);
    llama_token * toks = malloc((size_t) (n > 0 ? n : 1) * sizeof(llama_token));
    if (n <= 0 || !toks || llama_tokenize(vocab, text, (int32_t) len, toks, n, true, false) != n) {
        free(text);
        free(toks);
        return NULL;
    }
    free(text);
    *n_out = n;
    return toks;
}

// sums of squares of the "result_norm" node captured by this test's own eval callback
struct capture {
    int64_t  n_embd;
    double * sums;
    int64_t  rows;
};

static bool capture_cb(struct ggml_tensor * t, bool ask, void * user_data) {
    struct capture * cap = user_data;
    if (ask) {
        return strcmp(t->name, "result_norm") == 0;
    }
    if (t->type != GGML_TYPE_F32 || t->ne[0] != cap->n_embd) {
        return true;
    }
    for (int64_t r = 0; r < t->ne[1]; r++) {
        const float * x = (const float *) ((const char *) t->data + r * t->nb[1]);
        for (int64_t j = 0; j < t->ne[0]; j++) {
            cap->sums[j] += (double) x[j] * x[j];
        }
    }
    cap->rows += t->ne[1];
    return true;
}

static double max_rel_err(const float * got, const double * want, int64_t n) {
    double worst = 0.0;
    for (int64_t j = 0; j < n; j++) {
        const double d = fabs((double) got[j] - want[j]) / (fabs(want[j]) > 1e-30 ? fabs(want[j]) : 1e-30);
        worst = d > worst ? d : worst;
    }
    return worst;
}

// ---- the checks ----------------------------------------------------------------------------------------

static const char * const k_weights[] = { "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down" };

// keys, presence, shapes, counts and name order of a stories imatrix made from n_chunks chunks of CHUNK
// tokens, the sums scaled by `mult` runs
static void check_layout(const struct imat * m, const struct model_file * mf, int n_chunks, int n_datasets,
                         const char * dataset, bool with_output) {
    const int64_t kt = gguf_find_key(m->gg, "general.type");
    TH_CHECK(kt >= 0 && gguf_get_kv_type(m->gg, kt) == GGUF_TYPE_STRING && strcmp(gguf_get_val_str(m->gg, kt), "imatrix") == 0,
             "general.type");
    const int64_t kd = gguf_find_key(m->gg, "imatrix.datasets");
    TH_CHECK(kd >= 0 && gguf_get_kv_type(m->gg, kd) == GGUF_TYPE_ARRAY && gguf_get_arr_type(m->gg, kd) == GGUF_TYPE_STRING &&
             (int) gguf_get_arr_n(m->gg, kd) == n_datasets, "imatrix.datasets: %d entries expected", n_datasets);
    if (kd >= 0 && (int) gguf_get_arr_n(m->gg, kd) == n_datasets) {
        for (int i = 0; i < n_datasets; i++) {
            TH_CHECK(strcmp(gguf_get_arr_str(m->gg, kd, (size_t) i), dataset) == 0, "dataset %d is %s", i,
                     gguf_get_arr_str(m->gg, kd, (size_t) i));
        }
    }
    TH_CHECK(imat_u32(m, "imatrix.chunk_count") == n_chunks, "chunk_count %lld, expected %d",
             (long long) imat_u32(m, "imatrix.chunk_count"), n_chunks);
    TH_CHECK(imat_u32(m, "imatrix.chunk_size") == CHUNK, "chunk_size %lld", (long long) imat_u32(m, "imatrix.chunk_size"));

    const int64_t n_layer = model_u32(mf, "llama.block_count");
    const int64_t expect_n = 2 * (n_layer * 7 + (with_output ? 1 : 0));
    TH_CHECK(gguf_get_n_tensors(m->gg) == expect_n, "%lld tensors, expected %lld", (long long) gguf_get_n_tensors(m->gg),
             (long long) expect_n);
    // weights in name order, each as <name>.in_sum2 then <name>.counts
    for (int64_t i = 0; i + 1 < gguf_get_n_tensors(m->gg); i += 2) {
        const char * s2 = gguf_get_tensor_name(m->gg, i), * cn = gguf_get_tensor_name(m->gg, i + 1);
        const size_t n2 = strlen(s2), nc = strlen(cn);
        const bool pair = n2 > 8 && nc > 7 && strcmp(s2 + n2 - 8, ".in_sum2") == 0 && strcmp(cn + nc - 7, ".counts") == 0 &&
                          n2 - 8 == nc - 7 && strncmp(s2, cn, nc - 7) == 0;
        TH_EXPECT(pair, "tensors %lld, %lld: %s, %s", (long long) i, (long long) i + 1, s2, cn);
        if (i >= 2) {
            const char * prev = gguf_get_tensor_name(m->gg, i - 1);
            const size_t np = strlen(prev) > 7 ? strlen(prev) - 7 : 0;
            char a[256], b[256];
            snprintf(a, sizeof(a), "%.*s", (int) np, prev);
            snprintf(b, sizeof(b), "%.*s", (int) (n2 > 8 ? n2 - 8 : 0), s2);
            TH_EXPECT(strcmp(a, b) < 0, "weight order: %s before %s", a, b);
        }
    }
    int n_ok = 0, n_all = 0;
    for (int64_t il = 0; il <= n_layer; il++) {
        for (int w = 0; w < (il < n_layer ? 7 : 1); w++) {
            char name[128];
            if (il < n_layer) {
                snprintf(name, sizeof(name), "blk.%lld.%s.weight", (long long) il, k_weights[w]);
            } else if (with_output) {
                snprintf(name, sizeof(name), "output.weight");
            } else {
                break;
            }
            n_all++;
            const struct ggml_tensor * wt = ggml_get_tensor(mf->ctx, name);
            const struct ggml_tensor * s2 = imat_get(m, name, "in_sum2");
            const struct ggml_tensor * cn = imat_get(m, name, "counts");
            bool ok = wt && s2 && cn && s2->type == GGML_TYPE_F32 && cn->type == GGML_TYPE_F32 && s2->ne[0] == wt->ne[0] &&
                      s2->ne[1] == 1 && cn->ne[0] == 1 && cn->ne[1] == 1 &&
                      ((const float *) cn->data)[0] == (float) (n_chunks * CHUNK);
            if (ok) {
                const float * d = s2->data;
                for (int64_t j = 0; j < s2->ne[0]; j++) {
                    ok = ok && isfinite(d[j]) && d[j] > 0.0f;
                }
            }
            TH_EXPECT(ok, "%s: missing, wrong shape, count or values", name);
            n_ok += ok;
        }
    }
    TH_CHECK(n_ok == n_all, "%d of %d weights as expected", n_ok, n_all);
}

// blk.0.attn_q/k/v from the model file alone; output.weight from a separate decode
static void check_values(const struct imat * m, const struct model_file * mf, const char * model_path,
                         const char * text_path, double mult) {
    const struct ggml_tensor * embd = ggml_get_tensor(mf->ctx, "token_embd.weight");
    const struct ggml_tensor * norm = ggml_get_tensor(mf->ctx, "blk.0.attn_norm.weight");
    const int64_t keps = gguf_find_key(mf->gg, "llama.attention.layer_norm_rms_epsilon");
    TH_CHECK(embd && norm && embd->type == GGML_TYPE_F32 && norm->type == GGML_TYPE_F32 && keps >= 0, "model tensors");
    if (!embd || !norm || embd->type != GGML_TYPE_F32 || norm->type != GGML_TYPE_F32 || keps < 0) {
        return;
    }
    const double eps = gguf_get_val_f32(mf->gg, keps);
    const int64_t n_embd = embd->ne[0];

    struct llama_model_params mp = llama_model_default_params();
    struct llama_model * model = llama_model_load_from_file(model_path, mp);
    TH_CHECK(model != NULL, "load %s", model_path);
    if (!model) {
        return;
    }
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    int32_t n_tok = 0;
    llama_token * toks = tokenize_text(vocab, text_path, &n_tok);
    TH_CHECK(toks && n_tok >= N_TOKENS, "tokenize %s", text_path);
    double * want = calloc((size_t) n_embd, sizeof(double));
    struct capture cap = { n_embd, calloc((size_t) n_embd, sizeof(double)), 0 };
    if (!toks || n_tok < N_TOKENS || !want || !cap.sums) {
        free(toks);
        free(want);
        free(cap.sums);
        llama_model_free(model);
        return;
    }

    // layer 0's attention input: rms_norm(embedding) * attn_norm, each chunk starting with BOS
    for (int c = 0; c < N_CHUNKS; c++) {
        for (int k = 0; k < CHUNK; k++) {
            const llama_token t = k == 0 ? llama_vocab_bos(vocab) : toks[c * CHUNK + k];
            const float * x = (const float *) ((const char *) embd->data + (size_t) t * embd->nb[1]);
            double ss = 0.0;
            for (int64_t j = 0; j < n_embd; j++) {
                ss += (double) x[j] * x[j];
            }
            const double scale = 1.0 / sqrt(ss / (double) n_embd + eps);
            for (int64_t j = 0; j < n_embd; j++) {
                const double h = x[j] * scale * ((const float *) norm->data)[j];
                want[j] += h * h;
            }
        }
    }
    for (int64_t j = 0; j < n_embd; j++) {
        want[j] *= mult;
    }
    const char * const qkv[] = { "blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight" };
    for (int i = 0; i < 3; i++) {
        const struct ggml_tensor * s2 = imat_get(m, qkv[i], "in_sum2");
        const double err = s2 && s2->ne[0] == n_embd ? max_rel_err(s2->data, want, n_embd) : 1.0;
        TH_CHECK(err < 1e-5, "%s: in_sum2 vs independent sum of squares: max rel err %g", qkv[i], err);
    }

    // the output projection's input, seen through this test's own callback in a separate decode
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = CHUNK;
    cp.n_batch = CHUNK;
    cp.n_ubatch = CHUNK;
    cp.n_threads = cp.n_threads_batch = 2;
    cp.cb_eval = capture_cb;
    cp.cb_eval_user_data = &cap;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    TH_CHECK(ctx != NULL, "context");
    if (ctx) {
        struct llama_batch b = llama_batch_init(CHUNK, 0, 1);
        bool ok = true;
        for (int c = 0; c < N_CHUNKS && ok; c++) {
            llama_memory_clear(llama_get_memory(ctx), true);
            b.n_tokens = CHUNK;
            for (int k = 0; k < CHUNK; k++) {
                b.token[k] = k == 0 ? llama_vocab_bos(vocab) : toks[c * CHUNK + k];
                b.pos[k] = k;
                b.n_seq_id[k] = 1;
                b.seq_id[k][0] = 0;
                b.logits[k] = 1;
            }
            ok = llama_decode(ctx, b) == 0;
        }
        TH_CHECK(ok && cap.rows == N_TOKENS, "reference decode: %lld rows of result_norm", (long long) cap.rows);
        for (int64_t j = 0; j < n_embd; j++) {
            cap.sums[j] *= mult;
        }
        const struct ggml_tensor * s2 = imat_get(m, "output.weight", "in_sum2");
        const double err = s2 && s2->ne[0] == n_embd ? max_rel_err(s2->data, cap.sums, n_embd) : 1.0;
        TH_CHECK(err < 1e-5, "output.weight: in_sum2 vs result_norm captured independently: max rel err %g", err);
        llama_batch_free(b);
        llama_free(ctx);
    }
    free(toks);
    free(want);
    free(cap.sums);
    llama_model_free(model);
}

// each sum and count of b is f times a's
static void check_scaled(const struct imat * a, const struct imat * b, double f) {
    TH_CHECK(gguf_get_n_tensors(a->gg) == gguf_get_n_tensors(b->gg), "same tensors");
    int bad = 0;
    for (int64_t i = 0; i < gguf_get_n_tensors(a->gg); i++) {
        const char * name = gguf_get_tensor_name(a->gg, i);
        const struct ggml_tensor * ta = ggml_get_tensor(a->ctx, name);
        const struct ggml_tensor * tb = ggml_get_tensor(b->ctx, name);
        if (!ta || !tb || ggml_nelements(ta) != ggml_nelements(tb)) {
            bad++;
            continue;
        }
        for (int64_t j = 0; j < ggml_nelements(ta); j++) {
            const double x = ((const float *) ta->data)[j] * f, y = ((const float *) tb->data)[j];
            if (fabs(x - y) > 1e-6 * fabs(x)) {
                bad++;
                break;
            }
        }
    }
    TH_CHECK(bad == 0, "%d tensors are not %g times the single run", bad, f);
}

// a refused run: status 1, the message, no output and no temp file left
static void check_refused(const char * what, const char * const * args, const char * message) {
    clean_dir();
    struct run_result r = run_tool(args);
    TH_CHECK(r.status == 1, "%s: status %d, expected 1\n%s", what, r.status, r.out);
    TH_CHECK(strstr(r.out, message) != NULL, "%s: message '%s' missing in:\n%s", what, message, r.out);
    TH_CHECK(count_files() == 0, "%s: %d files left behind", what, count_files());
    free(r.out);
}

static void test_stories(const char * model_path, const char * text) {
    struct model_file mf = { NULL, NULL };
    struct gguf_init_params gp = { false, &mf.ctx };
    mf.gg = gguf_init_from_file(model_path, gp);
    TH_CHECK(mf.gg != NULL, "read %s", model_path);
    if (!mf.gg) {
        return;
    }
    clean_dir();
    const char * common_args[] = { "-m", model_path, "-f", text, "-c", "64", "-b", "64", "--chunks", "4", "-t", "2", NULL };
#define RUN_ARGS(...) { common_args[0], common_args[1], common_args[2], common_args[3], common_args[4], common_args[5], \
                        common_args[6], common_args[7], common_args[8], common_args[9], common_args[10], common_args[11], \
                        __VA_ARGS__, NULL }

    // one run with the output weight, intermediate outputs every 2 chunks
    const char * a1[] = RUN_ARGS("--process-output", "-o", "a.gguf", "--output-frequency", "2", "--save-frequency", "2");
    struct run_result r = run_tool(a1);
    TH_CHECK(r.status == 0, "run A: status %d\n%s", r.status, r.out);
    TH_CHECK(strstr(r.out, "[4]") && strstr(r.out, "Final estimate: PPL = "), "run A: perplexity printed");
    free(r.out);
    TH_CHECK(file_exists(tmp_path("a.gguf.at_2")) && file_exists(tmp_path("a.gguf.at_4")), "--save-frequency copies");
    TH_CHECK(!file_exists(tmp_path("a.gguf.tmp")), "no temp file left");

    struct imat a = { NULL, NULL }, at2 = { NULL, NULL };
    TH_CHECK(imat_open(&a, tmp_path("a.gguf")), "read a.gguf");
    TH_CHECK(imat_open(&at2, tmp_path("a.gguf.at_2")), "read a.gguf.at_2");
    if (a.gg) {
        check_layout(&a, &mf, N_CHUNKS, 1, text, true);
        check_values(&a, &mf, model_path, text, 1.0);
    }
    if (at2.gg) {
        check_layout(&at2, &mf, 2, 1, text, true);
    }
    imat_close(&at2);

    // --no-ppl without --process-output: no output.weight, no perplexity
    const char * b1[] = RUN_ARGS("--no-ppl", "-o", "b.gguf");
    r = run_tool(b1);
    TH_CHECK(r.status == 0 && strstr(r.out, "Final estimate") == NULL, "run B (--no-ppl): status %d\n%s", r.status, r.out);
    free(r.out);
    struct imat b = { NULL, NULL };
    if (imat_open(&b, tmp_path("b.gguf"))) {
        check_layout(&b, &mf, N_CHUNKS, 1, text, false);
    } else {
        TH_CHECK(false, "read b.gguf");
    }
    imat_close(&b);

    // combining: two copies of A (no text), then A plus a new run over the same text
    const char * c1[] = { "--in-file", "a.gguf", "--in-file", "a.gguf", "-c", "64", "-o", "c.gguf", NULL };
    r = run_tool(c1);
    TH_CHECK(r.status == 0, "combine: status %d\n%s", r.status, r.out);
    free(r.out);
    struct imat c = { NULL, NULL };
    if (imat_open(&c, tmp_path("c.gguf")) && a.gg) {
        check_layout(&c, &mf, 2 * N_CHUNKS, 2, text, true);
        check_scaled(&a, &c, 2.0);
        check_values(&c, &mf, model_path, text, 2.0);
    } else {
        TH_CHECK(false, "read c.gguf");
    }
    imat_close(&c);
    const char * d1[] = RUN_ARGS("--process-output", "--no-ppl", "--in-file", "a.gguf", "-o", "d.gguf");
    r = run_tool(d1);
    TH_CHECK(r.status == 0, "run with --in-file: status %d\n%s", r.status, r.out);
    free(r.out);
    struct imat d = { NULL, NULL };
    if (imat_open(&d, tmp_path("d.gguf")) && a.gg) {
        check_layout(&d, &mf, 2 * N_CHUNKS, 2, text, true);
        check_scaled(&a, &d, 2.0);
    } else {
        TH_CHECK(false, "read d.gguf");
    }
    imat_close(&d);

    // --chunk N skips N chunks: chunk 1 alone merged (--in-file) with chunk 2 alone equals chunks 1-2 together
    const char * e1[] = { "-m", model_path, "-f", text, "-c", "64", "-b", "64", "--chunks", "1", "--no-ppl", "-o", "e1.gguf", NULL };
    const char * e2[] = { "-m", model_path, "-f", text, "-c", "64", "-b", "64", "--chunk", "1", "--chunks", "1", "--no-ppl",
                          "--in-file", "e1.gguf", "-o", "e2.gguf", NULL };
    const char * e3[] = { "-m", model_path, "-f", text, "-c", "64", "-b", "64", "--chunks", "2", "--no-ppl", "-o", "e3.gguf", NULL };
    struct run_result r1 = run_tool(e1), r2 = run_tool(e2), r3 = run_tool(e3);
    TH_CHECK(r1.status == 0 && r2.status == 0 && r3.status == 0, "--chunk runs: %d %d %d\n%s\n%s", r1.status, r2.status,
             r3.status, r2.out, r3.out);
    free(r1.out);
    free(r2.out);
    free(r3.out);
    struct imat ie2 = { NULL, NULL }, ie3 = { NULL, NULL };
    if (imat_open(&ie2, tmp_path("e2.gguf")) && imat_open(&ie3, tmp_path("e3.gguf"))) {
        TH_CHECK(imat_u32(&ie2, "imatrix.chunk_count") == 2, "--chunk: chunk_count");
        check_scaled(&ie3, &ie2, 1.0);
    } else {
        TH_CHECK(false, "read e2.gguf / e3.gguf");
    }
    imat_close(&ie2);
    imat_close(&ie3);

    // statistics of A
    const char * s1[] = { "--in-file", "a.gguf", "--show-statistics", NULL };
    r = run_tool(s1);
    TH_CHECK(r.status == 0 && strstr(r.out, "Computing tensor statistics") && strstr(r.out, "attn_q") &&
             strstr(r.out, "Computing layer statistics (5 layers)"), "--show-statistics: status %d\n%s", r.status, r.out);
    free(r.out);
    imat_close(&a);

    // refusals
    char short_text[4096];
    snprintf(short_text, sizeof(short_text), "%s", tmp_path("short.txt"));
    const char * missing_model[] = { "-m", "no-such-model.gguf", "-f", text, "-c", "64", "-o", "x.gguf", NULL };
    check_refused("missing model", missing_model, "failed");
    const char * missing_text[] = { "-m", model_path, "-f", "no-such-text.txt", "-c", "64", "-o", "x.gguf", NULL };
    check_refused("missing text", missing_text, "no-such-text.txt");
    const char * unwritable[] = { "-m", model_path, "-f", text, "-c", "64", "-o", "no-such-dir/x.gguf", NULL };
    check_refused("unwritable output", unwritable, "cannot write the output");
    const char * nothing[] = { "-m", model_path, "-o", "x.gguf", NULL };
    check_refused("no text and no --in-file", nothing, "No prompt provided");
    const char * two_stats[] = { "--show-statistics", NULL };
    check_refused("--show-statistics without a file", two_stats, "a single imatrix file is required");

    clean_dir();
    FILE * f = fopen(short_text, "w");
    if (f) {
        fputs("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6", f);
        fclose(f);
    }
    struct run_result rs = run_tool((const char * const[]) { "-m", model_path, "-f", "short.txt", "-c", "64", "-o", "x.gguf", NULL });
    TH_CHECK(rs.status == 1 && strstr(rs.out, "you need at least 128 tokens"), "short text: status %d\n%s", rs.status, rs.out);
    TH_CHECK(!file_exists(tmp_path("x.gguf")) && !file_exists(tmp_path("x.gguf.tmp")), "short text: no output");
    free(rs.out);

    clean_dir();
    f = fopen(tmp_path("broken.gguf"), "w");
    if (f) {
        fputs("GGUF this is not", f);
        fclose(f);
    }
    rs = run_tool((const char * const[]) { "--in-file", "broken.gguf", "-o", "x.gguf", NULL });
    TH_CHECK(rs.status == 1 && strstr(rs.out, "broken.gguf"), "broken --in-file: status %d\n%s", rs.status, rs.out);
    TH_CHECK(!file_exists(tmp_path("x.gguf")) && !file_exists(tmp_path("x.gguf.tmp")), "broken --in-file: no output");
    free(rs.out);
    // a model file is GGUF but no imatrix
    rs = run_tool((const char * const[]) { "--in-file", model_path, "-o", "x.gguf", NULL });
    TH_CHECK(rs.status == 1 && strstr(rs.out, "not an imatrix"), "model as --in-file: status %d\n%s", rs.status, rs.out);
    TH_CHECK(!file_exists(tmp_path("x.gguf")), "model as --in-file: no output");
    free(rs.out);
#undef RUN_ARGS
    clean_dir();
    gguf_free(mf.gg);
    ggml_free(mf.ctx);
}

// the running perplexity (same chunking as llama-perplexity) against llama.cpp's reference on the KJV model
static void test_kjv_ppl(const char * model_path, const char * text, const char * index_path) {
    json_error_t jerr;
    json_t * root = json_load_file(index_path, 0, &jerr);
    json_t * want = NULL;
    json_t * cases = json_object_get(root, "perplexity");
    for (size_t i = 0; i < json_array_size(cases); i++) {
        const char * model = json_string_value(json_object_get(json_array_get(cases, i), "model"));
        if (model && strcmp(model, "kjv-target-f32.gguf") == 0) {
            want = json_object_get(json_array_get(cases, i), "running_ppl");
        }
    }
    TH_CHECK(json_array_size(want) >= 8, "reference running_ppl of kjv-target-f32 in %s", index_path);
    if (json_array_size(want) < 8) {
        json_decref(root);
        return;
    }
    clean_dir();
    const char * args[] = { "-m", model_path, "-f", text, "-c", "256", "-b", "256", "--chunks", "8", "-t", "2",
                            "-o", "kjv.gguf", NULL };
    struct run_result r = run_tool(args);
    TH_CHECK(r.status == 0, "kjv run: status %d\n%s", r.status, r.out);
    int n_seen = 0;
    for (int k = 1; k <= 8; k++) {
        char tag[16];
        snprintf(tag, sizeof(tag), "[%d]", k);
        const char * p = strstr(r.out, tag);
        if (!p) {
            continue;
        }
        const double got = strtod(p + strlen(tag), NULL);
        const double ref = json_number_value(json_array_get(want, (size_t) k - 1));
        TH_CHECK(fabs(got - ref) < 0.01, "chunk %d: running PPL %.4f, llama.cpp %.4f", k, got, ref);
        n_seen++;
    }
    TH_CHECK(n_seen == 8, "%d running perplexities printed", n_seen);
    free(r.out);
    clean_dir();
    json_decref(root);
}

// the expert path: per-expert sums and counts
static void test_moe(const char * model_path, const char * text) {
    struct model_file mf = { NULL, NULL };
    struct gguf_init_params gp = { true, &mf.ctx };
    mf.gg = gguf_init_from_file(model_path, gp);
    TH_CHECK(mf.gg != NULL, "read %s", model_path);
    if (!mf.gg) {
        return;
    }
    clean_dir();
    const char * args[] = { "-m", model_path, "-f", text, "-c", "32", "-b", "32", "--chunks", "2", "-t", "2", "--no-ppl",
                            "-o", "moe.gguf", NULL };
    struct run_result r = run_tool(args);
    TH_CHECK(r.status == 0, "moe run: status %d\n%s", r.status, r.out);
    free(r.out);
    const int64_t n_expert = model_u32(&mf, "qwen3moe.expert_count");
    const int64_t n_used = model_u32(&mf, "qwen3moe.expert_used_count");
    const int64_t n_embd = model_u32(&mf, "qwen3moe.embedding_length");
    const int64_t n_ff = model_u32(&mf, "qwen3moe.expert_feed_forward_length");
    struct imat m = { NULL, NULL };
    TH_CHECK(n_expert > 1 && n_used > 0 && imat_open(&m, tmp_path("moe.gguf")), "moe output / model keys");
    if (m.gg) {
        const char * const w[] = { "blk.0.ffn_up_exps.weight", "blk.0.ffn_gate_exps.weight", "blk.0.ffn_down_exps.weight" };
        for (int i = 0; i < 3; i++) {
            const struct ggml_tensor * s2 = imat_get(&m, w[i], "in_sum2");
            const struct ggml_tensor * cn = imat_get(&m, w[i], "counts");
            const int64_t per_row = i == 2 ? n_ff : n_embd;
            TH_CHECK(s2 && cn && s2->ne[0] == per_row && s2->ne[1] == n_expert && cn->ne[0] == 1 && cn->ne[1] == n_expert,
                     "%s: shapes", w[i]);
            if (s2 && cn && cn->ne[1] == n_expert) {
                double total = 0.0;
                int used = 0;
                for (int64_t e = 0; e < n_expert; e++) {
                    total += ((const float *) cn->data)[e];
                    used += ((const float *) cn->data)[e] > 0;
                }
                TH_CHECK(total == (double) (2 * 32 * n_used), "%s: counts sum to %g, expected %lld", w[i], total,
                         (long long) (2 * 32 * n_used));
                TH_CHECK(used > 1, "%s: %d experts used", w[i], used);
            }
        }
        // the router is a dense weight: one count, one row per token
        const struct ggml_tensor * gi = imat_get(&m, "blk.0.ffn_gate_inp.weight", "counts");
        TH_CHECK(gi && ggml_nelements(gi) == 1 && ((const float *) gi->data)[0] == 64.0f, "ffn_gate_inp counts");
    }
    imat_close(&m);
    clean_dir();
    gguf_free(mf.gg);
    ggml_free(mf.ctx);
}

static void quiet_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

int main(int argc, char ** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s path/to/llama-imatrix temp-dir\n", argv[0]);
        return 1;
    }
    g_bin = argv[1];
    g_dir = argv[2];
    mkdir(g_dir, 0755);

    llama_log_set(quiet_log, NULL);
    llama_backend_init();
    const char * stories = th_data_path("models/stories260K-f32.gguf");
    const char * text = th_data_path("reference/kjv/kjv-test.txt");
    const char * moe = th_data_path("models/synthetic/qwen3moe-F16.gguf");
    if (th_require_file(stories) && th_require_file(text)) {
        test_stories(stories, text);
    }
    const char * kjv = th_data_path("models/kjv/kjv-target-f32.gguf");
    const char * kjv_text = th_data_path("reference/kjv/kjv-ppl.txt");
    const char * kjv_index = th_data_path("reference/kjv/index.json");
    if (th_require_file(kjv) && th_require_file(kjv_text) && th_require_file(kjv_index)) {
        test_kjv_ppl(kjv, kjv_text, kjv_index);
    }
    if (th_require_file(moe) && th_require_file(text)) {
        test_moe(moe, text);
    }
    llama_backend_free();
    rmdir(g_dir);
    return th_finish();
}
