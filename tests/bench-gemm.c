// Throughput of the register-tiled GEMM kernel alone (ggml/src/ggml-cpu/gemm.h), not a test: weights packed
// and activations converted once, then ggml_cpu_gemm_run over every tile, one thread, in cache. Reports
// GOP/s = 2 * M * N * K / time (best of several repetitions).
// usage: bench-gemm [types,comma,separated] [K] [M] [N]   (default q8_0,f16 2048 64 512)
#include "ggml-cpu/gemm.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void * aligned(size_t n) {
    void * p = NULL;
    return posix_memalign(&p, 64, n ? n : 64) == 0 ? p : NULL;
}

// packing a weight matrix larger than the caches (as each prompt batch does with a model's weights): GB/s
// of source weights, best of 3
static int bench_pack(enum ggml_type type, int64_t K) {
    const size_t rs = ggml_row_size(type, K);
    const int64_t rows = (int64_t) ((512u << 20) / rs) / GGML_CPU_GEMM_ROWS * GGML_CPU_GEMM_ROWS;
    uint8_t * w = malloc(rs * (size_t) rows);
    uint8_t * pack = aligned(ggml_cpu_gemm_pack_size(type, K));
    if (!w || !pack) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < rs * (size_t) rows; i++) {
        w[i] = (uint8_t) (i * 2654435761u >> 13) & 0x3b; // finite in every float format, small scales
    }
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        const int64_t t0 = ggml_time_us();
        for (int64_t r = 0; r < rows; r += GGML_CPU_GEMM_ROWS) {
            ggml_cpu_gemm_pack(type, K, w + (size_t) r * rs, rs, GGML_CPU_GEMM_ROWS, pack);
        }
        const double dt = 1e-6 * (double) (ggml_time_us() - t0);
        best = dt < best ? dt : best;
    }
    printf("%-6s pack of %lld rows (%.0f MiB): %.2f GB/s\n", ggml_type_name(type), (long long) rows,
           (double) (rs * (size_t) rows) / 1048576.0, (double) (rs * (size_t) rows) / best * 1e-9);
    free(w);
    free(pack);
    return 0;
}

static int bench_type(enum ggml_type type, int64_t K, int64_t M, int64_t N) {
    if (!ggml_cpu_gemm_supported(type)) {
        printf("%-6s no GEMM on this ISA\n", ggml_type_name(type));
        return 0;
    }
    const size_t rs = ggml_row_size(type, K);
    const int64_t ntiles = (M + GGML_CPU_GEMM_ROWS - 1) / GGML_CPU_GEMM_ROWS;
    const size_t psz = ggml_cpu_gemm_pack_size(type, K);
    const size_t bact = ggml_cpu_gemm_act_row_size(type, K);
    float * wf = malloc(sizeof(float) * (size_t) (K * M));
    float * xf = malloc(sizeof(float) * (size_t) K);
    uint8_t * wq = malloc(rs * (size_t) M);
    uint8_t * pack = aligned(psz * (size_t) ntiles);
    uint8_t * act = aligned(ggml_cpu_gemm_act_size(type, K, N));
    float * dst = aligned(sizeof(float) * (size_t) (M * N));
    if (!wf || !xf || !wq || !pack || !act || !dst) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    uint64_t s = 12345;
    for (int64_t i = 0; i < K * M; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        wf[i] = (float) ((double) (s >> 11) / 9007199254740992.0) * 2.0f - 1.0f;
    }
    if (type == GGML_TYPE_F32) {
        memcpy(wq, wf, rs * (size_t) M);
    } else if (type == GGML_TYPE_F16) {
        ggml_fp32_to_fp16_row(wf, (ggml_fp16_t *) wq, K * M);
    } else if (type == GGML_TYPE_BF16) {
        ggml_fp32_to_bf16_row(wf, (ggml_bf16_t *) wq, K * M);
    } else {
        ggml_quantize_chunk(type, wf, wq, 0, M, K, NULL);
    }
    for (int64_t t = 0; t < ntiles; t++) {
        const int nr = (int) (M - t * GGML_CPU_GEMM_ROWS < GGML_CPU_GEMM_ROWS ? M - t * GGML_CPU_GEMM_ROWS : GGML_CPU_GEMM_ROWS);
        ggml_cpu_gemm_pack(type, K, wq + (size_t) t * GGML_CPU_GEMM_ROWS * rs, rs, nr, pack + (size_t) t * psz);
    }
    for (int64_t c = 0; c < N; c++) {
        for (int64_t i = 0; i < K; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            xf[i] = (float) ((double) (s >> 11) / 9007199254740992.0) * 2.0f - 1.0f;
        }
        ggml_cpu_gemm_act_from_float(type, xf, act, K, c);
    }
    double best = 1e30;
    for (int rep = 0; rep < 7; rep++) {
        const int64_t t0 = ggml_time_us();
        for (int64_t t = 0; t < ntiles; t++) {
            const int nr = (int) (M - t * GGML_CPU_GEMM_ROWS < GGML_CPU_GEMM_ROWS ? M - t * GGML_CPU_GEMM_ROWS : GGML_CPU_GEMM_ROWS);
            ggml_cpu_gemm_run(type, K, pack + (size_t) t * psz, nr, act, bact, (int) N, dst + t * GGML_CPU_GEMM_ROWS,
                              sizeof(float) * (size_t) M);
        }
        const double dt = 1e-6 * (double) (ggml_time_us() - t0);
        best = dt < best ? dt : best;
    }
    double cs = 0;
    for (int64_t i = 0; i < M * N; i++) {
        cs += dst[i];
    }
    printf("%-6s K=%lld M=%lld N=%lld: %.1f GOP/s (%.3f ms, checksum %.6g)\n", ggml_type_name(type), (long long) K,
           (long long) M, (long long) N, 2.0 * (double) (K * M * N) / best * 1e-9, best * 1e3, cs);
    free(wf); free(xf); free(wq); free(pack); free(act); free(dst);
    return bench_pack(type, K);
}

int main(int argc, char ** argv) {
    ggml_cpu_init();
    const char * types = argc > 1 ? argv[1] : "q8_0,f16";
    const int64_t K = argc > 2 ? atoll(argv[2]) : 2048;
    const int64_t M = argc > 3 ? atoll(argv[3]) : 64;
    const int64_t N = argc > 4 ? atoll(argv[4]) : 512;
    if (K <= 0 || K % 256 != 0 || M <= 0 || N <= 0) {
        fprintf(stderr, "K must be a positive multiple of 256, M and N positive\n");
        return 1;
    }
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", types);
    int rc = 0;
    for (char * tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        enum ggml_type type = GGML_TYPE_COUNT;
        for (int t = 0; t < GGML_TYPE_COUNT; t++) {
            const char * n = ggml_type_name((enum ggml_type) t);
            if (n != NULL && strcmp(n, tok) == 0) {
                type = (enum ggml_type) t;
            }
        }
        if (type == GGML_TYPE_COUNT) {
            fprintf(stderr, "unknown type %s\n", tok);
            return 1;
        }
        rc |= bench_type(type, K, M, N);
    }
    return rc;
}
