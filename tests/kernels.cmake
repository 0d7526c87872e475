# CPU SIMD kernels (ggml/src/ggml-cpu/ggml-cpu-kernels.h): one ctest per ISA path; the program also compares
# every path the CPU supports with the scalar one. A path the CPU lacks falls back to the best available.
pkg_check_modules(JANSSON REQUIRED jansson)

llama_test(NAME test-kernels SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-kernels.c
           LIBS ggml-static ${JANSSON_LINK_LIBRARIES})
target_include_directories(test-kernels PRIVATE ${JANSSON_INCLUDE_DIRS})
foreach(isa scalar avx2 avx512)
    llama_test_variant(NAME test-kernels-${isa} TARGET test-kernels ENV GGML_CPU_ISA=${isa})
endforeach()

# throughput of the kernels (matvec GB/s, batched GFLOP/s) against the measured read bandwidth; not a test
add_executable(bench-kernels ${CMAKE_CURRENT_SOURCE_DIR}/bench-kernels.c)
target_include_directories(bench-kernels PRIVATE ${CMAKE_SOURCE_DIR}/ggml/src)
target_link_libraries(bench-kernels PRIVATE ggml-static Threads::Threads m)
