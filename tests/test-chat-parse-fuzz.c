// The chat-parse fuzz target (tests/fuzz/fuzz-common-chat-parse.c) on seeded inputs, in the normal suite: random
// sequences of the formats' markers and JSON pieces parsed in every format (complete, and streamed in prefixes),
// and mutated "tools" arrays through every format's tool-call grammar. The target aborts on a broken invariant;
// a crash, hang or sanitizer report fails the test. The stream is seeded, so a failure reproduces.
#include "harness.h"

#include "fuzz/fuzz-common-chat-parse.c"

static const char * const FRAGMENTS[] = {
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<function=", "<function name=\"", "</function>", ">",
    "```", "```json\n", "```xml\n", "<tools>", "</tools>", "<response>", "<json>", "[TOOL_CALLS]", "<|python_tag|>",
    ".call(", "code=", ")", ">>>", "all\n", "python\n", "<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>",
    "<|END_ACTION|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>",
    "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>",
    "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "begin\xef\xbd\x9c>",
    "function<\xef\xbd\x9ctool\xe2\x96\x81" "sep\xef\xbd\x9c>",
    "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "end\xef\xbd\x9c>",
    "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "end\xef\xbd\x9c>",
    "{", "}", "[", "]", "\"", ":", ",", " ", "\n", "\"name\"", "\"arguments\"", "\"parameters\"", "\"id\"",
    "\"tool_call\"", "\"tool_calls\"", "\"response\"", "\"tool_name\"", "\"tool_call_id\"", "\"type\"", "\"function\"",
    "\"get_weather\"", "get_weather", "\"Paris\"", "1", "-2.5e3", "true", "null", "\\", "\\u00e9", "\\ud83d", "\xff",
    "\xc3", "é", "text ", "x",
};
#define N_FRAGMENTS (sizeof(FRAGMENTS) / sizeof(FRAGMENTS[0]))

static const char * TOOLS =
    "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\",\"properties\":"
    "{\"city\":{\"type\":\"string\",\"enum\":[\"Paris\",\"Rome\"]},\"days\":{\"type\":\"integer\",\"minimum\":1}},"
    "\"required\":[\"city\"]}}},{\"type\":\"function\",\"function\":{\"name\":\"python\",\"parameters\":{\"type\":"
    "\"object\",\"properties\":{\"code\":{\"type\":\"string\"}},\"required\":[\"code\"]}}}]";

// a mutation of TOOLS: bytes replaced, dropped or repeated, or a fragment of it spliced in
static size_t mutate(uint64_t * rng, char * out, size_t cap) {
    const size_t n = strlen(TOOLS);
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        const uint64_t r = th_xorshift64star(rng) % 64;
        if (r == 0) {
            continue;
        }
        if (r == 1) {
            out[o++] = (char) (th_xorshift64star(rng) % 128);
            continue;
        }
        if (r == 2 && o + 8 < cap) {
            const size_t from = th_xorshift64star(rng) % n;
            for (size_t k = 0; k < 8 && from + k < n; k++) {
                out[o++] = TOOLS[from + k];
            }
        }
        out[o++] = TOOLS[i];
    }
    return o;
}

// what the fuzzer found: JSON the parser took as arguments that strict JSON readers refuse (invalid UTF-8, a lone
// surrogate escape) must not become a tool call
static void test_found(void) {
    struct common_chat_syntax syn = { COMMON_CHAT_FORMAT_HERMES_2_PRO, COMMON_REASONING_FORMAT_NONE, false, false, true };
    static const char * const bad[] = {
        "<tool_call>{\"name\": \"f\", \"arguments\": {\"c\x82ity\": 1}}</tool_call>",
        "<tool_call>{\"name\": \"f\", \"arguments\": {\"c\": \"\xed\xa0\x80\"}}</tool_call>",
        "<tool_call>{\"name\": \"f\", \"arguments\": {\"c\": \"\\ud83d\"}}</tool_call>",
        "<tool_call>{\"name\": \"f\", \"arguments\": {\"c\": \"\\ude00x\"}}</tool_call>",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct common_chat_msg m;
        TH_CHECK(common_chat_parse(bad[i], strlen(bad[i]), false, &syn, &m) && m.n_tool_calls == 0 &&
                 strcmp(m.content, bad[i]) == 0, "not JSON, so content: %s", bad[i]);
        common_chat_msg_free(&m);
    }
    const char * good = "<tool_call>{\"name\": \"f\", \"arguments\": {\"c\": \"\\ud83d\\ude00 \xc3\xa9\"}}</tool_call>";
    struct common_chat_msg m;
    TH_CHECK(common_chat_parse(good, strlen(good), false, &syn, &m) && m.n_tool_calls == 1 &&
             strcmp(m.tool_calls[0].arguments, "{\"c\":\"\xf0\x9f\x98\x80 \xc3\xa9\"}") == 0,
             "a surrogate pair and UTF-8 are fine: %s", m.n_tool_calls ? m.tool_calls[0].arguments : "(none)");
    common_chat_msg_free(&m);
}

int main(void) {
    test_found();
    uint64_t rng = 0x5eed0c4a7ULL;
    uint8_t buf[4096];
    for (int it = 0; it < 3000; it++) {
        size_t n = 2;
        buf[0] = (uint8_t) (th_xorshift64star(&rng) % COMMON_CHAT_FORMAT_COUNT);
        buf[1] = (uint8_t) th_xorshift64star(&rng);
        const int n_frag = 1 + (int) (th_xorshift64star(&rng) % 24);
        for (int k = 0; k < n_frag; k++) {
            const char * f = FRAGMENTS[th_xorshift64star(&rng) % N_FRAGMENTS];
            const size_t fl = strlen(f);
            if (n + fl >= sizeof(buf)) {
                break;
            }
            memcpy(buf + n, f, fl);
            n += fl;
        }
        LLVMFuzzerTestOneInput(buf, n);
    }
    // well-formed calls of each format, under every format (the target checks the invariants of what comes out)
    static const char * const CALLS[] = {
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>",
        "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": [1, {\"b\": null}]}, \"id\": \"123456789\"}]",
        "{\"name\": \"f\", \"parameters\": {\"x\": \"\\u00e9\"}}",
        "<|python_tag|>python.call(code=\"print(1)\")",
        ">>>f\n{\"a\": 1}",
    };
    for (size_t c = 0; c < sizeof(CALLS) / sizeof(CALLS[0]); c++) {
        for (int f = 0; f < COMMON_CHAT_FORMAT_COUNT; f++) {
            buf[0] = (uint8_t) f;
            buf[1] = 1;
            const size_t l = strlen(CALLS[c]);
            memcpy(buf + 2, CALLS[c], l);
            LLVMFuzzerTestOneInput(buf, l + 2);
        }
    }
    for (int it = 0; it < 300; it++) {
        buf[0] = 0x80;
        buf[1] = (uint8_t) th_xorshift64star(&rng);
        const size_t n = it == 0 ? strlen(TOOLS) : mutate(&rng, (char *) buf + 2, sizeof(buf) - 2);
        if (it == 0) {
            memcpy(buf + 2, TOOLS, n);
        }
        LLVMFuzzerTestOneInput(buf, n + 2);
    }
    // the target aborts on a broken invariant: reaching this line is the check of the runs above
    return th_finish();
}
