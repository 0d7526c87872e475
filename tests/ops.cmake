# ggml ops + CPU engine: every op against a double-precision reference, on each kernel ISA path.
pkg_check_modules(JANSSON REQUIRED jansson)

llama_test(NAME test-backend-ops SOURCES test-backend-ops.c LIBS ggml-static ${JANSSON_LINK_LIBRARIES} LABELS ggml)
target_include_directories(test-backend-ops PRIVATE ${JANSSON_INCLUDE_DIRS})
llama_test_variant(NAME test-backend-ops-scalar TARGET test-backend-ops ENV GGML_CPU_ISA=scalar LABELS ggml)
llama_test_variant(NAME test-backend-ops-avx2   TARGET test-backend-ops ENV GGML_CPU_ISA=avx2   LABELS ggml)
llama_test_variant(NAME test-backend-ops-avx512 TARGET test-backend-ops ENV GGML_CPU_ISA=avx512 LABELS ggml)
