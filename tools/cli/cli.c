// llama-cli: llama.cpp's chat program. Loads the model, prints a banner, then reads user messages ("\n> " prompt,
// or -p as the first one), renders the whole conversation with the chat template and streams the assistant's
// reply, keeping it in the history. Commands: /exit, /regen, /clear, /read FILE. Plain completion is
// llama-completion's job (-no-cnv is refused here).
#include "arg.h"
#include "chat-history.h"
#include "cli-gen.h"
#include "console-input.h"
#include "common.h"
#include "log.h"
#include "llama.h"

#include <limits.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// a -p prompt longer than this is echoed cut, as llama.cpp does
#define CLI_PROMPT_ECHO_MAX 500

// params.verbosity before parsing: still this afterwards means no -v / -lv was given
#define CLI_VERBOSITY_UNSET INT_MIN

static void print_usage(int argc, char ** argv) {
    (void) argc;
    printf("\nexample usage:\n");
    printf("\n  chat (conversation): %s -m your_model.gguf -sys \"You are a helpful assistant\"\n", argv[0]);
    printf("\n  one reply and exit:  %s -m your_model.gguf -p \"Hello\" -st\n", argv[0]);
    printf("\n");
}

// by default llama-cli shows only errors from the libraries: their other messages wait for -v / -lv
static void log_errors_only(enum ggml_log_level level, const char * text, void * user_data) {
    static enum ggml_log_level last = GGML_LOG_LEVEL_NONE;
    if (level != GGML_LOG_LEVEL_CONT) {
        last = level;
    }
    if (last == GGML_LOG_LEVEL_ERROR) {
        common_log_add(GGML_LOG_LEVEL_ERROR, "%s", text);
        return;
    }
    common_log_default_callback(level, text, user_data);
}

static void out_str(const char * s) {
    fputs(s, stdout);
    fflush(stdout);
}

static void emit_stdout(const char * text, size_t len, void * user_data) {
    (void) user_data;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
}

static void cli_error(const char * fmt, ...) COMMON_LOG_ATTRIBUTE_FORMAT(1, 2);

static void cli_error(const char * fmt, ...) {
    fflush(stdout);
    va_list args;
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fflush(stderr);
}

static bool starts_with(const char * s, const char * prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

// s without leading and trailing blanks, in place
static char * strip(char * s) {
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) {
        s[--n] = '\0';
    }
    return s;
}

// a growable string (the text that /read adds to the next message)
struct cli_str {
    char * buf;
    size_t len;
    size_t cap;
};

static bool str_append(struct cli_str * s, const char * text, size_t n) {
    if (s->len + n + 1 > s->cap) {
        size_t nc = s->cap ? s->cap : 256;
        while (nc < s->len + n + 1) {
            nc *= 2;
        }
        char * grown = realloc(s->buf, nc);
        if (!grown) {
            return false;
        }
        s->buf = grown;
        s->cap = nc;
    }
    memcpy(s->buf + s->len, text, n);
    s->len += n;
    s->buf[s->len] = '\0';
    return true;
}

static bool str_append_z(struct cli_str * s, const char * text) {
    return str_append(s, text, strlen(text));
}

static void str_clear(struct cli_str * s) {
    s->len = 0;
    if (s->buf) {
        s->buf[0] = '\0';
    }
}

static const char * base_name(const char * path) {
    const char * slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void print_banner(const struct common_params * params) {
    printf("\n");
    printf("build      : b%d-%s\n", LLAMA_BUILD_NUMBER, LLAMA_COMMIT);
    printf("model      : %s\n", base_name(params->model.path));
    printf("modalities : text\n");
    if (params->system_prompt && params->system_prompt[0]) {
        printf("using custom system prompt\n");
    }
    printf("\n");
    printf("available commands:\n");
    printf("  /exit or Ctrl+C     stop or exit\n");
    printf("  /regen              regenerate the last response\n");
    printf("  /clear              clear the chat history\n");
    printf("  /read               add a text file\n");
    printf("\n");
    fflush(stdout);
}

static bool add_system_prompt(struct common_chat_history * chat, const struct common_params * params) {
    if (params->system_prompt && params->system_prompt[0]) {
        return common_chat_history_push(chat, "system", params->system_prompt);
    }
    return true;
}

// /read FNAME: the file's text, introduced by the model's FIM separator and the name when it has one, else by a
// "--- File: NAME ---" line, goes in front of the next message. false when the file cannot be read.
static bool read_input_file(struct cli_str * pending, const struct llama_vocab * vocab, const char * fname) {
    size_t len = 0;
    char * text = common_read_file(fname, &len);
    if (!text) {
        return false;
    }
    bool ok = true;
    const llama_token fim_sep = llama_vocab_fim_sep(vocab);
    if (fim_sep != LLAMA_TOKEN_NULL) {
        int32_t plen = 0;
        char * piece = common_token_to_piece(vocab, fim_sep, true, &plen);
        ok = piece && str_append(pending, piece, (size_t) plen) && str_append_z(pending, fname) &&
             str_append_z(pending, "\n");
        free(piece);
    } else {
        ok = str_append_z(pending, "--- File: ") && str_append_z(pending, fname) && str_append_z(pending, " ---\n");
    }
    ok = ok && str_append(pending, text, len);
    free(text);
    return ok;
}

int main(int argc, char ** argv) {
    setlocale(LC_NUMERIC, "C");

    struct common_params params = common_params_default();
    params.verbosity = CLI_VERBOSITY_UNSET;
    common_init();

    if (!common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_CLI, print_usage)) {
        common_params_free(&params);
        return 1;
    }
    if (params.verbosity == CLI_VERBOSITY_UNSET) {
        // errors only (llama.cpp's llama-cli default); -v / -lv N choose otherwise
        params.verbosity = -1;
        common_log_set_verbosity_thold(-1);
        llama_log_set(log_errors_only, NULL);
    }

    if (params.conversation_mode == COMMON_CONVERSATION_MODE_DISABLED) {
        cli_error("--no-conversation is not supported by llama-cli\n");
        cli_error("please use llama-completion instead\n");
        common_params_free(&params);
        return 1;
    }
    if (params.speculative.n_types > 0 && params.speculative.types[0] != COMMON_SPECULATIVE_TYPE_NONE) {
        cli_error("warning: speculative decoding is not supported by llama-cli yet; generating without it\n");
    }
    if (params.sampling.backend_sampling) {
        cli_error("warning: backend sampling is not supported by llama-cli yet; sampling on the CPU\n");
    }

    int rc = 1;
    struct common_init_result init = { NULL, NULL };
    struct common_chat_history chat;
    struct cli_gen gen;
    struct cli_str pending = { NULL, 0, 0 };
    memset(&chat, 0, sizeof(chat));
    memset(&gen, 0, sizeof(gen));

    llama_backend_init();
    common_console_signals_install();

    out_str("\nLoading model... ");
    init = common_init_from_params(&params);
    if (!init.model || !init.context) {
        cli_error("\nFailed to load the model\n");
        goto done;
    }
    out_str("\n");

    char err[512];
    if (!common_chat_history_init(&chat, init.model, params.chat_template, params.use_jinja, err, sizeof(err))) {
        cli_error("error: %s\n", err);
        goto done;
    }
    if (params.default_template_kwargs && !(chat.template_kwargs = strdup(params.default_template_kwargs))) {
        cli_error("error: out of memory\n");
        goto done;
    }
    cli_gen_init(&gen, init.context, &params);
    const struct llama_vocab * vocab = llama_model_get_vocab(init.model);

    if (!add_system_prompt(&chat, &params)) {
        cli_error("error: out of memory\n");
        goto done;
    }
    print_banner(&params);

    bool use_prompt = params.prompt && params.prompt[0];
    rc = 0;
    for (;;) {
        if (common_console_interrupted()) {
            break; // Ctrl+C while loading or between turns
        }
        char * buffer = NULL;
        if (use_prompt) {
            const size_t n = strlen(params.prompt);
            if (n > CLI_PROMPT_ECHO_MAX) {
                printf("\n> %.*s ... (truncated)\n", CLI_PROMPT_ECHO_MAX, params.prompt);
            } else {
                printf("\n> %s\n", params.prompt);
            }
            buffer = strdup(params.prompt);
            use_prompt = false; // only the first message
            if (!buffer) {
                cli_error("error: out of memory\n");
                rc = 1;
                break;
            }
            const size_t bl = strlen(buffer);
            if (bl > 0 && buffer[bl - 1] == '\n') {
                buffer[bl - 1] = '\0';
            }
        } else {
            out_str("\n> ");
            enum common_console_read_status st = common_console_read_message(stdin, params.multiline_input, &buffer);
            if (st == COMMON_CONSOLE_READ_ERROR) {
                cli_error("error: out of memory\n");
                rc = 1;
                break;
            }
            if (st != COMMON_CONSOLE_READ_OK) {
                break; // end of input or Ctrl+C at the prompt
            }
        }
        out_str("\n");

        if (common_console_interrupted()) {
            free(buffer);
            break;
        }
        if (buffer[0] == '\0') {
            free(buffer);
            continue;
        }

        bool add_user_msg = true;
        char * regen_saved = NULL; // the reply /regen replaces, restored when the new one fails
        if (starts_with(buffer, "/exit")) {
            free(buffer);
            break;
        } else if (starts_with(buffer, "/regen")) {
            if (chat.n_msgs < 2) {
                cli_error("No message to regenerate.\n");
                free(buffer);
                continue;
            }
            regen_saved = strdup(chat.contents[chat.n_msgs - 1]);
            common_chat_history_pop(&chat);
            add_user_msg = false;
        } else if (starts_with(buffer, "/clear")) {
            common_chat_history_clear(&chat);
            str_clear(&pending);
            if (!add_system_prompt(&chat, &params)) {
                cli_error("error: out of memory\n");
            }
            out_str("Chat history cleared.\n");
            free(buffer);
            continue;
        } else if (starts_with(buffer, "/read ")) {
            const char * fname = strip(buffer + 6);
            if (!read_input_file(&pending, vocab, fname)) {
                cli_error("file does not exist or cannot be opened: '%s'\n", fname);
            } else {
                printf("Loaded text from '%s'\n", fname);
                fflush(stdout);
            }
            free(buffer);
            continue;
        } else if (!str_append_z(&pending, buffer)) {
            cli_error("error: out of memory\n");
            free(buffer);
            continue;
        }
        free(buffer);

        if (add_user_msg) {
            if (!common_chat_history_push(&chat, "user", pending.buf ? pending.buf : "")) {
                cli_error("error: out of memory\n");
                continue;
            }
            str_clear(&pending);
        }

        char * prompt = common_chat_history_format(&chat, true);
        char * content = NULL;
        struct cli_gen_timings t;
        bool context_full = false;
        enum cli_gen_status gs = CLI_GEN_FAILED;
        if (!prompt) {
            snprintf(err, sizeof(err), "failed to apply the chat template");
        } else {
            if (params.verbose_prompt) {
                printf("%s\n\n", prompt);
                fflush(stdout);
            }
            gs = cli_gen_reply(&gen, prompt, emit_stdout, NULL, &content, &t, &context_full, err, sizeof(err));
        }
        free(prompt);

        if (gs == CLI_GEN_FAILED || !content) {
            // the turn is dropped so that the next message starts from a consistent history
            cli_error("Error: %s\n", gs == CLI_GEN_FAILED ? err : "out of memory");
            if (add_user_msg) {
                common_chat_history_pop(&chat);
            } else if (regen_saved) {
                common_chat_history_push(&chat, "assistant", regen_saved);
            }
            free(regen_saved);
            free(content);
            continue;
        }
        free(regen_saved);
        if (!common_chat_history_push(&chat, "assistant", content)) {
            cli_error("error: out of memory\n");
        }
        free(content);
        if (gs == CLI_GEN_INTERRUPTED) {
            common_console_interrupt_clear();
        }
        if (context_full) {
            cli_error("\n(the context is full: the reply was cut; use /clear, a larger -c or "
                      "--context-shift)\n");
        }
        out_str("\n");

        if (params.show_timings) {
            const double pp = t.t_prompt_us > 0 ? 1e6 * t.n_prompt / (double) t.t_prompt_us : 0.0;
            const double tg = t.t_gen_us > 0 ? 1e6 * t.n_gen / (double) t.t_gen_us : 0.0;
            printf("\n[ Prompt: %.1f t/s | Generation: %.1f t/s ]\n", pp, tg);
            fflush(stdout);
        }
        if (params.single_turn) {
            break;
        }
    }

    out_str("\nExiting...\n");

done:
    free(pending.buf);
    cli_gen_free(&gen);
    common_chat_history_free(&chat);
    common_init_result_free(&init);
    common_params_free(&params);
    llama_backend_free();
    return rc;
}
