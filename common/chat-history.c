#include "chat-history.h"

#include "chat-template-jinja.h"
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

// the text of a special token (BOS/EOS) as the template sees it; "" when the vocabulary has none (malloc'd)
static char * token_text(const struct llama_vocab * vocab, llama_token tok) {
    char buf[256];
    int32_t n = tok == LLAMA_TOKEN_NULL ? 0 : llama_token_to_piece(vocab, tok, buf, (int32_t) sizeof(buf), 0, true);
    if (n < 0 || n >= (int32_t) sizeof(buf)) {
        n = 0;
    }
    buf[n] = '\0';
    return strdup(buf);
}

// the Jinja template for `src` (NULL when it is a built-in name, does not parse or cannot render a probe)
static struct common_chat_jinja * jinja_init(const char * src, const struct llama_model * model) {
    if (!common_chat_jinja_is_template(src)) {
        return NULL;
    }
    const struct llama_vocab * vocab = model ? llama_model_get_vocab(model) : NULL;
    char * bos = vocab ? token_text(vocab, llama_vocab_bos(vocab)) : strdup("");
    char * eos = vocab ? token_text(vocab, llama_vocab_eos(vocab)) : strdup("");
    char err[512] = "";
    struct common_chat_jinja * cj = bos && eos ? common_chat_jinja_init(src, bos, eos, err, sizeof(err)) : NULL;
    free(bos);
    free(eos);
    if (!cj) {
        LOG_WRN("the chat template does not parse as Jinja (%s); using the built-in templates\n", err);
        return NULL;
    }
    cj->strip_bos = vocab && llama_vocab_get_add_bos(vocab);
    cj->strip_eos = vocab && llama_vocab_get_add_eos(vocab);
    return cj;
}

bool common_chat_history_init(struct common_chat_history * chat, const struct llama_model * model,
                              const char * override, bool use_jinja, char * err, size_t err_size) {
    memset(chat, 0, sizeof(*chat));
    const char * tmpl = override;
    if (!tmpl) {
        tmpl = llama_model_chat_template(model, NULL);
    }
    if (use_jinja && tmpl) {
        chat->jinja = jinja_init(tmpl, model);
    }
    if (override) {
        const bool builtin_works = template_works(tmpl);
        if (!builtin_works && !chat->jinja) {
            snprintf(err, err_size, "the chat template '%s' is not supported (use one of the built-in template names)",
                     tmpl);
            return false;
        }
        chat->explicit_tmpl = true;
        if (!builtin_works) {
            tmpl = "chatml"; // only used when a Jinja rendering fails
        }
    } else {
        chat->explicit_tmpl = tmpl != NULL;
        if (tmpl && !template_works(tmpl)) {
            if (!chat->jinja) {
                LOG_WRN("the model's chat template is not supported, using chatml\n");
            }
            tmpl = NULL;
        }
        if (!tmpl) {
            tmpl = "chatml";
        }
    }
    chat->tmpl = strdup(tmpl);
    if (!chat->tmpl) {
        common_chat_jinja_free(chat->jinja);
        chat->jinja = NULL;
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
    free(chat->template_kwargs);
    common_chat_jinja_free(chat->jinja);
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

// the Jinja rendering of msgs[0..n); NULL (after a warning) when it fails, so the caller falls back
static char * jinja_render(const struct common_chat_history * chat, const struct llama_chat_message * msgs, size_t n,
                           bool add_ass) {
    json_t * arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        if (json_array_append_new(arr, json_pack("{s:s, s:s}", "role", msgs[i].role, "content", msgs[i].content))) {
            json_decref(arr);
            arr = NULL;
        }
    }
    if (!arr) {
        return NULL;
    }
    char err[512] = "";
    json_t * kwargs = chat->template_kwargs ? json_loads(chat->template_kwargs, 0, NULL) : NULL;
    char * out = common_chat_jinja_apply(chat->jinja, arr, NULL, add_ass, kwargs, err, sizeof(err));
    json_decref(kwargs);
    json_decref(arr);
    if (!out) {
        LOG_WRN("the Jinja chat template failed (%s); using the built-in template\n", err);
    }
    return out;
}

static char * render(const struct common_chat_history * chat, const struct llama_chat_message * msgs, size_t n,
                     bool add_ass) {
    if (chat->jinja) {
        char * out = jinja_render(chat, msgs, n, add_ass);
        if (out) {
            return out;
        }
    }
    return apply_template(chat->tmpl, msgs, n, add_ass);
}

char * common_chat_history_format(const struct common_chat_history * chat, bool add_ass) {
    struct llama_chat_message * msgs = message_views(chat, chat->n_msgs);
    if (!msgs) {
        return NULL;
    }
    char * out = render(chat, msgs, chat->n_msgs, add_ass);
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
    return render(chat, msgs, sizeof(msgs) / sizeof(msgs[0]), true);
}
