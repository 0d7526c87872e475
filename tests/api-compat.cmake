# Public API compatibility: llama.cpp's prototypes, struct layouts, enum values and macros checked against our
# headers at compile time (-Werror makes a mismatch a build failure), plus run-time checks of
# ggml_get_type_traits_cpu and llama_model_load_from_file_ptr.
if (TARGET llama-static)
    llama_test(NAME test-api-compat SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-api-compat.c
               LIBS llama-static m LABELS llama)
    # a prototype of the wrong type only warns in C (incompatible pointer types): make it an error everywhere
    target_compile_options(test-api-compat PRIVATE -Werror=incompatible-pointer-types)
endif()
