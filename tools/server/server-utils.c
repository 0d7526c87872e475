// Small helpers shared by the server's files: logging, JSON responses, tokenizing request content, strings.
#include "server-context.h"
#include "common.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int  server_log_verbosity = 0;
bool server_log_disabled = false;

// through common/log.c, so that --log-file gets a copy and --log-colors applies
void server_log(const char * level, const char * fmt, ...) {
    if (server_log_disabled) {
        return;
    }
    char small[1024];
    char * text = small;
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    const int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n >= (int) sizeof(small)) {
        text = malloc((size_t) n + 1);
        if (text) {
            vsnprintf(text, (size_t) n + 1, fmt, ap2);
        } else {
            text = small; // out of memory: the message is cut
        }
    }
    va_end(ap2);
    const enum ggml_log_level lvl = strstr(level, "E ") ? GGML_LOG_LEVEL_ERROR :
                                    strstr(level, "W ") ? GGML_LOG_LEVEL_WARN : GGML_LOG_LEVEL_INFO;
    common_log_add(lvl, "%s%s", level, n < 0 ? "" : text);
    if (text != small) {
        free(text);
    }
}

void server_llama_log_cb(enum ggml_log_level level, const char * text, void * ud) {
    (void) ud;
    if (server_log_disabled) {
        return;
    }
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN || server_log_verbosity > 0) {
        // library text never goes to stdout
        common_log_add(level == GGML_LOG_LEVEL_NONE ? GGML_LOG_LEVEL_INFO : level, "%s", text);
    }
}
//
// helpers for handlers
//

void server_res_err(struct server_http_res * res, const char * message, enum server_error_type type) {
    int status = 500;
    char * body = server_error_body(message, type, 0, &status);
    server_http_res_take_body(res, status, body);
}

void server_res_json(struct server_http_res * res, json_t * value) {
    if (!value) {
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    char * body = sj_dumps(value);
    json_decref(value);
    if (!body) {
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    server_http_res_take_body(res, 200, body);
}

// parse the body as a JSON object or answer 400
json_t * server_parse_body(const struct server_http_req * req, struct server_http_res * res) {
    struct sj_err err;
    json_t * body = sj_parse_object(req->body, req->body_len, &err);
    if (!body) {
        server_res_err(res, err.msg, ERROR_TYPE_INVALID_REQUEST);
    }
    return body;
}

// the piece of a token with special tokens rendered (llama.cpp's common_token_to_piece(..., true));
// malloc'd, *len its length
char * server_token_piece(const struct llama_vocab * vocab, llama_token tok, size_t * len) {
    int32_t n = 0;
    char * out = common_token_to_piece(vocab, tok, true, &n);
    *len = (size_t) n;
    return out;
}

// tokenize text[0..len); returns the count (>= 0) with *out malloc'd, or -1
int server_tokenize_text(const struct llama_vocab * vocab, const char * text, size_t len, bool add_special,
                         bool parse_special, llama_token ** out) {
    int32_t n = 0;
    if (len > INT32_MAX) {
        *out = NULL;
        return -1;
    }
    return common_tokenize(vocab, text, (int32_t) len, add_special, parse_special, out, &n) ? n : -1;
}


bool server_tv_append(struct server_token_vec * v, const llama_token * t, size_t n) {
    if (n > v->cap - v->n) {
        size_t cap = v->cap ? v->cap : 64;
        while (cap - v->n < n) {
            if (cap > SIZE_MAX / (2 * sizeof(llama_token))) {
                return false;
            }
            cap *= 2;
        }
        llama_token * nd = realloc(v->data, cap * sizeof(llama_token));
        if (!nd) {
            return false;
        }
        v->data = nd;
        v->cap = cap;
    }
    memcpy(v->data + v->n, t, n * sizeof(llama_token));
    v->n += n;
    return true;
}

// llama.cpp's server_tokenize_mixed: a string, or an array of strings and token ids (only the first element gets
// the special tokens). false with err set on a bad element.
bool server_tokenize_mixed(const struct llama_vocab * vocab, const json_t * content, bool add_special,
                           bool parse_special, struct server_token_vec * out, struct sj_err * err) {
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    if (json_is_string(content)) {
        llama_token * toks = NULL;
        const int n = server_tokenize_text(vocab, json_string_value(content), json_string_length(content), add_special,
                                    parse_special, &toks);
        if (n < 0 || !server_tv_append(out, toks, (size_t) n)) {
            free(toks);
            snprintf(err->msg, sizeof(err->msg), "failed to tokenize \"content\"");
            return false;
        }
        free(toks);
        return true;
    }
    if (!json_is_array(content)) {
        snprintf(err->msg, sizeof(err->msg), "\"content\" must be a string or an array of strings and token ids, got %s",
                 sj_type_name(content));
        return false;
    }
    bool first = true;
    size_t i;
    const json_t * el;
    json_array_foreach(content, i, el) {
        if (json_is_string(el)) {
            llama_token * toks = NULL;
            const int n = server_tokenize_text(vocab, json_string_value(el), json_string_length(el), first && add_special,
                                        parse_special, &toks);
            if (n < 0 || !server_tv_append(out, toks, (size_t) n)) {
                free(toks);
                snprintf(err->msg, sizeof(err->msg), "failed to tokenize \"content\"[%zu]", i);
                return false;
            }
            free(toks);
        } else if (json_is_integer(el)) {
            const json_int_t id = json_integer_value(el);
            if (id < 0 || id >= n_vocab) {
                snprintf(err->msg, sizeof(err->msg), "\"content\"[%zu]: token id %lld out of range [0, %d)", i,
                         (long long) id, n_vocab);
                return false;
            }
            const llama_token t = (llama_token) id;
            if (!server_tv_append(out, &t, 1)) {
                snprintf(err->msg, sizeof(err->msg), "out of memory");
                return false;
            }
        } else {
            snprintf(err->msg, sizeof(err->msg), "\"content\"[%zu] must be a string or a token id, got %s", i,
                     sj_type_name(el));
            return false;
        }
        first = false;
    }
    return true;
}

int64_t server_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
bool server_sb_add(char ** s, size_t * n, size_t * cap, const char * d, size_t len) {
    if (len + 1 > *cap - *n || !*s) {
        size_t nc = *cap ? *cap : 256;
        while (nc - *n < len + 1) {
            nc *= 2;
        }
        char * ns = realloc(*s, nc);
        if (!ns) {
            return false;
        }
        *s = ns;
        *cap = nc;
    }
    memcpy(*s + *n, d, len);
    *n += len;
    (*s)[*n] = '\0';
    return true;
}


static int cmp_cstr(const void * a, const void * b) {
    return strcmp(*(const char * const *) a, *(const char * const *) b);
}

// llama.cpp splits -a at commas, strips each name and keeps them in a std::set (sorted, distinct)
json_t * server_model_aliases(const struct common_params * p) {
    json_t * out = json_array();
    if (!out || !p->model_alias) {
        return out;
    }
    char * copy = strdup(p->model_alias);
    size_t cap = strlen(p->model_alias) / 2 + 1, n = 0;
    char ** names = calloc(cap, sizeof(char *));
    if (!copy || !names) {
        free(copy);
        free(names);
        return out;
    }
    for (char * tok = copy; tok;) {
        char * comma = strchr(tok, ',');
        if (comma) {
            *comma = '\0';
        }
        while (*tok == ' ' || *tok == '\t' || *tok == '\n' || *tok == '\r') {
            tok++;
        }
        size_t len = strlen(tok);
        while (len > 0 && (tok[len - 1] == ' ' || tok[len - 1] == '\t' || tok[len - 1] == '\n' || tok[len - 1] == '\r')) {
            tok[--len] = '\0';
        }
        if (len > 0 && n < cap) {
            names[n++] = tok;
        }
        tok = comma ? comma + 1 : NULL;
    }
    qsort(names, n, sizeof(char *), cmp_cstr);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(names[i], names[i - 1]) != 0) {
            json_array_append_new(out, json_string(names[i]));
        }
    }
    free(names);
    free(copy);
    return out;
}

char * server_model_name(const struct common_params * p) {
    json_t * aliases = server_model_aliases(p);
    char * name = NULL;
    if (json_array_size(aliases) > 0) {
        name = strdup(json_string_value(json_array_get(aliases, 0)));
    } else {
        const char * path = p->model.path ? p->model.path : "";
        const char * slash = strrchr(path, '/');
        name = strdup(slash ? slash + 1 : path);
    }
    json_decref(aliases);
    return name;
}

const char * server_build_info(void) {
    // formatted on first use; the values are constants of the build, so a race writes the same text
    static char buf[64];
    if (buf[0] == '\0') {
        snprintf(buf, sizeof(buf), "b%d-%s", LLAMA_BUILD_NUMBER, LLAMA_COMMIT);
    }
    return buf;
}
