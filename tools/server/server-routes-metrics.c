// Handing a task to the inference thread and waiting for it (server_run_task), and GET /slots and GET /metrics:
// the handlers post a METRICS task; the inference thread answers it with a snapshot of the slots and counters.
#include "server-context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// posts t to the inference thread and waits for it (the caller's reference is released): its result, with
// its status in *status; NULL (response set) when the server is shutting down
json_t * server_run_task(struct server_context * sc, struct server_task * t, int * status,
                         const struct server_http_req * req, struct server_http_res * res) {
    if (req && server_http_req_client_gone(req)) {
        atomic_store(&t->cancelled, true); // already gone (a burst of dropped requests): no work is started
    }
    server_queue_post(&sc->queue, t); // on failure the task is completed without a result
    // poll the client while waiting (llama.cpp checks once a second; a peek costs one syscall, and a shorter
    // period frees the HTTP thread sooner): one that went away cancels the task, which the inference thread
    // then completes at its next step
    while (!server_task_wait_for(t, 200)) {
        if (req && !atomic_load(&t->cancelled) && server_http_req_client_gone(req)) {
            atomic_store(&t->cancelled, true);
        }
    }
    json_t * out = NULL;
    if (server_task_wait(t)) {
        *status = t->status;
        out = server_task_take_result(t);
    } else {
        server_res_err(res, "the server is shutting down", ERROR_TYPE_UNAVAILABLE);
    }
    server_task_release(t);
    return out;
}

// server_run_task, then the result as the JSON response with the task's status
void server_respond_task(struct server_context * sc, struct server_task * t, const struct server_http_req * req,
                         struct server_http_res * res) {
    int status = 200;
    json_t * r = server_run_task(sc, t, &status, req, res);
    if (!r) {
        return;
    }
    char * out = sj_dumps(r);
    json_decref(r);
    if (!out) {
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    server_http_res_take_body(res, status, out);
}

// post a METRICS task and wait for the inference thread's snapshot; NULL (response set) on failure
static json_t * fetch_metrics(struct server_context * sc, bool reset_bucket, struct server_http_res * res) {
    struct server_task * t = server_task_new(SERVER_TASK_TYPE_METRICS);
    if (!t) {
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return NULL;
    }
    t->reset_bucket = reset_bucket;
    int status = 200;
    return server_run_task(sc, t, &status, NULL, res);
}

void server_handle_slots(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    if (!sc->params.endpoint_slots) {
        server_res_err(res, "This server does not support slots endpoint. Start it with `--slots`", ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    json_t * m = fetch_metrics(sc, false, res);
    if (!m) {
        return;
    }
    const char * fail = server_http_req_query(req, "fail_on_no_slot");
    if (fail && *fail && json_integer_value(json_object_get(m, "idle")) == 0) {
        json_decref(m);
        server_res_err(res, "no slot available", ERROR_TYPE_UNAVAILABLE);
        return;
    }
    char * body = sj_dumps(json_object_get(m, "slots"));
    json_decref(m);
    if (!body) {
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    server_http_res_take_body(res, 200, body);
}

struct prom_buf {
    char * s;
    size_t len;
    size_t cap;
    bool   oom;
};

static void prom_add(struct prom_buf * b, const char * name, const char * type, const char * help, double value) {
    char line[512];
    int n;
    if (value == (double) (int64_t) value) {
        n = snprintf(line, sizeof(line), "# HELP llamacpp:%s %s\n# TYPE llamacpp:%s %s\nllamacpp:%s %lld\n",
                     name, help, name, type, name, (long long) value);
    } else {
        n = snprintf(line, sizeof(line), "# HELP llamacpp:%s %s\n# TYPE llamacpp:%s %s\nllamacpp:%s %.9g\n",
                     name, help, name, type, name, value);
    }
    if (n < 0 || (size_t) n >= sizeof(line) || b->oom) {
        b->oom = true;
        return;
    }
    if (b->len + (size_t) n + 1 > b->cap) {
        const size_t cap = (b->cap ? b->cap * 2 : 2048) + (size_t) n;
        char * ns = realloc(b->s, cap);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, line, (size_t) n + 1);
    b->len += (size_t) n;
}

static double jnum(const json_t * o, const char * key) {
    return json_number_value(json_object_get(o, key));
}

void server_handle_metrics(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    struct server_context * sc = ud;
    if (!sc->params.endpoint_metrics) {
        server_res_err(res, "This server does not support metrics endpoint. Start it with `--metrics`",
                ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    json_t * m = fetch_metrics(sc, true, res);
    if (!m) {
        return;
    }
    const double n_prompt = jnum(m, "n_prompt_tokens_processed");
    const double t_prompt = jnum(m, "t_prompt_processing");
    const double n_gen    = jnum(m, "n_tokens_predicted");
    const double t_gen    = jnum(m, "t_tokens_generation");
    const double n_decode = jnum(m, "n_decode_total");
    const double n_busy   = jnum(m, "n_busy_slots_total");

    struct prom_buf b = { 0 };
    prom_add(&b, "prompt_tokens_total", "counter", "Number of prompt tokens processed.",
             jnum(m, "n_prompt_tokens_processed_total"));
    prom_add(&b, "prompt_seconds_total", "counter", "Prompt process time",
             jnum(m, "t_prompt_processing_total") / 1.e3);
    prom_add(&b, "tokens_predicted_total", "counter", "Number of generation tokens processed.",
             jnum(m, "n_tokens_predicted_total"));
    prom_add(&b, "tokens_predicted_seconds_total", "counter", "Predict process time",
             jnum(m, "t_tokens_generation_total") / 1.e3);
    prom_add(&b, "n_decode_total", "counter", "Total number of llama_decode() calls", n_decode);
    prom_add(&b, "n_tokens_max", "counter", "Largest observed n_tokens.", jnum(m, "n_tokens_max"));
    prom_add(&b, "n_busy_slots_per_decode", "counter", "Average number of busy slots per llama_decode() call",
             n_decode > 0 ? n_busy / n_decode : 0.0);
    prom_add(&b, "prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.",
             t_prompt > 0 ? 1.e3 / t_prompt * n_prompt : 0.0);
    prom_add(&b, "predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.",
             t_gen > 0 ? 1.e3 / t_gen * n_gen : 0.0);
    prom_add(&b, "requests_processing", "gauge", "Number of requests processing.", jnum(m, "processing"));
    prom_add(&b, "requests_deferred", "gauge", "Number of requests deferred.", jnum(m, "deferred"));

    char start[32];
    snprintf(start, sizeof(start), "%lld", (long long) json_integer_value(json_object_get(m, "t_start")));
    json_decref(m);
    if (b.oom) {
        free(b.s);
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    free(res->body);
    res->status       = 200;
    res->content_type = "text/plain; version=0.0.4";
    res->body         = b.s;
    res->body_len     = b.len;
    server_http_res_add_header(res, "Process-Start-Time-Unix", start);
}
//
// inference thread
//

static json_t * slot_to_json(const struct server_slot * s) {
    return json_pack("{s:i, s:i, s:i, s:b, s:b, s:o, s:s, s:[{s:b, s:b, s:i, s:i, s:s}]}",
                     "id",            s->id,
                     "id_task",       s->id_task,
                     "n_ctx",         s->n_ctx,
                     "speculative",   (int) (s->spec != NULL),
                     "is_processing", (int) (s->state != SLOT_STATE_IDLE),
                     "params",        server_slot_params_to_json(&s->params),
                     "prompt",        "",
                     "next_token",
                         "has_next_token", (int) s->has_next_token,
                         "has_new_line",   (int) s->has_new_line,
                         "n_remain",       s->n_remain,
                         "n_decoded",      s->n_decoded,
                         "stopping_word",  "");
}

void server_process_metrics_task(struct server_context * sc, struct server_task * t) {
    json_t * slots = json_array();
    int n_idle = 0, n_processing = 0;
    for (int i = 0; i < sc->n_slots; i++) {
        const struct server_slot * s = &sc->slots[i];
        if (s->state == SLOT_STATE_IDLE) {
            n_idle++;
        } else {
            n_processing++;
        }
        json_array_append_new(slots, slot_to_json(s));
    }
    struct server_metrics * m = &sc->metrics;
    json_t * out = json_pack("{s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
                             "idle",       n_idle,
                             "processing", n_processing,
                             "deferred",   0,
                             "t_start",    (json_int_t) m->t_start,
                             "n_prompt_tokens_processed_total", (json_int_t) m->n_prompt_tokens_processed_total,
                             "t_prompt_processing_total",       (json_int_t) m->t_prompt_processing_total,
                             "n_tokens_predicted_total",        (json_int_t) m->n_tokens_predicted_total,
                             "t_tokens_generation_total",       (json_int_t) m->t_tokens_generation_total,
                             "n_prompt_tokens_processed",       (json_int_t) m->n_prompt_tokens_processed,
                             "t_prompt_processing",             (json_int_t) m->t_prompt_processing,
                             "n_tokens_predicted",              (json_int_t) m->n_tokens_predicted,
                             "t_tokens_generation",             (json_int_t) m->t_tokens_generation,
                             "n_decode_total",                  (json_int_t) m->n_decode_total,
                             "n_busy_slots_total",              (json_int_t) m->n_busy_slots_total,
                             "n_tokens_max",                    (json_int_t) m->n_tokens_max,
                             "slots", slots);
    if (t->reset_bucket) {
        m->n_prompt_tokens_processed = 0;
        m->t_prompt_processing       = 0;
        m->n_tokens_predicted        = 0;
        m->t_tokens_generation       = 0;
    }
    server_task_complete(t, out, out ? 200 : 500);
}
