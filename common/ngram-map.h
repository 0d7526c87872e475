// common_ngram_map: llama.cpp's "ngram-map-k" / "ngram-map-k4v" drafter state for one sequence. The key is the last
// size_key tokens of the history (ending with the token just sampled); its most recent earlier occurrence that is
// followed by size_value tokens is found. Key-only (k): the size_value tokens after it are the draft. Key + 4 values
// (k4v): after min_hits hits of the key, the (up to 4) distinct m-grams seen after it are counted and the most
// frequent one is drafted when it is at least 3x as frequent as all the others together. Per value it remembers
// how many drafted tokens the target accepted last time and drafts no more than that next time.
#pragma once

#include "llama.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COMMON_NGRAM_MAX_VALUES 4

struct common_ngram_map_value {
    size_t   value_idx;  // where the m-gram starts in the history (0: unused slot)
    uint16_t value_num;  // how often it followed the key
    int32_t  n_accepted; // accepted tokens of its last draft (starts at size_value)
};

struct common_ngram_map_key {
    size_t   key_idx;    // where the key n-gram occurs in the history
    size_t   stat_idx;   // history scanned for values up to here (k4v)
    uint16_t key_num;    // how often it was hit
    struct common_ngram_map_value values[COMMON_NGRAM_MAX_VALUES]; // key-only mode uses values[0].n_accepted
};

struct common_ngram_map {
    uint16_t size_key;   // n
    uint16_t size_value; // m
    uint16_t min_hits;   // k4v: key hits before values are considered
    bool     key_only;   // true: ngram-map-k, false: ngram-map-k4v

    struct common_ngram_map_key * keys;
    size_t n_keys;
    size_t cap_keys;

    bool   last_draft_created;
    size_t last_draft_key;  // index into keys of the last draft
    int    last_draft_value; // the value slot it used
    size_t idx_last_check;  // history length at the last draft
    size_t size_last_begin; // history length at the last begin
};

// size_key, size_value >= 1 (0 is taken as 1)
void common_ngram_map_init(struct common_ngram_map * map, uint16_t size_key, uint16_t size_value, bool key_only,
                           uint16_t min_hits);
void common_ngram_map_free(struct common_ngram_map * map);

// a new history starts (a new prompt, or the old one cut back): keys that point past the common part are dropped
void common_ngram_map_begin(struct common_ngram_map * map, const llama_token * tokens, size_t n_tokens);

// drafts up to n_out_max tokens to follow inp[0..n_inp) + sampled into out; returns how many
int32_t common_ngram_map_draft(struct common_ngram_map * map, const llama_token * inp, size_t n_inp,
                               llama_token sampled, llama_token * out, int32_t n_out_max);

// the target accepted n_accepted tokens of the last draft
void common_ngram_map_accept(struct common_ngram_map * map, uint16_t n_accepted);

#ifdef __cplusplus
}
#endif
