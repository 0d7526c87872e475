// llama-gguf-split: llama.cpp's tool to split a GGUF model into shards and to merge them back.
//
//   llama-gguf-split [options] GGUF_IN GGUF_OUT
//
// --split (default): GGUF_OUT is the prefix of the shards "<GGUF_OUT>-00001-of-0000n.gguf" ...
// --merge:           GGUF_IN is the first shard, GGUF_OUT the merged file.
// Options come before the two file names, as in llama.cpp. Exit status 0 on success, 1 on a bad command line
// or a failed operation (nothing is left under an output name then).
#include "gguf-split.h"

#include "common.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void split_print_usage(const char * executable) {
    printf("\n");
    printf("usage: %s [options] GGUF_IN GGUF_OUT\n", executable);
    printf("\n");
    printf("Apply a GGUF operation on IN to OUT.");
    printf("\n");
    printf("options:\n");
    printf("  -h, --help              show this help message and exit\n");
    printf("  --version               show version and build info\n");
    printf("  --split                 split GGUF to multiple GGUF (enabled by default)\n");
    printf("  --merge                 merge multiple GGUF to a single GGUF\n");
    printf("  --split-max-tensors     max tensors in each split (default: %d)\n", 128);
    printf("  --split-max-size N(M|G) max size per split\n");
    printf("  --no-tensor-first-split do not add tensors to the first split (disabled by default)\n");
    printf("  --dry-run               only print out a split plan and exit, without writing any new files\n");
    printf("  --delete-splits         delete the split files after a successful merge\n");
    printf("\n");
}

// "128M" or "4G" (decimal units, as llama.cpp) to bytes; 0 with the reason printed if malformed
static size_t split_str_to_n_bytes(const char * str) {
    const size_t len = strlen(str);
    const char unit = len > 0 ? str[len - 1] : '\0';
    uint64_t mult;
    if (unit == 'M') {
        mult = 1000ull * 1000;
    } else if (unit == 'G') {
        mult = 1000ull * 1000 * 1000;
    } else {
        fprintf(stderr, "error: supported units are M (megabytes) or G (gigabytes), but got: %c\n", unit ? unit : ' ');
        return 0;
    }
    char * end = NULL;
    errno = 0;
    const long long n = strtoll(str, &end, 10);
    if (end == str || end != str + len - 1 || errno == ERANGE || n <= 0) {
        fprintf(stderr, "error: size must be a positive value\n");
        return 0;
    }
    if ((uint64_t) n > SIZE_MAX / mult) {
        fprintf(stderr, "error: size %s is too large\n", str);
        return 0;
    }
    return (size_t) ((uint64_t) n * mult);
}

// a positive int, or 0 with the reason printed
static int split_str_to_count(const char * str) {
    char * end = NULL;
    errno = 0;
    const long n = strtol(str, &end, 10);
    if (end == str || *end != '\0' || errno == ERANGE || n <= 0 || n > INT32_MAX) {
        fprintf(stderr, "error: --split-max-tensors must be a positive integer, but got: %s\n", str);
        return 0;
    }
    return (int) n;
}

// false with the reason printed on a bad command line; *exit_now for -h / --version
static bool split_params_parse(int argc, char ** argv, struct split_params * params, bool * exit_now) {
    int arg_idx = 1;
    for (; arg_idx < argc && argv[arg_idx][0] == '-'; arg_idx++) {
        // llama.cpp accepts '_' for '-' in long options
        char arg[64];
        snprintf(arg, sizeof(arg), "%s", argv[arg_idx]);
        if (strncmp(arg, "--", 2) == 0) {
            for (char * p = arg; *p; p++) {
                *p = *p == '_' ? '-' : *p;
            }
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            split_print_usage(argv[0]);
            *exit_now = true;
            return true;
        }
        if (strcmp(arg, "--version") == 0) {
            fprintf(stderr, "version: %d (%s)\n", LLAMA_BUILD_NUMBER, LLAMA_COMMIT);
            fprintf(stderr, "built with %s for %s\n", LLAMA_COMPILER, LLAMA_BUILD_TARGET);
            *exit_now = true;
            return true;
        }
        if (strcmp(arg, "--dry-run") == 0) {
            params->dry_run = true;
        } else if (strcmp(arg, "--no-tensor-first-split") == 0) {
            params->no_tensor_first_split = true;
        } else if (strcmp(arg, "--delete-splits") == 0) {
            params->delete_splits = true;
        } else if (strcmp(arg, "--merge") == 0 || strcmp(arg, "--split") == 0) {
            const enum split_operation op = arg[2] == 'm' ? OP_MERGE : OP_SPLIT;
            if (params->operation != OP_NONE && params->operation != op) {
                fprintf(stderr, "error: either --split or --merge can be specified, but not both\n");
                return false;
            }
            params->operation = op;
        } else if (strcmp(arg, "--split-max-tensors") == 0 || strcmp(arg, "--split-max-size") == 0) {
            const enum split_mode mode = strcmp(arg, "--split-max-size") == 0 ? MODE_SIZE : MODE_TENSOR;
            if (++arg_idx >= argc) {
                fprintf(stderr, "error: invalid parameter for argument: %s\n", arg);
                return false;
            }
            if (params->mode != MODE_NONE && params->mode != mode) {
                fprintf(stderr, "error: either --split-max-tensors or --split-max-size can be specified, but not both\n");
                return false;
            }
            params->mode = mode;
            if (mode == MODE_SIZE) {
                params->n_bytes_split = split_str_to_n_bytes(argv[arg_idx]);
                if (params->n_bytes_split == 0) {
                    return false;
                }
            } else {
                params->n_split_tensors = split_str_to_count(argv[arg_idx]);
                if (params->n_split_tensors == 0) {
                    return false;
                }
            }
        } else {
            fprintf(stderr, "error: unknown argument: %s\n", argv[arg_idx]);
            return false;
        }
    }
    if (params->operation == OP_NONE) {
        params->operation = OP_SPLIT;
    }
    if (params->mode == MODE_NONE) {
        params->mode = MODE_TENSOR;
    }
    if (argc - arg_idx != 2) {
        fprintf(stderr, "error: bad arguments\n");
        return false;
    }
    params->input  = argv[arg_idx];
    params->output = argv[arg_idx + 1];
    return true;
}

int main(int argc, char ** argv) {
    struct split_params params = {
        .operation       = OP_NONE,
        .mode            = MODE_NONE,
        .n_split_tensors = 128,
    };
    bool exit_now = false;
    if (!split_params_parse(argc, argv, &params, &exit_now)) {
        split_print_usage(argv[0]);
        return 1;
    }
    if (exit_now) {
        return 0;
    }
    return params.operation == OP_MERGE ? gguf_merge(&params) : gguf_split(&params);
}
