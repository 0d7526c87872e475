// llama.cpp's build_grammar / common_grammar_builder: a grammar made of hand-written rules (the tool-call syntax of
// a chat format) and rules converted from JSON schemas (the tools' parameters), sharing one rule table so that
// the primitive rules (space, string, ...) are written once and rule names never collide.
#include "json-schema-to-grammar-impl.h"
#include "json-schema-to-grammar.h"

#include <stdlib.h>
#include <string.h>

struct common_grammar_builder {
    struct jsg c;
};

struct common_grammar_builder * common_grammar_builder_init(void) {
    struct common_grammar_builder * b = calloc(1, sizeof(*b));
    if (b) {
        jsg_set_space_rule(&b->c);
    }
    return b;
}

void common_grammar_builder_free(struct common_grammar_builder * b) {
    if (b) {
        jsg_release(&b->c);
        free(b);
    }
}

// the schema copied into the conversion (it lives until the builder is freed, as the refs point into it)
static json_t * keep_copy(struct jsg * c, const json_t * schema) {
    json_t * copy = schema ? json_deep_copy(schema) : NULL;
    if (!copy || !jsg_hoist_defs_to_root(copy) ||
        !jsg_grow(c, (void **) &c->temps, &c->cap_temps, c->n_temps, sizeof(*c->temps))) {
        json_decref(copy);
        c->oom = true;
        return NULL;
    }
    c->temps[c->n_temps++] = copy;
    return copy;
}

void common_grammar_builder_resolve_refs(struct common_grammar_builder * b, const json_t * schema) {
    json_t * copy = keep_copy(&b->c, schema);
    if (copy) {
        jsg_resolve_refs(&b->c, copy, copy, 0);
    }
}

const char * common_grammar_builder_add_rule(struct common_grammar_builder * b, const char * name, const char * rule) {
    if (b->c.oom) {
        return "";
    }
    // the table keeps pointers: the body must live as long as the builder
    struct common_sb body = { 0 };
    common_sb_add(&body, rule);
    return jsg_add_rule(&b->c, name, jsg_sb_own(&b->c, &body));
}

const char * common_grammar_builder_add_schema(struct common_grammar_builder * b, const char * name,
                                               const json_t * schema) {
    json_t * copy = keep_copy(&b->c, schema);
    if (!copy) {
        return "";
    }
    // refs of a schema that was not resolved before (resolved ones are kept as they are)
    jsg_resolve_refs(&b->c, copy, copy, 0);
    return jsg_visit(&b->c, copy, strcmp(name, "root") == 0 ? "" : name);
}

const char * common_grammar_builder_literal(struct common_grammar_builder * b, const char * text) {
    return jsg_format_literal(&b->c, text);
}

char * common_grammar_builder_build(struct common_grammar_builder * b, char * err, size_t err_size) {
    if (err && err_size > 0) {
        err[0] = '\0';
    }
    if (!jsg_find_rule(&b->c, "root")) {
        jsg_add_error(&b->c, "the grammar has no root rule");
    }
    return jsg_format_grammar(&b->c, err, err_size);
}
