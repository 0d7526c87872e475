// Object rules of the JSON schema -> GBNF converter (see json-schema-to-grammar-impl.h): properties in their
// order, required ones first, optional ones each followed only by later ones; additionalProperties with a key
// rule matching any string but the named properties (a trie of the names); allOf merged into one object (or the
// enum values common to all components).
#include "json-schema-to-grammar-impl.h"

#include <stdlib.h>
#include <string.h>

struct jsg_prop {
    const char   * name;
    const json_t * schema;
};

struct jsg_props {
    struct jsg_prop * v;
    size_t n, cap;
};

static void props_push(struct jsg * c, struct jsg_props * p, const char * name, const json_t * schema) {
    if (jsg_grow(c, (void **) &p->v, &p->cap, p->n, sizeof(*p->v))) {
        p->v[p->n].name = name;
        p->v[p->n].schema = schema;
        p->n++;
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
    jsg_strs_push(c, &kv->keys, key);
    jsg_strs_push(c, &kv->rules, rule);
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
            if (!jsg_grow(c, (void **) &t->kids, &t->cap_kids, t->n_kids, sizeof(*t->kids))) {
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
static void class_char(struct common_sb * out, unsigned char ch) {
    if (ch == '\\' || ch == ']' || ch == '-' || ch == '^' || ch == '[') {
        common_sb_addf(out, "\\x%02X", ch);
    } else {
        common_sb_addc(out, (char) ch);
    }
}

static void not_strings_node(struct common_sb * out, const struct trie_node * node, const char * char_rule) {
    struct common_sb rejects = { 0 };
    bool first = true;
    for (size_t i = 0; i < node->n_kids; i++) {
        const struct trie_node * kid = &node->kids[i];
        class_char(&rejects, kid->ch);
        if (!first) {
            common_sb_add(out, " | ");
        }
        first = false;
        common_sb_addc(out, '[');
        class_char(out, kid->ch);
        common_sb_addc(out, ']');
        if (kid->n_kids > 0) {
            common_sb_add(out, " (");
            not_strings_node(out, kid, char_rule);
            common_sb_addc(out, ')');
        } else if (kid->end) {
            common_sb_addc(out, ' ');
            common_sb_add(out, char_rule);
            common_sb_addc(out, '+');
        }
    }
    if (node->n_kids > 0) {
        if (!first) {
            common_sb_add(out, " | ");
        }
        common_sb_add(out, "[^\"");
        if (rejects.s) {
            common_sb_add(out, rejects.s);
        }
        common_sb_add(out, "] ");
        common_sb_add(out, char_rule);
        common_sb_addc(out, '*');
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
    const char * char_rule = jsg_add_primitive(c, "char", jsg_find_primitive("char"));
    struct common_sb out = { 0 };
    common_sb_add(&out, "[\"] ( ");
    not_strings_node(&out, &trie, char_rule);
    common_sb_add(&out, " )");
    if (!trie.end) {
        common_sb_addc(&out, '?');
    }
    common_sb_add(&out, " [\"] space");
    trie_free(&trie);
    return jsg_sb_own(c, &out);
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
    const char * comma_ref = JSG_CAT(c, "( \",\" space ", kv_rule_name, " )");
    const char * res;
    if (first_is_optional) {
        res = JSG_CAT(c, comma_ref, star ? "*" : "?");
    } else {
        res = star ? JSG_CAT(c, kv_rule_name, " ", comma_ref, "*") : kv_rule_name;
    }
    if (from + 1 < ks->n) {
        const char * rest = recursive_refs(c, kv, ks, from + 1, true, name);
        res = JSG_CAT(c, res, " ", jsg_add_rule(c, jsg_sep_name(c, name, JSG_CAT(c, k, "-rest")), rest));
    }
    return res;
}

static const char * build_object_rule(struct jsg * c, const struct jsg_props * props, const struct jsg_strs * required,
                                      const char * name, const json_t * additional) {
    struct jsg_strs required_props = { 0 }, optional_props = { 0 }, prop_names = { 0 };
    struct jsg_kv kv = { { 0 }, { 0 } };
    for (size_t i = 0; i < props->n; i++) {
        const char * prop_name = props->v[i].name;
        const char * prop_rule_name = jsg_visit(c, props->v[i].schema, jsg_sep_name(c, name, prop_name));
        struct common_sb key = { 0 };
        jsg_dump_string(&key, prop_name, strlen(prop_name));
        const char * key_lit = jsg_format_literal(c, jsg_sb_own(c, &key));
        kv_set(c, &kv, prop_name, jsg_add_rule(c, jsg_sep_name(c, name, JSG_CAT(c, prop_name, "-kv")),
                                               JSG_CAT(c, key_lit, " space \":\" space ", prop_rule_name)));
        jsg_strs_push(c, strs_has(required, prop_name) ? &required_props : &optional_props, prop_name);
        jsg_strs_push(c, &prop_names, prop_name);
    }
    if (json_is_true(additional) || json_is_object(additional)) {
        const char * sub_name = jsg_sep_name(c, name, "additional");
        const char * value_rule = json_is_object(additional)
            ? jsg_visit(c, additional, JSG_CAT(c, sub_name, "-value"))
            : jsg_add_primitive(c, "value", jsg_find_primitive("value"));
        const char * key_rule = prop_names.n == 0
            ? jsg_add_primitive(c, "string", jsg_find_primitive("string"))
            : jsg_add_rule(c, JSG_CAT(c, sub_name, "-k"), not_strings(c, &prop_names));
        kv_set(c, &kv, "*", jsg_add_rule(c, JSG_CAT(c, sub_name, "-kv"),
                                         JSG_CAT(c, key_rule, " \":\" space ", value_rule)));
        jsg_strs_push(c, &optional_props, "*");
    }

    struct common_sb rule = { 0 };
    common_sb_add(&rule, "\"{\" space ");
    for (size_t i = 0; i < required_props.n; i++) {
        if (i > 0) {
            common_sb_add(&rule, " \",\" space ");
        }
        common_sb_add(&rule, kv_get(&kv, required_props.v[i]));
    }
    if (optional_props.n > 0) {
        common_sb_add(&rule, " (");
        if (required_props.n > 0) {
            common_sb_add(&rule, " \",\" space ( ");
        }
        for (size_t i = 0; i < optional_props.n; i++) {
            if (i > 0) {
                common_sb_add(&rule, " | ");
            }
            common_sb_add(&rule, recursive_refs(c, &kv, &optional_props, i, false, name));
        }
        if (required_props.n > 0) {
            common_sb_add(&rule, " )");
        }
        common_sb_add(&rule, " )?");
    }
    common_sb_add(&rule, " \"}\" space");

    free(required_props.v);
    free(optional_props.v);
    free(prop_names.v);
    free(kv.keys.v);
    free(kv.rules.v);
    return jsg_sb_own(c, &rule);
}

// an object schema with "properties" and/or "additionalProperties" (visit's object case)
const char * jsg_visit_object(struct jsg * c, const json_t * schema, const char * name, const char * rule_name) {
    const json_t * props = jsg_get(schema, "properties");
    const json_t * additional = jsg_get(schema, "additionalProperties");
    struct jsg_strs required = { 0 };
    const json_t * req = jsg_get(schema, "required");
    if (json_is_array(req)) {
        size_t i;
        const json_t * v;
        json_array_foreach(req, i, v) {
            if (json_is_string(v)) {
                jsg_strs_push(c, &required, json_string_value(v));
            }
        }
    }
    struct jsg_props list = { 0 };
    if (props) {
        if (!json_is_object(props)) {
            jsg_add_error(c, "\"properties\" must be an object");
            free(required.v);
            return "";
        }
        const char * k;
        const json_t * v;
        json_object_foreach((json_t *) props, k, v) {
            props_push(c, &list, k, v);
        }
    }
    const char * r = jsg_add_rule(c, rule_name, build_object_rule(c, &list, &required, name, additional));
    free(required.v);
    free(list.v);
    return r;
}

//
// allOf
//

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
        jsg_add_error(c, "allOf: $ref cycle");
        return;
    }
    const json_t * refj = jsg_get(comp, "$ref");
    const json_t * props = jsg_get(comp, "properties");
    const json_t * en = jsg_get(comp, "enum");
    if (refj) {
        const json_t * target = json_is_string(refj) ? jsg_ref_target(c, json_string_value(refj)) : NULL;
        if (target) {
            allof_component(c, st, target, is_required, depth + 1);
        }
    } else if (props) {
        const char * k;
        const json_t * v;
        json_object_foreach((json_t *) props, k, v) {
            props_push(c, &st->props, JSG_CAT(c, k), v);
            if (is_required) {
                jsg_strs_push(c, &st->required, JSG_CAT(c, k));
            }
        }
    } else if (en) {
        size_t i;
        const json_t * v;
        json_array_foreach(en, i, v) {
            const char * rule = jsg_constant_rule(c, v);
            size_t k = 0;
            while (k < st->enum_rules.n && strcmp(st->enum_rules.v[k], rule) != 0) {
                k++;
            }
            if (k == st->enum_rules.n) {
                jsg_strs_push(c, &st->enum_rules, rule);
                if (st->enum_rules.n != k + 1 ||
                    !jsg_grow(c, (void **) &st->enum_counts, &st->cap_counts, k, sizeof(*st->enum_counts))) {
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

const char * jsg_visit_all_of(struct jsg * c, const json_t * schema, const char * name, const char * rule_name) {
    const json_t * all = jsg_get(schema, "allOf");
    if (!json_is_array(all)) {
        jsg_add_error(c, "\"allOf\" must be an array");
        return "";
    }
    struct allof_state st = { { 0 }, { 0 }, { 0 }, NULL, 0 };
    size_t i;
    const json_t * t;
    json_array_foreach(all, i, t) {
        const json_t * any = jsg_get(t, "anyOf");
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
                jsg_strs_push(c, &common, st.enum_rules.v[k]);
            }
        }
        if (common.n > 0) {
            // llama.cpp keeps the values in a std::map: sorted by their text
            qsort(common.v, common.n, sizeof(*common.v), cmp_str);
            struct common_sb b = { 0 };
            common_sb_addc(&b, '(');
            for (size_t k = 0; k < common.n; k++) {
                if (k > 0) {
                    common_sb_add(&b, " | ");
                }
                common_sb_add(&b, common.v[k]);
            }
            common_sb_add(&b, ") space");
            result = jsg_add_rule(c, rule_name, jsg_sb_own(c, &b));
        }
        free(common.v);
    }
    if (!result) {
        result = jsg_add_rule(c, rule_name, build_object_rule(c, &st.props, &st.required, name, NULL));
    }
    free(st.props.v);
    free(st.required.v);
    free(st.enum_rules.v);
    free(st.enum_counts);
    return result;
}
