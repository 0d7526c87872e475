// see string-builder.h
#include "string-builder.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void common_sb_addn(struct common_sb * b, const char * d, size_t n) {
    if (b->oom) {
        return;
    }
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 64;
        while (nc < b->n + n + 1) {
            nc *= 2;
        }
        char * ns = realloc(b->s, nc);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = nc;
    }
    if (n) {
        memcpy(b->s + b->n, d, n);
    }
    b->n += n;
    b->s[b->n] = '\0';
}

void common_sb_add(struct common_sb * b, const char * s) {
    common_sb_addn(b, s, strlen(s));
}

void common_sb_addc(struct common_sb * b, char c) {
    common_sb_addn(b, &c, 1);
}

void common_sb_addf(struct common_sb * b, const char * fmt, ...) {
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if ((size_t) n < sizeof(buf)) {
        common_sb_addn(b, buf, (size_t) n);
        return;
    }
    char * big = malloc((size_t) n + 1);
    if (!big) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t) n + 1, fmt, ap);
    va_end(ap);
    common_sb_addn(b, big, (size_t) n);
    free(big);
}

char * common_sb_take(struct common_sb * b) {
    char * s = b->oom ? NULL : (b->s ? b->s : strdup(""));
    if (b->oom) {
        free(b->s);
    }
    b->s = NULL;
    b->n = b->cap = 0;
    b->oom = false;
    return s;
}
