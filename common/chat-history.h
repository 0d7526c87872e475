// A conversation for the chat programs (llama-cli, llama-completion -cnv): the list of (role, content) messages
// and its rendering through a chat template: with --jinja (the default) the template text runs in the Jinja
// interpreter (chat-template-jinja.h); otherwise, or when that fails, llama_chat_apply_template formats it (a
// built-in template name, or a template text it recognises).
#pragma once

#include "llama.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct common_chat_jinja;

struct common_chat_history {
    char * tmpl;        // template name or text for the built-in formatter (owned)
    struct common_chat_jinja * jinja; // the Jinja template when --jinja and it parsed (owned); NULL = built-in only
    bool   explicit_tmpl; // the template came from --chat-template or the model (not the chatml fallback)
    char * template_kwargs; // --chat-template-kwargs: a JSON object text for the Jinja template (owned; may be NULL)
    char ** roles;      // owned strings
    char ** contents;   // owned strings
    size_t n_msgs;
    size_t cap_msgs;
};

// Picks the template: `override` (--chat-template) when given, else the model's, else "chatml" (llama.cpp's
// fallback for a model without one). With use_jinja a template text (not a built-in name) is parsed by the Jinja
// interpreter, with the model's BOS/EOS texts; a text that does not parse logs a warning and leaves the built-in
// formatter. For the built-in formatter, a model template that llama_chat_apply_template cannot format falls back
// to chatml with a warning; an override that neither Jinja nor the built-in formatter can use is an error. false
// (and a message in err) on error.
bool common_chat_history_init(struct common_chat_history * chat, const struct llama_model * model,
                              const char * override, bool use_jinja, char * err, size_t err_size);
void common_chat_history_free(struct common_chat_history * chat);

// appends a copy of the message; false when out of memory
bool common_chat_history_push(struct common_chat_history * chat, const char * role, const char * content);
// drops the last message (no-op when empty)
void common_chat_history_pop(struct common_chat_history * chat);
// drops every message
void common_chat_history_clear(struct common_chat_history * chat);

// The whole conversation rendered, with the assistant prefix appended when add_ass (malloc'd, caller frees);
// NULL on failure.
char * common_chat_history_format(const struct common_chat_history * chat, bool add_ass);

// llama.cpp's common_chat_format_single: appends the message and returns only the text it adds to the rendering
// (the rendering with it, and the assistant prefix when add_ass, minus the rendering without it). When add_ass and
// the earlier rendering ends with '\n', the result starts with an extra "\n", as llama.cpp's does (it stands for
// the newline after an end-of-turn token the model generated). malloc'd, caller frees; NULL on failure, and then
// the message is not kept.
char * common_chat_history_add_and_format(struct common_chat_history * chat, const char * role, const char * content,
                                          bool add_ass);

// llama.cpp's common_chat_format_example: the template applied to a short sample conversation (malloc'd; NULL on
// failure)
char * common_chat_history_format_example(const struct common_chat_history * chat);

#ifdef __cplusplus
}
#endif
