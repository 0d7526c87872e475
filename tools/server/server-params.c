// llama-server's command line: the options are common/arg.c's table (LLAMA_EXAMPLE_SERVER), parsed by
// common_params_parse like every other program; this file only adds what the server decides after parsing.
#include "server-context.h"

#include "arg.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int server_params_parse(int argc, char ** argv, struct common_params * p) {
    *p = common_params_default();
    char err[640];
    const enum common_arg_status st = common_params_parse_ex(argc, argv, p, LLAMA_EXAMPLE_SERVER, err, sizeof(err));
    if (st == COMMON_ARG_ERROR) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    if (st == COMMON_ARG_EXIT) {
        fflush(stdout);
        return 1;
    }
    // the server logs through server_log (not common/log.c): carry -v / -lv / --log-disable over
    server_log_verbosity = p->verbosity >= LOG_DEFAULT_DEBUG ? 1 : 0;
    server_log_disabled  = common_log_is_paused();

    if (!p->model.path || !p->model.path[0]) {
        fprintf(stderr, "error: no model given (-m FNAME)\n");
        return -1;
    }
    if (p->speculative.draft.mparams.path && p->speculative.draft.mparams.path[0] && p->speculative.n_types == 1 &&
        p->speculative.types[0] == COMMON_SPECULATIVE_TYPE_NONE) {
        // -md alone means draft-simple, as in llama.cpp
        p->speculative.types[0] = COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE;
    }
    if (!p->n_parallel_explicit) {
        // llama.cpp's automatic setting (-np -1, the server's default): 4 slots sharing one KV buffer
        p->n_parallel = 4;
        p->kv_unified = true;
    }
    if (p->n_threads_http < 1) {
        const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        const int hw = ncpu > 1 ? (int) ncpu - 1 : 1;
        p->n_threads_http = p->n_parallel + 2 > hw ? p->n_parallel + 2 : hw;
    }
    if (p->slot_save_path && p->slot_save_path[0]) {
        // as llama.cpp: the slot files go into an existing directory
        struct stat sb;
        if (stat(p->slot_save_path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            fprintf(stderr, "error: --slot-save-path: not a directory: %s\n", p->slot_save_path);
            return -1;
        }
    }
    return 0;
}
