# ggml ops of part ops2: convolutions (im2col family) and image ops (pool, upscale, windows, ...) against
# references computed in double by the tests, plus ggml_graph_dump_dot.
llama_test(NAME test-ggml-ops-conv  SOURCES test-ggml-ops-conv.c  LABELS ggml)
llama_test(NAME test-ggml-ops-image SOURCES test-ggml-ops-image.c LABELS ggml)
