// Arena, error unwinding and values of the Jinja interpreter: construction, equality, truthiness, and the three
// ways a value becomes text (str, repr, JSON).
#include "jinja-impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jarena_chunk {
    struct jarena_chunk * next;
    size_t                cap;
    _Alignas(16) unsigned char data[];
};

_Noreturn void jerr(struct jenv * env, size_t pos, const char * fmt, ...) {
    char body[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof(body), fmt, ap);
    va_end(ap);
    if (env->src && pos != SIZE_MAX && pos <= env->src_len) {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < pos; i++) {
            if (env->src[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        snprintf(env->msg, sizeof(env->msg), "line %zu, column %zu: %s", line, col, body);
    } else {
        snprintf(env->msg, sizeof(env->msg), "%s", body);
    }
    longjmp(env->jmp, 1);
}

void * jalloc(struct jenv * env, size_t n) {
    n = (n + 15) & ~(size_t) 15;
    if (!env->chunks || env->cur_off + n > env->cur_cap) {
        size_t cap = n > (64u << 10) ? n : (64u << 10);
        if (env->used + cap > JINJA_MAX_ARENA) {
            jerr(env, SIZE_MAX, "template uses too much memory (over %u MiB)", JINJA_MAX_ARENA >> 20);
        }
        struct jarena_chunk * ch = malloc(sizeof(*ch) + cap);
        if (!ch) {
            jerr(env, SIZE_MAX, "out of memory");
        }
        ch->next = env->chunks;
        ch->cap = cap;
        env->chunks = ch;
        env->cur_off = 0;
        env->cur_cap = cap;
        env->used += cap;
    }
    void * p = env->chunks->data + env->cur_off;
    env->cur_off += n;
    memset(p, 0, n);
    return p;
}

char * jstrndup(struct jenv * env, const char * s, size_t n) {
    char * d = jalloc(env, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void jarena_free(struct jenv * env) {
    struct jarena_chunk * ch = env->chunks;
    while (ch) {
        struct jarena_chunk * next = ch->next;
        free(ch);
        ch = next;
    }
    env->chunks = NULL;
    env->used = env->cur_off = env->cur_cap = 0;
}

jv jv_str(struct jenv * e, const char * s) {
    size_t n = strlen(s);
    return jv_strn(jstrndup(e, s, n), n);
}

jv jv_list_new(struct jenv * e) {
    jv v;
    v.t = JV_LIST;
    v.u.list = jalloc(e, sizeof(struct jlist));
    return v;
}

jv jv_dict_new(struct jenv * e) {
    jv v;
    v.t = JV_DICT;
    v.u.dict = jalloc(e, sizeof(struct jdict));
    return v;
}

void jv_list_push(struct jenv * e, jv list, jv item) {
    struct jlist * l = list.u.list;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 4;
        jv * items = jalloc(e, nc * sizeof(jv));
        if (l->n) {
            memcpy(items, l->items, l->n * sizeof(jv));
        }
        l->items = items;
        l->cap = nc;
    }
    l->items[l->n++] = item;
}

jv * jv_dict_getv(jv dict, jv key) {
    struct jdict * d = dict.u.dict;
    for (size_t i = 0; i < d->n; i++) {
        if (jv_equal(d->keys[i], key)) {
            return &d->vals[i];
        }
    }
    return NULL;
}

jv * jv_dict_get(jv dict, const char * key, size_t n) {
    struct jdict * d = dict.u.dict;
    for (size_t i = 0; i < d->n; i++) {
        if (d->keys[i].t == JV_STR && d->keys[i].u.str.n == n && memcmp(d->keys[i].u.str.s, key, n) == 0) {
            return &d->vals[i];
        }
    }
    return NULL;
}

void jv_dict_set(struct jenv * e, jv dict, jv key, jv val) {
    jv * slot = jv_dict_getv(dict, key);
    if (slot) {
        *slot = val;
        return;
    }
    struct jdict * d = dict.u.dict;
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 4;
        jv * keys = jalloc(e, nc * sizeof(jv));
        jv * vals = jalloc(e, nc * sizeof(jv));
        if (d->n) {
            memcpy(keys, d->keys, d->n * sizeof(jv));
            memcpy(vals, d->vals, d->n * sizeof(jv));
        }
        d->keys = keys;
        d->vals = vals;
        d->cap = nc;
    }
    d->keys[d->n] = key;
    d->vals[d->n] = val;
    d->n++;
}

int jv_str_cmp(jv a, jv b) {
    const size_t n = a.u.str.n < b.u.str.n ? a.u.str.n : b.u.str.n;
    const int r = memcmp(a.u.str.s, b.u.str.s, n);
    if (r != 0) {
        return r < 0 ? -1 : 1;
    }
    return (a.u.str.n > b.u.str.n) - (a.u.str.n < b.u.str.n);
}

bool jv_truthy(jv v) {
    switch (v.t) {
        case JV_UNDEF:
        case JV_NONE:  return false;
        case JV_BOOL:  return v.u.b;
        case JV_INT:   return v.u.i != 0;
        case JV_FLOAT: return v.u.f != 0.0;
        case JV_STR:   return v.u.str.n > 0;
        case JV_LIST:  return v.u.list->n > 0;
        case JV_DICT:  return v.u.dict->n > 0;
        case JV_FUNC:  return true;
    }
    return false;
}

static bool is_num(jv v) {
    return v.t == JV_INT || v.t == JV_FLOAT || v.t == JV_BOOL;
}

static double num_val(jv v) {
    return v.t == JV_INT ? (double) v.u.i : v.t == JV_FLOAT ? v.u.f : (v.u.b ? 1.0 : 0.0);
}

static bool equal_depth(jv a, jv b, int depth);

// a value can contain itself (l.append(l)): deep walks stop at JINJA_MAX_DEPTH
bool jv_equal(jv a, jv b) {
    return equal_depth(a, b, 0);
}

static bool equal_depth(jv a, jv b, int depth) {
    if (depth > JINJA_MAX_DEPTH) {
        return false;
    }
    if (is_num(a) && is_num(b)) {
        if (a.t == JV_INT && b.t == JV_INT) {
            return a.u.i == b.u.i;
        }
        if (a.t == JV_BOOL && b.t == JV_BOOL) {
            return a.u.b == b.u.b;
        }
        return num_val(a) == num_val(b);
    }
    if (a.t != b.t) {
        return false;
    }
    switch (a.t) {
        case JV_UNDEF:
        case JV_NONE:  return true;
        case JV_STR:   return a.u.str.n == b.u.str.n && memcmp(a.u.str.s, b.u.str.s, a.u.str.n) == 0;
        case JV_LIST:
            if (a.u.list->n != b.u.list->n) {
                return false;
            }
            for (size_t i = 0; i < a.u.list->n; i++) {
                if (!equal_depth(a.u.list->items[i], b.u.list->items[i], depth + 1)) {
                    return false;
                }
            }
            return true;
        case JV_DICT:
            if (a.u.dict->n != b.u.dict->n) {
                return false;
            }
            for (size_t i = 0; i < a.u.dict->n; i++) {
                jv * o = jv_dict_getv(b, a.u.dict->keys[i]);
                if (!o || !equal_depth(a.u.dict->vals[i], *o, depth + 1)) {
                    return false;
                }
            }
            return true;
        case JV_FUNC:  return a.u.fn == b.u.fn;
        default:       return false;
    }
}

const char * jv_type_name(jv v) {
    switch (v.t) {
        case JV_UNDEF: return "undefined";
        case JV_NONE:  return "none";
        case JV_BOOL:  return "boolean";
        case JV_INT:   return "integer";
        case JV_FLOAT: return "float";
        case JV_STR:   return "string";
        case JV_LIST:  return "list";
        case JV_DICT:  return "dict";
        case JV_FUNC:  return "function";
    }
    return "?";
}

jv jv_from_json(struct jenv * e, const json_t * j) {
    if (!j) {
        return jv_undef();
    }
    switch (json_typeof(j)) {
        case JSON_NULL:    return jv_none();
        case JSON_TRUE:    return jv_bool(true);
        case JSON_FALSE:   return jv_bool(false);
        case JSON_INTEGER: return jv_int((int64_t) json_integer_value(j));
        case JSON_REAL:    return jv_float(json_real_value(j));
        case JSON_STRING:  return jv_strn(jstrndup(e, json_string_value(j), json_string_length(j)), json_string_length(j));
        case JSON_ARRAY: {
            jv l = jv_list_new(e);
            size_t i;
            const json_t * x;
            json_array_foreach(j, i, x) {
                jv_list_push(e, l, jv_from_json(e, x));
            }
            return l;
        }
        case JSON_OBJECT: {
            jv d = jv_dict_new(e);
            const char * k;
            const json_t * x;
            json_object_foreach((json_t *) j, k, x) {
                jv_dict_set(e, d, jv_str(e, k), jv_from_json(e, x));
            }
            return d;
        }
    }
    return jv_undef();
}

// ---- text buffers ----------------------------------------------------------------------------------------

void jbuf_put(struct jenv * e, struct jbuf * b, const char * s, size_t n) {
    if (n == 0) {
        return;
    }
    size_t limit = b->limit ? b->limit : JINJA_MAX_OUTPUT;
    if (b->n + n > limit) {
        jerr(e, SIZE_MAX, "rendered text exceeds %zu bytes", limit);
    }
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->n + n + 1) {
            nc *= 2;
        }
        char * s2 = jalloc(e, nc);
        if (b->n) {
            memcpy(s2, b->s, b->n);
        }
        b->s = s2;
        b->cap = nc;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

void jbuf_putc(struct jenv * e, struct jbuf * b, char ch) {
    jbuf_put(e, b, &ch, 1);
}

void jbuf_printf(struct jenv * e, struct jbuf * b, const char * fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0) {
        jbuf_put(e, b, tmp, (size_t) n < sizeof(tmp) ? (size_t) n : sizeof(tmp) - 1);
    }
}

// Python's float repr: the shortest text that reads back as the same double, with ".0" on integral values
static void write_float(struct jenv * e, struct jbuf * b, double f) {
    if (isnan(f)) {
        jbuf_put(e, b, "nan", 3);
        return;
    }
    if (isinf(f)) {
        jbuf_put(e, b, f < 0 ? "-inf" : "inf", f < 0 ? 4 : 3);
        return;
    }
    char tmp[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, f);
        if (strtod(tmp, NULL) == f) {
            break;
        }
    }
    if (!strpbrk(tmp, ".eEn")) {
        strcat(tmp, ".0");
    }
    jbuf_put(e, b, tmp, strlen(tmp));
}

void jv_write_str(struct jenv * e, struct jbuf * b, jv v) {
    switch (v.t) {
        case JV_UNDEF: return;
        case JV_STR:   jbuf_put(e, b, v.u.str.s, v.u.str.n); return;
        default:       jv_write_repr(e, b, v); return;
    }
}

static void write_str_repr(struct jenv * e, struct jbuf * b, const char * s, size_t n) {
    // Python picks double quotes only when the text has a single quote and no double quote
    const bool has_sq = memchr(s, '\'', n) != NULL;
    const bool has_dq = memchr(s, '"', n) != NULL;
    const char q = has_sq && !has_dq ? '"' : '\'';
    jbuf_putc(e, b, q);
    for (size_t i = 0; i < n; i++) {
        const unsigned char ch = (unsigned char) s[i];
        if (ch == (unsigned char) q || ch == '\\') {
            jbuf_putc(e, b, '\\');
            jbuf_putc(e, b, (char) ch);
        } else if (ch == '\n') {
            jbuf_put(e, b, "\\n", 2);
        } else if (ch == '\t') {
            jbuf_put(e, b, "\\t", 2);
        } else if (ch == '\r') {
            jbuf_put(e, b, "\\r", 2);
        } else if (ch < 0x20 || ch == 0x7f) {
            jbuf_printf(e, b, "\\x%02x", ch);
        } else {
            jbuf_putc(e, b, (char) ch);
        }
    }
    jbuf_putc(e, b, q);
}

static void write_repr(struct jenv * e, struct jbuf * b, jv v, int depth);

void jv_write_repr(struct jenv * e, struct jbuf * b, jv v) {
    write_repr(e, b, v, 0);
}

static void write_repr(struct jenv * e, struct jbuf * b, jv v, int depth) {
    if (depth > JINJA_MAX_DEPTH) {
        jerr(e, SIZE_MAX, "value nested too deeply to print");
    }
    switch (v.t) {
        case JV_UNDEF: return;
        case JV_NONE:  jbuf_put(e, b, "None", 4); return;
        case JV_BOOL:  if (v.u.b) jbuf_put(e, b, "True", 4); else jbuf_put(e, b, "False", 5); return;
        case JV_INT:   jbuf_printf(e, b, "%lld", (long long) v.u.i); return;
        case JV_FLOAT: write_float(e, b, v.u.f); return;
        case JV_STR:   write_str_repr(e, b, v.u.str.s, v.u.str.n); return;
        case JV_LIST:
            jbuf_putc(e, b, '[');
            for (size_t i = 0; i < v.u.list->n; i++) {
                if (i) {
                    jbuf_put(e, b, ", ", 2);
                }
                write_repr(e, b, v.u.list->items[i], depth + 1);
            }
            jbuf_putc(e, b, ']');
            return;
        case JV_DICT:
            jbuf_putc(e, b, '{');
            for (size_t i = 0; i < v.u.dict->n; i++) {
                if (i) {
                    jbuf_put(e, b, ", ", 2);
                }
                write_repr(e, b, v.u.dict->keys[i], depth + 1);
                jbuf_put(e, b, ": ", 2);
                write_repr(e, b, v.u.dict->vals[i], depth + 1);
            }
            jbuf_putc(e, b, '}');
            return;
        case JV_FUNC:  jbuf_printf(e, b, "<function %s>", v.u.fn->name ? v.u.fn->name : "?"); return;
    }
}

static void write_json_string(struct jenv * e, struct jbuf * b, const char * s, size_t n, bool ensure_ascii) {
    jbuf_putc(e, b, '"');
    for (size_t i = 0; i < n; i++) {
        const unsigned char ch = (unsigned char) s[i];
        switch (ch) {
            case '"':  jbuf_put(e, b, "\\\"", 2); break;
            case '\\': jbuf_put(e, b, "\\\\", 2); break;
            case '\n': jbuf_put(e, b, "\\n", 2); break;
            case '\r': jbuf_put(e, b, "\\r", 2); break;
            case '\t': jbuf_put(e, b, "\\t", 2); break;
            case '\b': jbuf_put(e, b, "\\b", 2); break;
            case '\f': jbuf_put(e, b, "\\f", 2); break;
            default:
                if (ch < 0x20) {
                    jbuf_printf(e, b, "\\u%04x", ch);
                } else if (ch >= 0x80 && ensure_ascii) {
                    // decode one UTF-8 sequence; \uXXXX (a surrogate pair above U+FFFF) as Python writes it
                    unsigned cp = 0;
                    size_t len = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : ch >= 0xC0 ? 2 : 1;
                    if (len == 1 || i + len > n) {
                        jbuf_printf(e, b, "\\u%04x", 0xFFFDu);
                        break;
                    }
                    cp = ch & (0x3Fu >> (len - 1));
                    for (size_t k = 1; k < len; k++) {
                        cp = (cp << 6) | ((unsigned char) s[i + k] & 0x3Fu);
                    }
                    i += len - 1;
                    if (cp >= 0x10000) {
                        cp -= 0x10000;
                        jbuf_printf(e, b, "\\u%04x\\u%04x", 0xD800u + (cp >> 10), 0xDC00u + (cp & 0x3FFu));
                    } else {
                        jbuf_printf(e, b, "\\u%04x", cp);
                    }
                } else {
                    jbuf_putc(e, b, (char) ch);
                }
        }
    }
    jbuf_putc(e, b, '"');
}

static void json_newline(struct jenv * e, struct jbuf * b, int indent, int level) {
    jbuf_putc(e, b, '\n');
    for (int i = 0; i < indent * level; i++) {
        jbuf_putc(e, b, ' ');
    }
}

void jv_write_json(struct jenv * e, struct jbuf * b, jv v, const struct jjson_opts * o, int level) {
    if (level > JINJA_MAX_DEPTH) {
        jerr(e, SIZE_MAX, "tojson: value nested too deeply");
    }
    switch (v.t) {
        case JV_UNDEF:
        case JV_NONE:  jbuf_put(e, b, "null", 4); return;
        case JV_BOOL:  if (v.u.b) jbuf_put(e, b, "true", 4); else jbuf_put(e, b, "false", 5); return;
        case JV_INT:   jbuf_printf(e, b, "%lld", (long long) v.u.i); return;
        case JV_FLOAT:
            if (isnan(v.u.f) || isinf(v.u.f)) {
                jbuf_put(e, b, isnan(v.u.f) ? "NaN" : v.u.f < 0 ? "-Infinity" : "Infinity",
                         isnan(v.u.f) ? 3 : v.u.f < 0 ? 9 : 8);
            } else {
                write_float(e, b, v.u.f);
            }
            return;
        case JV_STR:   write_json_string(e, b, v.u.str.s, v.u.str.n, o->ensure_ascii); return;
        case JV_LIST:
        case JV_DICT: {
            const bool is_list = v.t == JV_LIST;
            const size_t n = is_list ? v.u.list->n : v.u.dict->n;
            const char * item_sep = o->item_sep ? o->item_sep : o->indent >= 0 ? "," : ", ";
            const char * key_sep = o->key_sep ? o->key_sep : ": ";
            // key order: as stored, or sorted (an index permutation; keys that are not strings print as strings)
            size_t * order = NULL;
            if (!is_list && o->sort_keys && n > 1) {
                order = jalloc(e, n * sizeof(size_t));
                for (size_t i = 0; i < n; i++) {
                    order[i] = i;
                    for (size_t j = i; j > 0; j--) {
                        jv ka = v.u.dict->keys[order[j - 1]], kb = v.u.dict->keys[order[j]];
                        if (ka.t != JV_STR || kb.t != JV_STR || jv_str_cmp(ka, kb) <= 0) {
                            break;
                        }
                        size_t t = order[j];
                        order[j] = order[j - 1];
                        order[j - 1] = t;
                    }
                }
            }
            jbuf_putc(e, b, is_list ? '[' : '{');
            for (size_t i = 0; i < n; i++) {
                if (i) {
                    jbuf_put(e, b, item_sep, strlen(item_sep));
                }
                if (o->indent >= 0) {
                    json_newline(e, b, o->indent, level + 1);
                }
                if (is_list) {
                    jv_write_json(e, b, v.u.list->items[i], o, level + 1);
                } else {
                    const size_t k = order ? order[i] : i;
                    jv key = v.u.dict->keys[k];
                    if (key.t == JV_STR) {
                        write_json_string(e, b, key.u.str.s, key.u.str.n, o->ensure_ascii);
                    } else {
                        struct jbuf kb = { 0 };
                        jv_write_str(e, &kb, key);
                        write_json_string(e, b, kb.s ? kb.s : "", kb.n, o->ensure_ascii);
                    }
                    jbuf_put(e, b, key_sep, strlen(key_sep));
                    jv_write_json(e, b, v.u.dict->vals[k], o, level + 1);
                }
            }
            if (o->indent >= 0 && n > 0) {
                json_newline(e, b, o->indent, level);
            }
            jbuf_putc(e, b, is_list ? ']' : '}');
            return;
        }
        case JV_FUNC:  jerr(e, SIZE_MAX, "tojson: a function is not JSON serializable");
    }
}

jv jv_to_string(struct jenv * e, jv v) {
    if (v.t == JV_STR) {
        return v;
    }
    struct jbuf b = { 0 };
    jv_write_str(e, &b, v);
    return jbuf_value(&b);
}
