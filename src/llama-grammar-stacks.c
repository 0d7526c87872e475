// Sets of grammar stacks (see llama-grammar-impl.h): the stacks stored back to back in one array, deduplicated
// through an open-addressing hash table, so that the matcher's state and its scratch sets reuse their memory.

#include "llama-grammar-impl.h"

#include "llama-impl.h"

#include <stdlib.h>
#include <string.h>

// a stack set larger than this means a pathologically ambiguous grammar: fail instead of eating memory
#define GRAMMAR_MAX_STACKS (1u << 16)

static uint32_t stack_hash(const uint32_t * e, uint32_t len) {
    uint32_t h = 2166136261u ^ len;
    for (uint32_t i = 0; i < len; ++i) {
        h = (h ^ e[i]) * 16777619u;
        h ^= h >> 15;
    }
    return h;
}

void llama_grammar_stacks_clear(struct llama_grammar_stacks * s) {
    for (size_t i = 0; i < s->n; ++i) {
        s->table[s->st[i].slot] = 0;
    }
    s->n      = 0;
    s->n_data = 0;
}

void llama_grammar_stacks_free(struct llama_grammar_stacks * s) {
    free(s->data);
    free(s->st);
    free(s->table);
    memset(s, 0, sizeof(*s));
}

const uint32_t * llama_grammar_stacks_get(const struct llama_grammar_stacks * s, size_t i, uint32_t * len) {
    *len = s->st[i].len;
    // a set of empty stacks has no data array (and pointer arithmetic on NULL is undefined)
    return s->data ? s->data + s->st[i].beg : NULL;
}

static bool set_rehash(struct llama_grammar_stacks * s, uint32_t cap) {
    uint32_t * t = calloc(cap, sizeof(*t));
    if (!t) {
        return false;
    }
    for (size_t i = 0; i < s->n; ++i) {
        uint32_t k = s->st[i].hash & (cap - 1);
        while (t[k]) {
            k = (k + 1) & (cap - 1);
        }
        t[k] = (uint32_t) i + 1;
        s->st[i].slot = k;
    }
    free(s->table);
    s->table     = t;
    s->cap_table = cap;
    return true;
}

// adds the stack e[0..len) unless present; false when out of memory or the set is too large
bool llama_grammar_stacks_add(struct llama_grammar_stacks * s, const uint32_t * e, uint32_t len) {
    if (2 * (s->n + 1) > s->cap_table && !set_rehash(s, s->cap_table ? 2 * s->cap_table : 16)) {
        return false;
    }
    const uint32_t h = stack_hash(e, len);
    uint32_t k = h & (s->cap_table - 1);
    while (s->table[k]) {
        const struct llama_grammar_stack_ref * r = &s->st[s->table[k] - 1];
        // (an empty stack may come with no data at all: memcmp must not see the null pointers)
        if (r->hash == h && r->len == len && (len == 0 || memcmp(s->data + r->beg, e, len * sizeof(*e)) == 0)) {
            return true;
        }
        k = (k + 1) & (s->cap_table - 1);
    }
    if (s->n >= GRAMMAR_MAX_STACKS) {
        LLAMA_LOG_ERROR("%s: more than %u grammar stacks; the grammar is too ambiguous\n", __func__, GRAMMAR_MAX_STACKS);
        return false;
    }
    if (s->n == s->cap) {
        const size_t cap = s->cap ? 2 * s->cap : 16;
        struct llama_grammar_stack_ref * st = realloc(s->st, cap * sizeof(*st));
        if (!st) {
            return false;
        }
        s->st  = st;
        s->cap = cap;
    }
    if (s->n_data + len > s->cap_data) {
        size_t cap = s->cap_data ? 2 * s->cap_data : 64;
        while (cap < s->n_data + len) {
            cap *= 2;
        }
        uint32_t * d = realloc(s->data, cap * sizeof(*d));
        if (!d) {
            return false;
        }
        s->data     = d;
        s->cap_data = cap;
    }
    if (len) {
        memcpy(s->data + s->n_data, e, len * sizeof(*e));
    }
    s->st[s->n] = (struct llama_grammar_stack_ref) { s->n_data, len, h, k };
    s->table[k] = (uint32_t) s->n + 1;
    s->n_data += len;
    s->n++;
    return true;
}

bool llama_grammar_stacks_copy(struct llama_grammar_stacks * dst, const struct llama_grammar_stacks * src) {
    llama_grammar_stacks_clear(dst);
    for (size_t i = 0; i < src->n; ++i) {
        uint32_t len;
        const uint32_t * e = llama_grammar_stacks_get(src, i, &len);
        if (!llama_grammar_stacks_add(dst, e, len)) {
            return false;
        }
    }
    return true;
}

void llama_grammar_stacks_swap(struct llama_grammar_stacks * a, struct llama_grammar_stacks * b) {
    const struct llama_grammar_stacks t = *a;
    *a = *b;
    *b = t;
}
