// Evaluator: statements write into the current output buffer, expressions produce values. Scoping follows Jinja:
// a for loop body and a macro body get their own scope (so `set` inside them does not leak out; templates use
// namespace() for that), if/else do not.
#include "jinja-impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jinja_template {
    struct jenv    env; // owns the tokens and the AST
    struct jnode * root;
    char *         src; // normalised source (for error positions)
    size_t         src_len;
};

void jstep(struct jctx * c, size_t pos) {
    if (++c->steps > JINJA_MAX_STEPS) {
        jerr(c->e, pos, "template takes too long (over %lld steps)", (long long) JINJA_MAX_STEPS);
    }
}

jv jarg(struct jargs * a, size_t i, const char * name) {
    if (name) {
        for (size_t k = 0; k < a->nkw; k++) {
            if (strcmp(a->kw_names[k], name) == 0) {
                return a->kw_vals[k];
            }
        }
    }
    if (i < a->npos) {
        return a->pos[i];
    }
    return jv_undef();
}

static struct jscope * scope_new(struct jctx * c, struct jscope * parent) {
    struct jscope * s = jalloc(c->e, sizeof(*s));
    s->parent = parent;
    s->vars = jv_dict_new(c->e);
    return s;
}

static jv lookup(struct jctx * c, const char * name) {
    const size_t n = strlen(name);
    for (struct jscope * s = c->scope; s; s = s->parent) {
        jv * v = jv_dict_get(s->vars, name, n);
        if (v) {
            return *v;
        }
    }
    return jinja_global_builtin(c, name);
}

static void assign(struct jctx * c, const char * name, jv v) {
    // the name lives in the AST, the arena or static storage for the whole render: no copy needed
    jv_dict_set(c->e, c->scope->vars, jv_strn(name, strlen(name)), v);
}

static jv eval(struct jctx * c, const struct jnode * n);
static void exec(struct jctx * c, const struct jnode * n);

// ---- operators -------------------------------------------------------------------------------------------

static bool is_num(jv v) { return v.t == JV_INT || v.t == JV_FLOAT || v.t == JV_BOOL; }
static double num(jv v) { return v.t == JV_INT ? (double) v.u.i : v.t == JV_FLOAT ? v.u.f : (v.u.b ? 1.0 : 0.0); }
static bool is_intlike(jv v) { return v.t == JV_INT || v.t == JV_BOOL; }
static int64_t ival(jv v) { return v.t == JV_INT ? v.u.i : (v.u.b ? 1 : 0); }

static jv concat_str(struct jctx * c, jv a, jv b) {
    struct jbuf buf = { 0 };
    jv_write_str(c->e, &buf, a);
    jv_write_str(c->e, &buf, b);
    return jbuf_value(&buf);
}

static bool contains(struct jctx * c, jv hay, jv needle, size_t pos) {
    switch (hay.t) {
        case JV_STR:
            if (needle.t != JV_STR) {
                jerr(c->e, pos, "'in <string>' requires a string, got %s", jv_type_name(needle));
            }
            return jinja_find(hay.u.str.s, hay.u.str.n, needle.u.str.s, needle.u.str.n) != NULL;
        case JV_LIST:
            for (size_t i = 0; i < hay.u.list->n; i++) {
                if (jv_equal(hay.u.list->items[i], needle)) {
                    return true;
                }
            }
            return false;
        case JV_DICT: return jv_dict_getv(hay, needle) != NULL;
        case JV_UNDEF:
        case JV_NONE:  return false;
        default:       jerr(c->e, pos, "'in' needs a string, list or dict on the right, got %s", jv_type_name(hay));
    }
}

static int compare(struct jctx * c, jv a, jv b, size_t pos) {
    if (is_num(a) && is_num(b)) {
        if (is_intlike(a) && is_intlike(b)) {
            return ival(a) < ival(b) ? -1 : ival(a) > ival(b);
        }
        double x = num(a), y = num(b);
        return x < y ? -1 : x > y;
    }
    if (a.t == JV_STR && b.t == JV_STR) {
        return jv_str_cmp(a, b);
    }
    if (a.t == JV_LIST && b.t == JV_LIST) {
        size_t n = a.u.list->n < b.u.list->n ? a.u.list->n : b.u.list->n;
        if (++c->depth > JINJA_MAX_DEPTH) { // a list can contain itself
            jerr(c->e, pos, "values nested too deeply to compare");
        }
        for (size_t i = 0; i < n; i++) {
            int r = compare(c, a.u.list->items[i], b.u.list->items[i], pos);
            if (r) {
                c->depth--;
                return r;
            }
        }
        c->depth--;
        return a.u.list->n < b.u.list->n ? -1 : a.u.list->n > b.u.list->n;
    }
    jerr(c->e, pos, "cannot compare %s with %s", jv_type_name(a), jv_type_name(b));
}

static jv binop(struct jctx * c, int op, jv a, jv b, size_t pos) {
    switch (op) {
        case OP_EQ:     return jv_bool(jv_equal(a, b));
        case OP_NE:     return jv_bool(!jv_equal(a, b));
        case OP_LT:     return jv_bool(compare(c, a, b, pos) < 0);
        case OP_LE:     return jv_bool(compare(c, a, b, pos) <= 0);
        case OP_GT:     return jv_bool(compare(c, a, b, pos) > 0);
        case OP_GE:     return jv_bool(compare(c, a, b, pos) >= 0);
        case OP_IN:     return jv_bool(contains(c, b, a, pos));
        case OP_NOTIN:  return jv_bool(!contains(c, b, a, pos));
        case OP_CONCAT: return concat_str(c, a, b);
        default:        break;
    }
    if (op == OP_ADD) {
        // undefined acts as an empty string next to a string (lenient, like llama.cpp's engine)
        if ((a.t == JV_STR || a.t == JV_UNDEF) && (b.t == JV_STR || b.t == JV_UNDEF) &&
            (a.t == JV_STR || b.t == JV_STR)) {
            return concat_str(c, a, b);
        }
        if (a.t == JV_LIST && b.t == JV_LIST) {
            jv l = jv_list_new(c->e);
            for (size_t i = 0; i < a.u.list->n; i++) {
                jv_list_push(c->e, l, a.u.list->items[i]);
            }
            for (size_t i = 0; i < b.u.list->n; i++) {
                jv_list_push(c->e, l, b.u.list->items[i]);
            }
            return l;
        }
    }
    if (op == OP_MUL && ((a.t == JV_STR && b.t == JV_INT) || (a.t == JV_INT && b.t == JV_STR))) {
        jv s = a.t == JV_STR ? a : b;
        int64_t k = a.t == JV_INT ? a.u.i : b.u.i;
        struct jbuf buf = { 0 };
        // an empty string would never reach the output cap, so `"" * 10**15` must not loop
        for (int64_t i = 0; i < k && s.u.str.n > 0; i++) {
            jbuf_put(c->e, &buf, s.u.str.s, s.u.str.n);
        }
        return jbuf_value(&buf);
    }
    if (!is_num(a) || !is_num(b)) {
        static const char * const NAMES[] = { "+", "-", "*", "/", "//", "%", "**" };
        jerr(c->e, pos, "unsupported operand types for %s: %s and %s", op <= OP_POW ? NAMES[op] : "?", jv_type_name(a),
             jv_type_name(b));
    }
    const bool ints = is_intlike(a) && is_intlike(b);
    const int64_t x = ints ? ival(a) : 0, y = ints ? ival(b) : 0;
    const double fx = num(a), fy = num(b);
    switch (op) {
        case OP_ADD: return ints ? jv_int((int64_t) ((uint64_t) x + (uint64_t) y)) : jv_float(fx + fy);
        case OP_SUB: return ints ? jv_int((int64_t) ((uint64_t) x - (uint64_t) y)) : jv_float(fx - fy);
        case OP_MUL: return ints ? jv_int((int64_t) ((uint64_t) x * (uint64_t) y)) : jv_float(fx * fy);
        case OP_DIV:
            if (fy == 0.0) {
                jerr(c->e, pos, "division by zero");
            }
            return jv_float(fx / fy);
        case OP_FLOORDIV:
        case OP_MOD:
            if (ints) {
                if (y == 0) {
                    jerr(c->e, pos, "division by zero");
                }
                if (y == -1) {
                    return jv_int(op == OP_MOD ? 0 : (int64_t) (0 - (uint64_t) x));
                }
                int64_t q = x / y, r = x % y;
                if (r != 0 && ((r < 0) != (y < 0))) {
                    q--;
                    r += y;
                }
                return jv_int(op == OP_MOD ? r : q);
            }
            if (fy == 0.0) {
                jerr(c->e, pos, "division by zero");
            }
            if (op == OP_FLOORDIV) {
                return jv_float(floor(fx / fy));
            } else {
                double r = fmod(fx, fy);
                if (r != 0 && ((r < 0) != (fy < 0))) {
                    r += fy;
                }
                return jv_float(r);
            }
        case OP_POW:
            if (ints && y >= 0) {
                // square-and-multiply modulo 2^64 (so (-1) ** 65 is -1, and a huge y costs 63 steps at most)
                uint64_t r = 1, base = (uint64_t) x;
                for (uint64_t e = (uint64_t) y; e; e >>= 1) {
                    if (e & 1) {
                        r *= base;
                    }
                    base *= base;
                }
                return jv_int((int64_t) r);
            }
            return jv_float(pow(fx, fy));
        default:
            jerr(c->e, pos, "bad operator");
    }
}

// ---- indexing --------------------------------------------------------------------------------------------

// byte offsets of the code points of s (n+1 entries: the last is the length)
static size_t * utf8_offsets(struct jenv * e, const char * s, size_t len, size_t * n) {
    size_t * off = jalloc(e, (len + 1) * sizeof(size_t));
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (!jinja_utf8_is_cont(s[i])) {
            off[k++] = i;
        }
    }
    off[k] = len;
    *n = k;
    return off;
}

static jv index_value(struct jctx * c, jv obj, jv key, size_t pos) {
    if (obj.t == JV_DICT) {
        jv * v = jv_dict_getv(obj, key);
        return v ? *v : jv_undef();
    }
    if (obj.t == JV_LIST || obj.t == JV_STR) {
        if (key.t == JV_STR && obj.t == JV_LIST) {
            return jv_undef();
        }
        if (!is_intlike(key)) {
            if (key.t == JV_STR) {
                return jinja_get_attr(c, obj, jstrndup(c->e, key.u.str.s, key.u.str.n), pos);
            }
            jerr(c->e, pos, "%s indices must be integers, got %s", jv_type_name(obj), jv_type_name(key));
        }
        int64_t i = ival(key);
        if (obj.t == JV_LIST) {
            int64_t n = (int64_t) obj.u.list->n;
            if (i < 0) {
                i += n;
            }
            return i >= 0 && i < n ? obj.u.list->items[i] : jv_undef();
        }
        // one code point: found by scanning, without the offset table a slice builds (a loop over s[i] stays cheap)
        const char * s = obj.u.str.s;
        const size_t len = obj.u.str.n;
        const int64_t n = (int64_t) jinja_utf8_count(s, len);
        if (i < 0) {
            i += n;
        }
        if (i < 0 || i >= n) {
            return jv_undef();
        }
        size_t b = 0;
        for (int64_t k = -1;; b++) {
            if (!jinja_utf8_is_cont(s[b]) && ++k == i) {
                break;
            }
        }
        size_t e = b + 1;
        while (e < len && jinja_utf8_is_cont(s[e])) {
            e++;
        }
        return jv_strn(s + b, e - b);
    }
    if (obj.t == JV_UNDEF || obj.t == JV_NONE) {
        return jv_undef();
    }
    jerr(c->e, pos, "cannot index a %s", jv_type_name(obj));
}

static jv slice_value(struct jctx * c, jv obj, jv vstart, jv vstop, jv vstep, size_t pos) {
    size_t n;
    size_t * off = NULL;
    if (obj.t == JV_LIST) {
        n = obj.u.list->n;
    } else if (obj.t == JV_STR) {
        off = utf8_offsets(c->e, obj.u.str.s, obj.u.str.n, &n);
    } else if (obj.t == JV_UNDEF || obj.t == JV_NONE) {
        return jv_undef();
    } else {
        jerr(c->e, pos, "cannot slice a %s", jv_type_name(obj));
    }
    int64_t step = 1;
    if (vstep.t != JV_UNDEF && vstep.t != JV_NONE) {
        if (!is_intlike(vstep) || ival(vstep) == 0) {
            jerr(c->e, pos, "slice step must be a non-zero integer");
        }
        step = ival(vstep);
    }
    const int64_t len = (int64_t) n;
    int64_t start, stop;
    // Python's slice.indices
    if (vstart.t == JV_UNDEF || vstart.t == JV_NONE) {
        start = step < 0 ? len - 1 : 0;
    } else {
        if (!is_intlike(vstart)) {
            jerr(c->e, pos, "slice indices must be integers");
        }
        start = ival(vstart);
        if (start < 0) {
            start += len;
            if (start < 0) {
                start = step < 0 ? -1 : 0;
            }
        } else if (start >= len) {
            start = step < 0 ? len - 1 : len;
        }
    }
    if (vstop.t == JV_UNDEF || vstop.t == JV_NONE) {
        stop = step < 0 ? -1 : len;
    } else {
        if (!is_intlike(vstop)) {
            jerr(c->e, pos, "slice indices must be integers");
        }
        stop = ival(vstop);
        if (stop < 0) {
            stop += len;
            if (stop < 0) {
                stop = step < 0 ? -1 : 0;
            }
        } else if (stop >= len) {
            stop = step < 0 ? len - 1 : len;
        }
    }
    if (obj.t == JV_LIST) {
        jv l = jv_list_new(c->e);
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
            jv_list_push(c->e, l, obj.u.list->items[i]);
        }
        return l;
    }
    struct jbuf b = { 0 };
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        jbuf_put(c->e, &b, obj.u.str.s + off[i], off[i + 1] - off[i]);
    }
    return jbuf_value(&b);
}

// ---- calls -----------------------------------------------------------------------------------------------

static void eval_args(struct jctx * c, const struct jnode * n, struct jargs * a) {
    a->npos = n->items.n;
    a->pos = jalloc(c->e, (a->npos + 1) * sizeof(jv));
    for (size_t i = 0; i < a->npos; i++) {
        a->pos[i] = eval(c, n->items.v[i]);
    }
    a->nkw = n->n_kw;
    a->kw_names = n->kw_names;
    a->kw_vals = jalloc(c->e, (a->nkw + 1) * sizeof(jv));
    for (size_t i = 0; i < a->nkw; i++) {
        a->kw_vals[i] = eval(c, n->kw_vals.v[i]);
    }
}

static jv render_body(struct jctx * c, const struct jnode * body, struct jscope * scope) {
    struct jbuf out = { 0 };
    out.limit = JINJA_MAX_OUTPUT;
    struct jbuf * saved_out = c->out;
    struct jscope * saved_scope = c->scope;
    const int saved_ctl = c->loop_ctl;
    c->out = &out;
    c->scope = scope;
    c->loop_ctl = 0;
    exec(c, body);
    c->out = saved_out;
    c->scope = saved_scope;
    c->loop_ctl = saved_ctl;
    return jbuf_value(&out);
}

static jv call_macro(struct jctx * c, const struct jfunc * f, struct jargs * a, size_t pos, jv caller) {
    const struct jnode * m = f->macro;
    struct jscope * s = scope_new(c, f->closure);
    for (size_t i = 0; i < m->items.n; i++) {
        const char * pname = m->items.v[i]->name;
        jv v = jarg(a, i, pname);
        if (v.t == JV_UNDEF && m->kind == N_MACRO && m->kw_vals.v[i]) {
            struct jscope * saved = c->scope;
            c->scope = s;
            v = eval(c, m->kw_vals.v[i]);
            c->scope = saved;
        }
        jv_dict_set(c->e, s->vars, jv_str(c->e, pname), v);
    }
    if (a->npos > m->items.n) {
        jerr(c->e, pos, "macro '%s' takes %zu arguments, got %zu", f->name, m->items.n, a->npos);
    }
    if (caller.t != JV_UNDEF) {
        jv_dict_set(c->e, s->vars, jv_str(c->e, "caller"), caller);
    }
    if (++c->depth > JINJA_MAX_DEPTH) {
        jerr(c->e, pos, "macro calls nested too deeply");
    }
    jv r = render_body(c, m->body, s);
    c->depth--;
    return r;
}

jv jinja_call(struct jctx * c, jv fn, struct jargs * a, size_t pos) {
    if (fn.t != JV_FUNC) {
        jerr(c->e, pos, "%s is not callable", fn.t == JV_UNDEF ? "an undefined value" : jv_type_name(fn));
    }
    jstep(c, pos);
    if (fn.u.fn->fn) {
        if (++c->depth > JINJA_MAX_DEPTH) {
            jerr(c->e, pos, "calls nested too deeply");
        }
        jv r = fn.u.fn->fn(c, fn.u.fn->self, a, pos);
        c->depth--;
        return r;
    }
    return call_macro(c, fn.u.fn, a, pos, jv_undef());
}

// ---- expressions -----------------------------------------------------------------------------------------

static jv eval(struct jctx * c, const struct jnode * n) {
    if (!n) {
        return jv_undef();
    }
    jstep(c, n->pos);
    switch (n->kind) {
        case N_CONST: return n->value;
        case N_NAME:  return lookup(c, n->name);
        case N_ATTR:  return jinja_get_attr(c, eval(c, n->a), n->name, n->pos);
        case N_INDEX: {
            jv obj = eval(c, n->a);
            return index_value(c, obj, eval(c, n->b), n->pos);
        }
        case N_SLICE: {
            jv obj = eval(c, n->a);
            jv s = eval(c, n->b), e = eval(c, n->c), st = eval(c, n->d);
            return slice_value(c, obj, s, e, st, n->pos);
        }
        case N_CALL: {
            jv fn = eval(c, n->a);
            struct jargs a;
            eval_args(c, n, &a);
            if (fn.t == JV_UNDEF && n->a->kind == N_NAME) {
                jerr(c->e, n->pos, "'%s' is undefined", n->a->name);
            }
            if (fn.t == JV_UNDEF && n->a->kind == N_ATTR) {
                jerr(c->e, n->pos, "unknown method '%s'", n->a->name);
            }
            return jinja_call(c, fn, &a, n->pos);
        }
        case N_FILTER: {
            jv v = eval(c, n->a);
            struct jargs a;
            eval_args(c, n, &a);
            return jinja_apply_filter(c, n->name, v, &a, n->pos);
        }
        case N_TEST: {
            jv v = eval(c, n->a);
            struct jargs a;
            eval_args(c, n, &a);
            bool r = jinja_run_test(c, n->name, v, &a, n->pos);
            return jv_bool(n->op ? !r : r);
        }
        case N_BINOP: {
            jv a = eval(c, n->a);
            jv b = eval(c, n->b);
            return binop(c, n->op, a, b, n->pos);
        }
        case N_NEG:
        case N_POS: {
            jv v = eval(c, n->a);
            if (!is_num(v)) {
                jerr(c->e, n->pos, "bad operand type for unary %c: %s", n->kind == N_NEG ? '-' : '+', jv_type_name(v));
            }
            if (n->kind == N_POS) {
                return v;
            }
            return is_intlike(v) ? jv_int((int64_t) (0 - (uint64_t) ival(v))) : jv_float(-v.u.f);
        }
        case N_NOT: return jv_bool(!jv_truthy(eval(c, n->a)));
        case N_AND: {
            jv a = eval(c, n->a);
            return jv_truthy(a) ? eval(c, n->b) : a;
        }
        case N_OR: {
            jv a = eval(c, n->a);
            return jv_truthy(a) ? a : eval(c, n->b);
        }
        case N_COND: return jv_truthy(eval(c, n->a)) ? eval(c, n->b) : eval(c, n->c);
        case N_LIST:
        case N_TUPLE: {
            jv l = jv_list_new(c->e);
            for (size_t i = 0; i < n->items.n; i++) {
                jv_list_push(c->e, l, eval(c, n->items.v[i]));
            }
            return l;
        }
        case N_DICT: {
            jv d = jv_dict_new(c->e);
            for (size_t i = 0; i < n->items.n; i++) {
                jv k = eval(c, n->items.v[i]);
                jv_dict_set(c->e, d, k, eval(c, n->kw_vals.v[i]));
            }
            return d;
        }
        default:
            jerr(c->e, n->pos, "not an expression");
    }
}

// ---- statements ------------------------------------------------------------------------------------------

static void assign_target(struct jctx * c, const struct jnode * t, jv v) {
    if (t->kind == N_NAME) {
        assign(c, t->name, v);
    } else if (t->kind == N_ATTR) {
        jv obj = eval(c, t->a);
        if (obj.t != JV_DICT) {
            jerr(c->e, t->pos, "cannot set attribute '%s' on a %s", t->name, jv_type_name(obj));
        }
        jv_dict_set(c->e, obj, jv_str(c->e, t->name), v);
    } else if (t->kind == N_TUPLE) {
        if (v.t != JV_LIST || v.u.list->n != t->items.n) {
            jerr(c->e, t->pos, "cannot unpack %s into %zu names", jv_type_name(v), t->items.n);
        }
        for (size_t i = 0; i < t->items.n; i++) {
            assign_target(c, t->items.v[i], v.u.list->items[i]);
        }
    } else {
        jerr(c->e, t->pos, "cannot assign to this expression");
    }
}

static void bind_loop_targets(struct jctx * c, const struct jnode * n, jv item) {
    if (n->items.n == 1) {
        assign(c, n->items.v[0]->name, item);
        return;
    }
    if (item.t != JV_LIST || item.u.list->n != n->items.n) {
        jerr(c->e, n->pos, "cannot unpack %s into %zu loop variables", jv_type_name(item), n->items.n);
    }
    for (size_t i = 0; i < n->items.n; i++) {
        assign(c, n->items.v[i]->name, item.u.list->items[i]);
    }
}

// k is a string literal: no copy needed
static void put_kv(struct jctx * c, jv d, const char * k, jv v) {
    jv_dict_set(c->e, d, jv_strn(k, strlen(k)), v);
}

static void exec_for(struct jctx * c, const struct jnode * n) {
    jv all = jinja_iter_list(c, eval(c, n->a), n->a->pos);
    struct jscope * outer = c->scope;
    jv items = all;
    if (n->c) {
        // the `if` clause filters before loop.* is computed
        items = jv_list_new(c->e);
        for (size_t i = 0; i < all.u.list->n; i++) {
            c->scope = scope_new(c, outer);
            bind_loop_targets(c, n, all.u.list->items[i]);
            if (jv_truthy(eval(c, n->c))) {
                jv_list_push(c->e, items, all.u.list->items[i]);
            }
        }
        c->scope = outer;
    }
    const size_t len = items.u.list->n;
    if (len == 0) {
        if (n->else_body) {
            exec(c, n->else_body);
        }
        return;
    }
    // one scope and one loop object for the whole loop, refilled per iteration: a long loop then needs no memory
    // per iteration
    struct jscope * body_scope = scope_new(c, outer);
    jv loop = jv_dict_new(c->e);
    for (size_t i = 0; i < len; i++) {
        jstep(c, n->pos);
        body_scope->vars.u.dict->n = 0;
        c->scope = body_scope;
        put_kv(c, loop, "index", jv_int((int64_t) i + 1));
        put_kv(c, loop, "index0", jv_int((int64_t) i));
        put_kv(c, loop, "revindex", jv_int((int64_t) (len - i)));
        put_kv(c, loop, "revindex0", jv_int((int64_t) (len - i - 1)));
        put_kv(c, loop, "first", jv_bool(i == 0));
        put_kv(c, loop, "last", jv_bool(i + 1 == len));
        put_kv(c, loop, "length", jv_int((int64_t) len));
        put_kv(c, loop, "previtem", i > 0 ? items.u.list->items[i - 1] : jv_undef());
        put_kv(c, loop, "nextitem", i + 1 < len ? items.u.list->items[i + 1] : jv_undef());
        put_kv(c, loop, "depth", jv_int(1));
        put_kv(c, loop, "depth0", jv_int(0));
        assign(c, "loop", loop);
        bind_loop_targets(c, n, items.u.list->items[i]);
        exec(c, n->body);
        if (c->loop_ctl == 1) {
            c->loop_ctl = 0;
            break;
        }
        c->loop_ctl = 0;
    }
    c->scope = outer;
}

static void exec(struct jctx * c, const struct jnode * n) {
    if (!n) {
        return;
    }
    jstep(c, n->pos);
    switch (n->kind) {
        case N_BLOCK:
            for (size_t i = 0; i < n->items.n && c->loop_ctl == 0; i++) {
                exec(c, n->items.v[i]);
            }
            return;
        case N_TEXT:
            jbuf_put(c->e, c->out, n->value.u.str.s, n->value.u.str.n);
            return;
        case N_OUTPUT:
            jv_write_str(c->e, c->out, eval(c, n->a));
            return;
        case N_IF:
            if (jv_truthy(eval(c, n->a))) {
                exec(c, n->body);
            } else {
                exec(c, n->else_body);
            }
            return;
        case N_FOR:
            exec_for(c, n);
            return;
        case N_SET:
            assign_target(c, n->a, eval(c, n->b));
            return;
        case N_SET_BLOCK: {
            jv v = render_body(c, n->body, c->scope);
            if (n->name) {
                struct jargs a;
                eval_args(c, n, &a);
                v = jinja_apply_filter(c, n->name, v, &a, n->pos);
            }
            assign(c, n->a->name, v);
            return;
        }
        case N_FILTER_BLOCK: {
            jv v = render_body(c, n->body, c->scope);
            struct jargs a;
            eval_args(c, n, &a);
            jv_write_str(c->e, c->out, jinja_apply_filter(c, n->name, v, &a, n->pos));
            return;
        }
        case N_MACRO: {
            struct jfunc * f = jalloc(c->e, sizeof(*f));
            f->name = n->name;
            f->macro = n;
            f->closure = c->scope;
            jv v;
            v.t = JV_FUNC;
            v.u.fn = f;
            assign(c, n->name, v);
            return;
        }
        case N_CALL_BLOCK: {
            struct jfunc * cf = jalloc(c->e, sizeof(*cf));
            cf->name = "caller";
            cf->macro = n;
            cf->closure = c->scope;
            jv caller;
            caller.t = JV_FUNC;
            caller.u.fn = cf;
            jv fn = eval(c, n->a->a);
            if (fn.t != JV_FUNC || !fn.u.fn->macro) {
                jerr(c->e, n->pos, "{%% call %%} needs a macro");
            }
            struct jargs a;
            eval_args(c, n->a, &a);
            jv_write_str(c->e, c->out, call_macro(c, fn.u.fn, &a, n->pos, caller));
            return;
        }
        case N_DO:
            eval(c, n->a);
            return;
        case N_BREAK:
            c->loop_ctl = 1;
            return;
        case N_CONTINUE:
            c->loop_ctl = 2;
            return;
        default:
            jerr(c->e, n->pos, "not a statement");
    }
}

// ---- public API ------------------------------------------------------------------------------------------

// CRLF / CR -> LF, and one trailing newline dropped (Jinja's keep_trailing_newline = false)
static char * normalise(const char * src, size_t * len) {
    size_t n = strlen(src);
    char * out = malloc(n + 1);
    if (!out) {
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (src[i] == '\r') {
            out[k++] = '\n';
            if (i + 1 < n && src[i + 1] == '\n') {
                i++;
            }
        } else {
            out[k++] = src[i];
        }
    }
    if (k > 0 && out[k - 1] == '\n') {
        k--;
    }
    out[k] = '\0';
    *len = k;
    return out;
}

struct jinja_template * jinja_template_parse(const char * src, char * err, size_t err_size) {
    if (!src) {
        snprintf(err, err_size, "no template text");
        return NULL;
    }
    struct jinja_template * t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    t->src = normalise(src, &t->src_len);
    if (!t->src) {
        free(t);
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    t->env.src = t->src;
    t->env.src_len = t->src_len;
    if (setjmp(t->env.jmp)) {
        snprintf(err, err_size, "%s", t->env.msg);
        jinja_template_free(t);
        return NULL;
    }
    size_t n_tok = 0;
    struct jtok * toks = jinja_lex(&t->env, t->src, t->src_len, &n_tok);
    t->root = jinja_parse(&t->env, toks, n_tok);
    return t;
}

void jinja_template_free(struct jinja_template * tmpl) {
    if (!tmpl) {
        return;
    }
    jarena_free(&tmpl->env);
    free(tmpl->src);
    free(tmpl);
}

char * jinja_template_render(const struct jinja_template * tmpl, const json_t * context, char * err,
                             size_t err_size) {
    // on the heap: after a longjmp only memory reached through this unchanged pointer is read, which C defines
    struct jenv * env = calloc(1, sizeof(*env));
    if (!env) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    env->src = tmpl->src;
    env->src_len = tmpl->src_len;
    if (setjmp(env->jmp)) {
        snprintf(err, err_size, "%s", env->msg);
        jarena_free(env);
        free(env);
        return NULL;
    }
    struct jctx c;
    memset(&c, 0, sizeof(c));
    c.e = env;
    struct jbuf out = { 0 };
    c.out = &out;
    c.globals = scope_new(&c, NULL);
    if (context && json_is_object(context)) {
        const char * k;
        const json_t * v;
        json_object_foreach((json_t *) context, k, v) {
            jv_dict_set(env, c.globals->vars, jv_str(env, k), jv_from_json(env, v));
        }
    }
    c.scope = c.globals;
    exec(&c, tmpl->root);
    char * result = malloc(out.n + 1);
    if (!result) {
        jerr(env, SIZE_MAX, "out of memory");
    }
    if (out.n) {
        memcpy(result, out.s, out.n);
    }
    result[out.n] = '\0';
    jarena_free(env);
    free(env);
    return result;
}
