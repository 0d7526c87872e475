// Chat messages (OpenAI shape) through the chat template: the Jinja interpreter when --jinja gave one
// (sc->chat_jinja), else / on its failure llama_chat_apply_template; built only when libllama has it
// (LLAMA_SERVER_HAVE_CHAT, see CMakeLists.txt).
#include "server-context.h"

#include "chat-markers.h"
#include "chat-parse.h"
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

// the template kwargs of a request, read once: the request's "chat_template_kwargs" (any JSON type; checked where
// the Jinja template uses it), --chat-template-kwargs parsed, and enable_thinking as they decide it
struct template_kwargs {
    const json_t * request;  // borrowed from the body; NULL when absent
    json_t * defaults;       // owned; NULL without --chat-template-kwargs
    bool enable_thinking;
};

// enable_thinking as llama.cpp's server decides it: on unless --reasoning-budget 0, overridden by the
// chat_template_kwargs (request over --chat-template-kwargs); a string there is an error
static bool read_template_kwargs(const struct server_context * sc, const json_t * body, struct template_kwargs * kw,
                                 struct sj_err * err) {
    kw->request = body ? json_object_get(body, "chat_template_kwargs") : NULL;
    kw->defaults = sc->params.default_template_kwargs ? json_loads(sc->params.default_template_kwargs, 0, NULL)
                                                      : NULL; // validated by the option parser
    kw->enable_thinking = sc->params.reasoning_budget != 0;
    const json_t * v = json_is_object(kw->request) ? json_object_get(kw->request, "enable_thinking") : NULL;
    if (!v) {
        v = json_object_get(kw->defaults, "enable_thinking");
    }
    if (json_is_boolean(v)) {
        kw->enable_thinking = json_is_true(v);
    } else if (json_is_string(v)) {
        snprintf(err->msg, sizeof(err->msg), "invalid type for \"enable_thinking\" (expected boolean, got string)");
        return false;
    }
    return true;
}

// the Jinja rendering, or NULL with the reason in err
// tools: the request's tools when they are in use (NULL with tool_choice "none": the template shows none, as
// llama.cpp's common_chat_templates_apply drops them)
static char * apply_jinja(const struct server_context * sc, const json_t * msgs, bool add_ass,
                          const struct template_kwargs * kw, const json_t * tools, struct sj_err * err) {
    const json_t * kwargs = kw->request;
    if (kwargs && !json_is_null(kwargs) && !json_is_object(kwargs)) {
        snprintf(err->msg, sizeof(err->msg), "\"chat_template_kwargs\" must be an object, got %s",
                 sj_type_name(kwargs));
        return NULL;
    }
    // --chat-template-kwargs: the server's defaults, each key overridden by the request's
    json_t * merged = kw->defaults ? json_deep_copy(kw->defaults) : NULL;
    if (merged && json_is_object(kwargs)) {
        json_object_update(merged, (json_t *) kwargs);
    }
    // thinking turned off (--reasoning-budget 0) reaches the template unless a kwarg says otherwise
    if (!kw->enable_thinking) {
        if (!merged) {
            merged = json_is_object(kwargs) ? json_deep_copy(kwargs) : json_object();
        }
        if (merged && !json_object_get(merged, "enable_thinking")) {
            json_object_set_new(merged, "enable_thinking", json_false());
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

// llama.cpp's Llama 3.x builtin tools (handle_builtin_tool in common/chat.cpp)
static const char * tool_name(const json_t * tool) {
    return json_string_value(json_object_get(json_object_get(tool, "function"), "name"));
}

// minja's chat_template::add_system (which llama.cpp uses): the text joins an existing system message after a blank
// line, or becomes the first message (new reference)
static json_t * add_system(const json_t * msgs, const char * text) {
    json_t * out = json_deep_copy(msgs);
    if (!out) {
        return NULL;
    }
    json_t * first = json_array_get(out, 0);
    const char * role = json_string_value(json_object_get(first, "role"));
    const char * sys = json_string_value(json_object_get(first, "content"));
    if (role && strcmp(role, "system") == 0 && sys) {
        const size_t n = strlen(sys) + strlen(text) + 3;
        char * joined = malloc(n);
        if (!joined) {
            json_decref(out);
            return NULL;
        }
        snprintf(joined, n, "%s\n\n%s", sys, text);
        json_array_set_new(out, 0, json_pack("{s:s, s:s}", "role", "system", "content", joined));
        free(joined);
    } else {
        json_array_insert_new(out, 0, json_pack("{s:s, s:s}", "role", "system", "content", text));
    }
    return out;
}

static bool ends_with(const char * s, const char * suffix) {
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

// a prompt that ends inside an opened thinking block: closed when thinking is off, else the output starts in it
// (llama.cpp's Hermes 2 Pro, DeepSeek R1 and Command R7B handlers)
static char * thinking_open_prompt(char * prompt, enum common_chat_format format, bool enable_thinking,
                                   bool * forced_open) {
    const char * open = format == COMMON_CHAT_FORMAT_COMMAND_R7B ? "<|START_THINKING|>" : "<think>\n";
    const char * close = format == COMMON_CHAT_FORMAT_COMMAND_R7B ? "<|END_THINKING|>" : "</think>";
    if (format != COMMON_CHAT_FORMAT_HERMES_2_PRO && format != COMMON_CHAT_FORMAT_DEEPSEEK_R1 &&
        format != COMMON_CHAT_FORMAT_COMMAND_R7B) {
        return prompt;
    }
    if (!ends_with(prompt, open)) {
        return prompt;
    }
    if (enable_thinking) {
        *forced_open = true;
        return prompt;
    }
    const size_t n = strlen(prompt), k = strlen(close);
    char * p = realloc(prompt, n + k + 1);
    if (!p) {
        free(prompt);
        return NULL;
    }
    memcpy(p + n, close, k + 1);
    return p;
}

// the formatted prompt (malloc'd) or NULL with err set
char * server_apply_chat_template(const struct server_context * sc, const json_t * msgs, bool add_ass,
                                  const json_t * body, struct sj_err * err) {
    return server_apply_chat_template_params(sc, msgs, add_ass, body, NULL, err);
}

char * server_apply_chat_template_params(const struct server_context * sc, const json_t * msgs, bool add_ass,
                                         const json_t * body, struct server_chat_params * cp, struct sj_err * err) {
    struct server_chat_params local;
    if (!cp) {
        cp = &local;
    }
    memset(cp, 0, sizeof(*cp));
    cp->format = COMMON_CHAT_FORMAT_CONTENT_ONLY;
    // llama.cpp's oaicompat_chat_params_parse: tools count unless tool_choice is "none"; they exclude a grammar
    const json_t * tools = body ? json_object_get(body, "tools") : NULL;
    const json_t * tc = body ? json_object_get(body, "tool_choice") : NULL;
    if (tools && !json_is_null(tools) && !json_is_array(tools)) {
        snprintf(err->msg, sizeof(err->msg), "\"tools\" must be an array, got %s", sj_type_name(tools));
        return NULL;
    }
    const char * choice = json_is_string(tc) ? json_string_value(tc) : "auto";
    if (strcmp(choice, "auto") != 0 && strcmp(choice, "none") != 0 && strcmp(choice, "required") != 0) {
        snprintf(err->msg, sizeof(err->msg), "Invalid tool_choice: %.200s", choice);
        return NULL;
    }
    const bool has_tools = json_is_array(tools) && json_array_size(tools) > 0 && strcmp(choice, "none") != 0;
    if (has_tools && json_object_get(body, "grammar")) {
        snprintf(err->msg, sizeof(err->msg), "Cannot use custom grammar constraints with tools.");
        return NULL;
    }
    const json_t * rfj = body ? json_object_get(body, "reasoning_format") : NULL;
    enum common_reasoning_format rf;
    if (rfj && !json_is_null(rfj) && (!json_is_string(rfj) || !common_reasoning_format_from_name(json_string_value(rfj), &rf))) {
        snprintf(err->msg, sizeof(err->msg), "Unknown reasoning format: %.200s",
                 json_is_string(rfj) ? json_string_value(rfj) : sj_type_name(rfj));
        return NULL;
    }
    struct template_kwargs kw;
    if (!read_template_kwargs(sc, body, &kw, err)) {
        json_decref(kw.defaults);
        return NULL;
    }
    const bool enable_thinking = kw.enable_thinking;
    cp->parse_tool_calls = has_tools || (body && json_is_true(json_object_get(body, "parse_tool_calls")));
    json_t * tweaked = NULL;
    bool want_grammar = false, parallel = false;
    const json_t * schema_for_grammar = NULL;
    json_t * empty_schema = json_object(); // what a response_format without its schema stands for (llama.cpp: {})
    if (sc->chat_jinja) {
        bool builtin = false;
        size_t i;
        const json_t * t;
        json_array_foreach(has_tools ? tools : NULL, i, t) {
            builtin |= chat_llama3_builtin_param(tool_name(t)) != NULL;
        }
        const json_t * schema = body && empty_schema ? server_response_schema(body, empty_schema) : NULL;
        cp->format = common_chat_detect_format(sc->chat_template, has_tools, schema != NULL, builtin);
        const json_t * m = msgs;
        if (cp->format == COMMON_CHAT_FORMAT_GENERIC && has_tools) {
            tweaked = add_system(msgs, "Respond in JSON format, either with `tool_call` (a request to call tools) or "
                                       "with `response` reply to the user's request");
            m = tweaked ? tweaked : msgs;
        }
        if (has_tools) {
            // the format's tool-call grammar (llama.cpp's common_chat_params_init_*); the thinking block state it
            // needs is known only once the prompt is rendered, so it is built after that (below)
            want_grammar = true;
            schema_for_grammar = schema;
            parallel = json_is_true(json_object_get(body, "parallel_tool_calls")) &&
                       sc->chat_jinja->caps.supports_parallel_tool_calls;
        }
        if (has_tools && !sc->chat_jinja->caps.supports_tools) {
            // minja's tool polyfill (llama.cpp): a template that does not show tools gets them in the system text
            char * list = json_dumps(tools, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            const char * intro = "You can call any of the following tools to satisfy the user's requests: ";
            char * text = list ? malloc(strlen(intro) + strlen(list) + 1) : NULL;
            json_t * more = NULL;
            if (text) {
                strcpy(text, intro);
                strcat(text, list);
                more = add_system(m, text);
            }
            free(text);
            free(list);
            if (more) {
                json_decref(tweaked);
                tweaked = more;
                m = more;
            }
        }
        msgs = m;
    }
    struct llama_chat_message * chat = NULL;
    char ** owned = NULL;
    size_t n = 0;
    char * buf = NULL;
    // the message checks (and their error texts) are the same on both paths
    if (chat_messages(msgs, &chat, &owned, &n, err)) {
        if (sc->chat_jinja) {
            buf = apply_jinja(sc, msgs, add_ass, &kw, has_tools ? tools : NULL, err);
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
    json_decref(tweaked);
    json_decref(kw.defaults);
    if (buf && sc->chat_jinja && add_ass) {
        buf = thinking_open_prompt(buf, cp->format, enable_thinking, &cp->thinking_forced_open);
        if (!buf) {
            snprintf(err->msg, sizeof(err->msg), "out of memory");
        }
    }
    if (buf && want_grammar) {
        struct common_chat_grammar_inputs gin = {
            cp->format, tools, strcmp(choice, "required") == 0, parallel, cp->thinking_forced_open, schema_for_grammar,
        };
        char gerr[256] = "";
        if (!common_chat_grammar_init(&gin, &cp->tool_grammar, gerr, sizeof(gerr))) {
            snprintf(err->msg, sizeof(err->msg), "failed to build the tool-call grammar: %.200s", gerr);
            free(buf);
            buf = NULL;
        }
    }
    json_decref(empty_schema);
    if (!buf || cp == &local) {
        common_chat_grammar_free(&cp->tool_grammar);
    }
    return buf;
}
