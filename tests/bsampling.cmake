# Backend (in-graph) sampling: llama.cpp's test-backend-sampler cases on kjv-target-f32 (plus llama.cpp's seeded
# kjv sampling ids) and on stories260K-f32.
if (TARGET llama-static)
    pkg_check_modules(BSAMPLING_JANSSON REQUIRED jansson)
    llama_test(NAME test-backend-sampler SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-backend-sampler.c
               LIBS common llama-static ${BSAMPLING_JANSSON_LINK_LIBRARIES} m LABELS llama sampling)
    target_include_directories(test-backend-sampler PRIVATE ${BSAMPLING_JANSSON_INCLUDE_DIRS})
    llama_test_variant(NAME test-backend-sampler-stories260k TARGET test-backend-sampler
                       ARGS --model models/stories260K-f32.gguf LABELS llama sampling)

    # sampling cost per token, CPU chain vs backend chain (a benchmark program, not a test)
    add_executable(bench-backend-sampler ${CMAKE_CURRENT_SOURCE_DIR}/bench-backend-sampler.c)
    target_link_libraries(bench-backend-sampler PRIVATE llama-static ggml-static m)
endif()
