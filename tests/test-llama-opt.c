// llama_opt_init / llama_opt_epoch on the F32 stories260K model:
//  - the training graph's forward pass is the inference one: ggml-opt's evaluation loss over the dataset equals
//    the cross-entropy computed here (double) from llama_decode's logits;
//  - a few AdamW epochs at a small learning rate lower the training loss epoch after epoch;
//  - only the trained tensors change (attn_k included: gradients reach K through the attention), the others
//    keep their bytes, and the logits move;
//  - with flash attention on and off (the two attention paths of the graph);
//  - micro-batches (n_ubatch < n_ctx): the later ones see the earlier ones' K / V through the cache, and the
//    gradients of 4 micro-batches of 8 accumulate to one SGD step equal to that of one batch of 32;
//  - bad setups are refused with a log line (mmap'd weights, n_batch not dividing n_ctx), and so are
//    models without a backward pass (MoE, GELU or fused FFN, repacked weights); a Q4_K_M llama without
//    repacking trains its F32 norms through the quantized matmuls.

#include "llama.h"
#include "llama-context.h"
#include "llama-model.h"

#include "harness.h"

#define N_CTX 32

static const char * k_text =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine. "
    "One day, she saw a big red ball in the park. She ran to the ball and kicked it very high. "
    "Her friend Tom came to play with her. They played with the ball all day and had a lot of fun.";

// trains the tensors of layer attention K / V, the FFNs and the output norm; the rest stays fixed
static bool filter_some(const struct ggml_tensor * t, void * ud) {
    (void) ud;
    return strstr(t->name, "attn_k.") || strstr(t->name, "attn_v.") || strstr(t->name, "ffn_") ||
           strcmp(t->name, "output_norm.weight") == 0;
}

static struct ggml_opt_optimizer_params opt_pars(void * ud) {
    (void) ud;
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    p.adamw.alpha = 2e-3f;
    return p;
}

// mean next-token cross-entropy of the model over the dataset's datapoints, from llama_decode logits (double)
static double decode_loss(struct llama_context * ctx, const llama_token * toks, int64_t ndata, int64_t stride,
                          int n_vocab, float * logits_out) {
    double total = 0.0;
    struct llama_batch b = llama_batch_init(N_CTX, 0, 1);
    for (int64_t d = 0; d < ndata; d++) {
        llama_memory_clear(llama_get_memory(ctx), true);
        b.n_tokens = N_CTX;
        for (int i = 0; i < N_CTX; i++) {
            b.token[i]     = toks[d * stride + i];
            b.pos[i]       = i;
            b.n_seq_id[i]  = 1;
            b.seq_id[i][0] = 0;
            b.logits[i]    = 1;
        }
        if (llama_decode(ctx, b) != 0) {
            llama_batch_free(b);
            return NAN;
        }
        for (int i = 0; i < N_CTX; i++) {
            const float * l = llama_get_logits_ith(ctx, i);
            if (d == 0 && logits_out) {
                memcpy(logits_out + (size_t) i * n_vocab, l, n_vocab * sizeof(float));
            }
            double mx = l[0];
            for (int v = 1; v < n_vocab; v++) {
                mx = l[v] > mx ? l[v] : mx;
            }
            double se = 0.0;
            for (int v = 0; v < n_vocab; v++) {
                se += exp(l[v] - mx);
            }
            const llama_token next = toks[d * stride + i + 1];
            total += -((double) l[next] - mx - log(se));
        }
    }
    llama_batch_free(b);
    return total / (double) (ndata * N_CTX);
}

// a copy of every weight's bytes, in ctx_w order
static void ** snapshot(const struct llama_model * model, int * n) {
    int k = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(model->ctx_w); t; t = ggml_get_next_tensor(model->ctx_w, t)) {
        k++;
    }
    void ** s = calloc((size_t) k, sizeof(void *));
    k = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(model->ctx_w); t; t = ggml_get_next_tensor(model->ctx_w, t)) {
        s[k] = malloc(ggml_nbytes(t));
        ggml_backend_tensor_get(t, s[k], 0, ggml_nbytes(t));
        k++;
    }
    *n = k;
    return s;
}

static void run(const char * path, enum llama_flash_attn_type fa) {
    const char * tag = fa == LLAMA_FLASH_ATTN_TYPE_ENABLED ? "fa" : "no-fa";
    struct llama_model_params mp = llama_model_default_params();
    mp.use_mmap = false;
    struct llama_model * model = llama_model_load_from_file(path, mp);
    TH_CHECK(model != NULL, "%s: load %s", tag, path);
    if (!model) {
        return;
    }
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx           = N_CTX;
    cp.n_batch         = N_CTX;
    cp.n_ubatch        = N_CTX;
    cp.n_threads       = 2;
    cp.n_threads_batch = 2;
    cp.flash_attn_type = fa;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    TH_CHECK(ctx != NULL, "%s: context", tag);

    llama_token toks[256];
    const int n_tok = llama_tokenize(vocab, k_text, (int32_t) strlen(k_text), toks, 256, true, false);
    TH_CHECK(n_tok > 2 * N_CTX, "%s: %d tokens", tag, n_tok);
    const int64_t stride = N_CTX / 2;
    const int64_t ndata  = (n_tok - N_CTX - 1) / stride;

    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_I32, GGML_TYPE_I32, N_CTX, N_CTX, ndata, 1);
    llama_token * dd = (llama_token *) ggml_opt_dataset_data(ds)->data;
    llama_token * dl = (llama_token *) ggml_opt_dataset_labels(ds)->data;
    for (int64_t d = 0; d < ndata; d++) {
        memcpy(dd + d * N_CTX, toks + d * stride, N_CTX * sizeof(llama_token));
        memcpy(dl + d * N_CTX, toks + d * stride + 1, N_CTX * sizeof(llama_token));
    }

    float * logits0 = malloc((size_t) N_CTX * n_vocab * sizeof(float));
    float * logits1 = malloc((size_t) N_CTX * n_vocab * sizeof(float));
    const double loss_ref = decode_loss(ctx, toks, ndata, stride, n_vocab, logits0);

    int n_w;
    void ** before = snapshot(model, &n_w);

    // llama_opt_epoch before llama_opt_init does nothing (logged)
    ggml_opt_result_t r_train = ggml_opt_result_init();
    ggml_opt_result_t r_eval  = ggml_opt_result_init();
    llama_opt_epoch(ctx, ds, r_train, r_eval, 0, NULL, NULL);
    int64_t nd;
    ggml_opt_result_ndata(r_eval, &nd);
    TH_CHECK(nd == 0, "%s: no evaluation without llama_opt_init", tag);

    struct llama_opt_params op = {
        .n_ctx_train     = 0,
        .param_filter    = filter_some,
        .param_filter_ud = NULL,
        .get_opt_pars    = opt_pars,
        .get_opt_pars_ud = NULL,
        .optimizer_type  = GGML_OPT_OPTIMIZER_TYPE_ADAMW,
    };
    llama_opt_init(ctx, model, op);

    // evaluation only: the training graph's forward pass against the decode logits
    llama_opt_epoch(ctx, ds, NULL, r_eval, 0, NULL, NULL);
    double loss_eval, unc;
    ggml_opt_result_loss(r_eval, &loss_eval, &unc);
    ggml_opt_result_ndata(r_eval, &nd);
    fprintf(stderr, "  %s: %lld datapoints, decode loss %.6f, opt eval loss %.6f\n", tag, (long long) ndata, loss_ref,
            loss_eval);
    TH_CHECK(nd == ndata * N_CTX, "%s: evaluated %lld tokens", tag, (long long) nd);
    TH_CHECK(fabs(loss_eval - loss_ref) < 1e-4 * (1.0 + loss_ref), "%s: eval loss %.6f vs decode cross-entropy %.6f",
             tag, loss_eval, loss_ref);
    ggml_opt_result_reset(r_eval);

    // training: the loss goes down epoch after epoch
    double prev = INFINITY, first = 0.0, last = 0.0;
    bool monotonic = true;
    for (int epoch = 0; epoch < 4; epoch++) {
        ggml_opt_result_reset(r_train);
        llama_opt_epoch(ctx, ds, r_train, NULL, ndata, NULL, NULL);
        double l, u, acc, acc_unc;
        ggml_opt_result_loss(r_train, &l, &u);
        ggml_opt_result_accuracy(r_train, &acc, &acc_unc);
        fprintf(stderr, "  %s: epoch %d train loss %.6f +- %.6f, accuracy %.3f\n", tag, epoch, l, u, acc);
        monotonic = monotonic && l < prev;
        prev = l;
        if (epoch == 0) {
            first = l;
        }
        last = l;
        TH_CHECK(acc >= 0.0 && acc <= 1.0, "%s: accuracy %f", tag, acc);
    }
    TH_CHECK(monotonic, "%s: the training loss decreases every epoch", tag);
    TH_CHECK(last < first - 0.01, "%s: the training loss drops (%.5f -> %.5f)", tag, first, last);

    // which weights moved
    int k = 0, n_changed_trained = 0, n_trained = 0;
    bool others_same = true, attn_k_moved = false;
    for (struct ggml_tensor * t = ggml_get_first_tensor(model->ctx_w); t; t = ggml_get_next_tensor(model->ctx_w, t), k++) {
        void * now = malloc(ggml_nbytes(t));
        ggml_backend_tensor_get(t, now, 0, ggml_nbytes(t));
        const bool same = memcmp(now, before[k], ggml_nbytes(t)) == 0;
        free(now);
        const bool trained = t->type == GGML_TYPE_F32 && filter_some(t, NULL);
        if (trained) {
            n_trained++;
            n_changed_trained += !same;
            attn_k_moved = attn_k_moved || (!same && strstr(t->name, "attn_k."));
        } else if (!same) {
            others_same = false;
            fprintf(stderr, "  %s: untrained tensor %s changed\n", tag, t->name);
        }
    }
    TH_CHECK(n_trained > 0 && n_changed_trained == n_trained, "%s: %d of %d trained tensors changed", tag,
             n_changed_trained, n_trained);
    TH_CHECK(others_same, "%s: the tensors outside the filter keep their bytes", tag);
    TH_CHECK(attn_k_moved, "%s: attn_k receives gradients through the attention", tag);

    // the trained model decodes with lower loss and different logits
    const double loss_after = decode_loss(ctx, toks, ndata, stride, n_vocab, logits1);
    double maxdiff = 0.0;
    for (size_t i = 0; i < (size_t) N_CTX * n_vocab; i++) {
        const double dlt = fabs((double) logits1[i] - logits0[i]);
        maxdiff = dlt > maxdiff ? dlt : maxdiff;
    }
    fprintf(stderr, "  %s: decode loss after training %.6f (before %.6f), max logit change %.4f\n", tag, loss_after,
            loss_ref, maxdiff);
    TH_CHECK(loss_after < loss_ref, "%s: decode loss after training %.6f < %.6f", tag, loss_after, loss_ref);
    TH_CHECK(maxdiff > 1e-3, "%s: the logits changed", tag);

    // a second llama_opt_init on the same context is refused and changes nothing
    llama_opt_init(ctx, model, op);

    for (int i = 0; i < n_w; i++) {
        free(before[i]);
    }
    free(before);
    free(logits0);
    free(logits1);
    ggml_opt_result_free(r_train);
    ggml_opt_result_free(r_eval);
    ggml_opt_dataset_free(ds);
    llama_free(ctx);
    llama_model_free(model);
}

static void bad_setups(const char * path) {
    // mmap'd weights cannot be trained
    struct llama_model_params mp = llama_model_default_params();
    mp.use_mmap = true;
    struct llama_model * model = llama_model_load_from_file(path, mp);
    if (!model) {
        return;
    }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx    = N_CTX;
    cp.n_batch  = N_CTX;
    cp.n_ubatch = N_CTX;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    struct llama_opt_params op = { 0, llama_opt_param_filter_all, NULL, opt_pars, NULL, GGML_OPT_OPTIMIZER_TYPE_SGD };
    TH_CHECK(llama_opt_param_filter_all(NULL, NULL), "llama_opt_param_filter_all returns true");
    if (model->n_mappings > 0) {
        llama_opt_init(ctx, model, op);
        TH_CHECK(ctx->opt == NULL, "training state refused for mmap'd weights");
    }
    llama_free(ctx);
    llama_model_free(model);

    // n_batch must divide n_ctx
    mp.use_mmap = false;
    model = llama_model_load_from_file(path, mp);
    cp.n_batch  = 24;
    cp.n_ubatch = 8;
    ctx = llama_init_from_model(model, cp);
    llama_opt_init(ctx, model, op);
    TH_CHECK(ctx->opt == NULL, "training state refused for n_ctx %% n_batch != 0");
    llama_free(ctx);
    llama_model_free(model);
}

// the tensors after the last attention: their gradients do not depend on how the context is cut in micro-batches
static bool filter_head(const struct ggml_tensor * t, void * ud) {
    (void) ud;
    return strcmp(t->name, "output_norm.weight") == 0 || strncmp(t->name, "blk.4.ffn_", 10) == 0;
}

static struct ggml_opt_optimizer_params sgd_pars(void * ud) {
    (void) ud;
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    p.sgd.alpha = 0.5f;
    return p;
}

// one SGD step on one datapoint with micro-batches of n_ubatch tokens (n_batch = n_ctx: one step per datapoint);
// returns the change of output_norm.weight and blk.4.ffn_down.weight (concatenated, malloc'd, *n values), and the
// evaluation loss before the step in *loss_eval
static float * sgd_step_delta(const char * path, uint32_t n_ubatch, const llama_token * toks, size_t * n, double * loss_eval) {
    struct llama_model_params mp = llama_model_default_params();
    mp.use_mmap = false;
    struct llama_model * model = llama_model_load_from_file(path, mp);
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx    = N_CTX;
    cp.n_batch  = N_CTX;
    cp.n_ubatch = n_ubatch;
    cp.type_k   = GGML_TYPE_F32; // the earlier micro-batches' K / V come back from the cache unrounded
    cp.type_v   = GGML_TYPE_F32;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    const char * names[2] = { "output_norm.weight", "blk.4.ffn_down.weight" };
    struct ggml_tensor * ts[2] = { NULL, NULL };
    for (struct ggml_tensor * t = ggml_get_first_tensor(model->ctx_w); t; t = ggml_get_next_tensor(model->ctx_w, t)) {
        for (int k = 0; k < 2; k++) {
            ts[k] = strcmp(t->name, names[k]) == 0 ? t : ts[k];
        }
    }
    if (!ts[0] || !ts[1] || ts[0]->type != GGML_TYPE_F32 || ts[1]->type != GGML_TYPE_F32) {
        TH_CHECK(false, "stories260K has F32 %s and %s", names[0], names[1]);
        llama_free(ctx);
        llama_model_free(model);
        return NULL;
    }
    const size_t n0 = (size_t) ggml_nelements(ts[0]), n1 = (size_t) ggml_nelements(ts[1]);
    float * w0 = malloc((n0 + n1) * sizeof(float));
    float * w1 = malloc((n0 + n1) * sizeof(float));
    ggml_backend_tensor_get(ts[0], w0, 0, n0 * sizeof(float));
    ggml_backend_tensor_get(ts[1], w0 + n0, 0, n1 * sizeof(float));

    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_I32, GGML_TYPE_I32, N_CTX, N_CTX, 1, 1);
    memcpy(ggml_opt_dataset_data(ds)->data, toks, N_CTX * sizeof(llama_token));
    memcpy(ggml_opt_dataset_labels(ds)->data, toks + 1, N_CTX * sizeof(llama_token));
    struct llama_opt_params op = { 0, filter_head, NULL, sgd_pars, NULL, GGML_OPT_OPTIMIZER_TYPE_SGD };
    llama_opt_init(ctx, model, op);
    ggml_opt_result_t r = ggml_opt_result_init();
    llama_opt_epoch(ctx, ds, NULL, r, 0, NULL, NULL); // evaluation only
    double unc;
    ggml_opt_result_loss(r, loss_eval, &unc);
    llama_opt_epoch(ctx, ds, NULL, NULL, 1, NULL, NULL); // one step
    ggml_backend_tensor_get(ts[0], w1, 0, n0 * sizeof(float));
    ggml_backend_tensor_get(ts[1], w1 + n0, 0, n1 * sizeof(float));
    for (size_t i = 0; i < n0 + n1; i++) {
        w1[i] -= w0[i];
    }
    *n = n0 + n1;
    free(w0);
    ggml_opt_result_free(r);
    ggml_opt_dataset_free(ds);
    llama_free(ctx);
    llama_model_free(model);
    return w1;
}

// micro-batches: the later ones read the earlier ones' K / V from the cache (the evaluation loss is the one of
// the whole context), and gradients accumulate over them (one step over 4 micro-batches of 8 = one over 32)
static void micro_batches(const char * path) {
    struct llama_model_params mp = llama_model_default_params();
    mp.use_mmap = false;
    struct llama_model * model = llama_model_load_from_file(path, mp);
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    llama_token toks[256];
    const int n_tok = llama_tokenize(vocab, k_text, (int32_t) strlen(k_text), toks, 256, true, false);
    TH_CHECK(n_tok > N_CTX, "tokens");
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = cp.n_batch = cp.n_ubatch = N_CTX;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    const double loss_ref = decode_loss(ctx, toks, 1, N_CTX, llama_vocab_n_tokens(vocab), NULL);
    llama_free(ctx);
    llama_model_free(model);

    size_t n32 = 0, n8 = 0;
    double l32 = 0.0, l8 = 0.0;
    float * d32 = sgd_step_delta(path, N_CTX, toks, &n32, &l32);
    float * d8  = sgd_step_delta(path, 8, toks, &n8, &l8);
    TH_CHECK(fabs(l32 - loss_ref) < 1e-4 * (1.0 + loss_ref), "1 micro-batch: eval loss %.6f vs decode %.6f", l32, loss_ref);
    TH_CHECK(fabs(l8 - loss_ref) < 1e-4 * (1.0 + loss_ref), "4 micro-batches: eval loss %.6f vs decode %.6f", l8, loss_ref);
    if (d32 && d8 && n32 == n8) {
        double mx = 0.0, diff = 0.0;
        for (size_t i = 0; i < n32; i++) {
            mx   = fabs(d32[i]) > mx ? fabs(d32[i]) : mx;
            diff = fabs(d32[i] - d8[i]) > diff ? fabs(d32[i] - d8[i]) : diff;
        }
        fprintf(stderr, "  micro-batches: SGD step max |dw| %.6g, max difference 4x8 vs 1x32 %.3g\n", mx, diff);
        TH_CHECK(mx > 1e-4, "the SGD step moves the weights (%g)", mx);
        TH_CHECK(diff <= 1e-4 * mx, "4 micro-batches of 8 accumulate to the step of one batch of 32 (%g vs %g)", diff, mx);
    }
    free(d32);
    free(d8);
}

// models whose graph the backward pass cannot go through are refused up front (no abort later)
static void refused_models(void) {
    static const struct { const char * file; bool extra_bufts; bool ok; const char * why; } cases[] = {
        { "models/synthetic/qwen3moe-F16.gguf",  false, false, "mixture of experts" },
        { "models/synthetic/gemma3-F16.gguf",    false, false, "GELU FFN" },
        { "models/synthetic/phi3-F16.gguf",      false, false, "fused up+gate FFN" },
        { "models/synthetic/llama-Q4_K_M.gguf",  true,  false, "repacked weights" },
        { "models/synthetic/llama-Q4_K_M.gguf",  false, true,  "the same weights without repacking" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char * path = th_data_path("%s", cases[i].file);
        if (!th_require_file(path)) {
            continue;
        }
        struct llama_model_params mp = llama_model_default_params();
        mp.use_mmap        = false;
        mp.use_extra_bufts = cases[i].extra_bufts;
        struct llama_model * model = llama_model_load_from_file(path, mp);
        TH_CHECK(model != NULL, "load %s", cases[i].file);
        if (!model) {
            continue;
        }
        struct llama_context_params cp = llama_context_default_params();
        cp.n_ctx = cp.n_batch = cp.n_ubatch = 16;
        struct llama_context * ctx = llama_init_from_model(model, cp);
        struct llama_opt_params op = { 0, llama_opt_param_filter_all, NULL, opt_pars, NULL, GGML_OPT_OPTIMIZER_TYPE_ADAMW };
        llama_opt_init(ctx, model, op);
        TH_CHECK((ctx->opt != NULL) == cases[i].ok, "%s: %s (%s)", cases[i].file, cases[i].ok ? "accepted" : "refused",
                 cases[i].why);
        if (ctx->opt != NULL) {
            // one training step runs through the quantized matmuls' backward pass
            ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_I32, GGML_TYPE_I32, 16, 16, 1, 1);
            int32_t * d = (int32_t *) ggml_opt_dataset_data(ds)->data;
            int32_t * l = (int32_t *) ggml_opt_dataset_labels(ds)->data;
            for (int k = 0; k < 16; k++) {
                d[k] = 1 + k;
                l[k] = 2 + k;
            }
            ggml_opt_result_t r = ggml_opt_result_init();
            llama_opt_epoch(ctx, ds, r, NULL, 1, NULL, NULL);
            double loss, unc;
            ggml_opt_result_loss(r, &loss, &unc);
            TH_CHECK(isfinite(loss) && loss > 0.0, "%s: a training step gives a finite loss (%f)", cases[i].file, loss);
            ggml_opt_result_free(r);
            ggml_opt_dataset_free(ds);
        }
        llama_free(ctx);
        llama_model_free(model);
    }
}

int main(void) {
    llama_backend_init();
    const char * path = th_data_path("models/stories260K-f32.gguf");
    if (th_require_file(path)) {
        run(path, LLAMA_FLASH_ATTN_TYPE_ENABLED);
        run(path, LLAMA_FLASH_ATTN_TYPE_DISABLED);
        bad_setups(path);
        micro_batches(path);
    }
    refused_models();
    llama_backend_free();
    return th_finish();
}
