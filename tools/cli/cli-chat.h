// llama-cli's conversation: the list of (role, content) messages and its rendering through a chat template
// (llama_chat_apply_template: a built-in template name, or a template text it recognises).
#pragma once

#include "llama.h"

#include <stdbool.h>
#include <stddef.h>

struct cli_chat {
    char * tmpl;        // template name or text used for every rendering (owned)
    char ** roles;      // owned strings
    char ** contents;   // owned strings
    size_t n_msgs;
    size_t cap_msgs;
};

// Picks the template: `override` (--chat-template) when given, else the model's, else "chatml" (llama.cpp's
// fallback for a model without one). A model template that llama_chat_apply_template cannot format falls back to
// chatml with a warning; an unusable override is an error. false (and a message in err) on error.
bool cli_chat_init(struct cli_chat * chat, const struct llama_model * model, const char * override, char * err,
                   size_t err_size);
void cli_chat_free(struct cli_chat * chat);

// appends a copy of the message; false when out of memory
bool cli_chat_push(struct cli_chat * chat, const char * role, const char * content);
// drops the last message (no-op when empty)
void cli_chat_pop(struct cli_chat * chat);
// drops every message
void cli_chat_clear(struct cli_chat * chat);

// The conversation rendered with the assistant prefix appended (malloc'd, caller frees); NULL on failure.
char * cli_chat_format(const struct cli_chat * chat);
