#!/usr/bin/env python3
"""llama-server with llama.cpp's options that take effect here (common/arg.c):

--api-prefix P   every route lives under P: P/health answers, /health is 404 (llama.cpp registers api_prefix + path).
--chat-template-file F / --chat-template-kwargs J   the file's Jinja template renders /apply-template; J are the
                 template's default kwargs and a request's chat_template_kwargs override them key by key.
-sps S           a request without id_slot goes to the idle slot whose cached tokens share more than S of its prompt
                 as a prefix, else to the least recently used idle slot (llama.cpp's get_available_slot); -sps 0
                 always takes the least recently used one.
--log-file F     the server's log lines also land in F.
--path / --mmproj / -hf   refused at start-up with the reason (exit status 1), not "invalid argument".

Expected values come from the templates and prompts written here and from llama.cpp's documented rules, never from
this server's own output.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import harness  # noqa: E402  (check, finish)
import test_server as ts  # noqa: E402  (Server: the binary on a free loopback port)

P1 = "In the beginning God created the heaven and the earth. And the earth was without form, and void;"
P2 = "And God said, Let there be light: and there was light. And God saw the light, that it was good:"
MORE = " and darkness was upon the face of the deep."
GREEDY = {"temperature": 0, "n_predict": 2}


def check(cond, what, detail=None):
    if not cond and detail is not None:
        print(f"  detail of '{what}': {detail!r}"[:2000], file=sys.stderr)
    return harness.check(cond, what)


def complete(srv, prompt):
    r = requests.post(srv.url("/completion"), json=dict(GREEDY, prompt=prompt), timeout=120)
    return r.json() if r.status_code == 200 else {"status": r.status_code, "text": r.text}


def test_prefix_template_log(binary, model, tmpdir):
    tmpl = os.path.join(tmpdir, "t.jinja")
    with open(tmpl, "w") as f:
        f.write("{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}{{ greeting }}")
    log = os.path.join(tmpdir, "server.log")
    srv = ts.Server(binary, ["-m", model, "-c", "256", "-np", "1", "-t", "2", "--api-prefix", "/x",
                             "--chat-template-file", tmpl, "--chat-template-kwargs", '{"greeting":"hi"}',
                             "--log-file", log])
    srv.start(wait_healthy=False)
    try:
        ok = False
        for _ in range(600):
            try:
                if requests.get(srv.url("/x/health"), timeout=5).status_code == 200:
                    ok = True
                    break
            except requests.RequestException:
                pass
            time.sleep(0.05)
        check(ok, "--api-prefix: /x/health answers 200")
        check(requests.get(srv.url("/health"), timeout=5).status_code == 404, "--api-prefix: /health is 404")
        msgs = [{"role": "user", "content": "hello"}]
        r = requests.post(srv.url("/x/apply-template"), json={"messages": msgs}, timeout=30)
        check(r.status_code == 200 and r.json().get("prompt") == "[user:hello]hi",
              "--chat-template-file + default kwargs render /apply-template", r.text)
        r = requests.post(srv.url("/x/apply-template"),
                          json={"messages": msgs, "chat_template_kwargs": {"greeting": "yo"}}, timeout=30)
        check(r.status_code == 200 and r.json().get("prompt") == "[user:hello]yo",
              "a request's chat_template_kwargs override the defaults", r.text)
        check(requests.post(srv.url("/apply-template"), json={"messages": msgs}, timeout=30).status_code == 404,
              "--api-prefix: /apply-template without the prefix is 404")
    finally:
        rc = srv.stop()
    check(rc == 0, "prefix server: clean exit", rc)
    text = open(log, errors="replace").read() if os.path.exists(log) else ""
    check("HTTP server is listening" in text, "--log-file holds the server log", text[-500:])


def slot_order(binary, model, sps):
    srv = ts.Server(binary, ["-m", model, "-c", "512", "-np", "2", "-t", "2", "-sps", sps]).start()
    try:
        a = complete(srv, P1)
        b = complete(srv, P2)
        c = complete(srv, P2 + MORE)
        return [x.get("id_slot") for x in (a, b, c)], c
    finally:
        srv.stop()


def test_slot_similarity(binary, model):
    # A -> slot 0 (both unused: the first), B shares nothing with A -> the least recently used slot 1,
    # C extends B -> with -sps 0.5 the slot holding B (1); with -sps 0 the least recently used slot (0)
    ids, c = slot_order(binary, model, "0.5")
    check(ids == [0, 1, 1], "-sps 0.5 picks the slot with the shared prefix", ids)
    cached = c.get("timings", {}).get("cache_n", c.get("tokens_cached"))
    check(isinstance(cached, int) and cached > 0, "the similar slot's cache is reused", c.get("timings"))
    ids, _ = slot_order(binary, model, "0")
    check(ids == [0, 1, 0], "-sps 0 picks the least recently used slot", ids)


def test_refusals(binary, model):
    for args, needle in ((["--path", "/srv/www"], "no web UI"),
                         (["--mmproj", "mm.gguf"], "multimodal input"),
                         (["-hf", "ggml-org/x-GGUF"], "cannot download models"),
                         (["-sps", "2"], "invalid similarity"),
                         (["--api-prefix", "x/"], "invalid API prefix")):
        r = subprocess.run([binary, "-m", model, "--port", "0"] + args, capture_output=True, text=True, timeout=60)
        check(r.returncode == 1 and needle in r.stderr and "invalid argument" not in r.stderr,
              f"{args[0]} refused with its reason", r.stderr[-300:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    data_dir, model = ts.data_and_model(args.data)
    if not os.path.exists(model):
        return ts.missing_data(model)

    def body():
        with tempfile.TemporaryDirectory() as tmpdir:
            test_refusals(args.server, model)
            test_prefix_template_log(args.server, model, tmpdir)
            test_slot_similarity(args.server, model)

    harness.run_guarded(body, ts.kill_all)


if __name__ == "__main__":
    sys.exit(main())
