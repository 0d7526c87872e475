// ggml_graph_dump_dot: writes a graph as a Graphviz file, in llama.cpp's layout (record-shaped nodes with name,
// type, index, shape and op symbol; leafs in pink labelled CONST with their values when tiny; an edge per
// source, labelled x, y, z, ... by source slot). Render with: dot -Tpng graph.dot -o graph.png

#include "ggml-graph.h"

#include <inttypes.h>
#include <stdio.h>

static bool graph_has_node(const struct ggml_cgraph * g, const struct ggml_tensor * t) {
    if (g == NULL) {
        return false;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i] == t) {
            return true;
        }
    }
    return false;
}

static bool graph_has_leaf(const struct ggml_cgraph * g, const struct ggml_tensor * t) {
    for (int i = 0; i < g->n_leafs; i++) {
        if (g->leafs[i] == t) {
            return true;
        }
    }
    return false;
}

static void dot_label_name(FILE * fp, const struct ggml_tensor * t) {
    if (t->name[0] != '\0') {
        fprintf(fp, "%s (%s)|", t->name, ggml_type_name(t->type));
    } else {
        fprintf(fp, "(%s)|", ggml_type_name(t->type));
    }
}

// the few values of a tiny host leaf, as llama.cpp prints them
static void dot_leaf_values(FILE * fp, const struct ggml_tensor * t) {
    const int64_t n = ggml_nelements(t);
    if (n >= 5 || t->data == NULL || t->buffer != NULL || !ggml_is_contiguous(t)) {
        return; // a backend buffer may not be host memory: print no values then
    }
    fprintf(fp, " | (");
    for (int64_t j = 0; j < n; j++) {
        switch (t->type) {
            case GGML_TYPE_I8:  fprintf(fp, "%d", ((const int8_t *) t->data)[j]); break;
            case GGML_TYPE_I16: fprintf(fp, "%d", ((const int16_t *) t->data)[j]); break;
            case GGML_TYPE_I32: fprintf(fp, "%d", ((const int32_t *) t->data)[j]); break;
            case GGML_TYPE_F32: fprintf(fp, "%.1e", (double) ((const float *) t->data)[j]); break;
            case GGML_TYPE_F16: fprintf(fp, "%.1e", (double) GGML_FP16_TO_FP32(((const ggml_fp16_t *) t->data)[j])); break;
            case GGML_TYPE_BF16: fprintf(fp, "%.1e", (double) GGML_BF16_TO_FP32(((const ggml_bf16_t *) t->data)[j])); break;
            default: fprintf(fp, "#"); break;
        }
        if (j < n - 1) {
            fprintf(fp, ", ");
        }
    }
    fprintf(fp, ")");
}

void ggml_graph_dump_dot(const struct ggml_cgraph * gb, const struct ggml_cgraph * cgraph, const char * filename) {
    FILE * fp = ggml_fopen(filename, "w");
    if (fp == NULL) {
        GGML_LOG_ERROR("%s: cannot open %s for writing\n", __func__, filename);
        return;
    }
    fprintf(fp, "digraph G {\n");
    fprintf(fp, "  newrank = true;\n");
    fprintf(fp, "  rankdir = TB;\n");

    for (int i = 0; i < gb->n_nodes; i++) {
        const struct ggml_tensor * node = gb->nodes[i];
        const char * color = "white";
        if (node->flags & GGML_TENSOR_FLAG_PARAM) {
            color = "yellow";
        } else if (cgraph != NULL && cgraph != gb && graph_has_node(cgraph, node)) {
            color = "green"; // also part of the forward graph
        }
        fprintf(fp, "  \"%p\" [ style = filled; fillcolor = %s; shape = record; label=\"", (const void *) node, color);
        dot_label_name(fp, node);
        if (ggml_is_matrix(node)) {
            fprintf(fp, "%d [%" PRId64 ", %" PRId64 "] | <x>%s", i, node->ne[0], node->ne[1], ggml_op_symbol(node->op));
        } else {
            fprintf(fp, "%d [%" PRId64 ", %" PRId64 ", %" PRId64 "] | <x>%s", i, node->ne[0], node->ne[1], node->ne[2],
                    ggml_op_symbol(node->op));
        }
        fprintf(fp, "\"; ]\n");
    }

    for (int i = 0; i < gb->n_leafs; i++) {
        const struct ggml_tensor * node = gb->leafs[i];
        fprintf(fp, "  \"%p\" [ style = filled; fillcolor = pink; shape = record; label=\"<x>", (const void *) node);
        dot_label_name(fp, node);
        fprintf(fp, "CONST %d [%" PRId64 ", %" PRId64 "]", i, node->ne[0], node->ne[1]);
        dot_leaf_values(fp, node);
        fprintf(fp, "\"; ]\n");
    }

    for (int i = 0; i < gb->n_nodes; i++) {
        const struct ggml_tensor * node = gb->nodes[i];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            const struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                continue;
            }
            char label[16];
            snprintf(label, sizeof(label), "%c", j < 3 ? "xyz"[j] : (char) ('0' + j));
            if (graph_has_leaf(gb, src) && !graph_has_node(gb, src)) {
                fprintf(fp, "  \"%p\" -> \"%p\":x [ label = \"%s\"; ]\n", (const void *) src, (const void *) node, label);
            } else {
                fprintf(fp, "  \"%p\":x -> \"%p\":x [ arrowhead = vee; style = solid; label = \"%s\"; ]\n", (const void *) src,
                        (const void *) node, label);
            }
        }
    }

    fprintf(fp, "}\n");
    fclose(fp);
    GGML_LOG_INFO("%s: dot -Tpng %s -o %s.png && open %s.png\n", __func__, filename, filename, filename);
}
