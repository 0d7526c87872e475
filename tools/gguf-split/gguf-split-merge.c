// llama-gguf-split --merge: GGUF_IN is the first shard; the others are found from its name
// ("<prefix>-00001-of-0000n.gguf"). The merged file has the first shard's metadata with split.count set to 0
// (as llama.cpp, so that loading it does not look for shards) and the tensors of all shards in order. Every
// shard is checked against the first (split.no, split.count, split.tensors.count, no tensor twice) before
// anything is written; the output goes to a temp name renamed at the end, and an existing output is refused.
#include "gguf-split.h"

#include "ggml.h"
#include "llama.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct merge_shard {
    char *                path;
    struct gguf_context * ctx;
    struct ggml_context * meta;
};

// the u16 value of key, or -1 (with the reason printed) if it is missing or of another type
static int merge_get_u16(const struct gguf_context * ctx, const char * key, const char * path) {
    const int64_t id = gguf_find_key(ctx, key);
    if (id < 0) {
        fprintf(stderr, "\ngguf_merge: input file %s does not contain %s metadata\n", path, key);
        return -1;
    }
    if (gguf_get_kv_type(ctx, id) != GGUF_TYPE_UINT16) {
        fprintf(stderr, "\ngguf_merge: %s in %s is of type %s, expected u16\n", key, path,
                gguf_type_name(gguf_get_kv_type(ctx, id)));
        return -1;
    }
    return gguf_get_val_u16(ctx, id);
}

// split.tensors.count (i32) if present: *present tells; false (with the reason printed) if of another type
static bool merge_get_tensors_count(const struct gguf_context * ctx, const char * path, bool * present, int32_t * n) {
    const int64_t id = gguf_find_key(ctx, LLM_KV_SPLIT_TENSORS_COUNT);
    *present = id >= 0;
    if (id < 0) {
        return true;
    }
    if (gguf_get_kv_type(ctx, id) != GGUF_TYPE_INT32) {
        fprintf(stderr, "\ngguf_merge: %s in %s is of type %s, expected i32\n", LLM_KV_SPLIT_TENSORS_COUNT, path,
                gguf_type_name(gguf_get_kv_type(ctx, id)));
        return false;
    }
    *n = gguf_get_val_i32(ctx, id);
    return true;
}

// one shard after the first must say it is shard i of n_split and agree on the total tensor count
static bool merge_check_shard(const struct merge_shard * s, int i_split, int n_split, bool tc_present, int32_t tc) {
    const int no = merge_get_u16(s->ctx, LLM_KV_SPLIT_NO, s->path);
    const int count = no < 0 ? -1 : merge_get_u16(s->ctx, LLM_KV_SPLIT_COUNT, s->path);
    if (no < 0 || count < 0) {
        return false;
    }
    if (no != i_split || count != n_split) {
        fprintf(stderr, "\ngguf_merge: %s says it is split %d of %d, expected split %d of %d\n", s->path, no + 1, count,
                i_split + 1, n_split);
        return false;
    }
    bool present = false;
    int32_t n = 0;
    if (!merge_get_tensors_count(s->ctx, s->path, &present, &n)) {
        return false;
    }
    if (present != tc_present || (present && n != tc)) {
        fprintf(stderr, "\ngguf_merge: %s: %s differs from the first split's\n", s->path, LLM_KV_SPLIT_TENSORS_COUNT);
        return false;
    }
    return true;
}

static void merge_shards_free(struct merge_shard * shards, int n) {
    for (int i = 0; shards && i < n; i++) {
        gguf_free(shards[i].ctx);
        ggml_free(shards[i].meta);
        free(shards[i].path);
    }
    free(shards);
}

// the data pass: every shard's tensors streamed into the output after the metadata
static bool merge_write(const struct split_params * params, const struct gguf_context * ctx_out,
                        const struct merge_shard * shards, int n_split) {
    struct split_out_file out;
    void * buf = malloc(SPLIT_COPY_BUF_SIZE);
    if (!buf) {
        fprintf(stderr, "error: out of memory\n");
        return false;
    }
    bool ok = split_out_open(&out, params->output) && split_write_meta(&out, ctx_out);
    int64_t i_out = 0;
    for (int i = 0; ok && i < n_split; i++) {
        FILE * f = fopen(shards[i].path, "rb");
        if (!f) {
            fprintf(stderr, "gguf_merge:  failed to open input GGUF from %s: %s\n", shards[i].path, strerror(errno));
            ok = false;
            break;
        }
        fprintf(stderr, "gguf_merge: writing tensors %s ...", shards[i].path);
        const int64_t n_tensors = gguf_get_n_tensors(shards[i].ctx);
        for (int64_t j = 0; ok && j < n_tensors; j++, i_out++) {
            ok = split_copy_tensor(&out, ctx_out, i_out, shards[i].ctx, j, f, shards[i].path, buf, SPLIT_COPY_BUF_SIZE);
        }
        fclose(f);
        fprintf(stderr, ok ? " done\n" : " failed\n");
    }
    ok = ok && split_out_commit(&out);
    if (!ok) {
        fprintf(stderr, "gguf_merge: merging into %s failed; nothing was written\n", params->output);
    }
    split_out_discard(&out);
    free(buf);
    return ok;
}

// after a successful merge only: --delete-splits removes the shards (llama.cpp deletes each one as soon as it
// is copied, which loses the model if the merge then fails)
static bool merge_delete_shards(const struct merge_shard * shards, int n_split) {
    bool ok = true;
    for (int i = 0; i < n_split; i++) {
        if (remove(shards[i].path) != 0) {
            fprintf(stderr, "error: failed to delete %s: %s\n", shards[i].path, strerror(errno));
            ok = false;
        } else {
            fprintf(stderr, "gguf_merge: deleted file %s\n", shards[i].path);
        }
    }
    return ok;
}

int gguf_merge(const struct split_params * params) {
    fprintf(stderr, "%s: %s -> %s\n", __func__, params->input, params->output);

    // avoid overwriting an existing output file
    struct stat st;
    if (stat(params->output, &st) == 0) {
        fprintf(stderr, "%s: output file %s already exists\n", __func__, params->output);
        return 1;
    }

    struct gguf_context * ctx_out = gguf_init_empty();
    struct merge_shard * shards = NULL;
    int     n_split       = 1;
    int     n_alloc       = 0; // zero-initialised entries of shards
    int64_t total_tensors = 0;
    bool    tc_present    = false;
    int32_t tc            = 0;
    char *  prefix        = NULL;
    bool    ok            = true;

    // first pass: all shards' metadata, checked, and the merged tensor index
    for (int i_split = 0; ok && i_split < n_split; i_split++) {
        if (i_split == 0) {
            shards  = calloc(1, sizeof(*shards));
            n_alloc = shards ? 1 : 0;
            ok = shards && (shards[0].path = strdup(params->input)) != NULL;
        } else {
            shards[i_split].path = split_path_alloc(prefix, i_split, n_split);
            ok = shards[i_split].path != NULL;
        }
        if (!ok) {
            fprintf(stderr, "error: out of memory\n");
            break;
        }
        struct merge_shard * s = &shards[i_split];
        fprintf(stderr, "%s: reading metadata %s ...", __func__, s->path);
        struct gguf_init_params ip = { .no_alloc = true, .ctx = &s->meta };
        s->ctx = gguf_init_from_file(s->path, ip);
        if (!s->ctx) {
            fprintf(stderr, "\n%s:  failed to load input GGUF from %s\n", __func__, s->path);
            ok = false;
            break;
        }

        if (i_split == 0) {
            const int count = merge_get_u16(s->ctx, LLM_KV_SPLIT_COUNT, s->path);
            if (count < 0) {
                ok = false;
                break;
            }
            if (count < 1) {
                fprintf(stderr, "\n%s: input file does not contain a valid split count %d\n", __func__, count);
                ok = false;
                break;
            }
            n_split = count;
            // the name must be "<prefix>-00001-of-<n_split>.gguf": the prefix names the other shards
            prefix = malloc(strlen(s->path) + 1);
            if (!prefix || !llama_split_prefix(prefix, strlen(s->path) + 1, s->path, 0, n_split)) {
                fprintf(stderr, "\n%s: unexpected input file name: %s i_split=%d n_split=%d\n", __func__, s->path,
                        i_split, n_split);
                ok = false;
                break;
            }
            // a first shard says it is split 0 (llama.cpp writes split.no in every shard)
            if (gguf_find_key(s->ctx, LLM_KV_SPLIT_NO) >= 0) {
                const int no = merge_get_u16(s->ctx, LLM_KV_SPLIT_NO, s->path);
                if (no != 0) {
                    if (no > 0) {
                        fprintf(stderr, "\n%s: %s says it is split %d of %d, expected the first split\n", __func__,
                                s->path, no + 1, n_split);
                    }
                    ok = false;
                    break;
                }
            }
            ok = merge_get_tensors_count(s->ctx, s->path, &tc_present, &tc);
            struct merge_shard * grown = ok ? realloc(shards, (size_t) n_split * sizeof(*shards)) : NULL;
            if (ok && !grown) {
                fprintf(stderr, "error: out of memory\n");
                ok = false;
            }
            if (!ok) {
                break;
            }
            shards = grown;
            memset(shards + 1, 0, (size_t) (n_split - 1) * sizeof(*shards));
            n_alloc = n_split;
            s = &shards[0];
            gguf_set_kv(ctx_out, s->ctx);
            // do not trigger a merge again when the output is loaded
            gguf_set_val_u16(ctx_out, LLM_KV_SPLIT_COUNT, 0);
        } else if (!merge_check_shard(s, i_split, n_split, tc_present, tc)) {
            ok = false;
            break;
        }

        const int64_t n_tensors = gguf_get_n_tensors(s->ctx);
        for (int64_t j = 0; j < n_tensors; j++) {
            const char * name = gguf_get_tensor_name(s->ctx, j);
            const struct ggml_tensor * t = ggml_get_tensor(s->meta, name);
            if (!t || gguf_find_tensor(ctx_out, name) >= 0) {
                fprintf(stderr, "\n%s: tensor %s of %s %s\n", __func__, name, s->path,
                        t ? "is already in an earlier split" : "is missing from its tensor context");
                ok = false;
                break;
            }
            gguf_add_tensor(ctx_out, t);
        }
        total_tensors += n_tensors;
        if (ok) {
            fprintf(stderr, " done\n");
        }
    }
    if (ok && tc_present && total_tensors != tc) {
        fprintf(stderr, "%s: the splits hold %" PRId64 " tensors but %s is %d\n", __func__, total_tensors,
                LLM_KV_SPLIT_TENSORS_COUNT, (int) tc);
        ok = false;
    }

    if (ok && !params->dry_run) {
        ok = merge_write(params, ctx_out, shards, n_split);
        if (ok && params->delete_splits) {
            ok = merge_delete_shards(shards, n_split);
        }
    }
    merge_shards_free(shards, n_alloc);
    free(prefix);
    gguf_free(ctx_out);
    if (!ok) {
        return 1;
    }
    fprintf(stderr, "%s: %s merged from %d split with %" PRId64 " tensors.\n", __func__, params->output, n_split,
            total_tensors);
    return 0;
}
