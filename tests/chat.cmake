# Built-in chat templates (llama_chat_apply_template / llama_chat_builtin_templates): prompts for llama.cpp's
# reference conversation, template detection from Jinja texts, buffer and size-query semantics.
if (TARGET llama-static)
    llama_test(NAME test-chat-template SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-chat-template.c
               LIBS llama-static m LABELS llama chat)
endif()
