// CPU samplers: a C port of llama.cpp's tests/test-sampling.cpp (same inputs, assertions and tolerances), plus
// checks of the libstdc++-compatible RNG, the dist sampler's transactional draws, the chain API and bad input.

#include "ggml.h"
#include "ggml-cpu.h"
#include "llama.h"
#include "llama-rng.h"
#include "llama-sampler.h"

#include "harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ARR(...) ((const float[]){ __VA_ARGS__ })
#define TOK(...) ((const llama_token[]){ __VA_ARGS__ })

//
// sampler_tester of the original test
//

struct tester {
    llama_token_data     * base;  // owned; cur_p.data may point inside it (xtc moves the pointer)
    llama_token_data_array cur_p;
    const float          * expected;
    size_t                 n_expected;
};

// candidates with logit = log(p) and p = probs[i]
static void tester_init_probs(struct tester * t, const float * probs, size_t n, const float * expected, size_t n_expected) {
    t->base = malloc(n * sizeof(llama_token_data));
    for (size_t i = 0; i < n; ++i) {
        t->base[i].id    = (llama_token) i;
        t->base[i].logit = logf(probs[i]);
        t->base[i].p     = probs[i];
    }
    t->cur_p      = (llama_token_data_array){ t->base, n, -1, false };
    t->expected   = expected;
    t->n_expected = n_expected;
}

// candidates with logit = log(id)
static void tester_init_vocab(struct tester * t, size_t n_vocab) {
    t->base = malloc(n_vocab * sizeof(llama_token_data));
    for (size_t i = 0; i < n_vocab; ++i) {
        t->base[i].id    = (llama_token) i;
        t->base[i].logit = logf((float) i);
        t->base[i].p     = 0.0f;
    }
    t->cur_p      = (llama_token_data_array){ t->base, n_vocab, -1, false };
    t->expected   = NULL;
    t->n_expected = 0;
}

static void tester_apply(struct tester * t, struct llama_sampler * smpl) {
    TH_EXPECT(smpl != NULL, "sampler init failed");
    llama_sampler_apply(smpl, &t->cur_p);
    llama_sampler_free(smpl);
}

static void tester_check(struct tester * t, const char * what) {
    TH_CHECK(t->cur_p.size == t->n_expected, "%s: size %zu, expected %zu", what, t->cur_p.size, t->n_expected);
    if (t->cur_p.size != t->n_expected) {
        return;
    }
    bool ok = true;
    for (size_t i = 0; i < t->cur_p.size; ++i) {
        if (!(fabs(t->cur_p.data[i].p - t->expected[i]) < 1e-5)) {
            ok = false;
        }
    }
    TH_CHECK(ok, "%s: probabilities differ", what);
    if (!ok) {
        for (size_t i = 0; i < t->cur_p.size; ++i) {
            fprintf(stderr, "  %d: p %f (expected %f) logit %f\n", t->cur_p.data[i].id, (double) t->cur_p.data[i].p,
                    (double) t->expected[i], (double) t->cur_p.data[i].logit);
        }
    }
}

static void tester_free(struct tester * t) {
    free(t->base);
}

static void test_temp(const char * what, const float * probs, size_t n, const float * expected, size_t n_expected, float temp) {
    struct tester t;
    tester_init_probs(&t, probs, n, expected, n_expected);
    tester_apply(&t, llama_sampler_init_temp(temp));
    tester_apply(&t, llama_sampler_init_dist(0));
    tester_check(&t, what);
    tester_free(&t);
}

static void test_temp_ext(const char * what, const float * probs, size_t n, const float * expected, size_t n_expected, float temp, float delta, float exponent) {
    struct tester t;
    tester_init_probs(&t, probs, n, expected, n_expected);
    tester_apply(&t, llama_sampler_init_temp_ext(temp, delta, exponent));
    tester_apply(&t, llama_sampler_init_dist(0));
    tester_check(&t, what);
    tester_free(&t);
}

static void test_top_k(const char * what, const float * probs, size_t n, const float * expected, size_t n_expected, int k) {
    struct tester t;
    tester_init_probs(&t, probs, n, expected, n_expected);
    tester_apply(&t, llama_sampler_init_top_k(k));
    tester_apply(&t, llama_sampler_init_dist(0));
    tester_check(&t, what);
    tester_free(&t);
}

static void test_top_p(const char * what, const float * probs, size_t n, const float * expected, size_t n_expected, float p) {
    struct tester t;
    tester_init_probs(&t, probs, n, expected, n_expected);
    tester_apply(&t, llama_sampler_init_top_p(p, 0));
    tester_apply(&t, llama_sampler_init_dist(0));
    tester_check(&t, what);
    tester_free(&t);
}

static void test_min_p(const char * what, const float * probs, size_t n, const float * expected, size_t n_expected, float p) {
    struct tester t;
    tester_init_probs(&t, probs, n, expected, n_expected);
    tester_apply(&t, llama_sampler_init_min_p(p, 0));
    tester_apply(&t, llama_sampler_init_dist(0));
    tester_check(&t, what);
    tester_free(&t);
}

static void test_xtc(const char * what, const float * probs, size_t n, const float * expected, size_t n_expected, float p, float thr) {
    struct tester t;
    tester_init_probs(&t, probs, n, expected, n_expected);
    tester_apply(&t, llama_sampler_init_xtc(p, thr, 0, 0));
    tester_check(&t, what);
    tester_free(&t);
}

static void test_typical(const char * what, const float * probs, size_t n, const float * expected, size_t n_expected, float p) {
    struct tester t;
    tester_init_probs(&t, probs, n, expected, n_expected);
    tester_apply(&t, llama_sampler_init_typical(p, 0));
    tester_check(&t, what);
    tester_free(&t);
}

static void test_penalties(const char * what, const float * probs, size_t n, const llama_token * last, size_t n_last,
        const float * expected, size_t n_expected, float repeat, float freq, float present) {
    TH_CHECK(n == n_expected, "%s: test table", what);
    struct tester t;
    tester_init_probs(&t, probs, n, expected, n_expected);
    struct llama_sampler * smpl = llama_sampler_init_penalties((int32_t) n_last, repeat, freq, present);
    for (size_t i = 0; i < n_last; ++i) {
        llama_sampler_accept(smpl, last[i]);
    }
    tester_apply(&t, smpl);
    tester_apply(&t, llama_sampler_init_dist(0));
    tester_check(&t, what);
    tester_free(&t);
}

static void test_dry(const char * what, const float * probs, size_t n, const llama_token * last, size_t n_last,
        const float * expected, size_t n_expected, float mult, float base, int allowed_length, int last_n,
        const llama_token * const * breakers, const size_t * breaker_lens, size_t n_breakers) {
    TH_CHECK(n == n_expected, "%s: test table", what);
    struct tester t;
    tester_init_probs(&t, probs, n, expected, n_expected);
    struct llama_sampler * smpl = llama_sampler_init_dry_testing(mult, base, allowed_length, last_n, breakers, breaker_lens, n_breakers);
    for (size_t i = 0; i < n_last; ++i) {
        llama_sampler_accept(smpl, last[i]);
    }
    tester_apply(&t, smpl);
    tester_apply(&t, llama_sampler_init_dist(0));
    tester_check(&t, what);
    tester_free(&t);
}

static void test_top_n_sigma(const char * what, const float * probs, size_t n, const float * expected, size_t n_expected, int nsig) {
    struct tester t;
    tester_init_probs(&t, probs, n, expected, n_expected);
    tester_apply(&t, llama_sampler_init_top_n_sigma((float) nsig));
    tester_apply(&t, llama_sampler_init_dist(0));
    tester_check(&t, what);
    tester_free(&t);
}

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

static void test_sampler_queue(size_t n_vocab, const char * seq, int top_k, float top_p, float min_p) {
    struct tester t;
    tester_init_vocab(&t, n_vocab);

    llama_token min_token_id = 0;
    const llama_token max_token_id = (llama_token) n_vocab - 1;
    bool ok = true;

    for (const char * s = seq; *s; ++s) {
        switch (*s) {
            case 'k': tester_apply(&t, llama_sampler_init_top_k(top_k)); break;
            case 'p': tester_apply(&t, llama_sampler_init_top_p(top_p, 1)); break;
            case 'm': tester_apply(&t, llama_sampler_init_min_p(min_p, 1)); break;
            default : TH_CHECK(false, "unknown sampler %c", *s); tester_free(&t); return;
        }
        tester_apply(&t, llama_sampler_init_dist(0));

        const llama_token_data_array * cur_p = &t.cur_p;
        const int size = (int) cur_p->size;

        if (*s == 'k') {
            const int expected_size = imin(size, top_k);
            min_token_id = imax(min_token_id, (llama_token) n_vocab - top_k);

            ok = ok && size == expected_size;
            ok = ok && cur_p->data[0].id == max_token_id;
            ok = ok && cur_p->data[expected_size - 1].id == min_token_id;
        } else if (*s == 'p') {
            const int softmax_divisor = (int) (n_vocab * (n_vocab - 1) / 2) - min_token_id * (min_token_id - 1) / 2;
            const int softmax_numerator_target = (int) ceilf(top_p * (float) softmax_divisor);

            min_token_id = (llama_token) n_vocab;
            int expected_size = 0;
            int cumsum = 0;
            do { // at least one token is always kept
                min_token_id--;
                expected_size++;
                cumsum += min_token_id;
            } while (cumsum < softmax_numerator_target);

            // token 0 has p == 0: top-p stops as soon as the sum is reached, so it is kept with token 1
            if (min_token_id == 1) {
                min_token_id--;
                expected_size += 1;
            }

            ok = ok && size == expected_size;
            ok = ok && (!cur_p->sorted || cur_p->data[0].id == max_token_id);
            ok = ok && (!cur_p->sorted || cur_p->data[expected_size - 1].id == min_token_id);
        } else if (*s == 'm') {
            int expected_size = (int) ceilf((1.0f - min_p) * (float) n_vocab);
            expected_size = imax(expected_size, 1);
            expected_size = imin(expected_size, size);

            min_token_id = (llama_token) floorf(min_p * (float) n_vocab);
            min_token_id = imax(min_token_id, 1);
            min_token_id = imax(min_token_id, (llama_token) n_vocab - size);
            min_token_id = imin(min_token_id, (llama_token) n_vocab - 1);

            ok = ok && size == expected_size;
            ok = ok && (!cur_p->sorted || cur_p->data[0].id == max_token_id);
            ok = ok && (!cur_p->sorted || cur_p->data[expected_size - 1].id == min_token_id);
        }
        if (!ok) {
            fprintf(stderr, "  after '%c': size %d first %d last %d sorted %d\n", *s, size, cur_p->data[0].id,
                    cur_p->data[size - 1].id, cur_p->sorted);
            break;
        }
    }

    TH_CHECK(ok, "sampler queue %s n_vocab=%zu top_k=%d top_p=%f min_p=%f", seq, n_vocab, top_k, (double) top_p, (double) min_p);
    tester_free(&t);
}

//
// the seed test: a dist sampler consumes exactly one draw even for a single candidate
//

static llama_token sample_dist(struct llama_sampler * smpl, const float * logits, size_t n) {
    llama_token_data * cur = malloc(n * sizeof(*cur));
    for (size_t i = 0; i < n; ++i) {
        cur[i] = (llama_token_data){ (llama_token) i, logits[i], 0.0f };
    }
    llama_token_data_array cur_p = { cur, n, -1, false };
    llama_sampler_apply(smpl, &cur_p);
    TH_EXPECT(cur_p.selected >= 0 && (size_t) cur_p.selected < cur_p.size, "selected %lld of %zu", (long long) cur_p.selected, cur_p.size);
    const llama_token id = (cur_p.selected >= 0 && (size_t) cur_p.selected < cur_p.size) ? cur_p.data[cur_p.selected].id : LLAMA_TOKEN_NULL;
    free(cur);
    return id;
}

static void test_dist_singleton_rng(void) {
    struct llama_sampler * singleton = llama_sampler_init_dist(4242);
    struct llama_sampler * control   = llama_sampler_init_dist(4242);

    sample_dist(singleton, ARR(0.0f), 1);
    sample_dist(control,   ARR(0.0f, 0.0f), 2);

    float logits[256] = { 0 };
    bool same = true;
    for (int i = 0; i < 4; ++i) {
        same = same && sample_dist(singleton, logits, 256) == sample_dist(control, logits, 256);
    }
    TH_CHECK(same, "a single-candidate draw must consume exactly one random number");

    llama_sampler_free(singleton);
    llama_sampler_free(control);
}

//
// RNG against libstdc++
//

static void test_rng(void) {
    // ISO C++ [rand.predef]: the 10000th invocation of a default-constructed mt19937 (seed 5489) yields 4123659995
    {
        struct llama_mt19937 g;
        llama_mt19937_seed(&g, 5489u);
        uint32_t x = 0;
        for (int i = 0; i < 10000; ++i) {
            x = llama_mt19937_next(&g);
        }
        TH_CHECK(x == 4123659995u, "10000th output %u", x);
    }

    // The values below were printed by a C++ program built with g++ 12.2 / libstdc++ (Debian 12) in /tmp:
    //   std::mt19937 g(4242); g() x5
    //   std::mt19937 g(88);   std::uniform_real_distribution<double>(0,1)(g) x4   (printf %a)
    //   std::mt19937 g(1337); std::uniform_real_distribution<float>(0,1)(g) x4    (printf %a)
    //   std::mt19937 g(95);   std::discrete_distribution<int>({.1f,.25f,.05f,.3f,.3f})(g) x16, then g()
    //   std::mt19937 g(7);    std::discrete_distribution<int>({1.f})(g), then g()
    //   std::mt19937 g(1); g(); g.seed(2); g()
    {
        struct llama_mt19937 g;
        llama_mt19937_seed(&g, 4242);
        const uint32_t want[5] = { 1395647406u, 3472777710u, 4039049869u, 1035264657u, 3925634230u };
        bool ok = true;
        for (int i = 0; i < 5; ++i) {
            ok = ok && llama_mt19937_next(&g) == want[i];
        }
        TH_CHECK(ok, "mt19937(4242) stream");
    }
    {
        struct llama_mt19937 g;
        llama_mt19937_seed(&g, 88);
        const double want[4] = { 0x1.376332414b8bdp-1, 0x1.d0d4136303a92p-1, 0x1.4e09b7290e82cp-1, 0x1.71c74c7dcae5ep-1 };
        bool ok = true;
        for (int i = 0; i < 4; ++i) {
            const double u = llama_rng_uniform_double(&g);
            ok = ok && u == want[i];
        }
        TH_CHECK(ok, "uniform_real_distribution<double> with mt19937(88)");
    }
    {
        struct llama_mt19937 g;
        llama_mt19937_seed(&g, 1337);
        const float want[4] = { 0x1.0c5032p-2f, 0x1.1efdc2p-1f, 0x1.44fc1ap-3f, 0x1.b36128p-3f };
        bool ok = true;
        for (int i = 0; i < 4; ++i) {
            ok = ok && llama_rng_uniform_float(&g) == want[i];
        }
        TH_CHECK(ok, "uniform_real_distribution<float> with mt19937(1337)");
    }
    {
        struct llama_mt19937 g;
        llama_mt19937_seed(&g, 95);
        const float p[5] = { 0.1f, 0.25f, 0.05f, 0.3f, 0.3f };
        const int want[16] = { 1, 3, 1, 1, 4, 3, 3, 3, 3, 3, 1, 3, 2, 3, 3, 4 };
        double cum[5];
        bool ok = true;
        for (int i = 0; i < 16; ++i) {
            ok = ok && llama_rng_discrete(&g, p, 1, 5, cum) == want[i];
        }
        TH_CHECK(ok, "discrete_distribution with mt19937(95)");
        TH_CHECK(llama_mt19937_next(&g) == 1099891614u, "discrete_distribution uses two words per draw");
    }
    {
        struct llama_mt19937 g;
        llama_mt19937_seed(&g, 7);
        const float p[1] = { 1.0f };
        double cum[1];
        TH_CHECK(llama_rng_discrete(&g, p, 1, 1, cum) == 0, "single weight");
        TH_CHECK(llama_mt19937_next(&g) == 327741615u, "a single weight draws nothing");
    }
    {
        struct llama_mt19937 g;
        llama_mt19937_seed(&g, 1);
        (void) llama_mt19937_next(&g);
        llama_mt19937_seed(&g, 2);
        TH_CHECK(llama_mt19937_next(&g) == 1872583848u, "reseeding restarts the stream");
    }
}

// the dist sampler selects the first index whose running sum of softmax weights reaches u * total, where u is the
// next uniform double of mt19937(seed): check that against a direct computation with the RNG
static void test_dist_reference(void) {
    const uint32_t seeds[3] = { 88, 1337, 4242 };
    for (int si = 0; si < 3; ++si) {
        struct llama_sampler * smpl = llama_sampler_init_dist(seeds[si]);
        struct llama_mt19937 g;
        llama_mt19937_seed(&g, seeds[si]);
        TH_CHECK(llama_sampler_get_seed(smpl) == seeds[si], "get_seed");

        float logits[64];
        bool ok = true;
        for (int round = 0; round < 50; ++round) {
            for (int i = 0; i < 64; ++i) {
                logits[i] = (float) ((i * 37 + round * 11) % 23) * 0.25f - 2.0f;
            }
            float mx = logits[0];
            for (int i = 1; i < 64; ++i) {
                mx = fmaxf(mx, logits[i]);
            }
            double w[64], total = 0.0;
            for (int i = 0; i < 64; ++i) {
                w[i] = (double) expf(logits[i] - mx);
                total += w[i];
            }
            const double u = llama_rng_uniform_double(&g);
            int want = 63;
            double run = 0.0;
            for (int i = 0; i < 64; ++i) {
                run += w[i];
                if (run >= total * u) {
                    want = i;
                    break;
                }
            }
            ok = ok && sample_dist(smpl, logits, 64) == want;
        }
        TH_CHECK(ok, "dist(%u) follows the mt19937 stream", seeds[si]);
        llama_sampler_free(smpl);
    }

    // LLAMA_DEFAULT_SEED: a random seed is chosen and reported
    struct llama_sampler * a = llama_sampler_init_dist(LLAMA_DEFAULT_SEED);
    struct llama_sampler * b = llama_sampler_init_dist(llama_sampler_get_seed(a));
    float logits[256];
    for (int i = 0; i < 256; ++i) {
        logits[i] = (float) (i % 7);
    }
    bool same = true;
    for (int i = 0; i < 8; ++i) {
        same = same && sample_dist(a, logits, 256) == sample_dist(b, logits, 256);
    }
    TH_CHECK(same, "the seed reported for LLAMA_DEFAULT_SEED reproduces the stream");
    llama_sampler_free(a);
    llama_sampler_free(b);
}

// staged backend draws: rejected outputs do not advance the real stream; clone/copy roll the state back
// (the CPU side of SEEDS-SPEC §3.1 multi_output_dist_transaction)
static void test_dist_transactions(void) {
    const uint32_t seed = 95;
    struct llama_mt19937 g;
    llama_mt19937_seed(&g, seed);
    float randoms[4];
    for (int i = 0; i < 4; ++i) {
        randoms[i] = (float) llama_rng_uniform_double(&g);
    }

    struct llama_sampler * chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(chain, llama_sampler_init_temp(10.0f));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(seed));
    struct llama_sampler * dist = llama_sampler_chain_get(chain, 1);
    TH_CHECK(llama_sampler_is_dist(dist), "chain_get(1) is the dist sampler");
    llama_sampler_dist_set_transactional(dist, true);

    float u[3];
    // (a) 3 outputs drawn, none accepted
    llama_sampler_backend_begin(dist);
    llama_sampler_dist_draw_backend(dist, u, 3);
    TH_CHECK(u[0] == randoms[0] && u[1] == randoms[1] && u[2] == randoms[2], "(a) staged draws follow the stream");

    // (b) next decode replays; two outputs accepted
    llama_sampler_backend_begin(dist);
    llama_sampler_dist_draw_backend(dist, u, 3);
    TH_CHECK(u[0] == randoms[0] && u[1] == randoms[1], "(b) unaccepted draws are discarded");
    llama_sampler_accept(chain, 1);
    llama_sampler_accept(chain, 2);

    // (c) a clone saves the state; one output accepted
    struct llama_sampler * saved = llama_sampler_clone(chain);
    TH_CHECK(saved != NULL && llama_sampler_chain_n(saved) == 2, "clone of the chain");
    {
        // begin on the chain recurses into its backend prefix only; here the entries are CPU ones, so call dist
        llama_sampler_backend_begin(dist);
        llama_sampler_dist_draw_backend(dist, u, 3);
        TH_CHECK(u[0] == randoms[2], "(c) after two commits the next draw is the third");
        llama_sampler_accept(chain, 3);
    }

    // (d) copy the saved state back: the same draw again
    llama_sampler_copy(saved, chain);
    llama_sampler_backend_begin(dist);
    llama_sampler_dist_draw_backend(dist, u, 1);
    TH_CHECK(u[0] == randoms[2], "(d) rollback with llama_sampler_copy restores the stream");
    TH_CHECK(llama_sampler_chain_get(chain, 1) == dist, "copy_state keeps the destination's samplers");

    // non-transactional: draws come from the real stream directly and accept does not draw
    struct llama_sampler * d2 = llama_sampler_init_dist(seed);
    llama_sampler_dist_draw_backend(d2, u, 2);
    llama_sampler_accept(d2, 0);
    llama_sampler_dist_draw_backend(d2, u + 2, 1);
    TH_CHECK(u[0] == randoms[0] && u[1] == randoms[1] && u[2] == randoms[2], "non-transactional draws");
    // reset re-seeds
    llama_sampler_reset(d2);
    llama_sampler_dist_draw_backend(d2, u, 1);
    TH_CHECK(u[0] == randoms[0], "reset restarts the stream");

    llama_sampler_free(d2);
    llama_sampler_free(saved);
    llama_sampler_free(chain);
}

//
// chain API, clone/copy and state
//

static void test_chain_api(void) {
    struct llama_sampler_chain_params params = llama_sampler_chain_default_params();
    TH_CHECK(params.no_perf == true, "default no_perf");
    params.no_perf = false;
    struct llama_sampler * chain = llama_sampler_chain_init(params);
    TH_CHECK(strcmp(llama_sampler_name(chain), "chain") == 0, "chain name");
    TH_CHECK(llama_sampler_chain_get(chain, -1) == chain, "chain_get(-1) probes a chain");
    TH_CHECK(llama_sampler_chain_n(chain) == 0, "empty chain");

    llama_sampler_chain_add(chain, llama_sampler_init_top_k(40));
    llama_sampler_chain_add(chain, llama_sampler_init_top_p(0.95f, 1));
    llama_sampler_chain_add(chain, llama_sampler_init_min_p(0.05f, 1));
    llama_sampler_chain_add(chain, llama_sampler_init_temp(0.8f));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(1234));
    TH_CHECK(llama_sampler_chain_n(chain) == 5, "5 samplers");
    TH_CHECK(strcmp(llama_sampler_name(llama_sampler_chain_get(chain, 0)), "top-k") == 0, "names");
    TH_CHECK(strcmp(llama_sampler_name(llama_sampler_chain_get(chain, 4)), "dist") == 0, "names");
    TH_CHECK(llama_sampler_chain_get(chain, 5) == NULL && llama_sampler_chain_get(chain, -2) == NULL, "out of range");
    TH_CHECK(llama_sampler_get_seed(chain) == 1234, "chain seed is the dist seed");

    struct llama_sampler * top_k = llama_sampler_chain_get(chain, 0);
    TH_CHECK(llama_sampler_chain_get(top_k, -1) == NULL, "a non-chain is not a chain");

    // disabled settings give named no-op samplers
    struct llama_sampler * e1 = llama_sampler_init_top_k(0);
    struct llama_sampler * e2 = llama_sampler_init_temp(1.0f);
    struct llama_sampler * e3 = llama_sampler_init_penalties(64, 1.0f, 0.0f, 0.0f);
    TH_CHECK(strcmp(llama_sampler_name(e1), "?top-k") == 0 && strcmp(llama_sampler_name(e2), "?temp") == 0 &&
             strcmp(llama_sampler_name(e3), "?penalties") == 0, "empty sampler names");
    llama_sampler_free(e1);
    llama_sampler_free(e2);
    llama_sampler_free(e3);

    // clone: same selections from the same state
    struct llama_sampler * clone = llama_sampler_clone(chain);
    float logits[1000];
    for (int i = 0; i < 1000; ++i) {
        logits[i] = sinf((float) i * 0.37f) * 4.0f;
    }
    bool same = true;
    for (int r = 0; r < 20; ++r) {
        same = same && sample_dist(chain, logits, 1000) == sample_dist(clone, logits, 1000);
    }
    TH_CHECK(same, "a cloned chain makes the same choices");

    // remove: the chain no longer owns it
    struct llama_sampler * removed = llama_sampler_chain_remove(chain, 3);
    TH_CHECK(removed && strcmp(llama_sampler_name(removed), "temp") == 0 && llama_sampler_chain_n(chain) == 4, "remove");
    TH_CHECK(llama_sampler_chain_remove(chain, 7) == NULL, "remove out of range");
    llama_sampler_free(removed);

    // accept counts and timing (no_perf = false)
    llama_sampler_accept(chain, 3);
    llama_sampler_accept(chain, 4);
    struct llama_perf_sampler_data perf = llama_perf_sampler(chain);
    TH_CHECK(perf.n_sample == 2 && perf.t_sample_ms >= 0.0, "perf counters");
    llama_perf_sampler_reset(chain);
    TH_CHECK(llama_perf_sampler(chain).n_sample == 0, "perf reset");

    llama_sampler_free(clone);
    llama_sampler_free(chain);
}

// samplers without copy_state are copied through clone; penalties and mirostat carry their history
static void test_copy_state(void) {
    struct llama_sampler * a = llama_sampler_init_penalties(3, 50.0f, 0.0f, 0.0f);
    struct llama_sampler * b = llama_sampler_init_penalties(3, 50.0f, 0.0f, 0.0f);
    llama_sampler_accept(a, 1);
    llama_sampler_accept(a, 2);
    llama_sampler_accept(a, 3);
    llama_sampler_accept(a, 4); // window of 3: token 1 left
    llama_sampler_copy(a, b);
    struct llama_sampler * c = llama_sampler_clone(a);

    struct llama_sampler * each[3] = { a, b, c };
    for (int s = 0; s < 3; ++s) {
        llama_token_data cur[8];
        for (int i = 0; i < 8; ++i) {
            cur[i] = (llama_token_data){ i, 1.0f, 0.0f };
        }
        llama_token_data_array cur_p = { cur, 8, -1, false };
        llama_sampler_apply(each[s], &cur_p);
        const bool ok = cur[0].logit == 1.0f && cur[1].logit == 1.0f && cur[2].logit == 1.0f / 50.0f &&
                        cur[3].logit == 1.0f / 50.0f && cur[4].logit == 1.0f / 50.0f && cur[5].logit == 1.0f;
        TH_CHECK(ok, "penalties window after copy/clone (sampler %d)", s);
    }
    llama_sampler_reset(b);
    {
        llama_token_data cur[8];
        for (int i = 0; i < 8; ++i) {
            cur[i] = (llama_token_data){ i, 1.0f, 0.0f };
        }
        llama_token_data_array cur_p = { cur, 8, -1, false };
        llama_sampler_apply(b, &cur_p);
        TH_CHECK(cur[2].logit == 1.0f && cur[4].logit == 1.0f, "reset clears the history");
    }
    llama_sampler_free(a);
    llama_sampler_free(b);
    llama_sampler_free(c);

    // mirostat v2 via the clone path of llama_sampler_copy
    struct llama_sampler * m1 = llama_sampler_init_mirostat_v2(42, 5.0f, 0.1f);
    struct llama_sampler * m2 = llama_sampler_init_mirostat_v2(42, 5.0f, 0.1f);
    float logits[300];
    for (int i = 0; i < 300; ++i) {
        logits[i] = cosf((float) i * 0.11f) * 3.0f;
    }
    for (int r = 0; r < 5; ++r) {
        sample_dist(m1, logits, 300);
    }
    llama_sampler_copy(m1, m2);
    bool same = true;
    for (int r = 0; r < 10; ++r) {
        same = same && sample_dist(m1, logits, 300) == sample_dist(m2, logits, 300);
    }
    TH_CHECK(same, "mirostat-v2 state (mu, rng) copied");
    TH_CHECK(llama_sampler_get_seed(m1) == 42, "mirostat-v2 seed");
    llama_sampler_free(m1);
    llama_sampler_free(m2);

    // copying between different types is refused and leaves dst usable
    struct llama_sampler * g = llama_sampler_init_greedy();
    struct llama_sampler * d = llama_sampler_init_dist(5);
    llama_sampler_copy(g, d);
    TH_CHECK(strcmp(llama_sampler_name(d), "dist") == 0, "type mismatch is a no-op");
    llama_sampler_copy(NULL, d);
    llama_sampler_copy(d, d);
    llama_sampler_free(g);
    llama_sampler_free(d);
}

static void test_misc_samplers(void) {
    // greedy picks the first maximum
    {
        struct llama_sampler * g = llama_sampler_init_greedy();
        TH_CHECK(sample_dist(g, ARR(0.5f, 2.0f, -1.0f, 2.0f), 4) == 1, "greedy");
        llama_sampler_free(g);
    }
    // logit bias on in-order and shuffled candidates
    {
        const llama_logit_bias bias[2] = { { 2, 5.0f }, { 0, -INFINITY } };
        struct llama_sampler * lb = llama_sampler_init_logit_bias(4, 2, bias);
        llama_token_data cur[4] = { { 0, 1.0f, 0 }, { 1, 1.0f, 0 }, { 2, 1.0f, 0 }, { 3, 1.0f, 0 } };
        llama_token_data_array cur_p = { cur, 4, -1, false };
        llama_sampler_apply(lb, &cur_p);
        TH_CHECK(cur[2].logit == 6.0f && cur[0].logit == -INFINITY && cur[1].logit == 1.0f, "logit bias in order");
        llama_token_data shuf[3] = { { 3, 1.0f, 0 }, { 2, 1.0f, 0 }, { 0, 1.0f, 0 } };
        cur_p = (llama_token_data_array){ shuf, 3, -1, false };
        llama_sampler_apply(lb, &cur_p);
        TH_CHECK(shuf[1].logit == 6.0f && shuf[2].logit == -INFINITY && shuf[0].logit == 1.0f, "logit bias shuffled");
        llama_sampler_free(lb);
        TH_CHECK(llama_sampler_init_logit_bias(4, 1, NULL) == NULL, "NULL biases are rejected");
    }
    // mirostat selects among the top candidates and updates mu; deterministic per seed
    {
        struct llama_sampler * m1 = llama_sampler_init_mirostat(500, 7, 5.0f, 0.1f, 100);
        struct llama_sampler * m2 = llama_sampler_init_mirostat(500, 7, 5.0f, 0.1f, 100);
        float logits[500];
        for (int i = 0; i < 500; ++i) {
            logits[i] = -0.02f * (float) i + 0.3f * sinf((float) i);
        }
        bool same = true;
        for (int r = 0; r < 10; ++r) {
            const llama_token t = sample_dist(m1, logits, 500);
            same = same && t == sample_dist(m2, logits, 500) && t >= 0 && t < 500;
        }
        TH_CHECK(same, "mirostat is deterministic for a seed");
        llama_sampler_free(m1);
        llama_sampler_free(m2);
    }
    // adaptive-p: disabled target samples from the distribution; enabled keeps its EMA across accept
    {
        struct llama_sampler * ap = llama_sampler_init_adaptive_p(0.3f, 0.9f, 11);
        float logits[50];
        for (int i = 0; i < 50; ++i) {
            logits[i] = -0.1f * (float) i;
        }
        for (int r = 0; r < 5; ++r) {
            const llama_token t = sample_dist(ap, logits, 50);
            TH_EXPECT(t >= 0 && t < 50, "adaptive-p token %d", t);
            llama_sampler_accept(ap, t);
        }
        struct llama_sampler * ap2 = llama_sampler_clone(ap);
        TH_CHECK(sample_dist(ap, logits, 50) == sample_dist(ap2, logits, 50), "adaptive-p clone");
        llama_sampler_free(ap);
        llama_sampler_free(ap2);
    }
    // the grammar sampler needs the vocabulary (llama-grammar-sampler.c): tests/test-grammar.c covers it
}

// seeded samplers that draw through std::discrete_distribution / uniform_real_distribution<float>, against an
// independent C++ reference built with g++ 12.2 / libstdc++ in /tmp (Mirostat 2.0 written from the paper with
// std::sort + std::discrete_distribution; XTC coin flips as uniform_real_distribution<float>(rng) <= p)
static void test_seeded_reference(void) {
    {
        struct llama_sampler * m = llama_sampler_init_mirostat_v2(42, 3.0f, 0.1f);
        const llama_token want[12] = { 10, 17, 16, 34, 5, 17, 5, 11, 17, 28, 17, 16 };
        float logits[40];
        for (int i = 0; i < 40; ++i) {
            logits[i] = 0.173f * (float) ((i * 7) % 40) - 0.05f * (float) i;
        }
        bool ok = true;
        for (int r = 0; r < 12; ++r) {
            const llama_token t = sample_dist(m, logits, 40);
            TH_EXPECT(t == want[r], "mirostat-v2 round %d: token %d, reference %d", r, t, want[r]);
            ok = ok && t == want[r];
        }
        TH_CHECK(ok, "mirostat-v2 tokens match the libstdc++ reference");
        llama_sampler_free(m);
    }
    {
        struct llama_sampler * x = llama_sampler_init_xtc(0.5f, 0.25f, 1, 7);
        const int want[16] = { 1, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1 };
        bool ok = true;
        for (int r = 0; r < 16; ++r) {
            struct tester t;
            tester_init_probs(&t, ARR(0.4f, 0.3f, 0.2f, 0.1f), 4, NULL, 0);
            llama_sampler_apply(x, &t.cur_p);
            const int applied = t.cur_p.size == 3 && t.cur_p.data[0].id == 1;
            TH_EXPECT(applied == want[r] && (applied || t.cur_p.size == 4), "xtc round %d", r);
            ok = ok && applied == want[r];
            tester_free(&t);
        }
        TH_CHECK(ok, "xtc coin flips match the libstdc++ reference");
        llama_sampler_free(x);
    }
}

// the sort and top-k selection behind every sampler against qsort: same logit sequence (ties may reorder ids)
static int cmp_logit_desc_ref(const void * pa, const void * pb) {
    const float a = ((const llama_token_data *) pa)->logit;
    const float b = ((const llama_token_data *) pb)->logit;
    if (isnan(a) || isnan(b)) {
        return (int) isnan(a) - (int) isnan(b);
    }
    return (a < b) - (a > b);
}

static bool same_logit(float a, float b) {
    return (isnan(a) && isnan(b)) || a == b;
}

static void test_sort_select(void) {
    const size_t sizes[7] = { 1, 2, 17, 300, 1025, 5000, 40000 };
    uint32_t state = 12345;
    bool ok = true;
    for (int si = 0; si < 7 && ok; ++si) {
        const size_t n = sizes[si];
        llama_token_data * a = malloc(n * sizeof(*a));
        llama_token_data * ref = malloc(n * sizeof(*ref));
        for (int variant = 0; variant < 3 && ok; ++variant) {
            for (size_t i = 0; i < n; ++i) {
                state = state * 1664525u + 1013904223u;
                float v = (float) (state >> 8) / 16777216.0f * 20.0f - 10.0f;
                if (variant == 1) {
                    v = (float) ((state >> 12) % 7); // many ties
                } else if (variant == 2 && (state >> 28) == 0) {
                    const float specials[4] = { -INFINITY, INFINITY, NAN, -0.0f };
                    v = specials[(state >> 24) & 3];
                }
                a[i] = (llama_token_data){ (llama_token) i, v, 0.0f };
            }
            memcpy(ref, a, n * sizeof(*a));
            qsort(ref, n, sizeof(*ref), cmp_logit_desc_ref);

            const size_t ks[4] = { 1, 40, 256, n };
            for (int ki = 0; ki < 4 && ok; ++ki) {
                const size_t k = ks[ki] < n ? ks[ki] : n;
                llama_token_data * b = malloc(n * sizeof(*b));
                memcpy(b, a, n * sizeof(*a));
                llama_token_data_array cur_p = { b, n, -1, false };
                llama_sampler_top_k_impl(&cur_p, (int32_t) k);
                ok = ok && cur_p.size == k && cur_p.sorted;
                for (size_t i = 0; i < k && ok; ++i) {
                    ok = same_logit(cur_p.data[i].logit, ref[i].logit);
                }
                TH_EXPECT(ok, "top-k n=%zu k=%zu variant %d", n, k, variant);
                free(b);
            }
        }
        free(a);
        free(ref);
    }
    TH_CHECK(ok, "top-k selection and sorting agree with qsort");
}

// the CPU TOP_K op behind the backend top-k sampler: the first k indices in (value desc, index asc, NaN last)
// order, against an O(n*k) repeated best-of-the-rest search, on rows with ties, NaN and +-inf, a 152k-entry row
// (heap path) and k large enough to take the full-sort path; 1 and 3 threads (rows split between threads)
static bool topk_ref_before(const float * x, int32_t a, int32_t b) {
    const bool na = isnan(x[a]), nb = isnan(x[b]);
    if (na != nb) {
        return nb;
    }
    if (!na && x[a] != x[b]) {
        return x[a] > x[b];
    }
    return a < b;
}

static void test_top_k_op(void) {
    const int64_t sizes[4] = { 7, 300, 5000, 152064 };
    uint32_t state = 777;
    bool ok = true;
    for (int si = 0; si < 4; ++si) {
        const int64_t n = sizes[si];
        const int64_t nr = n > 10000 ? 2 : 5;
        for (int variant = 0; variant < 3; ++variant) {
            const int64_t ks[4] = { 1, 40, n / 8 + 1, n };
            for (int ki = 0; ki < 4; ++ki) {
                const int64_t k = ks[ki] < n ? ks[ki] : n;
                if (n > 10000 && k > 64) {
                    continue; // the O(n*k) reference would be slow; the full-sort path is covered by smaller rows
                }
                // data, result and two compute work buffers (1 and 3 threads, 4 words per element and thread)
                struct ggml_init_params ip = { (size_t) (n * nr * 4 + k * nr * 4 + 4 * 16 * n) + 64 * ggml_tensor_overhead() +
                                               ggml_graph_overhead() + (1 << 20), NULL, false };
                struct ggml_context * ctx = ggml_init(ip);
                struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, nr);
                float * x = (float *) a->data;
                for (int64_t i = 0; i < n * nr; ++i) {
                    state = state * 1664525u + 1013904223u;
                    float v = (float) (state >> 8) / 16777216.0f * 20.0f - 10.0f;
                    if (variant == 1) {
                        v = (float) ((state >> 12) % 7); // many ties, including at the k-th place
                    } else if (variant == 2 && (state >> 27) == 0) {
                        const float specials[4] = { -INFINITY, INFINITY, NAN, -0.0f };
                        v = specials[(state >> 24) & 3];
                    }
                    x[i] = v;
                }
                struct ggml_tensor * t = ggml_top_k(ctx, a, (int) k);
                struct ggml_cgraph * gf = ggml_new_graph(ctx);
                ggml_build_forward_expand(gf, t);
                bool * used = malloc((size_t) n);
                for (int nth = 1; nth <= 3; nth += 2) {
                    memset(t->data, 0xff, ggml_nbytes(t));
                    const enum ggml_status st = ggml_graph_compute_with_ctx(ctx, gf, nth);
                    TH_CHECK(st == GGML_STATUS_SUCCESS, "top_k op: compute status %d", (int) st);
                    for (int64_t r = 0; r < nr; ++r) {
                        const float * row = x + r * n;
                        const int32_t * got = (const int32_t *) ((const char *) t->data + r * t->nb[1]);
                        memset(used, 0, (size_t) n);
                        bool row_ok = true;
                        for (int64_t j = 0; j < k && row_ok; ++j) {
                            int32_t best = -1;
                            for (int32_t i = 0; i < (int32_t) n; ++i) {
                                if (!used[i] && (best < 0 || topk_ref_before(row, i, best))) {
                                    best = i;
                                }
                            }
                            used[best] = true;
                            row_ok = got[j] == best;
                        }
                        TH_EXPECT(row_ok, "top_k op n=%lld k=%lld variant %d row %lld nth %d", (long long) n,
                                  (long long) k, variant, (long long) r, nth);
                        ok = ok && row_ok;
                    }
                }
                free(used);
                ggml_free(ctx);
            }
        }
    }
    TH_CHECK(ok, "TOP_K op: the k first indices in (value desc, index asc, NaN last) order");
}

// bad input: logged and ignored, never a crash
static void test_bad_input(void) {
    llama_sampler_apply(NULL, NULL);
    llama_sampler_accept(NULL, 1);
    llama_sampler_reset(NULL);
    llama_sampler_free(NULL);
    TH_CHECK(llama_sampler_clone(NULL) == NULL, "clone NULL");
    TH_CHECK(strcmp(llama_sampler_name(NULL), "(null)") == 0, "name NULL");

    struct llama_sampler * g = llama_sampler_init_greedy();
    llama_sampler_chain_add(g, llama_sampler_init_greedy()); // not a chain: logged, the added sampler is freed
    TH_CHECK(llama_sampler_chain_n(g) == 0, "chain_n of a non-chain");
    TH_CHECK(llama_sampler_chain_remove(g, 0) == NULL, "chain_remove of a non-chain");
    llama_token_data_array empty = { NULL, 0, -1, false };
    llama_sampler_apply(g, &empty);
    TH_CHECK(empty.selected == -1, "greedy on no candidates");
    llama_sampler_free(g);

    struct llama_sampler * chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(chain, NULL);
    TH_CHECK(llama_sampler_chain_n(chain) == 0, "NULL is not added");
    struct llama_sampler * d = llama_sampler_init_dist(3);
    llama_sampler_apply(d, &empty);
    TH_CHECK(empty.selected == -1, "dist on no candidates");
    llama_sampler_free(d);
    llama_sampler_free(chain);

    TH_CHECK(llama_sampler_init_penalties(4, 0.0f, 0.0f, 0.0f) == NULL, "repeat penalty 0 rejected");
    TH_CHECK(llama_sampler_init_penalties(4, 1.1f, NAN, 0.0f) == NULL, "NaN penalty rejected");

    // top-k larger than the candidates, min-p / top-p on one candidate
    struct tester t;
    tester_init_probs(&t, ARR(0.5f), 1, ARR(1.0f), 1);
    tester_apply(&t, llama_sampler_init_top_k(10));
    tester_apply(&t, llama_sampler_init_top_p(0.1f, 5));
    tester_apply(&t, llama_sampler_init_min_p(0.9f, 5));
    tester_apply(&t, llama_sampler_init_dist(1));
    tester_check(&t, "single candidate");
    tester_free(&t);
}

// random chains with random (also absurd) parameters on random candidates with NaN and infinities: nothing may
// crash (run it under ASan/UBSan) and the candidates only shrink within their buffer
static uint32_t fz_state = 2463534242u;
static uint32_t fz_next(void) {
    fz_state ^= fz_state << 13;
    fz_state ^= fz_state >> 17;
    fz_state ^= fz_state << 5;
    return fz_state;
}
static float fz_float(void) {
    const uint32_t r = fz_next();
    switch (r % 16) {
        case 0:  return NAN;
        case 1:  return INFINITY;
        case 2:  return -INFINITY;
        case 3:  return 0.0f;
        case 4:  return 1e30f;
        case 5:  return -1e30f;
        default: return ((float) (r >> 8) / 16777216.0f - 0.5f) * 20.0f;
    }
}
static float fz_param(void) {
    const uint32_t r = fz_next();
    switch (r % 10) {
        case 0:  return fz_float();
        case 1:  return -1.0f;
        case 2:  return 1.0f;
        case 3:  return 0.0f;
        default: return (float) (r >> 8) / 16777216.0f;
    }
}

static struct llama_sampler * fz_sampler(void) {
    const int32_t n = (int32_t) (fz_next() % 70) - 5;
    switch (fz_next() % 17) {
        case 0:  return llama_sampler_init_greedy();
        case 1:  return llama_sampler_init_dist(fz_next());
        case 2:  return llama_sampler_init_top_k(n);
        case 3:  return llama_sampler_init_top_p(fz_param(), fz_next() % 5);
        case 4:  return llama_sampler_init_min_p(fz_param(), fz_next() % 5);
        case 5:  return llama_sampler_init_typical(fz_param(), fz_next() % 5);
        case 6:  return llama_sampler_init_temp(fz_param() * 3.0f - 1.0f);
        case 7:  return llama_sampler_init_temp_ext(fz_param() * 2.0f, fz_param(), fz_param() * 3.0f);
        case 8:  return llama_sampler_init_xtc(fz_param(), fz_param() - 0.2f, fz_next() % 4, fz_next());
        case 9:  return llama_sampler_init_top_n_sigma(fz_param() * 3.0f);
        case 10: return llama_sampler_init_mirostat(n, fz_next(), fz_param() * 8.0f, fz_param(), n);
        case 11: return llama_sampler_init_mirostat_v2(fz_next(), fz_param() * 8.0f, fz_param());
        case 12: return llama_sampler_init_penalties(n, 1.0f + fz_param(), fz_param(), fz_param());
        case 13: {
            const llama_token br[3] = { (llama_token) (fz_next() % 64), (llama_token) (fz_next() % 64), 3 };
            const llama_token * brs[1] = { br };
            const size_t lens[1] = { fz_next() % 4 };
            return llama_sampler_init_dry_testing(fz_param() * 2.0f, 1.0f + fz_param(), n % 5, n, brs, lens, 1);
        }
        case 14: return llama_sampler_init_adaptive_p(fz_param() - 0.1f, fz_param(), fz_next());
        case 15: {
            const llama_logit_bias lb[3] = { { (llama_token) (fz_next() % 80) - 8, fz_float() },
                                             { (llama_token) (fz_next() % 80), fz_float() },
                                             { -1, 1.0f } };
            return llama_sampler_init_logit_bias(64, (int32_t) (fz_next() % 4), lb);
        }
        default: return llama_sampler_init_empty("?grammar"); // grammar chains: tests/test-grammar.c
    }
}

static void test_random_chains(void) {
    bool ok = true;
    for (int iter = 0; iter < 3000; ++iter) {
        struct llama_sampler * chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
        const int n_smpl = 1 + (int) (fz_next() % 6);
        for (int i = 0; i < n_smpl; ++i) {
            llama_sampler_chain_add(chain, fz_sampler());
        }
        const int n_accept = (int) (fz_next() % 12);
        for (int i = 0; i < n_accept; ++i) {
            llama_sampler_accept(chain, (llama_token) (fz_next() % 70) - 3);
        }
        struct llama_sampler * work = (fz_next() % 3 == 0) ? llama_sampler_clone(chain) : chain;

        const size_t n = fz_next() % 65;
        llama_token_data * buf = malloc((n ? n : 1) * sizeof(*buf));
        for (size_t i = 0; i < n; ++i) {
            buf[i] = (llama_token_data){ (llama_token) (fz_next() % 64), fz_float(), 0.0f };
        }
        llama_token_data_array cur_p = { buf, n, -1, false };
        llama_sampler_apply(work, &cur_p);

        // (a filter after a selecting sampler may leave `selected` stale, as in llama.cpp; llama_sampler_sample
        // checks it, so only the buffer bounds are invariants here)
        const bool in_buf = cur_p.data >= buf && cur_p.data + cur_p.size <= buf + (n ? n : 1);
        TH_EXPECT(in_buf && cur_p.size <= n, "iteration %d: size %zu of %zu", iter, cur_p.size, n);
        ok = ok && in_buf && cur_p.size <= n;
        if (cur_p.selected >= 0 && (size_t) cur_p.selected < cur_p.size) {
            llama_sampler_accept(work, cur_p.data[cur_p.selected].id);
        }
        llama_sampler_reset(work);

        if (work != chain) {
            llama_sampler_copy(work, chain);
            llama_sampler_free(work);
        }
        free(buf);
        llama_sampler_free(chain);
    }
    TH_CHECK(ok, "random chains on random candidates");
}

//
// benchmark (prints only; timings are never asserted)
//

static void bench(struct llama_sampler * smpl, const char * name, const llama_token_data * data, size_t n, int n_iter) {
    llama_token_data * cur = malloc(n * sizeof(*cur));
    memcpy(cur, data, n * sizeof(*cur));
    llama_token_data_array cur_p = { cur, n, -1, false };
    llama_sampler_apply(smpl, &cur_p);
    llama_sampler_reset(smpl);
    const int64_t t_start = ggml_time_us();
    for (int i = 0; i < n_iter; ++i) {
        memcpy(cur, data, n * sizeof(*cur));
        cur_p = (llama_token_data_array){ cur, n, -1, false };
        llama_sampler_apply(smpl, &cur_p);
        llama_sampler_reset(smpl);
    }
    const int64_t t_end = ggml_time_us();
    llama_sampler_free(smpl);
    free(cur);
    printf("%-43s: %8.3f us/iter\n", name, (double) (t_end - t_start) / n_iter);
}

#define BENCH(smpl, data, n, n_iter) bench((smpl), #smpl, (data), (n), (n_iter))

static void test_perf(void) {
    const int n_vocab = 1 << 17;
    llama_token_data * data = malloc((size_t) n_vocab * sizeof(*data));
    srand(1);
    for (int i = 0; i < n_vocab; ++i) {
        data[i] = (llama_token_data){ i, 2.0f * (float) ((double) rand() / RAND_MAX - 0.5), 0.0f };
    }
    BENCH(llama_sampler_init_top_k  (40),               data, n_vocab, 32);
    BENCH(llama_sampler_init_top_p  (0.8f, 1),          data, n_vocab, 32);
    BENCH(llama_sampler_init_min_p  (0.2f, 1),          data, n_vocab, 32);
    BENCH(llama_sampler_init_typical(0.5f, 1),          data, n_vocab, 32);
    BENCH(llama_sampler_init_xtc    (1.0f, 0.1f, 1, 1), data, n_vocab, 32);
    free(data);

    // per-token cost of a typical chain, as llama_sampler_sample runs it: fill the candidates from the logits,
    // apply the chain, accept the token
    const int n_vocabs[2] = { 2048, 152064 };
    for (int v = 0; v < 2; ++v) {
        const int n = n_vocabs[v];
        float * logits = malloc((size_t) n * sizeof(float));
        llama_token_data * cur = malloc((size_t) n * sizeof(*cur));
        for (int i = 0; i < n; ++i) {
            // sum of uniforms: roughly normal logits with a spread like a model's (sd ~ 3)
            double x = 0.0;
            for (int j = 0; j < 4; ++j) {
                x += (double) rand() / RAND_MAX - 0.5;
            }
            logits[i] = (float) (x * 5.2);
        }
        struct llama_sampler * chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
        llama_sampler_chain_add(chain, llama_sampler_init_top_k(40));
        llama_sampler_chain_add(chain, llama_sampler_init_top_p(0.95f, 1));
        llama_sampler_chain_add(chain, llama_sampler_init_min_p(0.05f, 1));
        llama_sampler_chain_add(chain, llama_sampler_init_temp(0.8f));
        llama_sampler_chain_add(chain, llama_sampler_init_dist(42));
        const int n_iter = n > 10000 ? 200 : 5000;
        int64_t t_start = 0;
        clock_t c_start = 0;
        for (int it = -10; it < n_iter; ++it) {
            if (it == 0) {
                t_start = ggml_time_us();
                c_start = clock();
            }
            for (int i = 0; i < n; ++i) {
                cur[i] = (llama_token_data){ i, logits[i], 0.0f };
            }
            llama_token_data_array cur_p = { cur, (size_t) n, -1, false };
            llama_sampler_apply(chain, &cur_p);
            llama_sampler_accept(chain, cur_p.data[cur_p.selected].id);
        }
        const int64_t t_end = ggml_time_us();
        const clock_t c_end = clock();
        // CPU time as well: on a shared machine the wall time includes waiting for a core
        printf("chain top_k 40 > top_p 0.95 > min_p 0.05 > temp 0.8 > dist, n_vocab %6d: %8.3f us/token wall, %8.3f us/token CPU\n",
                n, (double) (t_end - t_start) / n_iter, 1e6 * (double) (c_end - c_start) / CLOCKS_PER_SEC / n_iter);
        llama_sampler_free(chain);
        free(cur);
        free(logits);
    }
}

int main(void) {
    ggml_time_init();

    test_dist_singleton_rng();

    test_temp("temp 1", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, 1.0f);
    test_temp("temp 0", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.0f, 0.0f, 0.0f, 1.0f), 4, 0.0f);

    test_temp_ext("temp_ext 1", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, 1.0f, 0.0f, 1.0f);
    test_temp_ext("temp_ext 0", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.0f, 0.0f, 0.0f, 1.0f), 4, 0.0f, 0.0f, 1.0f);

    test_top_k("top_k 1", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(1.0f), 1, 1);
    test_top_k("top_k 3", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.44444f, 0.33333f, 0.22222f), 3, 3);
    test_top_k("top_k 4", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.4f, 0.3f, 0.2f, 0.1f), 4, 4);
    test_top_k("top_k 0", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, 0);

    test_top_p("top_p 0",   ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(1.0f), 1, 0);
    test_top_p("top_p 0.7", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.571429f, 0.428571f), 2, 0.7f);
    test_top_p("top_p 0.8", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.44444f, 0.33333f, 0.22222f), 3, 0.8f);
    test_top_p("top_p 1",   ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, 1.0f);

    test_min_p("min_p 0.00", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.1f/1.0f, 0.2f/1.0f, 0.3f/1.0f, 0.4f/1.0f), 4, 0.00f);
    test_min_p("min_p 0.24", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.1f/1.0f, 0.2f/1.0f, 0.3f/1.0f, 0.4f/1.0f), 4, 0.24f);
    test_min_p("min_p 0.26", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.2f/0.9f, 0.3f/0.9f, 0.4f/0.9f), 3, 0.26f);
    test_min_p("min_p 0.49", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.2f/0.9f, 0.3f/0.9f, 0.4f/0.9f), 3, 0.49f);
    test_min_p("min_p 0.51", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.3f/0.7f, 0.4f/0.7f), 2, 0.51f);
    test_min_p("min_p 0.74", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.3f/0.7f, 0.4f/0.7f), 2, 0.74f);
    test_min_p("min_p 0.76", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.4f/0.4f), 1, 0.76f);
    test_min_p("min_p 1.00", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.4f/0.4f), 1, 1.00f);
    test_min_p("min_p 1.05", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.4f/0.4f), 1, 1.05f);

    // XTC should remove the top choices
    test_xtc("xtc 0.09", ARR(0.4f, 0.3f, 0.2f, 0.1f), 4, ARR(0.1f), 1, 0.99f, 0.09f);
    test_xtc("xtc 0.19", ARR(0.4f, 0.3f, 0.2f, 0.1f), 4, ARR(0.2f, 0.1f), 2, 0.99f, 0.19f);
    test_xtc("xtc 0.29", ARR(0.4f, 0.3f, 0.2f, 0.1f), 4, ARR(0.3f, 0.2f, 0.1f), 3, 0.99f, 0.29f);
    // XTC should not
    test_xtc("xtc 0.39", ARR(0.4f, 0.3f, 0.2f, 0.1f), 4, ARR(0.4f, 0.3f, 0.2f, 0.1f), 4, 0.99f, 0.39f);

    test_typical("typical a", ARR(0.97f, 0.01f, 0.01f, 0.01f), 4, ARR(0.97f), 1, 0.5f);
    test_typical("typical b", ARR(0.4f, 0.2f, 0.2f, 0.2f), 4, ARR(0.2f, 0.2f, 0.2f), 3, 0.5f);

    const float * p5 = ARR(0.2f, 0.2f, 0.2f, 0.2f, 0.2f);
    test_penalties("penalties a", p5, 5, TOK(0), 1,             ARR(0, 0.25f, 0.25f, 0.25f, 0.25f), 5, 50.0f, 0.0f, 0.0f);
    test_penalties("penalties b", p5, 5, TOK(0, 1, 2), 3,       ARR(0, 0, 0, 0.5f, 0.5f), 5,       50.0f, 0.0f, 0.0f);
    test_penalties("penalties c", p5, 5, TOK(0, 1, 2, 0, 0), 5, ARR(0, 0, 0, 0.5f, 0.5f), 5,       50.0f, 0.0f, 0.0f);

    test_penalties("penalties d", p5, 5, TOK(0), 1,             ARR(0.000011f, 0.249997f, 0.249997f, 0.249997f, 0.249997f), 5, 1.0f, 5.0f, 5.0f);
    test_penalties("penalties e", p5, 5, TOK(0, 1, 2), 3,       ARR(0.000023f, 0.000023f, 0.000023f, 0.499966f, 0.499966f), 5, 1.0f, 5.0f, 5.0f);
    test_penalties("penalties f", p5, 5, TOK(0, 1, 2, 0, 0), 5, ARR(0.000000f, 0.000023f, 0.000023f, 0.499977f, 0.499977f), 5, 1.0f, 5.0f, 5.0f);

    const float * p4 = ARR(0.25f, 0.25f, 0.25f, 0.25f);
    const llama_token * breaker3[1] = { TOK(3) };
    const size_t breaker3_len[1] = { 1 };
    test_dry("dry a", p4, 4, TOK(0, 1), 2,             ARR(0.25f, 0.25f, 0.25f, 0.25f), 4, 1.0f, 1.1f, 2, 4, NULL, NULL, 0);
    test_dry("dry b", p4, 4, TOK(0, 1, 2, 0, 1), 5,    ARR(0.296923f, 0.296923f, 0.109232f, 0.296923f), 4, 1.0f, 1.1f, 2, 5, NULL, NULL, 0);
    test_dry("dry c", p5, 5, TOK(0, 1, 3, 4, 0, 1), 6, ARR(0.2f, 0.2f, 0.2f, 0.2f, 0.2f), 5, 1.0f, 1.1f, 2, 6, breaker3, breaker3_len, 1);
    test_dry("dry d", p5, 5, TOK(0, 1, 2, 0, 1), 5,    ARR(0.241818f, 0.241818f, 0.032727f, 0.241818f, 0.241818f), 5, 2.0f, 1.1f, 2, 5, NULL, NULL, 0);
    test_dry("dry e", p5, 5, TOK(0, 1, 2, 3, 4, 0, 1), 7, ARR(0.2f, 0.2f, 0.2f, 0.2f, 0.2f), 5, 1.0f, 1.1f, 4, 7, NULL, NULL, 0);

    test_top_n_sigma("top_n_sigma 1", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.0f, 0.0f, 0.428571f, 0.571429f), 4, 1);
    test_top_n_sigma("top_n_sigma 0", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, 0); // 0 is a no-op
    test_top_n_sigma("top_n_sigma 3", ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, ARR(0.1f, 0.2f, 0.3f, 0.4f), 4, 3);

    test_sampler_queue(10000, "k", 10000, 1.0f, 1.0f);
    test_sampler_queue(10000, "k",     1, 1.0f, 1.0f);
    test_sampler_queue(10000, "p", 10000, 1.0f, 1.0f);
    test_sampler_queue(10000, "p", 10000, 0.0f, 1.0f);
    test_sampler_queue(10000, "m", 10000, 1.0f, 1.0f);
    test_sampler_queue(10000, "m", 10000, 1.0f, 1e-12f);

    test_sampler_queue(10000, "k",   100, 1.0000f, 1.0f);
    test_sampler_queue(10000, "p", 10000, 0.0003f, 1.0f);
    test_sampler_queue(10000, "p", 10000, 0.8000f, 1.0f);
    test_sampler_queue(10000, "m", 10000, 1.0000f, 9997.9f/9999.0f);
    test_sampler_queue(10000, "m", 10000, 1.0000f, 0.1f);

    test_sampler_queue(10000, "kp", 100, 0.8f, 0.1f);
    test_sampler_queue(10000, "km", 100, 0.8f, 0.1f);
    test_sampler_queue(10000, "pk", 100, 0.8f, 0.1f);
    test_sampler_queue(10000, "pm", 100, 0.8f, 0.1f);
    test_sampler_queue(10000, "mk", 100, 0.8f, 0.1f);
    test_sampler_queue(10000, "mp", 100, 0.8f, 9997.9f/9999.0f);
    test_sampler_queue(10000, "mp", 100, 0.8f, 0.1f);

    test_sampler_queue(10000, "kpm", 100, 0.8f, 0.1f);
    test_sampler_queue(10000, "kmp", 100, 0.8f, 0.1f);
    test_sampler_queue(10000, "pkm", 100, 0.8f, 0.1f);
    test_sampler_queue(10000, "pmk", 100, 0.8f, 0.1f);
    test_sampler_queue(10000, "mkp", 100, 0.8f, 0.1f);
    test_sampler_queue(10000, "mpk", 100, 0.8f, 0.1f);

    test_rng();
    test_sort_select();
    test_top_k_op();
    test_dist_reference();
    test_dist_transactions();
    test_chain_api();
    test_copy_state();
    test_misc_samplers();
    test_seeded_reference();
    test_bad_input();
    test_random_chains();

    test_perf();

    return th_finish();
}
