// llama-quantize: llama.cpp's quantizer front end.
//
//   llama-quantize [options] model-f32.gguf [model-quant.gguf] type [nthreads]
//
// Exit status 0 on success, 1 on bad arguments, a bad importance matrix or a failed quantization (nothing is
// left under the output name then).

#include "quantize-imatrix.h"

#include "arg.h"
#include "llama.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct quant_option {
    const char *     name;
    enum llama_ftype ftype;
    const char *     desc;
};

// the file types this build can write (types without a quantizer here are left out so that asking for
// one is a plain "unknown type" error)
static const struct quant_option QUANT_OPTIONS[] = {
    { "Q4_0",   LLAMA_FTYPE_MOSTLY_Q4_0,   " 4.34G, +0.4685 ppl @ Llama-3-8B" },
    { "Q4_1",   LLAMA_FTYPE_MOSTLY_Q4_1,   " 4.78G, +0.4511 ppl @ Llama-3-8B" },
    { "Q5_0",   LLAMA_FTYPE_MOSTLY_Q5_0,   " 5.21G, +0.1316 ppl @ Llama-3-8B" },
    { "Q5_1",   LLAMA_FTYPE_MOSTLY_Q5_1,   " 5.65G, +0.1062 ppl @ Llama-3-8B" },
    { "Q2_K",   LLAMA_FTYPE_MOSTLY_Q2_K,   " 2.96G, +3.5199 ppl @ Llama-3-8B" },
    { "Q3_K",   LLAMA_FTYPE_MOSTLY_Q3_K_M, "alias for Q3_K_M" },
    { "Q3_K_S", LLAMA_FTYPE_MOSTLY_Q3_K_S, " 3.41G, +1.6321 ppl @ Llama-3-8B" },
    { "Q3_K_M", LLAMA_FTYPE_MOSTLY_Q3_K_M, " 3.74G, +0.6569 ppl @ Llama-3-8B" },
    { "Q3_K_L", LLAMA_FTYPE_MOSTLY_Q3_K_L, " 4.03G, +0.5562 ppl @ Llama-3-8B" },
    { "IQ4_NL", LLAMA_FTYPE_MOSTLY_IQ4_NL, " 4.50 bpw non-linear quantization" },
    { "IQ4_XS", LLAMA_FTYPE_MOSTLY_IQ4_XS, " 4.25 bpw non-linear quantization" },
    { "Q4_K",   LLAMA_FTYPE_MOSTLY_Q4_K_M, "alias for Q4_K_M" },
    { "Q4_K_S", LLAMA_FTYPE_MOSTLY_Q4_K_S, " 4.37G, +0.2689 ppl @ Llama-3-8B" },
    { "Q4_K_M", LLAMA_FTYPE_MOSTLY_Q4_K_M, " 4.58G, +0.1754 ppl @ Llama-3-8B" },
    { "Q5_K",   LLAMA_FTYPE_MOSTLY_Q5_K_M, "alias for Q5_K_M" },
    { "Q5_K_S", LLAMA_FTYPE_MOSTLY_Q5_K_S, " 5.21G, +0.1049 ppl @ Llama-3-8B" },
    { "Q5_K_M", LLAMA_FTYPE_MOSTLY_Q5_K_M, " 5.33G, +0.0569 ppl @ Llama-3-8B" },
    { "Q6_K",   LLAMA_FTYPE_MOSTLY_Q6_K,   " 6.14G, +0.0217 ppl @ Llama-3-8B" },
    { "Q8_0",   LLAMA_FTYPE_MOSTLY_Q8_0,   " 7.96G, +0.0026 ppl @ Llama-3-8B" },
    { "F16",    LLAMA_FTYPE_MOSTLY_F16,    "14.00G, +0.0020 ppl @ Mistral-7B" },
    { "BF16",   LLAMA_FTYPE_MOSTLY_BF16,   "14.00G, -0.0050 ppl @ Mistral-7B" },
    { "F32",    LLAMA_FTYPE_ALL_F32,       "26.00G              @ 7B" },
    // after F32, so that the numeric id 0 names F32
    { "COPY",   LLAMA_FTYPE_ALL_F32,       "only copy tensors, no quantizing" },
};
#define N_QUANT_OPTIONS (sizeof(QUANT_OPTIONS)/sizeof(QUANT_OPTIONS[0]))

#define MAX_TENSOR_TYPES 256

// llama.cpp's metadata keys recording which importance matrix a quantized model was made with
#define LLM_KV_QUANTIZE_IMATRIX_FILE      "quantize.imatrix.file"
#define LLM_KV_QUANTIZE_IMATRIX_DATASET   "quantize.imatrix.dataset"
#define LLM_KV_QUANTIZE_IMATRIX_N_ENTRIES "quantize.imatrix.entries_count"
#define LLM_KV_QUANTIZE_IMATRIX_N_CHUNKS  "quantize.imatrix.chunks_count"

static bool str_ieq(const char * a, const char * b) {
    for (; *a && *b; a++, b++) {
        if (tolower((unsigned char) *a) != tolower((unsigned char) *b)) {
            return false;
        }
    }
    return *a == *b;
}

// a type by name (Q4_K_M, q8_0, ...) or by numeric file type id; NULL if neither
static const struct quant_option * parse_ftype(const char * s) {
    for (size_t i = 0; i < N_QUANT_OPTIONS; i++) {
        if (str_ieq(QUANT_OPTIONS[i].name, s)) {
            return &QUANT_OPTIONS[i];
        }
    }
    char * end = NULL;
    const long v = strtol(s, &end, 10);
    if (end == s || *end != '\0') {
        return NULL;
    }
    for (size_t i = 0; i < N_QUANT_OPTIONS; i++) {
        if ((long) QUANT_OPTIONS[i].ftype == v) {
            return &QUANT_OPTIONS[i];
        }
    }
    return NULL;
}

static enum ggml_type parse_ggml_type(const char * s) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * name = ggml_type_name((enum ggml_type) t);
        if (name && ggml_blck_size((enum ggml_type) t) > 0 && str_ieq(name, s)) {
            return (enum ggml_type) t;
        }
    }
    fprintf(stderr, "error: invalid ggml_type '%s'\n", s);
    return GGML_TYPE_COUNT;
}

static void usage(const char * exe) {
    printf("usage: %s [--help] [--allow-requantize] [--leave-output-tensor] [--pure] [--imatrix] [--include-weights]\n", exe);
    printf("       [--exclude-weights] [--output-tensor-type] [--token-embedding-type] [--tensor-type] [--override-kv]\n");
    printf("       [--dry-run] model-f32.gguf [model-quant.gguf] type [nthreads]\n\n");
    printf("  --allow-requantize\n");
    printf("                                      allow requantizing tensors that have already been quantized\n");
    printf("                                      WARNING: this can severely reduce quality compared to quantizing\n");
    printf("                                               from 16bit or 32bit!\n");
    printf("  --leave-output-tensor\n");
    printf("                                      leave output.weight un(re)quantized\n");
    printf("  --pure\n");
    printf("                                      disable k-quant mixtures and quantize all tensors to the same type\n");
    printf("  --imatrix file_name\n");
    printf("                                      use data in file_name as importance matrix for quant optimizations\n");
    printf("                                      (llama-imatrix's GGUF files or the legacy .dat format)\n");
    printf("  --include-weights tensor_name\n");
    printf("                                      use importance matrix for this/these tensor(s); may be repeated\n");
    printf("  --exclude-weights tensor_name\n");
    printf("                                      do not use importance matrix for this/these tensor(s); may be repeated\n");
    printf("  --output-tensor-type ggml_type\n");
    printf("                                      use this ggml_type for the output.weight tensor\n");
    printf("  --token-embedding-type ggml_type\n");
    printf("                                      use this ggml_type for the token embeddings tensor\n");
    printf("  --tensor-type tensor_name=ggml_type\n");
    printf("                                      quantize tensors matching tensor_name to ggml_type; may be repeated\n");
    printf("  --override-kv KEY=TYPE:VALUE\n");
    printf("                                      override model metadata by key in the quantized model (TYPE: int,\n");
    printf("                                      float, bool or str); may be repeated\n");
    printf("                                      WARNING: this is an advanced option, use with care.\n");
    printf("  --dry-run\n");
    printf("                                      calculate and show the final quantization size without quantizing\n\n");
    printf("note: --include-weights and --exclude-weights cannot be used together\n\n");
    printf("-----------------------------------------------------------------------------\n");
    printf(" allowed quantization types\n");
    printf("-----------------------------------------------------------------------------\n\n");
    for (size_t i = 0; i < N_QUANT_OPTIONS; i++) {
        if (strcmp(QUANT_OPTIONS[i].name, "COPY") != 0) {
            printf("  %2d  or  ", (int) QUANT_OPTIONS[i].ftype);
        } else {
            printf("          ");
        }
        printf("%-7s : %s\n", QUANT_OPTIONS[i].name, QUANT_OPTIONS[i].desc);
    }
}

static bool same_file(const char * a, const char * b) {
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) {
        return false;
    }
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void kv_set_str(struct llama_model_kv_override * kv, const char * key, const char * val) {
    memset(kv, 0, sizeof(*kv));
    snprintf(kv->key, sizeof(kv->key), "%s", key);
    kv->tag = LLAMA_KV_OVERRIDE_TYPE_STR;
    // llama.cpp keeps the first 127 bytes of a longer value
    snprintf(kv->val_str, sizeof(kv->val_str), "%s", val);
}

static void kv_set_int(struct llama_model_kv_override * kv, const char * key, int64_t val) {
    memset(kv, 0, sizeof(*kv));
    snprintf(kv->key, sizeof(kv->key), "%s", key);
    kv->tag = LLAMA_KV_OVERRIDE_TYPE_INT;
    kv->val_i64 = val;
}

// llama.cpp's load_imatrix + prepare_imatrix: read the file, print what it holds, apply the weight selection.
// false (after an error line) if the file cannot be used.
static bool prepare_imatrix(const char * fname, const char * const * incl, size_t n_incl, const char * const * excl,
                            size_t n_excl, struct quant_imatrix * im) {
    char err[1024];
    if (!quant_imatrix_load(fname, im, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        fprintf(stderr, "%s: failed to load importance matrix from '%s'\n", __func__, fname);
        return false;
    }
    const char * fn = im->legacy ? "load_legacy_imatrix" : "load_imatrix";
    if (im->legacy) {
        if (im->n_datasets > 0) {
            printf("%s: imatrix dataset='%s'\n", fn, im->datasets[0]);
        }
    } else if (im->n_datasets > 0) {
        printf("%s: imatrix datasets=['%s'", fn, im->datasets[0]);
        for (size_t i = 1; i < im->n_datasets; i++) {
            printf(", '%s'", im->datasets[i]);
        }
        printf("]\n");
    }
    printf("%s: loaded %d importance matrix entries from %s computed on %d chunks\n", fn, (int) im->n, fname,
           im->chunk_count);
    quant_imatrix_exclude(im, excl, n_excl);
    quant_imatrix_include(im, incl, n_incl);
    if (im->n > 0) {
        printf("%s: have %d importance matrix entries\n", __func__, (int) im->n);
    }
    fflush(stdout);  // before the library's progress lines on stderr
    return true;
}

int main(int argc, char ** argv) {
    struct llama_model_quantize_params params = llama_model_quantize_default_params();

    // --tensor-type NAME=TYPE; the strings point into argv
    static struct llama_model_tensor_override tto[MAX_TENSOR_TYPES + 1];
    static char tto_names[MAX_TENSOR_TYPES][256];
    size_t n_tto = 0;

    // --imatrix, --include-weights / --exclude-weights (the names point into argv)
    const char * imatrix_file = NULL;
    const char ** incl = calloc((size_t) argc + 1, sizeof(*incl));
    const char ** excl = calloc((size_t) argc + 1, sizeof(*excl));
    size_t n_incl = 0, n_excl = 0;
    // --override-kv entries, then the four quantize.imatrix.* keys, then the empty terminator
    struct llama_model_kv_override * kvo = calloc((size_t) argc + 5, sizeof(*kvo));
    size_t n_kvo = 0;
    struct quant_imatrix im;
    memset(&im, 0, sizeof(im));
    int ret = 1;
    if (!incl || !excl || !kvo) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }

    int ai = 1;
    for (; ai < argc && strncmp(argv[ai], "--", 2) == 0; ai++) {
        const char * a = argv[ai];
        if (strcmp(a, "--leave-output-tensor") == 0) {
            params.quantize_output_tensor = false;
        } else if (strcmp(a, "--allow-requantize") == 0) {
            params.allow_requantize = true;
        } else if (strcmp(a, "--pure") == 0) {
            params.pure = true;
        } else if (strcmp(a, "--dry-run") == 0) {
            params.dry_run = true;
        } else if (strcmp(a, "--output-tensor-type") == 0 || strcmp(a, "--token-embedding-type") == 0) {
            if (ai + 1 >= argc) {
                fprintf(stderr, "error: %s needs a type\n", a);
                usage(argv[0]);
                goto done;
            }
            const enum ggml_type t = parse_ggml_type(argv[++ai]);
            if (t == GGML_TYPE_COUNT) {
                usage(argv[0]);
                goto done;
            }
            if (strcmp(a, "--output-tensor-type") == 0) {
                params.output_tensor_type = t;
            } else {
                params.token_embedding_type = t;
            }
        } else if (strcmp(a, "--tensor-type") == 0) {
            const char * v = ai + 1 < argc ? argv[++ai] : NULL;
            const char * eq = v ? strchr(v, '=') : NULL;
            if (!eq || eq == v || n_tto >= MAX_TENSOR_TYPES || (size_t) (eq - v) >= sizeof(tto_names[0])) {
                fprintf(stderr, "error: malformed --tensor-type '%s' (expected tensor_name=ggml_type)\n", v ? v : "");
                usage(argv[0]);
                goto done;
            }
            const enum ggml_type t = parse_ggml_type(eq + 1);
            if (t == GGML_TYPE_COUNT) {
                usage(argv[0]);
                goto done;
            }
            const size_t n = (size_t) (eq - v);
            for (size_t k = 0; k < n; k++) {
                tto_names[n_tto][k] = (char) tolower((unsigned char) v[k]);
            }
            tto_names[n_tto][n] = '\0';
            tto[n_tto].pattern = tto_names[n_tto];
            tto[n_tto].type = t;
            n_tto++;
        } else if (strcmp(a, "--imatrix") == 0 || strcmp(a, "--include-weights") == 0 ||
                   strcmp(a, "--exclude-weights") == 0 || strcmp(a, "--override-kv") == 0) {
            if (ai + 1 >= argc) {
                fprintf(stderr, "error: %s needs a value\n", a);
                usage(argv[0]);
                goto done;
            }
            const char * v = argv[++ai];
            if (strcmp(a, "--imatrix") == 0) {
                imatrix_file = v;
            } else if (strcmp(a, "--include-weights") == 0) {
                incl[n_incl++] = v;
            } else if (strcmp(a, "--exclude-weights") == 0) {
                excl[n_excl++] = v;
            } else {
                const char * e = common_parse_kv_override(v, &kvo[n_kvo]);
                if (e) {
                    fprintf(stderr, "error: %s\n", e);
                    usage(argv[0]);
                    goto done;
                }
                n_kvo++;
            }
        } else if (strcmp(a, "--help") == 0) {
            usage(argv[0]);
            ret = 0;
            goto done;
        } else {
            fprintf(stderr, "error: unknown option '%s'\n", a);
            usage(argv[0]);
            goto done;
        }
    }
    if (n_tto > 0) {
        tto[n_tto].pattern = NULL;
        tto[n_tto].type = GGML_TYPE_COUNT;
        params.tt_overrides = tto;
    }

    if (argc - ai < 2) {
        printf("%s: bad arguments\n", argv[0]);
        usage(argv[0]);
        goto done;
    }
    if (n_incl > 0 && n_excl > 0) {
        fprintf(stderr, "error: --include-weights and --exclude-weights cannot be used together\n");
        usage(argv[0]);
        goto done;
    }

    const char * fname_inp = argv[ai++];
    char fname_buf[4096];
    const char * fname_out = NULL;
    const struct quant_option * opt = parse_ftype(argv[ai]);
    if (opt) {
        // <input> <type>: the output goes next to the input as ggml-model-<TYPE>.gguf
        const char * slash = strrchr(fname_inp, '/');
        const int dir_len = slash ? (int) (slash - fname_inp + 1) : 0;
        snprintf(fname_buf, sizeof(fname_buf), "%.*sggml-model-%s.gguf", dir_len, fname_inp, opt->name);
        fname_out = fname_buf;
        ai++;
    } else {
        fname_out = argv[ai++];
        if (ai >= argc) {
            fprintf(stderr, "%s: missing ftype\n", __func__);
            goto done;
        }
        opt = parse_ftype(argv[ai]);
        if (!opt) {
            fprintf(stderr, "%s: invalid ftype '%s'\n", __func__, argv[ai]);
            usage(argv[0]);
            goto done;
        }
        ai++;
    }
    params.ftype = opt->ftype;
    if (strcmp(opt->name, "COPY") == 0) {
        params.only_copy = true;
    }

    if (ai < argc) {
        char * end = NULL;
        const long nt = strtol(argv[ai], &end, 10);
        if (end == argv[ai] || *end != '\0' || nt < 0 || nt > 4096) {
            fprintf(stderr, "%s: invalid nthread '%s'\n", __func__, argv[ai]);
            goto done;
        }
        params.nthread = (int32_t) nt;
        ai++;
    }
    if (ai < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", __func__, argv[ai]);
        usage(argv[0]);
        goto done;
    }

    if (!params.dry_run && same_file(fname_inp, fname_out)) {
        fprintf(stderr, "%s: error: input and output files are the same: '%s'\n", __func__, fname_inp);
        goto done;
    }

    if (imatrix_file && !prepare_imatrix(imatrix_file, incl, n_incl, excl, n_excl, &im)) {
        goto done;
    }
    if (im.n > 0) {
        params.imatrix = quant_imatrix_params(&im);
        if (!params.imatrix) {
            fprintf(stderr, "error: out of memory\n");
            goto done;
        }
        // after the --override-kv entries, as llama.cpp appends them
        kv_set_str(&kvo[n_kvo++], LLM_KV_QUANTIZE_IMATRIX_FILE, imatrix_file);
        if (im.n_datasets > 0) {
            kv_set_str(&kvo[n_kvo++], LLM_KV_QUANTIZE_IMATRIX_DATASET, im.datasets[0]);
        }
        kv_set_int(&kvo[n_kvo++], LLM_KV_QUANTIZE_IMATRIX_N_ENTRIES, (int64_t) im.n);
        if (im.chunk_count > 0) {
            kv_set_int(&kvo[n_kvo++], LLM_KV_QUANTIZE_IMATRIX_N_CHUNKS, im.chunk_count);
        }
    }
    if (n_kvo > 0) {
        kvo[n_kvo].key[0] = '\0';  // the terminator (calloc'ed)
        params.kv_overrides = kvo;
    }

    llama_backend_init();

    if (params.dry_run) {
        fprintf(stderr, "%s: calculating quantization size for '%s' as %s", __func__, fname_inp, opt->name);
    } else {
        fprintf(stderr, "%s: quantizing '%s' to '%s' as %s", __func__, fname_inp, fname_out, opt->name);
    }
    if (params.nthread > 0) {
        fprintf(stderr, " using %d threads", params.nthread);
    }
    fprintf(stderr, "\n");

    const int64_t t_start_us = llama_time_us();
    if (llama_model_quantize(fname_inp, fname_out, &params) != 0) {
        fprintf(stderr, "%s: failed to quantize model from '%s'\n", __func__, fname_inp);
        llama_backend_free();
        goto done;
    }
    const int64_t t_end_us = llama_time_us();

    printf("\n");
    printf("%s: quantize time = %8.2f ms\n", __func__, (t_end_us - t_start_us)/1000.0);
    printf("%s:    total time = %8.2f ms\n", __func__, (t_end_us - t_start_us)/1000.0);

    llama_backend_free();
    ret = 0;

done:
    quant_imatrix_free(&im);
    free(kvo);
    free(incl);
    free(excl);
    return ret;
}
