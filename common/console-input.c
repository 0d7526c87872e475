#include "console-input.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_bool g_interrupted = false;

static void on_signal(int sig) {
    (void) sig;
    if (atomic_load(&g_interrupted)) {
        // second Ctrl+C before the first was handled: leave at once (only async-signal-safe calls here)
        static const char nl[] = "\n";
        ssize_t w = write(STDOUT_FILENO, nl, 1);
        (void) w;
        _exit(130);
    }
    atomic_store(&g_interrupted, true);
}

void common_console_signals_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool common_console_interrupted(void) {
    return atomic_load(&g_interrupted);
}

void common_console_interrupt_clear(void) {
    atomic_store(&g_interrupted, false);
}

// appends s[0..n) to the growable buffer; false when out of memory
static bool buf_append(char ** buf, size_t * len, size_t * cap, const char * s, size_t n) {
    if (*len + n + 1 > *cap) {
        size_t nc = *cap ? *cap : 256;
        while (nc < *len + n + 1) {
            nc *= 2;
        }
        char * grown = realloc(*buf, nc);
        if (!grown) {
            return false;
        }
        *buf = grown;
        *cap = nc;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return true;
}

enum common_console_read_status common_console_read_message(FILE * in, bool multiline, char ** out) {
    *out = NULL;
    char * msg = NULL;
    size_t len = 0, cap = 0;
    char * line = NULL;
    size_t line_cap = 0;
    bool any = false;
    enum common_console_read_status st = COMMON_CONSOLE_READ_OK;

    for (;;) {
        if (common_console_interrupted()) {
            st = COMMON_CONSOLE_READ_INTERRUPTED;
            break;
        }
        errno = 0;
        ssize_t n = getline(&line, &line_cap, in);
        if (n < 0) {
            const bool eintr = errno == EINTR;
            clearerr(in);
            if (common_console_interrupted()) {
                st = COMMON_CONSOLE_READ_INTERRUPTED;
            } else if (eintr) {
                continue; // another signal: keep waiting
            } else if (!any) {
                st = COMMON_CONSOLE_READ_EOF;
            }
            break;
        }
        any = true;
        if (n > 0 && line[n - 1] == '\n') {
            line[--n] = '\0';
        }
        bool more = multiline;
        bool done = false;
        if (n > 0 && line[n - 1] == '/') {
            line[--n] = '\0';
            done = true;
        } else if (n > 0 && line[n - 1] == '\\') {
            line[--n] = '\0';
            more = !more;
        }
        if (!buf_append(&msg, &len, &cap, line, (size_t) n) || (!done && !buf_append(&msg, &len, &cap, "\n", 1))) {
            st = COMMON_CONSOLE_READ_ERROR;
            break;
        }
        if (done || !more) {
            break;
        }
    }
    free(line);

    if (st != COMMON_CONSOLE_READ_OK) {
        free(msg);
        return st;
    }
    if (!msg && !buf_append(&msg, &len, &cap, "", 0)) {
        return COMMON_CONSOLE_READ_ERROR;
    }
    if (len > 0 && msg[len - 1] == '\n') {
        msg[--len] = '\0';
    }
    *out = msg;
    return COMMON_CONSOLE_READ_OK;
}
