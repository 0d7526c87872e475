// The chat-output formats with their own marker tokens: DeepSeek R1, Command R7B and Functionary v3.2.
#include "chat-parse-impl.h"
#include "chat-markers.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// DeepSeek R1: <think>...</think>, then
// <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>...
// <｜tool▁calls▁end｜>
static const char * const DS_OPENINGS[] = { DS_CALLS_BEGIN, DS_CALLS_ALT1, DS_CALLS_ALT2, DS_CALLS_ALT3, DS_CALLS_ALT4 };

// one function header at i: 1 (name and the json fence follow), 2 the text ends inside it, 0 no
static int ds_function_at(const struct chat_parser * p, size_t i, size_t * name_from, size_t * name_to, size_t * body) {
    size_t j = i;
    if (chat_parser_starts_at(p, j, DS_CALL_BEGIN)) {
        j += strlen(DS_CALL_BEGIN);
    } else if (chat_parser_prefix_at_end(p, j, DS_CALL_BEGIN)) {
        return 2;
    }
    if (chat_parser_prefix_at_end(p, j, DS_FUNCTION) || j >= p->n) {
        return 2;
    }
    if (!chat_parser_starts_at(p, j, DS_FUNCTION)) {
        return 0;
    }
    j += strlen(DS_FUNCTION);
    const size_t nf = j;
    while (j < p->n && p->in[j] != '\n') {
        j++;
    }
    if (j >= p->n) {
        return 2;
    }
    if (j == nf) {
        return 0;
    }
    *name_from = nf;
    *name_to = j;
    j++;
    if (chat_parser_prefix_at_end(p, j, "```json\n") || j >= p->n) {
        return 2;
    }
    if (!chat_parser_starts_at(p, j, "```json\n")) {
        return 0;
    }
    *body = j + strlen("```json\n");
    return 1;
}

int chat_parser_deepseek_r1(struct chat_parser * p) {
    const int t = chat_parser_think_then_tools(p, "<think>", "</think>");
    if (t != CHAT_PARSE_TOOLS) {
        return t;
    }
    size_t at, which;
    int r = chat_parser_find_any(p, DS_OPENINGS, sizeof(DS_OPENINGS) / sizeof(DS_OPENINGS[0]), &at, &which);
    if (r == 0) {
        chat_parser_add_rest(p);
        return CHAT_PARSE_OK;
    }
    chat_parser_add_content(p, p->in + p->pos, at - p->pos);
    if (r == 2) {
        return CHAT_PARSE_STOP;
    }
    p->pos = at + strlen(DS_OPENINGS[which]);
    for (;;) {
        // the next function header (text before it is content, as llama.cpp's regex search adds it)
        size_t nf = 0, nt = 0, body = 0, i;
        int fr = 0;
        for (i = p->pos; i < p->n; i++) {
            fr = ds_function_at(p, i, &nf, &nt, &body);
            if (fr == 1 || (fr == 2 && p->partial)) {
                break;
            }
            fr = 0;
        }
        if (fr == 0) {
            break;
        }
        chat_parser_add_content(p, p->in + p->pos, i - p->pos);
        p->pos = i;
        if (fr == 2) {
            return CHAT_PARSE_STOP;
        }
        p->pos = body;
        bool invalid;
        const int ar = chat_parser_consume_named_args(p, p->in + nf, nt - nf, &invalid);
        if (invalid) {
            continue;
        }
        if (ar != CHAT_PARSE_OK) {
            return CHAT_PARSE_STOP;
        }
        chat_parser_skip_spaces(p);
        if (!chat_parser_try_consume(p, "```")) {
            return CHAT_PARSE_STOP;
        }
        chat_parser_skip_spaces(p);
        if (!chat_parser_try_consume(p, DS_CALL_END)) {
            return CHAT_PARSE_STOP;
        }
    }
    chat_parser_skip_spaces(p);
    if (!chat_parser_try_consume(p, DS_CALLS_END)) {
        return CHAT_PARSE_STOP;
    }
    chat_parser_skip_spaces(p);
    chat_parser_add_rest(p);
    return CHAT_PARSE_OK;
}

// Command R7B: <|START_THINKING|>...<|END_THINKING|>, then <|START_ACTION|>[{"tool_call_id": ..., "tool_name": ...,
// "parameters": {...}}]<|END_ACTION|> or <|START_RESPONSE|>...<|END_RESPONSE|>
int chat_parser_command_r7b(struct chat_parser * p) {
    bool stop;
    chat_parser_try_reasoning(p, "<|START_THINKING|>", "<|END_THINKING|>", &stop);
    if (stop) {
        return CHAT_PARSE_STOP;
    }
    // the earlier of the two openings; a text that ends with the beginning of one waits
    size_t at, rat;
    const int ra = chat_parser_find_lit(p, "<|START_ACTION|>", &at);
    int r = chat_parser_find_lit(p, "<|START_RESPONSE|>", &rat);
    if (ra == 1 && !(r == 1 && rat < at)) {
        chat_parser_add_content(p, p->in + p->pos, at - p->pos);
        p->pos = at + strlen("<|START_ACTION|>");
        if (chat_parser_consume_call_array(p, "tool_name", "parameters", "tool_call_id") != CHAT_PARSE_OK) {
            return CHAT_PARSE_STOP;
        }
        chat_parser_skip_spaces(p);
        if (!chat_parser_try_consume(p, "<|END_ACTION|>")) {
            return CHAT_PARSE_STOP;
        }
        chat_parser_skip_spaces(p);
        chat_parser_add_rest(p);
        return CHAT_PARSE_OK;
    }
    if (r != 1) {
        if (ra == 2 || r == 2) {
            const size_t hold = ra == 2 && (r != 2 || at < rat) ? at : rat;
            chat_parser_add_content(p, p->in + p->pos, hold - p->pos);
            return CHAT_PARSE_STOP;
        }
        chat_parser_add_rest(p);
        return CHAT_PARSE_OK;
    }
    at = rat;
    chat_parser_add_content(p, p->in + p->pos, at - p->pos);
    p->pos = at + strlen("<|START_RESPONSE|>");
    r = chat_parser_find_lit(p, "<|END_RESPONSE|>", &at);
    if (r != 1) {
        // the reply so far; a complete text without the end marker falls back to content-only (llama.cpp)
        chat_parser_add_content(p, p->in + p->pos, (r == 2 ? at : p->n) - p->pos);
        p->pos = p->n;
        return CHAT_PARSE_STOP;
    }
    chat_parser_add_content(p, p->in + p->pos, at - p->pos);
    p->pos = at + strlen("<|END_RESPONSE|>");
    chat_parser_skip_spaces(p);
    chat_parser_add_rest(p);
    return CHAT_PARSE_OK;
}

// Functionary v3.2: ">>>NAME\n{...}" blocks; at the very start the ">>>" may be missing, and "all\n" there opens
// plain content; "python\n" takes the raw code that follows as {"code": ...}
int chat_parser_functionary_v3_2(struct chat_parser * p) {
    bool first = true;
    for (;;) {
        // the next header: at the start without ">>>", later only after ">>>"
        size_t i = p->pos, hstart = SIZE_MAX;
        bool part = false;
        if (first) {
            hstart = p->pos;
        } else {
            size_t at;
            const int r = chat_parser_find_lit(p, ">>>", &at);
            if (r == 2) {
                chat_parser_add_content(p, p->in + p->pos, at - p->pos);
                return CHAT_PARSE_STOP;
            }
            if (r == 1) {
                hstart = at;
                i = at + 3;
            }
        }
        if (hstart == SIZE_MAX) {
            break;
        }
        const size_t nf = i;
        while (i < p->n && chat_parser_is_word(p->in[i])) {
            i++;
        }
        const size_t nt = i;
        part = i >= p->n || (i + 1 >= p->n && p->in[i] == '\n');
        const bool nl = i < p->n && p->in[i] == '\n';
        const bool brace = nl && i + 1 < p->n && p->in[i + 1] == '{';
        const bool is_all = nt - nf == 3 && memcmp(p->in + nf, "all", 3) == 0;
        const bool is_py = nt - nf == 6 && memcmp(p->in + nf, "python", 6) == 0;
        if (part && p->partial) {
            chat_parser_add_content(p, p->in + p->pos, hstart - p->pos);
            return CHAT_PARSE_STOP;
        }
        if (nt == nf || !nl || (!brace && !is_all && !is_py)) {
            if (first) {
                first = false;
                continue;
            }
            // not a header: keep it as content and look further
            chat_parser_add_content(p, p->in + p->pos, nf - p->pos);
            p->pos = nf;
            continue;
        }
        chat_parser_add_content(p, p->in + p->pos, hstart - p->pos);
        if (first && is_all) {
            first = false;
            p->pos = nt + 1;  // "all\n": the content follows (up to a later >>>)
            continue;
        }
        first = false;
        char * name = strndup(p->in + nf, nt - nf);
        if (!name) {
            p->oom = true;
            return CHAT_PARSE_STOP;
        }
        if (is_py && !brace) {
            // raw code to the end: arguments {"code": "..."}; while more may follow, the JSON is left open after
            // the code so far (llama.cpp's wrap_code_as_arguments). Bytes that are not UTF-8 become U+FFFD there
            // instead of losing the call.
            struct common_sb a = { 0 };
            common_sb_add(&a, "{\"code\":\"");
            chat_json_escape_bytes(p->in + nt + 1, p->n - nt - 1, p->partial, &a);
            if (!p->partial) {
                common_sb_add(&a, "\"}");
            }
            char * d = common_sb_take(&a);
            if (d) {
                chat_parser_add_tool_call(p, name, "", d);
            } else {
                p->oom = true;
            }
            free(d);
            free(name);
            p->pos = p->n;
            return p->partial ? CHAT_PARSE_STOP : CHAT_PARSE_OK;
        }
        p->pos = nt + 1;
        bool invalid;
        const int ar = chat_parser_consume_args(p, name, &invalid);
        free(name);
        if (invalid) {
            continue;
        }
        if (ar != CHAT_PARSE_OK) {
            return CHAT_PARSE_STOP;
        }
        chat_parser_skip_spaces(p);
    }
    chat_parser_add_rest(p);
    return CHAT_PARSE_OK;
}

