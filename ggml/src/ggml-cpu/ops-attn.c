// FLASH_ATTN_EXT: softmax(scale * q·kᵀ (+ softcap) + slope * mask) · v with an online softmax, rounded
// where llama.cpp's CPU backend rounds (its outputs are our reference):
//
// - row path (fewer than 64 query rows, or K/V quantized or of different types): per query row, q is
//   converted to K's vec-dot type (F16 for F16 K, Q8_0 for Q4_0/Q8_0 K), each score is one vec_dot, the
//   running max/sum are floats updated with expf, and V·softmax accumulates in V's precision: an F16
//   accumulator rounded to F16 after every rescale and every multiply-add when V is F16, F32 otherwise.
//   Several query rows share one pass over K/V (FA_QB); with an F16 V the pass goes FA_KVB K/V rows at a
//   time, so that the accumulator of each query row stays in registers over a block. Neither changes a
//   rounding.
// - head-group path (the row path's case with an F16 K/V cache, grouped-query attention and one mask row for
//   every head: token generation): the query heads sharing a K/V head take its rows together, with the row
//   path's bits (see fa_heads).
// - tiled path (64+ query rows, K and V both F16 or both F32, DV % 16 == 0): tiles of 64 query rows x 64
//   K/V rows in F32: scores by a GEMM (one fma chain over the head dimension), a vectorized exp per tile
//   with the tile's sum in double, and V·softmax by a second GEMM into F32 accumulators.
//
// Tasks are (query rows x heads) blocks handed out through the pool's chunk counter; the scratch of each
// thread is carved from the work buffer (sized by ggml_cpu_fa_scratch_size), nothing is allocated here.

#include "ggml-cpu-impl.h"
#include "ggml-cpu-kernels.h"
#include "ops-attn.h"
#include "vec-expf.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#define FA_KVB GGML_FA_ROWS_MAX // K/V rows per block of the row paths with an F16 V
#define FA_HEADS 8               // query heads of one head-group task

// ---- kernel table of the active ISA -----------------------------------------------------------------------

static struct ggml_cpu_fa_kernels g_fa_tables[3];
static pthread_once_t             g_fa_once = PTHREAD_ONCE_INIT;

static void fa_tables_init(void) {
    ggml_cpu_fa_kernels_scalar(&g_fa_tables[GGML_CPU_ISA_SCALAR]);
    g_fa_tables[GGML_CPU_ISA_AVX2]   = g_fa_tables[GGML_CPU_ISA_SCALAR];
    g_fa_tables[GGML_CPU_ISA_AVX512] = g_fa_tables[GGML_CPU_ISA_SCALAR];
#if defined(__x86_64__) || defined(__i386__)
    if (ggml_cpu_isa_supported(GGML_CPU_ISA_AVX2)) {
        ggml_cpu_fa_kernels_avx2(&g_fa_tables[GGML_CPU_ISA_AVX2]);
    }
    if (ggml_cpu_isa_supported(GGML_CPU_ISA_AVX512)) {
        // AVX-512 implies AVX2: a kernel without an AVX-512 form (pack_kt) is the AVX2 one
        g_fa_tables[GGML_CPU_ISA_AVX512] = g_fa_tables[GGML_CPU_ISA_AVX2];
        ggml_cpu_fa_kernels_avx512(&g_fa_tables[GGML_CPU_ISA_AVX512]);
    }
#endif
}

const struct ggml_cpu_fa_kernels * ggml_cpu_fa_kernels_get(void) {
    pthread_once(&g_fa_once, fa_tables_init);
    return &g_fa_tables[ggml_cpu_isa_active()];
}

const struct ggml_cpu_fa_kernels * ggml_cpu_fa_kernels_isa(enum ggml_cpu_isa isa) {
    pthread_once(&g_fa_once, fa_tables_init);
    if (!ggml_cpu_isa_supported(isa)) {
        isa = GGML_CPU_ISA_SCALAR;
    }
    return &g_fa_tables[isa];
}

// ---- scratch ---------------------------------------------------------------------------------------------

static size_t pad_cl(size_t n) {
    return GGML_PAD(n, GGML_CPU_CACHE_LINE);
}

// query rows (row path) or heads (head-group path) one task carries at most
#define FA_ROWS_SCRATCH (FA_QB > FA_HEADS ? FA_QB : FA_HEADS)

// row paths: FA_ROWS_SCRATCH converted q rows, F32 and F16 accumulators, one dequantized V row, one q gather row
static size_t fa_row_scratch(int64_t DK, int64_t DV, size_t q_row_size) {
    return FA_ROWS_SCRATCH * (pad_cl(q_row_size) + pad_cl(sizeof(float) * (size_t) DV) +
                              pad_cl(sizeof(ggml_fp16_t) * (size_t) DV)) +
           pad_cl(sizeof(float) * (size_t) DV) + pad_cl(sizeof(float) * (size_t) DK);
}

// tiled path: q tiles and accumulators of a head group, scores, mask, V tile, transposed K tile (all F32)
static size_t fa_tile_scratch(int64_t DK, int64_t DV) {
    const size_t q  = GGML_FA_TILE_Q;
    const size_t kv = GGML_FA_TILE_KV;
    return GGML_FA_MAX_GROUP * (pad_cl(sizeof(float) * q * (size_t) DK) + pad_cl(sizeof(float) * q * (size_t) DV)) +
           pad_cl(sizeof(float) * q * kv) + pad_cl(sizeof(float) * q * kv) + pad_cl(sizeof(float) * kv * (size_t) DV) +
           pad_cl(sizeof(float) * kv * (size_t) DK);
}

size_t ggml_cpu_fa_scratch_size(int64_t DK, int64_t DV, size_t q_row_size) {
    const size_t a = fa_row_scratch(DK, DV, q_row_size);
    const size_t b = fa_tile_scratch(DK, DV);
    return a > b ? a : b;
}

// ---- shared setup ----------------------------------------------------------------------------------------

struct fa_args {
    const struct ggml_tensor * q, * k, * v, * mask, * sinks;
    struct ggml_tensor * dst;
    int64_t DK, DV, n_q, n_head, n_seq, n_kv;
    int64_t rk2, rv2, rk3, rv3;
    float scale, max_bias, softcap;
    const struct ggml_cpu_fa_kernels * fk;
};

static inline const char * fa_mask_row(const struct fa_args * a, int64_t iq1, int64_t iq2, int64_t iq3) {
    const struct ggml_tensor * m = a->mask;
    return m ? (const char *) m->data + iq1 * m->nb[1] + (iq2 % m->ne[2]) * m->nb[2] + (iq3 % m->ne[3]) * m->nb[3]
             : NULL;
}

static inline float fa_mask_value(const struct fa_args * a, const char * mrow, int64_t ic) {
    if (a->mask->type == GGML_TYPE_F16) {
        return GGML_FP16_TO_FP32(((const ggml_fp16_t *) mrow)[ic]);
    }
    return ggml_cpu_get_elem_f(mrow + ic * a->mask->nb[0], a->mask->type);
}

// the rows of a K/V block (bit c: row ic0 + c, nb <= 32) whose F16 mask value is not -inf. The others add
// nothing, and with a short context most of the (padded) cache is masked: scanning the raw halves skips
// them without converting each value.
static inline uint32_t fa_block_live(const struct fa_args * a, const char * mrow, int64_t ic0, int nb) {
    const uint32_t all = nb >= 32 ? 0xffffffffu : (1u << nb) - 1u;
    if (mrow == NULL || a->mask->type != GGML_TYPE_F16) {
        return all;
    }
    const uint16_t * m = (const uint16_t *) mrow + ic0;
    if (nb == 32) {
        // whole blocks are masked far more often than not: 8 word compares instead of 32 lane tests
        bool all_dead = true;
        for (int w = 0; w < 8; w++) {
            uint64_t four;
            memcpy(&four, m + 4 * w, sizeof(four));
            all_dead = all_dead && four == 0xfc00fc00fc00fc00ull;
        }
        if (all_dead) {
            return 0;
        }
    }
    uint32_t dead = 0;
    for (int c = 0; c < nb; c++) {
        dead |= (uint32_t) (m[c] == 0xfc00u) << c; // -inf
    }
    return all & ~dead;
}

static inline float * fa_dst_row(const struct fa_args * a, int64_t iq1, int64_t iq2, int64_t iq3) {
    const struct ggml_tensor * d = a->dst;
    return (float *) ((char *) d->data + iq3 * d->nb[3] + iq1 * d->nb[2] + iq2 * d->nb[1]);
}

// one score of the row path: q·k in K's vec-dot type, scaled, soft-capped, plus slope * mask
static inline float fa_row_score(const struct fa_args * a, const struct ggml_cpu_type_kernels * kk, const char * krow,
                                 const char * qc, float mv) {
    const int DK = (int) a->DK;
    float s;
    if (a->k->type == GGML_TYPE_F16) {
        s = a->fk->dot_f16(DK, (const ggml_fp16_t *) krow, (const ggml_fp16_t *) qc);
    } else if (a->k->type == GGML_TYPE_F32) {
        s = a->fk->dot_f32(DK, (const float *) krow, (const float *) qc);
    } else {
        kk->vec_dot(DK, &s, krow, qc);
    }
    s = s * a->scale;
    if (a->softcap != 0.0f) {
        s = a->softcap * tanhf(s);
    }
    return s + mv;
}

// the end of one query row of the row paths: the F16 accumulator (acc16, or NULL when acc already holds the
// F32 one) to F32, the sink's term, the division by the sum, the copy to dst
static void fa_row_finish(const struct fa_args * a, float * acc, const ggml_fp16_t * acc16, float M, float S,
                          int64_t iq1, int64_t iq2, int64_t iq3) {
    const int64_t DV = a->DV;
    if (acc16) {
        a->fk->f16_to_f32((int) DV, acc, acc16);
    }
    if (a->sinks) {
        const float s = ((const float *) a->sinks->data)[iq2];
        float ms = 1.0f;
        float vs = 1.0f;
        if (s > M) {
            ms = expf(M - s);
            a->fk->scale_f32((int) DV, acc, ms);
        } else {
            vs = expf(s - M);
        }
        S = fmaf(S, ms, vs);
    }
    const float S_inv = S == 0.0f ? 0.0f : 1.0f / S;
    a->fk->scale_f32((int) DV, acc, S_inv);
    memcpy(fa_dst_row(a, iq1, iq2, iq3), acc, sizeof(float) * (size_t) DV);
}

// ---- row path --------------------------------------------------------------------------------------------

static void fa_rows(const struct ggml_compute_params * params, const struct fa_args * a) {
    const struct ggml_tensor * q = a->q, * k = a->k, * v = a->v;
    const struct ggml_cpu_fa_kernels * fk = a->fk;
    const struct ggml_cpu_expf_kernels * ek = ggml_cpu_expf_kernels_get(); // once, not per block
    const int64_t DK = a->DK, DV = a->DV;

    const struct ggml_cpu_type_kernels * kk = ggml_cpu_get_kernels(k->type);
    const enum ggml_type q_type = kk->vec_dot_type;
    const size_t q_row_size = ggml_row_size(q_type, DK);
    const struct ggml_cpu_type_kernels * qk = ggml_cpu_get_kernels(q_type);
    const bool v_f16 = v->type == GGML_TYPE_F16;

    char * scratch = (char *) params->wdata + (size_t) params->ith * ggml_cpu_fa_scratch_size(DK, DV, q_row_size);
    const size_t q_stride   = pad_cl(q_row_size);
    const size_t a32_stride = pad_cl(sizeof(float) * (size_t) DV);
    const size_t a16_stride = pad_cl(sizeof(ggml_fp16_t) * (size_t) DV);
    char * q_conv = scratch;
    char * acc32b = q_conv + FA_ROWS_SCRATCH * q_stride;
    char * acc16b = acc32b + FA_ROWS_SCRATCH * a32_stride;
    float * v_tmp    = (float *) (acc16b + FA_ROWS_SCRATCH * a16_stride);
    float * q_gather = (float *) ((char *) v_tmp + a32_stride);

    const int64_t n_qb = (a->n_q + FA_QB - 1) / FA_QB;
    const int64_t n_tasks = n_qb * a->n_head * a->n_seq;
    for (int64_t t = params->ith; t < n_tasks; t = ggml_cpu_chunk_next(params)) {
        const int64_t qb  = t % n_qb;
        const int64_t iq2 = (t / n_qb) % a->n_head;
        const int64_t iq3 = t / (n_qb * a->n_head);
        const int64_t iq_begin = qb * FA_QB;
        const int64_t nq = a->n_q - iq_begin < FA_QB ? a->n_q - iq_begin : FA_QB;

        const float slope = ggml_cpu_alibi_slope(a->max_bias, iq2, a->n_head);
        const int64_t ik2 = iq2 / a->rk2, iv2 = iq2 / a->rv2;
        const int64_t ik3 = iq3 / a->rk3, iv3 = iq3 / a->rv3;

        float M[FA_QB];
        float S[FA_QB];
        const char * mrow[FA_QB];
        for (int64_t j = 0; j < nq; j++) {
            const int64_t iq1 = iq_begin + j;
            const char * qrow = (const char *) q->data + iq1 * q->nb[1] + iq2 * q->nb[2] + iq3 * q->nb[3];
            char * qc = q_conv + j * q_stride;
            const float * qf = (const float *) qrow;
            if (q->nb[0] != sizeof(float)) {
                for (int64_t i = 0; i < DK; i++) {
                    q_gather[i] = *(const float *) (qrow + i * q->nb[0]);
                }
                qf = q_gather;
            }
            if (q_type == GGML_TYPE_F32) {
                memcpy(qc, qf, sizeof(float) * (size_t) DK);
            } else {
                qk->from_float(qf, qc, DK);
            }
            mrow[j] = fa_mask_row(a, iq1, iq2, iq3);
            M[j] = -INFINITY;
            S[j] = 0.0f;
            if (v_f16) {
                memset(acc16b + j * a16_stride, 0, sizeof(ggml_fp16_t) * (size_t) DV);
            } else {
                memset(acc32b + j * a32_stride, 0, sizeof(float) * (size_t) DV);
            }
        }

        if (v_f16) {
            // per query row, a block of K/V rows at a time: the scores and the online softmax first (scalar),
            // then the F16 accumulator's rescales and multiply-adds in one kernel call that keeps it in
            // registers. Each row still sees llama.cpp's sequence: scale by ms on a new maximum, mad by vs.
            for (int64_t ic0 = 0; ic0 < a->n_kv; ic0 += FA_KVB) {
                const int nb = (int) (a->n_kv - ic0 < FA_KVB ? a->n_kv - ic0 : FA_KVB);
                for (int64_t j = 0; j < nq; j++) {
                    const ggml_fp16_t * vrows[FA_KVB];
                    float msb[FA_KVB];
                    float vsb[FA_KVB];
                    float eb[FA_KVB];      // the arguments of the block's expf calls, then their values
                    bool  new_max[FA_KVB]; // row r raised the maximum: eb[r] rescales the accumulator (ms)
                    int nr = 0;
                    // the running maximum does not depend on the exps: the block's arguments first, then one
                    // vector expf (libm's bits, vec-expf.h) for all of them
                    for (uint32_t live = fa_block_live(a, mrow[j], ic0, nb); live != 0; live &= live - 1) {
                        const int64_t ic = ic0 + __builtin_ctz(live);
                        const float mv = mrow[j] ? slope * fa_mask_value(a, mrow[j], ic) : 0.0f;
                        if (mv == -INFINITY) {
                            continue;
                        }
                        const char * krow = (const char *) k->data + ic * k->nb[1] + ik2 * k->nb[2] + ik3 * k->nb[3];
                        const float s = fa_row_score(a, kk, krow, q_conv + j * q_stride, mv);
                        new_max[nr] = s > M[j];
                        if (new_max[nr]) {
                            eb[nr] = M[j] - s;
                            M[j] = s;
                        } else {
                            eb[nr] = s - M[j];
                        }
                        vrows[nr] = (const ggml_fp16_t *) ((const char *) v->data + ic * v->nb[1] + iv2 * v->nb[2] + iv3 * v->nb[3]);
                        nr++;
                    }
                    if (nr == 0) {
                        continue;
                    }
                    ek->exp(nr, eb, eb);
                    for (int r = 0; r < nr; r++) {
                        msb[r] = new_max[r] ? eb[r] : 1.0f; // rescale of the accumulator on a new maximum
                        vsb[r] = new_max[r] ? 1.0f : eb[r]; // exp(s - M)
                        // llama.cpp's S = S*ms + vs is contracted to one fma by its compilers
                        S[j] = fmaf(S[j], msb[r], vsb[r]);
                    }
                    fk->mad_f16_rows((int) DV, (ggml_fp16_t *) (acc16b + j * a16_stride), vrows, msb, vsb, nr);
                }
            }
        } else {
            for (int64_t ic = 0; ic < a->n_kv; ic++) {
                const char * krow = (const char *) k->data + ic * k->nb[1] + ik2 * k->nb[2] + ik3 * k->nb[3];
                const char * vrow = (const char *) v->data + ic * v->nb[1] + iv2 * v->nb[2] + iv3 * v->nb[3];
                const float * vf = NULL;
                for (int64_t j = 0; j < nq; j++) {
                    const float mv = mrow[j] ? slope * fa_mask_value(a, mrow[j], ic) : 0.0f;
                    if (mv == -INFINITY) {
                        continue;
                    }
                    const float s = fa_row_score(a, kk, krow, q_conv + j * q_stride, mv);
                    float ms = 1.0f;
                    float vs = 1.0f;
                    float * acc = (float *) (acc32b + j * a32_stride);
                    if (s > M[j]) {
                        ms = expf(M[j] - s);
                        M[j] = s;
                        fk->scale_f32((int) DV, acc, ms);
                    } else {
                        vs = expf(s - M[j]);
                    }
                    if (vf == NULL) {
                        vf = ggml_cpu_row_to_float(vrow, v->type, v->nb[0], DV, v_tmp);
                    }
                    fk->mad_f32((int) DV, acc, vf, vs);
                    S[j] = fmaf(S[j], ms, vs);
                }
            }
        }

        for (int64_t j = 0; j < nq; j++) {
            const ggml_fp16_t * a16 = v_f16 ? (const ggml_fp16_t *) (acc16b + j * a16_stride) : NULL;
            fa_row_finish(a, (float *) (acc32b + j * a32_stride), a16, M[j], S[j], iq_begin + j, iq2, iq3);
        }
    }
}

// ---- head-group path -------------------------------------------------------------------------------------

// Token generation with an F16 cache and grouped-query attention: the query heads that share a K/V head go
// through its rows together, one task per (query row, group of heads). Each K/V row is read once for the
// group, and the heads' F16 accumulators advance side by side (mad_f16_rows_heads), where the row path runs
// one head's chain of dependent roundings at a time. The bits are the row path's: each head sees the same
// scores, the same online-softmax steps and the same accumulator roundings in the same order.
static bool fa_heads_usable(const struct fa_args * a) {
    // one mask row and one slope for every head of a group
    return a->q->type == GGML_TYPE_F32 && a->k->type == GGML_TYPE_F16 && a->v->type == GGML_TYPE_F16 &&
           a->rk2 == a->rv2 && a->rk2 >= 2 && a->max_bias == 0.0f && (a->mask == NULL || a->mask->ne[2] == 1) &&
           a->k->nb[0] == sizeof(ggml_fp16_t) && a->v->nb[0] == sizeof(ggml_fp16_t);
}

// heads per task: the largest divisor of the GQA ratio up to FA_HEADS, halved while that leaves the threads
// fewer than 4 tasks each (the two vCPUs of a VM rarely run at the same speed)
static int64_t fa_heads_group(const struct fa_args * a, int nth) {
    int64_t g = a->rk2 < FA_HEADS ? a->rk2 : FA_HEADS;
    while (a->rk2 % g != 0) {
        g--;
    }
    while (g % 2 == 0 && g > 2 && a->n_q * (a->n_head / g) * a->n_seq < 4 * (int64_t) nth) {
        g /= 2;
    }
    return g;
}

static void fa_heads(const struct ggml_compute_params * params, const struct fa_args * a, int64_t G) {
    const struct ggml_tensor * q = a->q, * k = a->k, * v = a->v;
    const struct ggml_cpu_fa_kernels * fk = a->fk;
    const struct ggml_cpu_expf_kernels * ek = ggml_cpu_expf_kernels_get();
    const int64_t DK = a->DK, DV = a->DV;
    const struct ggml_cpu_type_kernels * hk = ggml_cpu_get_kernels(GGML_TYPE_F16);
    const size_t q_row_size = ggml_row_size(GGML_TYPE_F16, DK);

    char * scratch = (char *) params->wdata + (size_t) params->ith * ggml_cpu_fa_scratch_size(DK, DV, q_row_size);
    const size_t q_stride   = pad_cl(q_row_size);
    const size_t a32_stride = pad_cl(sizeof(float) * (size_t) DV);
    const size_t a16_stride = pad_cl(sizeof(ggml_fp16_t) * (size_t) DV);
    char  * q_conv   = scratch;
    float * acc32    = (float *) (q_conv + FA_ROWS_SCRATCH * q_stride);
    char  * acc16b   = (char *) acc32 + FA_ROWS_SCRATCH * a32_stride;
    float * q_gather = (float *) (acc16b + FA_ROWS_SCRATCH * a16_stride + a32_stride);

    const ggml_fp16_t * qc[FA_HEADS];
    ggml_fp16_t * acc16[FA_HEADS];
    for (int64_t g = 0; g < G; g++) {
        qc[g] = (const ggml_fp16_t *) (q_conv + g * q_stride);
        acc16[g] = (ggml_fp16_t *) (acc16b + g * a16_stride);
    }

    const int64_t n_hg = a->n_head / G;
    const int64_t n_tasks = a->n_q * n_hg * a->n_seq;
    for (int64_t t = params->ith; t < n_tasks; t = ggml_cpu_chunk_next(params)) {
        const int64_t iq1 = t % a->n_q;
        const int64_t h0  = ((t / a->n_q) % n_hg) * G;
        const int64_t iq3 = t / (a->n_q * n_hg);
        const int64_t ik2 = h0 / a->rk2, ik3 = iq3 / a->rk3;
        const int64_t iv2 = h0 / a->rv2, iv3 = iq3 / a->rv3;
        const char * mrow = fa_mask_row(a, iq1, h0, iq3);
        const float slope = ggml_cpu_alibi_slope(a->max_bias, h0, a->n_head);

        float M[FA_HEADS];
        float S[FA_HEADS];
        for (int64_t g = 0; g < G; g++) {
            const char * qrow = (const char *) q->data + iq1 * q->nb[1] + (h0 + g) * q->nb[2] + iq3 * q->nb[3];
            const float * qf = (const float *) qrow;
            if (q->nb[0] != sizeof(float)) {
                for (int64_t i = 0; i < DK; i++) {
                    q_gather[i] = *(const float *) (qrow + i * q->nb[0]);
                }
                qf = q_gather;
            }
            hk->from_float(qf, (void *) qc[g], DK);
            M[g] = -INFINITY;
            S[g] = 0.0f;
            memset(acc16[g], 0, sizeof(ggml_fp16_t) * (size_t) DV);
        }

        for (int64_t ic0 = 0; ic0 < a->n_kv; ic0 += FA_KVB) {
            const int nb = (int) (a->n_kv - ic0 < FA_KVB ? a->n_kv - ic0 : FA_KVB);
            const ggml_fp16_t * krows[FA_KVB];
            const ggml_fp16_t * vrows[FA_KVB];
            float mvs[FA_KVB];
            int nr = 0;
            for (uint32_t live = fa_block_live(a, mrow, ic0, nb); live != 0; live &= live - 1) {
                const int64_t ic = ic0 + __builtin_ctz(live);
                const float mv = mrow ? slope * fa_mask_value(a, mrow, ic) : 0.0f;
                if (mv == -INFINITY) {
                    continue;
                }
                const char * kb = (const char *) k->data + ik2 * k->nb[2] + ik3 * k->nb[3];
                const char * vb = (const char *) v->data + iv2 * v->nb[2] + iv3 * v->nb[3];
                krows[nr] = (const ggml_fp16_t *) (kb + ic * k->nb[1]);
                vrows[nr] = (const ggml_fp16_t *) (vb + ic * v->nb[1]);
                mvs[nr] = mv;
                nr++;
            }
            if (nr == 0) {
                continue;
            }
            // [head][row] with row stride nr: the scores, then the exp arguments and values, then the steps
            float sc[FA_HEADS * FA_KVB];
            float msb[FA_HEADS * FA_KVB];
            float vsb[FA_HEADS * FA_KVB];
            bool new_max[FA_HEADS * FA_KVB];
            fk->dot_f16_heads((int) DK, krows, nr, qc, (int) G, sc, nr);
            // the exp arguments: the heads' running maxima are independent chains, rows outer lets them overlap
            for (int r = 0; r < nr; r++) {
                for (int64_t g = 0; g < G; g++) {
                    const int e = (int) g * nr + r;
                    float s = sc[e] * a->scale;
                    if (a->softcap != 0.0f) {
                        s = a->softcap * tanhf(s);
                    }
                    s = s + mvs[r];
                    const float m = M[g];
                    new_max[e] = s > m;
                    sc[e] = new_max[e] ? m - s : s - m;
                    M[g] = new_max[e] ? s : m;
                }
            }
            ek->exp((int) G * nr, sc, sc);
            fk->softmax_steps_heads((int) G, nr, nr, sc, new_max, msb, vsb, S);
            fk->mad_f16_rows_heads((int) DV, acc16, (int) G, vrows, msb, vsb, nr, nr);
        }

        for (int64_t g = 0; g < G; g++) {
            fa_row_finish(a, acc32, acc16[g], M[g], S[g], iq1, h0 + g, iq3);
        }
    }
}

// ---- tiled path ------------------------------------------------------------------------------------------

// heads of one group share K/V (GQA): their tiles are packed once for all of them. The group may be split
// when that leaves too few tasks for the threads.
static int64_t fa_tile_group(const struct fa_args * a, int nth) {
    int64_t g = a->rk2 == a->rv2 ? a->rk2 : 1;
    while (g > GGML_FA_MAX_GROUP && g % 2 == 0) {
        g /= 2;
    }
    if (g > GGML_FA_MAX_GROUP) {
        g = 1;
    }
    const int64_t n_qt = (a->n_q + GGML_FA_TILE_Q - 1) / GGML_FA_TILE_Q;
    while (g % 2 == 0 && n_qt * (a->n_head / g) * a->n_seq < 4 * (int64_t) nth) {
        g /= 2;
    }
    return g;
}

static void fa_tiles(const struct ggml_compute_params * params, const struct fa_args * a) {
    const struct ggml_tensor * q = a->q, * k = a->k, * v = a->v;
    const struct ggml_cpu_fa_kernels * fk = a->fk;
    const int64_t DK = a->DK, DV = a->DV;
    enum { TQ = GGML_FA_TILE_Q, TKV = GGML_FA_TILE_KV };
    const bool kv_f16 = k->type == GGML_TYPE_F16;
    const int64_t G = fa_tile_group(a, params->nth);

    char * scratch = (char *) params->wdata +
                     (size_t) params->ith * ggml_cpu_fa_scratch_size(DK, DV, ggml_row_size(ggml_cpu_get_kernels(k->type)->vec_dot_type, DK));
    const size_t qt_stride  = pad_cl(sizeof(float) * TQ * (size_t) DK);
    const size_t vkq_stride = pad_cl(sizeof(float) * TQ * (size_t) DV);
    char  * Qtb  = scratch;                                                          // G x [TQ][DK]
    char  * VKQb = Qtb + GGML_FA_MAX_GROUP * qt_stride;                              // G x [TQ][DV]
    float * KQ   = (float *) (VKQb + GGML_FA_MAX_GROUP * vkq_stride);                // [TQ][TKV]
    float * M32  = (float *) ((char *) KQ + pad_cl(sizeof(float) * TQ * TKV));       // [TQ][TKV] slope * mask
    float * Vt   = (float *) ((char *) M32 + pad_cl(sizeof(float) * TQ * TKV));      // [TKV][DV]
    float * Kt   = (float *) ((char *) Vt + pad_cl(sizeof(float) * TKV * (size_t) DV)); // [DK][TKV] transposed

    // one converted mask tile serves every head of the group when neither the mask nor the slope varies by head
    const bool mask_shared = a->mask && a->mask->ne[2] == 1 && a->max_bias <= 0.0f;

    const int64_t n_qt = (a->n_q + TQ - 1) / TQ;
    const int64_t n_hg = a->n_head / G;
    const int64_t n_tasks = n_qt * n_hg * a->n_seq;
    for (int64_t t = params->ith; t < n_tasks; t = ggml_cpu_chunk_next(params)) {
        const int64_t qt  = t % n_qt;
        const int64_t h0  = ((t / n_qt) % n_hg) * G;
        const int64_t iq3 = t / (n_qt * n_hg);
        const int64_t iq_begin = qt * TQ;
        const int nq = (int) (a->n_q - iq_begin < TQ ? a->n_q - iq_begin : TQ);
        const int64_t ik2 = h0 / a->rk2, iv2 = h0 / a->rv2;
        const int64_t ik3 = iq3 / a->rk3, iv3 = iq3 / a->rv3;

        float M[GGML_FA_MAX_GROUP][TQ];
        float S[GGML_FA_MAX_GROUP][TQ];
        for (int64_t g = 0; g < G; g++) {
            float * Qt = (float *) (Qtb + g * qt_stride);
            for (int j = 0; j < nq; j++) {
                const char * qrow = (const char *) q->data + (iq_begin + j) * q->nb[1] + (h0 + g) * q->nb[2] + iq3 * q->nb[3];
                if (q->nb[0] == sizeof(float)) {
                    memcpy(Qt + j * DK, qrow, sizeof(float) * (size_t) DK);
                } else {
                    for (int64_t i = 0; i < DK; i++) {
                        Qt[j * DK + i] = *(const float *) (qrow + i * q->nb[0]);
                    }
                }
                M[g][j] = -INFINITY;
                S[g][j] = 0.0f;
            }
            memset(VKQb + g * vkq_stride, 0, sizeof(float) * (size_t) nq * (size_t) DV);
        }
        // columns of a partial last tile are computed on zeros and then replaced by -inf
        memset(Kt, 0, sizeof(float) * TKV * (size_t) DK);

        for (int64_t ic = 0; ic < a->n_kv; ic += TKV) {
            const int nkv = (int) (a->n_kv - ic < TKV ? a->n_kv - ic : TKV);
            bool packed = false;

            for (int64_t g = 0; g < G; g++) {
                const int64_t iq2 = h0 + g;
                float * Qt  = (float *) (Qtb + g * qt_stride);
                float * VKQ = (float *) (VKQb + g * vkq_stride);

                if (a->mask && (g == 0 || !mask_shared)) {
                    const float slope = ggml_cpu_alibi_slope(a->max_bias, iq2, a->n_head);
                    bool all_masked = true;
                    for (int j = 0; j < nq; j++) {
                        const char * mrow = fa_mask_row(a, iq_begin + j, iq2, iq3);
                        float * mr = M32 + j * TKV;
                        // slope * mask, one product per element (none is needed for a slope of 1)
                        if (a->mask->type == GGML_TYPE_F16) {
                            fk->f16_to_f32(nkv, mr, (const ggml_fp16_t *) mrow + ic);
                            if (slope != 1.0f) {
                                fk->scale_f32(nkv, mr, slope);
                            }
                        } else if (a->mask->type == GGML_TYPE_F32 && a->mask->nb[0] == sizeof(float)) {
                            memcpy(mr, (const float *) mrow + ic, sizeof(float) * (size_t) nkv);
                            if (slope != 1.0f) {
                                fk->scale_f32(nkv, mr, slope);
                            }
                        } else {
                            for (int c = 0; c < nkv; c++) {
                                mr[c] = slope * fa_mask_value(a, mrow, ic + c);
                            }
                        }
                        for (int c = 0; c < nkv && all_masked; c++) {
                            all_masked = mr[c] == -INFINITY;
                        }
                        for (int c = nkv; c < TKV; c++) {
                            mr[c] = -INFINITY;
                        }
                    }
                    if (all_masked) {
                        if (mask_shared) {
                            break; // the same for every head of the group
                        }
                        continue;
                    }
                }

                if (!packed) {
                    const char * k0 = (const char *) k->data + ic * k->nb[1] + ik2 * k->nb[2] + ik3 * k->nb[3];
                    fk->pack_kt(Kt, TKV, k0, k->nb[1], nkv, (int) DK, kv_f16);
                    for (int c = 0; c < nkv; c++) {
                        const char * vrow = (const char *) v->data + (ic + c) * v->nb[1] + iv2 * v->nb[2] + iv3 * v->nb[3];
                        if (kv_f16) {
                            fk->f16_to_f32((int) DV, Vt + c * DV, (const ggml_fp16_t *) vrow);
                        } else {
                            memcpy(Vt + c * DV, vrow, sizeof(float) * (size_t) DV);
                        }
                    }
                    packed = true;
                }

                memset(KQ, 0, sizeof(float) * (size_t) nq * TKV);
                fk->gemm(KQ, TKV, Qt, (size_t) DK, Kt, TKV, nq, (int) DK, TKV);
                fk->scale_f32(nq * TKV, KQ, a->scale);
                for (int j = 0; j < nq; j++) {
                    float * kr = KQ + j * TKV;
                    if (a->softcap != 0.0f) {
                        for (int c = 0; c < nkv; c++) {
                            kr[c] = a->softcap * tanhf(kr[c]);
                        }
                    }
                    for (int c = nkv; c < TKV; c++) {
                        kr[c] = -INFINITY;
                    }
                    const float tile_max = fk->add_max(TKV, kr, a->mask ? M32 + j * TKV : NULL);
                    if (tile_max == -INFINITY) {
                        memset(kr, 0, sizeof(float) * TKV); // adds nothing to V·softmax
                        continue;
                    }
                    const float M_new = fmaxf(M[g][j], tile_max);
                    if (M_new > M[g][j]) {
                        const float ms = expf(M[g][j] - M_new);
                        fk->scale_f32((int) DV, VKQ + j * DV, ms);
                        S[g][j] = S[g][j] * ms;
                    }
                    M[g][j] = M_new;
                    S[g][j] = (float) ((double) S[g][j] + fk->softmax(TKV, kr, M_new));
                }

                // the padded columns hold exp(-inf) = 0 and would only add +0: the product stops at nkv
                fk->gemm(VKQ, (size_t) DV, KQ, TKV, Vt, (size_t) DV, nq, nkv, (int) DV);
            }
        }

        for (int64_t g = 0; g < G; g++) {
            const int64_t iq2 = h0 + g;
            for (int j = 0; j < nq; j++) {
                float * acc = (float *) (VKQb + g * vkq_stride) + j * DV;
                if (a->sinks) {
                    const float s = ((const float *) a->sinks->data)[iq2];
                    float ms = 1.0f;
                    float vs = 1.0f;
                    if (s > M[g][j]) {
                        ms = expf(M[g][j] - s);
                        fk->scale_f32((int) DV, acc, ms);
                    } else {
                        vs = expf(s - M[g][j]);
                    }
                    S[g][j] = fmaf(S[g][j], ms, vs);
                }
                const float S_inv = S[g][j] == 0.0f ? 0.0f : 1.0f / S[g][j];
                fk->scale_f32((int) DV, acc, S_inv);
                memcpy(fa_dst_row(a, iq_begin + j, iq2, iq3), acc, sizeof(float) * (size_t) DV);
            }
        }
    }
}

// ---- entry -----------------------------------------------------------------------------------------------

void ggml_cpu_forward_flash_attn_ext(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    struct fa_args a;
    a.q     = dst->src[0];
    a.k     = dst->src[1];
    a.v     = dst->src[2];
    a.mask  = dst->src[3];
    a.sinks = dst->src[4];
    a.dst   = dst;
    a.DK     = a.q->ne[0];
    a.DV     = a.v->ne[0];
    a.n_q    = a.q->ne[1];
    a.n_head = a.q->ne[2];
    a.n_seq  = a.q->ne[3];
    a.n_kv   = a.k->ne[1];
    a.rk2 = a.n_head / a.k->ne[2];
    a.rv2 = a.n_head / a.v->ne[2];
    a.rk3 = a.n_seq / a.k->ne[3];
    a.rv3 = a.n_seq / a.v->ne[3];
    a.scale    = ggml_get_op_params_f32(dst, 0);
    a.max_bias = ggml_get_op_params_f32(dst, 1);
    a.softcap  = ggml_get_op_params_f32(dst, 2);
    if (a.softcap != 0.0f) {
        a.scale /= a.softcap;
    }
    a.fk = ggml_cpu_fa_kernels_get();

    const bool kv_float = a.k->type == GGML_TYPE_F16 || a.k->type == GGML_TYPE_F32;
    const bool tiled = a.q->type == GGML_TYPE_F32 && kv_float && a.k->type == a.v->type && a.n_q >= GGML_FA_TILE_Q &&
                       a.DV % GGML_FA_LANES == 0 && a.k->nb[0] == ggml_type_size(a.k->type) &&
                       a.v->nb[0] == ggml_type_size(a.v->type);
    const int64_t heads = !tiled && fa_heads_usable(&a) ? fa_heads_group(&a, params->nth) : 1;
    if (tiled) {
        fa_tiles(params, &a);
    } else if (heads >= 2) {
        fa_heads(params, &a, heads);
    } else {
        fa_rows(params, &a);
    }
}
