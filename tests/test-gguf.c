// test-gguf: the GGUF reader on every shared model file, checked against llama.cpp's index of the synthetic
// models and against the raw file bytes; a writer round trip of every file; writer API unit tests.

#include "harness.h"

#include "ggml.h"
#include "gguf.h"

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/wait.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static char g_tmpdir[256];

// ---- collecting the model files ------------------------------------------------------------------------

static char ** g_files   = NULL;
static size_t  g_n_files = 0;

static int collect_cb(const char * path, const struct stat * st, int flag, struct FTW * ftw) {
    (void) st;
    (void) ftw;
    const size_t n = strlen(path);
    if (flag == FTW_F && n > 5 && strcmp(path + n - 5, ".gguf") == 0) {
        g_files = realloc(g_files, (g_n_files + 1) * sizeof(*g_files));
        g_files[g_n_files++] = strdup(path);
    }
    return 0;
}

static int cmp_str(const void * a, const void * b) {
    return strcmp(*(const char * const *) a, *(const char * const *) b);
}

static const char * base_name(const char * path) {
    const char * s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static size_t file_size(const char * path) {
    struct stat st;
    return stat(path, &st) == 0 ? (size_t) st.st_size : 0;
}

// ---- KV comparison (used by the round trip) -------------------------------------------------------------

static size_t type_size(enum gguf_type t) {
    switch (t) {
        case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
        case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
        case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
        case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
        default: return 0;
    }
}

// true if key i of a equals key j of b in name, type, count and every byte of every element
static bool kv_equal(const struct gguf_context * a, int64_t i, const struct gguf_context * b, int64_t j) {
    if (strcmp(gguf_get_key(a, i), gguf_get_key(b, j)) != 0) {
        return false;
    }
    const enum gguf_type ta = gguf_get_kv_type(a, i);
    if (ta != gguf_get_kv_type(b, j)) {
        return false;
    }
    enum gguf_type et = ta;
    size_t n = 1;
    if (ta == GGUF_TYPE_ARRAY) {
        et = gguf_get_arr_type(a, i);
        if (et != gguf_get_arr_type(b, j)) {
            return false;
        }
        n = gguf_get_arr_n(a, i);
        if (n != gguf_get_arr_n(b, j)) {
            return false;
        }
    }
    if (et == GGUF_TYPE_STRING) {
        if (ta != GGUF_TYPE_ARRAY) {
            return strcmp(gguf_get_val_str(a, i), gguf_get_val_str(b, j)) == 0;
        }
        for (size_t k = 0; k < n; k++) {
            if (strcmp(gguf_get_arr_str(a, i, k), gguf_get_arr_str(b, j, k)) != 0) {
                return false;
            }
        }
        return true;
    }
    const void * da = ta == GGUF_TYPE_ARRAY ? gguf_get_arr_data(a, i) : gguf_get_val_data(a, i);
    const void * db = ta == GGUF_TYPE_ARRAY ? gguf_get_arr_data(b, j) : gguf_get_val_data(b, j);
    return n == 0 || memcmp(da, db, n * type_size(et)) == 0;
}

// ---- synthetic index --------------------------------------------------------------------------------------

static json_t * g_index = NULL;

static json_t * index_model(const char * fname) {
    json_t * models = json_object_get(g_index, "models");
    size_t i;
    json_t * m;
    json_array_foreach(models, i, m) {
        if (strcmp(json_string_value(json_object_get(m, "file")), fname) == 0) {
            return m;
        }
    }
    return NULL;
}

static void check_against_index(const char * path, const struct gguf_context * ctx, struct ggml_context * gctx) {
    const char * fname = base_name(path);
    json_t * m = index_model(fname);
    TH_CHECK(m != NULL, "%s is not in reference/synthetic/index.json", fname);
    if (!m) {
        return;
    }
    TH_CHECK((json_int_t) file_size(path) == json_integer_value(json_object_get(m, "size_bytes")), "%s: size", fname);

    const int64_t n_t = gguf_get_n_tensors(ctx);
    TH_CHECK(n_t == json_integer_value(json_object_get(m, "n_tensors")), "%s: n_tensors %" PRId64, fname, n_t);

    // per-type counts: ours vs the index (type names compared case-insensitively: "q4_K" vs "Q4_K")
    json_t * counts = json_object_get(m, "tensor_type_counts");
    int64_t counted = 0;
    const char * tname;
    json_t * cnt;
    json_object_foreach(counts, tname, cnt) {
        int64_t ours = 0;
        for (int64_t i = 0; i < n_t; i++) {
            ours += strcasecmp(ggml_type_name(gguf_get_tensor_type(ctx, i)), tname) == 0;
        }
        TH_CHECK(ours == json_integer_value(cnt), "%s: %" PRId64 " tensors of type %s, index says %" PRId64,
                 fname, ours, tname, (int64_t) json_integer_value(cnt));
        counted += ours;
    }
    TH_CHECK(counted == n_t, "%s: tensors of types missing from the index", fname);

    // every tensor's name, type and shape
    json_t * tensors = json_object_get(m, "tensors");
    TH_CHECK((int64_t) json_array_size(tensors) == n_t, "%s: index tensor list length", fname);
    size_t k;
    json_t * t;
    int bad = 0;
    json_array_foreach(tensors, k, t) {
        const char * name = json_string_value(json_object_get(t, "name"));
        const int64_t id = gguf_find_tensor(ctx, name);
        if (id < 0) {
            bad++;
            fprintf(stderr, "%s: tensor %s not found\n", fname, name);
            continue;
        }
        if (strcasecmp(ggml_type_name(gguf_get_tensor_type(ctx, id)), json_string_value(json_object_get(t, "type"))) != 0) {
            bad++;
            fprintf(stderr, "%s: tensor %s type %s\n", fname, name, ggml_type_name(gguf_get_tensor_type(ctx, id)));
        }
        const struct ggml_tensor * gt = ggml_get_tensor(gctx, name);
        json_t * ne = json_object_get(t, "ne");
        for (int d = 0; gt && d < GGML_MAX_DIMS; d++) {
            const int64_t want = d < (int) json_array_size(ne) ? json_integer_value(json_array_get(ne, d)) : 1;
            if (gt->ne[d] != want) {
                bad++;
                fprintf(stderr, "%s: tensor %s ne[%d] = %" PRId64 ", index %" PRId64 "\n", fname, name, d, gt->ne[d], want);
            }
        }
    }
    TH_CHECK(bad == 0, "%s: %d tensor mismatches against the index", fname, bad);

    // a few metadata values
    const int64_t ft = gguf_find_key(ctx, "general.file_type");
    TH_CHECK(ft >= 0 && gguf_get_val_u32(ctx, ft) == (uint32_t) json_integer_value(json_object_get(m, "general.file_type")),
             "%s: general.file_type", fname);
    const int64_t tok = gguf_find_key(ctx, "tokenizer.ggml.tokens");
    TH_CHECK(tok >= 0 && (json_int_t) gguf_get_arr_n(ctx, tok) == json_integer_value(json_object_get(m, "tokenizer_n_tokens")),
             "%s: tokenizer_n_tokens", fname);
    const char * hk;
    json_t * hv;
    json_object_foreach(json_object_get(m, "hparams"), hk, hv) {
        const int64_t id = gguf_find_key(ctx, hk);
        TH_CHECK(id >= 0, "%s: hparam %s missing", fname, hk);
        if (id < 0) {
            continue;
        }
        const enum gguf_type ty = gguf_get_kv_type(ctx, id);
        if (ty == GGUF_TYPE_UINT32) {
            TH_CHECK(json_is_integer(hv) && gguf_get_val_u32(ctx, id) == (uint32_t) json_integer_value(hv), "%s: %s", fname, hk);
        } else if (ty == GGUF_TYPE_FLOAT32) {
            // the index holds the f32 widened to double: it must round back to the same f32 exactly
            TH_CHECK(gguf_get_val_f32(ctx, id) == (float) json_number_value(hv), "%s: %s = %g vs %g", fname, hk,
                     (double) gguf_get_val_f32(ctx, id), json_number_value(hv));
        } else {
            TH_CHECK(false, "%s: hparam %s has unexpected type %s", fname, hk, gguf_type_name(ty));
        }
    }
}

// ---- structural checks on every file, no_alloc ---------------------------------------------------------

static void check_file_meta(const char * path) {
    struct ggml_context * gctx = NULL;
    struct gguf_init_params ip = { .no_alloc = true, .ctx = &gctx };
    struct gguf_context * ctx = gguf_init_from_file(path, ip);
    TH_CHECK(ctx != NULL && gctx != NULL, "failed to read %s", path);
    if (!ctx) {
        return;
    }
    const size_t fsize = file_size(path);
    const size_t align = gguf_get_alignment(ctx);
    const size_t doff  = gguf_get_data_offset(ctx);
    const int64_t n_t  = gguf_get_n_tensors(ctx);
    TH_CHECK(gguf_get_version(ctx) == 2 || gguf_get_version(ctx) == 3, "%s: version", path);
    TH_CHECK(doff <= fsize, "%s: data offset %zu past the file size", path, doff);
    TH_CHECK(n_t == 0 || doff % align == 0, "%s: data offset %zu not aligned", path, doff);
    TH_CHECK(gguf_get_n_kv(ctx) > 0 && gguf_find_key(ctx, "general.architecture") >= 0, "%s: no architecture", path);

    int bad = 0;
    size_t expected = 0;
    const struct ggml_tensor * gt = ggml_get_first_tensor(gctx);
    for (int64_t i = 0; i < n_t; i++, gt = gt ? ggml_get_next_tensor(gctx, (struct ggml_tensor *) gt) : NULL) {
        const size_t off = gguf_get_tensor_offset(ctx, i);
        const size_t sz  = gguf_get_tensor_size(ctx, i);
        bad += off != expected;
        bad += doff + off + sz > fsize;
        // no_alloc: tensors in file order, named, no data, same size
        bad += gt == NULL || strcmp(gt->name, gguf_get_tensor_name(ctx, i)) != 0 || gt->data != NULL ||
               ggml_nbytes(gt) != sz || gt->type != gguf_get_tensor_type(ctx, i);
        expected = off + ((sz + align - 1) / align) * align;
    }
    TH_CHECK(bad == 0, "%s: %d tensor layout errors", path, bad);
    TH_CHECK(gt == NULL, "%s: extra tensors in the ggml context", path);

    if (strstr(path, "/synthetic/")) {
        check_against_index(path, ctx, gctx);
    }
    if (strstr(path, "/vocab/")) {
        TH_CHECK(n_t == 0, "%s: vocab file with tensors", path);
        const int64_t tok = gguf_find_key(ctx, "tokenizer.ggml.tokens");
        TH_CHECK(tok >= 0 && gguf_get_arr_type(ctx, tok) == GGUF_TYPE_STRING && gguf_get_arr_n(ctx, tok) > 100,
                 "%s: tokens", path);
    }
    gguf_free(ctx);
    ggml_free(gctx);
}

// ---- full read: data of every tensor equals the file bytes ---------------------------------------------

static void check_file_data(const char * path) {
    size_t fsize = 0;
    uint8_t * raw = th_read_file(path, &fsize);
    TH_CHECK(raw != NULL, "cannot read %s", path);
    if (!raw) {
        return;
    }
    struct ggml_context * gctx = NULL;
    struct gguf_init_params ip = { .no_alloc = false, .ctx = &gctx };
    struct gguf_context * ctx = gguf_init_from_file(path, ip);
    TH_CHECK(ctx != NULL && gctx != NULL, "full read of %s", path);
    if (ctx && gctx) {
        // llama.cpp's layout: an I8 blob with the whole data section first, then the tensors pointing into it
        struct ggml_tensor * blob = ggml_get_first_tensor(gctx);
        TH_CHECK(blob && blob->type == GGML_TYPE_I8 && strcmp(blob->name, "GGUF tensor data binary blob") == 0,
                 "%s: first tensor is not the data blob", path);
        const size_t doff = gguf_get_data_offset(ctx);
        int bad = 0;
        struct ggml_tensor * t = blob;
        for (int64_t i = 0; i < gguf_get_n_tensors(ctx); i++) {
            t = ggml_get_next_tensor(gctx, t);
            if (!t || strcmp(t->name, gguf_get_tensor_name(ctx, i)) != 0) {
                bad++;
                break;
            }
            const size_t off = gguf_get_tensor_offset(ctx, i);
            bad += t->data != (char *) blob->data + off;
            bad += memcmp(t->data, raw + doff + off, gguf_get_tensor_size(ctx, i)) != 0;
        }
        TH_CHECK(bad == 0, "%s: %d tensors differ from the file bytes", path, bad);
    }
    gguf_free(ctx);
    ggml_free(gctx);
    free(raw);
}

// ---- writer round trip -----------------------------------------------------------------------------------

static int g_identical = 0;
static int g_padded    = 0; // identical up to the trailing padding

static void check_round_trip(const char * path) {
    struct ggml_context * gctx = NULL;
    struct gguf_init_params ip = { .no_alloc = false, .ctx = &gctx };
    struct gguf_context * src = gguf_init_from_file(path, ip);
    TH_CHECK(src != NULL, "round trip: cannot read %s", path);
    if (!src) {
        return;
    }
    struct gguf_context * dst = gguf_init_empty();
    gguf_set_kv(dst, src);
    for (int64_t i = 0; i < gguf_get_n_tensors(src); i++) {
        gguf_add_tensor(dst, ggml_get_tensor(gctx, gguf_get_tensor_name(src, i)));
    }
    char out[512];
    snprintf(out, sizeof(out), "%s/rt-%s", g_tmpdir, base_name(path));
    TH_CHECK(gguf_write_to_file(dst, out, false), "round trip: write %s", out);

    // metadata only: the same bytes as the head of the full file
    const size_t meta_size = gguf_get_meta_size(dst);
    uint8_t * meta = malloc(meta_size);
    gguf_get_meta_data(dst, meta);

    struct ggml_context * gctx2 = NULL;
    struct gguf_init_params ip2 = { .no_alloc = false, .ctx = &gctx2 };
    struct gguf_context * back = gguf_init_from_file(out, ip2);
    TH_CHECK(back != NULL, "round trip: cannot re-read %s", out);
    if (back) {
        // the writer always pads the metadata; the reader (like llama.cpp) skips that padding only when there
        // are tensors, so a tensor-less file's data offset is the unpadded end of its metadata
        const size_t align = gguf_get_alignment(back);
        const size_t doff  = gguf_get_data_offset(back);
        TH_CHECK(gguf_get_n_tensors(back) > 0 ? doff == meta_size : (doff + align - 1) / align * align == meta_size,
                 "%s: meta size %zu vs data offset %zu", path, meta_size, doff);
        TH_CHECK(gguf_get_n_kv(back) == gguf_get_n_kv(src), "%s: n_kv", path);
        int bad = 0;
        for (int64_t i = 0; i < gguf_get_n_kv(src) && i < gguf_get_n_kv(back); i++) {
            bad += !kv_equal(src, i, back, i);
        }
        TH_CHECK(bad == 0, "%s: %d KV pairs differ after the round trip", path, bad);
        TH_CHECK(gguf_get_n_tensors(back) == gguf_get_n_tensors(src), "%s: n_tensors", path);
        bad = 0;
        for (int64_t i = 0; i < gguf_get_n_tensors(src) && i < gguf_get_n_tensors(back); i++) {
            const char * name = gguf_get_tensor_name(src, i);
            bad += strcmp(name, gguf_get_tensor_name(back, i)) != 0;
            bad += gguf_get_tensor_type(src, i) != gguf_get_tensor_type(back, i);
            bad += gguf_get_tensor_offset(src, i) != gguf_get_tensor_offset(back, i);
            bad += gguf_get_tensor_size(src, i) != gguf_get_tensor_size(back, i);
            const struct ggml_tensor * a = ggml_get_tensor(gctx, name);
            const struct ggml_tensor * b = ggml_get_tensor(gctx2, gguf_get_tensor_name(back, i));
            if (!a || !b) {
                bad++;
                continue;
            }
            bad += memcmp(a->ne, b->ne, sizeof(a->ne)) != 0;
            bad += memcmp(a->data, b->data, ggml_nbytes(a)) != 0;
        }
        TH_CHECK(bad == 0, "%s: %d tensor differences after the round trip", path, bad);

        size_t n_orig = 0;
        size_t n_new = 0;
        uint8_t * orig = th_read_file(path, &n_orig);
        uint8_t * neu  = th_read_file(out, &n_new);
        TH_CHECK(neu && n_new >= meta_size && memcmp(neu, meta, meta_size) == 0, "%s: gguf_get_meta_data", path);
        if (orig && neu && n_orig == n_new && memcmp(orig, neu, n_orig) == 0) {
            g_identical++;
        } else {
            // the only expected difference: tensor-less files written without the final padding (gguf-py)
            bool zeros = orig && neu && n_new > n_orig && gguf_get_n_tensors(src) == 0 && n_new % align == 0 &&
                         n_new - n_orig < align && memcmp(orig, neu, n_orig) == 0;
            for (size_t k = n_orig; zeros && k < n_new; k++) {
                zeros = neu[k] == 0;
            }
            TH_CHECK(zeros, "%s: rewritten file differs from the original (%zu vs %zu bytes)", path, n_orig, n_new);
            g_padded += zeros;
        }
        free(orig);
        free(neu);
    }

    // the metadata-only file is exactly the metadata
    snprintf(out, sizeof(out), "%s/meta-%s", g_tmpdir, base_name(path));
    TH_CHECK(gguf_write_to_file(dst, out, true), "write meta %s", out);
    size_t n_meta_file = 0;
    uint8_t * mf = th_read_file(out, &n_meta_file);
    TH_CHECK(mf && n_meta_file == meta_size && memcmp(mf, meta, meta_size) == 0, "%s: only_meta file", path);
    free(mf);
    unlink(out);

    snprintf(out, sizeof(out), "%s/rt-%s", g_tmpdir, base_name(path));
    unlink(out);
    free(meta);
    gguf_free(back);
    ggml_free(gctx2);
    gguf_free(dst);
    gguf_free(src);
    ggml_free(gctx);
}

// ---- writer API unit tests -------------------------------------------------------------------------------

static void test_writer_api(void) {
    struct gguf_context * ctx = gguf_init_empty();
    TH_CHECK(gguf_get_n_kv(ctx) == 0 && gguf_get_n_tensors(ctx) == 0, "empty context");
    TH_CHECK(gguf_get_version(ctx) == 3 && gguf_get_alignment(ctx) == 32, "empty context defaults");
    TH_CHECK(gguf_find_key(ctx, "x") == -1 && gguf_find_tensor(ctx, "x") == -1, "find in empty");

    gguf_set_val_u8  (ctx, "t.u8",   0xAB);
    gguf_set_val_i8  (ctx, "t.i8",   -5);
    gguf_set_val_u16 (ctx, "t.u16",  0xBEEF);
    gguf_set_val_i16 (ctx, "t.i16",  -12345);
    gguf_set_val_u32 (ctx, "t.u32",  0xDEADBEEFu);
    gguf_set_val_i32 (ctx, "t.i32",  -2000000000);
    gguf_set_val_f32 (ctx, "t.f32",  3.25f);
    gguf_set_val_u64 (ctx, "t.u64",  UINT64_C(0xFEDCBA9876543210));
    gguf_set_val_i64 (ctx, "t.i64",  INT64_MIN + 7);
    gguf_set_val_f64 (ctx, "t.f64",  -1.0 / 3.0);
    gguf_set_val_bool(ctx, "t.bool", true);
    gguf_set_val_str (ctx, "t.str",  "h\xC3\xA9llo");
    const int32_t arr_i32[5] = { 1, -2, 3, -4, 5 };
    gguf_set_arr_data(ctx, "t.arr_i32", GGUF_TYPE_INT32, arr_i32, 5);
    const double arr_f64[2] = { 1.5, -2.5 };
    gguf_set_arr_data(ctx, "t.arr_f64", GGUF_TYPE_FLOAT64, arr_f64, 2);
    const int8_t arr_bool[3] = { 1, 0, 1 };
    gguf_set_arr_data(ctx, "t.arr_bool", GGUF_TYPE_BOOL, arr_bool, 3);
    gguf_set_arr_data(ctx, "t.arr_empty", GGUF_TYPE_UINT8, NULL, 0);
    const char * strs[3] = { "a", "", "ccc" };
    gguf_set_arr_str(ctx, "t.arr_str", strs, 3);
    TH_CHECK(gguf_get_n_kv(ctx) == 17, "17 keys set, got %" PRId64, gguf_get_n_kv(ctx));

    // override: same key count, the key moves to the back with its new type
    gguf_set_val_str(ctx, "t.u8", "now a string");
    TH_CHECK(gguf_get_n_kv(ctx) == 17, "override keeps the count");
    TH_CHECK(gguf_find_key(ctx, "t.u8") == 16 && gguf_get_kv_type(ctx, 16) == GGUF_TYPE_STRING, "override moves to back");
    TH_CHECK(strcmp(gguf_get_val_str(ctx, 16), "now a string") == 0, "override value");
    TH_CHECK(gguf_find_key(ctx, "t.i8") == 0, "other keys shift");
    // override a key with its own value (source memory belongs to the entry being replaced)
    gguf_set_val_str(ctx, "t.u8", gguf_get_val_str(ctx, gguf_find_key(ctx, "t.u8")));
    TH_CHECK(strcmp(gguf_get_val_str(ctx, gguf_find_key(ctx, "t.u8")), "now a string") == 0, "self override");

    // remove
    TH_CHECK(gguf_remove_key(ctx, "t.f64") == 8, "remove returns the old id");
    TH_CHECK(gguf_remove_key(ctx, "t.f64") == -1, "second remove");
    TH_CHECK(gguf_get_n_kv(ctx) == 16 && gguf_find_key(ctx, "t.f64") == -1, "removed");
    gguf_set_val_f64(ctx, "t.f64", -1.0 / 3.0);

    // tensors: offsets follow the padded sizes; changing a type moves the later ones
    struct ggml_init_params gp = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * g = ggml_init(gp);
    struct ggml_tensor * a = ggml_new_tensor_2d(g, GGML_TYPE_F32, 64, 3);  // 768 bytes
    struct ggml_tensor * b = ggml_new_tensor_1d(g, GGML_TYPE_F16, 5);      // 10 bytes -> padded to 32
    struct ggml_tensor * c = ggml_new_tensor_2d(g, GGML_TYPE_F32, 32, 2);  // 256 bytes
    ggml_set_name(a, "a");
    ggml_set_name(b, "b");
    ggml_set_name(c, "c");
    for (int i = 0; i < 64 * 3; i++) ((float *) a->data)[i] = (float) i * 0.5f;
    for (int i = 0; i < 5; i++) ((ggml_fp16_t *) b->data)[i] = ggml_fp32_to_fp16((float) i);
    for (int i = 0; i < 64; i++) ((float *) c->data)[i] = (float) -i;
    gguf_add_tensor(ctx, a);
    gguf_add_tensor(ctx, b);
    gguf_add_tensor(ctx, c);
    TH_CHECK(gguf_get_n_tensors(ctx) == 3, "3 tensors");
    TH_CHECK(gguf_get_tensor_offset(ctx, 0) == 0 && gguf_get_tensor_offset(ctx, 1) == 768 &&
             gguf_get_tensor_offset(ctx, 2) == 800, "offsets %zu %zu %zu", gguf_get_tensor_offset(ctx, 0),
             gguf_get_tensor_offset(ctx, 1), gguf_get_tensor_offset(ctx, 2));
    TH_CHECK(gguf_get_tensor_size(ctx, 1) == 10, "f16 size");

    gguf_set_tensor_type(ctx, "a", GGML_TYPE_Q8_0); // 64x3 -> 2 blocks of 34 bytes per row = 204 bytes
    TH_CHECK(gguf_get_tensor_type(ctx, 0) == GGML_TYPE_Q8_0 && gguf_get_tensor_size(ctx, 0) == 204, "q8_0 size %zu",
             gguf_get_tensor_size(ctx, 0));
    TH_CHECK(gguf_get_tensor_offset(ctx, 1) == 224 && gguf_get_tensor_offset(ctx, 2) == 256, "offsets after type change");
    uint8_t q8[204];
    for (int i = 0; i < 204; i++) q8[i] = (uint8_t) (i * 7);
    gguf_set_tensor_data(ctx, "a", q8);

    // alignment key: changes the padding, offsets follow
    gguf_set_val_u32(ctx, GGUF_KEY_GENERAL_ALIGNMENT, 64);
    TH_CHECK(gguf_get_alignment(ctx) == 64, "alignment set");
    TH_CHECK(gguf_get_tensor_offset(ctx, 1) == 256 && gguf_get_tensor_offset(ctx, 2) == 320, "offsets with alignment 64");

    char path[512];
    snprintf(path, sizeof(path), "%s/writer-api.gguf", g_tmpdir);
    TH_CHECK(gguf_write_to_file(ctx, path, false), "write %s", path);

    struct ggml_context * g2 = NULL;
    struct gguf_init_params ip = { .no_alloc = false, .ctx = &g2 };
    struct gguf_context * r = gguf_init_from_file(path, ip);
    TH_CHECK(r != NULL, "re-read writer output");
    if (r) {
        TH_CHECK(gguf_get_version(r) == 3 && gguf_get_alignment(r) == 64, "version/alignment");
        TH_CHECK(gguf_get_data_offset(r) % 64 == 0 && gguf_get_data_offset(r) == gguf_get_meta_size(ctx), "data offset");
        TH_CHECK(gguf_get_n_kv(r) == gguf_get_n_kv(ctx), "n_kv");
        int64_t id;
        TH_CHECK((id = gguf_find_key(r, "t.i8"))   >= 0 && gguf_get_val_i8(r, id)  == -5, "i8");
        TH_CHECK((id = gguf_find_key(r, "t.u16"))  >= 0 && gguf_get_val_u16(r, id) == 0xBEEF, "u16");
        TH_CHECK((id = gguf_find_key(r, "t.i16"))  >= 0 && gguf_get_val_i16(r, id) == -12345, "i16");
        TH_CHECK((id = gguf_find_key(r, "t.u32"))  >= 0 && gguf_get_val_u32(r, id) == 0xDEADBEEFu, "u32");
        TH_CHECK((id = gguf_find_key(r, "t.i32"))  >= 0 && gguf_get_val_i32(r, id) == -2000000000, "i32");
        TH_CHECK((id = gguf_find_key(r, "t.f32"))  >= 0 && gguf_get_val_f32(r, id) == 3.25f, "f32");
        TH_CHECK((id = gguf_find_key(r, "t.u64"))  >= 0 && gguf_get_val_u64(r, id) == UINT64_C(0xFEDCBA9876543210), "u64");
        TH_CHECK((id = gguf_find_key(r, "t.i64"))  >= 0 && gguf_get_val_i64(r, id) == INT64_MIN + 7, "i64");
        TH_CHECK((id = gguf_find_key(r, "t.f64"))  >= 0 && gguf_get_val_f64(r, id) == -1.0 / 3.0, "f64");
        TH_CHECK((id = gguf_find_key(r, "t.bool")) >= 0 && gguf_get_val_bool(r, id) == true, "bool");
        TH_CHECK((id = gguf_find_key(r, "t.str"))  >= 0 && strcmp(gguf_get_val_str(r, id), "h\xC3\xA9llo") == 0, "str");
        TH_CHECK((id = gguf_find_key(r, "t.u8"))   >= 0 && gguf_get_kv_type(r, id) == GGUF_TYPE_STRING, "overridden");
        TH_CHECK((id = gguf_find_key(r, "t.arr_i32")) >= 0 && gguf_get_kv_type(r, id) == GGUF_TYPE_ARRAY &&
                 gguf_get_arr_type(r, id) == GGUF_TYPE_INT32 && gguf_get_arr_n(r, id) == 5 &&
                 memcmp(gguf_get_arr_data(r, id), arr_i32, sizeof(arr_i32)) == 0, "arr i32");
        TH_CHECK((id = gguf_find_key(r, "t.arr_f64")) >= 0 && gguf_get_arr_n(r, id) == 2 &&
                 memcmp(gguf_get_arr_data(r, id), arr_f64, sizeof(arr_f64)) == 0, "arr f64");
        TH_CHECK((id = gguf_find_key(r, "t.arr_bool")) >= 0 && gguf_get_arr_type(r, id) == GGUF_TYPE_BOOL &&
                 memcmp(gguf_get_arr_data(r, id), arr_bool, 3) == 0, "arr bool");
        TH_CHECK((id = gguf_find_key(r, "t.arr_empty")) >= 0 && gguf_get_arr_n(r, id) == 0 &&
                 gguf_get_arr_type(r, id) == GGUF_TYPE_UINT8, "empty arr");
        TH_CHECK((id = gguf_find_key(r, "t.arr_str")) >= 0 && gguf_get_arr_type(r, id) == GGUF_TYPE_STRING &&
                 gguf_get_arr_n(r, id) == 3 && strcmp(gguf_get_arr_str(r, id, 0), "a") == 0 &&
                 strcmp(gguf_get_arr_str(r, id, 1), "") == 0 && strcmp(gguf_get_arr_str(r, id, 2), "ccc") == 0, "arr str");
        TH_CHECK(gguf_get_n_tensors(r) == 3, "tensors");
        TH_CHECK(gguf_get_tensor_offset(r, 1) == 256 && gguf_get_tensor_offset(r, 2) == 320, "tensor offsets");
        struct ggml_tensor * ra = ggml_get_tensor(g2, "a");
        struct ggml_tensor * rb = ggml_get_tensor(g2, "b");
        struct ggml_tensor * rc = ggml_get_tensor(g2, "c");
        TH_CHECK(ra && ra->type == GGML_TYPE_Q8_0 && ra->ne[0] == 64 && ra->ne[1] == 3 && memcmp(ra->data, q8, 204) == 0, "a");
        TH_CHECK(rb && rb->ne[0] == 5 && rb->ne[1] == 1 && memcmp(rb->data, b->data, 10) == 0, "b");
        TH_CHECK(rc && rc->ne[0] == 32 && rc->ne[1] == 2 && memcmp(rc->data, c->data, 256) == 0, "c");
    }
    gguf_free(r);
    ggml_free(g2);

    // removing the alignment key goes back to the default padding
    gguf_remove_key(ctx, GGUF_KEY_GENERAL_ALIGNMENT);
    TH_CHECK(gguf_get_alignment(ctx) == 32 && gguf_get_tensor_offset(ctx, 2) == 256, "alignment removed");

    // gguf_set_kv copies everything into another context, overriding what is there
    struct gguf_context * cp = gguf_init_empty();
    gguf_set_val_u32(cp, "t.str", 7);
    gguf_set_val_u32(cp, "only.here", 1);
    gguf_set_kv(cp, ctx);
    TH_CHECK(gguf_get_n_kv(cp) == gguf_get_n_kv(ctx) + 1, "set_kv count");
    int bad = 0;
    for (int64_t i = 0; i < gguf_get_n_kv(ctx); i++) {
        const int64_t j = gguf_find_key(cp, gguf_get_key(ctx, i));
        bad += j < 0 || !kv_equal(ctx, i, cp, j);
    }
    TH_CHECK(bad == 0, "set_kv values");
    gguf_free(cp);

    unlink(path);
    gguf_free(ctx);
    ggml_free(g);
}

// a written file must byte-match an independent hand encoding of the same content
static void test_writer_bytes(void) {
    struct gguf_context * ctx = gguf_init_empty();
    gguf_set_val_u32(ctx, "k", 0x01020304u);
    const char * s[2] = { "x", "yz" };
    gguf_set_arr_str(ctx, "s", s, 2);
    uint8_t expect[512];
    size_t n = 0;
#define PUT(p, k) do { memcpy(expect + n, (p), (k)); n += (k); } while (0)
    const uint32_t ver = 3;      PUT("GGUF", 4); PUT(&ver, 4);
    const int64_t n_t = 0, n_kv = 2; PUT(&n_t, 8); PUT(&n_kv, 8);
    const uint64_t l1 = 1;       PUT(&l1, 8); PUT("k", 1);
    const int32_t t_u32 = 4;     PUT(&t_u32, 4);
    const uint32_t v = 0x01020304u; PUT(&v, 4);
    PUT(&l1, 8); PUT("s", 1);
    const int32_t t_arr = 9, t_str = 8; PUT(&t_arr, 4); PUT(&t_str, 4);
    const uint64_t cnt = 2, l2 = 2; PUT(&cnt, 8); PUT(&l1, 8); PUT("x", 1); PUT(&l2, 8); PUT("yz", 2);
#undef PUT
    while (n % 32) expect[n++] = 0;
    TH_CHECK(gguf_get_meta_size(ctx) == n, "meta size %zu vs %zu", gguf_get_meta_size(ctx), n);
    uint8_t got[512] = {0};
    if (gguf_get_meta_size(ctx) == n) {
        gguf_get_meta_data(ctx, got);
        TH_CHECK(memcmp(got, expect, n) == 0, "meta bytes");
    }
    gguf_free(ctx);
}

// getters with a wrong type or id are programming errors: they must abort (GGML_ASSERT), like llama.cpp
static bool aborts(void (*fn)(struct gguf_context *), struct gguf_context * ctx) {
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        const int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 2);
        }
        fn(ctx);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void bad_type_u32(struct gguf_context * ctx)  { (void) gguf_get_val_u32(ctx, gguf_find_key(ctx, "s")); }
static void bad_type_str(struct gguf_context * ctx)  { (void) gguf_get_val_str(ctx, gguf_find_key(ctx, "u")); }
static void bad_type_i32(struct gguf_context * ctx)  { (void) gguf_get_val_i32(ctx, gguf_find_key(ctx, "u")); }
static void bad_id(struct gguf_context * ctx)        { (void) gguf_get_key(ctx, gguf_get_n_kv(ctx)); }
static void bad_id_neg(struct gguf_context * ctx)    { (void) gguf_get_kv_type(ctx, -1); }
static void arr_as_val(struct gguf_context * ctx)    { (void) gguf_get_val_u8(ctx, gguf_find_key(ctx, "a")); }
static void val_as_arr(struct gguf_context * ctx)    { (void) gguf_get_arr_type(ctx, gguf_find_key(ctx, "u")); }
static void str_arr_data(struct gguf_context * ctx)  { (void) gguf_get_arr_data(ctx, gguf_find_key(ctx, "sa")); }
static void arr_str_oob(struct gguf_context * ctx)   { (void) gguf_get_arr_str(ctx, gguf_find_key(ctx, "sa"), 2); }
static void bad_tensor(struct gguf_context * ctx)    { (void) gguf_get_tensor_name(ctx, 0); }
static void align_type(struct gguf_context * ctx)    { gguf_set_val_u64(ctx, GGUF_KEY_GENERAL_ALIGNMENT, 32); }
static void align_value(struct gguf_context * ctx)   { gguf_set_val_u32(ctx, GGUF_KEY_GENERAL_ALIGNMENT, 48); }
static void no_tensor_type(struct gguf_context * ctx) { gguf_set_tensor_type(ctx, "nope", GGML_TYPE_F16); }

static void test_getter_asserts(void) {
    struct gguf_context * ctx = gguf_init_empty();
    gguf_set_val_str(ctx, "s", "x");
    gguf_set_val_u32(ctx, "u", 1);
    const uint8_t a[3] = { 1, 2, 3 };
    gguf_set_arr_data(ctx, "a", GGUF_TYPE_UINT8, a, 3);
    const char * sa[2] = { "p", "q" };
    gguf_set_arr_str(ctx, "sa", sa, 2);
    struct { const char * what; void (*fn)(struct gguf_context *); } cases[] = {
        { "u32 getter on a string", bad_type_u32 }, { "str getter on a u32", bad_type_str },
        { "i32 getter on a u32", bad_type_i32 },    { "key id == n_kv", bad_id },
        { "key id -1", bad_id_neg },                { "scalar getter on an array", arr_as_val },
        { "array type of a scalar", val_as_arr },   { "arr_data of a string array", str_arr_data },
        { "arr_str out of range", arr_str_oob },    { "tensor id without tensors", bad_tensor },
        { "alignment as u64", align_type },         { "alignment 48", align_value },
        { "set type of a missing tensor", no_tensor_type },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        TH_CHECK(aborts(cases[i].fn, ctx), "%s does not abort", cases[i].what);
    }
    // and the legal calls on the same context do not
    TH_CHECK(gguf_get_val_u32(ctx, gguf_find_key(ctx, "u")) == 1 && gguf_get_arr_n(ctx, gguf_find_key(ctx, "sa")) == 2 &&
             strcmp(gguf_get_arr_str(ctx, gguf_find_key(ctx, "sa"), 1), "q") == 0, "legal getters");

    // write errors are reported, not fatal
    TH_CHECK(!gguf_write_to_file(ctx, "/nonexistent-dir/x.gguf", false), "write into a missing folder");
    TH_CHECK(!gguf_write_to_file(ctx, "/dev/full", false), "write to a full device");
    gguf_free(ctx);
}

int main(void) {
    snprintf(g_tmpdir, sizeof(g_tmpdir), "/tmp/test-gguf-XXXXXX");
    if (!mkdtemp(g_tmpdir)) {
        fprintf(stderr, "cannot create a temp dir\n");
        return 1;
    }

    test_writer_bytes();
    test_writer_api();
    test_getter_asserts();

    const char * models = th_data_path("models");
    const char * index  = th_data_path("reference/synthetic/index.json");
    if (th_require_file(models) && th_require_file(index)) {
        json_error_t err;
        g_index = json_load_file(index, 0, &err);
        TH_CHECK(g_index != NULL, "cannot parse %s: %s", index, err.text);

        nftw(models, collect_cb, 16, FTW_PHYS);
        qsort(g_files, g_n_files, sizeof(*g_files), cmp_str);
        TH_CHECK(g_n_files >= 40, "found only %zu .gguf files under %s", g_n_files, models);

        size_t n_synth = 0;
        for (size_t i = 0; i < g_n_files; i++) {
            check_file_meta(g_files[i]);
            n_synth += strstr(g_files[i], "/synthetic/") != NULL;
        }
        TH_CHECK(g_index == NULL || n_synth == json_array_size(json_object_get(g_index, "models")),
                 "%zu synthetic files, index lists %zu", n_synth, json_array_size(json_object_get(g_index, "models")));

        // full reads of a few files of different kinds
        check_file_data(th_data_path("models/stories260K-q4_0.gguf"));
        check_file_data(th_data_path("models/synthetic/llama-Q4_K_M.gguf"));
        check_file_data(th_data_path("models/synthetic/qwen3moe-F16.gguf"));
        check_file_data(th_data_path("models/vocab/ggml-vocab-phi-3.gguf"));

        for (size_t i = 0; i < g_n_files; i++) {
            check_round_trip(g_files[i]);
        }
        printf("round trip: %d of %zu rewritten files are byte-identical to the original, %d identical but for the "
               "final metadata padding\n", g_identical, g_n_files, g_padded);

        for (size_t i = 0; i < g_n_files; i++) {
            free(g_files[i]);
        }
        free(g_files);
        json_decref(g_index);
    }

    rmdir(g_tmpdir);
    return th_finish();
}
