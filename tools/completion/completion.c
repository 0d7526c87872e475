// llama-completion: llama.cpp's text-completion program. Tokenizes the prompt, feeds it in n_batch chunks and
// samples up to n_predict tokens, echoing prompt and generation to stdout (timings on stderr).
// Interactive mode (-i, -if) reads user text from stdin whenever a reverse prompt (-r) ends the output, an
// end-of-generation token comes, -n tokens were generated or Ctrl+C is pressed; --in-prefix / --in-suffix /
// --in-prefix-bos wrap what the user types. Conversation mode (-cnv; on by default when the model or
// --chat-template gives a chat template) wraps the system prompt (-sys) and each user turn in the chat template;
// -st stops after one reply. The loop follows llama.cpp's completion.cpp step by step, since its order of events
// (what is decoded, echoed and counted when) is what users' scripts see.
#include "arg.h"
#include "chat-history.h"
#include "common.h"
#include "console-input.h"
#include "log.h"
#include "llama.h"
#include "sampling.h"
#include "sampling-init.h"

#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the reverse-prompt check looks at the text of this many last accepted tokens (llama.cpp's n_prev)
#define COMPLETION_ANTIPROMPT_N_PREV 32

static void print_usage(int argc, char ** argv) {
    (void) argc;
    LOG("\nexample usage:\n");
    LOG("\n  text generation:     %s -m your_model.gguf -p \"I believe the meaning of life is\" -n 128 -no-cnv\n", argv[0]);
    LOG("\n  chat (conversation): %s -m your_model.gguf -sys \"You are a helpful assistant\"\n", argv[0]);
    LOG("\n");
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

// a growable token array
struct token_list {
    llama_token * v;
    int32_t n;
    int32_t cap;
};

// appends the tokens of text (no BOS unless add_special); *n_added (if not NULL) says how many. false on failure
static bool tokens_append_text(struct token_list * dst, const struct llama_vocab * vocab, const char * text,
                               bool add_special, bool parse_special, int32_t * n_added) {
    llama_token * toks = NULL;
    int32_t n = 0;
    if (!common_tokenize(vocab, text ? text : "", -1, add_special, parse_special, &toks, &n)) {
        return false;
    }
    const bool ok = n == 0 || common_tokens_append(&dst->v, &dst->n, &dst->cap, toks, n);
    free(toks);
    if (n_added) {
        *n_added = ok ? n : 0;
    }
    return ok;
}

static bool tokens_push(struct token_list * dst, llama_token t) {
    return common_tokens_append(&dst->v, &dst->n, &dst->cap, &t, 1);
}

// logs each token of toks[0..n) as "%6d -> 'piece'" (--verbose-prompt)
static void log_token_pieces(const struct llama_vocab * vocab, const llama_token * toks, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        char * piece = common_token_to_piece(vocab, toks[i], true, NULL);
        LOG_INF("%6d -> '%s'\n", toks[i], piece ? piece : "");
        free(piece);
    }
}

static void log_text_tokens(const struct llama_vocab * vocab, const char * text, bool add_special) {
    struct token_list t = { NULL, 0, 0 };
    if (tokens_append_text(&t, vocab, text, add_special, true, NULL)) {
        log_token_pieces(vocab, t.v, t.n);
    }
    free(t.v);
}

// the concatenated pieces of toks[0..n) without special-token text (the assistant message kept in conversation
// mode, as llama.cpp builds it piece by piece); malloc'd, NULL when out of memory
static char * pieces_text(const struct llama_vocab * vocab, const llama_token * toks, int32_t n) {
    size_t len = 0, cap = 64;
    char * out = malloc(cap);
    if (!out) {
        return NULL;
    }
    out[0] = '\0';
    for (int32_t i = 0; i < n; i++) {
        int32_t plen = 0;
        char * piece = common_token_to_piece(vocab, toks[i], false, &plen);
        if (!piece) {
            free(out);
            return NULL;
        }
        if (len + (size_t) plen + 1 > cap) {
            while (len + (size_t) plen + 1 > cap) {
                cap *= 2;
            }
            char * grown = realloc(out, cap);
            if (!grown) {
                free(piece);
                free(out);
                return NULL;
            }
            out = grown;
        }
        memcpy(out + len, piece, (size_t) plen);
        len += (size_t) plen;
        out[len] = '\0';
        free(piece);
    }
    return out;
}

// llama.cpp's reverse-prompt test: does one of the reverse prompts end the text of the last accepted tokens? Without
// interactive mode the window is widened by two bytes, since the prompt may come inside a token with a little more
// text. A reverse prompt that is a single token also matches when it is the last accepted token.
static bool antiprompt_found(const struct common_params * params, const struct common_sampler * smpl,
                             const struct llama_context * ctx, const struct token_list * single_tokens) {
    const int len = common_sampler_prev_str(smpl, ctx, COMPLETION_ANTIPROMPT_N_PREV, NULL, 0);
    char * last_output = malloc((size_t) len + 1);
    if (!last_output) {
        return false;
    }
    common_sampler_prev_str(smpl, ctx, COMPLETION_ANTIPROMPT_N_PREV, last_output, (size_t) len + 1);
    const size_t lo = strlen(last_output);
    bool found = false;
    for (int32_t k = 0; k < params->n_antiprompt && !found; k++) {
        const size_t la = strlen(params->antiprompt[k]) + (params->interactive ? 0 : 2);
        const size_t start = lo > la ? lo - la : 0;
        found = strstr(last_output + start, params->antiprompt[k]) != NULL;
    }
    if (!found && lo > 0) {
        const llama_token last = common_sampler_last(smpl);
        for (int32_t k = 0; k < single_tokens->n && !found; k++) {
            found = single_tokens->v[k] == last;
        }
    }
    free(last_output);
    return found;
}

// what a user turn did
enum user_turn {
    USER_TURN_OK,          // text queued (or an empty line: control goes back to the model)
    USER_TURN_EOF,         // end of input: the run ends
    USER_TURN_INTERRUPTED, // Ctrl+C at the prompt: the run ends
    USER_TURN_FAILED,      // out of memory / tokenizer failure (a message was logged)
};

struct completion_turn_ctx {
    const char                 * func; // the name llama.cpp's messages start with
    struct common_params       * params;
    const struct llama_vocab   * vocab;
    struct common_chat_history * chat;
    bool conversation;          // conversation mode
    bool enable_chat_template;  // off when --in-prefix / --in-suffix / --in-prefix-bos is given
    bool need_insert_eot;       // Ctrl+C cut the model's reply: close it before the next user turn
};

// Reads one user turn from stdin and queues it on embd_inp as llama.cpp does: [BOS] [prefix] text [suffix], the text
// wrapped by the chat template in conversation mode. *n_user receives the number of tokens of the text itself.
static enum user_turn read_user_turn(struct completion_turn_ctx * t, struct token_list * embd_inp, int32_t * n_user) {
    struct common_params * params = t->params;
    *n_user = 0;
    if (t->conversation) {
        LOG("\n> ");
    }
    if (params->input_prefix_bos && !tokens_push(embd_inp, llama_vocab_bos(t->vocab))) {
        return USER_TURN_FAILED;
    }
    if (params->input_prefix && params->input_prefix[0] && !t->conversation) {
        LOG("%s", params->input_prefix);
    }
    char * buffer = NULL;
    const enum common_console_read_status st = common_console_read_message(stdin, params->multiline_input, &buffer);
    if (st == COMMON_CONSOLE_READ_EOF) {
        LOG("EOF by user\n");
        return USER_TURN_EOF;
    }
    if (st == COMMON_CONSOLE_READ_INTERRUPTED) {
        return USER_TURN_INTERRUPTED;
    }
    if (st != COMMON_CONSOLE_READ_OK) {
        LOG_ERR("%s: out of memory\n", __func__);
        return USER_TURN_FAILED;
    }
    if (buffer[0] == '\0') {
        // Enter on an empty line passes control back to the model
        LOG_DBG("empty line, passing control back\n");
        free(buffer);
        return USER_TURN_OK;
    }
    if (params->input_suffix && params->input_suffix[0] && !t->conversation) {
        LOG("%s", params->input_suffix);
    }
    if (params->escape) {
        common_string_process_escapes(buffer);
    }
    const bool format_chat = t->conversation && t->enable_chat_template;
    char * user_inp = buffer;
    if (format_chat) {
        user_inp = common_chat_history_add_and_format(t->chat, "user", buffer, true);
        free(buffer);
        if (!user_inp) {
            LOG_ERR("%s: failed to apply the chat template\n", __func__);
            return USER_TURN_FAILED;
        }
    }
    const int32_t original_size = embd_inp->n;
    bool ok = true;
    if (t->need_insert_eot && format_chat) {
        // the interrupted reply gets its end-of-turn token, as the template expects one there
        const llama_token eot = llama_vocab_eot(t->vocab);
        ok = tokens_push(embd_inp, eot == LLAMA_TOKEN_NULL ? llama_vocab_eos(t->vocab) : eot);
        t->need_insert_eot = false;
    }
    ok = ok && tokens_append_text(embd_inp, t->vocab, params->input_prefix, false, true, NULL);
    ok = ok && tokens_append_text(embd_inp, t->vocab, user_inp, false, format_chat, n_user);
    ok = ok && tokens_append_text(embd_inp, t->vocab, params->input_suffix, false, true, NULL);
    free(user_inp);
    if (!ok) {
        LOG_ERR("%s: failed to tokenize the input\n", __func__);
        return USER_TURN_FAILED;
    }
    if (params->verbose_prompt) {
        LOG_INF("%s: number of tokens in prompt = %d\n", t->func, embd_inp->n - original_size);
        log_token_pieces(t->vocab, embd_inp->v + original_size, embd_inp->n - original_size);
    }
    return USER_TURN_OK;
}

// the conversation's first prompt: the system prompt and -p as chat messages, rendered with the assistant prefix
// when -p is given (malloc'd; NULL on failure). *waiting_for_first_input is set when there is no -p.
static char * conversation_prompt(struct common_chat_history * chat, const struct common_params * params,
                                  bool * waiting_for_first_input) {
    const bool has_sys    = params->system_prompt && params->system_prompt[0];
    const bool has_prompt = params->prompt && params->prompt[0];
    *waiting_for_first_input = !has_prompt;
    if ((has_sys && !common_chat_history_push(chat, "system", params->system_prompt)) ||
        (has_prompt && !common_chat_history_push(chat, "user", params->prompt))) {
        return NULL;
    }
    if (!has_sys && !has_prompt) {
        return strdup("");
    }
    return common_chat_history_format(chat, has_prompt);
}

// func: the caller's name, which llama.cpp's message starts with
static void log_interactive_info(const char * func, const struct common_params * params,
                                 const struct llama_vocab * vocab) {
    LOG_INF("%s: interactive mode on.\n", func);
    for (int32_t k = 0; k < params->n_antiprompt; k++) {
        LOG_INF("Reverse prompt: '%s'\n", params->antiprompt[k]);
        if (params->verbose_prompt) {
            log_text_tokens(vocab, params->antiprompt[k], false);
        }
    }
    if (params->input_prefix_bos) {
        LOG_INF("Input prefix with BOS\n");
    }
    if (params->input_prefix && params->input_prefix[0]) {
        LOG_INF("Input prefix: '%s'\n", params->input_prefix);
        if (params->verbose_prompt) {
            log_text_tokens(vocab, params->input_prefix, true);
        }
    }
    if (params->input_suffix && params->input_suffix[0]) {
        LOG_INF("Input suffix: '%s'\n", params->input_suffix);
        if (params->verbose_prompt) {
            log_text_tokens(vocab, params->input_suffix, false);
        }
    }
}

static void log_interactive_help(const struct common_params * params, bool conversation, bool enable_chat_template) {
    const char * control_message;
    if (params->multiline_input) {
        control_message = " - To return control to the AI, end your input with '\\'.\n"
                          " - To return control without starting a new line, end your input with '/'.\n";
    } else {
        control_message = " - Press Return to return control to the AI.\n"
                          " - To return control without starting a new line, end your input with '/'.\n"
                          " - If you want to submit another line, end your input with '\\'.\n";
    }
    LOG_INF("== Running in interactive mode. ==\n");
    LOG_INF(" - Press Ctrl+C to interject at any time.\n");
    LOG_INF("%s", control_message);
    if (conversation && enable_chat_template && !(params->system_prompt && params->system_prompt[0])) {
        LOG_INF(" - Not using system message. To change it, set a different value via -sys PROMPT\n");
    }
    LOG_INF("\n");
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
    struct common_chat_history chat;
    struct token_list embd_inp  = { NULL, 0, 0 };
    struct token_list ap_tokens = { NULL, 0, 0 }; // reverse prompts that are a single token
    struct token_list reply     = { NULL, 0, 0 }; // the model's current reply (conversation mode)
    llama_token * embd = NULL;
    char * prompt = NULL;
    memset(&chat, 0, sizeof(chat));

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

    char err[512];
    if (!common_chat_history_init(&chat, model, params.chat_template, params.use_jinja, err, sizeof(err))) {
        LOG_ERR("%s: error: %s\n", __func__, err);
        goto done;
    }

    const int n_ctx_train = llama_model_n_ctx_train(model);
    const int n_ctx = (int) llama_n_ctx(ctx);
    if (n_ctx > n_ctx_train) {
        LOG_WRN("%s: model was trained on only %d context tokens (%d specified)\n", __func__, n_ctx_train, n_ctx);
    }

    // conversation mode is on by default when a chat template was given (the model's or --chat-template)
    const bool has_chat_template = chat.explicit_tmpl;
    if (params.conversation_mode == COMMON_CONVERSATION_MODE_AUTO) {
        if (has_chat_template) {
            LOG_INF("%s: chat template is available, enabling conversation mode (disable it with -no-cnv)\n", __func__);
            params.conversation_mode = COMMON_CONVERSATION_MODE_ENABLED;
        } else {
            params.conversation_mode = COMMON_CONVERSATION_MODE_DISABLED;
        }
    }
    const bool conversation = params.conversation_mode == COMMON_CONVERSATION_MODE_ENABLED;
    if (conversation && !has_chat_template) {
        LOG_WRN("%s: chat template is not available or is not supported. "
                "This may cause the model to output suboptimal responses\n", __func__);
    }
    // llama.cpp's --in-prefix / --in-suffix / --in-prefix-bos switch the chat template off
    const bool enable_chat_template = !params.input_prefix_bos && !params.input_prefix && !params.input_suffix;
    if (conversation) {
        if (enable_chat_template) {
            if (params.prompt && params.prompt[0] && !(params.system_prompt && params.system_prompt[0])) {
                LOG_WRN("*** User-specified prompt will pre-start conversation, "
                        "did you mean to set --system-prompt (-sys) instead?\n");
            }
            char * example = common_chat_history_format_example(&chat);
            LOG_INF("%s: chat template example:\n%s\n", __func__, example ? example : "");
            free(example);
        } else {
            LOG_INF("%s: in-suffix/prefix is specified, chat template will be disabled\n", __func__);
        }
    }

    LOG_INF("\n");
    LOG_INF("%s\n", common_params_get_system_info(&params));
    LOG_INF("\n");

    const bool add_bos = llama_vocab_get_add_bos(vocab);
    LOG_DBG("n_ctx: %d, add_bos: %d\n", n_ctx, add_bos);

    bool waiting_for_first_input = false;
    prompt = conversation && enable_chat_template ? conversation_prompt(&chat, &params, &waiting_for_first_input)
                                                  : strdup(params.prompt ? params.prompt : "");
    if (!prompt) {
        LOG_ERR("%s: error: failed to build the prompt\n", __func__);
        goto done;
    }
    if (!tokens_append_text(&embd_inp, vocab, prompt, true, true, NULL)) {
        LOG_ERR("%s: error: failed to tokenize the prompt\n", __func__);
        goto done;
    }
    LOG_DBG("prompt: \"%s\"\n", prompt);

    // it should not run without any tokens
    if (!waiting_for_first_input && embd_inp.n == 0) {
        if (!add_bos) {
            LOG_ERR("input is empty\n");
            goto done;
        }
        if (!tokens_push(&embd_inp, llama_vocab_bos(vocab))) {
            goto done;
        }
        LOG_WRN("embd_inp was considered empty and bos was added\n");
    }

    if (embd_inp.n > n_ctx - 4) {
        LOG_ERR("%s: prompt is too long (%d tokens, max %d)\n", __func__, embd_inp.n, n_ctx - 4);
        goto done;
    }

    // the kept prefix for context shifting
    if (params.n_keep < 0 || params.n_keep > embd_inp.n) {
        params.n_keep = embd_inp.n;
    } else {
        params.n_keep += add_bos ? 1 : 0; // the BOS token is always kept
    }

    if (conversation) {
        if (params.single_turn && params.prompt && params.prompt[0]) {
            params.interactive = false;
            params.interactive_first = false;
        } else {
            params.interactive_first = true;
        }
    }
    if (params.interactive_first) {
        params.interactive = true;
    }

    if (params.verbose_prompt) {
        LOG_INF("%s: prompt: '%s'\n", __func__, params.prompt ? params.prompt : "");
        LOG_INF("%s: number of tokens in prompt = %d\n", __func__, embd_inp.n);
        log_token_pieces(vocab, embd_inp.v, embd_inp.n);
        if (params.n_keep > (add_bos ? 1 : 0)) {
            LOG_INF("%s: static prompt based on n_keep: '", __func__);
            for (int i = 0; i < params.n_keep; i++) {
                char * piece = common_token_to_piece(vocab, embd_inp.v[i], true, NULL);
                LOG_CNT("%s", piece ? piece : "");
                free(piece);
            }
            LOG_CNT("'\n");
        }
        LOG_INF("\n");
    }

    // Ctrl+C: hands control to the user in interactive mode, otherwise ends the run (see the loop)
    common_console_signals_install();
    signal(SIGTERM, SIG_DFL); // llama.cpp's completion handles only SIGINT: SIGTERM still ends it at once

    if (params.interactive) {
        log_interactive_info(__func__, &params, vocab);
    }

    smpl = common_sampler_init_checked(model, &params.sampling, err, sizeof(err));
    if (!smpl) {
        LOG_ERR("%s: failed to initialize sampling subsystem: %s\n", __func__, err);
        goto done;
    }
    // -bs: the chain's backend prefix runs inside llama_decode; a token sampled there is returned as it is
    if (params.sampling.backend_sampling && !llama_set_sampler(ctx, 0, common_sampler_get(smpl))) {
        LOG_WRN("%s: backend sampling is not available here, sampling on the CPU\n", __func__);
    }
    print_sampler_info(&params.sampling, smpl);
    LOG_INF("generate: n_ctx = %d, n_batch = %d, n_predict = %d, n_keep = %d\n", n_ctx, params.n_batch,
            params.n_predict, params.n_keep);
    LOG_INF("\n");

    bool is_interacting = false;
    if (params.interactive) {
        log_interactive_help(&params, conversation, enable_chat_template);
        is_interacting = params.interactive_first;
    }

    for (int32_t k = 0; k < params.n_antiprompt; k++) {
        struct token_list ids = { NULL, 0, 0 };
        if (tokens_append_text(&ids, vocab, params.antiprompt[k], false, true, NULL) && ids.n == 1 &&
            !tokens_push(&ap_tokens, ids.v[0])) {
            free(ids.v);
            goto done;
        }
        free(ids.v);
    }

    // the tokens decoded next: a chunk of the queued input or the one sampled token
    const int n_batch = params.n_batch > 0 ? params.n_batch : 1;
    embd = malloc((size_t) n_batch * sizeof(llama_token));
    if (!embd) {
        goto done;
    }
    int n_embd = 0;

    struct completion_turn_ctx turn = { __func__, &params, vocab, &chat, conversation, enable_chat_template, false };
    llama_memory_t mem = llama_get_memory(ctx);
    bool is_antiprompt  = false;
    bool input_echo     = true;
    bool display        = params.display_prompt; // the prompt is shown only with --display-prompt (default)
    bool prompt_pending = prompt[0] != '\0';     // conversation mode: the first reply follows the -p prompt
    int  n_past         = 0;
    int  n_remain       = params.n_predict;
    int  n_consumed     = 0;
    bool interrupted    = false;
    rc = 0;

    while ((n_remain != 0 && !is_antiprompt) || params.interactive) {
        if (n_embd > 0) {
            // (n_ctx - 4) as for the prompt given on the command line
            const int max_embd_size = n_ctx - 4;
            if (n_embd > max_embd_size) {
                const int skipped = n_embd - max_embd_size;
                n_embd = max_embd_size;
                LOG_WRN("<<input too long: skipped %d token%s>>", skipped, skipped != 1 ? "s" : "");
            }
            if (n_past + n_embd >= n_ctx) {
                if (!params.ctx_shift) {
                    LOG_WRN("\n\n%s: context full and context shift is disabled => stopping\n", __func__);
                    break;
                }
                if (params.n_predict == -2) {
                    LOG_WRN("\n\n%s: context full and n_predict == %d => stopping\n", __func__, params.n_predict);
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
                const int n_eval = n_embd - i < n_batch ? n_embd - i : n_batch;
                const int ret = llama_decode(ctx, llama_batch_get_one(&embd[i], n_eval));
                if (ret != 0) {
                    LOG_ERR("%s : failed to eval (llama_decode returned %d)\n", __func__, ret);
                    rc = 1;
                    goto done;
                }
                n_past += n_eval;
            }
        }
        n_embd = 0;

        // Ctrl+C: in interactive mode while the model writes, the user takes over; otherwise the run ends
        if (common_console_interrupted()) {
            if (params.interactive && !is_interacting) {
                common_console_interrupt_clear();
                is_interacting = true;
                turn.need_insert_eot = true;
            } else {
                interrupted = true;
                break;
            }
        }

        if (embd_inp.n <= n_consumed && !is_interacting) {
            const llama_token id = common_sampler_sample(smpl, ctx, -1, false);
            common_sampler_accept(smpl, id, true);
            embd[n_embd++] = id;
            // the reply as the conversation keeps it
            if (conversation && !waiting_for_first_input && !llama_vocab_is_eog(vocab, id) &&
                !tokens_push(&reply, id)) {
                rc = 1;
                goto done;
            }
            input_echo = true;
            --n_remain;
        } else {
            // queued input (the prompt or what the user typed) goes in; it feeds the penalty history as well
            while (embd_inp.n > n_consumed) {
                embd[n_embd++] = embd_inp.v[n_consumed];
                common_sampler_accept(smpl, embd_inp.v[n_consumed], false);
                ++n_consumed;
                if (n_embd >= n_batch) {
                    break;
                }
            }
        }

        if (input_echo && display) {
            for (int i = 0; i < n_embd; i++) {
                char * piece = common_token_to_piece(vocab, embd[i], params.special, NULL);
                if (piece) {
                    LOG("%s", piece);
                    free(piece);
                }
            }
        }
        // once the queued input is all in, whatever comes next is shown
        if (input_echo && embd_inp.n == n_consumed) {
            display = true;
        }

        if (embd_inp.n <= n_consumed) {
            if (params.n_antiprompt > 0) {
                is_antiprompt = antiprompt_found(&params, smpl, ctx, &ap_tokens);
                if (is_antiprompt && params.interactive) {
                    is_interacting = true;
                }
            }

            // end of generation in interactive mode: the user's turn
            const llama_token last = common_sampler_last(smpl);
            if (!waiting_for_first_input && last != LLAMA_TOKEN_NULL && llama_vocab_is_eog(vocab, last)) {
                LOG_DBG("found an EOG token\n");
                if (params.interactive) {
                    if (params.n_antiprompt > 0) {
                        // the first reverse prompt goes in, as if the model had written it
                        if (!tokens_append_text(&embd_inp, vocab, params.antiprompt[0], false, true, NULL)) {
                            rc = 1;
                            goto done;
                        }
                        is_antiprompt = true;
                    }
                    if (conversation && enable_chat_template) {
                        char * text = pieces_text(vocab, reply.v, reply.n);
                        if (!text || !common_chat_history_push(&chat, "assistant", text)) {
                            free(text);
                            rc = 1;
                            goto done;
                        }
                        free(text);
                    }
                    is_interacting = true;
                    LOG("\n");
                }
            }

            if (conversation && !waiting_for_first_input && prompt_pending) {
                prompt_pending = false;
                is_interacting = false;
            }

            if ((n_past > 0 || waiting_for_first_input) && is_interacting) {
                LOG_DBG("waiting for user input\n");
                display = params.display_prompt;
                int32_t n_user = 0;
                const enum user_turn ut = read_user_turn(&turn, &embd_inp, &n_user);
                display = true;
                if (ut == USER_TURN_EOF) {
                    break;
                }
                if (ut == USER_TURN_INTERRUPTED) {
                    interrupted = true;
                    break;
                }
                if (ut == USER_TURN_FAILED) {
                    rc = 1;
                    goto done;
                }
                if (n_user > 0) {
                    reply.n = 0;
                    n_remain -= n_user;
                }
                input_echo = false; // what the user typed is on the screen already
            }

            if (n_past > 0 || waiting_for_first_input) {
                if (is_interacting) {
                    common_sampler_reset(smpl);
                }
                is_interacting = false;
                if (waiting_for_first_input && params.single_turn) {
                    params.interactive = false;
                    params.interactive_first = false;
                }
                waiting_for_first_input = false;
            }
        }

        if (n_embd > 0 && llama_vocab_is_eog(vocab, embd[n_embd - 1]) && !params.interactive) {
            LOG(" [end of text]\n");
            break;
        }

        // interactive mode: after -n tokens the user gets control back (not with -n -1 / -2)
        if (params.interactive && n_remain <= 0 && params.n_predict >= 0) {
            n_remain = params.n_predict;
            is_interacting = true;
        }
    }

    if (interrupted) {
        LOG("\n");
        if (!params.no_perf) {
            common_perf_print(ctx, smpl);
        }
        LOG("Interrupted by user\n");
        rc = 130;
        goto done;
    }

    LOG("\n\n");
    if (!params.no_perf) {
        common_perf_print(ctx, smpl);
    }

done:
    free(embd);
    free(prompt);
    free(embd_inp.v);
    free(ap_tokens.v);
    free(reply.v);
    common_sampler_free(smpl);
    common_chat_history_free(&chat);
    common_init_result_free(&init);
    common_params_free(&params);
    llama_backend_free();
    return rc;
}
