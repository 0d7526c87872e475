// libFuzzer target for llama-server's request-body handling (tools/server/server-json.c, server-errors.c):
// the input is a request body. It is parsed as the server parses it (sj_parse_object), every completion field
// is read with the typed readers the request parser uses, and every outcome is turned into the response the
// server would send (a compact dump, or llama.cpp's error JSON). Checked, besides "no crash, no leak":
//   - a rejected body yields a non-empty message and an error body that parses back with code/message/type;
//   - what the server dumps is valid JSON and valid UTF-8;
//   - sj_string_lossy always yields valid UTF-8, and the input bytes unchanged when they were valid;
//   - sj_is_valid_utf8 agrees with jansson's own UTF-8 validation (an independent implementation).
//
//   ./build-fuzz/bin/fuzz-server-json -max_total_time=300 corpus/

#include "server-errors.h"
#include "server-json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

#define FUZZ_ASSERT(cond, what) do { if (!(cond)) { fprintf(stderr, "fuzz-server-json: %s\n", what); abort(); } } while (0)

// the error body the server would send for msg must parse back to {"error":{"code","message","type"}}
static void check_error_body(const char * msg, enum server_error_type type, int status_override) {
    int status = 0;
    char * body = server_error_body(msg, type, status_override, &status);
    FUZZ_ASSERT(body != NULL, "error body is NULL");
    json_error_t jerr;
    json_t * back = json_loads(body, 0, &jerr);
    FUZZ_ASSERT(back != NULL, "error body is not JSON");
    const json_t * e = json_object_get(back, "error");
    FUZZ_ASSERT(json_is_object(e), "error body has no error object");
    FUZZ_ASSERT(json_integer_value(json_object_get(e, "code")) == status, "error code != HTTP status");
    FUZZ_ASSERT(json_is_string(json_object_get(e, "message")), "error message is not a string");
    FUZZ_ASSERT(json_is_string(json_object_get(e, "type")), "error type is not a string");
    json_decref(back);
    free(body);
}

// what the server sends back must be JSON (and UTF-8) again
static void check_dump(const json_t * v) {
    char * d = sj_dumps(v);
    FUZZ_ASSERT(d != NULL, "dump failed");
    FUZZ_ASSERT(sj_is_valid_utf8(d, strlen(d)), "dump is not UTF-8");
    json_error_t jerr;
    // strings may hold U+0000 (escaped as \u0000), which jansson reads back only when allowed
    json_t * back = json_loads(d, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    FUZZ_ASSERT(back != NULL, "dump does not parse back");
    json_decref(back);
    free(d);
}

static void check_utf8(const char * s, size_t n) {
    // jansson refuses invalid UTF-8 in json_stringn: the two validators must agree
    json_t * js = json_stringn(s, n);
    FUZZ_ASSERT((js != NULL) == sj_is_valid_utf8(s, n), "sj_is_valid_utf8 disagrees with jansson");
    json_decref(js);

    json_t * lossy = sj_string_lossy(s, n);
    FUZZ_ASSERT(lossy != NULL, "lossy string is NULL");
    const char * v = json_string_value(lossy);
    const size_t vn = json_string_length(lossy);
    FUZZ_ASSERT(sj_is_valid_utf8(v, vn), "lossy string is not UTF-8");
    if (sj_is_valid_utf8(s, n)) {
        FUZZ_ASSERT(vn == n && memcmp(v, s, n) == 0, "lossy changed valid UTF-8");
    }
    check_dump(lossy);
    json_decref(lossy);
}

// the completion fields as the server reads them (read_slot_params and the route handlers)
static const char * k_int_keys[]   = { "n_predict", "max_tokens", "max_completion_tokens", "top_k", "n_probs",
                                       "repeat_last_n", "min_keep", "seed", "id_slot", "n_keep", "mirostat" };
static const char * k_float_keys[] = { "temperature", "top_p", "min_p", "typical_p", "repeat_penalty",
                                       "presence_penalty", "frequency_penalty", "dynatemp_range", "dynatemp_exponent" };
static const char * k_bool_keys[]  = { "stream", "ignore_eos", "cache_prompt", "return_tokens", "add_special",
                                       "with_pieces", "parse_special", "add_generation_prompt" };
static const char * k_str_keys[]   = { "prompt", "content", "model", "role" };

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void read_fields(const json_t * obj) {
    struct sj_err err;
    for (size_t i = 0; i < N_OF(k_int_keys); i++) {
        int64_t v = -1;
        err.msg[0] = '\0';
        if (!sj_get_int(obj, k_int_keys[i], &v, &err)) {
            FUZZ_ASSERT(err.msg[0] != '\0', "int reader failed without a message");
            check_error_body(err.msg, ERROR_TYPE_INVALID_REQUEST, 0);
        }
    }
    for (size_t i = 0; i < N_OF(k_float_keys); i++) {
        double v = 0.0;
        err.msg[0] = '\0';
        if (!sj_get_float(obj, k_float_keys[i], &v, &err)) {
            FUZZ_ASSERT(err.msg[0] != '\0', "float reader failed without a message");
            check_error_body(err.msg, ERROR_TYPE_INVALID_REQUEST, 0);
        }
    }
    for (size_t i = 0; i < N_OF(k_bool_keys); i++) {
        bool v = false;
        err.msg[0] = '\0';
        if (!sj_get_bool(obj, k_bool_keys[i], &v, &err)) {
            FUZZ_ASSERT(err.msg[0] != '\0', "bool reader failed without a message");
            check_error_body(err.msg, ERROR_TYPE_INVALID_REQUEST, 0);
        }
    }
    for (size_t i = 0; i < N_OF(k_str_keys); i++) {
        const char * s = NULL;
        size_t n = 0;
        err.msg[0] = '\0';
        if (sj_get_str(obj, k_str_keys[i], &s, &n, &err)) {
            if (s) {
                FUZZ_ASSERT(sj_is_valid_utf8(s, n), "jansson string is not UTF-8");
            }
        } else {
            FUZZ_ASSERT(err.msg[0] != '\0', "string reader failed without a message");
            check_error_body(err.msg, ERROR_TYPE_INVALID_REQUEST, 0);
        }
    }
    // messages[] of a chat request: each element's role/content read the same way
    const json_t * msgs = json_object_get(obj, "messages");
    if (json_is_array(msgs)) {
        size_t i;
        const json_t * m;
        json_array_foreach(msgs, i, m) {
            if (i >= 64) {
                break;
            }
            const char * s = NULL;
            size_t n = 0;
            if (!sj_get_str(m, "role", &s, &n, &err) || !sj_get_str(m, "content", &s, &n, &err)) {
                check_error_body(err.msg, ERROR_TYPE_INVALID_REQUEST, 0);
            }
        }
    }
    // the types the errors name
    const char * key;
    const json_t * v;
    json_object_foreach((json_t *) obj, key, v) {
        FUZZ_ASSERT(sj_type_name(v) != NULL, "no type name");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    const char * body = (const char *) data;
    struct sj_err err;
    err.msg[0] = '\0';
    json_t * obj = sj_parse_object(body, size, &err);
    if (!obj) {
        FUZZ_ASSERT(err.msg[0] != '\0', "rejected body without a message");
        check_error_body(err.msg, ERROR_TYPE_INVALID_REQUEST, 0);
    } else {
        FUZZ_ASSERT(json_is_object(obj), "parse_object returned a non-object");
        read_fields(obj);
        check_dump(obj);
        json_decref(obj);
    }
    // the raw bytes as a message (an error echoing client input) and as a string value
    char * msg = malloc(size + 1);
    if (msg) {
        memcpy(msg, data, size);
        msg[size] = '\0';
        check_error_body(msg, (enum server_error_type) (size % 8), size % 3 == 0 ? 413 : 0);
        free(msg);
    }
    check_utf8(body, size);
    int status = 0;
    char * ec = server_error_body_exceed_context((int) size, 256, &status);
    FUZZ_ASSERT(ec != NULL && status == 400, "exceed-context body");
    free(ec);
    return 0;
}
