#include "log.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int common_log_verbosity_thold = LOG_DEFAULT_LLAMA;

// one lock so that lines from worker threads (server slots, library threads) never interleave mid-line
static pthread_mutex_t g_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool g_log_paused     = false;
static bool g_log_prefix     = false;
static bool g_log_timestamps = false;
static FILE * g_log_file     = NULL;  // --log-file: a copy of every message (no colors)
static int  g_log_colors     = -1;    // --log-colors: 1 on, 0 off, -1 auto (stderr is a terminal)
// CONT continues on the stream of the previous message
static enum ggml_log_level g_log_last_level = GGML_LOG_LEVEL_NONE;
static int64_t g_log_t0_us = -1;

static int64_t log_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void common_log_set_verbosity_thold(int verbosity) {
    common_log_verbosity_thold = verbosity;
}

void common_log_pause(void) {
    pthread_mutex_lock(&g_log_mutex);
    g_log_paused = true;
    pthread_mutex_unlock(&g_log_mutex);
}

void common_log_resume(void) {
    pthread_mutex_lock(&g_log_mutex);
    g_log_paused = false;
    pthread_mutex_unlock(&g_log_mutex);
}

bool common_log_is_paused(void) {
    pthread_mutex_lock(&g_log_mutex);
    bool p = g_log_paused;
    pthread_mutex_unlock(&g_log_mutex);
    return p;
}

void common_log_set_prefix(bool prefix) {
    g_log_prefix = prefix;
}

void common_log_set_timestamps(bool timestamps) {
    g_log_timestamps = timestamps;
    if (timestamps && g_log_t0_us < 0) {
        g_log_t0_us = log_now_us();
    }
}

// ANSI colors of llama.cpp's log levels (stderr only)
static const char * log_color(enum ggml_log_level level) {
    switch (level) {
        case GGML_LOG_LEVEL_DEBUG: return "\033[33m"; // yellow
        case GGML_LOG_LEVEL_WARN:  return "\033[35m"; // magenta
        case GGML_LOG_LEVEL_ERROR: return "\033[31m"; // red
        default:                   return NULL;
    }
}

static bool log_colors_on(void) {
    if (g_log_colors < 0) {
        g_log_colors = isatty(fileno(stderr)) ? 1 : 0;
    }
    return g_log_colors == 1;
}

static void log_write_locked(enum ggml_log_level level, const char * fmt, va_list args) {
    char head[64];
    head[0] = '\0';
    if (level == GGML_LOG_LEVEL_CONT) {
        level = g_log_last_level;
    } else {
        g_log_last_level = level;
        if (level != GGML_LOG_LEVEL_NONE && (g_log_prefix || g_log_timestamps)) {
            size_t n = 0;
            if (g_log_timestamps) {
                int64_t t = log_now_us() - (g_log_t0_us < 0 ? 0 : g_log_t0_us);
                n += (size_t) snprintf(head, sizeof(head), "%d.%02d.%03d.%03d ", (int) (t / 60000000),
                                       (int) (t / 1000000 % 60), (int) (t / 1000 % 1000), (int) (t % 1000));
            }
            if (g_log_prefix && n < sizeof(head)) {
                const char * p = level == GGML_LOG_LEVEL_DEBUG ? "D " :
                                 level == GGML_LOG_LEVEL_INFO  ? "I " :
                                 level == GGML_LOG_LEVEL_WARN  ? "W " : "E ";
                snprintf(head + n, sizeof(head) - n, "%s", p);
            }
        }
    }
    FILE * out = level == GGML_LOG_LEVEL_NONE ? stdout : stderr;
    const char * col = out == stderr && log_colors_on() ? log_color(level) : NULL;
    va_list copy;
    va_copy(copy, args);
    if (col) {
        fputs(col, out);
    }
    fputs(head, out);
    vfprintf(out, fmt, args);
    if (col) {
        fputs("\033[0m", out);
    }
    if (out == stdout) {
        // generated text must appear as it is produced, even through a pipe
        fflush(stdout);
    }
    if (g_log_file) {
        fputs(head, g_log_file);
        vfprintf(g_log_file, fmt, copy);
        fflush(g_log_file);
    }
    va_end(copy);
}

bool common_log_set_file(const char * path) {
    pthread_mutex_lock(&g_log_mutex);
    if (g_log_file) {
        fclose(g_log_file);
        g_log_file = NULL;
    }
    if (path && path[0]) {
        g_log_file = fopen(path, "w");
    }
    const bool ok = !path || !path[0] || g_log_file != NULL;
    pthread_mutex_unlock(&g_log_mutex);
    return ok;
}

void common_log_set_colors(int mode) {
    pthread_mutex_lock(&g_log_mutex);
    g_log_colors = mode < 0 ? -1 : mode > 0 ? 1 : 0;
    pthread_mutex_unlock(&g_log_mutex);
}

void common_log_add(enum ggml_log_level level, const char * fmt, ...) {
    pthread_mutex_lock(&g_log_mutex);
    if (!g_log_paused) {
        va_list args;
        va_start(args, fmt);
        log_write_locked(level, fmt, args);
        va_end(args);
    }
    pthread_mutex_unlock(&g_log_mutex);
}

void common_log_default_callback(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    int verbosity = level == GGML_LOG_LEVEL_DEBUG ? LOG_DEFAULT_DEBUG : 0;
    if (verbosity > common_log_verbosity_thold) {
        return;
    }
    // library messages never go to stdout: the programs' stdout carries only their own output
    if (level == GGML_LOG_LEVEL_NONE) {
        level = GGML_LOG_LEVEL_INFO;
    }
    common_log_add(level, "%s", text);
}
