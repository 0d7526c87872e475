// A growable NUL-terminated string for the text common/ builds piece by piece (grammars from JSON schemas,
// parsed chat messages). Errors are sticky: after a failed allocation (oom) further adds do nothing, so callers
// check once at the end.
#pragma once

#include <stdbool.h>
#include <stddef.h>

// s is NUL-terminated once anything was added (NULL before); zero-initialize to start
struct common_sb {
    char * s;
    size_t n, cap;
    bool   oom;
};

void common_sb_addn(struct common_sb * b, const char * d, size_t n);
void common_sb_add (struct common_sb * b, const char * s);
void common_sb_addc(struct common_sb * b, char c);
void common_sb_addf(struct common_sb * b, const char * fmt, ...) __attribute__((format(printf, 2, 3)));
// the text (malloc'd, "" when nothing was added), b emptied; NULL when an allocation failed
char * common_sb_take(struct common_sb * b);
