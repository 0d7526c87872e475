// Internals of the Jinja interpreter shared by its files: the arena every parse/render allocates from (freed as a
// whole, so an error can unwind with longjmp without leaking), values, tokens, the AST and the render state.
#pragma once

#include "jinja.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JINJA_MAX_OUTPUT   (32u << 20)   // bytes of rendered text
#define JINJA_MAX_ARENA    (256u << 20)  // bytes allocated by one parse or render
#define JINJA_MAX_DEPTH    256           // parser nesting and macro/filter call depth
#define JINJA_MAX_STEPS    20000000LL    // loop iterations + node evaluations of one render

// ---- error unwinding + arena -------------------------------------------------------------------------------

struct jarena_chunk;

struct jenv {
    jmp_buf              jmp;
    char                 msg[512];
    const char *         src;   // source for line/column of errors (NULL: none)
    size_t               src_len;
    struct jarena_chunk * chunks;
    size_t               used;  // bytes allocated so far
    size_t               cur_off, cur_cap;
};

// formats "line L, column C: ..." (pos = byte offset in env->src, SIZE_MAX = no position) and longjmps
_Noreturn void jerr(struct jenv * env, size_t pos, const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void * jalloc(struct jenv * env, size_t n);                 // zeroed
char * jstrndup(struct jenv * env, const char * s, size_t n); // NUL-terminated copy
void   jarena_free(struct jenv * env);

// ---- values ----------------------------------------------------------------------------------------------

enum jv_type { JV_UNDEF, JV_NONE, JV_BOOL, JV_INT, JV_FLOAT, JV_STR, JV_LIST, JV_DICT, JV_FUNC };

struct jlist;
struct jdict;
struct jfunc;

typedef struct jv {
    enum jv_type t;
    union {
        bool    b;
        int64_t i;
        double  f;
        struct { const char * s; size_t n; } str;
        struct jlist * list;
        struct jdict * dict;
        struct jfunc * fn;
    } u;
} jv;

struct jlist {
    jv *   items;
    size_t n, cap;
};

struct jdict {
    jv *   keys; // strings (template dict literals may use other scalars)
    jv *   vals;
    size_t n, cap;
};

struct jctx;
struct jargs;
typedef jv (*jbuiltin_fn)(struct jctx * c, jv self, struct jargs * a, size_t pos);

struct jnode;
struct jfunc {
    const char *         name;
    jbuiltin_fn          fn;    // builtin (or NULL for a macro)
    jv                   self;  // bound receiver for methods
    const struct jnode * macro; // macro definition, or a {% call %} block (the `caller` of a macro)
    struct jscope *      closure; // scope the macro body sees as its parent
};

static inline jv jv_undef(void) { jv v; v.t = JV_UNDEF; v.u.i = 0; return v; }
static inline jv jv_none(void) { jv v; v.t = JV_NONE; v.u.i = 0; return v; }
static inline jv jv_bool(bool b) { jv v; v.t = JV_BOOL; v.u.b = b; return v; }
static inline jv jv_int(int64_t i) { jv v; v.t = JV_INT; v.u.i = i; return v; }
static inline jv jv_float(double f) { jv v; v.t = JV_FLOAT; v.u.f = f; return v; }
static inline jv jv_strn(const char * s, size_t n) { jv v; v.t = JV_STR; v.u.str.s = s; v.u.str.n = n; return v; }

jv   jv_str(struct jenv * e, const char * s);      // copies
jv   jv_list_new(struct jenv * e);
jv   jv_dict_new(struct jenv * e);
void jv_list_push(struct jenv * e, jv list, jv item);
void jv_dict_set(struct jenv * e, jv dict, jv key, jv val);
jv * jv_dict_get(jv dict, const char * key, size_t n); // NULL when missing
jv * jv_dict_getv(jv dict, jv key);

bool         jv_truthy(jv v);
bool         jv_equal(jv a, jv b);
int          jv_str_cmp(jv a, jv b); // two strings by bytes, shorter prefix first: -1, 0 or 1
const char * jv_type_name(jv v);
jv           jv_from_json(struct jenv * e, const json_t * j);

// code points of UTF-8 text: the bytes that are not continuation bytes (10xxxxxx)
static inline bool jinja_utf8_is_cont(char ch) { return ((unsigned char) ch & 0xC0) == 0x80; }
static inline size_t jinja_utf8_count(const char * s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        k += !jinja_utf8_is_cont(s[i]);
    }
    return k;
}

// growable text buffer in the arena
struct jbuf {
    char * s;
    size_t n, cap;
    size_t limit;
};
// the buffer's text as a string value (an untouched buffer has no storage yet: "")
static inline jv jbuf_value(const struct jbuf * b) { return jv_strn(b->s ? b->s : "", b->n); }
void jbuf_put(struct jenv * e, struct jbuf * b, const char * s, size_t n);
void jbuf_putc(struct jenv * e, struct jbuf * b, char ch);
void jbuf_printf(struct jenv * e, struct jbuf * b, const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

// Python's str() (what {{ }} prints; undefined prints nothing) and repr()
void jv_write_str(struct jenv * e, struct jbuf * b, jv v);
void jv_write_repr(struct jenv * e, struct jbuf * b, jv v);
// JSON text like Python's json.dumps as HF's chat-template tojson calls it (ensure_ascii off): ", " / ": "
// separators, or one item a line with `indent` spaces (indent >= 0, item separator then ","); `item_sep` /
// `key_sep` (NULL = those defaults) are json.dumps' separators; sort_keys orders object keys
struct jjson_opts {
    int          indent; // < 0: one line
    const char * item_sep;
    const char * key_sep;
    bool         sort_keys;
    bool         ensure_ascii;
};
void jv_write_json(struct jenv * e, struct jbuf * b, jv v, const struct jjson_opts * o, int level);
jv   jv_to_string(struct jenv * e, jv v); // str(v) as a string value

// ---- tokens + AST ----------------------------------------------------------------------------------------

enum jtok_type {
    TK_TEXT, TK_OPEN_STMT, TK_CLOSE_STMT, TK_OPEN_EXPR, TK_CLOSE_EXPR,
    TK_NAME, TK_STRING, TK_INT, TK_FLOAT, TK_OP, TK_EOF,
};

struct jtok {
    enum jtok_type t;
    const char *   s; // text / name / string value / operator (NUL-terminated, arena)
    size_t         n;
    int64_t        i;
    double         f;
    size_t         pos;
};

// tokenizes with trim_blocks + lstrip_blocks; the source is already normalised (see jinja_normalise)
struct jtok * jinja_lex(struct jenv * e, const char * src, size_t len, size_t * n_tok);

enum jnode_kind {
    // statements
    N_BLOCK, N_TEXT, N_OUTPUT, N_IF, N_FOR, N_SET, N_SET_BLOCK, N_MACRO, N_BREAK, N_CONTINUE, N_DO, N_CALL_BLOCK,
    N_FILTER_BLOCK,
    // expressions
    N_CONST, N_NAME, N_ATTR, N_INDEX, N_SLICE, N_CALL, N_FILTER, N_TEST, N_BINOP, N_NEG, N_POS, N_NOT, N_AND, N_OR,
    N_COND, N_LIST, N_TUPLE, N_DICT,
};

enum jbinop { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_CONCAT, OP_EQ, OP_NE, OP_LT, OP_LE,
              OP_GT, OP_GE, OP_IN, OP_NOTIN };

struct jnode_list {
    struct jnode ** v;
    size_t          n, cap;
};

struct jnode {
    enum jnode_kind   kind;
    size_t            pos;
    const char *      name;   // N_NAME, N_ATTR, N_FILTER, N_TEST, N_MACRO, N_SET_BLOCK target
    jv                value;  // N_CONST, N_TEXT (string)
    int               op;     // N_BINOP; N_TEST: 1 = negated
    struct jnode *    a, * b, * c, * d;
    struct jnode_list items;  // N_BLOCK statements, args, list/tuple/dict items, for targets (N_NAME nodes)
    struct jnode_list kw_vals; // call keyword values / macro defaults (parallel to kw_names)
    const char **     kw_names;
    size_t            n_kw;
    struct jnode *    body, * else_body;
};

struct jnode * jinja_parse(struct jenv * e, const struct jtok * toks, size_t n_tok);

// ---- evaluation ------------------------------------------------------------------------------------------

struct jscope {
    struct jscope * parent;
    jv              vars; // dict
};

struct jctx {
    struct jenv *   e;
    struct jscope * globals;
    struct jscope * scope;
    struct jbuf *   out;
    int             depth;
    int64_t         steps;
    int             loop_ctl; // 1 = break, 2 = continue
};

struct jargs {
    jv *          pos;
    size_t        npos;
    const char ** kw_names;
    jv *          kw_vals;
    size_t        nkw;
};

jv   jinja_call(struct jctx * c, jv fn, struct jargs * a, size_t pos);
bool jinja_run_test(struct jctx * c, const char * name, jv v, struct jargs * a, size_t pos);
jv   jinja_apply_filter(struct jctx * c, const char * name, jv v, struct jargs * a, size_t pos);
jv   jinja_get_attr(struct jctx * c, jv obj, const char * name, size_t pos); // method or key
jv   jinja_global_builtin(struct jctx * c, const char * name);              // range, namespace, ...; undef if none
jv   jinja_iter_list(struct jctx * c, jv v, size_t pos);                     // list of items for a for loop

// shared string/dict helpers (jinja-methods.c)
jv jinja_strip(jv s, const char * chars, size_t nchars, bool left, bool right); // chars NULL = whitespace
jv jinja_case(struct jctx * c, jv s, int mode); // 0 upper, 1 lower, 2 capitalize, 3 title
jv jinja_replace(struct jctx * c, jv s, jv old, jv new_, int64_t count, size_t pos);
jv jinja_dict_items(struct jctx * c, jv d);
// first occurrence of needle[0..nn) in h[0..hn) (h itself for an empty needle), NULL if none
const char * jinja_find(const char * h, size_t hn, const char * needle, size_t nn);

// argument helpers: the i-th positional or the keyword `name`, else undefined
jv   jarg(struct jargs * a, size_t i, const char * name);
void jstep(struct jctx * c, size_t pos);
