// The request's grammar, as llama.cpp's server reads it: "grammar" (GBNF text) or "json_schema" (converted with
// common/json-schema-to-grammar) on the completion endpoints, and on /v1/chat/completions also OpenAI's
// "response_format" ({"type":"json_object"[,"schema":...]} or {"type":"json_schema","json_schema":{"schema":...}}).
// Without any of them the command line's --grammar / -j applies.
#include "server-context.h"

#include "json-schema-to-grammar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char * dup_or_null(const char * s) {
    return (s && *s) ? strdup(s) : NULL;
}

// llama.cpp's json_value(obj, key, json::object()): a missing, null or non-object value reads as {}
static const json_t * object_or_empty(const json_t * obj, const char * key, json_t * empty) {
    const json_t * v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return json_is_object(v) ? v : empty;
}

static char * convert(const json_t * schema, const char * field, bool * ok, struct sj_err * err) {
    char msg[sizeof(err->msg)];
    char * g = json_schema_to_grammar(schema, msg, sizeof(msg));
    if (!g) {
        *ok = false;
        if (field) {
            snprintf(err->msg, sizeof(err->msg), "\"%.20s\": %.220s", field, msg);
        } else {
            snprintf(err->msg, sizeof(err->msg), "%.250s", msg);
        }
    }
    return g;
}

const json_t * server_response_schema(const json_t * body, json_t * empty) {
    const json_t * rf = json_object_get(body, "response_format");
    if (rf) {
        const json_t * fmt = object_or_empty(body, "response_format", empty);
        const char * type = json_string_value(json_object_get(fmt, "type"));
        if (type && strcmp(type, "json_object") == 0) {
            return object_or_empty(fmt, "schema", empty);
        }
        if (type && strcmp(type, "json_schema") == 0) {
            return object_or_empty(object_or_empty(fmt, "json_schema", empty), "schema", empty);
        }
    }
    const json_t * js = json_object_get(body, "json_schema");
    return json_is_null(js) ? NULL : js;
}

// /v1/chat/completions (llama.cpp's oaicompat_chat_params_parse + the chat template's grammar choice)
static char * chat_grammar(const struct server_context * sc, const json_t * body, bool * ok, struct sj_err * err) {
    const json_t * schema = json_object_get(body, "json_schema");
    if (json_is_null(schema)) {
        schema = NULL;
    }
    const json_t * gj = json_object_get(body, "grammar");
    const char * grammar = json_is_string(gj) ? json_string_value(gj) : "";
    if (schema && *grammar) {
        *ok = false;
        snprintf(err->msg, sizeof(err->msg), "Cannot use both json_schema and grammar");
        return NULL;
    }
    json_t * empty = json_object();
    if (!empty) {
        *ok = false;
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return NULL;
    }
    const json_t * rf = json_object_get(body, "response_format");
    if (rf) {
        const json_t * tj = json_object_get(object_or_empty(body, "response_format", empty), "type");
        const char * type = json_is_string(tj) ? json_string_value(tj) : "";
        if (*type && strcmp(type, "text") != 0 && strcmp(type, "json_object") != 0 && strcmp(type, "json_schema") != 0) {
            *ok = false;
            snprintf(err->msg, sizeof(err->msg),
                     "response_format type must be one of \"text\" or \"json_object\", but got: %.160s", type);
            json_decref(empty);
            return NULL;
        }
        schema = server_response_schema(body, empty);
    }
    char * g;
    if (schema) {
        g = convert(schema, NULL, ok, err);
    } else if (gj) {
        g = dup_or_null(grammar);
    } else {
        g = dup_or_null(sc->params.sampling.grammar);
    }
    json_decref(empty);
    return g;
}

char * server_read_grammar(const struct server_context * sc, const json_t * body, int mode, bool * ok,
                           struct sj_err * err) {
    *ok = true;
    // the grammar the chat format imposes (generic tool calls), set after the template was applied
    const json_t * cg = json_object_get(body, "__chat_grammar");
    if (json_is_string(cg)) {
        return dup_or_null(json_string_value(cg));
    }
    if (mode == COMPL_MODE_OAI_CHAT) {
        return chat_grammar(sc, body, ok, err);
    }
    // llama.cpp's params_from_json_cmpl: json_schema unless a grammar is given too
    const json_t * gj = json_object_get(body, "grammar");
    if (json_object_get(body, "json_schema") && !gj) {
        json_t * empty = json_object();
        if (!empty) {
            *ok = false;
            snprintf(err->msg, sizeof(err->msg), "out of memory");
            return NULL;
        }
        char * g = convert(object_or_empty(body, "json_schema", empty), "json_schema", ok, err);
        json_decref(empty);
        return g;
    }
    // a grammar that is not a string keeps the default, as llama.cpp's json_value
    if (json_is_string(gj)) {
        return dup_or_null(json_string_value(gj));
    }
    return dup_or_null(sc->params.sampling.grammar);
}

bool server_check_grammar(const struct server_context * sc, const char * grammar, struct sj_err * err) {
    if (!grammar || !*grammar) {
        return true;
    }
    struct llama_sampler * s = llama_sampler_init_grammar(sc->vocab, grammar, "root");
    if (!s) {
        snprintf(err->msg, sizeof(err->msg), "%s", SERVER_GRAMMAR_PARSE_ERROR);
        return false;
    }
    llama_sampler_free(s);
    return true;
}

//
// lazy grammars: grammar_lazy, grammar_triggers, preserved_tokens
//

void server_grammar_lazy_free(struct server_grammar_lazy * g) {
    for (size_t i = 0; g->triggers && i < g->n_triggers; i++) {
        free(g->triggers[i].value);
    }
    free(g->triggers);
    free(g->preserved);
    memset(g, 0, sizeof(*g));
}

// the one token text stands for (parse_special, as llama.cpp's common_tokenize(..., true)); LLAMA_TOKEN_NULL when
// it is not exactly one token
static llama_token single_token(const struct server_context * sc, const char * text) {
    llama_token * toks = NULL;
    const int n = server_tokenize_text(sc->vocab, text, strlen(text), false, true, &toks);
    const llama_token t = n == 1 ? toks[0] : LLAMA_TOKEN_NULL;
    free(toks);
    return t;
}

static bool is_preserved(const struct server_grammar_lazy * g, llama_token t) {
    for (size_t i = 0; i < g->n_preserved; i++) {
        if (g->preserved[i] == t) {
            return true;
        }
    }
    return false;
}

// a marker text kept whole: a marker of another model's format that this vocabulary splits is simply not
// preserved (llama.cpp)
static void add_preserved(const struct server_context * sc, struct server_grammar_lazy * g, const char * text) {
    const llama_token t = single_token(sc, text);
    if (t != LLAMA_TOKEN_NULL && !is_preserved(g, t)) {
        g->preserved[g->n_preserved++] = t;
    }
}

// the i-th trigger; token is its id for a token trigger (< 0 when none was given). A word that is one token
// triggers on that token, which must then be kept whole.
static bool add_trigger(const struct server_context * sc, enum common_grammar_trigger_type type, const char * v,
                        json_int_t token, size_t i, struct server_grammar_lazy * g, struct sj_err * err) {
    struct common_grammar_trigger t = { type, NULL, LLAMA_TOKEN_NULL };
    if (t.type == COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN) {
        if (token < 0 || token >= llama_vocab_n_tokens(sc->vocab)) {
            snprintf(err->msg, sizeof(err->msg), "\"grammar_triggers\"[%zu]: a token trigger needs a valid \"token\"",
                     i);
            return false;
        }
        t.token = (llama_token) token;
    } else if (t.type == COMMON_GRAMMAR_TRIGGER_TYPE_WORD) {
        const llama_token one = single_token(sc, v);
        if (one != LLAMA_TOKEN_NULL) {
            if (!is_preserved(g, one)) {
                snprintf(err->msg, sizeof(err->msg), "Grammar trigger word should be marked as preserved token: %.150s",
                         v);
                return false;
            }
            t.type = COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN;
            t.token = one;
        }
    }
    t.value = strdup(v);
    if (!t.value) {
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return false;
    }
    g->triggers[g->n_triggers++] = t;
    return true;
}

// room for n_preserved preserved tokens and n_triggers triggers
static bool lazy_alloc(struct server_grammar_lazy * g, size_t n_preserved, size_t n_triggers, struct sj_err * err) {
    g->preserved = calloc(n_preserved + 1, sizeof(llama_token));
    g->triggers = calloc(n_triggers + 1, sizeof(*g->triggers));
    if (!g->preserved || !g->triggers) {
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return false;
    }
    return true;
}

// llama.cpp's last check, the same for both sources
static bool lazy_finish(struct server_grammar_lazy * g, bool ok, struct sj_err * err) {
    if (ok && g->lazy && g->n_triggers == 0) {
        snprintf(err->msg, sizeof(err->msg), "Error: no triggers set for lazy grammar!");
        ok = false;
    }
    if (!ok) {
        server_grammar_lazy_free(g);
    }
    return ok;
}

static bool read_preserved(const struct server_context * sc, const json_t * list, struct server_grammar_lazy * g,
                           struct sj_err * err) {
    if (!list || json_is_null(list)) {
        return true;
    }
    if (!json_is_array(list)) {
        snprintf(err->msg, sizeof(err->msg), "\"preserved_tokens\" must be an array of strings");
        return false;
    }
    size_t i;
    const json_t * el;
    json_array_foreach(list, i, el) {
        if (!json_is_string(el)) {
            snprintf(err->msg, sizeof(err->msg), "\"preserved_tokens\"[%zu] must be a string", i);
            return false;
        }
        add_preserved(sc, g, json_string_value(el));
    }
    return true;
}

static bool read_trigger(const struct server_context * sc, const json_t * el, size_t i, struct server_grammar_lazy * g,
                         struct sj_err * err) {
    const json_t * type = json_object_get(el, "type");
    const json_t * value = json_object_get(el, "value");
    const json_int_t ty = json_is_integer(type) ? json_integer_value(type) : -1;
    if (!json_is_object(el) || ty < COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN || ty > COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL ||
        !json_is_string(value)) {
        snprintf(err->msg, sizeof(err->msg),
                 "\"grammar_triggers\"[%zu] must be {\"type\": 0-3, \"value\": string[, \"token\": id]}", i);
        return false;
    }
    const json_t * tok = json_object_get(el, "token");
    return add_trigger(sc, (enum common_grammar_trigger_type) ty, json_string_value(value),
                       json_is_integer(tok) ? json_integer_value(tok) : -1, i, g, err);
}

// llama.cpp reads grammar_lazy only where "grammar" (not a converted json_schema) is the grammar
static bool schema_only(const json_t * body, bool chat_grammar) {
    return json_object_get(body, "json_schema") && !json_object_get(body, "grammar") && !chat_grammar;
}

bool server_read_grammar_lazy(const struct server_context * sc, const json_t * body, struct server_grammar_lazy * out,
                              struct sj_err * err) {
    memset(out, 0, sizeof(*out));
    const json_t * lz = json_object_get(body, "grammar_lazy");
    if (lz && !json_is_null(lz) && !json_is_boolean(lz)) {
        snprintf(err->msg, sizeof(err->msg), "\"grammar_lazy\" must be a boolean");
        return false;
    }
    out->lazy = !schema_only(body, false) && json_is_true(lz); // a chat request reads the format's (below)
    const json_t * pt = json_object_get(body, "preserved_tokens");
    const json_t * tr = json_object_get(body, "grammar_triggers");
    bool ok = lazy_alloc(out, json_array_size(pt), json_array_size(tr), err) && read_preserved(sc, pt, out, err);
    if (ok && tr && !json_is_null(tr)) {
        if (!json_is_array(tr)) {
            snprintf(err->msg, sizeof(err->msg), "\"grammar_triggers\" must be an array");
            ok = false;
        } else {
            size_t i;
            const json_t * el;
            json_array_foreach(tr, i, el) {
                if (ok) {
                    ok = read_trigger(sc, el, i, out, err);
                }
            }
        }
    }
    return lazy_finish(out, ok, err);
}

bool server_chat_grammar_lazy(const struct server_context * sc, const json_t * body,
                              const struct common_chat_grammar * g, struct server_grammar_lazy * out,
                              struct sj_err * err) {
    memset(out, 0, sizeof(*out));
    out->lazy = !schema_only(body, g->grammar != NULL) && g->grammar_lazy;
    bool ok = lazy_alloc(out, g->n_preserved_tokens, g->n_grammar_triggers, err);
    for (size_t i = 0; ok && i < g->n_preserved_tokens; i++) {
        add_preserved(sc, out, g->preserved_tokens[i]);
    }
    for (size_t i = 0; ok && i < g->n_grammar_triggers; i++) {
        const struct common_grammar_trigger * t = &g->grammar_triggers[i];
        // the format's triggers are words and patterns, without token ids as llama.cpp's request fields carry them
        if (t->value) {
            ok = add_trigger(sc, t->type, t->value, -1, i, out, err);
        }
    }
    return lazy_finish(out, ok, err);
}

json_t * server_grammar_triggers_json(const struct server_grammar_lazy * g) {
    json_t * a = json_array();
    for (size_t i = 0; a && i < g->n_triggers; i++) {
        const struct common_grammar_trigger * t = &g->triggers[i];
        json_t * o = json_pack("{s:i, s:s}", "type", (int) t->type, "value", t->value ? t->value : "");
        if (o && t->type == COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN) {
            json_object_set_new(o, "token", json_integer(t->token));
        }
        json_array_append_new(a, o);
    }
    return a;
}
