# llama-cli (chat REPL) driven through stdin by a Python 3 script (standard library and tests/harness.py; -B: no
# __pycache__ in the source tree); replies are cross-checked against llama-completion on the same conversation
# rendered by hand in chatml.
if (TARGET llama-cli AND TARGET llama-completion)
    find_package(Python3 COMPONENTS Interpreter)
    if (NOT Python3_FOUND)
        message(WARNING "python3 not found: the llama-cli tests are not registered")
    else()
        foreach(_mode chat stories input context errors)
            add_test(NAME test-cli-${_mode}
                     COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/test-cli.py
                             $<TARGET_FILE:llama-cli> $<TARGET_FILE:llama-completion> ${_mode})
            set_tests_properties(test-cli-${_mode} PROPERTIES LABELS "programs" TIMEOUT 300
                                 ENVIRONMENT "LLAMA_TEST_DATA_DEFAULT=${LLAMA_TEST_DATA_DEFAULT}")
        endforeach()
    endif()
endif()
