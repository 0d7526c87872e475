// common logging for the programs: LOG (plain output to stdout), LOG_INF / LOG_WRN / LOG_ERR / LOG_DBG
// (stderr), LOG_CNT (continue the previous line, same stream and level).
//
// A message is printed when its verbosity is <= the threshold (common_log_set_verbosity_thold):
// LOG / LOG_INF / LOG_WRN / LOG_ERR have verbosity 0, LOG_DBG has 1, -v raises the threshold to INT_MAX.
// --log-disable (common_log_pause) silences everything, LOG included, as llama.cpp does.
// Library messages (libllama, ggml) are routed through common_log_default_callback by common_init().
#pragma once

#include "ggml.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOG_DEFAULT_DEBUG 1
#define LOG_DEFAULT_LLAMA 0

#if defined(__GNUC__)
#    define COMMON_LOG_ATTRIBUTE_FORMAT(...) __attribute__((format(printf, __VA_ARGS__)))
#else
#    define COMMON_LOG_ATTRIBUTE_FORMAT(...)
#endif

// global threshold; messages with a larger verbosity are dropped
extern int common_log_verbosity_thold;

void common_log_set_verbosity_thold(int verbosity);

// stop / resume all output of the LOG macros (--log-disable)
void common_log_pause(void);
void common_log_resume(void);
bool common_log_is_paused(void);

// prefix every stderr message with its level letter (I/W/E/D) and an elapsed-time stamp
void common_log_set_prefix(bool prefix);
void common_log_set_timestamps(bool timestamps);

// --log-file: also write every message to the file at path (created/truncated; NULL or "" stops it).
// false when the file cannot be opened
bool common_log_set_file(const char * path);
// --log-colors: 1 on, 0 off, -1 auto (colors when stderr is a terminal; the default). Warnings, errors and
// debug messages on stderr are colored
void common_log_set_colors(int mode);

// write the formatted message at `level`: NONE goes to stdout, everything else to stderr
void common_log_add(enum ggml_log_level level, const char * fmt, ...) COMMON_LOG_ATTRIBUTE_FORMAT(2, 3);

// callback for llama_log_set / ggml_log_set: library INFO/WARN/ERROR print at verbosity 0, DEBUG at 1
void common_log_default_callback(enum ggml_log_level level, const char * text, void * user_data);

#define LOG_TMPL(level, verbosity, ...)                    \
    do {                                                   \
        if ((verbosity) <= common_log_verbosity_thold) {   \
            common_log_add((level), __VA_ARGS__);          \
        }                                                  \
    } while (0)

#define LOG(...)             LOG_TMPL(GGML_LOG_LEVEL_NONE, 0,         __VA_ARGS__)
#define LOGV(verbosity, ...) LOG_TMPL(GGML_LOG_LEVEL_NONE, verbosity, __VA_ARGS__)

#define LOG_INF(...) LOG_TMPL(GGML_LOG_LEVEL_INFO,  0,                 __VA_ARGS__)
#define LOG_WRN(...) LOG_TMPL(GGML_LOG_LEVEL_WARN,  0,                 __VA_ARGS__)
#define LOG_ERR(...) LOG_TMPL(GGML_LOG_LEVEL_ERROR, 0,                 __VA_ARGS__)
#define LOG_DBG(...) LOG_TMPL(GGML_LOG_LEVEL_DEBUG, LOG_DEFAULT_DEBUG, __VA_ARGS__)
#define LOG_CNT(...) LOG_TMPL(GGML_LOG_LEVEL_CONT,  0,                 __VA_ARGS__)

#ifdef __cplusplus
}
#endif
