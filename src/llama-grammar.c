// GBNF matcher: llama.cpp's pushdown automaton. The state is a set of stacks; each stack holds positions
// (indices into the flattened rules) of what is still to be matched, its top always a terminal (character class
// or token) after advancing. Accepting a code point pops the terminal it matches and advances through rule
// references; an empty stack means the text so far is a complete sentence. Left-recursive grammars are rejected
// at init, which is what guarantees that advancing terminates. The stack sets, code-point matching and the
// left-recursion check are in llama-grammar-stacks.c, llama-grammar-chars.c and llama-grammar-left-recursion.c
// (llama-grammar-impl.h).

#include "llama-grammar-impl.h"

#include "llama-impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//
// the grammar
//

struct llama_grammar {
    llama_grammar_element * elems;   // [n_elems] every rule, each ending with END
    size_t                  n_elems;
    uint32_t              * rule_off; // [n_rules] start of each rule in elems
    uint32_t                n_rules;

    struct llama_grammar_stacks         stacks;
    struct llama_partial_utf8 partial;

    struct llama_grammar_stacks         init; // stacks right after init, for reset

    // scratch
    struct llama_grammar_stacks   tmp[2];
    struct llama_grammar_stacks   seen;      // stacks already expanded by one advance
    uint32_t          * todo;      // work list of advance: stacks back to back, each followed by its length
    size_t              n_todo;
    size_t              cap_todo;
    uint32_t          * cur;       // the stack being expanded
    size_t              cap_cur;
    uint32_t          * pop;       // a stack with its top matched, before advancing
    size_t              cap_pop;
    struct llama_grammar_stacks * level;     // [n_level] stack set after each code point of a candidate prefix
    size_t              n_level;
    uint32_t          * cps;       // decode buffer for accept_str / accept_token
    size_t              cap_cps;
};

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
static bool advance_stack(struct llama_grammar * g, const uint32_t * st, uint32_t len,
        struct llama_grammar_stacks * out) {
    llama_grammar_stacks_clear(&g->seen);
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
        if (!llama_grammar_stacks_add(&g->seen, g->cur, n)) {
            return false;
        }
        if (g->seen.n == n_seen) {
            continue; // expanded already
        }
        if (n == 0) {
            if (!llama_grammar_stacks_add(out, g->cur, 0)) {
                return false;
            }
            continue;
        }
        const uint32_t top = g->cur[n - 1];
        const llama_grammar_element * e = &g->elems[top];
        if (e->type != LLAMA_GRETYPE_RULE_REF) {
            if (!llama_grammar_stacks_add(out, g->cur, n)) {
                return false;
            }
            continue;
        }
        const uint32_t next = llama_grammar_is_end_of_sequence(e + 1) ? UINT32_MAX : top + 1;
        uint32_t sub = g->rule_off[e->value];
        for (;;) {
            const uint32_t alt = llama_grammar_is_end_of_sequence(&g->elems[sub]) ? UINT32_MAX : sub;
            if (!todo_push(g, g->cur, n - 1, next, alt)) {
                return false;
            }
            while (!llama_grammar_is_end_of_sequence(&g->elems[sub])) {
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

static bool match_token(const llama_grammar_element * e, llama_token token) {
    if (e->type == LLAMA_GRETYPE_TOKEN) {
        return e->value == (uint32_t) token;
    }
    return e->value != (uint32_t) token;
}

// out = the stacks of in after matching chr (out is cleared first)
static bool step_set(struct llama_grammar * g, const struct llama_grammar_stacks * in, uint32_t chr,
        struct llama_grammar_stacks * out) {
    llama_grammar_stacks_clear(out);
    for (size_t i = 0; i < in->n; ++i) {
        uint32_t len;
        const uint32_t * st = llama_grammar_stacks_get(in, i, &len);
        if (len == 0) {
            continue;
        }
        const uint32_t top = st[len - 1];
        if (is_token_elem(&g->elems[top])) {
            continue;
        }
        uint32_t after;
        if (!llama_grammar_match_char(g->elems, top, chr, &after)) {
            continue;
        }
        if (!grow_u32(&g->pop, &g->cap_pop, len)) {
            return false;
        }
        memcpy(g->pop, st, (len - 1) * sizeof(*g->pop));
        uint32_t n = len - 1;
        if (!llama_grammar_is_end_of_sequence(&g->elems[after])) {
            g->pop[n++] = after;
        }
        // a terminal (or nothing) on top already: no rule to expand, skip advance's bookkeeping
        const bool done = n == 0 || g->elems[g->pop[n - 1]].type != LLAMA_GRETYPE_RULE_REF;
        if (!(done ? llama_grammar_stacks_add(out, g->pop, n) : advance_stack(g, g->pop, n, out))) {
            return false;
        }
    }
    return true;
}

// does some stack of s accept a piece ending in the cut sequence partial?
static bool set_accepts_partial(const struct llama_grammar * g, const struct llama_grammar_stacks * s,
        struct llama_partial_utf8 partial) {
    for (size_t i = 0; i < s->n; ++i) {
        uint32_t len;
        const uint32_t * st = llama_grammar_stacks_get(s, i, &len);
        if (len > 0 && !is_token_elem(&g->elems[st[len - 1]]) &&
                llama_grammar_match_partial_char(g->elems, st[len - 1], partial)) {
            return true;
        }
    }
    return false;
}

//
// init
//

static void grammar_error(char * err, size_t err_size, const char * fmt, ...) __attribute__((format(printf, 3, 4)));

static void grammar_error(char * err, size_t err_size, const char * fmt, ...) {
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
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
        grammar_error(err, err_size, "failed to parse grammar: %s", p.error);
        llama_grammar_parser_free(&p);
        return NULL;
    }
    const char * root = grammar_root ? grammar_root : "root";
    const int32_t root_id = llama_grammar_parser_symbol_id(&p, root);
    if (root_id < 0) {
        grammar_error(err, err_size, "grammar does not contain a '%s' symbol", root);
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
        grammar_error(err, err_size, "out of memory for the grammar rules");
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

    const uint32_t lr = llama_grammar_find_left_recursion(g->elems, g->rule_off, g->n_rules);
    if (lr != UINT32_MAX) {
        if (lr == UINT32_MAX - 1) {
            grammar_error(err, err_size, "out of memory checking the grammar");
        } else {
            grammar_error(err, err_size, "unsupported grammar, left recursion detected for nonterminal '%s'", p.names[lr]);
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
        ok = ok && advance_stack(g, &one, llama_grammar_is_end_of_sequence(&g->elems[pos]) ? 0 : 1, &g->stacks);
        while (!llama_grammar_is_end_of_sequence(&g->elems[pos])) {
            pos++;
        }
        if (g->elems[pos].type != LLAMA_GRETYPE_ALT) {
            break;
        }
        pos++;
    }
    if (!ok || !llama_grammar_stacks_copy(&g->init, &g->stacks)) {
        grammar_error(err, err_size, "out of memory building the grammar stacks");
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
    llama_grammar_stacks_free(&g->stacks);
    llama_grammar_stacks_free(&g->init);
    llama_grammar_stacks_free(&g->tmp[0]);
    llama_grammar_stacks_free(&g->tmp[1]);
    llama_grammar_stacks_free(&g->seen);
    for (size_t i = 0; i < g->n_level; ++i) {
        llama_grammar_stacks_free(&g->level[i]);
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
    if (!g->elems || !g->rule_off || !llama_grammar_stacks_copy(&g->stacks, &src->stacks) ||
            !llama_grammar_stacks_copy(&g->init, &src->init)) {
        llama_grammar_free_impl(g);
        return NULL;
    }
    memcpy(g->elems, src->elems, src->n_elems * sizeof(*g->elems));
    memcpy(g->rule_off, src->rule_off, src->n_rules * sizeof(*g->rule_off));
    g->partial = src->partial;
    return g;
}

void llama_grammar_reset(struct llama_grammar * g) {
    if (!llama_grammar_stacks_copy(&g->stacks, &g->init)) {
        LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
    }
    g->partial = (struct llama_partial_utf8) { 0, 0, 0 };
}

bool llama_grammar_copy_state(const struct llama_grammar * src, struct llama_grammar * dst) {
    if (!llama_grammar_stacks_copy(&dst->tmp[0], &src->stacks)) {
        return false;
    }
    llama_grammar_stacks_swap(&dst->stacks, &dst->tmp[0]);
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
    llama_grammar_stacks_swap(&g->stacks, &g->tmp[0]);
    return true;
}

// runs the code points cps[0..n) from the stacks of in (token-topped and empty stacks drop out when n > 0);
// the result is in g->tmp[0]. false when nothing survives.
static bool run_chars(struct llama_grammar * g, const struct llama_grammar_stacks * in, const uint32_t * cps,
        size_t n) {
    if (n == 0) {
        return llama_grammar_stacks_copy(&g->tmp[0], in) && g->tmp[0].n > 0;
    }
    const struct llama_grammar_stacks * cur = in;
    for (size_t i = 0; i < n; ++i) {
        struct llama_grammar_stacks * out = &g->tmp[(i + 1) % 2];
        if (!step_set(g, cur, cps[i], out) || out->n == 0) {
            return false;
        }
        cur = out;
    }
    if (cur != &g->tmp[0]) {
        llama_grammar_stacks_swap(&g->tmp[0], &g->tmp[1]);
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
    llama_grammar_stacks_swap(&g->stacks, &g->tmp[0]);
    g->partial = partial;
    return true;
}

bool llama_grammar_accept_token(struct llama_grammar * g, llama_token token, const char * piece, size_t len) {
    struct llama_partial_utf8 partial;
    size_t n = 0;
    const bool decoded = decode_into(g, piece, len, &partial, &n);

    struct llama_grammar_stacks acc   = { 0 }; // the new stacks
    struct llama_grammar_stacks start = { 0 }; // stacks with a character class on top
    bool ok  = true;
    bool any = false;
    for (size_t i = 0; i < g->stacks.n && ok; ++i) {
        uint32_t l;
        const uint32_t * st = llama_grammar_stacks_get(&g->stacks, i, &l);
        if (l == 0) {
            continue;
        }
        const uint32_t top = st[l - 1];
        if (!is_token_elem(&g->elems[top])) {
            ok = llama_grammar_stacks_add(&start, st, l);
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
            if (!llama_grammar_is_end_of_sequence(&g->elems[top + 1])) {
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
            const uint32_t * st = llama_grammar_stacks_get(&g->tmp[0], i, &l);
            ok = llama_grammar_stacks_add(&acc, st, l);
        }
        any = true;
    }
    llama_grammar_stacks_free(&start);
    if (!ok || !any || acc.n == 0) {
        llama_grammar_stacks_free(&acc);
        return false;
    }
    llama_grammar_stacks_swap(&g->stacks, &acc);
    llama_grammar_stacks_free(&acc);
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

static struct llama_grammar_stacks * level_set(struct llama_grammar * g, size_t d) {
    if (d >= g->n_level) {
        const size_t n = d + 16;
        struct llama_grammar_stacks * l = realloc(g->level, n * sizeof(*l));
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
static bool walk_candidates(struct llama_grammar * g, const struct llama_grammar_stacks * s,
        struct llama_grammar_candidate * c, size_t lo, size_t hi, uint32_t d) {
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
            struct llama_grammar_stacks * next = &g->level[d + 1]; // sized by llama_grammar_match_candidates
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
        const uint32_t * st = llama_grammar_stacks_get(&g->stacks, k, &len);
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
