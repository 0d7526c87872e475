# block formats: reference quantize / dequantize (ggml-quants.c, ggml-quantize.c)
pkg_check_modules(JANSSON REQUIRED jansson)

llama_test(NAME test-quants SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-quants.c LIBS ggml-static ${JANSSON_LINK_LIBRARIES})
target_include_directories(test-quants PRIVATE ${JANSSON_INCLUDE_DIRS})

llama_test(NAME test-quants-roundtrip SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-quants-roundtrip.c)
