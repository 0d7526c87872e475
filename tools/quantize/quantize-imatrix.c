// llama-quantize's importance-matrix reader: llama.cpp's two file formats (see quantize-imatrix.h), with every
// count, length and size checked against the bytes that are really there, so that a truncated or corrupt
// file is one clear error line and never a crash.

#include "quantize-imatrix.h"

#include "ggml.h"
#include "gguf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the messages name llama.cpp's functions, as its own lines do
#define FN_GGUF   "load_imatrix"
#define FN_LEGACY "load_legacy_imatrix"

// more than any model has; bounds what a lying header can make us allocate before the data runs out
#define MAX_NAME_LEN 4096

static void set_err(char * err, size_t err_size, const char * fmt, ...) {
    if (!err || err_size == 0) {
        return;
    }
    va_list args;
    va_start(args, fmt);
    vsnprintf(err, err_size, fmt, args);
    va_end(args);
}

static void free_entry(struct quant_imatrix_entry * e) {
    free(e->name);
    free(e->data);
    e->name = NULL;
    e->data = NULL;
    e->size = 0;
}

void quant_imatrix_free(struct quant_imatrix * im) {
    for (size_t i = 0; i < im->n; i++) {
        free_entry(&im->entries[i]);
    }
    free(im->entries);
    for (size_t i = 0; i < im->n_datasets; i++) {
        free(im->datasets[i]);
    }
    free(im->datasets);
    free(im->params);
    memset(im, 0, sizeof(*im));
}

static char * dup_n(const char * s, size_t n) {
    char * d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

// takes ownership of name and data; a second entry of the same name replaces the first (llama.cpp keeps
// the entries in a map keyed by name)
static bool add_entry(struct quant_imatrix * im, char * name, float * data, size_t size) {
    for (size_t i = 0; i < im->n; i++) {
        if (strcmp(im->entries[i].name, name) == 0) {
            free_entry(&im->entries[i]);
            im->entries[i] = (struct quant_imatrix_entry) { name, data, size };
            return true;
        }
    }
    struct quant_imatrix_entry * grown = realloc(im->entries, (im->n + 1) * sizeof(*grown));
    if (!grown) {
        free(name);
        free(data);
        return false;
    }
    im->entries = grown;
    im->entries[im->n++] = (struct quant_imatrix_entry) { name, data, size };
    return true;
}

static bool add_dataset(struct quant_imatrix * im, const char * s, size_t n) {
    char ** grown = realloc(im->datasets, (im->n_datasets + 1) * sizeof(*grown));
    if (!grown) {
        return false;
    }
    im->datasets = grown;
    char * d = dup_n(s, n);
    if (!d) {
        return false;
    }
    im->datasets[im->n_datasets++] = d;
    return true;
}

static int cmp_entry(const void * a, const void * b) {
    return strcmp(((const struct quant_imatrix_entry *) a)->name, ((const struct quant_imatrix_entry *) b)->name);
}

// importances are means of squares: a NaN, an infinity or a negative value can only come from a damaged
// file, and some quantizers assert on them
static bool check_values(const struct quant_imatrix_entry * e, const char * fn, const char * fname, char * err,
                         size_t err_size) {
    for (size_t i = 0; i < e->size; i++) {
        if (!isfinite(e->data[i]) || e->data[i] < 0.0f) {
            set_err(err, err_size, "%s: entry '%s' in %s has an invalid importance value %g at %zu", fn, e->name,
                    fname, (double) e->data[i], i);
            return false;
        }
    }
    return true;
}

static bool finish(struct quant_imatrix * im, const char * fn, const char * fname, char * err, size_t err_size) {
    for (size_t i = 0; i < im->n; i++) {
        if (!check_values(&im->entries[i], fn, fname, err, err_size)) {
            return false;
        }
    }
    if (im->n > 1) {
        qsort(im->entries, im->n, sizeof(im->entries[0]), cmp_entry);
    }
    return true;
}

//
// legacy .dat
//

struct reader {
    const uint8_t * p;
    size_t left;
};

static bool rd_i32(struct reader * r, int32_t * v) {
    if (r->left < sizeof(*v)) {
        return false;
    }
    memcpy(v, r->p, sizeof(*v));
    r->p += sizeof(*v);
    r->left -= sizeof(*v);
    return true;
}

static bool rd_bytes(struct reader * r, size_t n, const uint8_t ** out) {
    if (r->left < n) {
        return false;
    }
    *out = r->p;
    r->p += n;
    r->left -= n;
    return true;
}

bool quant_imatrix_parse_legacy(const uint8_t * buf, size_t size, const char * fname, struct quant_imatrix * out,
                                char * err, size_t err_size) {
    struct quant_imatrix im;
    memset(&im, 0, sizeof(im));
    im.legacy = true;
    struct reader r = { buf, size };

    int32_t n_entries = 0;
    if (!rd_i32(&r, &n_entries) || n_entries < 1) {
        set_err(err, err_size, "%s: no data in file %s", FN_LEGACY, fname);
        goto fail;
    }
    for (int32_t i = 0; i < n_entries; i++) {
        int32_t len = 0;
        const uint8_t * name = NULL;
        if (!rd_i32(&r, &len) || len < 1 || len > MAX_NAME_LEN || !rd_bytes(&r, (size_t) len, &name) ||
            memchr(name, '\0', (size_t) len) != NULL) {
            set_err(err, err_size, "%s: failed reading name for entry %d from %s", FN_LEGACY, i + 1, fname);
            goto fail;
        }
        int32_t ncall = 0, nval = 0;
        if (!rd_i32(&r, &ncall) || !rd_i32(&r, &nval) || nval < 1) {
            set_err(err, err_size, "%s: failed reading number of values for entry %d from %s", FN_LEGACY, i + 1,
                    fname);
            goto fail;
        }
        const uint8_t * raw = NULL;
        if ((size_t) nval > r.left / sizeof(float) || !rd_bytes(&r, (size_t) nval * sizeof(float), &raw)) {
            set_err(err, err_size, "%s: failed reading data for entry %d from %s (%d values, %zu bytes left)",
                    FN_LEGACY, i + 1, fname, (int) nval, r.left);
            goto fail;
        }
        char * ename = dup_n((const char *) name, (size_t) len);
        float * data = malloc((size_t) nval * sizeof(float));
        if (!ename || !data) {
            free(ename);
            free(data);
            set_err(err, err_size, "%s: out of memory reading %s", FN_LEGACY, fname);
            goto fail;
        }
        memcpy(data, raw, (size_t) nval * sizeof(float));
        // llama-imatrix stored the per-call averages times ncall
        if (ncall > 0) {
            for (int32_t k = 0; k < nval; k++) {
                data[k] /= (float) ncall;
            }
        }
        if (!add_entry(&im, ename, data, (size_t) nval)) {
            set_err(err, err_size, "%s: out of memory reading %s", FN_LEGACY, fname);
            goto fail;
        }
    }

    // the later legacy files end with the chunk count and the dataset file name
    if (r.left > 0) {
        int32_t last_call = 0, dataset_len = 0;
        const uint8_t * ds = NULL;
        if (!rd_i32(&r, &last_call) || !rd_i32(&r, &dataset_len) || dataset_len < 0 ||
            !rd_bytes(&r, (size_t) dataset_len, &ds)) {
            set_err(err, err_size, "%s: truncated dataset name at the end of %s", FN_LEGACY, fname);
            goto fail;
        }
        if (!add_dataset(&im, (const char *) ds, strnlen((const char *) ds, (size_t) dataset_len))) {
            set_err(err, err_size, "%s: out of memory reading %s", FN_LEGACY, fname);
            goto fail;
        }
        im.chunk_count = last_call;
    }
    if (!finish(&im, FN_LEGACY, fname, err, err_size)) {
        goto fail;
    }
    *out = im;
    return true;

fail:
    quant_imatrix_free(&im);
    memset(out, 0, sizeof(*out));
    return false;
}

static uint8_t * read_whole_file(const char * fname, size_t * size, char * err, size_t err_size) {
    FILE * f = fopen(fname, "rb");
    if (!f) {
        set_err(err, err_size, "%s: failed to open %s: %s", FN_LEGACY, fname, strerror(errno));
        return NULL;
    }
    uint8_t * buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) {
        n = ftell(f);
    }
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        set_err(err, err_size, "%s: cannot read %s", FN_LEGACY, fname);
        fclose(f);
        return NULL;
    }
    buf = malloc((size_t) n + 1);
    if (!buf || fread(buf, 1, (size_t) n, f) != (size_t) n) {
        set_err(err, err_size, "%s: cannot read %s", FN_LEGACY, fname);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *size = (size_t) n;
    return buf;
}

//
// GGUF
//

static bool has_suffix(const char * s, const char * suffix, size_t * base_len) {
    const size_t n = strlen(s), m = strlen(suffix);
    if (n <= m || strcmp(s + n - m, suffix) != 0) {
        return false;
    }
    *base_len = n - m;
    return true;
}

// the tensor named `base` + `suffix`, or NULL
static struct ggml_tensor * find_with_suffix(struct ggml_context * ctx, const char * base, size_t base_len,
                                             const char * suffix) {
    char name[GGML_MAX_NAME + 16];
    if (base_len + strlen(suffix) >= sizeof(name)) {
        return NULL;
    }
    snprintf(name, sizeof(name), "%.*s%s", (int) base_len, base, suffix);
    return ggml_get_tensor(ctx, name);
}

static bool load_gguf(const char * fname, struct quant_imatrix * out, char * err, size_t err_size) {
    struct quant_imatrix im;
    memset(&im, 0, sizeof(im));

    struct ggml_context * ctx = NULL;
    struct gguf_init_params gp = { /*.no_alloc =*/ false, /*.ctx =*/ &ctx };
    struct gguf_context * g = gguf_init_from_file(fname, gp);
    if (!g) {
        set_err(err, err_size, "%s: failed to read GGUF imatrix file %s", FN_GGUF, fname);
        return false;
    }
    const int64_t n_tensors = gguf_get_n_tensors(g);
    const int64_t k_ds  = gguf_find_key(g, "imatrix.datasets");
    const int64_t k_cc  = gguf_find_key(g, "imatrix.chunk_count");
    const int64_t k_cs  = gguf_find_key(g, "imatrix.chunk_size");
    if (n_tensors < 1 || !ctx) {
        set_err(err, err_size, "%s: no data in file %s", FN_GGUF, fname);
        goto fail;
    }
    if (k_ds < 0 || k_cc < 0 || k_cs < 0 ||
        gguf_get_kv_type(g, k_ds) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, k_ds) != GGUF_TYPE_STRING ||
        gguf_get_kv_type(g, k_cc) != GGUF_TYPE_UINT32 || gguf_get_kv_type(g, k_cs) != GGUF_TYPE_UINT32) {
        set_err(err, err_size, "%s: missing imatrix metadata in file %s (imatrix.datasets string array, "
                "imatrix.chunk_count and imatrix.chunk_size u32)", FN_GGUF, fname);
        goto fail;
    }

    for (int64_t t = 0; t < n_tensors; t++) {
        const char * tname = gguf_get_tensor_name(g, t);
        size_t base_len = 0;
        const bool is_sums   = has_suffix(tname, ".in_sum2", &base_len);
        const bool is_counts = !is_sums && has_suffix(tname, ".counts", &base_len);
        if (!is_sums && !is_counts) {
            continue;  // other tensors are not ours (llama.cpp ignores them too)
        }
        const struct ggml_tensor * sums   = find_with_suffix(ctx, tname, base_len, ".in_sum2");
        const struct ggml_tensor * counts = find_with_suffix(ctx, tname, base_len, ".counts");
        if (!sums || !counts) {
            set_err(err, err_size, "%s: mismatched sums and counts for %.*s in %s", FN_GGUF, (int) base_len, tname,
                    fname);
            goto fail;
        }
        if (is_counts) {
            continue;  // handled with its in_sum2
        }
        const int64_t ne0 = sums->ne[0], ne1 = sums->ne[1];
        if (sums->type != GGML_TYPE_F32 || counts->type != GGML_TYPE_F32 || sums->ne[2] != 1 || sums->ne[3] != 1 ||
            ggml_nelements(counts) != ne1 || !sums->data || !counts->data) {
            set_err(err, err_size, "%s: %.*s: in_sum2 must be F32 [n_per_row, n_mat] and counts F32 [1, n_mat] "
                    "(got %s [%lld, %lld, %lld, %lld] and %s with %lld elements) in %s", FN_GGUF, (int) base_len,
                    tname, ggml_type_name(sums->type), (long long) sums->ne[0], (long long) sums->ne[1],
                    (long long) sums->ne[2], (long long) sums->ne[3], ggml_type_name(counts->type),
                    (long long) ggml_nelements(counts), fname);
            goto fail;
        }
        const size_t n = (size_t) ne0 * (size_t) ne1;
        char  * name = dup_n(tname, base_len);
        float * data = malloc((n ? n : 1) * sizeof(float));
        if (!name || !data) {
            free(name);
            free(data);
            set_err(err, err_size, "%s: out of memory reading %s", FN_GGUF, fname);
            goto fail;
        }
        const float * s = (const float *) sums->data;
        const float * c = (const float *) counts->data;
        for (int64_t j = 0; j < ne1; j++) {
            const float count = c[j];
            for (int64_t i = 0; i < ne0; i++) {
                // a matrix that got no input during calibration (llama.cpp: partial data) weighs all columns alike
                data[j*ne0 + i] = count > 0.0f ? s[j*ne0 + i] / count : 1.0f;
            }
        }
        if (!add_entry(&im, name, data, n)) {
            set_err(err, err_size, "%s: out of memory reading %s", FN_GGUF, fname);
            goto fail;
        }
    }

    im.chunk_count = (int) gguf_get_val_u32(g, k_cc);
    for (size_t i = 0; i < gguf_get_arr_n(g, k_ds); i++) {
        const char * ds = gguf_get_arr_str(g, k_ds, i);
        if (!add_dataset(&im, ds, strlen(ds))) {
            set_err(err, err_size, "%s: out of memory reading %s", FN_GGUF, fname);
            goto fail;
        }
    }
    if (!finish(&im, FN_GGUF, fname, err, err_size)) {
        goto fail;
    }
    gguf_free(g);
    ggml_free(ctx);
    *out = im;
    return true;

fail:
    quant_imatrix_free(&im);
    gguf_free(g);
    if (ctx) {
        ggml_free(ctx);
    }
    return false;
}

bool quant_imatrix_load(const char * fname, struct quant_imatrix * out, char * err, size_t err_size) {
    memset(out, 0, sizeof(*out));
    FILE * f = fopen(fname, "rb");
    if (!f) {
        set_err(err, err_size, "%s: failed to open %s: %s", FN_GGUF, fname, strerror(errno));
        return false;
    }
    char magic[4] = {0};
    const bool is_gguf = fread(magic, 1, sizeof(magic), f) == sizeof(magic) && memcmp(magic, "GGUF", 4) == 0;
    fclose(f);
    if (is_gguf) {
        return load_gguf(fname, out, err, err_size);
    }
    fprintf(stderr, "%s: imatrix file '%s' is using old format\n", FN_GGUF, fname);
    size_t size = 0;
    uint8_t * buf = read_whole_file(fname, &size, err, err_size);
    if (!buf) {
        return false;
    }
    const bool ok = quant_imatrix_parse_legacy(buf, size, fname, out, err, err_size);
    free(buf);
    return ok;
}

//
// selection
//

static bool matches_any(const char * name, const char * const * patterns, size_t n_patterns) {
    for (size_t i = 0; i < n_patterns; i++) {
        if (strstr(name, patterns[i]) != NULL) {
            return true;
        }
    }
    return false;
}

static void keep_if(struct quant_imatrix * im, const char * const * patterns, size_t n_patterns, bool keep_matches) {
    size_t k = 0;
    for (size_t i = 0; i < im->n; i++) {
        if (matches_any(im->entries[i].name, patterns, n_patterns) == keep_matches) {
            im->entries[k++] = im->entries[i];
        } else {
            free_entry(&im->entries[i]);
        }
    }
    im->n = k;
    free(im->params);
    im->params = NULL;
}

void quant_imatrix_exclude(struct quant_imatrix * im, const char * const * patterns, size_t n_patterns) {
    if (n_patterns > 0) {
        keep_if(im, patterns, n_patterns, false);
    }
}

void quant_imatrix_include(struct quant_imatrix * im, const char * const * patterns, size_t n_patterns) {
    if (n_patterns > 0) {
        keep_if(im, patterns, n_patterns, true);
    }
}

const struct llama_model_imatrix_data * quant_imatrix_params(struct quant_imatrix * im) {
    if (im->n == 0) {
        return NULL;
    }
    if (!im->params) {
        im->params = calloc(im->n + 1, sizeof(*im->params));
        if (!im->params) {
            return NULL;
        }
        for (size_t i = 0; i < im->n; i++) {
            im->params[i].name = im->entries[i].name;
            im->params[i].data = im->entries[i].data;
            im->params[i].size = im->entries[i].size;
        }
        // calloc left the terminator (name == NULL)
    }
    return im->params;
}
