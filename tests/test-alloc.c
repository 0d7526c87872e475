// Tests of ggml-alloc: the tensor allocator, context allocation, and the graph allocator (memory reuse,
// in-place reuse, inputs/outputs never overwritten, reserve, multi-buffer plans).
//
// Graph results are checked against values computed here in double precision; memory plans are checked by
// an independent liveness check (a tensor's bytes must not be written by any other node before its last
// consumer ran, except by an elementwise consumer reusing them in place as it dies).
#include "harness.h"

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-backend-impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct ggml_context * new_ctx(size_t n_tensors) {
    struct ggml_init_params p = {
        /*.mem_size   = */ ggml_tensor_overhead() * n_tensors + ggml_graph_overhead_custom(4096, false),
        /*.mem_buffer = */ NULL,
        /*.no_alloc   = */ true,
    };
    return ggml_init(p);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rng_next(void) {
    return (uint32_t) (th_xorshift64(&rng_state) >> 16);
}
static float rng_float(void) { // [-1, 1)
    return (float) ((double) (rng_next() & 0xffffff) / 8388608.0 - 1.0);
}

//
// tallocr
//

static void test_tallocr(void) {
    ggml_backend_buffer_type_t buft = ggml_backend_cpu_buffer_type();
    const size_t align = ggml_backend_buft_get_alignment(buft);
    TH_CHECK(align >= 32 && (align & (align - 1)) == 0, "alignment %zu", align);

    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(buft, 4 * align + align / 2);
    TH_CHECK(buf != NULL, "alloc");
    if (buf == NULL) {
        return;
    }
    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);              // 12 bytes
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, (int64_t) align); // 4*align bytes
    struct ggml_tensor * c = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 1);

    struct ggml_tallocr talloc = ggml_tallocr_new(buf);
    TH_CHECK(ggml_tallocr_alloc(&talloc, a) == GGML_STATUS_SUCCESS, "a fits");
    const char * base = ggml_backend_buffer_get_base(buf);
    TH_CHECK((const char *) a->data == base, "first tensor at the base");
    TH_CHECK(a->buffer == buf, "a->buffer");
    // b needs 4*align bytes starting at align: 5*align > 4.5*align, so it does not fit
    TH_CHECK(ggml_tallocr_alloc(&talloc, b) == GGML_STATUS_ALLOC_FAILED, "b must not fit");
    TH_CHECK(b->data == NULL && b->buffer == NULL, "b untouched after failure");
    TH_CHECK(ggml_tallocr_alloc(&talloc, c) == GGML_STATUS_SUCCESS, "c fits");
    TH_CHECK((const char *) c->data == base + align, "c at the next aligned slot (%td)", (const char *) c->data - base);
    TH_CHECK(((uintptr_t) c->data % align) == 0, "c aligned");

    ggml_free(ctx);
    ggml_backend_buffer_free(buf);
}

//
// context allocation
//

static void test_alloc_ctx_tensors(void) {
    ggml_backend_buffer_type_t buft = ggml_backend_cpu_buffer_type();
    const size_t align = ggml_backend_buft_get_alignment(buft);
    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 7);
    struct ggml_tensor * v = ggml_view_1d(ctx, a, 4, 2 * sizeof(float));

    const size_t want = GGML_PAD(ggml_nbytes(a), align) + GGML_PAD(ggml_nbytes(b), align);
    TH_CHECK(ggml_backend_alloc_ctx_tensors_from_buft_size(ctx, buft) == want, "size %zu vs %zu",
             ggml_backend_alloc_ctx_tensors_from_buft_size(ctx, buft), want);

    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    TH_CHECK(buf != NULL, "alloc ctx");
    if (buf != NULL) {
        TH_CHECK(ggml_backend_buffer_get_size(buf) == want, "buffer size %zu", ggml_backend_buffer_get_size(buf));
        TH_CHECK(a->buffer == buf && b->buffer == buf && v->buffer == buf, "buffers set");
        TH_CHECK((char *) v->data == (char *) a->data + 2 * sizeof(float), "view data follows its source");
        const char * lo = ggml_backend_buffer_get_base(buf);
        const char * hi = lo + ggml_backend_buffer_get_size(buf);
        TH_CHECK((char *) a->data >= lo && (char *) a->data + ggml_nbytes(a) <= hi, "a inside");
        TH_CHECK((char *) b->data >= lo && (char *) b->data + ggml_nbytes(b) <= hi, "b inside");
        TH_CHECK((char *) b->data >= (char *) a->data + ggml_nbytes(a) || (char *) a->data >= (char *) b->data + ggml_nbytes(b),
                 "a and b do not overlap");

        // the view writes through to its source
        const float vals[4] = { 1.5f, -2.0f, 3.25f, 4.0f };
        ggml_backend_tensor_set(v, vals, 0, sizeof(vals));
        float back[15];
        ggml_backend_tensor_get(a, back, 0, sizeof(back));
        TH_CHECK(back[2] == 1.5f && back[5] == 4.0f, "view write visible in source");

        // nothing left to allocate
        TH_CHECK(ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft) == NULL, "second allocation gives NULL");
        ggml_backend_buffer_free(buf);
    }
    ggml_free(ctx);
}

//
// graph allocator
//

struct range {
    uintptr_t lo;
    uintptr_t hi;
};

static struct range tensor_range(const struct ggml_tensor * t) {
    const struct ggml_tensor * s = t->view_src ? t->view_src : t;
    struct range r = { (uintptr_t) s->data, (uintptr_t) s->data + ggml_nbytes(s) };
    return r;
}

static bool overlap(struct range a, struct range b) {
    return a.lo < b.hi && b.lo < a.hi;
}

static const struct ggml_tensor * root_of(const struct ggml_tensor * t) {
    return t->view_src ? t->view_src : t;
}

// is t (its memory) read by a node at position >= from in the list? (views read their source)
static int last_use(struct ggml_tensor ** nodes, int n_nodes, const struct ggml_tensor * t) {
    int last = -1;
    for (int i = 0; i < n_nodes; i++) {
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            const struct ggml_tensor * s = nodes[i]->src[j];
            if (s != NULL && root_of(s) == t) {
                last = i;
            }
        }
        if (nodes[i] != t && nodes[i]->view_src == t) {
            last = i > last ? i : last;
        }
    }
    return last;
}

static bool elementwise(enum ggml_op op) {
    return op == GGML_OP_ADD || op == GGML_OP_SUB || op == GGML_OP_MUL || op == GGML_OP_DIV || op == GGML_OP_SQR ||
           op == GGML_OP_SQRT || op == GGML_OP_SCALE || op == GGML_OP_UNARY || op == GGML_OP_LOG || op == GGML_OP_ADD1;
}

// the independent liveness check; returns the number of violations (each is reported)
static int check_plan(struct ggml_cgraph * gf, struct ggml_tensor ** leafs, int n_leafs) {
    const int n = ggml_graph_n_nodes(gf);
    struct ggml_tensor ** nodes = ggml_graph_nodes(gf);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * w = nodes[i];
        if (w->view_src != NULL || w->data == NULL) {
            continue;
        }
        const struct range rw = tensor_range(w);
        // every tensor with memory that must still hold its value when w is written
        for (int k = 0; k < n + n_leafs; k++) {
            const struct ggml_tensor * t = k < n ? nodes[k] : leafs[k - n];
            if (t == w || t->view_src != NULL || t->data == NULL) {
                continue;
            }
            if (k < n && k > i) {
                continue; // not produced yet
            }
            const int lu = last_use(nodes, n, t);
            const bool keep_forever = (t->flags & (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT)) || lu < 0;
            bool live = keep_forever || lu > i;
            if (!live && lu == i) {
                // t dies at w: w may take its memory only in place (same bytes, elementwise op)
                const struct range rt = tensor_range(t);
                const bool in_place = rt.lo == rw.lo && rt.hi == rw.hi && elementwise(w->op);
                live = !in_place;
            }
            if (live && overlap(rw, tensor_range(t))) {
                if (bad < 5) {
                    fprintf(stderr, "  node %d '%s' overwrites live tensor '%s' (last use %d)\n", i, w->name, t->name, lu);
                }
                bad++;
            }
        }
    }
    return bad;
}

// a chain x -> op -> op -> ... of n elementwise ops (or copies when inplace_ok is false)
static struct ggml_tensor * build_chain(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * c,
                                        int n, bool inplace_ok) {
    struct ggml_tensor * y = x;
    for (int i = 0; i < n; i++) {
        if (inplace_ok) {
            switch (i % 3) {
                case 0:  y = ggml_add(ctx, y, c); break;
                case 1:  y = ggml_mul(ctx, y, c); break;
                default: y = ggml_scale(ctx, y, 0.5f); break;
            }
        } else {
            y = ggml_cont(ctx, ggml_transpose(ctx, y));
        }
    }
    return y;
}

static size_t chain_buffer_size(int n, bool inplace_ok, int64_t ne) {
    struct ggml_context * ctx = new_ctx((size_t) n * 2 + 16);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne, ne);
    struct ggml_tensor * c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne, ne);
    ggml_set_input(x);
    ggml_set_input(c);
    struct ggml_tensor * y = build_chain(ctx, x, c, n, inplace_ok);
    ggml_set_output(y);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 4096, false);
    ggml_build_forward_expand(gf, y);
    ggml_gallocr_t ga = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    const bool ok = ggml_gallocr_alloc_graph(ga, gf);
    TH_CHECK(ok, "chain alloc n=%d", n);
    struct ggml_tensor * leafs[2] = { x, c };
    TH_CHECK(check_plan(gf, leafs, 2) == 0, "chain plan n=%d inplace=%d", n, inplace_ok);
    const size_t size = ggml_gallocr_get_buffer_size(ga, 0);
    ggml_gallocr_free(ga);
    ggml_free(ctx);
    return size;
}

static void test_chain_memory(void) {
    const int64_t ne = 32;
    const size_t t = ne * ne * sizeof(float); // one tensor (already a multiple of the alignment)
    const size_t s10  = chain_buffer_size(10, true, ne);
    const size_t s200 = chain_buffer_size(200, true, ne);
    TH_CHECK(s10 == s200, "elementwise chain: peak memory independent of length (%zu vs %zu)", s10, s200);
    // 2 inputs + the first result; every later op writes in place over its dying input
    TH_CHECK(s200 == 3 * t, "elementwise chain uses 3 tensors (got %zu bytes = %.2f tensors)", s200, (double) s200 / t);

    const size_t c10  = chain_buffer_size(10, false, ne);
    const size_t c200 = chain_buffer_size(200, false, ne);
    TH_CHECK(c10 == c200, "copy chain: peak memory independent of length (%zu vs %zu)", c10, c200);
    // copies cannot be in place: two results alternate (c is not part of this graph)
    TH_CHECK(c200 == 3 * t, "copy chain uses 3 tensors (got %.2f)", (double) c200 / t);
}

// computes the chain and checks values, that inputs survive and that a middle output is kept
static void test_chain_compute(void) {
    const int64_t ne = 16;
    const int n = 30;
    struct ggml_context * ctx = new_ctx((size_t) n * 2 + 16);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne);
    struct ggml_tensor * c = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne);
    ggml_set_input(x);
    ggml_set_input(c);
    struct ggml_tensor * y = x;
    struct ggml_tensor * mid = NULL;
    for (int i = 0; i < n; i++) {
        switch (i % 3) {
            case 0:  y = ggml_add(ctx, y, c); break;
            case 1:  y = ggml_mul(ctx, y, c); break;
            default: y = ggml_scale(ctx, y, 0.5f); break;
        }
        if (i == n / 2) {
            mid = y;
            ggml_set_output(mid);
        }
    }
    ggml_set_output(y);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 4096, false);
    ggml_build_forward_expand(gf, y);

    ggml_gallocr_t ga = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    TH_CHECK(ggml_gallocr_reserve(ga, gf), "reserve");
    const size_t reserved = ggml_gallocr_get_buffer_size(ga, 0);
    TH_CHECK(ggml_gallocr_alloc_graph(ga, gf), "alloc");
    TH_CHECK(ggml_gallocr_get_buffer_size(ga, 0) == reserved, "alloc after reserve does not grow");

    float xv[16], cv[16];
    for (int i = 0; i < ne; i++) {
        xv[i] = rng_float();
        cv[i] = 0.5f + 0.5f * rng_float();
    }
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    ggml_backend_tensor_set(c, cv, 0, sizeof(cv));

    ggml_backend_t cpu = ggml_backend_cpu_init();
    TH_CHECK(ggml_backend_graph_compute(cpu, gf) == GGML_STATUS_SUCCESS, "compute");

    double ref[16], ref_mid[16];
    for (int e = 0; e < ne; e++) {
        double v = xv[e];
        for (int i = 0; i < n; i++) {
            switch (i % 3) {
                case 0:  v = (float) (v + cv[e]); break;
                case 1:  v = (float) (v * cv[e]); break;
                default: v = (float) (v * 0.5); break;
            }
            if (i == n / 2) {
                ref_mid[e] = v;
            }
        }
        ref[e] = v;
    }
    float out[16], outm[16], xb[16];
    ggml_backend_tensor_get(y, out, 0, sizeof(out));
    ggml_backend_tensor_get(mid, outm, 0, sizeof(outm));
    ggml_backend_tensor_get(x, xb, 0, sizeof(xb));
    int bad_y = 0, bad_mid = 0, bad_x = 0;
    for (int e = 0; e < ne; e++) {
        bad_y   += !(fabs(out[e] - ref[e]) <= 1e-5 * (1 + fabs(ref[e])));
        bad_mid += !(fabs(outm[e] - ref_mid[e]) <= 1e-5 * (1 + fabs(ref_mid[e])));
        bad_x   += xb[e] != xv[e];
    }
    TH_CHECK(bad_y == 0, "chain result (%d wrong)", bad_y);
    TH_CHECK(bad_mid == 0, "middle output kept (%d wrong)", bad_mid);
    TH_CHECK(bad_x == 0, "input not overwritten (%d changed)", bad_x);

    // the same shape again in a new context: the reserved buffer is reused, no reallocation
    ggml_backend_buffer_t first_buffer = mid->buffer;
    ggml_free(ctx);
    ctx = new_ctx((size_t) n * 2 + 16);
    x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne);
    c = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne);
    ggml_set_input(x);
    ggml_set_input(c);
    y = x;
    for (int i = 0; i < n; i++) {
        y = (i % 3 == 0) ? ggml_add(ctx, y, c) : (i % 3 == 1) ? ggml_mul(ctx, y, c) : ggml_scale(ctx, y, 0.5f);
    }
    struct ggml_cgraph * gf2 = ggml_new_graph_custom(ctx, 4096, false);
    ggml_build_forward_expand(gf2, y);
    TH_CHECK(ggml_gallocr_alloc_graph(ga, gf2), "alloc second graph");
    TH_CHECK(ggml_gallocr_get_buffer_size(ga, 0) == reserved, "same buffer size");
    TH_CHECK(x->buffer == first_buffer, "same buffer object reused (no reallocation)");

    ggml_backend_free(cpu);
    ggml_gallocr_free(ga);
    ggml_free(ctx);
}

// random DAGs of elementwise ops: plan invariants and values against a double-precision evaluation
static void test_random_graphs(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_gallocr_t ga = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    int n_bad_graphs = 0;
    for (int iter = 0; iter < 40; iter++) {
        const int failed_before = th_n_failed;
        const int64_t ne = 1 + (int64_t) (rng_next() % 40);
        const int n_in = 1 + (int) (rng_next() % 3);
        const int n_ops = 5 + (int) (rng_next() % 60);
        struct ggml_context * ctx = new_ctx((size_t) (n_in + n_ops) + 16);
        struct ggml_tensor * ts[80];
        int ops[80], a_of[80], b_of[80];
        int nt = 0;
        for (int i = 0; i < n_in; i++) {
            ts[nt] = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne);
            ggml_format_name(ts[nt], "in%d", i);
            ggml_set_input(ts[nt]);
            ops[nt] = -1;
            nt++;
        }
        for (int i = 0; i < n_ops; i++) {
            // favour recent tensors so chains form and most results die young
            const int a = nt - 1 - (int) (rng_next() % (nt < 4 ? nt : 4));
            const int b = (int) (rng_next() % nt);
            const int op = (int) (rng_next() % 4);
            struct ggml_tensor * t;
            switch (op) {
                case 0:  t = ggml_add(ctx, ts[a], ts[b]); break;
                case 1:  t = ggml_mul(ctx, ts[a], ts[b]); break;
                case 2:  t = ggml_sub(ctx, ts[a], ts[b]); break;
                default: t = ggml_scale(ctx, ts[a], 0.75f); break;
            }
            ggml_format_name(t, "op%d", i);
            if (rng_next() % 10 == 0) {
                ggml_set_output(t);
            }
            ts[nt] = t;
            ops[nt] = op;
            a_of[nt] = a;
            b_of[nt] = b;
            nt++;
        }
        struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 4096, false);
        // every tensor is part of the graph (inputs nobody reads too), so dead ends are kept (and checked)
        for (int i = 0; i < nt; i++) {
            ggml_build_forward_expand(gf, ts[i]);
        }
        if (!ggml_gallocr_alloc_graph(ga, gf)) {
            TH_CHECK(false, "alloc random graph %d", iter);
            ggml_free(ctx);
            continue;
        }
        TH_EXPECT(check_plan(gf, ts, n_in) == 0, "random graph %d plan", iter);

        double * ref = malloc(sizeof(double) * (size_t) nt * (size_t) ne);
        float * buf = malloc(sizeof(float) * (size_t) ne);
        for (int i = 0; i < n_in; i++) {
            for (int e = 0; e < ne; e++) {
                buf[e] = rng_float();
                ref[i * ne + e] = buf[e];
            }
            ggml_backend_tensor_set(ts[i], buf, 0, sizeof(float) * (size_t) ne);
        }
        for (int i = n_in; i < nt; i++) {
            for (int e = 0; e < ne; e++) {
                const double x = ref[a_of[i] * ne + e];
                const double y = ref[b_of[i] * ne + e];
                double r;
                switch (ops[i]) {
                    case 0:  r = (float) (x + y); break;
                    case 1:  r = (float) (x * y); break;
                    case 2:  r = (float) (x - y); break;
                    default: r = (float) (x * 0.75); break;
                }
                ref[i * ne + e] = r;
            }
        }
        TH_EXPECT(ggml_backend_graph_compute(cpu, gf) == GGML_STATUS_SUCCESS, "compute random graph %d", iter);
        // results still readable afterwards: outputs, dead ends and the inputs
        for (int i = 0; i < nt; i++) {
            const bool kept = i < n_in || (ts[i]->flags & GGML_TENSOR_FLAG_OUTPUT) || last_use(ggml_graph_nodes(gf), ggml_graph_n_nodes(gf), ts[i]) < 0;
            if (!kept) {
                continue;
            }
            ggml_backend_tensor_get(ts[i], buf, 0, sizeof(float) * (size_t) ne);
            for (int e = 0; e < ne; e++) {
                const double want = ref[i * ne + e];
                TH_EXPECT(fabs(buf[e] - want) <= 1e-4 * (1 + fabs(want)), "graph %d tensor %s[%d] = %g, want %g",
                          iter, ts[i]->name, e, buf[e], want);
            }
        }
        free(ref);
        free(buf);
        ggml_free(ctx);
        n_bad_graphs += th_n_failed != failed_before;
    }
    TH_CHECK(n_bad_graphs == 0, "random graphs: %d of 40 wrong", n_bad_graphs);
    ggml_gallocr_free(ga);
    ggml_backend_free(cpu);
}

// two buffers: half the nodes in each; tensors land in the buffer their id names
static void test_multi_buffer(void) {
    ggml_backend_buffer_type_t bufts[2] = { ggml_backend_cpu_buffer_type(), ggml_backend_cpu_buffer_type() };
    // distinct ids of one type share a buffer; use the plan ids only (both are the CPU type)
    ggml_gallocr_t ga = ggml_gallocr_new_n(bufts, 2);
    TH_CHECK(ga != NULL, "new_n");
    struct ggml_context * ctx = new_ctx(32);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    ggml_set_input(x);
    struct ggml_tensor * y = ggml_scale(ctx, x, 2.0f);
    struct ggml_tensor * z = ggml_add(ctx, y, x);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(gf, z);
    const int node_ids[2] = { 0, 1 };
    const int leaf_ids[1] = { 1 };
    size_t sizes[2] = { 123, 456 };
    ggml_gallocr_reserve_n_size(ga, gf, node_ids, leaf_ids, sizes);
    TH_CHECK(sizes[0] >= 3 * 256 && sizes[1] == 0, "shared type: one buffer holds all (%zu, %zu)", sizes[0], sizes[1]);
    TH_CHECK(ggml_gallocr_reserve_n(ga, gf, node_ids, leaf_ids), "reserve_n");
    TH_CHECK(ggml_gallocr_alloc_graph(ga, gf), "alloc after reserve_n");
    TH_CHECK(x->data != NULL && y->data != NULL && z->data != NULL, "allocated");
    TH_CHECK(!overlap(tensor_range(x), tensor_range(y)) && !overlap(tensor_range(x), tensor_range(z)), "input kept apart");

    // a different graph cannot be allocated with several buffers without reserving it first
    struct ggml_tensor * w = ggml_sqr(ctx, z);
    struct ggml_cgraph * gf2 = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(gf2, w);
    TH_CHECK(!ggml_gallocr_alloc_graph(ga, gf2), "alloc of a different graph fails with multiple buffers");
    ggml_free(ctx);
    ggml_gallocr_free(ga);
}

// the pointer map behind the allocator and the scheduler: growth keeps keys and values
static void test_ptr_map(void) {
    struct ggml_ptr_map m;
    TH_CHECK(ggml_ptr_map_init(&m, 4), "init");
    int * vals = calloc(m.cap, sizeof(int));
    enum { N = 5000 };
    static char objs[N * 48];
    bool ok = true;
    for (int i = 0; i < N; i++) {
        if (!ggml_ptr_map_reserve(&m, 1, (void **) &vals, sizeof(int))) {
            ok = false;
            break;
        }
        vals[ggml_ptr_map_insert(&m, objs + 48 * i)] = i + 1;
    }
    TH_CHECK(ok && m.n == N, "inserted %zu", m.n);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        const size_t slot = ggml_ptr_map_find(&m, objs + 48 * i);
        bad += m.keys[slot] != objs + 48 * i || vals[slot] != i + 1;
        bad += ggml_ptr_map_contains(&m, objs + 48 * i + 1); // never inserted
    }
    TH_CHECK(bad == 0, "lookups after growth (%d wrong)", bad);
    // inserting again changes nothing
    const size_t slot7 = ggml_ptr_map_find(&m, objs + 48 * 7);
    TH_CHECK(ggml_ptr_map_insert(&m, objs + 48 * 7) == slot7 && m.n == N, "insert of a present key");
    ggml_ptr_map_clear(&m);
    TH_CHECK(m.n == 0 && !ggml_ptr_map_contains(&m, objs) && !ggml_ptr_map_contains(&m, objs + 48 * (N - 1)), "clear");
    free(vals);
    ggml_ptr_map_free(&m);
}

// a graph listed by hand (ggml_graph_add_node): its srcs are in neither list but still need memory
static void test_hand_built_graph(void) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    ggml_set_input(x);
    struct ggml_tensor * v = ggml_view_1d(ctx, x, 4, 2 * sizeof(float));
    struct ggml_tensor * y = ggml_scale(ctx, v, 3.0f);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 16, false);
    ggml_graph_add_node(gf, v);
    ggml_graph_add_node(gf, y);
    ggml_gallocr_t ga = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    TH_CHECK(ggml_gallocr_alloc_graph(ga, gf), "alloc");
    TH_CHECK(x->data != NULL && y->data != NULL && (char *) v->data == (char *) x->data + 2 * sizeof(float),
             "src outside the lists allocated, view placed in it");
    const float xv[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    ggml_backend_t cpu = ggml_backend_cpu_init();
    TH_CHECK(ggml_backend_graph_compute(cpu, gf) == GGML_STATUS_SUCCESS, "compute");
    float yv[4];
    ggml_backend_tensor_get(y, yv, 0, sizeof(yv));
    TH_CHECK(yv[0] == 9.0f && yv[3] == 18.0f, "values %g %g", yv[0], yv[3]);
    ggml_backend_free(cpu);
    ggml_gallocr_free(ga);
    ggml_free(ctx);
}

int main(void) {
    test_ptr_map();
    test_hand_built_graph();
    test_tallocr();
    test_alloc_ctx_tensors();
    test_chain_memory();
    test_chain_compute();
    test_random_graphs();
    test_multi_buffer();
    return th_finish();
}
