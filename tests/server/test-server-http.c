// server-http transport: streaming with suspend/resume (a waiting stream holds no worker thread), disconnect
// detection for parked streams, stop with streams still open, the body limit and routing, over real sockets
// on 127.0.0.1. Waits below are liveness limits (fail instead of hanging), not timing assertions.
#include "harness.h"
#include "server-http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int connect_port(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return -1;
    }
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t) port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = { .tv_sec = 30, .tv_usec = 0 }; // liveness limit
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *) &a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static bool send_all(int fd, const char * s, size_t n) {
    while (n > 0) {
        const ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0) {
            return false;
        }
        s += w;
        n -= (size_t) w;
    }
    return true;
}

// read until the peer closes (requests are sent with "Connection: close"); malloc'd, NUL-terminated
static char * read_all(int fd, size_t * len) {
    size_t cap = 4096, n = 0;
    char * buf = malloc(cap);
    for (;;) {
        if (n + 1024 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        const ssize_t r = recv(fd, buf + n, cap - n - 1, 0);
        if (r <= 0) {
            break;
        }
        n += (size_t) r;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

// the body of an HTTP/1.1 response with chunked transfer encoding, decoded; NULL if malformed
static char * dechunk(const char * resp) {
    const char * p = strstr(resp, "\r\n\r\n");
    if (!p) {
        return NULL;
    }
    p += 4;
    char * out = calloc(1, strlen(p) + 1);
    size_t o = 0;
    for (;;) {
        char * end = NULL;
        const unsigned long sz = strtoul(p, &end, 16);
        if (end == p || strncmp(end, "\r\n", 2) != 0) {
            free(out);
            return NULL;
        }
        p = end + 2;
        if (sz == 0) {
            break;
        }
        if (strlen(p) < sz + 2) {
            free(out);
            return NULL;
        }
        memcpy(out + o, p, sz);
        o += sz;
        p += sz + 2;
    }
    out[o] = '\0';
    return out;
}

static int http_status(const char * resp) {
    int st = 0;
    return sscanf(resp, "HTTP/1.1 %d", &st) == 1 ? st : 0;
}

static char * request(int port, const char * req, size_t * len) {
    const int fd = connect_port(port);
    if (fd < 0) {
        *len = 0;
        return calloc(1, 1);
    }
    send_all(fd, req, strlen(req));
    char * r = read_all(fd, len);
    close(fd);
    return r;
}

static void sleep_ms(int ms) {
    struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

// one response on a keep-alive connection (sized by Content-Length) into buf; false on timeout/close/overflow
static bool read_response(int fd, char * buf, size_t cap) {
    size_t n = 0;
    for (;;) {
        buf[n] = '\0';
        const char * end = strstr(buf, "\r\n\r\n");
        const char * cl  = strstr(buf, "Content-Length: ");
        if (end && cl && cl < end && n >= (size_t) (end + 4 - buf) + strtoul(cl + 16, NULL, 10)) {
            return true;
        }
        if (n + 1 >= cap) {
            return false;
        }
        const ssize_t r = recv(fd, buf + n, cap - n - 1, 0);
        if (r <= 0) {
            return false;
        }
        n += (size_t) r;
    }
}

// a client that sends its requests one after another on one keep-alive connection
#define BURST_CLIENTS  8
#define BURST_REQUESTS 50

struct burst_client {
    int port;
    int n_ok;
};

static void * burst_main(void * arg) {
    struct burst_client * bc = arg;
    const int fd = connect_port(bc->port);
    if (fd < 0) {
        return NULL;
    }
    static const char req[] = "POST /ping HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc";
    char buf[2048];
    for (int i = 0; i < BURST_REQUESTS; i++) {
        if (!send_all(fd, req, sizeof(req) - 1) || !read_response(fd, buf, sizeof(buf)) ||
            strncmp(buf, "HTTP/1.1 200", 12) != 0 || !strstr(buf, "{\"pong\":3}")) {
            break;
        }
        bc->n_ok++;
    }
    close(fd);
    return NULL;
}

//
// handlers
//

static void h_ping(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) ud;
    char buf[128];
    snprintf(buf, sizeof(buf), "{\"pong\":%zu}", req->body_len);
    server_http_res_set_text(res, 200, "application/json", buf);
}

// echoes the path it was routed with (a route with a ":name" segment)
static void h_path(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) ud;
    char buf[256];
    snprintf(buf, sizeof(buf), "{\"path\":\"%s\"}", req->path);
    server_http_res_set_text(res, 200, "application/json", buf);
}

// a handler that blocks like a non-streamed completion, polling whether its client is still there
static atomic_bool g_block_saw_gone;
static atomic_bool g_block_done;

static void h_block(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) ud;
    // "wait_ms" query: how long to wait for a disconnect before answering normally
    const char * w = server_http_req_query(req, "wait_ms");
    const int wait_ms = w ? atoi(w) : 100;
    bool gone = false;
    for (int i = 0; i < wait_ms && !gone; i++) {
        gone = server_http_req_client_gone(req);
        sleep_ms(1);
    }
    atomic_store(&g_block_saw_gone, gone);
    atomic_store(&g_block_done, true);
    server_http_res_set_text(res, 200, "application/json", gone ? "{\"gone\":true}" : "{\"gone\":false}");
}

// the stream producers: the test controls when each one writes
struct producer {
    struct server_http_stream * stream;
    atomic_int  step;        // set by the test: how many chunks may be written
    atomic_bool stop;        // ask the producer to finish
    atomic_bool saw_cancel;  // the producer noticed the client was gone
    atomic_bool write_failed;
    atomic_bool finished;
    atomic_bool started;     // the handler created the producer thread (set after pthread_create)
    pthread_t   thread;
};

static struct producer g_prod;
static struct server_http * g_http;

static void * producer_main(void * arg) {
    struct producer * p = arg;
    int written = 0;
    for (int iter = 0; iter < 30000 && !atomic_load(&p->stop); iter++) { // 30 s liveness limit
        if (server_http_stream_cancelled(p->stream)) {
            atomic_store(&p->saw_cancel, true);
            break;
        }
        if (written < atomic_load(&p->step)) {
            char chunk[32];
            snprintf(chunk, sizeof(chunk), "data: %d\n\n", written + 1);
            if (!server_http_stream_write(p->stream, chunk, strlen(chunk))) {
                atomic_store(&p->write_failed, true);
                break;
            }
            written++;
            continue;
        }
        sleep_ms(1);
    }
    server_http_stream_end(p->stream);
    atomic_store(&p->finished, true);
    return NULL;
}

static void h_stream(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    (void) ud;
    // g_prod was reset by the test before it sent the request
    struct server_http_stream * s = server_http_stream_create(g_http);
    g_prod.stream = s;
    res->status = 200;
    res->content_type = "text/event-stream";
    res->stream = s;
    pthread_create(&g_prod.thread, NULL, producer_main, &g_prod);
    atomic_store(&g_prod.started, true);
}

static void prod_reset(void) {
    g_prod.stream = NULL;
    atomic_store(&g_prod.step, 0);
    atomic_store(&g_prod.stop, false);
    atomic_store(&g_prod.saw_cancel, false);
    atomic_store(&g_prod.write_failed, false);
    atomic_store(&g_prod.finished, false);
    atomic_store(&g_prod.started, false);
}

static bool wait_flag(atomic_bool * f);

static void prod_join(void) {
    if (wait_flag(&g_prod.started)) {
        pthread_join(g_prod.thread, NULL);
    }
}

static bool wait_flag(atomic_bool * f) {
    for (int i = 0; i < 30000 && !atomic_load(f); i++) { // 30 s liveness limit
        sleep_ms(1);
    }
    return atomic_load(f);
}

int main(void) {
    // one worker thread: a parked stream must not keep other requests waiting
    struct server_http_params hp = {
        .host = "127.0.0.1", .port = 0, .n_threads = 1, .timeout_s = 30, .max_body = 1024,
    };
    g_http = server_http_init(&hp);
    TH_CHECK(g_http != NULL, "init");
    if (!g_http) {
        return th_finish();
    }
    server_http_route(g_http, "POST", "/ping", h_ping, NULL, false, false);
    server_http_route(g_http, "GET", "/stream", h_stream, NULL, false, false);
    server_http_route(g_http, "GET", "/early", h_ping, NULL, false, true);
    server_http_route(g_http, "GET", "/block", h_block, NULL, false, false);
    server_http_route(g_http, "POST", "/item/:id", h_path, NULL, false, false);
    TH_CHECK(server_http_start(g_http), "start");
    const int port = server_http_port(g_http);
    TH_CHECK(port > 0, "bound port %d", port);

    size_t len = 0;
    char * r;

    // loading gate: 503 except for during_load routes
    r = request(port, "POST /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", &len);
    TH_CHECK(http_status(r) == 503 && strstr(r, "\"Loading model\"") && strstr(r, "unavailable_error"), "gate: %s", r);
    free(r);
    r = request(port, "GET /early HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &len);
    TH_CHECK(http_status(r) == 200, "during_load route: %s", r);
    free(r);
    server_http_set_ready(g_http, true);

    r = request(port, "POST /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello", &len);
    TH_CHECK(http_status(r) == 200 && strstr(r, "{\"pong\":5}"), "ping: %s", r);
    free(r);
    r = request(port, "POST /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2000\r\n\r\n", &len);
    TH_CHECK(http_status(r) == 413 && strstr(r, "\"code\":413"), "body limit: %s", r);
    free(r);
    r = request(port, "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &len);
    TH_CHECK(http_status(r) == 404 && strstr(r, "not_found_error"), "404: %s", r);
    free(r);
    // a ":name" segment matches exactly one non-empty segment (llama.cpp's "/slots/:id_slot")
    r = request(port, "POST /item/42?action=x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                      "Content-Length: 0\r\n\r\n", &len);
    TH_CHECK(http_status(r) == 200 && strstr(r, "{\"path\":\"/item/42\"}"), "param route: %s", r);
    free(r);
    const char * no_match[] = { "/item/", "/item", "/item/4/2", "/items/4" };
    for (size_t i = 0; i < sizeof(no_match) / sizeof(no_match[0]); i++) {
        char q[256];
        snprintf(q, sizeof(q), "POST %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
                 no_match[i]);
        r = request(port, q, &len);
        TH_CHECK(http_status(r) == 404, "param route does not match %s: %s", no_match[i], r);
        free(r);
    }

    // handlers that finish at once, many at a time: each one's resume can come while MHD's thread is still inside
    // the callback that suspended the connection, and keep-alive suspends the same connection again right after.
    // Every request must be answered (a lost or stale resume leaves one parked until the 30 s liveness limit).
    {
        struct burst_client bc[BURST_CLIENTS];
        pthread_t th[BURST_CLIENTS];
        for (int i = 0; i < BURST_CLIENTS; i++) {
            bc[i] = (struct burst_client) { .port = port, .n_ok = 0 };
            pthread_create(&th[i], NULL, burst_main, &bc[i]);
        }
        int n_ok = 0;
        for (int i = 0; i < BURST_CLIENTS; i++) {
            pthread_join(th[i], NULL);
            n_ok += bc[i].n_ok;
        }
        TH_CHECK(n_ok == BURST_CLIENTS * BURST_REQUESTS, "keep-alive burst: %d of %d requests answered", n_ok,
                 BURST_CLIENTS * BURST_REQUESTS);
    }

    // a blocked handler sees its client leave (and only then)
    {
        atomic_store(&g_block_done, false);
        r = request(port, "GET /block?wait_ms=100 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &len);
        TH_CHECK(http_status(r) == 200 && strstr(r, "{\"gone\":false}"), "client present: %s", r);
        free(r);
        atomic_store(&g_block_done, false);
        const int fd = connect_port(port);
        const char * req = "GET /block?wait_ms=20000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        send_all(fd, req, strlen(req));
        sleep_ms(50);
        // the waiting handler holds no polling thread (the server has one): others are answered at once
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        char * other = request(port, "POST /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", &len);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double el = (double) (t1.tv_sec - t0.tv_sec) + 1e-9 * (double) (t1.tv_nsec - t0.tv_nsec);
        TH_CHECK(http_status(other) == 200 && el < 5.0, "request served beside a waiting handler (%.3f s): %s", el, other);
        free(other);
        close(fd);
        TH_CHECK(wait_flag(&g_block_done), "blocked handler returned");
        TH_CHECK(atomic_load(&g_block_saw_gone), "blocked handler saw its client leave");
    }

    // 1. a stream that waits for its producer, while the single worker still serves other requests
    {
        prod_reset();
        const int fd = connect_port(port);
        TH_CHECK(fd >= 0, "connect");
        const char * req = "GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        send_all(fd, req, strlen(req));
        atomic_store(&g_prod.step, 1);
        // the stream now holds its first chunk and then parks; ask something else meanwhile
        sleep_ms(50);
        char * other = request(port, "POST /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", &len);
        TH_CHECK(http_status(other) == 200, "request served while a stream waits: %s", other);
        free(other);
        atomic_store(&g_prod.step, 3);
        sleep_ms(20);
        atomic_store(&g_prod.stop, true);
        char * resp = read_all(fd, &len);
        close(fd);
        prod_join();
        TH_CHECK(http_status(resp) == 200, "stream status: %.200s", resp);
        TH_CHECK(strstr(resp, "Content-Type: text/event-stream") != NULL, "stream content type");
        char * body = dechunk(resp);
        TH_CHECK(body && strcmp(body, "data: 1\n\ndata: 2\n\ndata: 3\n\n") == 0, "stream body: %s", body ? body : "(bad)");
        TH_CHECK(!atomic_load(&g_prod.saw_cancel) && !atomic_load(&g_prod.write_failed), "stream not cancelled");
        free(body);
        free(resp);
    }

    // 2. the client goes away while the stream is parked: the producer learns it
    {
        prod_reset();
        const int fd = connect_port(port);
        const char * req = "GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        send_all(fd, req, strlen(req));
        atomic_store(&g_prod.step, 1);
        char buf[256];
        const ssize_t got = recv(fd, buf, sizeof(buf) - 1, 0); // headers and the first chunk
        TH_CHECK(got > 0, "first chunk before disconnect");
        close(fd);
        const bool noticed = wait_flag(&g_prod.saw_cancel);
        TH_CHECK(noticed, "disconnect of a parked stream noticed");
        atomic_store(&g_prod.stop, true);
        prod_join();
    }

    // 3. stop while a stream is parked: no hang, the producer's next write fails
    {
        prod_reset();
        const int fd = connect_port(port);
        const char * req = "GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        send_all(fd, req, strlen(req));
        atomic_store(&g_prod.step, 1);
        char buf[256];
        TH_CHECK(recv(fd, buf, sizeof(buf) - 1, 0) > 0, "first chunk before stop");
        server_http_stop(g_http);
        atomic_store(&g_prod.step, 2);
        const bool ended = wait_flag(&g_prod.finished);
        TH_CHECK(ended, "producer ended after stop");
        TH_CHECK(atomic_load(&g_prod.saw_cancel) || atomic_load(&g_prod.write_failed), "producer saw the stop");
        prod_join();
        close(fd);
    }

    server_http_free(g_http);
    return th_finish();
}
