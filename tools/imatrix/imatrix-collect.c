// Collection of the importance matrix from the scheduler's eval callback (llama.cpp's collect_imatrix).
#include "imatrix-collect.h"

#include "ggml-backend.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imatrix_collector_init(struct imatrix_collector * c, int32_t chunk_size, bool process_output) {
    memset(c, 0, sizeof(*c));
    c->chunk_size     = chunk_size > 0 ? chunk_size : 1;
    c->process_output = process_output;
}

void imatrix_collector_free(struct imatrix_collector * c) {
    for (int32_t i = 0; i < c->n_entries; i++) {
        free(c->entries[i].name);
        free(c->entries[i].sums);
        free(c->entries[i].counts);
    }
    free(c->entries);
    for (int32_t i = 0; i < c->n_datasets; i++) {
        free(c->datasets[i]);
    }
    free(c->datasets);
    free(c->scratch);
    free(c->scratch_ids);
    memset(c, 0, sizeof(*c));
}

static bool fail(struct imatrix_collector * c, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof(c->err), fmt, ap);
    va_end(ap);
    c->failed = true;
    return false;
}

struct imatrix_entry * imatrix_find(struct imatrix_collector * c, const char * name) {
    // a model has a few hundred weights at most and each lookup is followed by a whole matrix of work
    for (int32_t i = 0; i < c->n_entries; i++) {
        if (strcmp(c->entries[i].name, name) == 0) {
            return &c->entries[i];
        }
    }
    return NULL;
}

struct imatrix_entry * imatrix_add(struct imatrix_collector * c, const char * name, int64_t n_vals, int64_t n_counts) {
    if (c->n_entries == c->cap_entries) {
        const int32_t cap = c->cap_entries ? 2 * c->cap_entries : 64;
        struct imatrix_entry * grown = realloc(c->entries, (size_t) cap * sizeof(*grown));
        if (!grown) {
            return NULL;
        }
        c->entries = grown;
        c->cap_entries = cap;
    }
    struct imatrix_entry e;
    e.name     = malloc(strlen(name) + 1);
    e.n_vals   = n_vals;
    e.n_counts = n_counts;
    e.sums     = calloc((size_t) n_vals, sizeof(double));
    e.counts   = calloc((size_t) n_counts, sizeof(int64_t));
    if (!e.name || !e.sums || !e.counts) {
        free(e.name);
        free(e.sums);
        free(e.counts);
        return NULL;
    }
    memcpy(e.name, name, strlen(name) + 1);
    c->entries[c->n_entries] = e;
    return &c->entries[c->n_entries++];
}

// a weight copied to another backend is named "<backend>#<name>#<n>": the weight is <name>
static void weight_name(const char * name, char * out, size_t out_size) {
    const char * p = strchr(name, '#');
    size_t len;
    if (p) {
        p++;
        const char * q = strchr(p, '#');
        len = q ? (size_t) (q - p) : strlen(p);
    } else {
        p = name;
        len = strlen(name);
    }
    if (len >= out_size) {
        len = out_size - 1;
    }
    memcpy(out, p, len);
    out[len] = '\0';
}

// host-readable data of t: its own memory when that is host memory, else a copy in *buf (grown as needed)
static const char * host_data(struct imatrix_collector * c, const struct ggml_tensor * t, void ** buf, size_t * buf_size) {
    if (t->buffer == NULL || ggml_backend_buffer_is_host(t->buffer)) {
        return (const char *) t->data;
    }
    const size_t n = ggml_nbytes(t);
    if (*buf_size < n) {
        void * grown = realloc(*buf, n);
        if (!grown) {
            fail(c, "out of memory copying %s (%zu bytes)", t->name, n);
            return NULL;
        }
        *buf = grown;
        *buf_size = n;
    }
    ggml_backend_tensor_get(t, *buf, 0, n);
    return (const char *) *buf;
}

static bool wanted(const struct imatrix_collector * c, const struct ggml_tensor * t) {
    if (t->op == GGML_OP_MUL_MAT_ID) {
        return t->src[0] && t->src[1] && t->src[2];
    }
    if (t->op != GGML_OP_MUL_MAT || !t->src[0] || !t->src[1]) {
        return false;
    }
    const struct ggml_tensor * src1 = t->src[1];
    // llama.cpp skips batches of fewer than 16 rows (single-token decodes, outputs of a few rows)
    if (src1->ne[1] < 16 || src1->type != GGML_TYPE_F32) {
        return false;
    }
    char name[GGML_MAX_NAME + 1];
    weight_name(t->src[0]->name, name, sizeof(name));
    return strncmp(name, "blk.", 4) == 0 || (c->process_output && strcmp(name, "output.weight") == 0);
}

static bool sums_finite(const struct imatrix_entry * e) {
    for (int64_t j = 0; j < e->n_vals; j++) {
        if (!isfinite(e->sums[j])) {
            return false;
        }
    }
    return true;
}

// the squared rows of src1 added per expert, as chosen by ids
static bool collect_mul_mat_id(struct imatrix_collector * c, const struct ggml_tensor * t, const char * wname) {
    const struct ggml_tensor * src0 = t->src[0];
    const struct ggml_tensor * src1 = t->src[1];
    const struct ggml_tensor * ids  = t->src[2];
    const int64_t n_as  = src0->ne[2];
    const int64_t n_ids = ids->ne[0];
    const int64_t n_row = src1->ne[0];

    if (src1->type != GGML_TYPE_F32 || ids->type != GGML_TYPE_I32 || src1->nb[0] != sizeof(float)) {
        return fail(c, "%s: unexpected input types of %s", wname, ggml_op_name(t->op));
    }
    if (ids->ne[1] != src1->ne[2] || src1->ne[3] != 1) {
        // a fourth dimension would need a place in the file
        return fail(c, "%s: unexpected input shape of %s", wname, ggml_op_name(t->op));
    }

    struct imatrix_entry * e = imatrix_find(c, wname);
    if (!e) {
        e = imatrix_add(c, wname, n_row * n_as, n_as);
        if (!e) {
            return fail(c, "out of memory");
        }
    }
    if (e->n_counts == 1 && n_as > 1 && e->n_vals == n_row * n_as) {
        // an older file kept one count for all experts: give each expert that count
        int64_t * counts = malloc((size_t) n_as * sizeof(int64_t));
        if (!counts) {
            return fail(c, "out of memory");
        }
        for (int64_t i = 0; i < n_as; i++) {
            counts[i] = e->counts[0];
        }
        free(e->counts);
        e->counts = counts;
        e->n_counts = n_as;
    }
    if (e->n_vals != n_row * n_as) {
        return fail(c, "inconsistent size for %s (%lld vs %lld)", wname, (long long) e->n_vals, (long long) (n_row * n_as));
    }
    if (e->n_counts != n_as) {
        return fail(c, "inconsistent expert count for %s (%lld vs %lld)", wname, (long long) e->n_counts, (long long) n_as);
    }

    const char * ids_data = host_data(c, ids, &c->scratch_ids, &c->scratch_ids_size);
    if (!ids_data) {
        return false;
    }
    const char * data = host_data(c, src1, &c->scratch, &c->scratch_size);
    if (!data) {
        return false;
    }
    for (int64_t row = 0; row < src1->ne[2]; row++) {
        for (int64_t idx = 0; idx < n_ids; idx++) {
            int32_t ex;
            memcpy(&ex, ids_data + row * ids->nb[1] + idx * ids->nb[0], sizeof(ex));
            if (ex < 0 || ex >= n_as) {
                return fail(c, "%s: expert id %d out of range [0, %lld)", wname, ex, (long long) n_as);
            }
            const float * x = (const float *) (data + (idx % src1->ne[1]) * src1->nb[1] + row * src1->nb[2]);
            double * s = e->sums + (int64_t) ex * n_row;
            for (int64_t j = 0; j < n_row; j++) {
                s[j] += (double) x[j] * (double) x[j];
            }
            e->counts[ex]++;
        }
    }
    if (!sums_finite(e)) {
        return fail(c, "non-finite values detected in %s", wname);
    }
    return true;
}

// the squared rows of src1 added per matrix of src0 (one matrix for a 2D weight)
static bool collect_mul_mat(struct imatrix_collector * c, const struct ggml_tensor * t, const char * wname) {
    const struct ggml_tensor * src0 = t->src[0];
    const struct ggml_tensor * src1 = t->src[1];
    const int64_t n_mat = src0->ne[2] * src0->ne[3];
    const int64_t n_row = src1->ne[0];

    if (src1->nb[0] != sizeof(float)) {
        return fail(c, "%s: non-contiguous rows in the input of %s", wname, ggml_op_name(t->op));
    }
    struct imatrix_entry * e = imatrix_find(c, wname);
    if (!e) {
        e = imatrix_add(c, wname, n_row * n_mat, 1);
        if (!e) {
            return fail(c, "out of memory");
        }
    }
    if (e->n_vals != n_row * n_mat) {
        return fail(c, "inconsistent size for %s (%lld vs %lld)", wname, (long long) e->n_vals, (long long) (n_row * n_mat));
    }
    if (e->n_counts > 1) {
        // a dense weight keeps one count (a merged file may have stored it per matrix, all equal)
        bool all_equal = true;
        for (int64_t i = 1; i < e->n_counts; i++) {
            all_equal = all_equal && e->counts[i] == e->counts[0];
        }
        if (all_equal) {
            e->n_counts = 1;
        }
    }

    const char * data = host_data(c, src1, &c->scratch, &c->scratch_size);
    if (!data) {
        return false;
    }
    for (int64_t i3 = 0; i3 < src1->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < src1->ne[2]; i2++) {
            // src1 broadcasts over src0's matrices; more src1 matrices than weights fold onto them
            const int64_t mat = (i3 % src0->ne[3]) * src0->ne[2] + (i2 % src0->ne[2]);
            double * s = e->sums + mat * n_row;
            for (int64_t row = 0; row < src1->ne[1]; row++) {
                const float * x = (const float *) (data + row * src1->nb[1] + i2 * src1->nb[2] + i3 * src1->nb[3]);
                for (int64_t j = 0; j < n_row; j++) {
                    s[j] += (double) x[j] * (double) x[j];
                }
            }
        }
    }
    const int64_t rows = src1->ne[1] * src1->ne[2] * src1->ne[3] / n_mat;
    for (int64_t i = 0; i < e->n_counts; i++) {
        e->counts[i] += rows;
    }
    if (!sums_finite(e)) {
        return fail(c, "non-finite values detected in %s", wname);
    }
    return true;
}

bool imatrix_collect(struct ggml_tensor * t, bool ask, void * user_data) {
    struct imatrix_collector * c = user_data;
    if (c->failed) {
        return false;
    }
    if (ask) {
        return wanted(c, t);
    }
    char wname[GGML_MAX_NAME + 1];
    weight_name(t->src[0]->name, wname, sizeof(wname));
    return t->op == GGML_OP_MUL_MAT_ID ? collect_mul_mat_id(c, t, wname) : collect_mul_mat(c, t, wname);
}

void imatrix_update_last_chunk(struct imatrix_collector * c) {
    int64_t max_count = 0;
    for (int32_t i = 0; i < c->n_entries; i++) {
        for (int64_t k = 0; k < c->entries[i].n_counts; k++) {
            if (c->entries[i].counts[k] > max_count) {
                max_count = c->entries[i].counts[k];
            }
        }
    }
    c->last_chunk = (int32_t) (max_count / c->chunk_size);
}
