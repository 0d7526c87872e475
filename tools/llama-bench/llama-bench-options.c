// llama-bench's device and CPU options (see llama-bench-options.h)

#include "llama-bench-options.h"

#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool fail(char * err, size_t n_err, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n_err, fmt, ap);
    va_end(ap);
    return false;
}

bool bench_parse_cpu_mask(const char * s, bool * mask, char * err, size_t n_err) {
    // one -C value is the whole mask of a test (parse_cpu_mask adds to what is set)
    memset(mask, 0, sizeof(bool) * GGML_MAX_N_THREADS);
    if (!parse_cpu_mask(s, mask)) {
        return fail(err, n_err, "invalid CPU mask '%s' (expected 1..%d hex digits)", s, GGML_MAX_N_THREADS / 4);
    }
    return true;
}

bool bench_parse_tensor_split(const char * s, float * out, char * err, size_t n_err) {
    for (int i = 0; i < BENCH_MAX_DEVICES; i++) {
        out[i] = 0.0f;
    }
    int n = 0;
    const char * p = s;
    while (*p) {
        // separators may repeat, as in llama.cpp's [;/]+
        while (*p == '/' || *p == ';') {
            p++;
        }
        if (!*p) {
            break;
        }
        if (n == BENCH_MAX_DEVICES) {
            return fail(err, n_err, "tensor split '%s' has more than %d values", s, BENCH_MAX_DEVICES);
        }
        char * end;
        errno = 0;
        const float v = strtof(p, &end);
        if (end == p || errno != 0 || !isfinite(v) || v < 0.0f || (*end && *end != '/' && *end != ';')) {
            return fail(err, n_err, "invalid tensor split value in '%s'", s);
        }
        out[n++] = v;
        p = end;
    }
    if (n == 0) {
        return fail(err, n_err, "empty tensor split");
    }
    return true;
}

void bench_tensor_split_str(const float * ts, char * buf, size_t n) {
    int last = 0;
    for (int i = 0; i < BENCH_MAX_DEVICES; i++) {
        if (ts[i] > 0) {
            last = i;
        }
    }
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i <= last && len < n; i++) {
        len += (size_t) snprintf(buf + len, n - len, "%s%.2f", i ? "/" : "", (double) ts[i]);
    }
}

bool bench_parse_devices(const char * s, struct bench_devices * out, char * err, size_t n_err) {
    memset(out, 0, sizeof(*out));
    while (*s == ' ') {
        s++;
    }
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == ' ') {
        len--;
    }
    if (len == 0) {
        return fail(err, n_err, "no devices specified");
    }
    if (len == 4 && strncmp(s, "auto", 4) == 0) {
        out->is_auto = true;
        return true;
    }
    if (len == 4 && strncmp(s, "none", 4) == 0) {
        return true;
    }
    const char * p = s;
    const char * end = s + len;
    while (p <= end) {
        const char * slash = memchr(p, '/', (size_t) (end - p));
        const char * q = slash ? slash : end;
        char name[256];
        const char * a = p;
        const char * b = q;
        while (a < b && *a == ' ') {
            a++;
        }
        while (b > a && b[-1] == ' ') {
            b--;
        }
        if (a == b || (size_t) (b - a) >= sizeof(name)) {
            return fail(err, n_err, "invalid device specification '%s'", s);
        }
        memcpy(name, a, (size_t) (b - a));
        name[b - a] = '\0';
        ggml_backend_dev_t dev = ggml_backend_dev_by_name(name);
        // the CPU is always used; -dev names the offload devices
        if (!dev || ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU) {
            return fail(err, n_err, "invalid device: %s", name);
        }
        if (out->n == BENCH_MAX_DEVICES) {
            return fail(err, n_err, "more than %d devices in '%s'", BENCH_MAX_DEVICES, s);
        }
        out->devs[out->n++] = dev;
        if (!slash) {
            break;
        }
        p = slash + 1;
    }
    return true;
}

bool bench_devices_equal(const struct bench_devices * a, const struct bench_devices * b) {
    if (a->is_auto != b->is_auto || a->n != b->n) {
        return false;
    }
    for (int i = 0; i < a->n; i++) {
        if (a->devs[i] != b->devs[i]) {
            return false;
        }
    }
    return true;
}

void bench_devices_str(const struct bench_devices * d, char * buf, size_t n) {
    if (d->is_auto) {
        snprintf(buf, n, "auto");
        return;
    }
    if (d->n == 0) {
        snprintf(buf, n, "none");
        return;
    }
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < d->n && len < n; i++) {
        len += (size_t) snprintf(buf + len, n - len, "%s%s", i ? "/" : "", ggml_backend_dev_name(d->devs[i]));
    }
}

// the buffer type of a device by its name, as -ot names them
static ggml_backend_buffer_type_t buft_by_name(const char * name, size_t len) {
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(ggml_backend_dev_get(i));
        const char * bn = buft ? ggml_backend_buft_name(buft) : NULL;
        if (bn && strlen(bn) == len && strncmp(bn, name, len) == 0) {
            return buft;
        }
    }
    return NULL;
}

bool bench_parse_overrides(const char * s, size_t len, struct bench_overrides * out, char * err, size_t n_err) {
    memset(out, 0, sizeof(*out));
    // at most one override per ';'-separated item
    size_t cap = 1;
    for (size_t i = 0; i < len; i++) {
        cap += s[i] == ';';
    }
    out->patterns = calloc(cap, sizeof(char *));
    out->list = calloc(cap + 1, sizeof(*out->list));
    if (!out->patterns || !out->list) {
        bench_overrides_free(out);
        return fail(err, n_err, "out of memory");
    }
    const char * p = s;
    const char * end = s + len;
    while (p < end) {
        const char * semi = memchr(p, ';', (size_t) (end - p));
        const char * q = semi ? semi : end;
        if (q > p) {
            const char * eq = memchr(p, '=', (size_t) (q - p));
            if (!eq || eq == p) {
                bench_overrides_free(out);
                return fail(err, n_err, "invalid tensor override '%.*s' (expected <tensor name pattern>=<buffer type>)",
                            (int) (q - p), p);
            }
            ggml_backend_buffer_type_t buft = buft_by_name(eq + 1, (size_t) (q - eq - 1));
            if (!buft) {
                char msg[256];
                int m = snprintf(msg, sizeof(msg), "unrecognized buffer type '%.*s'; available:", (int) (q - eq - 1), eq + 1);
                for (size_t i = 0; i < ggml_backend_dev_count() && m > 0 && (size_t) m < sizeof(msg); i++) {
                    ggml_backend_buffer_type_t b = ggml_backend_dev_buffer_type(ggml_backend_dev_get(i));
                    if (b) {
                        m += snprintf(msg + m, sizeof(msg) - (size_t) m, " %s", ggml_backend_buft_name(b));
                    }
                }
                bench_overrides_free(out);
                return fail(err, n_err, "%s", msg);
            }
            char * pat = malloc((size_t) (eq - p) + 1);
            if (!pat) {
                bench_overrides_free(out);
                return fail(err, n_err, "out of memory");
            }
            memcpy(pat, p, (size_t) (eq - p));
            pat[eq - p] = '\0';
            out->patterns[out->n] = pat;
            out->list[out->n].pattern = pat;
            out->list[out->n].buft = buft;
            out->n++;
        }
        if (!semi) {
            break;
        }
        p = semi + 1;
    }
    return true;
}

bool bench_overrides_equal(const struct bench_overrides * a, const struct bench_overrides * b) {
    if (a->n != b->n) {
        return false;
    }
    for (int i = 0; i < a->n; i++) {
        if (strcmp(a->list[i].pattern, b->list[i].pattern) != 0 || a->list[i].buft != b->list[i].buft) {
            return false;
        }
    }
    return true;
}

void bench_overrides_str(const struct bench_overrides * o, char * buf, size_t n) {
    if (o->n == 0) {
        snprintf(buf, n, "none");
        return;
    }
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < o->n && len < n; i++) {
        len += (size_t) snprintf(buf + len, n - len, "%s%s=%s", i ? ";" : "", o->list[i].pattern,
                                 ggml_backend_buft_name(o->list[i].buft));
    }
}

void bench_overrides_free(struct bench_overrides * o) {
    if (o->patterns) {
        for (int i = 0; i < o->n; i++) {
            free(o->patterns[i]);
        }
    }
    free(o->patterns);
    free(o->list);
    memset(o, 0, sizeof(*o));
}
