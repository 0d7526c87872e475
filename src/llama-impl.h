// libllama internal helpers shared by the src/ files: logging, metadata text.
//
// libllama logs through ggml's logger, so one llama_log_set (which calls ggml_log_set) routes the messages of
// both libraries to the same callback.
#pragma once

#include "../ggml/src/ggml-impl.h"

#define LLAMA_LOG(...)       ggml_log_internal(GGML_LOG_LEVEL_NONE , __VA_ARGS__)
#define LLAMA_LOG_INFO(...)  ggml_log_internal(GGML_LOG_LEVEL_INFO , __VA_ARGS__)
#define LLAMA_LOG_WARN(...)  ggml_log_internal(GGML_LOG_LEVEL_WARN , __VA_ARGS__)
#define LLAMA_LOG_ERROR(...) ggml_log_internal(GGML_LOG_LEVEL_ERROR, __VA_ARGS__)
#define LLAMA_LOG_DEBUG(...) ggml_log_internal(GGML_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define LLAMA_LOG_CONT(...)  ggml_log_internal(GGML_LOG_LEVEL_CONT , __VA_ARGS__)

struct gguf_context;

// the value of a non-array metadata key as text, formatted like llama.cpp's gguf_kv_to_str (floats with "%f");
// malloc'd, NULL for arrays or on out of memory (llama-model.c; the model's and the adapters' meta getters)
char * llama_gguf_kv_to_str(const struct gguf_context * g, int64_t kid);
