// libFuzzer target for the GBNF parser and matcher (src/llama-grammar*.c). The input is a grammar, then a NUL
// byte, then text: the grammar is parsed (no vocabulary), and when it parses, the text is fed to it byte by
// byte-run (accept_str) and to a clone, which must agree. Checked, besides "no crash, no leak, no hang":
//   - a clone reaches the same verdict and the same completeness as the original;
//   - reset brings the grammar back to accepting what it accepted at the start.
//
//   ./build-fuzz/bin/fuzz-grammar -max_total_time=300 corpus/

#include "llama-grammar.h"
#include "llama.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

#define FUZZ_ASSERT(cond, what) do { if (!(cond)) { fprintf(stderr, "fuzz-grammar: %s\n", what); abort(); } } while (0)

// the engine logs why a grammar does not parse: silence it, most inputs do not
static void quiet(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) text;
    (void) user_data;
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    llama_log_set(quiet, NULL);
    if (size > 4096) {
        return 0; // long grammars only slow the search down
    }
    const uint8_t * nul = memchr(data, 0, size);
    const size_t glen = nul ? (size_t) (nul - data) : size;
    char * gsrc = malloc(glen + 1);
    if (!gsrc) {
        return 0;
    }
    memcpy(gsrc, data, glen);
    gsrc[glen] = '\0';
    const char * text = nul ? (const char *) nul + 1 : "";
    const size_t tlen = nul ? size - glen - 1 : 0;

    struct llama_grammar * g = llama_grammar_init_impl(NULL, gsrc, "root", NULL, 0);
    if (g != NULL) {
        struct llama_grammar * c = llama_grammar_clone_impl(g);
        FUZZ_ASSERT(c != NULL, "clone failed");
        const bool ok_g = llama_grammar_accept_str(g, text, tlen);
        const bool ok_c = llama_grammar_accept_str(c, text, tlen);
        FUZZ_ASSERT(ok_g == ok_c, "clone disagrees on the text");
        if (ok_g) {
            FUZZ_ASSERT(llama_grammar_is_complete(g) == llama_grammar_is_complete(c), "clone disagrees on completeness");
        }
        // after a reset the first byte gets the verdict a fresh grammar gives it
        if (tlen > 0) {
            struct llama_grammar * fresh = llama_grammar_init_impl(NULL, gsrc, "root", NULL, 0);
            FUZZ_ASSERT(fresh != NULL, "a grammar that parsed once does not parse again");
            llama_grammar_reset(g);
            FUZZ_ASSERT(llama_grammar_accept_str(g, text, 1) == llama_grammar_accept_str(fresh, text, 1),
                        "reset grammar disagrees with a fresh one");
            llama_grammar_free_impl(fresh);
        }
        llama_grammar_free_impl(c);
        llama_grammar_free_impl(g);
    }
    free(gsrc);
    return 0;
}
