// The generated text of a chat request parsed in its output format (common/chat-parse): reasoning_content,
// content and tool calls for the final message, and llama.cpp's streamed diffs between successive parses.
// Inference thread only.
#include "server-context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void server_chat_msg_release(struct server_slot * s) {
    common_chat_msg_free(&s->chat_msg);
    for (size_t i = 0; i < s->n_tool_call_ids; i++) {
        free(s->tool_call_ids[i]);
    }
    free(s->tool_call_ids);
    s->tool_call_ids = NULL;
    s->n_tool_call_ids = 0;
    s->chat_parse = false;
}

void server_chat_msg_launch(const struct server_context * sc, struct server_slot * s, const json_t * body) {
    server_chat_msg_release(s);
    if (!server_mode_is_chat(s->mode)) {
        return;
    }
    struct common_chat_syntax * syn = &s->chat_syntax;
    memset(syn, 0, sizeof(*syn));
    const json_int_t f = json_integer_value(json_object_get(body, "__chat_format"));
    syn->format = f >= 0 && f < COMMON_CHAT_FORMAT_COUNT ? (enum common_chat_format) f : COMMON_CHAT_FORMAT_CONTENT_ONLY;
    // the request's reasoning_format (checked on the HTTP thread) over --reasoning-format
    syn->reasoning_format = sc->params.reasoning_format;
    const json_t * rf = json_object_get(body, "reasoning_format");
    if (json_is_string(rf)) {
        common_reasoning_format_from_name(json_string_value(rf), &syn->reasoning_format);
    }
    // llama.cpp: deepseek-legacy keeps the thoughts, tags and all, in the streamed content
    syn->reasoning_in_content = s->task->stream && syn->reasoning_format == COMMON_REASONING_FORMAT_DEEPSEEK_LEGACY;
    syn->thinking_forced_open = json_is_true(json_object_get(body, "__thinking_forced_open"));
    syn->parse_tool_calls = json_is_true(json_object_get(body, "__parse_tool_calls"));
    s->chat_parse = true;
}

// llama.cpp's gen_tool_call_id: 32 random letters and digits
static char * gen_tool_call_id(void) {
    static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char * id = malloc(33);
    for (int i = 0; id && i < 32; i++) {
        id[i] = chars[rand() % (int) (sizeof(chars) - 1)];
    }
    if (id) {
        id[32] = '\0';
    }
    return id;
}

// tool calls the model gave no id get one, kept for their index over the whole generation
static bool set_tool_call_ids(struct server_slot * s, struct common_chat_msg * m) {
    for (size_t i = 0; i < m->n_tool_calls; i++) {
        struct common_chat_tool_call * tc = &m->tool_calls[i];
        if (tc->id && tc->id[0]) {
            continue;
        }
        if (i >= s->n_tool_call_ids) {
            char ** v = realloc(s->tool_call_ids, (i + 1) * sizeof(*v));
            if (!v) {
                return false;
            }
            s->tool_call_ids = v;
            while (s->n_tool_call_ids <= i) {
                s->tool_call_ids[s->n_tool_call_ids] = gen_tool_call_id();
                if (!s->tool_call_ids[s->n_tool_call_ids]) {
                    return false;
                }
                s->n_tool_call_ids++;
            }
        }
        char * id = strdup(s->tool_call_ids[i]);
        if (!id) {
            return false;
        }
        free(tc->id);
        tc->id = id;
    }
    return true;
}

bool server_chat_msg_update(struct server_slot * s, size_t len, bool is_partial, struct common_chat_msg_diff ** diffs,
                            size_t * n_diffs) {
    if (diffs) {
        *diffs = NULL;
        *n_diffs = 0;
    }
    struct common_chat_msg m;
    if (!common_chat_parse(s->text ? s->text : "", s->text ? len : 0, is_partial, &s->chat_syntax, &m)) {
        return false;
    }
    if (!set_tool_call_ids(s, &m) || (diffs && !common_chat_msg_diffs(&s->chat_msg, &m, diffs, n_diffs))) {
        common_chat_msg_free(&m);
        return false;
    }
    common_chat_msg_free(&s->chat_msg);
    s->chat_msg = m;
    return true;
}

bool server_chat_msg_final(struct server_slot * s, struct common_chat_msg_diff ** diffs, size_t * n_diffs) {
    const bool eos = s->stop_type && strcmp(s->stop_type, "eos") == 0;
    return server_chat_msg_update(s, s->n_text, !eos, diffs, n_diffs);
}

// llama.cpp's common_chat_msg::to_json_oaicompat for an assistant message
json_t * server_chat_msg_oai_json(const struct common_chat_msg * m) {
    json_t * o = json_pack("{s:s}", "role", "assistant");
    if (!o) {
        return NULL;
    }
    if (m->reasoning_content && m->reasoning_content[0]) {
        json_object_set_new(o, "reasoning_content", sj_string_lossy(m->reasoning_content, strlen(m->reasoning_content)));
    }
    const char * content = m->content ? m->content : "";
    if (!content[0] && m->n_tool_calls > 0) {
        json_object_set_new(o, "content", json_null());
    } else {
        json_object_set_new(o, "content", sj_string_lossy(content, strlen(content)));
    }
    if (m->n_tool_calls > 0) {
        json_t * arr = json_array();
        for (size_t i = 0; i < m->n_tool_calls; i++) {
            const struct common_chat_tool_call * tc = &m->tool_calls[i];
            json_array_append_new(arr, json_pack("{s:s, s:{s:o, s:o}, s:o}", "type", "function", "function", "name",
                                                 sj_string_lossy(tc->name, strlen(tc->name)), "arguments",
                                                 sj_string_lossy(tc->arguments, strlen(tc->arguments)), "id",
                                                 sj_string_lossy(tc->id, strlen(tc->id))));
        }
        json_object_set_new(o, "tool_calls", arr);
    }
    return o;
}

// llama.cpp's common_chat_msg_diff_to_json_oaicompat
json_t * server_chat_diff_oai_json(const struct common_chat_msg_diff * d) {
    json_t * o = json_object();
    if (!o) {
        return NULL;
    }
    if (d->reasoning_content_delta[0]) {
        json_object_set_new(o, "reasoning_content",
                            sj_string_lossy(d->reasoning_content_delta, strlen(d->reasoning_content_delta)));
    }
    if (d->content_delta[0]) {
        json_object_set_new(o, "content", sj_string_lossy(d->content_delta, strlen(d->content_delta)));
    }
    if (d->tool_call_index != SIZE_MAX) {
        const struct common_chat_tool_call * tc = &d->tool_call_delta;
        json_t * call = json_pack("{s:I}", "index", (json_int_t) d->tool_call_index);
        if (tc->id[0]) {
            json_object_set_new(call, "id", sj_string_lossy(tc->id, strlen(tc->id)));
            json_object_set_new(call, "type", json_string("function"));
        }
        json_t * fn = json_object();
        if (tc->name[0]) {
            json_object_set_new(fn, "name", sj_string_lossy(tc->name, strlen(tc->name)));
        }
        json_object_set_new(fn, "arguments", sj_string_lossy(tc->arguments, strlen(tc->arguments)));
        json_object_set_new(call, "function", fn);
        json_object_set_new(o, "tool_calls", json_pack("[o]", call));
    }
    return o;
}
