// Internals of the JSON schema -> GBNF converter, shared by its files (not for use outside them):
//   json-schema-to-grammar.c          the schema visitor and the entry points
//   json-schema-to-grammar-util.c     string builder, the conversion's string arena, errors, JSON text, literals
//   json-schema-to-grammar-rules.c    llama.cpp's primitive rules and the rule table
//   json-schema-to-grammar-int.c      integer ranges (minimum / maximum)
//   json-schema-to-grammar-refs.c     $ref resolution and $defs hoisting
//   json-schema-to-grammar-object.c   object rules (properties, additionalProperties, allOf)
//   json-schema-to-grammar-pattern.c  regular expression (pattern) -> GBNF
//
// Memory: every string made during one conversion is recorded in the converter (jsg_sb_own, jsg_cat) and freed
// at the end, so the string-building code never frees; running out of memory sets a flag and yields "" until the
// end.
#pragma once

#include "string-builder.h"

#include <jansson.h>

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSG_NO_MAX    INT_MAX   // "no upper bound" for repetitions (llama.cpp: numeric_limits<int>::max())
#define JSG_MAX_REPETITION 2000 // the largest {m,n} count GBNF parsers take
#define JSG_MAX_DEPTH 256       // nested schemas / refs followed before giving up (keeps the C stack bounded)


struct jsg_rule {
    const char * name;
    const char * body;
};

struct jsg_ref {
    const char   * ref;
    const json_t * target; // borrowed from the converter's copy of the schema
};

// converter state of one conversion
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

    struct common_sb errors;
    struct common_sb warnings;
    int  depth;
    bool too_deep;
};

// a list of strings (the array is malloc'd by jsg_strs_push, the strings are not owned)
struct jsg_strs {
    const char ** v;
    size_t n, cap;
};

// one of llama.cpp's primitive or string-format rules (json-schema-to-grammar-rules.c)
struct jsg_builtin_rule;


// arena: the returned strings live until the end of the conversion; "" when out of memory
bool         jsg_grow   (struct jsg * c, void ** arr, size_t * cap, size_t n, size_t elem); // room for arr[n]
const char * jsg_sb_own (struct jsg * c, struct common_sb * b); // takes b's string
const char * jsg_cat    (struct jsg * c, const char * first, ...);
#define JSG_CAT(c, ...) jsg_cat((c), __VA_ARGS__, (const char *) NULL)
const char * jsg_int_str (struct jsg * c, long long v);
const char * jsg_sep_name(struct jsg * c, const char * name, const char * suffix);
void         jsg_strs_push(struct jsg * c, struct jsg_strs * s, const char * str);

void jsg_add_error  (struct jsg * c, const char * fmt, ...) __attribute__((format(printf, 2, 3)));
void jsg_add_warning(struct jsg * c, const char * msg);

// JSON text as nlohmann::json::dump() writes it; the schema lookup that tolerates non-objects
void           jsg_dump_string   (struct common_sb * b, const char * s, size_t n);
const char   * jsg_dump_short    (struct jsg * c, const json_t * v); // cut short, for error messages
const char   * jsg_format_literal(struct jsg * c, const char * s);   // as gbnf_format_literal
const char   * jsg_constant_rule (struct jsg * c, const json_t * v);
const json_t * jsg_get           (const json_t * schema, const char * key);

// llama.cpp's primitive rules and the rule table (json-schema-to-grammar-rules.c)
const struct jsg_builtin_rule * jsg_find_primitive    (const char * name);
const struct jsg_builtin_rule * jsg_find_string_format(const char * name);
bool         jsg_is_reserved_name(const char * name);
void         jsg_set_space_rule  (struct jsg * c);
const char * jsg_find_rule       (const struct jsg * c, const char * name);
void         jsg_set_rule        (struct jsg * c, const char * name, const char * body);
const char * jsg_sanitize_name   (struct jsg * c, const char * name);
const char * jsg_add_rule        (struct jsg * c, const char * name, const char * body);
const char * jsg_add_primitive   (struct jsg * c, const char * name, const struct jsg_builtin_rule * rule);
const char * jsg_build_repetition(struct jsg * c, const char * item, int min_items, int max_items,
                                  const char * separator);

// $ref (json-schema-to-grammar-refs.c)
bool           jsg_hoist_defs_to_root(json_t * schema);
void           jsg_resolve_refs(struct jsg * c, const json_t * root, const json_t * n, int depth);
const json_t * jsg_ref_target  (const struct jsg * c, const char * ref);
const char   * jsg_resolve_ref (struct jsg * c, const char * ref);

// the rules as grammar text (sorted by name; malloc'd), or NULL with the errors in err; jsg_release frees what the
// conversion made (json-schema-to-grammar.c)
char * jsg_format_grammar(struct jsg * c, char * err, size_t err_size);
void   jsg_release(struct jsg * c);

// visitors: the name of the rule made for the schema ("" after an error)
const char * jsg_visit              (struct jsg * c, const json_t * schema, const char * name);
const char * jsg_visit_object       (struct jsg * c, const json_t * schema, const char * name, const char * rule_name);
const char * jsg_visit_all_of       (struct jsg * c, const json_t * schema, const char * name, const char * rule_name);
const char * jsg_visit_integer_range(struct jsg * c, const json_t * schema, const char * rule_name);
const char * jsg_visit_pattern      (struct jsg * c, const char * pattern, const char * name);
