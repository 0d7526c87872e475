// Garbage in, clean error out: random byte strings, random sequences of Jinja fragments and random mutations of a
// real chat template go through parse + render. Each must either render or fail with a non-empty message; a crash,
// hang or sanitizer report fails the test. The stream is seeded, so a failure reproduces.
#include "harness.h"

#include "jinja/jinja.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char * const FRAGMENTS[] = {
    "{{", "}}", "{%", "%}", "{#", "#}", "{%-", "-%}", "{{-", "-}}", " if ", " elif ", " else ", " endif ", " for ",
    " in ", " endfor ", " set ", " = ", " macro ", " endmacro ", " call ", " endcall ", " x ", " messages ", " loop ",
    ".index", "[0]", "[::-1]", "[1:", "(", ")", "[", "]", "{", "}", ",", ":", "|", " tojson ", " trim ", " length ",
    "namespace(", "range(", "raise_exception(", " is ", " not ", " defined ", " and ", " or ", "'str'", "\"s\"",
    "'", "\"", "\\", "123", "-1", "1.5", "+", "-", "*", "**", "/", "//", "%", "~", "==", "!=", "<", ">", "\n", " ",
    "text", "é", "\xff", ".items()", ".append(1)", "ns.x", " break ", " continue ", " do ", " filter ", " upper ",
    " raw ", " endraw ", "{% raw %}", "{% endraw %}", "caller()", "tojson(indent=2)",
};

static const char * REAL =
    "{%- if messages[0]['role'] == 'system' %}{%- set sys = messages[0]['content'] %}{%- set msgs = messages[1:] %}"
    "{%- else %}{%- set msgs = messages %}{%- endif %}{{- bos_token }}{%- set ns = namespace(n=0) %}"
    "{%- for m in msgs %}{%- if m.role == 'user' %}{{- '[INST] ' + (sys ~ '\\n\\n' if loop.first and sys is defined "
    "else '') + m['content'] | trim + ' [/INST]' }}{%- elif m.role == 'assistant' %}{{- ' ' + m.content + eos_token }}"
    "{%- else %}{{- raise_exception('bad role') }}{%- endif %}{%- set ns.n = ns.n + 1 %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{ ns.n | string }}{{ messages | tojson(indent=2) }}{%- endif %}";

static int n_rendered = 0, n_errors = 0;

static void run_one(const char * src, const json_t * ctx) {
    char err[512];
    err[0] = '\0';
    struct jinja_template * t = jinja_template_parse(src, err, sizeof(err));
    if (!t) {
        TH_EXPECT(err[0] != '\0', "parse failed without a message: %s", src);
        n_errors++;
        return;
    }
    err[0] = '\0';
    char * out = jinja_template_render(t, ctx, err, sizeof(err));
    if (out) {
        n_rendered++;
    } else {
        TH_EXPECT(err[0] != '\0', "render failed without a message: %s", src);
        n_errors++;
    }
    free(out);
    jinja_template_free(t);
}

int main(void) {
    json_t * ctx = json_loads("{\"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", "
                              "\"content\": \" hi \"}, {\"role\": \"assistant\", \"content\": \"yo\"}], \"x\": [1, 2], "
                              "\"bos_token\": \"<s>\", \"eos_token\": \"</s>\", \"add_generation_prompt\": true}",
                              0, NULL);
    TH_CHECK(ctx != NULL, "context json");
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    char buf[4096];

    // 1. random bytes (biased towards Jinja punctuation)
    for (int it = 0; it < 3000; it++) {
        size_t n = th_xorshift64(&rng) % 64;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = th_xorshift64(&rng);
            buf[i] = (r & 3) == 0 ? "{}%#-|()[]'\"."[(r >> 2) % 14] : (char) (1 + (r >> 8) % 255);
        }
        buf[n] = '\0';
        run_one(buf, ctx);
    }
    // 2. random fragment sequences
    const size_t n_frag = sizeof(FRAGMENTS) / sizeof(FRAGMENTS[0]);
    for (int it = 0; it < 6000; it++) {
        size_t k = 1 + th_xorshift64(&rng) % 24, o = 0;
        for (size_t i = 0; i < k; i++) {
            const char * f = FRAGMENTS[th_xorshift64(&rng) % n_frag];
            size_t fl = strlen(f);
            if (o + fl + 1 >= sizeof(buf)) {
                break;
            }
            memcpy(buf + o, f, fl);
            o += fl;
        }
        buf[o] = '\0';
        run_one(buf, ctx);
    }
    // 3. mutations of a real template: delete, duplicate or overwrite a span
    const size_t rl = strlen(REAL);
    run_one(REAL, ctx);
    TH_CHECK(n_rendered >= 1, "the unmutated template renders");
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, REAL, rl + 1);
        size_t n = rl;
        for (int m = 0; m < 1 + (int) (th_xorshift64(&rng) % 3); m++) {
            size_t at = th_xorshift64(&rng) % (n ? n : 1);
            size_t len = 1 + th_xorshift64(&rng) % 8;
            if (at + len > n) {
                len = n - at;
            }
            switch (th_xorshift64(&rng) % 3) {
                case 0: memmove(buf + at, buf + at + len, n - at - len + 1); n -= len; break;
                case 1:
                    if (n + len + 1 < sizeof(buf)) {
                        memmove(buf + at + len, buf + at, n - at + 1);
                        n += len;
                    }
                    break;
                default:
                    for (size_t i = 0; i < len; i++) {
                        buf[at + i] = "{}%#-|()[]'\". x"[th_xorshift64(&rng) % 15];
                    }
            }
        }
        run_one(buf, ctx);
    }
    printf("fuzz: %d rendered, %d clean errors\n", n_rendered, n_errors);
    TH_CHECK(n_errors > 0 && n_rendered > 0, "both outcomes occur (%d / %d)", n_rendered, n_errors);
    json_decref(ctx);
    return th_finish();
}
