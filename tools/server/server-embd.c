// Embeddings (--embedding): the server is embedding-only, as llama.cpp's; each input is decoded alone on
// sequence 0 in one batch.
#include "server-context.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void server_handle_embeddings_mode(const struct server_http_req * req, struct server_http_res * res,
                                          struct server_context * sc, bool oai) {
    if (!sc->params.embedding) {
        server_res_err(res, "This server does not support embeddings. Start it with `--embeddings`", ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    json_t * body = server_parse_body(req, res);
    if (!body) {
        return;
    }
    const json_t * in = json_object_get(body, oai ? "input" : "content");
    if (!in) {
        in = json_object_get(body, oai ? "content" : "input");
    }
    if (!json_is_string(in) && !json_is_array(in)) {
        server_res_err(res, "\"input\" (or \"content\") must be a string or an array", ERROR_TYPE_INVALID_REQUEST);
        json_decref(body);
        return;
    }
    struct server_task * t = server_task_new(SERVER_TASK_TYPE_EMBEDDING);
    if (!t) {
        json_decref(body);
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    json_object_set_new(body, "__oai", json_boolean(oai));
    t->data = body;
    server_respond_task(sc, t, req, res);
}

void server_handle_embedding(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    server_handle_embeddings_mode(req, res, ud, false);
}
void server_handle_oai_embeddings(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    server_handle_embeddings_mode(req, res, ud, true);
}

static json_t * embd_row(const float * e, int n, bool normalize) {
    double norm = 0;
    for (int i = 0; i < n; i++) {
        norm += (double) e[i] * e[i];
    }
    norm = sqrt(norm);
    const double scale = (normalize && norm > 0) ? 1.0 / norm : 1.0;
    json_t * a = json_array();
    for (int i = 0; i < n; i++) {
        json_array_append_new(a, json_real(e[i] * scale));
    }
    return a;
}

void server_process_embedding_task(struct server_context * sc, struct server_task * t) {
    const bool oai = json_is_true(json_object_get(t->data, "__oai"));
    const json_t * in = json_object_get(t->data, oai ? "input" : "content");
    if (!in) {
        in = json_object_get(t->data, oai ? "content" : "input");
    }
    // one input: a string or a token array; several: an array of those
    json_t * inputs = NULL;
    if (json_is_string(in) || (json_is_array(in) && json_array_size(in) > 0 && json_is_integer(json_array_get(in, 0)))) {
        inputs = json_pack("[O]", in);
    } else {
        inputs = json_incref((json_t *) in);
    }
    int64_t norm = 2;
    struct sj_err err = { { 0 } };
    sj_get_int(t->data, "embd_normalize", &norm, &err);
    const enum llama_pooling_type pool = llama_pooling_type(sc->ctx);
    if (oai && pool == LLAMA_POOLING_TYPE_NONE) {
        json_decref(inputs);
        server_task_fail(t, "Pooling type 'none' is not OAI compatible. Please use a different pooling type",
                  ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    // the request's LoRA scales (or the global ones), as a completion's slot would run them
    if (sc->n_lora > 0) {
        float * set = malloc((size_t) sc->n_lora * sizeof(float));
        const bool ok = set && server_lora_from_request(sc, t->data, set, &err) && server_lora_apply(sc, set);
        free(set);
        if (!ok) {
            json_decref(inputs);
            server_task_fail(t, err.msg[0] ? err.msg : "failed to set the LoRA adapters",
                             err.msg[0] ? ERROR_TYPE_INVALID_REQUEST : ERROR_TYPE_SERVER);
            return;
        }
    }
    const int n_embd = llama_model_n_embd(sc->model);
    json_t * data = json_array();
    int n_total = 0;
    size_t idx;
    const json_t * one;
    json_array_foreach(inputs, idx, one) {
        struct server_token_vec toks = { 0 };
        if (!server_tokenize_mixed(sc->vocab, one, true, true, &toks, &err) || toks.n == 0 ||
            toks.n > (size_t) sc->n_batch || toks.n > (size_t) sc->n_ctx_slot) {
            char msg[300];
            snprintf(msg, sizeof(msg), "input %zu: %s", idx,
                     err.msg[0] ? err.msg : toks.n == 0 ? "the input is empty"
                                                        : "input is too large to process. increase the physical batch size");
            free(toks.data);
            json_decref(inputs);
            json_decref(data);
            server_task_fail(t, msg, ERROR_TYPE_INVALID_REQUEST);
            return;
        }
        llama_memory_seq_rm(llama_get_memory(sc->ctx), 0, -1, -1);
        struct llama_batch * b = &sc->batch;
        b->n_tokens = (int32_t) toks.n;
        for (size_t i = 0; i < toks.n; i++) {
            b->token[i] = toks.data[i];
            b->pos[i] = (llama_pos) i;
            b->n_seq_id[i] = 1;
            b->seq_id[i][0] = 0;
            b->logits[i] = 1;
        }
        const int32_t rc = llama_decode(sc->ctx, *b);
        llama_memory_seq_rm(llama_get_memory(sc->ctx), 0, -1, -1);
        json_t * emb = NULL;
        if (rc == 0 && pool != LLAMA_POOLING_TYPE_NONE) {
            const float * e = llama_get_embeddings_seq(sc->ctx, 0);
            emb = e ? embd_row(e, pool == LLAMA_POOLING_TYPE_RANK ? 1 : n_embd, norm == 2) : NULL;
        } else if (rc == 0) {
            emb = json_array();
            for (size_t i = 0; i < toks.n; i++) {
                const float * e = llama_get_embeddings_ith(sc->ctx, (int32_t) i);
                json_array_append_new(emb, e ? embd_row(e, n_embd, norm == 2) : json_array());
            }
        }
        n_total += (int) toks.n;
        free(toks.data);
        if (!emb) {
            json_decref(inputs);
            json_decref(data);
            server_task_fail(t, "failed to compute the embedding", ERROR_TYPE_SERVER);
            return;
        }
        if (oai) {
            json_array_append_new(data, json_pack("{s:o, s:i, s:s}", "embedding", emb, "index", (int) idx,
                                                  "object", "embedding"));
        } else {
            // llama.cpp's native shape: one row per token without pooling, else one pooled row
            json_t * rows = pool == LLAMA_POOLING_TYPE_NONE ? emb : json_pack("[o]", emb);
            json_array_append_new(data, json_pack("{s:i, s:o}", "index", (int) idx, "embedding", rows));
        }
    }
    json_decref(inputs);
    json_t * out = data;
    if (oai) {
        out = json_pack("{s:s, s:s, s:{s:i, s:i}, s:o}", "model", sc->model_name, "object", "list", "usage",
                        "prompt_tokens", n_total, "total_tokens", n_total, "data", data);
    }
    server_task_complete(t, out, out ? 200 : 500);
}
