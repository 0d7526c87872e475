# ggml-opt: linear regression fitted by ggml_opt_fit, result bookkeeping (loss, uncertainty, accuracy, predictions)
# against values computed in the test, dataset shuffling, gradient accumulation, SGD/AdamW steps by hand.
llama_test(NAME test-ggml-opt SOURCES test-ggml-opt.c LABELS ggml)
