// Chat output parsing in llama.cpp's formats (see chat-parse.h): names, format detection, the messages, the parse
// entry point and the streamed diffs. Each format is a small scanner over the text (chat-parse-formats*.c); a
// scanner that meets the end of a partial text in the middle of something (a marker, a tool call) stops there,
// which is llama.cpp's common_chat_msg_partial_exception: what was found so far is the result. A complete text
// that stops that way is parsed again as content-only, as llama.cpp does.
#include "chat-parse.h"

#include "chat-parse-impl.h"

#include <jansson.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char * common_chat_format_name(enum common_chat_format format) {
    switch (format) {
        case COMMON_CHAT_FORMAT_CONTENT_ONLY:                return "Content-only";
        case COMMON_CHAT_FORMAT_GENERIC:                     return "Generic";
        case COMMON_CHAT_FORMAT_MISTRAL_NEMO:                return "Mistral Nemo";
        case COMMON_CHAT_FORMAT_LLAMA_3_X:                   return "Llama 3.x";
        case COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS: return "Llama 3.x with builtin tools";
        case COMMON_CHAT_FORMAT_DEEPSEEK_R1:                 return "DeepSeek R1";
        case COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2:            return "Functionary v3.2";
        case COMMON_CHAT_FORMAT_HERMES_2_PRO:                return "Hermes 2 Pro";
        case COMMON_CHAT_FORMAT_COMMAND_R7B:                 return "Command R7B";
        default:                                             return "unknown";
    }
}

const char * common_reasoning_format_name(enum common_reasoning_format format) {
    switch (format) {
        case COMMON_REASONING_FORMAT_NONE:            return "none";
        case COMMON_REASONING_FORMAT_AUTO:            return "auto";
        case COMMON_REASONING_FORMAT_DEEPSEEK_LEGACY: return "deepseek-legacy";
        case COMMON_REASONING_FORMAT_DEEPSEEK:        return "deepseek";
        default:                                      return "unknown";
    }
}

bool common_reasoning_format_from_name(const char * name, enum common_reasoning_format * out) {
    for (int f = COMMON_REASONING_FORMAT_NONE; f <= COMMON_REASONING_FORMAT_DEEPSEEK; f++) {
        if (name && strcmp(name, common_reasoning_format_name((enum common_reasoning_format) f)) == 0) {
            *out = (enum common_reasoning_format) f;
            return true;
        }
    }
    return false;
}

static bool has(const char * src, const char * needle) {
    return strstr(src, needle) != NULL;
}

// llama.cpp's common_chat_templates_apply_jinja, in its order. The checks for formats this parser does not have
// stay in place (answering CONTENT_ONLY) so that a template never falls through to a later rule llama.cpp would
// not reach.
enum common_chat_format common_chat_detect_format(const char * src, bool has_tools, bool has_json_schema,
                                                  bool has_builtin_tools) {
    if (!src) {
        return COMMON_CHAT_FORMAT_CONTENT_ONLY;
    }
    if (has(src, "message['prefix'] is defined and message['prefix'] and thinking") && !has_json_schema) {
        return COMMON_CHAT_FORMAT_CONTENT_ONLY;  // DeepSeek V3.1
    }
    if (has(src, "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>") && !has_json_schema) {
        return COMMON_CHAT_FORMAT_DEEPSEEK_R1;  // <｜tool▁calls▁begin｜>
    }
    if (has(src, "<|END_THINKING|><|START_ACTION|>") && !has_json_schema) {
        return COMMON_CHAT_FORMAT_COMMAND_R7B;
    }
    if (has(src, "elif thinking") && has(src, "<|tool_call|>")) {
        return COMMON_CHAT_FORMAT_CONTENT_ONLY;  // Granite
    }
    if (has(src, "<tool_call>") && !has_json_schema) {
        return COMMON_CHAT_FORMAT_HERMES_2_PRO;
    }
    if (has(src, "<|channel|>") || has(src, "<seed:think>") || has(src, "<SPECIAL_10>") ||
        (has(src, "<|system_start|>") && has(src, "<|tools_prefix|>")) ||
        (has(src, "List of tools: <|tool_list_start|>[") && has(src, "]<|tool_list_end|>"))) {
        return COMMON_CHAT_FORMAT_CONTENT_ONLY;  // GPT-OSS, Seed-OSS, Nemotron v2, Apertus, LFM2
    }
    if (has_tools && has_json_schema) {
        return COMMON_CHAT_FORMAT_GENERIC;
    }
    if (has(src, ">>>all")) {
        return COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2;
    }
    if (has(src, " functools[") || (has(src, "<|start_header_id|>") && has(src, "<function="))) {
        return COMMON_CHAT_FORMAT_CONTENT_ONLY;  // FireFunction v2, Functionary v3.1
    }
    if (has(src, "<|start_header_id|>ipython<|end_header_id|>")) {
        // its handler runs without tools too (for the date in the prompt) but then answers content-only
        if (!has_tools) {
            return COMMON_CHAT_FORMAT_CONTENT_ONLY;
        }
        return has(src, "<|python_tag|>") && has_builtin_tools ? COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS
                                                                 : COMMON_CHAT_FORMAT_LLAMA_3_X;
    }
    if (has(src, "[THINK]") && has(src, "[/THINK]")) {
        return COMMON_CHAT_FORMAT_CONTENT_ONLY;  // Magistral
    }
    if (!has_tools) {
        return COMMON_CHAT_FORMAT_CONTENT_ONLY;
    }
    if (has(src, "[TOOL_CALLS]")) {
        return COMMON_CHAT_FORMAT_MISTRAL_NEMO;
    }
    return COMMON_CHAT_FORMAT_GENERIC;
}

//
// messages
//

void common_chat_msg_init(struct common_chat_msg * msg) {
    memset(msg, 0, sizeof(*msg));
}

void chat_parser_tool_call_free(struct common_chat_tool_call * tc) {
    free(tc->name);
    free(tc->arguments);
    free(tc->id);
    memset(tc, 0, sizeof(*tc));
}

void common_chat_msg_free(struct common_chat_msg * msg) {
    if (!msg) {
        return;
    }
    free(msg->content);
    free(msg->reasoning_content);
    for (size_t i = 0; i < msg->n_tool_calls; i++) {
        chat_parser_tool_call_free(&msg->tool_calls[i]);
    }
    free(msg->tool_calls);
    common_chat_msg_init(msg);
}

static char * dup_or_empty(const char * s) {
    return strdup(s ? s : "");
}

bool common_chat_msg_copy(struct common_chat_msg * dst, const struct common_chat_msg * src) {
    common_chat_msg_init(dst);
    dst->content = dup_or_empty(src->content);
    dst->reasoning_content = dup_or_empty(src->reasoning_content);
    dst->tool_calls = calloc(src->n_tool_calls ? src->n_tool_calls : 1, sizeof(*dst->tool_calls));
    bool ok = dst->content && dst->reasoning_content && dst->tool_calls;
    for (size_t i = 0; ok && i < src->n_tool_calls; i++) {
        struct common_chat_tool_call * d = &dst->tool_calls[i];
        dst->n_tool_calls++;
        d->name = dup_or_empty(src->tool_calls[i].name);
        d->arguments = dup_or_empty(src->tool_calls[i].arguments);
        d->id = dup_or_empty(src->tool_calls[i].id);
        ok = d->name && d->arguments && d->id;
    }
    if (!ok) {
        common_chat_msg_free(dst);
    }
    return ok;
}

static int parse_format(struct chat_parser * p) {
    switch (p->syn->format) {
        case COMMON_CHAT_FORMAT_GENERIC:                     return chat_parser_generic(p);
        case COMMON_CHAT_FORMAT_MISTRAL_NEMO:                return chat_parser_mistral_nemo(p);
        case COMMON_CHAT_FORMAT_LLAMA_3_X:                   return chat_parser_llama_3_x(p, false);
        case COMMON_CHAT_FORMAT_LLAMA_3_X_WITH_BUILTIN_TOOLS: return chat_parser_llama_3_x(p, true);
        case COMMON_CHAT_FORMAT_DEEPSEEK_R1:                 return chat_parser_deepseek_r1(p);
        case COMMON_CHAT_FORMAT_FUNCTIONARY_V3_2:            return chat_parser_functionary_v3_2(p);
        case COMMON_CHAT_FORMAT_HERMES_2_PRO:                return chat_parser_hermes_2_pro(p);
        case COMMON_CHAT_FORMAT_COMMAND_R7B:                 return chat_parser_command_r7b(p);
        default:                                             return chat_parser_content_only(p);
    }
}

static void cp_reset(struct chat_parser * p) {
    free(p->content.s);
    free(p->reasoning.s);
    memset(&p->content, 0, sizeof(p->content));
    memset(&p->reasoning, 0, sizeof(p->reasoning));
    for (size_t i = 0; i < p->n_calls; i++) {
        chat_parser_tool_call_free(&p->calls[i]);
    }
    p->n_calls = 0;
    p->pos = 0;
}

bool common_chat_parse(const char * input, size_t len, bool is_partial, const struct common_chat_syntax * syntax,
                       struct common_chat_msg * out) {
    common_chat_msg_init(out);
    struct chat_parser p = { 0 };
    p.in = input ? input : "";
    p.n = input ? len : 0;
    p.partial = is_partial;
    p.syn = syntax;
    if (parse_format(&p) != CHAT_PARSE_OK && !is_partial) {
        cp_reset(&p);
        chat_parser_content_only(&p);
    }
    out->content = common_sb_take(&p.content);
    out->reasoning_content = common_sb_take(&p.reasoning);
    out->tool_calls = p.calls;
    out->n_tool_calls = p.n_calls;
    if (p.oom || !out->content || !out->reasoning_content) {
        common_chat_msg_free(out);
        return false;
    }
    return true;
}

//
// diffs (llama.cpp's common_chat_msg_diff::compute_diffs)
//

// the part of cur after prev; "" when cur does not extend prev (llama.cpp throws there, except for a text that
// shrank because a stop string was cut off)
static char * string_diff(const char * prev, const char * cur) {
    const size_t lp = strlen(prev);
    if (strncmp(cur, prev, lp) != 0) {
        return strdup("");
    }
    return strdup(cur + lp);
}

static bool push_diff(struct common_chat_msg_diff ** v, size_t * n, size_t * cap, struct common_chat_msg_diff d) {
    if (*n == *cap) {
        const size_t nc = *cap ? *cap * 2 : 4;
        struct common_chat_msg_diff * nv = realloc(*v, nc * sizeof(*nv));
        if (!nv) {
            return false;
        }
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = d;
    return true;
}

static struct common_chat_msg_diff empty_diff(void) {
    struct common_chat_msg_diff d;
    memset(&d, 0, sizeof(d));
    d.tool_call_index = SIZE_MAX;
    d.reasoning_content_delta = strdup("");
    d.content_delta = strdup("");
    d.tool_call_delta.name = strdup("");
    d.tool_call_delta.id = strdup("");
    d.tool_call_delta.arguments = strdup("");
    return d;
}

static void diff_free(struct common_chat_msg_diff * d) {
    free(d->reasoning_content_delta);
    free(d->content_delta);
    chat_parser_tool_call_free(&d->tool_call_delta);
}

static bool diff_ok(const struct common_chat_msg_diff * d) {
    return d->reasoning_content_delta && d->content_delta && d->tool_call_delta.name && d->tool_call_delta.id &&
           d->tool_call_delta.arguments;
}

static const char * str0(const char * s) {
    return s ? s : "";
}

bool common_chat_msg_diffs(const struct common_chat_msg * prev, const struct common_chat_msg * cur,
                           struct common_chat_msg_diff ** diffs, size_t * n_diffs) {
    *diffs = NULL;
    *n_diffs = 0;
    size_t cap = 0;
    bool ok = true;
    struct common_chat_msg_diff d;
    if (strcmp(str0(prev->reasoning_content), str0(cur->reasoning_content)) != 0) {
        d = empty_diff();
        free(d.reasoning_content_delta);
        d.reasoning_content_delta = string_diff(str0(prev->reasoning_content), str0(cur->reasoning_content));
        ok = diff_ok(&d) && push_diff(diffs, n_diffs, &cap, d);
        if (!ok) {
            diff_free(&d);
        }
    }
    if (ok && strcmp(str0(prev->content), str0(cur->content)) != 0) {
        d = empty_diff();
        free(d.content_delta);
        d.content_delta = string_diff(str0(prev->content), str0(cur->content));
        ok = diff_ok(&d) && push_diff(diffs, n_diffs, &cap, d);
        if (!ok) {
            diff_free(&d);
        }
    }
    // a parse that lost tool calls (a complete text that fell back to content) adds none
    if (ok && prev->n_tool_calls > 0 && cur->n_tool_calls >= prev->n_tool_calls) {
        const size_t idx = prev->n_tool_calls - 1;
        const struct common_chat_tool_call * pt = &prev->tool_calls[idx];
        const struct common_chat_tool_call * ct = &cur->tool_calls[idx];
        if (strcmp(str0(pt->name), str0(ct->name)) == 0) {
            char * args = string_diff(str0(pt->arguments), str0(ct->arguments));
            const bool id_changed = strcmp(str0(pt->id), str0(ct->id)) != 0;
            if (!args) {
                ok = false;
            } else if (args[0] || id_changed) {
                d = empty_diff();
                d.tool_call_index = idx;
                free(d.tool_call_delta.arguments);
                d.tool_call_delta.arguments = args;
                args = NULL;
                if (id_changed) {
                    free(d.tool_call_delta.id);
                    free(d.tool_call_delta.name);
                    d.tool_call_delta.id = strdup(str0(ct->id));
                    d.tool_call_delta.name = strdup(str0(ct->name));
                }
                ok = diff_ok(&d) && push_diff(diffs, n_diffs, &cap, d);
                if (!ok) {
                    diff_free(&d);
                }
            }
            free(args);
        }
    }
    for (size_t i = prev->n_tool_calls; ok && i < cur->n_tool_calls; i++) {
        d = empty_diff();
        d.tool_call_index = i;
        free(d.tool_call_delta.name);
        free(d.tool_call_delta.id);
        free(d.tool_call_delta.arguments);
        d.tool_call_delta.name = strdup(str0(cur->tool_calls[i].name));
        d.tool_call_delta.id = strdup(str0(cur->tool_calls[i].id));
        d.tool_call_delta.arguments = strdup(str0(cur->tool_calls[i].arguments));
        ok = diff_ok(&d) && push_diff(diffs, n_diffs, &cap, d);
        if (!ok) {
            diff_free(&d);
        }
    }
    if (!ok) {
        common_chat_msg_diffs_free(*diffs, *n_diffs);
        *diffs = NULL;
        *n_diffs = 0;
    }
    return ok;
}

void common_chat_msg_diffs_free(struct common_chat_msg_diff * diffs, size_t n_diffs) {
    for (size_t i = 0; diffs && i < n_diffs; i++) {
        diff_free(&diffs[i]);
    }
    free(diffs);
}

