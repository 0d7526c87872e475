// Chat messages (OpenAI shape) through llama_chat_apply_template; built only when libllama has it
// (LLAMA_SERVER_HAVE_CHAT, see CMakeLists.txt).
#include "server-context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// messages -> llama_chat_message array; the strings point into msgs (or into *owned for joined parts)
static bool chat_messages(const json_t * msgs, struct llama_chat_message ** out, char *** owned, size_t * n,
                          struct sj_err * err) {
    *n = json_array_size(msgs);
    *out = calloc(*n ? *n : 1, sizeof(**out));
    *owned = calloc(*n ? *n : 1, sizeof(char *));
    if (!*out || !*owned) {
        snprintf(err->msg, sizeof(err->msg), "out of memory");
        return false;
    }
    size_t i;
    const json_t * m;
    json_array_foreach(msgs, i, m) {
        if (!json_is_object(m)) {
            snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu] must be an object, got %s", i, sj_type_name(m));
            return false;
        }
        const json_t * role = json_object_get(m, "role");
        const json_t * content = json_object_get(m, "content");
        if (!json_is_string(role)) {
            snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu].role must be a string", i);
            return false;
        }
        (*out)[i].role = json_string_value(role);
        if (!content || json_is_null(content)) {
            (*out)[i].content = "";
        } else if (json_is_string(content)) {
            (*out)[i].content = json_string_value(content);
        } else if (json_is_array(content)) {
            // OpenAI content parts: only text parts are supported; they are joined with newlines
            size_t total = 1, k;
            const json_t * part;
            json_array_foreach(content, k, part) {
                const json_t * type = json_object_get(part, "type");
                const json_t * text = json_object_get(part, "text");
                if (!json_is_object(part) || !json_is_string(type) || strcmp(json_string_value(type), "text") != 0 ||
                    !json_is_string(text)) {
                    snprintf(err->msg, sizeof(err->msg),
                             "\"messages\"[%zu].content[%zu] must be {\"type\":\"text\",\"text\":...}", i, k);
                    return false;
                }
                total += json_string_length(text) + 1;
            }
            char * joined = malloc(total);
            if (!joined) {
                snprintf(err->msg, sizeof(err->msg), "out of memory");
                return false;
            }
            size_t o = 0;
            json_array_foreach(content, k, part) {
                const json_t * text = json_object_get(part, "text");
                if (k > 0) {
                    joined[o++] = '\n';
                }
                memcpy(joined + o, json_string_value(text), json_string_length(text));
                o += json_string_length(text);
            }
            joined[o] = '\0';
            (*owned)[i] = joined;
            (*out)[i].content = joined;
        } else {
            snprintf(err->msg, sizeof(err->msg), "\"messages\"[%zu].content must be a string or an array, got %s", i,
                     sj_type_name(content));
            return false;
        }
    }
    return true;
}

// the formatted prompt (malloc'd) or NULL with err set
char * server_apply_chat_template(const struct server_context * sc, const json_t * msgs, bool add_ass,
                                  struct sj_err * err) {
    struct llama_chat_message * chat = NULL;
    char ** owned = NULL;
    size_t n = 0;
    char * buf = NULL;
    if (chat_messages(msgs, &chat, &owned, &n, err)) {
        int32_t cap = 4096;
        buf = malloc((size_t) cap);
        int32_t r = buf ? llama_chat_apply_template(sc->chat_template, chat, n, add_ass, buf, cap) : -1;
        if (buf && r > cap) {
            char * nb = realloc(buf, (size_t) r + 1);
            if (nb) {
                buf = nb;
                cap = r + 1;
                r = llama_chat_apply_template(sc->chat_template, chat, n, add_ass, buf, cap);
            } else {
                r = -1;
            }
        }
        if (r < 0 || r >= cap) {
            free(buf);
            buf = NULL;
            snprintf(err->msg, sizeof(err->msg), "failed to apply the chat template");
        } else {
            buf[r] = '\0';
        }
    }
    for (size_t i = 0; owned && i < n; i++) {
        free(owned[i]);
    }
    free(owned);
    free(chat);
    return buf;
}
