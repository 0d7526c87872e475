// CPU kernels (ggml/src/ggml-cpu/ggml-cpu-kernels.h), on the ISA path chosen by GGML_CPU_ISA (one ctest per
// path) and across every path the CPU supports:
//  1. index.json["kernel_checks"]: W·x with x converted to the vec_dot_type and one vec_dot per row equals
//     llama.cpp's kernels/*.matvec.bin to 1e-5 relative (relative to max |y| of the tensor);
//  2. activation quantization: bytes identical on every path, ties rounded half to even like llama.cpp's x86
//     backend (checked against hand-computed blocks);
//  3. vec_dot of random rows: every SIMD path equals the scalar path (bit for bit for the AVX2 K-quants, whose
//     float operations are the same; 1e-5 of sum|x_i*y_i| otherwise), and the scalar path equals a double
//     precision dot product of the dequantized rows (dequantized by ggml-quants.c, not by the kernels);
//  4. the batched vec_dot_mc gives, column by column, exactly what vec_dot gives;
//  5. Q8_0 x Q8_0 on every path follows llama.cpp's x86 float order bit for bit (restated below from its
//     AVX2 ggml_vec_dot_q8_0_q8_0 and llamafile tinyBLAS_Q0_AVX, which agree): llama.cpp's Q8_0 greedy
//     tokens sit on near-ties that only this rounding reproduces.
#include "harness-ggml.h"

#include "ggml-common.h"
#include "ggml-cpu/ggml-cpu-kernels.h"
#include "ggml-quants.h"
#include "ggml.h"
#include "gguf.h"

#include <jansson.h>
#include <stdint.h>

// ---- helpers --------------------------------------------------------------------------------------------------

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_u64(void) {
    return th_xorshift64star(&rng_state);
}

static float rng_uniform(void) { // [0, 1)
    return (float) (rng_u64() >> 40) / 16777216.0f;
}

static float rng_normal(void) {
    const float u1 = rng_uniform() + 1e-7f;
    const float u2 = rng_uniform();
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
}

static uint16_t f16_bits(float f) {
    return ggml_fp32_to_fp16(f);
}

static size_t row_size(enum ggml_type t, int64_t n) {
    return ggml_type_size(t) * (size_t) (n / ggml_blck_size(t));
}

static const enum ggml_cpu_isa all_isas[] = { GGML_CPU_ISA_SCALAR, GGML_CPU_ISA_AVX2, GGML_CPU_ISA_AVX512 };

// ---- 0. ISA selection ----------------------------------------------------------------------------------------

static void test_isa_selection(void) {
    const enum ggml_cpu_isa active = ggml_cpu_isa_active();
    const enum ggml_cpu_isa best   = ggml_cpu_isa_best();
    printf("ISA: active %s, best %s\n", ggml_cpu_isa_name(active), ggml_cpu_isa_name(best));
    TH_CHECK(active <= best, "active ISA within what the CPU supports");
    const char * env = getenv("GGML_CPU_ISA");
    if (env && *env) {
        for (size_t i = 0; i < sizeof(all_isas) / sizeof(all_isas[0]); ++i) {
            if (strcmp(env, ggml_cpu_isa_name(all_isas[i])) == 0 && ggml_cpu_isa_supported(all_isas[i])) {
                TH_CHECK(active == all_isas[i], "GGML_CPU_ISA=%s selects that path (got %s)", env,
                         ggml_cpu_isa_name(active));
            }
        }
    }
    // the contract: never NULL, even for nonsense
    TH_CHECK(ggml_cpu_get_kernels(GGML_TYPE_COUNT) != NULL, "kernels of an invalid type is not NULL");
    TH_CHECK(ggml_cpu_get_kernels(GGML_TYPE_COUNT)->vec_dot == NULL, "invalid type has no vec_dot");
}

// ---- 1. kernel_checks vs llama.cpp ------------------------------------------------------------------------------

static void test_kernel_checks(void) {
    const char * index_path = th_data_path("reference/synthetic/index.json");
    if (!th_require_file(index_path)) {
        return;
    }
    json_error_t err;
    json_t * index = json_load_file(index_path, 0, &err);
    TH_CHECK(index != NULL, "parse %s: %s", index_path, err.text);
    if (!index) {
        return;
    }
    json_t * checks = json_object_get(index, "kernel_checks");
    TH_CHECK(json_is_array(checks) && json_array_size(checks) > 0, "index.json has kernel_checks");
    size_t ic;
    json_t * c;
    int n_done = 0;
    json_array_foreach(checks, ic, c) {
        const char * src    = json_string_value(json_object_get(c, "source_file"));
        const char * tname  = json_string_value(json_object_get(c, "tensor"));
        const char * type_s = json_string_value(json_object_get(c, "type"));
        const char * x_file = json_string_value(json_object_get(c, "x_file"));
        const char * y_file = json_string_value(json_object_get(c, "matvec_file"));
        json_t * ne = json_object_get(c, "ne");
        const double max_abs_y = json_number_value(json_object_get(c, "max_abs_y"));
        if (!src || !tname || !type_s || !x_file || !y_file || json_array_size(ne) != 2) {
            TH_CHECK(false, "kernel_checks[%zu] is complete", ic);
            continue;
        }
        const int64_t ne0 = json_integer_value(json_array_get(ne, 0));
        const int64_t ne1 = json_integer_value(json_array_get(ne, 1));
        const enum ggml_type type = th_type_from_name(type_s);

        const char * model_path = th_data_path("models/synthetic/%s", src);
        const char * xp = th_data_path("reference/synthetic/%s", x_file);
        const char * yp = th_data_path("reference/synthetic/%s", y_file);
        if (!th_require_file(model_path) || !th_require_file(xp) || !th_require_file(yp)) {
            continue;
        }
        struct ggml_context * ctx = NULL;
        struct gguf_init_params params = { .no_alloc = false, .ctx = &ctx };
        struct gguf_context * gguf = gguf_init_from_file(model_path, params);
        TH_CHECK(gguf != NULL && ctx != NULL, "load %s", model_path);
        if (!gguf || !ctx) {
            if (gguf) gguf_free(gguf);
            if (ctx) ggml_free(ctx);
            continue;
        }
        struct ggml_tensor * w = ggml_get_tensor(ctx, tname);
        size_t nx = 0, ny = 0;
        float * x    = th_read_file(xp, &nx);
        float * yref = th_read_file(yp, &ny);
        const bool shape_ok = w && w->type == type && w->ne[0] == ne0 && w->ne[1] == ne1 &&
                              nx == (size_t) ne0 * sizeof(float) && ny == (size_t) ne1 * sizeof(float);
        TH_CHECK(shape_ok, "%s %s: tensor %s of type %s [%lld, %lld], x and y sizes match", src, tname,
                 w ? "present" : "missing", type_s, (long long) ne0, (long long) ne1);
        const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(type);
        if (shape_ok && k->vec_dot && k->vec_dot_type < GGML_TYPE_COUNT &&
            ggml_cpu_get_kernels(k->vec_dot_type)->from_float) {
            void * xq = calloc(1, row_size(k->vec_dot_type, ne0) + 64);
            ggml_cpu_get_kernels(k->vec_dot_type)->from_float(x, xq, ne0);
            double max_rel = 0.0;
            int64_t worst = 0;
            for (int64_t r = 0; r < ne1; ++r) {
                float yr = 0.0f;
                k->vec_dot((int) ne0, &yr, (const char *) w->data + r * w->nb[1], xq);
                const double rel = fabs((double) yr - (double) yref[r]) / max_abs_y;
                if (rel > max_rel || isnan(rel)) {
                    max_rel = isnan(rel) ? INFINITY : rel;
                    worst = r;
                }
            }
            printf("  %-18s %-22s %-6s max |y - llama.cpp| / max|y| = %.2e (row %lld)\n", src, tname, type_s,
                   max_rel, (long long) worst);
            TH_CHECK(max_rel <= 1e-5, "%s %s (%s): W·x matches llama.cpp to 1e-5 relative (got %.3e)", src, tname,
                     type_s, max_rel);
            free(xq);
            n_done++;
        } else if (shape_ok) {
            TH_CHECK(false, "%s: type %s has vec_dot and an activation format", tname, type_s);
        }
        free(x);
        free(yref);
        gguf_free(gguf);
        ggml_free(ctx);
    }
    printf("kernel_checks: %d W·x products compared with llama.cpp\n", n_done);
    json_decref(index);
}

// ---- 2. activation quantization ----------------------------------------------------------------------------

static void test_from_float_ties(void) {
    // amax = 127 makes the multiplier exactly 1 (Q8_0/Q8_1: 127/amax; Q8_K: -127/max with max = -127),
    // so half-integers are exact ties: llama.cpp's x86 path rounds them to even
    float x[QK_K];
    for (int i = 0; i < QK_K; ++i) {
        x[i] = (float) ((i % 50) - 25) + 0.5f;   // -24.5 .. 24.5
    }
    for (int b = 0; b < QK_K / 32; ++b) {
        x[32 * b + 31] = -127.0f;
    }
    for (size_t ii = 0; ii < sizeof(all_isas) / sizeof(all_isas[0]); ++ii) {
        const enum ggml_cpu_isa isa = all_isas[ii];
        if (!ggml_cpu_isa_supported(isa)) {
            continue;
        }
        block_q8_0 q0[QK_K / QK8_0];
        block_q8_1 q1[QK_K / QK8_1];
        block_q8_K qk[1];
        ggml_cpu_get_kernels_isa(GGML_TYPE_Q8_0, isa)->from_float(x, q0, QK_K);
        ggml_cpu_get_kernels_isa(GGML_TYPE_Q8_1, isa)->from_float(x, q1, QK_K);
        ggml_cpu_get_kernels_isa(GGML_TYPE_Q8_K, isa)->from_float(x, qk, QK_K);
        int bad0 = 0, bad1 = 0, badk = 0;
        for (int i = 0; i < QK_K; ++i) {
            const float v = x[i];
            const float fl = floorf(v);
            // nearest, ties to the even neighbour
            const int expect = (v - fl == 0.5f) ? ((((int) fl) % 2 == 0) ? (int) fl : (int) fl + 1) : (int) lrintf(v);
            bad0 += q0[i / 32].qs[i % 32] != expect;
            bad1 += q1[i / 32].qs[i % 32] != expect;
            badk += qk[0].qs[i] != expect;
        }
        TH_CHECK(bad0 == 0 && bad1 == 0 && badk == 0,
                 "%s: ties round half to even (mismatches q8_0 %d, q8_1 %d, q8_K %d)", ggml_cpu_isa_name(isa), bad0,
                 bad1, badk);
        TH_CHECK(ggml_fp16_to_fp32(q0[0].d) == 1.0f && qk[0].d == 1.0f, "%s: scale 1 for amax 127",
                 ggml_cpu_isa_name(isa));
        int sum = 0;
        for (int j = 0; j < 32; ++j) {
            sum += q1[0].qs[j];
        }
        TH_CHECK(q1[0].s == f16_bits((float) sum), "%s: q8_1 s = d * sum", ggml_cpu_isa_name(isa));
        int bs = 0;
        for (int j = 0; j < 16; ++j) {
            bs += qk[0].qs[16 + j];
        }
        TH_CHECK(qk[0].bsums[1] == bs, "%s: q8_K bsums", ggml_cpu_isa_name(isa));
    }
}

static void test_from_float_cross_isa(void) {
    const enum ggml_type types[] = {
        GGML_TYPE_Q8_0, GGML_TYPE_Q8_1, GGML_TYPE_Q8_K, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_F32,
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_IQ4_NL,
    };
    const int64_t n = 4096 + 256;
    float * x = malloc(n * sizeof(float));
    for (int64_t i = 0; i < n; ++i) {
        x[i] = rng_normal() * (i < 1024 ? 1.0f : 1e-3f);
    }
    // a zero block, a block with a single value, and special values for the float formats
    memset(x + 256, 0, 256 * sizeof(float));
    x[600] = 3.0f;
    x[4096 + 3] = 65520.0f;      // rounds to inf in f16
    x[4096 + 4] = -1e-6f;        // f16 subnormal
    x[4096 + 5] = 1e-40f;        // f32 subnormal
    x[4096 + 6] = 5.9604645e-08f;

    for (size_t it = 0; it < sizeof(types) / sizeof(types[0]); ++it) {
        const enum ggml_type t = types[it];
        const size_t sz = row_size(t, n);
        uint8_t * ref = malloc(sz);
        uint8_t * got = malloc(sz);
        ggml_cpu_get_kernels_isa(t, GGML_CPU_ISA_SCALAR)->from_float(x, ref, n);
        for (size_t ii = 1; ii < sizeof(all_isas) / sizeof(all_isas[0]); ++ii) {
            if (!ggml_cpu_isa_supported(all_isas[ii])) {
                continue;
            }
            memset(got, 0xa5, sz);
            ggml_cpu_get_kernels_isa(t, all_isas[ii])->from_float(x, got, n);
            TH_CHECK(memcmp(ref, got, sz) == 0, "from_float %s: %s bytes equal scalar", ggml_type_name(t),
                     ggml_cpu_isa_name(all_isas[ii]));
        }
        // the storage formats (and Q8_K, whose CPU quantizer is the reference one) must be exactly the
        // reference quantizer of ggml-quants.c; Q8_0/Q8_1 activations deliberately differ (x86 rounding)
        const bool ref_equal = t != GGML_TYPE_Q8_0 && t != GGML_TYPE_Q8_1 && t != GGML_TYPE_F16 && t != GGML_TYPE_BF16;
        if (ggml_get_type_traits(t)->from_float_ref && ref_equal) {
            ggml_get_type_traits(t)->from_float_ref(x, got, n);
            TH_CHECK(memcmp(ref, got, sz) == 0, "from_float %s equals the reference quantizer", ggml_type_name(t));
        }
        if (t == GGML_TYPE_F16 || t == GGML_TYPE_BF16) {
            // elementwise conversions of ggml.h
            int bad = 0;
            for (int64_t i = 0; i < n; ++i) {
                const uint16_t want = t == GGML_TYPE_F16 ? ggml_fp32_to_fp16(x[i]) : ggml_fp32_to_bf16(x[i]).bits;
                uint16_t have;
                memcpy(&have, ref + 2 * i, 2);
                bad += want != have;
            }
            TH_CHECK(bad == 0, "from_float %s equals ggml_fp32_to_%s (%d mismatches)", ggml_type_name(t),
                     ggml_type_name(t), bad);
        }
        free(ref);
        free(got);
    }
    free(x);
}

// ---- 3. vec_dot on random rows ----------------------------------------------------------------------------------

static float rand_scale(void) {
    // magnitude 1e-3 .. 1e-1, either sign
    const float m = 1e-3f * powf(100.0f, rng_uniform());
    return (rng_u64() & 1) ? m : -m;
}

// a random row of type t: random quant bits, scales in a sane range (so sums stay finite)
static void random_row(enum ggml_type t, void * dst, int64_t n) {
    const size_t sz = row_size(t, n);
    uint8_t * p = dst;
    for (size_t i = 0; i < sz; ++i) {
        p[i] = (uint8_t) rng_u64();
    }
    const int64_t nb = n / ggml_blck_size(t);
    switch (t) {
        case GGML_TYPE_F32:  for (int64_t i = 0; i < n; ++i) ((float *) dst)[i] = rng_normal(); break;
        case GGML_TYPE_F16:  for (int64_t i = 0; i < n; ++i) ((uint16_t *) dst)[i] = f16_bits(rng_normal()); break;
        case GGML_TYPE_BF16: for (int64_t i = 0; i < n; ++i) ((ggml_bf16_t *) dst)[i] = ggml_fp32_to_bf16(rng_normal()); break;
        case GGML_TYPE_Q4_0: for (int64_t i = 0; i < nb; ++i) ((block_q4_0 *) dst)[i].d = f16_bits(rand_scale()); break;
        case GGML_TYPE_Q5_0: for (int64_t i = 0; i < nb; ++i) ((block_q5_0 *) dst)[i].d = f16_bits(rand_scale()); break;
        case GGML_TYPE_Q8_0: for (int64_t i = 0; i < nb; ++i) ((block_q8_0 *) dst)[i].d = f16_bits(rand_scale()); break;
        case GGML_TYPE_IQ4_NL: for (int64_t i = 0; i < nb; ++i) ((block_iq4_nl *) dst)[i].d = f16_bits(rand_scale()); break;
        case GGML_TYPE_Q4_1:
            for (int64_t i = 0; i < nb; ++i) {
                ((block_q4_1 *) dst)[i].d = f16_bits(rand_scale());
                ((block_q4_1 *) dst)[i].m = f16_bits(rand_scale());
            }
            break;
        case GGML_TYPE_Q5_1:
            for (int64_t i = 0; i < nb; ++i) {
                ((block_q5_1 *) dst)[i].d = f16_bits(rand_scale());
                ((block_q5_1 *) dst)[i].m = f16_bits(rand_scale());
            }
            break;
        case GGML_TYPE_Q2_K:
            for (int64_t i = 0; i < nb; ++i) {
                ((block_q2_K *) dst)[i].d    = f16_bits(rand_scale());
                ((block_q2_K *) dst)[i].dmin = f16_bits(rand_scale());
            }
            break;
        case GGML_TYPE_Q3_K: for (int64_t i = 0; i < nb; ++i) ((block_q3_K *) dst)[i].d = f16_bits(rand_scale()); break;
        case GGML_TYPE_Q4_K:
            for (int64_t i = 0; i < nb; ++i) {
                ((block_q4_K *) dst)[i].d    = f16_bits(rand_scale());
                ((block_q4_K *) dst)[i].dmin = f16_bits(rand_scale());
            }
            break;
        case GGML_TYPE_Q5_K:
            for (int64_t i = 0; i < nb; ++i) {
                ((block_q5_K *) dst)[i].d    = f16_bits(rand_scale());
                ((block_q5_K *) dst)[i].dmin = f16_bits(rand_scale());
            }
            break;
        case GGML_TYPE_Q6_K: for (int64_t i = 0; i < nb; ++i) ((block_q6_K *) dst)[i].d = f16_bits(rand_scale()); break;
        case GGML_TYPE_IQ4_XS: for (int64_t i = 0; i < nb; ++i) ((block_iq4_xs *) dst)[i].d = f16_bits(rand_scale()); break;
        default: break;
    }
}

// the activation row dequantized as the kernels see it
static void dequant_row(enum ggml_type t, const void * src, float * dst, int64_t n) {
    switch (t) {
        case GGML_TYPE_F32:  memcpy(dst, src, (size_t) n * sizeof(float)); break;
        case GGML_TYPE_Q8_1: dequantize_row_q8_1(src, dst, n); break;
        case GGML_TYPE_Q8_K: dequantize_row_q8_K(src, dst, n); break;
        default: ggml_get_type_traits(t)->to_float(src, dst, n); break;
    }
}

// Q8_1 carries s = fp16(d * sum(q)); the kernels use s for the min term, so the exact answer does too
static double q8_1_min_correction(enum ggml_type t, const void * vx, const void * vy, int64_t n) {
    const block_q8_1 * y = vy;
    double corr = 0.0;
    for (int64_t b = 0; b < n / 32; ++b) {
        const float m = t == GGML_TYPE_Q4_1 ? ggml_fp16_to_fp32(((const block_q4_1 *) vx)[b].m)
                                            : ggml_fp16_to_fp32(((const block_q5_1 *) vx)[b].m);
        int sum = 0;
        for (int j = 0; j < 32; ++j) {
            sum += y[b].qs[j];
        }
        const double dy = ggml_fp16_to_fp32(y[b].d);
        corr += (double) m * ((double) ggml_fp16_to_fp32(y[b].s) - dy * sum);
    }
    return corr;
}

static bool is_k_type(enum ggml_type t) {
    return t == GGML_TYPE_Q2_K || t == GGML_TYPE_Q3_K || t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q5_K ||
           t == GGML_TYPE_Q6_K || t == GGML_TYPE_IQ4_XS;
}

static void test_vec_dot_random(void) {
    const enum ggml_type types[] = {
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_IQ4_NL,
        GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ4_XS,
        GGML_TYPE_F16,  GGML_TYPE_BF16, GGML_TYPE_F32,
    };
    const int64_t lengths[] = { 1, 7, 32, 64, 96, 160, 256, 512, 768, 1000, 4096, 4352, 11008 };
    const int64_t max_n = 11008 + 256;
    float * xf = malloc(max_n * sizeof(float));
    float * wf = malloc(max_n * sizeof(float));
    float * af = malloc(max_n * sizeof(float));
    // rows inside a GGUF file or a view are only aligned to their element/block field sizes: no SIMD
    // alignment may be assumed (4 bytes keeps the float fields of F32 and Q8_K aligned)
    char  * wbuf = malloc(max_n * 4 + 1024);
    char  * abuf = malloc(max_n * 4 + 1024);
    void  * w  = wbuf + 4;
    void  * a  = abuf + 4;

    for (size_t it = 0; it < sizeof(types) / sizeof(types[0]); ++it) {
        const enum ggml_type t = types[it];
        const struct ggml_cpu_type_kernels * ks = ggml_cpu_get_kernels_isa(t, GGML_CPU_ISA_SCALAR);
        TH_CHECK(ks->vec_dot != NULL && ks->vec_dot_type < GGML_TYPE_COUNT, "%s has a vec_dot", ggml_type_name(t));
        if (!ks->vec_dot) {
            continue;
        }
        const enum ggml_type vt = ks->vec_dot_type;
        double worst_exact = 0.0, worst_isa = 0.0;
        int n_cases = 0, n_isa_mismatch = 0;
        for (size_t il = 0; il < sizeof(lengths) / sizeof(lengths[0]); ++il) {
            const int64_t n = lengths[il];
            if (n % ggml_blck_size(t) != 0 || n % ggml_blck_size(vt) != 0) {
                continue;
            }
            for (int rep = 0; rep < 4; ++rep) {
                random_row(t, w, n);
                for (int64_t i = 0; i < n; ++i) {
                    xf[i] = rng_normal() * (rep == 3 ? 100.0f : 1.0f);
                }
                ggml_cpu_get_kernels_isa(vt, GGML_CPU_ISA_SCALAR)->from_float(xf, a, n);

                dequant_row(t, w, wf, n);
                dequant_row(vt, a, af, n);
                double exact = 0.0, mag = 0.0;
                for (int64_t i = 0; i < n; ++i) {
                    exact += (double) wf[i] * (double) af[i];
                    mag   += fabs((double) wf[i] * (double) af[i]);
                }
                if (t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_1) {
                    exact += q8_1_min_correction(t, w, a, n);
                }
                mag += 1e-30;

                float s_scalar = NAN;
                ks->vec_dot((int) n, &s_scalar, w, a);
                const double err = fabs((double) s_scalar - exact) / mag;
                worst_exact = err > worst_exact ? err : worst_exact;
                TH_EXPECT(err <= 1e-5, "%s n=%lld rep %d: scalar vec_dot %.9g vs exact %.9g (rel %.2e)",
                          ggml_type_name(t), (long long) n, rep, s_scalar, exact, err);
                n_cases++;

                for (size_t ii = 1; ii < sizeof(all_isas) / sizeof(all_isas[0]); ++ii) {
                    if (!ggml_cpu_isa_supported(all_isas[ii])) {
                        continue;
                    }
                    float s_isa = NAN;
                    ggml_cpu_get_kernels_isa(t, all_isas[ii])->vec_dot((int) n, &s_isa, w, a);
                    const double err_isa = fabs((double) s_isa - exact) / mag;
                    worst_exact = err_isa > worst_exact ? err_isa : worst_exact;
                    TH_EXPECT(err_isa <= 1e-5, "%s n=%lld rep %d: %s vec_dot %.9g vs exact %.9g (rel %.2e)",
                              ggml_type_name(t), (long long) n, rep, ggml_cpu_isa_name(all_isas[ii]), s_isa, exact,
                              err_isa);
                    // the AVX2 K-quant kernels reduce each super-block exactly like the scalar code
                    if (is_k_type(t) && all_isas[ii] == GGML_CPU_ISA_AVX2) {
                        n_isa_mismatch += memcmp(&s_isa, &s_scalar, sizeof(float)) != 0;
                        TH_EXPECT(memcmp(&s_isa, &s_scalar, sizeof(float)) == 0,
                                  "%s n=%lld: %s %.9g != scalar %.9g (must be bit-identical)", ggml_type_name(t),
                                  (long long) n, ggml_cpu_isa_name(all_isas[ii]), s_isa, s_scalar);
                    } else {
                        const double d = fabs((double) s_isa - (double) s_scalar) / mag;
                        worst_isa = d > worst_isa ? d : worst_isa;
                        TH_EXPECT(d <= 1e-5, "%s n=%lld: %s %.9g vs scalar %.9g (rel %.2e)", ggml_type_name(t),
                                  (long long) n, ggml_cpu_isa_name(all_isas[ii]), s_isa, s_scalar, d);
                    }
                }
            }
        }
        printf("  vec_dot %-7s x %-5s %3d rows: any path vs exact %.1e, SIMD vs scalar %s%.1e\n", ggml_type_name(t),
               ggml_type_name(vt), n_cases, worst_exact, is_k_type(t) ? "(avx2 bit-exact) " : "", worst_isa);
        TH_CHECK(n_cases > 0 && n_isa_mismatch == 0, "%s: vec_dot on %d random rows", ggml_type_name(t), n_cases);
    }
    free(xf);
    free(wf);
    free(af);
    free(wbuf);
    free(abuf);
}

// ---- 4. batched vec_dot_mc: every column equals vec_dot of the same path bit for bit ---------------------------

static void test_vec_dot_mc(void) {
    const int64_t lengths[] = { 32, 96, 160, 256, 768, 4096, 4352 };
    const int64_t max_n = 4352;
    char * wbuf = malloc(max_n * 4 + 64);
    char * abuf = malloc((max_n * 4 + 64) * GGML_CPU_MC_MAX + 64);
    float * xf = malloc(max_n * sizeof(float));
    int n_kernels = 0;
    for (size_t ii = 0; ii < sizeof(all_isas) / sizeof(all_isas[0]); ++ii) {
        if (!ggml_cpu_isa_supported(all_isas[ii])) {
            continue;
        }
        for (int ti = 0; ti < GGML_TYPE_COUNT; ++ti) {
            const enum ggml_type t = (enum ggml_type) ti;
            const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels_isa(t, all_isas[ii]);
            if (!k->vec_dot_mc) {
                continue;
            }
            n_kernels++;
            const enum ggml_type vt = k->vec_dot_type;
            int bad = 0, n_cases = 0;
            for (size_t il = 0; il < sizeof(lengths) / sizeof(lengths[0]); ++il) {
                const int64_t n = lengths[il];
                if (n % ggml_blck_size(t) != 0 || n % ggml_blck_size(vt) != 0) {
                    continue;
                }
                void * w = wbuf + 4;
                random_row(t, w, n);
                // activation rows with a gap between them, so the stride argument matters
                const size_t by = row_size(vt, n) + 36;
                for (int c = 0; c < GGML_CPU_MC_MAX; ++c) {
                    for (int64_t i = 0; i < n; ++i) {
                        xf[i] = rng_normal();
                    }
                    ggml_cpu_get_kernels_isa(vt, all_isas[ii])->from_float(xf, abuf + 4 + c * by, n);
                }
                for (int nc = 1; nc <= GGML_CPU_MC_MAX; ++nc) {
                    float got[GGML_CPU_MC_MAX];
                    k->vec_dot_mc((int) n, got, w, abuf + 4, by, nc);
                    for (int c = 0; c < nc; ++c) {
                        float want;
                        k->vec_dot((int) n, &want, w, abuf + 4 + c * by);
                        bad += memcmp(&want, &got[c], sizeof(float)) != 0;
                        TH_EXPECT(memcmp(&want, &got[c], sizeof(float)) == 0, "%s %s n=%lld nc=%d column %d: %.9g != %.9g",
                                  ggml_cpu_isa_name(all_isas[ii]), ggml_type_name(t), (long long) n, nc, c, got[c], want);
                    }
                    n_cases++;
                }
            }
            TH_CHECK(n_cases > 0 && bad == 0, "%s %s: vec_dot_mc equals vec_dot per column (%d cases)",
                     ggml_cpu_isa_name(all_isas[ii]), ggml_type_name(t), n_cases);
        }
    }
    printf("vec_dot_mc: %d batched kernels checked against vec_dot\n", n_kernels);
    free(wbuf);
    free(abuf);
    free(xf);
}

// ---- 5. Q8_0 x Q8_0 in llama.cpp's order ------------------------------------------------------------------------

// llama.cpp (x86, AVX2 and up): acc = 8 float lanes, zero; per block acc = fmadd(set1(dx * dy), cvt(i32 lanes),
// acc), where i32 lane l sums x*y over elements 4l..4l+3 (vpdpbusd or maddubs+madd: exact either way); then
// hsum_float_8: hi128 + lo128, + movehl, + movehdup
static float q8_0_dot_llamacpp(const block_q8_0 * x, const block_q8_0 * y, int nb) {
    float acc[8] = { 0.0f };
    for (int b = 0; b < nb; ++b) {
        const float d = ggml_fp16_to_fp32(x[b].d) * ggml_fp16_to_fp32(y[b].d);
        for (int l = 0; l < 8; ++l) {
            int32_t dot = 0;
            for (int j = 0; j < 4; ++j) {
                dot += (int32_t) x[b].qs[4 * l + j] * (int32_t) y[b].qs[4 * l + j];
            }
            acc[l] = fmaf(d, (float) dot, acc[l]);
        }
    }
    float h4[4];
    for (int i = 0; i < 4; ++i) {
        h4[i] = acc[i + 4] + acc[i];
    }
    const float h2[2] = { h4[0] + h4[2], h4[1] + h4[3] };
    return h2[0] + h2[1];
}

static void test_q8_0_order(void) {
    const int64_t lengths[] = { 32, 64, 256, 2048, 5632 };
    const int64_t max_n = 5632;
    block_q8_0 * w = malloc(sizeof(block_q8_0) * (size_t) (max_n / QK8_0));
    block_q8_0 * a = malloc(sizeof(block_q8_0) * (size_t) (max_n / QK8_0) * GGML_CPU_MC_MAX);
    float * xf = malloc(max_n * sizeof(float));
    int bad = 0, n_cases = 0;
    for (size_t il = 0; il < sizeof(lengths) / sizeof(lengths[0]); ++il) {
        const int64_t n = lengths[il];
        const int nb = (int) (n / QK8_0);
        for (int rep = 0; rep < 3; ++rep) {
            random_row(GGML_TYPE_Q8_0, w, n);
            for (int c = 0; c < GGML_CPU_MC_MAX; ++c) {
                for (int64_t i = 0; i < n; ++i) {
                    // rep 2: scales spread over orders of magnitude, so that the lane order matters more
                    xf[i] = rng_normal() * (rep == 2 ? exp2f((float) (i % 24) - 12.0f) : 1.0f);
                }
                ggml_cpu_get_kernels_isa(GGML_TYPE_Q8_0, GGML_CPU_ISA_SCALAR)->from_float(xf, a + c * nb, n);
            }
            for (size_t ii = 0; ii < sizeof(all_isas) / sizeof(all_isas[0]); ++ii) {
                if (!ggml_cpu_isa_supported(all_isas[ii])) {
                    continue;
                }
                const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels_isa(GGML_TYPE_Q8_0, all_isas[ii]);
                float got[GGML_CPU_MC_MAX];
                for (int c = 0; c < GGML_CPU_MC_MAX; ++c) {
                    const float want = q8_0_dot_llamacpp(w, a + c * nb, nb);
                    k->vec_dot((int) n, &got[c], w, a + c * nb);
                    bad += memcmp(&want, &got[c], sizeof(float)) != 0;
                    TH_EXPECT(memcmp(&want, &got[c], sizeof(float)) == 0, "%s q8_0 n=%lld rep %d col %d: %.9g, llama.cpp's order %.9g",
                              ggml_cpu_isa_name(all_isas[ii]), (long long) n, rep, c, got[c], want);
                    n_cases++;
                }
            }
        }
    }
    printf("q8_0 x q8_0: %d dot products bit-identical to llama.cpp's float order on every path\n", n_cases - bad);
    TH_CHECK(n_cases > 0 && bad == 0, "q8_0 vec_dot follows llama.cpp's order (%d of %d differ)", bad, n_cases);
    free(w);
    free(a);
    free(xf);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    test_isa_selection();
    test_kernel_checks();
    test_from_float_ties();
    test_from_float_cross_isa();
    test_vec_dot_random();
    test_vec_dot_mc();
    test_q8_0_order();
    return th_finish();
}
