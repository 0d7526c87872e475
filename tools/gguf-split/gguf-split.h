// llama-gguf-split: shared declarations of the command line front end (gguf-split.c), the two operations
// (gguf-split-split.c, gguf-split-merge.c) and the streaming output helpers (gguf-split-io.c).
#pragma once

#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

// the split keys exactly as llama.cpp writes them (LLM_KV_SPLIT_*): u16, u16, i32
#define LLM_KV_SPLIT_NO            "split.no"
#define LLM_KV_SPLIT_COUNT         "split.count"
#define LLM_KV_SPLIT_TENSORS_COUNT "split.tensors.count"

enum split_operation {
    OP_NONE,
    OP_SPLIT,
    OP_MERGE,
};

enum split_mode {
    MODE_NONE,
    MODE_TENSOR,
    MODE_SIZE,
};

struct split_params {
    enum split_operation operation;
    enum split_mode      mode;
    size_t               n_bytes_split;   // --split-max-size, bytes
    int                  n_split_tensors; // --split-max-tensors
    const char *         input;
    const char *         output;
    bool                 no_tensor_first_split;
    bool                 dry_run;
    bool                 delete_splits;
};

// both return the process exit status (0 ok, 1 failure with the reason already printed)
int gguf_split(const struct split_params * params);
int gguf_merge(const struct split_params * params);

// An output file written under "<path>.tmp" and renamed to <path> only once complete, so that a failure never
// leaves a partial file under the final name.
struct split_out_file {
    char *   path;     // final name
    char *   tmp_path; // "<path>.tmp" while being written, NULL once renamed or discarded
    FILE *   f;
    uint64_t pos;        // bytes written so far
    uint64_t data_start; // where the tensor data begins (the metadata size), set by split_write_meta
    bool     committed;  // renamed to path
};

bool split_out_open   (struct split_out_file * o, const char * path);
bool split_out_write  (struct split_out_file * o, const void * data, size_t n);
bool split_out_zeros  (struct split_out_file * o, size_t n);
// flush and close the temp file (reports a failed flush: a full disk shows up here)
bool split_out_close  (struct split_out_file * o);
// rename the closed temp file to the final name
bool split_out_commit (struct split_out_file * o);
// close (if open) and remove the temp file; safe to call at any point, also after commit
void split_out_discard(struct split_out_file * o);

// writes ctx_out's metadata (header, KV pairs, tensor infos, padding): the start of the file
bool split_write_meta(struct split_out_file * o, const struct gguf_context * ctx_out);

// Appends the data of tensor i_out of ctx_out, read from tensor i_src of src_ctx in the open file src (named
// src_name for messages), then the padding to ctx_out's alignment. The position must be where ctx_out says
// the tensor goes (tensors are written in order). The copy goes through buf (cap bytes), so memory stays
// bounded whatever the tensor sizes.
bool split_copy_tensor(struct split_out_file * o, const struct gguf_context * ctx_out, int64_t i_out,
                       const struct gguf_context * src_ctx, int64_t i_src, FILE * src, const char * src_name,
                       void * buf, size_t cap);

// size of the streaming buffer
#define SPLIT_COPY_BUF_SIZE ((size_t) 4 << 20)

// malloc'ed llama_split_path(prefix, split_no, split_count); NULL on allocation failure
char * split_path_alloc(const char * prefix, int split_no, int split_count);
