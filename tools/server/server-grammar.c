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
        const json_t * fmt = object_or_empty(body, "response_format", empty);
        const json_t * tj = json_object_get(fmt, "type");
        const char * type = json_is_string(tj) ? json_string_value(tj) : "";
        if (strcmp(type, "json_object") == 0) {
            schema = object_or_empty(fmt, "schema", empty);
        } else if (strcmp(type, "json_schema") == 0) {
            schema = object_or_empty(object_or_empty(fmt, "json_schema", empty), "schema", empty);
        } else if (*type && strcmp(type, "text") != 0) {
            *ok = false;
            snprintf(err->msg, sizeof(err->msg),
                     "response_format type must be one of \"text\" or \"json_object\", but got: %.160s", type);
            json_decref(empty);
            return NULL;
        }
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
