// /rerank, /reranking, /v1/rerank, /v1/reranking. This libllama has no rank pooling (LLAMA_POOLING_TYPE_RANK: the
// classification head of reranker models), and the server refuses to start with --reranking / --pooling rank, so
// every request gets llama.cpp's answer for a server that was not started for reranking. No scores are made up.
#include "server-context.h"

void server_handle_rerank(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    (void) req;
    (void) ud;
    server_res_err(res, "This server does not support reranking. Start it with `--reranking`", ERROR_TYPE_NOT_SUPPORTED);
}
