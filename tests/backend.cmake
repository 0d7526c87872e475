# ggml-backend / ggml-alloc: buffers, registry, CPU backend, graph allocator, scheduler
llama_test(NAME test-alloc   SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-alloc.c)
llama_test(NAME test-backend SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-backend.c)
