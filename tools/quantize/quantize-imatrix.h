// The importance-matrix files of llama.cpp's llama-imatrix, read for llama-quantize --imatrix.
//
// Two formats (the one to use is told by the first four bytes, "GGUF" or not):
//   GGUF (current): keys imatrix.datasets (string array), imatrix.chunk_count and imatrix.chunk_size (u32);
//     per weight `<name>.in_sum2` (F32, [n_per_row, n_mat]) and `<name>.counts` (F32, [1, n_mat]). The
//     importance of matrix j is in_sum2[j] / counts[j]; a matrix that never saw input (count 0) gets 1.0.
//   legacy .dat: int32 n_entries, then per entry int32 name length, the name, int32 ncall, int32 nval,
//     float values[nval] (the per-call averages times ncall: divided by ncall here when ncall > 0);
//     optionally int32 last_call (the chunk count), int32 length and the dataset file name.
// Either way the result is one float vector per weight, ready for llama_model_quantize_params.imatrix.
#pragma once

#include "llama.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct quant_imatrix_entry {
    char  * name;
    float * data;
    size_t  size;  // n_per_row * n_mat
};

struct quant_imatrix {
    struct quant_imatrix_entry * entries;  // sorted by name, names unique
    size_t n;
    char ** datasets;
    size_t  n_datasets;
    int     chunk_count;  // llama.cpp's m_last_call: imatrix.chunk_count, or the legacy last_call (0 if absent)
    bool    legacy;
    // llama_model_quantize_params.imatrix: the entries again, terminated by name == NULL (quant_imatrix_params)
    struct llama_model_imatrix_data * params;
};

// Reads `fname` (either format) into *out. On failure returns false, leaves *out empty and writes one line
// (no newline) saying what is wrong into err.
bool quant_imatrix_load(const char * fname, struct quant_imatrix * out, char * err, size_t err_size);

// The same for a legacy .dat already in memory (fname only names it in messages).
bool quant_imatrix_parse_legacy(const uint8_t * buf, size_t size, const char * fname, struct quant_imatrix * out,
                                char * err, size_t err_size);

// llama.cpp's --include-weights / --exclude-weights: an entry is matched by a pattern when the pattern is a
// substring of its name. Exclusion drops the matched entries; inclusion keeps only them.
void quant_imatrix_exclude(struct quant_imatrix * im, const char * const * patterns, size_t n_patterns);
void quant_imatrix_include(struct quant_imatrix * im, const char * const * patterns, size_t n_patterns);

// the NULL-terminated array for llama_model_quantize_params.imatrix (NULL if there are no entries or no
// memory); valid until quant_imatrix_free or the next filter call
const struct llama_model_imatrix_data * quant_imatrix_params(struct quant_imatrix * im);

void quant_imatrix_free(struct quant_imatrix * im);
