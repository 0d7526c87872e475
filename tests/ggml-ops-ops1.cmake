# ggml ops added for llama.cpp API parity (part ops1): tensor edits, out_prod, group_norm, gradient ops,
# recurrent / linear-attention ops and multi-section rope, each against a scalar reference in the test.
llama_test(NAME test-ggml-ops-edit      SOURCES test-ggml-ops-edit.c      LABELS ggml)
llama_test(NAME test-ggml-ops-recurrent SOURCES test-ggml-ops-recurrent.c LABELS ggml)
