// Attribute access and the Python-style methods templates call on strings, dicts and lists (str.strip(),
// dict.items(), list.append(), ...), plus the global functions (range, namespace, raise_exception, strftime_now,
// dict).
#define _POSIX_C_SOURCE 200809L // localtime_r

#include "jinja-impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char * need_str(struct jctx * c, jv v, const char * what, size_t pos, size_t * n) {
    if (v.t != JV_STR) {
        jerr(c->e, pos, "%s expects a string, got %s", what, jv_type_name(v));
    }
    *n = v.u.str.n;
    return v.u.str.s;
}

static bool in_set(char ch, const char * set, size_t n) {
    if (!set) {
        return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
    }
    return memchr(set, ch, n) != NULL;
}

// Python str.strip/lstrip/rstrip (chars: NULL = whitespace)
jv jinja_strip(jv s, const char * chars, size_t nchars, bool left, bool right) {
    size_t b = 0, e = s.u.str.n;
    while (left && b < e && in_set(s.u.str.s[b], chars, nchars)) {
        b++;
    }
    while (right && e > b && in_set(s.u.str.s[e - 1], chars, nchars)) {
        e--;
    }
    return jv_strn(s.u.str.s + b, e - b);
}

static jv strip_common(struct jctx * c, jv self, struct jargs * a, size_t pos, bool l, bool r) {
    jv chars = jarg(a, 0, "chars");
    if (chars.t == JV_STR) {
        return jinja_strip(self, chars.u.str.s, chars.u.str.n, l, r);
    }
    (void) c;
    (void) pos;
    return jinja_strip(self, NULL, 0, l, r);
}
static jv m_strip(struct jctx * c, jv s, struct jargs * a, size_t pos) { return strip_common(c, s, a, pos, true, true); }
static jv m_lstrip(struct jctx * c, jv s, struct jargs * a, size_t pos) { return strip_common(c, s, a, pos, true, false); }
static jv m_rstrip(struct jctx * c, jv s, struct jargs * a, size_t pos) { return strip_common(c, s, a, pos, false, true); }

jv jinja_case(struct jctx * c, jv s, int mode) {
    // mode 0 upper, 1 lower, 2 capitalize, 3 title (ASCII letters; other bytes are kept)
    char * d = jstrndup(c->e, s.u.str.s, s.u.str.n);
    bool word_start = true;
    for (size_t i = 0; i < s.u.str.n; i++) {
        unsigned char ch = (unsigned char) d[i];
        switch (mode) {
            case 0: d[i] = (char) toupper(ch); break;
            case 1: d[i] = (char) tolower(ch); break;
            case 2: d[i] = (char) (i == 0 ? toupper(ch) : tolower(ch)); break;
            default:
                d[i] = (char) (word_start ? toupper(ch) : tolower(ch));
                word_start = !isalnum(ch) && ch < 0x80;
                break;
        }
    }
    return jv_strn(d, s.u.str.n);
}
static jv m_upper(struct jctx * c, jv s, struct jargs * a, size_t pos) { (void) a; (void) pos; return jinja_case(c, s, 0); }
static jv m_lower(struct jctx * c, jv s, struct jargs * a, size_t pos) { (void) a; (void) pos; return jinja_case(c, s, 1); }
static jv m_capitalize(struct jctx * c, jv s, struct jargs * a, size_t pos) { (void) a; (void) pos; return jinja_case(c, s, 2); }
static jv m_title(struct jctx * c, jv s, struct jargs * a, size_t pos) { (void) a; (void) pos; return jinja_case(c, s, 3); }

static bool has_affix(jv s, jv x, bool prefix) {
    if (x.t != JV_STR || x.u.str.n > s.u.str.n) {
        return false;
    }
    const char * at = prefix ? s.u.str.s : s.u.str.s + s.u.str.n - x.u.str.n;
    return memcmp(at, x.u.str.s, x.u.str.n) == 0;
}

static jv affix(struct jctx * c, jv s, struct jargs * a, size_t pos, bool prefix) {
    jv x = jarg(a, 0, NULL);
    if (x.t == JV_LIST) {
        for (size_t i = 0; i < x.u.list->n; i++) {
            if (has_affix(s, x.u.list->items[i], prefix)) {
                return jv_bool(true);
            }
        }
        return jv_bool(false);
    }
    if (x.t != JV_STR) {
        jerr(c->e, pos, "%s expects a string, got %s", prefix ? "startswith" : "endswith", jv_type_name(x));
    }
    return jv_bool(has_affix(s, x, prefix));
}
static jv m_startswith(struct jctx * c, jv s, struct jargs * a, size_t pos) { return affix(c, s, a, pos, true); }
static jv m_endswith(struct jctx * c, jv s, struct jargs * a, size_t pos) { return affix(c, s, a, pos, false); }

static jv m_removeprefix(struct jctx * c, jv s, struct jargs * a, size_t pos) {
    jv x = jarg(a, 0, NULL);
    (void) c; (void) pos;
    return has_affix(s, x, true) ? jv_strn(s.u.str.s + x.u.str.n, s.u.str.n - x.u.str.n) : s;
}
static jv m_removesuffix(struct jctx * c, jv s, struct jargs * a, size_t pos) {
    jv x = jarg(a, 0, NULL);
    (void) c; (void) pos;
    return has_affix(s, x, false) ? jv_strn(s.u.str.s, s.u.str.n - x.u.str.n) : s;
}

const char * jinja_find(const char * h, size_t hn, const char * n, size_t nn) {
    if (nn == 0) {
        return h;
    }
    for (size_t i = 0; i + nn <= hn; i++) {
        if (memcmp(h + i, n, nn) == 0) {
            return h + i;
        }
    }
    return NULL;
}

// Python str.split(sep=None, maxsplit=-1)
static jv m_split(struct jctx * c, jv s, struct jargs * a, size_t pos) {
    jv sep = jarg(a, 0, "sep");
    jv maxv = jarg(a, 1, "maxsplit");
    int64_t maxsplit = maxv.t == JV_INT ? maxv.u.i : -1;
    jv out = jv_list_new(c->e);
    const char * p = s.u.str.s, * end = s.u.str.s + s.u.str.n;
    if (sep.t == JV_UNDEF || sep.t == JV_NONE) {
        while (p < end) {
            while (p < end && in_set(*p, NULL, 0)) {
                p++;
            }
            if (p == end) {
                break;
            }
            const char * q = p;
            if (maxsplit == 0) {
                q = end;
                while (q > p && in_set(q[-1], NULL, 0)) {
                    q--;
                }
            } else {
                while (q < end && !in_set(*q, NULL, 0)) {
                    q++;
                }
            }
            jv_list_push(c->e, out, jv_strn(p, (size_t) (q - p)));
            if (maxsplit > 0) {
                maxsplit--;
            }
            p = q;
            if (maxsplit == 0 && q != end) {
                // rest, with leading whitespace dropped
                while (p < end && in_set(*p, NULL, 0)) {
                    p++;
                }
                if (p < end) {
                    const char * r = end;
                    while (r > p && in_set(r[-1], NULL, 0)) {
                        r--;
                    }
                    jv_list_push(c->e, out, jv_strn(p, (size_t) (r - p)));
                }
                break;
            }
        }
        return out;
    }
    size_t sn;
    const char * ss = need_str(c, sep, "split", pos, &sn);
    if (sn == 0) {
        jerr(c->e, pos, "split: empty separator");
    }
    for (;;) {
        const char * q = maxsplit == 0 ? NULL : jinja_find(p, (size_t) (end - p), ss, sn);
        if (!q) {
            jv_list_push(c->e, out, jv_strn(p, (size_t) (end - p)));
            return out;
        }
        jv_list_push(c->e, out, jv_strn(p, (size_t) (q - p)));
        p = q + sn;
        if (maxsplit > 0) {
            maxsplit--;
        }
    }
}

static jv m_splitlines(struct jctx * c, jv s, struct jargs * a, size_t pos) {
    (void) a; (void) pos;
    jv out = jv_list_new(c->e);
    const char * p = s.u.str.s, * end = s.u.str.s + s.u.str.n;
    while (p < end) {
        const char * q = p;
        while (q < end && *q != '\n' && *q != '\r') {
            q++;
        }
        jv_list_push(c->e, out, jv_strn(p, (size_t) (q - p)));
        if (q < end && *q == '\r' && q + 1 < end && q[1] == '\n') {
            q++;
        }
        p = q < end ? q + 1 : q;
    }
    return out;
}

jv jinja_replace(struct jctx * c, jv s, jv old, jv new_, int64_t count, size_t pos) {
    size_t on, nn;
    const char * os = need_str(c, old, "replace", pos, &on);
    const char * ns = need_str(c, new_, "replace", pos, &nn);
    struct jbuf b = { 0 };
    const char * p = s.u.str.s, * end = s.u.str.s + s.u.str.n;
    if (on == 0) {
        // Python inserts `new` between every character
        for (size_t i = 0; i <= s.u.str.n; i++) {
            if (count < 0 || (int64_t) i < count) {
                jbuf_put(c->e, &b, ns, nn);
            }
            if (i < s.u.str.n) {
                jbuf_putc(c->e, &b, s.u.str.s[i]);
            }
        }
        return jbuf_value(&b);
    }
    while (p < end) {
        const char * q = count == 0 ? NULL : jinja_find(p, (size_t) (end - p), os, on);
        if (!q) {
            break;
        }
        jbuf_put(c->e, &b, p, (size_t) (q - p));
        jbuf_put(c->e, &b, ns, nn);
        p = q + on;
        if (count > 0) {
            count--;
        }
    }
    jbuf_put(c->e, &b, p, (size_t) (end - p));
    return jbuf_value(&b);
}

static jv m_replace(struct jctx * c, jv s, struct jargs * a, size_t pos) {
    jv cnt = jarg(a, 2, "count");
    return jinja_replace(c, s, jarg(a, 0, "old"), jarg(a, 1, "new"), cnt.t == JV_INT ? cnt.u.i : -1, pos);
}

static jv m_find(struct jctx * c, jv s, struct jargs * a, size_t pos) {
    size_t n;
    const char * x = need_str(c, jarg(a, 0, NULL), "find", pos, &n);
    const char * q = jinja_find(s.u.str.s, s.u.str.n, x, n);
    return jv_int(q ? (int64_t) (q - s.u.str.s) : -1);
}

static jv m_count(struct jctx * c, jv s, struct jargs * a, size_t pos) {
    jv x = jarg(a, 0, NULL);
    int64_t k = 0;
    if (s.t == JV_LIST) {
        for (size_t i = 0; i < s.u.list->n; i++) {
            k += jv_equal(s.u.list->items[i], x);
        }
        return jv_int(k);
    }
    size_t n;
    const char * xs = need_str(c, x, "count", pos, &n);
    if (n == 0) {
        return jv_int((int64_t) s.u.str.n + 1);
    }
    const char * p = s.u.str.s, * end = s.u.str.s + s.u.str.n;
    const char * q;
    while ((q = jinja_find(p, (size_t) (end - p), xs, n)) != NULL) {
        k++;
        p = q + n;
    }
    return jv_int(k);
}

static jv m_join(struct jctx * c, jv s, struct jargs * a, size_t pos) {
    jv items = jinja_iter_list(c, jarg(a, 0, NULL), pos);
    struct jbuf b = { 0 };
    for (size_t i = 0; i < items.u.list->n; i++) {
        if (i) {
            jbuf_put(c->e, &b, s.u.str.s, s.u.str.n);
        }
        jv_write_str(c->e, &b, items.u.list->items[i]);
    }
    return jbuf_value(&b);
}

// str.format: {} / {0} / {name} replacement fields (no format specs)
static jv m_format(struct jctx * c, jv s, struct jargs * a, size_t pos) {
    struct jbuf b = { 0 };
    size_t auto_i = 0;
    for (size_t i = 0; i < s.u.str.n; i++) {
        char ch = s.u.str.s[i];
        if ((ch == '{' || ch == '}') && i + 1 < s.u.str.n && s.u.str.s[i + 1] == ch) {
            jbuf_putc(c->e, &b, ch);
            i++;
            continue;
        }
        if (ch != '{') {
            jbuf_putc(c->e, &b, ch);
            continue;
        }
        const char * close = memchr(s.u.str.s + i, '}', s.u.str.n - i);
        if (!close) {
            jerr(c->e, pos, "format: unmatched '{'");
        }
        const char * f = s.u.str.s + i + 1;
        size_t fn = (size_t) (close - f);
        const char * colon = memchr(f, ':', fn);
        if (colon) {
            fn = (size_t) (colon - f);
        }
        jv v;
        if (fn == 0) {
            v = jarg(a, auto_i++, NULL);
        } else if (isdigit((unsigned char) f[0])) {
            v = jarg(a, (size_t) strtoul(f, NULL, 10), NULL);
        } else {
            v = jarg(a, SIZE_MAX, jstrndup(c->e, f, fn));
        }
        jv_write_str(c->e, &b, v);
        i = (size_t) (close - s.u.str.s);
    }
    return jbuf_value(&b);
}

static jv str_pred(jv s, int kind) {
    if (s.u.str.n == 0) {
        return jv_bool(false);
    }
    bool any_cased = false;
    for (size_t i = 0; i < s.u.str.n; i++) {
        unsigned char ch = (unsigned char) s.u.str.s[i];
        switch (kind) {
            case 0: if (!isdigit(ch)) return jv_bool(false); break;
            case 1: if (!isalpha(ch)) return jv_bool(false); break;
            case 2: if (!isalnum(ch)) return jv_bool(false); break;
            case 3: if (!isspace(ch)) return jv_bool(false); break;
            case 4: if (isupper(ch)) return jv_bool(false); any_cased |= islower(ch) != 0; break;
            default: if (islower(ch)) return jv_bool(false); any_cased |= isupper(ch) != 0; break;
        }
    }
    return jv_bool(kind < 4 || any_cased);
}
static jv m_isdigit(struct jctx * c, jv s, struct jargs * a, size_t p) { (void) c; (void) a; (void) p; return str_pred(s, 0); }
static jv m_isalpha(struct jctx * c, jv s, struct jargs * a, size_t p) { (void) c; (void) a; (void) p; return str_pred(s, 1); }
static jv m_isalnum(struct jctx * c, jv s, struct jargs * a, size_t p) { (void) c; (void) a; (void) p; return str_pred(s, 2); }
static jv m_isspace(struct jctx * c, jv s, struct jargs * a, size_t p) { (void) c; (void) a; (void) p; return str_pred(s, 3); }
static jv m_islower(struct jctx * c, jv s, struct jargs * a, size_t p) { (void) c; (void) a; (void) p; return str_pred(s, 4); }
static jv m_isupper(struct jctx * c, jv s, struct jargs * a, size_t p) { (void) c; (void) a; (void) p; return str_pred(s, 5); }

// ---- dict methods ----------------------------------------------------------------------------------------

jv jinja_dict_items(struct jctx * c, jv d) {
    jv out = jv_list_new(c->e);
    for (size_t i = 0; i < d.u.dict->n; i++) {
        jv pair = jv_list_new(c->e);
        jv_list_push(c->e, pair, d.u.dict->keys[i]);
        jv_list_push(c->e, pair, d.u.dict->vals[i]);
        jv_list_push(c->e, out, pair);
    }
    return out;
}

static jv m_items(struct jctx * c, jv d, struct jargs * a, size_t pos) { (void) a; (void) pos; return jinja_dict_items(c, d); }

static jv m_keys(struct jctx * c, jv d, struct jargs * a, size_t pos) {
    (void) a; (void) pos;
    jv out = jv_list_new(c->e);
    for (size_t i = 0; i < d.u.dict->n; i++) {
        jv_list_push(c->e, out, d.u.dict->keys[i]);
    }
    return out;
}

static jv m_values(struct jctx * c, jv d, struct jargs * a, size_t pos) {
    (void) a; (void) pos;
    jv out = jv_list_new(c->e);
    for (size_t i = 0; i < d.u.dict->n; i++) {
        jv_list_push(c->e, out, d.u.dict->vals[i]);
    }
    return out;
}

static jv m_get(struct jctx * c, jv d, struct jargs * a, size_t pos) {
    (void) c; (void) pos;
    jv * v = jv_dict_getv(d, jarg(a, 0, NULL));
    if (v) {
        return *v;
    }
    jv dflt = jarg(a, 1, "default");
    return dflt.t == JV_UNDEF ? jv_none() : dflt;
}

static jv m_update(struct jctx * c, jv d, struct jargs * a, size_t pos) {
    jv other = jarg(a, 0, NULL);
    if (other.t == JV_DICT) {
        for (size_t i = 0; i < other.u.dict->n; i++) {
            jv_dict_set(c->e, d, other.u.dict->keys[i], other.u.dict->vals[i]);
        }
    } else if (other.t != JV_UNDEF) {
        jerr(c->e, pos, "update expects a dict");
    }
    for (size_t i = 0; i < a->nkw; i++) {
        jv_dict_set(c->e, d, jv_str(c->e, a->kw_names[i]), a->kw_vals[i]);
    }
    return jv_none();
}

static jv m_setdefault(struct jctx * c, jv d, struct jargs * a, size_t pos) {
    (void) pos;
    jv k = jarg(a, 0, NULL);
    jv * v = jv_dict_getv(d, k);
    if (v) {
        return *v;
    }
    jv dflt = jarg(a, 1, NULL);
    if (dflt.t == JV_UNDEF) {
        dflt = jv_none();
    }
    jv_dict_set(c->e, d, k, dflt);
    return dflt;
}

// ---- list methods ----------------------------------------------------------------------------------------

static jv m_append(struct jctx * c, jv l, struct jargs * a, size_t pos) {
    (void) pos;
    jv_list_push(c->e, l, jarg(a, 0, NULL));
    return jv_none();
}

static jv m_extend(struct jctx * c, jv l, struct jargs * a, size_t pos) {
    jv items = jinja_iter_list(c, jarg(a, 0, NULL), pos);
    for (size_t i = 0; i < items.u.list->n; i++) {
        jv_list_push(c->e, l, items.u.list->items[i]);
    }
    return jv_none();
}

static jv m_pop(struct jctx * c, jv obj, struct jargs * a, size_t pos) {
    if (obj.t == JV_DICT) {
        jv k = jarg(a, 0, NULL);
        struct jdict * d = obj.u.dict;
        for (size_t i = 0; i < d->n; i++) {
            if (jv_equal(d->keys[i], k)) {
                jv v = d->vals[i];
                memmove(d->keys + i, d->keys + i + 1, (d->n - i - 1) * sizeof(jv));
                memmove(d->vals + i, d->vals + i + 1, (d->n - i - 1) * sizeof(jv));
                d->n--;
                return v;
            }
        }
        jv dflt = jarg(a, 1, NULL);
        if (dflt.t == JV_UNDEF) {
            jerr(c->e, pos, "pop: key not found");
        }
        return dflt;
    }
    struct jlist * l = obj.u.list;
    if (l->n == 0) {
        jerr(c->e, pos, "pop from an empty list");
    }
    jv iv = jarg(a, 0, NULL);
    int64_t i = iv.t == JV_INT ? iv.u.i : (int64_t) l->n - 1;
    if (i < 0) {
        i += (int64_t) l->n;
    }
    if (i < 0 || i >= (int64_t) l->n) {
        jerr(c->e, pos, "pop index out of range");
    }
    jv v = l->items[i];
    memmove(l->items + i, l->items + i + 1, (l->n - (size_t) i - 1) * sizeof(jv));
    l->n--;
    return v;
}

static jv m_insert(struct jctx * c, jv l, struct jargs * a, size_t pos) {
    jv iv = jarg(a, 0, NULL);
    if (iv.t != JV_INT) {
        jerr(c->e, pos, "insert expects an integer index");
    }
    jv_list_push(c->e, l, jv_none());
    struct jlist * L = l.u.list;
    int64_t i = iv.u.i;
    if (i < 0) {
        i += (int64_t) L->n - 1;
    }
    if (i < 0) {
        i = 0;
    }
    if (i > (int64_t) L->n - 1) {
        i = (int64_t) L->n - 1;
    }
    memmove(L->items + i + 1, L->items + i, (L->n - 1 - (size_t) i) * sizeof(jv));
    L->items[i] = jarg(a, 1, NULL);
    return jv_none();
}

static jv m_index(struct jctx * c, jv l, struct jargs * a, size_t pos) {
    jv x = jarg(a, 0, NULL);
    for (size_t i = 0; i < l.u.list->n; i++) {
        if (jv_equal(l.u.list->items[i], x)) {
            return jv_int((int64_t) i);
        }
    }
    jerr(c->e, pos, "index: value not in list");
}

struct method {
    const char * name;
    jbuiltin_fn  fn;
};

static const struct method STR_METHODS[] = {
    { "strip", m_strip }, { "lstrip", m_lstrip }, { "rstrip", m_rstrip }, { "upper", m_upper }, { "lower", m_lower },
    { "title", m_title }, { "capitalize", m_capitalize }, { "startswith", m_startswith }, { "endswith", m_endswith },
    { "split", m_split }, { "splitlines", m_splitlines }, { "replace", m_replace }, { "find", m_find },
    { "count", m_count }, { "join", m_join }, { "format", m_format }, { "isdigit", m_isdigit },
    { "isalpha", m_isalpha }, { "isalnum", m_isalnum }, { "isspace", m_isspace }, { "islower", m_islower },
    { "isupper", m_isupper }, { "removeprefix", m_removeprefix }, { "removesuffix", m_removesuffix },
};
static const struct method DICT_METHODS[] = {
    { "items", m_items }, { "keys", m_keys }, { "values", m_values }, { "get", m_get }, { "update", m_update },
    { "pop", m_pop }, { "setdefault", m_setdefault },
};
static const struct method LIST_METHODS[] = {
    { "append", m_append }, { "extend", m_extend }, { "pop", m_pop }, { "insert", m_insert }, { "index", m_index },
    { "count", m_count },
};

static jv bind(struct jctx * c, const struct method * tab, size_t n, jv self, const char * name) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tab[i].name, name) == 0) {
            struct jfunc * f = jalloc(c->e, sizeof(*f));
            f->name = tab[i].name;
            f->fn = tab[i].fn;
            f->self = self;
            jv v;
            v.t = JV_FUNC;
            v.u.fn = f;
            return v;
        }
    }
    return jv_undef();
}

#define BIND(tab, self, name) bind(c, tab, sizeof(tab) / sizeof(tab[0]), self, name)

jv jinja_get_attr(struct jctx * c, jv obj, const char * name, size_t pos) {
    (void) pos;
    switch (obj.t) {
        case JV_DICT: {
            jv * v = jv_dict_get(obj, name, strlen(name));
            if (v) {
                return *v;
            }
            return BIND(DICT_METHODS, obj, name);
        }
        case JV_STR:  return BIND(STR_METHODS, obj, name);
        case JV_LIST: return BIND(LIST_METHODS, obj, name);
        default:      return jv_undef();
    }
}

// ---- globals ---------------------------------------------------------------------------------------------

static jv g_range(struct jctx * c, jv self, struct jargs * a, size_t pos) {
    (void) self;
    int64_t start = 0, stop, step = 1;
    for (size_t i = 0; i < a->npos; i++) {
        if (a->pos[i].t != JV_INT) {
            jerr(c->e, pos, "range expects integers, got %s", jv_type_name(a->pos[i]));
        }
    }
    if (a->npos == 1) {
        stop = a->pos[0].u.i;
    } else if (a->npos == 2 || a->npos == 3) {
        start = a->pos[0].u.i;
        stop = a->pos[1].u.i;
        if (a->npos == 3) {
            step = a->pos[2].u.i;
        }
    } else {
        jerr(c->e, pos, "range expects 1 to 3 arguments");
    }
    if (step == 0) {
        jerr(c->e, pos, "range step must not be zero");
    }
    jv out = jv_list_new(c->e);
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        jstep(c, pos);
        jv_list_push(c->e, out, jv_int(i));
    }
    return out;
}

static jv g_namespace(struct jctx * c, jv self, struct jargs * a, size_t pos) {
    (void) self;
    jv d = jv_dict_new(c->e);
    for (size_t i = 0; i < a->npos; i++) {
        if (a->pos[i].t != JV_DICT) {
            jerr(c->e, pos, "namespace expects a dict or keyword arguments");
        }
        for (size_t k = 0; k < a->pos[i].u.dict->n; k++) {
            jv_dict_set(c->e, d, a->pos[i].u.dict->keys[k], a->pos[i].u.dict->vals[k]);
        }
    }
    for (size_t i = 0; i < a->nkw; i++) {
        jv_dict_set(c->e, d, jv_str(c->e, a->kw_names[i]), a->kw_vals[i]);
    }
    return d;
}

static jv g_raise(struct jctx * c, jv self, struct jargs * a, size_t pos) {
    (void) self;
    jv msg = jv_to_string(c->e, jarg(a, 0, NULL));
    jerr(c->e, pos, "%.*s", (int) (msg.u.str.n > 300 ? 300 : msg.u.str.n), msg.u.str.s);
}

static jv g_strftime_now(struct jctx * c, jv self, struct jargs * a, size_t pos) {
    (void) self;
    size_t n;
    const char * fmt = need_str(c, jarg(a, 0, NULL), "strftime_now", pos, &n);
    char * f = jstrndup(c->e, fmt, n);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char buf[256];
    size_t k = strftime(buf, sizeof(buf), f, &tm);
    return jv_strn(jstrndup(c->e, buf, k), k);
}

static const struct method GLOBALS[] = {
    { "range", g_range }, { "namespace", g_namespace }, { "dict", g_namespace }, { "raise_exception", g_raise },
    { "strftime_now", g_strftime_now },
};

jv jinja_global_builtin(struct jctx * c, const char * name) {
    return BIND(GLOBALS, jv_undef(), name);
}

jv jinja_iter_list(struct jctx * c, jv v, size_t pos) {
    switch (v.t) {
        case JV_LIST: return v;
        case JV_DICT: return m_keys(c, v, NULL, pos);
        case JV_STR: {
            jv out = jv_list_new(c->e);
            size_t i = 0;
            while (i < v.u.str.n) {
                size_t k = 1;
                while (i + k < v.u.str.n && jinja_utf8_is_cont(v.u.str.s[i + k])) {
                    k++;
                }
                jv_list_push(c->e, out, jv_strn(v.u.str.s + i, k));
                i += k;
            }
            return out;
        }
        case JV_UNDEF:
        case JV_NONE:  return jv_list_new(c->e);
        default:       jerr(c->e, pos, "%s is not iterable", jv_type_name(v));
    }
}
