# Vectorized expf and the activations on it (ggml/src/ggml-cpu/vec-expf.h): one ctest per ISA path, each
# checks every input of expf below 88 in magnitude against libm on that path (the scalar path is libm: its
# entry checks the activations only, as does the plain entry with --quick). `test-vec-expf --bench` prints
# ns per element per path.
llama_test(NAME test-vec-expf SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-vec-expf.c LIBS ggml-static Threads::Threads m
           ARGS --quick)
foreach(isa scalar avx2 avx512)
    llama_test_variant(NAME test-vec-expf-${isa} TARGET test-vec-expf ENV GGML_CPU_ISA=${isa})
endforeach()
