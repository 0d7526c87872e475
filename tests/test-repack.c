// Weights repacked into interleaved groups of 16 rows (ggml/src/ggml-cpu/repack.h, the CPU_REPACK buffer
// type), for every type of the repack table (Q4_0, Q8_0, Q4_K, Q6_K):
// - the layout round-trips: repack then unpack, and set_tensor then get_tensor, give the original bytes
//   (for Q8_0 and the K-quants also arbitrary bytes: every bit of the packed quants and scales survives);
// - every ISA's gemv equals the type's scalar vec_dot bit for bit (same integer sums, same float steps),
//   and an independent double-precision product of the dequantized weights and activations within float
//   rounding, for K below, at and across the kernels' correction segments; for Q8_0 and the K-quants also on
//   weights of random bytes (extreme values and scales, Q8_0's -128 included) against activations of the
//   quantizer's extremes (Q8_K 127/-128, the int16 bounds; Q8_0 +-127);
// - the MUL_MAT op with the weight in a CPU_REPACK buffer, N = 1..33 columns, 1 and 3 threads: below the
//   GEMM threshold bit-identical to the scalar vec_dot per element, from it on bit-identical to the same op
//   on the plain weights;
// - the GEMM's tile of a group (gemm.h: packed directly for Q4_0, Q8_0, Q4_K, Q6_K) is byte-identical to the tile of
//   its unpacked rows, on quantized rows and on random bytes (every nibble and byte value);
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

// the types of the repack table; each is tested through the same functions
static const enum ggml_type g_types[] = { GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K };

static enum ggml_type vec_dot_type(enum ggml_type type) {
    return ggml_cpu_get_kernels_isa(type, GGML_CPU_ISA_SCALAR)->vec_dot_type;
}

// random rows of a type: quantized from random floats whose scale varies per row (so the scales differ)
static void random_rows(enum ggml_type type, void * dst, int64_t nrows, int64_t k) {
    float * f = malloc(sizeof(float) * (size_t) (nrows * k));
    for (int64_t r = 0; r < nrows; r++) {
        const float scale = 0.05f + 3.0f * (float) (r % 7);
        const float shift = type == GGML_TYPE_Q4_K ? 0.3f * scale * (float) (r % 3) : 0.0f; // varied mins
        for (int64_t i = 0; i < k; i++) {
            f[r * k + i] = frand() * scale + shift;
        }
    }
    ggml_quantize_chunk(type, f, dst, 0, nrows, k, NULL);
    free(f);
}

// Q4_0 / Q8_0 / K-quant rows of random bytes with sane fp16 scales (Q4_0 and Q8_0 d, Q4_K d and dmin, Q6_K d, in
// [2^-8, 2^-7)): every value, every scale and min occurs
static void random_bytes(enum ggml_type type, void * dst, int64_t nrows, int64_t k) {
    uint8_t * p = dst;
    const size_t bs = ggml_type_size(type);
    const size_t n = ggml_row_size(type, k) * (size_t) nrows;
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t) (th_xorshift64(&g_rng) >> 29);
    }
    // where the fp16 scales sit in a block (twice the same one where there is only one)
    const size_t d_off = type == GGML_TYPE_Q6_K ? bs - 2 : 0;
    const size_t off[2] = { d_off, type == GGML_TYPE_Q4_K ? 2 : d_off };
    for (size_t i = 0; i < n; i += bs) {
        for (int h = 0; h < 2; h++) {
            const uint16_t v = (uint16_t) (0x1c00 | (th_xorshift64(&g_rng) >> 54)); // 2^-8 * (1 + f)
            memcpy(p + i + off[h], &v, 2);
        }
    }
}

static void check_roundtrip(enum ggml_type type, int64_t nrows, int64_t k, bool any_bytes) {
    const struct ggml_cpu_repack_traits * tr = ggml_cpu_repack_get_traits(type);
    const size_t n = ggml_row_size(type, k) * (size_t) nrows;
    uint8_t * a = malloc(n), * b = malloc(n), * c = malloc(n);
    if (any_bytes) {
        for (size_t i = 0; i < n; i++) a[i] = (uint8_t) (th_xorshift64(&g_rng) >> 31);
    } else {
        random_rows(type, a, nrows, k);
    }
    tr->repack(a, b, nrows, k);
    TH_CHECK(memcmp(a, b, n) != 0, "%s repack %lldx%lld changes the byte order", ggml_type_name(type), (long long) nrows,
             (long long) k);
    tr->unpack(b, c, nrows, k);
    TH_CHECK(memcmp(a, c, n) == 0, "%s repack/unpack round trip %lldx%lld%s", ggml_type_name(type), (long long) nrows,
             (long long) k, any_bytes ? " (any bytes)" : "");
    free(a); free(b); free(c);
}

static const char * isa_name(int isa) {
    return ggml_cpu_isa_name((enum ggml_cpu_isa) isa);
}

// gemv of every supported ISA against the scalar vec_dot (bits) and a double reference (tolerance). extreme:
// weights of random bytes and activations of only +-127 / -128 (the kernels' int16 bounds)
static void check_gemv(enum ggml_type type, int64_t M, int64_t K, bool extreme) {
    const enum ggml_type vt = vec_dot_type(type);
    const size_t rs = ggml_row_size(type, K);
    uint8_t * w = malloc(rs * (size_t) M), * wr = malloc(rs * (size_t) M);
    if (extreme) {
        random_bytes(type, w, M, K);
    } else {
        random_rows(type, w, M, K);
    }
    ggml_cpu_repack_get_traits(type)->repack(w, wr, M, K);
    float * x = malloc(sizeof(float) * (size_t) K);
    for (int64_t i = 0; i < K; i++) {
        // extreme: a max of 1 makes Q8_K's scale -128, so -1 -> -128 and +1 -> 127 (Q8_K rounds -127.x
        // toward the extreme); Q8_0 gives -127 and 127
        x[i] = extreme ? (th_xorshift64(&g_rng) & 1 ? 1.0f : -1.0f) : frand() * (i % 5 == 0 ? 8.0f : 1.0f);
    }
    uint8_t * y = malloc(ggml_row_size(vt, K));
    ggml_cpu_get_kernels_isa(vt, GGML_CPU_ISA_SCALAR)->from_float(x, y, K);

    // reference: the exact dot of the dequantized rows with the dequantized activations, in double
    float * wd = malloc(sizeof(float) * (size_t) K), * yd = malloc(sizeof(float) * (size_t) K);
    ggml_get_type_traits(vt)->to_float(y, yd, K);
    float * vd = malloc(sizeof(float) * (size_t) M);
    const ggml_cpu_vec_dot_t vec_dot = ggml_cpu_get_kernels_isa(type, GGML_CPU_ISA_SCALAR)->vec_dot;
    for (int64_t r = 0; r < M; r++) {
        ggml_get_type_traits(type)->to_float(w + (size_t) r * rs, wd, K);
        double acc = 0, mag = 0;
        for (int64_t i = 0; i < K; i++) {
            acc += (double) wd[i] * yd[i];
            mag += fabs((double) wd[i] * yd[i]);
        }
        vd[r] = 0.0f;
        vec_dot((int) K, &vd[r], w + (size_t) r * rs, y);
        // float summation over the blocks (Q4_K: of two products per 256 that may cancel): well within
        // 1e-4 of the sum of magnitudes
        TH_CHECK(fabs(vd[r] - acc) <= 1e-4 * mag + 1e-6, "%s reference sanity row %lld: %.9g vs %.9g", ggml_type_name(type),
                 (long long) r, vd[r], acc);
    }
    float * s = malloc(sizeof(float) * (size_t) M);
    for (int isa = GGML_CPU_ISA_SCALAR; isa <= GGML_CPU_ISA_AVX512; isa++) {
        if (!ggml_cpu_isa_supported((enum ggml_cpu_isa) isa)) {
            continue;
        }
        const ggml_cpu_repack_gemv_t gemv = ggml_cpu_repack_gemv(type, isa);
        for (int64_t r = 0; r < M; r++) s[r] = 12345.0f;
        gemv(K, s, wr, y, M / GGML_CPU_REPACK_ROWS);
        int64_t bad = -1;
        for (int64_t r = 0; r < M && bad < 0; r++) {
            if (memcmp(&s[r], &vd[r], sizeof(float)) != 0) bad = r;
        }
        TH_CHECK(bad < 0, "gemv %s %s M=%lld K=%lld%s row %lld: %.9g, vec_dot %.9g", ggml_type_name(type), isa_name(isa),
                 (long long) M, (long long) K, extreme ? " extreme" : "", (long long) bad, bad < 0 ? 0.0 : s[bad],
                 bad < 0 ? 0.0 : vd[bad]);
    }
    free(w); free(wr); free(x); free(y); free(wd); free(yd); free(vd); free(s);
}

// the GEMM's direct packer of an interleaved group (gemm.h) against unpack + ggml_cpu_gemm_pack of the same 16
// rows: byte-identical tiles (every byte written: the two buffers start with different fill bytes), for each
// group of M rows, from a group address that is not 64-byte aligned; types without a direct packer say so
// and leave the tile alone
static void check_gemm_pack(enum ggml_type type, int64_t M, int64_t K, bool any_bytes) {
    if (!ggml_cpu_gemm_supported(type)) {
        return;
    }
    const size_t rs = ggml_row_size(type, K), gs = GGML_CPU_REPACK_ROWS * rs;
    uint8_t * w = malloc(rs * (size_t) M), * wr = malloc(rs * (size_t) M + 1), * plain = malloc(gs);
    if (any_bytes) {
        random_bytes(type, w, M, K);
    } else {
        random_rows(type, w, M, K);
    }
    const struct ggml_cpu_repack_traits * tr = ggml_cpu_repack_get_traits(type);
    tr->repack(w, wr + 1, M, K);
    const size_t ps = ggml_cpu_gemm_pack_size(type, K);
    uint8_t * pd = aligned_alloc(64, ps), * pref = aligned_alloc(64, ps);
    const bool direct = type == GGML_TYPE_Q4_0 || type == GGML_TYPE_Q8_0 || type == GGML_TYPE_Q4_K ||
                        type == GGML_TYPE_Q6_K;
    for (int64_t g = 0; g < M / GGML_CPU_REPACK_ROWS; g++) {
        const uint8_t * grp = wr + 1 + (size_t) g * gs;
        memset(pd, 0xaa, ps);
        memset(pref, 0x55, ps);
        const bool took = ggml_cpu_gemm_pack_repacked(type, K, grp, pd);
        TH_CHECK(took == direct, "%s: direct packer %s", ggml_type_name(type), direct ? "taken" : "refused");
        if (!took) {
            size_t n_touched = 0;
            for (size_t i = 0; i < ps; i++) n_touched += pd[i] != 0xaa;
            TH_CHECK(n_touched == 0, "%s: a refused direct pack leaves the tile alone", ggml_type_name(type));
            continue;
        }
        tr->unpack(grp, plain, GGML_CPU_REPACK_ROWS, K);
        TH_CHECK(memcmp(plain, w + (size_t) g * gs, gs) == 0, "%s: unpack of group %lld", ggml_type_name(type), (long long) g);
        ggml_cpu_gemm_pack(type, K, plain, rs, GGML_CPU_REPACK_ROWS, pref);
        size_t first = ps;
        for (size_t i = 0; i < ps && first == ps; i++) {
            if (pd[i] != pref[i]) first = i;
        }
        TH_CHECK(first == ps, "%s K=%lld group %lld%s: direct pack differs from unpack + pack at byte %zu", ggml_type_name(type),
                 (long long) K, (long long) g, any_bytes ? " (any bytes)" : "", first);
    }
    free(pd); free(pref);
    free(w); free(wr); free(plain);
}

// y = w x with w in a buffer of buft (the repacked one or plain CPU); returns y [M, N] (caller frees)
static float * run_mul_mat(enum ggml_type type, ggml_backend_buffer_type_t buft, const void * wq, const float * x,
                           int64_t K, int64_t M, int64_t N, int nth, bool * repacked) {
    struct ggml_init_params ipw = { ggml_tensor_overhead() * 4, NULL, true };
    struct ggml_context * cw = ggml_init(ipw);
    struct ggml_tensor * w = ggml_new_tensor_2d(cw, type, K, M);
    ggml_backend_buffer_t bw = ggml_backend_alloc_ctx_tensors_from_buft(cw, buft);
    ggml_backend_tensor_set(w, wq, 0, ggml_nbytes(w));
    *repacked = ggml_cpu_repack_is_repacked(w);

    // what get_tensor gives back is the plain layout
    uint8_t * back = malloc(ggml_nbytes(w));
    ggml_backend_tensor_get(w, back, 0, ggml_nbytes(w));
    TH_CHECK(memcmp(back, wq, ggml_nbytes(w)) == 0, "%s %s: get_tensor gives the bytes set", ggml_type_name(type),
             ggml_backend_buft_name(buft));
    // a partial read too (rows 3..4 of the plain layout)
    const size_t rs = ggml_row_size(type, K);
    ggml_backend_tensor_get(w, back, 3 * rs, 2 * rs);
    TH_CHECK(memcmp(back, (const uint8_t *) wq + 3 * rs, 2 * rs) == 0, "%s %s: partial get_tensor", ggml_type_name(type),
             ggml_backend_buft_name(buft));
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

static void check_op(enum ggml_type type, int64_t K, int64_t M) {
    const enum ggml_type vt = vec_dot_type(type);
    const size_t rs = ggml_row_size(type, K);
    uint8_t * wq = malloc(rs * (size_t) M);
    random_rows(type, wq, M, K);
    const int64_t NMAX = 33;
    float * x = malloc(sizeof(float) * (size_t) (K * NMAX));
    for (int64_t i = 0; i < K * NMAX; i++) x[i] = frand();
    // the activations as mul_mat converts them (the same bytes on every ISA) for the vec_dot comparison
    const size_t ys = ggml_row_size(vt, K);
    uint8_t * yq = malloc(ys * (size_t) NMAX);
    for (int64_t c = 0; c < NMAX; c++) {
        ggml_cpu_get_kernels(vt)->from_float(x + c * K, yq + (size_t) c * ys, K);
    }
    const ggml_cpu_vec_dot_t vec_dot = ggml_cpu_get_kernels_isa(type, GGML_CPU_ISA_SCALAR)->vec_dot;
    const bool gemm = ggml_cpu_gemm_supported(type);
    for (int64_t N = 1; N <= NMAX; N += (N < 18 ? 1 : 5)) {
        for (int nth = 1; nth <= 3; nth += 2) {
            bool rp = false, rp_plain = true;
            float * y  = run_mul_mat(type, ggml_backend_cpu_repack_buffer_type(), wq, x, K, M, N, nth, &rp);
            float * yp = run_mul_mat(type, ggml_backend_cpu_buffer_type(), wq, x, K, M, N, nth, &rp_plain);
            TH_CHECK(rp && !rp_plain, "%s M=%lld: the weight is repacked in CPU_REPACK only", ggml_type_name(type), (long long) M);
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
            TH_CHECK(bad < 0, "mul_mat repacked %s K=%lld M=%lld N=%lld nth=%d (%s): element %lld differs", ggml_type_name(type),
                     (long long) K, (long long) M, (long long) N, nth, via_gemm ? "gemm" : "gemv", (long long) bad);
            free(y); free(yp);
        }
    }
    free(wq); free(x); free(yq);
}

// shapes the layout cannot hold: stored as they are, and a mul_mat on them is refused
static void check_refused(void) {
    struct { enum ggml_type type; int64_t ne0, ne1, ne2; } cases[] = {
        { GGML_TYPE_Q4_0, 64, 24, 1 },  { GGML_TYPE_Q4_0, 64, 37, 1 },  { GGML_TYPE_Q4_0, 64, 16, 2 },
        { GGML_TYPE_Q4_K, 256, 24, 1 }, { GGML_TYPE_Q4_K, 512, 37, 1 }, { GGML_TYPE_Q4_K, 256, 16, 2 },
        { GGML_TYPE_Q6_K, 256, 40, 1 }, { GGML_TYPE_Q8_0, 64, 40, 1 },  { GGML_TYPE_Q8_0, 96, 16, 3 },
        { GGML_TYPE_Q5_0, 64, 32, 1 },  { GGML_TYPE_Q5_K, 256, 32, 1 },
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
    for (size_t t = 0; t < sizeof(g_types) / sizeof(g_types[0]); t++) {
        const enum ggml_type type = g_types[t];
        const int64_t bk = ggml_blck_size(type);
        TH_CHECK(ggml_cpu_repack_get_traits(type) != NULL, "%s in the table", ggml_type_name(type));
        check_roundtrip(type, 16, bk, false);
        check_roundtrip(type, 48, 8 * bk, false);
        if (type != GGML_TYPE_Q4_0) {
            check_roundtrip(type, 32, 3 * bk, true);
        }
        // K: one block, an odd number of blocks, exactly one correction segment, across two
        const int64_t seg = bk == 32 ? 256 : 64;
        const int64_t nbs[] = { 1, 3, 64, seg, seg + 3 };
        for (size_t i = 0; i < sizeof(nbs) / sizeof(nbs[0]); i++) {
            check_gemv(type, 48, nbs[i] * bk, false);
        }
        if (type != GGML_TYPE_Q4_0) {
            check_gemv(type, 32, 3 * bk, true);
            check_gemv(type, 16, (bk == 32 ? 259 : 70) * bk, true); // across a correction segment
        }
        for (int64_t nbk = 1; nbk <= 9; nbk += 4) {
            check_gemm_pack(type, 48, nbk * bk, false);
        }
        check_gemm_pack(type, 32, bk == 32 ? 130 * bk : 3 * bk, false);
        check_gemm_pack(type, 32, 5 * bk, true);
        check_op(type, 256, 48);
        check_op(type, bk == 32 ? 320 : 512, 16);
    }
    check_refused();
    printf("ISA %s\n", ggml_cpu_isa_name(ggml_cpu_isa_active()));
    return th_finish();
}
