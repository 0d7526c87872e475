// KV cache cells, slot search, masks, K-shift, the llama_memory_* API and the cache part of saved states.
#include "llama-kv-cache.h"

#include "llama-impl.h"
#include "llama-model.h"

#include "ggml-cpu.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline bool seq_has(const struct llama_seq_set * s, llama_seq_id id) {
    return (s->w[id / 64] >> (id % 64)) & 1u;
}

static inline void seq_add_id(struct llama_seq_set * s, llama_seq_id id) {
    s->w[id / 64] |= (uint64_t) 1 << (id % 64);
}

static inline void seq_del_id(struct llama_seq_set * s, llama_seq_id id) {
    s->w[id / 64] &= ~((uint64_t) 1 << (id % 64));
}

static inline bool seq_empty(const struct llama_seq_set * s) {
    for (int i = 0; i < LLAMA_SEQ_WORDS; i++) {
        if (s->w[i]) {
            return false;
        }
    }
    return true;
}

static void cell_clear(struct llama_memory_i * kv, uint32_t i) {
    if (kv->cells[i].pos >= 0) {
        kv->used--;
    }
    kv->cells[i].pos   = -1;
    kv->cells[i].delta = 0;
    memset(&kv->cells[i].seq, 0, sizeof(kv->cells[i].seq));
}

static bool holds_layer(const struct llama_memory_i * kv, uint32_t il) {
    switch (kv->layers) {
        case LLAMA_KV_LAYERS_NON_SWA: return !llama_hparams_is_swa(&kv->model->hparams, il);
        case LLAMA_KV_LAYERS_SWA:     return  llama_hparams_is_swa(&kv->model->hparams, il);
        default:                      return true;
    }
}

static bool type_ok(enum ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16 || t == GGML_TYPE_Q8_0 ||
           t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1 ||
           t == GGML_TYPE_IQ4_NL;
}

struct llama_memory_i * llama_kv_cache_init(
        const struct llama_model * model, uint32_t size, enum ggml_type type_k, enum ggml_type type_v,
        bool v_trans, uint32_t n_seq_max, bool unified, enum llama_kv_layers layers,
        const struct llama_kv_rope * rope) {
    const struct llama_hparams * hp = &model->hparams;
    if (!type_ok(type_k) || !type_ok(type_v) || (v_trans && ggml_is_quantized(type_v))) {
        LLAMA_LOG_ERROR("llama_kv_cache_init: unsupported KV cache type (type_k = %s, type_v = %s)\n",
                ggml_type_name(type_k), ggml_type_name(type_v));
        return NULL;
    }
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        if (llama_hparams_n_embd_k_gqa(hp, il) % ggml_blck_size(type_k) != 0 ||
            hp->n_embd_head_k % ggml_blck_size(type_k) != 0 ||
            llama_hparams_n_embd_v_gqa(hp, il) % ggml_blck_size(type_v) != 0) {
            LLAMA_LOG_ERROR("llama_kv_cache_init: head size %u is not a multiple of the %s/%s block size\n",
                    hp->n_embd_head_k, ggml_type_name(type_k), ggml_type_name(type_v));
            return NULL;
        }
    }
    struct llama_memory_i * kv = calloc(1, sizeof(*kv));
    if (!kv) {
        LLAMA_LOG_ERROR("llama_kv_cache_init: out of memory\n");
        return NULL;
    }
    kv->model     = model;
    kv->layers    = layers;
    kv->size      = size;
    kv->n_seq_max = n_seq_max;
    kv->unified   = unified;
    // like llama.cpp's per-sequence streams: without a unified cache each sequence owns an equal share
    kv->seq_cap   = unified || n_seq_max == 0 ? size : size / n_seq_max;
    kv->type_k    = type_k;
    kv->type_v    = type_v;
    kv->v_trans   = v_trans;
    kv->rope      = *rope;
    kv->cells     = calloc(size, sizeof(*kv->cells));
    kv->k         = calloc(hp->n_layer ? hp->n_layer : 1, sizeof(*kv->k));
    kv->v         = calloc(hp->n_layer ? hp->n_layer : 1, sizeof(*kv->v));
    if (!kv->cells || !kv->k || !kv->v) {
        LLAMA_LOG_ERROR("llama_kv_cache_init: out of memory for the bookkeeping of %u cells (is n_ctx too large?)\n", size);
        llama_kv_cache_free(kv);
        return NULL;
    }
    for (uint32_t i = 0; i < size; i++) {
        kv->cells[i].pos = -1;
    }
    struct ggml_init_params ip = {
        .mem_size   = 2u * (hp->n_layer + 1) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    kv->ctx = ggml_init(ip);
    if (!kv->ctx) {
        LLAMA_LOG_ERROR("llama_kv_cache_init: out of memory for the tensor headers\n");
        llama_kv_cache_free(kv);
        return NULL;
    }
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        if (!holds_layer(kv, il)) {
            continue;
        }
        kv->k[il] = ggml_new_tensor_2d(kv->ctx, type_k, llama_hparams_n_embd_k_gqa(hp, il), size);
        kv->v[il] = v_trans ? ggml_new_tensor_2d(kv->ctx, type_v, size, llama_hparams_n_embd_v_gqa(hp, il))
                            : ggml_new_tensor_2d(kv->ctx, type_v, llama_hparams_n_embd_v_gqa(hp, il), size);
        ggml_format_name(kv->k[il], "cache_k_l%u", il);
        ggml_format_name(kv->v[il], "cache_v_l%u", il);
    }
    size_t total = 0;
    uint32_t n_held = 0;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        if (!kv->k[il]) {
            continue;
        }
        n_held++;
        total += ggml_backend_buft_get_alloc_size(ggml_backend_cpu_buffer_type(), kv->k[il]) + 64;
        total += ggml_backend_buft_get_alloc_size(ggml_backend_cpu_buffer_type(), kv->v[il]) + 64;
    }
    kv->buf = ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), total ? total : 64);
    if (!kv->buf) {
        LLAMA_LOG_ERROR("llama_kv_cache_init: failed to allocate %zu bytes for the KV cache\n", total);
        llama_kv_cache_free(kv);
        return NULL;
    }
    ggml_backend_buffer_set_usage(kv->buf, GGML_BACKEND_BUFFER_USAGE_COMPUTE);
    uint8_t * base = ggml_backend_buffer_get_base(kv->buf);
    const size_t align = ggml_backend_buffer_get_alignment(kv->buf);
    size_t off = 0;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        struct ggml_tensor * ts[2] = { kv->k[il], kv->v[il] };
        for (int j = 0; j < 2 && ts[0]; j++) {
            off = (off + align - 1) / align * align;
            if (ggml_backend_tensor_alloc(kv->buf, ts[j], base + off) != GGML_STATUS_SUCCESS) {
                LLAMA_LOG_ERROR("llama_kv_cache_init: failed to place tensor %s\n", ts[j]->name);
                llama_kv_cache_free(kv);
                return NULL;
            }
            off += ggml_backend_buffer_get_alloc_size(kv->buf, ts[j]);
        }
    }
    // stale data behind empty cells is masked, but NaN bit patterns times a 0 weight would still poison V sums
    ggml_backend_buffer_clear(kv->buf, 0);
    LLAMA_LOG_INFO("llama_kv_cache%s: size = %7.2f MiB (%6u cells, %3u layers, %2u seqs), K (%s), V (%s%s)\n",
            layers == LLAMA_KV_LAYERS_SWA ? "_swa" : "", (double) total / (1024.0 * 1024.0), size, n_held,
            n_seq_max, ggml_type_name(type_k), ggml_type_name(type_v), v_trans ? ", transposed" : "");
    return kv;
}

void llama_kv_cache_free(struct llama_memory_i * kv) {
    if (!kv) {
        return;
    }
    llama_kv_cache_free(kv->swa);
    if (kv->buf) {
        ggml_backend_buffer_free(kv->buf);
    }
    if (kv->ctx) {
        ggml_free(kv->ctx);
    }
    free(kv->k);
    free(kv->v);
    free(kv->cells);
    free(kv);
}

struct llama_kv_cell * llama_kv_cache_cells_save(const struct llama_memory_i * kv) {
    struct llama_kv_cell * c = malloc((size_t) kv->size * sizeof(*c));
    if (c) {
        memcpy(c, kv->cells, (size_t) kv->size * sizeof(*c));
    }
    return c;
}

void llama_kv_cache_cells_restore(struct llama_memory_i * kv, struct llama_kv_cell * saved,
        const int64_t * written, uint32_t n_written) {
    if (!saved) {
        return;
    }
    memcpy(kv->cells, saved, (size_t) kv->size * sizeof(*saved));
    free(saved);
    for (uint32_t i = 0; i < n_written; i++) {
        struct llama_kv_cell * c = &kv->cells[written[i]];
        c->pos   = -1;
        c->delta = 0;
        memset(&c->seq, 0, sizeof(c->seq));
    }
    kv->used = 0;
    kv->has_shift = false;
    for (uint32_t i = 0; i < kv->size; i++) {
        kv->used      += kv->cells[i].pos >= 0;
        kv->has_shift |= kv->cells[i].delta != 0;
    }
}

void llama_kv_cache_drop_cells(struct llama_memory_i * kv, const int64_t * idxs, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        cell_clear(kv, (uint32_t) idxs[i]);
    }
}

// SWA cache: a cell may be overwritten once it is outside the window of each of its sequences' next query
// position (the sequence's first position in ub, else one past its last cached position): the window only
// moves forward, so such a cell can never be attended again. Like llama.cpp, such cells are kept until the
// ring needs them, so that recent history stays available to seq_rm + re-decode for as long as possible.
struct swa_next {
    llama_pos pos[LLAMA_MAX_SEQ];
};

static void swa_next_positions(const struct llama_memory_i * kv, const struct llama_ubatch * ub, struct swa_next * nx) {
    for (int s = 0; s < LLAMA_MAX_SEQ; s++) {
        nx->pos[s] = -1;
    }
    for (uint32_t i = 0; i < kv->size; i++) {
        const struct llama_kv_cell * c = &kv->cells[i];
        for (int w = 0; c->pos >= 0 && w < LLAMA_SEQ_WORDS; w++) {
            for (uint64_t bits = c->seq.w[w]; bits; bits &= bits - 1) {
                const int s = w * 64 + __builtin_ctzll(bits);
                nx->pos[s] = c->pos + 1 > nx->pos[s] ? c->pos + 1 : nx->pos[s];
            }
        }
    }
    for (uint32_t i = 0; i < ub->n_tokens; i++) {
        for (int32_t k = 0; k < ub->n_seq_id[i]; k++) {
            const llama_seq_id s = ub->seq_id[i][k];
            if (nx->pos[s] < 0 || ub->pos[i] < nx->pos[s]) {
                nx->pos[s] = ub->pos[i];
            }
        }
    }
}

// an empty cell, or (SWA cache) one that left the window of all its sequences
static bool cell_reusable(const struct llama_memory_i * kv, uint32_t i, const struct swa_next * nx) {
    const struct llama_kv_cell * c = &kv->cells[i];
    if (c->pos < 0) {
        return true;
    }
    if (!nx) {
        return false;
    }
    const struct llama_hparams * hp = &kv->model->hparams;
    for (int w = 0; w < LLAMA_SEQ_WORDS; w++) {
        for (uint64_t bits = c->seq.w[w]; bits; bits &= bits - 1) {
            const int s = w * 64 + __builtin_ctzll(bits);
            if (!llama_hparams_is_masked_swa(hp->n_swa, hp->swa_type, c->pos, nx->pos[s])) {
                return false;
            }
        }
    }
    return true;
}

bool llama_kv_cache_find_slot(struct llama_memory_i * kv, const struct llama_ubatch * ub, int64_t * idxs) {
    struct swa_next next;
    const struct swa_next * nx = NULL;
    if (kv->layers == LLAMA_KV_LAYERS_SWA) {
        swa_next_positions(kv, ub, &next);
        nx = &next;
    }
    uint32_t n_free = kv->size - kv->used;
    for (uint32_t i = 0; nx && i < kv->size; i++) {
        n_free += kv->cells[i].pos >= 0 && cell_reusable(kv, i, nx);
    }
    if (ub->n_tokens > n_free) {
        return false;
    }
    if (kv->seq_cap < kv->size) {
        for (uint32_t u = 0; u < ub->n_seqs_unq; u++) {
            const llama_seq_id s = ub->seq_id_unq[u];
            uint32_t n_new = 0, n_have = 0;
            for (uint32_t i = 0; i < ub->n_tokens; i++) {
                for (int32_t k = 0; k < ub->n_seq_id[i]; k++) {
                    n_new += ub->seq_id[i][k] == s;
                }
            }
            for (uint32_t i = 0; i < kv->size; i++) {
                n_have += seq_has(&kv->cells[i].seq, s) && !cell_reusable(kv, i, nx);
            }
            if (n_have + n_new > kv->seq_cap) {
                return false;
            }
        }
    }
    if (kv->used == 0) {
        kv->head = 0; // keep an empty cache compact so n_kv stays small
    }
    // per sequence, the highest position whose cell was overwritten (SWA reuse)
    llama_pos rm_max[LLAMA_MAX_SEQ];
    bool any_rm = false;
    uint32_t c = kv->head;
    for (uint32_t i = 0; i < ub->n_tokens; i++) {
        uint32_t tries = 0;
        while (!cell_reusable(kv, c, nx)) {
            c = (c + 1) % kv->size;
            if (++tries > kv->size) {
                return false;
            }
        }
        struct llama_kv_cell * cell = &kv->cells[c];
        if (cell->pos >= 0) {
            if (!any_rm) {
                for (int s = 0; s < LLAMA_MAX_SEQ; s++) {
                    rm_max[s] = -1;
                }
                any_rm = true;
            }
            for (int w = 0; w < LLAMA_SEQ_WORDS; w++) {
                for (uint64_t bits = cell->seq.w[w]; bits; bits &= bits - 1) {
                    const int s = w * 64 + __builtin_ctzll(bits);
                    rm_max[s] = cell->pos > rm_max[s] ? cell->pos : rm_max[s];
                }
            }
            cell_clear(kv, c);
        }
        cell->pos   = ub->pos[i];
        cell->delta = 0;
        memset(&cell->seq, 0, sizeof(cell->seq));
        for (int32_t s = 0; s < ub->n_seq_id[i]; s++) {
            seq_add_id(&cell->seq, ub->seq_id[i][s]);
        }
        kv->used++;
        idxs[i] = c;
        c = (c + 1) % kv->size;
    }
    kv->head = c;
    // keep every sequence's cached positions one contiguous range: drop what is older than an overwritten
    // cell (it left the window as well)
    for (int s = 0; any_rm && s < LLAMA_MAX_SEQ; s++) {
        if (rm_max[s] < 0) {
            continue;
        }
        for (uint32_t i = 0; i < kv->size; i++) {
            struct llama_kv_cell * cell = &kv->cells[i];
            if (cell->pos >= 0 && cell->pos <= rm_max[s] && seq_has(&cell->seq, s)) {
                seq_del_id(&cell->seq, s);
                if (seq_empty(&cell->seq)) {
                    cell_clear(kv, i);
                }
            }
        }
    }
    return true;
}

uint32_t llama_kv_cache_n_kv(const struct llama_memory_i * kv) {
    uint32_t last = 0;
    for (uint32_t i = kv->size; i > 0; i--) {
        if (kv->cells[i - 1].pos >= 0) {
            last = i;
            break;
        }
    }
    // round up so consecutive decodes see the same shapes most of the time
    uint32_t n = (last + 31) / 32 * 32;
    if (n == 0) {
        n = 32;
    }
    return n < kv->size ? n : kv->size;
}

void llama_kv_cache_fill_mask(const struct llama_memory_i * kv, const struct llama_ubatch * ub, uint32_t n_kv,
        bool causal, bool swa, float * dst) {
    const struct llama_hparams * hp = &kv->model->hparams;
    for (uint32_t i = 0; i < ub->n_tokens; i++) {
        const llama_seq_id s  = ub->seq_id[i][0];
        const llama_pos    p1 = ub->pos[i];
        float * row = dst + (size_t) i * n_kv;
        for (uint32_t j = 0; j < n_kv; j++) {
            const struct llama_kv_cell * cell = &kv->cells[j];
            bool masked = cell->pos < 0 || !seq_has(&cell->seq, s);
            if (!masked && causal && cell->pos > p1) {
                masked = true;
            }
            if (!masked && swa && llama_hparams_is_masked_swa(hp->n_swa, hp->swa_type, cell->pos, p1)) {
                masked = true;
            }
            row[j] = masked ? -INFINITY : 0.0f;
        }
    }
}

bool llama_kv_cache_build_shift(struct llama_memory_i * kv, struct ggml_context * ctx0, struct ggml_cgraph * gf,
        struct ggml_tensor ** pos_input) {
    const struct llama_model * model = kv->model;
    const struct llama_hparams * hp = &model->hparams;
    bool any = false;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        any |= kv->k[il] != NULL;
    }
    if (!any) {
        *pos_input = NULL;
        return false;
    }
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx0, GGML_TYPE_I32, kv->size);
    ggml_set_name(pos, "kv_shift_pos");
    ggml_set_input(pos);
    *pos_input = pos;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const bool is_swa = llama_hparams_is_swa(hp, il);
        const uint32_t n_head_kv = llama_hparams_n_head_kv(hp, il);
        struct ggml_tensor * k = kv->k[il];
        if (!k) {
            continue;
        }
        struct ggml_tensor * view = ggml_view_3d(ctx0, k, hp->n_embd_head_k, n_head_kv, kv->size,
                ggml_row_size(k->type, hp->n_embd_head_k), k->nb[1], 0);
        struct ggml_tensor * cur = view;
        if (k->type != GGML_TYPE_F32) {
            cur = ggml_cast(ctx0, view, GGML_TYPE_F32);
        }
        cur = ggml_rope_ext(ctx0, cur, pos, model->layers[il].rope_freqs, (int) hp->n_rot, (int) hp->rope_type,
                (int) kv->rope.n_ctx_orig,
                is_swa ? kv->rope.freq_base_swa : kv->rope.freq_base,
                is_swa ? kv->rope.freq_scale_swa : kv->rope.freq_scale,
                kv->rope.ext_factor, kv->rope.attn_factor, kv->rope.beta_fast, kv->rope.beta_slow);
        ggml_build_forward_expand(gf, ggml_cpy(ctx0, cur, view));
    }
    return true;
}

void llama_kv_cache_fill_shift(const struct llama_memory_i * kv, int32_t * dst) {
    for (uint32_t i = 0; i < kv->size; i++) {
        dst[i] = kv->cells[i].pos >= 0 ? kv->cells[i].delta : 0;
    }
}

void llama_kv_cache_shift_done(struct llama_memory_i * kv) {
    for (uint32_t i = 0; i < kv->size; i++) {
        kv->cells[i].delta = 0;
    }
    kv->has_shift = false;
}

llama_pos llama_kv_cache_seq_pos_max(const struct llama_memory_i * kv, llama_seq_id seq_id) {
    llama_pos r = -1;
    if (seq_id < 0 || seq_id >= LLAMA_MAX_SEQ) {
        return -1;
    }
    for (uint32_t i = 0; i < kv->size; i++) {
        if (kv->cells[i].pos > r && seq_has(&kv->cells[i].seq, seq_id)) {
            r = kv->cells[i].pos;
        }
    }
    return r;
}

void llama_kv_cache_seq_pos_max_all(const struct llama_memory_i * kv, llama_pos * pos_max) {
    for (int s = 0; s < LLAMA_MAX_SEQ; s++) {
        pos_max[s] = -1;
    }
    for (uint32_t i = 0; i < kv->size; i++) {
        const struct llama_kv_cell * c = &kv->cells[i];
        for (int w = 0; c->pos >= 0 && w < LLAMA_SEQ_WORDS; w++) {
            for (uint64_t bits = c->seq.w[w]; bits; bits &= bits - 1) {
                const int s = w * 64 + __builtin_ctzll(bits);
                pos_max[s] = c->pos > pos_max[s] ? c->pos : pos_max[s];
            }
        }
    }
}

// ---- llama_memory_* ---------------------------------------------------------------------------------------

static llama_pos kv_seq_pos_min(const struct llama_memory_i * kv, llama_seq_id seq_id);

static bool seq_ok(const struct llama_memory_i * mem, llama_seq_id s, const char * fn) {
    if (s < 0 || (uint32_t) s >= mem->n_seq_max) {
        LLAMA_LOG_ERROR("%s: seq_id %d is out of range [0, %u)\n", fn, s, mem->n_seq_max);
        return false;
    }
    return true;
}

static void range_fix(llama_pos * p0, llama_pos * p1) {
    if (*p0 < 0) {
        *p0 = 0;
    }
    if (*p1 < 0) {
        *p1 = INT32_MAX;
    }
}

void llama_memory_clear(llama_memory_t mem, bool data) {
    if (!mem) {
        return;
    }
    for (uint32_t i = 0; i < mem->size; i++) {
        mem->cells[i].pos   = -1;
        mem->cells[i].delta = 0;
        memset(&mem->cells[i].seq, 0, sizeof(mem->cells[i].seq));
    }
    mem->used = 0;
    mem->head = 0;
    mem->has_shift = false;
    if (data && mem->buf) {
        ggml_backend_buffer_clear(mem->buf, 0);
    }
    llama_memory_clear(mem->swa, data);
}

// iSWA: after removing the positions from p0 on, decoding resumes at p0 and its window must still be in the
// small cache. False when a position of the full cache that p0 would see has already been overwritten there.
static bool swa_window_kept(const struct llama_memory_i * mem, llama_seq_id s, llama_pos p0) {
    const struct llama_hparams * hp = &mem->model->hparams;
    const llama_pos swa_min = kv_seq_pos_min(mem->swa, s);
    for (uint32_t i = 0; i < mem->size; i++) {
        const struct llama_kv_cell * c = &mem->cells[i];
        if (c->pos >= 0 && c->pos < p0 && seq_has(&c->seq, s) && (swa_min < 0 || c->pos < swa_min) &&
            !llama_hparams_is_masked_swa(hp->n_swa, hp->swa_type, c->pos, p0)) {
            return false;
        }
    }
    return true;
}

bool llama_memory_seq_rm(llama_memory_t mem, llama_seq_id seq_id, llama_pos p0, llama_pos p1) {
    if (!mem) {
        return false;
    }
    if (seq_id >= 0 && !seq_ok(mem, seq_id, __func__)) {
        return false;
    }
    range_fix(&p0, &p1);
    // Cutting a sequence's tail with an iSWA cache only works while the window of the new end is still cached;
    // otherwise refuse (nothing removed), as for memory that cannot remove part of a sequence, so that the
    // caller re-decodes from the start instead of attending to overwritten cells. (llama.cpp returns true here
    // and leaves the check to the caller through llama_memory_seq_pos_min.)
    if (mem->swa && p0 > 0) {
        for (llama_seq_id s = seq_id < 0 ? 0 : seq_id; s < (seq_id < 0 ? (llama_seq_id) mem->n_seq_max : seq_id + 1); s++) {
            if (p1 > llama_kv_cache_seq_pos_max(mem, s) && !swa_window_kept(mem, s, p0)) {
                return false;
            }
        }
    }
    for (uint32_t i = 0; i < mem->size; i++) {
        struct llama_kv_cell * c = &mem->cells[i];
        if (c->pos < 0 || c->pos < p0 || c->pos >= p1) {
            continue;
        }
        if (seq_id < 0) {
            cell_clear(mem, i);
        } else if (seq_has(&c->seq, seq_id)) {
            seq_del_id(&c->seq, seq_id);
            if (seq_empty(&c->seq)) {
                cell_clear(mem, i);
            }
        }
    }
    if (mem->swa) {
        llama_memory_seq_rm(mem->swa, seq_id, p0, p1);
    }
    return true;
}

void llama_memory_seq_cp(llama_memory_t mem, llama_seq_id seq_id_src, llama_seq_id seq_id_dst,
        llama_pos p0, llama_pos p1) {
    if (!mem || !seq_ok(mem, seq_id_src, __func__) || !seq_ok(mem, seq_id_dst, __func__) ||
        seq_id_src == seq_id_dst) {
        return;
    }
    range_fix(&p0, &p1);
    for (uint32_t i = 0; i < mem->size; i++) {
        struct llama_kv_cell * c = &mem->cells[i];
        if (c->pos >= p0 && c->pos < p1 && seq_has(&c->seq, seq_id_src)) {
            seq_add_id(&c->seq, seq_id_dst);
        }
    }
    if (mem->swa) {
        llama_memory_seq_cp(mem->swa, seq_id_src, seq_id_dst, p0, p1);
    }
}

void llama_memory_seq_keep(llama_memory_t mem, llama_seq_id seq_id) {
    if (!mem || !seq_ok(mem, seq_id, __func__)) {
        return;
    }
    for (uint32_t i = 0; i < mem->size; i++) {
        struct llama_kv_cell * c = &mem->cells[i];
        if (c->pos < 0) {
            continue;
        }
        if (!seq_has(&c->seq, seq_id)) {
            cell_clear(mem, i);
        } else {
            memset(&c->seq, 0, sizeof(c->seq));
            seq_add_id(&c->seq, seq_id);
        }
    }
    if (mem->swa) {
        llama_memory_seq_keep(mem->swa, seq_id);
    }
}

void llama_memory_seq_add(llama_memory_t mem, llama_seq_id seq_id, llama_pos p0, llama_pos p1, llama_pos delta) {
    if (!mem || !seq_ok(mem, seq_id, __func__) || delta == 0) {
        return;
    }
    range_fix(&p0, &p1);
    if (p0 == p1) {
        return;
    }
    for (uint32_t i = 0; i < mem->size; i++) {
        struct llama_kv_cell * c = &mem->cells[i];
        if (c->pos < p0 || c->pos >= p1 || !seq_has(&c->seq, seq_id)) {
            continue;
        }
        // 64-bit so a shift past INT32_MAX drops the cell instead of overflowing
        const int64_t np = (int64_t) c->pos + delta;
        mem->has_shift = true;
        if (np < 0 || np > INT32_MAX) {
            cell_clear(mem, i);
            continue;
        }
        c->delta += (llama_pos) (np - c->pos);
        c->pos    = (llama_pos) np;
    }
    if (mem->swa) {
        llama_memory_seq_add(mem->swa, seq_id, p0, p1, delta);
    }
}

void llama_memory_seq_div(llama_memory_t mem, llama_seq_id seq_id, llama_pos p0, llama_pos p1, int d) {
    if (!mem || !seq_ok(mem, seq_id, __func__) || d == 1) {
        return;
    }
    if (d < 1) {
        LLAMA_LOG_ERROR("%s: divisor %d must be > 0\n", __func__, d);
        return;
    }
    range_fix(&p0, &p1);
    for (uint32_t i = 0; i < mem->size; i++) {
        struct llama_kv_cell * c = &mem->cells[i];
        if (c->pos < p0 || c->pos >= p1 || !seq_has(&c->seq, seq_id)) {
            continue;
        }
        const llama_pos np = c->pos / d;
        c->delta += np - c->pos;
        c->pos = np;
        mem->has_shift = true;
    }
    if (mem->swa) {
        llama_memory_seq_div(mem->swa, seq_id, p0, p1, d);
    }
}

static llama_pos kv_seq_pos_min(const struct llama_memory_i * kv, llama_seq_id seq_id) {
    llama_pos r = -1;
    for (uint32_t i = 0; i < kv->size; i++) {
        const struct llama_kv_cell * c = &kv->cells[i];
        if (c->pos >= 0 && seq_has(&c->seq, seq_id) && (r < 0 || c->pos < r)) {
            r = c->pos;
        }
    }
    return r;
}

// With an SWA cache both answers come from it, as llama.cpp's iSWA cache reports (the full cache holds a
// superset): pos_min tells callers which positions can still be attended by every layer, so that after
// seq_rm only positions whose window is still cached are re-decoded.
llama_pos llama_memory_seq_pos_min(llama_memory_t mem, llama_seq_id seq_id) {
    if (!mem || seq_id < 0 || seq_id >= LLAMA_MAX_SEQ) {
        return -1;
    }
    return kv_seq_pos_min(mem->swa ? mem->swa : mem, seq_id);
}

llama_pos llama_memory_seq_pos_max(llama_memory_t mem, llama_seq_id seq_id) {
    return mem ? llama_kv_cache_seq_pos_max(mem->swa ? mem->swa : mem, seq_id) : -1;
}

bool llama_memory_can_shift(llama_memory_t mem) {
    return mem != NULL && mem->model->hparams.rope_type != LLAMA_ROPE_TYPE_NONE;
}

// ---- state ------------------------------------------------------------------------------------------------
// Layout: u32 n_cells, then per cell i32 pos + u32 n_seq + n_seq * i32 ids (the ids only for the whole cache),
// then per layer the cache holds: K rows of those cells, V rows of those cells (row sizes are checked on read
// through the header u32 n_layer + per layer u64 k_row, u64 v_row); then the swa child's part, same layout.

struct wbuf {
    uint8_t * p;
    size_t cap;
    size_t n;
};

static void wput(struct wbuf * w, const void * src, size_t n) {
    if (w->p && w->n + n <= w->cap) {
        memcpy(w->p + w->n, src, n);
    }
    w->n += n;
}

static uint32_t n_held_layers(const struct llama_memory_i * kv) {
    uint32_t n = 0;
    for (uint32_t il = 0; il < kv->model->hparams.n_layer; il++) {
        n += kv->k[il] != NULL;
    }
    return n;
}

static bool cell_selected(const struct llama_kv_cell * c, llama_seq_id seq_id) {
    return c->pos >= 0 && (seq_id < 0 || seq_has(&c->seq, seq_id));
}

// The stream always holds one row per cell, whatever the layout: a state saved with flash attention (V rows)
// loads into a context without it (V transposed) and back.
static uint64_t cell_row_size(const struct llama_memory_i * kv, const struct ggml_tensor * t, bool is_v) {
    return is_v && kv->v_trans ? (uint64_t) t->ne[1] * ggml_type_size(t->type) : (uint64_t) t->nb[1];
}

// the row of cell i of t into dst / from src; a transposed V row is gathered / scattered one element per
// channel, straight in the CPU buffer that holds the cache
static void cell_row_get(const struct llama_memory_i * kv, const struct ggml_tensor * t, bool is_v, uint32_t i,
        uint8_t * dst) {
    if (!(is_v && kv->v_trans)) {
        ggml_backend_tensor_get(t, dst, (size_t) i * t->nb[1], t->nb[1]);
        return;
    }
    const size_t es = ggml_type_size(t->type);
    for (int64_t c = 0; c < t->ne[1]; c++) {
        memcpy(dst + (size_t) c * es, (const char *) t->data + (size_t) c * t->nb[1] + (size_t) i * es, es);
    }
}

static void cell_row_set(const struct llama_memory_i * kv, struct ggml_tensor * t, bool is_v, uint32_t i,
        const uint8_t * src) {
    if (!(is_v && kv->v_trans)) {
        ggml_backend_tensor_set(t, src, (size_t) i * t->nb[1], t->nb[1]);
        return;
    }
    const size_t es = ggml_type_size(t->type);
    for (int64_t c = 0; c < t->ne[1]; c++) {
        memcpy((char *) t->data + (size_t) c * t->nb[1] + (size_t) i * es, src + (size_t) c * es, es);
    }
}

size_t llama_kv_cache_state_write(const struct llama_memory_i * kv, llama_seq_id seq_id, uint8_t * dst, size_t cap) {
    const struct llama_hparams * hp = &kv->model->hparams;
    struct wbuf w = { dst, cap, 0 };
    uint32_t n = 0;
    for (uint32_t i = 0; i < kv->size; i++) {
        n += cell_selected(&kv->cells[i], seq_id);
    }
    wput(&w, &n, sizeof(n));
    for (uint32_t i = 0; i < kv->size; i++) {
        const struct llama_kv_cell * c = &kv->cells[i];
        if (!cell_selected(c, seq_id)) {
            continue;
        }
        wput(&w, &c->pos, sizeof(c->pos));
        uint32_t ns = 0;
        if (seq_id < 0) {
            for (llama_seq_id s = 0; s < LLAMA_MAX_SEQ; s++) {
                ns += seq_has(&c->seq, s);
            }
        }
        wput(&w, &ns, sizeof(ns));
        if (seq_id < 0) {
            for (llama_seq_id s = 0; s < LLAMA_MAX_SEQ; s++) {
                if (seq_has(&c->seq, s)) {
                    wput(&w, &s, sizeof(s));
                }
            }
        }
    }
    const uint32_t n_layer = n_held_layers(kv);
    wput(&w, &n_layer, sizeof(n_layer));
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        struct ggml_tensor * ts[2] = { kv->k[il], kv->v[il] };
        for (int j = 0; j < 2 && ts[0]; j++) {
            const uint64_t row = cell_row_size(kv, ts[j], j == 1);
            wput(&w, &row, sizeof(row));
            for (uint32_t i = 0; i < kv->size; i++) {
                if (!cell_selected(&kv->cells[i], seq_id)) {
                    continue;
                }
                if (w.p && w.n + row <= w.cap) {
                    cell_row_get(kv, ts[j], j == 1, i, w.p + w.n);
                }
                w.n += row;
            }
        }
    }
    if (kv->swa) {
        w.n += llama_kv_cache_state_write(kv->swa, seq_id, w.p && w.n <= w.cap ? w.p + w.n : NULL,
                w.p && w.n <= w.cap ? w.cap - w.n : 0);
    }
    return w.n;
}

struct rbuf {
    const uint8_t * p;
    size_t n;
    size_t off;
    bool err;
};

static void rget(struct rbuf * r, void * dst, size_t n) {
    if (r->err || r->off + n > r->n) {
        r->err = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p + r->off, n);
    r->off += n;
}

size_t llama_kv_cache_state_read(struct llama_memory_i * kv, llama_seq_id seq_id, const uint8_t * src, size_t n) {
    const struct llama_hparams * hp = &kv->model->hparams;
    struct rbuf r = { src, n, 0, false };
    uint32_t n_cells = 0;
    rget(&r, &n_cells, sizeof(n_cells));
    if (r.err || n_cells > kv->size) {
        LLAMA_LOG_ERROR("llama_state: KV cache part holds %u cells, the cache has %u\n", n_cells, kv->size);
        return 0;
    }
    if (seq_id < 0) {
        llama_memory_clear(kv, false);
    } else {
        llama_memory_seq_rm(kv, seq_id, -1, -1);
        if (n_cells > kv->size - kv->used) {
            LLAMA_LOG_ERROR("llama_state: no room for %u cells of sequence %d\n", n_cells, seq_id);
            return 0;
        }
    }
    uint32_t * where = malloc((n_cells ? n_cells : 1) * sizeof(uint32_t));
    if (!where) {
        return 0;
    }
    uint32_t c = 0;
    for (uint32_t k = 0; k < n_cells && !r.err; k++) {
        llama_pos pos = 0;
        uint32_t ns = 0;
        rget(&r, &pos, sizeof(pos));
        rget(&r, &ns, sizeof(ns));
        while (c < kv->size && kv->cells[c].pos >= 0) {
            c++;
        }
        if (r.err || c >= kv->size || pos < 0 || ns > LLAMA_MAX_SEQ || (seq_id >= 0 && ns != 0)) {
            r.err = true;
            break;
        }
        struct llama_kv_cell * cell = &kv->cells[c];
        memset(&cell->seq, 0, sizeof(cell->seq));
        if (seq_id >= 0) {
            seq_add_id(&cell->seq, seq_id);
        }
        for (uint32_t s = 0; s < ns; s++) {
            llama_seq_id id = -1;
            rget(&r, &id, sizeof(id));
            if (r.err || id < 0 || (uint32_t) id >= kv->n_seq_max) {
                r.err = true;
                break;
            }
            seq_add_id(&cell->seq, id);
        }
        if (r.err || seq_empty(&cell->seq)) {
            r.err = true;
            break;
        }
        cell->pos = pos;
        cell->delta = 0;
        kv->used++;
        where[k] = c;
    }
    uint32_t n_layer = 0;
    rget(&r, &n_layer, sizeof(n_layer));
    if (!r.err && n_layer != n_held_layers(kv)) {
        LLAMA_LOG_ERROR("llama_state: KV cache part has %u layers, this cache %u (model or swa_full differs)\n",
                n_layer, n_held_layers(kv));
        r.err = true;
    }
    for (uint32_t il = 0; il < hp->n_layer && !r.err; il++) {
        struct ggml_tensor * ts[2] = { kv->k[il], kv->v[il] };
        for (int j = 0; j < 2 && ts[0] && !r.err; j++) {
            uint64_t row = 0;
            rget(&r, &row, sizeof(row));
            if (r.err || row != cell_row_size(kv, ts[j], j == 1) || r.off + row * n_cells > r.n) {
                LLAMA_LOG_ERROR("llama_state: KV cache layer %u: row size or data length does not match "
                        "(type or model differs)\n", il);
                r.err = true;
                break;
            }
            for (uint32_t k = 0; k < n_cells; k++) {
                cell_row_set(kv, ts[j], j == 1, where[k], r.p + r.off);
                r.off += row;
            }
        }
    }
    free(where);
    if (!r.err && kv->swa) {
        const size_t n_swa = llama_kv_cache_state_read(kv->swa, seq_id, r.p + r.off, r.n - r.off);
        r.err = n_swa == 0;
        r.off += n_swa;
    }
    if (r.err) {
        LLAMA_LOG_ERROR("llama_state: malformed KV cache data\n");
        if (seq_id < 0) {
            llama_memory_clear(kv, false);
        } else {
            llama_memory_seq_rm(kv, seq_id, -1, -1);
        }
        return 0;
    }
    return r.off;
}
