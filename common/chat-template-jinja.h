// Chat templates rendered by the Jinja interpreter (common/jinja): llama.cpp's `--jinja` path. A template text is
// parsed once, probed for its capabilities (as llama.cpp's jinja::caps_get does) and then applied to OpenAI-style
// messages with bos_token / eos_token / add_generation_prompt / tools and the request's chat_template_kwargs.
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// llama.cpp's chat_template_caps (its names; /props reports them)
struct common_chat_jinja_caps {
    bool supports_string_content;
    bool supports_typed_content;
    bool supports_tools;
    bool supports_tool_calls;
    bool supports_parallel_tool_calls;
    bool supports_system_role;
    bool supports_preserve_reasoning;
};

struct common_chat_jinja {
    struct jinja_template *       tmpl;
    char *                        bos_token; // owned
    char *                        eos_token; // owned
    bool                          strip_bos; // the vocabulary adds BOS itself: drop a leading bos_token
    bool                          strip_eos; // the vocabulary adds EOS itself: drop a trailing eos_token
    struct common_chat_jinja_caps caps;
};

// true when `tmpl` looks like Jinja (has "{%" or "{{"); a plain word is a built-in template name
bool common_chat_jinja_is_template(const char * tmpl);

// Parses `src` and probes its capabilities. bos/eos: the vocabulary's token texts (NULL = ""). NULL with a message
// in err when the text does not parse. Free with common_chat_jinja_free.
struct common_chat_jinja * common_chat_jinja_init(const char * src, const char * bos_token, const char * eos_token,
                                                  char * err, size_t err_size);
void common_chat_jinja_free(struct common_chat_jinja * cj);

// Renders `messages` (JSON array of {role, content, ...}; content a string or a list of {type:"text",text}),
// `tools` (JSON array or NULL), add_generation_prompt and `kwargs` (JSON object of extra variables, e.g.
// {"enable_thinking": false}; NULL = none). A leading system message is merged into the first user message when
// the template ignores the system role (llama.cpp does the same). malloc'd text, or NULL with err set.
char * common_chat_jinja_apply(const struct common_chat_jinja * cj, const json_t * messages, const json_t * tools,
                               bool add_generation_prompt, const json_t * kwargs, char * err, size_t err_size);

// the caps as a JSON object (new reference)
json_t * common_chat_jinja_caps_json(const struct common_chat_jinja_caps * caps);

#ifdef __cplusplus
}
#endif
