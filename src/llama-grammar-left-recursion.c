// The left-recursion check of the GBNF matcher (see llama-grammar-impl.h), done once at init: a rule that can
// reach itself at its left edge without consuming input (through rules that derive the empty string) would make
// advancing the stacks loop forever, so such grammars are rejected, as llama.cpp rejects them.

#include "llama-grammar-impl.h"

#include "llama-impl.h"

#include <stdlib.h>

// the flattened rules being checked: rule r starts at elems[rule_off[r]] and ends with END
struct grammar_rules {
    const llama_grammar_element * elems;
    const uint32_t              * rule_off;
    uint32_t                      n_rules;
};

// rules that can derive the empty string (fixpoint)
static bool * compute_nullable(const struct grammar_rules * g) {
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
                if (llama_grammar_is_end_of_sequence(e)) {
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

// the rule references reachable at the left of rule r without consuming input; calls fn for each
typedef bool (*left_ref_fn)(void * ud, uint32_t ref);
static bool for_each_left_ref(const struct grammar_rules * g, const bool * nullable, uint32_t r, left_ref_fn fn, void * ud) {
    bool at_left = true;
    for (uint32_t p = g->rule_off[r]; ; ++p) {
        const llama_grammar_element * e = &g->elems[p];
        if (llama_grammar_is_end_of_sequence(e)) {
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

// DFS over the left references: a reference back onto the DFS path closes a cycle
static uint32_t find_left_recursion(const struct grammar_rules * g) {
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

uint32_t llama_grammar_find_left_recursion(const llama_grammar_element * elems, const uint32_t * rule_off,
                                           uint32_t n_rules) {
    const struct grammar_rules g = { elems, rule_off, n_rules };
    return find_left_recursion(&g);
}
