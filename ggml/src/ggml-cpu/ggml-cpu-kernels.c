// Run-time choice of the kernel set: what the CPU and the OS support (CPUID + XGETBV), optionally lowered
// with GGML_CPU_ISA=scalar|avx2|avx512. The tables are built once, on first use, for every supported ISA so
// that tests can compare paths in one process.
#include "gemm.h"
#include "quants-impl.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define GGML_CPU_X86 1
#endif

#define N_ISA 3

static struct ggml_cpu_type_kernels g_tables[N_ISA][GGML_TYPE_COUNT];
static enum ggml_cpu_isa g_best   = GGML_CPU_ISA_SCALAR;
static enum ggml_cpu_isa g_active = GGML_CPU_ISA_SCALAR;
static pthread_once_t    g_once   = PTHREAD_ONCE_INIT;

static const struct ggml_cpu_type_kernels g_none = { GGML_TYPE_COUNT, NULL, NULL, NULL };

#ifdef GGML_CPU_X86
// XCR0: which register states the OS saves on context switch; without that the wide registers cannot be used
static uint64_t read_xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t) hi << 32) | lo;
}

static enum ggml_cpu_isa detect_best(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) {
        return GGML_CPU_ISA_SCALAR;
    }
    const bool osxsave = (c >> 27) & 1;
    const bool avx     = (c >> 28) & 1;
    const bool fma     = (c >> 12) & 1;
    const bool f16c    = (c >> 29) & 1;
    if (!osxsave || !avx) {
        return GGML_CPU_ISA_SCALAR;
    }
    const uint64_t xcr0 = read_xcr0();
    const bool os_ymm = (xcr0 & 0x6) == 0x6;    // SSE + AVX state
    const bool os_zmm = (xcr0 & 0xe6) == 0xe6;  // + opmask, upper ZMM0-15, ZMM16-31

    unsigned max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf < 7) {
        return GGML_CPU_ISA_SCALAR;
    }
    __cpuid_count(7, 0, a, b, c, d);
    const bool avx2     = (b >> 5) & 1;
    const bool bmi2     = (b >> 8) & 1;
    const bool avx512f  = (b >> 16) & 1;
    const bool avx512dq = (b >> 17) & 1;
    const bool avx512bw = (b >> 30) & 1;
    const bool avx512vl = (b >> 31) & 1;
    const bool vnni     = (c >> 11) & 1;
    const unsigned max_sub = a;
    bool bf16 = false;
    if (max_sub >= 1) {
        __cpuid_count(7, 1, a, b, c, d);
        bf16 = (a >> 5) & 1;
    }

    // the AVX2 files are compiled with -mavx2 -mfma -mf16c -mbmi2: all four must be there
    if (!(os_ymm && avx2 && fma && f16c && bmi2)) {
        return GGML_CPU_ISA_SCALAR;
    }
    // the AVX-512 level is what quants-avx512.c is compiled for: F/DQ/BW/VL + VNNI + BF16
    if (os_zmm && avx512f && avx512dq && avx512bw && avx512vl && vnni && bf16) {
        return GGML_CPU_ISA_AVX512;
    }
    return GGML_CPU_ISA_AVX2;
}
#else
static enum ggml_cpu_isa detect_best(void) {
    return GGML_CPU_ISA_SCALAR;
}
#endif

static void init_once(void) {
    g_best = detect_best();

    ggml_cpu_kernels_fill_scalar(g_tables[GGML_CPU_ISA_SCALAR]);
    if (g_best >= GGML_CPU_ISA_AVX2) {
        memcpy(g_tables[GGML_CPU_ISA_AVX2], g_tables[GGML_CPU_ISA_SCALAR], sizeof(g_tables[0]));
        ggml_cpu_kernels_fill_avx2(g_tables[GGML_CPU_ISA_AVX2]);
    }
    if (g_best >= GGML_CPU_ISA_AVX512) {
        memcpy(g_tables[GGML_CPU_ISA_AVX512], g_tables[GGML_CPU_ISA_AVX2], sizeof(g_tables[0]));
        ggml_cpu_kernels_fill_avx512(g_tables[GGML_CPU_ISA_AVX512]);
    }

    g_active = g_best;
    const char * env = getenv("GGML_CPU_ISA");
    if (env && *env) {
        enum ggml_cpu_isa want;
        if (strcmp(env, "scalar") == 0) {
            want = GGML_CPU_ISA_SCALAR;
        } else if (strcmp(env, "avx2") == 0) {
            want = GGML_CPU_ISA_AVX2;
        } else if (strcmp(env, "avx512") == 0) {
            want = GGML_CPU_ISA_AVX512;
        } else {
            GGML_LOG_WARN("GGML_CPU_ISA=%s is not one of scalar|avx2|avx512; using %s\n", env,
                          ggml_cpu_isa_name(g_best));
            want = g_best;
        }
        if (want > g_best) {
            GGML_LOG_WARN("GGML_CPU_ISA=%s is not supported by this CPU; using %s\n", env,
                          ggml_cpu_isa_name(g_best));
            want = g_best;
        }
        g_active = want;
    }
}

enum ggml_cpu_isa ggml_cpu_isa_active(void) {
    pthread_once(&g_once, init_once);
    return g_active;
}

enum ggml_cpu_isa ggml_cpu_isa_best(void) {
    pthread_once(&g_once, init_once);
    return g_best;
}

bool ggml_cpu_isa_supported(enum ggml_cpu_isa isa) {
    pthread_once(&g_once, init_once);
    return isa >= GGML_CPU_ISA_SCALAR && isa <= g_best;
}

const char * ggml_cpu_isa_name(enum ggml_cpu_isa isa) {
    switch (isa) {
        case GGML_CPU_ISA_SCALAR: return "scalar";
        case GGML_CPU_ISA_AVX2:   return "avx2";
        case GGML_CPU_ISA_AVX512: return "avx512";
    }
    return "unknown";
}

const struct ggml_cpu_type_kernels * ggml_cpu_get_kernels_isa(enum ggml_type type, enum ggml_cpu_isa isa) {
    pthread_once(&g_once, init_once);
    if ((int) type < 0 || type >= GGML_TYPE_COUNT) {
        return &g_none;
    }
    if ((int) isa < 0 || isa > g_best) {
        // an unsupported request must not run instructions the CPU lacks
        GGML_LOG_ERROR("ggml_cpu_get_kernels_isa: ISA %d is not supported by this CPU (best: %s)\n", (int) isa,
                       ggml_cpu_isa_name(g_best));
        isa = g_best;
    }
    return &g_tables[isa][type];
}

const struct ggml_cpu_type_kernels * ggml_cpu_get_kernels(enum ggml_type type) {
    return ggml_cpu_get_kernels_isa(type, ggml_cpu_isa_active());
}

// here rather than in gemm-avx512.c: this must be callable on CPUs without AVX-512
bool ggml_cpu_gemm_supported(enum ggml_type type) {
    if (ggml_cpu_isa_active() != GGML_CPU_ISA_AVX512) {
        return false;
    }
    switch (type) {
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q5_1:
        case GGML_TYPE_Q8_0:
        case GGML_TYPE_IQ4_NL:
        case GGML_TYPE_IQ4_XS:
        case GGML_TYPE_Q2_K:
        case GGML_TYPE_Q3_K:
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K:
        case GGML_TYPE_Q6_K:
        case GGML_TYPE_F16:
        case GGML_TYPE_BF16:
        case GGML_TYPE_F32:
            return true;
        default:
            return false;
    }
}
