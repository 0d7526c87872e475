// The adapters a context applies: llama_set_adapters_lora (which LoRA adapters, at which scales) and
// llama_set_adapter_cvec (the control vector). Both invalidate the kept ubatch graph.
#include "llama-adapter.h"
#include "llama-context.h"
#include "llama-impl.h"
#include "llama-model.h"

#include "ggml-alloc.h"
#include "ggml-cpu.h"

#include <stdlib.h>
#include <string.h>

static bool same_loras(const struct llama_ctx_adapters * cur, struct llama_adapter_lora ** adapters, size_t n,
        const float * scales) {
    if (cur->n_loras != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (cur->loras[i] != adapters[i] || cur->scales[i] != scales[i]) {
            return false;
        }
    }
    return true;
}

int32_t llama_set_adapters_lora(struct llama_context * ctx, struct llama_adapter_lora ** adapters, size_t n_adapters,
        float * scales) {
    if (!ctx) {
        LLAMA_LOG_ERROR("%s: ctx is NULL\n", __func__);
        return -1;
    }
    if (n_adapters > 0 && (!adapters || !scales)) {
        LLAMA_LOG_ERROR("%s: %zu adapters given without the adapter or scale array\n", __func__, n_adapters);
        return -1;
    }
    for (size_t i = 0; i < n_adapters; i++) {
        if (!adapters[i] || adapters[i]->model != ctx->model) {
            LLAMA_LOG_ERROR("%s: adapter %zu is NULL or was loaded for another model\n", __func__, i);
            return -1;
        }
    }
    struct llama_ctx_adapters * a = &ctx->adapters;
    if (same_loras(a, adapters, n_adapters, scales)) {
        return 0;
    }
    struct llama_adapter_lora ** loras = NULL;
    float * sc = NULL;
    if (n_adapters > 0) {
        loras = malloc(n_adapters * sizeof(*loras));
        sc    = malloc(n_adapters * sizeof(*sc));
        if (!loras || !sc) {
            free(loras);
            free(sc);
            LLAMA_LOG_ERROR("%s: out of memory\n", __func__);
            return -1;
        }
        memcpy(loras, adapters, n_adapters * sizeof(*loras));
        memcpy(sc, scales, n_adapters * sizeof(*sc));
    }
    llama_context_drop_graph(ctx);
    // the adapters may have been loaded after the context sized its graph
    if (!llama_context_ensure_graph_capacity(ctx)) {
        free(loras);
        free(sc);
        return -1;
    }
    free(a->loras);
    free(a->scales);
    a->loras   = loras;
    a->scales  = sc;
    a->n_loras = n_adapters;
    return 0;
}

// one zeroed F32 [n_embd] tensor per layer 1..n_layer-1 (layer 0 never has a control vector)
static bool cvec_init(struct llama_adapter_cvec * cv, const struct llama_model * model) {
    const int32_t n_layer = (int32_t) model->hparams.n_layer;
    const int32_t n_embd  = (int32_t) model->hparams.n_embd;
    cv->tensors = calloc((size_t) (n_layer > 0 ? n_layer : 1), sizeof(*cv->tensors));
    struct ggml_init_params ip = { .mem_size = (size_t) (n_layer + 1) * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    cv->ctx = cv->tensors ? ggml_init(ip) : NULL;
    if (!cv->ctx) {
        return false;
    }
    for (int32_t il = 1; il < n_layer; il++) {
        cv->tensors[il] = ggml_new_tensor_1d(cv->ctx, GGML_TYPE_F32, n_embd);
        ggml_format_name(cv->tensors[il], "cvec.%d", il);
    }
    if (n_layer > 1) {
        cv->buf = ggml_backend_alloc_ctx_tensors_from_buft(cv->ctx, ggml_backend_cpu_buffer_type());
        if (!cv->buf) {
            return false;
        }
        ggml_backend_buffer_clear(cv->buf, 0);
    }
    cv->n_layer = n_layer;
    cv->n_embd  = n_embd;
    return true;
}

static void cvec_free(struct llama_adapter_cvec * cv) {
    if (cv->buf) {
        ggml_backend_buffer_free(cv->buf);
    }
    if (cv->ctx) {
        ggml_free(cv->ctx);
    }
    free(cv->tensors);
    memset(cv, 0, sizeof(*cv));
    cv->layer_start = -1;
    cv->layer_end   = -1;
}

int32_t llama_set_adapter_cvec(struct llama_context * ctx, const float * data, size_t len, int32_t n_embd,
        int32_t il_start, int32_t il_end) {
    if (!ctx) {
        LLAMA_LOG_ERROR("%s: ctx is NULL\n", __func__);
        return -1;
    }
    struct llama_adapter_cvec * cv = &ctx->adapters.cvec;
    llama_context_drop_graph(ctx);
    if (!data) {
        cv->layer_start = -1;
        cv->layer_end   = -1;
        return 0;
    }
    if (n_embd != (int32_t) ctx->model->hparams.n_embd) {
        LLAMA_LOG_ERROR("%s: control vector n_embd (%d) does not match model (%u)\n", __func__, n_embd,
                ctx->model->hparams.n_embd);
        return -1;
    }
    if (!cv->ctx && !cvec_init(cv, ctx->model)) {
        LLAMA_LOG_ERROR("%s: failed to allocate the control vector\n", __func__);
        cvec_free(cv);
        return -1;
    }
    cv->layer_start = il_start;
    cv->layer_end   = il_end;
    for (int32_t il = 1; il < cv->n_layer; il++) {
        const size_t off = (size_t) n_embd * (size_t) (il - 1); // data has no row for layer 0
        if (off + (size_t) n_embd <= len) {
            ggml_backend_tensor_set(cv->tensors[il], data + off, 0, (size_t) n_embd * sizeof(float));
        }
    }
    return 0;
}

struct ggml_tensor * llama_adapter_cvec_tensor(const struct llama_adapter_cvec * cvec, int32_t il) {
    if (!cvec->tensors || il < 0 || il < cvec->layer_start || il > cvec->layer_end || il >= cvec->n_layer) {
        return NULL;
    }
    return cvec->tensors[il];
}

void llama_ctx_adapters_free(struct llama_ctx_adapters * a) {
    free(a->loras);
    free(a->scales);
    a->loras   = NULL;
    a->scales  = NULL;
    a->n_loras = 0;
    cvec_free(&a->cvec);
}
