// The task queue between the HTTP threads and the one inference thread. HTTP handlers post tasks; the
// inference thread pops them, does the work that touches the model/context/slots, and completes each task
// with a JSON result the waiting handler turns into a response (or, for streams, writes to the stream).
#pragma once

#include <jansson.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum server_task_type {
    SERVER_TASK_TYPE_METRICS,   // snapshot of slots + counters (GET /slots, GET /metrics)
    SERVER_TASK_TYPE_COMPLETION, // prompt processing + generation on a slot
    SERVER_TASK_TYPE_EMBEDDING,  // --embedding: one request's inputs, decoded at once
    SERVER_TASK_TYPE_SLOT_ACTION // POST /slots/{id}: save / restore / erase a slot's prompt cache
};

struct server_task {
    int      id;
    enum server_task_type type;
    int      id_slot;           // -1 = any
    json_t * data;              // request data (owned by the task)
    bool     reset_bucket;      // METRICS: reset the per-interval metrics after the snapshot

    // set by the HTTP thread when the client of a waited-for task went away: the inference thread drops the
    // task (frees its slot) at its next step instead of finishing work nobody reads
    atomic_bool cancelled;

    // completion by the inference thread
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    bool     done;
    int      refs;              // the poster's and the queue's
    json_t * result;            // owned by the task; NULL = the server stopped before it ran
    int      status;            // HTTP status the result stands for

    // COMPLETION: the prompt tokenized by the HTTP thread, and the stream a streamed request writes to
    // (the producer's reference, ended by the inference thread; NULL when not streamed)
    int32_t * tokens;
    size_t    n_tokens;
    struct server_http_stream * stream;
    // COMPLETION: the request's lazy grammar (grammar_lazy / grammar_triggers / preserved_tokens, or the chat
    // format's), read once by the HTTP thread; owned, NULL = none (server-grammar.c)
    struct server_grammar_lazy * grammar_lazy;
    struct server_task * next;
};

struct server_queue {
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    struct server_task * head, * tail;
    int  next_id;
    bool running;
};

void server_queue_init(struct server_queue * q);
void server_queue_destroy(struct server_queue * q);

// a new task holding two references (the caller's and the one server_queue_post hands to the queue)
struct server_task * server_task_new(enum server_task_type type);
void server_task_release(struct server_task * task);

// false when the queue stopped (the queue's reference is dropped then)
bool server_queue_post(struct server_queue * q, struct server_task * task);
// the next task, waiting up to timeout_ms (< 0: until one arrives or the queue stops); NULL on timeout/stop.
// The caller owns the queue's reference and must complete and release the task.
struct server_task * server_queue_pop(struct server_queue * q, int timeout_ms);
// stop: pending tasks are completed with no result and later posts fail
void server_queue_stop(struct server_queue * q);

// inference thread: publish the result (ownership taken) and wake the poster
void server_task_complete(struct server_task * task, json_t * result, int status);
// HTTP thread: wait for the result; true when one arrived (then task->result / task->status are set)
bool server_task_wait(struct server_task * task);
// HTTP thread: wait at most timeout_ms for the task to be completed (with or without a result); true when it is
bool server_task_wait_for(struct server_task * task, int timeout_ms);
// HTTP thread, after server_task_wait: take ownership of the result. jansson's reference counts are not
// safe to share between threads, so a result is handed over whole instead of being referenced twice.
json_t * server_task_take_result(struct server_task * task);
