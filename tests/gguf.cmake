# GGUF reader/writer tests and llama-gguf smoke tests
pkg_check_modules(GGUF_TEST_JANSSON REQUIRED jansson)

llama_test(NAME test-gguf SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-gguf.c
           LIBS ggml-static ${GGUF_TEST_JANSSON_LINK_LIBRARIES} LABELS gguf)
target_include_directories(test-gguf PRIVATE ${GGUF_TEST_JANSSON_INCLUDE_DIRS})

llama_test(NAME test-gguf-broken SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-gguf-broken.c LABELS gguf)

# llama-gguf on a real file (text and --json) must succeed and show the header; on a non-GGUF file it must
# exit with status 1 (not crash) after the one-line error. The data folder is resolved at run time like the
# C tests do (LLAMA_TEST_DATA, else the configured default).
if (TARGET llama-gguf)
    set(_gguf_model "\${LLAMA_TEST_DATA:-${LLAMA_TEST_DATA_DEFAULT}}/models/stories260K-q4_0.gguf")
    add_test(NAME llama-gguf-text
             COMMAND sh -c "\"$0\" \"${_gguf_model}\" && echo EXIT_OK" $<TARGET_FILE:llama-gguf>)
    set_tests_properties(llama-gguf-text PROPERTIES LABELS gguf
        PASS_REGULAR_EXPRESSION "n_tensors: +48.*general.architecture +str += \"llama\".*output.weight +q8_0 +\\[64, 512\\].*EXIT_OK")
    add_test(NAME llama-gguf-json
             COMMAND sh -c "\"$0\" \"${_gguf_model}\" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"n_tensors\"]==48 and len(d[\"tensors\"])==48 and d[\"tensors\"][0][\"shape\"]==[64,512]; print(\"json ok\")'"
                     $<TARGET_FILE:llama-gguf>)
    set_tests_properties(llama-gguf-json PROPERTIES LABELS gguf PASS_REGULAR_EXPRESSION "json ok")
    add_test(NAME llama-gguf-bad-file
             COMMAND sh -c "\"$0\" \"$1\"; rc=$?; echo \"exit status $rc\"; test $rc -eq 1"
                     $<TARGET_FILE:llama-gguf> ${CMAKE_CURRENT_SOURCE_DIR}/harness.h)
    set_tests_properties(llama-gguf-bad-file PROPERTIES LABELS gguf
        PASS_REGULAR_EXPRESSION "invalid magic.*exit status 1")
    add_test(NAME llama-gguf-usage
             COMMAND sh -c "\"$0\"; a=$?; \"$0\" --bogus x; b=$?; echo \"status $a $b\"; test $a -eq 1 -a $b -eq 1"
                     $<TARGET_FILE:llama-gguf>)
    set_tests_properties(llama-gguf-usage PROPERTIES LABELS gguf PASS_REGULAR_EXPRESSION "usage:.*status 1 1")
endif()
