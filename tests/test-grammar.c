// GBNF grammars: the parser (accepted grammars, rejected ones with the expected error), the matcher (strings that
// are complete sentences, prefixes only, or rejected, for hand-checked grammars), UTF-8 cut across pieces, and the
// grammar sampler on real vocabularies: after apply, a token keeps its logit exactly when its piece extends the
// accepted text to a valid prefix (checked token by token against the matcher's own string path and, for a
// regular grammar, against PCRE2's partial matching of the equivalent regex), EOG only when complete; lazy
// triggers, clone / reset / copy. Also prints the cost of apply over a 32k vocabulary.

#define PCRE2_CODE_UNIT_WIDTH 8

#include "harness.h"

#include "llama.h"
#include "llama-grammar.h"
#include "llama-sampler.h"

#include "ggml.h"

#include <pcre2.h>

#include <time.h>

//
// parser
//

static void expect_parse_error(const char * grammar, const char * want) {
    char err[256];
    struct llama_grammar * g = llama_grammar_init_impl(NULL, grammar, "root", err, sizeof(err));
    TH_CHECK(g == NULL && strstr(err, want) != NULL, "grammar %s: error '%s', want '%s'", grammar, err, want);
    llama_grammar_free_impl(g);
}

static void test_parser(void) {
    static const char * ok[] = {
        "root ::= \"a\"",
        "root ::= \"a\"\n",
        "# leading comment\nroot ::= a b # trailing\na ::= [a-z]\nb ::= \"x\" |\n   \"y\"\n\n",
        "root ::= (\n  \"yes\"\n  | \"no\" # comment inside a group\n) \".\"",
        "root ::= \"\\x41\\u00e9\\U0001F600\\n\\r\\t\\\\\\\"\\[\\]\"",
        "root ::= [^\"\\\\]* . [a-zA-Z_] [\\]\\[-]",
        "root ::= \"a\"{0} \"b\"{1} \"c\"{2,} \"d\"{1,3} \"e\"{ 2 , 4 } \"f\"* \"g\"+ \"h\"?",
        "root ::= <[12]> !<[3]>",
        "root ::= \"\"",
        "root ::= x\nx ::= \"1\"\nx ::= \"2\"",   // a later definition replaces an earlier one
        "root ::= a-b\na-b ::= \"-\"",
        "root ::= \"x\" root | \"y\"",              // right recursion is fine
        "root ::= a* \"x\"\na ::= \"y\"",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); ++i) {
        char err[256];
        struct llama_grammar * g = llama_grammar_init_impl(NULL, ok[i], "root", err, sizeof(err));
        TH_CHECK(g != NULL, "grammar %zu should parse: %s", i, err);
        llama_grammar_free_impl(g);
    }

    expect_parse_error("root ::= foo", "Undefined rule identifier 'foo'");
    expect_parse_error("root ::= \"abc", "unexpected end of input");
    expect_parse_error("root ::= [a-", "unexpected end of input");
    expect_parse_error("root = \"a\"", "expecting ::=");
    expect_parse_error("root ::= \"a\" )", "expecting newline or end");
    expect_parse_error("root ::= (\"a\"", "expecting ')'");
    expect_parse_error("root ::= *", "expecting preceding item");
    expect_parse_error("root ::= \"\"+", "expecting preceding item");
    expect_parse_error("root ::= \"a\"{3,2}", "bad repetition bounds");
    expect_parse_error("root ::= \"a\"{5000}", "exceeds sane defaults");
    expect_parse_error("root ::= \"a\"{1,2001}", "exceeds sane defaults");
    expect_parse_error("root ::= \"a\"{", "expecting integer");
    expect_parse_error("root ::= \"a\"{2,3", "expecting '}'");
    expect_parse_error("root ::= \"a\"{2;3}", "expecting ',' or '}'");
    expect_parse_error("root ::= \"\\q\"", "unknown escape");
    expect_parse_error("root ::= \"\\x4\"", "expecting 2 hex chars");
    expect_parse_error("root ::= \"\\u12g4\"", "expecting 4 hex chars");
    expect_parse_error("root ::= []", "empty character class");
    expect_parse_error("root ::= [z-a]", "invalid character range");
    expect_parse_error("root ::= <[12", "expecting ']'");
    expect_parse_error("root ::= <[12]", "expecting '>'");
    expect_parse_error("root ::= <foo>", "no vocab");
    expect_parse_error("root ::= !x", "expecting '<'");
    expect_parse_error("root ::= \"\xff\"", "invalid UTF-8");
    expect_parse_error("::= \"a\"", "expecting name");
    expect_parse_error("foo ::= \"a\"", "does not contain a 'root' symbol");
    expect_parse_error("root ::= root \"a\"", "left recursion");
    expect_parse_error("root ::= a \"y\"\na ::= b? root\nb ::= \"x\"", "left recursion");
    expect_parse_error("root ::= a\na ::= \"\" | b \"c\"\nb ::= a", "left recursion");
    expect_parse_error("root ::= (\"a\" | root)", "left recursion");
    expect_parse_error("root ::= \"a\"\n\"b\"", "expecting name");
    {
        // deep nesting is an error, not a stack overflow
        char deep[1200];
        size_t n = (size_t) snprintf(deep, sizeof(deep), "root ::= ");
        for (int i = 0; i < 400; ++i) {
            deep[n++] = '(';
        }
        deep[n] = '\0';
        expect_parse_error(deep, "nested too deeply");
    }
    {
        // repetitions copy their item: a 2100-character literal repeated 2000 times is refused, not allocated
        static char big[6000];
        size_t n = (size_t) snprintf(big, sizeof(big), "root ::= x\nx ::= \"");
        for (int i = 0; i < 2100; ++i) {
            big[n++] = 'a';
        }
        n += (size_t) snprintf(big + n, sizeof(big) - n, "\"{2000}");
        expect_parse_error(big, "grammar too large");
    }
    // a repeated rule that can be empty makes the repetition left-recursive (llama.cpp rejects it too)
    expect_parse_error("root ::= a* \"x\"\na ::= \"y\" | \"\"", "left recursion");
}

//
// matcher
//

enum { REJECT, PREFIX, FULL };

static int match_str(struct llama_grammar * g, const char * s) {
    if (!llama_grammar_accept_str(g, s, strlen(s))) {
        return REJECT;
    }
    return llama_grammar_is_complete(g) && llama_grammar_partial(g).n_remain == 0 ? FULL : PREFIX;
}

struct case_str {
    const char * s;
    int          want;
};

static void check_grammar(const char * grammar, const struct case_str * cases, size_t n) {
    char err[256];
    struct llama_grammar * g0 = llama_grammar_init_impl(NULL, grammar, "root", err, sizeof(err));
    TH_CHECK(g0 != NULL, "grammar should parse: %s\n%s", err, grammar);
    if (!g0) {
        return;
    }
    static const char * names[] = { "REJECT", "PREFIX", "FULL" };
    for (size_t i = 0; i < n; ++i) {
        struct llama_grammar * g = llama_grammar_clone_impl(g0);
        const int got = match_str(g, cases[i].s);
        TH_CHECK(got == cases[i].want, "'%s': got %s, want %s (grammar: %s)", cases[i].s, names[got], names[cases[i].want], grammar);
        // byte by byte (every UTF-8 sequence cut) gives the same verdict for the whole string
        llama_grammar_reset(g);
        bool ok = true;
        for (const char * c = cases[i].s; *c && ok; ++c) {
            ok = llama_grammar_accept_str(g, c, 1);
        }
        const int got_bytes = !ok ? REJECT : (llama_grammar_is_complete(g) && llama_grammar_partial(g).n_remain == 0 ? FULL : PREFIX);
        TH_CHECK(got_bytes == cases[i].want, "'%s' byte by byte: got %s, want %s", cases[i].s, names[got_bytes], names[cases[i].want]);
        llama_grammar_free_impl(g);
    }
    llama_grammar_free_impl(g0);
}

#define CHECK_GRAMMAR(g, ...) do { \
        const struct case_str cs_[] = { __VA_ARGS__ }; \
        check_grammar(g, cs_, sizeof(cs_) / sizeof(cs_[0])); \
    } while (0)

static const char * JSON_GRAMMAR =
    "root   ::= object\n"
    "value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
    "object ::=\n"
    "  \"{\" ws (\n"
    "            string \":\" ws value\n"
    "    (\",\" ws string \":\" ws value)*\n"
    "  )? \"}\" ws\n"
    "array  ::=\n"
    "  \"[\" ws (\n"
    "            value\n"
    "    (\",\" ws value)*\n"
    "  )? \"]\" ws\n"
    "string ::=\n"
    "  \"\\\"\" (\n"
    "    [^\"\\\\\\x7F\\x00-\\x1F] |\n"
    "    \"\\\\\" ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4}) # escapes\n"
    "  )* \"\\\"\" ws\n"
    "number ::= (\"-\"? ([0-9] | [1-9] [0-9]{0,15})) (\".\" [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws\n"
    "ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

static void test_matcher(void) {
    CHECK_GRAMMAR("root ::= expr\nexpr ::= term ([-+*/] term)*\nterm ::= num | \"(\" expr \")\"\nnum ::= [0-9]+",
        { "1", FULL }, { "12+3", FULL }, { "(1+2)*3", FULL }, { "((4))", FULL }, { "", PREFIX }, { "(", PREFIX },
        { "1+", PREFIX }, { "(1+2", PREFIX }, { "+", REJECT }, { "1++", REJECT }, { "a", REJECT }, { "())", REJECT },
        { "(1+2))", REJECT });
    CHECK_GRAMMAR("root ::= \"a\"{2,4} \"b\"",
        { "aab", FULL }, { "aaab", FULL }, { "aaaab", FULL }, { "a", PREFIX }, { "aa", PREFIX }, { "aaaa", PREFIX },
        { "ab", REJECT }, { "aaaaa", REJECT }, { "b", REJECT }, { "aabb", REJECT });
    CHECK_GRAMMAR("root ::= [x]{3}", { "xxx", FULL }, { "xx", PREFIX }, { "", PREFIX }, { "xxxx", REJECT });
    CHECK_GRAMMAR("root ::= \"a\"{2,}", { "aa", FULL }, { "aaaaaaa", FULL }, { "a", PREFIX }, { "b", REJECT }, { "aab", REJECT });
    CHECK_GRAMMAR("root ::= \"a\"{0,2}", { "", FULL }, { "a", FULL }, { "aa", FULL }, { "aaa", REJECT });
    CHECK_GRAMMAR("root ::= (\"ab\")? \"c\"",
        { "c", FULL }, { "abc", FULL }, { "a", PREFIX }, { "ab", PREFIX }, { "ac", REJECT }, { "ababc", REJECT });
    CHECK_GRAMMAR("root ::= (\"ab\" | \"cd\")* \"!\"",
        { "!", FULL }, { "abcdab!", FULL }, { "abc", PREFIX }, { "abca", REJECT }, { "!!", REJECT });
    CHECK_GRAMMAR("root ::= [a-cx-z0]+",
        { "abz0", FULL }, { "0", FULL }, { "d", REJECT }, { "w", REJECT }, { "ab1", REJECT });
    CHECK_GRAMMAR("root ::= \"\\\"\" [^\"\\\\]* \"\\\"\"",
        { "\"hi\"", FULL }, { "\"\"", FULL }, { "\"h\xc3\xa9\"", FULL }, { "\"h", PREFIX }, { "\"a\\", REJECT },
        { "\"a\"b", REJECT });
    CHECK_GRAMMAR("root ::= [^a-z\\u00e9] \".\"",
        { "A.", FULL }, { "\xc3\xa8.", FULL }, { "\xc3", PREFIX }, { "a", REJECT }, { "\xc3\xa9", REJECT });
    CHECK_GRAMMAR("root ::= . \"!\"",
        { "x!", FULL }, { "!!", FULL }, { "\xe6\x97\xa5!", FULL }, { "x", PREFIX }, { "\xe6\x97", PREFIX },
        { "xy", REJECT }, { "", PREFIX });
    CHECK_GRAMMAR("root ::= \"h\xc3\xa9llo\" | \"\xe6\x97\xa5\xe6\x9c\xac\" [\xe8\xaa\x9e]",
        { "h\xc3\xa9llo", FULL }, { "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", FULL }, { "h\xc3", PREFIX },
        { "\xe6\x97\xa5", PREFIX }, { "he", REJECT }, { "h\xc4", REJECT }, { "\xe6\x97\xa5\xe6\x9c\xac\xe4\xba\xba", REJECT },
        { "h\xc3\xa9llo!", REJECT });
    CHECK_GRAMMAR("root ::= \"\\x41\\u00e9\\U0001F600\\n\\t\"",
        { "A\xc3\xa9\xf0\x9f\x98\x80\n\t", FULL }, { "A\xc3\xa9\xf0\x9f", PREFIX }, { "A\xc3\xa9\xf0\x9f\x98\x81", REJECT });
    CHECK_GRAMMAR("root ::= (\n  \"yes\"\n  | \"no\" # comment\n) \".\"",
        { "yes.", FULL }, { "no.", FULL }, { "ye", PREFIX }, { "n", PREFIX }, { "yes", PREFIX }, { "maybe.", REJECT },
        { "no.no", REJECT });
    CHECK_GRAMMAR("root ::= \"\"", { "", FULL }, { "a", REJECT });
    CHECK_GRAMMAR("root ::= a* \"x\"\na ::= \"y\" | \"zz\"", { "x", FULL }, { "yzzx", FULL }, { "yz", PREFIX }, { "xy", REJECT },
        { "yzx", REJECT });
    CHECK_GRAMMAR(JSON_GRAMMAR,
        { "{\"a\": 1}", FULL }, { "{}", FULL }, { "{\"k\": [true, null, \"x\\u00e9\"], \"n\": -0.5e3}", FULL },
        { "{ \"a\" : {\"b\": []}}", FULL }, // a string takes the blanks after it
        { "{\"a\": {\"b\": []}}\n", FULL }, { "{\"a\"", PREFIX }, { "{\"a\": [1,", PREFIX }, { "{\"a\": \"\xc3", PREFIX },
        { "{a}", REJECT }, { "{\"a\": 01}", REJECT }, { "[1]", REJECT }, { "{\"a\": tru}", REJECT },
        { "{\"a\": \"\\x\"}", REJECT }, { "{\"a\": \"\x01\"}", REJECT });

    // UTF-8 cut across pieces, and invalid sequences
    {
        uint32_t cps[8];
        struct llama_partial_utf8 p = { 0, 0, 0 };
        size_t n = llama_grammar_decode_utf8("a\xe6", 2, &p, cps);
        TH_CHECK(n == 1 && cps[0] == 'a' && p.n_remain == 2 && p.n_len == 3, "cut 3-byte sequence");
        n = llama_grammar_decode_utf8("\x97", 1, &p, cps);
        TH_CHECK(n == 0 && p.n_remain == 1, "one more byte");
        n = llama_grammar_decode_utf8("\xa5z", 2, &p, cps);
        TH_CHECK(n == 2 && cps[0] == 0x65E5 && cps[1] == 'z' && p.n_remain == 0, "completed: U+65E5 then z");
        p = (struct llama_partial_utf8) { 0, 0, 0 };
        n = llama_grammar_decode_utf8("\x80", 1, &p, cps);
        TH_CHECK(n == 0 && p.n_remain == -1, "stray continuation byte is invalid");
        p = (struct llama_partial_utf8) { 0, 0, 0 };
        n = llama_grammar_decode_utf8("\xc0\x80", 2, &p, cps);
        TH_CHECK(n == 0 && p.n_remain == -1, "overlong NUL is invalid");
        p = (struct llama_partial_utf8) { 0, 0, 0 };
        n = llama_grammar_decode_utf8("\xe6x", 2, &p, cps);
        TH_CHECK(n == 0 && p.n_remain == -1, "cut sequence followed by ASCII is invalid");
    }
    // accept_str leaves the state alone when it fails
    {
        struct llama_grammar * g = llama_grammar_init_impl(NULL, "root ::= \"abc\"", "root", NULL, 0);
        TH_CHECK(g && llama_grammar_accept_str(g, "a", 1), "a");
        TH_CHECK(g && !llama_grammar_accept_str(g, "bx", 2), "bx rejected");
        TH_CHECK(g && llama_grammar_accept_str(g, "bc", 2) && llama_grammar_is_complete(g), "state kept: bc completes");
        llama_grammar_free_impl(g);
    }
}

// random grammar text never crashes the parser (and what parses can be matched)
static void test_parser_fuzz(void) {
    static const char * frags[] = {
        "root", " ::= ", "\"a\"", "\"\\x", "[a-z]", "[^", "]", "(", ")", "|", "*", "+", "?", "{2}", "{1,3}", "{,}",
        "{9999}", "\n", " ", "# c\n", "x", " ::=", "<[3]>", "!", "<", "\\", "\"", ".", "\xc3\xa9", "\xc3", "-", "{",
        "}", "::", "root ::= x\n", "x ::= root\n", "x ::= \"q\" x\n",
    };
    const size_t n_frags = sizeof(frags) / sizeof(frags[0]);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int n_ok = 0;
    for (int it = 0; it < 4000; ++it) {
        char buf[512];
        size_t n = (size_t) snprintf(buf, sizeof(buf), "%s", (th_xorshift64(&rng) % 4) ? "root ::= " : "");
        const int k = 1 + (int) (th_xorshift64(&rng) % 14);
        for (int j = 0; j < k; ++j) {
            const char * f = frags[th_xorshift64(&rng) % n_frags];
            const size_t len = strlen(f);
            if (n + len + 1 >= sizeof(buf)) {
                break;
            }
            memcpy(buf + n, f, len);
            n += len;
        }
        buf[n] = '\0';
        struct llama_grammar * g = llama_grammar_init_impl(NULL, buf, "root", NULL, 0);
        if (g) {
            n_ok++;
            for (int c = 0; c < 8; ++c) {
                const char ch = "aqx\xc3\xa9-1 "[th_xorshift64(&rng) % 9];
                llama_grammar_accept_str(g, &ch, 1);
            }
        }
        llama_grammar_free_impl(g);
    }
    TH_CHECK(n_ok > 50, "some random grammars parse (%d)", n_ok);
}

//
// the sampler on real vocabularies
//

struct vocab_env {
    struct llama_model       * model;
    const struct llama_vocab * vocab;
    int32_t                    n_vocab;
    char                    ** pieces; // [n_vocab] special tokens rendered
    int32_t                  * len;
};

static bool env_load(struct vocab_env * e, const char * path) {
    memset(e, 0, sizeof(*e));
    if (!th_require_file(path)) {
        return false;
    }
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    e->model = llama_model_load_from_file(path, mp);
    TH_CHECK(e->model != NULL, "load %s", path);
    if (!e->model) {
        return false;
    }
    e->vocab   = llama_model_get_vocab(e->model);
    e->n_vocab = llama_vocab_n_tokens(e->vocab);
    e->pieces  = calloc((size_t) e->n_vocab, sizeof(*e->pieces));
    e->len     = calloc((size_t) e->n_vocab, sizeof(*e->len));
    for (int32_t id = 0; id < e->n_vocab; ++id) {
        char buf[512];
        const int32_t n = llama_token_to_piece(e->vocab, id, buf, sizeof(buf), 0, true);
        e->len[id]    = n > 0 ? n : 0;
        e->pieces[id] = malloc((size_t) e->len[id] + 1);
        memcpy(e->pieces[id], buf, (size_t) e->len[id]);
        e->pieces[id][e->len[id]] = '\0';
    }
    return true;
}

static void env_free(struct vocab_env * e) {
    for (int32_t id = 0; id < e->n_vocab; ++id) {
        free(e->pieces[id]);
    }
    free(e->pieces);
    free(e->len);
    llama_model_free(e->model);
}

// expected verdict of the brute-force path: the reference matcher takes the piece (or, for EOG, is complete)
static bool ref_allows(const struct vocab_env * e, const struct llama_grammar * ref, llama_token id) {
    if (llama_vocab_is_eog(e->vocab, id)) {
        return llama_grammar_is_complete(ref);
    }
    if (e->len[id] == 0 || e->pieces[id][0] == '\0') {
        return false;
    }
    struct llama_grammar * g = llama_grammar_clone_impl(ref);
    const bool ok = llama_grammar_accept_token(g, id, e->pieces[id], (size_t) e->len[id]);
    llama_grammar_free_impl(g);
    return ok;
}

// independent oracle for regular grammars: the generated text plus a piece must be a prefix of a match of re
// (PCRE2 hard partial matching, UTF mode); pieces ending inside a UTF-8 sequence are left to the other oracle
static int regex_verdict(pcre2_code * re, pcre2_match_data * md, const char * text, size_t len) {
    const int rc = pcre2_match(re, (PCRE2_SPTR) text, len, 0, PCRE2_PARTIAL_HARD | PCRE2_NO_UTF_CHECK, md, NULL);
    if (rc == PCRE2_ERROR_PARTIAL) {
        return PREFIX;
    }
    return rc >= 0 ? FULL : REJECT;
}

static bool utf8_complete(const char * s, size_t len) {
    struct llama_partial_utf8 p = { 0, 0, 0 };
    uint32_t * cps = malloc((len + 1) * sizeof(*cps));
    llama_grammar_decode_utf8(s, len, &p, cps);
    free(cps);
    return p.n_remain == 0;
}

// random walk: at each step the sampler's verdicts over the whole vocabulary and over a random subset must equal
// the brute-force ones; then a random allowed token is accepted by both
static void check_sampler_walk(const struct vocab_env * e, const char * grammar, const char * regex, int n_steps, uint64_t seed) {
    struct llama_sampler * smpl = llama_sampler_init_grammar(e->vocab, grammar, "root");
    TH_CHECK(smpl != NULL, "grammar sampler for %s", grammar);
    struct llama_grammar * ref = llama_grammar_init_impl(e->vocab, grammar, "root", NULL, 0);
    if (!smpl || !ref) {
        llama_sampler_free(smpl);
        llama_grammar_free_impl(ref);
        return;
    }
    pcre2_code * re = NULL;
    pcre2_match_data * md = NULL;
    if (regex) {
        int err;
        PCRE2_SIZE off;
        // partial matching does not combine with PCRE2_ENDANCHORED: anchor the end with $ instead
        char anchored[512];
        snprintf(anchored, sizeof(anchored), "(?:%s)$", regex);
        re = pcre2_compile((PCRE2_SPTR) anchored, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_ANCHORED | PCRE2_DOLLAR_ENDONLY,
                &err, &off, NULL);
        TH_CHECK(re != NULL, "regex %s", regex);
        md = re ? pcre2_match_data_create_from_pattern(re, NULL) : NULL;
    }
    char text[4096];
    size_t n_text = 0;

    const int32_t nv = e->n_vocab;
    llama_token_data * cur = malloc((size_t) nv * sizeof(*cur));
    bool * want = malloc((size_t) nv);
    llama_token * allowed = malloc((size_t) nv * sizeof(*allowed));
    uint64_t rng = seed;
    int n_mismatch = 0;
    int n_regex_checked = 0;
    int n_partial_steps = 0;
    for (int step = 0; step < n_steps; ++step) {
        for (int32_t id = 0; id < nv; ++id) {
            cur[id] = (llama_token_data) { id, 0.0f, 0.0f };
            want[id] = ref_allows(e, ref, id);
        }
        llama_token_data_array cur_p = { cur, (size_t) nv, -1, false };
        llama_sampler_apply(smpl, &cur_p);
        int32_t n_allowed = 0;
        for (int32_t id = 0; id < nv; ++id) {
            const bool got = cur[id].logit != -INFINITY;
            if (got != want[id] && n_mismatch++ < 8) {
                fprintf(stderr, "  step %d token %d '%s': sampler %d, brute force %d\n", step, id, e->pieces[id], got, want[id]);
            }
            if (got) {
                allowed[n_allowed++] = id;
            }
            // the independent regex oracle, for pieces that end on a whole character
            if (re && !llama_vocab_is_eog(e->vocab, id) && e->len[id] > 0 && e->pieces[id][0] != '\0' &&
                    n_text + (size_t) e->len[id] < sizeof(text) && utf8_complete(text, n_text) &&
                    utf8_complete(e->pieces[id], (size_t) e->len[id])) {
                memcpy(text + n_text, e->pieces[id], (size_t) e->len[id]);
                const bool rx = regex_verdict(re, md, text, n_text + (size_t) e->len[id]) != REJECT;
                n_regex_checked++;
                if (rx != got && n_mismatch++ < 8) {
                    fprintf(stderr, "  step %d token %d '%s': sampler %d, regex %d\n", step, id, e->pieces[id], got, rx);
                }
            }
        }
        // a random subset (the sorted-subset path)
        {
            const size_t n_sub = 1 + th_xorshift64(&rng) % 200;
            llama_token_data sub[200];
            for (size_t i = 0; i < n_sub; ++i) {
                const llama_token id = (i % 3 == 0 && n_allowed > 0) ? allowed[th_xorshift64(&rng) % (uint64_t) n_allowed]
                                                                     : (llama_token) (th_xorshift64(&rng) % (uint64_t) nv);
                sub[i] = (llama_token_data) { id, 1.0f, 0.0f };
            }
            llama_token_data_array sub_p = { sub, n_sub, -1, false };
            llama_sampler_apply(smpl, &sub_p);
            for (size_t i = 0; i < n_sub; ++i) {
                if ((sub[i].logit != -INFINITY) != want[sub[i].id] && n_mismatch++ < 8) {
                    fprintf(stderr, "  step %d subset token %d: sampler %d\n", step, sub[i].id, sub[i].logit != -INFINITY);
                }
            }
        }
        // continue with a random allowed non-EOG token, preferring pieces that end inside a UTF-8 sequence
        // sometimes, so that the cut-sequence state is exercised
        llama_token pick = -1;
        const bool want_cut = th_xorshift64(&rng) % 3 == 0;
        for (int tries = 0; tries < 64 && n_allowed > 0; ++tries) {
            const llama_token id = allowed[th_xorshift64(&rng) % (uint64_t) n_allowed];
            if (llama_vocab_is_eog(e->vocab, id)) {
                continue;
            }
            pick = id;
            if (!want_cut || !utf8_complete(e->pieces[id], (size_t) e->len[id])) {
                break;
            }
        }
        if (pick < 0) {
            break;
        }
        if (!utf8_complete(e->pieces[pick], (size_t) e->len[pick]) || llama_grammar_partial(ref).n_remain > 0) {
            n_partial_steps++;
        }
        llama_sampler_accept(smpl, pick);
        TH_EXPECT(llama_grammar_accept_token(ref, pick, e->pieces[pick], (size_t) e->len[pick]), "reference accepts %d", pick);
        if (n_text + (size_t) e->len[pick] < sizeof(text)) {
            memcpy(text + n_text, e->pieces[pick], (size_t) e->len[pick]);
            n_text += (size_t) e->len[pick];
        }
    }
    TH_CHECK(n_mismatch == 0, "%d verdicts differ for grammar %s", n_mismatch, grammar);
    if (re) {
        TH_CHECK(n_regex_checked > 0, "regex oracle used (%d checks)", n_regex_checked);
        fprintf(stderr, "  %s: %d regex checks, %d steps through cut UTF-8\n", regex, n_regex_checked, n_partial_steps);
    }
    free(cur);
    free(want);
    free(allowed);
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    llama_grammar_free_impl(ref);
    llama_sampler_free(smpl);
}

static llama_token token_with_piece(const struct vocab_env * e, const char * piece) {
    for (int32_t id = 0; id < e->n_vocab; ++id) {
        if (strcmp(e->pieces[id], piece) == 0 && !llama_vocab_is_eog(e->vocab, id)) {
            return id;
        }
    }
    return -1;
}

// feeds text one character at a time through the tokens whose piece is that character (so that no tokenizer
// space prefix gets in the way)
static void accept_chars(struct llama_sampler * smpl, const struct vocab_env * e, const char * text) {
    for (const char * c = text; *c; ++c) {
        const char one[2] = { *c, '\0' };
        const llama_token id = token_with_piece(e, one);
        TH_EXPECT(id >= 0, "a token for '%c'", *c);
        if (id >= 0) {
            llama_sampler_accept(smpl, id);
        }
    }
}

// a token whose piece is 2..6 lowercase letters and neither a prefix nor an extension of avoid's piece
static llama_token word_token(const struct vocab_env * e, llama_token avoid) {
    for (int32_t id = 0; id < e->n_vocab; ++id) {
        const char * p = e->pieces[id];
        const size_t n = strlen(p);
        bool word = n >= 2 && n <= 6 && !llama_vocab_is_eog(e->vocab, id);
        for (size_t i = 0; i < n && word; ++i) {
            word = p[i] >= 'a' && p[i] <= 'z';
        }
        if (word && avoid >= 0) {
            const char * q = e->pieces[avoid];
            word = strncmp(p, q, n < strlen(q) ? n : strlen(q)) != 0;
        }
        if (word) {
            return id;
        }
    }
    return -1;
}

static bool allows(struct llama_sampler * smpl, const struct vocab_env * e, llama_token id) {
    GGML_UNUSED(e);
    llama_token_data one = { id, 0.0f, 0.0f };
    llama_token_data_array p = { &one, 1, -1, false };
    llama_sampler_apply(smpl, &p);
    return one.logit != -INFINITY;
}

static void accept_text(struct llama_sampler * smpl, const struct vocab_env * e, const char * text) {
    llama_token toks[64];
    const int32_t n = llama_tokenize(e->vocab, text, (int32_t) strlen(text), toks, 64, false, false);
    for (int32_t i = 0; i < n; ++i) {
        llama_sampler_accept(smpl, toks[i]);
    }
}

static void test_sampler_api(const struct vocab_env * e) {
    // empty grammar: a no-op sampler named "grammar"; bad grammars: NULL
    struct llama_sampler * g0 = llama_sampler_init_grammar(e->vocab, "", "root");
    TH_CHECK(g0 != NULL && strcmp(llama_sampler_name(g0), "grammar") == 0, "empty grammar");
    TH_CHECK(g0 && allows(g0, e, 5), "empty grammar allows everything");
    llama_sampler_free(g0);
    g0 = llama_sampler_init_grammar(NULL, "", "root");
    TH_CHECK(g0 != NULL, "empty grammar without a vocabulary");
    llama_sampler_free(g0);
    TH_CHECK(llama_sampler_init_grammar(e->vocab, "root ::= foo", "root") == NULL, "undefined rule");
    TH_CHECK(llama_sampler_init_grammar(e->vocab, "root ::= \"a\"", "start") == NULL, "missing root symbol");
    TH_CHECK(llama_sampler_init_grammar(NULL, "root ::= \"a\"", "root") == NULL, "a grammar needs the vocabulary");

    // two word tokens standing for "yes" and "no", and "."
    const llama_token t_yes = word_token(e, -1);
    const llama_token t_no  = word_token(e, t_yes);
    const llama_token t_dot = token_with_piece(e, ".");
    const llama_token eos   = llama_vocab_eos(e->vocab);
    TH_CHECK(t_yes >= 0 && t_no >= 0 && t_dot >= 0 && eos >= 0, "word tokens and '.' (%d %d %d %d)", t_yes, t_no, t_dot, eos);
    if (t_yes < 0 || t_no < 0 || t_dot < 0 || eos < 0) {
        return;
    }
    char yes_no[128];
    snprintf(yes_no, sizeof(yes_no), "root ::= (\"%s\" | \"%s\") \".\"", e->pieces[t_yes], e->pieces[t_no]);
    struct llama_sampler * s = llama_sampler_init_grammar(e->vocab, yes_no, "root");
    TH_CHECK(s && allows(s, e, t_yes) && allows(s, e, t_no) && !allows(s, e, t_dot) && !allows(s, e, eos), "start");
    llama_sampler_accept(s, t_yes);
    TH_CHECK(!allows(s, e, t_yes) && allows(s, e, t_dot) && !allows(s, e, eos), "after yes");
    // a token the grammar rejects leaves the state unchanged (llama.cpp throws here)
    llama_sampler_accept(s, t_no);
    TH_CHECK(allows(s, e, t_dot), "rejected token ignored");
    struct llama_sampler * c = llama_sampler_clone(s);
    llama_sampler_accept(s, t_dot);
    TH_CHECK(allows(s, e, eos) && !allows(s, e, t_dot), "complete: EOG allowed");
    TH_CHECK(c && allows(c, e, t_dot) && !allows(c, e, eos), "clone kept its own state");
    llama_sampler_accept(s, eos); // allowed: no change
    llama_sampler_copy(s, c);
    TH_CHECK(allows(c, e, eos) && !allows(c, e, t_dot), "copy_state");
    llama_sampler_reset(s);
    TH_CHECK(allows(s, e, t_yes) && !allows(s, e, eos), "reset");
    llama_sampler_accept(s, eos); // EOG before completion: logged, no change
    TH_CHECK(allows(s, e, t_no), "EOG too early ignored");
    llama_sampler_free(s);
    llama_sampler_free(c);

    // token references: <[id]> and !<[id]>, and <text> of a special token through the vocabulary
    {
        char gr[128];
        snprintf(gr, sizeof(gr), "root ::= <[%d]> !<[%d]> <[%d]>", t_no, t_dot, t_yes);
        struct llama_sampler * t = llama_sampler_init_grammar(e->vocab, gr, "root");
        TH_CHECK(t && allows(t, e, t_no) && !allows(t, e, t_yes), "token ref");
        llama_sampler_accept(t, t_no);
        TH_CHECK(allows(t, e, t_yes) && !allows(t, e, t_dot), "negated token ref");
        llama_sampler_accept(t, t_yes);
        TH_CHECK(allows(t, e, t_yes) && !allows(t, e, t_no), "third token ref");
        llama_sampler_accept(t, t_yes);
        TH_CHECK(allows(t, e, eos) && !allows(t, e, t_yes), "complete after the token refs");
        llama_sampler_free(t);
        TH_CHECK(llama_sampler_init_grammar(e->vocab, "root ::= <yes no maybe>", "root") == NULL, "<text> must be one token");
        const llama_token bos = llama_vocab_bos(e->vocab);
        if (bos >= 0 && !llama_vocab_is_eog(e->vocab, bos)) {
            snprintf(gr, sizeof(gr), "root ::= %s \"%s\"", e->pieces[bos], e->pieces[t_yes]);
            t = llama_sampler_init_grammar(e->vocab, gr, "root");
            TH_CHECK(t && allows(t, e, bos) && !allows(t, e, t_yes), "<text> of the BOS token: %s", gr);
            llama_sampler_free(t);
        }
    }

    // lazy: unconstrained until a trigger token
    {
        const llama_token trig[1] = { t_yes };
        char gr[128];
        snprintf(gr, sizeof(gr), "root ::= \"%s\" \".\"", e->pieces[t_yes]);
        struct llama_sampler * l = llama_sampler_init_grammar_lazy_patterns(e->vocab, gr, "root", NULL, 0, trig, 1);
        TH_CHECK(l && allows(l, e, t_no) && allows(l, e, t_dot), "lazy: free before the trigger");
        llama_sampler_accept(l, t_no);
        llama_sampler_accept(l, t_yes);
        TH_CHECK(allows(l, e, t_dot) && !allows(l, e, t_no), "lazy: constrained after the trigger token");
        llama_sampler_reset(l);
        TH_CHECK(allows(l, e, t_no), "lazy: reset waits again");
        llama_sampler_free(l);
    }
    // lazy: a pattern found in the text; the grammar gets the text from the first capture group on
    {
        const char * pats[1] = { "answer: ([0-9])" };
        struct llama_sampler * l = llama_sampler_init_grammar_lazy_patterns(e->vocab, "root ::= [0-9]+ \".\"", "root",
                pats, 1, NULL, 0);
        TH_CHECK(l != NULL, "lazy pattern sampler");
        if (l) {
            accept_text(l, e, "the answer is");
            TH_CHECK(allows(l, e, t_no), "lazy pattern: free before the trigger");
            accept_text(l, e, " answer: 4");
            TH_CHECK(!allows(l, e, t_no) && allows(l, e, t_dot), "lazy pattern: constrained after the match");
            struct llama_sampler * lc = llama_sampler_clone(l);
            TH_CHECK(lc && !allows(lc, e, t_no) && allows(lc, e, t_dot), "lazy clone");
            llama_sampler_free(lc);
        }
        llama_sampler_free(l);
        // "^...$" must match the whole text, other patterns anywhere
        const char * full[1] = { "^ok$" };
        l = llama_sampler_init_grammar_lazy_patterns(e->vocab, "root ::= \"x\"", "root", full, 1, NULL, 0);
        if (l) {
            accept_text(l, e, "not ok yet");
            TH_CHECK(allows(l, e, t_no), "^ok$ does not trigger on 'not ok yet'");
        }
        llama_sampler_free(l);
        const char * any[1] = { "ok" };
        l = llama_sampler_init_grammar_lazy_patterns(e->vocab, "root ::= \"x\"", "root", any, 1, NULL, 0);
        if (l) {
            accept_text(l, e, "not ok");
            TH_CHECK(!allows(l, e, t_no), "ok triggers on 'not ok' (and 'ok' is not a prefix of \"x\")");
        }
        llama_sampler_free(l);
        const char * bad[1] = { "([a-z" };
        TH_CHECK(llama_sampler_init_grammar_lazy_patterns(e->vocab, "root ::= \"x\"", "root", bad, 1, NULL, 0) == NULL,
                "bad trigger regex");
    }

    // grammar samplers in chains with clones and copies: no crash, same verdicts in clones
    {
        uint64_t rng = 77;
        for (int it = 0; it < 20; ++it) {
            struct llama_sampler * chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
            llama_sampler_chain_add(chain, llama_sampler_init_grammar(e->vocab, JSON_GRAMMAR, "root"));
            llama_sampler_chain_add(chain, llama_sampler_init_top_k(20));
            llama_sampler_chain_add(chain, llama_sampler_init_dist((uint32_t) it));
            const int n_acc = (int) (th_xorshift64(&rng) % 6);
            const char * json = "{\"a\": [1, 2]}"; // fed through single-character tokens
            char prefix[32];
            snprintf(prefix, sizeof(prefix), "%.*s", n_acc * 2, json);
            accept_chars(chain, e, prefix);
            struct llama_sampler * cl = llama_sampler_clone(chain);
            llama_token_data * buf = malloc((size_t) e->n_vocab * sizeof(*buf));
            for (int32_t id = 0; id < e->n_vocab; ++id) {
                buf[id] = (llama_token_data) { id, (float) (th_xorshift64(&rng) % 1000) / 100.0f, 0.0f };
            }
            llama_token_data_array p1 = { buf, (size_t) e->n_vocab, -1, false };
            llama_sampler_apply(chain, &p1);
            const llama_token a = p1.selected >= 0 ? p1.data[p1.selected].id : -1;
            for (int32_t id = 0; id < e->n_vocab; ++id) {
                buf[id] = (llama_token_data) { id, 0.0f, 0.0f };
            }
            TH_EXPECT(a >= 0, "chain selected a token");
            llama_sampler_free(chain);
            llama_sampler_free(cl);
            free(buf);
        }
    }
}

// the cost of apply over the whole vocabulary, for the report (not asserted)
static void bench_apply(const struct vocab_env * e, const char * label) {
    struct llama_sampler * s = llama_sampler_init_grammar(e->vocab, JSON_GRAMMAR, "root");
    if (!s) {
        return;
    }
    llama_token_data * cur = malloc((size_t) e->n_vocab * sizeof(*cur));
    const char * states[] = { "", "{\"name\": \"Al", "{\"a\": [1, 2" };
    for (size_t k = 0; k < 3; ++k) {
        llama_sampler_reset(s);
        accept_chars(s, e, states[k]);
        const int reps = 20;
        const int64_t t0 = ggml_time_us();
        for (int r = 0; r < reps; ++r) {
            for (int32_t id = 0; id < e->n_vocab; ++id) {
                cur[id] = (llama_token_data) { id, 0.0f, 0.0f };
            }
            llama_token_data_array p = { cur, (size_t) e->n_vocab, -1, false };
            llama_sampler_apply(s, &p);
        }
        const double us = (double) (ggml_time_us() - t0) / reps;
        fprintf(stderr, "bench %s: apply over %d tokens after '%s': %.0f us\n", label, e->n_vocab, states[k], us);
    }
    free(cur);
    llama_sampler_free(s);
}

static void test_vocab(const char * file, bool bench) {
    struct vocab_env e;
    if (!env_load(&e, th_data_path("%s", file))) {
        return;
    }
    fprintf(stderr, "%s: %d tokens\n", file, e.n_vocab);
    test_sampler_api(&e);
    check_sampler_walk(&e, "root ::= (\"yes\" | \"no\") \".\"", "(yes|no)\\.", 6, 1);
    check_sampler_walk(&e, "root ::= [a-z]{1,6} (\" \" [a-z0-9]+){0,4} \"!\"", "[a-z]{1,6}( [a-z0-9]+){0,4}!", 10, 2);
    check_sampler_walk(&e, "root ::= ([^\\x00-\\x7f] | [a-c ])+ \".\"", "([^\\x00-\\x7f]|[a-c ])+\\.", 12, 3);
    check_sampler_walk(&e, "root ::= (\"\xc3\xa9t\xc3\xa9\" | \"\xe6\x97\xa5\xe6\x9c\xac\" | [\xd0\xb0-\xd1\x8f] | \" \")+",
            "(\xc3\xa9t\xc3\xa9|\xe6\x97\xa5\xe6\x9c\xac|[\xd0\xb0-\xd1\x8f]| )+", 10, 4);
    check_sampler_walk(&e, JSON_GRAMMAR, NULL, 12, 5);
    if (bench) {
        bench_apply(&e, file);
    }
    env_free(&e);
}

int main(void) {
    llama_backend_init();
    test_parser();
    test_matcher();
    test_parser_fuzz();
    test_vocab("models/stories260K-f32.gguf", false);
    test_vocab("models/vocab/ggml-vocab-llama-spm.gguf", true);
    test_vocab("models/vocab/ggml-vocab-gpt-2.gguf", true);
    llama_backend_free();
    return th_finish();
}
