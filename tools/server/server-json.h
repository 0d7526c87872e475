// jansson helpers for the server: compact dumps with 9 significant digits for floats, strings from arbitrary
// bytes, and typed field readers that report wrong types instead of guessing.
#pragma once

#include <jansson.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// what went wrong with a request body, ready to be the "message" of a 400
struct sj_err {
    char msg[256];
};

// compact JSON, floats with JSON_REAL_PRECISION(9), UTF-8 unescaped; malloc'd, NULL when out of memory
char * sj_dumps(const json_t * value);

// a JSON string from bytes that may hold invalid UTF-8: bad sequences become U+FFFD (as llama.cpp's
// dump with error_handler_t::replace does); never NULL unless out of memory
json_t * sj_string_lossy(const char * data, size_t len);

// true when data[0..len) is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF)
bool sj_is_valid_utf8(const char * data, size_t len);

// parse a request body that must be a JSON object; NULL with err filled otherwise
json_t * sj_parse_object(const char * body, size_t len, struct sj_err * err);

// Typed readers. A missing key or null keeps *out and returns true; a value of another type returns false
// with err naming the field and the expected type. Numbers: integers only for _int (a real with no
// fractional part is accepted, as JSON clients often send 5.0); _float accepts integers too.
bool sj_get_bool (const json_t * obj, const char * key, bool    * out, struct sj_err * err);
bool sj_get_int  (const json_t * obj, const char * key, int64_t * out, struct sj_err * err);
bool sj_get_float(const json_t * obj, const char * key, double  * out, struct sj_err * err);
// *out points into obj (valid while obj lives)
bool sj_get_str  (const json_t * obj, const char * key, const char ** out, size_t * len, struct sj_err * err);

// the type name a client would understand ("string", "array", ...)
const char * sj_type_name(const json_t * value);
