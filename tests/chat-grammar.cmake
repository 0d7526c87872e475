# Tool-call grammars of the chat formats (common/chat-grammar, llama.cpp's per-format grammars, lazy triggers and
# tool_choice "required"): each format's grammar accepts its well-formed calls and rejects malformed ones (our
# GBNF engine), the triggers fire where llama.cpp's do, and a lazy common_sampler waits for them
if (TARGET common AND TARGET llama-static)
    llama_test(NAME test-chat-grammar SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-chat-grammar.c
               LIBS common llama-static ggml-static m LABELS "chat;grammar")
endif()

# the server end to end: Hermes / Mistral Nemo / Llama 3.x templates with tools; tool_choice "required" forces a
# parseable call (non-stream and stream), "auto" leaves an untriggered output alone, "none" hides the tools;
# /slots shows grammar_lazy and the triggers
if (TARGET llama-server)
    find_package(Python3 COMPONENTS Interpreter)
    if (Python3_FOUND)
        add_test(NAME test-server-tool-grammar
                 COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_tool_grammar.py
                         --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
        set_tests_properties(test-server-tool-grammar PROPERTIES LABELS "server;chat" TIMEOUT 300)
    endif()
endif()
