// Internal to common/chat-grammar*.c: the state of one grammar build and the helpers the per-format builders
// share. Not a public API.
#pragma once

#include "chat-grammar.h"
#include "json-schema-to-grammar.h"

#include <stdbool.h>

struct chat_grammar_ctx {
    const struct common_chat_grammar_inputs * in;
    struct common_chat_grammar * out;
    struct common_grammar_builder * b;
    char ** tmp;          // strings made during the build (chat_grammar_fmt), freed at the end
    size_t n_tmp, cap_tmp;
    json_t * empty;       // {}: the parameters of a tool that gives none
    bool oom;
    char err[256];        // a bad tool: the reason
};

// printf into a string that lives until the end of the build; "" when out of memory
const char * chat_grammar_fmt(struct chat_grammar_ctx * g, const char * fmt, ...) __attribute__((format(printf, 2, 3)));
// a GBNF literal for text (until the end of the build)
const char * chat_grammar_lit(struct chat_grammar_ctx * g, const char * text);
// text as a JSON string ("..." with escapes), for a literal that matches a name as the model writes it in JSON
const char * chat_grammar_json_str(struct chat_grammar_ctx * g, const char * text);
// parts[0..n) joined with sep
const char * chat_grammar_join(struct chat_grammar_ctx * g, const char * const * parts, size_t n, const char * sep);

void chat_grammar_trigger(struct chat_grammar_ctx * g, enum common_grammar_trigger_type type, const char * value);
void chat_grammar_preserve(struct chat_grammar_ctx * g, const char * const * tokens, size_t n);
void chat_grammar_stop(struct chat_grammar_ctx * g, const char * stop);

// tool i of the request as llama.cpp's foreach_function takes it: 1 a function tool (*params: {} when it has
// none; its $refs resolved in the builder), 0 another kind of tool (skipped), -1 a function without a name
// (g->err set)
size_t chat_grammar_n_tools(const struct chat_grammar_ctx * g);
int    chat_grammar_tool(struct chat_grammar_ctx * g, size_t i, const char ** name, const json_t ** params);

// a growable list of rule names, strings owned by the build
struct chat_grammar_list {
    const char ** v;
    size_t n, cap;
};
void chat_grammar_list_push(struct chat_grammar_ctx * g, struct chat_grammar_list * l, const char * s);

// the formats (false: g->err or g->oom set)
bool chat_grammar_generic(struct chat_grammar_ctx * g);
bool chat_grammar_mistral_nemo(struct chat_grammar_ctx * g);
bool chat_grammar_command_r7b(struct chat_grammar_ctx * g);
bool chat_grammar_hermes_2_pro(struct chat_grammar_ctx * g);
bool chat_grammar_llama_3_x(struct chat_grammar_ctx * g, bool builtin);
bool chat_grammar_deepseek_r1(struct chat_grammar_ctx * g);
bool chat_grammar_functionary_v3_2(struct chat_grammar_ctx * g);
