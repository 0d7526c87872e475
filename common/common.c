#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

//
// CPU utils
//

int32_t common_cpu_get_num_physical_cores(void) {
    // distinct (physical package, core) pairs: hyper-threads share a core and do not add math throughput
    FILE * f = fopen("/proc/cpuinfo", "r");
    int n_cores = 0;
    if (f) {
        enum { MAX_PAIRS = 4096 };
        int pairs[MAX_PAIRS][2]; // 32 KiB; local so that concurrent callers do not share it
        int n_pairs = 0;
        int phys = 0;
        int core = -1;
        char line[512];
        while (fgets(line, sizeof(line), f)) {
            if (strncmp(line, "physical id", 11) == 0) {
                const char * c = strchr(line, ':');
                phys = c ? atoi(c + 1) : 0;
            } else if (strncmp(line, "core id", 7) == 0) {
                const char * c = strchr(line, ':');
                core = c ? atoi(c + 1) : -1;
                bool seen = false;
                for (int i = 0; i < n_pairs; i++) {
                    if (pairs[i][0] == phys && pairs[i][1] == core) {
                        seen = true;
                        break;
                    }
                }
                if (!seen && n_pairs < MAX_PAIRS) {
                    pairs[n_pairs][0] = phys;
                    pairs[n_pairs][1] = core;
                    n_pairs++;
                }
            }
        }
        fclose(f);
        n_cores = n_pairs;
    }
    if (n_cores <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        n_cores = n > 0 ? (int) (n > 1 ? n / 2 : 1) : 4;
    }
    // never more than the CPUs we may run on
    long n_online = sysconf(_SC_NPROCESSORS_ONLN);
    if (n_online > 0 && n_cores > n_online) {
        n_cores = (int) n_online;
    }
    return n_cores > 0 ? n_cores : 1;
}

int32_t common_cpu_get_num_math(void) {
    return common_cpu_get_num_physical_cores();
}

//
// speculative type names
//

static const char * const k_spec_type_names[COMMON_SPECULATIVE_TYPE_COUNT] = {
    [COMMON_SPECULATIVE_TYPE_NONE]          = "none",
    [COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]  = "draft-simple",
    [COMMON_SPECULATIVE_TYPE_DRAFT_EAGLE3]  = "draft-eagle3",
    [COMMON_SPECULATIVE_TYPE_DRAFT_MTP]     = "draft-mtp",
    [COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]  = "ngram-simple",
    [COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K]   = "ngram-map-k",
    [COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V] = "ngram-map-k4v",
    [COMMON_SPECULATIVE_TYPE_NGRAM_MOD]     = "ngram-mod",
    [COMMON_SPECULATIVE_TYPE_NGRAM_CACHE]   = "ngram-cache",
};

const char * common_speculative_type_to_str(enum common_speculative_type type) {
    if ((int) type < 0 || type >= COMMON_SPECULATIVE_TYPE_COUNT) {
        return NULL;
    }
    return k_spec_type_names[type];
}

enum common_speculative_type common_speculative_type_from_str(const char * name) {
    if (!name) {
        return COMMON_SPECULATIVE_TYPE_COUNT;
    }
    for (int i = 0; i < COMMON_SPECULATIVE_TYPE_COUNT; i++) {
        if (strcmp(k_spec_type_names[i], name) == 0) {
            return (enum common_speculative_type) i;
        }
    }
    return COMMON_SPECULATIVE_TYPE_COUNT;
}

//
// params
//

struct common_params_sampling common_params_sampling_default(void) {
    struct common_params_sampling s;
    memset(&s, 0, sizeof(s));
    s.seed               = LLAMA_DEFAULT_SEED;
    s.n_prev             = 64;
    s.n_probs            = 0;
    s.min_keep           = 0;
    s.top_k              = 40;
    s.top_p              = 0.95f;
    s.min_p              = 0.05f;
    s.xtc_probability    = 0.00f;
    s.xtc_threshold      = 0.10f;
    s.typ_p              = 1.00f;
    s.temp               = 0.80f;
    s.dynatemp_range     = 0.00f;
    s.dynatemp_exponent  = 1.00f;
    s.penalty_last_n     = 64;
    s.penalty_repeat     = 1.00f;
    s.penalty_freq       = 0.00f;
    s.penalty_present    = 0.00f;
    s.dry_multiplier     = 0.0f;
    s.dry_base           = 1.75f;
    s.dry_allowed_length = 2;
    s.dry_penalty_last_n = 64;
    s.adaptive_target    = -1.0f;
    s.adaptive_decay     = 0.90f;
    s.mirostat           = 0;
    s.top_n_sigma        = -1.00f;
    s.mirostat_tau       = 5.00f;
    s.mirostat_eta       = 0.10f;

    static const char * const breakers[] = { "\n", ":", "\"", "*" };
    s.n_dry_sequence_breakers = 4;
    for (int i = 0; i < 4; i++) {
        snprintf(s.dry_sequence_breakers[i], COMMON_DRY_BREAKER_LEN_MAX, "%s", breakers[i]);
    }

    static const enum common_sampler_type chain[] = {
        COMMON_SAMPLER_TYPE_PENALTIES,
        COMMON_SAMPLER_TYPE_DRY,
        COMMON_SAMPLER_TYPE_TOP_N_SIGMA,
        COMMON_SAMPLER_TYPE_TOP_K,
        COMMON_SAMPLER_TYPE_TYPICAL_P,
        COMMON_SAMPLER_TYPE_TOP_P,
        COMMON_SAMPLER_TYPE_MIN_P,
        COMMON_SAMPLER_TYPE_XTC,
        COMMON_SAMPLER_TYPE_TEMPERATURE,
    };
    s.n_samplers = (int32_t) (sizeof(chain) / sizeof(chain[0]));
    for (int i = 0; i < s.n_samplers; i++) {
        s.samplers[i] = chain[i];
    }
    return s;
}

static void cpu_params_default(struct common_cpu_params * c) {
    memset(c, 0, sizeof(*c));
    c->n_threads  = -1;
    c->priority   = GGML_SCHED_PRIO_NORMAL;
    c->poll       = 50;
}

static char * dup_str(const char * s) {
    if (!s) {
        return NULL;
    }
    size_t n = strlen(s);
    char * d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n + 1);
    }
    return d;
}

bool common_params_set_str(char ** field, const char * value) {
    char * d = NULL;
    if (value) {
        d = dup_str(value);
        if (!d) {
            return false;
        }
    }
    free(*field);
    *field = d;
    return true;
}

void common_params_chunks_per_batch(struct common_params * params) {
    const int32_t n_chunk = params->n_ctx;
    const int32_t n_seq = params->n_batch / n_chunk > 1 ? params->n_batch / n_chunk : 1;
    const int32_t n_kv = n_seq * n_chunk;
    params->n_parallel = n_seq;
    params->n_ctx = n_kv;
    params->n_batch = params->n_batch < n_kv ? params->n_batch : n_kv;
}

struct common_params common_params_default(void) {
    struct common_params p;
    memset(&p, 0, sizeof(p));

    p.n_predict             = -1;
    p.lr                    = lr_opt_default();
    p.optimizer             = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    p.val_split             = 0.05f;
    p.control_vector_layer_start = -1;
    p.control_vector_layer_end   = -1;
    p.n_ctx                 = 0;
    p.n_batch               = 2048;
    p.n_ubatch              = 512;
    p.n_keep                = 0;
    p.n_chunks              = -1;
    p.n_parallel            = 1;
    p.n_sequences           = 1;
    p.n_outputs_max         = 0;
    p.n_outputs_max_per_seq = 1;
    p.grp_attn_n            = 1;
    p.grp_attn_w            = 512;
    p.n_print               = -1;
    p.rope_freq_base        = 0.0f;
    p.rope_freq_scale       = 0.0f;
    p.yarn_ext_factor       = -1.0f;
    p.yarn_attn_factor      = -1.0f;
    p.yarn_beta_fast        = -1.0f;
    p.yarn_beta_slow        = -1.0f;
    p.yarn_orig_ctx         = 0;

    p.n_gpu_layers = -1;
    p.main_gpu     = 0;
    p.split_mode   = LLAMA_SPLIT_MODE_LAYER;

    cpu_params_default(&p.cpuparams);
    cpu_params_default(&p.cpuparams_batch);

    p.rope_scaling_type = LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED;
    p.pooling_type      = LLAMA_POOLING_TYPE_UNSPECIFIED;
    p.attention_type    = LLAMA_ATTENTION_TYPE_UNSPECIFIED;
    p.flash_attn_type   = LLAMA_FLASH_ATTN_TYPE_AUTO;

    p.sampling = common_params_sampling_default();

    p.speculative.n_types  = 1;
    p.speculative.types[0] = COMMON_SPECULATIVE_TYPE_NONE;
    p.speculative.draft.n_max            = 3;
    p.speculative.draft.n_min            = 0;
    p.speculative.draft.p_split          = 0.1f;
    p.speculative.draft.p_min            = 0.0f;
    p.speculative.draft.backend_sampling = true;
    p.speculative.draft.n_gpu_layers     = -1;
    p.speculative.draft.n_ctx            = 0;
    p.speculative.draft.cache_type_k     = GGML_TYPE_F16;
    p.speculative.draft.cache_type_v     = GGML_TYPE_F16;
    cpu_params_default(&p.speculative.draft.cpuparams);
    cpu_params_default(&p.speculative.draft.cpuparams_batch);
    p.speculative.ngram_simple.size_n   = 12;
    p.speculative.ngram_simple.size_m   = 48;
    p.speculative.ngram_simple.min_hits = 1;
    p.speculative.ngram_map_k   = p.speculative.ngram_simple;
    p.speculative.ngram_map_k4v = p.speculative.ngram_simple;
    p.speculative.ngram_mod.n_match = 24;
    p.speculative.ngram_mod.n_max   = 64;
    p.speculative.ngram_mod.n_min   = 48;

    p.verbosity = LOG_DEFAULT_LLAMA;

    p.hellaswag_tasks = 400;

    p.escape         = true;
    p.cont_batching  = true;
    p.show_timings   = true;
    p.display_prompt = true;
    p.warmup         = true;
    p.use_mmap       = true;

    p.cache_type_k = GGML_TYPE_F16;
    p.cache_type_v = GGML_TYPE_F16;

    p.conversation_mode = COMMON_CONVERSATION_MODE_AUTO;

    p.embd_normalize = 2;
    // on allocation failure these stay NULL, which every user treats as the empty default
    p.embd_out = dup_str("");
    p.embd_sep = dup_str("\n");
    p.cls_sep  = dup_str("\t");

    p.port           = 8080;
    p.timeout_read   = 600;
    p.timeout_write  = 600;
    p.n_threads_http = -1;
    p.http_max_body  = 16 * 1024 * 1024;
    p.hostname       = dup_str("127.0.0.1");
    p.use_jinja      = true;
    p.webui          = true;
    p.endpoint_slots = true;

    p.fit_params             = true;
    p.fit_params_min_ctx     = 4096;
    p.n_ctx_checkpoints      = 32;
    p.cache_ram_mib          = 8192;
    p.reasoning_format       = COMMON_REASONING_FORMAT_AUTO;
    p.reasoning_budget       = -1;
    p.slot_prompt_similarity = 0.10f;
    p.prefill_assistant      = true;

    p.n_out_freq  = 10;
    p.compute_ppl = true;

    return p;
}

static void free_str(char ** s) {
    free(*s);
    *s = NULL;
}

static void model_params_free(struct common_params_model * m) {
    free_str(&m->path);
    free_str(&m->url);
    free_str(&m->hf_repo);
    free_str(&m->hf_file);
}

void common_params_free(struct common_params * p) {
    if (!p) {
        return;
    }
    model_params_free(&p->model);
    model_params_free(&p->speculative.draft.mparams);
    free_str(&p->speculative.lookup_cache_static);
    free_str(&p->speculative.lookup_cache_dynamic);
    free(p->sampling.logit_bias);
    p->sampling.logit_bias   = NULL;
    p->sampling.n_logit_bias = 0;
    free_str(&p->sampling.grammar);
    free_str(&p->prompt);
    free_str(&p->system_prompt);
    free_str(&p->prompt_file);
    free_str(&p->path_prompt_cache);
    free_str(&p->input_prefix);
    free_str(&p->input_suffix);
    free_str(&p->logits_file);
    free_str(&p->out_file);
    for (int i = 0; i < p->n_in_files; i++) {
        free(p->in_files[i]);
    }
    free(p->in_files);
    p->in_files   = NULL;
    p->n_in_files = 0;
    for (int i = 0; i < p->n_antiprompt; i++) {
        free(p->antiprompt[i]);
    }
    free(p->antiprompt);
    p->antiprompt   = NULL;
    p->n_antiprompt = 0;
    free(p->kv_overrides);
    p->kv_overrides   = NULL;
    p->n_kv_overrides = 0;
    for (int i = 0; i < p->n_lora_adapters; i++) {
        free(p->lora_adapters[i].path);
    }
    free(p->lora_adapters);
    p->lora_adapters   = NULL;
    p->n_lora_adapters = 0;
    for (int i = 0; i < p->n_control_vectors; i++) {
        free(p->control_vectors[i].fname);
    }
    free(p->control_vectors);
    p->control_vectors   = NULL;
    p->n_control_vectors = 0;
    free_str(&p->embd_out);
    free_str(&p->embd_sep);
    free_str(&p->cls_sep);
    free_str(&p->hostname);
    free_str(&p->model_alias);
    free_str(&p->chat_template);
    free_str(&p->slot_save_path);
    for (int i = 0; i < p->n_api_keys; i++) {
        free(p->api_keys[i]);
    }
    free(p->api_keys);
    p->api_keys   = NULL;
    p->n_api_keys = 0;
    free(p->devices);
    p->devices = NULL;
    for (int i = 0; i < p->n_tensor_buft_overrides; i++) {
        free((char *) p->tensor_buft_overrides[i].pattern);
    }
    free(p->tensor_buft_overrides);
    p->tensor_buft_overrides   = NULL;
    p->n_tensor_buft_overrides = 0;
    free_str(&p->api_prefix);
    free_str(&p->default_template_kwargs);
}

bool set_process_priority(enum ggml_sched_priority prio) {
    if (prio == GGML_SCHED_PRIO_NORMAL) {
        return true;
    }
    int nice_level = 0;
    switch (prio) {
        case GGML_SCHED_PRIO_LOW:      nice_level = 5;   break;
        case GGML_SCHED_PRIO_NORMAL:   nice_level = 0;   break;
        case GGML_SCHED_PRIO_MEDIUM:   nice_level = -5;  break;
        case GGML_SCHED_PRIO_HIGH:     nice_level = -10; break;
        case GGML_SCHED_PRIO_REALTIME: nice_level = -20; break;
    }
    errno = 0;
    if (setpriority(PRIO_PROCESS, 0, nice_level) != 0) {
        LOG_WRN("warning: failed to set process priority %d: %s\n", (int) prio, strerror(errno));
        return false;
    }
    return true;
}

void common_print_devices(bool none_line) {
    printf("Available devices:\n");
    int n = 0;
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        if (ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU) {
            continue;
        }
        size_t free_b = 0, total_b = 0;
        ggml_backend_dev_memory(dev, &free_b, &total_b);
        printf("  %s: %s (%zu MiB, %zu MiB free)\n", ggml_backend_dev_name(dev), ggml_backend_dev_description(dev),
               total_b / 1024 / 1024, free_b / 1024 / 1024);
        n++;
    }
    if (n == 0 && none_line) {
        printf("  (none)\n");
    }
}

bool parse_cpu_mask(const char * mask, bool * boolmask) {
    const char * s = mask;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
    }
    const size_t n = strlen(s);
    if (n == 0 || n * 4 > GGML_MAX_N_THREADS) {
        return false;
    }
    bool bits[GGML_MAX_N_THREADS] = { false };
    for (size_t i = 0; i < n; i++) {
        const char c = s[i];
        int d;
        if (c >= '0' && c <= '9') {
            d = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            d = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            d = c - 'A' + 10;
        } else {
            return false;
        }
        // the last digit holds CPUs 0-3
        for (int b = 0; b < 4; b++) {
            bits[(n - 1 - i) * 4 + (size_t) b] = ((d >> b) & 1) != 0;
        }
    }
    // llama.cpp adds the mask's CPUs to those already set (so -C complements --cpu-range, in any order)
    for (size_t i = 0; i < GGML_MAX_N_THREADS; i++) {
        boolmask[i] = boolmask[i] || bits[i];
    }
    return true;
}

void common_init(void) {
    llama_log_set(common_log_default_callback, NULL);
}

const char * common_params_get_system_info(const struct common_params * params) {
    static char buf[2048];
    long n_hw = sysconf(_SC_NPROCESSORS_ONLN);
    int n = snprintf(buf, sizeof(buf), "system_info: n_threads = %d", params->cpuparams.n_threads);
    if (params->cpuparams_batch.n_threads != -1 && n > 0 && (size_t) n < sizeof(buf)) {
        n += snprintf(buf + n, sizeof(buf) - (size_t) n, " (n_threads_batch = %d)", params->cpuparams_batch.n_threads);
    }
    if (n > 0 && (size_t) n < sizeof(buf)) {
        snprintf(buf + n, sizeof(buf) - (size_t) n, " / %ld | %s", n_hw, llama_print_system_info());
    }
    return buf;
}

struct llama_model_params common_model_params_to_llama(const struct common_params * params) {
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers  = params->n_gpu_layers;
    mp.main_gpu      = params->main_gpu;
    mp.split_mode    = params->split_mode;
    mp.use_mmap      = params->use_mmap;
    mp.use_mlock     = params->use_mlock;
    mp.check_tensors = params->check_tensors;
    mp.use_extra_bufts = !params->no_extra_bufts;
    mp.no_host       = params->no_host;
    mp.kv_overrides  = params->n_kv_overrides > 0 ? params->kv_overrides : NULL;
    mp.devices       = params->devices;
    mp.tensor_buft_overrides = params->n_tensor_buft_overrides > 0 ? params->tensor_buft_overrides : NULL;
    mp.tensor_split  = params->tensor_split;
    mp.use_direct_io = params->use_direct_io;
    return mp;
}

struct llama_context_params common_context_params_to_llama(const struct common_params * params) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx                 = (uint32_t) (params->n_ctx > 0 ? params->n_ctx : 0);
    cp.n_seq_max             = (uint32_t) (params->n_parallel > 0 ? params->n_parallel : 1);
    cp.n_outputs_max         = (uint32_t) (params->n_outputs_max > 0 ? params->n_outputs_max : 0);
    cp.n_outputs_max_per_seq = (uint32_t) (params->n_outputs_max_per_seq > 0 ? params->n_outputs_max_per_seq : 0);
    cp.n_batch               = (uint32_t) (params->n_batch > 0 ? params->n_batch : 0);
    cp.n_ubatch              = (uint32_t) (params->n_ubatch > 0 ? params->n_ubatch : 0);
    if (params->cpuparams.n_threads > 0) {
        cp.n_threads = params->cpuparams.n_threads;
    }
    cp.n_threads_batch = params->cpuparams_batch.n_threads > 0 ? params->cpuparams_batch.n_threads : cp.n_threads;
    cp.embeddings        = params->embedding;
    cp.rope_scaling_type = params->rope_scaling_type;
    cp.rope_freq_base    = params->rope_freq_base;
    cp.rope_freq_scale   = params->rope_freq_scale;
    cp.yarn_ext_factor   = params->yarn_ext_factor;
    cp.yarn_attn_factor  = params->yarn_attn_factor;
    cp.yarn_beta_fast    = params->yarn_beta_fast;
    cp.yarn_beta_slow    = params->yarn_beta_slow;
    cp.yarn_orig_ctx     = (uint32_t) (params->yarn_orig_ctx > 0 ? params->yarn_orig_ctx : 0);
    cp.pooling_type      = params->pooling_type;
    cp.attention_type    = params->attention_type;
    cp.flash_attn_type   = params->flash_attn_type;
    cp.cb_eval           = params->cb_eval;
    cp.cb_eval_user_data = params->cb_eval_user_data;
    cp.offload_kqv       = !params->no_kv_offload;
    cp.no_perf           = params->no_perf;
    cp.op_offload        = !params->no_op_offload;
    cp.swa_full          = params->swa_full;
    cp.kv_unified        = params->kv_unified;
    cp.type_k            = params->cache_type_k;
    cp.type_v            = params->cache_type_v;
    return cp;
}

//
// Vocab utils
//

bool common_tokenize(const struct llama_vocab * vocab, const char * text, int32_t text_len,
                     bool add_special, bool parse_special, llama_token ** out, int32_t * n_out) {
    *out   = NULL;
    *n_out = 0;
    if (!vocab || !text) {
        LOG_ERR("%s: no vocab or text\n", __func__);
        return false;
    }
    if (text_len < 0) {
        size_t len = strlen(text);
        if (len > INT32_MAX) {
            LOG_ERR("%s: text too long (%zu bytes)\n", __func__, len);
            return false;
        }
        text_len = (int32_t) len;
    }
    // first guess: one token per byte plus BOS/EOS, which is an upper bound for every tokenizer we have;
    // a negative result gives the exact count anyway
    int64_t cap = (int64_t) text_len + 2;
    if (cap > INT32_MAX) {
        cap = INT32_MAX;
    }
    llama_token * toks = malloc((size_t) cap * sizeof(llama_token));
    if (!toks) {
        LOG_ERR("%s: out of memory\n", __func__);
        return false;
    }
    int32_t n = llama_tokenize(vocab, text, text_len, toks, (int32_t) cap, add_special, parse_special);
    if (n < 0 && n != INT32_MIN) {
        llama_token * bigger = realloc(toks, (size_t) -n * sizeof(llama_token));
        if (!bigger) {
            free(toks);
            LOG_ERR("%s: out of memory\n", __func__);
            return false;
        }
        toks = bigger;
        int32_t want = -n;
        n = llama_tokenize(vocab, text, text_len, toks, want, add_special, parse_special);
        if (n != want) {
            n = -1;
        }
    }
    if (n < 0) {
        free(toks);
        LOG_ERR("%s: tokenization failed\n", __func__);
        return false;
    }
    *out   = toks;
    *n_out = n;
    return true;
}

char * common_token_to_piece(const struct llama_vocab * vocab, llama_token token, bool special, int32_t * len) {
    char small[64];
    int32_t n = llama_token_to_piece(vocab, token, small, (int32_t) sizeof(small), 0, special);
    char * s = NULL;
    if (n >= 0) {
        s = malloc((size_t) n + 1);
        if (!s) {
            return NULL;
        }
        memcpy(s, small, (size_t) n);
    } else {
        int32_t need = -n;
        s = malloc((size_t) need + 1);
        if (!s) {
            return NULL;
        }
        n = llama_token_to_piece(vocab, token, s, need, 0, special);
        if (n != need) {
            free(s);
            return NULL;
        }
    }
    s[n] = '\0';
    if (len) {
        *len = n;
    }
    return s;
}

char * common_detokenize(const struct llama_vocab * vocab, const llama_token * tokens, int32_t n_tokens,
                         bool special) {
    if (n_tokens < 0 || (n_tokens > 0 && !tokens)) {
        return NULL;
    }
    int32_t cap = n_tokens * 4 + 16;
    if (n_tokens > (INT32_MAX - 16) / 4) {
        cap = INT32_MAX;
    }
    char * s = malloc((size_t) cap + 1);
    if (!s) {
        return NULL;
    }
    int32_t n = llama_detokenize(vocab, tokens, n_tokens, s, cap, false, special);
    if (n < 0 && n != INT32_MIN) {
        int32_t need = -n;
        char * bigger = realloc(s, (size_t) need + 1);
        if (!bigger) {
            free(s);
            return NULL;
        }
        s = bigger;
        n = llama_detokenize(vocab, tokens, n_tokens, s, need, false, special);
        if (n != need) {
            n = -1;
        }
    }
    if (n < 0) {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    return s;
}

bool common_tokens_reserve(llama_token ** arr, int32_t * cap, int32_t n) {
    if (n <= *cap) {
        return true;
    }
    int32_t c = *cap ? *cap : 256;
    while (c < n) {
        c *= 2;
    }
    llama_token * p = (llama_token *) realloc(*arr, (size_t) c * sizeof(*p));
    if (!p) {
        return false;
    }
    *arr = p;
    *cap = c;
    return true;
}

bool common_tokens_append(llama_token ** arr, int32_t * n, int32_t * cap, const llama_token * t, int32_t k) {
    if (!common_tokens_reserve(arr, cap, *n + k)) {
        return false;
    }
    if (k > 0) {
        memcpy(*arr + *n, t, (size_t) k * sizeof(*t));
    }
    *n += k;
    return true;
}

bool common_emit_tokens(const struct llama_vocab * vocab, const llama_token * ids, size_t n_ids, bool special,
                        int32_t n_max, llama_token ** out, int32_t * n_out, int32_t * cap_out, bool * eog) {
    for (size_t i = 0; i < n_ids && *n_out < n_max; i++) {
        if (!common_tokens_append(out, n_out, cap_out, &ids[i], 1)) {
            return false;
        }
        if (llama_vocab_is_eog(vocab, ids[i])) {
            *eog = true;
            break;
        }
        char * piece = common_token_to_piece(vocab, ids[i], special, NULL);
        if (piece) {
            LOG("%s", piece);
            free(piece);
        }
    }
    return true;
}

void common_log_tokens_text(const struct llama_vocab * vocab, const llama_token * tokens, int32_t n) {
    char * text = common_detokenize(vocab, tokens, n, false);
    if (text) {
        LOG("%s", text);
        free(text);
    }
}

void common_log_speed(int32_t n_enc, int64_t t_enc_us, int32_t n_dec, int64_t t_dec_us) {
    const double t_enc = (double) t_enc_us / 1e6;
    const double t_dec = (double) t_dec_us / 1e6;
    LOG_INF("encoded %4d tokens in %8.3f seconds, speed: %8.3f t/s\n", n_enc, t_enc, t_enc > 0 ? n_enc / t_enc : 0.0);
    LOG_INF("decoded %4d tokens in %8.3f seconds, speed: %8.3f t/s\n", n_dec, t_dec, t_dec > 0 ? n_dec / t_dec : 0.0);
}

void common_print_ids(const llama_token * ids, int32_t n) {
    fprintf(stderr, "ids:");
    for (int32_t i = 0; i < n; i++) {
        fprintf(stderr, " %d", ids[i]);
    }
    fprintf(stderr, "\n");
}

//
// Batch utils
//

void common_batch_clear(struct llama_batch * batch) {
    batch->n_tokens = 0;
}

bool common_decode_no_output(struct llama_context * ctx, const llama_token * tokens, int32_t n) {
    struct llama_batch b = llama_batch_init(n, 0, 1);
    if (!b.token) {
        LOG_ERR("%s: out of memory\n", __func__);
        return false;
    }
    const llama_seq_id seq = 0;
    for (int32_t i = 0; i < n; i++) {
        common_batch_add(&b, tokens[i], i, &seq, 1, false);
    }
    const int rc = llama_decode(ctx, b);
    llama_batch_free(b);
    if (rc != 0) {
        LOG_ERR("%s: prompt decode failed\n", __func__);
        return false;
    }
    return true;
}

void common_batch_add(struct llama_batch * batch, llama_token id, llama_pos pos,
                      const llama_seq_id * seq_ids, int32_t n_seq_ids, bool logits) {
    const int32_t i = batch->n_tokens;
    batch->token[i] = id;
    batch->pos[i]   = pos;
    batch->n_seq_id[i] = n_seq_ids;
    for (int32_t j = 0; j < n_seq_ids; j++) {
        batch->seq_id[i][j] = seq_ids[j];
    }
    batch->logits[i] = logits ? 1 : 0;
    batch->n_tokens++;
}

//
// Embedding utils
//

void common_embd_normalize(const float * inp, float * out, int32_t n, int32_t embd_norm) {
    double sum = 0.0;
    switch (embd_norm) {
        case -1:
            sum = 1.0;
            break;
        case 0: {
            // scaled so that the largest magnitude maps onto the int16 range
            for (int32_t i = 0; i < n; i++) {
                double a = fabs((double) inp[i]);
                if (sum < a) {
                    sum = a;
                }
            }
            sum /= 32760.0;
        } break;
        case 2: {
            for (int32_t i = 0; i < n; i++) {
                sum += (double) inp[i] * inp[i];
            }
            sum = sqrt(sum);
        } break;
        default: {
            // 1 = taxicab, >2 = p-norm
            for (int32_t i = 0; i < n; i++) {
                sum += pow(fabs((double) inp[i]), (double) embd_norm);
            }
            sum = pow(sum, 1.0 / embd_norm);
        } break;
    }
    const float norm = sum > 0.0 ? (float) (1.0 / sum) : 0.0f;
    for (int32_t i = 0; i < n; i++) {
        out[i] = inp[i] * norm;
    }
}

float common_embd_similarity_cos(const float * embd1, const float * embd2, int32_t n) {
    double sum = 0.0, sum1 = 0.0, sum2 = 0.0;
    for (int32_t i = 0; i < n; i++) {
        sum  += (double) embd1[i] * embd2[i];
        sum1 += (double) embd1[i] * embd1[i];
        sum2 += (double) embd2[i] * embd2[i];
    }
    // two zero vectors are the same; one zero vector is unlike anything
    if (sum1 == 0.0 || sum2 == 0.0) {
        return (sum1 == 0.0 && sum2 == 0.0) ? 1.0f : 0.0f;
    }
    return (float) (sum / (sqrt(sum1) * sqrt(sum2)));
}

//
// String / file utils
//

static int hex_val(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

void common_string_process_escapes(char * s) {
    if (!s) {
        return;
    }
    size_t r = 0, w = 0;
    while (s[r]) {
        if (s[r] != '\\' || s[r + 1] == '\0') {
            s[w++] = s[r++];
            continue;
        }
        char c = s[r + 1];
        switch (c) {
            case 'n':  s[w++] = '\n'; r += 2; break;
            case 'r':  s[w++] = '\r'; r += 2; break;
            case 't':  s[w++] = '\t'; r += 2; break;
            case '\'': s[w++] = '\''; r += 2; break;
            case '"':  s[w++] = '"';  r += 2; break;
            case '\\': s[w++] = '\\'; r += 2; break;
            case 'x': {
                int h1 = hex_val(s[r + 2]);
                int h2 = h1 >= 0 ? hex_val(s[r + 3]) : -1;
                if (h1 >= 0 && h2 >= 0) {
                    s[w++] = (char) (h1 * 16 + h2);
                    r += 4;
                } else {
                    // not a valid \xHH: keep the text as written
                    s[w++] = s[r++];
                }
            } break;
            default:
                s[w++] = s[r++];
                s[w++] = s[r++];
                break;
        }
    }
    s[w] = '\0';
}

char * common_read_stream(FILE * f, size_t * len) {
    size_t cap = 4096, n = 0;
    char * buf = malloc(cap);
    if (!buf) {
        return NULL;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > SIZE_MAX / 2) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            char * bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                return NULL;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            break;
        }
    }
    if (ferror(f)) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[n] = '\0';
    if (len) {
        *len = n;
    }
    return buf;
}

bool common_output_writable(const char * path) {
    char dir[4096];
    const char * slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, sizeof(dir), ".");
    } else if (slash == path) {
        snprintf(dir, sizeof(dir), "/");
    } else {
        snprintf(dir, sizeof(dir), "%.*s", (int) (slash - path), path);
    }
    return access(dir, W_OK) == 0;
}

char * common_read_file(const char * path, size_t * len) {
    FILE * f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    char * buf = common_read_stream(f, len);
    // fclose must not replace the reason the read failed
    const int saved = errno;
    fclose(f);
    errno = saved;
    return buf;
}

enum ggml_type common_kv_cache_type_from_str(const char * name) {
    static const enum ggml_type allowed[] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0,
        GGML_TYPE_Q4_1, GGML_TYPE_IQ4_NL, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
    };
    if (!name) {
        return GGML_TYPE_COUNT;
    }
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        const char * tn = ggml_type_name(allowed[i]);
        if (tn && strcmp(tn, name) == 0) {
            return allowed[i];
        }
    }
    return GGML_TYPE_COUNT;
}
