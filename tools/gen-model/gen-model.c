// llama-gen-model: write a random-weight GGUF model of a given architecture and shape.
//
//   llama-gen-model -o out.gguf [--arch llama|qwen2|qwen3] [--n-embd N] [--n-layer N] [--n-head N]
//                   [--n-head-kv N] [--n-ff N] [--n-vocab N] [--ctx N] [--type f32|f16] [--seed N]
//                   [--vocab-from FILE]
//
// Weights are drawn from N(0, 0.02^2), norm weights from 1 + N(0, 0.1^2), biases from N(0, 0.02^2); every
// value is rounded to the nearest half-precision value, so the f32 and f16 files of one seed hold the same
// weights. The output projection is untied. Each tensor has its own random stream (seed, tensor index), so
// a tensor's values do not depend on the others' shapes.
//
// Tensors are generated and written one at a time after the metadata, so a TinyLlama-sized model needs
// memory for its largest tensor only. The file is written as "<out>.tmp" and renamed when complete.

#include "ggml.h"
#include "gguf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gen_params {
    const char * out;
    const char * arch;
    const char * vocab_from;
    int64_t      n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
    bool         f16;
    uint64_t     seed;
};

enum gen_init { GEN_WEIGHT, GEN_NORM };

struct gen_tensor {
    char          name[GGML_MAX_NAME];
    int           n_dims;
    int64_t       ne[2];
    enum gen_init init;
};

static void usage(const char * exe) {
    fprintf(stderr,
        "usage: %s -o OUT.gguf [options]\n"
        "  --arch A            llama (default), qwen2 (q/k/v biases) or qwen3 (q/k norms)\n"
        "  --n-embd N          embedding width (default 256)\n"
        "  --n-layer N         number of blocks (default 4)\n"
        "  --n-head N          attention heads (default 8)\n"
        "  --n-head-kv N       key/value heads (default = n-head)\n"
        "  --n-ff N            feed-forward width (default 768)\n"
        "  --n-vocab N         vocabulary size (default: the size of --vocab-from's vocabulary)\n"
        "  --ctx N             context length (default 2048)\n"
        "  --type f32|f16      type of the matrices (default f16; 1-D tensors are always f32)\n"
        "  --seed N            random seed (default 42)\n"
        "  --vocab-from FILE   copy the tokenizer.* metadata of this GGUF file\n", exe);
}

static bool parse_i64(const char * s, int64_t * out) {
    char * end = NULL;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v <= 0) {
        return false;
    }
    *out = v;
    return true;
}

// splitmix64: small, fast and good enough for weights that only need to look random
static uint64_t rng_next(uint64_t * s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double rng_uniform(uint64_t * s) {
    // 53 random bits in (0, 1]: never 0, so log() below is finite
    return ((double) (rng_next(s) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

// standard normal pairs by Box-Muller
static void fill_normal(float * dst, int64_t n, uint64_t seed, float mean, float sd) {
    uint64_t s = seed;
    const double two_pi = 6.283185307179586;
    for (int64_t i = 0; i < n; i += 2) {
        const double r = sqrt(-2.0 * log(rng_uniform(&s)));
        const double a = two_pi * rng_uniform(&s);
        dst[i] = ggml_fp16_to_fp32(ggml_fp32_to_fp16(mean + sd * (float) (r * cos(a))));
        if (i + 1 < n) {
            dst[i + 1] = ggml_fp16_to_fp32(ggml_fp32_to_fp16(mean + sd * (float) (r * sin(a))));
        }
    }
}

static void add_tensor(struct gen_tensor * ts, size_t * n, const char * name, int n_dims, int64_t ne0, int64_t ne1,
                       enum gen_init init) {
    struct gen_tensor * t = &ts[(*n)++];
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->n_dims = n_dims;
    t->ne[0] = ne0;
    t->ne[1] = n_dims > 1 ? ne1 : 1;
    t->init = init;
}

// the tensor list in llama.cpp's loader order (globals, then per block by name)
static size_t build_tensors(const struct gen_params * p, struct gen_tensor * ts) {
    const int64_t hd = p->n_embd / p->n_head;
    const int64_t nq = hd * p->n_head, nkv = hd * p->n_head_kv;
    const bool qwen2 = strcmp(p->arch, "qwen2") == 0;
    const bool qwen3 = strcmp(p->arch, "qwen3") == 0;
    size_t n = 0;
    add_tensor(ts, &n, "output.weight",      2, p->n_embd, p->n_vocab, GEN_WEIGHT);
    add_tensor(ts, &n, "output_norm.weight", 1, p->n_embd, 1,          GEN_NORM);
    add_tensor(ts, &n, "token_embd.weight",  2, p->n_embd, p->n_vocab, GEN_WEIGHT);
    for (int64_t il = 0; il < p->n_layer; il++) {
        char nm[GGML_MAX_NAME];
#define BLK(suffix) (snprintf(nm, sizeof(nm), "blk.%" PRId64 ".%s", il, suffix), nm)
        if (qwen2) add_tensor(ts, &n, BLK("attn_k.bias"), 1, nkv, 1, GEN_WEIGHT);
        add_tensor(ts, &n, BLK("attn_k.weight"), 2, p->n_embd, nkv, GEN_WEIGHT);
        if (qwen3) add_tensor(ts, &n, BLK("attn_k_norm.weight"), 1, hd, 1, GEN_NORM);
        add_tensor(ts, &n, BLK("attn_norm.weight"), 1, p->n_embd, 1, GEN_NORM);
        add_tensor(ts, &n, BLK("attn_output.weight"), 2, nq, p->n_embd, GEN_WEIGHT);
        if (qwen2) add_tensor(ts, &n, BLK("attn_q.bias"), 1, nq, 1, GEN_WEIGHT);
        add_tensor(ts, &n, BLK("attn_q.weight"), 2, p->n_embd, nq, GEN_WEIGHT);
        if (qwen3) add_tensor(ts, &n, BLK("attn_q_norm.weight"), 1, hd, 1, GEN_NORM);
        if (qwen2) add_tensor(ts, &n, BLK("attn_v.bias"), 1, nkv, 1, GEN_WEIGHT);
        add_tensor(ts, &n, BLK("attn_v.weight"), 2, p->n_embd, nkv, GEN_WEIGHT);
        add_tensor(ts, &n, BLK("ffn_down.weight"), 2, p->n_ff, p->n_embd, GEN_WEIGHT);
        add_tensor(ts, &n, BLK("ffn_gate.weight"), 2, p->n_embd, p->n_ff, GEN_WEIGHT);
        add_tensor(ts, &n, BLK("ffn_norm.weight"), 1, p->n_embd, 1, GEN_NORM);
        add_tensor(ts, &n, BLK("ffn_up.weight"), 2, p->n_embd, p->n_ff, GEN_WEIGHT);
#undef BLK
    }
    return n;
}

// tokenizer.* keys of another file; sets *n_vocab from its token list
static bool copy_vocab(struct gguf_context * out, const char * fname, int64_t * n_vocab) {
    struct gguf_init_params ip = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * src = gguf_init_from_file(fname, ip);
    if (!src) {
        fprintf(stderr, "error: cannot read vocabulary file %s\n", fname);
        return false;
    }
    const int64_t tid = gguf_find_key(src, "tokenizer.ggml.tokens");
    if (tid < 0 || gguf_get_kv_type(src, tid) != GGUF_TYPE_ARRAY || gguf_get_arr_type(src, tid) != GGUF_TYPE_STRING) {
        fprintf(stderr, "error: %s has no tokenizer.ggml.tokens string array\n", fname);
        gguf_free(src);
        return false;
    }
    *n_vocab = (int64_t) gguf_get_arr_n(src, tid);
    // copy everything into a scratch context, drop the non-tokenizer keys, merge the rest
    struct gguf_context * tmp = gguf_init_empty();
    gguf_set_kv(tmp, src);
    for (int64_t i = gguf_get_n_kv(tmp) - 1; i >= 0; i--) {
        char k[256];
        snprintf(k, sizeof(k), "%s", gguf_get_key(tmp, i));
        if (strncmp(k, "tokenizer.", 10) != 0) {
            gguf_remove_key(tmp, k);
        }
    }
    gguf_set_kv(out, tmp);
    gguf_free(tmp);
    gguf_free(src);
    return true;
}

static bool write_zeros(FILE * f, size_t n) {
    static const char z[64] = {0};
    while (n > 0) {
        const size_t k = n < sizeof(z) ? n : sizeof(z);
        if (fwrite(z, 1, k, f) != k) {
            return false;
        }
        n -= k;
    }
    return true;
}

static int generate(const struct gen_params * p) {
    int rc = 1;
    struct gguf_context * g = gguf_init_empty();
    struct ggml_context * ctx = NULL;
    struct gen_tensor * ts = NULL;
    FILE * f = NULL;
    float * buf = NULL;
    void * conv = NULL;
    char * tmp = NULL;
    void * meta = NULL;

    // the tokenizer keys go after the model's own keys, as in converted files
    struct gguf_context * vocab = gguf_init_empty();
    int64_t n_vocab = p->n_vocab;
    if (p->vocab_from) {
        int64_t nv = 0;
        if (!copy_vocab(vocab, p->vocab_from, &nv)) {
            gguf_free(vocab);
            goto done;
        }
        if (n_vocab > 0 && n_vocab != nv) {
            fprintf(stderr, "error: --n-vocab %" PRId64 " differs from the %" PRId64 " tokens of %s\n", n_vocab, nv,
                    p->vocab_from);
            gguf_free(vocab);
            goto done;
        }
        n_vocab = nv;
    } else {
        if (n_vocab <= 0) {
            fprintf(stderr, "error: give --n-vocab or --vocab-from\n");
            gguf_free(vocab);
            goto done;
        }
        // no tokenizer: llama.cpp loads such a model with a vocabulary of type "none"
        gguf_set_val_str(vocab, "tokenizer.ggml.model", "no_vocab");
    }

    struct gen_params q = *p;
    q.n_vocab = n_vocab;
    const char * a = p->arch;
    char key[128];
#define K(suffix) (snprintf(key, sizeof(key), "%s.%s", a, suffix), key)
    gguf_set_val_str(g, "general.architecture", a);
    gguf_set_val_str(g, "general.name", "random-weight test model");
    gguf_set_val_u32(g, K("vocab_size"), (uint32_t) n_vocab);
    gguf_set_val_u32(g, K("context_length"), (uint32_t) p->n_ctx);
    gguf_set_val_u32(g, K("embedding_length"), (uint32_t) p->n_embd);
    gguf_set_val_u32(g, K("block_count"), (uint32_t) p->n_layer);
    gguf_set_val_u32(g, K("feed_forward_length"), (uint32_t) p->n_ff);
    gguf_set_val_u32(g, K("attention.head_count"), (uint32_t) p->n_head);
    gguf_set_val_u32(g, K("attention.head_count_kv"), (uint32_t) p->n_head_kv);
    const bool is_llama = strcmp(a, "llama") == 0;
    gguf_set_val_f32(g, K("attention.layer_norm_rms_epsilon"), is_llama ? 1e-5f : 1e-6f);
    gguf_set_val_f32(g, K("rope.freq_base"), is_llama ? 10000.0f : 1000000.0f);
    gguf_set_val_u32(g, K("rope.dimension_count"), (uint32_t) (p->n_embd / p->n_head));
#undef K
    gguf_set_val_u32(g, "general.quantization_version", GGML_QNT_VERSION);
    gguf_set_val_u32(g, "general.file_type", p->f16 ? 1u : 0u);
    gguf_set_kv(g, vocab);
    gguf_free(vocab);

    const size_t max_tensors = 3 + 16 * (size_t) p->n_layer;
    ts = calloc(max_tensors, sizeof(*ts));
    if (!ts) {
        goto done;
    }
    const size_t n = build_tensors(&q, ts);
    struct ggml_init_params cp = { .mem_size = ggml_tensor_overhead() * (n + 1), .mem_buffer = NULL, .no_alloc = true };
    ctx = ggml_init(cp);
    if (!ctx) {
        goto done;
    }
    int64_t max_ne = 0;
    for (size_t i = 0; i < n; i++) {
        const enum ggml_type type = ts[i].n_dims == 2 && p->f16 ? GGML_TYPE_F16 : GGML_TYPE_F32;
        struct ggml_tensor * t = ts[i].n_dims == 2 ? ggml_new_tensor_2d(ctx, type, ts[i].ne[0], ts[i].ne[1])
                                                   : ggml_new_tensor_1d(ctx, type, ts[i].ne[0]);
        ggml_set_name(t, ts[i].name);
        gguf_add_tensor(g, t);
        const int64_t ne = ts[i].ne[0] * ts[i].ne[1];
        if (ne > max_ne) {
            max_ne = ne;
        }
    }

    buf  = malloc((size_t) max_ne * sizeof(float));
    conv = malloc((size_t) max_ne * sizeof(ggml_fp16_t));
    const size_t len = strlen(p->out);
    tmp = malloc(len + 5);
    if (!buf || !conv || !tmp) {
        fprintf(stderr, "error: out of memory (largest tensor has %" PRId64 " elements)\n", max_ne);
        goto done;
    }
    memcpy(tmp, p->out, len);
    memcpy(tmp + len, ".tmp", 5);
    f = fopen(tmp, "wb");
    if (!f) {
        fprintf(stderr, "error: cannot create %s: %s\n", tmp, strerror(errno));
        free(tmp);
        tmp = NULL;
        goto done;
    }
    const size_t meta_size = gguf_get_meta_size(g);
    meta = malloc(meta_size);
    if (!meta) {
        goto done;
    }
    gguf_get_meta_data(g, meta);
    if (fwrite(meta, 1, meta_size, f) != meta_size) {
        fprintf(stderr, "error: writing %s failed: %s\n", tmp, strerror(errno));
        goto done;
    }
    const size_t align = gguf_get_alignment(g);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        const int64_t id = gguf_find_tensor(g, ts[i].name);
        const int64_t ne = ts[i].ne[0] * ts[i].ne[1];
        if (id < 0 || gguf_get_tensor_offset(g, id) != pos) {
            fprintf(stderr, "error: internal offset mismatch at tensor %s\n", ts[i].name);
            goto done;
        }
        const uint64_t tseed = p->seed * 0x100000001b3ULL + (uint64_t) i * 0x9e3779b97f4a7c15ULL;
        if (ts[i].init == GEN_NORM) {
            fill_normal(buf, ne, tseed, 1.0f, 0.1f);
        } else {
            fill_normal(buf, ne, tseed, 0.0f, 0.02f);
        }
        const void * data = buf;
        size_t nbytes = (size_t) ne * sizeof(float);
        if (gguf_get_tensor_type(g, id) == GGML_TYPE_F16) {
            ggml_fp32_to_fp16_row(buf, conv, ne);
            data = conv;
            nbytes = (size_t) ne * sizeof(ggml_fp16_t);
        }
        const size_t padded = (nbytes + align - 1) / align * align;
        if (fwrite(data, 1, nbytes, f) != nbytes || !write_zeros(f, padded - nbytes)) {
            fprintf(stderr, "error: writing %s failed: %s\n", tmp, strerror(errno));
            goto done;
        }
        pos += padded;
        fprintf(stderr, "[%4zu/%4zu] %-36s %s [%" PRId64 ", %" PRId64 "]\n", i + 1, n, ts[i].name,
                ggml_type_name(gguf_get_tensor_type(g, id)), ts[i].ne[0], ts[i].ne[1]);
    }
    const bool flushed = fflush(f) == 0;
    const bool closed = fclose(f) == 0;
    f = NULL;
    if (!flushed || !closed || rename(tmp, p->out) != 0) {
        fprintf(stderr, "error: finishing %s failed: %s\n", p->out, strerror(errno));
        goto done;
    }
    free(tmp);
    tmp = NULL;
    fprintf(stderr, "wrote %s: %s, %zu tensors, %.2f MiB\n", p->out, a, n, (double) (meta_size + pos) / 1024.0 / 1024.0);
    rc = 0;

done:
    if (f) fclose(f);
    if (tmp) { unlink(tmp); free(tmp); }
    free(meta);
    free(buf);
    free(conv);
    free(ts);
    if (ctx) ggml_free(ctx);
    gguf_free(g);
    return rc;
}

int main(int argc, char ** argv) {
    struct gen_params p = {
        .out = NULL, .arch = "llama", .vocab_from = NULL,
        .n_embd = 256, .n_layer = 4, .n_head = 8, .n_head_kv = 0, .n_ff = 768, .n_vocab = 0, .n_ctx = 2048,
        .f16 = true, .seed = 42,
    };
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        const char * v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t * num = NULL;
        if      (strcmp(a, "--n-embd") == 0)    num = &p.n_embd;
        else if (strcmp(a, "--n-layer") == 0)   num = &p.n_layer;
        else if (strcmp(a, "--n-head") == 0)    num = &p.n_head;
        else if (strcmp(a, "--n-head-kv") == 0) num = &p.n_head_kv;
        else if (strcmp(a, "--n-ff") == 0)      num = &p.n_ff;
        else if (strcmp(a, "--n-vocab") == 0)   num = &p.n_vocab;
        else if (strcmp(a, "--ctx") == 0)       num = &p.n_ctx;
        if (num) {
            if (!v || !parse_i64(v, num) || *num > (1LL << 24)) {
                fprintf(stderr, "error: %s needs a positive integer (at most 16777216)\n", a);
                return 1;
            }
            i++;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (!v) { usage(argv[0]); return 1; }
            p.out = argv[++i];
        } else if (strcmp(a, "--arch") == 0) {
            if (!v || (strcmp(v, "llama") != 0 && strcmp(v, "qwen2") != 0 && strcmp(v, "qwen3") != 0)) {
                fprintf(stderr, "error: --arch must be llama, qwen2 or qwen3\n");
                return 1;
            }
            p.arch = argv[++i];
        } else if (strcmp(a, "--type") == 0) {
            if (!v || (strcmp(v, "f16") != 0 && strcmp(v, "f32") != 0)) {
                fprintf(stderr, "error: --type must be f32 or f16\n");
                return 1;
            }
            p.f16 = strcmp(argv[++i], "f16") == 0;
        } else if (strcmp(a, "--seed") == 0) {
            char * end = NULL;
            if (!v) { usage(argv[0]); return 1; }
            p.seed = strtoull(v, &end, 10);
            if (end == v || *end != '\0') {
                fprintf(stderr, "error: --seed needs a number\n");
                return 1;
            }
            i++;
        } else if (strcmp(a, "--vocab-from") == 0) {
            if (!v) { usage(argv[0]); return 1; }
            p.vocab_from = argv[++i];
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(argv[0]);
            return 0;
        } else if (a[0] != '-' && !p.out) {
            p.out = a;
        } else {
            fprintf(stderr, "error: unknown argument '%s'\n", a);
            usage(argv[0]);
            return 1;
        }
    }
    if (!p.out) {
        usage(argv[0]);
        return 1;
    }
    if (p.n_head_kv == 0) {
        p.n_head_kv = p.n_head;
    }
    if (p.n_embd % p.n_head != 0 || p.n_head % p.n_head_kv != 0 || p.n_layer > 4096) {
        fprintf(stderr, "error: n_embd (%" PRId64 ") must be a multiple of n_head (%" PRId64 "), n_head of n_head_kv "
                "(%" PRId64 "), and n_layer at most 4096\n", p.n_embd, p.n_head, p.n_head_kv);
        return 1;
    }
    return generate(&p);
}
