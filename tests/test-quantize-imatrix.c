// llama-quantize --imatrix / --include-weights / --exclude-weights / --override-kv.
//
// The test writes importance matrices itself in both of llama.cpp's formats (GGUF with gguf.h, the legacy .dat
// with fwrite), computes the importance vectors from them on its own (in_sum2 / counts, 1 for a matrix with
// count 0; legacy values / ncall), quantizes the synthetic llama F32 model in-process with
// llama_model_quantize and those vectors, and requires the llama-quantize binary to produce the same bytes
// for every tensor. Then: the imatrix must change some tensors, the weight selection must pick the right
// entries, the quantize.imatrix.* keys and --override-kv must reach the output, and broken imatrix files
// (missing, truncated, corrupt, wrong sizes) must give a clear error, exit status 1 and no output file.
// The reader itself is fuzzed in-process (random truncations and bit flips of both formats).
//
//   test-quantize-imatrix path/to/llama-quantize

#include "harness-ggml.h"
#include "harness-run.h"

#include "ggml.h"
#include "gguf.h"
#include "llama.h"
#include "quantize-imatrix.h"

#include <sys/wait.h>
#include <unistd.h>

static char g_tmp[256];
static const char * g_exe;
static const char * g_model;

static const char * tmp_path(const char * name) {
    static char bufs[16][512];
    static int slot = 0;
    char * out = bufs[slot];
    slot = (slot + 1) % 16;
    snprintf(out, sizeof(bufs[0]), "%s/%s", g_tmp, name);
    return out;
}

// a path in the temporary folder held in a local array (tmp_path's ring of buffers is for immediate use)
#define TMP_PATH(var, name) char var[512]; snprintf(var, sizeof(var), "%s/%s", g_tmp, name)

static bool file_exists(const char * path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static void log_errors_only(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

// runs llama-quantize with `args`; stdout + stderr go to the log file; returns the exit status
static int run_quantize(const char * args, const char * log) {
    char line[8000];
    snprintf(line, sizeof(line), "'%s' %s", g_exe, args);
    return th_run_shell(line, log);
}

static bool log_has(const char * log, const char * text) {
    return th_file_has(log, text);
}

//
// the model's weights and the importance data the test makes up for them
//

#define MAX_W 64

struct weight {
    char    name[GGML_MAX_NAME];
    int64_t ne0;
    int64_t n_mat;
    float * sums;     // GGUF in_sum2, [ne0, n_mat]
    float   count;    // GGUF counts (the same for every matrix here)
    float * legacy;   // legacy .dat values
    int32_t ncall;    // legacy ncall
    float * want;     // importance from the GGUF data, computed here
    float * want_leg; // importance from the legacy data, computed here
};

static struct weight g_w[MAX_W];
static int g_nw = 0;

// the 2-D weights of the blocks plus output.weight (what llama-imatrix collects with --process-output)
static bool collect_weights(void) {
    struct ggml_context * ctx = NULL;
    struct gguf_init_params ip = { .no_alloc = true, .ctx = &ctx };
    struct gguf_context * g = gguf_init_from_file(g_model, ip);
    if (!g) {
        return false;
    }
    uint64_t rng = 0x1234abcdu;
    for (int64_t i = 0; i < gguf_get_n_tensors(g) && g_nw < MAX_W; i++) {
        const char * name = gguf_get_tensor_name(g, i);
        const struct ggml_tensor * t = ggml_get_tensor(ctx, name);
        if (ggml_n_dims(t) < 2 || (strncmp(name, "blk.", 4) != 0 && strcmp(name, "output.weight") != 0)) {
            continue;
        }
        struct weight * w = &g_w[g_nw];
        snprintf(w->name, sizeof(w->name), "%s", name);
        w->ne0   = t->ne[0];
        w->n_mat = t->ne[2];
        const size_t n = (size_t) (w->ne0 * w->n_mat);
        w->sums = malloc(n * sizeof(float));
        w->legacy = malloc(n * sizeof(float));
        w->want = malloc(n * sizeof(float));
        w->want_leg = malloc(n * sizeof(float));
        // a matrix that never saw input (count 0) weighs every column 1 in llama.cpp; blk.1.attn_k is one
        w->count = strcmp(name, "blk.1.attn_k.weight") == 0 ? 0.0f : (float) (3 + g_nw % 5) * 512.0f;
        // ncall 0 (values taken as they are) for one entry, else a few calls
        w->ncall = strcmp(name, "blk.2.ffn_up.weight") == 0 ? 0 : 2 + g_nw % 4;
        for (size_t k = 0; k < n; k++) {
            // strongly uneven columns, so that the weighting visibly changes the chosen scales
            const double u = (double) (th_xorshift64(&rng) % 100000) / 100000.0;
            const double mean_sq = 0.01 + 20.0 * u * u * u;
            w->sums[k] = (float) (mean_sq * (w->count > 0.0f ? w->count : 1.0));
            w->want[k] = w->count > 0.0f ? w->sums[k] / w->count : 1.0f;
            w->legacy[k] = (float) (mean_sq * (w->ncall > 0 ? w->ncall : 1));
            w->want_leg[k] = w->ncall > 0 ? w->legacy[k] / (float) w->ncall : w->legacy[k];
        }
        g_nw++;
    }
    gguf_free(g);
    ggml_free(ctx);
    return g_nw > 0;
}

static struct weight * weight_named(const char * name) {
    for (int i = 0; i < g_nw; i++) {
        if (strcmp(g_w[i].name, name) == 0) {
            return &g_w[i];
        }
    }
    return NULL;
}

//
// writing imatrix files
//

enum gguf_flaw {
    FLAW_NONE,
    FLAW_NO_CHUNK_SIZE,     // a required key missing
    FLAW_NO_COUNTS,         // blk.0.attn_q has in_sum2 but no counts
    FLAW_COUNTS_LENGTH,     // blk.0.attn_q's counts has 2 elements for 1 matrix
    FLAW_NAN,               // a NaN in blk.0.ffn_down's sums
    FLAW_WRONG_SIZE,        // blk.0.attn_q's vector is 32 columns short
    FLAW_WRONG_SIZE_EMBD,   // an extra token_embd.weight entry of the wrong size (llama.cpp: only a warning)
};

static bool write_imatrix_gguf(const char * path, enum gguf_flaw flaw) {
    size_t need = 0;
    for (int i = 0; i < g_nw; i++) {
        need += (size_t) (g_w[i].ne0 * g_w[i].n_mat + g_w[i].n_mat + 8) * sizeof(float) + 2 * ggml_tensor_overhead();
    }
    need += 4096 * sizeof(float) + 2 * ggml_tensor_overhead() + 1024;
    struct ggml_init_params gp = { .mem_size = need, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(gp);
    struct gguf_context * g = gguf_init_empty();
    gguf_set_val_str(g, "general.type", "imatrix");
    const char * datasets[] = { "calib.txt", "more-calib.txt" };
    gguf_set_arr_str(g, "imatrix.datasets", datasets, 2);
    gguf_set_val_u32(g, "imatrix.chunk_count", 7);
    if (flaw != FLAW_NO_CHUNK_SIZE) {
        gguf_set_val_u32(g, "imatrix.chunk_size", 512);
    }
    for (int i = 0; i < g_nw; i++) {
        const struct weight * w = &g_w[i];
        const bool target = strcmp(w->name, flaw == FLAW_NAN ? "blk.0.ffn_down.weight" : "blk.0.attn_q.weight") == 0;
        const int64_t ne0 = flaw == FLAW_WRONG_SIZE && target ? w->ne0 - 32 : w->ne0;
        char name[GGML_MAX_NAME];
        struct ggml_tensor * s = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, w->n_mat);
        snprintf(name, sizeof(name), "%s.in_sum2", w->name);
        ggml_set_name(s, name);
        memcpy(s->data, w->sums, (size_t) (ne0 * w->n_mat) * sizeof(float));
        if (flaw == FLAW_NAN && target) {
            ((float *) s->data)[5] = NAN;
        }
        gguf_add_tensor(g, s);
        if (flaw == FLAW_NO_COUNTS && target) {
            continue;
        }
        const int64_t nc = flaw == FLAW_COUNTS_LENGTH && target ? w->n_mat + 1 : w->n_mat;
        struct ggml_tensor * c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, nc);
        snprintf(name, sizeof(name), "%s.counts", w->name);
        ggml_set_name(c, name);
        for (int64_t j = 0; j < nc; j++) {
            ((float *) c->data)[j] = w->count;
        }
        gguf_add_tensor(g, c);
    }
    if (flaw == FLAW_WRONG_SIZE_EMBD) {
        struct ggml_tensor * s = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 1);
        ggml_set_name(s, "token_embd.weight.in_sum2");
        struct ggml_tensor * c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 1);
        ggml_set_name(c, "token_embd.weight.counts");
        for (int k = 0; k < 7; k++) {
            ((float *) s->data)[k] = 1.0f;
        }
        ((float *) c->data)[0] = 1.0f;
        gguf_add_tensor(g, s);
        gguf_add_tensor(g, c);
    }
    const bool ok = gguf_write_to_file(g, path, false);
    gguf_free(g);
    ggml_free(ctx);
    return ok;
}

// llama.cpp's legacy layout, written field by field
static bool write_imatrix_legacy(const char * path, bool with_dataset) {
    FILE * f = fopen(path, "wb");
    if (!f) {
        return false;
    }
    bool ok = true;
    const int32_t n = g_nw;
    ok = ok && fwrite(&n, sizeof(n), 1, f) == 1;
    for (int i = 0; i < g_nw && ok; i++) {
        const struct weight * w = &g_w[i];
        const int32_t len = (int32_t) strlen(w->name);
        const int32_t nval = (int32_t) (w->ne0 * w->n_mat);
        ok = ok && fwrite(&len, sizeof(len), 1, f) == 1 && fwrite(w->name, 1, (size_t) len, f) == (size_t) len;
        ok = ok && fwrite(&w->ncall, sizeof(w->ncall), 1, f) == 1 && fwrite(&nval, sizeof(nval), 1, f) == 1;
        ok = ok && fwrite(w->legacy, sizeof(float), (size_t) nval, f) == (size_t) nval;
    }
    if (with_dataset) {
        const int32_t last_call = 9;
        const char * ds = "legacy-calib.txt";
        const int32_t dl = (int32_t) strlen(ds);
        ok = ok && fwrite(&last_call, sizeof(last_call), 1, f) == 1 && fwrite(&dl, sizeof(dl), 1, f) == 1 &&
             fwrite(ds, 1, (size_t) dl, f) == (size_t) dl;
    }
    return fclose(f) == 0 && ok;
}

//
// the in-process reference and the comparisons
//

// which entries a run uses: all, or those whose name contains (include) / does not contain (exclude) any of
// the patterns
struct selection {
    const char * const * patterns;
    int  n;
    bool include;
};

static bool selected(const char * name, const struct selection * sel) {
    if (!sel || sel->n == 0) {
        return true;
    }
    bool hit = false;
    for (int i = 0; i < sel->n; i++) {
        hit = hit || strstr(name, sel->patterns[i]) != NULL;
    }
    return sel->include ? hit : !hit;
}

// quantizes the model in-process; legacy picks the legacy importance vectors; NULL sel = no imatrix at all.
// Returns the number of entries passed.
static int quantize_ref(const char * out, enum llama_ftype ftype, bool use_imatrix, bool legacy,
                        const struct selection * sel) {
    static struct llama_model_imatrix_data im[MAX_W + 1];
    int n = 0;
    for (int i = 0; use_imatrix && i < g_nw; i++) {
        if (selected(g_w[i].name, sel)) {
            im[n].name = g_w[i].name;
            im[n].data = legacy ? g_w[i].want_leg : g_w[i].want;
            im[n].size = (size_t) (g_w[i].ne0 * g_w[i].n_mat);
            n++;
        }
    }
    im[n].name = NULL;
    struct llama_model_quantize_params p = llama_model_quantize_default_params();
    p.ftype = ftype;
    p.nthread = 2;
    p.imatrix = n > 0 ? im : NULL;
    const uint32_t rc = llama_model_quantize(g_model, out, &p);
    TH_CHECK(rc == 0, "in-process reference quantization to %s failed", out);
    return n;
}

static void * read_tensor(FILE * f, const struct gguf_context * g, int64_t id) {
    const size_t n = gguf_get_tensor_size(g, id);
    void * buf = malloc(n ? n : 1);
    if (buf && (fseek(f, (long) (gguf_get_data_offset(g) + gguf_get_tensor_offset(g, id)), SEEK_SET) != 0 ||
                fread(buf, 1, n, f) != n)) {
        free(buf);
        buf = NULL;
    }
    return buf;
}

// number of tensors whose type or bytes differ between the two files (-1 if they cannot be compared)
static int count_differing(const char * a, const char * b) {
    struct gguf_init_params ip = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * ga = gguf_init_from_file(a, ip);
    struct gguf_context * gb = gguf_init_from_file(b, ip);
    FILE * fa = fopen(a, "rb");
    FILE * fb = fopen(b, "rb");
    int diff = -1;
    if (ga && gb && fa && fb && gguf_get_n_tensors(ga) == gguf_get_n_tensors(gb)) {
        diff = 0;
        for (int64_t i = 0; i < gguf_get_n_tensors(ga); i++) {
            const int64_t j = gguf_find_tensor(gb, gguf_get_tensor_name(ga, i));
            if (j < 0 || gguf_get_tensor_type(ga, i) != gguf_get_tensor_type(gb, j) ||
                gguf_get_tensor_size(ga, i) != gguf_get_tensor_size(gb, j)) {
                diff++;
                continue;
            }
            void * x = read_tensor(fa, ga, i);
            void * y = read_tensor(fb, gb, j);
            diff += !(x && y && memcmp(x, y, gguf_get_tensor_size(ga, i)) == 0);
            free(x);
            free(y);
        }
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    if (ga) gguf_free(ga);
    if (gb) gguf_free(gb);
    return diff;
}

static int64_t find_key_typed(const struct gguf_context * g, const char * key, enum gguf_type type) {
    const int64_t id = gguf_find_key(g, key);
    return id >= 0 && gguf_get_kv_type(g, id) == type ? id : -1;
}

// the quantize.imatrix.* keys: dataset NULL / chunks 0 = that key must be absent; entries 0 = no keys at all
static void check_imatrix_keys(const char * path, const char * file, const char * dataset, int entries, int chunks,
                               const char * label) {
    struct gguf_init_params ip = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * g = gguf_init_from_file(path, ip);
    TH_CHECK(g != NULL, "%s: cannot read %s", label, path);
    if (!g) {
        return;
    }
    const int64_t kf = find_key_typed(g, "quantize.imatrix.file", GGUF_TYPE_STRING);
    const int64_t kd = find_key_typed(g, "quantize.imatrix.dataset", GGUF_TYPE_STRING);
    const int64_t ke = find_key_typed(g, "quantize.imatrix.entries_count", GGUF_TYPE_UINT32);
    const int64_t kc = find_key_typed(g, "quantize.imatrix.chunks_count", GGUF_TYPE_UINT32);
    if (entries == 0) {
        TH_CHECK(gguf_find_key(g, "quantize.imatrix.file") < 0 && gguf_find_key(g, "quantize.imatrix.entries_count") < 0,
                 "%s: quantize.imatrix.* keys written without an imatrix", label);
    } else {
        TH_CHECK(kf >= 0 && strcmp(gguf_get_val_str(g, kf), file) == 0, "%s: quantize.imatrix.file is '%s'", label,
                 kf >= 0 ? gguf_get_val_str(g, kf) : "(missing)");
        if (dataset) {
            TH_CHECK(kd >= 0 && strcmp(gguf_get_val_str(g, kd), dataset) == 0, "%s: quantize.imatrix.dataset is '%s'",
                     label, kd >= 0 ? gguf_get_val_str(g, kd) : "(missing)");
        } else {
            TH_CHECK(gguf_find_key(g, "quantize.imatrix.dataset") < 0, "%s: unexpected quantize.imatrix.dataset", label);
        }
        TH_CHECK(ke >= 0 && gguf_get_val_u32(g, ke) == (uint32_t) entries, "%s: entries_count %u, want %d", label,
                 ke >= 0 ? gguf_get_val_u32(g, ke) : 0u, entries);
        if (chunks > 0) {
            TH_CHECK(kc >= 0 && gguf_get_val_u32(g, kc) == (uint32_t) chunks, "%s: chunks_count %u, want %d", label,
                     kc >= 0 ? gguf_get_val_u32(g, kc) : 0u, chunks);
        } else {
            TH_CHECK(gguf_find_key(g, "quantize.imatrix.chunks_count") < 0, "%s: unexpected chunks_count", label);
        }
    }
    gguf_free(g);
}

//
// the checks
//

// the reader's vectors against the ones computed here, bit for bit (a constant vector, as for a count of 0,
// quantizes like any other constant, so the output files alone cannot tell 1.0 from another value)
static void check_reader(const char * path, bool legacy) {
    struct quant_imatrix im;
    char err[1024];
    const bool ok = quant_imatrix_load(path, &im, err, sizeof(err));
    TH_CHECK(ok, "reading %s failed: %s", path, err);
    if (!ok) {
        return;
    }
    TH_CHECK(im.n == (size_t) g_nw && im.legacy == legacy, "%s: %zu entries (want %d)", path, im.n, g_nw);
    for (size_t i = 0; i < im.n; i++) {
        const struct weight * w = weight_named(im.entries[i].name);
        TH_EXPECT(w && im.entries[i].size == (size_t) (w->ne0 * w->n_mat), "%s: entry %s unknown or of the wrong size",
                  path, im.entries[i].name);
        if (w && im.entries[i].size == (size_t) (w->ne0 * w->n_mat)) {
            const float * want = legacy ? w->want_leg : w->want;
            TH_EXPECT(memcmp(im.entries[i].data, want, im.entries[i].size * sizeof(float)) == 0,
                      "%s: entry %s has other values", path, w->name);
        }
    }
    const struct weight * w0 = weight_named("blk.1.attn_k.weight");
    TH_CHECK(w0 && w0->count == 0.0f && w0->want[0] == 1.0f, "the count-0 entry is not set up");
    quant_imatrix_free(&im);
}

static void test_gguf_and_legacy(void) {
    TMP_PATH(im_gguf, "im.gguf");
    TMP_PATH(im_dat, "im.dat");
    TMP_PATH(im_dat0, "im-nodataset.dat");
    TH_CHECK(write_imatrix_gguf(im_gguf, FLAW_NONE), "cannot write %s", im_gguf);
    TH_CHECK(write_imatrix_legacy(im_dat, true) && write_imatrix_legacy(im_dat0, false), "cannot write the .dat files");
    check_reader(im_gguf, false);
    check_reader(im_dat, true);
    TMP_PATH(out, "out.gguf");
    TMP_PATH(ref, "ref.gguf");
    TMP_PATH(plain, "plain.gguf");
    TMP_PATH(log, "run.log");
    char args[4096], text[1024];

    quantize_ref(plain, LLAMA_FTYPE_MOSTLY_Q4_K_M, false, false, NULL);

    // GGUF imatrix, Q4_K_M and IQ4_XS
    static const struct { const char * name; enum llama_ftype ftype; } types[] = {
        { "Q4_K_M", LLAMA_FTYPE_MOSTLY_Q4_K_M }, { "IQ4_XS", LLAMA_FTYPE_MOSTLY_IQ4_XS },
    };
    for (size_t t = 0; t < sizeof(types)/sizeof(types[0]); t++) {
        snprintf(args, sizeof(args), "--imatrix '%s' '%s' '%s' %s 2", im_gguf, g_model, out, types[t].name);
        TH_CHECK(run_quantize(args, log) == 0, "gguf imatrix %s: llama-quantize failed", types[t].name);
        quantize_ref(ref, types[t].ftype, true, false, NULL);
        const int d = count_differing(out, ref);
        TH_CHECK(d == 0, "gguf imatrix %s: %d tensors differ from the in-process quantization", types[t].name, d);
        check_imatrix_keys(out, im_gguf, "calib.txt", g_nw, 7, types[t].name);
        unlink(out);
    }
    snprintf(text, sizeof(text), "load_imatrix: loaded %d importance matrix entries from %s computed on 7 chunks", g_nw,
             im_gguf);
    TH_CHECK(log_has(log, text), "missing line '%s'", text);
    TH_CHECK(log_has(log, "load_imatrix: imatrix datasets=['calib.txt', 'more-calib.txt']"), "datasets line missing");

    // the imatrix matters: against no imatrix, most quantized tensors change
    quantize_ref(ref, LLAMA_FTYPE_MOSTLY_Q4_K_M, true, false, NULL);
    const int changed = count_differing(ref, plain);
    printf("imatrix vs none (Q4_K_M): %d tensors differ\n", changed);
    TH_CHECK(changed >= g_nw / 2, "the imatrix changed only %d tensors", changed);

    // legacy .dat with and without the dataset tail
    snprintf(args, sizeof(args), "--imatrix '%s' '%s' '%s' Q4_K_M 2", im_dat, g_model, out);
    TH_CHECK(run_quantize(args, log) == 0, "legacy imatrix: llama-quantize failed");
    quantize_ref(ref, LLAMA_FTYPE_MOSTLY_Q4_K_M, true, true, NULL);
    TH_CHECK(count_differing(out, ref) == 0, "legacy imatrix: tensors differ from the in-process quantization");
    check_imatrix_keys(out, im_dat, "legacy-calib.txt", g_nw, 9, "legacy");
    TH_CHECK(log_has(log, "is using old format") && log_has(log, "load_legacy_imatrix: imatrix dataset='legacy-calib.txt'"),
             "legacy: format / dataset lines missing");
    snprintf(text, sizeof(text), "load_legacy_imatrix: loaded %d importance matrix entries from %s computed on 9 chunks",
             g_nw, im_dat);
    TH_CHECK(log_has(log, text), "missing line '%s'", text);
    unlink(out);
    snprintf(args, sizeof(args), "--imatrix '%s' '%s' '%s' Q4_K_M 2", im_dat0, g_model, out);
    TH_CHECK(run_quantize(args, log) == 0, "legacy imatrix without dataset: llama-quantize failed");
    TH_CHECK(count_differing(out, ref) == 0, "legacy imatrix without dataset: tensors differ");
    check_imatrix_keys(out, im_dat0, NULL, g_nw, 0, "legacy without dataset");
    unlink(out);

    // --include-weights (repeatable: union) and --exclude-weights
    static const char * const inc[] = { "attn_q", "ffn_up" };
    const struct selection s_inc = { inc, 2, true };
    snprintf(args, sizeof(args), "--imatrix '%s' --include-weights attn_q --include-weights ffn_up '%s' '%s' Q4_K_M 2",
             im_gguf, g_model, out);
    TH_CHECK(run_quantize(args, log) == 0, "--include-weights run failed");
    int n_sel = quantize_ref(ref, LLAMA_FTYPE_MOSTLY_Q4_K_M, true, false, &s_inc);
    TH_CHECK(n_sel > 0 && n_sel < g_nw, "include selection is degenerate (%d)", n_sel);
    TH_CHECK(count_differing(out, ref) == 0, "--include-weights: tensors differ from the reference with %d entries", n_sel);
    check_imatrix_keys(out, im_gguf, "calib.txt", n_sel, 7, "include");
    snprintf(text, sizeof(text), "prepare_imatrix: have %d importance matrix entries", n_sel);
    TH_CHECK(log_has(log, text), "missing line '%s'", text);
    unlink(out);

    static const char * const exc[] = { "blk.0.", "output" };
    const struct selection s_exc = { exc, 2, false };
    snprintf(args, sizeof(args), "--imatrix '%s' --exclude-weights blk.0. --exclude-weights output '%s' '%s' Q4_K_M 2",
             im_gguf, g_model, out);
    TH_CHECK(run_quantize(args, log) == 0, "--exclude-weights run failed");
    n_sel = quantize_ref(ref, LLAMA_FTYPE_MOSTLY_Q4_K_M, true, false, &s_exc);
    TH_CHECK(n_sel > 0 && n_sel < g_nw, "exclude selection is degenerate (%d)", n_sel);
    TH_CHECK(count_differing(out, ref) == 0, "--exclude-weights: tensors differ from the reference with %d entries", n_sel);
    check_imatrix_keys(out, im_gguf, "calib.txt", n_sel, 7, "exclude");
    unlink(out);

    // excluding everything leaves no imatrix at all: the plain quantization, no quantize.imatrix.* keys
    snprintf(args, sizeof(args), "--imatrix '%s' --exclude-weights .weight '%s' '%s' Q4_K_M 2", im_gguf, g_model, out);
    TH_CHECK(run_quantize(args, log) == 0, "exclude-all run failed");
    TH_CHECK(count_differing(out, plain) == 0, "exclude-all: output differs from the quantization without imatrix");
    check_imatrix_keys(out, NULL, NULL, 0, 0, "exclude-all");
    unlink(out);

    // a wrong-sized token_embd entry is only a warning (llama.cpp), and that tensor is quantized without it
    TMP_PATH(im_embd, "im-embd.gguf");
    TH_CHECK(write_imatrix_gguf(im_embd, FLAW_WRONG_SIZE_EMBD), "cannot write %s", im_embd);
    snprintf(args, sizeof(args), "--imatrix '%s' '%s' '%s' Q4_K_M 2", im_embd, g_model, out);
    TH_CHECK(run_quantize(args, log) == 0, "wrong-sized token_embd entry must not be fatal");
    quantize_ref(ref, LLAMA_FTYPE_MOSTLY_Q4_K_M, true, false, NULL);
    TH_CHECK(count_differing(out, ref) == 0, "wrong-sized token_embd entry: tensors differ");
    check_imatrix_keys(out, im_embd, "calib.txt", g_nw + 1, 7, "token_embd entry");
    unlink(out);
    unlink(ref);
    unlink(plain);
}

static void test_override_kv(void) {
    TMP_PATH(im_gguf, "im.gguf");
    TMP_PATH(out, "kv.gguf");
    TMP_PATH(log, "kv.log");
    char args[4096];
    snprintf(args, sizeof(args), "--override-kv test.answer=int:-42 --override-kv test.pi=float:3.5 "
             "--override-kv test.flag=bool:true --override-kv test.word=str:hello "
             "--override-kv general.name=str:renamed --imatrix '%s' '%s' '%s' Q4_0 2", im_gguf, g_model, out);
    TH_CHECK(run_quantize(args, log) == 0, "--override-kv run failed");
    struct gguf_init_params ip = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * g = gguf_init_from_file(out, ip);
    TH_CHECK(g != NULL, "cannot read %s", out);
    if (g) {
        // llama.cpp writes integer overrides as u32 of the absolute value
        const int64_t ki = find_key_typed(g, "test.answer", GGUF_TYPE_UINT32);
        const int64_t kf = find_key_typed(g, "test.pi", GGUF_TYPE_FLOAT32);
        const int64_t kb = find_key_typed(g, "test.flag", GGUF_TYPE_BOOL);
        const int64_t ks = find_key_typed(g, "test.word", GGUF_TYPE_STRING);
        const int64_t kn = find_key_typed(g, "general.name", GGUF_TYPE_STRING);
        TH_CHECK(ki >= 0 && gguf_get_val_u32(g, ki) == 42, "int override not written as u32 42");
        TH_CHECK(kf >= 0 && gguf_get_val_f32(g, kf) == 3.5f, "float override not written");
        TH_CHECK(kb >= 0 && gguf_get_val_bool(g, kb), "bool override not written");
        TH_CHECK(ks >= 0 && strcmp(gguf_get_val_str(g, ks), "hello") == 0, "str override not written");
        TH_CHECK(kn >= 0 && strcmp(gguf_get_val_str(g, kn), "renamed") == 0, "existing key not overridden");
        gguf_free(g);
    }
    check_imatrix_keys(out, im_gguf, "calib.txt", g_nw, 7, "override-kv + imatrix");
    unlink(out);

    static const char * const bad[] = { "nonsense", "k=int:abc", "k=float:x", "k=bool:maybe", "k=blob:1", "=int:1" };
    for (size_t i = 0; i < sizeof(bad)/sizeof(bad[0]); i++) {
        snprintf(args, sizeof(args), "--override-kv '%s' '%s' '%s' Q4_0", bad[i], g_model, out);
        TH_CHECK(run_quantize(args, log) == 1, "--override-kv '%s' accepted", bad[i]);
        TH_CHECK(log_has(log, "override"), "--override-kv '%s': no clear message", bad[i]);
        TH_CHECK(!file_exists(out), "--override-kv '%s' left an output file", bad[i]);
    }
}

// llama-quantize with this imatrix must fail with exit status 1, say `msg`, and leave no output behind
static void expect_failure(const char * imatrix, const char * extra, const char * msg, const char * label) {
    TMP_PATH(out, "fail.gguf");
    TMP_PATH(log, "fail.log");
    char tmpname[600];
    snprintf(tmpname, sizeof(tmpname), "%s.tmp", out);
    char args[4096];
    snprintf(args, sizeof(args), "%s --imatrix '%s' '%s' '%s' Q4_K_M 2", extra, imatrix, g_model, out);
    const int rc = run_quantize(args, log);
    TH_CHECK(rc == 1, "%s: exit status %d, want 1", label, rc);
    TH_CHECK(log_has(log, msg), "%s: the log does not say '%s'", label, msg);
    TH_CHECK(!file_exists(out) && !file_exists(tmpname), "%s: an output file was left", label);
    unlink(out);
    unlink(tmpname);
}

static void test_errors(void) {
    expect_failure(tmp_path("no-such-imatrix.gguf"), "", "failed to open", "missing file");

    static const struct { enum gguf_flaw flaw; const char * msg; const char * label; } gguf_cases[] = {
        { FLAW_NO_CHUNK_SIZE, "missing imatrix metadata",            "gguf without imatrix.chunk_size" },
        { FLAW_NO_COUNTS,     "mismatched sums and counts",          "gguf in_sum2 without counts" },
        { FLAW_COUNTS_LENGTH, "counts F32 [1, n_mat]",               "gguf counts of the wrong length" },
        { FLAW_NAN,           "invalid importance value",            "gguf NaN sum" },
        { FLAW_WRONG_SIZE,    "imatrix size 224 is different from tensor size 256", "gguf wrong-sized entry" },
    };
    TMP_PATH(bad, "bad.gguf");
    for (size_t i = 0; i < sizeof(gguf_cases)/sizeof(gguf_cases[0]); i++) {
        TH_CHECK(write_imatrix_gguf(bad, gguf_cases[i].flaw), "cannot write %s", bad);
        expect_failure(bad, "", gguf_cases[i].msg, gguf_cases[i].label);
    }

    // truncated files, either format
    size_t n_gguf = 0, n_dat = 0;
    uint8_t * gguf = th_read_file(tmp_path("im.gguf"), &n_gguf);
    uint8_t * dat  = th_read_file(tmp_path("im.dat"), &n_dat);
    TH_CHECK(gguf && dat, "cannot read the imatrix files back");
    if (gguf && dat) {
        TH_CHECK(th_write_file(bad, gguf, n_gguf / 2), "cannot write %s", bad);
        expect_failure(bad, "", "failed to read GGUF imatrix file", "truncated gguf");
        TH_CHECK(th_write_file(bad, gguf, 4), "cannot write %s", bad);
        expect_failure(bad, "", "failed to read GGUF imatrix file", "gguf magic only");

        TMP_PATH(bad_dat, "bad.dat");
        const size_t cuts[] = { 0, 2, 4, 6, 10, n_dat / 3, n_dat - 20, n_dat - 3 };
        for (size_t i = 0; i < sizeof(cuts)/sizeof(cuts[0]); i++) {
            char label[64];
            snprintf(label, sizeof(label), "legacy cut at %zu of %zu bytes", cuts[i], n_dat);
            TH_CHECK(th_write_file(bad_dat, dat, cuts[i]), "cannot write %s", bad_dat);
            expect_failure(bad_dat, "", "load_legacy_imatrix: ", label);
        }
        // no entries; a negative name length; a huge value count
        int32_t hdr[1] = { 0 };
        TH_CHECK(th_write_file(bad_dat, hdr, sizeof(hdr)), "cannot write %s", bad_dat);
        expect_failure(bad_dat, "", "no data in file", "legacy with 0 entries");
        uint8_t * mod = malloc(n_dat);
        if (mod) {
            memcpy(mod, dat, n_dat);
            const int32_t neg = -5;
            memcpy(mod + 4, &neg, 4);
            TH_CHECK(th_write_file(bad_dat, mod, n_dat), "cannot write %s", bad_dat);
            expect_failure(bad_dat, "", "failed reading name for entry 1", "legacy negative name length");
            memcpy(mod, dat, n_dat);
            int32_t len0 = 0;
            memcpy(&len0, dat + 4, 4);
            const int32_t huge = 0x7fffffff;
            memcpy(mod + 8 + len0 + 4, &huge, 4);
            TH_CHECK(th_write_file(bad_dat, mod, n_dat), "cannot write %s", bad_dat);
            expect_failure(bad_dat, "", "failed reading data for entry 1", "legacy huge value count");
            free(mod);
        }
        unlink(bad_dat);
    }
    free(gguf);
    free(dat);
    unlink(bad);

    // both selections at once (llama.cpp refuses), and --imatrix without its value
    TMP_PATH(out, "fail.gguf");
    TMP_PATH(log, "fail.log");
    char args[4096];
    snprintf(args, sizeof(args), "--imatrix '%s' --include-weights attn --exclude-weights ffn '%s' '%s' Q4_K_M",
             tmp_path("im.gguf"), g_model, out);
    TH_CHECK(run_quantize(args, log) == 1 && log_has(log, "cannot be used together"),
             "--include-weights with --exclude-weights must be refused");
    TH_CHECK(!file_exists(out), "refused selection left an output file");
    TH_CHECK(run_quantize("--imatrix", log) == 1 && log_has(log, "--imatrix needs a value"), "--imatrix without a value");
    unlink(log);
}

// the reader on damaged copies of good files: it may accept or refuse, but must neither crash nor return
// entries that the library would read out of bounds
static void test_fuzz(void) {
    size_t n_dat = 0, n_gguf = 0;
    uint8_t * dat  = th_read_file(tmp_path("im.dat"), &n_dat);
    uint8_t * gguf = th_read_file(tmp_path("im.gguf"), &n_gguf);
    TH_CHECK(dat && gguf && n_dat > 64 && n_gguf > 64, "cannot read the imatrix files back");
    if (!dat || !gguf) {
        free(dat);
        free(gguf);
        return;
    }
    uint8_t * buf = malloc(n_dat > n_gguf ? n_dat : n_gguf);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int accepted = 0, refused = 0;
    char err[1024];
    ggml_log_set(th_log_silent, NULL);
    for (int it = 0; it < 3000; it++) {
        const bool legacy = it % 10 != 9;  // the GGUF reader has its own fuzzers; a few rounds through files here
        const uint8_t * src = legacy ? dat : gguf;
        const size_t n_src  = legacy ? n_dat : n_gguf;
        size_t n = n_src;
        const int mode = (int) (th_xorshift64(&rng) % 3);
        if (mode != 1) {
            n = (size_t) (th_xorshift64(&rng) % (n_src + 1));  // truncation
        }
        memcpy(buf, src, n);
        if (mode != 0 && n > 0) {
            const int flips = 1 + (int) (th_xorshift64(&rng) % 4);
            for (int k = 0; k < flips; k++) {
                // mostly in the headers, where a flip changes a count or a length
                const size_t limit = th_xorshift64(&rng) % 2 ? (n < 256 ? n : 256) : n;
                buf[th_xorshift64(&rng) % limit] ^= (uint8_t) (1u << (th_xorshift64(&rng) % 8));
            }
        }
        struct quant_imatrix im;
        bool ok;
        if (legacy) {
            ok = quant_imatrix_parse_legacy(buf, n, "fuzz.dat", &im, err, sizeof(err));
        } else {
            TMP_PATH(path, "fuzz.gguf");
            ok = th_write_file(path, buf, n) && quant_imatrix_load(path, &im, err, sizeof(err));
        }
        if (ok) {
            accepted++;
            for (size_t i = 0; i < im.n; i++) {
                TH_EXPECT(im.entries[i].name && im.entries[i].name[0] && im.entries[i].data && im.entries[i].size > 0,
                          "fuzz round %d: accepted an empty entry", it);
                for (size_t k = 0; k < im.entries[i].size; k++) {
                    TH_EXPECT(isfinite(im.entries[i].data[k]) && im.entries[i].data[k] >= 0.0f,
                              "fuzz round %d: accepted a bad value", it);
                }
            }
            const struct llama_model_imatrix_data * p = quant_imatrix_params(&im);
            size_t np = 0;
            while (p && p[np].name) {
                np++;
            }
            TH_EXPECT(np == im.n, "fuzz round %d: params array has %zu of %zu entries", it, np, im.n);
            quant_imatrix_free(&im);
        } else {
            refused++;
            TH_EXPECT(err[0] != '\0' && im.n == 0 && im.entries == NULL, "fuzz round %d: refusal without a message", it);
        }
    }
    ggml_log_set(NULL, NULL);
    printf("fuzz: %d accepted, %d refused\n", accepted, refused);
    TH_CHECK(accepted > 0 && refused > 0, "fuzzing never hit one of the outcomes (%d/%d)", accepted, refused);
    unlink(tmp_path("fuzz.gguf"));
    free(buf);
    free(dat);
    free(gguf);
}

static void remove_tmp_dir(void) {
    th_clear_dir(g_tmp);
    rmdir(g_tmp);
}

int main(int argc, char ** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s path/to/llama-quantize\n", argv[0]);
        return 1;
    }
    g_exe = argv[1];
    g_model = th_data_path("models/synthetic/llama-F32.gguf");
    if (!th_require_file(g_model)) {
        return th_finish();
    }
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/test-quantize-imatrix-XXXXXX");
    if (!mkdtemp(g_tmp)) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    llama_log_set(log_errors_only, NULL);
    TH_CHECK(collect_weights(), "cannot read the weights of %s", g_model);
    if (g_nw > 0) {
        test_gguf_and_legacy();
        test_override_kv();
        test_errors();
        test_fuzz();
    }
    for (int i = 0; i < g_nw; i++) {
        free(g_w[i].sums);
        free(g_w[i].legacy);
        free(g_w[i].want);
        free(g_w[i].want_leg);
    }
    remove_tmp_dir();
    return th_finish();
}
