// Op constructors: each creates the result tensor of an op (shape, type, op, op_params, src[]) without
// computing anything, plus views, reshapes and permutations. llama.cpp's shape rules and op_params layouts.

#include "ggml-graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---- names -----------------------------------------------------------------------------------------------

static const char * const op_names[GGML_OP_COUNT] = {
    [GGML_OP_NONE] = "NONE",
    [GGML_OP_DUP] = "DUP",
    [GGML_OP_ADD] = "ADD",
    [GGML_OP_ADD_ID] = "ADD_ID",
    [GGML_OP_ADD1] = "ADD1",
    [GGML_OP_ACC] = "ACC",
    [GGML_OP_SUB] = "SUB",
    [GGML_OP_MUL] = "MUL",
    [GGML_OP_DIV] = "DIV",
    [GGML_OP_SQR] = "SQR",
    [GGML_OP_SQRT] = "SQRT",
    [GGML_OP_LOG] = "LOG",
    [GGML_OP_SIN] = "SIN",
    [GGML_OP_COS] = "COS",
    [GGML_OP_SUM] = "SUM",
    [GGML_OP_SUM_ROWS] = "SUM_ROWS",
    [GGML_OP_CUMSUM] = "CUMSUM",
    [GGML_OP_MEAN] = "MEAN",
    [GGML_OP_ARGMAX] = "ARGMAX",
    [GGML_OP_COUNT_EQUAL] = "COUNT_EQUAL",
    [GGML_OP_REPEAT] = "REPEAT",
    [GGML_OP_REPEAT_BACK] = "REPEAT_BACK",
    [GGML_OP_CONCAT] = "CONCAT",
    [GGML_OP_SILU_BACK] = "SILU_BACK",
    [GGML_OP_NORM] = "NORM",
    [GGML_OP_RMS_NORM] = "RMS_NORM",
    [GGML_OP_RMS_NORM_BACK] = "RMS_NORM_BACK",
    [GGML_OP_GROUP_NORM] = "GROUP_NORM",
    [GGML_OP_L2_NORM] = "L2_NORM",
    [GGML_OP_MUL_MAT] = "MUL_MAT",
    [GGML_OP_MUL_MAT_ID] = "MUL_MAT_ID",
    [GGML_OP_OUT_PROD] = "OUT_PROD",
    [GGML_OP_SCALE] = "SCALE",
    [GGML_OP_SET] = "SET",
    [GGML_OP_CPY] = "CPY",
    [GGML_OP_CONT] = "CONT",
    [GGML_OP_RESHAPE] = "RESHAPE",
    [GGML_OP_VIEW] = "VIEW",
    [GGML_OP_PERMUTE] = "PERMUTE",
    [GGML_OP_TRANSPOSE] = "TRANSPOSE",
    [GGML_OP_GET_ROWS] = "GET_ROWS",
    [GGML_OP_GET_ROWS_BACK] = "GET_ROWS_BACK",
    [GGML_OP_SET_ROWS] = "SET_ROWS",
    [GGML_OP_DIAG] = "DIAG",
    [GGML_OP_DIAG_MASK_INF] = "DIAG_MASK_INF",
    [GGML_OP_DIAG_MASK_ZERO] = "DIAG_MASK_ZERO",
    [GGML_OP_SOFT_MAX] = "SOFT_MAX",
    [GGML_OP_SOFT_MAX_BACK] = "SOFT_MAX_BACK",
    [GGML_OP_ROPE] = "ROPE",
    [GGML_OP_ROPE_BACK] = "ROPE_BACK",
    [GGML_OP_CLAMP] = "CLAMP",
    [GGML_OP_CONV_TRANSPOSE_1D] = "CONV_TRANSPOSE_1D",
    [GGML_OP_IM2COL] = "IM2COL",
    [GGML_OP_IM2COL_BACK] = "IM2COL_BACK",
    [GGML_OP_IM2COL_3D] = "IM2COL_3D",
    [GGML_OP_CONV_2D] = "CONV_2D",
    [GGML_OP_CONV_3D] = "CONV_3D",
    [GGML_OP_CONV_2D_DW] = "CONV_2D_DW",
    [GGML_OP_CONV_TRANSPOSE_2D] = "CONV_TRANSPOSE_2D",
    [GGML_OP_POOL_1D] = "POOL_1D",
    [GGML_OP_POOL_2D] = "POOL_2D",
    [GGML_OP_POOL_2D_BACK] = "POOL_2D_BACK",
    [GGML_OP_UPSCALE] = "UPSCALE",
    [GGML_OP_PAD] = "PAD",
    [GGML_OP_PAD_REFLECT_1D] = "PAD_REFLECT_1D",
    [GGML_OP_ROLL] = "ROLL",
    [GGML_OP_ARANGE] = "ARANGE",
    [GGML_OP_TIMESTEP_EMBEDDING] = "TIMESTEP_EMBEDDING",
    [GGML_OP_ARGSORT] = "ARGSORT",
    [GGML_OP_TOP_K] = "TOP_K",
    [GGML_OP_LEAKY_RELU] = "LEAKY_RELU",
    [GGML_OP_TRI] = "TRI",
    [GGML_OP_FILL] = "FILL",
    [GGML_OP_FLASH_ATTN_EXT] = "FLASH_ATTN_EXT",
    [GGML_OP_FLASH_ATTN_BACK] = "FLASH_ATTN_BACK",
    [GGML_OP_SSM_CONV] = "SSM_CONV",
    [GGML_OP_SSM_SCAN] = "SSM_SCAN",
    [GGML_OP_WIN_PART] = "WIN_PART",
    [GGML_OP_WIN_UNPART] = "WIN_UNPART",
    [GGML_OP_GET_REL_POS] = "GET_REL_POS",
    [GGML_OP_ADD_REL_POS] = "ADD_REL_POS",
    [GGML_OP_RWKV_WKV6] = "RWKV_WKV6",
    [GGML_OP_GATED_LINEAR_ATTN] = "GATED_LINEAR_ATTN",
    [GGML_OP_RWKV_WKV7] = "RWKV_WKV7",
    [GGML_OP_SOLVE_TRI] = "SOLVE_TRI",
    [GGML_OP_UNARY] = "UNARY",
    [GGML_OP_MAP_CUSTOM1] = "MAP_CUSTOM1",
    [GGML_OP_MAP_CUSTOM2] = "MAP_CUSTOM2",
    [GGML_OP_MAP_CUSTOM3] = "MAP_CUSTOM3",
    [GGML_OP_CUSTOM] = "CUSTOM",
    [GGML_OP_CROSS_ENTROPY_LOSS] = "CROSS_ENTROPY_LOSS",
    [GGML_OP_CROSS_ENTROPY_LOSS_BACK] = "CROSS_ENTROPY_LOSS_BACK",
    [GGML_OP_OPT_STEP_ADAMW] = "OPT_STEP_ADAMW",
    [GGML_OP_OPT_STEP_SGD] = "OPT_STEP_SGD",
    [GGML_OP_GLU] = "GLU",
};
static const char * const unary_op_names[GGML_UNARY_OP_COUNT] = {
    [GGML_UNARY_OP_ABS] = "ABS",
    [GGML_UNARY_OP_SGN] = "SGN",
    [GGML_UNARY_OP_NEG] = "NEG",
    [GGML_UNARY_OP_STEP] = "STEP",
    [GGML_UNARY_OP_TANH] = "TANH",
    [GGML_UNARY_OP_ELU] = "ELU",
    [GGML_UNARY_OP_RELU] = "RELU",
    [GGML_UNARY_OP_SIGMOID] = "SIGMOID",
    [GGML_UNARY_OP_GELU] = "GELU",
    [GGML_UNARY_OP_GELU_QUICK] = "GELU_QUICK",
    [GGML_UNARY_OP_SILU] = "SILU",
    [GGML_UNARY_OP_HARDSWISH] = "HARDSWISH",
    [GGML_UNARY_OP_HARDSIGMOID] = "HARDSIGMOID",
    [GGML_UNARY_OP_EXP] = "EXP",
    [GGML_UNARY_OP_GELU_ERF] = "GELU_ERF",
    [GGML_UNARY_OP_XIELU] = "XIELU",
    [GGML_UNARY_OP_FLOOR] = "FLOOR",
    [GGML_UNARY_OP_CEIL] = "CEIL",
    [GGML_UNARY_OP_ROUND] = "ROUND",
    [GGML_UNARY_OP_TRUNC] = "TRUNC",
    [GGML_UNARY_OP_SOFTPLUS] = "SOFTPLUS",
    [GGML_UNARY_OP_EXPM1] = "EXPM1",
};
static const char * const glu_op_names[GGML_GLU_OP_COUNT] = {
    [GGML_GLU_OP_REGLU] = "REGLU",
    [GGML_GLU_OP_GEGLU] = "GEGLU",
    [GGML_GLU_OP_SWIGLU] = "SWIGLU",
    [GGML_GLU_OP_SWIGLU_OAI] = "SWIGLU_OAI",
    [GGML_GLU_OP_GEGLU_ERF] = "GEGLU_ERF",
    [GGML_GLU_OP_GEGLU_QUICK] = "GEGLU_QUICK",
};

const char * ggml_op_name(enum ggml_op op) {
    if ((int) op < 0 || op >= GGML_OP_COUNT || op_names[op] == NULL) {
        return "UNKNOWN";
    }
    return op_names[op];
}

const char * ggml_op_symbol(enum ggml_op op) {
    switch (op) {
        case GGML_OP_NONE:     return "none";
        case GGML_OP_DUP:      return "x";
        case GGML_OP_ADD:      return "x+y";
        case GGML_OP_ADD1:     return "x+y";
        case GGML_OP_SUB:      return "x-y";
        case GGML_OP_MUL:      return "x*y";
        case GGML_OP_DIV:      return "x/y";
        case GGML_OP_SQR:      return "x^2";
        case GGML_OP_SQRT:     return "√x";
        case GGML_OP_LOG:      return "log(x)";
        case GGML_OP_SUM:      return "Σx";
        case GGML_OP_SUM_ROWS: return "Σx_k";
        case GGML_OP_MEAN:     return "Σx/n";
        case GGML_OP_MUL_MAT:  return "X*Y";
        case GGML_OP_SCALE:    return "x*v";
        default:               return ggml_op_name(op);
    }
}

const char * ggml_unary_op_name(enum ggml_unary_op op) {
    if ((int) op < 0 || op >= GGML_UNARY_OP_COUNT || unary_op_names[op] == NULL) {
        return "UNKNOWN";
    }
    return unary_op_names[op];
}

const char * ggml_glu_op_name(enum ggml_glu_op op) {
    if ((int) op < 0 || op >= GGML_GLU_OP_COUNT || glu_op_names[op] == NULL) {
        return "UNKNOWN";
    }
    return glu_op_names[op];
}

const char * ggml_op_desc(const struct ggml_tensor * t) {
    if (t->op == GGML_OP_UNARY) {
        return ggml_unary_op_name(ggml_get_unary_op(t));
    }
    if (t->op == GGML_OP_GLU) {
        return ggml_glu_op_name(ggml_get_glu_op(t));
    }
    return ggml_op_name(t->op);
}

int32_t ggml_get_op_params_i32(const struct ggml_tensor * tensor, uint32_t i) {
    GGML_ASSERT(i < GGML_MAX_OP_PARAMS / sizeof(int32_t));
    return tensor->op_params[i];
}

float ggml_get_op_params_f32(const struct ggml_tensor * tensor, uint32_t i) {
    GGML_ASSERT(i < GGML_MAX_OP_PARAMS / sizeof(float));
    float v;
    memcpy(&v, &tensor->op_params[i], sizeof(float));
    return v;
}

// ---- helpers ---------------------------------------------------------------------------------------------

#define RETURN_IF_NULL(t) do { if ((t) == NULL) { return NULL; } } while (0)

static struct ggml_tensor * new_like(struct ggml_context * ctx, struct ggml_tensor * a, bool inplace) {
    return inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
}

static bool can_mul_mat(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return t0->ne[0] == t1->ne[0] && (t1->ne[2] % t0->ne[2] == 0) && (t1->ne[3] % t0->ne[3] == 0);
}

// ---- dup / binary ----------------------------------------------------------------------------------------

// a result shaped like a with one source: dup and the elementwise ops that have their own op code
static struct ggml_tensor * simple_impl(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op op, bool inplace) {
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    r->op     = op;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_dup(struct ggml_context * ctx, struct ggml_tensor * a)         { return simple_impl(ctx, a, GGML_OP_DUP, false); }
struct ggml_tensor * ggml_dup_inplace(struct ggml_context * ctx, struct ggml_tensor * a) { return simple_impl(ctx, a, GGML_OP_DUP, true); }

static struct ggml_tensor * binary_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                        enum ggml_op op, bool inplace) {
    GGML_ASSERT(ggml_can_repeat(b, a));
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    r->op     = op;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_add(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_impl(ctx, a, b, GGML_OP_ADD, false); }
struct ggml_tensor * ggml_add_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_impl(ctx, a, b, GGML_OP_ADD, true); }
struct ggml_tensor * ggml_sub(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_impl(ctx, a, b, GGML_OP_SUB, false); }
struct ggml_tensor * ggml_sub_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_impl(ctx, a, b, GGML_OP_SUB, true); }
struct ggml_tensor * ggml_mul(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_impl(ctx, a, b, GGML_OP_MUL, false); }
struct ggml_tensor * ggml_mul_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_impl(ctx, a, b, GGML_OP_MUL, true); }
struct ggml_tensor * ggml_div(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_impl(ctx, a, b, GGML_OP_DIV, false); }
struct ggml_tensor * ggml_div_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_impl(ctx, a, b, GGML_OP_DIV, true); }

struct ggml_tensor * ggml_add_cast(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                   enum ggml_type type) {
    GGML_ASSERT(ggml_can_repeat(b, a));
    struct ggml_tensor * r = ggml_new_tensor(ctx, type, GGML_MAX_DIMS, a->ne);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_ADD;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_add_id(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                 struct ggml_tensor * ids) {
    GGML_ASSERT(a->ne[0] == b->ne[0]);
    GGML_ASSERT(a->ne[1] == ids->ne[0]);
    GGML_ASSERT(a->ne[2] == ids->ne[1]);
    GGML_ASSERT(ids->type == GGML_TYPE_I32);
    struct ggml_tensor * r = ggml_dup_tensor(ctx, a);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_ADD_ID;
    r->src[0] = a;
    r->src[1] = b;
    r->src[2] = ids;
    return r;
}

static struct ggml_tensor * add1_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    GGML_ASSERT(ggml_is_scalar(b));
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_ADD1;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_add1(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return add1_impl(ctx, a, b, false); }
struct ggml_tensor * ggml_add1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return add1_impl(ctx, a, b, true); }

// ---- simple elementwise ops with their own op codes ------------------------------------------------------

struct ggml_tensor * ggml_sqr(struct ggml_context * ctx, struct ggml_tensor * a)          { return simple_impl(ctx, a, GGML_OP_SQR, false); }
struct ggml_tensor * ggml_sqr_inplace(struct ggml_context * ctx, struct ggml_tensor * a)  { return simple_impl(ctx, a, GGML_OP_SQR, true); }
struct ggml_tensor * ggml_sqrt(struct ggml_context * ctx, struct ggml_tensor * a)         { return simple_impl(ctx, a, GGML_OP_SQRT, false); }
struct ggml_tensor * ggml_sqrt_inplace(struct ggml_context * ctx, struct ggml_tensor * a) { return simple_impl(ctx, a, GGML_OP_SQRT, true); }
struct ggml_tensor * ggml_log(struct ggml_context * ctx, struct ggml_tensor * a)          { return simple_impl(ctx, a, GGML_OP_LOG, false); }
struct ggml_tensor * ggml_log_inplace(struct ggml_context * ctx, struct ggml_tensor * a)  { return simple_impl(ctx, a, GGML_OP_LOG, true); }
struct ggml_tensor * ggml_sin(struct ggml_context * ctx, struct ggml_tensor * a)          { return simple_impl(ctx, a, GGML_OP_SIN, false); }
struct ggml_tensor * ggml_sin_inplace(struct ggml_context * ctx, struct ggml_tensor * a)  { return simple_impl(ctx, a, GGML_OP_SIN, true); }
struct ggml_tensor * ggml_cos(struct ggml_context * ctx, struct ggml_tensor * a)          { return simple_impl(ctx, a, GGML_OP_COS, false); }
struct ggml_tensor * ggml_cos_inplace(struct ggml_context * ctx, struct ggml_tensor * a)  { return simple_impl(ctx, a, GGML_OP_COS, true); }

// ---- reductions ------------------------------------------------------------------------------------------

struct ggml_tensor * ggml_sum(struct ggml_context * ctx, struct ggml_tensor * a) {
    struct ggml_tensor * r = ggml_new_tensor_1d(ctx, a->type, 1);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_SUM;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_sum_rows(struct ggml_context * ctx, struct ggml_tensor * a) {
    const int64_t ne[GGML_MAX_DIMS] = { 1, a->ne[1], a->ne[2], a->ne[3] };
    struct ggml_tensor * r = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, ne);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_SUM_ROWS;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_cumsum(struct ggml_context * ctx, struct ggml_tensor * a) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    struct ggml_tensor * r = ggml_dup_tensor(ctx, a);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_CUMSUM;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_mean(struct ggml_context * ctx, struct ggml_tensor * a) {
    const int64_t ne[GGML_MAX_DIMS] = { 1, a->ne[1], a->ne[2], a->ne[3] };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, GGML_MAX_DIMS, ne);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_MEAN;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_argmax(struct ggml_context * ctx, struct ggml_tensor * a) {
    GGML_ASSERT(ggml_is_matrix(a));
    GGML_ASSERT(a->ne[0] <= INT32_MAX);
    struct ggml_tensor * r = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, a->ne[1]);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_ARGMAX;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_count_equal(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_are_same_shape(a, b));
    struct ggml_tensor * r = ggml_new_tensor_1d(ctx, GGML_TYPE_I64, 1);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_COUNT_EQUAL;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// ---- repeat / concat -------------------------------------------------------------------------------------

struct ggml_tensor * ggml_repeat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_can_repeat(a, b));
    struct ggml_tensor * r = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, b->ne);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_REPEAT;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_repeat_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                    int64_t ne2, int64_t ne3) {
    const bool can = (ggml_is_empty(a) && (ne0 == 0 || ne1 == 0 || ne2 == 0 || ne3 == 0)) ||
                     (!ggml_is_empty(a) && ne0 % a->ne[0] == 0 && ne1 % a->ne[1] == 0 && ne2 % a->ne[2] == 0 &&
                      ne3 % a->ne[3] == 0);
    GGML_ASSERT(can);
    struct ggml_tensor * r = ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_REPEAT;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_concat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int dim) {
    GGML_ASSERT(dim >= 0 && dim < GGML_MAX_DIMS);
    GGML_ASSERT(a->type == b->type);
    int64_t ne[GGML_MAX_DIMS];
    for (int d = 0; d < GGML_MAX_DIMS; ++d) {
        if (d == dim) {
            ne[d] = a->ne[d] + b->ne[d];
            continue;
        }
        GGML_ASSERT(a->ne[d] == b->ne[d]);
        ne[d] = a->ne[d];
    }
    struct ggml_tensor * r = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, ne);
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, dim);
    r->op     = GGML_OP_CONCAT;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// ---- unary -----------------------------------------------------------------------------------------------

static struct ggml_tensor * unary_impl(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op, bool inplace) {
    GGML_ASSERT(ggml_is_contiguous_1(a));
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, (int32_t) op);
    r->op     = GGML_OP_UNARY;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_unary(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op) { return unary_impl(ctx, a, op, false); }
struct ggml_tensor * ggml_unary_inplace(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op) { return unary_impl(ctx, a, op, true); }

#define UNARY_PAIR(name, OP)                                                                                         \
    struct ggml_tensor * ggml_##name(struct ggml_context * ctx, struct ggml_tensor * a) {                          \
        return unary_impl(ctx, a, GGML_UNARY_OP_##OP, false);                                                       \
    }                                                                                                               \
    struct ggml_tensor * ggml_##name##_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {                \
        return unary_impl(ctx, a, GGML_UNARY_OP_##OP, true);                                                        \
    }
#define UNARY_ONE(name, OP)                                                                                          \
    struct ggml_tensor * ggml_##name(struct ggml_context * ctx, struct ggml_tensor * a) {                          \
        return unary_impl(ctx, a, GGML_UNARY_OP_##OP, false);                                                       \
    }

UNARY_PAIR(abs, ABS)
UNARY_PAIR(sgn, SGN)
UNARY_PAIR(neg, NEG)
UNARY_PAIR(step, STEP)
UNARY_PAIR(tanh, TANH)
UNARY_PAIR(elu, ELU)
UNARY_PAIR(relu, RELU)
UNARY_PAIR(sigmoid, SIGMOID)
UNARY_PAIR(gelu, GELU)
UNARY_PAIR(gelu_erf, GELU_ERF)
UNARY_PAIR(gelu_quick, GELU_QUICK)
UNARY_PAIR(silu, SILU)
UNARY_PAIR(exp, EXP)
UNARY_ONE(hardswish, HARDSWISH)
UNARY_ONE(hardsigmoid, HARDSIGMOID)
UNARY_ONE(expm1, EXPM1)
UNARY_ONE(softplus, SOFTPLUS)
UNARY_ONE(floor, FLOOR)
UNARY_ONE(ceil, CEIL)
UNARY_ONE(round, ROUND)
UNARY_ONE(trunc, TRUNC)

struct ggml_tensor * ggml_leaky_relu(struct ggml_context * ctx, struct ggml_tensor * a, float negative_slope, bool inplace) {
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    ggml_set_op_params_f32(r, 0, negative_slope);
    r->op     = GGML_OP_LEAKY_RELU;
    r->src[0] = a;
    return r;
}

// ---- gated linear units ----------------------------------------------------------------------------------

static struct ggml_tensor * glu_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     enum ggml_glu_op op, bool swapped) {
    GGML_ASSERT(ggml_is_contiguous_1(a));
    struct ggml_tensor * r;
    if (b) {
        GGML_ASSERT(ggml_is_contiguous_1(b));
        GGML_ASSERT(ggml_are_same_shape(a, b));
        GGML_ASSERT(a->type == b->type);
        r = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, a->ne);
    } else {
        GGML_ASSERT(a->ne[0] % 2 == 0);
        int64_t ne[GGML_MAX_DIMS] = { a->ne[0] / 2, a->ne[1], a->ne[2], a->ne[3] };
        r = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, ne);
    }
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, (int32_t) op);
    ggml_set_op_params_i32(r, 1, (int32_t) swapped);
    r->op     = GGML_OP_GLU;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_glu(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_glu_op op, bool swapped) { return glu_impl(ctx, a, NULL, op, swapped); }
struct ggml_tensor * ggml_glu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, enum ggml_glu_op op) { return glu_impl(ctx, a, b, op, false); }

#define GLU_FAMILY(name, OP)                                                                                         \
    struct ggml_tensor * ggml_##name(struct ggml_context * ctx, struct ggml_tensor * a) {                          \
        return glu_impl(ctx, a, NULL, GGML_GLU_OP_##OP, false);                                                     \
    }                                                                                                               \
    struct ggml_tensor * ggml_##name##_swapped(struct ggml_context * ctx, struct ggml_tensor * a) {                \
        return glu_impl(ctx, a, NULL, GGML_GLU_OP_##OP, true);                                                      \
    }                                                                                                               \
    struct ggml_tensor * ggml_##name##_split(struct ggml_context * ctx, struct ggml_tensor * a,                    \
                                             struct ggml_tensor * b) {                                              \
        return glu_impl(ctx, a, b, GGML_GLU_OP_##OP, false);                                                        \
    }

GLU_FAMILY(reglu, REGLU)
GLU_FAMILY(geglu, GEGLU)
GLU_FAMILY(swiglu, SWIGLU)
GLU_FAMILY(geglu_erf, GEGLU_ERF)
GLU_FAMILY(geglu_quick, GEGLU_QUICK)

struct ggml_tensor * ggml_swiglu_oai(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     float alpha, float limit) {
    struct ggml_tensor * r = glu_impl(ctx, a, b, GGML_GLU_OP_SWIGLU_OAI, false);
    RETURN_IF_NULL(r);
    ggml_set_op_params_f32(r, 2, alpha);
    ggml_set_op_params_f32(r, 3, limit);
    return r;
}

// ---- norms -----------------------------------------------------------------------------------------------

static struct ggml_tensor * norm_impl(struct ggml_context * ctx, struct ggml_tensor * a, float eps, enum ggml_op op, bool inplace) {
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    ggml_set_op_params_f32(r, 0, eps);
    r->op     = op;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps)             { return norm_impl(ctx, a, eps, GGML_OP_NORM, false); }
struct ggml_tensor * ggml_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps)     { return norm_impl(ctx, a, eps, GGML_OP_NORM, true); }
struct ggml_tensor * ggml_rms_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps)         { return norm_impl(ctx, a, eps, GGML_OP_RMS_NORM, false); }
struct ggml_tensor * ggml_rms_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps) { return norm_impl(ctx, a, eps, GGML_OP_RMS_NORM, true); }
struct ggml_tensor * ggml_l2_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps)          { return norm_impl(ctx, a, eps, GGML_OP_L2_NORM, false); }
struct ggml_tensor * ggml_l2_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps)  { return norm_impl(ctx, a, eps, GGML_OP_L2_NORM, true); }

// ---- matrix products -------------------------------------------------------------------------------------

struct ggml_tensor * ggml_mul_mat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(can_mul_mat(a, b));
    GGML_ASSERT(!ggml_is_transposed(a));
    const int64_t ne[4] = { a->ne[1], b->ne[1], b->ne[2], b->ne[3] };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_MUL_MAT;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

void ggml_mul_mat_set_prec(struct ggml_tensor * a, enum ggml_prec prec) {
    GGML_ASSERT(a->op == GGML_OP_MUL_MAT);
    ggml_set_op_params_i32(a, 0, (int32_t) prec);
}

struct ggml_tensor * ggml_mul_mat_id(struct ggml_context * ctx, struct ggml_tensor * as, struct ggml_tensor * b,
                                     struct ggml_tensor * ids) {
    GGML_ASSERT(!ggml_is_transposed(as));
    GGML_ASSERT(ids->type == GGML_TYPE_I32);
    GGML_ASSERT(as->ne[3] == 1);
    GGML_ASSERT(b->ne[3] == 1);
    GGML_ASSERT(ids->ne[2] == 1 && ids->ne[3] == 1);
    GGML_ASSERT(ids->ne[1] == b->ne[2]);
    GGML_ASSERT(as->ne[0] == b->ne[0]);
    GGML_ASSERT(ids->ne[0] % b->ne[1] == 0);
    const int64_t ne[4] = { as->ne[1], ids->ne[0], b->ne[2], 1 };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_MUL_MAT_ID;
    r->src[0] = as;
    r->src[1] = b;
    r->src[2] = ids;
    return r;
}

// ---- scale -----------------------------------------------------------------------------------------------

static struct ggml_tensor * scale_impl(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b, bool inplace) {
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    const float params[2] = { s, b };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_SCALE;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_scale(struct ggml_context * ctx, struct ggml_tensor * a, float s)                        { return scale_impl(ctx, a, s, 0.0f, false); }
struct ggml_tensor * ggml_scale_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s)                { return scale_impl(ctx, a, s, 0.0f, true); }
struct ggml_tensor * ggml_scale_bias(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b)          { return scale_impl(ctx, a, s, b, false); }
struct ggml_tensor * ggml_scale_bias_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b)  { return scale_impl(ctx, a, s, b, true); }

// ---- copies, casts, layout changes -----------------------------------------------------------------------

struct ggml_tensor * ggml_cpy(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_nelements(a) == ggml_nelements(b));
    struct ggml_tensor * r = ggml_view_tensor(ctx, b);
    RETURN_IF_NULL(r);
    if (strlen(b->name) > 0) {
        ggml_format_name(r, "%.*s (copy of %.*s)", 20, b->name, 20, a->name);
    } else {
        ggml_format_name(r, "%.*s (copy)", 40, a->name);
    }
    r->op     = GGML_OP_CPY;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_cast(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_type type) {
    struct ggml_tensor * r = ggml_new_tensor(ctx, type, GGML_MAX_DIMS, a->ne);
    RETURN_IF_NULL(r);
    ggml_format_name(r, "%.*s (copy)", 40, a->name);
    r->op     = GGML_OP_CPY;
    r->src[0] = a;
    r->src[1] = r;
    return r;
}

struct ggml_tensor * ggml_cont_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                  int64_t ne2, int64_t ne3) {
    GGML_ASSERT(ggml_nelements(a) == ne0 * ne1 * ne2 * ne3);
    struct ggml_tensor * r = ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3);
    RETURN_IF_NULL(r);
    ggml_format_name(r, "%.*s (cont)", 50, a->name);
    r->op     = GGML_OP_CONT;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_cont(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_cont_4d(ctx, a, a->ne[0], a->ne[1], a->ne[2], a->ne[3]);
}
struct ggml_tensor * ggml_cont_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0) {
    return ggml_cont_4d(ctx, a, ne0, 1, 1, 1);
}
struct ggml_tensor * ggml_cont_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1) {
    return ggml_cont_4d(ctx, a, ne0, ne1, 1, 1);
}
struct ggml_tensor * ggml_cont_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    return ggml_cont_4d(ctx, a, ne0, ne1, ne2, 1);
}

static struct ggml_tensor * reshape_impl(struct ggml_context * ctx, struct ggml_tensor * a, int n_dims, const int64_t * ne) {
    GGML_ASSERT(ggml_is_contiguous(a));
    int64_t n = 1;
    for (int i = 0; i < n_dims; i++) {
        n *= ne[i];
    }
    GGML_ASSERT(ggml_nelements(a) == n);
    struct ggml_tensor * r = ggml_new_tensor_view(ctx, a->type, n_dims, ne, a, 0);
    RETURN_IF_NULL(r);
    ggml_format_name(r, "%.*s (reshaped)", 45, a->name);
    r->op     = GGML_OP_RESHAPE;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_reshape(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return reshape_impl(ctx, a, GGML_MAX_DIMS, b->ne);
}
struct ggml_tensor * ggml_reshape_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0) {
    const int64_t ne[1] = { ne0 };
    return reshape_impl(ctx, a, 1, ne);
}
struct ggml_tensor * ggml_reshape_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = { ne0, ne1 };
    return reshape_impl(ctx, a, 2, ne);
}
struct ggml_tensor * ggml_reshape_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return reshape_impl(ctx, a, 3, ne);
}
struct ggml_tensor * ggml_reshape_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return reshape_impl(ctx, a, 4, ne);
}

static struct ggml_tensor * view_impl(struct ggml_context * ctx, struct ggml_tensor * a, int n_dims, const int64_t * ne, size_t offset) {
    struct ggml_tensor * r = ggml_new_tensor_view(ctx, a->type, n_dims, ne, a, offset);
    RETURN_IF_NULL(r);
    ggml_format_name(r, "%.*s (view)", 50, a->name);
    ggml_set_op_params(r, &offset, sizeof(offset));
    r->op     = GGML_OP_VIEW;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_view_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, size_t offset) {
    const int64_t ne[1] = { ne0 };
    return view_impl(ctx, a, 1, ne, offset);
}

struct ggml_tensor * ggml_view_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                  size_t nb1, size_t offset) {
    const int64_t ne[2] = { ne0, ne1 };
    struct ggml_tensor * r = view_impl(ctx, a, 2, ne, offset);
    RETURN_IF_NULL(r);
    r->nb[1] = nb1;
    r->nb[2] = r->nb[1] * (size_t) ne1;
    r->nb[3] = r->nb[2];
    return r;
}

struct ggml_tensor * ggml_view_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                  int64_t ne2, size_t nb1, size_t nb2, size_t offset) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    struct ggml_tensor * r = view_impl(ctx, a, 3, ne, offset);
    RETURN_IF_NULL(r);
    r->nb[1] = nb1;
    r->nb[2] = nb2;
    r->nb[3] = r->nb[2] * (size_t) ne2;
    return r;
}

struct ggml_tensor * ggml_view_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                  int64_t ne2, int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    struct ggml_tensor * r = view_impl(ctx, a, 4, ne, offset);
    RETURN_IF_NULL(r);
    r->nb[1] = nb1;
    r->nb[2] = nb2;
    r->nb[3] = nb3;
    return r;
}

struct ggml_tensor * ggml_permute(struct ggml_context * ctx, struct ggml_tensor * a, int axis0, int axis1, int axis2, int axis3) {
    GGML_ASSERT(axis0 >= 0 && axis0 < GGML_MAX_DIMS);
    GGML_ASSERT(axis1 >= 0 && axis1 < GGML_MAX_DIMS);
    GGML_ASSERT(axis2 >= 0 && axis2 < GGML_MAX_DIMS);
    GGML_ASSERT(axis3 >= 0 && axis3 < GGML_MAX_DIMS);
    GGML_ASSERT(axis0 != axis1 && axis0 != axis2 && axis0 != axis3);
    GGML_ASSERT(axis1 != axis2 && axis1 != axis3);
    GGML_ASSERT(axis2 != axis3);

    struct ggml_tensor * r = ggml_view_tensor(ctx, a);
    RETURN_IF_NULL(r);
    ggml_format_name(r, "%.*s (permuted)", 45, a->name);

    const int axes[4] = { axis0, axis1, axis2, axis3 };
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        r->ne[axes[i]] = a->ne[i];
        r->nb[axes[i]] = a->nb[i];
    }
    r->op     = GGML_OP_PERMUTE;
    r->src[0] = a;
    ggml_set_op_params(r, axes, sizeof(axes));
    return r;
}

struct ggml_tensor * ggml_transpose(struct ggml_context * ctx, struct ggml_tensor * a) {
    struct ggml_tensor * r = ggml_view_tensor(ctx, a);
    RETURN_IF_NULL(r);
    ggml_format_name(r, "%.*s (transposed)", 45, a->name);
    r->ne[0] = a->ne[1];
    r->ne[1] = a->ne[0];
    r->nb[0] = a->nb[1];
    r->nb[1] = a->nb[0];
    const int32_t axes[4] = { 1, 0, 2, 3 };
    ggml_set_op_params(r, axes, sizeof(axes));
    r->op     = GGML_OP_TRANSPOSE;
    r->src[0] = a;
    return r;
}

// ---- rows ------------------------------------------------------------------------------------------------

struct ggml_tensor * ggml_get_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(a->ne[2] == b->ne[1]);
    GGML_ASSERT(a->ne[3] == b->ne[2]);
    GGML_ASSERT(b->ne[3] == 1);
    GGML_ASSERT(b->type == GGML_TYPE_I32);
    const enum ggml_type type = a->type == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32;
    struct ggml_tensor * r = ggml_new_tensor_4d(ctx, type, a->ne[0], b->ne[0], b->ne[1], b->ne[2]);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_GET_ROWS;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct ggml_tensor * ggml_set_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c) {
    GGML_ASSERT(a->ne[0] == b->ne[0]);
    GGML_ASSERT(a->ne[2] == b->ne[2]);
    GGML_ASSERT(a->ne[3] == b->ne[3]);
    GGML_ASSERT(b->ne[1] == c->ne[0]);
    GGML_ASSERT(b->ne[2] % c->ne[1] == 0);
    GGML_ASSERT(b->ne[3] % c->ne[2] == 0);
    GGML_ASSERT(c->ne[3] == 1);
    GGML_ASSERT(b->type == GGML_TYPE_F32);
    GGML_ASSERT(c->type == GGML_TYPE_I64 || c->type == GGML_TYPE_I32);
    struct ggml_tensor * r = ggml_view_tensor(ctx, a);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_SET_ROWS;
    r->src[0] = b;
    r->src[1] = c;
    return r;
}

// ---- masks and softmax -----------------------------------------------------------------------------------

static struct ggml_tensor * diag_mask_impl(struct ggml_context * ctx, struct ggml_tensor * a, int n_past, enum ggml_op op, bool inplace) {
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, n_past);
    r->op     = op;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_diag_mask_inf(struct ggml_context * ctx, struct ggml_tensor * a, int n_past)          { return diag_mask_impl(ctx, a, n_past, GGML_OP_DIAG_MASK_INF, false); }
struct ggml_tensor * ggml_diag_mask_inf_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past)  { return diag_mask_impl(ctx, a, n_past, GGML_OP_DIAG_MASK_INF, true); }
struct ggml_tensor * ggml_diag_mask_zero(struct ggml_context * ctx, struct ggml_tensor * a, int n_past)         { return diag_mask_impl(ctx, a, n_past, GGML_OP_DIAG_MASK_ZERO, false); }
struct ggml_tensor * ggml_diag_mask_zero_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) { return diag_mask_impl(ctx, a, n_past, GGML_OP_DIAG_MASK_ZERO, true); }

static struct ggml_tensor * soft_max_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask,
                                          float scale, float max_bias, bool inplace) {
    GGML_ASSERT(ggml_is_contiguous(a));
    if (mask) {
        GGML_ASSERT(mask->type == GGML_TYPE_F16 || mask->type == GGML_TYPE_F32);
        GGML_ASSERT(ggml_is_contiguous_rows(mask));
        GGML_ASSERT(mask->ne[0] == a->ne[0]);
        GGML_ASSERT(mask->ne[1] >= a->ne[1]);
        GGML_ASSERT(a->ne[2] % mask->ne[2] == 0);
        GGML_ASSERT(a->ne[3] % mask->ne[3] == 0);
    }
    if (max_bias > 0.0f) {
        GGML_ASSERT(mask);
    }
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    const float params[2] = { scale, max_bias };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_SOFT_MAX;
    r->src[0] = a;
    r->src[1] = mask;
    return r;
}

struct ggml_tensor * ggml_soft_max(struct ggml_context * ctx, struct ggml_tensor * a)         { return soft_max_impl(ctx, a, NULL, 1.0f, 0.0f, false); }
struct ggml_tensor * ggml_soft_max_inplace(struct ggml_context * ctx, struct ggml_tensor * a) { return soft_max_impl(ctx, a, NULL, 1.0f, 0.0f, true); }
struct ggml_tensor * ggml_soft_max_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask,
                                       float scale, float max_bias) {
    return soft_max_impl(ctx, a, mask, scale, max_bias, false);
}

void ggml_soft_max_add_sinks(struct ggml_tensor * a, struct ggml_tensor * sinks) {
    if (!sinks) {
        a->src[2] = NULL;
        return;
    }
    GGML_ASSERT(a->op == GGML_OP_SOFT_MAX);
    GGML_ASSERT(a->src[2] == NULL);
    GGML_ASSERT(a->src[0]->ne[2] == sinks->ne[0]);
    GGML_ASSERT(sinks->type == GGML_TYPE_F32);
    a->src[2] = sinks;
}

// ---- rope ------------------------------------------------------------------------------------------------

// sections: the multi-section (MROPE) split of the rotated pairs, NULL for zeros; op_params[11..14]
static struct ggml_tensor * rope_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      struct ggml_tensor * c, int n_dims, const int * sections, int mode, int n_ctx_orig,
                                      float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                      float beta_fast, float beta_slow, bool inplace) {
    GGML_ASSERT((mode & 1) == 0 && "mode & 1 == 1 is no longer supported");
    GGML_ASSERT(ggml_is_vector(b));
    GGML_ASSERT(b->type == GGML_TYPE_I32);
    const bool mrope_used = (mode & GGML_ROPE_TYPE_MROPE) != 0;
    // multi-section rope takes 4 position ids per token (t, h, w, e), stored one block of ne[2] after another
    GGML_ASSERT(mrope_used ? a->ne[2] * 4 == b->ne[0] : a->ne[2] == b->ne[0]);
    GGML_ASSERT(n_dims > 0 && n_dims <= a->ne[0] && n_dims % 2 == 0);
    if (c) {
        GGML_ASSERT(c->type == GGML_TYPE_F32);
        GGML_ASSERT(c->ne[0] >= n_dims / 2);
    }
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    int32_t params[15] = { 0, n_dims, mode, 0, n_ctx_orig };
    if (mrope_used && sections) {
        memcpy(params + 11, sections, sizeof(int32_t) * GGML_MROPE_SECTIONS);
    }
    memcpy(params + 5,  &freq_base,   sizeof(float));
    memcpy(params + 6,  &freq_scale,  sizeof(float));
    memcpy(params + 7,  &ext_factor,  sizeof(float));
    memcpy(params + 8,  &attn_factor, sizeof(float));
    memcpy(params + 9,  &beta_fast,   sizeof(float));
    memcpy(params + 10, &beta_slow,   sizeof(float));
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_ROPE;
    r->src[0] = a;
    r->src[1] = b;
    r->src[2] = c;
    return r;
}

struct ggml_tensor * ggml_rope(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode) {
    return rope_impl(ctx, a, b, NULL, n_dims, NULL, mode, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, false);
}
struct ggml_tensor * ggml_rope_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode) {
    return rope_impl(ctx, a, b, NULL, n_dims, NULL, mode, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, true);
}
struct ggml_tensor * ggml_rope_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                   int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                   float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, c, n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
                     beta_fast, beta_slow, false);
}
struct ggml_tensor * ggml_rope_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                           int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                           float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, c, n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
                     beta_fast, beta_slow, true);
}
struct ggml_tensor * ggml_rope_multi(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                     int n_dims, int sections[GGML_MROPE_SECTIONS], int mode, int n_ctx_orig, float freq_base,
                                     float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
                     beta_fast, beta_slow, false);
}
struct ggml_tensor * ggml_rope_multi_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                             int n_dims, int sections[GGML_MROPE_SECTIONS], int mode, int n_ctx_orig, float freq_base,
                                             float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
                     beta_fast, beta_slow, true);
}
// deprecated aliases of ggml_rope_ext(_inplace) without freq factors
struct ggml_tensor * ggml_rope_custom(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode,
                                      int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                      float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, NULL, n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
                     beta_fast, beta_slow, false);
}
struct ggml_tensor * ggml_rope_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode,
                                              int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                              float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, NULL, n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
                     beta_fast, beta_slow, true);
}

// rope backward: the same rotation by the opposite angle (dx from dy), computed by the ROPE kernel
struct ggml_tensor * ggml_rope_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                        int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                        float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    struct ggml_tensor * r = ggml_rope_ext(ctx, a, b, c, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                                           attn_factor, beta_fast, beta_slow);
    RETURN_IF_NULL(r);
    r->op = GGML_OP_ROPE_BACK;
    return r;
}
struct ggml_tensor * ggml_rope_multi_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                          int n_dims, int sections[4], int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                          float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    struct ggml_tensor * r = ggml_rope_multi(ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                                             ext_factor, attn_factor, beta_fast, beta_slow);
    RETURN_IF_NULL(r);
    r->op = GGML_OP_ROPE_BACK;
    return r;
}

// the dimension index at which a rotation completes n_rot turns over the original context
static float rope_yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return (float) n_dims * logf((float) n_ctx_orig / (n_rot * 2.0f * (float) M_PI)) / (2.0f * logf(base));
}

void ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]) {
    const float start = floorf(rope_yarn_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base));
    const float end   = ceilf(rope_yarn_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base));
    dims[0] = start > 0.0f ? start : 0.0f;
    dims[1] = end < (float) (n_dims - 1) ? end : (float) (n_dims - 1);
}

// ---- misc ------------------------------------------------------------------------------------------------

struct ggml_tensor * ggml_clamp(struct ggml_context * ctx, struct ggml_tensor * a, float min, float max) {
    struct ggml_tensor * r = ggml_view_tensor(ctx, a);
    RETURN_IF_NULL(r);
    const float params[2] = { min, max };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_CLAMP;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_pad_ext(struct ggml_context * ctx, struct ggml_tensor * a, int lp0, int rp0, int lp1, int rp1,
                                  int lp2, int rp2, int lp3, int rp3) {
    GGML_ASSERT(lp0 >= 0 && rp0 >= 0 && lp1 >= 0 && rp1 >= 0 && lp2 >= 0 && rp2 >= 0 && lp3 >= 0 && rp3 >= 0);
    struct ggml_tensor * r = ggml_new_tensor_4d(ctx, a->type, a->ne[0] + lp0 + rp0, a->ne[1] + lp1 + rp1,
                                                a->ne[2] + lp2 + rp2, a->ne[3] + lp3 + rp3);
    RETURN_IF_NULL(r);
    const int32_t params[8] = { lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_PAD;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_pad(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1, int p2, int p3) {
    return ggml_pad_ext(ctx, a, 0, p0, 0, p1, 0, p2, 0, p3);
}

struct ggml_tensor * ggml_tri(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_tri_type type) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    struct ggml_tensor * r = ggml_dup_tensor(ctx, a);
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, (int32_t) type);
    r->op     = GGML_OP_TRI;
    r->src[0] = a;
    return r;
}

static struct ggml_tensor * fill_impl(struct ggml_context * ctx, struct ggml_tensor * a, float c, bool inplace) {
    GGML_ASSERT(a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16);
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    ggml_set_op_params_f32(r, 0, c);
    r->op     = GGML_OP_FILL;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_fill(struct ggml_context * ctx, struct ggml_tensor * a, float c)         { return fill_impl(ctx, a, c, false); }
struct ggml_tensor * ggml_fill_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float c) { return fill_impl(ctx, a, c, true); }

struct ggml_tensor * ggml_argsort(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_sort_order order) {
    GGML_ASSERT(a->ne[0] <= INT32_MAX);
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_I32, GGML_MAX_DIMS, a->ne);
    RETURN_IF_NULL(r);
    ggml_set_op_params_i32(r, 0, (int32_t) order);
    r->op     = GGML_OP_ARGSORT;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_arange(struct ggml_context * ctx, float start, float stop, float step) {
    GGML_ASSERT(stop > start);
    GGML_ASSERT(step > 0.0f);
    const int64_t steps = (int64_t) ceilf((stop - start) / step);
    struct ggml_tensor * r = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, steps);
    RETURN_IF_NULL(r);
    ggml_set_op_params_f32(r, 0, start);
    ggml_set_op_params_f32(r, 1, stop);
    ggml_set_op_params_f32(r, 2, step);
    r->op = GGML_OP_ARANGE;
    return r;
}

struct ggml_tensor * ggml_argsort_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k) {
    GGML_ASSERT(k >= 1 && a->ne[0] >= k);
    struct ggml_tensor * r = ggml_argsort(ctx, a, GGML_SORT_ORDER_DESC);
    RETURN_IF_NULL(r);
    return ggml_view_4d(ctx, r, k, r->ne[1], r->ne[2], r->ne[3], r->nb[1], r->nb[2], r->nb[3], 0);
}

struct ggml_tensor * ggml_roll(struct ggml_context * ctx, struct ggml_tensor * a, int shift0, int shift1, int shift2, int shift3) {
    GGML_ASSERT(a->nb[0] == ggml_type_size(a->type));
    GGML_ASSERT(!ggml_is_quantized(a->type));
    GGML_ASSERT(abs(shift0) < a->ne[0] || a->ne[0] == 0);
    GGML_ASSERT(abs(shift1) < a->ne[1] || a->ne[1] == 0);
    GGML_ASSERT(abs(shift2) < a->ne[2] || a->ne[2] == 0);
    GGML_ASSERT(abs(shift3) < a->ne[3] || a->ne[3] == 0);
    struct ggml_tensor * r = ggml_dup_tensor(ctx, a);
    RETURN_IF_NULL(r);
    const int32_t params[4] = { shift0, shift1, shift2, shift3 };
    ggml_set_op_params(r, params, sizeof(params));
    r->op     = GGML_OP_ROLL;
    r->src[0] = a;
    return r;
}

struct ggml_tensor * ggml_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k) {
    GGML_ASSERT(k >= 1 && a->ne[0] >= k);
    struct ggml_tensor * r = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, k, a->ne[1], a->ne[2], a->ne[3]);
    RETURN_IF_NULL(r);
    r->op     = GGML_OP_TOP_K;
    r->src[0] = a;
    return r;
}

// ---- flash attention -------------------------------------------------------------------------------------

struct ggml_tensor * ggml_flash_attn_ext(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                         struct ggml_tensor * v, struct ggml_tensor * mask, float scale,
                                         float max_bias, float logit_softcap) {
    GGML_ASSERT(can_mul_mat(k, q));
    GGML_ASSERT(k->ne[1] == v->ne[1]);
    GGML_ASSERT(k->ne[2] == v->ne[2] && k->ne[3] == v->ne[3]);
    GGML_ASSERT(q->ne[2] % k->ne[2] == 0);
    if (mask) {
        GGML_ASSERT(mask->type == GGML_TYPE_F16 || mask->type == GGML_TYPE_F32);
        GGML_ASSERT(ggml_is_contiguous_rows(mask));
        GGML_ASSERT(mask->ne[0] == k->ne[1]);
        GGML_ASSERT(mask->ne[1] >= q->ne[1]);
        GGML_ASSERT(q->ne[2] % mask->ne[2] == 0);
        GGML_ASSERT(q->ne[3] % mask->ne[3] == 0);
    }
    if (max_bias > 0.0f) {
        GGML_ASSERT(mask);
    }
    const int64_t ne[4] = { v->ne[0], q->ne[2], q->ne[1], q->ne[3] };
    struct ggml_tensor * r = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    RETURN_IF_NULL(r);
    const float params[3] = { scale, max_bias, logit_softcap };
    ggml_set_op_params(r, params, sizeof(params));
    ggml_set_op_params_i32(r, 3, GGML_PREC_DEFAULT);
    r->op     = GGML_OP_FLASH_ATTN_EXT;
    r->src[0] = q;
    r->src[1] = k;
    r->src[2] = v;
    r->src[3] = mask;
    return r;
}

void ggml_flash_attn_ext_set_prec(struct ggml_tensor * a, enum ggml_prec prec) {
    GGML_ASSERT(a->op == GGML_OP_FLASH_ATTN_EXT);
    ggml_set_op_params_i32(a, 3, (int32_t) prec);
}

enum ggml_prec ggml_flash_attn_ext_get_prec(const struct ggml_tensor * a) {
    GGML_ASSERT(a->op == GGML_OP_FLASH_ATTN_EXT);
    return (enum ggml_prec) ggml_get_op_params_i32(a, 3);
}

void ggml_flash_attn_ext_add_sinks(struct ggml_tensor * a, struct ggml_tensor * sinks) {
    if (!sinks) {
        a->src[4] = NULL;
        return;
    }
    GGML_ASSERT(a->op == GGML_OP_FLASH_ATTN_EXT);
    GGML_ASSERT(a->src[4] == NULL);
    GGML_ASSERT(a->src[0]->ne[2] == sinks->ne[0]);
    GGML_ASSERT(sinks->type == GGML_TYPE_F32);
    a->src[4] = sinks;
}

// ---- custom ops ------------------------------------------------------------------------------------------

static struct ggml_tensor * map_custom_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                            struct ggml_tensor * c, enum ggml_op op, void (*fun)(void),
                                            int n_tasks, void * userdata, bool inplace) {
    GGML_ASSERT(n_tasks == GGML_N_TASKS_MAX || n_tasks > 0);
    struct ggml_tensor * r = new_like(ctx, a, inplace);
    RETURN_IF_NULL(r);
    struct ggml_custom_op_params p = { fun, n_tasks, userdata };
    ggml_set_op_params(r, &p, sizeof(p));
    r->op     = op;
    r->src[0] = a;
    r->src[1] = b;
    r->src[2] = c;
    return r;
}

struct ggml_tensor * ggml_map_custom1(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun, int n_tasks, void * userdata) {
    return map_custom_impl(ctx, a, NULL, NULL, GGML_OP_MAP_CUSTOM1, (void (*)(void)) fun, n_tasks, userdata, false);
}
struct ggml_tensor * ggml_map_custom1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun, int n_tasks, void * userdata) {
    return map_custom_impl(ctx, a, NULL, NULL, GGML_OP_MAP_CUSTOM1, (void (*)(void)) fun, n_tasks, userdata, true);
}
struct ggml_tensor * ggml_map_custom2(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    return map_custom_impl(ctx, a, b, NULL, GGML_OP_MAP_CUSTOM2, (void (*)(void)) fun, n_tasks, userdata, false);
}
struct ggml_tensor * ggml_map_custom2_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    return map_custom_impl(ctx, a, b, NULL, GGML_OP_MAP_CUSTOM2, (void (*)(void)) fun, n_tasks, userdata, true);
}
struct ggml_tensor * ggml_map_custom3(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c, ggml_custom3_op_t fun, int n_tasks, void * userdata) {
    return map_custom_impl(ctx, a, b, c, GGML_OP_MAP_CUSTOM3, (void (*)(void)) fun, n_tasks, userdata, false);
}
struct ggml_tensor * ggml_map_custom3_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c, ggml_custom3_op_t fun, int n_tasks, void * userdata) {
    return map_custom_impl(ctx, a, b, c, GGML_OP_MAP_CUSTOM3, (void (*)(void)) fun, n_tasks, userdata, true);
}

struct ggml_tensor * ggml_custom_4d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2,
                                    int64_t ne3, struct ggml_tensor ** args, int n_args, ggml_custom_op_t fun,
                                    int n_tasks, void * userdata) {
    GGML_ASSERT(n_args >= 0 && n_args < GGML_MAX_SRC);
    GGML_ASSERT(n_tasks == GGML_N_TASKS_MAX || n_tasks > 0);
    struct ggml_tensor * r = ggml_new_tensor_4d(ctx, type, ne0, ne1, ne2, ne3);
    RETURN_IF_NULL(r);
    struct ggml_custom_op_params p = { (void (*)(void)) fun, n_tasks, userdata };
    ggml_set_op_params(r, &p, sizeof(p));
    r->op = GGML_OP_CUSTOM;
    for (int i = 0; i < n_args; i++) {
        r->src[i] = args[i];
    }
    return r;
}

struct ggml_tensor * ggml_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor ** args,
                                         int n_args, ggml_custom_op_t fun, int n_tasks, void * userdata) {
    GGML_ASSERT(n_args >= 0 && n_args < GGML_MAX_SRC - 1);
    GGML_ASSERT(n_tasks == GGML_N_TASKS_MAX || n_tasks > 0);
    struct ggml_tensor * r = ggml_view_tensor(ctx, a);
    RETURN_IF_NULL(r);
    struct ggml_custom_op_params p = { (void (*)(void)) fun, n_tasks, userdata };
    ggml_set_op_params(r, &p, sizeof(p));
    r->op     = GGML_OP_CUSTOM;
    r->src[0] = a;
    for (int i = 0; i < n_args; i++) {
        r->src[i + 1] = args[i];
    }
    return r;
}

struct ggml_tensor * ggml_set_zero(struct ggml_tensor * tensor) {
    if (ggml_is_empty(tensor) || tensor->data == NULL) {
        return tensor;
    }
    memset(tensor->data, 0, ggml_nbytes(tensor));
    return tensor;
}
