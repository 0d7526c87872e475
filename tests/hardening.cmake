# Hostile input for libllama: bad context parameters, malformed batches, memory operations with odd arguments,
# truncated / corrupted model files (the deterministic counterparts of tests/fuzz/fuzz-decode.c and
# tests/fuzz/fuzz-model-load.c).
if (TARGET llama-static)
    llama_test(NAME test-bad-input SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-bad-input.c
               LIBS llama-static m LABELS llama)
endif()
