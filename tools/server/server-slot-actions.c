// POST /slots/{id_slot}?action=save|restore|erase (llama.cpp's slot actions): a slot's prompt cache, the tokens of
// its sequence and their KV cells, written to or read from a file in --slot-save-path, or dropped. The HTTP thread
// checks the request and posts a SLOT_ACTION task; the inference thread runs it once the slot is idle (an action
// on a busy slot waits for it, as llama.cpp defers it).
#include "server-context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the next UTF-8 code point of s[*i..n), advancing *i; -1 on an invalid sequence (overlong, surrogate, > U+10FFFF)
static long utf8_next(const unsigned char * s, size_t n, size_t * i) {
    const unsigned char c = s[*i];
    int len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || *i + (size_t) len > n) {
        return -1;
    }
    long cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; k < len; k++) {
        if ((s[*i + (size_t) k] & 0xC0) != 0x80) {
            return -1;
        }
        cp = (cp << 6) | (s[*i + (size_t) k] & 0x3F);
    }
    static const long min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return -1;
    }
    *i += (size_t) len;
    return cp;
}

// llama.cpp's fs_validate_filename: one plain file name that means the same file on every platform. No path
// separators or other reserved characters, no control characters, no "..", no leading/trailing space, no
// trailing dot, valid UTF-8, at most 255 bytes.
static bool filename_valid(const char * name, size_t n) {
    if (n == 0 || n > 255 || strlen(name) != n) {
        return false;
    }
    const unsigned char * s = (const unsigned char *) name;
    size_t i = 0;
    while (i < n) {
        const long cp = utf8_next(s, n, &i);
        if (cp < 0 || cp <= 0x1F || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||
            cp == 0xFF0E || cp == 0x2215 || cp == 0x2216 || cp == 0xFEFF || // look-alike dot and slashes, BOM
            (cp < 0x80 && strchr("/\\:*?\"<>|", (int) cp))) {
            return false;
        }
    }
    if (name[0] == ' ' || name[n - 1] == ' ' || name[n - 1] == '.' || strstr(name, "..") || strcmp(name, ".") == 0) {
        return false;
    }
    return true;
}

void server_handle_slot_action(const struct server_http_req * req, struct server_http_res * res, void * ud) {
    struct server_context * sc = ud;
    if (!sc->params.slot_save_path || !sc->params.slot_save_path[0]) {
        server_res_err(res, "This server does not support slots action. Start it with `--slot-save-path`",
                       ERROR_TYPE_NOT_SUPPORTED);
        return;
    }
    // the id is the path's last segment ("/slots/:id_slot"): a decimal number of an existing slot
    const char * seg = strrchr(req->path, '/');
    seg = seg ? seg + 1 : "";
    char * end = NULL;
    const long id_slot = strtol(seg, &end, 10);
    if (!*seg || *end || id_slot < 0 || id_slot >= sc->n_slots) {
        server_res_err(res, "Invalid slot ID", ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    const char * action = server_http_req_query(req, "action");
    action = action ? action : "";
    const bool is_erase = strcmp(action, "erase") == 0;
    if (!is_erase && strcmp(action, "save") != 0 && strcmp(action, "restore") != 0) {
        server_res_err(res, "Invalid action", ERROR_TYPE_INVALID_REQUEST);
        return;
    }
    json_t * data = NULL;
    if (is_erase) {
        data = json_pack("{s:s}", "action", action);
    } else {
        json_t * body = server_parse_body(req, res);
        if (!body) {
            return;
        }
        const char * filename = NULL;
        size_t len = 0;
        struct sj_err err = { { 0 } };
        if (!sj_get_str(body, "filename", &filename, &len, &err) || !filename) {
            server_res_err(res, err.msg[0] ? err.msg : "\"filename\" is required", ERROR_TYPE_INVALID_REQUEST);
            json_decref(body);
            return;
        }
        if (!filename_valid(filename, len)) {
            server_res_err(res, "Invalid filename", ERROR_TYPE_INVALID_REQUEST);
            json_decref(body);
            return;
        }
        // --slot-save-path names a directory; llama.cpp appends the separator when it is missing
        const char * dir = sc->params.slot_save_path;
        const size_t nd = strlen(dir);
        const bool sep = dir[nd - 1] == '/';
        char * path = malloc(nd + 1 + len + 1);
        if (path) {
            snprintf(path, nd + 1 + len + 1, "%s%s%s", dir, sep ? "" : "/", filename);
            data = json_pack("{s:s, s:s, s:s}", "action", action, "filename", filename, "filepath", path);
            free(path);
        }
        json_decref(body);
    }
    struct server_task * t = data ? server_task_new(SERVER_TASK_TYPE_SLOT_ACTION) : NULL;
    if (!t) {
        json_decref(data);
        server_res_err(res, "out of memory", ERROR_TYPE_SERVER);
        return;
    }
    t->data    = data;
    t->id_slot = (int) id_slot;
    server_respond_task(sc, t, req, res);
}

bool server_process_slot_action(struct server_context * sc, struct server_task * t) {
    struct server_slot * s = &sc->slots[t->id_slot];
    if (s->state != SLOT_STATE_IDLE) {
        return false;
    }
    const char * action   = json_string_value(json_object_get(t->data, "action"));
    const char * filename = json_string_value(json_object_get(t->data, "filename"));
    const char * filepath = json_string_value(json_object_get(t->data, "filepath"));
    llama_memory_t mem = llama_get_memory(sc->ctx);
    const int64_t t0 = server_now_us();
    if (strcmp(action, "erase") == 0) {
        const int n_erased = s->n_cache;
        llama_memory_seq_rm(mem, s->id, -1, -1);
        s->n_cache = 0;
        server_task_complete(t, json_pack("{s:i, s:i}", "id_slot", s->id, "n_erased", n_erased), 200);
        return true;
    }
    if (strcmp(action, "save") == 0) {
        const size_t n_written = llama_state_seq_save_file(sc->ctx, filepath, s->id, s->cache, (size_t) s->n_cache);
        if (n_written == 0) {
            // llama.cpp reports n_written 0 here; a save that wrote nothing is an error the client should see
            SRV_ERR("%s: failed to save slot %d to '%s'\n", __func__, s->id, filepath);
            server_task_fail(t, "Unable to save slot: the file could not be written", ERROR_TYPE_SERVER);
            return true;
        }
        const double ms = (double) (server_now_us() - t0) / 1e3;
        server_task_complete(t, json_pack("{s:i, s:s, s:i, s:I, s:{s:f}}", "id_slot", s->id, "filename", filename,
                                          "n_saved", s->n_cache, "n_written", (json_int_t) n_written,
                                          "timings", "save_ms", ms), 200);
        return true;
    }
    // restore: the file's tokens replace the slot's list, its cells the sequence's (a slot holds at most n_ctx)
    if (s->cap_cache < s->n_ctx) {
        llama_token * nc = realloc(s->cache, (size_t) s->n_ctx * sizeof(llama_token));
        if (!nc) {
            server_task_fail(t, "out of memory", ERROR_TYPE_SERVER);
            return true;
        }
        s->cache = nc;
        s->cap_cache = s->n_ctx;
    }
    size_t n_tokens = 0;
    const size_t n_read = llama_state_seq_load_file(sc->ctx, filepath, s->id, s->cache, (size_t) s->n_ctx, &n_tokens);
    if (n_read == 0) {
        // the sequence may have been cleared before the data was found unusable
        llama_memory_seq_rm(mem, s->id, -1, -1);
        s->n_cache = 0;
        server_task_fail(t, "Unable to restore slot, no available space in KV cache or invalid slot save file",
                       ERROR_TYPE_INVALID_REQUEST);
        return true;
    }
    s->n_cache = (int) n_tokens;
    const double ms = (double) (server_now_us() - t0) / 1e3;
    server_task_complete(t, json_pack("{s:i, s:s, s:i, s:I, s:{s:f}}", "id_slot", s->id, "filename", filename,
                                      "n_restored", s->n_cache, "n_read", (json_int_t) n_read,
                                      "timings", "restore_ms", ms), 200);
    return true;
}
