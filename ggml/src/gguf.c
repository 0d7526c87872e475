// GGUF reader and writer (see include/gguf.h for the layout).
//
// The reader trusts nothing in the file: every count, length, shape, type id, offset and the alignment is
// checked against the bytes that remain in the file before anything is allocated for it, and all size
// arithmetic is overflow-checked. Arrays grow with what was actually read, so a lying header cannot make us
// allocate more than a small multiple of the file size. A bad file yields NULL and exactly one error line.
//
// Semantics follow llama.cpp's gguf.cpp: same accessors, same "set = remove + append" override rule, the same
// ggml_context layout when gguf_init_params.ctx is given (a leading I8 blob tensor holding the whole data
// section when !no_alloc, then one tensor per tensor info, in file order).

#include "ggml-backend.h"
#include "ggml-impl.h"
#include "gguf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Alignments above this are rejected. Real files use 32 (the default) up to a page size; 16 MiB leaves room
// for 2 MiB huge-page alignment with headroom, while keeping the per-tensor padding (up to alignment-1
// bytes, which must also be present in the file) far from any overflow.
#define GGUF_MAX_ALIGNMENT ((size_t) 1 << 24)

// smallest possible encodings, used to bound counts by the bytes left in the file
#define GGUF_MIN_KV_BYTES     (8 + 1 + 4 + 1)       // key length, 1-byte key, type, 1-byte value
#define GGUF_MIN_TENSOR_BYTES (8 + 4 + 8 + 4 + 8)   // name length (empty), n_dims, one ne, type, offset

#define GGUF_BLOB_NAME "GGUF tensor data binary blob"

struct gguf_str {
    uint64_t n;    // bytes, not counting the terminating NUL we add
    char *   data; // NUL-terminated copy (the file's string may itself contain NULs)
};

struct gguf_kv {
    char *          key;
    bool            is_array;
    enum gguf_type  type;   // element type for arrays
    size_t          n;      // number of elements (1 for scalars)
    void *          data;   // n * type size bytes (not for strings); bools are int8 0/1
    struct gguf_str * str;  // n strings (only for GGUF_TYPE_STRING)
};

struct gguf_tensor_info {
    char           name[GGML_MAX_NAME];
    enum ggml_type type;
    int64_t        ne[GGML_MAX_DIMS];
    size_t         nbytes;
    uint64_t       offset; // from the start of the data section
    const void *   data;   // writer only: where gguf_write_to_file takes the bytes from
    struct ggml_backend_buffer * buffer; // writer only: if set, data lives in this backend buffer
};

struct gguf_context {
    uint32_t version;

    struct gguf_kv * kv;
    size_t           n_kv;
    size_t           cap_kv;

    struct gguf_tensor_info * info;
    size_t                    n_info;
    size_t                    cap_info;

    size_t alignment;
    size_t offset; // of the data section in the file
    size_t size;   // of the data section, padded

    void * data; // the blob tensor's data when read with !no_alloc (owned by the ggml context)
};

// ---- types ---------------------------------------------------------------------------------------------

static size_t gguf_type_size(enum gguf_type type) {
    switch (type) {
        case GGUF_TYPE_UINT8:   return 1;
        case GGUF_TYPE_INT8:    return 1;
        case GGUF_TYPE_UINT16:  return 2;
        case GGUF_TYPE_INT16:   return 2;
        case GGUF_TYPE_UINT32:  return 4;
        case GGUF_TYPE_INT32:   return 4;
        case GGUF_TYPE_FLOAT32: return 4;
        case GGUF_TYPE_BOOL:    return 1;
        case GGUF_TYPE_UINT64:  return 8;
        case GGUF_TYPE_INT64:   return 8;
        case GGUF_TYPE_FLOAT64: return 8;
        case GGUF_TYPE_STRING:
        case GGUF_TYPE_ARRAY:
        case GGUF_TYPE_COUNT:
            break;
    }
    return 0;
}

const char * gguf_type_name(enum gguf_type type) {
    switch (type) {
        case GGUF_TYPE_UINT8:   return "u8";
        case GGUF_TYPE_INT8:    return "i8";
        case GGUF_TYPE_UINT16:  return "u16";
        case GGUF_TYPE_INT16:   return "i16";
        case GGUF_TYPE_UINT32:  return "u32";
        case GGUF_TYPE_INT32:   return "i32";
        case GGUF_TYPE_FLOAT32: return "f32";
        case GGUF_TYPE_BOOL:    return "bool";
        case GGUF_TYPE_STRING:  return "str";
        case GGUF_TYPE_ARRAY:   return "arr";
        case GGUF_TYPE_UINT64:  return "u64";
        case GGUF_TYPE_INT64:   return "i64";
        case GGUF_TYPE_FLOAT64: return "f64";
        case GGUF_TYPE_COUNT:
            break;
    }
    return NULL;
}

// a ggml type id a file may use: known and sizable (removed ids have a zero block size in the traits)
static bool gguf_valid_ggml_type(int32_t type) {
    if (type < 0 || type >= GGML_TYPE_COUNT) {
        return false;
    }
    const struct ggml_type_traits * tt = ggml_get_type_traits((enum ggml_type) type);
    return tt->blck_size > 0 && tt->type_size > 0;
}

// bytes of a contiguous tensor; false on overflow (ne must be valid: >= 0, ne[0] a multiple of the block)
static bool gguf_tensor_nbytes(enum ggml_type type, const int64_t ne[GGML_MAX_DIMS], size_t * out) {
    const int64_t blck = ggml_blck_size(type);
    size_t n = 0;
    if (ggml_mul_overflow_size((size_t) (ne[0] / blck), ggml_type_size(type), &n)) {
        return false;
    }
    for (int i = 1; i < GGML_MAX_DIMS; i++) {
        if (ggml_mul_overflow_size(n, (size_t) ne[i], &n)) {
            return false;
        }
    }
    *out = n;
    return true;
}

// like ggml_n_dims: the index of the last dimension > 1, plus one (at least 1)
static uint32_t gguf_n_dims(const int64_t ne[GGML_MAX_DIMS]) {
    for (int i = GGML_MAX_DIMS - 1; i >= 1; i--) {
        if (ne[i] > 1) {
            return (uint32_t) i + 1;
        }
    }
    return 1;
}

static bool gguf_is_pow2(size_t x) {
    return x != 0 && (x & (x - 1)) == 0;
}

// strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF, and no NUL (a name with a NUL
// could never be looked up through the C API)
static bool gguf_valid_utf8(const char * s, size_t n) {
    const unsigned char * p = (const unsigned char *) s;
    size_t i = 0;
    while (i < n) {
        const unsigned c = p[i];
        if (c == 0) {
            return false;
        }
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t cp;
        uint32_t min;
        if ((c & 0xE0) == 0xC0) {
            len = 2; cp = c & 0x1F; min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3; cp = c & 0x0F; min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4; cp = c & 0x07; min = 0x10000;
        } else {
            return false;
        }
        if (n - i < len) {
            return false;
        }
        for (size_t j = 1; j < len; j++) {
            if ((p[i + j] & 0xC0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (p[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return false;
        }
        i += len;
    }
    return true;
}

// ---- a small string set for duplicate detection (keeps parsing O(n) on hostile files) --------------------
// It stores indices, not pointers: the arrays holding the strings are reallocated while we parse.

struct gguf_strset {
    size_t * slots; // index + 1; 0 = empty
    size_t   cap;   // power of two
    size_t   n;
    const char * (*get)(const struct gguf_context * ctx, size_t i);
    const struct gguf_context * ctx;
};

static uint64_t gguf_hash(const char * s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char) *s;
        h *= 1099511628211ull;
    }
    return h;
}

// inserts the string with index idx; returns 1 if inserted, 0 if an equal string is present, -1 if out of memory
static int gguf_strset_insert(struct gguf_strset * set, size_t idx) {
    if ((set->n + 1) * 2 > set->cap) {
        const size_t new_cap = set->cap ? set->cap * 2 : 64;
        size_t * slots = calloc(new_cap, sizeof(*slots));
        if (!slots) {
            return -1;
        }
        for (size_t i = 0; i < set->cap; i++) {
            if (set->slots[i]) {
                size_t j = gguf_hash(set->get(set->ctx, set->slots[i] - 1)) & (new_cap - 1);
                while (slots[j]) {
                    j = (j + 1) & (new_cap - 1);
                }
                slots[j] = set->slots[i];
            }
        }
        free(set->slots);
        set->slots = slots;
        set->cap   = new_cap;
    }
    const char * s = set->get(set->ctx, idx);
    size_t j = gguf_hash(s) & (set->cap - 1);
    while (set->slots[j]) {
        if (strcmp(set->get(set->ctx, set->slots[j] - 1), s) == 0) {
            return 0;
        }
        j = (j + 1) & (set->cap - 1);
    }
    set->slots[j] = idx + 1;
    set->n++;
    return 1;
}

static void gguf_strset_free(struct gguf_strset * set) {
    free(set->slots);
    set->slots = NULL;
    set->cap = set->n = 0;
}

// ---- context basics ------------------------------------------------------------------------------------

static void gguf_kv_free(struct gguf_kv * kv) {
    free(kv->key);
    free(kv->data);
    if (kv->str) {
        for (size_t i = 0; i < kv->n; i++) {
            free(kv->str[i].data);
        }
        free(kv->str);
    }
    memset(kv, 0, sizeof(*kv));
}

static struct gguf_context * gguf_ctx_new(void) {
    struct gguf_context * ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        return NULL;
    }
    ctx->version   = GGUF_VERSION;
    ctx->alignment = GGUF_DEFAULT_ALIGNMENT;
    return ctx;
}

struct gguf_context * gguf_init_empty(void) {
    struct gguf_context * ctx = gguf_ctx_new();
    GGML_ASSERT(ctx != NULL);
    return ctx;
}

void gguf_free(struct gguf_context * ctx) {
    if (ctx == NULL) {
        return;
    }
    for (size_t i = 0; i < ctx->n_kv; i++) {
        gguf_kv_free(&ctx->kv[i]);
    }
    free(ctx->kv);
    free(ctx->info);
    free(ctx);
}

// grows an array by doubling so that its size follows what was parsed, never a count from the header
static bool gguf_grow(void ** arr, size_t * cap, size_t need, size_t elem) {
    if (need <= *cap) {
        return true;
    }
    size_t new_cap = *cap ? *cap : 8;
    while (new_cap < need) {
        if (new_cap > SIZE_MAX / 2) {
            return false;
        }
        new_cap *= 2;
    }
    size_t bytes;
    if (ggml_mul_overflow_size(new_cap, elem, &bytes)) {
        return false;
    }
    void * p = realloc(*arr, bytes);
    if (!p) {
        return false;
    }
    *arr = p;
    *cap = new_cap;
    return true;
}

// ---- reader --------------------------------------------------------------------------------------------

struct gguf_reader {
    FILE *       f;
    const char * fname;
    uint64_t     pos;  // current offset in the file
    uint64_t     size; // file size
    bool         failed;
};

// Logs the single error line of a failed parse; later calls are ignored so one bad file gives one line.
GGML_ATTRIBUTE_FORMAT(2, 3)
static void gguf_error(struct gguf_reader * r, const char * fmt, ...) {
    if (r->failed) {
        return;
    }
    r->failed = true;
    char msg[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);
    // keys and names quoted in the message come from the file: keep control bytes from breaking the line
    for (char * p = msg; *p; p++) {
        if ((unsigned char) *p < 0x20 || *p == 0x7f) {
            *p = '?';
        }
    }
    GGML_LOG_ERROR("gguf_init_from_file: %s (file '%s')\n", msg, r->fname);
}

static uint64_t gguf_remaining(const struct gguf_reader * r) {
    return r->size - r->pos;
}

static bool gguf_read(struct gguf_reader * r, void * dst, size_t n, const char * what) {
    if (n > gguf_remaining(r)) {
        gguf_error(r, "unexpected end of file reading %s at offset %" PRIu64 " (%zu bytes needed, %" PRIu64 " left)",
                   what, r->pos, n, gguf_remaining(r));
        return false;
    }
    if (n > 0 && fread(dst, 1, n, r->f) != n) {
        gguf_error(r, "read error reading %s at offset %" PRIu64, what, r->pos);
        return false;
    }
    r->pos += n;
    return true;
}

static bool gguf_read_u32(struct gguf_reader * r, uint32_t * v, const char * what) { return gguf_read(r, v, 4, what); }
static bool gguf_read_i32(struct gguf_reader * r, int32_t  * v, const char * what) { return gguf_read(r, v, 4, what); }
static bool gguf_read_u64(struct gguf_reader * r, uint64_t * v, const char * what) { return gguf_read(r, v, 8, what); }
static bool gguf_read_i64(struct gguf_reader * r, int64_t  * v, const char * what) { return gguf_read(r, v, 8, what); }

// reads a length-prefixed string; max_len bounds it further (SIZE_MAX: only the file size)
static bool gguf_read_str(struct gguf_reader * r, struct gguf_str * out, uint64_t max_len, const char * what) {
    uint64_t n;
    if (!gguf_read_u64(r, &n, what)) {
        return false;
    }
    if (n > max_len) {
        gguf_error(r, "%s has length %" PRIu64 ", the maximum is %" PRIu64, what, n, max_len);
        return false;
    }
    if (n > gguf_remaining(r)) {
        gguf_error(r, "%s has length %" PRIu64 " but only %" PRIu64 " bytes are left in the file",
                   what, n, gguf_remaining(r));
        return false;
    }
    char * s = malloc((size_t) n + 1);
    if (!s) {
        gguf_error(r, "out of memory reading %s of length %" PRIu64, what, n);
        return false;
    }
    if (!gguf_read(r, s, (size_t) n, what)) {
        free(s);
        return false;
    }
    s[n] = '\0';
    out->n    = n;
    out->data = s;
    return true;
}

// reads the value part of a KV pair into kv (key already set); kv is cleaned up by the caller on failure
static bool gguf_read_value(struct gguf_reader * r, struct gguf_kv * kv, int32_t type_raw) {
    const char * key = kv->key;
    char what[GGML_MAX_NAME + 128];

    uint64_t n = 1;
    if (type_raw == GGUF_TYPE_ARRAY) {
        kv->is_array = true;
        snprintf(what, sizeof(what), "array type of key '%.64s'", key);
        if (!gguf_read_i32(r, &type_raw, what)) {
            return false;
        }
        if (type_raw == GGUF_TYPE_ARRAY) {
            gguf_error(r, "key '%s' is an array of arrays (nested arrays are not supported)", key);
            return false;
        }
        if (type_raw < 0 || type_raw >= GGUF_TYPE_COUNT) {
            gguf_error(r, "key '%s' is an array of invalid value type %" PRId32, key, type_raw);
            return false;
        }
        snprintf(what, sizeof(what), "array length of key '%.64s'", key);
        if (!gguf_read_u64(r, &n, what)) {
            return false;
        }
        // every element takes at least its own size (a string at least its 8-byte length)
        const uint64_t min_elem = type_raw == GGUF_TYPE_STRING ? 8 : gguf_type_size((enum gguf_type) type_raw);
        if (n > gguf_remaining(r) / min_elem) {
            gguf_error(r, "key '%s' has array length %" PRIu64 " but only %" PRIu64 " bytes are left in the file",
                       key, n, gguf_remaining(r));
            return false;
        }
    } else if (type_raw < 0 || type_raw >= GGUF_TYPE_COUNT) {
        gguf_error(r, "key '%s' has invalid value type %" PRId32, key, type_raw);
        return false;
    }
    kv->type = (enum gguf_type) type_raw;

    snprintf(what, sizeof(what), "value of key '%.64s'", key);
    if (kv->type == GGUF_TYPE_STRING) {
        kv->str = calloc(n ? (size_t) n : 1, sizeof(*kv->str));
        if (!kv->str) {
            gguf_error(r, "out of memory for %" PRIu64 " strings of key '%s'", n, key);
            return false;
        }
        for (uint64_t i = 0; i < n; i++) {
            if (!gguf_read_str(r, &kv->str[i], UINT64_MAX, what)) {
                return false;
            }
            kv->n = (size_t) i + 1; // so that cleanup frees exactly what was read
        }
        kv->n = (size_t) n;
        return true;
    }

    const size_t tsize  = gguf_type_size(kv->type);
    const size_t nbytes = (size_t) n * tsize; // bounded by the bytes left in the file (checked above)
    kv->data = malloc(nbytes ? nbytes : 1);
    if (!kv->data) {
        gguf_error(r, "out of memory for %zu bytes of key '%s'", nbytes, key);
        return false;
    }
    if (!gguf_read(r, kv->data, nbytes, what)) {
        return false;
    }
    if (kv->type == GGUF_TYPE_BOOL) {
        int8_t * b = kv->data;
        for (size_t i = 0; i < nbytes; i++) {
            b[i] = b[i] != 0;
        }
    }
    kv->n = (size_t) n;
    return true;
}

static const char * gguf_key_of(const struct gguf_context * ctx, size_t i) {
    return ctx->kv[i].key;
}

static const char * gguf_name_of(const struct gguf_context * ctx, size_t i) {
    return ctx->info[i].name;
}

static bool gguf_read_kvs(struct gguf_reader * r, struct gguf_context * ctx, int64_t n_kv) {
    struct gguf_strset keys = { .get = gguf_key_of, .ctx = ctx };
    bool ok = true;
    for (int64_t i = 0; ok && i < n_kv; i++) {
        if (!gguf_grow((void **) &ctx->kv, &ctx->cap_kv, ctx->n_kv + 1, sizeof(*ctx->kv))) {
            gguf_error(r, "out of memory for key %" PRId64, i);
            ok = false;
            break;
        }
        struct gguf_kv * kv = &ctx->kv[ctx->n_kv];
        memset(kv, 0, sizeof(*kv));

        char what[64];
        snprintf(what, sizeof(what), "key %" PRId64, i);
        struct gguf_str key = {0};
        if (!gguf_read_str(r, &key, UINT64_MAX, what)) {
            ok = false;
            break;
        }
        kv->key = key.data;
        ctx->n_kv++; // from here on the entry is owned by ctx and freed with it

        if (key.n == 0) {
            gguf_error(r, "key %" PRId64 " is empty", i);
            ok = false;
            break;
        }
        if (!gguf_valid_utf8(key.data, (size_t) key.n)) {
            gguf_error(r, "key %" PRId64 " is not valid UTF-8", i);
            ok = false;
            break;
        }
        const int ins = gguf_strset_insert(&keys, ctx->n_kv - 1);
        if (ins <= 0) {
            gguf_error(r, ins == 0 ? "duplicate key '%s'" : "out of memory checking key '%s'", kv->key);
            ok = false;
            break;
        }

        int32_t type_raw;
        snprintf(what, sizeof(what), "value type of key %" PRId64, i);
        if (!gguf_read_i32(r, &type_raw, what)) {
            ok = false;
            break;
        }
        ok = gguf_read_value(r, kv, type_raw);
    }
    gguf_strset_free(&keys);
    return ok;
}

static bool gguf_read_tensor_infos(struct gguf_reader * r, struct gguf_context * ctx, int64_t n_tensors) {
    struct gguf_strset names = { .get = gguf_name_of, .ctx = ctx };
    bool ok = true;
    for (int64_t i = 0; ok && i < n_tensors; i++) {
        if (!gguf_grow((void **) &ctx->info, &ctx->cap_info, ctx->n_info + 1, sizeof(*ctx->info))) {
            gguf_error(r, "out of memory for tensor info %" PRId64, i);
            ok = false;
            break;
        }
        struct gguf_tensor_info * ti = &ctx->info[ctx->n_info];
        memset(ti, 0, sizeof(*ti));

        char what[GGML_MAX_NAME + 64];
        snprintf(what, sizeof(what), "name of tensor %" PRId64, i);
        uint64_t name_len;
        if (!gguf_read_u64(r, &name_len, what)) {
            ok = false;
            break;
        }
        if (name_len >= GGML_MAX_NAME) {
            gguf_error(r, "tensor %" PRId64 " has a name of %" PRIu64 " bytes, the maximum is %d",
                       i, name_len, GGML_MAX_NAME - 1);
            ok = false;
            break;
        }
        if (!gguf_read(r, ti->name, (size_t) name_len, what)) {
            ok = false;
            break;
        }
        ti->name[name_len] = '\0';
        if (!gguf_valid_utf8(ti->name, (size_t) name_len)) {
            gguf_error(r, "name of tensor %" PRId64 " is not valid UTF-8", i);
            ok = false;
            break;
        }
        ctx->n_info++;
        const int ins = gguf_strset_insert(&names, ctx->n_info - 1);
        if (ins <= 0) {
            gguf_error(r, ins == 0 ? "duplicate tensor name '%s'" : "out of memory checking tensor '%s'", ti->name);
            ok = false;
            break;
        }

        snprintf(what, sizeof(what), "n_dims of tensor '%s'", ti->name);
        uint32_t n_dims;
        if (!gguf_read_u32(r, &n_dims, what)) {
            ok = false;
            break;
        }
        if (n_dims < 1 || n_dims > GGML_MAX_DIMS) {
            gguf_error(r, "tensor '%s' has invalid n_dims %" PRIu32 " (must be 1..%d)", ti->name, n_dims, GGML_MAX_DIMS);
            ok = false;
            break;
        }
        int64_t nelements = 1;
        for (int j = 0; ok && j < GGML_MAX_DIMS; j++) {
            ti->ne[j] = 1;
            if ((uint32_t) j >= n_dims) {
                continue;
            }
            snprintf(what, sizeof(what), "ne[%d] of tensor '%s'", j, ti->name);
            if (!gguf_read_i64(r, &ti->ne[j], what)) {
                ok = false;
                break;
            }
            if (ti->ne[j] < 0) {
                gguf_error(r, "tensor '%s' has negative ne[%d] = %" PRId64, ti->name, j, ti->ne[j]);
                ok = false;
                break;
            }
            if (ggml_mul_overflow_i64(nelements, ti->ne[j], &nelements)) {
                gguf_error(r, "tensor '%s' element count overflows at ne[%d] = %" PRId64, ti->name, j, ti->ne[j]);
                ok = false;
                break;
            }
        }
        if (!ok) {
            break;
        }

        snprintf(what, sizeof(what), "type of tensor '%s'", ti->name);
        int32_t type_raw;
        if (!gguf_read_i32(r, &type_raw, what)) {
            ok = false;
            break;
        }
        if (!gguf_valid_ggml_type(type_raw)) {
            gguf_error(r, "tensor '%s' has invalid type id %" PRId32, ti->name, type_raw);
            ok = false;
            break;
        }
        ti->type = (enum ggml_type) type_raw;
        const int64_t blck = ggml_blck_size(ti->type);
        if (ti->ne[0] % blck != 0) {
            gguf_error(r, "tensor '%s' of type %s has ne[0] = %" PRId64 ", not a multiple of the block size %" PRId64,
                       ti->name, ggml_type_name(ti->type), ti->ne[0], blck);
            ok = false;
            break;
        }
        if (!gguf_tensor_nbytes(ti->type, ti->ne, &ti->nbytes)) {
            gguf_error(r, "tensor '%s' byte size overflows (shape %" PRId64 " x %" PRId64 " x %" PRId64 " x %" PRId64 ")",
                       ti->name, ti->ne[0], ti->ne[1], ti->ne[2], ti->ne[3]);
            ok = false;
            break;
        }

        snprintf(what, sizeof(what), "offset of tensor '%s'", ti->name);
        if (!gguf_read_u64(r, &ti->offset, what)) {
            ok = false;
            break;
        }
    }
    gguf_strset_free(&names);
    return ok;
}

static struct gguf_context * gguf_parse(struct gguf_reader * r, struct gguf_init_params params) {
    struct gguf_context * ctx = gguf_ctx_new();
    if (!ctx) {
        gguf_error(r, "out of memory");
        return NULL;
    }

    char magic[4];
    if (!gguf_read(r, magic, 4, "magic")) {
        goto fail;
    }
    if (memcmp(magic, GGUF_MAGIC, 4) != 0) {
        gguf_error(r, "invalid magic 0x%02x%02x%02x%02x, expected \"GGUF\"",
                   (unsigned char) magic[0], (unsigned char) magic[1], (unsigned char) magic[2], (unsigned char) magic[3]);
        goto fail;
    }

    if (!gguf_read_u32(r, &ctx->version, "version")) {
        goto fail;
    }
    if (ctx->version == 0) {
        gguf_error(r, "invalid version 0");
        goto fail;
    }
    if ((ctx->version & 0xFFFFu) == 0) {
        gguf_error(r, "version 0x%08" PRIx32 " looks byte-swapped: big-endian GGUF files are not supported", ctx->version);
        goto fail;
    }
    if (ctx->version == 1) {
        gguf_error(r, "GGUF version 1 is no longer supported (convert the file to version 3)");
        goto fail;
    }
    if (ctx->version > GGUF_VERSION) {
        gguf_error(r, "GGUF version %" PRIu32 " is newer than the supported version %d", ctx->version, GGUF_VERSION);
        goto fail;
    }

    int64_t n_tensors;
    int64_t n_kv;
    if (!gguf_read_i64(r, &n_tensors, "n_tensors") || !gguf_read_i64(r, &n_kv, "n_kv")) {
        goto fail;
    }
    if (n_tensors < 0 || (uint64_t) n_tensors > gguf_remaining(r) / GGUF_MIN_TENSOR_BYTES) {
        gguf_error(r, "n_tensors = %" PRId64 " is impossible with %" PRIu64 " bytes left in the file",
                   n_tensors, gguf_remaining(r));
        goto fail;
    }
    if (n_kv < 0 || (uint64_t) n_kv > gguf_remaining(r) / GGUF_MIN_KV_BYTES ||
        (uint64_t) n_kv * GGUF_MIN_KV_BYTES + (uint64_t) n_tensors * GGUF_MIN_TENSOR_BYTES > gguf_remaining(r)) {
        gguf_error(r, "n_kv = %" PRId64 " is impossible with %" PRIu64 " bytes left in the file",
                   n_kv, gguf_remaining(r));
        goto fail;
    }

    if (!gguf_read_kvs(r, ctx, n_kv)) {
        goto fail;
    }

    const int64_t align_id = gguf_find_key(ctx, GGUF_KEY_GENERAL_ALIGNMENT);
    if (align_id >= 0) {
        const struct gguf_kv * kv = &ctx->kv[align_id];
        if (kv->is_array || kv->type != GGUF_TYPE_UINT32) {
            gguf_error(r, "key '%s' must be of type u32 but is %s", GGUF_KEY_GENERAL_ALIGNMENT,
                       kv->is_array ? "an array" : gguf_type_name(kv->type));
            goto fail;
        }
        uint32_t a;
        memcpy(&a, kv->data, sizeof(a));
        if (!gguf_is_pow2(a) || a > GGUF_MAX_ALIGNMENT) {
            gguf_error(r, "key '%s' = %" PRIu32 " is not a power of two in [1, %zu]",
                       GGUF_KEY_GENERAL_ALIGNMENT, a, GGUF_MAX_ALIGNMENT);
            goto fail;
        }
        ctx->alignment = a;
    }

    if (!gguf_read_tensor_infos(r, ctx, n_tensors)) {
        goto fail;
    }

    // the data section starts at the next multiple of the alignment (llama.cpp pads only when there are tensors)
    uint64_t data_offset = r->pos;
    if (n_tensors > 0) {
        data_offset = GGML_PAD(r->pos, (uint64_t) ctx->alignment); // pos <= file size, alignment <= 2^24
        if (data_offset > r->size) {
            gguf_error(r, "data section at offset %" PRIu64 " starts past the end of the file (size %" PRIu64 ")",
                       data_offset, r->size);
            goto fail;
        }
    }
    ctx->offset = (size_t) data_offset;

    // each tensor must sit exactly where the previous one ends (padded), so tensors never overlap, and end
    // inside the file (the padding after the last one may be missing)
    uint64_t expected = 0;
    for (size_t i = 0; i < ctx->n_info; i++) {
        const struct gguf_tensor_info * ti = &ctx->info[i];
        if (ti->offset != expected) {
            gguf_error(r, "tensor '%s' has offset %" PRIu64 ", expected %" PRIu64 " (tensors must be contiguous and "
                       "aligned to %zu)", ti->name, ti->offset, expected, ctx->alignment);
            goto fail;
        }
        const uint64_t room = r->size - data_offset;
        if (ti->nbytes > room || ti->offset > room - ti->nbytes) {
            gguf_error(r, "tensor '%s' data [%" PRIu64 ", +%zu) at file offset %" PRIu64 " extends past the end of the "
                       "file (size %" PRIu64 ")", ti->name, ti->offset, ti->nbytes, data_offset, r->size);
            goto fail;
        }
        // offset + nbytes <= file size, so padding to an alignment <= 2^24 cannot overflow 64 bits
        expected = GGML_PAD(ti->offset + ti->nbytes, (uint64_t) ctx->alignment);
    }
    if (expected > SIZE_MAX) {
        gguf_error(r, "data section of %" PRIu64 " bytes does not fit in memory", expected);
        goto fail;
    }
    ctx->size = (size_t) expected;

    if (params.ctx != NULL) {
        *params.ctx = NULL;

        size_t mem_size;
        if (ggml_mul_overflow_size(ctx->n_info + 1, ggml_tensor_overhead(), &mem_size) ||
            ggml_add_overflow_size(mem_size, GGML_MEM_ALIGN, &mem_size) ||
            (!params.no_alloc && ggml_add_overflow_size(mem_size, ctx->size, &mem_size))) {
            gguf_error(r, "ggml context size for %zu tensors and %zu data bytes overflows", ctx->n_info, ctx->size);
            goto fail;
        }
        struct ggml_init_params ip = { .mem_size = mem_size, .mem_buffer = NULL, .no_alloc = params.no_alloc };
        struct ggml_context * gctx = ggml_init(ip);
        if (!gctx) {
            gguf_error(r, "failed to create a ggml context of %zu bytes", mem_size);
            goto fail;
        }

        struct ggml_tensor * blob = NULL;
        if (!params.no_alloc) {
            blob = ggml_new_tensor_1d(gctx, GGML_TYPE_I8, (int64_t) ctx->size);
            if (!blob) {
                gguf_error(r, "failed to allocate %zu bytes for the tensor data", ctx->size);
                ggml_free(gctx);
                goto fail;
            }
            ggml_set_name(blob, GGUF_BLOB_NAME);
            // the trailing padding of the last tensor may be absent from the file: read what is there
            const uint64_t avail = r->size - data_offset;
            const size_t   nread = (size_t) (avail < ctx->size ? avail : ctx->size);
            if (fseeko(r->f, (off_t) data_offset, SEEK_SET) != 0) {
                gguf_error(r, "cannot seek to the data section at offset %" PRIu64, data_offset);
                ggml_free(gctx);
                goto fail;
            }
            r->pos = data_offset;
            if (!gguf_read(r, blob->data, nread, "tensor data")) {
                ggml_free(gctx);
                goto fail;
            }
            if (ctx->size > nread) {
                memset((char *) blob->data + nread, 0, ctx->size - nread);
            }
            ctx->data = blob->data;
        }

        ggml_set_no_alloc(gctx, true);
        for (size_t i = 0; i < ctx->n_info; i++) {
            const struct gguf_tensor_info * ti = &ctx->info[i];
            struct ggml_tensor * t = ggml_new_tensor(gctx, ti->type, GGML_MAX_DIMS, ti->ne);
            if (!t) {
                gguf_error(r, "failed to create tensor '%s'", ti->name);
                ggml_free(gctx);
                goto fail;
            }
            ggml_set_name(t, ti->name);
            if (blob && blob->data) {
                t->data = (char *) blob->data + ti->offset;
            }
        }
        ggml_set_no_alloc(gctx, params.no_alloc);
        *params.ctx = gctx;
    }
    return ctx;

fail:
    gguf_free(ctx);
    return NULL;
}

struct gguf_context * gguf_init_from_file(const char * fname, struct gguf_init_params params) {
    if (params.ctx) {
        *params.ctx = NULL;
    }
    if (fname == NULL) {
        GGML_LOG_ERROR("%s: no file name given\n", __func__);
        return NULL;
    }
    FILE * f = fopen(fname, "rb");
    if (!f) {
        GGML_LOG_ERROR("%s: cannot open '%s': %s\n", __func__, fname, strerror(errno));
        return NULL;
    }
    struct gguf_reader r = { .f = f, .fname = fname };
    off_t end = -1;
    if (fseeko(f, 0, SEEK_END) == 0) {
        end = ftello(f);
    }
    if (end < 0 || fseeko(f, 0, SEEK_SET) != 0) {
        GGML_LOG_ERROR("%s: cannot determine the size of '%s' (not a regular file?)\n", __func__, fname);
        fclose(f);
        return NULL;
    }
    r.size = (uint64_t) end;
    struct gguf_context * ctx = gguf_parse(&r, params);
    fclose(f);
    return ctx;
}

// ---- getters (wrong ids / types are programming errors: abort like llama.cpp) ----------------------------

uint32_t gguf_get_version    (const struct gguf_context * ctx) { return ctx->version; }
size_t   gguf_get_alignment  (const struct gguf_context * ctx) { return ctx->alignment; }
size_t   gguf_get_data_offset(const struct gguf_context * ctx) { return ctx->offset; }
int64_t  gguf_get_n_kv       (const struct gguf_context * ctx) { return (int64_t) ctx->n_kv; }
int64_t  gguf_get_n_tensors  (const struct gguf_context * ctx) { return (int64_t) ctx->n_info; }

int64_t gguf_find_key(const struct gguf_context * ctx, const char * key) {
    for (size_t i = 0; i < ctx->n_kv; i++) {
        if (strcmp(ctx->kv[i].key, key) == 0) {
            return (int64_t) i;
        }
    }
    return -1;
}

static const struct gguf_kv * gguf_kv_at(const struct gguf_context * ctx, int64_t key_id) {
    GGML_ASSERT(key_id >= 0 && (uint64_t) key_id < ctx->n_kv);
    return &ctx->kv[key_id];
}

const char * gguf_get_key(const struct gguf_context * ctx, int64_t key_id) {
    return gguf_kv_at(ctx, key_id)->key;
}

enum gguf_type gguf_get_kv_type(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    return kv->is_array ? GGUF_TYPE_ARRAY : kv->type;
}

enum gguf_type gguf_get_arr_type(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    GGML_ASSERT(kv->is_array);
    return kv->type;
}

// a single value of the given type (a one-element array also qualifies, as in llama.cpp)
static const struct gguf_kv * gguf_kv_scalar(const struct gguf_context * ctx, int64_t key_id, enum gguf_type type) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    GGML_ASSERT(kv->n == 1);
    GGML_ASSERT(kv->type == type);
    return kv;
}

#define GGUF_GETTER(NAME, CTYPE, GTYPE)                                                    \
    CTYPE gguf_get_val_##NAME(const struct gguf_context * ctx, int64_t key_id) {           \
        CTYPE v;                                                                           \
        memcpy(&v, gguf_kv_scalar(ctx, key_id, GTYPE)->data, sizeof(v));                  \
        return v;                                                                          \
    }

GGUF_GETTER(u8,  uint8_t,  GGUF_TYPE_UINT8)
GGUF_GETTER(i8,  int8_t,   GGUF_TYPE_INT8)
GGUF_GETTER(u16, uint16_t, GGUF_TYPE_UINT16)
GGUF_GETTER(i16, int16_t,  GGUF_TYPE_INT16)
GGUF_GETTER(u32, uint32_t, GGUF_TYPE_UINT32)
GGUF_GETTER(i32, int32_t,  GGUF_TYPE_INT32)
GGUF_GETTER(f32, float,    GGUF_TYPE_FLOAT32)
GGUF_GETTER(u64, uint64_t, GGUF_TYPE_UINT64)
GGUF_GETTER(i64, int64_t,  GGUF_TYPE_INT64)
GGUF_GETTER(f64, double,   GGUF_TYPE_FLOAT64)

bool gguf_get_val_bool(const struct gguf_context * ctx, int64_t key_id) {
    return *(const int8_t *) gguf_kv_scalar(ctx, key_id, GGUF_TYPE_BOOL)->data != 0;
}

const char * gguf_get_val_str(const struct gguf_context * ctx, int64_t key_id) {
    return gguf_kv_scalar(ctx, key_id, GGUF_TYPE_STRING)->str[0].data;
}

const void * gguf_get_val_data(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    GGML_ASSERT(kv->n == 1);
    GGML_ASSERT(kv->type != GGUF_TYPE_STRING);
    return kv->data;
}

size_t gguf_get_arr_n(const struct gguf_context * ctx, int64_t key_id) {
    return gguf_kv_at(ctx, key_id)->n;
}

const void * gguf_get_arr_data(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    GGML_ASSERT(kv->type != GGUF_TYPE_STRING);
    return kv->data;
}

const char * gguf_get_arr_str(const struct gguf_context * ctx, int64_t key_id, size_t i) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    GGML_ASSERT(kv->type == GGUF_TYPE_STRING);
    GGML_ASSERT(i < kv->n);
    return kv->str[i].data;
}

int64_t gguf_find_tensor(const struct gguf_context * ctx, const char * name) {
    for (size_t i = 0; i < ctx->n_info; i++) {
        if (strcmp(ctx->info[i].name, name) == 0) {
            return (int64_t) i;
        }
    }
    return -1;
}

static const struct gguf_tensor_info * gguf_info_at(const struct gguf_context * ctx, int64_t tensor_id) {
    GGML_ASSERT(tensor_id >= 0 && (uint64_t) tensor_id < ctx->n_info);
    return &ctx->info[tensor_id];
}

size_t gguf_get_tensor_offset(const struct gguf_context * ctx, int64_t tensor_id) {
    return (size_t) gguf_info_at(ctx, tensor_id)->offset;
}

const char * gguf_get_tensor_name(const struct gguf_context * ctx, int64_t tensor_id) {
    return gguf_info_at(ctx, tensor_id)->name;
}

enum ggml_type gguf_get_tensor_type(const struct gguf_context * ctx, int64_t tensor_id) {
    return gguf_info_at(ctx, tensor_id)->type;
}

size_t gguf_get_tensor_size(const struct gguf_context * ctx, int64_t tensor_id) {
    return gguf_info_at(ctx, tensor_id)->nbytes;
}

// ---- setters -------------------------------------------------------------------------------------------

// offsets of tensors from `first` on, after a size or alignment change
static void gguf_update_offsets(struct gguf_context * ctx, size_t first) {
    for (size_t i = first; i < ctx->n_info; i++) {
        ctx->info[i].offset = i == 0 ? 0 :
            ctx->info[i - 1].offset + GGML_PAD(ctx->info[i - 1].nbytes, ctx->alignment);
    }
}

int64_t gguf_remove_key(struct gguf_context * ctx, const char * key) {
    const int64_t id = gguf_find_key(ctx, key);
    if (id < 0) {
        return -1;
    }
    gguf_kv_free(&ctx->kv[id]);
    memmove(&ctx->kv[id], &ctx->kv[id + 1], (ctx->n_kv - (size_t) id - 1) * sizeof(*ctx->kv));
    ctx->n_kv--;
    if (strcmp(key, GGUF_KEY_GENERAL_ALIGNMENT) == 0 && ctx->alignment != GGUF_DEFAULT_ALIGNMENT) {
        ctx->alignment = GGUF_DEFAULT_ALIGNMENT;
        gguf_update_offsets(ctx, 0);
    }
    return id;
}

// Removes key and appends a fresh entry for it (llama.cpp's override rule: the key moves to the back).
// general.alignment must be a u32 power of two; unlike llama.cpp, setting it also changes the alignment the
// writer pads to, so that the written file stays consistent with its own key.
static struct gguf_kv * gguf_kv_new(struct gguf_context * ctx, const char * key, enum gguf_type type, bool is_array) {
    GGML_ASSERT(key != NULL && key[0] != '\0');
    const bool is_align = strcmp(key, GGUF_KEY_GENERAL_ALIGNMENT) == 0;
    if (is_align && (is_array || type != GGUF_TYPE_UINT32)) {
        GGML_ABORT(GGUF_KEY_GENERAL_ALIGNMENT " must be type u32");
    }
    gguf_remove_key(ctx, key);
    GGML_ASSERT(gguf_grow((void **) &ctx->kv, &ctx->cap_kv, ctx->n_kv + 1, sizeof(*ctx->kv)));
    struct gguf_kv * kv = &ctx->kv[ctx->n_kv];
    memset(kv, 0, sizeof(*kv));
    kv->key = strdup(key);
    GGML_ASSERT(kv->key != NULL);
    kv->type     = type;
    kv->is_array = is_array;
    ctx->n_kv++;
    return kv;
}

static void gguf_set_scalar(struct gguf_context * ctx, const char * key, enum gguf_type type, const void * val) {
    const size_t size = gguf_type_size(type);
    if (strcmp(key, GGUF_KEY_GENERAL_ALIGNMENT) == 0 && type == GGUF_TYPE_UINT32) {
        uint32_t a;
        memcpy(&a, val, sizeof(a));
        GGML_ASSERT(gguf_is_pow2(a) && a <= GGUF_MAX_ALIGNMENT && "general.alignment must be a power of 2");
    }
    // copy first: val may point into the entry that gguf_kv_new is about to remove
    uint8_t tmp[8];
    memcpy(tmp, val, size);
    struct gguf_kv * kv = gguf_kv_new(ctx, key, type, false);
    kv->data = malloc(size);
    GGML_ASSERT(kv->data != NULL);
    memcpy(kv->data, tmp, size);
    kv->n = 1;
    if (type == GGUF_TYPE_UINT32 && strcmp(key, GGUF_KEY_GENERAL_ALIGNMENT) == 0) {
        uint32_t a;
        memcpy(&a, tmp, sizeof(a));
        ctx->alignment = a;
        gguf_update_offsets(ctx, 0);
    }
}

#define GGUF_SETTER(NAME, CTYPE, GTYPE)                                                          \
    void gguf_set_val_##NAME(struct gguf_context * ctx, const char * key, CTYPE val) {           \
        gguf_set_scalar(ctx, key, GTYPE, &val);                                                  \
    }

GGUF_SETTER(u8,  uint8_t,  GGUF_TYPE_UINT8)
GGUF_SETTER(i8,  int8_t,   GGUF_TYPE_INT8)
GGUF_SETTER(u16, uint16_t, GGUF_TYPE_UINT16)
GGUF_SETTER(i16, int16_t,  GGUF_TYPE_INT16)
GGUF_SETTER(u32, uint32_t, GGUF_TYPE_UINT32)
GGUF_SETTER(i32, int32_t,  GGUF_TYPE_INT32)
GGUF_SETTER(f32, float,    GGUF_TYPE_FLOAT32)
GGUF_SETTER(u64, uint64_t, GGUF_TYPE_UINT64)
GGUF_SETTER(i64, int64_t,  GGUF_TYPE_INT64)
GGUF_SETTER(f64, double,   GGUF_TYPE_FLOAT64)

void gguf_set_val_bool(struct gguf_context * ctx, const char * key, bool val) {
    const int8_t b = val ? 1 : 0;
    gguf_set_scalar(ctx, key, GGUF_TYPE_BOOL, &b);
}

static struct gguf_str gguf_str_copy(const char * s, size_t n) {
    struct gguf_str out = { .n = n, .data = malloc(n + 1) };
    GGML_ASSERT(out.data != NULL);
    memcpy(out.data, s, n);
    out.data[n] = '\0';
    return out;
}

// strings given with explicit lengths (keeps embedded NULs when copying between contexts)
static void gguf_set_strs(struct gguf_context * ctx, const char * key, bool is_array,
                          const char * const * strs, const uint64_t * lens, size_t n) {
    // copy first: the sources may live in the entry that gguf_kv_new removes
    struct gguf_str * copy = calloc(n ? n : 1, sizeof(*copy));
    GGML_ASSERT(copy != NULL);
    for (size_t i = 0; i < n; i++) {
        GGML_ASSERT(strs[i] != NULL);
        copy[i] = gguf_str_copy(strs[i], lens ? (size_t) lens[i] : strlen(strs[i]));
    }
    struct gguf_kv * kv = gguf_kv_new(ctx, key, GGUF_TYPE_STRING, is_array);
    kv->str = copy;
    kv->n   = n;
}

void gguf_set_val_str(struct gguf_context * ctx, const char * key, const char * val) {
    gguf_set_strs(ctx, key, false, &val, NULL, 1);
}

void gguf_set_arr_str(struct gguf_context * ctx, const char * key, const char ** data, size_t n) {
    gguf_set_strs(ctx, key, true, data, NULL, n);
}

void gguf_set_arr_data(struct gguf_context * ctx, const char * key, enum gguf_type type, const void * data, size_t n) {
    const size_t tsize = gguf_type_size(type);
    GGML_ASSERT(tsize > 0 && "gguf_set_arr_data needs a fixed-size element type");
    size_t nbytes;
    GGML_ASSERT(!ggml_mul_overflow_size(n, tsize, &nbytes));
    void * copy = malloc(nbytes ? nbytes : 1);
    GGML_ASSERT(copy != NULL);
    if (nbytes > 0) {
        GGML_ASSERT(data != NULL);
        memcpy(copy, data, nbytes);
    }
    struct gguf_kv * kv = gguf_kv_new(ctx, key, type, true);
    kv->data = copy;
    kv->n    = n;
}

void gguf_set_kv(struct gguf_context * ctx, const struct gguf_context * src) {
    for (size_t i = 0; i < src->n_kv; i++) {
        const struct gguf_kv * kv = &src->kv[i];
        if (kv->type == GGUF_TYPE_STRING) {
            const char ** strs = malloc((kv->n ? kv->n : 1) * sizeof(*strs));
            uint64_t *    lens = malloc((kv->n ? kv->n : 1) * sizeof(*lens));
            GGML_ASSERT(strs != NULL && lens != NULL);
            for (size_t j = 0; j < kv->n; j++) {
                strs[j] = kv->str[j].data;
                lens[j] = kv->str[j].n;
            }
            gguf_set_strs(ctx, kv->key, kv->is_array, strs, lens, kv->n);
            free(strs);
            free(lens);
        } else if (kv->is_array) {
            gguf_set_arr_data(ctx, kv->key, kv->type, kv->data, kv->n);
        } else {
            gguf_set_scalar(ctx, kv->key, kv->type, kv->data);
        }
    }
}

void gguf_add_tensor(struct gguf_context * ctx, const struct ggml_tensor * tensor) {
    GGML_ASSERT(tensor != NULL);
    if (gguf_find_tensor(ctx, tensor->name) != -1) {
        GGML_ABORT("duplicate tensor name: %s", tensor->name);
    }
    GGML_ASSERT(ggml_is_contiguous(tensor) && "gguf_add_tensor needs a contiguous tensor");
    GGML_ASSERT(gguf_grow((void **) &ctx->info, &ctx->cap_info, ctx->n_info + 1, sizeof(*ctx->info)));

    struct gguf_tensor_info * ti = &ctx->info[ctx->n_info];
    memset(ti, 0, sizeof(*ti));
    snprintf(ti->name, sizeof(ti->name), "%s", tensor->name);
    ti->type = tensor->type;
    memcpy(ti->ne, tensor->ne, sizeof(ti->ne));
    ti->nbytes = ggml_nbytes(tensor);
    ti->data   = tensor->data;
    ti->buffer = tensor->buffer;
    ctx->n_info++;
    gguf_update_offsets(ctx, ctx->n_info - 1);
}

void gguf_set_tensor_type(struct gguf_context * ctx, const char * name, enum ggml_type type) {
    const int64_t id = gguf_find_tensor(ctx, name);
    if (id < 0) {
        GGML_ABORT("tensor not found: %s", name);
    }
    GGML_ASSERT(gguf_valid_ggml_type((int32_t) type));
    struct gguf_tensor_info * ti = &ctx->info[id];
    GGML_ASSERT(ti->ne[0] % ggml_blck_size(type) == 0 && "tensor row size not divisible by block size of new type");
    ti->type = type;
    GGML_ASSERT(gguf_tensor_nbytes(type, ti->ne, &ti->nbytes));
    gguf_update_offsets(ctx, (size_t) id + 1);
}

void gguf_set_tensor_data(struct gguf_context * ctx, const char * name, const void * data) {
    const int64_t id = gguf_find_tensor(ctx, name);
    if (id < 0) {
        GGML_ABORT("tensor not found: %s", name);
    }
    // explicit host data replaces whatever backend buffer the tensor came from
    ctx->info[id].data   = data;
    ctx->info[id].buffer = NULL;
}

// ---- writer --------------------------------------------------------------------------------------------

// writes to a file, to a memory buffer, or only counts (both NULL)
struct gguf_writer {
    FILE *    f;
    uint8_t * buf;
    size_t    pos;
    bool      ok;
    int       err; // errno of the first failed write
};

static void gguf_w(struct gguf_writer * w, const void * p, size_t n) {
    if (!w->ok || n == 0) {
        return;
    }
    if (w->f) {
        if (fwrite(p, 1, n, w->f) != n) {
            w->ok  = false;
            w->err = errno;
            return;
        }
    } else if (w->buf) {
        memcpy(w->buf + w->pos, p, n);
    }
    w->pos += n;
}

static void gguf_w_u32(struct gguf_writer * w, uint32_t v) { gguf_w(w, &v, 4); }
static void gguf_w_i32(struct gguf_writer * w, int32_t  v) { gguf_w(w, &v, 4); }
static void gguf_w_u64(struct gguf_writer * w, uint64_t v) { gguf_w(w, &v, 8); }
static void gguf_w_i64(struct gguf_writer * w, int64_t  v) { gguf_w(w, &v, 8); }

static void gguf_w_str(struct gguf_writer * w, const char * s, uint64_t n) {
    gguf_w_u64(w, n);
    gguf_w(w, s, (size_t) n);
}

static void gguf_w_pad(struct gguf_writer * w, size_t alignment) {
    static const uint8_t zeros[256] = {0};
    size_t pad = GGML_PAD(w->pos, alignment) - w->pos;
    while (pad > 0) {
        const size_t k = pad < sizeof(zeros) ? pad : sizeof(zeros);
        gguf_w(w, zeros, k);
        pad -= k;
    }
}

// tensor data held by a backend (possibly device memory): copy it out in bounded chunks
static void gguf_w_backend(struct gguf_writer * w, const struct gguf_tensor_info * ti) {
    struct ggml_tensor t;
    memset(&t, 0, sizeof(t));
    t.type   = ti->type;
    t.buffer = ti->buffer;
    t.data   = (void *) (uintptr_t) ti->data;
    memcpy(t.ne, ti->ne, sizeof(t.ne));
    t.nb[0] = ggml_type_size(ti->type);
    t.nb[1] = t.nb[0] * (size_t) (ti->ne[0] / ggml_blck_size(ti->type));
    for (int i = 2; i < GGML_MAX_DIMS; i++) {
        t.nb[i] = t.nb[i - 1] * (size_t) ti->ne[i - 1];
    }
    const size_t chunk = (size_t) 16 << 20;
    void * tmp = malloc(ti->nbytes < chunk ? ti->nbytes : chunk);
    if (!tmp) {
        w->ok  = false;
        w->err = ENOMEM;
        return;
    }
    for (size_t off = 0; off < ti->nbytes && w->ok; off += chunk) {
        const size_t n = ti->nbytes - off < chunk ? ti->nbytes - off : chunk;
        ggml_backend_tensor_get(&t, tmp, off, n);
        gguf_w(w, tmp, n);
    }
    free(tmp);
}

static void gguf_write_meta(const struct gguf_context * ctx, struct gguf_writer * w) {
    gguf_w(w, GGUF_MAGIC, 4);
    gguf_w_u32(w, GGUF_VERSION); // always the current version: v2 files are rewritten as v3
    gguf_w_i64(w, (int64_t) ctx->n_info);
    gguf_w_i64(w, (int64_t) ctx->n_kv);

    for (size_t i = 0; i < ctx->n_kv; i++) {
        const struct gguf_kv * kv = &ctx->kv[i];
        gguf_w_str(w, kv->key, strlen(kv->key));
        if (kv->is_array) {
            gguf_w_i32(w, GGUF_TYPE_ARRAY);
            gguf_w_i32(w, (int32_t) kv->type);
            gguf_w_u64(w, kv->n);
        } else {
            gguf_w_i32(w, (int32_t) kv->type);
        }
        if (kv->type == GGUF_TYPE_STRING) {
            for (size_t j = 0; j < kv->n; j++) {
                gguf_w_str(w, kv->str[j].data, kv->str[j].n);
            }
        } else if (kv->type == GGUF_TYPE_BOOL) {
            const int8_t * b = kv->data;
            for (size_t j = 0; j < kv->n; j++) {
                const int8_t v = b[j] != 0;
                gguf_w(w, &v, 1);
            }
        } else {
            gguf_w(w, kv->data, kv->n * gguf_type_size(kv->type));
        }
    }

    for (size_t i = 0; i < ctx->n_info; i++) {
        const struct gguf_tensor_info * ti = &ctx->info[i];
        gguf_w_str(w, ti->name, strlen(ti->name));
        const uint32_t n_dims = gguf_n_dims(ti->ne);
        gguf_w_u32(w, n_dims);
        for (uint32_t j = 0; j < n_dims; j++) {
            gguf_w_i64(w, ti->ne[j]);
        }
        gguf_w_i32(w, (int32_t) ti->type);
        gguf_w_u64(w, ti->offset);
    }

    gguf_w_pad(w, ctx->alignment);
}

bool gguf_write_to_file(const struct gguf_context * ctx, const char * fname, bool only_meta) {
    FILE * f = fopen(fname, "wb");
    if (!f) {
        GGML_LOG_ERROR("%s: cannot open '%s' for writing: %s\n", __func__, fname, strerror(errno));
        return false;
    }
    struct gguf_writer w = { .f = f, .ok = true };
    gguf_write_meta(ctx, &w);

    if (!only_meta) {
        const size_t data_start = w.pos;
        for (size_t i = 0; i < ctx->n_info && w.ok; i++) {
            const struct gguf_tensor_info * ti = &ctx->info[i];
            GGML_ASSERT(w.pos - data_start == ti->offset);
            if (ti->nbytes > 0 && ti->data == NULL && ti->buffer == NULL) {
                GGML_LOG_ERROR("%s: tensor '%s' has no data to write to '%s'\n", __func__, ti->name, fname);
                fclose(f);
                return false;
            }
            if (ti->buffer) {
                gguf_w_backend(&w, ti);
            } else {
                gguf_w(&w, ti->data, ti->nbytes);
            }
            gguf_w_pad(&w, ctx->alignment);
        }
    }

    // buffered data is only known to be on disk once fclose succeeds
    const bool closed = fclose(f) == 0;
    if (!w.ok || !closed) {
        GGML_LOG_ERROR("%s: failed to write '%s': %s\n", __func__, fname, strerror(w.ok ? errno : w.err));
        return false;
    }
    return true;
}

size_t gguf_get_meta_size(const struct gguf_context * ctx) {
    struct gguf_writer w = { .ok = true };
    gguf_write_meta(ctx, &w);
    return w.pos;
}

void gguf_get_meta_data(const struct gguf_context * ctx, void * data) {
    struct gguf_writer w = { .buf = data, .ok = true };
    gguf_write_meta(ctx, &w);
}
