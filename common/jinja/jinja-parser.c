// Recursive-descent parser: tokens -> AST. Operator precedence is Jinja2's, lowest first:
// `a if c else b`, or, and, not, comparisons/in/not in, ~, + -, * / // %, **, unary - +, then postfix
// (.attr, [index/slice], (call)) with filters (|f) and tests (is [not] t) binding tightest.
#include "jinja-impl.h"

#include <string.h>

struct parser {
    struct jenv *       e;
    const struct jtok * t;
    size_t              n, i;
    int                 depth;
};

static const struct jtok * peek(struct parser * P) { return &P->t[P->i]; }
static const struct jtok * next(struct parser * P) { const struct jtok * t = &P->t[P->i]; if (t->t != TK_EOF) P->i++; return t; }

static bool is_op(const struct jtok * t, const char * op) { return t->t == TK_OP && strcmp(t->s, op) == 0; }
static bool is_name(const struct jtok * t, const char * nm) { return t->t == TK_NAME && strcmp(t->s, nm) == 0; }

static const char * tok_desc(const struct jtok * t) {
    switch (t->t) {
        case TK_EOF:        return "end of template";
        case TK_TEXT:       return "text";
        case TK_OPEN_STMT:  return "'{%'";
        case TK_CLOSE_STMT: return "'%}'";
        case TK_OPEN_EXPR:  return "'{{'";
        case TK_CLOSE_EXPR: return "'}}'";
        case TK_STRING:     return "a string";
        case TK_INT:
        case TK_FLOAT:      return "a number";
        default:            return t->s;
    }
}

static void expect_op(struct parser * P, const char * op) {
    const struct jtok * t = next(P);
    if (!is_op(t, op)) {
        jerr(P->e, t->pos, "expected '%s', got %s", op, tok_desc(t));
    }
}

static void expect_close(struct parser * P) {
    const struct jtok * t = next(P);
    if (t->t != TK_CLOSE_STMT) {
        jerr(P->e, t->pos, "expected '%%}', got %s", tok_desc(t));
    }
}

static const char * expect_name(struct parser * P) {
    const struct jtok * t = next(P);
    if (t->t != TK_NAME) {
        jerr(P->e, t->pos, "expected a name, got %s", tok_desc(t));
    }
    return t->s;
}

static struct jnode * mk(struct parser * P, enum jnode_kind k, size_t pos) {
    struct jnode * n = jalloc(P->e, sizeof(*n));
    n->kind = k;
    n->pos = pos;
    return n;
}

static void list_push(struct jenv * e, struct jnode_list * l, struct jnode * n) {
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 4;
        struct jnode ** v = jalloc(e, nc * sizeof(*v));
        if (l->n) {
            memcpy(v, l->v, l->n * sizeof(*v));
        }
        l->v = v;
        l->cap = nc;
    }
    l->v[l->n++] = n;
}

static void kw_push(struct parser * P, struct jnode * n, const char * name, struct jnode * val) {
    const char ** names = jalloc(P->e, (n->n_kw + 1) * sizeof(*names));
    if (n->n_kw) {
        memcpy(names, n->kw_names, n->n_kw * sizeof(*names));
    }
    names[n->n_kw++] = name;
    n->kw_names = names;
    list_push(P->e, &n->kw_vals, val);
}

static void enter(struct parser * P, size_t pos) {
    if (++P->depth > JINJA_MAX_DEPTH) {
        jerr(P->e, pos, "template nested too deeply");
    }
}

static struct jnode * parse_expr(struct parser * P);
static struct jnode * parse_or(struct parser * P);
static struct jnode * parse_unary(struct parser * P);

// (args) after a callable / filter / test: positional and name=value
static void parse_call_args(struct parser * P, struct jnode * n) {
    expect_op(P, "(");
    while (!is_op(peek(P), ")")) {
        if (peek(P)->t == TK_NAME && is_op(&P->t[P->i + 1], "=")) {
            const char * name = next(P)->s;
            next(P);
            kw_push(P, n, name, parse_expr(P));
        } else {
            list_push(P->e, &n->items, parse_expr(P));
        }
        if (!is_op(peek(P), ",")) {
            break;
        }
        next(P);
    }
    expect_op(P, ")");
}

static struct jnode * parse_primary(struct parser * P) {
    const struct jtok * t = next(P);
    enter(P, t->pos);
    struct jnode * n = NULL;
    switch (t->t) {
        case TK_STRING: {
            n = mk(P, N_CONST, t->pos);
            n->value = jv_strn(t->s, t->n);
            // adjacent string literals concatenate
            while (peek(P)->t == TK_STRING) {
                const struct jtok * u = next(P);
                struct jbuf b = { 0 };
                jbuf_put(P->e, &b, n->value.u.str.s, n->value.u.str.n);
                jbuf_put(P->e, &b, u->s, u->n);
                n->value = jbuf_value(&b);
            }
            break;
        }
        case TK_INT:   n = mk(P, N_CONST, t->pos); n->value = jv_int(t->i); break;
        case TK_FLOAT: n = mk(P, N_CONST, t->pos); n->value = jv_float(t->f); break;
        case TK_NAME:
            if (!strcmp(t->s, "true") || !strcmp(t->s, "True")) {
                n = mk(P, N_CONST, t->pos);
                n->value = jv_bool(true);
            } else if (!strcmp(t->s, "false") || !strcmp(t->s, "False")) {
                n = mk(P, N_CONST, t->pos);
                n->value = jv_bool(false);
            } else if (!strcmp(t->s, "none") || !strcmp(t->s, "None")) {
                n = mk(P, N_CONST, t->pos);
                n->value = jv_none();
            } else {
                n = mk(P, N_NAME, t->pos);
                n->name = t->s;
            }
            break;
        case TK_OP:
            if (is_op(t, "(")) {
                if (is_op(peek(P), ")")) {
                    next(P);
                    n = mk(P, N_TUPLE, t->pos);
                    break;
                }
                struct jnode * first = parse_expr(P);
                if (is_op(peek(P), ",")) {
                    n = mk(P, N_TUPLE, t->pos);
                    list_push(P->e, &n->items, first);
                    while (is_op(peek(P), ",")) {
                        next(P);
                        if (is_op(peek(P), ")")) {
                            break;
                        }
                        list_push(P->e, &n->items, parse_expr(P));
                    }
                } else {
                    n = first;
                }
                expect_op(P, ")");
                break;
            }
            if (is_op(t, "[")) {
                n = mk(P, N_LIST, t->pos);
                while (!is_op(peek(P), "]")) {
                    list_push(P->e, &n->items, parse_expr(P));
                    if (!is_op(peek(P), ",")) {
                        break;
                    }
                    next(P);
                }
                expect_op(P, "]");
                break;
            }
            if (is_op(t, "{")) {
                n = mk(P, N_DICT, t->pos);
                while (!is_op(peek(P), "}")) {
                    list_push(P->e, &n->items, parse_expr(P));
                    expect_op(P, ":");
                    list_push(P->e, &n->kw_vals, parse_expr(P));
                    if (!is_op(peek(P), ",")) {
                        break;
                    }
                    next(P);
                }
                expect_op(P, "}");
                break;
            }
            jerr(P->e, t->pos, "unexpected %s", tok_desc(t));
        default:
            jerr(P->e, t->pos, "unexpected %s", tok_desc(t));
    }
    P->depth--;
    return n;
}

static struct jnode * parse_filter_or_test_tail(struct parser * P, struct jnode * n);

static struct jnode * parse_postfix(struct parser * P, struct jnode * n) {
    for (;;) {
        const struct jtok * t = peek(P);
        if (is_op(t, ".")) {
            next(P);
            const struct jtok * nm = next(P);
            struct jnode * a = mk(P, N_ATTR, nm->pos);
            if (nm->t == TK_NAME) {
                a->name = nm->s;
            } else if (nm->t == TK_INT) {
                // x.0 (Jinja allows it): an index
                a->kind = N_INDEX;
                a->b = mk(P, N_CONST, nm->pos);
                a->b->value = jv_int(nm->i);
            } else {
                jerr(P->e, nm->pos, "expected an attribute name after '.', got %s", tok_desc(nm));
            }
            a->a = n;
            n = a;
        } else if (is_op(t, "[")) {
            next(P);
            struct jnode * start = NULL, * stop = NULL, * step = NULL;
            bool slice = false;
            if (!is_op(peek(P), ":")) {
                start = parse_expr(P);
            }
            if (is_op(peek(P), ":")) {
                slice = true;
                next(P);
                if (!is_op(peek(P), ":") && !is_op(peek(P), "]")) {
                    stop = parse_expr(P);
                }
                if (is_op(peek(P), ":")) {
                    next(P);
                    if (!is_op(peek(P), "]")) {
                        step = parse_expr(P);
                    }
                }
            }
            expect_op(P, "]");
            struct jnode * x = mk(P, slice ? N_SLICE : N_INDEX, t->pos);
            x->a = n;
            x->b = start;
            x->c = stop;
            x->d = step;
            n = x;
        } else if (is_op(t, "(")) {
            struct jnode * c = mk(P, N_CALL, t->pos);
            c->a = n;
            parse_call_args(P, c);
            n = c;
        } else if (is_op(t, "|") || is_name(t, "is")) {
            n = parse_filter_or_test_tail(P, n);
        } else {
            return n;
        }
    }
}

static struct jnode * parse_filter_or_test_tail(struct parser * P, struct jnode * n) {
    const struct jtok * t = next(P);
    if (is_op(t, "|")) {
        const struct jtok * nm = peek(P);
        struct jnode * f = mk(P, N_FILTER, nm->pos);
        f->name = expect_name(P);
        f->a = n;
        if (is_op(peek(P), "(")) {
            parse_call_args(P, f);
        }
        return f;
    }
    // `is [not] test[(args)]` or `is test arg` (one bare argument, e.g. `is divisibleby 3`, `is sameas none`)
    struct jnode * x = mk(P, N_TEST, t->pos);
    x->a = n;
    if (is_name(peek(P), "not")) {
        next(P);
        x->op = 1;
    }
    const struct jtok * nm = next(P);
    if (nm->t == TK_NAME) {
        x->name = nm->s;
    } else if (is_op(nm, "==") || is_op(nm, "!=") || is_op(nm, "<") || is_op(nm, ">") || is_op(nm, "<=") ||
               is_op(nm, ">=")) {
        x->name = nm->s;
    } else {
        jerr(P->e, nm->pos, "expected a test name after 'is', got %s", tok_desc(nm));
    }
    if (is_op(peek(P), "(")) {
        parse_call_args(P, x);
    } else {
        const struct jtok * a = peek(P);
        if (a->t == TK_STRING || a->t == TK_INT || a->t == TK_FLOAT || is_op(a, "[") || is_op(a, "(") || is_op(a, "{") ||
            (a->t == TK_NAME && !is_name(a, "and") && !is_name(a, "or") && !is_name(a, "if") &&
             !is_name(a, "else") && !is_name(a, "is") && !is_name(a, "in") && !is_name(a, "not"))) {
            list_push(P->e, &x->items, parse_postfix(P, parse_primary(P)));
        }
    }
    return x;
}

static struct jnode * parse_unary(struct parser * P) {
    const struct jtok * t = peek(P);
    enter(P, t->pos);
    struct jnode * n;
    if (is_op(t, "-") || is_op(t, "+")) {
        next(P);
        n = mk(P, is_op(t, "-") ? N_NEG : N_POS, t->pos);
        n->a = parse_unary(P);
    } else {
        n = parse_postfix(P, parse_primary(P));
    }
    P->depth--;
    return n;
}

static struct jnode * binop(struct parser * P, int op, struct jnode * a, struct jnode * b, size_t pos) {
    struct jnode * n = mk(P, N_BINOP, pos);
    n->op = op;
    n->a = a;
    n->b = b;
    return n;
}

static struct jnode * parse_pow(struct parser * P) {
    struct jnode * n = parse_unary(P);
    while (is_op(peek(P), "**")) {
        size_t pos = next(P)->pos;
        n = binop(P, OP_POW, n, parse_unary(P), pos);
    }
    return n;
}

static struct jnode * parse_mul(struct parser * P) {
    struct jnode * n = parse_pow(P);
    for (;;) {
        const struct jtok * t = peek(P);
        int op = is_op(t, "*") ? OP_MUL : is_op(t, "/") ? OP_DIV : is_op(t, "//") ? OP_FLOORDIV : is_op(t, "%") ? OP_MOD : -1;
        if (op < 0) {
            return n;
        }
        next(P);
        n = binop(P, op, n, parse_pow(P), t->pos);
    }
}

static struct jnode * parse_add(struct parser * P) {
    struct jnode * n = parse_mul(P);
    for (;;) {
        const struct jtok * t = peek(P);
        int op = is_op(t, "+") ? OP_ADD : is_op(t, "-") ? OP_SUB : -1;
        if (op < 0) {
            return n;
        }
        next(P);
        n = binop(P, op, n, parse_mul(P), t->pos);
    }
}

static struct jnode * parse_concat(struct parser * P) {
    struct jnode * n = parse_add(P);
    while (is_op(peek(P), "~")) {
        size_t pos = next(P)->pos;
        n = binop(P, OP_CONCAT, n, parse_add(P), pos);
    }
    return n;
}

static struct jnode * parse_compare(struct parser * P) {
    struct jnode * n = parse_concat(P);
    for (;;) {
        const struct jtok * t = peek(P);
        int op = -1;
        if (is_op(t, "==")) op = OP_EQ;
        else if (is_op(t, "!=")) op = OP_NE;
        else if (is_op(t, "<")) op = OP_LT;
        else if (is_op(t, "<=")) op = OP_LE;
        else if (is_op(t, ">")) op = OP_GT;
        else if (is_op(t, ">=")) op = OP_GE;
        else if (is_name(t, "in")) op = OP_IN;
        else if (is_name(t, "not") && is_name(&P->t[P->i + 1], "in")) op = OP_NOTIN;
        if (op < 0) {
            return n;
        }
        next(P);
        if (op == OP_NOTIN) {
            next(P);
        }
        n = binop(P, op, n, parse_concat(P), t->pos);
    }
}

static struct jnode * parse_not(struct parser * P) {
    const struct jtok * t = peek(P);
    if (is_name(t, "not")) {
        next(P);
        enter(P, t->pos);
        struct jnode * n = mk(P, N_NOT, t->pos);
        n->a = parse_not(P);
        P->depth--;
        return n;
    }
    return parse_compare(P);
}

static struct jnode * parse_and(struct parser * P) {
    struct jnode * n = parse_not(P);
    while (is_name(peek(P), "and")) {
        size_t pos = next(P)->pos;
        struct jnode * x = mk(P, N_AND, pos);
        x->a = n;
        x->b = parse_not(P);
        n = x;
    }
    return n;
}

static struct jnode * parse_or(struct parser * P) {
    struct jnode * n = parse_and(P);
    while (is_name(peek(P), "or")) {
        size_t pos = next(P)->pos;
        struct jnode * x = mk(P, N_OR, pos);
        x->a = n;
        x->b = parse_and(P);
        n = x;
    }
    return n;
}

static struct jnode * parse_expr(struct parser * P) {
    enter(P, peek(P)->pos);
    struct jnode * n = parse_or(P);
    if (is_name(peek(P), "if")) {
        size_t pos = next(P)->pos;
        struct jnode * c = mk(P, N_COND, pos);
        c->b = n;
        c->a = parse_or(P);
        if (is_name(peek(P), "else")) {
            next(P);
            c->c = parse_expr(P);
        }
        n = c;
    }
    P->depth--;
    return n;
}

// `a`, `a, b` (a tuple without parentheses, as in set/for targets and values)
static struct jnode * parse_expr_tuple(struct parser * P, bool names_only) {
    size_t pos = peek(P)->pos;
    struct jnode * first = names_only ? parse_primary(P) : parse_expr(P);
    if (names_only) {
        first = parse_postfix(P, first);
    }
    if (!is_op(peek(P), ",")) {
        return first;
    }
    struct jnode * t = mk(P, N_TUPLE, pos);
    list_push(P->e, &t->items, first);
    while (is_op(peek(P), ",")) {
        next(P);
        struct jnode * x = names_only ? parse_postfix(P, parse_primary(P)) : parse_expr(P);
        list_push(P->e, &t->items, x);
    }
    return t;
}

// ---- statements ------------------------------------------------------------------------------------------

// parses statements until one of `ends` ({% end... %}); returns the block and leaves the end keyword's name in *end
static struct jnode * parse_body(struct parser * P, const char * const * ends, const char ** end);

static bool is_one_of(const char * s, const char * const * set) {
    for (; set && *set; set++) {
        if (strcmp(s, *set) == 0) {
            return true;
        }
    }
    return false;
}

static struct jnode * parse_if(struct parser * P, size_t pos) {
    static const char * const ENDS[] = { "elif", "else", "endif", NULL };
    struct jnode * n = mk(P, N_IF, pos);
    n->a = parse_expr(P);
    expect_close(P);
    const char * end;
    n->body = parse_body(P, ENDS, &end);
    if (!strcmp(end, "elif")) {
        n->else_body = parse_if(P, P->t[P->i - 1].pos);
        return n;
    }
    if (!strcmp(end, "else")) {
        static const char * const ENDS2[] = { "endif", NULL };
        expect_close(P);
        n->else_body = parse_body(P, ENDS2, &end);
    }
    expect_close(P);
    return n;
}

static struct jnode * parse_statement(struct parser * P) {
    const struct jtok * open = next(P); // {%
    const struct jtok * kw = next(P);
    if (kw->t != TK_NAME) {
        jerr(P->e, kw->pos, "expected a statement name, got %s", tok_desc(kw));
    }
    const char * k = kw->s;
    enter(P, kw->pos);
    struct jnode * n = NULL;
    const char * end;
    if (!strcmp(k, "if")) {
        n = parse_if(P, open->pos);
    } else if (!strcmp(k, "for")) {
        static const char * const ENDS[] = { "else", "endfor", NULL };
        n = mk(P, N_FOR, open->pos);
        struct jnode * target = parse_expr_tuple(P, true);
        if (target->kind == N_TUPLE) {
            n->items = target->items;
        } else {
            list_push(P->e, &n->items, target);
        }
        for (size_t i = 0; i < n->items.n; i++) {
            if (n->items.v[i]->kind != N_NAME) {
                jerr(P->e, n->items.v[i]->pos, "for loop targets must be names");
            }
        }
        if (!is_name(next(P), "in")) {
            jerr(P->e, P->t[P->i - 1].pos, "expected 'in' in for loop");
        }
        n->a = parse_or(P);
        if (is_name(peek(P), "if")) {
            next(P);
            n->c = parse_or(P);
        }
        if (is_name(peek(P), "recursive")) {
            jerr(P->e, peek(P)->pos, "recursive for loops are not supported");
        }
        expect_close(P);
        n->body = parse_body(P, ENDS, &end);
        if (!strcmp(end, "else")) {
            static const char * const ENDS2[] = { "endfor", NULL };
            expect_close(P);
            n->else_body = parse_body(P, ENDS2, &end);
        }
        expect_close(P);
    } else if (!strcmp(k, "set")) {
        struct jnode * target = parse_expr_tuple(P, true);
        if (is_op(peek(P), "=")) {
            next(P);
            n = mk(P, N_SET, open->pos);
            n->a = target;
            n->b = parse_expr_tuple(P, false);
            expect_close(P);
        } else {
            static const char * const ENDS[] = { "endset", NULL };
            if (target->kind != N_NAME) {
                jerr(P->e, target->pos, "a set block needs a single name");
            }
            n = mk(P, N_SET_BLOCK, open->pos);
            n->a = target;
            if (is_op(peek(P), "|")) {
                // {% set x | filter %}...{% endset %}
                next(P);
                n->name = expect_name(P);
                if (is_op(peek(P), "(")) {
                    parse_call_args(P, n);
                }
            }
            expect_close(P);
            n->body = parse_body(P, ENDS, &end);
            expect_close(P);
        }
    } else if (!strcmp(k, "macro")) {
        static const char * const ENDS[] = { "endmacro", NULL };
        n = mk(P, N_MACRO, open->pos);
        n->name = expect_name(P);
        expect_op(P, "(");
        while (!is_op(peek(P), ")")) {
            const struct jtok * pn = peek(P);
            const char * pname = expect_name(P);
            struct jnode * dflt = NULL;
            if (is_op(peek(P), "=")) {
                next(P);
                dflt = parse_expr(P);
            }
            struct jnode * pnode = mk(P, N_NAME, pn->pos);
            pnode->name = pname;
            list_push(P->e, &n->items, pnode);
            list_push(P->e, &n->kw_vals, dflt);
            if (!is_op(peek(P), ",")) {
                break;
            }
            next(P);
        }
        expect_op(P, ")");
        expect_close(P);
        n->body = parse_body(P, ENDS, &end);
        if (peek(P)->t == TK_NAME) {
            next(P); // {% endmacro name %}
        }
        expect_close(P);
    } else if (!strcmp(k, "call")) {
        static const char * const ENDS[] = { "endcall", NULL };
        n = mk(P, N_CALL_BLOCK, open->pos);
        if (is_op(peek(P), "(")) {
            // caller parameters
            struct jnode tmp;
            memset(&tmp, 0, sizeof(tmp));
            expect_op(P, "(");
            while (!is_op(peek(P), ")")) {
                const struct jtok * pn = peek(P);
                struct jnode * pnode = mk(P, N_NAME, pn->pos);
                pnode->name = expect_name(P);
                list_push(P->e, &n->items, pnode);
                if (!is_op(peek(P), ",")) {
                    break;
                }
                next(P);
            }
            expect_op(P, ")");
        }
        n->a = parse_expr(P);
        if (n->a->kind != N_CALL) {
            jerr(P->e, n->a->pos, "{%% call %%} needs a macro call");
        }
        expect_close(P);
        n->body = parse_body(P, ENDS, &end);
        expect_close(P);
    } else if (!strcmp(k, "filter")) {
        static const char * const ENDS[] = { "endfilter", NULL };
        n = mk(P, N_FILTER_BLOCK, open->pos);
        n->name = expect_name(P);
        if (is_op(peek(P), "(")) {
            parse_call_args(P, n);
        }
        expect_close(P);
        n->body = parse_body(P, ENDS, &end);
        expect_close(P);
    } else if (!strcmp(k, "generation")) {
        // HF's {% generation %} marks assistant text for training masks; it renders its body
        static const char * const ENDS[] = { "endgeneration", NULL };
        expect_close(P);
        n = parse_body(P, ENDS, &end);
        expect_close(P);
    } else if (!strcmp(k, "do")) {
        n = mk(P, N_DO, open->pos);
        n->a = parse_expr(P);
        expect_close(P);
    } else if (!strcmp(k, "break") || !strcmp(k, "continue")) {
        n = mk(P, k[0] == 'b' ? N_BREAK : N_CONTINUE, open->pos);
        expect_close(P);
    } else {
        jerr(P->e, kw->pos, "unknown statement '%s'", k);
    }
    P->depth--;
    return n;
}

static struct jnode * parse_body(struct parser * P, const char * const * ends, const char ** end) {
    struct jnode * blk = mk(P, N_BLOCK, peek(P)->pos);
    for (;;) {
        const struct jtok * t = peek(P);
        if (t->t == TK_EOF) {
            if (ends) {
                jerr(P->e, t->pos, "unexpected end of template, expected '{%% %s %%}'", ends[0] ? ends[0] : "end");
            }
            return blk;
        }
        if (t->t == TK_TEXT) {
            next(P);
            struct jnode * x = mk(P, N_TEXT, t->pos);
            x->value = jv_strn(t->s, t->n);
            list_push(P->e, &blk->items, x);
        } else if (t->t == TK_OPEN_EXPR) {
            next(P);
            struct jnode * x = mk(P, N_OUTPUT, t->pos);
            x->a = parse_expr_tuple(P, false);
            const struct jtok * c = next(P);
            if (c->t != TK_CLOSE_EXPR) {
                jerr(P->e, c->pos, "expected '}}', got %s", tok_desc(c));
            }
            list_push(P->e, &blk->items, x);
        } else if (t->t == TK_OPEN_STMT) {
            const struct jtok * kw = &P->t[P->i + 1];
            if (kw->t == TK_NAME && (is_one_of(kw->s, ends) || !strncmp(kw->s, "end", 3) || !strcmp(kw->s, "elif") ||
                                     !strcmp(kw->s, "else"))) {
                if (!is_one_of(kw->s, ends)) {
                    jerr(P->e, kw->pos, "unexpected '{%% %s %%}'", kw->s);
                }
                P->i += 2;
                *end = kw->s;
                return blk;
            }
            list_push(P->e, &blk->items, parse_statement(P));
        } else {
            jerr(P->e, t->pos, "unexpected %s", tok_desc(t));
        }
    }
}

struct jnode * jinja_parse(struct jenv * e, const struct jtok * toks, size_t n_tok) {
    struct parser P = { e, toks, n_tok, 0, 0 };
    const char * end = NULL;
    return parse_body(&P, NULL, &end);
}
