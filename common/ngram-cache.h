// common_ngram_cache: llama.cpp's n-gram cache for lookup decoding. It maps n-grams of 1..LLAMA_NGRAM_MAX tokens
// to how often each token followed them. Three caches take part in a draft: "context" (built from the current
// token history), "dynamic" (accumulated over earlier generations, saved with -lcd) and "static" (built from a
// large corpus with llama-lookup-create, used to validate, -lcs).
//
// File format (llama.cpp's, native little-endian, no header), repeated until end of file:
//   int32 tokens[LLAMA_NGRAM_MAX]   the n-gram, unused trailing slots -1
//   int32 n                         number of (token, count) pairs that follow, > 0
//   n x { int32 token; int32 count } count > 0
#pragma once

#include "llama.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LLAMA_NGRAM_MIN    1
#define LLAMA_NGRAM_MAX    4
#define LLAMA_NGRAM_STATIC 2

struct common_ngram {
    llama_token tokens[LLAMA_NGRAM_MAX]; // the first n are the n-gram, the rest are -1
};

// an n-gram of the first n tokens of input (1 <= n <= LLAMA_NGRAM_MAX)
struct common_ngram common_ngram_make(const llama_token * input, int n);

struct common_ngram_cache;

// an empty cache; NULL when out of memory
struct common_ngram_cache * common_ngram_cache_init(void);
void common_ngram_cache_free(struct common_ngram_cache * cache);

// number of distinct n-grams in the cache
size_t common_ngram_cache_size(const struct common_ngram_cache * cache);
// how often token followed ngram (0 when never); *n_tokens (if not NULL) gets how many distinct tokens followed it
int32_t common_ngram_cache_count(const struct common_ngram_cache * cache, const struct common_ngram * ngram,
                                 llama_token token, int32_t * n_tokens);
// adds count to (ngram -> token); false when out of memory or count <= 0
bool common_ngram_cache_add(struct common_ngram_cache * cache, const struct common_ngram * ngram, llama_token token,
                            int32_t count);

// Updates the cache with the n-grams of sizes ngram_min..ngram_max that end just before each of the last nnew
// tokens of inp[0..n_inp) (each n-gram counts the token that follows it). inp may only have been appended to
// since the previous call; changes in the middle need a fresh cache. false when out of memory.
bool common_ngram_cache_update(struct common_ngram_cache * cache, int ngram_min, int ngram_max,
                               const llama_token * inp, int64_t n_inp, int64_t nnew, bool print_progress);

// Drafts up to n_draft tokens to follow inp[0..n_inp). draft[0] must be the last token of inp (the token just
// sampled); drafted tokens are written to draft[1..] (room for 1 + n_draft). nc_context and nc_dynamic hold
// n-grams of sizes ngram_min..ngram_max, nc_static of size LLAMA_NGRAM_STATIC; any may be empty.
// Returns the new draft length (1 when nothing was drafted).
int common_ngram_cache_draft(const llama_token * inp, int n_inp, llama_token * draft, int n_draft,
                             int ngram_min, int ngram_max,
                             const struct common_ngram_cache * nc_context,
                             const struct common_ngram_cache * nc_dynamic,
                             const struct common_ngram_cache * nc_static);

// writes the cache in llama.cpp's format; false (logged) on an I/O error
bool common_ngram_cache_save(const struct common_ngram_cache * cache, const char * filename);
// reads a file written by common_ngram_cache_save; NULL (logged, naming the file and offset) when the file cannot
// be opened or is malformed (truncated record, n <= 0, count <= 0)
struct common_ngram_cache * common_ngram_cache_load(const char * filename);

// adds every count of add into target; false when out of memory
bool common_ngram_cache_merge(struct common_ngram_cache * target, const struct common_ngram_cache * add);

#ifdef __cplusplus
}
#endif
