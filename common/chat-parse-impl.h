// Internal to common/chat-parse*.c: the parser state (llama.cpp's common_chat_msg_parser) and the scanning helpers
// the per-format parsers share. Not a public API.
#pragma once

#include "chat-parse-json.h"
#include "chat-parse.h"

#include <stdbool.h>
#include <stddef.h>

// one parse of one text: the input, where the scan is, what was found so far
struct chat_parser {
    const char * in;
    size_t n;
    size_t pos;
    bool partial;
    const struct common_chat_syntax * syn;
    struct common_sb content;
    struct common_sb reasoning;
    struct common_chat_tool_call * calls;
    size_t n_calls, cap_calls;
    bool oom;
};

// what a scanner returns: CHAT_PARSE_STOP = llama.cpp's partial exception (incomplete or unparsable here)
enum { CHAT_PARSE_OK = 0, CHAT_PARSE_STOP = 1 };

void chat_parser_tool_call_free(struct common_chat_tool_call * tc);

void chat_parser_add_content(struct chat_parser * p, const char * d, size_t n);
// the text from pos to the end, as content
void chat_parser_add_rest(struct chat_parser * p);
void chat_parser_skip_spaces(struct chat_parser * p);
bool chat_parser_starts_at(const struct chat_parser * p, size_t at, const char * lit);
// the text from `at` to the end is a proper, non-empty beginning of lit
bool chat_parser_prefix_at_end(const struct chat_parser * p, size_t at, const char * lit);
bool chat_parser_try_consume(struct chat_parser * p, const char * lit);
// Finds the earliest of lits[] from pos: 1 with *at / *which set; 2 (partial texts only) when the text ends with
// the beginning of one of them, *at its start; 0 when none.
int  chat_parser_find_any(const struct chat_parser * p, const char * const * lits, size_t n_lits, size_t * at,
                          size_t * which);
int  chat_parser_find_lit(const struct chat_parser * p, const char * lit, size_t * at);
void chat_parser_add_tool_call(struct chat_parser * p, const char * name, const char * id, const char * args);
bool chat_parser_is_word(char c);
bool chat_parser_key_is(const struct common_sb * k, const char * name);

// llama.cpp's try_parse_reasoning: true when a thinking block was taken (or a partial text may still open one;
// *stop is then set)
bool chat_parser_try_reasoning(struct chat_parser * p, const char * open, const char * close, bool * stop);

// tool calls in JSON: one object with the given keys at pos, an array of them, or a bare arguments value (the call
// named `name`); CHAT_PARSE_STOP while incomplete or malformed (*invalid: malformed)
int  chat_parser_consume_call(struct chat_parser * p, const char * name_key, const char * args_key,
                              const char * id_key);
int  chat_parser_consume_call_array(struct chat_parser * p, const char * name_key, const char * args_key,
                                    const char * id_key);
int  chat_parser_consume_args(struct chat_parser * p, const char * name, bool * invalid);
// chat_parser_consume_args for the call named by the len bytes at name (not NUL-terminated in the input)
int  chat_parser_consume_named_args(struct chat_parser * p, const char * name, size_t len, bool * invalid);

// the start of the formats that may think first and then call tools: the thinking block between open and close,
// then, when tool calls are not parsed, the rest as content. CHAT_PARSE_STOP / CHAT_PARSE_OK: the parse ends
// with that result; CHAT_PARSE_TOOLS: the tool calls come next.
enum { CHAT_PARSE_TOOLS = 2 };
int  chat_parser_think_then_tools(struct chat_parser * p, const char * open, const char * close);

// the formats (chat-parse-formats.c, chat-parse-formats-tokens.c)
int  chat_parser_content_only(struct chat_parser * p);
int  chat_parser_generic(struct chat_parser * p);
int  chat_parser_hermes_2_pro(struct chat_parser * p);
int  chat_parser_mistral_nemo(struct chat_parser * p);
int  chat_parser_llama_3_x(struct chat_parser * p, bool builtin);
int  chat_parser_deepseek_r1(struct chat_parser * p);
int  chat_parser_command_r7b(struct chat_parser * p);
int  chat_parser_functionary_v3_2(struct chat_parser * p);
