// CPU graph engine: graph plans, a persistent thread pool (spin briefly, then sleep on a condition variable),
// the per-node dispatch with barriers between nodes (none after no-op nodes; small nodes run on thread 0 alone,
// with no barriers between consecutive ones), spin-then-sleep (futex) barriers, and CPU feature queries.

#include "ggml-cpu-impl.h"
#include "ggml-cpu-kernels.h"
#include "gemm.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#    include <linux/futex.h>
#    include <sys/syscall.h>
#    include <unistd.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#    include <cpuid.h>
#    include <immintrin.h>
#    define CPU_RELAX() _mm_pause()
#else
#    define CPU_RELAX() ((void) 0)
#endif

// ---- thread pool -----------------------------------------------------------------------------------------

struct ggml_compute_worker {
    pthread_t                thrd;
    int                      ith;
    bool                     started;
    struct ggml_threadpool * tp;
};

struct ggml_threadpool {
    pthread_mutex_t mutex;
    pthread_cond_t  cond;

    atomic_int  n_graph;          // (graph count << 16) | n_threads of that graph; workers wake when it changes
    atomic_int  n_barrier;        // threads arrived at the current barrier
    atomic_uint n_barrier_passed; // barrier generation (+2 per barrier); bit 0: abort was requested before it
    atomic_int  n_barrier_sleep;  // threads asleep on n_barrier_passed (futex)
    atomic_int  current_chunk;    // dynamic work distribution inside a node (reset at each barrier)
    atomic_bool stop;
    atomic_bool pause;
    atomic_int  abort;

    struct ggml_cgraph * cgraph;
    struct ggml_cplan  * cplan;

    int          n_threads_max;
    uint32_t     poll;
    enum ggml_status ec;

    struct ggml_compute_worker * workers;

    // ggml_cpu_range_*: each thread's remaining chunk range (tag | front | back), one cache line each
    struct { _Atomic uint64_t v; char pad[GGML_CPU_CACHE_LINE - sizeof(uint64_t)]; } range[GGML_MAX_N_THREADS];
};

// Waiting for a barrier: spin (the others are usually microseconds away), then sleep until the generation
// changes. When the cores are oversubscribed the thread everyone waits for may not be running; a waiter that
// sleeps gives its core away (a spinning or yielding one keeps competing for it, and the scheduler then charges
// it for that time) and, having slept, is picked quickly when the last thread wakes it.
static void barrier_sleep(atomic_uint * gen_ptr, unsigned gen) {
#if defined(__linux__)
    syscall(SYS_futex, (int *) gen_ptr, FUTEX_WAIT_PRIVATE, (int) gen, NULL, NULL, 0);
#else
    (void) gen_ptr;
    (void) gen;
    sched_yield();
#endif
}

static void barrier_wake(atomic_uint * gen_ptr) {
#if defined(__linux__)
    syscall(SYS_futex, (int *) gen_ptr, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
#else
    (void) gen_ptr;
#endif
}

// returns whether thread 0 had asked to abort when the last thread arrived. The answer travels in the
// generation value each thread sees released, not in a separate flag: the next graph resets the abort flag
// and may start before a slow thread has looked at it.
static bool barrier_wait(const struct ggml_compute_params * params) {
    struct ggml_threadpool * tp = params->threadpool;
    const unsigned gen = atomic_load(&tp->n_barrier_passed);
    if (atomic_fetch_add(&tp->n_barrier, 1) == params->nth - 1) {
        // last one in: reset for the next barrier and the next node's chunks, then release the others
        const bool abort = atomic_load(&tp->abort) != 0;
        atomic_store(&tp->n_barrier, 0);
        atomic_store(&tp->current_chunk, 0);
        atomic_store(&tp->n_barrier_passed, (gen & ~1u) + 2u + (abort ? 1u : 0u));
        // a sleeper counts itself before it checks the generation, and the generation moved before this
        // check: either it sees the new generation or it is counted here (both are sequentially consistent)
        if (atomic_load(&tp->n_barrier_sleep) > 0) {
            barrier_wake(&tp->n_barrier_passed);
        }
        return abort;
    }
    unsigned now = gen;
    for (int spins = 0; spins < 2000 && now == gen; spins++) {
        CPU_RELAX();
        now = atomic_load(&tp->n_barrier_passed);
    }
    if (now == gen) {
        atomic_fetch_add(&tp->n_barrier_sleep, 1);
        while ((now = atomic_load(&tp->n_barrier_passed)) == gen) {
            barrier_sleep(&tp->n_barrier_passed, gen);
        }
        atomic_fetch_sub(&tp->n_barrier_sleep, 1);
    }
    return (now & 1u) != 0;
}

void ggml_cpu_barrier(const struct ggml_compute_params * params) {
    struct ggml_threadpool * tp = params->threadpool;
    if (params->nth == 1 || tp == NULL) {
        if (tp) {
            atomic_store(&tp->current_chunk, 0);
        }
        return;
    }
    barrier_wait(params);
}

// a range word: the node's tag (the barrier generation, the same for every thread between two barriers) in the
// high 32 bits, then the next chunk from the front and one past the last chunk not yet taken from the back
static uint64_t range_pack(uint32_t tag, uint32_t front, uint32_t back) {
    return (uint64_t) tag << 32 | (uint64_t) front << 16 | back;
}

bool ggml_cpu_range_begin(const struct ggml_compute_params * params, int64_t n_chunks) {
    struct ggml_threadpool * tp = params->threadpool;
    if (tp == NULL || n_chunks > GGML_CPU_RANGE_MAX) {
        return false;
    }
    const uint32_t tag = atomic_load(&tp->n_barrier_passed);
    const int64_t begin = n_chunks * params->ith / params->nth;
    const int64_t end   = n_chunks * (params->ith + 1) / params->nth;
    atomic_store(&tp->range[params->ith].v, range_pack(tag, (uint32_t) begin, (uint32_t) end));
    return true;
}

int64_t ggml_cpu_range_next(const struct ggml_compute_params * params) {
    struct ggml_threadpool * tp = params->threadpool;
    const uint32_t tag = atomic_load(&tp->n_barrier_passed);
    // own range, from the front: the thread streams through contiguous weights
    _Atomic uint64_t * own = &tp->range[params->ith].v;
    uint64_t w = atomic_load(own);
    for (;;) {
        const uint32_t front = (uint32_t) (w >> 16) & 0xffff, back = (uint32_t) w & 0xffff;
        if (front >= back) {
            break;
        }
        if (atomic_compare_exchange_weak(own, &w, range_pack(tag, front + 1, back))) {
            return front;
        }
    }
    // then the back of the range with the most chunks left. A range whose word carries another tag belongs to an
    // owner that has not started this node yet: it will do all of it, so it is not touched.
    for (;;) {
        int victim = -1;
        uint32_t most = 0;
        uint64_t vw = 0;
        for (int t = 0; t < params->nth; t++) {
            const uint64_t x = atomic_load(&tp->range[t].v);
            const uint32_t front = (uint32_t) (x >> 16) & 0xffff, back = (uint32_t) x & 0xffff;
            if ((uint32_t) (x >> 32) == tag && front < back && back - front > most) {
                victim = t;
                most = back - front;
                vw = x;
            }
        }
        if (victim < 0) {
            return -1;
        }
        const uint32_t front = (uint32_t) (vw >> 16) & 0xffff, back = (uint32_t) vw & 0xffff;
        if (atomic_compare_exchange_strong(&tp->range[victim].v, &vw, range_pack(tag, front, back - 1))) {
            return back - 1;
        }
    }
}

int ggml_cpu_chunk_next(const struct ggml_compute_params * params) {
    if (params->threadpool == NULL) {
        return INT32_MAX;
    }
    return params->nth + atomic_fetch_add(&params->threadpool->current_chunk, 1);
}

static void compute_forward(const struct ggml_compute_params * params, struct ggml_tensor * node) {
    switch (node->op) {
        case GGML_OP_DUP:
        case GGML_OP_CPY:
        case GGML_OP_CONT:           ggml_cpu_forward_dup(params, node); break;
        case GGML_OP_ADD:
        case GGML_OP_SUB:
        case GGML_OP_MUL:
        case GGML_OP_DIV:
        case GGML_OP_ADD1:           ggml_cpu_forward_binary(params, node); break;
        case GGML_OP_ADD_ID:         ggml_cpu_forward_add_id(params, node); break;
        case GGML_OP_UNARY:
        case GGML_OP_SQR:
        case GGML_OP_SQRT:
        case GGML_OP_LOG:
        case GGML_OP_SIN:
        case GGML_OP_COS:
        case GGML_OP_LEAKY_RELU:     ggml_cpu_forward_unary(params, node); break;
        case GGML_OP_GLU:            ggml_cpu_forward_glu(params, node); break;
        case GGML_OP_SCALE:          ggml_cpu_forward_scale(params, node); break;
        case GGML_OP_CLAMP:          ggml_cpu_forward_clamp(params, node); break;
        case GGML_OP_FILL:           ggml_cpu_forward_fill(params, node); break;
        case GGML_OP_NORM:
        case GGML_OP_RMS_NORM:
        case GGML_OP_L2_NORM:        ggml_cpu_forward_norm(params, node); break;
        case GGML_OP_ROPE:
        case GGML_OP_ROPE_BACK:      ggml_cpu_forward_rope(params, node); break;
        case GGML_OP_SOFT_MAX:       ggml_cpu_forward_soft_max(params, node); break;
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_DIAG_MASK_ZERO: ggml_cpu_forward_diag_mask(params, node); break;
        case GGML_OP_MUL_MAT:        ggml_cpu_forward_mul_mat(params, node); break;
        case GGML_OP_MUL_MAT_ID:     ggml_cpu_forward_mul_mat_id(params, node); break;
        case GGML_OP_FLASH_ATTN_EXT: ggml_cpu_forward_flash_attn_ext(params, node); break;
        case GGML_OP_FLASH_ATTN_BACK: ggml_cpu_forward_flash_attn_back(params, node); break;
        case GGML_OP_GET_ROWS:       ggml_cpu_forward_get_rows(params, node); break;
        case GGML_OP_SET_ROWS:       ggml_cpu_forward_set_rows(params, node); break;
        case GGML_OP_SUM:
        case GGML_OP_SUM_ROWS:
        case GGML_OP_MEAN:
        case GGML_OP_CUMSUM:
        case GGML_OP_ARGMAX:
        case GGML_OP_COUNT_EQUAL:    ggml_cpu_forward_reduce(params, node); break;
        case GGML_OP_ARGSORT:
        case GGML_OP_TOP_K:          ggml_cpu_forward_sort(params, node); break;
        case GGML_OP_REPEAT:
        case GGML_OP_CONCAT:
        case GGML_OP_PAD:
        case GGML_OP_ARANGE:
        case GGML_OP_ROLL:
        case GGML_OP_TRI:            ggml_cpu_forward_layout(params, node); break;
        case GGML_OP_MAP_CUSTOM1:
        case GGML_OP_MAP_CUSTOM2:
        case GGML_OP_MAP_CUSTOM3:
        case GGML_OP_CUSTOM:         ggml_cpu_forward_custom(params, node); break;
        case GGML_OP_IM2COL:
        case GGML_OP_IM2COL_BACK:
        case GGML_OP_IM2COL_3D:
        case GGML_OP_CONV_2D:
        case GGML_OP_CONV_3D:
        case GGML_OP_CONV_2D_DW:
        case GGML_OP_CONV_TRANSPOSE_1D:
        case GGML_OP_CONV_TRANSPOSE_2D:  ggml_cpu_forward_conv(params, node); break;
        case GGML_OP_POOL_1D:
        case GGML_OP_POOL_2D:
        case GGML_OP_POOL_2D_BACK:
        case GGML_OP_UPSCALE:
        case GGML_OP_PAD_REFLECT_1D:
        case GGML_OP_TIMESTEP_EMBEDDING:
        case GGML_OP_WIN_PART:
        case GGML_OP_WIN_UNPART:
        case GGML_OP_GET_REL_POS:
        case GGML_OP_ADD_REL_POS:        ggml_cpu_forward_image(params, node); break;
        case GGML_OP_ACC:
        case GGML_OP_SET:            ggml_cpu_forward_acc_set(params, node); break;
        case GGML_OP_DIAG:           ggml_cpu_forward_diag(params, node); break;
        case GGML_OP_OUT_PROD:       ggml_cpu_forward_out_prod(params, node); break;
        case GGML_OP_GROUP_NORM:     ggml_cpu_forward_group_norm(params, node); break;
        case GGML_OP_REPEAT_BACK:
        case GGML_OP_SILU_BACK:
        case GGML_OP_RMS_NORM_BACK:
        case GGML_OP_GET_ROWS_BACK:
        case GGML_OP_SOFT_MAX_BACK:  ggml_cpu_forward_back(params, node); break;
        case GGML_OP_SSM_CONV:
        case GGML_OP_SSM_SCAN:
        case GGML_OP_RWKV_WKV6:
        case GGML_OP_GATED_LINEAR_ATTN:
        case GGML_OP_RWKV_WKV7:      ggml_cpu_forward_recurrent(params, node); break;
        case GGML_OP_CROSS_ENTROPY_LOSS:
        case GGML_OP_CROSS_ENTROPY_LOSS_BACK:
        case GGML_OP_OPT_STEP_ADAMW:
        case GGML_OP_OPT_STEP_SGD:   ggml_cpu_forward_train(params, node); break;
        default:
            // ggml_graph_compute rejects unsupported nodes before starting
            break;
    }
}

// A node this small is run by thread 0 alone: splitting it would save less than the barriers cost. Runs of such
// nodes then need no barriers between them (thread 0 sees its own writes), only one before the next node the
// other threads take part in. Only ops that compute every row (or element) the same way whatever the thread
// count qualify, so the results do not change; mat-muls, attention and custom ops always run on every thread.
#define SERIAL_MAX_BYTES (64 * 1024)

static bool node_is_serial(const struct ggml_tensor * node) {
    size_t bytes = ggml_nbytes(node);
    switch (node->op) {
        case GGML_OP_SET_ROWS:
            // writes only the rows of src0 into a (possibly large) destination
            return 2 * ggml_nbytes(node->src[0]) + ggml_nbytes(node->src[1]) <= SERIAL_MAX_BYTES;
        case GGML_OP_GET_ROWS:
            // reads only the selected rows of a (possibly large) table
            return 2 * bytes + ggml_nbytes(node->src[1]) <= SERIAL_MAX_BYTES;
        case GGML_OP_DUP:
        case GGML_OP_CPY:
        case GGML_OP_CONT:
        case GGML_OP_ADD:
        case GGML_OP_SUB:
        case GGML_OP_MUL:
        case GGML_OP_DIV:
        case GGML_OP_ADD1:
        case GGML_OP_UNARY:
        case GGML_OP_SQR:
        case GGML_OP_SQRT:
        case GGML_OP_GLU:
        case GGML_OP_SCALE:
        case GGML_OP_CLAMP:
        case GGML_OP_NORM:
        case GGML_OP_RMS_NORM:
        case GGML_OP_L2_NORM:
        case GGML_OP_ROPE:
        case GGML_OP_SOFT_MAX:
            break;
        default:
            return false;
    }
    for (int s = 0; s < GGML_MAX_SRC && bytes <= SERIAL_MAX_BYTES; s++) {
        if (node->src[s]) {
            bytes += ggml_nbytes(node->src[s]);
        }
    }
    return bytes <= SERIAL_MAX_BYTES;
}

// the barrier between nodes: also tells every thread, consistently, whether thread 0 asked to abort before it
static bool node_barrier(const struct ggml_compute_params * params) {
    struct ggml_threadpool * tp = params->threadpool;
    if (params->nth == 1) {
        atomic_store(&tp->current_chunk, 0);
        return atomic_load(&tp->abort) != 0;
    }
    return barrier_wait(params);
}

static void compute_thread(struct ggml_threadpool * tp, int ith, int nth) {
    const struct ggml_cgraph * cgraph = tp->cgraph;
    const struct ggml_cplan  * cplan  = tp->cplan;
    const struct ggml_compute_params params = {
        .ith        = ith,
        .nth        = nth,
        .wsize      = cplan->work_size,
        .wdata      = cplan->work_data,
        .threadpool = tp,
    };
    struct ggml_compute_params params_serial = params;
    params_serial.nth = 1;
    // thread 0 ran serial nodes since the last barrier: the others must wait before they read anything
    bool pending = false;
    // every thread leaves the loop at the same barrier on abort (then that barrier was the last one)
    bool stopped = false;
    for (int node_n = 0; node_n < cgraph->n_nodes; node_n++) {
        struct ggml_tensor * node = cgraph->nodes[node_n];
        if (!ggml_cpu_node_is_computed(node)) {
            continue; // views and reshapes compute nothing: no barrier needed
        }
        const bool serial = nth > 1 && node_is_serial(node);
        if (serial) {
            pending = true;
            if (ith != 0) {
                continue;
            }
            atomic_store(&tp->current_chunk, 0);
            compute_forward(&params_serial, node);
        } else {
            if (pending) {
                pending = false;
                if (node_barrier(&params)) {
                    stopped = true;
                    break;
                }
            }
            struct ggml_tensor * members[GGML_CPU_MM_GROUP_MAX];
            int last = node_n;
            int n = node->op == GGML_OP_MUL_MAT ? ggml_cpu_mul_mat_group(cgraph, node_n, members, &last) : 1;
            // a plan made before the tensors had their memory saw no groups and sized the buffer without them
            if (n > 1 && ggml_cpu_mul_mat_vec_work_size(members, n, nth) > params.wsize) {
                n = 1;
            }
            if (n > 1) {
                ggml_cpu_forward_mul_mat_group(&params, members, n);
                node_n = last; // the members after the first are done
            } else {
                compute_forward(&params, node);
            }
        }
        bool abort_now = false;
        if (ith == 0 && cplan->abort_callback && cplan->abort_callback(cplan->abort_callback_data)) {
            atomic_store(&tp->abort, 1);
            tp->ec = GGML_STATUS_ABORTED;
            abort_now = true;
        }
        // after a serial node only thread 0 knows about the abort; the others are waiting at their next
        // barrier (before a parallel node, or the last one), which this one then completes
        if (!serial || abort_now) {
            pending = false;
            if (node_barrier(&params)) {
                stopped = true;
                break;
            }
        }
    }
    // nobody leaves while another thread may still read this graph
    if (!stopped) {
        ggml_cpu_barrier(&params);
    }
}

static void * worker_main(void * arg) {
    struct ggml_compute_worker * w  = arg;
    struct ggml_threadpool     * tp = w->tp;
    int last_graph = 0;
    for (;;) {
        int g = atomic_load(&tp->n_graph);
        if (g == last_graph && !atomic_load(&tp->pause)) {
            const uint32_t spins = tp->poll * 128u;
            for (uint32_t i = 0; i < spins && g == last_graph && !atomic_load(&tp->stop); i++) {
                CPU_RELAX();
                g = atomic_load(&tp->n_graph);
            }
        }
        if (g == last_graph) {
            pthread_mutex_lock(&tp->mutex);
            while (atomic_load(&tp->n_graph) == last_graph && !atomic_load(&tp->stop)) {
                pthread_cond_wait(&tp->cond, &tp->mutex);
            }
            pthread_mutex_unlock(&tp->mutex);
        }
        if (atomic_load(&tp->stop)) {
            break;
        }
        // one snapshot says which graph this is and how many threads it uses: a worker that was idle for
        // the previous graph must not mistake the next graph's thread count for the previous one's
        last_graph = atomic_load(&tp->n_graph);
        const int nth = last_graph & 0xffff;
        if (w->ith < nth) {
            compute_thread(tp, w->ith, nth);
        }
    }
    return NULL;
}

struct ggml_threadpool_params ggml_threadpool_params_default(int n_threads) {
    struct ggml_threadpool_params p;
    ggml_threadpool_params_init(&p, n_threads);
    return p;
}

void ggml_threadpool_params_init(struct ggml_threadpool_params * p, int n_threads) {
    memset(p, 0, sizeof(*p));
    p->n_threads  = n_threads;
    p->prio       = GGML_SCHED_PRIO_NORMAL;
    p->poll       = 50;
    p->strict_cpu = false;
    p->paused     = false;
}

bool ggml_threadpool_params_match(const struct ggml_threadpool_params * p0, const struct ggml_threadpool_params * p1) {
    if (p0->n_threads != p1->n_threads || p0->prio != p1->prio || p0->poll != p1->poll ||
        p0->strict_cpu != p1->strict_cpu) {
        return false;
    }
    return memcmp(p0->cpumask, p1->cpumask, GGML_MAX_N_THREADS) == 0;
}

struct ggml_threadpool * ggml_threadpool_new(struct ggml_threadpool_params * params) {
    if (params == NULL || params->n_threads < 1 || params->n_threads > GGML_MAX_N_THREADS) {
        GGML_LOG_ERROR("%s: invalid number of threads %d (1..%d)\n", __func__, params ? params->n_threads : -1,
                       GGML_MAX_N_THREADS);
        return NULL;
    }
    struct ggml_threadpool * tp = calloc(1, sizeof(*tp));
    if (tp == NULL) {
        return NULL;
    }
    pthread_mutex_init(&tp->mutex, NULL);
    pthread_cond_init(&tp->cond, NULL);
    atomic_init(&tp->n_graph, 0);
    atomic_init(&tp->n_barrier, 0);
    atomic_init(&tp->n_barrier_passed, 0);
    atomic_init(&tp->n_barrier_sleep, 0);
    atomic_init(&tp->current_chunk, 0);
    atomic_init(&tp->stop, false);
    atomic_init(&tp->pause, params->paused);
    atomic_init(&tp->abort, 0);
    tp->n_threads_max = params->n_threads;
    tp->poll          = params->poll > 100 ? 100 : params->poll;
    tp->ec            = GGML_STATUS_SUCCESS;
    tp->workers       = calloc((size_t) params->n_threads, sizeof(struct ggml_compute_worker));
    if (tp->workers == NULL) {
        ggml_threadpool_free(tp);
        return NULL;
    }
    for (int i = 0; i < params->n_threads; i++) {
        tp->workers[i].ith = i;
        tp->workers[i].tp  = tp;
    }
    // worker 0 is the thread that calls ggml_graph_compute
    for (int i = 1; i < params->n_threads; i++) {
        if (pthread_create(&tp->workers[i].thrd, NULL, worker_main, &tp->workers[i]) != 0) {
            GGML_LOG_ERROR("%s: failed to start thread %d of %d\n", __func__, i, params->n_threads);
            ggml_threadpool_free(tp);
            return NULL;
        }
        tp->workers[i].started = true;
    }
    return tp;
}

void ggml_threadpool_free(struct ggml_threadpool * tp) {
    if (tp == NULL) {
        return;
    }
    pthread_mutex_lock(&tp->mutex);
    atomic_store(&tp->stop, true);
    pthread_cond_broadcast(&tp->cond);
    pthread_mutex_unlock(&tp->mutex);
    if (tp->workers) {
        for (int i = 1; i < tp->n_threads_max; i++) {
            if (tp->workers[i].started) {
                pthread_join(tp->workers[i].thrd, NULL);
            }
        }
    }
    free(tp->workers);
    pthread_cond_destroy(&tp->cond);
    pthread_mutex_destroy(&tp->mutex);
    free(tp);
}

int ggml_threadpool_get_n_threads(struct ggml_threadpool * tp) {
    return tp ? tp->n_threads_max : 0;
}

void ggml_threadpool_pause(struct ggml_threadpool * tp) {
    if (tp) {
        atomic_store(&tp->pause, true);
    }
}

void ggml_threadpool_resume(struct ggml_threadpool * tp) {
    if (tp) {
        atomic_store(&tp->pause, false);
    }
}

// ---- plan + compute --------------------------------------------------------------------------------------

struct ggml_cplan ggml_graph_plan(const struct ggml_cgraph * cgraph, int n_threads, struct ggml_threadpool * threadpool) {
    if (n_threads <= 0) {
        n_threads = threadpool != NULL ? threadpool->n_threads_max : GGML_DEFAULT_N_THREADS;
    }
    ggml_cpu_init();
    size_t work_size = 0;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor * node = cgraph->nodes[i];
        if (ggml_op_is_empty(node->op)) {
            continue;
        }
        size_t sz = ggml_cpu_op_work_size(node, n_threads);
        if (node->op == GGML_OP_MUL_MAT) {
            struct ggml_tensor * members[GGML_CPU_MM_GROUP_MAX];
            int last;
            const int n = ggml_cpu_mul_mat_group(cgraph, i, members, &last);
            const size_t group_sz = n > 1 ? ggml_cpu_mul_mat_vec_work_size(members, n, n_threads) : 0;
            sz = group_sz > sz ? group_sz : sz;
        }
        work_size = sz > work_size ? sz : work_size;
    }
    if (work_size > 0) {
        work_size += GGML_CPU_CACHE_LINE * (size_t) n_threads;
    }
    struct ggml_cplan cplan;
    memset(&cplan, 0, sizeof(cplan));
    cplan.threadpool = threadpool;
    cplan.n_threads  = n_threads < GGML_MAX_N_THREADS ? n_threads : GGML_MAX_N_THREADS;
    cplan.work_size  = work_size;
    cplan.work_data  = NULL;
    return cplan;
}

static bool graph_validate(const struct ggml_cgraph * cgraph) {
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor * node = cgraph->nodes[i];
        if (!ggml_cpu_node_is_computed(node)) {
            continue;
        }
        if (!ggml_cpu_supports_op(node)) {
            GGML_LOG_ERROR("ggml_graph_compute: node %d (%s, op %s, type %s, src0 %s, src1 %s) is not supported on the CPU\n",
                           i, node->name, ggml_op_desc(node), ggml_type_name(node->type),
                           node->src[0] ? ggml_type_name(node->src[0]->type) : "-",
                           node->src[1] ? ggml_type_name(node->src[1]->type) : "-");
            return false;
        }
        if (node->data == NULL) {
            GGML_LOG_ERROR("ggml_graph_compute: node %d (%s) has no data (graph not allocated)\n", i, node->name);
            return false;
        }
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            if (node->src[s] && node->src[s]->data == NULL && !ggml_is_empty(node->src[s])) {
                GGML_LOG_ERROR("ggml_graph_compute: src %d (%s) of node %d (%s) has no data\n", s,
                               node->src[s]->name, i, node->name);
                return false;
            }
        }
    }
    return true;
}

enum ggml_status ggml_graph_compute(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan) {
    if (cgraph == NULL || cplan == NULL || cplan->n_threads <= 0) {
        GGML_LOG_ERROR("%s: invalid graph or plan\n", __func__);
        return GGML_STATUS_FAILED;
    }
    if (cplan->work_size > 0 && cplan->work_data == NULL) {
        GGML_LOG_ERROR("%s: the plan needs a work buffer of %zu bytes (work_data is NULL)\n", __func__, cplan->work_size);
        return GGML_STATUS_FAILED;
    }
    ggml_cpu_init();
    if (!graph_validate(cgraph)) {
        return GGML_STATUS_FAILED;
    }

    struct ggml_threadpool * tp = cplan->threadpool;
    bool disposable = false;
    int n_threads = cplan->n_threads;
    if (tp == NULL) {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(n_threads);
        p.poll = 0; // a one-shot pool has nothing to wait for between graphs
        tp = ggml_threadpool_new(&p);
        if (tp == NULL) {
            return GGML_STATUS_FAILED;
        }
        disposable = true;
    } else if (n_threads > tp->n_threads_max) {
        n_threads = tp->n_threads_max;
    }

    atomic_store(&tp->abort, 0);
    atomic_store(&tp->current_chunk, 0);
    atomic_store(&tp->pause, false);
    tp->cgraph = cgraph;
    tp->cplan  = cplan;
    tp->ec     = GGML_STATUS_SUCCESS;

    if (n_threads > 1) {
        pthread_mutex_lock(&tp->mutex);
        const int count = ((atomic_load(&tp->n_graph) >> 16) + 1) & 0x7fff;
        atomic_store(&tp->n_graph, (count << 16) | n_threads);
        pthread_cond_broadcast(&tp->cond);
        pthread_mutex_unlock(&tp->mutex);
    }
    compute_thread(tp, 0, n_threads);

    const enum ggml_status ec = tp->ec;
    if (disposable) {
        ggml_threadpool_free(tp);
    }
    return ec;
}

enum ggml_status ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * cgraph, int n_threads) {
    struct ggml_cplan cplan = ggml_graph_plan(cgraph, n_threads, NULL);
    if (cplan.work_size > 0) {
        cplan.work_data = ggml_new_buffer(ctx, cplan.work_size);
        if (cplan.work_data == NULL) {
            return GGML_STATUS_ALLOC_FAILED;
        }
    }
    return ggml_graph_compute(cgraph, &cplan);
}

// ---- work sizes and op support ---------------------------------------------------------------------------

static bool is_float_type(enum ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16;
}

// a type whose rows can be produced from floats on the CPU
static bool can_from_float(enum ggml_type t) {
    if (is_float_type(t)) {
        return true;
    }
    return ggml_cpu_get_kernels(t)->from_float != NULL || ggml_get_type_traits(t)->from_float_ref != NULL;
}

static bool can_to_float(enum ggml_type t) {
    return is_float_type(t) || ggml_get_type_traits(t)->to_float != NULL;
}

static bool mul_mat_supported(enum ggml_type t0, enum ggml_type t1) {
    const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(t0);
    if (k->vec_dot == NULL || k->vec_dot_type == GGML_TYPE_COUNT) {
        return false;
    }
    if (t1 == k->vec_dot_type) {
        return true;
    }
    if (t1 != GGML_TYPE_F32) {
        return false;
    }
    return k->vec_dot_type == GGML_TYPE_F32 || ggml_cpu_get_kernels(k->vec_dot_type)->from_float != NULL;
}

// multi-section rope: the modes llama.cpp's CPU backend knows, some section used, VISION rotating all of a row
static bool rope_sections_supported(const struct ggml_tensor * op) {
    const int mode   = op->op_params[2];
    const int n_dims = op->op_params[1];
    const int32_t * sections = op->op_params + 11;
    if (mode != GGML_ROPE_TYPE_MROPE && mode != GGML_ROPE_TYPE_IMROPE && mode != GGML_ROPE_TYPE_VISION) {
        return false;
    }
    int sum = 0;
    for (int i = 0; i < GGML_MROPE_SECTIONS; i++) {
        if (sections[i] < 0) {
            return false;
        }
        sum += sections[i];
    }
    if (sections[0] + sections[1] + sections[2] <= 0 || sum > op->ne[0]) {
        return false;
    }
    return mode != GGML_ROPE_TYPE_VISION || 2 * (int64_t) n_dims == op->ne[0];
}

bool ggml_cpu_supports_op(const struct ggml_tensor * op) {
    const struct ggml_tensor * s0 = op->src[0];
    const struct ggml_tensor * s1 = op->src[1];
    switch (op->op) {
        case GGML_OP_NONE:
        case GGML_OP_RESHAPE:
        case GGML_OP_VIEW:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE:
            return true;
        case GGML_OP_DUP:
        case GGML_OP_CPY:
        case GGML_OP_CONT:
            if (s0->type == op->type) {
                return true;
            }
            if (s0->type == GGML_TYPE_I32 || op->type == GGML_TYPE_I32) {
                return (s0->type == GGML_TYPE_I32 || is_float_type(s0->type)) &&
                       (op->type == GGML_TYPE_I32 || is_float_type(op->type));
            }
            if ((ggml_is_quantized(s0->type) || ggml_is_quantized(op->type)) && s0->ne[0] != op->ne[0]) {
                return false;
            }
            return can_to_float(s0->type) && can_from_float(op->type);
        case GGML_OP_ADD:
        case GGML_OP_SUB:
        case GGML_OP_MUL:
        case GGML_OP_DIV:
        case GGML_OP_ADD1:
            return is_float_type(s0->type) && is_float_type(s1->type) && is_float_type(op->type);
        case GGML_OP_ADD_ID:
            return s0->type == GGML_TYPE_F32 && s1->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32;
        case GGML_OP_UNARY:
        case GGML_OP_SQR:
        case GGML_OP_SQRT:
        case GGML_OP_LOG:
        case GGML_OP_SIN:
        case GGML_OP_COS:
        case GGML_OP_LEAKY_RELU:
            if (op->op == GGML_OP_UNARY && ggml_get_unary_op(op) == GGML_UNARY_OP_XIELU) {
                return false;
            }
            return is_float_type(s0->type) && s0->type == op->type;
        case GGML_OP_GLU:
            return is_float_type(s0->type) && s0->type == op->type && (s1 == NULL || s1->type == s0->type) &&
                   ggml_get_glu_op(op) != GGML_GLU_OP_COUNT;
        case GGML_OP_SCALE:
        case GGML_OP_CLAMP:
        case GGML_OP_FILL:
            return is_float_type(s0->type) && s0->type == op->type;
        case GGML_OP_NORM:
        case GGML_OP_RMS_NORM:
        case GGML_OP_L2_NORM:
            return s0->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32;
        case GGML_OP_ROPE:
        case GGML_OP_ROPE_BACK: {
            const int mode = op->op_params[2];
            if ((mode & GGML_ROPE_TYPE_MROPE) && !rope_sections_supported(op)) {
                return false;
            }
            return (s0->type == GGML_TYPE_F32 || s0->type == GGML_TYPE_F16) && s0->type == op->type;
        }
        case GGML_OP_SOFT_MAX:
            return s0->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32;
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_DIAG_MASK_ZERO:
            return s0->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32;
        case GGML_OP_MUL_MAT:
        case GGML_OP_MUL_MAT_ID:
            return op->type == GGML_TYPE_F32 && mul_mat_supported(s0->type, s1->type) &&
                   ggml_is_contiguous_rows(s0) && !ggml_is_transposed(s0);
        case GGML_OP_FLASH_ATTN_EXT: {
            const struct ggml_tensor * k = op->src[1];
            const struct ggml_tensor * v = op->src[2];
            return s0->type == GGML_TYPE_F32 && mul_mat_supported(k->type, GGML_TYPE_F32) && can_to_float(v->type) &&
                   ggml_is_contiguous_rows(k) && ggml_is_contiguous_rows(v);
        }
        case GGML_OP_FLASH_ATTN_BACK:
            return ggml_cpu_flash_attn_back_supported(op);
        case GGML_OP_GET_ROWS:
            return s1->type == GGML_TYPE_I32 && (s0->type == GGML_TYPE_I32 ? op->type == GGML_TYPE_I32 : can_to_float(s0->type));
        case GGML_OP_SET_ROWS:
            return s0->type == GGML_TYPE_F32 && (s1->type == GGML_TYPE_I32 || s1->type == GGML_TYPE_I64) &&
                   can_from_float(op->type);
        case GGML_OP_SUM:
        case GGML_OP_SUM_ROWS:
        case GGML_OP_MEAN:
        case GGML_OP_CUMSUM:
        case GGML_OP_ARGMAX:
            return s0->type == GGML_TYPE_F32;
        case GGML_OP_COUNT_EQUAL:
            return s0->type == GGML_TYPE_I32 && s1->type == GGML_TYPE_I32;
        case GGML_OP_ARGSORT:
        case GGML_OP_TOP_K:
            return s0->type == GGML_TYPE_F32;
        case GGML_OP_REPEAT:
        case GGML_OP_CONCAT:
        case GGML_OP_ROLL:
            return !ggml_is_quantized(s0->type);
        case GGML_OP_PAD:
        case GGML_OP_TRI:
            return s0->type == GGML_TYPE_F32;
        case GGML_OP_ARANGE:
            return op->type == GGML_TYPE_F32;
        case GGML_OP_MAP_CUSTOM1:
        case GGML_OP_MAP_CUSTOM2:
        case GGML_OP_MAP_CUSTOM3:
        case GGML_OP_CUSTOM:
            return true;
        case GGML_OP_IM2COL:
        case GGML_OP_IM2COL_3D:
            return (s1->type == GGML_TYPE_F32 || s1->type == GGML_TYPE_F16) &&
                   (op->type == GGML_TYPE_F32 || op->type == GGML_TYPE_F16);
        case GGML_OP_IM2COL_BACK:
            return s0->type == GGML_TYPE_F32 && ggml_is_contiguous(s0) && op->type == GGML_TYPE_F32;
        case GGML_OP_CONV_2D:
        case GGML_OP_CONV_3D:
            // the kernel rows are dotted in place: contiguous, F32 or F16
            return (s0->type == GGML_TYPE_F32 || s0->type == GGML_TYPE_F16) && ggml_is_contiguous(s0) &&
                   s1->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32;
        case GGML_OP_CONV_2D_DW: // written through the result's strides (channels-innermost results too)
            return (s0->type == GGML_TYPE_F32 || s0->type == GGML_TYPE_F16) && s1->type == GGML_TYPE_F32 &&
                   op->type == GGML_TYPE_F32;
        case GGML_OP_CONV_TRANSPOSE_1D:
        case GGML_OP_CONV_TRANSPOSE_2D:
            return (s0->type == GGML_TYPE_F32 || s0->type == GGML_TYPE_F16) && s1->type == GGML_TYPE_F32 &&
                   op->type == GGML_TYPE_F32 && ggml_is_contiguous(op);
        case GGML_OP_POOL_1D:
        case GGML_OP_POOL_2D:
            return (s0->type == GGML_TYPE_F32 || s0->type == GGML_TYPE_F16) && op->op_params[0] >= 0 &&
                   op->op_params[0] < GGML_OP_POOL_COUNT;
        case GGML_OP_POOL_2D_BACK:
            return s0->type == GGML_TYPE_F32 && s1->type == GGML_TYPE_F32 && op->op_params[0] >= 0 &&
                   op->op_params[0] < GGML_OP_POOL_COUNT;
        case GGML_OP_UPSCALE:
            return s0->type == GGML_TYPE_F32 && (op->op_params[0] & 0xFF) < GGML_SCALE_MODE_COUNT;
        case GGML_OP_PAD_REFLECT_1D:
        case GGML_OP_TIMESTEP_EMBEDDING:
        case GGML_OP_WIN_PART:
        case GGML_OP_WIN_UNPART:
            return s0->type == GGML_TYPE_F32;
        case GGML_OP_GET_REL_POS:
            return s0->type == GGML_TYPE_F16;
        case GGML_OP_ADD_REL_POS:
            return s0->type == GGML_TYPE_F32 && ggml_is_contiguous(s0) && ggml_is_contiguous(op);
        case GGML_OP_ACC:
            return s0->type == GGML_TYPE_F32 && s1->type == GGML_TYPE_F32 && ggml_is_contiguous(op) &&
                   ggml_cpu_acc_set_view_fits(op);
        case GGML_OP_SET:
            return !ggml_is_quantized(s0->type) && s1->type == s0->type && ggml_is_contiguous(op) &&
                   ggml_cpu_acc_set_view_fits(op);
        case GGML_OP_DIAG:
            return s0->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32;
        case GGML_OP_OUT_PROD:
            // src0 rows are converted to floats: F32/F16/BF16 with any stride, quantized ones contiguous
            return op->type == GGML_TYPE_F32 && is_float_type(s1->type) && can_to_float(s0->type) &&
                   (!ggml_is_quantized(s0->type) || s0->nb[0] == ggml_type_size(s0->type));
        case GGML_OP_GROUP_NORM:
            return s0->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 && op->op_params[0] > 0;
        case GGML_OP_REPEAT_BACK:
            return s0->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32;
        case GGML_OP_SILU_BACK:
        case GGML_OP_RMS_NORM_BACK:
            return s0->type == GGML_TYPE_F32 && s1->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 &&
                   ggml_are_same_shape(s0, s1);
        case GGML_OP_GET_ROWS_BACK:
            return (s0->type == GGML_TYPE_F32 || s0->type == GGML_TYPE_F16) && s1->type == GGML_TYPE_I32 &&
                   s0->ne[1] == s1->ne[0];
        case GGML_OP_SOFT_MAX_BACK:
            // ALiBi (max_bias > 0) has no backward in ggml either
            return s0->type == GGML_TYPE_F32 && s1->type == GGML_TYPE_F32 && ggml_are_same_shape(s0, s1) &&
                   ggml_get_op_params_f32(op, 1) == 0.0f;
        case GGML_OP_SSM_CONV:
            return s0->type == GGML_TYPE_F32 && s1->type == GGML_TYPE_F32;
        case GGML_OP_SSM_SCAN:
            for (int i = 0; i < 6; i++) {
                if (op->src[i]->type != GGML_TYPE_F32) {
                    return false;
                }
            }
            return op->src[4]->ne[1] > 0 && op->src[1]->ne[1] % op->src[4]->ne[1] == 0;
        case GGML_OP_RWKV_WKV6:
        case GGML_OP_GATED_LINEAR_ATTN:
        case GGML_OP_RWKV_WKV7: {
            const int n_src = op->op == GGML_OP_RWKV_WKV6 ? 6 : op->op == GGML_OP_GATED_LINEAR_ATTN ? 5 : 7;
            for (int i = 0; i < n_src; i++) {
                if (op->src[i]->type != GGML_TYPE_F32) {
                    return false;
                }
            }
            // tokens are split evenly between the sequences
            const int64_t n_seqs = op->src[n_src - 1]->ne[1];
            return n_seqs > 0 && op->src[1]->ne[2] % n_seqs == 0;
        }
        case GGML_OP_CROSS_ENTROPY_LOSS:
        case GGML_OP_CROSS_ENTROPY_LOSS_BACK:
        case GGML_OP_OPT_STEP_ADAMW:
        case GGML_OP_OPT_STEP_SGD:
            return ggml_cpu_train_supported(op);
        default:
            return false;
    }
}

static size_t pad_cl(size_t n) { return GGML_PAD(n, GGML_CPU_CACHE_LINE); }

size_t ggml_cpu_op_work_size(const struct ggml_tensor * node, int n_threads) {
    const struct ggml_tensor * s0 = node->src[0];
    const struct ggml_tensor * s1 = node->src[1];
    const size_t nth = (size_t) n_threads;
    switch (node->op) {
        case GGML_OP_DUP:
        case GGML_OP_CPY:
        case GGML_OP_CONT:
            return nth * pad_cl(sizeof(float) * (size_t) (s0->ne[0] > node->ne[0] ? s0->ne[0] : node->ne[0]));
        case GGML_OP_SET_ROWS:
            return nth * pad_cl(sizeof(float) * (size_t) s0->ne[0]);
        case GGML_OP_MUL_MAT:
        case GGML_OP_MUL_MAT_ID: {
            const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(s0->type);
            if (k->vec_dot_type == GGML_TYPE_COUNT) {
                return 0;
            }
            size_t sz;
            if (node->op == GGML_OP_MUL_MAT) {
                // the vec path's converted activations (per thread for a few rows), see ops-matmul.c
                struct ggml_tensor * self = (struct ggml_tensor *) node;
                sz = ggml_cpu_mul_mat_vec_work_size(&self, 1, n_threads);
            } else {
                // the converted activations, then the routing: n_as + 1 expert offsets and the (slot, token)
                // pairs sorted by expert
                const struct ggml_tensor * ids = node->src[2];
                sz = pad_cl(ggml_row_size(k->vec_dot_type, s1->ne[0]) * (size_t) ggml_nrows(s1)) +
                     pad_cl(sizeof(int32_t) * ((size_t) s0->ne[2] + 1 + 2 * (size_t) (ids->ne[0] * ids->ne[1])));
            }
            const size_t gemm_sz = ggml_cpu_mul_mat_gemm_work_size(node, n_threads);
            return gemm_sz > sz ? gemm_sz : sz;
        }
        case GGML_OP_FLASH_ATTN_EXT: {
            const struct ggml_tensor * k = node->src[1];
            const struct ggml_tensor * v = node->src[2];
            const struct ggml_cpu_type_kernels * kk = ggml_cpu_get_kernels(k->type);
            const enum ggml_type qt = kk->vec_dot_type == GGML_TYPE_COUNT ? GGML_TYPE_F32 : kk->vec_dot_type;
            return nth * ggml_cpu_fa_scratch_size(s0->ne[0], v->ne[0], ggml_row_size(qt, s0->ne[0]));
        }
        case GGML_OP_FLASH_ATTN_BACK:
            return ggml_cpu_flash_attn_back_work_size(node, n_threads);
        case GGML_OP_SOFT_MAX:
        case GGML_OP_ROPE:
        case GGML_OP_ROPE_BACK:
            return nth * pad_cl(sizeof(float) * (size_t) s0->ne[0] * 2);
        case GGML_OP_CONV_2D:
        case GGML_OP_CONV_3D:
            return ggml_cpu_conv_work_size(node, n_threads);
        case GGML_OP_OUT_PROD:
            // one src0 row converted to floats per thread, see ops-edit.c
            return nth * pad_cl(sizeof(float) * (size_t) s0->ne[0]);
        case GGML_OP_TOP_K:
        case GGML_OP_ARGSORT:
            // per thread: indices and keys, twice (the radix sort's ping-pong buffers), see ops-misc.c
            return nth * pad_cl(4 * sizeof(int32_t) * (size_t) s0->ne[0]);
        case GGML_OP_CROSS_ENTROPY_LOSS:
            return ggml_cpu_train_work_size(n_threads);
        default:
            return 0;
    }
}

// ---- element access on host tensors ----------------------------------------------------------------------

static void * elem_ptr(const struct ggml_tensor * t, int i0, int i1, int i2, int i3) {
    return (char *) t->data + (size_t) i0 * t->nb[0] + (size_t) i1 * t->nb[1] + (size_t) i2 * t->nb[2] +
           (size_t) i3 * t->nb[3];
}

// ggml_cpu_get_elem_f / ggml_cpu_set_elem_f cover F32, F16, BF16 and I32
static float get_elem(const struct ggml_tensor * t, const void * p) {
    switch (t->type) {
        case GGML_TYPE_I8:  return (float) *(const int8_t *) p;
        case GGML_TYPE_I16: return (float) *(const int16_t *) p;
        default:            return ggml_cpu_get_elem_f(p, t->type);
    }
}

static void set_elem(const struct ggml_tensor * t, void * p, float v) {
    switch (t->type) {
        case GGML_TYPE_I8:  *(int8_t *) p = (int8_t) v; break;
        case GGML_TYPE_I16: *(int16_t *) p = (int16_t) v; break;
        default:            ggml_cpu_set_elem_f(p, t->type, v); break;
    }
}

static void set_elem_i32(const struct ggml_tensor * t, void * p, int32_t v) {
    switch (t->type) {
        case GGML_TYPE_I8:  *(int8_t *) p = (int8_t) v; break;
        case GGML_TYPE_I16: *(int16_t *) p = (int16_t) v; break;
        case GGML_TYPE_I32: *(int32_t *) p = v; break;
        default:            ggml_cpu_set_elem_f(p, t->type, (float) v); break;
    }
}

static int32_t get_elem_i32(const struct ggml_tensor * t, const void * p) {
    switch (t->type) {
        case GGML_TYPE_I8:  return *(const int8_t *) p;
        case GGML_TYPE_I16: return *(const int16_t *) p;
        case GGML_TYPE_I32: return *(const int32_t *) p;
        default:            return (int32_t) ggml_cpu_get_elem_f(p, t->type);
    }
}

struct ggml_tensor * ggml_new_i32(struct ggml_context * ctx, int32_t value) {
    struct ggml_tensor * r = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
    if (r == NULL || r->data == NULL) {
        return r;
    }
    return ggml_set_i32(r, value);
}

struct ggml_tensor * ggml_new_f32(struct ggml_context * ctx, float value) {
    struct ggml_tensor * r = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    if (r == NULL || r->data == NULL) {
        return r;
    }
    return ggml_set_f32(r, value);
}

struct ggml_tensor * ggml_set_i32(struct ggml_tensor * t, int32_t value) {
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        int64_t i0, i1, i2, i3;
        ggml_unravel_index(t, i, &i0, &i1, &i2, &i3);
        set_elem_i32(t, elem_ptr(t, (int) i0, (int) i1, (int) i2, (int) i3), value);
    }
    return t;
}

struct ggml_tensor * ggml_set_f32(struct ggml_tensor * t, float value) {
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        int64_t i0, i1, i2, i3;
        ggml_unravel_index(t, i, &i0, &i1, &i2, &i3);
        set_elem(t, elem_ptr(t, (int) i0, (int) i1, (int) i2, (int) i3), value);
    }
    return t;
}

// the 1d accessors take the logical (row-major) index i, so they also work on non-contiguous views
int32_t ggml_get_i32_1d(const struct ggml_tensor * t, int i) {
    int64_t i0, i1, i2, i3;
    ggml_unravel_index(t, i, &i0, &i1, &i2, &i3);
    return ggml_get_i32_nd(t, (int) i0, (int) i1, (int) i2, (int) i3);
}

void ggml_set_i32_1d(const struct ggml_tensor * t, int i, int32_t value) {
    int64_t i0, i1, i2, i3;
    ggml_unravel_index(t, i, &i0, &i1, &i2, &i3);
    ggml_set_i32_nd(t, (int) i0, (int) i1, (int) i2, (int) i3, value);
}

int32_t ggml_get_i32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3) {
    return get_elem_i32(t, elem_ptr(t, i0, i1, i2, i3));
}

void ggml_set_i32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3, int32_t value) {
    set_elem_i32(t, elem_ptr(t, i0, i1, i2, i3), value);
}

float ggml_get_f32_1d(const struct ggml_tensor * t, int i) {
    int64_t i0, i1, i2, i3;
    ggml_unravel_index(t, i, &i0, &i1, &i2, &i3);
    return ggml_get_f32_nd(t, (int) i0, (int) i1, (int) i2, (int) i3);
}

void ggml_set_f32_1d(const struct ggml_tensor * t, int i, float value) {
    int64_t i0, i1, i2, i3;
    ggml_unravel_index(t, i, &i0, &i1, &i2, &i3);
    ggml_set_f32_nd(t, (int) i0, (int) i1, (int) i2, (int) i3, value);
}

float ggml_get_f32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3) {
    return get_elem(t, elem_ptr(t, i0, i1, i2, i3));
}

void ggml_set_f32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3, float value) {
    set_elem(t, elem_ptr(t, i0, i1, i2, i3), value);
}

// ---- init, GELU table, row conversions -------------------------------------------------------------------

static ggml_fp16_t g_gelu_table[1 << 16];
static pthread_once_t g_cpu_init_once = PTHREAD_ONCE_INIT;

static void cpu_init_impl(void) {
    // indexed by the F16 bit pattern of the input: every representable half gets its rounded GELU
    for (uint32_t i = 0; i < (1u << 16); i++) {
        const float x = GGML_FP16_TO_FP32((ggml_fp16_t) i);
        const float inner = 0.7978845608028654f * x * (1.0f + 0.044715f * x * x);
        g_gelu_table[i] = GGML_FP32_TO_FP16(0.5f * x * (1.0f + tanhf(inner)));
    }
}

void ggml_cpu_init(void) {
    pthread_once(&g_cpu_init_once, cpu_init_impl);
}

float ggml_cpu_gelu_f32(float x) {
    if (x <= -10.0f) {
        return 0.0f;
    }
    if (x >= 10.0f) {
        return x;
    }
    return GGML_FP16_TO_FP32(g_gelu_table[GGML_FP32_TO_FP16(x)]);
}

void ggml_cpu_fp32_to_fp16(const float * x, ggml_fp16_t * y, int64_t n) { ggml_fp32_to_fp16_row(x, y, n); }
void ggml_cpu_fp16_to_fp32(const ggml_fp16_t * x, float * y, int64_t n) { ggml_fp16_to_fp32_row(x, y, n); }
void ggml_cpu_fp32_to_bf16(const float * x, ggml_bf16_t * y, int64_t n) { ggml_fp32_to_bf16_row(x, y, n); }
void ggml_cpu_bf16_to_fp32(const ggml_bf16_t * x, float * y, int64_t n) { ggml_bf16_to_fp32_row(x, y, n); }

// ---- NUMA (accepted, not acted on) -----------------------------------------------------------------------

void ggml_numa_init(enum ggml_numa_strategy numa) {
    if (numa != GGML_NUMA_STRATEGY_DISABLED) {
        GGML_LOG_INFO("%s: NUMA strategies are not implemented in this build; using default placement\n", __func__);
    }
}

bool ggml_is_numa(void) { return false; }

// ---- CPU features ----------------------------------------------------------------------------------------

#if defined(__x86_64__) || defined(__i386__)
struct cpu_features {
    unsigned ecx1, ebx7, ecx7, edx7, eax7_1;
};

static struct cpu_features cpu_features_get(void) {
    struct cpu_features f = { 0, 0, 0, 0, 0 };
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        f.ecx1 = c;
    }
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f.ebx7 = b;
        f.ecx7 = c;
        f.edx7 = d;
    }
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
        f.eax7_1 = a;
    }
    return f;
}
#    define CPU_BIT(reg, bit) ((cpu_features_get().reg >> (bit)) & 1u)
int ggml_cpu_has_sse3(void)        { return (int) CPU_BIT(ecx1, 0); }
int ggml_cpu_has_ssse3(void)       { return (int) CPU_BIT(ecx1, 9); }
int ggml_cpu_has_fma(void)         { return (int) CPU_BIT(ecx1, 12); }
int ggml_cpu_has_avx(void)         { return (int) CPU_BIT(ecx1, 28); }
int ggml_cpu_has_f16c(void)        { return (int) CPU_BIT(ecx1, 29); }
int ggml_cpu_has_avx2(void)        { return (int) CPU_BIT(ebx7, 5); }
int ggml_cpu_has_bmi2(void)        { return (int) CPU_BIT(ebx7, 8); }
int ggml_cpu_has_avx512(void)      { return (int) CPU_BIT(ebx7, 16); }
int ggml_cpu_has_avx512_vbmi(void) { return (int) CPU_BIT(ecx7, 1); }
int ggml_cpu_has_avx512_vnni(void) { return (int) CPU_BIT(ecx7, 11); }
int ggml_cpu_has_amx_int8(void)    { return (int) CPU_BIT(edx7, 25); }
int ggml_cpu_has_avx_vnni(void)    { return (int) CPU_BIT(eax7_1, 4); }
int ggml_cpu_has_avx512_bf16(void) { return (int) CPU_BIT(eax7_1, 5); }
#    undef CPU_BIT
#else
int ggml_cpu_has_sse3(void)        { return 0; }
int ggml_cpu_has_ssse3(void)       { return 0; }
int ggml_cpu_has_fma(void)         { return 0; }
int ggml_cpu_has_avx(void)         { return 0; }
int ggml_cpu_has_f16c(void)        { return 0; }
int ggml_cpu_has_avx2(void)        { return 0; }
int ggml_cpu_has_bmi2(void)        { return 0; }
int ggml_cpu_has_avx512(void)      { return 0; }
int ggml_cpu_has_avx512_vbmi(void) { return 0; }
int ggml_cpu_has_avx512_vnni(void) { return 0; }
int ggml_cpu_has_amx_int8(void)    { return 0; }
int ggml_cpu_has_avx_vnni(void)    { return 0; }
int ggml_cpu_has_avx512_bf16(void) { return 0; }
#endif

#if defined(__ARM_NEON)
int ggml_cpu_has_neon(void) { return 1; }
#else
int ggml_cpu_has_neon(void) { return 0; }
#endif
#if defined(__ARM_FEATURE_FMA)
int ggml_cpu_has_arm_fma(void) { return 1; }
#else
int ggml_cpu_has_arm_fma(void) { return 0; }
#endif
int ggml_cpu_has_fp16_va(void)     { return 0; }
int ggml_cpu_has_dotprod(void)     { return 0; }
int ggml_cpu_has_matmul_int8(void) { return 0; }
int ggml_cpu_has_sve(void)         { return 0; }
int ggml_cpu_get_sve_cnt(void)     { return 0; }
int ggml_cpu_has_sme(void)         { return 0; }
int ggml_cpu_has_riscv_v(void)     { return 0; }
int ggml_cpu_has_vsx(void)         { return 0; }
int ggml_cpu_has_vxe(void)         { return 0; }
int ggml_cpu_has_wasm_simd(void)   { return 0; }
int ggml_cpu_has_llamafile(void)   { return 0; }
