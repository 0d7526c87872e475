// llama_model_quantize / llama-quantize / llama-gen-model against files written by llama.cpp's quantizer.
//
// Reference: the shared synthetic and KJV models were quantized by llama.cpp's llama-quantize from their F32
// originals (default mixes, no imatrix). Quantizing the same F32 input here must give every tensor the same
// type and the same bytes. For the architectures whose F32 original is not shipped, the F16 file upcast to
// F32 is that original (all weights were rounded to F16 values before writing, see the synthetic README).
//
//   test-quantize [path/to/llama-quantize [path/to/llama-gen-model]]
// The program paths enable the command-line checks (exit codes, messages, no leftover output files).

#include "harness-ggml.h"
#include "harness-run.h"

#include "ggml.h"
#include "gguf.h"
#include "llama.h"

#include <sys/wait.h>
#include <unistd.h>

static char g_tmp[256];

static bool file_exists(const char * path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static const char * tmp_path(const char * name) {
    static char bufs[8][512];
    static int slot = 0;
    char * out = bufs[slot];
    slot = (slot + 1) % 8;
    snprintf(out, sizeof(bufs[0]), "%s/%s", g_tmp, name);
    return out;
}

// a tensor's bytes read straight from the file
static void * read_tensor(FILE * f, const struct gguf_context * g, int64_t id) {
    const size_t n = gguf_get_tensor_size(g, id);
    void * buf = malloc(n ? n : 1);
    if (!buf) {
        return NULL;
    }
    if (fseek(f, (long) (gguf_get_data_offset(g) + gguf_get_tensor_offset(g, id)), SEEK_SET) != 0 ||
        fread(buf, 1, n, f) != n) {
        free(buf);
        return NULL;
    }
    return buf;
}

struct cmp_result {
    int n_ref;
    int n_found;
    int same_type;
    int same_bytes;
    int per_type[GGML_TYPE_COUNT];  // reference types of the tensors that matched bit-exactly
};

// per-tensor comparison of two GGUF files: names, types, sizes and bytes
static struct cmp_result compare_tensors(const char * ours, const char * ref, const char * label) {
    struct cmp_result r;
    memset(&r, 0, sizeof(r));
    struct gguf_init_params ip = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * go = gguf_init_from_file(ours, ip);
    struct gguf_context * gr = gguf_init_from_file(ref, ip);
    FILE * fo = fopen(ours, "rb");
    FILE * fr = fopen(ref, "rb");
    TH_CHECK(go && gr && fo && fr, "%s: cannot open %s or %s", label, ours, ref);
    if (go && gr && fo && fr) {
        r.n_ref = (int) gguf_get_n_tensors(gr);
        TH_CHECK(gguf_get_n_tensors(go) == gguf_get_n_tensors(gr), "%s: %lld tensors, reference has %lld", label,
                 (long long) gguf_get_n_tensors(go), (long long) gguf_get_n_tensors(gr));
        for (int64_t i = 0; i < gguf_get_n_tensors(gr); i++) {
            const char * name = gguf_get_tensor_name(gr, i);
            const int64_t j = gguf_find_tensor(go, name);
            TH_EXPECT(j >= 0, "%s: tensor %s missing", label, name);
            if (j < 0) {
                continue;
            }
            r.n_found++;
            const enum ggml_type tr = gguf_get_tensor_type(gr, i);
            const enum ggml_type to = gguf_get_tensor_type(go, j);
            TH_EXPECT(tr == to, "%s: tensor %s is %s, reference %s", label, name, ggml_type_name(to), ggml_type_name(tr));
            if (tr != to || gguf_get_tensor_size(gr, i) != gguf_get_tensor_size(go, j)) {
                continue;
            }
            r.same_type++;
            void * a = read_tensor(fr, gr, i);
            void * b = read_tensor(fo, go, j);
            const bool same = a && b && memcmp(a, b, gguf_get_tensor_size(gr, i)) == 0;
            TH_EXPECT(same, "%s: tensor %s (%s) bytes differ", label, name, ggml_type_name(tr));
            if (same) {
                r.same_bytes++;
                r.per_type[tr]++;
            }
            free(a);
            free(b);
        }
        // general.file_type and general.quantization_version are what llama.cpp writes
        const int64_t ko = gguf_find_key(go, "general.file_type");
        const int64_t kr = gguf_find_key(gr, "general.file_type");
        TH_CHECK(ko >= 0 && kr >= 0 && gguf_get_val_u32(go, ko) == gguf_get_val_u32(gr, kr),
                 "%s: general.file_type differs", label);
        const int64_t qo = gguf_find_key(go, "general.quantization_version");
        TH_CHECK(qo >= 0 && gguf_get_val_u32(go, qo) == 2, "%s: general.quantization_version is not 2", label);
    }
    char counts[512] = "";
    size_t len = 0;
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        if (r.per_type[t] && len < sizeof(counts)) {
            len += (size_t) snprintf(counts + len, sizeof(counts) - len, " %s:%d", ggml_type_name((enum ggml_type) t), r.per_type[t]);
        }
    }
    printf("%-22s %3d/%3d same type, %3d/%3d bit-exact  [%s ]\n", label, r.same_type, r.n_ref, r.same_bytes, r.n_ref, counts);
    TH_CHECK(r.n_ref > 0 && r.same_bytes == r.n_ref, "%s: %d of %d tensors bit-exact", label, r.same_bytes, r.n_ref);
    if (fo) fclose(fo);
    if (fr) fclose(fr);
    if (go) gguf_free(go);
    if (gr) gguf_free(gr);
    return r;
}

static bool files_identical(const char * a, const char * b) {
    size_t na = 0, nb = 0;
    void * x = th_read_file(a, &na);
    void * y = th_read_file(b, &nb);
    const bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

static uint32_t quantize(const char * in, const char * out, enum llama_ftype ftype, int nthread) {
    struct llama_model_quantize_params p = llama_model_quantize_default_params();
    p.ftype = ftype;
    p.nthread = nthread;
    return llama_model_quantize(in, out, &p);
}

static void test_synthetic_llama(void) {
    char f32[4096];  // th_data_path's buffers are reused after 8 calls
    snprintf(f32, sizeof(f32), "%s", th_data_path("models/synthetic/llama-F32.gguf"));
    if (!th_require_file(f32)) {
        return;
    }
    static const struct { const char * name; enum llama_ftype ftype; } types[] = {
        { "Q8_0", LLAMA_FTYPE_MOSTLY_Q8_0 }, { "Q4_0", LLAMA_FTYPE_MOSTLY_Q4_0 }, { "Q4_1", LLAMA_FTYPE_MOSTLY_Q4_1 },
        { "Q5_0", LLAMA_FTYPE_MOSTLY_Q5_0 }, { "Q5_1", LLAMA_FTYPE_MOSTLY_Q5_1 }, { "Q2_K", LLAMA_FTYPE_MOSTLY_Q2_K },
        { "Q3_K_M", LLAMA_FTYPE_MOSTLY_Q3_K_M }, { "Q4_K_M", LLAMA_FTYPE_MOSTLY_Q4_K_M },
        { "Q5_K_M", LLAMA_FTYPE_MOSTLY_Q5_K_M }, { "Q6_K", LLAMA_FTYPE_MOSTLY_Q6_K },
        { "IQ4_NL", LLAMA_FTYPE_MOSTLY_IQ4_NL }, { "IQ4_XS", LLAMA_FTYPE_MOSTLY_IQ4_XS },
        { "F16", LLAMA_FTYPE_MOSTLY_F16 }, { "BF16", LLAMA_FTYPE_MOSTLY_BF16 },
    };
    for (size_t i = 0; i < sizeof(types)/sizeof(types[0]); i++) {
        const char * ref = th_data_path("models/synthetic/llama-%s.gguf", types[i].name);
        if (!th_require_file(ref)) {
            continue;
        }
        char out_name[64], label[64];
        snprintf(out_name, sizeof(out_name), "llama-%s.gguf", types[i].name);
        snprintf(label, sizeof(label), "llama %s", types[i].name);
        const char * out = tmp_path(out_name);
        // thread counts vary so that chunking cannot change the bytes
        TH_CHECK(quantize(f32, out, types[i].ftype, 1 + (int) (i % 3)) == 0, "quantizing to %s failed", types[i].name);
        compare_tensors(out, ref, label);
        // same KV order and values too: the whole file is llama.cpp's
        TH_CHECK(files_identical(out, ref), "%s: file differs from llama.cpp's", label);
        unlink(out);
    }
}

static void test_other_archs(void) {
    static const char * archs[] = { "qwen2", "qwen3", "gemma3", "phi3", "granite", "exaone4", "qwen3moe" };
    for (size_t i = 0; i < sizeof(archs)/sizeof(archs[0]); i++) {
        const char * f16 = th_data_path("models/synthetic/%s-F16.gguf", archs[i]);
        const char * ref = th_data_path("models/synthetic/%s-Q4_K_M.gguf", archs[i]);
        if (!th_require_file(f16) || !th_require_file(ref)) {
            continue;
        }
        const char * f32 = tmp_path("arch-F32.gguf");
        const char * out = tmp_path("arch-Q4_K_M.gguf");
        TH_CHECK(th_gguf_upcast_f16(f16, f32), "%s: cannot write the F32 upcast", archs[i]);
        TH_CHECK(quantize(f32, out, LLAMA_FTYPE_MOSTLY_Q4_K_M, 2) == 0, "%s: quantizing failed", archs[i]);
        char label[64];
        snprintf(label, sizeof(label), "%s Q4_K_M", archs[i]);
        compare_tensors(out, ref, label);
        unlink(out);
        unlink(f32);
    }
}

static void test_kjv(void) {
    const char * f32 = th_data_path("models/kjv/kjv-target-f32.gguf");
    if (!th_require_file(f32)) {
        return;
    }
    static const struct { const char * name; enum llama_ftype ftype; } types[] = {
        { "q4_k_m", LLAMA_FTYPE_MOSTLY_Q4_K_M }, { "q8_0", LLAMA_FTYPE_MOSTLY_Q8_0 }, { "q4_0", LLAMA_FTYPE_MOSTLY_Q4_0 },
    };
    for (size_t i = 0; i < sizeof(types)/sizeof(types[0]); i++) {
        const char * ref = th_data_path("models/kjv/kjv-target-%s.gguf", types[i].name);
        if (!th_require_file(ref)) {
            continue;
        }
        const char * out = tmp_path("kjv.gguf");
        TH_CHECK(quantize(f32, out, types[i].ftype, 2) == 0, "kjv %s: quantizing failed", types[i].name);
        char label[64];
        snprintf(label, sizeof(label), "kjv-target %s", types[i].name);
        compare_tensors(out, ref, label);
        unlink(out);
    }
}

static enum ggml_type tensor_type(const char * path, const char * name) {
    struct gguf_init_params ip = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * g = gguf_init_from_file(path, ip);
    enum ggml_type t = GGML_TYPE_COUNT;
    if (g) {
        const int64_t id = gguf_find_tensor(g, name);
        if (id >= 0) {
            t = gguf_get_tensor_type(g, id);
        }
        gguf_free(g);
    }
    return t;
}

// stories260K: an ecosystem-converted file with n_ff 172 (not a multiple of 32); the shared Q8_0/Q4_0 files
// were made with --tensor-type ffn_down=f16, and output.weight (64 columns) falls back from q6_K to q8_0
static void test_stories(void) {
    char f32[4096];
    snprintf(f32, sizeof(f32), "%s", th_data_path("models/stories260K-f32.gguf"));
    if (!th_require_file(f32)) {
        return;
    }
    static const struct { const char * name; enum llama_ftype ftype; } types[] = {
        { "q8_0", LLAMA_FTYPE_MOSTLY_Q8_0 }, { "q4_0", LLAMA_FTYPE_MOSTLY_Q4_0 },
    };
    const struct llama_model_tensor_override tto[] = { { "ffn_down", GGML_TYPE_F16 }, { NULL, GGML_TYPE_COUNT } };
    const char * out = tmp_path("stories.gguf");
    for (size_t i = 0; i < sizeof(types)/sizeof(types[0]); i++) {
        const char * ref = th_data_path("models/stories260K-%s.gguf", types[i].name);
        if (!th_require_file(ref)) {
            continue;
        }
        struct llama_model_quantize_params p = llama_model_quantize_default_params();
        p.ftype = types[i].ftype;
        p.nthread = 2;
        p.tt_overrides = tto;
        TH_CHECK(llama_model_quantize(f32, out, &p) == 0, "stories %s: quantizing failed", types[i].name);
        char label[64];
        snprintf(label, sizeof(label), "stories260K %s", types[i].name);
        compare_tensors(out, ref, label);
        unlink(out);
    }
    // without the override, ffn_down (172 columns) has no Q4_0 layout and no fallback: refused, no file
    struct llama_model_quantize_params p = llama_model_quantize_default_params();
    p.ftype = LLAMA_FTYPE_MOSTLY_Q4_0;
    TH_CHECK(llama_model_quantize(f32, out, &p) != 0, "172-column ffn_down as q4_0 must be refused");
    TH_CHECK(!file_exists(out), "refused quantization left an output file");
    // with Q4_K_M the same tensor falls back to f16 (q4_K -> q5_0 -> f16), as in llama.cpp
    p.ftype = LLAMA_FTYPE_MOSTLY_Q4_K_M;
    TH_CHECK(llama_model_quantize(f32, out, &p) == 0, "stories Q4_K_M failed");
    TH_CHECK(tensor_type(out, "blk.0.ffn_down.weight") == GGML_TYPE_F16, "ffn_down should fall back to f16");
    TH_CHECK(tensor_type(out, "blk.0.attn_q.weight") == GGML_TYPE_Q5_0, "attn_q should fall back to q5_0");
    TH_CHECK(tensor_type(out, "blk.2.attn_v.weight") == GGML_TYPE_Q8_0, "attn_v (q6_K) should fall back to q8_0");
    unlink(out);
}

// options whose effect llama.cpp documents: --pure, --leave-output-tensor, the output/embedding overrides
static void test_options(void) {
    const char * f32 = th_data_path("models/synthetic/llama-F32.gguf");
    if (!th_require_file(f32)) {
        return;
    }
    const char * out = tmp_path("opt.gguf");

    struct llama_model_quantize_params p = llama_model_quantize_default_params();
    TH_CHECK(p.ftype == LLAMA_FTYPE_MOSTLY_Q8_0 && p.output_tensor_type == GGML_TYPE_COUNT &&
             p.token_embedding_type == GGML_TYPE_COUNT && p.quantize_output_tensor && !p.allow_requantize &&
             !p.pure && !p.only_copy && p.nthread == 0, "default params differ from llama.cpp's");

    // --pure: every quantizable tensor gets the default type (no Q6_K output, no layer bumps)
    p.ftype = LLAMA_FTYPE_MOSTLY_Q4_K_M;
    p.pure = true;
    TH_CHECK(llama_model_quantize(f32, out, &p) == 0, "pure Q4_K_M failed");
    TH_CHECK(tensor_type(out, "output.weight") == GGML_TYPE_Q4_K, "pure: output.weight is %s",
             ggml_type_name(tensor_type(out, "output.weight")));
    TH_CHECK(tensor_type(out, "blk.3.ffn_down.weight") == GGML_TYPE_Q4_K, "pure: blk.3.ffn_down is not q4_K");
    TH_CHECK(tensor_type(out, "blk.3.attn_v.weight") == GGML_TYPE_Q4_K, "pure: blk.3.attn_v is not q4_K");
    TH_CHECK(tensor_type(out, "blk.0.attn_norm.weight") == GGML_TYPE_F32, "pure: norms must stay f32");

    // --leave-output-tensor
    p = llama_model_quantize_default_params();
    p.ftype = LLAMA_FTYPE_MOSTLY_Q4_0;
    p.quantize_output_tensor = false;
    TH_CHECK(llama_model_quantize(f32, out, &p) == 0, "leave-output-tensor failed");
    TH_CHECK(tensor_type(out, "output.weight") == GGML_TYPE_F32, "output.weight should stay f32");
    TH_CHECK(tensor_type(out, "token_embd.weight") == GGML_TYPE_Q4_0, "token_embd should be q4_0");

    // --output-tensor-type / --token-embedding-type
    p = llama_model_quantize_default_params();
    p.ftype = LLAMA_FTYPE_MOSTLY_Q4_K_M;
    p.output_tensor_type = GGML_TYPE_Q8_0;
    p.token_embedding_type = GGML_TYPE_F16;
    TH_CHECK(llama_model_quantize(f32, out, &p) == 0, "type overrides failed");
    TH_CHECK(tensor_type(out, "output.weight") == GGML_TYPE_Q8_0, "output.weight should be q8_0");
    TH_CHECK(tensor_type(out, "token_embd.weight") == GGML_TYPE_F16, "token_embd should be f16");
    TH_CHECK(tensor_type(out, "blk.2.ffn_down.weight") == GGML_TYPE_Q6_K, "mix rules still apply elsewhere");

    // requantize: Q8_0 -> Q4_0 only with allow_requantize
    const char * q8 = th_data_path("models/synthetic/llama-Q8_0.gguf");
    if (th_require_file(q8)) {
        unlink(out);
        p = llama_model_quantize_default_params();
        p.ftype = LLAMA_FTYPE_MOSTLY_Q4_0;
        TH_CHECK(llama_model_quantize(q8, out, &p) != 0, "requantizing without allow_requantize must fail");
        TH_CHECK(!file_exists(out), "a failed quantization left %s", out);
        char tmpname[600];
        snprintf(tmpname, sizeof(tmpname), "%s.tmp", out);
        TH_CHECK(!file_exists(tmpname), "a failed quantization left %s", tmpname);
        p.allow_requantize = true;
        TH_CHECK(llama_model_quantize(q8, out, &p) == 0, "requantizing with allow_requantize failed");
        TH_CHECK(tensor_type(out, "blk.0.ffn_up.weight") == GGML_TYPE_Q4_0, "requantized tensor is not q4_0");
        // 1-D tensors are copied as they are
        TH_CHECK(tensor_type(out, "blk.0.ffn_norm.weight") == GGML_TYPE_F32, "norm changed type");
    }

    // refusals: missing input, unknown ftype, a type this build cannot write
    unlink(out);
    p = llama_model_quantize_default_params();
    TH_CHECK(llama_model_quantize(tmp_path("does-not-exist.gguf"), out, &p) != 0, "missing input must fail");
    TH_CHECK(!file_exists(out), "missing input left an output file");
    p.ftype = (enum llama_ftype) 9999;
    TH_CHECK(llama_model_quantize(f32, out, &p) != 0, "unknown ftype must fail");
    p.ftype = LLAMA_FTYPE_MOSTLY_IQ2_XXS;
    TH_CHECK(llama_model_quantize(f32, out, &p) != 0, "IQ2_XXS without imatrix must fail");
    TH_CHECK(!file_exists(out), "refused quantization left an output file");
    TH_CHECK(llama_model_quantize(NULL, out, &p) != 0, "NULL input must fail");

    // a non-GGUF input
    const char * junk = tmp_path("junk.gguf");
    FILE * f = fopen(junk, "wb");
    if (f) {
        fputs("this is not a gguf file", f);
        fclose(f);
    }
    p = llama_model_quantize_default_params();
    TH_CHECK(llama_model_quantize(junk, out, &p) != 0, "non-GGUF input must fail");
    TH_CHECK(!file_exists(out), "non-GGUF input left an output file");
    unlink(junk);
    unlink(out);
}

static int run(const char * cmd, const char * log) {
    return th_run_shell(cmd, log);
}

static bool log_has(const char * log, const char * text) {
    return th_file_has(log, text);
}

static void test_cli(const char * exe) {
    const char * f32 = th_data_path("models/synthetic/llama-F32.gguf");
    const char * q8  = th_data_path("models/synthetic/llama-Q8_0.gguf");
    if (!th_require_file(f32) || !th_require_file(q8)) {
        return;
    }
    const char * out = tmp_path("cli.gguf");
    const char * log = tmp_path("cli.log");
    char cmd[3072];

    snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' q8_0 2", exe, f32, out);
    TH_CHECK(run(cmd, log) == 0, "llama-quantize Q8_0 failed");
    TH_CHECK(files_identical(out, q8), "llama-quantize Q8_0 output differs from llama.cpp's");
    TH_CHECK(log_has(log, "[   1/  39] output.weight") && log_has(log, "converting to q8_0 .. size =") &&
             log_has(log, "quant size  ="), "progress lines missing");
    unlink(out);

    // numeric file type id (7 = Q8_0)
    snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' 7", exe, f32, out);
    TH_CHECK(run(cmd, log) == 0 && files_identical(out, q8), "numeric ftype 7 is not Q8_0");
    unlink(out);

    snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' Q9_9", exe, f32, out);
    TH_CHECK(run(cmd, log) == 1, "unknown type must exit 1");
    TH_CHECK(log_has(log, "invalid ftype 'Q9_9'"), "unknown type: no clear message");
    TH_CHECK(!file_exists(out), "unknown type left an output file");

    snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' Q4_0", exe, q8, out);
    TH_CHECK(run(cmd, log) == 1, "requantize without flag must exit 1");
    TH_CHECK(log_has(log, "requantizing from type q8_0 is disabled"), "requantize: no clear message");
    TH_CHECK(!file_exists(out), "refused requantize left an output file");

    snprintf(cmd, sizeof(cmd), "'%s' --allow-requantize '%s' '%s' Q4_0", exe, q8, out);
    TH_CHECK(run(cmd, log) == 0 && file_exists(out), "--allow-requantize failed");
    unlink(out);

    snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' Q4_0", exe, tmp_path("missing.gguf"), out);
    TH_CHECK(run(cmd, log) == 1, "missing input must exit 1");
    TH_CHECK(log_has(log, "failed to quantize model from"), "missing input: no clear message");
    TH_CHECK(!file_exists(out), "missing input left an output file");

    snprintf(cmd, sizeof(cmd), "'%s' --output-tensor-type q9_x '%s' '%s' Q4_0", exe, f32, out);
    TH_CHECK(run(cmd, log) == 1 && log_has(log, "invalid ggml_type 'q9_x'"), "bad --output-tensor-type accepted");

    snprintf(cmd, sizeof(cmd), "'%s' --pure --leave-output-tensor --token-embedding-type q8_0 '%s' '%s' Q4_K_M 2",
             exe, f32, out);
    TH_CHECK(run(cmd, log) == 0, "options run failed");
    TH_CHECK(tensor_type(out, "output.weight") == GGML_TYPE_F32, "--leave-output-tensor ignored");
    TH_CHECK(tensor_type(out, "token_embd.weight") == GGML_TYPE_Q8_0, "--token-embedding-type ignored");
    TH_CHECK(tensor_type(out, "blk.3.ffn_down.weight") == GGML_TYPE_Q4_K, "--pure ignored");
    unlink(out);

    snprintf(cmd, sizeof(cmd), "'%s' --tensor-type ffn_down=q8_0 '%s' '%s' Q4_0", exe, f32, out);
    TH_CHECK(run(cmd, log) == 0, "--tensor-type run failed");
    TH_CHECK(tensor_type(out, "blk.1.ffn_down.weight") == GGML_TYPE_Q8_0, "--tensor-type ignored");
    TH_CHECK(tensor_type(out, "blk.1.ffn_up.weight") == GGML_TYPE_Q4_0, "--tensor-type applied too widely");
    unlink(out);

    snprintf(cmd, sizeof(cmd), "'%s' --dry-run '%s' '%s' Q4_K_M", exe, f32, out);
    TH_CHECK(run(cmd, log) == 0 && log_has(log, "(q6_K)") && log_has(log, "quant size  =     1.98 MiB"),
             "--dry-run did not report the Q4_K_M sizes");
    TH_CHECK(!file_exists(out), "--dry-run wrote a file");

    snprintf(cmd, sizeof(cmd), "'%s'", exe);
    TH_CHECK(run(cmd, log) == 1 && log_has(log, "usage:"), "no arguments must print usage and exit 1");
    unlink(log);
}

static double tensor_stats(FILE * f, const struct gguf_context * g, int64_t id, double * sd) {
    void * raw = read_tensor(f, g, id);
    const enum ggml_type t = gguf_get_tensor_type(g, id);
    const size_t n = gguf_get_tensor_size(g, id) / (t == GGML_TYPE_F16 ? 2 : 4);
    double s = 0, s2 = 0;
    for (size_t i = 0; raw && i < n; i++) {
        const double v = t == GGML_TYPE_F16 ? ggml_fp16_to_fp32(((const ggml_fp16_t *) raw)[i]) : ((const float *) raw)[i];
        s += v;
        s2 += v * v;
    }
    free(raw);
    const double mean = n ? s / (double) n : 0;
    *sd = n ? sqrt(s2 / (double) n - mean * mean) : 0;
    return mean;
}

static uint32_t key_u32(const struct gguf_context * g, const char * key) {
    const int64_t id = gguf_find_key(g, key);
    return id >= 0 && gguf_get_kv_type(g, id) == GGUF_TYPE_UINT32 ? gguf_get_val_u32(g, id) : 0xffffffffu;
}

static void test_gen_model(const char * exe) {
    const char * vocab = th_data_path("models/vocab/ggml-vocab-llama-spm.gguf");
    if (!th_require_file(vocab)) {
        return;
    }
    const char * out = tmp_path("gen.gguf");
    const char * log = tmp_path("gen.log");
    char cmd[3072];
    snprintf(cmd, sizeof(cmd), "'%s' -o '%s' --vocab-from '%s' --n-embd 128 --n-layer 3 --n-head 4 --n-head-kv 2 "
             "--n-ff 384 --ctx 256 --type f16 --seed 7", exe, out, vocab);
    TH_CHECK(run(cmd, log) == 0, "llama-gen-model failed");

    struct gguf_init_params ip = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * g = gguf_init_from_file(out, ip);
    struct gguf_context * gv = gguf_init_from_file(vocab, ip);
    TH_CHECK(g != NULL && gv != NULL, "generated model does not load with gguf_init_from_file");
    if (g && gv) {
        const int64_t a = gguf_find_key(g, "general.architecture");
        TH_CHECK(a >= 0 && strcmp(gguf_get_val_str(g, a), "llama") == 0, "architecture is not llama");
        TH_CHECK(key_u32(g, "llama.embedding_length") == 128, "embedding_length");
        TH_CHECK(key_u32(g, "llama.block_count") == 3, "block_count");
        TH_CHECK(key_u32(g, "llama.attention.head_count") == 4, "head_count");
        TH_CHECK(key_u32(g, "llama.attention.head_count_kv") == 2, "head_count_kv");
        TH_CHECK(key_u32(g, "llama.feed_forward_length") == 384, "feed_forward_length");
        TH_CHECK(key_u32(g, "llama.context_length") == 256, "context_length");
        TH_CHECK(key_u32(g, "llama.rope.dimension_count") == 32, "rope.dimension_count");
        TH_CHECK(gguf_find_key(g, "llama.attention.layer_norm_rms_epsilon") >= 0, "rms epsilon missing");
        TH_CHECK(gguf_find_key(g, "llama.rope.freq_base") >= 0, "rope.freq_base missing");
        TH_CHECK(key_u32(g, "general.file_type") == 1, "file_type is not MOSTLY_F16");
        // the tokenizer is the vocab file's, value for value
        const int64_t t1 = gguf_find_key(g, "tokenizer.ggml.tokens");
        const int64_t t2 = gguf_find_key(gv, "tokenizer.ggml.tokens");
        TH_CHECK(t1 >= 0 && t2 >= 0 && gguf_get_arr_n(g, t1) == gguf_get_arr_n(gv, t2), "token list not copied");
        if (t1 >= 0 && t2 >= 0 && gguf_get_arr_n(g, t1) == gguf_get_arr_n(gv, t2)) {
            const size_t n = gguf_get_arr_n(g, t1);
            TH_CHECK(n == 32000, "llama-spm has 32000 tokens, got %zu", n);
            TH_CHECK(strcmp(gguf_get_arr_str(g, t1, 1000), gguf_get_arr_str(gv, t2, 1000)) == 0, "token 1000 differs");
            TH_CHECK(key_u32(g, "llama.vocab_size") == n, "vocab_size");
        }
        TH_CHECK(gguf_find_key(g, "tokenizer.ggml.model") >= 0 && gguf_find_key(g, "tokenizer.ggml.scores") >= 0,
                 "tokenizer keys missing");
        TH_CHECK(gguf_get_n_tensors(g) == 3 + 9 * 3, "tensor count %lld", (long long) gguf_get_n_tensors(g));

        struct { const char * name; enum ggml_type type; size_t bytes; } exp[] = {
            { "token_embd.weight",        GGML_TYPE_F16, 128 * 32000 * 2 },
            { "output.weight",            GGML_TYPE_F16, 128 * 32000 * 2 },
            { "output_norm.weight",       GGML_TYPE_F32, 128 * 4 },
            { "blk.2.attn_q.weight",      GGML_TYPE_F16, 128 * 128 * 2 },
            { "blk.2.attn_k.weight",      GGML_TYPE_F16, 128 * 64 * 2 },
            { "blk.2.attn_v.weight",      GGML_TYPE_F16, 128 * 64 * 2 },
            { "blk.2.attn_output.weight", GGML_TYPE_F16, 128 * 128 * 2 },
            { "blk.2.ffn_gate.weight",    GGML_TYPE_F16, 128 * 384 * 2 },
            { "blk.2.ffn_up.weight",      GGML_TYPE_F16, 128 * 384 * 2 },
            { "blk.2.ffn_down.weight",    GGML_TYPE_F16, 384 * 128 * 2 },
            { "blk.2.attn_norm.weight",   GGML_TYPE_F32, 128 * 4 },
            { "blk.2.ffn_norm.weight",    GGML_TYPE_F32, 128 * 4 },
        };
        FILE * f = fopen(out, "rb");
        for (size_t i = 0; i < sizeof(exp)/sizeof(exp[0]); i++) {
            const int64_t id = gguf_find_tensor(g, exp[i].name);
            TH_CHECK(id >= 0 && gguf_get_tensor_type(g, id) == exp[i].type && gguf_get_tensor_size(g, id) == exp[i].bytes,
                     "tensor %s: wrong type or size", exp[i].name);
        }
        // the distributions asked for: N(0, 0.02^2) weights, 1 + N(0, 0.1^2) norms
        double sd = 0;
        const int64_t emb = gguf_find_tensor(g, "token_embd.weight");
        const double m = f && emb >= 0 ? tensor_stats(f, g, emb, &sd) : 1.0;
        TH_CHECK(fabs(m) < 1e-3 && fabs(sd - 0.02) < 1e-3, "token_embd mean %g sd %g", m, sd);
        const int64_t nrm = gguf_find_tensor(g, "blk.1.ffn_norm.weight");
        const double mn = f && nrm >= 0 ? tensor_stats(f, g, nrm, &sd) : 0.0;
        TH_CHECK(fabs(mn - 1.0) < 0.05 && fabs(sd - 0.1) < 0.03, "norm mean %g sd %g", mn, sd);
        if (f) fclose(f);
    }
    if (g) gguf_free(g);
    if (gv) gguf_free(gv);

    // libllama loads it as the model asked for (weights and vocabulary)
    struct llama_model_params mp = llama_model_default_params();
    struct llama_model * model = llama_model_load_from_file(out, mp);
    TH_CHECK(model != NULL, "llama_model_load_from_file rejects the generated model");
    if (model) {
        TH_CHECK(llama_model_n_embd(model) == 128 && llama_model_n_layer(model) == 3 && llama_model_n_head(model) == 4 &&
                 llama_model_n_head_kv(model) == 2, "loaded hparams differ: embd %d layer %d head %d head_kv %d",
                 llama_model_n_embd(model), llama_model_n_layer(model), llama_model_n_head(model),
                 llama_model_n_head_kv(model));
        TH_CHECK(llama_vocab_n_tokens(llama_model_get_vocab(model)) == 32000, "loaded vocabulary size");
        llama_model_free(model);
    }

    // same seed, f32: the same (f16-rounded) values; another seed: other values
    const char * out32 = tmp_path("gen32.gguf");
    snprintf(cmd, sizeof(cmd), "'%s' -o '%s' --vocab-from '%s' --n-embd 128 --n-layer 3 --n-head 4 --n-head-kv 2 "
             "--n-ff 384 --type f32 --seed 7", exe, out32, vocab);
    TH_CHECK(run(cmd, log) == 0, "llama-gen-model f32 failed");
    g = gguf_init_from_file(out, ip);
    struct gguf_context * g32 = gguf_init_from_file(out32, ip);
    if (g && g32) {
        FILE * fa = fopen(out, "rb");
        FILE * fb = fopen(out32, "rb");
        const int64_t ia = gguf_find_tensor(g, "blk.1.attn_q.weight");
        const int64_t ib = gguf_find_tensor(g32, "blk.1.attn_q.weight");
        const ggml_fp16_t * ha = fa && ia >= 0 ? read_tensor(fa, g, ia) : NULL;
        const float * fb32 = fb && ib >= 0 ? read_tensor(fb, g32, ib) : NULL;
        int bad = 0;
        for (int k = 0; ha && fb32 && k < 128 * 128; k++) {
            bad += ggml_fp16_to_fp32(ha[k]) != fb32[k];
        }
        TH_CHECK(ha && fb32 && bad == 0, "f16 and f32 files of one seed differ in %d values", bad);
        free((void *) ha);
        free((void *) fb32);
        if (fa) fclose(fa);
        if (fb) fclose(fb);
        // and the f32 model quantizes
        TH_CHECK(quantize(out32, tmp_path("gen-q.gguf"), LLAMA_FTYPE_MOSTLY_Q4_K_M, 2) == 0, "generated model does not quantize");
        TH_CHECK(tensor_type(tmp_path("gen-q.gguf"), "output.weight") == GGML_TYPE_Q8_0,
                 "output.weight with 128 columns must fall back to q8_0");
        TH_CHECK(tensor_type(tmp_path("gen-q.gguf"), "blk.0.attn_q.weight") == GGML_TYPE_Q5_0,
                 "q4_K with 128 columns must fall back to q5_0");
        unlink(tmp_path("gen-q.gguf"));
    }
    if (g) gguf_free(g);
    if (g32) gguf_free(g32);

    // qwen2 has q/k/v biases, qwen3 q/k norms
    snprintf(cmd, sizeof(cmd), "'%s' -o '%s' --arch qwen2 --n-vocab 300 --n-embd 64 --n-layer 1 --n-head 4 --n-head-kv 2 --n-ff 128",
             exe, out);
    TH_CHECK(run(cmd, log) == 0, "qwen2 generation failed");
    g = gguf_init_from_file(out, ip);
    TH_CHECK(g && gguf_find_tensor(g, "blk.0.attn_k.bias") >= 0 && gguf_get_tensor_size(g, gguf_find_tensor(g, "blk.0.attn_k.bias")) == 32 * 4 &&
             key_u32(g, "qwen2.vocab_size") == 300, "qwen2 model incomplete");
    if (g) gguf_free(g);
    snprintf(cmd, sizeof(cmd), "'%s' -o '%s' --arch qwen3 --n-vocab 300 --n-embd 64 --n-layer 1 --n-head 4 --n-ff 128", exe, out);
    TH_CHECK(run(cmd, log) == 0, "qwen3 generation failed");
    g = gguf_init_from_file(out, ip);
    TH_CHECK(g && gguf_find_tensor(g, "blk.0.attn_q_norm.weight") >= 0 && gguf_find_tensor(g, "blk.0.attn_k_norm.weight") >= 0,
             "qwen3 model incomplete");
    if (g) gguf_free(g);

    // bad arguments: clear error, nothing written
    unlink(out);
    snprintf(cmd, sizeof(cmd), "'%s' -o '%s' --n-embd 100 --n-head 3 --n-vocab 10", exe, out);
    TH_CHECK(run(cmd, log) == 1 && !file_exists(out), "n_embd not divisible by n_head accepted");
    snprintf(cmd, sizeof(cmd), "'%s' -o '%s' --vocab-from '%s'", exe, out, tmp_path("missing.gguf"));
    TH_CHECK(run(cmd, log) == 1 && !file_exists(out), "missing vocab file accepted");
    unlink(out32);
    unlink(log);
}

static void remove_tmp_dir(void) {
    th_clear_dir(g_tmp);
    rmdir(g_tmp);
}

static void log_errors_only(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

int main(int argc, char ** argv) {
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/test-quantize-XXXXXX");
    if (!mkdtemp(g_tmp)) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    // the per-tensor progress lines of every quantization would drown the results
    llama_log_set(log_errors_only, NULL);
    test_synthetic_llama();
    test_other_archs();
    test_kjv();
    test_stories();
    test_options();
    if (argc > 1) {
        test_cli(argv[1]);
    }
    if (argc > 2) {
        test_gen_model(argv[2]);
    }
    remove_tmp_dir();
    return th_finish();
}
