# speculative decoding: output-limit helper, draft params, and token identity of llama-speculative-simple
# (draft model / n-gram drafts) against plain decoding by llama-completion
if (TARGET common)
    llama_test(NAME test-speculative-limits SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-speculative.c
               LIBS common m ARGS limits LABELS spec)
endif()
if (TARGET test-speculative-limits AND TARGET llama-speculative-simple AND TARGET llama-completion)
    llama_test_variant(NAME test-speculative TARGET test-speculative-limits
                       ARGS identity $<TARGET_FILE:llama-completion> $<TARGET_FILE:llama-speculative-simple>
                       LABELS spec)
    add_dependencies(test-speculative-limits llama-speculative-simple llama-completion)
endif()
