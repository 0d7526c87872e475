// Minimal test harness: checks count passes and failures; main returns th_finish() which prints the
// closing line "N passed, N failed[, N skipped]" that ctest logs and CI reads.
//
// Test data (../shared) is found through LLAMA_TEST_DATA (default: LLAMA_TEST_DATA_DEFAULT from CMake).
// A missing data file is a skip on a developer machine but a failure when CI is set (DESIGN §6).
#pragma once

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef LLAMA_TEST_DATA_DEFAULT
#define LLAMA_TEST_DATA_DEFAULT "../shared"
#endif

static int th_n_passed  = 0;
static int th_n_failed  = 0;
static int th_n_skipped = 0;

#define TH_CHECK(cond, ...)                                                   \
    do {                                                                      \
        if (cond) {                                                           \
            th_n_passed++;                                                    \
        } else {                                                              \
            th_n_failed++;                                                    \
            fprintf(stderr, "FAIL %s:%d: (%s) ", __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

// a check that reports only on failure and does not count passes (for loops over many elements)
#define TH_EXPECT(cond, ...)                                                  \
    do {                                                                      \
        if (!(cond)) {                                                        \
            th_n_failed++;                                                    \
            fprintf(stderr, "FAIL %s:%d: (%s) ", __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

// deterministic random numbers, the same stream on every platform: one step of xorshift64 (13/7/17) and of
// xorshift64* (12/25/27, multiplied output); *s must not be 0
static inline uint64_t th_xorshift64(uint64_t * s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static inline uint64_t th_xorshift64star(uint64_t * s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

static inline const char * th_data_dir(void) {
    const char * d = getenv("LLAMA_TEST_DATA");
    return (d && *d) ? d : LLAMA_TEST_DATA_DEFAULT;
}

// dir/<fmt...> written into the next of a caller's ring of 8 buffers (so that a few paths stay alive at once;
// each kind of path has its own ring, so that a long-lived one is not overwritten by another kind)
static inline const char * th_vpath(char bufs[8][4096], int * slot, const char * dir, const char * fmt, va_list args) {
    char rel[3072];
    vsnprintf(rel, sizeof(rel), fmt, args);
    char * out = bufs[*slot];
    *slot = (*slot + 1) % 8;
    snprintf(out, 4096, "%s/%s", dir, rel);
    return out;
}

// path under the data folder
static inline const char * th_data_path(const char * fmt, ...) {
    static char bufs[8][4096];
    static int  slot = 0;
    va_list args;
    va_start(args, fmt);
    const char * out = th_vpath(bufs, &slot, th_data_dir(), fmt, args);
    va_end(args);
    return out;
}

static inline bool th_in_ci(void) {
    const char * ci = getenv("CI");
    return ci && *ci && strcmp(ci, "0") != 0 && strcmp(ci, "false") != 0;
}

// true if the file exists; otherwise a skip (developer machine) or a failure (CI)
static inline bool th_require_file(const char * path) {
    struct stat st;
    if (stat(path, &st) == 0) {
        return true;
    }
    if (th_in_ci()) {
        th_n_failed++;
        fprintf(stderr, "FAIL: test data missing: %s\n", path);
    } else {
        th_n_skipped++;
        fprintf(stderr, "SKIP: test data missing: %s\n", path);
    }
    return false;
}

// reads a whole file; NULL on error. *size receives the byte count.
static inline void * th_read_file(const char * path, size_t * size) {
    FILE * f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return NULL; }
    long n = ftell(f);
    if (n < 0) { fclose(f); return NULL; }
    rewind(f);
    void * buf = malloc((size_t) n + 1);
    if (!buf) { fclose(f); return NULL; }
    if (fread(buf, 1, (size_t) n, f) != (size_t) n) { free(buf); fclose(f); return NULL; }
    ((char *) buf)[n] = '\0';
    fclose(f);
    if (size) {
        *size = (size_t) n;
    }
    return buf;
}

// writes n bytes to path (replacing it); false on any error
static inline bool th_write_file(const char * path, const void * data, size_t n) {
    FILE * f = fopen(path, "wb");
    if (!f) {
        return false;
    }
    const bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static inline int th_finish(void) {
    if (th_n_skipped > 0) {
        printf("%d passed, %d failed, %d skipped\n", th_n_passed, th_n_failed, th_n_skipped);
    } else {
        printf("%d passed, %d failed\n", th_n_passed, th_n_failed);
    }
    fflush(stdout);
    return th_n_failed == 0 ? 0 : 1;
}
