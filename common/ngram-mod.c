#include "ngram-mod.h"

#include <stdlib.h>

struct common_ngram_mod {
    size_t n;
    size_t used;
    size_t size;
    llama_token * entries;
};

struct common_ngram_mod * common_ngram_mod_init(uint16_t n, size_t size) {
    if (n == 0 || size == 0) {
        return NULL;
    }
    struct common_ngram_mod * m = calloc(1, sizeof(*m));
    if (!m) {
        return NULL;
    }
    m->entries = malloc(size * sizeof(*m->entries));
    if (!m->entries) {
        free(m);
        return NULL;
    }
    m->n    = n;
    m->size = size;
    common_ngram_mod_reset(m);
    return m;
}

void common_ngram_mod_free(struct common_ngram_mod * mod) {
    if (mod) {
        free(mod->entries);
        free(mod);
    }
}

size_t common_ngram_mod_idx(const struct common_ngram_mod * mod, const llama_token * tokens) {
    // llama.cpp's polynomial hash: Knuth's MMIX LCG multiplier over the token ids, in 64-bit unsigned arithmetic
    uint64_t res = 0;
    for (size_t i = 0; i < mod->n; i++) {
        res = res * 6364136223846793005ull + (uint64_t) (int64_t) tokens[i];
    }
    return (size_t) (res % (uint64_t) mod->size);
}

void common_ngram_mod_add(struct common_ngram_mod * mod, const llama_token * tokens) {
    const size_t i = common_ngram_mod_idx(mod, tokens);
    if (mod->entries[i] != COMMON_NGRAM_MOD_EMPTY) {
        mod->used++;
    }
    mod->entries[i] = tokens[mod->n];
}

llama_token common_ngram_mod_get(const struct common_ngram_mod * mod, const llama_token * tokens) {
    return mod->entries[common_ngram_mod_idx(mod, tokens)];
}

void common_ngram_mod_reset(struct common_ngram_mod * mod) {
    for (size_t i = 0; i < mod->size; i++) {
        mod->entries[i] = COMMON_NGRAM_MOD_EMPTY;
    }
    mod->used = 0;
}

size_t common_ngram_mod_get_n(const struct common_ngram_mod * mod) {
    return mod->n;
}

size_t common_ngram_mod_get_used(const struct common_ngram_mod * mod) {
    return mod->used;
}

size_t common_ngram_mod_size(const struct common_ngram_mod * mod) {
    return mod->size;
}
