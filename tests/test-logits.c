// Forward pass against llama.cpp: every case of reference/synthetic/index.json (batched logits and token-by-token
// logits through the KV cache) and every greedy case (teacher-forced, README §6.4), for one architecture
// (argv[1], "all" for every one). The <arch>-F32 cases load the F16 file upcast to F32 in a temporary GGUF.
#include "harness-ggml.h"

#include "llama.h"
#include "gguf.h"
#include "ggml.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void quiet_log(enum ggml_log_level level, const char * text, void * ud) {
    (void) ud;
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

static struct llama_model * load_model(const char * file, bool upcast) {
    const char * path = th_data_path("models/synthetic/%s", file);
    if (!th_require_file(path)) {
        return NULL;
    }
    struct llama_model_params mp = llama_model_default_params();
    if (!upcast) {
        return llama_model_load_from_file(path, mp);
    }
    char tmp[256];
    snprintf(tmp, sizeof(tmp), "/tmp/test-logits-%d-upcast.gguf", (int) getpid());
    if (!th_gguf_upcast_f16(path, tmp)) {
        fprintf(stderr, "upcast of %s failed\n", path);
        return NULL;
    }
    struct llama_model * m = llama_model_load_from_file(tmp, mp);
    unlink(tmp);
    return m;
}

static bool g_flash_attn = false; // argv[2] == "fa": run everything with flash attention
static int  g_threads    = 1;

static struct llama_context * new_ctx(struct llama_model * model, bool kv_f32, uint32_t n_seq_max) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_batch = 512;
    cp.n_ubatch = 512;
    cp.n_seq_max = n_seq_max;
    cp.n_threads = g_threads;
    cp.n_threads_batch = g_threads;
    cp.flash_attn_type = g_flash_attn ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.type_k = kv_f32 ? GGML_TYPE_F32 : GGML_TYPE_F16;
    cp.type_v = cp.type_k;
    return llama_init_from_model(model, cp);
}

// max-abs limits per class (README §6.3); rms limit for quantized files
struct tol {
    double max_abs;
    double rms;
};

static struct tol tolerance(const char * arch, const char * wtype, bool kv_f32) {
    const bool gemma = strcmp(arch, "gemma3") == 0;
    if (strcmp(wtype, "F32") == 0) {
        if (kv_f32) {
            return (struct tol) { gemma ? 1e-3 : 1e-4, 1.0 };
        }
        return (struct tol) { 2e-3, 1.0 };
    }
    if (strcmp(wtype, "F16") == 0) {
        return (struct tol) { 3e-3, 1.0 };
    }
    if (strcmp(wtype, "BF16") == 0) {
        return (struct tol) { 1.5e-2, 1.0 };
    }
    // The synthetic references were made with flash attention disabled (README of reference/synthetic).
    // Flash attention accumulates V in F16 as llama.cpp's CPU kernel does, a ~1e-3 perturbation of every
    // logit (see the F32 rows) that 8-bit activation quantization can amplify layer by layer; the fa
    // variant therefore allows a 25% larger rms for quantized files (measured: exaone4-Q4_K_M 1.02e-2).
    return (struct tol) { 0.06, g_flash_attn ? 0.0125 : 0.01 };
}

static void diff(const float * a, const float * b, size_t n, double * mx, double * rms) {
    double m = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs((double) a[i] - (double) b[i]);
        if (!(d <= m)) {
            m = isnan(d) ? INFINITY : d;
        }
        s += d * d;
    }
    *mx = m;
    *rms = sqrt(s / (double) n);
}

static int rows_over(const float * a, const float * b, int n_rows, int n_cols, double lim) {
    int n = 0;
    for (int i = 0; i < n_rows; i++) {
        double m = 0, r;
        diff(a + (size_t) i * n_cols, b + (size_t) i * n_cols, (size_t) n_cols, &m, &r);
        n += m > lim;
    }
    return n;
}

static int argmax(const float * v, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) {
        if (v[i] > v[best]) {
            best = i;
        }
    }
    return best;
}

static void run_case(json_t * c) {
    const char * label  = json_string_value(json_object_get(c, "label"));
    const char * mfile  = json_string_value(json_object_get(c, "model_file"));
    const char * arch   = json_string_value(json_object_get(c, "arch"));
    const char * wtype  = json_string_value(json_object_get(c, "weight_type"));
    const bool   kv_f32 = strcmp(json_string_value(json_object_get(c, "kv_cache_type")), "f32") == 0;
    const bool upcast   = strcmp(wtype, "F32") == 0 && strstr(mfile, "-F16.gguf") != NULL;
    json_t * jtok = json_object_get(c, "tokens");
    const int n_tokens = (int) json_array_size(jtok);
    const int n_vocab = 512;

    size_t sz_b = 0, sz_s = 0;
    float * ref_b = th_read_file(th_data_path("reference/synthetic/%s", json_string_value(json_object_get(c, "file"))), &sz_b);
    float * ref_s = th_read_file(th_data_path("reference/synthetic/%s", json_string_value(json_object_get(c, "stepwise_file"))), &sz_s);
    struct llama_model * model = load_model(mfile, upcast);
    TH_CHECK(model && ref_b && ref_s && sz_b == (size_t) n_tokens * n_vocab * 4 && sz_s == sz_b,
             "%s: model or reference files", label);
    if (!model || !ref_b || !ref_s || sz_b != (size_t) n_tokens * n_vocab * 4 || sz_s != sz_b) {
        llama_model_free(model);
        free(ref_b);
        free(ref_s);
        return;
    }
    llama_token * toks = malloc(n_tokens * sizeof(llama_token));
    for (int i = 0; i < n_tokens; i++) {
        toks[i] = (llama_token) json_integer_value(json_array_get(jtok, i));
    }
    const struct tol t = tolerance(arch, wtype, kv_f32);
    float * ours_b = calloc((size_t) n_tokens * n_vocab, sizeof(float));
    float * ours_s = calloc((size_t) n_tokens * n_vocab, sizeof(float));

    // batched: one decode, every token an output
    struct llama_context * ctx = new_ctx(model, kv_f32, 1);
    TH_CHECK(ctx != NULL, "%s: context", label);
    if (ctx) {
        struct llama_batch b = llama_batch_init(n_tokens, 0, 1);
        for (int i = 0; i < n_tokens; i++) {
            b.token[i] = toks[i];
            b.pos[i] = i;
            b.n_seq_id[i] = 1;
            b.seq_id[i][0] = 0;
            b.logits[i] = 1;
        }
        b.n_tokens = n_tokens;
        const int rc = llama_decode(ctx, b);
        TH_CHECK(rc == 0, "%s: batched decode rc %d", label, rc);
        for (int i = 0; i < n_tokens && rc == 0; i++) {
            const float * l = llama_get_logits_ith(ctx, i);
            if (l) {
                memcpy(ours_b + (size_t) i * n_vocab, l, n_vocab * sizeof(float));
            }
        }
        llama_batch_free(b);
        // step-wise through the cache, on the same context after clearing it
        llama_memory_clear(llama_get_memory(ctx), true);
        for (int i = 0; i < n_tokens; i++) {
            struct llama_batch one = llama_batch_get_one(&toks[i], 1);
            const int r = llama_decode(ctx, one);
            if (r != 0) {
                TH_CHECK(r == 0, "%s: step %d decode rc %d", label, i, r);
                break;
            }
            const float * l = llama_get_logits_ith(ctx, -1);
            if (l) {
                memcpy(ours_s + (size_t) i * n_vocab, l, n_vocab * sizeof(float));
            }
        }
        llama_free(ctx);
    }
    double mb, rb, ms, rs, mbs, rbs;
    diff(ours_b, ref_b, (size_t) n_tokens * n_vocab, &mb, &rb);
    diff(ours_s, ref_s, (size_t) n_tokens * n_vocab, &ms, &rs);
    diff(ours_b, ours_s, (size_t) n_tokens * n_vocab, &mbs, &rbs);
    int agree_b = 0, agree_s = 0, bad_flip = 0;
    int worst_row = 0;
    double worst = -1;
    for (int i = 0; i < n_tokens; i++) {
        const float * rb_row = ref_b + (size_t) i * n_vocab;
        const float * rs_row = ref_s + (size_t) i * n_vocab;
        const int ab = argmax(ours_b + (size_t) i * n_vocab, n_vocab), rab = argmax(rb_row, n_vocab);
        const int as = argmax(ours_s + (size_t) i * n_vocab, n_vocab), ras = argmax(rs_row, n_vocab);
        agree_b += ab == rab;
        agree_s += as == ras;
        // a different argmax is acceptable only at a near-tie: both tokens within the tolerance in the reference
        bad_flip += rb_row[rab] - rb_row[ab] > t.max_abs;
        bad_flip += rs_row[ras] - rs_row[as] > t.max_abs;
        for (int j = 0; j < n_vocab; j++) {
            const double d = fabs((double) ours_b[(size_t) i * n_vocab + j] - rb_row[j]);
            if (d > worst) {
                worst = d;
                worst_row = i;
            }
        }
    }
    printf("%-22s batched max %.2e rms %.2e argmax %d/%d | step max %.2e rms %.2e argmax %d/%d | ours b/s max %.2e (tol %.1e)\n",
           label, mb, rb, agree_b, n_tokens, ms, rs, agree_s, n_tokens, mbs, t.max_abs);
    // quantized files: activation rounding can flip a near-tie decision (an MoE expert choice) in a row, which
    // moves that row a lot; allow two such rows of 51, bounded, with the rms over all rows still tight
    const bool quant = t.rms < 1.0;
    const int allowed_rows = quant ? 2 : 0;
    const double hard_max = quant ? 0.25 : t.max_abs;
    const int ob = rows_over(ours_b, ref_b, n_tokens, n_vocab, t.max_abs);
    const int os = rows_over(ours_s, ref_s, n_tokens, n_vocab, t.max_abs);
    TH_CHECK(mb <= hard_max && rb <= t.rms && ob <= allowed_rows, "%s: batched logits max %.3e rms %.3e, %d rows over %.1e",
             label, mb, rb, ob, t.max_abs);
    TH_CHECK(ms <= hard_max && rs <= t.rms && os <= allowed_rows, "%s: step-wise logits max %.3e rms %.3e, %d rows over %.1e",
             label, ms, rs, os, t.max_abs);
    TH_CHECK(bad_flip == 0, "%s: %d rows with a different argmax that is not a near-tie (agreement %d/%d %d/%d)",
             label, bad_flip, agree_b, n_tokens, agree_s, n_tokens);
    if (getenv("LOGITS_ROWS")) {
        for (int i = 0; i < n_tokens; i++) {
            double m = 0;
            for (int j = 0; j < n_vocab; j++) {
                const double d = fabs((double) ours_b[(size_t) i * n_vocab + j] - ref_b[(size_t) i * n_vocab + j]);
                m = d > m ? d : m;
            }
            printf("row %2d max %.3e\n", i, m);
        }
    }
    if (worst > t.max_abs) {
        printf("%-22s   largest batched difference in row %d\n", label, worst_row);
    }
    free(ours_b);
    free(ours_s);
    free(toks);
    free(ref_b);
    free(ref_s);
    llama_model_free(model);
}

static void run_greedy(json_t * c) {
    const char * label  = json_string_value(json_object_get(c, "label"));
    const char * mfile  = json_string_value(json_object_get(c, "model_file"));
    const char * arch   = json_string_value(json_object_get(c, "arch"));
    const char * wtype  = json_string_value(json_object_get(c, "weight_type"));
    const bool   kv_f32 = strcmp(json_string_value(json_object_get(c, "kv_cache_type")), "f32") == 0;
    const bool upcast   = strcmp(wtype, "F32") == 0 && strstr(mfile, "-F16.gguf") != NULL;
    json_t * jp = json_object_get(c, "prompt_tokens");
    json_t * jg = json_object_get(c, "tokens");
    json_t * jm = json_object_get(c, "top1_minus_top2");
    const int n_prompt = (int) json_array_size(jp);
    const int n_gen = (int) json_array_size(jg);
    struct llama_model * model = load_model(mfile, upcast);
    if (!model) {
        TH_CHECK(model != NULL, "%s: model", label);
        return;
    }
    struct llama_context * ctx = new_ctx(model, kv_f32, 1);
    TH_CHECK(ctx != NULL, "%s: context", label);
    const struct tol t = tolerance(arch, wtype, kv_f32);
    llama_token * prompt = malloc(n_prompt * sizeof(llama_token));
    for (int i = 0; i < n_prompt; i++) {
        prompt[i] = (llama_token) json_integer_value(json_array_get(jp, i));
    }
    int checked = 0, mismatched = 0, free_run_equal = 0;
    bool still_equal = true;
    if (ctx && llama_decode(ctx, llama_batch_get_one(prompt, n_prompt)) == 0) {
        for (int k = 0; k < n_gen; k++) {
            const float * l = llama_get_logits_ith(ctx, -1);
            const llama_token want = (llama_token) json_integer_value(json_array_get(jg, k));
            const double margin = json_number_value(json_array_get(jm, k));
            const int got = l ? argmax(l, 512) : -1;
            if (got == want && still_equal) {
                free_run_equal++;
            } else {
                still_equal = false;
            }
            if (margin > t.max_abs) {
                checked++;
                if (got != want) {
                    mismatched++;
                    fprintf(stderr, "%s: step %d argmax %d, reference %d (margin %.4f)\n", label, k, got, want, margin);
                }
            }
            llama_token next = want; // teacher forcing
            if (llama_decode(ctx, llama_batch_get_one(&next, 1)) != 0) {
                mismatched++;
                break;
            }
        }
    } else {
        mismatched++;
    }
    printf("%-22s greedy: %d steps checked, %d mismatched, %d/%d leading tokens equal\n", label, checked,
           mismatched, free_run_equal, n_gen);
    TH_CHECK(mismatched == 0, "%s: greedy teacher-forced mismatches %d", label, mismatched);
    free(prompt);
    llama_free(ctx);
    llama_model_free(model);
}

int main(int argc, char ** argv) {
    const char * want = argc > 1 ? argv[1] : "all";
    const char * only = argc > 2 ? argv[2] : NULL; // optional label filter, or fa / mt (flash attention, 2 threads)
    if (only && strcmp(only, "fa") == 0) {
        g_flash_attn = true;
        only = NULL;
    } else if (only && strcmp(only, "mt") == 0) {
        g_threads = 2;
        only = NULL;
    }
    llama_log_set(quiet_log, NULL);
    llama_backend_init();
    const char * ipath = th_data_path("reference/synthetic/index.json");
    if (!th_require_file(ipath)) {
        return th_finish();
    }
    json_error_t err;
    json_t * root = json_load_file(ipath, 0, &err);
    TH_CHECK(root != NULL, "index.json: %s", err.text);
    if (!root) {
        return th_finish();
    }
    const char * lists[2] = { "cases", "greedy" };
    for (int l = 0; l < 2; l++) {
        json_t * arr = json_object_get(root, lists[l]);
        for (size_t i = 0; i < json_array_size(arr); i++) {
            json_t * c = json_array_get(arr, i);
            const char * arch = json_string_value(json_object_get(c, "arch"));
            const char * label = json_string_value(json_object_get(c, "label"));
            if (strcmp(want, "all") != 0 && strcmp(want, arch) != 0) {
                continue;
            }
            if (only && strcmp(only, label) != 0) {
                continue;
            }
            if (l == 0) {
                run_case(c);
            } else {
                run_greedy(c);
            }
        }
    }
    json_decref(root);
    llama_backend_free();
    return th_finish();
}
