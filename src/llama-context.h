// struct llama_context: resolved parameters, the CPU backend and scheduler, the KV cache, the output buffers
// (logits / embeddings in batch order) and the perf counters.
#pragma once

#include "llama.h"
#include "llama-adapter.h"
#include "llama-batch.h"
#include "llama-graph.h"

#include "ggml-backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct llama_ctx_sampling;
struct llama_opt_state;

// tells llama-context-sampling.c that the context carries the backend-sampling hooks
#define LLAMA_CONTEXT_HAS_SAMPLING 1

struct llama_context {
    const struct llama_model * model;
    struct llama_cparams cparams;

    ggml_backend_t       backend_cpu;
    ggml_backend_sched_t sched;
    size_t               max_nodes;
    void *               buf_meta;      // tensor and graph headers of one ubatch graph
    size_t               buf_meta_size;

    // the last ubatch graph, still built and allocated in sched (llama.cpp's graph reuse): a ubatch of the same
    // shape only uploads its inputs and runs it again. Anything else that uses buf_meta or sched drops it first.
    struct ggml_context * gf_ctx;       // its tensor headers (in buf_meta); NULL: no graph kept
    struct llm_graph      gf_res;       // the graph and its inputs / results
    struct llm_graph_key  gf_key;       // what it was built for
    bool                  graph_reuse_disable; // LLAMA_GRAPH_REUSE_DISABLE=1

    struct llama_memory_i *   mem;
    struct llama_batch_allocr balloc;

    // outputs of the last decode, rows in batch order
    float *   logits;                   // [n_outputs][n_vocab]
    size_t    logits_cap;               // rows
    float *   embd;                     // [n_outputs][n_embd]
    size_t    embd_cap;
    int32_t * output_ids;               // [n_batch_last] row of batch token i, -1 if it has no output
    size_t    output_ids_cap;
    int32_t   n_outputs;
    int32_t   n_batch_last;
    float *   embd_seq;                 // [n_seq_max][n_embd] pooled embeddings
    bool *    embd_seq_ok;              // [n_seq_max]

    ggml_abort_callback abort_callback;
    void *              abort_callback_data;
    ggml_backend_sched_eval_callback cb_eval;
    void *                           cb_eval_user_data;

    struct llama_ctx_sampling * sampling; // backend samplers per sequence and their outputs (NULL: none)

    struct llama_ctx_adapters adapters;   // LoRA set and control vector applied by this context (llama-context-adapter.c)

    struct llama_opt_state * opt;         // training state of llama_opt_init (llama-opt.c); NULL: none

    // perf
    int64_t t_start_us;
    int64_t t_load_us;
    int64_t t_p_eval_us;
    int64_t t_eval_us;
    int32_t n_p_eval;
    int32_t n_eval;
    int32_t n_reused;
};

// forgets the kept ubatch graph and resets the scheduler: before anything else builds in buf_meta or uses sched,
// and whenever the graph's inputs (samplers) may have changed
void llama_context_drop_graph(struct llama_context * ctx);

// grows the scheduler and graph buffers when the model's graph may now need more nodes (samplers or LoRA adapters
// added after construction); call after llama_context_drop_graph. false (logged) on out of memory
bool llama_context_ensure_graph_capacity(struct llama_context * ctx);

// grows the output buffers to n_outputs rows and the batch index map to n_tokens; false on out of memory
bool llama_context_reserve_outputs(struct llama_context * ctx, size_t n_outputs, size_t n_tokens);

#ifdef __cplusplus
}
#endif
