// The scanning helpers of the chat-output parser (chat-parse-impl.h): literals found with partial-text awareness,
// thinking blocks, and tool calls written as JSON, read without building the JSON (so that a call cut off by the
// end of a partial text still shows its name and the arguments so far).
#include "chat-parse-impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void chat_parser_add_content(struct chat_parser * p, const char * d, size_t n) {
    common_sb_addn(&p->content, d, n);
}

void chat_parser_add_rest(struct chat_parser * p) {
    chat_parser_add_content(p, p->in + p->pos, p->n - p->pos);
    p->pos = p->n;
}

void chat_parser_skip_spaces(struct chat_parser * p) {
    while (p->pos < p->n && chat_json_is_ws(p->in[p->pos])) {
        p->pos++;
    }
}

bool chat_parser_starts_at(const struct chat_parser * p, size_t at, const char * lit) {
    const size_t l = strlen(lit);
    return at <= p->n && p->n - at >= l && memcmp(p->in + at, lit, l) == 0;
}

// the text from `at` to the end is a proper, non-empty beginning of lit
bool chat_parser_prefix_at_end(const struct chat_parser * p, size_t at, const char * lit) {
    const size_t have = p->n - at;
    return have > 0 && have < strlen(lit) && memcmp(p->in + at, lit, have) == 0;
}

bool chat_parser_try_consume(struct chat_parser * p, const char * lit) {
    if (!chat_parser_starts_at(p, p->pos, lit)) {
        return false;
    }
    p->pos += strlen(lit);
    return true;
}

// Finds the earliest of lits[] from pos: 1 with *at / *which set; 2 (partial texts only) when the text ends with
// the beginning of one of them, *at its start; 0 when none.
int chat_parser_find_any(const struct chat_parser * p, const char * const * lits, size_t n_lits, size_t * at,
                         size_t * which) {
    size_t best = SIZE_MAX;
    for (size_t k = 0; k < n_lits; k++) {
        const size_t l = strlen(lits[k]);
        for (size_t i = p->pos; i + l <= p->n && i < best; i++) {
            if (p->in[i] == lits[k][0] && memcmp(p->in + i, lits[k], l) == 0) {
                best = i;
                *which = k;
                break;
            }
        }
    }
    if (best != SIZE_MAX) {
        *at = best;
        return 1;
    }
    if (!p->partial) {
        return 0;
    }
    for (size_t i = p->pos; i < p->n; i++) {
        for (size_t k = 0; k < n_lits; k++) {
            if (chat_parser_prefix_at_end(p, i, lits[k])) {
                *at = i;
                *which = k;
                return 2;
            }
        }
    }
    return 0;
}

int chat_parser_find_lit(const struct chat_parser * p, const char * lit, size_t * at) {
    size_t which;
    return chat_parser_find_any(p, &lit, 1, at, &which);
}

void chat_parser_add_tool_call(struct chat_parser * p, const char * name, const char * id, const char * args) {
    if (p->n_calls == p->cap_calls) {
        const size_t nc = p->cap_calls ? p->cap_calls * 2 : 4;
        struct common_chat_tool_call * v = realloc(p->calls, nc * sizeof(*v));
        if (!v) {
            p->oom = true;
            return;
        }
        p->calls = v;
        p->cap_calls = nc;
    }
    struct common_chat_tool_call * tc = &p->calls[p->n_calls];
    tc->name = strdup(name);
    tc->id = strdup(id ? id : "");
    tc->arguments = strdup(args ? args : "");
    if (!tc->name || !tc->id || !tc->arguments) {
        chat_parser_tool_call_free(tc);
        p->oom = true;
        return;
    }
    p->n_calls++;
}

//
// reasoning (llama.cpp's chat_parser_try_reasoning)
//

static void handle_reasoning(struct chat_parser * p, size_t from, size_t to, bool closed, const char * open,
                             const char * close) {
    while (from < to && chat_json_is_ws(p->in[from])) {
        from++;
    }
    while (to > from && chat_json_is_ws(p->in[to - 1])) {
        to--;
    }
    if (from == to) {
        return;
    }
    if (p->syn->reasoning_in_content) {
        // llama.cpp writes <think> tags for the deepseek format and the model's own tags otherwise
        const bool deepseek = p->syn->reasoning_format == COMMON_REASONING_FORMAT_DEEPSEEK;
        common_sb_add(&p->content, deepseek ? "<think>" : open);
        chat_parser_add_content(p, p->in + from, to - from);
        if (closed) {
            common_sb_add(&p->content, deepseek ? "</think>" : close);
        }
    } else {
        common_sb_addn(&p->reasoning, p->in + from, to - from);
    }
}

// true when a thinking block was taken (or the text may still become one: partial text that is the opening tag's
// beginning); *stop set in that case
bool chat_parser_try_reasoning(struct chat_parser * p, const char * open, const char * close, bool * stop) {
    *stop = false;
    if (p->syn->reasoning_format == COMMON_REASONING_FORMAT_NONE) {
        return false;
    }
    if (!p->syn->thinking_forced_open && !chat_parser_try_consume(p, open)) {
        if (p->partial && chat_parser_prefix_at_end(p, p->pos, open)) {
            *stop = true;  // "<thi": hold it back rather than show it as content
            return true;
        }
        return false;
    }
    size_t at;
    const int r = chat_parser_find_lit(p, close, &at);
    if (r == 1) {
        handle_reasoning(p, p->pos, at, true, open, close);
        p->pos = at + strlen(close);
        chat_parser_skip_spaces(p);
        return true;
    }
    const size_t end = r == 2 ? at : p->n;
    handle_reasoning(p, p->pos, end, !p->partial, open, close);
    p->pos = p->n;
    return true;
}

//
// JSON tool calls
//

// one tool-call object as generated, scanned without building it: the keys llama.cpp reads, the arguments' extent
struct jcall {
    char * name;            // NULL until the name string is complete
    char * id;
    size_t args_from, args_to;
    bool   has_args, args_complete;
    size_t end;             // after the closing brace
};

static void jcall_free(struct jcall * c) {
    free(c->name);
    free(c->id);
    memset(c, 0, sizeof(*c));
}

bool chat_parser_key_is(const struct common_sb * k, const char * name) {
    return k->s && strcmp(k->s, name) == 0;
}

// Scans the object at in[i] (whitespace skipped) for name/args/id keys. Returns 1 complete (c->end set), 2 the text
// ends inside it, 0 not an object / malformed.
static int scan_call(struct chat_parser * p, size_t i, const char * name_key, const char * args_key,
                     const char * id_key, struct jcall * c) {
    const char * s = p->in;
    const size_t n = p->n;
    memset(c, 0, sizeof(*c));
    while (i < n && chat_json_is_ws(s[i])) {
        i++;
    }
    if (i >= n) {
        return 2;
    }
    if (s[i] != '{') {
        return 0;
    }
    i++;
    bool first = true;
    for (;;) {
        while (i < n && chat_json_is_ws(s[i])) {
            i++;
        }
        if (i >= n) {
            return 2;
        }
        if (first && s[i] == '}') {
            c->end = i + 1;
            return 1;
        }
        if (s[i] != '"') {
            return 0;
        }
        struct common_sb key = { 0 };
        const bool key_done = chat_json_decode_string(s, n, i, &key);
        const size_t kend = chat_json_scan(s, n, i);
        if (!key_done || kend >= CHAT_JSON_INVALID) {
            free(key.s);
            return kend == CHAT_JSON_INVALID ? 0 : 2;
        }
        i = kend;
        while (i < n && chat_json_is_ws(s[i])) {
            i++;
        }
        if (i >= n || s[i] != ':') {
            free(key.s);
            return i >= n ? 2 : 0;
        }
        i++;
        while (i < n && chat_json_is_ws(s[i])) {
            i++;
        }
        const size_t v = i;
        const size_t vend = i < n ? chat_json_scan(s, n, i) : CHAT_JSON_INCOMPLETE;
        const bool is_name = chat_parser_key_is(&key, name_key), is_id = id_key && chat_parser_key_is(&key, id_key);
        const bool is_args = chat_parser_key_is(&key, args_key);
        free(key.s);
        if (vend == CHAT_JSON_INVALID) {
            return 0;
        }
        if ((is_name || is_id) && vend != CHAT_JSON_INCOMPLETE && s[v] == '"') {
            struct common_sb val = { 0 };
            chat_json_decode_string(s, n, v, &val);
            char * str = common_sb_take(&val);
            if (!str) {
                p->oom = true;
                return 0;
            }
            char ** slot = is_name ? &c->name : &c->id;
            free(*slot);
            *slot = str;
        }
        if (is_args) {
            c->has_args = true;
            c->args_from = v;
            c->args_to = vend == CHAT_JSON_INCOMPLETE ? n : vend;
            c->args_complete = vend != CHAT_JSON_INCOMPLETE;
        }
        if (vend == CHAT_JSON_INCOMPLETE) {
            return 2;
        }
        i = vend;
        while (i < n && chat_json_is_ws(s[i])) {
            i++;
        }
        if (i >= n) {
            return 2;
        }
        if (s[i] == '}') {
            c->end = i + 1;
            return 1;
        }
        if (s[i] != ',') {
            return 0;
        }
        i++;
        first = false;
    }
}

// the arguments text llama.cpp reports: a string value as its text (only once complete), anything else as JSON
// without insignificant whitespace (so far, when the text ends inside it). string_as_json: the value is the whole
// arguments (llama.cpp dumps it), so a string stays JSON text too ("\"x\"", never the bare x, which is no JSON)
static char * args_text(struct chat_parser * p, const char * s, size_t from, size_t to, bool complete,
                        bool string_as_json) {
    struct common_sb b = { 0 };
    while (from < to && chat_json_is_ws(s[from])) {
        from++;
    }
    if (from < to && s[from] == '"' && !string_as_json) {
        if (complete) {
            chat_json_decode_string(s, to, from, &b);
        }
    } else {
        chat_json_compact(s, from, to, !complete, &b);
    }
    char * r = common_sb_take(&b);
    if (!r) {
        p->oom = true;
    }
    return r;
}

// adds the scanned call when it has a name (llama.cpp's chat_parser_add_tool_call); false when it has none
static bool add_jcall(struct chat_parser * p, const struct jcall * c) {
    if (!c->name || !c->name[0]) {
        return false;
    }
    char * args = c->has_args ? args_text(p, p->in, c->args_from, c->args_to, c->args_complete, false) : strdup("");
    if (!args) {
        p->oom = true;
        return false;
    }
    chat_parser_add_tool_call(p, c->name, c->id, args);
    free(args);
    return true;
}

// a call object at pos with the given keys; on success pos moves past it
int chat_parser_consume_call(struct chat_parser * p, const char * name_key, const char * args_key,
                             const char * id_key) {
    struct jcall c;
    const int r = scan_call(p, p->pos, name_key, args_key, id_key, &c);
    if (r == 0) {
        jcall_free(&c);
        return CHAT_PARSE_STOP;
    }
    const bool named = add_jcall(p, &c);
    if (r == 2 || !named) {
        jcall_free(&c);
        return CHAT_PARSE_STOP;
    }
    p->pos = c.end;
    jcall_free(&c);
    return CHAT_PARSE_OK;
}

// a JSON array of call objects at pos (Mistral Nemo, Command R7B, generic's tool_calls)
int chat_parser_consume_call_array(struct chat_parser * p, const char * name_key, const char * args_key,
                                   const char * id_key) {
    chat_parser_skip_spaces(p);
    if (p->pos >= p->n || p->in[p->pos] != '[') {
        return CHAT_PARSE_STOP;
    }
    p->pos++;
    chat_parser_skip_spaces(p);
    if (p->pos < p->n && p->in[p->pos] == ']') {
        p->pos++;
        return CHAT_PARSE_OK;
    }
    for (;;) {
        if (chat_parser_consume_call(p, name_key, args_key, id_key) != CHAT_PARSE_OK) {
            return CHAT_PARSE_STOP;
        }
        chat_parser_skip_spaces(p);
        if (p->pos >= p->n) {
            return CHAT_PARSE_STOP;
        }
        if (p->in[p->pos] == ']') {
            p->pos++;
            return CHAT_PARSE_OK;
        }
        if (p->in[p->pos] != ',') {
            return CHAT_PARSE_STOP;
        }
        p->pos++;
        chat_parser_skip_spaces(p);
    }
}

// the JSON value at pos as arguments (the whole value): adds the call; CHAT_PARSE_STOP while incomplete
int chat_parser_consume_named_args(struct chat_parser * p, const char * name, size_t len, bool * invalid) {
    *invalid = false;
    char * n = strndup(name, len);
    if (!n) {
        p->oom = true;
        return CHAT_PARSE_STOP;
    }
    const int r = chat_parser_consume_args(p, n, invalid);
    free(n);
    return r;
}

int chat_parser_think_then_tools(struct chat_parser * p, const char * open, const char * close) {
    bool stop;
    chat_parser_try_reasoning(p, open, close, &stop);
    if (stop) {
        return CHAT_PARSE_STOP;
    }
    if (!p->syn->parse_tool_calls) {
        chat_parser_add_rest(p);
        return CHAT_PARSE_OK;
    }
    return CHAT_PARSE_TOOLS;
}

int chat_parser_consume_args(struct chat_parser * p, const char * name, bool * invalid) {
    *invalid = false;
    const size_t end = chat_json_scan(p->in, p->n, p->pos);
    if (end == CHAT_JSON_INVALID) {
        *invalid = true;
        return CHAT_PARSE_STOP;
    }
    const bool complete = end != CHAT_JSON_INCOMPLETE;
    char * args = args_text(p, p->in, p->pos, complete ? end : p->n, complete, true);
    if (!args) {
        return CHAT_PARSE_STOP;
    }
    chat_parser_add_tool_call(p, name, "", args);
    free(args);
    if (!complete) {
        return CHAT_PARSE_STOP;
    }
    p->pos = end;
    return CHAT_PARSE_OK;
}

