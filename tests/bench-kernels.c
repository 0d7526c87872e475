// Throughput of the CPU kernels on the active ISA (GGML_CPU_ISA selects another), not a test:
//   - read bandwidth of this machine, measured here: a STREAM-like sum over a 1 GiB array, best of 5 (plain
//     64-bit loads and the F32 dot kernel's vector loads; the faster counts);
//   - matvec (one column) per type and weight shape (4096 x 4096, and 2048 x 5632 as a TinyLlama FFN) on 1 and
//     2 threads: GB/s of weights and GFLOP/s, "hot" (one matrix, cache-resident when small) and "stream"
//     (cycling through copies of the matrix that together exceed the caches, as token generation does with a
//     model's weights);
//   - batches of 8 and 512 columns (weights reused from cache across columns, 4096 x 4096 only): GFLOP/s with
//     vec_dot per column, and with the batched vec_dot_mc where the type has one ("mc").
// Numbers are only meaningful on an otherwise idle machine (the threads spin while they wait).
// usage: bench-kernels [types,comma,separated] [threads] [NE0xNE1]
//        (default: a standard set, threads 1 and 2, both shapes)
#include "ggml-cpu/ggml-cpu-kernels.h"
#include "ggml.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the weight shape being measured: NE1 rows of NE0 elements (set per shape in main)
static int NE0 = 4096;
static int NE1 = 4096;

static double now_s(void) {
    return 1e-6 * (double) ggml_time_us();
}

// ---- a minimal persistent thread team: thread 0 is the caller, the others spin on a generation counter -----

typedef void (*job_fn)(int ith, int nth, void * arg);

struct team {
    int             nth;
    pthread_t       threads[64];
    atomic_int      gen;
    atomic_int      done;
    atomic_int      quit;
    job_fn          fn;
    void *          arg;
};

struct worker_arg {
    struct team * t;
    int           ith;
};

static struct worker_arg g_wargs[64];

static void * worker_main(void * p) {
    struct worker_arg * wa = p;
    struct team * t = wa->t;
    int seen = 0;
    for (;;) {
        int g;
        int spins = 0;
        while ((g = atomic_load_explicit(&t->gen, memory_order_acquire)) == seen) {
            if (atomic_load_explicit(&t->quit, memory_order_relaxed)) {
                return NULL;
            }
            // on a shared machine a waiting thread must not keep the core from the one it waits for
            if (++spins > 2000) {
                sched_yield();
            }
        }
        seen = g;
        t->fn(wa->ith, t->nth, t->arg);
        atomic_fetch_add_explicit(&t->done, 1, memory_order_acq_rel);
    }
}

static void team_start(struct team * t, int nth) {
    memset(t, 0, sizeof(*t));
    t->nth = nth;
    for (int i = 1; i < nth; ++i) {
        g_wargs[i].t   = t;
        g_wargs[i].ith = i;
        pthread_create(&t->threads[i], NULL, worker_main, &g_wargs[i]);
    }
}

static void team_run(struct team * t, job_fn fn, void * arg) {
    t->fn  = fn;
    t->arg = arg;
    atomic_store_explicit(&t->done, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->gen, 1, memory_order_acq_rel);
    fn(0, t->nth, arg);
    int spins = 0;
    while (atomic_load_explicit(&t->done, memory_order_acquire) != t->nth - 1) {
        if (++spins > 2000) {
            sched_yield();
        }
    }
}

static void team_stop(struct team * t) {
    atomic_store(&t->quit, 1);
    for (int i = 1; i < t->nth; ++i) {
        pthread_join(t->threads[i], NULL);
    }
}

// ---- memory read bandwidth ---------------------------------------------------------------------------------

struct bw_job {
    const uint64_t * data;
    size_t           n;
    uint64_t         sink[64 * 8];
};

static void bw_fn(int ith, int nth, void * arg) {
    struct bw_job * j = arg;
    const size_t i0 = j->n * (size_t) ith / (size_t) nth;
    const size_t i1 = j->n * (size_t) (ith + 1) / (size_t) nth;
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
    size_t i = i0;
    for (; i + 8 <= i1; i += 8) {
        a0 += j->data[i + 0]; a1 += j->data[i + 1]; a2 += j->data[i + 2]; a3 += j->data[i + 3];
        a4 += j->data[i + 4]; a5 += j->data[i + 5]; a6 += j->data[i + 6]; a7 += j->data[i + 7];
    }
    j->sink[ith * 8] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

// the same read with the widest loads available: the F32 dot kernel of a chunk with itself (each cache line
// is fetched once; both operands hit it)
static void bw_fn_simd(int ith, int nth, void * arg) {
    struct bw_job * j = arg;
    const size_t nf = j->n * 2;
    const size_t i0 = nf * (size_t) ith / (size_t) nth;
    const size_t i1 = nf * (size_t) (ith + 1) / (size_t) nth;
    const ggml_cpu_vec_dot_t dot = ggml_cpu_get_kernels(GGML_TYPE_F32)->vec_dot;
    const float * f = (const float *) j->data;
    const size_t chunk = 1 << 16;
    float acc = 0.0f;
    for (size_t i = i0; i < i1; i += chunk) {
        const size_t len = i1 - i < chunk ? i1 - i : chunk;
        float s;
        dot((int) len, &s, f + i, f + i);
        acc += s;
    }
    memcpy(&j->sink[ith * 8], &acc, sizeof(acc));
}

static double measure_bandwidth(struct team * t, const uint64_t * data, size_t bytes) {
    struct bw_job j = { .data = data, .n = bytes / 8 };
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
        double t0 = now_s();
        team_run(t, bw_fn, &j);
        double dt = now_s() - t0;
        best = dt < best ? dt : best;
        t0 = now_s();
        team_run(t, bw_fn_simd, &j);
        dt = now_s() - t0;
        best = dt < best ? dt : best;
    }
    return (double) bytes / best / 1e9;
}

// ---- matvec / batched products ---------------------------------------------------------------------------------

struct mm_job {
    const struct ggml_cpu_type_kernels * k;
    const uint8_t * w;        // NE1 rows
    size_t          row_bytes;
    const uint8_t * act;      // ncols activation rows
    size_t          act_bytes;
    int             ncols;
    float *         out;      // [ncols][NE1]
    bool            use_mc;   // use vec_dot_mc for batches when the type has it
};

static void mm_fn(int ith, int nth, void * arg) {
    struct mm_job * j = arg;
    const int r0 = NE1 * ith / nth;
    const int r1 = NE1 * (ith + 1) / nth;
    if (j->ncols == 1) {
        for (int r = r0; r < r1; ++r) {
            j->k->vec_dot(NE0, &j->out[r], j->w + (size_t) r * j->row_bytes, j->act);
        }
        return;
    }
    // a tile of weight rows stays in L1/L2 while every column passes over it; with a batched kernel each
    // weight row meets GGML_CPU_MC_MAX columns per call
    // (columns go in blocks of 64 so that their activations stay in L2 while the rows pass)
    const int tile = 16;
    for (int cb = 0; cb < j->ncols; cb += 64) {
    const int ce = cb + 64 < j->ncols ? cb + 64 : j->ncols;
    for (int rb = r0; rb < r1; rb += tile) {
        const int re = rb + tile < r1 ? rb + tile : r1;
        for (int c0 = cb; c0 < ce; c0 += GGML_CPU_MC_MAX) {
            const int nc = ce - c0 < GGML_CPU_MC_MAX ? ce - c0 : GGML_CPU_MC_MAX;
            const uint8_t * a = j->act + (size_t) c0 * j->act_bytes;
            for (int r = rb; r < re; ++r) {
                const uint8_t * wr = j->w + (size_t) r * j->row_bytes;
                if (j->use_mc && j->k->vec_dot_mc) {
                    float tmp[GGML_CPU_MC_MAX];
                    j->k->vec_dot_mc(NE0, tmp, wr, a, j->act_bytes, nc);
                    for (int c = 0; c < nc; ++c) {
                        j->out[(size_t) (c0 + c) * NE1 + r] = tmp[c];
                    }
                } else {
                    for (int c = 0; c < nc; ++c) {
                        j->k->vec_dot(NE0, &j->out[(size_t) (c0 + c) * NE1 + r], wr, a + (size_t) c * j->act_bytes);
                    }
                }
            }
        }
    }
    }
}

static size_t type_row_bytes(enum ggml_type t, int64_t n) {
    return ggml_type_size(t) * (size_t) (n / ggml_blck_size(t));
}

static float frand(uint64_t * s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float) ((*s >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

static void bench_type(enum ggml_type type, const int * threads, int n_threads_cfg, const uint64_t * big,
                       size_t big_bytes, size_t stream_bytes, bool batches_too) {
    const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(type);
    if (!k->vec_dot || k->vec_dot_type >= GGML_TYPE_COUNT || !k->from_float) {
        printf("%-7s (no kernels)\n", ggml_type_name(type));
        return;
    }
    const struct ggml_cpu_type_kernels * kv = ggml_cpu_get_kernels(k->vec_dot_type);
    const size_t rb = type_row_bytes(type, NE0);
    const size_t mat_bytes = rb * NE1;
    const int n_copies = (int) ((stream_bytes + mat_bytes - 1) / mat_bytes) + 1;

    // one random row quantized with the type's own from_float, replicated: values do not change the timing
    uint64_t seed = 1234;
    float * xf = malloc(sizeof(float) * NE0 * 512);
    for (size_t i = 0; i < (size_t) NE0 * 512; ++i) {
        xf[i] = frand(&seed);
    }
    uint8_t * row = malloc(rb);
    k->from_float(xf, row, NE0);
    uint8_t * w = malloc(mat_bytes * (size_t) n_copies);
    if (!w) {
        printf("%-7s: cannot allocate %zu MB\n", ggml_type_name(type), mat_bytes * n_copies >> 20);
        free(xf);
        free(row);
        return;
    }
    for (size_t r = 0; r < (size_t) NE1 * n_copies; ++r) {
        memcpy(w + r * rb, row, rb);
    }
    const size_t ab = type_row_bytes(k->vec_dot_type, NE0);
    uint8_t * act = malloc(ab * 512);
    float * out = malloc(sizeof(float) * NE1 * 512);

    for (int ti = 0; ti < n_threads_cfg; ++ti) {
        const int nth = threads[ti];
        struct team t;
        team_start(&t, nth);

        // matvec, hot: the same matrix every time (activation conversion included)
        struct mm_job j = { k, w, rb, act, ab, 1, out, false };
        double best_hot = 1e30;
        for (int rep = 0; rep < 20; ++rep) {
            const double t0 = now_s();
            kv->from_float(xf, act, NE0);
            team_run(&t, mm_fn, &j);
            const double dt = now_s() - t0;
            best_hot = dt < best_hot ? dt : best_hot;
        }
        // the machine may be shared: measure its bandwidth again right before the streaming passes
        const double bw = measure_bandwidth(&t, big, big_bytes);
        // matvec, streaming: cycle through the copies, several passes, best pass
        double best_stream = 1e30;
        for (int pass = 0; pass < 3; ++pass) {
            const double t0 = now_s();
            for (int c = 0; c < n_copies; ++c) {
                j.w = w + (size_t) c * mat_bytes;
                kv->from_float(xf, act, NE0);
                team_run(&t, mm_fn, &j);
            }
            const double dt = (now_s() - t0) / n_copies;
            best_stream = dt < best_stream ? dt : best_stream;
        }
        j.w = w;
        const double flop1 = 2.0 * NE0 * NE1;
        printf("%-7s %dx%d t=%d  matvec hot %7.1f GB/s %6.1f GFLOP/s | stream %6.1f GB/s (%5.1f%% of %.1f GB/s) %5.1f GFLOP/s",
               ggml_type_name(type), NE0, NE1, nth, mat_bytes / best_hot / 1e9, flop1 / best_hot / 1e9,
               mat_bytes / best_stream / 1e9, 100.0 * mat_bytes / best_stream / 1e9 / bw, bw,
               flop1 / best_stream / 1e9);
        if (!batches_too) {
            printf("\n");
            team_stop(&t);
            continue;
        }

        const int batches[] = { 8, 512 };
        for (int bi = 0; bi < 2; ++bi) {
            const int nc = batches[bi];
            j.ncols = nc;
            for (int mc = 0; mc <= (k->vec_dot_mc != NULL); ++mc) {
                j.use_mc = mc != 0;
                double best = 1e30;
                const int reps = nc > 64 ? 3 : 10;
                for (int rep = 0; rep < reps; ++rep) {
                    const double t0 = now_s();
                    for (int c = 0; c < nc; ++c) {
                        kv->from_float(xf + (size_t) c * NE0, act + (size_t) c * ab, NE0);
                    }
                    team_run(&t, mm_fn, &j);
                    const double dt = now_s() - t0;
                    best = dt < best ? dt : best;
                }
                printf(" | b%-3d%s %6.1f GFLOP/s", nc, mc ? " mc" : "", flop1 * nc / best / 1e9);
            }
        }
        j.ncols = 1;
        printf("\n");
        team_stop(&t);
    }
    free(out);
    free(act);
    free(w);
    free(row);
    free(xf);
}

int main(int argc, char ** argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int threads[2] = { 1, 2 };
    int n_threads_cfg = 2;
    if (argc > 2) {
        threads[0] = atoi(argv[2]);
        n_threads_cfg = 1;
        if (threads[0] < 1 || threads[0] > 64) {
            fprintf(stderr, "threads must be 1..64\n");
            return 1;
        }
    }
    int shapes[2][2] = { { 4096, 4096 }, { 2048, 5632 } };
    int n_shapes = 2;
    if (argc > 3) {
        if (sscanf(argv[3], "%dx%d", &shapes[0][0], &shapes[0][1]) != 2 || shapes[0][0] < 256 ||
            shapes[0][0] % 256 != 0 || shapes[0][0] > (1 << 16) || shapes[0][1] < 1 || shapes[0][1] > (1 << 20)) {
            fprintf(stderr, "shape must be NE0xNE1 with NE0 a multiple of 256 (at most 65536), NE1 in 1..1048576\n");
            return 1;
        }
        n_shapes = 1;
    }
    printf("kernels: ISA %s (best %s)\n", ggml_cpu_isa_name(ggml_cpu_isa_active()),
           ggml_cpu_isa_name(ggml_cpu_isa_best()));

    const size_t bw_bytes = (size_t) 1 << 30;
    uint64_t * big = malloc(bw_bytes);
    if (!big) {
        fprintf(stderr, "cannot allocate 1 GiB\n");
        return 1;
    }
    for (size_t i = 0; i < bw_bytes / 8; ++i) {
        big[i] = 0x3f8000003f800000ull + (i & 0xffff); // normal floats for the SIMD reader
    }
    for (int ti = 0; ti < n_threads_cfg; ++ti) {
        struct team t;
        team_start(&t, threads[ti]);
        const double bw = measure_bandwidth(&t, big, bw_bytes);
        team_stop(&t);
        printf("read bandwidth, %d thread(s): %.1f GB/s (1 GiB, best of 5; measured again before each "
               "streaming matvec below)\n", threads[ti], bw);
    }

    const char * list = argc > 1 ? argv[1] : "q4_0,q4_1,q5_0,q5_1,q8_0,iq4_nl,q2_K,q3_K,q4_K,q5_K,q6_K,iq4_xs,f16,bf16,f32";
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char * tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        enum ggml_type type = GGML_TYPE_COUNT;
        for (int ty = 0; ty < GGML_TYPE_COUNT; ++ty) {
            const char * name = ggml_type_name((enum ggml_type) ty);
            if (name && strcmp(name, tok) == 0) {
                type = (enum ggml_type) ty;
            }
        }
        if (type == GGML_TYPE_COUNT) {
            fprintf(stderr, "unknown type %s\n", tok);
            continue;
        }
        for (int si = 0; si < n_shapes; ++si) {
            NE0 = shapes[si][0];
            NE1 = shapes[si][1];
            bench_type(type, threads, n_threads_cfg, big, bw_bytes, (size_t) 256 << 20, si == 0 && argc <= 3);
        }
    }
    free(big);
    return 0;
}
