# llama_opt_init / llama_opt_epoch: finetune stories260K (F32) a few epochs; the training forward pass against
# decode logits, the loss going down, only the filtered tensors changing; untrainable models refused.
if (TARGET llama-static)
    llama_test(NAME test-llama-opt SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-llama-opt.c LIBS llama-static m LABELS llama)
endif()

# llama-finetune through common's option table (LLAMA_EXAMPLE_FINETUNE), as a child process
if (TARGET llama-finetune)
    llama_test(NAME test-finetune-program SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-finetune-program.c
               LIBS ggml-static m ARGS $<TARGET_FILE:llama-finetune> LABELS llama)
    add_dependencies(test-finetune-program llama-finetune)
endif()
