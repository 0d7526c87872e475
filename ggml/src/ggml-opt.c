// ggml-opt optimization context: around a user's forward graph (inputs -> outputs) it appends the loss (and
// for cross-entropy the predictions and the count of correct ones), builds the gradient graph (forward +
// backward, gradients of the parameters accumulated in place over opt_period micro-batches) and the optimizer
// graph (the gradient graph + one AdamW or SGD step per parameter), allocates the chosen one with the backend
// scheduler and runs it.
//
// Static graphs (ctx_compute/inputs/outputs given to ggml_opt_init): the three graphs are built once; each
// allocation works on a deep copy, so that switching between them starts from unallocated tensors. Otherwise
// the caller hands a fresh forward graph to ggml_opt_prepare_alloc before every ggml_opt_alloc and the graphs
// are rebuilt around it; persistent state (gradient accumulators, the loss seed, AdamW moments) lives in
// ctx_static and is matched to the forward graph by node index, so every rebuilt graph must have the same
// nodes (llama's graph for a fixed ubatch size does).

#include "ggml-opt-impl.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ggml_opt_context {
    ggml_backend_sched_t  backend_sched;
    struct ggml_cgraph  * allocated_graph;      // the graph (gf, gb_grad or gb_opt) last allocated
    struct ggml_cgraph  * allocated_graph_copy; // what was allocated: a copy for static graphs
    struct ggml_context * ctx_static;           // gradient accumulators, moments (+ results for static graphs)
    struct ggml_context * ctx_cpu;              // optimizer step parameters
    struct ggml_context * ctx_compute;
    struct ggml_context * ctx_copy;
    ggml_backend_buffer_t buf_static;
    ggml_backend_buffer_t buf_cpu;
    uint64_t              rng;

    enum ggml_opt_loss_type  loss_type;
    enum ggml_opt_build_type build_type;       // what the next eval runs
    enum ggml_opt_build_type build_type_alloc; // the most the context was set up for

    struct ggml_tensor * inputs;
    struct ggml_tensor * outputs;
    struct ggml_tensor * labels;
    struct ggml_tensor * loss;
    struct ggml_tensor * pred;
    struct ggml_tensor * ncorrect;

    struct ggml_cgraph * gf;
    struct ggml_cgraph * gb_grad;
    struct ggml_cgraph * gb_opt;
    bool static_graphs;
    bool eval_ready;

    // indexed like the nodes of the forward graph (loss included); NULL where a node has none
    int                   n_acc;
    struct ggml_tensor *  loss_acc; // d loss / d loss, kept at 1
    struct ggml_tensor ** grad_accs;
    struct ggml_tensor ** grad_m;
    struct ggml_tensor ** grad_v;

    int64_t iter;       // optimizer steps done + 1 (AdamW bias correction)
    int32_t opt_period;
    int32_t opt_i;      // micro-batches accumulated in the current window
    bool    loss_per_datapoint;

    ggml_opt_get_optimizer_params get_opt_pars;
    void                        * get_opt_pars_ud;
    struct ggml_tensor          * opt_step_params; // F32 [7] for AdamW, [2] for SGD

    enum ggml_opt_optimizer_type optimizer;
};

uint64_t ggml_opt_rng_next(ggml_opt_context_t opt_ctx) {
    // splitmix64: small state, good enough to shuffle shards
    uint64_t z = (opt_ctx->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// ====== optimizer parameters ======

struct ggml_opt_optimizer_params ggml_opt_get_default_optimizer_params(void * userdata) {
    GGML_UNUSED(userdata);
    struct ggml_opt_optimizer_params p;
    p.adamw.alpha = 0.001f;
    p.adamw.beta1 = 0.9f;
    p.adamw.beta2 = 0.999f;
    p.adamw.eps   = 1e-8f;
    p.adamw.wd    = 0.0f;
    p.adamw.gclip = 0.0f;
    p.sgd.alpha   = 1e-3f;
    p.sgd.wd      = 0.0f;
    return p;
}

struct ggml_opt_optimizer_params ggml_opt_get_constant_optimizer_params(void * userdata) {
    return *(struct ggml_opt_optimizer_params *) userdata;
}

struct ggml_opt_params ggml_opt_default_params(ggml_backend_sched_t backend_sched, enum ggml_opt_loss_type loss_type) {
    struct ggml_opt_params p;
    memset(&p, 0, sizeof(p));
    p.backend_sched   = backend_sched;
    p.ctx_compute     = NULL;
    p.inputs          = NULL;
    p.outputs         = NULL;
    p.loss_type       = loss_type;
    p.build_type      = GGML_OPT_BUILD_TYPE_OPT;
    p.opt_period      = 1;
    p.get_opt_pars    = ggml_opt_get_default_optimizer_params;
    p.get_opt_pars_ud = NULL;
    p.optimizer       = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    return p;
}

const char * ggml_opt_optimizer_name(enum ggml_opt_optimizer_type type) {
    switch (type) {
        case GGML_OPT_OPTIMIZER_TYPE_ADAMW: return "adamw";
        case GGML_OPT_OPTIMIZER_TYPE_SGD:   return "sgd";
        default:                            return "undefined";
    }
}

// ====== graph copies (static graphs) ======

// tensor -> copy map over a hash set (the copies sit in vals at the key's slot)
struct tensor_map {
    struct ggml_hash_set  set;
    struct ggml_tensor ** vals;
};

static struct ggml_tensor * map_tensor(struct tensor_map * map, struct ggml_context * ctx, struct ggml_tensor * t) {
    if (t == NULL) {
        return NULL;
    }
    const size_t i = ggml_hash_find(&map->set, t);
    GGML_ASSERT(i != GGML_HASHSET_FULL);
    if (ggml_bitset_get(map->set.used, i)) {
        return map->vals[i];
    }
    struct ggml_tensor * c = ggml_dup_tensor(ctx, t);
    ggml_hash_insert(&map->set, t);
    map->vals[i] = c;

    c->op = t->op;
    memcpy(c->nb, t->nb, sizeof(c->nb));
    c->flags = t->flags;
    memcpy(c->op_params, t->op_params, sizeof(c->op_params));
    memcpy(c->name, t->name, sizeof(c->name));
    c->data      = t->data;
    c->buffer    = t->buffer;
    c->extra     = t->extra;
    c->view_offs = t->view_offs;
    c->view_src  = map_tensor(map, ctx, t->view_src);
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        c->src[j] = map_tensor(map, ctx, t->src[j]);
    }
    return c;
}

// a copy of src whose tensors are fresh (unallocated unless the original had static memory)
static struct ggml_cgraph * dup_graph(struct ggml_context * ctx, struct ggml_cgraph * src) {
    struct tensor_map map;
    map.set  = ggml_hash_set_new(2 * src->visited_hash_set.size + 1);
    map.vals = calloc(map.set.size, sizeof(struct ggml_tensor *));
    GGML_ASSERT(map.set.keys != NULL && map.vals != NULL);

    struct ggml_cgraph * dst = ggml_new_graph_custom(ctx, (size_t) src->size, false);
    GGML_ASSERT(dst != NULL);
    for (int i = 0; i < src->n_leafs; i++) {
        ggml_build_forward_expand(dst, map_tensor(&map, ctx, src->leafs[i]));
    }
    for (int i = 0; i < src->n_nodes; i++) {
        ggml_build_forward_expand(dst, map_tensor(&map, ctx, src->nodes[i]));
    }
    GGML_ASSERT(dst->n_nodes == src->n_nodes);

    ggml_hash_set_free(&map.set);
    free(map.vals);
    return dst;
}

// ====== persistent state ======

// zeroes the parameter gradient accumulators (not the loss seed)
static void zero_param_grads(ggml_opt_context_t opt_ctx) {
    if (opt_ctx->buf_static == NULL) {
        return;
    }
    for (int i = 0; i < opt_ctx->n_acc; i++) {
        struct ggml_tensor * acc = opt_ctx->grad_accs[i];
        if (acc && acc != opt_ctx->loss_acc) {
            ggml_backend_tensor_memset(acc, 0, 0, ggml_nbytes(acc));
        }
    }
}

// after allocating ctx_static: everything 0, the loss seeds d loss / d loss = 1
static void init_static_state(ggml_opt_context_t opt_ctx) {
    ggml_backend_buffer_clear(opt_ctx->buf_static, 0);
    if (opt_ctx->loss_acc) {
        const float one = 1.0f;
        ggml_backend_tensor_set(opt_ctx->loss_acc, &one, 0, sizeof(float));
    }
}

static void alloc_static(ggml_opt_context_t opt_ctx) {
    if (ggml_get_first_tensor(opt_ctx->ctx_static) == NULL) {
        return; // nothing to keep (forward only, results in ctx_compute)
    }
    opt_ctx->buf_static = ggml_backend_alloc_ctx_tensors(opt_ctx->ctx_static,
                                                         ggml_backend_sched_get_backend(opt_ctx->backend_sched, 0));
    GGML_ASSERT(opt_ctx->buf_static != NULL && "ggml_opt: failed to allocate the static tensors");
    init_static_state(opt_ctx);
}

// ====== building the graphs ======

static void build_loss(ggml_opt_context_t opt_ctx, struct ggml_context * ctx) {
    struct ggml_tensor * out    = opt_ctx->outputs;
    const float          period = (float) opt_ctx->opt_period;
    switch (opt_ctx->loss_type) {
        case GGML_OPT_LOSS_TYPE_MEAN: {
            struct ggml_tensor * sum = ggml_sum(ctx, out);
            ggml_set_name(sum, "loss_sum");
            opt_ctx->loss = ggml_scale(ctx, sum, 1.0f / (period * (float) ggml_nelements(out)));
            ggml_set_name(opt_ctx->loss, "loss_mean");
            opt_ctx->loss_per_datapoint = true;
        } break;
        case GGML_OPT_LOSS_TYPE_SUM: {
            opt_ctx->loss = ggml_sum(ctx, out);
            ggml_set_name(opt_ctx->loss, "loss_sum");
            opt_ctx->loss_per_datapoint = false;
        } break;
        case GGML_OPT_LOSS_TYPE_CROSS_ENTROPY: {
            opt_ctx->labels = ggml_dup_tensor(ctx, out);
            ggml_set_input(opt_ctx->labels);
            ggml_set_name(opt_ctx->labels, "labels");
            opt_ctx->loss = ggml_cross_entropy_loss(ctx, out, opt_ctx->labels);
            ggml_set_name(opt_ctx->loss, "loss_cross_entropy");
            if (opt_ctx->opt_period > 1) {
                opt_ctx->loss = ggml_scale(ctx, opt_ctx->loss, 1.0f / period);
                ggml_set_name(opt_ctx->loss, "loss_cross_entropy_scaled");
            }
            opt_ctx->loss_per_datapoint = true;
        } break;
        case GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR: {
            opt_ctx->labels = ggml_dup_tensor(ctx, out);
            ggml_set_input(opt_ctx->labels);
            ggml_set_name(opt_ctx->labels, "labels");
            struct ggml_tensor * err = ggml_sub(ctx, out, opt_ctx->labels);
            ggml_set_name(err, "loss_error");
            struct ggml_tensor * sq = ggml_sqr(ctx, err);
            ggml_set_name(sq, "loss_squared_error");
            struct ggml_tensor * sum = ggml_sum(ctx, sq);
            ggml_set_name(sum, "loss_sum_squared_error");
            opt_ctx->loss = ggml_scale(ctx, sum, 1.0f / (period * (float) ggml_nelements(out)));
            ggml_set_name(opt_ctx->loss, "loss_mean_squared_error");
            opt_ctx->loss_per_datapoint = true;
        } break;
    }
    ggml_set_output(opt_ctx->loss);
    ggml_set_loss(opt_ctx->loss);
    ggml_build_forward_expand(opt_ctx->gf, opt_ctx->loss);

    if (opt_ctx->loss_type == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY) {
        opt_ctx->pred = ggml_argmax(ctx, out);
        ggml_set_name(opt_ctx->pred, "pred");
        ggml_set_output(opt_ctx->pred);
        ggml_build_forward_expand(opt_ctx->gf, opt_ctx->pred);

        opt_ctx->ncorrect = ggml_count_equal(ctx, opt_ctx->pred, ggml_argmax(ctx, opt_ctx->labels));
        ggml_set_name(opt_ctx->ncorrect, "ncorrect");
        ggml_set_output(opt_ctx->ncorrect);
        ggml_build_forward_expand(opt_ctx->gf, opt_ctx->ncorrect);
    } else {
        opt_ctx->pred     = NULL;
        opt_ctx->ncorrect = NULL;
    }
}

// the gradient accumulators and moments, made on the first build (in ctx_static, matched by node index)
static void make_persistent_tensors(ggml_opt_context_t opt_ctx, bool accumulate, bool need_momenta) {
    struct ggml_cgraph * gf = opt_ctx->gf;
    if (opt_ctx->grad_accs != NULL) {
        GGML_ASSERT(gf->n_nodes == opt_ctx->n_acc && "ggml_opt: the forward graph changed between evaluations");
        return;
    }
    opt_ctx->n_acc     = gf->n_nodes;
    opt_ctx->grad_accs = calloc((size_t) gf->n_nodes, sizeof(struct ggml_tensor *));
    opt_ctx->grad_m    = calloc((size_t) gf->n_nodes, sizeof(struct ggml_tensor *));
    opt_ctx->grad_v    = calloc((size_t) gf->n_nodes, sizeof(struct ggml_tensor *));
    GGML_ASSERT(opt_ctx->grad_accs && opt_ctx->grad_m && opt_ctx->grad_v);
    for (int i = 0; i < gf->n_nodes; i++) {
        struct ggml_tensor * node = gf->nodes[i];
        const bool param = (node->flags & GGML_TENSOR_FLAG_PARAM) != 0;
        if ((accumulate && param) || (node->flags & GGML_TENSOR_FLAG_LOSS)) {
            opt_ctx->grad_accs[i] = ggml_new_tensor(opt_ctx->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            ggml_format_name(opt_ctx->grad_accs[i], "grad_acc for %s", node->name);
            if (node->flags & GGML_TENSOR_FLAG_LOSS) {
                opt_ctx->loss_acc = opt_ctx->grad_accs[i];
            }
        }
        if (need_momenta && param) {
            opt_ctx->grad_m[i] = ggml_new_tensor(opt_ctx->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            opt_ctx->grad_v[i] = ggml_new_tensor(opt_ctx->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            ggml_format_name(opt_ctx->grad_m[i], "AdamW m for %s", node->name);
            ggml_format_name(opt_ctx->grad_v[i], "AdamW v for %s", node->name);
        }
    }
}

// the optimizer step parameters (F32 [n]): a small CPU tensor in its own buffer, made on the first build of the
// optimizer graph and kept by the later (non-static) rebuilds; remade only if n changes. set_step_params writes it
// before every step.
static struct ggml_tensor * get_step_params(ggml_opt_context_t opt_ctx, int64_t n) {
    if (opt_ctx->opt_step_params != NULL && opt_ctx->opt_step_params->ne[0] == n) {
        return opt_ctx->opt_step_params;
    }
    if (opt_ctx->buf_cpu) {
        ggml_backend_buffer_free(opt_ctx->buf_cpu);
        opt_ctx->buf_cpu = NULL;
    }
    ggml_free(opt_ctx->ctx_cpu);
    struct ggml_init_params ip = { ggml_tensor_overhead(), NULL, true };
    opt_ctx->ctx_cpu = ggml_init(ip);
    GGML_ASSERT(opt_ctx->ctx_cpu != NULL);
    opt_ctx->opt_step_params = ggml_new_tensor_1d(opt_ctx->ctx_cpu, GGML_TYPE_F32, n);
    ggml_set_input(opt_ctx->opt_step_params);
    ggml_format_name(opt_ctx->opt_step_params, "%s_params", ggml_opt_optimizer_name(opt_ctx->optimizer));
    opt_ctx->buf_cpu = ggml_backend_alloc_ctx_tensors_from_buft(opt_ctx->ctx_cpu, ggml_backend_cpu_buffer_type());
    GGML_ASSERT(opt_ctx->buf_cpu != NULL);
    return opt_ctx->opt_step_params;
}

static void ggml_opt_build(ggml_opt_context_t opt_ctx) {
    GGML_ASSERT(opt_ctx->ctx_compute && "no compute context: use static graphs or ggml_opt_prepare_alloc");
    GGML_ASSERT((!opt_ctx->static_graphs || opt_ctx->inputs->data) && "static graphs need statically allocated inputs");

    const bool accumulate = opt_ctx->build_type_alloc >= GGML_OPT_BUILD_TYPE_GRAD &&
        !(opt_ctx->static_graphs && opt_ctx->build_type_alloc == GGML_OPT_BUILD_TYPE_OPT && opt_ctx->opt_period == 1);
    const bool need_momenta = opt_ctx->build_type_alloc == GGML_OPT_BUILD_TYPE_OPT &&
        opt_ctx->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW;

    ggml_set_input(opt_ctx->inputs);
    ggml_set_output(opt_ctx->outputs);

    int n_param = 0;
    for (int i = 0; i < opt_ctx->gf->n_nodes; i++) {
        const struct ggml_tensor * node = opt_ctx->gf->nodes[i];
        n_param += (node->flags & GGML_TENSOR_FLAG_PARAM) != 0;
        GGML_ASSERT(!(node->flags & GGML_TENSOR_FLAG_LOSS) && "ggml_opt: extra loss terms are not supported");
    }

    if (opt_ctx->ctx_static == NULL) {
        // one gradient for the loss, per parameter an accumulator and two moments, the results if static
        const size_t per_param = (accumulate ? 1 : 0) + (need_momenta ? 2 : 0);
        const size_t n_results = opt_ctx->static_graphs ? 9 : 0;
        struct ggml_init_params ip = { (1 + per_param * (size_t) n_param + n_results) * ggml_tensor_overhead(), NULL, true };
        opt_ctx->ctx_static = ggml_init(ip);
        GGML_ASSERT(opt_ctx->ctx_static != NULL);
    }

    struct ggml_context * ctx_results = opt_ctx->static_graphs ? opt_ctx->ctx_static : opt_ctx->ctx_compute;
    build_loss(opt_ctx, ctx_results);

    opt_ctx->gb_grad = NULL;
    opt_ctx->gb_opt  = NULL;
    if (opt_ctx->build_type_alloc == GGML_OPT_BUILD_TYPE_FORWARD) {
        if (opt_ctx->buf_static == NULL) {
            alloc_static(opt_ctx);
        }
        return;
    }
    // a non-static rebuild only needs as much as the next eval runs
    if (!opt_ctx->static_graphs && opt_ctx->build_type == GGML_OPT_BUILD_TYPE_FORWARD && opt_ctx->buf_static != NULL) {
        return;
    }

    make_persistent_tensors(opt_ctx, accumulate, need_momenta);

    // gb_grad: forward pass, then backward pass computing the gradients
    opt_ctx->gb_grad = ggml_graph_dup(opt_ctx->ctx_compute, opt_ctx->gf, true);
    GGML_ASSERT(opt_ctx->gb_grad != NULL && "ggml_opt: no room for the gradient graph in ctx_compute");
    ggml_build_backward_expand(opt_ctx->ctx_compute, opt_ctx->gb_grad, opt_ctx->grad_accs);

    if (opt_ctx->build_type_alloc == GGML_OPT_BUILD_TYPE_GRAD ||
        (!opt_ctx->static_graphs && opt_ctx->build_type == GGML_OPT_BUILD_TYPE_GRAD && opt_ctx->buf_static != NULL)) {
        if (opt_ctx->buf_static == NULL) {
            alloc_static(opt_ctx);
        }
        return;
    }

    // gb_opt: gb_grad, then one optimizer step per parameter (in reverse order, as the gradients appear)
    opt_ctx->gb_opt = ggml_graph_dup(opt_ctx->ctx_compute, opt_ctx->gb_grad, true);
    GGML_ASSERT(opt_ctx->gb_opt != NULL && "ggml_opt: no room for the optimizer graph in ctx_compute");
    struct ggml_tensor * step_params = get_step_params(opt_ctx, need_momenta ? 7 : 2);
    for (int i = opt_ctx->gf->n_nodes - 1; i >= 0; i--) {
        struct ggml_tensor * node = opt_ctx->gb_opt->nodes[i];
        struct ggml_tensor * grad = ggml_graph_get_grad(opt_ctx->gb_opt, node);
        if (grad == NULL || !(node->flags & GGML_TENSOR_FLAG_PARAM)) {
            continue;
        }
        struct ggml_tensor * step;
        if (opt_ctx->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW) {
            step = ggml_opt_step_adamw(opt_ctx->ctx_compute, node, grad, opt_ctx->grad_m[i], opt_ctx->grad_v[i],
                                       step_params);
        } else {
            step = ggml_opt_step_sgd(opt_ctx->ctx_compute, node, grad, step_params);
        }
        ggml_format_name(step, "%s step for %s", ggml_opt_optimizer_name(opt_ctx->optimizer), node->name);
        ggml_build_forward_expand(opt_ctx->gb_opt, step);
    }

    if (opt_ctx->buf_static == NULL) {
        alloc_static(opt_ctx);
    }
}

// ====== context ======

ggml_opt_context_t ggml_opt_init(struct ggml_opt_params params) {
    if (params.backend_sched == NULL || params.opt_period < 1 ||
        (params.optimizer != GGML_OPT_OPTIMIZER_TYPE_ADAMW && params.optimizer != GGML_OPT_OPTIMIZER_TYPE_SGD) ||
        (params.build_type != GGML_OPT_BUILD_TYPE_FORWARD && params.build_type != GGML_OPT_BUILD_TYPE_GRAD &&
         params.build_type != GGML_OPT_BUILD_TYPE_OPT) ||
        (params.build_type == GGML_OPT_BUILD_TYPE_OPT && params.get_opt_pars == NULL) ||
        (params.ctx_compute != NULL && (params.inputs == NULL || params.outputs == NULL)) ||
        (params.ctx_compute == NULL && (params.inputs != NULL || params.outputs != NULL))) {
        GGML_LOG_ERROR("%s: invalid parameters (need a scheduler, opt_period >= 1, a known optimizer and build type, "
                       "an optimizer-parameter callback, and inputs+outputs exactly when ctx_compute is set)\n", __func__);
        return NULL;
    }

    ggml_opt_context_t opt_ctx = calloc(1, sizeof(*opt_ctx));
    if (opt_ctx == NULL) {
        return NULL;
    }
    opt_ctx->backend_sched    = params.backend_sched;
    opt_ctx->ctx_compute      = params.ctx_compute;
    opt_ctx->loss_type        = params.loss_type;
    opt_ctx->build_type       = params.build_type;
    opt_ctx->build_type_alloc = params.build_type;
    opt_ctx->inputs           = params.inputs;
    opt_ctx->outputs          = params.outputs;
    opt_ctx->opt_period       = params.opt_period;
    opt_ctx->get_opt_pars     = params.get_opt_pars;
    opt_ctx->get_opt_pars_ud  = params.get_opt_pars_ud;
    opt_ctx->optimizer        = params.optimizer;
    opt_ctx->iter             = 1;
    opt_ctx->rng              = 5489; // fixed: runs are reproducible
    opt_ctx->static_graphs    = params.ctx_compute != NULL;

    if (!opt_ctx->static_graphs) {
        return opt_ctx;
    }
    opt_ctx->gf = ggml_new_graph_custom(opt_ctx->ctx_compute, GGML_DEFAULT_GRAPH_SIZE, true);
    if (opt_ctx->gf == NULL) {
        GGML_LOG_ERROR("%s: no room for the forward graph in ctx_compute\n", __func__);
        free(opt_ctx);
        return NULL;
    }
    ggml_build_forward_expand(opt_ctx->gf, opt_ctx->outputs);
    ggml_opt_build(opt_ctx);
    return opt_ctx;
}

void ggml_opt_free(ggml_opt_context_t opt_ctx) {
    if (opt_ctx == NULL) {
        return;
    }
    if (opt_ctx->buf_static) {
        ggml_backend_buffer_free(opt_ctx->buf_static);
    }
    if (opt_ctx->buf_cpu) {
        ggml_backend_buffer_free(opt_ctx->buf_cpu);
    }
    ggml_free(opt_ctx->ctx_static);
    ggml_free(opt_ctx->ctx_cpu);
    ggml_free(opt_ctx->ctx_copy);
    free(opt_ctx->grad_accs);
    free(opt_ctx->grad_m);
    free(opt_ctx->grad_v);
    free(opt_ctx);
}

void ggml_opt_reset(ggml_opt_context_t opt_ctx, bool optimizer) {
    if (optimizer) {
        if (opt_ctx->buf_static) {
            init_static_state(opt_ctx); // gradients and moments to 0, the loss seed to 1
        }
        opt_ctx->iter = 1;
    } else {
        zero_param_grads(opt_ctx);
    }
    opt_ctx->opt_i = 0;
}

bool ggml_opt_static_graphs(ggml_opt_context_t opt_ctx) { return opt_ctx->static_graphs; }

struct ggml_tensor * ggml_opt_inputs  (ggml_opt_context_t opt_ctx) { return opt_ctx->inputs; }
struct ggml_tensor * ggml_opt_outputs (ggml_opt_context_t opt_ctx) { return opt_ctx->outputs; }
struct ggml_tensor * ggml_opt_labels  (ggml_opt_context_t opt_ctx) { return opt_ctx->labels; }
struct ggml_tensor * ggml_opt_loss    (ggml_opt_context_t opt_ctx) { return opt_ctx->loss; }
struct ggml_tensor * ggml_opt_pred    (ggml_opt_context_t opt_ctx) { return opt_ctx->pred; }
struct ggml_tensor * ggml_opt_ncorrect(ggml_opt_context_t opt_ctx) { return opt_ctx->ncorrect; }

struct ggml_tensor * ggml_opt_grad_acc(ggml_opt_context_t opt_ctx, struct ggml_tensor * node) {
    // the accumulators persist (ctx_static), whichever graph is current
    if (opt_ctx->gf != NULL && opt_ctx->grad_accs != NULL) {
        for (int i = 0; i < opt_ctx->n_acc && i < opt_ctx->gf->n_nodes; i++) {
            if (opt_ctx->gf->nodes[i] == node) {
                return opt_ctx->grad_accs[i];
            }
        }
    }
    struct ggml_cgraph * g = opt_ctx->gb_opt ? opt_ctx->gb_opt : opt_ctx->gb_grad;
    return g ? ggml_graph_get_grad_acc(g, node) : NULL;
}

enum ggml_opt_optimizer_type ggml_opt_context_optimizer_type(ggml_opt_context_t opt_ctx) { return opt_ctx->optimizer; }

// ====== computation ======

void ggml_opt_prepare_alloc(ggml_opt_context_t opt_ctx, struct ggml_context * ctx_compute, struct ggml_cgraph * gf,
                            struct ggml_tensor * inputs, struct ggml_tensor * outputs) {
    GGML_ASSERT(!opt_ctx->static_graphs && "ggml_opt_prepare_alloc is for contexts without static graphs");
    GGML_ASSERT(gf != NULL && inputs != NULL && outputs != NULL);
    opt_ctx->ctx_compute = ctx_compute;
    opt_ctx->gf          = gf;
    opt_ctx->inputs      = inputs;
    opt_ctx->outputs     = outputs;
}

void ggml_opt_alloc(ggml_opt_context_t opt_ctx, bool backward) {
    GGML_ASSERT(!opt_ctx->eval_ready && "ggml_opt_alloc called twice without ggml_opt_eval");

    if (backward) {
        GGML_ASSERT(opt_ctx->build_type_alloc >= GGML_OPT_BUILD_TYPE_GRAD && "this context was set up for forward only");
        // a new accumulation window starts from zero gradients
        if (opt_ctx->opt_i == 0) {
            zero_param_grads(opt_ctx);
        }
        const bool step = (opt_ctx->opt_i + 1) % opt_ctx->opt_period == 0 &&
                          opt_ctx->build_type_alloc == GGML_OPT_BUILD_TYPE_OPT;
        opt_ctx->build_type = step ? GGML_OPT_BUILD_TYPE_OPT : GGML_OPT_BUILD_TYPE_GRAD;
    } else {
        opt_ctx->build_type = GGML_OPT_BUILD_TYPE_FORWARD;
    }

    if (!opt_ctx->static_graphs) {
        GGML_ASSERT(opt_ctx->gf != NULL && "ggml_opt_prepare_alloc must come before ggml_opt_alloc");
        ggml_opt_build(opt_ctx);
    }

    struct ggml_cgraph * graph = NULL;
    switch (opt_ctx->build_type) {
        case GGML_OPT_BUILD_TYPE_FORWARD: graph = opt_ctx->gf;      break;
        case GGML_OPT_BUILD_TYPE_GRAD:    graph = opt_ctx->gb_grad; break;
        case GGML_OPT_BUILD_TYPE_OPT:     graph = opt_ctx->gb_opt;  break;
    }
    GGML_ASSERT(graph != NULL);

    if (opt_ctx->allocated_graph == graph) {
        opt_ctx->eval_ready = true;
        return;
    }

    ggml_backend_sched_reset(opt_ctx->backend_sched); // drop the previous graph's allocation
    if (opt_ctx->static_graphs) {
        struct ggml_init_params ip = {
            (size_t) graph->size * ggml_tensor_overhead() + ggml_graph_overhead_custom((size_t) graph->size, false), NULL, true
        };
        ggml_free(opt_ctx->ctx_copy);
        opt_ctx->ctx_copy = ggml_init(ip);
        GGML_ASSERT(opt_ctx->ctx_copy != NULL);
        opt_ctx->allocated_graph_copy = dup_graph(opt_ctx->ctx_copy, graph);
    } else {
        opt_ctx->allocated_graph_copy = graph;
    }
    GGML_ASSERT(ggml_backend_sched_alloc_graph(opt_ctx->backend_sched, opt_ctx->allocated_graph_copy) &&
                "ggml_opt: failed to allocate the graph");
    opt_ctx->allocated_graph = graph;
    opt_ctx->eval_ready      = true;
}

// writes the optimizer step parameters for this step into opt_step_params
static void set_step_params(ggml_opt_context_t opt_ctx) {
    const struct ggml_opt_optimizer_params p = opt_ctx->get_opt_pars(opt_ctx->get_opt_pars_ud);
    float v[7];
    size_t n;
    if (opt_ctx->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW) {
        GGML_ASSERT(p.adamw.alpha > 0.0f);
        GGML_ASSERT(p.adamw.beta1 >= 0.0f && p.adamw.beta1 <= 1.0f);
        GGML_ASSERT(p.adamw.beta2 >= 0.0f && p.adamw.beta2 <= 1.0f);
        GGML_ASSERT(p.adamw.eps >= 0.0f);
        GGML_ASSERT(p.adamw.wd >= 0.0f && p.adamw.wd <= 1.0f);
        v[0] = p.adamw.alpha;
        v[1] = p.adamw.beta1;
        v[2] = p.adamw.beta2;
        v[3] = p.adamw.eps;
        v[4] = p.adamw.wd;
        v[5] = 1.0f / (1.0f - powf(p.adamw.beta1, (float) opt_ctx->iter)); // bias corrections
        v[6] = 1.0f / (1.0f - powf(p.adamw.beta2, (float) opt_ctx->iter));
        n    = 7;
    } else {
        GGML_ASSERT(p.sgd.alpha > 0.0f);
        GGML_ASSERT(p.sgd.wd >= 0.0f && p.sgd.wd <= 1.0f);
        v[0] = p.sgd.alpha;
        v[1] = p.sgd.wd;
        n    = 2;
    }
    ggml_backend_tensor_set(opt_ctx->opt_step_params, v, 0, n * sizeof(float));
}

void ggml_opt_eval(ggml_opt_context_t opt_ctx, ggml_opt_result_t result) {
    GGML_ASSERT(opt_ctx->eval_ready && "ggml_opt_alloc must come before ggml_opt_eval");
    const bool opt_step = opt_ctx->allocated_graph == opt_ctx->gb_opt;
    const bool backward = opt_step || opt_ctx->allocated_graph == opt_ctx->gb_grad;
    if (opt_step) {
        set_step_params(opt_ctx);
    }

    const enum ggml_status st = ggml_backend_sched_graph_compute(opt_ctx->backend_sched, opt_ctx->allocated_graph_copy);
    GGML_ASSERT(st == GGML_STATUS_SUCCESS && "ggml_opt: graph compute failed");

    opt_ctx->iter += opt_step;
    if (backward) {
        opt_ctx->opt_i = (opt_ctx->opt_i + 1) % opt_ctx->opt_period;
    }
    if (!opt_ctx->static_graphs) {
        // the caller's compute context goes away with the next graph
        opt_ctx->gf                   = NULL;
        opt_ctx->gb_grad              = NULL;
        opt_ctx->gb_opt               = NULL;
        opt_ctx->allocated_graph      = NULL;
        opt_ctx->allocated_graph_copy = NULL;
    }
    opt_ctx->eval_ready = false;

    if (result == NULL) {
        return;
    }
    const int64_t ndata = opt_ctx->outputs->ne[1];
    GGML_ASSERT(ggml_is_scalar(opt_ctx->loss) && opt_ctx->loss->type == GGML_TYPE_F32);
    float loss;
    ggml_backend_tensor_get(opt_ctx->loss, &loss, 0, sizeof(float));

    int32_t * pred = NULL;
    if (opt_ctx->pred) {
        GGML_ASSERT(opt_ctx->pred->type == GGML_TYPE_I32 && ggml_nelements(opt_ctx->pred) == ndata);
        pred = malloc((size_t) ndata * sizeof(int32_t));
        GGML_ASSERT(pred != NULL);
        ggml_backend_tensor_get(opt_ctx->pred, pred, 0, ggml_nbytes(opt_ctx->pred));
    }
    int64_t ncorrect = -1;
    if (opt_ctx->ncorrect) {
        GGML_ASSERT(opt_ctx->ncorrect->type == GGML_TYPE_I64);
        ggml_backend_tensor_get(opt_ctx->ncorrect, &ncorrect, 0, sizeof(int64_t));
    }
    ggml_opt_result_add(result, ndata, loss, pred, ncorrect, opt_ctx->opt_period, opt_ctx->loss_per_datapoint);
    free(pred);
}
