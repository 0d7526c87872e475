// Backend (in-graph) sampling: C ports of llama.cpp's tests/test-backend-sampler.cpp (SEEDS-SPEC §3.1) plus the
// seeded kjv sampling references. Every expectation comes from an independent computation in this file (reference
// contexts without samplers, a local mt19937, CPU-side filters recomputed here) or from llama.cpp's outputs in
// reference/kjv/index.json.
//
// usage: test-backend-sampler [--model PATH] [--test NAME]...   (default model: models/kjv/kjv-target-f32.gguf)
#include "harness.h"

#include "common.h"
#include "llama.h"
#include "sampling.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct llama_model * g_model;
static const struct llama_vocab * g_vocab;
static int32_t g_n_vocab;

static void quiet_log(enum ggml_log_level level, const char * text, void * ud) {
    (void) ud;
    if (level == GGML_LOG_LEVEL_ERROR && getenv("TEST_VERBOSE")) {
        fputs(text, stderr);
    }
}

// ---- independent std::mt19937 + std::uniform_real_distribution<double>(0, 1) (libstdc++) ----------------------

struct ref_mt {
    uint32_t s[624];
    int i;
};

static void ref_mt_seed(struct ref_mt * m, uint32_t seed) {
    m->s[0] = seed;
    for (int i = 1; i < 624; i++) {
        m->s[i] = 1812433253u * (m->s[i - 1] ^ (m->s[i - 1] >> 30)) + (uint32_t) i;
    }
    m->i = 624;
}

static uint32_t ref_mt_next(struct ref_mt * m) {
    if (m->i >= 624) {
        for (int k = 0; k < 624; k++) {
            const uint32_t y = (m->s[k] & 0x80000000u) | (m->s[(k + 1) % 624] & 0x7fffffffu);
            m->s[k] = m->s[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        m->i = 0;
    }
    uint32_t y = m->s[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

// generate_canonical<double, 53>: two 32-bit outputs, low word first
static double ref_uniform(struct ref_mt * m) {
    const double lo = (double) ref_mt_next(m);
    const double hi = (double) ref_mt_next(m);
    double r = (lo + hi * 4294967296.0) / 18446744073709551616.0;
    if (r >= 1.0) {
        r = nextafter(1.0, 0.0);
    }
    return r;
}

// ---- helpers -----------------------------------------------------------------------------------------------

static struct llama_context * make_ctx(struct llama_sampler_seq_config * configs, size_t n_configs, int32_t n_seq_max,
        uint32_t n_outputs_max, uint32_t n_ubatch, uint32_t n_outputs_max_per_seq) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_batch = 512;
    if (n_ubatch > 0) {
        cp.n_ubatch = n_ubatch;
    }
    cp.n_outputs_max = n_outputs_max;
    cp.n_outputs_max_per_seq = n_outputs_max_per_seq;
    cp.samplers = configs;
    cp.n_samplers = n_configs;
    cp.kv_unified = true;
    cp.n_threads = 2;
    cp.n_threads_batch = 2;
    if (n_seq_max < 0) {
        n_seq_max = 1;
        for (size_t i = 0; i < n_configs; i++) {
            if (configs[i].seq_id + 1 > n_seq_max) {
                n_seq_max = configs[i].seq_id + 1;
            }
        }
    }
    cp.n_seq_max = (uint32_t) n_seq_max;
    return llama_init_from_model(g_model, cp);
}

static void batch_add(struct llama_batch * b, llama_token tok, llama_pos pos, llama_seq_id seq, bool out) {
    common_batch_add(b, tok, pos, &seq, 1, out);
}

static struct llama_sampler * chain_new(void) {
    return llama_sampler_chain_init(llama_sampler_chain_default_params());
}

static llama_token argmax(const float * x, int32_t n) {
    llama_token best = 0;
    for (int32_t i = 1; i < n; i++) {
        if (x[i] > x[best]) {
            best = i;
        }
    }
    return best;
}

static llama_token bos(void) { return llama_vocab_bos(g_vocab); }
static llama_token eos(void) { return llama_vocab_eos(g_vocab); }

// "the quick": a short fixed prompt tokenized with BOS
static int prompt_tokens(llama_token * out, int cap) {
    const char * text = "And God said";
    return llama_tokenize(g_vocab, text, (int32_t) strlen(text), out, cap, true, false);
}

// decodes the prompt on seq with only the last token an output; returns the batch index of that output
static int decode_prompt(struct llama_context * ctx, llama_seq_id seq) {
    llama_token toks[32];
    const int n = prompt_tokens(toks, 32);
    struct llama_batch b = llama_batch_init(32, 0, 1);
    for (int i = 0; i < n; i++) {
        batch_add(&b, toks[i], i, seq, i == n - 1);
    }
    const int rc = llama_decode(ctx, b);
    llama_batch_free(b);
    TH_CHECK(rc == 0, "decode of the prompt returned %d", rc);
    return n - 1;
}

// logits of the prompt's last token from a context without samplers (malloc'd)
static float * reference_prompt_logits(void) {
    struct llama_context * ref = make_ctx(NULL, 0, 1, 0, 0, 1);
    const int idx = decode_prompt(ref, 0);
    const float * l = llama_get_logits_ith(ref, idx);
    float * out = malloc((size_t) g_n_vocab * sizeof(float));
    memcpy(out, l, (size_t) g_n_vocab * sizeof(float));
    llama_free(ref);
    return out;
}

// softmax of x[0..n) into p (max-subtracted)
static void softmax(const float * x, float * p, int32_t n) {
    float mx = -INFINITY;
    for (int32_t i = 0; i < n; i++) {
        mx = x[i] > mx ? x[i] : mx;
    }
    double sum = 0.0;
    for (int32_t i = 0; i < n; i++) {
        p[i] = isinf(x[i]) && x[i] < 0 ? 0.0f : expf(x[i] - mx);
        sum += p[i];
    }
    for (int32_t i = 0; i < n; i++) {
        p[i] = (float) (p[i] / sum);
    }
}

static const float * g_sort_keys;
static int cmp_desc(const void * a, const void * b) {
    const float x = g_sort_keys[*(const int32_t *) a], y = g_sort_keys[*(const int32_t *) b];
    return x < y ? 1 : x > y ? -1 : 0;
}

// ids of x sorted by descending value
static int32_t * sorted_ids(const float * x, int32_t n) {
    int32_t * ids = malloc((size_t) n * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++) {
        ids[i] = i;
    }
    g_sort_keys = x;
    qsort(ids, (size_t) n, sizeof(int32_t), cmp_desc);
    return ids;
}

// checks that the backend's probs/token of output idx are consistent with the uniform rnd
static void check_draw(struct llama_context * ctx, int idx, llama_token tok, double rnd, const char * what) {
    const float * probs = llama_get_sampled_probs_ith(ctx, idx);
    const llama_token * cand = llama_get_sampled_candidates_ith(ctx, idx);
    const uint32_t n = llama_get_sampled_probs_count_ith(ctx, idx);
    TH_CHECK(probs != NULL && n > 0, "%s: probs of output %d", what, idx);
    if (!probs) {
        return;
    }
    double before = 0.0;
    double incl = -1.0;
    for (uint32_t j = 0; j < n; j++) {
        const llama_token id = cand ? cand[j] : (llama_token) j;
        if (id == tok) {
            incl = before + probs[j];
            break;
        }
        before += probs[j];
    }
    TH_CHECK(incl >= 0.0, "%s: sampled token %d is not among the candidates", what, tok);
    TH_CHECK(rnd >= before - 1e-4 && rnd <= incl + 1e-4, "%s: draw %.6f outside [%.6f, %.6f] of token %d", what, rnd,
            before, incl, tok);
}

// ---- tests -------------------------------------------------------------------------------------------------

static void test_greedy(void) {
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_greedy());
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, -1, 0, 0, 1);
    float * ref = reference_prompt_logits();
    const int idx = decode_prompt(ctx, 0);
    const llama_token tok = llama_get_sampled_token_ith(ctx, idx);
    TH_CHECK(tok == argmax(ref, g_n_vocab), "greedy: backend token %d, argmax %d", tok, argmax(ref, g_n_vocab));
    TH_CHECK(llama_get_sampled_token_ith(ctx, -1) == tok, "greedy: index -1 is the last output");
    TH_CHECK(llama_sampler_sample(chain, ctx, idx) == tok, "greedy: llama_sampler_sample returns the backend token");
    free(ref);
    llama_free(ctx);
    llama_sampler_free(chain);
}

static void test_logit_bias(void) {
    const llama_token target = 42 < g_n_vocab ? 42 : 0;
    llama_logit_bias bias = { target, +100.0f };
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_logit_bias(g_n_vocab, 1, &bias));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(88));
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, -1, 0, 0, 1);
    float * ref = reference_prompt_logits();
    const int idx = decode_prompt(ctx, 0);
    TH_CHECK(llama_get_sampled_token_ith(ctx, idx) == target, "logit_bias: token %d, expected the biased %d",
            llama_get_sampled_token_ith(ctx, idx), target);
    const float * l = llama_get_sampled_logits_ith(ctx, idx);
    TH_CHECK(l && llama_get_sampled_logits_count_ith(ctx, idx) == (uint32_t) g_n_vocab, "logit_bias: logits");
    if (l) {
        double md = 0.0;
        for (int32_t t = 0; t < g_n_vocab; t++) {
            const float e = ref[t] + (t == target ? 100.0f : 0.0f);
            md = fmax(md, fabs(l[t] - e) / fmax(1.0, fabs(e)));
        }
        TH_CHECK(md <= 1e-4, "logit_bias: biased logits differ by %g", md);
    }
    free(ref);
    llama_free(ctx);
    llama_sampler_free(chain);
}

static void test_temp(void) {
    const float temps[2] = { 0.8f, 0.0f };
    float * ref = reference_prompt_logits();
    for (int k = 0; k < 2; k++) {
        struct llama_sampler * chain = chain_new();
        llama_sampler_chain_add(chain, llama_sampler_init_temp(temps[k]));
        struct llama_sampler_seq_config cfg = { 0, chain };
        struct llama_context * ctx = make_ctx(&cfg, 1, -1, 0, 0, 1);
        const int idx = decode_prompt(ctx, 0);
        const float * l = llama_get_sampled_logits_ith(ctx, idx);
        const uint32_t n = llama_get_sampled_logits_count_ith(ctx, idx);
        TH_CHECK(llama_get_sampled_token_ith(ctx, idx) == LLAMA_TOKEN_NULL, "temp: no token without a selecting sampler");
        if (temps[k] > 0.0f) {
            TH_CHECK(l && n == (uint32_t) g_n_vocab, "temp: full-vocab logits (n = %u)", n);
            double md = 0.0;
            for (int32_t t = 0; l && t < g_n_vocab; t++) {
                const float e = ref[t] / temps[k];
                md = fmax(md, fabs(l[t] - e) / fmax(1.0, fabs(e)));
            }
            TH_CHECK(md <= 1e-4, "temp: logits/T differ by %g", md);
        } else {
            const llama_token * c = llama_get_sampled_candidates_ith(ctx, idx);
            TH_CHECK(n == 1 && c && c[0] == argmax(ref, g_n_vocab), "temp 0 keeps only the best token");
        }
        // the CPU suffix (nothing) plus an explicit greedy picks the same token as CPU greedy over logits/T
        struct llama_sampler * g = llama_sampler_init_greedy();
        TH_CHECK(llama_sampler_sample(g, ctx, idx) == argmax(ref, g_n_vocab), "temp: greedy over the backend logits");
        llama_sampler_free(g);
        llama_free(ctx);
        llama_sampler_free(chain);
    }
    free(ref);
}

static void test_temp_ext(void) {
    const float temp = 0.8f, delta = 0.5f, exponent = 1.5f;
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_temp_ext(temp, delta, exponent));
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, -1, 0, 0, 1);
    float * ref = reference_prompt_logits();
    const int idx = decode_prompt(ctx, 0);
    // dynamic temperature from the normalised entropy of softmax(logits)
    float * p = malloc((size_t) g_n_vocab * sizeof(float));
    softmax(ref, p, g_n_vocab);
    double ent = 0.0;
    for (int32_t t = 0; t < g_n_vocab; t++) {
        if (p[t] > 0.0f) {
            ent -= p[t] * log(p[t]);
        }
    }
    const double ne = ent / log((double) g_n_vocab);
    const double dyn = (temp - delta) + 2.0 * delta * pow(ne, exponent);
    const float * l = llama_get_sampled_logits_ith(ctx, idx);
    TH_CHECK(l && llama_get_sampled_logits_count_ith(ctx, idx) == (uint32_t) g_n_vocab, "temp_ext: logits");
    double md = 0.0;
    for (int32_t t = 0; l && t < g_n_vocab; t++) {
        const double e = ref[t] / dyn;
        md = fmax(md, fabs(l[t] - e) / fmax(1.0, fabs(e)));
    }
    TH_CHECK(md <= 1e-4, "temp_ext: logits / %.5f differ by %g", dyn, md);
    free(p);
    free(ref);
    llama_free(ctx);
    llama_sampler_free(chain);
}

static void test_top_k(void) {
    const int32_t k = 8;
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_top_k(k));
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, -1, 0, 0, 1);
    float * ref = reference_prompt_logits();
    int32_t * order = sorted_ids(ref, g_n_vocab);
    const int idx = decode_prompt(ctx, 0);
    const float * l = llama_get_sampled_logits_ith(ctx, idx);
    const llama_token * c = llama_get_sampled_candidates_ith(ctx, idx);
    TH_CHECK(llama_get_sampled_logits_count_ith(ctx, idx) == (uint32_t) k &&
             llama_get_sampled_candidates_count_ith(ctx, idx) == (uint32_t) k, "top_k: k candidates");
    for (int32_t j = 0; l && c && j < k; j++) {
        bool found = false;
        for (int32_t q = 0; q < k; q++) {
            found |= order[q] == c[j];
        }
        TH_EXPECT(found, "top_k: candidate %d (%d) is not among the k best", j, c[j]);
        TH_EXPECT(c[j] >= 0 && c[j] < g_n_vocab && fabsf(l[j] - ref[c[j]]) <= 1e-4f * fmaxf(1.0f, fabsf(ref[c[j]])),
                "top_k: logit of candidate %d", c[j]);
    }
    // the CPU suffix continues from the k candidates
    struct llama_sampler * g = llama_sampler_init_greedy();
    TH_CHECK(llama_sampler_sample(g, ctx, idx) == order[0], "top_k: greedy suffix picks the best token");
    llama_sampler_free(g);
    free(order);
    free(ref);
    llama_free(ctx);
    llama_sampler_free(chain);
}

// tokens kept by top-p (p) over ref, as a 0/1 mask; the CPU rule: keep until the cumulative mass reaches p
static bool * ref_top_p(const float * ref, float p) {
    float * pr = malloc((size_t) g_n_vocab * sizeof(float));
    softmax(ref, pr, g_n_vocab);
    int32_t * order = sorted_ids(ref, g_n_vocab);
    bool * keep = calloc((size_t) g_n_vocab, sizeof(bool));
    double cum = 0.0;
    for (int32_t j = 0; j < g_n_vocab; j++) {
        keep[order[j]] = true;
        cum += pr[order[j]];
        if (cum >= p) {
            break;
        }
    }
    free(order);
    free(pr);
    return keep;
}

// the finite candidates of output idx as a 0/1 mask over the vocabulary
static bool * finite_set(struct llama_context * ctx, int idx, uint32_t * n_out) {
    const float * l = llama_get_sampled_logits_ith(ctx, idx);
    const llama_token * c = llama_get_sampled_candidates_ith(ctx, idx);
    const uint32_t n = llama_get_sampled_logits_count_ith(ctx, idx);
    *n_out = n;
    bool * set = calloc((size_t) g_n_vocab, sizeof(bool));
    for (uint32_t j = 0; l && j < n; j++) {
        const llama_token id = c ? c[j] : (llama_token) j;
        if (isfinite(l[j]) && id >= 0 && id < g_n_vocab) {
            set[id] = true;
        }
    }
    return set;
}

static int mask_diff(const bool * a, const bool * b) {
    int d = 0;
    for (int32_t t = 0; t < g_n_vocab; t++) {
        d += a[t] != b[t];
    }
    return d;
}

static void test_top_p(void) {
    const float p = 0.9f;
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_top_p(p, 1));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(88));
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, -1, 0, 0, 1);
    float * ref = reference_prompt_logits();
    bool * keep = ref_top_p(ref, p);
    const int idx = decode_prompt(ctx, 0);
    uint32_t n = 0;
    bool * got = finite_set(ctx, idx, &n);
    TH_CHECK(n == (uint32_t) g_n_vocab, "top_p: masked candidates keep their slots (n = %u)", n);
    TH_CHECK(mask_diff(keep, got) == 0, "top_p: kept set differs from the CPU rule in %d tokens", mask_diff(keep, got));
    const llama_token tok = llama_get_sampled_token_ith(ctx, idx);
    TH_CHECK(tok >= 0 && tok < g_n_vocab && keep[tok], "top_p: sampled token %d is in the nucleus", tok);
    struct ref_mt rng;
    ref_mt_seed(&rng, 88);
    check_draw(ctx, idx, tok, ref_uniform(&rng), "top_p");
    free(got);
    free(keep);
    free(ref);
    llama_free(ctx);
    llama_sampler_free(chain);
}

static void test_min_p(void) {
    const float p = 0.05f;
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_min_p(p, 1));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(88));
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, -1, 0, 0, 1);
    float * ref = reference_prompt_logits();
    float * pr = malloc((size_t) g_n_vocab * sizeof(float));
    softmax(ref, pr, g_n_vocab);
    const float pmax = pr[argmax(ref, g_n_vocab)];
    bool * keep = calloc((size_t) g_n_vocab, sizeof(bool));
    int n_keep = 0;
    for (int32_t t = 0; t < g_n_vocab; t++) {
        keep[t] = pr[t] >= p * pmax;
        n_keep += keep[t];
    }
    const int idx = decode_prompt(ctx, 0);
    uint32_t n = 0;
    bool * got = finite_set(ctx, idx, &n);
    TH_CHECK(mask_diff(keep, got) == 0, "min_p: kept set (%d tokens) differs in %d tokens", n_keep, mask_diff(keep, got));
    const llama_token tok = llama_get_sampled_token_ith(ctx, idx);
    TH_CHECK(tok >= 0 && tok < g_n_vocab && keep[tok], "min_p: sampled token %d passes min-p", tok);
    struct ref_mt rng;
    ref_mt_seed(&rng, 88);
    check_draw(ctx, idx, tok, ref_uniform(&rng), "min_p");
    free(got);
    free(keep);
    free(pr);
    free(ref);
    llama_free(ctx);
    llama_sampler_free(chain);
}

static void test_penalties(void) {
    // repeat penalty over a history: backend (one output per sequence) and CPU give the same logits
    const llama_token hist[4] = { 5, 9, 9, 11 };
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_penalties(64, 1.3f, 0.2f, 0.1f));
    struct llama_sampler * cpu = llama_sampler_init_penalties(64, 1.3f, 0.2f, 0.1f);
    for (int i = 0; i < 4; i++) {
        llama_sampler_accept(chain, hist[i]);
        llama_sampler_accept(cpu, hist[i]);
    }
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, -1, 0, 0, 1);
    float * ref = reference_prompt_logits();
    const int idx = decode_prompt(ctx, 0);
    llama_token_data * d = malloc((size_t) g_n_vocab * sizeof(*d));
    for (int32_t t = 0; t < g_n_vocab; t++) {
        d[t].id = t;
        d[t].logit = ref[t];
        d[t].p = 0.0f;
    }
    llama_token_data_array arr = { d, (size_t) g_n_vocab, -1, false };
    llama_sampler_apply(cpu, &arr);
    const float * l = llama_get_sampled_logits_ith(ctx, idx);
    const llama_token * c = llama_get_sampled_candidates_ith(ctx, idx);
    const uint32_t n = llama_get_sampled_logits_count_ith(ctx, idx);
    TH_CHECK(l && n == (uint32_t) g_n_vocab, "penalties: backend logits (n = %u)", n);
    double md = 0.0;
    for (uint32_t j = 0; l && j < n; j++) {
        const llama_token id = c ? c[j] : (llama_token) j;
        md = fmax(md, fabs(l[j] - d[id].logit) / fmax(1.0, fabs(d[id].logit)));
    }
    TH_CHECK(md <= 1e-4, "penalties: backend vs CPU logits differ by %g", md);
    TH_CHECK(l && fabsf(l[9] - d[9].logit) <= 1e-4f * fmaxf(1.0f, fabsf(d[9].logit)) && d[9].logit != ref[9],
            "penalties: a repeated token is penalised");
    free(d);
    free(ref);
    llama_sampler_free(cpu);
    llama_free(ctx);
    llama_sampler_free(chain);
}

static void test_dist(void) {
    const uint32_t seed = 88;
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_dist(seed));
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, -1, 0, 0, 1);
    struct ref_mt rng;
    ref_mt_seed(&rng, seed);
    float * ref = reference_prompt_logits();
    const int idx = decode_prompt(ctx, 0);
    const llama_token tok = llama_sampler_sample(chain, ctx, idx);
    TH_CHECK(tok >= 0 && tok < g_n_vocab, "dist: token %d in range", tok);
    const float * probs = llama_get_sampled_probs_ith(ctx, idx);
    float * pr = malloc((size_t) g_n_vocab * sizeof(float));
    softmax(ref, pr, g_n_vocab);
    double md = 0.0;
    for (int32_t t = 0; probs && t < g_n_vocab; t++) {
        md = fmax(md, fabs(probs[t] - pr[t]));
    }
    TH_CHECK(probs && md <= 1e-5, "dist: backend probs vs softmax differ by %g", md);
    check_draw(ctx, idx, tok, ref_uniform(&rng), "dist");
    // the next decode draws the next uniform of the same stream
    struct llama_batch b = llama_batch_init(1, 0, 1);
    batch_add(&b, tok, idx + 1, 0, true);
    TH_CHECK(llama_decode(ctx, b) == 0, "dist: second decode");
    const llama_token tok2 = llama_sampler_sample(chain, ctx, 0);
    check_draw(ctx, 0, tok2, ref_uniform(&rng), "dist step 2");
    llama_batch_free(b);
    free(pr);
    free(ref);
    llama_free(ctx);
    llama_sampler_free(chain);
}

static void test_dist_and_cpu(void) {
    // backend prefix top_k + temp, then typical (CPU only) and dist on the CPU
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_top_k(40));
    llama_sampler_chain_add(chain, llama_sampler_init_temp(0.8f));
    llama_sampler_chain_add(chain, llama_sampler_init_typical(0.9f, 1));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(88));
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, -1, 0, 0, 1);
    float * ref = reference_prompt_logits();
    int32_t * order = sorted_ids(ref, g_n_vocab);
    const int idx = decode_prompt(ctx, 0);
    TH_CHECK(llama_get_sampled_token_ith(ctx, idx) == LLAMA_TOKEN_NULL, "dist_and_cpu: dist stays on the CPU");
    TH_CHECK(llama_get_sampled_logits_count_ith(ctx, idx) == 40, "dist_and_cpu: top_k ran on the backend");
    const llama_token tok = llama_sampler_sample(chain, ctx, idx);
    bool in_top = false;
    for (int j = 0; j < 40; j++) {
        in_top |= order[j] == tok;
    }
    TH_CHECK(in_top, "dist_and_cpu: token %d is among the 40 best", tok);
    // the same chain entirely on the CPU over the reference logits picks the same token
    struct llama_sampler * cpu = chain_new();
    llama_sampler_chain_add(cpu, llama_sampler_init_top_k(40));
    llama_sampler_chain_add(cpu, llama_sampler_init_temp(0.8f));
    llama_sampler_chain_add(cpu, llama_sampler_init_typical(0.9f, 1));
    llama_sampler_chain_add(cpu, llama_sampler_init_dist(88));
    struct llama_context * rctx = make_ctx(NULL, 0, 1, 0, 0, 1);
    const int ridx = decode_prompt(rctx, 0);
    TH_CHECK(llama_sampler_sample(cpu, rctx, ridx) == tok, "dist_and_cpu: CPU chain picks the same token");
    llama_free(rctx);
    llama_sampler_free(cpu);
    free(order);
    free(ref);
    llama_free(ctx);
    llama_sampler_free(chain);
}

static void test_set_sampler(void) {
    struct llama_context * ctx = make_ctx(NULL, 0, 1, 0, 0, 1);
    float * ref = reference_prompt_logits();
    int idx = decode_prompt(ctx, 0);
    TH_CHECK(llama_get_sampled_token_ith(ctx, idx) == LLAMA_TOKEN_NULL, "set_sampler: nothing sampled before");
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_greedy());
    TH_CHECK(llama_set_sampler(ctx, 0, chain), "set_sampler: set");
    struct llama_sampler * plain = llama_sampler_init_greedy();
    TH_CHECK(!llama_set_sampler(ctx, 0, plain), "set_sampler: a non-chain sampler is refused");
    llama_sampler_free(plain);
    llama_memory_clear(llama_get_memory(ctx), true);
    idx = decode_prompt(ctx, 0);
    TH_CHECK(llama_get_sampled_token_ith(ctx, idx) == argmax(ref, g_n_vocab), "set_sampler: greedy token after set");
    TH_CHECK(llama_set_sampler(ctx, 0, NULL), "set_sampler: remove");
    llama_memory_clear(llama_get_memory(ctx), true);
    idx = decode_prompt(ctx, 0);
    TH_CHECK(llama_get_sampled_token_ith(ctx, idx) == LLAMA_TOKEN_NULL, "set_sampler: nothing sampled after removal");
    TH_CHECK(llama_get_logits_ith(ctx, idx) != NULL, "set_sampler: plain logits still there");
    free(ref);
    llama_free(ctx);
    llama_sampler_free(chain);
}

// three sequences in one batch: greedy on seq 0, dist on seq 1, no sampler on seq 2
static void test_mixed(void) {
    struct llama_sampler * c0 = chain_new();
    llama_sampler_chain_add(c0, llama_sampler_init_greedy());
    struct llama_sampler * c1 = chain_new();
    llama_sampler_chain_add(c1, llama_sampler_init_dist(88));
    struct llama_sampler_seq_config cfg[2] = { { 0, c0 }, { 1, c1 } };
    struct llama_context * ctx = make_ctx(cfg, 2, 3, 0, 0, 1);
    llama_token toks[32];
    const int n = prompt_tokens(toks, 32);
    struct llama_batch b = llama_batch_init(96, 0, 1);
    for (llama_seq_id s = 0; s < 3; s++) {
        for (int i = 0; i < n; i++) {
            batch_add(&b, toks[i], i, s, i == n - 1);
        }
    }
    TH_CHECK(llama_decode(ctx, b) == 0, "mixed: decode");
    float * ref = reference_prompt_logits();
    TH_CHECK(llama_get_sampled_token_ith(ctx, n - 1) == argmax(ref, g_n_vocab), "mixed: seq 0 greedy");
    struct ref_mt rng;
    ref_mt_seed(&rng, 88);
    const llama_token t1 = llama_get_sampled_token_ith(ctx, 2 * n - 1);
    TH_CHECK(t1 >= 0 && t1 < g_n_vocab, "mixed: seq 1 sampled");
    check_draw(ctx, 2 * n - 1, t1, ref_uniform(&rng), "mixed seq 1");
    TH_CHECK(llama_get_sampled_token_ith(ctx, 3 * n - 1) == LLAMA_TOKEN_NULL, "mixed: seq 2 has no backend sampler");
    const float * l2 = llama_get_logits_ith(ctx, 3 * n - 1);
    TH_CHECK(l2 && argmax(l2, g_n_vocab) == argmax(ref, g_n_vocab), "mixed: seq 2 plain logits");
    llama_batch_free(b);
    free(ref);
    llama_free(ctx);
    llama_sampler_free(c0);
    llama_sampler_free(c1);
}

// backend min_p + dist on seq 0, CPU-only sampling on seq 1, in one batch
static void test_cpu_mixed(void) {
    struct llama_sampler * c0 = chain_new();
    llama_sampler_chain_add(c0, llama_sampler_init_min_p(0.05f, 1));
    llama_sampler_chain_add(c0, llama_sampler_init_dist(88));
    struct llama_sampler_seq_config cfg = { 0, c0 };
    struct llama_context * ctx = make_ctx(&cfg, 1, 2, 0, 0, 1);
    llama_token toks[32];
    const int n = prompt_tokens(toks, 32);
    struct llama_batch b = llama_batch_init(64, 0, 1);
    for (llama_seq_id s = 0; s < 2; s++) {
        for (int i = 0; i < n; i++) {
            batch_add(&b, toks[i], i, s, i == n - 1);
        }
    }
    TH_CHECK(llama_decode(ctx, b) == 0, "cpu_mixed: decode");
    TH_CHECK(llama_get_sampled_token_ith(ctx, n - 1) != LLAMA_TOKEN_NULL, "cpu_mixed: seq 0 backend sampled");
    TH_CHECK(llama_get_sampled_token_ith(ctx, 2 * n - 1) == LLAMA_TOKEN_NULL, "cpu_mixed: seq 1 not");
    struct llama_sampler * cpu = chain_new();
    llama_sampler_chain_add(cpu, llama_sampler_init_greedy());
    float * ref = reference_prompt_logits();
    TH_CHECK(llama_sampler_sample(cpu, ctx, 2 * n - 1) == argmax(ref, g_n_vocab), "cpu_mixed: CPU greedy on seq 1");
    llama_sampler_free(cpu);
    free(ref);
    llama_batch_free(b);
    llama_free(ctx);
    llama_sampler_free(c0);
}

// four sequences with greedy samplers, different prompts: each token is the argmax of its own row
static void test_multi_sequence(void) {
    struct llama_sampler * chains[4];
    struct llama_sampler_seq_config cfg[4];
    for (int s = 0; s < 4; s++) {
        chains[s] = chain_new();
        llama_sampler_chain_add(chains[s], llama_sampler_init_greedy());
        cfg[s].seq_id = s;
        cfg[s].sampler = chains[s];
    }
    struct llama_context * ctx = make_ctx(cfg, 4, 4, 0, 0, 1);
    struct llama_context * rctx = make_ctx(NULL, 0, 4, 0, 0, 1);
    struct llama_batch b = llama_batch_init(16, 0, 1);
    for (int s = 0; s < 4; s++) {
        batch_add(&b, bos(), 0, s, false);
        batch_add(&b, (llama_token) (100 + 17 * s), 1, s, true);
    }
    TH_CHECK(llama_decode(ctx, b) == 0 && llama_decode(rctx, b) == 0, "multi_sequence: decode");
    for (int s = 0; s < 4; s++) {
        const float * l = llama_get_logits_ith(rctx, 2 * s + 1);
        TH_CHECK(l && llama_get_sampled_token_ith(ctx, 2 * s + 1) == argmax(l, g_n_vocab), "multi_sequence: seq %d", s);
    }
    llama_batch_free(b);
    llama_free(rctx);
    llama_free(ctx);
    for (int s = 0; s < 4; s++) {
        llama_sampler_free(chains[s]);
    }
}

static void test_multi_output_limit(void) {
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_dist(88));
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, 1, 3, 0, 2);
    struct llama_batch b = llama_batch_init(3, 0, 1);
    for (int i = 0; i < 3; i++) {
        batch_add(&b, bos(), i, 0, true);
    }
    TH_CHECK(llama_decode(ctx, b) != 0, "multi_output_limit: 3 outputs > per-seq limit 2 must fail");
    b.n_tokens = 2;
    TH_CHECK(llama_decode(ctx, b) == 0, "multi_output_limit: 2 outputs are fine");
    llama_batch_free(b);
    llama_free(ctx);
    llama_sampler_free(chain);
}

static void test_multi_sequence_multi_output_dist(void) {
    const uint32_t seeds[2] = { 88, 1337 };
    const float temp = 10.0f;
    struct llama_sampler * chains[2];
    struct llama_sampler_seq_config cfg[2];
    for (int s = 0; s < 2; s++) {
        chains[s] = chain_new();
        llama_sampler_chain_add(chains[s], llama_sampler_init_temp(temp));
        llama_sampler_chain_add(chains[s], llama_sampler_init_dist(seeds[s]));
        cfg[s].seq_id = s;
        cfg[s].sampler = chains[s];
    }
    struct llama_context * ctx = make_ctx(cfg, 2, 2, 4, 0, 2);
    struct llama_context * rctx = make_ctx(NULL, 0, 2, 4, 0, 1);
    const llama_token seq_tokens[2][2] = { { bos(), eos() }, { eos(), bos() } };
    struct llama_batch b = llama_batch_init(4, 0, 1);
    for (int pos = 0; pos < 2; pos++) {
        batch_add(&b, seq_tokens[0][pos], pos, 0, true);
        batch_add(&b, seq_tokens[1][pos], pos, 1, true);
    }
    TH_CHECK(llama_decode(ctx, b) == 0, "mm_dist: decode");
    TH_CHECK(llama_decode(rctx, b) == 0, "mm_dist: reference decode");
    struct ref_mt rngs[2];
    ref_mt_seed(&rngs[0], seeds[0]);
    ref_mt_seed(&rngs[1], seeds[1]);
    for (int i = 0; i < b.n_tokens; i++) {
        const llama_seq_id s = b.seq_id[i][0];
        const llama_token tok = llama_sampler_sample(chains[s], ctx, i);
        const float * sl = llama_get_sampled_logits_ith(ctx, i);
        const float * sp = llama_get_sampled_probs_ith(ctx, i);
        const float * rl = llama_get_logits_ith(rctx, i);
        TH_CHECK(tok >= 0 && tok < g_n_vocab, "mm_dist: token in range");
        TH_CHECK(sl && sp && rl, "mm_dist: outputs present");
        TH_CHECK(llama_get_sampled_logits_count_ith(ctx, i) == (uint32_t) g_n_vocab &&
                 llama_get_sampled_probs_count_ith(ctx, i) == (uint32_t) g_n_vocab, "mm_dist: counts");
        if (!sl || !sp || !rl || tok < 0) {
            continue;
        }
        float psum = 0.0f, before = 0.0f;
        for (llama_token t = 0; t < g_n_vocab; t++) {
            const float e = rl[t] / temp;
            TH_EXPECT(fabsf(sl[t] - e) <= 1e-4f * fmaxf(1.0f, fabsf(e)), "mm_dist: logit %d: %g vs %g", t, sl[t], e);
            TH_EXPECT(isfinite(sp[t]) && sp[t] >= 0.0f, "mm_dist: prob %d", t);
            psum += sp[t];
            if (t < tok) {
                before += sp[t];
            }
        }
        TH_CHECK(fabsf(psum - 1.0f) <= 1e-3f, "mm_dist: probs sum to %g", psum);
        const float rnd = (float) ref_uniform(&rngs[s]);
        TH_CHECK(rnd >= before - 1e-4f && rnd <= before + sp[tok] + 1e-4f,
                "mm_dist: output %d (seq %d) draw %g outside [%g, %g]", i, s, rnd, before, before + sp[tok]);
    }
    llama_batch_free(b);
    llama_free(rctx);
    llama_free(ctx);
    llama_sampler_free(chains[0]);
    llama_sampler_free(chains[1]);
}

static void tx_verify(struct llama_context * ctx, struct llama_sampler * chain, int row, float rnd, bool accept,
        const char * what) {
    const llama_token tok = accept ? llama_sampler_sample(chain, ctx, row) : llama_get_sampled_token_ith(ctx, row);
    const float * probs = llama_get_sampled_probs_ith(ctx, row);
    TH_CHECK(tok >= 0 && tok < g_n_vocab && probs, "%s: token and probs", what);
    if (tok < 0 || tok >= g_n_vocab || !probs) {
        return;
    }
    float before = 0.0f;
    for (llama_token i = 0; i < tok; i++) {
        before += probs[i];
    }
    TH_CHECK(rnd >= before - 1e-4f && rnd <= before + probs[tok] + 1e-4f, "%s: draw %g outside [%g, %g]", what, rnd,
            before, before + probs[tok]);
}

static void tx_decode(struct llama_context * ctx, int32_t * pos) {
    struct llama_batch b = llama_batch_init(3, 0, 1);
    for (int i = 0; i < 3; i++) {
        batch_add(&b, bos(), (*pos)++, 0, true);
    }
    TH_CHECK(llama_decode(ctx, b) == 0, "transaction: decode");
    llama_batch_free(b);
}

static void test_multi_output_dist_transaction(void) {
    const uint32_t seed = 95;
    struct llama_sampler * chain = chain_new();
    llama_sampler_chain_add(chain, llama_sampler_init_temp(10.0f));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(seed));
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, 1, 3, 2, 3);
    struct ref_mt rng;
    ref_mt_seed(&rng, seed);
    float randoms[3];
    for (int i = 0; i < 3; i++) {
        randoms[i] = (float) ref_uniform(&rng);
    }
    int32_t pos = 0;
    tx_decode(ctx, &pos);
    tx_verify(ctx, chain, 0, randoms[0], false, "tx (a)");
    tx_decode(ctx, &pos);
    tx_verify(ctx, chain, 0, randoms[0], true, "tx (b) row 0");
    tx_verify(ctx, chain, 1, randoms[1], true, "tx (b) row 1");
    tx_decode(ctx, &pos);
    struct llama_sampler * saved = llama_sampler_clone(chain);
    tx_verify(ctx, chain, 0, randoms[2], true, "tx (c)");
    llama_sampler_copy(saved, chain);
    tx_decode(ctx, &pos);
    tx_verify(ctx, chain, 0, randoms[2], true, "tx (d) after rollback");
    llama_sampler_free(saved);
    llama_free(ctx);
    llama_sampler_free(chain);
}

static struct llama_sampler * filter_chain(int32_t n_vocab, uint32_t k, float p, float temp, const llama_logit_bias * bias) {
    struct llama_sampler * c = chain_new();
    llama_sampler_chain_add(c, llama_sampler_init_logit_bias(n_vocab, 1, bias));
    llama_sampler_chain_add(c, llama_sampler_init_top_k((int32_t) k));
    llama_sampler_chain_add(c, llama_sampler_init_top_p(p, 1));
    llama_sampler_chain_add(c, llama_sampler_init_min_p(0.01f, 1));
    llama_sampler_chain_add(c, llama_sampler_init_temp(temp));
    return c;
}

static void test_multi_output_sampling_chain(void) {
    const float p = 0.9f, temp = 0.8f, cdf_epsilon = 1e-4f;
    const uint32_t k = g_n_vocab < 512 ? (uint32_t) g_n_vocab : 512;
    const llama_logit_bias bias = { bos(), -0.1f };
    struct llama_sampler * chain = filter_chain(g_n_vocab, k, p, temp, &bias);
    llama_sampler_chain_add(chain, llama_sampler_init_dist(88));
    struct llama_sampler_seq_config cfg = { 0, chain };
    struct llama_context * ctx = make_ctx(&cfg, 1, 1, 2, 2, 2);
    struct llama_context * rctx = make_ctx(NULL, 0, 1, 2, 2, 1);

    struct llama_sampler * r_bias = llama_sampler_init_logit_bias(g_n_vocab, 1, &bias);
    struct llama_sampler * r_top_k = llama_sampler_init_top_k((int32_t) k);
    struct llama_sampler * r_top_p = llama_sampler_init_top_p(p, 1);
    struct llama_sampler * r_min_p = llama_sampler_init_min_p(0.01f, 1);
    struct llama_sampler * r_temp = llama_sampler_init_temp(temp);
    llama_token_data * rd = malloc((size_t) g_n_vocab * sizeof(*rd));
    bool * ref_left = malloc((size_t) g_n_vocab * sizeof(bool));
    float * ref_logit = malloc((size_t) g_n_vocab * sizeof(float));

    struct llama_batch b = llama_batch_init(2, 0, 1);
    for (int i = 0; i < 2; i++) {
        batch_add(&b, bos(), i, 0, true);
    }
    TH_CHECK(llama_decode(ctx, b) == 0 && llama_decode(rctx, b) == 0, "chain: decode");
    for (int i = 0; i < b.n_tokens; i++) {
        const llama_token tok = llama_sampler_sample(chain, ctx, i);
        const float * sl = llama_get_sampled_logits_ith(ctx, i);
        const float * sp = llama_get_sampled_probs_ith(ctx, i);
        const llama_token * sc = llama_get_sampled_candidates_ith(ctx, i);
        const uint32_t nl = llama_get_sampled_logits_count_ith(ctx, i);
        const uint32_t np = llama_get_sampled_probs_count_ith(ctx, i);
        const uint32_t nc = llama_get_sampled_candidates_count_ith(ctx, i);
        const float * rl = llama_get_logits_ith(rctx, i);
        TH_CHECK(tok >= 0 && tok < g_n_vocab && sl && sp && sc && rl, "chain: outputs of row %d", i);
        TH_CHECK(nl == k && np == nl && nc == nl, "chain: counts %u %u %u (k = %u)", nl, np, nc, k);
        if (!(sl && sp && sc && rl) || nl != k || np != k || nc != k) {
            continue;
        }
        for (llama_token t = 0; t < g_n_vocab; t++) {
            rd[t].id = t;
            rd[t].logit = rl[t];
            rd[t].p = 0.0f;
        }
        llama_token_data_array ra = { rd, (size_t) g_n_vocab, -1, false };
        llama_sampler_apply(r_bias, &ra);
        llama_sampler_apply(r_top_k, &ra);
        llama_sampler_apply(r_top_p, &ra);
        TH_CHECK(ra.size > 0, "chain: reference keeps candidates");
        float cdf = 0.0f;
        for (size_t j = 0; j < ra.size; j++) {
            cdf += ra.data[j].p;
        }
        const float cdf_before = cdf - ra.data[ra.size - 1].p;
        const float boundary = fminf(fabsf(cdf_before - p), fabsf(cdf - p));
        llama_sampler_apply(r_min_p, &ra);
        llama_sampler_apply(r_temp, &ra);
        memset(ref_left, 0, (size_t) g_n_vocab * sizeof(bool));
        size_t n_left = 0;
        for (size_t j = 0; j < ra.size; j++) {
            if (isfinite(ra.data[j].logit)) {
                ref_left[ra.data[j].id] = true;
                ref_logit[ra.data[j].id] = ra.data[j].logit;
                n_left++;
            }
        }
        size_t n_backend_only = 0;
        int32_t sampled_index = -1;
        float psum = 0.0f;
        for (uint32_t j = 0; j < nl; j++) {
            TH_EXPECT(sc[j] >= 0 && sc[j] < g_n_vocab, "chain: candidate %u out of range", j);
            TH_EXPECT(isfinite(sp[j]) && sp[j] >= 0.0f, "chain: prob %u", j);
            psum += sp[j];
            if (sc[j] == tok) {
                sampled_index = (int32_t) j;
            }
            if (!isfinite(sl[j])) {
                TH_EXPECT(isinf(sl[j]) && sl[j] < 0.0f && sp[j] == 0.0f, "chain: masked candidate %u", j);
                continue;
            }
            if (sc[j] < 0 || sc[j] >= g_n_vocab || !ref_left[sc[j]]) {
                n_backend_only++;
                continue;
            }
            const float e = ref_logit[sc[j]];
            TH_EXPECT(fabsf(sl[j] - e) <= 1e-4f * fmaxf(1.0f, fabsf(e)), "chain: logit of %d: %g vs %g", sc[j], sl[j], e);
            ref_left[sc[j]] = false;
            n_left--;
        }
        if (n_backend_only != 0 || n_left != 0) {
            TH_CHECK(n_backend_only <= 1 && n_left <= 1 && boundary <= cdf_epsilon,
                    "chain: %zu backend-only, %zu reference-only ids (boundary %g)", n_backend_only, n_left, boundary);
        }
        TH_CHECK(sampled_index >= 0 && isfinite(sl[sampled_index]) && sp[sampled_index] > 0.0f,
                "chain: the sampled token is a live candidate");
        TH_CHECK(fabsf(psum - 1.0f) <= 1e-3f, "chain: probs sum to %g", psum);
    }
    b.n_tokens = 0;
    for (int i = 0; i < 2; i++) {
        batch_add(&b, bos(), 2 + i, 0, true);
    }
    TH_CHECK(llama_decode(ctx, b) == 0, "chain: second decode");
    llama_batch_free(b);
    free(rd);
    free(ref_left);
    free(ref_logit);
    llama_sampler_free(r_bias);
    llama_sampler_free(r_top_k);
    llama_sampler_free(r_top_p);
    llama_sampler_free(r_min_p);
    llama_sampler_free(r_temp);
    llama_free(rctx);
    llama_free(ctx);
    llama_sampler_free(chain);
}

// a sampler that supports the backend only with one output per sequence, counting its calls
struct single_output {
    bool     backend_initialized;
    uint32_t backend_outputs_max_per_seq;
    int      backend_apply_count;
    int      apply_count;
};

static const char * so_name(const struct llama_sampler * smpl) {
    (void) smpl;
    return "single-output-backend";
}
static void so_apply(struct llama_sampler * smpl, llama_token_data_array * cur_p) {
    (void) cur_p;
    ((struct single_output *) smpl->ctx)->apply_count++;
}
static void so_free(struct llama_sampler * smpl) {
    (void) smpl; // the test owns the counters
}
static bool so_backend_init(struct llama_sampler * smpl, ggml_backend_buffer_type_t buft, uint32_t n) {
    (void) buft;
    struct single_output * c = smpl->ctx;
    c->backend_outputs_max_per_seq = n;
    if (n > 1) {
        return false;
    }
    c->backend_initialized = true;
    return true;
}
static void so_backend_apply(struct llama_sampler * smpl, struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct llama_sampler_data * data) {
    (void) ctx;
    (void) gf;
    (void) data;
    ((struct single_output *) smpl->ctx)->backend_apply_count++;
}
static struct llama_sampler_i so_iface = {
    so_name, NULL, so_apply, NULL, NULL, so_free, so_backend_init, NULL, so_backend_apply, NULL, NULL, NULL,
};

static void test_multi_output_cpu(void) {
    const int32_t k = 8;
    for (int variant = 0; variant < 2; variant++) {
        struct single_output so;
        memset(&so, 0, sizeof(so));
        struct llama_sampler * chain = chain_new();
        llama_sampler_chain_add(chain, llama_sampler_init_top_k(k));
        llama_sampler_chain_add(chain, llama_sampler_init(&so_iface, &so));
        llama_sampler_chain_add(chain, llama_sampler_init_dist(88));
        struct llama_sampler_seq_config cfg = { 0, chain };
        if (variant == 0) {
            struct llama_context * ctx = make_ctx(&cfg, 1, 1, 1, 0, 4);
            struct llama_batch b = llama_batch_init(1, 0, 1);
            batch_add(&b, bos(), 0, 0, true);
            TH_CHECK(llama_decode(ctx, b) == 0, "cpu suffix A: decode");
            TH_CHECK(so.backend_initialized, "cpu suffix A: initialised on the backend");
            TH_CHECK(so.backend_outputs_max_per_seq == 1, "cpu suffix A: effective per-seq limit %u",
                    so.backend_outputs_max_per_seq);
            TH_CHECK(so.backend_apply_count > 0 && so.apply_count == 0, "cpu suffix A: counts %d %d",
                    so.backend_apply_count, so.apply_count);
            TH_CHECK(llama_get_sampled_token_ith(ctx, 0) != LLAMA_TOKEN_NULL, "cpu suffix A: sampled");
            llama_batch_free(b);
            llama_free(ctx);
        } else {
            struct llama_context * ctx = make_ctx(&cfg, 1, 1, 2, 0, 0);
            struct llama_batch b = llama_batch_init(2, 0, 1);
            batch_add(&b, bos(), 0, 0, true);
            batch_add(&b, bos(), 1, 0, true);
            TH_CHECK(llama_decode(ctx, b) == 0, "cpu suffix B: decode");
            TH_CHECK(!so.backend_initialized && so.backend_outputs_max_per_seq == 2 && so.backend_apply_count == 0,
                    "cpu suffix B: the sampler stays on the CPU (%d %u %d)", so.backend_initialized,
                    so.backend_outputs_max_per_seq, so.backend_apply_count);
            for (int i = 0; i < 2; i++) {
                TH_CHECK(llama_get_sampled_token_ith(ctx, i) == LLAMA_TOKEN_NULL, "cpu suffix B: no backend token");
                TH_CHECK(llama_get_sampled_logits_count_ith(ctx, i) == (uint32_t) k &&
                         llama_get_sampled_candidates_count_ith(ctx, i) == (uint32_t) k, "cpu suffix B: top_k on backend");
                const llama_token t = llama_sampler_sample(chain, ctx, i);
                TH_CHECK(t >= 0 && t < g_n_vocab, "cpu suffix B: token");
            }
            TH_CHECK(so.apply_count == 2, "cpu suffix B: CPU suffix applied once per output (%d)", so.apply_count);
            llama_batch_free(b);
            llama_free(ctx);
        }
        llama_sampler_free(chain);
    }
}

// ---- kjv seeded references: CPU chain and backend chain reproduce llama.cpp's sampled ids ----------------------

struct kjv_case {
    float temp, top_p, min_p, penalty_repeat;
    int32_t top_k, penalty_last_n;
};

// llama.cpp's common chain without the final dist: penalties, dry, top-n-sigma, top-k, typical, top-p, min-p, xtc,
// temp-ext (samplers whose parameters disable them are no-ops)
static void kjv_add_filters(struct llama_sampler * ch, const struct kjv_case * c, uint32_t seed) {
    llama_sampler_chain_add(ch, llama_sampler_init_penalties(c->penalty_last_n, c->penalty_repeat, 0.0f, 0.0f));
    llama_sampler_chain_add(ch, llama_sampler_init_top_n_sigma(-1.0f));
    llama_sampler_chain_add(ch, llama_sampler_init_top_k(c->top_k));
    llama_sampler_chain_add(ch, llama_sampler_init_typical(1.0f, 1));
    llama_sampler_chain_add(ch, llama_sampler_init_top_p(c->top_p, 1));
    llama_sampler_chain_add(ch, llama_sampler_init_min_p(c->min_p, 1));
    llama_sampler_chain_add(ch, llama_sampler_init_xtc(0.0f, 0.1f, 1, seed));
    llama_sampler_chain_add(ch, llama_sampler_init_temp_ext(c->temp, 0.0f, 1.0f));
}

static struct llama_sampler * kjv_chain(const struct kjv_case * c, uint32_t seed) {
    struct llama_sampler * ch = chain_new();
    kjv_add_filters(ch, c, seed);
    llama_sampler_chain_add(ch, llama_sampler_init_dist(seed));
    return ch;
}

// generates ng tokens after the prompt into out (free running)
static void kjv_generate(const struct kjv_case * c, bool backend, const llama_token * prompt, int np,
        llama_token * out, int ng) {
    struct llama_sampler * ch = kjv_chain(c, 4242);
    struct llama_sampler_seq_config cfg = { 0, ch };
    struct llama_context * ctx = backend ? make_ctx(&cfg, 1, 1, 0, 0, 1) : make_ctx(NULL, 0, 1, 0, 0, 1);
    struct llama_batch b = llama_batch_init(np > 1 ? np : 1, 0, 1);
    for (int i = 0; i < np; i++) {
        batch_add(&b, prompt[i], i, 0, i == np - 1);
    }
    for (int t = 0; t < ng; t++) {
        out[t] = LLAMA_TOKEN_NULL;
    }
    if (llama_decode(ctx, b) == 0) {
        for (int t = 0; t < ng; t++) {
            out[t] = llama_sampler_sample(ch, ctx, -1);
            b.n_tokens = 0;
            batch_add(&b, out[t], np + t, 0, true);
            if (out[t] == LLAMA_TOKEN_NULL || llama_decode(ctx, b) != 0) {
                break;
            }
        }
    }
    llama_batch_free(b);
    llama_free(ctx);
    llama_sampler_free(ch);
}

static int common_prefix(const llama_token * a, const llama_token * b, int n) {
    int k = 0;
    while (k < n && a[k] == b[k]) {
        k++;
    }
    return k;
}

// A draw may pick the neighbouring token only when it lies within this distance (in cumulative probability) of
// the boundary of llama.cpp's token: our logits differ from llama.cpp's in the last bits (attention rounding: F16
// Q and F16 V accumulation in llama.cpp's CPU flash attention), which moves the boundaries of a 2048-entry
// cumulative sum by ~1e-5..1e-4 (switching our own attention between flash and plain moves them by 1e-5..3e-5).
#define KJV_MARGIN_TOL 2e-4

// Fed-reference check of one seeded case: llama.cpp's ids are decoded one by one; at each step our filter chain
// runs on our logits and our dist sampler draws, and it must pick llama.cpp's token unless the uniform lies within
// KJV_MARGIN_TOL of that token's interval. The reference build (August 2026) predates the seeds' "singleton RNG
// fix": its dist returned without a draw when one candidate was left, so here the dist is skipped for a single
// candidate (the library's dist draws once even then, as the seeds require: test-sampling test_dist_singleton_rng).
// Returns the number of near-boundary flips, or -1 on failure.
static int kjv_fed_reference(const struct kjv_case * c, const char * what, const llama_token * pr, int np,
        const llama_token * ge, int ng) {
    struct llama_sampler * filters = chain_new();
    kjv_add_filters(filters, c, 4242);
    struct llama_sampler * dist = llama_sampler_init_dist(4242);
    struct ref_mt rng; // independent copy of the stream to measure where the draw fell
    ref_mt_seed(&rng, 4242);
    struct llama_context * ctx = make_ctx(NULL, 0, 1, 0, 0, 1);
    struct llama_batch b = llama_batch_init(np, 0, 1);
    llama_token_data * cur = malloc((size_t) g_n_vocab * sizeof(*cur));
    int n_flips = 0, n_draws = 0;
    double worst = 0.0;
    for (int i = 0; i < np; i++) {
        batch_add(&b, pr[i], i, 0, i == np - 1);
        llama_sampler_accept(filters, pr[i]);
    }
    bool ok = llama_decode(ctx, b) == 0;
    TH_CHECK(ok, "%s: prompt decode", what);
    for (int t = 0; t < ng && ok; t++) {
        const float * logits = llama_get_logits_ith(ctx, -1);
        for (llama_token i = 0; i < g_n_vocab; i++) {
            cur[i] = (llama_token_data) { i, logits[i], 0.0f };
        }
        llama_token_data_array arr = { cur, (size_t) g_n_vocab, -1, false };
        llama_sampler_apply(filters, &arr);
        TH_CHECK(arr.size > 0, "%s step %d: no candidates left", what, t);
        if (arr.size == 0) {
            break;
        }
        llama_token pick = arr.data[0].id;
        if (arr.size > 1) {
            // where llama.cpp's token sits in our cumulative distribution (dist's numerics: float exp, double sum)
            float mx = arr.data[0].logit;
            for (size_t i = 1; i < arr.size && !arr.sorted; i++) {
                mx = fmaxf(mx, arr.data[i].logit);
            }
            double sum = 0.0, lo = -1.0, hi = -1.0;
            for (size_t i = 0; i < arr.size; i++) {
                const double e = expf(arr.data[i].logit - mx);
                if (arr.data[i].id == ge[t]) {
                    lo = sum;
                    hi = sum + e;
                }
                sum += e;
            }
            const double u = ref_uniform(&rng);
            llama_sampler_apply(dist, &arr);
            n_draws++;
            TH_CHECK(arr.selected >= 0 && (size_t) arr.selected < arr.size, "%s step %d: dist selected nothing", what, t);
            pick = arr.selected >= 0 ? arr.data[arr.selected].id : LLAMA_TOKEN_NULL;
            TH_CHECK(lo >= 0.0, "%s step %d: llama.cpp's token %d is not among our %zu candidates", what, t, ge[t],
                    arr.size);
            if (lo < 0.0) {
                ok = false;
                break;
            }
            lo /= sum;
            hi /= sum;
            if (pick != ge[t]) {
                const double off = u < lo ? lo - u : u - hi;
                worst = fmax(worst, off);
                n_flips++;
                TH_CHECK(off <= KJV_MARGIN_TOL, "%s step %d: picked %d, llama.cpp %d; draw %.9f is %.3g outside "
                        "[%.9f, %.9f] (tolerance %g)", what, t, pick, ge[t], u, off, lo, hi, KJV_MARGIN_TOL);
            } else {
                TH_CHECK(u >= lo - KJV_MARGIN_TOL && u <= hi + KJV_MARGIN_TOL, "%s step %d: draw %.9f vs [%.9f, %.9f]",
                        what, t, u, lo, hi);
            }
        } else {
            TH_CHECK(pick == ge[t], "%s step %d: the only candidate is %d, llama.cpp picked %d", what, t, pick, ge[t]);
        }
        llama_sampler_accept(filters, ge[t]);
        b.n_tokens = 0;
        batch_add(&b, ge[t], np + t, 0, true);
        ok = llama_decode(ctx, b) == 0;
        TH_CHECK(ok, "%s step %d: decode", what, t);
    }
    printf("kjv fed %-58s: %2d draws, %d near-boundary flips (largest %.2g)\n", what, n_draws, n_flips, worst);
    free(cur);
    llama_batch_free(b);
    llama_free(ctx);
    llama_sampler_free(dist);
    llama_sampler_free(filters);
    return ok ? n_flips : -1;
}

static void test_kjv_reference(void) {
    const char * path = th_data_path("reference/kjv/index.json");
    if (!th_require_file(path)) {
        return;
    }
    json_error_t err;
    json_t * root = json_load_file(path, 0, &err);
    TH_CHECK(root != NULL, "cannot parse %s", path);
    json_t * arr = json_object_get(root, "sampling");
    int n_cases = 0, n_flips = 0;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t * jc = json_array_get(arr, i);
        const char * sampler = json_string_value(json_object_get(jc, "sampler"));
        struct kjv_case c = { 0.8f, 0.95f, 0.05f, 1.0f, 40, 64 };
        if (strstr(sampler, "repeat-penalty")) {
            c = (struct kjv_case) { 0.7f, 0.9f, 0.0f, 1.1f, 20, 64 };
        } else if (strstr(sampler, "pure-temp")) {
            c = (struct kjv_case) { 1.0f, 1.0f, 0.0f, 1.0f, 0, 64 };
        }
        json_t * jp = json_object_get(jc, "prompt_ids");
        json_t * jg = json_object_get(jc, "generated_ids");
        const int np = (int) json_array_size(jp), ng = (int) json_array_size(jg);
        llama_token * pr = malloc((size_t) np * sizeof(llama_token));
        llama_token * ge = malloc((size_t) ng * sizeof(llama_token));
        for (int j = 0; j < np; j++) {
            pr[j] = (llama_token) json_integer_value(json_array_get(jp, j));
        }
        for (int j = 0; j < ng; j++) {
            ge[j] = (llama_token) json_integer_value(json_array_get(jg, j));
        }
        char what[160];
        snprintf(what, sizeof(what), "%s '%s'", sampler, json_string_value(json_object_get(jc, "prompt")));
        const int f = kjv_fed_reference(&c, what, pr, np, ge, ng);
        n_flips += f > 0 ? f : 0;

        // free running: the same chain gives the same tokens on the CPU and in the graph (the seeds' dist, which
        // draws for a single candidate too, on both paths)
        llama_token * g_cpu = malloc((size_t) ng * sizeof(llama_token));
        llama_token * g_bk  = malloc((size_t) ng * sizeof(llama_token));
        kjv_generate(&c, false, pr, np, g_cpu, ng);
        kjv_generate(&c, true, pr, np, g_bk, ng);
        const int m_cb = common_prefix(g_cpu, g_bk, ng);
        TH_CHECK(m_cb == ng, "kjv %s: CPU and backend chains agree on %d of %d tokens", what, m_cb, ng);
        free(g_cpu);
        free(g_bk);
        free(pr);
        free(ge);
        n_cases++;
    }
    TH_CHECK(n_cases == 6, "kjv: %d sampling cases", n_cases);
    // 3 flips seen (all pure-temp1.0, full 2048-token distribution); many more would mean a semantic difference
    TH_CHECK(n_flips <= 6, "kjv: %d near-boundary flips over the 6 cases", n_flips);
    json_decref(root);
}

// ---- common_sampler -----------------------------------------------------------------------------------------

static struct common_params_sampling kjv_params(void) {
    struct common_params_sampling p = common_params_sampling_default();
    p.seed = 4242; // llama.cpp's defaults otherwise: top_k 40, top_p 0.95, min_p 0.05, temp 0.8
    return p;
}

// common_sampler with llama.cpp's default chain reproduces the seeded kjv generation of the manual chain, on the
// CPU and with the chain registered as backend sampler (-bs)
static void test_common_sampler(void) {
    struct common_params_sampling p = kjv_params();
    struct common_sampler * g = common_sampler_init(g_model, &p);
    TH_CHECK(g != NULL, "common_sampler_init");
    if (!g) {
        return;
    }
    char desc[512];
    common_sampler_print(g, desc, sizeof(desc));
    // --samplers order (penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature) after the logit bias
    const char * order[] = { "logits -> ", "logit-bias", "penalties", "dry", "top-n-sigma", "top-k", "typical",
                             "top-p", "min-p", "xtc", "temp-ext", "dist" };
    const char * at = desc;
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && at; i++) {
        at = strstr(at, order[i]);
    }
    TH_CHECK(at != NULL && strncmp(desc, "logits -> ", 10) == 0, "common_sampler_print: '%s'", desc);
    TH_CHECK(common_sampler_get_seed(g) == 4242, "common_sampler_get_seed");

    const struct kjv_case c = { 0.8f, 0.95f, 0.05f, 1.0f, 40, 64 };
    const llama_token prompt[5] = { 1, 1025, 261, 1921, 1286 }; // <s> In the beginning
    enum { NG = 24 };
    llama_token manual[NG];
    kjv_generate(&c, false, prompt, 5, manual, NG);

    for (int backend = 0; backend < 2; backend++) {
        struct common_sampler * gs = common_sampler_init(g_model, &p);
        struct llama_context * ctx = make_ctx(NULL, 0, 1, 0, 0, 1);
        if (backend) {
            TH_CHECK(llama_set_sampler(ctx, 0, common_sampler_get(gs)), "common_sampler: set as backend sampler");
        }
        struct llama_batch b = llama_batch_init(8, 0, 1);
        for (int i = 0; i < 5; i++) {
            batch_add(&b, prompt[i], i, 0, i == 4);
        }
        int match = 0;
        if (llama_decode(ctx, b) == 0) {
            for (int t = 0; t < NG; t++) {
                const llama_token tok = common_sampler_sample(gs, ctx, -1, false);
                if (backend && t == 0) {
                    TH_CHECK(llama_get_sampled_token_ith(ctx, -1) == tok, "common_sampler: backend token used");
                }
                common_sampler_accept(gs, tok, true);
                if (tok != manual[t]) {
                    break;
                }
                match++;
                b.n_tokens = 0;
                batch_add(&b, tok, 5 + t, 0, true);
                if (llama_decode(ctx, b) != 0) {
                    break;
                }
            }
        }
        TH_CHECK(match == NG, "common_sampler (%s): %d of %d tokens as the manual chain", backend ? "backend" : "CPU",
                match, NG);
        TH_CHECK(common_sampler_last(gs) == manual[NG - 1], "common_sampler_last");
        llama_batch_free(b);
        llama_free(ctx);
        common_sampler_free(gs);
    }
    common_sampler_free(g);
}

// speculative verification with stochastic backend sampling: drafting (right or wrong drafts) does not change the
// generated tokens (seeds' test_with_and_without_draft), thanks to staged draws, ordered accepts and rollback
static void test_common_sampler_speculative(void) {
    struct common_params_sampling p = kjv_params();
    const llama_token prompt[5] = { 1, 1025, 261, 1921, 1286 };
    enum { NG = 20, N_DRAFT = 3 };

    // plain: one output per decode
    llama_token plain[NG];
    {
        struct common_sampler * gs = common_sampler_init(g_model, &p);
        struct llama_context * ctx = make_ctx(NULL, 0, 1, 0, 0, 1);
        llama_set_sampler(ctx, 0, common_sampler_get(gs));
        struct llama_batch b = llama_batch_init(8, 0, 1);
        for (int i = 0; i < 5; i++) {
            batch_add(&b, prompt[i], i, 0, i == 4);
        }
        TH_CHECK(llama_decode(ctx, b) == 0, "spec: plain prompt");
        for (int t = 0; t < NG; t++) {
            plain[t] = common_sampler_sample(gs, ctx, -1, false);
            common_sampler_accept(gs, plain[t], true);
            b.n_tokens = 0;
            batch_add(&b, plain[t], 5 + t, 0, true);
            TH_CHECK(llama_decode(ctx, b) == 0, "spec: plain decode");
        }
        llama_batch_free(b);
        llama_free(ctx);
        common_sampler_free(gs);
    }

    // speculative: target verifies [last, d0, d1, d2] in one decode; drafts are the plain tokens, every other
    // round with a wrong token in it
    struct common_sampler * gs = common_sampler_init(g_model, &p);
    struct llama_context * ctx = make_ctx(NULL, 0, 1, N_DRAFT + 1, 0, N_DRAFT + 1);
    llama_set_sampler(ctx, 0, common_sampler_get(gs));
    struct llama_batch b = llama_batch_init(8, 0, 1);
    for (int i = 0; i < 4; i++) {
        batch_add(&b, prompt[i], i, 0, false);
    }
    TH_CHECK(llama_decode(ctx, b) == 0, "spec: prompt");
    llama_token got[NG + N_DRAFT + 1];
    int n_got = 0;
    llama_token last = prompt[4];
    llama_pos pos = 4;
    int round = 0;
    size_t n_accepted_drafts = 0;
    while (n_got < NG) {
        llama_token draft[N_DRAFT];
        for (int j = 0; j < N_DRAFT; j++) {
            draft[j] = n_got + j < NG ? plain[n_got + j] : 0;
        }
        if (round % 2 == 1) {
            draft[round % N_DRAFT] = (draft[round % N_DRAFT] + 1) % g_n_vocab;
        }
        b.n_tokens = 0;
        batch_add(&b, last, pos, 0, true);
        for (int j = 0; j < N_DRAFT; j++) {
            batch_add(&b, draft[j], pos + 1 + j, 0, true);
        }
        if (llama_decode(ctx, b) != 0) {
            TH_CHECK(false, "spec: verify decode");
            break;
        }
        const int idxs[N_DRAFT + 1] = { 0, 1, 2, 3 };
        llama_token out[N_DRAFT + 1];
        const size_t n = common_sampler_sample_and_accept_n(gs, ctx, idxs, draft, N_DRAFT, out, false);
        TH_CHECK(n >= 1, "spec: at least one token per round");
        if (n == 0) {
            break;
        }
        n_accepted_drafts += n - 1;
        for (size_t j = 0; j < n; j++) {
            got[n_got++] = out[j];
        }
        // drop the cache entries of rejected drafts: keep last and the accepted ones
        llama_memory_seq_rm(llama_get_memory(ctx), 0, pos + (llama_pos) n, -1);
        pos += (llama_pos) n;
        last = out[n - 1];
        round++;
    }
    const int m = common_prefix(got, plain, NG);
    printf("speculative: %d rounds, %zu drafts accepted, %d/%d tokens equal to plain decoding\n", round,
            n_accepted_drafts, m, NG);
    TH_CHECK(m == NG, "spec: %d of %d tokens equal to plain decoding", m, NG);
    TH_CHECK(n_accepted_drafts > 0, "spec: some drafts were accepted");
    llama_batch_free(b);
    llama_free(ctx);
    common_sampler_free(gs);
}

// rollback: common_sampler_copy restores the state (history and RNG) of a saved clone in place
static void test_common_sampler_copy(void) {
    struct common_params_sampling p = kjv_params();
    p.temp = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    struct common_sampler * gs = common_sampler_init(g_model, &p);
    struct llama_context * ctx = make_ctx(NULL, 0, 1, 0, 0, 1);
    const int idx = decode_prompt(ctx, 0);
    struct common_sampler * saved = common_sampler_clone(gs);
    const llama_token t1 = common_sampler_sample(gs, ctx, idx, false);
    common_sampler_accept(gs, t1, true);
    const llama_token t2 = common_sampler_sample(gs, ctx, idx, false);
    common_sampler_accept(gs, t2, true);
    common_sampler_copy(saved, gs);
    TH_CHECK(common_sampler_last(gs) == LLAMA_TOKEN_NULL, "copy: history restored");
    const llama_token r1 = common_sampler_sample(gs, ctx, idx, false);
    TH_CHECK(r1 == t1, "copy: the same draw after rollback (%d vs %d)", r1, t1);
    // independent check of the first draw: softmax over the logits, the first uniform of mt19937(4242)
    struct ref_mt rng;
    ref_mt_seed(&rng, 4242);
    const double u = ref_uniform(&rng);
    float * pr = malloc((size_t) g_n_vocab * sizeof(float));
    softmax(llama_get_logits_ith(ctx, idx), pr, g_n_vocab);
    double before = 0.0;
    for (llama_token t = 0; t < t1; t++) {
        before += pr[t];
    }
    TH_CHECK(u >= before - 1e-4 && u <= before + pr[t1] + 1e-4, "copy: draw %g outside token %d's [%g, %g]", u, t1,
            before, before + pr[t1]);
    free(pr);
    common_sampler_free(saved);
    common_sampler_free(gs);
    llama_free(ctx);
}

// ---- driver ------------------------------------------------------------------------------------------------

struct test_case {
    const char * name;
    void (*fn)(void);
    bool kjv_only; // needs the kjv model (reference ids)
};

static const struct test_case TESTS[] = {
    { "greedy",                           test_greedy,                           false },
    { "logit_bias",                       test_logit_bias,                       false },
    { "temp",                             test_temp,                             false },
    { "temp_ext",                         test_temp_ext,                         false },
    { "top_k",                            test_top_k,                            false },
    { "top_p",                            test_top_p,                            false },
    { "min_p",                            test_min_p,                            false },
    { "penalties",                        test_penalties,                        false },
    { "dist",                             test_dist,                             false },
    { "dist_and_cpu",                     test_dist_and_cpu,                     false },
    { "set_sampler",                      test_set_sampler,                      false },
    { "mixed",                            test_mixed,                            false },
    { "cpu_mixed",                        test_cpu_mixed,                        false },
    { "multi_sequence",                   test_multi_sequence,                   false },
    { "multi_output_limit",               test_multi_output_limit,               false },
    { "multi_sequence_multi_output_dist", test_multi_sequence_multi_output_dist, false },
    { "multi_output_dist_transaction",    test_multi_output_dist_transaction,    false },
    { "multi_output_sampling_chain",      test_multi_output_sampling_chain,      false },
    { "multi_output_cpu",                 test_multi_output_cpu,                 false },
    { "kjv_reference",                    test_kjv_reference,                    true  },
    { "common_sampler",                   test_common_sampler,                   true  },
    { "common_sampler_speculative",       test_common_sampler_speculative,       true  },
    { "common_sampler_copy",              test_common_sampler_copy,              false },
};

int main(int argc, char ** argv) {
    const char * model_path = NULL;
    const char * only[32];
    int n_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            model_path = argv[++i];
        } else if (strcmp(argv[i], "--test") == 0 && i + 1 < argc && n_only < 32) {
            only[n_only++] = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--model PATH] [--test NAME]...\n", argv[0]);
            return 2;
        }
    }
    const bool is_kjv = model_path == NULL;
    if (!model_path) {
        model_path = th_data_path("models/kjv/kjv-target-f32.gguf");
    } else if (model_path[0] != '/') {
        model_path = th_data_path("%s", model_path);
    }
    if (!th_require_file(model_path)) {
        return th_finish();
    }
    llama_log_set(quiet_log, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    g_model = llama_model_load_from_file(model_path, mp);
    TH_CHECK(g_model != NULL, "load %s", model_path);
    if (!g_model) {
        return th_finish();
    }
    g_vocab = llama_model_get_vocab(g_model);
    g_n_vocab = llama_vocab_n_tokens(g_vocab);
    for (size_t t = 0; t < sizeof(TESTS) / sizeof(TESTS[0]); t++) {
        bool run = n_only == 0;
        for (int k = 0; k < n_only; k++) {
            run |= strcmp(only[k], TESTS[t].name) == 0;
        }
        if (!run || (TESTS[t].kjv_only && !is_kjv)) {
            continue;
        }
        const int failed_before = th_n_failed;
        TESTS[t].fn();
        printf("%-34s %s\n", TESTS[t].name, th_n_failed == failed_before ? "PASSED" : "FAILED");
    }
    llama_model_free(g_model);
    llama_backend_free();
    return th_finish();
}
