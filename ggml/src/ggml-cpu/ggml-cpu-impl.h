// Internal contract between the CPU graph engine (ggml-cpu.c) and the op forward functions (ops-*.c).
//
// Every thread of the pool calls the forward function of a node with its own ith in [0, nth). An op splits
// its work either statically (rows ith, ith + nth, ...) or dynamically through ggml_cpu_chunk_next(), which
// hands out chunk indices from an atomic counter shared by the pool (reset at every barrier; the first chunk
// of each thread is its ith). ggml_cpu_barrier() waits for all nth threads (used inside an op between phases,
// e.g. after converting activations in mul_mat). The engine puts a barrier between nodes itself.
#pragma once

#include "ggml-graph.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_CPU_CACHE_LINE 64

struct ggml_compute_params {
    int    ith;   // this thread
    int    nth;   // threads working on the node
    size_t wsize; // shared work buffer (ggml_graph_plan sized it for the largest node)
    void * wdata;
    struct ggml_threadpool * threadpool;
};

void ggml_cpu_barrier(const struct ggml_compute_params * params);
// next chunk for this thread after its first one (chunk ith); >= n_chunks means done
int  ggml_cpu_chunk_next(const struct ggml_compute_params * params);

// Contiguous ranges with stealing, for ops that stream memory: thread ith starts with chunks
// [n*ith/nth, n*(ith+1)/nth) and takes them from the front, so it reads one long stretch of weights; a thread
// that runs out takes chunks from the back of the range with the most left. Every chunk is handed out once.
// ggml_cpu_range_begin is called by every thread (false: no pool or more than GGML_CPU_RANGE_MAX chunks, use
// ggml_cpu_chunk_next instead); ggml_cpu_range_next returns the next chunk, -1 when none is left.
#define GGML_CPU_RANGE_MAX 0xffff
bool    ggml_cpu_range_begin(const struct ggml_compute_params * params, int64_t n_chunks);
int64_t ggml_cpu_range_next (const struct ggml_compute_params * params);

// true if the CPU engine can compute this node (op, types, layout); the CPU backend's supports_op uses it
bool ggml_cpu_supports_op(const struct ggml_tensor * op);

// false for nodes that compute nothing: views, reshapes, empty tensors, nodes without the compute flag
static inline bool ggml_cpu_node_is_computed(const struct ggml_tensor * node) {
    if (ggml_op_is_empty(node->op) || ggml_is_empty(node)) {
        return false;
    }
    return (node->flags & GGML_TENSOR_FLAG_COMPUTE) != 0;
}

// bytes of work buffer the node needs with n_threads threads
size_t ggml_cpu_op_work_size(const struct ggml_tensor * node, int n_threads);

// ---- forward functions (ops-*.c) ----
void ggml_cpu_forward_dup      (const struct ggml_compute_params * params, struct ggml_tensor * dst); // DUP, CPY, CONT
void ggml_cpu_forward_binary   (const struct ggml_compute_params * params, struct ggml_tensor * dst); // ADD, SUB, MUL, DIV, ADD1
void ggml_cpu_forward_add_id   (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_unary    (const struct ggml_compute_params * params, struct ggml_tensor * dst); // UNARY, SQR, SQRT, LOG, SIN, COS, LEAKY_RELU
void ggml_cpu_forward_glu      (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_scale    (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_clamp    (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_fill     (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_norm     (const struct ggml_compute_params * params, struct ggml_tensor * dst); // NORM, RMS_NORM, L2_NORM
void ggml_cpu_forward_rope     (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_soft_max (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_diag_mask(const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_mul_mat  (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_mul_mat_id(const struct ggml_compute_params * params, struct ggml_tensor * dst);
// MUL_MATs computed as one group (ops-matmul.c): consecutive in the graph (views between them allowed), the
// same src1, few enough activation rows for the vec path, and no member reading or writing another's output
#define GGML_CPU_MM_GROUP_MAX 8
// the members of the group starting at node i (1 when it is no group or not a MUL_MAT), *last = index of the
// last member
int  ggml_cpu_mul_mat_group(const struct ggml_cgraph * cgraph, int i, struct ggml_tensor ** members, int * last);
void ggml_cpu_forward_mul_mat_group(const struct ggml_compute_params * params, struct ggml_tensor * const * dsts, int n);
// work buffer bytes of such a group on the vec path (0: none needed)
size_t ggml_cpu_mul_mat_vec_work_size(struct ggml_tensor * const * dsts, int n, int n_threads);
void ggml_cpu_forward_flash_attn_ext(const struct ggml_compute_params * params, struct ggml_tensor * dst);
// FLASH_ATTN_BACK (ops-attn-back.c)
void   ggml_cpu_forward_flash_attn_back(const struct ggml_compute_params * params, struct ggml_tensor * dst);
bool   ggml_cpu_flash_attn_back_supported(const struct ggml_tensor * op);
size_t ggml_cpu_flash_attn_back_work_size(const struct ggml_tensor * op, int n_threads);
void ggml_cpu_forward_get_rows (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_set_rows (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_reduce   (const struct ggml_compute_params * params, struct ggml_tensor * dst); // SUM, SUM_ROWS, MEAN, CUMSUM, ARGMAX, COUNT_EQUAL
void ggml_cpu_forward_sort     (const struct ggml_compute_params * params, struct ggml_tensor * dst); // ARGSORT, TOP_K
void ggml_cpu_forward_layout   (const struct ggml_compute_params * params, struct ggml_tensor * dst); // REPEAT, CONCAT, PAD, ARANGE, TRI
void ggml_cpu_forward_custom   (const struct ggml_compute_params * params, struct ggml_tensor * dst); // MAP_CUSTOM1..3, CUSTOM
void ggml_cpu_forward_conv     (const struct ggml_compute_params * params, struct ggml_tensor * dst); // IM2COL*, CONV_*, ops-conv.c
void ggml_cpu_forward_image    (const struct ggml_compute_params * params, struct ggml_tensor * dst); // POOL_*, UPSCALE, PAD_REFLECT_1D, TIMESTEP_EMBEDDING, WIN_*, *_REL_POS, ops-image.c
// per-thread patch buffers of the direct CONV_2D / CONV_3D (0 for other ops)
size_t ggml_cpu_conv_work_size(const struct ggml_tensor * node, int n_threads);
void ggml_cpu_forward_acc_set   (const struct ggml_compute_params * params, struct ggml_tensor * dst); // ACC, SET
void ggml_cpu_forward_diag      (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_out_prod  (const struct ggml_compute_params * params, struct ggml_tensor * dst);
void ggml_cpu_forward_group_norm(const struct ggml_compute_params * params, struct ggml_tensor * dst);
// REPEAT_BACK, SILU_BACK, RMS_NORM_BACK, GET_ROWS_BACK, SOFT_MAX_BACK
void ggml_cpu_forward_back      (const struct ggml_compute_params * params, struct ggml_tensor * dst);
// SSM_CONV, SSM_SCAN, RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7
void ggml_cpu_forward_recurrent (const struct ggml_compute_params * params, struct ggml_tensor * dst);
// CROSS_ENTROPY_LOSS, CROSS_ENTROPY_LOSS_BACK, OPT_STEP_ADAMW, OPT_STEP_SGD (ops-train.c); the loss needs
// ggml_cpu_train_work_size() bytes of work buffer for its per-thread partial sums
void ggml_cpu_forward_train     (const struct ggml_compute_params * params, struct ggml_tensor * dst);
bool ggml_cpu_train_supported   (const struct ggml_tensor * op);
static inline size_t ggml_cpu_train_work_size(int n_threads) { return (size_t) n_threads * GGML_CPU_CACHE_LINE; }
// ACC / SET: whether the view the op writes lies inside its result (ops-edit.c)
bool ggml_cpu_acc_set_view_fits(const struct ggml_tensor * op);

// ---- small shared helpers ----

#define FA_QB 4 // query rows per flash-attention task
// per-thread scratch bytes of flash attention
size_t ggml_cpu_fa_scratch_size(int64_t DK, int64_t DV, size_t q_row_size);

// converts n elements (n a multiple of the block size for quantized types) of a row to floats. src_nb0 is
// the element stride (ignored for quantized rows, which are always contiguous). Returns a pointer to the
// floats: src itself when it already is a contiguous F32 row, otherwise tmp.
const float * ggml_cpu_row_to_float(const void * src, enum ggml_type type, size_t src_nb0, int64_t n, float * tmp);
// writes n floats as a row of type (quantized with the CPU kernel's from_float, bit-identical to the reference)
void ggml_cpu_row_from_float(const float * x, void * dst, enum ggml_type type, size_t dst_nb0, int64_t n);

// GELU (tanh approximation) exactly as ggml's CPU backend: x <= -10 -> 0, x >= 10 -> x, otherwise through
// a 65536-entry F16 table: half(gelu_tanh(half(x))). The table is built by ggml_cpu_init().
float ggml_cpu_gelu_f32(float x);

// ALiBi: the mask slope of head h of n_head for max_bias (1 when max_bias is 0); SOFT_MAX and FLASH_ATTN_EXT
static inline float ggml_cpu_alibi_slope(float max_bias, int64_t h, int64_t n_head) {
    if (max_bias <= 0.0f) {
        return 1.0f;
    }
    const uint32_t n_head_log2 = 1u << (uint32_t) floorf(log2f((float) n_head));
    const float m0 = powf(2.0f, -(max_bias) / (float) n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float) n_head_log2);
    return (uint32_t) h < n_head_log2 ? powf(m0, (float) (h + 1)) : powf(m1, (float) (2 * (h - n_head_log2) + 1));
}

// rows [*r0, *r1) of n for thread ith of nth
static inline void ggml_cpu_split_rows(int64_t n, int ith, int nth, int64_t * r0, int64_t * r1) {
    const int64_t per = (n + nth - 1) / nth;
    const int64_t a   = per * ith;
    const int64_t b   = a + per;
    *r0 = a < n ? a : n;
    *r1 = b < n ? b : n;
}

// converts a row of n elements of an F32/F16/BF16 tensor to float
static inline float ggml_cpu_get_elem_f(const void * p, enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_F32:  return *(const float *) p;
        case GGML_TYPE_F16:  return GGML_FP16_TO_FP32(*(const ggml_fp16_t *) p);
        case GGML_TYPE_BF16: return GGML_BF16_TO_FP32(*(const ggml_bf16_t *) p);
        case GGML_TYPE_I32:  return (float) *(const int32_t *) p;
        default:             return 0.0f;
    }
}

static inline void ggml_cpu_set_elem_f(void * p, enum ggml_type type, float v) {
    switch (type) {
        case GGML_TYPE_F32:  *(float *) p = v; break;
        case GGML_TYPE_F16:  *(ggml_fp16_t *) p = GGML_FP32_TO_FP16(v); break;
        case GGML_TYPE_BF16: *(ggml_bf16_t *) p = GGML_FP32_TO_BF16(v); break;
        case GGML_TYPE_I32:  *(int32_t *) p = (int32_t) v; break;
        default: break;
    }
}

#ifdef __cplusplus
}
#endif
