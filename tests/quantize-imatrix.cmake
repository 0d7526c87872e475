# llama-quantize --imatrix (llama.cpp's GGUF and legacy .dat importance matrices), --include-weights /
# --exclude-weights and --override-kv: the program's output against llama_model_quantize called in-process
# with importance vectors the test computes itself, the quantize.imatrix.* keys, the refusals of broken
# files, and a fuzz loop over the reader (tools/quantize/quantize-imatrix.c, compiled in).
if (TARGET llama-quantize AND TARGET llama-static)
    llama_test(NAME test-quantize-imatrix
               SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-quantize-imatrix.c
                       ${CMAKE_SOURCE_DIR}/tools/quantize/quantize-imatrix.c
               LIBS llama-static m ARGS $<TARGET_FILE:llama-quantize> LABELS quantize)
    target_include_directories(test-quantize-imatrix PRIVATE ${CMAKE_SOURCE_DIR}/tools/quantize)
    add_dependencies(test-quantize-imatrix llama-quantize)
endif()
