# Backend (in-graph) sampling: llama.cpp's test-backend-sampler cases on kjv-target-f32 (plus llama.cpp's seeded
# kjv sampling ids) and on stories260K-f32. The context hooks of src/llama-context-sampling.c must be in place
# (llama-context.h defines LLAMA_CONTEXT_HAS_SAMPLING); until then the test is not registered.
file(READ ${CMAKE_SOURCE_DIR}/src/llama-context.h BSAMPLING_CONTEXT_H)
string(FIND "${BSAMPLING_CONTEXT_H}" "LLAMA_CONTEXT_HAS_SAMPLING" BSAMPLING_HOOKED)
if (TARGET llama-static AND NOT BSAMPLING_HOOKED EQUAL -1)
    pkg_check_modules(BSAMPLING_JANSSON REQUIRED jansson)
    llama_test(NAME test-backend-sampler SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-backend-sampler.c
               LIBS common llama-static ${BSAMPLING_JANSSON_LINK_LIBRARIES} m LABELS llama sampling)
    target_include_directories(test-backend-sampler PRIVATE ${BSAMPLING_JANSSON_INCLUDE_DIRS})
    llama_test_variant(NAME test-backend-sampler-stories260k TARGET test-backend-sampler
                       ARGS --model models/stories260K-f32.gguf LABELS llama sampling)
endif()

# sampling cost per token, CPU chain vs backend chain (a benchmark program, not a test)
if (TARGET llama-static)
    add_executable(bench-backend-sampler ${CMAKE_CURRENT_SOURCE_DIR}/bench-backend-sampler.c)
    target_link_libraries(bench-backend-sampler PRIVATE llama-static ggml-static m)
endif()
