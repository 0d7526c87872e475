// libllama entry points: backend init, model loading and the llama_model_* queries, system info, logging.
#include "llama.h"

#include "llama-adapter.h"
#include "llama-arch.h"
#include "llama-impl.h"
#include "llama-model-loader.h"
#include "llama-model.h"
#include "llama-vocab.h"

#include "ggml-backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

// ---- backend, time, capabilities ---------------------------------------------------------------------------

void llama_backend_init(void) {
    ggml_time_init();
}

void llama_backend_free(void) {
}

int64_t llama_time_us(void) {
    return ggml_time_us();
}

size_t llama_max_devices(void) {
    return 16;
}

size_t llama_max_parallel_sequences(void) {
    return 256;
}

size_t llama_max_tensor_buft_overrides(void) {
    return 4096;
}

bool llama_supports_mmap(void) {
    return true;
}

bool llama_supports_mlock(void) {
    return true;
}

bool llama_supports_gpu_offload(void) {
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        const enum ggml_backend_dev_type t = ggml_backend_dev_type(ggml_backend_dev_get(i));
        if (t == GGML_BACKEND_DEVICE_TYPE_GPU || t == GGML_BACKEND_DEVICE_TYPE_IGPU) {
            return true;
        }
    }
    return false;
}

bool llama_supports_rpc(void) {
    return false;
}

const char * llama_flash_attn_type_name(enum llama_flash_attn_type flash_attn_type) {
    switch (flash_attn_type) {
        case LLAMA_FLASH_ATTN_TYPE_AUTO:     return "auto";
        case LLAMA_FLASH_ATTN_TYPE_DISABLED: return "disabled";
        case LLAMA_FLASH_ATTN_TYPE_ENABLED:  return "enabled";
    }
    return "unknown";
}

// "<backend> : FEATURE = value | ... |" for every registered backend that reports features
const char * llama_print_system_info(void) {
    static char s[2048];
    size_t pos = 0;
    s[0] = '\0';
    for (size_t i = 0; i < ggml_backend_reg_count(); i++) {
        ggml_backend_reg_t reg = ggml_backend_reg_get(i);
        // the registry hands out functions as void *; copy the bits (a cast is not ISO C)
        void * proc = ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features");
        ggml_backend_get_features_t get_features = NULL;
        memcpy(&get_features, &proc, sizeof(get_features));
        if (!get_features) {
            continue;
        }
        int w = snprintf(s + pos, sizeof(s) - pos, "%s : ", ggml_backend_reg_name(reg));
        if (w < 0 || (size_t) w >= sizeof(s) - pos) {
            break;
        }
        pos += (size_t) w;
        for (struct ggml_backend_feature * f = get_features(reg); f && f->name; f++) {
            w = snprintf(s + pos, sizeof(s) - pos, "%s = %s | ", f->name, f->value);
            if (w < 0 || (size_t) w >= sizeof(s) - pos) {
                return s;
            }
            pos += (size_t) w;
        }
    }
    return s;
}

void llama_log_get(ggml_log_callback * log_callback, void ** user_data) {
    ggml_log_get(log_callback, user_data);
}

void llama_log_set(ggml_log_callback log_callback, void * user_data) {
    // one logger for both libraries, so ggml's messages reach the same callback
    ggml_log_set(log_callback, user_data);
}

// ---- default parameters ------------------------------------------------------------------------------------

struct llama_model_params llama_model_default_params(void) {
    struct llama_model_params p = {
        .devices                     = NULL,
        .tensor_buft_overrides       = NULL,
        .n_gpu_layers                = -1,
        .split_mode                  = LLAMA_SPLIT_MODE_LAYER,
        .main_gpu                    = 0,
        .tensor_split                = NULL,
        .progress_callback           = NULL,
        .progress_callback_user_data = NULL,
        .kv_overrides                = NULL,
        .vocab_only                  = false,
        .use_mmap                    = true,
        .use_direct_io               = false,
        .use_mlock                   = false,
        .check_tensors               = false,
        .use_extra_bufts             = true,
        .no_host                     = false,
        .no_alloc                    = false,
    };
    return p;
}

struct llama_context_params llama_context_default_params(void) {
    struct llama_context_params p = {
        .n_ctx                 = 512,
        .n_batch               = 2048,
        .n_ubatch              = 512,
        .n_seq_max             = 1,
        .n_rs_seq              = 0,
        .n_outputs_max         = 0,
        .n_outputs_max_per_seq = 1,
        .n_threads             = GGML_DEFAULT_N_THREADS,
        .n_threads_batch       = GGML_DEFAULT_N_THREADS,
        .ctx_type              = LLAMA_CONTEXT_TYPE_DEFAULT,
        .rope_scaling_type     = LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED,
        .pooling_type          = LLAMA_POOLING_TYPE_UNSPECIFIED,
        .attention_type        = LLAMA_ATTENTION_TYPE_UNSPECIFIED,
        .flash_attn_type       = LLAMA_FLASH_ATTN_TYPE_AUTO,
        .rope_freq_base        = 0.0f,
        .rope_freq_scale       = 0.0f,
        .yarn_ext_factor       = -1.0f,
        .yarn_attn_factor      = -1.0f,
        .yarn_beta_fast        = -1.0f,
        .yarn_beta_slow        = -1.0f,
        .yarn_orig_ctx         = 0,
        .defrag_thold          = -1.0f,
        .cb_eval               = NULL,
        .cb_eval_user_data     = NULL,
        .type_k                = GGML_TYPE_F16,
        .type_v                = GGML_TYPE_F16,
        .abort_callback        = NULL,
        .abort_callback_data   = NULL,
        .embeddings            = false,
        .offload_kqv           = true,
        .no_perf               = true,
        .op_offload            = true,
        .swa_full              = true,
        .kv_unified            = false,
        .samplers              = NULL,
        .n_samplers            = 0,
    };
    return p;
}

// ---- model loading -----------------------------------------------------------------------------------------

// the default progress display: one dot per percent, then a newline
static bool default_progress(float progress, void * user_data) {
    unsigned * shown = user_data;
    const unsigned pct = (unsigned) (100.0f * progress);
    while (pct > *shown) {
        (*shown)++;
        LLAMA_LOG_CONT(".");
        if (*shown >= 100) {
            LLAMA_LOG_CONT("\n");
        }
    }
    return true;
}

void llama_model_free(struct llama_model * model) {
    if (!model) {
        return;
    }
    llama_adapter_lora_free_all(model);
    if (model->buf_w) {
        ggml_backend_buffer_free(model->buf_w);
    }
    if (model->ctx_w) {
        ggml_free(model->ctx_w);
    }
    for (int i = 0; i < model->n_mappings; i++) {
        if (model->mappings[i].locked) {
            munlock(model->mappings[i].addr, model->mappings[i].size);
        }
        munmap(model->mappings[i].addr, model->mappings[i].size);
    }
    free(model->mappings);
    if (model->vocab) {
        llama_vocab_free(model->vocab);
    }
    gguf_free(model->gguf_meta);
    for (int32_t i = 0; i < model->n_meta; i++) {
        free(model->meta_keys[i]);
        free(model->meta_vals[i]);
    }
    free(model->meta_keys);
    free(model->meta_vals);
    free(model->layers);
    free(model->name);
    free(model);
}

void llama_free_model(struct llama_model * model) {
    llama_model_free(model);
}

// paths: the model's file, or its splits in order (one path: the other splits are found by name)
static struct llama_model * model_load(const char ** paths, size_t n_paths, struct llama_model_params params) {
    const int64_t t_start_us = ggml_time_us();

    struct llama_model_loader * ml = llama_model_loader_init_splits(paths, n_paths, params.use_mmap,
            params.check_tensors, params.kv_overrides);
    if (!ml) {
        return NULL;
    }

    struct llama_model * model = llama_model_create(params);
    if (!model) {
        llama_model_loader_free(ml);
        return NULL;
    }
    model->t_start_us = t_start_us;

    if (!llama_model_load_hparams(model, ml)) {
        goto fail;
    }

    model->vocab = llama_vocab_load(ml->meta);
    if (!model->vocab) {
        LLAMA_LOG_ERROR("llama_model_load: failed to load the vocabulary of '%s'\n", ml->fname);
        goto fail;
    }

    model->n_elements = ml->n_elements;
    model->n_bytes    = ml->n_bytes;
    llama_model_print_info(model);

    // no_alloc: metadata and tensor headers only (used to measure memory needs), no weight data
    if (!params.vocab_only) {
        if (!llama_model_load_tensors(model, ml) || !llama_model_keep_meta(model, ml->meta, params.kv_overrides)) {
            goto fail;
        }
        unsigned shown = 0;
        llama_progress_callback cb = params.progress_callback;
        void * cb_ud = params.progress_callback_user_data;
        if (!cb) {
            cb = default_progress;
            cb_ud = &shown;
        }
        if (!params.no_alloc && !llama_ml_load_all_data(ml, model->ctx_w, params.use_mlock, cb, cb_ud, &model->buf_w)) {
            goto fail;
        }
        // the weights point into the mappings: the model keeps them
        if (ml->use_mmap && !params.no_alloc) {
            model->mappings = calloc((size_t) ml->n_files, sizeof(*model->mappings));
            if (!model->mappings) {
                LLAMA_LOG_ERROR("llama_model_load: out of memory\n");
                goto fail;
            }
            for (int i = 0; i < ml->n_files; i++) {
                struct llama_model_file * f = &ml->files[i];
                if (f->mapping) {
                    model->mappings[model->n_mappings++] = (struct llama_model_mapping) { f->mapping, f->size, f->mlocked };
                    f->mapping = NULL;
                    f->mlocked = false;
                }
            }
        }
    }

    llama_model_loader_free(ml);
    model->t_load_us = ggml_time_us() - t_start_us;
    return model;

fail:
    llama_model_free(model);
    llama_model_loader_free(ml);
    return NULL;
}

struct llama_model * llama_model_load_from_file(const char * path_model, struct llama_model_params params) {
    return model_load(&path_model, 1, params);
}

struct llama_model * llama_load_model_from_file(const char * path_model, struct llama_model_params params) {
    return llama_model_load_from_file(path_model, params);
}

// The loader reads and maps files by path, so an open FILE is reached through its descriptor's /proc/self/fd
// entry: the same open file, read from its start (GGUF offsets are absolute) whatever the FILE's position.
struct llama_model * llama_model_load_from_file_ptr(FILE * file, struct llama_model_params params) {
    if (!file) {
        LLAMA_LOG_ERROR("llama_model_load_from_file_ptr: file is NULL\n");
        return NULL;
    }
    const int fd = fileno(file);
    if (fd < 0) {
        LLAMA_LOG_ERROR("llama_model_load_from_file_ptr: the FILE has no file descriptor\n");
        return NULL;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    return llama_model_load_from_file(path, params);
}

struct llama_model * llama_model_load_from_splits(const char ** paths, size_t n_paths, struct llama_model_params params) {
    if (!paths || n_paths == 0) {
        LLAMA_LOG_ERROR("llama_model_load_from_splits: no paths given\n");
        return NULL;
    }
    return model_load(paths, n_paths, params);
}

int32_t llama_split_path(char * split_path, size_t maxlen, const char * path_prefix, int32_t split_no, int32_t split_count) {
    if (!split_path || maxlen == 0 || !path_prefix) {
        return 0;
    }
    const int n = snprintf(split_path, maxlen, "%s-%05d-of-%05d.gguf", path_prefix, split_no + 1, split_count);
    return n < 0 ? 0 : (n >= (int) maxlen ? (int32_t) maxlen - 1 : n);
}

int32_t llama_split_prefix(char * split_prefix, size_t maxlen, const char * split_path, int32_t split_no, int32_t split_count) {
    if (!split_prefix || !split_path || maxlen == 0) {
        return 0;
    }
    char postfix[64];
    snprintf(postfix, sizeof(postfix), "-%05d-of-%05d.gguf", split_no + 1, split_count);
    const size_t lp = strlen(split_path), lq = strlen(postfix);
    if (lp <= lq || strcmp(split_path + lp - lq, postfix) != 0) {
        return 0;
    }
    const size_t n = lp - lq;
    const size_t c = n < maxlen - 1 ? n : maxlen - 1;
    memcpy(split_prefix, split_path, c);
    split_prefix[c] = '\0';
    return (int32_t) n;
}

// ---- model queries -----------------------------------------------------------------------------------------

const struct llama_vocab * llama_model_get_vocab(const struct llama_model * model) {
    return model ? model->vocab : NULL;
}

enum llama_rope_type llama_model_rope_type(const struct llama_model * model) {
    return model->hparams.rope_type;
}

int32_t llama_model_n_ctx_train(const struct llama_model * model) { return (int32_t) model->hparams.n_ctx_train; }
int32_t llama_model_n_embd     (const struct llama_model * model) { return (int32_t) model->hparams.n_embd; }
int32_t llama_model_n_embd_inp (const struct llama_model * model) { return (int32_t) model->hparams.n_embd; }
int32_t llama_model_n_embd_out (const struct llama_model * model) { return (int32_t) model->hparams.n_embd; }
int32_t llama_model_n_layer    (const struct llama_model * model) { return (int32_t) model->hparams.n_layer; }
int32_t llama_model_n_swa      (const struct llama_model * model) { return (int32_t) model->hparams.n_swa; }

int32_t llama_model_n_head(const struct llama_model * model) {
    return model->hparams.n_layer > 0 ? (int32_t) model->hparams.n_head_arr[0] : 0;
}

int32_t llama_model_n_head_kv(const struct llama_model * model) {
    return model->hparams.n_layer > 0 ? (int32_t) model->hparams.n_head_kv_arr[0] : 0;
}

int32_t llama_n_ctx_train(const struct llama_model * model) { return llama_model_n_ctx_train(model); }
int32_t llama_n_embd     (const struct llama_model * model) { return llama_model_n_embd(model); }
int32_t llama_n_layer    (const struct llama_model * model) { return llama_model_n_layer(model); }
int32_t llama_n_head     (const struct llama_model * model) { return llama_model_n_head(model); }

float llama_model_rope_freq_scale_train(const struct llama_model * model) {
    return model->hparams.rope_freq_scale_train;
}

uint32_t llama_model_n_cls_out(const struct llama_model * model) {
    (void) model;
    return 0;
}

const char * llama_model_cls_label(const struct llama_model * model, uint32_t i) {
    (void) model;
    (void) i;
    return NULL;
}

// copies s into buf like snprintf; -1 and an empty buf when s is NULL
static int32_t copy_meta(const char * s, char * buf, size_t buf_size) {
    if (!s) {
        if (buf && buf_size > 0) {
            buf[0] = '\0';
        }
        return -1;
    }
    return (int32_t) snprintf(buf, buf_size, "%s", s);
}

int32_t llama_model_meta_val_str(const struct llama_model * model, const char * key, char * buf, size_t buf_size) {
    return copy_meta(llama_model_meta_get(model, key), buf, buf_size);
}

int32_t llama_model_meta_count(const struct llama_model * model) {
    return model ? model->n_meta : 0;
}

int32_t llama_model_meta_key_by_index(const struct llama_model * model, int32_t i, char * buf, size_t buf_size) {
    if (!model || i < 0 || i >= model->n_meta) {
        return copy_meta(NULL, buf, buf_size);
    }
    return copy_meta(model->meta_keys[i], buf, buf_size);
}

int32_t llama_model_meta_val_str_by_index(const struct llama_model * model, int32_t i, char * buf, size_t buf_size) {
    if (!model || i < 0 || i >= model->n_meta) {
        return copy_meta(NULL, buf, buf_size);
    }
    return copy_meta(model->meta_vals[i], buf, buf_size);
}

const char * llama_model_meta_key_str(enum llama_model_meta_key key) {
    switch (key) {
        case LLAMA_MODEL_META_KEY_SAMPLING_SEQUENCE:        return "general.sampling.sequence";
        case LLAMA_MODEL_META_KEY_SAMPLING_TOP_K:           return "general.sampling.top_k";
        case LLAMA_MODEL_META_KEY_SAMPLING_TOP_P:           return "general.sampling.top_p";
        case LLAMA_MODEL_META_KEY_SAMPLING_MIN_P:           return "general.sampling.min_p";
        case LLAMA_MODEL_META_KEY_SAMPLING_XTC_PROBABILITY: return "general.sampling.xtc_probability";
        case LLAMA_MODEL_META_KEY_SAMPLING_XTC_THRESHOLD:   return "general.sampling.xtc_threshold";
        case LLAMA_MODEL_META_KEY_SAMPLING_TEMP:            return "general.sampling.temp";
        case LLAMA_MODEL_META_KEY_SAMPLING_PENALTY_LAST_N:  return "general.sampling.penalty_last_n";
        case LLAMA_MODEL_META_KEY_SAMPLING_PENALTY_REPEAT:  return "general.sampling.penalty_repeat";
        case LLAMA_MODEL_META_KEY_SAMPLING_MIROSTAT:        return "general.sampling.mirostat";
        case LLAMA_MODEL_META_KEY_SAMPLING_MIROSTAT_TAU:    return "general.sampling.mirostat_tau";
        case LLAMA_MODEL_META_KEY_SAMPLING_MIROSTAT_ETA:    return "general.sampling.mirostat_eta";
    }
    return NULL;
}

int32_t llama_model_desc(const struct llama_model * model, char * buf, size_t buf_size) {
    return (int32_t) snprintf(buf, buf_size, "%s %s %s", llm_arch_name(model->arch), llm_type_name(model->type),
            llama_model_ftype_name(model->ftype));
}

uint64_t llama_model_size(const struct llama_model * model) {
    return model->n_bytes;
}

uint64_t llama_model_n_params(const struct llama_model * model) {
    return model->n_elements;
}

const char * llama_model_chat_template(const struct llama_model * model, const char * name) {
    char key[256];
    if (name) {
        snprintf(key, sizeof(key), "tokenizer.chat_template.%s", name);
    } else {
        snprintf(key, sizeof(key), "tokenizer.chat_template");
    }
    return llama_model_meta_get(model, key);
}

bool llama_model_has_encoder(const struct llama_model * model) {
    return model->arch == LLM_ARCH_T5;
}

bool llama_model_has_decoder(const struct llama_model * model) {
    (void) model;
    return true;
}

llama_token llama_model_decoder_start_token(const struct llama_model * model) {
    return model->hparams.dec_start_token_id;
}

bool llama_model_is_recurrent(const struct llama_model * model) {
    return model->arch == LLM_ARCH_MAMBA;
}

bool llama_model_is_hybrid(const struct llama_model * model) {
    return model->arch == LLM_ARCH_GRANITE_HYBRID || model->arch == LLM_ARCH_NEMOTRON_H;
}

bool llama_model_is_diffusion(const struct llama_model * model) {
    (void) model;
    return false;
}
