# llama-gguf-split end to end: split stories260K (by tensor count, by size, empty first shard), read the
# shards back with gguf.h, merge them and compare with the original; --dry-run; the refusals. Outputs go to a
# temp folder in the build tree.
if (TARGET llama-gguf-split)
    llama_test(NAME test-gguf-split SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-gguf-split.c
               ARGS $<TARGET_FILE:llama-gguf-split> ${CMAKE_CURRENT_BINARY_DIR}/gguf-split-tmp LABELS gguf)
    add_dependencies(test-gguf-split llama-gguf-split)
endif()
