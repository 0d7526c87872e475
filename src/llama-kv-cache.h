// KV cache: one ring of cells (position + sequence set) and, per layer, a K and a V tensor with one row per cell.
// K is stored after RoPE, V untransposed (one row per cell), both in type_k / type_v. llama_memory_t points at it.
#pragma once

#include "llama.h"
#include "llama-batch.h"

#include "ggml.h"
#include "ggml-backend.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct llama_model;

struct llama_kv_cell {
    llama_pos pos;               // -1: empty
    llama_pos delta;             // position change not yet applied to K (pending K-shift)
    struct llama_seq_set seq;
};

// RoPE settings the cache needs to re-rotate K when positions move
struct llama_kv_rope {
    float    freq_base;
    float    freq_base_swa;
    float    freq_scale;
    float    freq_scale_swa;
    uint32_t n_ctx_orig;
    float    ext_factor;
    float    attn_factor;
    float    beta_fast;
    float    beta_slow;
};

struct llama_memory_i {
    const struct llama_model * model;

    uint32_t size;               // cells
    uint32_t n_seq_max;
    bool     unified;
    uint32_t seq_cap;            // cells one sequence may hold (size / n_seq_max when not unified, else size)
    enum ggml_type type_k;
    enum ggml_type type_v;

    struct llama_kv_cell * cells; // [size]
    uint32_t head;               // where the next slot search starts
    uint32_t used;               // non-empty cells
    bool     has_shift;          // some cell has delta != 0

    struct llama_kv_rope rope;

    struct ggml_context * ctx;   // K/V tensor headers
    ggml_backend_buffer_t buf;   // K/V data
    struct ggml_tensor ** k;     // [n_layer] each [n_embd_k_gqa, size]
    struct ggml_tensor ** v;     // [n_layer] each [n_embd_v_gqa, size]
};

// NULL (logged) on unsupported types or out of memory
struct llama_memory_i * llama_kv_cache_init(
        const struct llama_model * model, uint32_t size, enum ggml_type type_k, enum ggml_type type_v,
        uint32_t n_seq_max, bool unified, const struct llama_kv_rope * rope);

void llama_kv_cache_free(struct llama_memory_i * kv);

// copy of the cell metadata (to undo a failed decode); NULL on out of memory
struct llama_kv_cell * llama_kv_cache_cells_save(const struct llama_memory_i * kv);
void llama_kv_cache_cells_restore(struct llama_memory_i * kv, struct llama_kv_cell * saved); // frees saved

// Places the ubatch tokens in empty cells (idxs[i] = cell of token i). False when there is not enough room
// (cells already taken for this ubatch stay taken: restore from a saved copy).
bool llama_kv_cache_find_slot(struct llama_memory_i * kv, const struct llama_ubatch * ub, int64_t * idxs);

// cells the attention must look at (a prefix of the ring that holds every used cell)
uint32_t llama_kv_cache_n_kv(const struct llama_memory_i * kv);

// KQ mask [n_tokens rows][n_kv] (0 or -INFINITY) for the ubatch; swa: apply the model's sliding window
void llama_kv_cache_fill_mask(const struct llama_memory_i * kv, const struct llama_ubatch * ub, uint32_t n_kv,
        bool causal, bool swa, float * dst);

// K-shift: adds nodes re-rotating every layer's K by the pending deltas to gf; *pos_input (I32 [size]) must
// be filled with llama_kv_cache_fill_shift after allocation
void llama_kv_cache_build_shift(struct llama_memory_i * kv, struct ggml_context * ctx0, struct ggml_cgraph * gf,
        struct ggml_tensor ** pos_input);
void llama_kv_cache_fill_shift(const struct llama_memory_i * kv, int32_t * dst);
void llama_kv_cache_shift_done(struct llama_memory_i * kv);

llama_pos llama_kv_cache_seq_pos_max(const struct llama_memory_i * kv, llama_seq_id seq_id);

// state (de)serialization of the cells of seq_id (-1: all) into/out of a byte stream; see llama-context.c
size_t llama_kv_cache_state_write(const struct llama_memory_i * kv, llama_seq_id seq_id, uint8_t * dst, size_t cap);
size_t llama_kv_cache_state_read (struct llama_memory_i * kv, llama_seq_id seq_id, const uint8_t * src, size_t n);

#ifdef __cplusplus
}
#endif
