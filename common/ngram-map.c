#include "ngram-map.h"

#include <stdlib.h>
#include <string.h>

// key hits saturate here (llama.cpp's COMMON_NGRAM_MAX_VALUE_COUNT)
#define NGRAM_MAP_MAX_COUNT 16380

void common_ngram_map_init(struct common_ngram_map * map, uint16_t size_key, uint16_t size_value, bool key_only,
                           uint16_t min_hits) {
    memset(map, 0, sizeof(*map));
    map->size_key   = size_key ? size_key : 1;
    map->size_value = size_value ? size_value : 1;
    map->key_only   = key_only;
    map->min_hits   = min_hits;
}

void common_ngram_map_free(struct common_ngram_map * map) {
    free(map->keys);
    memset(map, 0, sizeof(*map));
}

void common_ngram_map_begin(struct common_ngram_map * map, const llama_token * tokens, size_t n_tokens) {
    (void) tokens;
    // keys recorded beyond what both histories share may now point at different tokens
    size_t cleanup = map->size_last_begin;
    if (cleanup > n_tokens) {
        const size_t nm = (size_t) map->size_key + map->size_value;
        cleanup = n_tokens > nm ? n_tokens - nm : 0;
    }
    if (n_tokens < map->idx_last_check) {
        size_t w = 0;
        for (size_t i = 0; i < map->n_keys; i++) {
            struct common_ngram_map_key k = map->keys[i];
            if (k.key_idx >= cleanup) {
                continue;
            }
            if (!map->key_only) {
                // values past the cut go too; a key without values is dropped
                int nv = 0;
                for (int v = 0; v < COMMON_NGRAM_MAX_VALUES; v++) {
                    if (k.values[v].value_idx != 0 && k.values[v].value_idx < cleanup) {
                        k.values[nv++] = k.values[v];
                    }
                }
                for (int v = nv; v < COMMON_NGRAM_MAX_VALUES; v++) {
                    k.values[v].value_idx  = 0;
                    k.values[v].value_num  = 0;
                    k.values[v].n_accepted = map->size_value;
                }
                if (nv == 0) {
                    continue;
                }
                k.stat_idx = k.stat_idx < cleanup ? k.stat_idx : 0;
            }
            map->keys[w++] = k;
        }
        map->n_keys = w;
    }
    map->last_draft_created = false;
    map->idx_last_check  = n_tokens;
    map->size_last_begin = n_tokens;
}

static bool key_matches(const llama_token * inp, size_t at, const llama_token * key, size_t n) {
    return memcmp(inp + at, key, n * sizeof(*key)) == 0;
}

int32_t common_ngram_map_draft(struct common_ngram_map * map, const llama_token * inp, size_t n_inp,
                               llama_token sampled, llama_token * out, int32_t n_out_max) {
    map->last_draft_created = false;
    const size_t n = map->size_key, m = map->size_value;
    if (n_inp < 2 * n + m || n_out_max <= 0) {
        return 0;
    }
    if (map->idx_last_check > n_inp) {
        // the history was cut without a begin: treat it as one
        common_ngram_map_begin(map, inp, n_inp);
    }
    map->idx_last_check = n_inp;

    llama_token stack_key[64];
    llama_token * key = n <= 64 ? stack_key : malloc(n * sizeof(*key));
    if (!key) {
        return 0;
    }
    memcpy(key, inp + n_inp - n + 1, (n - 1) * sizeof(*key));
    key[n - 1] = sampled;

    // the most recent occurrence that still has m tokens after it inside the history (position 0 means no match)
    size_t match = 0;
    for (size_t j = n_inp - n - m - 1; j > 0; j--) {
        if (key_matches(inp, j, key, n)) {
            match = j;
            break;
        }
    }
    int32_t n_out = 0;
    if (match > 0) {
        size_t k = 0;
        while (k < map->n_keys && !key_matches(inp, map->keys[k].key_idx, key, n)) {
            k++;
        }
        if (k == map->n_keys) {
            if (map->n_keys == map->cap_keys) {
                const size_t cap = map->cap_keys ? map->cap_keys * 2 : 16;
                struct common_ngram_map_key * keys = realloc(map->keys, cap * sizeof(*keys));
                if (!keys) {
                    if (key != stack_key) {
                        free(key);
                    }
                    return 0;
                }
                map->keys     = keys;
                map->cap_keys = cap;
            }
            memset(&map->keys[k], 0, sizeof(map->keys[k]));
            map->keys[k].key_idx = match;
            for (int v = 0; v < COMMON_NGRAM_MAX_VALUES; v++) {
                map->keys[k].values[v].n_accepted = (int32_t) m;
            }
            map->n_keys++;
        }
        struct common_ngram_map_key * cur = &map->keys[k];
        if (cur->key_num < NGRAM_MAP_MAX_COUNT) {
            cur->key_num++;
        }
        int slot = 0;
        size_t from = match + n; // where the drafted m-gram starts
        bool use = map->key_only;
        if (!map->key_only && cur->key_num >= map->min_hits) {
            // count the m-grams that followed each occurrence of the key not yet scanned
            for (size_t i = cur->stat_idx; i <= match; i++) {
                if (!key_matches(inp, i, key, n)) {
                    continue;
                }
                const size_t vb = i + n;
                for (int v = 0; v < COMMON_NGRAM_MAX_VALUES; v++) {
                    struct common_ngram_map_value * val = &cur->values[v];
                    if (val->value_idx == 0) {
                        val->value_idx  = vb;
                        val->value_num  = 1;
                        val->n_accepted = (int32_t) m;
                        break;
                    }
                    if (memcmp(inp + vb, inp + val->value_idx, m * sizeof(*inp)) == 0) {
                        if (val->value_num < NGRAM_MAP_MAX_COUNT) {
                            val->value_num++;
                        }
                        break;
                    }
                }
            }
            cur->stat_idx = match + 1;
            uint32_t max_occur = 0, sum_other = 0;
            for (int v = 0; v < COMMON_NGRAM_MAX_VALUES; v++) {
                if (cur->values[v].value_num > max_occur) {
                    max_occur = cur->values[v].value_num;
                    slot = v;
                }
            }
            for (int v = 0; v < COMMON_NGRAM_MAX_VALUES; v++) {
                sum_other += v == slot ? 0 : cur->values[v].value_num;
            }
            // the most frequent continuation must dominate the others (llama.cpp: 3x their sum)
            use = max_occur > 0 && (sum_other == 0 || max_occur >= 3 * sum_other);
            from = cur->values[slot].value_idx;
        }
        if (use) {
            int32_t n_draft = cur->values[slot].n_accepted < (int32_t) m ? cur->values[slot].n_accepted : (int32_t) m;
            if (n_draft > n_out_max) {
                n_draft = n_out_max;
            }
            for (int32_t i = 0; i < n_draft; i++) {
                out[n_out++] = inp[from + (size_t) i];
            }
            map->last_draft_created = true;
            map->last_draft_key     = k;
            map->last_draft_value   = slot;
        }
    }
    if (key != stack_key) {
        free(key);
    }
    return n_out;
}

void common_ngram_map_accept(struct common_ngram_map * map, uint16_t n_accepted) {
    if (!map->last_draft_created || map->last_draft_key >= map->n_keys) {
        return;
    }
    map->keys[map->last_draft_key].values[map->last_draft_value].n_accepted = n_accepted;
}
