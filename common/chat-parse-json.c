// see chat-parse-json.h
#include "chat-parse-json.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

static int hexval(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// The UTF-8 sequence at s[i] (s[i] >= 0x80): its length when well-formed; SIZE_MAX when the text ends inside it (what
// is there may still become one); 0 when malformed (bad lead or continuation byte, overlong, surrogate, above
// U+10FFFF), *bad then the length of its longest well-formed beginning, at least 1: the "maximal subpart" that one
// U+FFFD replaces, as nlohmann's dump with error_handler_t::replace (and Unicode's recommended practice) does it.
static size_t utf8_seq(const char * s, size_t n, size_t i, size_t * bad) {
    const unsigned char c = (unsigned char) s[i];
    size_t len;
    uint32_t cp;
    *bad = 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t k = 1; k < len; k++) {
        if (i + k >= n) {
            return SIZE_MAX;
        }
        const unsigned char cc = (unsigned char) s[i + k];
        *bad = k;
        if ((cc & 0xc0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (cc & 0x3f);
        // overlong / surrogate / too large is known after the second byte
        if (k == 1 && ((len == 3 && cp < 0x20) || (len == 3 && cp >= 0x360 && cp < 0x380) || (len == 4 && cp < 0x10) ||
                       (len == 4 && cp >= 0x110))) {
            return 0;
        }
    }
    return len;
}

// the bytes at the end of s[from..to) that begin a UTF-8 sequence the end cuts off: a partial text shows the
// character once it is whole, so that every later text extends what was shown
static size_t utf8_cut(const char * s, size_t from, size_t to) {
    for (size_t k = 1; k <= 3 && k <= to - from; k++) {
        const unsigned char c = (unsigned char) s[to - k];
        if ((c & 0xc0) == 0x80) {
            continue;
        }
        size_t bad;
        return c >= 0xc0 && utf8_seq(s, to, to - k, &bad) == SIZE_MAX ? k : 0;
    }
    return 0;
}

// the character a one-letter escape (\" \\ \/ \b \f \n \r \t) stands for, -1 for any other letter
static int simple_escape(char e) {
    static const char from[] = "\"\\/bfnrt";
    static const char to[]   = "\"\\/\b\f\n\r\t";
    const char * p = e ? strchr(from, e) : NULL;
    return p ? (unsigned char) to[p - from] : -1;
}

// what json_u_escape found at a \u
enum json_u {
    JSON_U_CHAR,  // a code point: one escape, or a high and a low surrogate escape together
    JSON_U_LONE,  // a surrogate escape without its partner: a low one, or a high one not followed by a low one
    JSON_U_BAD,   // not four hex digits after the \u
    JSON_U_CUT,   // the text ends before it is known which of these it is
};

// the four hex digits at s[i..]: 1 (*v set), 0 when one is not hex, -1 when the text ends first (all before hex)
static int hex4_at(const char * s, size_t n, size_t i, uint32_t * v) {
    uint32_t x = 0;
    for (size_t k = 0; k < 4; k++) {
        if (i + k >= n) {
            return -1;
        }
        const int h = hexval(s[i + k]);
        if (h < 0) {
            return 0;
        }
        x = x * 16 + (uint32_t) h;
    }
    *v = x;
    return 1;
}

// The one reader of JSON's \uXXXX escapes (the scanner, the decoder and the compactor differ only in what they make
// of the result): the escape at s[i] (s[i] == '\\', s[i + 1] == 'u'), joined with the low surrogate escape that
// must follow a high one. *cp / *len (bytes read: 6, or 12 for a pair) are set for JSON_U_CHAR and JSON_U_LONE
// (*cp then the lone code unit). A partner is waited for only while what follows could still be one: a text that
// ends after a high surrogate, after the backslash that follows it, or inside the hex digits of the next \u is
// JSON_U_CUT.
static enum json_u json_u_escape(const char * s, size_t n, size_t i, uint32_t * cp, size_t * len) {
    uint32_t hi;
    const int r = hex4_at(s, n, i + 2, &hi);
    if (r <= 0) {
        return r < 0 ? JSON_U_CUT : JSON_U_BAD;
    }
    *cp = hi;
    *len = 6;
    if (hi >= 0xdc00 && hi <= 0xdfff) {
        return JSON_U_LONE;
    }
    if (hi < 0xd800 || hi > 0xdbff) {
        return JSON_U_CHAR;
    }
    const size_t j = i + 6;  // where the low half's escape must start
    if (j >= n || (s[j] == '\\' && j + 1 >= n)) {
        return JSON_U_CUT;
    }
    if (s[j] != '\\' || s[j + 1] != 'u') {
        return JSON_U_LONE;
    }
    uint32_t lo;
    const int rl = hex4_at(s, n, j + 2, &lo);
    if (rl < 0) {
        return JSON_U_CUT;
    }
    if (rl == 0 || lo < 0xdc00 || lo > 0xdfff) {
        return JSON_U_LONE;
    }
    *cp = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
    *len = 12;
    return JSON_U_CHAR;
}

// s[i] == '"'. Strings are checked as strict JSON parsers (nlohmann, jansson) read them: valid UTF-8, and
// surrogate escapes only in high-low pairs, so that what is taken as JSON here is JSON to every consumer.
static size_t scan_string(const char * s, size_t n, size_t i) {
    for (i++; i < n; i++) {
        const unsigned char c = (unsigned char) s[i];
        if (c == '"') {
            return i + 1;
        }
        if (c < 0x20) {
            return CHAT_JSON_INVALID;
        }
        if (c >= 0x80) {
            size_t bad;
            const size_t len = utf8_seq(s, n, i, &bad);
            if (len == SIZE_MAX) {
                return CHAT_JSON_INCOMPLETE;
            }
            if (len == 0) {
                return CHAT_JSON_INVALID;
            }
            i += len - 1;
            continue;
        }
        if (c == '\\') {
            if (i + 1 >= n) {
                return CHAT_JSON_INCOMPLETE;
            }
            const char e = s[i + 1];
            if (e == 'u') {
                uint32_t cp;
                size_t len;
                switch (json_u_escape(s, n, i, &cp, &len)) {
                    case JSON_U_CHAR: i += len - 1; break;
                    case JSON_U_CUT:  return CHAT_JSON_INCOMPLETE;
                    default:          return CHAT_JSON_INVALID;  // a bad escape or a lone surrogate
                }
            } else if (simple_escape(e) >= 0) {
                i++;
            } else {
                return CHAT_JSON_INVALID;
            }
        }
    }
    return CHAT_JSON_INCOMPLETE;
}

static size_t scan_number(const char * s, size_t n, size_t i) {
    if (s[i] == '-') {
        i++;
    }
    if (i >= n) {
        return CHAT_JSON_INCOMPLETE;
    }
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            i++;
        }
    } else {
        return CHAT_JSON_INVALID;
    }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n) {
            return CHAT_JSON_INCOMPLETE;
        }
        if (!(s[i] >= '0' && s[i] <= '9')) {
            return CHAT_JSON_INVALID;
        }
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            i++;
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) {
            i++;
        }
        if (i >= n) {
            return CHAT_JSON_INCOMPLETE;
        }
        if (!(s[i] >= '0' && s[i] <= '9')) {
            return CHAT_JSON_INVALID;
        }
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            i++;
        }
    }
    // a number that runs to the end of the text may still grow
    return i >= n ? CHAT_JSON_INCOMPLETE : i;
}

static size_t scan_value(const char * s, size_t n, size_t i, int depth);

static size_t skip_ws(const char * s, size_t n, size_t i) {
    while (i < n && chat_json_is_ws(s[i])) {
        i++;
    }
    return i;
}

// s[i] is '[' or '{'
static size_t scan_container(const char * s, size_t n, size_t i, int depth) {
    const bool obj = s[i] == '{';
    const char close = obj ? '}' : ']';
    i = skip_ws(s, n, i + 1);
    if (i >= n) {
        return CHAT_JSON_INCOMPLETE;
    }
    if (s[i] == close) {
        return i + 1;
    }
    for (;;) {
        if (obj) {
            if (s[i] != '"') {
                return CHAT_JSON_INVALID;
            }
            i = scan_string(s, n, i);
            if (i >= CHAT_JSON_INVALID) {
                return i;
            }
            i = skip_ws(s, n, i);
            if (i >= n) {
                return CHAT_JSON_INCOMPLETE;
            }
            if (s[i] != ':') {
                return CHAT_JSON_INVALID;
            }
            i++;
        }
        i = scan_value(s, n, i, depth + 1);
        if (i >= CHAT_JSON_INVALID) {
            return i;
        }
        i = skip_ws(s, n, i);
        if (i >= n) {
            return CHAT_JSON_INCOMPLETE;
        }
        if (s[i] == close) {
            return i + 1;
        }
        if (s[i] != ',') {
            return CHAT_JSON_INVALID;
        }
        i = skip_ws(s, n, i + 1);
        if (i >= n) {
            return CHAT_JSON_INCOMPLETE;
        }
    }
}

static size_t scan_value(const char * s, size_t n, size_t i, int depth) {
    if (depth > 256) {
        return CHAT_JSON_INVALID;
    }
    i = skip_ws(s, n, i);
    if (i >= n) {
        return CHAT_JSON_INCOMPLETE;
    }
    const char c = s[i];
    if (c == '{' || c == '[') {
        return scan_container(s, n, i, depth);
    }
    if (c == '"') {
        return scan_string(s, n, i);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        return scan_number(s, n, i);
    }
    static const char * const lits[] = { "true", "false", "null" };
    for (size_t k = 0; k < 3; k++) {
        const size_t l = strlen(lits[k]);
        if (c != lits[k][0]) {
            continue;
        }
        const size_t have = n - i < l ? n - i : l;
        if (memcmp(s + i, lits[k], have) != 0) {
            return CHAT_JSON_INVALID;
        }
        return have < l ? CHAT_JSON_INCOMPLETE : i + l;
    }
    return CHAT_JSON_INVALID;
}

size_t chat_json_scan(const char * s, size_t n, size_t i) {
    return scan_value(s, n, i, 0);
}

static void put_utf8(struct common_sb * out, unsigned cp) {
    char b[4];
    size_t k;
    if (cp < 0x80) {
        b[0] = (char) cp;
        k = 1;
    } else if (cp < 0x800) {
        b[0] = (char) (0xC0 | (cp >> 6));
        b[1] = (char) (0x80 | (cp & 0x3F));
        k = 2;
    } else if (cp < 0x10000) {
        b[0] = (char) (0xE0 | (cp >> 12));
        b[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char) (0x80 | (cp & 0x3F));
        k = 3;
    } else {
        b[0] = (char) (0xF0 | (cp >> 18));
        b[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char) (0x80 | (cp & 0x3F));
        k = 4;
    }
    common_sb_addn(out, b, k);
}

bool chat_json_decode_string(const char * s, size_t n, size_t i, struct common_sb * out) {
    size_t run = ++i;  // start of the current run of plain bytes
    while (i < n) {
        const char c = s[i];
        if (c == '"') {
            common_sb_addn(out, s + run, i - run);
            return true;
        }
        if (c != '\\') {
            i++;
            continue;
        }
        common_sb_addn(out, s + run, i - run);
        if (i + 1 >= n) {
            return false;
        }
        const char e = s[i + 1];
        if (e == 'u') {
            uint32_t cp;
            size_t used;
            const enum json_u k = json_u_escape(s, n, i, &cp, &used);
            if (k == JSON_U_CUT || k == JSON_U_BAD) {
                return false;
            }
            put_utf8(out, k == JSON_U_LONE ? 0xFFFD : cp);
            i += used;
        } else {
            const int ch = simple_escape(e);
            if (ch >= 0) {
                common_sb_addc(out, (char) ch);
            }
            i += 2;
        }
        run = i;
    }
    common_sb_addn(out, s + run, i - utf8_cut(s, run, i) - run);
    return false;
}

// one character as nlohmann's dump writes it inside a string: '"', '\\' and control characters escaped (\b \f \n \r
// \t, else \u00xx), everything else as UTF-8
static void put_string_char(struct common_sb * out, unsigned cp) {
    switch (cp) {
        case '"':  common_sb_add(out, "\\\""); return;
        case '\\': common_sb_add(out, "\\\\"); return;
        case '\b': common_sb_add(out, "\\b"); return;
        case '\f': common_sb_add(out, "\\f"); return;
        case '\n': common_sb_add(out, "\\n"); return;
        case '\r': common_sb_add(out, "\\r"); return;
        case '\t': common_sb_add(out, "\\t"); return;
        default: break;
    }
    if (cp < 0x20) {
        char b[8];
        snprintf(b, sizeof(b), "\\u%04x", cp);
        common_sb_add(out, b);
        return;
    }
    put_utf8(out, cp);
}

// Escapes are rewritten the way llama.cpp's arguments (nlohmann's dump) spell them, so "caf\u00e9 \/" becomes
// "café /"; a lone surrogate stays as written.
void chat_json_compact(const char * s, size_t from, size_t to, bool partial, struct common_sb * out) {
    bool in_str = false;
    size_t run = from;
    size_t i = from;
    while (i < to) {
        const char c = s[i];
        if (!in_str) {
            if (c == '"') {
                in_str = true;
            } else if (chat_json_is_ws(c)) {
                common_sb_addn(out, s + run, i - run);
                run = i + 1;
            }
            i++;
            continue;
        }
        if (c == '"') {
            in_str = false;
            i++;
            continue;
        }
        if (c != '\\') {
            i++;
            continue;
        }
        common_sb_addn(out, s + run, i - run);
        // an escape cut off by the end of a partial text waits for the rest
        const size_t need = (i + 1 < to && s[i + 1] == 'u') ? 6 : 2;
        if (i + need > to) {
            if (partial) {
                return;
            }
            run = i;
            break;
        }
        size_t used = need;
        long cp = -1;
        if (need == 6) {
            uint32_t u;
            const enum json_u k = json_u_escape(s, to, i, &u, &used);
            if (k == JSON_U_CUT) {
                // a high surrogate whose low half may follow
                if (partial) {
                    return;
                }
                run = i;
                break;
            }
            if (k == JSON_U_CHAR) {
                cp = (long) u;
            } else {
                used = 6;  // a bad escape or a lone surrogate: its own six bytes, as written
            }
        } else {
            cp = simple_escape(s[i + 1]);
        }
        if (cp < 0) {
            common_sb_addn(out, s + i, used);  // not something nlohmann would read: kept as written
        } else {
            put_string_char(out, (unsigned) cp);
        }
        i += used;
        run = i;
    }
    common_sb_addn(out, s + run, to - (partial ? utf8_cut(s, run, to) : 0) - run);
}

void chat_json_escape_bytes(const char * s, size_t n, bool partial, struct common_sb * out) {
    size_t i = 0;
    size_t run = 0;  // start of the current run of bytes written as they are
    while (i < n) {
        const unsigned char c = (unsigned char) s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        common_sb_addn(out, s + run, i - run);
        if (c < 0x80) {
            put_string_char(out, c);
            i++;
        } else {
            size_t bad;
            const size_t len = utf8_seq(s, n, i, &bad);
            if (len == SIZE_MAX) {
                // the end cuts the sequence: a partial text waits for the rest, in a complete one it is ill-formed
                if (!partial) {
                    put_utf8(out, 0xFFFD);
                }
                return;
            }
            if (len == 0) {
                put_utf8(out, 0xFFFD);
                i += bad;
            } else {
                common_sb_addn(out, s + i, len);
                i += len;
            }
        }
        run = i;
    }
    common_sb_addn(out, s + run, i - run);
}
