// Q4_0 weights repacked into interleaved groups of 16 rows (ggml/src/ggml-cpu/repack.h, the CPU_REPACK
// buffer type):
// - the layout round-trips: repack then unpack, and set_tensor then get_tensor, give the original bytes;
// - every ISA's gemv equals the scalar vec_dot_q4_0_q8_0 bit for bit (same integer dots, same float steps),
//   and an independent double-precision product of the dequantized weights and activations within float
//   rounding, for K below, at and across the kernels' correction segment (256 blocks);
// - the MUL_MAT op with the weight in a CPU_REPACK buffer, N = 1..33 columns, 1 and 3 threads: below the
//   GEMM threshold bit-identical to the scalar vec_dot per element, from it on bit-identical to the same op
//   on the plain weights (the GEMM packs the unpacked rows);
// - shapes the layout cannot take (rows not a multiple of 16, 3-D, other types) stay plain and are refused
//   by the device's supports_op, so the loader keeps them in plain buffers.
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-cpu/gemm.h"
#include "ggml-cpu/ggml-cpu-kernels.h"
#include "ggml-cpu/repack.h"
#include "ggml.h"
#include "harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static float frand(void) {
    return (float) ((double) (th_xorshift64(&g_rng) >> 11) / 9007199254740992.0) * 2.0f - 1.0f;
}

// random Q4_0 rows: quantized from random floats whose scale varies per row (so the fp16 scales differ)
static void random_q4_0(void * dst, int64_t nrows, int64_t k) {
    float * f = malloc(sizeof(float) * (size_t) (nrows * k));
    for (int64_t r = 0; r < nrows; r++) {
        const float scale = 0.05f + 3.0f * (float) (r % 7);
        for (int64_t i = 0; i < k; i++) {
            f[r * k + i] = frand() * scale;
        }
    }
    ggml_quantize_chunk(GGML_TYPE_Q4_0, f, dst, 0, nrows, k, NULL);
    free(f);
}

static void check_roundtrip(int64_t nrows, int64_t k) {
    const size_t n = ggml_row_size(GGML_TYPE_Q4_0, k) * (size_t) nrows;
    uint8_t * a = malloc(n), * b = malloc(n), * c = malloc(n);
    random_q4_0(a, nrows, k);
    ggml_cpu_repack_q4_0(a, b, nrows, k);
    TH_CHECK(memcmp(a, b, n) != 0, "repack %lldx%lld changes the byte order", (long long) nrows, (long long) k);
    ggml_cpu_unpack_q4_0(b, c, nrows, k);
    TH_CHECK(memcmp(a, c, n) == 0, "repack/unpack round trip %lldx%lld", (long long) nrows, (long long) k);
    free(a); free(b); free(c);
}

static const char * isa_name(int isa) {
    return ggml_cpu_isa_name((enum ggml_cpu_isa) isa);
}

// gemv of every supported ISA against the scalar vec_dot (bits) and a double reference (tolerance)
static void check_gemv(int64_t M, int64_t K) {
    const size_t rs = ggml_row_size(GGML_TYPE_Q4_0, K);
    uint8_t * w = malloc(rs * (size_t) M), * wr = malloc(rs * (size_t) M);
    random_q4_0(w, M, K);
    ggml_cpu_repack_q4_0(w, wr, M, K);
    float * x = malloc(sizeof(float) * (size_t) K);
    for (int64_t i = 0; i < K; i++) x[i] = frand() * (i % 5 == 0 ? 8.0f : 1.0f);
    uint8_t * y = malloc(ggml_row_size(GGML_TYPE_Q8_0, K));
    ggml_cpu_get_kernels_isa(GGML_TYPE_Q8_0, GGML_CPU_ISA_SCALAR)->from_float(x, y, K);

    // reference: the exact dot of the dequantized rows with the dequantized activations, in double
    float * wd = malloc(sizeof(float) * (size_t) K), * yd = malloc(sizeof(float) * (size_t) K);
    ggml_get_type_traits(GGML_TYPE_Q8_0)->to_float(y, yd, K);
    double * ref = malloc(sizeof(double) * (size_t) M);
    float * vd = malloc(sizeof(float) * (size_t) M);
    const ggml_cpu_vec_dot_t vec_dot = ggml_cpu_get_kernels_isa(GGML_TYPE_Q4_0, GGML_CPU_ISA_SCALAR)->vec_dot;
    for (int64_t r = 0; r < M; r++) {
        ggml_get_type_traits(GGML_TYPE_Q4_0)->to_float(w + (size_t) r * rs, wd, K);
        double acc = 0, mag = 0;
        for (int64_t i = 0; i < K; i++) {
            acc += (double) wd[i] * yd[i];
            mag += fabs((double) wd[i] * yd[i]);
        }
        ref[r] = acc;
        vd[r] = 0.0f;
        vec_dot((int) K, &vd[r], w + (size_t) r * rs, y);
        // float summation over K / 32 blocks: well within 1e-5 of the sum of magnitudes
        TH_CHECK(fabs(vd[r] - acc) <= 1e-5 * mag + 1e-6, "reference sanity row %lld", (long long) r);
    }
    float * s = malloc(sizeof(float) * (size_t) M);
    for (int isa = GGML_CPU_ISA_SCALAR; isa <= GGML_CPU_ISA_AVX512; isa++) {
        if (!ggml_cpu_isa_supported((enum ggml_cpu_isa) isa)) {
            continue;
        }
        const ggml_cpu_repack_gemv_t gemv = ggml_cpu_repack_gemv_q4_0(isa);
        for (int64_t r = 0; r < M; r++) s[r] = 12345.0f;
        gemv(K, s, wr, y, M / GGML_CPU_REPACK_ROWS);
        int64_t bad = -1;
        for (int64_t r = 0; r < M && bad < 0; r++) {
            if (memcmp(&s[r], &vd[r], sizeof(float)) != 0) bad = r;
        }
        TH_CHECK(bad < 0, "gemv %s M=%lld K=%lld row %lld: %.9g, vec_dot %.9g", isa_name(isa), (long long) M,
                 (long long) K, (long long) bad, bad < 0 ? 0.0 : s[bad], bad < 0 ? 0.0 : vd[bad]);
    }
    free(w); free(wr); free(x); free(y); free(wd); free(yd); free(ref); free(vd); free(s);
}

// y = w x with w in a buffer of buft (the repacked one or plain CPU); returns y [M, N] (caller frees)
static float * run_mul_mat(ggml_backend_buffer_type_t buft, const void * wq, const float * x, int64_t K, int64_t M,
                           int64_t N, int nth, bool * repacked) {
    struct ggml_init_params ipw = { ggml_tensor_overhead() * 4, NULL, true };
    struct ggml_context * cw = ggml_init(ipw);
    struct ggml_tensor * w = ggml_new_tensor_2d(cw, GGML_TYPE_Q4_0, K, M);
    ggml_backend_buffer_t bw = ggml_backend_alloc_ctx_tensors_from_buft(cw, buft);
    ggml_backend_tensor_set(w, wq, 0, ggml_nbytes(w));
    *repacked = ggml_cpu_repack_is_repacked(w);

    // what get_tensor gives back is the plain layout
    uint8_t * back = malloc(ggml_nbytes(w));
    ggml_backend_tensor_get(w, back, 0, ggml_nbytes(w));
    TH_CHECK(memcmp(back, wq, ggml_nbytes(w)) == 0, "%s: get_tensor gives the bytes set", ggml_backend_buft_name(buft));
    // a partial read too (rows 3..4 of the plain layout)
    const size_t rs = ggml_row_size(GGML_TYPE_Q4_0, K);
    ggml_backend_tensor_get(w, back, 3 * rs, 2 * rs);
    TH_CHECK(memcmp(back, (const uint8_t *) wq + 3 * rs, 2 * rs) == 0, "%s: partial get_tensor", ggml_backend_buft_name(buft));
    free(back);

    struct ggml_init_params ip = { ggml_tensor_overhead() * 8 + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * xt = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * yt = ggml_mul_mat(ctx, w, xt);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, yt);
    ggml_backend_buffer_t bx = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    ggml_backend_tensor_set(xt, x, 0, ggml_nbytes(xt));

    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, nth);
    ggml_backend_dev_t dev = ggml_backend_get_device(be);
    TH_CHECK(ggml_backend_dev_supports_op(dev, yt), "%s: supports_op for the mul_mat", ggml_backend_buft_name(buft));
    TH_CHECK(ggml_backend_graph_compute(be, gf) == GGML_STATUS_SUCCESS, "compute");
    float * out = malloc(sizeof(float) * (size_t) (M * N));
    ggml_backend_tensor_get(yt, out, 0, sizeof(float) * (size_t) (M * N));
    ggml_backend_free(be);
    ggml_backend_buffer_free(bx);
    ggml_backend_buffer_free(bw);
    ggml_free(ctx);
    ggml_free(cw);
    return out;
}

static void check_op(int64_t K, int64_t M) {
    const size_t rs = ggml_row_size(GGML_TYPE_Q4_0, K);
    uint8_t * wq = malloc(rs * (size_t) M);
    random_q4_0(wq, M, K);
    const int64_t NMAX = 33;
    float * x = malloc(sizeof(float) * (size_t) (K * NMAX));
    for (int64_t i = 0; i < K * NMAX; i++) x[i] = frand();
    // the activations as mul_mat converts them (Q8_0, the same bytes on every ISA) for the vec_dot comparison
    const size_t ys = ggml_row_size(GGML_TYPE_Q8_0, K);
    uint8_t * yq = malloc(ys * (size_t) NMAX);
    for (int64_t c = 0; c < NMAX; c++) {
        ggml_cpu_get_kernels(GGML_TYPE_Q8_0)->from_float(x + c * K, yq + (size_t) c * ys, K);
    }
    const ggml_cpu_vec_dot_t vec_dot = ggml_cpu_get_kernels_isa(GGML_TYPE_Q4_0, GGML_CPU_ISA_SCALAR)->vec_dot;
    const bool gemm = ggml_cpu_gemm_supported(GGML_TYPE_Q4_0);
    for (int64_t N = 1; N <= NMAX; N += (N < 18 ? 1 : 5)) {
        for (int nth = 1; nth <= 3; nth += 2) {
            bool rp = false, rp_plain = true;
            float * y  = run_mul_mat(ggml_backend_cpu_repack_buffer_type(), wq, x, K, M, N, nth, &rp);
            float * yp = run_mul_mat(ggml_backend_cpu_buffer_type(), wq, x, K, M, N, nth, &rp_plain);
            TH_CHECK(rp && !rp_plain, "M=%lld: the weight is repacked in CPU_REPACK only", (long long) M);
            int64_t bad = -1;
            const bool via_gemm = gemm && N >= GGML_CPU_GEMM_MIN_N;
            for (int64_t c = 0; c < N && bad < 0; c++) {
                for (int64_t r = 0; r < M && bad < 0; r++) {
                    float want = yp[c * M + r];
                    if (!via_gemm) {
                        vec_dot((int) K, &want, wq + (size_t) r * rs, yq + (size_t) c * ys);
                    }
                    if (memcmp(&want, &y[c * M + r], sizeof(float)) != 0) bad = c * M + r;
                }
            }
            TH_CHECK(bad < 0, "mul_mat repacked K=%lld M=%lld N=%lld nth=%d (%s): element %lld differs", (long long) K,
                     (long long) M, (long long) N, nth, via_gemm ? "gemm" : "gemv", (long long) bad);
            free(y); free(yp);
        }
    }
    free(wq); free(x); free(yq);
}

// shapes the layout cannot hold: stored as they are, and a mul_mat on them is refused
static void check_refused(void) {
    struct { enum ggml_type type; int64_t ne0, ne1, ne2; } cases[] = {
        { GGML_TYPE_Q4_0, 64, 24, 1 }, { GGML_TYPE_Q4_0, 64, 37, 1 }, { GGML_TYPE_Q4_0, 64, 16, 2 }, { GGML_TYPE_Q8_0, 64, 32, 1 },
    };
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ggml_init_params ip = { ggml_tensor_overhead() * 4, NULL, true };
        struct ggml_context * ctx = ggml_init(ip);
        struct ggml_tensor * w = ggml_new_tensor_3d(ctx, cases[i].type, cases[i].ne0, cases[i].ne1, cases[i].ne2);
        struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, cases[i].ne0, 1, cases[i].ne2);
        struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
        ggml_backend_buffer_t b = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_repack_buffer_type());
        TH_CHECK(!ggml_cpu_repack_is_repacked(w), "case %zu is not repacked", i);
        TH_CHECK(!ggml_backend_dev_supports_op(dev, y), "case %zu: mul_mat on it refused", i);
        const size_t n = ggml_nbytes(w);
        uint8_t * a = malloc(n), * c = malloc(n);
        for (size_t j = 0; j < n; j++) a[j] = (uint8_t) (th_xorshift64(&g_rng) >> 13);
        ggml_backend_tensor_set(w, a, 0, n);
        TH_CHECK(memcmp(w->data, a, n) == 0, "case %zu stored as is", i);
        ggml_backend_tensor_get(w, c, 0, n);
        TH_CHECK(memcmp(a, c, n) == 0, "case %zu read back", i);
        free(a); free(c);
        ggml_backend_buffer_free(b);
        ggml_free(ctx);
    }
    // the CPU device offers the buffer type (unless GGML_CPU_REPACK=0) and accepts it
    TH_CHECK(ggml_backend_dev_supports_buft(dev, ggml_backend_cpu_repack_buffer_type()), "supports_buft");
    TH_CHECK(!ggml_backend_buft_is_host(ggml_backend_cpu_repack_buffer_type()), "not host memory");
    TH_CHECK(strcmp(ggml_backend_buft_name(ggml_backend_cpu_repack_buffer_type()), "CPU_REPACK") == 0, "name");
}

int main(void) {
    ggml_cpu_init();
    check_roundtrip(16, 32);
    check_roundtrip(48, 256);
    // K: one block, an odd number of blocks, exactly one correction segment, across two
    const int64_t Ks[] = { 32, 96, 2048, 256 * 32, 256 * 32 + 96 };
    for (size_t i = 0; i < sizeof(Ks) / sizeof(Ks[0]); i++) {
        check_gemv(48, Ks[i]);
    }
    check_op(256, 48);
    check_op(320, 16);
    check_refused();
    printf("ISA %s\n", ggml_cpu_isa_name(ggml_cpu_isa_active()));
    return th_finish();
}
