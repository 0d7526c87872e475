# LoRA adapters and control vectors (libllama): adapter vs merged-model logits, clearing, layer ranges, bad files.
if (TARGET llama-static)
    llama_test(NAME test-lora SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test-lora.c
               LIBS llama-static m LABELS llama context)
endif()
