// common_ngram_mod: llama.cpp's "ngram-mod" drafter state: a fixed-size hash table that maps the hash of an n-gram
// (n tokens) to the token that last followed it. Collisions simply overwrite; a draft is rolled forward one token at
// a time by hashing the last n tokens. The table is shared by all sequences.
#pragma once

#include "llama.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COMMON_NGRAM_MOD_EMPTY (-1)

struct common_ngram_mod;

// n: tokens per n-gram (>= 1); size: table entries (>= 1). NULL when out of memory or the sizes are invalid
struct common_ngram_mod * common_ngram_mod_init(uint16_t n, size_t size);
void common_ngram_mod_free(struct common_ngram_mod * mod);

// the table index of tokens[0..n)
size_t common_ngram_mod_idx(const struct common_ngram_mod * mod, const llama_token * tokens);
// records that tokens[n] followed tokens[0..n) (reads n + 1 tokens)
void common_ngram_mod_add(struct common_ngram_mod * mod, const llama_token * tokens);
// the token recorded for tokens[0..n), or COMMON_NGRAM_MOD_EMPTY
llama_token common_ngram_mod_get(const struct common_ngram_mod * mod, const llama_token * tokens);
void common_ngram_mod_reset(struct common_ngram_mod * mod);

size_t common_ngram_mod_get_n(const struct common_ngram_mod * mod);
// llama.cpp's occupancy counter: additions that landed on an already filled entry
size_t common_ngram_mod_get_used(const struct common_ngram_mod * mod);
size_t common_ngram_mod_size(const struct common_ngram_mod * mod);

#ifdef __cplusplus
}
#endif
