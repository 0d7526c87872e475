// GBNF parser: grammar text -> rules of llama_grammar_element, with llama.cpp's syntax and rewrites (groups and
// repetitions become generated rules "<rule>_<id>"). Errors name what was expected and where; nothing here aborts.

#include "llama-grammar.h"

#include "llama-impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// llama.cpp's MAX_REPETITION_THRESHOLD for repetitions that are unrolled into the grammar
#define GRAMMAR_MAX_REPETITION 2000
// all rules together: repetitions copy their item, so nested counts multiply; this keeps garbage from eating memory
#define GRAMMAR_MAX_ELEMS      (1u << 22)
// nested ( ) groups: the parser recurses on them
#define GRAMMAR_MAX_DEPTH      256
#define GRAMMAR_NO_MAX         UINT64_MAX

static void parser_fail(struct llama_grammar_parser * p, const char * pos, const char * fmt, ...) {
    if (p->failed) {
        return;
    }
    p->failed = true;
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!pos) {
        snprintf(p->error, sizeof(p->error), "%s", msg);
        return;
    }
    // show where: the next few characters with line breaks made visible
    char where[40];
    size_t n = 0;
    for (const char * c = pos; *c && n + 3 < sizeof(where); ++c) {
        if (*c == '\n' || *c == '\r') {
            where[n++] = '\\';
            where[n++] = *c == '\n' ? 'n' : 'r';
        } else {
            where[n++] = *c;
        }
    }
    where[n] = '\0';
    if (n == 0) {
        snprintf(p->error, sizeof(p->error), "%s at end of input", msg);
    } else {
        snprintf(p->error, sizeof(p->error), "%s at '%s'", msg, where);
    }
}

static bool is_digit_char(char c) {
    return '0' <= c && c <= '9';
}

static bool is_word_char(char c) {
    return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c == '-' || is_digit_char(c);
}

// skips blanks and # comments; line breaks only when newline_ok (a rule ends at a line break outside groups)
static const char * parse_space(const char * pos, bool newline_ok) {
    while (*pos == ' ' || *pos == '\t' || *pos == '#' || (newline_ok && (*pos == '\r' || *pos == '\n'))) {
        if (*pos == '#') {
            while (*pos && *pos != '\r' && *pos != '\n') {
                pos++;
            }
        } else {
            pos++;
        }
    }
    return pos;
}

//
// symbols and rules
//

static uint32_t name_hash(const char * s, size_t len) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; ++i) {
        h = (h ^ (uint8_t) s[i]) * 16777619u;
    }
    return h;
}

static bool symbols_rehash(struct llama_grammar_parser * p, uint32_t cap) {
    uint32_t * h = calloc(cap, sizeof(*h));
    if (!h) {
        return false;
    }
    for (uint32_t id = 0; id < p->n_symbols; ++id) {
        uint32_t i = name_hash(p->names[id], strlen(p->names[id])) & (cap - 1);
        while (h[i]) {
            i = (i + 1) & (cap - 1);
        }
        h[i] = id + 1;
    }
    free(p->hash);
    p->hash     = h;
    p->cap_hash = cap;
    return true;
}

static int32_t symbol_find(const struct llama_grammar_parser * p, const char * name, size_t len) {
    if (!p->cap_hash) {
        return -1;
    }
    uint32_t i = name_hash(name, len) & (p->cap_hash - 1);
    while (p->hash[i]) {
        const char * s = p->names[p->hash[i] - 1];
        if (strncmp(s, name, len) == 0 && s[len] == '\0') {
            return (int32_t) (p->hash[i] - 1);
        }
        i = (i + 1) & (p->cap_hash - 1);
    }
    return -1;
}

// adds a new symbol (the name must not exist yet); UINT32_MAX when out of memory
static uint32_t symbol_add(struct llama_grammar_parser * p, const char * name, size_t len) {
    if (p->n_symbols == p->cap_symbols) {
        const uint32_t cap = p->cap_symbols ? 2 * p->cap_symbols : 32;
        char ** names = realloc(p->names, cap * sizeof(*names));
        if (!names) {
            return UINT32_MAX;
        }
        p->names = names;
        struct llama_grammar_rule * rules = realloc(p->rules, cap * sizeof(*rules));
        if (!rules) {
            return UINT32_MAX;
        }
        memset(rules + p->cap_symbols, 0, (cap - p->cap_symbols) * sizeof(*rules));
        p->rules       = rules;
        p->cap_symbols = cap;
    }
    if (2 * (p->n_symbols + 1) > p->cap_hash && !symbols_rehash(p, p->cap_hash ? 2 * p->cap_hash : 64)) {
        return UINT32_MAX;
    }
    char * s = malloc(len + 1);
    if (!s) {
        return UINT32_MAX;
    }
    memcpy(s, name, len);
    s[len] = '\0';
    const uint32_t id = p->n_symbols++;
    p->names[id] = s;
    uint32_t i = name_hash(s, len) & (p->cap_hash - 1);
    while (p->hash[i]) {
        i = (i + 1) & (p->cap_hash - 1);
    }
    p->hash[i] = id + 1;
    return id;
}

static uint32_t symbol_get(struct llama_grammar_parser * p, const char * name, size_t len) {
    const int32_t id = symbol_find(p, name, len);
    if (id >= 0) {
        return (uint32_t) id;
    }
    const uint32_t r = symbol_add(p, name, len);
    if (r == UINT32_MAX) {
        parser_fail(p, NULL, "out of memory");
    }
    return r;
}

// a fresh symbol for a group or repetition inside rule base: "<base>_<id>" (as llama.cpp names them)
static uint32_t symbol_generate(struct llama_grammar_parser * p, const char * base) {
    char name[128];
    const int n = snprintf(name, sizeof(name), "%.100s_%u", base, p->n_symbols);
    uint32_t id = UINT32_MAX;
    if (n > 0 && symbol_find(p, name, (size_t) n) < 0) {
        id = symbol_add(p, name, (size_t) n);
    } else if (n > 0) {
        // a user rule already has this name: give the generated one a name no user rule can have
        char alt[140];
        const int m = snprintf(alt, sizeof(alt), "%s#%u", name, p->n_symbols);
        id = m > 0 ? symbol_add(p, alt, (size_t) m) : UINT32_MAX;
    }
    if (id == UINT32_MAX) {
        parser_fail(p, NULL, "out of memory");
    }
    return id;
}

static bool rule_push(struct llama_grammar_parser * p, struct llama_grammar_rule * r, enum llama_gretype type, uint32_t value) {
    if (p->failed) {
        return false;
    }
    if (p->n_elems_total >= GRAMMAR_MAX_ELEMS) {
        parser_fail(p, NULL, "grammar too large (more than %u elements after expanding repetitions)", GRAMMAR_MAX_ELEMS);
        return false;
    }
    if (r->n == r->cap) {
        const size_t cap = r->cap ? 2 * r->cap : 16;
        llama_grammar_element * e = realloc(r->elems, cap * sizeof(*e));
        if (!e) {
            parser_fail(p, NULL, "out of memory");
            return false;
        }
        r->elems = e;
        r->cap   = cap;
    }
    r->elems[r->n].type  = type;
    r->elems[r->n].value = value;
    r->n++;
    p->n_elems_total++;
    return true;
}

static bool rule_append(struct llama_grammar_parser * p, struct llama_grammar_rule * r, const llama_grammar_element * e, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (!rule_push(p, r, e[i].type, e[i].value)) {
            return false;
        }
    }
    return true;
}

static void rule_free(struct llama_grammar_rule * r) {
    free(r->elems);
    memset(r, 0, sizeof(*r));
}

// stores r as the definition of id (a later definition replaces an earlier one, as in llama.cpp); takes r
static void rule_set(struct llama_grammar_parser * p, uint32_t id, struct llama_grammar_rule * r) {
    rule_free(&p->rules[id]);
    p->rules[id] = *r;
    memset(r, 0, sizeof(*r));
}

//
// lexical items
//

static const char * parse_hex(struct llama_grammar_parser * p, const char * pos, int size, uint32_t * out) {
    uint32_t v = 0;
    for (int i = 0; i < size; ++i) {
        const char c = pos[i];
        int d;
        if ('0' <= c && c <= '9') {
            d = c - '0';
        } else if ('a' <= c && c <= 'f') {
            d = c - 'a' + 10;
        } else if ('A' <= c && c <= 'F') {
            d = c - 'A' + 10;
        } else {
            parser_fail(p, pos, "expecting %d hex chars", size);
            return NULL;
        }
        v = (v << 4) | (uint32_t) d;
    }
    *out = v;
    return pos + size;
}

// one UTF-8 character of the grammar text itself
static const char * parse_utf8_char(struct llama_grammar_parser * p, const char * pos, uint32_t * out) {
    const uint8_t b = (uint8_t) pos[0];
    int len;
    uint32_t v;
    if (b < 0x80) {
        *out = b;
        return pos + 1;
    } else if ((b & 0xE0) == 0xC0) {
        len = 2; v = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
        len = 3; v = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
        len = 4; v = b & 0x07;
    } else {
        parser_fail(p, NULL, "invalid UTF-8 in grammar (byte 0x%02X)", b);
        return NULL;
    }
    for (int i = 1; i < len; ++i) {
        const uint8_t c = (uint8_t) pos[i];
        if ((c & 0xC0) != 0x80) {
            parser_fail(p, NULL, "invalid UTF-8 in grammar (truncated sequence)");
            return NULL;
        }
        v = (v << 6) | (c & 0x3F);
    }
    *out = v;
    return pos + len;
}

static const char * parse_char(struct llama_grammar_parser * p, const char * pos, uint32_t * out) {
    if (*pos == '\\') {
        switch (pos[1]) {
            case 'x': return parse_hex(p, pos + 2, 2, out);
            case 'u': return parse_hex(p, pos + 2, 4, out);
            case 'U': return parse_hex(p, pos + 2, 8, out);
            case 't': *out = '\t'; return pos + 2;
            case 'r': *out = '\r'; return pos + 2;
            case 'n': *out = '\n'; return pos + 2;
            case '\\':
            case '"':
            case '[':
            case ']': *out = (uint8_t) pos[1]; return pos + 2;
            default:
                parser_fail(p, pos, "unknown escape");
                return NULL;
        }
    }
    if (*pos == '\0') {
        parser_fail(p, pos, "unexpected end of input");
        return NULL;
    }
    return parse_utf8_char(p, pos, out);
}

static const char * parse_name(struct llama_grammar_parser * p, const char * pos) {
    const char * end = pos;
    while (is_word_char(*end)) {
        end++;
    }
    if (end == pos) {
        parser_fail(p, pos, "expecting name");
        return NULL;
    }
    return end;
}

static const char * parse_int(struct llama_grammar_parser * p, const char * pos, uint64_t * out) {
    uint64_t v = 0;
    const char * c = pos;
    while (is_digit_char(*c)) {
        if (v > 1000000000u) {
            parser_fail(p, pos, "integer too large");
            return NULL;
        }
        v = v * 10 + (uint64_t) (*c - '0');
        c++;
    }
    if (c == pos) {
        parser_fail(p, pos, "expecting integer");
        return NULL;
    }
    *out = v;
    return c;
}

// <[id]> or <text> (text must be exactly one token of the vocabulary)
static const char * parse_token(struct llama_grammar_parser * p, const char * src, uint32_t * out) {
    const char * pos = src;
    if (*pos != '<') {
        parser_fail(p, pos, "expecting '<'");
        return NULL;
    }
    pos++;
    if (*pos == '[') {
        uint64_t id;
        pos = parse_int(p, pos + 1, &id);
        if (!pos) {
            return NULL;
        }
        if (*pos != ']') {
            parser_fail(p, pos, "expecting ']'");
            return NULL;
        }
        if (pos[1] != '>') {
            parser_fail(p, pos + 1, "expecting '>'");
            return NULL;
        }
        if (id > INT32_MAX) {
            parser_fail(p, src, "token id out of range");
            return NULL;
        }
        *out = (uint32_t) id;
        return pos + 2;
    }
    if (!p->vocab) {
        parser_fail(p, src, "no vocab to parse token");
        return NULL;
    }
    while (*pos && *pos != '>') {
        pos++;
    }
    if (*pos != '>') {
        parser_fail(p, pos, "expecting '>'");
        return NULL;
    }
    pos++;
    llama_token toks[2];
    const int32_t n = llama_tokenize(p->vocab, src, (int32_t) (pos - src), toks, 2, false, true);
    if (n != 1) {
        parser_fail(p, src, "invalid token (the text must be exactly one token)");
        return NULL;
    }
    *out = (uint32_t) toks[0];
    return pos;
}

//
// rules
//

static const char * parse_alternates(struct llama_grammar_parser * p, const char * pos, const char * rule_name,
        uint32_t rule_id, bool nested);

// rewrites the item rule[last..n) repeated min..max times (max GRAMMAR_NO_MAX: unbounded) as llama.cpp does:
//   S{m,n} -> S (m times) S'(n-m),  S'(k) ::= S S'(k-1) | ,  S'(1) ::= S |
//   S{m,}  -> S (m times) S',       S'    ::= S S' |
static bool handle_repetitions(struct llama_grammar_parser * p, const char * pos, struct llama_grammar_rule * rule,
        size_t last, uint64_t min, uint64_t max, const char * rule_name) {
    const bool no_max = max == GRAMMAR_NO_MAX;
    if (last == rule->n) {
        parser_fail(p, pos, "expecting preceding item to */+/?/{");
        return false;
    }
    if (!no_max && max < min) {
        parser_fail(p, pos, "bad repetition bounds {%llu,%llu}: the maximum is below the minimum",
                (unsigned long long) min, (unsigned long long) max);
        return false;
    }
    if (min > GRAMMAR_MAX_REPETITION || (!no_max && max > GRAMMAR_MAX_REPETITION)) {
        parser_fail(p, pos, "number of repetitions exceeds sane defaults, please reduce the number of repetitions");
        return false;
    }

    struct llama_grammar_rule item = { 0 };
    if (!rule_append(p, &item, rule->elems + last, rule->n - last)) {
        rule_free(&item);
        return false;
    }
    bool ok = true;
    if (min == 0) {
        p->n_elems_total -= rule->n - last;
        rule->n = last;
    }
    for (uint64_t i = 1; i < min && ok; ++i) {
        ok = rule_append(p, rule, item.elems, item.n);
    }

    const uint64_t n_opt = no_max ? 1 : max - min;
    uint32_t last_rec = 0;
    for (uint64_t i = 0; i < n_opt && ok; ++i) {
        const uint32_t id = symbol_generate(p, rule_name);
        struct llama_grammar_rule rec = { 0 };
        ok = id != UINT32_MAX && rule_append(p, &rec, item.elems, item.n);
        if (ok && (i > 0 || no_max)) {
            ok = rule_push(p, &rec, LLAMA_GRETYPE_RULE_REF, no_max ? id : last_rec);
        }
        ok = ok && rule_push(p, &rec, LLAMA_GRETYPE_ALT, 0) && rule_push(p, &rec, LLAMA_GRETYPE_END, 0);
        if (ok) {
            rule_set(p, id, &rec);
            last_rec = id;
        }
        rule_free(&rec);
    }
    if (ok && n_opt > 0) {
        ok = rule_push(p, rule, LLAMA_GRETYPE_RULE_REF, last_rec);
    }
    rule_free(&item);
    return ok;
}

static const char * parse_sequence(struct llama_grammar_parser * p, const char * pos, const char * rule_name,
        struct llama_grammar_rule * rule, bool nested) {
    size_t last = rule->n; // start of the last item, the one a repetition operator applies to
    while (*pos && !p->failed) {
        if (*pos == '"') { // literal string
            pos++;
            last = rule->n;
            while (*pos != '"') {
                uint32_t c;
                pos = parse_char(p, pos, &c);
                if (!pos || !rule_push(p, rule, LLAMA_GRETYPE_CHAR, c)) {
                    return NULL;
                }
            }
            pos = parse_space(pos + 1, nested);
        } else if (*pos == '[') { // character class
            const char * start = pos;
            pos++;
            enum llama_gretype first = LLAMA_GRETYPE_CHAR;
            if (*pos == '^') {
                pos++;
                first = LLAMA_GRETYPE_CHAR_NOT;
            }
            last = rule->n;
            while (*pos != ']') {
                uint32_t c;
                pos = parse_char(p, pos, &c);
                if (!pos || !rule_push(p, rule, rule->n > last ? LLAMA_GRETYPE_CHAR_ALT : first, c)) {
                    return NULL;
                }
                if (pos[0] == '-' && pos[1] != ']') {
                    uint32_t hi;
                    const char * range = pos;
                    pos = parse_char(p, pos + 1, &hi);
                    if (!pos) {
                        return NULL;
                    }
                    if (hi < c) {
                        parser_fail(p, range - 1, "invalid character range (end below start)");
                        return NULL;
                    }
                    if (!rule_push(p, rule, LLAMA_GRETYPE_CHAR_RNG_UPPER, hi)) {
                        return NULL;
                    }
                }
            }
            if (rule->n == last) {
                parser_fail(p, start, "empty character class");
                return NULL;
            }
            pos = parse_space(pos + 1, nested);
        } else if (*pos == '<' || *pos == '!') { // token
            enum llama_gretype type = LLAMA_GRETYPE_TOKEN;
            if (*pos == '!') {
                type = LLAMA_GRETYPE_TOKEN_NOT;
                pos++;
            }
            uint32_t id;
            pos = parse_token(p, pos, &id);
            if (!pos) {
                return NULL;
            }
            last = rule->n;
            if (!rule_push(p, rule, type, id)) {
                return NULL;
            }
            pos = parse_space(pos, nested);
        } else if (is_word_char(*pos)) { // rule reference
            const char * end = parse_name(p, pos);
            const uint32_t id = symbol_get(p, pos, (size_t) (end - pos));
            last = rule->n;
            if (id == UINT32_MAX || !rule_push(p, rule, LLAMA_GRETYPE_RULE_REF, id)) {
                return NULL;
            }
            pos = parse_space(end, nested);
        } else if (*pos == '(') { // group: its alternates become a generated rule
            if (++p->depth > GRAMMAR_MAX_DEPTH) {
                parser_fail(p, pos, "groups nested too deeply (more than %d)", GRAMMAR_MAX_DEPTH);
                return NULL;
            }
            const uint32_t id = symbol_generate(p, rule_name);
            if (id == UINT32_MAX) {
                return NULL;
            }
            pos = parse_alternates(p, parse_space(pos + 1, true), rule_name, id, true);
            if (!pos) {
                return NULL;
            }
            p->depth--;
            if (*pos != ')') {
                parser_fail(p, pos, "expecting ')'");
                return NULL;
            }
            last = rule->n;
            if (!rule_push(p, rule, LLAMA_GRETYPE_RULE_REF, id)) {
                return NULL;
            }
            pos = parse_space(pos + 1, nested);
        } else if (*pos == '.') { // any character
            last = rule->n;
            if (!rule_push(p, rule, LLAMA_GRETYPE_CHAR_ANY, 0)) {
                return NULL;
            }
            pos = parse_space(pos + 1, nested);
        } else if (*pos == '*' || *pos == '+' || *pos == '?') {
            const uint64_t min = *pos == '+' ? 1 : 0;
            const uint64_t max = *pos == '?' ? 1 : GRAMMAR_NO_MAX;
            if (!handle_repetitions(p, pos, rule, last, min, max, rule_name)) {
                return NULL;
            }
            pos = parse_space(pos + 1, nested);
        } else if (*pos == '{') {
            const char * brace = pos;
            pos = parse_space(pos + 1, nested);
            uint64_t min;
            uint64_t max = GRAMMAR_NO_MAX;
            pos = parse_int(p, pos, &min);
            if (!pos) {
                return NULL;
            }
            pos = parse_space(pos, nested);
            if (*pos == '}') {
                max = min;
            } else if (*pos == ',') {
                pos = parse_space(pos + 1, nested);
                if (is_digit_char(*pos)) {
                    pos = parse_int(p, pos, &max);
                    if (!pos) {
                        return NULL;
                    }
                    pos = parse_space(pos, nested);
                }
                if (*pos != '}') {
                    parser_fail(p, pos, "expecting '}'");
                    return NULL;
                }
            } else {
                parser_fail(p, pos, "expecting ',' or '}'");
                return NULL;
            }
            if (!handle_repetitions(p, brace, rule, last, min, max, rule_name)) {
                return NULL;
            }
            pos = parse_space(pos + 1, nested);
        } else {
            break;
        }
    }
    return p->failed ? NULL : pos;
}

static const char * parse_alternates(struct llama_grammar_parser * p, const char * pos, const char * rule_name,
        uint32_t rule_id, bool nested) {
    struct llama_grammar_rule rule = { 0 };
    pos = parse_sequence(p, pos, rule_name, &rule, nested);
    while (pos && *pos == '|') {
        if (!rule_push(p, &rule, LLAMA_GRETYPE_ALT, 0)) {
            pos = NULL;
            break;
        }
        pos = parse_sequence(p, parse_space(pos + 1, true), rule_name, &rule, nested);
    }
    if (pos && rule_push(p, &rule, LLAMA_GRETYPE_END, 0)) {
        rule_set(p, rule_id, &rule);
    } else {
        pos = NULL;
    }
    rule_free(&rule);
    return pos;
}

static const char * parse_rule(struct llama_grammar_parser * p, const char * src) {
    const char * name_end = parse_name(p, src);
    if (!name_end) {
        return NULL;
    }
    const size_t name_len = (size_t) (name_end - src);
    const uint32_t id = symbol_get(p, src, name_len);
    if (id == UINT32_MAX) {
        return NULL;
    }
    // the name as a C string for generated symbols (names are short in practice; longer ones are cut)
    char name[101];
    snprintf(name, sizeof(name), "%.*s", (int) (name_len < 100 ? name_len : 100), src);

    const char * pos = parse_space(name_end, false);
    if (!(pos[0] == ':' && pos[1] == ':' && pos[2] == '=')) {
        parser_fail(p, pos, "expecting ::=");
        return NULL;
    }
    pos = parse_alternates(p, parse_space(pos + 3, true), name, id, false);
    if (!pos) {
        return NULL;
    }
    if (*pos == '\r') {
        pos += pos[1] == '\n' ? 2 : 1;
    } else if (*pos == '\n') {
        pos++;
    } else if (*pos) {
        parser_fail(p, pos, "expecting newline or end");
        return NULL;
    }
    return parse_space(pos, true);
}

void llama_grammar_parser_init(struct llama_grammar_parser * p, const struct llama_vocab * vocab) {
    memset(p, 0, sizeof(*p));
    p->vocab = vocab;
}

bool llama_grammar_parser_parse(struct llama_grammar_parser * p, const char * src) {
    if (!src) {
        parser_fail(p, NULL, "grammar text is NULL");
        return false;
    }
    const char * pos = parse_space(src, true);
    while (pos && *pos) {
        pos = parse_rule(p, pos);
    }
    if (!pos || p->failed) {
        return false;
    }
    for (uint32_t id = 0; id < p->n_symbols; ++id) {
        if (p->rules[id].n == 0) {
            parser_fail(p, NULL, "Undefined rule identifier '%s'", p->names[id]);
            return false;
        }
    }
    return true;
}

int32_t llama_grammar_parser_symbol_id(const struct llama_grammar_parser * p, const char * name) {
    return name ? symbol_find(p, name, strlen(name)) : -1;
}

void llama_grammar_parser_free(struct llama_grammar_parser * p) {
    for (uint32_t i = 0; i < p->n_symbols; ++i) {
        free(p->names[i]);
        rule_free(&p->rules[i]);
    }
    free(p->names);
    free(p->rules);
    free(p->hash);
    memset(p, 0, sizeof(*p));
}
