// Tests of ggml-backend: registry, devices, buffers and tensor data access, the CPU backend, graph plans,
// graph copy / backend comparison, and the scheduler with one backend, two CPU backends, and a test
// backend ("TEST": its own non-host buffer type, runs only ADD and MUL) so that splits and copies between
// backends are exercised. Values are checked against results computed here.
#include "harness.h"

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct ggml_context * new_ctx(size_t n_tensors) {
    struct ggml_init_params p = {
        /*.mem_size   = */ ggml_tensor_overhead() * n_tensors + ggml_graph_overhead_custom(1024, false),
        /*.mem_buffer = */ NULL,
        /*.no_alloc   = */ true,
    };
    return ggml_init(p);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static float rng_float(void) { // [-1, 1)
    return (float) ((double) ((th_xorshift64(&rng_state) >> 20) & 0xffffff) / 8388608.0 - 1.0);
}

static bool close_to(double got, double want, double tol) {
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

//
// the TEST backend: host memory behind a non-host buffer type, so the CPU cannot use it and the scheduler
// must copy; it computes ADD and MUL only (with the CPU engine) and records what it was given
//

static struct {
    int n_set, n_get;          // buffer transfers
    int n_graphs;              // graph_compute calls
    int n_nodes;               // nodes computed
    int n_foreign_srcs;        // srcs of computed nodes that were not in TEST memory
    int n_unsupported;         // nodes it was given but cannot run
    bool offload_mul;          // offload_op answer for MUL
} g_test;

static ggml_backend_buffer_type_t test_buft(void);

static void * test_buffer_get_base(ggml_backend_buffer_t buffer) { return buffer->context; }
static void test_buffer_free(ggml_backend_buffer_t buffer) { free(buffer->context); }
static void test_buffer_memset(ggml_backend_buffer_t buffer, struct ggml_tensor * t, uint8_t v, size_t off, size_t size) {
    (void) buffer;
    memset((char *) t->data + off, v, size);
}
static void test_buffer_set(ggml_backend_buffer_t buffer, struct ggml_tensor * t, const void * data, size_t off, size_t size) {
    (void) buffer;
    g_test.n_set++;
    memcpy((char *) t->data + off, data, size);
}
static void test_buffer_get(ggml_backend_buffer_t buffer, const struct ggml_tensor * t, void * data, size_t off, size_t size) {
    (void) buffer;
    g_test.n_get++;
    memcpy(data, (const char *) t->data + off, size);
}
static void test_buffer_clear(ggml_backend_buffer_t buffer, uint8_t v) {
    memset(buffer->context, v, buffer->size);
}

static const struct ggml_backend_buffer_i test_buffer_i = {
    test_buffer_free, test_buffer_get_base, NULL, test_buffer_memset, test_buffer_set, test_buffer_get,
    NULL, NULL, NULL, test_buffer_clear, NULL,
};

static const char * test_buft_name(ggml_backend_buffer_type_t buft) { (void) buft; return "TEST"; }
static ggml_backend_buffer_t test_buft_alloc(ggml_backend_buffer_type_t buft, size_t size) {
    void * p = aligned_alloc(64, (size + 63) / 64 * 64);
    return p ? ggml_backend_buffer_init(buft, test_buffer_i, p, size) : NULL;
}
static size_t test_buft_align(ggml_backend_buffer_type_t buft) { (void) buft; return 64; }

static struct ggml_backend_device g_test_dev;
static struct ggml_backend_buffer_type g_test_buft = {
    { test_buft_name, test_buft_alloc, test_buft_align, NULL, NULL, NULL }, &g_test_dev, NULL,
};
static ggml_backend_buffer_type_t test_buft(void) { return &g_test_buft; }

static bool test_op_supported(const struct ggml_tensor * op) {
    return (op->op == GGML_OP_ADD || op->op == GGML_OP_MUL) && op->type == GGML_TYPE_F32;
}

static const char * test_backend_name(ggml_backend_t b) { (void) b; return "TEST"; }
static void test_backend_free(ggml_backend_t b) { free(b); }

static bool in_test_memory(const struct ggml_tensor * t) {
    const struct ggml_tensor * s = t->view_src ? t->view_src : t;
    return s->buffer != NULL && s->buffer->buft == &g_test_buft;
}

static enum ggml_status test_backend_compute(ggml_backend_t b, struct ggml_cgraph * gf) {
    (void) b;
    g_test.n_graphs++;
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++) {
        struct ggml_tensor * node = ggml_graph_node(gf, i);
        if (node->op == GGML_OP_NONE || node->op == GGML_OP_VIEW || node->op == GGML_OP_RESHAPE ||
            node->op == GGML_OP_PERMUTE || node->op == GGML_OP_TRANSPOSE) {
            continue;
        }
        g_test.n_nodes++;
        if (!test_op_supported(node)) {
            g_test.n_unsupported++;
        }
        if (!in_test_memory(node)) {
            g_test.n_foreign_srcs++;
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL && !in_test_memory(node->src[j])) {
                g_test.n_foreign_srcs++;
            }
        }
    }
    struct ggml_cplan plan = ggml_graph_plan(gf, 1, NULL);
    void * work = plan.work_size ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    enum ggml_status st = ggml_graph_compute(gf, &plan);
    free(work);
    return st;
}

static const struct ggml_backend_i test_backend_i = {
    test_backend_name, test_backend_free, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    test_backend_compute, NULL, NULL, NULL,
};

static const char * test_dev_name(ggml_backend_dev_t d) { (void) d; return "TEST"; }
static void test_dev_memory(ggml_backend_dev_t d, size_t * f, size_t * t) { (void) d; *f = 0; *t = 0; }
static enum ggml_backend_dev_type test_dev_type(ggml_backend_dev_t d) { (void) d; return GGML_BACKEND_DEVICE_TYPE_GPU; }
static void test_dev_props(ggml_backend_dev_t d, struct ggml_backend_dev_props * p) {
    p->name = test_dev_name(d);
    p->description = "test";
    p->type = GGML_BACKEND_DEVICE_TYPE_GPU;
}
static ggml_backend_t test_dev_init(ggml_backend_dev_t d, const char * params) {
    (void) params;
    static ggml_guid guid = { 7 };
    ggml_backend_t b = calloc(1, sizeof(*b));
    b->guid = &guid;
    b->iface = test_backend_i;
    b->device = d;
    return b;
}
static ggml_backend_buffer_type_t test_dev_buft(ggml_backend_dev_t d) { (void) d; return test_buft(); }
static bool test_dev_supports_op(ggml_backend_dev_t d, const struct ggml_tensor * op) { (void) d; return test_op_supported(op); }
static bool test_dev_supports_buft(ggml_backend_dev_t d, ggml_backend_buffer_type_t buft) { (void) d; return buft == test_buft(); }
static bool test_dev_offload_op(ggml_backend_dev_t d, const struct ggml_tensor * op) {
    (void) d;
    return g_test.offload_mul && op->op == GGML_OP_MUL;
}

static struct ggml_backend_device g_test_dev = {
    { test_dev_name, test_dev_name, test_dev_memory, test_dev_type, test_dev_props, test_dev_init, test_dev_buft,
      NULL, NULL, test_dev_supports_op, test_dev_supports_buft, test_dev_offload_op, NULL, NULL, NULL },
    NULL, NULL,
};

//
// registry and devices
//

static void test_registry(void) {
    TH_CHECK(ggml_backend_reg_count() >= 1, "at least one backend registered");
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("cpu");
    TH_CHECK(reg != NULL && strcmp(ggml_backend_reg_name(reg), "CPU") == 0, "CPU reg by name (case-insensitive)");
    TH_CHECK(reg == ggml_backend_cpu_reg(), "same reg as ggml_backend_cpu_reg()");
    TH_CHECK(ggml_backend_reg_by_name("nope") == NULL, "unknown reg");
    TH_CHECK(ggml_backend_reg_dev_count(reg) == 1, "CPU reg has one device");

    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    TH_CHECK(dev != NULL && dev == ggml_backend_dev_by_name("CPU"), "CPU device by type and by name");
    TH_CHECK(ggml_backend_dev_count() >= 1 && ggml_backend_dev_get(ggml_backend_dev_count() - 1) != NULL, "device list");
    if (dev == NULL) {
        return;
    }
    TH_CHECK(ggml_backend_dev_backend_reg(dev) == reg, "device's reg");
    struct ggml_backend_dev_props props;
    ggml_backend_dev_get_props(dev, &props);
    TH_CHECK(strcmp(props.name, "CPU") == 0 && props.type == GGML_BACKEND_DEVICE_TYPE_CPU, "props name/type");
    TH_CHECK(props.caps.buffer_from_host_ptr && !props.caps.async, "props caps");
    TH_CHECK(props.memory_total > 0 && props.memory_free <= props.memory_total, "memory %zu/%zu",
             props.memory_free, props.memory_total);
    TH_CHECK(ggml_backend_dev_description(dev) != NULL && ggml_backend_dev_description(dev)[0] != '\0', "description");
    TH_CHECK(ggml_backend_dev_buffer_type(dev) == ggml_backend_cpu_buffer_type(), "device buffer type");
    TH_CHECK(ggml_backend_buft_get_device(ggml_backend_cpu_buffer_type()) == dev, "buffer type's device");

    TH_CHECK(ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads") != NULL, "set_n_threads proc");
    TH_CHECK(ggml_backend_reg_get_proc_address(reg, "no_such_function") == NULL, "unknown proc");
    union { void * p; ggml_backend_get_features_t f; } feat = { ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features") };
    TH_CHECK(feat.p != NULL && feat.f(reg) != NULL, "features list");

    ggml_backend_t b1 = ggml_backend_init_by_name("CPU", NULL);
    ggml_backend_t b2 = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, "n_threads=2");
    ggml_backend_t b3 = ggml_backend_init_best();
    TH_CHECK(ggml_backend_is_cpu(b1) && ggml_backend_is_cpu(b2) && ggml_backend_is_cpu(b3), "CPU backends created");
    TH_CHECK(ggml_backend_get_device(b1) == dev, "backend device");
    TH_CHECK(strcmp(ggml_backend_name(b1), "CPU") == 0, "backend name");
    TH_CHECK(ggml_backend_init_by_name("no-such-device", NULL) == NULL, "unknown device gives NULL");
    TH_CHECK(ggml_backend_load("/nonexistent/libggml-nothing.so") == NULL, "loading a missing library gives NULL");
    ggml_backend_free(b1);
    ggml_backend_free(b2);
    ggml_backend_free(b3);
    ggml_backend_free(NULL);

    // a registered device is enumerated
    const size_t n_before = ggml_backend_dev_count();
    ggml_backend_device_register(&g_test_dev);
    ggml_backend_device_register(&g_test_dev);
    TH_CHECK(ggml_backend_dev_count() == n_before + 1, "device registered once");
    TH_CHECK(ggml_backend_dev_by_name("test") == &g_test_dev, "registered device by name");
}

//
// buffers and tensor data
//

static void test_buffers(void) {
    ggml_backend_buffer_type_t buft = ggml_backend_cpu_buffer_type();
    TH_CHECK(strcmp(ggml_backend_buft_name(buft), "CPU") == 0, "buft name");
    TH_CHECK(ggml_backend_buft_is_host(buft), "CPU buft is host");
    TH_CHECK(ggml_backend_buft_get_alignment(buft) == 64, "64-byte alignment");
    TH_CHECK(ggml_backend_buft_get_max_size(buft) == SIZE_MAX, "no max size");

    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(buft, 1000);
    TH_CHECK(buf != NULL, "alloc");
    if (buf == NULL) {
        return;
    }
    TH_CHECK(ggml_backend_buffer_get_size(buf) == 1000, "size");
    TH_CHECK(((uintptr_t) ggml_backend_buffer_get_base(buf) % 64) == 0, "base aligned");
    TH_CHECK(ggml_backend_buffer_is_host(buf) && ggml_backend_buffer_get_type(buf) == buft, "host, type");
    TH_CHECK(ggml_backend_buffer_get_usage(buf) == GGML_BACKEND_BUFFER_USAGE_ANY, "default usage");
    ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    TH_CHECK(ggml_backend_buffer_get_usage(buf) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "usage set");
    ggml_backend_buffer_clear(buf, 0xAB);
    const unsigned char * p = ggml_backend_buffer_get_base(buf);
    bool all = true;
    for (int i = 0; i < 1000; i++) {
        all = all && p[i] == 0xAB;
    }
    TH_CHECK(all, "clear fills the buffer");
    ggml_backend_buffer_free(buf);
    ggml_backend_buffer_free(NULL);

    ggml_backend_buffer_t empty = ggml_backend_buft_alloc_buffer(buft, 0);
    TH_CHECK(empty != NULL && ggml_backend_buffer_get_size(empty) == 0, "zero-size buffer");
    ggml_backend_buffer_clear(empty, 1);
    ggml_backend_buffer_free(empty);

    // a buffer over caller memory: tensors placed in it alias that memory; freeing it leaves the memory
    float * mem = aligned_alloc(64, 256 * sizeof(float));
    for (int i = 0; i < 256; i++) {
        mem[i] = (float) i;
    }
    ggml_backend_buffer_t wrap = ggml_backend_cpu_buffer_from_ptr(mem, 256 * sizeof(float));
    TH_CHECK(wrap != NULL && ggml_backend_buffer_get_base(wrap) == mem, "from_ptr base");
    TH_CHECK(ggml_backend_cpu_buffer_from_ptr(NULL, 16) == NULL, "from_ptr NULL rejected");
    struct ggml_context * ctx = new_ctx(4);
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    TH_CHECK(ggml_backend_tensor_alloc(wrap, t, mem + 32) == GGML_STATUS_SUCCESS, "tensor_alloc in wrapped memory");
    float got[16];
    ggml_backend_tensor_get(t, got, 0, sizeof(got));
    TH_CHECK(got[0] == 32.0f && got[15] == 47.0f, "reads the wrapped memory");
    struct ggml_tensor * u = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    TH_CHECK(ggml_backend_tensor_alloc(wrap, u, mem + 250) != GGML_STATUS_SUCCESS, "tensor_alloc past the end fails");
    TH_CHECK(ggml_backend_tensor_alloc(wrap, t, mem) != GGML_STATUS_SUCCESS, "double tensor_alloc fails");
    ggml_backend_buffer_free(wrap);
    TH_CHECK(mem[100] == 100.0f, "memory still valid after freeing the wrapper");
    free(mem);
    ggml_free(ctx);
}

static void test_tensor_data(void) {
    struct ggml_context * ctx_a = new_ctx(4);
    struct ggml_context * ctx_b = new_ctx(4);
    struct ggml_context * ctx_c = new_ctx(4);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx_a, GGML_TYPE_F32, 8, 4);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx_b, GGML_TYPE_F32, 8, 4);
    struct ggml_tensor * c = ggml_new_tensor_2d(ctx_c, GGML_TYPE_F32, 8, 4);
    struct ggml_tensor * d = ggml_new_tensor_2d(ctx_c, GGML_TYPE_F32, 8, 4);
    ggml_backend_buffer_t ba = ggml_backend_alloc_ctx_tensors_from_buft(ctx_a, ggml_backend_cpu_buffer_type());
    ggml_backend_buffer_t bb = ggml_backend_alloc_ctx_tensors_from_buft(ctx_b, ggml_backend_cpu_buffer_type());
    ggml_backend_buffer_t bc = ggml_backend_alloc_ctx_tensors_from_buft(ctx_c, test_buft());
    TH_CHECK(ba && bb && bc, "buffers");
    TH_CHECK(!ggml_backend_buffer_is_host(bc), "TEST buffer is not host");

    float v[32], w[32];
    for (int i = 0; i < 32; i++) {
        v[i] = (float) i * 0.5f - 3.0f;
    }
    ggml_backend_tensor_set(a, v, 0, sizeof(v));
    ggml_backend_tensor_get(a, w, 0, sizeof(w));
    TH_CHECK(memcmp(v, w, sizeof(v)) == 0, "set/get roundtrip");

    ggml_backend_tensor_memset(a, 0, 4 * sizeof(float), 2 * sizeof(float));
    ggml_backend_tensor_get(a, w, 0, sizeof(w));
    TH_CHECK(w[3] == v[3] && w[4] == 0.0f && w[5] == 0.0f && w[6] == v[6], "memset of a range");

    // out of bounds: logged and ignored
    ggml_backend_tensor_set(a, v, 30 * sizeof(float), 4 * sizeof(float));
    ggml_backend_tensor_get(a, w, 0, sizeof(w));
    TH_CHECK(w[30] == v[30] && w[31] == v[31], "out-of-bounds set ignored");

    // partial get at an offset
    float part[3];
    ggml_backend_tensor_get(a, part, 9 * sizeof(float), sizeof(part));
    TH_CHECK(part[0] == v[9] && part[2] == v[11], "partial get");

    // 2d: every other row
    float rows[2][8];
    ggml_backend_tensor_get_2d(a, rows, 0, 8 * sizeof(float), 2, 16 * sizeof(float), 8 * sizeof(float));
    TH_CHECK(rows[0][1] == v[1] && rows[1][0] == v[16] && rows[1][7] == v[23], "get_2d");
    const float ones[2][8] = { { 1, 1, 1, 1, 1, 1, 1, 1 }, { 2, 2, 2, 2, 2, 2, 2, 2 } };
    ggml_backend_tensor_set_2d(b, ones, 8 * sizeof(float), 8 * sizeof(float), 2, 16 * sizeof(float), 8 * sizeof(float));
    ggml_backend_tensor_get(b, w, 0, sizeof(w));
    TH_CHECK(w[8] == 1.0f && w[15] == 1.0f && w[24] == 2.0f && w[31] == 2.0f, "set_2d");

    // copies: host -> host, host -> TEST, TEST -> TEST (staged), TEST -> host
    ggml_backend_tensor_set(a, v, 0, sizeof(v));
    ggml_backend_tensor_copy(a, b);
    ggml_backend_tensor_get(b, w, 0, sizeof(w));
    TH_CHECK(memcmp(v, w, sizeof(v)) == 0, "copy CPU -> CPU");
    const int sets = g_test.n_set;
    ggml_backend_tensor_copy(a, c);
    TH_CHECK(g_test.n_set == sets + 1, "copy CPU -> TEST goes through the TEST buffer");
    ggml_backend_tensor_copy(c, d);
    memset(w, 0, sizeof(w));
    ggml_backend_tensor_memset(b, 0, 0, sizeof(w));
    ggml_backend_tensor_copy(d, b);
    ggml_backend_tensor_get(b, w, 0, sizeof(w));
    TH_CHECK(memcmp(v, w, sizeof(v)) == 0, "copy CPU -> TEST -> TEST -> CPU");

    // a shape mismatch is refused
    struct ggml_context * ctx_e = new_ctx(2);
    struct ggml_tensor * e = ggml_new_tensor_1d(ctx_e, GGML_TYPE_F32, 5);
    ggml_backend_buffer_t be = ggml_backend_alloc_ctx_tensors_from_buft(ctx_e, ggml_backend_cpu_buffer_type());
    float five[5] = { 9, 9, 9, 9, 9 };
    ggml_backend_tensor_set(e, five, 0, sizeof(five));
    ggml_backend_tensor_copy(a, e);
    ggml_backend_tensor_get(e, five, 0, sizeof(five));
    TH_CHECK(five[0] == 9 && five[4] == 9, "copy between different shapes refused");

    ggml_backend_buffer_free(ba);
    ggml_backend_buffer_free(bb);
    ggml_backend_buffer_free(bc);
    ggml_backend_buffer_free(be);
    ggml_free(ctx_a);
    ggml_free(ctx_b);
    ggml_free(ctx_c);
    ggml_free(ctx_e);
}

//
// a test graph with a reference evaluation
//   a = x + y; b = silu(a); c = b * a; d = 2c; e = d + x; out = e^2
//

#define NE 37

struct test_graph {
    struct ggml_context * ctx;
    struct ggml_cgraph * gf;
    struct ggml_tensor * x, * y;
    struct ggml_tensor * nodes[6]; // a b c d e out
    float xv[NE], yv[NE];
    double ref[6][NE];
};

static void build_test_graph(struct test_graph * g, int64_t ne) {
    g->ctx = new_ctx(64);
    g->x = ggml_new_tensor_1d(g->ctx, GGML_TYPE_F32, ne);
    g->y = ggml_new_tensor_1d(g->ctx, GGML_TYPE_F32, ne);
    ggml_set_name(g->x, "x");
    ggml_set_name(g->y, "y");
    ggml_set_input(g->x);
    ggml_set_input(g->y);
    struct ggml_tensor * a = ggml_add(g->ctx, g->x, g->y);
    struct ggml_tensor * b = ggml_silu(g->ctx, a);
    struct ggml_tensor * c = ggml_mul(g->ctx, b, a);
    struct ggml_tensor * d = ggml_scale(g->ctx, c, 2.0f);
    struct ggml_tensor * e = ggml_add(g->ctx, d, g->x);
    struct ggml_tensor * out = ggml_sqr(g->ctx, e);
    const char * names[6] = { "a", "b", "c", "d", "e", "out" };
    struct ggml_tensor * ts[6] = { a, b, c, d, e, out };
    for (int i = 0; i < 6; i++) {
        ggml_set_name(ts[i], names[i]);
        g->nodes[i] = ts[i];
    }
    ggml_set_output(out);
    g->gf = ggml_new_graph_custom(g->ctx, 1024, false);
    ggml_build_forward_expand(g->gf, out);

    for (int i = 0; i < NE; i++) {
        g->xv[i] = 2.0f * rng_float();
        g->yv[i] = 2.0f * rng_float();
        const double av = (float) ((double) g->xv[i] + g->yv[i]);
        const double bv = av / (1.0 + exp(-av));
        const double cv = bv * av;
        const double dv = 2.0 * cv;
        const double ev = dv + g->xv[i];
        g->ref[0][i] = av;
        g->ref[1][i] = bv;
        g->ref[2][i] = cv;
        g->ref[3][i] = dv;
        g->ref[4][i] = ev;
        g->ref[5][i] = ev * ev;
    }
}

static void set_inputs(struct test_graph * g) {
    ggml_backend_tensor_set(g->x, g->xv, 0, sizeof(float) * (size_t) g->x->ne[0]);
    ggml_backend_tensor_set(g->y, g->yv, 0, sizeof(float) * (size_t) g->y->ne[0]);
}

static int check_node(const struct test_graph * g, int k, const char * what) {
    float got[NE];
    const int64_t ne = g->nodes[k]->ne[0];
    ggml_backend_tensor_get(g->nodes[k], got, 0, sizeof(float) * (size_t) ne);
    int bad = 0;
    for (int i = 0; i < ne; i++) {
        if (!close_to(got[i], g->ref[k][i], 1e-5)) {
            if (bad == 0) {
                fprintf(stderr, "  %s: %s[%d] = %g, want %g\n", what, g->nodes[k]->name, i, got[i], g->ref[k][i]);
            }
            bad++;
        }
    }
    return bad;
}

static void test_cpu_compute(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 2);
    struct test_graph g;
    build_test_graph(&g, NE);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(g.ctx, cpu);
    TH_CHECK(buf != NULL, "all tensors allocated statically");
    set_inputs(&g);
    TH_CHECK(ggml_backend_graph_compute(cpu, g.gf) == GGML_STATUS_SUCCESS, "compute");
    int bad = 0;
    for (int k = 0; k < 6; k++) {
        bad += check_node(&g, k, "cpu compute");
    }
    TH_CHECK(bad == 0, "CPU backend results");

    // the same through a graph plan
    for (int k = 0; k < 6; k++) {
        ggml_backend_tensor_memset(g.nodes[k], 0, 0, ggml_nbytes(g.nodes[k]));
    }
    ggml_backend_graph_plan_t plan = ggml_backend_graph_plan_create(cpu, g.gf);
    TH_CHECK(plan != NULL, "plan");
    TH_CHECK(ggml_backend_graph_plan_compute(cpu, plan) == GGML_STATUS_SUCCESS, "plan compute");
    ggml_backend_graph_plan_free(cpu, plan);
    TH_CHECK(check_node(&g, 5, "plan") == 0, "plan results");

    // supports_op follows the CPU engine; ops reading non-host memory are refused
    TH_CHECK(ggml_backend_supports_op(cpu, g.nodes[1]), "CPU supports silu");
    TH_CHECK(ggml_backend_supports_buft(cpu, ggml_backend_cpu_buffer_type()), "CPU supports its buffer type");
    TH_CHECK(!ggml_backend_supports_buft(cpu, test_buft()), "CPU refuses a non-host buffer type");

    // graph copy to another CPU backend and comparison node by node
    ggml_backend_t cpu2 = ggml_backend_cpu_init();
    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(cpu2, g.gf);
    TH_CHECK(copy.buffer != NULL && copy.graph != NULL, "graph copy");
    if (copy.graph != NULL) {
        TH_CHECK(ggml_graph_n_nodes(copy.graph) == ggml_graph_n_nodes(g.gf), "copy has the same nodes");
        // the copy lists nodes only: its input is the first src of its first node (a = x + y)
        struct ggml_tensor * cx = ggml_graph_node(copy.graph, 0)->src[0];
        float xb[NE];
        if (cx != NULL) {
            ggml_backend_tensor_get(cx, xb, 0, sizeof(xb));
        }
        TH_CHECK(cx != NULL && cx != g.x && memcmp(xb, g.xv, sizeof(xb)) == 0, "copied input data");
        ggml_backend_graph_copy_free(copy);
    }
    ggml_backend_free(cpu2);

    ggml_backend_buffer_free(buf);
    ggml_free(g.ctx);
    ggml_backend_free(cpu);
}

struct compare_state {
    int calls;
    int mismatches;
};

static bool compare_cb(int i, struct ggml_tensor * t1, struct ggml_tensor * t2, void * ud) {
    (void) i;
    struct compare_state * st = ud;
    st->calls++;
    const size_t n = ggml_nbytes(t1);
    if (n != ggml_nbytes(t2) || memcmp(t1->data, t2->data, n) != 0) {
        st->mismatches++;
    }
    return true;
}

static void test_compare_backends(void) {
    ggml_backend_t b1 = ggml_backend_cpu_init();
    ggml_backend_t b2 = ggml_backend_cpu_init();
    struct test_graph g;
    build_test_graph(&g, NE);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(g.ctx, b1);
    set_inputs(&g);
    struct compare_state st = { 0, 0 };
    TH_CHECK(ggml_backend_compare_graph_backend(b1, b2, g.gf, compare_cb, &st, NULL, 0), "compare");
    TH_CHECK(st.calls == 6 && st.mismatches == 0, "compare: %d calls, %d mismatches", st.calls, st.mismatches);
    TH_CHECK(check_node(&g, 5, "compare backend1") == 0, "backend1 result");
    ggml_backend_buffer_free(buf);
    ggml_free(g.ctx);
    ggml_backend_free(b1);
    ggml_backend_free(b2);
}

//
// scheduler
//

struct eval_state {
    struct test_graph * g;
    int n_ask;
    int n_observed;
    int bad_values;
    int host_violations; // CPU nodes whose srcs were not in host memory while they ran
    int stop_at;         // node index (in nodes[]) at which to cancel, -1 for never
    const char * want;   // only observe this node (NULL: all)
    ggml_backend_sched_t sched;
};

static int node_index(const struct test_graph * g, const struct ggml_tensor * t) {
    for (int k = 0; k < 6; k++) {
        if (g->nodes[k] == t) {
            return k;
        }
    }
    return -1;
}

static bool eval_cb(struct ggml_tensor * t, bool ask, void * ud) {
    struct eval_state * st = ud;
    if (ask) {
        st->n_ask++;
        return st->want == NULL || strcmp(t->name, st->want) == 0;
    }
    st->n_observed++;
    const int k = node_index(st->g, t);
    if (k >= 0 && check_node(st->g, k, "eval callback") != 0) {
        st->bad_values++;
    }
    ggml_backend_t b = ggml_backend_sched_get_tensor_backend(st->sched, t);
    if (b != NULL && ggml_backend_is_cpu(b)) {
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            const struct ggml_tensor * s = t->src[j];
            if (s != NULL && !ggml_backend_buffer_is_host((s->view_src ? s->view_src : s)->buffer)) {
                st->host_violations++;
            }
        }
    }
    return k != st->stop_at;
}

static void test_sched_one_backend(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_sched_t sched = ggml_backend_sched_new(&cpu, NULL, 1, 1024, false, true);
    TH_CHECK(sched != NULL, "sched with one backend");
    TH_CHECK(ggml_backend_sched_get_n_backends(sched) == 1 && ggml_backend_sched_get_backend(sched, 0) == cpu, "backends");

    struct test_graph g;
    build_test_graph(&g, NE);
    TH_CHECK(ggml_backend_sched_alloc_graph(sched, g.gf), "alloc");
    TH_CHECK(ggml_backend_sched_get_n_splits(sched) == 1, "one split (got %d)", ggml_backend_sched_get_n_splits(sched));
    TH_CHECK(ggml_backend_sched_get_n_copies(sched) == 1, "one copy");
    set_inputs(&g);
    TH_CHECK(ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS, "compute");
    int bad = 0;
    for (int k = 0; k < 6; k++) {
        bad += k == 5 ? check_node(&g, k, "sched1") : 0;
    }
    TH_CHECK(bad == 0, "one-backend scheduler result");
    // multi-use in terms of computation
    TH_CHECK(ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS && check_node(&g, 5, "again") == 0,
             "second compute of the same graph");
    TH_CHECK(ggml_backend_sched_get_tensor_backend(sched, g.nodes[2]) == cpu, "node backend");
    TH_CHECK(ggml_backend_sched_get_buffer_size(sched, cpu) > 0, "compute buffer size");
    ggml_free(g.ctx);

    // eval callback: asked about every node, observes every node with its value already computed
    ggml_backend_sched_reset(sched);
    build_test_graph(&g, NE);
    struct eval_state st = { &g, 0, 0, 0, 0, -1, NULL, sched };
    ggml_backend_sched_set_eval_callback(sched, eval_cb, &st);
    TH_CHECK(ggml_backend_sched_alloc_graph(sched, g.gf), "alloc");
    set_inputs(&g);
    TH_CHECK(ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS, "compute with callback");
    TH_CHECK(st.n_ask == ggml_graph_n_nodes(g.gf) && st.n_observed == ggml_graph_n_nodes(g.gf),
             "asked %d, observed %d of %d nodes", st.n_ask, st.n_observed, ggml_graph_n_nodes(g.gf));
    TH_CHECK(st.bad_values == 0, "values seen by the callback");

    // observe one node only: still asked about every node
    st.n_ask = st.n_observed = 0;
    st.want = "c";
    TH_CHECK(ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS, "compute");
    TH_CHECK(st.n_ask == ggml_graph_n_nodes(g.gf) && st.n_observed == 1, "asked %d, observed %d", st.n_ask, st.n_observed);
    TH_CHECK(check_node(&g, 5, "partial observation") == 0, "result with partial observation");

    // returning false cancels the rest of the graph
    st.n_ask = st.n_observed = 0;
    st.want = NULL;
    st.stop_at = 2;
    ggml_backend_sched_graph_compute(sched, g.gf);
    TH_CHECK(st.n_observed == 3, "cancel after the third node (observed %d)", st.n_observed);
    // the scheduler asks before it runs a node: no question after the cancel means nothing else ran
    TH_CHECK(st.n_ask == 3, "nodes after the cancel were not reached (asked %d)", st.n_ask);
    ggml_backend_sched_set_eval_callback(sched, NULL, NULL);
    ggml_free(g.ctx);

    // reserve with a worst-case graph, then allocate smaller and equal graphs without reallocation
    ggml_backend_sched_reset(sched);
    struct test_graph big;
    build_test_graph(&big, NE);
    size_t sizes[1] = { 0 };
    ggml_backend_sched_reserve_size(sched, big.gf, sizes);
    TH_CHECK(sizes[0] > 0, "reserve_size measures (%zu)", sizes[0]);
    TH_CHECK(ggml_backend_sched_reserve(sched, big.gf), "reserve");
    const size_t reserved = ggml_backend_sched_get_buffer_size(sched, cpu);
    TH_CHECK(reserved >= sizes[0], "reserved %zu >= measured %zu", reserved, sizes[0]);
    struct test_graph small;
    build_test_graph(&small, 5);
    TH_CHECK(ggml_backend_sched_alloc_graph(sched, small.gf), "alloc small");
    ggml_backend_buffer_t compute_buf = small.nodes[0]->buffer;
    TH_CHECK(ggml_backend_sched_get_buffer_size(sched, cpu) == reserved, "no growth for the small graph");
    ggml_backend_sched_reset(sched);
    TH_CHECK(ggml_backend_sched_alloc_graph(sched, big.gf), "alloc big");
    TH_CHECK(big.nodes[0]->buffer == compute_buf && ggml_backend_sched_get_buffer_size(sched, cpu) == reserved,
             "same compute buffer for the reserved graph (no reallocation)");
    set_inputs(&big);
    TH_CHECK(ggml_backend_sched_graph_compute(sched, big.gf) == GGML_STATUS_SUCCESS && check_node(&big, 5, "big") == 0,
             "reserved graph computes");
    ggml_free(small.ctx);
    ggml_free(big.ctx);

    ggml_backend_sched_free(sched);
    ggml_backend_free(cpu);
}

static void test_sched_two_cpus(void) {
    ggml_backend_t cpus[2] = { ggml_backend_cpu_init(), ggml_backend_cpu_init() };
    ggml_backend_sched_t sched = ggml_backend_sched_new(cpus, NULL, 2, 1024, false, true);
    TH_CHECK(sched != NULL, "sched with two CPU backends");
    struct test_graph g;
    build_test_graph(&g, NE);
    // alternate the nodes between the two backends
    for (int k = 0; k < 6; k++) {
        ggml_backend_sched_set_tensor_backend(sched, g.nodes[k], cpus[k % 2]);
    }
    TH_CHECK(ggml_backend_sched_alloc_graph(sched, g.gf), "alloc");
    TH_CHECK(ggml_backend_sched_get_n_splits(sched) == 6, "six splits (got %d)", ggml_backend_sched_get_n_splits(sched));
    for (int k = 0; k < 6; k++) {
        TH_EXPECT(ggml_backend_sched_get_tensor_backend(sched, g.nodes[k]) == cpus[k % 2], "node %d backend", k);
    }
    set_inputs(&g);
    TH_CHECK(ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS, "compute");
    TH_CHECK(check_node(&g, 5, "two cpus") == 0, "two-CPU scheduler result");
    ggml_free(g.ctx);

    // assignments made before a direct compute (allocation on first use) are kept
    ggml_backend_sched_reset(sched);
    build_test_graph(&g, NE);
    for (int k = 0; k < 6; k++) {
        ggml_backend_sched_set_tensor_backend(sched, g.nodes[k], cpus[1 - k % 2]);
    }
    ggml_backend_sched_split_graph(sched, g.gf);
    TH_CHECK(ggml_backend_sched_get_n_splits(sched) == 6, "split_graph without allocation (got %d)",
             ggml_backend_sched_get_n_splits(sched));
    TH_CHECK(ggml_backend_sched_alloc_graph(sched, g.gf), "alloc");
    set_inputs(&g);
    ggml_backend_sched_reset(sched);
    for (int k = 0; k < 6; k++) {
        ggml_backend_sched_set_tensor_backend(sched, g.nodes[k], cpus[1 - k % 2]);
    }
    TH_CHECK(ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS, "direct compute");
    TH_CHECK(ggml_backend_sched_get_n_splits(sched) == 6 && ggml_backend_sched_get_tensor_backend(sched, g.nodes[0]) == cpus[1],
             "user assignments kept by a direct compute");
    TH_CHECK(check_node(&g, 5, "direct") == 0, "direct compute result");
    ggml_free(g.ctx);

    // without assignments everything runs on the first backend
    ggml_backend_sched_reset(sched);
    build_test_graph(&g, NE);
    TH_CHECK(ggml_backend_sched_alloc_graph(sched, g.gf), "alloc");
    TH_CHECK(ggml_backend_sched_get_n_splits(sched) == 1, "one split (got %d)", ggml_backend_sched_get_n_splits(sched));
    TH_CHECK(ggml_backend_sched_get_tensor_backend(sched, g.nodes[3]) == cpus[0], "first backend has priority");
    set_inputs(&g);
    TH_CHECK(ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS && check_node(&g, 5, "cpu0") == 0,
             "result");
    ggml_free(g.ctx);
    ggml_backend_sched_free(sched);
    ggml_backend_free(cpus[0]);
    ggml_backend_free(cpus[1]);
}

static void test_sched_test_backend(void) {
    ggml_backend_t test = test_dev_init(&g_test_dev, NULL);
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_t backends[2] = { test, cpu };
    ggml_backend_t wrong_order[2] = { cpu, test };
    TH_CHECK(ggml_backend_sched_new(wrong_order, NULL, 2, 1024, false, true) == NULL, "the last backend must be the CPU");

    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 1024, false, true);
    TH_CHECK(sched != NULL, "sched with TEST + CPU");
    TH_CHECK(ggml_backend_sched_get_buffer_type(sched, test) == test_buft(), "buffer type of TEST");

    struct test_graph g;
    build_test_graph(&g, NE);
    memset(&g_test, 0, sizeof(g_test));
    struct eval_state st = { &g, 0, 0, 0, 0, -1, NULL, sched };
    ggml_backend_sched_set_eval_callback(sched, eval_cb, &st);
    TH_CHECK(ggml_backend_sched_alloc_graph(sched, g.gf), "alloc");
    // a (add) TEST | b (silu) CPU | c (mul) TEST | d (scale) CPU | e (add) TEST | out (sqr) CPU
    TH_CHECK(ggml_backend_sched_get_n_splits(sched) == 6, "six splits (got %d)", ggml_backend_sched_get_n_splits(sched));
    const bool on_test[6] = { true, false, true, false, true, false };
    for (int k = 0; k < 6; k++) {
        TH_EXPECT(ggml_backend_sched_get_tensor_backend(sched, g.nodes[k]) == (on_test[k] ? test : cpu),
                  "node %s on %s", g.nodes[k]->name, ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, g.nodes[k])));
        const struct ggml_tensor * n = g.nodes[k];
        TH_EXPECT((n->buffer != NULL && n->buffer->buft == test_buft()) == on_test[k], "node %s memory", n->name);
    }
    set_inputs(&g);
    TH_CHECK(ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS, "compute");
    // intermediate results were checked by the callback as they were produced (their memory is reused)
    TH_CHECK(check_node(&g, 5, "TEST+CPU") == 0, "TEST+CPU scheduler result equals the reference");
    TH_CHECK(g_test.n_nodes == 3 && g_test.n_unsupported == 0, "TEST ran %d nodes (%d unsupported)",
             g_test.n_nodes, g_test.n_unsupported);
    TH_CHECK(g_test.n_foreign_srcs == 0, "TEST read only its own memory (%d foreign)", g_test.n_foreign_srcs);
    TH_CHECK(st.host_violations == 0, "CPU read only host memory (%d violations)", st.host_violations);
    TH_CHECK(st.n_ask == 6 && st.n_observed == 6 && st.bad_values == 0, "callback across backends (%d/%d, %d bad)",
             st.n_ask, st.n_observed, st.bad_values);
    // copies into TEST: x, y (for a), b (for c), d, x (for e); out of TEST: a (b), c (d), e (out)
    TH_CHECK(g_test.n_set == 5, "copies into TEST: %d, want 5", g_test.n_set);
    TH_CHECK(g_test.n_get >= 3, "copies out of TEST: %d", g_test.n_get);
    TH_CHECK(ggml_backend_sched_get_buffer_size(sched, test) > 0 && ggml_backend_sched_get_buffer_size(sched, cpu) > 0,
             "both backends have compute buffers");

    // the caller's graph is unchanged: the srcs are the original tensors again
    TH_CHECK(g.nodes[0]->src[0] == g.x && g.nodes[0]->src[1] == g.y && g.nodes[2]->src[0] == g.nodes[1],
             "srcs restored after compute");
    ggml_backend_sched_set_eval_callback(sched, NULL, NULL);
    ggml_free(g.ctx);

    // weights: ops on weights run where the weights are, unless the TEST backend asks to take them
    for (int offload = 0; offload < 2; offload++) {
        ggml_backend_sched_reset(sched);
        g_test.offload_mul = offload != 0;
        struct ggml_context * wctx = new_ctx(4);
        struct ggml_tensor * w = ggml_new_tensor_1d(wctx, GGML_TYPE_F32, NE);
        ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors(wctx, cpu);
        ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        float wv[NE];
        for (int i = 0; i < NE; i++) {
            wv[i] = rng_float();
        }
        ggml_backend_tensor_set(w, wv, 0, sizeof(wv));

        struct ggml_context * ctx = new_ctx(16);
        struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, NE);
        ggml_set_input(x);
        struct ggml_tensor * m = ggml_mul(ctx, w, x);
        struct ggml_tensor * o = ggml_add(ctx, m, m);
        struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 64, false);
        ggml_build_forward_expand(gf, o);
        TH_CHECK(ggml_backend_sched_alloc_graph(sched, gf), "alloc weights graph");
        TH_CHECK(ggml_backend_sched_get_tensor_backend(sched, m) == (offload ? test : cpu),
                 "mul with weights on %s (offload %d)", ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, m)), offload);
        float xv[NE], ov[NE];
        for (int i = 0; i < NE; i++) {
            xv[i] = rng_float();
        }
        ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
        TH_CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS, "compute");
        ggml_backend_tensor_get(o, ov, 0, sizeof(ov));
        int wbad = 0;
        for (int i = 0; i < NE; i++) {
            const double want = 2.0 * (float) ((double) wv[i] * xv[i]);
            wbad += !close_to(ov[i], want, 1e-6);
        }
        TH_CHECK(wbad == 0, "weights graph result (offload %d)", offload);
        ggml_free(ctx);
        ggml_backend_buffer_free(wbuf);
        ggml_free(wctx);
    }
    g_test.offload_mul = false;

    ggml_backend_sched_free(sched);
    ggml_backend_free(cpu);
    ggml_backend_free(test);
}

// views (non-contiguous) of tensors of one backend read by the other
static void test_sched_views(void) {
    ggml_backend_t test = test_dev_init(&g_test_dev, NULL);
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_t backends[2] = { test, cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, false, false);
    memset(&g_test, 0, sizeof(g_test));

    struct ggml_context * ctx = new_ctx(32);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 4);
    ggml_set_input(x);
    struct ggml_tensor * a = ggml_add(ctx, x, x);                                              // TEST
    struct ggml_tensor * v = ggml_view_2d(ctx, a, 4, 4, a->nb[1], 4 * sizeof(float));         // right half of a
    struct ggml_tensor * c = ggml_mul(ctx, v, v);                                              // TEST, reads v in place
    struct ggml_tensor * b = ggml_cont(ctx, v);                                                // CPU, needs a copy of v
    struct ggml_tensor * w = ggml_view_2d(ctx, b, 2, 4, b->nb[1], 2 * sizeof(float));         // right half of b
    struct ggml_tensor * d = ggml_mul(ctx, w, w);                                              // TEST, needs a copy of w
    ggml_set_output(c);
    ggml_set_output(d);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(gf, c);
    ggml_build_forward_expand(gf, d);

    TH_CHECK(ggml_backend_sched_alloc_graph(sched, gf), "alloc");
    TH_CHECK(ggml_backend_sched_get_n_splits(sched) == 3, "TEST | CPU | TEST (got %d splits)", ggml_backend_sched_get_n_splits(sched));
    TH_CHECK(ggml_backend_sched_get_tensor_backend(sched, c) == test && ggml_backend_sched_get_tensor_backend(sched, b) == cpu &&
             ggml_backend_sched_get_tensor_backend(sched, d) == test, "assignment");
    float xv[32];
    for (int i = 0; i < 32; i++) {
        xv[i] = rng_float();
    }
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    TH_CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS, "compute");
    float cv[16], dv[8];
    ggml_backend_tensor_get(c, cv, 0, sizeof(cv));
    ggml_backend_tensor_get(d, dv, 0, sizeof(dv));
    int bad = 0;
    for (int r = 0; r < 4; r++) {
        for (int k = 0; k < 4; k++) {
            const double vv = (float) (2.0 * xv[r * 8 + 4 + k]);
            bad += !close_to(cv[r * 4 + k], vv * vv, 1e-6);
        }
        for (int k = 0; k < 2; k++) {
            const double ww = (float) (2.0 * xv[r * 8 + 6 + k]);
            bad += !close_to(dv[r * 2 + k], ww * ww, 1e-6);
        }
    }
    TH_CHECK(bad == 0, "values through views across backends (%d wrong)", bad);
    TH_CHECK(g_test.n_foreign_srcs == 0 && g_test.n_unsupported == 0, "TEST read only its memory (%d foreign)", g_test.n_foreign_srcs);

    ggml_free(ctx);
    ggml_backend_sched_free(sched);
    ggml_backend_free(cpu);
    ggml_backend_free(test);
}

// weights in caller memory (as an mmap'd model is), used by mul_mat through the scheduler
static void test_sched_weights_from_ptr(void) {
    enum { K = 24, M = 10, N = 3 };
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 2);
    float * wmem = aligned_alloc(64, 64 * 64);
    ggml_backend_buffer_t wbuf = ggml_backend_cpu_buffer_from_ptr(wmem, 64 * 64);
    ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    for (int i = 0; i < K * M; i++) {
        wmem[i] = rng_float();
    }
    struct ggml_context * wctx = new_ctx(2);
    struct ggml_tensor * w = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, K, M);
    TH_CHECK(ggml_backend_tensor_alloc(wbuf, w, wmem) == GGML_STATUS_SUCCESS, "weights placed in caller memory");

    ggml_backend_sched_t sched = ggml_backend_sched_new(&cpu, NULL, 1, 64, false, true);
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    ggml_set_input(x);
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x); // [M, N]
    struct ggml_tensor * z = ggml_scale(ctx, y, 0.5f);
    ggml_set_output(z);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(gf, z);
    TH_CHECK(ggml_backend_sched_alloc_graph(sched, gf), "alloc");
    TH_CHECK(ggml_backend_sched_get_tensor_backend(sched, y) == cpu, "mul_mat where the weights are");
    float xv[K * N], zv[M * N];
    for (int i = 0; i < K * N; i++) {
        xv[i] = rng_float();
    }
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    TH_CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS, "compute");
    ggml_backend_tensor_get(z, zv, 0, sizeof(zv));
    int bad = 0;
    for (int j = 0; j < N; j++) {
        for (int i = 0; i < M; i++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++) {
                acc += (double) wmem[i * K + k] * xv[j * K + k];
            }
            bad += !close_to(zv[j * M + i], 0.5 * acc, 1e-5);
        }
    }
    TH_CHECK(bad == 0, "mul_mat through the scheduler (%d wrong)", bad);
    ggml_free(ctx);
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(wbuf);
    free(wmem);
    ggml_free(wctx);
    ggml_backend_free(cpu);
}

int main(void) {
    test_registry();
    test_buffers();
    test_tensor_data();
    test_cpu_compute();
    test_compare_backends();
    test_sched_one_backend();
    test_sched_two_cpus();
    test_sched_test_backend();
    test_sched_views();
    test_sched_weights_from_ptr();
    return th_finish();
}
