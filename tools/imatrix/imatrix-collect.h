// The importance-matrix collector of llama-imatrix: per weight matrix, the sum over every input row it
// multiplied of the squares of that row's elements (llama.cpp's "in_sum2"), and how many rows were seen
// ("counts"). Dense weights (MUL_MAT) keep one count; expert weights (MUL_MAT_ID) keep one sum row and one
// count per expert. Filled by the scheduler's eval callback, merged from earlier files, written as GGUF.
#pragma once

#include "ggml.h"

#include <stdbool.h>
#include <stdint.h>

struct imatrix_entry {
    char *    name;     // weight name, e.g. "blk.0.attn_q.weight" (owned)
    int64_t   n_vals;   // length of sums: elements per input row times matrices
    int64_t   n_counts; // 1 (dense) or the number of experts; sums holds n_counts rows of n_vals / n_counts
    double *  sums;     // [n_vals] sums of squares (double: many rows are added)
    int64_t * counts;   // [n_counts] rows seen
};

struct imatrix_collector {
    struct imatrix_entry * entries;
    int32_t n_entries;
    int32_t cap_entries;

    char ** datasets;    // dataset names of the files merged in, in order (owned)
    int32_t n_datasets;

    int32_t chunk_size;  // tokens per chunk (-c)
    int32_t last_chunk;  // chunks seen so far (max count / chunk_size), llama.cpp's m_last_chunk
    bool    process_output; // also collect output.weight

    bool    failed;      // set by the callback on an inconsistency; err says what
    char    err[256];

    void *  scratch;     // host copies of src1 / ids when they do not live in host memory
    size_t  scratch_size;
    void *  scratch_ids;
    size_t  scratch_ids_size;
};

void imatrix_collector_init(struct imatrix_collector * c, int32_t chunk_size, bool process_output);
void imatrix_collector_free(struct imatrix_collector * c);

// ggml_backend_sched_eval_callback: user_data is the collector. Asked (ask == true) about every node, it
// wants the MUL_MAT nodes whose src0 is a "blk.*" weight (or output.weight with process_output) and whose
// src1 is F32 with at least 16 rows, and every MUL_MAT_ID node; then (ask == false, the node computed) it
// adds src1's squared rows. Returns false (stopping the graph) after an inconsistency, with c->failed set.
bool imatrix_collect(struct ggml_tensor * t, bool ask, void * user_data);

// the entry named name, or NULL
struct imatrix_entry * imatrix_find(struct imatrix_collector * c, const char * name);
// a new zeroed entry (name copied), or NULL when out of memory
struct imatrix_entry * imatrix_add(struct imatrix_collector * c, const char * name, int64_t n_vals, int64_t n_counts);

// recomputes last_chunk from the largest count (after merging files or collecting)
void imatrix_update_last_chunk(struct imatrix_collector * c);

// merges an imatrix GGUF file (sums and counts added, datasets appended); false with c->err set when the
// file cannot be read, is not an imatrix or does not match what is already there (nothing merged then)
bool imatrix_load(struct imatrix_collector * c, const char * fname);

// writes the GGUF file: general.type "imatrix", imatrix.datasets (the merged datasets, then dataset if not
// NULL), imatrix.chunk_count, imatrix.chunk_size, and per entry in name order <name>.in_sum2 F32
// [n_vals / n_counts, n_counts] and <name>.counts F32 [1, n_counts]. Written to a temp name next
// to fname and renamed, so fname is either the old file or the whole new one. false with c->err set.
bool imatrix_save(struct imatrix_collector * c, const char * fname, const char * dataset);
