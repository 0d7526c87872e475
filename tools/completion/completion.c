// llama-completion (non-interactive): tokenize the prompt, feed it in n_batch chunks, then sample up to
// n_predict tokens with the sampler chain of common_params_sampling, echoing prompt and generation to
// stdout; timings go to stderr. Conversation / interactive mode is not provided by this build.
#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"
#include "sampling.h"

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

// common_sampler with llama.cpp's chain (logit bias, the --samplers order, then dist; or mirostat). --ignore-eos is
// a -inf bias on every end-of-generation token merged after the user's biases, as llama.cpp's
// common_init_from_params does before the sampler is built. NULL (and a log line) on bad parameters.
static struct common_sampler * init_sampler(const struct common_params_sampling * sp, const struct llama_model * model) {
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    for (int32_t i = 0; i < sp->n_logit_bias; i++) {
        if (sp->logit_bias[i].token < 0 || sp->logit_bias[i].token >= n_vocab) {
            LOG_ERR("%s: logit bias token %d is out of range (vocab has %d tokens)\n", __func__,
                    sp->logit_bias[i].token, n_vocab);
            return NULL;
        }
    }
    struct common_params_sampling merged = *sp;
    llama_logit_bias * bias = NULL;
    if (sp->ignore_eos) {
        int32_t n_eog = 0;
        for (llama_token t = 0; t < n_vocab; t++) {
            n_eog += llama_vocab_is_eog(vocab, t) ? 1 : 0;
        }
        if (n_eog > 0) {
            bias = malloc((size_t) (sp->n_logit_bias + n_eog) * sizeof(*bias));
            if (!bias) {
                LOG_ERR("%s: out of memory\n", __func__);
                return NULL;
            }
            if (sp->n_logit_bias > 0) {
                memcpy(bias, sp->logit_bias, (size_t) sp->n_logit_bias * sizeof(*bias));
            }
            int32_t n = sp->n_logit_bias;
            for (llama_token t = 0; t < n_vocab; t++) {
                if (llama_vocab_is_eog(vocab, t)) {
                    bias[n].token = t;
                    bias[n].bias  = -INFINITY;
                    n++;
                }
            }
            merged.logit_bias   = bias;
            merged.n_logit_bias = n;
        }
    }
    struct common_sampler * smpl = common_sampler_init(model, &merged);
    free(bias);
    return smpl;
}

static void print_sampler_info(const struct common_params_sampling * sp, const struct common_sampler * smpl) {
    LOG_INF("sampler seed: %u\n", common_sampler_get_seed(smpl));
    LOG_INF("sampler params: \n"
            "\trepeat_last_n = %d, repeat_penalty = %.3f, frequency_penalty = %.3f, presence_penalty = %.3f\n"
            "\tdry_multiplier = %.3f, dry_base = %.3f, dry_allowed_length = %d, dry_penalty_last_n = %d\n"
            "\ttop_k = %d, top_p = %.3f, min_p = %.3f, xtc_probability = %.3f, xtc_threshold = %.3f, typical_p = %.3f, top_n_sigma = %.3f, temp = %.3f\n"
            "\tmirostat = %d, mirostat_lr = %.3f, mirostat_ent = %.3f\n",
            sp->penalty_last_n, sp->penalty_repeat, sp->penalty_freq, sp->penalty_present,
            sp->dry_multiplier, sp->dry_base, sp->dry_allowed_length, sp->dry_penalty_last_n,
            sp->top_k, sp->top_p, sp->min_p, sp->xtc_probability, sp->xtc_threshold, sp->typ_p, sp->top_n_sigma, sp->temp,
            sp->mirostat, sp->mirostat_eta, sp->mirostat_tau);
    char desc[1024];
    common_sampler_print(smpl, desc, sizeof(desc));
    LOG_INF("sampler chain: %s\n", desc);
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
    struct common_sampler * smpl = NULL;
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

    smpl = init_sampler(&params.sampling, model);
    if (!smpl) {
        LOG_ERR("%s: failed to initialize sampling subsystem\n", __func__);
        goto done;
    }
    // -bs: the chain's backend prefix runs inside llama_decode; a token sampled there is returned as it is
    if (params.sampling.backend_sampling && !llama_set_sampler(ctx, 0, common_sampler_get(smpl))) {
        LOG_WRN("%s: backend sampling is not available here, sampling on the CPU\n", __func__);
    }
    print_sampler_info(&params.sampling, smpl);
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
            const llama_token id = common_sampler_sample(smpl, ctx, -1, false);
            common_sampler_accept(smpl, id, true);
            embd[n_embd++] = id;
            embd_is_prompt = false;
            --n_remain;
        } else {
            // the prompt also feeds the penalty history, as in llama.cpp
            embd_is_prompt = true;
            while (n_consumed < n_inp) {
                embd[n_embd++] = embd_inp[n_consumed];
                common_sampler_accept(smpl, embd_inp[n_consumed], false);
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
        common_perf_print(ctx, smpl);
    }

done:
    free(embd);
    free(embd_inp);
    common_sampler_free(smpl);
    common_init_result_free(&init);
    common_params_free(&params);
    llama_backend_free();
    return rc;
}
