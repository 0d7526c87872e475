// Reasoning and tool calls out of generated chat text, llama.cpp's common/chat way: a format is picked from the
// chat template's source (common_chat_detect_format, llama.cpp's detection rules in common_chat_templates_apply),
// and common_chat_parse splits a model's output in that format into content, reasoning_content and tool calls.
// A partial parse (generation in progress) never fails: an incomplete marker or tool call is held back, or shown
// with the arguments so far, so that successive parses only grow (common_chat_msg_diffs gives what is new).
#pragma once

#include "common.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// llama.cpp's enum names (the subset this parser implements); common_chat_format_name gives llama.cpp's strings
enum common_chat_format {
    COMMON_CHAT_FORMAT_CONTENT_ONLY,
    COMMON_CHAT_FORMAT_GENERIC,
    COMMON_CHAT_FORMAT_MISTRAL_NEMO,
    COMMON_CHAT_FORMAT_LLAMA_3_X,
    COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS,
    COMMON_CHAT_FORMAT_DEEPSEEK_R1,
    COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2,
    COMMON_CHAT_FORMAT_HERMES_2_PRO,
    COMMON_CHAT_FORMAT_COMMAND_R7B,

    COMMON_CHAT_FORMAT_COUNT,
};

// "Content-only", "Generic", "Hermes 2 Pro", ...; "unknown" out of range
const char * common_chat_format_name(enum common_chat_format format);
// "none", "auto", "deepseek-legacy", "deepseek"
const char * common_reasoning_format_name(enum common_reasoning_format format);
// false when `name` is none of those
bool common_reasoning_format_from_name(const char * name, enum common_reasoning_format * out);

// How llama.cpp picks the output format for a Jinja template: `src` is the template text, has_tools a request with
// a non-empty "tools" (and tool_choice not "none"), has_json_schema a request with a response schema,
// has_builtin_tools a Llama 3.x builtin tool among them (wolfram_alpha, web_search / brave_search, python /
// code_interpreter). Formats llama.cpp has and this parser lacks (GPT-OSS, Granite, DeepSeek V3.1, ...) give
// CONTENT_ONLY, which still extracts <think> blocks.
enum common_chat_format common_chat_detect_format(const char * src, bool has_tools, bool has_json_schema,
                                                  bool has_builtin_tools);

// llama.cpp's common_chat_syntax: what the parser needs to know besides the text
struct common_chat_syntax {
    enum common_chat_format      format;
    enum common_reasoning_format reasoning_format;
    bool reasoning_in_content;  // keep thoughts in the content with their tags (deepseek-legacy while streaming)
    bool thinking_forced_open;  // the prompt ended inside an open thinking block
    bool parse_tool_calls;      // false: only reasoning is split off, tool-call syntax stays content
};

struct common_chat_tool_call {
    char * name;       // owned
    char * arguments;  // owned: JSON text (the object as generated, whitespace outside strings removed)
    char * id;         // owned: the id the model wrote, "" when none (the server gives one)
};

struct common_chat_msg {
    char * content;            // owned, never NULL after a successful parse
    char * reasoning_content;  // owned, never NULL after a successful parse
    struct common_chat_tool_call * tool_calls;
    size_t n_tool_calls;
};

void common_chat_msg_init(struct common_chat_msg * msg);
void common_chat_msg_free(struct common_chat_msg * msg);
// deep copy into *dst (initialized by this call); false when out of memory
bool common_chat_msg_copy(struct common_chat_msg * dst, const struct common_chat_msg * src);

// Parses input[0..len) into *out (initialized by this call; free with common_chat_msg_free). is_partial: more text
// may follow. A complete text that does not parse in the format falls back to content-only (thoughts still split
// off), as llama.cpp does. Returns false only when out of memory (out is then empty).
bool common_chat_parse(const char * input, size_t len, bool is_partial, const struct common_chat_syntax * syntax,
                       struct common_chat_msg * out);

// llama.cpp's common_chat_msg_diff: one streamed change. tool_call_index == SIZE_MAX: no tool-call part.
struct common_chat_msg_diff {
    char * reasoning_content_delta;  // owned, "" when none
    char * content_delta;            // owned, "" when none
    size_t tool_call_index;
    struct common_chat_tool_call tool_call_delta;  // name/id set only when the call first appears
};

// What changed from prev to cur, as llama.cpp's compute_diffs: reasoning, content, then the last known tool call's
// argument growth, then each new tool call. Text that does not extend the previous one yields no delta (never an
// error). *diffs malloc'd (free with common_chat_msg_diffs_free); false when out of memory.
bool common_chat_msg_diffs(const struct common_chat_msg * prev, const struct common_chat_msg * cur,
                           struct common_chat_msg_diff ** diffs, size_t * n_diffs);
void common_chat_msg_diffs_free(struct common_chat_msg_diff * diffs, size_t n_diffs);

#ifdef __cplusplus
}
#endif
