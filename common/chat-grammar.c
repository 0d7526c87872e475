// Tool-call grammars of the chat formats (see chat-grammar.h): the build state and helpers, the entry point, and
// the formats whose calls are one JSON document: generic, Mistral Nemo and Command R7B. The rules follow
// llama.cpp's common_chat_params_init_* (common/chat.cpp).
#include "chat-grammar-impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//
// helpers
//

static const char * keep(struct chat_grammar_ctx * g, char * s) {
    if (!s) {
        g->oom = true;
        return "";
    }
    if (g->n_tmp == g->cap_tmp) {
        const size_t cap = g->cap_tmp ? 2 * g->cap_tmp : 32;
        char ** v = realloc(g->tmp, cap * sizeof(*v));
        if (!v) {
            free(s);
            g->oom = true;
            return "";
        }
        g->tmp = v;
        g->cap_tmp = cap;
    }
    g->tmp[g->n_tmp++] = s;
    return s;
}

const char * chat_grammar_fmt(struct chat_grammar_ctx * g, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char * s = n >= 0 ? malloc((size_t) n + 1) : NULL;
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t) n + 1, fmt, ap);
        va_end(ap);
    }
    return keep(g, s);
}

const char * chat_grammar_lit(struct chat_grammar_ctx * g, const char * text) {
    return common_grammar_builder_literal(g->b, text);
}

const char * chat_grammar_json_str(struct chat_grammar_ctx * g, const char * text) {
    json_t * s = json_string(text);
    char * d = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    json_decref(s);
    return keep(g, d);
}

const char * chat_grammar_join(struct chat_grammar_ctx * g, const char * const * parts, size_t n, const char * sep) {
    size_t len = 1;
    for (size_t i = 0; i < n; i++) {
        len += strlen(parts[i]) + strlen(sep);
    }
    char * s = malloc(len);
    if (s) {
        s[0] = '\0';
        for (size_t i = 0; i < n; i++) {
            if (i > 0) {
                strcat(s, sep);
            }
            strcat(s, parts[i]);
        }
    }
    return keep(g, s);
}

static bool grow(void ** v, size_t * cap, size_t n, size_t elem) {
    if (n < *cap) {
        return true;
    }
    const size_t nc = *cap ? 2 * *cap : 8;
    void * nv = realloc(*v, nc * elem);
    if (!nv) {
        return false;
    }
    *v = nv;
    *cap = nc;
    return true;
}

void chat_grammar_list_push(struct chat_grammar_ctx * g, struct chat_grammar_list * l, const char * s) {
    if (!grow((void **) &l->v, &l->cap, l->n, sizeof(*l->v))) {
        g->oom = true;
        return;
    }
    l->v[l->n++] = s;
}

void chat_grammar_trigger(struct chat_grammar_ctx * g, enum common_grammar_trigger_type type, const char * value) {
    struct common_chat_grammar * o = g->out;
    size_t cap = o->n_grammar_triggers;  // exact-size array: grow by one
    void * v = realloc(o->grammar_triggers, (cap + 1) * sizeof(*o->grammar_triggers));
    char * d = strdup(value);
    if (!v || !d) {
        if (v) {
            o->grammar_triggers = v;
        }
        free(d);
        g->oom = true;
        return;
    }
    o->grammar_triggers = v;
    o->grammar_triggers[o->n_grammar_triggers++] = (struct common_grammar_trigger) { type, d, LLAMA_TOKEN_NULL };
}

static void push_str(struct chat_grammar_ctx * g, char *** v, size_t * n, const char * s) {
    char ** nv = realloc(*v, (*n + 1) * sizeof(**v));
    char * d = strdup(s);
    if (!nv || !d) {
        if (nv) {
            *v = nv;
        }
        free(d);
        g->oom = true;
        return;
    }
    *v = nv;
    (*v)[(*n)++] = d;
}

void chat_grammar_preserve(struct chat_grammar_ctx * g, const char * const * tokens, size_t n) {
    for (size_t i = 0; i < n; i++) {
        push_str(g, &g->out->preserved_tokens, &g->out->n_preserved_tokens, tokens[i]);
    }
}

void chat_grammar_stop(struct chat_grammar_ctx * g, const char * stop) {
    push_str(g, &g->out->additional_stops, &g->out->n_additional_stops, stop);
}

size_t chat_grammar_n_tools(const struct chat_grammar_ctx * g) {
    return json_is_array(g->in->tools) ? json_array_size(g->in->tools) : 0;
}

int chat_grammar_tool(struct chat_grammar_ctx * g, size_t i, const char ** name, const json_t ** params) {
    const json_t * t = json_array_get(g->in->tools, i);
    const char * type = json_string_value(json_object_get(t, "type"));
    const json_t * fn = json_object_get(t, "function");
    if (!type || strcmp(type, "function") != 0 || !json_is_object(fn)) {
        return 0;
    }
    *name = json_string_value(json_object_get(fn, "name"));
    if (!*name || !**name) {
        snprintf(g->err, sizeof(g->err), "tools[%zu]: the function has no name", i);
        return -1;
    }
    *params = json_object_get(fn, "parameters");
    if (!*params || json_is_null(*params)) {
        *params = g->empty;
    }
    common_grammar_builder_resolve_refs(g->b, *params);
    return 1;
}

//
// generic: {"tool_call": {...}} / {"tool_calls": [...]} / {"response": ...}, the whole output one object
//

bool chat_grammar_generic(struct chat_grammar_ctx * g) {
    const struct common_chat_grammar_inputs * in = g->in;
    json_t * calls = json_array();
    bool ok = calls != NULL;
    for (size_t i = 0; ok && i < chat_grammar_n_tools(g); i++) {
        const char * name;
        const json_t * params;
        const int r = chat_grammar_tool(g, i, &name, &params);
        if (r < 0) {
            json_decref(calls);
            return false;
        }
        if (r == 0) {
            continue;
        }
        const json_t * fn = json_object_get(json_array_get(in->tools, i), "function");
        json_t * one = json_pack("{s:s, s:{s:{s:s, s:s}, s:O}, s:[s, s]}", "type", "object", "properties", "name",
                                 "type", "string", "const", name, "arguments", params, "required", "name",
                                 "arguments");
        ok = one != NULL;
        if (ok && json_object_get(fn, "description")) {
            json_object_set(one, "description", json_object_get(fn, "description"));
        }
        if (ok && in->parallel_tool_calls) {
            json_object_set_new(json_object_get(one, "properties"), "id",
                                json_pack("{s:s, s:i}", "type", "string", "minLength", 4));
            json_array_append_new(json_object_get(one, "required"), json_string("id"));
        }
        ok = ok && json_array_append_new(calls, one) == 0;
    }
    json_t * item = !ok ? NULL
                  : json_array_size(calls) == 1 ? json_incref(json_array_get(calls, 0))
                                                : json_pack("{s:O}", "anyOf", calls);
    json_decref(calls);
    json_t * call = !item ? NULL
                  : in->parallel_tool_calls
                        ? json_pack("{s:s, s:{s:{s:s, s:o, s:i}}, s:[s]}", "type", "object", "properties", "tool_calls",
                                    "type", "array", "items", item, "minItems", 1, "required", "tool_calls")
                        : json_pack("{s:s, s:{s:o}, s:[s]}", "type", "object", "properties", "tool_call", item,
                                    "required", "tool_call");
    json_t * schema = call;
    if (call && !in->tool_choice_required) {
        json_t * resp = in->json_schema ? json_incref((json_t *) in->json_schema) : json_pack("{s:s}", "type", "string");
        schema = resp ? json_pack("{s:[o, {s:s, s:{s:o}, s:[s]}]}", "anyOf", call, "type", "object", "properties",
                                  "response", resp, "required", "response")
                      : NULL;
    }
    if (!schema) {
        g->oom = true;
        return false;
    }
    g->out->grammar_lazy = false;
    common_grammar_builder_add_schema(g->b, "root", schema);
    json_decref(schema);
    return true;
}

// the items of an array of calls: one schema, or anyOf them; NULL when out of memory
static json_t * items_schema(json_t * schemas) {
    return json_array_size(schemas) == 1 ? json_incref(json_array_get(schemas, 0)) : json_pack("{s:O}", "anyOf", schemas);
}

// a JSON array of call objects, at least one, at most one unless parallel calls are allowed
static json_t * calls_array_schema(struct chat_grammar_ctx * g, json_t * schemas) {
    json_t * items = items_schema(schemas);
    json_t * a = items ? json_pack("{s:s, s:o, s:i}", "type", "array", "items", items, "minItems", 1) : NULL;
    if (a && !g->in->parallel_tool_calls) {
        json_object_set_new(a, "maxItems", json_integer(1));
    }
    return a;
}

// the calls array schema of the formats that write their calls as one JSON array: one object schema per
// function tool, made by `call`; NULL on a bad tool (g->err) or out of memory (g->oom)
typedef json_t * (*chat_grammar_call_schema)(const char * name, const json_t * params);

static json_t * calls_array_of(struct chat_grammar_ctx * g, chat_grammar_call_schema call) {
    json_t * schemas = json_array();
    bool ok = schemas != NULL;
    for (size_t i = 0; ok && i < chat_grammar_n_tools(g); i++) {
        const char * name;
        const json_t * params;
        const int r = chat_grammar_tool(g, i, &name, &params);
        if (r < 0) {
            json_decref(schemas);
            return NULL;
        }
        if (r > 0) {
            ok = json_array_append_new(schemas, call(name, params)) == 0;
        }
    }
    json_t * arr = ok ? calls_array_schema(g, schemas) : NULL;
    json_decref(schemas);
    if (!arr) {
        g->oom = true;
    }
    return arr;
}

//
// Mistral Nemo: [TOOL_CALLS][{"name": ..., "arguments": {...}, "id": "<9 alphanumerics>"}]
//

static json_t * mistral_nemo_call(const char * name, const json_t * params) {
    return json_pack("{s:s, s:{s:{s:s, s:s}, s:O, s:{s:s, s:s}}, s:[s, s, s]}", "type", "object", "properties", "name",
                     "type", "string", "const", name, "arguments", params, "id", "type", "string", "pattern",
                     "^[a-zA-Z0-9]{9}$", "required", "name", "arguments", "id");
}

bool chat_grammar_mistral_nemo(struct chat_grammar_ctx * g) {
    json_t * arr = calls_array_of(g, mistral_nemo_call);
    if (!arr) {
        return false;
    }
    const char * calls = common_grammar_builder_add_schema(g->b, "tool_calls", arr);
    json_decref(arr);
    common_grammar_builder_add_rule(g->b, "root", chat_grammar_fmt(g, "\"[TOOL_CALLS]\" %s", calls));
    chat_grammar_trigger(g, COMMON_GRAMMAR_TRIGGER_TYPE_WORD, "[TOOL_CALLS]");
    static const char * const preserved[] = { "[TOOL_CALLS]" };
    chat_grammar_preserve(g, preserved, 1);
    return true;
}

//
// Command R7B: <|START_ACTION|>[{"tool_call_id": "0", "tool_name": ..., "parameters": {...}}]<|END_ACTION|>
//

static json_t * command_r7b_call(const char * name, const json_t * params) {
    return json_pack("{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}, s:O}, s:[s, s, s]}", "type", "object", "properties",
                     "tool_call_id", "type", "string", "pattern", "^[0-9]{1,10}$", "tool_name", "type", "string",
                     "const", name, "parameters", params, "required", "tool_call_id", "tool_name", "parameters");
}

bool chat_grammar_command_r7b(struct chat_grammar_ctx * g) {
    json_t * arr = calls_array_of(g, command_r7b_call);
    if (!arr) {
        return false;
    }
    const bool open = g->in->thinking_forced_open;
    const char * calls = common_grammar_builder_add_schema(g->b, "tool_calls", arr);
    json_decref(arr);
    common_grammar_builder_add_rule(g->b, "root", chat_grammar_fmt(g, "%s\"<|START_ACTION|>\" %s \"<|END_ACTION|>\"",
                                                                   open ? "( \"<|END_THINKING|>\" space )? " : "", calls));
    // with the thinking block open in the prompt, the grammar takes the block's end in (a required call may
    // follow the thoughts); else a whole thinking block may come first
    chat_grammar_trigger(g, COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL,
                         chat_grammar_fmt(g, "%s(<\\|START_ACTION\\|>)[\\s\\S]*",
                                          open ? "[\\s\\S]*?(<\\|END_THINKING\\|>\\s*)"
                                               : "(?:<\\|START_THINKING\\|>[\\s\\S]*?<\\|END_THINKING\\|>\\s*)?"));
    static const char * const preserved[] = {
        "<|START_ACTION|>", "<|END_ACTION|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_THINKING|>",
        "<|END_THINKING|>",
    };
    chat_grammar_preserve(g, preserved, sizeof(preserved) / sizeof(preserved[0]));
    return true;
}

//
// entry point
//

void common_chat_grammar_free(struct common_chat_grammar * g) {
    if (!g) {
        return;
    }
    free(g->grammar);
    for (size_t i = 0; i < g->n_grammar_triggers; i++) {
        free(g->grammar_triggers[i].value);
    }
    free(g->grammar_triggers);
    for (size_t i = 0; i < g->n_preserved_tokens; i++) {
        free(g->preserved_tokens[i]);
    }
    free(g->preserved_tokens);
    for (size_t i = 0; i < g->n_additional_stops; i++) {
        free(g->additional_stops[i]);
    }
    free(g->additional_stops);
    memset(g, 0, sizeof(*g));
}

static bool has_tools(const struct common_chat_grammar_inputs * in) {
    return json_is_array(in->tools) && json_array_size(in->tools) > 0;
}

bool common_chat_grammar_init(const struct common_chat_grammar_inputs * in, struct common_chat_grammar * out,
                              char * err, size_t err_size) {
    memset(out, 0, sizeof(*out));
    if (err && err_size > 0) {
        err[0] = '\0';
    }
    if (!has_tools(in)) {
        return true;
    }
    struct chat_grammar_ctx g;
    memset(&g, 0, sizeof(g));
    g.in = in;
    g.out = out;
    g.b = common_grammar_builder_init();
    g.empty = json_object();
    bool ok = g.b && g.empty;
    bool built = true;
    // llama.cpp's lazy rule: every format but the generic one waits for a call unless one is required
    out->grammar_lazy = !in->tool_choice_required;
    if (ok) {
        switch (in->format) {
            case COMMON_CHAT_FORMAT_GENERIC:                     ok = chat_grammar_generic(&g); break;
            case COMMON_CHAT_FORMAT_MISTRAL_NEMO:                ok = chat_grammar_mistral_nemo(&g); break;
            case COMMON_CHAT_FORMAT_COMMAND_R7B:                 ok = chat_grammar_command_r7b(&g); break;
            case COMMON_CHAT_FORMAT_HERMES_2_PRO:                ok = chat_grammar_hermes_2_pro(&g); break;
            case COMMON_CHAT_FORMAT_LLAMA_3_X:                   ok = chat_grammar_llama_3_x(&g, false); break;
            case COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS: ok = chat_grammar_llama_3_x(&g, true); break;
            case COMMON_CHAT_FORMAT_DEEPSEEK_R1:                 ok = chat_grammar_deepseek_r1(&g); break;
            case COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2:            ok = chat_grammar_functionary_v3_2(&g); break;
            default:                                             built = false; break;
        }
    }
    char berr[512] = "";
    if (ok && built && !g.oom) {
        out->grammar = common_grammar_builder_build(g.b, berr, sizeof(berr));
        ok = out->grammar != NULL;
    }
    if (g.oom) {
        ok = false;
        snprintf(g.err, sizeof(g.err), "out of memory");
    }
    if (!ok && err && err_size > 0) {
        // the converter's text is "JSON schema conversion failed:\n<reasons>": one line is enough here
        for (char * p = berr; *p; p++) {
            if (*p == '\n') {
                *p = ' ';
            }
        }
        snprintf(err, err_size, "%s", g.err[0] ? g.err : berr[0] ? berr : "out of memory");
    }
    if (!ok || !built) {
        common_chat_grammar_free(out);
    }
    for (size_t i = 0; i < g.n_tmp; i++) {
        free(g.tmp[i]);
    }
    free(g.tmp);
    json_decref(g.empty);
    common_grammar_builder_free(g.b);
    return ok;
}
