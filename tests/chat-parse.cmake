# Reasoning / tool-call extraction from generated chat text (common/chat-parse, llama.cpp's common_chat_parse):
# per-format samples from llama.cpp's test-chat.cpp, partial texts, streaming diffs, random truncations, format
# detection on the real templates of the vocabulary files
if (TARGET common AND TARGET ggml-static)
    llama_test(NAME test-chat-parse SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-chat-parse.c LIBS common
               LABELS chat)
endif()

# the server end to end: a grammar forces the model's output into a tool call / thinking block under a Hermes-style
# --chat-template-file, and the parsed message, stream deltas, /v1/responses and /v1/messages are checked
if (TARGET llama-server)
    find_package(Python3 COMPONENTS Interpreter)
    if (Python3_FOUND)
        add_test(NAME test-server-chat-parse
                 COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_chat_parse.py
                         --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
        set_tests_properties(test-server-chat-parse PROPERTIES LABELS "server;chat" TIMEOUT 300)
    endif()
endif()

# the chat-parse fuzz target (tests/fuzz/fuzz-common-chat-parse.c) on seeded inputs: a smoke run in every build
if (TARGET common AND TARGET llama-static)
    llama_test(NAME test-chat-parse-fuzz SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-chat-parse-fuzz.c
               LIBS common llama-static ggml-static m LABELS chat)
endif()
