// libFuzzer target for the Jinja chat-template interpreter (common/jinja). The input is a template; it is
// rendered with a small chat (system/user/assistant messages, add_generation_prompt, bos/eos tokens, tools).
// Checked, besides "no crash, no leak, no hang": parse and render give a result or an error message, never
// neither, and rendering the same template twice gives the same text (no state leaks between renders).
//
//   ./build-fuzz/bin/fuzz-common-jinja -max_total_time=300 corpus/

#include "jinja/jinja.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

#define FUZZ_ASSERT(cond, what) do { if (!(cond)) { fprintf(stderr, "fuzz-common-jinja: %s\n", what); abort(); } } while (0)

static json_t * g_context = NULL;

static const char * CONTEXT_JSON =
    "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"},"
    "{\"role\":\"assistant\",\"content\":\"Hello!\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Why?\"}]}],"
    "\"add_generation_prompt\":true,\"bos_token\":\"<s>\",\"eos_token\":\"</s>\","
    "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\"}}}]}";

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size > 8192) {
        return 0;
    }
    if (g_context == NULL) {
        g_context = json_loads(CONTEXT_JSON, 0, NULL);
        FUZZ_ASSERT(g_context != NULL, "context JSON");
    }
    char * src = malloc(size + 1);
    if (!src) {
        return 0;
    }
    memcpy(src, data, size);
    src[size] = '\0';
    char err[512];
    err[0] = '\0';
    struct jinja_template * t = jinja_template_parse(src, err, sizeof(err));
    if (t == NULL) {
        FUZZ_ASSERT(err[0] != '\0', "parse failed without a message");
    } else {
        err[0] = '\0';
        char * a = jinja_template_render(t, g_context, err, sizeof(err));
        if (a == NULL) {
            FUZZ_ASSERT(err[0] != '\0', "render failed without a message");
        } else {
            // strftime_now can differ between two renders a second apart: compare only without it
            if (strstr(src, "strftime_now") == NULL) {
                char * b = jinja_template_render(t, g_context, err, sizeof(err));
                FUZZ_ASSERT(b != NULL && strcmp(a, b) == 0, "two renders differ");
                free(b);
            }
            free(a);
        }
        jinja_template_free(t);
    }
    free(src);
    return 0;
}
