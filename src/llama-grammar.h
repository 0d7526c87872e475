// GBNF grammars (llama.cpp grammars/README.md): the parser (llama-grammar-parser.c) turns grammar text into rules of
// elements; the matcher (llama-grammar.c, its parts listed in llama-grammar-impl.h) runs llama.cpp's pushdown
// automaton over them: a set of stacks of element positions, advanced one code point at a time, with UTF-8 sequences
// allowed to be split across tokens. The grammar sampler (llama-grammar-sampler.c) drives the matcher with token
// pieces.
#pragma once

#include "llama.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// grammar element type (values as in llama.cpp)
enum llama_gretype {
    LLAMA_GRETYPE_END            = 0, // end of rule definition
    LLAMA_GRETYPE_ALT            = 1, // start of alternate definition for rule
    LLAMA_GRETYPE_RULE_REF       = 2, // non-terminal element: reference to rule
    LLAMA_GRETYPE_CHAR           = 3, // terminal element: character (code point)
    LLAMA_GRETYPE_CHAR_NOT       = 4, // inverse char(s) ([^a], [^a-b] [^abc])
    LLAMA_GRETYPE_CHAR_RNG_UPPER = 5, // makes the preceding CHAR / CHAR_ALT an inclusive range ([a-z])
    LLAMA_GRETYPE_CHAR_ALT       = 6, // adds an alternate char to the preceding CHAR / CHAR_RNG_UPPER ([ab], [a-zA])
    LLAMA_GRETYPE_CHAR_ANY       = 7, // any character (.)
    LLAMA_GRETYPE_TOKEN          = 8, // terminal element: token (<[token-id]>)
    LLAMA_GRETYPE_TOKEN_NOT      = 9, // inverse token (!<[token-id]>)
};

typedef struct llama_grammar_element {
    enum llama_gretype type;
    uint32_t           value; // code point, rule id or token id
} llama_grammar_element;

// state of a UTF-8 sequence cut by the end of a token piece
struct llama_partial_utf8 {
    uint32_t value;    // bits decoded so far
    int32_t  n_remain; // continuation bytes still expected; 0: none pending; -1: invalid sequence
    int32_t  n_len;    // total length of the pending sequence (2..4), for the overlong check
};

//
// parser
//

struct llama_grammar_rule {
    llama_grammar_element * elems; // [n], alternates separated by ALT, ends with END; n == 0: not defined yet
    size_t n;
    size_t cap;
};

struct llama_grammar_parser {
    const struct llama_vocab * vocab; // for <token> references; may be NULL (then only <[id]> works)

    char   ** names;     // [n_symbols] symbol id -> name (generated rules are "<rule>_<id>")
    uint32_t  n_symbols;
    uint32_t  cap_symbols;
    uint32_t * hash;     // [cap_hash] open addressing over names: symbol id + 1, 0 = empty
    uint32_t   cap_hash;

    struct llama_grammar_rule * rules; // [n_symbols]
    size_t n_elems_total;              // grows with repetitions; bounded so that nested counts cannot explode

    int  depth;       // nesting of ( ) groups
    bool failed;
    char error[256];  // first error, with the position it happened at
};

void llama_grammar_parser_init(struct llama_grammar_parser * p, const struct llama_vocab * vocab);
// parses src (NUL-terminated) and checks that every referenced rule is defined; false with p->error set otherwise
bool llama_grammar_parser_parse(struct llama_grammar_parser * p, const char * src);
// id of a symbol, -1 when absent
int32_t llama_grammar_parser_symbol_id(const struct llama_grammar_parser * p, const char * name);
void llama_grammar_parser_free(struct llama_grammar_parser * p);

//
// matcher
//

struct llama_grammar;

// compiles grammar_str with start symbol grammar_root. NULL when it does not parse, lacks the root symbol or is
// left-recursive; the reason goes to the log and, when err is not NULL, to err[0..err_size).
struct llama_grammar * llama_grammar_init_impl(const struct llama_vocab * vocab, const char * grammar_str,
        const char * grammar_root, char * err, size_t err_size);
void                   llama_grammar_free_impl (struct llama_grammar * grammar);
// deep copy (rules and stacks); NULL when out of memory
struct llama_grammar * llama_grammar_clone_impl(const struct llama_grammar * grammar);
// back to the state right after init
void                   llama_grammar_reset     (struct llama_grammar * grammar);
// copies src's matching state into dst (same rules); false when out of memory (dst unchanged)
bool                   llama_grammar_copy_state(const struct llama_grammar * src, struct llama_grammar * dst);

// true when the text accepted so far is a complete sentence of the grammar (some stack is empty)
bool llama_grammar_is_complete(const struct llama_grammar * grammar);
size_t llama_grammar_n_stacks(const struct llama_grammar * grammar);
struct llama_partial_utf8 llama_grammar_partial(const struct llama_grammar * grammar);

// decodes src[0..len) continuing the pending sequence *partial: writes the completed code points to cps
// (room for len + 1 needed) and returns their count, updating *partial to the state after src. An invalid byte
// makes the result 0 code points with partial->n_remain = -1.
size_t llama_grammar_decode_utf8(const char * src, size_t len, struct llama_partial_utf8 * partial, uint32_t * cps);

// accepts one code point; false (state unchanged) when no stack can take it
bool llama_grammar_accept_chr  (struct llama_grammar * grammar, uint32_t chr);
// accepts a string (UTF-8, possibly ending in a cut sequence); false (state unchanged) when it does not fit
bool llama_grammar_accept_str  (struct llama_grammar * grammar, const char * str, size_t len);
// accepts a token with its piece: token elements match by id, the other stacks take the piece's code points;
// false (state unchanged) when nothing survives
bool llama_grammar_accept_token(struct llama_grammar * grammar, llama_token token, const char * piece, size_t len);

// one candidate token for llama_grammar_match_candidates: its piece decoded from the grammar's current UTF-8 state
struct llama_grammar_candidate {
    const uint32_t *          cps;   // [n_cps] complete code points
    uint32_t                  n_cps;
    struct llama_partial_utf8 tail;  // cut sequence at the end of the piece (n_remain > 0), or invalid (-1)
    llama_token               id;
    size_t                    index;    // the caller's (e.g. position in a candidate array); not read here
    bool                      accepted; // output
};

// sets .accepted of each candidate: true when its piece extends the accepted text to a prefix of some sentence
// (llama.cpp's reject_candidates, stack by stack). The candidates must be sorted by code points
// (llama_grammar_candidate_cmp) so that common prefixes are matched once. false when out of memory.
bool llama_grammar_match_candidates(struct llama_grammar * grammar, struct llama_grammar_candidate * cands, size_t n);
// orders candidates by code points, a prefix before its extensions (qsort comparator)
int  llama_grammar_candidate_cmp(const void * a, const void * b);
