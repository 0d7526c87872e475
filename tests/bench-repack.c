// Throughput of the interleaved gemvs (ggml/src/ggml-cpu/repack.h) against the type's vec_dot on the active
// ISA (GGML_CPU_ISA selects another), one thread, weights hot (the same matrix every time: in cache when it is
// small), best of N: what decides whether a type is worth repacking is the kernel's speed where memory does
// not limit it. The gemv is called per chunk of about 32 KiB of weights (at least one group), as the mat-vec of
// ops-matmul.c calls it; the activation row is converted once, outside the timing. Also checks that the gemv
// gives the bits of the scalar vec_dot (the ISA's own vec_dot may round differently).
// Then the MUL_MAT op on a batch of N columns (prompt processing: the GEMM, which reads repacked weights
// through an unpack per tile of rows) with the weights in a plain CPU buffer and in a CPU_REPACK one, same
// conditions (one thread, hot, best of reps), so that repacking a type does not cost its prompts. Not a test.
// usage: bench-repack [types,comma,separated] [NE0xNE1] [reps] [N]
//        (default: the table's types, 4096x4096, 50, 64)
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-cpu/ggml-cpu-kernels.h"
#include "ggml-cpu/repack.h"
#include "ggml.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now_s(void) {
    return 1e-6 * (double) ggml_time_us();
}

static float frand(uint64_t * s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float) ((*s >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

// one MUL_MAT of the weights (plain rows w) in a buffer of buft with n columns x, on one thread
struct mm_case {
    struct ggml_context * cw, * ctx;
    ggml_backend_buffer_t bw, bx;
    ggml_backend_t        be;
    struct ggml_cgraph *  gf;
};

static void mm_case_init(struct mm_case * c, enum ggml_type type, ggml_backend_buffer_type_t buft, const void * w,
                         const float * x, int64_t ne0, int64_t ne1, int64_t n) {
    struct ggml_init_params ip = { ggml_tensor_overhead() * 8 + ggml_graph_overhead(), NULL, true };
    c->cw  = ggml_init(ip);
    c->ctx = ggml_init(ip);
    struct ggml_tensor * wt = ggml_new_tensor_2d(c->cw, type, ne0, ne1);
    c->bw = ggml_backend_alloc_ctx_tensors_from_buft(c->cw, buft);
    ggml_backend_tensor_set(wt, w, 0, ggml_nbytes(wt));
    struct ggml_tensor * xt = ggml_new_tensor_2d(c->ctx, GGML_TYPE_F32, ne0, n);
    c->gf = ggml_new_graph(c->ctx);
    ggml_build_forward_expand(c->gf, ggml_mul_mat(c->ctx, wt, xt));
    c->bx = ggml_backend_alloc_ctx_tensors_from_buft(c->ctx, ggml_backend_cpu_buffer_type());
    ggml_backend_tensor_set(xt, x, 0, ggml_nbytes(xt));
    c->be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(c->be, 1);
}

static double mm_case_run(struct mm_case * c) {
    const double t0 = now_s();
    ggml_backend_graph_compute(c->be, c->gf);
    return now_s() - t0;
}

static void mm_case_free(struct mm_case * c) {
    ggml_backend_free(c->be);
    ggml_backend_buffer_free(c->bx);
    ggml_backend_buffer_free(c->bw);
    ggml_free(c->ctx);
    ggml_free(c->cw);
}

static void bench(enum ggml_type type, int64_t ne0, int64_t ne1, int reps, int64_t n) {
    const struct ggml_cpu_repack_traits * tr = ggml_cpu_repack_get_traits(type);
    if (tr == NULL || ne0 % ggml_blck_size(type) != 0 || ne1 % GGML_CPU_REPACK_ROWS != 0) {
        printf("%-6s %lldx%lld: no interleaved layout for this type or shape\n", ggml_type_name(type), (long long) ne0,
               (long long) ne1);
        return;
    }
    const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(type);
    const struct ggml_cpu_type_kernels * kv = ggml_cpu_get_kernels(k->vec_dot_type);
    const size_t rs = ggml_row_size(type, ne0);
    const size_t bytes = rs * (size_t) ne1;
    float * f = malloc(sizeof(float) * (size_t) (ne0 * ne1));
    uint8_t * w = malloc(bytes), * wr = malloc(bytes), * y = malloc(ggml_row_size(k->vec_dot_type, ne0));
    float * s0 = malloc(sizeof(float) * (size_t) ne1), * s1 = malloc(sizeof(float) * (size_t) ne1);
    uint64_t seed = 42;
    for (int64_t i = 0; i < ne0 * ne1; i++) {
        f[i] = frand(&seed);
    }
    ggml_quantize_chunk(type, f, w, 0, ne1, ne0, NULL);
    tr->repack(w, wr, ne1, ne0);
    kv->from_float(f, y, ne0);

    const ggml_cpu_repack_gemv_t gemv = ggml_cpu_repack_gemv(type, -1);
    const int64_t ngroups = ne1 / GGML_CPU_REPACK_ROWS;
    int64_t per = (32 * 1024) / (int64_t) (GGML_CPU_REPACK_ROWS * rs);
    per = per < 1 ? 1 : per;
    double best_vd = 1e30, best_gv = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = now_s();
        for (int64_t r = 0; r < ne1; r++) {
            k->vec_dot((int) ne0, &s0[r], w + (size_t) r * rs, y);
        }
        double dt = now_s() - t0;
        best_vd = dt < best_vd ? dt : best_vd;
        t0 = now_s();
        for (int64_t g = 0; g < ngroups; g += per) {
            const int64_t ng = ngroups - g < per ? ngroups - g : per;
            gemv(ne0, s1 + g * GGML_CPU_REPACK_ROWS, wr + (size_t) (g * GGML_CPU_REPACK_ROWS) * rs, y, ng);
        }
        dt = now_s() - t0;
        best_gv = dt < best_gv ? dt : best_gv;
    }
    for (int64_t r = 0; r < ne1; r++) {
        ggml_cpu_get_kernels_isa(type, GGML_CPU_ISA_SCALAR)->vec_dot((int) ne0, &s0[r], w + (size_t) r * rs, y);
    }
    const bool same = memcmp(s0, s1, sizeof(float) * (size_t) ne1) == 0;
    printf("%-6s %lldx%lld (%.1f MB) 1 thread, hot, best of %d: vec_dot %6.1f GB/s | repacked gemv %6.1f GB/s "
           "(x%.2f)%s\n", ggml_type_name(type), (long long) ne0, (long long) ne1, (double) bytes / 1e6, reps,
           (double) bytes / best_vd / 1e9, (double) bytes / best_gv / 1e9, best_vd / best_gv,
           same ? "" : "  GEMV DIFFERS FROM THE SCALAR VEC_DOT");

    const int op_reps = reps < 20 ? reps : 20;
    float * x = malloc(sizeof(float) * (size_t) (ne0 * n));
    for (int64_t i = 0; i < ne0 * n; i++) {
        x[i] = frand(&seed);
    }
    // the two alternate, so that a busy machine slows both alike; the first run of each warms up
    struct mm_case plain, packed;
    mm_case_init(&plain, type, ggml_backend_cpu_buffer_type(), w, x, ne0, ne1, n);
    mm_case_init(&packed, type, ggml_backend_cpu_repack_buffer_type(), w, x, ne0, ne1, n);
    double t_plain = 1e30, t_rep = 1e30;
    for (int rep = 0; rep <= op_reps; rep++) {
        const double tp = mm_case_run(&plain), tk = mm_case_run(&packed);
        t_plain = rep > 0 && tp < t_plain ? tp : t_plain;
        t_rep = rep > 0 && tk < t_rep ? tk : t_rep;
    }
    mm_case_free(&plain);
    mm_case_free(&packed);
    const double flop = 2.0 * (double) ne0 * (double) ne1 * (double) n;
    printf("%-6s mul_mat N=%lld 1 thread, best of %d: plain %6.1f GFLOP/s | CPU_REPACK %6.1f GFLOP/s (x%.2f)%s\n",
           ggml_type_name(type), (long long) n, op_reps, flop / t_plain / 1e9, flop / t_rep / 1e9, t_plain / t_rep,
           ggml_cpu_repack_supported(&(struct ggml_tensor) { .type = type, .ne = { ne0, ne1, 1, 1 },
                                                              .nb = { ggml_type_size(type), rs, bytes, bytes } })
               ? "" : "  (type not enabled: both plain)");
    free(x); free(f); free(w); free(wr); free(y); free(s0); free(s1);
}

int main(int argc, char ** argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    ggml_cpu_init();
    long long ne0 = 4096, ne1 = 4096;
    int reps = 50;
    long long n = 64;
    if (argc > 2 && (sscanf(argv[2], "%lldx%lld", &ne0, &ne1) != 2 || ne0 < 256 || ne0 > (1 << 16) || ne1 < 16 ||
                     ne1 > (1 << 18))) {
        fprintf(stderr, "shape must be NE0xNE1 with NE0 in 256..65536, NE1 in 16..262144\n");
        return 1;
    }
    if (argc > 3 && (reps = atoi(argv[3])) < 1) {
        fprintf(stderr, "reps must be at least 1\n");
        return 1;
    }
    if (argc > 4 && ((n = atoll(argv[4])) < 1 || n > 4096)) {
        fprintf(stderr, "N must be 1..4096\n");
        return 1;
    }
    printf("repacked gemv vs vec_dot: ISA %s\n", ggml_cpu_isa_name(ggml_cpu_isa_active()));
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", argc > 1 && argv[1][0] != 0 ? argv[1] : "q4_0,q8_0,q4_K,q6_K");
    for (char * tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        enum ggml_type type = GGML_TYPE_COUNT;
        for (int t = 0; t < GGML_TYPE_COUNT; t++) {
            const char * name = ggml_type_name((enum ggml_type) t);
            if (name != NULL && strcmp(name, tok) == 0) {
                type = (enum ggml_type) t;
            }
        }
        if (type == GGML_TYPE_COUNT) {
            fprintf(stderr, "unknown type %s\n", tok);
            continue;
        }
        bench(type, ne0, ne1, reps, n);
    }
    return 0;
}
