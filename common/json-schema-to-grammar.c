// JSON schema -> GBNF (see json-schema-to-grammar.h): the schema visitor and the entry points. The conversion
// follows llama.cpp's common/json-schema-to-grammar.cpp rule for rule, so the grammar text matches it: rules are
// kept in a table printed sorted by name, a name already taken by another body gets a number appended, primitive
// rules pull in the rules they use. Where llama.cpp would emit a grammar its own GBNF parser rejects, or would
// loop (stray ']' in a pattern), the converter reports an error or emits the equivalent valid GBNF instead; those
// places say so. The parts: json-schema-to-grammar-impl.h.
#include "json-schema-to-grammar.h"
#include "json-schema-to-grammar-impl.h"

#include "log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//
// visit: one schema -> the name of its rule
//

static const char * union_rule(struct jsg * c, const char * name, const json_t * const * alts, size_t n) {
    if (n == 0) {
        // nothing can match, and GBNF has no empty alternation to say so
        jsg_add_error(c, "an empty \"type\", \"anyOf\" or \"oneOf\" list matches nothing");
        return "";
    }
    struct common_sb out = { 0 };
    for (size_t i = 0; i < n; i++) {
        const char * idx = jsg_int_str(c, (long long) i);
        const char * sub = *name ? JSG_CAT(c, name, "-", idx) : JSG_CAT(c, "alternative-", idx);
        if (i > 0) {
            common_sb_add(&out, " | ");
        }
        common_sb_add(&out, jsg_visit(c, alts[i], sub));
    }
    return jsg_sb_own(c, &out);
}

static bool type_is(const json_t * type, const char * name) {
    return json_is_string(type) && strcmp(json_string_value(type), name) == 0;
}

static bool keep_temp(struct jsg * c, json_t * v) {
    if (!v || !jsg_grow(c, (void **) &c->temps, &c->cap_temps, c->n_temps, sizeof(*c->temps))) {
        json_decref(v);
        c->oom = true;
        return false;
    }
    c->temps[c->n_temps++] = v;
    return true;
}

// llama.cpp's json::empty(): null, {} and []
static bool is_empty(const json_t * v) {
    return !v || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0);
}

// a count such as minItems / maxLength: a non-negative integer (a real is truncated, as nlohmann's get<int>)
static bool read_count(struct jsg * c, const json_t * schema, const char * key, int * out) {
    const json_t * v = jsg_get(schema, key);
    double d;
    if (json_is_integer(v)) {
        d = (double) json_integer_value(v);
    } else if (json_is_real(v)) {
        d = trunc(json_real_value(v));
    } else {
        jsg_add_error(c, "\"%s\" must be a number", key);
        return false;
    }
    if (!(d >= 0.0 && d < (double) INT_MAX)) {
        jsg_add_error(c, "\"%s\" must be in [0, %d)", key, INT_MAX);
        return false;
    }
    *out = (int) d;
    return true;
}

static bool is_uuid_format(const char * f) {
    // ^uuid[1-5]?$
    return strncmp(f, "uuid", 4) == 0 && (f[4] == '\0' || (f[4] >= '1' && f[4] <= '5' && f[5] == '\0'));
}

static const char * visit_impl(struct jsg * c, const json_t * schema, const char * name) {
    const json_t * type = jsg_get(schema, "type");
    const bool no_type = !type || json_is_null(type);
    const json_t * format_j = jsg_get(schema, "format");
    const char * format = "";
    if (format_j) {
        if (!json_is_string(format_j)) {
            jsg_add_error(c, "\"format\" must be a string");
            return "";
        }
        format = json_string_value(format_j);
    }
    const char * rule_name = jsg_is_reserved_name(name) ? JSG_CAT(c, name, "-") : (*name ? name : "root");

    const json_t * refj = jsg_get(schema, "$ref");
    if (refj) {
        if (!json_is_string(refj)) {
            jsg_add_error(c, "\"$ref\" must be a string");
            return "";
        }
        return jsg_add_rule(c, rule_name, jsg_resolve_ref(c, json_string_value(refj)));
    }
    const json_t * alts = jsg_get(schema, "oneOf");
    if (!alts) {
        alts = jsg_get(schema, "anyOf");
    }
    if (alts) {
        if (!json_is_array(alts)) {
            jsg_add_error(c, "\"%s\" must be an array", jsg_get(schema, "oneOf") ? "oneOf" : "anyOf");
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
        const char * r = jsg_add_rule(c, rule_name, union_rule(c, name, v, n));
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
        const char * r = jsg_add_rule(c, rule_name, union_rule(c, name, v, n));
        free(v);
        return r;
    }
    const json_t * cst = jsg_get(schema, "const");
    if (cst) {
        return jsg_add_rule(c, rule_name, JSG_CAT(c, jsg_constant_rule(c, cst), " space"));
    }
    const json_t * en = jsg_get(schema, "enum");
    if (en) {
        if (!json_is_array(en)) {
            jsg_add_error(c, "\"enum\" must be an array");
            return "";
        }
        struct common_sb b = { 0 };
        common_sb_addc(&b, '(');
        size_t i;
        const json_t * v;
        json_array_foreach(en, i, v) {
            if (i > 0) {
                common_sb_add(&b, " | ");
            }
            common_sb_add(&b, jsg_constant_rule(c, v));
        }
        common_sb_add(&b, ") space");
        return jsg_add_rule(c, rule_name, jsg_sb_own(c, &b));
    }
    const json_t * props = jsg_get(schema, "properties");
    const json_t * additional = jsg_get(schema, "additionalProperties");
    if ((no_type || type_is(type, "object")) && (props || (additional && !json_is_true(additional)))) {
        return jsg_visit_object(c, schema, name, rule_name);
    }
    if ((no_type || type_is(type, "object") || type_is(type, "string")) && jsg_get(schema, "allOf")) {
        return jsg_visit_all_of(c, schema, name, rule_name);
    }
    const json_t * items = jsg_get(schema, "items");
    if (!items) {
        items = jsg_get(schema, "prefixItems");
    }
    if ((no_type || type_is(type, "array")) && items) {
        if (json_is_array(items)) {
            struct common_sb b = { 0 };
            common_sb_add(&b, "\"[\" space ");
            size_t i;
            const json_t * v;
            json_array_foreach(items, i, v) {
                if (i > 0) {
                    common_sb_add(&b, " \",\" space ");
                }
                common_sb_add(&b, jsg_visit(c, v, jsg_sep_name(c, name,
                                                            JSG_CAT(c, "tuple-", jsg_int_str(c, (long long) i)))));
            }
            common_sb_add(&b, " \"]\" space");
            return jsg_add_rule(c, rule_name, jsg_sb_own(c, &b));
        }
        const char * item_rule_name = jsg_visit(c, items, jsg_sep_name(c, name, "item"));
        int min_items = 0, max_items = JSG_NO_MAX;
        if (jsg_get(schema, "minItems") && !read_count(c, schema, "minItems", &min_items)) {
            return "";
        }
        // as llama.cpp: only an integer maxItems bounds the array
        if (json_is_integer(jsg_get(schema, "maxItems")) && !read_count(c, schema, "maxItems", &max_items)) {
            return "";
        }
        const char * repetition = jsg_build_repetition(c, item_rule_name, min_items, max_items, "\",\" space");
        return jsg_add_rule(c, rule_name, JSG_CAT(c, "\"[\" space ", repetition, " \"]\" space"));
    }
    const json_t * pattern = jsg_get(schema, "pattern");
    if ((no_type || type_is(type, "string")) && pattern) {
        if (!json_is_string(pattern)) {
            jsg_add_error(c, "\"pattern\" must be a string");
            return "";
        }
        return jsg_visit_pattern(c, json_string_value(pattern), rule_name);
    }
    if ((no_type || type_is(type, "string")) && is_uuid_format(format)) {
        return jsg_add_primitive(c, strcmp(rule_name, "root") == 0 ? "root" : format, jsg_find_primitive("uuid"));
    }
    if (no_type || type_is(type, "string")) {
        const char * prim_name = JSG_CAT(c, format, "-string");
        const struct jsg_builtin_rule * fr = jsg_find_string_format(prim_name);
        if (fr) {
            return jsg_add_rule(c, rule_name, jsg_add_primitive(c, prim_name, fr));
        }
    }
    if (type_is(type, "string") && (jsg_get(schema, "minLength") || jsg_get(schema, "maxLength"))) {
        const char * char_rule = jsg_add_primitive(c, "char", jsg_find_primitive("char"));
        int min_len = 0, max_len = JSG_NO_MAX;
        if ((jsg_get(schema, "minLength") && !read_count(c, schema, "minLength", &min_len)) ||
            (jsg_get(schema, "maxLength") && !read_count(c, schema, "maxLength", &max_len))) {
            return "";
        }
        return jsg_add_rule(c, rule_name, JSG_CAT(c, "\"\\\"\" ",
                                                  jsg_build_repetition(c, char_rule, min_len, max_len, ""),
                                                  " \"\\\"\" space"));
    }
    if (type_is(type, "integer") && (jsg_get(schema, "minimum") || jsg_get(schema, "exclusiveMinimum") ||
                                     jsg_get(schema, "maximum") || jsg_get(schema, "exclusiveMaximum"))) {
        return jsg_visit_integer_range(c, schema, rule_name);
    }
    if (is_empty(schema) || type_is(type, "object")) {
        return jsg_add_rule(c, rule_name, jsg_add_primitive(c, "object", jsg_find_primitive("object")));
    }
    if (no_type && json_is_object(schema)) {
        // no type and no keyword we know (e.g. only "description"): any JSON value
        return jsg_add_rule(c, rule_name, jsg_add_primitive(c, "value", jsg_find_primitive("value")));
    }
    const struct jsg_builtin_rule * prim = json_is_string(type) ? jsg_find_primitive(json_string_value(type)) : NULL;
    if (!prim) {
        jsg_add_error(c, "Unrecognized schema: %s", jsg_dump_short(c, schema));
        return "";
    }
    return jsg_add_primitive(c, strcmp(rule_name, "root") == 0 ? "root" : json_string_value(type), prim);
}

const char * jsg_visit(struct jsg * c, const json_t * schema, const char * name) {
    if (c->oom) {
        return "";
    }
    if (c->depth >= JSG_MAX_DEPTH) {
        if (!c->too_deep) {
            jsg_add_error(c, "schema nested too deeply (more than %d levels)", JSG_MAX_DEPTH);
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

char * jsg_format_grammar(struct jsg * c, char * err, size_t err_size) {
    if (c->oom || c->errors.oom) {
        set_err(err, err_size, "JSON schema conversion failed:\nout of memory");
        return NULL;
    }
    if (c->errors.n > 0) {
        if (err && err_size > 0) {
            snprintf(err, err_size, "JSON schema conversion failed:\n%s", c->errors.s);
        }
        return NULL;
    }
    if (c->warnings.n > 0) {
        LOG_WRN("WARNING: JSON schema conversion was incomplete: %s\n", c->warnings.s);
    }
    qsort(c->rules, c->n_rules, sizeof(*c->rules), cmp_rule);
    struct common_sb out = { 0 };
    for (size_t i = 0; i < c->n_rules; i++) {
        common_sb_add(&out, c->rules[i].name);
        common_sb_add(&out, " ::= ");
        common_sb_add(&out, c->rules[i].body);
        common_sb_addc(&out, '\n');
    }
    if (out.oom) {
        free(out.s);
        set_err(err, err_size, "JSON schema conversion failed:\nout of memory");
        return NULL;
    }
    return out.s;
}

void jsg_release(struct jsg * c) {
    for (size_t i = 0; i < c->n_owned; i++) {
        free(c->owned[i]);
    }
    for (size_t i = 0; i < c->n_temps; i++) {
        json_decref(c->temps[i]);
    }
    free(c->owned);
    free(c->rules);
    free(c->refs);
    free(c->resolving);
    free(c->temps);
    free(c->errors.s);
    free(c->warnings.s);
    memset(c, 0, sizeof(*c));
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
    if (copy && jsg_hoist_defs_to_root(copy)) {
        jsg_set_space_rule(&c);
        jsg_resolve_refs(&c, copy, copy, 0);
        jsg_visit(&c, copy, "");
    } else {
        c.oom = true;
    }
    char * result = jsg_format_grammar(&c, err, err_size);
    jsg_release(&c);
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
