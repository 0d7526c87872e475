// Sampler API, the sampler chain, the helpers shared by the samplers, and the selecting samplers greedy and dist.
// The other samplers: llama-sampler-filters.c (top-k, top-p, min-p, typical, temp, temp-ext, xtc, top-n-sigma,
// logit-bias), llama-sampler-mirostat.c (mirostat v1/v2, adaptive-p), llama-sampler-penalties.c (penalties, DRY),
// llama-sampler-vocab.c (DRY breakers from strings, infill), llama-grammar-sampler.c (GBNF grammar, lazy grammar);
// llama_sampler_sample is in llama-sampler-sample.c.
//
// Numerics follow llama.cpp operation by operation (float vs double accumulations, the order of sums) so that
// the same logits and seed select the same token.

#include "llama-sampler.h"

#include "llama-impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

//
// shared helpers
//

uint32_t llama_sampler_rng_seed(uint32_t seed) {
    return seed == LLAMA_DEFAULT_SEED ? llama_rng_random_seed() : seed;
}

void llama_sampler_timing_add(int64_t * t_us, int64_t t_start_us, bool no_perf) {
    if (!no_perf) {
        *t_us += ggml_time_us() - t_start_us;
    }
}

// descending by logit; NaN sorts last so that the order stays a strict weak ordering
static int token_data_cmp_desc(const void * pa, const void * pb) {
    const float a = ((const llama_token_data *) pa)->logit;
    const float b = ((const llama_token_data *) pb)->logit;
    const bool na = isnan(a);
    const bool nb = isnan(b);
    if (na || nb) {
        return (int) na - (int) nb;
    }
    return (a < b) - (a > b);
}

// sort key that orders like token_data_cmp_desc: larger logits get smaller keys, NaN gets the largest key
static inline uint32_t token_data_sort_key(float logit) {
    if (isnan(logit)) {
        return UINT32_MAX;
    }
    uint32_t u;
    memcpy(&u, &logit, sizeof(u));
    // map IEEE order to unsigned ascending order, then invert for descending
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ~u;
}

// LSD radix sort on 32-bit keys, 8 bits per pass; stable, linear in n (a vocabulary sorts in about a millisecond)
static bool token_data_radix_sort_desc(llama_token_data * data, size_t n) {
    struct item { uint32_t key; llama_token_data td; };
    struct item * a = malloc(2 * n * sizeof(*a));
    if (!a) {
        return false;
    }
    struct item * b = a + n;
    for (size_t i = 0; i < n; ++i) {
        a[i].key = token_data_sort_key(data[i].logit);
        a[i].td  = data[i];
    }
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = { 0 };
        for (size_t i = 0; i < n; ++i) {
            count[((a[i].key >> shift) & 0xffu) + 1]++;
        }
        if (count[((a[0].key >> shift) & 0xffu) + 1] == n) {
            continue; // all keys share this byte
        }
        for (int j = 0; j < 256; ++j) {
            count[j + 1] += count[j];
        }
        for (size_t i = 0; i < n; ++i) {
            b[count[(a[i].key >> shift) & 0xffu]++] = a[i];
        }
        struct item * t = a;
        a = b;
        b = t;
    }
    for (size_t i = 0; i < n; ++i) {
        data[i] = a[i].td;
    }
    free(a < b ? a : b);
    return true;
}

void llama_token_data_sort_desc(llama_token_data * data, size_t n) {
    if (n < 2) {
        return;
    }
    if (n >= 512 && token_data_radix_sort_desc(data, n)) {
        return;
    }
    qsort(data, n, sizeof(*data), token_data_cmp_desc);
}

static inline bool token_data_before(const llama_token_data * a, const llama_token_data * b) {
    return token_data_cmp_desc(a, b) < 0;
}

static inline void token_data_swap(llama_token_data * a, llama_token_data * b) {
    const llama_token_data t = *a;
    *a = *b;
    *b = t;
}

// sift-down in a min-heap (by the "before" order: the root is the worst of the kept elements)
static void heap_sift_down(llama_token_data * h, size_t n, size_t i) {
    for (;;) {
        const size_t l = 2*i + 1;
        const size_t r = l + 1;
        size_t w = i;
        if (l < n && token_data_before(&h[w], &h[l])) {
            w = l;
        }
        if (r < n && token_data_before(&h[w], &h[r])) {
            w = r;
        }
        if (w == i) {
            return;
        }
        token_data_swap(&h[i], &h[w]);
        i = w;
    }
}

// moves the k best elements of data[0..n) to data[0..k), sorted; the rest of the array is left in some order.
// Small k keeps a heap of the k best seen so far (one comparison per element for most of a vocabulary);
// large k uses quickselect to split the array, then sorts the front.
void llama_token_data_top_k(llama_token_data * data, size_t n, size_t k) {
    if (k == 0 || n == 0) {
        return;
    }
    if (k >= n) {
        llama_token_data_sort_desc(data, n);
        return;
    }
    if (k * 16 <= n) {
        // heap of the k best in data[0..k): build, then stream the rest through its root
        for (size_t i = k / 2; i-- > 0;) {
            heap_sift_down(data, k, i);
        }
        // plain float compare against the current worst kept logit: most of a vocabulary fails it at once
        float thr = data[0].logit;
        bool  thr_nan = isnan(thr);
        for (size_t i = k; i < n; ++i) {
            const float v = data[i].logit;
            if (v > thr || (thr_nan && !isnan(v))) {
                token_data_swap(&data[i], &data[0]);
                heap_sift_down(data, k, 0);
                thr = data[0].logit;
                thr_nan = isnan(thr);
            }
        }
        llama_token_data_sort_desc(data, k);
        return;
    }
    // quickselect with a three-way partition (before / equal to / after a median-of-three pivot) until
    // data[0..k) holds the k best; the equal block is never empty, so every round shrinks the range
    size_t lo = 0;
    size_t hi = n;
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        const llama_token_data * a = &data[lo];
        const llama_token_data * b = &data[mid];
        const llama_token_data * c = &data[hi - 1];
        const llama_token_data * m;
        if (token_data_before(a, b)) {
            m = token_data_before(b, c) ? b : (token_data_before(a, c) ? c : a);
        } else {
            m = token_data_before(a, c) ? a : (token_data_before(b, c) ? c : b);
        }
        const llama_token_data pivot = *m;
        size_t lt = lo;
        size_t i  = lo;
        size_t gt = hi;
        while (i < gt) {
            if (token_data_before(&data[i], &pivot)) {
                token_data_swap(&data[lt++], &data[i++]);
            } else if (token_data_before(&pivot, &data[i])) {
                token_data_swap(&data[i], &data[--gt]);
            } else {
                i++;
            }
        }
        if (k <= lt) {
            hi = lt;
        } else if (k <= gt) {
            break;
        } else {
            lo = gt;
        }
    }
    llama_token_data_sort_desc(data, k);
}

// keep the top k candidates, sorted (llama.cpp's partial_sort_inplace)
void llama_token_data_array_top_k_inplace(llama_token_data_array * cur_p, size_t k) {
    llama_token_data_top_k(cur_p->data, cur_p->size, k);
    cur_p->size   = k;
    cur_p->sorted = true;
}

// the largest logit of a non-empty array: the first one when sorted
static float token_data_max_logit(const llama_token_data_array * cur_p) {
    float max_l = cur_p->data[0].logit;
    if (!cur_p->sorted) {
        for (size_t i = 1; i < cur_p->size; ++i) {
            max_l = fmaxf(max_l, cur_p->data[i].logit);
        }
    }
    return max_l;
}

void llama_sampler_softmax_impl(llama_token_data_array * cur_p, bool do_sort) {
    if (cur_p->size == 0) {
        return;
    }
    if (do_sort && !cur_p->sorted) {
        llama_token_data_array_top_k_inplace(cur_p, cur_p->size);
    }

    const float max_l = token_data_max_logit(cur_p);

    float cum_sum = 0.0f;
    for (size_t i = 0; i < cur_p->size; ++i) {
        const float p = expf(cur_p->data[i].logit - max_l);
        cur_p->data[i].p = p;
        cum_sum += p;
    }
    for (size_t i = 0; i < cur_p->size; ++i) {
        cur_p->data[i].p /= cum_sum;
    }
}

void llama_sampler_top_k_impl(llama_token_data_array * cur_p, int32_t k) {
    if (k <= 0) {
        return;
    }
    const size_t kk = (size_t) k < cur_p->size ? (size_t) k : cur_p->size;
    if (!cur_p->sorted) {
        llama_token_data_array_top_k_inplace(cur_p, kk);
    }
    cur_p->size = kk;
}

void llama_sampler_temp_impl(llama_token_data_array * cur_p, float temp) {
    if (cur_p->size == 0) {
        return;
    }
    if (temp <= 0.0f) {
        // keep only the first maximum
        size_t max_i = 0;
        float  max_l = cur_p->data[0].logit;
        for (size_t i = 1; i < cur_p->size; ++i) {
            if (cur_p->data[i].logit > max_l) {
                cur_p->data[max_i].logit = -INFINITY;
                max_i = i;
                max_l = cur_p->data[i].logit;
            } else {
                cur_p->data[i].logit = -INFINITY;
            }
        }
        return;
    }
    for (size_t i = 0; i < cur_p->size; ++i) {
        cur_p->data[i].logit /= temp;
    }
}

// std::discrete_distribution over cur_p's probabilities; returns -1 when out of memory
int llama_sampler_sample_discrete(llama_token_data_array * cur_p, struct llama_mt19937 * rng) {
    if (cur_p->size < 2) {
        return 0;
    }
    double * cum = malloc(cur_p->size * sizeof(double));
    if (!cum) {
        LLAMA_LOG_ERROR("%s: out of memory for %zu candidates\n", __func__, cur_p->size);
        return -1;
    }
    const int idx = llama_rng_discrete(rng, &cur_p->data[0].p, sizeof(llama_token_data) / sizeof(float), cur_p->size, cum);
    free(cum);
    return idx;
}

void * llama_sampler_ctx_calloc(size_t size, const char * what) {
    void * p = calloc(1, size);
    if (!p) {
        LLAMA_LOG_ERROR("%s: out of memory\n", what);
    }
    return p;
}

// wraps ctx into a sampler, freeing ctx when that fails
struct llama_sampler * llama_sampler_new_owned(struct llama_sampler_i * iface, void * ctx) {
    if (!ctx) {
        return NULL;
    }
    struct llama_sampler * smpl = llama_sampler_init(iface, ctx);
    if (!smpl) {
        free(ctx);
    }
    return smpl;
}

void llama_sampler_free_ctx(struct llama_sampler * smpl) {
    free(smpl->ctx);
    smpl->ctx = NULL;
}

// copy_state of samplers whose context is immutable configuration (plus scratch buffers)
void llama_sampler_copy_state_none(const struct llama_sampler * src, struct llama_sampler * dst) {
    GGML_UNUSED(src);
    GGML_UNUSED(dst);
}

//
// llama_sampler API
//

struct llama_sampler * llama_sampler_init(struct llama_sampler_i * iface, llama_sampler_context_t ctx) {
    if (!iface) {
        LLAMA_LOG_ERROR("%s: iface is NULL\n", __func__);
        return NULL;
    }
    struct llama_sampler * smpl = malloc(sizeof(*smpl));
    if (!smpl) {
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    smpl->iface = iface;
    smpl->ctx   = ctx;
    return smpl;
}

const char * llama_sampler_name(const struct llama_sampler * smpl) {
    if (!smpl || !smpl->iface || !smpl->iface->name) {
        return "(null)";
    }
    return smpl->iface->name(smpl);
}

void llama_sampler_accept(struct llama_sampler * smpl, llama_token token) {
    if (!smpl) {
        return;
    }
    if (smpl->iface->accept) {
        smpl->iface->accept(smpl, token);
    }
}

void llama_sampler_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    if (!smpl || !cur_p) {
        return;
    }
    if (!smpl->iface->apply) {
        LLAMA_LOG_ERROR("%s: sampler '%s' has no apply function\n", __func__, llama_sampler_name(smpl));
        return;
    }
    if (cur_p->size > 0 && !cur_p->data) {
        LLAMA_LOG_ERROR("%s: candidate array has size %zu but no data\n", __func__, cur_p->size);
        return;
    }
    smpl->iface->apply(smpl, cur_p);
}

void llama_sampler_reset(struct llama_sampler * smpl) {
    if (!smpl) {
        return;
    }
    if (smpl->iface->reset) {
        smpl->iface->reset(smpl);
    }
}

struct llama_sampler * llama_sampler_clone(const struct llama_sampler * smpl) {
    if (!smpl) {
        return NULL;
    }
    if (smpl->iface->clone) {
        return smpl->iface->clone(smpl);
    }
    if (smpl->ctx == NULL) {
        return llama_sampler_init(smpl->iface, NULL);
    }
    LLAMA_LOG_ERROR("%s: sampler '%s' does not support cloning\n", __func__, llama_sampler_name(smpl));
    return NULL;
}

void llama_sampler_copy(const struct llama_sampler * src, struct llama_sampler * dst) {
    if (!src || !dst || src == dst) {
        return;
    }
    if (src->iface != dst->iface) {
        LLAMA_LOG_ERROR("%s: cannot copy between different sampler types ('%s' -> '%s')\n", __func__,
                llama_sampler_name(src), llama_sampler_name(dst));
        return;
    }
    if (dst->iface->copy_state) {
        dst->iface->copy_state(src, dst);
        return;
    }

    // no in-place copy: take over the context of a clone of src
    struct llama_sampler * tmp = llama_sampler_clone(src);
    if (!tmp) {
        LLAMA_LOG_ERROR("%s: could not clone sampler '%s'; destination left unchanged\n", __func__, llama_sampler_name(src));
        return;
    }
    if (dst->iface->free) {
        dst->iface->free(dst);
    }
    dst->ctx = tmp->ctx;
    tmp->ctx = NULL;
    free(tmp);
}

void llama_sampler_free(struct llama_sampler * smpl) {
    if (!smpl) {
        return;
    }
    if (smpl->iface->free) {
        smpl->iface->free(smpl);
    }
    free(smpl);
}

//
// empty sampler
//

struct sampler_empty {
    const char * name; // static string
};

static const char * empty_name(const struct llama_sampler * smpl) {
    return ((const struct sampler_empty *) smpl->ctx)->name;
}

static void empty_accept(struct llama_sampler * smpl, llama_token token) {
    GGML_UNUSED(smpl);
    GGML_UNUSED(token);
}

static void empty_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    GGML_UNUSED(smpl);
    GGML_UNUSED(cur_p);
}

static void empty_reset(struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
}

static struct llama_sampler * empty_clone(const struct llama_sampler * smpl) {
    return llama_sampler_init_empty(((const struct sampler_empty *) smpl->ctx)->name);
}

// an empty sampler adds no graph nodes, so it supports every backend and any number of outputs
static bool empty_backend_init(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft, uint32_t n_outputs_max_per_seq) {
    GGML_UNUSED(smpl);
    GGML_UNUSED(buft);
    GGML_UNUSED(n_outputs_max_per_seq);
    return true;
}

static void empty_backend_accept(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf, struct ggml_tensor * selected) {
    GGML_UNUSED(smpl);
    GGML_UNUSED(ctx);
    GGML_UNUSED(gf);
    GGML_UNUSED(selected);
}

static void empty_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf, struct llama_sampler_data * data) {
    GGML_UNUSED(smpl);
    GGML_UNUSED(ctx);
    GGML_UNUSED(gf);
    GGML_UNUSED(data);
}

static void empty_backend_set_input(struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
}

static struct llama_sampler_i llama_sampler_empty_i = {
    /* .name              = */ empty_name,
    /* .accept            = */ empty_accept,
    /* .apply             = */ empty_apply,
    /* .reset             = */ empty_reset,
    /* .clone             = */ empty_clone,
    /* .free              = */ llama_sampler_free_ctx,
    /* .backend_init      = */ empty_backend_init,
    /* .backend_accept    = */ empty_backend_accept,
    /* .backend_apply     = */ empty_backend_apply,
    /* .backend_set_input = */ empty_backend_set_input,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ NULL,
};

struct llama_sampler * llama_sampler_init_empty(const char * name) {
    struct sampler_empty * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->name = name;
    }
    return llama_sampler_new_owned(&llama_sampler_empty_i, ctx);
}

//
// chain
//

static const char * chain_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "chain";
}

static void chain_accept(struct llama_sampler * smpl, llama_token token) {
    struct llama_sampler_chain * chain = smpl->ctx;
    const int64_t t_start = chain->params.no_perf ? 0 : ggml_time_us();

    for (size_t i = 0; i < chain->n_samplers; ++i) {
        llama_sampler_accept(chain->samplers[i].ptr, token);
    }

    llama_sampler_timing_add(&chain->t_sample_us, t_start, chain->params.no_perf);
    chain->n_sample++;
}

static void chain_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct llama_sampler_chain * chain = smpl->ctx;
    const int64_t t_start = chain->params.no_perf ? 0 : ggml_time_us();

    // the backend prefix of an initialised chain already ran inside the graph
    bool in_backend_prefix = chain->is_init;
    for (size_t i = 0; i < chain->n_samplers; ++i) {
        const struct llama_sampler_chain_entry * e = &chain->samplers[i];
        if (in_backend_prefix && e->is_backend) {
            continue;
        }
        in_backend_prefix = false;
        if (e->ptr->iface->apply) {
            llama_sampler_apply(e->ptr, cur_p);
        }
    }

    llama_sampler_timing_add(&chain->t_sample_us, t_start, chain->params.no_perf);
}

static void chain_reset(struct llama_sampler * smpl) {
    struct llama_sampler_chain * chain = smpl->ctx;
    for (size_t i = 0; i < chain->n_samplers; ++i) {
        llama_sampler_reset(chain->samplers[i].ptr);
    }
}

static struct llama_sampler * chain_clone(const struct llama_sampler * smpl) {
    const struct llama_sampler_chain * src = smpl->ctx;
    struct llama_sampler * result = llama_sampler_chain_init(src->params);
    if (!result) {
        return NULL;
    }
    struct llama_sampler_chain * dst = result->ctx;
    for (size_t i = 0; i < src->n_samplers; ++i) {
        struct llama_sampler * c = llama_sampler_clone(src->samplers[i].ptr);
        const size_t n_before = dst->n_samplers;
        if (c) {
            llama_sampler_chain_add(result, c);
        }
        if (dst->n_samplers == n_before) {
            llama_sampler_free(result);
            return NULL;
        }
    }
    return result;
}

static void chain_free(struct llama_sampler * smpl) {
    struct llama_sampler_chain * chain = smpl->ctx;
    if (!chain) {
        return;
    }
    for (size_t i = 0; i < chain->n_samplers; ++i) {
        llama_sampler_free(chain->samplers[i].ptr);
    }
    free(chain->samplers);
    free(chain->cur);
    free(chain);
    smpl->ctx = NULL;
}

static void chain_backend_reset(struct llama_sampler * smpl) {
    struct llama_sampler_chain * chain = smpl->ctx;
    for (size_t i = 0; i < chain->n_samplers; ++i) {
        const struct llama_sampler_chain_entry * e = &chain->samplers[i];
        if (!e->is_backend) {
            break;
        }
        if (e->ptr->iface->backend_reset) {
            e->ptr->iface->backend_reset(e->ptr);
        }
    }
}

static void chain_copy_state(const struct llama_sampler * src, struct llama_sampler * dst) {
    const struct llama_sampler_chain * s = src->ctx;
    struct llama_sampler_chain * d = dst->ctx;

    if (s->n_samplers != d->n_samplers) {
        LLAMA_LOG_ERROR("%s: chains differ in length (%zu vs %zu); destination left unchanged\n", __func__,
                s->n_samplers, d->n_samplers);
        return;
    }
    for (size_t i = 0; i < s->n_samplers; ++i) {
        llama_sampler_copy(s->samplers[i].ptr, d->samplers[i].ptr);
    }

    // is_init, n_nodes and is_backend describe the current sampling graph and stay; the candidate buffer is
    // scratch (llama_sampler_sample refills it), so only its capacity would matter
    d->params      = s->params;
    d->t_sample_us = s->t_sample_us;
    d->n_sample    = s->n_sample;
}

static struct llama_sampler_i llama_sampler_chain_i = {
    /* .name              = */ chain_name,
    /* .accept            = */ chain_accept,
    /* .apply             = */ chain_apply,
    /* .reset             = */ chain_reset,
    /* .clone             = */ chain_clone,
    /* .free              = */ chain_free,
    /* .backend_init      = */ llama_sampler_chain_backend_init,
    /* .backend_accept    = */ llama_sampler_chain_backend_accept,
    /* .backend_apply     = */ llama_sampler_chain_backend_apply,
    /* .backend_set_input = */ llama_sampler_chain_backend_set_input,
    /* .backend_reset     = */ chain_backend_reset,
    /* .copy_state        = */ chain_copy_state,
};

bool llama_sampler_is_chain(const struct llama_sampler * smpl) {
    return smpl && smpl->iface == &llama_sampler_chain_i;
}

struct llama_sampler_chain_params llama_sampler_chain_default_params(void) {
    struct llama_sampler_chain_params result = {
        /* .no_perf = */ true,
    };
    return result;
}

struct llama_sampler * llama_sampler_chain_init(struct llama_sampler_chain_params params) {
    struct llama_sampler_chain * chain = llama_sampler_ctx_calloc(sizeof(*chain), __func__);
    if (chain) {
        chain->params = params;
    }
    return llama_sampler_new_owned(&llama_sampler_chain_i, chain);
}

llama_token_data * llama_sampler_chain_reserve_cur(struct llama_sampler_chain * chain, size_t n) {
    if (n > chain->cap_cur) {
        if (n > SIZE_MAX / sizeof(llama_token_data)) {
            return NULL;
        }
        llama_token_data * p = realloc(chain->cur, n * sizeof(llama_token_data));
        if (!p) {
            LLAMA_LOG_ERROR("%s: out of memory for %zu candidates\n", __func__, n);
            return NULL;
        }
        chain->cur     = p;
        chain->cap_cur = n;
    }
    return chain->cur;
}

void llama_sampler_chain_add(struct llama_sampler * chain, struct llama_sampler * smpl) {
    if (!llama_sampler_is_chain(chain)) {
        // ownership passes in every case, so a sampler that cannot be added is freed rather than leaked
        LLAMA_LOG_ERROR("%s: the first argument is not a sampler chain; sampler '%s' freed\n", __func__, llama_sampler_name(smpl));
        llama_sampler_free(smpl);
        return;
    }
    if (!smpl) {
        LLAMA_LOG_ERROR("%s: sampler is NULL (did its init fail?)\n", __func__);
        return;
    }
    struct llama_sampler_chain * p = chain->ctx;
    if (p->n_samplers == p->cap_samplers) {
        const size_t cap = p->cap_samplers ? 2 * p->cap_samplers : 8;
        struct llama_sampler_chain_entry * s = realloc(p->samplers, cap * sizeof(*s));
        if (!s) {
            LLAMA_LOG_ERROR("%s: out of memory; sampler '%s' freed\n", __func__, llama_sampler_name(smpl));
            llama_sampler_free(smpl);
            return;
        }
        p->samplers     = s;
        p->cap_samplers = cap;
    }
    p->samplers[p->n_samplers].is_backend = false;
    p->samplers[p->n_samplers].ptr        = smpl;
    p->n_samplers++;
}

struct llama_sampler * llama_sampler_chain_get(struct llama_sampler * chain, int32_t i) {
    if (!llama_sampler_is_chain(chain)) {
        return NULL;
    }
    if (i == -1) {
        return chain;
    }
    const struct llama_sampler_chain * p = chain->ctx;
    if (i < 0 || (size_t) i >= p->n_samplers) {
        return NULL;
    }
    return p->samplers[i].ptr;
}

struct llama_sampler * llama_sampler_chain_remove(struct llama_sampler * chain, int32_t i) {
    if (!llama_sampler_is_chain(chain)) {
        LLAMA_LOG_ERROR("%s: not a sampler chain\n", __func__);
        return NULL;
    }
    struct llama_sampler_chain * p = chain->ctx;
    if (i < 0 || (size_t) i >= p->n_samplers) {
        return NULL;
    }
    struct llama_sampler * result = p->samplers[i].ptr;
    memmove(&p->samplers[i], &p->samplers[i + 1], (p->n_samplers - (size_t) i - 1) * sizeof(p->samplers[0]));
    p->n_samplers--;
    return result;
}

int llama_sampler_chain_n(const struct llama_sampler * chain) {
    if (!llama_sampler_is_chain(chain)) {
        return 0;
    }
    return (int) ((const struct llama_sampler_chain *) chain->ctx)->n_samplers;
}

uint32_t llama_sampler_backend_n_nodes(const struct llama_sampler * sampler) {
    GGML_ASSERT(sampler != NULL);
    GGML_ASSERT(llama_sampler_is_chain(sampler));
    const struct llama_sampler_chain * chain = sampler->ctx;
    GGML_ASSERT(chain->is_init);
    return chain->n_nodes;
}

//
// greedy
//

static const char * greedy_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "greedy";
}

static void greedy_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    GGML_UNUSED(smpl);
    if (cur_p->size == 0) {
        cur_p->selected = -1;
        return;
    }
    cur_p->selected = 0;
    for (size_t i = 1; i < cur_p->size; ++i) {
        if (cur_p->data[i].logit > cur_p->data[cur_p->selected].logit) {
            cur_p->selected = (int64_t) i;
        }
    }
}

static struct llama_sampler * greedy_clone(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return llama_sampler_init_greedy();
}

static void greedy_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data) {
    GGML_UNUSED(smpl);
    GGML_UNUSED(gf);
    llama_sampler_backend_greedy(ctx, data);
}

static struct llama_sampler_i llama_sampler_greedy_i = {
    /* .name              = */ greedy_name,
    /* .accept            = */ NULL,
    /* .apply             = */ greedy_apply,
    /* .reset             = */ NULL,
    /* .clone             = */ greedy_clone,
    /* .free              = */ NULL,
    /* .backend_init      = */ llama_sampler_backend_init_default,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ greedy_backend_apply,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ llama_sampler_copy_state_none,
};

struct llama_sampler * llama_sampler_init_greedy(void) {
    return llama_sampler_init(&llama_sampler_greedy_i, NULL);
}

//
// dist
//

struct sampler_dist {
    uint32_t seed;
    uint32_t seed_cur;

    struct llama_mt19937 rng;

    // multi-output backend sampling draws from a staging copy of rng so that draws for rejected outputs do not
    // advance the real stream; accept() commits one draw at a time (SEEDS-SPEC §2.5)
    bool                 backend_transactional;
    struct llama_mt19937 rng_backend;
    size_t               n_backend_draws_generated;
    size_t               n_backend_draws_committed;

    // F32 [1] uniform inputs of the current sampling graph, one per output row, in row order
    struct llama_sampler_inputs inp_uniforms;
};

static const char * dist_name(const struct llama_sampler * smpl) {
    GGML_UNUSED(smpl);
    return "dist";
}

static void dist_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    struct sampler_dist * ctx = smpl->ctx;

    if (cur_p->size == 0) {
        cur_p->selected = -1;
        return;
    }

    cur_p->selected = 0;

    // one draw per output even for a single candidate, like the backend sampler, so both stay aligned
    const double rnd = llama_rng_uniform_double(&ctx->rng);

    if (cur_p->size == 1) {
        cur_p->data[0].p = 1.0f;
        return;
    }

    const float max_l = token_data_max_logit(cur_p);

    // unnormalised probabilities in float, their sum in double
    double sum_cum = 0.0;
    for (size_t i = 0; i < cur_p->size; ++i) {
        const float p = expf(cur_p->data[i].logit - max_l);
        cur_p->data[i].p = p;
        sum_cum += p;
    }

    // select and normalise in one pass
    const double sum_tgt = sum_cum * rnd;
    double sum_run = 0.0;
    bool found = false;
    for (size_t i = 0; i < cur_p->size; ++i) {
        if (!found) {
            sum_run += cur_p->data[i].p;
            if (sum_run >= sum_tgt) {
                cur_p->selected = (int64_t) i;
                found = true;
            }
        }
        cur_p->data[i].p = (float) (cur_p->data[i].p / sum_cum);
    }
    if (!found) {
        cur_p->selected = (int64_t) cur_p->size - 1;
    }
}

static void dist_reset_rng(struct sampler_dist * ctx) {
    ctx->seed_cur = llama_sampler_rng_seed(ctx->seed);
    llama_mt19937_seed(&ctx->rng, ctx->seed_cur);
    ctx->rng_backend = ctx->rng;
    ctx->n_backend_draws_generated = 0;
    ctx->n_backend_draws_committed = 0;
}

static void dist_reset(struct llama_sampler * smpl) {
    dist_reset_rng(smpl->ctx);
}

static void dist_accept(struct llama_sampler * smpl, llama_token token) {
    GGML_UNUSED(token);
    struct sampler_dist * ctx = smpl->ctx;
    if (!ctx->backend_transactional || ctx->n_backend_draws_committed >= ctx->n_backend_draws_generated) {
        return;
    }
    // the accepted output used the next staged draw: advance the real stream past it
    (void) llama_rng_uniform_double(&ctx->rng);
    ctx->n_backend_draws_committed++;
}

static void dist_copy_state(const struct llama_sampler * src, struct llama_sampler * dst) {
    const struct sampler_dist * s = src->ctx;
    struct sampler_dist * d = dst->ctx;
    // backend_transactional is decided by the graph dst belongs to
    d->seed_cur                  = s->seed_cur;
    d->rng                       = s->rng;
    d->rng_backend               = s->rng_backend;
    d->n_backend_draws_generated = s->n_backend_draws_generated;
    d->n_backend_draws_committed = s->n_backend_draws_committed;
}

static struct llama_sampler * dist_clone(const struct llama_sampler * smpl) {
    const struct sampler_dist * ctx = smpl->ctx;
    struct llama_sampler * result = llama_sampler_init_dist(ctx->seed);
    if (result) {
        struct sampler_dist * r = result->ctx;
        dist_copy_state(smpl, result);
        r->backend_transactional = ctx->backend_transactional;
    }
    return result;
}

static void dist_free(struct llama_sampler * smpl) {
    struct sampler_dist * ctx = smpl->ctx;
    if (ctx) {
        llama_sampler_inputs_free(&ctx->inp_uniforms);
    }
    llama_sampler_free_ctx(smpl);
}

static bool dist_backend_init(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft, uint32_t n_outputs_max_per_seq) {
    if (!llama_sampler_backend_support(smpl, buft)) {
        return false;
    }
    // several outputs of one sequence per decode: draws are staged until their token is accepted
    llama_sampler_dist_set_transactional(smpl, n_outputs_max_per_seq > 1);
    return true;
}

static void dist_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data) {
    GGML_UNUSED(gf);
    struct sampler_dist * c = smpl->ctx;
    struct ggml_tensor * u = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    ggml_format_name(u, "uniform_%zu", c->inp_uniforms.n);
    ggml_set_input(u);
    if (!llama_sampler_inputs_push(&c->inp_uniforms, u)) {
        return;
    }
    llama_sampler_backend_dist(ctx, data, u);
}

static void dist_backend_set_input(struct llama_sampler * smpl) {
    struct sampler_dist * c = smpl->ctx;
    for (size_t i = 0; i < c->inp_uniforms.n; ++i) {
        float u = 0.0f;
        llama_sampler_dist_draw_backend(smpl, &u, 1);
        if (c->inp_uniforms.t[i]->buffer) {
            ggml_backend_tensor_set(c->inp_uniforms.t[i], &u, 0, sizeof(u));
        }
    }
}

static void dist_backend_reset(struct llama_sampler * smpl) {
    ((struct sampler_dist *) smpl->ctx)->inp_uniforms.n = 0;
}

static struct llama_sampler_i llama_sampler_dist_i = {
    /* .name              = */ dist_name,
    /* .accept            = */ dist_accept,
    /* .apply             = */ dist_apply,
    /* .reset             = */ dist_reset,
    /* .clone             = */ dist_clone,
    /* .free              = */ dist_free,
    /* .backend_init      = */ dist_backend_init,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ dist_backend_apply,
    /* .backend_set_input = */ dist_backend_set_input,
    /* .backend_reset     = */ dist_backend_reset,
    /* .copy_state        = */ dist_copy_state,
};

struct llama_sampler * llama_sampler_init_dist(uint32_t seed) {
    struct sampler_dist * ctx = llama_sampler_ctx_calloc(sizeof(*ctx), __func__);
    if (ctx) {
        ctx->seed = seed;
        dist_reset_rng(ctx);
    }
    return llama_sampler_new_owned(&llama_sampler_dist_i, ctx);
}

bool llama_sampler_is_dist(const struct llama_sampler * smpl) {
    return smpl && smpl->iface == &llama_sampler_dist_i;
}

void llama_sampler_dist_set_transactional(struct llama_sampler * smpl, bool transactional) {
    GGML_ASSERT(llama_sampler_is_dist(smpl));
    struct sampler_dist * ctx = smpl->ctx;
    ctx->backend_transactional     = transactional;
    ctx->rng_backend               = ctx->rng;
    ctx->n_backend_draws_generated = 0;
    ctx->n_backend_draws_committed = 0;
}

void llama_sampler_dist_draw_backend(struct llama_sampler * smpl, float * out, size_t n) {
    GGML_ASSERT(llama_sampler_is_dist(smpl));
    struct sampler_dist * ctx = smpl->ctx;
    // drawn in double and rounded, so the values are those the CPU sampler would use
    struct llama_mt19937 * rng = ctx->backend_transactional ? &ctx->rng_backend : &ctx->rng;
    for (size_t i = 0; i < n; ++i) {
        out[i] = (float) llama_rng_uniform_double(rng);
        if (ctx->backend_transactional) {
            ctx->n_backend_draws_generated++;
        }
    }
}

void llama_sampler_backend_begin(struct llama_sampler * sampler) {
    GGML_ASSERT(sampler != NULL);
    if (llama_sampler_is_chain(sampler)) {
        struct llama_sampler_chain * chain = sampler->ctx;
        for (size_t i = 0; i < chain->n_samplers; ++i) {
            if (!chain->samplers[i].is_backend) {
                break;
            }
            llama_sampler_backend_begin(chain->samplers[i].ptr);
        }
    } else if (llama_sampler_is_dist(sampler)) {
        struct sampler_dist * ctx = sampler->ctx;
        if (ctx->backend_transactional) {
            // replay from the committed position: draws of unaccepted outputs are dropped
            ctx->rng_backend = ctx->rng;
            ctx->n_backend_draws_generated = 0;
            ctx->n_backend_draws_committed = 0;
        }
    }
}

//
// utils
//

uint32_t llama_sampler_get_seed(const struct llama_sampler * smpl) {
    if (!smpl) {
        return LLAMA_DEFAULT_SEED;
    }
    if (smpl->iface == &llama_sampler_dist_i) {
        return ((const struct sampler_dist *) smpl->ctx)->seed_cur;
    }
    const uint32_t seed_mirostat = llama_sampler_mirostat_seed(smpl);
    if (seed_mirostat != LLAMA_DEFAULT_SEED) {
        return seed_mirostat;
    }
    if (smpl->iface == &llama_sampler_chain_i) {
        // the last seeded sampler decides
        const struct llama_sampler_chain * chain = smpl->ctx;
        for (size_t i = chain->n_samplers; i-- > 0;) {
            const uint32_t seed = llama_sampler_get_seed(chain->samplers[i].ptr);
            if (seed != LLAMA_DEFAULT_SEED) {
                return seed;
            }
        }
    }
    return LLAMA_DEFAULT_SEED;
}

//
// perf
//

struct llama_perf_sampler_data llama_perf_sampler(const struct llama_sampler * chain) {
    struct llama_perf_sampler_data data = { 0.0, 0 };
    if (!llama_sampler_is_chain(chain)) {
        LLAMA_LOG_ERROR("%s: invalid sampler passed - requires a sampler created with llama_sampler_chain_init()\n", __func__);
        return data;
    }
    const struct llama_sampler_chain * ctx = chain->ctx;
    data.t_sample_ms = 1e-3 * (double) ctx->t_sample_us;
    data.n_sample    = ctx->n_sample > 0 ? ctx->n_sample : 0;
    return data;
}

void llama_perf_sampler_print(const struct llama_sampler * chain) {
    const struct llama_perf_sampler_data data = llama_perf_sampler(chain);
    LLAMA_LOG_INFO("%s:    samplers time = %10.2f ms / %5d runs\n", __func__, data.t_sample_ms, data.n_sample);
}

void llama_perf_sampler_reset(struct llama_sampler * chain) {
    if (!llama_sampler_is_chain(chain)) {
        LLAMA_LOG_ERROR("%s: invalid sampler passed - requires a sampler created with llama_sampler_chain_init()\n", __func__);
        return;
    }
    struct llama_sampler_chain * ctx = chain->ctx;
    ctx->t_sample_us = 0;
    ctx->n_sample    = 0;
}
