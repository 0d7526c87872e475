// Internal vocabulary API: the model loader builds a llama_vocab from the tokenizer.ggml.* keys of a GGUF
// file; everything else uses the public llama_vocab_* / llama_tokenize / llama_detokenize functions.
#pragma once

#include "llama.h"
#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// pre-tokenizer types (llama.cpp keeps these internal too; values follow llama.cpp's enum)
enum llama_vocab_pre_type {
    LLAMA_VOCAB_PRE_TYPE_DEFAULT        = 0,
    LLAMA_VOCAB_PRE_TYPE_LLAMA3         = 1,
    LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_LLM   = 2,
    LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_CODER = 3,
    LLAMA_VOCAB_PRE_TYPE_FALCON         = 4,
    LLAMA_VOCAB_PRE_TYPE_MPT            = 5,
    LLAMA_VOCAB_PRE_TYPE_STARCODER      = 6,
    LLAMA_VOCAB_PRE_TYPE_GPT2           = 7,
    LLAMA_VOCAB_PRE_TYPE_REFACT         = 8,
    LLAMA_VOCAB_PRE_TYPE_COMMAND_R      = 9,
    LLAMA_VOCAB_PRE_TYPE_STABLELM2      = 10,
    LLAMA_VOCAB_PRE_TYPE_QWEN2          = 11,
    LLAMA_VOCAB_PRE_TYPE_OLMO           = 12,
    LLAMA_VOCAB_PRE_TYPE_DBRX           = 13,
    LLAMA_VOCAB_PRE_TYPE_SMAUG          = 14,
    LLAMA_VOCAB_PRE_TYPE_PORO           = 15,
    LLAMA_VOCAB_PRE_TYPE_CHATGLM3       = 16,
    LLAMA_VOCAB_PRE_TYPE_CHATGLM4       = 17,
    LLAMA_VOCAB_PRE_TYPE_VIKING         = 18,
    LLAMA_VOCAB_PRE_TYPE_JAIS           = 19,
    LLAMA_VOCAB_PRE_TYPE_TEKKEN         = 20,
    LLAMA_VOCAB_PRE_TYPE_SMOLLM         = 21,
    LLAMA_VOCAB_PRE_TYPE_CODESHELL      = 22,
    LLAMA_VOCAB_PRE_TYPE_BLOOM          = 23,
    LLAMA_VOCAB_PRE_TYPE_GPT3_FINNISH   = 24,
    LLAMA_VOCAB_PRE_TYPE_EXAONE         = 25,
    LLAMA_VOCAB_PRE_TYPE_CHAMELEON      = 26,
    LLAMA_VOCAB_PRE_TYPE_MINERVA        = 27,
    LLAMA_VOCAB_PRE_TYPE_DEEPSEEK3_LLM  = 28,
    LLAMA_VOCAB_PRE_TYPE_GPT4O          = 29,
    LLAMA_VOCAB_PRE_TYPE_SUPERBPE       = 30,
    LLAMA_VOCAB_PRE_TYPE_TRILLION       = 31,
    LLAMA_VOCAB_PRE_TYPE_BAILINGMOE     = 32,
    LLAMA_VOCAB_PRE_TYPE_LLAMA4         = 33,
    LLAMA_VOCAB_PRE_TYPE_PIXTRAL        = 34,
    LLAMA_VOCAB_PRE_TYPE_SEED_CODER     = 35,
    LLAMA_VOCAB_PRE_TYPE_HUNYUAN        = 36,
    LLAMA_VOCAB_PRE_TYPE_KIMI_K2        = 37,
    LLAMA_VOCAB_PRE_TYPE_HUNYUAN_DENSE  = 38,
    LLAMA_VOCAB_PRE_TYPE_GROK_2         = 39,
    LLAMA_VOCAB_PRE_TYPE_GRANITE_DOCLING = 40,
    LLAMA_VOCAB_PRE_TYPE_MINIMAX_M2     = 41,
    LLAMA_VOCAB_PRE_TYPE_AFMOE          = 42,
    LLAMA_VOCAB_PRE_TYPE_SOLAR_OPEN     = 43,
    LLAMA_VOCAB_PRE_TYPE_YOUTU          = 44,
    LLAMA_VOCAB_PRE_TYPE_EXAONE_MOE     = 45,
    LLAMA_VOCAB_PRE_TYPE_QWEN35         = 46,
    LLAMA_VOCAB_PRE_TYPE_TINY_AYA       = 47,
    LLAMA_VOCAB_PRE_TYPE_JOYAI_LLM      = 48,
    LLAMA_VOCAB_PRE_TYPE_JAIS2          = 49,
    LLAMA_VOCAB_PRE_TYPE_GEMMA4         = 50,
};

// Builds the vocabulary from the tokenizer.ggml.* keys (and general.name / general.architecture, which select a
// few per-model token attributes). Returns NULL after logging one line naming the key and what is wrong when
// the tokenizer section is invalid (missing tokens, wrong key types, short scores / token_type arrays,
// duplicate tokens, unknown tokenizer model or pre-tokenizer, missing merges, add_*_token set without the id).
// The result does not reference gguf: the context may be freed afterwards.
struct llama_vocab * llama_vocab_load(const struct gguf_context * gguf);

void llama_vocab_free(struct llama_vocab * vocab);

// one log block describing the vocabulary (type, sizes, special tokens), as llama.cpp's print_info
void llama_vocab_print_info(const struct llama_vocab * vocab);

enum llama_vocab_pre_type llama_vocab_get_pre_type(const struct llama_vocab * vocab);
uint32_t    llama_vocab_n_token_types(const struct llama_vocab * vocab); // tokenizer.ggml.token_type_count (BERT)
llama_token llama_vocab_unk(const struct llama_vocab * vocab);
llama_token llama_vocab_eom(const struct llama_vocab * vocab);
int32_t     llama_vocab_max_token_len(const struct llama_vocab * vocab);

// the cached piece of a token (rendered as with special = true); NULL for an invalid token
const char * llama_vocab_token_piece(const struct llama_vocab * vocab, llama_token token, size_t * len);

// the id of a token text, LLAMA_TOKEN_NULL if none
llama_token llama_vocab_text_to_token(const struct llama_vocab * vocab, const char * text, size_t len);

#ifdef __cplusplus
}
#endif
