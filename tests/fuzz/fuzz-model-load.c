// libFuzzer target for the layers above the GGUF reader: the input bytes are a model file (written to a memfd and
// opened through /proc/self/fd, so mmap works as for a real file). It is loaded with vocab_only and fully (mmap
// and read paths alternate on an input bit); the vocabulary is exercised (tokenize / detokenize), and when the
// weights load a context with a tiny n_ctx decodes a few tokens. Nothing may crash, hang or leak.
//
// Seed the corpus outside the repo from the small shared models, e.g.
//   mkdir -p /tmp/corpus-model
//   cp ../shared/models/stories260K-f32.gguf ../shared/models/synthetic/llama-F16.gguf /tmp/corpus-model/
//   ./build-hardening-fuzz/bin/fuzz-model-load -max_len=4000000 -rss_limit_mb=4096 -max_total_time=600 /tmp/corpus-model

#include "llama.h"
#include "ggml.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int * argc, char *** argv);
int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

static void log_silent(enum ggml_log_level level, const char * text, void * user) {
    (void) level;
    (void) text;
    (void) user;
}

static int  g_fd = -1;
static char g_path[64];

int LLVMFuzzerInitialize(int * argc, char *** argv) {
    (void) argc;
    (void) argv;
    llama_log_set(log_silent, NULL);
    ggml_log_set(log_silent, NULL);
    llama_backend_init();
    g_fd = memfd_create("fuzz-model-load", 0);
    if (g_fd < 0) {
        perror("memfd_create");
        abort();
    }
    snprintf(g_path, sizeof(g_path), "/proc/self/fd/%d", g_fd);
    return 0;
}

static volatile int64_t g_sink;

static void exercise_vocab(const struct llama_model * model) {
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    if (vocab == NULL) {
        return;
    }
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    static const char text[] = "Hello world, <s> once upon a time\n\t 123 \xc3\xa9\xe2\x82\xac!";
    llama_token toks[128];
    const int32_t n = llama_tokenize(vocab, text, (int32_t) strlen(text), toks, 128, true, true);
    char buf[512];
    if (n > 0) {
        for (int32_t i = 0; i < n; i++) {
            if (toks[i] < 0 || toks[i] >= n_vocab) {
                abort(); // the tokenizer produced an id outside the vocabulary
            }
        }
        g_sink += llama_detokenize(vocab, toks, n, buf, (int32_t) sizeof(buf), false, false);
    }
    // every id's text and attributes, plus a few ids outside the range
    const int32_t lim = n_vocab < 4096 ? n_vocab : 4096;
    for (int32_t id = -2; id < lim + 2; id++) {
        g_sink += llama_token_to_piece(vocab, id, buf, (int32_t) sizeof(buf), 0, true);
        if (id >= 0 && id < n_vocab) {
            const char * t = llama_vocab_get_text(vocab, id);
            g_sink += t ? (int64_t) strlen(t) : 0;
            g_sink += (int64_t) llama_vocab_get_attr(vocab, id);
        }
    }
    g_sink += llama_vocab_bos(vocab) + llama_vocab_eos(vocab) + llama_vocab_type(vocab);
}

static void try_decode(struct llama_model * model) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 16;
    cp.n_batch = 16;
    cp.n_ubatch = 16;
    cp.n_seq_max = 1;
    cp.n_threads = 1;
    cp.n_threads_batch = 1;
    cp.no_perf = true;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    if (ctx == NULL) {
        return;
    }
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    const int32_t n_vocab = vocab ? llama_vocab_n_tokens(vocab) : 0;
    if (n_vocab > 0) {
        llama_token toks[4];
        for (int i = 0; i < 4; i++) {
            toks[i] = (llama_token) ((i * 7 + 1) % n_vocab);
        }
        if (llama_decode(ctx, llama_batch_get_one(toks, 4)) == 0) {
            const float * logits = llama_get_logits_ith(ctx, -1);
            if (logits == NULL) {
                abort(); // a successful decode must leave the last token's logits
            }
            float acc = 0.0f;
            for (int32_t i = 0; i < n_vocab; i++) {
                acc += logits[i];
            }
            g_sink += (int64_t) (acc != acc);
        }
    }
    llama_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (ftruncate(g_fd, 0) != 0 || (size > 0 && pwrite(g_fd, data, size, 0) != (ssize_t) size)) {
        abort();
    }
    // the last byte picks the loading mode, so each file is tried both ways over the corpus
    const bool use_mmap = size > 0 && (data[size - 1] & 1);

    struct llama_model_params mp = llama_model_default_params();
    mp.use_mmap = use_mmap;
    mp.vocab_only = true;
    struct llama_model * model = llama_model_load_from_file(g_path, mp);
    if (model == NULL) {
        return 0;
    }
    exercise_vocab(model);
    llama_model_free(model);

    mp.vocab_only = false;
    model = llama_model_load_from_file(g_path, mp);
    if (model == NULL) {
        return 0;
    }
    char desc[256];
    g_sink += llama_model_desc(model, desc, sizeof(desc));
    g_sink += (int64_t) llama_model_n_params(model) + (int64_t) llama_model_size(model);
    g_sink += llama_model_n_embd(model) + llama_model_n_layer(model) + llama_model_n_head(model);
    try_decode(model);
    llama_model_free(model);
    return 0;
}
