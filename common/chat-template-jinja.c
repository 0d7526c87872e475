#include "chat-template-jinja.h"

#include "jinja/jinja.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool common_chat_jinja_is_template(const char * tmpl) {
    return tmpl && (strstr(tmpl, "{%") || strstr(tmpl, "{{"));
}

// renders with a fixed context; NULL on any error (probing ignores the message)
static char * render_ctx(const struct jinja_template * t, json_t * ctx) {
    char err[256];
    char * out = jinja_template_render(t, ctx, err, sizeof(err));
    json_decref(ctx);
    return out;
}

static json_t * probe_ctx(json_t * messages, json_t * tools) {
    json_t * ctx = json_pack("{s:o, s:s, s:s, s:b}", "messages", messages, "bos_token", "", "eos_token", "",
                             "add_generation_prompt", 1);
    if (ctx && tools) {
        json_object_set_new(ctx, "tools", tools);
    } else {
        json_decref(tools);
    }
    return ctx;
}

static bool contains(const char * s, const char * needle) {
    return s && strstr(s, needle) != NULL;
}

// llama.cpp's jinja::caps_get tracks which input values the template reads; here a value counts as used when a
// unique marker in it reaches the output, which is what matters for the prompt.
static void probe_caps(const struct jinja_template * t, struct common_chat_jinja_caps * caps) {
    memset(caps, 0, sizeof(*caps));
    char * out;

    out = render_ctx(t, probe_ctx(json_pack("[{s:s, s:s}]", "role", "user", "content", "Xq7StrContent"), NULL));
    caps->supports_string_content = out != NULL;
    free(out);

    out = render_ctx(t, probe_ctx(json_pack("[{s:s, s:[{s:s, s:s}]}]", "role", "user", "content", "type", "text", "text",
                                            "Xq7TypedContent"), NULL));
    caps->supports_typed_content = contains(out, "Xq7TypedContent") && !contains(out, "'text'") && !contains(out, "\"text\"");
    free(out);

    out = render_ctx(t, probe_ctx(json_pack("[{s:s, s:s}, {s:s, s:s}]", "role", "system", "content", "Xq7SystemMsg",
                                            "role", "user", "content", "User message"), json_array()));
    caps->supports_system_role = contains(out, "Xq7SystemMsg");
    free(out);

    json_t * call = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "id", "call00001", "type", "function", "function", "name",
                              "Xq7ToolA", "arguments", "arg", "value");
    json_t * call2 = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "id", "call00002", "type", "function", "function", "name",
                               "Xq7ToolB", "arguments", "arg", "value");
    json_t * msgs = json_pack("[{s:s, s:s}, {s:s, s:s, s:[o, o]}, {s:s, s:s, s:s}, {s:s, s:s}, {s:s, s:s}]",
                              "role", "user", "content", "User message",
                              "role", "assistant", "content", "Assistant message", "tool_calls", call, call2,
                              "role", "tool", "content", "Tool response", "tool_call_id", "call00001",
                              "role", "assistant", "content", "The tool response was 'tool response'",
                              "role", "user", "content", "User message");
    json_t * tools = json_pack("[{s:s, s:s, s:{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}}, s:[s]}}}]", "name", "tool", "type",
                               "function", "function", "name", "Xq7ToolDef", "description", "Tool description",
                               "parameters", "type", "object", "properties", "arg", "type", "string", "description",
                               "Arg description", "required", "arg");
    out = render_ctx(t, probe_ctx(msgs, tools));
    caps->supports_tools = contains(out, "Xq7ToolDef");
    caps->supports_tool_calls = contains(out, "Xq7ToolA");
    caps->supports_parallel_tool_calls = contains(out, "Xq7ToolB");
    free(out);

    out = render_ctx(t, probe_ctx(json_pack("[{s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s}]", "role", "user", "content",
                                            "User message", "role", "assistant", "content", "Assistant message",
                                            "reasoning_content", "Xq7Reasoning", "role", "user", "content",
                                            "User message"), json_array()));
    caps->supports_preserve_reasoning = contains(out, "Xq7Reasoning");
    free(out);
}

struct common_chat_jinja * common_chat_jinja_init(const char * src, const char * bos_token, const char * eos_token,
                                                  char * err, size_t err_size) {
    struct jinja_template * t = jinja_template_parse(src, err, err_size);
    if (!t) {
        return NULL;
    }
    struct common_chat_jinja * cj = calloc(1, sizeof(*cj));
    if (cj) {
        cj->bos_token = strdup(bos_token ? bos_token : "");
        cj->eos_token = strdup(eos_token ? eos_token : "");
    }
    if (!cj || !cj->bos_token || !cj->eos_token) {
        if (cj) {
            free(cj->bos_token);
            free(cj->eos_token);
            free(cj);
        }
        jinja_template_free(t);
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    cj->tmpl = t;
    probe_caps(t, &cj->caps);
    return cj;
}

void common_chat_jinja_free(struct common_chat_jinja * cj) {
    if (!cj) {
        return;
    }
    jinja_template_free(cj->tmpl);
    free(cj->bos_token);
    free(cj->eos_token);
    free(cj);
}

// text parts of an OpenAI content array joined with newlines (llama.cpp's rendering for templates without typed
// content); NULL when a part is not {type:"text", text:string}
static json_t * join_text_parts(const json_t * parts) {
    size_t total = 1, i;
    const json_t * p;
    json_array_foreach(parts, i, p) {
        const json_t * text = json_object_get(p, "text");
        const json_t * type = json_object_get(p, "type");
        if (!json_is_string(text) || !json_is_string(type) || strcmp(json_string_value(type), "text") != 0) {
            return NULL;
        }
        total += json_string_length(text) + 1;
    }
    char * s = malloc(total);
    if (!s) {
        return NULL;
    }
    size_t o = 0;
    json_array_foreach(parts, i, p) {
        const json_t * text = json_object_get(p, "text");
        if (i > 0) {
            s[o++] = '\n';
        }
        memcpy(s + o, json_string_value(text), json_string_length(text));
        o += json_string_length(text);
    }
    json_t * r = json_stringn(s, o);
    free(s);
    return r;
}

// a deep copy of the messages adapted to the template: typed content joined, system role folded into the first user
// message when the template ignores system messages
static json_t * prepare_messages(const struct common_chat_jinja * cj, const json_t * messages, char * err,
                                 size_t err_size) {
    json_t * msgs = json_deep_copy(messages);
    if (!msgs) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    size_t i;
    json_t * m;
    json_array_foreach(msgs, i, m) {
        if (!json_is_object(m)) {
            snprintf(err, err_size, "messages[%zu] must be an object", i);
            json_decref(msgs);
            return NULL;
        }
        json_t * content = json_object_get(m, "content");
        if (json_is_array(content) && !cj->caps.supports_typed_content) {
            json_t * joined = join_text_parts(content);
            if (!joined) {
                snprintf(err, err_size, "messages[%zu].content: only text parts are supported", i);
                json_decref(msgs);
                return NULL;
            }
            json_object_set_new(m, "content", joined);
        }
    }
    json_t * first = json_array_get(msgs, 0);
    const json_t * role = json_object_get(first, "role");
    if (!cj->caps.supports_system_role && json_is_string(role) && strcmp(json_string_value(role), "system") == 0) {
        const char * sys = json_string_value(json_object_get(first, "content"));
        json_t * second = json_array_get(msgs, 1);
        const json_t * role2 = json_object_get(second, "role");
        const char * user = json_string_value(json_object_get(second, "content"));
        if (sys && user && json_is_string(role2) && strcmp(json_string_value(role2), "user") == 0) {
            size_t n = strlen(sys) + strlen(user) + 2;
            char * merged = malloc(n);
            if (merged) {
                snprintf(merged, n, "%s\n%s", sys, user);
                json_object_set_new(second, "content", json_string(merged));
                free(merged);
                json_array_remove(msgs, 0);
            }
        } else {
            json_object_set_new(first, "role", json_string("user"));
        }
    }
    return msgs;
}

char * common_chat_jinja_apply(const struct common_chat_jinja * cj, const json_t * messages, const json_t * tools,
                               bool add_generation_prompt, const json_t * kwargs, char * err, size_t err_size) {
    if (!json_is_array(messages)) {
        snprintf(err, err_size, "messages must be an array");
        return NULL;
    }
    json_t * msgs = prepare_messages(cj, messages, err, err_size);
    if (!msgs) {
        return NULL;
    }
    json_t * ctx = json_pack("{s:o, s:s, s:s, s:b}", "messages", msgs, "bos_token", cj->bos_token, "eos_token",
                             cj->eos_token, "add_generation_prompt", add_generation_prompt);
    if (!ctx) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    // no tools: the variable stays undefined, so `tools is defined` / `tools is not none` are false as in llama.cpp
    if (json_is_array(tools) && json_array_size(tools) > 0) {
        json_object_set(ctx, "tools", (json_t *) tools);
    }
    // llama.cpp passes enable_thinking (true unless reasoning is turned off); a request kwarg overrides it
    json_object_set_new(ctx, "enable_thinking", json_true());
    if (json_is_object(kwargs)) {
        json_object_update(ctx, (json_t *) kwargs);
    }
    char * out = jinja_template_render(cj->tmpl, ctx, err, err_size);
    json_decref(ctx);
    if (!out) {
        return NULL;
    }
    // llama.cpp drops a BOS/EOS the template writes when the tokenizer adds it anyway
    size_t n = strlen(out);
    const size_t nb = strlen(cj->bos_token), ne = strlen(cj->eos_token);
    if (cj->strip_bos && nb > 0 && n >= nb && memcmp(out, cj->bos_token, nb) == 0) {
        memmove(out, out + nb, n - nb + 1);
        n -= nb;
    }
    if (cj->strip_eos && ne > 0 && n >= ne && memcmp(out + n - ne, cj->eos_token, ne) == 0) {
        out[n - ne] = '\0';
    }
    return out;
}

json_t * common_chat_jinja_caps_json(const struct common_chat_jinja_caps * c) {
    return json_pack("{s:b, s:b, s:b, s:b, s:b, s:b, s:b}",
                     "supports_parallel_tool_calls", c->supports_parallel_tool_calls,
                     "supports_preserve_reasoning", c->supports_preserve_reasoning,
                     "supports_string_content", c->supports_string_content,
                     "supports_system_role", c->supports_system_role,
                     "supports_tool_calls", c->supports_tool_calls,
                     "supports_tools", c->supports_tools,
                     "supports_typed_content", c->supports_typed_content);
}
