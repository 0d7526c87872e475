# llama-bench and llama-perplexity, run as child processes by Python 3 scripts (standard library and
# tests/harness.py; -B: no __pycache__ in the source tree):
# perplexity against llama.cpp's reference values (reference/kjv), KL divergence against a saved base,
# bad input; llama-bench in every output format, its test matrix and the weight-bandwidth table.
if (TARGET llama-perplexity OR TARGET llama-bench)
    find_package(Python3 COMPONENTS Interpreter)
    if (NOT Python3_FOUND)
        message(WARNING "python3 not found: the llama-bench / llama-perplexity tests are not registered")
    endif()
endif()

if (TARGET llama-perplexity AND Python3_FOUND)
    set(_ppl_script ${CMAKE_CURRENT_SOURCE_DIR}/test-perplexity.py)
    set(_ppl_env LLAMA_TEST_DATA_DEFAULT=${LLAMA_TEST_DATA_DEFAULT})
    foreach(_m target-f32 target-f16 target-q8_0 target-q4_0 target-q4_k_m draft-f32 draft-q8_0)
        add_test(NAME test-perplexity-${_m}
                 COMMAND ${Python3_EXECUTABLE} -B ${_ppl_script} $<TARGET_FILE:llama-perplexity> ppl kjv-${_m}.gguf)
        set_tests_properties(test-perplexity-${_m} PROPERTIES LABELS "bench" ENVIRONMENT "${_ppl_env}" TIMEOUT 900)
    endforeach()
    foreach(_mode kld batching errors)
        add_test(NAME test-perplexity-${_mode}
                 COMMAND ${Python3_EXECUTABLE} -B ${_ppl_script} $<TARGET_FILE:llama-perplexity> ${_mode})
        set_tests_properties(test-perplexity-${_mode} PROPERTIES LABELS "bench" ENVIRONMENT "${_ppl_env}" TIMEOUT 900)
    endforeach()
endif()

if (TARGET llama-bench AND Python3_FOUND)
    add_test(NAME test-llama-bench
             COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/test-llama-bench.py $<TARGET_FILE:llama-bench>)
    set_tests_properties(test-llama-bench PROPERTIES LABELS "bench"
                         ENVIRONMENT "LLAMA_TEST_DATA_DEFAULT=${LLAMA_TEST_DATA_DEFAULT}" TIMEOUT 600)
endif()
