#include "server-http.h"
#include "server-errors.h"

#include <microhttpd.h>

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#define JSON_CONTENT_TYPE "application/json; charset=utf-8"

// how often suspended streams are checked for a client that went away (llama.cpp: HTTP_POLLING_SECONDS)
#define STREAM_POLL_SECONDS 1

// Handlers run on handler threads, never on MHD's polling threads: a handler that waits (a non-streamed
// completion queued behind others) parks its connection and holds no polling thread, so /health and every other
// connection stay served. params.n_threads handler threads are kept; more are added on demand up to
// HANDLER_THREADS_MAX, and the extra ones exit after HANDLER_IDLE_EXIT_S idle (llama.cpp's cpp-httplib pool:
// n_threads_http fixed threads plus up to 1024 dynamic ones).
#define HANDLER_THREADS_MAX 1024
#define HANDLER_IDLE_EXIT_S 5

struct route {
    char * method;
    char * path;
    server_http_handler_t handler;
    void * user_data;
    bool   is_public;
    bool   during_load;
};

struct server_http_stream {
    struct server_http * http;
    pthread_mutex_t mu;
    char  * buf;
    size_t  len;        // bytes in buf
    size_t  off;        // bytes of buf already handed to MHD
    size_t  cap;
    bool    ended;      // producer finished
    bool    cancelled;  // client gone or server stopping
    bool    suspended;  // connection suspended, waiting for data
    int     refs;
    struct MHD_Connection * conn;           // set while attached to a live response
    struct server_http_stream * prev, * next; // the http's list of attached streams
};

struct server_http {
    struct server_http_params params; // host and keys point at owned copies below
    char  * host;
    char ** api_keys;

    struct route * routes;
    size_t n_routes;

    struct MHD_Daemon * daemon;
    int port;
    atomic_bool ready;

    pthread_mutex_t streams_mu;
    struct server_http_stream * streams;
    bool streams_closed; // stopping: new streams start cancelled (under streams_mu)

    pthread_t       poller;
    bool            poller_running;
    pthread_mutex_t poller_mu;
    pthread_cond_t  poller_cv;
    bool            stopping;

    // handler jobs and their threads (all under jobs_mu)
    pthread_mutex_t      jobs_mu;
    pthread_cond_t       jobs_cv;      // a job arrived, or stopping
    pthread_cond_t       workers_cv;   // a handler thread exited
    struct handler_job * jobs_head;
    struct handler_job * jobs_tail;
    int                  n_jobs;       // queued, not yet taken
    int                  n_workers;    // handler threads alive
    int                  n_idle;       // handler threads waiting for a job
    bool                 jobs_stopping;
};

// one routed request waiting for (or running on) a handler thread; its connection is suspended meanwhile
struct handler_job {
    struct server_http    * http;
    struct MHD_Connection * conn;
    struct conn_ctx       * cc;
    const struct route    * rt;     // the route table is fixed once serving
    const char            * method; // MHD's strings, valid while the request lives
    const char            * url;
    struct handler_job    * next;
};

// per-request state while the body arrives
struct conn_ctx {
    char * buf;
    size_t len;
    size_t cap;
    bool   too_large;
    bool   answered;  // a response was queued before the body was complete, or the request was dispatched
    // the response a handler thread made; the thread resumes the connection and MHD's thread sends it
    // (MHD_resume_connection orders the handler's writes before the polling thread's reads)
    bool   res_ready;
    struct server_http_res res;
};

static void http_log(const char * fmt, ...) __attribute__((format(printf, 1, 2)));
static void http_log(const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("srv  http: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void mhd_logger(void * cls, const char * fmt, va_list ap) {
    (void) cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    // MHD messages end with a newline already
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) {
        msg[--n] = '\0';
    }
    fprintf(stderr, "srv  http: microhttpd: %s\n", msg);
}

//
// request / response helpers
//

const char * server_http_req_header(const struct server_http_req * req, const char * name) {
    return MHD_lookup_connection_value((struct MHD_Connection *) req->impl, MHD_HEADER_KIND, name);
}

const char * server_http_req_query(const struct server_http_req * req, const char * name) {
    return MHD_lookup_connection_value((struct MHD_Connection *) req->impl, MHD_GET_ARGUMENT_KIND, name);
}

static bool peer_gone(struct MHD_Connection * conn);

bool server_http_req_client_gone(const struct server_http_req * req) {
    return req && req->impl && peer_gone((struct MHD_Connection *) req->impl);
}

void server_http_res_set_text(struct server_http_res * res, int status, const char * content_type, const char * text) {
    free(res->body);
    res->status       = status;
    res->content_type = content_type;
    res->body         = strdup(text ? text : "");
    res->body_len     = res->body ? strlen(res->body) : 0;
    if (!res->body) {
        res->status = 500;
    }
}

void server_http_res_take_body(struct server_http_res * res, int status, char * body) {
    free(res->body);
    res->status       = body ? status : 500;
    res->content_type = JSON_CONTENT_TYPE;
    res->body         = body;
    res->body_len     = body ? strlen(body) : 0;
}

bool server_http_res_add_header(struct server_http_res * res, const char * name, const char * value) {
    if (res->n_headers >= SERVER_HTTP_MAX_HEADERS) {
        return false;
    }
    char * n = strdup(name);
    char * v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return false;
    }
    res->header_names [res->n_headers] = n;
    res->header_values[res->n_headers] = v;
    res->n_headers++;
    return true;
}

static void res_clear(struct server_http_res * res) {
    free(res->body);
    for (int i = 0; i < res->n_headers; i++) {
        free(res->header_names[i]);
        free(res->header_values[i]);
    }
    memset(res, 0, sizeof(*res));
}

static void res_error(struct server_http_res * res, const char * message, enum server_error_type type, int status_override) {
    int status = 500;
    char * body = server_error_body(message, type, status_override, &status);
    server_http_res_take_body(res, status, body);
}

//
// streams
//

static void stream_release(struct server_http_stream * s) {
    pthread_mutex_lock(&s->mu);
    const int refs = --s->refs;
    pthread_mutex_unlock(&s->mu);
    if (refs == 0) {
        pthread_mutex_destroy(&s->mu);
        free(s->buf);
        free(s);
    }
}

struct server_http_stream * server_http_stream_create(struct server_http * http) {
    struct server_http_stream * s = calloc(1, sizeof(*s));
    if (!s) {
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    s->http = http;
    s->refs = 2;
    return s;
}

bool server_http_stream_write(struct server_http_stream * s, const char * data, size_t len) {
    pthread_mutex_lock(&s->mu);
    if (s->cancelled || s->ended) {
        pthread_mutex_unlock(&s->mu);
        return false;
    }
    if (s->off > 0 && s->off == s->len) {
        s->off = s->len = 0;
    }
    if (len > s->cap - s->len) {
        size_t need = s->len + len;
        if (need < s->len) {
            pthread_mutex_unlock(&s->mu);
            return false;
        }
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < need) {
            if (cap > SIZE_MAX / 2) {
                cap = need;
                break;
            }
            cap *= 2;
        }
        char * nb = realloc(s->buf, cap);
        if (!nb) {
            pthread_mutex_unlock(&s->mu);
            return false;
        }
        s->buf = nb;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    if (s->suspended && s->conn) {
        s->suspended = false;
        MHD_resume_connection(s->conn);
    }
    pthread_mutex_unlock(&s->mu);
    return true;
}

bool server_http_stream_cancelled(struct server_http_stream * s) {
    pthread_mutex_lock(&s->mu);
    const bool c = s->cancelled;
    pthread_mutex_unlock(&s->mu);
    return c;
}

void server_http_stream_end(struct server_http_stream * s) {
    pthread_mutex_lock(&s->mu);
    s->ended = true;
    if (s->suspended && s->conn) {
        s->suspended = false;
        MHD_resume_connection(s->conn);
    }
    pthread_mutex_unlock(&s->mu);
    stream_release(s);
}

static ssize_t stream_reader(void * cls, uint64_t pos, char * buf, size_t max) {
    (void) pos;
    struct server_http_stream * s = cls;
    pthread_mutex_lock(&s->mu);
    if (s->cancelled) {
        pthread_mutex_unlock(&s->mu);
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (s->len > s->off) {
        size_t n = s->len - s->off;
        if (n > max) {
            n = max;
        }
        memcpy(buf, s->buf + s->off, n);
        s->off += n;
        pthread_mutex_unlock(&s->mu);
        return (ssize_t) n;
    }
    if (s->ended) {
        pthread_mutex_unlock(&s->mu);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    // nothing to send: park the connection so it holds no thread until the producer writes
    s->suspended = true;
    MHD_suspend_connection(s->conn);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static void stream_detach(void * cls) {
    struct server_http_stream * s = cls;
    struct server_http * http = s->http;

    pthread_mutex_lock(&http->streams_mu);
    if (s->prev) {
        s->prev->next = s->next;
    } else if (http->streams == s) {
        http->streams = s->next;
    }
    if (s->next) {
        s->next->prev = s->prev;
    }
    s->prev = s->next = NULL;
    pthread_mutex_unlock(&http->streams_mu);

    pthread_mutex_lock(&s->mu);
    // a producer still writing learns that nobody reads any more
    if (!s->ended || s->len > s->off) {
        s->cancelled = true;
    }
    s->conn = NULL;
    s->suspended = false;
    pthread_mutex_unlock(&s->mu);
    stream_release(s);
}

// true when the peer closed or reset the connection (checked without consuming data)
static bool peer_gone(struct MHD_Connection * conn) {
    const union MHD_ConnectionInfo * ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) {
        return false;
    }
    char b;
    const ssize_t r = recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r == 0) {
        return true;
    }
    return r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

// resume every parked stream (once per STREAM_POLL_SECONDS, or all of them when stopping) so that MHD
// re-examines the socket; a peer that is gone cancels the stream
static void streams_poll(struct server_http * http, bool stopping) {
    pthread_mutex_lock(&http->streams_mu);
    if (stopping) {
        http->streams_closed = true;
    }
    for (struct server_http_stream * s = http->streams; s; s = s->next) {
        pthread_mutex_lock(&s->mu);
        if (stopping) {
            s->cancelled = true;
        }
        if (s->suspended && s->conn) {
            if (!s->cancelled && peer_gone(s->conn)) {
                s->cancelled = true;
            }
            s->suspended = false;
            MHD_resume_connection(s->conn);
        }
        pthread_mutex_unlock(&s->mu);
    }
    pthread_mutex_unlock(&http->streams_mu);
}

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void * poller_main(void * arg) {
    struct server_http * http = arg;
    int64_t next_streams = mono_ms() + STREAM_POLL_SECONDS * 1000;
    pthread_mutex_lock(&http->poller_mu);
    while (!http->stopping) {
        const int64_t wait_ms = next_streams - mono_ms();
        if (wait_ms > 0) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec  += (time_t) (wait_ms / 1000);
            ts.tv_nsec += (long) (wait_ms % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec  += 1;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&http->poller_cv, &http->poller_mu, &ts);
            continue; // re-check stopping and the time (a wake-up may be early or spurious)
        }
        pthread_mutex_unlock(&http->poller_mu);
        streams_poll(http, false);
        next_streams = mono_ms() + STREAM_POLL_SECONDS * 1000;
        pthread_mutex_lock(&http->poller_mu);
    }
    pthread_mutex_unlock(&http->poller_mu);
    return NULL;
}

//
// dispatch
//

// constant time for equal lengths, so a key cannot be guessed byte by byte from timings
static bool key_equal(const char * a, const char * b) {
    const size_t la = strlen(a), lb = strlen(b);
    unsigned diff = (unsigned) (la != lb);
    const size_t n = la < lb ? la : lb;
    for (size_t i = 0; i < n; i++) {
        diff |= (unsigned char) a[i] ^ (unsigned char) b[i];
    }
    return diff == 0;
}

static bool api_key_ok(const struct server_http * http, struct MHD_Connection * c) {
    if (http->params.n_api_keys == 0) {
        return true;
    }
    const char * auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!auth || !*auth) {
        auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Api-Key");
    }
    if (!auth) {
        return false;
    }
    if (strncmp(auth, "Bearer ", 7) == 0) {
        auth += 7;
    }
    bool ok = false;
    for (size_t i = 0; i < http->params.n_api_keys; i++) {
        ok |= key_equal(auth, http->api_keys[i]);
    }
    return ok;
}

static enum MHD_Result send_res(struct server_http * http, struct MHD_Connection * c, struct server_http_res * res,
                                const char * method, const char * url) {
    struct MHD_Response * r;
    if (res->stream) {
        struct server_http_stream * s = res->stream;
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_reader, s, stream_detach);
        if (!r) {
            // the transport's reference is ours to drop; the producer still ends its own
            res->stream = NULL;
            pthread_mutex_lock(&s->mu);
            s->cancelled = true;
            pthread_mutex_unlock(&s->mu);
            stream_release(s);
            return MHD_NO;
        }
        pthread_mutex_lock(&http->streams_mu);
        pthread_mutex_lock(&s->mu);
        s->conn = c;
        if (http->streams_closed) {
            // server_http_stop already woke every stream: this one must never park
            s->cancelled = true;
        }
        pthread_mutex_unlock(&s->mu);
        s->next = http->streams;
        if (http->streams) {
            http->streams->prev = s;
        }
        http->streams = s;
        pthread_mutex_unlock(&http->streams_mu);
        res->stream = NULL;
    } else {
        r = MHD_create_response_from_buffer(res->body_len, res->body ? res->body : (void *) "",
                                            res->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (!r) {
            return MHD_NO;
        }
        res->body = NULL; // MHD frees it now
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, res->content_type ? res->content_type : JSON_CONTENT_TYPE);
    // llama.cpp echoes the caller's origin so browsers accept credentials
    const char * origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    MHD_add_response_header(r, "Access-Control-Allow-Origin", origin && *origin ? origin : "*");
    for (int i = 0; i < res->n_headers; i++) {
        MHD_add_response_header(r, res->header_names[i], res->header_values[i]);
    }
    const unsigned status = res->status > 0 ? (unsigned) res->status : 200u;
    const enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    if (http->params.log_requests) {
        http_log("request: %s %s %u", method, url, status);
    }
    return ret;
}

static enum MHD_Result send_error(struct server_http * http, struct MHD_Connection * c, const char * method,
                                  const char * url, const char * message, enum server_error_type type,
                                  int status_override) {
    struct server_http_res res = { 0 };
    res_error(&res, message, type, status_override);
    const enum MHD_Result ret = send_res(http, c, &res, method, url);
    res_clear(&res);
    return ret;
}

//
// handler threads
//

// A handler's connection is suspended (jobs_submit) before the job is visible to any handler thread, and
// libmicrohttpd suspends synchronously inside that call (0.9.75: internal_suspend_connection_ moves the
// connection to the suspended list under its cleanup mutex), so the single MHD_resume_connection a handler
// thread issues when it is done always finds the connection suspended and cannot be lost. A resume must never
// be issued for a connection that is not suspended (undefined behaviour per microhttpd.h; in practice a stale
// "resuming" mark that turns the connection's next suspension into a no-op), so each suspension gets exactly
// one resume: here by job_run, for streams by whoever clears stream->suspended under stream->mu.

static void job_run(struct handler_job * j) {
    struct conn_ctx * cc = j->cc;
    struct server_http_req req = {
        .method   = j->method,
        .path     = j->url,
        .body     = cc->buf ? cc->buf : "",
        .body_len = cc->len,
        .impl     = j->conn,
    };
    memset(&cc->res, 0, sizeof(cc->res));
    cc->res.status       = 200;
    cc->res.content_type = JSON_CONTENT_TYPE;
    j->rt->handler(&req, &cc->res, j->rt->user_data);
    cc->res_ready = true;
    // from here on MHD's thread owns cc (it may even free it once the response is sent): touch nothing after
    MHD_resume_connection(j->conn);
}

static void * worker_main(void * arg) {
    struct server_http * http = arg;
    pthread_mutex_lock(&http->jobs_mu);
    for (;;) {
        bool timed_out = false;
        while (!http->jobs_head && !http->jobs_stopping && !timed_out) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += HANDLER_IDLE_EXIT_S;
            http->n_idle++;
            timed_out = pthread_cond_timedwait(&http->jobs_cv, &http->jobs_mu, &ts) == ETIMEDOUT;
            http->n_idle--;
        }
        if (!http->jobs_head) {
            // stopping with nothing queued, or idle too long while more than the kept threads exist
            if (http->jobs_stopping || http->n_workers > http->params.n_threads) {
                break;
            }
            continue;
        }
        struct handler_job * j = http->jobs_head;
        http->jobs_head = j->next;
        if (!http->jobs_head) {
            http->jobs_tail = NULL;
        }
        http->n_jobs--;
        pthread_mutex_unlock(&http->jobs_mu);
        job_run(j);
        free(j);
        pthread_mutex_lock(&http->jobs_mu);
    }
    http->n_workers--;
    pthread_cond_broadcast(&http->workers_cv);
    pthread_mutex_unlock(&http->jobs_mu);
    return NULL;
}

// a new detached handler thread; false when none could be made (jobs_mu held)
static bool worker_spawn(struct server_http * http) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) {
        return false;
    }
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    const bool ok = pthread_create(&t, &attr, worker_main, http) == 0;
    pthread_attr_destroy(&attr);
    if (ok) {
        http->n_workers++;
    }
    return ok;
}

// park the connection and queue its request for a handler thread; false: the caller runs it inline
static bool jobs_submit(struct server_http * http, struct MHD_Connection * c, struct conn_ctx * cc,
                        const struct route * rt, const char * method, const char * url) {
    struct handler_job * j = calloc(1, sizeof(*j));
    if (!j) {
        return false;
    }
    *j = (struct handler_job) { .http = http, .conn = c, .cc = cc, .rt = rt, .method = method, .url = url };
    pthread_mutex_lock(&http->jobs_mu);
    if (http->jobs_stopping) {
        pthread_mutex_unlock(&http->jobs_mu);
        free(j);
        return false;
    }
    // every queued job needs a thread that is free now: add one unless enough are idle
    if (http->n_jobs + 1 > http->n_idle && http->n_workers < HANDLER_THREADS_MAX) {
        worker_spawn(http);
    }
    if (http->n_workers == 0) {
        pthread_mutex_unlock(&http->jobs_mu);
        free(j);
        return false;
    }
    // suspended before any thread can see the job, so its resume cannot come first
    MHD_suspend_connection(c);
    if (http->jobs_tail) {
        http->jobs_tail->next = j;
    } else {
        http->jobs_head = j;
    }
    http->jobs_tail = j;
    http->n_jobs++;
    pthread_cond_signal(&http->jobs_cv);
    pthread_mutex_unlock(&http->jobs_mu);
    return true;
}

// stop taking jobs and wait until every handler thread has finished its job and exited
static void jobs_drain(struct server_http * http) {
    pthread_mutex_lock(&http->jobs_mu);
    http->jobs_stopping = true;
    pthread_cond_broadcast(&http->jobs_cv);
    while (http->n_workers > 0) {
        pthread_cond_wait(&http->workers_cv, &http->jobs_mu);
    }
    pthread_mutex_unlock(&http->jobs_mu);
}

// a route's path matches url exactly, or, when its last segment is a parameter (":name", as llama.cpp's
// "/slots/:id_slot"), url has the same prefix followed by one non-empty segment
static bool route_match(const char * path, const char * url) {
    const char * colon = strrchr(path, ':');
    if (!colon || colon == path || colon[-1] != '/' || strchr(colon, '/')) {
        return strcmp(path, url) == 0;
    }
    const size_t n_prefix = (size_t) (colon - path);
    return strncmp(path, url, n_prefix) == 0 && url[n_prefix] != '\0' && !strchr(url + n_prefix, '/');
}

static enum MHD_Result dispatch(struct server_http * http, struct MHD_Connection * c, const char * url,
                                const char * method, struct conn_ctx * cc) {
    struct server_http_res res = { 0 };
    res.status = 200;
    res.content_type = JSON_CONTENT_TYPE;

    if (strcmp(method, "OPTIONS") == 0) {
        // CORS preflight: answered for any path, before authentication (browsers send no credentials here)
        server_http_res_set_text(&res, 200, "text/html", "");
        server_http_res_add_header(&res, "Access-Control-Allow-Credentials", "true");
        server_http_res_add_header(&res, "Access-Control-Allow-Methods", "GET, POST");
        server_http_res_add_header(&res, "Access-Control-Allow-Headers", "*");
    } else {
        const struct route * rt = NULL;
        for (size_t i = 0; i < http->n_routes; i++) {
            if (route_match(http->routes[i].path, url) && strcmp(http->routes[i].method, method) == 0) {
                rt = &http->routes[i];
                break;
            }
        }
        // as llama.cpp's pre-routing middlewares: the loading gate first (so a client without a key learns that
        // the model is loading, not that its key is wrong), then authentication (unknown paths too), then routing
        if (!atomic_load(&http->ready) && !(rt && rt->during_load)) {
            res_error(&res, "Loading model", ERROR_TYPE_UNAVAILABLE, 0);
        } else if (!(rt && rt->is_public) && !api_key_ok(http, c)) {
            res_error(&res, "Invalid API Key", ERROR_TYPE_AUTHENTICATION, 0);
        } else if (!rt) {
            res_error(&res, "File Not Found", ERROR_TYPE_NOT_FOUND, 0);
        } else {
            res_clear(&res);
            if (jobs_submit(http, c, cc, rt, method, url)) {
                return MHD_YES; // suspended; the handler thread resumes it with cc->res
            }
            // no handler thread could take it (out of memory or threads): answer here rather than not at all
            struct server_http_req req = {
                .method   = method,
                .path     = url,
                .body     = cc->buf ? cc->buf : "",
                .body_len = cc->len,
                .impl     = c,
            };
            res.status = 200;
            res.content_type = JSON_CONTENT_TYPE;
            rt->handler(&req, &res, rt->user_data);
        }
    }
    const enum MHD_Result ret = send_res(http, c, &res, method, url);
    res_clear(&res);
    return ret;
}

static bool parse_size(const char * s, unsigned long long * out) {
    if (!s || *s < '0' || *s > '9') {
        return false;
    }
    errno = 0;
    char * end = NULL;
    const unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || (*end != '\0' && *end != ' ')) {
        return false;
    }
    *out = v;
    return true;
}

static enum MHD_Result on_access(void * cls, struct MHD_Connection * c, const char * url, const char * method,
                                 const char * version, const char * upload_data, size_t * upload_size, void ** con_cls) {
    (void) version;
    struct server_http * http = cls;
    struct conn_ctx * cc = *con_cls;

    if (!cc) {
        cc = calloc(1, sizeof(*cc));
        if (!cc) {
            return MHD_NO;
        }
        *con_cls = cc;
        unsigned long long clen = 0;
        const char * cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && parse_size(cl, &clen) && clen > http->params.max_body) {
            // refuse before reading the body; MHD closes the connection after this answer
            cc->too_large = true;
            cc->answered  = true;
            char msg[160];
            snprintf(msg, sizeof(msg), "request body too large: %llu bytes (limit %zu)", clen, http->params.max_body);
            return send_error(http, c, method, url, msg, ERROR_TYPE_INVALID_REQUEST, 413);
        }
        return MHD_YES;
    }

    if (*upload_size > 0) {
        const size_t n = *upload_size;
        *upload_size = 0;
        if (cc->too_large) {
            return MHD_YES;
        }
        if (n > http->params.max_body - cc->len) {
            // chunked bodies announce no length: drop what came and answer once the upload ends
            cc->too_large = true;
            free(cc->buf);
            cc->buf = NULL;
            cc->len = cc->cap = 0;
            return MHD_YES;
        }
        if (cc->len + n + 1 > cc->cap) {
            size_t cap = cc->cap ? cc->cap : 1024;
            while (cap < cc->len + n + 1) {
                cap *= 2;
            }
            char * nb = realloc(cc->buf, cap);
            if (!nb) {
                return MHD_NO;
            }
            cc->buf = nb;
            cc->cap = cap;
        }
        memcpy(cc->buf + cc->len, upload_data, n);
        cc->len += n;
        cc->buf[cc->len] = '\0';
        return MHD_YES;
    }

    if (cc->res_ready) {
        // back from a handler thread (it resumed the connection): send what it made
        cc->res_ready = false;
        const enum MHD_Result ret = send_res(http, c, &cc->res, method, url);
        res_clear(&cc->res);
        return ret;
    }
    if (cc->answered) {
        return MHD_YES;
    }
    cc->answered = true;
    if (cc->too_large) {
        char msg[160];
        snprintf(msg, sizeof(msg), "request body too large (limit %zu bytes)", http->params.max_body);
        return send_error(http, c, method, url, msg, ERROR_TYPE_INVALID_REQUEST, 413);
    }
    return dispatch(http, c, url, method, cc);
}

static void on_completed(void * cls, struct MHD_Connection * c, void ** con_cls, enum MHD_RequestTerminationCode toe) {
    (void) cls;
    (void) c;
    (void) toe;
    struct conn_ctx * cc = *con_cls;
    if (cc) {
        if (cc->res.stream) {
            // the client left while its handler ran: the stream was never attached to a response, so drop the
            // transport's reference here and tell the producer nobody reads
            struct server_http_stream * st = cc->res.stream;
            cc->res.stream = NULL;
            pthread_mutex_lock(&st->mu);
            st->cancelled = true;
            pthread_mutex_unlock(&st->mu);
            stream_release(st);
        }
        res_clear(&cc->res); // a response made for a connection that ended before it was sent
        free(cc->buf);
        free(cc);
        *con_cls = NULL;
    }
}

//
// lifecycle
//

struct server_http * server_http_init(const struct server_http_params * params) {
    if (!params || params->port < 0 || params->port > 65535 || params->n_threads < 1 || params->max_body == 0) {
        http_log("invalid parameters (port %d, threads %d)", params ? params->port : -1, params ? params->n_threads : 0);
        return NULL;
    }
    struct server_http * http = calloc(1, sizeof(*http));
    if (!http) {
        return NULL;
    }
    http->params = *params;
    http->host = strdup(params->host && *params->host ? params->host : "127.0.0.1");
    if (params->n_api_keys > 0) {
        http->api_keys = calloc(params->n_api_keys, sizeof(char *));
    }
    bool ok = http->host && (params->n_api_keys == 0 || http->api_keys);
    for (size_t i = 0; ok && i < params->n_api_keys; i++) {
        http->api_keys[i] = strdup(params->api_keys[i] ? params->api_keys[i] : "");
        ok = http->api_keys[i] != NULL;
    }
    http->params.host     = http->host;
    http->params.api_keys = (const char * const *) http->api_keys;
    pthread_mutex_init(&http->streams_mu, NULL);
    pthread_mutex_init(&http->poller_mu, NULL);
    pthread_cond_init(&http->poller_cv, NULL);
    pthread_mutex_init(&http->jobs_mu, NULL);
    pthread_cond_init(&http->jobs_cv, NULL);
    pthread_cond_init(&http->workers_cv, NULL);
    atomic_init(&http->ready, false);
    if (!ok) {
        http_log("out of memory");
        server_http_free(http);
        return NULL;
    }
    return http;
}

bool server_http_route(struct server_http * http, const char * method, const char * path,
                       server_http_handler_t handler, void * user_data, bool is_public, bool during_load) {
    struct route * nr = realloc(http->routes, (http->n_routes + 1) * sizeof(*nr));
    if (!nr) {
        return false;
    }
    http->routes = nr;
    struct route * r = &nr[http->n_routes];
    r->method = strdup(method);
    r->path   = strdup(path);
    if (!r->method || !r->path) {
        free(r->method);
        free(r->path);
        return false;
    }
    r->handler     = handler;
    r->user_data   = user_data;
    r->is_public   = is_public;
    r->during_load = during_load;
    http->n_routes++;
    return true;
}

bool server_http_start(struct server_http * http) {
    struct addrinfo hints = { 0 };
    hints.ai_family   = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags    = AI_PASSIVE | AI_NUMERICSERV;
    char port_str[16];
    snprintf(port_str, sizeof(port_str), "%d", http->params.port);
    struct addrinfo * ai = NULL;
    const int gai = getaddrinfo(http->host, port_str, &hints, &ai);
    if (gai != 0 || !ai) {
        http_log("cannot resolve host '%s': %s", http->host, gai_strerror(gai));
        return false;
    }

    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6) {
        flags |= MHD_USE_IPv6;
    }
    // MHD warns about a pool of one: that is its single internal polling thread
    struct MHD_OptionItem pool_opt[] = {
        { http->params.n_threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, (intptr_t) http->params.n_threads, NULL },
        { MHD_OPTION_END, 0, NULL },
    };
    http->daemon = MHD_start_daemon(flags, (uint16_t) http->params.port, NULL, NULL, on_access, http,
                                    MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, http,
                                    MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                                    MHD_OPTION_ARRAY, pool_opt,
                                    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) (http->params.timeout_s > 0 ? http->params.timeout_s : 0),
                                    MHD_OPTION_CONNECTION_LIMIT, (unsigned int) 4096,
                                    MHD_OPTION_NOTIFY_COMPLETED, on_completed, http,
                                    MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!http->daemon) {
        http_log("cannot listen on %s:%d (address in use or not available)", http->host, http->params.port);
        return false;
    }
    const union MHD_DaemonInfo * di = MHD_get_daemon_info(http->daemon, MHD_DAEMON_INFO_BIND_PORT);
    http->port = di ? (int) di->port : http->params.port;

    http->stopping = false;
    if (pthread_create(&http->poller, NULL, poller_main, http) != 0) {
        http_log("cannot start the stream poller thread");
        MHD_stop_daemon(http->daemon);
        http->daemon = NULL;
        return false;
    }
    http->poller_running = true;
    return true;
}

int server_http_port(const struct server_http * http) {
    return http->port;
}

void server_http_set_ready(struct server_http * http, bool ready) {
    atomic_store(&http->ready, ready);
}

bool server_http_is_ready(const struct server_http * http) {
    return atomic_load(&http->ready);
}

void server_http_stop(struct server_http * http) {
    if (!http) {
        return;
    }
    if (http->poller_running) {
        pthread_mutex_lock(&http->poller_mu);
        http->stopping = true;
        pthread_cond_broadcast(&http->poller_cv);
        pthread_mutex_unlock(&http->poller_mu);
        pthread_join(http->poller, NULL);
        http->poller_running = false;
    }
    if (http->daemon) {
        // MHD must not be stopped with suspended connections: cancel and wake every stream, and let every
        // handler finish (the owner stops its task queue first, so waiting handlers return), first
        MHD_quiesce_daemon(http->daemon);
        streams_poll(http, true);
        jobs_drain(http); // every finished handler has resumed its connection
        MHD_stop_daemon(http->daemon);
        http->daemon = NULL;
    }
}

void server_http_free(struct server_http * http) {
    if (!http) {
        return;
    }
    server_http_stop(http);
    for (size_t i = 0; i < http->n_routes; i++) {
        free(http->routes[i].method);
        free(http->routes[i].path);
    }
    free(http->routes);
    if (http->api_keys) {
        for (size_t i = 0; i < http->params.n_api_keys; i++) {
            free(http->api_keys[i]);
        }
        free(http->api_keys);
    }
    free(http->host);
    pthread_mutex_destroy(&http->streams_mu);
    pthread_mutex_destroy(&http->poller_mu);
    pthread_cond_destroy(&http->poller_cv);
    pthread_mutex_destroy(&http->jobs_mu);
    pthread_cond_destroy(&http->jobs_cv);
    pthread_cond_destroy(&http->workers_cv);
    free(http);
}
