// The CPU_REPACK buffer type and the interleaved Q4_0 layout (see repack.h): conversion both ways, the
// scalar gemv and the choice of the gemv per ISA.
#include "repack.h"

#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "ggml-common.h"
#include "ggml-impl.h"
#include "quants-impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define REPACK_ALIGNMENT 64

// ---- layout -------------------------------------------------------------------------------------------------

bool ggml_cpu_repack_supported(const struct ggml_tensor * t) {
    return t->type == GGML_TYPE_Q4_0 && t->ne[2] == 1 && t->ne[3] == 1 && t->ne[0] % QK4_0 == 0 &&
           t->ne[1] % GGML_CPU_REPACK_ROWS == 0 && t->ne[1] > 0 && ggml_is_contiguous(t);
}

bool ggml_cpu_repack_is_repacked(const struct ggml_tensor * t) {
    const struct ggml_tensor * s = t->view_src ? t->view_src : t;
    return s == t && t->buffer != NULL && ggml_backend_buffer_get_type(t->buffer) == ggml_backend_cpu_repack_buffer_type() &&
           ggml_cpu_repack_supported(t);
}

void ggml_cpu_repack_q4_0(const void * src, void * dst, int64_t nrows, int64_t k) {
    const int64_t nb = k / QK4_0;
    const block_q4_0 * x = src;
    uint8_t * out = dst;
    for (int64_t g = 0; g < nrows / GGML_CPU_REPACK_ROWS; g++) {
        for (int64_t b = 0; b < nb; b++) {
            uint8_t * blk = out + (size_t) (g * nb + b) * GGML_CPU_REPACK_BLOCK;
            for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
                const block_q4_0 * xb = x + (g * GGML_CPU_REPACK_ROWS + r) * nb + b;
                memcpy(blk + 2 * r, &xb->d, 2);
                for (int m = 0; m < 4; m++) {
                    memcpy(blk + 32 + 64 * m + 4 * r, xb->qs + 4 * m, 4);
                }
            }
        }
    }
}

void ggml_cpu_unpack_q4_0(const void * src, void * dst, int64_t nrows, int64_t k) {
    const int64_t nb = k / QK4_0;
    const uint8_t * in = src;
    block_q4_0 * x = dst;
    for (int64_t g = 0; g < nrows / GGML_CPU_REPACK_ROWS; g++) {
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t * blk = in + (size_t) (g * nb + b) * GGML_CPU_REPACK_BLOCK;
            for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
                block_q4_0 * xb = x + (g * GGML_CPU_REPACK_ROWS + r) * nb + b;
                memcpy(&xb->d, blk + 2 * r, 2);
                for (int m = 0; m < 4; m++) {
                    memcpy(xb->qs + 4 * m, blk + 32 + 64 * m + 4 * r, 4);
                }
            }
        }
    }
}

// ---- scalar gemv --------------------------------------------------------------------------------------------

void ggml_cpu_repack_gemv_q4_0_scalar(int64_t k, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * GGML_RESTRICT y, int64_t ngroups) {
    const int64_t nb = k / QK8_0;
    const block_q8_0 * yb = y;
    for (int64_t g = 0; g < ngroups; g++) {
        float acc[GGML_CPU_REPACK_ROWS] = { 0 };
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t * blk = (const uint8_t *) x + (size_t) (g * nb + b) * GGML_CPU_REPACK_BLOCK;
            const float dy = GGML_FP16_TO_FP32(yb[b].d);
            for (int r = 0; r < GGML_CPU_REPACK_ROWS; r++) {
                int sumi = 0;
                for (int m = 0; m < 4; m++) {
                    for (int j = 0; j < 4; j++) {
                        const int q = blk[32 + 64 * m + 4 * r + j];
                        sumi += ((q & 0x0f) - 8) * yb[b].qs[4 * m + j];
                        sumi += ((q >> 4) - 8) * yb[b].qs[16 + 4 * m + j];
                    }
                }
                ggml_half h;
                memcpy(&h, blk + 2 * r, 2);
                acc[r] += (float) sumi * (GGML_FP16_TO_FP32(h) * dy);
            }
        }
        memcpy(s + g * GGML_CPU_REPACK_ROWS, acc, sizeof(acc));
    }
}

ggml_cpu_repack_gemv_t ggml_cpu_repack_gemv_q4_0(int isa) {
    const enum ggml_cpu_isa i = isa < 0 ? ggml_cpu_isa_active() : (enum ggml_cpu_isa) isa;
    if (i >= GGML_CPU_ISA_AVX512 && ggml_cpu_isa_supported(GGML_CPU_ISA_AVX512)) {
        return ggml_cpu_repack_gemv_q4_0_avx512;
    }
    if (i >= GGML_CPU_ISA_AVX2 && ggml_cpu_isa_supported(GGML_CPU_ISA_AVX2)) {
        return ggml_cpu_repack_gemv_q4_0_avx2;
    }
    return ggml_cpu_repack_gemv_q4_0_scalar;
}

// ---- buffer -------------------------------------------------------------------------------------------------

static void * repack_buffer_get_base(ggml_backend_buffer_t buffer) {
    return buffer->context;
}

static void repack_buffer_free_buffer(ggml_backend_buffer_t buffer) {
    free(buffer->context);
}

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
    ggml_cpu_repack_q4_0(data, tensor->data, tensor->ne[1], tensor->ne[0]);
}

static void repack_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data,
                                     size_t offset, size_t size) {
    (void) buffer;
    if (!ggml_cpu_repack_supported(tensor)) {
        memcpy(data, (const char *) tensor->data + offset, size);
        return;
    }
    const size_t nbytes = ggml_nbytes(tensor);
    if (offset == 0 && size == nbytes) {
        ggml_cpu_unpack_q4_0(tensor->data, data, tensor->ne[1], tensor->ne[0]);
        return;
    }
    void * tmp = malloc(nbytes);
    if (tmp == NULL) {
        GGML_LOG_ERROR("%s: out of memory reading tensor '%s'\n", __func__, tensor->name);
        return;
    }
    ggml_cpu_unpack_q4_0(tensor->data, tmp, tensor->ne[1], tensor->ne[0]);
    memcpy(data, (const char *) tmp + offset, size);
    free(tmp);
}

static void repack_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    memset(buffer->context, value, buffer->size);
}

static const struct ggml_backend_buffer_i repack_buffer_i = {
    /* .free_buffer   = */ repack_buffer_free_buffer,
    /* .get_base      = */ repack_buffer_get_base,
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
