// Chat messages (OpenAI shape) through the chat template: the Jinja interpreter when --jinja gave one
// (sc->chat_jinja), else / on its failure llama_chat_apply_template; built only when libllama has it
// (LLAMA_SERVER_HAVE_CHAT, see CMakeLists.txt).
#include "server-context.h"

#include "chat-template-jinja.h"

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

static char * token_text(const struct llama_vocab * vocab, llama_token tok) {
    char buf[256];
    int32_t n = tok == LLAMA_TOKEN_NULL ? 0 : llama_token_to_piece(vocab, tok, buf, (int32_t) sizeof(buf), 0, true);
    if (n < 0 || n >= (int32_t) sizeof(buf)) {
        n = 0;
    }
    buf[n] = '\0';
    return strdup(buf);
}

struct common_chat_jinja * server_chat_jinja_init(const struct server_context * sc, const char * tmpl) {
    if (!common_chat_jinja_is_template(tmpl)) {
        return NULL;
    }
    char * bos = token_text(sc->vocab, llama_vocab_bos(sc->vocab));
    char * eos = token_text(sc->vocab, llama_vocab_eos(sc->vocab));
    char err[512] = "";
    struct common_chat_jinja * cj = bos && eos ? common_chat_jinja_init(tmpl, bos, eos, err, sizeof(err)) : NULL;
    free(bos);
    free(eos);
    if (!cj) {
        SRV_WRN("%s: the chat template does not parse as Jinja (%s); using the built-in templates\n", __func__, err);
        return NULL;
    }
    cj->strip_bos = llama_vocab_get_add_bos(sc->vocab);
    cj->strip_eos = llama_vocab_get_add_eos(sc->vocab);
    return cj;
}

// the Jinja rendering, or NULL with the reason in err
static char * apply_jinja(const struct server_context * sc, const json_t * msgs, bool add_ass, const json_t * body,
                          struct sj_err * err) {
    const json_t * tools = body ? json_object_get(body, "tools") : NULL;
    const json_t * kwargs = body ? json_object_get(body, "chat_template_kwargs") : NULL;
    if (tools && !json_is_null(tools) && !json_is_array(tools)) {
        snprintf(err->msg, sizeof(err->msg), "\"tools\" must be an array, got %s", sj_type_name(tools));
        return NULL;
    }
    if (kwargs && !json_is_null(kwargs) && !json_is_object(kwargs)) {
        snprintf(err->msg, sizeof(err->msg), "\"chat_template_kwargs\" must be an object, got %s", sj_type_name(kwargs));
        return NULL;
    }
    // --chat-template-kwargs: the server's defaults, each key overridden by the request's
    json_t * merged = NULL;
    if (sc->params.default_template_kwargs) {
        merged = json_loads(sc->params.default_template_kwargs, 0, NULL); // validated by the option parser
        if (merged && json_is_object(kwargs)) {
            json_object_update(merged, (json_t *) kwargs);
        }
    }
    char * out = common_chat_jinja_apply(sc->chat_jinja, msgs, tools, add_ass, merged ? merged : kwargs, err->msg,
                                         sizeof(err->msg));
    json_decref(merged);
    return out;
}

static char * apply_builtin(const struct server_context * sc, const struct llama_chat_message * chat, size_t n,
                            bool add_ass, struct sj_err * err) {
    int32_t cap = 4096;
    char * buf = malloc((size_t) cap);
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
        snprintf(err->msg, sizeof(err->msg), "failed to apply the chat template");
        return NULL;
    }
    buf[r] = '\0';
    return buf;
}

// the formatted prompt (malloc'd) or NULL with err set
char * server_apply_chat_template(const struct server_context * sc, const json_t * msgs, bool add_ass,
                                  const json_t * body, struct sj_err * err) {
    struct llama_chat_message * chat = NULL;
    char ** owned = NULL;
    size_t n = 0;
    char * buf = NULL;
    // the message checks (and their error texts) are the same on both paths
    if (chat_messages(msgs, &chat, &owned, &n, err)) {
        if (sc->chat_jinja) {
            buf = apply_jinja(sc, msgs, add_ass, body, err);
            if (!buf) {
                SRV_WRN("%s: the Jinja chat template failed (%s); trying the built-in template\n", __func__, err->msg);
                struct sj_err jerr = *err;
                buf = apply_builtin(sc, chat, n, add_ass, err);
                if (!buf) {
                    *err = jerr; // the Jinja message says more than "failed to apply"
                }
            }
        } else {
            buf = apply_builtin(sc, chat, n, add_ass, err);
        }
    }
    for (size_t i = 0; owned && i < n; i++) {
        free(owned[i]);
    }
    free(owned);
    free(chat);
    return buf;
}
