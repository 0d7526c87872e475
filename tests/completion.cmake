# llama-completion's interactive and conversation modes driven through stdin by a Python 3 script (standard library
# and tests/harness.py; -B: no __pycache__ in the source tree). Continuations are cross-checked against single-shot
# llama-completion runs on the same context text, conversation replies against llama-cli; the plain greedy text is
# llama.cpp's (reference/kjv).
if (TARGET llama-completion AND TARGET llama-cli)
    find_package(Python3 COMPONENTS Interpreter)
    if (NOT Python3_FOUND)
        message(WARNING "python3 not found: the llama-completion tests are not registered")
    else()
        foreach(_mode interactive conversation plain)
            add_test(NAME test-completion-${_mode}
                     COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/test-completion.py
                             $<TARGET_FILE:llama-completion> $<TARGET_FILE:llama-cli> ${_mode})
            set_tests_properties(test-completion-${_mode} PROPERTIES LABELS "programs" TIMEOUT 300
                                 ENVIRONMENT "LLAMA_TEST_DATA_DEFAULT=${LLAMA_TEST_DATA_DEFAULT}")
        endforeach()
    endif()
endif()
