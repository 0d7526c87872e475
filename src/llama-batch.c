#include "llama-batch.h"

#include "llama-impl.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

// ---- public batch helpers ----------------------------------------------------------------------------------

struct llama_batch llama_batch_get_one(llama_token * tokens, int32_t n_tokens) {
    struct llama_batch b = {
        .n_tokens = n_tokens,
        .token    = tokens,
        .embd     = NULL,
        .pos      = NULL,
        .n_seq_id = NULL,
        .seq_id   = NULL,
        .logits   = NULL,
    };
    return b;
}

void llama_batch_free(struct llama_batch batch) {
    free(batch.token);
    free(batch.embd);
    free(batch.pos);
    free(batch.n_seq_id);
    if (batch.seq_id) {
        // the pointer array ends with NULL (llama_batch_init allocates one extra slot)
        for (int32_t i = 0; batch.seq_id[i]; i++) {
            free(batch.seq_id[i]);
        }
        free(batch.seq_id);
    }
    free(batch.logits);
}

struct llama_batch llama_batch_init(int32_t n_tokens, int32_t embd, int32_t n_seq_max) {
    struct llama_batch b;
    memset(&b, 0, sizeof(b));
    if (n_tokens <= 0 || n_seq_max <= 0 || embd < 0) {
        LLAMA_LOG_ERROR("llama_batch_init: invalid sizes n_tokens = %d, embd = %d, n_seq_max = %d\n",
                n_tokens, embd, n_seq_max);
        return b;
    }
    const size_t n = (size_t) n_tokens;
    size_t embd_bytes = 0;
    if (embd > 0 && (ggml_mul_overflow_size(n, (size_t) embd, &embd_bytes) ||
                     ggml_mul_overflow_size(embd_bytes, sizeof(float), &embd_bytes))) {
        LLAMA_LOG_ERROR("llama_batch_init: %d tokens x %d embedding values overflow\n", n_tokens, embd);
        return b;
    }

    bool ok = true;
    if (embd > 0) {
        ok = ok && (b.embd = malloc(embd_bytes)) != NULL;
    } else {
        ok = ok && (b.token = malloc(n * sizeof(llama_token))) != NULL;
    }
    ok = ok && (b.pos      = malloc(n * sizeof(llama_pos))) != NULL;
    ok = ok && (b.n_seq_id = malloc(n * sizeof(int32_t))) != NULL;
    ok = ok && (b.seq_id   = calloc(n + 1, sizeof(llama_seq_id *))) != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        ok = (b.seq_id[i] = malloc((size_t) n_seq_max * sizeof(llama_seq_id))) != NULL;
    }
    ok = ok && (b.logits = malloc(n * sizeof(int8_t))) != NULL;
    if (!ok) {
        LLAMA_LOG_ERROR("llama_batch_init: out of memory for %d tokens\n", n_tokens);
        llama_batch_free(b);
        memset(&b, 0, sizeof(b));
    }
    return b;
}

// ---- sequence sets -----------------------------------------------------------------------------------------

static void seq_set_add(struct llama_seq_set * s, llama_seq_id id) {
    s->w[id / 64] |= (uint64_t) 1 << (id % 64);
}

static bool seq_set_has(const struct llama_seq_set * s, llama_seq_id id) {
    return (s->w[id / 64] >> (id % 64)) & 1;
}

static bool seq_set_overlap(const struct llama_seq_set * a, const struct llama_seq_set * b) {
    for (int i = 0; i < LLAMA_SEQ_WORDS; i++) {
        if (a->w[i] & b->w[i]) {
            return true;
        }
    }
    return false;
}

static bool seq_set_eq(const struct llama_seq_set * a, const struct llama_seq_set * b) {
    return memcmp(a->w, b->w, sizeof(a->w)) == 0;
}

// a is a subset of b
static bool seq_set_sub(const struct llama_seq_set * a, const struct llama_seq_set * b) {
    for (int i = 0; i < LLAMA_SEQ_WORDS; i++) {
        if (a->w[i] & ~b->w[i]) {
            return false;
        }
    }
    return true;
}

static void seq_set_or(struct llama_seq_set * a, const struct llama_seq_set * b) {
    for (int i = 0; i < LLAMA_SEQ_WORDS; i++) {
        a->w[i] |= b->w[i];
    }
}

// ---- allocator ---------------------------------------------------------------------------------------------

void llama_batch_allocr_init_empty(struct llama_batch_allocr * ba) {
    memset(ba, 0, sizeof(*ba));
}

static void release_ubatches(struct llama_batch_allocr * ba) {
    for (size_t i = 0; i < ba->n_ub_mem; i++) {
        free(ba->ub_mem[i]);
    }
    ba->n_ub_mem = 0;
}

void llama_batch_allocr_free(struct llama_batch_allocr * ba) {
    release_ubatches(ba);
    free(ba->ub_mem);
    free(ba->gen_pos);
    free(ba->gen_n_seq_id);
    free(ba->gen_seq_id);
    free(ba->gen_logits);
    free(ba->seq_set);
    free(ba->used);
    free(ba->out_ids);
    llama_batch_allocr_init_empty(ba);
}

void llama_batch_allocr_split_reset(struct llama_batch_allocr * ba) {
    release_ubatches(ba);
    if (ba->used) {
        memset(ba->used, 0, (size_t) ba->batch.n_tokens * sizeof(bool));
    }
    ba->n_used    = 0;
    ba->n_out_ids = 0;
}

bool llama_batch_allocr_done(const struct llama_batch_allocr * ba) {
    return ba->n_used >= (uint32_t) ba->batch.n_tokens;
}

struct seq_pos_pair {
    llama_seq_id s;
    llama_pos    p;
};

static int cmp_seq_pos(const void * a, const void * b) {
    const struct seq_pos_pair * x = a;
    const struct seq_pos_pair * y = b;
    if (x->s != y->s) {
        return x->s < y->s ? -1 : 1;
    }
    return x->p < y->p ? -1 : (x->p > y->p ? 1 : 0);
}

static bool allocr_init_impl(
        struct llama_batch_allocr * ba,
        struct llama_batch batch,
        int32_t n_vocab,
        uint32_t n_embd,
        uint32_t n_seq_max,
        const llama_pos * mem_pos_max,
        bool output_all) {

    if (batch.n_tokens <= 0) {
        LLAMA_LOG_ERROR("llama_batch: n_tokens = %d, the batch is empty\n", batch.n_tokens);
        return false;
    }
    if (!batch.token && !batch.embd) {
        LLAMA_LOG_ERROR("llama_batch: neither token nor embd is set\n");
        return false;
    }
    if (n_seq_max == 0 || n_seq_max > LLAMA_MAX_SEQ) {
        LLAMA_LOG_ERROR("llama_batch: n_seq_max = %u must be in [1, %d]\n", n_seq_max, LLAMA_MAX_SEQ);
        return false;
    }
    const int32_t n = batch.n_tokens;

    if (batch.token && n_vocab > 0) {
        for (int32_t i = 0; i < n; i++) {
            if (batch.token[i] < 0 || batch.token[i] >= n_vocab) {
                LLAMA_LOG_ERROR("llama_batch: invalid token[%d] = %d, the vocabulary has %d tokens\n",
                        i, batch.token[i], n_vocab);
                return false;
            }
        }
    }
    if (batch.seq_id) {
        if (!batch.n_seq_id) {
            LLAMA_LOG_ERROR("llama_batch: seq_id is set but n_seq_id is NULL\n");
            return false;
        }
        for (int32_t i = 0; i < n; i++) {
            if (batch.n_seq_id[i] < 1 || (uint32_t) batch.n_seq_id[i] > n_seq_max) {
                LLAMA_LOG_ERROR("llama_batch: invalid n_seq_id[%d] = %d, must be in [1, %u]\n",
                        i, batch.n_seq_id[i], n_seq_max);
                return false;
            }
            for (int32_t s = 0; s < batch.n_seq_id[i]; s++) {
                const llama_seq_id id = batch.seq_id[i][s];
                if (id < 0 || (uint32_t) id >= n_seq_max) {
                    LLAMA_LOG_ERROR("llama_batch: invalid seq_id[%d][%d] = %d, must be in [0, %u) (n_seq_max)\n",
                            i, s, id, n_seq_max);
                    return false;
                }
            }
        }
    }

    ba->batch     = batch;
    ba->n_embd    = n_embd;
    ba->n_seq_max = n_seq_max;

    const size_t nn = (size_t) n;
    if (!batch.seq_id) {
        ba->gen_n_seq_id = malloc(nn * sizeof(int32_t));
        ba->gen_seq_id   = malloc(nn * sizeof(llama_seq_id *));
        if (!ba->gen_n_seq_id || !ba->gen_seq_id) {
            goto oom;
        }
        ba->gen_seq_id_0 = 0;
        for (int32_t i = 0; i < n; i++) {
            ba->gen_n_seq_id[i] = 1;
            ba->gen_seq_id[i]   = &ba->gen_seq_id_0;
        }
        ba->batch.n_seq_id = ba->gen_n_seq_id;
        ba->batch.seq_id   = ba->gen_seq_id;
    }

    if (!batch.pos) {
        ba->gen_pos = malloc(nn * sizeof(llama_pos));
        if (!ba->gen_pos) {
            goto oom;
        }
        // every sequence continues after what the memory holds; a token shared by several sequences
        // advances all of them
        llama_pos next[LLAMA_MAX_SEQ];
        for (uint32_t s = 0; s < n_seq_max; s++) {
            // INT32_MAX stays as a marker that the sequence cannot grow
            next[s] = !mem_pos_max ? 0 : (mem_pos_max[s] == INT32_MAX ? INT32_MAX : mem_pos_max[s] + 1);
        }
        for (int32_t i = 0; i < n; i++) {
            const llama_pos p = next[ba->batch.seq_id[i][0]];
            if (p == INT32_MAX) {
                // the next position would not fit in llama_pos
                LLAMA_LOG_ERROR("llama_batch: sequence %d has reached the largest position %d\n",
                        ba->batch.seq_id[i][0], (int) INT32_MAX);
                return false;
            }
            ba->gen_pos[i] = p;
            for (int32_t s = 0; s < ba->batch.n_seq_id[i]; s++) {
                next[ba->batch.seq_id[i][s]] = p + 1;
            }
        }
        ba->batch.pos = ba->gen_pos;
    }

    if (!batch.logits || output_all) {
        bool need = !batch.logits;
        for (int32_t i = 0; !need && i < n; i++) {
            need = batch.logits[i] == 0;
        }
        if (need) {
            if (batch.logits) {
                LLAMA_LOG_WARN("llama_batch: embeddings required but some input tokens were not marked as outputs -> overriding\n");
            }
            ba->gen_logits = malloc(nn * sizeof(int8_t));
            if (!ba->gen_logits) {
                goto oom;
            }
            for (int32_t i = 0; i < n; i++) {
                ba->gen_logits[i] = (int8_t) (output_all || i == n - 1);
            }
            ba->batch.logits = ba->gen_logits;
        }
    }
    for (int32_t i = 0; i < n; i++) {
        ba->n_outputs += ba->batch.logits[i] != 0;
    }

    // sequence sets and per-sequence position ranges
    ba->seq_set = calloc(nn, sizeof(struct llama_seq_set));
    ba->used    = calloc(nn, sizeof(bool));
    ba->out_ids = malloc(nn * sizeof(int32_t));
    if (!ba->seq_set || !ba->used || !ba->out_ids) {
        goto oom;
    }
    size_t n_pairs = 0;
    for (uint32_t s = 0; s < LLAMA_MAX_SEQ; s++) {
        ba->seq_pos_min[s] = -1;
        ba->seq_pos_max[s] = -1;
    }
    for (int32_t i = 0; i < n; i++) {
        const llama_pos p = ba->batch.pos[i];
        if (p < 0) {
            LLAMA_LOG_ERROR("llama_batch: invalid pos[%d] = %d, positions must not be negative\n", i, p);
            return false;
        }
        ba->has_cpl = ba->has_cpl || ba->batch.n_seq_id[i] > 1;
        for (int32_t k = 0; k < ba->batch.n_seq_id[i]; k++) {
            const llama_seq_id s = ba->batch.seq_id[i][k];
            seq_set_add(&ba->seq_set[i], s);
            if (ba->seq_pos_min[s] < 0 || p < ba->seq_pos_min[s]) {
                ba->seq_pos_min[s] = p;
            }
            if (p > ba->seq_pos_max[s]) {
                ba->seq_pos_max[s] = p;
            }
            n_pairs++;
        }
    }

    for (uint32_t s = 0; s < n_seq_max; s++) {
        if (ba->seq_pos_min[s] < 0 || !mem_pos_max) {
            continue;
        }
        const llama_pos x = mem_pos_max[s];
        if (x >= 0 && ba->seq_pos_min[s] <= x) {
            LLAMA_LOG_ERROR("llama_batch: the tokens of sequence %u in the input batch have inconsistent sequence positions: "
                    "the memory holds positions up to X = %d, the batch starts at Y = %d; "
                    "it is required that the sequence positions remain consecutive: Y = X + 1\n",
                    s, x, ba->seq_pos_min[s]);
            return false;
        }
    }

    // no holes: each sequence's distinct positions must fill [min, max]
    {
        struct seq_pos_pair * pairs = malloc(n_pairs * sizeof(*pairs));
        if (!pairs) {
            goto oom;
        }
        size_t k = 0;
        for (int32_t i = 0; i < n; i++) {
            for (int32_t j = 0; j < ba->batch.n_seq_id[i]; j++) {
                pairs[k].s = ba->batch.seq_id[i][j];
                pairs[k].p = ba->batch.pos[i];
                k++;
            }
        }
        qsort(pairs, n_pairs, sizeof(*pairs), cmp_seq_pos);
        bool ok = true;
        for (size_t a = 0; a < n_pairs && ok;) {
            const llama_seq_id s = pairs[a].s;
            size_t distinct = 0;
            size_t b = a;
            for (; b < n_pairs && pairs[b].s == s; b++) {
                distinct += b == a || pairs[b].p != pairs[b - 1].p;
            }
            // in 64 bits: max - min + 1 overflows llama_pos for a batch spanning [0, INT32_MAX]
            const int64_t span = (int64_t) ba->seq_pos_max[s] - ba->seq_pos_min[s] + 1;
            if ((int64_t) distinct < span) {
                LLAMA_LOG_ERROR("llama_batch: sequence %d positions are not continuous: %zu distinct positions in [%d, %d]\n",
                        s, distinct, ba->seq_pos_min[s], ba->seq_pos_max[s]);
                ok = false;
            }
            a = b;
        }
        free(pairs);
        if (!ok) {
            return false;
        }
    }
    return true;

oom:
    LLAMA_LOG_ERROR("llama_batch: out of memory for a batch of %d tokens\n", n);
    return false;
}

bool llama_batch_allocr_init(
        struct llama_batch_allocr * ba,
        struct llama_batch batch,
        int32_t n_vocab,
        uint32_t n_embd,
        uint32_t n_seq_max,
        const llama_pos * mem_pos_max,
        bool output_all) {
    llama_batch_allocr_free(ba);
    if (!allocr_init_impl(ba, batch, n_vocab, n_embd, n_seq_max, mem_pos_max, output_all)) {
        // nothing half-initialised survives a failure: splitting it yields empty ubatches
        llama_batch_allocr_free(ba);
        return false;
    }
    return true;
}

// ---- ubatches ----------------------------------------------------------------------------------------------

static void * carve(uint8_t ** p, size_t bytes) {
    void * r = *p;
    *p += (bytes + 15) & ~(size_t) 15;
    return r;
}

static struct llama_ubatch empty_ubatch(void) {
    struct llama_ubatch u;
    memset(&u, 0, sizeof(u));
    return u;
}

// builds the ubatch of the given batch indices (already marked used)
static struct llama_ubatch ubatch_make(struct llama_batch_allocr * ba, const int32_t * idxs, uint32_t n,
        uint32_t n_seqs, bool equal_seqs) {
    const struct llama_batch * b = &ba->batch;
    const size_t embd_row = (size_t) ba->n_embd * sizeof(float);

    size_t bytes = 0;
    const size_t parts[] = {
        b->token ? n * sizeof(llama_token) : 0,
        b->embd ? n * embd_row : 0,
        n * sizeof(llama_pos),
        n * sizeof(int32_t),
        n * sizeof(llama_seq_id *),
        LLAMA_MAX_SEQ * sizeof(llama_seq_id),
        LLAMA_MAX_SEQ * sizeof(int32_t),
        n * sizeof(int8_t),
        n * sizeof(int32_t),
    };
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        bytes += (parts[i] + 15) & ~(size_t) 15;
    }
    if (ba->n_ub_mem == ba->cap_ub_mem) {
        const size_t cap = ba->cap_ub_mem ? 2 * ba->cap_ub_mem : 8;
        void ** m = realloc(ba->ub_mem, cap * sizeof(void *));
        if (!m) {
            LLAMA_LOG_ERROR("llama_batch: out of memory for a ubatch\n");
            return empty_ubatch();
        }
        ba->ub_mem = m;
        ba->cap_ub_mem = cap;
    }
    uint8_t * mem = malloc(bytes);
    if (!mem) {
        LLAMA_LOG_ERROR("llama_batch: out of memory for a ubatch of %u tokens\n", n);
        return empty_ubatch();
    }
    ba->ub_mem[ba->n_ub_mem++] = mem;

    struct llama_ubatch u = empty_ubatch();
    uint8_t * p = mem;
    u.token      = b->token ? carve(&p, parts[0]) : NULL;
    u.embd       = b->embd ? carve(&p, parts[1]) : NULL;
    u.pos        = carve(&p, parts[2]);
    u.n_seq_id   = carve(&p, parts[3]);
    u.seq_id     = carve(&p, parts[4]);
    u.seq_id_unq = carve(&p, parts[5]);
    u.seq_idx    = carve(&p, parts[6]);
    u.output     = carve(&p, parts[7]);
    u.idx        = carve(&p, parts[8]);

    struct llama_seq_set all;
    memset(&all, 0, sizeof(all));
    for (uint32_t i = 0; i < n; i++) {
        const int32_t j = idxs[i];
        if (u.token) {
            u.token[i] = b->token[j];
        }
        if (u.embd) {
            memcpy(u.embd + (size_t) i * ba->n_embd, b->embd + (size_t) j * ba->n_embd, embd_row);
        }
        u.pos[i]      = b->pos[j];
        u.n_seq_id[i] = b->n_seq_id[j];
        u.seq_id[i]   = b->seq_id[j];
        u.output[i]   = b->logits[j];
        u.idx[i]      = j;
        seq_set_or(&all, &ba->seq_set[j]);
        if (b->logits[j]) {
            ba->out_ids[ba->n_out_ids++] = j;
        }
    }
    for (int32_t s = 0; s < LLAMA_MAX_SEQ; s++) {
        u.seq_idx[s] = -1;
        if (seq_set_has(&all, s)) {
            u.seq_idx[s] = (int32_t) u.n_seqs_unq;
            u.seq_id_unq[u.n_seqs_unq++] = s;
        }
    }

    u.equal_seqs   = equal_seqs;
    u.n_tokens     = n;
    u.n_seqs       = n_seqs;
    u.n_seq_tokens = n_seqs > 0 ? n / n_seqs : 0;
    u.n_pos        = 1;
    return u;
}

struct llama_ubatch llama_batch_allocr_split_simple(struct llama_batch_allocr * ba, uint32_t n_ubatch) {
    const int32_t n = ba->batch.n_tokens;
    if (n_ubatch == 0 || !ba->used || llama_batch_allocr_done(ba)) {
        return empty_ubatch();
    }
    int32_t * idxs = malloc((size_t) (n_ubatch < (uint32_t) n ? n_ubatch : (uint32_t) n) * sizeof(int32_t));
    if (!idxs) {
        return empty_ubatch();
    }
    uint32_t k = 0;
    for (int32_t i = 0; i < n && k < n_ubatch; i++) {
        if (!ba->used[i]) {
            idxs[k++] = i;
            ba->used[i] = true;
            ba->n_used++;
        }
    }
    struct llama_ubatch u = ubatch_make(ba, idxs, k, 1, false);
    free(idxs);
    return u;
}

// Unused tokens of sequence set s in batch order, stopping at the first unused token whose set overlaps s
// without being s: taking later tokens of s past it would run that sequence's tokens out of order.
static uint32_t collect_set(const struct llama_batch_allocr * ba, int32_t first, const struct llama_seq_set * s,
        int32_t * out, uint32_t max) {
    uint32_t k = 0;
    for (int32_t i = first; i < ba->batch.n_tokens && k < max; i++) {
        if (ba->used[i]) {
            continue;
        }
        if (seq_set_eq(&ba->seq_set[i], s)) {
            out[k++] = i;
        } else if (seq_set_overlap(&ba->seq_set[i], s)) {
            break;
        }
    }
    return k;
}

struct llama_ubatch llama_batch_allocr_split_equal(struct llama_batch_allocr * ba, uint32_t n_ubatch, bool sequential) {
    const int32_t n = ba->batch.n_tokens;
    if (n_ubatch == 0 || !ba->used || llama_batch_allocr_done(ba)) {
        return empty_ubatch();
    }
    if (sequential && ba->has_cpl) {
        LLAMA_LOG_ERROR("llama_batch: sequential split is not supported when there are coupled sequences in the "
                "input batch (you may need to use the -kvu flag)\n");
        return empty_ubatch();
    }

    // choose the sequence sets: first-come, disjoint from each other and from every set seen earlier but
    // not taken (those tokens must run first)
    int32_t * first = malloc((size_t) n * sizeof(int32_t));
    int32_t * idxs  = malloc((size_t) n * sizeof(int32_t));
    uint32_t * cnt  = malloc((size_t) n * sizeof(uint32_t));
    if (!first || !idxs || !cnt) {
        free(first);
        free(idxs);
        free(cnt);
        LLAMA_LOG_ERROR("llama_batch: out of memory\n");
        return empty_ubatch();
    }
    uint32_t n_sets = 0;
    struct llama_seq_set taken, blocked;
    memset(&taken, 0, sizeof(taken));
    memset(&blocked, 0, sizeof(blocked));
    llama_seq_id last_seq = -1;
    for (int32_t i = 0; i < n && n_sets < n_ubatch; i++) {
        if (ba->used[i]) {
            continue;
        }
        const struct llama_seq_set * s = &ba->seq_set[i];
        bool add = !seq_set_overlap(s, &taken) && !seq_set_overlap(s, &blocked);
        if (sequential) {
            add = add && (n_sets == 0 || ba->batch.seq_id[i][0] == last_seq + 1);
        }
        if (add) {
            first[n_sets++] = i;
            seq_set_or(&taken, s);
            last_seq = ba->batch.seq_id[i][0];
        } else {
            bool already = false;
            for (uint32_t k = 0; k < n_sets && !already; k++) {
                already = seq_set_eq(s, &ba->seq_set[first[k]]);
            }
            if (!already) {
                seq_set_or(&blocked, s);
            }
        }
    }

    // tokens per set: the shortest set's run, within n_ubatch
    uint32_t k_tok = n_ubatch / n_sets;
    for (uint32_t k = 0; k < n_sets; k++) {
        cnt[k] = collect_set(ba, first[k], &ba->seq_set[first[k]], idxs, (uint32_t) n);
        if (cnt[k] < k_tok) {
            k_tok = cnt[k];
        }
    }
    uint32_t total = 0;
    for (uint32_t k = 0; k < n_sets; k++) {
        collect_set(ba, first[k], &ba->seq_set[first[k]], idxs + total, k_tok);
        total += k_tok;
    }
    for (uint32_t i = 0; i < total; i++) {
        ba->used[idxs[i]] = true;
    }
    ba->n_used += total;

    struct llama_ubatch u = ubatch_make(ba, idxs, total, n_sets, true);
    free(first);
    free(idxs);
    free(cnt);
    return u;
}

struct llama_ubatch llama_batch_allocr_split_seq(struct llama_batch_allocr * ba, uint32_t n_ubatch) {
    const int32_t n = ba->batch.n_tokens;
    if (n_ubatch == 0 || !ba->used || llama_batch_allocr_done(ba)) {
        return empty_ubatch();
    }
    int32_t i = 0;
    while (i < n && ba->used[i]) {
        i++;
    }
    int32_t * idxs = malloc((size_t) n * sizeof(int32_t));
    if (!idxs) {
        return empty_ubatch();
    }
    struct llama_seq_set cur = ba->seq_set[i];
    uint32_t k = 0;
    for (; i < n && k < n_ubatch; i++) {
        if (ba->used[i]) {
            continue;
        }
        if (seq_set_sub(&ba->seq_set[i], &cur)) {
            // narrowing: later tokens must belong to every sequence of this one
            cur = ba->seq_set[i];
            idxs[k++] = i;
            ba->used[i] = true;
            ba->n_used++;
        } else if (seq_set_overlap(&ba->seq_set[i], &cur)) {
            // a token that shares a sequence with the current set must run before any later token of it
            break;
        }
    }
    struct llama_ubatch u = ubatch_make(ba, idxs, k, 1, true);
    free(idxs);
    return u;
}
