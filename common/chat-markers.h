// Marker strings of chat formats that the output parser (chat-parse-formats*.c) and the tool-call grammars
// (chat-grammar-formats.c) both spell, and the Llama 3.x builtin tools (also read by the server's format choice).
#pragma once

#include <string.h>

// DeepSeek R1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}```
// <｜tool▁call▁end｜>...<｜tool▁calls▁end｜>; the opening also in the variants the distilled models write
#define DS_BAR "\xef\xbd\x9c"  // ｜ (U+FF5C)
#define DS_SP  "\xe2\x96\x81"  // ▁ (U+2581)
#define DS_CALLS_BEGIN "<" DS_BAR "tool" DS_SP "calls" DS_SP "begin" DS_BAR ">"
#define DS_CALL_BEGIN  "<" DS_BAR "tool" DS_SP "call" DS_SP "begin" DS_BAR ">"
#define DS_SEP         "<" DS_BAR "tool" DS_SP "sep" DS_BAR ">"
#define DS_FUNCTION    "function" DS_SEP
#define DS_CALL_END    "<" DS_BAR "tool" DS_SP "call" DS_SP "end" DS_BAR ">"
#define DS_CALLS_END   "<" DS_BAR "tool" DS_SP "calls" DS_SP "end" DS_BAR ">"
#define DS_CALLS_ALT1  "<" DS_BAR "tool_calls_begin" DS_BAR ">"
#define DS_CALLS_ALT2  "<" DS_BAR "tool calls begin" DS_BAR ">"
#define DS_CALLS_ALT3  "<" DS_BAR "tool\\_calls\\_begin" DS_BAR ">"
#define DS_CALLS_ALT4  "<" DS_BAR "tool" DS_SP "calls" DS_BAR ">"

// the argument a Llama 3.x builtin tool takes ("query" or "code"), NULL for a tool that is not one
static inline const char * chat_llama3_builtin_param(const char * name) {
    static const char * const query[] = { "wolfram_alpha", "web_search", "brave_search" };
    static const char * const code[]  = { "python", "code_interpreter" };
    for (size_t i = 0; name && i < sizeof(query) / sizeof(query[0]); i++) {
        if (strcmp(name, query[i]) == 0) {
            return "query";
        }
    }
    for (size_t i = 0; name && i < sizeof(code) / sizeof(code[0]); i++) {
        if (strcmp(name, code[i]) == 0) {
            return "code";
        }
    }
    return NULL;
}
