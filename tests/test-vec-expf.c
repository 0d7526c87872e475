// Vectorized expf and activations (ggml/src/ggml-cpu/vec-expf.h) on the ISA path chosen by GGML_CPU_ISA (one
// ctest per path):
//  1. exp: every float bit pattern with |x| < 88 (the lanes the vector code computes itself) gives exactly
//     libm's expf (any NaN for a NaN), on two threads, in blocks of 4096 consecutive patterns; of the lanes
//     it hands to libm lane by lane (|x| >= 88, +inf, NaN; -inf is its own +0) the blocks at the edges and 1 in 32
//     of the rest. Skipped with --quick (the plain ctest entry: the per-ISA entries run it);
//  2. silu, sigmoid, gelu_quick, swiglu, geglu_quick equal the scalar expressions the ops used to write inline
//     (restated here, with libm's expf) bit for bit, on a few million random inputs of several scales plus
//     specials: ±0, denormals, ±inf, NaN, values around the overflow (88.72) and underflow (-103.97, -103.28)
//     thresholds of expf and around ±88 (where the vector path hands lanes to libm); with every tail length
//     and in place;
//  3. a vector ISA must really use its vector table (the start-up check against libm passed), or checks 1-2
//     would compare libm with itself.
// `test-vec-expf --bench` prints ns per element of every kernel on every path instead (not a test).
#include "harness.h"

#include "ggml-cpu/vec-expf.h"

#include <float.h>
#include <pthread.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static bool same_float(float a, float b) {
    return (isnan(a) && isnan(b)) || bits_of(a) == bits_of(b);
}

// ---- 1. exhaustive expf ---------------------------------------------------------------------------------------

#define EXH_BLOCK 4096
#define EXH_THREADS 2

// Lanes with |x| >= 88 (and inf/NaN) are handed to libm's expf by the vector path, so for them the test
// would spend most of its time comparing expf with itself (libm's overflow/underflow path is slow): every
// block with |x| < 88 is checked, and of the rest the blocks next to 88, to the largest finite value and to
// the infinities/NaN, plus one block in 32 spread over the range.
static bool exh_block_wanted(uint32_t b) {
    const uint32_t a = b & 0x7fffffffu;
    return a < 0x42b00000u + (1u << 20) || (a >= 0x7f7f0000u && a < 0x7f810000u) || a >= 0x7fff0000u ||
           (a / EXH_BLOCK) % 32 == 0;
}

struct exh_job {
    const struct ggml_cpu_expf_kernels * k;
    int      t;            // this thread takes blocks t, t + EXH_THREADS, ...
    uint64_t n_checked, n_bad;
    uint32_t first_bad;
};

static void * exh_run(void * arg) {
    struct exh_job * j = (struct exh_job *) arg;
    static _Thread_local float x[EXH_BLOCK];
    static _Thread_local float y[EXH_BLOCK];
    for (uint64_t b = (uint64_t) j->t * EXH_BLOCK; b < (1ull << 32); b += (uint64_t) EXH_THREADS * EXH_BLOCK) {
        if (!exh_block_wanted((uint32_t) b)) {
            continue;
        }
        for (int i = 0; i < EXH_BLOCK; i++) {
            x[i] = float_of((uint32_t) (b + (uint64_t) i));
        }
        j->k->exp(EXH_BLOCK, y, x);
        for (int i = 0; i < EXH_BLOCK; i++) {
            if (!same_float(y[i], expf(x[i])) && j->n_bad++ == 0) {
                j->first_bad = (uint32_t) (b + (uint64_t) i);
            }
        }
        j->n_checked += EXH_BLOCK;
    }
    return NULL;
}

static void test_exhaustive(const struct ggml_cpu_expf_kernels * k) {
    struct exh_job jobs[EXH_THREADS];
    pthread_t th[EXH_THREADS];
    for (int t = 0; t < EXH_THREADS; t++) {
        jobs[t] = (struct exh_job) { k, t, 0, 0, 0 };
        TH_CHECK(pthread_create(&th[t], NULL, exh_run, &jobs[t]) == 0, "thread %d", t);
    }
    uint64_t n_bad = 0, n_checked = 0;
    for (int t = 0; t < EXH_THREADS; t++) {
        pthread_join(th[t], NULL);
        if (jobs[t].n_bad) {
            // a full vector of the input, so that the vector code (not a scalar tail) computes it
            float xv[16], yv[16];
            for (int i = 0; i < 16; i++) {
                xv[i] = float_of(jobs[t].first_bad);
            }
            k->exp(16, yv, xv);
            const float x = xv[0], y = yv[0];
            fprintf(stderr, "first mismatch: expf(%a = 0x%08x) = %a, vector %a\n", (double) x, jobs[t].first_bad,
                    (double) expf(x), (double) y);
        }
        n_bad += jobs[t].n_bad;
        n_checked += jobs[t].n_checked;
    }
    printf("expf: %llu bit patterns checked (all with |x| < 88), %llu differ\n", (unsigned long long) n_checked,
           (unsigned long long) n_bad);
    // every pattern below 88 in magnitude, both signs
    TH_CHECK(n_checked >= 2ull * 0x42b00000u, "only %llu patterns checked", (unsigned long long) n_checked);
    TH_CHECK(n_bad == 0, "%llu bit patterns differ from libm's expf", (unsigned long long) n_bad);
}

// ---- 2. activations -------------------------------------------------------------------------------------------

static float ref_silu(float x, float g)        { (void) g; return x / (1.0f + expf(-x)); }
static float ref_sigmoid(float x, float g)     { (void) g; return 1.0f / (1.0f + expf(-x)); }
static float ref_gelu_quick(float x, float g)  { (void) g; return x * (1.0f / (1.0f + expf(-1.702f * x))); }
static float ref_swiglu(float x, float g)      { return x / (1.0f + expf(-x)) * g; }
static float ref_geglu_quick(float x, float g) { return x * (1.0f / (1.0f + expf(-1.702f * x))) * g; }
static float ref_exp(float x, float g)         { (void) g; return expf(x); }

enum act { ACT_EXP, ACT_SILU, ACT_SIGMOID, ACT_GELU_QUICK, ACT_SWIGLU, ACT_GEGLU_QUICK, ACT_COUNT };

static const char * act_name[ACT_COUNT] = { "exp", "silu", "sigmoid", "gelu_quick", "swiglu", "geglu_quick" };
static float (*const act_ref[ACT_COUNT])(float, float) = { ref_exp, ref_silu, ref_sigmoid, ref_gelu_quick,
                                                           ref_swiglu, ref_geglu_quick };

static void act_run(const struct ggml_cpu_expf_kernels * k, enum act a, int n, float * o, const float * x,
                    const float * g) {
    switch (a) {
        case ACT_EXP:         k->exp(n, o, x); break;
        case ACT_SILU:        k->silu(n, o, x); break;
        case ACT_SIGMOID:     k->sigmoid(n, o, x); break;
        case ACT_GELU_QUICK:  k->gelu_quick(n, o, x); break;
        case ACT_SWIGLU:      k->swiglu(n, o, x, g); break;
        case ACT_GEGLU_QUICK: k->geglu_quick(n, o, x, g); break;
        default: break;
    }
}

static uint64_t rng = 0x243f6a8885a308d3ull;

static float rnd_unit(void) { // [-1, 1)
    return (float) ((int64_t) (th_xorshift64star(&rng) >> 40) - (1 << 23)) / (float) (1 << 23);
}

// inputs of the kinds the activations see and the kinds that break them
static float rnd_input(void) {
    static const float special[] = {
        0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 0x1.fffffcp-127f, -0x1p-130f, INFINITY, -INFINITY, NAN, -NAN,
        88.0f, -88.0f, 0x1.5fffffp6f, -0x1.5fffffp6f,                  // 88 and its neighbour below
        0x1.62e42ep6f, 0x1.62e430p6f, -0x1.62e42ep6f, -0x1.62e430p6f,  // exp overflow threshold 88.72
        -0x1.9fe368p6f, -0x1.9fe36ap6f, 0x1.9fe368p6f, 0x1.9fe36ap6f,  // underflow threshold -103.97
        -0x1.9d1d9ep6f, -0x1.9d1da0p6f, 0x1.9d1d9ep6f,                 // errno-underflow threshold -103.28
        0x1.2bp5f, -0x1.2bp5f, 52.0f, -52.0f,                          // expf(-1.702 x) overflow region
        FLT_MAX, -FLT_MAX, 1.0f, -1.0f, 0x1p-25f, -0x1p-25f,
    };
    const uint64_t r = th_xorshift64star(&rng);
    switch (r % 8) {
        case 0:  return special[(r >> 8) % (sizeof(special) / sizeof(special[0]))];
        case 1:  return float_of((uint32_t) (r >> 16));                     // any bit pattern
        case 2:  return rnd_unit() * 110.0f;                                // the whole range of expf
        case 3:  return 88.0f * (1.0f + rnd_unit() * 0x1p-10f) * (r & 256 ? 1.0f : -1.0f); // near ±88
        case 4:  return -103.5f + rnd_unit() * 0.6f;                        // the underflow zone
        case 5:  return rnd_unit() * 1e-3f;                                 // tiny
        default: return rnd_unit() * 8.0f;                                  // activations
    }
}

static void test_activations(const struct ggml_cpu_expf_kernels * k, int n_total) {
    enum { N = 4096 };
    static float x[N], g[N], o[N], io[N];
    uint64_t n_bad[ACT_COUNT] = { 0 };
    for (int done = 0; done < n_total; done += N) {
        for (int i = 0; i < N; i++) {
            x[i] = rnd_input();
            g[i] = (i & 7) == 0 ? rnd_input() : rnd_unit() * 4.0f;
        }
        // lengths: a full block, then every tail length 0..33 at shifting offsets (unaligned starts)
        const int off = (done / N) % 64;
        const int len = (done / N) % 4 == 0 ? N - 64 : 1 + (done / N) % 33;
        for (int a = 0; a < ACT_COUNT; a++) {
            act_run(k, (enum act) a, len, o + off, x + off, g + off);
            for (int i = off; i < off + len; i++) {
                const float want = act_ref[a](x[i], g[i]);
                if (!same_float(o[i], want) && n_bad[a]++ < 3) {
                    fprintf(stderr, "%s(%a, %a) = %a, want %a\n", act_name[a], (double) x[i], (double) g[i],
                            (double) o[i], (double) want);
                }
            }
            // in place (o == x): the output overwrites the input it came from
            memcpy(io, x, sizeof(x));
            act_run(k, (enum act) a, len, io + off, io + off, g + off);
            for (int i = off; i < off + len; i++) {
                if (!same_float(io[i], act_ref[a](x[i], g[i])) && n_bad[a]++ < 3) {
                    fprintf(stderr, "%s in place at %d differs\n", act_name[a], i);
                }
            }
        }
    }
    for (int a = 0; a < ACT_COUNT; a++) {
        TH_CHECK(n_bad[a] == 0, "%s: %llu outputs differ from the scalar expression", act_name[a],
                 (unsigned long long) n_bad[a]);
    }
}

// ---- --bench: ns per element of each kernel against the scalar (libm) path ----------------------------------

#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

// median of 9 timings of reps calls on n elements (activations of SiLU's usual scale, in L1)
static double bench_ns(const struct ggml_cpu_expf_kernels * k, enum act a, int n, const float * x, const float * g,
                       float * o) {
    enum { RUNS = 9 };
    double t[RUNS];
    const int reps = 2000;
    for (int r = 0; r < RUNS; r++) {
        const double t0 = now_s();
        for (int i = 0; i < reps; i++) {
            act_run(k, a, n, o, x, g);
        }
        t[r] = (now_s() - t0) * 1e9 / ((double) reps * n);
    }
    for (int i = 1; i < RUNS; i++) { // insertion sort
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            const double tmp = t[j]; t[j] = t[j - 1]; t[j - 1] = tmp;
        }
    }
    return t[RUNS / 2];
}

static int run_bench(void) {
    enum { N = 5632 }; // TinyLlama's FFN width: one SWIGLU row
    static float x[N], g[N], o[N];
    for (int i = 0; i < N; i++) {
        x[i] = rnd_unit() * 6.0f;
        g[i] = rnd_unit() * 2.0f;
    }
    printf("%-12s", "ns/element");
    for (int isa = GGML_CPU_ISA_SCALAR; isa <= GGML_CPU_ISA_AVX512; isa++) {
        printf(" %10s", ggml_cpu_isa_name((enum ggml_cpu_isa) isa));
    }
    printf("\n");
    for (int a = 0; a < ACT_COUNT; a++) {
        printf("%-12s", act_name[a]);
        for (int isa = GGML_CPU_ISA_SCALAR; isa <= GGML_CPU_ISA_AVX512; isa++) {
            if (ggml_cpu_isa_supported((enum ggml_cpu_isa) isa)) {
                printf(" %10.3f", bench_ns(ggml_cpu_expf_kernels_isa((enum ggml_cpu_isa) isa), (enum act) a, N, x, g, o));
            } else {
                printf(" %10s", "-");
            }
        }
        printf("\n");
    }
    return 0;
}

int main(int argc, char ** argv) {
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        return run_bench();
    }
    const enum ggml_cpu_isa isa = ggml_cpu_isa_active();
    const struct ggml_cpu_expf_kernels * k = ggml_cpu_expf_kernels_get();
    const struct ggml_cpu_expf_kernels * ks = ggml_cpu_expf_kernels_isa(GGML_CPU_ISA_SCALAR);
    printf("ISA path: %s\n", ggml_cpu_isa_name(isa));
    if (isa != GGML_CPU_ISA_SCALAR) {
        TH_CHECK(k->exp != ks->exp, "the %s expf failed the start-up check against libm", ggml_cpu_isa_name(isa));
    }
    // the scalar path is libm itself: a sample of patterns suffices there
    const bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (isa != GGML_CPU_ISA_SCALAR && !quick) {
        test_exhaustive(k);
    }
    test_activations(k, isa == GGML_CPU_ISA_SCALAR ? 1 << 18 : 1 << 22);
    return th_finish();
}
