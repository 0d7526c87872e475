// Split models (llama-gguf-split's "<prefix>-00001-of-00003.gguf"): the splits are written here with the GGUF
// writer (all metadata and the split.* keys in the first file, split.no / split.count / split.tensors.count in
// every file, the tensors spread over the files), then loaded by name and through llama_model_load_from_splits,
// with mmap and with reads. The logits of a decode must equal the unsplit file's bit for bit (the same weights
// give the same computation). Broken sets of splits (a file missing, the wrong file first, a wrong index, a
// wrong tensor count, a duplicated tensor, a wrong number of paths) fail with a log line naming the problem.
// llama_model_quantize takes a split input too (one output file, the same bytes as from the unsplit file).
#include "harness.h"

#include "llama.h"
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char   g_log[1 << 15];
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

static char g_dir[256];

enum split_edit {
    EDIT_NONE,
    EDIT_BAD_NO,         // the second file says split.no 2
    EDIT_BAD_COUNT,      // split.tensors.count one too many
    EDIT_DUP_TENSOR,     // the last file repeats the first tensor of the first file
    EDIT_EMPTY_FIRST,    // the first file holds metadata only (llama-gguf-split --no-tensor-first-split)
};

// writes src as n_split files <dir>/<stem>-0000i-of-0000n.gguf (or <dir>/<stem>-<i>.gguf when plain_names);
// paths[i] receives each name. false if a file could not be written.
static bool write_splits(const char * src, const char * stem, int n_split, enum split_edit edit, bool plain_names,
                         char paths[][512]) {
    struct ggml_context * gctx = NULL;
    struct gguf_init_params gp = { .no_alloc = false, .ctx = &gctx };
    struct gguf_context * g = gguf_init_from_file(src, gp);
    if (!g) {
        return false;
    }
    const int64_t n_tensors = gguf_get_n_tensors(g);
    bool ok = true;
    for (int s = 0; s < n_split && ok; s++) {
        struct gguf_context * o = gguf_init_empty();
        if (s == 0) {
            gguf_set_kv(o, g);
        }
        gguf_set_val_u16(o, "split.no", (uint16_t) (edit == EDIT_BAD_NO && s == 1 ? 2 : s));
        gguf_set_val_u16(o, "split.count", (uint16_t) n_split);
        gguf_set_val_i32(o, "split.tensors.count", (int32_t) (n_tensors + (edit == EDIT_BAD_COUNT ? 1 : 0)));
        // contiguous runs of tensors; with EDIT_EMPTY_FIRST the first file gets none
        const int first = edit == EDIT_EMPTY_FIRST ? 1 : 0;
        const int n_hold = n_split - first;
        for (int64_t i = 0; i < n_tensors; i++) {
            const int owner = first + (int) (i * n_hold / n_tensors);
            if (owner == s) {
                gguf_add_tensor(o, ggml_get_tensor(gctx, gguf_get_tensor_name(g, i)));
            }
        }
        if (edit == EDIT_DUP_TENSOR && s == n_split - 1) {
            gguf_add_tensor(o, ggml_get_tensor(gctx, gguf_get_tensor_name(g, 0)));
        }
        if (plain_names) {
            snprintf(paths[s], 512, "%s/%s-%d.gguf", g_dir, stem, s);
        } else {
            char prefix[384];
            snprintf(prefix, sizeof(prefix), "%s/%s", g_dir, stem);
            llama_split_path(paths[s], 512, prefix, s, n_split);
        }
        ok = gguf_write_to_file(o, paths[s], false);
        gguf_free(o);
    }
    gguf_free(g);
    ggml_free(gctx);
    return ok;
}

static struct llama_model_params quiet_params(bool use_mmap) {
    struct llama_model_params mp = llama_model_default_params();
    mp.use_mmap = use_mmap;
    mp.progress_callback = NULL;
    return mp;
}

#define N_PROMPT 8

// logits of every position of a fixed prompt (caller frees); NULL on failure
static float * decode_logits(struct llama_model * model, int * n_vocab) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 64;
    cp.n_batch = 64;
    cp.n_threads = 2;
    cp.n_threads_batch = 2;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        return NULL;
    }
    *n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_batch batch = llama_batch_init(N_PROMPT, 0, 1);
    const llama_token prompt[N_PROMPT] = { 1, 403, 261, 380, 305, 1, 42, 263 };
    for (int i = 0; i < N_PROMPT; i++) {
        batch.token[i] = prompt[i] % *n_vocab;
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = N_PROMPT;
    float * out = NULL;
    if (llama_decode(ctx, batch) == 0) {
        out = malloc(sizeof(float) * (size_t) N_PROMPT * (size_t) *n_vocab);
        for (int i = 0; out && i < N_PROMPT; i++) {
            memcpy(out + (size_t) i * (size_t) *n_vocab, llama_get_logits_ith(ctx, i), sizeof(float) * (size_t) *n_vocab);
        }
    }
    llama_batch_free(batch);
    llama_free(ctx);
    return out;
}

static const float * g_ref = NULL;
static int g_ref_vocab = 0;
static uint64_t g_ref_params = 0, g_ref_size = 0;

static void expect_same_model(const char * label, struct llama_model * m) {
    TH_CHECK(m != NULL, "%s: did not load: %s", label, g_log);
    if (!m) {
        return;
    }
    TH_CHECK(llama_model_n_params(m) == g_ref_params && llama_model_size(m) == g_ref_size,
             "%s: %llu params / %llu bytes, unsplit %llu / %llu", label, (unsigned long long) llama_model_n_params(m),
             (unsigned long long) llama_model_size(m), (unsigned long long) g_ref_params, (unsigned long long) g_ref_size);
    int n_vocab = 0;
    float * logits = decode_logits(m, &n_vocab);
    TH_CHECK(logits != NULL && n_vocab == g_ref_vocab, "%s: decode failed", label);
    if (logits && n_vocab == g_ref_vocab) {
        TH_CHECK(memcmp(logits, g_ref, sizeof(float) * (size_t) N_PROMPT * (size_t) n_vocab) == 0,
                 "%s: logits differ from the unsplit model's", label);
    }
    free(logits);
    llama_model_free(m);
}

static void expect_fail(const char * label, struct llama_model * m, const char * n1, const char * n2) {
    TH_CHECK(m == NULL, "%s: loaded a broken set of splits", label);
    llama_model_free(m);
    TH_CHECK((!n1 || strstr(g_log, n1)) && (!n2 || strstr(g_log, n2)),
             "%s: log does not name the problem (want '%s' '%s'): %s", label, n1 ? n1 : "", n2 ? n2 : "", g_log);
}

static void log_clear(void) {
    g_log_len = 0;
    g_log[0] = '\0';
}

int main(void) {
    llama_log_set(capture_log, NULL);
    llama_backend_init();
    const char * src = th_data_path("models/stories260K-q8_0.gguf");
    if (!th_require_file(src)) {
        return th_finish();
    }
    snprintf(g_dir, sizeof(g_dir), "/tmp/test-model-split-XXXXXX");
    if (!mkdtemp(g_dir)) {
        TH_CHECK(false, "mkdtemp failed");
        return th_finish();
    }

    // the unsplit model's logits: the reference
    {
        struct llama_model * m = llama_model_load_from_file(src, quiet_params(true));
        TH_CHECK(m != NULL, "unsplit model loads: %s", g_log);
        if (!m) {
            return th_finish();
        }
        g_ref_params = llama_model_n_params(m);
        g_ref_size   = llama_model_size(m);
        g_ref = decode_logits(m, &g_ref_vocab);
        llama_model_free(m);
        TH_CHECK(g_ref != NULL, "unsplit decode");
        if (!g_ref) {
            return th_finish();
        }
    }

    char paths[4][512];
    // three splits found by name from the first, mmap and read paths
    TH_CHECK(write_splits(src, "m", 3, EDIT_NONE, false, paths), "write 3 splits");
    TH_CHECK(strstr(paths[0], "m-00001-of-00003.gguf") && strstr(paths[2], "m-00003-of-00003.gguf"), "%s", paths[2]);
    log_clear();
    expect_same_model("3 splits, mmap", llama_model_load_from_file(paths[0], quiet_params(true)));
    TH_CHECK(strstr(g_log, "additional 2 GGUFs metadata loaded") != NULL, "log names the extra splits: %s", g_log);
    log_clear();
    expect_same_model("3 splits, read", llama_model_load_from_file(paths[0], quiet_params(false)));
    {
        const char * list[3] = { paths[0], paths[1], paths[2] };
        log_clear();
        expect_same_model("3 splits, explicit list", llama_model_load_from_splits(list, 3, quiet_params(true)));
        log_clear();
        expect_fail("a wrong number of paths", llama_model_load_from_splits(list, 2, quiet_params(true)),
                    "invalid split count", "given: 2 splits, but expected 3");
        log_clear();
        expect_fail("the second split first", llama_model_load_from_file(paths[1], quiet_params(true)),
                    "illegal split file idx: 1", "first split");
    }

    // a split model saved again is one file, without the split keys, and loads with the same logits
    {
        struct llama_model * m = llama_model_load_from_file(paths[0], quiet_params(true));
        char saved[512];
        snprintf(saved, sizeof(saved), "%s/resaved.gguf", g_dir);
        llama_model_save_to_file(m, saved);
        llama_model_free(m);
        struct gguf_init_params gp = { .no_alloc = true, .ctx = NULL };
        struct gguf_context * g = gguf_init_from_file(saved, gp);
        TH_CHECK(g != NULL && gguf_find_key(g, "split.count") < 0 && gguf_find_key(g, "split.no") < 0,
                 "the resaved model keeps split keys");
        gguf_free(g);
        log_clear();
        expect_same_model("split model saved as one file", llama_model_load_from_file(saved, quiet_params(true)));
    }

    // vocab_only of a split model: metadata only (the files are mapped only when the weights are placed)
    {
        TH_CHECK(write_splits(src, "voc", 3, EDIT_NONE, false, paths), "write splits");
        struct llama_model_params mp = quiet_params(true);
        mp.vocab_only = true;
        log_clear();
        struct llama_model * m = llama_model_load_from_file(paths[0], mp);
        TH_CHECK(m != NULL && llama_model_get_vocab(m) != NULL, "vocab_only load of a split model: %s", g_log);
        llama_model_free(m);
    }

    // names of the caller's choosing, only through the explicit list
    TH_CHECK(write_splits(src, "any", 2, EDIT_NONE, true, paths), "write 2 splits with plain names");
    {
        const char * list[2] = { paths[0], paths[1] };
        log_clear();
        expect_same_model("2 splits, own names", llama_model_load_from_splits(list, 2, quiet_params(false)));
        log_clear();
        expect_fail("own names, found by name", llama_model_load_from_file(paths[0], quiet_params(true)),
                    "invalid split file name", "any-0.gguf");
    }

    // llama_model_quantize reads a split input whole: its one-file output equals the unsplit file's output
    {
        TH_CHECK(write_splits(src, "q", 3, EDIT_NONE, false, paths), "write splits");
        struct llama_model_quantize_params qp = llama_model_quantize_default_params();
        qp.only_copy = true; // stories260K's rows of 172 fit no block type; the copy still goes through every tensor
        qp.nthread = 2;
        char out_split[512], out_whole[512];
        snprintf(out_split, sizeof(out_split), "%s/q-split-out.gguf", g_dir);
        snprintf(out_whole, sizeof(out_whole), "%s/q-whole-out.gguf", g_dir);
        log_clear();
        TH_CHECK(llama_model_quantize(paths[0], out_split, &qp) == 0, "quantize split input: %s", g_log);
        TH_CHECK(llama_model_quantize(src, out_whole, &qp) == 0, "quantize unsplit input: %s", g_log);
        FILE * a = fopen(out_split, "rb");
        FILE * b = fopen(out_whole, "rb");
        bool same = a && b;
        long n = 0;
        while (same) {
            const int ca = fgetc(a), cb = fgetc(b);
            same = ca == cb;
            n++;
            if (ca == EOF || cb == EOF) {
                break;
            }
        }
        TH_CHECK(same && n > 1000, "quantized split input differs from the unsplit one's output (byte %ld)", n);
        if (a) fclose(a);
        if (b) fclose(b);
        unlink(paths[2]);
        log_clear();
        TH_CHECK(llama_model_quantize(paths[0], out_split, &qp) != 0 && strstr(g_log, "q-00003-of-00003.gguf"),
                 "quantize with a split missing fails naming it: %s", g_log);
    }

    // the first file with metadata only
    TH_CHECK(write_splits(src, "e", 3, EDIT_EMPTY_FIRST, false, paths), "write metadata-only first split");
    log_clear();
    expect_same_model("metadata-only first split", llama_model_load_from_file(paths[0], quiet_params(true)));

    // broken sets
    TH_CHECK(write_splits(src, "gone", 3, EDIT_NONE, false, paths), "write splits");
    unlink(paths[2]);
    log_clear();
    expect_fail("a split missing", llama_model_load_from_file(paths[0], quiet_params(true)),
                "failed to load GGUF split 3 of 3", "gone-00003-of-00003.gguf");

    TH_CHECK(write_splits(src, "no", 3, EDIT_BAD_NO, false, paths), "write splits");
    log_clear();
    expect_fail("a wrong split.no", llama_model_load_from_file(paths[0], quiet_params(true)),
                "invalid split file idx: 2", "expected 1");

    TH_CHECK(write_splits(src, "cnt", 2, EDIT_BAD_COUNT, false, paths), "write splits");
    log_clear();
    expect_fail("a wrong tensor count", llama_model_load_from_file(paths[0], quiet_params(true)),
                "corrupted model", "tensors expected but");

    TH_CHECK(write_splits(src, "dup", 3, EDIT_DUP_TENSOR, false, paths), "write splits");
    log_clear();
    expect_fail("a duplicated tensor", llama_model_load_from_file(paths[0], quiet_params(true)),
                "is duplicated", "dup-00003-of-00003.gguf");

    free((void *) g_ref);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    TH_CHECK(system(cmd) == 0, "cleanup");
    llama_backend_free();
    return th_finish();
}
