// test-gguf-broken: a corpus of hand-made malformed GGUF files, each of which the reader must reject with
// NULL and exactly one error line (no crash, no leak: run it under ASan). The files are encoded here by an
// independent little encoder, not by our writer; the writer's output for the same content is checked to be
// byte-identical to the encoder's valid file, then every mutation starts from that valid file.
//
// Set GGUF_BROKEN_CORPUS=DIR to also keep every generated file in DIR (fuzzer seeds).

#include "harness.h"

#include "ggml.h"
#include "gguf.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// ---- log capture ---------------------------------------------------------------------------------------

static int  g_n_errors = 0;
static char g_last_error[1024];

static void log_cb(enum ggml_log_level level, const char * text, void * user) {
    (void) user;
    if (level == GGML_LOG_LEVEL_ERROR) {
        g_n_errors++;
        snprintf(g_last_error, sizeof(g_last_error), "%s", text);
    }
}

// ---- an independent encoder ----------------------------------------------------------------------------

struct buf {
    uint8_t * p;
    size_t    n;
    size_t    cap;
};

static void put(struct buf * b, const void * src, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void put_u32(struct buf * b, uint32_t v) { put(b, &v, 4); }
static void put_i32(struct buf * b, int32_t v)  { put(b, &v, 4); }
static void put_u64(struct buf * b, uint64_t v) { put(b, &v, 8); }
static void put_i64(struct buf * b, int64_t v)  { put(b, &v, 8); }

struct kv_spec {
    char     key[128];
    uint64_t key_len;   // written length prefix (may lie)
    size_t   key_bytes; // bytes actually written
    int32_t  type;
    int32_t  arr_type;  // when type == ARRAY
    uint64_t arr_n;     // when type == ARRAY
    uint8_t  val[128];  // encoded value bytes (after the type / array header)
    size_t   val_n;
};

struct t_spec {
    char     name[128];
    uint64_t name_len;
    size_t   name_bytes;
    uint32_t n_dims;
    int64_t  ne[6];
    int32_t  type;
    uint64_t offset;
};

struct spec {
    char     magic[4];
    uint32_t version;
    int64_t  n_tensors; // written counts (may lie)
    int64_t  n_kv;
    struct kv_spec kv[24];
    int      nkv;
    struct t_spec  t[4];
    int      nt;
    size_t   align;     // used to lay out the padding (independent of what the KV says)
    size_t   data_size; // bytes of the data section that are written
};

static void kv_key(struct kv_spec * kv, const char * key) {
    memset(kv, 0, sizeof(*kv));
    kv->key_len = kv->key_bytes = strlen(key);
    memcpy(kv->key, key, kv->key_bytes);
}

static void kv_scalar(struct spec * s, const char * key, int32_t type, const void * v, size_t n) {
    struct kv_spec * kv = &s->kv[s->nkv++];
    kv_key(kv, key);
    kv->type = type;
    memcpy(kv->val, v, n);
    kv->val_n = n;
}

static void kv_str(struct spec * s, const char * key, const char * v) {
    struct kv_spec * kv = &s->kv[s->nkv++];
    kv_key(kv, key);
    kv->type = GGUF_TYPE_STRING;
    const uint64_t n = strlen(v);
    memcpy(kv->val, &n, 8);
    memcpy(kv->val + 8, v, n);
    kv->val_n = 8 + n;
}

static void t_add(struct spec * s, const char * name, int32_t type, uint32_t n_dims, int64_t ne0, int64_t ne1, int64_t ne2) {
    struct t_spec * t = &s->t[s->nt++];
    memset(t, 0, sizeof(*t));
    t->name_len = t->name_bytes = strlen(name);
    memcpy(t->name, name, t->name_bytes);
    t->type = type;
    t->n_dims = n_dims;
    t->ne[0] = ne0;
    t->ne[1] = ne1;
    t->ne[2] = ne2;
}

// the valid base file: every value type, a string array, explicit alignment, three tensors whose last one
// needs no padding (so that removing any byte from the end makes the file invalid)
static const int64_t k_t_bytes[3] = { 128, 136, 128 }; // f32 [8,4]; q8_0 [64,2]; f16 [16,2,2]

static struct spec base_spec(void) {
    struct spec s;
    memset(&s, 0, sizeof(s));
    memcpy(s.magic, "GGUF", 4);
    s.version = 3;
    s.align = 32;
    kv_str(&s, "general.architecture", "llama");
    const uint32_t al = 32;
    kv_scalar(&s, "general.alignment", GGUF_TYPE_UINT32, &al, 4);
    const uint8_t  u8  = 200;     kv_scalar(&s, "t.u8",  GGUF_TYPE_UINT8,  &u8, 1);
    const int8_t   i8  = -100;    kv_scalar(&s, "t.i8",  GGUF_TYPE_INT8,   &i8, 1);
    const uint16_t u16 = 60000;   kv_scalar(&s, "t.u16", GGUF_TYPE_UINT16, &u16, 2);
    const int16_t  i16 = -30000;  kv_scalar(&s, "t.i16", GGUF_TYPE_INT16,  &i16, 2);
    const int32_t  i32 = -7;      kv_scalar(&s, "t.i32", GGUF_TYPE_INT32,  &i32, 4);
    const float    f32 = 0.125f;  kv_scalar(&s, "t.f32", GGUF_TYPE_FLOAT32, &f32, 4);
    const int8_t   bl  = 1;       kv_scalar(&s, "t.bool", GGUF_TYPE_BOOL,  &bl, 1);
    const uint64_t u64 = UINT64_MAX - 1; kv_scalar(&s, "t.u64", GGUF_TYPE_UINT64, &u64, 8);
    const int64_t  i64 = INT64_MIN;      kv_scalar(&s, "t.i64", GGUF_TYPE_INT64,  &i64, 8);
    const double   f64 = 2.5e300; kv_scalar(&s, "t.f64", GGUF_TYPE_FLOAT64, &f64, 8);
    {
        struct kv_spec * kv = &s.kv[s.nkv++];
        kv_key(kv, "t.arr_str");
        kv->type = GGUF_TYPE_ARRAY;
        kv->arr_type = GGUF_TYPE_STRING;
        kv->arr_n = 3;
        const char * strs[3] = { "a", "bc", "" };
        for (int i = 0; i < 3; i++) {
            const uint64_t n = strlen(strs[i]);
            memcpy(kv->val + kv->val_n, &n, 8);
            memcpy(kv->val + kv->val_n + 8, strs[i], n);
            kv->val_n += 8 + n;
        }
    }
    {
        struct kv_spec * kv = &s.kv[s.nkv++];
        kv_key(kv, "t.arr_f32");
        kv->type = GGUF_TYPE_ARRAY;
        kv->arr_type = GGUF_TYPE_FLOAT32;
        kv->arr_n = 3;
        const float v[3] = { 1.0f, -2.0f, 0.5f };
        memcpy(kv->val, v, sizeof(v));
        kv->val_n = sizeof(v);
    }
    t_add(&s, "tns.a", GGML_TYPE_F32,  2, 8, 4, 1);
    t_add(&s, "tns.b", GGML_TYPE_Q8_0, 2, 64, 2, 1);
    t_add(&s, "tns.c", GGML_TYPE_F16,  3, 16, 2, 2);
    uint64_t off = 0;
    for (int i = 0; i < 3; i++) {
        s.t[i].offset = off;
        off += (uint64_t) ((k_t_bytes[i] + 31) / 32 * 32);
    }
    s.data_size = 128 + 160 + 128;
    s.n_kv = s.nkv;
    s.n_tensors = s.nt;
    return s;
}

// deterministic tensor data so that the writer's file can be compared byte for byte
static uint8_t data_byte(size_t i) {
    return (uint8_t) ((i * 37u + 11u) ^ (i >> 3));
}

static struct buf encode(const struct spec * s) {
    struct buf b = {0};
    put(&b, s->magic, 4);
    put_u32(&b, s->version);
    put_i64(&b, s->n_tensors);
    put_i64(&b, s->n_kv);
    for (int i = 0; i < s->nkv; i++) {
        const struct kv_spec * kv = &s->kv[i];
        put_u64(&b, kv->key_len);
        put(&b, kv->key, kv->key_bytes);
        put_i32(&b, kv->type);
        if (kv->type == GGUF_TYPE_ARRAY) {
            put_i32(&b, kv->arr_type);
            put_u64(&b, kv->arr_n);
        }
        put(&b, kv->val, kv->val_n);
    }
    for (int i = 0; i < s->nt; i++) {
        const struct t_spec * t = &s->t[i];
        put_u64(&b, t->name_len);
        put(&b, t->name, t->name_bytes);
        put_u32(&b, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims && d < 6; d++) {
            put_i64(&b, t->ne[d]);
        }
        put_i32(&b, t->type);
        put_u64(&b, t->offset);
    }
    while (b.n % s->align) {
        const uint8_t z = 0;
        put(&b, &z, 1);
    }
    for (size_t i = 0; i < s->data_size; i++) {
        const uint8_t v = data_byte(i);
        put(&b, &v, 1);
    }
    return b;
}

// ---- running cases ---------------------------------------------------------------------------------------

static char g_dir[256];
static const char * g_corpus = NULL;
static int g_case = 0;

static void save_corpus(const char * name, const void * p, size_t n) {
    if (!g_corpus) {
        return;
    }
    char path[512];
    snprintf(path, sizeof(path), "%s/broken-%03d-%s.gguf", g_corpus, g_case, name);
    FILE * f = fopen(path, "wb");
    if (f) {
        fwrite(p, 1, n, f);
        fclose(f);
    }
}

static const char * write_tmp(const void * p, size_t n) {
    static char path[512];
    snprintf(path, sizeof(path), "%s/case.gguf", g_dir);
    FILE * f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    return path;
}

// the file must be rejected with exactly one error line (containing `expect` if given), with and without a
// ggml context requested
static void expect_reject(const char * name, const void * p, size_t n, const char * expect) {
    g_case++;
    save_corpus(name, p, n);
    const char * path = write_tmp(p, n);
    for (int mode = 0; mode < 3; mode++) {
        struct ggml_context * gctx = (struct ggml_context *) &g_n_errors; // must be overwritten with NULL
        struct gguf_init_params ip = { .no_alloc = mode == 2, .ctx = mode == 0 ? NULL : &gctx };
        g_n_errors = 0;
        g_last_error[0] = '\0';
        struct gguf_context * ctx = gguf_init_from_file(path, ip);
        TH_CHECK(ctx == NULL, "%s (mode %d): accepted", name, mode);
        TH_CHECK(mode == 0 || gctx == NULL, "%s (mode %d): ggml context not NULL", name, mode);
        TH_CHECK(g_n_errors == 1, "%s (mode %d): %d error lines (last: %s)", name, mode, g_n_errors, g_last_error);
        if (expect) {
            TH_CHECK(strstr(g_last_error, expect) != NULL, "%s: message '%s' lacks '%s'", name, g_last_error, expect);
        }
        const size_t len = strlen(g_last_error);
        TH_CHECK(len > 0 && strchr(g_last_error, '\n') == g_last_error + len - 1, "%s: not one line: '%s'", name,
                 g_last_error);
        if (ctx) {
            gguf_free(ctx);
        }
        if (mode != 0 && gctx != NULL && gctx != (struct ggml_context *) &g_n_errors) {
            ggml_free(gctx);
        }
    }
}

static void expect_accept(const char * name, const void * p, size_t n) {
    g_case++;
    save_corpus(name, p, n);
    const char * path = write_tmp(p, n);
    for (int mode = 0; mode < 3; mode++) {
        struct ggml_context * gctx = NULL;
        struct gguf_init_params ip = { .no_alloc = mode == 2, .ctx = mode == 0 ? NULL : &gctx };
        g_n_errors = 0;
        struct gguf_context * ctx = gguf_init_from_file(path, ip);
        TH_CHECK(ctx != NULL && g_n_errors == 0, "%s (mode %d): rejected: %s", name, mode, g_last_error);
        TH_CHECK(mode == 0 || gctx != NULL, "%s (mode %d): no ggml context", name, mode);
        gguf_free(ctx);
        ggml_free(gctx);
    }
}

static void reject_spec(const char * name, const struct spec * s, const char * expect) {
    struct buf b = encode(s);
    expect_reject(name, b.p, b.n, expect);
    free(b.p);
}

static void accept_spec(const char * name, const struct spec * s) {
    struct buf b = encode(s);
    expect_accept(name, b.p, b.n);
    free(b.p);
}

static int find_kv(const struct spec * s, const char * key) {
    for (int i = 0; i < s->nkv; i++) {
        if (s->kv[i].key_bytes == strlen(key) && memcmp(s->kv[i].key, key, s->kv[i].key_bytes) == 0) {
            return i;
        }
    }
    return -1;
}

// ---- the writer must produce exactly the encoder's valid file ------------------------------------------------

static void test_writer_matches_encoder(const struct buf * valid) {
    struct gguf_context * ctx = gguf_init_empty();
    gguf_set_val_str(ctx, "general.architecture", "llama");
    gguf_set_val_u32(ctx, "general.alignment", 32);
    gguf_set_val_u8 (ctx, "t.u8", 200);
    gguf_set_val_i8 (ctx, "t.i8", -100);
    gguf_set_val_u16(ctx, "t.u16", 60000);
    gguf_set_val_i16(ctx, "t.i16", -30000);
    gguf_set_val_i32(ctx, "t.i32", -7);
    gguf_set_val_f32(ctx, "t.f32", 0.125f);
    gguf_set_val_bool(ctx, "t.bool", true);
    gguf_set_val_u64(ctx, "t.u64", UINT64_MAX - 1);
    gguf_set_val_i64(ctx, "t.i64", INT64_MIN);
    gguf_set_val_f64(ctx, "t.f64", 2.5e300);
    const char * strs[3] = { "a", "bc", "" };
    gguf_set_arr_str(ctx, "t.arr_str", strs, 3);
    const float fv[3] = { 1.0f, -2.0f, 0.5f };
    gguf_set_arr_data(ctx, "t.arr_f32", GGUF_TYPE_FLOAT32, fv, 3);

    struct ggml_init_params gp = { .mem_size = 1 << 16, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * g = ggml_init(gp);
    struct ggml_tensor * t[3] = {
        ggml_new_tensor_2d(g, GGML_TYPE_F32, 8, 4),
        ggml_new_tensor_2d(g, GGML_TYPE_Q8_0, 64, 2),
        ggml_new_tensor_3d(g, GGML_TYPE_F16, 16, 2, 2),
    };
    const char * names[3] = { "tns.a", "tns.b", "tns.c" };
    const size_t offs[3] = { 0, 128, 288 };
    for (int i = 0; i < 3; i++) {
        ggml_set_name(t[i], names[i]);
        for (size_t k = 0; k < ggml_nbytes(t[i]); k++) {
            ((uint8_t *) t[i]->data)[k] = data_byte(offs[i] + k);
        }
        gguf_add_tensor(ctx, t[i]);
    }
    char path[512];
    snprintf(path, sizeof(path), "%s/writer.gguf", g_dir);
    TH_CHECK(gguf_write_to_file(ctx, path, false), "writer output");
    size_t n = 0;
    uint8_t * w = th_read_file(path, &n);
    // the encoder pads the q8_0 tensor with data bytes, the writer with zeros: compare around that gap
    const size_t data_off = valid->n - 416;
    bool same = w && n == valid->n && memcmp(w, valid->p, data_off + 264) == 0 &&
                memcmp(w + data_off + 288, valid->p + data_off + 288, 128) == 0;
    for (size_t k = data_off + 264; same && k < data_off + 288; k++) {
        same = w[k] == 0;
    }
    TH_CHECK(same, "writer output differs from the independent encoding (%zu vs %zu bytes)", n, valid->n);
    free(w);
    unlink(path);
    ggml_free(g);
    gguf_free(ctx);
}

int main(void) {
    snprintf(g_dir, sizeof(g_dir), "/tmp/test-gguf-broken-XXXXXX");
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "cannot create a temp dir\n");
        return 1;
    }
    g_corpus = getenv("GGUF_BROKEN_CORPUS");
    ggml_log_set(log_cb, NULL);

    const struct spec base = base_spec();
    struct buf valid = encode(&base);

    // ---- positive controls
    expect_accept("valid", valid.p, valid.n);
    {
        char path[512];
        snprintf(path, sizeof(path), "%s/case.gguf", g_dir);
        struct ggml_context * gctx = NULL;
        struct gguf_init_params ip = { .no_alloc = false, .ctx = &gctx };
        struct gguf_context * ctx = gguf_init_from_file(path, ip);
        TH_CHECK(ctx && gguf_get_n_kv(ctx) == base.nkv && gguf_get_n_tensors(ctx) == 3, "valid file content");
        if (ctx) {
            TH_CHECK(gguf_get_val_u8(ctx, gguf_find_key(ctx, "t.u8")) == 200, "u8");
            TH_CHECK(gguf_get_val_i64(ctx, gguf_find_key(ctx, "t.i64")) == INT64_MIN, "i64");
            TH_CHECK(gguf_get_val_f64(ctx, gguf_find_key(ctx, "t.f64")) == 2.5e300, "f64");
            TH_CHECK(strcmp(gguf_get_arr_str(ctx, gguf_find_key(ctx, "t.arr_str"), 1), "bc") == 0, "arr str");
            TH_CHECK(gguf_get_tensor_offset(ctx, 2) == 288 && gguf_get_tensor_size(ctx, 1) == 136, "tensor layout");
            const struct ggml_tensor * c = ggml_get_tensor(gctx, "tns.c");
            TH_CHECK(c && c->ne[2] == 2 && ((const uint8_t *) c->data)[5] == data_byte(288 + 5), "tensor data");
        }
        gguf_free(ctx);
        ggml_free(gctx);
    }
    test_writer_matches_encoder(&valid);
    {
        struct spec s = base;
        s.version = 2;
        accept_spec("version-2", &s);
    }
    {
        struct spec s = base;
        s.t[0].name_len = s.t[0].name_bytes = 63;
        memset(s.t[0].name, 'n', 63);
        accept_spec("name-63-bytes", &s);
    }
    {
        struct spec s = base; // n_dims 4 with trailing ones is fine
        s.t[0].n_dims = 4;
        s.t[0].ne[2] = s.t[0].ne[3] = 1;
        accept_spec("n_dims-4", &s);
    }
    {
        struct spec s = base; // UTF-8 key and name
        kv_str(&s, "t.\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "x");
        s.n_kv++;
        memcpy(s.t[1].name, "t\xC3\xA9s.b", 6);
        s.t[1].name_len = s.t[1].name_bytes = 6;
        accept_spec("utf8-names", &s);
    }
    {
        struct spec s = base; // alignment 64: the encoder lays the data out accordingly
        const uint32_t al = 64;
        memcpy(s.kv[find_kv(&s, "general.alignment")].val, &al, 4);
        s.align = 64;
        s.t[1].offset = 128;
        s.t[2].offset = 320;
        s.data_size = 448;
        accept_spec("alignment-64", &s);
    }
    {
        struct spec s = base; // zero-sized tensors are legal
        s.t[2].ne[1] = 0;
        s.data_size = 288;
        accept_spec("zero-dim", &s);
    }

    // ---- truncation at every byte (the valid file has no trailing padding: every prefix is invalid)
    int n_trunc_bad = 0;
    for (size_t n = 0; n < valid.n; n++) {
        char name[64];
        snprintf(name, sizeof(name), "truncated-%zu", n);
        g_case++;
        const char * path = write_tmp(valid.p, n);
        if (g_corpus && (n % 16 == 0 || n < 32)) {
            save_corpus(name, valid.p, n);
        }
        for (int mode = 0; mode < 2; mode++) {
            struct ggml_context * gctx = NULL;
            struct gguf_init_params ip = { .no_alloc = false, .ctx = mode ? &gctx : NULL };
            g_n_errors = 0;
            struct gguf_context * ctx = gguf_init_from_file(path, ip);
            if (!(ctx == NULL && gctx == NULL && g_n_errors == 1)) {
                n_trunc_bad++;
                fprintf(stderr, "%s (mode %d): ctx %p, %d errors\n", name, mode, (void *) ctx, g_n_errors);
            }
            gguf_free(ctx);
            ggml_free(gctx);
        }
    }
    TH_CHECK(n_trunc_bad == 0, "%d of %zu truncated files not rejected cleanly", n_trunc_bad, valid.n);

    // ---- header
    {
        struct spec s = base;
        memcpy(s.magic, "GGUG", 4);
        reject_spec("bad-magic", &s, "magic");
        memcpy(s.magic, "\0\0\0\0", 4);
        reject_spec("zero-magic", &s, "magic");
    }
    {
        const uint32_t versions[] = { 0, 1, 4, 0x03000000u, 0xFFFFFFFFu };
        for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
            struct spec s = base;
            s.version = versions[i];
            char name[64];
            snprintf(name, sizeof(name), "version-%" PRIu32, versions[i]);
            reject_spec(name, &s, "ersion");
        }
    }
    {
        const int64_t counts[] = { -1, INT64_MIN, INT64_MAX, (int64_t) 1 << 40, 1000 };
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
            struct spec s = base;
            char name[64];
            s.n_tensors = counts[i];
            snprintf(name, sizeof(name), "n_tensors-%" PRId64, counts[i]);
            reject_spec(name, &s, "n_tensors");
            s = base;
            s.n_kv = counts[i];
            snprintf(name, sizeof(name), "n_kv-%" PRId64, counts[i]);
            reject_spec(name, &s, "n_kv");
        }
    }

    // ---- KV pairs
    {
        const uint64_t lens[] = { UINT64_MAX, (uint64_t) 1 << 62, 100000 };
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            struct spec s = base;
            s.kv[3].key_len = lens[i];
            reject_spec("huge-key-length", &s, "length");
            s = base; // the string value of general.architecture
            memcpy(s.kv[0].val, &lens[i], 8);
            reject_spec("huge-string-length", &s, "length");
            s = base; // a string inside the string array
            memcpy(s.kv[find_kv(&s, "t.arr_str")].val, &lens[i], 8);
            reject_spec("huge-array-string-length", &s, "length");
        }
    }
    {
        const uint64_t ns[] = { UINT64_MAX, (uint64_t) 1 << 61, 1000000 };
        for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
            struct spec s = base;
            s.kv[find_kv(&s, "t.arr_f32")].arr_n = ns[i];
            reject_spec("huge-array-count", &s, "array length");
            s = base;
            s.kv[find_kv(&s, "t.arr_str")].arr_n = ns[i];
            reject_spec("huge-string-array-count", &s, "array length");
        }
    }
    {
        struct spec s = base;
        s.kv[find_kv(&s, "t.arr_f32")].arr_type = GGUF_TYPE_ARRAY;
        reject_spec("array-of-arrays", &s, "array of arrays");
        const int32_t bad_types[] = { 13, -1, 1000, INT32_MIN };
        for (size_t i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
            s = base;
            s.kv[2].type = bad_types[i];
            reject_spec("unknown-value-type", &s, "invalid value type");
            s = base;
            s.kv[find_kv(&s, "t.arr_f32")].arr_type = bad_types[i];
            reject_spec("unknown-array-type", &s, "invalid value type");
        }
    }
    {
        struct spec s = base;
        memcpy(s.kv[3].key, s.kv[2].key, 4); // "t.i8" -> "t.u8"
        reject_spec("duplicate-key", &s, "duplicate key 't.u8'");
        s = base;
        s.kv[2].key_len = s.kv[2].key_bytes = 0;
        reject_spec("empty-key", &s, "empty");
        s = base; // a key with a line break, duplicated: the message must stay on one line
        memcpy(s.kv[2].key, "t.\n8", 4);
        memcpy(s.kv[3].key, "t.\n8", 4);
        reject_spec("duplicate-key-newline", &s, "duplicate key 't.?8'");
    }
    {
        const char * bad[] = { "t.\xFF", "t.\xC0\xAF", "t.\xED\xA0\x80", "t.\xE2\x82", "t.\xF4\x90\x80\x80", "t\0x" };
        const size_t badn[] = { 3, 4, 5, 4, 6, 3 };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            struct spec s = base;
            memcpy(s.kv[2].key, bad[i], badn[i]);
            s.kv[2].key_len = s.kv[2].key_bytes = badn[i];
            reject_spec("bad-utf8-key", &s, "UTF-8");
        }
    }

    // ---- alignment
    {
        const uint32_t aligns[] = { 0, 3, 48, 1u << 30, 1u << 31, 0xFFFFFFFFu };
        for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
            struct spec s = base;
            memcpy(s.kv[find_kv(&s, "general.alignment")].val, &aligns[i], 4);
            reject_spec("bad-alignment", &s, "general.alignment");
        }
        struct spec s = base;
        s.kv[find_kv(&s, "general.alignment")].type = GGUF_TYPE_INT32; // same size, wrong type
        reject_spec("alignment-i32", &s, "general.alignment");
        s = base;
        s.kv[find_kv(&s, "general.alignment")].type = GGUF_TYPE_FLOAT32;
        reject_spec("alignment-f32", &s, "general.alignment");
        s = base;
        {
            struct kv_spec * kv = &s.kv[find_kv(&s, "general.alignment")];
            kv->type = GGUF_TYPE_ARRAY;
            kv->arr_type = GGUF_TYPE_UINT32;
            kv->arr_n = 1;
        }
        reject_spec("alignment-array", &s, "general.alignment");
        s = base;
        {
            struct kv_spec * kv = &s.kv[find_kv(&s, "general.alignment")];
            const uint64_t a = 32;
            kv->type = GGUF_TYPE_UINT64;
            memcpy(kv->val, &a, 8);
            kv->val_n = 8;
        }
        reject_spec("alignment-u64", &s, "general.alignment");
    }

    // ---- tensor infos
    {
        const uint32_t dims[] = { 0, 5, 0xFFFFFFFFu };
        for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
            struct spec s = base;
            s.t[1].n_dims = dims[i];
            reject_spec("bad-n_dims", &s, "n_dims");
        }
    }
    {
        for (int d = 0; d < 3; d++) {
            struct spec s = base;
            s.t[2].ne[d] = -1;
            reject_spec("negative-dim", &s, "negative");
            s = base;
            s.t[2].ne[d] = INT64_MIN;
            reject_spec("min-dim", &s, "negative");
        }
        struct spec s = base;
        s.t[0].ne[0] = (int64_t) 1 << 32; // 2^32 * 2^32 elements: count overflows
        s.t[0].ne[1] = (int64_t) 1 << 32;
        reject_spec("overflowing-dims", &s, "overflows");
        s = base;
        s.t[0].ne[0] = INT64_MAX; // the element count fits, the byte count (x4) does not
        s.t[0].ne[1] = 1;
        reject_spec("overflowing-bytes", &s, "overflows");
        s = base;
        s.t[1].ne[0] = INT64_MAX - (INT64_MAX % 32); // q8_0: 2^58 blocks * 34 bytes * 4 rows overflows
        s.t[1].ne[1] = 4;
        reject_spec("overflowing-bytes-q8_0", &s, "overflows");
        s = base;
        s.t[2].ne[1] = (int64_t) 1 << 40; // fine arithmetic, but far past the end of the file
        reject_spec("huge-dim", &s, "past the end");
        s = base;
        s.t[2].ne[2] = 3; // just 64 bytes past the end
        reject_spec("data-past-eof", &s, "past the end");
        s = base;
        s.t[1].ne[0] = 48; // q8_0 needs multiples of 32
        reject_spec("ne0-not-multiple-of-block", &s, "block size");
    }
    {
        const int32_t types[] = { 4, 5, 31, 32, 33, 36, 37, 38, 40, 41, 1000, -1, INT32_MIN };
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
            struct spec s = base;
            s.t[1].type = types[i];
            char expect[64];
            snprintf(expect, sizeof(expect), "tensor 'tns.b' has invalid type id %" PRId32, types[i]);
            reject_spec("bad-type-id", &s, expect);
        }
    }
    {
        struct spec s = base;
        memcpy(s.t[1].name, "tns.a", 5);
        reject_spec("duplicate-tensor-name", &s, "duplicate tensor name 'tns.a'");
        s = base;
        s.t[1].name_len = s.t[1].name_bytes = 64;
        memset(s.t[1].name, 'x', 64);
        reject_spec("name-64-bytes", &s, "name of 64 bytes");
        s = base;
        s.t[1].name_len = UINT64_MAX;
        reject_spec("huge-name-length", &s, "name of");
        const char * bad[] = { "t\xFF", "t\xC1\x81", "t\xED\xBF\xBF", "t\xF0\x9F", "t\0b" };
        const size_t badn[] = { 2, 3, 4, 3, 3 };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            s = base;
            memcpy(s.t[1].name, bad[i], badn[i]);
            s.t[1].name_len = s.t[1].name_bytes = badn[i];
            reject_spec("bad-utf8-tensor-name", &s, "UTF-8");
        }
    }
    {
        struct spec s = base;
        s.t[1].offset += 1;
        reject_spec("misaligned-offset", &s, "offset");
        s = base;
        s.t[1].offset += 32;
        reject_spec("gap-offset", &s, "offset");
        s = base;
        s.t[1].offset = 0;
        reject_spec("overlapping-offset", &s, "offset");
        s = base;
        s.t[2].offset = s.t[1].offset;
        reject_spec("overlapping-offset-2", &s, "offset");
        s = base;
        s.t[0].offset = UINT64_MAX - 31;
        reject_spec("huge-offset", &s, "offset");
        s = base;
        s.t[2].offset = 1024; // aligned, past the end of the file
        reject_spec("offset-past-eof", &s, "offset");
    }
    {
        struct spec s = base; // the data section's own padding is missing
        s.data_size = 0;
        struct buf b = encode(&s);
        b.n -= 16; // cut into the metadata padding
        expect_reject("no-data-section", b.p, b.n, NULL);
        free(b.p);
    }

    TH_CHECK(g_case > 700, "ran %d cases", g_case);
    printf("%d files checked\n", g_case);
    free(valid.p);
    char path[512];
    snprintf(path, sizeof(path), "%s/case.gguf", g_dir);
    unlink(path);
    rmdir(g_dir);
    ggml_log_set(NULL, NULL);
    return th_finish();
}
