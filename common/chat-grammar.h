// The grammar a chat format puts on a model's tool calls (llama.cpp's common_chat_params: grammar, grammar_lazy,
// grammar_triggers, preserved_tokens, additional_stops), built from the request's tools. The grammar constrains
// the format's tool-call syntax with the tools' JSON schemas; it is lazy (waits for a trigger: the format's
// call marker, or a call at the start of the output) unless tool_choice is "required", when it applies from the
// first token. The generic format is never lazy: its whole output is JSON.
#pragma once

#include "chat-parse.h"
#include "sampling-params.h"

#include <jansson.h>

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct common_chat_grammar_inputs {
    enum common_chat_format format;
    const json_t * tools;          // the request's OpenAI "tools" array (non-empty: tools are in use)
    bool tool_choice_required;     // tool_choice "required": a call is forced
    bool parallel_tool_calls;      // several calls allowed (the request asked and the template supports it)
    bool thinking_forced_open;     // the prompt ends inside an open thinking block
    const json_t * json_schema;    // the response schema (generic format only), NULL for none
};

struct common_chat_grammar {
    char * grammar;                 // owned; NULL: the format constrains nothing (no tools, content-only)
    bool   grammar_lazy;
    struct common_grammar_trigger * grammar_triggers;  // owned (values too)
    size_t n_grammar_triggers;
    char ** preserved_tokens;       // owned: marker texts that must stay one token
    size_t  n_preserved_tokens;
    char ** additional_stops;       // owned: stop strings the format adds (Llama 3.x: <|eom_id|>)
    size_t  n_additional_stops;
};

// Fills *out (initialized by this call). true with out->grammar NULL when the format has no tool-call grammar or
// no tools are given. false with a one-line reason in err on a bad tool (no name, builtin tool with the wrong
// parameters), a schema that does not convert, or out of memory; *out is then empty.
bool common_chat_grammar_init(const struct common_chat_grammar_inputs * in, struct common_chat_grammar * out,
                              char * err, size_t err_size);
void common_chat_grammar_free(struct common_chat_grammar * g);

#ifdef __cplusplus
}
#endif
