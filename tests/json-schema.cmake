# JSON schema -> GBNF (common/json-schema-to-grammar.c): llama.cpp's schema/grammar pairs and refused schemas;
# then the grammars run through the GBNF matcher against hand-written valid and invalid instances
if (TARGET common)
    llama_test(NAME test-json-schema-to-grammar SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-json-schema-to-grammar.c
               LIBS common LABELS common)
    llama_test(NAME test-json-schema-grammar SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-json-schema-grammar.c
               LIBS common llama-static LABELS common)
endif()
