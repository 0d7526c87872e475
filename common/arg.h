// Command-line parsing for the programs: one option table with llama.cpp's flag names (short and long
// forms), LLAMA_ARG_* environment variables, and the set of programs each option applies to.
//
// Environment variables are applied first, then the command line (which overrides them). After parsing:
// n_threads -1 becomes the number of physical cores, escapes in the prompt are processed (unless
// --no-escape), and the kv-override list is terminated.
#pragma once

#include "common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum common_arg_status {
    COMMON_ARG_OK    =  0,
    COMMON_ARG_EXIT  =  1, // -h / --version was handled: the program should exit with status 0
    COMMON_ARG_ERROR = -1, // err holds one line saying what is wrong
};

// Parses argv into params for program `ex`; never prints (except -h / --version output to stdout) and
// never exits. On COMMON_ARG_ERROR `err` (if not NULL) holds the message without a trailing newline;
// params may then be partly updated (callers exit; common_params_free still releases everything).
enum common_arg_status common_params_parse_ex(int argc, char ** argv, struct common_params * params,
                                              enum llama_example ex, char * err, size_t err_size);

// llama.cpp's entry point: prints "error: ..." to stderr and returns false on a bad command line;
// on -h prints the usage (then print_usage(argc, argv) if given) and exits with status 0.
bool common_params_parse(int argc, char ** argv, struct common_params * params, enum llama_example ex,
                         void (*print_usage)(int, char **));

// the usage text of every option that applies to `ex`
void common_params_print_usage(FILE * out, enum llama_example ex);

// introspection for tests and for completion scripts
int32_t      common_arg_count(void);
// names of option i (NULL-terminated list of up to 4), its value hint (NULL for a flag), its env variable
const char * const * common_arg_names(int32_t i);
const char * common_arg_value_hint(int32_t i);
const char * common_arg_env(int32_t i, char * buf, size_t buf_size);
bool         common_arg_applies(int32_t i, enum llama_example ex);

// llama.cpp's string_parse_kv_override for programs with their own option loop (llama-quantize): one
// --override-kv value KEY=TYPE:VALUE (TYPE int, float, bool or str) into *out. NULL on success, else what
// is wrong (a static buffer, valid until the next call).
const char * common_parse_kv_override(const char * data, struct llama_model_kv_override * out);

#ifdef __cplusplus
}
#endif
