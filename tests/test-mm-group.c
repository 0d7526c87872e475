// MUL_MATs of the same activations computed as one group by the CPU backend (ops-matmul.c: one conversion of
// the activations per vec-dot format, one chunk counter, one barrier):
// - which runs form a group: consecutive matmuls (views between them allowed) of one src1 on the vec path; a
//   member whose weights are another member's output, a computed node in between, another src1, outputs
//   that overlap, or enough columns for the GEMM end the run;
// - a group gives every output bit for bit what the type's vec_dot gives for that element (for
//   repacked weights the scalar vec_dot, whose float steps every ISA's gemv follows), with weights of five types (Q4_0 and Q6_K repacked, Q8_0, F16
//   and F32 plain: three activation formats plus src1 used as it is), for 1..15 columns (per-thread private
//   conversion up to 4, shared above) and 1..3 threads;
// - a member that reads another member's output is not hoisted: its result matches a double-precision
//   product of the first member's output.
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-cpu/ggml-cpu-impl.h"
#include "ggml-cpu/ggml-cpu-kernels.h"
#include "ggml-cpu/gemm.h"
#include "ggml-cpu/repack.h"
#include "ggml.h"
#include "harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 256
#define N_MEMBERS 5

static uint64_t g_rng = 0x2545f4914f6cdd1dull;
static float frand(void) {
    return (float) ((double) (th_xorshift64(&g_rng) >> 11) / 9007199254740992.0) * 2.0f - 1.0f;
}

struct member {
    enum ggml_type type;
    int64_t rows;
    bool repack; // weights in the CPU_REPACK buffer
};

static const struct member g_members[N_MEMBERS] = {
    { GGML_TYPE_Q4_0, 64, true  },
    { GGML_TYPE_Q6_K, 32, true  },
    { GGML_TYPE_Q8_0, 48, false },
    { GGML_TYPE_F16,  16, false },
    { GGML_TYPE_F32,   8, false },
};

// the expected output element: the vec_dot of the weight row and the activation column converted as mul_mat
// converts it (F32 weights: the column itself); the active ISA's for plain weights, the scalar one for
// repacked weights (every ISA's gemv follows the scalar vec_dot's float steps)
static float expected(enum ggml_type type, bool repacked, const uint8_t * w_row, const float * x_col) {
    const enum ggml_cpu_isa isa = repacked ? GGML_CPU_ISA_SCALAR : ggml_cpu_isa_active();
    const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels_isa(type, isa);
    const struct ggml_cpu_type_kernels * vk = ggml_cpu_get_kernels_isa(k->vec_dot_type, isa);
    uint8_t y[K * sizeof(float)];
    if (k->vec_dot_type == GGML_TYPE_F32) {
        memcpy(y, x_col, sizeof(float) * K);
    } else {
        vk->from_float(x_col, y, K);
    }
    float s;
    k->vec_dot(K, &s, w_row, y);
    return s;
}

static void fill_weights(enum ggml_type type, uint8_t * dst, int64_t rows) {
    float * f = malloc(sizeof(float) * (size_t) (rows * K));
    for (int64_t i = 0; i < rows * K; i++) {
        f[i] = frand() * (1.0f + (float) (i / K % 5));
    }
    ggml_quantize_chunk(type, f, dst, 0, rows, K, NULL);
    free(f);
}

static void check_group(int64_t ncols, int nth) {
    // weights: one context per buffer type
    struct ggml_init_params ipw = { ggml_tensor_overhead() * N_MEMBERS, NULL, true };
    struct ggml_context * c_rep = ggml_init(ipw);
    struct ggml_context * c_pln = ggml_init(ipw);
    struct ggml_tensor * w[N_MEMBERS];
    uint8_t * wq[N_MEMBERS];
    for (int m = 0; m < N_MEMBERS; m++) {
        w[m] = ggml_new_tensor_2d(g_members[m].repack ? c_rep : c_pln, g_members[m].type, K, g_members[m].rows);
    }
    ggml_backend_buffer_t b_rep = ggml_backend_alloc_ctx_tensors_from_buft(c_rep, ggml_backend_cpu_repack_buffer_type());
    ggml_backend_buffer_t b_pln = ggml_backend_alloc_ctx_tensors_from_buft(c_pln, ggml_backend_cpu_buffer_type());
    for (int m = 0; m < N_MEMBERS; m++) {
        wq[m] = malloc(ggml_nbytes(w[m]));
        fill_weights(g_members[m].type, wq[m], g_members[m].rows);
        ggml_backend_tensor_set(w[m], wq[m], 0, ggml_nbytes(w[m]));
        TH_CHECK(ggml_cpu_repack_is_repacked(w[m]) == g_members[m].repack, "%s repacked as intended",
                 ggml_type_name(g_members[m].type));
    }

    struct ggml_init_params ip = { ggml_tensor_overhead() * 32 + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, ncols);
    struct ggml_tensor * y[N_MEMBERS];
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    for (int m = 0; m < N_MEMBERS; m++) {
        y[m] = ggml_mul_mat(ctx, w[m], x);
        // a view between members computes nothing and does not end the run
        ggml_build_forward_expand(gf, ggml_reshape_1d(ctx, y[m], ggml_nelements(y[m])));
    }
    ggml_backend_buffer_t bx = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    float * xv = malloc(sizeof(float) * (size_t) (K * ncols));
    for (int64_t i = 0; i < K * ncols; i++) {
        xv[i] = frand();
    }
    ggml_backend_tensor_set(x, xv, 0, ggml_nbytes(x));

    struct ggml_tensor * members[GGML_CPU_MM_GROUP_MAX];
    int last = -1;
    const int n = ggml_cpu_mul_mat_group(gf, 0, members, &last);
    TH_CHECK(gf->nodes[0] == y[0], "the first node is the first matmul");
    TH_CHECK(n == N_MEMBERS && last == gf->n_nodes - 2 && members[N_MEMBERS - 1] == y[N_MEMBERS - 1],
             "N=%lld: the %d matmuls form one group (got %d, last node %d of %d)", (long long) ncols, N_MEMBERS, n,
             last, gf->n_nodes);

    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, nth);
    TH_CHECK(ggml_backend_graph_compute(be, gf) == GGML_STATUS_SUCCESS, "compute");
    for (int m = 0; m < N_MEMBERS; m++) {
        const int64_t rows = g_members[m].rows;
        const size_t rs = ggml_row_size(g_members[m].type, K);
        float * out = malloc(ggml_nbytes(y[m]));
        ggml_backend_tensor_get(y[m], out, 0, ggml_nbytes(y[m]));
        int64_t bad = -1;
        float want = 0.0f;
        for (int64_t c = 0; c < ncols && bad < 0; c++) {
            for (int64_t r = 0; r < rows && bad < 0; r++) {
                want = expected(g_members[m].type, g_members[m].repack, wq[m] + (size_t) r * rs, xv + c * K);
                if (memcmp(&want, &out[c * rows + r], sizeof(float)) != 0) {
                    bad = c * rows + r;
                }
            }
        }
        TH_CHECK(bad < 0, "group member %s N=%lld nth=%d: element %lld is %.9g, vec_dot gives %.9g",
                 ggml_type_name(g_members[m].type), (long long) ncols, nth, (long long) bad,
                 bad < 0 ? 0.0 : (double) out[bad], (double) want);
        free(out);
    }
    ggml_backend_free(be);
    ggml_backend_buffer_free(bx);
    ggml_backend_buffer_free(b_rep);
    ggml_backend_buffer_free(b_pln);
    ggml_free(ctx);
    ggml_free(c_rep);
    ggml_free(c_pln);
    for (int m = 0; m < N_MEMBERS; m++) {
        free(wq[m]);
    }
    free(xv);
}

// runs that must end: a member reading another's output, another src1, a computed node in between, the GEMM
static void check_boundaries(int nth) {
    const int64_t ncols = 2;
    struct ggml_init_params ip = { ggml_tensor_overhead() * 32 + ggml_graph_overhead() + 4 * 1024 * 1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * wsq = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, K);
    struct ggml_tensor * x   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, ncols);
    struct ggml_tensor * x2  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, ncols);
    struct ggml_tensor * xg  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, GGML_CPU_GEMM_MIN_N);
    for (int64_t i = 0; i < K * K; i++) {
        ((float *) wsq->data)[i] = frand();
    }
    for (int64_t i = 0; i < K * ncols; i++) {
        ((float *) x->data)[i]  = frand();
        ((float *) x2->data)[i] = frand();
    }
    for (int64_t i = 0; i < K * GGML_CPU_GEMM_MIN_N; i++) {
        ((float *) xg->data)[i] = frand();
    }
    struct ggml_tensor * a = ggml_mul_mat(ctx, wsq, x); // [K, ncols]
    struct ggml_tensor * b = ggml_mul_mat(ctx, a, x);   // [ncols, ncols]: its weights are a's output
    struct ggml_tensor * c = ggml_mul_mat(ctx, wsq, x2);
    struct ggml_tensor * s = ggml_scale(ctx, x, 2.0f);
    struct ggml_tensor * d = ggml_mul_mat(ctx, wsq, x2); // would join c but for s
    struct ggml_tensor * e = ggml_mul_mat(ctx, wsq, xg);
    struct ggml_tensor * f = ggml_mul_mat(ctx, wsq, xg);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    struct ggml_tensor * order[] = { a, b, c, s, d, e, f };
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        ggml_build_forward_expand(gf, order[i]);
    }
    TH_CHECK(gf->n_nodes == 7, "seven nodes (%d)", gf->n_nodes);
    struct ggml_tensor * members[GGML_CPU_MM_GROUP_MAX];
    int last;
    TH_CHECK(ggml_cpu_mul_mat_group(gf, 0, members, &last) == 1 && last == 0, "weights from a member end the run");
    TH_CHECK(ggml_cpu_mul_mat_group(gf, 1, members, &last) == 1, "another src1 ends the run");
    TH_CHECK(ggml_cpu_mul_mat_group(gf, 2, members, &last) == 1, "a computed node in between ends the run");
    // (without a GEMM on this ISA they stay on the vec path, and group)
    const int n_gemm = ggml_cpu_mul_mat_group(gf, 5, members, &last);
    TH_CHECK(n_gemm == (ggml_cpu_gemm_supported(GGML_TYPE_F32) ? 1 : 2), "GEMM-sized matmuls are not grouped (%d)", n_gemm);
    TH_CHECK(ggml_cpu_mul_mat_group(gf, 3, members, &last) == 1, "a node that is no matmul is no group");

    // outputs that overlap: the second writes where the first did
    struct ggml_tensor * p = ggml_mul_mat(ctx, wsq, x);
    struct ggml_tensor * q = ggml_mul_mat(ctx, wsq, x);
    q->data = p->data;
    struct ggml_cgraph * g2 = ggml_new_graph(ctx);
    ggml_build_forward_expand(g2, p);
    ggml_build_forward_expand(g2, q);
    TH_CHECK(ggml_cpu_mul_mat_group(g2, 0, members, &last) == 1, "overlapping outputs are not grouped");

    TH_CHECK(ggml_graph_compute_with_ctx(ctx, gf, nth) == GGML_STATUS_SUCCESS, "compute");
    // b = a^T x, a = wsq^T x: in double from the inputs, so a hoisted b (reading a before it is written) fails
    double * av = malloc(sizeof(double) * K * ncols);
    for (int64_t cc = 0; cc < ncols; cc++) {
        for (int64_t r = 0; r < K; r++) {
            double acc = 0.0;
            for (int64_t i = 0; i < K; i++) {
                acc += (double) ((float *) wsq->data)[r * K + i] * ((float *) x->data)[cc * K + i];
            }
            av[cc * K + r] = acc;
        }
    }
    double max_err = 0.0;
    for (int64_t j = 0; j < ncols; j++) {
        for (int64_t r = 0; r < ncols; r++) {
            double acc = 0.0;
            for (int64_t i = 0; i < K; i++) {
                acc += av[r * K + i] * ((float *) x->data)[j * K + i];
            }
            const double err = fabs(acc - ((float *) b->data)[j * ncols + r]) / (1.0 + fabs(acc));
            max_err = err > max_err ? err : max_err;
        }
    }
    TH_CHECK(max_err < 1e-4, "nth=%d: the dependent matmul reads the finished output (rel err %.3g)", nth, max_err);
    free(av);
    ggml_free(ctx);
}

int main(void) {
    for (int nth = 1; nth <= 3; nth++) {
        for (int64_t ncols = 1; ncols < GGML_CPU_GEMM_MIN_N; ncols += (ncols < 6 ? 1 : 4)) {
            check_group(ncols, nth);
        }
        check_boundaries(nth);
    }
    return th_finish();
}
