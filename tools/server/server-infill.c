// POST /infill: llama.cpp's fill-in-the-middle endpoint. The model's FIM tokens frame input_prefix / input_suffix
// (and input_extra chunks, repo-level) around the optional prompt (server-infill-layout.c); the generation and
// the response are /completion's.
#include "server-context.h"
#include "server-infill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// llama.cpp's check: the three tokens FIM needs, the missing ones named (each clause ends with ". ")
static bool infill_supported(const struct llama_vocab * vocab, char * msg, size_t cap) {
    char missing[128] = "";
    if (llama_vocab_fim_pre(vocab) == LLAMA_TOKEN_NULL) {
        strcat(missing, "prefix token is missing. ");
    }
    if (llama_vocab_fim_suf(vocab) == LLAMA_TOKEN_NULL) {
        strcat(missing, "suffix token is missing. ");
    }
    if (llama_vocab_fim_mid(vocab) == LLAMA_TOKEN_NULL) {
        strcat(missing, "middle token is missing. ");
    }
    if (!missing[0]) {
        return true;
    }
    snprintf(msg, cap, "Infill is not supported by this model: %s", missing);
    return false;
}

static const char * check_request(const json_t * body) {
    const json_t * prompt = json_object_get(body, "prompt");
    if (prompt && !json_is_string(prompt)) {
        return "\"prompt\" must be a string";
    }
    if (!json_object_get(body, "input_prefix")) {
        return "\"input_prefix\" is required";
    }
    if (!json_object_get(body, "input_suffix")) {
        return "\"input_suffix\" is required";
    }
    const json_t * extra = json_object_get(body, "input_extra");
    if (extra && !json_is_array(extra)) {
        return "\"input_extra\" must be an array of {\"filename\": string, \"text\": string}";
    }
    size_t i;
    const json_t * chunk;
    json_array_foreach(extra, i, chunk) {
        if (!json_is_string(json_object_get(chunk, "text"))) {
            return "extra_context chunk must contain a \"text\" field with a string value";
        }
        const json_t * fname = json_object_get(chunk, "filename");
        if (fname && !json_is_string(fname)) {
            return "extra_context chunk's \"filename\" field must be a string";
        }
    }
    return NULL;
}

void server_handle_infill(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    char msg[256];
    if (!infill_supported(sc->vocab, msg, sizeof(msg))) {
        server_res_err(res, msg, ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    json_t * body = server_parse_body(req, res);
    if (!body) {
        return;
    }
    const char * bad = check_request(body);
    if (bad) {
        server_res_err(res, bad, ERROR_TYPE_INVALID_REQUEST);
        json_decref(body);
        return;
    }
    // prefix / suffix: text or token mix, no special tokens; the prompt may name special tokens
    struct sj_err err = { { 0 } };
    struct server_token_vec pre = { 0 }, suf = { 0 }, prompt = { 0 };
    const json_t * pj = json_object_get(body, "prompt");
    bool ok = server_tokenize_mixed(sc->vocab, json_object_get(body, "input_prefix"), false, false, &pre, &err) &&
              server_tokenize_mixed(sc->vocab, json_object_get(body, "input_suffix"), false, false, &suf, &err) &&
              (!pj || server_tokenize_mixed(sc->vocab, pj, false, true, &prompt, &err));
    const json_t * extra = json_object_get(body, "input_extra");
    json_t * no_extra = json_array();
    struct server_token_vec toks = { 0 };
    if (ok) {
        // the command line's -n and -b and a slot's context, as llama.cpp
        toks.data = server_infill_layout(sc->vocab, pre.data, pre.n, suf.data, suf.n, extra ? extra : no_extra,
                                         sc->params.n_batch, sc->params.n_predict, sc->n_ctx_slot,
                                         sc->params.spm_infill, prompt.data, prompt.n, &toks.n);
        toks.cap = toks.n;
        if (!toks.data) {
            snprintf(err.msg, sizeof(err.msg), "out of memory");
            ok = false;
        }
    }
    json_decref(no_extra);
    free(pre.data);
    free(suf.data);
    free(prompt.data);
    if (!ok) {
        server_res_err(res, err.msg[0] ? err.msg : "out of memory", ERROR_TYPE_INVALID_REQUEST);
        json_decref(body);
        return;
    }
    server_complete_body(sc, req, res, body, COMPL_MODE_NATIVE, &toks);
}
