// Running a program from a test: argv (NULL-terminated, argv[0] the binary's path) in a child process, in
// directory cwd (NULL: this one), with its stdout and stderr captured whole; and scratch-folder helpers.
// Include after harness.h.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct th_run_result {
    int    status; // exit code, -signal, or -1000 when the program could not be started
    char * out;    // never NULL after th_run
    char * err;
};

static inline void th_run_free(struct th_run_result * r) {
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

static inline struct th_run_result th_run(char * const argv[], const char * cwd) {
    struct th_run_result r = { -1000, NULL, NULL };
    char out_path[] = "/tmp/th-run-out-XXXXXX";
    char err_path[] = "/tmp/th-run-err-XXXXXX";
    const int fo = mkstemp(out_path);
    const int fe = mkstemp(err_path);
    if (fo >= 0 && fe >= 0) {
        fflush(stdout);
        fflush(stderr);
        const pid_t pid = fork();
        if (pid == 0) {
            if (cwd && chdir(cwd) != 0) {
                _exit(126);
            }
            dup2(fo, 1);
            dup2(fe, 2);
            execv(argv[0], argv);
            _exit(127);
        }
        int st = 0;
        if (pid > 0 && waitpid(pid, &st, 0) == pid) {
            r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
        }
        r.out = th_read_file(out_path, NULL);
        r.err = th_read_file(err_path, NULL);
    }
    if (fo >= 0) {
        close(fo);
        unlink(out_path);
    }
    if (fe >= 0) {
        close(fe);
        unlink(err_path);
    }
    if (!r.out) r.out = calloc(1, 1);
    if (!r.err) r.err = calloc(1, 1);
    return r;
}

// removes the files of dir (not subfolders), keeping dir: a test's scratch folder between cases
static inline void th_clear_dir(const char * dir) {
    DIR * d = opendir(dir);
    if (!d) {
        return;
    }
    for (struct dirent * e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

// runs a shell command line with stdout and stderr sent to the file log; its exit status (-1: not run)
static inline int th_run_shell(const char * cmd, const char * log) {
    char line[16384];
    snprintf(line, sizeof(line), "%s > '%s' 2>&1", cmd, log);
    const int rc = system(line);
    return rc == -1 ? -1 : WEXITSTATUS(rc);
}

// true if the file at path contains text
static inline bool th_file_has(const char * path, const char * text) {
    char * s = th_read_file(path, NULL);
    const bool has = s && strstr(s, text) != NULL;
    free(s);
    return has;
}
