// Thin HTTP transport over libmicrohttpd: an internal epoll thread pool, keep-alive, a request body limit
// (413), CORS headers and OPTIONS preflight, Bearer API keys (401), and a "loading" gate (503) until the
// model is ready. Handlers run on handler threads (n_threads kept, more added on demand), never on MHD's polling
// threads, so a handler may wait for the inference thread without holding up other connections; a response
// that arrives piecewise is a stream (server_http_stream), whose connection is suspended (holding no thread)
// until data arrives. Suspended streams are checked every second so a client that went away is
// noticed (server_http_stream_write then returns false and the producer stops).
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct server_http;
struct server_http_stream;

struct server_http_params {
    const char * host;          // "127.0.0.1"; a name, an IPv4 or an IPv6 address
    int          port;          // 0 = any free port (see server_http_port)
    int          n_threads;     // worker threads (>= 1)
    int          timeout_s;     // idle connection timeout (read/write), seconds
    size_t       max_body;      // larger request bodies get 413
    const char * const * api_keys; // n_api_keys keys (copied); 0 = no authentication
    size_t       n_api_keys;
    bool         log_requests;  // one line per request: method, path, status
};

struct server_http_req {
    const char * method;
    const char * path;          // without the query string
    const char * body;          // NUL-terminated for convenience; body_len excludes the NUL
    size_t       body_len;
    void       * impl;          // transport's connection
};

#define SERVER_HTTP_MAX_HEADERS 8

struct server_http_res {
    int          status;        // 200 unless set
    const char * content_type;  // static string; default "application/json; charset=utf-8"
    char       * body;          // malloc'd; the transport frees it
    size_t       body_len;
    // when set, the response body is this stream's data (body is ignored); the transport holds one reference
    // and the handler must hand the creator's reference to a producer, which ends it
    struct server_http_stream * stream;
    // extra headers (names and values are copied by server_http_res_add_header)
    char * header_names [SERVER_HTTP_MAX_HEADERS];
    char * header_values[SERVER_HTTP_MAX_HEADERS];
    int    n_headers;
};

typedef void (*server_http_handler_t)(const struct server_http_req * req, struct server_http_res * res, void * user_data);

// request accessors (case-insensitive header names); NULL when absent
const char * server_http_req_header(const struct server_http_req * req, const char * name);
const char * server_http_req_query (const struct server_http_req * req, const char * name);

// true when the client of a request closed or reset its connection (checked without consuming data). A
// handler that waits on the HTTP thread for a long result (a non-streamed completion) polls this so that a
// client that gave up cancels its work, as llama.cpp's server does with is_connection_closed.
bool server_http_req_client_gone(const struct server_http_req * req);

// set the body to a copy of text (or take ownership of a malloc'd json dump with _take)
void server_http_res_set_text(struct server_http_res * res, int status, const char * content_type, const char * text);
void server_http_res_take_body(struct server_http_res * res, int status, char * body);
bool server_http_res_add_header(struct server_http_res * res, const char * name, const char * value);

// NULL (and one log line) on bad parameters or out of memory; nothing is bound yet
struct server_http * server_http_init(const struct server_http_params * params);

// register a handler for an exact method + path (a last segment ":name" matches any one segment, the handler
// reads it from req->path); false when out of memory.
// public routes skip the API key (llama.cpp: /health, /v1/health, /models, /v1/models);
// during_load routes answer before server_http_set_ready (others get 503 "Loading model")
bool server_http_route(struct server_http * http, const char * method, const char * path,
                       server_http_handler_t handler, void * user_data, bool is_public, bool during_load);

// bind and start serving; false with one log line (address in use, bad host, ...)
bool server_http_start(struct server_http * http);
// the bound port (after start)
int  server_http_port(const struct server_http * http);
void server_http_set_ready(struct server_http * http, bool ready);
bool server_http_is_ready(const struct server_http * http);
// stop accepting, end every stream, join the threads; safe to call twice
void server_http_stop(struct server_http * http);
void server_http_free(struct server_http * http);

// streams: created with two references (the transport's, once attached to a response, and the producer's)
struct server_http_stream * server_http_stream_create(struct server_http * http);
// append data; false when the client is gone (the producer should stop) or out of memory
bool server_http_stream_write(struct server_http_stream * stream, const char * data, size_t len);
// true once the client disconnected or the server is stopping
bool server_http_stream_cancelled(struct server_http_stream * stream);
// the producer is done: what was written is sent, then the response ends; releases the producer's reference
void server_http_stream_end(struct server_http_stream * stream);
