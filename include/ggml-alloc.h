// Memory planning for tensors and graphs (llama.cpp's ggml-alloc.h API).
//
// ggml_tallocr places tensors one after another in a backend buffer (a bump allocator).
// ggml_gallocr plans the memory of a whole graph: a node's result lives only until its last consumer has
// run, so later nodes reuse the space; elementwise ops may write in place over a dying input; views share
// the memory of their source.
#pragma once

#include "ggml.h"

#ifdef  __cplusplus
extern "C" {
#endif

typedef struct ggml_backend_buffer_type * ggml_backend_buffer_type_t;
typedef struct      ggml_backend_buffer * ggml_backend_buffer_t;
typedef struct             ggml_backend * ggml_backend_t;

// Tensor allocator: bump allocation in one buffer (never frees)
struct ggml_tallocr {
    ggml_backend_buffer_t buffer;
    void * base;
    size_t alignment;
    size_t offset;
};

// an allocator at the start of buffer
GGML_API struct ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer);
// gives tensor the next aligned slot of the buffer; GGML_STATUS_ALLOC_FAILED (and a log line) if it does not fit
GGML_API enum ggml_status    ggml_tallocr_alloc(struct ggml_tallocr * talloc, struct ggml_tensor * tensor);

// Graph allocator
/*
  Example usage:
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());

    // optional: reserve the buffers with a worst-case graph so that later graphs need no reallocation
    ggml_gallocr_reserve(galloc, build_graph(max_batch));

    struct ggml_cgraph * graph = build_graph(batch);
    ggml_gallocr_alloc_graph(galloc, graph);

    printf("compute buffer size: %zu bytes\n", ggml_gallocr_get_buffer_size(galloc, 0));

    ggml_backend_graph_compute(backend, graph);
*/

// tensor flags the graph allocator honours:
//   ggml_set_input():  allocated first, at addresses no other tensor of the graph uses
//   ggml_set_output(): never freed and never overwritten while the graph runs

typedef struct ggml_gallocr * ggml_gallocr_t;

// a graph allocator with one buffer of type buft (n_bufs buffers for ggml_gallocr_new_n); NULL on failure
GGML_API ggml_gallocr_t ggml_gallocr_new(ggml_backend_buffer_type_t buft);
GGML_API ggml_gallocr_t ggml_gallocr_new_n(ggml_backend_buffer_type_t * bufts, int n_bufs);
GGML_API void           ggml_gallocr_free(ggml_gallocr_t galloc);

// plans graph (which must not be modified) and allocates buffers big enough for it, without assigning
// addresses to its tensors. Call with a worst-case graph to avoid reallocations later.
// node_buffer_ids / leaf_buffer_ids (may be NULL: buffer 0) give each node / leaf its buffer.
// Returns false if a buffer could not be allocated.
// ggml_gallocr_reserve_n_size only measures: it writes into sizes[i] the bytes buffer i would need.
GGML_API bool ggml_gallocr_reserve(ggml_gallocr_t galloc, struct ggml_cgraph * graph);
GGML_API void ggml_gallocr_reserve_n_size(
    ggml_gallocr_t galloc,
    struct ggml_cgraph * graph,
    const int * node_buffer_ids,
    const int * leaf_buffer_ids,
    size_t * sizes);
GGML_API bool ggml_gallocr_reserve_n(
    ggml_gallocr_t galloc,
    struct ggml_cgraph * graph,
    const int * node_buffer_ids,
    const int * leaf_buffer_ids);

// assigns memory to every tensor of graph that has none. With a single buffer the plan is redone (and the
// buffer grown) when the graph differs from the reserved one; with several buffers that returns false
// (call ggml_gallocr_reserve_n first).
GGML_API bool ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, struct ggml_cgraph * graph);

// bytes of buffer buffer_id (0 when not allocated)
GGML_API size_t ggml_gallocr_get_buffer_size(ggml_gallocr_t galloc, int buffer_id);

// Utils
// Allocates one buffer of type buft holding every tensor of ctx that has no data yet.
// Returns NULL on failure or when there is nothing to allocate (all tensors allocated or zero-sized).
// ggml_backend_alloc_ctx_tensors_from_buft_size returns the size that buffer would have.
GGML_API size_t                       ggml_backend_alloc_ctx_tensors_from_buft_size(struct ggml_context * ctx, ggml_backend_buffer_type_t buft);
GGML_API struct ggml_backend_buffer * ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft);
GGML_API struct ggml_backend_buffer * ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t backend);

#ifdef  __cplusplus
}
#endif
