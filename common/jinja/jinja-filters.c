// Filters ({{ x | f(args) }}) and tests ({% if x is t %}) of the Jinja interpreter.
#include "jinja-impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void need(struct jctx * c, jv v, enum jv_type t, const char * what, size_t pos) {
    if (v.t != t) {
        jerr(c->e, pos, "%s expects a %s, got %s", what, t == JV_STR ? "string" : t == JV_LIST ? "list" : "dict",
             jv_type_name(v));
    }
}

// `attribute` may be dotted ("function.name") or an index ("0")
static jv get_attr_path(struct jctx * c, jv v, jv attr, size_t pos) {
    if (attr.t == JV_INT) {
        return v.t == JV_LIST && attr.u.i >= 0 && (size_t) attr.u.i < v.u.list->n ? v.u.list->items[attr.u.i] : jv_undef();
    }
    if (attr.t != JV_STR) {
        jerr(c->e, pos, "attribute name must be a string");
    }
    const char * p = attr.u.str.s, * end = p + attr.u.str.n;
    while (p <= end) {
        const char * dot = memchr(p, '.', (size_t) (end - p));
        const char * seg_end = dot ? dot : end;
        char * seg = jstrndup(c->e, p, (size_t) (seg_end - p));
        if (v.t == JV_LIST && seg[0] >= '0' && seg[0] <= '9') {
            size_t i = (size_t) strtoul(seg, NULL, 10);
            v = i < v.u.list->n ? v.u.list->items[i] : jv_undef();
        } else if (v.t == JV_DICT) {
            jv * x = jv_dict_get(v, seg, strlen(seg));
            v = x ? *x : jv_undef();
        } else {
            v = jv_undef();
        }
        if (!dot) {
            break;
        }
        p = dot + 1;
    }
    return v;
}

// args after the first `skip` positional ones, as a fresh jargs (for select('test', arg) and map('filter', arg))
static struct jargs rest_args(struct jargs * a, size_t skip) {
    struct jargs r = *a;
    r.pos = a->npos > skip ? a->pos + skip : a->pos;
    r.npos = a->npos > skip ? a->npos - skip : 0;
    r.nkw = 0;
    return r;
}

static int cmp_values(struct jctx * c, jv a, jv b, bool ci) {
    if (a.t == JV_STR && b.t == JV_STR) {
        if (ci) {
            a = jinja_case(c, a, 1);
            b = jinja_case(c, b, 1);
        }
        return jv_str_cmp(a, b);
    }
    double x = a.t == JV_INT ? (double) a.u.i : a.t == JV_FLOAT ? a.u.f : a.t == JV_BOOL ? a.u.b : 0;
    double y = b.t == JV_INT ? (double) b.u.i : b.t == JV_FLOAT ? b.u.f : b.t == JV_BOOL ? b.u.b : 0;
    return x < y ? -1 : x > y;
}

static jv f_select_common(struct jctx * c, jv v, struct jargs * a, size_t pos, bool by_attr, bool keep) {
    jv items = jinja_iter_list(c, v, pos);
    jv out = jv_list_new(c->e);
    const size_t skip = by_attr ? 2 : 1;
    jv attr = by_attr ? jarg(a, 0, NULL) : jv_undef();
    jv test = jarg(a, by_attr ? 1 : 0, NULL);
    struct jargs targs = rest_args(a, skip);
    for (size_t i = 0; i < items.u.list->n; i++) {
        jv x = items.u.list->items[i];
        jv subject = by_attr ? get_attr_path(c, x, attr, pos) : x;
        bool ok;
        if (test.t == JV_UNDEF) {
            ok = jv_truthy(subject);
        } else {
            need(c, test, JV_STR, "select", pos);
            ok = jinja_run_test(c, jstrndup(c->e, test.u.str.s, test.u.str.n), subject, &targs, pos);
        }
        if (ok == keep) {
            jv_list_push(c->e, out, x);
        }
    }
    return out;
}

jv jinja_apply_filter(struct jctx * c, const char * f, jv v, struct jargs * a, size_t pos) {
    jstep(c, pos);
    if (!strcmp(f, "trim")) {
        if (v.t == JV_UNDEF) {
            return jv_strn("", 0);
        }
        v = jv_to_string(c->e, v);
        jv chars = jarg(a, 0, "chars");
        return chars.t == JV_STR ? jinja_strip(v, chars.u.str.s, chars.u.str.n, true, true)
                                 : jinja_strip(v, NULL, 0, true, true);
    }
    if (!strcmp(f, "length") || !strcmp(f, "count")) {
        switch (v.t) {
            case JV_STR:   return jv_int((int64_t) jinja_utf8_count(v.u.str.s, v.u.str.n));
            case JV_LIST:  return jv_int((int64_t) v.u.list->n);
            case JV_DICT:  return jv_int((int64_t) v.u.dict->n);
            case JV_UNDEF:
            case JV_NONE:  return jv_int(0);
            default:       jerr(c->e, pos, "length of a %s", jv_type_name(v));
        }
    }
    if (!strcmp(f, "upper") || !strcmp(f, "lower") || !strcmp(f, "capitalize") || !strcmp(f, "title")) {
        v = jv_to_string(c->e, v);
        return jinja_case(c, v, f[0] == 'u' ? 0 : f[0] == 'l' ? 1 : f[0] == 'c' ? 2 : 3);
    }
    if (!strcmp(f, "tojson")) {
        // HF's tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
        jv ind = jarg(a, 0, "indent");
        jv seps = jarg(a, SIZE_MAX, "separators");
        struct jjson_opts o = { -1, NULL, NULL, jv_truthy(jarg(a, SIZE_MAX, "sort_keys")),
                                jv_truthy(jarg(a, SIZE_MAX, "ensure_ascii")) };
        if (ind.t == JV_INT) {
            o.indent = (int) (ind.u.i < 0 ? 0 : ind.u.i > 32 ? 32 : ind.u.i);
        }
        if (seps.t == JV_LIST && seps.u.list->n == 2 && seps.u.list->items[0].t == JV_STR &&
            seps.u.list->items[1].t == JV_STR) {
            o.item_sep = jstrndup(c->e, seps.u.list->items[0].u.str.s, seps.u.list->items[0].u.str.n);
            o.key_sep = jstrndup(c->e, seps.u.list->items[1].u.str.s, seps.u.list->items[1].u.str.n);
        }
        struct jbuf b = { 0 };
        jv_write_json(c->e, &b, v, &o, 0);
        return jbuf_value(&b);
    }
    if (!strcmp(f, "string")) {
        return jv_to_string(c->e, v);
    }
    if (!strcmp(f, "safe") || !strcmp(f, "e") || !strcmp(f, "escape") || !strcmp(f, "forceescape")) {
        if (f[0] == 's') {
            return v;
        }
        // HTML escaping (autoescape is off for chat templates; only an explicit |e escapes)
        jv s = jv_to_string(c->e, v);
        struct jbuf b = { 0 };
        for (size_t i = 0; i < s.u.str.n; i++) {
            switch (s.u.str.s[i]) {
                case '&':  jbuf_put(c->e, &b, "&amp;", 5); break;
                case '<':  jbuf_put(c->e, &b, "&lt;", 4); break;
                case '>':  jbuf_put(c->e, &b, "&gt;", 4); break;
                case '"':  jbuf_put(c->e, &b, "&#34;", 5); break;
                case '\'': jbuf_put(c->e, &b, "&#39;", 5); break;
                default:   jbuf_putc(c->e, &b, s.u.str.s[i]);
            }
        }
        return jbuf_value(&b);
    }
    if (!strcmp(f, "int")) {
        jv d = jarg(a, 0, "default");
        switch (v.t) {
            case JV_INT:   return v;
            case JV_BOOL:  return jv_int(v.u.b);
            case JV_FLOAT: return jv_int((int64_t) v.u.f);
            case JV_STR: {
                char * s = jstrndup(c->e, v.u.str.s, v.u.str.n);
                char * end;
                double x = strtod(s, &end);
                if (end != s && *jinja_strip(jv_str(c->e, end), NULL, 0, true, true).u.str.s == '\0') {
                    return jv_int((int64_t) x);
                }
                return d.t == JV_UNDEF ? jv_int(0) : d;
            }
            default: return d.t == JV_UNDEF ? jv_int(0) : d;
        }
    }
    if (!strcmp(f, "float")) {
        switch (v.t) {
            case JV_INT:   return jv_float((double) v.u.i);
            case JV_BOOL:  return jv_float(v.u.b);
            case JV_FLOAT: return v;
            case JV_STR:   return jv_float(strtod(jstrndup(c->e, v.u.str.s, v.u.str.n), NULL));
            default:       return jv_float(0.0);
        }
    }
    if (!strcmp(f, "abs")) {
        if (v.t == JV_INT) {
            return jv_int(v.u.i < 0 ? (int64_t) (0 - (uint64_t) v.u.i) : v.u.i);
        }
        if (v.t == JV_FLOAT) {
            return jv_float(fabs(v.u.f));
        }
        jerr(c->e, pos, "abs of a %s", jv_type_name(v));
    }
    if (!strcmp(f, "round")) {
        jv prec = jarg(a, 0, "precision");
        jv method = jarg(a, 1, "method");
        double x = v.t == JV_INT ? (double) v.u.i : v.t == JV_FLOAT ? v.u.f : 0.0;
        double m = pow(10.0, prec.t == JV_INT ? (double) prec.u.i : 0.0);
        const char * mt = method.t == JV_STR ? method.u.str.s : "common";
        double r = !strncmp(mt, "ceil", 4) ? ceil(x * m) / m : !strncmp(mt, "floor", 5) ? floor(x * m) / m : round(x * m) / m;
        return jv_float(r);
    }
    if (!strcmp(f, "join")) {
        jv items = jinja_iter_list(c, v, pos);
        jv sep = jarg(a, 0, "d");
        jv attr = jarg(a, 1, "attribute");
        struct jbuf b = { 0 };
        for (size_t i = 0; i < items.u.list->n; i++) {
            if (i && sep.t != JV_UNDEF) {
                jv_write_str(c->e, &b, sep);
            }
            jv x = items.u.list->items[i];
            jv_write_str(c->e, &b, attr.t != JV_UNDEF ? get_attr_path(c, x, attr, pos) : x);
        }
        return jbuf_value(&b);
    }
    if (!strcmp(f, "default") || !strcmp(f, "d")) {
        jv dflt = jarg(a, 0, "default_value");
        jv boolean = jarg(a, 1, "boolean");
        const bool use = jv_truthy(boolean) ? !jv_truthy(v) : v.t == JV_UNDEF;
        return use ? (dflt.t == JV_UNDEF ? jv_strn("", 0) : dflt) : v;
    }
    if (!strcmp(f, "first") || !strcmp(f, "last")) {
        jv items = jinja_iter_list(c, v, pos);
        if (items.u.list->n == 0) {
            return jv_undef();
        }
        return items.u.list->items[f[0] == 'f' ? 0 : items.u.list->n - 1];
    }
    if (!strcmp(f, "items")) {
        if (v.t == JV_UNDEF || v.t == JV_NONE) {
            return jv_list_new(c->e);
        }
        need(c, v, JV_DICT, "items", pos);
        return jinja_dict_items(c, v);
    }
    if (!strcmp(f, "dictsort")) {
        need(c, v, JV_DICT, "dictsort", pos);
        jv items = jinja_dict_items(c, v);
        jv by = jarg(a, 1, "by");
        const size_t k = by.t == JV_STR && !strcmp(by.u.str.s, "value") ? 1 : 0;
        struct jlist * l = items.u.list;
        for (size_t i = 1; i < l->n; i++) {
            for (size_t j = i; j > 0 && cmp_values(c, l->items[j - 1].u.list->items[k], l->items[j].u.list->items[k], true) > 0; j--) {
                jv t = l->items[j];
                l->items[j] = l->items[j - 1];
                l->items[j - 1] = t;
            }
        }
        return items;
    }
    if (!strcmp(f, "replace")) {
        v = jv_to_string(c->e, v);
        jv cnt = jarg(a, 2, "count");
        return jinja_replace(c, v, jarg(a, 0, "old"), jarg(a, 1, "new"), cnt.t == JV_INT ? cnt.u.i : -1, pos);
    }
    if (!strcmp(f, "list")) {
        jv items = jinja_iter_list(c, v, pos);
        jv out = jv_list_new(c->e);
        for (size_t i = 0; i < items.u.list->n; i++) {
            jv_list_push(c->e, out, items.u.list->items[i]);
        }
        return out;
    }
    if (!strcmp(f, "selectattr") || !strcmp(f, "rejectattr")) {
        return f_select_common(c, v, a, pos, true, f[0] == 's');
    }
    if (!strcmp(f, "select") || !strcmp(f, "reject")) {
        return f_select_common(c, v, a, pos, false, f[0] == 's');
    }
    if (!strcmp(f, "map")) {
        jv items = jinja_iter_list(c, v, pos);
        jv out = jv_list_new(c->e);
        jv attr = jarg(a, SIZE_MAX, "attribute");
        jv dflt = jarg(a, SIZE_MAX, "default");
        jv fname = jarg(a, 0, NULL);
        struct jargs fargs = rest_args(a, 1);
        for (size_t i = 0; i < items.u.list->n; i++) {
            jv x = items.u.list->items[i];
            if (attr.t != JV_UNDEF) {
                jv y = get_attr_path(c, x, attr, pos);
                jv_list_push(c->e, out, y.t == JV_UNDEF && dflt.t != JV_UNDEF ? dflt : y);
            } else {
                need(c, fname, JV_STR, "map", pos);
                jv_list_push(c->e, out, jinja_apply_filter(c, jstrndup(c->e, fname.u.str.s, fname.u.str.n), x, &fargs, pos));
            }
        }
        return out;
    }
    if (!strcmp(f, "unique")) {
        jv items = jinja_iter_list(c, v, pos);
        jv attr = jarg(a, 1, "attribute");
        jv out = jv_list_new(c->e);
        jv seen = jv_list_new(c->e);
        for (size_t i = 0; i < items.u.list->n; i++) {
            jv x = items.u.list->items[i];
            jv key = attr.t != JV_UNDEF ? get_attr_path(c, x, attr, pos) : x;
            bool dup = false;
            for (size_t k = 0; k < seen.u.list->n && !dup; k++) {
                dup = jv_equal(seen.u.list->items[k], key);
            }
            if (!dup) {
                jv_list_push(c->e, seen, key);
                jv_list_push(c->e, out, x);
            }
        }
        return out;
    }
    if (!strcmp(f, "reverse")) {
        if (v.t == JV_STR) {
            jv chars = jinja_iter_list(c, v, pos);
            struct jbuf b = { 0 };
            for (size_t i = chars.u.list->n; i-- > 0;) {
                jv_write_str(c->e, &b, chars.u.list->items[i]);
            }
            return jbuf_value(&b);
        }
        jv items = jinja_iter_list(c, v, pos);
        jv out = jv_list_new(c->e);
        for (size_t i = items.u.list->n; i-- > 0;) {
            jv_list_push(c->e, out, items.u.list->items[i]);
        }
        return out;
    }
    if (!strcmp(f, "sort")) {
        jv items = jinja_iter_list(c, v, pos);
        jv rev = jarg(a, 0, "reverse");
        jv cs = jarg(a, 1, "case_sensitive");
        jv attr = jarg(a, 2, "attribute");
        jv out = jv_list_new(c->e);
        for (size_t i = 0; i < items.u.list->n; i++) {
            jv_list_push(c->e, out, items.u.list->items[i]);
        }
        struct jlist * l = out.u.list;
        const int sign = jv_truthy(rev) ? -1 : 1;
        for (size_t i = 1; i < l->n; i++) {
            for (size_t j = i; j > 0; j--) {
                jv x = attr.t != JV_UNDEF ? get_attr_path(c, l->items[j - 1], attr, pos) : l->items[j - 1];
                jv y = attr.t != JV_UNDEF ? get_attr_path(c, l->items[j], attr, pos) : l->items[j];
                jstep(c, pos);
                if (sign * cmp_values(c, x, y, !jv_truthy(cs)) <= 0) {
                    break;
                }
                jv t = l->items[j];
                l->items[j] = l->items[j - 1];
                l->items[j - 1] = t;
            }
        }
        return out;
    }
    if (!strcmp(f, "sum")) {
        jv items = jinja_iter_list(c, v, pos);
        jv attr = jarg(a, 0, "attribute");
        jv total = jarg(a, 1, "start");
        if (total.t == JV_UNDEF) {
            total = jv_int(0);
        }
        for (size_t i = 0; i < items.u.list->n; i++) {
            jv x = attr.t != JV_UNDEF ? get_attr_path(c, items.u.list->items[i], attr, pos) : items.u.list->items[i];
            if (x.t == JV_INT && total.t == JV_INT) {
                total = jv_int(total.u.i + x.u.i);
            } else {
                double tx = total.t == JV_INT ? (double) total.u.i : total.u.f;
                double xx = x.t == JV_INT ? (double) x.u.i : x.t == JV_FLOAT ? x.u.f : 0.0;
                total = jv_float(tx + xx);
            }
        }
        return total;
    }
    if (!strcmp(f, "min") || !strcmp(f, "max")) {
        jv items = jinja_iter_list(c, v, pos);
        if (items.u.list->n == 0) {
            return jv_undef();
        }
        jv best = items.u.list->items[0];
        for (size_t i = 1; i < items.u.list->n; i++) {
            int r = cmp_values(c, items.u.list->items[i], best, true);
            if (f[1] == 'i' ? r < 0 : r > 0) {
                best = items.u.list->items[i];
            }
        }
        return best;
    }
    if (!strcmp(f, "indent")) {
        v = jv_to_string(c->e, v);
        jv w = jarg(a, 0, "width");
        jv first = jarg(a, 1, "first");
        jv blank = jarg(a, 2, "blank");
        struct jbuf pad = { 0 };
        if (w.t == JV_STR) {
            jbuf_put(c->e, &pad, w.u.str.s, w.u.str.n);
        } else {
            for (int64_t i = 0; i < (w.t == JV_INT ? (w.u.i > 256 ? 256 : w.u.i) : 4); i++) {
                jbuf_putc(c->e, &pad, ' ');
            }
        }
        struct jbuf b = { 0 };
        const char * p = v.u.str.s, * end = v.u.str.s + v.u.str.n;
        bool first_line = true;
        while (p <= end) {
            const char * nl = memchr(p, '\n', (size_t) (end - p));
            const char * le = nl ? nl : end;
            const bool is_blank = le == p;
            if ((first_line ? jv_truthy(first) : true) && (!is_blank || jv_truthy(blank))) {
                jbuf_put(c->e, &b, pad.s ? pad.s : "", pad.n);
            }
            jbuf_put(c->e, &b, p, (size_t) (le - p));
            if (!nl) {
                break;
            }
            jbuf_putc(c->e, &b, '\n');
            p = nl + 1;
            first_line = false;
        }
        return jbuf_value(&b);
    }
    if (!strcmp(f, "wordcount")) {
        v = jv_to_string(c->e, v);
        int64_t n = 0;
        bool in_word = false;
        for (size_t i = 0; i < v.u.str.n; i++) {
            char ch = v.u.str.s[i];
            bool ws = ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r';
            if (!ws && !in_word) {
                n++;
            }
            in_word = !ws;
        }
        return jv_int(n);
    }
    jerr(c->e, pos, "unknown filter '%s'", f);
}

bool jinja_run_test(struct jctx * c, const char * t, jv v, struct jargs * a, size_t pos) {
    jv arg = jarg(a, 0, NULL);
    if (!strcmp(t, "defined"))   return v.t != JV_UNDEF;
    if (!strcmp(t, "undefined")) return v.t == JV_UNDEF;
    if (!strcmp(t, "none"))      return v.t == JV_NONE;
    if (!strcmp(t, "string"))    return v.t == JV_STR;
    if (!strcmp(t, "mapping"))   return v.t == JV_DICT;
    if (!strcmp(t, "iterable"))  return v.t == JV_LIST || v.t == JV_DICT || v.t == JV_STR;
    if (!strcmp(t, "sequence"))  return v.t == JV_LIST || v.t == JV_DICT || v.t == JV_STR;
    if (!strcmp(t, "number"))    return v.t == JV_INT || v.t == JV_FLOAT;
    if (!strcmp(t, "integer"))   return v.t == JV_INT;
    if (!strcmp(t, "float"))     return v.t == JV_FLOAT;
    if (!strcmp(t, "boolean"))   return v.t == JV_BOOL;
    if (!strcmp(t, "true"))      return v.t == JV_BOOL && v.u.b;
    if (!strcmp(t, "false"))     return v.t == JV_BOOL && !v.u.b;
    if (!strcmp(t, "callable"))  return v.t == JV_FUNC;
    if (!strcmp(t, "equalto") || !strcmp(t, "eq") || !strcmp(t, "==") || !strcmp(t, "sameas")) return jv_equal(v, arg);
    if (!strcmp(t, "ne") || !strcmp(t, "!="))                         return !jv_equal(v, arg);
    if (!strcmp(t, "in"))        {
        if (arg.t == JV_LIST) {
            for (size_t i = 0; i < arg.u.list->n; i++) {
                if (jv_equal(arg.u.list->items[i], v)) {
                    return true;
                }
            }
            return false;
        }
        if (arg.t == JV_DICT) {
            return jv_dict_getv(arg, v) != NULL;
        }
        if (arg.t == JV_STR && v.t == JV_STR) {
            return jinja_find(arg.u.str.s, arg.u.str.n, v.u.str.s, v.u.str.n) != NULL;
        }
        return false;
    }
    if (!strcmp(t, "lt") || !strcmp(t, "<") || !strcmp(t, "lessthan"))    return cmp_values(c, v, arg, false) < 0;
    if (!strcmp(t, "le") || !strcmp(t, "<="))                            return cmp_values(c, v, arg, false) <= 0;
    if (!strcmp(t, "gt") || !strcmp(t, ">") || !strcmp(t, "greaterthan")) return cmp_values(c, v, arg, false) > 0;
    if (!strcmp(t, "ge") || !strcmp(t, ">="))                            return cmp_values(c, v, arg, false) >= 0;
    if (!strcmp(t, "odd") || !strcmp(t, "even") || !strcmp(t, "divisibleby")) {
        if (v.t != JV_INT) {
            jerr(c->e, pos, "test '%s' needs an integer, got %s", t, jv_type_name(v));
        }
        if (t[0] == 'o') return (v.u.i % 2) != 0;
        if (t[0] == 'e') return (v.u.i % 2) == 0;
        if (arg.t != JV_INT || arg.u.i == 0) {
            jerr(c->e, pos, "divisibleby needs a non-zero integer");
        }
        return v.u.i % arg.u.i == 0;
    }
    if (!strcmp(t, "lower") || !strcmp(t, "upper")) {
        if (v.t != JV_STR) {
            return false;
        }
        jv x = jinja_case(c, v, t[0] == 'l' ? 1 : 0);
        return jv_equal(x, v);
    }
    jerr(c->e, pos, "unknown test '%s'", t);
}
