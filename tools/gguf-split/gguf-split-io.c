// llama-gguf-split's output side: files written under a temp name and renamed when complete, the metadata
// block, and tensor data streamed from a source file through a bounded buffer.
#include "gguf-split.h"

#include "llama.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

char * split_path_alloc(const char * prefix, int split_no, int split_count) {
    // "-NNNNN-of-NNNNN.gguf" is 20 characters for counts up to 99999 (split.count is a u16)
    const size_t cap = strlen(prefix) + 32;
    char * p = malloc(cap);
    if (p) {
        llama_split_path(p, cap, prefix, split_no, split_count);
    }
    return p;
}

bool split_out_open(struct split_out_file * o, const char * path) {
    memset(o, 0, sizeof(*o));
    const size_t n = strlen(path);
    o->path     = malloc(n + 1);
    o->tmp_path = malloc(n + 5);
    if (!o->path || !o->tmp_path) {
        fprintf(stderr, "error: out of memory\n");
        free(o->path);
        free(o->tmp_path);
        memset(o, 0, sizeof(*o));
        return false;
    }
    memcpy(o->path, path, n + 1);
    memcpy(o->tmp_path, path, n);
    memcpy(o->tmp_path + n, ".tmp", 5);
    o->f = fopen(o->tmp_path, "wb");
    if (!o->f) {
        fprintf(stderr, "error: cannot create %s: %s\n", o->tmp_path, strerror(errno));
        free(o->tmp_path);
        o->tmp_path = NULL; // nothing of ours to remove
        return false;
    }
    return true;
}

bool split_out_write(struct split_out_file * o, const void * data, size_t n) {
    if (n > 0 && fwrite(data, 1, n, o->f) != n) {
        fprintf(stderr, "error: writing %s failed: %s\n", o->tmp_path, strerror(errno));
        return false;
    }
    o->pos += n;
    return true;
}

bool split_out_zeros(struct split_out_file * o, size_t n) {
    static const uint8_t zeros[4096];
    while (n > 0) {
        const size_t k = n < sizeof(zeros) ? n : sizeof(zeros);
        if (!split_out_write(o, zeros, k)) {
            return false;
        }
        n -= k;
    }
    return true;
}

bool split_out_close(struct split_out_file * o) {
    if (!o->f) {
        return true;
    }
    // buffered data is only known to be on disk once fclose succeeds
    const bool ok = fclose(o->f) == 0;
    o->f = NULL;
    if (!ok) {
        fprintf(stderr, "error: writing %s failed: %s\n", o->tmp_path, strerror(errno));
    }
    return ok;
}

bool split_out_commit(struct split_out_file * o) {
    if (!split_out_close(o)) {
        return false;
    }
    if (rename(o->tmp_path, o->path) != 0) {
        fprintf(stderr, "error: cannot rename %s to %s: %s\n", o->tmp_path, o->path, strerror(errno));
        return false;
    }
    free(o->tmp_path);
    o->tmp_path  = NULL;
    o->committed = true;
    return true;
}

void split_out_discard(struct split_out_file * o) {
    if (o->f) {
        fclose(o->f);
        o->f = NULL;
    }
    if (o->tmp_path) {
        unlink(o->tmp_path);
        free(o->tmp_path);
        o->tmp_path = NULL;
    }
    free(o->path);
    o->path = NULL;
}

bool split_write_meta(struct split_out_file * o, const struct gguf_context * ctx_out) {
    const size_t n = gguf_get_meta_size(ctx_out);
    void * meta = malloc(n ? n : 1);
    if (!meta) {
        fprintf(stderr, "error: out of memory for %zu bytes of metadata\n", n);
        return false;
    }
    gguf_get_meta_data(ctx_out, meta);
    const bool ok = split_out_write(o, meta, n);
    free(meta);
    o->data_start = o->pos;
    return ok;
}

bool split_copy_tensor(struct split_out_file * o, const struct gguf_context * ctx_out, int64_t i_out,
                       const struct gguf_context * src_ctx, int64_t i_src, FILE * src, const char * src_name,
                       void * buf, size_t cap) {
    const char * name = gguf_get_tensor_name(ctx_out, i_out);
    const uint64_t n  = gguf_get_tensor_size(ctx_out, i_out);
    if (gguf_get_tensor_size(src_ctx, i_src) != n || gguf_get_tensor_type(src_ctx, i_src) != gguf_get_tensor_type(ctx_out, i_out)) {
        fprintf(stderr, "error: tensor %s: %s describes it differently from the output\n", name, src_name);
        return false;
    }
    // the writer's own bookkeeping: tensors go in order at the offsets the metadata announced
    if (o->pos != o->data_start + gguf_get_tensor_offset(ctx_out, i_out)) {
        fprintf(stderr, "error: tensor %s: output position %" PRIu64 " is not its offset %" PRIu64 " in %s\n", name,
                o->pos - o->data_start, (uint64_t) gguf_get_tensor_offset(ctx_out, i_out), o->path);
        return false;
    }
    const uint64_t offset = (uint64_t) gguf_get_data_offset(src_ctx) + gguf_get_tensor_offset(src_ctx, i_src);
    if (offset > (uint64_t) INT64_MAX || fseeko(src, (off_t) offset, SEEK_SET) != 0) {
        fprintf(stderr, "error: cannot seek to tensor %s at %" PRIu64 " in %s: %s\n", name, offset, src_name,
                strerror(errno));
        return false;
    }
    for (uint64_t done = 0; done < n;) {
        const size_t k = (size_t) (n - done < cap ? n - done : cap);
        if (fread(buf, 1, k, src) != k) {
            fprintf(stderr, "error: reading tensor %s from %s failed: %s\n", name, src_name,
                    ferror(src) ? strerror(errno) : "unexpected end of file");
            return false;
        }
        if (!split_out_write(o, buf, k)) {
            return false;
        }
        done += k;
    }
    const size_t align = gguf_get_alignment(ctx_out);
    return split_out_zeros(o, (size_t) (GGML_PAD(n, (uint64_t) align) - n));
}
