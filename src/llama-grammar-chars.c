// Code points in the GBNF matcher (see llama-grammar-impl.h): UTF-8 decoding that carries a sequence cut by the
// end of a token piece over to the next piece, and matching a code point, or the code points a cut sequence may
// still become, against a character class.

#include "llama-grammar-impl.h"

//
// character classes
//

// does chr satisfy the character class at pos? *after: the element following the class
bool llama_grammar_match_char(const llama_grammar_element * elems, uint32_t pos, uint32_t chr, uint32_t * after) {
    const bool positive = elems[pos].type == LLAMA_GRETYPE_CHAR || elems[pos].type == LLAMA_GRETYPE_CHAR_ANY;
    bool found = false;
    do {
        if (elems[pos + 1].type == LLAMA_GRETYPE_CHAR_RNG_UPPER) {
            found = found || (elems[pos].value <= chr && chr <= elems[pos + 1].value);
            pos += 2;
        } else if (elems[pos].type == LLAMA_GRETYPE_CHAR_ANY) {
            found = true;
            pos += 1;
        } else {
            found = found || elems[pos].value == chr;
            pos += 1;
        }
    } while (elems[pos].type == LLAMA_GRETYPE_CHAR_ALT);
    *after = pos;
    return found == positive;
}

// can some completion of the cut UTF-8 sequence satisfy the character class at pos? The completions form the
// code point range [low, high], cut to what a sequence of that length may encode (no overlong forms).
bool llama_grammar_match_partial_char(const llama_grammar_element * elems, uint32_t pos,
                                      struct llama_partial_utf8 partial) {
    if (partial.n_remain <= 0) {
        return false;
    }
    static const uint32_t min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    const int shift = 6 * partial.n_remain;
    uint32_t low  = partial.value << shift;
    uint32_t high = low | ((1u << shift) - 1);
    if (partial.n_len >= 2 && partial.n_len <= 4 && low < min_cp[partial.n_len]) {
        low = min_cp[partial.n_len];
    }
    if (high > 0x10FFFF) {
        high = 0x10FFFF;
    }
    if (low > high) {
        return false;
    }

    const bool positive = elems[pos].type == LLAMA_GRETYPE_CHAR || elems[pos].type == LLAMA_GRETYPE_CHAR_ANY;
    if (elems[pos].type == LLAMA_GRETYPE_CHAR_ANY) {
        return true;
    }
    if (positive) {
        do {
            uint32_t lo = elems[pos].value;
            uint32_t hi = lo;
            if (elems[pos + 1].type == LLAMA_GRETYPE_CHAR_RNG_UPPER) {
                hi = elems[pos + 1].value;
                pos += 2;
            } else {
                pos += 1;
            }
            if (lo <= high && low <= hi) {
                return true;
            }
        } while (elems[pos].type == LLAMA_GRETYPE_CHAR_ALT);
        return false;
    }
    // negated class: some code point of [low, high] must lie outside every excluded interval
    uint32_t cur = low;
    for (;;) {
        bool moved = false;
        uint32_t p = pos;
        do {
            uint32_t lo = elems[p].value;
            uint32_t hi = lo;
            if (elems[p + 1].type == LLAMA_GRETYPE_CHAR_RNG_UPPER) {
                hi = elems[p + 1].value;
                p += 2;
            } else {
                p += 1;
            }
            if (lo <= cur && cur <= hi) {
                if (hi >= high) {
                    return false; // covered up to the end of the range
                }
                cur = hi + 1;
                moved = true;
            }
        } while (elems[p].type == LLAMA_GRETYPE_CHAR_ALT);
        if (!moved) {
            return true; // cur is outside every excluded interval
        }
    }
}

//
// UTF-8
//

size_t llama_grammar_decode_utf8(const char * src, size_t len, struct llama_partial_utf8 * partial, uint32_t * cps) {
    static const uint32_t min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    const struct llama_partial_utf8 invalid = { 0, -1, 0 };
    size_t n = 0;
    size_t i = 0;
    uint32_t v   = partial->value;
    int32_t  rem = partial->n_remain > 0 ? partial->n_remain : 0;
    int32_t  L   = partial->n_len;

    // finish the sequence the previous piece cut
    const bool continuing = rem > 0;
    while (i < len && rem > 0) {
        const uint8_t b = (uint8_t) src[i];
        if ((b & 0xC0) != 0x80) {
            *partial = invalid;
            return 0;
        }
        v = (v << 6) | (b & 0x3F);
        i++;
        rem--;
    }
    if (continuing && rem == 0) {
        if (L < 2 || L > 4 || v < min_cp[L] || v > 0x10FFFF) {
            *partial = invalid;
            return 0;
        }
        cps[n++] = v;
    }

    while (i < len) {
        const uint8_t b = (uint8_t) src[i++];
        if (b < 0x80) {
            cps[n++] = b;
            continue;
        }
        if ((b & 0xE0) == 0xC0) {
            L = 2; v = b & 0x1F;
        } else if ((b & 0xF0) == 0xE0) {
            L = 3; v = b & 0x0F;
        } else if ((b & 0xF8) == 0xF0) {
            L = 4; v = b & 0x07;
        } else {
            *partial = invalid;
            return 0;
        }
        rem = L - 1;
        while (i < len && rem > 0) {
            const uint8_t c = (uint8_t) src[i];
            if ((c & 0xC0) != 0x80) {
                *partial = invalid;
                return 0;
            }
            v = (v << 6) | (c & 0x3F);
            i++;
            rem--;
        }
        if (rem == 0) {
            if (v < min_cp[L] || v > 0x10FFFF) {
                *partial = invalid;
                return 0;
            }
            cps[n++] = v;
        }
    }
    if (rem > 0) {
        partial->value    = v;
        partial->n_remain = rem;
        partial->n_len    = L;
    } else {
        partial->value    = 0;
        partial->n_remain = 0;
        partial->n_len    = 0;
    }
    return n;
}
