# Tokenizer tests (need libllama, i.e. src/CMakeLists.txt, and PCRE2 + utf8proc through it).
if (TARGET llama-static)
    # one ctest per vocabulary file: llama.cpp's test vectors; --roundtrip where the vocabulary is lossless
    llama_test(NAME test-tokenizer SOURCES test-tokenizer.c LIBS llama-static ggml-static ARGS llama-spm --roundtrip
               LABELS tokenizer)
    foreach(v phi-3 deepseek-coder deepseek-llm gpt-2 falcon mpt starcoder refact)
        llama_test_variant(NAME test-tokenizer-${v} TARGET test-tokenizer ARGS ${v} --roundtrip LABELS tokenizer)
    endforeach()
    # WordPiece lowercases and drops whitespace: vectors only
    llama_test_variant(NAME test-tokenizer-bert-bge TARGET test-tokenizer ARGS bert-bge LABELS tokenizer)
    # no vectors: load + round trip of a fixed text
    foreach(v baichuan gpt-neox)
        llama_test_variant(NAME test-tokenizer-${v} TARGET test-tokenizer ARGS ${v} --no-vectors LABELS tokenizer)
    endforeach()

    pkg_check_modules(JANSSON_TOK IMPORTED_TARGET jansson)
    if (JANSSON_TOK_FOUND)
        llama_test(NAME test-tokenizer-misc SOURCES test-tokenizer-misc.c
                   LIBS llama-static ggml-static PkgConfig::JANSSON_TOK LABELS tokenizer)
    endif()
endif()

# throughput on 1 MiB of text (a program to run, not a test)
if (TARGET llama-static)
    add_executable(bench-tokenizer bench-tokenizer.c)
    target_include_directories(bench-tokenizer PRIVATE ${CMAKE_SOURCE_DIR}/tests ${CMAKE_SOURCE_DIR}/ggml/src ${CMAKE_SOURCE_DIR}/src)
    target_compile_definitions(bench-tokenizer PRIVATE LLAMA_TEST_DATA_DEFAULT="${LLAMA_TEST_DATA_DEFAULT}")
    target_link_libraries(bench-tokenizer PRIVATE llama-static ggml-static)
endif()

if (TARGET llama-static)
    llama_test(NAME test-tokenizer-synth SOURCES test-tokenizer-synth.c LIBS llama-static ggml-static LABELS tokenizer)
endif()

# llama-tokenize prints llama.cpp's ids for the KJV prompt (../shared/reference/kjv/README.md)
if (TARGET llama-tokenize)
    add_test(NAME test-llama-tokenize COMMAND sh -c
        "\"$<TARGET_FILE:llama-tokenize>\" -m \"\${LLAMA_TEST_DATA:-${LLAMA_TEST_DATA_DEFAULT}}/models/kjv/kjv-target-f32.gguf\" -p 'In the beginning' --ids --log-disable")
    set_tests_properties(test-llama-tokenize PROPERTIES PASS_REGULAR_EXPRESSION "^\\[1, 1025, 261, 1921, 1286\\]\n$"
                                                        LABELS tokenizer)
endif()
