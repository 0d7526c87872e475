// KV cache: one ring of cells (position + sequence set) and, per layer, a K and a V tensor. K is stored after
// RoPE with one row per cell. V has one row per cell too when flash attention reads it; without flash attention
// it is stored transposed (one row per channel, cells along ne0, as llama.cpp's v_trans) so that the KQ·V
// product reads it in place instead of transposing the whole cache every ubatch. Both in type_k / type_v.
// llama_memory_t points at it.
//
// Sliding-window models with swa_full = false (llama.cpp's iSWA cache): the cache above keeps the full-attention
// layers only and owns a second, small cache (swa) for the sliding-window layers, sized for the window of every
// sequence plus one ubatch. Its ring reuses the cells whose positions have left the window of every sequence
// they belong to (as llama.cpp's iSWA cache does, only when it needs them), so a sequence of any length fits.
// The llama_memory_* calls act on both.
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

// which layers a cache holds tensors for (the others have NULL k[il] / v[il])
enum llama_kv_layers {
    LLAMA_KV_LAYERS_ALL,
    LLAMA_KV_LAYERS_NON_SWA,
    LLAMA_KV_LAYERS_SWA,
};

struct llama_memory_i {
    const struct llama_model * model;
    enum llama_kv_layers layers;
    struct llama_memory_i * swa; // owned small cache of the sliding-window layers (iSWA), or NULL

    uint32_t size;               // cells
    uint32_t n_seq_max;
    bool     unified;
    uint32_t seq_cap;            // cells one sequence may hold (size / n_seq_max when not unified, else size)
    enum ggml_type type_k;
    enum ggml_type type_v;
    bool     v_trans;            // V stored transposed: v[il] is [size, n_embd_v_gqa]

    struct llama_kv_cell * cells; // [size]
    uint32_t head;               // where the next slot search starts
    uint32_t used;               // non-empty cells
    bool     has_shift;          // some cell has delta != 0

    struct llama_kv_rope rope;

    struct ggml_context * ctx;   // K/V tensor headers
    ggml_backend_buffer_t buf;   // K/V data
    struct ggml_tensor ** k;     // [n_layer] each [n_embd_k_gqa, size]
    struct ggml_tensor ** v;     // [n_layer] each [n_embd_v_gqa, size] ([size, n_embd_v_gqa] when v_trans)
};

// NULL (logged) on unsupported types (a transposed V must not be quantized) or out of memory. layers picks
// the layers that get tensors; LLAMA_KV_LAYERS_SWA makes the pruning small cache described above.
struct llama_memory_i * llama_kv_cache_init(
        const struct llama_model * model, uint32_t size, enum ggml_type type_k, enum ggml_type type_v,
        bool v_trans, uint32_t n_seq_max, bool unified, enum llama_kv_layers layers,
        const struct llama_kv_rope * rope);

// frees kv and its swa child
void llama_kv_cache_free(struct llama_memory_i * kv);

// copy of the cell metadata (to undo a failed decode); NULL on out of memory
struct llama_kv_cell * llama_kv_cache_cells_save(const struct llama_memory_i * kv);
// puts the saved cells back (frees saved); the cells in written[0..n_written) got new data since the save, so
// any of them the saved copy still holds (a pruned SWA cell that was reused) is dropped rather than revived
void llama_kv_cache_cells_restore(struct llama_memory_i * kv, struct llama_kv_cell * saved,
        const int64_t * written, uint32_t n_written);
// frees the cells of a ubatch whose graph failed
void llama_kv_cache_drop_cells(struct llama_memory_i * kv, const int64_t * idxs, uint32_t n);

// Places the ubatch tokens in empty cells, or in the SWA cache also in cells that left the window
// (idxs[i] = cell of token i). False when there is not enough room: a cache that is not the SWA one checks
// before it takes any cell, so it then changed nothing; the SWA cache may have taken (and pruned) cells for
// this ubatch, which only a saved copy undoes.
bool llama_kv_cache_find_slot(struct llama_memory_i * kv, const struct llama_ubatch * ub, int64_t * idxs);

// cells the attention must look at (a prefix of the ring that holds every used cell)
uint32_t llama_kv_cache_n_kv(const struct llama_memory_i * kv);

// KQ mask [n_tokens rows][n_kv] (0 or -INFINITY) for the ubatch; swa: apply the model's sliding window
void llama_kv_cache_fill_mask(const struct llama_memory_i * kv, const struct llama_ubatch * ub, uint32_t n_kv,
        bool causal, bool swa, float * dst);

// K-shift (of this cache only, not its swa child): adds nodes re-rotating every layer's K by the pending
// deltas to gf; *pos_input (I32 [size]) must be filled with llama_kv_cache_fill_shift after allocation.
// False (nothing added) when the cache holds no layer.
bool llama_kv_cache_build_shift(struct llama_memory_i * kv, struct ggml_context * ctx0, struct ggml_cgraph * gf,
        struct ggml_tensor ** pos_input);
void llama_kv_cache_fill_shift(const struct llama_memory_i * kv, int32_t * dst);
void llama_kv_cache_shift_done(struct llama_memory_i * kv);

llama_pos llama_kv_cache_seq_pos_max(const struct llama_memory_i * kv, llama_seq_id seq_id);
// the same for every sequence at once (pos_max[LLAMA_MAX_SEQ], -1 where a sequence has no cell), in one pass
void llama_kv_cache_seq_pos_max_all(const struct llama_memory_i * kv, llama_pos * pos_max);

// state (de)serialization of the cells of seq_id (-1: all) into/out of a byte stream, the swa child's part
// after this cache's; see llama-state.c
size_t llama_kv_cache_state_write(const struct llama_memory_i * kv, llama_seq_id seq_id, uint8_t * dst, size_t cap);
size_t llama_kv_cache_state_read (struct llama_memory_i * kv, llama_seq_id seq_id, const uint8_t * src, size_t n);

#ifdef __cplusplus
}
#endif
