# speculative decoding: output-limit helper, draft params, n-gram cache / ngram-mod / ngram-map-k units, and token
# identity against plain decoding by llama-completion for llama-speculative-simple (draft model, n-gram types),
# llama-lookup and llama-speculative (greedy tree)
if (TARGET common)
    llama_test(NAME test-speculative-limits SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-speculative.c
               LIBS common m ARGS limits LABELS spec)
    llama_test_variant(NAME test-speculative-ngram-cache TARGET test-speculative-limits ARGS ngram LABELS spec)
endif()
if (TARGET test-speculative-limits AND TARGET llama-speculative-simple AND TARGET llama-completion)
    llama_test_variant(NAME test-speculative TARGET test-speculative-limits
                       ARGS identity $<TARGET_FILE:llama-completion> $<TARGET_FILE:llama-speculative-simple>
                       LABELS spec)
    llama_test_variant(NAME test-speculative-ngram-types TARGET test-speculative-limits
                       ARGS ngram-types $<TARGET_FILE:llama-completion> $<TARGET_FILE:llama-speculative-simple>
                       LABELS spec)
    add_dependencies(test-speculative-limits llama-speculative-simple llama-completion)
endif()
if (TARGET test-speculative-limits AND TARGET llama-lookup AND TARGET llama-completion)
    llama_test_variant(NAME test-speculative-lookup TARGET test-speculative-limits
                       ARGS lookup $<TARGET_FILE:llama-completion> $<TARGET_FILE:llama-lookup> LABELS spec)
    add_dependencies(test-speculative-limits llama-lookup)
endif()
if (TARGET test-speculative-limits AND TARGET llama-speculative AND TARGET llama-completion)
    llama_test_variant(NAME test-speculative-tree TARGET test-speculative-limits
                       ARGS tree $<TARGET_FILE:llama-completion> $<TARGET_FILE:llama-speculative> LABELS spec)
    add_dependencies(test-speculative-limits llama-speculative)
endif()
# llama-lookup-stats / llama-lookup-create against a Python model of the n-gram cache rules (tests/harness.py)
if (TARGET llama-lookup-stats AND TARGET llama-lookup-create AND TARGET llama-tokenize)
    find_package(Python3 COMPONENTS Interpreter)
    if (Python3_FOUND)
        add_test(NAME test-lookup-stats
                 COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/test-lookup-stats.py
                         $<TARGET_FILE:llama-lookup-stats> $<TARGET_FILE:llama-lookup-create>
                         $<TARGET_FILE:llama-tokenize>)
        set_tests_properties(test-lookup-stats PROPERTIES LABELS "spec"
                             ENVIRONMENT "LLAMA_TEST_DATA_DEFAULT=${LLAMA_TEST_DATA_DEFAULT}" TIMEOUT 300)
    else()
        message(WARNING "python3 not found: test-lookup-stats is not registered")
    endif()
endif()
