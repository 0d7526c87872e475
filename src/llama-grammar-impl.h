// Internals of the GBNF matcher, shared by its files (not for use outside them):
//   llama-grammar.c                 the matcher: advancing stacks, accepting text and tokens, candidates
//   llama-grammar-stacks.c          sets of stacks (deduplicated)
//   llama-grammar-chars.c           code points: UTF-8 decoding, matching against character classes
//   llama-grammar-left-recursion.c  the left-recursion check done at init
#pragma once

#include "llama-grammar.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//
// stack sets (llama-grammar-stacks.c): stacks of element positions stored back to back, deduplicated through a
// hash table
//

struct llama_grammar_stack_ref {
    size_t   beg;  // into data
    uint32_t len;
    uint32_t hash;
    uint32_t slot; // its table slot, so that clearing touches only used slots
};

// a zeroed struct is an empty set
struct llama_grammar_stacks {
    uint32_t * data;
    size_t     n_data;
    size_t     cap_data;

    struct llama_grammar_stack_ref * st; // [n]
    size_t n;
    size_t cap;

    uint32_t * table; // index + 1, 0 = empty
    uint32_t   cap_table;
};

void             llama_grammar_stacks_clear(struct llama_grammar_stacks * s); // keeps the memory
void             llama_grammar_stacks_free (struct llama_grammar_stacks * s); // leaves an empty set
// the i-th stack, its length in *len
const uint32_t * llama_grammar_stacks_get  (const struct llama_grammar_stacks * s, size_t i, uint32_t * len);
// adds the stack e[0..len) unless present; false when out of memory or the set is too large
bool             llama_grammar_stacks_add  (struct llama_grammar_stacks * s, const uint32_t * e, uint32_t len);
// dst = src; false when out of memory
bool             llama_grammar_stacks_copy (struct llama_grammar_stacks * dst, const struct llama_grammar_stacks * src);
void             llama_grammar_stacks_swap (struct llama_grammar_stacks * a, struct llama_grammar_stacks * b);

//
// elements
//

// END or ALT: the end of one alternative of a rule
static inline bool llama_grammar_is_end_of_sequence(const llama_grammar_element * e) {
    return e->type == LLAMA_GRETYPE_END || e->type == LLAMA_GRETYPE_ALT;
}

// does chr satisfy the character class at pos? *after: the element following the class (llama-grammar-chars.c)
bool llama_grammar_match_char(const llama_grammar_element * elems, uint32_t pos, uint32_t chr, uint32_t * after);
// can some completion of the cut UTF-8 sequence partial satisfy the character class at pos?
bool llama_grammar_match_partial_char(const llama_grammar_element * elems, uint32_t pos,
                                      struct llama_partial_utf8 partial);

// the id of a rule on a left-recursive cycle of the rules (rule r starts at elems[rule_off[r]]), UINT32_MAX when
// there is none, UINT32_MAX - 1 when out of memory (llama-grammar-left-recursion.c)
uint32_t llama_grammar_find_left_recursion(const llama_grammar_element * elems, const uint32_t * rule_off,
                                           uint32_t n_rules);
