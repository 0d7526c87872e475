# automatic differentiation: ggml_build_backward_expand's gradient rules against finite differences of the
# forward ops, flash_attn_back against the composed attention's backward pass, gradient accumulation over
# micro-batches, and a small MLP trained with AdamW.
llama_test(NAME test-ggml-grad SOURCES test-ggml-grad.c LABELS ggml)
