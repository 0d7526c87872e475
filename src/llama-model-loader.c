#include "llama-model-loader.h"

#include "llama-impl.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char * llama_model_ftype_name(enum llama_ftype ftype) {
    const bool guessed = (ftype & LLAMA_FTYPE_GUESSED) != 0;
    switch ((int) (ftype & ~LLAMA_FTYPE_GUESSED)) {
        case LLAMA_FTYPE_ALL_F32:         return guessed ? "all F32 (guessed)" : "all F32";
        case LLAMA_FTYPE_MOSTLY_F16:      return guessed ? "F16 (guessed)" : "F16";
        case LLAMA_FTYPE_MOSTLY_BF16:     return guessed ? "BF16 (guessed)" : "BF16";
        case LLAMA_FTYPE_MOSTLY_Q4_0:     return guessed ? "Q4_0 (guessed)" : "Q4_0";
        case LLAMA_FTYPE_MOSTLY_Q4_1:     return guessed ? "Q4_1 (guessed)" : "Q4_1";
        case LLAMA_FTYPE_MOSTLY_Q5_0:     return guessed ? "Q5_0 (guessed)" : "Q5_0";
        case LLAMA_FTYPE_MOSTLY_Q5_1:     return guessed ? "Q5_1 (guessed)" : "Q5_1";
        case LLAMA_FTYPE_MOSTLY_Q8_0:     return guessed ? "Q8_0 (guessed)" : "Q8_0";
        case LLAMA_FTYPE_MOSTLY_MXFP4_MOE: return guessed ? "MXFP4 MoE (guessed)" : "MXFP4 MoE";
        case LLAMA_FTYPE_MOSTLY_Q2_K:     return guessed ? "Q2_K - Medium (guessed)" : "Q2_K - Medium";
        case LLAMA_FTYPE_MOSTLY_Q2_K_S:   return guessed ? "Q2_K - Small (guessed)" : "Q2_K - Small";
        case LLAMA_FTYPE_MOSTLY_Q3_K_S:   return guessed ? "Q3_K - Small (guessed)" : "Q3_K - Small";
        case LLAMA_FTYPE_MOSTLY_Q3_K_M:   return guessed ? "Q3_K - Medium (guessed)" : "Q3_K - Medium";
        case LLAMA_FTYPE_MOSTLY_Q3_K_L:   return guessed ? "Q3_K - Large (guessed)" : "Q3_K - Large";
        case LLAMA_FTYPE_MOSTLY_Q4_K_S:   return guessed ? "Q4_K - Small (guessed)" : "Q4_K - Small";
        case LLAMA_FTYPE_MOSTLY_Q4_K_M:   return guessed ? "Q4_K - Medium (guessed)" : "Q4_K - Medium";
        case LLAMA_FTYPE_MOSTLY_Q5_K_S:   return guessed ? "Q5_K - Small (guessed)" : "Q5_K - Small";
        case LLAMA_FTYPE_MOSTLY_Q5_K_M:   return guessed ? "Q5_K - Medium (guessed)" : "Q5_K - Medium";
        case LLAMA_FTYPE_MOSTLY_Q6_K:     return guessed ? "Q6_K (guessed)" : "Q6_K";
        case LLAMA_FTYPE_MOSTLY_TQ1_0:    return "TQ1_0 - 1.69 bpw ternary";
        case LLAMA_FTYPE_MOSTLY_TQ2_0:    return "TQ2_0 - 2.06 bpw ternary";
        case LLAMA_FTYPE_MOSTLY_IQ2_XXS:  return "IQ2_XXS - 2.0625 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ2_XS:   return "IQ2_XS - 2.3125 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ2_S:    return "IQ2_S - 2.5 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ2_M:    return "IQ2_M - 2.7 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ3_XS:   return "IQ3_XS - 3.3 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ3_XXS:  return "IQ3_XXS - 3.0625 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ1_S:    return "IQ1_S - 1.5625 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ1_M:    return "IQ1_M - 1.75 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ4_NL:   return guessed ? "IQ4_NL - 4.5 bpw (guessed)" : "IQ4_NL - 4.5 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ4_XS:   return guessed ? "IQ4_XS - 4.25 bpw (guessed)" : "IQ4_XS - 4.25 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ3_S:    return "IQ3_S - 3.4375 bpw";
        case LLAMA_FTYPE_MOSTLY_IQ3_M:    return "IQ3_S mix - 3.66 bpw";
        default:                          return "unknown, may not work";
    }
}

// the file type a file "mostly" of this tensor type would have (for files without general.file_type)
static enum llama_ftype ftype_from_tensor_type(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32:     return LLAMA_FTYPE_ALL_F32;
        case GGML_TYPE_F16:     return LLAMA_FTYPE_MOSTLY_F16;
        case GGML_TYPE_BF16:    return LLAMA_FTYPE_MOSTLY_BF16;
        case GGML_TYPE_Q4_0:    return LLAMA_FTYPE_MOSTLY_Q4_0;
        case GGML_TYPE_Q4_1:    return LLAMA_FTYPE_MOSTLY_Q4_1;
        case GGML_TYPE_Q5_0:    return LLAMA_FTYPE_MOSTLY_Q5_0;
        case GGML_TYPE_Q5_1:    return LLAMA_FTYPE_MOSTLY_Q5_1;
        case GGML_TYPE_Q8_0:    return LLAMA_FTYPE_MOSTLY_Q8_0;
        case GGML_TYPE_Q2_K:    return LLAMA_FTYPE_MOSTLY_Q2_K;
        case GGML_TYPE_Q3_K:    return LLAMA_FTYPE_MOSTLY_Q3_K_M;
        case GGML_TYPE_Q4_K:    return LLAMA_FTYPE_MOSTLY_Q4_K_M;
        case GGML_TYPE_Q5_K:    return LLAMA_FTYPE_MOSTLY_Q5_K_M;
        case GGML_TYPE_Q6_K:    return LLAMA_FTYPE_MOSTLY_Q6_K;
        case GGML_TYPE_IQ2_XXS: return LLAMA_FTYPE_MOSTLY_IQ2_XXS;
        case GGML_TYPE_IQ2_XS:  return LLAMA_FTYPE_MOSTLY_IQ2_XS;
        case GGML_TYPE_IQ2_S:   return LLAMA_FTYPE_MOSTLY_IQ2_S;
        case GGML_TYPE_IQ3_XXS: return LLAMA_FTYPE_MOSTLY_IQ3_XXS;
        case GGML_TYPE_IQ3_S:   return LLAMA_FTYPE_MOSTLY_IQ3_S;
        case GGML_TYPE_IQ1_S:   return LLAMA_FTYPE_MOSTLY_IQ1_S;
        case GGML_TYPE_IQ1_M:   return LLAMA_FTYPE_MOSTLY_IQ1_M;
        case GGML_TYPE_IQ4_NL:  return LLAMA_FTYPE_MOSTLY_IQ4_NL;
        case GGML_TYPE_IQ4_XS:  return LLAMA_FTYPE_MOSTLY_IQ4_XS;
        case GGML_TYPE_TQ1_0:   return LLAMA_FTYPE_MOSTLY_TQ1_0;
        case GGML_TYPE_TQ2_0:   return LLAMA_FTYPE_MOSTLY_TQ2_0;
        case GGML_TYPE_MXFP4:   return LLAMA_FTYPE_MOSTLY_MXFP4_MOE;
        default:                return LLAMA_FTYPE_ALL_F32;
    }
}

static bool gguf_int_at(enum gguf_type t, const void * p, int64_t * v, bool * is_unsigned_big, uint64_t * u) {
    *is_unsigned_big = false;
    switch (t) {
        case GGUF_TYPE_UINT8:  { uint8_t  x; memcpy(&x, p, sizeof(x)); *v = x; return true; }
        case GGUF_TYPE_INT8:   { int8_t   x; memcpy(&x, p, sizeof(x)); *v = x; return true; }
        case GGUF_TYPE_UINT16: { uint16_t x; memcpy(&x, p, sizeof(x)); *v = x; return true; }
        case GGUF_TYPE_INT16:  { int16_t  x; memcpy(&x, p, sizeof(x)); *v = x; return true; }
        case GGUF_TYPE_UINT32: { uint32_t x; memcpy(&x, p, sizeof(x)); *v = x; return true; }
        case GGUF_TYPE_INT32:  { int32_t  x; memcpy(&x, p, sizeof(x)); *v = x; return true; }
        case GGUF_TYPE_INT64:  { int64_t  x; memcpy(&x, p, sizeof(x)); *v = x; return true; }
        case GGUF_TYPE_UINT64: {
            uint64_t x; memcpy(&x, p, sizeof(x));
            if (x > (uint64_t) INT64_MAX) {
                *is_unsigned_big = true;
                *u = x;
                *v = INT64_MAX;
            } else {
                *v = (int64_t) x;
            }
            return true;
        }
        default: return false;
    }
}

static size_t gguf_type_nbytes(enum gguf_type t) {
    switch (t) {
        case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
        case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
        case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
        case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
        default: return 0;
    }
}

void llama_model_loader_free(struct llama_model_loader * ml) {
    if (!ml) {
        return;
    }
    for (int i = 0; i < ml->n_files; i++) {
        struct llama_model_file * f = &ml->files[i];
        if (f->mapping) {
            if (f->mlocked) {
                munlock(f->mapping, f->size);
            }
            munmap(f->mapping, f->size);
        }
        if (f->fd >= 0) {
            close(f->fd);
        }
        gguf_free(f->meta);
        if (f->ctx_meta) {
            ggml_free(f->ctx_meta);
        }
        free(f->fname);
    }
    free(ml->files);
    free(ml->weights);
    free(ml);
}

// opens path as file n_files of the model (a regular file; size taken); false (logged) on error
static bool open_model_file(struct llama_model_loader * ml, const char * path) {
    struct llama_model_file * f = &ml->files[ml->n_files];
    f->fd    = -1;
    f->fname = strdup(path);
    if (!f->fname) {
        LLAMA_LOG_ERROR("llama_model_load: out of memory\n");
        return false;
    }
    ml->n_files++;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
        LLAMA_LOG_ERROR("llama_model_load: failed to open '%s': %s\n", path, strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        LLAMA_LOG_ERROR("llama_model_load: '%s' is not a regular file\n", path);
        return false;
    }
    f->size = (size_t) st.st_size;
    struct gguf_init_params gp = { .no_alloc = true, .ctx = &f->ctx_meta };
    f->meta = gguf_init_from_file(path, gp);
    // gguf_init_from_file has logged the line that names the malformed field
    return f->meta != NULL && f->ctx_meta != NULL;
}

// an integer key of any GGUF integer type that fits in int64; false if absent or not an integer
static bool get_int_key(const struct gguf_context * meta, const char * key, int64_t * out) {
    const int64_t kid = gguf_find_key(meta, key);
    if (kid < 0) {
        return false;
    }
    bool big = false;
    uint64_t u = 0;
    return gguf_int_at(gguf_get_kv_type(meta, kid), gguf_get_val_data(meta, kid), out, &big, &u) && !big;
}

// Split models ("<name>-00001-of-00003.gguf", written by llama-gguf-split) keep all the metadata and some of
// the tensors in the first file and the other tensors in the rest. Opens files 2..n (paths: the caller's list,
// or derived from the first file's name) and checks that each is the split it should be.
static bool open_splits(struct llama_model_loader * ml, const char ** paths, size_t n_paths) {
    int64_t n_split = 0;
    if (!get_int_key(ml->meta, "split.count", &n_split) || n_split <= 1) {
        if (n_paths > 1) {
            LLAMA_LOG_ERROR("llama_model_load: %zu files given but '%s' is not split (no split.count > 1)\n",
                    n_paths, ml->fname);
            return false;
        }
        return true;
    }
    int64_t idx = 0;
    if (n_split > UINT16_MAX) {
        LLAMA_LOG_ERROR("llama_model_load: invalid split.count %" PRId64 " in '%s' (at most %d)\n", n_split, ml->fname,
                UINT16_MAX);
        return false;
    }
    if (get_int_key(ml->meta, "split.no", &idx) && idx != 0) {
        LLAMA_LOG_ERROR("llama_model_load: illegal split file idx: %" PRId64 " (file: %s), model must be loaded "
                "with the first split\n", idx, ml->fname);
        return false;
    }
    if (n_paths > 1 && (int64_t) n_paths != n_split) {
        LLAMA_LOG_ERROR("llama_model_load: invalid split count, given: %zu splits, but expected %" PRId64 "\n",
                n_paths, n_split);
        return false;
    }
    char prefix[4096];
    if (n_paths <= 1 && llama_split_prefix(prefix, sizeof(prefix), ml->fname, 0, (int) n_split) == 0) {
        LLAMA_LOG_ERROR("llama_model_load: invalid split file name: %s (a model split into %" PRId64 " files is "
                "loaded from <prefix>-00001-of-%05" PRId64 ".gguf)\n", ml->fname, n_split, n_split);
        return false;
    }
    struct llama_model_file * files = realloc(ml->files, (size_t) n_split * sizeof(*files));
    if (!files) {
        LLAMA_LOG_ERROR("llama_model_load: out of memory\n");
        return false;
    }
    ml->files = files;
    memset(files + 1, 0, (size_t) (n_split - 1) * sizeof(*files));
    for (int64_t i = 1; i < n_split; i++) {
        char path[4096 + 32];
        if (n_paths > 1) {
            snprintf(path, sizeof(path), "%s", paths[i]);
        } else {
            llama_split_path(path, sizeof(path), prefix, (int) i, (int) n_split);
        }
        if (!open_model_file(ml, path)) {
            LLAMA_LOG_ERROR("llama_model_load: failed to load GGUF split %" PRId64 " of %" PRId64 " from %s\n",
                    i + 1, n_split, path);
            return false;
        }
        int64_t no = -1;
        if (!get_int_key(ml->files[i].meta, "split.no", &no)) {
            LLAMA_LOG_ERROR("llama_model_load: missing key split.no in GGUF split %s\n", path);
            return false;
        }
        if (no != i) {
            LLAMA_LOG_ERROR("llama_model_load: invalid split file idx: %" PRId64 " (file: %s), expected %" PRId64 "\n",
                    no, path, i);
            return false;
        }
    }
    LLAMA_LOG_INFO("llama_model_loader: additional %" PRId64 " GGUFs metadata loaded.\n", n_split - 1);
    return true;
}

// the tensor index of every file; false (logged) when a tensor lies outside its file or a name repeats
static bool index_tensors(struct llama_model_loader * ml, int * n_type) {
    int64_t n = 0;
    for (int fi = 0; fi < ml->n_files; fi++) {
        n += gguf_get_n_tensors(ml->files[fi].meta);
    }
    if (n > 0) {
        ml->weights = calloc((size_t) n, sizeof(*ml->weights));
        if (!ml->weights) {
            LLAMA_LOG_ERROR("llama_model_load: out of memory for %" PRId64 " tensors\n", n);
            return false;
        }
    }
    for (int fi = 0; fi < ml->n_files; fi++) {
        const struct llama_model_file * f = &ml->files[fi];
        const size_t data_offset = gguf_get_data_offset(f->meta);
        for (int64_t i = 0; i < gguf_get_n_tensors(f->meta); i++) {
            const char * name = gguf_get_tensor_name(f->meta, i);
            if (ml->n_files > 1 && llama_ml_get_weight(ml, name)) {
                LLAMA_LOG_ERROR("llama_model_load: invalid model: tensor '%s' is duplicated (in '%s')\n", name, f->fname);
                return false;
            }
            struct llama_tensor_weight * w = &ml->weights[ml->n_weights];
            w->idx  = (uint16_t) fi;
            w->meta = ggml_get_tensor(f->ctx_meta, name);
            w->size = gguf_get_tensor_size(f->meta, i);
            size_t end;
            if (!w->meta ||
                ggml_add_overflow_size(data_offset, gguf_get_tensor_offset(f->meta, i), &w->offs) ||
                ggml_add_overflow_size(w->offs, w->size, &end) || end > f->size) {
                LLAMA_LOG_ERROR("llama_model_load: tensor '%s' data is not within the file bounds of '%s' "
                        "(%zu bytes): the file is corrupted or incomplete\n", name, f->fname, f->size);
                return false;
            }
            ml->n_weights++;
            ml->n_elements += (uint64_t) ggml_nelements(w->meta);
            ml->n_bytes    += w->size;
            if ((int) w->meta->type >= 0 && w->meta->type < GGML_TYPE_COUNT) {
                n_type[w->meta->type]++;
            }
        }
    }
    int64_t n_expected = 0;
    if (ml->n_files > 1 && get_int_key(ml->meta, "split.tensors.count", &n_expected) && n_expected != ml->n_weights) {
        LLAMA_LOG_ERROR("llama_model_load: corrupted model: %" PRId64 " tensors expected but %" PRId64 " found\n",
                n_expected, ml->n_weights);
        return false;
    }
    return true;
}

// maps every file (use_mmap); a failure falls back to reading them all
static void map_files(struct llama_model_loader * ml) {
    for (int fi = 0; fi < ml->n_files && ml->use_mmap; fi++) {
        struct llama_model_file * f = &ml->files[fi];
        if (f->size == 0) {
            continue;
        }
        // MAP_POPULATE (as llama.cpp's prefetching mmap): the page tables of the whole file are filled at load.
        // Without it, tensors read only by get_rows (token_embd) fault on the first use of each row: one
        // page fault per generated token, and a disk read when the page cache has dropped that part.
        int flags = MAP_SHARED;
#ifdef MAP_POPULATE
        flags |= MAP_POPULATE;
#endif
        void * addr = mmap(NULL, f->size, PROT_READ, flags, f->fd, 0);
        if (addr == MAP_FAILED) {
            LLAMA_LOG_WARN("llama_model_load: mmap of '%s' failed (%s), reading the file instead\n",
                    f->fname, strerror(errno));
            ml->use_mmap = false;
        } else {
            f->mapping = addr;
            posix_madvise(addr, f->size, POSIX_MADV_WILLNEED);
        }
    }
    if (!ml->use_mmap) {
        for (int fi = 0; fi < ml->n_files; fi++) {
            struct llama_model_file * f = &ml->files[fi];
            if (f->mapping) {
                munmap(f->mapping, f->size);
                f->mapping = NULL;
            }
        }
    }
}

struct llama_model_loader * llama_model_loader_init_splits(
        const char ** paths,
        size_t n_paths,
        bool use_mmap,
        bool check_tensors,
        const struct llama_model_kv_override * kv_overrides) {
    if (!paths || n_paths == 0 || !paths[0]) {
        LLAMA_LOG_ERROR("llama_model_load: model path is NULL\n");
        return NULL;
    }
    for (size_t i = 1; i < n_paths; i++) {
        if (!paths[i]) {
            LLAMA_LOG_ERROR("llama_model_load: split path %zu is NULL\n", i + 1);
            return NULL;
        }
    }
    const char * fname = paths[0];

    struct llama_model_loader * ml = calloc(1, sizeof(*ml));
    if (!ml) {
        LLAMA_LOG_ERROR("llama_model_load: out of memory\n");
        return NULL;
    }
    ml->check_tensors = check_tensors;
    ml->kv_overrides  = kv_overrides;
    ml->arch          = LLM_ARCH_UNKNOWN;
    ml->files         = calloc(1, sizeof(*ml->files));
    if (!ml->files) {
        LLAMA_LOG_ERROR("llama_model_load: out of memory\n");
        goto fail;
    }
    if (!open_model_file(ml, fname)) {
        goto fail;
    }
    ml->fname    = ml->files[0].fname;
    ml->meta     = ml->files[0].meta;
    ml->ctx_meta = ml->files[0].ctx_meta;
    ml->fver = gguf_get_version(ml->meta);
    if (!open_splits(ml, paths, n_paths)) {
        goto fail;
    }

    // architecture
    {
        const int64_t kid = gguf_find_key(ml->meta, "general.architecture");
        if (kid < 0) {
            LLAMA_LOG_ERROR("llama_model_load: key not found in model: general.architecture (in '%s')\n", fname);
            goto fail;
        }
        if (gguf_get_kv_type(ml->meta, kid) != GGUF_TYPE_STRING) {
            LLAMA_LOG_ERROR("llama_model_load: key general.architecture has type %s, expected string (in '%s')\n",
                    gguf_type_name(gguf_get_kv_type(ml->meta, kid)), fname);
            goto fail;
        }
        const char * name = gguf_get_val_str(ml->meta, kid);
        snprintf(ml->arch_name, sizeof(ml->arch_name), "%s", name);
        ml->arch = llm_arch_from_string(name);
        if (ml->arch == LLM_ARCH_UNKNOWN) {
            LLAMA_LOG_ERROR("llama_model_load: unknown model architecture: '%s' (in '%s')\n", ml->arch_name, fname);
            goto fail;
        }
    }

    {
        int n_type[GGML_TYPE_COUNT] = {0};
        if (!index_tensors(ml, n_type)) {
            goto fail;
        }

        const int64_t kid = gguf_find_key(ml->meta, "general.file_type");
        if (kid >= 0 && (gguf_get_kv_type(ml->meta, kid) == GGUF_TYPE_UINT32 ||
                         gguf_get_kv_type(ml->meta, kid) == GGUF_TYPE_INT32)) {
            ml->ftype = gguf_get_kv_type(ml->meta, kid) == GGUF_TYPE_UINT32
                ? (enum llama_ftype) gguf_get_val_u32(ml->meta, kid)
                : (enum llama_ftype) gguf_get_val_i32(ml->meta, kid);
        } else {
            // the most common tensor type decides, as llama.cpp does
            int best = 0;
            enum ggml_type best_type = GGML_TYPE_F32;
            for (int t = 0; t < GGML_TYPE_COUNT; t++) {
                if (n_type[t] > best) {
                    best = n_type[t];
                    best_type = (enum ggml_type) t;
                }
            }
            ml->ftype = (enum llama_ftype) (ftype_from_tensor_type(best_type) | LLAMA_FTYPE_GUESSED);
        }
    }

    // the files are mapped when the weights are placed (llama_ml_load_all_data): a vocab_only or no_alloc load
    // reads the metadata only
    ml->use_mmap = use_mmap;

    LLAMA_LOG_INFO("llama_model_loader: loaded meta data with %" PRId64 " key-value pairs and %" PRId64
            " tensors from %s (version GGUF V%u)\n", gguf_get_n_kv(ml->meta), ml->n_weights, fname, ml->fver);
    return ml;

fail:
    llama_model_loader_free(ml);
    return NULL;
}

struct llama_model_loader * llama_model_loader_init(
        const char * fname,
        bool use_mmap,
        bool check_tensors,
        const struct llama_model_kv_override * kv_overrides) {
    return llama_model_loader_init_splits(&fname, 1, use_mmap, check_tensors, kv_overrides);
}

// ---- metadata ----------------------------------------------------------------------------------------------

static const struct llama_model_kv_override * find_override(const struct llama_model_loader * ml, const char * key) {
    if (!ml->kv_overrides) {
        return NULL;
    }
    for (const struct llama_model_kv_override * o = ml->kv_overrides; o->key[0] != '\0'; o++) {
        if (strncmp(o->key, key, sizeof(o->key)) == 0) {
            return o;
        }
    }
    return NULL;
}

static const char * override_type_name(enum llama_model_kv_override_type t) {
    switch (t) {
        case LLAMA_KV_OVERRIDE_TYPE_INT:   return "int";
        case LLAMA_KV_OVERRIDE_TYPE_FLOAT: return "float";
        case LLAMA_KV_OVERRIDE_TYPE_BOOL:  return "bool";
        case LLAMA_KV_OVERRIDE_TYPE_STR:   return "str";
    }
    return "unknown";
}

// the override for key if there is one of the expected type; LLAMA_KV_ERROR for one of another type
static int take_override(const struct llama_model_loader * ml, const char * key,
        enum llama_model_kv_override_type want, const struct llama_model_kv_override ** out) {
    const struct llama_model_kv_override * o = find_override(ml, key);
    *out = NULL;
    if (!o) {
        return LLAMA_KV_MISSING;
    }
    if (o->tag != want) {
        LLAMA_LOG_ERROR("llama_model_load: override for key '%s' has type %s, expected %s\n",
                key, override_type_name(o->tag), override_type_name(want));
        return LLAMA_KV_ERROR;
    }
    *out = o;
    return LLAMA_KV_FOUND;
}

static int find_key(const struct llama_model_loader * ml, const char * key, bool required, int64_t * kid) {
    *kid = gguf_find_key(ml->meta, key);
    if (*kid < 0) {
        if (required) {
            LLAMA_LOG_ERROR("llama_model_load: key not found in model: %s (arch %s, file '%s')\n",
                    key, ml->arch_name, ml->fname);
            return LLAMA_KV_ERROR;
        }
        return LLAMA_KV_MISSING;
    }
    return LLAMA_KV_FOUND;
}

static int get_int_by_name(struct llama_model_loader * ml, const char * key, int64_t lo, int64_t hi,
        int64_t * out, bool required) {
    const struct llama_model_kv_override * o;
    int r = take_override(ml, key, LLAMA_KV_OVERRIDE_TYPE_INT, &o);
    if (r == LLAMA_KV_ERROR) {
        return r;
    }
    int64_t v;
    if (o) {
        v = o->val_i64;
        LLAMA_LOG_INFO("llama_model_load: using metadata override (int) '%s' = %" PRId64 "\n", key, v);
    } else {
        int64_t kid;
        r = find_key(ml, key, required, &kid);
        if (r != LLAMA_KV_FOUND) {
            return r;
        }
        const enum gguf_type t = gguf_get_kv_type(ml->meta, kid);
        bool big = false;
        uint64_t u = 0;
        if (gguf_type_nbytes(t) == 0 || t == GGUF_TYPE_BOOL || t == GGUF_TYPE_FLOAT32 || t == GGUF_TYPE_FLOAT64 ||
            !gguf_int_at(t, gguf_get_val_data(ml->meta, kid), &v, &big, &u)) {
            LLAMA_LOG_ERROR("llama_model_load: key %s has type %s, expected an integer (file '%s')\n",
                    key, gguf_type_name(t), ml->fname);
            return LLAMA_KV_ERROR;
        }
        if (big) {
            LLAMA_LOG_ERROR("llama_model_load: key %s value %" PRIu64 " is out of range (file '%s')\n", key, u, ml->fname);
            return LLAMA_KV_ERROR;
        }
    }
    if (v < lo || v > hi) {
        LLAMA_LOG_ERROR("llama_model_load: key %s value %" PRId64 " is out of range [%" PRId64 ", %" PRId64 "] (file '%s')\n",
                key, v, lo, hi, ml->fname);
        return LLAMA_KV_ERROR;
    }
    *out = v;
    return LLAMA_KV_FOUND;
}

int llama_ml_get_u32_by_name(struct llama_model_loader * ml, const char * key, uint32_t * out, bool required) {
    int64_t v = 0;
    const int r = get_int_by_name(ml, key, 0, UINT32_MAX, &v, required);
    if (r == LLAMA_KV_FOUND) {
        *out = (uint32_t) v;
    }
    return r;
}

int llama_ml_get_f32_by_name(struct llama_model_loader * ml, const char * key, float * out, bool required) {
    const struct llama_model_kv_override * o;
    int r = take_override(ml, key, LLAMA_KV_OVERRIDE_TYPE_FLOAT, &o);
    if (r == LLAMA_KV_ERROR) {
        return r;
    }
    if (o) {
        LLAMA_LOG_INFO("llama_model_load: using metadata override (float) '%s' = %f\n", key, o->val_f64);
        *out = (float) o->val_f64;
        return LLAMA_KV_FOUND;
    }
    int64_t kid;
    r = find_key(ml, key, required, &kid);
    if (r != LLAMA_KV_FOUND) {
        return r;
    }
    const enum gguf_type t = gguf_get_kv_type(ml->meta, kid);
    if (t == GGUF_TYPE_FLOAT32) {
        *out = gguf_get_val_f32(ml->meta, kid);
    } else if (t == GGUF_TYPE_FLOAT64) {
        *out = (float) gguf_get_val_f64(ml->meta, kid);
    } else {
        LLAMA_LOG_ERROR("llama_model_load: key %s has type %s, expected float32 (file '%s')\n",
                key, gguf_type_name(t), ml->fname);
        return LLAMA_KV_ERROR;
    }
    return LLAMA_KV_FOUND;
}

static int get_bool_by_name(struct llama_model_loader * ml, const char * key, bool * out, bool required) {
    const struct llama_model_kv_override * o;
    int r = take_override(ml, key, LLAMA_KV_OVERRIDE_TYPE_BOOL, &o);
    if (r == LLAMA_KV_ERROR) {
        return r;
    }
    if (o) {
        LLAMA_LOG_INFO("llama_model_load: using metadata override (bool) '%s' = %s\n", key, o->val_bool ? "true" : "false");
        *out = o->val_bool;
        return LLAMA_KV_FOUND;
    }
    int64_t kid;
    r = find_key(ml, key, required, &kid);
    if (r != LLAMA_KV_FOUND) {
        return r;
    }
    const enum gguf_type t = gguf_get_kv_type(ml->meta, kid);
    if (t != GGUF_TYPE_BOOL) {
        LLAMA_LOG_ERROR("llama_model_load: key %s has type %s, expected bool (file '%s')\n",
                key, gguf_type_name(t), ml->fname);
        return LLAMA_KV_ERROR;
    }
    *out = gguf_get_val_bool(ml->meta, kid);
    return LLAMA_KV_FOUND;
}

int llama_ml_get_str_by_name(struct llama_model_loader * ml, const char * key, const char ** out, bool required) {
    const struct llama_model_kv_override * o;
    int r = take_override(ml, key, LLAMA_KV_OVERRIDE_TYPE_STR, &o);
    if (r == LLAMA_KV_ERROR) {
        return r;
    }
    if (o) {
        LLAMA_LOG_INFO("llama_model_load: using metadata override (str) '%s' = %.*s\n", key,
                (int) sizeof(o->val_str), o->val_str);
        *out = o->val_str;
        return LLAMA_KV_FOUND;
    }
    int64_t kid;
    r = find_key(ml, key, required, &kid);
    if (r != LLAMA_KV_FOUND) {
        return r;
    }
    const enum gguf_type t = gguf_get_kv_type(ml->meta, kid);
    if (t != GGUF_TYPE_STRING) {
        LLAMA_LOG_ERROR("llama_model_load: key %s has type %s, expected string (file '%s')\n",
                key, gguf_type_name(t), ml->fname);
        return LLAMA_KV_ERROR;
    }
    *out = gguf_get_val_str(ml->meta, kid);
    return LLAMA_KV_FOUND;
}

int llama_ml_get_u32(struct llama_model_loader * ml, enum llm_kv kv, uint32_t * out, bool required) {
    char key[LLM_NAME_MAX];
    return llama_ml_get_u32_by_name(ml, llm_kv_name(kv, ml->arch, key, sizeof(key)), out, required);
}

int llama_ml_get_i32(struct llama_model_loader * ml, enum llm_kv kv, int32_t * out, bool required) {
    char key[LLM_NAME_MAX];
    int64_t v = 0;
    const int r = get_int_by_name(ml, llm_kv_name(kv, ml->arch, key, sizeof(key)), INT32_MIN, INT32_MAX, &v, required);
    if (r == LLAMA_KV_FOUND) {
        *out = (int32_t) v;
    }
    return r;
}

int llama_ml_get_f32(struct llama_model_loader * ml, enum llm_kv kv, float * out, bool required) {
    char key[LLM_NAME_MAX];
    return llama_ml_get_f32_by_name(ml, llm_kv_name(kv, ml->arch, key, sizeof(key)), out, required);
}

int llama_ml_get_bool(struct llama_model_loader * ml, enum llm_kv kv, bool * out, bool required) {
    char key[LLM_NAME_MAX];
    return get_bool_by_name(ml, llm_kv_name(kv, ml->arch, key, sizeof(key)), out, required);
}

int llama_ml_get_str(struct llama_model_loader * ml, enum llm_kv kv, const char ** out, bool required) {
    char key[LLM_NAME_MAX];
    return llama_ml_get_str_by_name(ml, llm_kv_name(kv, ml->arch, key, sizeof(key)), out, required);
}

int llama_ml_get_arr_n(struct llama_model_loader * ml, enum llm_kv kv, uint32_t * n_out, bool required) {
    char key[LLM_NAME_MAX];
    llm_kv_name(kv, ml->arch, key, sizeof(key));
    int64_t kid;
    const int r = find_key(ml, key, required, &kid);
    if (r != LLAMA_KV_FOUND) {
        return r;
    }
    if (gguf_get_kv_type(ml->meta, kid) != GGUF_TYPE_ARRAY) {
        LLAMA_LOG_ERROR("llama_model_load: key %s has type %s, expected an array (file '%s')\n",
                key, gguf_type_name(gguf_get_kv_type(ml->meta, kid)), ml->fname);
        return LLAMA_KV_ERROR;
    }
    const size_t n = gguf_get_arr_n(ml->meta, kid);
    if (n > UINT32_MAX) {
        LLAMA_LOG_ERROR("llama_model_load: array %s has too many elements (%zu)\n", key, n);
        return LLAMA_KV_ERROR;
    }
    *n_out = (uint32_t) n;
    return LLAMA_KV_FOUND;
}

int llama_ml_get_u32_or_arr(struct llama_model_loader * ml, enum llm_kv kv, uint32_t * out, uint32_t n, bool required) {
    char key[LLM_NAME_MAX];
    llm_kv_name(kv, ml->arch, key, sizeof(key));

    const int64_t kid = gguf_find_key(ml->meta, key);
    if (kid < 0 || gguf_get_kv_type(ml->meta, kid) != GGUF_TYPE_ARRAY || find_override(ml, key)) {
        uint32_t v = 0;
        const int r = llama_ml_get_u32_by_name(ml, key, &v, required);
        if (r == LLAMA_KV_FOUND) {
            for (uint32_t i = 0; i < n; i++) {
                out[i] = v;
            }
        }
        return r;
    }

    const enum gguf_type at = gguf_get_arr_type(ml->meta, kid);
    const size_t n_arr = gguf_get_arr_n(ml->meta, kid);
    const size_t esz = gguf_type_nbytes(at);
    if (esz == 0 || at == GGUF_TYPE_BOOL || at == GGUF_TYPE_FLOAT32 || at == GGUF_TYPE_FLOAT64) {
        LLAMA_LOG_ERROR("llama_model_load: array key %s has element type %s, expected an integer (file '%s')\n",
                key, gguf_type_name(at), ml->fname);
        return LLAMA_KV_ERROR;
    }
    if (n_arr != n) {
        LLAMA_LOG_ERROR("llama_model_load: array key %s has %zu elements, expected %u (file '%s')\n",
                key, n_arr, n, ml->fname);
        return LLAMA_KV_ERROR;
    }
    const uint8_t * data = gguf_get_arr_data(ml->meta, kid);
    for (uint32_t i = 0; i < n; i++) {
        int64_t v = 0;
        bool big = false;
        uint64_t u = 0;
        gguf_int_at(at, data + (size_t) i * esz, &v, &big, &u);
        if (big || v < 0 || v > (int64_t) UINT32_MAX) {
            LLAMA_LOG_ERROR("llama_model_load: array key %s element %u is out of range (file '%s')\n", key, i, ml->fname);
            return LLAMA_KV_ERROR;
        }
        out[i] = (uint32_t) v;
    }
    return LLAMA_KV_FOUND;
}

// ---- tensors -----------------------------------------------------------------------------------------------

struct llama_tensor_weight * llama_ml_get_weight(struct llama_model_loader * ml, const char * name) {
    // linear: a few hundred tensors, looked up once each at load time
    for (int64_t i = 0; i < ml->n_weights; i++) {
        if (strcmp(ggml_get_name(ml->weights[i].meta), name) == 0) {
            return &ml->weights[i];
        }
    }
    return NULL;
}

static void format_shape(char * buf, size_t n, const int64_t * ne, int n_dims) {
    size_t pos = 0;
    buf[0] = '\0';
    for (int i = 0; i < n_dims && pos < n; i++) {
        const int w = snprintf(buf + pos, n - pos, i == 0 ? "%" PRId64 : " x %" PRId64, ne[i]);
        if (w < 0) {
            break;
        }
        pos += (size_t) w;
    }
}

struct ggml_tensor * llama_ml_create_tensor(
        struct llama_model_loader * ml,
        struct ggml_context * ctx,
        const char * name,
        const int64_t * ne,
        int n_dims,
        int flags,
        bool * err) {
    if (n_dims < 1 || n_dims > GGML_MAX_DIMS) {
        LLAMA_LOG_ERROR("llama_model_load: tensor '%s' requested with %d dimensions\n", name, n_dims);
        *err = true;
        return NULL;
    }

    // a tensor already created (e.g. rope factors shared by every layer) is reused
    struct ggml_tensor * existing = ggml_get_tensor(ctx, name);
    if (existing) {
        return existing;
    }

    struct llama_tensor_weight * w = llama_ml_get_weight(ml, name);
    if (!w) {
        if (flags & LLAMA_ML_TENSOR_NOT_REQUIRED) {
            return NULL;
        }
        LLAMA_LOG_ERROR("llama_model_load: missing tensor '%s' (arch %s, file '%s')\n", name, ml->arch_name, ml->fname);
        *err = true;
        return NULL;
    }

    const struct ggml_tensor * cur = w->meta;
    bool same = true;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        const int64_t want = i < n_dims ? ne[i] : 1;
        if (cur->ne[i] != want) {
            same = false;
        }
    }
    if (!same) {
        char exp_s[128], got_s[128];
        format_shape(exp_s, sizeof(exp_s), ne, n_dims);
        int got_dims = GGML_MAX_DIMS;
        while (got_dims > 1 && cur->ne[got_dims - 1] == 1) {
            got_dims--;
        }
        format_shape(got_s, sizeof(got_s), cur->ne, got_dims);
        LLAMA_LOG_ERROR("llama_model_load: tensor '%s' has wrong shape; expected %s, got %s (arch %s, file '%s')\n",
                name, exp_s, got_s, ml->arch_name, ml->fname);
        *err = true;
        return NULL;
    }

    const enum ggml_type type = cur->type;
    if (n_dims == 1 && type != GGML_TYPE_F32) {
        // norms and biases are applied with element-wise ops that the graphs expect in F32
        LLAMA_LOG_ERROR("llama_model_load: tensor '%s' has wrong type; expected f32, got %s (file '%s')\n",
                name, ggml_type_name(type), ml->fname);
        *err = true;
        return NULL;
    }
    if (type != GGML_TYPE_F32 && ggml_get_type_traits(type)->to_float == NULL) {
        LLAMA_LOG_ERROR("llama_model_load: tensor '%s' has type %s, which this build cannot use (file '%s')\n",
                name, ggml_type_name(type), ml->fname);
        *err = true;
        return NULL;
    }

    struct ggml_tensor * t = ggml_new_tensor(ctx, type, GGML_MAX_DIMS, cur->ne);
    if (!t) {
        LLAMA_LOG_ERROR("llama_model_load: failed to create tensor '%s'\n", name);
        *err = true;
        return NULL;
    }
    ggml_set_name(t, name);
    if (!w->used) {
        w->used = true;
        ml->n_created++;
    }
    return t;
}

bool llama_ml_check_all_used(struct llama_model_loader * ml) {
    if (ml->n_created == ml->n_weights) {
        return true;
    }
    for (int64_t i = 0; i < ml->n_weights; i++) {
        if (!ml->weights[i].used) {
            LLAMA_LOG_ERROR("llama_model_load: wrong number of tensors; expected %" PRId64 ", got %" PRId64
                    ": unexpected tensor '%s' (arch %s, file '%s')\n", ml->n_created, ml->n_weights,
                    ggml_get_name(ml->weights[i].meta), ml->arch_name, ml->fname);
            return false;
        }
    }
    return true;
}

// reads size bytes at offs (retrying short reads)
static bool read_at(int fd, void * dst, size_t size, size_t offs) {
    uint8_t * p = dst;
    while (size > 0) {
        const ssize_t n = pread(fd, p, size, (off_t) offs);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p    += n;
        offs += (size_t) n;
        size -= (size_t) n;
    }
    return true;
}

// the CPU device's first extra buffer type (CPU_REPACK), or NULL when it offers none (GGML_CPU_REPACK=0)
static ggml_backend_buffer_type_t cpu_extra_buft(void) {
    ggml_backend_reg_t reg = ggml_backend_cpu_reg();
    // the registry hands out functions as void *; copy the bits (a cast is not ISO C)
    void * proc = ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
    ggml_backend_dev_get_extra_bufts_t get_extra = NULL;
    memcpy(&get_extra, &proc, sizeof(get_extra));
    if (!get_extra) {
        return NULL;
    }
    ggml_backend_buffer_type_t * list = get_extra(ggml_backend_reg_dev_get(reg, 0));
    return list ? list[0] : NULL;
}

// true if weight t should live in the extra buffer type: it is a matrix the graphs multiply (not an
// embedding table, which get_rows reads) and the device accepts a MUL_MAT with t there as src0 (probe: a
// small buffer of that type standing in for t's)
static bool weight_in_extra(ggml_backend_buffer_type_t buft, ggml_backend_buffer_t probe, const struct ggml_tensor * t) {
    if (strstr(ggml_get_name(t), "embd") != NULL || ggml_n_dims(t) != 2) {
        return false;
    }
    struct ggml_init_params ip = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    if (!ctx) {
        return false;
    }
    struct ggml_tensor * w = ggml_new_tensor(ctx, t->type, GGML_MAX_DIMS, t->ne);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, t->ne[0], 1);
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    w->buffer = probe;
    const bool ok = ggml_backend_dev_supports_op(ggml_backend_buft_get_device(buft), y);
    w->buffer = NULL;
    ggml_free(ctx);
    return ok;
}

// allocates the weights chosen by weight_in_extra in one buffer of buft; NULL if there are none (or on
// failure, logged: the weights then stay in plain buffers)
static ggml_backend_buffer_t alloc_extra(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    ggml_backend_buffer_t probe = ggml_backend_buft_alloc_buffer(buft, 64);
    if (!probe) {
        return NULL;
    }
    const size_t align = ggml_backend_buft_get_alignment(buft);
    size_t total = 0;
    int64_t n = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (weight_in_extra(buft, probe, t)) {
            total += GGML_PAD(ggml_backend_buft_get_alloc_size(buft, t), align);
            n++;
        }
    }
    ggml_backend_buffer_t buf = n > 0 ? ggml_backend_buft_alloc_buffer(buft, total) : NULL;
    if (n > 0 && !buf) {
        LLAMA_LOG_WARN("llama_model_load: no %zu-byte %s buffer: weights stay in the plain layout\n", total,
                ggml_backend_buft_name(buft));
    }
    if (buf) {
        uint8_t * base = ggml_backend_buffer_get_base(buf);
        size_t off = 0;
        for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
            if (!weight_in_extra(buft, probe, t)) {
                continue;
            }
            if (ggml_backend_tensor_alloc(buf, t, base + off) != GGML_STATUS_SUCCESS) {
                LLAMA_LOG_ERROR("llama_model_load: failed to place tensor '%s' in a %s buffer\n", ggml_get_name(t),
                        ggml_backend_buft_name(buft));
                for (struct ggml_tensor * u = ggml_get_first_tensor(ctx); u; u = ggml_get_next_tensor(ctx, u)) {
                    if (u->buffer == buf) {
                        u->buffer = NULL;
                        u->data   = NULL;
                    }
                }
                ggml_backend_buffer_free(buf);
                buf = NULL;
                break;
            }
            off += GGML_PAD(ggml_backend_buft_get_alloc_size(buft, t), align);
        }
    }
    ggml_backend_buffer_free(probe);
    if (buf) {
        LLAMA_LOG_INFO("llama_model_load: %" PRId64 " weights (%.2f MiB) in the %s buffer\n", n,
                (double) total / 1024.0 / 1024.0, ggml_backend_buft_name(buft));
    }
    return buf;
}

bool llama_ml_load_all_data(
        struct llama_model_loader * ml,
        struct ggml_context * ctx,
        bool use_mlock,
        llama_progress_callback progress_cb,
        void * progress_cb_user_data,
        ggml_backend_buffer_t * out_buf) {
    *out_buf = NULL;

    size_t total = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        total += ggml_nbytes(t);
    }
    if (total == 0) {
        // nothing to place (a model without tensors)
        if (progress_cb && !progress_cb(1.0f, progress_cb_user_data)) {
            LLAMA_LOG_ERROR("llama_model_load: cancelled by the progress callback\n");
            return false;
        }
        return true;
    }

    map_files(ml); // a failed mapping falls back to reading (use_mmap cleared)

    ggml_backend_buffer_type_t xbuft = ml->use_extra_bufts ? cpu_extra_buft() : NULL;
    ggml_backend_buffer_t xbuf = xbuft ? alloc_extra(ctx, xbuft) : NULL;
    size_t plain_total = 0; // bytes of the weights that keep the plain layout
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        plain_total += t->buffer == NULL ? ggml_nbytes(t) : 0;
    }

    // buffers: with mmap one over each file's mapping (the plain tensors are placed in them below), else one
    // allocated for the plain tensors; then the extra (repacked) buffer
    ggml_backend_buffer_t * parts = calloc((size_t) ml->n_files + 1, sizeof(*parts));
    if (!parts) {
        LLAMA_LOG_ERROR("llama_model_load: out of memory\n");
        if (xbuf) {
            ggml_backend_buffer_free(xbuf);
        }
        return false;
    }
    int n_parts = 0;
    bool ok = true;
    if (ml->use_mmap) {
        for (int fi = 0; fi < ml->n_files && ok; fi++) {
            struct llama_model_file * f = &ml->files[fi];
            parts[n_parts] = ggml_backend_cpu_buffer_from_ptr(f->mapping, f->size);
            if (!parts[n_parts]) {
                LLAMA_LOG_ERROR("llama_model_load: failed to create a buffer over the mapping of '%s'\n", f->fname);
                ok = false;
                break;
            }
            n_parts++;
            if (use_mlock) {
                if (mlock(f->mapping, f->size) == 0) {
                    f->mlocked = true;
                } else {
                    LLAMA_LOG_WARN("llama_model_load: mlock of %zu bytes failed: %s\n", f->size, strerror(errno));
                }
            }
        }
    } else if (plain_total > 0) {
        parts[n_parts] = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
        if (!parts[n_parts]) {
            LLAMA_LOG_ERROR("llama_model_load: failed to allocate a %zu-byte CPU buffer for the weights of '%s'\n",
                    total, ml->fname);
            ok = false;
        } else {
            if (use_mlock && mlock(ggml_backend_buffer_get_base(parts[n_parts]), ggml_backend_buffer_get_size(parts[n_parts])) != 0) {
                LLAMA_LOG_WARN("llama_model_load: mlock of the weights failed: %s\n", strerror(errno));
            }
            n_parts++;
        }
    }
    if (xbuf) {
        parts[n_parts++] = xbuf;
    }
    ggml_backend_buffer_t buf = NULL;
    if (ok && n_parts > 1) {
        // one handle for the model: freeing it frees every part
        buf = ggml_backend_multi_buffer_alloc_buffer(parts, (size_t) n_parts);
        ok = buf != NULL;
    } else if (ok) {
        buf = parts[0];
    }
    if (!ok) {
        for (int i = 0; i < n_parts; i++) {
            ggml_backend_buffer_free(parts[i]);
        }
        free(parts);
        return false;
    }
    ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

    uint8_t * tmp = NULL;
    size_t tmp_size = 0;
    size_t done = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t && ok; t = ggml_get_next_tensor(ctx, t)) {
        const struct llama_tensor_weight * w = llama_ml_get_weight(ml, ggml_get_name(t));
        const size_t nbytes = ggml_nbytes(t);
        if (!w || w->size != nbytes) {
            LLAMA_LOG_ERROR("llama_model_load: tensor '%s' size mismatch: file has %zu bytes, expected %zu\n",
                    ggml_get_name(t), w ? w->size : 0, nbytes);
            ok = false;
            break;
        }
        const bool extra = xbuf != NULL && t->buffer == xbuf;
        const struct llama_model_file * f = &ml->files[w->idx];
        if (extra && ml->use_mmap) {
            // converted into the extra buffer's layout
            ggml_backend_tensor_set(t, (const uint8_t *) f->mapping + w->offs, 0, nbytes);
        } else if (ml->use_mmap) {
            if (ggml_backend_tensor_alloc(parts[w->idx], t, (uint8_t *) f->mapping + w->offs) != GGML_STATUS_SUCCESS) {
                LLAMA_LOG_ERROR("llama_model_load: failed to place tensor '%s' in the mapping\n", ggml_get_name(t));
                ok = false;
                break;
            }
        } else if (!extra && ggml_backend_buffer_is_host(t->buffer)) {
            if (!read_at(f->fd, t->data, nbytes, w->offs)) {
                LLAMA_LOG_ERROR("llama_model_load: failed to read tensor '%s' (%zu bytes at offset %zu) from '%s'\n",
                        ggml_get_name(t), nbytes, w->offs, f->fname);
                ok = false;
                break;
            }
        } else {
            if (nbytes > tmp_size) {
                uint8_t * p = realloc(tmp, nbytes);
                if (!p) {
                    LLAMA_LOG_ERROR("llama_model_load: out of memory reading tensor '%s'\n", ggml_get_name(t));
                    ok = false;
                    break;
                }
                tmp = p;
                tmp_size = nbytes;
            }
            if (!read_at(f->fd, tmp, nbytes, w->offs)) {
                LLAMA_LOG_ERROR("llama_model_load: failed to read tensor '%s' (%zu bytes at offset %zu) from '%s'\n",
                        ggml_get_name(t), nbytes, w->offs, f->fname);
                ok = false;
                break;
            }
            ggml_backend_tensor_set(t, tmp, 0, nbytes);
        }

        if (ml->check_tensors) {
            const void * data = ml->use_mmap ? (const void *) ((const uint8_t *) f->mapping + w->offs)
                              : !extra && ggml_backend_buffer_is_host(t->buffer) ? (const void *) t->data : (const void *) tmp;
            if (!ggml_validate_row_data(t->type, data, nbytes)) {
                LLAMA_LOG_ERROR("llama_model_load: tensor '%s' has invalid data (file '%s')\n", ggml_get_name(t), f->fname);
                ok = false;
                break;
            }
        }

        done += nbytes;
        if (progress_cb && !progress_cb((float) ((double) done / (double) total), progress_cb_user_data)) {
            LLAMA_LOG_ERROR("llama_model_load: cancelled by the progress callback\n");
            ok = false;
        }
    }
    free(tmp);
    free(parts);

    if (!ok) {
        ggml_backend_buffer_free(buf);
        return false;
    }
    *out_buf = buf;
    return true;
}
