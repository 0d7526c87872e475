// Unicode helpers and the pre-tokenizer splitter (see llama-unicode.h for the rules this file keeps).

#define PCRE2_CODE_UNIT_WIDTH 8

#include "llama-unicode.h"

#include "ggml-impl.h"

#include <pcre2.h>
#include <utf8proc.h>

#include <stdlib.h>
#include <string.h>

// ---- UTF-8 ----------------------------------------------------------------------------------------------

size_t llama_unicode_len_utf8(char c) {
    static const uint8_t lookup[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
    return lookup[((uint8_t) c) >> 4];
}

static inline bool is_cont(uint8_t b) {
    return (b & 0xC0) == 0x80;
}

bool llama_unicode_cpt_from_utf8(const char * s, size_t len, size_t * offset, uint32_t * cpt) {
    const uint8_t * u = (const uint8_t *) s;
    const size_t    o = *offset;
    const uint8_t   b = u[o];
    if (!(b & 0x80)) {
        *cpt = b;
        *offset = o + 1;
        return true;
    }
    if (!(b & 0x40)) {
        return false; // lone continuation byte
    }
    if (!(b & 0x20)) {
        if (o + 1 >= len || !is_cont(u[o + 1])) {
            return false;
        }
        *cpt = ((uint32_t) (b & 0x1F) << 6) | (u[o + 1] & 0x3F);
        *offset = o + 2;
        return true;
    }
    if (!(b & 0x10)) {
        if (o + 2 >= len || !is_cont(u[o + 1]) || !is_cont(u[o + 2])) {
            return false;
        }
        *cpt = ((uint32_t) (b & 0x0F) << 12) | ((uint32_t) (u[o + 1] & 0x3F) << 6) | (u[o + 2] & 0x3F);
        *offset = o + 3;
        return true;
    }
    if (!(b & 0x08)) {
        if (o + 3 >= len || !is_cont(u[o + 1]) || !is_cont(u[o + 2]) || !is_cont(u[o + 3])) {
            return false;
        }
        *cpt = ((uint32_t) (b & 0x07) << 18) | ((uint32_t) (u[o + 1] & 0x3F) << 12) |
               ((uint32_t) (u[o + 2] & 0x3F) << 6) | (u[o + 3] & 0x3F);
        *offset = o + 4;
        return true;
    }
    return false;
}

size_t llama_unicode_cpts_from_utf8(const char * s, size_t len, uint32_t * out) {
    size_t n   = 0;
    size_t off = 0;
    while (off < len) {
        uint32_t cpt;
        if (llama_unicode_cpt_from_utf8(s, len, &off, &cpt)) {
            out[n++] = cpt;
        } else {
            off++;
            out[n++] = 0xFFFD;
        }
    }
    return n;
}

int llama_unicode_cpt_to_utf8(uint32_t cpt, char * out) {
    if (cpt <= 0x7F) {
        out[0] = (char) cpt;
        return 1;
    }
    if (cpt <= 0x7FF) {
        out[0] = (char) (0xC0 | ((cpt >> 6) & 0x1F));
        out[1] = (char) (0x80 | (cpt & 0x3F));
        return 2;
    }
    if (cpt <= 0xFFFF) {
        out[0] = (char) (0xE0 | ((cpt >> 12) & 0x0F));
        out[1] = (char) (0x80 | ((cpt >> 6) & 0x3F));
        out[2] = (char) (0x80 | (cpt & 0x3F));
        return 3;
    }
    if (cpt <= 0x10FFFF) {
        out[0] = (char) (0xF0 | ((cpt >> 18) & 0x07));
        out[1] = (char) (0x80 | ((cpt >> 12) & 0x3F));
        out[2] = (char) (0x80 | ((cpt >> 6) & 0x3F));
        out[3] = (char) (0x80 | (cpt & 0x3F));
        return 4;
    }
    return 0;
}

// ---- categories -----------------------------------------------------------------------------------------

static bool is_whitespace_cpt(uint32_t c) {
    // Unicode White_Space, the set llama.cpp's tables mark
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

uint16_t llama_unicode_cpt_flags(uint32_t cpt) {
    if (cpt > 0x10FFFF) {
        return LLAMA_CPT_UNDEFINED;
    }
    uint16_t f;
    switch (utf8proc_category((utf8proc_int32_t) cpt)) {
        case UTF8PROC_CATEGORY_LU:
        case UTF8PROC_CATEGORY_LL:
        case UTF8PROC_CATEGORY_LT:
        case UTF8PROC_CATEGORY_LM:
        case UTF8PROC_CATEGORY_LO: f = LLAMA_CPT_LETTER; break;
        case UTF8PROC_CATEGORY_MN:
        case UTF8PROC_CATEGORY_MC:
        case UTF8PROC_CATEGORY_ME: f = LLAMA_CPT_ACCENT_MARK; break;
        case UTF8PROC_CATEGORY_ND:
        case UTF8PROC_CATEGORY_NL:
        case UTF8PROC_CATEGORY_NO: f = LLAMA_CPT_NUMBER; break;
        case UTF8PROC_CATEGORY_PC:
        case UTF8PROC_CATEGORY_PD:
        case UTF8PROC_CATEGORY_PS:
        case UTF8PROC_CATEGORY_PE:
        case UTF8PROC_CATEGORY_PI:
        case UTF8PROC_CATEGORY_PF:
        case UTF8PROC_CATEGORY_PO: f = LLAMA_CPT_PUNCTUATION; break;
        case UTF8PROC_CATEGORY_SM:
        case UTF8PROC_CATEGORY_SC:
        case UTF8PROC_CATEGORY_SK:
        case UTF8PROC_CATEGORY_SO: f = LLAMA_CPT_SYMBOL; break;
        case UTF8PROC_CATEGORY_ZS:
        case UTF8PROC_CATEGORY_ZL:
        case UTF8PROC_CATEGORY_ZP: f = LLAMA_CPT_SEPARATOR; break;
        case UTF8PROC_CATEGORY_CC:
        case UTF8PROC_CATEGORY_CF:
        case UTF8PROC_CATEGORY_CS:
        case UTF8PROC_CATEGORY_CO: f = LLAMA_CPT_CONTROL; break;
        default: f = LLAMA_CPT_UNDEFINED; break;
    }
    if (is_whitespace_cpt(cpt)) {
        f |= LLAMA_CPT_WHITESPACE;
    }
    return f;
}

uint32_t llama_unicode_tolower(uint32_t cpt) {
    if (cpt > 0x10FFFF) {
        return cpt;
    }
    return (uint32_t) utf8proc_tolower((utf8proc_int32_t) cpt);
}

uint32_t llama_unicode_nfd_first(uint32_t cpt) {
    if (cpt < 0xC0 || cpt > 0x10FFFF) {
        return cpt;
    }
    utf8proc_int32_t buf[8];
    int last_boundclass = 0;
    const utf8proc_ssize_t n = utf8proc_decompose_char((utf8proc_int32_t) cpt, buf, 8, UTF8PROC_DECOMPOSE,
                                                       &last_boundclass);
    return n >= 1 && n <= 8 ? (uint32_t) buf[0] : cpt;
}

// ---- GPT-2 byte mapping ---------------------------------------------------------------------------------

static bool byte_is_printable(uint32_t b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

uint32_t llama_unicode_byte_to_cpt(uint8_t byte) {
    if (byte_is_printable(byte)) {
        return byte;
    }
    // the non-printable bytes take 256, 257, ... in byte order
    uint32_t n = 0;
    for (uint32_t b = 0; b < byte; ++b) {
        n += !byte_is_printable(b);
    }
    return 256 + n;
}

int llama_unicode_cpt_to_byte(uint32_t cpt) {
    if (cpt < 256) {
        return byte_is_printable(cpt) ? (int) cpt : -1;
    }
    uint32_t k = cpt - 256;
    for (uint32_t b = 0; b < 256; ++b) {
        if (!byte_is_printable(b)) {
            if (k == 0) {
                return (int) b;
            }
            k--;
        }
    }
    return -1;
}

// ---- offsets --------------------------------------------------------------------------------------------

void llama_unicode_offsets_free(struct llama_unicode_offsets * o) {
    free(o->data);
    o->data = NULL;
    o->n = o->cap = 0;
}

static bool offsets_push(struct llama_unicode_offsets * o, size_t v) {
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        size_t * d = (size_t *) realloc(o->data, cap * sizeof(size_t));
        if (!d) {
            return false;
        }
        o->data = d;
        o->cap  = cap;
    }
    o->data[o->n++] = v;
    return true;
}

// ---- hand-written splitters -----------------------------------------------------------------------------

#define OUT_OF_RANGE 0xFFFFFFFFu

struct frag_ctx {
    const uint32_t * cpts;
    size_t ini;
    size_t end;
    size_t prev_end;
    struct llama_unicode_offsets * out;
    bool ok;
};

static inline uint32_t fc_cpt(const struct frag_ctx * f, size_t pos) {
    return (pos >= f->ini && pos < f->end) ? f->cpts[pos] : OUT_OF_RANGE;
}

static inline uint16_t fc_flags(const struct frag_ctx * f, size_t pos) {
    return (pos >= f->ini && pos < f->end) ? llama_unicode_cpt_flags(f->cpts[pos]) : 0;
}

// The last alternatives of the GPT-2-style patterns, for a run of n_ws whitespace characters at pos: `\s+(?!\S)`
// leaves the last of several to the word that follows, `\s+` takes them all, and anything else is one character.
// Returns where the piece ends.
static inline size_t fc_ws_run_end(const struct frag_ctx * f, size_t pos, size_t n_ws) {
    if (n_ws > 1 && fc_cpt(f, pos + n_ws) != OUT_OF_RANGE) {
        return pos + n_ws - 1;
    }
    if (n_ws > 0) {
        return pos + n_ws;
    }
    return pos + 1;
}

static inline size_t fc_add(struct frag_ctx * f, size_t end) {
    const size_t len = end - f->prev_end;
    if (len > 0 && !offsets_push(f->out, len)) {
        f->ok = false;
    }
    f->prev_end = end;
    return len;
}

#define WLN (LLAMA_CPT_WHITESPACE | LLAMA_CPT_LETTER | LLAMA_CPT_NUMBER)

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
static void split_gpt2_frag(struct frag_ctx * f) {
    size_t pos = f->ini;
    while (pos < f->end && f->ok) {
        const uint32_t cpt   = f->cpts[pos];
        const uint16_t flags = fc_flags(f, pos);

        if (cpt == '\'' && pos + 1 < f->end) {
            const uint32_t n1 = fc_cpt(f, pos + 1);
            if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') {
                pos += fc_add(f, pos + 2);
                continue;
            }
            if (pos + 2 < f->end) {
                const uint32_t n2 = fc_cpt(f, pos + 2);
                if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) {
                    pos += fc_add(f, pos + 3);
                    continue;
                }
            }
        }

        uint16_t f2 = cpt == ' ' ? fc_flags(f, pos + 1) : flags;
        if (f2 & LLAMA_CPT_LETTER) {
            pos += (cpt == ' ');
            while (f2 & LLAMA_CPT_LETTER) {
                f2 = fc_flags(f, ++pos);
            }
            fc_add(f, pos);
            continue;
        }
        if (f2 & LLAMA_CPT_NUMBER) {
            pos += (cpt == ' ');
            while (f2 & LLAMA_CPT_NUMBER) {
                f2 = fc_flags(f, ++pos);
            }
            fc_add(f, pos);
            continue;
        }
        if (!(f2 & WLN) && f2) {
            pos += (cpt == ' ');
            while (!(f2 & WLN) && f2) {
                f2 = fc_flags(f, ++pos);
            }
            fc_add(f, pos);
            continue;
        }

        size_t n_ws = 0;
        while (fc_flags(f, pos + n_ws) & LLAMA_CPT_WHITESPACE) {
            n_ws++;
        }
        pos = fc_ws_run_end(f, pos, n_ws);
        fc_add(f, pos);
    }
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
static void split_llama3_frag(struct frag_ctx * f) {
    size_t pos = f->ini;
    while (pos < f->end && f->ok) {
        const uint32_t cpt   = f->cpts[pos];
        const uint16_t flags = fc_flags(f, pos);

        if (cpt == '\'' && pos + 1 < f->end) {
            const uint32_t n1 = llama_unicode_tolower(fc_cpt(f, pos + 1));
            if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') {
                pos += fc_add(f, pos + 2);
                continue;
            }
            if (pos + 2 < f->end) {
                const uint32_t n2 = llama_unicode_tolower(fc_cpt(f, pos + 2));
                if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) {
                    pos += fc_add(f, pos + 3);
                    continue;
                }
            }
        }

        if (!(cpt == '\r' || cpt == '\n' || (flags & LLAMA_CPT_NUMBER))) {
            if ((flags & LLAMA_CPT_LETTER) || (fc_flags(f, pos + 1) & LLAMA_CPT_LETTER)) {
                pos++;
                while (fc_flags(f, pos) & LLAMA_CPT_LETTER) {
                    pos++;
                }
                fc_add(f, pos);
                continue;
            }
        }

        if (flags & LLAMA_CPT_NUMBER) {
            size_t ini = pos;
            while (fc_flags(f, pos) & LLAMA_CPT_NUMBER) {
                if (++pos - ini >= 3) {
                    fc_add(f, pos);
                    ini = pos;
                }
            }
            fc_add(f, pos);
            continue;
        }

        uint16_t f2 = cpt == ' ' ? fc_flags(f, pos + 1) : flags;
        // llama.cpp tests the current codepoint's flags here (not f2): a trailing lone space takes this branch
        if (!(f2 & WLN) && flags) {
            pos += (cpt == ' ');
            while (!(f2 & WLN) && f2) {
                f2 = fc_flags(f, ++pos);
            }
            uint32_t c2 = fc_cpt(f, pos);
            while (c2 == '\r' || c2 == '\n') {
                c2 = fc_cpt(f, ++pos);
            }
            fc_add(f, pos);
            continue;
        }

        size_t n_ws = 0;
        size_t last_rn = 0;
        while (fc_flags(f, pos + n_ws) & LLAMA_CPT_WHITESPACE) {
            const uint32_t c2 = fc_cpt(f, pos + n_ws);
            if (c2 == '\r' || c2 == '\n') {
                last_rn = pos + n_ws + 1;
            }
            n_ws++;
        }
        if (last_rn > 0) {
            pos = last_rn;
            fc_add(f, pos);
            continue;
        }
        pos = fc_ws_run_end(f, pos, n_ws);
        fc_add(f, pos);
    }
}

typedef void (*frag_fn)(struct frag_ctx * f);

static bool split_custom(frag_fn fn, const uint32_t * cpts, const struct llama_unicode_offsets * in,
                         struct llama_unicode_offsets * out) {
    size_t start = 0;
    for (size_t i = 0; i < in->n; ++i) {
        struct frag_ctx f = { cpts, start, start + in->data[i], start, out, true };
        fn(&f);
        if (!f.ok) {
            return false;
        }
        start += in->data[i];
    }
    return true;
}

bool llama_unicode_split_gpt2(const uint32_t * cpts, size_t n_cpts, struct llama_unicode_offsets * out) {
    struct llama_unicode_offsets in = { NULL, 0, 0 };
    bool ok = offsets_push(&in, n_cpts) && split_custom(split_gpt2_frag, cpts, &in, out);
    llama_unicode_offsets_free(&in);
    return ok;
}

bool llama_unicode_split_llama3(const uint32_t * cpts, size_t n_cpts, struct llama_unicode_offsets * out) {
    struct llama_unicode_offsets in = { NULL, 0, 0 };
    bool ok = offsets_push(&in, n_cpts) && split_custom(split_llama3_frag, cpts, &in, out);
    llama_unicode_offsets_free(&in);
    return ok;
}

// ---- PCRE2 splitters ------------------------------------------------------------------------------------

enum split_kind {
    SPLIT_GPT2,
    SPLIT_LLAMA3,
    SPLIT_COLLAPSED, // byte-mode PCRE2 on the category-collapsed text
    SPLIT_UTF,       // UTF-mode PCRE2 (no UCP) on the text
};

struct split_entry {
    enum split_kind kind;
    pcre2_code *    code;
};

struct llama_unicode_splitter {
    struct split_entry * e;
    int n;
    bool any_collapsed;
    bool any_utf;
};

static const char * const k_gpt2_regex =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
static const char * const k_llama3_regex_a =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char * const k_llama3_regex_b =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

struct ucat {
    const char * name;
    uint16_t     flag;
};

static const struct ucat k_ucats[] = {
    { "\\p{N}",  LLAMA_CPT_NUMBER },
    { "\\p{L}",  LLAMA_CPT_LETTER },
    { "\\p{P}",  LLAMA_CPT_PUNCTUATION },
    { "\\p{M}",  LLAMA_CPT_ACCENT_MARK },
    { "\\p{S}",  LLAMA_CPT_SYMBOL },
    { "\\p{Lu}", LLAMA_CPT_LETTER },
    { "\\p{Ll}", LLAMA_CPT_LETTER },
    { "\\p{Lt}", LLAMA_CPT_LETTER },
    { "\\p{Lm}", LLAMA_CPT_LETTER },
    { "\\p{Lo}", LLAMA_CPT_LETTER },
};

// the byte that stands for a category in the collapsed text, and the ASCII members of the category
static char ucat_byte(uint16_t flag) {
    switch (flag) {
        case LLAMA_CPT_NUMBER:      return (char) 0xD1;
        case LLAMA_CPT_LETTER:      return (char) 0xD2;
        case LLAMA_CPT_PUNCTUATION: return (char) 0xD3;
        case LLAMA_CPT_ACCENT_MARK: return (char) 0xD4;
        case LLAMA_CPT_SYMBOL:      return (char) 0xD5;
        default:                    return (char) 0xD0;
    }
}

static const char * ucat_ascii(uint16_t flag) {
    switch (flag) {
        case LLAMA_CPT_NUMBER:      return "0-9";
        case LLAMA_CPT_LETTER:      return "A-Za-z";
        case LLAMA_CPT_PUNCTUATION: return "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}";
        case LLAMA_CPT_SYMBOL:      return "\\$\\+<->^`\\|";
        default:                    return "";
    }
}

static bool regex_uses_ucat(const char * expr) {
    for (size_t i = 0; i < sizeof(k_ucats) / sizeof(k_ucats[0]); ++i) {
        if (strstr(expr, k_ucats[i].name)) {
            return true;
        }
    }
    return false;
}

// appends to a growable char buffer; false on allocation failure
struct cbuf {
    char * d;
    size_t n;
    size_t cap;
};

static bool cbuf_add(struct cbuf * b, const char * s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) {
            cap *= 2;
        }
        char * d = (char *) realloc(b->d, cap);
        if (!d) {
            return false;
        }
        b->d = d;
        b->cap = cap;
    }
    memcpy(b->d + b->n, s, n);
    b->n += n;
    b->d[b->n] = '\0';
    return true;
}

// rewrites the \p{..} classes of a pattern into the collapsed-byte classes (the rules of llama.cpp's
// unicode_regex_split, so that the same pattern splits the same way)
static char * collapse_regex(const char * expr) {
    struct cbuf b = { NULL, 0, 0 };
    const size_t len = strlen(expr);
    bool inside = false;
    bool ok = cbuf_add(&b, "", 0);
    for (size_t i = 0; i < len && ok; ++i) {
        if (expr[i] == '[' && (i == 0 || expr[i - 1] != '\\')) {
            ok = cbuf_add(&b, "[", 1);
            inside = true;
            continue;
        }
        if (inside && expr[i] == ']' && expr[i - 1] != '\\') {
            ok = cbuf_add(&b, "]", 1);
            inside = false;
            continue;
        }
        if (expr[i] == '\\' && i + 3 < len && expr[i + 1] == 'p' && expr[i + 2] == '{') {
            const char * close = strchr(expr + i + 3, '}');
            if (close && (size_t) (close - expr) <= i + 10) {
                const size_t plen = (size_t) (close - expr) - i + 1;
                bool matched = false;
                for (size_t k = 0; k < sizeof(k_ucats) / sizeof(k_ucats[0]); ++k) {
                    if (strlen(k_ucats[k].name) == plen && memcmp(k_ucats[k].name, expr + i, plen) == 0) {
                        const char cb = ucat_byte(k_ucats[k].flag);
                        const char * asc = ucat_ascii(k_ucats[k].flag);
                        if (!inside) {
                            ok = ok && cbuf_add(&b, "[", 1);
                        }
                        ok = ok && cbuf_add(&b, &cb, 1) && cbuf_add(&b, asc, strlen(asc));
                        if (!inside) {
                            ok = ok && cbuf_add(&b, "]", 1);
                        }
                        matched = true;
                        break;
                    }
                }
                if (matched) {
                    i += plen - 1;
                    continue;
                }
            }
        }
        ok = cbuf_add(&b, expr + i, 1);
    }
    if (!ok) {
        free(b.d);
        return NULL;
    }
    return b.d;
}

static pcre2_code * compile_pattern(const char * pattern, size_t len, uint32_t options, const char * orig) {
    int err = 0;
    PCRE2_SIZE erroff = 0;
    pcre2_code * code = pcre2_compile((PCRE2_SPTR) pattern, len, options, &err, &erroff, NULL);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof(msg));
        GGML_LOG_ERROR("%s: pre-tokenizer regex '%s' does not compile at offset %zu: %s\n", __func__, orig,
                       (size_t) erroff, (const char *) msg);
        return NULL;
    }
    // JIT is an optimization only: the interpreter runs the same pattern when JIT is unavailable
    (void) pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    return code;
}

void llama_unicode_splitter_free(struct llama_unicode_splitter * sp) {
    if (!sp) {
        return;
    }
    for (int i = 0; i < sp->n; ++i) {
        pcre2_code_free(sp->e[i].code);
    }
    free(sp->e);
    free(sp);
}

struct llama_unicode_splitter * llama_unicode_splitter_init(const char * const * exprs, int n_exprs) {
    struct llama_unicode_splitter * sp = (struct llama_unicode_splitter *) calloc(1, sizeof(*sp));
    if (!sp) {
        return NULL;
    }
    sp->e = (struct split_entry *) calloc(n_exprs > 0 ? (size_t) n_exprs : 1, sizeof(struct split_entry));
    if (!sp->e) {
        free(sp);
        return NULL;
    }
    for (int i = 0; i < n_exprs; ++i) {
        const char * ex = exprs[i];
        struct split_entry * e = &sp->e[sp->n];
        if (strcmp(ex, k_gpt2_regex) == 0) {
            e->kind = SPLIT_GPT2;
        } else if (strcmp(ex, k_llama3_regex_a) == 0 || strcmp(ex, k_llama3_regex_b) == 0) {
            e->kind = SPLIT_LLAMA3;
        } else if (regex_uses_ucat(ex)) {
            // category classes only work on the collapsed text, which has no room for other non-ASCII
            for (const unsigned char * p = (const unsigned char *) ex; *p; ++p) {
                if (*p >= 0x80) {
                    GGML_LOG_ERROR("%s: regex '%s' mixes unicode categories and non-ASCII characters\n",
                                   __func__, ex);
                    llama_unicode_splitter_free(sp);
                    return NULL;
                }
            }
            char * collapsed = collapse_regex(ex);
            if (!collapsed) {
                llama_unicode_splitter_free(sp);
                return NULL;
            }
            e->kind = SPLIT_COLLAPSED;
            e->code = compile_pattern(collapsed, strlen(collapsed), PCRE2_DOLLAR_ENDONLY, ex);
            free(collapsed);
            sp->any_collapsed = true;
        } else {
            e->kind = SPLIT_UTF;
            e->code = compile_pattern(ex, strlen(ex), PCRE2_UTF | PCRE2_DOLLAR_ENDONLY, ex);
            sp->any_utf = true;
        }
        if ((e->kind == SPLIT_COLLAPSED || e->kind == SPLIT_UTF) && !e->code) {
            llama_unicode_splitter_free(sp);
            return NULL;
        }
        sp->n++;
    }
    return sp;
}

struct pcre_run {
    pcre2_match_data *    md;
    pcre2_match_context * mctx;
    pcre2_jit_stack *     jit;
};

// runs a pattern over one fragment [s, s+len) with std::regex_iterator's iteration rules (after an empty
// match: retry non-empty anchored at the same place, else move on by one character); pos_to_cpt maps a byte
// offset of the fragment to a codepoint count (NULL: bytes are codepoints)
static bool split_pcre_frag(const pcre2_code * code, struct pcre_run * r, const char * s, size_t len, bool utf,
                            const size_t * pos_to_cpt, size_t cpt_base, size_t frag_cpts,
                            struct llama_unicode_offsets * out) {
    size_t start_cpt = 0;
    size_t off = 0;
    const uint32_t base_opts = utf ? PCRE2_NO_UTF_CHECK : 0;
#define B2C(x) (pos_to_cpt ? pos_to_cpt[(x)] - cpt_base : (x))
    for (;;) {
        int rc = pcre2_match(code, (PCRE2_SPTR) s, len, off, base_opts, r->md, r->mctx);
        if (rc == PCRE2_ERROR_NOMATCH) {
            break;
        }
        if (rc < 0) {
            GGML_LOG_ERROR("%s: regex match failed (error %d); the rest of the fragment stays one piece\n",
                           __func__, rc);
            break;
        }
        const PCRE2_SIZE * ov = pcre2_get_ovector_pointer(r->md);
        size_t ms = ov[0];
        size_t me = ov[1];
        if (me < ms) { // \K in a lookahead can do this; not in our patterns
            break;
        }
        size_t cs = B2C(ms), ce = B2C(me);
        if (cs > start_cpt && !offsets_push(out, cs - start_cpt)) {
            return false;
        }
        if (!offsets_push(out, ce - cs)) {
            return false;
        }
        start_cpt = ce;
        if (me > ms) {
            off = me;
            continue;
        }
        if (me >= len) {
            break;
        }
        rc = pcre2_match(code, (PCRE2_SPTR) s, len, me, base_opts | PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED,
                         r->md, r->mctx);
        if (rc >= 0) {
            ov = pcre2_get_ovector_pointer(r->md);
            ms = ov[0];
            me = ov[1];
            cs = B2C(ms);
            ce = B2C(me);
            if (cs > start_cpt && !offsets_push(out, cs - start_cpt)) {
                return false;
            }
            if (!offsets_push(out, ce - cs)) {
                return false;
            }
            start_cpt = ce;
            off = me;
            continue;
        }
        off = me + (utf ? llama_unicode_len_utf8(s[me]) : 1);
        if (off > len) {
            break;
        }
    }
#undef B2C
    if (start_cpt < frag_cpts && !offsets_push(out, frag_cpts - start_cpt)) {
        return false;
    }
    return true;
}

bool llama_unicode_split(const struct llama_unicode_splitter * sp, const uint32_t * cpts, size_t n_cpts,
                         struct llama_unicode_offsets * out) {
    struct llama_unicode_offsets cur = { NULL, 0, 0 };
    struct llama_unicode_offsets nxt = { NULL, 0, 0 };
    char *   collapsed = NULL;
    char *   utf8      = NULL;
    size_t * cpt_byte  = NULL; // codepoint index -> byte offset in utf8
    size_t * byte_cpt  = NULL; // byte offset in utf8 -> codepoint index
    struct pcre_run run = { NULL, NULL, NULL };
    bool ok = offsets_push(&cur, n_cpts);

    if (ok && sp->any_collapsed) {
        collapsed = (char *) malloc(n_cpts + 1);
        ok = collapsed != NULL;
        for (size_t i = 0; ok && i < n_cpts; ++i) {
            const uint32_t c = cpts[i];
            if (c < 128) {
                collapsed[i] = (char) c;
                continue;
            }
            const uint16_t fl = llama_unicode_cpt_flags(c);
            collapsed[i] = (fl & LLAMA_CPT_WHITESPACE) ? (char) 0x0B : ucat_byte(fl & LLAMA_CPT_MASK_CATEGORIES);
        }
    }
    if (ok && sp->any_utf) {
        utf8     = (char *) malloc(4 * n_cpts + 1);
        cpt_byte = (size_t *) malloc((n_cpts + 1) * sizeof(size_t));
        byte_cpt = (size_t *) malloc((4 * n_cpts + 1) * sizeof(size_t));
        ok = utf8 && cpt_byte && byte_cpt;
        size_t nb = 0;
        for (size_t i = 0; ok && i < n_cpts; ++i) {
            uint32_t c = cpts[i];
            if (c > 0x7F && (llama_unicode_cpt_flags(c) & LLAMA_CPT_WHITESPACE)) {
                c = 0x0B; // std::wregex's \s does not know non-ASCII whitespace; llama.cpp maps it to VT
            }
            if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) {
                c = 0xFFFD; // not encodable for PCRE2; lies outside every range the patterns name
            }
            cpt_byte[i] = nb;
            const int k = llama_unicode_cpt_to_utf8(c, utf8 + nb);
            for (int j = 0; j < k; ++j) {
                byte_cpt[nb + (size_t) j] = i;
            }
            nb += (size_t) k;
        }
        if (ok) {
            cpt_byte[n_cpts] = nb;
            byte_cpt[nb]     = n_cpts;
        }
    }
    if (ok && (sp->any_collapsed || sp->any_utf)) {
        run.md   = pcre2_match_data_create(1, NULL);
        run.mctx = pcre2_match_context_create(NULL);
        run.jit  = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, NULL);
        ok = run.md && run.mctx;
        if (ok && run.jit) {
            pcre2_jit_stack_assign(run.mctx, NULL, run.jit);
        }
    }

    for (int k = 0; ok && k < sp->n; ++k) {
        const struct split_entry * e = &sp->e[k];
        nxt.n = 0;
        switch (e->kind) {
            case SPLIT_GPT2:   ok = split_custom(split_gpt2_frag,   cpts, &cur, &nxt); break;
            case SPLIT_LLAMA3: ok = split_custom(split_llama3_frag, cpts, &cur, &nxt); break;
            case SPLIT_COLLAPSED:
            case SPLIT_UTF: {
                size_t start = 0;
                for (size_t i = 0; ok && i < cur.n; ++i) {
                    const size_t flen = cur.data[i];
                    if (e->kind == SPLIT_COLLAPSED) {
                        ok = split_pcre_frag(e->code, &run, collapsed + start, flen, false, NULL, 0, flen, &nxt);
                    } else {
                        const size_t b0 = cpt_byte[start];
                        const size_t b1 = cpt_byte[start + flen];
                        ok = split_pcre_frag(e->code, &run, utf8 + b0, b1 - b0, true, byte_cpt + b0, start, flen,
                                             &nxt);
                    }
                    start += flen;
                }
            } break;
        }
        struct llama_unicode_offsets t = cur;
        cur = nxt;
        nxt = t;
    }

    if (run.md)   pcre2_match_data_free(run.md);
    if (run.mctx) pcre2_match_context_free(run.mctx);
    if (run.jit)  pcre2_jit_stack_free(run.jit);
    free(collapsed);
    free(utf8);
    free(cpt_byte);
    free(byte_cpt);
    llama_unicode_offsets_free(&nxt);
    if (!ok) {
        llama_unicode_offsets_free(&cur);
        return false;
    }
    llama_unicode_offsets_free(out);
    *out = cur;
    return true;
}
