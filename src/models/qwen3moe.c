// Qwen3-MoE: Qwen3 attention; FFN = softmax router, top-k experts with renormalised weights.
#include "../llama-graph.h"

bool llm_build_qwen3moe(struct llm_graph * g) {
    return llm_build_qwen3_common(g, true);
}
