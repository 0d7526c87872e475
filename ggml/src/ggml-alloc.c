// Tensor and graph memory planning.
//
// The graph allocator simulates the graph in node order with one free-list allocator per buffer: a node
// gets memory just before it runs, and a tensor's memory returns to the free list once its last consumer
// has run (views keep their source alive). Elementwise ops may take over the memory of an input that dies
// at that node (in-place). Graph inputs are placed first and graph outputs are never released, so neither
// is overwritten while the graph runs. The high-water mark of each free list is the buffer size.
#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-graph.h"
#include "ggml-impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t align_up(size_t x, size_t alignment) {
    return (x + alignment - 1) / alignment * alignment;
}

//
// tallocr
//

struct ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer) {
    void * base = ggml_backend_buffer_get_base(buffer);
    size_t align = ggml_backend_buffer_get_alignment(buffer);
    // the first tensor must be aligned too, even if the buffer's base is not
    size_t offset = align_up((uintptr_t) base, align) - (uintptr_t) base;
    struct ggml_tallocr talloc = {
        /*.buffer    = */ buffer,
        /*.base      = */ base,
        /*.alignment = */ align,
        /*.offset    = */ offset,
    };
    return talloc;
}

enum ggml_status ggml_tallocr_alloc(struct ggml_tallocr * talloc, struct ggml_tensor * tensor) {
    size_t size = ggml_backend_buffer_get_alloc_size(talloc->buffer, tensor);
    size = align_up(size, talloc->alignment);
    const size_t buf_size = ggml_backend_buffer_get_size(talloc->buffer);
    if (talloc->offset > buf_size || size > buf_size - talloc->offset) {
        GGML_LOG_ERROR("%s: not enough space in the buffer to allocate %s (needed %zu, available %zu)\n",
                       __func__, tensor->name, size, buf_size - (talloc->offset < buf_size ? talloc->offset : buf_size));
        return GGML_STATUS_ALLOC_FAILED;
    }
    void * addr = (char *) talloc->base + talloc->offset;
    talloc->offset += size;
    return ggml_backend_tensor_alloc(talloc->buffer, tensor, addr);
}

//
// dynamic allocator: offsets only (no memory), a sorted free list below a moving top
//

#define DYN_MAX_FREE_BLOCKS 256

struct free_block {
    size_t offset;
    size_t size;
};

struct dyn_alloc {
    size_t alignment;
    size_t max_size;   // the buffer type's limit
    int    n_free;
    struct free_block free[DYN_MAX_FREE_BLOCKS]; // sorted by offset, never adjacent (merged), all below top
    size_t top;        // end of the highest block in use
    size_t high_water; // the largest top seen: the buffer size this plan needs
};

static void dyn_reset(struct dyn_alloc * a, size_t alignment, size_t max_size) {
    a->alignment  = alignment;
    a->max_size   = max_size;
    a->n_free     = 0;
    a->top        = 0;
    a->high_water = 0;
}

// best fit among the free blocks, else the top; returns false only if the size overflows
static bool dyn_alloc(struct dyn_alloc * a, size_t size, size_t * offset) {
    size = align_up(size, a->alignment);
    int best = -1;
    for (int i = 0; i < a->n_free; i++) {
        if (a->free[i].size >= size && (best < 0 || a->free[i].size < a->free[best].size)) {
            best = i;
        }
    }
    if (best >= 0) {
        *offset = a->free[best].offset;
        a->free[best].offset += size;
        a->free[best].size   -= size;
        if (a->free[best].size == 0) {
            memmove(&a->free[best], &a->free[best + 1], (size_t)(a->n_free - best - 1) * sizeof(a->free[0]));
            a->n_free--;
        }
        return true;
    }
    // a free block touching the top can grow into it
    size_t start = a->top;
    if (a->n_free > 0 && a->free[a->n_free - 1].offset + a->free[a->n_free - 1].size == a->top) {
        start = a->free[a->n_free - 1].offset;
        a->n_free--;
    }
    if (start + size < start) {
        return false;
    }
    *offset = start;
    a->top  = start + size;
    if (a->top > a->high_water) {
        a->high_water = a->top;
    }
    return true;
}

static void dyn_free(struct dyn_alloc * a, size_t offset, size_t size) {
    size = align_up(size, a->alignment);
    if (offset + size == a->top) {
        a->top = offset;
        // a free block now touching the top is absorbed as well
        if (a->n_free > 0 && a->free[a->n_free - 1].offset + a->free[a->n_free - 1].size == a->top) {
            a->top = a->free[a->n_free - 1].offset;
            a->n_free--;
        }
        return;
    }
    int i = 0;
    while (i < a->n_free && a->free[i].offset < offset) {
        i++;
    }
    const bool merge_prev = i > 0 && a->free[i - 1].offset + a->free[i - 1].size == offset;
    const bool merge_next = i < a->n_free && offset + size == a->free[i].offset;
    if (merge_prev && merge_next) {
        a->free[i - 1].size += size + a->free[i].size;
        memmove(&a->free[i], &a->free[i + 1], (size_t)(a->n_free - i - 1) * sizeof(a->free[0]));
        a->n_free--;
    } else if (merge_prev) {
        a->free[i - 1].size += size;
    } else if (merge_next) {
        a->free[i].offset = offset;
        a->free[i].size  += size;
    } else if (a->n_free < DYN_MAX_FREE_BLOCKS) {
        memmove(&a->free[i + 1], &a->free[i], (size_t)(a->n_free - i) * sizeof(a->free[0]));
        a->free[i].offset = offset;
        a->free[i].size   = size;
        a->n_free++;
    }
    // with the list full the block is simply never reused: the plan stays valid, only less compact
}

//
// gallocr
//

// what the simulation knows about one tensor (indexed by its map slot)
struct tensor_state {
    int    n_children; // consumers that have not run yet
    int    n_views;    // views of this tensor whose consumers have not all run
    int    buffer_id;
    size_t offset;
    size_t size;
    bool   allocated;  // memory placed by this plan (pre-allocated tensors are never touched)
    bool   owned;      // the plan frees this memory after the last use (false once passed on in place)
};

// the buffer of one node/leaf in the last plan (alloc_graph re-plans a reserved multi-buffer graph with it)
struct tensor_place {
    int buffer_id;
};

struct ggml_gallocr {
    ggml_backend_buffer_type_t * bufts;
    ggml_backend_buffer_t      * buffers;
    struct dyn_alloc          ** dyn;
    int n_buffers;

    struct ggml_ptr_map   map;    // every tensor the current plan touches
    struct tensor_state * states; // by map slot

    // the last plan, by position in the graph
    struct tensor_place * node_places;
    struct tensor_place * leaf_places;
    int n_nodes;
    int n_leafs;
    int cap_nodes;
    int cap_leafs;
    bool have_plan;
};

ggml_gallocr_t ggml_gallocr_new_n(ggml_backend_buffer_type_t * bufts, int n_bufs) {
    if (bufts == NULL || n_bufs <= 0) {
        GGML_LOG_ERROR("%s: no buffer types given\n", __func__);
        return NULL;
    }
    ggml_gallocr_t galloc = calloc(1, sizeof(*galloc));
    if (galloc == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    galloc->bufts   = calloc((size_t) n_bufs, sizeof(galloc->bufts[0]));
    galloc->buffers = calloc((size_t) n_bufs, sizeof(galloc->buffers[0]));
    galloc->dyn     = calloc((size_t) n_bufs, sizeof(galloc->dyn[0]));
    galloc->n_buffers = n_bufs;
    if (galloc->bufts == NULL || galloc->buffers == NULL || galloc->dyn == NULL) {
        ggml_gallocr_free(galloc);
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    for (int i = 0; i < n_bufs; i++) {
        if (bufts[i] == NULL) {
            GGML_LOG_ERROR("%s: buffer type %d is NULL\n", __func__, i);
            ggml_gallocr_free(galloc);
            return NULL;
        }
        galloc->bufts[i] = bufts[i];
        // buffer types shared between ids share one allocator (and one buffer)
        for (int j = 0; j < i; j++) {
            if (bufts[j] == bufts[i]) {
                galloc->dyn[i] = galloc->dyn[j];
                break;
            }
        }
        if (galloc->dyn[i] == NULL) {
            galloc->dyn[i] = calloc(1, sizeof(struct dyn_alloc));
            if (galloc->dyn[i] == NULL) {
                ggml_gallocr_free(galloc);
                GGML_LOG_ERROR("%s: out of memory\n", __func__);
                return NULL;
            }
        }
    }
    return galloc;
}

ggml_gallocr_t ggml_gallocr_new(ggml_backend_buffer_type_t buft) {
    return ggml_gallocr_new_n(&buft, 1);
}

// first id that uses the same buffer type (buffers are shared between ids with the same type)
static int gallocr_canonical_id(ggml_gallocr_t galloc, int id) {
    for (int j = 0; j < id; j++) {
        if (galloc->bufts[j] == galloc->bufts[id]) {
            return j;
        }
    }
    return id;
}

void ggml_gallocr_free(ggml_gallocr_t galloc) {
    if (galloc == NULL) {
        return;
    }
    for (int i = 0; i < galloc->n_buffers; i++) {
        if (galloc->bufts != NULL && gallocr_canonical_id(galloc, i) != i) {
            continue;
        }
        if (galloc->buffers != NULL) {
            ggml_backend_buffer_free(galloc->buffers[i]);
        }
        if (galloc->dyn != NULL) {
            free(galloc->dyn[i]);
        }
    }
    ggml_ptr_map_free(&galloc->map);
    free(galloc->states);
    free(galloc->node_places);
    free(galloc->leaf_places);
    free(galloc->bufts);
    free(galloc->buffers);
    free(galloc->dyn);
    free(galloc);
}

// the state of a tensor registered by gallocr_register (the map does not change after that, so the
// returned pointer stays valid for the whole plan)
static struct tensor_state * gallocr_state(ggml_gallocr_t galloc, const struct ggml_tensor * t) {
    const size_t i = ggml_ptr_map_find(&galloc->map, t);
    GGML_ASSERT(galloc->map.keys[i] == t);
    return &galloc->states[i];
}

// adds t (if new) with buffer id; returns false on OOM
static bool gallocr_register(ggml_gallocr_t galloc, const struct ggml_tensor * t, int buffer_id) {
    if (!ggml_ptr_map_reserve(&galloc->map, 1, (void **) &galloc->states, sizeof(galloc->states[0]))) {
        return false;
    }
    const size_t before = galloc->map.n;
    const size_t i = ggml_ptr_map_insert(&galloc->map, t);
    if (galloc->map.n != before) {
        memset(&galloc->states[i], 0, sizeof(galloc->states[i]));
        galloc->states[i].buffer_id = buffer_id;
    }
    return true;
}

// pre-allocated tensors (weights, statically allocated inputs) and their views are not planned
static bool tensor_is_external(const struct ggml_tensor * t) {
    if (t->data != NULL || t->buffer != NULL) {
        return true;
    }
    return t->view_src != NULL && (t->view_src->data != NULL || t->view_src->buffer != NULL);
}

// ops whose kernels read each element before writing the same element, so dst may alias a src of the
// same layout
static bool op_can_inplace(enum ggml_op op) {
    switch (op) {
        case GGML_OP_ADD:
        case GGML_OP_ADD1:
        case GGML_OP_SUB:
        case GGML_OP_MUL:
        case GGML_OP_DIV:
        case GGML_OP_SCALE:
        case GGML_OP_SQR:
        case GGML_OP_SQRT:
        case GGML_OP_LOG:
        case GGML_OP_UNARY:
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_DIAG_MASK_ZERO:
            return true;
        default:
            return false;
    }
}

static bool same_layout(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->type != b->type) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) {
            return false;
        }
    }
    return true;
}

static bool gallocr_place(ggml_gallocr_t galloc, struct ggml_tensor * t, int buffer_id) {
    struct tensor_state * st = gallocr_state(galloc, t);
    if (st->allocated || tensor_is_external(t)) {
        return true;
    }
    if (t->view_src != NULL) {
        // a view lives in its source's memory; it is placed when the view is initialized
        st->allocated = true;
        st->owned     = false;
        st->buffer_id = gallocr_state(galloc, t->view_src)->buffer_id;
        return true;
    }

    // in place: take over the memory of a src that dies here (this node is its last consumer)
    // (an output may take over a dying parent's memory: it keeps it from then on)
    if (op_can_inplace(t->op) && !(t->flags & GGML_TENSOR_FLAG_INPUT)) {
        for (int i = 0; i < GGML_MAX_SRC; i++) {
            struct ggml_tensor * p = t->src[i];
            if (p == NULL || p->view_src != NULL || tensor_is_external(p)) {
                continue;
            }
            if (p->flags & (GGML_TENSOR_FLAG_OUTPUT | GGML_TENSOR_FLAG_INPUT)) {
                continue;
            }
            struct tensor_state * ps = gallocr_state(galloc, p);
            if (!ps->allocated || !ps->owned || ps->n_children != 1 || ps->n_views != 0) {
                continue;
            }
            if (ps->buffer_id != buffer_id || !same_layout(p, t)) {
                continue;
            }
            const size_t need = ggml_backend_buft_get_alloc_size(galloc->bufts[buffer_id], t);
            if (need > ps->size) {
                continue;
            }
            st->allocated = true;
            st->owned     = true;
            st->buffer_id = buffer_id;
            st->offset    = ps->offset;
            st->size      = ps->size;
            ps->owned     = false; // the parent's memory now belongs to t
            return true;
        }
    }

    const size_t size = ggml_backend_buft_get_alloc_size(galloc->bufts[buffer_id], t);
    size_t offset;
    struct dyn_alloc * a = galloc->dyn[buffer_id];
    if (!dyn_alloc(a, size, &offset) || a->top > a->max_size) {
        GGML_LOG_ERROR("%s: tensor '%s' (%zu bytes) exceeds the maximum size of buffer type %s (%zu)\n",
                       __func__, t->name, size, ggml_backend_buft_name(galloc->bufts[buffer_id]), a->max_size);
        return false;
    }
    st->allocated = true;
    st->owned     = true;
    st->buffer_id = buffer_id;
    st->offset    = offset;
    st->size      = size;
    return true;
}

static void gallocr_release(ggml_gallocr_t galloc, struct ggml_tensor * t) {
    struct tensor_state * st = gallocr_state(galloc, t);
    if (!st->allocated || !st->owned || tensor_is_external(t) || t->view_src != NULL) {
        return;
    }
    // outputs must survive the graph and inputs are written before it runs
    if (t->flags & (GGML_TENSOR_FLAG_OUTPUT | GGML_TENSOR_FLAG_INPUT)) {
        return;
    }
    dyn_free(galloc->dyn[st->buffer_id], st->offset, st->size);
    st->owned = false;
}

// after a consumer ran: a src with no consumers left (and no live views) is released
static void gallocr_consumed(ggml_gallocr_t galloc, struct ggml_tensor * p) {
    struct tensor_state * ps = gallocr_state(galloc, p);
    ps->n_children--;
    if (ps->n_children > 0 || ps->n_views > 0) {
        return;
    }
    if (p->view_src != NULL) {
        struct tensor_state * vs = gallocr_state(galloc, p->view_src);
        vs->n_views--;
        if (vs->n_views == 0 && vs->n_children == 0) {
            gallocr_release(galloc, p->view_src);
        }
    } else {
        gallocr_release(galloc, p);
    }
}

static bool gallocr_ensure_capacity(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    const size_t n_expected = (size_t) graph->n_nodes + (size_t) graph->n_leafs + 16;
    if (galloc->map.cap == 0) {
        if (!ggml_ptr_map_init(&galloc->map, n_expected)) {
            return false;
        }
        galloc->states = calloc(galloc->map.cap, sizeof(galloc->states[0]));
        if (galloc->states == NULL) {
            ggml_ptr_map_free(&galloc->map);
            return false;
        }
    } else {
        ggml_ptr_map_clear(&galloc->map);
    }
    if (!ggml_ptr_map_reserve(&galloc->map, n_expected, (void **) &galloc->states, sizeof(galloc->states[0]))) {
        return false;
    }
    if (galloc->cap_nodes < graph->n_nodes) {
        free(galloc->node_places);
        galloc->node_places = calloc((size_t) graph->n_nodes, sizeof(galloc->node_places[0]));
        galloc->cap_nodes   = galloc->node_places ? graph->n_nodes : 0;
        if (galloc->node_places == NULL) {
            return false;
        }
    }
    if (galloc->cap_leafs < graph->n_leafs) {
        free(galloc->leaf_places);
        galloc->leaf_places = calloc((size_t) graph->n_leafs, sizeof(galloc->leaf_places[0]));
        galloc->cap_leafs   = galloc->leaf_places ? graph->n_leafs : 0;
        if (galloc->leaf_places == NULL) {
            return false;
        }
    }
    return true;
}

static int id_or_zero(const int * ids, int i) {
    return ids != NULL ? ids[i] : 0;
}

// plans graph; on success the per-buffer high-water marks are in galloc->dyn, each tensor's place in its
// state (galloc->map / states) and the buffer ids in node_places/leaf_places
static bool gallocr_plan(ggml_gallocr_t galloc, struct ggml_cgraph * graph, const int * node_buffer_ids,
                         const int * leaf_buffer_ids) {
    galloc->have_plan = false;
    if (!gallocr_ensure_capacity(galloc, graph)) {
        GGML_LOG_ERROR("ggml_gallocr: out of memory planning a graph of %d nodes\n", graph->n_nodes);
        return false;
    }
    for (int i = 0; i < galloc->n_buffers; i++) {
        if (gallocr_canonical_id(galloc, i) == i) {
            dyn_reset(galloc->dyn[i], ggml_backend_buft_get_alignment(galloc->bufts[i]),
                      ggml_backend_buft_get_max_size(galloc->bufts[i]));
        }
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        const int id = id_or_zero(node_buffer_ids, i);
        if (id < 0 || id >= galloc->n_buffers) {
            GGML_LOG_ERROR("ggml_gallocr: node %d has buffer id %d (have %d buffers)\n", i, id, galloc->n_buffers);
            return false;
        }
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        const int id = id_or_zero(leaf_buffer_ids, i);
        if (id < 0 || id >= galloc->n_buffers) {
            GGML_LOG_ERROR("ggml_gallocr: leaf %d has buffer id %d (have %d buffers)\n", i, id, galloc->n_buffers);
            return false;
        }
    }

    // every tensor the plan touches, with its buffer: each leaf and node has its own; a src or view source
    // outside both lists goes where its (first) consumer goes
    for (int i = 0; i < graph->n_leafs; i++) {
        if (!gallocr_register(galloc, graph->leafs[i], id_or_zero(leaf_buffer_ids, i))) {
            goto oom;
        }
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        if (!gallocr_register(galloc, graph->nodes[i], id_or_zero(node_buffer_ids, i))) {
            goto oom;
        }
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        const struct ggml_tensor * leaf = graph->leafs[i];
        if (leaf->view_src != NULL && !gallocr_register(galloc, leaf->view_src, id_or_zero(leaf_buffer_ids, i))) {
            goto oom;
        }
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        const struct ggml_tensor * node = graph->nodes[i];
        const int id = id_or_zero(node_buffer_ids, i);
        if (node->view_src != NULL && !gallocr_register(galloc, node->view_src, id)) {
            goto oom;
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            const struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                continue;
            }
            if (!gallocr_register(galloc, src, id) ||
                (src->view_src != NULL && !gallocr_register(galloc, src->view_src, id))) {
                goto oom;
            }
        }
    }

    // count consumers and views
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if (node->view_src != NULL) {
            gallocr_state(galloc, node->view_src)->n_views++;
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL) {
                gallocr_state(galloc, node->src[j])->n_children++;
            }
        }
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggml_tensor * leaf = graph->leafs[i];
        if (leaf->view_src != NULL) {
            gallocr_state(galloc, leaf->view_src)->n_views++;
        }
    }

    // inputs first, at addresses nothing else uses
    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggml_tensor * leaf = graph->leafs[i];
        if ((leaf->flags & GGML_TENSOR_FLAG_INPUT) &&
            !gallocr_place(galloc, leaf, gallocr_state(galloc, leaf)->buffer_id)) {
            return false;
        }
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if ((node->flags & GGML_TENSOR_FLAG_INPUT) && !gallocr_place(galloc, node, id_or_zero(node_buffer_ids, i))) {
            return false;
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src != NULL && (src->flags & GGML_TENSOR_FLAG_INPUT) &&
                !gallocr_place(galloc, src, gallocr_state(galloc, src)->buffer_id)) {
                return false;
            }
        }
    }

    // then in execution order
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src != NULL && !gallocr_place(galloc, src, gallocr_state(galloc, src)->buffer_id)) {
                return false;
            }
        }
        if (!gallocr_place(galloc, node, id_or_zero(node_buffer_ids, i))) {
            return false;
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL) {
                gallocr_consumed(galloc, node->src[j]);
            }
        }
        // a node nobody in the graph reads keeps its memory: it is a result the caller may read
    }
    // leafs nobody reads still get memory (the caller may set and read them)
    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggml_tensor * leaf = graph->leafs[i];
        if (!gallocr_place(galloc, leaf, gallocr_state(galloc, leaf)->buffer_id)) {
            return false;
        }
    }

    // remember the buffer of each node and leaf (the ids asked for)
    for (int i = 0; i < graph->n_nodes; i++) {
        galloc->node_places[i].buffer_id = id_or_zero(node_buffer_ids, i);
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        galloc->leaf_places[i].buffer_id = id_or_zero(leaf_buffer_ids, i);
    }
    galloc->n_nodes   = graph->n_nodes;
    galloc->n_leafs   = graph->n_leafs;
    galloc->have_plan = true;
    return true;

oom:
    GGML_LOG_ERROR("ggml_gallocr: out of memory planning a graph of %d nodes\n", graph->n_nodes);
    return false;
}

void ggml_gallocr_reserve_n_size(ggml_gallocr_t galloc, struct ggml_cgraph * graph, const int * node_buffer_ids,
                                 const int * leaf_buffer_ids, size_t * sizes) {
    for (int i = 0; i < galloc->n_buffers; i++) {
        sizes[i] = 0;
    }
    if (!gallocr_plan(galloc, graph, node_buffer_ids, leaf_buffer_ids)) {
        return;
    }
    for (int i = 0; i < galloc->n_buffers; i++) {
        if (gallocr_canonical_id(galloc, i) == i) {
            sizes[i] = galloc->dyn[i]->high_water;
        }
    }
}

// grows (never shrinks) each buffer to its planned size
static bool gallocr_realloc_buffers(ggml_gallocr_t galloc) {
    for (int i = 0; i < galloc->n_buffers; i++) {
        if (gallocr_canonical_id(galloc, i) != i) {
            continue;
        }
        const size_t cur  = galloc->buffers[i] ? ggml_backend_buffer_get_size(galloc->buffers[i]) : 0;
        const size_t need = galloc->dyn[i]->high_water;
        if (galloc->buffers[i] != NULL && need <= cur) {
            continue;
        }
        ggml_backend_buffer_free(galloc->buffers[i]);
        galloc->buffers[i] = ggml_backend_buft_alloc_buffer(galloc->bufts[i], need);
        if (galloc->buffers[i] == NULL) {
            GGML_LOG_ERROR("ggml_gallocr: failed to allocate %s buffer of size %zu\n",
                           ggml_backend_buft_name(galloc->bufts[i]), need);
            return false;
        }
        ggml_backend_buffer_set_usage(galloc->buffers[i], GGML_BACKEND_BUFFER_USAGE_COMPUTE);
    }
    return true;
}

bool ggml_gallocr_reserve_n(ggml_gallocr_t galloc, struct ggml_cgraph * graph, const int * node_buffer_ids,
                            const int * leaf_buffer_ids) {
    if (galloc == NULL || graph == NULL) {
        GGML_LOG_ERROR("%s: allocator or graph is NULL\n", __func__);
        return false;
    }
    if (!gallocr_plan(galloc, graph, node_buffer_ids, leaf_buffer_ids)) {
        return false;
    }
    return gallocr_realloc_buffers(galloc);
}

bool ggml_gallocr_reserve(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    return ggml_gallocr_reserve_n(galloc, graph, NULL, NULL);
}

// gives t the memory the plan chose (views: their source's memory); tensors the plan did not place keep
// what they have
static bool gallocr_init_tensor(ggml_gallocr_t galloc, struct ggml_tensor * t) {
    if (t->view_src != NULL) {
        if (t->buffer == NULL) {
            if (t->view_src->buffer == NULL) {
                GGML_LOG_ERROR("ggml_gallocr: source of view '%s' is not allocated\n", t->name);
                return false;
            }
            return ggml_backend_view_init(t) == GGML_STATUS_SUCCESS;
        }
        return true;
    }
    if (t->data != NULL || t->buffer != NULL) {
        return true;
    }
    const size_t slot = ggml_ptr_map_find(&galloc->map, t);
    if (galloc->map.keys[slot] != t || !galloc->states[slot].allocated) {
        return true;
    }
    const struct tensor_state * st = &galloc->states[slot];
    ggml_backend_buffer_t buffer = galloc->buffers[gallocr_canonical_id(galloc, st->buffer_id)];
    void * addr = (char *) ggml_backend_buffer_get_base(buffer) + st->offset;
    return ggml_backend_tensor_alloc(buffer, t, addr) == GGML_STATUS_SUCCESS;
}

// assigns the memory of the plan just made for graph (the plan's states are still in the map)
static bool gallocr_apply(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    // leafs first (views among the nodes may refer to them), then nodes in order; srcs outside both lists
    // (hand-built graphs) before the node that reads them
    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggml_tensor * leaf = graph->leafs[i];
        if (leaf->view_src != NULL && !gallocr_init_tensor(galloc, leaf->view_src)) {
            return false;
        }
        if (!gallocr_init_tensor(galloc, leaf)) {
            return false;
        }
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                continue;
            }
            if (src->view_src != NULL && !gallocr_init_tensor(galloc, src->view_src)) {
                return false;
            }
            if (!gallocr_init_tensor(galloc, src)) {
                return false;
            }
        }
        if (node->view_src != NULL && !gallocr_init_tensor(galloc, node->view_src)) {
            return false;
        }
        if (!gallocr_init_tensor(galloc, node)) {
            return false;
        }
    }
    return true;
}

bool ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    if (galloc == NULL || graph == NULL) {
        GGML_LOG_ERROR("%s: allocator or graph is NULL\n", __func__);
        return false;
    }
    if (galloc->n_buffers > 1) {
        // the buffer of each node is only known from the last reserve_n: the graph must have its shape
        if (!galloc->have_plan || galloc->n_nodes != graph->n_nodes || galloc->n_leafs != graph->n_leafs) {
            GGML_LOG_ERROR("%s: graph differs from the reserved one; call ggml_gallocr_reserve_n first\n", __func__);
            return false;
        }
        // re-plan with the same buffer assignment: sizes may differ from the reserved graph
        int * node_ids = malloc(((size_t) graph->n_nodes + 1) * sizeof(int));
        int * leaf_ids = malloc(((size_t) graph->n_leafs + 1) * sizeof(int));
        if (node_ids == NULL || leaf_ids == NULL) {
            free(node_ids);
            free(leaf_ids);
            GGML_LOG_ERROR("%s: out of memory\n", __func__);
            return false;
        }
        for (int i = 0; i < graph->n_nodes; i++) {
            node_ids[i] = galloc->node_places[i].buffer_id;
        }
        for (int i = 0; i < graph->n_leafs; i++) {
            leaf_ids[i] = galloc->leaf_places[i].buffer_id;
        }
        const bool ok = gallocr_plan(galloc, graph, node_ids, leaf_ids);
        free(node_ids);
        free(leaf_ids);
        if (!ok) {
            return false;
        }
    } else if (!gallocr_plan(galloc, graph, NULL, NULL)) {
        return false;
    }
    if (!gallocr_realloc_buffers(galloc)) {
        return false;
    }
    return gallocr_apply(galloc, graph);
}

bool ggml_gallocr_alloc_graph_n(ggml_gallocr_t galloc, struct ggml_cgraph * graph, const int * node_buffer_ids,
                                const int * leaf_buffer_ids) {
    if (!gallocr_plan(galloc, graph, node_buffer_ids, leaf_buffer_ids)) {
        return false;
    }
    if (!gallocr_realloc_buffers(galloc)) {
        return false;
    }
    return gallocr_apply(galloc, graph);
}

size_t ggml_gallocr_get_buffer_size(ggml_gallocr_t galloc, int buffer_id) {
    if (galloc == NULL || buffer_id < 0 || buffer_id >= galloc->n_buffers) {
        return 0;
    }
    const int id = gallocr_canonical_id(galloc, buffer_id);
    if (id != buffer_id || galloc->buffers[id] == NULL) {
        // a shared buffer is reported once
        return 0;
    }
    return ggml_backend_buffer_get_size(galloc->buffers[id]);
}

//
// utils: one buffer for all the tensors of a context
//

static bool ctx_tensor_needs_memory(const struct ggml_tensor * t) {
    return t->data == NULL && t->view_src == NULL && t->buffer == NULL;
}

// sizes of the buffers needed (several if the buffer type limits the size); returns the count, 0 if none
static size_t ctx_plan_buffers(struct ggml_context * ctx, ggml_backend_buffer_type_t buft, size_t * sizes,
                               size_t max_buffers, bool * ok) {
    const size_t alignment = ggml_backend_buft_get_alignment(buft);
    const size_t max_size  = ggml_backend_buft_get_max_size(buft);
    size_t n = 0;
    size_t cur = 0;
    *ok = true;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (!ctx_tensor_needs_memory(t)) {
            continue;
        }
        const size_t size = align_up(ggml_backend_buft_get_alloc_size(buft, t), alignment);
        if (size > max_size) {
            GGML_LOG_ERROR("ggml_backend_alloc_ctx_tensors: tensor '%s' (%zu bytes) is larger than the maximum size "
                           "of buffer type %s (%zu)\n", t->name, size, ggml_backend_buft_name(buft), max_size);
            *ok = false;
            return 0;
        }
        if (cur + size > max_size) {
            if (n < max_buffers) {
                sizes[n] = cur;
            }
            n++;
            cur = 0;
        }
        cur += size;
    }
    if (cur > 0) {
        if (n < max_buffers) {
            sizes[n] = cur;
        }
        n++;
    }
    return n;
}

size_t ggml_backend_alloc_ctx_tensors_from_buft_size(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    if (ctx == NULL || buft == NULL) {
        return 0;
    }
    const size_t alignment = ggml_backend_buft_get_alignment(buft);
    size_t total = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (ctx_tensor_needs_memory(t)) {
            total += align_up(ggml_backend_buft_get_alloc_size(buft, t), alignment);
        }
    }
    return total;
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    if (ctx == NULL || buft == NULL) {
        GGML_LOG_ERROR("%s: context or buffer type is NULL\n", __func__);
        return NULL;
    }
    bool ok;
    const size_t n_bufs = ctx_plan_buffers(ctx, buft, NULL, 0, &ok);
    if (!ok || n_bufs == 0) {
        return NULL;
    }
    size_t * sizes = calloc(n_bufs, sizeof(size_t));
    ggml_backend_buffer_t * bufs = calloc(n_bufs, sizeof(ggml_backend_buffer_t));
    if (sizes == NULL || bufs == NULL) {
        free(sizes);
        free(bufs);
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    ctx_plan_buffers(ctx, buft, sizes, n_bufs, &ok);
    for (size_t i = 0; i < n_bufs; i++) {
        bufs[i] = ggml_backend_buft_alloc_buffer(buft, sizes[i]);
        if (bufs[i] == NULL) {
            for (size_t j = 0; j < i; j++) {
                ggml_backend_buffer_free(bufs[j]);
            }
            free(sizes);
            free(bufs);
            return NULL;
        }
    }

    // place the tensors in the same order the sizes were planned in
    size_t bi = 0;
    struct ggml_tallocr talloc = ggml_tallocr_new(bufs[0]);
    const size_t alignment = ggml_backend_buft_get_alignment(buft);
    size_t used = 0;
    bool failed = false;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL && !failed; t = ggml_get_next_tensor(ctx, t)) {
        if (!ctx_tensor_needs_memory(t)) {
            continue;
        }
        const size_t size = align_up(ggml_backend_buft_get_alloc_size(buft, t), alignment);
        if (used + size > sizes[bi]) {
            bi++;
            used = 0;
            talloc = ggml_tallocr_new(bufs[bi]);
        }
        failed = ggml_tallocr_alloc(&talloc, t) != GGML_STATUS_SUCCESS;
        used += size;
    }
    // views of tensors that now have memory
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL && !failed; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL && t->buffer == NULL && t->view_src->buffer != NULL) {
            failed = ggml_backend_view_init(t) != GGML_STATUS_SUCCESS;
        }
    }
    free(sizes);
    if (failed) {
        // leave the context as it was: no tensor may point into the buffers freed below
        for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
            for (size_t i = 0; i < n_bufs; i++) {
                if (t->buffer == bufs[i]) {
                    t->buffer = NULL;
                    t->data   = NULL;
                }
            }
        }
        for (size_t i = 0; i < n_bufs; i++) {
            ggml_backend_buffer_free(bufs[i]);
        }
        free(bufs);
        return NULL;
    }
    ggml_backend_buffer_t result = n_bufs == 1 ? bufs[0] : ggml_backend_multi_buffer_alloc_buffer(bufs, n_bufs);
    free(bufs);
    return result;
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t backend) {
    return ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_get_default_buffer_type(backend));
}

//
// pointer map (declared in ggml-backend-impl.h)
//

static size_t ptr_map_cap_for(size_t n_keys) {
    // at most half full: short probe sequences
    size_t cap = 16;
    while (cap < 2 * n_keys) {
        cap *= 2;
    }
    return cap;
}

static int ptr_map_shift_for(size_t cap) {
    int bits = 0;
    while (((size_t) 1 << bits) < cap) {
        bits++;
    }
    return 64 - bits;
}

bool ggml_ptr_map_init(struct ggml_ptr_map * m, size_t n_keys) {
    memset(m, 0, sizeof(*m));
    const size_t cap = ptr_map_cap_for(n_keys);
    m->keys = calloc(cap, sizeof(m->keys[0]));
    m->used = malloc(cap * sizeof(m->used[0]));
    if (m->keys == NULL || m->used == NULL) {
        ggml_ptr_map_free(m);
        return false;
    }
    m->cap   = cap;
    m->shift = ptr_map_shift_for(cap);
    return true;
}

void ggml_ptr_map_free(struct ggml_ptr_map * m) {
    free(m->keys);
    free(m->used);
    memset(m, 0, sizeof(*m));
}

void ggml_ptr_map_clear(struct ggml_ptr_map * m) {
    for (size_t k = 0; k < m->n; k++) {
        m->keys[m->used[k]] = NULL;
    }
    m->n = 0;
}

size_t ggml_ptr_map_insert(struct ggml_ptr_map * m, const void * p) {
    const size_t i = ggml_ptr_map_find(m, p);
    if (m->keys[i] == NULL) {
        GGML_ASSERT(2 * (m->n + 1) <= m->cap); // callers reserve before inserting
        m->keys[i] = p;
        m->used[m->n++] = i;
    }
    return i;
}

bool ggml_ptr_map_reserve(struct ggml_ptr_map * m, size_t more, void ** values, size_t value_size) {
    if (2 * (m->n + more) <= m->cap) {
        return true;
    }
    struct ggml_ptr_map grown;
    if (!ggml_ptr_map_init(&grown, m->n + more)) {
        return false;
    }
    char * new_values = NULL;
    if (values != NULL) {
        new_values = calloc(grown.cap, value_size);
        if (new_values == NULL) {
            ggml_ptr_map_free(&grown);
            return false;
        }
    }
    for (size_t k = 0; k < m->n; k++) {
        const size_t old_slot = m->used[k];
        const size_t new_slot = ggml_ptr_map_insert(&grown, m->keys[old_slot]);
        if (values != NULL) {
            memcpy(new_values + new_slot * value_size, (char *) *values + old_slot * value_size, value_size);
        }
    }
    ggml_ptr_map_free(m);
    *m = grown;
    if (values != NULL) {
        free(*values);
        *values = new_values;
    }
    return true;
}
