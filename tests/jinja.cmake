# The Jinja chat-template interpreter (common/jinja, --jinja): engine features, llama.cpp's real templates with
# its expected renderings, and garbage templates that must fail cleanly.
if (TARGET common)
    llama_test(NAME test-jinja SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-jinja.c LIBS common LABELS jinja chat)
    llama_test(NAME test-jinja-templates SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-jinja-templates.c
               LIBS common LABELS jinja chat)
    llama_test(NAME test-jinja-fuzz SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-jinja-fuzz.c LIBS common LABELS jinja)
endif()
if (TARGET common AND TARGET llama-static)
    llama_test(NAME test-jinja-chat SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-jinja-chat.c LIBS common LABELS jinja chat)
endif()
