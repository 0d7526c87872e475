// llama-lookup-merge: adds n-gram cache files together (llama.cpp's examples/lookup/lookup-merge):
// llama-lookup-merge FILE1 FILE2 ... FILEOUT
#include "ngram-cache.h"

#include <stdio.h>
#include <string.h>

static void print_usage(const char * prog) {
    fprintf(stderr, "Merges multiple lookup cache files into a single one.\n");
    fprintf(stderr, "usage: %s [--help|-h] FILE1 FILE2 ... FILEOUT\n", prog);
}

int main(int argc, char ** argv) {
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        print_usage(argv[0]);
        return 0;
    }
    if (argc < 3) {
        print_usage(argv[0]);
        return 1;
    }
    fprintf(stderr, "lookup-merge: loading file %s\n", argv[1]);
    struct common_ngram_cache * merged = common_ngram_cache_load(argv[1]);
    if (!merged) {
        return 1;
    }
    for (int i = 2; i < argc - 1; i++) {
        fprintf(stderr, "lookup-merge: loading file %s\n", argv[i]);
        struct common_ngram_cache * add = common_ngram_cache_load(argv[i]);
        const bool ok = add && common_ngram_cache_merge(merged, add);
        common_ngram_cache_free(add);
        if (!ok) {
            common_ngram_cache_free(merged);
            return 1;
        }
    }
    fprintf(stderr, "lookup-merge: saving file %s\n", argv[argc - 1]);
    const bool ok = common_ngram_cache_save(merged, argv[argc - 1]);
    common_ngram_cache_free(merged);
    return ok ? 0 : 1;
}
