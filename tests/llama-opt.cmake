# llama_opt_init / llama_opt_epoch: finetune stories260K (F32) a few epochs; the training forward pass against
# decode logits, the loss going down, only the filtered tensors changing; untrainable models refused.
if (TARGET llama-static)
    llama_test(NAME test-llama-opt SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-llama-opt.c LIBS llama-static m LABELS llama)
endif()
