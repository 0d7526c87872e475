#include "server-queue.h"
#include "server-context.h" // server_grammar_lazy_free
#include "server-http.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

void server_queue_init(struct server_queue * q) {
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    q->head = q->tail = NULL;
    q->next_id = 0;
    q->running = true;
}

void server_queue_destroy(struct server_queue * q) {
    server_queue_stop(q);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
}

struct server_task * server_task_new(enum server_task_type type) {
    struct server_task * t = calloc(1, sizeof(*t));
    if (!t) {
        return NULL;
    }
    t->id      = -1;
    t->type    = type;
    t->id_slot = -1;
    t->refs    = 2;
    atomic_init(&t->cancelled, false);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    return t;
}

void server_task_release(struct server_task * t) {
    if (!t) {
        return;
    }
    pthread_mutex_lock(&t->mu);
    const int refs = --t->refs;
    pthread_mutex_unlock(&t->mu);
    if (refs == 0) {
        json_decref(t->data);
        json_decref(t->result);
        free(t->tokens);
        if (t->grammar_lazy) {
            server_grammar_lazy_free(t->grammar_lazy);
            free(t->grammar_lazy);
        }
        if (t->stream) {
            // never started (the server stopped first): end the response instead of leaving the client waiting
            server_http_stream_end(t->stream);
        }
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cv);
        free(t);
    }
}

void server_task_complete(struct server_task * t, json_t * result, int status) {
    pthread_mutex_lock(&t->mu);
    if (!t->done) {
        t->result = result;
        t->status = status;
        t->done   = true;
        result    = NULL;
    }
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    json_decref(result);
}

bool server_task_wait(struct server_task * t) {
    pthread_mutex_lock(&t->mu);
    while (!t->done) {
        pthread_cond_wait(&t->cv, &t->mu);
    }
    const bool ok = t->result != NULL;
    pthread_mutex_unlock(&t->mu);
    return ok;
}

bool server_task_wait_for(struct server_task * t, int timeout_ms) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until); // the condition variable's default clock
    until.tv_sec  += timeout_ms / 1000;
    until.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec  += 1;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&t->mu);
    int rc = 0;
    while (!t->done && rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&t->cv, &t->mu, &until);
    }
    const bool done = t->done;
    pthread_mutex_unlock(&t->mu);
    return done;
}

json_t * server_task_take_result(struct server_task * t) {
    pthread_mutex_lock(&t->mu);
    json_t * r = t->result;
    t->result = NULL;
    pthread_mutex_unlock(&t->mu);
    return r;
}

bool server_queue_post(struct server_queue * q, struct server_task * t) {
    pthread_mutex_lock(&q->mu);
    if (!q->running) {
        pthread_mutex_unlock(&q->mu);
        server_task_complete(t, NULL, 503);
        server_task_release(t);
        return false;
    }
    t->id   = q->next_id++;
    t->next = NULL;
    if (q->tail) {
        q->tail->next = t;
    } else {
        q->head = t;
    }
    q->tail = t;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return true;
}

struct server_task * server_queue_pop(struct server_queue * q, int timeout_ms) {
    pthread_mutex_lock(&q->mu);
    struct timespec deadline;
    if (timeout_ms >= 0) {
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec  += timeout_ms / 1000;
        deadline.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    while (q->running && !q->head) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&q->cv, &q->mu);
        } else if (pthread_cond_timedwait(&q->cv, &q->mu, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    struct server_task * t = NULL;
    if (q->running && q->head) {
        t = q->head;
        q->head = t->next;
        if (!q->head) {
            q->tail = NULL;
        }
        t->next = NULL;
    }
    pthread_mutex_unlock(&q->mu);
    return t;
}

void server_queue_stop(struct server_queue * q) {
    pthread_mutex_lock(&q->mu);
    q->running = false;
    struct server_task * t = q->head;
    q->head = q->tail = NULL;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    while (t) {
        struct server_task * next = t->next;
        server_task_complete(t, NULL, 503);
        server_task_release(t);
        t = next;
    }
}
