// llama-gguf-split end to end: stories260K split into shards (by tensor count, with and without tensors in the
// first shard, and by size), every shard read back independently with gguf.h (split.* keys and their types,
// metadata only in the first shard, which tensors go where by llama.cpp's rule, shapes, types and data bytes
// against the original), merged back and compared with the original (metadata, tensor index, data blob);
// --dry-run writes nothing; bad input ends with status 1 and a message, never a signal, and leaves no output
// (nor a temp file) behind.
//
// usage: test-gguf-split path/to/llama-gguf-split path/to/temp-dir
#include "harness.h"
#include "harness-run.h"

#include "gguf.h"

#include <dirent.h>
#include <errno.h>
#include <unistd.h>

static const char * g_bin;
static const char * g_dir;

// ---- running the tool ----------------------------------------------------------------------------------

// runs g_bin with args (NULL-terminated) in g_dir, stdout / stderr captured
static struct th_run_result run_tool(const char * const * args) {
    char * argv[32];
    int a = 0;
    argv[a++] = (char *) g_bin;
    for (int i = 0; args[i] && a < 31; i++) {
        argv[a++] = (char *) args[i];
    }
    argv[a] = NULL;
    return th_run(argv, g_dir);
}

// ---- files in the temp dir -----------------------------------------------------------------------------

static const char * tmp_path(const char * fmt, ...) {
    static char bufs[8][4096];
    static int  slot = 0;
    va_list args;
    va_start(args, fmt);
    const char * out = th_vpath(bufs, &slot, g_dir, fmt, args);
    va_end(args);
    return out;
}

// shard name as llama.cpp documents it, built here independently of llama_split_path
static const char * shard_path(const char * prefix, int i, int n) {
    return tmp_path("%s-%05d-of-%05d.gguf", prefix, i + 1, n);
}

static bool file_exists(const char * path) {
    struct stat st;
    return stat(path, &st) == 0;
}

// number of entries of the temp dir whose name starts with prefix (".tmp" leftovers included)
static int count_files(const char * prefix) {
    DIR * d = opendir(g_dir);
    int n = 0;
    if (!d) {
        return -1;
    }
    for (struct dirent * e; (e = readdir(d)) != NULL;) {
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    }
    closedir(d);
    return n;
}

// empties the temp dir (it holds only what this test wrote)
static void clean_dir(void) {
    th_clear_dir(g_dir);
}

static bool copy_file(const char * from, const char * to, size_t truncate_by) {
    size_t n = 0;
    void * data = th_read_file(from, &n);
    if (!data) {
        return false;
    }
    FILE * f = fopen(to, "wb");
    const size_t w = n > truncate_by ? n - truncate_by : 0;
    const bool ok = f && fwrite(data, 1, w, f) == w;
    if (f) {
        fclose(f);
    }
    free(data);
    return ok;
}

// ---- reading a GGUF independently: gguf.h for the index, the raw bytes for the data ---------------------

struct gfile {
    struct gguf_context * g;
    struct ggml_context * meta; // tensor shapes
    uint8_t *             bytes;
    size_t                size;
};

static bool gfile_load(struct gfile * f, const char * path) {
    memset(f, 0, sizeof(*f));
    struct gguf_init_params ip = { .no_alloc = true, .ctx = &f->meta };
    f->g     = gguf_init_from_file(path, ip);
    f->bytes = th_read_file(path, &f->size);
    TH_CHECK(f->g != NULL && f->bytes != NULL, "cannot read %s", path);
    return f->g != NULL && f->bytes != NULL;
}

static void gfile_free(struct gfile * f) {
    if (f->g) {
        gguf_free(f->g);
    }
    if (f->meta) {
        ggml_free(f->meta);
    }
    free(f->bytes);
    memset(f, 0, sizeof(*f));
}

static size_t gtype_size(enum gguf_type t) {
    switch (t) {
        case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL:    return 1;
        case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16:                       return 2;
        case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
        case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
        default:                                                           return 0;
    }
}

// key of a equals the same key in b: type, array type and length, value bytes / strings
static bool kv_equal(const struct gguf_context * a, int64_t ia, const struct gguf_context * b) {
    const int64_t ib = gguf_find_key(b, gguf_get_key(a, ia));
    if (ib < 0 || gguf_get_kv_type(a, ia) != gguf_get_kv_type(b, ib)) {
        return false;
    }
    const enum gguf_type t = gguf_get_kv_type(a, ia);
    if (t == GGUF_TYPE_STRING) {
        return strcmp(gguf_get_val_str(a, ia), gguf_get_val_str(b, ib)) == 0;
    }
    if (t != GGUF_TYPE_ARRAY) {
        return memcmp(gguf_get_val_data(a, ia), gguf_get_val_data(b, ib), gtype_size(t)) == 0;
    }
    const enum gguf_type at = gguf_get_arr_type(a, ia);
    const size_t n = gguf_get_arr_n(a, ia);
    if (at != gguf_get_arr_type(b, ib) || n != gguf_get_arr_n(b, ib)) {
        return false;
    }
    if (at == GGUF_TYPE_STRING) {
        for (size_t i = 0; i < n; i++) {
            if (strcmp(gguf_get_arr_str(a, ia, i), gguf_get_arr_str(b, ib, i)) != 0) {
                return false;
            }
        }
        return true;
    }
    return n == 0 || memcmp(gguf_get_arr_data(a, ia), gguf_get_arr_data(b, ib), n * gtype_size(at)) == 0;
}

// every key of src is in dst with the same value
static int count_kv_mismatches(const struct gguf_context * src, const struct gguf_context * dst) {
    int bad = 0;
    for (int64_t i = 0; i < gguf_get_n_kv(src); i++) {
        if (!kv_equal(src, i, dst)) {
            fprintf(stderr, "  key %s differs or is missing\n", gguf_get_key(src, i));
            bad++;
        }
    }
    return bad;
}

// tensor ia of a equals tensor ib of b: name, type, shape, data bytes
static bool tensor_equal(const struct gfile * a, int64_t ia, const struct gfile * b, int64_t ib) {
    const char * name = gguf_get_tensor_name(a->g, ia);
    if (strcmp(name, gguf_get_tensor_name(b->g, ib)) != 0 ||
        gguf_get_tensor_type(a->g, ia) != gguf_get_tensor_type(b->g, ib)) {
        return false;
    }
    const struct ggml_tensor * ta = ggml_get_tensor(a->meta, name);
    const struct ggml_tensor * tb = ggml_get_tensor(b->meta, name);
    if (!ta || !tb || memcmp(ta->ne, tb->ne, sizeof(ta->ne)) != 0) {
        return false;
    }
    const size_t n  = gguf_get_tensor_size(a->g, ia);
    const size_t oa = gguf_get_data_offset(a->g) + gguf_get_tensor_offset(a->g, ia);
    const size_t ob = gguf_get_data_offset(b->g) + gguf_get_tensor_offset(b->g, ib);
    return n == gguf_get_tensor_size(b->g, ib) && oa + n <= a->size && ob + n <= b->size &&
           memcmp(a->bytes + oa, b->bytes + ob, n) == 0;
}

static int64_t key_u16(const struct gguf_context * g, const char * key) {
    const int64_t id = gguf_find_key(g, key);
    return id >= 0 && gguf_get_kv_type(g, id) == GGUF_TYPE_UINT16 ? gguf_get_val_u16(g, id) : -1;
}

static int64_t key_i32(const struct gguf_context * g, const char * key) {
    const int64_t id = gguf_find_key(g, key);
    return id >= 0 && gguf_get_kv_type(g, id) == GGUF_TYPE_INT32 ? gguf_get_val_i32(g, id) : -1;
}

#define PAD32(x) (((x) + 31) & ~(size_t) 31)

// ---- the shard checks ----------------------------------------------------------------------------------

// Reads shards prefix-0000i-of-n and checks them against the original; first[k] receives the index in the
// original of shard k's first tensor and count[k] its tensor count. Tensors must come in the original's order,
// each exactly once.
static void check_shards(const struct gfile * orig, const char * prefix, int n, int64_t * first, int64_t * count) {
    const int64_t n_tensors = gguf_get_n_tensors(orig->g);
    int64_t next = 0; // index in the original of the next tensor expected
    for (int k = 0; k < n; k++) {
        struct gfile s;
        first[k] = next;
        count[k] = 0;
        if (!gfile_load(&s, shard_path(prefix, k, n))) {
            continue;
        }
        TH_CHECK(key_u16(s.g, "split.no") == k, "%s shard %d: split.no (u16) = %lld", prefix, k,
                 (long long) key_u16(s.g, "split.no"));
        TH_CHECK(key_u16(s.g, "split.count") == n, "%s shard %d: split.count (u16) = %lld", prefix, k,
                 (long long) key_u16(s.g, "split.count"));
        TH_CHECK(key_i32(s.g, "split.tensors.count") == n_tensors, "%s shard %d: split.tensors.count (i32) = %lld",
                 prefix, k, (long long) key_i32(s.g, "split.tensors.count"));
        if (k == 0) {
            // all of the model's metadata, plus the three split keys
            TH_CHECK(count_kv_mismatches(orig->g, s.g) == 0, "%s: first shard's metadata differs", prefix);
            TH_CHECK(gguf_get_n_kv(s.g) == gguf_get_n_kv(orig->g) + 3, "%s: first shard has %lld keys", prefix,
                     (long long) gguf_get_n_kv(s.g));
        } else {
            TH_CHECK(gguf_get_n_kv(s.g) == 3, "%s shard %d: %lld keys, expected only the split keys", prefix, k,
                     (long long) gguf_get_n_kv(s.g));
        }
        count[k] = gguf_get_n_tensors(s.g);
        for (int64_t j = 0; j < count[k]; j++, next++) {
            TH_EXPECT(next < n_tensors && tensor_equal(&s, j, orig, next), "%s shard %d tensor %lld (%s) differs from "
                      "the original's tensor %lld", prefix, k, (long long) j, gguf_get_tensor_name(s.g, j), (long long) next);
        }
        gfile_free(&s);
    }
    TH_CHECK(next == n_tensors, "%s: the shards hold %lld tensors, the original %lld", prefix, (long long) next,
             (long long) n_tensors);
    TH_CHECK(count_files(tmp_path("%s", prefix) + strlen(g_dir) + 1) == n, "%s: %d files expected", prefix, n);
}

// a merged file equals the original: same keys and values plus split.no = 0, split.count = 0,
// split.tensors.count = n (llama.cpp keeps the first shard's keys, count zeroed); same tensors; and, both being
// written with 32-byte alignment and zero padding, the same data blob byte for byte
static void check_merged(const struct gfile * orig, const char * path) {
    struct gfile m;
    if (!gfile_load(&m, path)) {
        return;
    }
    const int64_t n_tensors = gguf_get_n_tensors(orig->g);
    TH_CHECK(count_kv_mismatches(orig->g, m.g) == 0, "%s: metadata differs from the original", path);
    TH_CHECK(gguf_get_n_kv(m.g) == gguf_get_n_kv(orig->g) + 3, "%s: %lld keys", path, (long long) gguf_get_n_kv(m.g));
    TH_CHECK(key_u16(m.g, "split.no") == 0 && key_u16(m.g, "split.count") == 0 &&
             key_i32(m.g, "split.tensors.count") == n_tensors, "%s: split keys", path);
    TH_CHECK(gguf_get_n_tensors(m.g) == n_tensors, "%s: %lld tensors", path, (long long) gguf_get_n_tensors(m.g));
    for (int64_t i = 0; i < n_tensors && i < gguf_get_n_tensors(m.g); i++) {
        TH_EXPECT(tensor_equal(&m, i, orig, i), "%s: tensor %lld (%s) differs", path, (long long) i,
                  gguf_get_tensor_name(orig->g, i));
    }
    const size_t dm = gguf_get_data_offset(m.g), dorig = gguf_get_data_offset(orig->g);
    TH_CHECK(m.size - dm == orig->size - dorig && memcmp(m.bytes + dm, orig->bytes + dorig, m.size - dm) == 0,
             "%s: data blob differs from the original's (%zu vs %zu bytes)", path, m.size - dm, orig->size - dorig);
    gfile_free(&m);
}

// a shard written here with gguf.h: the split keys as llama.cpp types them and one small F32 tensor
static bool write_shard(const char * path, int split_no, int split_count, int64_t n_tensors, const char * tensor_name) {
    struct ggml_init_params ip = { .mem_size = 16 * 1024, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    if (!ctx) {
        return false;
    }
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    ggml_set_name(t, tensor_name);
    for (int i = 0; i < 16; i++) {
        ((float *) t->data)[i] = (float) i;
    }
    struct gguf_context * g = gguf_init_empty();
    gguf_set_val_u16(g, "split.no", (uint16_t) split_no);
    gguf_set_val_u16(g, "split.count", (uint16_t) split_count);
    gguf_set_val_i32(g, "split.tensors.count", (int32_t) n_tensors);
    gguf_add_tensor(g, t);
    const bool ok = gguf_write_to_file(g, path, false);
    gguf_free(g);
    ggml_free(ctx);
    return ok;
}

// runs the tool, expecting success
static bool run_ok(const char * const * args, const char * what) {
    struct th_run_result r = run_tool(args);
    TH_CHECK(r.status == 0, "%s: exit %d\n%s%s", what, r.status, r.out, r.err);
    const bool ok = r.status == 0;
    th_run_free(&r);
    return ok;
}

// runs the tool, expecting exit status 1 with `msg` in stderr
static void run_fails(const char * const * args, const char * msg, const char * what) {
    struct th_run_result r = run_tool(args);
    TH_CHECK(r.status == 1, "%s: exit %d, expected 1\n%s", what, r.status, r.err);
    TH_CHECK(strstr(r.err, msg) != NULL, "%s: stderr lacks '%s':\n%s", what, msg, r.err);
    th_run_free(&r);
}

// ---- the cases -----------------------------------------------------------------------------------------

// split by tensor count; 48 tensors by 20 -> 20, 20, 8 (llama.cpp: a new shard at every multiple of N)
static void test_split_tensors(const struct gfile * orig, const char * model) {
    const char * args[] = { "--split-max-tensors", "20", model, "tq", NULL };
    if (!run_ok(args, "split --split-max-tensors 20")) {
        return;
    }
    int64_t first[3], count[3];
    check_shards(orig, "tq", 3, first, count);
    TH_CHECK(count[0] == 20 && count[1] == 20 && count[2] == 8, "shard sizes %lld %lld %lld", (long long) count[0],
             (long long) count[1], (long long) count[2]);

    const char * margs[] = { "--merge", shard_path("tq", 0, 3), "tq-merged.gguf", NULL };
    if (run_ok(margs, "merge")) {
        check_merged(orig, tmp_path("tq-merged.gguf"));
    }
    TH_CHECK(count_files("tq-merged") == 1, "merge left a temp file behind");

    // merging again over the existing output is refused and leaves it untouched
    size_t n0 = 0, n1 = 0;
    void * before = th_read_file(tmp_path("tq-merged.gguf"), &n0);
    run_fails(margs, "already exists", "merge onto an existing output");
    void * after = th_read_file(tmp_path("tq-merged.gguf"), &n1);
    TH_CHECK(before && after && n0 == n1 && memcmp(before, after, n0) == 0, "existing merge output was changed");
    free(before);
    free(after);

    // a shard is not a model to split again
    const char * sargs[] = { shard_path("tq", 1, 3), "tq-again", NULL };
    run_fails(sargs, "merge them first", "split of a shard");
    TH_CHECK(count_files("tq-again") == 0, "split of a shard wrote files");
}

// --no-tensor-first-split: the first shard has the metadata and no tensors; 48 by 16 -> 0, 16, 16, 16
static void test_split_no_tensor_first(const struct gfile * orig, const char * model) {
    const char * args[] = { "--split", "--no-tensor-first-split", "--split-max-tensors", "16", model, "nf", NULL };
    if (!run_ok(args, "split --no-tensor-first-split")) {
        return;
    }
    int64_t first[4], count[4];
    check_shards(orig, "nf", 4, first, count);
    TH_CHECK(count[0] == 0 && count[1] == 16 && count[2] == 16 && count[3] == 16, "shard sizes %lld %lld %lld %lld",
             (long long) count[0], (long long) count[1], (long long) count[2], (long long) count[3]);
    const char * margs[] = { "--merge", shard_path("nf", 0, 4), "nf-merged.gguf", NULL };
    if (run_ok(margs, "merge of a split with an empty first shard")) {
        check_merged(orig, tmp_path("nf-merged.gguf"));
    }
}

// split by size: a new shard when the 32-padded tensor bytes would pass 1M (1,000,000 bytes); checked here as
// "each shard within the limit and the next shard's first tensor would not have fitted"
static void test_split_size(const struct gfile * orig, const char * model) {
    const char * args[] = { "--split-max-size", "1M", model, "sz", NULL };
    if (!run_ok(args, "split --split-max-size 1M")) {
        return;
    }
    // the expected shard count, from the rule applied to the original's index
    int n = 1;
    size_t cur = 0;
    for (int64_t i = 0; i < gguf_get_n_tensors(orig->g); i++) {
        const size_t b = PAD32(gguf_get_tensor_size(orig->g, i));
        if (cur + b > 1000000) {
            n++;
            cur = b;
        } else {
            cur += b;
        }
    }
    TH_CHECK(n >= 2, "the model must need 2+ shards of 1M (got %d)", n);
    if (n > 8) {
        return;
    }
    int64_t first[8], count[8];
    check_shards(orig, "sz", n, first, count);
    for (int k = 0; k < n; k++) {
        size_t bytes = 0;
        for (int64_t i = first[k]; i < first[k] + count[k]; i++) {
            bytes += PAD32(gguf_get_tensor_size(orig->g, i));
        }
        TH_CHECK(count[k] > 0 && bytes <= 1000000, "size shard %d: %lld tensors, %zu bytes", k, (long long) count[k], bytes);
        if (k + 1 < n) {
            TH_CHECK(bytes + PAD32(gguf_get_tensor_size(orig->g, first[k + 1])) > 1000000,
                     "size shard %d could have held the next tensor", k);
        }
    }
    const char * margs[] = { "--merge", shard_path("sz", 0, n), "sz-merged.gguf", NULL };
    if (run_ok(margs, "merge of the size split")) {
        check_merged(orig, tmp_path("sz-merged.gguf"));
    }
}

// the default (--split-max-tensors 128): one shard "-00001-of-00001"; --dry-run: the plan, no file
static void test_default_and_dry_run(const struct gfile * orig, const char * model) {
    const char * args[] = { model, "one", NULL };
    if (run_ok(args, "split with the defaults")) {
        int64_t first[1], count[1];
        check_shards(orig, "one", 1, first, count);
    }

    const char * dargs[] = { "--dry-run", "--split-max-tensors", "20", model, "dry", NULL };
    struct th_run_result r = run_tool(dargs);
    TH_CHECK(r.status == 0, "split --dry-run: exit %d\n%s", r.status, r.err);
    TH_CHECK(strstr(r.out, "n_split: 3") && strstr(r.out, "split 00003: n_tensors = 8"), "dry-run plan:\n%s", r.out);
    th_run_free(&r);
    TH_CHECK(count_files("dry") == 0, "split --dry-run wrote files");

    const char * mdargs[] = { "--merge", "--dry-run", shard_path("tq", 0, 3), "dry-merged.gguf", NULL };
    run_ok(mdargs, "merge --dry-run");
    TH_CHECK(count_files("dry") == 0, "merge --dry-run wrote files");
}

// --delete-splits: the shards go only once the merged file is complete
static void test_delete_splits(const struct gfile * orig, const char * model) {
    const char * args[] = { "--split-max-tensors", "24", model, "del", NULL };
    if (!run_ok(args, "split for --delete-splits")) {
        return;
    }
    const char * margs[] = { "--merge", "--delete-splits", shard_path("del", 0, 2), "kept.gguf", NULL };
    if (run_ok(margs, "merge --delete-splits")) {
        check_merged(orig, tmp_path("kept.gguf"));
    }
    TH_CHECK(count_files("del") == 0, "--delete-splits left shards");
}

// bad input: status 1, a message, and nothing under the output names
static void test_errors(const struct gfile * orig, const char * model) {
    // shards of the 20-tensor split are copied to make broken sets
    TH_CHECK(copy_file(shard_path("tq", 0, 3), shard_path("miss", 0, 3), 0), "copy");
    TH_CHECK(copy_file(shard_path("tq", 2, 3), shard_path("miss", 2, 3), 0), "copy");
    const char * a1[] = { "--merge", shard_path("miss", 0, 3), "bad-merged.gguf", NULL };
    run_fails(a1, "failed to load input GGUF", "merge with a shard missing");

    // shard 2 of a different set (split.no 1 of 2) where shard 2 of 3 belongs
    TH_CHECK(copy_file(shard_path("tq", 0, 3), shard_path("mixed", 0, 3), 0), "copy");
    TH_CHECK(copy_file(shard_path("tq", 2, 3), shard_path("mixed", 2, 3), 0), "copy");
    TH_CHECK(copy_file(shard_path("sz", 1, 2), shard_path("mixed", 1, 3), 0), "copy");
    const char * a2[] = { "--merge", shard_path("mixed", 0, 3), "bad-merged.gguf", NULL };
    run_fails(a2, "says it is split 2 of 2, expected split 2 of 3", "merge with a shard of another set");

    // shard 2 given again as shard 3
    TH_CHECK(copy_file(shard_path("tq", 0, 3), shard_path("twice", 0, 3), 0), "copy");
    TH_CHECK(copy_file(shard_path("tq", 1, 3), shard_path("twice", 1, 3), 0), "copy");
    TH_CHECK(copy_file(shard_path("tq", 1, 3), shard_path("twice", 2, 3), 0), "copy");
    const char * a3[] = { "--merge", shard_path("twice", 0, 3), "bad-merged.gguf", NULL };
    run_fails(a3, "says it is split 2 of 3, expected split 3 of 3", "merge with a shard twice");

    // a well-formed shard 3 whose one tensor has the name of a tensor of shard 1, and one whose tensor count
    // does not add up to split.tensors.count
    struct gfile s0;
    if (gfile_load(&s0, shard_path("tq", 0, 3))) {
        TH_CHECK(copy_file(shard_path("tq", 0, 3), shard_path("dup", 0, 3), 0), "copy");
        TH_CHECK(copy_file(shard_path("tq", 1, 3), shard_path("dup", 1, 3), 0), "copy");
        TH_CHECK(write_shard(shard_path("dup", 2, 3), 2, 3, gguf_get_n_tensors(orig->g), gguf_get_tensor_name(s0.g, 0)),
                 "write");
        const char * a3b[] = { "--merge", shard_path("dup", 0, 3), "bad-merged.gguf", NULL };
        run_fails(a3b, "is already in an earlier split", "merge with a tensor twice");

        TH_CHECK(copy_file(shard_path("tq", 0, 3), shard_path("short", 0, 3), 0), "copy");
        TH_CHECK(copy_file(shard_path("tq", 1, 3), shard_path("short", 1, 3), 0), "copy");
        TH_CHECK(write_shard(shard_path("short", 2, 3), 2, 3, gguf_get_n_tensors(orig->g), "extra.weight"), "write");
        const char * a3c[] = { "--merge", shard_path("short", 0, 3), "bad-merged.gguf", NULL };
        run_fails(a3c, "the splits hold 41 tensors but split.tensors.count is 48", "merge with tensors missing");
        gfile_free(&s0);
    }

    // a truncated shard
    TH_CHECK(copy_file(shard_path("tq", 0, 3), shard_path("cut", 0, 3), 0), "copy");
    TH_CHECK(copy_file(shard_path("tq", 1, 3), shard_path("cut", 1, 3), 0), "copy");
    TH_CHECK(copy_file(shard_path("tq", 2, 3), shard_path("cut", 2, 3), 1000), "copy");
    const char * a4[] = { "--merge", shard_path("cut", 0, 3), "bad-merged.gguf", NULL };
    run_fails(a4, "failed to load input GGUF", "merge with a truncated shard");

    // not a split / not the first shard / not a GGUF / no file
    const char * a5[] = { "--merge", model, "bad-merged.gguf", NULL };
    run_fails(a5, "does not contain split.count", "merge of a plain model");
    const char * a6[] = { "--merge", shard_path("tq", 1, 3), "bad-merged.gguf", NULL };
    run_fails(a6, "unexpected input file name", "merge from the second shard");
    FILE * f = fopen(tmp_path("text.gguf"), "w");
    if (f) {
        fputs("this is not a GGUF file\n", f);
        fclose(f);
    }
    const char * a7[] = { tmp_path("text.gguf"), "bad-split", NULL };
    run_fails(a7, "failed to load input GGUF", "split of a text file");
    const char * a8[] = { tmp_path("no-such.gguf"), "bad-split", NULL };
    run_fails(a8, "failed to open input GGUF", "split of a missing file");
    const char * a9[] = { "--merge", tmp_path("no-such-00001-of-00002.gguf"), "bad-merged.gguf", NULL };
    run_fails(a9, "failed to load input GGUF", "merge of a missing file");
    // an output folder that does not exist
    const char * a10[] = { model, tmp_path("no-such-dir/x"), NULL };
    run_fails(a10, "cannot create", "split into a missing folder");
    TH_CHECK(count_files("bad-") == 0, "a failed run left output files behind");

    // command lines
    const char * c1[] = { NULL };
    run_fails(c1, "error: bad arguments", "no arguments");
    const char * c2[] = { "--bogus", model, "x", NULL };
    run_fails(c2, "error: unknown argument: --bogus", "unknown option");
    const char * c3[] = { "--split-max-tensors", "0", model, "x", NULL };
    run_fails(c3, "positive integer", "--split-max-tensors 0");
    const char * c4[] = { "--split-max-size", "10K", model, "x", NULL };
    run_fails(c4, "supported units are M (megabytes) or G (gigabytes)", "--split-max-size 10K");
    const char * c5[] = { "--split", "--merge", model, "x", NULL };
    run_fails(c5, "either --split or --merge", "--split --merge");
    const char * c6[] = { "--split-max-size", "1M", "--split-max-tensors", "4", model, "x", NULL };
    run_fails(c6, "either --split-max-tensors or --split-max-size", "both split modes");
    const char * c7[] = { "--split-max-tensors", NULL };
    run_fails(c7, "invalid parameter for argument", "option without its value");
    TH_CHECK(count_files("x-") == 0, "a bad command line wrote files");

    const char * h[] = { "--help", NULL };
    struct th_run_result r = run_tool(h);
    TH_CHECK(r.status == 0 && strstr(r.out, "usage:") && strstr(r.out, "--split-max-size N(M|G)"), "--help: exit %d\n%s",
             r.status, r.out);
    th_run_free(&r);
}

int main(int argc, char ** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s llama-gguf-split temp-dir\n", argv[0]);
        return 1;
    }
    g_bin = argv[1];
    g_dir = argv[2];
    if (mkdir(g_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "cannot create %s: %s\n", g_dir, strerror(errno));
        return 1;
    }
    clean_dir();

    // Q8_0 for the tensor-count splits (quantized types and block shapes), F32 for the size split (1.2 MB, so
    // 1M gives two shards)
    const char * q8  = th_data_path("models/stories260K-q8_0.gguf");
    const char * f32 = th_data_path("models/stories260K-f32.gguf");
    if (!th_require_file(q8) || !th_require_file(f32)) {
        return th_finish();
    }
    struct gfile orig_q8, orig_f32;
    if (gfile_load(&orig_q8, q8) && gfile_load(&orig_f32, f32)) {
        test_split_tensors(&orig_q8, q8);
        test_split_no_tensor_first(&orig_q8, q8);
        test_split_size(&orig_f32, f32);
        test_default_and_dry_run(&orig_q8, q8);
        test_delete_splits(&orig_q8, q8);
        test_errors(&orig_q8, q8);
    }
    gfile_free(&orig_q8);
    gfile_free(&orig_f32);
    if (th_n_failed == 0) {
        clean_dir();
        rmdir(g_dir);
    }
    return th_finish();
}
