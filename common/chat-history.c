#include "chat-history.h"

#include "log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the rendering of msgs[0..n) (malloc'd); NULL when the template is not supported or out of memory
static char * apply_template(const char * tmpl, const struct llama_chat_message * msgs, size_t n, bool add_ass) {
    // a first guess with room for each message's markup; the exact size is asked for when it is short
    size_t guess = 1024;
    for (size_t i = 0; i < n; i++) {
        guess += strlen(msgs[i].content) + strlen(msgs[i].role) + 64;
    }
    int32_t cap = guess > (size_t) INT32_MAX / 2 ? INT32_MAX / 2 : (int32_t) guess;
    char * buf = malloc((size_t) cap);
    if (!buf) {
        return NULL;
    }
    int32_t r = llama_chat_apply_template(tmpl, msgs, n, add_ass, buf, cap);
    if (r >= cap) {
        // the first guess was short: r is the exact length needed
        char * grown = realloc(buf, (size_t) r + 1);
        if (!grown) {
            free(buf);
            return NULL;
        }
        buf = grown;
        cap = r + 1;
        r = llama_chat_apply_template(tmpl, msgs, n, add_ass, buf, cap);
    }
    if (r < 0 || r >= cap) {
        free(buf);
        return NULL;
    }
    buf[r] = '\0';
    return buf;
}

static bool template_works(const char * tmpl) {
    const struct llama_chat_message probe[] = { { "user", "test" } };
    char * out = apply_template(tmpl, probe, 1, true);
    const bool ok = out != NULL;
    free(out);
    return ok;
}

bool common_chat_history_init(struct common_chat_history * chat, const struct llama_model * model,
                              const char * override, char * err, size_t err_size) {
    memset(chat, 0, sizeof(*chat));
    const char * tmpl = override;
    if (tmpl) {
        if (!template_works(tmpl)) {
            snprintf(err, err_size, "the chat template '%s' is not supported (use one of the built-in template names)",
                     tmpl);
            return false;
        }
        chat->explicit_tmpl = true;
    } else {
        tmpl = llama_model_chat_template(model, NULL);
        chat->explicit_tmpl = tmpl != NULL;
        if (tmpl && !template_works(tmpl)) {
            LOG_WRN("the model's chat template is not supported, using chatml\n");
            tmpl = NULL;
        }
        if (!tmpl) {
            tmpl = "chatml";
        }
    }
    chat->tmpl = strdup(tmpl);
    if (!chat->tmpl) {
        snprintf(err, err_size, "out of memory");
        return false;
    }
    return true;
}

void common_chat_history_clear(struct common_chat_history * chat) {
    while (chat->n_msgs > 0) {
        common_chat_history_pop(chat);
    }
}

void common_chat_history_free(struct common_chat_history * chat) {
    common_chat_history_clear(chat);
    free(chat->roles);
    free(chat->contents);
    free(chat->tmpl);
    memset(chat, 0, sizeof(*chat));
}

bool common_chat_history_push(struct common_chat_history * chat, const char * role, const char * content) {
    if (chat->n_msgs == chat->cap_msgs) {
        size_t nc = chat->cap_msgs ? chat->cap_msgs * 2 : 8;
        char ** r = realloc(chat->roles, nc * sizeof(char *));
        if (!r) {
            return false;
        }
        chat->roles = r;
        char ** c = realloc(chat->contents, nc * sizeof(char *));
        if (!c) {
            return false;
        }
        chat->contents = c;
        chat->cap_msgs = nc;
    }
    char * rs = strdup(role);
    char * cs = strdup(content);
    if (!rs || !cs) {
        free(rs);
        free(cs);
        return false;
    }
    chat->roles[chat->n_msgs] = rs;
    chat->contents[chat->n_msgs] = cs;
    chat->n_msgs++;
    return true;
}

void common_chat_history_pop(struct common_chat_history * chat) {
    if (chat->n_msgs == 0) {
        return;
    }
    chat->n_msgs--;
    free(chat->roles[chat->n_msgs]);
    free(chat->contents[chat->n_msgs]);
}

// msgs[0..n) as llama_chat_message views of the history's strings (malloc'd, at least one slot)
static struct llama_chat_message * message_views(const struct common_chat_history * chat, size_t n) {
    struct llama_chat_message * msgs = calloc(n ? n : 1, sizeof(*msgs));
    if (!msgs) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        msgs[i].role = chat->roles[i];
        msgs[i].content = chat->contents[i];
    }
    return msgs;
}

char * common_chat_history_format(const struct common_chat_history * chat, bool add_ass) {
    struct llama_chat_message * msgs = message_views(chat, chat->n_msgs);
    if (!msgs) {
        return NULL;
    }
    char * out = apply_template(chat->tmpl, msgs, chat->n_msgs, add_ass);
    free(msgs);
    return out;
}

char * common_chat_history_add_and_format(struct common_chat_history * chat, const char * role, const char * content,
                                          bool add_ass) {
    char * past = chat->n_msgs > 0 ? common_chat_history_format(chat, false) : strdup("");
    if (!past) {
        return NULL;
    }
    if (!common_chat_history_push(chat, role, content)) {
        free(past);
        return NULL;
    }
    char * full = common_chat_history_format(chat, add_ass);
    const size_t n_past = strlen(past);
    if (!full || strlen(full) < n_past) {
        // a template whose rendering of the longer conversation does not extend the shorter one
        free(past);
        free(full);
        common_chat_history_pop(chat);
        return NULL;
    }
    const bool keep_nl = add_ass && n_past > 0 && past[n_past - 1] == '\n';
    const size_t n_new = strlen(full) - n_past;
    char * out = malloc(n_new + 2);
    if (out) {
        size_t k = 0;
        if (keep_nl) {
            out[k++] = '\n';
        }
        memcpy(out + k, full + n_past, n_new);
        out[k + n_new] = '\0';
    } else {
        common_chat_history_pop(chat);
    }
    free(past);
    free(full);
    return out;
}

char * common_chat_history_format_example(const struct common_chat_history * chat) {
    const struct llama_chat_message msgs[] = {
        { "system",    "You are a helpful assistant" },
        { "user",      "Hello" },
        { "assistant", "Hi there" },
        { "user",      "How are you?" },
    };
    return apply_template(chat->tmpl, msgs, sizeof(msgs) / sizeof(msgs[0]), true);
}
