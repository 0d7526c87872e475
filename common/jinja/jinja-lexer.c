// Tokenizer. Whitespace control follows llama.cpp's chat-template lexer (trim_blocks and lstrip_blocks on):
//  - lstrip_blocks: spaces/tabs between a line start and a `{%` / `{#` are dropped;
//  - trim_blocks: the first newline after a `%}` / `#}` is dropped;
//  - `{%-` `{{-` `{#-` strip all whitespace before the tag, `-%}` `-}}` `-#}` all whitespace after it.
// Comments produce no token.
#include "jinja-impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct lexer {
    struct jenv * e;
    const char *  s;
    size_t        n;
    struct jtok * toks;
    size_t        n_tok, cap;
};

static void push(struct lexer * L, struct jtok t) {
    if (L->n_tok == L->cap) {
        size_t nc = L->cap ? L->cap * 2 : 64;
        struct jtok * v = jalloc(L->e, nc * sizeof(*v));
        if (L->n_tok) {
            memcpy(v, L->toks, L->n_tok * sizeof(*v));
        }
        L->toks = v;
        L->cap = nc;
    }
    L->toks[L->n_tok++] = t;
}

static bool is_tag_open(const struct lexer * L, size_t p) {
    return p + 1 < L->n && L->s[p] == '{' && (L->s[p + 1] == '%' || L->s[p + 1] == '{' || L->s[p + 1] == '#');
}

static bool is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// the text from `start` up to the next tag, with whitespace control applied; returns the tag position
static size_t lex_text(struct lexer * L, size_t start) {
    size_t p = start;
    while (p < L->n && !is_tag_open(L, p)) {
        p++;
    }
    size_t b = start, end = p;
    // lstrip_blocks: only from a line start (or the template start), only before {% and {#
    if (p < L->n && (L->s[p + 1] == '%' || L->s[p + 1] == '#')) {
        size_t cur = end;
        while (cur > b && L->s[cur - 1] != '\n' && is_ws(L->s[cur - 1])) {
            cur--;
        }
        if ((cur > b && L->s[cur - 1] == '\n') || cur == 0) {
            end = cur; // only blanks between the line (or template) start and the tag
        }
    }
    // the closing tag just before the text decides trim_blocks and `-` stripping
    if (start >= 2 && L->s[start - 1] == '}') {
        const char c1 = L->s[start - 2];
        const bool minus = start >= 3 && L->s[start - 3] == '-' && (c1 == '%' || c1 == '}' || c1 == '#');
        if ((c1 == '%' || c1 == '#') && b < end && L->s[b] == '\n') {
            b++;
        }
        if (minus) {
            while (b < end && is_ws(L->s[b])) {
                b++;
            }
        }
    }
    if (p + 2 < L->n && L->s[p + 2] == '-') {
        while (end > b && is_ws(L->s[end - 1])) {
            end--;
        }
    }
    if (end > b) {
        struct jtok t = { TK_TEXT, jstrndup(L->e, L->s + b, end - b), end - b, 0, 0, start };
        push(L, t);
    }
    return p;
}

static const char * const OPS[] = {
    "**", "//", "==", "!=", "<=", ">=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", "~", "+", "-", "*", "/",
    "%", "<", ">", "=",
};

static char unescape(char c) {
    switch (c) {
        case 'n': return '\n';
        case 't': return '\t';
        case 'r': return '\r';
        case 'b': return '\b';
        case 'f': return '\f';
        case 'v': return '\v';
        case '0': return '\0';
        default:  return c;
    }
}

// tokens inside {{ }} / {% %} starting after the opener; returns the position after the closer
static size_t lex_tag(struct lexer * L, size_t p, bool is_expr, size_t open_pos) {
    int brace_depth = 0;
    for (;;) {
        while (p < L->n && is_ws(L->s[p])) {
            p++;
        }
        if (p >= L->n) {
            jerr(L->e, open_pos, "unclosed '%s'", is_expr ? "{{" : "{%");
        }
        const char * s = L->s + p;
        const size_t left = L->n - p;
        // closers, optionally with a '-' or '+' before them
        size_t skip = (s[0] == '-' || s[0] == '+') && left >= 3 ? 1 : 0;
        if (left >= skip + 2) {
            if (!is_expr && s[skip] == '%' && s[skip + 1] == '}') {
                push(L, (struct jtok) { TK_CLOSE_STMT, "%}", 2, 0, 0, p });
                return p + skip + 2;
            }
            if (is_expr && brace_depth == 0 && s[skip] == '}' && s[skip + 1] == '}') {
                push(L, (struct jtok) { TK_CLOSE_EXPR, "}}", 2, 0, 0, p });
                return p + skip + 2;
            }
        }
        const char c = s[0];
        if (c == '\'' || c == '"') {
            struct jbuf b = { 0 };
            size_t q = p + 1;
            while (q < L->n && L->s[q] != c) {
                if (L->s[q] == '\\' && q + 1 < L->n) {
                    const char x = L->s[q + 1];
                    if (x == 'u' && q + 5 < L->n) {
                        // \uXXXX -> UTF-8
                        char hex[5];
                        memcpy(hex, L->s + q + 2, 4);
                        hex[4] = '\0';
                        char * endp;
                        unsigned long cp = strtoul(hex, &endp, 16);
                        if (*endp == '\0') {
                            char u[4];
                            size_t un;
                            if (cp < 0x80) { u[0] = (char) cp; un = 1; }
                            else if (cp < 0x800) { u[0] = (char) (0xC0 | (cp >> 6)); u[1] = (char) (0x80 | (cp & 0x3F)); un = 2; }
                            else { u[0] = (char) (0xE0 | (cp >> 12)); u[1] = (char) (0x80 | ((cp >> 6) & 0x3F)); u[2] = (char) (0x80 | (cp & 0x3F)); un = 3; }
                            jbuf_put(L->e, &b, u, un);
                            q += 6;
                            continue;
                        }
                    }
                    if (x == '\n') {
                        q += 2; // line continuation
                        continue;
                    }
                    if (strchr("ntrbfv0\\'\"", x)) {
                        jbuf_putc(L->e, &b, unescape(x));
                    } else {
                        jbuf_putc(L->e, &b, '\\');
                        jbuf_putc(L->e, &b, x);
                    }
                    q += 2;
                    continue;
                }
                jbuf_putc(L->e, &b, L->s[q]);
                q++;
            }
            if (q >= L->n) {
                jerr(L->e, p, "unterminated string");
            }
            push(L, (struct jtok) { TK_STRING, b.s ? b.s : "", b.n, 0, 0, p });
            p = q + 1;
            continue;
        }
        if (isdigit((unsigned char) c)) {
            size_t q = p;
            while (q < L->n && (isdigit((unsigned char) L->s[q]) || L->s[q] == '_')) {
                q++;
            }
            bool is_float = false;
            if (q + 1 < L->n && L->s[q] == '.' && isdigit((unsigned char) L->s[q + 1])) {
                is_float = true;
                q++;
                while (q < L->n && isdigit((unsigned char) L->s[q])) {
                    q++;
                }
            }
            if (q < L->n && (L->s[q] == 'e' || L->s[q] == 'E')) {
                size_t r = q + 1;
                if (r < L->n && (L->s[r] == '+' || L->s[r] == '-')) {
                    r++;
                }
                if (r < L->n && isdigit((unsigned char) L->s[r])) {
                    is_float = true;
                    q = r;
                    while (q < L->n && isdigit((unsigned char) L->s[q])) {
                        q++;
                    }
                }
            }
            char tmp[64];
            size_t k = 0;
            for (size_t i = p; i < q && k + 1 < sizeof(tmp); i++) {
                if (L->s[i] != '_') {
                    tmp[k++] = L->s[i];
                }
            }
            tmp[k] = '\0';
            struct jtok t = { is_float ? TK_FLOAT : TK_INT, NULL, 0, 0, 0, p };
            if (is_float) {
                t.f = strtod(tmp, NULL);
            } else {
                t.i = strtoll(tmp, NULL, 10);
            }
            push(L, t);
            p = q;
            continue;
        }
        if (isalpha((unsigned char) c) || c == '_') {
            size_t q = p;
            while (q < L->n && (isalnum((unsigned char) L->s[q]) || L->s[q] == '_')) {
                q++;
            }
            push(L, (struct jtok) { TK_NAME, jstrndup(L->e, s, q - p), q - p, 0, 0, p });
            p = q;
            continue;
        }
        bool matched = false;
        for (size_t i = 0; i < sizeof(OPS) / sizeof(OPS[0]); i++) {
            const size_t k = strlen(OPS[i]);
            if (left >= k && memcmp(s, OPS[i], k) == 0) {
                if (OPS[i][0] == '{' && k == 1) {
                    brace_depth++;
                } else if (OPS[i][0] == '}' && k == 1) {
                    brace_depth--;
                }
                push(L, (struct jtok) { TK_OP, OPS[i], k, 0, 0, p });
                p += k;
                matched = true;
                break;
            }
        }
        if (!matched) {
            jerr(L->e, p, "unexpected character '%c'", c);
        }
    }
}

struct jtok * jinja_lex(struct jenv * e, const char * src, size_t len, size_t * n_tok) {
    struct lexer L = { e, src, len, NULL, 0, 0 };
    size_t p = 0;
    while (p < len) {
        p = lex_text(&L, p);
        if (p >= len) {
            break;
        }
        const char kind = src[p + 1];
        const size_t open = p;
        p += 2;
        if (p < len && (src[p] == '-' || src[p] == '+')) {
            p++;
        }
        if (kind == '#') {
            const char * end = NULL;
            for (size_t q = p; q + 1 < len; q++) {
                if (src[q] == '#' && src[q + 1] == '}') {
                    end = src + q;
                    break;
                }
            }
            if (!end) {
                jerr(e, open, "unclosed comment");
            }
            p = (size_t) (end - src) + 2;
            continue;
        }
        if (kind == '%') {
            // {% raw %}...{% endraw %}: the body is text, tags in it included
            size_t q = p;
            while (q < len && is_ws(src[q])) {
                q++;
            }
            if (q + 3 <= len && memcmp(src + q, "raw", 3) == 0 && (q + 3 == len || !isalnum((unsigned char) src[q + 3]))) {
                const char * close = strstr(src + q, "%}");
                if (!close) {
                    jerr(e, open, "unclosed '{%%'");
                }
                size_t body = (size_t) (close - src) + 2;
                if (body < len && src[body] == '\n') {
                    body++; // trim_blocks
                }
                size_t r = body;
                size_t end_tag = SIZE_MAX, after = 0;
                for (; r + 1 < len; r++) {
                    if (src[r] != '{' || src[r + 1] != '%') {
                        continue;
                    }
                    size_t k = r + 2;
                    if (k < len && (src[k] == '-' || src[k] == '+')) {
                        k++;
                    }
                    while (k < len && is_ws(src[k])) {
                        k++;
                    }
                    if (k + 6 <= len && memcmp(src + k, "endraw", 6) == 0) {
                        const char * c2 = strstr(src + k, "%}");
                        if (c2) {
                            end_tag = r;
                            after = (size_t) (c2 - src) + 2;
                        }
                        break;
                    }
                }
                if (end_tag == SIZE_MAX) {
                    jerr(e, open, "'{%% raw %%}' without '{%% endraw %%}'");
                }
                size_t body_end = end_tag;
                if (end_tag + 2 < len && src[end_tag + 2] == '-') {
                    while (body_end > body && is_ws(src[body_end - 1])) {
                        body_end--;
                    }
                }
                if (body_end > body) {
                    push(&L, (struct jtok) { TK_TEXT, jstrndup(e, src + body, body_end - body), body_end - body, 0, 0, body });
                }
                p = after;
                continue;
            }
        }
        const bool is_expr = kind == '{';
        push(&L, (struct jtok) { is_expr ? TK_OPEN_EXPR : TK_OPEN_STMT, is_expr ? "{{" : "{%", 2, 0, 0, open });
        p = lex_tag(&L, p, is_expr, open);
    }
    push(&L, (struct jtok) { TK_EOF, "", 0, 0, 0, len });
    *n_tok = L.n_tok;
    return L.toks;
}
