#include "llama-rng.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

// std::mt19937 parameters (ISO C++ [rand.predef])
#define MT_M          397
#define MT_MATRIX_A   0x9908b0dfu
#define MT_UPPER_MASK 0x80000000u
#define MT_LOWER_MASK 0x7fffffffu
#define MT_INIT_MULT  1812433253u

void llama_mt19937_seed(struct llama_mt19937 * rng, uint32_t seed) {
    rng->state[0] = seed;
    for (uint32_t i = 1; i < LLAMA_MT19937_N; ++i) {
        const uint32_t prev = rng->state[i - 1];
        rng->state[i] = MT_INIT_MULT * (prev ^ (prev >> 30)) + i;
    }
    rng->pos = LLAMA_MT19937_N;
}

static void mt19937_twist(struct llama_mt19937 * rng) {
    uint32_t * s = rng->state;
    for (uint32_t i = 0; i < LLAMA_MT19937_N; ++i) {
        const uint32_t y    = (s[i] & MT_UPPER_MASK) | (s[(i + 1) % LLAMA_MT19937_N] & MT_LOWER_MASK);
        const uint32_t mag  = (y & 1u) ? MT_MATRIX_A : 0u;
        s[i] = s[(i + MT_M) % LLAMA_MT19937_N] ^ (y >> 1) ^ mag;
    }
    rng->pos = 0;
}

uint32_t llama_mt19937_next(struct llama_mt19937 * rng) {
    if (rng->pos >= LLAMA_MT19937_N) {
        mt19937_twist(rng);
    }
    uint32_t z = rng->state[rng->pos++];
    z ^= z >> 11;
    z ^= (z << 7)  & 0x9d2c5680u;
    z ^= (z << 15) & 0xefc60000u;
    z ^= z >> 18;
    return z;
}

// libstdc++ generate_canonical<double, 53> with a 32-bit engine takes k = 2 words and sums them as
// x0 + x1 * 2^32 in double (rounding happens in that addition), then scales by 2^-64; a result that rounds
// up to 1.0 is replaced by the largest double below 1.
double llama_rng_uniform_double(struct llama_mt19937 * rng) {
    const double x0 = (double) llama_mt19937_next(rng);
    const double x1 = (double) llama_mt19937_next(rng);
    double sum = x0;
    sum += x1 * 4294967296.0;
    double r = sum / 18446744073709551616.0;
    if (r >= 1.0) {
        r = nextafter(1.0, 0.0);
    }
    return r;
}

// generate_canonical<float, 24> takes a single word, converted to float (rounded) before the 2^-32 scale
float llama_rng_uniform_float(struct llama_mt19937 * rng) {
    const float x = (float) llama_mt19937_next(rng);
    float r = x / 4294967296.0f;
    if (r >= 1.0f) {
        r = nextafterf(1.0f, 0.0f);
    }
    return r;
}

// libstdc++ normalises the weights in double (each divided by their double sum), keeps the running sums,
// forces the last one to exactly 1, then returns the first index whose running sum is >= one uniform double
int llama_rng_discrete(struct llama_mt19937 * rng, const float * p, size_t stride, size_t n, double * cum) {
    if (n < 2) {
        return 0;
    }
    double total = 0.0;
    for (size_t i = 0; i < n; ++i) {
        total += (double) p[i * stride];
    }
    double run = 0.0;
    for (size_t i = 0; i < n; ++i) {
        run += (double) p[i * stride] / total;
        cum[i] = run;
    }
    cum[n - 1] = 1.0;

    const double u = llama_rng_uniform_double(rng);

    // first i with cum[i] >= u, halving exactly as std::lower_bound does (same answer even if a weight is NaN);
    // never past n - 1 for finite weights because cum[n-1] == 1 > u
    size_t first = 0;
    size_t len   = n;
    while (len > 0) {
        const size_t half = len >> 1;
        if (cum[first + half] < u) {
            first += half + 1;
            len   -= half + 1;
        } else {
            len = half;
        }
    }
    return (int) (first < n ? first : n - 1);
}

uint32_t llama_rng_random_seed(void) {
    uint32_t seed = 0;
    FILE * f = fopen("/dev/urandom", "rb");
    if (f) {
        const size_t n = fread(&seed, sizeof(seed), 1, f);
        fclose(f);
        if (n == 1) {
            return seed;
        }
    }
    // no entropy source: fall back to the clock, as llama.cpp does when std::random_device is not random
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint32_t) ((uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec);
}
