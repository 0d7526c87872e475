// GBNF matcher: llama.cpp's pushdown automaton. The state is a set of stacks; each stack holds positions
// (indices into the flattened rules) of what is still to be matched, its top always a terminal (character class
// or token) after advancing. Accepting a code point pops the terminal it matches and advances through rule
// references; an empty stack means the text so far is a complete sentence. Left-recursive grammars are rejected
// at init, which is what guarantees that advancing terminates.

#include "llama-grammar.h"

#include "llama-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// a stack set larger than this means a pathologically ambiguous grammar: fail instead of eating memory
#define GRAMMAR_MAX_STACKS (1u << 16)

//
// stack sets: stacks stored back to back, deduplicated through a hash table
//

struct gstack_ref {
    size_t   beg;  // into data
    uint32_t len;
    uint32_t hash;
    uint32_t slot; // its table slot, so that clearing touches only used slots
};

struct gstack_set {
    uint32_t * data;
    size_t     n_data;
    size_t     cap_data;

    struct gstack_ref * st;
    size_t n;
    size_t cap;

    uint32_t * table; // index + 1, 0 = empty
    uint32_t   cap_table;
};

static uint32_t stack_hash(const uint32_t * e, uint32_t len) {
    uint32_t h = 2166136261u ^ len;
    for (uint32_t i = 0; i < len; ++i) {
        h = (h ^ e[i]) * 16777619u;
        h ^= h >> 15;
    }
    return h;
}

static void set_clear(struct gstack_set * s) {
    for (size_t i = 0; i < s->n; ++i) {
        s->table[s->st[i].slot] = 0;
    }
    s->n      = 0;
    s->n_data = 0;
}

static void set_free(struct gstack_set * s) {
    free(s->data);
    free(s->st);
    free(s->table);
    memset(s, 0, sizeof(*s));
}

static const uint32_t * set_stack(const struct gstack_set * s, size_t i, uint32_t * len) {
    *len = s->st[i].len;
    return s->data + s->st[i].beg;
}

static bool set_rehash(struct gstack_set * s, uint32_t cap) {
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
static bool set_add(struct gstack_set * s, const uint32_t * e, uint32_t len) {
    if (2 * (s->n + 1) > s->cap_table && !set_rehash(s, s->cap_table ? 2 * s->cap_table : 16)) {
        return false;
    }
    const uint32_t h = stack_hash(e, len);
    uint32_t k = h & (s->cap_table - 1);
    while (s->table[k]) {
        const struct gstack_ref * r = &s->st[s->table[k] - 1];
        if (r->hash == h && r->len == len && memcmp(s->data + r->beg, e, len * sizeof(*e)) == 0) {
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
        struct gstack_ref * st = realloc(s->st, cap * sizeof(*st));
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
    s->st[s->n] = (struct gstack_ref) { s->n_data, len, h, k };
    s->table[k] = (uint32_t) s->n + 1;
    s->n_data += len;
    s->n++;
    return true;
}

static bool set_copy(struct gstack_set * dst, const struct gstack_set * src) {
    set_clear(dst);
    for (size_t i = 0; i < src->n; ++i) {
        uint32_t len;
        const uint32_t * e = set_stack(src, i, &len);
        if (!set_add(dst, e, len)) {
            return false;
        }
    }
    return true;
}

static void set_swap(struct gstack_set * a, struct gstack_set * b) {
    const struct gstack_set t = *a;
    *a = *b;
    *b = t;
}

//
// the grammar
//

struct llama_grammar {
    llama_grammar_element * elems;   // [n_elems] every rule, each ending with END
    size_t                  n_elems;
    uint32_t              * rule_off; // [n_rules] start of each rule in elems
    uint32_t                n_rules;

    struct gstack_set         stacks;
    struct llama_partial_utf8 partial;

    struct gstack_set         init; // stacks right after init, for reset

    // scratch
    struct gstack_set   tmp[2];
    struct gstack_set   seen;      // stacks already expanded by one advance
    uint32_t          * todo;      // work list of advance: stacks back to back, each followed by its length
    size_t              n_todo;
    size_t              cap_todo;
    uint32_t          * cur;       // the stack being expanded
    size_t              cap_cur;
    uint32_t          * pop;       // a stack with its top matched, before advancing
    size_t              cap_pop;
    struct gstack_set * level;     // [n_level] stack set after each code point of a candidate prefix
    size_t              n_level;
    uint32_t          * cps;       // decode buffer for accept_str / accept_token
    size_t              cap_cps;
};

static bool is_end_of_sequence(const llama_grammar_element * e) {
    return e->type == LLAMA_GRETYPE_END || e->type == LLAMA_GRETYPE_ALT;
}

static bool is_token_elem(const llama_grammar_element * e) {
    return e->type == LLAMA_GRETYPE_TOKEN || e->type == LLAMA_GRETYPE_TOKEN_NOT;
}

static bool grow_u32(uint32_t ** buf, size_t * cap, size_t need) {
    if (need <= *cap) {
        return true;
    }
    size_t c = *cap ? *cap : 64;
    while (c < need) {
        c *= 2;
    }
    uint32_t * b = realloc(*buf, c * sizeof(*b));
    if (!b) {
        return false;
    }
    *buf = b;
    *cap = c;
    return true;
}

// pushes stack base[0..n) + the optional positions a and b (UINT32_MAX: none) on the work list
static bool todo_push(struct llama_grammar * g, const uint32_t * base, uint32_t n, uint32_t a, uint32_t b) {
    if (!grow_u32(&g->todo, &g->cap_todo, g->n_todo + n + 3)) {
        return false;
    }
    uint32_t * t = g->todo + g->n_todo;
    memcpy(t, base, n * sizeof(*base));
    uint32_t len = n;
    if (a != UINT32_MAX) {
        t[len++] = a;
    }
    if (b != UINT32_MAX) {
        t[len++] = b;
    }
    t[len] = len;
    g->n_todo += len + 1;
    return true;
}

// expands the stack st[0..len) through rule references until every resulting stack is empty or has a terminal
// on top, adding those to out
static bool advance_stack(struct llama_grammar * g, const uint32_t * st, uint32_t len, struct gstack_set * out) {
    set_clear(&g->seen);
    g->n_todo = 0;
    if (!todo_push(g, st, len, UINT32_MAX, UINT32_MAX)) {
        return false;
    }
    while (g->n_todo > 0) {
        const uint32_t n = g->todo[g->n_todo - 1];
        g->n_todo -= n + 1;
        if (!grow_u32(&g->cur, &g->cap_cur, n + 1)) {
            return false;
        }
        memcpy(g->cur, g->todo + g->n_todo, n * sizeof(*g->cur));

        const size_t n_seen = g->seen.n;
        if (!set_add(&g->seen, g->cur, n)) {
            return false;
        }
        if (g->seen.n == n_seen) {
            continue; // expanded already
        }
        if (n == 0) {
            if (!set_add(out, g->cur, 0)) {
                return false;
            }
            continue;
        }
        const uint32_t top = g->cur[n - 1];
        const llama_grammar_element * e = &g->elems[top];
        if (e->type != LLAMA_GRETYPE_RULE_REF) {
            if (!set_add(out, g->cur, n)) {
                return false;
            }
            continue;
        }
        const uint32_t next = is_end_of_sequence(e + 1) ? UINT32_MAX : top + 1;
        uint32_t sub = g->rule_off[e->value];
        for (;;) {
            const uint32_t alt = is_end_of_sequence(&g->elems[sub]) ? UINT32_MAX : sub;
            if (!todo_push(g, g->cur, n - 1, next, alt)) {
                return false;
            }
            while (!is_end_of_sequence(&g->elems[sub])) {
                sub++;
            }
            if (g->elems[sub].type != LLAMA_GRETYPE_ALT) {
                break;
            }
            sub++;
        }
    }
    return true;
}

// does chr satisfy the character class at pos? *after: the element following the class
static bool match_char(const llama_grammar_element * elems, uint32_t pos, uint32_t chr, uint32_t * after) {
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
static bool match_partial_char(const llama_grammar_element * elems, uint32_t pos, struct llama_partial_utf8 partial) {
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

static bool match_token(const llama_grammar_element * e, llama_token token) {
    if (e->type == LLAMA_GRETYPE_TOKEN) {
        return e->value == (uint32_t) token;
    }
    return e->value != (uint32_t) token;
}

// out = the stacks of in after matching chr (out is cleared first)
static bool step_set(struct llama_grammar * g, const struct gstack_set * in, uint32_t chr, struct gstack_set * out) {
    set_clear(out);
    for (size_t i = 0; i < in->n; ++i) {
        uint32_t len;
        const uint32_t * st = set_stack(in, i, &len);
        if (len == 0) {
            continue;
        }
        const uint32_t top = st[len - 1];
        if (is_token_elem(&g->elems[top])) {
            continue;
        }
        uint32_t after;
        if (!match_char(g->elems, top, chr, &after)) {
            continue;
        }
        if (!grow_u32(&g->pop, &g->cap_pop, len)) {
            return false;
        }
        memcpy(g->pop, st, (len - 1) * sizeof(*g->pop));
        uint32_t n = len - 1;
        if (!is_end_of_sequence(&g->elems[after])) {
            g->pop[n++] = after;
        }
        // a terminal (or nothing) on top already: no rule to expand, skip advance's bookkeeping
        const bool done = n == 0 || g->elems[g->pop[n - 1]].type != LLAMA_GRETYPE_RULE_REF;
        if (!(done ? set_add(out, g->pop, n) : advance_stack(g, g->pop, n, out))) {
            return false;
        }
    }
    return true;
}

// does some stack of s accept a piece ending in the cut sequence partial?
static bool set_accepts_partial(const struct llama_grammar * g, const struct gstack_set * s, struct llama_partial_utf8 partial) {
    for (size_t i = 0; i < s->n; ++i) {
        uint32_t len;
        const uint32_t * st = set_stack(s, i, &len);
        if (len > 0 && !is_token_elem(&g->elems[st[len - 1]]) && match_partial_char(g->elems, st[len - 1], partial)) {
            return true;
        }
    }
    return false;
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

//
// init: flatten, reject left recursion, initial stacks
//

// rules that can derive the empty string (fixpoint)
static bool * compute_nullable(const struct llama_grammar * g) {
    bool * nullable = calloc(g->n_rules ? g->n_rules : 1, sizeof(*nullable));
    if (!nullable) {
        return NULL;
    }
    for (bool changed = true; changed; ) {
        changed = false;
        for (uint32_t r = 0; r < g->n_rules; ++r) {
            if (nullable[r]) {
                continue;
            }
            bool alt_nullable = true;
            for (uint32_t p = g->rule_off[r]; ; ++p) {
                const llama_grammar_element * e = &g->elems[p];
                if (is_end_of_sequence(e)) {
                    if (alt_nullable) {
                        nullable[r] = true;
                        changed = true;
                        break;
                    }
                    if (e->type == LLAMA_GRETYPE_END) {
                        break;
                    }
                    alt_nullable = true;
                } else if (e->type == LLAMA_GRETYPE_RULE_REF) {
                    alt_nullable = alt_nullable && nullable[e->value];
                } else if (e->type != LLAMA_GRETYPE_CHAR_ALT && e->type != LLAMA_GRETYPE_CHAR_RNG_UPPER) {
                    alt_nullable = false;
                }
            }
        }
    }
    return nullable;
}

// the rule references reachable at the left of rule r without consuming input; calls visit for each
typedef bool (*left_ref_fn)(void * ud, uint32_t ref);
static bool for_each_left_ref(const struct llama_grammar * g, const bool * nullable, uint32_t r, left_ref_fn fn, void * ud) {
    bool at_left = true;
    for (uint32_t p = g->rule_off[r]; ; ++p) {
        const llama_grammar_element * e = &g->elems[p];
        if (is_end_of_sequence(e)) {
            if (e->type == LLAMA_GRETYPE_END) {
                return true;
            }
            at_left = true;
        } else if (e->type == LLAMA_GRETYPE_RULE_REF) {
            if (at_left && !fn(ud, e->value)) {
                return false;
            }
            at_left = at_left && nullable[e->value];
        } else if (e->type != LLAMA_GRETYPE_CHAR_ALT && e->type != LLAMA_GRETYPE_CHAR_RNG_UPPER) {
            at_left = false;
        }
    }
}

struct left_dfs {
    uint32_t * adj_off; // [n_rules + 1]
    uint32_t * adj;     // CSR of left references
    uint32_t   n_adj;
};

static bool left_count(void * ud, uint32_t ref) {
    GGML_UNUSED(ref);
    ((struct left_dfs *) ud)->n_adj++;
    return true;
}

static bool left_store(void * ud, uint32_t ref) {
    struct left_dfs * d = ud;
    d->adj[d->n_adj++] = ref;
    return true;
}

// returns the id of a rule on a left-recursive cycle, UINT32_MAX when there is none, UINT32_MAX - 1 when out of memory
static uint32_t find_left_recursion(const struct llama_grammar * g) {
    const uint32_t oom = UINT32_MAX - 1;
    bool * nullable = compute_nullable(g);
    struct left_dfs d = { 0 };
    uint8_t  * color = calloc(g->n_rules + 1, 1); // 0 new, 1 on the DFS path, 2 done
    uint32_t * path  = malloc((g->n_rules + 1) * sizeof(*path));
    uint32_t * iter  = malloc((g->n_rules + 1) * sizeof(*iter));
    d.adj_off = malloc((g->n_rules + 1) * sizeof(*d.adj_off));
    uint32_t result = oom;
    if (!nullable || !color || !path || !iter || !d.adj_off) {
        goto done;
    }
    for (uint32_t r = 0; r < g->n_rules; ++r) {
        d.adj_off[r] = d.n_adj;
        for_each_left_ref(g, nullable, r, left_count, &d);
    }
    d.adj_off[g->n_rules] = d.n_adj;
    d.adj = malloc((d.n_adj + 1) * sizeof(*d.adj));
    if (!d.adj) {
        goto done;
    }
    d.n_adj = 0;
    for (uint32_t r = 0; r < g->n_rules; ++r) {
        for_each_left_ref(g, nullable, r, left_store, &d);
    }

    result = UINT32_MAX;
    for (uint32_t s = 0; s < g->n_rules && result == UINT32_MAX; ++s) {
        if (color[s]) {
            continue;
        }
        uint32_t depth = 0;
        path[depth] = s;
        iter[depth] = d.adj_off[s];
        color[s] = 1;
        while (depth != UINT32_MAX && result == UINT32_MAX) {
            const uint32_t r = path[depth];
            if (iter[depth] == d.adj_off[r + 1]) {
                color[r] = 2;
                depth = depth == 0 ? UINT32_MAX : depth - 1;
                continue;
            }
            const uint32_t next = d.adj[iter[depth]++];
            if (color[next] == 1) {
                result = next;
            } else if (color[next] == 0) {
                color[next] = 1;
                depth++;
                path[depth] = next;
                iter[depth] = d.adj_off[next];
            }
        }
    }
done:
    free(nullable);
    free(color);
    free(path);
    free(iter);
    free(d.adj_off);
    free(d.adj);
    return result;
}

static void grammar_error(char * err, size_t err_size, const char * fmt, const char * a, const char * b) {
    char msg[384];
    snprintf(msg, sizeof(msg), fmt, a, b);
    LLAMA_LOG_ERROR("%s\n", msg);
    if (err && err_size) {
        snprintf(err, err_size, "%s", msg);
    }
}

struct llama_grammar * llama_grammar_init_impl(const struct llama_vocab * vocab, const char * grammar_str,
        const char * grammar_root, char * err, size_t err_size) {
    if (err && err_size) {
        err[0] = '\0';
    }
    struct llama_grammar_parser p;
    llama_grammar_parser_init(&p, vocab);
    if (!llama_grammar_parser_parse(&p, grammar_str)) {
        grammar_error(err, err_size, "failed to parse grammar: %s%s", p.error, "");
        llama_grammar_parser_free(&p);
        return NULL;
    }
    const char * root = grammar_root ? grammar_root : "root";
    const int32_t root_id = llama_grammar_parser_symbol_id(&p, root);
    if (root_id < 0) {
        grammar_error(err, err_size, "grammar does not contain a '%s' symbol%s", root, "");
        llama_grammar_parser_free(&p);
        return NULL;
    }

    struct llama_grammar * g = calloc(1, sizeof(*g));
    if (!g) {
        llama_grammar_parser_free(&p);
        return NULL;
    }
    g->n_rules  = p.n_symbols;
    g->n_elems  = 0;
    for (uint32_t r = 0; r < p.n_symbols; ++r) {
        g->n_elems += p.rules[r].n;
    }
    g->elems    = malloc((g->n_elems + 1) * sizeof(*g->elems));
    g->rule_off = malloc((g->n_rules + 1) * sizeof(*g->rule_off));
    if (!g->elems || !g->rule_off) {
        grammar_error(err, err_size, "out of memory for the grammar rules%s%s", "", "");
        llama_grammar_parser_free(&p);
        llama_grammar_free_impl(g);
        return NULL;
    }
    size_t off = 0;
    for (uint32_t r = 0; r < p.n_symbols; ++r) {
        g->rule_off[r] = (uint32_t) off;
        memcpy(g->elems + off, p.rules[r].elems, p.rules[r].n * sizeof(*g->elems));
        off += p.rules[r].n;
    }

    const uint32_t lr = find_left_recursion(g);
    if (lr != UINT32_MAX) {
        if (lr == UINT32_MAX - 1) {
            grammar_error(err, err_size, "out of memory checking the grammar%s%s", "", "");
        } else {
            grammar_error(err, err_size, "unsupported grammar, left recursion detected for nonterminal '%s'%s", p.names[lr], "");
        }
        llama_grammar_parser_free(&p);
        llama_grammar_free_impl(g);
        return NULL;
    }
    llama_grammar_parser_free(&p);

    // one stack per alternative of the root, advanced to its first terminals
    bool ok = true;
    uint32_t pos = g->rule_off[root_id];
    for (;;) {
        const uint32_t one = pos;
        ok = ok && advance_stack(g, &one, is_end_of_sequence(&g->elems[pos]) ? 0 : 1, &g->stacks);
        while (!is_end_of_sequence(&g->elems[pos])) {
            pos++;
        }
        if (g->elems[pos].type != LLAMA_GRETYPE_ALT) {
            break;
        }
        pos++;
    }
    if (!ok || !set_copy(&g->init, &g->stacks)) {
        grammar_error(err, err_size, "out of memory building the grammar stacks%s%s", "", "");
        llama_grammar_free_impl(g);
        return NULL;
    }
    return g;
}

void llama_grammar_free_impl(struct llama_grammar * g) {
    if (!g) {
        return;
    }
    free(g->elems);
    free(g->rule_off);
    set_free(&g->stacks);
    set_free(&g->init);
    set_free(&g->tmp[0]);
    set_free(&g->tmp[1]);
    set_free(&g->seen);
    for (size_t i = 0; i < g->n_level; ++i) {
        set_free(&g->level[i]);
    }
    free(g->level);
    free(g->todo);
    free(g->cur);
    free(g->pop);
    free(g->cps);
    free(g);
}

struct llama_grammar * llama_grammar_clone_impl(const struct llama_grammar * src) {
    struct llama_grammar * g = calloc(1, sizeof(*g));
    if (!g) {
        return NULL;
    }
    g->n_elems  = src->n_elems;
    g->n_rules  = src->n_rules;
    g->elems    = malloc((src->n_elems + 1) * sizeof(*g->elems));
    g->rule_off = malloc((src->n_rules + 1) * sizeof(*g->rule_off));
    if (!g->elems || !g->rule_off || !set_copy(&g->stacks, &src->stacks) || !set_copy(&g->init, &src->init)) {
        llama_grammar_free_impl(g);
        return NULL;
    }
    memcpy(g->elems, src->elems, src->n_elems * sizeof(*g->elems));
    memcpy(g->rule_off, src->rule_off, src->n_rules * sizeof(*g->rule_off));
    g->partial = src->partial;
    return g;
}

void llama_grammar_reset(struct llama_grammar * g) {
    if (!set_copy(&g->stacks, &g->init)) {
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
    }
    g->partial = (struct llama_partial_utf8) { 0, 0, 0 };
}

bool llama_grammar_copy_state(const struct llama_grammar * src, struct llama_grammar * dst) {
    if (!set_copy(&dst->tmp[0], &src->stacks)) {
        return false;
    }
    set_swap(&dst->stacks, &dst->tmp[0]);
    dst->partial = src->partial;
    return true;
}

bool llama_grammar_is_complete(const struct llama_grammar * g) {
    for (size_t i = 0; i < g->stacks.n; ++i) {
        if (g->stacks.st[i].len == 0) {
            return true;
        }
    }
    return false;
}

size_t llama_grammar_n_stacks(const struct llama_grammar * g) {
    return g->stacks.n;
}

struct llama_partial_utf8 llama_grammar_partial(const struct llama_grammar * g) {
    return g->partial;
}

//
// accepting text
//

bool llama_grammar_accept_chr(struct llama_grammar * g, uint32_t chr) {
    if (!step_set(g, &g->stacks, chr, &g->tmp[0]) || g->tmp[0].n == 0) {
        return false;
    }
    set_swap(&g->stacks, &g->tmp[0]);
    return true;
}

// runs the code points cps[0..n) from the stacks of in (token-topped and empty stacks drop out when n > 0);
// the result is in g->tmp[0]. false when nothing survives.
static bool run_chars(struct llama_grammar * g, const struct gstack_set * in, const uint32_t * cps, size_t n) {
    if (n == 0) {
        set_clear(&g->tmp[0]);
        for (size_t i = 0; i < in->n; ++i) {
            uint32_t len;
            const uint32_t * st = set_stack(in, i, &len);
            if (!set_add(&g->tmp[0], st, len)) {
                return false;
            }
        }
        return g->tmp[0].n > 0;
    }
    const struct gstack_set * cur = in;
    for (size_t i = 0; i < n; ++i) {
        struct gstack_set * out = &g->tmp[(i + 1) % 2];
        if (!step_set(g, cur, cps[i], out) || out->n == 0) {
            return false;
        }
        cur = out;
    }
    if (cur != &g->tmp[0]) {
        set_swap(&g->tmp[0], &g->tmp[1]);
    }
    return true;
}

static bool decode_into(struct llama_grammar * g, const char * str, size_t len, struct llama_partial_utf8 * partial, size_t * n) {
    if (!grow_u32(&g->cps, &g->cap_cps, len + 1)) {
        return false;
    }
    *partial = g->partial;
    *n = llama_grammar_decode_utf8(str, len, partial, g->cps);
    return partial->n_remain >= 0;
}

bool llama_grammar_accept_str(struct llama_grammar * g, const char * str, size_t len) {
    struct llama_partial_utf8 partial;
    size_t n = 0;
    if (!decode_into(g, str, len, &partial, &n) || !run_chars(g, &g->stacks, g->cps, n)) {
        return false;
    }
    if (partial.n_remain > 0 && !set_accepts_partial(g, &g->tmp[0], partial)) {
        return false;
    }
    set_swap(&g->stacks, &g->tmp[0]);
    g->partial = partial;
    return true;
}

bool llama_grammar_accept_token(struct llama_grammar * g, llama_token token, const char * piece, size_t len) {
    struct llama_partial_utf8 partial;
    size_t n = 0;
    const bool decoded = decode_into(g, piece, len, &partial, &n);

    struct gstack_set acc   = { 0 }; // the new stacks
    struct gstack_set start = { 0 }; // stacks with a character class on top
    bool ok  = true;
    bool any = false;
    for (size_t i = 0; i < g->stacks.n && ok; ++i) {
        uint32_t l;
        const uint32_t * st = set_stack(&g->stacks, i, &l);
        if (l == 0) {
            continue;
        }
        const uint32_t top = st[l - 1];
        if (!is_token_elem(&g->elems[top])) {
            ok = set_add(&start, st, l);
            continue;
        }
        // token elements match whole tokens by id
        if (!match_token(&g->elems[top], token)) {
            continue;
        }
        ok = grow_u32(&g->pop, &g->cap_pop, l);
        if (ok) {
            memcpy(g->pop, st, (l - 1) * sizeof(*g->pop));
            uint32_t m = l - 1;
            if (!is_end_of_sequence(&g->elems[top + 1])) {
                g->pop[m++] = top + 1;
            }
            ok = advance_stack(g, g->pop, m, &acc);
            any = true;
        }
    }
    // the character path: the piece's code points, and a cut sequence at its end must still fit
    if (ok && decoded && start.n > 0 && run_chars(g, &start, g->cps, n) &&
            (partial.n_remain == 0 || set_accepts_partial(g, &g->tmp[0], partial))) {
        for (size_t i = 0; i < g->tmp[0].n && ok; ++i) {
            uint32_t l;
            const uint32_t * st = set_stack(&g->tmp[0], i, &l);
            ok = set_add(&acc, st, l);
        }
        any = true;
    }
    set_free(&start);
    if (!ok || !any || acc.n == 0) {
        set_free(&acc);
        return false;
    }
    set_swap(&g->stacks, &acc);
    set_free(&acc);
    // a token matched only by id leaves no cut sequence behind
    g->partial = decoded ? partial : (struct llama_partial_utf8) { 0, 0, 0 };
    return true;
}

//
// candidates
//

int llama_grammar_candidate_cmp(const void * pa, const void * pb) {
    const struct llama_grammar_candidate * a = pa;
    const struct llama_grammar_candidate * b = pb;
    const uint32_t n = a->n_cps < b->n_cps ? a->n_cps : b->n_cps;
    for (uint32_t i = 0; i < n; ++i) {
        if (a->cps[i] != b->cps[i]) {
            return a->cps[i] < b->cps[i] ? -1 : 1;
        }
    }
    return (a->n_cps > b->n_cps) - (a->n_cps < b->n_cps);
}

static struct gstack_set * level_set(struct llama_grammar * g, size_t d) {
    if (d >= g->n_level) {
        const size_t n = d + 16;
        struct gstack_set * l = realloc(g->level, n * sizeof(*l));
        if (!l) {
            return NULL;
        }
        memset(l + g->n_level, 0, (n - g->n_level) * sizeof(*l));
        g->level  = l;
        g->n_level = n;
    }
    return &g->level[d];
}

// candidates [lo, hi) share their first d code points, which took the stacks to s
static bool walk_candidates(struct llama_grammar * g, const struct gstack_set * s, struct llama_grammar_candidate * c,
        size_t lo, size_t hi, uint32_t d) {
    size_t i = lo;
    // the pieces that end here: whole, or cut inside a UTF-8 sequence that some stack must be able to take
    for (; i < hi && c[i].n_cps == d; ++i) {
        if (c[i].tail.n_remain == 0) {
            c[i].accepted = true;
        } else if (c[i].tail.n_remain > 0 && !c[i].accepted) {
            c[i].accepted = set_accepts_partial(g, s, c[i].tail);
        }
    }
    while (i < hi) {
        const uint32_t chr = c[i].cps[d];
        size_t j = i;
        bool pending = false;
        while (j < hi && c[j].cps[d] == chr) {
            pending = pending || !c[j].accepted;
            j++;
        }
        if (pending) {
            struct gstack_set * next = &g->level[d + 1]; // sized by llama_grammar_match_candidates
            if (!step_set(g, s, chr, next)) {
                return false;
            }
            if (next->n > 0 && !walk_candidates(g, next, c, i, j, d + 1)) {
                return false;
            }
        }
        i = j;
    }
    return true;
}

bool llama_grammar_match_candidates(struct llama_grammar * g, struct llama_grammar_candidate * c, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        c[i].accepted = false;
    }
    // token elements match whole tokens by id
    for (size_t k = 0; k < g->stacks.n; ++k) {
        uint32_t len;
        const uint32_t * st = set_stack(&g->stacks, k, &len);
        if (len == 0 || !is_token_elem(&g->elems[st[len - 1]])) {
            continue;
        }
        for (size_t i = 0; i < n; ++i) {
            c[i].accepted = c[i].accepted || match_token(&g->elems[st[len - 1]], c[i].id);
        }
    }
    // one stack set per code point depth, allocated before the walk so that pointers into g->level stay valid
    uint32_t max_cps = 0;
    for (size_t i = 0; i < n; ++i) {
        max_cps = c[i].n_cps > max_cps ? c[i].n_cps : max_cps;
    }
    if (!level_set(g, (size_t) max_cps + 1)) {
        return false;
    }
    return walk_candidates(g, &g->stacks, c, 0, n, 0);
}
