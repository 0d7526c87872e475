// llama-gguf: print a GGUF file's header, metadata and tensor index, as text or (--json) as one JSON object.
// Exit status: 0 on success, 1 on a bad file or bad arguments (the reader logs the one-line reason).

#include "ggml.h"
#include "gguf.h"
#include "server-json.h" // sj_string_lossy, shared with llama-server

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// arrays are abbreviated to their first elements (both outputs), long strings in text output
#define MAX_ARRAY_SHOWN 8
#define MAX_TEXT_STRING 120

static void usage(FILE * out, const char * argv0) {
    fprintf(out,
            "usage: %s FILE [--json]\n"
            "  prints the GGUF header, every metadata key (type and value; arrays abbreviated) and every tensor\n"
            "  (name, type, shape, offset in the data section, bytes)\n"
            "  --json   print the same as one JSON object\n", argv0);
}

// ---- text output ---------------------------------------------------------------------------------------

static void print_text_string(const char * s) {
    putchar('"');
    size_t n = 0;
    for (const unsigned char * p = (const unsigned char *) s; *p; p++, n++) {
        if (n >= MAX_TEXT_STRING) {
            fputs("...", stdout);
            break;
        }
        if (*p == '"' || *p == '\\') {
            printf("\\%c", *p);
        } else if (*p == '\n') {
            fputs("\\n", stdout);
        } else if (*p == '\t') {
            fputs("\\t", stdout);
        } else if (*p < 0x20 || *p == 0x7f) {
            printf("\\x%02x", *p);
        } else {
            putchar(*p);
        }
    }
    putchar('"');
}

// one element of a non-string value (scalar or array element i)
static void print_text_elem(enum gguf_type type, const void * data, size_t i) {
    const char * p = (const char *) data;
    switch (type) {
        case GGUF_TYPE_UINT8:   { uint8_t  v; memcpy(&v, p + i * 1, 1); printf("%" PRIu8, v);  } break;
        case GGUF_TYPE_INT8:    { int8_t   v; memcpy(&v, p + i * 1, 1); printf("%" PRId8, v);  } break;
        case GGUF_TYPE_UINT16:  { uint16_t v; memcpy(&v, p + i * 2, 2); printf("%" PRIu16, v); } break;
        case GGUF_TYPE_INT16:   { int16_t  v; memcpy(&v, p + i * 2, 2); printf("%" PRId16, v); } break;
        case GGUF_TYPE_UINT32:  { uint32_t v; memcpy(&v, p + i * 4, 4); printf("%" PRIu32, v); } break;
        case GGUF_TYPE_INT32:   { int32_t  v; memcpy(&v, p + i * 4, 4); printf("%" PRId32, v); } break;
        case GGUF_TYPE_FLOAT32: { float    v; memcpy(&v, p + i * 4, 4); printf("%.9g", (double) v); } break;
        case GGUF_TYPE_UINT64:  { uint64_t v; memcpy(&v, p + i * 8, 8); printf("%" PRIu64, v); } break;
        case GGUF_TYPE_INT64:   { int64_t  v; memcpy(&v, p + i * 8, 8); printf("%" PRId64, v); } break;
        case GGUF_TYPE_FLOAT64: { double   v; memcpy(&v, p + i * 8, 8); printf("%.17g", v); } break;
        case GGUF_TYPE_BOOL:    { int8_t   v; memcpy(&v, p + i * 1, 1); fputs(v ? "true" : "false", stdout); } break;
        case GGUF_TYPE_STRING:
        case GGUF_TYPE_ARRAY:
        case GGUF_TYPE_COUNT:
            break;
    }
}

// shape from the ggml context the reader built (gguf.h has no shape getter); at most 4 dims, trailing 1s dropped
static int tensor_shape(struct ggml_context * gctx, const char * name, int64_t ne[GGML_MAX_DIMS]) {
    const struct ggml_tensor * t = ggml_get_tensor(gctx, name);
    if (!t) {
        return 0;
    }
    int n = 1;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        ne[i] = t->ne[i];
        if (t->ne[i] != 1) {
            n = i + 1;
        }
    }
    return n;
}

static void print_text(const struct gguf_context * ctx, struct ggml_context * gctx, const char * fname) {
    const int64_t n_kv = gguf_get_n_kv(ctx);
    const int64_t n_t  = gguf_get_n_tensors(ctx);
    printf("file:        %s\n", fname);
    printf("version:     %" PRIu32 "\n", gguf_get_version(ctx));
    printf("alignment:   %zu\n", gguf_get_alignment(ctx));
    printf("n_kv:        %" PRId64 "\n", n_kv);
    printf("n_tensors:   %" PRId64 "\n", n_t);
    printf("data offset: %zu\n", gguf_get_data_offset(ctx));

    printf("\nmetadata:\n");
    for (int64_t i = 0; i < n_kv; i++) {
        const enum gguf_type t = gguf_get_kv_type(ctx, i);
        printf("  %4" PRId64 ": %-44s ", i, gguf_get_key(ctx, i));
        if (t == GGUF_TYPE_ARRAY) {
            const enum gguf_type at = gguf_get_arr_type(ctx, i);
            const size_t n = gguf_get_arr_n(ctx, i);
            printf("arr[%s,%zu] = [", gguf_type_name(at), n);
            for (size_t j = 0; j < n && j < MAX_ARRAY_SHOWN; j++) {
                if (j > 0) {
                    fputs(", ", stdout);
                }
                if (at == GGUF_TYPE_STRING) {
                    print_text_string(gguf_get_arr_str(ctx, i, j));
                } else {
                    print_text_elem(at, gguf_get_arr_data(ctx, i), j);
                }
            }
            fputs(n > MAX_ARRAY_SHOWN ? ", ...]\n" : "]\n", stdout);
        } else {
            printf("%-4s = ", gguf_type_name(t));
            if (t == GGUF_TYPE_STRING) {
                print_text_string(gguf_get_val_str(ctx, i));
            } else {
                print_text_elem(t, gguf_get_val_data(ctx, i), 0);
            }
            putchar('\n');
        }
    }

    printf("\ntensors:\n");
    size_t total = 0;
    for (int64_t i = 0; i < n_t; i++) {
        const char * name = gguf_get_tensor_name(ctx, i);
        printf("  %4" PRId64 ": %-40s %-7s", i, name, ggml_type_name(gguf_get_tensor_type(ctx, i)));
        int64_t ne[GGML_MAX_DIMS];
        const int nd = tensor_shape(gctx, name, ne);
        char shape[128];
        int off = snprintf(shape, sizeof(shape), "[");
        for (int d = 0; d < nd && off > 0 && (size_t) off < sizeof(shape); d++) {
            off += snprintf(shape + off, sizeof(shape) - (size_t) off, "%s%" PRId64, d ? ", " : "", ne[d]);
        }
        if (off > 0 && (size_t) off < sizeof(shape)) {
            snprintf(shape + off, sizeof(shape) - (size_t) off, "]");
        }
        printf(" %-24s", shape);
        total += gguf_get_tensor_size(ctx, i);
        printf(" offset %12zu  bytes %12zu\n", gguf_get_tensor_offset(ctx, i), gguf_get_tensor_size(ctx, i));
    }
    printf("\ntotal tensor bytes: %zu\n", total);
}

// ---- JSON output ---------------------------------------------------------------------------------------

// JSON strings must be valid UTF-8; metadata strings need not be, so bad bytes become U+FFFD
static json_t * json_str_lossy(const char * s) {
    return sj_string_lossy(s, s ? strlen(s) : 0);
}

static json_t * json_real_safe(double v) {
    if (isnan(v)) {
        return json_string("nan");
    }
    if (isinf(v)) {
        return json_string(v > 0 ? "inf" : "-inf");
    }
    return json_real(v);
}

static json_t * json_elem(enum gguf_type type, const void * data, size_t i) {
    const char * p = (const char *) data;
    switch (type) {
        case GGUF_TYPE_UINT8:   { uint8_t  v; memcpy(&v, p + i * 1, 1); return json_integer(v); }
        case GGUF_TYPE_INT8:    { int8_t   v; memcpy(&v, p + i * 1, 1); return json_integer(v); }
        case GGUF_TYPE_UINT16:  { uint16_t v; memcpy(&v, p + i * 2, 2); return json_integer(v); }
        case GGUF_TYPE_INT16:   { int16_t  v; memcpy(&v, p + i * 2, 2); return json_integer(v); }
        case GGUF_TYPE_UINT32:  { uint32_t v; memcpy(&v, p + i * 4, 4); return json_integer(v); }
        case GGUF_TYPE_INT32:   { int32_t  v; memcpy(&v, p + i * 4, 4); return json_integer(v); }
        case GGUF_TYPE_FLOAT32: { float    v; memcpy(&v, p + i * 4, 4); return json_real_safe(v); }
        case GGUF_TYPE_UINT64:  {
            uint64_t v; memcpy(&v, p + i * 8, 8);
            if (v > (uint64_t) INT64_MAX) { // beyond json_int_t: keep it exact as a decimal string
                char buf[32];
                snprintf(buf, sizeof(buf), "%" PRIu64, v);
                return json_string(buf);
            }
            return json_integer((json_int_t) v);
        }
        case GGUF_TYPE_INT64:   { int64_t  v; memcpy(&v, p + i * 8, 8); return json_integer(v); }
        case GGUF_TYPE_FLOAT64: { double   v; memcpy(&v, p + i * 8, 8); return json_real_safe(v); }
        case GGUF_TYPE_BOOL:    { int8_t   v; memcpy(&v, p + i * 1, 1); return json_boolean(v != 0); }
        case GGUF_TYPE_STRING:
        case GGUF_TYPE_ARRAY:
        case GGUF_TYPE_COUNT:
            break;
    }
    return json_null();
}

static int print_json(const struct gguf_context * ctx, struct ggml_context * gctx, const char * fname) {
    const int64_t n_kv = gguf_get_n_kv(ctx);
    const int64_t n_t  = gguf_get_n_tensors(ctx);

    json_t * root = json_object();
    json_object_set_new(root, "file",        json_str_lossy(fname));
    json_object_set_new(root, "version",     json_integer(gguf_get_version(ctx)));
    json_object_set_new(root, "alignment",   json_integer((json_int_t) gguf_get_alignment(ctx)));
    json_object_set_new(root, "n_kv",        json_integer(n_kv));
    json_object_set_new(root, "n_tensors",   json_integer(n_t));
    json_object_set_new(root, "data_offset", json_integer((json_int_t) gguf_get_data_offset(ctx)));

    json_t * md = json_array();
    for (int64_t i = 0; i < n_kv; i++) {
        const enum gguf_type t = gguf_get_kv_type(ctx, i);
        json_t * e = json_object();
        json_object_set_new(e, "key",  json_str_lossy(gguf_get_key(ctx, i)));
        json_object_set_new(e, "type", json_string(gguf_type_name(t)));
        if (t == GGUF_TYPE_ARRAY) {
            const enum gguf_type at = gguf_get_arr_type(ctx, i);
            const size_t n = gguf_get_arr_n(ctx, i);
            json_object_set_new(e, "array_type", json_string(gguf_type_name(at)));
            json_object_set_new(e, "count", json_integer((json_int_t) n));
            json_t * vals = json_array();
            for (size_t j = 0; j < n && j < MAX_ARRAY_SHOWN; j++) {
                json_array_append_new(vals, at == GGUF_TYPE_STRING ? json_str_lossy(gguf_get_arr_str(ctx, i, j))
                                                                   : json_elem(at, gguf_get_arr_data(ctx, i), j));
            }
            json_object_set_new(e, "values", vals);
            json_object_set_new(e, "truncated", json_boolean(n > MAX_ARRAY_SHOWN));
        } else if (t == GGUF_TYPE_STRING) {
            json_object_set_new(e, "value", json_str_lossy(gguf_get_val_str(ctx, i)));
        } else {
            json_object_set_new(e, "value", json_elem(t, gguf_get_val_data(ctx, i), 0));
        }
        json_array_append_new(md, e);
    }
    json_object_set_new(root, "metadata", md);

    json_t * ts = json_array();
    for (int64_t i = 0; i < n_t; i++) {
        json_t * e = json_object();
        json_object_set_new(e, "name",   json_str_lossy(gguf_get_tensor_name(ctx, i)));
        json_object_set_new(e, "type",   json_string(ggml_type_name(gguf_get_tensor_type(ctx, i))));
        int64_t ne[GGML_MAX_DIMS];
        const int nd = tensor_shape(gctx, gguf_get_tensor_name(ctx, i), ne);
        json_t * shape = json_array();
        for (int d = 0; d < nd; d++) {
            json_array_append_new(shape, json_integer(ne[d]));
        }
        json_object_set_new(e, "shape", shape);
        json_object_set_new(e, "offset", json_integer((json_int_t) gguf_get_tensor_offset(ctx, i)));
        json_object_set_new(e, "bytes",  json_integer((json_int_t) gguf_get_tensor_size(ctx, i)));
        json_array_append_new(ts, e);
    }
    json_object_set_new(root, "tensors", ts);

    const int rc = json_dumpf(root, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    putchar('\n');
    json_decref(root);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char ** argv) {
    const char * fname = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout, argv[0]);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "error: unknown argument '%s'\n", argv[i]);
            usage(stderr, argv[0]);
            return 1;
        } else if (fname == NULL) {
            fname = argv[i];
        } else {
            fprintf(stderr, "error: more than one file given ('%s')\n", argv[i]);
            usage(stderr, argv[0]);
            return 1;
        }
    }
    if (fname == NULL) {
        usage(stderr, argv[0]);
        return 1;
    }

    struct ggml_context * gctx = NULL;
    struct gguf_init_params params = { .no_alloc = true, .ctx = &gctx };
    struct gguf_context * ctx = gguf_init_from_file(fname, params);
    if (!ctx) {
        return 1;
    }
    int rc = 0;
    if (json) {
        rc = print_json(ctx, gctx, fname);
    } else {
        print_text(ctx, gctx, fname);
    }
    gguf_free(ctx);
    ggml_free(gctx);
    if (fflush(stdout) != 0) {
        rc = 1;
    }
    return rc;
}
