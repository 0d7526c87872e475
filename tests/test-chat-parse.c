// common/chat-parse: format detection from chat templates, parsing model output into content / reasoning_content /
// tool_calls in each format, partial (streamed) texts, malformed input, streaming diffs, random truncations.
//
// Where the expected values come from:
//  - the sample outputs and their expected messages are llama.cpp's tests/test-chat.cpp (test_template_output_parsers
//    of the enum-format parsers, before the PEG rewrite; the "tc ..." cases are its inputs verbatim, the others
//    follow its message_assist* fixtures: content "Hello, world!\nWhat's up?", thoughts "I'm\nthinking", the call
//    special_function(arg1 = 1)); llama.cpp compares arguments after a JSON round trip, nlohmann's compact dump,
//    which is the exact text written here ({"arg1":1});
//  - the fallback of a complete but unparsable text to content-only, the unclosed <think> that still counts as
//    reasoning, forced-open thinking and reasoning_in_content are common/chat.cpp's common_chat_parse /
//    try_parse_reasoning behaviour;
//  - format detection: the rules of llama.cpp's common_chat_templates_apply_jinja (which marker string in the
//    template picks which format), applied by hand to the template texts below;
//  - the \u escape and invalid UTF-8 cases ("json \u: ...", Functionary's raw python): worked out by hand from the
//    UTF-16 / UTF-8 encodings and nlohmann's dump rules (control characters as \u00xx in lower case; in replace mode
//    one U+FFFD per maximal ill-formed subsequence), as the comments at those cases show.
//  Cases marked "ours" state behaviour llama.cpp leaves loose that this parser fixes (e.g. a partial "<thi" held
//  back instead of shown as content).
#include "harness.h"

#include "chat-parse.h"
#include "chat-parse-json.h"  // internal to common/: the lone surrogates the parser never passes on (see below)
#include "gguf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DS_BAR "\xef\xbd\x9c"
#define DS_SP  "\xe2\x96\x81"
#define DS_CALLS_BEGIN "<" DS_BAR "tool" DS_SP "calls" DS_SP "begin" DS_BAR ">"
#define DS_CALLS_END   "<" DS_BAR "tool" DS_SP "calls" DS_SP "end" DS_BAR ">"
#define DS_CALL_BEGIN  "<" DS_BAR "tool" DS_SP "call" DS_SP "begin" DS_BAR ">"
#define DS_CALL_END    "<" DS_BAR "tool" DS_SP "call" DS_SP "end" DS_BAR ">"
#define DS_SEP         "<" DS_BAR "tool" DS_SP "sep" DS_BAR ">"

#define HELLO "Hello, world!\nWhat's up?"
#define THINK "I'm\nthinking"
#define ARGS1 "{\"arg1\":1}"
#define U_E9     "\xc3\xa9"
#define U_FFFD   "\xef\xbf\xbd"
#define U_1F600  "\xf0\x9f\x98\x80"
#define U_10000  "\xf0\x90\x80\x80"
#define U_10FFFF "\xf4\x8f\xbf\xbf"

enum { F_NONE = 0, F_PARTIAL = 1, F_NO_TOOLS = 2, F_FORCED = 4, F_IN_CONTENT = 8, F_RF_NONE = 16,
       F_FALLBACK = 32 /* the complete text falls back to content-only: its stream showed more than the end keeps */,
       F_IN_CONTENT_DS = 64 /* reasoning_in_content with reasoning_format deepseek (llama.cpp's test syntax) */ };

struct pcase {
    const char * what;
    enum common_chat_format fmt;
    int flags;
    const char * input;
    const char * content;
    const char * reasoning;
    int n_calls;
    const char * calls[3][3];  // name, arguments, id
};

static const struct pcase CASES[] = {
    // content-only (llama.cpp: common_chat_parse_content_only = reasoning, then everything is content)
    { "content-only: plain", COMMON_CHAT_FORMAT_CONTENT_ONLY, 0, HELLO, HELLO, "", 0, { { 0 } } },
    { "content-only: thoughts", COMMON_CHAT_FORMAT_CONTENT_ONLY, 0, "<think>" THINK "</think>" HELLO, HELLO, THINK, 0,
      { { 0 } } },
    { "content-only: reasoning none keeps thoughts", COMMON_CHAT_FORMAT_CONTENT_ONLY, F_RF_NONE,
      "<think>" THINK "</think>" HELLO, "<think>" THINK "</think>" HELLO, "", 0, { { 0 } } },
    { "content-only: reasoning in content", COMMON_CHAT_FORMAT_CONTENT_ONLY, F_IN_CONTENT,
      "<think>" THINK "</think>" HELLO, "<think>" THINK "</think>" HELLO, "", 0, { { 0 } } },
    { "content-only: forced open", COMMON_CHAT_FORMAT_CONTENT_ONLY, F_FORCED, THINK "</think>" HELLO, HELLO, THINK, 0,
      { { 0 } } },
    { "content-only: unclosed thoughts", COMMON_CHAT_FORMAT_CONTENT_ONLY, 0, "<think>" THINK, "", THINK, 0, { { 0 } } },
    { "content-only: partial thoughts", COMMON_CHAT_FORMAT_CONTENT_ONLY, F_PARTIAL, "<think>I'm\nthin", "", "I'm\nthin", 0,
      { { 0 } } },
    { "content-only: partial open tag held (ours)", COMMON_CHAT_FORMAT_CONTENT_ONLY, F_PARTIAL, "<thi", "", "", 0,
      { { 0 } } },
    { "content-only: partial close tag held", COMMON_CHAT_FORMAT_CONTENT_ONLY, F_PARTIAL, "<think>I'm</thi", "", "I'm",
      0, { { 0 } } },

    // Hermes 2 Pro (also Qwen 2.5 / Qwen 3)
    { "hermes: content", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0, HELLO, HELLO, "", 0, { { 0 } } },
    { "hermes: tool_call", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "<tool_call>\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n</tool_call>", "", "", 1,
      { { "special_function", ARGS1, "" } } },
    { "hermes: <function=name>", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0, "<function=special_function>{\"arg1\": 1}</function>",
      "", "", 1, { { "special_function", ARGS1, "" } } },
    { "hermes: <function name=...>", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "<function name=\"special_function\">{\"arg1\": 1}</function>", "", "", 1,
      { { "special_function", ARGS1, "" } } },
    { "hermes: fenced <response>", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "```xml\n<response>\n    {\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n</response>\n```", "", "",
      1, { { "special_function", ARGS1, "" } } },
    { "hermes: fenced json", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "```json\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n```", "", "", 1,
      { { "special_function", ARGS1, "" } } },
    { "hermes: bare object", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}", "", "", 1,
      { { "special_function", ARGS1, "" } } },
    { "hermes: thoughts + call", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "<think>" THINK "</think><tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}</tool_call>", "",
      THINK, 1, { { "special_function", ARGS1, "" } } },
    { "hermes: forced open + call", COMMON_CHAT_FORMAT_HERMES_2_PRO, F_FORCED,
      THINK "</think>\n<tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}</tool_call>", "", THINK,
      1, { { "special_function", ARGS1, "" } } },
    { "hermes: qwen3 style", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "<think>\nweather\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
      "</tool_call>", "", "weather", 1, { { "get_weather", "{\"city\":\"Paris\"}", "" } } },
    { "hermes: content then two calls", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "Sure.<tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}</tool_call>\n"
      "<tool_call>{\"name\": \"special_function_with_opt\", \"arguments\": {\"arg1\": 1, \"arg2\": 2}}</tool_call>",
      "Sure.", "", 2, { { "special_function", ARGS1, "" }, { "special_function_with_opt", "{\"arg1\":1,\"arg2\":2}", "" } } },
    { "hermes: string with spaces kept", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"q\": \"a b \\\" c\"}}</tool_call>", "", "", 1,
      { { "f", "{\"q\":\"a b \\\" c\"}", "" } } },
    // llama.cpp re-dumps the arguments with nlohmann: escapes come out decoded (UTF-8, "/"), control characters as
    // \u00xx in lower case
    { "hermes: escapes as nlohmann writes them", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"q\": \"caf\\u00e9 \\/ \\ud83d\\ude00 \\n \\u001F\"}}</tool_call>",
      "", "", 1, { { "f", "{\"q\":\"caf\xc3\xa9 / \xf0\x9f\x98\x80 \\n \\u001f\"}", "" } } },
    { "hermes: parse_tool_calls off", COMMON_CHAT_FORMAT_HERMES_2_PRO, F_NO_TOOLS,
      "<tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}</tool_call>",
      "<tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}</tool_call>", "", 0, { { 0 } } },
    { "hermes: malformed JSON stays content", COMMON_CHAT_FORMAT_HERMES_2_PRO, F_FALLBACK,
      "<tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1,}}</tool_call>",
      "<tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1,}}</tool_call>", "", 0, { { 0 } } },
    { "hermes: cut-off call, complete text -> content", COMMON_CHAT_FORMAT_HERMES_2_PRO, F_FALLBACK,
      "<tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1",
      "<tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1", "", 0, { { 0 } } },
    { "hermes: partial arguments so far", COMMON_CHAT_FORMAT_HERMES_2_PRO, F_PARTIAL,
      "<tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1", "", "", 1,
      { { "special_function", "{\"arg1\":1", "" } } },
    { "hermes: partial name not shown", COMMON_CHAT_FORMAT_HERMES_2_PRO, F_PARTIAL,
      "Hi <tool_call>{\"name\": \"special_fu", "Hi ", "", 0, { { 0 } } },
    { "hermes: partial opening tag held", COMMON_CHAT_FORMAT_HERMES_2_PRO, F_PARTIAL, "Hello <tool_c", "Hello ", "", 0,
      { { 0 } } },

    // Llama 3.x
    { "llama3: content", COMMON_CHAT_FORMAT_LLAMA_3_X, 0, HELLO, HELLO, "", 0, { { 0 } } },
    { "llama3: call", COMMON_CHAT_FORMAT_LLAMA_3_X, 0,
      "{\"name\": \"special_function\", \"parameters\": {\"arg1\": 1}}", "", "", 1,
      { { "special_function", ARGS1, "" } } },
    { "llama3: type function", COMMON_CHAT_FORMAT_LLAMA_3_X, 0,
      "{\"type\": \"function\", \"name\": \"special_function\", \"parameters\": {\"arg1\": 1}}", "", "", 1,
      { { "special_function", ARGS1, "" } } },
    { "llama3: partial", COMMON_CHAT_FORMAT_LLAMA_3_X, F_PARTIAL,
      "{\"name\": \"special_function\", \"parameters\": {\"arg1\"", "", "", 1,
      { { "special_function", "{\"arg1\"", "" } } },
    { "llama3: partial opening held", COMMON_CHAT_FORMAT_LLAMA_3_X, F_PARTIAL, "{\"na", "", "", 0, { { 0 } } },
    { "llama3 builtin: python_tag", COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS, 0,
      "<|python_tag|>code_interpreter.call(code=\"print('hey')\")", "", "", 1,
      { { "code_interpreter", "{\"code\":\"print('hey')\"}", "" } } },
    { "llama3 builtin: two args", COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS, 0,
      "<|python_tag|>brave_search.call(query=\"weather\", count=3)", "", "", 1,
      { { "brave_search", "{\"query\":\"weather\",\"count\":3}", "" } } },

    // Mistral Nemo
    { "nemo: content", COMMON_CHAT_FORMAT_MISTRAL_NEMO, 0, HELLO, HELLO, "", 0, { { 0 } } },
    { "nemo: call with id", COMMON_CHAT_FORMAT_MISTRAL_NEMO, 0,
      "[TOOL_CALLS][{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}, \"id\": \"123456789\"}]", "", "", 1,
      { { "special_function", ARGS1, "123456789" } } },
    { "nemo: two calls", COMMON_CHAT_FORMAT_MISTRAL_NEMO, 0,
      "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}, \"id\": \"123456789\"}, "
      "{\"name\": \"b\", \"arguments\": {\"x\": [1, 2]}, \"id\": \"987654321\"}]", "", "", 2,
      { { "a", "{}", "123456789" }, { "b", "{\"x\":[1,2]}", "987654321" } } },

    // DeepSeek R1
    { "r1: thoughts", COMMON_CHAT_FORMAT_DEEPSEEK_R1, 0, "<think>" THINK "</think>" HELLO, HELLO, THINK, 0, { { 0 } } },
    { "r1: forced open", COMMON_CHAT_FORMAT_DEEPSEEK_R1, F_FORCED, THINK "</think>" HELLO, HELLO, THINK, 0, { { 0 } } },
    { "r1: call", COMMON_CHAT_FORMAT_DEEPSEEK_R1, 0,
      DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "special_function\n```json\n{\"arg1\": 1}\n```" DS_CALL_END
      DS_CALLS_END, "", "", 1, { { "special_function", ARGS1, "" } } },
    { "r1: thoughts + call", COMMON_CHAT_FORMAT_DEEPSEEK_R1, 0,
      "<think>" THINK "</think>\n\n" DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "special_function\n```json\n"
      "{\"arg1\": 1}\n```" DS_CALL_END DS_CALLS_END, "", THINK, 1, { { "special_function", ARGS1, "" } } },
    { "r1: partial call header held", COMMON_CHAT_FORMAT_DEEPSEEK_R1, F_PARTIAL,
      "<think>" THINK "</think>" DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "special_fu", "", THINK, 0, { { 0 } } },

    // Command R7B
    { "r7b: response", COMMON_CHAT_FORMAT_COMMAND_R7B, 0,
      "<|START_THINKING|>" THINK "<|END_THINKING|><|START_RESPONSE|>" HELLO "<|END_RESPONSE|>", HELLO, THINK, 0,
      { { 0 } } },
    { "r7b: action", COMMON_CHAT_FORMAT_COMMAND_R7B, 0,
      "<|START_THINKING|>" THINK "<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": "
      "\"special_function\", \"parameters\": {\"arg1\": 1}}\n]<|END_ACTION|>", "", THINK, 1,
      { { "special_function", ARGS1, "0" } } },
    { "r7b: response without end -> content-only", COMMON_CHAT_FORMAT_COMMAND_R7B, F_FALLBACK, "<|START_RESPONSE|>Hello",
      "<|START_RESPONSE|>Hello", "", 0, { { 0 } } },
    { "r7b: partial response", COMMON_CHAT_FORMAT_COMMAND_R7B, F_PARTIAL, "<|START_RESPONSE|>Hello<|END_RES", "Hello", "",
      0, { { 0 } } },

    // Generic
    { "generic: tool_call", COMMON_CHAT_FORMAT_GENERIC, 0,
      "{\n  \"tool_call\": {\n    \"name\": \"special_function\",\n    \"arguments\": {\n      \"arg1\": 1\n    }\n  }\n}",
      "", "", 1, { { "special_function", ARGS1, "" } } },
    { "generic: tool_calls", COMMON_CHAT_FORMAT_GENERIC, 0,
      "{\"tool_calls\": [{\"name\": \"a\", \"arguments\": {\"x\": 1}, \"id\": \"call_1\"}, "
      "{\"name\": \"b\", \"arguments\": {}, \"id\": \"call_2\"}]}", "", "", 2,
      { { "a", "{\"x\":1}", "call_1" }, { "b", "{}", "call_2" } } },
    { "generic: response", COMMON_CHAT_FORMAT_GENERIC, 0, "{\n  \"response\": \"Hello, world!\\nWhat's up?\"\n}", HELLO,
      "", 0, { { 0 } } },
    { "generic: partial response", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL, "{\"response\": \"Hello, wor", "Hello, wor",
      "", 0, { { 0 } } },
    { "generic: not JSON -> content", COMMON_CHAT_FORMAT_GENERIC, 0, HELLO, HELLO, "", 0, { { 0 } } },

    // Functionary v3.2
    { "functionary: call at start", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0, "special_function\n{\"arg1\": 1}", "", "", 1,
      { { "special_function", ARGS1, "" } } },
    { "functionary: all then call", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0,
      "all\nHello, world!>>>special_function\n{\"arg1\": 1}", "Hello, world!", "", 1,
      { { "special_function", ARGS1, "" } } },

    // more of llama.cpp's test-chat.cpp, verbatim (the enum-format parsers, before the PEG rewrite)
    { "tc hermes: fenced partial function_call", COMMON_CHAT_FORMAT_HERMES_2_PRO, F_PARTIAL,
      "```json\n<function_call> { \"name\" : \"python\"", "", "", 1, { { "python", "", "" } } },
    { "tc hermes: partial {\"name\"", COMMON_CHAT_FORMAT_HERMES_2_PRO, F_PARTIAL,
      "Let's call something\n<tool_call>{\"name\"", "Let's call something\n", "", 0, { { 0 } } },
    { "tc hermes: partial {\"name", COMMON_CHAT_FORMAT_HERMES_2_PRO, F_PARTIAL,
      "Let's call something\n<tool_call>{\"name", "Let's call something\n", "", 0, { { 0 } } },
    { "tc hermes: not a tool call", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "This is not a tool call:\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}",
      "This is not a tool call:", "", 1, { { "special_function", ARGS1, "" } } },
    { "tc hermes: fenced function_call with spaces", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "```json\n\n                    <function_call> {\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}} \n"
      "                    </function_call> \n``` ", "", "", 1, { { "special_function", ARGS1, "" } } },
    { "tc hermes: <xml> multi-line", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "<xml>\n  {\n    \"name\": \"special_function\", \"arguments\": {\"arg1\": 1}\n  }\n</xml>", "", "", 1,
      { { "special_function", ARGS1, "" } } },
    { "tc hermes: two <function=...>", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "<function=special_function>{\"arg1\": 1}</function>\n<function=python>{\"code\":\"print('hello')\"}</function>",
      "", "", 2, { { "special_function", ARGS1, "" }, { "python", "{\"code\":\"print('hello')\"}", "" } } },
    { "tc hermes: unclosed think swallows the call", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0,
      "<think><tool_call>nah uhg</tool_call>", "", "<tool_call>nah uhg</tool_call>", 0, { { 0 } } },
    { "tc hermes: unopened thoughts stay content", COMMON_CHAT_FORMAT_HERMES_2_PRO, 0, THINK "</think>" HELLO,
      THINK "</think>" HELLO, "", 0, { { 0 } } },
    { "tc generic: partial, tool calls off", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL | F_NO_TOOLS | F_FORCED,
      "{ \"tool_call\" : { \"name\" : \"t", "{ \"tool_call\" : { \"name\" : \"t", "", 0, { { 0 } } },
    { "tc generic: partial name", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL, "{ \"tool_call\" : { \"name\" : \"t", "", "", 0,
      { { 0 } } },
    { "tc generic: arguments cut in a key", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"tool_call\": {\"name\": \"puppeteer_screenshot\", \"arguments\": {\"name\": \"servethehome_homepage\",", "",
      "", 1, { { "puppeteer_screenshot", "{\"name\":\"servethehome_homepage\",", "" } } },
    { "tc generic: empty args", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{ \"tool_call\" : { \"name\" : \"special_function\"", "", "", 1, { { "special_function", "", "" } } },
    { "tc generic: cut-off args", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{ \"tool_call\" : { \"name\" : \"special_function\", \"arguments\" : { \"arg", "", "", 1,
      { { "special_function", "{\"arg", "" } } },
    { "tc generic: tool_calls with id", COMMON_CHAT_FORMAT_GENERIC, 0,
      "{\n  \"tool_calls\": [\n    {\n      \"name\": \"special_function\",\n      \"arguments\": {\n        \"arg1\": 1\n"
      "      },\n      \"id\": \"123456789\"\n    }\n  ]\n}", "", "", 1, { { "special_function", ARGS1, "123456789" } } },
    { "tc r7b: plain", COMMON_CHAT_FORMAT_COMMAND_R7B, 0, HELLO, HELLO, "", 0, { { 0 } } },
    { "tc r7b: response", COMMON_CHAT_FORMAT_COMMAND_R7B, 0, "<|START_RESPONSE|>" HELLO "<|END_RESPONSE|>", HELLO, "", 0,
      { { 0 } } },
    { "tc r7b: thoughts unparsed (reasoning none)", COMMON_CHAT_FORMAT_COMMAND_R7B, F_RF_NONE,
      "<|START_THINKING|>" THINK "<|END_THINKING|><|START_RESPONSE|>" HELLO "<|END_RESPONSE|>",
      "<|START_THINKING|>" THINK "<|END_THINKING|>" HELLO, "", 0, { { 0 } } },
    { "tc r7b: thoughts in content as <think>", COMMON_CHAT_FORMAT_COMMAND_R7B, F_IN_CONTENT_DS,
      "<|START_THINKING|>" THINK "<|END_THINKING|><|START_RESPONSE|>" HELLO "<|END_RESPONSE|>",
      "<think>" THINK "</think>" HELLO, "", 0, { { 0 } } },
    { "tc r7b: partial action", COMMON_CHAT_FORMAT_COMMAND_R7B, F_PARTIAL,
      "<|START_THINKING|>" THINK "<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"special",
      "", THINK, 0, { { 0 } } },
    { "tc r1: forced open keeps a written <think>", COMMON_CHAT_FORMAT_DEEPSEEK_R1, F_FORCED,
      "<think>" THINK "</think>" HELLO, HELLO, "<think>" THINK, 0, { { 0 } } },
    { "tc r1: forced open, partial", COMMON_CHAT_FORMAT_DEEPSEEK_R1, F_FORCED | F_PARTIAL,
      "I need to remember the correct syntax. It starts with " DS_CALLS_BEGIN " and ends with", "",
      "I need to remember the correct syntax. It starts with " DS_CALLS_BEGIN " and ends with", 0, { { 0 } } },
    { "tc r1: <tool calls> opener", COMMON_CHAT_FORMAT_DEEPSEEK_R1, 0,
      "<" DS_BAR "tool" DS_SP "calls" DS_BAR ">function" DS_SEP "special_function\n```json\n{\"arg1\": 1}\n```" DS_CALL_END
      DS_CALLS_END, "", "", 1, { { "special_function", ARGS1, "" } } },
    { "tc r1: thoughts unparsed + call", COMMON_CHAT_FORMAT_DEEPSEEK_R1, F_RF_NONE,
      "<think>" THINK "</think>\n\n" DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "special_function\n```json\n"
      "{\"arg1\": 1}\n```" DS_CALL_END DS_CALLS_END, "<think>" THINK "</think>\n\n", "", 1,
      { { "special_function", ARGS1, "" } } },
    { "tc r1: unopened thoughts stay content", COMMON_CHAT_FORMAT_DEEPSEEK_R1, 0, THINK "</think>" HELLO,
      THINK "</think>" HELLO, "", 0, { { 0 } } },
    { "tc functionary: all + >>>call", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0,
      "all\nHello, world!\nnono\nWhat's up?>>>special_function\n{\"arg1\": 1}\n", "Hello, world!\nnono\nWhat's up?", "",
      1, { { "special_function", ARGS1, "" } } },
    { "tc functionary: python lines", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0, "python\n# This is a program:\nprint('hey')",
      "", "", 1, { { "python", "{\"code\":\"# This is a program:\\nprint('hey')\"}", "" } } },
    { "tc functionary: python lines unclosed", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, F_PARTIAL,
      "python\n# This is a program:\nprint('hey')", "", "", 1,
      { { "python", "{\"code\":\"# This is a program:\\nprint('hey')", "" } } },
    { "tc functionary: trailing spaces", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0,
      "special_function\n{\"arg1\": 1} \n                    ", "", "", 1, { { "special_function", ARGS1, "" } } },
    { "tc functionary: all", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0, "all\n" HELLO, HELLO, "", 0, { { 0 } } },
    { "tc llama3 builtin: python", COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS, 0,
      "<|python_tag|>python.call(code=\"print('hey')\")", "", "", 1, { { "python", "{\"code\":\"print('hey')\"}", "" } } },

    // \u escapes in JSON strings, through each use of common/chat-parse-json.c's one \u reader: the scanner (is the
    // call JSON at all), the decoder (names, ids, "response" text) and the compactor (arguments). U+1F600 is the
    // UTF-16 pair D83D DE00 and the UTF-8 bytes F0 9F 98 80; U+10000 = D800 DC00 = F0 90 80 80; U+10FFFF = DBFF DFFF
    // = F4 8F BF BF; U+00E9 = C3 A9 (worked out by hand from the UTF-16 / UTF-8 bit layouts).
    { "json \\u: pairs in name, arguments and id", COMMON_CHAT_FORMAT_GENERIC, 0,
      "{\"tool_call\": {\"name\": \"f\\u00e9\", "
      "\"arguments\": {\"s\": \"\\ud83d\\ude00 \\uD800\\uDC00 \\udbff\\udfff \\u00e9\\/\"},"
      " \"id\": \"\\ud83d\\ude00\"}}", "", "", 1,
      { { "f" U_E9, "{\"s\":\"" U_1F600 " " U_10000 " " U_10FFFF " " U_E9 "/\"}", U_1F600 } } },
    { "json \\u: pair in a response", COMMON_CHAT_FORMAT_GENERIC, 0, "{\"response\": \"a\\ud83d\\ude00b\"}",
      "a" U_1F600 "b", "", 0, { { 0 } } },
    { "json \\u: pair in arguments (functionary)", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0,
      "f\n{\"s\": \"\\ud83d\\ude00\"}", "", "", 1, { { "f", "{\"s\":\"" U_1F600 "\"}", "" } } },
    // a partial text shows a \u escape (or a pair) once it is whole: nothing of it before
    { "json \\u: response cut in the high half", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL, "{\"response\": \"a\\ud8", "a",
      "", 0, { { 0 } } },
    { "json \\u: response cut after the high half", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"response\": \"a\\ud83d", "a", "", 0, { { 0 } } },
    { "json \\u: response cut at the low half's backslash", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"response\": \"a\\ud83d\\", "a", "", 0, { { 0 } } },
    { "json \\u: response cut in the low half", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"response\": \"a\\ud83d\\ude0", "a", "", 0, { { 0 } } },
    { "json \\u: response with the pair whole", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"response\": \"a\\ud83d\\ude00", "a" U_1F600, "", 0, { { 0 } } },
    { "json \\u: arguments cut after the high half", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"x\\ud83d", "", "", 1, { { "f", "{\"s\":\"x", "" } } },
    { "json \\u: arguments cut at the low half's \\u", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"x\\ud83d\\u", "", "", 1,
      { { "f", "{\"s\":\"x", "" } } },
    { "json \\u: arguments cut in the low half", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"x\\ud83d\\ude0", "", "", 1,
      { { "f", "{\"s\":\"x", "" } } },
    { "json \\u: arguments with the pair whole", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"x\\ud83d\\ude00", "", "", 1,
      { { "f", "{\"s\":\"x" U_1F600, "" } } },
    // ours: "\ud83d\u0" can no longer become a pair, but like a cut-off escape it waits until its four digits are in
    { "json \\u: arguments cut in a non-low half", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"x\\ud83d\\u0", "", "", 1,
      { { "f", "{\"s\":\"x", "" } } },
    // a lone surrogate is no JSON to nlohmann / jansson: the call is not taken (the complete text falls back to
    // content, a partial one ends before it)
    { "json \\u: lone low surrogate", COMMON_CHAT_FORMAT_GENERIC, F_FALLBACK,
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"\\ude00\"}}}",
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"\\ude00\"}}}", "", 0, { { 0 } } },
    { "json \\u: high surrogate before a non-escape", COMMON_CHAT_FORMAT_GENERIC, F_FALLBACK,
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"\\ud83dx\"}}}",
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"\\ud83dx\"}}}", "", 0, { { 0 } } },
    { "json \\u: high surrogate before another escape", COMMON_CHAT_FORMAT_GENERIC, F_FALLBACK,
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"\\ud83d\\n\"}}}",
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"\\ud83d\\n\"}}}", "", 0, { { 0 } } },
    { "json \\u: high surrogate before a non-low \\u", COMMON_CHAT_FORMAT_GENERIC, F_FALLBACK,
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"\\ud83d\\u0041\"}}}",
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"\\ud83d\\u0041\"}}}", "", 0, { { 0 } } },
    { "json \\u: lone high surrogate in a name", COMMON_CHAT_FORMAT_GENERIC, F_FALLBACK,
      "{\"tool_call\": {\"name\": \"f\\ud83d\", \"arguments\": {}}}",
      "{\"tool_call\": {\"name\": \"f\\ud83d\", \"arguments\": {}}}", "", 0, { { 0 } } },
    { "json \\u: partial, lone high surrogate", COMMON_CHAT_FORMAT_GENERIC, F_PARTIAL,
      "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"s\": \"x\\ud83dx", "", "", 0, { { 0 } } },

    // Functionary's raw python: the code as nlohmann's dump writes a string, each maximal ill-formed UTF-8 subsequence
    // (Unicode's "maximal subpart") as one U+FFFD = EF BF BD: FF alone; E2 82 cut by "'"; ED A0 80 is a surrogate, so
    // ED, A0 and 80 are three; C0 is never a lead byte, so C0 80 is two. Control characters as \u00xx in lower case.
    { "functionary: python with bytes that are not UTF-8", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0,
      "python\nprint('\xff')\nx = '\xe2\x82'\ny = '\xe2\x82\xac'\nz = '\xed\xa0\x80'\t\"\\\x01", "", "", 1,
      { { "python", "{\"code\":\"print('" U_FFFD "')\\nx = '" U_FFFD "'\\ny = '\xe2\x82\xac'\\nz = '"
                    U_FFFD U_FFFD U_FFFD "'\\t\\\"\\\\\\u0001\"}", "" } } },
    { "functionary: python ending inside a UTF-8 sequence", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0,
      "python\nprint(1)\xf0\x9f\x98", "", "", 1, { { "python", "{\"code\":\"print(1)" U_FFFD "\"}", "" } } },
    { "functionary: partial python holds back a cut UTF-8 sequence", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, F_PARTIAL,
      "python\nprint(1)\xf0\x9f\x98", "", "", 1, { { "python", "{\"code\":\"print(1)", "" } } },
    { "functionary: partial python, a bad byte then a cut sequence", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, F_PARTIAL,
      "python\n\xff\xe2\x82", "", "", 1, { { "python", "{\"code\":\"" U_FFFD, "" } } },
    { "functionary: python control character", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0, "python\nx\x1fy", "", "", 1,
      { { "python", "{\"code\":\"x\\u001fy\"}", "" } } },
    { "functionary: >>>python with an overlong sequence", COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2, 0,
      "all\nHi>>>python\n\xc0\x80", "Hi", "", 1, { { "python", "{\"code\":\"" U_FFFD U_FFFD "\"}", "" } } },
};

static enum common_reasoning_format case_rf(int flags) {
    if (flags & F_RF_NONE) {
        return COMMON_REASONING_FORMAT_NONE;
    }
    if (flags & F_IN_CONTENT_DS) {
        return COMMON_REASONING_FORMAT_DEEPSEEK;
    }
    return (flags & F_IN_CONTENT) ? COMMON_REASONING_FORMAT_DEEPSEEK_LEGACY : COMMON_REASONING_FORMAT_DEEPSEEK;
}

static struct common_chat_syntax case_syntax(const struct pcase * c) {
    struct common_chat_syntax syn = { 0 };
    syn.format = c->fmt;
    syn.reasoning_format = case_rf(c->flags);
    syn.reasoning_in_content = (c->flags & (F_IN_CONTENT | F_IN_CONTENT_DS)) != 0;
    syn.thinking_forced_open = (c->flags & F_FORCED) != 0;
    syn.parse_tool_calls = !(c->flags & F_NO_TOOLS);
    return syn;
}

static void test_cases(void) {
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        const struct pcase * c = &CASES[i];
        const struct common_chat_syntax syn = case_syntax(c);
        struct common_chat_msg m;
        const bool ok = common_chat_parse(c->input, strlen(c->input), (c->flags & F_PARTIAL) != 0, &syn, &m);
        TH_CHECK(ok, "%s: parse", c->what);
        if (!ok) {
            continue;
        }
        TH_CHECK(strcmp(m.content, c->content) == 0, "%s: content [%s] want [%s]", c->what, m.content, c->content);
        TH_CHECK(strcmp(m.reasoning_content, c->reasoning) == 0, "%s: reasoning [%s] want [%s]", c->what,
                 m.reasoning_content, c->reasoning);
        TH_CHECK(m.n_tool_calls == (size_t) c->n_calls, "%s: %zu tool calls, want %d", c->what, m.n_tool_calls,
                 c->n_calls);
        for (size_t k = 0; k < m.n_tool_calls && k < (size_t) c->n_calls; k++) {
            const struct common_chat_tool_call * tc = &m.tool_calls[k];
            TH_CHECK(strcmp(tc->name, c->calls[k][0]) == 0 && strcmp(tc->arguments, c->calls[k][1]) == 0 &&
                         strcmp(tc->id, c->calls[k][2]) == 0,
                     "%s: call %zu = %s(%s) id [%s], want %s(%s) id [%s]", c->what, k, tc->name, tc->arguments, tc->id,
                     c->calls[k][0], c->calls[k][1], c->calls[k][2]);
        }
        common_chat_msg_free(&m);
    }
}

// what a client rebuilds from the streamed diffs
struct acc {
    struct chat_acc_call {
        char name[128], id[64], args[512];
    } calls[4];
    size_t n_calls;
    char content[1024], reasoning[1024];
    bool overflow;
};

static void cat(char * dst, size_t cap, const char * s, bool * overflow) {
    if (strlen(dst) + strlen(s) + 1 > cap) {
        *overflow = true;
        return;
    }
    strcat(dst, s);
}

static void acc_apply(struct acc * a, const struct common_chat_msg_diff * d, size_t n) {
    for (size_t i = 0; i < n; i++) {
        cat(a->content, sizeof(a->content), d[i].content_delta, &a->overflow);
        cat(a->reasoning, sizeof(a->reasoning), d[i].reasoning_content_delta, &a->overflow);
        const size_t k = d[i].tool_call_index;
        if (k == SIZE_MAX) {
            continue;
        }
        if (k >= 4 || k > a->n_calls) {
            a->overflow = true;
            continue;
        }
        if (k == a->n_calls) {
            a->n_calls++;
        }
        if (d[i].tool_call_delta.name[0]) {
            snprintf(a->calls[k].name, sizeof(a->calls[k].name), "%s", d[i].tool_call_delta.name);
        }
        if (d[i].tool_call_delta.id[0]) {
            snprintf(a->calls[k].id, sizeof(a->calls[k].id), "%s", d[i].tool_call_delta.id);
        }
        cat(a->calls[k].args, sizeof(a->calls[k].args), d[i].tool_call_delta.arguments, &a->overflow);
    }
}

// every complete sample streamed one byte at a time: the diffs add up to the final message (llama.cpp's
// test_parser_with_streaming checks the same property)
static void test_streaming(void) {
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        const struct pcase * c = &CASES[i];
        if (c->flags & F_PARTIAL) {
            continue;
        }
        const struct common_chat_syntax syn = case_syntax(c);
        const size_t n = strlen(c->input);
        struct common_chat_msg prev;
        common_chat_msg_init(&prev);
        struct acc a;
        memset(&a, 0, sizeof(a));
        bool ok = true;
        bool monotonic = true;
        for (size_t len = 0; len <= n && ok; len++) {
            struct common_chat_msg cur;
            ok = common_chat_parse(c->input, len, len < n, &syn, &cur);
            if (!ok) {
                break;
            }
            if (len < n) {
                // a partial parse only grows
                const char * before = prev.content ? prev.content : "";
                monotonic &= strncmp(cur.content, before, strlen(before)) == 0;
            }
            struct common_chat_msg_diff * d;
            size_t nd;
            ok = common_chat_msg_diffs(&prev, &cur, &d, &nd);
            if (ok) {
                acc_apply(&a, d, nd);
                common_chat_msg_diffs_free(d, nd);
            }
            common_chat_msg_free(&prev);
            prev = cur;
        }
        TH_CHECK(ok, "%s: streaming parse", c->what);
        if (!ok) {
            common_chat_msg_free(&prev);
            continue;
        }
        TH_CHECK(monotonic, "%s: partial content only grows", c->what);
        TH_CHECK(!a.overflow, "%s: stream fits", c->what);
        if (c->flags & F_FALLBACK) {
            common_chat_msg_free(&prev);
            continue;
        }
        TH_CHECK(strcmp(a.content, prev.content) == 0, "%s: streamed content [%s] final [%s]", c->what, a.content,
                 prev.content);
        TH_CHECK(strcmp(a.reasoning, prev.reasoning_content) == 0, "%s: streamed reasoning [%s] final [%s]", c->what,
                 a.reasoning, prev.reasoning_content);
        TH_CHECK(a.n_calls == prev.n_tool_calls, "%s: streamed %zu calls, final %zu", c->what, a.n_calls,
                 prev.n_tool_calls);
        for (size_t k = 0; k < a.n_calls && k < prev.n_tool_calls; k++) {
            TH_CHECK(strcmp(a.calls[k].name, prev.tool_calls[k].name) == 0 &&
                         strcmp(a.calls[k].args, prev.tool_calls[k].arguments) == 0 &&
                         strcmp(a.calls[k].id, prev.tool_calls[k].id) == 0,
                     "%s: streamed call %zu %s(%s) [%s], final %s(%s) [%s]", c->what, k, a.calls[k].name,
                     a.calls[k].args, a.calls[k].id, prev.tool_calls[k].name, prev.tool_calls[k].arguments,
                     prev.tool_calls[k].id);
        }
        common_chat_msg_free(&prev);
    }
}

// random truncations and byte flips of every sample, parsed as partial and complete: never a crash, always a
// message (run under ASan/UBSan in the sanitizer builds)
static void test_fuzz(void) {
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    size_t n_parsed = 0;
    bool all_ok = true;
    static const char noise[] = "{}[]\":,\\<>/`\n tu0";
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        const struct pcase * c = &CASES[i];
        const size_t n = strlen(c->input);
        char * buf = malloc(n + 1);
        for (int r = 0; r < 300 && buf; r++) {
            const size_t len = n ? (size_t) (th_xorshift64star(&seed) % (n + 1)) : 0;
            memcpy(buf, c->input, len);
            buf[len] = '\0';
            if (r % 2 && len > 0) {
                const size_t at = (size_t) (th_xorshift64star(&seed) % len);
                buf[at] = noise[th_xorshift64star(&seed) % (sizeof(noise) - 1)];
            }
            for (int f = 0; f < COMMON_CHAT_FORMAT_COUNT; f++) {
                struct common_chat_syntax syn = case_syntax(c);
                syn.format = (enum common_chat_format) f;
                syn.thinking_forced_open = r % 3 == 0;
                for (int partial = 0; partial < 2; partial++) {
                    struct common_chat_msg m;
                    const bool ok = common_chat_parse(buf, len, partial != 0, &syn, &m);
                    all_ok &= ok && m.content && m.reasoning_content;
                    for (size_t k = 0; ok && k < m.n_tool_calls; k++) {
                        all_ok &= m.tool_calls[k].name[0] != '\0';
                    }
                    common_chat_msg_free(&m);
                    n_parsed++;
                }
            }
        }
        free(buf);
    }
    TH_CHECK(all_ok, "fuzz: every parse returns a message with named calls (%zu parses)", n_parsed);
}

// random texts glued from the formats' markers and JSON pieces, parsed in every format, partial and complete, and
// streamed byte by byte through the diffs: never a crash, always a message
static void test_fuzz_markers(void) {
    static const char * const pieces[] = {
        "<tool_call>", "</tool_call>", "{", "}", "[", "]", ",", ":", "\"name\"", "\"arguments\"", "\"parameters\"",
        "\"id\"", "\"f\"", "\"x", "1", "-", ".", "e", "true", "nul", "\\u00", "\\ud83d", "\\", " ", "\n", "<think>",
        "</think>", "[TOOL_CALLS]", "<|python_tag|>", "f.call(", "a=", ")", DS_CALLS_BEGIN, DS_CALL_BEGIN, "function",
        DS_SEP, "```json\n", "```", DS_CALL_END, DS_CALLS_END, "<|START_THINKING|>", "<|END_THINKING|>",
        "<|START_ACTION|>", "<|END_ACTION|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>", ">>>", "all\n", "python\n",
        "<function=f>", "</function>", "\"tool_call\"", "\"tool_calls\"", "\"response\"", "\"type\"", "\"function\"",
        "\xc3", "\xa9",
    };
    const size_t n_pieces = sizeof(pieces) / sizeof(pieces[0]);
    uint64_t seed = 0x1234567887654321ull;
    bool all_ok = true;
    size_t n_parsed = 0;
    char buf[512];
    for (int r = 0; r < 400; r++) {
        size_t len = 0;
        const int n = 1 + (int) (th_xorshift64star(&seed) % 24);
        for (int k = 0; k < n; k++) {
            const char * pc = pieces[th_xorshift64star(&seed) % n_pieces];
            const size_t l = strlen(pc);
            if (len + l >= sizeof(buf)) {
                break;
            }
            memcpy(buf + len, pc, l);
            len += l;
        }
        buf[len] = '\0';
        for (int f = 0; f < COMMON_CHAT_FORMAT_COUNT; f++) {
            struct common_chat_syntax syn = { 0 };
            syn.format = (enum common_chat_format) f;
            syn.reasoning_format = (enum common_reasoning_format) (r % 4);
            syn.reasoning_in_content = r % 5 == 0;
            syn.thinking_forced_open = r % 3 == 0;
            syn.parse_tool_calls = r % 7 != 0;
            struct common_chat_msg prev;
            common_chat_msg_init(&prev);
            for (size_t l = 0; l <= len; l++) {
                struct common_chat_msg cur;
                const bool ok = common_chat_parse(buf, l, l < len, &syn, &cur);
                all_ok &= ok;
                if (!ok) {
                    break;
                }
                struct common_chat_msg_diff * d = NULL;
                size_t nd = 0;
                all_ok &= common_chat_msg_diffs(&prev, &cur, &d, &nd);
                common_chat_msg_diffs_free(d, nd);
                common_chat_msg_free(&prev);
                prev = cur;
                n_parsed++;
            }
            common_chat_msg_free(&prev);
        }
    }
    TH_CHECK(all_ok, "fuzz: marker soup parses and diffs cleanly (%zu parses)", n_parsed);
}

// diffs: a text that no longer extends the previous one gives no delta rather than an error
static void test_diffs(void) {
    struct common_chat_msg a = { 0 }, b = { 0 };
    a.content = strdup("Hello wor");
    a.reasoning_content = strdup("");
    b.content = strdup("Hello");  // a stop string was cut off
    b.reasoning_content = strdup("");
    struct common_chat_msg_diff * d;
    size_t nd;
    TH_CHECK(common_chat_msg_diffs(&a, &b, &d, &nd), "diffs: shrinking text");
    TH_CHECK(nd == 1 && strcmp(d[0].content_delta, "") == 0, "diffs: shrinking text gives an empty delta");
    common_chat_msg_diffs_free(d, nd);
    common_chat_msg_free(&a);
    common_chat_msg_free(&b);
}

// Lone surrogates reach the decoder and the compactor only on their own: the parser checks a value with
// chat_json_scan first and drops it as not JSON. What each makes of one is pinned here (ours): the decoder writes
// U+FFFD, the compactor keeps the escape as written; a pair or a plain escape after it is read as usual.
static void test_json_lone_surrogates(void) {
    static const struct {
        const char * in;
        bool done;          // the decoder reached the closing quote
        const char * dec;   // what it decoded
    } D[] = {
        { "\"\\ude00x\"", true, U_FFFD "x" },
        { "\"\\ud83dx\"", true, U_FFFD "x" },
        { "\"\\ud83d\\u0041\"", true, U_FFFD "A" },
        { "\"\\ud83d\\n\"", true, U_FFFD "\n" },
        { "\"\\ud83d\\ud83d\\ude00\"", true, U_FFFD U_1F600 },
        { "\"a\\ud83d", false, "a" },
        { "\"a\\ud83d\\", false, "a" },
        { "\"a\\ud83d\\ude0", false, "a" },
    };
    for (size_t i = 0; i < sizeof(D) / sizeof(D[0]); i++) {
        struct common_sb b = { 0 };
        const bool done = chat_json_decode_string(D[i].in, strlen(D[i].in), 0, &b);
        TH_CHECK(done == D[i].done && strcmp(b.s ? b.s : "", D[i].dec) == 0, "decode %s: [%s] %d, want [%s] %d",
                 D[i].in, b.s ? b.s : "", done, D[i].dec, D[i].done);
        free(b.s);
    }
    static const struct {
        const char * in;
        bool partial;
        const char * out;
    } C[] = {
        { "{\"s\": \"\\ude00\"}", false, "{\"s\":\"\\ude00\"}" },
        { "{\"s\": \"\\ud83dx\"}", false, "{\"s\":\"\\ud83dx\"}" },
        { "{\"s\": \"\\ud83d\\u0041\"}", false, "{\"s\":\"\\ud83dA\"}" },
        { "{\"s\": \"\\ud83d\\ud83d\\ude00\"}", false, "{\"s\":\"\\ud83d" U_1F600 "\"}" },
        { "{\"s\": \"\\ud83d\"}", false, "{\"s\":\"\\ud83d\"}" },
        { "{\"s\": \"\\u00e9\\/\\u0001\\u001F\"}", false, "{\"s\":\"" U_E9 "/\\u0001\\u001f\"}" },
        { "{\"s\": \"x\\ud83d", true, "{\"s\":\"x" },
        { "{\"s\": \"x\\ud83d\\ude0", true, "{\"s\":\"x" },
    };
    for (size_t i = 0; i < sizeof(C) / sizeof(C[0]); i++) {
        struct common_sb b = { 0 };
        chat_json_compact(C[i].in, 0, strlen(C[i].in), C[i].partial, &b);
        TH_CHECK(strcmp(b.s ? b.s : "", C[i].out) == 0, "compact %s: [%s], want [%s]", C[i].in, b.s ? b.s : "",
                 C[i].out);
        free(b.s);
    }
}

// an independent UTF-8 check (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF)
static bool is_utf8(const unsigned char * s, size_t n) {
    for (size_t i = 0; i < n;) {
        const unsigned c = s[i];
        size_t l;
        unsigned cp;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            l = 2, cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            l = 3, cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            l = 4, cp = c & 0x07;
        } else {
            return false;
        }
        if (i + l > n) {
            return false;
        }
        for (size_t k = 1; k < l; k++) {
            if ((s[i + k] & 0xc0) != 0x80) {
                return false;
            }
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if ((l == 3 && cp < 0x800) || (l == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            return false;
        }
        i += l;
    }
    return true;
}

// Functionary's raw code on random bytes (lead, continuation and never-valid bytes, quotes, controls): the
// arguments are always valid UTF-8, and the arguments of every partial text are the beginning of the final ones
static void test_raw_code_random_bytes(void) {
    static const unsigned char alpha[] = { 'a', '"', '\\', 0x01, 0x1f, 0x7f, 0x80, 0x82, 0x8f, 0x90, 0x9f, 0xa0, 0xac,
                                           0xbf, 0xc0, 0xc2, 0xe0, 0xe2, 0xed, 0xf0, 0xf4, 0xf5, 0xff };
    uint64_t seed = 0x2545f4914f6cdd1dull;
    struct common_chat_syntax syn = { 0 };
    syn.format = COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2;
    syn.parse_tool_calls = true;
    bool utf8_ok = true, prefix_ok = true, called = true;
    for (int it = 0; it < 2000; it++) {
        char buf[40] = "python\n";
        const size_t n = 7 + (size_t) (th_xorshift64star(&seed) % 24);
        for (size_t i = 7; i < n; i++) {
            buf[i] = (char) alpha[th_xorshift64star(&seed) % sizeof(alpha)];
        }
        struct common_chat_msg fin;
        if (!common_chat_parse(buf, n, false, &syn, &fin)) {
            called = false;
            continue;
        }
        called &= fin.n_tool_calls == 1;
        const char * want = fin.n_tool_calls == 1 ? fin.tool_calls[0].arguments : "";
        utf8_ok &= is_utf8((const unsigned char *) want, strlen(want));
        for (size_t len = 8; len <= n; len++) {  // "python\n" alone is still a header that may go on
            struct common_chat_msg m;
            if (!common_chat_parse(buf, len, true, &syn, &m)) {
                called = false;
                continue;
            }
            const char * got = m.n_tool_calls == 1 ? m.tool_calls[0].arguments : "";
            prefix_ok &= m.n_tool_calls == 1 && strncmp(got, want, strlen(got)) == 0;
            utf8_ok &= is_utf8((const unsigned char *) got, strlen(got));
            common_chat_msg_free(&m);
        }
        common_chat_msg_free(&fin);
    }
    TH_CHECK(called, "raw code on random bytes: always one call");
    TH_CHECK(utf8_ok, "raw code on random bytes: arguments are valid UTF-8");
    TH_CHECK(prefix_ok, "raw code on random bytes: partial arguments begin the final ones");
}

// llama.cpp's detection rules (common_chat_templates_apply_jinja), each on a template that carries the marker
static void test_detection(void) {
    static const struct {
        const char * tmpl;
        bool tools, schema, builtin;
        enum common_chat_format want;
    } T[] = {
        { "{% for m in messages %}{{ m.content }}{% endfor %}", false, false, false, COMMON_CHAT_FORMAT_CONTENT_ONLY },
        { "{% for m in messages %}{{ m.content }}{% endfor %}", true, false, false, COMMON_CHAT_FORMAT_GENERIC },
        { "{{ '<tool_call>' }}{% for m in messages %}{% endfor %}", false, false, false, COMMON_CHAT_FORMAT_HERMES_2_PRO },
        { "{{ '<tool_call>' }}", true, true, false, COMMON_CHAT_FORMAT_GENERIC },
        // Llama 3.x: its handler runs without tools too, but answers content-only (test-chat.cpp: Llama-3.1-8B)
        { "<|start_header_id|>ipython<|end_header_id|>", false, false, false, COMMON_CHAT_FORMAT_CONTENT_ONLY },
        { "<|start_header_id|>ipython<|end_header_id|>", true, false, false, COMMON_CHAT_FORMAT_LLAMA_3_X },
        { "<|start_header_id|>ipython<|end_header_id|><|python_tag|>", true, false, true,
          COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS },
        { "<|start_header_id|>ipython<|end_header_id|><|python_tag|>", true, false, false, COMMON_CHAT_FORMAT_LLAMA_3_X },
        { "{{ '[TOOL_CALLS]' }}", false, false, false, COMMON_CHAT_FORMAT_CONTENT_ONLY },
        { "{{ '[TOOL_CALLS]' }}", true, false, false, COMMON_CHAT_FORMAT_MISTRAL_NEMO },
        { "{{ '" DS_CALLS_BEGIN "' }}", false, false, false, COMMON_CHAT_FORMAT_DEEPSEEK_R1 },
        { "{{ '<|END_THINKING|><|START_ACTION|>' }}", false, false, false, COMMON_CHAT_FORMAT_COMMAND_R7B },
        { "{{ '>>>all' }}", false, false, false, COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2 },
        // DeepSeek R1's marker wins over Hermes' (its rule comes first)
        { "{{ '" DS_CALLS_BEGIN "<tool_call>' }}", false, false, false, COMMON_CHAT_FORMAT_DEEPSEEK_R1 },
        // GPT-OSS (not implemented here) is taken before the tools fallback: content-only, not generic
        { "{{ '<|channel|>' }}", true, false, false, COMMON_CHAT_FORMAT_CONTENT_ONLY },
    };
    for (size_t i = 0; i < sizeof(T) / sizeof(T[0]); i++) {
        const enum common_chat_format f = common_chat_detect_format(T[i].tmpl, T[i].tools, T[i].schema, T[i].builtin);
        TH_CHECK(f == T[i].want, "detect %zu [%s]: %s, want %s", i, T[i].tmpl, common_chat_format_name(f),
                 common_chat_format_name(T[i].want));
    }
    TH_CHECK(strcmp(common_chat_format_name(COMMON_CHAT_FORMAT_HERMES_2_PRO), "Hermes 2 Pro") == 0 &&
                 strcmp(common_chat_format_name(COMMON_CHAT_FORMAT_CONTENT_ONLY), "Content-only") == 0 &&
                 strcmp(common_chat_format_name(COMMON_CHAT_FORMAT_LLAMA_3_X), "Llama 3.x") == 0,
             "llama.cpp's format names");
    enum common_reasoning_format rf;
    TH_CHECK(common_reasoning_format_from_name("deepseek-legacy", &rf) && rf == COMMON_REASONING_FORMAT_DEEPSEEK_LEGACY &&
                 !common_reasoning_format_from_name("deepseek2", &rf),
             "reasoning format names");

    // the real templates of the vocabulary files that carry one: Phi-3 has no tool markers, so llama.cpp answers
    // content-only without tools and the generic JSON protocol with tools
    const char * path = th_data_path("models/vocab/ggml-vocab-phi-3.gguf");
    if (!th_require_file(path)) {
        return;
    }
    struct gguf_init_params gp = { true, NULL };
    struct gguf_context * g = gguf_init_from_file(path, gp);
    TH_CHECK(g != NULL, "phi-3 vocab opens");
    if (!g) {
        return;
    }
    const int64_t k = gguf_find_key(g, "tokenizer.chat_template");
    TH_CHECK(k >= 0, "phi-3 vocab has tokenizer.chat_template");
    if (k >= 0) {
        const char * src = gguf_get_val_str(g, k);
        TH_CHECK(strstr(src, "<|assistant|>") != NULL, "phi-3 template text");
        TH_CHECK(common_chat_detect_format(src, false, false, false) == COMMON_CHAT_FORMAT_CONTENT_ONLY,
                 "phi-3 without tools: Content-only");
        TH_CHECK(common_chat_detect_format(src, true, false, false) == COMMON_CHAT_FORMAT_GENERIC,
                 "phi-3 with tools: Generic");
    }
    gguf_free(g);
}

int main(void) {
    test_cases();
    test_streaming();
    test_diffs();
    test_json_lone_surrogates();
    test_raw_code_random_bytes();
    test_fuzz();
    test_fuzz_markers();
    test_detection();
    return th_finish();
}
