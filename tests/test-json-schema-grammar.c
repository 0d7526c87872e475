// The grammars json_schema_to_grammar writes, run through the GBNF matcher (src/llama-grammar.h): every
// instance of a schema (written by hand here) is accepted as a complete sentence, every text that breaks the
// schema is rejected (refused on the way or left incomplete). The expectations come from the JSON schema
// semantics, not from the converter, narrowed where llama.cpp's grammars are stricter by design: properties come
// in the schema's order with the required ones first, and an additional property's name may not be a proper
// prefix of a declared one (its not-these-names rule needs one more character).
#include "harness.h"

#include "json-schema-to-grammar.h"
#include "llama-grammar.h"

struct instance_case {
    const char * schema;
    const char * valid[8];   // NULL-terminated
    const char * invalid[8]; // NULL-terminated
};

static const struct instance_case CASES[] = {
    { "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}, \"required\": [\"a\"]}",
      { "{\"a\": 1}", "{ \"a\" : -42 }", "{\"a\":0}", "{\n  \"a\": 1234567890123456\n}", NULL },
      { "{}", "{\"a\": 1.5}", "{\"a\": \"1\"}", "{\"a\": 01}", "{\"a\": 1, \"b\": 2}", "[1]", "{\"a\": 1", NULL } },
    { "{\"type\": \"object\", \"properties\": {\"b\": {\"type\": \"string\"}, \"a\": {\"type\": \"number\"},"
      " \"c\": {\"type\": \"boolean\"}}, \"required\": [\"a\"], \"additionalProperties\": false}",
      { "{\"a\": 1, \"b\": \"x\"}", "{\"a\": 1e5}", "{\"a\": -0.5, \"c\": true}", "{\"a\": 2, \"b\": \"q\\\"\\u00e9\", \"c\": false}",
        NULL },
      { "{\"b\": \"x\"}", "{\"b\": \"x\", \"a\": 1}", "{\"a\": true}", "{\"a\": 1, \"d\": 1}", "{\"a\": 1, \"c\": null}", NULL } },
    { "{\"type\": \"array\", \"items\": {\"type\": \"integer\", \"minimum\": -12, \"maximum\": 207}, \"minItems\": 2,"
      " \"maxItems\": 3}",
      { "[-12, 207]", "[0,5,99]", "[ 100 , -1 ]", NULL },
      { "[1]", "[1,2,3,4]", "[208, 1]", "[-13, 1]", "[1.0, 2]", "[]", NULL } },
    { "{\"type\": \"string\", \"pattern\": \"^(\\\\([0-9]{1,3}\\\\))?[0-9]{3}-[0-9]{4}$\"}",
      { "\"(123)456-7890\"", "\"456-7890\"", "\"(1)456-7890\"", NULL },
      { "\"456-789\"", "\"(1234)456-7890\"", "\"4567890\"", "456-7890", NULL } },
    { "{\"type\": \"string\", \"pattern\": \"^\\\\d{2}[a-c]+\\\\w?$\"}",
      { "\"12abc\"", "\"00a_\"", NULL },
      { "\"1abc\"", "\"12\"", "\"12d\"", "\"12a__\"", NULL } },
    // ranges whose ends are escapes or multi-byte characters
    { "{\"type\": \"string\", \"pattern\": \"^[\\\\x20-\\\\?][\u00e8-\u00e9]$\"}",
      { "\" \u00e8\"", "\"?\u00e9\"", NULL },
      { "\"@\u00e9\"", "\" e\"", NULL } },
    // a quantified multi-byte character repeats the whole character
    { "{\"type\": \"string\", \"pattern\": \"^a\u00e9+$\"}",
      { "\"a\u00e9\"", "\"a\u00e9\u00e9\"", NULL },
      { "\"a\"", "\"ae\"", NULL } },
    // hex escapes with their digits, quantified as one character, inside and outside classes
    { "{\"type\": \"string\", \"pattern\": \"^x\\\\u0041+[\\\\x61-\\\\x63]$\"}",
      { "\"xAa\"", "\"xAAAc\"", NULL },
      { "\"xa\"", "\"xAd\"", "\"xAxA\"", "\"x\"", NULL } },
    { "{\"enum\": [\"red\", 42, null, [\"x\"]]}",
      { "\"red\"", "42", "null", "[\"x\"]", NULL },
      { "\"blue\"", "43", "[\"y\"]", "red", NULL } },
    { "{\"oneOf\": [{\"type\": \"string\", \"minLength\": 2, \"maxLength\": 3}, {\"type\": \"null\"}]}",
      { "\"ab\"", "\"a\\nb\"", "null", NULL },
      { "\"a\"", "\"abcd\"", "1", NULL } },
    { "{\"type\": \"object\", \"properties\": {\"d\": {\"type\": \"string\", \"format\": \"date\"},"
      " \"t\": {\"type\": \"string\", \"format\": \"time\"}, \"u\": {\"type\": \"string\", \"format\": \"uuid\"}},"
      " \"required\": [\"d\", \"t\", \"u\"]}",
      { "{\"d\": \"2024-02-29\", \"t\": \"23:59:59Z\", \"u\": \"123e4567-e89b-12d3-a456-426614174000\"}", NULL },
      { "{\"d\": \"2024-13-01\", \"t\": \"23:59:59Z\", \"u\": \"123e4567-e89b-12d3-a456-426614174000\"}",
        "{\"d\": \"2024-01-01\", \"t\": \"24:00:00Z\", \"u\": \"123e4567-e89b-12d3-a456-426614174000\"}",
        "{\"d\": \"2024-01-01\", \"t\": \"12:00:00Z\", \"u\": \"123e4567e89b12d3a456426614174000\"}", NULL } },
    { "{\"type\": \"object\", \"properties\": {\"and\": {\"type\": \"number\"}}, \"additionalProperties\": {\"type\": \"integer\"}}",
      { "{}", "{\"and\": 1.5}", "{\"x\": 1, \"andx\": 2}", "{\"and\": 1, \"x\": 3}", NULL },
      { "{\"x\": 1.5}", "{\"and\": \"s\"}", NULL } },
    { "{\"$ref\": \"#/definitions/node\", \"definitions\": {\"node\": {\"type\": \"object\", \"properties\":"
      " {\"v\": {\"type\": \"integer\"}, \"next\": {\"$ref\": \"#/definitions/node\"}}, \"required\": [\"v\"],"
      " \"additionalProperties\": false}}}",
      { "{\"v\": 1}", "{\"v\": 1, \"next\": {\"v\": 2, \"next\": {\"v\": 3}}}", NULL },
      { "{\"v\": 1, \"next\": {}}", "{\"next\": {\"v\": 1}}", NULL } },
    { "{\"allOf\": [{\"properties\": {\"a\": {\"type\": \"integer\"}}}, {\"anyOf\": [{\"properties\":"
      " {\"b\": {\"type\": \"boolean\"}}}]}]}",
      { "{\"a\": 1}", "{\"a\": 1, \"b\": true}", NULL },
      { "{\"b\": true}", "{\"a\": 1, \"c\": 2}", NULL } },
    { "{}",
      { "{}", "{\"k\": [1, {\"x\": null}], \"s\": \"\\u0041\"}", NULL },
      { "[]", "1", "{\"k\": }", NULL } },
};

// true when text is a complete sentence of the grammar
static bool accepts(const char * grammar_text, const char * text) {
    char err[256];
    struct llama_grammar * g = llama_grammar_init_impl(NULL, grammar_text, "root", err, sizeof(err));
    if (!g) {
        return false;
    }
    const bool ok = llama_grammar_accept_str(g, text, strlen(text)) && llama_grammar_is_complete(g);
    llama_grammar_free_impl(g);
    return ok;
}

int main(void) {
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        const struct instance_case * tc = &CASES[i];
        char err[1024];
        char * gt = json_schema_to_grammar_str(tc->schema, err, sizeof(err));
        TH_CHECK(gt != NULL, "schema %s: %s", tc->schema, err);
        if (!gt) {
            continue;
        }
        char perr[256] = "";
        struct llama_grammar * g = llama_grammar_init_impl(NULL, gt, "root", perr, sizeof(perr));
        TH_CHECK(g != NULL, "schema %s: the grammar does not parse: %s\n%s", tc->schema, perr, gt);
        llama_grammar_free_impl(g);
        for (size_t k = 0; g && tc->valid[k]; k++) {
            TH_CHECK(accepts(gt, tc->valid[k]), "schema %s: valid instance %s rejected\n%s", tc->schema, tc->valid[k], gt);
        }
        for (size_t k = 0; g && tc->invalid[k]; k++) {
            TH_CHECK(!accepts(gt, tc->invalid[k]), "schema %s: invalid text %s accepted\n%s", tc->schema,
                     tc->invalid[k], gt);
        }
        free(gt);
    }
    return th_finish();
}
