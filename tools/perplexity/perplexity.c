// llama-perplexity: perplexity of a model over a text file, and KL divergence of a model's token
// distributions against a saved base run, with llama.cpp's algorithm, file format and output.
//
// Perplexity (llama.cpp's default mode): the whole file is tokenized once with BOS, cut into chunks of
// n_ctx tokens; each chunk is decoded from an empty cache with its first token replaced by BOS, and only
// the predictions in the second half of the chunk are scored, so every scored token has at least n_ctx/2
// tokens of context. When n_batch is a multiple of n_ctx, n_batch/n_ctx chunks are decoded side by side as
// separate sequences.
//
// --kl-divergence-base FILE writes, next to the perplexity run, the log-probabilities of every scored
// position (16-bit quantized, llama.cpp's "_logits_" layout) so that a later --kl-divergence run with
// another model (a quantization) can compare its distributions to them.

#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

// entries of one stored row of quantized log-probabilities: 2 floats (scale, minimum) as 4 uint16 slots,
// then n_vocab values padded to an even count (llama.cpp's layout, kept so files are interchangeable)
static size_t kld_row_len(int n_vocab) {
    return 2 * (((size_t) n_vocab + 1) / 2) + 4;
}

// negative log-likelihood of `tok` under softmax(logits); the exponentials are summed in double as
// llama.cpp does, so results agree with its figures to the last printed digit
static double token_nll(int n_vocab, const float * logits, int tok) {
    float max_logit = logits[0];
    for (int i = 1; i < n_vocab; ++i) {
        if (logits[i] > max_logit) {
            max_logit = logits[i];
        }
    }
    double sum_exp = 0.0;
    for (int i = 0; i < n_vocab; ++i) {
        sum_exp += expf(logits[i] - max_logit);
    }
    return -((double) (logits[tok] - max_logit) - log(sum_exp));
}

static int round_to_int(float v) {
    return (int) lrintf(v);
}

// like token_nll, and also stores the row's log-probabilities quantized to 16 bits over the range
// [max - 16, max] of the logits (anything below counts as probability 0 when compared)
static double token_nll_store(int n_vocab, const float * logits, uint16_t * row, int tok) {
    float max_logit = logits[0];
    float min_logit = logits[0];
    for (int i = 1; i < n_vocab; ++i) {
        if (logits[i] > max_logit) {
            max_logit = logits[i];
        }
        if (logits[i] < min_logit) {
            min_logit = logits[i];
        }
    }
    if (min_logit < max_logit - 16) {
        min_logit = max_logit - 16;
    }
    double sum_exp = 0.0;
    for (int i = 0; i < n_vocab; ++i) {
        sum_exp += expf(logits[i] - max_logit);
    }
    const float log_sum_exp  = (float) log(sum_exp);
    const float min_log_prob = min_logit - max_logit - log_sum_exp;
    const float scale        = (max_logit - min_logit) / 65535.f;
    float hdr[2] = { scale, min_log_prob };
    memcpy(row, hdr, sizeof(hdr));
    uint16_t * q = row + 4;
    if (scale != 0.0f) {
        const float inv = 1.0f / scale;
        for (int i = 0; i < n_vocab; ++i) {
            q[i] = logits[i] > min_logit ? (uint16_t) round_to_int(inv * (logits[i] - min_logit)) : 0;
        }
    } else {
        memset(q, 0, (size_t) n_vocab * sizeof(uint16_t));
    }
    if (n_vocab % 2) {
        q[n_vocab] = 0;
    }
    return (double) (max_logit + log_sum_exp - logits[tok]);
}

struct kld_sums {
    double sum_nll, sum_nll2;
    double sum_nll_base, sum_nll_base2;
    double sum_nll_nll_base;
    double sum_kld, sum_kld2;
    double sum_p_diff, sum_p_diff2, sum_p_diff4;
    float  max_p_diff;
    size_t n_same_top;
    size_t count;
};

// compares one position with the stored base row; returns the KL divergence, *p_diff = p(tok) - p_base(tok)
static double kld_position(int n_vocab, const float * logits, const uint16_t * base, int tok,
                           struct kld_sums * s, float * p_diff_out) {
    float max_logit = logits[0];
    int imax = 0;
    for (int i = 1; i < n_vocab; ++i) {
        if (logits[i] > max_logit) {
            max_logit = logits[i];
            imax = i;
        }
    }
    double sum_exp = 0.0;
    for (int i = 0; i < n_vocab; ++i) {
        sum_exp += expf(logits[i] - max_logit);
    }
    const float log_sum_exp = (float) log(sum_exp);
    float hdr[2];
    memcpy(hdr, base, sizeof(hdr));
    const float scale = hdr[0];
    const float min_log_prob = hdr[1];
    const uint16_t * q = base + 4;

    const float nll = max_logit + log_sum_exp - logits[tok];
    s->sum_nll  += nll;
    s->sum_nll2 += (double) nll * nll;

    const float nll_base = -(scale * q[tok] + min_log_prob);
    s->sum_nll_base  += nll_base;
    s->sum_nll_base2 += (double) nll_base * nll_base;
    s->sum_nll_nll_base += (double) nll * nll_base;

    const float log_norm = max_logit + log_sum_exp;
    double kld = 0.0;
    int imax_base = 0;
    float lp_base_max = 0.0f;
    for (int i = 0; i < n_vocab; ++i) {
        const float lp_base = scale * q[i] + min_log_prob;
        if (i == 0 || lp_base > lp_base_max) {
            lp_base_max = lp_base;
            imax_base = i;
        }
        // below e^-16 the quantized base carries no information
        if (lp_base > -16.f) {
            kld += expf(lp_base) * (lp_base - logits[i] + log_norm);
        }
    }
    s->sum_kld  += kld;
    s->sum_kld2 += kld * kld;
    s->count++;
    if (imax == imax_base) {
        s->n_same_top++;
    }
    const float p_diff = expf(-nll) - expf(-nll_base);
    s->sum_p_diff  += p_diff;
    const double d2 = (double) p_diff * p_diff;
    s->sum_p_diff2 += d2;
    s->sum_p_diff4 += d2 * d2;
    if (fabsf(p_diff) > s->max_p_diff) {
        s->max_p_diff = fabsf(p_diff);
    }
    *p_diff_out = p_diff;
    return kld;
}

static void log_eta(double t_pass, int n_passes) {
    LOG_INF("perplexity: %.2f seconds per pass - ETA ", t_pass);
    int total = (int) (t_pass * n_passes);
    if (total >= 3600) {
        LOG("%d hours ", total / 3600);
        total %= 3600;
    }
    LOG("%.2f minutes\n", total / 60.0);
}

static bool write_all(FILE * f, const void * data, size_t size) {
    return size == 0 || fwrite(data, 1, size, f) == size;
}

// returns 0 on success
static int run_perplexity(struct llama_context * ctx, const struct common_params * params, int n_ctx) {
    const struct llama_model * model = llama_get_model(ctx);
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    const bool add_bos = llama_vocab_get_add_bos(vocab);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    if (!params->prompt) {
        LOG_ERR("perplexity: no input text: give a file with -f\n");
        return 1;
    }

    FILE * fout = NULL;
    if (params->logits_file && params->logits_file[0]) {
        fout = fopen(params->logits_file, "wb");
        if (!fout) {
            LOG_ERR("perplexity: failed to open %s for writing: %s\n", params->logits_file, strerror(errno));
            return 1;
        }
        LOG_INF("perplexity: saving all logits to %s\n", params->logits_file);
    }

    LOG_INF("perplexity: tokenizing the input ..\n");
    const double t_tok0 = now_s();
    llama_token * tokens = NULL;
    int32_t n_tokens = 0;
    if (!common_tokenize(vocab, params->prompt, -1, true, false, &tokens, &n_tokens)) {
        LOG_ERR("perplexity: failed to tokenize the input\n");
        if (fout) {
            fclose(fout);
        }
        return 1;
    }
    LOG_INF("perplexity: tokenization took %g ms\n", 1e3 * (now_s() - t_tok0));

    int rc = 1;
    float * logits_acc = NULL;
    uint16_t * qrows = NULL;
    struct llama_batch batch = { 0 };
    bool batch_ok = false;

    if (n_tokens < 2 * n_ctx) {
        LOG_ERR("perplexity: you need at least %d tokens to evaluate perplexity with a context of %d\n", 2 * n_ctx, n_ctx);
        LOG_ERR("perplexity: the data file you provided tokenizes to only %d tokens\n", n_tokens);
        goto done;
    }

    const int n_chunk_max = n_tokens / n_ctx;
    const int n_chunk = params->n_chunks < 0 ? n_chunk_max
                      : (params->n_chunks < n_chunk_max ? params->n_chunks : n_chunk_max);
    const int n_batch = params->n_batch;
    const int num_batches = (n_ctx + n_batch - 1) / n_batch;
    const int n_seq = n_batch / n_ctx > 1 ? n_batch / n_ctx : 1;
    const int first = n_ctx / 2;
    const int n_scored = n_ctx - 1 - first;

    if (!(n_batch < n_ctx || n_batch % n_ctx == 0)) {
        LOG_ERR("perplexity: batch size %d must be smaller than the context %d or a multiple of it\n", n_batch, n_ctx);
        goto done;
    }

    batch = llama_batch_init(n_batch < n_ctx * n_seq ? n_batch : n_ctx * n_seq, 0, 1);
    batch_ok = true;

    if (num_batches > 1) {
        logits_acc = malloc((size_t) n_ctx * (size_t) n_vocab * sizeof(float));
        if (!logits_acc) {
            LOG_ERR("perplexity: out of memory for %d x %d logits\n", n_ctx, n_vocab);
            goto done;
        }
    }

    LOG_INF("perplexity: calculating perplexity over %d chunks, n_ctx=%d, batch_size=%d, n_seq=%d\n",
            n_chunk, n_ctx, n_batch, n_seq);

    const size_t nv = kld_row_len(n_vocab);
    if (fout) {
        const int32_t hdr_ctx = n_ctx, hdr_vocab = n_vocab, hdr_chunk = n_chunk;
        bool ok = write_all(fout, "_logits_", 8) && write_all(fout, &hdr_ctx, sizeof(hdr_ctx)) &&
                  write_all(fout, &hdr_vocab, sizeof(hdr_vocab)) && write_all(fout, &hdr_chunk, sizeof(hdr_chunk)) &&
                  write_all(fout, tokens, (size_t) n_chunk * (size_t) n_ctx * sizeof(llama_token));
        qrows = malloc((size_t) n_scored * nv * sizeof(uint16_t));
        if (!ok || !qrows) {
            LOG_ERR("perplexity: failed to write %s\n", params->logits_file);
            goto done;
        }
    }

    double nll = 0.0, nll2 = 0.0;
    int count = 0;

    for (int i = 0; i < n_chunk; i += n_seq) {
        const int start = i * n_ctx;
        const int end = start + n_ctx;
        const int n_seq_batch = n_seq < n_chunk - i ? n_seq : n_chunk - i;
        const double t_start = now_s();
        int n_acc = 0;

        llama_memory_clear(llama_get_memory(ctx), true);

        for (int j = 0; j < num_batches; ++j) {
            const int batch_start = start + j * n_batch;
            const int batch_size = end - batch_start < n_batch ? end - batch_start : n_batch;
            int n_outputs = 0;

            batch.n_tokens = 0;
            for (int seq = 0; seq < n_seq_batch; seq++) {
                const int seq_start = batch_start + seq * n_ctx;
                for (int k = 0; k < batch_size; ++k) {
                    const int idx = seq * n_ctx + k;
                    // the chunk is evaluated as if it were the start of a text
                    batch.token[idx] = (add_bos && j == 0 && k == 0) ? llama_vocab_bos(vocab) : tokens[seq_start + k];
                    batch.pos[idx] = j * n_batch + k;
                    batch.n_seq_id[idx] = 1;
                    batch.seq_id[idx][0] = seq;
                    batch.logits[idx] = batch.pos[idx] >= first ? 1 : 0;
                    n_outputs += batch.logits[idx] != 0;
                }
                batch.n_tokens += batch_size;
            }

            if (llama_decode(ctx, batch) != 0) {
                LOG_ERR("perplexity: failed to decode chunk %d\n", i + 1);
                goto done;
            }

            if (num_batches > 1 && n_outputs > 0) {
                const float * bl = llama_get_logits(ctx);
                if (!bl) {
                    LOG_ERR("perplexity: no logits after decoding chunk %d\n", i + 1);
                    goto done;
                }
                memcpy(logits_acc + (size_t) n_acc * n_vocab, bl, (size_t) n_outputs * n_vocab * sizeof(float));
                n_acc += n_outputs;
            }
        }

        if (i == 0) {
            llama_synchronize(ctx);
            log_eta(now_s() - t_start, (n_chunk + n_seq - 1) / n_seq);
        }

        for (int seq = 0; seq < n_seq_batch; seq++) {
            const float * all_logits = num_batches > 1 ? logits_acc : llama_get_logits_ith(ctx, seq * n_ctx + first);
            if (!all_logits) {
                LOG_ERR("perplexity: no logits for chunk %d\n", i + seq + 1);
                goto done;
            }
            const llama_token * tk = tokens + start + seq * n_ctx + first;
            for (int k = 0; k < n_scored; ++k) {
                const float * row = all_logits + (size_t) k * n_vocab;
                const double v = qrows ? token_nll_store(n_vocab, row, qrows + (size_t) k * nv, tk[k + 1])
                                       : token_nll(n_vocab, row, tk[k + 1]);
                nll += v;
                nll2 += v * v;
            }
            if (fout && !write_all(fout, qrows, (size_t) n_scored * nv * sizeof(uint16_t))) {
                LOG_ERR("perplexity: failed to write %s\n", params->logits_file);
                goto done;
            }
            count += n_scored;

            if (params->ppl_output_type == 0) {
                LOG("[%d]%.4lf,", i + seq + 1, exp(nll / count));
            } else {
                const double av = nll / count;
                double av2 = nll2 / count - av * av;
                if (av2 > 0) {
                    av2 = sqrt(av2 / (count - 1));
                }
                LOG("%8d  %.4lf  %4lf  %4lf\n", i * n_ctx, exp(nll / count), av, av2);
            }
        }
    }
    LOG("\n");

    nll2 /= count;
    nll /= count;
    const double ppl = exp(nll);
    nll2 -= nll * nll;
    if (nll2 > 0) {
        nll2 = sqrt(nll2 / (count - 1));
        LOG_INF("Final estimate: PPL = %.4lf +/- %.5lf\n", ppl, nll2 * ppl);
    } else {
        LOG_ERR("Unexpected negative standard deviation of log(prob)\n");
    }
    rc = 0;

done:
    if (fout) {
        if (fclose(fout) != 0 && rc == 0) {
            LOG_ERR("perplexity: failed to write %s\n", params->logits_file);
            rc = 1;
        }
    }
    if (batch_ok) {
        llama_batch_free(batch);
    }
    free(qrows);
    free(logits_acc);
    free(tokens);
    return rc;
}

static void mean_and_unc(double sum, double sum2, size_t count, double * mean, double * unc) {
    if (count < 1) {
        *mean = 0;
        *unc = 0;
        return;
    }
    const double f = sum / (double) count;
    double df = sum2 / (double) count - f * f;
    df = df > 0 && count > 10 ? sqrt(df / (double) (count - 1)) : 0.;
    *mean = f;
    *unc = df;
}

static double covariance(double suma, double sumb, double sumab, size_t count) {
    if (count < 10) {
        return 0.0;
    }
    const double n = (double) count;
    return (sumab / n - (suma / n) * (sumb / n)) / (n - 1);
}

static int cmp_float(const void * a, const void * b) {
    const float x = *(const float *) a, y = *(const float *) b;
    return (x > y) - (x < y);
}

static float percentile(const float * v, size_t n, float fraction) {
    if (fraction <= 0) {
        return v[0];
    }
    if (fraction >= 1) {
        return v[n - 1];
    }
    float p = fraction * (float) (n - 1);
    const size_t ip = (size_t) p;
    p -= (float) ip;
    const size_t ip1 = ip + 1 < n ? ip + 1 : n - 1;
    return (1 - p) * v[ip] + p * v[ip1];
}

static float median(const float * v, size_t n) {
    return n % 2 == 0 ? 0.5f * (v[n / 2] + v[n / 2 - 1]) : v[n / 2];
}

static bool read_all(FILE * f, void * data, size_t size) {
    return size == 0 || fread(data, 1, size, f) == size;
}

static void print_kld_row(const struct kld_sums * s) {
    double lp, lpu, lb, lbu;
    mean_and_unc(s->sum_nll, s->sum_nll2, s->count, &lp, &lpu);
    const double ppl_val = exp(lp);
    LOG("    %9.4lf ± %9.4lf", ppl_val, ppl_val * lpu);

    mean_and_unc(s->sum_nll_base, s->sum_nll_base2, s->count, &lb, &lbu);
    const double cov = covariance(s->sum_nll, s->sum_nll_base, s->sum_nll_nll_base, s->count);
    LOG("    %10.5lf ± %10.5lf", lp - lb, sqrt(lpu * lpu + lbu * lbu - 2.0 * cov));

    double kl, klu;
    mean_and_unc(s->sum_kld, s->sum_kld2, s->count, &kl, &klu);
    LOG("    %10.5lf ± %10.5lf", kl, klu);

    double mse, mseu;
    mean_and_unc(s->sum_p_diff2, s->sum_p_diff4, s->count, &mse, &mseu);
    const double rms = sqrt(mse);
    LOG("    %6.3lf ± %6.3lf %%", 100.0 * rms, rms > 0 ? 100.0 * 0.5 / rms * mseu : 0.0);

    const double ptop = (double) s->n_same_top / (double) s->count;
    LOG("    %6.3lf ± %6.3lf %%", 100.0 * ptop,
        s->count > 1 ? 100.0 * sqrt(ptop * (1 - ptop) / (double) (s->count - 1)) : 0.0);
    LOG("\n");
}

static void print_kld_summary(const struct kld_sums * s, float * kld_values, float * p_diff_values, size_t n) {
    qsort(kld_values, n, sizeof(float), cmp_float);
    qsort(p_diff_values, n, sizeof(float), cmp_float);

    LOG("====== Perplexity statistics ======\n");
    double lp, lpu, lb, lbu;
    mean_and_unc(s->sum_nll, s->sum_nll2, s->count, &lp, &lpu);
    const double ppl_val = exp(lp), ppl_unc = ppl_val * lpu;
    LOG("Mean PPL(Q)                   : %10.6lf ± %10.6lf\n", ppl_val, ppl_unc);
    mean_and_unc(s->sum_nll_base, s->sum_nll_base2, s->count, &lb, &lbu);
    const double ppl_base_val = exp(lb), ppl_base_unc = ppl_base_val * lbu;
    LOG("Mean PPL(base)                : %10.6lf ± %10.6lf\n", ppl_base_val, ppl_base_unc);
    const double cov = covariance(s->sum_nll, s->sum_nll_base, s->sum_nll_nll_base, s->count);
    LOG("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2lf%%\n", 100.0 * cov / (lpu * lbu));
    const double lr = lp - lb;
    const double lru = sqrt(lpu * lpu + lbu * lbu - 2.0 * cov);
    LOG("Mean ln(PPL(Q)/PPL(base))     : %10.6lf ± %10.6lf\n", lr, lru);
    LOG("Mean PPL(Q)/PPL(base)         : %10.6lf ± %10.6lf\n", exp(lr), exp(lr) * lru);
    const double ppl_cov = ppl_val * ppl_base_val * cov;
    LOG("Mean PPL(Q)-PPL(base)         : %10.6lf ± %10.6lf\n", ppl_val - ppl_base_val,
        sqrt(ppl_unc * ppl_unc + ppl_base_unc * ppl_base_unc - 2.0 * ppl_cov));
    LOG("\n");

    LOG("====== KL divergence statistics ======\n");
    double kl, klu;
    mean_and_unc(s->sum_kld, s->sum_kld2, s->count, &kl, &klu);
    LOG("Mean    KLD: %10.6lf ± %10.6lf\n", kl, klu);
    LOG("Maximum KLD: %10.6f\n", (double) kld_values[n - 1]);
    LOG("99.9%%   KLD: %10.6f\n", (double) percentile(kld_values, n, 0.999f));
    LOG("99.0%%   KLD: %10.6f\n", (double) percentile(kld_values, n, 0.990f));
    LOG("95.0%%   KLD: %10.6f\n", (double) percentile(kld_values, n, 0.950f));
    LOG("90.0%%   KLD: %10.6f\n", (double) percentile(kld_values, n, 0.900f));
    LOG("Median  KLD: %10.6f\n", (double) median(kld_values, n));
    LOG("10.0%%   KLD: %10.6f\n", (double) percentile(kld_values, n, 0.100f));
    LOG(" 5.0%%   KLD: %10.6f\n", (double) percentile(kld_values, n, 0.050f));
    LOG(" 1.0%%   KLD: %10.6f\n", (double) percentile(kld_values, n, 0.010f));
    LOG(" 0.1%%   KLD: %10.6f\n", (double) percentile(kld_values, n, 0.001f));
    LOG("Minimum KLD: %10.6f\n", (double) kld_values[0]);
    LOG("\n");

    LOG("====== Token probability statistics ======\n");
    double pd, pdu;
    mean_and_unc(s->sum_p_diff, s->sum_p_diff2, s->count, &pd, &pdu);
    LOG("Mean    Δp: %6.3lf ± %5.3lf %%\n", 100.0 * pd, 100.0 * pdu);
    LOG("Maximum Δp: %6.3lf%%\n", 100.0 * p_diff_values[n - 1]);
    LOG("99.9%%   Δp: %6.3lf%%\n", 100.0 * percentile(p_diff_values, n, 0.999f));
    LOG("99.0%%   Δp: %6.3lf%%\n", 100.0 * percentile(p_diff_values, n, 0.990f));
    LOG("95.0%%   Δp: %6.3lf%%\n", 100.0 * percentile(p_diff_values, n, 0.950f));
    LOG("90.0%%   Δp: %6.3lf%%\n", 100.0 * percentile(p_diff_values, n, 0.900f));
    LOG("75.0%%   Δp: %6.3lf%%\n", 100.0 * percentile(p_diff_values, n, 0.750f));
    LOG("Median  Δp: %6.3lf%%\n", 100.0 * median(p_diff_values, n));
    LOG("25.0%%   Δp: %6.3lf%%\n", 100.0 * percentile(p_diff_values, n, 0.250f));
    LOG("10.0%%   Δp: %6.3lf%%\n", 100.0 * percentile(p_diff_values, n, 0.100f));
    LOG(" 5.0%%   Δp: %6.3lf%%\n", 100.0 * percentile(p_diff_values, n, 0.050f));
    LOG(" 1.0%%   Δp: %6.3lf%%\n", 100.0 * percentile(p_diff_values, n, 0.010f));
    LOG(" 0.1%%   Δp: %6.3lf%%\n", 100.0 * percentile(p_diff_values, n, 0.001f));
    LOG("Minimum Δp: %6.3lf%%\n", 100.0 * p_diff_values[0]);
    double mse, mseu;
    mean_and_unc(s->sum_p_diff2, s->sum_p_diff4, s->count, &mse, &mseu);
    const double rms = sqrt(mse);
    LOG("RMS Δp    : %6.3lf ± %5.3lf %%\n", 100.0 * rms, rms > 0 ? 100.0 * 0.5 / rms * mseu : 0.0);
    const double stp = (double) s->n_same_top / (double) s->count;
    LOG("Same top p: %6.3lf ± %5.3lf %%\n", 100.0 * stp, 100.0 * sqrt(stp * (1.0 - stp) / (double) (s->count - 1)));
}

// returns 0 on success
static int run_kl_divergence(struct llama_context * ctx, const struct common_params * params) {
    const struct llama_model * model = llama_get_model(ctx);
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    const bool add_bos = llama_vocab_get_add_bos(vocab);

    if (!params->logits_file || !params->logits_file[0]) {
        LOG_ERR("kl_divergence: you must provide a name of a file containing the log probabilities of the base model\n");
        return 1;
    }
    FILE * in = fopen(params->logits_file, "rb");
    if (!in) {
        LOG_ERR("kl_divergence: failed to open %s: %s\n", params->logits_file, strerror(errno));
        return 1;
    }

    int rc = 1;
    llama_token * tokens = NULL;
    uint16_t * base_rows = NULL;
    float * kld_values = NULL;
    float * p_diff_values = NULL;
    float * logits_acc = NULL;
    struct llama_batch batch = { 0 };
    bool batch_ok = false;

    char magic[8];
    int32_t n_ctx = 0, n_vocab = 0, n_chunk = 0;
    if (!read_all(in, magic, 8) || memcmp(magic, "_logits_", 8) != 0) {
        LOG_ERR("kl_divergence: %s does not look like a file containing log-probabilities\n", params->logits_file);
        goto done;
    }
    if (!read_all(in, &n_ctx, sizeof(n_ctx)) || !read_all(in, &n_vocab, sizeof(n_vocab)) ||
        !read_all(in, &n_chunk, sizeof(n_chunk))) {
        LOG_ERR("kl_divergence: failed reading n_ctx, n_vocab, n_chunk from %s\n", params->logits_file);
        goto done;
    }
    if (n_ctx < 4 || n_chunk < 1 || n_ctx > (1 << 24) || n_chunk > (1 << 24)) {
        LOG_ERR("kl_divergence: %s has an invalid header (n_ctx = %d, n_chunk = %d)\n", params->logits_file, n_ctx, n_chunk);
        goto done;
    }
    if ((uint32_t) n_ctx > llama_n_ctx(ctx)) {
        LOG_ERR("kl_divergence: %s has been computed with %d, while the current context is %u. Increase it with -c and retry\n",
                params->logits_file, n_ctx, llama_n_ctx(ctx));
        goto done;
    }
    if (n_vocab != llama_vocab_n_tokens(vocab)) {
        LOG_ERR("kl_divergence: inconsistent vocabulary (%d vs %d)\n", n_vocab, llama_vocab_n_tokens(vocab));
        goto done;
    }

    const size_t n_tok_total = (size_t) n_ctx * (size_t) n_chunk;
    tokens = malloc(n_tok_total * sizeof(llama_token));
    if (!tokens || !read_all(in, tokens, n_tok_total * sizeof(llama_token))) {
        LOG_ERR("kl_divergence: failed reading evaluation tokens from %s\n", params->logits_file);
        goto done;
    }
    for (size_t k = 0; k < n_tok_total; ++k) {
        if (tokens[k] < 0 || tokens[k] >= n_vocab) {
            LOG_ERR("kl_divergence: token %d at index %zu of %s is out of range\n", tokens[k], k, params->logits_file);
            goto done;
        }
    }

    const int n_batch = params->n_batch;
    const int num_batches = (n_ctx + n_batch - 1) / n_batch;
    const size_t nv = kld_row_len(n_vocab);
    const int first = n_ctx / 2;
    const int n_scored = n_ctx - 1 - first;

    base_rows = malloc((size_t) n_scored * nv * sizeof(uint16_t));
    kld_values = malloc((size_t) n_scored * (size_t) n_chunk * sizeof(float));
    p_diff_values = malloc((size_t) n_scored * (size_t) n_chunk * sizeof(float));
    if (num_batches > 1) {
        logits_acc = malloc((size_t) n_ctx * (size_t) n_vocab * sizeof(float));
    }
    if (!base_rows || !kld_values || !p_diff_values || (num_batches > 1 && !logits_acc)) {
        LOG_ERR("kl_divergence: out of memory\n");
        goto done;
    }
    batch = llama_batch_init(n_batch, 0, 1);
    batch_ok = true;

    struct kld_sums s;
    memset(&s, 0, sizeof(s));
    size_t n_vals = 0;

    for (int i = 0; i < n_chunk; ++i) {
        const int start = i * n_ctx;
        const int end = start + n_ctx;
        const double t_start = now_s();
        int n_acc = 0;

        if (!read_all(in, base_rows, (size_t) n_scored * nv * sizeof(uint16_t))) {
            LOG_ERR("kl_divergence: failed reading log-probs for chunk %d\n", i);
            goto done;
        }

        llama_memory_clear(llama_get_memory(ctx), true);

        for (int j = 0; j < num_batches; ++j) {
            const int batch_start = start + j * n_batch;
            const int batch_size = end - batch_start < n_batch ? end - batch_start : n_batch;
            common_batch_clear(&batch);
            const llama_seq_id seq0 = 0;
            for (int k = 0; k < batch_size; ++k) {
                const llama_token t = (add_bos && j == 0 && k == 0) ? llama_vocab_bos(vocab) : tokens[batch_start + k];
                common_batch_add(&batch, t, j * n_batch + k, &seq0, 1, true);
            }
            if (llama_decode(ctx, batch) != 0) {
                LOG_ERR("kl_divergence: failed to decode chunk %d\n", i + 1);
                goto done;
            }
            if (num_batches > 1) {
                const float * bl = llama_get_logits(ctx);
                if (!bl) {
                    LOG_ERR("kl_divergence: no logits after decoding chunk %d\n", i + 1);
                    goto done;
                }
                memcpy(logits_acc + (size_t) n_acc * n_vocab, bl, (size_t) batch_size * n_vocab * sizeof(float));
                n_acc += batch_size;
            }
        }

        if (i == 0) {
            log_eta(now_s() - t_start, n_chunk);
        }
        LOG("\n");
        LOG("chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p\n");

        const float * all_logits = num_batches > 1 ? logits_acc : llama_get_logits(ctx);
        if (!all_logits) {
            LOG_ERR("kl_divergence: no logits for chunk %d\n", i + 1);
            goto done;
        }
        for (int k = 0; k < n_scored; ++k) {
            const float * row = all_logits + (size_t) (first + k) * n_vocab;
            float pd = 0.0f;
            kld_values[n_vals] = (float) kld_position(n_vocab, row, base_rows + (size_t) k * nv,
                                                      tokens[start + first + k + 1], &s, &pd);
            p_diff_values[n_vals] = pd;
            n_vals++;
        }

        LOG("%4d", i + 1);
        print_kld_row(&s);
    }
    LOG("\n");

    // statistics over so few values would mislead
    if (s.count >= 100) {
        print_kld_summary(&s, kld_values, p_diff_values, n_vals);
    }
    rc = 0;

done:
    fclose(in);
    if (batch_ok) {
        llama_batch_free(batch);
    }
    free(tokens);
    free(base_rows);
    free(kld_values);
    free(p_diff_values);
    free(logits_acc);
    return rc;
}

int main(int argc, char ** argv) {
    setlocale(LC_NUMERIC, "C");

    struct common_params params = common_params_default();
    params.n_ctx = 512;
    params.escape = false;

    if (!common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_PERPLEXITY, NULL)) {
        common_params_free(&params);
        return 1;
    }

    common_init();

    const int32_t n_ctx = params.n_ctx;
    if (n_ctx <= 0) {
        LOG_ERR("main: perplexity tool requires '--ctx-size' > 0\n");
        common_params_free(&params);
        return 1;
    }
    if (params.hellaswag || params.winogrande || params.multiple_choice) {
        LOG_ERR("main: --hellaswag, --winogrande and --multiple-choice are not supported by this build\n");
        common_params_free(&params);
        return 1;
    }
    if (params.ppl_stride > 0) {
        LOG_ERR("main: --ppl-stride is not supported by this build\n");
        common_params_free(&params);
        return 1;
    }

    if (!params.kl_divergence) {
        common_params_chunks_per_batch(&params);
    } else {
        params.n_batch = params.n_batch < params.n_ctx ? params.n_batch : params.n_ctx;
        params.n_parallel = 1;
    }

    llama_backend_init();

    struct common_init_result init = common_init_from_params(&params);
    if (!init.model || !init.context) {
        LOG_ERR("main: unable to load model\n");
        common_init_result_free(&init);
        common_params_free(&params);
        llama_backend_free();
        return 1;
    }

    const int n_ctx_train = llama_model_n_ctx_train(init.model);
    if (params.n_ctx > n_ctx_train) {
        LOG_WRN("main: model was trained on only %d context tokens (%d specified)\n", n_ctx_train, params.n_ctx);
    }

    LOG_INF("\n");
    LOG_INF("%s\n", common_params_get_system_info(&params));

    const int rc = params.kl_divergence ? run_kl_divergence(init.context, &params)
                                        : run_perplexity(init.context, &params, n_ctx);

    LOG("\n");
    llama_perf_context_print(init.context);

    common_init_result_free(&init);
    common_params_free(&params);
    llama_backend_free();
    return rc;
}
