// llama-lookup-create: builds a static n-gram cache (llama.cpp's examples/lookup/lookup-create) from a text corpus
// (-f or -p) tokenized with the model's vocabulary, and writes it to -lcs.
#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"
#include "ngram-cache.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char ** argv) {
    struct common_params params = common_params_default();
    if (!common_params_parse(argc, argv, &params, LLAMA_EXAMPLE_LOOKUP, NULL)) {
        common_params_free(&params);
        return 1;
    }
    common_init();
    const char * out = params.speculative.lookup_cache_static;
    if (!out || !out[0]) {
        LOG_ERR("%s: the output file is required (-lcs FNAME)\n", __func__);
        common_params_free(&params);
        return 1;
    }

    llama_backend_init();
    int ret = 1;
    llama_token * inp = NULL;
    int32_t n_inp = 0;
    struct common_ngram_cache * cache = NULL;

    // only the vocabulary is needed to tokenize the corpus
    struct llama_model_params mp = common_model_params_to_llama(&params);
    mp.vocab_only = true;
    struct llama_model * model = params.model.path ? llama_model_load_from_file(params.model.path, mp) : NULL;
    if (!model) {
        LOG_ERR("%s: failed to load the model (-m)\n", __func__);
        goto done;
    }
    if (!common_tokenize(llama_model_get_vocab(model), params.prompt ? params.prompt : "", -1, true, true, &inp,
                         &n_inp)) {
        LOG_ERR("%s: tokenization failed\n", __func__);
        goto done;
    }
    fprintf(stderr, "%s: tokenization done\n", __func__);

    cache = common_ngram_cache_init();
    if (!cache || !common_ngram_cache_update(cache, LLAMA_NGRAM_STATIC, LLAMA_NGRAM_STATIC, inp, n_inp, n_inp, true)) {
        goto done;
    }
    fprintf(stderr, "%s: hashing done, writing file to %s\n", __func__, out);
    if (!common_ngram_cache_save(cache, out)) {
        goto done;
    }
    ret = 0;

done:
    common_ngram_cache_free(cache);
    free(inp);
    if (model) {
        llama_model_free(model);
    }
    llama_backend_free();
    common_params_free(&params);
    return ret;
}
