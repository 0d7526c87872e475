#include "cli-chat.h"

#include "log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the rendering of msgs[0..n) (malloc'd); NULL when the template is not supported or out of memory
static char * apply_template(const char * tmpl, const struct llama_chat_message * msgs, size_t n) {
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
    int32_t r = llama_chat_apply_template(tmpl, msgs, n, true, buf, cap);
    if (r >= cap) {
        // the first guess was short: r is the exact length needed
        char * grown = realloc(buf, (size_t) r + 1);
        if (!grown) {
            free(buf);
            return NULL;
        }
        buf = grown;
        cap = r + 1;
        r = llama_chat_apply_template(tmpl, msgs, n, true, buf, cap);
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
    char * out = apply_template(tmpl, probe, 1);
    free(out);
    return out != NULL;
}

bool cli_chat_init(struct cli_chat * chat, const struct llama_model * model, const char * override, char * err,
                   size_t err_size) {
    memset(chat, 0, sizeof(*chat));
    const char * tmpl = override;
    if (tmpl) {
        if (!template_works(tmpl)) {
            snprintf(err, err_size, "the chat template '%s' is not supported (use one of the built-in template names)",
                     tmpl);
            return false;
        }
    } else {
        tmpl = llama_model_chat_template(model, NULL);
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

void cli_chat_clear(struct cli_chat * chat) {
    while (chat->n_msgs > 0) {
        cli_chat_pop(chat);
    }
}

void cli_chat_free(struct cli_chat * chat) {
    cli_chat_clear(chat);
    free(chat->roles);
    free(chat->contents);
    free(chat->tmpl);
    memset(chat, 0, sizeof(*chat));
}

bool cli_chat_push(struct cli_chat * chat, const char * role, const char * content) {
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

void cli_chat_pop(struct cli_chat * chat) {
    if (chat->n_msgs == 0) {
        return;
    }
    chat->n_msgs--;
    free(chat->roles[chat->n_msgs]);
    free(chat->contents[chat->n_msgs]);
}

char * cli_chat_format(const struct cli_chat * chat) {
    struct llama_chat_message * msgs = calloc(chat->n_msgs ? chat->n_msgs : 1, sizeof(*msgs));
    if (!msgs) {
        return NULL;
    }
    for (size_t i = 0; i < chat->n_msgs; i++) {
        msgs[i].role = chat->roles[i];
        msgs[i].content = chat->contents[i];
    }
    char * out = apply_template(chat->tmpl, msgs, chat->n_msgs);
    free(msgs);
    return out;
}
