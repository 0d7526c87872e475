// GGUF model loader: metadata with kv overrides, the tensor index, mmap or read, tensor creation with shape
// and type checks, and the weight upload into backend buffers.
#pragma once

#include "llama.h"
#include "llama-arch.h"

#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// one file of the model (a split model has several, see open_splits)
struct llama_model_file {
    char * fname;
    int    fd;
    size_t size;
    void * mapping;   // whole file, read-only (use_mmap)
    bool   mlocked;
    struct gguf_context * meta;
    struct ggml_context * ctx_meta; // the file's tensor headers
};

// one tensor of the model
struct llama_tensor_weight {
    uint16_t             idx;  // the file that holds it
    size_t               offs; // absolute offset of the data in that file
    size_t               size; // bytes
    struct ggml_tensor * meta; // shape/type/name (in ctx_meta, no data)
    bool                 used; // created by the model (counted once even when shared)
};

struct llama_model_loader {
    char * fname; // the first file's (owned by files[0])

    struct llama_model_file * files; // [n_files]: the model, or its splits in order
    int                       n_files;

    bool   use_mmap;
    bool   check_tensors;
    bool   use_extra_bufts; // place matmul weights in the CPU's extra buffer type (repacked), set by the model

    struct gguf_context * meta;     // the first file's: all the model's metadata (owned by files[0])
    struct ggml_context * ctx_meta;

    const struct llama_model_kv_override * kv_overrides; // terminated by an empty key; may be NULL

    enum llm_arch arch;
    char          arch_name[LLM_NAME_MAX];

    struct llama_tensor_weight * weights; // [n_weights], file order
    int64_t  n_weights;
    int64_t  n_created;

    uint64_t n_elements;
    size_t   n_bytes;

    enum llama_ftype ftype;
    uint32_t         fver;
};

enum llama_kv_result {
    LLAMA_KV_ERROR   = -1, // wrong type or invalid value (logged)
    LLAMA_KV_MISSING =  0, // not present (logged as an error if it was required)
    LLAMA_KV_FOUND   =  1,
};

// Opens fname, parses the GGUF metadata and tensor index (the file is mapped later, by llama_ml_load_all_data) and reads
// general.architecture. NULL on any error (one log line naming the file and the problem). An unknown
// architecture is an error unless allow_unknown_arch.
struct llama_model_loader * llama_model_loader_init(
        const char * fname,
        bool use_mmap,
        bool check_tensors,
        const struct llama_model_kv_override * kv_overrides);

// the same for a model split into files (paths in split order; n_paths 1: the others are found next to the
// first by their names, "<prefix>-00001-of-00003.gguf")
struct llama_model_loader * llama_model_loader_init_splits(
        const char ** paths,
        size_t n_paths,
        bool use_mmap,
        bool check_tensors,
        const struct llama_model_kv_override * kv_overrides);

void llama_model_loader_free(struct llama_model_loader * ml);

// Typed metadata getters for {arch}.* keys (llm_kv) and raw keys (by name). A kv override with the same key
// wins (and is logged). Integers of any GGUF integer type are accepted when the value fits.
int llama_ml_get_u32 (struct llama_model_loader * ml, enum llm_kv kv, uint32_t * out, bool required);
int llama_ml_get_i32 (struct llama_model_loader * ml, enum llm_kv kv, int32_t  * out, bool required);
int llama_ml_get_f32 (struct llama_model_loader * ml, enum llm_kv kv, float    * out, bool required);
int llama_ml_get_bool(struct llama_model_loader * ml, enum llm_kv kv, bool     * out, bool required);
// *out points into the loader's metadata (or the override) and lives as long as the loader
int llama_ml_get_str (struct llama_model_loader * ml, enum llm_kv kv, const char ** out, bool required);

int llama_ml_get_u32_by_name (struct llama_model_loader * ml, const char * key, uint32_t * out, bool required);
int llama_ml_get_f32_by_name (struct llama_model_loader * ml, const char * key, float    * out, bool required);
int llama_ml_get_str_by_name (struct llama_model_loader * ml, const char * key, const char ** out, bool required);

// A scalar (copied into all n entries) or an array of exactly n integers.
int llama_ml_get_u32_or_arr(struct llama_model_loader * ml, enum llm_kv kv, uint32_t * out, uint32_t n, bool required);

// number of elements of an array key (LLAMA_KV_MISSING if absent, LLAMA_KV_ERROR if not an array)
int llama_ml_get_arr_n(struct llama_model_loader * ml, enum llm_kv kv, uint32_t * n_out, bool required);

// the file's tensor by name, or NULL
struct llama_tensor_weight * llama_ml_get_weight(struct llama_model_loader * ml, const char * name);

enum {
    LLAMA_ML_TENSOR_NOT_REQUIRED = 1 << 0, // a missing tensor is not an error (NULL, *err stays false)
    LLAMA_ML_TENSOR_DUPLICATED   = 1 << 1, // the same file tensor is created a second time (not counted again)
};

// Creates tensor name with shape ne[0..n_dims) in ctx (no data), after checking that the file has it with
// exactly that shape and a type this build can use. On error: NULL, *err = true and one log line naming the
// file, the tensor and expected vs found. A missing optional tensor gives NULL with *err untouched.
struct ggml_tensor * llama_ml_create_tensor(
        struct llama_model_loader * ml,
        struct ggml_context * ctx,
        const char * name,
        const int64_t * ne,
        int n_dims,
        int flags,
        bool * err);

// false (logged) unless every tensor of the file was created by the model
bool llama_ml_check_all_used(struct llama_model_loader * ml);

// Places the data of every tensor of ctx (created through llama_ml_create_tensor) into backend memory:
// with mmap a CPU buffer over the mapping (no copy), otherwise a CPU buffer filled from the file.
// progress_cb (may be NULL) is called with the loaded fraction; returning false cancels the load.
// *out_buf receives the buffer (owned by the caller). false on error or cancel (logged).
bool llama_ml_load_all_data(
        struct llama_model_loader * ml,
        struct ggml_context * ctx,
        bool use_mlock,
        llama_progress_callback progress_cb,
        void * progress_cb_user_data,
        ggml_backend_buffer_t * out_buf);

// printable form of the file type ("Q4_K - Medium", "all F32", ...)
const char * llama_model_ftype_name(enum llama_ftype ftype);

#ifdef __cplusplus
}
#endif
