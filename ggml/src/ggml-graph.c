// Computation graphs: creation inside a context, forward expansion (topological order, use counts,
// the compute flag for ggml_build_forward_select), copies, views, lookups and the reset of the gradients
// (the backward pass itself is ggml-backward.c).

#include "ggml-graph.h"
#include "ggml-backend.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

// ---- hash set --------------------------------------------------------------------------------------------

static bool is_prime(size_t n) {
    if (n < 2) {
        return false;
    }
    for (size_t d = 2; d * d <= n; d++) {
        if (n % d == 0) {
            return false;
        }
    }
    return true;
}

size_t ggml_hash_size(size_t min_sz) {
    // a prime modulus spreads the (aligned) pointer keys over all slots
    size_t n = min_sz < 2 ? 2 : min_sz;
    while (!is_prime(n)) {
        n++;
    }
    return n;
}

struct ggml_hash_set ggml_hash_set_new(size_t size) {
    struct ggml_hash_set result;
    result.size = ggml_hash_size(size);
    result.keys = malloc(sizeof(struct ggml_tensor *) * result.size);
    result.used = calloc(ggml_bitset_size(result.size), sizeof(ggml_bitset_t));
    if (result.keys == NULL || result.used == NULL) {
        GGML_LOG_ERROR("%s: out of memory for a hash set of %zu slots\n", __func__, result.size);
        free(result.keys);
        free(result.used);
        result.keys = NULL;
        result.used = NULL;
        result.size = 0;
    }
    return result;
}

void ggml_hash_set_reset(struct ggml_hash_set * hash_set) {
    if (hash_set->used) {
        memset(hash_set->used, 0, sizeof(ggml_bitset_t) * ggml_bitset_size(hash_set->size));
    }
}

void ggml_hash_set_free(struct ggml_hash_set * hash_set) {
    free(hash_set->used);
    free(hash_set->keys);
    hash_set->used = NULL;
    hash_set->keys = NULL;
    hash_set->size = 0;
}

// ---- graph memory ----------------------------------------------------------------------------------------

static size_t graph_nbytes(size_t size, bool grads) {
    const size_t hash_size = ggml_hash_size(size * 2);
    size_t nbytes = sizeof(struct ggml_cgraph);
    nbytes += size * sizeof(struct ggml_tensor *) * 2;      // nodes + leafs
    nbytes += hash_size * sizeof(int32_t);                  // use_counts
    nbytes += hash_size * sizeof(struct ggml_tensor *);     // hash keys
    if (grads) {
        nbytes += hash_size * sizeof(struct ggml_tensor *) * 2; // grads + grad_accs, indexed by hash slot
    }
    nbytes += ggml_bitset_size(hash_size) * sizeof(ggml_bitset_t);
    return nbytes;
}

size_t ggml_graph_overhead_custom(size_t size, bool grads) {
    return ggml_tensor_overhead() - sizeof(struct ggml_tensor) + GGML_PAD(graph_nbytes(size, grads), GGML_MEM_ALIGN);
}

size_t ggml_graph_overhead(void) {
    return ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, false);
}

struct ggml_cgraph * ggml_new_graph_custom(struct ggml_context * ctx, size_t size, bool grads) {
    if (size == 0 || size > (size_t) INT32_MAX / 4) {
        GGML_LOG_ERROR("%s: invalid graph size %zu\n", __func__, size);
        return NULL;
    }
    const size_t nbytes = graph_nbytes(size, grads);
    void * mem = ggml_new_object_payload(ctx, GGML_OBJECT_TYPE_GRAPH, nbytes);
    if (mem == NULL) {
        return NULL;
    }
    struct ggml_cgraph * cgraph = (struct ggml_cgraph *) mem;
    const size_t hash_size = ggml_hash_size(size * 2);

    // pointer arrays first (8-byte aligned), then the 4-byte arrays
    struct ggml_tensor ** p = (struct ggml_tensor **) (cgraph + 1);
    struct ggml_tensor ** nodes_ptr     = p; p += size;
    struct ggml_tensor ** leafs_ptr     = p; p += size;
    struct ggml_tensor ** hash_keys_ptr = p; p += hash_size;
    struct ggml_tensor ** grads_ptr     = grads ? p : NULL; p += grads ? hash_size : 0;
    struct ggml_tensor ** grad_accs_ptr = grads ? p : NULL; p += grads ? hash_size : 0;
    int32_t * use_counts_ptr = (int32_t *) p;
    ggml_bitset_t * hash_used = (ggml_bitset_t *) (use_counts_ptr + hash_size);

    *cgraph = (struct ggml_cgraph) {
        .size             = (int) size,
        .n_nodes          = 0,
        .n_leafs          = 0,
        .nodes            = nodes_ptr,
        .grads            = grads_ptr,
        .grad_accs        = grad_accs_ptr,
        .leafs            = leafs_ptr,
        .use_counts       = use_counts_ptr,
        .visited_hash_set = { hash_size, hash_used, hash_keys_ptr },
        .order            = GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT,
    };
    ggml_hash_set_reset(&cgraph->visited_hash_set);
    if (grads) {
        memset(cgraph->grads, 0, hash_size * sizeof(struct ggml_tensor *));
        memset(cgraph->grad_accs, 0, hash_size * sizeof(struct ggml_tensor *));
    }
    return cgraph;
}

struct ggml_cgraph * ggml_new_graph(struct ggml_context * ctx) {
    return ggml_new_graph_custom(ctx, GGML_DEFAULT_GRAPH_SIZE, false);
}

struct ggml_cgraph ggml_graph_view(struct ggml_cgraph * cgraph, int i0, int i1) {
    struct ggml_cgraph view = {
        .size             = 0,
        .n_nodes          = i1 - i0,
        .n_leafs          = 0,
        .nodes            = cgraph->nodes + i0,
        .grads            = NULL,
        .grad_accs        = NULL,
        .leafs            = NULL,
        .use_counts       = cgraph->use_counts,
        .visited_hash_set = { 0, NULL, NULL },
        .order            = cgraph->order,
    };
    return view;
}

// ---- expansion -------------------------------------------------------------------------------------------

struct visit_frame {
    struct ggml_tensor * t;
    struct ggml_tensor * pending; // the src being visited (its use is counted when it returns)
    int  next_src;
    bool is_new;                  // first visit: count uses and append t when its srcs are done
};

static void graph_append(struct ggml_cgraph * cgraph, struct ggml_tensor * t) {
    if (t->op == GGML_OP_NONE && !(t->flags & GGML_TENSOR_FLAG_PARAM)) {
        GGML_ASSERT(cgraph->n_leafs < cgraph->size);
        if (t->name[0] == '\0') {
            ggml_format_name(t, "leaf_%d", cgraph->n_leafs);
        }
        cgraph->leafs[cgraph->n_leafs++] = t;
    } else {
        GGML_ASSERT(cgraph->n_nodes < cgraph->size);
        if (t->name[0] == '\0') {
            ggml_format_name(t, "node_%d", cgraph->n_nodes);
        }
        cgraph->nodes[cgraph->n_nodes++] = t;
    }
}

// Depth-first, srcs before the node. An explicit stack: model graphs are shallow, but a long chain of ops
// (e.g. a sampler loop) must not overflow the C stack. A node visited earlier without the compute flag is
// walked again when compute is requested, only to propagate the flag (no new nodes, no new use counts).
static void graph_visit(struct ggml_cgraph * cgraph, struct ggml_tensor * root, bool compute) {
    size_t cap = 64;
    size_t n = 0;
    struct visit_frame * stack = malloc(cap * sizeof(*stack));
    GGML_ASSERT(stack != NULL);

    struct ggml_tensor * enter = root;
    while (true) {
        if (enter != NULL) {
            struct ggml_tensor * t = enter;
            enter = NULL;
            const bool was_compute = (t->flags & GGML_TENSOR_FLAG_COMPUTE) != 0;
            if (compute) {
                t->flags |= GGML_TENSOR_FLAG_COMPUTE;
            }
            const size_t slot = ggml_hash_insert(&cgraph->visited_hash_set, t);
            const bool is_new = slot != GGML_HASHSET_ALREADY_EXISTS;
            if (is_new) {
                cgraph->use_counts[slot] = 0;
            } else if (!compute || was_compute) {
                goto returned; // nothing to do below this node
            }
            if (n == cap) {
                cap *= 2;
                struct visit_frame * grown = realloc(stack, cap * sizeof(*stack));
                GGML_ASSERT(grown != NULL);
                stack = grown;
            }
            stack[n++] = (struct visit_frame) { t, NULL, 0, is_new };
        }
returned:
        if (n == 0) {
            break;
        }
        struct visit_frame * f = &stack[n - 1];
        if (f->pending != NULL) {
            if (f->is_new) {
                cgraph->use_counts[ggml_hash_find(&cgraph->visited_hash_set, f->pending)]++;
            }
            f->pending = NULL;
        }
        // next src in evaluation order
        while (f->next_src < GGML_MAX_SRC) {
            const int k = f->next_src++;
            const int i = cgraph->order == GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT ? k : (GGML_MAX_SRC - 1 - k);
            if (f->t->src[i] != NULL) {
                f->pending = f->t->src[i];
                enter = f->t->src[i];
                break;
            }
        }
        if (enter != NULL) {
            continue;
        }
        // all srcs done
        if (f->is_new) {
            graph_append(cgraph, f->t);
        }
        n--;
        goto returned;
    }
    free(stack);
}

static void build_forward_impl(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor, bool compute) {
    GGML_ASSERT(cgraph != NULL && tensor != NULL);
    GGML_ASSERT(cgraph->visited_hash_set.size > 0); // not a view
    graph_visit(cgraph, tensor, compute);
}

void ggml_build_forward_expand(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor) {
    build_forward_impl(cgraph, tensor, true);
}

struct ggml_tensor * ggml_build_forward_select(struct ggml_cgraph * cgraph, struct ggml_tensor ** tensors,
                                               int n_tensors, int idx) {
    GGML_ASSERT(idx >= 0 && idx < n_tensors);
    for (int i = 0; i < n_tensors; i++) {
        build_forward_impl(cgraph, tensors[i], i == idx);
    }
    return tensors[idx];
}

// ---- accessors -------------------------------------------------------------------------------------------

int ggml_graph_size(struct ggml_cgraph * cgraph) { return cgraph->size; }

struct ggml_tensor * ggml_graph_node(struct ggml_cgraph * cgraph, int i) {
    if (i < 0) {
        GGML_ASSERT(cgraph->n_nodes + i >= 0);
        return cgraph->nodes[cgraph->n_nodes + i];
    }
    GGML_ASSERT(i < cgraph->n_nodes);
    return cgraph->nodes[i];
}

struct ggml_tensor ** ggml_graph_nodes(struct ggml_cgraph * cgraph) { return cgraph->nodes; }
int ggml_graph_n_nodes(struct ggml_cgraph * cgraph) { return cgraph->n_nodes; }

void ggml_graph_add_node(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor) {
    GGML_ASSERT(cgraph->size > cgraph->n_nodes);
    // an explicitly added node is meant to run
    tensor->flags |= GGML_TENSOR_FLAG_COMPUTE;
    cgraph->nodes[cgraph->n_nodes++] = tensor;
}

struct ggml_tensor * ggml_graph_get_tensor(const struct ggml_cgraph * cgraph, const char * name) {
    for (int i = 0; i < cgraph->n_leafs; i++) {
        if (strcmp(cgraph->leafs[i]->name, name) == 0) {
            return cgraph->leafs[i];
        }
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        if (strcmp(cgraph->nodes[i]->name, name) == 0) {
            return cgraph->nodes[i];
        }
    }
    return NULL;
}

struct ggml_tensor * ggml_graph_get_grad(const struct ggml_cgraph * cgraph, const struct ggml_tensor * node) {
    if (cgraph->grads == NULL || cgraph->visited_hash_set.size == 0) {
        return NULL;
    }
    const size_t i = ggml_hash_find(&cgraph->visited_hash_set, node);
    return i != GGML_HASHSET_FULL && ggml_bitset_get(cgraph->visited_hash_set.used, i) ? cgraph->grads[i] : NULL;
}

struct ggml_tensor * ggml_graph_get_grad_acc(const struct ggml_cgraph * cgraph, const struct ggml_tensor * node) {
    if (cgraph->grad_accs == NULL || cgraph->visited_hash_set.size == 0) {
        return NULL;
    }
    const size_t i = ggml_hash_find(&cgraph->visited_hash_set, node);
    return i != GGML_HASHSET_FULL && ggml_bitset_get(cgraph->visited_hash_set.used, i) ? cgraph->grad_accs[i] : NULL;
}

// ---- copies ----------------------------------------------------------------------------------------------

void ggml_graph_cpy(struct ggml_cgraph * src, struct ggml_cgraph * dst) {
    GGML_ASSERT(dst->size >= src->n_leafs);
    GGML_ASSERT(dst->size >= src->n_nodes);
    GGML_ASSERT(dst->visited_hash_set.size >= src->visited_hash_set.size);

    dst->n_leafs = src->n_leafs;
    dst->n_nodes = src->n_nodes;
    dst->order   = src->order;
    memcpy(dst->leafs, src->leafs, sizeof(struct ggml_tensor *) * (size_t) src->n_leafs);
    memcpy(dst->nodes, src->nodes, sizeof(struct ggml_tensor *) * (size_t) src->n_nodes);

    ggml_hash_set_reset(&dst->visited_hash_set);
    if (dst->grads) {
        memset(dst->grads, 0, dst->visited_hash_set.size * sizeof(struct ggml_tensor *));
        memset(dst->grad_accs, 0, dst->visited_hash_set.size * sizeof(struct ggml_tensor *));
    }
    for (size_t i = 0; i < src->visited_hash_set.size; ++i) {
        if (ggml_bitset_get(src->visited_hash_set.used, i)) {
            const size_t j = ggml_hash_insert(&dst->visited_hash_set, src->visited_hash_set.keys[i]);
            dst->use_counts[j] = src->use_counts[i];
            if (src->grads && dst->grads) {
                dst->grads[j]     = src->grads[i];
                dst->grad_accs[j] = src->grad_accs[i];
            }
        }
    }
}

struct ggml_cgraph * ggml_graph_dup(struct ggml_context * ctx, struct ggml_cgraph * cgraph, bool force_grads) {
    struct ggml_cgraph * result = ggml_new_graph_custom(ctx, (size_t) cgraph->size, cgraph->grads != NULL || force_grads);
    if (result == NULL) {
        return NULL;
    }
    ggml_graph_cpy(cgraph, result);
    return result;
}

// zeroes a host or backend tensor (value 0), or sets the F32 scalar t to value
static void graph_fill_f32(struct ggml_tensor * t, float value) {
    if (value == 0.0f) {
        if (t->buffer) {
            ggml_backend_tensor_memset(t, 0, 0, ggml_nbytes(t));
        } else {
            ggml_set_zero(t);
        }
        return;
    }
    GGML_ASSERT(t->type == GGML_TYPE_F32 && ggml_is_scalar(t));
    if (t->buffer) {
        ggml_backend_tensor_set(t, &value, 0, sizeof(float));
    } else {
        GGML_ASSERT(t->data != NULL);
        *(float *) t->data = value;
    }
}

// Before a backward pass: the gradient accumulators are zeroed, except the loss's, which is set to 1 (d loss /
// d loss), and the AdamW moments start again from zero (as llama.cpp).
void ggml_graph_reset(struct ggml_cgraph * cgraph) {
    if (cgraph == NULL) {
        return;
    }
    GGML_ASSERT(cgraph->grads != NULL && "ggml_graph_reset: the graph has no gradients");
    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct ggml_tensor * node = cgraph->nodes[i];
        if (node->op == GGML_OP_OPT_STEP_ADAMW) {
            graph_fill_f32(node->src[2], 0.0f);
            graph_fill_f32(node->src[3], 0.0f);
        }
        struct ggml_tensor * grad_acc = ggml_graph_get_grad_acc(cgraph, node);
        if (grad_acc) {
            graph_fill_f32(grad_acc, (node->flags & GGML_TENSOR_FLAG_LOSS) ? 1.0f : 0.0f);
        }
    }
}

void ggml_graph_clear(struct ggml_cgraph * cgraph) {
    cgraph->n_leafs = 0;
    cgraph->n_nodes = 0;
    ggml_hash_set_reset(&cgraph->visited_hash_set);
}

void ggml_graph_print(const struct ggml_cgraph * cgraph) {
    GGML_LOG_INFO("=== GRAPH ===\n");
    GGML_LOG_INFO("n_nodes = %d\n", cgraph->n_nodes);
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor * node = cgraph->nodes[i];
        GGML_LOG_INFO(" - %3d: [ %5" PRId64 ", %5" PRId64 ", %5" PRId64 ", %5" PRId64 "] %16s %s\n", i, node->ne[0],
                      node->ne[1], node->ne[2], node->ne[3], ggml_op_desc(node), node->name);
    }
    GGML_LOG_INFO("n_leafs = %d\n", cgraph->n_leafs);
    for (int i = 0; i < cgraph->n_leafs; i++) {
        const struct ggml_tensor * node = cgraph->leafs[i];
        GGML_LOG_INFO(" - %3d: [ %5" PRId64 ", %5" PRId64 "] %8s %16s\n", i, node->ne[0], node->ne[1],
                      ggml_op_name(node->op), node->name);
    }
    GGML_LOG_INFO("========================================\n");
}
