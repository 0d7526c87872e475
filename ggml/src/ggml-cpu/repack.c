// The CPU_REPACK buffer type and the table of interleaved layouts (see repack.h): which tensors are stored
// interleaved, the choice of the gemv per type and ISA, and set/get_tensor converting between the layouts.
#include "repack.h"

#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "ggml-impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define REPACK_ALIGNMENT 64

// ---- the types ----------------------------------------------------------------------------------------------

// The K-quants gain most: vec_dot unpacks every row's scales on its own and runs out of instructions well
// below the memory bandwidth; across 16 rows the same work is a few shifts per sub-block (one core, weights
// in cache: Q4_K 46 GB/s against vec_dot's 19, Q6_K 44 against 26). Q8_0 keeps vec_dot's eight float chains
// per row, but one vpdpbusd + convert + fma serves 16 rows, and no sign trick or horizontal sum is left
// (bench-repack, 4096x1024 in cache: 64 GB/s against 31), so two cores can exceed the memory bandwidth.
// A type is enabled only where token generation measured faster.
static const struct ggml_cpu_repack_traits g_repack_traits[] = {
    { GGML_TYPE_Q4_0, true, ggml_cpu_repack_q4_0, ggml_cpu_unpack_q4_0,
      { ggml_cpu_repack_gemv_q4_0_scalar, ggml_cpu_repack_gemv_q4_0_avx2, ggml_cpu_repack_gemv_q4_0_avx512 } },
    { GGML_TYPE_Q8_0, true, ggml_cpu_repack_q8_0, ggml_cpu_unpack_q8_0,
      { ggml_cpu_repack_gemv_q8_0_scalar, ggml_cpu_repack_gemv_q8_0_avx2, ggml_cpu_repack_gemv_q8_0_avx512 } },
    { GGML_TYPE_Q4_K, true, ggml_cpu_repack_q4_K, ggml_cpu_unpack_q4_K,
      { ggml_cpu_repack_gemv_q4_K_scalar, ggml_cpu_repack_gemv_q4_K_avx2, ggml_cpu_repack_gemv_q4_K_avx512 } },
    { GGML_TYPE_Q6_K, true, ggml_cpu_repack_q6_K, ggml_cpu_unpack_q6_K,
      { ggml_cpu_repack_gemv_q6_K_scalar, ggml_cpu_repack_gemv_q6_K_avx2, ggml_cpu_repack_gemv_q6_K_avx512 } },
};

const struct ggml_cpu_repack_traits * ggml_cpu_repack_get_traits(enum ggml_type type) {
    for (size_t i = 0; i < sizeof(g_repack_traits) / sizeof(g_repack_traits[0]); i++) {
        if (g_repack_traits[i].type == type) {
            return &g_repack_traits[i];
        }
    }
    return NULL;
}

ggml_cpu_repack_gemv_t ggml_cpu_repack_gemv(enum ggml_type type, int isa) {
    const struct ggml_cpu_repack_traits * tr = ggml_cpu_repack_get_traits(type);
    if (tr == NULL) {
        return NULL;
    }
    int i = isa < 0 ? (int) ggml_cpu_isa_active() : isa;
    i = i > GGML_CPU_ISA_AVX512 ? GGML_CPU_ISA_AVX512 : i;
    for (; i > GGML_CPU_ISA_SCALAR; i--) {
        if (tr->gemv[i] != NULL && ggml_cpu_isa_supported((enum ggml_cpu_isa) i)) {
            return tr->gemv[i];
        }
    }
    return tr->gemv[GGML_CPU_ISA_SCALAR];
}

// ---- layout -------------------------------------------------------------------------------------------------

bool ggml_cpu_repack_supported(const struct ggml_tensor * t) {
    const struct ggml_cpu_repack_traits * tr = ggml_cpu_repack_get_traits(t->type);
    return tr != NULL && tr->enabled && t->ne[2] == 1 && t->ne[3] == 1 && t->ne[0] % ggml_blck_size(t->type) == 0 &&
           t->ne[1] % GGML_CPU_REPACK_ROWS == 0 && t->ne[1] > 0 && ggml_is_contiguous(t);
}

bool ggml_cpu_repack_is_repacked(const struct ggml_tensor * t) {
    const struct ggml_tensor * s = t->view_src ? t->view_src : t;
    return s == t && t->buffer != NULL && ggml_backend_buffer_get_type(t->buffer) == ggml_backend_cpu_repack_buffer_type() &&
           ggml_cpu_repack_supported(t);
}

// ---- the group walk shared by every type ---------------------------------------------------------------------

void ggml_cpu_repack_groups(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t nb,
                            size_t row_block, size_t group_block, ggml_cpu_repack_row_t pack_row) {
    for (int64_t g = 0; g < nrows / GGML_CPU_REPACK_ROWS; g++) {
        for (int64_t b = 0; b < nb; b++) {
            uint8_t * blk = (uint8_t *) dst + (size_t) (g * nb + b) * group_block;
            for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
                pack_row(blk, (const uint8_t *) src + (size_t) ((g * GGML_CPU_REPACK_ROWS + r) * nb + b) * row_block, r);
            }
        }
    }
}

void ggml_cpu_unpack_groups(const void * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t nb,
                            size_t row_block, size_t group_block, ggml_cpu_unpack_row_t unpack_row) {
    for (int64_t g = 0; g < nrows / GGML_CPU_REPACK_ROWS; g++) {
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t * blk = (const uint8_t *) src + (size_t) (g * nb + b) * group_block;
            for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
                unpack_row(blk, (uint8_t *) dst + (size_t) ((g * GGML_CPU_REPACK_ROWS + r) * nb + b) * row_block, r);
            }
        }
    }
}

// ---- buffer -------------------------------------------------------------------------------------------------

static void repack_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, uint8_t value,
                                        size_t offset, size_t size) {
    (void) buffer;
    // only whole-tensor zeroing keeps a repacked tensor meaningful, and zero bytes read the same either way
    memset((char *) tensor->data + offset, value, size);
}

static void repack_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data,
                                     size_t offset, size_t size) {
    (void) buffer;
    if (!ggml_cpu_repack_supported(tensor)) {
        memcpy((char *) tensor->data + offset, data, size);
        return;
    }
    if (offset != 0 || size != ggml_nbytes(tensor)) {
        // the layout mixes 16 rows per block: a partial write cannot be placed
        GGML_LOG_ERROR("%s: tensor '%s': a repacked tensor must be written whole (offset %zu, size %zu of %zu)\n",
                       __func__, tensor->name, offset, size, ggml_nbytes(tensor));
        return;
    }
    ggml_cpu_repack_get_traits(tensor->type)->repack(data, tensor->data, tensor->ne[1], tensor->ne[0]);
}

static void repack_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data,
                                     size_t offset, size_t size) {
    (void) buffer;
    if (!ggml_cpu_repack_supported(tensor)) {
        memcpy(data, (const char *) tensor->data + offset, size);
        return;
    }
    const ggml_cpu_repack_convert_t unpack = ggml_cpu_repack_get_traits(tensor->type)->unpack;
    const size_t nbytes = ggml_nbytes(tensor);
    if (offset == 0 && size == nbytes) {
        unpack(tensor->data, data, tensor->ne[1], tensor->ne[0]);
        return;
    }
    void * tmp = malloc(nbytes);
    if (tmp == NULL) {
        GGML_LOG_ERROR("%s: out of memory reading tensor '%s'\n", __func__, tensor->name);
        return;
    }
    unpack(tensor->data, tmp, tensor->ne[1], tensor->ne[0]);
    memcpy(data, (const char *) tmp + offset, size);
    free(tmp);
}

static void repack_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    memset(buffer->context, value, buffer->size);
}

static const struct ggml_backend_buffer_i repack_buffer_i = {
    /* .free_buffer   = */ NULL, // both set by ggml_cpu_alloc_aligned_buffer, which owns the memory
    /* .get_base      = */ NULL,
    /* .init_tensor   = */ NULL,
    /* .memset_tensor = */ repack_buffer_memset_tensor,
    /* .set_tensor    = */ repack_buffer_set_tensor,
    /* .get_tensor    = */ repack_buffer_get_tensor,
    /* .set_tensor_2d = */ NULL,
    /* .get_tensor_2d = */ NULL,
    /* .cpy_tensor    = */ NULL,
    /* .clear         = */ repack_buffer_clear,
    /* .reset         = */ NULL,
};

// ---- buffer type --------------------------------------------------------------------------------------------

static const char * repack_buft_get_name(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "CPU_REPACK";
}

static ggml_backend_buffer_t repack_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    return ggml_cpu_alloc_aligned_buffer(buft, repack_buffer_i, size);
}

static size_t repack_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return REPACK_ALIGNMENT;
}

static struct ggml_backend_buffer_type g_repack_buft = {
    /* .iface   = */ {
        /* .get_name       = */ repack_buft_get_name,
        /* .alloc_buffer   = */ repack_buft_alloc_buffer,
        /* .get_alignment  = */ repack_buft_get_alignment,
        /* .get_max_size   = */ NULL,
        /* .get_alloc_size = */ NULL,
        /* .is_host        = */ NULL, // the bytes are not in ggml's layout
    },
    /* .device  = */ NULL, // set to the CPU device by ggml-cpu-backend.c
    /* .context = */ NULL,
};

static pthread_once_t g_repack_buft_once = PTHREAD_ONCE_INIT;

static void repack_buft_init(void) {
    g_repack_buft.device = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
}

ggml_backend_buffer_type_t ggml_backend_cpu_repack_buffer_type(void) {
    pthread_once(&g_repack_buft_once, repack_buft_init);
    return &g_repack_buft;
}
