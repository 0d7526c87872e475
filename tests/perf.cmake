# Register-tiled GEMM of the CPU backend (ggml/src/ggml-cpu/gemm.h): direct and through mul_mat, per ISA
# (on ISAs without a GEMM only the mul_mat part runs, on vec_dot).
llama_test(NAME test-gemm SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-gemm.c LIBS ggml-static)
foreach(isa avx2 avx512)
    llama_test_variant(NAME test-gemm-${isa} TARGET test-gemm ENV GGML_CPU_ISA=${isa})
endforeach()

# Q4_0, Q8_0, Q4_K and Q6_K weights repacked into interleaved 16-row groups (ggml/src/ggml-cpu/repack.h), per ISA
llama_test(NAME test-repack SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-repack.c LIBS ggml-static)
foreach(isa scalar avx2 avx512)
    llama_test_variant(NAME test-repack-${isa} TARGET test-repack ENV GGML_CPU_ISA=${isa})
endforeach()

# matmuls of the same activations computed as one group (ggml/src/ggml-cpu/ops-matmul.c), per ISA
llama_test(NAME test-mm-group SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-mm-group.c LIBS ggml-static)
foreach(isa scalar avx2 avx512)
    llama_test_variant(NAME test-mm-group-${isa} TARGET test-mm-group ENV GGML_CPU_ISA=${isa})
endforeach()

# throughput of the GEMM kernel alone (not a test)
add_executable(bench-gemm ${CMAKE_CURRENT_SOURCE_DIR}/bench-gemm.c)
target_include_directories(bench-gemm PRIVATE ${CMAKE_SOURCE_DIR}/ggml/src)
target_link_libraries(bench-gemm PRIVATE ggml-static m)

# hot throughput of the interleaved gemvs against vec_dot, one thread (not a test)
add_executable(bench-repack ${CMAKE_CURRENT_SOURCE_DIR}/bench-repack.c)
target_include_directories(bench-repack PRIVATE ${CMAKE_SOURCE_DIR}/ggml/src)
target_link_libraries(bench-repack PRIVATE ggml-static m)
