// llama-finetune end to end, through common's option table: a short run on stories260K (F32) exits 0 and
// writes a model whose trained weights changed and whose token embeddings did not (llama_opt_param_filter_all
// leaves them out); bad command lines exit 1 and write nothing. The training itself is checked in test-llama-opt.
#include "harness.h"
#include "harness-run.h"

#include "gguf.h"

#include <string.h>
#include <unistd.h>

// bytes of tensor `name` in a GGUF file (malloc'd), NULL if absent
static void * tensor_bytes(const char * path, const char * name, size_t * n) {
    struct gguf_init_params gp = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * g = gguf_init_from_file(path, gp);
    if (!g) {
        return NULL;
    }
    void * out = NULL;
    const int64_t id = gguf_find_tensor(g, name);
    FILE * f = id >= 0 ? fopen(path, "rb") : NULL;
    if (f) {
        *n = gguf_get_tensor_size(g, id);
        out = malloc(*n);
        if (!out || fseek(f, (long) (gguf_get_data_offset(g) + gguf_get_tensor_offset(g, id)), SEEK_SET) != 0 ||
            fread(out, 1, *n, f) != *n) {
            free(out);
            out = NULL;
        }
        fclose(f);
    }
    gguf_free(g);
    return out;
}

static bool same_tensor(const char * a, const char * b, const char * name, bool * found) {
    size_t na = 0, nb = 0;
    void * x = tensor_bytes(a, name, &na);
    void * y = tensor_bytes(b, name, &nb);
    *found = x && y;
    const bool same = *found && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

int main(int argc, char ** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s LLAMA-FINETUNE\n", argv[0]);
        return 2;
    }
    char * bin = argv[1];
    const char * model = th_data_path("models/stories260K-f32.gguf");
    if (!th_require_file(model)) {
        return th_finish();
    }
    char dir[] = "/tmp/test-finetune-XXXXXX";
    if (!mkdtemp(dir)) {
        TH_CHECK(false, "mkdtemp");
        return th_finish();
    }
    char out[512], text[4096] = "";
    snprintf(out, sizeof(out), "%s/ft.gguf", dir);
    while (strlen(text) + 64 < sizeof(text)) {
        strcat(text, "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O ");
    }

    {
        char * args[] = { bin, "-m", (char *) model, "-p", text, "-c", "32", "-b", "32", "-ub", "32", "-epochs", "1",
                          "-lr", "1e-3", "-val-split", "0.1", "-opt", "adamw", "-t", "2", "-o", out, NULL };
        struct th_run_result r = th_run(args, dir);
        TH_CHECK(r.status == 0, "finetune run: status %d\n%s", r.status, r.err);
        TH_CHECK(strstr(r.err, "-optimizer adamw -lr0 0.001") != NULL, "the options did not reach the run:\n%s", r.err);
        th_run_free(&r);
        bool found = false;
        TH_CHECK(!same_tensor(model, out, "blk.0.attn_q.weight", &found) && found, "blk.0.attn_q.weight did not change");
        TH_CHECK(!same_tensor(model, out, "output_norm.weight", &found) && found, "output_norm.weight did not change");
        TH_CHECK(same_tensor(model, out, "token_embd.weight", &found) && found, "token_embd.weight changed");
        unlink(out);
    }
    // bad command lines: exit 1, nothing written
    const char * bad[][4] = {
        { "-opt", "rmsprop", NULL, NULL },
        { "-epochs", "0", NULL, NULL },
        { "-val-split", "1.5", NULL, NULL },
        { "-c", "32", "-b", "24" },   // -b must divide -c
        { "-lr", "abc", NULL, NULL },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char * args[16];
        int a = 0;
        args[a++] = bin;
        args[a++] = "-m";
        args[a++] = (char *) model;
        args[a++] = "-p";
        args[a++] = text;
        args[a++] = "-o";
        args[a++] = out;
        for (int k = 0; k < 4 && bad[i][k]; k++) {
            args[a++] = (char *) bad[i][k];
        }
        args[a] = NULL;
        struct th_run_result r = th_run(args, dir);
        TH_CHECK(r.status == 1 && r.err[0] != '\0', "bad args %s %s: status %d", bad[i][0], bad[i][1], r.status);
        TH_CHECK(access(out, F_OK) != 0, "bad args %s: an output was written", bad[i][0]);
        th_run_free(&r);
    }
    // an output that cannot be written is refused before training
    {
        char * args[] = { bin, "-m", (char *) model, "-p", text, "-o", "/nonexistent-dir/ft.gguf", NULL };
        struct th_run_result r = th_run(args, dir);
        TH_CHECK(r.status == 1 && strstr(r.err, "cannot write the output") != NULL && strstr(r.err, "train:") == NULL,
                 "unwritable output: status %d\n%s", r.status, r.err);
        th_run_free(&r);
    }
    {
        char * args[] = { bin, "-m", (char *) model, NULL };
        struct th_run_result r = th_run(args, dir);
        TH_CHECK(r.status == 1 && strstr(r.err, "training text") != NULL, "no text: status %d\n%s", r.status, r.err);
        th_run_free(&r);
    }
    th_clear_dir(dir);
    rmdir(dir);
    return th_finish();
}
