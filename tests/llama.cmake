# libllama loading tests: every shared model file against reference/synthetic/index.json and the files' own
# headers, plus broken files written with the GGUF writer (they must fail with a log line naming the problem).
if (TARGET llama-static)
    pkg_check_modules(LLAMA_TEST_JANSSON REQUIRED jansson)
    llama_test(NAME test-model-load SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-model-load.c
               LIBS llama-static ${LLAMA_TEST_JANSSON_LINK_LIBRARIES} m LABELS llama)
    target_include_directories(test-model-load PRIVATE ${LLAMA_TEST_JANSSON_INCLUDE_DIRS})
endif()

# split models (llama-gguf-split's files) load by name and by list, with logits equal to the unsplit file's
if (TARGET llama-static)
    llama_test(NAME test-model-split SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-model-split.c LIBS llama-static m LABELS llama)
endif()

# llama_batch helpers, batch validation and ubatch splitting
if (TARGET llama-static)
    llama_test(NAME test-batch SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-batch.c LIBS llama-static m LABELS llama)
endif()
