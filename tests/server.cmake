# llama-server: the real binary on a free loopback port, driven by Python 3 + requests (Debian python3-requests)
if (TARGET llama-server)
    find_package(Python3 COMPONENTS Interpreter)
    if (Python3_FOUND)
        add_test(NAME test-server
                 COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server.py
                         --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
        set_tests_properties(test-server PROPERTIES LABELS server TIMEOUT 600)
        add_test(NAME test-server-completion
                 COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_completion.py
                         --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
        set_tests_properties(test-server-completion PROPERTIES LABELS server TIMEOUT 600)
        add_test(NAME test-server-spec
                 COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_spec.py
                         --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
        set_tests_properties(test-server-spec PROPERTIES LABELS server TIMEOUT 600)
    endif()
endif()

# the transport alone (streams, suspend/resume, disconnects) over real loopback sockets
pkg_check_modules(SRVT_MHD     IMPORTED_TARGET libmicrohttpd)
pkg_check_modules(SRVT_JANSSON IMPORTED_TARGET jansson)
if (SRVT_MHD_FOUND AND SRVT_JANSSON_FOUND)
    set(_srv ${CMAKE_SOURCE_DIR}/tools/server)
    llama_test(NAME test-server-http
               SOURCES server/test-server-http.c ${_srv}/server-http.c ${_srv}/server-errors.c ${_srv}/server-json.c
               LIBS PkgConfig::SRVT_MHD PkgConfig::SRVT_JANSSON Threads::Threads m LABELS server)
    target_include_directories(test-server-http PRIVATE ${_srv})
endif()

# issue #9 acceptance: OpenAI stream/response shapes vs llama.cpp, bad input on the completion endpoints,
# half-sent and dropped clients, cancellation on disconnect (known divergences print XFAIL, not counted)
if (TARGET llama-server AND Python3_FOUND)
    add_test(NAME test-server-compat
             COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_compat.py
                     --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
    set_tests_properties(test-server-compat PROPERTIES LABELS server TIMEOUT 600)
endif()

# issue #9: --context-shift (llama.cpp's rule, checked against a fresh decode of the kept context); the server's
# flags from common/arg.c, the native stream's final event and the /props, /v1/models fields
if (TARGET llama-server AND Python3_FOUND)
    add_test(NAME test-server-ctx-shift
             COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_ctx_shift.py
                     --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
    set_tests_properties(test-server-ctx-shift PROPERTIES LABELS server TIMEOUT 600)
    add_test(NAME test-server-parity
             COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_parity.py
                     --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
    set_tests_properties(test-server-parity PROPERTIES LABELS server TIMEOUT 600)
endif()

# issue #9: POST /slots/{id}?action=save|restore|erase (--slot-save-path) and --cache-reuse chunk reuse by KV shift,
# both checked against a slot that evaluates the prompt afresh
if (TARGET llama-server AND Python3_FOUND)
    add_test(NAME test-server-slots
             COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_slots.py
                     --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
    set_tests_properties(test-server-slots PROPERTIES LABELS server TIMEOUT 600)
endif()

# grammar fields: json_schema / grammar / response_format give JSON matching the schema, bad grammars a 400, -j
if (TARGET llama-server AND Python3_FOUND)
    add_test(NAME test-server-grammar
             COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_grammar.py
                     --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
    set_tests_properties(test-server-grammar PROPERTIES LABELS server TIMEOUT 600)
endif()

# --jinja: /apply-template and /v1/chat/completions render a Jinja --chat-template with chat_template_kwargs;
# /props chat_template_caps
if (TARGET llama-server AND Python3_FOUND)
    add_test(NAME test-server-jinja
             COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_jinja.py
                     --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
    set_tests_properties(test-server-jinja PROPERTIES LABELS "server;jinja" TIMEOUT 300)
endif()

# /infill's prompt layout (FIM tokens, BOS, extra chunks, the prefix/suffix/extra budget) on real FIM vocabularies
if (TARGET llama-static AND SRVT_JANSSON_FOUND)
    llama_test(NAME test-server-infill
               SOURCES server/test-server-infill.c ${CMAKE_SOURCE_DIR}/tools/server/server-infill-layout.c
               LIBS llama-static ggml-static PkgConfig::SRVT_JANSSON LABELS server)
    target_include_directories(test-server-infill PRIVATE ${CMAKE_SOURCE_DIR}/tools/server)
endif()

# /v1/messages (+ count_tokens), /v1/responses, /infill and /rerank: shapes, stream event order, the same greedy text
# as /v1/chat/completions, malformed bodies, --reranking refused at start-up
if (TARGET llama-server AND Python3_FOUND)
    add_test(NAME test-server-messages
             COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_messages.py
                     --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
    set_tests_properties(test-server-messages PROPERTIES LABELS server TIMEOUT 300)
endif()

# llama.cpp's server options that take effect here: --api-prefix, --chat-template-file/-kwargs, -sps slot choice,
# --log-file, and the options refused with their reason (common/arg.c)
if (TARGET llama-server AND Python3_FOUND)
    add_test(NAME test-server-args
             COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_args.py
                     --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
    set_tests_properties(test-server-args PROPERTIES LABELS server TIMEOUT 300)
endif()

# LoRA adapters: GET/POST /lora-adapters, the per-request "lora" field (completion and chat), --lora-init-without-apply,
# slots with different adapter sets in separate decodes; the adapter GGUF is written by the test (Python struct)
if (TARGET llama-server AND Python3_FOUND)
    add_test(NAME test-server-lora
             COMMAND ${Python3_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/server/test_server_lora.py
                     --server $<TARGET_FILE:llama-server> --data ${LLAMA_TEST_DATA_DEFAULT})
    set_tests_properties(test-server-lora PROPERTIES LABELS server TIMEOUT 300)
endif()
