// llama-completion (non-interactive): tokenize the prompt, feed it in n_batch chunks, then sample up to
// n_predict tokens with the sampler chain of common_params_sampling, echoing prompt and generation to
// stdout; timings go to stderr. Conversation / interactive mode is not provided by this build.
#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"

#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_usage(int argc, char ** argv) {
    (void) argc;
    LOG("\nexample usage:\n");
    LOG("\n  text generation:     %s -m your_model.gguf -p \"I believe the meaning of life is\" -n 128 -no-cnv\n", argv[0]);
    LOG("\n");
}

// The sampler chain in llama.cpp's order: logit bias (incl. EOG ban for --ignore-eos), then the configured
// samplers, then dist(seed); mirostat replaces the list. NULL (and a log line) on bad parameters.
static struct llama_sampler * build_sampler_chain(const struct common_params_sampling * sp,
                                                  const struct llama_vocab * vocab, bool no_perf) {
    struct llama_sampler_chain_params cp = llama_sampler_chain_default_params();
    cp.no_perf = no_perf;
    struct llama_sampler * chain = llama_sampler_chain_init(cp);
    if (!chain) {
        return NULL;
    }
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);

    // user biases, plus -inf for every end-of-generation token when EOS is ignored
    int32_t n_bias = sp->n_logit_bias;
    llama_logit_bias * bias = NULL;
    {
        int32_t n_eog = 0;
        if (sp->ignore_eos) {
            for (llama_token t = 0; t < n_vocab; t++) {
                n_eog += llama_vocab_is_eog(vocab, t) ? 1 : 0;
            }
        }
        if (n_bias + n_eog > 0) {
            bias = malloc((size_t) (n_bias + n_eog) * sizeof(*bias));
            if (!bias) {
                llama_sampler_free(chain);
                return NULL;
            }
            if (n_bias > 0) {
                memcpy(bias, sp->logit_bias, (size_t) n_bias * sizeof(*bias));
            }
            for (llama_token t = 0; t < n_vocab && n_eog > 0; t++) {
                if (llama_vocab_is_eog(vocab, t)) {
                    bias[n_bias].token = t;
                    bias[n_bias].bias  = -INFINITY;
                    n_bias++;
                }
            }
        }
    }
    for (int32_t i = 0; i < n_bias; i++) {
        if (bias[i].token < 0 || bias[i].token >= n_vocab) {
            LOG_ERR("%s: logit bias token %d is out of range (vocab has %d tokens)\n", __func__, bias[i].token, n_vocab);
            free(bias);
            llama_sampler_free(chain);
            return NULL;
        }
    }
    llama_sampler_chain_add(chain, llama_sampler_init_logit_bias(n_vocab, n_bias, bias));
    free(bias);

    const size_t min_keep = (size_t) (sp->min_keep > 0 ? sp->min_keep : 0);
    struct llama_sampler * s = NULL;
    if (sp->mirostat == 0) {
        for (int32_t i = 0; i < sp->n_samplers; i++) {
            s = NULL;
            switch (sp->samplers[i]) {
                case COMMON_SAMPLER_TYPE_DRY: {
                    const char * breakers[COMMON_DRY_BREAKERS_MAX];
                    for (int32_t k = 0; k < sp->n_dry_sequence_breakers; k++) {
                        breakers[k] = sp->dry_sequence_breakers[k];
                    }
                    s = llama_sampler_init_dry(vocab, sp->dry_multiplier, sp->dry_base, sp->dry_allowed_length,
                                               sp->dry_penalty_last_n, breakers, (size_t) sp->n_dry_sequence_breakers);
                } break;
                case COMMON_SAMPLER_TYPE_TOP_K:       s = llama_sampler_init_top_k(sp->top_k); break;
                case COMMON_SAMPLER_TYPE_TOP_P:       s = llama_sampler_init_top_p(sp->top_p, min_keep); break;
                case COMMON_SAMPLER_TYPE_TOP_N_SIGMA: s = llama_sampler_init_top_n_sigma(sp->top_n_sigma); break;
                case COMMON_SAMPLER_TYPE_MIN_P:       s = llama_sampler_init_min_p(sp->min_p, min_keep); break;
                case COMMON_SAMPLER_TYPE_XTC:
                    s = llama_sampler_init_xtc(sp->xtc_probability, sp->xtc_threshold, min_keep, sp->seed);
                    break;
                case COMMON_SAMPLER_TYPE_TYPICAL_P:   s = llama_sampler_init_typical(sp->typ_p, min_keep); break;
                case COMMON_SAMPLER_TYPE_TEMPERATURE:
                    s = llama_sampler_init_temp_ext(sp->temp, sp->dynatemp_range, sp->dynatemp_exponent);
                    break;
                case COMMON_SAMPLER_TYPE_INFILL:      s = llama_sampler_init_infill(vocab); break;
                case COMMON_SAMPLER_TYPE_PENALTIES:
                    s = llama_sampler_init_penalties(n_vocab, sp->penalty_last_n, sp->penalty_repeat,
                                                     sp->penalty_freq, sp->penalty_present);
                    break;
                case COMMON_SAMPLER_TYPE_ADAPTIVE_P:
                    // adaptive-p selects the token itself, so it replaces dist at the end
                    continue;
                default:
                    continue;
            }
            if (!s) {
                LOG_ERR("%s: invalid parameters for sampler %d\n", __func__, (int) sp->samplers[i]);
                llama_sampler_free(chain);
                return NULL;
            }
            llama_sampler_chain_add(chain, s);
        }
        if (sp->adaptive_target >= 0.0f) {
            s = llama_sampler_init_adaptive_p(sp->adaptive_target, sp->adaptive_decay, sp->seed);
        } else {
            s = llama_sampler_init_dist(sp->seed);
        }
    } else if (sp->mirostat == 1) {
        llama_sampler_chain_add(chain, llama_sampler_init_temp(sp->temp));
        s = llama_sampler_init_mirostat(n_vocab, sp->seed, sp->mirostat_tau, sp->mirostat_eta, 100);
    } else {
        llama_sampler_chain_add(chain, llama_sampler_init_temp(sp->temp));
        s = llama_sampler_init_mirostat_v2(sp->seed, sp->mirostat_tau, sp->mirostat_eta);
    }
    if (!s) {
        LOG_ERR("%s: invalid parameters for the final sampler\n", __func__);
        llama_sampler_free(chain);
        return NULL;
    }
    llama_sampler_chain_add(chain, s);
    return chain;
}

static void print_sampler_info(const struct common_params_sampling * sp, struct llama_sampler * chain) {
    LOG_INF("sampler seed: %u\n", llama_sampler_get_seed(chain));
    LOG_INF("sampler params: \n"
            "\trepeat_last_n = %d, repeat_penalty = %.3f, frequency_penalty = %.3f, presence_penalty = %.3f\n"
            "\tdry_multiplier = %.3f, dry_base = %.3f, dry_allowed_length = %d, dry_penalty_last_n = %d\n"
            "\ttop_k = %d, top_p = %.3f, min_p = %.3f, xtc_probability = %.3f, xtc_threshold = %.3f, typical_p = %.3f, top_n_sigma = %.3f, temp = %.3f\n"
            "\tmirostat = %d, mirostat_lr = %.3f, mirostat_ent = %.3f\n",
            sp->penalty_last_n, sp->penalty_repeat, sp->penalty_freq, sp->penalty_present,
            sp->dry_multiplier, sp->dry_base, sp->dry_allowed_length, sp->dry_penalty_last_n,
            sp->top_k, sp->top_p, sp->min_p, sp->xtc_probability, sp->xtc_threshold, sp->typ_p, sp->top_n_sigma, sp->temp,
            sp->mirostat, sp->mirostat_eta, sp->mirostat_tau);
    LOG_INF("sampler chain: logits");
    const int n = llama_sampler_chain_n(chain);
    for (int i = 0; i < n; i++) {
        LOG_CNT(" -> %s", llama_sampler_name(llama_sampler_chain_get(chain, i)));
    }
    LOG_CNT("\n");
}

// keeps the last bytes of the generated text in buf (NUL-terminated)
static void tail_append(char * buf, size_t size, const char * piece, size_t len) {
    size_t cur = strlen(buf);
    if (len >= size - 1) {
        piece += len - (size - 1);
        len = size - 1;
    }
    if (cur + len > size - 1) {
        size_t drop = cur + len - (size - 1);
        memmove(buf, buf + drop, cur - drop);
        cur -= drop;
    }
    memcpy(buf + cur, piece, len);
    buf[cur + len] = '\0';
}

int main(int argc, char ** argv) {
    setlocale(LC_NUMERIC, "C");

    struct common_params params = common_params_default();
    common_init();

    if (!common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_COMPLETION, print_usage)) {
        common_params_free(&params);
        return 1;
    }

    int rc = 1;
    struct common_init_result init = { NULL, NULL };
    struct llama_sampler * chain = NULL;
    llama_token * embd_inp = NULL;
    llama_token * embd = NULL;

    if (params.conversation_mode == COMMON_CONVERSATION_MODE_ENABLED) {
        LOG_ERR("%s: conversation mode is not supported by this llama-completion; run with -no-cnv\n", __func__);
        goto done;
    }
    if (params.sampling.grammar) {
        LOG_ERR("%s: grammar-constrained sampling is not supported yet\n", __func__);
        goto done;
    }
    if (params.n_ctx != 0 && params.n_ctx < 8) {
        LOG_WRN("%s: warning: minimum context size is 8, using minimum size.\n", __func__);
        params.n_ctx = 8;
    }
    if (params.rope_freq_base != 0.0f) {
        LOG_WRN("%s: warning: changing RoPE frequency base to %g.\n", __func__, (double) params.rope_freq_base);
    }
    if (params.rope_freq_scale != 0.0f) {
        LOG_WRN("%s: warning: scaling RoPE frequency by %g.\n", __func__, (double) params.rope_freq_scale);
    }

    LOG_INF("%s: llama backend init\n", __func__);
    llama_backend_init();

    LOG_INF("%s: load the model and apply lora adapter, if any\n", __func__);
    init = common_init_from_params(&params);
    if (!init.model || !init.context) {
        LOG_ERR("%s: error: unable to load model\n", __func__);
        goto done;
    }
    struct llama_context * ctx = init.context;
    struct llama_model * model = init.model;
    const struct llama_vocab * vocab = llama_model_get_vocab(model);

    const int n_ctx_train = llama_model_n_ctx_train(model);
    const int n_ctx = (int) llama_n_ctx(ctx);
    if (n_ctx > n_ctx_train) {
        LOG_WRN("%s: model was trained on only %d context tokens (%d specified)\n", __func__, n_ctx_train, n_ctx);
    }

    if (params.conversation_mode == COMMON_CONVERSATION_MODE_AUTO && llama_model_chat_template(model, NULL)) {
        LOG_INF("%s: the model has a chat template; this llama-completion always runs without it (as -no-cnv)\n", __func__);
    }

    LOG_INF("\n");
    LOG_INF("%s\n", common_params_get_system_info(&params));
    LOG_INF("\n");

    const bool add_bos = llama_vocab_get_add_bos(vocab);

    int32_t n_inp = 0;
    if (!common_tokenize(vocab, params.prompt ? params.prompt : "", -1, true, true, &embd_inp, &n_inp)) {
        LOG_ERR("%s: error: failed to tokenize the prompt\n", __func__);
        goto done;
    }
    if (n_inp == 0) {
        if (add_bos) {
            free(embd_inp);
            embd_inp = malloc(sizeof(llama_token));
            if (!embd_inp) {
                goto done;
            }
            embd_inp[0] = llama_vocab_bos(vocab);
            n_inp = 1;
            LOG_WRN("embd_inp was considered empty and bos was added\n");
        } else {
            LOG_ERR("input is empty\n");
            goto done;
        }
    }

    if (n_inp > n_ctx - 4) {
        LOG_ERR("%s: prompt is too long (%d tokens, max %d)\n", __func__, n_inp, n_ctx - 4);
        goto done;
    }

    // the kept prefix for context shifting
    if (params.n_keep < 0 || params.n_keep > n_inp) {
        params.n_keep = n_inp;
    } else {
        // the BOS token is always kept
        params.n_keep += add_bos ? 1 : 0;
    }

    if (params.verbose_prompt) {
        LOG_INF("\n");
        LOG_INF("%s: prompt: '%s'\n", __func__, params.prompt ? params.prompt : "");
        LOG_INF("%s: number of tokens in prompt = %d\n", __func__, n_inp);
        for (int32_t i = 0; i < n_inp; i++) {
            char * piece = common_token_to_piece(vocab, embd_inp[i], true, NULL);
            LOG_INF("%6d -> '%s'\n", embd_inp[i], piece ? piece : "");
            free(piece);
        }
        LOG_INF("\n");
    }

    chain = build_sampler_chain(&params.sampling, vocab, params.sampling.no_perf);
    if (!chain) {
        LOG_ERR("%s: failed to initialize sampling subsystem\n", __func__);
        goto done;
    }
    print_sampler_info(&params.sampling, chain);
    LOG_INF("generate: n_ctx = %d, n_batch = %d, n_predict = %d, n_keep = %d\n", n_ctx, params.n_batch,
            params.n_predict, params.n_keep);
    LOG_INF("\n\n");

    // the tokens decoded next: a chunk of the prompt or the one sampled token
    const int n_batch = params.n_batch;
    embd = malloc((size_t) (n_batch > 1 ? n_batch : 1) * sizeof(llama_token));
    if (!embd) {
        goto done;
    }
    int n_embd = 0;

    llama_memory_t mem = llama_get_memory(ctx);
    int  n_past     = 0;
    int  n_remain   = params.n_predict;
    int  n_consumed = 0;
    bool embd_is_prompt = true;
    // the end of the generated text, to find reverse prompts (-r)
    char tail[512];
    tail[0] = '\0';
    rc = 0;

    while (n_remain != 0) {
        if (n_embd > 0) {
            if (n_past + n_embd >= n_ctx) {
                if (!params.ctx_shift) {
                    LOG_WRN("\n\n%s: context full and context shift is disabled => stopping\n", __func__);
                    break;
                }
                if (params.n_predict == -2) {
                    LOG_WRN("\n\n%s: context full and n_predict == -2 => stopping\n", __func__);
                    break;
                }
                // drop half of what follows the kept prefix and slide the rest down
                const int n_left    = n_past - params.n_keep;
                const int n_discard = n_left / 2;
                LOG_DBG("context full, swapping: n_past = %d, n_left = %d, n_ctx = %d, n_keep = %d, n_discard = %d\n",
                        n_past, n_left, n_ctx, params.n_keep, n_discard);
                llama_memory_seq_rm (mem, 0, params.n_keep, params.n_keep + n_discard);
                llama_memory_seq_add(mem, 0, params.n_keep + n_discard, n_past, -n_discard);
                n_past -= n_discard;
            }

            for (int i = 0; i < n_embd; i += n_batch) {
                int n_eval = n_embd - i;
                if (n_eval > n_batch) {
                    n_eval = n_batch;
                }
                int ret = llama_decode(ctx, llama_batch_get_one(&embd[i], n_eval));
                if (ret != 0) {
                    LOG_ERR("%s : failed to eval (llama_decode returned %d)\n", __func__, ret);
                    rc = 1;
                    goto done;
                }
                n_past += n_eval;
            }
        }

        n_embd = 0;

        if (n_consumed >= n_inp) {
            // llama_sampler_sample also accepts the token into the chain (penalties see it)
            const llama_token id = llama_sampler_sample(chain, ctx, -1);
            embd[n_embd++] = id;
            embd_is_prompt = false;
            --n_remain;
        } else {
            // the prompt also feeds the penalty history, as in llama.cpp
            embd_is_prompt = true;
            while (n_consumed < n_inp) {
                embd[n_embd++] = embd_inp[n_consumed];
                llama_sampler_accept(chain, embd_inp[n_consumed]);
                ++n_consumed;
                if (n_embd >= n_batch) {
                    break;
                }
            }
        }

        if (!embd_is_prompt || params.display_prompt) {
            for (int i = 0; i < n_embd; i++) {
                int32_t len = 0;
                char * piece = common_token_to_piece(vocab, embd[i], params.special, &len);
                if (piece) {
                    LOG("%s", piece);
                    if (!embd_is_prompt) {
                        tail_append(tail, sizeof(tail), piece, (size_t) len);
                    }
                    free(piece);
                }
            }
        }

        // -r: stop once the generated text ends with one of the reverse prompts
        if (!embd_is_prompt && n_embd > 0) {
            bool hit = false;
            for (int k = 0; k < params.n_antiprompt && !hit; k++) {
                const size_t la = strlen(params.antiprompt[k]);
                const size_t lt = strlen(tail);
                hit = la > 0 && la <= lt && memcmp(tail + lt - la, params.antiprompt[k], la) == 0;
            }
            if (hit) {
                break;
            }
        }

        if (n_embd > 0 && n_consumed >= n_inp && llama_vocab_is_eog(vocab, embd[n_embd - 1])) {
            LOG(" [end of text]\n");
            break;
        }
    }

    LOG("\n\n");
    if (!params.no_perf) {
        llama_perf_sampler_print(chain);
        llama_perf_context_print(ctx);
    }

done:
    free(embd);
    free(embd_inp);
    if (chain) {
        llama_sampler_free(chain);
    }
    common_init_result_free(&init);
    common_params_free(&params);
    llama_backend_free();
    return rc;
}
