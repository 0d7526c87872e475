// libFuzzer target for the GGUF reader: the input is written to an in-memory file (memfd) and parsed through
// the public gguf_init_from_file, without a ggml context, with a no_alloc one and with the data read in.
// Whatever parses is walked with every getter (touching each value and each tensor's bytes, so ASan sees any
// out-of-bounds pointer), its metadata is re-encoded by the writer and, when it has no tensors, parsed again
// and compared.
//
//   CC=clang cmake -B build-fuzz -DLLAMA_FUZZ=ON && ninja -C build-fuzz fuzz-gguf
//   ./build-fuzz/bin/fuzz-gguf -max_total_time=600 CORPUS_DIR

#include "ggml.h"
#include "gguf.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int * argc, char *** argv);
int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

static void log_silent(enum ggml_log_level level, const char * text, void * user) {
    (void) level;
    (void) text;
    (void) user;
}

static int  g_fd[2] = { -1, -1 };
static char g_path[2][64];

int LLVMFuzzerInitialize(int * argc, char *** argv) {
    (void) argc;
    (void) argv;
    ggml_log_set(log_silent, NULL);
    for (int i = 0; i < 2; i++) {
        g_fd[i] = memfd_create("fuzz-gguf", 0);
        if (g_fd[i] < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(g_path[i], sizeof(g_path[i]), "/proc/self/fd/%d", g_fd[i]);
    }
    return 0;
}

static void put_file(int which, const void * data, size_t size) {
    if (ftruncate(g_fd[which], 0) != 0 || (size > 0 && pwrite(g_fd[which], data, size, 0) != (ssize_t) size)) {
        abort();
    }
}

static volatile uint64_t g_sink;

static void touch(const void * p, size_t n) {
    const uint8_t * b = p;
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        acc += b[i];
    }
    g_sink += acc;
}

static void walk(const struct gguf_context * ctx, struct ggml_context * gctx, bool has_blob) {
    g_sink += gguf_get_version(ctx) + gguf_get_alignment(ctx) + gguf_get_data_offset(ctx);
    const int64_t n_kv = gguf_get_n_kv(ctx);
    for (int64_t i = 0; i < n_kv; i++) {
        const char * key = gguf_get_key(ctx, i);
        // keys are unique, so lookup must find this one (lookups are linear: check a bounded number)
        if (i < 64 && gguf_find_key(ctx, key) != i) {
            abort();
        }
        const enum gguf_type t = gguf_get_kv_type(ctx, i);
        if (t == GGUF_TYPE_ARRAY) {
            const enum gguf_type at = gguf_get_arr_type(ctx, i);
            const size_t n = gguf_get_arr_n(ctx, i);
            if (at == GGUF_TYPE_STRING) {
                for (size_t j = 0; j < n; j++) {
                    const char * s = gguf_get_arr_str(ctx, i, j);
                    touch(s, strlen(s) + 1);
                }
            } else {
                size_t esize = 0;
                switch (at) {
                    case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: esize = 1; break;
                    case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: esize = 2; break;
                    case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: esize = 4; break;
                    case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: esize = 8; break;
                    default: abort(); // the reader must not accept other element types
                }
                if (n > 0) {
                    touch(gguf_get_arr_data(ctx, i), n * esize);
                }
            }
            continue;
        }
        switch (t) {
            case GGUF_TYPE_UINT8:   g_sink += gguf_get_val_u8(ctx, i); break;
            case GGUF_TYPE_INT8:    g_sink += (uint64_t) gguf_get_val_i8(ctx, i); break;
            case GGUF_TYPE_UINT16:  g_sink += gguf_get_val_u16(ctx, i); break;
            case GGUF_TYPE_INT16:   g_sink += (uint64_t) gguf_get_val_i16(ctx, i); break;
            case GGUF_TYPE_UINT32:  g_sink += gguf_get_val_u32(ctx, i); break;
            case GGUF_TYPE_INT32:   g_sink += (uint64_t) gguf_get_val_i32(ctx, i); break;
            case GGUF_TYPE_FLOAT32: g_sink += gguf_get_val_f32(ctx, i) != 0.0f; break;
            case GGUF_TYPE_UINT64:  g_sink += gguf_get_val_u64(ctx, i); break;
            case GGUF_TYPE_INT64:   g_sink += (uint64_t) gguf_get_val_i64(ctx, i); break;
            case GGUF_TYPE_FLOAT64: g_sink += gguf_get_val_f64(ctx, i) != 0.0; break;
            case GGUF_TYPE_BOOL:    g_sink += gguf_get_val_bool(ctx, i); break;
            case GGUF_TYPE_STRING: {
                const char * s = gguf_get_val_str(ctx, i);
                touch(s, strlen(s) + 1);
            } break;
            default: abort();
        }
        if (t != GGUF_TYPE_STRING) {
            touch(gguf_get_val_data(ctx, i), 1);
        }
    }

    const int64_t n_t = gguf_get_n_tensors(ctx);
    struct ggml_tensor * t = NULL; // the ggml tensor before the one that matches tensor i
    if (gctx && has_blob) {
        t = ggml_get_first_tensor(gctx);
        if (!t || strcmp(t->name, "GGUF tensor data binary blob") != 0) {
            abort();
        }
    }
    for (int64_t i = 0; i < n_t; i++) {
        const char * name = gguf_get_tensor_name(ctx, i);
        if (i < 64 && gguf_find_tensor(ctx, name) != i) {
            abort();
        }
        g_sink += gguf_get_tensor_offset(ctx, i) + gguf_get_tensor_size(ctx, i) + (uint64_t) gguf_get_tensor_type(ctx, i);
        if (gctx) {
            // the ggml context holds the tensors in file order (after the data blob, if any)
            t = t ? ggml_get_next_tensor(gctx, t) : ggml_get_first_tensor(gctx);
            if (!t || strcmp(t->name, name) != 0 || ggml_nbytes(t) != gguf_get_tensor_size(ctx, i)) {
                abort();
            }
            if (t->data) {
                touch(t->data, ggml_nbytes(t));
            }
        }
    }
}

static void rewrite(const struct gguf_context * ctx) {
    const size_t n = gguf_get_meta_size(ctx);
    uint8_t * meta = malloc(n);
    if (!meta) {
        abort();
    }
    gguf_get_meta_data(ctx, meta);
    if (gguf_get_n_tensors(ctx) == 0) {
        // without tensors the metadata is a complete file: it must parse back to the same keys
        put_file(1, meta, n);
        struct gguf_init_params ip = { .no_alloc = true, .ctx = NULL };
        struct gguf_context * back = gguf_init_from_file(g_path[1], ip);
        if (!back || gguf_get_n_kv(back) != gguf_get_n_kv(ctx)) {
            abort();
        }
        for (int64_t i = 0; i < gguf_get_n_kv(ctx); i++) {
            if (strcmp(gguf_get_key(ctx, i), gguf_get_key(back, i)) != 0 ||
                gguf_get_kv_type(ctx, i) != gguf_get_kv_type(back, i)) {
                abort();
            }
        }
        gguf_free(back);
    }
    free(meta);
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    put_file(0, data, size);
    for (int mode = 0; mode < 3; mode++) {
        struct ggml_context * gctx = NULL;
        struct gguf_init_params ip = { .no_alloc = mode == 1, .ctx = mode == 0 ? NULL : &gctx };
        struct gguf_context * ctx = gguf_init_from_file(g_path[0], ip);
        if (!ctx) {
            if (gctx) {
                abort(); // a failed parse must not leave a ggml context behind
            }
            return 0; // every mode sees the same metadata: if one fails, all do
        }
        walk(ctx, gctx, mode == 2);
        if (mode == 0) {
            rewrite(ctx);
        }
        gguf_free(ctx);
        ggml_free(gctx);
    }
    return 0;
}
