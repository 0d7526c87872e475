// Samplers that use the vocabulary, on the GPT-2 vocabulary (models/vocab/ggml-vocab-gpt-2.gguf):
// DRY sequence breakers given as strings, and the infill sampler. Expected values follow from the definitions
// (which tokens repeat, which texts are prefixes of others) and are computed independently in the test.

#include "llama.h"

#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct llama_vocab * g_vocab = NULL;

// the single token of text, or LLAMA_TOKEN_NULL if it is not one token
static llama_token one_token(const char * text) {
    llama_token toks[8];
    const int32_t n = llama_tokenize(g_vocab, text, (int32_t) strlen(text), toks, 8, false, false);
    return n == 1 ? toks[0] : LLAMA_TOKEN_NULL;
}

// logit of token id after applying smpl to candidates (ids[i], logit 0)
static float logit_after(struct llama_sampler * smpl, const llama_token * ids, size_t n, llama_token id) {
    llama_token_data cur[16];
    for (size_t i = 0; i < n; ++i) {
        cur[i] = (llama_token_data){ ids[i], 0.0f, 0.0f };
    }
    llama_token_data_array cur_p = { cur, n, -1, false };
    llama_sampler_apply(smpl, &cur_p);
    for (size_t i = 0; i < cur_p.size; ++i) {
        if (cur_p.data[i].id == id) {
            return cur_p.data[i].logit;
        }
    }
    return NAN;
}

static void accept_all(struct llama_sampler * smpl, const llama_token * toks, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        llama_sampler_accept(smpl, toks[i]);
    }
}

static void test_dry_breakers(void) {
    const llama_token A    = one_token(" apple");
    const llama_token B    = one_token(" banana");
    const llama_token THE  = one_token(" the");
    const llama_token CAT  = one_token(" cat");
    const llama_token NL   = one_token("\n");
    const llama_token NLNL = one_token("\n\n");
    const llama_token X    = one_token(" x");
    TH_CHECK(A >= 0 && B >= 0 && THE >= 0 && CAT >= 0 && NL >= 0 && NLNL >= 0 && X >= 0, "single-token words in GPT-2");

    const char * breakers[2] = { "\n", " the cat" };
    const llama_token cands[5] = { A, B, NL, NLNL, THE };

    // A B NL A B: continuing with NL would repeat "A B NL" (repeat length 2 >= allowed 2, penalty 1 * 1.75^0 = 1)
    {
        const llama_token hist[5] = { A, B, NL, A, B };
        struct llama_sampler * plain = llama_sampler_init_dry(g_vocab, 1.0f, 1.75f, 2, 64, NULL, 0);
        struct llama_sampler * brk   = llama_sampler_init_dry(g_vocab, 1.0f, 1.75f, 2, 64, breakers, 2);
        TH_CHECK(plain && brk, "dry init");
        accept_all(plain, hist, 5);
        accept_all(brk, hist, 5);
        TH_CHECK(logit_after(plain, cands, 5, NL) == -1.0f, "without breakers the repeating token is penalised");
        TH_CHECK(logit_after(plain, cands, 5, A) == 0.0f, "other tokens are not");
        // with "\n" as a breaker NL can never be penalised; the NL inside the context also limits repetitions to
        // the two tokens after it, which is still enough here
        TH_CHECK(logit_after(brk, cands, 5, NL) == 0.0f, "a single-token breaker is never penalised");
        llama_sampler_free(plain);
        llama_sampler_free(brk);
    }
    // a token containing the breaker text ("\n\n" contains "\n") is a breaker by itself
    {
        const llama_token hist[5] = { A, B, NLNL, A, B };
        struct llama_sampler * plain = llama_sampler_init_dry(g_vocab, 1.0f, 1.75f, 2, 64, NULL, 0);
        struct llama_sampler * brk   = llama_sampler_init_dry(g_vocab, 1.0f, 1.75f, 2, 64, breakers, 2);
        accept_all(plain, hist, 5);
        accept_all(brk, hist, 5);
        TH_CHECK(logit_after(plain, cands, 5, NLNL) == -1.0f, "NLNL penalised without breakers");
        TH_CHECK(logit_after(brk, cands, 5, NLNL) == 0.0f, "NLNL contains the breaker text");
        llama_sampler_free(plain);
        llama_sampler_free(brk);
    }
    // multi-token breaker " the cat" = head " the" + tail [" cat"]: in CAT A THE CAT A the repetition "CAT A"
    // would make THE the next repeat, but the restart sequence two tokens back limits repetitions to 1 token
    {
        const llama_token hist[5] = { CAT, A, THE, CAT, A };
        struct llama_sampler * plain = llama_sampler_init_dry(g_vocab, 1.0f, 1.75f, 2, 64, NULL, 0);
        struct llama_sampler * brk   = llama_sampler_init_dry(g_vocab, 1.0f, 1.75f, 2, 64, breakers, 2);
        accept_all(plain, hist, 5);
        accept_all(brk, hist, 5);
        TH_CHECK(logit_after(plain, cands, 5, THE) == -1.0f, "THE penalised without breakers");
        TH_CHECK(logit_after(brk, cands, 5, THE) == 0.0f, "the restart sequence ' the cat' stops the repetition");

        // clone keeps the processed breakers and the history
        struct llama_sampler * c = llama_sampler_clone(brk);
        TH_CHECK(c && logit_after(c, cands, 5, THE) == 0.0f, "clone keeps breakers");
        llama_sampler_accept(c, X);
        llama_sampler_free(c);
        llama_sampler_free(plain);
        llama_sampler_free(brk);
    }
    // longer repeats: penalty multiplier * base^(len - allowed)
    {
        const llama_token hist[7] = { A, B, X, NL, A, B, X };
        struct llama_sampler * plain = llama_sampler_init_dry(g_vocab, 2.0f, 1.75f, 2, 64, NULL, 0);
        accept_all(plain, hist, 7);
        const float got = logit_after(plain, cands, 5, NL);
        TH_CHECK(fabsf(got - (-2.0f * 1.75f)) < 1e-6f, "repeat of 3 -> penalty 2 * 1.75^1, got %f", (double) got);
        llama_sampler_free(plain);
    }
    // disabled settings and bad input
    {
        struct llama_sampler * e = llama_sampler_init_dry(g_vocab, 0.0f, 1.75f, 2, 64, breakers, 2);
        TH_CHECK(e && strcmp(llama_sampler_name(e), "?dry") == 0, "multiplier 0 disables DRY");
        llama_sampler_free(e);
        TH_CHECK(llama_sampler_init_dry(NULL, 1.0f, 1.75f, 2, 64, breakers, 2) == NULL, "breakers need a vocab");
        const char * odd[2] = { NULL, "" };
        struct llama_sampler * s = llama_sampler_init_dry(g_vocab, 1.0f, 1.75f, 2, 64, odd, 2);
        TH_CHECK(s != NULL, "null and empty breakers are skipped");
        llama_sampler_free(s);
    }
}

static void test_infill(void) {
    const llama_token THE   = one_token(" the");
    const llama_token THERE = one_token(" there");
    const llama_token CAT   = one_token(" cat");
    const llama_token EOS   = llama_vocab_eos(g_vocab);
    TH_CHECK(THE >= 0 && THERE >= 0 && CAT >= 0 && EOS >= 0 && llama_vocab_is_eog(g_vocab, EOS), "tokens");

    struct llama_sampler * inf = llama_sampler_init_infill(g_vocab);
    TH_CHECK(inf != NULL, "infill init");

    // " the" is a prefix of " there": their probabilities merge into " the"; then both cuts keep " the", " cat"
    // and the EOG token
    {
        const float l[4] = { 1.0f, 0.5f, 0.9f, -10.0f };
        llama_token_data cur[4] = { { THE, l[0], 0 }, { THERE, l[1], 0 }, { CAT, l[2], 0 }, { EOS, l[3], 0 } };
        llama_token_data_array cur_p = { cur, 4, -1, false };
        llama_sampler_apply(inf, &cur_p);

        double e[4], s = 0.0;
        for (int i = 0; i < 4; ++i) {
            e[i] = exp((double) l[i] - 1.0);
            s += e[i];
        }
        const double p_the = (e[0] + e[1]) / s;
        const double p_cat = e[2] / s;
        const double p_eos = e[3] / s;
        const double tot   = p_the + p_cat + p_eos;
        TH_CHECK(cur_p.size == 3, "3 candidates left, got %zu", cur_p.size);
        if (cur_p.size == 3) {
            TH_CHECK(cur_p.data[0].id == THE && cur_p.data[1].id == CAT && cur_p.data[2].id == EOS, "order");
            TH_CHECK(fabs(cur_p.data[0].p - p_the / tot) < 1e-5 && fabs(cur_p.data[1].p - p_cat / tot) < 1e-5 &&
                     fabs(cur_p.data[2].p - p_eos / tot) < 1e-5, "merged probabilities %f %f %f",
                     (double) cur_p.data[0].p, (double) cur_p.data[1].p, (double) cur_p.data[2].p);
        }
    }
    // EOG likely enough (3 * p_eog * n > p_txt): only EOG tokens stay
    {
        llama_token_data cur[3] = { { THE, 0.0f, 0 }, { CAT, 0.0f, 0 }, { EOS, 0.0f, 0 } };
        llama_token_data_array cur_p = { cur, 3, -1, false };
        llama_sampler_apply(inf, &cur_p);
        TH_CHECK(cur_p.size == 1 && cur_p.data[0].id == EOS && fabsf(cur_p.data[0].p - 1.0f) < 1e-6f, "EOG only");
    }
    // every text candidate under the 0.2 cut and no EOG: end with EOT, or EOS when there is no EOT
    {
        const char * letters[10] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j" };
        llama_token_data cur[10];
        for (int i = 0; i < 10; ++i) {
            cur[i] = (llama_token_data){ one_token(letters[i]), 0.0f, 0.0f };
        }
        llama_token_data_array cur_p = { cur, 10, -1, false };
        llama_sampler_apply(inf, &cur_p);
        // GPT-2 has one end token, <|endoftext|> = 50256: its EOS and its EOT
        TH_CHECK(cur_p.size == 1 && cur_p.data[0].id == 50256, "nothing left -> EOT/EOS (got %d)",
                 cur_p.size ? cur_p.data[0].id : -1);
    }
    struct llama_sampler * c = llama_sampler_clone(inf);
    TH_CHECK(c && strcmp(llama_sampler_name(c), "infill") == 0, "clone");
    llama_sampler_free(c);
    llama_sampler_free(inf);
    TH_CHECK(llama_sampler_init_infill(NULL) == NULL, "infill needs a vocab");
}

int main(void) {
    const char * path = th_data_path("models/vocab/ggml-vocab-gpt-2.gguf");
    if (!th_require_file(path)) {
        return th_finish();
    }
    struct llama_model_params mparams = llama_model_default_params();
    mparams.vocab_only = true;
    struct llama_model * model = llama_model_load_from_file(path, mparams);
    TH_CHECK(model != NULL, "load %s", path);
    if (!model) {
        return th_finish();
    }
    g_vocab = llama_model_get_vocab(model);

    test_dry_breakers();
    test_infill();

    llama_model_free(model);
    return th_finish();
}
