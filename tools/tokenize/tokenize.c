// llama-tokenize: tokenizes a prompt with a model's vocabulary and prints the tokens (llama.cpp's program:
// same flags, same output).
//
//   llama-tokenize -m MODEL (-p TEXT | -f FILE | --stdin) [--ids] [--show-count] [--no-bos] [--no-escape]
//                  [--no-parse-special] [--log-disable]

#include "common.h"
#include "llama.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_usage(const char * argv0) {
    printf("usage: %s [options]\n\n", argv0);
    printf("The tokenize program tokenizes a prompt using a given model,\n");
    printf("and prints the resulting tokens to standard output.\n\n");
    printf("It needs a model file, a prompt, and optionally other flags\n");
    printf("to control the behavior of the tokenizer.\n\n");
    printf("    The possible options are:\n");
    printf("\n");
    printf("    -h, --help                           print this help and exit\n");
    printf("    -m MODEL_PATH, --model MODEL_PATH    path to model.\n");
    printf("    --ids                                if given, only print numerical token IDs, and not token strings.\n");
    printf("                                         The output format looks like [1, 2, 3], i.e. parseable by Python.\n");
    printf("    -f PROMPT_FNAME, --file PROMPT_FNAME read prompt from a file.\n");
    printf("    -p PROMPT, --prompt PROMPT           read prompt from the argument.\n");
    printf("    --stdin                              read prompt from standard input.\n");
    printf("    --no-bos                             do not ever add a BOS token to the prompt, even if normally the model uses a BOS token.\n");
    printf("    --no-escape                          do not escape input (such as \\n, \\t, etc.).\n");
    printf("    --no-parse-special                   do not parse control tokens.\n");
    printf("    --log-disable                        disable logs. Makes stderr quiet when loading the model.\n");
    printf("    --show-count                         print the total number of tokens.\n");
}

static void quiet_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) text;
    (void) user_data;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// \n \r \t \' \" \\ and \xHH become the characters they name; any other backslash stays as written
static size_t process_escapes(char * s, size_t n) {
    size_t o = 0;
    for (size_t i = 0; i < n; ++i) {
        if (s[i] == '\\' && i + 1 < n) {
            const char c = s[++i];
            switch (c) {
                case 'n':  s[o++] = '\n'; break;
                case 'r':  s[o++] = '\r'; break;
                case 't':  s[o++] = '\t'; break;
                case '\'': s[o++] = '\''; break;
                case '"':  s[o++] = '"';  break;
                case '\\': s[o++] = '\\'; break;
                case 'x':
                    if (i + 2 < n && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
                        s[o++] = (char) (hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
                        i += 2;
                    } else {
                        s[o++] = '\\';
                        s[o++] = 'x';
                    }
                    break;
                default:
                    s[o++] = '\\';
                    s[o++] = c;
                    break;
            }
        } else {
            s[o++] = s[i];
        }
    }
    return o;
}

int main(int argc, char ** argv) {
    const char * model_path = NULL;
    const char * prompt_arg = NULL;
    const char * prompt_file = NULL;
    bool from_stdin = false, print_ids = false, no_bos = false, no_escape = false, no_parse_special = false;
    bool log_disable = false, show_count = false;
    int n_sources = 0;

    if (argc <= 1) {
        print_usage(argv[0]);
        return 1;
    }
    for (int i = 1; i < argc; ++i) {
        const char * a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_usage(argv[0]);
            return 0;
        } else if (strcmp(a, "--ids") == 0) {
            print_ids = true;
        } else if (strcmp(a, "--stdin") == 0) {
            from_stdin = true;
            n_sources++;
        } else if (strcmp(a, "--no-bos") == 0) {
            no_bos = true;
        } else if (strcmp(a, "--no-escape") == 0) {
            no_escape = true;
        } else if (strcmp(a, "--no-parse-special") == 0) {
            no_parse_special = true;
        } else if (strcmp(a, "--log-disable") == 0) {
            log_disable = true;
        } else if (strcmp(a, "--show-count") == 0) {
            show_count = true;
        } else if ((strcmp(a, "-m") == 0 || strcmp(a, "--model") == 0) && i + 1 < argc) {
            model_path = argv[++i];
        } else if ((strcmp(a, "-p") == 0 || strcmp(a, "--prompt") == 0) && i + 1 < argc) {
            prompt_arg = argv[++i];
            n_sources++;
        } else if ((strcmp(a, "-f") == 0 || strcmp(a, "--file") == 0) && i + 1 < argc) {
            prompt_file = argv[++i];
            n_sources++;
        } else {
            fprintf(stderr, "error: unknown option or missing argument: %s\n", a);
            print_usage(argv[0]);
            return 1;
        }
    }
    if (!model_path) {
        fprintf(stderr, "Error: must specify --model.\n");
        return 1;
    }
    if (n_sources != 1) {
        fprintf(stderr, "Error: must specify exactly one of --prompt, --file or --stdin.\n");
        return 1;
    }

    char * prompt = NULL;
    size_t prompt_len = 0;
    if (prompt_file) {
        FILE * f = fopen(prompt_file, "rb");
        if (!f) {
            fprintf(stderr, "Error: could not open file '%s' for reading\n", prompt_file);
            return 1;
        }
        prompt = common_read_stream(f, &prompt_len);
        fclose(f);
        if (!prompt) {
            fprintf(stderr, "Error: could not read file '%s'\n", prompt_file);
            return 1;
        }
    } else if (from_stdin) {
        prompt = common_read_stream(stdin, &prompt_len);
        if (!prompt) {
            fprintf(stderr, "Error: could not read standard input\n");
            return 1;
        }
    } else {
        prompt_len = strlen(prompt_arg);
        prompt = malloc(prompt_len + 1);
        if (!prompt) {
            return 1;
        }
        memcpy(prompt, prompt_arg, prompt_len + 1);
    }
    if (prompt_len > (size_t) INT32_MAX) {
        fprintf(stderr, "Error: prompt of %zu bytes is too large\n", prompt_len);
        free(prompt);
        return 1;
    }

    if (log_disable) {
        llama_log_set(quiet_log, NULL);
    }
    llama_backend_init();

    struct llama_model_params mparams = llama_model_default_params();
    mparams.vocab_only = true;
    struct llama_model * model = llama_model_load_from_file(model_path, mparams);
    if (!model) {
        fprintf(stderr, "Error: could not load model from file '%s'.\n", model_path);
        free(prompt);
        return 1;
    }
    const struct llama_vocab * vocab = llama_model_get_vocab(model);

    if (!no_escape) {
        prompt_len = process_escapes(prompt, prompt_len);
    }

    const bool add_bos = llama_vocab_get_add_bos(vocab) && !no_bos;
    const bool parse_special = !no_parse_special;

    int32_t cap = (int32_t) prompt_len + 2 * (add_bos ? 1 : 0) + 2;
    llama_token * tokens = malloc((size_t) cap * sizeof(llama_token));
    int32_t n = tokens ? llama_tokenize(vocab, prompt, (int32_t) prompt_len, tokens, cap, add_bos, parse_special) : INT32_MIN;
    if (n < 0 && n != INT32_MIN) {
        cap = -n;
        llama_token * t2 = realloc(tokens, (size_t) cap * sizeof(llama_token));
        if (t2) {
            tokens = t2;
            n = llama_tokenize(vocab, prompt, (int32_t) prompt_len, tokens, cap, add_bos, parse_special);
        } else {
            n = INT32_MIN;
        }
    }
    if (n < 0) {
        fprintf(stderr, "Error: tokenization failed\n");
        free(tokens);
        free(prompt);
        llama_model_free(model);
        return 1;
    }

    if (print_ids) {
        printf("[");
        for (int32_t i = 0; i < n; ++i) {
            printf(i > 0 ? ", %d" : "%d", tokens[i]);
        }
        printf("]\n");
    } else {
        char small[256];
        for (int32_t i = 0; i < n; ++i) {
            char * piece = small;
            int32_t len = llama_token_to_piece(vocab, tokens[i], piece, (int32_t) sizeof(small), 0, true);
            if (len < 0) {
                piece = malloc((size_t) -len);
                len = piece ? llama_token_to_piece(vocab, tokens[i], piece, -len, 0, true) : 0;
            }
            printf("%6d -> '", tokens[i]);
            // the piece goes out as a C string, as llama.cpp prints it: an embedded NUL ends it
            const size_t shown = strnlen(piece ? piece : "", (size_t) (len > 0 ? len : 0));
            fwrite(piece ? piece : "", 1, shown, stdout);
            // llama.cpp reports undecodable pieces only on Windows consoles; elsewhere the bytes go out as they are
            printf("'\n");
            if (piece != small) {
                free(piece);
            }
        }
    }
    if (show_count) {
        printf("Total number of tokens: %d\n", n);
    }

    free(tokens);
    free(prompt);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
