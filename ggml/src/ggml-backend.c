// ggml-backend: the generic half of buffers, buffer types, backends, devices and events (each call checks
// its arguments and dispatches to the implementation's table, supplying defaults for optional entries),
// plus the graph utilities (graph copy, backend comparison) and the scheduler.
#include "ggml-backend-impl.h"
#include "ggml-impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

//
// buffer type
//

const char * ggml_backend_buft_name(ggml_backend_buffer_type_t buft) {
    if (buft == NULL) {
        return "NULL";
    }
    return buft->iface.get_name(buft);
}

// the shared empty buffer interface: zero-sized allocations own no memory, so every entry may stay NULL
static const struct ggml_backend_buffer_i ggml_backend_empty_buffer_i = { 0 };

ggml_backend_buffer_t ggml_backend_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    if (buft == NULL) {
        GGML_LOG_ERROR("%s: buffer type is NULL\n", __func__);
        return NULL;
    }
    if (size == 0) {
        // implementations need not handle 0 bytes; an empty buffer is still a valid (tensor-less) buffer
        return ggml_backend_buffer_init(buft, ggml_backend_empty_buffer_i, NULL, 0);
    }
    ggml_backend_buffer_t buf = buft->iface.alloc_buffer(buft, size);
    if (buf == NULL) {
        GGML_LOG_ERROR("%s: failed to allocate %s buffer of size %zu\n", __func__, ggml_backend_buft_name(buft), size);
    }
    return buf;
}

size_t ggml_backend_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    return buft->iface.get_alignment(buft);
}

size_t ggml_backend_buft_get_max_size(ggml_backend_buffer_type_t buft) {
    if (buft->iface.get_max_size) {
        return buft->iface.get_max_size(buft);
    }
    return SIZE_MAX;
}

size_t ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    if (buft->iface.get_alloc_size) {
        return buft->iface.get_alloc_size(buft, tensor);
    }
    return ggml_nbytes(tensor);
}

bool ggml_backend_buft_is_host(ggml_backend_buffer_type_t buft) {
    if (buft->iface.is_host) {
        return buft->iface.is_host(buft);
    }
    return false;
}

ggml_backend_dev_t ggml_backend_buft_get_device(ggml_backend_buffer_type_t buft) {
    return buft->device;
}

//
// buffer
//

ggml_backend_buffer_t ggml_backend_buffer_init(ggml_backend_buffer_type_t buft, struct ggml_backend_buffer_i iface,
                                               void * context, size_t size) {
    ggml_backend_buffer_t buffer = calloc(1, sizeof(*buffer));
    if (buffer == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    buffer->iface   = iface;
    buffer->buft    = buft;
    buffer->context = context;
    buffer->size    = size;
    buffer->usage   = GGML_BACKEND_BUFFER_USAGE_ANY;
    return buffer;
}

const char * ggml_backend_buffer_name(ggml_backend_buffer_t buffer) {
    return ggml_backend_buft_name(ggml_backend_buffer_get_type(buffer));
}

void ggml_backend_buffer_free(ggml_backend_buffer_t buffer) {
    if (buffer == NULL) {
        return;
    }
    if (buffer->iface.free_buffer != NULL) {
        buffer->iface.free_buffer(buffer);
    }
    free(buffer);
}

size_t ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer) {
    return buffer->size;
}

void * ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer) {
    // an empty buffer has no memory; callers only compare or offset this address
    if (buffer->size == 0 || buffer->iface.get_base == NULL) {
        return NULL;
    }
    return buffer->iface.get_base(buffer);
}

enum ggml_status ggml_backend_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    if (buffer->iface.init_tensor) {
        return buffer->iface.init_tensor(buffer, tensor);
    }
    return GGML_STATUS_SUCCESS;
}

void ggml_backend_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    if (buffer->size == 0 || buffer->iface.clear == NULL) {
        return;
    }
    buffer->iface.clear(buffer, value);
}

size_t ggml_backend_buffer_get_alignment(ggml_backend_buffer_t buffer) {
    return ggml_backend_buft_get_alignment(ggml_backend_buffer_get_type(buffer));
}

size_t ggml_backend_buffer_get_max_size(ggml_backend_buffer_t buffer) {
    return ggml_backend_buft_get_max_size(ggml_backend_buffer_get_type(buffer));
}

size_t ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor) {
    return ggml_backend_buft_get_alloc_size(ggml_backend_buffer_get_type(buffer), tensor);
}

bool ggml_backend_buffer_is_host(ggml_backend_buffer_t buffer) {
    return ggml_backend_buft_is_host(ggml_backend_buffer_get_type(buffer));
}

void ggml_backend_buffer_set_usage(ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage) {
    buffer->usage = usage;
    if (ggml_backend_buffer_is_multi_buffer(buffer)) {
        ggml_backend_multi_buffer_set_usage(buffer, usage);
    }
}

enum ggml_backend_buffer_usage ggml_backend_buffer_get_usage(ggml_backend_buffer_t buffer) {
    return buffer->usage;
}

ggml_backend_buffer_type_t ggml_backend_buffer_get_type(ggml_backend_buffer_t buffer) {
    return buffer->buft;
}

void ggml_backend_buffer_reset(ggml_backend_buffer_t buffer) {
    if (buffer->iface.reset) {
        buffer->iface.reset(buffer);
    }
}

bool ggml_backend_buffer_copy_tensor(const struct ggml_tensor * src, struct ggml_tensor * dst) {
    ggml_backend_buffer_t dst_buf = dst->view_src ? dst->view_src->buffer : dst->buffer;
    if (dst_buf != NULL && dst_buf->iface.cpy_tensor) {
        return dst_buf->iface.cpy_tensor(dst_buf, src, dst);
    }
    return false;
}

//
// multi-buffer: owns several buffers so that one handle frees them all (a model split over allocations)
//

struct multi_buffer_context {
    ggml_backend_buffer_t * buffers;
    size_t n_buffers;
};

static void multi_buffer_free_buffer(ggml_backend_buffer_t buffer) {
    struct multi_buffer_context * ctx = buffer->context;
    for (size_t i = 0; i < ctx->n_buffers; i++) {
        ggml_backend_buffer_free(ctx->buffers[i]);
    }
    free(ctx->buffers);
    free(ctx);
}

static void multi_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct multi_buffer_context * ctx = buffer->context;
    for (size_t i = 0; i < ctx->n_buffers; i++) {
        ggml_backend_buffer_clear(ctx->buffers[i], value);
    }
}

static void * multi_buffer_get_base(ggml_backend_buffer_t buffer) {
    // there is no single base; the first part's address keeps "base <= tensor data" checks meaningful
    struct multi_buffer_context * ctx = buffer->context;
    return ctx->n_buffers > 0 ? ggml_backend_buffer_get_base(ctx->buffers[0]) : NULL;
}

static const struct ggml_backend_buffer_i multi_buffer_i = {
    /* .free_buffer   = */ multi_buffer_free_buffer,
    /* .get_base      = */ multi_buffer_get_base,
    /* .init_tensor   = */ NULL,
    /* .memset_tensor = */ NULL,
    /* .set_tensor    = */ NULL,
    /* .get_tensor    = */ NULL,
    /* .set_tensor_2d = */ NULL,
    /* .get_tensor_2d = */ NULL,
    /* .cpy_tensor    = */ NULL,
    /* .clear         = */ multi_buffer_clear,
    /* .reset         = */ NULL,
};

ggml_backend_buffer_t ggml_backend_multi_buffer_alloc_buffer(ggml_backend_buffer_t * buffers, size_t n_buffers) {
    if (n_buffers == 0 || buffers == NULL) {
        GGML_LOG_ERROR("%s: no buffers given\n", __func__);
        return NULL;
    }
    struct multi_buffer_context * ctx = calloc(1, sizeof(*ctx));
    ggml_backend_buffer_t * copy = malloc(n_buffers * sizeof(*copy));
    if (ctx == NULL || copy == NULL) {
        free(ctx);
        free(copy);
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    size_t total = 0;
    for (size_t i = 0; i < n_buffers; i++) {
        copy[i] = buffers[i];
        total  += ggml_backend_buffer_get_size(buffers[i]);
    }
    ctx->buffers   = copy;
    ctx->n_buffers = n_buffers;
    ggml_backend_buffer_t buf = ggml_backend_buffer_init(buffers[0]->buft, multi_buffer_i, ctx, total);
    if (buf == NULL) {
        free(copy);
        free(ctx);
    }
    return buf;
}

bool ggml_backend_buffer_is_multi_buffer(ggml_backend_buffer_t buffer) {
    return buffer->iface.free_buffer == multi_buffer_free_buffer;
}

void ggml_backend_multi_buffer_set_usage(ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage) {
    if (!ggml_backend_buffer_is_multi_buffer(buffer)) {
        GGML_LOG_ERROR("%s: not a multi-buffer\n", __func__);
        return;
    }
    struct multi_buffer_context * ctx = buffer->context;
    for (size_t i = 0; i < ctx->n_buffers; i++) {
        ggml_backend_buffer_set_usage(ctx->buffers[i], usage);
    }
}

//
// tensor data access
//

// the buffer that holds a tensor's bytes (a view's bytes live in its source's buffer)
static ggml_backend_buffer_t tensor_storage_buffer(const struct ggml_tensor * tensor) {
    return tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
}

// checks that [offset, offset+size) lies inside the tensor and that the tensor has memory; logs otherwise
static bool tensor_range_ok(const char * func, const struct ggml_tensor * tensor, size_t offset, size_t size) {
    if (tensor == NULL) {
        GGML_LOG_ERROR("%s: tensor is NULL\n", func);
        return false;
    }
    if (tensor_storage_buffer(tensor) == NULL) {
        GGML_LOG_ERROR("%s: tensor '%s' has no buffer\n", func, tensor->name);
        return false;
    }
    if (tensor->data == NULL) {
        GGML_LOG_ERROR("%s: tensor '%s' is not allocated\n", func, tensor->name);
        return false;
    }
    size_t end;
    if (ggml_add_overflow_size(offset, size, &end) || end > ggml_nbytes(tensor)) {
        GGML_LOG_ERROR("%s: range [%zu, +%zu) is out of bounds of tensor '%s' (%zu bytes)\n",
                       func, offset, size, tensor->name, ggml_nbytes(tensor));
        return false;
    }
    return true;
}

void ggml_backend_tensor_set(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    if (size == 0) {
        return;
    }
    if (!tensor_range_ok(__func__, tensor, offset, size)) {
        return;
    }
    ggml_backend_buffer_t buf = tensor_storage_buffer(tensor);
    buf->iface.set_tensor(buf, tensor, data, offset, size);
}

void ggml_backend_tensor_get(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    if (size == 0) {
        return;
    }
    if (!tensor_range_ok(__func__, tensor, offset, size)) {
        return;
    }
    ggml_backend_buffer_t buf = tensor_storage_buffer(tensor);
    buf->iface.get_tensor(buf, tensor, data, offset, size);
}

// the last byte a 2d transfer touches must lie inside the tensor
static bool tensor_range_2d_ok(const char * func, const struct ggml_tensor * tensor, size_t offset, size_t size,
                               size_t n_copies, size_t stride_tensor) {
    size_t span;
    if (ggml_mul_overflow_size(n_copies - 1, stride_tensor, &span) || ggml_add_overflow_size(span, size, &span)) {
        GGML_LOG_ERROR("%s: 2d range overflows\n", func);
        return false;
    }
    return tensor_range_ok(func, tensor, offset, span);
}

void ggml_backend_tensor_set_2d(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size,
                                size_t n_copies, size_t stride_tensor, size_t stride_data) {
    if (size == 0 || n_copies == 0) {
        return;
    }
    if (!tensor_range_2d_ok(__func__, tensor, offset, size, n_copies, stride_tensor)) {
        return;
    }
    ggml_backend_buffer_t buf = tensor_storage_buffer(tensor);
    if (buf->iface.set_tensor_2d) {
        buf->iface.set_tensor_2d(buf, tensor, data, offset, size, n_copies, stride_tensor, stride_data);
        return;
    }
    for (size_t i = 0; i < n_copies; i++) {
        buf->iface.set_tensor(buf, tensor, (const char *) data + i*stride_data, offset + i*stride_tensor, size);
    }
}

void ggml_backend_tensor_get_2d(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size,
                                size_t n_copies, size_t stride_tensor, size_t stride_data) {
    if (size == 0 || n_copies == 0) {
        return;
    }
    if (!tensor_range_2d_ok(__func__, tensor, offset, size, n_copies, stride_tensor)) {
        return;
    }
    ggml_backend_buffer_t buf = tensor_storage_buffer(tensor);
    if (buf->iface.get_tensor_2d) {
        buf->iface.get_tensor_2d(buf, tensor, data, offset, size, n_copies, stride_tensor, stride_data);
        return;
    }
    for (size_t i = 0; i < n_copies; i++) {
        buf->iface.get_tensor(buf, tensor, (char *) data + i*stride_data, offset + i*stride_tensor, size);
    }
}

void ggml_backend_tensor_memset(struct ggml_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    if (size == 0) {
        return;
    }
    if (!tensor_range_ok(__func__, tensor, offset, size)) {
        return;
    }
    ggml_backend_buffer_t buf = tensor_storage_buffer(tensor);
    if (buf->iface.memset_tensor == NULL) {
        GGML_LOG_ERROR("%s: buffer type %s does not support memset\n", __func__, ggml_backend_buffer_name(buf));
        return;
    }
    buf->iface.memset_tensor(buf, tensor, value, offset, size);
}

static bool tensors_same_layout(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->type != b->type) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (a->ne[i] != b->ne[i]) {
            return false;
        }
        // strides of dimensions with one element never address anything
        if (a->ne[i] > 1 && a->nb[i] != b->nb[i]) {
            return false;
        }
    }
    return true;
}

void ggml_backend_tensor_copy(const struct ggml_tensor * src, struct ggml_tensor * dst) {
    if (src == dst) {
        return;
    }
    if (!tensors_same_layout(src, dst)) {
        GGML_LOG_ERROR("%s: cannot copy '%s' to '%s': different type, shape or strides\n", __func__, src->name, dst->name);
        return;
    }
    const size_t nbytes = ggml_nbytes(src);
    if (nbytes == 0) {
        return;
    }
    if (!tensor_range_ok(__func__, src, 0, nbytes) || !tensor_range_ok(__func__, dst, 0, nbytes)) {
        return;
    }
    if (ggml_backend_buffer_is_host(tensor_storage_buffer(src))) {
        ggml_backend_tensor_set(dst, src->data, 0, nbytes);
    } else if (ggml_backend_buffer_is_host(tensor_storage_buffer(dst))) {
        ggml_backend_tensor_get(src, dst->data, 0, nbytes);
    } else if (!ggml_backend_buffer_copy_tensor(src, dst)) {
        // neither side is host memory and the destination cannot pull directly: stage through host memory
        void * tmp = malloc(nbytes);
        if (tmp == NULL) {
            GGML_LOG_ERROR("%s: out of memory staging %zu bytes\n", __func__, nbytes);
            return;
        }
        ggml_backend_tensor_get(src, tmp, 0, nbytes);
        ggml_backend_tensor_set(dst, tmp, 0, nbytes);
        free(tmp);
    }
}

//
// tensor placement
//

enum ggml_status ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, void * addr) {
    if (buffer == NULL || tensor == NULL) {
        GGML_LOG_ERROR("%s: buffer or tensor is NULL\n", __func__);
        return GGML_STATUS_FAILED;
    }
    if (tensor->buffer != NULL || tensor->data != NULL) {
        GGML_LOG_ERROR("%s: tensor '%s' is already allocated\n", __func__, tensor->name);
        return GGML_STATUS_FAILED;
    }
    if (tensor->view_src != NULL) {
        GGML_LOG_ERROR("%s: tensor '%s' is a view (use ggml_backend_view_init)\n", __func__, tensor->name);
        return GGML_STATUS_FAILED;
    }
    const uintptr_t base = (uintptr_t) ggml_backend_buffer_get_base(buffer);
    const uintptr_t a    = (uintptr_t) addr;
    const size_t    need = ggml_backend_buffer_get_alloc_size(buffer, tensor);
    if (a < base || a - base > buffer->size || need > buffer->size - (size_t)(a - base)) {
        GGML_LOG_ERROR("%s: tensor '%s' (%zu bytes at offset %zu) does not fit in buffer %s of %zu bytes\n",
                       __func__, tensor->name, need, (size_t)(a - base), ggml_backend_buffer_name(buffer), buffer->size);
        return GGML_STATUS_FAILED;
    }
    tensor->buffer = buffer;
    tensor->data   = addr;
    return ggml_backend_buffer_init_tensor(buffer, tensor);
}

enum ggml_status ggml_backend_view_init(struct ggml_tensor * tensor) {
    if (tensor == NULL || tensor->view_src == NULL) {
        GGML_LOG_ERROR("%s: not a view\n", __func__);
        return GGML_STATUS_FAILED;
    }
    const struct ggml_tensor * src = tensor->view_src;
    if (src->buffer == NULL || src->data == NULL) {
        GGML_LOG_ERROR("%s: source '%s' of view '%s' is not allocated\n", __func__, src->name, tensor->name);
        return GGML_STATUS_FAILED;
    }
    tensor->buffer = src->buffer;
    tensor->data   = (char *) src->data + tensor->view_offs;
    return ggml_backend_buffer_init_tensor(tensor->buffer, tensor);
}

//
// backend (stream)
//

ggml_guid_t ggml_backend_guid(ggml_backend_t backend) {
    if (backend == NULL) {
        return NULL;
    }
    return backend->guid;
}

const char * ggml_backend_name(ggml_backend_t backend) {
    if (backend == NULL) {
        return "NULL";
    }
    return backend->iface.get_name(backend);
}

void ggml_backend_free(ggml_backend_t backend) {
    if (backend == NULL) {
        return;
    }
    backend->iface.free(backend);
}

ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend) {
    return ggml_backend_dev_buffer_type(backend->device);
}

ggml_backend_buffer_t ggml_backend_alloc_buffer(ggml_backend_t backend, size_t size) {
    return ggml_backend_buft_alloc_buffer(ggml_backend_get_default_buffer_type(backend), size);
}

size_t ggml_backend_get_alignment(ggml_backend_t backend) {
    return ggml_backend_buft_get_alignment(ggml_backend_get_default_buffer_type(backend));
}

size_t ggml_backend_get_max_size(ggml_backend_t backend) {
    return ggml_backend_buft_get_max_size(ggml_backend_get_default_buffer_type(backend));
}

void ggml_backend_tensor_set_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data,
                                   size_t offset, size_t size) {
    if (backend->iface.set_tensor_async == NULL) {
        ggml_backend_tensor_set(tensor, data, offset, size);
        return;
    }
    if (size == 0 || !tensor_range_ok(__func__, tensor, offset, size)) {
        return;
    }
    backend->iface.set_tensor_async(backend, tensor, data, offset, size);
}

void ggml_backend_tensor_get_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data,
                                   size_t offset, size_t size) {
    if (backend->iface.get_tensor_async == NULL) {
        ggml_backend_tensor_get(tensor, data, offset, size);
        return;
    }
    if (size == 0 || !tensor_range_ok(__func__, tensor, offset, size)) {
        return;
    }
    backend->iface.get_tensor_async(backend, tensor, data, offset, size);
}

void ggml_backend_tensor_set_2d_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data,
                                      size_t offset, size_t size, size_t n_copies, size_t stride_tensor,
                                      size_t stride_data) {
    if (backend->iface.set_tensor_async == NULL) {
        ggml_backend_tensor_set_2d(tensor, data, offset, size, n_copies, stride_tensor, stride_data);
        return;
    }
    if (size == 0 || n_copies == 0 || !tensor_range_2d_ok(__func__, tensor, offset, size, n_copies, stride_tensor)) {
        return;
    }
    for (size_t i = 0; i < n_copies; i++) {
        backend->iface.set_tensor_async(backend, tensor, (const char *) data + i*stride_data, offset + i*stride_tensor, size);
    }
}

void ggml_backend_tensor_get_2d_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data,
                                      size_t offset, size_t size, size_t n_copies, size_t stride_tensor,
                                      size_t stride_data) {
    if (backend->iface.get_tensor_async == NULL) {
        ggml_backend_tensor_get_2d(tensor, data, offset, size, n_copies, stride_tensor, stride_data);
        return;
    }
    if (size == 0 || n_copies == 0 || !tensor_range_2d_ok(__func__, tensor, offset, size, n_copies, stride_tensor)) {
        return;
    }
    for (size_t i = 0; i < n_copies; i++) {
        backend->iface.get_tensor_async(backend, tensor, (char *) data + i*stride_data, offset + i*stride_tensor, size);
    }
}

void ggml_backend_synchronize(ggml_backend_t backend) {
    if (backend->iface.synchronize == NULL) {
        return;
    }
    backend->iface.synchronize(backend);
}

ggml_backend_graph_plan_t ggml_backend_graph_plan_create(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    if (backend->iface.graph_plan_create == NULL) {
        GGML_LOG_ERROR("%s: backend %s has no graph plans\n", __func__, ggml_backend_name(backend));
        return NULL;
    }
    return backend->iface.graph_plan_create(backend, cgraph);
}

void ggml_backend_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    if (plan == NULL || backend->iface.graph_plan_free == NULL) {
        return;
    }
    backend->iface.graph_plan_free(backend, plan);
}

enum ggml_status ggml_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    if (plan == NULL || backend->iface.graph_plan_compute == NULL) {
        GGML_LOG_ERROR("%s: no plan or backend %s has no graph plans\n", __func__, ggml_backend_name(backend));
        return GGML_STATUS_FAILED;
    }
    return backend->iface.graph_plan_compute(backend, plan);
}

enum ggml_status ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    enum ggml_status err = ggml_backend_graph_compute_async(backend, cgraph);
    ggml_backend_synchronize(backend);
    return err;
}

enum ggml_status ggml_backend_graph_compute_async(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    if (backend == NULL || cgraph == NULL) {
        GGML_LOG_ERROR("%s: backend or graph is NULL\n", __func__);
        return GGML_STATUS_FAILED;
    }
    return backend->iface.graph_compute(backend, cgraph);
}

bool ggml_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    return ggml_backend_dev_supports_op(backend->device, op);
}

bool ggml_backend_supports_buft(ggml_backend_t backend, ggml_backend_buffer_type_t buft) {
    return ggml_backend_dev_supports_buft(backend->device, buft);
}

bool ggml_backend_offload_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    return ggml_backend_dev_offload_op(backend->device, op);
}

ggml_backend_dev_t ggml_backend_get_device(ggml_backend_t backend) {
    return backend->device;
}

void ggml_backend_tensor_copy_async(ggml_backend_t backend_src, ggml_backend_t backend_dst,
                                    const struct ggml_tensor * src, struct ggml_tensor * dst) {
    if (src == dst) {
        return;
    }
    if (backend_dst->iface.cpy_tensor_async != NULL &&
        backend_dst->iface.cpy_tensor_async(backend_src, backend_dst, src, dst)) {
        return;
    }
    // no direct path: wait for both streams so the synchronous copy sees finished data and cannot race
    ggml_backend_synchronize(backend_src);
    ggml_backend_synchronize(backend_dst);
    ggml_backend_tensor_copy(src, dst);
}

//
// events
//

ggml_backend_event_t ggml_backend_event_new(ggml_backend_dev_t device) {
    if (device == NULL || device->iface.event_new == NULL) {
        return NULL;
    }
    return device->iface.event_new(device);
}

void ggml_backend_event_free(ggml_backend_event_t event) {
    if (event == NULL) {
        return;
    }
    event->device->iface.event_free(event->device, event);
}

void ggml_backend_event_record(ggml_backend_event_t event, ggml_backend_t backend) {
    if (event == NULL || backend->iface.event_record == NULL) {
        return;
    }
    backend->iface.event_record(backend, event);
}

void ggml_backend_event_synchronize(ggml_backend_event_t event) {
    if (event == NULL || event->device->iface.event_synchronize == NULL) {
        return;
    }
    event->device->iface.event_synchronize(event->device, event);
}

void ggml_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event) {
    if (event == NULL || backend->iface.event_wait == NULL) {
        return;
    }
    backend->iface.event_wait(backend, event);
}

//
// device
//

const char * ggml_backend_dev_name(ggml_backend_dev_t device) {
    return device->iface.get_name(device);
}

const char * ggml_backend_dev_description(ggml_backend_dev_t device) {
    return device->iface.get_description(device);
}

void ggml_backend_dev_memory(ggml_backend_dev_t device, size_t * free_mem, size_t * total) {
    device->iface.get_memory(device, free_mem, total);
}

enum ggml_backend_dev_type ggml_backend_dev_type(ggml_backend_dev_t device) {
    return device->iface.get_type(device);
}

void ggml_backend_dev_get_props(ggml_backend_dev_t device, struct ggml_backend_dev_props * props) {
    memset(props, 0, sizeof(*props));
    device->iface.get_props(device, props);
}

ggml_backend_reg_t ggml_backend_dev_backend_reg(ggml_backend_dev_t device) {
    return device->reg;
}

ggml_backend_t ggml_backend_dev_init(ggml_backend_dev_t device, const char * params) {
    if (device == NULL) {
        GGML_LOG_ERROR("%s: device is NULL\n", __func__);
        return NULL;
    }
    return device->iface.init_backend(device, params);
}

ggml_backend_buffer_type_t ggml_backend_dev_buffer_type(ggml_backend_dev_t device) {
    return device->iface.get_buffer_type(device);
}

ggml_backend_buffer_type_t ggml_backend_dev_host_buffer_type(ggml_backend_dev_t device) {
    if (device->iface.get_host_buffer_type == NULL) {
        return NULL;
    }
    return device->iface.get_host_buffer_type(device);
}

ggml_backend_buffer_t ggml_backend_dev_buffer_from_host_ptr(ggml_backend_dev_t device, void * ptr, size_t size,
                                                            size_t max_tensor_size) {
    if (device->iface.buffer_from_host_ptr == NULL) {
        GGML_LOG_ERROR("%s: device %s cannot wrap host memory\n", __func__, ggml_backend_dev_name(device));
        return NULL;
    }
    return device->iface.buffer_from_host_ptr(device, ptr, size, max_tensor_size);
}

bool ggml_backend_dev_supports_op(ggml_backend_dev_t device, const struct ggml_tensor * op) {
    return device->iface.supports_op(device, op);
}

bool ggml_backend_dev_supports_buft(ggml_backend_dev_t device, ggml_backend_buffer_type_t buft) {
    return device->iface.supports_buft(device, buft);
}

bool ggml_backend_dev_offload_op(ggml_backend_dev_t device, const struct ggml_tensor * op) {
    if (device->iface.offload_op != NULL) {
        return device->iface.offload_op(device, op);
    }
    return false;
}

//
// reg
//

const char * ggml_backend_reg_name(ggml_backend_reg_t reg) {
    return reg->iface.get_name(reg);
}

size_t ggml_backend_reg_dev_count(ggml_backend_reg_t reg) {
    return reg->iface.get_device_count(reg);
}

ggml_backend_dev_t ggml_backend_reg_dev_get(ggml_backend_reg_t reg, size_t index) {
    if (index >= ggml_backend_reg_dev_count(reg)) {
        GGML_LOG_ERROR("%s: device index %zu out of range for %s\n", __func__, index, ggml_backend_reg_name(reg));
        return NULL;
    }
    return reg->iface.get_device(reg, index);
}

void * ggml_backend_reg_get_proc_address(ggml_backend_reg_t reg, const char * name) {
    if (reg->iface.get_proc_address == NULL) {
        return NULL;
    }
    return reg->iface.get_proc_address(reg, name);
}
