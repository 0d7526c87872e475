// Incremental JSON scanning for the chat-output parser (chat-parse.c): where a value that starts at an offset ends,
// whether the text so far could still become one, and the pieces of a partial string / compacted value that are
// safe to show while more text may follow, and raw bytes written as a JSON string. Internal to common/; not a
// public API.
#pragma once

#include "string-builder.h"

#include <stdbool.h>
#include <stddef.h>

// chat_json_scan results besides an end offset
#define CHAT_JSON_INCOMPLETE ((size_t) -1)  // the input ends inside a value that is well-formed so far
#define CHAT_JSON_INVALID    ((size_t) -2)  // not JSON

static inline bool chat_json_is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// the offset after the JSON value starting at s[i] (leading whitespace skipped), CHAT_JSON_INCOMPLETE or
// CHAT_JSON_INVALID; nesting deeper than 256 is invalid
size_t chat_json_scan(const char * s, size_t n, size_t i);

// s[i] == '"': appends the decoded characters of the string (all of them when it is complete, else those before an
// unfinished escape) to out; true when the closing quote was reached
bool chat_json_decode_string(const char * s, size_t n, size_t i, struct common_sb * out);

// appends s[from..to) without the whitespace outside strings and with the escapes in strings written as
// llama.cpp's arguments (nlohmann's compact dump) write them; with `partial`, an escape sequence cut off by `to` is
// left out, so that every later (longer) text gives an extension of this one
void chat_json_compact(const char * s, size_t from, size_t to, bool partial, struct common_sb * out);

// appends the bytes s[0..n), which need not be valid UTF-8, as the inside of a JSON string, written the way
// nlohmann's dump with error_handler_t::replace writes it (as llama.cpp's server replies do): '"', '\\' and control
// characters escaped, each maximal ill-formed UTF-8 subsequence replaced with one U+FFFD; with `partial`, a UTF-8
// sequence cut off by the end is left out (its rest may follow), so every later text gives an extension of this one
void chat_json_escape_bytes(const char * s, size_t n, bool partial, struct common_sb * out);
