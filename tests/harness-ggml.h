// Test helpers that need ggml / gguf (tests/harness.h stays free of them): a log callback that discards
// everything, type lookup by name, and the F16 -> F32 upcast of a GGUF file.
#pragma once

#include "harness.h"

#include "ggml.h"
#include "gguf.h"

#include <strings.h>

// a ggml / llama log callback that prints nothing
static inline void th_log_silent(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) text;
    (void) user_data;
}

// the ggml type named name ("q4_K", "Q4_K", "f16", ...: ggml_type_name, any case); GGML_TYPE_COUNT if none
static inline enum ggml_type th_type_from_name(const char * name) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * tn = ggml_type_name((enum ggml_type) t);
        if (tn && strcasecmp(tn, name) == 0) {
            return (enum ggml_type) t;
        }
    }
    return GGML_TYPE_COUNT;
}

// writes a copy of the GGUF file src with every F16 tensor widened to F32 (exact) and general.file_type 0
// (all F32); the other tensors and keys are copied as they are. False on a read or write error.
static inline bool th_gguf_upcast_f16(const char * src, const char * dst) {
    struct ggml_context * data_ctx = NULL;
    struct gguf_init_params ip = { .no_alloc = false, .ctx = &data_ctx };
    struct gguf_context * in = gguf_init_from_file(src, ip);
    if (!in) {
        return false;
    }
    struct gguf_context * out = gguf_init_empty();
    gguf_set_kv(out, in);
    const int64_t n = gguf_get_n_tensors(in);
    size_t need = 0;
    for (int64_t i = 0; i < n; i++) {
        const struct ggml_tensor * t = ggml_get_tensor(data_ctx, gguf_get_tensor_name(in, i));
        need += (size_t) ggml_nelements(t) * sizeof(float) + ggml_tensor_overhead() + 64;
    }
    struct ggml_init_params gp = { .mem_size = need, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * f32_ctx = ggml_init(gp);
    for (int64_t i = 0; i < n; i++) {
        struct ggml_tensor * t = ggml_get_tensor(data_ctx, gguf_get_tensor_name(in, i));
        if (t->type == GGML_TYPE_F16) {
            struct ggml_tensor * u = ggml_new_tensor(f32_ctx, GGML_TYPE_F32, ggml_n_dims(t), t->ne);
            ggml_set_name(u, t->name);
            ggml_fp16_to_fp32_row((const ggml_fp16_t *) t->data, (float *) u->data, ggml_nelements(t));
            gguf_add_tensor(out, u);
        } else {
            gguf_add_tensor(out, t);
        }
    }
    gguf_set_val_u32(out, "general.file_type", 0); // LLAMA_FTYPE_ALL_F32
    const bool ok = gguf_write_to_file(out, dst, false);
    gguf_free(out);
    gguf_free(in);
    ggml_free(f32_ctx);
    ggml_free(data_ctx);
    return ok;
}
