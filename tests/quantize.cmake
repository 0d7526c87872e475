# llama_model_quantize, llama-quantize and llama-gen-model against llama.cpp's quantized files in ../shared
# (per-tensor types and bytes), plus the refusals (unknown type, requantize, missing input) of the program.
if (TARGET llama-static)
    set(_quant_args "")
    if (TARGET llama-quantize)
        list(APPEND _quant_args $<TARGET_FILE:llama-quantize>)
        if (TARGET llama-gen-model)
            list(APPEND _quant_args $<TARGET_FILE:llama-gen-model>)
        endif()
    endif()
    llama_test(NAME test-quantize SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-quantize.c
               LIBS llama-static m ARGS ${_quant_args} LABELS quantize)
    if (TARGET llama-quantize)
        add_dependencies(test-quantize llama-quantize)
    endif()
    if (TARGET llama-gen-model)
        add_dependencies(test-quantize llama-gen-model)
    endif()
endif()
