// JSON schema -> GBNF grammar, as llama.cpp's common/json-schema-to-grammar: the same rule names, primitive
// rules and whitespace rule, so that a schema gives the grammar text llama.cpp gives for it.
//
// Supported: type (one or a list), enum, const, properties / required / additionalProperties, items /
// prefixItems (tuples) / minItems / maxItems, minLength / maxLength, pattern (a regular expression anchored with
// ^...$: literals, ., [...] classes, (...) and (?:...) groups, |, *, +, ?, {m,n}, \d \w \s), anyOf / oneOf,
// allOf (merged object properties, intersected enums), $ref to local JSON pointers (#/definitions/..,
// #/$defs/.., #/properties/..), format date / time / date-time / uuid, minimum / maximum / exclusiveMinimum /
// exclusiveMaximum for integers. Remote $refs (https://...) are refused: nothing is fetched.
#pragma once

#include <jansson.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// The grammar (root rule "root") for schema; malloc'd, the caller frees it. NULL when the schema cannot be
// converted (unknown type, bad $ref, bad pattern, ...) or memory ran out, with the reason in err[0..err_size)
// ("JSON schema conversion failed:\n" followed by one line per problem, as llama.cpp's exception text).
// err may be NULL. schema is not modified.
char * json_schema_to_grammar(const json_t * schema, char * err, size_t err_size);

// json_schema_to_grammar on JSON text (the -j / --json-schema flag, a request's schema string):
// NULL with err set on malformed JSON too.
char * json_schema_to_grammar_str(const char * schema_text, char * err, size_t err_size);

// literal as a GBNF string literal: "..." with \r \n " \ escaped (llama.cpp's gbnf_format_literal);
// malloc'd, NULL when out of memory
char * gbnf_format_literal(const char * literal);

// llama.cpp's build_grammar with its common_grammar_builder callbacks: hand-written rules and converted schemas in
// one rule table (the tool-call grammars of the chat formats). Strings returned by the builder live as long as it.
struct common_grammar_builder;

// NULL when out of memory
struct common_grammar_builder * common_grammar_builder_init(void);
void                            common_grammar_builder_free(struct common_grammar_builder * b);
// adds `name ::= rule` and returns the rule's name (sanitized; name0, name1, ... when taken by another body)
const char * common_grammar_builder_add_rule(struct common_grammar_builder * b, const char * name, const char * rule);
// converts schema into rules named after name ("root" makes the root rule) and returns the top rule's name
const char * common_grammar_builder_add_schema(struct common_grammar_builder * b, const char * name,
                                               const json_t * schema);
// resolves the local $refs of schema against schema itself, for schemas later embedded in a bigger one
void         common_grammar_builder_resolve_refs(struct common_grammar_builder * b, const json_t * schema);
// text as a GBNF string literal
const char * common_grammar_builder_literal(struct common_grammar_builder * b, const char * text);
// the grammar (malloc'd), or NULL with the reason in err (a conversion error, no root rule, out of memory)
char *       common_grammar_builder_build(struct common_grammar_builder * b, char * err, size_t err_size);

#ifdef __cplusplus
}
#endif
