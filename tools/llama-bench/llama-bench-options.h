#pragma once

// llama-bench's device and CPU options: parsers for the values llama.cpp's llama-bench accepts for
// -C/--cpu-mask, -ts/--tensor-split, -dev/--device and -ot/--override-tensor, their text form in the
// output, --list-devices, and --prio. Each parser returns false with a message in err on bad input.

#include "ggml.h"
#include "ggml-backend.h"
#include "llama.h"

#include <stdbool.h>
#include <stddef.h>

#define BENCH_MAX_DEVICES 16 // = llama_max_devices()

// a hex CPU mask ("0x" optional, lowest bit = CPU 0) into mask[GGML_MAX_N_THREADS] (cleared first)
bool bench_parse_cpu_mask(const char * s, bool * mask, char * err, size_t n_err);

// one tensor split "a/b/c" (or ';'-separated): non-negative proportions, zero-filled to BENCH_MAX_DEVICES
bool bench_parse_tensor_split(const char * s, float * out, char * err, size_t n_err);
// llama.cpp's text form: "%.2f" values joined by '/', up to the last non-zero one
void bench_tensor_split_str(const float * ts, char * buf, size_t n);

// a device list as -dev takes it: "auto", "none" or "dev0/dev1/..." (non-CPU devices by name)
struct bench_devices {
    bool               is_auto;                     // true: let the library choose (devices = NULL)
    int                n;                           // devices named; 0 with !is_auto = "none"
    ggml_backend_dev_t devs[BENCH_MAX_DEVICES + 1]; // NULL-terminated
};
bool bench_parse_devices(const char * s, struct bench_devices * out, char * err, size_t n_err);
bool bench_devices_equal(const struct bench_devices * a, const struct bench_devices * b);
void bench_devices_str(const struct bench_devices * d, char * buf, size_t n);

// one -ot group "pattern=buffer_type;pattern=buffer_type..." (empty = no overrides)
struct bench_overrides {
    int n;
    char ** patterns;                                // n owned strings
    struct llama_model_tensor_buft_override * list;  // n entries + the { NULL, NULL } terminator
};
bool bench_parse_overrides(const char * s, size_t len, struct bench_overrides * out, char * err, size_t n_err);
bool bench_overrides_equal(const struct bench_overrides * a, const struct bench_overrides * b);
void bench_overrides_str(const struct bench_overrides * o, char * buf, size_t n);
void bench_overrides_free(struct bench_overrides * o);
