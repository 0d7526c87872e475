// llama-embedding: embeddings of each line of the prompt (lines split on --embd-separator), pooled per
// sequence (or per token with --pooling none), normalized with --embd-normalize, printed as text, a JSON
// array, or OpenAI-style JSON (+ cosine similarity matrix with json+).
#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_usage(int argc, char ** argv) {
    (void) argc;
    LOG("\nexample usage:\n");
    LOG("\n    %s -m model.gguf -p \"first sentence\\nsecond sentence\" --pooling mean\n", argv[0]);
    LOG("\n");
}

// splits text on sep (not empty); pieces point into text, which is modified
static char ** split_lines(char * text, const char * sep, int * n_out) {
    const size_t ls = strlen(sep);
    int n = 1;
    for (char * p = text; ls > 0 && (p = strstr(p, sep)) != NULL; p += ls) {
        n++;
    }
    char ** lines = malloc((size_t) n * sizeof(char *));
    if (!lines) {
        return NULL;
    }
    int k = 0;
    char * start = text;
    char * p;
    while (ls > 0 && (p = strstr(start, sep)) != NULL) {
        *p = '\0';
        lines[k++] = start;
        start = p + ls;
    }
    lines[k++] = start;
    *n_out = k;
    return lines;
}

static void batch_add_seq(struct llama_batch * batch, const llama_token * tokens, int32_t n, llama_seq_id seq_id) {
    for (int32_t i = 0; i < n; i++) {
        common_batch_add(batch, tokens[i], i, &seq_id, 1, true);
    }
}

// runs the batch and stores the (normalized) embeddings at output: per token for pooling none, else per sequence
static bool batch_decode(struct llama_context * ctx, const struct llama_model * model, struct llama_batch * batch,
                         float * output, int n_seq, int n_embd, int embd_norm) {
    const enum llama_pooling_type pooling_type = llama_pooling_type(ctx);

    // each batch is independent: nothing of the previous one may be attended to
    llama_memory_clear(llama_get_memory(ctx), true);

    LOG_INF("%s: n_tokens = %d, n_seq = %d\n", __func__, batch->n_tokens, n_seq);
    int ret;
    if (llama_model_has_encoder(model) && !llama_model_has_decoder(model)) {
        ret = llama_encode(ctx, *batch);
    } else {
        ret = llama_decode(ctx, *batch);
    }
    if (ret != 0) {
        LOG_ERR("%s: failed to process the batch (return code %d)\n", __func__, ret);
        return false;
    }

    if (pooling_type == LLAMA_POOLING_TYPE_NONE) {
        for (int i = 0; i < batch->n_tokens; i++) {
            if (!batch->logits[i]) {
                continue;
            }
            const float * embd = llama_get_embeddings_ith(ctx, i);
            if (!embd) {
                LOG_ERR("%s: failed to get the embeddings of token %d\n", __func__, i);
                return false;
            }
            common_embd_normalize(embd, output + (size_t) i * n_embd, n_embd, embd_norm);
        }
    } else {
        for (int s = 0; s < n_seq; s++) {
            const float * embd = llama_get_embeddings_seq(ctx, s);
            if (!embd) {
                LOG_ERR("%s: failed to get the embeddings of sequence %d\n", __func__, s);
                return false;
            }
            common_embd_normalize(embd, output + (size_t) s * n_embd, n_embd, embd_norm);
        }
    }
    return true;
}

static void print_value(float v, int embd_norm) {
    if (embd_norm == 0) {
        LOG("%6.0f ", v);
    } else {
        LOG("%9.6f ", v);
    }
}

int main(int argc, char ** argv) {
    struct common_params params = common_params_default();
    common_init();

    if (!common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_EMBEDDING, print_usage)) {
        common_params_free(&params);
        return 1;
    }

    params.embedding = true;
    // all prompts of a batch must fit one ubatch: non-causal models see the whole sequence at once
    if (params.n_batch < params.n_ctx) {
        LOG_WRN("%s: setting batch size to %d\n", __func__, params.n_ctx);
        params.n_batch = params.n_ctx;
    }
    params.n_ubatch = params.n_batch;
    // one sequence id per prompt of a batch; the cache is one shared buffer
    if (!params.n_parallel_explicit) {
        params.n_parallel = (int32_t) llama_max_parallel_sequences();
    }
    params.kv_unified = true;
    params.warmup = false;

    int rc = 1;
    struct common_init_result init = { NULL, NULL };
    char ** prompts = NULL;
    llama_token ** inputs = NULL;
    int32_t * n_inputs = NULL;
    float * emb = NULL;
    int n_prompts = 0;
    struct llama_batch batch = { 0 };
    bool batch_ok = false;

    llama_backend_init();

    init = common_init_from_params(&params);
    if (!init.model || !init.context) {
        LOG_ERR("%s: unable to load model\n", __func__);
        goto done;
    }
    struct llama_model * model = init.model;
    struct llama_context * ctx = init.context;
    const struct llama_vocab * vocab = llama_model_get_vocab(model);

    const int n_ctx_train = llama_model_n_ctx_train(model);
    const int n_ctx = (int) llama_n_ctx(ctx);
    const enum llama_pooling_type pooling_type = llama_pooling_type(ctx);

    if (llama_model_has_encoder(model) && llama_model_has_decoder(model)) {
        LOG_ERR("%s: computing embeddings in encoder-decoder models is not supported\n", __func__);
        goto done;
    }
    if (n_ctx > n_ctx_train) {
        LOG_WRN("%s: warning: model was trained on only %d context tokens (%d specified)\n", __func__, n_ctx_train, n_ctx);
    }

    LOG_INF("\n");
    LOG_INF("%s\n", common_params_get_system_info(&params));

    if (!params.prompt) {
        common_params_set_str(&params.prompt, "");
    }
    prompts = split_lines(params.prompt, params.embd_sep && params.embd_sep[0] ? params.embd_sep : "\n", &n_prompts);
    if (!prompts) {
        goto done;
    }

    const int64_t n_batch = llama_n_batch(ctx);
    const int n_seq_max = (int) llama_n_seq_max(ctx);

    inputs   = calloc((size_t) n_prompts, sizeof(*inputs));
    n_inputs = calloc((size_t) n_prompts, sizeof(*n_inputs));
    if (!inputs || !n_inputs) {
        goto done;
    }
    for (int k = 0; k < n_prompts; k++) {
        if (!common_tokenize(vocab, prompts[k], -1, true, true, &inputs[k], &n_inputs[k])) {
            goto done;
        }
        if (n_inputs[k] > n_batch) {
            LOG_ERR("%s: number of tokens in input line (%lld) exceeds batch size (%lld), increase batch size and re-run\n",
                    __func__, (long long) n_inputs[k], (long long) n_batch);
            goto done;
        }
        if (n_inputs[k] == 0) {
            LOG_ERR("%s: input line %d is empty after tokenization\n", __func__, k);
            goto done;
        }
    }

    // embedding models end each input with SEP when the GGUF asks for it (tokenizer.ggml.add_eos_token)
    for (int k = 0; k < n_prompts; k++) {
        if (inputs[k][n_inputs[k] - 1] != llama_vocab_sep(vocab)) {
            LOG_WRN("%s: last token in the prompt is not SEP\n", __func__);
            LOG_WRN("%s: 'tokenizer.ggml.add_eos_token' should be set to 'true' in the GGUF header\n", __func__);
            break;
        }
    }

    if (params.verbose_prompt) {
        for (int i = 0; i < n_prompts; i++) {
            LOG_INF("%s: prompt %d: '%s'\n", __func__, i, prompts[i]);
            LOG_INF("%s: number of tokens in prompt = %d\n", __func__, n_inputs[i]);
            for (int j = 0; j < n_inputs[i]; j++) {
                char * piece = common_token_to_piece(vocab, inputs[i][j], false, NULL);
                LOG("%6d -> '%s'\n", inputs[i][j], piece ? piece : "");
                free(piece);
            }
            LOG("\n\n");
        }
    }

    batch = llama_batch_init((int32_t) n_batch, 0, 1);
    batch_ok = true;

    int n_embd_count = 0;
    if (pooling_type == LLAMA_POOLING_TYPE_NONE) {
        for (int k = 0; k < n_prompts; k++) {
            n_embd_count += n_inputs[k];
        }
    } else {
        n_embd_count = n_prompts;
    }

    // rank pooling yields n_cls_out scores per sequence instead of an embedding
    const int n_embd = pooling_type == LLAMA_POOLING_TYPE_RANK && llama_model_n_cls_out(model) > 0
                           ? (int) llama_model_n_cls_out(model) : llama_model_n_embd_out(model) > 0
                           ? llama_model_n_embd_out(model) : llama_model_n_embd(model);
    emb = calloc((size_t) n_embd_count * (size_t) n_embd, sizeof(float));
    if (!emb) {
        goto done;
    }

    int e = 0; // embeddings already stored
    int s = 0; // prompts in the current batch
    for (int k = 0; k < n_prompts; k++) {
        if (batch.n_tokens + n_inputs[k] > n_batch || s >= n_seq_max) {
            if (!batch_decode(ctx, model, &batch, emb + (size_t) e * n_embd, s, n_embd, params.embd_normalize)) {
                goto done;
            }
            e += pooling_type == LLAMA_POOLING_TYPE_NONE ? batch.n_tokens : s;
            s = 0;
            common_batch_clear(&batch);
        }
        batch_add_seq(&batch, inputs[k], n_inputs[k], s);
        s += 1;
    }
    if (!batch_decode(ctx, model, &batch, emb + (size_t) e * n_embd, s, n_embd, params.embd_normalize)) {
        goto done;
    }

    const char * fmt = params.embd_out ? params.embd_out : "";
    if (fmt[0] == '\0') {
        LOG("\n");
        if (pooling_type == LLAMA_POOLING_TYPE_NONE) {
            for (int j = 0; j < n_embd_count; j++) {
                LOG("embedding %d: ", j);
                for (int i = 0; i < (n_embd < 3 ? n_embd : 3); i++) {
                    print_value(emb[(size_t) j * n_embd + i], params.embd_normalize);
                }
                LOG(" ... ");
                for (int i = n_embd > 3 ? n_embd - 3 : 0; i < n_embd; i++) {
                    print_value(emb[(size_t) j * n_embd + i], params.embd_normalize);
                }
                LOG("\n");
            }
        } else if (pooling_type == LLAMA_POOLING_TYPE_RANK) {
            for (int j = 0; j < n_embd_count; j++) {
                LOG("rerank score %d: %8.3f\n", j, emb[(size_t) j * n_embd]);
            }
        } else {
            // the first values of each embedding, or the whole one for a single prompt
            for (int j = 0; j < n_prompts; j++) {
                LOG("embedding %d: ", j);
                const int n_show = n_prompts > 1 ? (n_embd < 16 ? n_embd : 16) : n_embd;
                for (int i = 0; i < n_show; i++) {
                    print_value(emb[(size_t) j * n_embd + i], params.embd_normalize);
                }
                LOG("\n");
            }
            if (n_prompts > 1) {
                LOG("\n");
                LOG("cosine similarity matrix:\n\n");
                for (int i = 0; i < n_prompts; i++) {
                    LOG("%6.6s ", prompts[i]);
                }
                LOG("\n");
                for (int i = 0; i < n_prompts; i++) {
                    for (int j = 0; j < n_prompts; j++) {
                        const float sim = common_embd_similarity_cos(emb + (size_t) i * n_embd, emb + (size_t) j * n_embd, n_embd);
                        LOG("%6.2f ", sim);
                    }
                    LOG("%1.10s", prompts[i]);
                    LOG("\n");
                }
            }
        }
    }

    if (strcmp(fmt, "json") == 0 || strcmp(fmt, "json+") == 0 || strcmp(fmt, "array") == 0) {
        const bool not_array = strcmp(fmt, "array") != 0;
        LOG(not_array ? "{\n  \"object\": \"list\",\n  \"data\": [\n" : "[");
        for (int j = 0; j < n_embd_count; j++) {
            if (not_array) {
                LOG("    {\n      \"object\": \"embedding\",\n      \"index\": %d,\n      \"embedding\": ", j);
            }
            LOG("[");
            for (int i = 0; i < n_embd; i++) {
                LOG(params.embd_normalize == 0 ? "%1.0f" : "%1.7f", emb[(size_t) j * n_embd + i]);
                if (i + 1 < n_embd) {
                    LOG(",");
                }
            }
            LOG(not_array ? "]\n    }" : "]");
            if (j + 1 < n_embd_count) {
                LOG(not_array ? ",\n" : ",");
            }
        }
        LOG(not_array ? "\n  ]" : "]\n");

        if (strcmp(fmt, "json+") == 0 && n_prompts > 1) {
            LOG(",\n  \"cosineSimilarity\": [\n");
            for (int i = 0; i < n_embd_count; i++) {
                LOG("    [");
                for (int j = 0; j < n_embd_count; j++) {
                    const float sim = common_embd_similarity_cos(emb + (size_t) i * n_embd, emb + (size_t) j * n_embd, n_embd);
                    LOG("%6.2f", sim);
                    if (j + 1 < n_embd_count) {
                        LOG(", ");
                    }
                }
                LOG(" ]");
                if (i + 1 < n_embd_count) {
                    LOG(",\n");
                }
            }
            LOG("\n  ]");
        }
        if (not_array) {
            LOG("\n}\n");
        }
    }

    LOG("\n");
    if (!params.no_perf) {
        llama_perf_context_print(ctx);
    }
    rc = 0;

done:
    if (batch_ok) {
        llama_batch_free(batch);
    }
    if (inputs) {
        for (int k = 0; k < n_prompts; k++) {
            free(inputs[k]);
        }
    }
    free(inputs);
    free(n_inputs);
    free(prompts);
    free(emb);
    common_init_result_free(&init);
    common_params_free(&params);
    llama_backend_free();
    return rc;
}
