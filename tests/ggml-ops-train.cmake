# ggml training ops (cross-entropy loss and its gradient, AdamW and SGD steps) on the CPU against
# double-precision references written from their definitions, the gradient also against finite differences.
llama_test(NAME test-ggml-ops-train SOURCES test-ggml-ops-train.c LABELS ggml)
