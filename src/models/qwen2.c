// Qwen2: LLaMA layout with Q/K/V biases and NEOX RoPE (the rope type comes from the model).
#include "../llama-graph.h"

bool llm_build_qwen2(struct llm_graph * g) {
    // the LLaMA builder already adds bq/bk/bv when the file has them
    return llm_build_llama(g);
}
