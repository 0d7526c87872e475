// llama-server: llama.cpp's HTTP API over libllama. This file: startup (parameters, model, draft model,
// context, slots), the routes, the inference loop and shutdown; the rest lives in the server-*.c files (see
// server-context.h for who does what).
//
// The main thread loads the model (HTTP answers 503 "Loading model" meanwhile) and then runs the inference
// loop, the only place that touches slots and the llama_context.
#include "server-context.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void inference_loop(struct server_context * sc) {
    while (!atomic_load(&sc->shutting_down)) {
        // busy slots: take what arrived without waiting, then decode; idle: sleep until a task arrives. Deferred
        // tasks count as work: when the last busy slots are freed in a step (finished, or their clients left),
        // the tasks waiting for them must be assigned now, not when some unrelated request wakes the queue
        int wait_ms = server_any_busy(sc) || sc->deferred_head ? 0 : -1;
        struct server_task * t;
        while ((t = server_queue_pop(&sc->queue, wait_ms)) != NULL) {
            wait_ms = 0;
            switch (t->type) {
                case SERVER_TASK_TYPE_METRICS:
                    server_process_metrics_task(sc, t);
                    server_task_release(t);
                    break;
                case SERVER_TASK_TYPE_EMBEDDING:
                    server_process_embedding_task(sc, t);
                    server_task_release(t);
                    break;
                case SERVER_TASK_TYPE_SLOT_ACTION:  // runs when its slot is idle, in arrival order with completions
                case SERVER_TASK_TYPE_COMPLETION:
                default:
                    server_queue_deferred(sc, t); // joins the running batch as soon as a slot is free
                    break;
            }
        }
        server_assign_deferred(sc);
        if (server_any_busy(sc)) {
            server_inference_step(sc);
        }
    }
    for (int i = 0; i < sc->n_slots; i++) {
        if (sc->slots[i].state != SLOT_STATE_IDLE) {
            server_task_fail(sc->slots[i].task, "the server is shutting down", ERROR_TYPE_UNAVAILABLE);
            server_slot_release(sc, &sc->slots[i]);
        }
    }
    while (sc->deferred_head) {
        struct server_task * dt = sc->deferred_head;
        sc->deferred_head = dt->next;
        server_task_fail(dt, "the server is shutting down", ERROR_TYPE_UNAVAILABLE);
        server_task_release(dt);
    }
    sc->deferred_tail = NULL;
}

//
// startup / shutdown
//

static struct server_context * g_sc = NULL;
static atomic_bool g_exiting; // main is done: the next signal only wakes the signal thread

static void * signal_thread(void * arg) {
    sigset_t * set = arg;
    int sig = 0;
    int n_signals = 0;
    while (sigwait(set, &sig) == 0) {
        if (atomic_load(&g_exiting)) {
            break;
        }
        if (sig != SIGINT && sig != SIGTERM) {
            continue;
        }
        if (++n_signals > 1) {
            // as llama.cpp: a second interrupt ends a server that does not stop by itself
            fprintf(stderr, "Received second interrupt, terminating immediately.\n");
            _exit(1);
        }
        SRV_INF("%s: received signal %d, shutting down\n", __func__, sig);
        atomic_store(&g_sc->shutting_down, true);
        server_queue_stop(&g_sc->queue);
    }
    return NULL;
}

static bool load_progress(float progress, void * ud) {
    (void) progress;
    const struct server_context * sc = ud;
    return !atomic_load(&sc->shutting_down);
}

static bool load_model(struct server_context * sc) {
    // the model options of the command line (--mmap/--mlock, --override-kv, --check-tensors, ...), as the
    // other programs take them
    struct llama_model_params mp = common_model_params_to_llama(&sc->params);
    mp.progress_callback           = load_progress;
    mp.progress_callback_user_data = sc;
    sc->model = llama_model_load_from_file(sc->params.model.path, mp);
    if (!sc->model) {
        return false;
    }
    sc->vocab = llama_model_get_vocab(sc->model);
    // llama.cpp: the (smallest) -a alias, else the file name without its directories
    sc->model_name = server_model_name(&sc->params);
    if (!sc->model_name) {
        return false;
    }

    if (sc->params.pooling_type == LLAMA_POOLING_TYPE_RANK) {
        // --reranking / --pooling rank: libllama has no rank pooling (a reranker's classification head), so no
        // model can rank here; refuse rather than serve scores that mean nothing
        SRV_ERR("%s: reranking (--reranking / --pooling rank) is not supported: this libllama has no rank pooling, "
                "so the model '%s' cannot rank\n", __func__, sc->params.model.path);
        return false;
    }

    // the context options every program shares (rope/yarn, attention type, swa_full, no_perf, ...), then the
    // server's own choices below
    struct llama_context_params cp = common_context_params_to_llama(&sc->params);
    cp.n_ctx      = (uint32_t) (sc->params.n_ctx > 0 ? sc->params.n_ctx : 0);
    cp.n_batch    = (uint32_t) sc->params.n_batch;
    cp.n_ubatch   = (uint32_t) sc->params.n_ubatch;
    cp.n_seq_max  = (uint32_t) sc->params.n_parallel;
    cp.kv_unified = sc->params.kv_unified;
    cp.flash_attn_type = (enum llama_flash_attn_type) sc->params.flash_attn_type;
    cp.type_k     = (enum ggml_type) sc->params.cache_type_k;
    cp.type_v     = (enum ggml_type) sc->params.cache_type_v;
    cp.embeddings = sc->params.embedding;
    // the draft model and n_draft_max first: the target's output budget depends on them
    if (!server_spec_load(sc)) {
        return false;
    }
    // output budget (llama.cpp's server_output_limits): a pooled or embedding context outputs per sequence;
    // otherwise each slot may verify 1 + n_draft tokens in one batch
    if (sc->params.embedding ||
        (sc->params.pooling_type != LLAMA_POOLING_TYPE_UNSPECIFIED && sc->params.pooling_type != LLAMA_POOLING_TYPE_NONE)) {
        cp.n_outputs_max         = (uint32_t) sc->params.n_batch;
        cp.n_outputs_max_per_seq = 1;
    } else {
        const struct common_speculative_output_limits lim =
            common_speculative_get_output_limits(sc->params.n_batch, sc->params.n_parallel, sc->n_draft_max);
        cp.n_outputs_max         = (uint32_t) (lim.total   > 1 ? lim.total   : 1);
        cp.n_outputs_max_per_seq = (uint32_t) (lim.per_seq > 1 ? lim.per_seq : 1);
    }
    cp.pooling_type = (enum llama_pooling_type) sc->params.pooling_type;
    if (sc->params.embedding) {
        // a pooled sequence has to fit one ubatch
        cp.n_ubatch = cp.n_batch;
    }
    // -t / -tb, resolved by the parser (default: the physical cores; -tb: same as -t)
    if (sc->params.cpuparams.n_threads > 0) {
        cp.n_threads = sc->params.cpuparams.n_threads;
    }
    if (sc->params.cpuparams_batch.n_threads > 0) {
        cp.n_threads_batch = sc->params.cpuparams_batch.n_threads;
    }
    sc->ctx = llama_init_from_model(sc->model, cp);
    if (!sc->ctx) {
        SRV_ERR("%s: failed to create the llama_context\n", __func__);
        return false;
    }
    // --control-vector*: every slot decodes with them. The LoRA adapters are the server's own (server-lora.c):
    // each slot may run its own scales, set on the context per decode
    {
        struct common_params cv_only = sc->params; // shallow: only read
        cv_only.n_lora_adapters = 0;
        if (!common_adapters_apply(&cv_only, sc->model, sc->ctx)) {
            SRV_ERR("%s: failed to apply the control vectors\n", __func__);
            return false;
        }
    }
    if (!server_lora_load(sc)) {
        SRV_ERR("%s: failed to load the LoRA adapters\n", __func__);
        return false;
    }
    sc->n_ctx      = (int) llama_n_ctx(sc->ctx);
    sc->n_ctx_slot = (int) llama_n_ctx_seq(sc->ctx);
    if (!sc->params.kv_unified && sc->params.n_parallel > 1 && sc->n_ctx_slot == sc->n_ctx) {
        sc->n_ctx_slot = sc->n_ctx / sc->params.n_parallel;
    }
    if (sc->n_ctx_slot < 1) {
        SRV_ERR("%s: context size %d is too small for %d slots\n", __func__, sc->n_ctx, sc->params.n_parallel);
        return false;
    }
    if (sc->params.ctx_shift && !llama_memory_can_shift(llama_get_memory(sc->ctx))) {
        // as llama.cpp: a memory that cannot shift positions (recurrent, M-RoPE, ...) turns the option off
        SRV_WRN("%s: the context does not support context shift, disabling it\n", __func__);
        sc->params.ctx_shift = false;
    }
    if (sc->params.n_cache_reuse > 0 && !llama_memory_can_shift(llama_get_memory(sc->ctx))) {
        // --cache-reuse moves reused chunks to their new positions: the same ability, the same rule
        SRV_WRN("%s: the context does not support cache reuse, disabling it\n", __func__);
        sc->params.n_cache_reuse = 0;
    }
    sc->n_batch = (int) llama_n_batch(sc->ctx);
    sc->batch = llama_batch_init(sc->n_batch, 0, 1);

    sc->n_slots = sc->params.n_parallel;
    sc->slots = calloc((size_t) sc->n_slots, sizeof(struct server_slot));
    if (!sc->slots) {
        return false;
    }
    for (int i = 0; i < sc->n_slots; i++) {
        struct server_slot * s = &sc->slots[i];
        s->id             = i;
        s->id_task        = -1;
        s->n_ctx          = sc->n_ctx_slot;
        s->state          = SLOT_STATE_IDLE;
        s->params         = server_slot_params_from_common(&sc->params);
        s->has_next_token = true;
        s->n_remain       = -1;
        s->i_batch        = -1;
        s->params.speculative_n_max = sc->n_draft_max;
        s->params.speculative_n_min = sc->params.speculative.draft.n_min;
        s->params.speculative_p_min = sc->params.speculative.draft.p_min;
        if (!server_spec_init_slot(sc, s)) {
            return false;
        }
        if (sc->n_lora > 0) {
            s->lora = calloc((size_t) sc->n_lora, sizeof(float));
            if (!s->lora) {
                return false;
            }
            server_lora_global(sc, s->lora);
        }
        s->params.lora   = s->lora;
        s->params.n_lora = sc->n_lora;
    }

    // chat template: --chat-template, else the model's, else llama.cpp's fallback (chatml)
    const char * tmpl = sc->params.chat_template ? sc->params.chat_template : llama_model_chat_template(sc->model, NULL);
    sc->chat_template = strdup(tmpl ? tmpl : "chatml");
    if (!sc->chat_template) {
        return false;
    }
#ifdef LLAMA_SERVER_HAVE_CHAT
    {
        if (sc->params.use_jinja && tmpl) {
            sc->chat_jinja = server_chat_jinja_init(sc, tmpl);
        }
        // refuse to start with a template we cannot format, as llama.cpp does
        const struct llama_chat_message probe[] = { { "user", "test" } };
        char buf[256];
        if (llama_chat_apply_template(sc->chat_template, probe, 1, true, buf, (int32_t) sizeof(buf)) < 0) {
            if (sc->chat_jinja) {
                // the built-in formatter only backs up a failing Jinja rendering; /props still shows the text
                sc->has_chat = true;
                return true;
            }
            if (sc->params.chat_template) {
                SRV_ERR("%s: the chat template '%s' is not supported\n", __func__, sc->params.chat_template);
                return false;
            }
            SRV_WRN("%s: the model's chat template is not supported, using chatml\n", __func__);
            free(sc->chat_template);
            sc->chat_template = strdup("chatml");
            if (!sc->chat_template) {
                return false;
            }
        }
        sc->has_chat = true;
    }
#endif
    return true;
}

// a route under --api-prefix (llama.cpp registers every path as api_prefix + path)
static bool route(struct server_context * sc, const char * method, const char * path, server_http_handler_t fn,
                  void * user_data, bool is_public, bool during_load) {
    char full[512];
    const int n = snprintf(full, sizeof(full), "%s%s", sc->params.api_prefix ? sc->params.api_prefix : "", path);
    if (n < 0 || (size_t) n >= sizeof(full)) {
        return false;
    }
    return server_http_route(sc->http, method, full, fn, user_data, is_public, during_load);
}

static bool register_routes(struct server_context * sc) {
    bool ok = true;
    ok &= route(sc, "GET",  "/health",         server_handle_health,         sc, true,  false);
    ok &= route(sc, "GET",  "/v1/health",      server_handle_health,         sc, true,  false);
    ok &= route(sc, "GET",  "/models",         server_handle_models,         sc, true,  true);
    ok &= route(sc, "GET",  "/v1/models",      server_handle_models,         sc, true,  true);
    ok &= route(sc, "GET",  "/api/tags",       server_handle_models,         sc, true,  true); // ollama clients
    ok &= route(sc, "GET",  "/props",          server_handle_props,          sc, false, false);
    ok &= route(sc, "POST", "/props",          server_handle_props_change,   sc, false, false);
    ok &= route(sc, "GET",  "/slots",          server_handle_slots,          sc, false, false);
    ok &= route(sc, "POST", "/slots/:id_slot", server_handle_slot_action,    sc, false, false);
    ok &= route(sc, "GET",  "/metrics",        server_handle_metrics,        sc, false, false);
    ok &= route(sc, "GET",  "/lora-adapters",  server_handle_lora_adapters,     sc, false, false);
    ok &= route(sc, "POST", "/lora-adapters",  server_handle_lora_adapters_set, sc, false, false);
    ok &= route(sc, "POST", "/tokenize",       server_handle_tokenize,       sc, false, false);
    ok &= route(sc, "POST", "/detokenize",     server_handle_detokenize,     sc, false, false);
    ok &= route(sc, "POST", "/apply-template", server_handle_apply_template, sc, false, false);
    ok &= route(sc, "POST", "/completion",     server_handle_completion,     sc, false, false);
    ok &= route(sc, "POST", "/completions",    server_handle_completion,     sc, false, false);
    ok &= route(sc, "POST", "/v1/completions", server_handle_oai_completion, sc, false, false);
    ok &= route(sc, "POST", "/embedding",      server_handle_embedding,      sc, false, false);
    ok &= route(sc, "POST", "/embeddings",     server_handle_embedding,      sc, false, false);
    ok &= route(sc, "POST", "/v1/embeddings",  server_handle_oai_embeddings, sc, false, false);
    ok &= route(sc, "POST", "/chat/completions",    server_handle_oai_chat,  sc, false, false);
    ok &= route(sc, "POST", "/v1/chat/completions", server_handle_oai_chat,  sc, false, false);
    ok &= route(sc, "POST", "/v1/messages",              server_handle_anthropic_messages,     sc, false, false);
    ok &= route(sc, "POST", "/v1/messages/count_tokens", server_handle_anthropic_count_tokens, sc, false, false);
    ok &= route(sc, "POST", "/v1/responses",             server_handle_oai_responses,          sc, false, false);
    ok &= route(sc, "POST", "/infill",                   server_handle_infill,                 sc, false, false);
    ok &= route(sc, "POST", "/rerank",                   server_handle_rerank,                 sc, false, false);
    ok &= route(sc, "POST", "/reranking",                server_handle_rerank,                 sc, false, false);
    ok &= route(sc, "POST", "/v1/rerank",                server_handle_rerank,                 sc, false, false);
    ok &= route(sc, "POST", "/v1/reranking",             server_handle_rerank,                 sc, false, false);
    return ok;
}

int main(int argc, char ** argv) {
    static struct server_context ctx;
    struct server_context * sc = &ctx;
    atomic_init(&sc->shutting_down, false);
    atomic_init(&g_exiting, false);

    const int pr = server_params_parse(argc, argv, &sc->params);
    if (pr != 0) {
        common_params_free(&sc->params);
        return pr > 0 ? 0 : 1;
    }

    // signals are taken by one thread with sigwait, so no handler runs inside library code
    static sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    llama_log_set(server_llama_log_cb, NULL);
    llama_backend_init();
    llama_numa_init(sc->params.numa);                      // --numa
    (void) set_process_priority(sc->params.cpuparams.priority); // --prio
    server_queue_init(&sc->queue);
    sc->metrics.t_start = (int64_t) time(NULL);

    struct server_http_params hp = {
        .host       = sc->params.hostname,
        .port       = sc->params.port,
        .n_threads  = sc->params.n_threads_http,
        .timeout_s  = sc->params.timeout_read,
        .max_body   = (size_t) sc->params.http_max_body,
        .api_keys   = (const char * const *) sc->params.api_keys,
        .n_api_keys = (size_t) sc->params.n_api_keys,
        .log_requests = server_log_verbosity > 0 && !server_log_disabled,
    };
    sc->http = server_http_init(&hp);
    int rc = 1;
    pthread_t sig_thread;
    bool sig_thread_started = false;
    if (!sc->http || !register_routes(sc)) {
        SRV_ERR("%s: failed to initialize the HTTP server\n", __func__);
        goto done;
    }
    g_sc = sc;
    if (pthread_create(&sig_thread, NULL, signal_thread, &sigs) == 0) {
        sig_thread_started = true;
    }
    if (!server_http_start(sc->http)) {
        SRV_ERR("%s: couldn't bind HTTP server socket, hostname: %s, port: %d\n", __func__, sc->params.hostname,
                sc->params.port);
        goto done;
    }
    SRV_INF("%s: HTTP server is listening, hostname: %s, port: %d, http threads: %d\n", __func__, sc->params.hostname,
            server_http_port(sc->http), sc->params.n_threads_http);
    SRV_INF("%s: loading model\n", __func__);

    if (!load_model(sc)) {
        if (!atomic_load(&sc->shutting_down)) {
            SRV_ERR("%s: exiting due to model loading error\n", __func__);
        }
        goto done;
    }
    server_http_set_ready(sc->http, true);
    SRV_INF("%s: model loaded\n", __func__);
    SRV_INF("%s: server is listening on http://%s:%d - starting the main loop\n", __func__, sc->params.hostname,
            server_http_port(sc->http));

    inference_loop(sc);
    rc = 0;

done:
    atomic_store(&sc->shutting_down, true);
    server_queue_stop(&sc->queue);
    server_http_free(sc->http);
    if (sig_thread_started) {
        atomic_store(&g_exiting, true);
        pthread_kill(sig_thread, SIGTERM);
        pthread_join(sig_thread, NULL);
    }
    g_sc = NULL;
    server_queue_destroy(&sc->queue);
    for (int i = 0; sc->slots && i < sc->n_slots; i++) {
        free(sc->slots[i].cache);
        free(sc->slots[i].grammar);
        json_decref(sc->slots[i].grammar_triggers);
        json_decref(sc->slots[i].preserved_tokens);
        server_spec_free_slot(&sc->slots[i]);
        free(sc->slots[i].lora);
    }
    server_lora_free(sc);
    if (sc->ctx) {
        llama_batch_free(sc->batch);
        llama_free(sc->ctx);
    }
    free(sc->slots);
    free(sc->model_name);
    free(sc->chat_template);
#ifdef LLAMA_SERVER_HAVE_CHAT
    common_chat_jinja_free(sc->chat_jinja);
#endif
    if (sc->model_dft) {
        llama_model_free(sc->model_dft);
    }
    if (sc->model) {
        llama_model_free(sc->model);
    }
    llama_backend_free();
    common_params_free(&sc->params);
    return rc;
}
