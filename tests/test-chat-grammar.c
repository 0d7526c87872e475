// Tool-call grammars of the chat formats (common/chat-grammar, llama.cpp's common_chat_params_init_* grammars):
// for each format, the grammar built from the tools parses; a well-formed call in the format's syntax is a
// complete sentence of it (and common_chat_parse reads it back as that call); malformed calls (unknown tool,
// argument outside the schema, missing closing marker) are rejected; the grammar is lazy unless tool_choice is
// "required"; the triggers are llama.cpp's and match (PCRE2, as the sampler runs them) a call at the start of the
// output but not plain text. End to end, a lazy common_sampler on the stories260K vocabulary leaves the logits
// alone until a trigger, then masks the tokens the call syntax forbids.
#define PCRE2_CODE_UNIT_WIDTH 8

#include "harness.h"

#include "chat-grammar.h"
#include "chat-parse.h"
#include "sampling.h"

#include "llama-grammar.h"
#include "llama.h"

#include <jansson.h>
#include <math.h>
#include <pcre2.h>

static const char * TOOLS_JSON =
    "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"Weather\",\"parameters\":"
    "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"enum\":[\"Paris\",\"Rome\"]}},"
    "\"required\":[\"city\"]}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"add\",\"parameters\":{\"type\":\"object\",\"properties\":"
    "{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"],"
    "\"additionalProperties\":false}}},"
    "{\"type\":\"retrieval\"}]";

// the DeepSeek R1 markers (fullwidth bar U+FF5C, U+2581 for spaces)
#define BAR "\xef\xbd\x9c"
#define SP  "\xe2\x96\x81"
#define DS_CALLS_BEGIN "<" BAR "tool" SP "calls" SP "begin" BAR ">"
#define DS_CALL_BEGIN  "<" BAR "tool" SP "call" SP "begin" BAR ">"
#define DS_SEP         "<" BAR "tool" SP "sep" BAR ">"
#define DS_CALL_END    "<" BAR "tool" SP "call" SP "end" BAR ">"
#define DS_CALLS_END   "<" BAR "tool" SP "calls" SP "end" BAR ">"

static json_t * g_tools;

static bool build(enum common_chat_format fmt, bool required, bool parallel, bool think_open,
                  struct common_chat_grammar * out) {
    struct common_chat_grammar_inputs in = { fmt, g_tools, required, parallel, think_open, NULL };
    char err[256];
    const bool ok = common_chat_grammar_init(&in, out, err, sizeof(err));
    TH_CHECK(ok && out->grammar, "%s: grammar built (%s)", common_chat_format_name(fmt), err);
    return ok && out->grammar;
}

// 1: text is a complete sentence of the grammar; 0: rejected on the way or incomplete
static bool accepts(const char * grammar, const char * text) {
    char err[256];
    struct llama_grammar * g = llama_grammar_init_impl(NULL, grammar, "root", err, sizeof(err));
    if (!g) {
        fprintf(stderr, "grammar does not parse: %s\n%s\n", err, grammar);
        return false;
    }
    const bool ok = llama_grammar_accept_str(g, text, strlen(text)) && llama_grammar_is_complete(g);
    llama_grammar_free_impl(g);
    return ok;
}

static void expect_accept(const struct common_chat_grammar * cg, enum common_chat_format fmt, const char * text,
                          const char * name, const char * args) {
    TH_CHECK(accepts(cg->grammar, text), "%s accepts %s", common_chat_format_name(fmt), text);
    if (!name) {
        return;
    }
    // the parser of the format reads the text back as the call
    struct common_chat_syntax syn = { fmt, COMMON_REASONING_FORMAT_NONE, false, false, true };
    struct common_chat_msg msg;
    TH_CHECK(common_chat_parse(text, strlen(text), false, &syn, &msg), "parse");
    const bool one = msg.n_tool_calls == 1;
    TH_CHECK(one && strcmp(msg.tool_calls[0].name, name) == 0 && strcmp(msg.tool_calls[0].arguments, args) == 0,
             "%s: %s parses as %s(%s), got %zu calls %s(%s)", common_chat_format_name(fmt), text, name, args,
             msg.n_tool_calls, one ? msg.tool_calls[0].name : "", one ? msg.tool_calls[0].arguments : "");
    common_chat_msg_free(&msg);
}

static void expect_reject(const struct common_chat_grammar * cg, enum common_chat_format fmt, const char * text) {
    TH_CHECK(!accepts(cg->grammar, text), "%s rejects %s", common_chat_format_name(fmt), text);
}

static bool has_trigger(const struct common_chat_grammar * cg, enum common_grammar_trigger_type type, const char * v) {
    for (size_t i = 0; i < cg->n_grammar_triggers; i++) {
        if (cg->grammar_triggers[i].type == type && strcmp(cg->grammar_triggers[i].value, v) == 0) {
            return true;
        }
    }
    return false;
}

static bool has_preserved(const struct common_chat_grammar * cg, const char * v) {
    for (size_t i = 0; i < cg->n_preserved_tokens; i++) {
        if (strcmp(cg->preserved_tokens[i], v) == 0) {
            return true;
        }
    }
    return false;
}

// the first PATTERN_FULL trigger run on text as the sampler runs it (the whole text must match): the offset of
// the first non-empty capture group (where the grammar starts), -1 when it does not match
static long full_trigger_start(const struct common_chat_grammar * cg, const char * text) {
    const char * pat = NULL;
    for (size_t i = 0; i < cg->n_grammar_triggers && !pat; i++) {
        if (cg->grammar_triggers[i].type == COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL) {
            pat = cg->grammar_triggers[i].value;
        }
    }
    if (!pat) {
        return -2;
    }
    int ec;
    PCRE2_SIZE eo;
    pcre2_code * re = pcre2_compile((PCRE2_SPTR) pat, PCRE2_ZERO_TERMINATED, 0, &ec, &eo, NULL);
    TH_CHECK(re != NULL, "trigger pattern compiles: %s", pat);
    if (!re) {
        return -3;
    }
    pcre2_match_data * md = pcre2_match_data_create_from_pattern(re, NULL);
    const int rc = pcre2_match(re, (PCRE2_SPTR) text, strlen(text), 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED, md, NULL);
    long start = -1;
    if (rc >= 0) {
        const PCRE2_SIZE * ov = pcre2_get_ovector_pointer(md);
        start = (long) ov[0];
        for (int k = 1; k < rc; k++) {
            if (ov[2 * k] != PCRE2_UNSET && ov[2 * k + 1] > ov[2 * k]) {
                start = (long) ov[2 * k];
                break;
            }
        }
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return start;
}

static void test_hermes(void) {
    const enum common_chat_format F = COMMON_CHAT_FORMAT_HERMES_2_PRO;
    struct common_chat_grammar cg;
    if (!build(F, false, false, false, &cg)) {
        return;
    }
    TH_CHECK(cg.grammar_lazy, "hermes: lazy with tool_choice auto");
    expect_accept(&cg, F, "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>",
                  "get_weather", "{\"city\":\"Paris\"}");
    expect_accept(&cg, F, "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": -2}}\n</tool_call>", "add",
                  "{\"a\":1,\"b\":-2}");
    expect_accept(&cg, F, "<function=get_weather>{\"city\": \"Rome\"}</function>", "get_weather", "{\"city\":\"Rome\"}");
    expect_accept(&cg, F, "<function name=\"add\">{\"a\": 3, \"b\": 4}</function>", "add", "{\"a\":3,\"b\":4}");
    expect_accept(&cg, F, "```json\n<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>```",
                  "add", "{\"a\":1,\"b\":2}");
    expect_accept(&cg, F, "{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}", "add", "{\"a\":1,\"b\":2}");
    expect_reject(&cg, F, "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>");
    expect_reject(&cg, F, "<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>");
    expect_reject(&cg, F, "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}");
    expect_reject(&cg, F, "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2, \"c\": 3}}</tool_call>");
    expect_reject(&cg, F, "Sure! <tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>");
    // one call unless parallel
    expect_reject(&cg, F, "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>"
                          "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>");
    TH_CHECK(has_trigger(&cg, COMMON_GRAMMAR_TRIGGER_TYPE_WORD, "<function=get_weather>") &&
             has_trigger(&cg, COMMON_GRAMMAR_TRIGGER_TYPE_WORD, "<function=add>") &&
             has_trigger(&cg, COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN, "<function\\s+name\\s*=\\s*\"get_weather\""),
             "hermes: the <function=...> triggers per tool");
    TH_CHECK(has_preserved(&cg, "<tool_call>") && has_preserved(&cg, "</tool_call>") && has_preserved(&cg, "```json"),
             "hermes: preserved tokens");
    TH_CHECK(full_trigger_start(&cg, "<tool_call>{\"name\": \"add\"") == 0, "hermes: trigger on <tool_call> at start");
    // the block's own trailing whitespace is skipped greedily: the grammar starts at the tag
    TH_CHECK(full_trigger_start(&cg, "<think>hm</think>\n  <tool_call>{") == 20,
             "hermes: trigger after a thinking block (%ld)",
             full_trigger_start(&cg, "<think>hm</think>\n  <tool_call>{"));
    TH_CHECK(full_trigger_start(&cg, "{\"name\": \"get_weather\", ") == 0, "hermes: a bare call with a known name");
    TH_CHECK(full_trigger_start(&cg, "{\"name\": \"other\", ") == -1, "hermes: not a JSON with an unknown name");
    TH_CHECK(full_trigger_start(&cg, "Hello there, how are you") == -1, "hermes: no trigger on plain text");
    common_chat_grammar_free(&cg);

    // required: not lazy; parallel: several calls; thinking forced open: the grammar may start with </think>
    if (!build(F, true, true, true, &cg)) {
        return;
    }
    TH_CHECK(!cg.grammar_lazy, "hermes: not lazy with tool_choice required");
    expect_accept(&cg, F, "</think>\n<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>"
                          "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>",
                  NULL, NULL);
    expect_reject(&cg, F, "I will not call anything.");
    TH_CHECK(full_trigger_start(&cg, "thinking...</think> <tool_call>{") == 11,
             "hermes, thinking open: trigger captures </think> (%ld)", full_trigger_start(&cg, "thinking...</think> <tool_call>{"));
    common_chat_grammar_free(&cg);
}

static void test_mistral_nemo(void) {
    const enum common_chat_format F = COMMON_CHAT_FORMAT_MISTRAL_NEMO;
    struct common_chat_grammar cg;
    if (!build(F, false, false, false, &cg)) {
        return;
    }
    TH_CHECK(cg.grammar_lazy && cg.n_grammar_triggers == 1 &&
             has_trigger(&cg, COMMON_GRAMMAR_TRIGGER_TYPE_WORD, "[TOOL_CALLS]") && has_preserved(&cg, "[TOOL_CALLS]"),
             "nemo: lazy, word trigger [TOOL_CALLS]");
    expect_accept(&cg, F, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"abc123XYZ\"}]",
                  "get_weather", "{\"city\":\"Paris\"}");
    expect_reject(&cg, F, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"abc\"}]");
    expect_reject(&cg, F, "[TOOL_CALLS][]");
    expect_reject(&cg, F, "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"abc123XYZ\"}]");
    expect_reject(&cg, F, "[TOOL_CALLS][{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}, \"id\": \"abc123XYZ\"}, "
                          "{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}, \"id\": \"abc123XYZ\"}]");
    common_chat_grammar_free(&cg);
}

static void test_command_r7b(void) {
    const enum common_chat_format F = COMMON_CHAT_FORMAT_COMMAND_R7B;
    struct common_chat_grammar cg;
    if (!build(F, false, true, false, &cg)) {
        return;
    }
    const char * ok = "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": "
                      "{\"city\": \"Paris\"}}, {\"tool_call_id\": \"1\", \"tool_name\": \"add\", \"parameters\": "
                      "{\"a\": 1, \"b\": 2}}]<|END_ACTION|>";
    expect_accept(&cg, F, ok, NULL, NULL);
    expect_accept(&cg, F, "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"add\", \"parameters\": "
                          "{\"a\": 5, \"b\": 6}}]<|END_ACTION|>", "add", "{\"a\":5,\"b\":6}");
    expect_reject(&cg, F, "<|START_ACTION|>[{\"tool_call_id\": \"x\", \"tool_name\": \"add\", \"parameters\": "
                          "{\"a\": 5, \"b\": 6}}]<|END_ACTION|>");
    expect_reject(&cg, F, "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"add\", \"parameters\": "
                          "{\"a\": 5, \"b\": 6}}]");
    TH_CHECK(full_trigger_start(&cg, "<|START_THINKING|>x<|END_THINKING|><|START_ACTION|>[") == 35,
             "r7b: trigger after a thinking block at <|START_ACTION|>");
    TH_CHECK(full_trigger_start(&cg, "<|START_RESPONSE|>hi<|END_RESPONSE|>") == -1, "r7b: no trigger on a response");
    TH_CHECK(has_preserved(&cg, "<|END_ACTION|>"), "r7b: preserved tokens");
    common_chat_grammar_free(&cg);
}

static void test_llama_3_x(void) {
    enum common_chat_format F = COMMON_CHAT_FORMAT_LLAMA_3_X;
    struct common_chat_grammar cg;
    if (!build(F, false, false, false, &cg)) {
        return;
    }
    expect_accept(&cg, F, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", "get_weather",
                  "{\"city\":\"Paris\"}");
    expect_accept(&cg, F, "{\"type\": \"function\", \"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}", "add",
                  "{\"a\":1,\"b\":2}");
    expect_reject(&cg, F, "{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}");
    expect_reject(&cg, F, "<|python_tag|>python.call(code=\"1\")");
    TH_CHECK(cg.n_additional_stops == 1 && strcmp(cg.additional_stops[0], "<|eom_id|>") == 0, "llama: <|eom_id|> stop");
    TH_CHECK(full_trigger_start(&cg, "{\"name\": \"whatever\"") == 0, "llama: any call-like JSON at the start");
    TH_CHECK(full_trigger_start(&cg, "The answer is {\"name\": \"x\"") == -1, "llama: not in the middle");
    TH_CHECK(!has_trigger(&cg, COMMON_GRAMMAR_TRIGGER_TYPE_WORD, "<|python_tag|>"), "llama: no python tag without builtins");
    common_chat_grammar_free(&cg);

    // builtin tools: <|python_tag|>name.call(...) besides the JSON form
    json_t * saved = g_tools;
    g_tools = json_loads("[{\"type\":\"function\",\"function\":{\"name\":\"python\",\"parameters\":{\"type\":\"object\","
                         "\"properties\":{\"code\":{\"type\":\"string\"}},\"required\":[\"code\"]}}}]", 0, NULL);
    F = COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS;
    if (build(F, false, false, false, &cg)) {
        expect_accept(&cg, F, "<|python_tag|>python.call(code=\"print(1)\")", "python", "{\"code\":\"print(1)\"}");
        expect_accept(&cg, F, "{\"name\": \"python\", \"parameters\": {\"code\": \"x\"}}", NULL, NULL);
        expect_reject(&cg, F, "<|python_tag|>python.call(source=\"print(1)\")");
        TH_CHECK(has_trigger(&cg, COMMON_GRAMMAR_TRIGGER_TYPE_WORD, "<|python_tag|>") && has_preserved(&cg, "<|python_tag|>"),
                 "llama builtin: <|python_tag|> trigger and preserved");
        common_chat_grammar_free(&cg);
    }
    json_decref(g_tools);
    // a builtin tool with other parameters is refused (llama.cpp's expect_tool_parameters)
    g_tools = json_loads("[{\"type\":\"function\",\"function\":{\"name\":\"web_search\",\"parameters\":{\"type\":\"object\","
                         "\"properties\":{\"q\":{\"type\":\"string\"}},\"required\":[\"q\"]}}}]", 0, NULL);
    struct common_chat_grammar_inputs in = { F, g_tools, false, false, false, NULL };
    char err[256];
    TH_CHECK(!common_chat_grammar_init(&in, &cg, err, sizeof(err)) && strstr(err, "missing property: query") && !cg.grammar,
             "llama builtin: bad parameters refused (%s)", err);
    json_decref(g_tools);
    g_tools = saved;
}

static void test_deepseek_r1(void) {
    const enum common_chat_format F = COMMON_CHAT_FORMAT_DEEPSEEK_R1;
    struct common_chat_grammar cg;
    if (!build(F, false, false, false, &cg)) {
        return;
    }
    const char * ok = DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "get_weather\n```json\n{\"city\": \"Paris\"}```"
                      DS_CALL_END DS_CALLS_END;
    expect_accept(&cg, F, ok, "get_weather", "{\"city\":\"Paris\"}");
    expect_accept(&cg, F, "<" BAR "tool_calls_begin" BAR ">function" DS_SEP "add\n```json\n{\"a\": 1, \"b\": 2}```"
                          DS_CALL_END DS_CALLS_END, NULL, NULL);
    expect_reject(&cg, F, DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "get_weather\n```json\n{\"city\": \"Paris\"}```"
                          DS_CALL_END);
    expect_reject(&cg, F, DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "nope\n```json\n{}```" DS_CALL_END DS_CALLS_END);
    TH_CHECK(full_trigger_start(&cg, "<think>x</think>" DS_CALLS_BEGIN "...") == 16, "deepseek: trigger after thoughts");
    TH_CHECK(full_trigger_start(&cg, "<" BAR "tool\\_calls\\_begin" BAR ">") == 0, "deepseek: the escaped variant");
    TH_CHECK(full_trigger_start(&cg, "no calls here") == -1, "deepseek: no trigger on text");
    TH_CHECK(has_preserved(&cg, DS_CALLS_END) && has_preserved(&cg, DS_SEP), "deepseek: preserved tokens");
    common_chat_grammar_free(&cg);
}

static void test_functionary(void) {
    const enum common_chat_format F = COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2;
    struct common_chat_grammar cg;
    if (!build(F, false, true, false, &cg)) {
        return;
    }
    expect_accept(&cg, F, "get_weather\n{\"city\": \"Paris\"}", "get_weather", "{\"city\":\"Paris\"}");
    expect_accept(&cg, F, "get_weather\n{\"city\": \"Paris\"}>>>add\n{\"a\": 1, \"b\": 2}", NULL, NULL);
    expect_reject(&cg, F, "get_weather\n{\"city\": \"Lima\"}");
    expect_reject(&cg, F, "all\nHello");
    TH_CHECK(has_trigger(&cg, COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL, "((?:[\\s\\S]+?>>>)?get_weather\n)\\{[\\s\\S]*"),
             "functionary: per-tool full trigger");
    TH_CHECK(full_trigger_start(&cg, "all\nLet me check>>>get_weather\n{\"ci") == 0,
             "functionary: trigger after content (%ld)", full_trigger_start(&cg, "all\nLet me check>>>get_weather\n{\"ci"));
    common_chat_grammar_free(&cg);
}

static void test_generic(void) {
    const enum common_chat_format F = COMMON_CHAT_FORMAT_GENERIC;
    struct common_chat_grammar cg;
    if (!build(F, false, false, false, &cg)) {
        return;
    }
    TH_CHECK(!cg.grammar_lazy && cg.n_grammar_triggers == 0, "generic: never lazy, no triggers");
    expect_accept(&cg, F, "{\"tool_call\": {\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}}", "add",
                  "{\"a\":1,\"b\":2}");
    expect_accept(&cg, F, "{\"response\": \"hello\"}", NULL, NULL);
    expect_reject(&cg, F, "hello");
    common_chat_grammar_free(&cg);
    if (build(F, true, false, false, &cg)) {
        expect_reject(&cg, F, "{\"response\": \"hello\"}");
        expect_accept(&cg, F, "{\"tool_call\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}}", NULL,
                      NULL);
        common_chat_grammar_free(&cg);
    }
}

static void test_inputs(void) {
    struct common_chat_grammar cg;
    char err[256];
    // no tools, or a format without tool calls: no grammar, no error
    struct common_chat_grammar_inputs none = { COMMON_CHAT_FORMAT_HERMES_2_PRO, NULL, false, false, false, NULL };
    TH_CHECK(common_chat_grammar_init(&none, &cg, err, sizeof(err)) && !cg.grammar, "no tools: no grammar");
    struct common_chat_grammar_inputs co = { COMMON_CHAT_FORMAT_CONTENT_ONLY, g_tools, false, false, false, NULL };
    TH_CHECK(common_chat_grammar_init(&co, &cg, err, sizeof(err)) && !cg.grammar, "content-only: no grammar");
    // a function without a name
    json_t * bad = json_loads("[{\"type\":\"function\",\"function\":{\"parameters\":{}}}]", 0, NULL);
    struct common_chat_grammar_inputs b = { COMMON_CHAT_FORMAT_MISTRAL_NEMO, bad, false, false, false, NULL };
    TH_CHECK(!common_chat_grammar_init(&b, &cg, err, sizeof(err)) && strstr(err, "no name") && !cg.grammar,
             "nameless tool refused (%s)", err);
    json_decref(bad);
    // a schema that does not convert
    bad = json_loads("[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"nonsense\"}}}]", 0, NULL);
    b.tools = bad;
    TH_CHECK(!common_chat_grammar_init(&b, &cg, err, sizeof(err)) && err[0] && !cg.grammar, "bad schema refused (%s)", err);
    json_decref(bad);
    // $refs inside a tool's parameters resolve against the parameters
    json_t * refs = json_loads("[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"$defs\":{\"c\":"
                               "{\"type\":\"string\",\"enum\":[\"x\"]}},\"type\":\"object\",\"properties\":{\"v\":"
                               "{\"$ref\":\"#/$defs/c\"}},\"required\":[\"v\"]}}}]", 0, NULL);
    struct common_chat_grammar_inputs r = { COMMON_CHAT_FORMAT_HERMES_2_PRO, refs, false, false, false, NULL };
    TH_CHECK(common_chat_grammar_init(&r, &cg, err, sizeof(err)) && cg.grammar, "tool with $ref (%s)", err);
    if (cg.grammar) {
        TH_CHECK(accepts(cg.grammar, "<function=f>{\"v\": \"x\"}</function>"), "$ref: accepted");
        TH_CHECK(!accepts(cg.grammar, "<function=f>{\"v\": \"y\"}</function>"), "$ref: enum enforced");
    }
    common_chat_grammar_free(&cg);
    json_decref(refs);
}

// a lazy grammar through common_sampler_init_grammar on a real vocabulary: nothing is masked before the trigger,
// the call syntax is enforced after it
static int n_finite(struct llama_sampler * s, int32_t n_vocab) {
    llama_token_data * d = malloc((size_t) n_vocab * sizeof(*d));
    for (int32_t i = 0; i < n_vocab; i++) {
        d[i] = (llama_token_data) { i, 1.0f, 0.0f };
    }
    llama_token_data_array a = { d, (size_t) n_vocab, -1, false };
    llama_sampler_apply(s, &a);
    int n = 0;
    for (size_t i = 0; i < a.size; i++) {
        n += isfinite(a.data[i].logit) ? 1 : 0;
    }
    free(d);
    return n;
}

static void feed(struct llama_sampler * s, const struct llama_vocab * vocab, const char * text) {
    llama_token toks[256];
    const int32_t n = llama_tokenize(vocab, text, (int32_t) strlen(text), toks, 256, false, false);
    TH_CHECK(n > 0, "tokenize %s", text);
    for (int32_t i = 0; i < n; i++) {
        llama_sampler_accept(s, toks[i]);
    }
}

static void test_lazy_sampler(void) {
    const char * path = th_data_path("models/stories260K-f32.gguf");
    if (!th_require_file(path)) {
        return;
    }
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model * model = llama_model_load_from_file(path, mp);
    TH_CHECK(model != NULL, "load %s", path);
    if (!model) {
        return;
    }
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    static const enum common_chat_format fmts[] = { COMMON_CHAT_FORMAT_HERMES_2_PRO, COMMON_CHAT_FORMAT_MISTRAL_NEMO };
    static const char * const before[] = { "Sure, let me see.", "Sure, let me see." };
    // Hermes waits for a call at the very start; Mistral Nemo for its marker anywhere
    static const char * const start[] = { "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"",
                                          "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"" };
    for (size_t k = 0; k < 2; k++) {
        struct common_chat_grammar cg;
        if (!build(fmts[k], false, false, false, &cg)) {
            continue;
        }
        struct common_params_sampling sp = common_params_sampling_default();
        sp.grammar = cg.grammar;
        sp.grammar_lazy = cg.grammar_lazy;
        sp.grammar_triggers = cg.grammar_triggers;
        sp.n_grammar_triggers = (int32_t) cg.n_grammar_triggers;
        struct llama_sampler * s = common_sampler_init_grammar(vocab, &sp);
        TH_CHECK(s != NULL, "%s: lazy sampler built", common_chat_format_name(fmts[k]));
        if (s) {
            TH_CHECK(n_finite(s, n_vocab) == n_vocab, "%s: nothing masked before a trigger", common_chat_format_name(fmts[k]));
            if (k == 0) {
                // Hermes: text first, then a call: the full-output trigger does not fire (llama.cpp's rule)
                feed(s, vocab, before[k]);
                feed(s, vocab, start[k]);
                TH_CHECK(n_finite(s, n_vocab) == n_vocab, "hermes: a call after text does not trigger");
                llama_sampler_reset(s);
            } else {
                // the word is matched literally: "Sure" has letters of "[TOOL_CALLS]" read as a class
                feed(s, vocab, before[k]);
                TH_CHECK(n_finite(s, n_vocab) == n_vocab, "nemo: text without the marker does not trigger");
            }
            // (the SentencePiece space the tokenizer puts in front lands in the trigger's \s* capture: the grammar
            // refuses that piece, logs it and goes on)
            feed(s, vocab, start[k]);
            const int n = n_finite(s, n_vocab);
            // inside the enum string only the pieces of "Paris" / "Rome" are left
            TH_CHECK(n > 0 && n < 20, "%s: after the trigger the call is constrained (%d of %d tokens left)",
                     common_chat_format_name(fmts[k]), n, n_vocab);
            llama_sampler_free(s);
        }
        // the same grammar, required: constrained from the first token
        sp.grammar_lazy = false;
        s = common_sampler_init_grammar(vocab, &sp);
        const int n0 = s ? n_finite(s, n_vocab) : -1;
        TH_CHECK(s && n0 > 0 && n0 < n_vocab / 2, "%s: non-lazy grammar constrains at once (%d left)",
                 common_chat_format_name(fmts[k]), n0);
        llama_sampler_free(s);
        // a lazy grammar without triggers is refused
        sp.grammar_lazy = true;
        sp.n_grammar_triggers = 0;
        s = common_sampler_init_grammar(vocab, &sp);
        TH_CHECK(s == NULL, "lazy grammar without triggers refused");
        llama_sampler_free(s);
        common_chat_grammar_free(&cg);
    }
    llama_model_free(model);
}

int main(void) {
    llama_backend_init();
    g_tools = json_loads(TOOLS_JSON, 0, NULL);
    TH_CHECK(g_tools != NULL, "tools JSON");
    test_inputs();
    test_hermes();
    test_mistral_nemo();
    test_command_r7b();
    test_llama_3_x();
    test_deepseek_r1();
    test_functionary();
    test_generic();
    test_lazy_sampler();
    json_decref(g_tools);
    llama_backend_free();
    return th_finish();
}
