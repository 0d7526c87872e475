#include "server-json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char * sj_dumps(const json_t * value) {
    return json_dumps(value, JSON_COMPACT | JSON_REAL_PRECISION(9) | JSON_ENCODE_ANY);
}

// length of the valid UTF-8 sequence at s[0..n), 0 when invalid
static size_t utf8_seq_len(const unsigned char * s, size_t n) {
    const unsigned char c = s[0];
    if (c < 0x80) {
        return 1;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2; cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3; cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4; cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return len;
}

bool sj_is_valid_utf8(const char * data, size_t len) {
    const unsigned char * s = (const unsigned char *) data;
    size_t i = 0;
    while (i < len) {
        const size_t l = utf8_seq_len(s + i, len - i);
        if (l == 0) {
            return false;
        }
        i += l;
    }
    return true;
}

json_t * sj_string_lossy(const char * data, size_t len) {
    if (!data) {
        return json_string("");
    }
    // embedded NULs are legal in JSON strings; jansson's stringn keeps them
    if (sj_is_valid_utf8(data, len)) {
        return json_stringn(data, len);
    }
    // each bad byte becomes the 3-byte U+FFFD
    if (len > (SIZE_MAX - 1) / 3) {
        return NULL;
    }
    char * buf = malloc(len * 3 + 1);
    if (!buf) {
        return NULL;
    }
    const unsigned char * s = (const unsigned char *) data;
    size_t i = 0, o = 0;
    while (i < len) {
        const size_t l = utf8_seq_len(s + i, len - i);
        if (l == 0) {
            buf[o++] = (char) 0xEF; buf[o++] = (char) 0xBF; buf[o++] = (char) 0xBD;
            i++;
        } else {
            memcpy(buf + o, s + i, l);
            o += l;
            i += l;
        }
    }
    json_t * out = json_stringn(buf, o);
    free(buf);
    return out;
}

json_t * sj_parse_object(const char * body, size_t len, struct sj_err * err) {
    json_error_t jerr;
    json_t * root = json_loadb(body ? body : "", body ? len : 0, 0, &jerr);
    if (!root) {
        snprintf(err->msg, sizeof(err->msg), "invalid JSON in request body: %s (line %d, column %d)",
                 jerr.text, jerr.line, jerr.column);
        return NULL;
    }
    if (!json_is_object(root)) {
        snprintf(err->msg, sizeof(err->msg), "request body must be a JSON object, got %s", sj_type_name(root));
        json_decref(root);
        return NULL;
    }
    return root;
}

const char * sj_type_name(const json_t * v) {
    switch (json_typeof(v)) {
        case JSON_OBJECT:  return "object";
        case JSON_ARRAY:   return "array";
        case JSON_STRING:  return "string";
        case JSON_INTEGER: return "integer";
        case JSON_REAL:    return "number";
        case JSON_TRUE:
        case JSON_FALSE:   return "boolean";
        case JSON_NULL:    return "null";
    }
    return "unknown";
}

static const json_t * field(const json_t * obj, const char * key) {
    const json_t * v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return (v && !json_is_null(v)) ? v : NULL;
}

static bool type_error(struct sj_err * err, const char * key, const char * expected, const json_t * got) {
    snprintf(err->msg, sizeof(err->msg), "\"%s\" must be %s, got %s", key, expected, sj_type_name(got));
    return false;
}

bool sj_get_bool(const json_t * obj, const char * key, bool * out, struct sj_err * err) {
    const json_t * v = field(obj, key);
    if (!v) {
        return true;
    }
    if (!json_is_boolean(v)) {
        return type_error(err, key, "a boolean", v);
    }
    *out = json_is_true(v);
    return true;
}

bool sj_get_int(const json_t * obj, const char * key, int64_t * out, struct sj_err * err) {
    const json_t * v = field(obj, key);
    if (!v) {
        return true;
    }
    if (json_is_integer(v)) {
        *out = (int64_t) json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        const double d = json_real_value(v);
        // exactly representable in int64: |d| < 2^63
        if (isfinite(d) && floor(d) == d && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18) {
            *out = (int64_t) d;
            return true;
        }
    }
    return type_error(err, key, "an integer", v);
}

bool sj_get_float(const json_t * obj, const char * key, double * out, struct sj_err * err) {
    const json_t * v = field(obj, key);
    if (!v) {
        return true;
    }
    if (!json_is_number(v)) {
        return type_error(err, key, "a number", v);
    }
    *out = json_number_value(v);
    return true;
}

bool sj_get_str(const json_t * obj, const char * key, const char ** out, size_t * len, struct sj_err * err) {
    const json_t * v = field(obj, key);
    if (!v) {
        return true;
    }
    if (!json_is_string(v)) {
        return type_error(err, key, "a string", v);
    }
    *out = json_string_value(v);
    if (len) {
        *len = json_string_length(v);
    }
    return true;
}
