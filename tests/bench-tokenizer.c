// Tokenizer throughput: bench-tokenizer [vocab.gguf ...]
// Tokenizes 1 MiB of English text (../shared/reference/kjv/kjv-test.txt repeated) with each vocabulary and
// prints tokens/s and MB/s (best of 3 runs), then the same for detokenization.

#include "harness.h"

#include "gguf.h"
#include "llama.h"
#include "llama-vocab.h"

#include <stdint.h>

static double now_s(void) {
    return 1e-6 * (double) ggml_time_us();
}

int main(int argc, char ** argv) {
    size_t n_src = 0;
    char * src = th_read_file(th_data_path("reference/kjv/kjv-test.txt"), &n_src);
    if (!src || n_src == 0) {
        fprintf(stderr, "cannot read kjv-test.txt\n");
        return 1;
    }
    const size_t n = 1 << 20;
    char * text = malloc(n);
    for (size_t i = 0; i < n; ++i) {
        text[i] = src[i % n_src];
    }
    static const char * defaults[] = {
        "models/kjv/kjv-target-f32.gguf", "models/vocab/ggml-vocab-llama-spm.gguf",
        "models/vocab/ggml-vocab-gpt-2.gguf", "models/vocab/ggml-vocab-deepseek-llm.gguf",
        "models/vocab/ggml-vocab-bert-bge.gguf",
    };
    const int n_files = argc > 1 ? argc - 1 : (int) (sizeof(defaults) / sizeof(defaults[0]));
    for (int f = 0; f < n_files; ++f) {
        const char * path = argc > 1 ? argv[f + 1] : th_data_path("%s", defaults[f]);
        struct gguf_init_params gp = { true, NULL };
        struct gguf_context * g = gguf_init_from_file(path, gp);
        struct llama_vocab * v = g ? llama_vocab_load(g) : NULL;
        if (g) gguf_free(g);
        if (!v) {
            fprintf(stderr, "cannot load %s\n", path);
            continue;
        }
        llama_token * toks = malloc((n + 2) * sizeof(llama_token));
        double best = 1e30;
        int32_t nt = 0;
        for (int r = 0; r < 3; ++r) {
            const double t0 = now_s();
            nt = llama_tokenize(v, text, (int32_t) n, toks, (int32_t) n + 2, false, false);
            const double dt = now_s() - t0;
            best = dt < best ? dt : best;
        }
        char * out = malloc(4 * n);
        double best_d = 1e30;
        int32_t nd = 0;
        for (int r = 0; r < 3; ++r) {
            const double t0 = now_s();
            nd = llama_detokenize(v, toks, nt, out, (int32_t) (4 * n), false, false);
            const double dt = now_s() - t0;
            best_d = dt < best_d ? dt : best_d;
        }
        const char * name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        printf("%-34s %-4s tokenize: %8d tokens in %7.1f ms = %9.0f tokens/s, %6.2f MB/s | detokenize: %7.1f ms (%d bytes)\n",
               name, llama_vocab_type(v) == LLAMA_VOCAB_TYPE_SPM ? "SPM" : llama_vocab_type(v) == LLAMA_VOCAB_TYPE_BPE ? "BPE" : "WPM",
               nt, best * 1e3, nt / best, n / best / 1e6, best_d * 1e3, nd);
        free(out);
        free(toks);
        llama_vocab_free(v);
    }
    free(text);
    free(src);
    return 0;
}
