#pragma once

// ggml: the tensor library under libllama.
//
// Names, signatures and semantics follow llama.cpp's ggml.h so that programs written against it compile
// against this header unchanged. Tensors are up to 4-D, ne[0] is the contiguous dimension, nb[] are byte
// strides. Ops build graph nodes; nothing is computed until a backend runs the graph.

#ifdef GGML_SHARED
#    define GGML_API __attribute__((visibility("default"))) extern
#else
#    define GGML_API extern
#endif

#ifdef __GNUC__
#    define GGML_DEPRECATED(func, hint) func __attribute__((deprecated(hint)))
#else
#    define GGML_DEPRECATED(func, hint) func
#endif

#ifdef __GNUC__
#    define GGML_ATTRIBUTE_FORMAT(...) __attribute__((format(printf, __VA_ARGS__)))
#else
#    define GGML_ATTRIBUTE_FORMAT(...)
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GGML_FILE_MAGIC   0x67676d6c // "ggml"
#define GGML_FILE_VERSION 2

#define GGML_QNT_VERSION        2    // bump this on quantization format changes
#define GGML_QNT_VERSION_FACTOR 1000 // do not change this

#define GGML_MAX_DIMS           4
#define GGML_MAX_PARAMS         2048
#define GGML_MAX_SRC            10
#define GGML_MAX_N_THREADS      512
#define GGML_MAX_OP_PARAMS      64

#ifndef GGML_MAX_NAME
#   define GGML_MAX_NAME        64
#endif

#define GGML_DEFAULT_N_THREADS  4
#define GGML_DEFAULT_GRAPH_SIZE 2048

#if UINTPTR_MAX == 0xFFFFFFFF
#    define GGML_MEM_ALIGN 4
#else
#    define GGML_MEM_ALIGN 16
#endif

#define GGML_EXIT_SUCCESS 0
#define GGML_EXIT_ABORTED 1

#define GGML_ROPE_TYPE_NORMAL 0
#define GGML_ROPE_TYPE_NEOX   2
#define GGML_ROPE_TYPE_MROPE  8
#define GGML_ROPE_TYPE_VISION 24
#define GGML_ROPE_TYPE_IMROPE 40 // binary: 101000

#define GGML_MROPE_SECTIONS   4

#define GGML_UNUSED(x) (void)(x)

#ifdef __cplusplus
#    define GGML_RESTRICT __restrict__
#else
#    define GGML_RESTRICT restrict
#endif

#define GGML_PAD(x, n) (((x) + (n) - 1) & ~((n) - 1))

#ifdef __cplusplus
#   define GGML_NORETURN [[noreturn]]
#else
#   define GGML_NORETURN _Noreturn
#endif

#define GGML_ABORT(...) ggml_abort(__FILE__, __LINE__, __VA_ARGS__)
#define GGML_ASSERT(x) if (!(x)) GGML_ABORT("GGML_ASSERT(%s) failed", #x)

// copy the element counts / strides of a tensor into local variables (ne00, ne01, ..., nb00, ...)
#define GGML_TENSOR_LOCALS_1(type, prefix, pointer, array) \
    const type prefix##0 = (pointer)->array[0]; \
    GGML_UNUSED(prefix##0);
#define GGML_TENSOR_LOCALS_2(type, prefix, pointer, array) \
    GGML_TENSOR_LOCALS_1    (type, prefix, pointer, array) \
    const type prefix##1 = (pointer)->array[1]; \
    GGML_UNUSED(prefix##1);
#define GGML_TENSOR_LOCALS_3(type, prefix, pointer, array) \
    GGML_TENSOR_LOCALS_2    (type, prefix, pointer, array) \
    const type prefix##2 = (pointer)->array[2]; \
    GGML_UNUSED(prefix##2);
#define GGML_TENSOR_LOCALS(type, prefix, pointer, array) \
    GGML_TENSOR_LOCALS_3  (type, prefix, pointer, array) \
    const type prefix##3 = (pointer)->array[3]; \
    GGML_UNUSED(prefix##3);

#define GGML_TENSOR_UNARY_OP_LOCALS \
    GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne) \
    GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb) \
    GGML_TENSOR_LOCALS(int64_t, ne,  dst,  ne) \
    GGML_TENSOR_LOCALS(size_t,  nb,  dst,  nb)

#define GGML_TENSOR_BINARY_OP_LOCALS \
    GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne) \
    GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb) \
    GGML_TENSOR_LOCALS(int64_t, ne1, src1, ne) \
    GGML_TENSOR_LOCALS(size_t,  nb1, src1, nb) \
    GGML_TENSOR_LOCALS(int64_t, ne,  dst,  ne) \
    GGML_TENSOR_LOCALS(size_t,  nb,  dst,  nb)

#ifdef  __cplusplus
extern "C" {
#endif

    // Function type used in fatal error callbacks
    typedef void (*ggml_abort_callback_t)(const char * error_message);

    // Set the abort callback (NULL restores the default: print the message to stderr); returns the old one
    GGML_API ggml_abort_callback_t ggml_set_abort_callback(ggml_abort_callback_t callback);

    GGML_NORETURN GGML_ATTRIBUTE_FORMAT(3, 4)
    GGML_API void ggml_abort(const char * file, int line, const char * fmt, ...);

    enum ggml_status {
        GGML_STATUS_ALLOC_FAILED = -2,
        GGML_STATUS_FAILED       = -1,
        GGML_STATUS_SUCCESS      =  0,
        GGML_STATUS_ABORTED      =  1,
    };

    GGML_API const char * ggml_status_to_string(enum ggml_status status);

    // IEEE 754-2008 half precision, stored as its bit pattern
    typedef uint16_t ggml_fp16_t;
    GGML_API float       ggml_fp16_to_fp32(ggml_fp16_t);
    GGML_API ggml_fp16_t ggml_fp32_to_fp16(float);
    GGML_API void        ggml_fp16_to_fp32_row(const ggml_fp16_t *, float *, int64_t);
    GGML_API void        ggml_fp32_to_fp16_row(const float *, ggml_fp16_t *, int64_t);

    // bfloat16
    typedef struct { uint16_t bits; } ggml_bf16_t;
    GGML_API ggml_bf16_t ggml_fp32_to_bf16(float);
    GGML_API float       ggml_bf16_to_fp32(ggml_bf16_t);
    GGML_API void        ggml_bf16_to_fp32_row(const ggml_bf16_t *, float *, int64_t);
    GGML_API void        ggml_fp32_to_bf16_row_ref(const float *, ggml_bf16_t *, int64_t);
    GGML_API void        ggml_fp32_to_bf16_row(const float *, ggml_bf16_t *, int64_t);

    struct ggml_object;
    struct ggml_context;
    struct ggml_cgraph;

    // type ids are part of the GGUF format: never renumber
    enum ggml_type {
        GGML_TYPE_F32     = 0,
        GGML_TYPE_F16     = 1,
        GGML_TYPE_Q4_0    = 2,
        GGML_TYPE_Q4_1    = 3,
        // 4 and 5 (Q4_2, Q4_3) were removed
        GGML_TYPE_Q5_0    = 6,
        GGML_TYPE_Q5_1    = 7,
        GGML_TYPE_Q8_0    = 8,
        GGML_TYPE_Q8_1    = 9,
        GGML_TYPE_Q2_K    = 10,
        GGML_TYPE_Q3_K    = 11,
        GGML_TYPE_Q4_K    = 12,
        GGML_TYPE_Q5_K    = 13,
        GGML_TYPE_Q6_K    = 14,
        GGML_TYPE_Q8_K    = 15,
        GGML_TYPE_IQ2_XXS = 16,
        GGML_TYPE_IQ2_XS  = 17,
        GGML_TYPE_IQ3_XXS = 18,
        GGML_TYPE_IQ1_S   = 19,
        GGML_TYPE_IQ4_NL  = 20,
        GGML_TYPE_IQ3_S   = 21,
        GGML_TYPE_IQ2_S   = 22,
        GGML_TYPE_IQ4_XS  = 23,
        GGML_TYPE_I8      = 24,
        GGML_TYPE_I16     = 25,
        GGML_TYPE_I32     = 26,
        GGML_TYPE_I64     = 27,
        GGML_TYPE_F64     = 28,
        GGML_TYPE_IQ1_M   = 29,
        GGML_TYPE_BF16    = 30,
        // 31..33 (Q4_0_4_4, Q4_0_4_8, Q4_0_8_8) were removed from GGUF files
        GGML_TYPE_TQ1_0   = 34,
        GGML_TYPE_TQ2_0   = 35,
        // 36..38 (IQ4_NL_4_4, IQ4_NL_4_8, IQ4_NL_8_8) were removed
        GGML_TYPE_MXFP4   = 39,
        GGML_TYPE_COUNT   = 40,
    };

    enum ggml_prec {
        GGML_PREC_DEFAULT =  0,
        GGML_PREC_F32     = 10,
    };

    // model file types
    enum ggml_ftype {
        GGML_FTYPE_UNKNOWN              = -1,
        GGML_FTYPE_ALL_F32              = 0,
        GGML_FTYPE_MOSTLY_F16           = 1,
        GGML_FTYPE_MOSTLY_Q4_0          = 2,
        GGML_FTYPE_MOSTLY_Q4_1          = 3,
        GGML_FTYPE_MOSTLY_Q4_1_SOME_F16 = 4,
        GGML_FTYPE_MOSTLY_Q8_0          = 7,
        GGML_FTYPE_MOSTLY_Q5_0          = 8,
        GGML_FTYPE_MOSTLY_Q5_1          = 9,
        GGML_FTYPE_MOSTLY_Q2_K          = 10,
        GGML_FTYPE_MOSTLY_Q3_K          = 11,
        GGML_FTYPE_MOSTLY_Q4_K          = 12,
        GGML_FTYPE_MOSTLY_Q5_K          = 13,
        GGML_FTYPE_MOSTLY_Q6_K          = 14,
        GGML_FTYPE_MOSTLY_IQ2_XXS       = 15,
        GGML_FTYPE_MOSTLY_IQ2_XS        = 16,
        GGML_FTYPE_MOSTLY_IQ3_XXS       = 17,
        GGML_FTYPE_MOSTLY_IQ1_S         = 18,
        GGML_FTYPE_MOSTLY_IQ4_NL        = 19,
        GGML_FTYPE_MOSTLY_IQ3_S         = 20,
        GGML_FTYPE_MOSTLY_IQ2_S         = 21,
        GGML_FTYPE_MOSTLY_IQ4_XS        = 22,
        GGML_FTYPE_MOSTLY_IQ1_M         = 23,
        GGML_FTYPE_MOSTLY_BF16          = 24,
        GGML_FTYPE_MOSTLY_MXFP4         = 25,
    };

    // tensor operations (graph node kinds)
    enum ggml_op {
        GGML_OP_NONE = 0,

        GGML_OP_DUP,
        GGML_OP_ADD,
        GGML_OP_ADD_ID,
        GGML_OP_ADD1,
        GGML_OP_ACC,
        GGML_OP_SUB,
        GGML_OP_MUL,
        GGML_OP_DIV,
        GGML_OP_SQR,
        GGML_OP_SQRT,
        GGML_OP_LOG,
        GGML_OP_SIN,
        GGML_OP_COS,
        GGML_OP_SUM,
        GGML_OP_SUM_ROWS,
        GGML_OP_CUMSUM,
        GGML_OP_MEAN,
        GGML_OP_ARGMAX,
        GGML_OP_COUNT_EQUAL,
        GGML_OP_REPEAT,
        GGML_OP_REPEAT_BACK,
        GGML_OP_CONCAT,
        GGML_OP_SILU_BACK,
        GGML_OP_NORM,
        GGML_OP_RMS_NORM,
        GGML_OP_RMS_NORM_BACK,
        GGML_OP_GROUP_NORM,
        GGML_OP_L2_NORM,

        GGML_OP_MUL_MAT,
        GGML_OP_MUL_MAT_ID,
        GGML_OP_OUT_PROD,

        GGML_OP_SCALE,
        GGML_OP_SET,
        GGML_OP_CPY,
        GGML_OP_CONT,
        GGML_OP_RESHAPE,
        GGML_OP_VIEW,
        GGML_OP_PERMUTE,
        GGML_OP_TRANSPOSE,
        GGML_OP_GET_ROWS,
        GGML_OP_GET_ROWS_BACK,
        GGML_OP_SET_ROWS,
        GGML_OP_DIAG,
        GGML_OP_DIAG_MASK_INF,
        GGML_OP_DIAG_MASK_ZERO,
        GGML_OP_SOFT_MAX,
        GGML_OP_SOFT_MAX_BACK,
        GGML_OP_ROPE,
        GGML_OP_ROPE_BACK,
        GGML_OP_CLAMP,
        GGML_OP_CONV_TRANSPOSE_1D,
        GGML_OP_IM2COL,
        GGML_OP_IM2COL_BACK,
        GGML_OP_IM2COL_3D,
        GGML_OP_CONV_2D,
        GGML_OP_CONV_3D,
        GGML_OP_CONV_2D_DW,
        GGML_OP_CONV_TRANSPOSE_2D,
        GGML_OP_POOL_1D,
        GGML_OP_POOL_2D,
        GGML_OP_POOL_2D_BACK,
        GGML_OP_UPSCALE,
        GGML_OP_PAD,
        GGML_OP_PAD_REFLECT_1D,
        GGML_OP_ROLL,
        GGML_OP_ARANGE,
        GGML_OP_TIMESTEP_EMBEDDING,
        GGML_OP_ARGSORT,
        GGML_OP_TOP_K,
        GGML_OP_LEAKY_RELU,
        GGML_OP_TRI,
        GGML_OP_FILL,

        GGML_OP_FLASH_ATTN_EXT,
        GGML_OP_FLASH_ATTN_BACK,
        GGML_OP_SSM_CONV,
        GGML_OP_SSM_SCAN,
        GGML_OP_WIN_PART,
        GGML_OP_WIN_UNPART,
        GGML_OP_GET_REL_POS,
        GGML_OP_ADD_REL_POS,
        GGML_OP_RWKV_WKV6,
        GGML_OP_GATED_LINEAR_ATTN,
        GGML_OP_RWKV_WKV7,
        GGML_OP_SOLVE_TRI,

        GGML_OP_UNARY,

        GGML_OP_MAP_CUSTOM1,
        GGML_OP_MAP_CUSTOM2,
        GGML_OP_MAP_CUSTOM3,

        GGML_OP_CUSTOM,

        GGML_OP_CROSS_ENTROPY_LOSS,
        GGML_OP_CROSS_ENTROPY_LOSS_BACK,
        GGML_OP_OPT_STEP_ADAMW,
        GGML_OP_OPT_STEP_SGD,

        GGML_OP_GLU,

        GGML_OP_COUNT,
    };

    enum ggml_unary_op {
        GGML_UNARY_OP_ABS,
        GGML_UNARY_OP_SGN,
        GGML_UNARY_OP_NEG,
        GGML_UNARY_OP_STEP,
        GGML_UNARY_OP_TANH,
        GGML_UNARY_OP_ELU,
        GGML_UNARY_OP_RELU,
        GGML_UNARY_OP_SIGMOID,
        GGML_UNARY_OP_GELU,
        GGML_UNARY_OP_GELU_QUICK,
        GGML_UNARY_OP_SILU,
        GGML_UNARY_OP_HARDSWISH,
        GGML_UNARY_OP_HARDSIGMOID,
        GGML_UNARY_OP_EXP,
        GGML_UNARY_OP_GELU_ERF,
        GGML_UNARY_OP_XIELU,
        GGML_UNARY_OP_FLOOR,
        GGML_UNARY_OP_CEIL,
        GGML_UNARY_OP_ROUND,
        GGML_UNARY_OP_TRUNC,
        GGML_UNARY_OP_SOFTPLUS,
        GGML_UNARY_OP_EXPM1,

        GGML_UNARY_OP_COUNT,
    };

    enum ggml_glu_op {
        GGML_GLU_OP_REGLU,
        GGML_GLU_OP_GEGLU,
        GGML_GLU_OP_SWIGLU,
        GGML_GLU_OP_SWIGLU_OAI,
        GGML_GLU_OP_GEGLU_ERF,
        GGML_GLU_OP_GEGLU_QUICK,

        GGML_GLU_OP_COUNT,
    };

    enum ggml_object_type {
        GGML_OBJECT_TYPE_TENSOR,
        GGML_OBJECT_TYPE_GRAPH,
        GGML_OBJECT_TYPE_WORK_BUFFER
    };

    enum ggml_log_level {
        GGML_LOG_LEVEL_NONE  = 0,
        GGML_LOG_LEVEL_DEBUG = 1,
        GGML_LOG_LEVEL_INFO  = 2,
        GGML_LOG_LEVEL_WARN  = 3,
        GGML_LOG_LEVEL_ERROR = 4,
        GGML_LOG_LEVEL_CONT  = 5, // continue previous log
    };

    enum ggml_tensor_flag {
        GGML_TENSOR_FLAG_INPUT  =  1, // an input of the compute graph
        GGML_TENSOR_FLAG_OUTPUT =  2, // an output of the compute graph
        GGML_TENSOR_FLAG_PARAM  =  4, // trainable parameters
        GGML_TENSOR_FLAG_LOSS   =  8, // defines a loss
        GGML_TENSOR_FLAG_COMPUTE = 16, // must be computed (set by ggml_build_forward_expand/select)
    };

    struct ggml_init_params {
        size_t mem_size;   // bytes of the arena
        void * mem_buffer; // if NULL, the arena is allocated internally
        bool   no_alloc;   // tensors get no data (a backend buffer allocates it later)
    };

    // n-dimensional tensor
    struct ggml_tensor {
        enum ggml_type type;

        struct ggml_backend_buffer * buffer;

        int64_t ne[GGML_MAX_DIMS]; // number of elements
        size_t  nb[GGML_MAX_DIMS]; // stride in bytes:
                                   // nb[0] = ggml_type_size(type)
                                   // nb[1] = nb[0]   * (ne[0] / ggml_blck_size(type)) + padding
                                   // nb[i] = nb[i-1] * ne[i-1]

        enum ggml_op op;

        // op params - allocated as int32_t for alignment
        int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];

        int32_t flags;

        struct ggml_tensor * src[GGML_MAX_SRC];

        // source tensor and offset for views
        struct ggml_tensor * view_src;
        size_t               view_offs;

        void * data;

        char name[GGML_MAX_NAME];

        void * extra; // backend-specific data

        char padding[8];
    };

    static const size_t GGML_TENSOR_SIZE = sizeof(struct ggml_tensor);

    // If not NULL, called before/while computing; returning true aborts the computation
    typedef bool (*ggml_abort_callback)(void * data);

    // GUID
    typedef uint8_t ggml_guid[16];
    typedef ggml_guid * ggml_guid_t;

    GGML_API bool ggml_guid_matches(ggml_guid_t guid_a, ggml_guid_t guid_b);

    // misc

    GGML_API const char * ggml_version(void);
    GGML_API const char * ggml_commit(void);

    GGML_API void    ggml_time_init(void);
    GGML_API int64_t ggml_time_ms(void);
    GGML_API int64_t ggml_time_us(void);
    GGML_API int64_t ggml_cycles(void);
    GGML_API int64_t ggml_cycles_per_ms(void);

    GGML_API FILE *  ggml_fopen(const char * fname, const char * mode);

    GGML_API void    ggml_print_object (const struct ggml_object * obj);
    GGML_API void    ggml_print_objects(const struct ggml_context * ctx);

    GGML_API int64_t ggml_nelements (const struct ggml_tensor * tensor);
    GGML_API int64_t ggml_nrows     (const struct ggml_tensor * tensor);
    GGML_API size_t  ggml_nbytes    (const struct ggml_tensor * tensor);
    GGML_API size_t  ggml_nbytes_pad(const struct ggml_tensor * tensor); // ggml_nbytes padded to GGML_MEM_ALIGN

    GGML_API int64_t ggml_blck_size(enum ggml_type type);
    GGML_API size_t  ggml_type_size(enum ggml_type type);             // bytes of one block
    GGML_API size_t  ggml_row_size (enum ggml_type type, int64_t ne); // bytes of a row of ne elements

    GGML_DEPRECATED(
    GGML_API double ggml_type_sizef(enum ggml_type type),
    "use ggml_row_size() instead");

    GGML_API const char * ggml_type_name(enum ggml_type type);
    GGML_API const char * ggml_op_name  (enum ggml_op   op);
    GGML_API const char * ggml_op_symbol(enum ggml_op   op);

    GGML_API const char * ggml_unary_op_name(enum ggml_unary_op op);
    GGML_API const char * ggml_glu_op_name(enum ggml_glu_op op);
    GGML_API const char * ggml_op_desc(const struct ggml_tensor * t); // unary or op name

    GGML_API size_t  ggml_element_size(const struct ggml_tensor * tensor);

    GGML_API bool    ggml_is_quantized(enum ggml_type type);

    GGML_API enum ggml_type ggml_ftype_to_ggml_type(enum ggml_ftype ftype);

    GGML_API bool ggml_is_transposed(const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_permuted  (const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_empty     (const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_scalar    (const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_vector    (const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_matrix    (const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_3d        (const struct ggml_tensor * tensor);
    GGML_API int  ggml_n_dims       (const struct ggml_tensor * tensor); // returns 1 for scalars

    GGML_API bool ggml_is_contiguous  (const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_contiguous_0(const struct ggml_tensor * tensor); // same as ggml_is_contiguous()
    GGML_API bool ggml_is_contiguous_1(const struct ggml_tensor * tensor); // contiguous for dims >= 1
    GGML_API bool ggml_is_contiguous_2(const struct ggml_tensor * tensor); // contiguous for dims >= 2
    GGML_API bool ggml_is_contiguously_allocated(const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_contiguous_channels(const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_contiguous_rows(const struct ggml_tensor * tensor);

    GGML_API bool ggml_are_same_shape (const struct ggml_tensor * t0, const struct ggml_tensor * t1);
    GGML_API bool ggml_are_same_stride(const struct ggml_tensor * t0, const struct ggml_tensor * t1);

    GGML_API bool ggml_can_repeat(const struct ggml_tensor * t0, const struct ggml_tensor * t1);

    // memory overhead of one tensor object in a context
    GGML_API size_t ggml_tensor_overhead(void);

    // checks a row buffer of the given type for NaN/Inf scales and impossible values; false + log on failure
    GGML_API bool ggml_validate_row_data(enum ggml_type type, const void * data, size_t nbytes);

    // main

    GGML_API struct ggml_context * ggml_init (struct ggml_init_params params);
    GGML_API void                  ggml_reset(struct ggml_context * ctx);
    GGML_API void                  ggml_free (struct ggml_context * ctx);

    GGML_API size_t  ggml_used_mem(const struct ggml_context * ctx);

    GGML_API bool    ggml_get_no_alloc(struct ggml_context * ctx);
    GGML_API void    ggml_set_no_alloc(struct ggml_context * ctx, bool no_alloc);

    GGML_API void *  ggml_get_mem_buffer     (const struct ggml_context * ctx);
    GGML_API size_t  ggml_get_mem_size       (const struct ggml_context * ctx);
    GGML_API size_t  ggml_get_max_tensor_size(const struct ggml_context * ctx);

    GGML_API struct ggml_tensor * ggml_new_tensor(
            struct ggml_context * ctx,
            enum   ggml_type type,
            int    n_dims,
            const int64_t *ne);

    GGML_API struct ggml_tensor * ggml_new_tensor_1d(
            struct ggml_context * ctx,
            enum   ggml_type type,
            int64_t ne0);

    GGML_API struct ggml_tensor * ggml_new_tensor_2d(
            struct ggml_context * ctx,
            enum   ggml_type type,
            int64_t ne0,
            int64_t ne1);

    GGML_API struct ggml_tensor * ggml_new_tensor_3d(
            struct ggml_context * ctx,
            enum   ggml_type type,
            int64_t ne0,
            int64_t ne1,
            int64_t ne2);

    GGML_API struct ggml_tensor * ggml_new_tensor_4d(
            struct ggml_context * ctx,
            enum   ggml_type type,
            int64_t ne0,
            int64_t ne1,
            int64_t ne2,
            int64_t ne3);

    GGML_API void * ggml_new_buffer(struct ggml_context * ctx, size_t nbytes);

    GGML_API struct ggml_tensor * ggml_dup_tensor (struct ggml_context * ctx, const struct ggml_tensor * src);
    GGML_API struct ggml_tensor * ggml_view_tensor(struct ggml_context * ctx, struct ggml_tensor * src);

    // context tensor enumeration and lookup
    GGML_API struct ggml_tensor * ggml_get_first_tensor(const struct ggml_context * ctx);
    GGML_API struct ggml_tensor * ggml_get_next_tensor (const struct ggml_context * ctx, struct ggml_tensor * tensor);
    GGML_API struct ggml_tensor * ggml_get_tensor(struct ggml_context * ctx, const char * name);

    // converts a flat index into coordinates
    GGML_API void ggml_unravel_index(const struct ggml_tensor * tensor, int64_t i, int64_t * i0, int64_t * i1, int64_t * i2, int64_t * i3);

    GGML_API enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * tensor);
    GGML_API enum ggml_glu_op   ggml_get_glu_op(const struct ggml_tensor * tensor);

    GGML_API void *  ggml_get_data    (const struct ggml_tensor * tensor);
    GGML_API float * ggml_get_data_f32(const struct ggml_tensor * tensor);

    GGML_API const char *         ggml_get_name   (const struct ggml_tensor * tensor);
    GGML_API struct ggml_tensor * ggml_set_name   (      struct ggml_tensor * tensor, const char * name);
    GGML_ATTRIBUTE_FORMAT(2, 3)
    GGML_API struct ggml_tensor * ggml_format_name(      struct ggml_tensor * tensor, const char * fmt, ...);

    // tensor flags
    GGML_API void ggml_set_input (struct ggml_tensor * tensor);
    GGML_API void ggml_set_output(struct ggml_tensor * tensor);
    GGML_API void ggml_set_param (struct ggml_tensor * tensor);
    GGML_API void ggml_set_loss  (struct ggml_tensor * tensor);

    //
    // operations on tensors (graph nodes)
    //
    // GGML_OPS_BEGIN -- the op constructors are declared in this section (see ggml/src/ggml-ops.c)
    //
    // Every constructor returns a new node (or a view) in ctx; it computes nothing. Shapes that the op
    // cannot accept are a programming error of the graph builder and abort with GGML_ASSERT, as in
    // llama.cpp; running out of context memory returns NULL.

    enum ggml_sort_order {
        GGML_SORT_ORDER_ASC,
        GGML_SORT_ORDER_DESC,
    };

    enum ggml_tri_type {
        GGML_TRI_TYPE_UPPER_DIAG = 0,
        GGML_TRI_TYPE_UPPER      = 1,
        GGML_TRI_TYPE_LOWER_DIAG = 2,
        GGML_TRI_TYPE_LOWER      = 3
    };

    // op_params helpers (llama.cpp exposes the f32 getter to graph users)
    GGML_API int32_t ggml_get_op_params_i32(const struct ggml_tensor * tensor, uint32_t i);
    GGML_API float   ggml_get_op_params_f32(const struct ggml_tensor * tensor, uint32_t i);

    GGML_API struct ggml_tensor * ggml_dup        (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_dup_inplace(struct ggml_context * ctx, struct ggml_tensor * a);

    // elementwise binary ops; b is repeated (broadcast) over a: ggml_can_repeat(b, a) must hold
    GGML_API struct ggml_tensor * ggml_add        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_add_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_add_cast   (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, enum ggml_type type);
    // dst[i0, i1, i2] = a[i0, i1, i2] + b[i0, ids[i1, i2]]
    GGML_API struct ggml_tensor * ggml_add_id     (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * ids);
    // b is a scalar
    GGML_API struct ggml_tensor * ggml_add1        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_add1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    // dst = a; view(dst, nb1, nb2, nb3, offset) += b (F32); return a new tensor or view(a)
    GGML_API struct ggml_tensor * ggml_acc        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                   size_t nb1, size_t nb2, size_t nb3, size_t offset);
    GGML_API struct ggml_tensor * ggml_acc_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                   size_t nb1, size_t nb2, size_t nb3, size_t offset);
    GGML_API struct ggml_tensor * ggml_sub        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_sub_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_mul        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_mul_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_div        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_div_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);

    GGML_API struct ggml_tensor * ggml_sqr         (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_sqr_inplace (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_sqrt        (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_sqrt_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_log         (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_log_inplace (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_sin         (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_sin_inplace (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_cos         (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_cos_inplace (struct ggml_context * ctx, struct ggml_tensor * a);

    // return scalar
    GGML_API struct ggml_tensor * ggml_sum     (struct ggml_context * ctx, struct ggml_tensor * a);
    // sums along rows, with input shape [a,b,c,d] return shape [1,b,c,d]
    GGML_API struct ggml_tensor * ggml_sum_rows(struct ggml_context * ctx, struct ggml_tensor * a);
    // running sum along rows (same shape as a)
    GGML_API struct ggml_tensor * ggml_cumsum  (struct ggml_context * ctx, struct ggml_tensor * a);
    // mean along rows
    GGML_API struct ggml_tensor * ggml_mean    (struct ggml_context * ctx, struct ggml_tensor * a);
    // argmax along rows (a is a matrix): I32 [ne1]
    GGML_API struct ggml_tensor * ggml_argmax  (struct ggml_context * ctx, struct ggml_tensor * a);
    // number of equal elements in a and b (I64 scalar)
    GGML_API struct ggml_tensor * ggml_count_equal(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);

    // repeat a to the shape of b
    GGML_API struct ggml_tensor * ggml_repeat   (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_repeat_4d(struct ggml_context * ctx, struct ggml_tensor * a,
                                                 int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
    // sums repetitions in a into shape of b
    GGML_API struct ggml_tensor * ggml_repeat_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    // concat a and b along dim
    GGML_API struct ggml_tensor * ggml_concat   (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int dim);

    // unary ops (GGML_OP_UNARY)
    GGML_API struct ggml_tensor * ggml_abs                (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_abs_inplace        (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_sgn                (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_sgn_inplace        (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_neg                (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_neg_inplace        (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_step               (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_step_inplace       (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_tanh               (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_tanh_inplace       (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_elu                (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_elu_inplace        (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_relu               (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_leaky_relu         (struct ggml_context * ctx, struct ggml_tensor * a, float negative_slope, bool inplace);
    GGML_API struct ggml_tensor * ggml_relu_inplace       (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_sigmoid            (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_sigmoid_inplace    (struct ggml_context * ctx, struct ggml_tensor * a);
    // tanh approximation, evaluated through an F16 table on the CPU like ggml
    GGML_API struct ggml_tensor * ggml_gelu               (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_gelu_inplace       (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_gelu_erf           (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_gelu_erf_inplace   (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_gelu_quick         (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_gelu_quick_inplace (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_silu               (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_silu_inplace       (struct ggml_context * ctx, struct ggml_tensor * a);
    // a - dy, b - x (the order llama.cpp's backward pass and CPU kernel use)
    GGML_API struct ggml_tensor * ggml_silu_back          (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_hardswish          (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_hardsigmoid        (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_exp                (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_exp_inplace        (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_expm1              (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_softplus           (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_floor              (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_ceil               (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_round              (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_trunc              (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_unary              (struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op);
    GGML_API struct ggml_tensor * ggml_unary_inplace      (struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op);

    // gated linear units: a has n columns, the result n/2; the gate is the second half of each row unless
    // swapped. The _split variants take the gate input (a) and the linear input (b) as two tensors.
    GGML_API struct ggml_tensor * ggml_glu                 (struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_glu_op op, bool swapped);
    GGML_API struct ggml_tensor * ggml_reglu               (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_reglu_swapped       (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_geglu               (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_geglu_swapped       (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_swiglu              (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_swiglu_swapped      (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_geglu_erf           (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_geglu_erf_swapped   (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_geglu_quick         (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_geglu_quick_swapped (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_glu_split           (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, enum ggml_glu_op op);
    GGML_API struct ggml_tensor * ggml_reglu_split         (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_geglu_split         (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_swiglu_split        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_geglu_erf_split     (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_geglu_quick_split   (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_swiglu_oai          (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float alpha, float limit);

    // normalize along rows
    GGML_API struct ggml_tensor * ggml_norm            (struct ggml_context * ctx, struct ggml_tensor * a, float eps);
    GGML_API struct ggml_tensor * ggml_norm_inplace    (struct ggml_context * ctx, struct ggml_tensor * a, float eps);
    GGML_API struct ggml_tensor * ggml_rms_norm        (struct ggml_context * ctx, struct ggml_tensor * a, float eps);
    GGML_API struct ggml_tensor * ggml_rms_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps);
    // group normalize along ne0*ne1*n_groups (channels ne2 split into n_groups)
    GGML_API struct ggml_tensor * ggml_group_norm        (struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps);
    GGML_API struct ggml_tensor * ggml_group_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps);
    GGML_API struct ggml_tensor * ggml_l2_norm         (struct ggml_context * ctx, struct ggml_tensor * a, float eps);
    GGML_API struct ggml_tensor * ggml_l2_norm_inplace (struct ggml_context * ctx, struct ggml_tensor * a, float eps);
    // a - dz, b - x (the order llama.cpp's backward pass and CPU kernel use)
    GGML_API struct ggml_tensor * ggml_rms_norm_back   (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float eps);

    // A: k columns, n rows => [ne03, ne02, n, k]
    // B: k columns, m rows  (i.e. we transpose it internally) => [ne03 * x, ne02 * y, m, k]
    // result is n columns, m rows => [ne03 * x, ne02 * y, m, n]   (F32)
    GGML_API struct ggml_tensor * ggml_mul_mat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API void                 ggml_mul_mat_set_prec(struct ggml_tensor * a, enum ggml_prec prec);
    // indirect matrix multiplication:
    // as  [ne00, ne01, n_as], b [ne00, ne11 (1 or n_used), n_tokens], ids I32 [n_used, n_tokens]
    // result [ne01, n_used, n_tokens]: result[:, k, t] = as[ids[k, t]] · b[:, k % ne11, t]
    GGML_API struct ggml_tensor * ggml_mul_mat_id(struct ggml_context * ctx, struct ggml_tensor * as, struct ggml_tensor * b, struct ggml_tensor * ids);
    // A: m columns, n rows; B: p columns, n rows; result (F32) is m columns, p rows
    GGML_API struct ggml_tensor * ggml_out_prod(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);

    GGML_API struct ggml_tensor * ggml_scale             (struct ggml_context * ctx, struct ggml_tensor * a, float s);
    GGML_API struct ggml_tensor * ggml_scale_inplace     (struct ggml_context * ctx, struct ggml_tensor * a, float s);
    // x = s * a + b
    GGML_API struct ggml_tensor * ggml_scale_bias        (struct ggml_context * ctx, struct ggml_tensor * a, float s, float b);
    GGML_API struct ggml_tensor * ggml_scale_bias_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b);

    // b -> view(a, nb1, nb2, nb3, offset) (offset in bytes); return modified a (a new tensor, or view(a) when inplace)
    GGML_API struct ggml_tensor * ggml_set           (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                      size_t nb1, size_t nb2, size_t nb3, size_t offset);
    GGML_API struct ggml_tensor * ggml_set_inplace   (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                      size_t nb1, size_t nb2, size_t nb3, size_t offset);
    GGML_API struct ggml_tensor * ggml_set_1d        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t offset);
    GGML_API struct ggml_tensor * ggml_set_1d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t offset);
    GGML_API struct ggml_tensor * ggml_set_2d        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t offset);
    GGML_API struct ggml_tensor * ggml_set_2d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t offset);

    // a -> b, return view(b)
    GGML_API struct ggml_tensor * ggml_cpy (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    // note: casting from f32 to i32 discards the fractional part
    GGML_API struct ggml_tensor * ggml_cast(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_type type);

    // make contiguous (optionally with a new shape of the same element count)
    GGML_API struct ggml_tensor * ggml_cont   (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_cont_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0);
    GGML_API struct ggml_tensor * ggml_cont_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1);
    GGML_API struct ggml_tensor * ggml_cont_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
    GGML_API struct ggml_tensor * ggml_cont_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);

    // return view(a) with a new shape (a must be contiguous)
    GGML_API struct ggml_tensor * ggml_reshape   (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    GGML_API struct ggml_tensor * ggml_reshape_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0);
    GGML_API struct ggml_tensor * ggml_reshape_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1);
    GGML_API struct ggml_tensor * ggml_reshape_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
    GGML_API struct ggml_tensor * ggml_reshape_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);

    // views; offset and strides in bytes
    GGML_API struct ggml_tensor * ggml_view_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, size_t offset);
    GGML_API struct ggml_tensor * ggml_view_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                               size_t nb1, size_t offset);
    GGML_API struct ggml_tensor * ggml_view_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                               size_t nb1, size_t nb2, size_t offset);
    GGML_API struct ggml_tensor * ggml_view_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                               size_t nb1, size_t nb2, size_t nb3, size_t offset);

    GGML_API struct ggml_tensor * ggml_permute(struct ggml_context * ctx, struct ggml_tensor * a, int axis0, int axis1, int axis2, int axis3);
    // alias for ggml_permute(ctx, a, 1, 0, 2, 3)
    GGML_API struct ggml_tensor * ggml_transpose(struct ggml_context * ctx, struct ggml_tensor * a);

    // a     [n_embd, ne1, ne2, ne3]
    // b I32 [n_rows, ne2, ne3, 1]
    // return [n_embd, n_rows, ne2, ne3] (F32, or I32 when a is I32)
    GGML_API struct ggml_tensor * ggml_get_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    // a: gradients of the get_rows result, b: row indices, c: the get_rows data (only its shape is used)
    GGML_API struct ggml_tensor * ggml_get_rows_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c);

    // a TD  [n_embd, ne1,    ne2,    ne3]
    // b TS  [n_embd, n_rows, ne02,   ne03] | ne02 == ne2, ne03 == ne3
    // c I64 or I32 [n_rows, ne11, ne12, 1] | c[i] in [0, ne1)
    // broadcast: ne2 % ne11 == 0, ne3 % ne12 == 0. Return view(a).
    GGML_API struct ggml_tensor * ggml_set_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c);

    // a [n, 1, ne2, ne3] -> diagonal matrices [n, n, ne2, ne3]
    GGML_API struct ggml_tensor * ggml_diag(struct ggml_context * ctx, struct ggml_tensor * a);

    // set elements above the diagonal (shifted by n_past) to -INF / 0
    GGML_API struct ggml_tensor * ggml_diag_mask_inf         (struct ggml_context * ctx, struct ggml_tensor * a, int n_past);
    GGML_API struct ggml_tensor * ggml_diag_mask_inf_inplace (struct ggml_context * ctx, struct ggml_tensor * a, int n_past);
    GGML_API struct ggml_tensor * ggml_diag_mask_zero        (struct ggml_context * ctx, struct ggml_tensor * a, int n_past);
    GGML_API struct ggml_tensor * ggml_diag_mask_zero_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past);

    GGML_API struct ggml_tensor * ggml_soft_max        (struct ggml_context * ctx, struct ggml_tensor * a);
    GGML_API struct ggml_tensor * ggml_soft_max_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
    // a    [ne0, ne01, ne02, ne03]
    // mask [ne0, ne11, ne12, ne13] | ne11 >= ne01, F16 or F32, optional
    // broadcast: ne02 % ne12 == 0, ne03 % ne13 == 0
    // fused soft_max(a*scale + mask*(ALiBi slope)); max_bias = 0.0f for no ALiBi
    GGML_API struct ggml_tensor * ggml_soft_max_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask,
                                                    float scale, float max_bias);
    // sinks: F32 [ne02], one extra logit per head that takes part in the normalization only
    GGML_API void ggml_soft_max_add_sinks(struct ggml_tensor * a, struct ggml_tensor * sinks);
    // a - dy, b - the soft_max output y
    GGML_API struct ggml_tensor * ggml_soft_max_ext_back        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                                 float scale, float max_bias);
    GGML_API struct ggml_tensor * ggml_soft_max_ext_back_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                                 float scale, float max_bias);

    // rotary position embedding; b is an I32 vector of a->ne[2] positions;
    // mode 0 rotates adjacent pairs, GGML_ROPE_TYPE_NEOX rotates (x[i], x[i + n_dims/2])
    GGML_API struct ggml_tensor * ggml_rope        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode);
    GGML_API struct ggml_tensor * ggml_rope_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode);
    // c is freq factors (e.g. phi3-128k), optional
    GGML_API struct ggml_tensor * ggml_rope_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                                float ext_factor, float attn_factor, float beta_fast, float beta_slow);
    // multi-section rope (mode GGML_ROPE_TYPE_MROPE / IMROPE / VISION): b holds 4 positions per token
    // (b->ne[0] == 4 * a->ne[2]: all t positions, then all h, w and e positions); sections split the pairs
    GGML_API struct ggml_tensor * ggml_rope_multi(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                int n_dims, int sections[GGML_MROPE_SECTIONS], int mode, int n_ctx_orig,
                                                float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                                float beta_fast, float beta_slow);
    GGML_API struct ggml_tensor * ggml_rope_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                                float ext_factor, float attn_factor, float beta_fast, float beta_slow);
    GGML_API struct ggml_tensor * ggml_rope_multi_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                int n_dims, int sections[GGML_MROPE_SECTIONS], int mode, int n_ctx_orig,
                                                float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                                float beta_fast, float beta_slow);
    GGML_DEPRECATED(GGML_API struct ggml_tensor * ggml_rope_custom(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                                float ext_factor, float attn_factor, float beta_fast, float beta_slow),
        "use ggml_rope_ext instead");
    GGML_DEPRECATED(GGML_API struct ggml_tensor * ggml_rope_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                                float ext_factor, float attn_factor, float beta_fast, float beta_slow),
        "use ggml_rope_ext_inplace instead");
    // compute correction dims for YaRN RoPE scaling
    GGML_API void ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]);
    // rotary position embedding backward, i.e. compute dx from dy (a - dy): the rotation by the opposite angle
    GGML_API struct ggml_tensor * ggml_rope_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                                float ext_factor, float attn_factor, float beta_fast, float beta_slow);
    GGML_API struct ggml_tensor * ggml_rope_multi_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                int n_dims, int sections[4], int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                                float ext_factor, float attn_factor, float beta_fast, float beta_slow);

    // clamp; in-place, returns view(a)
    GGML_API struct ggml_tensor * ggml_clamp(struct ggml_context * ctx, struct ggml_tensor * a, float min, float max);

    // im2col: [N, IC, IH, IW] => [N, OH, OW, IC*KH*KW] (is_2D) or [N, IC, IL] => [N, OL, IC*K]; a is only read for
    // its kernel shape. Composite convolutions below are im2col + mul_mat, the same graph llama.cpp builds.
    GGML_API struct ggml_tensor * ggml_im2col(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                              int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D, enum ggml_type dst_type);
    // gradient of im2col: a is the gradient of the im2col output (F32), b the kernel, ne the shape of the im2col input
    GGML_API struct ggml_tensor * ggml_im2col_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                   int64_t * ne, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D);
    GGML_API struct ggml_tensor * ggml_conv_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0);
    // conv_1d with padding = half: ggml_conv_1d(a, b, s, a->ne[0]/2, d)
    GGML_API struct ggml_tensor * ggml_conv_1d_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s, int d);
    // depthwise
    GGML_API struct ggml_tensor * ggml_conv_1d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0);
    GGML_API struct ggml_tensor * ggml_conv_1d_dw_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int d0);
    // a: kernel [K, OC, IC], b: data [L, IC]; only p0 == 0 and d0 == 1
    GGML_API struct ggml_tensor * ggml_conv_transpose_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0);
    GGML_API struct ggml_tensor * ggml_conv_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                               int s0, int s1, int p0, int p1, int d0, int d1);
    // a: [OC*IC, KD, KH, KW], b: [N*IC, ID, IH, IW] => [N*OD, OH, OW, IC*KD*KH*KW]
    GGML_API struct ggml_tensor * ggml_im2col_3d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t IC,
                                                 int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2,
                                                 enum ggml_type dst_type);
    // a: [OC*IC, KD, KH, KW], b: [N*IC, ID, IH, IW], result: [N*OC, OD, OH, OW]
    GGML_API struct ggml_tensor * ggml_conv_3d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t IC,
                                               int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2);
    // stride = kernel size, no padding (sam)
    GGML_API struct ggml_tensor * ggml_conv_2d_sk_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    // stride 1, padding = half (sam)
    GGML_API struct ggml_tensor * ggml_conv_2d_s1_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    // depthwise (via im2col and mul_mat)
    GGML_API struct ggml_tensor * ggml_conv_2d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                  int s0, int s1, int p0, int p1, int d0, int d1);
    // depthwise, one op: a [KW, KH, 1, C], b [W, H, C, N] => [W_out, H_out, C, N] (channels-contiguous b gives a
    // result with the same memory order)
    GGML_API struct ggml_tensor * ggml_conv_2d_dw_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                         int stride0, int stride1, int pad0, int pad1, int dilation0, int dilation1);
    // a: kernel [KW, KH, OC, IC], b: [W, H, IC, N]
    GGML_API struct ggml_tensor * ggml_conv_transpose_2d_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int stride);
    // a: kernel [KW, KH, IC, OC], b: data [W, H, C, N] => [OW, OH, OC, N]
    GGML_API struct ggml_tensor * ggml_conv_2d_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                      int s0, int s1, int p0, int p1, int d0, int d1);
    // a: kernel [KW, KH, KD, IC * OC], b: input [W, H, D, C * N]
    GGML_API struct ggml_tensor * ggml_conv_3d_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                      int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2,
                                                      int n_channels, int n_batch, int n_channels_out);

    enum ggml_op_pool {
        GGML_OP_POOL_MAX,
        GGML_OP_POOL_AVG,
        GGML_OP_POOL_COUNT,
    };

    GGML_API struct ggml_tensor * ggml_pool_1d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op, int k0, int s0, int p0);
    // the result has 2*p0 padding for the first dimension and 2*p1 for the second
    GGML_API struct ggml_tensor * ggml_pool_2d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op,
                                               int k0, int k1, int s0, int s1, float p0, float p1);
    // af: the input of the forward pool
    GGML_API struct ggml_tensor * ggml_pool_2d_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * af,
                                                    enum ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1);

    enum ggml_scale_mode {
        GGML_SCALE_MODE_NEAREST  = 0,
        GGML_SCALE_MODE_BILINEAR = 1,
        GGML_SCALE_MODE_BICUBIC  = 2,

        GGML_SCALE_MODE_COUNT
    };

    enum ggml_scale_flag {
        GGML_SCALE_FLAG_ALIGN_CORNERS = (1 << 8),
        GGML_SCALE_FLAG_ANTIALIAS     = (1 << 9),
    };

    // multiplies ne0 and ne1 by scale_factor
    GGML_API struct ggml_tensor * ggml_upscale(struct ggml_context * ctx, struct ggml_tensor * a, int scale_factor, enum ggml_scale_mode mode);
    GGML_DEPRECATED(GGML_API struct ggml_tensor * ggml_upscale_ext(struct ggml_context * ctx, struct ggml_tensor * a,
                                                                   int ne0, int ne1, int ne2, int ne3, enum ggml_scale_mode mode),
                    "use ggml_interpolate instead");
    // up- or downsamples a to the given size; 2D modes (bilinear, bicubic) act on the first two dimensions.
    // mode: ggml_scale_mode [| ggml_scale_flag ...]
    GGML_API struct ggml_tensor * ggml_interpolate(struct ggml_context * ctx, struct ggml_tensor * a,
                                                   int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, uint32_t mode);

    // pad each dimension with zeros: [x, ..., x] -> [x, ..., x, 0, ..., 0]
    GGML_API struct ggml_tensor * ggml_pad    (struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1, int p2, int p3);
    GGML_API struct ggml_tensor * ggml_pad_ext(struct ggml_context * ctx, struct ggml_tensor * a,
                                               int lp0, int rp0, int lp1, int rp1, int lp2, int rp2, int lp3, int rp3);

    // pad with reflection along dimension 0: [a, b, c, d] -> [b, a, b, c, d, c]
    GGML_API struct ggml_tensor * ggml_pad_reflect_1d(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1);

    // move elements by an offset per dimension; elements shifted past the end wrap around to the start
    GGML_API struct ggml_tensor * ggml_roll(struct ggml_context * ctx, struct ggml_tensor * a, int shift0, int shift1, int shift2, int shift3);

    // timesteps: F32 [N]; result: F32 [dim, N] (cos half, sin half; an odd dim leaves the last column 0)
    GGML_API struct ggml_tensor * ggml_timestep_embedding(struct ggml_context * ctx, struct ggml_tensor * timesteps, int dim, int max_period);

    // zero everything outside the chosen triangle of each matrix
    GGML_API struct ggml_tensor * ggml_tri         (struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_tri_type type);
    // fill tensor a with constant c
    GGML_API struct ggml_tensor * ggml_fill        (struct ggml_context * ctx, struct ggml_tensor * a, float c);
    GGML_API struct ggml_tensor * ggml_fill_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float c);

    // I32 indices that sort each row
    GGML_API struct ggml_tensor * ggml_argsort(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_sort_order order);
    // F32 [ceil((stop - start) / step)]
    GGML_API struct ggml_tensor * ggml_arange (struct ggml_context * ctx, float start, float stop, float step);
    // argsort (descending) then a view of the first k columns: I32 [k, ne1, ne2, ne3], sorted, not contiguous
    GGML_API struct ggml_tensor * ggml_argsort_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k);
    // I32 [k, ne1, ne2, ne3]: indices of the k largest elements of each row (this CPU backend returns them
    // in descending order of value; callers must not rely on an order)
    GGML_API struct ggml_tensor * ggml_top_k  (struct ggml_context * ctx, struct ggml_tensor * a, int k);

#define GGML_KQ_MASK_PAD 1

    // q:    [n_embd_k, n_batch,     n_head,    ne3 ]
    // k:    [n_embd_k, n_kv,        n_head_kv, ne3 ]
    // v:    [n_embd_v, n_kv,        n_head_kv, ne3 ] !! not transposed !!
    // mask: [n_kv,     n_batch_pad, ne32,      ne33] (n_batch_pad >= n_batch)
    // res:  [n_embd_v, n_head,      n_batch,   ne3 ] !! permuted !!
    // broadcast: n_head % n_head_kv == 0, n_head % ne32 == 0, ne3 % ne33 == 0
    GGML_API struct ggml_tensor * ggml_flash_attn_ext(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                                      struct ggml_tensor * v, struct ggml_tensor * mask,
                                                      float scale, float max_bias, float logit_softcap);
    GGML_API void           ggml_flash_attn_ext_set_prec (struct ggml_tensor * a, enum ggml_prec prec);
    GGML_API enum ggml_prec ggml_flash_attn_ext_get_prec (const struct ggml_tensor * a);
    GGML_API void           ggml_flash_attn_ext_add_sinks(struct ggml_tensor * a, struct ggml_tensor * sinks);

    // gradients of attention O = V softmax(K^T Q / sqrt(D)) given d = dL/dO, as one F32 vector: dQ (q's shape),
    // then dK (k's shape), then dV (v's shape), each contiguous and starting at a multiple of GGML_MEM_ALIGN bytes.
    // q: [D, N, ne2, ne3], k: [D, M, kvne2, ne3], v: [M, D, kvne2, ne3] (transposed), d: [D, N, ne2, ne3];
    // ne2 % kvne2 == 0; masked: key m is hidden from query n when m > n + M - N (causal)
    GGML_API struct ggml_tensor * ggml_flash_attn_back(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                                       struct ggml_tensor * v, struct ggml_tensor * d, bool masked);

    // partition a [C, W, H, 1] into non-overlapping w x w windows, zero-padded: [C, w, w, n_windows] (sam)
    GGML_API struct ggml_tensor * ggml_win_part  (struct ggml_context * ctx, struct ggml_tensor * a, int w);
    // reverse of ggml_win_part: [C, w0, h0]
    GGML_API struct ggml_tensor * ggml_win_unpart(struct ggml_context * ctx, struct ggml_tensor * a, int w0, int h0, int w);
    // relative position table a [C, 2*qh - 1] => F16 [C, kh, qh] (sam)
    GGML_API struct ggml_tensor * ggml_get_rel_pos(struct ggml_context * ctx, struct ggml_tensor * a, int qh, int kh);
    // a [W*W, W*H, B] += decomposed relative positions pw, ph [W, W, H, B] (sam)
    GGML_API struct ggml_tensor * ggml_add_rel_pos        (struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw, struct ggml_tensor * ph);
    GGML_API struct ggml_tensor * ggml_add_rel_pos_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw, struct ggml_tensor * ph);
    // Mamba: sx [d_conv - 1 + n_t, d_inner, n_s], c [d_conv, d_inner] -> [d_inner, n_t, n_s]
    GGML_API struct ggml_tensor * ggml_ssm_conv(struct ggml_context * ctx, struct ggml_tensor * sx, struct ggml_tensor * c);
    // Mamba-1/2 selective scan; the result is y followed by the final states (1-d F32)
    GGML_API struct ggml_tensor * ggml_ssm_scan(struct ggml_context * ctx, struct ggml_tensor * s, struct ggml_tensor * x,
                                                struct ggml_tensor * dt, struct ggml_tensor * A, struct ggml_tensor * B,
                                                struct ggml_tensor * C, struct ggml_tensor * ids);

    // RWKV / gated linear attention: [S * H, n_tokens + S * n_seqs] = per-token outputs, then the new states
    GGML_API struct ggml_tensor * ggml_rwkv_wkv6(struct ggml_context * ctx, struct ggml_tensor * k, struct ggml_tensor * v,
                                                 struct ggml_tensor * r, struct ggml_tensor * tf, struct ggml_tensor * td,
                                                 struct ggml_tensor * state);
    GGML_API struct ggml_tensor * ggml_gated_linear_attn(struct ggml_context * ctx, struct ggml_tensor * k, struct ggml_tensor * v,
                                                 struct ggml_tensor * q, struct ggml_tensor * g, struct ggml_tensor * state,
                                                 float scale);
    GGML_API struct ggml_tensor * ggml_rwkv_wkv7(struct ggml_context * ctx, struct ggml_tensor * r, struct ggml_tensor * w,
                                                 struct ggml_tensor * k, struct ggml_tensor * v, struct ggml_tensor * a,
                                                 struct ggml_tensor * b, struct ggml_tensor * state);

    // custom operators (run on the CPU; ith/nth split the work between threads)
    typedef void (*ggml_custom1_op_t)(struct ggml_tensor * dst , const struct ggml_tensor * a, int ith, int nth, void * userdata);
    typedef void (*ggml_custom2_op_t)(struct ggml_tensor * dst , const struct ggml_tensor * a, const struct ggml_tensor * b, int ith, int nth, void * userdata);
    typedef void (*ggml_custom3_op_t)(struct ggml_tensor * dst , const struct ggml_tensor * a, const struct ggml_tensor * b, const struct ggml_tensor * c, int ith, int nth, void * userdata);

#define GGML_N_TASKS_MAX (-1)
    // n_tasks == GGML_N_TASKS_MAX means to use max number of tasks

    GGML_API struct ggml_tensor * ggml_map_custom1(struct ggml_context * ctx, struct ggml_tensor * a,
                                                   ggml_custom1_op_t fun, int n_tasks, void * userdata);
    GGML_API struct ggml_tensor * ggml_map_custom1_inplace(struct ggml_context * ctx, struct ggml_tensor * a,
                                                   ggml_custom1_op_t fun, int n_tasks, void * userdata);
    GGML_API struct ggml_tensor * ggml_map_custom2(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                   ggml_custom2_op_t fun, int n_tasks, void * userdata);
    GGML_API struct ggml_tensor * ggml_map_custom2_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                   ggml_custom2_op_t fun, int n_tasks, void * userdata);
    GGML_API struct ggml_tensor * ggml_map_custom3(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                   ggml_custom3_op_t fun, int n_tasks, void * userdata);
    GGML_API struct ggml_tensor * ggml_map_custom3_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                   ggml_custom3_op_t fun, int n_tasks, void * userdata);

    typedef void (*ggml_custom_op_t)(struct ggml_tensor * dst , int ith, int nth, void * userdata);

    GGML_API struct ggml_tensor * ggml_custom_4d(struct ggml_context * ctx, enum ggml_type type,
                                                 int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                                 struct ggml_tensor ** args, int n_args, ggml_custom_op_t fun, int n_tasks, void * userdata);
    GGML_API struct ggml_tensor * ggml_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a,
                                                 struct ggml_tensor ** args, int n_args, ggml_custom_op_t fun, int n_tasks, void * userdata);

    // loss functions (F32)

    // a: logits, b: labels (probabilities) of the same shape -> F32 [1]: the mean over the rows of
    // -sum_i b_i * log_softmax(a)_i
    GGML_API struct ggml_tensor * ggml_cross_entropy_loss(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
    // gradient of cross_entropy_loss w.r.t. its logits: (softmax(b) - c) * a[0] / nrows. As llama.cpp's kernel uses
    // it (its header comments say otherwise): a = the scalar gradient of the loss, b = logits, c = labels
    GGML_API struct ggml_tensor * ggml_cross_entropy_loss_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                               struct ggml_tensor * c);

    // AdamW step, in place on the parameter a (flagged with ggml_set_param), returns view(a); m and v are the
    // moments (updated in place too). adamw_params: F32 [7] = { alpha, beta1, beta2, eps, wd, beta1h, beta2h }
    // with beta1h = 1/(1 - beta1^t), beta2h = 1/(1 - beta2^t) (bias corrections of step t)
    GGML_API struct ggml_tensor * ggml_opt_step_adamw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * grad,
                                                      struct ggml_tensor * m, struct ggml_tensor * v, struct ggml_tensor * adamw_params);
    // SGD step with decoupled weight decay, in place on the parameter a, returns view(a);
    // sgd_params: F32 [2] = { alpha, wd }: a = a * (1 - alpha * wd) - alpha * grad
    GGML_API struct ggml_tensor * ggml_opt_step_sgd(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * grad,
                                                    struct ggml_tensor * sgd_params);

    // zero the data of a host tensor
    GGML_API struct ggml_tensor * ggml_set_zero(struct ggml_tensor * tensor);

    //
    // graphs
    //

    // add tensor and every not yet visited ancestor to the graph, in dependency order, marking them to be computed
    GGML_API void ggml_build_forward_expand(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor);
    // add all tensors (and ancestors) to the graph but compute only tensors[idx] and what it needs; returns tensors[idx].
    // The graph keeps the same topology whatever idx is (so allocations made for one choice fit the others).
    GGML_API struct ggml_tensor * ggml_build_forward_select(struct ggml_cgraph * cgraph, struct ggml_tensor ** tensors, int n_tensors, int idx);

    // automatic differentiation: appends to cgraph (created with grads = true and holding the forward pass, with
    // ggml_set_param on the trainable tensors and ggml_set_loss on the loss) the nodes computing the gradient of
    // the loss w.r.t. every node that depends on a parameter; ggml_graph_get_grad returns them. grad_accs, if not
    // NULL, is indexed like cgraph's nodes: a non-NULL entry becomes that node's gradient accumulator (the
    // gradients are added to it in place, e.g. over micro-batches; ggml_graph_reset zeroes it). Call
    // ggml_graph_reset before computing (it sets the loss gradient to 1). New tensors go to ctx.
    GGML_API void ggml_build_backward_expand(
            struct ggml_context *  ctx,        // context for gradient computation
            struct ggml_cgraph  *  cgraph,
            struct ggml_tensor  ** grad_accs);

    // graph allocation in a context; NULL if the context has no room (see ggml_graph_overhead_custom)
    GGML_API struct ggml_cgraph * ggml_new_graph       (struct ggml_context * ctx); // size = GGML_DEFAULT_GRAPH_SIZE, grads = false
    GGML_API struct ggml_cgraph * ggml_new_graph_custom(struct ggml_context * ctx, size_t size, bool grads);
    GGML_API struct ggml_cgraph * ggml_graph_dup       (struct ggml_context * ctx, struct ggml_cgraph * cgraph, bool force_grads);
    GGML_API void                 ggml_graph_cpy       (struct ggml_cgraph * src, struct ggml_cgraph * dst);
    // zero the gradient accumulators and the AdamW moments, set the loss gradient to 1 (the graph must have grads)
    GGML_API void                 ggml_graph_reset     (struct ggml_cgraph * cgraph);
    GGML_API void                 ggml_graph_clear     (struct ggml_cgraph * cgraph);

    GGML_API int                   ggml_graph_size   (struct ggml_cgraph * cgraph);
    GGML_API struct ggml_tensor *  ggml_graph_node   (struct ggml_cgraph * cgraph, int i); // if i < 0, returns nodes[n_nodes + i]
    GGML_API struct ggml_tensor ** ggml_graph_nodes  (struct ggml_cgraph * cgraph);
    GGML_API int                   ggml_graph_n_nodes(struct ggml_cgraph * cgraph);

    GGML_API void   ggml_graph_add_node(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor);

    GGML_API size_t ggml_graph_overhead(void);
    GGML_API size_t ggml_graph_overhead_custom(size_t size, bool grads);

    GGML_API struct ggml_tensor * ggml_graph_get_tensor  (const struct ggml_cgraph * cgraph, const char * name);
    GGML_API struct ggml_tensor * ggml_graph_get_grad    (const struct ggml_cgraph * cgraph, const struct ggml_tensor * node);
    GGML_API struct ggml_tensor * ggml_graph_get_grad_acc(const struct ggml_cgraph * cgraph, const struct ggml_tensor * node);

    // print the nodes and leafs of the graph (log level INFO)
    GGML_API void ggml_graph_print(const struct ggml_cgraph * cgraph);
    // write the graph gb as a Graphviz dot file (cgraph: an optional forward graph, NULL if none)
    GGML_API void ggml_graph_dump_dot(const struct ggml_cgraph * gb, const struct ggml_cgraph * cgraph, const char * filename);

    //
    // thread pools (the pool itself lives in the CPU backend, see ggml-cpu.h)
    //

    enum ggml_sched_priority {
        GGML_SCHED_PRIO_LOW = -1,
        GGML_SCHED_PRIO_NORMAL,
        GGML_SCHED_PRIO_MEDIUM,
        GGML_SCHED_PRIO_HIGH,
        GGML_SCHED_PRIO_REALTIME
    };

    // use ggml_threadpool_params_default() or ggml_threadpool_params_init() to populate the defaults
    struct ggml_threadpool_params {
        bool                cpumask[GGML_MAX_N_THREADS]; // mask of cpu cores (all-zeros means default affinity)
        int                 n_threads;                   // number of threads
        enum ggml_sched_priority prio;                   // thread priority
        uint32_t            poll;                        // polling level (0 - no polling, 100 - aggressive polling)
        bool                strict_cpu;                  // strict cpu placement
        bool                paused;                      // start in paused state
    };

    struct ggml_threadpool;

    typedef struct ggml_threadpool * ggml_threadpool_t;

    GGML_API struct ggml_threadpool_params ggml_threadpool_params_default(int n_threads);
    GGML_API void                          ggml_threadpool_params_init   (struct ggml_threadpool_params * p, int n_threads);
    GGML_API bool                          ggml_threadpool_params_match  (const struct ggml_threadpool_params * p0, const struct ggml_threadpool_params * p1);

    // GGML_OPS_END

    //
    // quantization
    //

    // must be called before quantizing with types that need lookup tables (thread-safe, idempotent)
    GGML_API void ggml_quantize_init(enum ggml_type type);
    GGML_API void ggml_quantize_free(void);

    // some quantization types cannot be used without an importance matrix
    GGML_API bool ggml_quantize_requires_imatrix(enum ggml_type type);

    // quantizes nrows rows of n_per_row floats from src (starting at element start) into dst;
    // returns the number of bytes written. imatrix may be NULL.
    GGML_API size_t ggml_quantize_chunk(
            enum ggml_type   type,
               const float * src,
                      void * dst,
                   int64_t   start,
                   int64_t   nrows,
                   int64_t   n_per_row,
               const float * imatrix);

    //
    // logging
    //

    typedef void (*ggml_log_callback)(enum ggml_log_level level, const char * text, void * user_data);

    // set the log callback (NULL restores the default, which prints to stderr)
    GGML_API void ggml_log_get(ggml_log_callback * log_callback, void ** user_data);
    GGML_API void ggml_log_set(ggml_log_callback log_callback, void * user_data);

    //
    // type traits
    //

    typedef void (*ggml_to_float_t)  (const void  * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
    typedef void (*ggml_from_float_t)(const float * GGML_RESTRICT x, void  * GGML_RESTRICT y, int64_t k);

    struct ggml_type_traits {
        const char             * type_name;
        int64_t                  blck_size;
        int64_t                  blck_size_interleave; // interleave elements in blocks
        size_t                   type_size;
        bool                     is_quantized;
        ggml_to_float_t          to_float;
        ggml_from_float_t        from_float_ref;
    };

    GGML_API const struct ggml_type_traits * ggml_get_type_traits(enum ggml_type type);

#ifdef  __cplusplus
}
#endif
