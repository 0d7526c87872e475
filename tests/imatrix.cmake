# llama-imatrix end to end: stories260K (keys, shapes, counts, sums of squares against an independent
# computation, --in-file combining, periodic outputs, statistics, refusals), the running perplexity on the KJV
# model against llama.cpp's figures, and the synthetic qwen3moe (per-expert sums). Outputs go to a temp folder
# in the build tree.
if (TARGET llama-imatrix AND TARGET llama-static)
    pkg_check_modules(IMATRIX_TEST_JANSSON REQUIRED jansson)
    llama_test(NAME test-imatrix SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-imatrix.c
               LIBS llama-static ${IMATRIX_TEST_JANSSON_LINK_LIBRARIES} m
               ARGS $<TARGET_FILE:llama-imatrix> ${CMAKE_CURRENT_BINARY_DIR}/imatrix-tmp LABELS imatrix)
    target_include_directories(test-imatrix PRIVATE ${IMATRIX_TEST_JANSSON_INCLUDE_DIRS})
    add_dependencies(test-imatrix llama-imatrix)
endif()
