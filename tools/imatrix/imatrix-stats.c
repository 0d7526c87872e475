// --show-statistics (llama.cpp's "legacy" table: the file holds sums of squares, so the per-element value is
// E[x²] = in_sum2 / count).
#include "imatrix-stats.h"

#include "log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tensor_stats {
    const struct imatrix_entry * e;
    char   layer[16];   // "N" of "blk.N.", or "-"
    char   tensor[64];  // the part before ".weight" ("attn_q"), or the whole name
    int    blk;         // -1 outside the blocks
    double sum, mean, vmin, vmax, stddev, entropy, zd, cossim;
    int64_t n;          // elements with data
};

// E[x²] of element j (0 where its matrix saw no rows)
static double value_at(const struct imatrix_entry * e, int64_t j) {
    const int64_t per = e->n_vals / e->n_counts;
    const int64_t cnt = e->counts[j / per];
    return cnt > 0 ? e->sums[j] / (double) cnt : 0.0;
}

static void split_name(const char * name, struct tensor_stats * ts) {
    snprintf(ts->layer, sizeof(ts->layer), "-");
    snprintf(ts->tensor, sizeof(ts->tensor), "%s", name);
    ts->blk = -1;
    const char * b = strstr(name, "blk.");
    if (b == name || (b && b[-1] == '.')) {
        const char * p = b + 4;
        const char * q = strchr(p, '.');
        const size_t len = q ? (size_t) (q - p) : strlen(p);
        if (len > 0 && len < sizeof(ts->layer)) {
            memcpy(ts->layer, p, len);
            ts->layer[len] = '\0';
            char * end = NULL;
            const long v = strtol(ts->layer, &end, 10);
            ts->blk = (end && *end == '\0') ? (int) v : -1;
        }
    }
    const char * w = strstr(name, ".weight");
    if (w) {
        const char * s = w;
        while (s > name && s[-1] != '.') {
            s--;
        }
        const size_t len = (size_t) (w - s);
        if (len > 0 && len < sizeof(ts->tensor)) {
            memcpy(ts->tensor, s, len);
            ts->tensor[len] = '\0';
        }
    }
}

static void compute_vector(struct tensor_stats * ts) {
    const struct imatrix_entry * e = ts->e;
    const int64_t per = e->n_vals / e->n_counts;
    double mean = 0.0, m2 = 0.0, sum = 0.0, energy = 0.0;
    double vmin = INFINITY, vmax = -INFINITY;
    int64_t n = 0;
    for (int64_t j = 0; j < e->n_vals; j++) {
        if (e->counts[j / per] <= 0) {
            continue;
        }
        const double v = value_at(e, j);
        n++;
        sum += v;
        vmin = v < vmin ? v : vmin;
        vmax = v > vmax ? v : vmax;
        const double d = v - mean;
        mean += d / (double) n;
        m2 += d * (v - mean);
        energy += v > 0 ? v : 0;
    }
    ts->n = n;
    ts->sum = sum;
    ts->mean = mean;
    ts->vmin = n ? vmin : 0;
    ts->vmax = n ? vmax : 0;
    ts->stddev = n > 1 ? sqrt(m2 / (double) (n - 1)) : 0.0;
    ts->entropy = 0.0;
    ts->zd = 0.0;
    int64_t n_zd = 0;
    for (int64_t j = 0; j < e->n_vals; j++) {
        if (e->counts[j / per] <= 0) {
            continue;
        }
        const double v = value_at(e, j);
        if (energy > 0 && v > 0) {
            const double p = v / energy;
            ts->entropy -= p * log2(p);
        }
        if (ts->stddev > 0 && fabs((v - mean) / ts->stddev) > 1.0) {
            n_zd++;
        }
    }
    ts->zd = n ? (double) n_zd / (double) n : 0.0;
}

// cosine similarity of the per-element E[x²] of two entries of the same size
static void dot_norms(const struct imatrix_entry * a, const struct imatrix_entry * b, double * dot, double * na, double * nb) {
    for (int64_t j = 0; j < a->n_vals; j++) {
        const double x = value_at(a, j), y = value_at(b, j);
        *dot += x * y;
        *na += x * x;
        *nb += y * y;
    }
}

static double cosine(double dot, double na, double nb) {
    if (na > 0 && nb > 0) {
        double cs = dot / (sqrt(na) * sqrt(nb));
        return cs > 1 ? 1 : (cs < -1 ? -1 : cs);
    }
    return na == 0 && nb == 0 ? 1.0 : 0.0;
}

// the same tensor one layer down ("blk.N." -> "blk.N-1."), or NULL
static const struct tensor_stats * previous_layer(const struct tensor_stats * all, int n, const struct tensor_stats * ts) {
    if (ts->blk <= 0) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (all[i].blk == ts->blk - 1 && strcmp(all[i].tensor, ts->tensor) == 0 &&
            all[i].e->n_vals == ts->e->n_vals && all[i].e->n_counts == ts->e->n_counts) {
            return &all[i];
        }
    }
    return NULL;
}

static int cmp_stats(const void * a, const void * b) {
    const struct tensor_stats * x = a, * y = b;
    const int c = strcmp(x->tensor, y->tensor);
    if (c != 0) {
        return c;
    }
    return (x->sum < y->sum) - (x->sum > y->sum); // larger sums first
}

bool imatrix_show_statistics(struct imatrix_collector * c, const struct common_params * params) {
    if (params->n_in_files != 1) {
        LOG_ERR("\nError: a single imatrix file is required to compute tensor statistics\n\n");
        return false;
    }
    const char * fname = params->in_files[0];
    if (!imatrix_load(c, fname)) {
        LOG_ERR("\nError: %s is not a valid imatrix file: %s\n\n", fname, c->err);
        return false;
    }
    const int n = c->n_entries;
    struct tensor_stats * ts = calloc((size_t) n, sizeof(*ts));
    if (!ts) {
        LOG_ERR("out of memory\n");
        return false;
    }
    for (int i = 0; i < n; i++) {
        ts[i].e = &c->entries[i];
        split_name(c->entries[i].name, &ts[i]);
        compute_vector(&ts[i]);
    }
    for (int i = 0; i < n; i++) {
        const struct tensor_stats * p = previous_layer(ts, n, &ts[i]);
        double dot = 0, na = 0, nb = 0;
        if (p) {
            dot_norms(ts[i].e, p->e, &dot, &na, &nb);
            ts[i].cossim = cosine(dot, na, nb);
        }
    }

    // the layer table aggregates over every tensor of a layer that has a partner in the layer below
    int max_blk = -1;
    for (int i = 0; i < n; i++) {
        max_blk = ts[i].blk > max_blk ? ts[i].blk : max_blk;
    }
    const int n_blk = max_blk + 1;
    double * l_sum = calloc((size_t) n_blk + 1, sizeof(double));
    double * l_zd  = calloc((size_t) n_blk + 1, sizeof(double));
    double * l_n   = calloc((size_t) n_blk + 1, sizeof(double));
    double * l_dot = calloc((size_t) n_blk + 1, 3 * sizeof(double));
    if (!l_sum || !l_zd || !l_n || !l_dot) {
        LOG_ERR("out of memory\n");
        free(ts); free(l_sum); free(l_zd); free(l_n); free(l_dot);
        return false;
    }
    for (int i = 0; i < n; i++) {
        if (ts[i].blk < 0) {
            continue;
        }
        l_sum[ts[i].blk] += ts[i].sum;
        l_zd[ts[i].blk]  += ts[i].zd * (double) ts[i].n;
        l_n[ts[i].blk]   += (double) ts[i].n;
        const struct tensor_stats * p = previous_layer(ts, n, &ts[i]);
        if (p) {
            double * d = l_dot + 3 * ts[i].blk;
            dot_norms(ts[i].e, p->e, &d[0], &d[1], &d[2]);
        }
    }

    qsort(ts, (size_t) n, sizeof(*ts), cmp_stats);
    LOG_INF("\nComputing tensor statistics for %s (%d tensors)\n", fname, n);
    LOG_INF("\n%6s\t%18s\t%13s\t%8s\t%8s\t%7s\t%15s\t%13s\t%11s\t%8s\t%5s\t%10s\n", "Layer", "Tensor", "Σ E[Act²]",
            "Min", "Max", "μ", "σ", "N", "H Norm", "H", "ZD", "CosSim");
    LOG_INF("==============================================================================================================="
            "============================================================\n");
    for (int i = 0; i < n; i++) {
        const double h_norm = ts[i].n > 1 ? 100.0 * ts[i].entropy / log2((double) ts[i].n) : 0.0;
        LOG_INF("%5s\t%-20s\t%11.4f\t%10.4f\t%10.4f\t%8.4f\t%8.4f\t%7d\t%10.2f%%\t%10.4f\t%6.2f%%\t%10.4f\n",
                ts[i].layer, ts[i].tensor, ts[i].sum, ts[i].vmin, ts[i].vmax, ts[i].mean, ts[i].stddev,
                (int) ts[i].n, h_norm, ts[i].entropy, 100.0 * ts[i].zd, ts[i].cossim);
    }
    int n_layers = 0;
    for (int b = 0; b < n_blk; b++) {
        n_layers += l_n[b] > 0;
    }
    LOG_INF("\nComputing layer statistics (%d layers)\n", n_layers);
    LOG_INF("\n%6s\t%13s\t%6s\t%11s\t%6s\n", "Layer", "Σ E[Act²]", "ZD", "CosSim", "");
    LOG_INF("============================================\n");
    for (int b = 0; b < n_blk; b++) {
        if (l_n[b] <= 0) {
            continue;
        }
        const double * d = l_dot + 3 * b;
        const double cs = b > 0 && (d[1] > 0 || d[2] > 0) ? cosine(d[0], d[1], d[2]) : 0.0;
        LOG_INF("%5d\t%11.4f\t%6.2f%%\t%11.4f\n", b, l_sum[b], 100.0 * l_zd[b] / l_n[b], cs);
    }
    LOG_INF("\n");
    free(ts); free(l_sum); free(l_zd); free(l_n); free(l_dot);
    return true;
}
