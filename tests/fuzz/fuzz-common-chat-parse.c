// libFuzzer target for the chat output parser (common/chat-parse) and the tool-call grammars (common/chat-grammar).
//
// Byte 0 picks the mode and format, byte 1 the parse flags, the rest is the input:
// - parse mode (bit 7 of byte 0 clear): the text is parsed in the format as a complete output and, cut at up to 16
//   points, as partial outputs streamed one after the other with the diffs between them. Checked besides "no crash,
//   no leak, no hang": a parse never fails (it falls back to content), content / reasoning / every call's name,
//   arguments and id are set, arguments are valid UTF-8 and, in the formats whose arguments are a whole JSON value,
//   JSON once the parse is complete (or "" for a call written without any), and the diffs are computed.
// - grammar mode (bit 7 set): the text is a "tools" JSON array; every format's tool-call grammar is built from it
//   and, when built, must parse in the GBNF engine (a grammar the builder writes that the sampler refuses is a bug).
//
//   ./build-fuzz/bin/fuzz-common-chat-parse -max_total_time=300 corpus/
// The same function runs in the normal test suite on seeded inputs (tests/test-chat-parse-fuzz.c).

#include "chat-grammar.h"
#include "chat-parse.h"

#include "llama-grammar.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

// the input being run, shown when an invariant breaks (the smoke test has no crash file to look at)
static const char * g_input = "";
static int g_format = -1;

#define FUZZ_ASSERT(cond, what) do { if (!(cond)) { \
    fprintf(stderr, "fuzz-common-chat-parse: %s (format %d, input \"%s\")\n", what, g_format, g_input); \
    abort(); } } while (0)

// strict: the format's arguments are always a whole JSON value the model wrote (Llama 3.x, DeepSeek R1,
// Functionary), so a complete parse must give JSON; elsewhere a string "arguments" value is taken as its text
// (llama.cpp reads it as stringified JSON and passes it on as written), which only has to be valid UTF-8
static void check_msg(const struct common_chat_msg * m, bool complete, bool strict) {
    FUZZ_ASSERT(m->content && m->reasoning_content, "content / reasoning_content not set");
    FUZZ_ASSERT(m->n_tool_calls == 0 || m->tool_calls, "tool calls counted but missing");
    for (size_t i = 0; i < m->n_tool_calls; i++) {
        const struct common_chat_tool_call * tc = &m->tool_calls[i];
        FUZZ_ASSERT(tc->name && tc->arguments && tc->id, "tool call field not set");
        json_t * u = json_stringn(tc->arguments, strlen(tc->arguments));
        if (!u) {
            fprintf(stderr, "arguments (%s parse): %s\n", complete ? "complete" : "partial", tc->arguments);
        }
        FUZZ_ASSERT(u != NULL, "arguments are not valid UTF-8");
        json_decref(u);
        // "" is a call written without arguments (llama.cpp keeps it so)
        if (complete && strict && tc->arguments[0]) {
            // (jansson's limits are not JSON's: NUL escapes and integers beyond 64 bits are allowed here)
            json_t * v = json_loads(tc->arguments, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, NULL);
            if (!v) {
                fprintf(stderr, "arguments: %s\n", tc->arguments);
            }
            FUZZ_ASSERT(v != NULL, "a complete parse gave arguments that are not JSON");
            json_decref(v);
        }
    }
}

static void fuzz_parse(enum common_chat_format fmt, uint8_t flags, const char * text, size_t n) {
    struct common_chat_syntax syn = {
        fmt, (enum common_reasoning_format) ((flags >> 3) % 4), (flags & 4) != 0, (flags & 2) != 0, (flags & 1) != 0,
    };
    struct common_chat_msg full;
    FUZZ_ASSERT(common_chat_parse(text, n, false, &syn, &full), "complete parse failed");
    const bool strict = fmt == COMMON_CHAT_FORMAT_LLAMA_3_X || fmt == COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS ||
                        fmt == COMMON_CHAT_FORMAT_DEEPSEEK_R1 || fmt == COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2;
    check_msg(&full, true, strict);

    // streamed: growing prefixes, then the complete text, with the diffs between successive parses
    struct common_chat_msg prev;
    common_chat_msg_init(&prev);
    const size_t n_cuts = n < 16 ? n : 16;
    for (size_t k = 1; k <= n_cuts + 1; k++) {
        const bool last = k == n_cuts + 1;
        const size_t len = last ? n : (n * k) / (n_cuts + 1);
        struct common_chat_msg cur;
        if (last) {
            FUZZ_ASSERT(common_chat_msg_copy(&cur, &full), "copy failed");
        } else {
            FUZZ_ASSERT(common_chat_parse(text, len, true, &syn, &cur), "partial parse failed");
            check_msg(&cur, false, strict);
        }
        struct common_chat_msg_diff * diffs = NULL;
        size_t n_diffs = 0;
        FUZZ_ASSERT(common_chat_msg_diffs(&prev, &cur, &diffs, &n_diffs), "diffs failed");
        for (size_t i = 0; i < n_diffs; i++) {
            FUZZ_ASSERT(diffs[i].content_delta && diffs[i].reasoning_content_delta && diffs[i].tool_call_delta.arguments,
                        "diff field not set");
        }
        common_chat_msg_diffs_free(diffs, n_diffs);
        common_chat_msg_free(&prev);
        prev = cur;
    }
    common_chat_msg_free(&prev);
    common_chat_msg_free(&full);
}

static void fuzz_grammar(uint8_t flags, const char * text, size_t n) {
    json_t * tools = json_loadb(text, n, JSON_DECODE_ANY, NULL);
    if (!tools) {
        return;
    }
    for (int f = 0; f < COMMON_CHAT_FORMAT_COUNT; f++) {
        struct common_chat_grammar_inputs in = {
            (enum common_chat_format) f, tools, (flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0, NULL,
        };
        struct common_chat_grammar g;
        char err[256];
        if (!common_chat_grammar_init(&in, &g, err, sizeof(err))) {
            FUZZ_ASSERT(err[0] != '\0', "grammar refused without a reason");
            FUZZ_ASSERT(g.grammar == NULL && g.n_grammar_triggers == 0, "a refused grammar left data behind");
            continue;
        }
        if (g.grammar) {
            char gerr[256];
            struct llama_grammar * lg = llama_grammar_init_impl(NULL, g.grammar, "root", gerr, sizeof(gerr));
            if (!lg) {
                fprintf(stderr, "%s\n%s\n", gerr, g.grammar);
            }
            FUZZ_ASSERT(lg != NULL, "the built grammar does not parse");
            llama_grammar_free_impl(lg);
            FUZZ_ASSERT(g.grammar_lazy == !in.tool_choice_required || f == COMMON_CHAT_FORMAT_GENERIC,
                        "lazy unless required");
            FUZZ_ASSERT(!g.grammar_lazy || g.n_grammar_triggers > 0, "a lazy grammar without triggers");
        }
        common_chat_grammar_free(&g);
    }
    json_decref(tools);
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size < 2 || size > 4096) {
        return 0;
    }
    const size_t n = size - 2;
    char * text = malloc(n + 1);
    if (!text) {
        return 0;
    }
    memcpy(text, data + 2, n);
    text[n] = '\0';
    g_input = text;
    g_format = (data[0] & 0x80) ? -1 : (data[0] & 0x7f) % COMMON_CHAT_FORMAT_COUNT;
    if (data[0] & 0x80) {
        fuzz_grammar(data[1], text, n);
    } else {
        fuzz_parse((enum common_chat_format) ((data[0] & 0x7f) % COMMON_CHAT_FORMAT_COUNT), data[1], text, n);
    }
    g_input = "";
    free(text);
    return 0;
}
