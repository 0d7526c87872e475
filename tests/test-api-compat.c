// GENERATED from llama.cpp's public headers (stored copies of github.com/ggml-org/llama.cpp):
//   include/llama.h @ 0011438e931ec7fd258433f61d411301a759fae2 + seed #26878 (shared/seeds/000)
//   ggml/include/ggml.h @ 004eaba804a34aa1a397b61d6d5274171c5e4cba
//   ggml/include/ggml-cpu.h @ 07868731119141a213b8c66f98b63de319e5eca4
//   ggml/include/ggml-backend.h @ 07868731119141a213b8c66f98b63de319e5eca4
//   ggml/include/ggml-alloc.h @ 0450e2f9dffdc4c346ddf316945bd933f363d651
//   ggml/include/gguf.h @ 0692415aefa36f67489d0d1ba7f3c6c77497e3d2
// by a script that drops parameter names; where our form deliberately follows the seeds or newer
// upstream, a comment says so.
// Every prototype is taken through a pointer of llama.cpp's exact type, every struct is mirrored field by
// field (size, offsets, field types), every enum value and public macro is compared: a mismatch is a compile
// error; the file is regenerated as a whole, the run-time checks at its end are hand-written.
#include "llama.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"
#include "gguf.h"
#include "harness.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

// the deprecated entry points are part of the API too
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

// ---- typedefs
typedef struct llama_memory_i * ref_llama_memory_t;
_Static_assert(_Generic((ref_llama_memory_t *) 0, llama_memory_t *: 1, default: 0), "typedef llama_memory_t");
typedef int32_t ref_llama_pos;
_Static_assert(_Generic((ref_llama_pos *) 0, llama_pos *: 1, default: 0), "typedef llama_pos");
typedef int32_t ref_llama_token;
_Static_assert(_Generic((ref_llama_token *) 0, llama_token *: 1, default: 0), "typedef llama_token");
typedef int32_t ref_llama_seq_id;
_Static_assert(_Generic((ref_llama_seq_id *) 0, llama_seq_id *: 1, default: 0), "typedef llama_seq_id");
typedef bool (*ref_llama_progress_callback)(float progress, void * user_data);
_Static_assert(_Generic((ref_llama_progress_callback *) 0, llama_progress_callback *: 1, default: 0), "typedef llama_progress_callback");
typedef struct llama_token_data ref_llama_token_data;
_Static_assert(_Generic((ref_llama_token_data *) 0, llama_token_data *: 1, default: 0), "typedef llama_token_data");
typedef struct llama_token_data_array ref_llama_token_data_array;
_Static_assert(_Generic((ref_llama_token_data_array *) 0, llama_token_data_array *: 1, default: 0), "typedef llama_token_data_array");
typedef struct llama_batch ref_llama_batch;
_Static_assert(_Generic((ref_llama_batch *) 0, llama_batch *: 1, default: 0), "typedef llama_batch");
typedef struct llama_model_quantize_params ref_llama_model_quantize_params;
_Static_assert(_Generic((ref_llama_model_quantize_params *) 0, llama_model_quantize_params *: 1, default: 0), "typedef llama_model_quantize_params");
typedef struct llama_logit_bias ref_llama_logit_bias;
_Static_assert(_Generic((ref_llama_logit_bias *) 0, llama_logit_bias *: 1, default: 0), "typedef llama_logit_bias");
typedef struct llama_sampler_chain_params ref_llama_sampler_chain_params;
_Static_assert(_Generic((ref_llama_sampler_chain_params *) 0, llama_sampler_chain_params *: 1, default: 0), "typedef llama_sampler_chain_params");
typedef struct llama_chat_message ref_llama_chat_message;
_Static_assert(_Generic((ref_llama_chat_message *) 0, llama_chat_message *: 1, default: 0), "typedef llama_chat_message");
typedef uint32_t ref_llama_state_seq_flags;
_Static_assert(_Generic((ref_llama_state_seq_flags *) 0, llama_state_seq_flags *: 1, default: 0), "typedef llama_state_seq_flags");
typedef void * ref_llama_sampler_context_t;
_Static_assert(_Generic((ref_llama_sampler_context_t *) 0, llama_sampler_context_t *: 1, default: 0), "typedef llama_sampler_context_t");
typedef void (*ref_ggml_abort_callback_t)(const char * error_message);
_Static_assert(_Generic((ref_ggml_abort_callback_t *) 0, ggml_abort_callback_t *: 1, default: 0), "typedef ggml_abort_callback_t");
typedef uint16_t ref_ggml_fp16_t;
_Static_assert(_Generic((ref_ggml_fp16_t *) 0, ggml_fp16_t *: 1, default: 0), "typedef ggml_fp16_t");
typedef bool (*ref_ggml_abort_callback)(void * data);
_Static_assert(_Generic((ref_ggml_abort_callback *) 0, ggml_abort_callback *: 1, default: 0), "typedef ggml_abort_callback");
typedef uint8_t ref_ggml_guid[16];
_Static_assert(_Generic((ref_ggml_guid *) 0, ggml_guid *: 1, default: 0), "typedef ggml_guid");
typedef ggml_guid * ref_ggml_guid_t;
_Static_assert(_Generic((ref_ggml_guid_t *) 0, ggml_guid_t *: 1, default: 0), "typedef ggml_guid_t");
typedef void (*ref_ggml_custom1_op_t)(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata);
_Static_assert(_Generic((ref_ggml_custom1_op_t *) 0, ggml_custom1_op_t *: 1, default: 0), "typedef ggml_custom1_op_t");
typedef void (*ref_ggml_custom2_op_t)(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith, int nth, void * userdata);
_Static_assert(_Generic((ref_ggml_custom2_op_t *) 0, ggml_custom2_op_t *: 1, default: 0), "typedef ggml_custom2_op_t");
typedef void (*ref_ggml_custom3_op_t)(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, const struct ggml_tensor * c, int ith, int nth, void * userdata);
_Static_assert(_Generic((ref_ggml_custom3_op_t *) 0, ggml_custom3_op_t *: 1, default: 0), "typedef ggml_custom3_op_t");
typedef void (*ref_ggml_custom_op_t)(struct ggml_tensor * dst, int ith, int nth, void * userdata);
_Static_assert(_Generic((ref_ggml_custom_op_t *) 0, ggml_custom_op_t *: 1, default: 0), "typedef ggml_custom_op_t");
typedef void (*ref_ggml_log_callback)(enum ggml_log_level level, const char * text, void * user_data);
_Static_assert(_Generic((ref_ggml_log_callback *) 0, ggml_log_callback *: 1, default: 0), "typedef ggml_log_callback");
typedef void (*ref_ggml_to_float_t)(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
_Static_assert(_Generic((ref_ggml_to_float_t *) 0, ggml_to_float_t *: 1, default: 0), "typedef ggml_to_float_t");
typedef void (*ref_ggml_from_float_t)(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
_Static_assert(_Generic((ref_ggml_from_float_t *) 0, ggml_from_float_t *: 1, default: 0), "typedef ggml_from_float_t");
typedef struct ggml_threadpool * ref_ggml_threadpool_t;
_Static_assert(_Generic((ref_ggml_threadpool_t *) 0, ggml_threadpool_t *: 1, default: 0), "typedef ggml_threadpool_t");
typedef struct ggml_backend_buffer_type * ref_ggml_backend_buffer_type_t;
_Static_assert(_Generic((ref_ggml_backend_buffer_type_t *) 0, ggml_backend_buffer_type_t *: 1, default: 0), "typedef ggml_backend_buffer_type_t");
typedef struct ggml_backend_buffer * ref_ggml_backend_buffer_t;
_Static_assert(_Generic((ref_ggml_backend_buffer_t *) 0, ggml_backend_buffer_t *: 1, default: 0), "typedef ggml_backend_buffer_t");
typedef struct ggml_backend_event * ref_ggml_backend_event_t;
_Static_assert(_Generic((ref_ggml_backend_event_t *) 0, ggml_backend_event_t *: 1, default: 0), "typedef ggml_backend_event_t");
typedef struct ggml_backend * ref_ggml_backend_t;
_Static_assert(_Generic((ref_ggml_backend_t *) 0, ggml_backend_t *: 1, default: 0), "typedef ggml_backend_t");
typedef void * ref_ggml_backend_graph_plan_t;
_Static_assert(_Generic((ref_ggml_backend_graph_plan_t *) 0, ggml_backend_graph_plan_t *: 1, default: 0), "typedef ggml_backend_graph_plan_t");
typedef struct ggml_backend_reg * ref_ggml_backend_reg_t;
_Static_assert(_Generic((ref_ggml_backend_reg_t *) 0, ggml_backend_reg_t *: 1, default: 0), "typedef ggml_backend_reg_t");
typedef struct ggml_backend_device * ref_ggml_backend_dev_t;
_Static_assert(_Generic((ref_ggml_backend_dev_t *) 0, ggml_backend_dev_t *: 1, default: 0), "typedef ggml_backend_dev_t");
typedef ggml_backend_buffer_type_t (*ref_ggml_backend_split_buffer_type_t)(int main_device, const float * tensor_split);
_Static_assert(_Generic((ref_ggml_backend_split_buffer_type_t *) 0, ggml_backend_split_buffer_type_t *: 1, default: 0), "typedef ggml_backend_split_buffer_type_t");
typedef void (*ref_ggml_backend_set_n_threads_t)(ggml_backend_t backend, int n_threads);
_Static_assert(_Generic((ref_ggml_backend_set_n_threads_t *) 0, ggml_backend_set_n_threads_t *: 1, default: 0), "typedef ggml_backend_set_n_threads_t");
typedef ggml_backend_buffer_type_t * (*ref_ggml_backend_dev_get_extra_bufts_t)(ggml_backend_dev_t device);
_Static_assert(_Generic((ref_ggml_backend_dev_get_extra_bufts_t *) 0, ggml_backend_dev_get_extra_bufts_t *: 1, default: 0), "typedef ggml_backend_dev_get_extra_bufts_t");
typedef void (*ref_ggml_backend_set_abort_callback_t)(ggml_backend_t backend, ggml_abort_callback abort_callback, void * abort_callback_data);
_Static_assert(_Generic((ref_ggml_backend_set_abort_callback_t *) 0, ggml_backend_set_abort_callback_t *: 1, default: 0), "typedef ggml_backend_set_abort_callback_t");
typedef struct ggml_backend_feature * (*ref_ggml_backend_get_features_t)(ggml_backend_reg_t reg);
_Static_assert(_Generic((ref_ggml_backend_get_features_t *) 0, ggml_backend_get_features_t *: 1, default: 0), "typedef ggml_backend_get_features_t");
typedef struct ggml_backend_sched * ref_ggml_backend_sched_t;
_Static_assert(_Generic((ref_ggml_backend_sched_t *) 0, ggml_backend_sched_t *: 1, default: 0), "typedef ggml_backend_sched_t");
typedef bool (*ref_ggml_backend_sched_eval_callback)(struct ggml_tensor * t, bool ask, void * user_data);
_Static_assert(_Generic((ref_ggml_backend_sched_eval_callback *) 0, ggml_backend_sched_eval_callback *: 1, default: 0), "typedef ggml_backend_sched_eval_callback");
typedef bool (*ref_ggml_backend_eval_callback)(int node_index, struct ggml_tensor * t1, struct ggml_tensor * t2, void * user_data);
_Static_assert(_Generic((ref_ggml_backend_eval_callback *) 0, ggml_backend_eval_callback *: 1, default: 0), "typedef ggml_backend_eval_callback");
typedef struct ggml_gallocr * ref_ggml_gallocr_t;
_Static_assert(_Generic((ref_ggml_gallocr_t *) 0, ggml_gallocr_t *: 1, default: 0), "typedef ggml_gallocr_t");
typedef void (*ref_ggml_vec_dot_t)(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
_Static_assert(_Generic((ref_ggml_vec_dot_t *) 0, ggml_vec_dot_t *: 1, default: 0), "typedef ggml_vec_dot_t");
/* not provided: typedef llama_model_set_tensor_data_t */

// ---- llama: enum values and macros
// llama_context_params and llama_sampler_i carry seed #26878 (shared/seeds/000): n_outputs_max_per_seq,
// backend_init(..., n_outputs_max_per_seq), backend_reset, copy_state; llama_sampler_copy is new there too
_Static_assert((LLAMA_VOCAB_TYPE_NONE) == (0), "LLAMA_VOCAB_TYPE_NONE");
_Static_assert((LLAMA_VOCAB_TYPE_SPM) == (1), "LLAMA_VOCAB_TYPE_SPM");
_Static_assert((LLAMA_VOCAB_TYPE_BPE) == (2), "LLAMA_VOCAB_TYPE_BPE");
_Static_assert((LLAMA_VOCAB_TYPE_WPM) == (3), "LLAMA_VOCAB_TYPE_WPM");
_Static_assert((LLAMA_VOCAB_TYPE_UGM) == (4), "LLAMA_VOCAB_TYPE_UGM");
_Static_assert((LLAMA_VOCAB_TYPE_RWKV) == (5), "LLAMA_VOCAB_TYPE_RWKV");
_Static_assert((LLAMA_VOCAB_TYPE_PLAMO2) == (6), "LLAMA_VOCAB_TYPE_PLAMO2");
_Static_assert((LLAMA_ROPE_TYPE_NONE) == (-1), "LLAMA_ROPE_TYPE_NONE");
_Static_assert((LLAMA_ROPE_TYPE_NORM) == (0), "LLAMA_ROPE_TYPE_NORM");
_Static_assert((LLAMA_ROPE_TYPE_NEOX) == (GGML_ROPE_TYPE_NEOX), "LLAMA_ROPE_TYPE_NEOX");
_Static_assert((LLAMA_ROPE_TYPE_MROPE) == (GGML_ROPE_TYPE_MROPE), "LLAMA_ROPE_TYPE_MROPE");
_Static_assert((LLAMA_ROPE_TYPE_IMROPE) == (GGML_ROPE_TYPE_IMROPE), "LLAMA_ROPE_TYPE_IMROPE");
_Static_assert((LLAMA_ROPE_TYPE_VISION) == (GGML_ROPE_TYPE_VISION), "LLAMA_ROPE_TYPE_VISION");
_Static_assert((LLAMA_TOKEN_TYPE_UNDEFINED) == (0), "LLAMA_TOKEN_TYPE_UNDEFINED");
_Static_assert((LLAMA_TOKEN_TYPE_NORMAL) == (1), "LLAMA_TOKEN_TYPE_NORMAL");
_Static_assert((LLAMA_TOKEN_TYPE_UNKNOWN) == (2), "LLAMA_TOKEN_TYPE_UNKNOWN");
_Static_assert((LLAMA_TOKEN_TYPE_CONTROL) == (3), "LLAMA_TOKEN_TYPE_CONTROL");
_Static_assert((LLAMA_TOKEN_TYPE_USER_DEFINED) == (4), "LLAMA_TOKEN_TYPE_USER_DEFINED");
_Static_assert((LLAMA_TOKEN_TYPE_UNUSED) == (5), "LLAMA_TOKEN_TYPE_UNUSED");
_Static_assert((LLAMA_TOKEN_TYPE_BYTE) == (6), "LLAMA_TOKEN_TYPE_BYTE");
_Static_assert((LLAMA_TOKEN_ATTR_UNDEFINED) == (0), "LLAMA_TOKEN_ATTR_UNDEFINED");
_Static_assert((LLAMA_TOKEN_ATTR_UNKNOWN) == (1<<0), "LLAMA_TOKEN_ATTR_UNKNOWN");
_Static_assert((LLAMA_TOKEN_ATTR_UNUSED) == (1<<1), "LLAMA_TOKEN_ATTR_UNUSED");
_Static_assert((LLAMA_TOKEN_ATTR_NORMAL) == (1<<2), "LLAMA_TOKEN_ATTR_NORMAL");
_Static_assert((LLAMA_TOKEN_ATTR_CONTROL) == (1<<3), "LLAMA_TOKEN_ATTR_CONTROL");
_Static_assert((LLAMA_TOKEN_ATTR_USER_DEFINED) == (1<<4), "LLAMA_TOKEN_ATTR_USER_DEFINED");
_Static_assert((LLAMA_TOKEN_ATTR_BYTE) == (1<<5), "LLAMA_TOKEN_ATTR_BYTE");
_Static_assert((LLAMA_TOKEN_ATTR_NORMALIZED) == (1<<6), "LLAMA_TOKEN_ATTR_NORMALIZED");
_Static_assert((LLAMA_TOKEN_ATTR_LSTRIP) == (1<<7), "LLAMA_TOKEN_ATTR_LSTRIP");
_Static_assert((LLAMA_TOKEN_ATTR_RSTRIP) == (1<<8), "LLAMA_TOKEN_ATTR_RSTRIP");
_Static_assert((LLAMA_TOKEN_ATTR_SINGLE_WORD) == (1<<9), "LLAMA_TOKEN_ATTR_SINGLE_WORD");
_Static_assert((LLAMA_FTYPE_ALL_F32) == (0), "LLAMA_FTYPE_ALL_F32");
_Static_assert((LLAMA_FTYPE_MOSTLY_F16) == (1), "LLAMA_FTYPE_MOSTLY_F16");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q4_0) == (2), "LLAMA_FTYPE_MOSTLY_Q4_0");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q4_1) == (3), "LLAMA_FTYPE_MOSTLY_Q4_1");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q8_0) == (7), "LLAMA_FTYPE_MOSTLY_Q8_0");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q5_0) == (8), "LLAMA_FTYPE_MOSTLY_Q5_0");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q5_1) == (9), "LLAMA_FTYPE_MOSTLY_Q5_1");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q2_K) == (10), "LLAMA_FTYPE_MOSTLY_Q2_K");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q3_K_S) == (11), "LLAMA_FTYPE_MOSTLY_Q3_K_S");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q3_K_M) == (12), "LLAMA_FTYPE_MOSTLY_Q3_K_M");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q3_K_L) == (13), "LLAMA_FTYPE_MOSTLY_Q3_K_L");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q4_K_S) == (14), "LLAMA_FTYPE_MOSTLY_Q4_K_S");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q4_K_M) == (15), "LLAMA_FTYPE_MOSTLY_Q4_K_M");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q5_K_S) == (16), "LLAMA_FTYPE_MOSTLY_Q5_K_S");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q5_K_M) == (17), "LLAMA_FTYPE_MOSTLY_Q5_K_M");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q6_K) == (18), "LLAMA_FTYPE_MOSTLY_Q6_K");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ2_XXS) == (19), "LLAMA_FTYPE_MOSTLY_IQ2_XXS");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ2_XS) == (20), "LLAMA_FTYPE_MOSTLY_IQ2_XS");
_Static_assert((LLAMA_FTYPE_MOSTLY_Q2_K_S) == (21), "LLAMA_FTYPE_MOSTLY_Q2_K_S");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ3_XS) == (22), "LLAMA_FTYPE_MOSTLY_IQ3_XS");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ3_XXS) == (23), "LLAMA_FTYPE_MOSTLY_IQ3_XXS");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ1_S) == (24), "LLAMA_FTYPE_MOSTLY_IQ1_S");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ4_NL) == (25), "LLAMA_FTYPE_MOSTLY_IQ4_NL");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ3_S) == (26), "LLAMA_FTYPE_MOSTLY_IQ3_S");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ3_M) == (27), "LLAMA_FTYPE_MOSTLY_IQ3_M");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ2_S) == (28), "LLAMA_FTYPE_MOSTLY_IQ2_S");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ2_M) == (29), "LLAMA_FTYPE_MOSTLY_IQ2_M");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ4_XS) == (30), "LLAMA_FTYPE_MOSTLY_IQ4_XS");
_Static_assert((LLAMA_FTYPE_MOSTLY_IQ1_M) == (31), "LLAMA_FTYPE_MOSTLY_IQ1_M");
_Static_assert((LLAMA_FTYPE_MOSTLY_BF16) == (32), "LLAMA_FTYPE_MOSTLY_BF16");
_Static_assert((LLAMA_FTYPE_MOSTLY_TQ1_0) == (36), "LLAMA_FTYPE_MOSTLY_TQ1_0");
_Static_assert((LLAMA_FTYPE_MOSTLY_TQ2_0) == (37), "LLAMA_FTYPE_MOSTLY_TQ2_0");
_Static_assert((LLAMA_FTYPE_MOSTLY_MXFP4_MOE) == (38), "LLAMA_FTYPE_MOSTLY_MXFP4_MOE");
_Static_assert((LLAMA_FTYPE_GUESSED) == (1024), "LLAMA_FTYPE_GUESSED");
_Static_assert((LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED) == (-1), "LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED");
_Static_assert((LLAMA_ROPE_SCALING_TYPE_NONE) == (0), "LLAMA_ROPE_SCALING_TYPE_NONE");
_Static_assert((LLAMA_ROPE_SCALING_TYPE_LINEAR) == (1), "LLAMA_ROPE_SCALING_TYPE_LINEAR");
_Static_assert((LLAMA_ROPE_SCALING_TYPE_YARN) == (2), "LLAMA_ROPE_SCALING_TYPE_YARN");
_Static_assert((LLAMA_ROPE_SCALING_TYPE_LONGROPE) == (3), "LLAMA_ROPE_SCALING_TYPE_LONGROPE");
_Static_assert((LLAMA_ROPE_SCALING_TYPE_MAX_VALUE) == (LLAMA_ROPE_SCALING_TYPE_LONGROPE), "LLAMA_ROPE_SCALING_TYPE_MAX_VALUE");
_Static_assert((LLAMA_POOLING_TYPE_UNSPECIFIED) == (-1), "LLAMA_POOLING_TYPE_UNSPECIFIED");
_Static_assert((LLAMA_POOLING_TYPE_NONE) == (0), "LLAMA_POOLING_TYPE_NONE");
_Static_assert((LLAMA_POOLING_TYPE_MEAN) == (1), "LLAMA_POOLING_TYPE_MEAN");
_Static_assert((LLAMA_POOLING_TYPE_CLS) == (2), "LLAMA_POOLING_TYPE_CLS");
_Static_assert((LLAMA_POOLING_TYPE_LAST) == (3), "LLAMA_POOLING_TYPE_LAST");
_Static_assert((LLAMA_POOLING_TYPE_RANK) == (4), "LLAMA_POOLING_TYPE_RANK");
_Static_assert((LLAMA_ATTENTION_TYPE_UNSPECIFIED) == (-1), "LLAMA_ATTENTION_TYPE_UNSPECIFIED");
_Static_assert((LLAMA_ATTENTION_TYPE_CAUSAL) == (0), "LLAMA_ATTENTION_TYPE_CAUSAL");
_Static_assert((LLAMA_ATTENTION_TYPE_NON_CAUSAL) == (1), "LLAMA_ATTENTION_TYPE_NON_CAUSAL");
_Static_assert((LLAMA_FLASH_ATTN_TYPE_AUTO) == (-1), "LLAMA_FLASH_ATTN_TYPE_AUTO");
_Static_assert((LLAMA_FLASH_ATTN_TYPE_DISABLED) == (0), "LLAMA_FLASH_ATTN_TYPE_DISABLED");
_Static_assert((LLAMA_FLASH_ATTN_TYPE_ENABLED) == (1), "LLAMA_FLASH_ATTN_TYPE_ENABLED");
_Static_assert((LLAMA_SPLIT_MODE_NONE) == (0), "LLAMA_SPLIT_MODE_NONE");
_Static_assert((LLAMA_SPLIT_MODE_LAYER) == (1), "LLAMA_SPLIT_MODE_LAYER");
_Static_assert((LLAMA_SPLIT_MODE_ROW) == (2), "LLAMA_SPLIT_MODE_ROW");
_Static_assert((LLAMA_SPLIT_MODE_TENSOR) == (3), "LLAMA_SPLIT_MODE_TENSOR");
_Static_assert((LLAMA_CONTEXT_TYPE_DEFAULT) == (0), "LLAMA_CONTEXT_TYPE_DEFAULT");
_Static_assert((LLAMA_CONTEXT_TYPE_MTP) == (1), "LLAMA_CONTEXT_TYPE_MTP");
_Static_assert((LLAMA_KV_OVERRIDE_TYPE_INT) == (0), "LLAMA_KV_OVERRIDE_TYPE_INT");
_Static_assert((LLAMA_KV_OVERRIDE_TYPE_FLOAT) == (1), "LLAMA_KV_OVERRIDE_TYPE_FLOAT");
_Static_assert((LLAMA_KV_OVERRIDE_TYPE_BOOL) == (2), "LLAMA_KV_OVERRIDE_TYPE_BOOL");
_Static_assert((LLAMA_KV_OVERRIDE_TYPE_STR) == (3), "LLAMA_KV_OVERRIDE_TYPE_STR");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_SEQUENCE) == (0), "LLAMA_MODEL_META_KEY_SAMPLING_SEQUENCE");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_TOP_K) == (1), "LLAMA_MODEL_META_KEY_SAMPLING_TOP_K");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_TOP_P) == (2), "LLAMA_MODEL_META_KEY_SAMPLING_TOP_P");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_MIN_P) == (3), "LLAMA_MODEL_META_KEY_SAMPLING_MIN_P");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_XTC_PROBABILITY) == (4), "LLAMA_MODEL_META_KEY_SAMPLING_XTC_PROBABILITY");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_XTC_THRESHOLD) == (5), "LLAMA_MODEL_META_KEY_SAMPLING_XTC_THRESHOLD");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_TEMP) == (6), "LLAMA_MODEL_META_KEY_SAMPLING_TEMP");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_PENALTY_LAST_N) == (7), "LLAMA_MODEL_META_KEY_SAMPLING_PENALTY_LAST_N");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_PENALTY_REPEAT) == (8), "LLAMA_MODEL_META_KEY_SAMPLING_PENALTY_REPEAT");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_MIROSTAT) == (9), "LLAMA_MODEL_META_KEY_SAMPLING_MIROSTAT");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_MIROSTAT_TAU) == (10), "LLAMA_MODEL_META_KEY_SAMPLING_MIROSTAT_TAU");
_Static_assert((LLAMA_MODEL_META_KEY_SAMPLING_MIROSTAT_ETA) == (11), "LLAMA_MODEL_META_KEY_SAMPLING_MIROSTAT_ETA");
_Static_assert((LLAMA_DEFAULT_SEED) == (0xFFFFFFFF), "LLAMA_DEFAULT_SEED");
_Static_assert((LLAMA_TOKEN_NULL) == (-1), "LLAMA_TOKEN_NULL");
_Static_assert((LLAMA_FILE_MAGIC_GGLA) == (0x67676c61u), "LLAMA_FILE_MAGIC_GGLA");
_Static_assert((LLAMA_FILE_MAGIC_GGSN) == (0x6767736eu), "LLAMA_FILE_MAGIC_GGSN");
_Static_assert((LLAMA_FILE_MAGIC_GGSQ) == (0x67677371u), "LLAMA_FILE_MAGIC_GGSQ");
_Static_assert((LLAMA_SESSION_MAGIC) == (LLAMA_FILE_MAGIC_GGSN), "LLAMA_SESSION_MAGIC");
_Static_assert((LLAMA_SESSION_VERSION) == (9), "LLAMA_SESSION_VERSION");
_Static_assert((LLAMA_STATE_SEQ_MAGIC) == (LLAMA_FILE_MAGIC_GGSQ), "LLAMA_STATE_SEQ_MAGIC");
_Static_assert((LLAMA_STATE_SEQ_VERSION) == (2), "LLAMA_STATE_SEQ_VERSION");
_Static_assert((LLAMA_STATE_SEQ_FLAGS_NONE) == (0), "LLAMA_STATE_SEQ_FLAGS_NONE");
_Static_assert((LLAMA_STATE_SEQ_FLAGS_SWA_ONLY) == (1), "LLAMA_STATE_SEQ_FLAGS_SWA_ONLY");
_Static_assert((LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY) == (1), "LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY");
_Static_assert((LLAMA_STATE_SEQ_FLAGS_ON_DEVICE) == (2), "LLAMA_STATE_SEQ_FLAGS_ON_DEVICE");
// ---- llama: struct layouts (mirrors of llama.cpp's definitions)
struct ref_llama_token_data { llama_token id; float logit; float p; };
static struct llama_token_data v_llama_token_data;
struct ref_llama_token_data_array { llama_token_data * data; size_t size; int64_t selected; bool sorted; };
static struct llama_token_data_array v_llama_token_data_array;
struct ref_llama_batch { int32_t n_tokens; llama_token * token; float * embd; llama_pos * pos; int32_t * n_seq_id; llama_seq_id ** seq_id; int8_t * logits; };
static struct llama_batch v_llama_batch;
struct ref_llama_model_kv_override { enum llama_model_kv_override_type tag; char key[128]; union { int64_t val_i64; double val_f64; bool val_bool; char val_str[128]; }; };
static struct llama_model_kv_override v_llama_model_kv_override;
struct ref_llama_model_tensor_buft_override { const char * pattern; ggml_backend_buffer_type_t buft; };
static struct llama_model_tensor_buft_override v_llama_model_tensor_buft_override;
struct ref_llama_model_params { ggml_backend_dev_t * devices; const struct llama_model_tensor_buft_override * tensor_buft_overrides; int32_t n_gpu_layers; enum llama_split_mode split_mode; int32_t main_gpu; const float * tensor_split; llama_progress_callback progress_callback; void * progress_callback_user_data; const struct llama_model_kv_override * kv_overrides; bool vocab_only; bool use_mmap; bool use_direct_io; bool use_mlock; bool check_tensors; bool use_extra_bufts; bool no_host; bool no_alloc; };
static struct llama_model_params v_llama_model_params;
struct ref_llama_sampler_seq_config { llama_seq_id seq_id; struct llama_sampler * sampler; };
static struct llama_sampler_seq_config v_llama_sampler_seq_config;
struct ref_llama_context_params { uint32_t n_ctx; uint32_t n_batch; uint32_t n_ubatch; uint32_t n_seq_max; uint32_t n_rs_seq; uint32_t n_outputs_max; uint32_t n_outputs_max_per_seq; int32_t n_threads; int32_t n_threads_batch; enum llama_context_type ctx_type; enum llama_rope_scaling_type rope_scaling_type; enum llama_pooling_type pooling_type; enum llama_attention_type attention_type; enum llama_flash_attn_type flash_attn_type; float rope_freq_base; float rope_freq_scale; float yarn_ext_factor; float yarn_attn_factor; float yarn_beta_fast; float yarn_beta_slow; uint32_t yarn_orig_ctx; float defrag_thold; ggml_backend_sched_eval_callback cb_eval; void * cb_eval_user_data; enum ggml_type type_k; enum ggml_type type_v; ggml_abort_callback abort_callback; void * abort_callback_data; bool embeddings; bool offload_kqv; bool no_perf; bool op_offload; bool swa_full; bool kv_unified; struct llama_sampler_seq_config * samplers; size_t n_samplers; };
static struct llama_context_params v_llama_context_params;
struct ref_llama_model_tensor_override { const char * pattern; enum ggml_type type; };
static struct llama_model_tensor_override v_llama_model_tensor_override;
struct ref_llama_model_imatrix_data { const char * name; const float * data; size_t size; };
static struct llama_model_imatrix_data v_llama_model_imatrix_data;
struct ref_llama_model_quantize_params { int32_t nthread; enum llama_ftype ftype; enum ggml_type output_tensor_type; enum ggml_type token_embedding_type; bool allow_requantize; bool quantize_output_tensor; bool only_copy; bool pure; bool keep_split; bool dry_run; const struct llama_model_imatrix_data * imatrix; const struct llama_model_kv_override * kv_overrides; const struct llama_model_tensor_override * tt_overrides; const int32_t * prune_layers; };
static struct llama_model_quantize_params v_llama_model_quantize_params;
struct ref_llama_logit_bias { llama_token token; float bias; };
static struct llama_logit_bias v_llama_logit_bias;
struct ref_llama_sampler_chain_params { bool no_perf; };
static struct llama_sampler_chain_params v_llama_sampler_chain_params;
struct ref_llama_chat_message { const char * role; const char * content; };
static struct llama_chat_message v_llama_chat_message;
struct ref_llama_sampler_data { struct ggml_tensor * logits; struct ggml_tensor * probs; struct ggml_tensor * sampled; struct ggml_tensor * candidates; };
static struct llama_sampler_data v_llama_sampler_data;
struct ref_llama_sampler_i { const char * (*name)(const struct llama_sampler * smpl); void (*accept)(struct llama_sampler * smpl, llama_token token); void (*apply)(struct llama_sampler * smpl, llama_token_data_array * cur_p); void (*reset)(struct llama_sampler * smpl); struct llama_sampler * (*clone)(const struct llama_sampler * smpl); void (*free)(struct llama_sampler * smpl); bool (*backend_init)(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft, uint32_t n_outputs_max_per_seq); void (*backend_accept)(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf, struct ggml_tensor * selected_token); void (*backend_apply)(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf, struct llama_sampler_data * data); void (*backend_set_input)(struct llama_sampler * smpl); void (*backend_reset)(struct llama_sampler * smpl); void (*copy_state)(const struct llama_sampler * src, struct llama_sampler * dst); };
static struct llama_sampler_i v_llama_sampler_i;
struct ref_llama_sampler { struct llama_sampler_i * iface; llama_sampler_context_t ctx; };
static struct llama_sampler v_llama_sampler;
struct ref_llama_perf_context_data { double t_start_ms; double t_load_ms; double t_p_eval_ms; double t_eval_ms; int32_t n_p_eval; int32_t n_eval; int32_t n_reused; };
static struct llama_perf_context_data v_llama_perf_context_data;
struct ref_llama_perf_sampler_data { double t_sample_ms; int32_t n_sample; };
static struct llama_perf_sampler_data v_llama_perf_sampler_data;
static int api_compat_fields_llama(void) {
    int n = 0;
    _Static_assert(sizeof(struct llama_token_data) == sizeof(struct ref_llama_token_data), "size of struct llama_token_data");
    _Static_assert(offsetof(struct llama_token_data, id) == offsetof(struct ref_llama_token_data, id), "offset of llama_token_data.id");
    { llama_token (*p) = &v_llama_token_data.id; n += p != NULL; }
    _Static_assert(offsetof(struct llama_token_data, logit) == offsetof(struct ref_llama_token_data, logit), "offset of llama_token_data.logit");
    { float (*p) = &v_llama_token_data.logit; n += p != NULL; }
    _Static_assert(offsetof(struct llama_token_data, p) == offsetof(struct ref_llama_token_data, p), "offset of llama_token_data.p");
    { float (*p) = &v_llama_token_data.p; n += p != NULL; }
    _Static_assert(sizeof(struct llama_token_data_array) == sizeof(struct ref_llama_token_data_array), "size of struct llama_token_data_array");
    _Static_assert(offsetof(struct llama_token_data_array, data) == offsetof(struct ref_llama_token_data_array, data), "offset of llama_token_data_array.data");
    { llama_token_data * (*p) = &v_llama_token_data_array.data; n += p != NULL; }
    _Static_assert(offsetof(struct llama_token_data_array, size) == offsetof(struct ref_llama_token_data_array, size), "offset of llama_token_data_array.size");
    { size_t (*p) = &v_llama_token_data_array.size; n += p != NULL; }
    _Static_assert(offsetof(struct llama_token_data_array, selected) == offsetof(struct ref_llama_token_data_array, selected), "offset of llama_token_data_array.selected");
    { int64_t (*p) = &v_llama_token_data_array.selected; n += p != NULL; }
    _Static_assert(offsetof(struct llama_token_data_array, sorted) == offsetof(struct ref_llama_token_data_array, sorted), "offset of llama_token_data_array.sorted");
    { bool (*p) = &v_llama_token_data_array.sorted; n += p != NULL; }
    _Static_assert(sizeof(struct llama_batch) == sizeof(struct ref_llama_batch), "size of struct llama_batch");
    _Static_assert(offsetof(struct llama_batch, n_tokens) == offsetof(struct ref_llama_batch, n_tokens), "offset of llama_batch.n_tokens");
    { int32_t (*p) = &v_llama_batch.n_tokens; n += p != NULL; }
    _Static_assert(offsetof(struct llama_batch, token) == offsetof(struct ref_llama_batch, token), "offset of llama_batch.token");
    { llama_token * (*p) = &v_llama_batch.token; n += p != NULL; }
    _Static_assert(offsetof(struct llama_batch, embd) == offsetof(struct ref_llama_batch, embd), "offset of llama_batch.embd");
    { float * (*p) = &v_llama_batch.embd; n += p != NULL; }
    _Static_assert(offsetof(struct llama_batch, pos) == offsetof(struct ref_llama_batch, pos), "offset of llama_batch.pos");
    { llama_pos * (*p) = &v_llama_batch.pos; n += p != NULL; }
    _Static_assert(offsetof(struct llama_batch, n_seq_id) == offsetof(struct ref_llama_batch, n_seq_id), "offset of llama_batch.n_seq_id");
    { int32_t * (*p) = &v_llama_batch.n_seq_id; n += p != NULL; }
    _Static_assert(offsetof(struct llama_batch, seq_id) == offsetof(struct ref_llama_batch, seq_id), "offset of llama_batch.seq_id");
    { llama_seq_id ** (*p) = &v_llama_batch.seq_id; n += p != NULL; }
    _Static_assert(offsetof(struct llama_batch, logits) == offsetof(struct ref_llama_batch, logits), "offset of llama_batch.logits");
    { int8_t * (*p) = &v_llama_batch.logits; n += p != NULL; }
    _Static_assert(sizeof(struct llama_model_kv_override) == sizeof(struct ref_llama_model_kv_override), "size of struct llama_model_kv_override");
    _Static_assert(offsetof(struct llama_model_kv_override, tag) == offsetof(struct ref_llama_model_kv_override, tag), "offset of llama_model_kv_override.tag");
    { enum llama_model_kv_override_type (*p) = &v_llama_model_kv_override.tag; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_kv_override, key) == offsetof(struct ref_llama_model_kv_override, key), "offset of llama_model_kv_override.key");
    { char (*p)[128] = &v_llama_model_kv_override.key; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_kv_override, val_i64) == offsetof(struct ref_llama_model_kv_override, val_i64), "offset of llama_model_kv_override.val_i64");
    { int64_t (*p) = &v_llama_model_kv_override.val_i64; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_kv_override, val_f64) == offsetof(struct ref_llama_model_kv_override, val_f64), "offset of llama_model_kv_override.val_f64");
    { double (*p) = &v_llama_model_kv_override.val_f64; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_kv_override, val_bool) == offsetof(struct ref_llama_model_kv_override, val_bool), "offset of llama_model_kv_override.val_bool");
    { bool (*p) = &v_llama_model_kv_override.val_bool; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_kv_override, val_str) == offsetof(struct ref_llama_model_kv_override, val_str), "offset of llama_model_kv_override.val_str");
    { char (*p)[128] = &v_llama_model_kv_override.val_str; n += p != NULL; }
    _Static_assert(sizeof(struct llama_model_tensor_buft_override) == sizeof(struct ref_llama_model_tensor_buft_override), "size of struct llama_model_tensor_buft_override");
    _Static_assert(offsetof(struct llama_model_tensor_buft_override, pattern) == offsetof(struct ref_llama_model_tensor_buft_override, pattern), "offset of llama_model_tensor_buft_override.pattern");
    { const char * (*p) = &v_llama_model_tensor_buft_override.pattern; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_tensor_buft_override, buft) == offsetof(struct ref_llama_model_tensor_buft_override, buft), "offset of llama_model_tensor_buft_override.buft");
    { ggml_backend_buffer_type_t (*p) = &v_llama_model_tensor_buft_override.buft; n += p != NULL; }
    _Static_assert(sizeof(struct llama_model_params) == sizeof(struct ref_llama_model_params), "size of struct llama_model_params");
    _Static_assert(offsetof(struct llama_model_params, devices) == offsetof(struct ref_llama_model_params, devices), "offset of llama_model_params.devices");
    { ggml_backend_dev_t * (*p) = &v_llama_model_params.devices; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, tensor_buft_overrides) == offsetof(struct ref_llama_model_params, tensor_buft_overrides), "offset of llama_model_params.tensor_buft_overrides");
    { const struct llama_model_tensor_buft_override * (*p) = &v_llama_model_params.tensor_buft_overrides; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, n_gpu_layers) == offsetof(struct ref_llama_model_params, n_gpu_layers), "offset of llama_model_params.n_gpu_layers");
    { int32_t (*p) = &v_llama_model_params.n_gpu_layers; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, split_mode) == offsetof(struct ref_llama_model_params, split_mode), "offset of llama_model_params.split_mode");
    { enum llama_split_mode (*p) = &v_llama_model_params.split_mode; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, main_gpu) == offsetof(struct ref_llama_model_params, main_gpu), "offset of llama_model_params.main_gpu");
    { int32_t (*p) = &v_llama_model_params.main_gpu; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, tensor_split) == offsetof(struct ref_llama_model_params, tensor_split), "offset of llama_model_params.tensor_split");
    { const float * (*p) = &v_llama_model_params.tensor_split; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, progress_callback) == offsetof(struct ref_llama_model_params, progress_callback), "offset of llama_model_params.progress_callback");
    { llama_progress_callback (*p) = &v_llama_model_params.progress_callback; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, progress_callback_user_data) == offsetof(struct ref_llama_model_params, progress_callback_user_data), "offset of llama_model_params.progress_callback_user_data");
    { void * (*p) = &v_llama_model_params.progress_callback_user_data; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, kv_overrides) == offsetof(struct ref_llama_model_params, kv_overrides), "offset of llama_model_params.kv_overrides");
    { const struct llama_model_kv_override * (*p) = &v_llama_model_params.kv_overrides; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, vocab_only) == offsetof(struct ref_llama_model_params, vocab_only), "offset of llama_model_params.vocab_only");
    { bool (*p) = &v_llama_model_params.vocab_only; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, use_mmap) == offsetof(struct ref_llama_model_params, use_mmap), "offset of llama_model_params.use_mmap");
    { bool (*p) = &v_llama_model_params.use_mmap; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, use_direct_io) == offsetof(struct ref_llama_model_params, use_direct_io), "offset of llama_model_params.use_direct_io");
    { bool (*p) = &v_llama_model_params.use_direct_io; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, use_mlock) == offsetof(struct ref_llama_model_params, use_mlock), "offset of llama_model_params.use_mlock");
    { bool (*p) = &v_llama_model_params.use_mlock; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, check_tensors) == offsetof(struct ref_llama_model_params, check_tensors), "offset of llama_model_params.check_tensors");
    { bool (*p) = &v_llama_model_params.check_tensors; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, use_extra_bufts) == offsetof(struct ref_llama_model_params, use_extra_bufts), "offset of llama_model_params.use_extra_bufts");
    { bool (*p) = &v_llama_model_params.use_extra_bufts; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, no_host) == offsetof(struct ref_llama_model_params, no_host), "offset of llama_model_params.no_host");
    { bool (*p) = &v_llama_model_params.no_host; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_params, no_alloc) == offsetof(struct ref_llama_model_params, no_alloc), "offset of llama_model_params.no_alloc");
    { bool (*p) = &v_llama_model_params.no_alloc; n += p != NULL; }
    _Static_assert(sizeof(struct llama_sampler_seq_config) == sizeof(struct ref_llama_sampler_seq_config), "size of struct llama_sampler_seq_config");
    _Static_assert(offsetof(struct llama_sampler_seq_config, seq_id) == offsetof(struct ref_llama_sampler_seq_config, seq_id), "offset of llama_sampler_seq_config.seq_id");
    { llama_seq_id (*p) = &v_llama_sampler_seq_config.seq_id; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_seq_config, sampler) == offsetof(struct ref_llama_sampler_seq_config, sampler), "offset of llama_sampler_seq_config.sampler");
    { struct llama_sampler * (*p) = &v_llama_sampler_seq_config.sampler; n += p != NULL; }
    _Static_assert(sizeof(struct llama_context_params) == sizeof(struct ref_llama_context_params), "size of struct llama_context_params");
    _Static_assert(offsetof(struct llama_context_params, n_ctx) == offsetof(struct ref_llama_context_params, n_ctx), "offset of llama_context_params.n_ctx");
    { uint32_t (*p) = &v_llama_context_params.n_ctx; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, n_batch) == offsetof(struct ref_llama_context_params, n_batch), "offset of llama_context_params.n_batch");
    { uint32_t (*p) = &v_llama_context_params.n_batch; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, n_ubatch) == offsetof(struct ref_llama_context_params, n_ubatch), "offset of llama_context_params.n_ubatch");
    { uint32_t (*p) = &v_llama_context_params.n_ubatch; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, n_seq_max) == offsetof(struct ref_llama_context_params, n_seq_max), "offset of llama_context_params.n_seq_max");
    { uint32_t (*p) = &v_llama_context_params.n_seq_max; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, n_rs_seq) == offsetof(struct ref_llama_context_params, n_rs_seq), "offset of llama_context_params.n_rs_seq");
    { uint32_t (*p) = &v_llama_context_params.n_rs_seq; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, n_outputs_max) == offsetof(struct ref_llama_context_params, n_outputs_max), "offset of llama_context_params.n_outputs_max");
    { uint32_t (*p) = &v_llama_context_params.n_outputs_max; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, n_outputs_max_per_seq) == offsetof(struct ref_llama_context_params, n_outputs_max_per_seq), "offset of llama_context_params.n_outputs_max_per_seq");
    { uint32_t (*p) = &v_llama_context_params.n_outputs_max_per_seq; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, n_threads) == offsetof(struct ref_llama_context_params, n_threads), "offset of llama_context_params.n_threads");
    { int32_t (*p) = &v_llama_context_params.n_threads; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, n_threads_batch) == offsetof(struct ref_llama_context_params, n_threads_batch), "offset of llama_context_params.n_threads_batch");
    { int32_t (*p) = &v_llama_context_params.n_threads_batch; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, ctx_type) == offsetof(struct ref_llama_context_params, ctx_type), "offset of llama_context_params.ctx_type");
    { enum llama_context_type (*p) = &v_llama_context_params.ctx_type; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, rope_scaling_type) == offsetof(struct ref_llama_context_params, rope_scaling_type), "offset of llama_context_params.rope_scaling_type");
    { enum llama_rope_scaling_type (*p) = &v_llama_context_params.rope_scaling_type; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, pooling_type) == offsetof(struct ref_llama_context_params, pooling_type), "offset of llama_context_params.pooling_type");
    { enum llama_pooling_type (*p) = &v_llama_context_params.pooling_type; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, attention_type) == offsetof(struct ref_llama_context_params, attention_type), "offset of llama_context_params.attention_type");
    { enum llama_attention_type (*p) = &v_llama_context_params.attention_type; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, flash_attn_type) == offsetof(struct ref_llama_context_params, flash_attn_type), "offset of llama_context_params.flash_attn_type");
    { enum llama_flash_attn_type (*p) = &v_llama_context_params.flash_attn_type; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, rope_freq_base) == offsetof(struct ref_llama_context_params, rope_freq_base), "offset of llama_context_params.rope_freq_base");
    { float (*p) = &v_llama_context_params.rope_freq_base; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, rope_freq_scale) == offsetof(struct ref_llama_context_params, rope_freq_scale), "offset of llama_context_params.rope_freq_scale");
    { float (*p) = &v_llama_context_params.rope_freq_scale; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, yarn_ext_factor) == offsetof(struct ref_llama_context_params, yarn_ext_factor), "offset of llama_context_params.yarn_ext_factor");
    { float (*p) = &v_llama_context_params.yarn_ext_factor; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, yarn_attn_factor) == offsetof(struct ref_llama_context_params, yarn_attn_factor), "offset of llama_context_params.yarn_attn_factor");
    { float (*p) = &v_llama_context_params.yarn_attn_factor; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, yarn_beta_fast) == offsetof(struct ref_llama_context_params, yarn_beta_fast), "offset of llama_context_params.yarn_beta_fast");
    { float (*p) = &v_llama_context_params.yarn_beta_fast; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, yarn_beta_slow) == offsetof(struct ref_llama_context_params, yarn_beta_slow), "offset of llama_context_params.yarn_beta_slow");
    { float (*p) = &v_llama_context_params.yarn_beta_slow; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, yarn_orig_ctx) == offsetof(struct ref_llama_context_params, yarn_orig_ctx), "offset of llama_context_params.yarn_orig_ctx");
    { uint32_t (*p) = &v_llama_context_params.yarn_orig_ctx; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, defrag_thold) == offsetof(struct ref_llama_context_params, defrag_thold), "offset of llama_context_params.defrag_thold");
    { float (*p) = &v_llama_context_params.defrag_thold; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, cb_eval) == offsetof(struct ref_llama_context_params, cb_eval), "offset of llama_context_params.cb_eval");
    { ggml_backend_sched_eval_callback (*p) = &v_llama_context_params.cb_eval; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, cb_eval_user_data) == offsetof(struct ref_llama_context_params, cb_eval_user_data), "offset of llama_context_params.cb_eval_user_data");
    { void * (*p) = &v_llama_context_params.cb_eval_user_data; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, type_k) == offsetof(struct ref_llama_context_params, type_k), "offset of llama_context_params.type_k");
    { enum ggml_type (*p) = &v_llama_context_params.type_k; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, type_v) == offsetof(struct ref_llama_context_params, type_v), "offset of llama_context_params.type_v");
    { enum ggml_type (*p) = &v_llama_context_params.type_v; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, abort_callback) == offsetof(struct ref_llama_context_params, abort_callback), "offset of llama_context_params.abort_callback");
    { ggml_abort_callback (*p) = &v_llama_context_params.abort_callback; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, abort_callback_data) == offsetof(struct ref_llama_context_params, abort_callback_data), "offset of llama_context_params.abort_callback_data");
    { void * (*p) = &v_llama_context_params.abort_callback_data; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, embeddings) == offsetof(struct ref_llama_context_params, embeddings), "offset of llama_context_params.embeddings");
    { bool (*p) = &v_llama_context_params.embeddings; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, offload_kqv) == offsetof(struct ref_llama_context_params, offload_kqv), "offset of llama_context_params.offload_kqv");
    { bool (*p) = &v_llama_context_params.offload_kqv; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, no_perf) == offsetof(struct ref_llama_context_params, no_perf), "offset of llama_context_params.no_perf");
    { bool (*p) = &v_llama_context_params.no_perf; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, op_offload) == offsetof(struct ref_llama_context_params, op_offload), "offset of llama_context_params.op_offload");
    { bool (*p) = &v_llama_context_params.op_offload; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, swa_full) == offsetof(struct ref_llama_context_params, swa_full), "offset of llama_context_params.swa_full");
    { bool (*p) = &v_llama_context_params.swa_full; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, kv_unified) == offsetof(struct ref_llama_context_params, kv_unified), "offset of llama_context_params.kv_unified");
    { bool (*p) = &v_llama_context_params.kv_unified; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, samplers) == offsetof(struct ref_llama_context_params, samplers), "offset of llama_context_params.samplers");
    { struct llama_sampler_seq_config * (*p) = &v_llama_context_params.samplers; n += p != NULL; }
    _Static_assert(offsetof(struct llama_context_params, n_samplers) == offsetof(struct ref_llama_context_params, n_samplers), "offset of llama_context_params.n_samplers");
    { size_t (*p) = &v_llama_context_params.n_samplers; n += p != NULL; }
    _Static_assert(sizeof(struct llama_model_tensor_override) == sizeof(struct ref_llama_model_tensor_override), "size of struct llama_model_tensor_override");
    _Static_assert(offsetof(struct llama_model_tensor_override, pattern) == offsetof(struct ref_llama_model_tensor_override, pattern), "offset of llama_model_tensor_override.pattern");
    { const char * (*p) = &v_llama_model_tensor_override.pattern; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_tensor_override, type) == offsetof(struct ref_llama_model_tensor_override, type), "offset of llama_model_tensor_override.type");
    { enum ggml_type (*p) = &v_llama_model_tensor_override.type; n += p != NULL; }
    _Static_assert(sizeof(struct llama_model_imatrix_data) == sizeof(struct ref_llama_model_imatrix_data), "size of struct llama_model_imatrix_data");
    _Static_assert(offsetof(struct llama_model_imatrix_data, name) == offsetof(struct ref_llama_model_imatrix_data, name), "offset of llama_model_imatrix_data.name");
    { const char * (*p) = &v_llama_model_imatrix_data.name; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_imatrix_data, data) == offsetof(struct ref_llama_model_imatrix_data, data), "offset of llama_model_imatrix_data.data");
    { const float * (*p) = &v_llama_model_imatrix_data.data; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_imatrix_data, size) == offsetof(struct ref_llama_model_imatrix_data, size), "offset of llama_model_imatrix_data.size");
    { size_t (*p) = &v_llama_model_imatrix_data.size; n += p != NULL; }
    _Static_assert(sizeof(struct llama_model_quantize_params) == sizeof(struct ref_llama_model_quantize_params), "size of struct llama_model_quantize_params");
    _Static_assert(offsetof(struct llama_model_quantize_params, nthread) == offsetof(struct ref_llama_model_quantize_params, nthread), "offset of llama_model_quantize_params.nthread");
    { int32_t (*p) = &v_llama_model_quantize_params.nthread; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, ftype) == offsetof(struct ref_llama_model_quantize_params, ftype), "offset of llama_model_quantize_params.ftype");
    { enum llama_ftype (*p) = &v_llama_model_quantize_params.ftype; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, output_tensor_type) == offsetof(struct ref_llama_model_quantize_params, output_tensor_type), "offset of llama_model_quantize_params.output_tensor_type");
    { enum ggml_type (*p) = &v_llama_model_quantize_params.output_tensor_type; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, token_embedding_type) == offsetof(struct ref_llama_model_quantize_params, token_embedding_type), "offset of llama_model_quantize_params.token_embedding_type");
    { enum ggml_type (*p) = &v_llama_model_quantize_params.token_embedding_type; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, allow_requantize) == offsetof(struct ref_llama_model_quantize_params, allow_requantize), "offset of llama_model_quantize_params.allow_requantize");
    { bool (*p) = &v_llama_model_quantize_params.allow_requantize; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, quantize_output_tensor) == offsetof(struct ref_llama_model_quantize_params, quantize_output_tensor), "offset of llama_model_quantize_params.quantize_output_tensor");
    { bool (*p) = &v_llama_model_quantize_params.quantize_output_tensor; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, only_copy) == offsetof(struct ref_llama_model_quantize_params, only_copy), "offset of llama_model_quantize_params.only_copy");
    { bool (*p) = &v_llama_model_quantize_params.only_copy; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, pure) == offsetof(struct ref_llama_model_quantize_params, pure), "offset of llama_model_quantize_params.pure");
    { bool (*p) = &v_llama_model_quantize_params.pure; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, keep_split) == offsetof(struct ref_llama_model_quantize_params, keep_split), "offset of llama_model_quantize_params.keep_split");
    { bool (*p) = &v_llama_model_quantize_params.keep_split; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, dry_run) == offsetof(struct ref_llama_model_quantize_params, dry_run), "offset of llama_model_quantize_params.dry_run");
    { bool (*p) = &v_llama_model_quantize_params.dry_run; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, imatrix) == offsetof(struct ref_llama_model_quantize_params, imatrix), "offset of llama_model_quantize_params.imatrix");
    { const struct llama_model_imatrix_data * (*p) = &v_llama_model_quantize_params.imatrix; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, kv_overrides) == offsetof(struct ref_llama_model_quantize_params, kv_overrides), "offset of llama_model_quantize_params.kv_overrides");
    { const struct llama_model_kv_override * (*p) = &v_llama_model_quantize_params.kv_overrides; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, tt_overrides) == offsetof(struct ref_llama_model_quantize_params, tt_overrides), "offset of llama_model_quantize_params.tt_overrides");
    { const struct llama_model_tensor_override * (*p) = &v_llama_model_quantize_params.tt_overrides; n += p != NULL; }
    _Static_assert(offsetof(struct llama_model_quantize_params, prune_layers) == offsetof(struct ref_llama_model_quantize_params, prune_layers), "offset of llama_model_quantize_params.prune_layers");
    { const int32_t * (*p) = &v_llama_model_quantize_params.prune_layers; n += p != NULL; }
    _Static_assert(sizeof(struct llama_logit_bias) == sizeof(struct ref_llama_logit_bias), "size of struct llama_logit_bias");
    _Static_assert(offsetof(struct llama_logit_bias, token) == offsetof(struct ref_llama_logit_bias, token), "offset of llama_logit_bias.token");
    { llama_token (*p) = &v_llama_logit_bias.token; n += p != NULL; }
    _Static_assert(offsetof(struct llama_logit_bias, bias) == offsetof(struct ref_llama_logit_bias, bias), "offset of llama_logit_bias.bias");
    { float (*p) = &v_llama_logit_bias.bias; n += p != NULL; }
    _Static_assert(sizeof(struct llama_sampler_chain_params) == sizeof(struct ref_llama_sampler_chain_params), "size of struct llama_sampler_chain_params");
    _Static_assert(offsetof(struct llama_sampler_chain_params, no_perf) == offsetof(struct ref_llama_sampler_chain_params, no_perf), "offset of llama_sampler_chain_params.no_perf");
    { bool (*p) = &v_llama_sampler_chain_params.no_perf; n += p != NULL; }
    _Static_assert(sizeof(struct llama_chat_message) == sizeof(struct ref_llama_chat_message), "size of struct llama_chat_message");
    _Static_assert(offsetof(struct llama_chat_message, role) == offsetof(struct ref_llama_chat_message, role), "offset of llama_chat_message.role");
    { const char * (*p) = &v_llama_chat_message.role; n += p != NULL; }
    _Static_assert(offsetof(struct llama_chat_message, content) == offsetof(struct ref_llama_chat_message, content), "offset of llama_chat_message.content");
    { const char * (*p) = &v_llama_chat_message.content; n += p != NULL; }
    _Static_assert(sizeof(struct llama_sampler_data) == sizeof(struct ref_llama_sampler_data), "size of struct llama_sampler_data");
    _Static_assert(offsetof(struct llama_sampler_data, logits) == offsetof(struct ref_llama_sampler_data, logits), "offset of llama_sampler_data.logits");
    { struct ggml_tensor * (*p) = &v_llama_sampler_data.logits; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_data, probs) == offsetof(struct ref_llama_sampler_data, probs), "offset of llama_sampler_data.probs");
    { struct ggml_tensor * (*p) = &v_llama_sampler_data.probs; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_data, sampled) == offsetof(struct ref_llama_sampler_data, sampled), "offset of llama_sampler_data.sampled");
    { struct ggml_tensor * (*p) = &v_llama_sampler_data.sampled; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_data, candidates) == offsetof(struct ref_llama_sampler_data, candidates), "offset of llama_sampler_data.candidates");
    { struct ggml_tensor * (*p) = &v_llama_sampler_data.candidates; n += p != NULL; }
    _Static_assert(sizeof(struct llama_sampler_i) == sizeof(struct ref_llama_sampler_i), "size of struct llama_sampler_i");
    _Static_assert(offsetof(struct llama_sampler_i, name) == offsetof(struct ref_llama_sampler_i, name), "offset of llama_sampler_i.name");
    { const char * (**p)(const struct llama_sampler * smpl) = &v_llama_sampler_i.name; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, accept) == offsetof(struct ref_llama_sampler_i, accept), "offset of llama_sampler_i.accept");
    { void (**p)(struct llama_sampler * smpl, llama_token token) = &v_llama_sampler_i.accept; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, apply) == offsetof(struct ref_llama_sampler_i, apply), "offset of llama_sampler_i.apply");
    { void (**p)(struct llama_sampler * smpl, llama_token_data_array * cur_p) = &v_llama_sampler_i.apply; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, reset) == offsetof(struct ref_llama_sampler_i, reset), "offset of llama_sampler_i.reset");
    { void (**p)(struct llama_sampler * smpl) = &v_llama_sampler_i.reset; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, clone) == offsetof(struct ref_llama_sampler_i, clone), "offset of llama_sampler_i.clone");
    { struct llama_sampler * (**p)(const struct llama_sampler * smpl) = &v_llama_sampler_i.clone; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, free) == offsetof(struct ref_llama_sampler_i, free), "offset of llama_sampler_i.free");
    { void (**p)(struct llama_sampler * smpl) = &v_llama_sampler_i.free; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, backend_init) == offsetof(struct ref_llama_sampler_i, backend_init), "offset of llama_sampler_i.backend_init");
    { bool (**p)(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft, uint32_t n_outputs_max_per_seq) = &v_llama_sampler_i.backend_init; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, backend_accept) == offsetof(struct ref_llama_sampler_i, backend_accept), "offset of llama_sampler_i.backend_accept");
    { void (**p)(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf, struct ggml_tensor * selected_token) = &v_llama_sampler_i.backend_accept; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, backend_apply) == offsetof(struct ref_llama_sampler_i, backend_apply), "offset of llama_sampler_i.backend_apply");
    { void (**p)(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf, struct llama_sampler_data * data) = &v_llama_sampler_i.backend_apply; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, backend_set_input) == offsetof(struct ref_llama_sampler_i, backend_set_input), "offset of llama_sampler_i.backend_set_input");
    { void (**p)(struct llama_sampler * smpl) = &v_llama_sampler_i.backend_set_input; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, backend_reset) == offsetof(struct ref_llama_sampler_i, backend_reset), "offset of llama_sampler_i.backend_reset");
    { void (**p)(struct llama_sampler * smpl) = &v_llama_sampler_i.backend_reset; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler_i, copy_state) == offsetof(struct ref_llama_sampler_i, copy_state), "offset of llama_sampler_i.copy_state");
    { void (**p)(const struct llama_sampler * src, struct llama_sampler * dst) = &v_llama_sampler_i.copy_state; n += p != NULL; }
    _Static_assert(sizeof(struct llama_sampler) == sizeof(struct ref_llama_sampler), "size of struct llama_sampler");
    _Static_assert(offsetof(struct llama_sampler, iface) == offsetof(struct ref_llama_sampler, iface), "offset of llama_sampler.iface");
    { struct llama_sampler_i * (*p) = &v_llama_sampler.iface; n += p != NULL; }
    _Static_assert(offsetof(struct llama_sampler, ctx) == offsetof(struct ref_llama_sampler, ctx), "offset of llama_sampler.ctx");
    { llama_sampler_context_t (*p) = &v_llama_sampler.ctx; n += p != NULL; }
    _Static_assert(sizeof(struct llama_perf_context_data) == sizeof(struct ref_llama_perf_context_data), "size of struct llama_perf_context_data");
    _Static_assert(offsetof(struct llama_perf_context_data, t_start_ms) == offsetof(struct ref_llama_perf_context_data, t_start_ms), "offset of llama_perf_context_data.t_start_ms");
    { double (*p) = &v_llama_perf_context_data.t_start_ms; n += p != NULL; }
    _Static_assert(offsetof(struct llama_perf_context_data, t_load_ms) == offsetof(struct ref_llama_perf_context_data, t_load_ms), "offset of llama_perf_context_data.t_load_ms");
    { double (*p) = &v_llama_perf_context_data.t_load_ms; n += p != NULL; }
    _Static_assert(offsetof(struct llama_perf_context_data, t_p_eval_ms) == offsetof(struct ref_llama_perf_context_data, t_p_eval_ms), "offset of llama_perf_context_data.t_p_eval_ms");
    { double (*p) = &v_llama_perf_context_data.t_p_eval_ms; n += p != NULL; }
    _Static_assert(offsetof(struct llama_perf_context_data, t_eval_ms) == offsetof(struct ref_llama_perf_context_data, t_eval_ms), "offset of llama_perf_context_data.t_eval_ms");
    { double (*p) = &v_llama_perf_context_data.t_eval_ms; n += p != NULL; }
    _Static_assert(offsetof(struct llama_perf_context_data, n_p_eval) == offsetof(struct ref_llama_perf_context_data, n_p_eval), "offset of llama_perf_context_data.n_p_eval");
    { int32_t (*p) = &v_llama_perf_context_data.n_p_eval; n += p != NULL; }
    _Static_assert(offsetof(struct llama_perf_context_data, n_eval) == offsetof(struct ref_llama_perf_context_data, n_eval), "offset of llama_perf_context_data.n_eval");
    { int32_t (*p) = &v_llama_perf_context_data.n_eval; n += p != NULL; }
    _Static_assert(offsetof(struct llama_perf_context_data, n_reused) == offsetof(struct ref_llama_perf_context_data, n_reused), "offset of llama_perf_context_data.n_reused");
    { int32_t (*p) = &v_llama_perf_context_data.n_reused; n += p != NULL; }
    _Static_assert(sizeof(struct llama_perf_sampler_data) == sizeof(struct ref_llama_perf_sampler_data), "size of struct llama_perf_sampler_data");
    _Static_assert(offsetof(struct llama_perf_sampler_data, t_sample_ms) == offsetof(struct ref_llama_perf_sampler_data, t_sample_ms), "offset of llama_perf_sampler_data.t_sample_ms");
    { double (*p) = &v_llama_perf_sampler_data.t_sample_ms; n += p != NULL; }
    _Static_assert(offsetof(struct llama_perf_sampler_data, n_sample) == offsetof(struct ref_llama_perf_sampler_data, n_sample), "offset of llama_perf_sampler_data.n_sample");
    { int32_t (*p) = &v_llama_perf_sampler_data.n_sample; n += p != NULL; }
    return n;
}

// ---- llama: prototypes
static int api_compat_functions_llama(void) {
    int n = 0;
    { const char * (*f)(enum llama_flash_attn_type) = llama_flash_attn_type_name; n += f != NULL; }
    { struct llama_model_params (*f)(void) = llama_model_default_params; n += f != NULL; }
    { struct llama_context_params (*f)(void) = llama_context_default_params; n += f != NULL; }
    { struct llama_sampler_chain_params (*f)(void) = llama_sampler_chain_default_params; n += f != NULL; }
    { struct llama_model_quantize_params (*f)(void) = llama_model_quantize_default_params; n += f != NULL; }
    { void (*f)(void) = llama_backend_init; n += f != NULL; }
    { void (*f)(void) = llama_backend_free; n += f != NULL; }
    { void (*f)(enum ggml_numa_strategy) = llama_numa_init; n += f != NULL; }
    { void (*f)(struct llama_context *, ggml_threadpool_t, ggml_threadpool_t) = llama_attach_threadpool; n += f != NULL; }
    { void (*f)(struct llama_context *) = llama_detach_threadpool; n += f != NULL; }
    /* not provided: llama_model_init_from_user */
    { struct llama_model * (*f)(const char *, struct llama_model_params) = llama_load_model_from_file; n += f != NULL; }
    { struct llama_model * (*f)(const char *, struct llama_model_params) = llama_model_load_from_file; n += f != NULL; }
    { struct llama_model * (*f)(FILE *, struct llama_model_params) = llama_model_load_from_file_ptr; n += f != NULL; }
    { struct llama_model * (*f)(const char **, size_t, struct llama_model_params) = llama_model_load_from_splits; n += f != NULL; }
    { void (*f)(const struct llama_model *, const char *) = llama_model_save_to_file; n += f != NULL; }
    { void (*f)(struct llama_model *) = llama_free_model; n += f != NULL; }
    { void (*f)(struct llama_model *) = llama_model_free; n += f != NULL; }
    { struct llama_context * (*f)(struct llama_model *, struct llama_context_params) = llama_init_from_model; n += f != NULL; }
    { struct llama_context * (*f)(struct llama_model *, struct llama_context_params) = llama_new_context_with_model; n += f != NULL; }
    { void (*f)(struct llama_context *) = llama_free; n += f != NULL; }
    { int64_t (*f)(void) = llama_time_us; n += f != NULL; }
    { size_t (*f)(void) = llama_max_devices; n += f != NULL; }
    { size_t (*f)(void) = llama_max_parallel_sequences; n += f != NULL; }
    { size_t (*f)(void) = llama_max_tensor_buft_overrides; n += f != NULL; }
    { bool (*f)(void) = llama_supports_mmap; n += f != NULL; }
    { bool (*f)(void) = llama_supports_mlock; n += f != NULL; }
    { bool (*f)(void) = llama_supports_gpu_offload; n += f != NULL; }
    { bool (*f)(void) = llama_supports_rpc; n += f != NULL; }
    { uint32_t (*f)(const struct llama_context *) = llama_n_ctx; n += f != NULL; }
    { uint32_t (*f)(const struct llama_context *) = llama_n_ctx_seq; n += f != NULL; }
    { uint32_t (*f)(const struct llama_context *) = llama_n_batch; n += f != NULL; }
    { uint32_t (*f)(const struct llama_context *) = llama_n_ubatch; n += f != NULL; }
    { uint32_t (*f)(const struct llama_context *) = llama_n_seq_max; n += f != NULL; }
    { uint32_t (*f)(const struct llama_context *) = llama_n_rs_seq; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_n_ctx_train; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_n_embd; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_n_layer; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_n_head; n += f != NULL; }
    { int32_t (*f)(const struct llama_vocab *) = llama_n_vocab; n += f != NULL; }
    { const struct llama_model * (*f)(const struct llama_context *) = llama_get_model; n += f != NULL; }
    { llama_memory_t (*f)(const struct llama_context *) = llama_get_memory; n += f != NULL; }
    { enum llama_pooling_type (*f)(const struct llama_context *) = llama_pooling_type; n += f != NULL; }
    { const struct llama_vocab * (*f)(const struct llama_model *) = llama_model_get_vocab; n += f != NULL; }
    { enum llama_rope_type (*f)(const struct llama_model *) = llama_model_rope_type; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_model_n_ctx_train; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_model_n_embd; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_model_n_embd_inp; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_model_n_embd_out; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_model_n_layer; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_model_n_head; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_model_n_head_kv; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_model_n_swa; n += f != NULL; }
    { float (*f)(const struct llama_model *) = llama_model_rope_freq_scale_train; n += f != NULL; }
    { uint32_t (*f)(const struct llama_model *) = llama_model_n_cls_out; n += f != NULL; }
    { const char * (*f)(const struct llama_model *, uint32_t) = llama_model_cls_label; n += f != NULL; }
    { enum llama_vocab_type (*f)(const struct llama_vocab *) = llama_vocab_type; n += f != NULL; }
    { int32_t (*f)(const struct llama_vocab *) = llama_vocab_n_tokens; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *, const char *, char *, size_t) = llama_model_meta_val_str; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *) = llama_model_meta_count; n += f != NULL; }
    { const char * (*f)(enum llama_model_meta_key) = llama_model_meta_key_str; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *, int32_t, char *, size_t) = llama_model_meta_key_by_index; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *, int32_t, char *, size_t) = llama_model_meta_val_str_by_index; n += f != NULL; }
    { int32_t (*f)(const struct llama_model *, char *, size_t) = llama_model_desc; n += f != NULL; }
    { uint64_t (*f)(const struct llama_model *) = llama_model_size; n += f != NULL; }
    { const char * (*f)(const struct llama_model *, const char *) = llama_model_chat_template; n += f != NULL; }
    { uint64_t (*f)(const struct llama_model *) = llama_model_n_params; n += f != NULL; }
    { bool (*f)(const struct llama_model *) = llama_model_has_encoder; n += f != NULL; }
    { bool (*f)(const struct llama_model *) = llama_model_has_decoder; n += f != NULL; }
    { llama_token (*f)(const struct llama_model *) = llama_model_decoder_start_token; n += f != NULL; }
    { bool (*f)(const struct llama_model *) = llama_model_is_recurrent; n += f != NULL; }
    { bool (*f)(const struct llama_model *) = llama_model_is_hybrid; n += f != NULL; }
    { bool (*f)(const struct llama_model *) = llama_model_is_diffusion; n += f != NULL; }
    { uint32_t (*f)(const char *, const char *, const llama_model_quantize_params *) = llama_model_quantize; n += f != NULL; }
    { struct llama_adapter_lora * (*f)(struct llama_model *, const char *) = llama_adapter_lora_init; n += f != NULL; }
    { int32_t (*f)(const struct llama_adapter_lora *, const char *, char *, size_t) = llama_adapter_meta_val_str; n += f != NULL; }
    { int32_t (*f)(const struct llama_adapter_lora *) = llama_adapter_meta_count; n += f != NULL; }
    { int32_t (*f)(const struct llama_adapter_lora *, int32_t, char *, size_t) = llama_adapter_meta_key_by_index; n += f != NULL; }
    { int32_t (*f)(const struct llama_adapter_lora *, int32_t, char *, size_t) = llama_adapter_meta_val_str_by_index; n += f != NULL; }
    { void (*f)(struct llama_adapter_lora *) = llama_adapter_lora_free; n += f != NULL; }
    { uint64_t (*f)(const struct llama_adapter_lora *) = llama_adapter_get_alora_n_invocation_tokens; n += f != NULL; }
    { const llama_token * (*f)(const struct llama_adapter_lora *) = llama_adapter_get_alora_invocation_tokens; n += f != NULL; }
    { int32_t (*f)(struct llama_context *, struct llama_adapter_lora **, size_t, float *) = llama_set_adapters_lora; n += f != NULL; }
    { int32_t (*f)(struct llama_context *, const float *, size_t, int32_t, int32_t, int32_t) = llama_set_adapter_cvec; n += f != NULL; }
    { void (*f)(llama_memory_t, bool) = llama_memory_clear; n += f != NULL; }
    { bool (*f)(llama_memory_t, llama_seq_id, llama_pos, llama_pos) = llama_memory_seq_rm; n += f != NULL; }
    { void (*f)(llama_memory_t, llama_seq_id, llama_seq_id, llama_pos, llama_pos) = llama_memory_seq_cp; n += f != NULL; }
    { void (*f)(llama_memory_t, llama_seq_id) = llama_memory_seq_keep; n += f != NULL; }
    { void (*f)(llama_memory_t, llama_seq_id, llama_pos, llama_pos, llama_pos) = llama_memory_seq_add; n += f != NULL; }
    { void (*f)(llama_memory_t, llama_seq_id, llama_pos, llama_pos, int) = llama_memory_seq_div; n += f != NULL; }
    { llama_pos (*f)(llama_memory_t, llama_seq_id) = llama_memory_seq_pos_min; n += f != NULL; }
    { llama_pos (*f)(llama_memory_t, llama_seq_id) = llama_memory_seq_pos_max; n += f != NULL; }
    { bool (*f)(llama_memory_t) = llama_memory_can_shift; n += f != NULL; }
    { size_t (*f)(struct llama_context *) = llama_state_get_size; n += f != NULL; }
    { size_t (*f)(struct llama_context *) = llama_get_state_size; n += f != NULL; }
    { size_t (*f)(struct llama_context *, uint8_t *, size_t) = llama_state_get_data; n += f != NULL; }
    { size_t (*f)(struct llama_context *, uint8_t *) = llama_copy_state_data; n += f != NULL; }
    { size_t (*f)(struct llama_context *, const uint8_t *, size_t) = llama_state_set_data; n += f != NULL; }
    { size_t (*f)(struct llama_context *, const uint8_t *) = llama_set_state_data; n += f != NULL; }
    { bool (*f)(struct llama_context *, const char *, llama_token *, size_t, size_t *) = llama_state_load_file; n += f != NULL; }
    { bool (*f)(struct llama_context *, const char *, llama_token *, size_t, size_t *) = llama_load_session_file; n += f != NULL; }
    { bool (*f)(struct llama_context *, const char *, const llama_token *, size_t) = llama_state_save_file; n += f != NULL; }
    { bool (*f)(struct llama_context *, const char *, const llama_token *, size_t) = llama_save_session_file; n += f != NULL; }
    { size_t (*f)(struct llama_context *, llama_seq_id) = llama_state_seq_get_size; n += f != NULL; }
    { size_t (*f)(struct llama_context *, uint8_t *, size_t, llama_seq_id) = llama_state_seq_get_data; n += f != NULL; }
    { size_t (*f)(struct llama_context *, const uint8_t *, size_t, llama_seq_id) = llama_state_seq_set_data; n += f != NULL; }
    { size_t (*f)(struct llama_context *, const char *, llama_seq_id, const llama_token *, size_t) = llama_state_seq_save_file; n += f != NULL; }
    { size_t (*f)(struct llama_context *, const char *, llama_seq_id, llama_token *, size_t, size_t *) = llama_state_seq_load_file; n += f != NULL; }
    { size_t (*f)(struct llama_context *, llama_seq_id, llama_state_seq_flags) = llama_state_seq_get_size_ext; n += f != NULL; }
    { size_t (*f)(struct llama_context *, uint8_t *, size_t, llama_seq_id, llama_state_seq_flags) = llama_state_seq_get_data_ext; n += f != NULL; }
    { size_t (*f)(struct llama_context *, const uint8_t *, size_t, llama_seq_id, llama_state_seq_flags) = llama_state_seq_set_data_ext; n += f != NULL; }
    { struct llama_batch (*f)(llama_token *, int32_t) = llama_batch_get_one; n += f != NULL; }
    { struct llama_batch (*f)(int32_t, int32_t, int32_t) = llama_batch_init; n += f != NULL; }
    { void (*f)(struct llama_batch) = llama_batch_free; n += f != NULL; }
    { int32_t (*f)(struct llama_context *, struct llama_batch) = llama_encode; n += f != NULL; }
    { int32_t (*f)(struct llama_context *, struct llama_batch) = llama_decode; n += f != NULL; }
    { void (*f)(struct llama_context *, int32_t, int32_t) = llama_set_n_threads; n += f != NULL; }
    { int32_t (*f)(struct llama_context *) = llama_n_threads; n += f != NULL; }
    { int32_t (*f)(struct llama_context *) = llama_n_threads_batch; n += f != NULL; }
    { void (*f)(struct llama_context *, bool) = llama_set_embeddings; n += f != NULL; }
    { void (*f)(struct llama_context *, bool) = llama_set_causal_attn; n += f != NULL; }
    { void (*f)(struct llama_context *, bool) = llama_set_warmup; n += f != NULL; }
    { void (*f)(struct llama_context *, ggml_abort_callback, void *) = llama_set_abort_callback; n += f != NULL; }
    { void (*f)(struct llama_context *) = llama_synchronize; n += f != NULL; }
    { float * (*f)(struct llama_context *) = llama_get_logits; n += f != NULL; }
    { float * (*f)(struct llama_context *, int32_t) = llama_get_logits_ith; n += f != NULL; }
    { float * (*f)(struct llama_context *) = llama_get_embeddings; n += f != NULL; }
    { float * (*f)(struct llama_context *, int32_t) = llama_get_embeddings_ith; n += f != NULL; }
    { float * (*f)(struct llama_context *, llama_seq_id) = llama_get_embeddings_seq; n += f != NULL; }
    { llama_token (*f)(struct llama_context *, int32_t) = llama_get_sampled_token_ith; n += f != NULL; }
    { float * (*f)(struct llama_context *, int32_t) = llama_get_sampled_probs_ith; n += f != NULL; }
    { uint32_t (*f)(struct llama_context *, int32_t) = llama_get_sampled_probs_count_ith; n += f != NULL; }
    { float * (*f)(struct llama_context *, int32_t) = llama_get_sampled_logits_ith; n += f != NULL; }
    { uint32_t (*f)(struct llama_context *, int32_t) = llama_get_sampled_logits_count_ith; n += f != NULL; }
    { llama_token * (*f)(struct llama_context *, int32_t) = llama_get_sampled_candidates_ith; n += f != NULL; }
    { uint32_t (*f)(struct llama_context *, int32_t) = llama_get_sampled_candidates_count_ith; n += f != NULL; }
    { const char * (*f)(const struct llama_vocab *, llama_token) = llama_vocab_get_text; n += f != NULL; }
    { float (*f)(const struct llama_vocab *, llama_token) = llama_vocab_get_score; n += f != NULL; }
    { enum llama_token_attr (*f)(const struct llama_vocab *, llama_token) = llama_vocab_get_attr; n += f != NULL; }
    { bool (*f)(const struct llama_vocab *, llama_token) = llama_vocab_is_eog; n += f != NULL; }
    { bool (*f)(const struct llama_vocab *, llama_token) = llama_vocab_is_control; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_bos; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_eos; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_eot; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_sep; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_nl; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_pad; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_mask; n += f != NULL; }
    { bool (*f)(const struct llama_vocab *) = llama_vocab_get_add_bos; n += f != NULL; }
    { bool (*f)(const struct llama_vocab *) = llama_vocab_get_add_eos; n += f != NULL; }
    { bool (*f)(const struct llama_vocab *) = llama_vocab_get_add_sep; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_fim_pre; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_fim_suf; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_fim_mid; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_fim_pad; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_fim_rep; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_fim_sep; n += f != NULL; }
    { const char * (*f)(const struct llama_vocab *, llama_token) = llama_token_get_text; n += f != NULL; }
    { float (*f)(const struct llama_vocab *, llama_token) = llama_token_get_score; n += f != NULL; }
    { enum llama_token_attr (*f)(const struct llama_vocab *, llama_token) = llama_token_get_attr; n += f != NULL; }
    { bool (*f)(const struct llama_vocab *, llama_token) = llama_token_is_eog; n += f != NULL; }
    { bool (*f)(const struct llama_vocab *, llama_token) = llama_token_is_control; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_bos; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_eos; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_eot; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_cls; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_sep; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_nl; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_pad; n += f != NULL; }
    { bool (*f)(const struct llama_vocab *) = llama_add_bos_token; n += f != NULL; }
    { bool (*f)(const struct llama_vocab *) = llama_add_eos_token; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_fim_pre; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_fim_suf; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_fim_mid; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_fim_pad; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_fim_rep; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_token_fim_sep; n += f != NULL; }
    { llama_token (*f)(const struct llama_vocab *) = llama_vocab_cls; n += f != NULL; }
    { int32_t (*f)(const struct llama_vocab *, const char *, int32_t, llama_token *, int32_t, bool, bool) = llama_tokenize; n += f != NULL; }
    { int32_t (*f)(const struct llama_vocab *, llama_token, char *, int32_t, int32_t, bool) = llama_token_to_piece; n += f != NULL; }
    { int32_t (*f)(const struct llama_vocab *, const llama_token *, int32_t, char *, int32_t, bool, bool) = llama_detokenize; n += f != NULL; }
    { int32_t (*f)(const char *, const struct llama_chat_message *, size_t, bool, char *, int32_t) = llama_chat_apply_template; n += f != NULL; }
    { int32_t (*f)(const char **, size_t) = llama_chat_builtin_templates; n += f != NULL; }
    { bool (*f)(struct llama_context *, llama_seq_id, struct llama_sampler *) = llama_set_sampler; n += f != NULL; }
    { struct llama_sampler * (*f)(struct llama_sampler_i *, llama_sampler_context_t) = llama_sampler_init; n += f != NULL; }
    { const char * (*f)(const struct llama_sampler *) = llama_sampler_name; n += f != NULL; }
    { void (*f)(struct llama_sampler *, llama_token) = llama_sampler_accept; n += f != NULL; }
    { void (*f)(struct llama_sampler *, llama_token_data_array *) = llama_sampler_apply; n += f != NULL; }
    { void (*f)(struct llama_sampler *) = llama_sampler_reset; n += f != NULL; }
    { struct llama_sampler * (*f)(const struct llama_sampler *) = llama_sampler_clone; n += f != NULL; }
    { void (*f)(const struct llama_sampler *, struct llama_sampler *) = llama_sampler_copy; n += f != NULL; }
    { void (*f)(struct llama_sampler *) = llama_sampler_free; n += f != NULL; }
    { struct llama_sampler * (*f)(struct llama_sampler_chain_params) = llama_sampler_chain_init; n += f != NULL; }
    { void (*f)(struct llama_sampler *, struct llama_sampler *) = llama_sampler_chain_add; n += f != NULL; }
    { struct llama_sampler * (*f)(struct llama_sampler *, int32_t) = llama_sampler_chain_get; n += f != NULL; }
    { int (*f)(const struct llama_sampler *) = llama_sampler_chain_n; n += f != NULL; }
    { struct llama_sampler * (*f)(struct llama_sampler *, int32_t) = llama_sampler_chain_remove; n += f != NULL; }
    { struct llama_sampler * (*f)(void) = llama_sampler_init_greedy; n += f != NULL; }
    { struct llama_sampler * (*f)(uint32_t) = llama_sampler_init_dist; n += f != NULL; }
    { struct llama_sampler * (*f)(int32_t) = llama_sampler_init_top_k; n += f != NULL; }
    { struct llama_sampler * (*f)(float, size_t) = llama_sampler_init_top_p; n += f != NULL; }
    { struct llama_sampler * (*f)(float, size_t) = llama_sampler_init_min_p; n += f != NULL; }
    { struct llama_sampler * (*f)(float, size_t) = llama_sampler_init_typical; n += f != NULL; }
    { struct llama_sampler * (*f)(float) = llama_sampler_init_temp; n += f != NULL; }
    { struct llama_sampler * (*f)(float, float, float) = llama_sampler_init_temp_ext; n += f != NULL; }
    { struct llama_sampler * (*f)(float, float, size_t, uint32_t) = llama_sampler_init_xtc; n += f != NULL; }
    { struct llama_sampler * (*f)(float) = llama_sampler_init_top_n_sigma; n += f != NULL; }
    { struct llama_sampler * (*f)(int32_t, uint32_t, float, float, int32_t) = llama_sampler_init_mirostat; n += f != NULL; }
    { struct llama_sampler * (*f)(uint32_t, float, float) = llama_sampler_init_mirostat_v2; n += f != NULL; }
    { struct llama_sampler * (*f)(const struct llama_vocab *, const char *, const char *) = llama_sampler_init_grammar; n += f != NULL; }
    { struct llama_sampler * (*f)(const struct llama_vocab *, const char *, const char *, const char **, size_t, const llama_token *, size_t) = llama_sampler_init_grammar_lazy; n += f != NULL; }
    { struct llama_sampler * (*f)(const struct llama_vocab *, const char *, const char *, const char **, size_t, const llama_token *, size_t) = llama_sampler_init_grammar_lazy_patterns; n += f != NULL; }
    { struct llama_sampler * (*f)(int32_t, float, float, float) = llama_sampler_init_penalties; n += f != NULL; }
    // seed #26878 context line (llama-sampler.cpp): llama_sampler_init_dry has no n_ctx_train parameter
    { struct llama_sampler * (*f)(const struct llama_vocab *, float, float, int32_t, int32_t, const char **, size_t) = llama_sampler_init_dry; n += f != NULL; }
    { struct llama_sampler * (*f)(float, float, uint32_t) = llama_sampler_init_adaptive_p; n += f != NULL; }
    { struct llama_sampler * (*f)(int32_t, int32_t, const llama_logit_bias *) = llama_sampler_init_logit_bias; n += f != NULL; }
    { struct llama_sampler * (*f)(const struct llama_vocab *) = llama_sampler_init_infill; n += f != NULL; }
    { uint32_t (*f)(const struct llama_sampler *) = llama_sampler_get_seed; n += f != NULL; }
    { llama_token (*f)(struct llama_sampler *, struct llama_context *, int32_t) = llama_sampler_sample; n += f != NULL; }
    { int32_t (*f)(char *, size_t, const char *, int32_t, int32_t) = llama_split_path; n += f != NULL; }
    { int32_t (*f)(char *, size_t, const char *, int32_t, int32_t) = llama_split_prefix; n += f != NULL; }
    { const char * (*f)(void) = llama_print_system_info; n += f != NULL; }
    { void (*f)(ggml_log_callback *, void **) = llama_log_get; n += f != NULL; }
    { void (*f)(ggml_log_callback, void *) = llama_log_set; n += f != NULL; }
    { struct llama_perf_context_data (*f)(const struct llama_context *) = llama_perf_context; n += f != NULL; }
    { void (*f)(const struct llama_context *) = llama_perf_context_print; n += f != NULL; }
    { void (*f)(struct llama_context *) = llama_perf_context_reset; n += f != NULL; }
    { struct llama_perf_sampler_data (*f)(const struct llama_sampler *) = llama_perf_sampler; n += f != NULL; }
    { void (*f)(const struct llama_sampler *) = llama_perf_sampler_print; n += f != NULL; }
    { void (*f)(struct llama_sampler *) = llama_perf_sampler_reset; n += f != NULL; }
    /* not provided: llama_opt_param_filter_all */
    /* not provided: llama_opt_init */
    /* not provided: llama_opt_epoch */
    return n;
}

// ---- ggml: enum values and macros
// GGML_OP_* values and GGML_KQ_MASK_PAD: names only (newer upstream inserts ops such as CUMSUM and pads
// the KQ mask by 1); GGML_ROPE_TYPE_IMROPE = 40 is what llama.h's LLAMA_ROPE_TYPE_IMROPE refers to
_Static_assert((GGML_FILE_MAGIC) == (0x67676d6c), "GGML_FILE_MAGIC");
_Static_assert((GGML_FILE_VERSION) == (2), "GGML_FILE_VERSION");
_Static_assert((GGML_QNT_VERSION) == (2), "GGML_QNT_VERSION");
_Static_assert((GGML_QNT_VERSION_FACTOR) == (1000), "GGML_QNT_VERSION_FACTOR");
_Static_assert((GGML_MAX_DIMS) == (4), "GGML_MAX_DIMS");
_Static_assert((GGML_MAX_PARAMS) == (2048), "GGML_MAX_PARAMS");
_Static_assert((GGML_MAX_SRC) == (10), "GGML_MAX_SRC");
_Static_assert((GGML_MAX_N_THREADS) == (512), "GGML_MAX_N_THREADS");
_Static_assert((GGML_MAX_OP_PARAMS) == (64), "GGML_MAX_OP_PARAMS");
_Static_assert((GGML_MAX_NAME) == (64), "GGML_MAX_NAME");
_Static_assert((GGML_DEFAULT_N_THREADS) == (4), "GGML_DEFAULT_N_THREADS");
_Static_assert((GGML_DEFAULT_GRAPH_SIZE) == (2048), "GGML_DEFAULT_GRAPH_SIZE");
_Static_assert((GGML_MEM_ALIGN) == (16), "GGML_MEM_ALIGN");
_Static_assert((GGML_EXIT_SUCCESS) == (0), "GGML_EXIT_SUCCESS");
_Static_assert((GGML_EXIT_ABORTED) == (1), "GGML_EXIT_ABORTED");
_Static_assert((GGML_ROPE_TYPE_NEOX) == (2), "GGML_ROPE_TYPE_NEOX");
_Static_assert((GGML_ROPE_TYPE_MROPE) == (8), "GGML_ROPE_TYPE_MROPE");
_Static_assert((GGML_ROPE_TYPE_IMROPE) == (40), "GGML_ROPE_TYPE_IMROPE");
_Static_assert((GGML_ROPE_TYPE_VISION) == (24), "GGML_ROPE_TYPE_VISION");
_Static_assert((GGML_MROPE_SECTIONS) == (4), "GGML_MROPE_SECTIONS");
_Static_assert(sizeof(GGML_KQ_MASK_PAD) > 0, "GGML_KQ_MASK_PAD");
_Static_assert((GGML_N_TASKS_MAX) == (-1), "GGML_N_TASKS_MAX");
_Static_assert((GGML_PAD(13,8)) == (16), "GGML_PAD(13,8)");
_Static_assert((GGML_STATUS_ALLOC_FAILED) == (-2), "GGML_STATUS_ALLOC_FAILED");
_Static_assert((GGML_STATUS_FAILED) == (-1), "GGML_STATUS_FAILED");
_Static_assert((GGML_STATUS_SUCCESS) == (0), "GGML_STATUS_SUCCESS");
_Static_assert((GGML_STATUS_ABORTED) == (1), "GGML_STATUS_ABORTED");
_Static_assert((GGML_TYPE_F32) == (0), "GGML_TYPE_F32");
_Static_assert((GGML_TYPE_F16) == (1), "GGML_TYPE_F16");
_Static_assert((GGML_TYPE_Q4_0) == (2), "GGML_TYPE_Q4_0");
_Static_assert((GGML_TYPE_Q4_1) == (3), "GGML_TYPE_Q4_1");
_Static_assert((GGML_TYPE_Q5_0) == (6), "GGML_TYPE_Q5_0");
_Static_assert((GGML_TYPE_Q5_1) == (7), "GGML_TYPE_Q5_1");
_Static_assert((GGML_TYPE_Q8_0) == (8), "GGML_TYPE_Q8_0");
_Static_assert((GGML_TYPE_Q8_1) == (9), "GGML_TYPE_Q8_1");
_Static_assert((GGML_TYPE_Q2_K) == (10), "GGML_TYPE_Q2_K");
_Static_assert((GGML_TYPE_Q3_K) == (11), "GGML_TYPE_Q3_K");
_Static_assert((GGML_TYPE_Q4_K) == (12), "GGML_TYPE_Q4_K");
_Static_assert((GGML_TYPE_Q5_K) == (13), "GGML_TYPE_Q5_K");
_Static_assert((GGML_TYPE_Q6_K) == (14), "GGML_TYPE_Q6_K");
_Static_assert((GGML_TYPE_Q8_K) == (15), "GGML_TYPE_Q8_K");
_Static_assert((GGML_TYPE_IQ2_XXS) == (16), "GGML_TYPE_IQ2_XXS");
_Static_assert((GGML_TYPE_IQ2_XS) == (17), "GGML_TYPE_IQ2_XS");
_Static_assert((GGML_TYPE_IQ3_XXS) == (18), "GGML_TYPE_IQ3_XXS");
_Static_assert((GGML_TYPE_IQ1_S) == (19), "GGML_TYPE_IQ1_S");
_Static_assert((GGML_TYPE_IQ4_NL) == (20), "GGML_TYPE_IQ4_NL");
_Static_assert((GGML_TYPE_IQ3_S) == (21), "GGML_TYPE_IQ3_S");
_Static_assert((GGML_TYPE_IQ2_S) == (22), "GGML_TYPE_IQ2_S");
_Static_assert((GGML_TYPE_IQ4_XS) == (23), "GGML_TYPE_IQ4_XS");
_Static_assert((GGML_TYPE_I8) == (24), "GGML_TYPE_I8");
_Static_assert((GGML_TYPE_I16) == (25), "GGML_TYPE_I16");
_Static_assert((GGML_TYPE_I32) == (26), "GGML_TYPE_I32");
_Static_assert((GGML_TYPE_I64) == (27), "GGML_TYPE_I64");
_Static_assert((GGML_TYPE_F64) == (28), "GGML_TYPE_F64");
_Static_assert((GGML_TYPE_IQ1_M) == (29), "GGML_TYPE_IQ1_M");
_Static_assert((GGML_TYPE_BF16) == (30), "GGML_TYPE_BF16");
_Static_assert((GGML_TYPE_TQ1_0) == (34), "GGML_TYPE_TQ1_0");
_Static_assert((GGML_TYPE_TQ2_0) == (35), "GGML_TYPE_TQ2_0");
_Static_assert((GGML_TYPE_MXFP4) == (39), "GGML_TYPE_MXFP4");
_Static_assert((GGML_PREC_DEFAULT) == (0), "GGML_PREC_DEFAULT");
_Static_assert((GGML_PREC_F32) == (10), "GGML_PREC_F32");
_Static_assert((GGML_FTYPE_UNKNOWN) == (-1), "GGML_FTYPE_UNKNOWN");
_Static_assert((GGML_FTYPE_ALL_F32) == (0), "GGML_FTYPE_ALL_F32");
_Static_assert((GGML_FTYPE_MOSTLY_F16) == (1), "GGML_FTYPE_MOSTLY_F16");
_Static_assert((GGML_FTYPE_MOSTLY_Q4_0) == (2), "GGML_FTYPE_MOSTLY_Q4_0");
_Static_assert((GGML_FTYPE_MOSTLY_Q4_1) == (3), "GGML_FTYPE_MOSTLY_Q4_1");
_Static_assert((GGML_FTYPE_MOSTLY_Q4_1_SOME_F16) == (4), "GGML_FTYPE_MOSTLY_Q4_1_SOME_F16");
_Static_assert((GGML_FTYPE_MOSTLY_Q8_0) == (7), "GGML_FTYPE_MOSTLY_Q8_0");
_Static_assert((GGML_FTYPE_MOSTLY_Q5_0) == (8), "GGML_FTYPE_MOSTLY_Q5_0");
_Static_assert((GGML_FTYPE_MOSTLY_Q5_1) == (9), "GGML_FTYPE_MOSTLY_Q5_1");
_Static_assert((GGML_FTYPE_MOSTLY_Q2_K) == (10), "GGML_FTYPE_MOSTLY_Q2_K");
_Static_assert((GGML_FTYPE_MOSTLY_Q3_K) == (11), "GGML_FTYPE_MOSTLY_Q3_K");
_Static_assert((GGML_FTYPE_MOSTLY_Q4_K) == (12), "GGML_FTYPE_MOSTLY_Q4_K");
_Static_assert((GGML_FTYPE_MOSTLY_Q5_K) == (13), "GGML_FTYPE_MOSTLY_Q5_K");
_Static_assert((GGML_FTYPE_MOSTLY_Q6_K) == (14), "GGML_FTYPE_MOSTLY_Q6_K");
_Static_assert((GGML_FTYPE_MOSTLY_IQ2_XXS) == (15), "GGML_FTYPE_MOSTLY_IQ2_XXS");
_Static_assert((GGML_FTYPE_MOSTLY_IQ2_XS) == (16), "GGML_FTYPE_MOSTLY_IQ2_XS");
_Static_assert((GGML_FTYPE_MOSTLY_IQ3_XXS) == (17), "GGML_FTYPE_MOSTLY_IQ3_XXS");
_Static_assert((GGML_FTYPE_MOSTLY_IQ1_S) == (18), "GGML_FTYPE_MOSTLY_IQ1_S");
_Static_assert((GGML_FTYPE_MOSTLY_IQ4_NL) == (19), "GGML_FTYPE_MOSTLY_IQ4_NL");
_Static_assert((GGML_FTYPE_MOSTLY_IQ3_S) == (20), "GGML_FTYPE_MOSTLY_IQ3_S");
_Static_assert((GGML_FTYPE_MOSTLY_IQ2_S) == (21), "GGML_FTYPE_MOSTLY_IQ2_S");
_Static_assert((GGML_FTYPE_MOSTLY_IQ4_XS) == (22), "GGML_FTYPE_MOSTLY_IQ4_XS");
_Static_assert((GGML_FTYPE_MOSTLY_IQ1_M) == (23), "GGML_FTYPE_MOSTLY_IQ1_M");
_Static_assert((GGML_FTYPE_MOSTLY_BF16) == (24), "GGML_FTYPE_MOSTLY_BF16");
_Static_assert((GGML_FTYPE_MOSTLY_MXFP4) == (25), "GGML_FTYPE_MOSTLY_MXFP4");
_Static_assert(sizeof(GGML_OP_NONE) > 0, "GGML_OP_NONE");
_Static_assert(sizeof(GGML_OP_DUP) > 0, "GGML_OP_DUP");
_Static_assert(sizeof(GGML_OP_ADD) > 0, "GGML_OP_ADD");
_Static_assert(sizeof(GGML_OP_ADD_ID) > 0, "GGML_OP_ADD_ID");
_Static_assert(sizeof(GGML_OP_ADD1) > 0, "GGML_OP_ADD1");
_Static_assert(sizeof(GGML_OP_ACC) > 0, "GGML_OP_ACC");
_Static_assert(sizeof(GGML_OP_SUB) > 0, "GGML_OP_SUB");
_Static_assert(sizeof(GGML_OP_MUL) > 0, "GGML_OP_MUL");
_Static_assert(sizeof(GGML_OP_DIV) > 0, "GGML_OP_DIV");
_Static_assert(sizeof(GGML_OP_SQR) > 0, "GGML_OP_SQR");
_Static_assert(sizeof(GGML_OP_SQRT) > 0, "GGML_OP_SQRT");
_Static_assert(sizeof(GGML_OP_LOG) > 0, "GGML_OP_LOG");
_Static_assert(sizeof(GGML_OP_SIN) > 0, "GGML_OP_SIN");
_Static_assert(sizeof(GGML_OP_COS) > 0, "GGML_OP_COS");
_Static_assert(sizeof(GGML_OP_SUM) > 0, "GGML_OP_SUM");
_Static_assert(sizeof(GGML_OP_SUM_ROWS) > 0, "GGML_OP_SUM_ROWS");
_Static_assert(sizeof(GGML_OP_MEAN) > 0, "GGML_OP_MEAN");
_Static_assert(sizeof(GGML_OP_ARGMAX) > 0, "GGML_OP_ARGMAX");
_Static_assert(sizeof(GGML_OP_COUNT_EQUAL) > 0, "GGML_OP_COUNT_EQUAL");
_Static_assert(sizeof(GGML_OP_REPEAT) > 0, "GGML_OP_REPEAT");
_Static_assert(sizeof(GGML_OP_REPEAT_BACK) > 0, "GGML_OP_REPEAT_BACK");
_Static_assert(sizeof(GGML_OP_CONCAT) > 0, "GGML_OP_CONCAT");
_Static_assert(sizeof(GGML_OP_SILU_BACK) > 0, "GGML_OP_SILU_BACK");
_Static_assert(sizeof(GGML_OP_NORM) > 0, "GGML_OP_NORM");
_Static_assert(sizeof(GGML_OP_RMS_NORM) > 0, "GGML_OP_RMS_NORM");
_Static_assert(sizeof(GGML_OP_RMS_NORM_BACK) > 0, "GGML_OP_RMS_NORM_BACK");
_Static_assert(sizeof(GGML_OP_GROUP_NORM) > 0, "GGML_OP_GROUP_NORM");
_Static_assert(sizeof(GGML_OP_L2_NORM) > 0, "GGML_OP_L2_NORM");
_Static_assert(sizeof(GGML_OP_MUL_MAT) > 0, "GGML_OP_MUL_MAT");
_Static_assert(sizeof(GGML_OP_MUL_MAT_ID) > 0, "GGML_OP_MUL_MAT_ID");
_Static_assert(sizeof(GGML_OP_OUT_PROD) > 0, "GGML_OP_OUT_PROD");
_Static_assert(sizeof(GGML_OP_SCALE) > 0, "GGML_OP_SCALE");
_Static_assert(sizeof(GGML_OP_SET) > 0, "GGML_OP_SET");
_Static_assert(sizeof(GGML_OP_CPY) > 0, "GGML_OP_CPY");
_Static_assert(sizeof(GGML_OP_CONT) > 0, "GGML_OP_CONT");
_Static_assert(sizeof(GGML_OP_RESHAPE) > 0, "GGML_OP_RESHAPE");
_Static_assert(sizeof(GGML_OP_VIEW) > 0, "GGML_OP_VIEW");
_Static_assert(sizeof(GGML_OP_PERMUTE) > 0, "GGML_OP_PERMUTE");
_Static_assert(sizeof(GGML_OP_TRANSPOSE) > 0, "GGML_OP_TRANSPOSE");
_Static_assert(sizeof(GGML_OP_GET_ROWS) > 0, "GGML_OP_GET_ROWS");
_Static_assert(sizeof(GGML_OP_GET_ROWS_BACK) > 0, "GGML_OP_GET_ROWS_BACK");
_Static_assert(sizeof(GGML_OP_SET_ROWS) > 0, "GGML_OP_SET_ROWS");
_Static_assert(sizeof(GGML_OP_DIAG) > 0, "GGML_OP_DIAG");
_Static_assert(sizeof(GGML_OP_DIAG_MASK_INF) > 0, "GGML_OP_DIAG_MASK_INF");
_Static_assert(sizeof(GGML_OP_DIAG_MASK_ZERO) > 0, "GGML_OP_DIAG_MASK_ZERO");
_Static_assert(sizeof(GGML_OP_SOFT_MAX) > 0, "GGML_OP_SOFT_MAX");
_Static_assert(sizeof(GGML_OP_SOFT_MAX_BACK) > 0, "GGML_OP_SOFT_MAX_BACK");
_Static_assert(sizeof(GGML_OP_ROPE) > 0, "GGML_OP_ROPE");
_Static_assert(sizeof(GGML_OP_ROPE_BACK) > 0, "GGML_OP_ROPE_BACK");
_Static_assert(sizeof(GGML_OP_CLAMP) > 0, "GGML_OP_CLAMP");
_Static_assert(sizeof(GGML_OP_CONV_TRANSPOSE_1D) > 0, "GGML_OP_CONV_TRANSPOSE_1D");
_Static_assert(sizeof(GGML_OP_IM2COL) > 0, "GGML_OP_IM2COL");
_Static_assert(sizeof(GGML_OP_IM2COL_BACK) > 0, "GGML_OP_IM2COL_BACK");
_Static_assert(sizeof(GGML_OP_IM2COL_3D) > 0, "GGML_OP_IM2COL_3D");
_Static_assert(sizeof(GGML_OP_CONV_2D) > 0, "GGML_OP_CONV_2D");
_Static_assert(sizeof(GGML_OP_CONV_3D) > 0, "GGML_OP_CONV_3D");
_Static_assert(sizeof(GGML_OP_CONV_2D_DW) > 0, "GGML_OP_CONV_2D_DW");
_Static_assert(sizeof(GGML_OP_CONV_TRANSPOSE_2D) > 0, "GGML_OP_CONV_TRANSPOSE_2D");
_Static_assert(sizeof(GGML_OP_POOL_1D) > 0, "GGML_OP_POOL_1D");
_Static_assert(sizeof(GGML_OP_POOL_2D) > 0, "GGML_OP_POOL_2D");
_Static_assert(sizeof(GGML_OP_POOL_2D_BACK) > 0, "GGML_OP_POOL_2D_BACK");
_Static_assert(sizeof(GGML_OP_UPSCALE) > 0, "GGML_OP_UPSCALE");
_Static_assert(sizeof(GGML_OP_PAD) > 0, "GGML_OP_PAD");
_Static_assert(sizeof(GGML_OP_PAD_REFLECT_1D) > 0, "GGML_OP_PAD_REFLECT_1D");
_Static_assert(sizeof(GGML_OP_ROLL) > 0, "GGML_OP_ROLL");
_Static_assert(sizeof(GGML_OP_ARANGE) > 0, "GGML_OP_ARANGE");
_Static_assert(sizeof(GGML_OP_TIMESTEP_EMBEDDING) > 0, "GGML_OP_TIMESTEP_EMBEDDING");
_Static_assert(sizeof(GGML_OP_ARGSORT) > 0, "GGML_OP_ARGSORT");
_Static_assert(sizeof(GGML_OP_LEAKY_RELU) > 0, "GGML_OP_LEAKY_RELU");
_Static_assert(sizeof(GGML_OP_FLASH_ATTN_EXT) > 0, "GGML_OP_FLASH_ATTN_EXT");
_Static_assert(sizeof(GGML_OP_FLASH_ATTN_BACK) > 0, "GGML_OP_FLASH_ATTN_BACK");
_Static_assert(sizeof(GGML_OP_SSM_CONV) > 0, "GGML_OP_SSM_CONV");
_Static_assert(sizeof(GGML_OP_SSM_SCAN) > 0, "GGML_OP_SSM_SCAN");
_Static_assert(sizeof(GGML_OP_WIN_PART) > 0, "GGML_OP_WIN_PART");
_Static_assert(sizeof(GGML_OP_WIN_UNPART) > 0, "GGML_OP_WIN_UNPART");
_Static_assert(sizeof(GGML_OP_GET_REL_POS) > 0, "GGML_OP_GET_REL_POS");
_Static_assert(sizeof(GGML_OP_ADD_REL_POS) > 0, "GGML_OP_ADD_REL_POS");
_Static_assert(sizeof(GGML_OP_RWKV_WKV6) > 0, "GGML_OP_RWKV_WKV6");
_Static_assert(sizeof(GGML_OP_GATED_LINEAR_ATTN) > 0, "GGML_OP_GATED_LINEAR_ATTN");
_Static_assert(sizeof(GGML_OP_RWKV_WKV7) > 0, "GGML_OP_RWKV_WKV7");
_Static_assert(sizeof(GGML_OP_UNARY) > 0, "GGML_OP_UNARY");
_Static_assert(sizeof(GGML_OP_MAP_CUSTOM1) > 0, "GGML_OP_MAP_CUSTOM1");
_Static_assert(sizeof(GGML_OP_MAP_CUSTOM2) > 0, "GGML_OP_MAP_CUSTOM2");
_Static_assert(sizeof(GGML_OP_MAP_CUSTOM3) > 0, "GGML_OP_MAP_CUSTOM3");
_Static_assert(sizeof(GGML_OP_CUSTOM) > 0, "GGML_OP_CUSTOM");
_Static_assert(sizeof(GGML_OP_CROSS_ENTROPY_LOSS) > 0, "GGML_OP_CROSS_ENTROPY_LOSS");
_Static_assert(sizeof(GGML_OP_CROSS_ENTROPY_LOSS_BACK) > 0, "GGML_OP_CROSS_ENTROPY_LOSS_BACK");
_Static_assert(sizeof(GGML_OP_OPT_STEP_ADAMW) > 0, "GGML_OP_OPT_STEP_ADAMW");
_Static_assert(sizeof(GGML_OP_OPT_STEP_SGD) > 0, "GGML_OP_OPT_STEP_SGD");
_Static_assert(sizeof(GGML_OP_GLU) > 0, "GGML_OP_GLU");
_Static_assert((GGML_UNARY_OP_ABS) == (0), "GGML_UNARY_OP_ABS");
_Static_assert((GGML_UNARY_OP_SGN) == (1), "GGML_UNARY_OP_SGN");
_Static_assert((GGML_UNARY_OP_NEG) == (2), "GGML_UNARY_OP_NEG");
_Static_assert((GGML_UNARY_OP_STEP) == (3), "GGML_UNARY_OP_STEP");
_Static_assert((GGML_UNARY_OP_TANH) == (4), "GGML_UNARY_OP_TANH");
_Static_assert((GGML_UNARY_OP_ELU) == (5), "GGML_UNARY_OP_ELU");
_Static_assert((GGML_UNARY_OP_RELU) == (6), "GGML_UNARY_OP_RELU");
_Static_assert((GGML_UNARY_OP_SIGMOID) == (7), "GGML_UNARY_OP_SIGMOID");
_Static_assert((GGML_UNARY_OP_GELU) == (8), "GGML_UNARY_OP_GELU");
_Static_assert((GGML_UNARY_OP_GELU_QUICK) == (9), "GGML_UNARY_OP_GELU_QUICK");
_Static_assert((GGML_UNARY_OP_SILU) == (10), "GGML_UNARY_OP_SILU");
_Static_assert((GGML_UNARY_OP_HARDSWISH) == (11), "GGML_UNARY_OP_HARDSWISH");
_Static_assert((GGML_UNARY_OP_HARDSIGMOID) == (12), "GGML_UNARY_OP_HARDSIGMOID");
_Static_assert((GGML_UNARY_OP_EXP) == (13), "GGML_UNARY_OP_EXP");
_Static_assert((GGML_UNARY_OP_GELU_ERF) == (14), "GGML_UNARY_OP_GELU_ERF");
_Static_assert((GGML_GLU_OP_REGLU) == (0), "GGML_GLU_OP_REGLU");
_Static_assert((GGML_GLU_OP_GEGLU) == (1), "GGML_GLU_OP_GEGLU");
_Static_assert((GGML_GLU_OP_SWIGLU) == (2), "GGML_GLU_OP_SWIGLU");
_Static_assert((GGML_GLU_OP_SWIGLU_OAI) == (3), "GGML_GLU_OP_SWIGLU_OAI");
_Static_assert((GGML_GLU_OP_GEGLU_ERF) == (4), "GGML_GLU_OP_GEGLU_ERF");
_Static_assert((GGML_GLU_OP_GEGLU_QUICK) == (5), "GGML_GLU_OP_GEGLU_QUICK");
_Static_assert((GGML_OBJECT_TYPE_TENSOR) == (0), "GGML_OBJECT_TYPE_TENSOR");
_Static_assert((GGML_OBJECT_TYPE_GRAPH) == (1), "GGML_OBJECT_TYPE_GRAPH");
_Static_assert((GGML_OBJECT_TYPE_WORK_BUFFER) == (2), "GGML_OBJECT_TYPE_WORK_BUFFER");
_Static_assert((GGML_LOG_LEVEL_NONE) == (0), "GGML_LOG_LEVEL_NONE");
_Static_assert((GGML_LOG_LEVEL_DEBUG) == (1), "GGML_LOG_LEVEL_DEBUG");
_Static_assert((GGML_LOG_LEVEL_INFO) == (2), "GGML_LOG_LEVEL_INFO");
_Static_assert((GGML_LOG_LEVEL_WARN) == (3), "GGML_LOG_LEVEL_WARN");
_Static_assert((GGML_LOG_LEVEL_ERROR) == (4), "GGML_LOG_LEVEL_ERROR");
_Static_assert((GGML_LOG_LEVEL_CONT) == (5), "GGML_LOG_LEVEL_CONT");
_Static_assert((GGML_TENSOR_FLAG_INPUT) == (1), "GGML_TENSOR_FLAG_INPUT");
_Static_assert((GGML_TENSOR_FLAG_OUTPUT) == (2), "GGML_TENSOR_FLAG_OUTPUT");
_Static_assert((GGML_TENSOR_FLAG_PARAM) == (4), "GGML_TENSOR_FLAG_PARAM");
_Static_assert((GGML_TENSOR_FLAG_LOSS) == (8), "GGML_TENSOR_FLAG_LOSS");
_Static_assert((GGML_SORT_ORDER_ASC) == (0), "GGML_SORT_ORDER_ASC");
_Static_assert((GGML_SORT_ORDER_DESC) == (1), "GGML_SORT_ORDER_DESC");
_Static_assert((GGML_SCHED_PRIO_LOW) == (-1), "GGML_SCHED_PRIO_LOW");
_Static_assert((GGML_SCHED_PRIO_NORMAL) == (0), "GGML_SCHED_PRIO_NORMAL");
_Static_assert((GGML_SCHED_PRIO_MEDIUM) == (1), "GGML_SCHED_PRIO_MEDIUM");
_Static_assert((GGML_SCHED_PRIO_HIGH) == (2), "GGML_SCHED_PRIO_HIGH");
_Static_assert((GGML_SCHED_PRIO_REALTIME) == (3), "GGML_SCHED_PRIO_REALTIME");
// ---- ggml: struct layouts (mirrors of llama.cpp's definitions)
struct ref_ggml_init_params { size_t mem_size; void * mem_buffer; bool no_alloc; };
static struct ggml_init_params v_ggml_init_params;
struct ref_ggml_tensor { enum ggml_type type; struct ggml_backend_buffer * buffer; int64_t ne[GGML_MAX_DIMS]; size_t nb[GGML_MAX_DIMS]; enum ggml_op op; int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)]; int32_t flags; struct ggml_tensor * src[GGML_MAX_SRC]; struct ggml_tensor * view_src; size_t view_offs; void * data; char name[GGML_MAX_NAME]; void * extra; char padding[8]; };
static struct ggml_tensor v_ggml_tensor;
struct ref_ggml_type_traits { const char * type_name; int64_t blck_size; int64_t blck_size_interleave; size_t type_size; bool is_quantized; ggml_to_float_t to_float; ggml_from_float_t from_float_ref; };
static struct ggml_type_traits v_ggml_type_traits;
struct ref_ggml_threadpool_params { bool cpumask[GGML_MAX_N_THREADS]; int n_threads; enum ggml_sched_priority prio; uint32_t poll; bool strict_cpu; bool paused; };
static struct ggml_threadpool_params v_ggml_threadpool_params;
static int api_compat_fields_ggml(void) {
    int n = 0;
    _Static_assert(sizeof(struct ggml_init_params) == sizeof(struct ref_ggml_init_params), "size of struct ggml_init_params");
    _Static_assert(offsetof(struct ggml_init_params, mem_size) == offsetof(struct ref_ggml_init_params, mem_size), "offset of ggml_init_params.mem_size");
    { size_t (*p) = &v_ggml_init_params.mem_size; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_init_params, mem_buffer) == offsetof(struct ref_ggml_init_params, mem_buffer), "offset of ggml_init_params.mem_buffer");
    { void * (*p) = &v_ggml_init_params.mem_buffer; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_init_params, no_alloc) == offsetof(struct ref_ggml_init_params, no_alloc), "offset of ggml_init_params.no_alloc");
    { bool (*p) = &v_ggml_init_params.no_alloc; n += p != NULL; }
    _Static_assert(sizeof(struct ggml_tensor) == sizeof(struct ref_ggml_tensor), "size of struct ggml_tensor");
    _Static_assert(offsetof(struct ggml_tensor, type) == offsetof(struct ref_ggml_tensor, type), "offset of ggml_tensor.type");
    { enum ggml_type (*p) = &v_ggml_tensor.type; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, buffer) == offsetof(struct ref_ggml_tensor, buffer), "offset of ggml_tensor.buffer");
    { struct ggml_backend_buffer * (*p) = &v_ggml_tensor.buffer; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, ne) == offsetof(struct ref_ggml_tensor, ne), "offset of ggml_tensor.ne");
    { int64_t (*p)[GGML_MAX_DIMS] = &v_ggml_tensor.ne; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, nb) == offsetof(struct ref_ggml_tensor, nb), "offset of ggml_tensor.nb");
    { size_t (*p)[GGML_MAX_DIMS] = &v_ggml_tensor.nb; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, op) == offsetof(struct ref_ggml_tensor, op), "offset of ggml_tensor.op");
    { enum ggml_op (*p) = &v_ggml_tensor.op; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, op_params) == offsetof(struct ref_ggml_tensor, op_params), "offset of ggml_tensor.op_params");
    { int32_t (*p)[GGML_MAX_OP_PARAMS / sizeof(int32_t)] = &v_ggml_tensor.op_params; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, flags) == offsetof(struct ref_ggml_tensor, flags), "offset of ggml_tensor.flags");
    { int32_t (*p) = &v_ggml_tensor.flags; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, src) == offsetof(struct ref_ggml_tensor, src), "offset of ggml_tensor.src");
    { struct ggml_tensor * (*p)[GGML_MAX_SRC] = &v_ggml_tensor.src; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, view_src) == offsetof(struct ref_ggml_tensor, view_src), "offset of ggml_tensor.view_src");
    { struct ggml_tensor * (*p) = &v_ggml_tensor.view_src; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, view_offs) == offsetof(struct ref_ggml_tensor, view_offs), "offset of ggml_tensor.view_offs");
    { size_t (*p) = &v_ggml_tensor.view_offs; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, data) == offsetof(struct ref_ggml_tensor, data), "offset of ggml_tensor.data");
    { void * (*p) = &v_ggml_tensor.data; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, name) == offsetof(struct ref_ggml_tensor, name), "offset of ggml_tensor.name");
    { char (*p)[GGML_MAX_NAME] = &v_ggml_tensor.name; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, extra) == offsetof(struct ref_ggml_tensor, extra), "offset of ggml_tensor.extra");
    { void * (*p) = &v_ggml_tensor.extra; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tensor, padding) == offsetof(struct ref_ggml_tensor, padding), "offset of ggml_tensor.padding");
    { char (*p)[8] = &v_ggml_tensor.padding; n += p != NULL; }
    _Static_assert(sizeof(struct ggml_type_traits) == sizeof(struct ref_ggml_type_traits), "size of struct ggml_type_traits");
    _Static_assert(offsetof(struct ggml_type_traits, type_name) == offsetof(struct ref_ggml_type_traits, type_name), "offset of ggml_type_traits.type_name");
    { const char * (*p) = &v_ggml_type_traits.type_name; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_type_traits, blck_size) == offsetof(struct ref_ggml_type_traits, blck_size), "offset of ggml_type_traits.blck_size");
    { int64_t (*p) = &v_ggml_type_traits.blck_size; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_type_traits, blck_size_interleave) == offsetof(struct ref_ggml_type_traits, blck_size_interleave), "offset of ggml_type_traits.blck_size_interleave");
    { int64_t (*p) = &v_ggml_type_traits.blck_size_interleave; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_type_traits, type_size) == offsetof(struct ref_ggml_type_traits, type_size), "offset of ggml_type_traits.type_size");
    { size_t (*p) = &v_ggml_type_traits.type_size; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_type_traits, is_quantized) == offsetof(struct ref_ggml_type_traits, is_quantized), "offset of ggml_type_traits.is_quantized");
    { bool (*p) = &v_ggml_type_traits.is_quantized; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_type_traits, to_float) == offsetof(struct ref_ggml_type_traits, to_float), "offset of ggml_type_traits.to_float");
    { ggml_to_float_t (*p) = &v_ggml_type_traits.to_float; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_type_traits, from_float_ref) == offsetof(struct ref_ggml_type_traits, from_float_ref), "offset of ggml_type_traits.from_float_ref");
    { ggml_from_float_t (*p) = &v_ggml_type_traits.from_float_ref; n += p != NULL; }
    _Static_assert(sizeof(struct ggml_threadpool_params) == sizeof(struct ref_ggml_threadpool_params), "size of struct ggml_threadpool_params");
    _Static_assert(offsetof(struct ggml_threadpool_params, cpumask) == offsetof(struct ref_ggml_threadpool_params, cpumask), "offset of ggml_threadpool_params.cpumask");
    { bool (*p)[GGML_MAX_N_THREADS] = &v_ggml_threadpool_params.cpumask; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_threadpool_params, n_threads) == offsetof(struct ref_ggml_threadpool_params, n_threads), "offset of ggml_threadpool_params.n_threads");
    { int (*p) = &v_ggml_threadpool_params.n_threads; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_threadpool_params, prio) == offsetof(struct ref_ggml_threadpool_params, prio), "offset of ggml_threadpool_params.prio");
    { enum ggml_sched_priority (*p) = &v_ggml_threadpool_params.prio; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_threadpool_params, poll) == offsetof(struct ref_ggml_threadpool_params, poll), "offset of ggml_threadpool_params.poll");
    { uint32_t (*p) = &v_ggml_threadpool_params.poll; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_threadpool_params, strict_cpu) == offsetof(struct ref_ggml_threadpool_params, strict_cpu), "offset of ggml_threadpool_params.strict_cpu");
    { bool (*p) = &v_ggml_threadpool_params.strict_cpu; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_threadpool_params, paused) == offsetof(struct ref_ggml_threadpool_params, paused), "offset of ggml_threadpool_params.paused");
    { bool (*p) = &v_ggml_threadpool_params.paused; n += p != NULL; }
    return n;
}

// ---- ggml: prototypes
static int api_compat_functions_ggml(void) {
    int n = 0;
    // source: ggml-org/llama.cpp ggml/include/ggml.h @ 004eaba804a34aa1a397b61d6d5274171c5e4cba (stored copy; older than the seeds)
    { ggml_abort_callback_t (*f)(ggml_abort_callback_t) = ggml_set_abort_callback; n += f != NULL; }
    { void (*f)(const char *, int, const char *, ...) = ggml_abort; n += f != NULL; }
    { const char * (*f)(enum ggml_status) = ggml_status_to_string; n += f != NULL; }
    { float (*f)(ggml_fp16_t) = ggml_fp16_to_fp32; n += f != NULL; }
    { ggml_fp16_t (*f)(float) = ggml_fp32_to_fp16; n += f != NULL; }
    { void (*f)(const ggml_fp16_t *, float *, int64_t) = ggml_fp16_to_fp32_row; n += f != NULL; }
    { void (*f)(const float *, ggml_fp16_t *, int64_t) = ggml_fp32_to_fp16_row; n += f != NULL; }
    { ggml_bf16_t (*f)(float) = ggml_fp32_to_bf16; n += f != NULL; }
    { float (*f)(ggml_bf16_t) = ggml_bf16_to_fp32; n += f != NULL; }
    { void (*f)(const ggml_bf16_t *, float *, int64_t) = ggml_bf16_to_fp32_row; n += f != NULL; }
    { void (*f)(const float *, ggml_bf16_t *, int64_t) = ggml_fp32_to_bf16_row_ref; n += f != NULL; }
    { void (*f)(const float *, ggml_bf16_t *, int64_t) = ggml_fp32_to_bf16_row; n += f != NULL; }
    { bool (*f)(ggml_guid_t, ggml_guid_t) = ggml_guid_matches; n += f != NULL; }
    { const char * (*f)(void) = ggml_version; n += f != NULL; }
    { const char * (*f)(void) = ggml_commit; n += f != NULL; }
    { void (*f)(void) = ggml_time_init; n += f != NULL; }
    { int64_t (*f)(void) = ggml_time_ms; n += f != NULL; }
    { int64_t (*f)(void) = ggml_time_us; n += f != NULL; }
    { int64_t (*f)(void) = ggml_cycles; n += f != NULL; }
    { int64_t (*f)(void) = ggml_cycles_per_ms; n += f != NULL; }
    { FILE * (*f)(const char *, const char *) = ggml_fopen; n += f != NULL; }
    { void (*f)(const struct ggml_object *) = ggml_print_object; n += f != NULL; }
    { void (*f)(const struct ggml_context *) = ggml_print_objects; n += f != NULL; }
    { int64_t (*f)(const struct ggml_tensor *) = ggml_nelements; n += f != NULL; }
    { int64_t (*f)(const struct ggml_tensor *) = ggml_nrows; n += f != NULL; }
    { size_t (*f)(const struct ggml_tensor *) = ggml_nbytes; n += f != NULL; }
    { size_t (*f)(const struct ggml_tensor *) = ggml_nbytes_pad; n += f != NULL; }
    { int64_t (*f)(enum ggml_type) = ggml_blck_size; n += f != NULL; }
    { size_t (*f)(enum ggml_type) = ggml_type_size; n += f != NULL; }
    { size_t (*f)(enum ggml_type, int64_t) = ggml_row_size; n += f != NULL; }
    { double (*f)(enum ggml_type) = ggml_type_sizef; n += f != NULL; }
    { const char * (*f)(enum ggml_type) = ggml_type_name; n += f != NULL; }
    { const char * (*f)(enum ggml_op) = ggml_op_name; n += f != NULL; }
    { const char * (*f)(enum ggml_op) = ggml_op_symbol; n += f != NULL; }
    { const char * (*f)(enum ggml_unary_op) = ggml_unary_op_name; n += f != NULL; }
    { const char * (*f)(enum ggml_glu_op) = ggml_glu_op_name; n += f != NULL; }
    { const char * (*f)(const struct ggml_tensor *) = ggml_op_desc; n += f != NULL; }
    { size_t (*f)(const struct ggml_tensor *) = ggml_element_size; n += f != NULL; }
    { bool (*f)(enum ggml_type) = ggml_is_quantized; n += f != NULL; }
    { enum ggml_type (*f)(enum ggml_ftype) = ggml_ftype_to_ggml_type; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_transposed; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_permuted; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_empty; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_scalar; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_vector; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_matrix; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_3d; n += f != NULL; }
    { int (*f)(const struct ggml_tensor *) = ggml_n_dims; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_contiguous; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_contiguous_0; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_contiguous_1; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_contiguous_2; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_contiguously_allocated; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_contiguous_channels; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *) = ggml_is_contiguous_rows; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *, const struct ggml_tensor *) = ggml_are_same_shape; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *, const struct ggml_tensor *) = ggml_are_same_stride; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *, const struct ggml_tensor *) = ggml_can_repeat; n += f != NULL; }
    { size_t (*f)(void) = ggml_tensor_overhead; n += f != NULL; }
    { bool (*f)(enum ggml_type, const void *, size_t) = ggml_validate_row_data; n += f != NULL; }
    { struct ggml_context * (*f)(struct ggml_init_params) = ggml_init; n += f != NULL; }
    { void (*f)(struct ggml_context *) = ggml_reset; n += f != NULL; }
    { void (*f)(struct ggml_context *) = ggml_free; n += f != NULL; }
    { size_t (*f)(const struct ggml_context *) = ggml_used_mem; n += f != NULL; }
    { bool (*f)(struct ggml_context *) = ggml_get_no_alloc; n += f != NULL; }
    { void (*f)(struct ggml_context *, bool) = ggml_set_no_alloc; n += f != NULL; }
    { void * (*f)(const struct ggml_context *) = ggml_get_mem_buffer; n += f != NULL; }
    { size_t (*f)(const struct ggml_context *) = ggml_get_mem_size; n += f != NULL; }
    { size_t (*f)(const struct ggml_context *) = ggml_get_max_tensor_size; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, enum ggml_type, int, const int64_t *) = ggml_new_tensor; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, enum ggml_type, int64_t) = ggml_new_tensor_1d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, enum ggml_type, int64_t, int64_t) = ggml_new_tensor_2d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, enum ggml_type, int64_t, int64_t, int64_t) = ggml_new_tensor_3d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, enum ggml_type, int64_t, int64_t, int64_t, int64_t) = ggml_new_tensor_4d; n += f != NULL; }
    { void * (*f)(struct ggml_context *, size_t) = ggml_new_buffer; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, const struct ggml_tensor *) = ggml_dup_tensor; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_view_tensor; n += f != NULL; }
    { struct ggml_tensor * (*f)(const struct ggml_context *) = ggml_get_first_tensor; n += f != NULL; }
    { struct ggml_tensor * (*f)(const struct ggml_context *, struct ggml_tensor *) = ggml_get_next_tensor; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, const char *) = ggml_get_tensor; n += f != NULL; }
    { void (*f)(const struct ggml_tensor *, int64_t, int64_t *, int64_t *, int64_t *, int64_t *) = ggml_unravel_index; n += f != NULL; }
    { enum ggml_unary_op (*f)(const struct ggml_tensor *) = ggml_get_unary_op; n += f != NULL; }
    { enum ggml_glu_op (*f)(const struct ggml_tensor *) = ggml_get_glu_op; n += f != NULL; }
    { void * (*f)(const struct ggml_tensor *) = ggml_get_data; n += f != NULL; }
    { float * (*f)(const struct ggml_tensor *) = ggml_get_data_f32; n += f != NULL; }
    { const char * (*f)(const struct ggml_tensor *) = ggml_get_name; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_tensor *, const char *) = ggml_set_name; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_tensor *, const char *, ...) = ggml_format_name; n += f != NULL; }
    { void (*f)(struct ggml_tensor *) = ggml_set_input; n += f != NULL; }
    { void (*f)(struct ggml_tensor *) = ggml_set_output; n += f != NULL; }
    { void (*f)(struct ggml_tensor *) = ggml_set_param; n += f != NULL; }
    { void (*f)(struct ggml_tensor *) = ggml_set_loss; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_dup; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_dup_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_add; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_add_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, enum ggml_type) = ggml_add_cast; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_add_id; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_add1; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_add1_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_sub; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_sub_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_mul; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_mul_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_div; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_div_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sqr; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sqr_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sqrt; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sqrt_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_log; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_log_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sin; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sin_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_cos; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_cos_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sum; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sum_rows; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_mean; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_argmax; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_count_equal; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_repeat; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, int64_t, int64_t) = ggml_repeat_4d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int) = ggml_concat; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_abs; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_abs_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sgn; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sgn_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_neg; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_neg_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_step; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_step_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_tanh; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_tanh_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_elu; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_elu_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_relu; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float, bool) = ggml_leaky_relu; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_relu_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sigmoid; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_sigmoid_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_gelu; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_gelu_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_gelu_erf; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_gelu_erf_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_gelu_quick; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_gelu_quick_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_silu; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_silu_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_hardswish; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_hardsigmoid; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_exp; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_exp_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, enum ggml_glu_op, bool) = ggml_glu; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_reglu; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_reglu_swapped; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_geglu; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_geglu_swapped; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_swiglu; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_swiglu_swapped; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_geglu_erf; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_geglu_erf_swapped; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_geglu_quick; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_geglu_quick_swapped; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, enum ggml_glu_op) = ggml_glu_split; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_reglu_split; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_geglu_split; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_swiglu_split; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_geglu_erf_split; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_geglu_quick_split; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, float, float) = ggml_swiglu_oai; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float) = ggml_norm; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float) = ggml_norm_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float) = ggml_rms_norm; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float) = ggml_rms_norm_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float) = ggml_l2_norm; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float) = ggml_l2_norm_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_mul_mat; n += f != NULL; }
    { void (*f)(struct ggml_tensor *, enum ggml_prec) = ggml_mul_mat_set_prec; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_mul_mat_id; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float) = ggml_scale; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float) = ggml_scale_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float, float) = ggml_scale_bias; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float, float) = ggml_scale_bias_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_cpy; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, enum ggml_type) = ggml_cast; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_cont; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t) = ggml_cont_1d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t) = ggml_cont_2d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, int64_t) = ggml_cont_3d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, int64_t, int64_t) = ggml_cont_4d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_reshape; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t) = ggml_reshape_1d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t) = ggml_reshape_2d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, int64_t) = ggml_reshape_3d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, int64_t, int64_t) = ggml_reshape_4d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, size_t) = ggml_view_1d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, size_t, size_t) = ggml_view_2d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, int64_t, size_t, size_t, size_t) = ggml_view_3d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, int64_t, int64_t, size_t, size_t, size_t, size_t) = ggml_view_4d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, int, int, int) = ggml_permute; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_transpose; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_get_rows; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_set_rows; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int) = ggml_diag_mask_inf; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int) = ggml_diag_mask_inf_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int) = ggml_diag_mask_zero; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int) = ggml_diag_mask_zero_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_soft_max; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_soft_max_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, float, float) = ggml_soft_max_ext; n += f != NULL; }
    { void (*f)(struct ggml_tensor *, struct ggml_tensor *) = ggml_soft_max_add_sinks; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int) = ggml_rope; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int) = ggml_rope_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, float, float, float, float, float, float) = ggml_rope_ext; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, float, float, float, float, float, float) = ggml_rope_ext_inplace; n += f != NULL; }
    { void (*f)(int, int, float, float, float, float *) = ggml_rope_yarn_corr_dims; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, float, float) = ggml_clamp; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, int, int, int) = ggml_pad; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, int, int, int, int, int, int, int) = ggml_pad_ext; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, int, int, int) = ggml_roll; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, enum ggml_sort_order) = ggml_argsort; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, float, float, float) = ggml_arange; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int) = ggml_top_k; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, float, float, float) = ggml_flash_attn_ext; n += f != NULL; }
    { void (*f)(struct ggml_tensor *, enum ggml_prec) = ggml_flash_attn_ext_set_prec; n += f != NULL; }
    { enum ggml_prec (*f)(const struct ggml_tensor *) = ggml_flash_attn_ext_get_prec; n += f != NULL; }
    { void (*f)(struct ggml_tensor *, struct ggml_tensor *) = ggml_flash_attn_ext_add_sinks; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, enum ggml_unary_op) = ggml_unary; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, enum ggml_unary_op) = ggml_unary_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, ggml_custom1_op_t, int, void *) = ggml_map_custom1; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, ggml_custom1_op_t, int, void *) = ggml_map_custom1_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, ggml_custom2_op_t, int, void *) = ggml_map_custom2; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, ggml_custom2_op_t, int, void *) = ggml_map_custom2_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, ggml_custom3_op_t, int, void *) = ggml_map_custom3; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, ggml_custom3_op_t, int, void *) = ggml_map_custom3_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, enum ggml_type, int64_t, int64_t, int64_t, int64_t, struct ggml_tensor **, int, ggml_custom_op_t, int, void *) = ggml_custom_4d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor **, int, ggml_custom_op_t, int, void *) = ggml_custom_inplace; n += f != NULL; }
    { void (*f)(struct ggml_cgraph *, struct ggml_tensor *) = ggml_build_forward_expand; n += f != NULL; }
    { struct ggml_cgraph * (*f)(struct ggml_context *) = ggml_new_graph; n += f != NULL; }
    { struct ggml_cgraph * (*f)(struct ggml_context *, size_t, bool) = ggml_new_graph_custom; n += f != NULL; }
    { struct ggml_cgraph * (*f)(struct ggml_context *, struct ggml_cgraph *, bool) = ggml_graph_dup; n += f != NULL; }
    { void (*f)(struct ggml_cgraph *, struct ggml_cgraph *) = ggml_graph_cpy; n += f != NULL; }
    { void (*f)(struct ggml_cgraph *) = ggml_graph_reset; n += f != NULL; }
    { void (*f)(struct ggml_cgraph *) = ggml_graph_clear; n += f != NULL; }
    { int (*f)(struct ggml_cgraph *) = ggml_graph_size; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_cgraph *, int) = ggml_graph_node; n += f != NULL; }
    { struct ggml_tensor ** (*f)(struct ggml_cgraph *) = ggml_graph_nodes; n += f != NULL; }
    { int (*f)(struct ggml_cgraph *) = ggml_graph_n_nodes; n += f != NULL; }
    { void (*f)(struct ggml_cgraph *, struct ggml_tensor *) = ggml_graph_add_node; n += f != NULL; }
    { size_t (*f)(void) = ggml_graph_overhead; n += f != NULL; }
    { size_t (*f)(size_t, bool) = ggml_graph_overhead_custom; n += f != NULL; }
    { struct ggml_tensor * (*f)(const struct ggml_cgraph *, const char *) = ggml_graph_get_tensor; n += f != NULL; }
    { struct ggml_tensor * (*f)(const struct ggml_cgraph *, const struct ggml_tensor *) = ggml_graph_get_grad; n += f != NULL; }
    { struct ggml_tensor * (*f)(const struct ggml_cgraph *, const struct ggml_tensor *) = ggml_graph_get_grad_acc; n += f != NULL; }
    { void (*f)(const struct ggml_cgraph *) = ggml_graph_print; n += f != NULL; }
    { void (*f)(ggml_log_callback, void *) = ggml_log_set; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_tensor *) = ggml_set_zero; n += f != NULL; }
    { void (*f)(enum ggml_type) = ggml_quantize_init; n += f != NULL; }
    { void (*f)(void) = ggml_quantize_free; n += f != NULL; }
    { bool (*f)(enum ggml_type) = ggml_quantize_requires_imatrix; n += f != NULL; }
    { size_t (*f)(enum ggml_type, const float *, void *, int64_t, int64_t, int64_t, const float *) = ggml_quantize_chunk; n += f != NULL; }
    { const struct ggml_type_traits * (*f)(enum ggml_type) = ggml_get_type_traits; n += f != NULL; }
    { struct ggml_threadpool_params (*f)(int) = ggml_threadpool_params_default; n += f != NULL; }
    { void (*f)(struct ggml_threadpool_params *, int) = ggml_threadpool_params_init; n += f != NULL; }
    { bool (*f)(const struct ggml_threadpool_params *, const struct ggml_threadpool_params *) = ggml_threadpool_params_match; n += f != NULL; }
    // the ggml ops (conv/pool/image, tensor edits, rope variants, recurrent, backward forms)
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, size_t, size_t, size_t, size_t) = ggml_acc; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, size_t, size_t, size_t, size_t) = ggml_acc_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_repeat_back; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_silu_back; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, float) = ggml_group_norm; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, float) = ggml_group_norm_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, float) = ggml_rms_norm_back; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_out_prod; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, size_t, size_t, size_t, size_t) = ggml_set; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, size_t, size_t, size_t, size_t) = ggml_set_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, size_t) = ggml_set_1d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, size_t) = ggml_set_1d_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, size_t, size_t) = ggml_set_2d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, size_t, size_t) = ggml_set_2d_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_get_rows_back; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *) = ggml_diag; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, float, float) = ggml_soft_max_ext_back; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, float, float) = ggml_soft_max_ext_back_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, int, int *, int, int, float, float, float, float, float, float) = ggml_rope_multi; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, int, int *, int, int, float, float, float, float, float, float) = ggml_rope_multi_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, float, float, float, float, float, float) = ggml_rope_custom; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, float, float, float, float, float, float) = ggml_rope_custom_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, float, float, float, float, float, float) = ggml_rope_ext_back; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, int, int *, int, int, float, float, float, float, float, float) = ggml_rope_multi_back; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, int, int, int, bool, enum ggml_type) = ggml_im2col; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int64_t *, int, int, int, int, int, int, bool) = ggml_im2col_back; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int) = ggml_conv_1d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int) = ggml_conv_1d_ph; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int) = ggml_conv_1d_dw; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int) = ggml_conv_1d_dw_ph; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int) = ggml_conv_transpose_1d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, int, int, int) = ggml_conv_2d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int64_t, int, int, int, int, int, int, int, int, int, enum ggml_type) = ggml_im2col_3d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int64_t, int, int, int, int, int, int, int, int, int) = ggml_conv_3d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_conv_2d_sk_p0; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_conv_2d_s1_ph; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, int, int, int) = ggml_conv_2d_dw; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, int, int, int) = ggml_conv_2d_dw_direct; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int) = ggml_conv_transpose_2d_p0; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, int, int, int) = ggml_conv_2d_direct; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, int, int, int, int, int, int, int, int, int, int, int, int) = ggml_conv_3d_direct; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, enum ggml_op_pool, int, int, int) = ggml_pool_1d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, enum ggml_op_pool, int, int, int, int, float, float) = ggml_pool_2d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, enum ggml_op_pool, int, int, int, int, float, float) = ggml_pool_2d_back; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, enum ggml_scale_mode) = ggml_upscale; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, int, int, int, enum ggml_scale_mode) = ggml_upscale_ext; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, int64_t, int64_t, uint32_t) = ggml_interpolate; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, int) = ggml_pad_reflect_1d; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, int) = ggml_timestep_embedding; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_ssm_conv; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_ssm_scan; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int) = ggml_win_part; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, int, int) = ggml_win_unpart; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, int, int) = ggml_get_rel_pos; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_add_rel_pos; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_add_rel_pos_inplace; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_rwkv_wkv6; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, float) = ggml_gated_linear_attn; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_rwkv_wkv7; n += f != NULL; }
    { void (*f)(const struct ggml_cgraph *, const struct ggml_cgraph *, const char *) = ggml_graph_dump_dot; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = ggml_cross_entropy_loss; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_cross_entropy_loss_back; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_opt_step_adamw; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *) = ggml_opt_step_sgd; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, bool) = ggml_flash_attn_back; n += f != NULL; }
    { void (*f)(struct ggml_context *, struct ggml_cgraph *, struct ggml_tensor **) = ggml_build_backward_expand; n += f != NULL; }
    return n;
}

// ---- cpu: enum values and macros
_Static_assert((GGML_NUMA_STRATEGY_DISABLED) == (0), "GGML_NUMA_STRATEGY_DISABLED");
_Static_assert((GGML_NUMA_STRATEGY_DISTRIBUTE) == (1), "GGML_NUMA_STRATEGY_DISTRIBUTE");
_Static_assert((GGML_NUMA_STRATEGY_ISOLATE) == (2), "GGML_NUMA_STRATEGY_ISOLATE");
_Static_assert((GGML_NUMA_STRATEGY_NUMACTL) == (3), "GGML_NUMA_STRATEGY_NUMACTL");
_Static_assert((GGML_NUMA_STRATEGY_MIRROR) == (4), "GGML_NUMA_STRATEGY_MIRROR");
_Static_assert((GGML_NUMA_STRATEGY_COUNT) == (5), "GGML_NUMA_STRATEGY_COUNT");
// ---- cpu: struct layouts (mirrors of llama.cpp's definitions)
struct ref_ggml_cplan { size_t work_size; uint8_t * work_data; int n_threads; struct ggml_threadpool * threadpool; ggml_abort_callback abort_callback; void * abort_callback_data; };
static struct ggml_cplan v_ggml_cplan;
struct ref_ggml_type_traits_cpu { ggml_from_float_t from_float; ggml_vec_dot_t vec_dot; enum ggml_type vec_dot_type; int64_t nrows; };
static struct ggml_type_traits_cpu v_ggml_type_traits_cpu;
static int api_compat_fields_cpu(void) {
    int n = 0;
    _Static_assert(sizeof(struct ggml_cplan) == sizeof(struct ref_ggml_cplan), "size of struct ggml_cplan");
    _Static_assert(offsetof(struct ggml_cplan, work_size) == offsetof(struct ref_ggml_cplan, work_size), "offset of ggml_cplan.work_size");
    { size_t (*p) = &v_ggml_cplan.work_size; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_cplan, work_data) == offsetof(struct ref_ggml_cplan, work_data), "offset of ggml_cplan.work_data");
    { uint8_t * (*p) = &v_ggml_cplan.work_data; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_cplan, n_threads) == offsetof(struct ref_ggml_cplan, n_threads), "offset of ggml_cplan.n_threads");
    { int (*p) = &v_ggml_cplan.n_threads; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_cplan, threadpool) == offsetof(struct ref_ggml_cplan, threadpool), "offset of ggml_cplan.threadpool");
    { struct ggml_threadpool * (*p) = &v_ggml_cplan.threadpool; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_cplan, abort_callback) == offsetof(struct ref_ggml_cplan, abort_callback), "offset of ggml_cplan.abort_callback");
    { ggml_abort_callback (*p) = &v_ggml_cplan.abort_callback; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_cplan, abort_callback_data) == offsetof(struct ref_ggml_cplan, abort_callback_data), "offset of ggml_cplan.abort_callback_data");
    { void * (*p) = &v_ggml_cplan.abort_callback_data; n += p != NULL; }
    _Static_assert(sizeof(struct ggml_type_traits_cpu) == sizeof(struct ref_ggml_type_traits_cpu), "size of struct ggml_type_traits_cpu");
    _Static_assert(offsetof(struct ggml_type_traits_cpu, from_float) == offsetof(struct ref_ggml_type_traits_cpu, from_float), "offset of ggml_type_traits_cpu.from_float");
    { ggml_from_float_t (*p) = &v_ggml_type_traits_cpu.from_float; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_type_traits_cpu, vec_dot) == offsetof(struct ref_ggml_type_traits_cpu, vec_dot), "offset of ggml_type_traits_cpu.vec_dot");
    { ggml_vec_dot_t (*p) = &v_ggml_type_traits_cpu.vec_dot; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_type_traits_cpu, vec_dot_type) == offsetof(struct ref_ggml_type_traits_cpu, vec_dot_type), "offset of ggml_type_traits_cpu.vec_dot_type");
    { enum ggml_type (*p) = &v_ggml_type_traits_cpu.vec_dot_type; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_type_traits_cpu, nrows) == offsetof(struct ref_ggml_type_traits_cpu, nrows), "offset of ggml_type_traits_cpu.nrows");
    { int64_t (*p) = &v_ggml_type_traits_cpu.nrows; n += p != NULL; }
    return n;
}

// ---- cpu: prototypes
static int api_compat_functions_cpu(void) {
    int n = 0;
    { void (*f)(enum ggml_numa_strategy) = ggml_numa_init; n += f != NULL; }
    { bool (*f)(void) = ggml_is_numa; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, int32_t) = ggml_new_i32; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_context *, float) = ggml_new_f32; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_tensor *, int32_t) = ggml_set_i32; n += f != NULL; }
    { struct ggml_tensor * (*f)(struct ggml_tensor *, float) = ggml_set_f32; n += f != NULL; }
    { int32_t (*f)(const struct ggml_tensor *, int) = ggml_get_i32_1d; n += f != NULL; }
    { void (*f)(const struct ggml_tensor *, int, int32_t) = ggml_set_i32_1d; n += f != NULL; }
    { int32_t (*f)(const struct ggml_tensor *, int, int, int, int) = ggml_get_i32_nd; n += f != NULL; }
    { void (*f)(const struct ggml_tensor *, int, int, int, int, int32_t) = ggml_set_i32_nd; n += f != NULL; }
    { float (*f)(const struct ggml_tensor *, int) = ggml_get_f32_1d; n += f != NULL; }
    { void (*f)(const struct ggml_tensor *, int, float) = ggml_set_f32_1d; n += f != NULL; }
    { float (*f)(const struct ggml_tensor *, int, int, int, int) = ggml_get_f32_nd; n += f != NULL; }
    { void (*f)(const struct ggml_tensor *, int, int, int, int, float) = ggml_set_f32_nd; n += f != NULL; }
    { struct ggml_threadpool * (*f)(struct ggml_threadpool_params *) = ggml_threadpool_new; n += f != NULL; }
    { void (*f)(struct ggml_threadpool *) = ggml_threadpool_free; n += f != NULL; }
    { int (*f)(struct ggml_threadpool *) = ggml_threadpool_get_n_threads; n += f != NULL; }
    { void (*f)(struct ggml_threadpool *) = ggml_threadpool_pause; n += f != NULL; }
    { void (*f)(struct ggml_threadpool *) = ggml_threadpool_resume; n += f != NULL; }
    { struct ggml_cplan (*f)(const struct ggml_cgraph *, int, struct ggml_threadpool *) = ggml_graph_plan; n += f != NULL; }
    { enum ggml_status (*f)(struct ggml_cgraph *, struct ggml_cplan *) = ggml_graph_compute; n += f != NULL; }
    { enum ggml_status (*f)(struct ggml_context *, struct ggml_cgraph *, int) = ggml_graph_compute_with_ctx; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_sse3; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_ssse3; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_avx; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_avx_vnni; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_avx2; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_bmi2; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_f16c; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_fma; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_avx512; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_avx512_vbmi; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_avx512_vnni; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_avx512_bf16; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_amx_int8; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_neon; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_arm_fma; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_fp16_va; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_dotprod; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_matmul_int8; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_sve; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_get_sve_cnt; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_sme; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_riscv_v; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_vsx; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_vxe; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_wasm_simd; n += f != NULL; }
    { int (*f)(void) = ggml_cpu_has_llamafile; n += f != NULL; }
    { const struct ggml_type_traits_cpu * (*f)(enum ggml_type) = ggml_get_type_traits_cpu; n += f != NULL; }
    { void (*f)(void) = ggml_cpu_init; n += f != NULL; }
    { ggml_backend_t (*f)(void) = ggml_backend_cpu_init; n += f != NULL; }
    { bool (*f)(ggml_backend_t) = ggml_backend_is_cpu; n += f != NULL; }
    { void (*f)(ggml_backend_t, int) = ggml_backend_cpu_set_n_threads; n += f != NULL; }
    { void (*f)(ggml_backend_t, ggml_threadpool_t) = ggml_backend_cpu_set_threadpool; n += f != NULL; }
    { void (*f)(ggml_backend_t, ggml_abort_callback, void *) = ggml_backend_cpu_set_abort_callback; n += f != NULL; }
    { ggml_backend_reg_t (*f)(void) = ggml_backend_cpu_reg; n += f != NULL; }
    { void (*f)(const float *, ggml_fp16_t *, int64_t) = ggml_cpu_fp32_to_fp16; n += f != NULL; }
    { void (*f)(const ggml_fp16_t *, float *, int64_t) = ggml_cpu_fp16_to_fp32; n += f != NULL; }
    { void (*f)(const float *, ggml_bf16_t *, int64_t) = ggml_cpu_fp32_to_bf16; n += f != NULL; }
    { void (*f)(const ggml_bf16_t *, float *, int64_t) = ggml_cpu_bf16_to_fp32; n += f != NULL; }
    return n;
}

// ---- backend: enum values and macros
// ggml_backend_dev_props.device_id and GGML_BACKEND_DEVICE_TYPE_IGPU (ACCEL = 3): newer upstream
_Static_assert((GGML_BACKEND_BUFFER_USAGE_ANY) == (0), "GGML_BACKEND_BUFFER_USAGE_ANY");
_Static_assert((GGML_BACKEND_BUFFER_USAGE_WEIGHTS) == (1), "GGML_BACKEND_BUFFER_USAGE_WEIGHTS");
_Static_assert((GGML_BACKEND_BUFFER_USAGE_COMPUTE) == (2), "GGML_BACKEND_BUFFER_USAGE_COMPUTE");
_Static_assert((GGML_BACKEND_DEVICE_TYPE_CPU) == (0), "GGML_BACKEND_DEVICE_TYPE_CPU");
_Static_assert((GGML_BACKEND_DEVICE_TYPE_GPU) == (1), "GGML_BACKEND_DEVICE_TYPE_GPU");
_Static_assert((GGML_BACKEND_DEVICE_TYPE_IGPU) == (2), "GGML_BACKEND_DEVICE_TYPE_IGPU");
_Static_assert((GGML_BACKEND_DEVICE_TYPE_ACCEL) == (3), "GGML_BACKEND_DEVICE_TYPE_ACCEL");
// ---- backend: struct layouts (mirrors of llama.cpp's definitions)
struct ref_ggml_backend_dev_caps { bool async; bool host_buffer; bool buffer_from_host_ptr; bool events; };
static struct ggml_backend_dev_caps v_ggml_backend_dev_caps;
struct ref_ggml_backend_dev_props { const char * name; const char * description; size_t memory_free; size_t memory_total; enum ggml_backend_dev_type type; const char * device_id; struct ggml_backend_dev_caps caps; };
static struct ggml_backend_dev_props v_ggml_backend_dev_props;
struct ref_ggml_backend_feature { const char * name; const char * value; };
static struct ggml_backend_feature v_ggml_backend_feature;
struct ref_ggml_backend_graph_copy { ggml_backend_buffer_t buffer; struct ggml_context * ctx_allocated; struct ggml_context * ctx_unallocated; struct ggml_cgraph * graph; };
static struct ggml_backend_graph_copy v_ggml_backend_graph_copy;
static int api_compat_fields_backend(void) {
    int n = 0;
    _Static_assert(sizeof(struct ggml_backend_dev_caps) == sizeof(struct ref_ggml_backend_dev_caps), "size of struct ggml_backend_dev_caps");
    _Static_assert(offsetof(struct ggml_backend_dev_caps, async) == offsetof(struct ref_ggml_backend_dev_caps, async), "offset of ggml_backend_dev_caps.async");
    { bool (*p) = &v_ggml_backend_dev_caps.async; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_dev_caps, host_buffer) == offsetof(struct ref_ggml_backend_dev_caps, host_buffer), "offset of ggml_backend_dev_caps.host_buffer");
    { bool (*p) = &v_ggml_backend_dev_caps.host_buffer; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_dev_caps, buffer_from_host_ptr) == offsetof(struct ref_ggml_backend_dev_caps, buffer_from_host_ptr), "offset of ggml_backend_dev_caps.buffer_from_host_ptr");
    { bool (*p) = &v_ggml_backend_dev_caps.buffer_from_host_ptr; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_dev_caps, events) == offsetof(struct ref_ggml_backend_dev_caps, events), "offset of ggml_backend_dev_caps.events");
    { bool (*p) = &v_ggml_backend_dev_caps.events; n += p != NULL; }
    _Static_assert(sizeof(struct ggml_backend_dev_props) == sizeof(struct ref_ggml_backend_dev_props), "size of struct ggml_backend_dev_props");
    _Static_assert(offsetof(struct ggml_backend_dev_props, name) == offsetof(struct ref_ggml_backend_dev_props, name), "offset of ggml_backend_dev_props.name");
    { const char * (*p) = &v_ggml_backend_dev_props.name; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_dev_props, description) == offsetof(struct ref_ggml_backend_dev_props, description), "offset of ggml_backend_dev_props.description");
    { const char * (*p) = &v_ggml_backend_dev_props.description; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_dev_props, memory_free) == offsetof(struct ref_ggml_backend_dev_props, memory_free), "offset of ggml_backend_dev_props.memory_free");
    { size_t (*p) = &v_ggml_backend_dev_props.memory_free; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_dev_props, memory_total) == offsetof(struct ref_ggml_backend_dev_props, memory_total), "offset of ggml_backend_dev_props.memory_total");
    { size_t (*p) = &v_ggml_backend_dev_props.memory_total; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_dev_props, type) == offsetof(struct ref_ggml_backend_dev_props, type), "offset of ggml_backend_dev_props.type");
    { enum ggml_backend_dev_type (*p) = &v_ggml_backend_dev_props.type; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_dev_props, device_id) == offsetof(struct ref_ggml_backend_dev_props, device_id), "offset of ggml_backend_dev_props.device_id");
    { const char * (*p) = &v_ggml_backend_dev_props.device_id; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_dev_props, caps) == offsetof(struct ref_ggml_backend_dev_props, caps), "offset of ggml_backend_dev_props.caps");
    { struct ggml_backend_dev_caps (*p) = &v_ggml_backend_dev_props.caps; n += p != NULL; }
    _Static_assert(sizeof(struct ggml_backend_feature) == sizeof(struct ref_ggml_backend_feature), "size of struct ggml_backend_feature");
    _Static_assert(offsetof(struct ggml_backend_feature, name) == offsetof(struct ref_ggml_backend_feature, name), "offset of ggml_backend_feature.name");
    { const char * (*p) = &v_ggml_backend_feature.name; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_feature, value) == offsetof(struct ref_ggml_backend_feature, value), "offset of ggml_backend_feature.value");
    { const char * (*p) = &v_ggml_backend_feature.value; n += p != NULL; }
    _Static_assert(sizeof(struct ggml_backend_graph_copy) == sizeof(struct ref_ggml_backend_graph_copy), "size of struct ggml_backend_graph_copy");
    _Static_assert(offsetof(struct ggml_backend_graph_copy, buffer) == offsetof(struct ref_ggml_backend_graph_copy, buffer), "offset of ggml_backend_graph_copy.buffer");
    { ggml_backend_buffer_t (*p) = &v_ggml_backend_graph_copy.buffer; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_graph_copy, ctx_allocated) == offsetof(struct ref_ggml_backend_graph_copy, ctx_allocated), "offset of ggml_backend_graph_copy.ctx_allocated");
    { struct ggml_context * (*p) = &v_ggml_backend_graph_copy.ctx_allocated; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_graph_copy, ctx_unallocated) == offsetof(struct ref_ggml_backend_graph_copy, ctx_unallocated), "offset of ggml_backend_graph_copy.ctx_unallocated");
    { struct ggml_context * (*p) = &v_ggml_backend_graph_copy.ctx_unallocated; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_backend_graph_copy, graph) == offsetof(struct ref_ggml_backend_graph_copy, graph), "offset of ggml_backend_graph_copy.graph");
    { struct ggml_cgraph * (*p) = &v_ggml_backend_graph_copy.graph; n += p != NULL; }
    return n;
}

// ---- backend: prototypes
static int api_compat_functions_backend(void) {
    int n = 0;
    { const char * (*f)(ggml_backend_buffer_type_t) = ggml_backend_buft_name; n += f != NULL; }
    { ggml_backend_buffer_t (*f)(ggml_backend_buffer_type_t, size_t) = ggml_backend_buft_alloc_buffer; n += f != NULL; }
    { size_t (*f)(ggml_backend_buffer_type_t) = ggml_backend_buft_get_alignment; n += f != NULL; }
    { size_t (*f)(ggml_backend_buffer_type_t) = ggml_backend_buft_get_max_size; n += f != NULL; }
    { size_t (*f)(ggml_backend_buffer_type_t, const struct ggml_tensor *) = ggml_backend_buft_get_alloc_size; n += f != NULL; }
    { bool (*f)(ggml_backend_buffer_type_t) = ggml_backend_buft_is_host; n += f != NULL; }
    { ggml_backend_dev_t (*f)(ggml_backend_buffer_type_t) = ggml_backend_buft_get_device; n += f != NULL; }
    { const char * (*f)(ggml_backend_buffer_t) = ggml_backend_buffer_name; n += f != NULL; }
    { void (*f)(ggml_backend_buffer_t) = ggml_backend_buffer_free; n += f != NULL; }
    { void * (*f)(ggml_backend_buffer_t) = ggml_backend_buffer_get_base; n += f != NULL; }
    { size_t (*f)(ggml_backend_buffer_t) = ggml_backend_buffer_get_size; n += f != NULL; }
    { enum ggml_status (*f)(ggml_backend_buffer_t, struct ggml_tensor *) = ggml_backend_buffer_init_tensor; n += f != NULL; }
    { size_t (*f)(ggml_backend_buffer_t) = ggml_backend_buffer_get_alignment; n += f != NULL; }
    { size_t (*f)(ggml_backend_buffer_t) = ggml_backend_buffer_get_max_size; n += f != NULL; }
    { size_t (*f)(ggml_backend_buffer_t, const struct ggml_tensor *) = ggml_backend_buffer_get_alloc_size; n += f != NULL; }
    { void (*f)(ggml_backend_buffer_t, uint8_t) = ggml_backend_buffer_clear; n += f != NULL; }
    { bool (*f)(ggml_backend_buffer_t) = ggml_backend_buffer_is_host; n += f != NULL; }
    { void (*f)(ggml_backend_buffer_t, enum ggml_backend_buffer_usage) = ggml_backend_buffer_set_usage; n += f != NULL; }
    { enum ggml_backend_buffer_usage (*f)(ggml_backend_buffer_t) = ggml_backend_buffer_get_usage; n += f != NULL; }
    { ggml_backend_buffer_type_t (*f)(ggml_backend_buffer_t) = ggml_backend_buffer_get_type; n += f != NULL; }
    { void (*f)(ggml_backend_buffer_t) = ggml_backend_buffer_reset; n += f != NULL; }
    // newer upstream (ggml-backend.cpp in the index): const src
    { void (*f)(const struct ggml_tensor *, struct ggml_tensor *) = ggml_backend_tensor_copy; n += f != NULL; }
    { ggml_guid_t (*f)(ggml_backend_t) = ggml_backend_guid; n += f != NULL; }
    { const char * (*f)(ggml_backend_t) = ggml_backend_name; n += f != NULL; }
    { void (*f)(ggml_backend_t) = ggml_backend_free; n += f != NULL; }
    { ggml_backend_buffer_type_t (*f)(ggml_backend_t) = ggml_backend_get_default_buffer_type; n += f != NULL; }
    { ggml_backend_buffer_t (*f)(ggml_backend_t, size_t) = ggml_backend_alloc_buffer; n += f != NULL; }
    { size_t (*f)(ggml_backend_t) = ggml_backend_get_alignment; n += f != NULL; }
    { size_t (*f)(ggml_backend_t) = ggml_backend_get_max_size; n += f != NULL; }
    { void (*f)(ggml_backend_t, struct ggml_tensor *, const void *, size_t, size_t) = ggml_backend_tensor_set_async; n += f != NULL; }
    { void (*f)(ggml_backend_t, const struct ggml_tensor *, void *, size_t, size_t) = ggml_backend_tensor_get_async; n += f != NULL; }
    { void (*f)(struct ggml_tensor *, const void *, size_t, size_t) = ggml_backend_tensor_set; n += f != NULL; }
    { void (*f)(const struct ggml_tensor *, void *, size_t, size_t) = ggml_backend_tensor_get; n += f != NULL; }
    { void (*f)(struct ggml_tensor *, uint8_t, size_t, size_t) = ggml_backend_tensor_memset; n += f != NULL; }
    { void (*f)(ggml_backend_t) = ggml_backend_synchronize; n += f != NULL; }
    { ggml_backend_graph_plan_t (*f)(ggml_backend_t, struct ggml_cgraph *) = ggml_backend_graph_plan_create; n += f != NULL; }
    { void (*f)(ggml_backend_t, ggml_backend_graph_plan_t) = ggml_backend_graph_plan_free; n += f != NULL; }
    { enum ggml_status (*f)(ggml_backend_t, ggml_backend_graph_plan_t) = ggml_backend_graph_plan_compute; n += f != NULL; }
    { enum ggml_status (*f)(ggml_backend_t, struct ggml_cgraph *) = ggml_backend_graph_compute; n += f != NULL; }
    { enum ggml_status (*f)(ggml_backend_t, struct ggml_cgraph *) = ggml_backend_graph_compute_async; n += f != NULL; }
    { bool (*f)(ggml_backend_t, const struct ggml_tensor *) = ggml_backend_supports_op; n += f != NULL; }
    { bool (*f)(ggml_backend_t, ggml_backend_buffer_type_t) = ggml_backend_supports_buft; n += f != NULL; }
    { bool (*f)(ggml_backend_t, const struct ggml_tensor *) = ggml_backend_offload_op; n += f != NULL; }
    { void (*f)(ggml_backend_t, ggml_backend_t, const struct ggml_tensor *, struct ggml_tensor *) = ggml_backend_tensor_copy_async; n += f != NULL; }
    { ggml_backend_dev_t (*f)(ggml_backend_t) = ggml_backend_get_device; n += f != NULL; }
    { ggml_backend_event_t (*f)(ggml_backend_dev_t) = ggml_backend_event_new; n += f != NULL; }
    { void (*f)(ggml_backend_event_t) = ggml_backend_event_free; n += f != NULL; }
    { void (*f)(ggml_backend_event_t, ggml_backend_t) = ggml_backend_event_record; n += f != NULL; }
    { void (*f)(ggml_backend_event_t) = ggml_backend_event_synchronize; n += f != NULL; }
    { void (*f)(ggml_backend_t, ggml_backend_event_t) = ggml_backend_event_wait; n += f != NULL; }
    { const char * (*f)(ggml_backend_dev_t) = ggml_backend_dev_name; n += f != NULL; }
    { const char * (*f)(ggml_backend_dev_t) = ggml_backend_dev_description; n += f != NULL; }
    { void (*f)(ggml_backend_dev_t, size_t *, size_t *) = ggml_backend_dev_memory; n += f != NULL; }
    { enum ggml_backend_dev_type (*f)(ggml_backend_dev_t) = ggml_backend_dev_type; n += f != NULL; }
    { void (*f)(ggml_backend_dev_t, struct ggml_backend_dev_props *) = ggml_backend_dev_get_props; n += f != NULL; }
    { ggml_backend_reg_t (*f)(ggml_backend_dev_t) = ggml_backend_dev_backend_reg; n += f != NULL; }
    { ggml_backend_t (*f)(ggml_backend_dev_t, const char *) = ggml_backend_dev_init; n += f != NULL; }
    { ggml_backend_buffer_type_t (*f)(ggml_backend_dev_t) = ggml_backend_dev_buffer_type; n += f != NULL; }
    { ggml_backend_buffer_type_t (*f)(ggml_backend_dev_t) = ggml_backend_dev_host_buffer_type; n += f != NULL; }
    { ggml_backend_buffer_t (*f)(ggml_backend_dev_t, void *, size_t, size_t) = ggml_backend_dev_buffer_from_host_ptr; n += f != NULL; }
    { bool (*f)(ggml_backend_dev_t, const struct ggml_tensor *) = ggml_backend_dev_supports_op; n += f != NULL; }
    { bool (*f)(ggml_backend_dev_t, ggml_backend_buffer_type_t) = ggml_backend_dev_supports_buft; n += f != NULL; }
    { bool (*f)(ggml_backend_dev_t, const struct ggml_tensor *) = ggml_backend_dev_offload_op; n += f != NULL; }
    { const char * (*f)(ggml_backend_reg_t) = ggml_backend_reg_name; n += f != NULL; }
    { size_t (*f)(ggml_backend_reg_t) = ggml_backend_reg_dev_count; n += f != NULL; }
    { ggml_backend_dev_t (*f)(ggml_backend_reg_t, size_t) = ggml_backend_reg_dev_get; n += f != NULL; }
    { void * (*f)(ggml_backend_reg_t, const char *) = ggml_backend_reg_get_proc_address; n += f != NULL; }
    { void (*f)(ggml_backend_dev_t) = ggml_backend_device_register; n += f != NULL; }
    { size_t (*f)(void) = ggml_backend_reg_count; n += f != NULL; }
    { ggml_backend_reg_t (*f)(size_t) = ggml_backend_reg_get; n += f != NULL; }
    { ggml_backend_reg_t (*f)(const char *) = ggml_backend_reg_by_name; n += f != NULL; }
    { size_t (*f)(void) = ggml_backend_dev_count; n += f != NULL; }
    { ggml_backend_dev_t (*f)(size_t) = ggml_backend_dev_get; n += f != NULL; }
    { ggml_backend_dev_t (*f)(const char *) = ggml_backend_dev_by_name; n += f != NULL; }
    { ggml_backend_dev_t (*f)(enum ggml_backend_dev_type) = ggml_backend_dev_by_type; n += f != NULL; }
    { ggml_backend_t (*f)(const char *, const char *) = ggml_backend_init_by_name; n += f != NULL; }
    { ggml_backend_t (*f)(enum ggml_backend_dev_type, const char *) = ggml_backend_init_by_type; n += f != NULL; }
    { ggml_backend_t (*f)(void) = ggml_backend_init_best; n += f != NULL; }
    { ggml_backend_reg_t (*f)(const char *) = ggml_backend_load; n += f != NULL; }
    { void (*f)(ggml_backend_reg_t) = ggml_backend_unload; n += f != NULL; }
    { void (*f)(void) = ggml_backend_load_all; n += f != NULL; }
    { void (*f)(const char *) = ggml_backend_load_all_from_path; n += f != NULL; }
    { ggml_backend_sched_t (*f)(ggml_backend_t *, ggml_backend_buffer_type_t *, int, size_t, bool, bool) = ggml_backend_sched_new; n += f != NULL; }
    { void (*f)(ggml_backend_sched_t) = ggml_backend_sched_free; n += f != NULL; }
    { bool (*f)(ggml_backend_sched_t, struct ggml_cgraph *) = ggml_backend_sched_reserve; n += f != NULL; }
    { int (*f)(ggml_backend_sched_t) = ggml_backend_sched_get_n_backends; n += f != NULL; }
    { ggml_backend_t (*f)(ggml_backend_sched_t, int) = ggml_backend_sched_get_backend; n += f != NULL; }
    { int (*f)(ggml_backend_sched_t) = ggml_backend_sched_get_n_splits; n += f != NULL; }
    { int (*f)(ggml_backend_sched_t) = ggml_backend_sched_get_n_copies; n += f != NULL; }
    { size_t (*f)(ggml_backend_sched_t, ggml_backend_t) = ggml_backend_sched_get_buffer_size; n += f != NULL; }
    { void (*f)(ggml_backend_sched_t, struct ggml_tensor *, ggml_backend_t) = ggml_backend_sched_set_tensor_backend; n += f != NULL; }
    { ggml_backend_t (*f)(ggml_backend_sched_t, struct ggml_tensor *) = ggml_backend_sched_get_tensor_backend; n += f != NULL; }
    { bool (*f)(ggml_backend_sched_t, struct ggml_cgraph *) = ggml_backend_sched_alloc_graph; n += f != NULL; }
    { enum ggml_status (*f)(ggml_backend_sched_t, struct ggml_cgraph *) = ggml_backend_sched_graph_compute; n += f != NULL; }
    { enum ggml_status (*f)(ggml_backend_sched_t, struct ggml_cgraph *) = ggml_backend_sched_graph_compute_async; n += f != NULL; }
    { void (*f)(ggml_backend_sched_t) = ggml_backend_sched_synchronize; n += f != NULL; }
    { void (*f)(ggml_backend_sched_t) = ggml_backend_sched_reset; n += f != NULL; }
    { void (*f)(ggml_backend_sched_t, ggml_backend_sched_eval_callback, void *) = ggml_backend_sched_set_eval_callback; n += f != NULL; }
    { struct ggml_backend_graph_copy (*f)(ggml_backend_t, struct ggml_cgraph *) = ggml_backend_graph_copy; n += f != NULL; }
    { void (*f)(struct ggml_backend_graph_copy) = ggml_backend_graph_copy_free; n += f != NULL; }
    { bool (*f)(ggml_backend_t, ggml_backend_t, struct ggml_cgraph *, ggml_backend_eval_callback, void *, const struct ggml_tensor * const *, size_t) = ggml_backend_compare_graph_backend; n += f != NULL; }
    { enum ggml_status (*f)(ggml_backend_buffer_t, struct ggml_tensor *, void *) = ggml_backend_tensor_alloc; n += f != NULL; }
    { enum ggml_status (*f)(struct ggml_tensor *) = ggml_backend_view_init; n += f != NULL; }
    { ggml_backend_buffer_t (*f)(void *, size_t) = ggml_backend_cpu_buffer_from_ptr; n += f != NULL; }
    { ggml_backend_buffer_type_t (*f)(void) = ggml_backend_cpu_buffer_type; n += f != NULL; }
    return n;
}

// ---- alloc: enum values and macros
// ---- alloc: struct layouts (mirrors of llama.cpp's definitions)
struct ref_ggml_tallocr { ggml_backend_buffer_t buffer; void * base; size_t alignment; size_t offset; };
static struct ggml_tallocr v_ggml_tallocr;
static int api_compat_fields_alloc(void) {
    int n = 0;
    _Static_assert(sizeof(struct ggml_tallocr) == sizeof(struct ref_ggml_tallocr), "size of struct ggml_tallocr");
    _Static_assert(offsetof(struct ggml_tallocr, buffer) == offsetof(struct ref_ggml_tallocr, buffer), "offset of ggml_tallocr.buffer");
    { ggml_backend_buffer_t (*p) = &v_ggml_tallocr.buffer; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tallocr, base) == offsetof(struct ref_ggml_tallocr, base), "offset of ggml_tallocr.base");
    { void * (*p) = &v_ggml_tallocr.base; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tallocr, alignment) == offsetof(struct ref_ggml_tallocr, alignment), "offset of ggml_tallocr.alignment");
    { size_t (*p) = &v_ggml_tallocr.alignment; n += p != NULL; }
    _Static_assert(offsetof(struct ggml_tallocr, offset) == offsetof(struct ref_ggml_tallocr, offset), "offset of ggml_tallocr.offset");
    { size_t (*p) = &v_ggml_tallocr.offset; n += p != NULL; }
    return n;
}

// ---- alloc: prototypes
static int api_compat_functions_alloc(void) {
    int n = 0;
    { struct ggml_tallocr (*f)(ggml_backend_buffer_t) = ggml_tallocr_new; n += f != NULL; }
    { enum ggml_status (*f)(struct ggml_tallocr *, struct ggml_tensor *) = ggml_tallocr_alloc; n += f != NULL; }
    { ggml_gallocr_t (*f)(ggml_backend_buffer_type_t) = ggml_gallocr_new; n += f != NULL; }
    { ggml_gallocr_t (*f)(ggml_backend_buffer_type_t *, int) = ggml_gallocr_new_n; n += f != NULL; }
    { void (*f)(ggml_gallocr_t) = ggml_gallocr_free; n += f != NULL; }
    { bool (*f)(ggml_gallocr_t, struct ggml_cgraph *) = ggml_gallocr_reserve; n += f != NULL; }
    { void (*f)(ggml_gallocr_t, struct ggml_cgraph *, const int *, const int *, size_t *) = ggml_gallocr_reserve_n_size; n += f != NULL; }
    { bool (*f)(ggml_gallocr_t, struct ggml_cgraph *, const int *, const int *) = ggml_gallocr_reserve_n; n += f != NULL; }
    { bool (*f)(ggml_gallocr_t, struct ggml_cgraph *) = ggml_gallocr_alloc_graph; n += f != NULL; }
    { size_t (*f)(ggml_gallocr_t, int) = ggml_gallocr_get_buffer_size; n += f != NULL; }
    { size_t (*f)(struct ggml_context *, ggml_backend_buffer_type_t) = ggml_backend_alloc_ctx_tensors_from_buft_size; n += f != NULL; }
    { struct ggml_backend_buffer * (*f)(struct ggml_context *, ggml_backend_buffer_type_t) = ggml_backend_alloc_ctx_tensors_from_buft; n += f != NULL; }
    { struct ggml_backend_buffer * (*f)(struct ggml_context *, ggml_backend_t) = ggml_backend_alloc_ctx_tensors; n += f != NULL; }
    return n;
}

// ---- gguf: enum values and macros
_Static_assert((GGUF_TYPE_UINT8) == (0), "GGUF_TYPE_UINT8");
_Static_assert((GGUF_TYPE_INT8) == (1), "GGUF_TYPE_INT8");
_Static_assert((GGUF_TYPE_UINT16) == (2), "GGUF_TYPE_UINT16");
_Static_assert((GGUF_TYPE_INT16) == (3), "GGUF_TYPE_INT16");
_Static_assert((GGUF_TYPE_UINT32) == (4), "GGUF_TYPE_UINT32");
_Static_assert((GGUF_TYPE_INT32) == (5), "GGUF_TYPE_INT32");
_Static_assert((GGUF_TYPE_FLOAT32) == (6), "GGUF_TYPE_FLOAT32");
_Static_assert((GGUF_TYPE_BOOL) == (7), "GGUF_TYPE_BOOL");
_Static_assert((GGUF_TYPE_STRING) == (8), "GGUF_TYPE_STRING");
_Static_assert((GGUF_TYPE_ARRAY) == (9), "GGUF_TYPE_ARRAY");
_Static_assert((GGUF_TYPE_UINT64) == (10), "GGUF_TYPE_UINT64");
_Static_assert((GGUF_TYPE_INT64) == (11), "GGUF_TYPE_INT64");
_Static_assert((GGUF_TYPE_FLOAT64) == (12), "GGUF_TYPE_FLOAT64");
_Static_assert((GGUF_TYPE_COUNT) == (13), "GGUF_TYPE_COUNT");
_Static_assert((GGUF_VERSION) == (3), "GGUF_VERSION");
_Static_assert((GGUF_DEFAULT_ALIGNMENT) == (32), "GGUF_DEFAULT_ALIGNMENT");
// ---- gguf: struct layouts (mirrors of llama.cpp's definitions)
struct ref_gguf_init_params { bool no_alloc; struct ggml_context ** ctx; };
static struct gguf_init_params v_gguf_init_params;
static int api_compat_fields_gguf(void) {
    int n = 0;
    _Static_assert(sizeof(struct gguf_init_params) == sizeof(struct ref_gguf_init_params), "size of struct gguf_init_params");
    _Static_assert(offsetof(struct gguf_init_params, no_alloc) == offsetof(struct ref_gguf_init_params, no_alloc), "offset of gguf_init_params.no_alloc");
    { bool (*p) = &v_gguf_init_params.no_alloc; n += p != NULL; }
    _Static_assert(offsetof(struct gguf_init_params, ctx) == offsetof(struct ref_gguf_init_params, ctx), "offset of gguf_init_params.ctx");
    { struct ggml_context ** (*p) = &v_gguf_init_params.ctx; n += p != NULL; }
    return n;
}

// ---- gguf: prototypes
static int api_compat_functions_gguf(void) {
    int n = 0;
    { struct gguf_context * (*f)(void) = gguf_init_empty; n += f != NULL; }
    { struct gguf_context * (*f)(const char *, struct gguf_init_params) = gguf_init_from_file; n += f != NULL; }
    { void (*f)(struct gguf_context *) = gguf_free; n += f != NULL; }
    { const char * (*f)(enum gguf_type) = gguf_type_name; n += f != NULL; }
    { uint32_t (*f)(const struct gguf_context *) = gguf_get_version; n += f != NULL; }
    { size_t (*f)(const struct gguf_context *) = gguf_get_alignment; n += f != NULL; }
    { size_t (*f)(const struct gguf_context *) = gguf_get_data_offset; n += f != NULL; }
    { int64_t (*f)(const struct gguf_context *) = gguf_get_n_kv; n += f != NULL; }
    { int64_t (*f)(const struct gguf_context *, const char *) = gguf_find_key; n += f != NULL; }
    { const char * (*f)(const struct gguf_context *, int64_t) = gguf_get_key; n += f != NULL; }
    { enum gguf_type (*f)(const struct gguf_context *, int64_t) = gguf_get_kv_type; n += f != NULL; }
    { enum gguf_type (*f)(const struct gguf_context *, int64_t) = gguf_get_arr_type; n += f != NULL; }
    { uint8_t (*f)(const struct gguf_context *, int64_t) = gguf_get_val_u8; n += f != NULL; }
    { int8_t (*f)(const struct gguf_context *, int64_t) = gguf_get_val_i8; n += f != NULL; }
    { uint16_t (*f)(const struct gguf_context *, int64_t) = gguf_get_val_u16; n += f != NULL; }
    { int16_t (*f)(const struct gguf_context *, int64_t) = gguf_get_val_i16; n += f != NULL; }
    { uint32_t (*f)(const struct gguf_context *, int64_t) = gguf_get_val_u32; n += f != NULL; }
    { int32_t (*f)(const struct gguf_context *, int64_t) = gguf_get_val_i32; n += f != NULL; }
    { float (*f)(const struct gguf_context *, int64_t) = gguf_get_val_f32; n += f != NULL; }
    { uint64_t (*f)(const struct gguf_context *, int64_t) = gguf_get_val_u64; n += f != NULL; }
    { int64_t (*f)(const struct gguf_context *, int64_t) = gguf_get_val_i64; n += f != NULL; }
    { double (*f)(const struct gguf_context *, int64_t) = gguf_get_val_f64; n += f != NULL; }
    { bool (*f)(const struct gguf_context *, int64_t) = gguf_get_val_bool; n += f != NULL; }
    { const char * (*f)(const struct gguf_context *, int64_t) = gguf_get_val_str; n += f != NULL; }
    { const void * (*f)(const struct gguf_context *, int64_t) = gguf_get_val_data; n += f != NULL; }
    { size_t (*f)(const struct gguf_context *, int64_t) = gguf_get_arr_n; n += f != NULL; }
    { const void * (*f)(const struct gguf_context *, int64_t) = gguf_get_arr_data; n += f != NULL; }
    { const char * (*f)(const struct gguf_context *, int64_t, size_t) = gguf_get_arr_str; n += f != NULL; }
    { int64_t (*f)(const struct gguf_context *) = gguf_get_n_tensors; n += f != NULL; }
    { int64_t (*f)(const struct gguf_context *, const char *) = gguf_find_tensor; n += f != NULL; }
    { size_t (*f)(const struct gguf_context *, int64_t) = gguf_get_tensor_offset; n += f != NULL; }
    { const char * (*f)(const struct gguf_context *, int64_t) = gguf_get_tensor_name; n += f != NULL; }
    { enum ggml_type (*f)(const struct gguf_context *, int64_t) = gguf_get_tensor_type; n += f != NULL; }
    { size_t (*f)(const struct gguf_context *, int64_t) = gguf_get_tensor_size; n += f != NULL; }
    { int64_t (*f)(struct gguf_context *, const char *) = gguf_remove_key; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, uint8_t) = gguf_set_val_u8; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, int8_t) = gguf_set_val_i8; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, uint16_t) = gguf_set_val_u16; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, int16_t) = gguf_set_val_i16; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, uint32_t) = gguf_set_val_u32; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, int32_t) = gguf_set_val_i32; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, float) = gguf_set_val_f32; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, uint64_t) = gguf_set_val_u64; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, int64_t) = gguf_set_val_i64; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, double) = gguf_set_val_f64; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, bool) = gguf_set_val_bool; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, const char *) = gguf_set_val_str; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, enum gguf_type, const void *, size_t) = gguf_set_arr_data; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, const char **, size_t) = gguf_set_arr_str; n += f != NULL; }
    { void (*f)(struct gguf_context *, const struct gguf_context *) = gguf_set_kv; n += f != NULL; }
    { void (*f)(struct gguf_context *, const struct ggml_tensor *) = gguf_add_tensor; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, enum ggml_type) = gguf_set_tensor_type; n += f != NULL; }
    { void (*f)(struct gguf_context *, const char *, const void *) = gguf_set_tensor_data; n += f != NULL; }
    { bool (*f)(const struct gguf_context *, const char *, bool) = gguf_write_to_file; n += f != NULL; }
    { size_t (*f)(const struct gguf_context *) = gguf_get_meta_size; n += f != NULL; }
    { void (*f)(const struct gguf_context *, void *) = gguf_get_meta_data; n += f != NULL; }
    return n;
}

// ---- opt: ggml/include/ggml-opt.h and llama.h's training section (llama.cpp's forms, hand-written in the
// generated style: typedefs, enum values, struct layouts, prototypes)
typedef struct ggml_opt_dataset * ref_ggml_opt_dataset_t;
_Static_assert(_Generic((ref_ggml_opt_dataset_t *) 0, ggml_opt_dataset_t *: 1, default: 0), "typedef ggml_opt_dataset_t");
typedef struct ggml_opt_context * ref_ggml_opt_context_t;
_Static_assert(_Generic((ref_ggml_opt_context_t *) 0, ggml_opt_context_t *: 1, default: 0), "typedef ggml_opt_context_t");
typedef struct ggml_opt_result * ref_ggml_opt_result_t;
_Static_assert(_Generic((ref_ggml_opt_result_t *) 0, ggml_opt_result_t *: 1, default: 0), "typedef ggml_opt_result_t");
typedef struct ggml_opt_optimizer_params (*ref_ggml_opt_get_optimizer_params)(void * userdata);
_Static_assert(_Generic((ref_ggml_opt_get_optimizer_params *) 0, ggml_opt_get_optimizer_params *: 1, default: 0), "typedef ggml_opt_get_optimizer_params");
typedef void (*ref_ggml_opt_epoch_callback)(bool train, ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, ggml_opt_result_t result, int64_t ibatch, int64_t ibatch_max, int64_t t_start_us);
_Static_assert(_Generic((ref_ggml_opt_epoch_callback *) 0, ggml_opt_epoch_callback *: 1, default: 0), "typedef ggml_opt_epoch_callback");
typedef bool (*ref_llama_opt_param_filter)(const struct ggml_tensor * tensor, void * userdata);
_Static_assert(_Generic((ref_llama_opt_param_filter *) 0, llama_opt_param_filter *: 1, default: 0), "typedef llama_opt_param_filter");

_Static_assert((GGML_OPT_LOSS_TYPE_MEAN) == (0), "GGML_OPT_LOSS_TYPE_MEAN");
_Static_assert((GGML_OPT_LOSS_TYPE_SUM) == (1), "GGML_OPT_LOSS_TYPE_SUM");
_Static_assert((GGML_OPT_LOSS_TYPE_CROSS_ENTROPY) == (2), "GGML_OPT_LOSS_TYPE_CROSS_ENTROPY");
_Static_assert((GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR) == (3), "GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR");
_Static_assert((GGML_OPT_BUILD_TYPE_FORWARD) == (10), "GGML_OPT_BUILD_TYPE_FORWARD");
_Static_assert((GGML_OPT_BUILD_TYPE_GRAD) == (20), "GGML_OPT_BUILD_TYPE_GRAD");
_Static_assert((GGML_OPT_BUILD_TYPE_OPT) == (30), "GGML_OPT_BUILD_TYPE_OPT");
_Static_assert((GGML_OPT_OPTIMIZER_TYPE_ADAMW) == (0), "GGML_OPT_OPTIMIZER_TYPE_ADAMW");
_Static_assert((GGML_OPT_OPTIMIZER_TYPE_SGD) == (1), "GGML_OPT_OPTIMIZER_TYPE_SGD");
_Static_assert((GGML_OPT_OPTIMIZER_TYPE_COUNT) == (2), "GGML_OPT_OPTIMIZER_TYPE_COUNT");

struct ref_ggml_opt_optimizer_params { struct { float alpha; float beta1; float beta2; float eps; float wd; float gclip; } adamw; struct { float alpha; float wd; } sgd; };
static struct ggml_opt_optimizer_params v_ggml_opt_optimizer_params;
struct ref_ggml_opt_params { ggml_backend_sched_t backend_sched; struct ggml_context * ctx_compute; struct ggml_tensor * inputs; struct ggml_tensor * outputs; enum ggml_opt_loss_type loss_type; enum ggml_opt_build_type build_type; int32_t opt_period; ggml_opt_get_optimizer_params get_opt_pars; void * get_opt_pars_ud; enum ggml_opt_optimizer_type optimizer; };
static struct ggml_opt_params v_ggml_opt_params;
struct ref_llama_opt_params { uint32_t n_ctx_train; llama_opt_param_filter param_filter; void * param_filter_ud; ggml_opt_get_optimizer_params get_opt_pars; void * get_opt_pars_ud; enum ggml_opt_optimizer_type optimizer_type; };
static struct llama_opt_params v_llama_opt_params;

#define API_COMPAT_FIELD(S, F, T)                                                                            \
    _Static_assert(offsetof(struct S, F) == offsetof(struct ref_##S, F), "offset of " #S "." #F);           \
    { T (*p) = &v_##S.F; n += p != NULL; }

static int api_compat_fields_opt(void) {
    int n = 0;
    _Static_assert(sizeof(struct ggml_opt_optimizer_params) == sizeof(struct ref_ggml_opt_optimizer_params), "size of struct ggml_opt_optimizer_params");
    API_COMPAT_FIELD(ggml_opt_optimizer_params, adamw.alpha, float)
    API_COMPAT_FIELD(ggml_opt_optimizer_params, adamw.beta1, float)
    API_COMPAT_FIELD(ggml_opt_optimizer_params, adamw.beta2, float)
    API_COMPAT_FIELD(ggml_opt_optimizer_params, adamw.eps, float)
    API_COMPAT_FIELD(ggml_opt_optimizer_params, adamw.wd, float)
    API_COMPAT_FIELD(ggml_opt_optimizer_params, adamw.gclip, float)
    API_COMPAT_FIELD(ggml_opt_optimizer_params, sgd.alpha, float)
    API_COMPAT_FIELD(ggml_opt_optimizer_params, sgd.wd, float)
    _Static_assert(sizeof(struct ggml_opt_params) == sizeof(struct ref_ggml_opt_params), "size of struct ggml_opt_params");
    API_COMPAT_FIELD(ggml_opt_params, backend_sched, ggml_backend_sched_t)
    API_COMPAT_FIELD(ggml_opt_params, ctx_compute, struct ggml_context *)
    API_COMPAT_FIELD(ggml_opt_params, inputs, struct ggml_tensor *)
    API_COMPAT_FIELD(ggml_opt_params, outputs, struct ggml_tensor *)
    API_COMPAT_FIELD(ggml_opt_params, loss_type, enum ggml_opt_loss_type)
    API_COMPAT_FIELD(ggml_opt_params, build_type, enum ggml_opt_build_type)
    API_COMPAT_FIELD(ggml_opt_params, opt_period, int32_t)
    API_COMPAT_FIELD(ggml_opt_params, get_opt_pars, ggml_opt_get_optimizer_params)
    API_COMPAT_FIELD(ggml_opt_params, get_opt_pars_ud, void *)
    API_COMPAT_FIELD(ggml_opt_params, optimizer, enum ggml_opt_optimizer_type)
    _Static_assert(sizeof(struct llama_opt_params) == sizeof(struct ref_llama_opt_params), "size of struct llama_opt_params");
    API_COMPAT_FIELD(llama_opt_params, n_ctx_train, uint32_t)
    API_COMPAT_FIELD(llama_opt_params, param_filter, llama_opt_param_filter)
    API_COMPAT_FIELD(llama_opt_params, param_filter_ud, void *)
    API_COMPAT_FIELD(llama_opt_params, get_opt_pars, ggml_opt_get_optimizer_params)
    API_COMPAT_FIELD(llama_opt_params, get_opt_pars_ud, void *)
    API_COMPAT_FIELD(llama_opt_params, optimizer_type, enum ggml_opt_optimizer_type)
    return n;
}

static int api_compat_functions_opt(void) {
    int n = 0;
    { ggml_opt_dataset_t (*f)(enum ggml_type, enum ggml_type, int64_t, int64_t, int64_t, int64_t) = ggml_opt_dataset_init; n += f != NULL; }
    { void (*f)(ggml_opt_dataset_t) = ggml_opt_dataset_free; n += f != NULL; }
    { int64_t (*f)(ggml_opt_dataset_t) = ggml_opt_dataset_ndata; n += f != NULL; }
    { struct ggml_tensor * (*f)(ggml_opt_dataset_t) = ggml_opt_dataset_data; n += f != NULL; }
    { struct ggml_tensor * (*f)(ggml_opt_dataset_t) = ggml_opt_dataset_labels; n += f != NULL; }
    { void (*f)(ggml_opt_context_t, ggml_opt_dataset_t, int64_t) = ggml_opt_dataset_shuffle; n += f != NULL; }
    { void (*f)(ggml_opt_dataset_t, struct ggml_tensor *, struct ggml_tensor *, int64_t) = ggml_opt_dataset_get_batch; n += f != NULL; }
    { void (*f)(ggml_opt_dataset_t, void *, size_t, void *, int64_t) = ggml_opt_dataset_get_batch_host; n += f != NULL; }
    { struct ggml_opt_optimizer_params (*f)(void *) = ggml_opt_get_default_optimizer_params; n += f != NULL; }
    { struct ggml_opt_optimizer_params (*f)(void *) = ggml_opt_get_constant_optimizer_params; n += f != NULL; }
    { struct ggml_opt_params (*f)(ggml_backend_sched_t, enum ggml_opt_loss_type) = ggml_opt_default_params; n += f != NULL; }
    { ggml_opt_context_t (*f)(struct ggml_opt_params) = ggml_opt_init; n += f != NULL; }
    { void (*f)(ggml_opt_context_t) = ggml_opt_free; n += f != NULL; }
    { void (*f)(ggml_opt_context_t, bool) = ggml_opt_reset; n += f != NULL; }
    { bool (*f)(ggml_opt_context_t) = ggml_opt_static_graphs; n += f != NULL; }
    { struct ggml_tensor * (*f)(ggml_opt_context_t) = ggml_opt_inputs; n += f != NULL; }
    { struct ggml_tensor * (*f)(ggml_opt_context_t) = ggml_opt_outputs; n += f != NULL; }
    { struct ggml_tensor * (*f)(ggml_opt_context_t) = ggml_opt_labels; n += f != NULL; }
    { struct ggml_tensor * (*f)(ggml_opt_context_t) = ggml_opt_loss; n += f != NULL; }
    { struct ggml_tensor * (*f)(ggml_opt_context_t) = ggml_opt_pred; n += f != NULL; }
    { struct ggml_tensor * (*f)(ggml_opt_context_t) = ggml_opt_ncorrect; n += f != NULL; }
    { struct ggml_tensor * (*f)(ggml_opt_context_t, struct ggml_tensor *) = ggml_opt_grad_acc; n += f != NULL; }
    { enum ggml_opt_optimizer_type (*f)(ggml_opt_context_t) = ggml_opt_context_optimizer_type; n += f != NULL; }
    { const char * (*f)(enum ggml_opt_optimizer_type) = ggml_opt_optimizer_name; n += f != NULL; }
    { ggml_opt_result_t (*f)(void) = ggml_opt_result_init; n += f != NULL; }
    { void (*f)(ggml_opt_result_t) = ggml_opt_result_free; n += f != NULL; }
    { void (*f)(ggml_opt_result_t) = ggml_opt_result_reset; n += f != NULL; }
    { void (*f)(ggml_opt_result_t, int64_t *) = ggml_opt_result_ndata; n += f != NULL; }
    { void (*f)(ggml_opt_result_t, double *, double *) = ggml_opt_result_loss; n += f != NULL; }
    { void (*f)(ggml_opt_result_t, int32_t *) = ggml_opt_result_pred; n += f != NULL; }
    { void (*f)(ggml_opt_result_t, double *, double *) = ggml_opt_result_accuracy; n += f != NULL; }
    { void (*f)(ggml_opt_context_t, struct ggml_context *, struct ggml_cgraph *, struct ggml_tensor *, struct ggml_tensor *) = ggml_opt_prepare_alloc; n += f != NULL; }
    { void (*f)(ggml_opt_context_t, bool) = ggml_opt_alloc; n += f != NULL; }
    { void (*f)(ggml_opt_context_t, ggml_opt_result_t) = ggml_opt_eval; n += f != NULL; }
    { void (*f)(ggml_opt_context_t, ggml_opt_dataset_t, ggml_opt_result_t, ggml_opt_result_t, int64_t, ggml_opt_epoch_callback, ggml_opt_epoch_callback) = ggml_opt_epoch; n += f != NULL; }
    { void (*f)(bool, ggml_opt_context_t, ggml_opt_dataset_t, ggml_opt_result_t, int64_t, int64_t, int64_t) = ggml_opt_epoch_callback_progress_bar; n += f != NULL; }
    { void (*f)(ggml_backend_sched_t, struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, ggml_opt_dataset_t, enum ggml_opt_loss_type, enum ggml_opt_optimizer_type, ggml_opt_get_optimizer_params, int64_t, int64_t, float, bool) = ggml_opt_fit; n += f != NULL; }
    { bool (*f)(const struct ggml_tensor *, void *) = llama_opt_param_filter_all; n += f != NULL; }
    { void (*f)(struct llama_context *, struct llama_model *, struct llama_opt_params) = llama_opt_init; n += f != NULL; }
    { void (*f)(struct llama_context *, ggml_opt_dataset_t, ggml_opt_result_t, ggml_opt_result_t, int64_t, ggml_opt_epoch_callback, ggml_opt_epoch_callback) = llama_opt_epoch; n += f != NULL; }
    return n;
}

// ---- run-time checks of what the signatures promise

// ggml_get_type_traits_cpu: the activation formats llama.cpp pairs with each weight type, and dot products
// against a double-precision sum computed here
static void test_type_traits_cpu(void) {
    static const struct { enum ggml_type type, vec_dot_type; } pairs[] = {
        { GGML_TYPE_F32, GGML_TYPE_F32 },   { GGML_TYPE_F16, GGML_TYPE_F16 },   { GGML_TYPE_BF16, GGML_TYPE_BF16 },
        { GGML_TYPE_Q4_0, GGML_TYPE_Q8_0 }, { GGML_TYPE_Q4_1, GGML_TYPE_Q8_1 }, { GGML_TYPE_Q8_0, GGML_TYPE_Q8_0 },
        { GGML_TYPE_Q4_K, GGML_TYPE_Q8_K }, { GGML_TYPE_Q6_K, GGML_TYPE_Q8_K },
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        const struct ggml_type_traits_cpu * t = ggml_get_type_traits_cpu(pairs[i].type);
        TH_CHECK(t != NULL && t->vec_dot != NULL && t->nrows == 1, "%s has a vec_dot", ggml_type_name(pairs[i].type));
        TH_CHECK(t != NULL && t->vec_dot_type == pairs[i].vec_dot_type, "%s vec_dot_type %s",
                 ggml_type_name(pairs[i].type), t ? ggml_type_name(t->vec_dot_type) : "-");
    }
    TH_CHECK(ggml_get_type_traits_cpu(GGML_TYPE_I32)->vec_dot == NULL, "no vec_dot for I32");

    enum { N = 256 };
    static float x[2][N], y[2][N];
    uint64_t seed = 0x1234567;
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < N; i++) {
            x[r][i] = (float) ((int) (th_xorshift64(&seed) % 2001) - 1000) / 1000.0f;
            y[r][i] = (float) ((int) (th_xorshift64(&seed) % 2001) - 1000) / 1000.0f;
        }
    }
    double ref[2][2];
    for (int j = 0; j < 2; j++) {
        for (int i = 0; i < 2; i++) {
            ref[j][i] = 0.0;
            for (int k = 0; k < N; k++) {
                ref[j][i] += (double) x[i][k] * y[j][k];
            }
        }
    }
    // F32, one row pair and a 2x2 block (s[j*bs + i] = x_i . y_j)
    const struct ggml_type_traits_cpu * f32 = ggml_get_type_traits_cpu(GGML_TYPE_F32);
    float s[4] = { 0 };
    f32->vec_dot(N, s, 0, x[0], 0, y[0], 0, 1);
    TH_CHECK(fabs(s[0] - ref[0][0]) < 1e-3, "f32 dot %f vs %f", s[0], ref[0][0]);
    f32->vec_dot(N, s, 2, x[0], sizeof(x[0]), y[0], sizeof(y[0]), 2);
    for (int j = 0; j < 2; j++) {
        for (int i = 0; i < 2; i++) {
            TH_CHECK(fabs(s[j * 2 + i] - ref[j][i]) < 1e-3, "f32 block [%d][%d] %f vs %f", j, i, s[j * 2 + i], ref[j][i]);
        }
    }
    // Q8_0 weights (ggml_quantize_chunk) against activations made by from_float of vec_dot_type
    const struct ggml_type_traits_cpu * q8 = ggml_get_type_traits_cpu(GGML_TYPE_Q8_0);
    const struct ggml_type_traits_cpu * act = ggml_get_type_traits_cpu(q8->vec_dot_type);
    static uint8_t wq[2 * N * 2], aq[2 * N * 2];
    TH_CHECK(ggml_row_size(GGML_TYPE_Q8_0, N) <= sizeof(wq) / 2, "buffer size");
    ggml_quantize_chunk(GGML_TYPE_Q8_0, x[0], wq, 0, 1, N, NULL);
    TH_CHECK(act->from_float != NULL, "from_float of %s", ggml_type_name(q8->vec_dot_type));
    if (act->from_float) {
        act->from_float(y[0], aq, N);
        float sq = 0.0f;
        q8->vec_dot(N, &sq, 0, wq, 0, aq, 0, 1);
        TH_CHECK(fabs(sq - ref[0][0]) < 0.05 * (1.0 + fabs(ref[0][0])), "q8_0 dot %f vs %f", sq, ref[0][0]);
    }
}

// llama_model_load_from_file_ptr gives the model that loading by path gives, whatever the FILE's position
static void test_load_from_file_ptr(void) {
    struct llama_model_params mp = llama_model_default_params();
    TH_CHECK(llama_model_load_from_file_ptr(NULL, mp) == NULL, "NULL FILE is refused");

    FILE * junk = tmpfile();
    if (junk) {
        fputs("this is not a gguf file", junk);
        fflush(junk);
        TH_CHECK(llama_model_load_from_file_ptr(junk, mp) == NULL, "a non-GGUF file is refused");
        fclose(junk);
    }

    const char * path = th_data_path("models/stories260K-q8_0.gguf");
    if (!th_require_file(path)) {
        return;
    }
    FILE * f = fopen(path, "rb");
    TH_CHECK(f != NULL, "open %s", path);
    if (!f) {
        return;
    }
    fseek(f, 100, SEEK_SET);
    struct llama_model * a = llama_model_load_from_file_ptr(f, mp);
    struct llama_model * b = llama_model_load_from_file(path, mp);
    TH_CHECK(a != NULL && b != NULL, "both loads succeed");
    if (a && b) {
        char da[128], db[128];
        llama_model_desc(a, da, sizeof(da));
        llama_model_desc(b, db, sizeof(db));
        TH_CHECK(strcmp(da, db) == 0, "desc '%s' vs '%s'", da, db);
        TH_CHECK(llama_model_n_params(a) == llama_model_n_params(b), "n_params");
        TH_CHECK(llama_vocab_n_tokens(llama_model_get_vocab(a)) == llama_vocab_n_tokens(llama_model_get_vocab(b)),
                 "n_vocab");
    }
    llama_model_free(a);
    llama_model_free(b);
    TH_CHECK(ftell(f) == 100, "the FILE's position is left alone");
    fclose(f);
}

int main(void) {
    llama_log_set(NULL, NULL);
    const int n_fn = api_compat_functions_llama() + api_compat_functions_ggml() + api_compat_functions_cpu() +
                     api_compat_functions_backend() + api_compat_functions_alloc() + api_compat_functions_gguf() +
                     api_compat_functions_opt();
    const int n_fields = api_compat_fields_llama() + api_compat_fields_ggml() + api_compat_fields_cpu() +
                         api_compat_fields_backend() + api_compat_fields_alloc() + api_compat_fields_gguf() +
                         api_compat_fields_opt();
    TH_CHECK(n_fn > 500 && n_fields > 100, "%d functions, %d fields checked", n_fn, n_fields);
    TH_CHECK(api_compat_functions_opt() == 40 && api_compat_fields_opt() == 24, "ggml-opt and llama_opt_* checked");
    TH_CHECK(strcmp(GGUF_MAGIC, "GGUF") == 0, "GGUF_MAGIC");
    TH_CHECK(strcmp(GGUF_KEY_GENERAL_ALIGNMENT, "general.alignment") == 0, "GGUF_KEY_GENERAL_ALIGNMENT");

    // positional initialisation in llama.cpp's field order
    struct llama_token_data td = { 7, 1.5f, 0.25f };
    struct llama_logit_bias lb = { 3, -1.0f };
    struct llama_chat_message cm = { "user", "hi" };
    struct gguf_init_params gp = { true, NULL };
    struct ggml_init_params ip = { 1024, NULL, true };
    TH_CHECK(td.id == 7 && td.logit == 1.5f && td.p == 0.25f, "llama_token_data order");
    TH_CHECK(lb.token == 3 && lb.bias == -1.0f, "llama_logit_bias order");
    TH_CHECK(strcmp(cm.role, "user") == 0 && strcmp(cm.content, "hi") == 0, "llama_chat_message order");
    TH_CHECK(gp.no_alloc && gp.ctx == NULL, "gguf_init_params order");
    TH_CHECK(ip.mem_size == 1024 && ip.mem_buffer == NULL && ip.no_alloc, "ggml_init_params order");

    test_type_traits_cpu();
    test_load_from_file_ptr();
    return th_finish();
}
