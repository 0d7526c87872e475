// The register-tiled GEMM of the CPU backend (ggml/src/ggml-cpu/gemm.h) against an independent reference:
// weights quantized with ggml's reference quantizer, dequantized with the type's to_float, multiplied in
// double with the exact float activations. The GEMM quantizes activations to 8 bits, so each output is
// checked against the reference with the same error bound the vec_dot path must meet; with the same 8-bit
// activations as vec_dot it must also agree with vec_dot up to float rounding (Q8_0: bit for bit, both follow
// llama.cpp's float order). Shapes cover partial row tiles, every column remainder and several blocks.
// Also the mul_mat op on both sides of the GEMM threshold, so the op's dispatch and chunking are exercised.
#include "ggml-common.h"
#include "ggml-cpu/gemm.h"
#include "ggml-cpu/ggml-cpu-kernels.h"
#include "ggml-cpu.h"
#include "ggml.h"
#include "harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_rng = 88172645463325252ull;
static float frand(void) {
    return (float) ((double) (th_xorshift64(&g_rng) >> 11) / 9007199254740992.0) * 2.0f - 1.0f;
}

static void * aligned(size_t n) {
    void * p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64) != 0) {
        return NULL;
    }
    return p;
}

static const enum ggml_type g_types[] = {
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,  GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS,
    GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_F16,   GGML_TYPE_BF16,   GGML_TYPE_F32,
};

// one row of k values of this type as floats (F32 has no to_float: it is its own)
static void row_to_float(enum ggml_type type, const void * row, float * out, int64_t k) {
    if (type == GGML_TYPE_F32) {
        memcpy(out, row, sizeof(float) * (size_t) k);
        return;
    }
    ggml_get_type_traits(type)->to_float(row, out, k);
}

// squared errors of the GEMM and of vec_dot against the reference, and the reference's square, per type
struct err_sums { double g, v, norm; };

// one (type, K, M, N) case through pack + run, tile by tile as mul_mat does
static void check_case(struct err_sums * es, enum ggml_type type, int64_t K, int64_t M, int64_t N) {
    const size_t rs = ggml_row_size(type, K);
    float * wf = malloc(sizeof(float) * (size_t) (K * M));
    float * xf = malloc(sizeof(float) * (size_t) (K * N));
    float * wd = malloc(sizeof(float) * (size_t) K);
    uint8_t * wq = malloc(rs * (size_t) M);
    for (int64_t i = 0; i < K * M; i++) wf[i] = frand();
    for (int64_t i = 0; i < K * N; i++) xf[i] = frand() * (i % 7 == 0 ? 4.0f : 1.0f);
    ggml_quantize_chunk(type, wf, wq, 0, M, K, NULL);

    const size_t arow = ggml_cpu_gemm_act_row_size(type, K);
    uint8_t * act = aligned(ggml_cpu_gemm_act_size(type, K, N));
    for (int64_t c = 0; c < N; c++) {
        ggml_cpu_gemm_act_from_float(type, xf + c * K, act, K, c);
    }
    uint8_t * pack = aligned(ggml_cpu_gemm_pack_size(type, K));
    // output with a column stride larger than M and a guard value: rows past M must not be written
    const int64_t ldd = M + 5;
    float * out = malloc(sizeof(float) * (size_t) (ldd * N));
    for (int64_t i = 0; i < ldd * N; i++) out[i] = 12345.0f;
    for (int64_t r0 = 0; r0 < M; r0 += GGML_CPU_GEMM_ROWS) {
        const int nrows = (int) (M - r0 < GGML_CPU_GEMM_ROWS ? M - r0 : GGML_CPU_GEMM_ROWS);
        ggml_cpu_gemm_pack(type, K, wq + (size_t) r0 * rs, rs, nrows, pack);
        ggml_cpu_gemm_run(type, K, pack, nrows, act, arow, (int) N, out + r0, sizeof(float) * (size_t) ldd);
    }

    // vec_dot path for comparison
    const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(type);
    const struct ggml_cpu_type_kernels * kv = ggml_cpu_get_kernels(k->vec_dot_type);
    const size_t vrs = ggml_row_size(k->vec_dot_type, K);
    uint8_t * xv = malloc(vrs * (size_t) N);
    for (int64_t c = 0; c < N; c++) {
        if (k->vec_dot_type == GGML_TYPE_F32) {
            memcpy(xv + (size_t) c * vrs, xf + c * K, sizeof(float) * (size_t) K);
        } else {
            kv->from_float(xf + c * K, xv + (size_t) c * vrs, K);
        }
    }

    double max_rel = 0, max_dv = 0;
    int n_unequal = 0; // outputs not bit-identical to vec_dot's
    bool guard_ok = true;
    for (int64_t r = 0; r < M; r++) {
        row_to_float(type, wq + (size_t) r * rs, wd, K);
        for (int64_t c = 0; c < N; c++) {
            double ref = 0, mag = 0;
            for (int64_t i = 0; i < K; i++) {
                ref += (double) wd[i] * (double) xf[c * K + i];
                mag += fabs((double) wd[i] * (double) xf[c * K + i]);
            }
            float v;
            k->vec_dot((int) K, &v, wq + (size_t) r * rs, xv + (size_t) c * vrs);
            const double g = out[c * ldd + r];
            n_unequal += memcmp(&out[c * ldd + r], &v, sizeof(float)) != 0;
            es->g    += (g - ref) * (g - ref);
            es->v    += ((double) v - ref) * ((double) v - ref);
            es->norm += ref * ref;
            const double dv = fabs(g - (double) v) / (mag + 1e-30);
            max_dv = dv > max_dv ? dv : max_dv;
            // per element: within 1% of the magnitude sum (8-bit activations err by < 0.4% of each |x|)
            const double rel = fabs(g - ref) / (mag + 1e-30);
            max_rel = rel > max_rel ? rel : max_rel;
        }
    }
    for (int64_t c = 0; c < N; c++) {
        for (int64_t r = M; r < ldd; r++) {
            guard_ok = guard_ok && out[c * ldd + r] == 12345.0f;
        }
    }
    TH_CHECK(guard_ok, "%s K=%lld M=%lld N=%lld: wrote past the tile's rows", ggml_type_name(type), (long long) K,
             (long long) M, (long long) N);
    // per element: within 1% of the sum of |w * x| (8-bit activations err by < 0.4% of each |x|)
    TH_CHECK(max_rel < 1e-2, "%s K=%lld M=%lld N=%lld: max rel error %.3g", ggml_type_name(type), (long long) K,
             (long long) M, (long long) N, max_rel);
    // the GEMM uses vec_dot's 8-bit activations (F16: the same F16 rounding): the int32 block dots are the
    // same, so the two results differ only by float rounding over blocks
    TH_CHECK(max_dv < 1e-5, "%s K=%lld M=%lld N=%lld: gemm vs vec_dot differ by %.3g of the magnitude",
             ggml_type_name(type), (long long) K, (long long) M, (long long) N, max_dv);
    // Q8_0 keeps llama.cpp's float order (eight lane chains per output) in both paths, so batches reproduce
    // its greedy tokens whatever the number of columns
    if (type == GGML_TYPE_Q8_0) {
        TH_CHECK(n_unequal == 0, "%s K=%lld M=%lld N=%lld: %d outputs differ from vec_dot's bits", ggml_type_name(type),
                 (long long) K, (long long) M, (long long) N, n_unequal);
    }
    free(wf); free(xf); free(wd); free(wq); free(act); free(pack); free(out); free(xv);
}

// the packer's two paths give the same bytes: the vector one (row strides that fit the 32-bit gathers) and
// the scalar one that row strides past INT32_MAX / GGML_CPU_GEMM_ROWS take. With a single row only row 0 is
// read, so a huge stride can be passed without memory behind it. The buffers start with different garbage,
// so a byte either path leaves unwritten shows up too.
static void check_pack_paths(enum ggml_type type, int64_t K) {
    const size_t rs = ggml_row_size(type, K);
    float * wf = malloc(sizeof(float) * (size_t) K);
    uint8_t * wq = malloc(rs);
    for (int64_t i = 0; i < K; i++) wf[i] = frand() * (i % 5 == 0 ? 3.0f : 1.0f);
    ggml_quantize_chunk(type, wf, wq, 0, 1, K, NULL);
    const size_t ps = ggml_cpu_gemm_pack_size(type, K);
    uint8_t * pv = aligned(ps);
    uint8_t * pscalar = aligned(ps);
    memset(pv, 0x5a, ps);
    memset(pscalar, 0xa5, ps);
    ggml_cpu_gemm_pack(type, K, wq, rs, 1, pv);
    ggml_cpu_gemm_pack(type, K, wq, (size_t) INT32_MAX, 1, pscalar);
    TH_CHECK(memcmp(pv, pscalar, ps) == 0, "%s K=%lld: vector and scalar packs differ", ggml_type_name(type), (long long) K);
    free(wf); free(wq); free(pv); free(pscalar);
}

// the float types' tile holds the rows' own values, whatever its layout: against one-hot activations
// (column c is 1 at element c, exact in every activation rounding) the tile gives back element c of each row
// exactly. K values that leave tails after the packer's 32-byte pieces (and an odd one for BF16's pairs), a
// row stride that is not the row size, partial and full tiles.
static void check_float_pack(enum ggml_type type) {
    const int64_t Ks[] = { 37, 69, 100 };
    const int nrs[] = { 1, 5, 16 };
    for (size_t a = 0; a < sizeof(Ks) / sizeof(Ks[0]); a++) {
        for (size_t b = 0; b < sizeof(nrs) / sizeof(nrs[0]); b++) {
            const int64_t K = Ks[a];
            const int nrows = nrs[b];
            const size_t rs = ggml_row_size(type, K) + 6;
            uint8_t * w = calloc((size_t) nrows, rs);
            float * wf = malloc(sizeof(float) * (size_t) K);
            float * ref = malloc(sizeof(float) * (size_t) K);
            float * x = calloc((size_t) K, sizeof(float));
            uint8_t * pack = aligned(ggml_cpu_gemm_pack_size(type, K));
            uint8_t * act = aligned(ggml_cpu_gemm_act_size(type, K, K));
            float * out = malloc(sizeof(float) * (size_t) (K * GGML_CPU_GEMM_ROWS));
            for (int r = 0; r < nrows; r++) {
                for (int64_t i = 0; i < K; i++) wf[i] = frand() * 3.0f;
                ggml_quantize_chunk(type, wf, w + (size_t) r * rs, 0, 1, K, NULL);
            }
            for (int64_t c = 0; c < K; c++) {
                x[c] = 1.0f;
                ggml_cpu_gemm_act_from_float(type, x, act, K, c);
                x[c] = 0.0f;
            }
            memset(pack, 0x7f, ggml_cpu_gemm_pack_size(type, K)); // garbage the packer must overwrite
            ggml_cpu_gemm_pack(type, K, w, rs, nrows, pack);
            ggml_cpu_gemm_run(type, K, pack, nrows, act, ggml_cpu_gemm_act_row_size(type, K), (int) K, out,
                              sizeof(float) * GGML_CPU_GEMM_ROWS);
            bool ok = true;
            for (int r = 0; r < nrows; r++) {
                row_to_float(type, w + (size_t) r * rs, ref, K);
                for (int64_t i = 0; i < K; i++) {
                    ok = ok && out[i * GGML_CPU_GEMM_ROWS + r] == ref[i];
                }
            }
            TH_CHECK(ok, "%s K=%lld nrows=%d: the tile does not hold the rows' values", ggml_type_name(type),
                     (long long) K, nrows);
            free(w); free(wf); free(ref); free(x); free(pack); free(act); free(out);
        }
    }
}

// the mul_mat op: the same product below and above GGML_CPU_GEMM_MIN_N columns, with 1 and 3 threads
static void check_op(enum ggml_type type) {
    const int64_t K = 512, M = 37;
    const int64_t Ns[] = { GGML_CPU_GEMM_MIN_N - 1, GGML_CPU_GEMM_MIN_N, 45 };
    for (size_t ni = 0; ni < sizeof(Ns) / sizeof(Ns[0]); ni++) {
        const int64_t N = Ns[ni];
        for (int nth = 1; nth <= 3; nth += 2) {
            struct ggml_init_params ip = { 64u << 20, NULL, false };
            struct ggml_context * ctx = ggml_init(ip);
            struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, K, M);
            struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
            float * wf = malloc(sizeof(float) * (size_t) (K * M));
            for (int64_t i = 0; i < K * M; i++) wf[i] = frand();
            ggml_quantize_chunk(type, wf, w->data, 0, M, K, NULL);
            for (int64_t i = 0; i < K * N; i++) ((float *) x->data)[i] = frand();
            struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
            struct ggml_cgraph * gf = ggml_new_graph(ctx);
            ggml_build_forward_expand(gf, y);
            TH_CHECK(ggml_graph_compute_with_ctx(ctx, gf, nth) == GGML_STATUS_SUCCESS, "compute");
            float * wd = malloc(sizeof(float) * (size_t) K);
            double err = 0, norm = 0;
            int n_unequal = 0; // Q8_0: outputs not bit-identical to a plain vec_dot of the column
            for (int64_t r = 0; r < M; r++) {
                row_to_float(type, (const char *) w->data + r * w->nb[1], wd, K);
                for (int64_t c = 0; c < N; c++) {
                    double ref = 0;
                    for (int64_t i = 0; i < K; i++) ref += (double) wd[i] * ((const float *) x->data)[c * K + i];
                    const double g = ((const float *) y->data)[c * M + r];
                    err += (g - ref) * (g - ref);
                    norm += ref * ref;
                    if (type == GGML_TYPE_Q8_0) {
                        block_q8_0 xq[512 / QK8_0];
                        float v;
                        ggml_cpu_get_kernels(GGML_TYPE_Q8_0)->from_float((const float *) x->data + c * K, xq, K);
                        ggml_cpu_get_kernels(GGML_TYPE_Q8_0)->vec_dot((int) K, &v, (const char *) w->data + r * w->nb[1], xq);
                        n_unequal += memcmp(&v, &((const float *) y->data)[c * M + r], sizeof(float)) != 0;
                    }
                }
            }
            TH_CHECK(n_unequal == 0, "mul_mat %s N=%lld nth=%d: %d outputs differ from vec_dot's bits",
                     ggml_type_name(type), (long long) N, nth, n_unequal);
            TH_CHECK(err / norm < 2e-4, "mul_mat %s N=%lld nth=%d: nmse %.3g", ggml_type_name(type), (long long) N, nth,
                     err / norm);
            free(wf); free(wd);
            ggml_free(ctx);
        }
    }
}

// the mul_mat_id op with enough routed columns per expert for the GEMM (and with too few, on vec_dot): 5
// experts, 2 slots of 3 tokens each... up to 60 tokens, one expert never chosen, one id out of range (its row
// must come out zero), the activations shared by the slots or not; 1 and 3 threads
static void check_op_id(enum ggml_type type) {
    const int64_t K = 256, M = 37, n_as = 5, n_used = 2;
    const int64_t toks[] = { 4, 60 };
    for (size_t ti = 0; ti < 2; ti++) {
        const int64_t n_tok = toks[ti];
        for (int shared = 0; shared < 2; shared++) {
            for (int nth = 1; nth <= 3; nth += 2) {
                struct ggml_init_params ip = { 64u << 20, NULL, false };
                struct ggml_context * ctx = ggml_init(ip);
                struct ggml_tensor * w = ggml_new_tensor_3d(ctx, type, K, M, n_as);
                struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, K, shared ? 1 : n_used, n_tok);
                struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, n_tok);
                float * wf = malloc(sizeof(float) * (size_t) (K * M * n_as));
                for (int64_t i = 0; i < K * M * n_as; i++) wf[i] = frand();
                ggml_quantize_chunk(type, wf, w->data, 0, M * n_as, K, NULL);
                for (int64_t i = 0; i < ggml_nelements(x); i++) ((float *) x->data)[i] = frand();
                int32_t * id = (int32_t *) ids->data;
                for (int64_t t = 0; t < n_tok; t++) {
                    // experts 0..3 (4 never chosen), the two slots differ; token 1 slot 1 out of range
                    id[t * n_used + 0] = (int32_t) ((t * 7) % 4);
                    id[t * n_used + 1] = t == 1 ? 99 : (int32_t) ((t * 7 + 1 + t % 3) % 4);
                }
                struct ggml_tensor * y = ggml_mul_mat_id(ctx, w, x, ids);
                struct ggml_cgraph * gf = ggml_new_graph(ctx);
                ggml_build_forward_expand(gf, y);
                for (int64_t i = 0; i < ggml_nelements(y); i++) ((float *) y->data)[i] = 777.0f;
                TH_CHECK(ggml_graph_compute_with_ctx(ctx, gf, nth) == GGML_STATUS_SUCCESS, "compute");
                float * wd = malloc(sizeof(float) * (size_t) K);
                double err = 0, norm = 0;
                bool zero_ok = true;
                for (int64_t t = 0; t < n_tok; t++) {
                    for (int64_t sl = 0; sl < n_used; sl++) {
                        const int32_t e = id[t * n_used + sl];
                        const float * got = (const float *) ((const char *) y->data + sl * y->nb[1] + t * y->nb[2]);
                        if (e < 0 || e >= n_as) {
                            for (int64_t r = 0; r < M; r++) zero_ok = zero_ok && got[r] == 0.0f;
                            continue;
                        }
                        const float * xr = (const float *) ((const char *) x->data + (sl % x->ne[1]) * x->nb[1] + t * x->nb[2]);
                        for (int64_t r = 0; r < M; r++) {
                            row_to_float(type, (const char *) w->data + r * w->nb[1] + e * w->nb[2], wd, K);
                            double ref = 0;
                            for (int64_t i = 0; i < K; i++) ref += (double) wd[i] * xr[i];
                            err += (got[r] - ref) * (got[r] - ref);
                            norm += ref * ref;
                        }
                    }
                }
                TH_CHECK(zero_ok, "mul_mat_id %s n_tok=%lld: the out-of-range id's row is not zero", ggml_type_name(type),
                         (long long) n_tok);
                TH_CHECK(err / norm < 2e-4, "mul_mat_id %s n_tok=%lld shared=%d nth=%d: nmse %.3g", ggml_type_name(type),
                         (long long) n_tok, shared, nth, err / norm);
                free(wf); free(wd);
                ggml_free(ctx);
            }
        }
    }
}

int main(void) {
    ggml_cpu_init();
    for (size_t t = 0; t < sizeof(g_types) / sizeof(g_types[0]); t++) {
        check_op(g_types[t]);
        check_op_id(g_types[t]);
    }
    int n_direct = 0;
    for (size_t t = 0; t < sizeof(g_types) / sizeof(g_types[0]); t++) {
        if (!ggml_cpu_gemm_supported(g_types[t])) {
            continue; // not on this ISA: mul_mat uses vec_dot (checked above)
        }
        n_direct++;
        check_pack_paths(g_types[t], 512);
        if (ggml_blck_size(g_types[t]) == 1) {
            check_float_pack(g_types[t]);
        }
        struct err_sums es = { 0, 0, 0 };
        const int64_t Ks[] = { 256, 768 };
        const int64_t Ms[] = { 1, 15, 16, 17, 40 };
        for (size_t a = 0; a < 2; a++) {
            for (size_t b = 0; b < 5; b++) {
                for (int64_t N = 1; N <= 19; N += (N < 9 ? 1 : 5)) {
                    check_case(&es, g_types[t], Ks[a], Ms[b], N);
                }
            }
        }
        if (ggml_blck_size(g_types[t]) == 1) {
            check_case(&es, g_types[t], 69, 17, 19); // a K that leaves a tail in the float packer (odd for BF16)
        }
        // over all cases: as accurate as vec_dot. F32 has no activation rounding: the error is the float
        // summation alone (vec_dot_f32 sums in double), a relative 1e-7 or so per element over these K
        const double ng = es.g / es.norm, nv = es.v / es.norm;
        const bool as_good = g_types[t] == GGML_TYPE_F32 ? ng < 1e-11 : ng <= 1.25 * nv;
        TH_CHECK(ng < 2e-4 && as_good, "%s: gemm nmse %.3g, vec_dot nmse %.3g", ggml_type_name(g_types[t]), ng, nv);
        printf("%-7s gemm nmse %.3g  vec_dot nmse %.3g\n", ggml_type_name(g_types[t]), ng, nv);
    }
    printf("ISA %s: %d types through the GEMM directly\n", ggml_cpu_isa_name(ggml_cpu_isa_active()), n_direct);
    if (ggml_cpu_isa_active() == GGML_CPU_ISA_AVX512) {
        TH_CHECK(n_direct == (int) (sizeof(g_types) / sizeof(g_types[0])), "every listed type has a GEMM on AVX-512");
    }
    return th_finish();
}
