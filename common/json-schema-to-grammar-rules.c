// Rules of the JSON schema -> GBNF converter (see json-schema-to-grammar-impl.h): llama.cpp's primitive and
// string-format rules with their dependencies, and the rule table (name -> body; a name taken by another body
// gets a number appended), plus the repetition helper every kind of rule uses.
#include "json-schema-to-grammar-impl.h"

#include <string.h>

// llama.cpp's SPACE_RULE and primitive rules (facts of its grammar output, verbatim)
static const char * const SPACE_RULE = "| \" \" | \"\\n\"{1,2} [ \\t]{0,20}";

struct jsg_builtin_rule {
    const char * name;
    const char * content;
    const char * deps[6];
};

static const struct jsg_builtin_rule PRIMITIVE_RULES[] = {
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

static const struct jsg_builtin_rule STRING_FORMAT_RULES[] = {
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

static const struct jsg_builtin_rule * find_builtin(const struct jsg_builtin_rule * tab, size_t n, const char * name) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tab[i].name, name) == 0) {
            return &tab[i];
        }
    }
    return NULL;
}

const struct jsg_builtin_rule * jsg_find_primitive(const char * name) {
    return find_builtin(PRIMITIVE_RULES, N_ELEMS(PRIMITIVE_RULES), name);
}

const struct jsg_builtin_rule * jsg_find_string_format(const char * name) {
    return find_builtin(STRING_FORMAT_RULES, N_ELEMS(STRING_FORMAT_RULES), name);
}

// rule names a schema's own names must not take (they get a '-' appended)
bool jsg_is_reserved_name(const char * name) {
    return strcmp(name, "root") == 0 || jsg_find_primitive(name) != NULL || jsg_find_string_format(name) != NULL;
}

// the "space" rule every grammar starts with
void jsg_set_space_rule(struct jsg * c) {
    jsg_set_rule(c, "space", SPACE_RULE);
}

//
// the rule table
//

const char * jsg_find_rule(const struct jsg * c, const char * name) {
    for (size_t i = 0; i < c->n_rules; i++) {
        if (strcmp(c->rules[i].name, name) == 0) {
            return c->rules[i].body;
        }
    }
    return NULL;
}

void jsg_set_rule(struct jsg * c, const char * name, const char * body) {
    for (size_t i = 0; i < c->n_rules; i++) {
        if (strcmp(c->rules[i].name, name) == 0) {
            c->rules[i].body = body;
            return;
        }
    }
    if (!jsg_grow(c, (void **) &c->rules, &c->cap_rules, c->n_rules, sizeof(*c->rules))) {
        return;
    }
    c->rules[c->n_rules].name = name;
    c->rules[c->n_rules].body = body;
    c->n_rules++;
}

// runs of characters outside [a-zA-Z0-9-] become one '-' (llama.cpp's INVALID_RULE_CHARS_RE)
const char * jsg_sanitize_name(struct jsg * c, const char * name) {
    struct common_sb b = { 0 };
    common_sb_add(&b, ""); // "" stays a valid (empty) string
    bool in_run = false;
    for (const char * p = name; *p; p++) {
        const char ch = *p;
        const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-';
        if (ok) {
            common_sb_addc(&b, ch);
            in_run = false;
        } else if (!in_run) {
            common_sb_addc(&b, '-');
            in_run = true;
        }
    }
    return jsg_sb_own(c, &b);
}

// the rule's name: name itself when free or holding the same body, else name0, name1, ...
const char * jsg_add_rule(struct jsg * c, const char * name, const char * body) {
    const char * esc = jsg_sanitize_name(c, name);
    const char * cur = jsg_find_rule(c, esc);
    if (!cur || strcmp(cur, body) == 0) {
        jsg_set_rule(c, esc, body);
        return esc;
    }
    for (long long i = 0;; i++) {
        const char * key = JSG_CAT(c, esc, jsg_int_str(c, i));
        const char * b = jsg_find_rule(c, key);
        if (!b || strcmp(b, body) == 0 || c->oom) {
            jsg_set_rule(c, key, body);
            return key;
        }
    }
}

const char * jsg_add_primitive(struct jsg * c, const char * name, const struct jsg_builtin_rule * rule) {
    const char * n = jsg_add_rule(c, name, rule->content);
    for (size_t i = 0; i < N_ELEMS(rule->deps) && rule->deps[i]; i++) {
        const char * dep = rule->deps[i];
        const struct jsg_builtin_rule * d = jsg_find_primitive(dep);
        if (!d) {
            d = jsg_find_string_format(dep);
        }
        if (!d) {
            jsg_add_error(c, "Rule %s not known", dep);
            continue;
        }
        if (!jsg_find_rule(c, dep)) {
            jsg_add_primitive(c, dep, d);
        }
    }
    return n;
}

//
// repetitions
//

const char * jsg_build_repetition(struct jsg * c, const char * item, int min_items, int max_items,
                                  const char * separator) {
    const bool has_max = max_items != JSG_NO_MAX;
    if (max_items == 0) {
        return "";
    }
    // GBNF parsers unroll {m,n} and refuse counts above 2000 (llama.cpp's MAX_REPETITION_THRESHOLD)
    if (min_items > JSG_MAX_REPETITION || (has_max && max_items > JSG_MAX_REPETITION)) {
        jsg_add_error(c, "repetition count %d exceeds %d", has_max && max_items > min_items ? max_items : min_items,
                      JSG_MAX_REPETITION);
        return "";
    }
    if (min_items == 0 && max_items == 1) {
        return JSG_CAT(c, item, "?");
    }
    if (!separator || !*separator) {
        if (min_items == 1 && !has_max) {
            return JSG_CAT(c, item, "+");
        }
        if (min_items == 0 && !has_max) {
            return JSG_CAT(c, item, "*");
        }
        return JSG_CAT(c, item, "{", jsg_int_str(c, min_items), ",", has_max ? jsg_int_str(c, max_items) : "", "}");
    }
    const char * inner = JSG_CAT(c, "(", separator, " ", item, ")");
    const char * result = JSG_CAT(c, item, " ", jsg_build_repetition(c, inner, min_items == 0 ? 0 : min_items - 1,
                                                                     has_max ? max_items - 1 : max_items, NULL));
    if (min_items == 0) {
        result = JSG_CAT(c, "(", result, ")?");
    }
    return result;
}
