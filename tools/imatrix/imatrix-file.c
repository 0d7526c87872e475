// The imatrix GGUF file: written by llama-imatrix, read back by --in-file (and by llama-quantize --imatrix).
// Layout (llama.cpp's): general.type = "imatrix", imatrix.datasets (string array), imatrix.chunk_count (u32),
// imatrix.chunk_size (u32); per weight <name>.in_sum2 F32 [n_per_row, n_mat] and <name>.counts F32 [1, n_mat].
#include "imatrix-collect.h"

#include "gguf.h"
#include "log.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KV_DATASETS    "imatrix.datasets"
#define KV_CHUNK_COUNT "imatrix.chunk_count"
#define KV_CHUNK_SIZE  "imatrix.chunk_size"

static bool set_err(struct imatrix_collector * c, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof(c->err), fmt, ap);
    va_end(ap);
    return false;
}

static int cmp_entry_name(const void * a, const void * b) {
    const struct imatrix_entry * const * x = a;
    const struct imatrix_entry * const * y = b;
    return strcmp((*x)->name, (*y)->name);
}

static bool ends_with(const char * s, const char * suffix, size_t * stem_len) {
    const size_t n = strlen(s), m = strlen(suffix);
    if (n <= m || strcmp(s + n - m, suffix) != 0) {
        return false;
    }
    *stem_len = n - m;
    return true;
}

bool imatrix_save(struct imatrix_collector * c, const char * fname, const char * dataset) {
    bool ok = false;
    struct ggml_context * ctx = NULL;
    struct gguf_context * gg = NULL;
    const char ** names = NULL;
    char * tmp = NULL;

    const struct imatrix_entry ** order = malloc(((size_t) c->n_entries + 1) * sizeof(*order));
    if (!order) {
        return set_err(c, "out of memory");
    }
    size_t mem = 1024;
    bool warned = false;
    for (int32_t i = 0; i < c->n_entries; i++) {
        const struct imatrix_entry * e = &c->entries[i];
        order[i] = e;
        int64_t n_zeros = 0;
        for (int64_t k = 0; k < e->n_counts; k++) {
            n_zeros += e->counts[k] == 0;
        }
        // experts the text never routed to: written anyway (readers fill them in), as llama.cpp does
        if (n_zeros > 0) {
            if (!warned) {
                LOG_INF("\n");
                warned = true;
            }
            LOG_WRN("%s: entry '%40s' has partial data (%.2f%%)\n", __func__, e->name,
                    100.0 * (double) (e->n_counts - n_zeros) / (double) e->n_counts);
        }
        mem += 2 * ggml_tensor_overhead() + (size_t) (e->n_vals + e->n_counts) * sizeof(float) + 2 * GGML_MEM_ALIGN;
    }
    qsort(order, (size_t) c->n_entries, sizeof(*order), cmp_entry_name);

    struct ggml_init_params ip = { mem, NULL, false };
    ctx = ggml_init(ip);
    gg = gguf_init_empty();
    names = malloc(((size_t) c->n_datasets + 1) * sizeof(*names));
    if (!ctx || !gg || !names) {
        set_err(c, "out of memory");
        goto done;
    }
    int32_t n_names = 0;
    for (int32_t i = 0; i < c->n_datasets; i++) {
        names[n_names++] = c->datasets[i];
    }
    if (dataset && dataset[0]) {
        names[n_names++] = dataset;
    }
    gguf_set_val_str(gg, "general.type", "imatrix");
    gguf_set_arr_str(gg, KV_DATASETS, names, (size_t) n_names);
    gguf_set_val_u32(gg, KV_CHUNK_COUNT, (uint32_t) c->last_chunk);
    gguf_set_val_u32(gg, KV_CHUNK_SIZE, (uint32_t) c->chunk_size);

    for (int32_t i = 0; i < c->n_entries; i++) {
        const struct imatrix_entry * e = order[i];
        struct ggml_tensor * s2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, e->n_vals / e->n_counts, e->n_counts);
        struct ggml_tensor * cn = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, e->n_counts);
        if (!s2 || !cn) {
            set_err(c, "out of memory");
            goto done;
        }
        ggml_format_name(s2, "%s.in_sum2", e->name);
        ggml_format_name(cn, "%s.counts", e->name);
        float * d2 = s2->data;
        for (int64_t j = 0; j < e->n_vals; j++) {
            d2[j] = (float) e->sums[j];
        }
        float * dc = cn->data;
        for (int64_t k = 0; k < e->n_counts; k++) {
            dc[k] = (float) e->counts[k];
        }
        gguf_add_tensor(gg, s2);
        gguf_add_tensor(gg, cn);
    }

    tmp = malloc(strlen(fname) + 16);
    if (!tmp) {
        set_err(c, "out of memory");
        goto done;
    }
    sprintf(tmp, "%s.tmp", fname);
    if (!gguf_write_to_file(gg, tmp, false)) {
        unlink(tmp);
        set_err(c, "failed to write %s", tmp);
        goto done;
    }
    if (rename(tmp, fname) != 0) {
        set_err(c, "failed to rename %s to %s: %s", tmp, fname, strerror(errno));
        unlink(tmp);
        goto done;
    }
    ok = true;

done:
    free(tmp);
    free(names);
    free(order);
    if (gg) {
        gguf_free(gg);
    }
    if (ctx) {
        ggml_free(ctx);
    }
    return ok;
}

// one weight of a file being loaded: its in_sum2 and counts tensors
struct loaded_pair {
    char name[GGML_MAX_NAME + 1];
    const struct ggml_tensor * sums;
    const struct ggml_tensor * counts;
};

// checks the pair against the file's rules and against what the collector holds already
static bool check_pair(struct imatrix_collector * c, const char * fname, const struct loaded_pair * p) {
    if (!p->sums || !p->counts) {
        return set_err(c, "%s: mismatched sums and counts for %s", fname, p->name);
    }
    if (p->sums->type != GGML_TYPE_F32 || p->counts->type != GGML_TYPE_F32) {
        return set_err(c, "%s: %s: in_sum2 and counts must be F32", fname, p->name);
    }
    const int64_t n_vals = ggml_nelements(p->sums), n_counts = ggml_nelements(p->counts);
    if (n_vals < 1 || n_counts < 1 || n_vals % n_counts != 0 || p->sums->ne[1] != n_counts) {
        return set_err(c, "%s: %s: in_sum2 shape [%lld, %lld] does not fit %lld counts", fname, p->name,
                       (long long) p->sums->ne[0], (long long) p->sums->ne[1], (long long) n_counts);
    }
    const float * s = p->sums->data;
    for (int64_t j = 0; j < n_vals; j++) {
        if (!isfinite(s[j]) || s[j] < 0) {
            return set_err(c, "%s: %s: invalid sum of squares %g", fname, p->name, (double) s[j]);
        }
    }
    const float * k = p->counts->data;
    for (int64_t j = 0; j < n_counts; j++) {
        if (!isfinite(k[j]) || k[j] < 0 || k[j] > 9.0e15f) {
            return set_err(c, "%s: %s: invalid count %g", fname, p->name, (double) k[j]);
        }
    }
    const struct imatrix_entry * e = imatrix_find(c, p->name);
    if (e) {
        if (e->n_vals != n_vals) {
            return set_err(c, "%s: mismatched sums size for %s: %lld != %lld", fname, p->name, (long long) n_vals,
                           (long long) e->n_vals);
        }
        if (e->n_counts != n_counts && !(e->n_counts == 1 && n_counts > 1)) {
            return set_err(c, "%s: mismatched counts size for %s: %lld != %lld", fname, p->name,
                           (long long) n_counts, (long long) e->n_counts);
        }
    }
    return true;
}

static bool merge_pair(struct imatrix_collector * c, const struct loaded_pair * p) {
    const int64_t n_vals = ggml_nelements(p->sums), n_counts = ggml_nelements(p->counts);
    struct imatrix_entry * e = imatrix_find(c, p->name);
    if (!e) {
        e = imatrix_add(c, p->name, n_vals, n_counts);
        if (!e) {
            return set_err(c, "out of memory");
        }
    } else if (e->n_counts == 1 && n_counts > 1) {
        // the held data kept one count: broadcast it to every matrix
        int64_t * counts = malloc((size_t) n_counts * sizeof(int64_t));
        if (!counts) {
            return set_err(c, "out of memory");
        }
        for (int64_t k = 0; k < n_counts; k++) {
            counts[k] = e->counts[0];
        }
        free(e->counts);
        e->counts = counts;
        e->n_counts = n_counts;
    }
    const float * s = p->sums->data;
    for (int64_t j = 0; j < n_vals; j++) {
        e->sums[j] += s[j];
    }
    const float * k = p->counts->data;
    for (int64_t j = 0; j < n_counts; j++) {
        e->counts[j] += llroundf(k[j]);
    }
    return true;
}

bool imatrix_load(struct imatrix_collector * c, const char * fname) {
    struct ggml_context * ctx = NULL;
    struct gguf_init_params gp = { false, &ctx };
    struct gguf_context * gg = gguf_init_from_file(fname, gp);
    if (!gg) {
        FILE * f = fopen(fname, "rb");
        if (!f) {
            return set_err(c, "failed to open %s: %s", fname, strerror(errno));
        }
        fclose(f);
        return set_err(c, "%s is not a GGUF imatrix file (the legacy .dat format is not supported)", fname);
    }
    bool ok = false;
    struct loaded_pair * pairs = NULL;
    int64_t n_pairs = 0;
    char ** new_datasets = NULL;
    size_t n_new_datasets = 0;

    const int64_t n_tensors = gguf_get_n_tensors(gg);
    const int64_t kt = gguf_find_key(gg, "general.type");
    if (kt >= 0 && (gguf_get_kv_type(gg, kt) != GGUF_TYPE_STRING || strcmp(gguf_get_val_str(gg, kt), "imatrix") != 0)) {
        set_err(c, "%s is not an imatrix file (general.type is not \"imatrix\")", fname);
        goto done;
    }
    if (n_tensors < 1) {
        set_err(c, "no data in file %s", fname);
        goto done;
    }
    pairs = calloc((size_t) n_tensors, sizeof(*pairs));
    if (!pairs) {
        set_err(c, "out of memory");
        goto done;
    }
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        size_t stem = 0;
        bool is_sums = ends_with(t->name, ".in_sum2", &stem);
        bool is_counts = !is_sums && ends_with(t->name, ".counts", &stem);
        if (!is_sums && !is_counts) {
            continue; // .in_sum (newer llama.cpp) and anything else: not used here
        }
        int64_t i = 0;
        while (i < n_pairs && !(strlen(pairs[i].name) == stem && strncmp(pairs[i].name, t->name, stem) == 0)) {
            i++;
        }
        if (i == n_pairs) {
            memcpy(pairs[i].name, t->name, stem);
            pairs[i].name[stem] = '\0';
            n_pairs++;
        }
        if (is_sums) {
            pairs[i].sums = t;
        } else {
            pairs[i].counts = t;
        }
    }
    if (n_pairs == 0) {
        set_err(c, "%s is not an imatrix file (no <name>.in_sum2 / <name>.counts tensors)", fname);
        goto done;
    }
    // everything is checked before anything is merged: a bad file leaves the collector as it was
    for (int64_t i = 0; i < n_pairs; i++) {
        if (!check_pair(c, fname, &pairs[i])) {
            goto done;
        }
    }
    const int64_t kd = gguf_find_key(gg, KV_DATASETS);
    if (kd >= 0 && gguf_get_kv_type(gg, kd) == GGUF_TYPE_ARRAY && gguf_get_arr_type(gg, kd) == GGUF_TYPE_STRING) {
        n_new_datasets = gguf_get_arr_n(gg, kd);
        new_datasets = calloc(n_new_datasets + 1, sizeof(char *));
        char ** grown = realloc(c->datasets, ((size_t) c->n_datasets + n_new_datasets + 1) * sizeof(char *));
        if (grown) {
            c->datasets = grown;
        }
        if (!new_datasets || !grown) {
            set_err(c, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < n_new_datasets; i++) {
            const char * s = gguf_get_arr_str(gg, kd, i);
            new_datasets[i] = malloc(strlen(s) + 1);
            if (!new_datasets[i]) {
                set_err(c, "out of memory");
                goto done;
            }
            memcpy(new_datasets[i], s, strlen(s) + 1);
        }
    }
    for (int64_t i = 0; i < n_pairs; i++) {
        if (!merge_pair(c, &pairs[i])) {
            goto done;
        }
    }
    for (size_t i = 0; i < n_new_datasets; i++) {
        c->datasets[c->n_datasets++] = new_datasets[i];
        new_datasets[i] = NULL;
    }
    imatrix_update_last_chunk(c);
    ok = true;

done:
    if (new_datasets) {
        for (size_t i = 0; i < n_new_datasets; i++) {
            free(new_datasets[i]);
        }
        free(new_datasets);
    }
    free(pairs);
    gguf_free(gg);
    ggml_free(ctx);
    return ok;
}
