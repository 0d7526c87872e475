// common: what the programs share on top of llama.h: common_params (llama.cpp's fields and defaults),
// the bridge to llama_model_params / llama_context_params, model+context setup, and token/batch helpers.
//
// Strings in common_params are owned (malloc'd) by the struct: set them with common_params_set_str and
// release everything with common_params_free.
#pragma once

#include "llama.h"
#include "log.h"
#include "sampling-params.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

// the build (generated at build time from the git checkout, as llama.cpp's build-info: cmake/build-info.cmake)
extern int          LLAMA_BUILD_NUMBER;
extern const char * LLAMA_COMMIT;
extern const char * LLAMA_COMPILER;
extern const char * LLAMA_BUILD_TARGET;

//
// CPU utils
//

struct common_cpu_params {
    int32_t n_threads;                      // -1 = resolved to common_cpu_get_num_math() by the parser
    bool    cpumask[GGML_MAX_N_THREADS];    // CPU affinity mask
    bool    mask_valid;                     // false = any CPU
    enum ggml_sched_priority priority;      // 0 normal .. 3 realtime
    bool    strict_cpu;                     // strict CPU placement
    uint32_t poll;                          // busy-wait level 0..100
};

// physical cores (hyper-threads counted once); at least 1
int32_t common_cpu_get_num_physical_cores(void);
// the default thread count: physical cores
int32_t common_cpu_get_num_math(void);

//
// Common params
//

// which program parses: selects the options that apply (an option for LLAMA_EXAMPLE_COMMON applies to all)
enum llama_example {
    LLAMA_EXAMPLE_BATCHED,
    LLAMA_EXAMPLE_DEBUG,
    LLAMA_EXAMPLE_COMMON,
    LLAMA_EXAMPLE_SPECULATIVE,
    LLAMA_EXAMPLE_COMPLETION,
    LLAMA_EXAMPLE_CLI,
    LLAMA_EXAMPLE_EMBEDDING,
    LLAMA_EXAMPLE_PERPLEXITY,
    LLAMA_EXAMPLE_RETRIEVAL,
    LLAMA_EXAMPLE_PASSKEY,
    LLAMA_EXAMPLE_IMATRIX,
    LLAMA_EXAMPLE_BENCH,
    LLAMA_EXAMPLE_SERVER,
    LLAMA_EXAMPLE_CVECTOR_GENERATOR,
    LLAMA_EXAMPLE_EXPORT_LORA,
    LLAMA_EXAMPLE_MTMD,
    LLAMA_EXAMPLE_LOOKUP,
    LLAMA_EXAMPLE_PARALLEL,
    LLAMA_EXAMPLE_TTS,
    LLAMA_EXAMPLE_DIFFUSION,
    LLAMA_EXAMPLE_FINETUNE,
    LLAMA_EXAMPLE_FIT_PARAMS,
    LLAMA_EXAMPLE_RESULTS,
    LLAMA_EXAMPLE_EXPORT_GRAPH_OPS,
    LLAMA_EXAMPLE_DOWNLOAD,
    LLAMA_EXAMPLE_TOKENIZE,

    LLAMA_EXAMPLE_COUNT,
};

enum common_conversation_mode {
    COMMON_CONVERSATION_MODE_DISABLED = 0,
    COMMON_CONVERSATION_MODE_ENABLED  = 1,
    COMMON_CONVERSATION_MODE_AUTO     = 2,
};

enum common_speculative_type {
    COMMON_SPECULATIVE_TYPE_NONE,          // no speculative decoding
    COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE,  // standalone draft model
    COMMON_SPECULATIVE_TYPE_DRAFT_EAGLE3,
    COMMON_SPECULATIVE_TYPE_DRAFT_MTP,
    COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE,  // self-speculative decoding from n-grams
    COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K,
    COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V,
    COMMON_SPECULATIVE_TYPE_NGRAM_MOD,
    COMMON_SPECULATIVE_TYPE_NGRAM_CACHE,   // 3-level n-gram cache (llama-lookup)
    COMMON_SPECULATIVE_TYPE_COUNT
};

// "none", "draft-simple", ... ; NULL for an out-of-range value
const char * common_speculative_type_to_str(enum common_speculative_type type);
// COMMON_SPECULATIVE_TYPE_COUNT when the name is unknown
enum common_speculative_type common_speculative_type_from_str(const char * name);

// --reasoning-format (llama.cpp's names: none, auto, deepseek-legacy, deepseek)
enum common_reasoning_format {
    COMMON_REASONING_FORMAT_NONE,
    COMMON_REASONING_FORMAT_AUTO,
    COMMON_REASONING_FORMAT_DEEPSEEK_LEGACY,
    COMMON_REASONING_FORMAT_DEEPSEEK,
};

struct common_params_model {
    char * path;     // local path (owned)
    char * url;      // not supported here (no network); kept for compatibility (owned)
    char * hf_repo;  // idem (owned)
    char * hf_file;  // idem (owned)
};

#define COMMON_SPEC_TYPES_MAX 8

// draft-model speculative decoding parameters
struct common_params_speculative_draft {
    int32_t n_max;          // 3: maximum number of tokens to draft
    int32_t n_min;          // 0: minimum number of draft tokens
    float   p_split;        // 0.1: split probability
    float   p_min;          // 0.0: minimum draft probability (greedy)
    bool    backend_sampling; // true: draft sampling on the backend

    struct common_params_model mparams; // -md

    int32_t n_gpu_layers;   // -1 = default
    int32_t n_ctx;          // 0 = same as the target
    enum ggml_type cache_type_k;
    enum ggml_type cache_type_v;

    struct common_cpu_params cpuparams;       // -td
    struct common_cpu_params cpuparams_batch; // -tbd
};

struct common_params_speculative_ngram {
    uint16_t size_n;   // 12: n-gram size for lookup
    uint16_t size_m;   // 48: m-gram size for drafted tokens
    uint16_t min_hits; // 1
};

// ngram-mod: a shared hash of n_match-token n-grams to the token that followed them
struct common_params_speculative_ngram_mod {
    int32_t n_match; // 24: n-gram lookup length
    int32_t n_max;   // 64: maximum number of drafted tokens
    int32_t n_min;   // 48: fewer drafted tokens than this and the draft is dropped
};

struct common_params_speculative {
    int32_t n_types;
    enum common_speculative_type types[COMMON_SPEC_TYPES_MAX]; // { NONE }

    struct common_params_speculative_draft draft;
    struct common_params_speculative_ngram ngram_simple;
    struct common_params_speculative_ngram ngram_map_k;   // --spec-ngram-map-k-*
    struct common_params_speculative_ngram ngram_map_k4v; // --spec-ngram-map-k4v-*
    struct common_params_speculative_ngram_mod ngram_mod; // --spec-ngram-mod-*

    char * lookup_cache_static;  // -lcs (owned)
    char * lookup_cache_dynamic; // -lcd (owned)
};

// one --lora / --lora-scaled adapter
struct common_adapter_lora_info {
    char * path;  // owned
    float  scale;
};

// one --control-vector / --control-vector-scaled file
struct common_control_vector_load_info {
    char * fname;    // owned
    float  strength;
};

// learning-rate schedule of llama.cpp's finetune: lr0 halving per epoch down to lr_min (reached after
// decay_epochs, default all epochs), constant lr0 when lr_min <= 0; wd is the weight decay
struct lr_opt {
    float    lr0;          // learning rate at first epoch
    float    lr_min;       // -1: no decay
    float    decay_epochs; // if > 0, the learning rate starts at lr0 and decays to lr_min after this many epochs
    float    scale_epoch;  // set by lr_opt_init
    float    wd;
    unsigned epochs;
    unsigned epoch;        // set by the caller's epoch loop
};

struct common_params {
    int32_t n_predict;             // -1: max new tokens, -1 = no limit
    int32_t n_ctx;                 // 0: context size, 0 = from the model
    int32_t n_batch;               // 2048: logical batch size
    int32_t n_ubatch;              // 512: physical batch size
    int32_t n_keep;                // 0: tokens kept from the initial prompt on context shift
    int32_t n_chunks;              // -1: max chunks (perplexity), -1 = all
    int32_t n_parallel;            // 1: parallel sequences
    bool    n_parallel_explicit;   // -np was given
    int32_t n_sequences;           // 1: sequences to decode
    int32_t n_outputs_max;         // 0: max outputs in a batch, 0 = n_batch
    int32_t n_outputs_max_per_seq; // 1: max outputs per sequence
    int32_t grp_attn_n;            // 1
    int32_t grp_attn_w;            // 512
    int32_t n_print;               // -1
    float   rope_freq_base;        // 0 = from model
    float   rope_freq_scale;       // 0 = from model
    float   yarn_ext_factor;       // -1 = from model
    float   yarn_attn_factor;      // -1
    float   yarn_beta_fast;        // -1
    float   yarn_beta_slow;        // -1
    int32_t yarn_orig_ctx;         // 0

    int32_t n_gpu_layers;          // -1 = auto
    int32_t main_gpu;              // 0
    enum llama_split_mode split_mode; // LAYER

    struct common_cpu_params cpuparams;
    struct common_cpu_params cpuparams_batch;

    ggml_backend_sched_eval_callback cb_eval;
    void * cb_eval_user_data;

    enum llama_rope_scaling_type rope_scaling_type; // UNSPECIFIED
    enum llama_pooling_type      pooling_type;      // UNSPECIFIED
    enum llama_attention_type    attention_type;    // UNSPECIFIED
    enum llama_flash_attn_type   flash_attn_type;   // AUTO

    struct common_params_sampling    sampling;
    struct common_params_speculative speculative;

    struct common_params_model model;

    char * prompt;            // -p / -f (owned)
    char * system_prompt;     // -sys (owned)
    char * prompt_file;       // -f: the file name (owned)
    char * path_prompt_cache; // --prompt-cache (owned)
    char * input_prefix;      // --in-prefix (owned)
    char * input_suffix;      // --in-suffix (owned)
    char * logits_file;       // --logits-file (owned)

    int32_t n_antiprompt;     // -r, owned strings
    char ** antiprompt;

    int32_t n_kv_overrides;   // --override-kv; the array ends with an entry whose key is empty
    struct llama_model_kv_override * kv_overrides;

    int32_t n_lora_adapters;  // --lora FNAME[,...] (scale 1) / --lora-scaled FNAME:SCALE[,...]
    struct common_adapter_lora_info * lora_adapters;
    bool    lora_init_without_apply; // load the adapters but do not apply them to the context

    int32_t n_control_vectors; // --control-vector FNAME[,...] / --control-vector-scaled FNAME:SCALE[,...]
    struct common_control_vector_load_info * control_vectors;
    int32_t control_vector_layer_start; // -1: from layer 1 (--control-vector-layer-range START END)
    int32_t control_vector_layer_end;   // -1: to the last layer

    int32_t verbosity;        // log threshold (LOG_DEFAULT_LLAMA); -v = INT_MAX

    int32_t ppl_stride;       // 0
    int32_t ppl_output_type;  // 0
    bool    hellaswag;
    size_t  hellaswag_tasks;  // 400
    bool    winogrande;
    size_t  winogrande_tasks; // 0
    bool    multiple_choice;
    size_t  multiple_choice_tasks;
    bool    kl_divergence;

    bool usage;               // -h
    bool use_color;
    bool special;             // -sp: render special tokens
    bool interactive;
    bool interactive_first;
    bool prompt_cache_all;
    bool prompt_cache_ro;

    bool escape;              // true: process \n \t ... in the prompt
    bool multiline_input;
    bool simple_io;
    bool cont_batching;       // true
    bool no_perf;             // false
    bool show_timings;        // true
    bool ctx_shift;           // false
    bool swa_full;
    bool kv_unified;

    bool input_prefix_bos;
    bool verbose_prompt;
    bool display_prompt;      // true
    bool no_kv_offload;
    bool warmup;              // true
    bool check_tensors;
    bool no_op_offload;
    bool no_extra_bufts;
    bool no_host;
    bool use_mmap;            // true
    bool use_mlock;
    bool single_turn;

    enum ggml_type cache_type_k; // F16
    enum ggml_type cache_type_v; // F16

    enum common_conversation_mode conversation_mode; // AUTO

    // embedding
    bool    embedding;        // get only sentence embedding
    bool    spm_infill;       // server /infill: suffix/prefix/middle order instead of prefix/suffix/middle
    int32_t embd_normalize;   // 2: -1 none, 0 max absolute int16, 1 taxicab, 2 euclidean, >2 p-norm
    char *  embd_out;         // "" = plain, "array", "json", "json+" (owned)
    char *  embd_sep;         // "\n" (owned)
    char *  cls_sep;          // "\t" (owned)

    // server (llama-server; llama.cpp's field names)
    int32_t port;             // 8080
    int32_t timeout_read;     // 600
    int32_t timeout_write;    // 600
    int32_t n_threads_http;   // -1 = max(n_parallel + 2, cores - 1)
    int32_t n_cache_reuse;    // --cache-reuse: min chunk size to reuse from the cache by KV shifting (0: off)
    int32_t http_max_body;    // 16 MiB: largest request body in bytes (llama.c's --http-max-body)
    char *  hostname;         // "127.0.0.1" (owned)
    char *  model_alias;      // -a: comma-separated names the API reports (owned)
    char *  chat_template;    // --chat-template: built-in template name (owned)
    char *  slot_save_path;   // --slot-save-path (owned; NULL: slot save/restore disabled)
    int32_t n_api_keys;       // --api-key / --api-key-file, owned strings
    char ** api_keys;
    bool    use_jinja;        // --jinja / --no-jinja: chat templates run in the Jinja engine (common/jinja)
    bool    webui;            // true: --webui / --no-webui (accepted; no web UI is built)
    bool    endpoint_slots;   // true: GET /slots
    bool    endpoint_props;   // false: POST /props
    bool    endpoint_metrics; // false: GET /metrics

    // llama.cpp options that common/arg.c accepts with their syntax; its help says which take effect here
    enum ggml_numa_strategy numa;     // --numa: llama_numa_init in common_init_from_params
    ggml_backend_dev_t * devices;     // -dev: NULL-terminated (owned); NULL = all devices; { NULL } = none
    float   tensor_split[16];         // -ts: per-device proportions (llama_max_devices() entries)
    int32_t n_tensor_buft_overrides;  // -ot / -cmoe / -ncmoe; the array ends with a { NULL, NULL } entry and
    struct llama_model_tensor_buft_override * tensor_buft_overrides; // owns its patterns
    bool    use_direct_io;            // -dio / --load-mode dio
    bool    fit_params;               // -fit: true
    int32_t fit_params_min_ctx;       // -fitc: 4096
    int32_t n_ctx_checkpoints;        // --ctx-checkpoints: 32
    int32_t cache_ram_mib;            // --cache-ram: 8192 (-1 no limit, 0 disabled)
    bool    offline;                  // --offline
    char *  api_prefix;               // --api-prefix: the server's routes live under it (owned; NULL = none)
    char *  default_template_kwargs;  // --chat-template-kwargs: a JSON object text (owned; NULL = none)
    enum common_reasoning_format reasoning_format; // --reasoning-format: AUTO
    int32_t reasoning_budget;         // --reasoning-budget: -1 = unrestricted
    float   slot_prompt_similarity;   // -sps: 0.10 (0 = disabled)
    bool    prefill_assistant;        // true

    // llama-imatrix (llama.cpp's field names)
    char *  out_file;                 // -o: output file (owned; NULL = the program's default)
    int32_t n_out_freq;               // -ofreq: 10: write the output every N chunks
    int32_t n_save_freq;              // --save-frequency: 0: also keep a copy <out>.at_N every N chunks (0 = never)
    int32_t i_chunk;                  // --chunk: 0: skip the first N chunks of the input
    bool    process_output;           // --process-output: also collect output.weight
    bool    compute_ppl;              // true: --no-ppl clears it
    bool    parse_special;            // --parse-special: special tokens in the text are parsed
    bool    show_statistics;          // --show-statistics: print statistics of one --in-file and exit
    int32_t n_in_files;               // --in-file (repeatable): imatrix files to combine, owned strings
    char ** in_files;

    // finetune (llama-finetune)
    struct lr_opt lr;                          // -lr, -lr-min, -decay-epochs, -wd, -epochs
    enum ggml_opt_optimizer_type optimizer;    // -opt adamw|sgd
    float   val_split;                         // -val-split: fraction of the data held out for evaluation
};

// llama.cpp's defaults (strings that have a default are allocated)
struct common_params common_params_default(void);
// release every owned string/array; the pointers become NULL (counts 0), other fields are kept.
// Calling it again is harmless.
void common_params_free(struct common_params * params);
// replace an owned string field (*field); value NULL clears it. false when out of memory
bool common_params_set_str(char ** field, const char * value);

// chunked evaluation (perplexity, imatrix): chunks of n_ctx tokens, as many per batch as n_batch holds, each in
// its own sequence; sets n_parallel, n_ctx (the cache for all of them) and n_batch. n_ctx must be > 0.
void common_params_chunks_per_batch(struct common_params * params);

// llama.cpp's parse_cpu_mask: hex digits (optional 0x), the last digit holds CPUs 0-3; sets the mask's CPUs
// in boolmask (others keep their value), or leaves it untouched and returns false for a malformed mask
bool parse_cpu_mask(const char * mask, bool * boolmask);
// --list-devices: the backend devices other than the CPU with their memory; none_line: "  (none)" when there are
// none (llama-bench's form)
void common_print_devices(bool none_line);

// sets the process priority (llama.cpp's set_process_priority); false (warned) when the system refuses
bool set_process_priority(enum ggml_sched_priority prio);

// logging setup for a program: library messages go through common/log.c
void common_init(void);

// "system_info: n_threads = N (n_threads_batch = M) / T | <llama_print_system_info()>" (static buffer)
const char * common_params_get_system_info(const struct common_params * params);

struct llama_model_params   common_model_params_to_llama  (const struct common_params * params);
struct llama_context_params common_context_params_to_llama(const struct common_params * params);

// model + context built from params; on failure both are NULL and one error line was logged.
// With params->warmup an empty run (BOS [+ EOS]) is decoded and the memory cleared again.
struct common_init_result {
    struct llama_model   * model;
    struct llama_context * context;
};

struct common_init_result common_init_from_params(struct common_params * params);

// the sum of the strength-scaled control vectors in infos[0..n): data [n_embd * n_layers] starting at layer 1
// (llama_set_adapter_cvec's layout; malloc'd, caller frees). n_embd == -1 on error (logged).
struct common_control_vector_data {
    int32_t n_embd;
    float * data;
    size_t  len;
};
struct common_control_vector_data common_control_vector_load(const struct common_control_vector_load_info * infos, int32_t n);

// loads params' LoRA adapters on model and (unless lora_init_without_apply) sets them on ctx, then applies
// the control vectors; false (logged) on failure. Part of common_init_from_params.
bool common_adapters_apply(const struct common_params * params, struct llama_model * model, struct llama_context * ctx);
void common_init_result_free(struct common_init_result * res);

//
// Vocab utils
//

// tokens of text[0..text_len) (text_len < 0: strlen); *out is malloc'd (caller frees), *n_out its length.
// false (and *out NULL) on error
bool common_tokenize(const struct llama_vocab * vocab, const char * text, int32_t text_len,
                     bool add_special, bool parse_special, llama_token ** out, int32_t * n_out);

// the text of one token (malloc'd, NUL-terminated, may contain NUL bytes: *len is the length if not NULL);
// NULL on error
char * common_token_to_piece(const struct llama_vocab * vocab, llama_token token, bool special, int32_t * len);

// text of a token sequence (malloc'd); NULL on error
char * common_detokenize(const struct llama_vocab * vocab, const llama_token * tokens, int32_t n_tokens,
                         bool special);

// makes room for n tokens in the growable array *arr of *cap allocated (doubling from 256); false when out of
// memory (the array then stays as it was)
bool common_tokens_reserve(llama_token ** arr, int32_t * cap, int32_t n);

// appends t[0..k) to the growable array *arr (*n in use, *cap allocated, doubling from 256); false when out of
// memory (the array then stays as it was)
bool common_tokens_append(llama_token ** arr, int32_t * n, int32_t * cap, const llama_token * t, int32_t k);

// appends the accepted ids[0..n_ids) to the output *out (*n_out in use, *cap_out allocated) until it holds n_max,
// logging each one's piece; stops after an end-of-generation token (kept, not logged) and sets *eog.
// false when out of memory
bool common_emit_tokens(const struct llama_vocab * vocab, const llama_token * ids, size_t n_ids, bool special,
                        int32_t n_max, llama_token ** out, int32_t * n_out, int32_t * cap_out, bool * eog);

// logs the text of tokens[0..n) (the prompt echo of the examples)
void common_log_tokens_text(const struct llama_vocab * vocab, const llama_token * tokens, int32_t n);

// logs llama.cpp's "encoded/decoded N tokens in T seconds, speed: S t/s" summary lines
void common_log_speed(int32_t n_enc, int64_t t_enc_us, int32_t n_dec, int64_t t_dec_us);

// prints "ids: <id> <id> ...\n" to stderr: the generated ids in the machine-readable form that the tests compare
// across runs of the speculative examples
void common_print_ids(const llama_token * ids, int32_t n);

//
// Batch utils
//

void common_batch_clear(struct llama_batch * batch);
// decodes tokens[0..n) at positions 0..n-1 of sequence 0 without requesting any output (with backend sampling
// every output draws from the seeded stream, even one nobody reads); false (logged) on failure
bool common_decode_no_output(struct llama_context * ctx, const llama_token * tokens, int32_t n);
// appends one token; the batch must have been allocated large enough (llama_batch_init)
void common_batch_add(struct llama_batch * batch, llama_token id, llama_pos pos,
                      const llama_seq_id * seq_ids, int32_t n_seq_ids, bool logits);

//
// Embedding utils
//

// embd_norm: -1 none, 0 max absolute (scaled to int16 range), 1 taxicab, 2 euclidean, >2 p-norm
void  common_embd_normalize(const float * inp, float * out, int32_t n, int32_t embd_norm);
float common_embd_similarity_cos(const float * embd1, const float * embd2, int32_t n);

//
// String / file utils
//

// processes \n \t \r \\ \' \" \xHH ... in place
void common_string_process_escapes(char * s);
// true if an output can be written at path the way the programs write outputs (a temporary name in the same
// folder, then a rename): the folder exists and is writable. Creates nothing; false with errno set otherwise.
bool common_output_writable(const char * path);
// whole file as a NUL-terminated malloc'd buffer; NULL on error (errno kept)
char * common_read_file(const char * path, size_t * len);
// the rest of an open stream (stdin too) in the same form
char * common_read_stream(FILE * f, size_t * len);
// the ggml type for a KV-cache type name (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1);
// GGML_TYPE_COUNT when not allowed
enum ggml_type common_kv_cache_type_from_str(const char * name);

//
// Training (common-opt.c)
//


// llama.cpp's defaults: lr0 1e-5, lr_min -1, decay_epochs -1, wd 0, 2 epochs
struct lr_opt lr_opt_default(void);
// call after setting the fields, before lr_opt_get_lr
void  lr_opt_init(struct lr_opt * lr);
float lr_opt_get_lr(const struct lr_opt * lr, float epoch);

// ggml_opt_get_optimizer_params over a struct lr_opt (userdata): AdamW / SGD at the epoch's learning rate
struct ggml_opt_optimizer_params common_opt_lr_pars(void * userdata);

// dataset of llama_n_ctx(ctx)-token datapoints starting every stride tokens, labels the following tokens;
// NULL (logged) when there are too few tokens for one datapoint
ggml_opt_dataset_t common_opt_dataset_init(struct llama_context * ctx, const llama_token * tokens, int64_t n_tokens,
                                           int64_t stride);

#ifdef __cplusplus
}
#endif
