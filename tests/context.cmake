# libllama compute: contexts, KV cache, graphs of the 8 architectures against llama.cpp's reference logits
# (reference/synthetic), greedy continuations (synthetic + kjv), multi-sequence and memory operations.
if (TARGET llama-static)
    pkg_check_modules(CONTEXT_TEST_JANSSON REQUIRED jansson)
    llama_test(NAME test-logits-llama SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-logits.c
               LIBS llama-static ${CONTEXT_TEST_JANSSON_LINK_LIBRARIES} m ARGS llama LABELS llama context)
    target_include_directories(test-logits-llama PRIVATE ${CONTEXT_TEST_JANSSON_INCLUDE_DIRS})
    foreach(arch qwen2 qwen3 qwen3moe gemma3 phi3 granite exaone4)
        llama_test_variant(NAME test-logits-${arch} TARGET test-logits-llama ARGS ${arch} LABELS llama context)
    endforeach()
endif()
if (TARGET test-logits-llama)
    llama_test_variant(NAME test-logits-flash-attn TARGET test-logits-llama ARGS all fa LABELS llama context)
    llama_test_variant(NAME test-logits-2-threads  TARGET test-logits-llama ARGS llama mt LABELS llama context)
endif()

# multi-sequence batches, memory operations, K-shift, state save/load, embeddings, kjv greedy completions
if (TARGET llama-static)
    llama_test(NAME test-context SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-context.c
               LIBS llama-static ${CONTEXT_TEST_JANSSON_LINK_LIBRARIES} m LABELS llama context)
    target_include_directories(test-context PRIVATE ${CONTEXT_TEST_JANSSON_INCLUDE_DIRS})
endif()

# graph reuse, single-thread small nodes, aborts at every node and the skipped logits copy change nothing
if (TARGET llama-static)
    llama_test(NAME test-decode-reuse SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-decode-reuse.c
               LIBS llama-static m LABELS llama context)
endif()
