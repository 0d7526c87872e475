// Model loading: every shared model file loads with the hyperparameters, tensors, sizes and metadata that
// llama.cpp's index (reference/synthetic/index.json) and the files' own GGUF headers state; tensor data
// placed by the loader (mmap and read paths) equals what the independent GGUF reader reads; broken files
// (missing tensor / key, wrong shape / type, unknown architecture, extra tensor, truncation, bad overrides)
// give NULL and a log line that names the problem.
#include "harness-ggml.h"

#include "llama.h"
#include "gguf.h"
#include "llama-model.h"

#include <jansson.h>

#include <math.h>
#include <strings.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// ---- log capture -------------------------------------------------------------------------------------------

static char   g_log[1 << 16];
static size_t g_log_len = 0;
static bool   g_log_echo = false;

static void capture_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    // keep everything but the progress dots; errors/warnings are echoed when asked, to debug failures
    const size_t n = strlen(text);
    if (g_log_len + n < sizeof(g_log)) {
        memcpy(g_log + g_log_len, text, n);
        g_log_len += n;
        g_log[g_log_len] = '\0';
    }
    if (g_log_echo && (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN)) {
        fputs(text, stderr);
    }
}

static void log_clear(void) {
    g_log_len = 0;
    g_log[0] = '\0';
}

static bool log_has(const char * s) {
    return strstr(g_log, s) != NULL;
}

// the first error line of the captured log (for failure messages)
static const char * log_first_error(void) {
    static char line[512];
    const char * p = strstr(g_log, "llama_model_load");
    if (!p) {
        p = g_log;
    }
    size_t n = strcspn(p, "\n");
    if (n >= sizeof(line)) {
        n = sizeof(line) - 1;
    }
    memcpy(line, p, n);
    line[n] = '\0';
    return line;
}

static struct llama_model_params quiet_params(void) {
    struct llama_model_params p = llama_model_default_params();
    return p;
}

// ---- independent references --------------------------------------------------------------------------------

// llama.cpp's printed names of the file types the shared files use
static const char * ftype_name_expected(int ftype) {
    switch (ftype) {
        case 0:  return "all F32";
        case 1:  return "F16";
        case 2:  return "Q4_0";
        case 3:  return "Q4_1";
        case 7:  return "Q8_0";
        case 8:  return "Q5_0";
        case 9:  return "Q5_1";
        case 10: return "Q2_K - Medium";
        case 12: return "Q3_K - Medium";
        case 15: return "Q4_K - Medium";
        case 17: return "Q5_K - Medium";
        case 18: return "Q6_K";
        case 25: return "IQ4_NL - 4.5 bpw";
        case 30: return "IQ4_XS - 4.25 bpw";
        case 32: return "BF16";
        default: return NULL;
    }
}

static bool close_f(double a, double b) {
    return fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b));
}

// compares the hyperparameter named by the GGUF key (without the "<arch>." prefix) with the index value
static void check_hparam(const char * file, const struct llama_model * m, const char * suffix, json_t * jv) {
    const struct llama_hparams * hp = &m->hparams;
    const double v = json_number_value(jv);
    double got = NAN;
    if      (strcmp(suffix, "context_length") == 0)                   got = llama_model_n_ctx_train(m);
    else if (strcmp(suffix, "embedding_length") == 0)                 got = llama_model_n_embd(m);
    else if (strcmp(suffix, "block_count") == 0)                      got = llama_model_n_layer(m);
    else if (strcmp(suffix, "feed_forward_length") == 0)              got = hp->n_ff_arr[0];
    else if (strcmp(suffix, "attention.head_count") == 0)             got = llama_model_n_head(m);
    else if (strcmp(suffix, "attention.head_count_kv") == 0)          got = llama_model_n_head_kv(m);
    else if (strcmp(suffix, "attention.layer_norm_rms_epsilon") == 0) got = hp->f_norm_rms_eps;
    else if (strcmp(suffix, "attention.key_length") == 0)             got = hp->n_embd_head_k;
    else if (strcmp(suffix, "attention.value_length") == 0)           got = hp->n_embd_head_v;
    else if (strcmp(suffix, "attention.sliding_window") == 0)         got = llama_model_n_swa(m);
    else if (strcmp(suffix, "attention.sliding_window_pattern") == 0) got = hp->n_swa_pattern;
    else if (strcmp(suffix, "attention.scale") == 0)                  got = hp->f_attention_scale;
    else if (strcmp(suffix, "rope.freq_base") == 0)                   got = hp->rope_freq_base_train;
    else if (strcmp(suffix, "rope.freq_base_swa") == 0)               got = hp->rope_freq_base_train_swa;
    else if (strcmp(suffix, "rope.dimension_count") == 0)             got = hp->n_rot;
    else if (strcmp(suffix, "vocab_size") == 0)                       got = hp->n_vocab;
    else if (strcmp(suffix, "expert_count") == 0)                     got = hp->n_expert;
    else if (strcmp(suffix, "expert_used_count") == 0)                got = hp->n_expert_used;
    else if (strcmp(suffix, "expert_feed_forward_length") == 0)       got = hp->n_ff_exp;
    else if (strcmp(suffix, "logit_scale") == 0)                      got = hp->f_logit_scale;
    else if (strcmp(suffix, "residual_scale") == 0)                   got = hp->f_residual_scale;
    else if (strcmp(suffix, "embedding_scale") == 0)                  got = hp->f_embedding_scale;
    TH_EXPECT(!isnan(got), "%s: hparam %s is not checked by this test", file, suffix);
    TH_EXPECT(isnan(got) || close_f(got, v), "%s: %s = %g, index says %g", file, suffix, got, v);
}

// ---- per-file checks ---------------------------------------------------------------------------------------

static int64_t count_tensors(const struct llama_model * m) {
    int64_t n = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(m->ctx_w); t; t = ggml_get_next_tensor(m->ctx_w, t)) {
        n++;
    }
    return n;
}

// every tensor's bytes as placed by the loader equal the bytes gguf.c reads from the file itself
static void check_data_against_gguf(const char * path, const struct llama_model * m) {
    struct ggml_context * gctx = NULL;
    struct gguf_init_params gp = { .no_alloc = false, .ctx = &gctx };
    struct gguf_context * g = gguf_init_from_file(path, gp);
    TH_CHECK(g && gctx, "%s: gguf_init_from_file with data failed", path);
    if (!g || !gctx) {
        return;
    }
    int n_bad = 0, n_cmp = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(m->ctx_w); t; t = ggml_get_next_tensor(m->ctx_w, t)) {
        struct ggml_tensor * ref = ggml_get_tensor(gctx, ggml_get_name(t));
        if (!ref || ggml_nbytes(ref) != ggml_nbytes(t)) {
            n_bad++;
            continue;
        }
        void * buf = malloc(ggml_nbytes(t));
        ggml_backend_tensor_get(t, buf, 0, ggml_nbytes(t));
        if (memcmp(buf, ref->data, ggml_nbytes(t)) != 0) {
            n_bad++;
            fprintf(stderr, "%s: tensor %s data differs from the file\n", path, ggml_get_name(t));
        }
        free(buf);
        n_cmp++;
    }
    TH_CHECK(n_bad == 0 && n_cmp > 0, "%s: %d of %d tensors differ from the file", path, n_bad, n_cmp);
    gguf_free(g);
    ggml_free(gctx);
}

static void check_synthetic_model(json_t * jm, bool use_mmap) {
    const char * file = json_string_value(json_object_get(jm, "file"));
    const char * arch = json_string_value(json_object_get(jm, "arch"));
    const char * path = th_data_path("models/synthetic/%s", file);
    if (!th_require_file(path)) {
        return;
    }

    struct llama_model_params mp = quiet_params();
    mp.use_mmap = use_mmap;
    log_clear();
    struct llama_model * m = llama_model_load_from_file(path, mp);
    TH_CHECK(m != NULL, "%s (mmap %d): load failed: %s", file, use_mmap, log_first_error());
    if (!m) {
        return;
    }

    // hyperparameters named in the index
    json_t * jh = json_object_get(jm, "hparams");
    const char * key;
    json_t * jv;
    const size_t arch_len = strlen(arch);
    json_object_foreach(jh, key, jv) {
        TH_EXPECT(strncmp(key, arch, arch_len) == 0 && key[arch_len] == '.', "%s: key %s", file, key);
        check_hparam(file, m, key + arch_len + 1, jv);
    }
    TH_CHECK(m->hparams.n_vocab == (uint32_t) json_integer_value(json_object_get(jm, "tokenizer_n_tokens")),
             "%s: n_vocab %u", file, m->hparams.n_vocab);

    // counts and sizes
    TH_CHECK(llama_model_n_params(m) == (uint64_t) json_integer_value(json_object_get(jm, "n_params")),
             "%s: n_params %llu, index %lld", file, (unsigned long long) llama_model_n_params(m),
             (long long) json_integer_value(json_object_get(jm, "n_params")));
    TH_CHECK(count_tensors(m) == json_integer_value(json_object_get(jm, "n_tensors")),
             "%s: %lld tensors, index %lld", file, (long long) count_tensors(m),
             (long long) json_integer_value(json_object_get(jm, "n_tensors")));

    uint64_t expect_bytes = 0;
    bool has_output = false;
    json_t * jt;
    size_t it;
    json_array_foreach(json_object_get(jm, "tensors"), it, jt) {
        const char * name = json_string_value(json_object_get(jt, "name"));
        const enum ggml_type type = th_type_from_name(json_string_value(json_object_get(jt, "type")));
        json_t * jne = json_object_get(jt, "ne");
        int64_t ne[4] = {1, 1, 1, 1};
        for (size_t d = 0; d < json_array_size(jne) && d < 4; d++) {
            ne[d] = json_integer_value(json_array_get(jne, d));
        }
        TH_EXPECT(type != GGML_TYPE_COUNT, "%s: unknown type name in index", file);
        if (type == GGML_TYPE_COUNT) {
            continue;
        }
        expect_bytes += (uint64_t) (ggml_row_size(type, ne[0]) * (size_t) (ne[1] * ne[2] * ne[3]));
        has_output = has_output || strcmp(name, "output.weight") == 0;

        struct ggml_tensor * t = ggml_get_tensor(m->ctx_w, name);
        TH_EXPECT(t != NULL, "%s: tensor %s not in the model", file, name);
        if (t) {
            TH_EXPECT(t->type == type, "%s: %s type %s, index %s", file, name, ggml_type_name(t->type), ggml_type_name(type));
            TH_EXPECT(t->ne[0] == ne[0] && t->ne[1] == ne[1] && t->ne[2] == ne[2] && t->ne[3] == ne[3],
                      "%s: %s shape differs", file, name);
            TH_EXPECT(t->data != NULL && t->buffer != NULL, "%s: %s has no data", file, name);
        }
    }
    TH_CHECK(llama_model_size(m) == expect_bytes, "%s: size %llu, expected %llu", file,
             (unsigned long long) llama_model_size(m), (unsigned long long) expect_bytes);
    TH_CHECK(llama_model_size(m) < (uint64_t) json_integer_value(json_object_get(jm, "size_bytes")), "%s: size", file);

    // tied output falls back to token_embd
    TH_CHECK(m->tok_embd && m->output && m->output_norm, "%s: global tensors", file);
    TH_CHECK((m->output == m->tok_embd) == !has_output, "%s: tied output %d, file has output.weight %d",
             file, m->output == m->tok_embd, has_output);
    TH_CHECK(m->layers && m->layers[0].wo && (m->layers[0].ffn_down || m->layers[0].ffn_down_exps), "%s: layer tensors", file);

    // rope type per architecture (README section 2.2)
    const bool is_norm = strcmp(arch, "llama") == 0 || strcmp(arch, "granite") == 0;
    TH_CHECK(llama_model_rope_type(m) == (is_norm ? LLAMA_ROPE_TYPE_NORM : LLAMA_ROPE_TYPE_NEOX),
             "%s: rope type %d", file, (int) llama_model_rope_type(m));
    TH_CHECK(llama_model_rope_freq_scale_train(m) == 1.0f, "%s: freq scale", file);

    // SWA layers of gemma3: pattern 4 -> layers 0, 1, 2 windowed, layer 3 global
    if (strcmp(arch, "gemma3") == 0) {
        TH_CHECK(llama_hparams_is_swa(&m->hparams, 0) && llama_hparams_is_swa(&m->hparams, 2) &&
                 !llama_hparams_is_swa(&m->hparams, 3), "%s: swa layers", file);
        TH_CHECK(close_f(m->hparams.f_attention_scale, 1.0 / sqrt(32.0)), "%s: attention scale", file);
    } else {
        TH_CHECK(!llama_hparams_is_swa(&m->hparams, 0) && llama_model_n_swa(m) == 0, "%s: no swa", file);
    }

    // description: "<arch> <size> <file type>"
    {
        char desc[256];
        const int n = llama_model_desc(m, desc, sizeof(desc));
        const int ft = (int) json_integer_value(json_object_get(jm, "general.file_type"));
        const char * ftn = ftype_name_expected(ft);
        char expect[256];
        snprintf(expect, sizeof(expect), "%s ?B %s", arch, ftn ? ftn : "?");
        TH_CHECK(n == (int) strlen(desc) && strcmp(desc, expect) == 0, "%s: desc '%s', expected '%s'", file, desc, expect);
    }

    // metadata strings
    {
        char buf[256];
        TH_CHECK(llama_model_meta_val_str(m, "general.architecture", buf, sizeof(buf)) == (int) strlen(arch) &&
                 strcmp(buf, arch) == 0, "%s: general.architecture '%s'", file, buf);
        TH_CHECK(llama_model_meta_val_str(m, "general.name", buf, sizeof(buf)) > 0 &&
                 strcmp(buf, "synthetic random-weight test model") == 0, "%s: general.name '%s'", file, buf);
        char mkey[128];
        snprintf(mkey, sizeof(mkey), "%s.context_length", arch);
        TH_CHECK(llama_model_meta_val_str(m, mkey, buf, sizeof(buf)) == 3 && strcmp(buf, "512") == 0,
                 "%s: %s = '%s'", file, mkey, buf);
        snprintf(mkey, sizeof(mkey), "%s.rope.freq_base", arch);
        TH_CHECK(llama_model_meta_val_str(m, mkey, buf, sizeof(buf)) > 0 && strchr(buf, '.') != NULL &&
                 close_f(atof(buf), m->hparams.rope_freq_base_train), "%s: %s = '%s'", file, mkey, buf);
        // arrays are not exposed
        TH_CHECK(llama_model_meta_val_str(m, "tokenizer.ggml.tokens", buf, sizeof(buf)) == -1 && buf[0] == '\0',
                 "%s: array key exposed", file);
        TH_CHECK(llama_model_meta_val_str(m, "no.such.key", buf, sizeof(buf)) == -1 && buf[0] == '\0', "%s: missing key", file);
        // truncation: the full length is returned, the buffer stays terminated
        char small[4];
        TH_CHECK(llama_model_meta_val_str(m, "general.name", small, sizeof(small)) == 34 && strcmp(small, "syn") == 0,
                 "%s: truncation '%s'", file, small);

        const int32_t n_meta = llama_model_meta_count(m);
        TH_CHECK(n_meta > 10, "%s: meta count %d", file, n_meta);
        int bad = 0;
        for (int32_t i = 0; i < n_meta; i++) {
            char k[256], v1[4096], v2[4096];
            if (llama_model_meta_key_by_index(m, i, k, sizeof(k)) <= 0 ||
                llama_model_meta_val_str_by_index(m, i, v1, sizeof(v1)) < 0 ||
                llama_model_meta_val_str(m, k, v2, sizeof(v2)) < 0 || strcmp(v1, v2) != 0) {
                bad++;
            }
        }
        TH_CHECK(bad == 0, "%s: %d metadata entries do not round-trip", file, bad);
        TH_CHECK(llama_model_meta_key_by_index(m, n_meta, buf, sizeof(buf)) == -1 &&
                 llama_model_meta_key_by_index(m, -1, buf, sizeof(buf)) == -1, "%s: index bounds", file);
        TH_CHECK(llama_model_chat_template(m, NULL) == NULL, "%s: no chat template in this file", file);
    }

    TH_CHECK(!llama_model_has_encoder(m) && llama_model_has_decoder(m) && !llama_model_is_recurrent(m),
             "%s: model kind", file);
    TH_CHECK(llama_model_get_vocab(m) != NULL, "%s: vocab", file);

    check_data_against_gguf(path, m);

    // F16/BF16/F32 tensors dequantize exactly to llama.cpp's dump (kernels/*.deq.bin): data placement check
    // that does not depend on our own reader
    llama_model_free(m);
}

// llama.cpp's dequantized dumps of F16 / BF16 tensors, compared with our loaded weights converted by ggml
static void check_kernel_dumps(json_t * root) {
    json_t * jk;
    size_t i;
    json_array_foreach(json_object_get(root, "kernel_checks"), i, jk) {
        const char * type = json_string_value(json_object_get(jk, "type"));
        if (strcmp(type, "f16") != 0 && strcmp(type, "bf16") != 0) {
            continue; // quantized dumps belong to the kernel tests
        }
        const char * src = json_string_value(json_object_get(jk, "source_file"));
        const char * tname = json_string_value(json_object_get(jk, "tensor"));
        const char * deq = th_data_path("reference/synthetic/%s", json_string_value(json_object_get(jk, "deq_file")));
        const char * path = th_data_path("models/synthetic/%s", src);
        if (!th_require_file(path) || !th_require_file(deq)) {
            continue;
        }
        struct llama_model * m = llama_model_load_from_file(path, quiet_params());
        TH_CHECK(m != NULL, "%s: load", src);
        if (!m) {
            continue;
        }
        struct ggml_tensor * t = ggml_get_tensor(m->ctx_w, tname);
        size_t n_bytes = 0;
        float * ref = th_read_file(deq, &n_bytes);
        TH_CHECK(t && ref && n_bytes == (size_t) ggml_nelements(t) * sizeof(float), "%s: %s dump", src, tname);
        if (t && ref && n_bytes == (size_t) ggml_nelements(t) * sizeof(float)) {
            const int64_t n = ggml_nelements(t);
            int64_t n_diff = 0;
            for (int64_t k = 0; k < n; k++) {
                float v;
                if (t->type == GGML_TYPE_F16) {
                    v = ggml_fp16_to_fp32(((const ggml_fp16_t *) t->data)[k]);
                } else {
                    v = ggml_bf16_to_fp32(((const ggml_bf16_t *) t->data)[k]);
                }
                if (memcmp(&v, &ref[k], sizeof(float)) != 0) {
                    n_diff++;
                }
            }
            TH_CHECK(n_diff == 0, "%s: %s: %lld of %lld values differ from llama.cpp's dump", src, tname,
                     (long long) n_diff, (long long) n);
        }
        free(ref);
        llama_model_free(m);
    }
}

// ---- trained models: hyperparameters from their GGUF headers ---------------------------------------------

struct real_model {
    const char * path;
    int n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx, n_rot, n_vocab;
    int64_t n_tensors;
    bool tied;
};

static void check_real_models(void) {
    static const struct real_model models[] = {
        { "models/kjv/kjv-target-f32.gguf",    288, 6, 6, 2, 768, 256, 48, 2048, 57, false },
        { "models/kjv/kjv-target-f16.gguf",    288, 6, 6, 2, 768, 256, 48, 2048, 57, false },
        { "models/kjv/kjv-target-q8_0.gguf",   288, 6, 6, 2, 768, 256, 48, 2048, 57, false },
        { "models/kjv/kjv-target-q4_0.gguf",   288, 6, 6, 2, 768, 256, 48, 2048, 57, false },
        { "models/kjv/kjv-target-q4_k_m.gguf", 288, 6, 6, 2, 768, 256, 48, 2048, 57, false },
        { "models/kjv/kjv-draft-f32.gguf",     128, 2, 4, 2, 384, 256, 32, 2048, 21, false },
        { "models/kjv/kjv-draft-q8_0.gguf",    128, 2, 4, 2, 384, 256, 32, 2048, 21, false },
        { "models/stories260K-f32.gguf",        64, 5, 8, 4, 172, 512,  8,  512, 48, false },
        { "models/stories260K-q8_0.gguf",       64, 5, 8, 4, 172, 512,  8,  512, 48, false },
        { "models/stories260K-q4_0.gguf",       64, 5, 8, 4, 172, 512,  8,  512, 48, false },
    };
    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
        const struct real_model * r = &models[i];
        const char * path = th_data_path("%s", r->path);
        if (!th_require_file(path)) {
            continue;
        }
        log_clear();
        struct llama_model * m = llama_model_load_from_file(path, quiet_params());
        TH_CHECK(m != NULL, "%s: load failed: %s", r->path, log_first_error());
        if (!m) {
            continue;
        }
        TH_CHECK(llama_model_n_embd(m) == r->n_embd && llama_model_n_layer(m) == r->n_layer &&
                 llama_model_n_head(m) == r->n_head && llama_model_n_head_kv(m) == r->n_head_kv &&
                 (int) m->hparams.n_ff_arr[0] == r->n_ff && llama_model_n_ctx_train(m) == r->n_ctx &&
                 (int) m->hparams.n_rot == r->n_rot && (int) m->hparams.n_vocab == r->n_vocab,
                 "%s: hparams", r->path);
        TH_CHECK(count_tensors(m) == r->n_tensors, "%s: %lld tensors", r->path, (long long) count_tensors(m));
        TH_CHECK((m->output == m->tok_embd) == r->tied, "%s: output", r->path);
        TH_CHECK(llama_model_rope_type(m) == LLAMA_ROPE_TYPE_NORM, "%s: rope", r->path);
        check_data_against_gguf(path, m);
        llama_model_free(m);
    }
}

// ---- vocab_only -------------------------------------------------------------------------------------------

static void check_vocab_only(void) {
    // a recognised but unsupported architecture (gpt2) loads its vocabulary, and only that
    const char * path = th_data_path("models/vocab/ggml-vocab-gpt-2.gguf");
    if (th_require_file(path)) {
        struct llama_model_params mp = quiet_params();
        mp.vocab_only = true;
        log_clear();
        struct llama_model * m = llama_model_load_from_file(path, mp);
        TH_CHECK(m != NULL && llama_model_get_vocab(m) != NULL, "gpt2 vocab_only: %s", log_first_error());
        if (m) {
            TH_CHECK(m->ctx_w == NULL && llama_model_n_params(m) == 0, "vocab_only loads no tensors");
            TH_CHECK(llama_model_n_embd(m) == 768 && llama_model_n_layer(m) == 12, "gpt2 hparams");
            llama_model_free(m);
        }
        log_clear();
        m = llama_model_load_from_file(path, quiet_params());
        TH_CHECK(m == NULL && log_has("'gpt2'") && log_has("not supported"), "gpt2 weights: %s", log_first_error());
        llama_model_free(m);
    }
    path = th_data_path("models/synthetic/qwen3-F16.gguf");
    if (th_require_file(path)) {
        struct llama_model_params mp = quiet_params();
        mp.vocab_only = true;
        struct llama_model * m = llama_model_load_from_file(path, mp);
        TH_CHECK(m != NULL && llama_model_get_vocab(m) != NULL && m->ctx_w == NULL, "qwen3 vocab_only");
        llama_model_free(m);
    }
}

// ---- broken inputs -----------------------------------------------------------------------------------------

static char g_tmpdir[256];

enum edit_kind { EDIT_DROP_TENSOR, EDIT_RESHAPE, EDIT_RETYPE_F16, EDIT_ADD_TENSOR, EDIT_ARCH, EDIT_DROP_KEY, EDIT_KEY_STR, EDIT_KEY_SPLIT };

// writes a copy of src with one edit to <tmpdir>/<out>; returns the path (static) or NULL
static const char * write_edited(const char * src, const char * out, enum edit_kind kind, const char * what) {
    static char path[512];
    struct ggml_context * gctx = NULL;
    struct gguf_init_params gp = { .no_alloc = false, .ctx = &gctx };
    struct gguf_context * g = gguf_init_from_file(src, gp);
    if (!g) {
        return NULL;
    }
    struct ggml_init_params ip = { .mem_size = 16 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * extra = ggml_init(ip);

    struct gguf_context * o = gguf_init_empty();
    gguf_set_kv(o, g);
    if (kind == EDIT_ARCH) {
        gguf_set_val_str(o, "general.architecture", what);
    } else if (kind == EDIT_DROP_KEY) {
        gguf_remove_key(o, what);
    } else if (kind == EDIT_KEY_STR) {
        gguf_set_val_str(o, what, "four");
    } else if (kind == EDIT_KEY_SPLIT) {
        gguf_set_val_u16(o, "split.no", 0);
        gguf_set_val_u16(o, "split.count", 3);
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        const char * name = gguf_get_tensor_name(g, i);
        struct ggml_tensor * t = ggml_get_tensor(gctx, name);
        const bool target = what && strcmp(name, what) == 0;
        if (target && kind == EDIT_DROP_TENSOR) {
            continue;
        }
        if (target && kind == EDIT_RESHAPE) {
            // one column fewer
            struct ggml_tensor * r = ggml_new_tensor_2d(extra, t->type, t->ne[0], t->ne[1] - 1);
            ggml_set_name(r, name);
            memset(r->data, 0, ggml_nbytes(r));
            gguf_add_tensor(o, r);
            continue;
        }
        if (target && kind == EDIT_RETYPE_F16) {
            struct ggml_tensor * r = ggml_new_tensor(extra, GGML_TYPE_F16, ggml_n_dims(t), t->ne);
            ggml_set_name(r, name);
            memset(r->data, 0, ggml_nbytes(r));
            gguf_add_tensor(o, r);
            continue;
        }
        gguf_add_tensor(o, t);
    }
    if (kind == EDIT_ADD_TENSOR) {
        struct ggml_tensor * r = ggml_new_tensor_1d(extra, GGML_TYPE_F32, 8);
        ggml_set_name(r, what);
        memset(r->data, 0, ggml_nbytes(r));
        gguf_add_tensor(o, r);
    }
    snprintf(path, sizeof(path), "%s/%s", g_tmpdir, out);
    const bool ok = gguf_write_to_file(o, path, false);
    gguf_free(o);
    gguf_free(g);
    ggml_free(gctx);
    ggml_free(extra);
    return ok ? path : NULL;
}

// loading path must fail, and the log must contain each of the needles
static void expect_fail(const char * label, const char * path, struct llama_model_params mp,
                        const char * n1, const char * n2, const char * n3) {
    TH_CHECK(path != NULL, "%s: could not write the test file", label);
    if (!path) {
        return;
    }
    log_clear();
    struct llama_model * m = llama_model_load_from_file(path, mp);
    TH_CHECK(m == NULL, "%s: loaded a broken file", label);
    llama_model_free(m);
    TH_CHECK((!n1 || log_has(n1)) && (!n2 || log_has(n2)) && (!n3 || log_has(n3)),
             "%s: log does not name the problem (want '%s' '%s' '%s'): %s", label, n1 ? n1 : "", n2 ? n2 : "",
             n3 ? n3 : "", g_log);
}

static bool g_cancel_seen_one = false;
static float g_last_progress = -1.0f;
static int g_progress_calls = 0;
static bool g_progress_monotonic = true;

static bool progress_record(float p, void * ud) {
    (void) ud;
    if (p < g_last_progress) {
        g_progress_monotonic = false;
    }
    g_last_progress = p;
    g_progress_calls++;
    return true;
}

static bool progress_cancel(float p, void * ud) {
    (void) p;
    (void) ud;
    g_cancel_seen_one = true;
    return false;
}

static void check_broken_inputs(void) {
    const char * src = th_data_path("models/synthetic/llama-F32.gguf");
    if (!th_require_file(src)) {
        return;
    }
    snprintf(g_tmpdir, sizeof(g_tmpdir), "/tmp/test-model-load-XXXXXX");
    if (!mkdtemp(g_tmpdir)) {
        TH_CHECK(false, "mkdtemp failed");
        return;
    }
    const struct llama_model_params mp = quiet_params();

    // the unedited copy loads (the writer round trip itself is sound)
    {
        const char * p = write_edited(src, "copy.gguf", EDIT_DROP_KEY, "no.such.key");
        struct llama_model * m = p ? llama_model_load_from_file(p, mp) : NULL;
        TH_CHECK(m != NULL, "unedited copy does not load: %s", log_first_error());
        llama_model_free(m);
    }

    expect_fail("missing tensor", write_edited(src, "drop.gguf", EDIT_DROP_TENSOR, "blk.1.attn_k.weight"), mp,
                "missing tensor", "blk.1.attn_k.weight", "drop.gguf");
    expect_fail("wrong shape", write_edited(src, "shape.gguf", EDIT_RESHAPE, "blk.2.ffn_up.weight"), mp,
                "blk.2.ffn_up.weight", "expected 256 x 768, got 256 x 767", "shape.gguf");
    expect_fail("wrong type", write_edited(src, "type.gguf", EDIT_RETYPE_F16, "output_norm.weight"), mp,
                "output_norm.weight", "wrong type", "f16");
    expect_fail("unknown arch", write_edited(src, "arch.gguf", EDIT_ARCH, "nosucharch"), mp,
                "unknown model architecture", "'nosucharch'", "arch.gguf");
    expect_fail("missing key", write_edited(src, "key.gguf", EDIT_DROP_KEY, "llama.embedding_length"), mp,
                "key not found", "llama.embedding_length", "key.gguf");
    expect_fail("missing head count", write_edited(src, "heads.gguf", EDIT_DROP_KEY, "llama.attention.head_count"), mp,
                "key not found", "llama.attention.head_count", NULL);
    expect_fail("missing rms eps", write_edited(src, "eps.gguf", EDIT_DROP_KEY, "llama.attention.layer_norm_rms_epsilon"), mp,
                "llama.attention.layer_norm_rms_epsilon", NULL, NULL);
    expect_fail("missing arch key", write_edited(src, "noarch.gguf", EDIT_DROP_KEY, "general.architecture"), mp,
                "general.architecture", NULL, NULL);
    expect_fail("wrong key type", write_edited(src, "keytype.gguf", EDIT_KEY_STR, "llama.block_count"), mp,
                "llama.block_count", "has type str", NULL);
    expect_fail("extra tensor", write_edited(src, "extra.gguf", EDIT_ADD_TENSOR, "blk.0.bogus.weight"), mp,
                "unexpected tensor", "blk.0.bogus.weight", NULL);
    // a file that says it is split but is not named like the first of its splits (loading real splits:
    // test-model-split)
    expect_fail("split model", write_edited(src, "split.gguf", EDIT_KEY_SPLIT, NULL), mp,
                "invalid split file name", "split.gguf", NULL);
    expect_fail("missing file", "/nonexistent/dir/model.gguf", mp, "/nonexistent/dir/model.gguf", NULL, NULL);
    // the same with the read path
    {
        struct llama_model_params mr = mp;
        mr.use_mmap = false;
        expect_fail("missing tensor (read)", write_edited(src, "drop2.gguf", EDIT_DROP_TENSOR, "blk.3.ffn_down.weight"), mr,
                    "missing tensor", "blk.3.ffn_down.weight", NULL);
    }
    // the output head of llama is optional: dropping it ties the output to token_embd
    {
        const char * p = write_edited(src, "tied.gguf", EDIT_DROP_TENSOR, "output.weight");
        struct llama_model * m = p ? llama_model_load_from_file(p, mp) : NULL;
        TH_CHECK(m && m->output == m->tok_embd, "llama without output.weight ties to token_embd");
        llama_model_free(m);
    }

    // truncated files: every cut fails cleanly
    {
        size_t n = 0;
        uint8_t * bytes = th_read_file(src, &n);
        TH_CHECK(bytes != NULL, "read %s", src);
        const size_t cuts[] = { 0, 3, 24, 1000, n / 3, n / 2, n - 1 };
        for (size_t i = 0; bytes && i < sizeof(cuts) / sizeof(cuts[0]); i++) {
            char p[512];
            snprintf(p, sizeof(p), "%s/cut%zu.gguf", g_tmpdir, i);
            FILE * f = fopen(p, "wb");
            if (!f) {
                continue;
            }
            fwrite(bytes, 1, cuts[i], f);
            fclose(f);
            for (int mm = 0; mm < 2; mm++) {
                struct llama_model_params q = mp;
                q.use_mmap = mm == 1;
                log_clear();
                struct llama_model * m = llama_model_load_from_file(p, q);
                TH_CHECK(m == NULL && g_log_len > 0, "truncated at %zu bytes (mmap %d) loaded", cuts[i], mm);
                llama_model_free(m);
            }
            unlink(p);
        }
        free(bytes);
    }

    // kv overrides
    {
        struct llama_model_kv_override ov[2];
        memset(ov, 0, sizeof(ov));
        ov[0].tag = LLAMA_KV_OVERRIDE_TYPE_INT;
        snprintf(ov[0].key, sizeof(ov[0].key), "llama.context_length");
        ov[0].val_i64 = 1024;
        struct llama_model_params q = mp;
        q.kv_overrides = ov;
        struct llama_model * m = llama_model_load_from_file(src, q);
        TH_CHECK(m && llama_model_n_ctx_train(m) == 1024, "int override of context_length");
        llama_model_free(m);

        ov[0].tag = LLAMA_KV_OVERRIDE_TYPE_FLOAT;
        snprintf(ov[0].key, sizeof(ov[0].key), "llama.attention.layer_norm_rms_epsilon");
        ov[0].val_f64 = 1e-3;
        m = llama_model_load_from_file(src, q);
        TH_CHECK(m && close_f(m->hparams.f_norm_rms_eps, 1e-3), "float override of rms eps");
        llama_model_free(m);

        ov[0].tag = LLAMA_KV_OVERRIDE_TYPE_STR;
        snprintf(ov[0].key, sizeof(ov[0].key), "llama.block_count");
        snprintf(ov[0].val_str, sizeof(ov[0].val_str), "4");
        expect_fail("override of the wrong type", src, q, "llama.block_count", "override", NULL);

        ov[0].tag = LLAMA_KV_OVERRIDE_TYPE_INT;
        ov[0].val_i64 = -3;
        expect_fail("override out of range", src, q, "llama.block_count", "out of range", NULL);
    }

    // progress: monotonic, ends at 1; a callback that returns false cancels the load
    {
        struct llama_model_params q = mp;
        q.progress_callback = progress_record;
        struct llama_model * m = llama_model_load_from_file(src, q);
        TH_CHECK(m && g_progress_calls > 1 && g_progress_monotonic && g_last_progress == 1.0f,
                 "progress: %d calls, last %f", g_progress_calls, (double) g_last_progress);
        llama_model_free(m);
        q.progress_callback = progress_cancel;
        expect_fail("cancelled load", src, q, "cancelled", NULL, NULL);
        TH_CHECK(g_cancel_seen_one, "cancel callback called");

        // without a callback the loader draws llama.cpp's bar: one dot per percent, then a newline
        char bar[102];
        memset(bar, '.', 100);
        bar[100] = '\n';
        bar[101] = '\0';
        log_clear();
        m = llama_model_load_from_file(src, mp);
        const char * at = strstr(g_log, bar);
        TH_CHECK(m && at && (at == g_log || at[-1] != '.'), "default progress bar of 100 dots");
        llama_model_free(m);
    }

    // check_tensors accepts good data
    {
        struct llama_model_params q = mp;
        q.check_tensors = true;
        struct llama_model * m = llama_model_load_from_file(src, q);
        TH_CHECK(m != NULL, "check_tensors on a good file");
        llama_model_free(m);
    }

    // no_alloc: tensor headers with their shapes, but no weight data
    {
        struct llama_model_params q = mp;
        q.no_alloc = true;
        struct llama_model * m = llama_model_load_from_file(src, q);
        TH_CHECK(m && m->tok_embd && m->tok_embd->data == NULL && m->buf_w == NULL &&
                 llama_model_n_params(m) == 3410176, "no_alloc load");
        llama_model_free(m);
    }

    // metadata corruption: random bytes in the header of a small model never crash the loader (run under
    // ASan in CI); whatever loads must still be self-consistent
    {
        const char * small = th_data_path("models/stories260K-f32.gguf");
        size_t n = 0;
        uint8_t * bytes = th_require_file(small) ? th_read_file(small, &n) : NULL;
        struct gguf_init_params gp = { .no_alloc = true, .ctx = NULL };
        struct gguf_context * g = bytes ? gguf_init_from_file(small, gp) : NULL;
        const size_t meta_end = g ? gguf_get_data_offset(g) : 0;
        gguf_free(g);
        uint32_t rng = 42;
        int n_loaded = 0, n_failed = 0;
        for (int it = 0; bytes && meta_end > 0 && it < 300; it++) {
            uint8_t * copy = malloc(n);
            memcpy(copy, bytes, n);
            const int n_flip = 1 + it % 4;
            for (int k = 0; k < n_flip; k++) {
                rng = rng * 1103515245u + 12345u;
                const size_t off = (rng >> 4) % meta_end;
                rng = rng * 1103515245u + 12345u;
                copy[off] = (uint8_t) (rng >> 16);
            }
            char p[512];
            snprintf(p, sizeof(p), "%s/fuzz.gguf", g_tmpdir);
            FILE * f = fopen(p, "wb");
            if (f) {
                fwrite(copy, 1, n, f);
                fclose(f);
                log_clear();
                struct llama_model * m = llama_model_load_from_file(p, mp);
                if (m) {
                    n_loaded++;
                    TH_EXPECT(m->hparams.n_layer > 0 && m->tok_embd && m->output && m->layers, "fuzz %d: incomplete model", it);
                    llama_model_free(m);
                } else {
                    n_failed++;
                    TH_EXPECT(g_log_len > 0, "fuzz %d: failed without a log line", it);
                }
            }
            free(copy);
        }
        TH_CHECK(!bytes || n_loaded + n_failed == 300, "metadata corruption: %d loaded, %d rejected", n_loaded, n_failed);
        printf("metadata corruption: %d files loaded, %d rejected\n", n_loaded, n_failed);
        free(bytes);
    }

    // remove the temp files
    const char * names[] = { "copy.gguf", "drop.gguf", "shape.gguf", "type.gguf", "arch.gguf", "key.gguf",
                             "heads.gguf", "eps.gguf", "noarch.gguf", "keytype.gguf", "extra.gguf", "drop2.gguf",
                             "tied.gguf", "split.gguf", "fuzz.gguf" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", g_tmpdir, names[i]);
        unlink(p);
    }
    rmdir(g_tmpdir);
}

// ---- public helpers ----------------------------------------------------------------------------------------

static void check_misc(void) {
    struct llama_model_params mp = llama_model_default_params();
    TH_CHECK(mp.use_mmap && !mp.vocab_only && !mp.use_mlock && mp.n_gpu_layers == -1 && mp.kv_overrides == NULL,
             "model default params");
    struct llama_context_params cp = llama_context_default_params();
    TH_CHECK(cp.n_ctx == 512 && cp.n_batch == 2048 && cp.n_ubatch == 512 && cp.n_seq_max == 1 &&
             cp.n_outputs_max == 0 && cp.n_outputs_max_per_seq == 1 && cp.type_k == GGML_TYPE_F16 &&
             cp.swa_full && !cp.kv_unified && cp.flash_attn_type == LLAMA_FLASH_ATTN_TYPE_AUTO,
             "context default params");
    TH_CHECK(llama_supports_mmap() && llama_max_devices() > 0, "capabilities");
    TH_CHECK(strcmp(llama_flash_attn_type_name(LLAMA_FLASH_ATTN_TYPE_DISABLED), "disabled") == 0, "fa name");
    TH_CHECK(llama_print_system_info() != NULL, "system info");
    const int64_t t0 = llama_time_us();
    TH_CHECK(t0 > 0 && llama_time_us() >= t0, "time");
    char sp[128];
    TH_CHECK(llama_split_path(sp, sizeof(sp), "/m/x", 1, 4) > 0 && strcmp(sp, "/m/x-00002-of-00004.gguf") == 0,
             "split path '%s'", sp);
    TH_CHECK(llama_split_prefix(sp, sizeof(sp), "/m/x-00002-of-00004.gguf", 1, 4) == 4 && strcmp(sp, "/m/x") == 0,
             "split prefix '%s'", sp);
    TH_CHECK(llama_split_prefix(sp, sizeof(sp), "/m/x-00002-of-00004.gguf", 2, 4) == 0, "split prefix mismatch");
    TH_CHECK(llama_model_load_from_file(NULL, mp) == NULL, "NULL path");
}

int main(void) {
    llama_backend_init();
    llama_log_set(capture_log, NULL);
    g_log_echo = getenv("TEST_VERBOSE") != NULL;

    check_misc();

    const char * index_path = th_data_path("reference/synthetic/index.json");
    if (th_require_file(index_path)) {
        json_error_t jerr;
        json_t * root = json_load_file(index_path, 0, &jerr);
        TH_CHECK(root != NULL, "index.json: %s", jerr.text);
        if (root) {
            json_t * jm;
            size_t i;
            json_array_foreach(json_object_get(root, "models"), i, jm) {
                check_synthetic_model(jm, true);
            }
            // the read (no-mmap) path on a few files
            json_array_foreach(json_object_get(root, "models"), i, jm) {
                const char * f = json_string_value(json_object_get(jm, "file"));
                if (strstr(f, "-F16") || strcmp(f, "llama-Q4_K_M.gguf") == 0) {
                    check_synthetic_model(jm, false);
                }
            }
            check_kernel_dumps(root);
            json_decref(root);
        }
    }

    check_real_models();
    check_vocab_only();
    check_broken_inputs();

    llama_log_set(NULL, NULL);
    llama_backend_free();
    return th_finish();
}
