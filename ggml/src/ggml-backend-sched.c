// The backend scheduler: runs one graph over several backends.
//
// 1. Assignment: every node and leaf gets a backend. Tensors that already have memory run where that memory
//    is usable; nodes writing into such memory (views) follow it; ops reading weights follow the weights
//    (or are offloaded to a higher-priority backend that asks for them); everything else goes to the
//    highest-priority backend that supports the op. Graph inputs without memory live on the last (CPU)
//    backend. set_tensor_backend overrides all of this.
// 2. Splits: consecutive nodes on the same backend form a split (view nodes compute nothing and join the
//    current split). A src whose memory the split's backend cannot use is copied into a tensor of that
//    backend (an "input" of the split) before the split runs.
// 3. Allocation: one graph allocator with a buffer per backend plans the whole graph (copies are graph
//    inputs, placed first), so memory is reused across splits on the same backend.
// 4. Compute: per split, copy the inputs, point the nodes' srcs at the copies while the split runs (the
//    caller's graph is left unchanged afterwards), and run the split (in pieces when an eval callback
//    wants to observe nodes).
#include "ggml-backend-impl.h"
#include "ggml-graph.h"
#include "ggml-impl.h"

#include <stdlib.h>
#include <string.h>

#define GGML_SCHED_MAX_BACKENDS 16

struct sched_input {
    struct ggml_tensor * src;  // the tensor as produced (on another backend)
    struct ggml_tensor * copy; // its copy in the split's backend
};

struct sched_swap {
    struct ggml_tensor * node;
    int                  src_index;
    struct ggml_tensor * copy;
};

struct sched_split {
    int backend_id;
    int i_start; // nodes [i_start, i_end) of the graph
    int i_end;

    struct sched_input * inputs;
    int n_inputs;
    int cap_inputs;

    struct sched_swap * swaps;
    int n_swaps;
    int cap_swaps;
};

struct sched_val {
    int user_id; // set_tensor_backend (until reset), -1 if none
    int id;      // chosen for the current graph, -1 if none
};

struct ggml_backend_sched {
    int n_backends;
    ggml_backend_t             backends[GGML_SCHED_MAX_BACKENDS];
    ggml_backend_buffer_type_t bufts[GGML_SCHED_MAX_BACKENDS];
    bool op_offload;

    ggml_gallocr_t galloc;

    // per tensor: the backend chosen by the user (persists until reset) and the one chosen for this graph
    struct ggml_ptr_map map;
    struct sched_val  * vals; // by map slot

    // the split graph
    struct ggml_cgraph * graph;     // the caller's graph that was split
    struct sched_split * splits;
    int n_splits;
    int cap_splits;
    struct ggml_context * ctx;      // the input copies
    struct ggml_tensor ** leafs;    // the graph's leafs + the copies
    int                 * leaf_ids; // backend of each of those
    int                 * node_ids; // backend of each node
    int cap_leafs;
    int cap_nodes;

    bool is_alloc;
    struct ggml_cgraph * alloc_graph; // the graph is_alloc refers to

    ggml_backend_sched_eval_callback callback_eval;
    void * callback_eval_user_data;
};

//
// assignment table
//

// slot of t, inserting it (with no backend) if absent
static size_t sched_slot(ggml_backend_sched_t sched, struct ggml_tensor * t) {
    if (!ggml_ptr_map_reserve(&sched->map, 1, (void **) &sched->vals, sizeof(sched->vals[0]))) {
        GGML_ABORT("ggml_backend_sched: out of memory");
    }
    const size_t before = sched->map.n;
    const size_t i = ggml_ptr_map_insert(&sched->map, t);
    if (sched->map.n != before) {
        sched->vals[i].user_id = -1;
        sched->vals[i].id      = -1;
    }
    return i;
}

static int sched_get_id(ggml_backend_sched_t sched, const struct ggml_tensor * t) {
    const size_t i = ggml_ptr_map_find(&sched->map, t);
    if (sched->map.keys[i] != t) {
        return -1;
    }
    return sched->vals[i].id >= 0 ? sched->vals[i].id : sched->vals[i].user_id;
}

static void sched_set_id(ggml_backend_sched_t sched, struct ggml_tensor * t, int id) {
    const size_t i = sched_slot(sched, t);
    sched->vals[i].id = id;
}

// forgets everything but the user's choices (the previous graph's tensors may be gone)
static bool sched_forget_graph(ggml_backend_sched_t sched) {
    size_t n_user = 0;
    for (size_t k = 0; k < sched->map.n; k++) {
        n_user += sched->vals[sched->map.used[k]].user_id >= 0;
    }
    struct { const void * key; int user_id; } * keep = NULL;
    if (n_user > 0) {
        keep = malloc(n_user * sizeof(*keep));
        if (keep == NULL) {
            return false;
        }
        size_t j = 0;
        for (size_t k = 0; k < sched->map.n; k++) {
            const size_t slot = sched->map.used[k];
            if (sched->vals[slot].user_id >= 0) {
                keep[j].key     = sched->map.keys[slot];
                keep[j].user_id = sched->vals[slot].user_id;
                j++;
            }
        }
    }
    ggml_ptr_map_clear(&sched->map);
    for (size_t j = 0; j < n_user; j++) {
        const size_t slot = ggml_ptr_map_insert(&sched->map, keep[j].key); // fits: the map only shrank
        sched->vals[slot].user_id = keep[j].user_id;
        sched->vals[slot].id      = -1;
    }
    free(keep);
    return true;
}

static int sched_backend_index(ggml_backend_sched_t sched, ggml_backend_t backend) {
    for (int i = 0; i < sched->n_backends; i++) {
        if (sched->backends[i] == backend) {
            return i;
        }
    }
    return -1;
}

// the highest-priority backend that can use memory of this buffer type; -1 if none
static int sched_backend_for_buft(ggml_backend_sched_t sched, ggml_backend_buffer_type_t buft) {
    for (int i = 0; i < sched->n_backends; i++) {
        if (sched->bufts[i] == buft || ggml_backend_supports_buft(sched->backends[i], buft)) {
            return i;
        }
    }
    return -1;
}

static ggml_backend_buffer_t tensor_buffer(const struct ggml_tensor * t) {
    const struct ggml_tensor * s = t->view_src ? t->view_src : t;
    return s->buffer;
}

// backend whose memory holds t: the owner of its buffer, or the backend it is planned on
static int sched_storage_backend(ggml_backend_sched_t sched, struct ggml_tensor * t) {
    ggml_backend_buffer_t buf = tensor_buffer(t);
    if (buf != NULL) {
        return sched_backend_for_buft(sched, ggml_backend_buffer_get_type(buf));
    }
    return sched_get_id(sched, t->view_src ? t->view_src : t);
}

// can backend b read t where it is (without a copy)?
static bool sched_can_use(ggml_backend_sched_t sched, int b, struct ggml_tensor * t) {
    ggml_backend_buffer_t buf = tensor_buffer(t);
    if (buf != NULL) {
        return ggml_backend_supports_buft(sched->backends[b], ggml_backend_buffer_get_type(buf));
    }
    const int sb = sched_storage_backend(sched, t);
    if (sb < 0 || sb == b) {
        return true;
    }
    return sched->bufts[sb] == sched->bufts[b] || ggml_backend_supports_buft(sched->backends[b], sched->bufts[sb]);
}

static bool node_is_noop(const struct ggml_tensor * node) {
    return ggml_op_is_empty(node->op);
}

static int sched_first_supporting(ggml_backend_sched_t sched, const struct ggml_tensor * node) {
    for (int b = 0; b < sched->n_backends; b++) {
        if (ggml_backend_supports_op(sched->backends[b], node)) {
            return b;
        }
    }
    return -1;
}

static int sched_choose_node_backend(ggml_backend_sched_t sched, struct ggml_tensor * node) {
    // memory that already exists decides
    ggml_backend_buffer_t buf = tensor_buffer(node);
    if (buf != NULL) {
        return sched_backend_for_buft(sched, ggml_backend_buffer_get_type(buf));
    }
    // a result that lives in another tensor's memory is computed where that memory is
    if (node->view_src != NULL) {
        const int b = sched_get_id(sched, node->view_src);
        if (b >= 0) {
            return b;
        }
    }
    if (node_is_noop(node)) {
        return node->src[0] != NULL ? sched_storage_backend(sched, node->src[0]) : -1;
    }
    // ops on weights run where the weights are, unless a higher-priority backend wants to offload them
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        struct ggml_tensor * src = node->src[j];
        if (src == NULL) {
            continue;
        }
        ggml_backend_buffer_t sbuf = tensor_buffer(src);
        if (sbuf == NULL || ggml_backend_buffer_get_usage(sbuf) != GGML_BACKEND_BUFFER_USAGE_WEIGHTS) {
            continue;
        }
        const int wb = sched_backend_for_buft(sched, ggml_backend_buffer_get_type(sbuf));
        if (wb < 0) {
            continue;
        }
        if (sched->op_offload && ggml_backend_buffer_is_host(sbuf)) {
            for (int b = 0; b < wb; b++) {
                if (ggml_backend_supports_op(sched->backends[b], node) &&
                    ggml_backend_offload_op(sched->backends[b], node)) {
                    return b;
                }
            }
        }
        if (ggml_backend_supports_op(sched->backends[wb], node)) {
            return wb;
        }
    }
    // the highest-priority backend that supports the op, preferring one that reads all srcs in place
    int first = -1;
    for (int b = 0; b < sched->n_backends; b++) {
        if (!ggml_backend_supports_op(sched->backends[b], node)) {
            continue;
        }
        if (first < 0) {
            first = b;
        }
        bool all_usable = true;
        for (int j = 0; j < GGML_MAX_SRC && all_usable; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src != NULL && tensor_buffer(src) != NULL && !sched_can_use(sched, b, src)) {
                all_usable = false;
            }
        }
        if (all_usable) {
            return b;
        }
    }
    return first;
}

static bool sched_assign(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    // leafs with memory: where the memory is; graph inputs without memory: the last (CPU) backend
    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggml_tensor * leaf = graph->leafs[i];
        if (sched_get_id(sched, leaf) >= 0) {
            continue;
        }
        ggml_backend_buffer_t buf = tensor_buffer(leaf);
        if (buf != NULL) {
            const int b = sched_backend_for_buft(sched, ggml_backend_buffer_get_type(buf));
            if (b < 0) {
                GGML_LOG_ERROR("ggml_backend_sched: no backend can use buffer type %s of tensor '%s'\n",
                               ggml_backend_buffer_name(buf), leaf->name);
                return false;
            }
            sched_set_id(sched, leaf, b);
        } else if (leaf->flags & GGML_TENSOR_FLAG_INPUT) {
            sched_set_id(sched, leaf, sched->n_backends - 1);
        }
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        int b = sched_get_id(sched, node);
        if (b < 0) {
            b = sched_choose_node_backend(sched, node);
            if (b < 0 && !node_is_noop(node)) {
                GGML_LOG_ERROR("ggml_backend_sched: no backend supports op %s of node '%s'\n",
                               ggml_op_desc(node), node->name);
                return false;
            }
            if (b < 0) {
                b = sched->n_backends - 1;
            }
            if (!node_is_noop(node) && !ggml_backend_supports_op(sched->backends[b], node)) {
                if (tensor_buffer(node) != NULL || node->view_src != NULL) {
                    GGML_LOG_ERROR("ggml_backend_sched: node '%s' (%s) writes memory of backend %s, which does not "
                                   "support the op\n", node->name, ggml_op_desc(node), ggml_backend_name(sched->backends[b]));
                    return false;
                }
                b = sched_first_supporting(sched, node);
                if (b < 0) {
                    GGML_LOG_ERROR("ggml_backend_sched: no backend supports op %s of node '%s'\n",
                                   ggml_op_desc(node), node->name);
                    return false;
                }
            }
            sched_set_id(sched, node, b);
        }
        // srcs without a place yet (leafs without memory that are not inputs) go with their first consumer
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src != NULL && sched_get_id(sched, src) < 0) {
                sched_set_id(sched, src, tensor_buffer(src) != NULL ? sched_storage_backend(sched, src) : b);
            }
        }
    }
    // leafs nobody reads
    for (int i = 0; i < graph->n_leafs; i++) {
        if (sched_get_id(sched, graph->leafs[i]) < 0) {
            sched_set_id(sched, graph->leafs[i], sched->n_backends - 1);
        }
    }
    return true;
}

//
// splits
//

static void sched_free_splits(ggml_backend_sched_t sched) {
    for (int i = 0; i < sched->cap_splits; i++) {
        free(sched->splits[i].inputs);
        free(sched->splits[i].swaps);
    }
    free(sched->splits);
    sched->splits     = NULL;
    sched->n_splits   = 0;
    sched->cap_splits = 0;
}

static struct sched_split * sched_new_split(ggml_backend_sched_t sched) {
    if (sched->n_splits == sched->cap_splits) {
        const int cap = sched->cap_splits ? 2 * sched->cap_splits : 16;
        struct sched_split * grown = realloc(sched->splits, (size_t) cap * sizeof(*grown));
        if (grown == NULL) {
            return NULL;
        }
        memset(grown + sched->cap_splits, 0, (size_t)(cap - sched->cap_splits) * sizeof(*grown));
        sched->splits     = grown;
        sched->cap_splits = cap;
    }
    struct sched_split * s = &sched->splits[sched->n_splits++];
    s->n_inputs = 0;
    s->n_swaps  = 0;
    return s;
}

static bool split_add_input(struct sched_split * s, struct ggml_tensor * src) {
    for (int i = 0; i < s->n_inputs; i++) {
        if (s->inputs[i].src == src) {
            return true;
        }
    }
    if (s->n_inputs == s->cap_inputs) {
        const int cap = s->cap_inputs ? 2 * s->cap_inputs : 8;
        struct sched_input * grown = realloc(s->inputs, (size_t) cap * sizeof(*grown));
        if (grown == NULL) {
            return false;
        }
        s->inputs     = grown;
        s->cap_inputs = cap;
    }
    s->inputs[s->n_inputs].src  = src;
    s->inputs[s->n_inputs].copy = NULL;
    s->n_inputs++;
    return true;
}

static bool split_add_swap(struct sched_split * s, struct ggml_tensor * node, int j, struct ggml_tensor * copy) {
    if (s->n_swaps == s->cap_swaps) {
        const int cap = s->cap_swaps ? 2 * s->cap_swaps : 8;
        struct sched_swap * grown = realloc(s->swaps, (size_t) cap * sizeof(*grown));
        if (grown == NULL) {
            return false;
        }
        s->swaps     = grown;
        s->cap_swaps = cap;
    }
    s->swaps[s->n_swaps++] = (struct sched_swap) { node, j, copy };
    return true;
}

static struct ggml_tensor * split_find_copy(const struct sched_split * s, const struct ggml_tensor * src) {
    for (int i = 0; i < s->n_inputs; i++) {
        if (s->inputs[i].src == src) {
            return s->inputs[i].copy;
        }
    }
    return NULL;
}

static bool sched_grow_arrays(ggml_backend_sched_t sched, int n_leafs, int n_nodes) {
    if (sched->cap_leafs < n_leafs) {
        struct ggml_tensor ** leafs = realloc(sched->leafs, (size_t) n_leafs * sizeof(*leafs));
        if (leafs == NULL) {
            return false;
        }
        sched->leafs = leafs;
        int * ids = realloc(sched->leaf_ids, (size_t) n_leafs * sizeof(int));
        if (ids == NULL) {
            return false;
        }
        sched->leaf_ids  = ids;
        sched->cap_leafs = n_leafs;
    }
    if (sched->cap_nodes < n_nodes) {
        int * ids = realloc(sched->node_ids, (size_t) n_nodes * sizeof(int));
        if (ids == NULL) {
            return false;
        }
        sched->node_ids  = ids;
        sched->cap_nodes = n_nodes;
    }
    return true;
}

static bool sched_split_graph_impl(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    sched->graph    = NULL;
    sched->n_splits = 0;

    // room for this graph's tensors plus the user's choices; forget the previous graph's entries
    if (!sched_forget_graph(sched) ||
        !ggml_ptr_map_reserve(&sched->map, (size_t) graph->n_nodes + (size_t) graph->n_leafs + 16,
                              (void **) &sched->vals, sizeof(sched->vals[0]))) {
        GGML_LOG_ERROR("ggml_backend_sched: out of memory\n");
        return false;
    }

    if (!sched_assign(sched, graph)) {
        return false;
    }

    // consecutive nodes on one backend; no-op nodes join the split they are in
    struct sched_split * cur = NULL;
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if (node_is_noop(node)) {
            continue;
        }
        const int b = sched_get_id(sched, node);
        if (cur == NULL || cur->backend_id != b) {
            if (cur != NULL) {
                cur->i_end = i;
            }
            cur = sched_new_split(sched);
            if (cur == NULL) {
                GGML_LOG_ERROR("ggml_backend_sched: out of memory\n");
                return false;
            }
            cur->backend_id = b;
            cur->i_start    = sched->n_splits == 1 ? 0 : i;
        }
    }
    if (cur == NULL) {
        // only no-op nodes (or none): one split that computes nothing
        cur = sched_new_split(sched);
        if (cur == NULL) {
            return false;
        }
        cur->backend_id = sched->n_backends - 1;
        cur->i_start    = 0;
    }
    cur->i_end = graph->n_nodes;

    // inputs: srcs whose memory the split's backend cannot read
    int n_copies = 0;
    for (int s = 0; s < sched->n_splits; s++) {
        struct sched_split * sp = &sched->splits[s];
        for (int i = sp->i_start; i < sp->i_end; i++) {
            struct ggml_tensor * node = graph->nodes[i];
            if (node_is_noop(node)) {
                continue;
            }
            for (int j = 0; j < GGML_MAX_SRC; j++) {
                struct ggml_tensor * src = node->src[j];
                if (src == NULL || sched_can_use(sched, sp->backend_id, src)) {
                    continue;
                }
                const int before = sp->n_inputs;
                if (!split_add_input(sp, src)) {
                    GGML_LOG_ERROR("ggml_backend_sched: out of memory\n");
                    return false;
                }
                n_copies += sp->n_inputs - before;
            }
        }
    }

    // the copies live in a context of their own, rebuilt per graph
    ggml_free(sched->ctx);
    struct ggml_init_params params = {
        /*.mem_size   = */ ggml_tensor_overhead() * ((size_t) n_copies + 1),
        /*.mem_buffer = */ NULL,
        /*.no_alloc   = */ true,
    };
    sched->ctx = ggml_init(params);
    if (sched->ctx == NULL) {
        GGML_LOG_ERROR("ggml_backend_sched: failed to create the context for %d input copies\n", n_copies);
        return false;
    }
    if (!sched_grow_arrays(sched, graph->n_leafs + n_copies, graph->n_nodes)) {
        GGML_LOG_ERROR("ggml_backend_sched: out of memory\n");
        return false;
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        sched->leafs[i]    = graph->leafs[i];
        sched->leaf_ids[i] = sched_get_id(sched, graph->leafs[i]);
    }
    int n_leafs = graph->n_leafs;
    for (int s = 0; s < sched->n_splits; s++) {
        struct sched_split * sp = &sched->splits[s];
        for (int k = 0; k < sp->n_inputs; k++) {
            struct ggml_tensor * src  = sp->inputs[k].src;
            struct ggml_tensor * copy = ggml_new_tensor(sched->ctx, src->type, GGML_MAX_DIMS, src->ne);
            if (copy == NULL) {
                GGML_LOG_ERROR("ggml_backend_sched: failed to create a copy of '%s'\n", src->name);
                return false;
            }
            // same strides as the source, so one contiguous byte range copies it
            for (int d = 0; d < GGML_MAX_DIMS; d++) {
                copy->nb[d] = src->nb[d];
            }
            ggml_format_name(copy, "%s#%s", ggml_backend_name(sched->backends[sp->backend_id]), src->name);
            ggml_set_input(copy);
            sp->inputs[k].copy = copy;
            sched->leafs[n_leafs]    = copy;
            sched->leaf_ids[n_leafs] = sp->backend_id;
            n_leafs++;
        }
        for (int i = sp->i_start; i < sp->i_end; i++) {
            struct ggml_tensor * node = graph->nodes[i];
            if (node_is_noop(node)) {
                continue;
            }
            for (int j = 0; j < GGML_MAX_SRC; j++) {
                struct ggml_tensor * copy = node->src[j] ? split_find_copy(sp, node->src[j]) : NULL;
                if (copy != NULL && !split_add_swap(sp, node, j, copy)) {
                    GGML_LOG_ERROR("ggml_backend_sched: out of memory\n");
                    return false;
                }
            }
        }
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        sched->node_ids[i] = sched_get_id(sched, graph->nodes[i]);
    }
    sched->graph    = graph;
    return true;
}

// the graph the allocator plans: the caller's nodes, its leafs plus the input copies
static struct ggml_cgraph sched_alloc_view(ggml_backend_sched_t sched) {
    struct ggml_cgraph g = *sched->graph;
    int n_leafs = sched->graph->n_leafs;
    for (int s = 0; s < sched->n_splits; s++) {
        n_leafs += sched->splits[s].n_inputs;
    }
    g.leafs   = sched->leafs;
    g.n_leafs = n_leafs;
    return g;
}

//
// public API
//

ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts,
                                            int n_backends, size_t graph_size, bool parallel, bool op_offload) {
    (void) parallel; // one copy of each input: splits run one after another
    if (backends == NULL || n_backends < 1 || n_backends > GGML_SCHED_MAX_BACKENDS) {
        GGML_LOG_ERROR("%s: need 1..%d backends, got %d\n", __func__, GGML_SCHED_MAX_BACKENDS, n_backends);
        return NULL;
    }
    for (int i = 0; i < n_backends; i++) {
        if (backends[i] == NULL) {
            GGML_LOG_ERROR("%s: backend %d is NULL\n", __func__, i);
            return NULL;
        }
    }
    if (ggml_backend_dev_type(ggml_backend_get_device(backends[n_backends - 1])) != GGML_BACKEND_DEVICE_TYPE_CPU) {
        GGML_LOG_ERROR("%s: the last backend must be a CPU backend (got %s)\n", __func__,
                       ggml_backend_name(backends[n_backends - 1]));
        return NULL;
    }
    ggml_backend_sched_t sched = calloc(1, sizeof(*sched));
    if (sched == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    sched->n_backends = n_backends;
    sched->op_offload = op_offload;
    for (int i = 0; i < n_backends; i++) {
        sched->backends[i] = backends[i];
        sched->bufts[i]    = (bufts != NULL && bufts[i] != NULL) ? bufts[i] : ggml_backend_get_default_buffer_type(backends[i]);
        if (!ggml_backend_supports_buft(backends[i], sched->bufts[i])) {
            GGML_LOG_ERROR("%s: backend %s does not support buffer type %s\n", __func__,
                           ggml_backend_name(backends[i]), ggml_backend_buft_name(sched->bufts[i]));
            free(sched);
            return NULL;
        }
    }
    sched->galloc = ggml_gallocr_new_n(sched->bufts, n_backends);
    if (sched->galloc == NULL || !ggml_ptr_map_init(&sched->map, graph_size > 0 ? graph_size : 64) ||
        (sched->vals = calloc(sched->map.cap, sizeof(sched->vals[0]))) == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        ggml_backend_sched_free(sched);
        return NULL;
    }
    return sched;
}

void ggml_backend_sched_free(ggml_backend_sched_t sched) {
    if (sched == NULL) {
        return;
    }
    ggml_gallocr_free(sched->galloc);
    ggml_ptr_map_free(&sched->map);
    free(sched->vals);
    sched_free_splits(sched);
    ggml_free(sched->ctx);
    free(sched->leafs);
    free(sched->leaf_ids);
    free(sched->node_ids);
    free(sched);
}

void ggml_backend_sched_reset(ggml_backend_sched_t sched) {
    if (sched == NULL) {
        return;
    }
    ggml_ptr_map_clear(&sched->map);
    sched->graph       = NULL;
    sched->n_splits    = 0;
    sched->is_alloc    = false;
    sched->alloc_graph = NULL;
}

void ggml_backend_sched_split_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    if (sched == NULL || graph == NULL) {
        return;
    }
    sched_split_graph_impl(sched, graph);
}

void ggml_backend_sched_reserve_size(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph, size_t * sizes) {
    for (int i = 0; sched != NULL && i < sched->n_backends; i++) {
        sizes[i] = 0;
    }
    if (sched == NULL || measure_graph == NULL) {
        return;
    }
    ggml_backend_sched_synchronize(sched);
    if (sched_split_graph_impl(sched, measure_graph)) {
        struct ggml_cgraph g = sched_alloc_view(sched);
        ggml_gallocr_reserve_n_size(sched->galloc, &g, sched->node_ids, sched->leaf_ids, sizes);
    }
    ggml_backend_sched_reset(sched);
}

bool ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph) {
    if (sched == NULL || measure_graph == NULL) {
        GGML_LOG_ERROR("%s: scheduler or graph is NULL\n", __func__);
        return false;
    }
    ggml_backend_sched_synchronize(sched);
    bool ok = sched_split_graph_impl(sched, measure_graph);
    if (ok) {
        struct ggml_cgraph g = sched_alloc_view(sched);
        ok = ggml_gallocr_reserve_n(sched->galloc, &g, sched->node_ids, sched->leaf_ids);
        if (!ok) {
            GGML_LOG_ERROR("%s: failed to allocate the compute buffers\n", __func__);
        }
    }
    ggml_backend_sched_reset(sched);
    return ok;
}

bool ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    if (sched == NULL || graph == NULL) {
        GGML_LOG_ERROR("%s: scheduler or graph is NULL\n", __func__);
        return false;
    }
    sched->is_alloc    = false;
    sched->alloc_graph = NULL;
    if (!sched_split_graph_impl(sched, graph)) {
        return false;
    }
    struct ggml_cgraph g = sched_alloc_view(sched);
    if (!ggml_gallocr_alloc_graph_n(sched->galloc, &g, sched->node_ids, sched->leaf_ids)) {
        GGML_LOG_ERROR("%s: failed to allocate the graph\n", __func__);
        return false;
    }
    sched->is_alloc    = true;
    sched->alloc_graph = graph;
    return true;
}

// points the split's nodes at the input copies (install) or back at the originals
static void split_swap_srcs(struct sched_split * sp, bool install) {
    for (int k = 0; k < sp->n_swaps; k++) {
        struct sched_swap * sw = &sp->swaps[k];
        if (install) {
            struct ggml_tensor * orig = sw->node->src[sw->src_index];
            sw->node->src[sw->src_index] = sw->copy;
            sw->copy = orig; // remembered for the way back
        } else {
            struct ggml_tensor * cpy = sw->node->src[sw->src_index];
            sw->node->src[sw->src_index] = sw->copy;
            sw->copy = cpy;
        }
    }
}

static enum ggml_status sched_compute_split(ggml_backend_sched_t sched, struct sched_split * sp, bool * stop) {
    ggml_backend_t backend = sched->backends[sp->backend_id];

    for (int k = 0; k < sp->n_inputs; k++) {
        struct ggml_tensor * src  = sp->inputs[k].src;
        struct ggml_tensor * copy = sp->inputs[k].copy;
        const int sb = sched_storage_backend(sched, src);
        if (sb >= 0 && sb != sp->backend_id) {
            ggml_backend_tensor_copy_async(sched->backends[sb], backend, src, copy);
        } else {
            ggml_backend_synchronize(backend);
            ggml_backend_tensor_copy(src, copy);
        }
    }

    struct ggml_cgraph gv = ggml_graph_view(sched->graph, sp->i_start, sp->i_end);
    if (gv.n_nodes == 0) {
        return GGML_STATUS_SUCCESS;
    }

    split_swap_srcs(sp, true);
    enum ggml_status status = GGML_STATUS_SUCCESS;
    if (sched->callback_eval == NULL) {
        status = ggml_backend_graph_compute_async(backend, &gv);
    } else {
        // ask about each node; run up to (and including) the next node the callback wants, then show it
        for (int j0 = 0; j0 < gv.n_nodes; j0++) {
            struct ggml_tensor * t = gv.nodes[j0];
            bool need = sched->callback_eval(t, true, sched->callback_eval_user_data);
            int j1 = j0;
            while (!need && j1 < gv.n_nodes - 1) {
                t = gv.nodes[++j1];
                need = sched->callback_eval(t, true, sched->callback_eval_user_data);
            }
            struct ggml_cgraph part = ggml_graph_view(&gv, j0, j1 + 1);
            status = ggml_backend_graph_compute_async(backend, &part);
            if (status != GGML_STATUS_SUCCESS) {
                break;
            }
            ggml_backend_synchronize(backend);
            if (need && !sched->callback_eval(t, false, sched->callback_eval_user_data)) {
                *stop = true;
                break;
            }
            j0 = j1;
        }
    }
    split_swap_srcs(sp, false);
    return status;
}

enum ggml_status ggml_backend_sched_graph_compute_async(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    if (sched == NULL || graph == NULL) {
        GGML_LOG_ERROR("%s: scheduler or graph is NULL\n", __func__);
        return GGML_STATUS_FAILED;
    }
    if (!sched->is_alloc || sched->alloc_graph != graph) {
        // allocate on first use; the user's set_tensor_backend choices for this graph are kept
        if (!ggml_backend_sched_alloc_graph(sched, graph)) {
            return GGML_STATUS_ALLOC_FAILED;
        }
    }
    bool stop = false;
    for (int s = 0; s < sched->n_splits && !stop; s++) {
        const enum ggml_status status = sched_compute_split(sched, &sched->splits[s], &stop);
        if (status != GGML_STATUS_SUCCESS) {
            return status;
        }
    }
    // a callback that returned false cancels the rest of the graph; that is not an error
    return GGML_STATUS_SUCCESS;
}

enum ggml_status ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    const enum ggml_status status = ggml_backend_sched_graph_compute_async(sched, graph);
    ggml_backend_sched_synchronize(sched);
    return status;
}

void ggml_backend_sched_synchronize(ggml_backend_sched_t sched) {
    if (sched == NULL) {
        return;
    }
    for (int i = 0; i < sched->n_backends; i++) {
        ggml_backend_synchronize(sched->backends[i]);
    }
}

void ggml_backend_sched_set_eval_callback(ggml_backend_sched_t sched, ggml_backend_sched_eval_callback callback,
                                          void * user_data) {
    sched->callback_eval           = callback;
    sched->callback_eval_user_data = user_data;
}

int ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched) {
    return sched->n_splits;
}

int ggml_backend_sched_get_n_copies(ggml_backend_sched_t sched) {
    (void) sched;
    return 1;
}

int ggml_backend_sched_get_n_backends(ggml_backend_sched_t sched) {
    return sched->n_backends;
}

ggml_backend_t ggml_backend_sched_get_backend(ggml_backend_sched_t sched, int i) {
    if (i < 0 || i >= sched->n_backends) {
        GGML_LOG_ERROR("%s: backend index %d out of range\n", __func__, i);
        return NULL;
    }
    return sched->backends[i];
}

ggml_backend_buffer_type_t ggml_backend_sched_get_buffer_type(ggml_backend_sched_t sched, ggml_backend_t backend) {
    const int i = sched_backend_index(sched, backend);
    return i >= 0 ? sched->bufts[i] : NULL;
}

size_t ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend) {
    const int i = sched_backend_index(sched, backend);
    if (i < 0) {
        GGML_LOG_ERROR("%s: backend %s is not part of the scheduler\n", __func__, ggml_backend_name(backend));
        return 0;
    }
    return ggml_gallocr_get_buffer_size(sched->galloc, i);
}

void ggml_backend_sched_set_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node, ggml_backend_t backend) {
    const int i = sched_backend_index(sched, backend);
    if (i < 0 || node == NULL) {
        GGML_LOG_ERROR("%s: backend %s is not part of the scheduler\n", __func__, ggml_backend_name(backend));
        return;
    }
    sched->vals[sched_slot(sched, node)].user_id = i;
}

ggml_backend_t ggml_backend_sched_get_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node) {
    const int i = sched_get_id(sched, node);
    return i >= 0 ? sched->backends[i] : NULL;
}

//
// graph copy: the same graph on another backend, with every tensor's data copied
//

struct graph_copy_state {
    struct ggml_hash_set   set;
    struct ggml_tensor  ** dst;     // copy of each tensor, by slot
    struct ggml_context  * ctx_allocated;
    struct ggml_context  * ctx_unallocated;
    bool failed;
};

static struct ggml_tensor * graph_copy_tensor(struct graph_copy_state * st, struct ggml_tensor * src) {
    const size_t slot = ggml_hash_find_or_insert(&st->set, src);
    if (st->dst[slot] != NULL) {
        return st->dst[slot];
    }
    struct ggml_tensor * view_src = NULL;
    if (src->view_src != NULL) {
        view_src = graph_copy_tensor(st, src->view_src);
        if (view_src == NULL) {
            return NULL;
        }
    }
    struct ggml_context * ctx = src->view_src ? st->ctx_unallocated : st->ctx_allocated;
    struct ggml_tensor * dst = ggml_new_tensor(ctx, src->type, GGML_MAX_DIMS, src->ne);
    if (dst == NULL) {
        st->failed = true;
        return NULL;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        dst->nb[i] = src->nb[i];
    }
    if (view_src != NULL) {
        dst->view_src  = view_src;
        dst->view_offs = src->view_offs;
    }
    dst->op    = src->op;
    dst->flags = src->flags;
    memcpy(dst->op_params, src->op_params, sizeof(dst->op_params));
    ggml_set_name(dst, src->name);
    st->dst[slot] = dst;
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (src->src[i] != NULL) {
            dst->src[i] = graph_copy_tensor(st, src->src[i]);
            if (dst->src[i] == NULL) {
                return NULL;
            }
        }
    }
    return dst;
}

static void graph_copy_init_views(struct graph_copy_state * st, struct ggml_tensor * src) {
    struct ggml_tensor * dst = st->dst[ggml_hash_find(&st->set, src)];
    if (dst->view_src != NULL && dst->buffer == NULL && dst->view_src->buffer != NULL) {
        if (ggml_backend_view_init(dst) != GGML_STATUS_SUCCESS) {
            st->failed = true;
        }
    }
}

static void graph_copy_data(struct graph_copy_state * st, struct ggml_tensor * src) {
    struct ggml_tensor * dst = st->dst[ggml_hash_find(&st->set, src)];
    if (dst->view_src == NULL && src->data != NULL && src->view_src == NULL && ggml_nbytes(src) > 0) {
        ggml_backend_tensor_copy(src, dst);
    }
}

struct ggml_backend_graph_copy ggml_backend_graph_copy(ggml_backend_t backend, struct ggml_cgraph * graph) {
    struct ggml_backend_graph_copy result = { NULL, NULL, NULL, NULL };
    if (backend == NULL || graph == NULL) {
        GGML_LOG_ERROR("%s: backend or graph is NULL\n", __func__);
        return result;
    }
    const size_t max_tensors = (size_t) graph->n_nodes * (GGML_MAX_SRC + 1) + (size_t) graph->n_leafs + 1;
    struct graph_copy_state st = { 0 };
    st.set = ggml_hash_set_new(max_tensors);
    st.dst = st.set.size ? calloc(st.set.size, sizeof(st.dst[0])) : NULL;
    struct ggml_init_params p_alloc = {
        ggml_tensor_overhead() * max_tensors + ggml_graph_overhead_custom((size_t) graph->size, false), NULL, true };
    struct ggml_init_params p_unalloc = { ggml_tensor_overhead() * max_tensors, NULL, true };
    st.ctx_allocated   = ggml_init(p_alloc);
    st.ctx_unallocated = ggml_init(p_unalloc);
    if (st.set.keys == NULL || st.dst == NULL || st.ctx_allocated == NULL || st.ctx_unallocated == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        goto fail;
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        graph_copy_tensor(&st, graph->leafs[i]);
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        graph_copy_tensor(&st, graph->nodes[i]);
    }
    if (st.failed) {
        GGML_LOG_ERROR("%s: failed to copy the graph's tensors\n", __func__);
        goto fail;
    }
    result.buffer = ggml_backend_alloc_ctx_tensors(st.ctx_allocated, backend);
    if (result.buffer == NULL) {
        GGML_LOG_ERROR("%s: failed to allocate the buffer of the copy\n", __func__);
        goto fail;
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        graph_copy_init_views(&st, graph->leafs[i]);
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        graph_copy_init_views(&st, graph->nodes[i]);
    }
    if (st.failed) {
        goto fail;
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        graph_copy_data(&st, graph->leafs[i]);
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        graph_copy_data(&st, graph->nodes[i]);
    }
    result.graph = ggml_new_graph_custom(st.ctx_allocated, (size_t) graph->size, false);
    if (result.graph == NULL) {
        goto fail;
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        ggml_graph_add_node(result.graph, st.dst[ggml_hash_find(&st.set, graph->nodes[i])]);
    }
    result.ctx_allocated   = st.ctx_allocated;
    result.ctx_unallocated = st.ctx_unallocated;
    ggml_hash_set_free(&st.set);
    free(st.dst);
    return result;

fail:
    ggml_backend_buffer_free(result.buffer);
    ggml_free(st.ctx_allocated);
    ggml_free(st.ctx_unallocated);
    ggml_hash_set_free(&st.set);
    free(st.dst);
    struct ggml_backend_graph_copy empty = { NULL, NULL, NULL, NULL };
    return empty;
}

void ggml_backend_graph_copy_free(struct ggml_backend_graph_copy copy) {
    ggml_backend_buffer_free(copy.buffer);
    ggml_free(copy.ctx_allocated);
    ggml_free(copy.ctx_unallocated);
}

bool ggml_backend_compare_graph_backend(ggml_backend_t backend1, ggml_backend_t backend2, struct ggml_cgraph * graph,
                                        ggml_backend_eval_callback callback, void * user_data,
                                        struct ggml_tensor const * const * test_nodes, size_t num_test_nodes) {
    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(backend2, graph);
    if (copy.buffer == NULL) {
        return false;
    }
    struct ggml_cgraph * g1 = graph;
    struct ggml_cgraph * g2 = copy.graph;
    bool ok = true;
    if (num_test_nodes > 0) {
        // run both graphs up to each test node, then compare it
        int start = 0;
        for (int i = 0; i < g1->n_nodes && ok; i++) {
            bool is_test = false;
            for (size_t k = 0; k < num_test_nodes; k++) {
                is_test = is_test || test_nodes[k] == g1->nodes[i];
            }
            if (!is_test) {
                continue;
            }
            struct ggml_cgraph v1 = ggml_graph_view(g1, start, i + 1);
            struct ggml_cgraph v2 = ggml_graph_view(g2, start, i + 1);
            ggml_backend_graph_compute(backend1, &v1);
            ggml_backend_graph_compute(backend2, &v2);
            ok = callback(i, g1->nodes[i], g2->nodes[i], user_data);
            start = i + 1;
        }
    } else {
        for (int i = 0; i < g1->n_nodes && ok; i++) {
            struct ggml_cgraph v1 = ggml_graph_view(g1, i, i + 1);
            struct ggml_cgraph v2 = ggml_graph_view(g2, i, i + 1);
            ggml_backend_graph_compute(backend1, &v1);
            ggml_backend_graph_compute(backend2, &v2);
            if (node_is_noop(g1->nodes[i])) {
                continue;
            }
            ok = callback(i, g1->nodes[i], g2->nodes[i], user_data);
        }
    }
    ggml_backend_graph_copy_free(copy);
    return true;
}
