// The CPU backend object: its buffer type (64-byte aligned host memory), buffers over existing host memory
// (mmap'd weights), the backend stream (graph compute through ggml_graph_plan + ggml_graph_compute), the
// CPU device and the CPU registration.
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "ggml-cpu-kernels.h"
#include "ggml-impl.h"
#include "repack.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <unistd.h>

// cache-line alignment: SIMD loads of any width never straddle lines at the start of a tensor
#define CPU_TENSOR_ALIGNMENT 64

//
// buffers
//

static void * cpu_buffer_get_base(ggml_backend_buffer_t buffer) {
    return buffer->context;
}

static void cpu_buffer_free_buffer(ggml_backend_buffer_t buffer) {
    free(buffer->context);
}

static void cpu_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, uint8_t value,
                                     size_t offset, size_t size) {
    (void) buffer;
    memset((char *) tensor->data + offset, value, size);
}

static void cpu_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data,
                                  size_t offset, size_t size) {
    (void) buffer;
    memcpy((char *) tensor->data + offset, data, size);
}

static void cpu_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data,
                                  size_t offset, size_t size) {
    (void) buffer;
    memcpy(data, (const char *) tensor->data + offset, size);
}

static bool cpu_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src,
                                  struct ggml_tensor * dst) {
    (void) buffer;
    const struct ggml_tensor * s = src->view_src ? src->view_src : src;
    if (s->buffer != NULL && ggml_backend_buffer_is_host(s->buffer)) {
        memcpy(dst->data, src->data, ggml_nbytes(src));
        return true;
    }
    return false;
}

static void cpu_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    memset(buffer->context, value, buffer->size);
}

static const struct ggml_backend_buffer_i cpu_buffer_i = {
    /* .free_buffer   = */ cpu_buffer_free_buffer,
    /* .get_base      = */ cpu_buffer_get_base,
    /* .init_tensor   = */ NULL,
    /* .memset_tensor = */ cpu_buffer_memset_tensor,
    /* .set_tensor    = */ cpu_buffer_set_tensor,
    /* .get_tensor    = */ cpu_buffer_get_tensor,
    /* .set_tensor_2d = */ NULL,
    /* .get_tensor_2d = */ NULL,
    /* .cpy_tensor    = */ cpu_buffer_cpy_tensor,
    /* .clear         = */ cpu_buffer_clear,
    /* .reset         = */ NULL,
};

// the memory belongs to the caller (e.g. an mmap'd model file): nothing to free
static const struct ggml_backend_buffer_i cpu_buffer_from_ptr_i = {
    /* .free_buffer   = */ NULL,
    /* .get_base      = */ cpu_buffer_get_base,
    /* .init_tensor   = */ NULL,
    /* .memset_tensor = */ cpu_buffer_memset_tensor,
    /* .set_tensor    = */ cpu_buffer_set_tensor,
    /* .get_tensor    = */ cpu_buffer_get_tensor,
    /* .set_tensor_2d = */ NULL,
    /* .get_tensor_2d = */ NULL,
    /* .cpy_tensor    = */ cpu_buffer_cpy_tensor,
    /* .clear         = */ cpu_buffer_clear,
    /* .reset         = */ NULL,
};

//
// buffer type
//

static const char * cpu_buft_get_name(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "CPU";
}

// Buffers of weights are streamed once per token: on 4 KiB pages the hardware prefetchers stop at every page
// boundary and the TLB misses every few cache lines, which costs a third of a core's streaming rate on the
// machines measured (20 -> 28 GB/s, one thread). So a buffer of at least one huge page is aligned to it and the
// kernel is asked for transparent huge pages (on systems with THP in "madvise" mode this is what turns it on).
#define CPU_HUGE_PAGE ((size_t) 2 << 20)

static void * cpu_alloc_large(size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= CPU_HUGE_PAGE) {
        const size_t rounded = (size + CPU_HUGE_PAGE - 1) / CPU_HUGE_PAGE * CPU_HUGE_PAGE;
        if (rounded >= size) {
            void * data = aligned_alloc(CPU_HUGE_PAGE, rounded);
            if (data != NULL) {
                // advice only: failure (THP off, old kernel) leaves ordinary pages
                (void) madvise(data, rounded, MADV_HUGEPAGE);
                return data;
            }
        }
    }
#endif
    return aligned_alloc(CPU_TENSOR_ALIGNMENT, size);
}

ggml_backend_buffer_t ggml_cpu_alloc_aligned_buffer(ggml_backend_buffer_type_t buft, struct ggml_backend_buffer_i iface,
                                                    size_t size) {
    size_t padded;
    if (ggml_add_overflow_size(size, CPU_TENSOR_ALIGNMENT - 1, &padded)) {
        GGML_LOG_ERROR("%s: size %zu overflows\n", __func__, size);
        return NULL;
    }
    padded -= padded % CPU_TENSOR_ALIGNMENT;
    if (padded == 0) {
        padded = CPU_TENSOR_ALIGNMENT; // aligned_alloc(.., 0) may return NULL
    }
    void * data = cpu_alloc_large(padded);
    if (data == NULL) {
        GGML_LOG_ERROR("%s: failed to allocate buffer of size %.2f MiB\n", __func__, size / 1024.0 / 1024.0);
        return NULL;
    }
    // this function owns how the memory was allocated, so it also supplies how to free and address it
    iface.free_buffer = cpu_buffer_free_buffer;
    iface.get_base    = cpu_buffer_get_base;
    ggml_backend_buffer_t buf = ggml_backend_buffer_init(buft, iface, data, size);
    if (buf == NULL) {
        free(data);
    }
    return buf;
}

static ggml_backend_buffer_t cpu_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    return ggml_cpu_alloc_aligned_buffer(buft, cpu_buffer_i, size);
}

static size_t cpu_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return CPU_TENSOR_ALIGNMENT;
}

static bool cpu_buft_is_host(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return true;
}

static struct ggml_backend_device g_cpu_device;

static struct ggml_backend_buffer_type g_cpu_buft = {
    /* .iface   = */ {
        /* .get_name       = */ cpu_buft_get_name,
        /* .alloc_buffer   = */ cpu_buft_alloc_buffer,
        /* .get_alignment  = */ cpu_buft_get_alignment,
        /* .get_max_size   = */ NULL,
        /* .get_alloc_size = */ NULL,
        /* .is_host        = */ cpu_buft_is_host,
    },
    /* .device  = */ &g_cpu_device,
    /* .context = */ NULL,
};

ggml_backend_buffer_type_t ggml_backend_cpu_buffer_type(void) {
    return &g_cpu_buft;
}

ggml_backend_buffer_t ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size) {
    if (ptr == NULL) {
        GGML_LOG_ERROR("%s: pointer is NULL\n", __func__);
        return NULL;
    }
    return ggml_backend_buffer_init(&g_cpu_buft, cpu_buffer_from_ptr_i, ptr, size);
}

//
// backend (stream)
//

struct cpu_backend_context {
    int                      n_threads;
    struct ggml_threadpool * threadpool; // set by the user (not owned), or NULL
    // used when the user set none: kept across graphs so that no threads are created per graph (a decode
    // step computes one graph per ubatch, and thread start-up costs more than a small graph)
    struct ggml_threadpool * own_pool;

    uint8_t * work_data;
    size_t    work_size;

    ggml_abort_callback abort_callback;
    void *              abort_callback_data;
};

static const char * cpu_backend_get_name(ggml_backend_t backend) {
    (void) backend;
    return "CPU";
}

static void cpu_backend_free(ggml_backend_t backend) {
    struct cpu_backend_context * ctx = backend->context;
    if (ctx->own_pool != NULL) {
        ggml_threadpool_free(ctx->own_pool);
    }
    free(ctx->work_data);
    free(ctx);
    free(backend);
}

struct cpu_graph_plan {
    struct ggml_cplan  cplan;
    struct ggml_cgraph cgraph; // a shallow copy: the caller's graph must outlive the plan
};

static ggml_backend_graph_plan_t cpu_backend_graph_plan_create(ggml_backend_t backend,
                                                               const struct ggml_cgraph * cgraph) {
    struct cpu_backend_context * ctx = backend->context;
    struct cpu_graph_plan * plan = calloc(1, sizeof(*plan));
    if (plan == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    plan->cplan  = ggml_graph_plan(cgraph, ctx->n_threads, ctx->threadpool);
    plan->cgraph = *cgraph;
    if (plan->cplan.work_size > 0) {
        plan->cplan.work_data = malloc(plan->cplan.work_size);
        if (plan->cplan.work_data == NULL) {
            GGML_LOG_ERROR("%s: failed to allocate %zu bytes of work data\n", __func__, plan->cplan.work_size);
            free(plan);
            return NULL;
        }
    }
    plan->cplan.abort_callback      = ctx->abort_callback;
    plan->cplan.abort_callback_data = ctx->abort_callback_data;
    return plan;
}

static void cpu_backend_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    (void) backend;
    struct cpu_graph_plan * p = plan;
    free(p->cplan.work_data);
    free(p);
}

static enum ggml_status cpu_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    (void) backend;
    struct cpu_graph_plan * p = plan;
    return ggml_graph_compute(&p->cgraph, &p->cplan);
}

// the pool for graph_compute: the user's, else the backend's own, (re)made when more threads are wanted.
// NULL (a one-shot pool per graph) only for one thread or when the pool cannot be made.
static struct ggml_threadpool * cpu_backend_pool(struct cpu_backend_context * ctx) {
    if (ctx->threadpool != NULL) {
        if (ctx->own_pool != NULL) {
            ggml_threadpool_pause(ctx->own_pool);
        }
        return ctx->threadpool;
    }
    if (ctx->n_threads <= 1) {
        return NULL;
    }
    if (ctx->own_pool != NULL && ggml_threadpool_get_n_threads(ctx->own_pool) < ctx->n_threads) {
        ggml_threadpool_free(ctx->own_pool);
        ctx->own_pool = NULL;
    }
    if (ctx->own_pool == NULL) {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(ctx->n_threads);
        ctx->own_pool = ggml_threadpool_new(&p);
    }
    return ctx->own_pool;
}

static enum ggml_status cpu_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct cpu_backend_context * ctx = backend->context;
    struct ggml_cplan cplan = ggml_graph_plan(cgraph, ctx->n_threads, cpu_backend_pool(ctx));
    if (cplan.work_size > ctx->work_size) {
        uint8_t * grown = malloc(cplan.work_size);
        if (grown == NULL) {
            GGML_LOG_ERROR("%s: failed to allocate %zu bytes of work data\n", __func__, cplan.work_size);
            return GGML_STATUS_ALLOC_FAILED;
        }
        free(ctx->work_data);
        ctx->work_data = grown;
        ctx->work_size = cplan.work_size;
    }
    cplan.work_data           = ctx->work_data;
    cplan.abort_callback      = ctx->abort_callback;
    cplan.abort_callback_data = ctx->abort_callback_data;
    return ggml_graph_compute(cgraph, &cplan);
}

static const struct ggml_backend_i cpu_backend_i = {
    /* .get_name           = */ cpu_backend_get_name,
    /* .free               = */ cpu_backend_free,
    /* .set_tensor_async   = */ NULL,
    /* .get_tensor_async   = */ NULL,
    /* .cpy_tensor_async   = */ NULL,
    /* .synchronize        = */ NULL,
    /* .graph_plan_create  = */ cpu_backend_graph_plan_create,
    /* .graph_plan_free    = */ cpu_backend_graph_plan_free,
    /* .graph_plan_update  = */ NULL,
    /* .graph_plan_compute = */ cpu_backend_graph_plan_compute,
    /* .graph_compute      = */ cpu_backend_graph_compute,
    /* .event_record       = */ NULL,
    /* .event_wait         = */ NULL,
    /* .graph_optimize     = */ NULL,
};

static ggml_guid_t cpu_backend_guid(void) {
    static ggml_guid guid = { 0xaa, 0x67, 0xc7, 0x43, 0x96, 0xe6, 0xa3, 0x8a, 0xe3, 0xaf, 0xea, 0x92, 0x36, 0xbc, 0xfc, 0x89 };
    return &guid;
}

ggml_backend_t ggml_backend_cpu_init(void) {
    struct cpu_backend_context * ctx = calloc(1, sizeof(*ctx));
    ggml_backend_t backend = calloc(1, sizeof(*backend));
    if (ctx == NULL || backend == NULL) {
        free(ctx);
        free(backend);
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    ctx->n_threads = GGML_DEFAULT_N_THREADS;
    backend->guid    = cpu_backend_guid();
    backend->iface   = cpu_backend_i;
    backend->device  = &g_cpu_device;
    backend->context = ctx;
    return backend;
}

bool ggml_backend_is_cpu(ggml_backend_t backend) {
    return backend != NULL && ggml_guid_matches(backend->guid, cpu_backend_guid());
}

void ggml_backend_cpu_set_n_threads(ggml_backend_t backend_cpu, int n_threads) {
    if (!ggml_backend_is_cpu(backend_cpu)) {
        GGML_LOG_ERROR("%s: not a CPU backend\n", __func__);
        return;
    }
    if (n_threads < 1 || n_threads > GGML_MAX_N_THREADS) {
        GGML_LOG_ERROR("%s: invalid number of threads %d (1..%d)\n", __func__, n_threads, GGML_MAX_N_THREADS);
        return;
    }
    struct cpu_backend_context * ctx = backend_cpu->context;
    ctx->n_threads = n_threads;
}

void ggml_backend_cpu_set_threadpool(ggml_backend_t backend_cpu, ggml_threadpool_t threadpool) {
    if (!ggml_backend_is_cpu(backend_cpu)) {
        GGML_LOG_ERROR("%s: not a CPU backend\n", __func__);
        return;
    }
    struct cpu_backend_context * ctx = backend_cpu->context;
    if (ctx->threadpool != NULL && ctx->threadpool != threadpool) {
        // the old pool may be reused by its owner later: let it sleep instead of spinning
        ggml_threadpool_pause(ctx->threadpool);
    }
    ctx->threadpool = threadpool;
}

void ggml_backend_cpu_set_abort_callback(ggml_backend_t backend_cpu, ggml_abort_callback abort_callback,
                                         void * abort_callback_data) {
    if (!ggml_backend_is_cpu(backend_cpu)) {
        GGML_LOG_ERROR("%s: not a CPU backend\n", __func__);
        return;
    }
    struct cpu_backend_context * ctx = backend_cpu->context;
    ctx->abort_callback      = abort_callback;
    ctx->abort_callback_data = abort_callback_data;
}

//
// device
//

static const char * cpu_device_get_name(ggml_backend_dev_t dev) {
    (void) dev;
    return "CPU";
}

// "model name" of /proc/cpuinfo, read once
static char g_cpu_description[256];
static pthread_once_t g_cpu_description_once = PTHREAD_ONCE_INIT;

static void cpu_read_description(void) {
    snprintf(g_cpu_description, sizeof(g_cpu_description), "CPU");
    FILE * f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return;
    }
    char line[512];
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "model name", 10) != 0) {
            continue;
        }
        const char * p = strchr(line, ':');
        if (p != NULL) {
            p++;
            while (*p == ' ' || *p == '\t') {
                p++;
            }
            snprintf(g_cpu_description, sizeof(g_cpu_description), "%s", p);
            g_cpu_description[strcspn(g_cpu_description, "\n")] = '\0';
        }
        break;
    }
    fclose(f);
}

static const char * cpu_device_get_description(ggml_backend_dev_t dev) {
    (void) dev;
    pthread_once(&g_cpu_description_once, cpu_read_description);
    return g_cpu_description;
}

static void cpu_device_get_memory(ggml_backend_dev_t dev, size_t * free_mem, size_t * total) {
    (void) dev;
    const long page  = sysconf(_SC_PAGESIZE);
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long avail = sysconf(_SC_AVPHYS_PAGES);
    *total    = (page > 0 && pages > 0) ? (size_t) pages * (size_t) page : 0;
    *free_mem = (page > 0 && avail > 0) ? (size_t) avail * (size_t) page : *total;
}

static enum ggml_backend_dev_type cpu_device_get_type(ggml_backend_dev_t dev) {
    (void) dev;
    return GGML_BACKEND_DEVICE_TYPE_CPU;
}

static void cpu_device_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props) {
    props->name        = cpu_device_get_name(dev);
    props->description = cpu_device_get_description(dev);
    props->type        = cpu_device_get_type(dev);
    props->device_id   = NULL;
    cpu_device_get_memory(dev, &props->memory_free, &props->memory_total);
    props->caps.async                = false;
    props->caps.host_buffer          = false;
    props->caps.buffer_from_host_ptr = true;
    props->caps.events               = false;
}

// params: NULL, or "n_threads=N"
static ggml_backend_t cpu_device_init_backend(ggml_backend_dev_t dev, const char * params) {
    (void) dev;
    ggml_backend_t backend = ggml_backend_cpu_init();
    if (backend != NULL && params != NULL) {
        int n = 0;
        if (sscanf(params, "n_threads=%d", &n) == 1) {
            ggml_backend_cpu_set_n_threads(backend, n);
        }
    }
    return backend;
}

static ggml_backend_buffer_type_t cpu_device_get_buffer_type(ggml_backend_dev_t dev) {
    (void) dev;
    return ggml_backend_cpu_buffer_type();
}

static ggml_backend_buffer_t cpu_device_buffer_from_host_ptr(ggml_backend_dev_t dev, void * ptr, size_t size,
                                                             size_t max_tensor_size) {
    (void) dev;
    (void) max_tensor_size;
    return ggml_backend_cpu_buffer_from_ptr(ptr, size);
}

static bool cpu_device_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    (void) dev;
    // the CPU reads every source directly, so each must be in host memory (or not allocated yet); the one
    // exception is a repacked weight as the src0 of a MUL_MAT (ops-matmul.c reads the interleaved layout)
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * src = op->src[i];
        if (src == NULL) {
            continue;
        }
        const struct ggml_tensor * s = src->view_src ? src->view_src : src;
        if (s->buffer == NULL || ggml_backend_buffer_is_host(s->buffer)) {
            continue;
        }
        const bool repacked_src0 = i == 0 && op->op == GGML_OP_MUL_MAT && s == src &&
                                   ggml_backend_buffer_get_type(s->buffer) == ggml_backend_cpu_repack_buffer_type() &&
                                   ggml_cpu_repack_supported(src) && op->src[1]->type == GGML_TYPE_F32 &&
                                   op->type == GGML_TYPE_F32;
        if (!repacked_src0) {
            return false;
        }
    }
    return ggml_cpu_supports_op(op);
}

static bool cpu_device_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    (void) dev;
    return ggml_backend_buft_is_host(buft) || buft == ggml_backend_cpu_repack_buffer_type();
}



static struct ggml_backend_reg g_cpu_reg;

static struct ggml_backend_device g_cpu_device = {
    /* .iface   = */ {
        /* .get_name             = */ cpu_device_get_name,
        /* .get_description      = */ cpu_device_get_description,
        /* .get_memory           = */ cpu_device_get_memory,
        /* .get_type             = */ cpu_device_get_type,
        /* .get_props            = */ cpu_device_get_props,
        /* .init_backend         = */ cpu_device_init_backend,
        /* .get_buffer_type      = */ cpu_device_get_buffer_type,
        /* .get_host_buffer_type = */ NULL,
        /* .buffer_from_host_ptr = */ cpu_device_buffer_from_host_ptr,
        /* .supports_op          = */ cpu_device_supports_op,
        /* .supports_buft        = */ cpu_device_supports_buft,
        /* .offload_op           = */ NULL,
        /* .event_new            = */ NULL,
        /* .event_free           = */ NULL,
        /* .event_synchronize    = */ NULL,
    },
    /* .reg     = */ &g_cpu_reg,
    /* .context = */ NULL,
};

//
// reg
//

static const char * cpu_reg_get_name(ggml_backend_reg_t reg) {
    (void) reg;
    return "CPU";
}

static size_t cpu_reg_get_device_count(ggml_backend_reg_t reg) {
    (void) reg;
    return 1;
}

static ggml_backend_dev_t cpu_reg_get_device(ggml_backend_reg_t reg, size_t index) {
    (void) reg;
    return index == 0 ? &g_cpu_device : NULL;
}

// CPU_REPACK unless the environment says GGML_CPU_REPACK=0 (read once)
static ggml_backend_buffer_type_t g_cpu_extra_bufts[2];
static pthread_once_t g_cpu_extra_bufts_once = PTHREAD_ONCE_INIT;

static void cpu_init_extra_bufts(void) {
    const char * env = getenv("GGML_CPU_REPACK");
    const bool off = env != NULL && (strcmp(env, "0") == 0 || strcmp(env, "off") == 0 || strcmp(env, "false") == 0);
    g_cpu_extra_bufts[0] = off ? NULL : ggml_backend_cpu_repack_buffer_type();
    g_cpu_extra_bufts[1] = NULL;
}

// llama.cpp's ggml_backend_cpu_get_extra_buffer_types: NULL-terminated list of the buffer types that store
// weights in a layout of their own (interleaved rows for faster matrix-vector products)
static ggml_backend_buffer_type_t * cpu_get_extra_bufts(ggml_backend_dev_t device) {
    (void) device;
    pthread_once(&g_cpu_extra_bufts_once, cpu_init_extra_bufts);
    return g_cpu_extra_bufts;
}

static struct ggml_backend_feature g_cpu_features[4];
static pthread_once_t g_cpu_features_once = PTHREAD_ONCE_INIT;

static void cpu_init_features(void) {
    const enum ggml_cpu_isa isa = ggml_cpu_isa_active();
    int n = 0;
    if (isa >= GGML_CPU_ISA_AVX2) {
        g_cpu_features[n++] = (struct ggml_backend_feature) { "AVX2", "1" };
    }
    if (isa >= GGML_CPU_ISA_AVX512) {
        g_cpu_features[n++] = (struct ggml_backend_feature) { "AVX512", "1" };
    }
    g_cpu_features[n] = (struct ggml_backend_feature) { NULL, NULL };
}

static struct ggml_backend_feature * cpu_get_features(ggml_backend_reg_t reg) {
    (void) reg;
    pthread_once(&g_cpu_features_once, cpu_init_features);
    return g_cpu_features;
}

static void * cpu_reg_get_proc_address(ggml_backend_reg_t reg, const char * name) {
    (void) reg;
    // function pointers travel as void * here (the registry's contract); the union keeps ISO C happy
    union { void * p; ggml_backend_set_n_threads_t f; } set_n_threads = { .f = ggml_backend_cpu_set_n_threads };
    union { void * p; ggml_backend_dev_get_extra_bufts_t f; } extra = { .f = cpu_get_extra_bufts };
    union { void * p; ggml_backend_get_features_t f; } features = { .f = cpu_get_features };
    union { void * p; ggml_backend_set_abort_callback_t f; } abort_cb = { .f = ggml_backend_cpu_set_abort_callback };
    union { void * p; void (*f)(ggml_backend_t, ggml_threadpool_t); } set_tp = { .f = ggml_backend_cpu_set_threadpool };
    union { void * p; struct ggml_threadpool * (*f)(struct ggml_threadpool_params *); } tp_new = { .f = ggml_threadpool_new };
    union { void * p; void (*f)(struct ggml_threadpool *); } tp_free = { .f = ggml_threadpool_free };

    if (strcmp(name, "ggml_backend_set_n_threads") == 0) {
        return set_n_threads.p;
    }
    if (strcmp(name, "ggml_backend_dev_get_extra_bufts") == 0) {
        return extra.p;
    }
    if (strcmp(name, "ggml_backend_get_features") == 0) {
        return features.p;
    }
    if (strcmp(name, "ggml_backend_set_abort_callback") == 0) {
        return abort_cb.p;
    }
    if (strcmp(name, "ggml_backend_cpu_set_threadpool") == 0) {
        return set_tp.p;
    }
    if (strcmp(name, "ggml_threadpool_new") == 0) {
        return tp_new.p;
    }
    if (strcmp(name, "ggml_threadpool_free") == 0) {
        return tp_free.p;
    }
    return NULL;
}

static struct ggml_backend_reg g_cpu_reg = {
    /* .api_version = */ GGML_BACKEND_API_VERSION,
    /* .iface       = */ {
        /* .get_name         = */ cpu_reg_get_name,
        /* .get_device_count = */ cpu_reg_get_device_count,
        /* .get_device       = */ cpu_reg_get_device,
        /* .get_proc_address = */ cpu_reg_get_proc_address,
    },
    /* .context     = */ NULL,
};

ggml_backend_reg_t ggml_backend_cpu_reg(void) {
    return &g_cpu_reg;
}
