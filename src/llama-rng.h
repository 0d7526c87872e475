// Random numbers that match libstdc++ bit for bit, so that a fixed seed picks the same tokens as llama.cpp:
// std::mt19937, std::generate_canonical (the draw behind std::uniform_real_distribution) and
// std::discrete_distribution. Internal to libllama.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define LLAMA_MT19937_N 624

// std::mt19937 state; copy it by value to fork the stream (clone, copy_state, staged backend draws)
struct llama_mt19937 {
    uint32_t state[LLAMA_MT19937_N];
    uint32_t pos; // next word of state to temper; LLAMA_MT19937_N means "twist first"
};

// same stream as std::mt19937(seed) / rng.seed(seed)
void     llama_mt19937_seed(struct llama_mt19937 * rng, uint32_t seed);
// next 32-bit output, as std::mt19937::operator()
uint32_t llama_mt19937_next(struct llama_mt19937 * rng);

// std::uniform_real_distribution<double>(0, 1)(rng): generate_canonical<double, 53> uses two outputs
double   llama_rng_uniform_double(struct llama_mt19937 * rng);
// std::uniform_real_distribution<float>(0, 1)(rng): generate_canonical<float, 24> uses one output
float    llama_rng_uniform_float(struct llama_mt19937 * rng);

// std::discrete_distribution<int>(weights)(rng) over n weights read as p[i*stride] (floats, stride in floats).
// cum is scratch space for n doubles. With fewer than two weights libstdc++ draws nothing and returns 0.
int      llama_rng_discrete(struct llama_mt19937 * rng, const float * p, size_t stride, size_t n, double * cum);

// a fresh nondeterministic seed (for LLAMA_DEFAULT_SEED)
uint32_t llama_rng_random_seed(void);
