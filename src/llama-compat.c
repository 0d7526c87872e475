// Entry points llama.cpp still declares that are thin forms of others: NUMA init and the deprecated
// word-triggered lazy grammar.
#include "llama.h"

#include "llama-impl.h"

#include "ggml-cpu.h"

#include <stdlib.h>
#include <string.h>

void llama_numa_init(enum ggml_numa_strategy numa) {
    if (numa != GGML_NUMA_STRATEGY_DISABLED) {
        ggml_numa_init(numa);
    }
}

// llama.cpp turns the trigger words into one pattern: any prefix, then the first of the words (regex-escaped)
// as the group the grammar starts at, then anything
struct llama_sampler * llama_sampler_init_grammar_lazy(
        const struct llama_vocab * vocab,
        const char * grammar_str,
        const char * grammar_root,
        const char ** trigger_words,
        size_t num_trigger_words,
        const llama_token * trigger_tokens,
        size_t num_trigger_tokens) {
    if (num_trigger_words == 0) {
        return llama_sampler_init_grammar_lazy_patterns(vocab, grammar_str, grammar_root, NULL, 0,
                trigger_tokens, num_trigger_tokens);
    }
    if (!trigger_words) {
        LLAMA_LOG_ERROR("%s: trigger_words is NULL\n", __func__);
        return NULL;
    }
    static const char prefix[] = "[\\s\\S]*?(";
    static const char suffix[] = ")[\\s\\S]*";
    size_t len = sizeof(prefix) + sizeof(suffix);
    for (size_t i = 0; i < num_trigger_words; i++) {
        if (!trigger_words[i]) {
            LLAMA_LOG_ERROR("%s: trigger word %zu is NULL\n", __func__, i);
            return NULL;
        }
        len += 2 * strlen(trigger_words[i]) + 1;
    }
    char * pat = malloc(len);
    if (!pat) {
        return NULL;
    }
    char * p = pat;
    memcpy(p, prefix, sizeof(prefix) - 1);
    p += sizeof(prefix) - 1;
    for (size_t i = 0; i < num_trigger_words; i++) {
        if (i > 0) {
            *p++ = '|';
        }
        for (const char * c = trigger_words[i]; *c; c++) {
            if (strchr(".^$|()*+?[]{}\\", *c)) {
                *p++ = '\\';
            }
            *p++ = *c;
        }
    }
    memcpy(p, suffix, sizeof(suffix)); // with the terminator
    const char * pats[1] = { pat };
    struct llama_sampler * s = llama_sampler_init_grammar_lazy_patterns(vocab, grammar_str, grammar_root, pats, 1,
            trigger_tokens, num_trigger_tokens);
    free(pat);
    return s;
}
