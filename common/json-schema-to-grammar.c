// JSON schema -> GBNF (see json-schema-to-grammar.h). The conversion follows llama.cpp's
// common/json-schema-to-grammar.cpp rule for rule, so the grammar text matches it: rules are kept in a table
// printed sorted by name, a name already taken by another body gets a number appended, primitive rules pull
// in the rules they use. Where llama.cpp would emit a grammar its own GBNF parser rejects, or would loop
// (stray ']' in a pattern), this file reports an error or emits the equivalent valid GBNF instead; those
// places say so.
//
// Memory: every string made during one conversion is recorded in the converter and freed at the end, so the
// string-building code below never frees; running out of memory sets a flag and yields "" until the end.
#include "json-schema-to-grammar.h"

#include "log.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSG_NO_MAX    INT_MAX   // "no upper bound" for repetitions (llama.cpp: numeric_limits<int>::max())
#define JSG_MAX_DEPTH 256       // nested schemas / refs followed before giving up (keeps the C stack bounded)
#define JSG_DUMP_MAX  200       // bytes of a schema quoted in an error message

// llama.cpp's SPACE_RULE and primitive rules (facts of its grammar output, verbatim)
static const char * const SPACE_RULE = "| \" \" | \"\\n\"{1,2} [ \\t]{0,20}";

struct builtin_rule {
    const char * name;
    const char * content;
    const char * deps[6];
};

static const struct builtin_rule PRIMITIVE_RULES[] = {
    { "boolean",       "(\"true\" | \"false\") space", { NULL } },
    { "decimal-part",  "[0-9]{1,16}", { NULL } },
    { "integral-part", "[0] | [1-9] [0-9]{0,15}", { NULL } },
    { "number",        "(\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space",
                       { "integral-part", "decimal-part", NULL } },
    { "integer",       "(\"-\"? integral-part) space", { "integral-part", NULL } },
    { "value",         "object | array | string | number | boolean | null",
                       { "object", "array", "string", "number", "boolean", "null" } },
    { "object",        "\"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? \"}\" space",
                       { "string", "value", NULL } },
    { "array",         "\"[\" space ( value (\",\" space value)* )? \"]\" space", { "value", NULL } },
    { "uuid",          "\"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" "
                       "[0-9a-fA-F]{12} \"\\\"\" space", { NULL } },
    { "char",          "[^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})", { NULL } },
    { "string",        "\"\\\"\" char* \"\\\"\" space", { "char", NULL } },
    { "null",          "\"null\" space", { NULL } },
};

static const struct builtin_rule STRING_FORMAT_RULES[] = {
    { "date",             "[0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | [1-2] [0-9] | \"3\" [0-1] )",
                          { NULL } },
    { "time",             "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{3} )? "
                          "( \"Z\" | ( \"+\" | \"-\" ) ( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )", { NULL } },
    { "date-time",        "date \"T\" time", { "date", "time", NULL } },
    { "date-string",      "\"\\\"\" date \"\\\"\" space", { "date", NULL } },
    { "time-string",      "\"\\\"\" time \"\\\"\" space", { "time", NULL } },
    { "date-time-string", "\"\\\"\" date-time \"\\\"\" space", { "date-time", NULL } },
};

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

static const struct builtin_rule * find_builtin(const struct builtin_rule * tab, size_t n, const char * name) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tab[i].name, name) == 0) {
            return &tab[i];
        }
    }
    return NULL;
}

static const struct builtin_rule * find_primitive(const char * name) {
    return find_builtin(PRIMITIVE_RULES, N_ELEMS(PRIMITIVE_RULES), name);
}

static const struct builtin_rule * find_string_format(const char * name) {
    return find_builtin(STRING_FORMAT_RULES, N_ELEMS(STRING_FORMAT_RULES), name);
}

// rule names a schema's own names must not take (they get a '-' appended)
static bool is_reserved_name(const char * name) {
    return strcmp(name, "root") == 0 || find_primitive(name) != NULL || find_string_format(name) != NULL;
}

//
// growable strings
//

struct sb {
    char * s;
    size_t n, cap;
    bool   oom;
};

static void sb_addn(struct sb * b, const char * d, size_t n) {
    if (b->oom) {
        return;
    }
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 64;
        while (nc < b->n + n + 1) {
            nc *= 2;
        }
        char * ns = realloc(b->s, nc);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = nc;
    }
    memcpy(b->s + b->n, d, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_add(struct sb * b, const char * s) {
    sb_addn(b, s, strlen(s));
}

static void sb_addc(struct sb * b, char c) {
    sb_addn(b, &c, 1);
}

static void sb_addf(struct sb * b, const char * fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_addf(struct sb * b, const char * fmt, ...) {
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t) n >= sizeof(buf)) {
        b->oom = true; // only short numbers are formatted here
        return;
    }
    sb_addn(b, buf, (size_t) n);
}

//
// converter state
//

struct jsg_rule {
    const char * name;
    const char * body;
};

struct jsg_ref {
    const char   * ref;
    const json_t * target; // borrowed from the converter's copy of the schema
};

struct jsg {
    bool oom;
    bool dotall;

    void ** owned; // every string made during the conversion, freed at the end
    size_t  n_owned, cap_owned;

    struct jsg_rule * rules;
    size_t n_rules, cap_rules;

    struct jsg_ref * refs;
    size_t n_refs, cap_refs;

    const char ** resolving; // refs whose rule is being built (a ref met again inside is a recursive use)
    size_t n_resolving, cap_resolving;

    json_t ** temps; // JSON values made during the conversion (schema copies with one "type" each)
    size_t n_temps, cap_temps;

    struct sb errors;
    struct sb warnings;
    int  depth;
    bool too_deep;
};

static bool grow(struct jsg * c, void ** arr, size_t * cap, size_t n, size_t elem) {
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
    if (!grow(c, (void **) &c->owned, &c->cap_owned, c->n_owned, sizeof(void *))) {
        free(s);
        return "";
    }
    c->owned[c->n_owned++] = s;
    return s;
}

static const char * sb_own(struct jsg * c, struct sb * b) {
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
static const char * cat_(struct jsg * c, const char * first, ...) {
    struct sb b = { 0 };
    va_list ap;
    va_start(ap, first);
    for (const char * s = first; s; s = va_arg(ap, const char *)) {
        sb_add(&b, s);
    }
    va_end(ap);
    return sb_own(c, &b);
}
#define CAT(c, ...) cat_((c), __VA_ARGS__, (const char *) NULL)

static const char * int_str(struct jsg * c, long long v) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", v);
    return CAT(c, buf);
}

static const char * sep_name(struct jsg * c, const char * name, const char * suffix) {
    // llama.cpp's name + (name.empty() ? "" : "-") + suffix
    return *name ? CAT(c, name, "-", suffix) : CAT(c, suffix);
}

static void add_error(struct jsg * c, const char * fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_error(struct jsg * c, const char * fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (c->errors.n > 0) {
        sb_addc(&c->errors, '\n');
    }
    sb_add(&c->errors, buf);
}

static void add_warning(struct jsg * c, const char * msg) {
    if (c->warnings.n > 0) {
        sb_add(&c->warnings, "; ");
    }
    sb_add(&c->warnings, msg);
}

//
// JSON text as nlohmann::json::dump() writes it (compact, UTF-8 kept, control characters as \u00xx):
// constants and property names appear in the grammar in this form
//

// shortest decimal digits that read back as v, formatted as nlohmann does (fixed notation for decimal
// exponents in (-4, 15], always with a fraction part, else d.ddde+XX)
static void dump_real(struct sb * b, double v) {
    if (!isfinite(v)) {
        sb_add(b, "null"); // what nlohmann writes for NaN / infinity
        return;
    }
    if (v == 0.0) {
        sb_add(b, signbit(v) ? "-0.0" : "0.0");
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
        sb_addc(b, '-');
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
        sb_addn(b, digits, (size_t) k);
        for (int i = k; i < n; i++) {
            sb_addc(b, '0');
        }
        sb_add(b, ".0");
    } else if (0 < n && n <= 15) {
        sb_addn(b, digits, (size_t) n);
        sb_addc(b, '.');
        sb_add(b, digits + n);
    } else if (-4 < n && n <= 0) {
        sb_add(b, "0.");
        for (int i = n; i < 0; i++) {
            sb_addc(b, '0');
        }
        sb_add(b, digits);
    } else {
        sb_addc(b, digits[0]);
        if (k > 1) {
            sb_addc(b, '.');
            sb_add(b, digits + 1);
        }
        const int e = n - 1;
        sb_addf(b, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
}

static void dump_string(struct sb * b, const char * s, size_t n) {
    sb_addc(b, '"');
    for (size_t i = 0; i < n; i++) {
        const unsigned char ch = (unsigned char) s[i];
        switch (ch) {
            case '"':  sb_add(b, "\\\""); break;
            case '\\': sb_add(b, "\\\\"); break;
            case '\b': sb_add(b, "\\b");  break;
            case '\f': sb_add(b, "\\f");  break;
            case '\n': sb_add(b, "\\n");  break;
            case '\r': sb_add(b, "\\r");  break;
            case '\t': sb_add(b, "\\t");  break;
            default:
                if (ch < 0x20) {
                    sb_addf(b, "\\u%04x", ch);
                } else {
                    sb_addc(b, (char) ch);
                }
        }
    }
    sb_addc(b, '"');
}

static void dump_json(struct sb * b, const json_t * v, int depth) {
    if (depth > JSG_MAX_DEPTH) {
        b->oom = true;
        return;
    }
    switch (json_typeof(v)) {
        case JSON_NULL:    sb_add(b, "null");  break;
        case JSON_TRUE:    sb_add(b, "true");  break;
        case JSON_FALSE:   sb_add(b, "false"); break;
        case JSON_INTEGER: sb_addf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
        case JSON_REAL:    dump_real(b, json_real_value(v)); break;
        case JSON_STRING:  dump_string(b, json_string_value(v), json_string_length(v)); break;
        case JSON_ARRAY: {
            sb_addc(b, '[');
            size_t i;
            const json_t * el;
            json_array_foreach(v, i, el) {
                if (i > 0) {
                    sb_addc(b, ',');
                }
                dump_json(b, el, depth + 1);
            }
            sb_addc(b, ']');
            break;
        }
        case JSON_OBJECT: {
            sb_addc(b, '{');
            bool first = true;
            const char * k;
            const json_t * el;
            json_object_foreach((json_t *) v, k, el) {
                if (!first) {
                    sb_addc(b, ',');
                }
                first = false;
                dump_string(b, k, strlen(k));
                sb_addc(b, ':');
                dump_json(b, el, depth + 1);
            }
            sb_addc(b, '}');
            break;
        }
    }
}

static const char * dump(struct jsg * c, const json_t * v) {
    struct sb b = { 0 };
    dump_json(&b, v, 0);
    return sb_own(c, &b);
}

// a schema quoted in an error message, cut short
static const char * dump_short(struct jsg * c, const json_t * v) {
    const char * s = dump(c, v);
    if (strlen(s) <= JSG_DUMP_MAX) {
        return s;
    }
    char buf[JSG_DUMP_MAX + 4];
    memcpy(buf, s, JSG_DUMP_MAX);
    memcpy(buf + JSG_DUMP_MAX, "...", 4);
    return CAT(c, buf);
}

static void format_literal_into(struct sb * b, const char * s) {
    sb_addc(b, '"');
    for (; *s; s++) {
        switch (*s) {
            case '\r': sb_add(b, "\\r");  break;
            case '\n': sb_add(b, "\\n");  break;
            case '"':  sb_add(b, "\\\""); break;
            case '\\': sb_add(b, "\\\\"); break;
            default:   sb_addc(b, *s);
        }
    }
    sb_addc(b, '"');
}

char * gbnf_format_literal(const char * literal) {
    struct sb b = { 0 };
    format_literal_into(&b, literal ? literal : "");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

static const char * format_literal(struct jsg * c, const char * s) {
    struct sb b = { 0 };
    format_literal_into(&b, s);
    return sb_own(c, &b);
}

static const char * constant_rule(struct jsg * c, const json_t * v) {
    return format_literal(c, dump(c, v));
}

//
// the rule table
//

static const char * find_rule(const struct jsg * c, const char * name) {
    for (size_t i = 0; i < c->n_rules; i++) {
        if (strcmp(c->rules[i].name, name) == 0) {
            return c->rules[i].body;
        }
    }
    return NULL;
}

static void set_rule(struct jsg * c, const char * name, const char * body) {
    for (size_t i = 0; i < c->n_rules; i++) {
        if (strcmp(c->rules[i].name, name) == 0) {
            c->rules[i].body = body;
            return;
        }
    }
    if (!grow(c, (void **) &c->rules, &c->cap_rules, c->n_rules, sizeof(*c->rules))) {
        return;
    }
    c->rules[c->n_rules].name = name;
    c->rules[c->n_rules].body = body;
    c->n_rules++;
}

// runs of characters outside [a-zA-Z0-9-] become one '-' (llama.cpp's INVALID_RULE_CHARS_RE)
static const char * sanitize_name(struct jsg * c, const char * name) {
    struct sb b = { 0 };
    sb_add(&b, ""); // "" stays a valid (empty) string
    bool in_run = false;
    for (const char * p = name; *p; p++) {
        const char ch = *p;
        const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-';
        if (ok) {
            sb_addc(&b, ch);
            in_run = false;
        } else if (!in_run) {
            sb_addc(&b, '-');
            in_run = true;
        }
    }
    return sb_own(c, &b);
}

// the rule's name: name itself when free or holding the same body, else name0, name1, ...
static const char * add_rule(struct jsg * c, const char * name, const char * body) {
    const char * esc = sanitize_name(c, name);
    const char * cur = find_rule(c, esc);
    if (!cur || strcmp(cur, body) == 0) {
        set_rule(c, esc, body);
        return esc;
    }
    for (long long i = 0;; i++) {
        const char * key = CAT(c, esc, int_str(c, i));
        const char * b = find_rule(c, key);
        if (!b || strcmp(b, body) == 0 || c->oom) {
            set_rule(c, key, body);
            return key;
        }
    }
}

static const char * add_primitive(struct jsg * c, const char * name, const struct builtin_rule * rule) {
    const char * n = add_rule(c, name, rule->content);
    for (size_t i = 0; i < N_ELEMS(rule->deps) && rule->deps[i]; i++) {
        const char * dep = rule->deps[i];
        const struct builtin_rule * d = find_primitive(dep);
        if (!d) {
            d = find_string_format(dep);
        }
        if (!d) {
            add_error(c, "Rule %s not known", dep);
            continue;
        }
        if (!find_rule(c, dep)) {
            add_primitive(c, dep, d);
        }
    }
    return n;
}

//
// repetitions and integer ranges
//

static const char * build_repetition(struct jsg * c, const char * item, int min_items, int max_items,
                                     const char * separator) {
    const bool has_max = max_items != JSG_NO_MAX;
    if (max_items == 0) {
        return "";
    }
    if (min_items == 0 && max_items == 1) {
        return CAT(c, item, "?");
    }
    if (!separator || !*separator) {
        if (min_items == 1 && !has_max) {
            return CAT(c, item, "+");
        }
        if (min_items == 0 && !has_max) {
            return CAT(c, item, "*");
        }
        return CAT(c, item, "{", int_str(c, min_items), ",", has_max ? int_str(c, max_items) : "", "}");
    }
    const char * inner = CAT(c, "(", separator, " ", item, ")");
    const char * result = CAT(c, item, " ", build_repetition(c, inner, min_items == 0 ? 0 : min_items - 1,
                                                              has_max ? max_items - 1 : max_items, NULL));
    if (min_items == 0) {
        result = CAT(c, "(", result, ")?");
    }
    return result;
}

static void digit_range(struct sb * out, char from, char to) {
    sb_addc(out, '[');
    sb_addc(out, from);
    if (from != to) {
        sb_addc(out, '-');
        sb_addc(out, to);
    }
    sb_addc(out, ']');
}

static void more_digits(struct sb * out, int min_digits, int max_digits) {
    sb_add(out, "[0-9]");
    if (min_digits == max_digits && min_digits == 1) {
        return;
    }
    sb_addf(out, "{%d", min_digits);
    if (max_digits != min_digits) {
        sb_addc(out, ',');
        if (max_digits != INT_MAX) {
            sb_addf(out, "%d", max_digits);
        }
    }
    sb_addc(out, '}');
}

static bool all_char(const char * s, size_t n, char ch) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] != ch) {
            return false;
        }
    }
    return true;
}

// the decimal numbers from..to, both of the same length n
static void uniform_range(struct sb * out, const char * from, const char * to, size_t n) {
    size_t i = 0;
    while (i < n && from[i] == to[i]) {
        i++;
    }
    if (i > 0) {
        sb_addc(out, '"');
        sb_addn(out, from, i);
        sb_addc(out, '"');
    }
    if (i >= n) {
        return;
    }
    if (i > 0) {
        sb_addc(out, ' ');
    }
    const size_t sub_len = n - i - 1;
    if (sub_len == 0) {
        sb_addc(out, '[');
        sb_addc(out, from[i]);
        sb_addc(out, '-');
        sb_addc(out, to[i]);
        sb_addc(out, ']');
        return;
    }
    const char * from_sub = from + i + 1;
    const char * to_sub   = to + i + 1;
    char zeros[24], nines[24];
    memset(zeros, '0', sub_len);
    memset(nines, '9', sub_len);
    zeros[sub_len] = nines[sub_len] = '\0';
    bool to_reached = false;
    sb_addc(out, '(');
    if (all_char(from_sub, sub_len, '0')) {
        digit_range(out, from[i], (char) (to[i] - 1));
        sb_addc(out, ' ');
        more_digits(out, (int) sub_len, (int) sub_len);
    } else {
        sb_addc(out, '[');
        sb_addc(out, from[i]);
        sb_add(out, "] (");
        uniform_range(out, from_sub, nines, sub_len);
        sb_addc(out, ')');
        if (from[i] < to[i] - 1) {
            sb_add(out, " | ");
            if (all_char(to_sub, sub_len, '9')) {
                digit_range(out, (char) (from[i] + 1), to[i]);
                to_reached = true;
            } else {
                digit_range(out, (char) (from[i] + 1), (char) (to[i] - 1));
            }
            sb_addc(out, ' ');
            more_digits(out, (int) sub_len, (int) sub_len);
        }
    }
    if (!to_reached) {
        sb_add(out, " | ");
        digit_range(out, to[i], to[i]);
        sb_addc(out, ' ');
        uniform_range(out, zeros, to_sub, sub_len);
    }
    sb_addc(out, ')');
}

// alternatives matching the decimal integers in [min_value, max_value]; INT64_MIN / INT64_MAX = unbounded.
// The caller guarantees min <= max and that neither bound is the other extreme (negations stay in range).
static void build_min_max_int(struct sb * out, int64_t min_value, int64_t max_value, int decimals_left,
                              bool top_level) {
    const bool has_min = min_value != INT64_MIN;
    const bool has_max = max_value != INT64_MAX;

    if (has_min && has_max) {
        if (min_value < 0 && max_value < 0) {
            sb_add(out, "\"-\" (");
            build_min_max_int(out, -max_value, -min_value, decimals_left, true);
            sb_addc(out, ')');
            return;
        }
        if (min_value < 0) {
            sb_add(out, "\"-\" (");
            build_min_max_int(out, 0, -min_value, decimals_left, true);
            sb_add(out, ") | ");
            min_value = 0;
        }
        char min_s[24], max_s[24];
        snprintf(min_s, sizeof(min_s), "%" PRId64, min_value);
        snprintf(max_s, sizeof(max_s), "%" PRId64, max_value);
        const size_t min_digits = strlen(min_s);
        const size_t max_digits = strlen(max_s);
        for (size_t digits = min_digits; digits < max_digits; digits++) {
            char nines[24];
            memset(nines, '9', digits);
            nines[digits] = '\0';
            uniform_range(out, min_s, nines, digits);
            min_s[0] = '1';
            memset(min_s + 1, '0', digits);
            min_s[digits + 1] = '\0';
            sb_add(out, " | ");
        }
        uniform_range(out, min_s, max_s, max_digits);
        return;
    }

    const int less_decimals = decimals_left - 1 > 1 ? decimals_left - 1 : 1;

    if (has_min) {
        if (min_value < 0) {
            sb_add(out, "\"-\" (");
            build_min_max_int(out, INT64_MIN, -min_value, decimals_left, false);
            sb_add(out, ") | [0] | [1-9] ");
            more_digits(out, 0, decimals_left - 1);
        } else if (min_value == 0) {
            if (top_level) {
                sb_add(out, "[0] | [1-9] ");
                more_digits(out, 0, less_decimals);
            } else {
                more_digits(out, 1, decimals_left);
            }
        } else if (min_value <= 9) {
            const char ch = (char) ('0' + min_value);
            const char range_start = top_level ? '1' : '0';
            if (ch > range_start) {
                digit_range(out, range_start, (char) (ch - 1));
                sb_addc(out, ' ');
                more_digits(out, 1, less_decimals);
                sb_add(out, " | ");
            }
            digit_range(out, ch, '9');
            sb_addc(out, ' ');
            more_digits(out, 0, less_decimals);
        } else {
            char min_s[24];
            snprintf(min_s, sizeof(min_s), "%" PRId64, min_value);
            const int len = (int) strlen(min_s);
            const char ch = min_s[0];
            if (ch > '1') {
                digit_range(out, top_level ? '1' : '0', (char) (ch - 1));
                sb_addc(out, ' ');
                more_digits(out, len, less_decimals);
                sb_add(out, " | ");
            }
            digit_range(out, ch, ch);
            sb_add(out, " (");
            build_min_max_int(out, strtoll(min_s + 1, NULL, 10), INT64_MAX, less_decimals, false);
            sb_addc(out, ')');
            if (ch < '9') {
                sb_add(out, " | ");
                digit_range(out, (char) (ch + 1), '9');
                sb_addc(out, ' ');
                more_digits(out, len - 1, less_decimals);
            }
        }
        return;
    }

    if (has_max) {
        if (max_value >= 0) {
            if (top_level) {
                sb_add(out, "\"-\" [1-9] ");
                more_digits(out, 0, less_decimals);
                sb_add(out, " | ");
            }
            build_min_max_int(out, 0, max_value, decimals_left, true);
        } else {
            sb_add(out, "\"-\" (");
            build_min_max_int(out, -max_value, INT64_MAX, decimals_left, false);
            sb_addc(out, ')');
        }
    }
}

//
// schema helpers
//

static const json_t * get(const json_t * schema, const char * key) {
    return json_is_object(schema) ? json_object_get(schema, key) : NULL;
}

// llama.cpp's json::empty(): null, {} and []
static bool is_empty(const json_t * v) {
    return !v || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0);
}

// a count such as minItems / maxLength: a non-negative integer (a real is truncated, as nlohmann's get<int>)
static bool read_count(struct jsg * c, const json_t * schema, const char * key, int * out) {
    const json_t * v = get(schema, key);
    double d;
    if (json_is_integer(v)) {
        d = (double) json_integer_value(v);
    } else if (json_is_real(v)) {
        d = trunc(json_real_value(v));
    } else {
        add_error(c, "\"%s\" must be a number", key);
        return false;
    }
    if (!(d >= 0.0 && d < (double) INT_MAX)) {
        add_error(c, "\"%s\" must be in [0, %d)", key, INT_MAX);
        return false;
    }
    *out = (int) d;
    return true;
}

// an integer bound; the extremes of int64 are refused (INT64_MIN / INT64_MAX mean "unbounded" below)
static bool read_bound(struct jsg * c, const json_t * schema, const char * key, int64_t * out) {
    const json_t * v = get(schema, key);
    if (json_is_integer(v)) {
        *out = (int64_t) json_integer_value(v);
    } else if (json_is_real(v) && fabs(json_real_value(v)) < 9.2e18) {
        *out = (int64_t) json_real_value(v);
    } else {
        add_error(c, "\"%s\" must be an integer", key);
        return false;
    }
    if (*out == INT64_MIN || *out == INT64_MAX) {
        add_error(c, "\"%s\" is out of range", key);
        return false;
    }
    return true;
}

static const json_t * ref_target(const struct jsg * c, const char * ref) {
    for (size_t i = 0; i < c->n_refs; i++) {
        if (strcmp(c->refs[i].ref, ref) == 0) {
            return c->refs[i].target;
        }
    }
    return NULL;
}

static const char * visit(struct jsg * c, const json_t * schema, const char * name);

//
// $ref
//

// every $ref of the schema, resolved against the (hoisted) root: only local JSON pointers "#/..."
static void resolve_refs(struct jsg * c, const json_t * root, const json_t * n, int depth) {
    if (depth > JSG_MAX_DEPTH) {
        add_error(c, "schema nested too deeply");
        return;
    }
    if (json_is_array(n)) {
        size_t i;
        const json_t * el;
        json_array_foreach(n, i, el) {
            resolve_refs(c, root, el, depth + 1);
        }
        return;
    }
    if (!json_is_object(n)) {
        return;
    }
    const json_t * refj = json_object_get(n, "$ref");
    if (!refj) {
        const char * k;
        const json_t * el;
        json_object_foreach((json_t *) n, k, el) {
            resolve_refs(c, root, el, depth + 1);
        }
        return;
    }
    if (!json_is_string(refj)) {
        add_error(c, "\"$ref\" must be a string");
        return;
    }
    const char * ref = json_string_value(refj);
    if (ref_target(c, ref)) {
        return;
    }
    if (strncmp(ref, "https://", 8) == 0) {
        // llama.cpp's converter fetches nothing either (its fetcher returns null); say so instead
        add_error(c, "Unsupported ref: %s (remote schemas are not fetched)", ref);
        return;
    }
    if (strncmp(ref, "#/", 2) != 0) {
        add_error(c, "Unsupported ref: %s", ref);
        return;
    }
    const json_t * target = root;
    const char * p = ref + 2; // JSON pointer tokens after "#/", split on '/' (no ~0 / ~1 unescaping, as llama.cpp)
    for (;;) {
        const char * slash = strchr(p, '/');
        const size_t len = slash ? (size_t) (slash - p) : strlen(p);
        char sel[256];
        if (len >= sizeof(sel)) {
            add_error(c, "Error resolving ref %s: path element too long", ref);
            return;
        }
        memcpy(sel, p, len);
        sel[len] = '\0';
        if (json_is_object(target) && json_object_get(target, sel)) {
            target = json_object_get(target, sel);
        } else if (json_is_array(target)) {
            char * end = NULL;
            const unsigned long long idx = (sel[0] >= '0' && sel[0] <= '9') ? strtoull(sel, &end, 10) : ULLONG_MAX;
            if (idx >= json_array_size(target)) {
                add_error(c, "Error resolving ref %s: %s not in %s", ref, sel, dump_short(c, target));
                return;
            }
            target = json_array_get(target, (size_t) idx);
        } else {
            add_error(c, "Error resolving ref %s: %s not in %s", ref, sel, dump_short(c, target));
            return;
        }
        if (!slash) {
            break;
        }
        p = slash + 1;
    }
    if (!grow(c, (void **) &c->refs, &c->cap_refs, c->n_refs, sizeof(*c->refs))) {
        return;
    }
    c->refs[c->n_refs].ref = CAT(c, ref);
    c->refs[c->n_refs].target = target;
    c->n_refs++;
}

static bool is_resolving(const struct jsg * c, const char * ref) {
    for (size_t i = 0; i < c->n_resolving; i++) {
        if (strcmp(c->resolving[i], ref) == 0) {
            return true;
        }
    }
    return false;
}

static const char * resolve_ref(struct jsg * c, const char * ref) {
    const char * hash = strchr(ref, '#');
    const char * fragment = hash ? hash + 1 : ref;
    const char * ref_name = CAT(c, "ref", sanitize_name(c, fragment));
    if (!find_rule(c, ref_name) && !is_resolving(c, ref)) {
        const json_t * target = ref_target(c, ref);
        if (!target) {
            add_error(c, "Unresolved ref: %s", ref);
            return "";
        }
        if (!grow(c, (void **) &c->resolving, &c->cap_resolving, c->n_resolving, sizeof(*c->resolving))) {
            return "";
        }
        c->resolving[c->n_resolving++] = ref;
        ref_name = visit(c, target, ref_name);
        c->n_resolving--;
    }
    return ref_name;
}

// nested "$defs" are moved to the root's "$defs" (first definition of a name wins), as llama.cpp does for
// schemas whose $refs point at #/$defs/... while the definitions sit deeper
static void collect_defs(json_t * node, json_t * collected, int depth) {
    if (!json_is_object(node) || depth > JSG_MAX_DEPTH) {
        return;
    }
    json_t * defs = json_object_get(node, "$defs");
    if (json_is_object(defs)) {
        const char * k;
        json_t * v;
        json_object_foreach(defs, k, v) {
            if (!json_object_get(collected, k)) {
                json_object_set(collected, k, v);
            }
        }
        json_object_del(node, "$defs");
    }
    const char * k;
    json_t * v;
    json_object_foreach(node, k, v) {
        if (json_is_object(v)) {
            collect_defs(v, collected, depth + 1);
        } else if (json_is_array(v)) {
            size_t i;
            json_t * el;
            json_array_foreach(v, i, el) {
                if (json_is_object(el)) {
                    collect_defs(el, collected, depth + 1);
                }
            }
        }
    }
}

static bool hoist_defs_to_root(json_t * schema) {
    if (!json_is_object(schema)) {
        return true;
    }
    json_t * collected = json_object();
    if (!collected) {
        return false;
    }
    collect_defs(schema, collected, 0);
    bool ok = true;
    if (json_object_size(collected) > 0) {
        json_t * root_defs = json_object_get(schema, "$defs");
        if (!root_defs) {
            root_defs = json_object();
            ok = root_defs && json_object_set_new(schema, "$defs", root_defs) == 0;
        }
        const char * k;
        json_t * v;
        json_object_foreach(collected, k, v) {
            if (ok && json_is_object(root_defs) && !json_object_get(root_defs, k)) {
                ok = json_object_set(root_defs, k, v) == 0;
            }
        }
    }
    json_decref(collected);
    return ok;
}

//
// objects
//

struct jsg_prop {
    const char   * name;
    const json_t * schema;
};

struct jsg_props {
    struct jsg_prop * v;
    size_t n, cap;
};

static void props_push(struct jsg * c, struct jsg_props * p, const char * name, const json_t * schema) {
    if (grow(c, (void **) &p->v, &p->cap, p->n, sizeof(*p->v))) {
        p->v[p->n].name = name;
        p->v[p->n].schema = schema;
        p->n++;
    }
}

struct jsg_strs {
    const char ** v;
    size_t n, cap;
};

static void strs_push(struct jsg * c, struct jsg_strs * s, const char * str) {
    if (grow(c, (void **) &s->v, &s->cap, s->n, sizeof(*s->v))) {
        s->v[s->n++] = str;
    }
}

static bool strs_has(const struct jsg_strs * s, const char * str) {
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->v[i], str) == 0) {
            return true;
        }
    }
    return false;
}

// property name -> its "-kv" rule (a later property of the same name replaces an earlier one, as a map does)
struct jsg_kv {
    struct jsg_strs keys, rules;
};

static void kv_set(struct jsg * c, struct jsg_kv * kv, const char * key, const char * rule) {
    for (size_t i = 0; i < kv->keys.n; i++) {
        if (strcmp(kv->keys.v[i], key) == 0) {
            kv->rules.v[i] = rule;
            return;
        }
    }
    strs_push(c, &kv->keys, key);
    strs_push(c, &kv->rules, rule);
}

static const char * kv_get(const struct jsg_kv * kv, const char * key) {
    for (size_t i = 0; i < kv->keys.n && i < kv->rules.n; i++) {
        if (strcmp(kv->keys.v[i], key) == 0) {
            return kv->rules.v[i];
        }
    }
    return "";
}

// trie of property names, for the key rule of additional properties (any string but those names)
struct trie_node {
    unsigned char ch;
    bool end;
    struct trie_node * kids;
    size_t n_kids, cap_kids;
};

static void trie_free(struct trie_node * t) {
    for (size_t i = 0; i < t->n_kids; i++) {
        trie_free(&t->kids[i]);
    }
    free(t->kids);
}

static bool trie_insert(struct jsg * c, struct trie_node * t, const char * s) {
    for (; *s; s++) {
        const unsigned char ch = (unsigned char) *s;
        // children in llama.cpp's std::map<char> order: by signed char value
        size_t pos = 0;
        while (pos < t->n_kids && (signed char) t->kids[pos].ch < (signed char) ch) {
            pos++;
        }
        if (pos == t->n_kids || t->kids[pos].ch != ch) {
            if (!grow(c, (void **) &t->kids, &t->cap_kids, t->n_kids, sizeof(*t->kids))) {
                return false;
            }
            memmove(&t->kids[pos + 1], &t->kids[pos], (t->n_kids - pos) * sizeof(*t->kids));
            memset(&t->kids[pos], 0, sizeof(*t->kids));
            t->kids[pos].ch = ch;
            t->n_kids++;
        }
        t = &t->kids[pos];
    }
    t->end = true;
    return true;
}

// one character inside [...]: llama.cpp writes it raw; '\' ']' and '-' would break or change the class
// there, so those are written as GBNF escapes (names without them come out as in llama.cpp)
static void class_char(struct sb * out, unsigned char ch) {
    if (ch == '\\' || ch == ']' || ch == '-' || ch == '^' || ch == '[') {
        sb_addf(out, "\\x%02X", ch);
    } else {
        sb_addc(out, (char) ch);
    }
}

static void not_strings_node(struct sb * out, const struct trie_node * node, const char * char_rule) {
    struct sb rejects = { 0 };
    bool first = true;
    for (size_t i = 0; i < node->n_kids; i++) {
        const struct trie_node * kid = &node->kids[i];
        class_char(&rejects, kid->ch);
        if (!first) {
            sb_add(out, " | ");
        }
        first = false;
        sb_addc(out, '[');
        class_char(out, kid->ch);
        sb_addc(out, ']');
        if (kid->n_kids > 0) {
            sb_add(out, " (");
            not_strings_node(out, kid, char_rule);
            sb_addc(out, ')');
        } else if (kid->end) {
            sb_addc(out, ' ');
            sb_add(out, char_rule);
            sb_addc(out, '+');
        }
    }
    if (node->n_kids > 0) {
        if (!first) {
            sb_add(out, " | ");
        }
        sb_add(out, "[^\"");
        if (rejects.s) {
            sb_add(out, rejects.s);
        }
        sb_add(out, "] ");
        sb_add(out, char_rule);
        sb_addc(out, '*');
    }
    if (rejects.oom) {
        out->oom = true;
    }
    free(rejects.s);
}

// a JSON string rule matching any string except the given ones
static const char * not_strings(struct jsg * c, const struct jsg_strs * strings) {
    struct trie_node trie = { 0 };
    for (size_t i = 0; i < strings->n; i++) {
        trie_insert(c, &trie, strings->v[i]);
    }
    const char * char_rule = add_primitive(c, "char", find_primitive("char"));
    struct sb out = { 0 };
    sb_add(&out, "[\"] ( ");
    not_strings_node(&out, &trie, char_rule);
    sb_add(&out, " )");
    if (!trie.end) {
        sb_addc(&out, '?');
    }
    sb_add(&out, " [\"] space");
    trie_free(&trie);
    return sb_own(c, &out);
}

// optional properties from index i on: each may be followed by the later ones only (keeps the order)
static const char * recursive_refs(struct jsg * c, const struct jsg_kv * kv, const struct jsg_strs * ks, size_t from,
                                   bool first_is_optional, const char * name) {
    if (from >= ks->n) {
        return "";
    }
    const char * k = ks->v[from];
    const bool star = strcmp(k, "*") == 0;
    const char * kv_rule_name = kv_get(kv, k);
    const char * comma_ref = CAT(c, "( \",\" space ", kv_rule_name, " )");
    const char * res;
    if (first_is_optional) {
        res = CAT(c, comma_ref, star ? "*" : "?");
    } else {
        res = star ? CAT(c, kv_rule_name, " ", comma_ref, "*") : kv_rule_name;
    }
    if (from + 1 < ks->n) {
        const char * rest = recursive_refs(c, kv, ks, from + 1, true, name);
        res = CAT(c, res, " ", add_rule(c, sep_name(c, name, CAT(c, k, "-rest")), rest));
    }
    return res;
}

static const char * build_object_rule(struct jsg * c, const struct jsg_props * props, const struct jsg_strs * required,
                                      const char * name, const json_t * additional) {
    struct jsg_strs required_props = { 0 }, optional_props = { 0 }, prop_names = { 0 };
    struct jsg_kv kv = { { 0 }, { 0 } };
    for (size_t i = 0; i < props->n; i++) {
        const char * prop_name = props->v[i].name;
        const char * prop_rule_name = visit(c, props->v[i].schema, sep_name(c, name, prop_name));
        struct sb key = { 0 };
        dump_string(&key, prop_name, strlen(prop_name));
        const char * key_lit = format_literal(c, sb_own(c, &key));
        kv_set(c, &kv, prop_name, add_rule(c, sep_name(c, name, CAT(c, prop_name, "-kv")),
                                           CAT(c, key_lit, " space \":\" space ", prop_rule_name)));
        strs_push(c, strs_has(required, prop_name) ? &required_props : &optional_props, prop_name);
        strs_push(c, &prop_names, prop_name);
    }
    if (json_is_true(additional) || json_is_object(additional)) {
        const char * sub_name = sep_name(c, name, "additional");
        const char * value_rule = json_is_object(additional) ? visit(c, additional, CAT(c, sub_name, "-value"))
                                                             : add_primitive(c, "value", find_primitive("value"));
        const char * key_rule = prop_names.n == 0 ? add_primitive(c, "string", find_primitive("string"))
                                                  : add_rule(c, CAT(c, sub_name, "-k"), not_strings(c, &prop_names));
        kv_set(c, &kv, "*", add_rule(c, CAT(c, sub_name, "-kv"), CAT(c, key_rule, " \":\" space ", value_rule)));
        strs_push(c, &optional_props, "*");
    }

    struct sb rule = { 0 };
    sb_add(&rule, "\"{\" space ");
    for (size_t i = 0; i < required_props.n; i++) {
        if (i > 0) {
            sb_add(&rule, " \",\" space ");
        }
        sb_add(&rule, kv_get(&kv, required_props.v[i]));
    }
    if (optional_props.n > 0) {
        sb_add(&rule, " (");
        if (required_props.n > 0) {
            sb_add(&rule, " \",\" space ( ");
        }
        for (size_t i = 0; i < optional_props.n; i++) {
            if (i > 0) {
                sb_add(&rule, " | ");
            }
            sb_add(&rule, recursive_refs(c, &kv, &optional_props, i, false, name));
        }
        if (required_props.n > 0) {
            sb_add(&rule, " )");
        }
        sb_add(&rule, " )?");
    }
    sb_add(&rule, " \"}\" space");

    free(required_props.v);
    free(optional_props.v);
    free(prop_names.v);
    free(kv.keys.v);
    free(kv.rules.v);
    return sb_own(c, &rule);
}

//
// pattern (regular expression) -> GBNF
//

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
    if (grow(p->c, (void **) &q->v, &q->cap, q->n, sizeof(*q->v))) {
        q->v[q->n].s = s;
        q->v[q->n].literal = literal;
        q->n++;
    }
}

static const char * to_rule(struct pat * p, struct pat_item it) {
    return it.literal ? CAT(p->c, "\"", it.s, "\"") : it.s;
}

// consecutive literals merged, items joined by spaces
static const char * join_seq(struct pat * p, const struct pat_seq * q) {
    struct sb out = { 0 };
    struct sb lit = { 0 };
    bool first = true;
    for (size_t k = 0; k <= q->n; k++) {
        const bool flush = k == q->n || !q->v[k].literal;
        if (flush && lit.n > 0) {
            if (!first) {
                sb_addc(&out, ' ');
            }
            first = false;
            sb_addc(&out, '"');
            sb_add(&out, lit.s);
            sb_addc(&out, '"');
            lit.n = 0;
            lit.s[0] = '\0';
        }
        if (k == q->n) {
            break;
        }
        if (q->v[k].literal) {
            sb_add(&lit, q->v[k].s);
        } else {
            if (!first) {
                sb_addc(&out, ' ');
            }
            first = false;
            sb_add(&out, q->v[k].s);
        }
    }
    if (lit.oom) {
        out.oom = true;
    }
    free(lit.s);
    return sb_own(p->c, &out);
}

static void pat_error(struct pat * p, const char * msg) {
    if (!p->failed) {
        add_error(p->c, "%s", msg);
    }
    p->failed = true;
}

static const char * get_dot(struct pat * p) {
    return add_rule(p->c, "dot", p->c->dotall ? "[\\U00000000-\\U0010FFFF]" : "[^\\x0A\\x0D]");
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
static void escaped_char(struct sb * out, char next, bool in_class) {
    switch (next) {
        case 'n': case 't': case 'r': case '\\': case '"': case ']': case '[': case 'x': case 'u': case 'U':
            sb_addc(out, '\\');
            sb_addc(out, next);
            break;
        case 'f': sb_add(out, "\\x0C"); break;
        case 'v': sb_add(out, "\\x0B"); break;
        default:
            if (in_class && (next == '-' || next == '^')) {
                sb_addf(out, "\\x%02X", (unsigned char) next);
            } else {
                sb_addc(out, next);
            }
    }
}

static const char * transform(struct pat * p, int depth);

static void pat_group(struct pat * p, struct pat_seq * seq, int depth) {
    p->i++;
    if (p->i < p->len && p->s[p->i] == '?') {
        if (p->i + 1 < p->len && p->s[p->i + 1] == ':') {
            p->i += 2; // non-capturing group: same as a group
        } else {
            // lookahead / lookbehind: skipped with a warning, as llama.cpp does
            add_warning(p->c, "Unsupported pattern syntax");
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
    seq_push(p, seq, CAT(p->c, "(", inner, ")"), false);
}

static void pat_class(struct pat * p, struct pat_seq * seq) {
    struct sb b = { 0 };
    sb_addc(&b, '[');
    p->i++;
    while (p->i < p->len && p->s[p->i] != ']') {
        if (p->s[p->i] == '\\' && p->i + 1 < p->len) {
            const char next = p->s[p->i + 1];
            const char * cls = class_escape(next);
            if (cls && (next == 'd' || next == 'w' || next == 's')) {
                sb_addn(&b, cls + 1, strlen(cls) - 2); // the class body without its brackets
            } else if (cls) {
                pat_error(p, "Unsupported pattern syntax: negated class escape inside [...]");
            } else {
                escaped_char(&b, next, true);
            }
            p->i += 2;
        } else {
            sb_addc(&b, p->s[p->i]);
            p->i++;
        }
    }
    if (p->i >= p->len) {
        pat_error(p, "Unbalanced square brackets");
    }
    sb_addc(&b, ']');
    p->i++;
    seq_push(p, seq, sb_own(p->c, &b), false);
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
            id = add_rule(p->c, CAT(p->c, p->name, "-", int_str(p->c, (long long) p->sub_bodies.n + 1)), sub);
            strs_push(p->c, &p->sub_bodies, sub);
            strs_push(p->c, &p->sub_ids, id);
        }
        sub = id;
    }
    last->s = build_repetition(p->c, last->literal ? CAT(p->c, "\"", sub, "\"") : sub, min_times, max_times, "");
    last->literal = false;
}

static void pat_literal(struct pat * p, struct pat_seq * seq) {
    struct sb lit = { 0 };
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
            if (strchr("^$.[]()|{}*+?", next)) {
                sb_addc(&lit, next);
            } else {
                escaped_char(&lit, next, false);
            }
            p->i += 2;
        } else if (ch == '"') {
            sb_add(&lit, "\\\"");
            p->i++;
        } else if (!is_non_literal(ch) &&
                   (p->i == p->len - 1 || lit.n == 0 || p->s[p->i + 1] == '.' || !is_non_literal(p->s[p->i + 1]))) {
            sb_addc(&lit, ch);
            p->i++;
        } else {
            break;
        }
    }
    if (lit.n > 0 || lit.oom) {
        seq_push(p, seq, sb_own(p->c, &lit), true);
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
            const char q[2] = { ch, '\0' };
            seq.v[seq.n - 1].s = CAT(p->c, to_rule(p, seq.v[seq.n - 1]), q);
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

static const char * visit_pattern(struct jsg * c, const char * pattern, const char * name) {
    const size_t n = strlen(pattern);
    if (n < 2 || pattern[0] != '^' || pattern[n - 1] != '$') {
        add_error(c, "Pattern must start with '^' and end with '$'");
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
    return add_rule(c, name, CAT(c, "\"\\\"\" (", body, ") \"\\\"\" space"));
}

//
// visit: one schema -> the name of its rule
//

static const char * union_rule(struct jsg * c, const char * name, const json_t * const * alts, size_t n) {
    struct sb out = { 0 };
    for (size_t i = 0; i < n; i++) {
        const char * idx = int_str(c, (long long) i);
        const char * sub = *name ? CAT(c, name, "-", idx) : CAT(c, "alternative-", idx);
        if (i > 0) {
            sb_add(&out, " | ");
        }
        sb_add(&out, visit(c, alts[i], sub));
    }
    return sb_own(c, &out);
}

static bool type_is(const json_t * type, const char * name) {
    return json_is_string(type) && strcmp(json_string_value(type), name) == 0;
}

static bool keep_temp(struct jsg * c, json_t * v) {
    if (!v || !grow(c, (void **) &c->temps, &c->cap_temps, c->n_temps, sizeof(*c->temps))) {
        json_decref(v);
        c->oom = true;
        return false;
    }
    c->temps[c->n_temps++] = v;
    return true;
}

// allOf: the properties of every component merged (those of anyOf components optional), or the enum
// values common to all components
struct allof_state {
    struct jsg_props props;
    struct jsg_strs  required;
    struct jsg_strs  enum_rules;
    size_t         * enum_counts;
    size_t           cap_counts;
};

static void allof_component(struct jsg * c, struct allof_state * st, const json_t * comp, bool is_required, int depth) {
    if (depth > JSG_MAX_DEPTH) {
        add_error(c, "allOf: $ref cycle");
        return;
    }
    const json_t * refj = get(comp, "$ref");
    const json_t * props = get(comp, "properties");
    const json_t * en = get(comp, "enum");
    if (refj) {
        const json_t * target = json_is_string(refj) ? ref_target(c, json_string_value(refj)) : NULL;
        if (target) {
            allof_component(c, st, target, is_required, depth + 1);
        }
    } else if (props) {
        const char * k;
        const json_t * v;
        json_object_foreach((json_t *) props, k, v) {
            props_push(c, &st->props, CAT(c, k), v);
            if (is_required) {
                strs_push(c, &st->required, CAT(c, k));
            }
        }
    } else if (en) {
        size_t i;
        const json_t * v;
        json_array_foreach(en, i, v) {
            const char * rule = constant_rule(c, v);
            size_t k = 0;
            while (k < st->enum_rules.n && strcmp(st->enum_rules.v[k], rule) != 0) {
                k++;
            }
            if (k == st->enum_rules.n) {
                strs_push(c, &st->enum_rules, rule);
                if (st->enum_rules.n != k + 1 ||
                    !grow(c, (void **) &st->enum_counts, &st->cap_counts, k, sizeof(*st->enum_counts))) {
                    return;
                }
                st->enum_counts[k] = 0;
            }
            st->enum_counts[k]++;
        }
    }
}

static int cmp_str(const void * a, const void * b) {
    return strcmp(*(const char * const *) a, *(const char * const *) b);
}

static const char * visit_all_of(struct jsg * c, const json_t * schema, const char * name, const char * rule_name) {
    const json_t * all = get(schema, "allOf");
    if (!json_is_array(all)) {
        add_error(c, "\"allOf\" must be an array");
        return "";
    }
    struct allof_state st = { { 0 }, { 0 }, { 0 }, NULL, 0 };
    size_t i;
    const json_t * t;
    json_array_foreach(all, i, t) {
        const json_t * any = get(t, "anyOf");
        if (any) {
            size_t k;
            const json_t * tt;
            json_array_foreach(any, k, tt) {
                allof_component(c, &st, tt, false, 0);
            }
        } else {
            allof_component(c, &st, t, true, 0);
        }
    }
    const char * result = NULL;
    if (st.enum_rules.n > 0) {
        struct jsg_strs common = { 0 };
        for (size_t k = 0; k < st.enum_rules.n; k++) {
            if (st.enum_counts[k] == json_array_size(all)) {
                strs_push(c, &common, st.enum_rules.v[k]);
            }
        }
        if (common.n > 0) {
            // llama.cpp keeps the values in a std::map: sorted by their text
            qsort(common.v, common.n, sizeof(*common.v), cmp_str);
            struct sb b = { 0 };
            sb_addc(&b, '(');
            for (size_t k = 0; k < common.n; k++) {
                if (k > 0) {
                    sb_add(&b, " | ");
                }
                sb_add(&b, common.v[k]);
            }
            sb_add(&b, ") space");
            result = add_rule(c, rule_name, sb_own(c, &b));
        }
        free(common.v);
    }
    if (!result) {
        result = add_rule(c, rule_name, build_object_rule(c, &st.props, &st.required, name, NULL));
    }
    free(st.props.v);
    free(st.required.v);
    free(st.enum_rules.v);
    free(st.enum_counts);
    return result;
}

static const char * visit_integer_range(struct jsg * c, const json_t * schema, const char * rule_name) {
    int64_t min_value = INT64_MIN, max_value = INT64_MAX, v;
    if (get(schema, "minimum")) {
        if (!read_bound(c, schema, "minimum", &min_value)) {
            return "";
        }
    } else if (get(schema, "exclusiveMinimum")) {
        if (!read_bound(c, schema, "exclusiveMinimum", &v)) {
            return "";
        }
        min_value = v + 1; // read_bound refused INT64_MAX
    }
    if (get(schema, "maximum")) {
        if (!read_bound(c, schema, "maximum", &max_value)) {
            return "";
        }
    } else if (get(schema, "exclusiveMaximum")) {
        if (!read_bound(c, schema, "exclusiveMaximum", &v)) {
            return "";
        }
        if (v == INT64_MIN + 1) {
            add_error(c, "\"exclusiveMaximum\" is out of range");
            return "";
        }
        max_value = v - 1;
    }
    if (min_value > max_value) {
        // llama.cpp writes a reversed range no text matches; refused
        add_error(c, "integer range is empty (minimum > maximum)");
        return "";
    }
    struct sb out = { 0 };
    sb_addc(&out, '(');
    build_min_max_int(&out, min_value, max_value, 16, true);
    sb_add(&out, ") space");
    return add_rule(c, rule_name, sb_own(c, &out));
}

static bool is_uuid_format(const char * f) {
    // ^uuid[1-5]?$
    return strncmp(f, "uuid", 4) == 0 && (f[4] == '\0' || (f[4] >= '1' && f[4] <= '5' && f[5] == '\0'));
}

static const char * visit_impl(struct jsg * c, const json_t * schema, const char * name) {
    const json_t * type = get(schema, "type");
    const bool no_type = !type || json_is_null(type);
    const json_t * format_j = get(schema, "format");
    const char * format = "";
    if (format_j) {
        if (!json_is_string(format_j)) {
            add_error(c, "\"format\" must be a string");
            return "";
        }
        format = json_string_value(format_j);
    }
    const char * rule_name = is_reserved_name(name) ? CAT(c, name, "-") : (*name ? name : "root");

    const json_t * refj = get(schema, "$ref");
    if (refj) {
        if (!json_is_string(refj)) {
            add_error(c, "\"$ref\" must be a string");
            return "";
        }
        return add_rule(c, rule_name, resolve_ref(c, json_string_value(refj)));
    }
    const json_t * alts = get(schema, "oneOf");
    if (!alts) {
        alts = get(schema, "anyOf");
    }
    if (alts) {
        if (!json_is_array(alts)) {
            add_error(c, "\"%s\" must be an array", get(schema, "oneOf") ? "oneOf" : "anyOf");
            return "";
        }
        const size_t n = json_array_size(alts);
        const json_t ** v = calloc(n ? n : 1, sizeof(*v));
        if (!v) {
            c->oom = true;
            return "";
        }
        for (size_t i = 0; i < n; i++) {
            v[i] = json_array_get(alts, i);
        }
        const char * r = add_rule(c, rule_name, union_rule(c, name, v, n));
        free(v);
        return r;
    }
    if (json_is_array(type)) {
        const size_t n = json_array_size(type);
        const json_t ** v = calloc(n ? n : 1, sizeof(*v));
        if (!v) {
            c->oom = true;
            return "";
        }
        for (size_t i = 0; i < n; i++) {
            json_t * copy = json_copy((json_t *) schema);
            if (!keep_temp(c, copy) || json_object_set(copy, "type", json_array_get(type, i)) != 0) {
                c->oom = true;
                free(v);
                return "";
            }
            v[i] = copy;
        }
        const char * r = add_rule(c, rule_name, union_rule(c, name, v, n));
        free(v);
        return r;
    }
    const json_t * cst = get(schema, "const");
    if (cst) {
        return add_rule(c, rule_name, CAT(c, constant_rule(c, cst), " space"));
    }
    const json_t * en = get(schema, "enum");
    if (en) {
        if (!json_is_array(en)) {
            add_error(c, "\"enum\" must be an array");
            return "";
        }
        struct sb b = { 0 };
        sb_addc(&b, '(');
        size_t i;
        const json_t * v;
        json_array_foreach(en, i, v) {
            if (i > 0) {
                sb_add(&b, " | ");
            }
            sb_add(&b, constant_rule(c, v));
        }
        sb_add(&b, ") space");
        return add_rule(c, rule_name, sb_own(c, &b));
    }
    const json_t * props = get(schema, "properties");
    const json_t * additional = get(schema, "additionalProperties");
    if ((no_type || type_is(type, "object")) && (props || (additional && !json_is_true(additional)))) {
        struct jsg_strs required = { 0 };
        const json_t * req = get(schema, "required");
        if (json_is_array(req)) {
            size_t i;
            const json_t * v;
            json_array_foreach(req, i, v) {
                if (json_is_string(v)) {
                    strs_push(c, &required, json_string_value(v));
                }
            }
        }
        struct jsg_props list = { 0 };
        if (props) {
            if (!json_is_object(props)) {
                add_error(c, "\"properties\" must be an object");
                free(required.v);
                return "";
            }
            const char * k;
            const json_t * v;
            json_object_foreach((json_t *) props, k, v) {
                props_push(c, &list, k, v);
            }
        }
        const char * r = add_rule(c, rule_name, build_object_rule(c, &list, &required, name, additional));
        free(required.v);
        free(list.v);
        return r;
    }
    if ((no_type || type_is(type, "object") || type_is(type, "string")) && get(schema, "allOf")) {
        return visit_all_of(c, schema, name, rule_name);
    }
    const json_t * items = get(schema, "items");
    if (!items) {
        items = get(schema, "prefixItems");
    }
    if ((no_type || type_is(type, "array")) && items) {
        if (json_is_array(items)) {
            struct sb b = { 0 };
            sb_add(&b, "\"[\" space ");
            size_t i;
            const json_t * v;
            json_array_foreach(items, i, v) {
                if (i > 0) {
                    sb_add(&b, " \",\" space ");
                }
                sb_add(&b, visit(c, v, sep_name(c, name, CAT(c, "tuple-", int_str(c, (long long) i)))));
            }
            sb_add(&b, " \"]\" space");
            return add_rule(c, rule_name, sb_own(c, &b));
        }
        const char * item_rule_name = visit(c, items, sep_name(c, name, "item"));
        int min_items = 0, max_items = JSG_NO_MAX;
        if (get(schema, "minItems") && !read_count(c, schema, "minItems", &min_items)) {
            return "";
        }
        // as llama.cpp: only an integer maxItems bounds the array
        if (json_is_integer(get(schema, "maxItems")) && !read_count(c, schema, "maxItems", &max_items)) {
            return "";
        }
        return add_rule(c, rule_name, CAT(c, "\"[\" space ", build_repetition(c, item_rule_name, min_items, max_items,
                                                                              "\",\" space"), " \"]\" space"));
    }
    const json_t * pattern = get(schema, "pattern");
    if ((no_type || type_is(type, "string")) && pattern) {
        if (!json_is_string(pattern)) {
            add_error(c, "\"pattern\" must be a string");
            return "";
        }
        return visit_pattern(c, json_string_value(pattern), rule_name);
    }
    if ((no_type || type_is(type, "string")) && is_uuid_format(format)) {
        return add_primitive(c, strcmp(rule_name, "root") == 0 ? "root" : format, find_primitive("uuid"));
    }
    if (no_type || type_is(type, "string")) {
        const char * prim_name = CAT(c, format, "-string");
        const struct builtin_rule * fr = find_string_format(prim_name);
        if (fr) {
            return add_rule(c, rule_name, add_primitive(c, prim_name, fr));
        }
    }
    if (type_is(type, "string") && (get(schema, "minLength") || get(schema, "maxLength"))) {
        const char * char_rule = add_primitive(c, "char", find_primitive("char"));
        int min_len = 0, max_len = JSG_NO_MAX;
        if ((get(schema, "minLength") && !read_count(c, schema, "minLength", &min_len)) ||
            (get(schema, "maxLength") && !read_count(c, schema, "maxLength", &max_len))) {
            return "";
        }
        return add_rule(c, rule_name, CAT(c, "\"\\\"\" ", build_repetition(c, char_rule, min_len, max_len, ""),
                                          " \"\\\"\" space"));
    }
    if (type_is(type, "integer") && (get(schema, "minimum") || get(schema, "exclusiveMinimum") ||
                                     get(schema, "maximum") || get(schema, "exclusiveMaximum"))) {
        return visit_integer_range(c, schema, rule_name);
    }
    if (is_empty(schema) || type_is(type, "object")) {
        return add_rule(c, rule_name, add_primitive(c, "object", find_primitive("object")));
    }
    if (no_type && json_is_object(schema)) {
        // no type and no keyword we know (e.g. only "description"): any JSON value
        return add_rule(c, rule_name, add_primitive(c, "value", find_primitive("value")));
    }
    const struct builtin_rule * prim = json_is_string(type) ? find_primitive(json_string_value(type)) : NULL;
    if (!prim) {
        add_error(c, "Unrecognized schema: %s", dump_short(c, schema));
        return "";
    }
    return add_primitive(c, strcmp(rule_name, "root") == 0 ? "root" : json_string_value(type), prim);
}

static const char * visit(struct jsg * c, const json_t * schema, const char * name) {
    if (c->oom) {
        return "";
    }
    if (c->depth >= JSG_MAX_DEPTH) {
        if (!c->too_deep) {
            add_error(c, "schema nested too deeply (more than %d levels)", JSG_MAX_DEPTH);
            c->too_deep = true;
        }
        return "";
    }
    c->depth++;
    const char * r = visit_impl(c, schema, name);
    c->depth--;
    return r;
}

//
// entry points
//

static void set_err(char * err, size_t err_size, const char * msg) {
    if (err && err_size > 0) {
        snprintf(err, err_size, "%s", msg);
    }
}

static int cmp_rule(const void * a, const void * b) {
    return strcmp(((const struct jsg_rule *) a)->name, ((const struct jsg_rule *) b)->name);
}

char * json_schema_to_grammar(const json_t * schema, char * err, size_t err_size) {
    set_err(err, err_size, "");
    if (!schema) {
        set_err(err, err_size, "JSON schema conversion failed:\nno schema");
        return NULL;
    }
    struct jsg c;
    memset(&c, 0, sizeof(c));
    c.dotall = false;

    json_t * copy = json_deep_copy(schema);
    char * result = NULL;
    if (copy && hoist_defs_to_root(copy)) {
        set_rule(&c, "space", SPACE_RULE);
        resolve_refs(&c, copy, copy, 0);
        visit(&c, copy, "");
    } else {
        c.oom = true;
    }

    if (c.oom || c.errors.oom) {
        set_err(err, err_size, "JSON schema conversion failed:\nout of memory");
    } else if (c.errors.n > 0) {
        if (err && err_size > 0) {
            snprintf(err, err_size, "JSON schema conversion failed:\n%s", c.errors.s);
        }
    } else {
        if (c.warnings.n > 0) {
            LOG_WRN("WARNING: JSON schema conversion was incomplete: %s\n", c.warnings.s);
        }
        qsort(c.rules, c.n_rules, sizeof(*c.rules), cmp_rule);
        struct sb out = { 0 };
        for (size_t i = 0; i < c.n_rules; i++) {
            sb_add(&out, c.rules[i].name);
            sb_add(&out, " ::= ");
            sb_add(&out, c.rules[i].body);
            sb_addc(&out, '\n');
        }
        if (out.oom) {
            free(out.s);
            set_err(err, err_size, "JSON schema conversion failed:\nout of memory");
        } else {
            result = out.s;
        }
    }

    for (size_t i = 0; i < c.n_owned; i++) {
        free(c.owned[i]);
    }
    for (size_t i = 0; i < c.n_temps; i++) {
        json_decref(c.temps[i]);
    }
    free(c.owned);
    free(c.rules);
    free(c.refs);
    free(c.resolving);
    free(c.temps);
    free(c.errors.s);
    free(c.warnings.s);
    json_decref(copy);
    return result;
}

char * json_schema_to_grammar_str(const char * schema_text, char * err, size_t err_size) {
    json_error_t jerr;
    json_t * schema = json_loads(schema_text ? schema_text : "", JSON_DECODE_ANY, &jerr);
    if (!schema) {
        if (err && err_size > 0) {
            snprintf(err, err_size, "invalid JSON schema: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
        }
        return NULL;
    }
    char * g = json_schema_to_grammar(schema, err, err_size);
    json_decref(schema);
    return g;
}
