// ggml core: logging, aborts, type traits, contexts (an arena of objects) and tensor creation.
// Op constructors live in ggml-ops.c, graphs in ggml-graph.c.

#include "ggml-graph.h"
#include "ggml-quants.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// ---- logging and aborts ---------------------------------------------------------------------------------

static void ggml_log_default(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) user_data;
    fputs(text, stderr);
    fflush(stderr);
}

static ggml_log_callback g_log_callback  = ggml_log_default;
static void *            g_log_user_data = NULL;

void ggml_log_get(ggml_log_callback * log_callback, void ** user_data) {
    *log_callback = g_log_callback;
    *user_data    = g_log_user_data;
}

void ggml_log_set(ggml_log_callback log_callback, void * user_data) {
    g_log_callback  = log_callback ? log_callback : ggml_log_default;
    g_log_user_data = user_data;
}

void ggml_log_internal(enum ggml_log_level level, const char * fmt, ...) {
    char buf[1024];
    va_list args;
    va_start(args, fmt);
    const int n = vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);
    if (n < 0) {
        return;
    }
    if ((size_t) n < sizeof(buf)) {
        g_log_callback(level, buf, g_log_user_data);
        return;
    }
    char * big = malloc((size_t) n + 1);
    if (!big) {
        g_log_callback(level, buf, g_log_user_data);
        return;
    }
    va_start(args, fmt);
    vsnprintf(big, (size_t) n + 1, fmt, args);
    va_end(args);
    g_log_callback(level, big, g_log_user_data);
    free(big);
}

static ggml_abort_callback_t g_abort_callback = NULL;

ggml_abort_callback_t ggml_set_abort_callback(ggml_abort_callback_t callback) {
    ggml_abort_callback_t old = g_abort_callback;
    g_abort_callback = callback;
    return old;
}

void ggml_abort(const char * file, int line, const char * fmt, ...) {
    char msg[2048];
    int off = snprintf(msg, sizeof(msg), "%s:%d: ", file, line);
    if (off < 0 || (size_t) off >= sizeof(msg)) {
        off = 0;
    }
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg + off, sizeof(msg) - (size_t) off, fmt, args);
    va_end(args);
    if (g_abort_callback) {
        g_abort_callback(msg);
    } else {
        fprintf(stderr, "%s\n", msg);
        fflush(stderr);
    }
    abort();
}

const char * ggml_status_to_string(enum ggml_status status) {
    switch (status) {
        case GGML_STATUS_ALLOC_FAILED: return "GGML status: error (failed to allocate memory)";
        case GGML_STATUS_FAILED:       return "GGML status: error (operation failed)";
        case GGML_STATUS_SUCCESS:      return "GGML status: success";
        case GGML_STATUS_ABORTED:      return "GGML status: warning (operation aborted)";
    }
    return "GGML status: unknown";
}

// ---- misc -----------------------------------------------------------------------------------------------

const char * ggml_version(void) { return "0.1.0"; }
const char * ggml_commit(void)  { return "unknown"; }

bool ggml_guid_matches(ggml_guid_t guid_a, ggml_guid_t guid_b) {
    return memcmp(guid_a, guid_b, sizeof(ggml_guid)) == 0;
}

void ggml_time_init(void) {}

int64_t ggml_time_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + (int64_t) ts.tv_nsec / 1000000;
}

int64_t ggml_time_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + (int64_t) ts.tv_nsec / 1000;
}

int64_t ggml_cycles(void) { return (int64_t) clock(); }
int64_t ggml_cycles_per_ms(void) { return CLOCKS_PER_SEC / 1000; }

FILE * ggml_fopen(const char * fname, const char * mode) { return fopen(fname, mode); }

// ---- half / bfloat rows ---------------------------------------------------------------------------------

float       ggml_fp16_to_fp32(ggml_fp16_t x) { return GGML_FP16_TO_FP32(x); }
ggml_fp16_t ggml_fp32_to_fp16(float x)       { return GGML_FP32_TO_FP16(x); }
float       ggml_bf16_to_fp32(ggml_bf16_t x) { return GGML_BF16_TO_FP32(x); }
ggml_bf16_t ggml_fp32_to_bf16(float x)       { return GGML_FP32_TO_BF16(x); }

void ggml_fp16_to_fp32_row(const ggml_fp16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = GGML_FP16_TO_FP32(x[i]);
    }
}

void ggml_fp32_to_fp16_row(const float * x, ggml_fp16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = GGML_FP32_TO_FP16(x[i]);
    }
}

void ggml_bf16_to_fp32_row(const ggml_bf16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = GGML_BF16_TO_FP32(x[i]);
    }
}

void ggml_fp32_to_bf16_row_ref(const float * x, ggml_bf16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = GGML_FP32_TO_BF16(x[i]);
    }
}

void ggml_fp32_to_bf16_row(const float * x, ggml_bf16_t * y, int64_t n) {
    ggml_fp32_to_bf16_row_ref(x, y, n);
}

// ---- type traits ----------------------------------------------------------------------------------------

static void fp16_to_float_row(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    ggml_fp16_to_fp32_row((const ggml_fp16_t *) x, y, k);
}
static void float_to_fp16_row(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    ggml_fp32_to_fp16_row(x, (ggml_fp16_t *) y, k);
}
static void bf16_to_float_row(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    ggml_bf16_to_fp32_row((const ggml_bf16_t *) x, y, k);
}
static void float_to_bf16_row(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    ggml_fp32_to_bf16_row_ref(x, (ggml_bf16_t *) y, k);
}

#define TRAITS_Q(NAME, BLCK, T, t)                                   \
    {                                                                \
        .type_name      = NAME,                                      \
        .blck_size      = BLCK,                                      \
        .type_size      = sizeof(block_##t),                         \
        .is_quantized   = true,                                      \
        .to_float       = (ggml_to_float_t) dequantize_row_##t,      \
        .from_float_ref = (ggml_from_float_t) quantize_row_##t##_ref \
    }

// types we can size (so GGUF files holding them are readable) but not convert
#define TRAITS_OPAQUE(NAME, BLCK, BYTES) \
    { .type_name = NAME, .blck_size = BLCK, .type_size = BYTES, .is_quantized = true }

static const struct ggml_type_traits type_traits[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32]     = { .type_name = "f32",  .blck_size = 1, .type_size = sizeof(float),       .is_quantized = false },
    [GGML_TYPE_F16]     = { .type_name = "f16",  .blck_size = 1, .type_size = sizeof(ggml_fp16_t), .is_quantized = false,
                            .to_float = fp16_to_float_row, .from_float_ref = float_to_fp16_row },
    [GGML_TYPE_BF16]    = { .type_name = "bf16", .blck_size = 1, .type_size = sizeof(ggml_bf16_t), .is_quantized = false,
                            .to_float = bf16_to_float_row, .from_float_ref = float_to_bf16_row },
    [GGML_TYPE_F64]     = { .type_name = "f64",  .blck_size = 1, .type_size = sizeof(double),      .is_quantized = false },
    [GGML_TYPE_I8]      = { .type_name = "i8",   .blck_size = 1, .type_size = sizeof(int8_t),      .is_quantized = false },
    [GGML_TYPE_I16]     = { .type_name = "i16",  .blck_size = 1, .type_size = sizeof(int16_t),     .is_quantized = false },
    [GGML_TYPE_I32]     = { .type_name = "i32",  .blck_size = 1, .type_size = sizeof(int32_t),     .is_quantized = false },
    [GGML_TYPE_I64]     = { .type_name = "i64",  .blck_size = 1, .type_size = sizeof(int64_t),     .is_quantized = false },
    [GGML_TYPE_Q4_0]    = TRAITS_Q("q4_0",   QK4_0,  Q4_0,   q4_0),
    [GGML_TYPE_Q4_1]    = TRAITS_Q("q4_1",   QK4_1,  Q4_1,   q4_1),
    [GGML_TYPE_Q5_0]    = TRAITS_Q("q5_0",   QK5_0,  Q5_0,   q5_0),
    [GGML_TYPE_Q5_1]    = TRAITS_Q("q5_1",   QK5_1,  Q5_1,   q5_1),
    [GGML_TYPE_Q8_0]    = TRAITS_Q("q8_0",   QK8_0,  Q8_0,   q8_0),
    [GGML_TYPE_Q8_1]    = TRAITS_Q("q8_1",   QK8_1,  Q8_1,   q8_1),
    [GGML_TYPE_Q2_K]    = TRAITS_Q("q2_K",   QK_K,   Q2_K,   q2_K),
    [GGML_TYPE_Q3_K]    = TRAITS_Q("q3_K",   QK_K,   Q3_K,   q3_K),
    [GGML_TYPE_Q4_K]    = TRAITS_Q("q4_K",   QK_K,   Q4_K,   q4_K),
    [GGML_TYPE_Q5_K]    = TRAITS_Q("q5_K",   QK_K,   Q5_K,   q5_K),
    [GGML_TYPE_Q6_K]    = TRAITS_Q("q6_K",   QK_K,   Q6_K,   q6_K),
    [GGML_TYPE_Q8_K]    = TRAITS_Q("q8_K",   QK_K,   Q8_K,   q8_K),
    [GGML_TYPE_IQ4_NL]  = TRAITS_Q("iq4_nl", QK4_NL, IQ4_NL, iq4_nl),
    [GGML_TYPE_IQ4_XS]  = TRAITS_Q("iq4_xs", QK_K,   IQ4_XS, iq4_xs),
    [GGML_TYPE_IQ2_XXS] = TRAITS_OPAQUE("iq2_xxs", QK_K, GGML_IQ2_XXS_BLOCK_BYTES),
    [GGML_TYPE_IQ2_XS]  = TRAITS_OPAQUE("iq2_xs",  QK_K, GGML_IQ2_XS_BLOCK_BYTES),
    [GGML_TYPE_IQ3_XXS] = TRAITS_OPAQUE("iq3_xxs", QK_K, GGML_IQ3_XXS_BLOCK_BYTES),
    [GGML_TYPE_IQ1_S]   = TRAITS_OPAQUE("iq1_s",   QK_K, GGML_IQ1_S_BLOCK_BYTES),
    [GGML_TYPE_IQ3_S]   = TRAITS_OPAQUE("iq3_s",   QK_K, GGML_IQ3_S_BLOCK_BYTES),
    [GGML_TYPE_IQ2_S]   = TRAITS_OPAQUE("iq2_s",   QK_K, GGML_IQ2_S_BLOCK_BYTES),
    [GGML_TYPE_IQ1_M]   = TRAITS_OPAQUE("iq1_m",   QK_K, GGML_IQ1_M_BLOCK_BYTES),
    [GGML_TYPE_TQ1_0]   = TRAITS_OPAQUE("tq1_0",   QK_K, GGML_TQ1_0_BLOCK_BYTES),
    [GGML_TYPE_TQ2_0]   = TRAITS_OPAQUE("tq2_0",   QK_K, GGML_TQ2_0_BLOCK_BYTES),
    [GGML_TYPE_MXFP4]   = TRAITS_OPAQUE("mxfp4",   QK_MXFP4, GGML_MXFP4_BLOCK_BYTES),
    // removed ids (4, 5, 31..33, 36..38) keep a zero block size: gguf rejects them as unknown
};

const struct ggml_type_traits * ggml_get_type_traits(enum ggml_type type) {
    GGML_ASSERT(type >= 0 && type < GGML_TYPE_COUNT);
    return &type_traits[type];
}

int64_t ggml_blck_size(enum ggml_type type) { return ggml_get_type_traits(type)->blck_size; }
size_t  ggml_type_size(enum ggml_type type) { return ggml_get_type_traits(type)->type_size; }

size_t ggml_row_size(enum ggml_type type, int64_t ne) {
    GGML_ASSERT(ne % ggml_blck_size(type) == 0);
    return ggml_type_size(type) * (size_t)(ne / ggml_blck_size(type));
}

double ggml_type_sizef(enum ggml_type type) {
    return (double) ggml_type_size(type) / (double) ggml_blck_size(type);
}

const char * ggml_type_name(enum ggml_type type) {
    if (type < 0 || type >= GGML_TYPE_COUNT || type_traits[type].type_name == NULL) {
        return "NONE";
    }
    return type_traits[type].type_name;
}

bool ggml_is_quantized(enum ggml_type type) { return ggml_get_type_traits(type)->is_quantized; }

enum ggml_type ggml_ftype_to_ggml_type(enum ggml_ftype ftype) {
    switch (ftype) {
        case GGML_FTYPE_ALL_F32:              return GGML_TYPE_F32;
        case GGML_FTYPE_MOSTLY_F16:           return GGML_TYPE_F16;
        case GGML_FTYPE_MOSTLY_BF16:          return GGML_TYPE_BF16;
        case GGML_FTYPE_MOSTLY_Q4_0:          return GGML_TYPE_Q4_0;
        case GGML_FTYPE_MOSTLY_Q4_1:          return GGML_TYPE_Q4_1;
        case GGML_FTYPE_MOSTLY_Q5_0:          return GGML_TYPE_Q5_0;
        case GGML_FTYPE_MOSTLY_Q5_1:          return GGML_TYPE_Q5_1;
        case GGML_FTYPE_MOSTLY_Q8_0:          return GGML_TYPE_Q8_0;
        case GGML_FTYPE_MOSTLY_Q2_K:          return GGML_TYPE_Q2_K;
        case GGML_FTYPE_MOSTLY_Q3_K:          return GGML_TYPE_Q3_K;
        case GGML_FTYPE_MOSTLY_Q4_K:          return GGML_TYPE_Q4_K;
        case GGML_FTYPE_MOSTLY_Q5_K:          return GGML_TYPE_Q5_K;
        case GGML_FTYPE_MOSTLY_Q6_K:          return GGML_TYPE_Q6_K;
        case GGML_FTYPE_MOSTLY_IQ2_XXS:       return GGML_TYPE_IQ2_XXS;
        case GGML_FTYPE_MOSTLY_IQ2_XS:        return GGML_TYPE_IQ2_XS;
        case GGML_FTYPE_MOSTLY_IQ3_XXS:       return GGML_TYPE_IQ3_XXS;
        case GGML_FTYPE_MOSTLY_IQ1_S:         return GGML_TYPE_IQ1_S;
        case GGML_FTYPE_MOSTLY_IQ1_M:         return GGML_TYPE_IQ1_M;
        case GGML_FTYPE_MOSTLY_IQ4_NL:        return GGML_TYPE_IQ4_NL;
        case GGML_FTYPE_MOSTLY_IQ4_XS:        return GGML_TYPE_IQ4_XS;
        case GGML_FTYPE_MOSTLY_IQ3_S:         return GGML_TYPE_IQ3_S;
        case GGML_FTYPE_MOSTLY_IQ2_S:         return GGML_TYPE_IQ2_S;
        case GGML_FTYPE_MOSTLY_MXFP4:         return GGML_TYPE_MXFP4;
        case GGML_FTYPE_UNKNOWN:
        case GGML_FTYPE_MOSTLY_Q4_1_SOME_F16: break;
    }
    return GGML_TYPE_COUNT;
}

// ---- contexts -------------------------------------------------------------------------------------------
//
// A context is an arena: a list of objects (tensors, graphs, raw buffers) carved from one memory block.
// Each object records its offset and size so the arena can be walked (ggml_get_first/next_tensor).

struct ggml_object {
    size_t offs;                 // offset of the payload from the start of the arena
    size_t size;                 // payload size (padded)
    struct ggml_object * next;
    enum ggml_object_type type;
    char padding[4];
};

#define GGML_OBJECT_SIZE sizeof(struct ggml_object)

struct ggml_context {
    size_t mem_size;
    void * mem_buffer;
    bool   mem_buffer_owned;
    bool   no_alloc;
    int    n_objects;
    struct ggml_object * objects_begin;
    struct ggml_object * objects_end;
};

size_t ggml_tensor_overhead(void) {
    return GGML_OBJECT_SIZE + GGML_TENSOR_SIZE;
}

struct ggml_context * ggml_init(struct ggml_init_params params) {
    struct ggml_context * ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        return NULL;
    }
    // a zero-sized arena still needs a valid pointer
    const size_t mem_size = params.mem_buffer ? params.mem_size : GGML_PAD(params.mem_size, GGML_MEM_ALIGN);
    ctx->mem_size   = mem_size;
    ctx->mem_buffer = params.mem_buffer;
    ctx->no_alloc   = params.no_alloc;
    if (!ctx->mem_buffer) {
        ctx->mem_buffer = aligned_alloc(64, mem_size ? GGML_PAD(mem_size, 64) : 64);
        if (!ctx->mem_buffer) {
            GGML_LOG_ERROR("%s: failed to allocate %zu bytes for a ggml context\n", __func__, mem_size);
            free(ctx);
            return NULL;
        }
        ctx->mem_buffer_owned = true;
    }
    GGML_ASSERT(((uintptr_t) ctx->mem_buffer) % GGML_MEM_ALIGN == 0);
    return ctx;
}

void ggml_reset(struct ggml_context * ctx) {
    if (ctx == NULL) {
        return;
    }
    ctx->n_objects     = 0;
    ctx->objects_begin = NULL;
    ctx->objects_end   = NULL;
}

void ggml_free(struct ggml_context * ctx) {
    if (ctx == NULL) {
        return;
    }
    if (ctx->mem_buffer_owned) {
        free(ctx->mem_buffer);
    }
    free(ctx);
}

size_t ggml_used_mem(const struct ggml_context * ctx) {
    return ctx->objects_end == NULL ? 0 : ctx->objects_end->offs + ctx->objects_end->size;
}

bool   ggml_get_no_alloc(struct ggml_context * ctx) { return ctx->no_alloc; }
void   ggml_set_no_alloc(struct ggml_context * ctx, bool no_alloc) { ctx->no_alloc = no_alloc; }
void * ggml_get_mem_buffer(const struct ggml_context * ctx) { return ctx->mem_buffer; }
size_t ggml_get_mem_size(const struct ggml_context * ctx) { return ctx->mem_size; }

size_t ggml_get_max_tensor_size(const struct ggml_context * ctx) {
    size_t max_size = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        const size_t bytes = ggml_nbytes(t);
        max_size = bytes > max_size ? bytes : max_size;
    }
    return max_size;
}

// Carves an object of `size` payload bytes from the arena; NULL (and a log line) when the arena is full.
// Running out of arena is a caller's sizing bug, but we report it instead of aborting so that a loader
// sized from a hostile file can fail cleanly.
static struct ggml_object * ggml_new_object(struct ggml_context * ctx, enum ggml_object_type type, size_t size) {
    struct ggml_object * obj_cur = ctx->objects_end;
    const size_t cur_offs = obj_cur == NULL ? 0 : obj_cur->offs;
    const size_t cur_size = obj_cur == NULL ? 0 : obj_cur->size;
    const size_t cur_end  = cur_offs + cur_size;

    size_t size_needed;
    if (size > SIZE_MAX - GGML_MEM_ALIGN) {
        GGML_LOG_ERROR("%s: object size %zu is too large\n", __func__, size);
        return NULL;
    }
    size_needed = GGML_PAD(size, GGML_MEM_ALIGN);

    size_t end;
    if (ggml_add_overflow_size(cur_end, size_needed, &end) ||
        ggml_add_overflow_size(end, GGML_OBJECT_SIZE, &end) || end > ctx->mem_size) {
        GGML_LOG_ERROR("%s: not enough space in the context's memory pool (needed %zu, available %zu)\n",
                       __func__, cur_end + size_needed + GGML_OBJECT_SIZE, ctx->mem_size);
        return NULL;
    }

    struct ggml_object * obj_new = (struct ggml_object *) ((char *) ctx->mem_buffer + cur_end);
    *obj_new = (struct ggml_object) {
        .offs = cur_end + GGML_OBJECT_SIZE,
        .size = size_needed,
        .next = NULL,
        .type = type,
    };

    if (obj_cur != NULL) {
        obj_cur->next = obj_new;
    } else {
        ctx->objects_begin = obj_new;
    }
    ctx->objects_end = obj_new;
    ctx->n_objects++;
    return obj_new;
}

void * ggml_new_buffer(struct ggml_context * ctx, size_t nbytes) {
    struct ggml_object * obj = ggml_new_object(ctx, GGML_OBJECT_TYPE_WORK_BUFFER, nbytes);
    return obj ? (char *) ctx->mem_buffer + obj->offs : NULL;
}

// internal (ggml-graph.h): also used for graphs
void * ggml_new_object_payload(struct ggml_context * ctx, enum ggml_object_type type, size_t size) {
    struct ggml_object * obj = ggml_new_object(ctx, type, size);
    return obj ? (char *) ctx->mem_buffer + obj->offs : NULL;
}

static struct ggml_tensor * ggml_new_tensor_impl(struct ggml_context * ctx, enum ggml_type type, int n_dims,
                                                 const int64_t * ne, struct ggml_tensor * view_src,
                                                 size_t view_offs) {
    GGML_ASSERT(type >= 0 && type < GGML_TYPE_COUNT && type_traits[type].blck_size > 0);
    GGML_ASSERT(n_dims >= 1 && n_dims <= GGML_MAX_DIMS);

    // a view shares the data of its source
    if (view_src != NULL && view_src->view_src != NULL) {
        view_offs += view_src->view_offs;
        view_src   = view_src->view_src;
    }

    int64_t full_ne[GGML_MAX_DIMS] = { 1, 1, 1, 1 };
    for (int i = 0; i < n_dims; i++) {
        GGML_ASSERT(ne[i] >= 0);
        full_ne[i] = ne[i];
    }
    GGML_ASSERT(full_ne[0] % type_traits[type].blck_size == 0);

    size_t data_size = ggml_row_size(type, full_ne[0]);
    for (int i = 1; i < GGML_MAX_DIMS; i++) {
        GGML_ASSERT(!ggml_mul_overflow_size(data_size, (size_t) full_ne[i], &data_size));
    }

    GGML_ASSERT(view_src == NULL || data_size == 0 || data_size + view_offs <= ggml_nbytes(view_src));

    void * data = view_src != NULL ? view_src->data : NULL;
    if (data != NULL) {
        data = (char *) data + view_offs;
    }

    size_t obj_alloc_size = 0;
    if (view_src == NULL && !ctx->no_alloc) {
        obj_alloc_size = data_size;
    }

    struct ggml_object * obj_new = ggml_new_object(ctx, GGML_OBJECT_TYPE_TENSOR, GGML_TENSOR_SIZE + obj_alloc_size);
    if (obj_new == NULL) {
        return NULL;
    }

    struct ggml_tensor * result = (struct ggml_tensor *) ((char *) ctx->mem_buffer + obj_new->offs);
    memset(result, 0, sizeof(*result));
    result->type      = type;
    result->buffer    = NULL;
    result->op        = GGML_OP_NONE;
    result->view_src  = view_src;
    result->view_offs = view_offs;
    result->data      = obj_alloc_size > 0 ? (void *) (result + 1) : data;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        result->ne[i] = full_ne[i];
    }
    if (view_src != NULL) {
        result->buffer = view_src->buffer;
    }

    result->nb[0] = type_traits[type].type_size;
    result->nb[1] = result->nb[0] * (size_t) (result->ne[0] / type_traits[type].blck_size);
    for (int i = 2; i < GGML_MAX_DIMS; i++) {
        result->nb[i] = result->nb[i - 1] * (size_t) result->ne[i - 1];
    }
    return result;
}

// internal (ggml-graph.h): used by the view ops in ggml-ops.c
struct ggml_tensor * ggml_new_tensor_view(struct ggml_context * ctx, enum ggml_type type, int n_dims,
                                          const int64_t * ne, struct ggml_tensor * view_src, size_t view_offs) {
    return ggml_new_tensor_impl(ctx, type, n_dims, ne, view_src, view_offs);
}

struct ggml_tensor * ggml_new_tensor(struct ggml_context * ctx, enum ggml_type type, int n_dims, const int64_t * ne) {
    return ggml_new_tensor_impl(ctx, type, n_dims, ne, NULL, 0);
}

struct ggml_tensor * ggml_new_tensor_1d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0) {
    return ggml_new_tensor(ctx, type, 1, &ne0);
}

struct ggml_tensor * ggml_new_tensor_2d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = { ne0, ne1 };
    return ggml_new_tensor(ctx, type, 2, ne);
}

struct ggml_tensor * ggml_new_tensor_3d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                        int64_t ne2) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return ggml_new_tensor(ctx, type, 3, ne);
}

struct ggml_tensor * ggml_new_tensor_4d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1,
                                        int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return ggml_new_tensor(ctx, type, 4, ne);
}

struct ggml_tensor * ggml_dup_tensor(struct ggml_context * ctx, const struct ggml_tensor * src) {
    return ggml_new_tensor(ctx, src->type, GGML_MAX_DIMS, src->ne);
}

struct ggml_tensor * ggml_view_tensor(struct ggml_context * ctx, struct ggml_tensor * src) {
    struct ggml_tensor * result = ggml_new_tensor_impl(ctx, src->type, GGML_MAX_DIMS, src->ne, src, 0);
    if (result == NULL) {
        return NULL;
    }
    ggml_format_name(result, "%s (view)", src->name);
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        result->nb[i] = src->nb[i];
    }
    return result;
}

struct ggml_tensor * ggml_get_first_tensor(const struct ggml_context * ctx) {
    for (struct ggml_object * obj = ctx->objects_begin; obj != NULL; obj = obj->next) {
        if (obj->type == GGML_OBJECT_TYPE_TENSOR) {
            return (struct ggml_tensor *) ((char *) ctx->mem_buffer + obj->offs);
        }
    }
    return NULL;
}

struct ggml_tensor * ggml_get_next_tensor(const struct ggml_context * ctx, struct ggml_tensor * tensor) {
    struct ggml_object * obj = (struct ggml_object *) ((char *) tensor - GGML_OBJECT_SIZE);
    for (obj = obj->next; obj != NULL; obj = obj->next) {
        if (obj->type == GGML_OBJECT_TYPE_TENSOR) {
            return (struct ggml_tensor *) ((char *) ctx->mem_buffer + obj->offs);
        }
    }
    return NULL;
}

struct ggml_tensor * ggml_get_tensor(struct ggml_context * ctx, const char * name) {
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (strcmp(t->name, name) == 0) {
            return t;
        }
    }
    return NULL;
}

void ggml_print_object(const struct ggml_object * obj) {
    GGML_LOG_INFO(" - ggml_object: type = %d, offset = %zu, size = %zu, next = %p\n", (int) obj->type, obj->offs,
                  obj->size, (const void *) obj->next);
}

void ggml_print_objects(const struct ggml_context * ctx) {
    GGML_LOG_INFO("%s: objects in context %p:\n", __func__, (const void *) ctx);
    for (struct ggml_object * obj = ctx->objects_begin; obj != NULL; obj = obj->next) {
        ggml_print_object(obj);
    }
}

// ---- tensor properties ----------------------------------------------------------------------------------

int64_t ggml_nelements(const struct ggml_tensor * t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }
int64_t ggml_nrows(const struct ggml_tensor * t)     { return t->ne[1] * t->ne[2] * t->ne[3]; }

size_t ggml_nbytes(const struct ggml_tensor * t) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (t->ne[i] <= 0) {
            return 0;
        }
    }
    const size_t blck_size = (size_t) ggml_blck_size(t->type);
    size_t nbytes;
    if (blck_size == 1) {
        nbytes = ggml_type_size(t->type);
        for (int i = 0; i < GGML_MAX_DIMS; i++) {
            nbytes += (size_t) (t->ne[i] - 1) * t->nb[i];
        }
    } else {
        nbytes = (size_t) t->ne[0] * t->nb[0] / blck_size;
        for (int i = 1; i < GGML_MAX_DIMS; i++) {
            nbytes += (size_t) (t->ne[i] - 1) * t->nb[i];
        }
    }
    return nbytes;
}

size_t ggml_nbytes_pad(const struct ggml_tensor * t) { return GGML_PAD(ggml_nbytes(t), GGML_MEM_ALIGN); }

size_t ggml_element_size(const struct ggml_tensor * t) { return ggml_type_size(t->type); }

bool ggml_is_transposed(const struct ggml_tensor * t) { return t->nb[0] > t->nb[1]; }

bool ggml_is_permuted(const struct ggml_tensor * t) {
    return t->nb[0] > t->nb[1] || t->nb[1] > t->nb[2] || t->nb[2] > t->nb[3];
}

bool ggml_is_empty(const struct ggml_tensor * t) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (t->ne[i] == 0) {
            return true;
        }
    }
    return false;
}

bool ggml_is_scalar(const struct ggml_tensor * t) { return t->ne[0] == 1 && t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }
bool ggml_is_vector(const struct ggml_tensor * t) { return t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }
bool ggml_is_matrix(const struct ggml_tensor * t) { return t->ne[2] == 1 && t->ne[3] == 1; }
bool ggml_is_3d(const struct ggml_tensor * t)     { return t->ne[3] == 1; }

int ggml_n_dims(const struct ggml_tensor * t) {
    for (int i = GGML_MAX_DIMS - 1; i >= 1; --i) {
        if (t->ne[i] > 1) {
            return i + 1;
        }
    }
    return 1;
}

// contiguous in dims >= n: each dim's stride equals the packed size of the dims below it
static bool ggml_is_contiguous_n(const struct ggml_tensor * t, int n) {
    size_t next_nb = ggml_type_size(t->type);
    if (t->ne[0] != ggml_blck_size(t->type) && t->nb[0] != next_nb) {
        return false;
    }
    next_nb *= (size_t) (t->ne[0] / ggml_blck_size(t->type));
    for (int i = 1; i < GGML_MAX_DIMS; i++) {
        if (t->ne[i] != 1) {
            if (i > n) {
                if (t->nb[i] != next_nb) {
                    return false;
                }
                next_nb *= (size_t) t->ne[i];
            } else {
                // this dimension does not need to be contiguous
                next_nb = (size_t) t->ne[i] * t->nb[i];
            }
        }
    }
    return true;
}

bool ggml_is_contiguous(const struct ggml_tensor * t)   { return ggml_is_contiguous_n(t, 0); }
bool ggml_is_contiguous_0(const struct ggml_tensor * t) { return ggml_is_contiguous_n(t, 0); }
bool ggml_is_contiguous_1(const struct ggml_tensor * t) { return ggml_is_contiguous_n(t, 1); }
bool ggml_is_contiguous_2(const struct ggml_tensor * t) { return ggml_is_contiguous_n(t, 2); }

bool ggml_is_contiguously_allocated(const struct ggml_tensor * t) {
    return ggml_nbytes(t) == (size_t) ggml_nelements(t) * ggml_type_size(t->type) / (size_t) ggml_blck_size(t->type);
}

bool ggml_is_contiguous_channels(const struct ggml_tensor * t) {
    return t->nb[0] > t->nb[2] && t->nb[1] > t->nb[0] && t->nb[2] == ggml_type_size(t->type);
}

bool ggml_is_contiguous_rows(const struct ggml_tensor * t) {
    return t->ne[0] == ggml_blck_size(t->type) || t->nb[0] == ggml_type_size(t->type);
}

bool ggml_are_same_shape(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return t0->ne[0] == t1->ne[0] && t0->ne[1] == t1->ne[1] && t0->ne[2] == t1->ne[2] && t0->ne[3] == t1->ne[3];
}

bool ggml_are_same_stride(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return t0->nb[0] == t1->nb[0] && t0->nb[1] == t1->nb[1] && t0->nb[2] == t1->nb[2] && t0->nb[3] == t1->nb[3];
}

// t1 can be built by repeating t0 along every dimension
bool ggml_can_repeat(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return ggml_is_empty(t0) ? ggml_is_empty(t1) :
           (t1->ne[0] % t0->ne[0] == 0) && (t1->ne[1] % t0->ne[1] == 0) &&
           (t1->ne[2] % t0->ne[2] == 0) && (t1->ne[3] % t0->ne[3] == 0);
}

void ggml_unravel_index(const struct ggml_tensor * t, int64_t i, int64_t * i0, int64_t * i1, int64_t * i2,
                        int64_t * i3) {
    const int64_t ne2 = t->ne[2];
    const int64_t ne1 = t->ne[1];
    const int64_t ne0 = t->ne[0];
    const int64_t i3_ = i / (ne2 * ne1 * ne0);
    const int64_t i2_ = (i - i3_ * ne2 * ne1 * ne0) / (ne1 * ne0);
    const int64_t i1_ = (i - i3_ * ne2 * ne1 * ne0 - i2_ * ne1 * ne0) / ne0;
    const int64_t i0_ = (i - i3_ * ne2 * ne1 * ne0 - i2_ * ne1 * ne0 - i1_ * ne0);
    if (i0) { *i0 = i0_; }
    if (i1) { *i1 = i1_; }
    if (i2) { *i2 = i2_; }
    if (i3) { *i3 = i3_; }
}

void *  ggml_get_data(const struct ggml_tensor * t)     { return t->data; }
float * ggml_get_data_f32(const struct ggml_tensor * t) { GGML_ASSERT(t->type == GGML_TYPE_F32); return (float *) t->data; }

enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * t) {
    GGML_ASSERT(t->op == GGML_OP_UNARY);
    return (enum ggml_unary_op) t->op_params[0];
}

enum ggml_glu_op ggml_get_glu_op(const struct ggml_tensor * t) {
    GGML_ASSERT(t->op == GGML_OP_GLU);
    return (enum ggml_glu_op) t->op_params[0];
}

const char * ggml_get_name(const struct ggml_tensor * t) { return t->name; }

struct ggml_tensor * ggml_set_name(struct ggml_tensor * t, const char * name) {
    size_t i;
    for (i = 0; i < sizeof(t->name) - 1 && name[i] != '\0'; i++) {
        t->name[i] = name[i];
    }
    t->name[i] = '\0';
    return t;
}

struct ggml_tensor * ggml_format_name(struct ggml_tensor * t, const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(t->name, sizeof(t->name), fmt, args);
    va_end(args);
    return t;
}

void ggml_set_input (struct ggml_tensor * t) { t->flags |= GGML_TENSOR_FLAG_INPUT; }
void ggml_set_output(struct ggml_tensor * t) { t->flags |= GGML_TENSOR_FLAG_OUTPUT; }
// a trainable parameter is an input of the graph (no op); the loss is an F32 scalar (as llama.cpp asserts)
void ggml_set_param(struct ggml_tensor * t) {
    GGML_ASSERT(t->op == GGML_OP_NONE);
    t->flags |= GGML_TENSOR_FLAG_PARAM;
}

void ggml_set_loss(struct ggml_tensor * t) {
    GGML_ASSERT(ggml_is_scalar(t));
    GGML_ASSERT(t->type == GGML_TYPE_F32);
    t->flags |= GGML_TENSOR_FLAG_LOSS;
}

// ---- validation of row data -----------------------------------------------------------------------------

bool ggml_validate_row_data(enum ggml_type type, const void * data, size_t nbytes) {
    if (type < 0 || type >= GGML_TYPE_COUNT || type_traits[type].blck_size == 0) {
        GGML_LOG_ERROR("%s: invalid type %d\n", __func__, (int) type);
        return false;
    }
    if (nbytes % type_traits[type].type_size != 0) {
        GGML_LOG_ERROR("%s: invalid size %zu for type %s (type size = %zu)\n", __func__, nbytes,
                       ggml_type_name(type), type_traits[type].type_size);
        return false;
    }
    return ggml_quants_validate_row(type, data, nbytes);
}
