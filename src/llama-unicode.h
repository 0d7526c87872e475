// Unicode layer of the tokenizers: UTF-8 decoding with llama.cpp's rules for invalid input, codepoint
// category flags (utf8proc), the GPT-2 byte <-> unicode mapping, and the pre-tokenizer regex splitter.
//
// Decoding rule (the token ids depend on it): a lead byte announces 1..4 bytes from its high nibble; a
// sequence with a bad continuation byte, or a lone continuation byte, or a byte 0xF8..0xFF, becomes U+FFFD and
// consumes exactly one byte. Overlong forms and surrogates are not rejected (they decode to their value).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// codepoint flags (same bits as llama.cpp's unicode_cpt_flags)
enum {
    LLAMA_CPT_UNDEFINED   = 0x0001,
    LLAMA_CPT_NUMBER      = 0x0002, // \p{N}
    LLAMA_CPT_LETTER      = 0x0004, // \p{L}
    LLAMA_CPT_SEPARATOR   = 0x0008, // \p{Z}
    LLAMA_CPT_ACCENT_MARK = 0x0010, // \p{M}
    LLAMA_CPT_PUNCTUATION = 0x0020, // \p{P}
    LLAMA_CPT_SYMBOL      = 0x0040, // \p{S}
    LLAMA_CPT_CONTROL     = 0x0080, // \p{C}
    LLAMA_CPT_MASK_CATEGORIES = 0x00FF,
    LLAMA_CPT_WHITESPACE  = 0x0100, // \s
};

// number of bytes a UTF-8 sequence announces by its first byte (1 for continuation bytes)
size_t llama_unicode_len_utf8(char c);

// decodes one codepoint at *offset (< len); false (offset unchanged) if the sequence is invalid
bool llama_unicode_cpt_from_utf8(const char * s, size_t len, size_t * offset, uint32_t * cpt);

// decodes a whole buffer with the U+FFFD rule above; out must hold len entries; returns the count
size_t llama_unicode_cpts_from_utf8(const char * s, size_t len, uint32_t * out);

// encodes one codepoint; returns the byte count (1..4), 0 for a value above 0x10FFFF
int llama_unicode_cpt_to_utf8(uint32_t cpt, char * out);

uint16_t llama_unicode_cpt_flags(uint32_t cpt);
uint32_t llama_unicode_tolower(uint32_t cpt);
// first codepoint of the canonical decomposition (llama.cpp's one-to-one NFD table)
uint32_t llama_unicode_nfd_first(uint32_t cpt);

// GPT-2 byte-level mapping: byte -> printable codepoint, and back (-1 if the codepoint is not in the map)
uint32_t llama_unicode_byte_to_cpt(uint8_t byte);
int      llama_unicode_cpt_to_byte(uint32_t cpt);

// ---- pre-tokenizer regex splitting ----------------------------------------------------------------------
//
// A splitter holds an ordered list of regexes (compiled once). Splitting a codepoint sequence applies them in
// turn, like llama.cpp's unicode_regex_split: each regex splits every current fragment into its matches and
// the unmatched gaps between them. Fragment lengths are in codepoints; zero-length fragments can occur
// (from zero-length matches) and are kept, as llama.cpp keeps them.
//
// How each regex runs, chosen as llama.cpp chooses:
//  - the GPT-2 and Llama-3 patterns: hand-written splitters (tested equal to PCRE2 with UTF|UCP);
//  - a pattern with \p{N} \p{L} \p{P} \p{M} \p{S} \p{Lu} \p{Ll} \p{Lt} \p{Lm} \p{Lo}: on the "collapsed" text
//    (every non-ASCII codepoint replaced by one byte naming its category, 0x0B for whitespace), with the
//    classes rewritten to those bytes, by PCRE2 in byte mode;
//  - any other pattern: by PCRE2 in UTF mode without UCP on the text with non-ASCII whitespace mapped to 0x0B.

struct llama_unicode_splitter;

// NULL (and one log line naming the regex) if a pattern does not compile
struct llama_unicode_splitter * llama_unicode_splitter_init(const char * const * exprs, int n_exprs);
void llama_unicode_splitter_free(struct llama_unicode_splitter * sp);

// growable array of fragment lengths
struct llama_unicode_offsets {
    size_t * data;
    size_t   n;
    size_t   cap;
};

void llama_unicode_offsets_free(struct llama_unicode_offsets * o);

// splits cpts[0..n_cpts) into *out (replaced). false on allocation failure.
bool llama_unicode_split(const struct llama_unicode_splitter * sp, const uint32_t * cpts, size_t n_cpts,
                         struct llama_unicode_offsets * out);

// the hand-written splitters, exposed for the equivalence tests (one fragment covering the whole input)
bool llama_unicode_split_gpt2  (const uint32_t * cpts, size_t n_cpts, struct llama_unicode_offsets * out);
bool llama_unicode_split_llama3(const uint32_t * cpts, size_t n_cpts, struct llama_unicode_offsets * out);

#ifdef __cplusplus
}
#endif
