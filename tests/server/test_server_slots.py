#!/usr/bin/env python3
"""llama-server slot save/restore/erase (POST /slots/{id}?action=...) and --cache-reuse (llama.cpp semantics).

Slot actions: without --slot-save-path every action answers 501 not_supported_error. With it, save writes the slot's
tokens and KV cells to a file in that directory (n_saved tokens, n_written bytes = the file's size on disk), erase
drops them (n_erased), restore reads them back into a slot (n_restored, n_read). A restored slot must continue as
if it had never been erased: a follow-up greedy request that extends the first one reuses the restored prefix
(timings.cache_n) and gives the tokens that a slot without any cache (cache_prompt false) gives. Bad file names,
slot ids and actions answer 400, a file that cannot be written 500 (llama.cpp answers n_written 0); an action on a
busy slot waits for it (llama.cpp defers it).

--cache-reuse N: a prompt that is the cached one with a piece cut out of the middle reuses the cached tail by
shifting its KV cells (fewer prompt tokens evaluated than with the prefix alone), and the greedy tokens equal those
of a server that evaluates the whole prompt afresh. The request field n_cache_reuse does the same per request.
"""
import argparse
import os
import sys
import tempfile
import threading
import time

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import harness  # noqa: E402  (check, finish, require)
import test_server as ts  # noqa: E402  (Server: the binary on a free loopback port)

X = "In the beginning God created the heaven and the earth. "
Y = "And the earth was without form, and void; and darkness was upon the face of the deep. "
Z = "And the Spirit of God moved upon the face of the waters. And God said,"
GREEDY = {"temperature": 0, "n_predict": 8, "return_tokens": True}


def check(cond, what, detail=None):
    if not cond and detail is not None:
        print(f"  detail of '{what}': {detail!r}"[:2000], file=sys.stderr)
    return harness.check(cond, what)


def post(srv, path, body=None, timeout=300):
    return requests.post(srv.url(path), json=body, timeout=timeout)


def completion(srv, prompt, **kw):
    r = post(srv, "/completion", dict(GREEDY, prompt=prompt, **kw))
    if r.status_code != 200:
        check(False, f"completion {prompt[:30]!r}: 200", r.text[:300])
        return {"tokens": None, "timings": {}}
    return r.json()


def n_tokens(srv, text):
    return len(post(srv, "/tokenize", {"content": text, "add_special": True}).json()["tokens"])


def error_of(r):
    try:
        return r.status_code, r.json()["error"]["type"], r.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return r.status_code, None, r.text[:200]


def test_not_enabled(binary, model):
    srv = ts.Server(binary, ["-m", model, "-c", "256", "-np", "1", "-t", "2"]).start()
    try:
        for action in ("save", "restore", "erase"):
            st, ty, msg = error_of(post(srv, f"/slots/0?action={action}", {"filename": "x.bin"}))
            check(st == 501 and ty == "not_supported_error" and "--slot-save-path" in msg,
                  f"no --slot-save-path: {action} answers 501", (st, ty, msg))
    finally:
        srv.stop()


def test_save_restore(binary, model, save_dir):
    srv = ts.Server(binary, ["-m", model, "-c", "512", "-np", "2", "-t", "2", "--slot-save-path", save_dir]).start()
    try:
        a = completion(srv, X, id_slot=0)
        n_prompt_a = n_tokens(srv, X)
        # the slot holds the prompt and every generated token but the last (sampled, never decoded)
        n_cached = n_prompt_a + len(a["tokens"] or []) - 1
        r = post(srv, "/slots/0?action=save", {"filename": "slot0.bin"})
        sv = r.json() if r.status_code == 200 else {}
        path = os.path.join(save_dir, "slot0.bin")
        size = os.path.getsize(path) if os.path.exists(path) else -1
        check(r.status_code == 200 and sv.get("id_slot") == 0 and sv.get("filename") == "slot0.bin" and
              sv.get("n_saved") == n_cached and sv.get("n_written") == size and size > 0 and
              isinstance(sv.get("timings", {}).get("save_ms"), float),
              "save: id_slot, filename, n_saved = cached tokens, n_written = file size, timings.save_ms",
              (r.status_code, sv, n_cached, size))

        # the follow-up: the first request's prompt and output plus more text, greedy
        b_prompt = X + (a.get("content") or "") + " " + Z
        fresh = completion(srv, b_prompt, id_slot=1, cache_prompt=False)

        r = post(srv, "/slots/0?action=erase")
        check(r.status_code == 200 and r.json() == {"id_slot": 0, "n_erased": n_cached},
              "erase: id_slot, n_erased = cached tokens", (r.status_code, r.text[:200]))
        # erased: nothing is reused on slot 0 (slot 1 keeps its own cache)
        b_erased = completion(srv, b_prompt, id_slot=0)
        check(b_erased["timings"].get("cache_n") == 0, "after erase: no cached prefix", b_erased["timings"])

        r = post(srv, "/slots/0?action=restore", {"filename": "slot0.bin"})
        rs = r.json() if r.status_code == 200 else {}
        check(r.status_code == 200 and rs.get("id_slot") == 0 and rs.get("filename") == "slot0.bin" and
              rs.get("n_restored") == n_cached and rs.get("n_read") == size and
              isinstance(rs.get("timings", {}).get("restore_ms"), float),
              "restore: id_slot, filename, n_restored = n_saved, n_read = file size, timings.restore_ms",
              (r.status_code, rs))
        b = completion(srv, b_prompt, id_slot=0, cache_prompt=True)
        tm = b["timings"]
        check(tm.get("cache_n", 0) >= n_prompt_a and tm.get("prompt_n", 10 ** 9) < n_tokens(srv, b_prompt) - n_prompt_a,
              "after restore: the restored prefix is reused (cache_n >= first prompt, prompt_n small)", tm)
        check(b["tokens"] and b["tokens"] == fresh["tokens"] == b_erased["tokens"],
              "after restore: same greedy tokens as a slot without cache", (b["tokens"], fresh["tokens"]))

        # the file restores into another slot too
        r = post(srv, "/slots/1?action=restore", {"filename": "slot0.bin"})
        b1 = completion(srv, b_prompt, id_slot=1)
        check(r.status_code == 200 and b1["timings"].get("cache_n", 0) >= n_prompt_a and
              b1["tokens"] == fresh["tokens"],
              "restore into slot 1: prefix reused, same tokens", (r.status_code, b1["timings"], b1["tokens"]))

        # bad input: 400 with llama.cpp's messages, nothing written outside the directory
        for name in ["../escape.bin", "a/b.bin", "..", ".", "", " lead.bin", "trail.bin.", "a\\b", "x\x01.bin", 12]:
            st, ty, msg = error_of(post(srv, "/slots/0?action=save", {"filename": name}))
            check(st == 400 and ty == "invalid_request_error", f"save filename {name!r}: 400", (st, ty, msg))
        check(not os.path.exists(os.path.join(os.path.dirname(save_dir), "escape.bin")), "no file outside the path")
        st, ty, msg = error_of(post(srv, "/slots/0?action=save", {}))
        check(st == 400, "save without filename: 400", (st, msg))
        for sid in ["2", "-1", "abc", "1x"]:
            st, ty, msg = error_of(post(srv, f"/slots/{sid}?action=save", {"filename": "s.bin"}))
            check(st == 400 and msg == "Invalid slot ID", f"slot id {sid!r}: 400 Invalid slot ID", (st, msg))
        for q in ["?action=bogus", ""]:
            st, ty, msg = error_of(post(srv, f"/slots/0{q}", {"filename": "s.bin"}))
            check(st == 400 and msg == "Invalid action", f"action {q!r}: 400 Invalid action", (st, msg))
        # a file that cannot be written (the name is a directory): an error, not llama.cpp's n_written 0
        os.mkdir(os.path.join(save_dir, "subdir"))
        st, ty, msg = error_of(post(srv, "/slots/0?action=save", {"filename": "subdir"}))
        check(st == 500 and ty == "server_error", "save to an unwritable file: 500", (st, ty, msg))
        st, ty, msg = error_of(post(srv, "/slots/0?action=restore", {"filename": "missing.bin"}))
        check(st == 400 and "Unable to restore slot" in msg, "restore of a missing file: 400", (st, msg))
        with open(os.path.join(save_dir, "garbage.bin"), "wb") as f:
            f.write(b"ggsq" + os.urandom(200))
        st, ty, msg = error_of(post(srv, "/slots/0?action=restore", {"filename": "garbage.bin"}))
        check(st == 400 and "Unable to restore slot" in msg, "restore of a garbage file: 400", (st, msg))
        after = completion(srv, X, id_slot=0)
        check(after["tokens"] == a["tokens"], "after a failed restore the slot works (same tokens)", after["tokens"])

        # a busy slot: the save waits for the running request and then saves all of it
        body = {"prompt": X, "temperature": 0, "n_predict": 48, "id_slot": 0, "cache_prompt": False}
        out = {}
        th = threading.Thread(target=lambda: out.update(r=post(srv, "/completion", body)))
        th.start()
        deadline = time.monotonic() + 60
        busy = False
        while th.is_alive() and time.monotonic() < deadline and not busy:
            busy = requests.get(srv.url("/slots"), timeout=30).json()[0].get("is_processing")
            time.sleep(0.005)
        r = post(srv, "/slots/0?action=save", {"filename": "busy.bin"})
        th.join()
        gen = out["r"].json() if out.get("r") is not None and out["r"].status_code == 200 else {}
        n_all = n_prompt_a + gen.get("tokens_predicted", 0) - 1
        check(busy and r.status_code == 200 and r.json().get("n_saved") == n_all,
              "save on a busy slot waits for the request and saves all its tokens",
              (busy, r.status_code, r.text[:200], gen.get("tokens_predicted")))
    finally:
        srv.stop()


def test_cache_reuse(binary, model):
    base = ["-m", model, "-c", "512", "-np", "1", "-t", "2"]
    full, cut = X + Y + Z, X + Z
    srv = ts.Server(binary, base).start()
    try:
        fresh = completion(srv, cut, cache_prompt=False)
        n_x, n_cut = n_tokens(srv, X), n_tokens(srv, cut)
        completion(srv, full)
        plain = completion(srv, cut)  # prefix only
        completion(srv, full)
        per_req = completion(srv, cut, n_cache_reuse=4)  # the request's own n_cache_reuse
    finally:
        srv.stop()
    srv = ts.Server(binary, base + ["--cache-reuse", "4"]).start()
    try:
        completion(srv, full)
        reuse = completion(srv, cut)
        completion(srv, full)
        off = completion(srv, cut, n_cache_reuse=0)  # the request turns it off
    finally:
        srv.stop()
    tp, tr = plain["timings"], reuse["timings"]
    check(tp.get("cache_n") is not None and tp["cache_n"] <= n_x + 1 and tp.get("prompt_n", 0) >= n_cut - n_x - 1,
          "no --cache-reuse: only the common prefix is reused", tp)
    check(tr.get("prompt_n", 10 ** 9) < tp.get("prompt_n", 0) and tr.get("cache_n", 0) > tp.get("cache_n", 10 ** 9),
          "--cache-reuse 4: the tail chunk is reused (prompt_n smaller, cache_n larger)", (tp, tr))
    check(any("reusing chunk" in line for line in srv.log), "--cache-reuse: the shift is logged")
    check(fresh["tokens"] and reuse["tokens"] == fresh["tokens"] and plain["tokens"] == fresh["tokens"],
          "--cache-reuse: same greedy tokens as a fresh evaluation", (fresh["tokens"], reuse["tokens"]))
    check(per_req["tokens"] == fresh["tokens"] and per_req["timings"].get("prompt_n") == tr.get("prompt_n"),
          "request n_cache_reuse 4: reuses the tail as --cache-reuse does", per_req["timings"])
    check(off["tokens"] == fresh["tokens"] and off["timings"].get("prompt_n") == tp.get("prompt_n"),
          "request n_cache_reuse 0 on a --cache-reuse server: prefix only", off["timings"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    _, model = ts.data_and_model(args.data)
    harness.require(model)
    def body():
        test_not_enabled(args.server, model)
        with tempfile.TemporaryDirectory(prefix="llama-slots-") as parent:
            save_dir = os.path.join(parent, "slots")
            os.mkdir(save_dir)
            rc, _, err = harness.run([args.server, "-m", model, "--slot-save-path", os.path.join(parent, "nope")],
                                     timeout=60)
            check(rc != 0 and "not a directory" in err, "--slot-save-path to a missing directory: error exit",
                  (rc, err[-200:]))
            test_save_restore(args.server, model, save_dir)
        test_cache_reuse(args.server, model)

    harness.run_guarded(body, ts.kill_all)


if __name__ == "__main__":
    main()
