#include "llama-hparams.h"

#include "ggml.h"

uint32_t llama_hparams_n_head(const struct llama_hparams * hp, uint32_t il) {
    GGML_ASSERT(il < hp->n_layer);
    return hp->n_head_arr[il];
}

uint32_t llama_hparams_n_head_kv(const struct llama_hparams * hp, uint32_t il) {
    GGML_ASSERT(il < hp->n_layer);
    return hp->n_head_kv_arr[il];
}

uint32_t llama_hparams_n_ff(const struct llama_hparams * hp, uint32_t il) {
    GGML_ASSERT(il < hp->n_layer);
    return hp->n_ff_arr[il];
}

uint32_t llama_hparams_n_gqa(const struct llama_hparams * hp, uint32_t il) {
    const uint32_t n_head    = llama_hparams_n_head(hp, il);
    const uint32_t n_head_kv = llama_hparams_n_head_kv(hp, il);
    // a layer without KV heads has no attention to group
    return n_head_kv == 0 ? 0 : n_head / n_head_kv;
}

uint32_t llama_hparams_n_embd_k_gqa(const struct llama_hparams * hp, uint32_t il) {
    return hp->n_embd_head_k * llama_hparams_n_head_kv(hp, il);
}

uint32_t llama_hparams_n_embd_v_gqa(const struct llama_hparams * hp, uint32_t il) {
    return hp->n_embd_head_v * llama_hparams_n_head_kv(hp, il);
}

bool llama_hparams_is_swa(const struct llama_hparams * hp, uint32_t il) {
    GGML_ASSERT(il < hp->n_layer);
    return hp->swa_type != LLAMA_SWA_TYPE_NONE && hp->swa_layers[il];
}

uint32_t llama_hparams_n_embd_k_gqa_max(const struct llama_hparams * hp) {
    uint32_t m = 0;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const uint32_t v = llama_hparams_n_embd_k_gqa(hp, il);
        m = v > m ? v : m;
    }
    return m;
}

uint32_t llama_hparams_n_embd_v_gqa_max(const struct llama_hparams * hp) {
    uint32_t m = 0;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const uint32_t v = llama_hparams_n_embd_v_gqa(hp, il);
        m = v > m ? v : m;
    }
    return m;
}

void llama_hparams_set_swa_pattern(struct llama_hparams * hp, uint32_t n_pattern) {
    for (uint32_t il = 0; il < LLAMA_MAX_LAYERS; il++) {
        hp->swa_layers[il] = n_pattern == 0 || (il % n_pattern < n_pattern - 1);
    }
    hp->n_swa_pattern = n_pattern;
}

bool llama_hparams_is_masked_swa(uint32_t n_swa, enum llama_swa_type swa_type, llama_pos p0, llama_pos p1) {
    switch (swa_type) {
        case LLAMA_SWA_TYPE_NONE:
            return false;
        case LLAMA_SWA_TYPE_STANDARD:
            return (int64_t) p1 - (int64_t) p0 >= (int64_t) n_swa;
        case LLAMA_SWA_TYPE_CHUNKED: {
            if (n_swa == 0) {
                return false;
            }
            const llama_pos chunk_start = (p1 / (llama_pos) n_swa) * (llama_pos) n_swa;
            return p0 < chunk_start;
        }
        case LLAMA_SWA_TYPE_SYMMETRIC: {
            const int64_t d = (int64_t) p1 - (int64_t) p0;
            const int64_t half = (int64_t) n_swa / 2;
            return d > half || -d > half;
        }
    }
    return false;
}
