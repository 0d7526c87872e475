// Helpers of the JSON schema -> GBNF converter (see json-schema-to-grammar-impl.h): the strings owned by one
// conversion, error and warning collection, JSON text written as nlohmann::json::dump() writes it, and GBNF string
// literals (gbnf_format_literal).
#include "json-schema-to-grammar.h"
#include "json-schema-to-grammar-impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSG_DUMP_MAX  200       // bytes of a schema quoted in an error message

//
// the conversion's string arena, errors
//

bool jsg_grow(struct jsg * c, void ** arr, size_t * cap, size_t n, size_t elem) {
    if (n < *cap) {
        return true;
    }
    const size_t nc = *cap ? *cap * 2 : 16;
    void * na = realloc(*arr, nc * elem);
    if (!na) {
        c->oom = true;
        return false;
    }
    *arr = na;
    *cap = nc;
    return true;
}

// takes ownership of s (NULL = allocation failed); returns s, or "" when out of memory
static const char * own(struct jsg * c, char * s) {
    if (!s) {
        c->oom = true;
        return "";
    }
    if (!jsg_grow(c, (void **) &c->owned, &c->cap_owned, c->n_owned, sizeof(void *))) {
        free(s);
        return "";
    }
    c->owned[c->n_owned++] = s;
    return s;
}

const char * jsg_sb_own(struct jsg * c, struct common_sb * b) {
    if (b->oom) {
        free(b->s);
        c->oom = true;
        return "";
    }
    if (!b->s) {
        return "";
    }
    return own(c, b->s);
}

// concatenation of NULL-terminated string arguments
const char * jsg_cat(struct jsg * c, const char * first, ...) {
    struct common_sb b = { 0 };
    va_list ap;
    va_start(ap, first);
    for (const char * s = first; s; s = va_arg(ap, const char *)) {
        common_sb_add(&b, s);
    }
    va_end(ap);
    return jsg_sb_own(c, &b);
}
#define JSG_CAT(c, ...) jsg_cat((c), __VA_ARGS__, (const char *) NULL)

const char * jsg_int_str(struct jsg * c, long long v) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", v);
    return JSG_CAT(c, buf);
}

const char * jsg_sep_name(struct jsg * c, const char * name, const char * suffix) {
    // llama.cpp's name + (name.empty() ? "" : "-") + suffix
    return *name ? JSG_CAT(c, name, "-", suffix) : JSG_CAT(c, suffix);
}

void jsg_add_error(struct jsg * c, const char * fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (c->errors.n > 0) {
        common_sb_addc(&c->errors, '\n');
    }
    common_sb_add(&c->errors, buf);
}

void jsg_add_warning(struct jsg * c, const char * msg) {
    if (c->warnings.n > 0) {
        common_sb_add(&c->warnings, "; ");
    }
    common_sb_add(&c->warnings, msg);
}

//
// JSON text as nlohmann::json::dump() writes it (compact, UTF-8 kept, control characters as \u00xx):
// constants and property names appear in the grammar in this form
//

// shortest decimal digits that read back as v, formatted as nlohmann does (fixed notation for decimal
// exponents in (-4, 15], always with a fraction part, else d.ddde+XX)
static void dump_real(struct common_sb * b, double v) {
    if (!isfinite(v)) {
        common_sb_add(b, "null"); // what nlohmann writes for NaN / infinity
        return;
    }
    if (v == 0.0) {
        common_sb_add(b, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char e_buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e_buf, sizeof(e_buf), "%.*e", prec - 1, v);
        if (strtod(e_buf, NULL) == v) {
            break;
        }
    }
    // e_buf: [-]d[.ddd]e[+-]XX -> digits and decimal exponent
    const char * p = e_buf;
    if (*p == '-') {
        common_sb_addc(b, '-');
        p++;
    }
    char digits[24];
    int k = 0;
    for (; *p && *p != 'e'; p++) {
        if (*p >= '0' && *p <= '9' && k < (int) sizeof(digits) - 1) {
            digits[k++] = *p;
        }
    }
    while (k > 1 && digits[k - 1] == '0') {
        k--;
    }
    digits[k] = '\0';
    const int exp10 = *p == 'e' ? atoi(p + 1) : 0;
    const int n = exp10 + 1; // value = 0.digits * 10^n
    if (k <= n && n <= 15) {
        common_sb_addn(b, digits, (size_t) k);
        for (int i = k; i < n; i++) {
            common_sb_addc(b, '0');
        }
        common_sb_add(b, ".0");
    } else if (0 < n && n <= 15) {
        common_sb_addn(b, digits, (size_t) n);
        common_sb_addc(b, '.');
        common_sb_add(b, digits + n);
    } else if (-4 < n && n <= 0) {
        common_sb_add(b, "0.");
        for (int i = n; i < 0; i++) {
            common_sb_addc(b, '0');
        }
        common_sb_add(b, digits);
    } else {
        common_sb_addc(b, digits[0]);
        if (k > 1) {
            common_sb_addc(b, '.');
            common_sb_add(b, digits + 1);
        }
        const int e = n - 1;
        common_sb_addf(b, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
}

void jsg_dump_string(struct common_sb * b, const char * s, size_t n) {
    common_sb_addc(b, '"');
    for (size_t i = 0; i < n; i++) {
        const unsigned char ch = (unsigned char) s[i];
        switch (ch) {
            case '"':  common_sb_add(b, "\\\""); break;
            case '\\': common_sb_add(b, "\\\\"); break;
            case '\b': common_sb_add(b, "\\b");  break;
            case '\f': common_sb_add(b, "\\f");  break;
            case '\n': common_sb_add(b, "\\n");  break;
            case '\r': common_sb_add(b, "\\r");  break;
            case '\t': common_sb_add(b, "\\t");  break;
            default:
                if (ch < 0x20) {
                    common_sb_addf(b, "\\u%04x", ch);
                } else {
                    common_sb_addc(b, (char) ch);
                }
        }
    }
    common_sb_addc(b, '"');
}

static void dump_json(struct common_sb * b, const json_t * v, int depth) {
    if (depth > JSG_MAX_DEPTH) {
        b->oom = true;
        return;
    }
    switch (json_typeof(v)) {
        case JSON_NULL:    common_sb_add(b, "null");  break;
        case JSON_TRUE:    common_sb_add(b, "true");  break;
        case JSON_FALSE:   common_sb_add(b, "false"); break;
        case JSON_INTEGER: common_sb_addf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
        case JSON_REAL:    dump_real(b, json_real_value(v)); break;
        case JSON_STRING:  jsg_dump_string(b, json_string_value(v), json_string_length(v)); break;
        case JSON_ARRAY: {
            common_sb_addc(b, '[');
            size_t i;
            const json_t * el;
            json_array_foreach(v, i, el) {
                if (i > 0) {
                    common_sb_addc(b, ',');
                }
                dump_json(b, el, depth + 1);
            }
            common_sb_addc(b, ']');
            break;
        }
        case JSON_OBJECT: {
            common_sb_addc(b, '{');
            bool first = true;
            const char * k;
            const json_t * el;
            json_object_foreach((json_t *) v, k, el) {
                if (!first) {
                    common_sb_addc(b, ',');
                }
                first = false;
                jsg_dump_string(b, k, strlen(k));
                common_sb_addc(b, ':');
                dump_json(b, el, depth + 1);
            }
            common_sb_addc(b, '}');
            break;
        }
    }
}

static const char * dump(struct jsg * c, const json_t * v) {
    struct common_sb b = { 0 };
    dump_json(&b, v, 0);
    return jsg_sb_own(c, &b);
}

// a schema quoted in an error message, cut short
const char * jsg_dump_short(struct jsg * c, const json_t * v) {
    const char * s = dump(c, v);
    if (strlen(s) <= JSG_DUMP_MAX) {
        return s;
    }
    char buf[JSG_DUMP_MAX + 4];
    memcpy(buf, s, JSG_DUMP_MAX);
    memcpy(buf + JSG_DUMP_MAX, "...", 4);
    return JSG_CAT(c, buf);
}

static void format_literal_into(struct common_sb * b, const char * s) {
    common_sb_addc(b, '"');
    for (; *s; s++) {
        switch (*s) {
            case '\r': common_sb_add(b, "\\r");  break;
            case '\n': common_sb_add(b, "\\n");  break;
            case '"':  common_sb_add(b, "\\\""); break;
            case '\\': common_sb_add(b, "\\\\"); break;
            default:   common_sb_addc(b, *s);
        }
    }
    common_sb_addc(b, '"');
}

char * gbnf_format_literal(const char * literal) {
    struct common_sb b = { 0 };
    format_literal_into(&b, literal ? literal : "");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

const char * jsg_format_literal(struct jsg * c, const char * s) {
    struct common_sb b = { 0 };
    format_literal_into(&b, s);
    return jsg_sb_own(c, &b);
}

const char * jsg_constant_rule(struct jsg * c, const json_t * v) {
    return jsg_format_literal(c, dump(c, v));
}

//
// schema lookup, string lists
//

const json_t * jsg_get(const json_t * schema, const char * key) {
    return json_is_object(schema) ? json_object_get(schema, key) : NULL;
}

void jsg_strs_push(struct jsg * c, struct jsg_strs * s, const char * str) {
    if (jsg_grow(c, (void **) &s->v, &s->cap, s->n, sizeof(*s->v))) {
        s->v[s->n++] = str;
    }
}
