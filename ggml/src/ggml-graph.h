// Graph internals shared by ggml-graph.c, ggml-ops.c, the CPU engine, the allocator and the scheduler:
// the cgraph struct, the pointer hash set, op_params accessors. Names follow llama.cpp's ggml-impl.h so
// code written against those internals reads the same.
#pragma once

#include "ggml-impl.h"

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- helpers exported by ggml.c --------------------------------------------------------------------------

struct ggml_tensor * ggml_new_tensor_view(struct ggml_context * ctx, enum ggml_type type, int n_dims,
                                          const int64_t * ne, struct ggml_tensor * view_src, size_t view_offs);
void * ggml_new_object_payload(struct ggml_context * ctx, enum ggml_object_type type, size_t size);

// ---- op params -------------------------------------------------------------------------------------------

static inline void ggml_set_op_params(struct ggml_tensor * tensor, const void * params, size_t params_size) {
    GGML_ASSERT(tensor != NULL);
    GGML_ASSERT(params_size <= GGML_MAX_OP_PARAMS);
    memcpy(tensor->op_params, params, params_size);
}

static inline void ggml_set_op_params_i32(struct ggml_tensor * tensor, uint32_t i, int32_t value) {
    GGML_ASSERT(i < GGML_MAX_OP_PARAMS / sizeof(int32_t));
    tensor->op_params[i] = value;
}

static inline void ggml_set_op_params_f32(struct ggml_tensor * tensor, uint32_t i, float value) {
    GGML_ASSERT(i < GGML_MAX_OP_PARAMS / sizeof(float));
    memcpy(&tensor->op_params[i], &value, sizeof(float));
}

// parameters of GGML_OP_MAP_CUSTOM1..3 and GGML_OP_CUSTOM, stored in op_params. fun is the op's callback
// (ggml_custom1_op_t ... ggml_custom_op_t, chosen by the op), n_tasks GGML_N_TASKS_MAX or a thread count.
struct ggml_custom_op_params {
    void (*fun)(void);
    int    n_tasks;
    void * userdata;
};

// ---- bitset + open-addressing pointer hash set -----------------------------------------------------------

typedef uint32_t ggml_bitset_t;

static inline size_t ggml_bitset_size(size_t n) { return (n + 31) >> 5; }
static inline bool   ggml_bitset_get(const ggml_bitset_t * b, size_t i) { return (b[i >> 5] >> (i & 31)) & 1u; }
static inline void   ggml_bitset_set(ggml_bitset_t * b, size_t i) { b[i >> 5] |= (1u << (i & 31)); }
static inline void   ggml_bitset_clear(ggml_bitset_t * b, size_t i) { b[i >> 5] &= ~(1u << (i & 31)); }

struct ggml_hash_set {
    size_t                size;
    ggml_bitset_t       * used; // whether a key slot is in use
    struct ggml_tensor ** keys;
};

// a set with room for at least `size` keys (malloc'ed; free with ggml_hash_set_free). keys/used NULL on OOM.
struct ggml_hash_set ggml_hash_set_new(size_t size);
void                 ggml_hash_set_free(struct ggml_hash_set * hash_set);
// a table size (prime) >= min_sz
size_t               ggml_hash_size(size_t min_sz);
// remove all keys
void                 ggml_hash_set_reset(struct ggml_hash_set * hash_set);

#define GGML_HASHSET_FULL           ((size_t) -1)
#define GGML_HASHSET_ALREADY_EXISTS ((size_t) -2)

static inline size_t ggml_hash(const struct ggml_tensor * p) {
    // the low bits of a pointer are always zero (tensors are aligned)
    return (size_t) (uintptr_t) p >> 4;
}

// slot of key, or of the free slot where it would go; GGML_HASHSET_FULL if neither exists
static inline size_t ggml_hash_find(const struct ggml_hash_set * hash_set, const struct ggml_tensor * key) {
    size_t h = ggml_hash(key) % hash_set->size;
    size_t i = h;
    while (ggml_bitset_get(hash_set->used, i) && hash_set->keys[i] != key) {
        i = (i + 1) % hash_set->size;
        if (i == h) {
            return GGML_HASHSET_FULL;
        }
    }
    return i;
}

static inline bool ggml_hash_contains(const struct ggml_hash_set * hash_set, const struct ggml_tensor * key) {
    const size_t i = ggml_hash_find(hash_set, key);
    return i != GGML_HASHSET_FULL && ggml_bitset_get(hash_set->used, i);
}

// slot of the inserted key; GGML_HASHSET_ALREADY_EXISTS if present (aborts when full: tables are sized up front)
static inline size_t ggml_hash_insert(struct ggml_hash_set * hash_set, struct ggml_tensor * key) {
    const size_t i = ggml_hash_find(hash_set, key);
    GGML_ASSERT(i != GGML_HASHSET_FULL);
    if (ggml_bitset_get(hash_set->used, i)) {
        return GGML_HASHSET_ALREADY_EXISTS;
    }
    ggml_bitset_set(hash_set->used, i);
    hash_set->keys[i] = key;
    return i;
}

// slot of key, inserting it if needed
static inline size_t ggml_hash_find_or_insert(struct ggml_hash_set * hash_set, struct ggml_tensor * key) {
    const size_t i = ggml_hash_find(hash_set, key);
    GGML_ASSERT(i != GGML_HASHSET_FULL);
    if (!ggml_bitset_get(hash_set->used, i)) {
        ggml_bitset_set(hash_set->used, i);
        hash_set->keys[i] = key;
    }
    return i;
}

// ---- computation graph -----------------------------------------------------------------------------------

enum ggml_cgraph_eval_order {
    GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT = 0,
    GGML_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT,
    GGML_CGRAPH_EVAL_ORDER_COUNT
};

// nodes are ops in dependency order (every src of nodes[i] is a leaf or an earlier node); leafs are tensors
// without an op (inputs, weights). use_counts[ggml_hash_find(&visited_hash_set, t)] counts the nodes of this
// graph that read t (a src edge), which the allocator uses to free memory after the last consumer.
struct ggml_cgraph {
    int size;    // maximum number of nodes/leafs/grads/grad_accs
    int n_nodes; // number of nodes currently in use
    int n_leafs; // number of leafs currently in use

    struct ggml_tensor ** nodes;     // tensors with data that can change if the graph is evaluated
    struct ggml_tensor ** grads;     // NULL unless the graph was created with grads
    struct ggml_tensor ** grad_accs; // NULL unless the graph was created with grads
    struct ggml_tensor ** leafs;     // tensors with constant data
    int32_t             * use_counts;// number of uses of each tensor, indexed by hash table slot

    struct ggml_hash_set visited_hash_set;

    enum ggml_cgraph_eval_order order;
};

// a graph of nodes [i0, i1) of cgraph, sharing its arrays; no leafs, no hash set (do not expand it)
struct ggml_cgraph ggml_graph_view(struct ggml_cgraph * cgraph, int i0, int i1);

// ops whose result is a view of src[0]: computing them is a no-op
static inline bool ggml_op_is_empty(enum ggml_op op) {
    switch (op) {
        case GGML_OP_NONE:
        case GGML_OP_RESHAPE:
        case GGML_OP_TRANSPOSE:
        case GGML_OP_VIEW:
        case GGML_OP_PERMUTE:
            return true;
        default:
            return false;
    }
}

#ifdef __cplusplus
}
#endif
