// Sampling cost per token: llama.cpp's default chain (top-k 40, top-p 0.95, min-p 0.05, temp 0.8, dist) on the
// CPU path (llama_sampler_apply over the full vocabulary) versus the same chain as a backend subgraph (build the
// row subgraph, allocate, set inputs, compute on the CPU backend, read the token) for 2048- and 152064-entry
// vocabularies with synthetic logits. The backend time is also split into graph build + allocation and compute
// (the in-graph ops: TOP_K selection, the ARGSORT of top-p, softmax, cumsum). Without top-k (top_k 0), top-p has to
// sort the whole vocabulary in the graph. A benchmark, not a test: it prints numbers and asserts nothing.
//
// Times are process CPU time by default (on a shared, loaded machine wall time mostly measures the other
// processes); set BENCH_WALL=1 for wall-clock time (and with n_threads > 1, where CPU time counts every thread).
//
// usage: bench-backend-sampler [n_iter] [n_threads] [top_k (default: 40, then 0 = none)]
#include "llama.h"
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int g_top_k = 40;
static bool g_wall = false;

static int64_t now_us(void) {
    if (g_wall) {
        return ggml_time_us();
    }
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct llama_sampler * make_chain(void) {
    struct llama_sampler * c = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(c, llama_sampler_init_top_k(g_top_k));
    llama_sampler_chain_add(c, llama_sampler_init_top_p(0.95f, 1));
    llama_sampler_chain_add(c, llama_sampler_init_min_p(0.05f, 1));
    llama_sampler_chain_add(c, llama_sampler_init_temp(0.8f));
    llama_sampler_chain_add(c, llama_sampler_init_dist(1234));
    return c;
}

// Zipf-like logits: a few likely tokens and a long tail, as a language model gives
static void fill_logits(float * x, int n, unsigned * state) {
    for (int i = 0; i < n; i++) {
        *state = *state * 1664525u + 1013904223u;
        const float noise = (float) (*state >> 8) / 16777216.0f;
        x[i] = -logf((float) (i % 997) + 1.0f) * 2.0f + noise;
    }
}

static double bench_cpu(const float * logits, int n, int n_iter) {
    struct llama_sampler * c = make_chain();
    llama_token_data * d = malloc((size_t) n * sizeof(*d));
    long sink = 0;
    const int64_t t0 = now_us();
    for (int it = 0; it < n_iter; it++) {
        for (int i = 0; i < n; i++) {
            d[i].id = i;
            d[i].logit = logits[i];
            d[i].p = 0.0f;
        }
        llama_token_data_array a = { d, (size_t) n, -1, false };
        llama_sampler_apply(c, &a);
        sink += a.selected >= 0 ? a.data[a.selected].id : 0;
        llama_sampler_accept(c, a.data[a.selected].id);
    }
    const double us = (double) (now_us() - t0) / n_iter;
    free(d);
    llama_sampler_free(c);
    return sink >= 0 ? us : -us;
}

static double bench_backend(const float * logits, int n, int n_iter, int n_threads, double * us_compute) {
    struct llama_sampler * c = make_chain();
    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, n_threads);
    c->iface->backend_init(c, ggml_backend_cpu_buffer_type(), 1);
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    const size_t max_nodes = 512;
    long sink = 0;
    int64_t t_compute = 0;
    const int64_t t0 = now_us();
    for (int it = 0; it < n_iter; it++) {
        // the decode rebuilds its graph every ubatch, so the build and allocation are part of the cost
        struct ggml_init_params ip = { max_nodes * ggml_tensor_overhead() + ggml_graph_overhead_custom(max_nodes, false), NULL, true };
        struct ggml_context * ctx = ggml_init(ip);
        struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, max_nodes, false);
        struct llama_sampler_data data = { NULL, NULL, NULL, NULL };
        struct ggml_tensor * inp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
        ggml_set_input(inp);
        data.logits = inp;
        c->iface->backend_reset(c);
        c->iface->backend_apply(c, ctx, gf, &data);
        ggml_set_output(data.sampled);
        ggml_build_forward_expand(gf, data.sampled);
        if (!ggml_gallocr_alloc_graph(galloc, gf)) {
            fprintf(stderr, "allocation failed\n");
            return -1.0;
        }
        // in a decode the logits are already in the graph; the upload stands in for the output head
        ggml_backend_tensor_set(inp, logits, 0, (size_t) n * sizeof(float));
        c->iface->backend_set_input(c);
        const int64_t tc = now_us();
        ggml_backend_graph_compute(be, gf);
        t_compute += now_us() - tc;
        llama_token tok = 0;
        ggml_backend_tensor_get(data.sampled, &tok, 0, sizeof(tok));
        llama_sampler_accept(c, tok);
        sink += tok;
        ggml_free(ctx);
    }
    const double us = (double) (now_us() - t0) / n_iter;
    *us_compute = (double) t_compute / n_iter;
    c->iface->backend_reset(c);
    ggml_gallocr_free(galloc);
    ggml_backend_free(be);
    llama_sampler_free(c);
    return sink >= 0 ? us : -us;
}

int main(int argc, char ** argv) {
    const int n_iter = argc > 1 ? atoi(argv[1]) : 200;
    const int n_threads = argc > 2 ? atoi(argv[2]) : 1;
    const int ks[2] = { argc > 3 ? atoi(argv[3]) : 40, 0 };
    const int n_k = argc > 3 ? 1 : 2;
    ggml_time_init();
    g_wall = getenv("BENCH_WALL") != NULL && atoi(getenv("BENCH_WALL")) != 0;
    const int vocabs[2] = { 2048, 152064 };
    for (int ki = 0; ki < n_k; ki++) {
        g_top_k = ks[ki];
        printf("chain: top_k %d > top_p 0.95 > min_p 0.05 > temp 0.8 > dist; %d iterations, %d thread(s), %s time\n",
               g_top_k, n_iter, n_threads, g_wall ? "wall" : "CPU");
        for (int v = 0; v < 2; v++) {
            const int n = vocabs[v];
            float * logits = malloc((size_t) n * sizeof(float));
            unsigned st = 42;
            fill_logits(logits, n, &st);
            // fewer rounds for the slow full-vocabulary sorts
            const int it = g_top_k == 0 && n > 100000 ? (n_iter + 9) / 10 : n_iter;
            double comp = 0.0;
            const double cpu = bench_cpu(logits, n, it);
            const double bk = bench_backend(logits, n, it, n_threads, &comp);
            printf("  n_vocab %6d: CPU chain %9.1f us/token | backend chain %9.1f us/token (compute %9.1f, build + "
                   "alloc + io %7.1f)\n", n, cpu, bk, comp, bk - comp);
            free(logits);
        }
    }
    return 0;
}
