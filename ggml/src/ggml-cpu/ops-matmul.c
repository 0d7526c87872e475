// MUL_MAT and MUL_MAT_ID. Activations (src1) are first converted row by row to the weight type's vec-dot
// format (ggml's activation formats: Q8_0 / Q8_1 / Q8_K / F16 / BF16 / F32); then each output element is one
// vec_dot of a weight row with a converted activation row (or, with many activation rows, a tile of the
// GEMM in gemm.h). Work is handed out in chunks of weight rows x activation rows through the pool's atomic
// counter. Runs of matmuls that share their activations are computed as one group (see the vec path).

#include "ggml-cpu-impl.h"
#include "ggml-cpu-kernels.h"
#include "gemm.h"
#include "repack.h"

#include <string.h>

// converts rows [r0, r1) of src1 into wdata (contiguous rows of vec_dot_type, row r at r * row_size)
static void convert_src1(const struct ggml_tensor * src1, enum ggml_type vec_dot_type, char * wdata, size_t row_size,
                         int64_t r0, int64_t r1) {
    const int64_t ne10 = src1->ne[0];
    const struct ggml_cpu_type_kernels * vk = ggml_cpu_get_kernels(vec_dot_type);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i11 = r % src1->ne[1], i12 = (r / src1->ne[1]) % src1->ne[2], i13 = r / (src1->ne[1] * src1->ne[2]);
        const char * s = (const char *) src1->data + i11 * src1->nb[1] + i12 * src1->nb[2] + i13 * src1->nb[3];
        char * d = wdata + (size_t) r * row_size;
        if (src1->type == vec_dot_type) {
            // same format but not contiguous: gather
            const size_t es = ggml_type_size(vec_dot_type);
            for (int64_t i = 0; i < ne10; i++) {
                memcpy(d + (size_t) i * es, s + i * src1->nb[0], es);
            }
            continue;
        }
        // src1 is F32 here (ggml_cpu_supports_op)
        const float * x = (const float *) s;
        float tmp_small[256];
        if (src1->nb[0] != sizeof(float)) {
            // rare (permuted activations): gather through the destination row's tail is not possible for
            // packed formats, so convert in pieces of whole blocks
            const int64_t bs = ggml_blck_size(vec_dot_type);
            const int64_t piece = bs > 256 ? bs : (256 / bs) * bs;
            GGML_ASSERT(piece <= 256);
            for (int64_t i0 = 0; i0 < ne10; i0 += piece) {
                const int64_t n = ne10 - i0 < piece ? ne10 - i0 : piece;
                for (int64_t i = 0; i < n; i++) {
                    tmp_small[i] = *(const float *) (s + (i0 + i) * src1->nb[0]);
                }
                if (vec_dot_type == GGML_TYPE_F32) {
                    memcpy(d + (size_t) i0 * sizeof(float), tmp_small, (size_t) n * sizeof(float));
                } else {
                    vk->from_float(tmp_small, d + ggml_row_size(vec_dot_type, i0), n);
                }
            }
            continue;
        }
        if (vec_dot_type == GGML_TYPE_F32) {
            memcpy(d, x, (size_t) ne10 * sizeof(float));
        } else {
            vk->from_float(x, d, ne10);
        }
    }
}

// ---- GEMM path (gemm.h): many columns, weights repacked per tile of rows --------------------------------

static bool mul_mat_use_gemm(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    return ggml_cpu_gemm_supported(src0->type) && src1->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 &&
           dst->nb[0] == sizeof(float) && src0->nb[0] == ggml_type_size(src0->type) &&
           src0->nb[1] <= (size_t) INT32_MAX / GGML_CPU_GEMM_ROWS && // the packers gather with 32-bit offsets
           (ggml_blck_size(src0->type) == 1 || src0->ne[0] % 32 == 0) && src1->ne[1] >= GGML_CPU_GEMM_MIN_N;
}

static bool mul_mat_id_use_gemm(const struct ggml_tensor * dst);
static size_t mul_mat_id_gemm_work_size(const struct ggml_tensor * dst, int n_threads);

size_t ggml_cpu_mul_mat_gemm_work_size(const struct ggml_tensor * node, int n_threads) {
    if (node->op == GGML_OP_MUL_MAT_ID && mul_mat_id_use_gemm(node)) {
        return mul_mat_id_gemm_work_size(node, n_threads);
    }
    if (node->op != GGML_OP_MUL_MAT || !mul_mat_use_gemm(node)) {
        return 0;
    }
    const int64_t k = node->src[0]->ne[0];
    // activation rows, one packed tile per thread, slack to align the start to a cache line
    const struct ggml_tensor * s1 = node->src[1];
    return ggml_cpu_gemm_act_size(node->src[0]->type, k, s1->ne[1]) * (size_t) (s1->ne[2] * s1->ne[3]) +
           (size_t) n_threads * GGML_PAD(ggml_cpu_gemm_pack_size(node->src[0]->type, k), GGML_CPU_CACHE_LINE) + GGML_CPU_CACHE_LINE;
}

static void mul_mat_gemm(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    GGML_TENSOR_BINARY_OP_LOCALS

    const size_t act_row = ggml_cpu_gemm_act_row_size(src0->type, ne10);
    const size_t act_mat = ggml_cpu_gemm_act_size(src0->type, ne10, ne11); // one (i12, i13) matrix
    const size_t pack_sz = GGML_PAD(ggml_cpu_gemm_pack_size(src0->type, ne00), GGML_CPU_CACHE_LINE);
    char * base = (char *) GGML_PAD((uintptr_t) params->wdata, GGML_CPU_CACHE_LINE);
    char * act  = base;
    char * pack = act + act_mat * (size_t) (ne12 * ne13) + (size_t) params->ith * pack_sz;
    // repacked weights: one group of 16 rows = one GEMM tile, packed straight from the group (every repack type
    // has a direct packer)
    const bool repacked = ggml_cpu_repack_is_repacked(src0);

    // quantize every activation row once (rows split across threads)
    {
        const int64_t nr = ggml_nrows(src1);
        int64_t r0, r1;
        ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            const int64_t i11 = r % ne11, i12 = (r / ne11) % ne12, i13 = r / (ne11 * ne12);
            const char * s = (const char *) src1->data + i11 * nb11 + i12 * nb12 + i13 * nb13;
            if (nb10 == sizeof(float)) {
                ggml_cpu_gemm_act_from_float(src0->type, (const float *) s, act + (size_t) (r / ne11) * act_mat, ne10, i11);
                continue;
            }
            // permuted activations: gather the row first
            float * row = (float *) pack; // this thread's pack area is free until the products start
            for (int64_t i = 0; i < ne10; i++) {
                row[i] = *(const float *) (s + i * nb10);
            }
            ggml_cpu_gemm_act_from_float(src0->type, row, act + (size_t) (r / ne11) * act_mat, ne10, i11);
        }
    }
    ggml_cpu_barrier(params);

    const int64_t r2 = ne12 / ne02;
    const int64_t r3 = ne13 / ne03;
    const int64_t ntile = (ne01 + GGML_CPU_GEMM_ROWS - 1) / GGML_CPU_GEMM_ROWS;
    const int64_t nchunks = ntile * ne12 * ne13;
    for (int64_t chunk = params->ith; chunk < nchunks; chunk = ggml_cpu_chunk_next(params)) {
        const int64_t t   = chunk % ntile;
        const int64_t i12 = (chunk / ntile) % ne12;
        const int64_t i13 = chunk / (ntile * ne12);
        const int64_t row0 = t * GGML_CPU_GEMM_ROWS;
        const int nrows = (int) (ne01 - row0 < GGML_CPU_GEMM_ROWS ? ne01 - row0 : GGML_CPU_GEMM_ROWS);
        const char * w = (const char *) src0->data + (i12 / r2) * nb02 + (i13 / r3) * nb03 + row0 * nb01;
        if (!repacked) {
            ggml_cpu_gemm_pack(src0->type, ne00, w, nb01, nrows, pack);
        } else {
            const bool packed = ggml_cpu_gemm_pack_repacked(src0->type, ne00, w, pack);
            GGML_ASSERT(packed && "a repack type without a direct GEMM packer");
        }
        const char * a = act + (size_t) (i12 + i13 * ne12) * act_mat;
        float * d = (float *) ((char *) dst->data + i12 * nb2 + i13 * nb3 + row0 * nb0);
        ggml_cpu_gemm_run(src0->type, ne00, pack, nrows, a, act_row, (int) ne11, d, nb1);
    }
}

// ---- the vec path: fewer activation columns than the GEMM takes -------------------------------------------
//
// Each output is one vec_dot of a weight row with an activation row converted to the type's vec-dot format,
// or, for repacked weights (repack.h), one interleaved gemv per column and group of 16 rows. Work goes out in
// chunks of weight rows (x activation rows) through the pool's counter.
//
// A run of MUL_MATs reading the same activations (q/k/v, gate/up) is computed as one group: the activations
// are converted once per vec-dot format and the chunks of all members come from one counter, so the threads
// meet once for the run instead of once or twice per matmul, and nobody idles at the tail of a small matmul
// (k and v of a GQA model are 8x smaller than q). With at most MM_PRIVATE_ROWS activation rows every thread
// converts them all into its own slice of the work buffer: a few microseconds of duplicated conversion cost
// less than a barrier where one thread converts and the others wait.
#define MM_PRIVATE_ROWS 4
#define MM_BLCK_0 32 // weight rows per chunk
#define MM_BLCK_1 16 // activation rows per chunk

struct mm_vec_job {
    struct ggml_tensor * dst;
    const char * act;  // converted activation rows (row r at r * act_row); NULL: src1's own rows are used
    size_t act_row;
    bool repacked;
    ggml_cpu_repack_gemv_t gemv; // repacked: the active ISA's gemv of the type
    int64_t blck0;     // weight rows per chunk (repacked: groups of GGML_CPU_REPACK_ROWS rows)
    int64_t nchunk0;   // chunks along the weight rows
    int64_t nchunks;
};

static enum ggml_type mm_vec_dot_type(const struct ggml_tensor * dst) {
    return ggml_cpu_get_kernels(dst->src[0]->type)->vec_dot_type;
}

// src1 already has the vec-dot format with contiguous rows (never for repacked weights: their gemvs take
// converted rows only)
static bool mm_vec_direct(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src1 = dst->src[1];
    const enum ggml_type t = mm_vec_dot_type(dst);
    return !ggml_cpu_repack_is_repacked(dst->src[0]) && src1->type == t && src1->nb[0] == ggml_type_size(t);
}

// where each member's converted activations go in one thread's slice (SIZE_MAX: direct), members of the same
// vec-dot format sharing one conversion; returns the slice's size
static size_t mm_vec_layout(struct ggml_tensor * const * dsts, int n, size_t * offs) {
    const struct ggml_tensor * src1 = dsts[0]->src[1];
    size_t size = 0;
    for (int m = 0; m < n; m++) {
        offs[m] = SIZE_MAX;
        if (mm_vec_direct(dsts[m])) {
            continue;
        }
        for (int o = 0; o < m && offs[m] == SIZE_MAX; o++) {
            if (offs[o] != SIZE_MAX && mm_vec_dot_type(dsts[o]) == mm_vec_dot_type(dsts[m])) {
                offs[m] = offs[o];
            }
        }
        if (offs[m] == SIZE_MAX) {
            offs[m] = size;
            size += GGML_PAD(ggml_row_size(mm_vec_dot_type(dsts[m]), src1->ne[0]) * (size_t) ggml_nrows(src1),
                             GGML_CPU_CACHE_LINE);
        }
    }
    return size;
}

static bool mm_vec_private(const struct ggml_tensor * src1, int nth) {
    return nth > 1 && ggml_nrows(src1) <= MM_PRIVATE_ROWS;
}

size_t ggml_cpu_mul_mat_vec_work_size(struct ggml_tensor * const * dsts, int n, int n_threads) {
    size_t offs[GGML_CPU_MM_GROUP_MAX];
    const size_t slice = mm_vec_layout(dsts, n, offs);
    if (slice == 0) {
        return 0;
    }
    return GGML_CPU_CACHE_LINE + slice * (mm_vec_private(dsts[0]->src[1], n_threads) ? (size_t) n_threads : 1);
}

static void mm_vec_job_init(struct mm_vec_job * job, struct ggml_tensor * dst, int nth) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    job->dst = dst;
    job->repacked = ggml_cpu_repack_is_repacked(src0);
    job->gemv = job->repacked ? ggml_cpu_repack_gemv(src0->type, -1) : NULL;
    if (job->repacked) {
        // about 8 chunks of row groups per thread, so that uneven thread speeds even out; a chunk runs every
        // column, so columns after the first read its weights from cache, not memory
        const int64_t ngroups = src0->ne[1] / GGML_CPU_REPACK_ROWS;
        const int64_t per = ngroups / (nth * 8);
        job->blck0   = per < 1 ? 1 : per;
        job->nchunk0 = (ngroups + job->blck0 - 1) / job->blck0;
        job->nchunks = job->nchunk0;
        return;
    }
    const int64_t nr0 = src0->ne[1];
    const int64_t nr1 = src1->ne[1] * src1->ne[2] * src1->ne[3];
    // with a single activation row split the weights finer so every thread gets work
    int64_t blck0 = MM_BLCK_0;
    if (nr1 == 1 && nr0 < MM_BLCK_0 * nth * 4) {
        blck0 = (nr0 + nth * 4 - 1) / (nth * 4);
        blck0 = blck0 < 1 ? 1 : blck0;
    }
    job->blck0   = blck0;
    job->nchunk0 = (nr0 + blck0 - 1) / blck0;
    job->nchunks = job->nchunk0 * ((nr1 + MM_BLCK_1 - 1) / MM_BLCK_1);
}

// the activation row ir1 (flattened over ne11, ne12, ne13) of a job
static const char * mm_vec_act(const struct mm_vec_job * job, int64_t ir1) {
    if (job->act != NULL) {
        return job->act + (size_t) ir1 * job->act_row;
    }
    const struct ggml_tensor * src1 = job->dst->src[1];
    const int64_t i11 = ir1 % src1->ne[1], i12 = (ir1 / src1->ne[1]) % src1->ne[2], i13 = ir1 / (src1->ne[1] * src1->ne[2]);
    return (const char *) src1->data + i11 * src1->nb[1] + i12 * src1->nb[2] + i13 * src1->nb[3];
}

static void mm_vec_run_repacked(const struct mm_vec_job * job, int64_t chunk) {
    struct ggml_tensor * dst = job->dst;
    const struct ggml_tensor * src0 = dst->src[0];
    const int64_t ngroups = src0->ne[1] / GGML_CPU_REPACK_ROWS;
    const int64_t g0 = chunk * job->blck0;
    const int64_t ng = ngroups - g0 < job->blck0 ? ngroups - g0 : job->blck0;
    const int64_t ne11 = dst->ne[1], ne12 = dst->ne[2];
    const int64_t nr1 = ne11 * ne12 * dst->ne[3];
    for (int64_t ir1 = 0; ir1 < nr1; ir1++) {
        const int64_t i11 = ir1 % ne11, i12 = (ir1 / ne11) % ne12, i13 = ir1 / (ne11 * ne12);
        float * d = (float *) ((char *) dst->data + i11 * dst->nb[1] + i12 * dst->nb[2] + i13 * dst->nb[3]) +
                    g0 * GGML_CPU_REPACK_ROWS;
        job->gemv(src0->ne[0], d, (const char *) src0->data + g0 * GGML_CPU_REPACK_ROWS * src0->nb[1],
             mm_vec_act(job, ir1), ng);
    }
}

static void mm_vec_run_plain(const struct mm_vec_job * job, int64_t chunk) {
    struct ggml_tensor * dst = job->dst;
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    GGML_TENSOR_BINARY_OP_LOCALS
    const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(src0->type);
    const int64_t r2 = ne12 / ne02;
    const int64_t r3 = ne13 / ne03;
    const int64_t nr0 = ne01;
    const int64_t nr1 = ne11 * ne12 * ne13;
    const int64_t ir0_start = (chunk % job->nchunk0) * job->blck0;
    const int64_t ir0_end   = ir0_start + job->blck0 < nr0 ? ir0_start + job->blck0 : nr0;
    const int64_t ir1_start = (chunk / job->nchunk0) * MM_BLCK_1;
    const int64_t ir1_end   = ir1_start + MM_BLCK_1 < nr1 ? ir1_start + MM_BLCK_1 : nr1;
    const size_t by = job->act != NULL ? job->act_row : nb11;
    for (int64_t ir1 = ir1_start; ir1 < ir1_end;) {
        const int64_t i11 = ir1 % ne11;
        const int64_t i12 = (ir1 / ne11) % ne12;
        const int64_t i13 = ir1 / (ne11 * ne12);
        // columns sharing one weight matrix and one activation stride go through vec_dot_mc together
        int64_t nc = 1;
        if (k->vec_dot_mc != NULL) {
            nc = ir1_end - ir1;
            nc = nc < ne11 - i11 ? nc : ne11 - i11;
            nc = nc < GGML_CPU_MC_MAX ? nc : GGML_CPU_MC_MAX;
        }
        const char * y = mm_vec_act(job, ir1);
        const char * w = (const char *) src0->data + (i12 / r2) * nb02 + (i13 / r3) * nb03;
        char * d = (char *) dst->data + i11 * nb1 + i12 * nb2 + i13 * nb3;
        if (nc == 1) {
            for (int64_t ir0 = ir0_start; ir0 < ir0_end; ir0++) {
                k->vec_dot((int) ne00, (float *) (d + ir0 * nb0), w + ir0 * nb01, y);
            }
        } else {
            for (int64_t ir0 = ir0_start; ir0 < ir0_end; ir0++) {
                float tmp[GGML_CPU_MC_MAX];
                k->vec_dot_mc((int) ne00, tmp, w + ir0 * nb01, y, by, (int) nc);
                for (int64_t c = 0; c < nc; c++) {
                    *(float *) (d + c * nb1 + ir0 * nb0) = tmp[c];
                }
            }
        }
        ir1 += nc;
    }
}

// chunk c of the group's chunk space (the members' chunks one after the other)
static void mm_group_run_chunk(const struct mm_vec_job * jobs, int64_t c) {
    int m = 0;
    while (c >= jobs[m].nchunks) {
        c -= jobs[m].nchunks;
        m++;
    }
    if (jobs[m].repacked) {
        mm_vec_run_repacked(&jobs[m], c);
    } else {
        mm_vec_run_plain(&jobs[m], c);
    }
}

void ggml_cpu_forward_mul_mat_group(const struct ggml_compute_params * params, struct ggml_tensor * const * dsts, int n) {
    GGML_ASSERT(n >= 1 && n <= GGML_CPU_MM_GROUP_MAX);
    const struct ggml_tensor * src1 = dsts[0]->src[1];
    const int64_t nr = ggml_nrows(src1);
    const bool priv = mm_vec_private(src1, params->nth);
    size_t offs[GGML_CPU_MM_GROUP_MAX];
    const size_t slice = mm_vec_layout(dsts, n, offs);
    // no work buffer when no member needs its activations converted (slice 0): no pointer arithmetic on NULL
    char * base = params->wdata == NULL ? NULL :
        (char *) GGML_PAD((uintptr_t) params->wdata, GGML_CPU_CACHE_LINE) + (priv ? (size_t) params->ith * slice : 0);
    int64_t r0 = 0, r1 = nr;
    if (!priv) {
        ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    }

    struct mm_vec_job jobs[GGML_CPU_MM_GROUP_MAX];
    int64_t total = 0;
    bool shared_conversion = false;
    for (int m = 0; m < n; m++) {
        mm_vec_job_init(&jobs[m], dsts[m], params->nth);
        total += jobs[m].nchunks;
        jobs[m].act = NULL;
        jobs[m].act_row = 0;
        if (offs[m] == SIZE_MAX) {
            continue;
        }
        const enum ggml_type t = mm_vec_dot_type(dsts[m]);
        jobs[m].act = base + offs[m];
        jobs[m].act_row = ggml_row_size(t, src1->ne[0]);
        bool done = false;
        for (int o = 0; o < m; o++) {
            done = done || offs[o] == offs[m];
        }
        if (!done) {
            convert_src1(src1, t, base + offs[m], jobs[m].act_row, r0, r1);
            shared_conversion = shared_conversion || !priv;
        }
    }
    if (shared_conversion) {
        ggml_cpu_barrier(params);
    }

    // one chunk space over all members, handed out as contiguous ranges with stealing: a thread streams one long
    // stretch of weights (short alternating chunks cost up to a quarter of the streaming rate when the memory
    // has bandwidth to spare) and the threads still finish together on a machine whose cores run unevenly
    if (ggml_cpu_range_begin(params, total)) {
        for (int64_t chunk; (chunk = ggml_cpu_range_next(params)) >= 0;) {
            mm_group_run_chunk(jobs, chunk);
        }
    } else {
        for (int64_t chunk = params->ith; chunk < total; chunk = ggml_cpu_chunk_next(params)) {
            mm_group_run_chunk(jobs, chunk);
        }
    }
}

static bool mm_overlap(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    const char * a0 = a->data, * b0 = b->data;
    return a0 < b0 + ggml_nbytes(b) && b0 < a0 + ggml_nbytes(a);
}

static bool mm_vec_groupable(const struct ggml_tensor * node) {
    return node->op == GGML_OP_MUL_MAT && !mul_mat_use_gemm(node) && mm_vec_dot_type(node) != GGML_TYPE_COUNT;
}

int ggml_cpu_mul_mat_group(const struct ggml_cgraph * cgraph, int i, struct ggml_tensor ** members, int * last) {
    struct ggml_tensor * first = cgraph->nodes[i];
    members[0] = first;
    *last = i;
    if (!mm_vec_groupable(first)) {
        return 1;
    }
    int n = 1;
    for (int j = i + 1; j < cgraph->n_nodes && n < GGML_CPU_MM_GROUP_MAX; j++) {
        struct ggml_tensor * node = cgraph->nodes[j];
        if (!ggml_cpu_node_is_computed(node)) {
            continue; // views and reshapes in between compute nothing
        }
        if (!mm_vec_groupable(node) || node->src[1] != first->src[1] || mm_overlap(node, first->src[1])) {
            break;
        }
        // computed side by side: no member may read or write what another writes
        bool independent = true;
        for (int m = 0; m < n && independent; m++) {
            independent = !mm_overlap(node, members[m]) && !mm_overlap(node, members[m]->src[0]) &&
                          !mm_overlap(members[m], node->src[0]);
        }
        if (!independent) {
            break;
        }
        members[n++] = node;
        *last = j;
    }
    return n;
}

void ggml_cpu_forward_mul_mat(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    if (mul_mat_use_gemm(dst)) {
        mul_mat_gemm(params, dst);
        return;
    }
    ggml_cpu_forward_mul_mat_group(params, &dst, 1);
}

// ---- MUL_MAT_ID -------------------------------------------------------------------------------------------

// the routing of ids [n_used, n_tok] over n_as experts as a counting sort: the (slot, token) pairs of expert e
// are entries off[e] .. off[e + 1] - 1 of pairs, in (token, slot) order, pair_ints ints each (slot, token, and
// room for the caller's own). An id outside [0, n_as) matches no expert: its output row is zeroed instead
// of written
static void mul_mat_id_route(const struct ggml_tensor * ids, int64_t n_as, struct ggml_tensor * dst, int32_t * off,
                             int32_t * pairs, int pair_ints) {
    const int64_t n_used = ids->ne[0];
    const int64_t n_tok  = ids->ne[1];
    memset(off, 0, sizeof(int32_t) * (size_t) (n_as + 1));
    for (int64_t t = 0; t < n_tok; t++) {
        for (int64_t s = 0; s < n_used; s++) {
            const int32_t e = *(const int32_t *) ((const char *) ids->data + s * ids->nb[0] + t * ids->nb[1]);
            if (e >= 0 && e < n_as) {
                off[e + 1]++;
            } else {
                memset((char *) dst->data + s * dst->nb[1] + t * dst->nb[2], 0, sizeof(float) * (size_t) dst->ne[0]);
            }
        }
    }
    for (int64_t e = 1; e <= n_as; e++) {
        off[e] += off[e - 1]; // off[e]: where expert e starts
    }
    for (int64_t t = 0; t < n_tok; t++) {
        for (int64_t s = 0; s < n_used; s++) {
            const int32_t e = *(const int32_t *) ((const char *) ids->data + s * ids->nb[0] + t * ids->nb[1]);
            if (e >= 0 && e < n_as) {
                const int32_t p = off[e]++;
                pairs[pair_ints * p + 0] = (int32_t) s;
                pairs[pair_ints * p + 1] = (int32_t) t;
            }
        }
    }
    // off[e] advanced to where expert e + 1 starts: shift back
    for (int64_t e = n_as; e > 0; e--) {
        off[e] = off[e - 1];
    }
    off[0] = 0;
}

// MUL_MAT_ID through the GEMM: the activation rows are converted once, in expert order (each expert's columns
// contiguous, starting on a panel for the float types), then (expert, weight tile) chunks pack their tile once
// and run it over the expert's columns ID_COLS at a time into a small buffer that is scattered to the output
// rows. Worth it when the experts get enough columns on average to pay for packing their tiles.
#define ID_COLS 64

static bool mul_mat_id_use_gemm(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const struct ggml_tensor * ids  = dst->src[2];
    return ggml_cpu_gemm_supported(src0->type) && src1->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 &&
           dst->nb[0] == sizeof(float) && src1->nb[0] == sizeof(float) && src0->nb[0] == ggml_type_size(src0->type) &&
           src0->nb[1] <= (size_t) INT32_MAX / GGML_CPU_GEMM_ROWS &&
           (ggml_blck_size(src0->type) == 1 || src0->ne[0] % 32 == 0) &&
           ids->ne[0] * ids->ne[1] >= GGML_CPU_GEMM_MIN_N * src0->ne[2];
}

// column slots of the converted activations: every pair, plus the padding of each expert's start to a panel
static int64_t mul_mat_id_gemm_cols(const struct ggml_tensor * dst) {
    const struct ggml_tensor * ids = dst->src[2];
    return ids->ne[0] * ids->ne[1] + dst->src[0]->ne[2] * (GGML_CPU_GEMM_PANEL - 1);
}

static size_t mul_mat_id_gemm_route_size(const struct ggml_tensor * dst) {
    const struct ggml_tensor * ids = dst->src[2];
    const size_t n = (size_t) (dst->src[0]->ne[2] + 1) * 2 + 3 * (size_t) (ids->ne[0] * ids->ne[1]);
    return GGML_PAD(sizeof(int32_t) * n, GGML_CPU_CACHE_LINE);
}

static size_t mul_mat_id_gemm_thread_size(const struct ggml_tensor * dst) {
    const enum ggml_type type = dst->src[0]->type;
    return GGML_PAD(ggml_cpu_gemm_pack_size(type, dst->src[0]->ne[0]), GGML_CPU_CACHE_LINE) +
           sizeof(float) * GGML_CPU_GEMM_ROWS * ID_COLS;
}

static size_t mul_mat_id_gemm_work_size(const struct ggml_tensor * dst, int n_threads) {
    const enum ggml_type type = dst->src[0]->type;
    return GGML_CPU_CACHE_LINE + mul_mat_id_gemm_route_size(dst) +
           GGML_PAD(ggml_cpu_gemm_act_size(type, dst->src[0]->ne[0], mul_mat_id_gemm_cols(dst)), GGML_CPU_CACHE_LINE) +
           (size_t) n_threads * mul_mat_id_gemm_thread_size(dst);
}

static void mul_mat_id_gemm(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0]; // [ne00, ne01, n_as]
    const struct ggml_tensor * src1 = dst->src[1]; // [ne10, ne11, ne12]
    const struct ggml_tensor * ids  = dst->src[2]; // I32 [n_used, ne12]
    GGML_TENSOR_BINARY_OP_LOCALS
    const enum ggml_type type = src0->type;
    const int64_t n_as = ne02;
    const int64_t align = ggml_blck_size(type) == 1 ? GGML_CPU_GEMM_PANEL : 1; // float types: panels

    char * base = (char *) GGML_PAD((uintptr_t) params->wdata, GGML_CPU_CACHE_LINE);
    int32_t * off   = (int32_t *) base;   // [n_as + 1] first pair of each expert
    int32_t * col0  = off + n_as + 1;     // [n_as + 1] first activation column of each expert
    int32_t * pairs = col0 + n_as + 1;    // [n_used * n_tok] (slot, token, activation column)
    char * act = base + mul_mat_id_gemm_route_size(dst);
    const size_t act_row = ggml_cpu_gemm_act_row_size(type, ne10);
    char * mine = act + GGML_PAD(ggml_cpu_gemm_act_size(type, ne10, mul_mat_id_gemm_cols(dst)), GGML_CPU_CACHE_LINE) +
                  (size_t) params->ith * mul_mat_id_gemm_thread_size(dst);
    char * pack = mine;
    float * tmp = (float *) (mine + GGML_PAD(ggml_cpu_gemm_pack_size(type, ne00), GGML_CPU_CACHE_LINE));

    if (params->ith == 0) {
        mul_mat_id_route(ids, n_as, dst, off, pairs, 3);
        col0[0] = 0;
        for (int64_t e = 0; e < n_as; e++) {
            const int64_t end = col0[e] + (off[e + 1] - off[e]);
            col0[e + 1] = (int32_t) ((end + align - 1) / align * align);
            for (int32_t p = off[e]; p < off[e + 1]; p++) {
                pairs[3 * p + 2] = col0[e] + (p - off[e]);
            }
        }
    }
    ggml_cpu_barrier(params);

    // convert the activation row of every routed pair into its column (pairs split across threads)
    {
        const int64_t n_routed = off[n_as];
        int64_t p0, p1;
        ggml_cpu_split_rows(n_routed, params->ith, params->nth, &p0, &p1);
        for (int64_t p = p0; p < p1; p++) {
            const int64_t s = pairs[3 * p + 0], t = pairs[3 * p + 1];
            const char * x = (const char *) src1->data + (s % ne11) * nb11 + t * nb12;
            ggml_cpu_gemm_act_from_float(type, (const float *) x, act, ne10, pairs[3 * p + 2]);
        }
    }
    ggml_cpu_barrier(params);

    const int64_t ntile = (ne01 + GGML_CPU_GEMM_ROWS - 1) / GGML_CPU_GEMM_ROWS;
    const int64_t nchunks = ntile * n_as;
    for (int64_t chunk = params->ith; chunk < nchunks; chunk = ggml_cpu_chunk_next(params)) {
        const int64_t e = chunk / ntile;
        const int64_t count = off[e + 1] - off[e];
        if (count == 0) {
            continue;
        }
        const int64_t row0 = (chunk % ntile) * GGML_CPU_GEMM_ROWS;
        const int nrows = (int) (ne01 - row0 < GGML_CPU_GEMM_ROWS ? ne01 - row0 : GGML_CPU_GEMM_ROWS);
        ggml_cpu_gemm_pack(type, ne00, (const char *) src0->data + e * nb02 + row0 * nb01, nb01, nrows, pack);
        for (int64_t c0 = 0; c0 < count; c0 += ID_COLS) {
            const int n = (int) (count - c0 < ID_COLS ? count - c0 : ID_COLS);
            ggml_cpu_gemm_run(type, ne00, pack, nrows, act + (size_t) (col0[e] + c0) * act_row, act_row, n, tmp,
                              sizeof(float) * GGML_CPU_GEMM_ROWS);
            for (int c = 0; c < n; c++) {
                const int32_t * pr = pairs + 3 * (off[e] + c0 + c);
                float * d = (float *) ((char *) dst->data + pr[0] * nb1 + pr[1] * nb2) + row0;
                memcpy(d, tmp + (size_t) c * GGML_CPU_GEMM_ROWS, sizeof(float) * (size_t) nrows);
            }
        }
    }
}

void ggml_cpu_forward_mul_mat_id(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0]; // [ne00, ne01, n_as]
    const struct ggml_tensor * src1 = dst->src[1]; // [ne10, ne11, ne12]
    const struct ggml_tensor * ids  = dst->src[2]; // I32 [n_used, ne12]
    GGML_TENSOR_BINARY_OP_LOCALS

    if (mul_mat_id_use_gemm(dst)) {
        mul_mat_id_gemm(params, dst);
        return;
    }

    const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(src0->type);
    const enum ggml_type vec_dot_type = k->vec_dot_type;
    const ggml_cpu_vec_dot_t vec_dot = k->vec_dot;
    const int64_t n_as   = ne02;

    const size_t row_size = ggml_row_size(vec_dot_type, ne10);
    const size_t conv_size = GGML_PAD(row_size * (size_t) ggml_nrows(src1), GGML_CPU_CACHE_LINE);
    const bool direct = src1->type == vec_dot_type && nb10 == ggml_type_size(vec_dot_type);

    // the routing, built once by thread 0 and shared: the (slot, token) pairs of expert e are
    // pairs[2 * off[e] .. 2 * off[e + 1]), in (token, slot) order
    int32_t * off   = (int32_t *) ((char *) params->wdata + conv_size);
    int32_t * pairs = off + n_as + 1;

    if (!direct) {
        int64_t r0, r1;
        ggml_cpu_split_rows(ggml_nrows(src1), params->ith, params->nth, &r0, &r1);
        convert_src1(src1, vec_dot_type, (char *) params->wdata, row_size, r0, r1);
    }
    if (params->ith == 0) {
        mul_mat_id_route(ids, n_as, dst, off, pairs, 2);
    }
    ggml_cpu_barrier(params);

    // static split of every expert's weight rows: no barrier needed between experts
    int64_t ir0, ir1;
    ggml_cpu_split_rows(ne01, params->ith, params->nth, &ir0, &ir1);
    for (int64_t e = 0; e < n_as; e++) {
        const char * w = (const char *) src0->data + e * nb02;
        for (int64_t p = off[e]; p < off[e + 1]; p++) {
            const int64_t s = pairs[2 * p + 0];
            const int64_t t = pairs[2 * p + 1];
            const int64_t i11 = s % ne11;
            const char * y = direct ? (const char *) src1->data + i11 * nb11 + t * nb12
                                    : (const char *) params->wdata + (size_t) (i11 + t * ne11) * row_size;
            float * d = (float *) ((char *) dst->data + s * nb1 + t * nb2);
            for (int64_t r = ir0; r < ir1; r++) {
                vec_dot((int) ne00, &d[r], w + r * nb01, y);
            }
        }
    }
}
