# Sampler tests. test-sampling builds the sampler sources directly (they need only ggml), so it does not depend on
# the rest of libllama. llama_sampler_sample needs a context and is not covered here yet.
llama_test(NAME test-sampling
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-sampling.c
            ${CMAKE_SOURCE_DIR}/src/llama-sampler.c
            ${CMAKE_SOURCE_DIR}/src/llama-sampler-filters.c
            ${CMAKE_SOURCE_DIR}/src/llama-sampler-mirostat.c
            ${CMAKE_SOURCE_DIR}/src/llama-sampler-penalties.c
            ${CMAKE_SOURCE_DIR}/src/llama-sampler-backend.c
            ${CMAKE_SOURCE_DIR}/src/llama-rng.c
    LIBS ggml-static m
    LABELS sampling)

# DRY sequence breakers from strings and the infill sampler need a vocabulary, hence libllama and the GPT-2 vocab
if (TARGET llama-static)
    llama_test(NAME test-sampling-vocab SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-sampling-vocab.c
               LIBS llama-static ggml-static m LABELS sampling)
endif()
