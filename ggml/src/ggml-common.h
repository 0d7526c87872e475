// Block layouts of ggml's quantized types. These are the on-disk GGUF formats: field order, sizes and
// packing are fixed by the file format and must never change. Each struct is followed by a size check.
#pragma once

#include <assert.h>
#include <stdint.h>

typedef uint16_t ggml_half;   // IEEE half, stored as bits
typedef uint32_t ggml_half2;  // two halves

#define QK_K 256          // elements per super-block of the K-quants and IQ types
#define K_SCALE_SIZE 12   // bytes of packed 6-bit scales/mins in Q4_K / Q5_K

#define QK4_0 32
typedef struct {
    ggml_half d;            // delta
    uint8_t   qs[QK4_0/2];  // nibbles: element j in low nibble of qs[j], element j+16 in the high nibble
} block_q4_0;
static_assert(sizeof(block_q4_0) == 18, "wrong q4_0 block size");

#define QK4_1 32
typedef struct {
    ggml_half d;            // delta
    ggml_half m;            // min
    uint8_t   qs[QK4_1/2];
} block_q4_1;
static_assert(sizeof(block_q4_1) == 20, "wrong q4_1 block size");

#define QK5_0 32
typedef struct {
    ggml_half d;
    uint8_t   qh[4];        // 5th bit of each element
    uint8_t   qs[QK5_0/2];
} block_q5_0;
static_assert(sizeof(block_q5_0) == 22, "wrong q5_0 block size");

#define QK5_1 32
typedef struct {
    ggml_half d;
    ggml_half m;
    uint8_t   qh[4];
    uint8_t   qs[QK5_1/2];
} block_q5_1;
static_assert(sizeof(block_q5_1) == 24, "wrong q5_1 block size");

#define QK8_0 32
typedef struct {
    ggml_half d;
    int8_t    qs[QK8_0];
} block_q8_0;
static_assert(sizeof(block_q8_0) == 34, "wrong q8_0 block size");

#define QK8_1 32
typedef struct {
    ggml_half d;            // delta
    ggml_half s;            // d * sum(qs[i])
    int8_t    qs[QK8_1];
} block_q8_1;
static_assert(sizeof(block_q8_1) == 36, "wrong q8_1 block size");

// 2-bit: 16 sub-blocks of 16, 4-bit scale and 4-bit min per sub-block
typedef struct {
    uint8_t   scales[QK_K/16]; // low nibble scale, high nibble min
    uint8_t   qs[QK_K/4];
    ggml_half d;               // super-block scale for scales
    ggml_half dmin;            // super-block scale for mins
} block_q2_K;
static_assert(sizeof(block_q2_K) == 84, "wrong q2_K block size");

// 3-bit: 16 sub-blocks of 16, 6-bit scales
typedef struct {
    uint8_t   hmask[QK_K/8];   // high bit
    uint8_t   qs[QK_K/4];      // low 2 bits
    uint8_t   scales[12];      // 16 packed 6-bit scales
    ggml_half d;
} block_q3_K;
static_assert(sizeof(block_q3_K) == 110, "wrong q3_K block size");

// 4-bit: 8 sub-blocks of 32, 6-bit scales and mins
typedef struct {
    ggml_half d;
    ggml_half dmin;
    uint8_t   scales[K_SCALE_SIZE];
    uint8_t   qs[QK_K/2];
} block_q4_K;
static_assert(sizeof(block_q4_K) == 144, "wrong q4_K block size");

// 5-bit: 8 sub-blocks of 32, 6-bit scales and mins
typedef struct {
    ggml_half d;
    ggml_half dmin;
    uint8_t   scales[K_SCALE_SIZE];
    uint8_t   qh[QK_K/8];
    uint8_t   qs[QK_K/2];
} block_q5_K;
static_assert(sizeof(block_q5_K) == 176, "wrong q5_K block size");

// 6-bit: 16 sub-blocks of 16, 8-bit scales
typedef struct {
    uint8_t   ql[QK_K/2];      // low 4 bits
    uint8_t   qh[QK_K/4];      // high 2 bits
    int8_t    scales[QK_K/16];
    ggml_half d;
} block_q6_K;
static_assert(sizeof(block_q6_K) == 210, "wrong q6_K block size");

// activation format of the K-quant dot products
typedef struct {
    float   d;
    int8_t  qs[QK_K];
    int16_t bsums[QK_K/16];    // sums of groups of 16
} block_q8_K;
static_assert(sizeof(block_q8_K) == 292, "wrong q8_K block size");

#define QK4_NL 32
typedef struct {
    ggml_half d;
    uint8_t   qs[QK4_NL/2];    // indices into kvalues_iq4nl
} block_iq4_nl;
static_assert(sizeof(block_iq4_nl) == 18, "wrong iq4_nl block size");

typedef struct {
    ggml_half d;
    uint16_t  scales_h;        // high 2 bits of the 8 6-bit sub-block scales
    uint8_t   scales_l[QK_K/64]; // low 4 bits
    uint8_t   qs[QK_K/2];
} block_iq4_xs;
static_assert(sizeof(block_iq4_xs) == 136, "wrong iq4_xs block size");

// the non-linear 4-bit grid of IQ4_NL / IQ4_XS
static const int8_t kvalues_iq4nl[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

// Sizes of the types we can read and skip but do not compute with yet (their blocks are opaque bytes).
#define GGML_IQ2_XXS_BLOCK_BYTES 66
#define GGML_IQ2_XS_BLOCK_BYTES  74
#define GGML_IQ3_XXS_BLOCK_BYTES 98
#define GGML_IQ1_S_BLOCK_BYTES   50
#define GGML_IQ3_S_BLOCK_BYTES   110
#define GGML_IQ2_S_BLOCK_BYTES   82
#define GGML_IQ1_M_BLOCK_BYTES   56
#define GGML_TQ1_0_BLOCK_BYTES   54
#define GGML_TQ2_0_BLOCK_BYTES   66
#define QK_MXFP4 32
#define GGML_MXFP4_BLOCK_BYTES   17
