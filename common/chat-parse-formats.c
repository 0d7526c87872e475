// The chat-output formats written in JSON or tags around JSON: content-only, llama.cpp's generic protocol,
// Hermes 2 Pro (also Qwen 2.5 / Qwen 3), Mistral Nemo and Llama 3.x.
#include "chat-parse-impl.h"

#include <jansson.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int chat_parser_content_only(struct chat_parser * p) {
    bool stop;
    chat_parser_try_reasoning(p, "<think>", "</think>", &stop);
    if (stop) {
        return CHAT_PARSE_STOP;
    }
    chat_parser_add_rest(p);
    return CHAT_PARSE_OK;
}

// llama.cpp's {"tool_call": ...} / {"tool_calls": [...]} / {"response": ...} protocol, the whole output one object
int chat_parser_generic(struct chat_parser * p) {
    if (!p->syn->parse_tool_calls) {
        chat_parser_add_rest(p);
        return CHAT_PARSE_OK;
    }
    const char * s = p->in;
    const size_t n = p->n;
    chat_parser_skip_spaces(p);
    if (p->pos >= n) {
        return CHAT_PARSE_STOP;
    }
    if (s[p->pos] != '{') {
        return CHAT_PARSE_STOP;
    }
    p->pos++;
    bool found = false;
    for (;;) {
        chat_parser_skip_spaces(p);
        if (p->pos >= n) {
            return CHAT_PARSE_STOP;
        }
        if (s[p->pos] == '}') {
            p->pos++;
            break;
        }
        if (s[p->pos] != '"') {
            return CHAT_PARSE_STOP;
        }
        struct common_sb key = { 0 };
        chat_json_decode_string(s, n, p->pos, &key);
        const size_t kend = chat_json_scan(s, n, p->pos);
        if (kend >= CHAT_JSON_INVALID) {
            free(key.s);
            return CHAT_PARSE_STOP;
        }
        p->pos = kend;
        chat_parser_skip_spaces(p);
        if (p->pos >= n || s[p->pos] != ':') {
            free(key.s);
            return CHAT_PARSE_STOP;
        }
        p->pos++;
        chat_parser_skip_spaces(p);
        const bool k_calls = chat_parser_key_is(&key, "tool_calls"), k_call = chat_parser_key_is(&key, "tool_call");
        const bool k_resp = chat_parser_key_is(&key, "response");
        free(key.s);
        if (k_calls || k_call) {
            const int r = k_calls ? chat_parser_consume_call_array(p, "name", "arguments", "id")
                                  : chat_parser_consume_call(p, "name", "arguments", "id");
            if (r != CHAT_PARSE_OK) {
                return CHAT_PARSE_STOP;
            }
            found = true;
        } else {
            const size_t vend = p->pos < n ? chat_json_scan(s, n, p->pos) : CHAT_JSON_INCOMPLETE;
            if (vend == CHAT_JSON_INVALID) {
                return CHAT_PARSE_STOP;
            }
            if (k_resp && p->pos < n && s[p->pos] == '"') {
                // the reply shows while it is generated
                struct common_sb text = { 0 };
                chat_json_decode_string(s, n, p->pos, &text);
                chat_parser_add_content(p, text.s ? text.s : "", text.n);
                p->oom |= text.oom;
                free(text.s);
                found = true;
            } else if (k_resp && vend != CHAT_JSON_INCOMPLETE) {
                // a non-string reply: llama.cpp shows it as JSON indented by 2
                json_t * v = json_loadb(s + p->pos, vend - p->pos, JSON_DECODE_ANY, NULL);
                char * d = v ? json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) : NULL;
                if (d) {
                    common_sb_add(&p->content, d);
                }
                free(d);
                json_decref(v);
                found = true;
            }
            if (vend == CHAT_JSON_INCOMPLETE) {
                return CHAT_PARSE_STOP;
            }
            p->pos = vend;
        }
        chat_parser_skip_spaces(p);
        if (p->pos >= n) {
            return CHAT_PARSE_STOP;
        }
        if (s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (s[p->pos] == '}') {
            p->pos++;
            break;
        }
        return CHAT_PARSE_STOP;
    }
    if (!found) {
        return CHAT_PARSE_STOP;  // "Expected 'tool_call', 'tool_calls' or 'response' in JSON"
    }
    chat_parser_skip_spaces(p);
    return p->pos < n ? CHAT_PARSE_STOP : CHAT_PARSE_OK;
}

// Hermes 2 Pro / Qwen 2.5 / Qwen 3: <tool_call>{"name": ..., "arguments": ...}</tool_call>, also a bare
// {"name": ...} object, other wrapper tags, ```json fences, <function=name>{...}</function> and
// <function name="name">{...}</function>
static const char * const HERMES_TAGS[] = { "<tool_call>", "<function_call>", "<tool>", "<tools>", "<response>",
                                            "<json>", "<xml>", "<JSON>" };
#define N_HERMES_TAGS (sizeof(HERMES_TAGS) / sizeof(HERMES_TAGS[0]))

struct hermes_open {
    size_t start;      // where the match begins
    size_t json_at;    // named call: the '{'
    int    tag;        // index in HERMES_TAGS, -1 none
    bool   fence;      // opened with ```
    size_t name_from, name_to;  // <function=...>: the name
    bool   function;
};

// does an opening match begin at i? 1 yes, 2 the text ends inside one (partial), 0 no
static int hermes_match_at(const struct chat_parser * p, size_t i, struct hermes_open * m) {
    const char * s = p->in;
    const size_t n = p->n;
    memset(m, 0, sizeof(*m));
    m->start = i;
    m->tag = -1;
    size_t j = i;
    if (s[i] == '<') {
        static const char * const fn[] = { "<function=", "<function name=\"" };
        for (int k = 0; k < 2; k++) {
            if (chat_parser_prefix_at_end(p, i, fn[k])) {
                return 2;
            }
            if (chat_parser_starts_at(p, i, fn[k])) {
                const size_t from = i + strlen(fn[k]);
                const char endc = k == 0 ? '>' : '"';
                size_t e = from;
                while (e < n && s[e] != endc) {
                    e++;
                }
                if (e >= n || (k == 1 && e + 1 >= n)) {
                    return 2;
                }
                if (e == from || (k == 1 && s[e + 1] != '>')) {
                    return 0;
                }
                m->function = true;
                m->name_from = from;
                m->name_to = e;
                m->json_at = e + (k == 0 ? 1 : 2);
                return 1;
            }
        }
    }
    if (s[j] == '`') {
        if (chat_parser_prefix_at_end(p, j, "```")) {
            return 2;
        }
        if (!chat_parser_starts_at(p, j, "```")) {
            return 0;
        }
        j += 3;
        if (chat_parser_prefix_at_end(p, j, "json") || chat_parser_prefix_at_end(p, j, "xml")) {
            return 2;
        }
        if (chat_parser_starts_at(p, j, "json")) {
            j += 4;
        } else if (chat_parser_starts_at(p, j, "xml")) {
            j += 3;
        }
        if (j >= n) {
            return 2;
        }
        if (s[j] != '\n') {
            return 0;
        }
        j++;
        while (j < n && chat_json_is_ws(s[j])) {
            j++;
        }
        m->fence = true;
        if (j >= n) {
            return 2;
        }
    }
    if (s[j] == '<') {
        for (size_t k = 0; k < N_HERMES_TAGS; k++) {
            if (chat_parser_starts_at(p, j, HERMES_TAGS[k])) {
                m->tag = (int) k;
                j += strlen(HERMES_TAGS[k]);
                break;
            }
        }
        if (m->tag < 0) {
            for (size_t k = 0; k < N_HERMES_TAGS; k++) {
                if (chat_parser_prefix_at_end(p, j, HERMES_TAGS[k])) {
                    return 2;
                }
            }
            return 0;
        }
    }
    while (j < n && chat_json_is_ws(s[j])) {
        j++;
    }
    if (j >= n) {
        return 2;
    }
    if (s[j] != '{') {
        return 0;
    }
    m->json_at = j;
    j++;
    while (j < n && chat_json_is_ws(s[j])) {
        j++;
    }
    if (chat_parser_prefix_at_end(p, j, "\"name\"") || j >= n) {
        return 2;
    }
    return chat_parser_starts_at(p, j, "\"name\"") ? 1 : 0;
}

// the earliest opening match from pos: 1 / 2 (partial, only for partial texts) / 0
static int hermes_find(const struct chat_parser * p, struct hermes_open * m) {
    int partial_at = -1;
    struct hermes_open pm = { 0 };
    for (size_t i = p->pos; i < p->n; i++) {
        const char c = p->in[i];
        if (c != '<' && c != '`' && c != '{') {
            continue;
        }
        const int r = hermes_match_at(p, i, m);
        if (r != 0 && c == '{') {
            // a bare object: llama.cpp's pattern starts with \s*, so the match takes in the whitespace before it
            while (m->start > p->pos && chat_json_is_ws(p->in[m->start - 1])) {
                m->start--;
            }
        }
        if (r == 1) {
            return 1;
        }
        if (r == 2 && partial_at < 0) {
            partial_at = 0;
            pm = *m;
        }
    }
    if (!p->partial) {
        return 0;
    }
    // whitespace at the very end may still turn out to precede a {"name": ...}
    size_t ws = p->n;
    while (ws > p->pos && chat_json_is_ws(p->in[ws - 1])) {
        ws--;
    }
    if (ws < p->n && (partial_at < 0 || ws < pm.start)) {
        memset(&pm, 0, sizeof(pm));
        pm.start = ws;
        pm.tag = -1;
        partial_at = 0;
    }
    if (partial_at >= 0) {
        *m = pm;
        return 2;
    }
    return 0;
}

int chat_parser_hermes_2_pro(struct chat_parser * p) {
    const int t = chat_parser_think_then_tools(p, "<think>", "</think>");
    if (t != CHAT_PARSE_TOOLS) {
        return t;
    }
    struct hermes_open m;
    int r;
    while ((r = hermes_find(p, &m)) != 0) {
        chat_parser_add_content(p, p->in + p->pos, m.start - p->pos);
        p->pos = m.start;
        if (r == 2) {
            return CHAT_PARSE_STOP;
        }
        p->pos = m.json_at;
        if (m.function) {
            bool invalid;
            const int ar = chat_parser_consume_named_args(p, p->in + m.name_from, m.name_to - m.name_from, &invalid);
            if (invalid) {
                continue;  // llama.cpp moves on past the tag
            }
            if (ar != CHAT_PARSE_OK) {
                return CHAT_PARSE_STOP;
            }
            chat_parser_skip_spaces(p);
            if (!chat_parser_try_consume(p, "</function>")) {
                return CHAT_PARSE_STOP;
            }
        } else {
            if (chat_parser_consume_call(p, "name", "arguments", "id") != CHAT_PARSE_OK) {
                return CHAT_PARSE_STOP;
            }
            chat_parser_skip_spaces(p);
            if (m.tag >= 0) {
                char close[32];
                snprintf(close, sizeof(close), "</%s", HERMES_TAGS[m.tag] + 1);
                if (!chat_parser_try_consume(p, close)) {
                    return CHAT_PARSE_STOP;
                }
            }
        }
        chat_parser_skip_spaces(p);
        if (m.fence) {
            if (!chat_parser_try_consume(p, "```")) {
                return CHAT_PARSE_STOP;
            }
            chat_parser_skip_spaces(p);
        }
    }
    chat_parser_add_rest(p);
    return CHAT_PARSE_OK;
}

// [TOOL_CALLS][{"name": ..., "arguments": {...}, "id": "..."}, ...]
int chat_parser_mistral_nemo(struct chat_parser * p) {
    if (!p->syn->parse_tool_calls) {
        chat_parser_add_rest(p);
        return CHAT_PARSE_OK;
    }
    size_t at;
    const int r = chat_parser_find_lit(p, "[TOOL_CALLS]", &at);
    if (r == 0) {
        chat_parser_add_rest(p);
        return CHAT_PARSE_OK;
    }
    chat_parser_add_content(p, p->in + p->pos, at - p->pos);
    if (r == 2) {
        return CHAT_PARSE_STOP;
    }
    p->pos = at + strlen("[TOOL_CALLS]");
    if (chat_parser_consume_call_array(p, "name", "arguments", "id") != CHAT_PARSE_OK) {
        return CHAT_PARSE_STOP;
    }
    chat_parser_skip_spaces(p);
    chat_parser_add_rest(p);
    return CHAT_PARSE_OK;
}

bool chat_parser_is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// <|python_tag|>name.call(arg=<json>, ...): the whole call must be there (nothing is shown before)
static int parse_llama_builtin_call(struct chat_parser * p) {
    const char * s = p->in;
    chat_parser_skip_spaces(p);
    const size_t nf = p->pos;
    while (p->pos < p->n && chat_parser_is_word(s[p->pos])) {
        p->pos++;
    }
    const size_t nt = p->pos;
    chat_parser_skip_spaces(p);
    if (nt == nf || !chat_parser_try_consume(p, ".")) {
        return CHAT_PARSE_STOP;
    }
    chat_parser_skip_spaces(p);
    if (!chat_parser_try_consume(p, "call(")) {
        return CHAT_PARSE_STOP;
    }
    json_t * args = json_object();
    for (;;) {
        chat_parser_skip_spaces(p);
        const size_t af = p->pos;
        while (p->pos < p->n && chat_parser_is_word(s[p->pos])) {
            p->pos++;
        }
        const size_t at = p->pos;
        if (at == af) {
            break;
        }
        chat_parser_skip_spaces(p);
        if (!chat_parser_try_consume(p, "=")) {
            json_decref(args);
            return CHAT_PARSE_STOP;
        }
        chat_parser_skip_spaces(p);
        const size_t vend = chat_json_scan(s, p->n, p->pos);
        if (vend >= CHAT_JSON_INVALID) {
            json_decref(args);
            return CHAT_PARSE_STOP;
        }
        json_t * v = json_loadb(s + p->pos, vend - p->pos, JSON_DECODE_ANY, NULL);
        char * key = strndup(s + af, at - af);
        if (!v || !key) {
            free(key);
            json_decref(v);
            json_decref(args);
            return CHAT_PARSE_STOP;
        }
        json_object_set_new(args, key, v);
        free(key);
        p->pos = vend;
        chat_parser_skip_spaces(p);
        if (!chat_parser_try_consume(p, ",")) {
            break;
        }
    }
    if (!chat_parser_try_consume(p, ")")) {
        json_decref(args);
        return CHAT_PARSE_STOP;
    }
    chat_parser_skip_spaces(p);
    char * name = strndup(s + nf, nt - nf);
    char * d = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(args);
    if (!name || !d) {
        free(name);
        free(d);
        p->oom = true;
        return CHAT_PARSE_STOP;
    }
    chat_parser_add_tool_call(p, name, "", d);
    free(name);
    free(d);
    return CHAT_PARSE_OK;
}

// Llama 3.x: one {"name": "...", "parameters": {...}} object at the very start (optionally "type": "function"
// first); with builtin tools also <|python_tag|>tool.call(...) anywhere
int chat_parser_llama_3_x(struct chat_parser * p, bool builtin) {
    if (!p->syn->parse_tool_calls) {
        chat_parser_add_rest(p);
        return CHAT_PARSE_OK;
    }
    if (builtin) {
        size_t at;
        const int r = chat_parser_find_lit(p, "<|python_tag|>", &at);
        if (r) {
            chat_parser_add_content(p, p->in + p->pos, at - p->pos);
            if (r == 2) {
                return CHAT_PARSE_STOP;
            }
            p->pos = at + strlen("<|python_tag|>");
            return parse_llama_builtin_call(p);
        }
    }
    // the opening, matched piece by piece: a text that ends inside it waits
    static const char * const pieces[] = { "{", "\"name\"", ":", "\"" };
    const size_t start = p->pos;
    chat_parser_skip_spaces(p);
    for (size_t k = 0; k < 4; k++) {
        if (k == 1) {
            // optional "type": "function",
            static const char * const tp[] = { "\"type\"", ":", "\"function\"", "," };
            const size_t save = p->pos;
            bool ok = true;
            for (size_t t = 0; t < 4 && ok; t++) {
                if (p->pos >= p->n || chat_parser_prefix_at_end(p, p->pos, tp[t])) {
                    return p->partial ? CHAT_PARSE_STOP : (p->pos = start, chat_parser_add_rest(p), CHAT_PARSE_OK);
                }
                ok = chat_parser_try_consume(p, tp[t]);
                chat_parser_skip_spaces(p);
            }
            if (!ok) {
                p->pos = save;
            }
        }
        if (p->pos >= p->n || chat_parser_prefix_at_end(p, p->pos, pieces[k])) {
            if (p->partial) {
                return CHAT_PARSE_STOP;
            }
            p->pos = start;
            chat_parser_add_rest(p);
            return CHAT_PARSE_OK;
        }
        if (!chat_parser_try_consume(p, pieces[k])) {
            p->pos = start;
            chat_parser_add_rest(p);
            return CHAT_PARSE_OK;
        }
        if (k < 3) {
            chat_parser_skip_spaces(p);
        }
    }
    const size_t nf = p->pos;
    while (p->pos < p->n && p->in[p->pos] != '"') {
        p->pos++;
    }
    const size_t nt = p->pos;
    if (p->pos >= p->n) {
        if (p->partial) {
            return CHAT_PARSE_STOP;
        }
        p->pos = start;
        chat_parser_add_rest(p);
        return CHAT_PARSE_OK;
    }
    p->pos++;
    static const char * const tail[] = { ",", "\"parameters\"", ":" };
    for (size_t k = 0; k < 3; k++) {
        chat_parser_skip_spaces(p);
        if (p->pos >= p->n || chat_parser_prefix_at_end(p, p->pos, tail[k])) {
            if (p->partial) {
                return CHAT_PARSE_STOP;
            }
            p->pos = start;
            chat_parser_add_rest(p);
            return CHAT_PARSE_OK;
        }
        if (!chat_parser_try_consume(p, tail[k]) || nt == nf) {
            p->pos = start;
            chat_parser_add_rest(p);
            return CHAT_PARSE_OK;
        }
    }
    chat_parser_skip_spaces(p);
    bool invalid;
    const int r = chat_parser_consume_named_args(p, p->in + nf, nt - nf, &invalid);
    if (invalid) {
        chat_parser_add_rest(p);  // llama.cpp keeps what follows the opening as content
        return CHAT_PARSE_OK;
    }
    if (r != CHAT_PARSE_OK) {
        return CHAT_PARSE_STOP;
    }
    chat_parser_skip_spaces(p);
    if (!chat_parser_try_consume(p, "}")) {
        return CHAT_PARSE_STOP;
    }
    chat_parser_skip_spaces(p);
    chat_parser_add_rest(p);
    return CHAT_PARSE_OK;
}

