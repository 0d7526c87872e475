// libFuzzer target for the JSON schema -> GBNF converter (common/json-schema-to-grammar*.c). The input is the
// schema text. Checked, besides "no crash, no leak, no hang":
//   - the converter gives a grammar or an error message, never both or neither;
//   - every grammar it gives parses in the grammar engine (src/llama-grammar*.c).
//
//   ./build-fuzz/bin/fuzz-common-json-schema -max_total_time=300 corpus/

#include "json-schema-to-grammar.h"
#include "llama-grammar.h"
#include "llama.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

#define FUZZ_ASSERT(cond, what) do { if (!(cond)) { fprintf(stderr, "fuzz-common-json-schema: %s\n", what); abort(); } } while (0)

// the engine logs why a grammar does not parse: silence it, most inputs do not
static void quiet(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) text;
    (void) user_data;
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    llama_log_set(quiet, NULL);
    if (size > 8192) {
        return 0;
    }
    char * text = malloc(size + 1);
    if (!text) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    char err[512];
    err[0] = '\0';
    char * gbnf = json_schema_to_grammar_str(text, err, sizeof(err));
    if (gbnf != NULL) {
        char gerr[512];
        struct llama_grammar * g = llama_grammar_init_impl(NULL, gbnf, "root", gerr, sizeof(gerr));
        if (g == NULL) {
            fprintf(stderr, "schema:\n%s\ngrammar:\n%s\nerror: %s\n", text, gbnf, gerr);
        }
        FUZZ_ASSERT(g != NULL, "the converter's grammar does not parse");
        llama_grammar_free_impl(g);
        free(gbnf);
    } else {
        FUZZ_ASSERT(err[0] != '\0', "no grammar and no error message");
    }
    free(text);
    return 0;
}
