// Regular expression -> GBNF for the JSON schema "pattern" keyword (see json-schema-to-grammar-impl.h), as
// llama.cpp's _visit_pattern: a pattern anchored with ^...$ of literals, ., [...] classes, (...) and (?:...)
// groups, |, *, +, ?, {m,n}, \d \w \s. Repeated sub-expressions get their own rules. Where llama.cpp would
// loop or emit GBNF its parser rejects, an error is reported instead (those places say so).
#include "json-schema-to-grammar-impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

struct pat_item {
    const char * s;
    bool literal;
};

struct pat_seq {
    struct pat_item * v;
    size_t n, cap;
};

struct pat {
    struct jsg * c;
    const char * s;     // the pattern without ^ and $
    size_t len;
    size_t i;
    const char * name;
    struct jsg_strs sub_bodies, sub_ids; // repeated sub-expressions get their own rules, one per distinct body
    bool failed;
};

static void seq_push(struct pat * p, struct pat_seq * q, const char * s, bool literal) {
    if (jsg_grow(p->c, (void **) &q->v, &q->cap, q->n, sizeof(*q->v))) {
        q->v[q->n].s = s;
        q->v[q->n].literal = literal;
        q->n++;
    }
}

static const char * to_rule(struct pat * p, struct pat_item it) {
    return it.literal ? JSG_CAT(p->c, "\"", it.s, "\"") : it.s;
}

// consecutive literals merged, items joined by spaces
static const char * join_seq(struct pat * p, const struct pat_seq * q) {
    struct common_sb out = { 0 };
    struct common_sb lit = { 0 };
    bool first = true;
    for (size_t k = 0; k <= q->n; k++) {
        const bool flush = k == q->n || !q->v[k].literal;
        if (flush && lit.n > 0) {
            if (!first) {
                common_sb_addc(&out, ' ');
            }
            first = false;
            common_sb_addc(&out, '"');
            common_sb_add(&out, lit.s);
            common_sb_addc(&out, '"');
            lit.n = 0;
            lit.s[0] = '\0';
        }
        if (k == q->n) {
            break;
        }
        if (q->v[k].literal) {
            common_sb_add(&lit, q->v[k].s);
        } else {
            if (!first) {
                common_sb_addc(&out, ' ');
            }
            first = false;
            common_sb_add(&out, q->v[k].s);
        }
    }
    if (lit.oom) {
        out.oom = true;
    }
    free(lit.s);
    return jsg_sb_own(p->c, &out);
}

static void pat_error(struct pat * p, const char * msg) {
    if (!p->failed) {
        jsg_add_error(p->c, "%s", msg);
    }
    p->failed = true;
}

// the character before position i is an unescaped quantifier (*, +, ?, or the } of {m,n}): a second
// quantifier would repeat something that may be empty, which GBNF rejects as left recursion (and regex
// calls "nothing to repeat"); only the lazy "?" may follow
static bool follows_quantifier(const struct pat * p) {
    if (p->i == 0 || !strchr("*+?}", p->s[p->i - 1])) {
        return false;
    }
    size_t n_bs = 0;
    while (n_bs + 2 <= p->i && p->s[p->i - 2 - n_bs] == '\\') {
        n_bs++;
    }
    return n_bs % 2 == 0;
}

static const char * get_dot(struct pat * p) {
    return jsg_add_rule(p->c, "dot", p->c->dotall ? "[\\U00000000-\\U0010FFFF]" : "[^\\x0A\\x0D]");
}

static bool is_non_literal(char ch) {
    return ch != '\0' && strchr("|.()[]{}*+?", ch) != NULL;
}

static bool is_quantifier(char ch) {
    return ch != '\0' && strchr("*+?{", ch) != NULL;
}

// \d \w \s and their negations: not in llama.cpp's C++ converter (it copies them into the GBNF literal,
// which its parser rejects); written as the character classes they stand for
static const char * class_escape(char ch) {
    switch (ch) {
        case 'd': return "[0-9]";
        case 'D': return "[^0-9]";
        case 'w': return "[a-zA-Z0-9_]";
        case 'W': return "[^a-zA-Z0-9_]";
        case 's': return "[ \\t\\n\\r\\x0C\\x0B]";
        case 'S': return "[^ \\t\\n\\r\\x0C\\x0B]";
        default:  return NULL;
    }
}

// an escaped character inside a GBNF literal or class: GBNF's own escapes pass through, any other
// character stands for itself (a regex identity escape such as \/ or \-)
static void escaped_char(struct common_sb * out, char next, bool in_class) {
    switch (next) {
        case 'n': case 't': case 'r': case '\\': case '"': case ']': case '[':
            common_sb_addc(out, '\\');
            common_sb_addc(out, next);
            break;
        case 'f': common_sb_add(out, "\\x0C"); break;
        case 'v': common_sb_add(out, "\\x0B"); break;
        default:
            if (in_class && (next == '-' || next == '^')) {
                common_sb_addf(out, "\\x%02X", (unsigned char) next);
            } else {
                common_sb_addc(out, next);
            }
    }
}

// the number of hex digits GBNF (and the regex) read after \x, \u or \U
static size_t hex_escape_digits(char kind) {
    return kind == 'x' ? 2 : kind == 'u' ? 4 : kind == 'U' ? 8 : 0;
}

// at a \x, \u or \U escape: whether its hex digits are all there (GBNF rejects the escape otherwise)
static bool hex_escape_ok(const struct pat * p) {
    const size_t nd = hex_escape_digits(p->s[p->i + 1]);
    if (nd == 0 || p->i + 2 + nd > p->len) {
        return false;
    }
    for (size_t k = 0; k < nd; k++) {
        if (!isxdigit((unsigned char) p->s[p->i + 2 + k])) {
            return false;
        }
    }
    return true;
}

// copies a \x, \u or \U escape with its digits (the same escape in GBNF); refuses one without them
static void hex_escape(struct pat * p, struct common_sb * out) {
    const size_t nd = hex_escape_digits(p->s[p->i + 1]);
    if (!hex_escape_ok(p)) {
        pat_error(p, "Unsupported pattern syntax: \\x, \\u or \\U without its hex digits");
        p->i += 2;
        return;
    }
    common_sb_addn(out, p->s + p->i, nd + 2);
    p->i += nd + 2;
}

// the code point of the class member starting at s[i] (a character, a whole UTF-8 sequence or a single-character
// escape) and its length in *n; false for a class escape (\d ...), a bad escape or the middle of a sequence
static bool class_member(const struct pat * p, size_t i, uint32_t * cp, size_t * n) {
    const unsigned char c0 = (unsigned char) p->s[i];
    if (c0 == '\\') {
        if (i + 1 >= p->len || class_escape(p->s[i + 1])) {
            return false;
        }
        const char e = p->s[i + 1];
        const size_t nd = hex_escape_digits(e);
        if (nd > 0) {
            if (i + 2 + nd > p->len) {
                return false;
            }
            uint32_t v = 0;
            for (size_t k = 0; k < nd; k++) {
                const char h = p->s[i + 2 + k];
                if (!isxdigit((unsigned char) h)) {
                    return false;
                }
                v = v * 16 + (uint32_t) (isdigit((unsigned char) h) ? h - '0' : (tolower((unsigned char) h) - 'a' + 10));
            }
            *cp = v;
            *n  = 2 + nd;
            return true;
        }
        *cp = e == 'n' ? 0x0A : e == 't' ? 0x09 : e == 'r' ? 0x0D : e == 'f' ? 0x0C : e == 'v' ? 0x0B : (unsigned char) e;
        *n  = 2;
        return true;
    }
    if ((c0 & 0xC0) == 0x80) {
        return false;
    }
    const size_t len = c0 < 0x80 ? 1 : c0 >= 0xF0 ? 4 : c0 >= 0xE0 ? 3 : 2;
    if (i + len > p->len) {
        return false;
    }
    uint32_t v = len == 1 ? c0 : len == 2 ? (c0 & 0x1Fu) : len == 3 ? (c0 & 0x0Fu) : (c0 & 0x07u);
    for (size_t k = 1; k < len; k++) {
        v = (v << 6) | ((unsigned char) p->s[i + k] & 0x3Fu);
    }
    *cp = v;
    *n  = len;
    return true;
}

static const char * transform(struct pat * p, int depth);

static void pat_group(struct pat * p, struct pat_seq * seq, int depth) {
    p->i++;
    if (p->i < p->len && p->s[p->i] == '?') {
        if (p->i + 1 < p->len && p->s[p->i + 1] == ':') {
            p->i += 2; // non-capturing group: same as a group
        } else {
            // lookahead / lookbehind: skipped with a warning, as llama.cpp does
            jsg_add_warning(p->c, "Unsupported pattern syntax");
            int d = 1;
            while (p->i < p->len && d > 0) {
                if (p->s[p->i] == '\\' && p->i + 1 < p->len) {
                    p->i += 2;
                } else {
                    if (p->s[p->i] == '(') {
                        d++;
                    } else if (p->s[p->i] == ')') {
                        d--;
                    }
                    p->i++;
                }
            }
            return;
        }
    }
    const char * inner = transform(p, depth + 1);
    seq_push(p, seq, JSG_CAT(p->c, "(", inner, ")"), false);
}

static void pat_class(struct pat * p, struct pat_seq * seq) {
    struct common_sb b = { 0 };
    common_sb_addc(&b, '[');
    p->i++;
    const size_t body = p->i + (p->i < p->len && p->s[p->i] == '^' ? 1 : 0);
    if (body < p->len && p->s[body] == ']') {
        // [] / [^]: GBNF has no empty class (and regex dialects disagree on what it means)
        pat_error(p, "Unsupported pattern syntax: empty character class");
    }
    while (p->i < p->len && p->s[p->i] != ']') {
        uint32_t lo, hi;
        size_t n_lo, n_hi;
        if (class_member(p, p->i, &lo, &n_lo) && p->i + n_lo + 1 < p->len && p->s[p->i + n_lo] == '-' &&
            p->s[p->i + n_lo + 1] != ']' && class_member(p, p->i + n_lo + 1, &hi, &n_hi) && hi < lo) {
            pat_error(p, "Unsupported pattern syntax: reversed range in a character class");
        }
        if (p->s[p->i] == '\\' && p->i + 1 < p->len && hex_escape_digits(p->s[p->i + 1]) > 0) {
            hex_escape(p, &b);
            continue;
        }
        if (p->s[p->i] == '\\' && p->i + 1 < p->len) {
            const char next = p->s[p->i + 1];
            const char * cls = class_escape(next);
            if (cls && (next == 'd' || next == 'w' || next == 's')) {
                common_sb_addn(&b, cls + 1, strlen(cls) - 2); // the class body without its brackets
            } else if (cls) {
                pat_error(p, "Unsupported pattern syntax: negated class escape inside [...]");
            } else {
                escaped_char(&b, next, true);
            }
            p->i += 2;
        } else {
            common_sb_addc(&b, p->s[p->i]);
            p->i++;
        }
    }
    if (p->i >= p->len) {
        pat_error(p, "Unbalanced square brackets");
    }
    common_sb_addc(&b, ']');
    p->i++;
    seq_push(p, seq, jsg_sb_own(p->c, &b), false);
}

static bool parse_count(const char * s, size_t n, int * out) {
    if (n == 0 || n > 9) {
        return false;
    }
    int v = 0;
    for (size_t k = 0; k < n; k++) {
        if (s[k] < '0' || s[k] > '9') {
            return false;
        }
        v = v * 10 + (s[k] - '0');
    }
    *out = v;
    return true;
}

static void pat_braces(struct pat * p, struct pat_seq * seq) {
    const bool quantifier_follows = follows_quantifier(p);
    const size_t start = ++p->i;
    while (p->i < p->len && p->s[p->i] != '}') {
        p->i++;
    }
    if (p->i >= p->len) {
        pat_error(p, "Unbalanced curly brackets");
        return;
    }
    const char * body = p->s + start;
    const size_t n = p->i - start;
    p->i++;
    int min_times = 0, max_times = JSG_NO_MAX;
    const char * comma = memchr(body, ',', n);
    if (!comma) {
        if (!parse_count(body, n, &min_times)) {
            pat_error(p, "Invalid number in curly brackets");
            return;
        }
        max_times = min_times;
    } else {
        const size_t n0 = (size_t) (comma - body);
        const size_t n1 = n - n0 - 1;
        if (memchr(comma + 1, ',', n1)) {
            pat_error(p, "Wrong number of values in curly brackets");
            return;
        }
        if ((n0 > 0 && !parse_count(body, n0, &min_times)) || (n1 > 0 && !parse_count(comma + 1, n1, &max_times))) {
            pat_error(p, "Invalid number in curly brackets");
            return;
        }
    }
    if (seq->n == 0 || (!seq->v[seq->n - 1].literal && strcmp(seq->v[seq->n - 1].s, "|") == 0)) {
        pat_error(p, "Quantifier without a preceding item in pattern");
        return;
    }
    if (quantifier_follows) {
        pat_error(p, "Unsupported pattern syntax: a quantifier after a quantifier");
        return;
    }
    struct pat_item * last = &seq->v[seq->n - 1];
    const char * sub = last->s;
    if (!last->literal) {
        const char * id = NULL;
        for (size_t k = 0; k < p->sub_bodies.n && k < p->sub_ids.n; k++) {
            if (strcmp(p->sub_bodies.v[k], sub) == 0) {
                id = p->sub_ids.v[k];
            }
        }
        if (!id) {
            id = jsg_add_rule(p->c, JSG_CAT(p->c, p->name, "-", jsg_int_str(p->c, (long long) p->sub_bodies.n + 1)),
                              sub);
            jsg_strs_push(p->c, &p->sub_bodies, sub);
            jsg_strs_push(p->c, &p->sub_ids, id);
        }
        sub = id;
    }
    last->s = jsg_build_repetition(p->c, last->literal ? JSG_CAT(p->c, "\"", sub, "\"") : sub, min_times, max_times,
                                   "");
    last->literal = false;
}

static void pat_literal(struct pat * p, struct pat_seq * seq) {
    struct common_sb lit = { 0 };
    while (p->i < p->len) {
        const char ch = p->s[p->i];
        if (ch == '\\' && p->i + 1 < p->len) {
            const char next = p->s[p->i + 1];
            // a quantified escape or a class escape is an item of its own
            if (lit.n > 0 && (class_escape(next) || (p->i + 2 < p->len && is_quantifier(p->s[p->i + 2])))) {
                break;
            }
            if (class_escape(next)) {
                break;
            }
            if (hex_escape_digits(next) > 0) {
                // a quantifier after the digits applies to this character alone: an item of its own
                const size_t end = p->i + 2 + hex_escape_digits(next);
                if (lit.n > 0 && hex_escape_ok(p) && end < p->len && is_quantifier(p->s[end])) {
                    break;
                }
                hex_escape(p, &lit);
                continue;
            }
            if (strchr("^$.[]()|{}*+?", next)) {
                common_sb_addc(&lit, next);
            } else {
                escaped_char(&lit, next, false);
            }
            p->i += 2;
        } else if (ch == '"') {
            common_sb_add(&lit, "\\\"");
            p->i++;
        } else if (ch == '\\') {
            // a backslash with nothing after it (e.g. "\\$" whose $ was taken for the anchor)
            pat_error(p, "Unsupported pattern syntax: a trailing backslash");
            p->i++;
        } else if (!is_non_literal(ch)) {
            // one character: a UTF-8 sequence is not split, or a quantifier would repeat only its last byte
            size_t n = 1;
            while (p->i + n < p->len && ((unsigned char) ch & 0xC0) == 0xC0 && n < 4 &&
                   ((unsigned char) p->s[p->i + n] & 0xC0) == 0x80) {
                n++;
            }
            const size_t next = p->i + n;
            // a quantified character is an item of its own: it ends the literal collected so far
            if (!(next >= p->len || lit.n == 0 || p->s[next] == '.' || !is_non_literal(p->s[next]))) {
                break;
            }
            common_sb_addn(&lit, p->s + p->i, n);
            p->i = next;
        } else {
            break;
        }
    }
    if (lit.n > 0 || lit.oom) {
        seq_push(p, seq, jsg_sb_own(p->c, &lit), true);
    } else {
        free(lit.s);
    }
}

// one alternation level, up to its closing ')' (consumed) or the end of the pattern
static const char * transform(struct pat * p, int depth) {
    struct pat_seq seq = { 0 };
    const char * result = "";
    if (depth > JSG_MAX_DEPTH) {
        pat_error(p, "pattern nested too deeply");
        return "";
    }
    bool closed = false;
    while (p->i < p->len && !p->failed && !p->c->oom) {
        const char ch = p->s[p->i];
        if (ch == '.') {
            seq_push(p, &seq, get_dot(p), false);
            p->i++;
        } else if (ch == '(') {
            pat_group(p, &seq, depth);
        } else if (ch == ')') {
            p->i++;
            if (depth == 0) {
                // llama.cpp stops reading the pattern here (and ignores the rest); refused instead
                pat_error(p, "Unbalanced parentheses");
            }
            closed = true;
            break;
        } else if (ch == '[') {
            pat_class(p, &seq);
        } else if (ch == '|') {
            seq_push(p, &seq, "|", false);
            p->i++;
        } else if (ch == '*' || ch == '+' || ch == '?') {
            if (seq.n == 0 || (!seq.v[seq.n - 1].literal && strcmp(seq.v[seq.n - 1].s, "|") == 0)) {
                pat_error(p, "Quantifier without a preceding item in pattern");
                break;
            }
            if (ch != '?' && follows_quantifier(p)) {
                pat_error(p, "Unsupported pattern syntax: a quantifier after a quantifier");
                break;
            }
            const char q[2] = { ch, '\0' };
            seq.v[seq.n - 1].s = JSG_CAT(p->c, to_rule(p, seq.v[seq.n - 1]), q);
            seq.v[seq.n - 1].literal = false;
            p->i++;
        } else if (ch == '{') {
            pat_braces(p, &seq);
        } else if (ch == ']' || ch == '}') {
            // llama.cpp loops forever on these; refused
            pat_error(p, "Unbalanced brackets in pattern");
        } else if (ch == '\\' && p->i + 1 < p->len && class_escape(p->s[p->i + 1])) {
            seq_push(p, &seq, class_escape(p->s[p->i + 1]), false);
            p->i += 2;
        } else {
            const size_t before = p->i;
            pat_literal(p, &seq);
            if (p->i == before) {
                pat_error(p, "Unsupported pattern syntax"); // nothing consumed: never loop on it
            }
        }
    }
    if (depth > 0 && !closed && !p->failed) {
        pat_error(p, "Unbalanced parentheses");
    }
    result = join_seq(p, &seq);
    free(seq.v);
    return result;
}

const char * jsg_visit_pattern(struct jsg * c, const char * pattern, const char * name) {
    const size_t n = strlen(pattern);
    if (n < 2 || pattern[0] != '^' || pattern[n - 1] != '$') {
        jsg_add_error(c, "Pattern must start with '^' and end with '$'");
        return "";
    }
    struct pat p = { 0 };
    p.c = c;
    p.s = pattern + 1;
    p.len = n - 2;
    p.name = name;
    const char * body = transform(&p, 0);
    free(p.sub_bodies.v);
    free(p.sub_ids.v);
    if (p.failed) {
        return "";
    }
    return jsg_add_rule(c, name, JSG_CAT(c, "\"\\\"\" (", body, ") \"\\\"\" space"));
}
