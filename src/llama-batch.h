// Batches: validating a llama_batch, filling its defaults (positions, sequence ids, output flags) and splitting
// it into micro-batches (ubatches) that the context runs one graph each.
#pragma once

#include "llama.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LLAMA_MAX_SEQ 256

#define LLAMA_SEQ_WORDS (LLAMA_MAX_SEQ / 64)

// the set of sequences a token belongs to (bit s = sequence s)
struct llama_seq_set {
    uint64_t w[LLAMA_SEQ_WORDS];
};

// One micro-batch. Arrays are owned by the llama_batch_allocr that produced it and stay valid until the
// allocator is re-initialised or freed.
struct llama_ubatch {
    bool equal_seqs;          // every sequence set contributes n_seq_tokens tokens, grouped per set

    uint32_t n_tokens;        // total tokens (0: no more ubatches, or an error)
    uint32_t n_seq_tokens;    // tokens per sequence set (equal_seqs), else n_tokens
    uint32_t n_seqs;          // sequence sets (equal_seqs), else 1
    uint32_t n_seqs_unq;      // distinct sequence ids
    uint32_t n_pos;           // positions per token (1; M-RoPE models use more)

    llama_token  *  token;    // [n_tokens]   NULL when the batch carries embeddings
    float        *  embd;     // [n_embd, n_tokens] NULL when the batch carries tokens
    llama_pos    *  pos;      // [n_tokens * n_pos]
    int32_t      *  n_seq_id; // [n_tokens]
    llama_seq_id ** seq_id;   // [n_tokens] each points at n_seq_id[i] ids
    llama_seq_id *  seq_id_unq; // [n_seqs_unq] ascending
    int32_t      *  seq_idx;  // [LLAMA_MAX_SEQ] position of a sequence id in seq_id_unq, -1 if absent
    int8_t       *  output;   // [n_tokens]
    int32_t      *  idx;      // [n_tokens] index of each token in the input batch
};

struct llama_batch_allocr {
    struct llama_batch batch;  // the input, with generated arrays in place of the NULL ones

    uint32_t n_embd;
    uint32_t n_seq_max;
    uint32_t n_outputs;        // tokens flagged for output

    // arrays generated for fields the caller left NULL (owned)
    llama_pos    *  gen_pos;
    int32_t      *  gen_n_seq_id;
    llama_seq_id ** gen_seq_id;
    llama_seq_id    gen_seq_id_0; // the single id that NULL seq_id means
    int8_t       *  gen_logits;

    struct llama_seq_set * seq_set; // [n_tokens]
    llama_pos seq_pos_min[LLAMA_MAX_SEQ]; // -1: sequence absent from the batch
    llama_pos seq_pos_max[LLAMA_MAX_SEQ];
    bool      has_cpl;         // some token belongs to more than one sequence

    // split state
    bool *    used;            // [n_tokens]
    uint32_t  n_used;
    int32_t * out_ids;         // batch indices of the output tokens, in the order the ubatches emit them
    uint32_t  n_out_ids;

    // storage of the ubatches produced since the last init
    void **   ub_mem;
    size_t    n_ub_mem;
    size_t    cap_ub_mem;
};

// a zeroed allocator (also what llama_batch_allocr_free leaves behind)
void llama_batch_allocr_init_empty(struct llama_batch_allocr * ba);

// Validates batch and fills in its defaults:
//  - token ids must be in [0, n_vocab) (when n_vocab > 0); one of token / embd must be set
//  - n_seq_id[i] in [1, n_seq_max], sequence ids in [0, n_seq_max)
//  - pos == NULL: each sequence continues after mem_pos_max[s] (-1 = empty; mem_pos_max may be NULL = all empty)
//  - logits == NULL: only the last token is output, or every token with output_all (embeddings);
//    output_all with some tokens unflagged flags them all (with a warning)
//  - with mem_pos_max, a sequence must start after the last position the memory holds for it
//  - the positions of each sequence in the batch must have no holes
// Returns false (and logs one line naming the token / sequence and the values) on invalid input.
// The caller's arrays are referenced, not copied: they must outlive the splits.
bool llama_batch_allocr_init(
        struct llama_batch_allocr * ba,
        struct llama_batch batch,
        int32_t n_vocab,
        uint32_t n_embd,
        uint32_t n_seq_max,
        const llama_pos * mem_pos_max,
        bool output_all);

void llama_batch_allocr_free(struct llama_batch_allocr * ba);

// forget previous splits (all tokens unused again, out_ids cleared, ubatch storage released)
void llama_batch_allocr_split_reset(struct llama_batch_allocr * ba);

// The next n_ubatch unused tokens in batch order.
struct llama_ubatch llama_batch_allocr_split_simple(struct llama_batch_allocr * ba, uint32_t n_ubatch);

// Equal-length pieces of non-overlapping sequence sets: up to n_ubatch sets (first-come order), each
// contributing the same number k of its next unused tokens, k as large as the shortest set and n_ubatch allow.
// With sequential, the chosen sets must have consecutive first sequence ids (fails with coupled sequences).
struct llama_ubatch llama_batch_allocr_split_equal(struct llama_batch_allocr * ba, uint32_t n_ubatch, bool sequential);

// Tokens of one sequence set: starting at the first unused token, takes following tokens whose sequence set is
// contained in the current one (narrowing to it), up to n_ubatch.
struct llama_ubatch llama_batch_allocr_split_seq(struct llama_batch_allocr * ba, uint32_t n_ubatch);

// true when every token has been put in some ubatch
bool llama_batch_allocr_done(const struct llama_batch_allocr * ba);

#ifdef __cplusplus
}
#endif
