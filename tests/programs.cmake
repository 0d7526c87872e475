# common/ (option table, params, helpers) and the first programs (llama-simple, llama-completion,
# llama-batched, llama-embedding).
if (TARGET common)
    llama_test(NAME test-arg-parser SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-arg-parser.c
               LIBS common m LABELS programs)
endif()

# end-to-end: the programs run as child processes against reference/kjv (llama.cpp's outputs)
if (TARGET llama-simple AND TARGET llama-completion AND TARGET llama-batched AND TARGET llama-embedding)
    pkg_check_modules(PROGRAMS_TEST_JANSSON REQUIRED jansson)
    set(_progs $<TARGET_FILE:llama-simple> $<TARGET_FILE:llama-completion> $<TARGET_FILE:llama-batched>
               $<TARGET_FILE:llama-embedding>)
    llama_test(NAME test-programs SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-programs.c
               LIBS ggml-static ${PROGRAMS_TEST_JANSSON_LINK_LIBRARIES} m ARGS basic ${_progs} LABELS programs)
    target_include_directories(test-programs PRIVATE ${PROGRAMS_TEST_JANSSON_INCLUDE_DIRS})
    add_dependencies(test-programs llama-simple llama-completion llama-batched llama-embedding)
    # the seeded sampling cases through llama-completion: llama.cpp's chain, CPU == -bs, repeatable (llama.cpp's
    # seeded ids are checked fed-reference style in test-backend-sampler)
    llama_test_variant(NAME test-programs-sampling TARGET test-programs ARGS sampling ${_progs} LABELS programs)
    # Exact free-running text vs llama.cpp on the quantized/draft KJV models: several steps are near-ties
    # (teacher-forced logit gaps down to 0.0015 on the Q8_0 files), so this needs the kernels to round as
    # llama.cpp's x86 build does (Q8_0: quants-scalar.c)
    llama_test_variant(NAME test-programs-quant TARGET test-programs ARGS quant ${_progs} LABELS programs)
endif()
