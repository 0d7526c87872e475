// llama-gguf-split --split: llama.cpp's plan (which tensors go in which shard, all the metadata in the first
// one, split.no / split.count / split.tensors.count in every one), then the shards are written under temp
// names and renamed only when all of them are complete.
#include "gguf-split.h"

#include "ggml.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

// the shards' gguf contexts, in order
struct split_plan {
    struct gguf_context ** ctx_outs;
    int                    n;
    int                    cap;
};

static void split_plan_free(struct split_plan * plan) {
    for (int i = 0; i < plan->n; i++) {
        gguf_free(plan->ctx_outs[i]);
    }
    free(plan->ctx_outs);
    memset(plan, 0, sizeof(*plan));
}

static bool split_plan_push(struct split_plan * plan, struct gguf_context * ctx) {
    if (plan->n == plan->cap) {
        const int cap = plan->cap ? 2 * plan->cap : 16;
        struct gguf_context ** p = realloc(plan->ctx_outs, (size_t) cap * sizeof(*p));
        if (!p) {
            return false;
        }
        plan->ctx_outs = p;
        plan->cap      = cap;
    }
    plan->ctx_outs[plan->n++] = ctx;
    return true;
}

// a new shard: the first one carries all of the input's metadata; split.count is filled in once known
static struct gguf_context * split_new_shard(const struct gguf_context * ctx_in, int i_split, int32_t n_tensors) {
    struct gguf_context * ctx = gguf_init_empty();
    if (i_split == 0) {
        gguf_set_kv(ctx, ctx_in);
    }
    gguf_set_val_u16(ctx, LLM_KV_SPLIT_NO, (uint16_t) i_split);
    gguf_set_val_u16(ctx, LLM_KV_SPLIT_COUNT, 0); // placeholder
    gguf_set_val_i32(ctx, LLM_KV_SPLIT_TENSORS_COUNT, n_tensors);
    return ctx;
}

// llama.cpp's rule: by tensors, a new shard every n_split_tensors tensors; by size, a new shard when the padded
// tensor bytes (metadata not counted) would go over the limit
static bool split_should_split(const struct split_params * params, int64_t i_tensor, int64_t n_tensors, size_t next_size) {
    if (params->mode == MODE_SIZE) {
        return next_size > params->n_bytes_split;
    }
    return i_tensor > 0 && i_tensor < n_tensors && i_tensor % params->n_split_tensors == 0;
}

// the shard count goes into a u16 key
#define SPLIT_MAX_COUNT 65535

// closes the current shard (*ctx_out) and starts the next one; on failure *ctx_out is freed and set to NULL
static bool split_next_shard(struct split_plan * plan, struct gguf_context ** ctx_out, const struct gguf_context * ctx_in,
                             int32_t n_tensors, bool allow_empty) {
    const char * err = NULL;
    if (gguf_get_n_tensors(*ctx_out) == 0 && !allow_empty) {
        err = "error: one of splits have 0 tensors. Maybe size or tensors limit is too small";
    } else if (plan->n + 1 >= SPLIT_MAX_COUNT) {
        err = "error: more than 65535 splits";
    } else if (!split_plan_push(plan, *ctx_out)) {
        err = "error: out of memory";
    }
    if (err) {
        fprintf(stderr, "%s\n", err);
        gguf_free(*ctx_out);
        *ctx_out = NULL;
        return false;
    }
    *ctx_out = split_new_shard(ctx_in, plan->n, n_tensors);
    return true;
}

static bool split_make_plan(const struct split_params * params, const struct gguf_context * ctx_in,
                            struct ggml_context * ctx_meta, struct split_plan * plan) {
    const int64_t n_tensors = gguf_get_n_tensors(ctx_in);
    if (n_tensors > INT32_MAX) {
        fprintf(stderr, "error: %" PRId64 " tensors do not fit in %s (i32)\n", n_tensors, LLM_KV_SPLIT_TENSORS_COUNT);
        return false;
    }
    const int32_t n_tensors_32 = (int32_t) n_tensors;
    struct gguf_context * ctx_out = split_new_shard(ctx_in, 0, n_tensors_32);
    if (params->no_tensor_first_split && !split_next_shard(plan, &ctx_out, ctx_in, n_tensors_32, true)) {
        return false;
    }

    size_t curr_size = 0; // padded tensor bytes of the current shard
    for (int64_t i = 0; i < n_tensors; i++) {
        const struct ggml_tensor * t = ggml_get_tensor(ctx_meta, gguf_get_tensor_name(ctx_in, i));
        if (!t) {
            fprintf(stderr, "error: tensor %s missing from the input's tensor context\n", gguf_get_tensor_name(ctx_in, i));
            gguf_free(ctx_out);
            return false;
        }
        const size_t n_bytes   = GGML_PAD(ggml_nbytes(t), GGUF_DEFAULT_ALIGNMENT);
        const size_t next_size = curr_size + n_bytes;
        if (split_should_split(params, i, n_tensors, next_size)) {
            if (!split_next_shard(plan, &ctx_out, ctx_in, n_tensors_32, false)) {
                return false;
            }
            curr_size = n_bytes;
        } else {
            curr_size = next_size;
        }
        gguf_add_tensor(ctx_out, t);
    }
    if (!split_plan_push(plan, ctx_out)) {
        fprintf(stderr, "error: out of memory\n");
        gguf_free(ctx_out);
        return false;
    }
    for (int i = 0; i < plan->n; i++) {
        gguf_set_val_u16(plan->ctx_outs[i], LLM_KV_SPLIT_COUNT, (uint16_t) plan->n);
    }
    return true;
}

static void split_print_info(const struct split_plan * plan) {
    printf("n_split: %d\n", plan->n);
    for (int i = 0; i < plan->n; i++) {
        const struct gguf_context * ctx = plan->ctx_outs[i];
        // the real file size without the last padding: metadata + the tensors' bytes
        size_t total_size = gguf_get_meta_size(ctx);
        for (int64_t j = 0; j < gguf_get_n_tensors(ctx); j++) {
            total_size += gguf_get_tensor_size(ctx, j);
        }
        printf("split %05d: n_tensors = %" PRIi64 ", total_size = %zuM\n", i + 1, gguf_get_n_tensors(ctx),
               total_size / 1000 / 1000);
    }
}

// writes every shard under its temp name, then renames them all; on any failure no shard is left behind
static bool split_write(const struct split_params * params, const struct split_plan * plan,
                        const struct gguf_context * ctx_in, FILE * f_in) {
    struct split_out_file * outs = calloc((size_t) plan->n, sizeof(*outs));
    void * buf = malloc(SPLIT_COPY_BUF_SIZE);
    bool ok = outs != NULL && buf != NULL;
    if (!ok) {
        fprintf(stderr, "error: out of memory\n");
    }
    for (int i = 0; ok && i < plan->n; i++) {
        const struct gguf_context * ctx_out = plan->ctx_outs[i];
        char * path = split_path_alloc(params->output, i, plan->n);
        if (!path) {
            fprintf(stderr, "error: out of memory\n");
            ok = false;
            break;
        }
        printf("Writing file %s ... ", path);
        fflush(stdout);
        ok = split_out_open(&outs[i], path);
        free(path);
        ok = ok && split_write_meta(&outs[i], ctx_out);
        for (int64_t j = 0; ok && j < gguf_get_n_tensors(ctx_out); j++) {
            const int64_t i_in = gguf_find_tensor(ctx_in, gguf_get_tensor_name(ctx_out, j));
            ok = split_copy_tensor(&outs[i], ctx_out, j, ctx_in, i_in, f_in, params->input, buf,
                                   SPLIT_COPY_BUF_SIZE);
        }
        ok = ok && split_out_close(&outs[i]);
        if (ok) {
            printf("done\n");
        } else {
            printf("failed\n");
        }
    }
    for (int i = 0; ok && i < plan->n; i++) {
        ok = split_out_commit(&outs[i]);
    }
    if (!ok && outs) {
        fprintf(stderr, "error: splitting %s failed; no split was written\n", params->input);
        // shards already renamed are removed too: a partial set is not a model
        for (int i = 0; i < plan->n; i++) {
            if (outs[i].committed) {
                remove(outs[i].path);
            }
        }
    }
    for (int i = 0; outs && i < plan->n; i++) {
        split_out_discard(&outs[i]);
    }
    free(outs);
    free(buf);
    return ok;
}

int gguf_split(const struct split_params * params) {
    FILE * f_in = fopen(params->input, "rb");
    if (!f_in) {
        fprintf(stderr, "%s:  failed to open input GGUF from %s: %s\n", __func__, params->input, strerror(errno));
        return 1;
    }
    struct ggml_context * ctx_meta = NULL;
    struct gguf_init_params ip = { .no_alloc = true, .ctx = &ctx_meta };
    struct gguf_context * ctx_in = gguf_init_from_file(params->input, ip);
    if (!ctx_in) {
        fprintf(stderr, "%s:  failed to load input GGUF from %s\n", __func__, params->input);
        fclose(f_in);
        return 1;
    }
    // a shard of a split model is not a model: splitting it again would give a set no loader can join
    const int64_t key_count = gguf_find_key(ctx_in, LLM_KV_SPLIT_COUNT);
    if (key_count >= 0 && gguf_get_kv_type(ctx_in, key_count) == GGUF_TYPE_UINT16 &&
        gguf_get_val_u16(ctx_in, key_count) > 1) {
        fprintf(stderr, "%s: %s is one of %d splits; merge them first (--merge)\n", __func__, params->input,
                (int) gguf_get_val_u16(ctx_in, key_count));
        gguf_free(ctx_in);
        ggml_free(ctx_meta);
        fclose(f_in);
        return 1;
    }

    struct split_plan plan = { 0 };
    bool ok = split_make_plan(params, ctx_in, ctx_meta, &plan);
    if (ok) {
        split_print_info(&plan);
        if (!params->dry_run) {
            ok = split_write(params, &plan, ctx_in, f_in);
        }
    }
    const int64_t n_tensors = gguf_get_n_tensors(ctx_in);
    const int     n_split   = plan.n;
    split_plan_free(&plan);
    gguf_free(ctx_in);
    ggml_free(ctx_meta);
    fclose(f_in);
    if (!ok) {
        return 1;
    }
    fprintf(stderr, "%s: %d gguf split written with a total of %" PRId64 " tensors.\n", __func__, n_split, n_tensors);
    return 0;
}
