// llama-simple: the smallest generation program on the public API only (no common/): greedy decoding of
// a prompt, printed token by token, then the decode speed and the perf counters on stderr.
#include "llama.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_usage(int argc, char ** argv) {
    (void) argc;
    printf("\nexample usage:\n");
    printf("\n    %s -m model.gguf [-n n_predict] [-ngl n_gpu_layers] [prompt]\n", argv[0]);
    printf("\n");
}

static bool parse_int(const char * s, int * out) {
    if (!s || !*s) {
        return false;
    }
    errno = 0;
    char * end = NULL;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < INT_MIN || v > INT_MAX) {
        return false;
    }
    *out = (int) v;
    return true;
}

// the text of a token; false when it does not fit the buffer
static bool piece_of(const struct llama_vocab * vocab, llama_token id, char * buf, int size, int * n_out) {
    int n = llama_token_to_piece(vocab, id, buf, size, 0, true);
    if (n < 0) {
        return false;
    }
    *n_out = n;
    return true;
}

int main(int argc, char ** argv) {
    const char * model_path = NULL;
    char * prompt = NULL;
    int ngl = 99;
    int n_predict = 32;

    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "-m") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "error: expected value for argument: -m\n");
                print_usage(argc, argv);
                return 1;
            }
            model_path = argv[++i];
        } else if (strcmp(argv[i], "-n") == 0) {
            if (i + 1 >= argc || !parse_int(argv[i + 1], &n_predict) || n_predict < 0) {
                fprintf(stderr, "error: -n expects a non-negative integer\n");
                print_usage(argc, argv);
                return 1;
            }
            i++;
        } else if (strcmp(argv[i], "-ngl") == 0) {
            if (i + 1 >= argc || !parse_int(argv[i + 1], &ngl)) {
                fprintf(stderr, "error: -ngl expects an integer\n");
                print_usage(argc, argv);
                return 1;
            }
            i++;
        } else {
            // the prompt starts here
            break;
        }
    }
    if (!model_path) {
        fprintf(stderr, "error: no model given (-m)\n");
        print_usage(argc, argv);
        return 1;
    }
    // the remaining arguments form the prompt, joined with single spaces
    {
        size_t len = 0;
        for (int k = i; k < argc; k++) {
            len += strlen(argv[k]) + 1;
        }
        const char * def = "Hello my name is";
        prompt = malloc(i < argc ? len + 1 : strlen(def) + 1);
        if (!prompt) {
            fprintf(stderr, "error: out of memory\n");
            return 1;
        }
        if (i < argc) {
            prompt[0] = '\0';
            for (int k = i; k < argc; k++) {
                if (k > i) {
                    strcat(prompt, " ");
                }
                strcat(prompt, argv[k]);
            }
        } else {
            strcpy(prompt, def);
        }
    }

    ggml_backend_load_all();

    struct llama_model_params model_params = llama_model_default_params();
    model_params.n_gpu_layers = ngl;

    struct llama_model * model = llama_model_load_from_file(model_path, model_params);
    if (!model) {
        fprintf(stderr, "%s: error: unable to load model\n", __func__);
        free(prompt);
        return 1;
    }

    const struct llama_vocab * vocab = llama_model_get_vocab(model);

    const int32_t prompt_len = (int32_t) strlen(prompt);
    const int n_prompt = -llama_tokenize(vocab, prompt, prompt_len, NULL, 0, true, true);
    llama_token * prompt_tokens = n_prompt > 0 ? malloc((size_t) n_prompt * sizeof(llama_token)) : NULL;
    if (n_prompt <= 0 || !prompt_tokens ||
        llama_tokenize(vocab, prompt, prompt_len, prompt_tokens, n_prompt, true, true) < 0) {
        fprintf(stderr, "%s: error: failed to tokenize the prompt\n", __func__);
        free(prompt_tokens);
        free(prompt);
        llama_model_free(model);
        return 1;
    }

    struct llama_context_params ctx_params = llama_context_default_params();
    // exactly the room the prompt and the generation need
    const long long n_ctx_need = (long long) n_prompt + n_predict - 1;
    ctx_params.n_ctx   = (uint32_t) (n_ctx_need > 0 ? n_ctx_need : 1);
    ctx_params.n_batch = (uint32_t) n_prompt;
    ctx_params.no_perf = false;

    struct llama_context * ctx = llama_init_from_model(model, ctx_params);
    if (!ctx) {
        fprintf(stderr, "%s: error: failed to create the llama_context\n", __func__);
        free(prompt_tokens);
        free(prompt);
        llama_model_free(model);
        return 1;
    }

    struct llama_sampler_chain_params sparams = llama_sampler_chain_default_params();
    sparams.no_perf = false;
    struct llama_sampler * smpl = llama_sampler_chain_init(sparams);
    llama_sampler_chain_add(smpl, llama_sampler_init_greedy());

    int rc = 0;
    char buf[256];

    for (int k = 0; k < n_prompt; k++) {
        int n = 0;
        if (!piece_of(vocab, prompt_tokens[k], buf, (int) sizeof(buf), &n)) {
            fprintf(stderr, "%s: error: failed to convert token to piece\n", __func__);
            rc = 1;
            goto done;
        }
        fwrite(buf, 1, (size_t) n, stdout);
    }
    fflush(stdout);

    struct llama_batch batch = llama_batch_get_one(prompt_tokens, n_prompt);
    llama_token decoder_start = LLAMA_TOKEN_NULL;

    if (llama_model_has_encoder(model)) {
        if (llama_encode(ctx, batch)) {
            fprintf(stderr, "%s : failed to eval\n", __func__);
            rc = 1;
            goto done;
        }
        decoder_start = llama_model_decoder_start_token(model);
        if (decoder_start == LLAMA_TOKEN_NULL) {
            decoder_start = llama_vocab_bos(vocab);
        }
        batch = llama_batch_get_one(&decoder_start, 1);
    }

    const int64_t t_main_start = ggml_time_us();
    int n_decode = 0;
    llama_token new_token_id;

    for (int n_pos = 0; n_pos + batch.n_tokens < n_prompt + n_predict;) {
        int ret = llama_decode(ctx, batch);
        if (ret != 0) {
            fprintf(stderr, "%s : failed to eval, return code %d\n", __func__, ret);
            rc = 1;
            goto done;
        }
        n_pos += batch.n_tokens;

        new_token_id = llama_sampler_sample(smpl, ctx, -1);
        if (llama_vocab_is_eog(vocab, new_token_id)) {
            break;
        }

        int n = 0;
        if (!piece_of(vocab, new_token_id, buf, (int) sizeof(buf), &n)) {
            fprintf(stderr, "%s: error: failed to convert token to piece\n", __func__);
            rc = 1;
            goto done;
        }
        fwrite(buf, 1, (size_t) n, stdout);
        fflush(stdout);

        batch = llama_batch_get_one(&new_token_id, 1);
        n_decode += 1;
    }

    printf("\n");

    const int64_t t_main_end = ggml_time_us();
    const double secs = (double) (t_main_end - t_main_start) / 1000000.0;
    fprintf(stderr, "%s: decoded %d tokens in %.2f s, speed: %.2f t/s\n", __func__, n_decode, secs,
            secs > 0.0 ? n_decode / secs : 0.0);

    fprintf(stderr, "\n");
    llama_perf_sampler_print(smpl);
    llama_perf_context_print(ctx);
    fprintf(stderr, "\n");

done:
    llama_sampler_free(smpl);
    llama_free(ctx);
    llama_model_free(model);
    free(prompt_tokens);
    free(prompt);
    return rc;
}
