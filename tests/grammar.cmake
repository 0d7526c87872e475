# GBNF grammars: parser, matcher and the grammar sampler on real vocabularies (test-grammar); llama-completion
# constrained by --grammar end to end (test-grammar-completion).
if (TARGET llama-static)
    llama_test(NAME test-grammar SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-grammar.c
               LIBS llama-static ggml-static m LABELS sampling)
endif()

if (TARGET llama-completion)
    find_package(Python3 COMPONENTS Interpreter)
    if (Python3_FOUND)
        add_test(NAME test-grammar-completion
                 COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/test-grammar-completion.py
                         $<TARGET_FILE:llama-completion>)
        set_tests_properties(test-grammar-completion PROPERTIES LABELS "programs;sampling" TIMEOUT 120
                             ENVIRONMENT "LLAMA_TEST_DATA_DEFAULT=${LLAMA_TEST_DATA_DEFAULT}")
    endif()
endif()
