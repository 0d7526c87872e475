// A Jinja2 interpreter for chat templates (the `--jinja` path). It implements the subset real chat templates use
// (see common/jinja/README.md): text, {{ }}, {% %}, {# #}, whitespace control with trim_blocks and lstrip_blocks on
// (llama.cpp's setting for chat templates), if/for/set/macro, filters, tests, string/dict/list methods.
//
// Errors never crash: parse and render failures return NULL and write "line L, column C: message" into err.
// Output size, memory, nesting depth and work are capped, so a hostile template ends with an error.
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct jinja_template;

// Parses `src` (UTF-8). Returns the template (free with jinja_template_free) or NULL with a message in err.
struct jinja_template * jinja_template_parse(const char * src, char * err, size_t err_size);
void                    jinja_template_free(struct jinja_template * tmpl);

// Renders with the variables of `context` (a JSON object; NULL = none). Returns the text (malloc'd, caller frees)
// or NULL with a message in err (raise_exception(msg) gives "... : msg").
char * jinja_template_render(const struct jinja_template * tmpl, const json_t * context, char * err,
                             size_t err_size);

#ifdef __cplusplus
}
#endif
