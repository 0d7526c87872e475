// Tool-call grammars of the chat formats with tags or marker tokens around each call: Hermes 2 Pro, Llama 3.x,
// DeepSeek R1 and Functionary v3.2 (llama.cpp's common_chat_params_init_* rules, common/chat.cpp).
#include "chat-grammar-impl.h"
#include "chat-markers.h"

#include "sampling.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the thinking-block part of a PATTERN_FULL trigger: with the block open in the prompt, everything up to its end
// (captured, so that the grammar takes the end tag in); else an optional whole block
#define THINK_OPEN_PREFIX   "[\\s\\S]*?(</think>\\s*)"
#define THINK_CLOSED_PREFIX "(?:<think>[\\s\\S]*?</think>\\s*)?"

//
// Hermes 2 Pro / Qwen: <tool_call>{"name": ..., "arguments": {...}}</tool_call>, <function=name>{...}</function>
// and the wrappers models write instead (<function_call>, <tools>, ```json fences, a bare {"name": ...})
//

bool chat_grammar_hermes_2_pro(struct chat_grammar_ctx * g) {
    struct chat_grammar_list tool_rules = { 0 }, alts = { 0 }, names = { 0 };
    bool ok = true;
    for (size_t i = 0; ok && i < chat_grammar_n_tools(g); i++) {
        const char * name;
        const json_t * params;
        const int r = chat_grammar_tool(g, i, &name, &params);
        if (r < 0) {
            ok = false;
            break;
        }
        if (r == 0) {
            continue;
        }
        json_t * call = json_pack("{s:s, s:{s:{s:s}, s:O}, s:[s, s]}", "type", "object", "properties", "name", "const",
                                  name, "arguments", params, "required", "name", "arguments");
        if (!call) {
            g->oom = true;
            ok = false;
            break;
        }
        chat_grammar_list_push(g, &tool_rules,
                               common_grammar_builder_add_schema(g->b, chat_grammar_fmt(g, "%s-call", name), call));
        json_decref(call);
        const char * args = common_grammar_builder_add_schema(g->b, chat_grammar_fmt(g, "%s-args", name), params);
        chat_grammar_list_push(g, &alts, common_grammar_builder_add_rule(g->b, chat_grammar_fmt(g, "%s-function-tag", name),
            chat_grammar_fmt(g, "\"<function\" ( %s | %s ) \">\" space %s \"</function>\" space",
                             chat_grammar_lit(g, chat_grammar_fmt(g, "=%s", name)),
                             chat_grammar_lit(g, chat_grammar_fmt(g, " name=\"%s\"", name)), args)));
        chat_grammar_trigger(g, COMMON_GRAMMAR_TRIGGER_TYPE_WORD, chat_grammar_fmt(g, "<function=%s>", name));
        char * esc = regex_escape(name);
        if (!esc) {
            g->oom = true;
            ok = false;
            break;
        }
        const char * e = chat_grammar_fmt(g, "%s", esc);
        free(esc);
        chat_grammar_trigger(g, COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN,
                             chat_grammar_fmt(g, "<function\\s+name\\s*=\\s*\"%s\"", e));
        chat_grammar_list_push(g, &names, e);
    }
    if (ok && tool_rules.n > 0 && !g->oom) {
        const char * any = common_grammar_builder_add_rule(g->b, "any_tool_call",
            chat_grammar_fmt(g, "( %s ) space", chat_grammar_join(g, tool_rules.v, tool_rules.n, " | ")));
        static const char * const tags[] = { "tool_call", "function_call", "response", "tools", "json", "xml", "JSON" };
        struct chat_grammar_list wrapped = { 0 };
        chat_grammar_list_push(g, &wrapped, any);
        for (size_t k = 0; k < sizeof(tags) / sizeof(tags[0]); k++) {
            chat_grammar_list_push(g, &wrapped, chat_grammar_fmt(g, "\"<%s>\" space %s \"</%s>\"", tags[k], any, tags[k]));
        }
        const char * wrappable = common_grammar_builder_add_rule(g->b, "wrappable_tool_call",
            chat_grammar_fmt(g, "( %s ) space", chat_grammar_join(g, wrapped.v, wrapped.n, " | ")));
        free(wrapped.v);
        chat_grammar_list_push(g, &alts, wrappable);
        chat_grammar_list_push(g, &alts, chat_grammar_fmt(g,
            "( \"```\\n\" | \"```json\\n\" | \"```xml\\n\" ) space %s space \"```\" space ", wrappable));
        const char * tool_call = common_grammar_builder_add_rule(g->b, "tool_call",
                                                                 chat_grammar_join(g, alts.v, alts.n, " | "));
        const bool open = g->in->thinking_forced_open;
        common_grammar_builder_add_rule(g->b, "root",
            chat_grammar_fmt(g, "%s%s%s%s", open ? "( \"</think>\" space )? " : "",
                             g->in->parallel_tool_calls ? "(" : "", tool_call, g->in->parallel_tool_calls ? ")+" : ""));
        // a call at the start of the output (after a thinking block), only with a known tool name, so that a
        // JSON answer is not mistaken for a call
        chat_grammar_trigger(g, COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL, chat_grammar_fmt(g,
            "%s(\\s*(?:<tool_call>|<function|(?:```(?:json|xml)?\n\\s*)?(?:<function_call>|<tools>|<xml><json>|"
            "<response>)?\\s*\\{\\s*\"name\"\\s*:\\s*\"(?:%s)\"))[\\s\\S]*",
            open ? THINK_OPEN_PREFIX : THINK_CLOSED_PREFIX, chat_grammar_join(g, names.v, names.n, "|")));
        static const char * const preserved[] = {
            "<think>", "</think>", "<tool_call>", "</tool_call>", "<function", "<tools>", "</tools>", "<response>",
            "</response>", "<function_call>", "</function_call>", "<json>", "</json>", "<JSON>", "</JSON>", "```",
            "```json", "```xml",
        };
        chat_grammar_preserve(g, preserved, sizeof(preserved) / sizeof(preserved[0]));
    }
    free(tool_rules.v);
    free(alts.v);
    free(names.v);
    return ok && !g->oom;
}

//
// Llama 3.x: {"name": ..., "parameters": {...}} (optionally "type": "function" first) at the start; builtin tools
// also as <|python_tag|>name.call(key=value, ...)
//

// llama.cpp's expect_tool_parameters: a builtin tool's parameters must be an object schema with exactly these
// required properties
static bool expect_params(struct chat_grammar_ctx * g, const char * name, const json_t * params, const char * prop) {
    const json_t * props = json_object_get(params, "properties");
    const json_t * req = json_object_get(params, "required");
    const char * type = json_string_value(json_object_get(params, "type"));
    if (!json_is_object(params) || !type || strcmp(type, "object") != 0 || !json_is_object(props) || !req) {
        snprintf(g->err, sizeof(g->err), "Parameters of tool %.100s must be an object w/ required properties", name);
        return false;
    }
    if (!json_object_get(props, prop)) {
        snprintf(g->err, sizeof(g->err), "Parameters of tool %.100s is missing property: %s", name, prop);
        return false;
    }
    bool required = false;
    size_t i;
    const json_t * r;
    json_array_foreach(req, i, r) {
        required |= json_is_string(r) && strcmp(json_string_value(r), prop) == 0;
    }
    if (!required) {
        snprintf(g->err, sizeof(g->err), "Parameters of tool %.100s must have property marked as required: %s", name,
                 prop);
        return false;
    }
    if (json_object_size(props) != 1) {
        snprintf(g->err, sizeof(g->err), "Parameters of tool %.100s must only have these properties:%s", name, prop);
        return false;
    }
    return true;
}

// 1 a builtin tool (its <|python_tag|> rule added), 0 not one, -1 bad parameters
static int llama_builtin_rule(struct chat_grammar_ctx * g, const char * name, const json_t * params,
                              struct chat_grammar_list * rules) {
    const char * prop = chat_llama3_builtin_param(name);
    if (prop == NULL) {
        return 0;
    }
    if (!expect_params(g, name, params, prop)) {
        return -1;
    }
    struct chat_grammar_list kvs = { 0 };
    const char * key;
    const json_t * value;
    json_object_foreach((json_t *) json_object_get(params, "properties"), key, value) {
        const char * rule = common_grammar_builder_add_schema(g->b, chat_grammar_fmt(g, "%s-args-%s", name, key), value);
        chat_grammar_list_push(g, &kvs, chat_grammar_fmt(g, "%s %s", chat_grammar_lit(g, chat_grammar_fmt(g, "%s=", key)),
                                                         rule));
    }
    chat_grammar_list_push(g, rules, common_grammar_builder_add_rule(g->b, chat_grammar_fmt(g, "%s-call", name),
        chat_grammar_fmt(g, "%s %s \")\"", chat_grammar_lit(g, chat_grammar_fmt(g, "<|python_tag|>%s.call(", name)),
                         chat_grammar_join(g, kvs.v, kvs.n, " \", \" "))));
    free(kvs.v);
    return 1;
}

bool chat_grammar_llama_3_x(struct chat_grammar_ctx * g, bool builtin) {
    struct chat_grammar_list rules = { 0 };
    bool ok = true, any_builtin = false;
    for (size_t i = 0; ok && i < chat_grammar_n_tools(g); i++) {
        const char * name;
        const json_t * params;
        const int r = chat_grammar_tool(g, i, &name, &params);
        if (r <= 0) {
            ok = r == 0;
            continue;
        }
        if (builtin) {
            const int b = llama_builtin_rule(g, name, params, &rules);
            ok = b >= 0;
            any_builtin |= b > 0;
        }
        const char * args = common_grammar_builder_add_schema(g->b, chat_grammar_fmt(g, "%s-args", name), params);
        chat_grammar_list_push(g, &rules, common_grammar_builder_add_rule(g->b, chat_grammar_fmt(g, "%s-call", name),
            chat_grammar_fmt(g, "\"{\" space ( \"\\\"type\\\"\" space \":\" space \"\\\"function\\\"\" space \",\" space )? "
                                "\"\\\"name\\\"\" space \":\" space %s space \",\" space "
                                "\"\\\"parameters\\\"\" space \":\" space %s \"}\" space",
                             chat_grammar_lit(g, chat_grammar_json_str(g, name)), args)));
    }
    if (ok && rules.n > 0 && !g->oom) {
        // small models make up names: any call-like JSON at the start wakes the grammar, whatever its name
        chat_grammar_trigger(g, COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL,
                             "(\\{\\s*(?:\"type\"\\s*:\\s*\"function\"\\s*,\\s*)?\"name\"\\s*:\\s*\")[\\s\\S]*");
        if (any_builtin) {
            chat_grammar_trigger(g, COMMON_GRAMMAR_TRIGGER_TYPE_WORD, "<|python_tag|>");
            static const char * const preserved[] = { "<|python_tag|>" };
            chat_grammar_preserve(g, preserved, 1);
        }
        common_grammar_builder_add_rule(g->b, "root", chat_grammar_join(g, rules.v, rules.n, " | "));
        chat_grammar_stop(g, "<|eom_id|>");
    }
    free(rules.v);
    return ok && !g->oom;
}

//
// DeepSeek R1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}```<｜tool▁call▁end｜>
// ...<｜tool▁calls▁end｜> (the opening also in the variants the distilled models write)
//

bool chat_grammar_deepseek_r1(struct chat_grammar_ctx * g) {
    struct chat_grammar_list rules = { 0 };
    bool ok = true;
    for (size_t i = 0; ok && i < chat_grammar_n_tools(g); i++) {
        const char * name;
        const json_t * params;
        const int r = chat_grammar_tool(g, i, &name, &params);
        if (r <= 0) {
            ok = r == 0;
            continue;
        }
        const char * args = common_grammar_builder_add_schema(g->b, chat_grammar_fmt(g, "%s-args", name), params);
        chat_grammar_list_push(g, &rules, common_grammar_builder_add_rule(g->b, chat_grammar_fmt(g, "%s-call", name),
            chat_grammar_fmt(g, "( %s )? %s %s %s", chat_grammar_lit(g, DS_CALL_BEGIN),
                             chat_grammar_lit(g, chat_grammar_fmt(g, "function" DS_SEP "%s\n```json\n", name)), args,
                             chat_grammar_lit(g, "```" DS_CALL_END))));
    }
    if (ok && rules.n > 0 && !g->oom) {
        const bool open = g->in->thinking_forced_open;
        const char * opens[] = { DS_CALLS_BEGIN, DS_CALLS_ALT1, DS_CALLS_ALT2, DS_CALLS_ALT3, DS_CALLS_ALT4 };
        struct chat_grammar_list lits = { 0 };
        for (size_t k = 0; k < 5; k++) {
            chat_grammar_list_push(g, &lits, chat_grammar_lit(g, opens[k]));
        }
        common_grammar_builder_add_rule(g->b, "root",
            chat_grammar_fmt(g, "%s( %s ) (%s)%s %s space", open ? "( \"</think>\" space )? " : "",
                             chat_grammar_join(g, lits.v, lits.n, " | "), chat_grammar_join(g, rules.v, rules.n, " | "),
                             g->in->parallel_tool_calls ? "*" : "", chat_grammar_lit(g, DS_CALLS_END)));
        free(lits.v);
        chat_grammar_trigger(g, COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL, chat_grammar_fmt(g,
            "%s(" DS_CALLS_BEGIN "|" DS_CALLS_ALT1 "|" DS_CALLS_ALT2 "|<" DS_BAR "tool\\\\_calls\\\\_begin" DS_BAR ">|"
            DS_CALLS_ALT4 ")[\\s\\S]*", open ? THINK_OPEN_PREFIX : THINK_CLOSED_PREFIX));
        // llama.cpp lists the last one without its '>' (a typo there); the whole marker is what must stay one token
        static const char * const preserved[] = {
            "<think>", "</think>", DS_CALLS_BEGIN, DS_CALL_BEGIN, DS_SEP, DS_CALL_END, DS_CALLS_END,
        };
        chat_grammar_preserve(g, preserved, sizeof(preserved) / sizeof(preserved[0]));
    }
    free(rules.v);
    return ok && !g->oom;
}

//
// Functionary v3.2: >>>NAME\n{...} (the prompt ends with ">>>"); python may take raw code instead of JSON
//

bool chat_grammar_functionary_v3_2(struct chat_grammar_ctx * g) {
    struct chat_grammar_list first = { 0 }, next = { 0 };
    bool ok = true;
    const bool parallel = g->in->parallel_tool_calls;
    for (size_t i = 0; ok && i < chat_grammar_n_tools(g); i++) {
        const char * name;
        const json_t * params;
        const int r = chat_grammar_tool(g, i, &name, &params);
        if (r <= 0) {
            ok = r == 0;
            continue;
        }
        const char * args = common_grammar_builder_add_schema(g->b, chat_grammar_fmt(g, "%s-args", name), params);
        const bool python = strcmp(name, "python") == 0;
        if (python) {
            args = common_grammar_builder_add_rule(g->b, chat_grammar_fmt(g, "%s-maybe-raw-args", name),
                                                   chat_grammar_fmt(g, "%s | [^{] .*", args));
        }
        const char * call = common_grammar_builder_add_rule(g->b, chat_grammar_fmt(g, "%s-call", name),
            chat_grammar_fmt(g, "%s %s", chat_grammar_lit(g, chat_grammar_fmt(g, "%s\n", name)), args));
        chat_grammar_list_push(g, &first, call);
        if (parallel) {
            chat_grammar_list_push(g, &next, common_grammar_builder_add_rule(g->b, chat_grammar_fmt(g, "%s-call2", name),
                                                                             chat_grammar_fmt(g, "\">>>\" %s", call)));
        }
        char * esc = regex_escape(name);
        if (!esc) {
            g->oom = true;
            ok = false;
            break;
        }
        chat_grammar_trigger(g, COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL,
                             chat_grammar_fmt(g, "((?:[\\s\\S]+?>>>)?%s\n)%s[\\s\\S]*", esc, python ? "" : "\\{"));
        free(esc);
    }
    if (ok && first.n > 0 && !g->oom) {
        static const char * const preserved[] = { "<|end_header_id|>" };
        chat_grammar_preserve(g, preserved, 1);
        const char * f = chat_grammar_fmt(g, "%s space", common_grammar_builder_add_rule(g->b, "first_tool_call",
                                                             chat_grammar_join(g, first.v, first.n, " | ")));
        if (parallel) {
            const char * s = chat_grammar_fmt(g, "%s space", common_grammar_builder_add_rule(g->b, "subsequent_tool_call",
                                                                 chat_grammar_join(g, next.v, next.n, " | ")));
            common_grammar_builder_add_rule(g->b, "root", chat_grammar_fmt(g, "%s (%s)*", f, s));
        } else {
            common_grammar_builder_add_rule(g->b, "root", f);
        }
    }
    free(first.v);
    free(next.v);
    return ok && !g->oom;
}
