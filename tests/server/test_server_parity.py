#!/usr/bin/env python3
"""llama-server parity with llama.cpp (issue #9): flags, the native stream's final event, /props and /v1/models.

- The server's flags are common/arg.c's (LLAMA_EXAMPLE_SERVER) and parsed by common_params_parse: --help lists
  them, -n / --keep set the request defaults, -np -1 is the automatic 4 slots, LLAMA_ARG_* variables work.
- Streamed /completion: each partial event carries its token and its completion_probabilities; the final event
  (llama.cpp's to_json_non_oaicompat with stream) repeats neither text, tokens nor probabilities. The expected
  values are the same request without streaming.
- /props and /v1/models carry the fields of llama.cpp's current server (get_props / the model list), with values
  that follow from the command line and the model file.
"""
import argparse
import concurrent.futures
import json
import os
import sys

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import harness  # noqa: E402  (check, finish, require, run)
import test_server as ts  # noqa: E402  (Server: the binary on a free loopback port)

N_CTX = 128
PROMPT = "In the beginning God created the heaven and the earth."


def check(cond, what, detail=None):
    if not cond and detail is not None:
        print(f"  detail of '{what}': {detail!r}"[:2000], file=sys.stderr)
    return harness.check(cond, what)


def post(srv, body, path="/completion"):
    return requests.post(srv.url(path), json=body, timeout=300)


def test_flags(binary, model):
    """Server flags come from common/arg.c: --help lists them, the request defaults follow -n / --keep, env vars."""
    rc, out, err = harness.run([binary, "--help"], timeout=60)
    for flag in ("--context-shift", "--keep", "--api-key", "--api-key-file", "--metrics", "--slots", "--no-slots",
                 "--props", "--alias", "--host", "--port", "--threads-http", "--timeout", "--chat-template",
                 "--spec-type", "--spec-draft-n-max", "--model-draft", "--backend-sampling", "--cont-batching",
                 "--embedding", "--pooling", "--n-predict", "--parallel"):
        check(rc == 0 and flag in out, f"--help lists {flag}", (rc, err[-200:]))
    srv = ts.Server(binary, ["-m", model, "-c", str(N_CTX), "-np", "-1", "-t", "2", "-n", "7", "--keep", "5",
                             "-a", "kjv-b,kjv-a", "--no-cont-batching", "--temp", "0.25", "--top-k", "3", "-s", "42",
                             "--repeat-penalty", "1.5"]).start()
    try:
        props = requests.get(srv.url("/props"), timeout=10).json()
        dgs = props.get("default_generation_settings", {})
        check(props.get("total_slots") == 4, "-np -1: automatic 4 slots", props.get("total_slots"))
        check(dgs.get("params", {}).get("n_predict") == 7 and dgs.get("params", {}).get("n_keep") == 5,
              "/props defaults follow -n and --keep", dgs.get("params"))
        gp = dgs.get("params", {})
        check(abs(gp.get("temperature", 0) - 0.25) < 1e-6 and gp.get("top_k") == 3 and gp.get("seed") == 42 and
              abs(gp.get("repeat_penalty", 0) - 1.5) < 1e-6, "/props defaults follow the sampling options", gp)
        # the command line's sampling options are the request defaults: an explicit request with the same values
        # gives the same tokens
        r1 = post(srv, {"prompt": PROMPT, "n_predict": 12, "return_tokens": True})
        r2 = post(srv, {"prompt": PROMPT, "n_predict": 12, "return_tokens": True, "temperature": 0.25, "top_k": 3,
                        "seed": 42, "repeat_penalty": 1.5})
        gs = r1.json().get("generation_settings", {})
        check(r1.json().get("tokens") == r2.json().get("tokens") and gs.get("top_k") == 3 and gs.get("seed") == 42,
              "requests default to the command line's sampling options", (r1.text[:200], r2.text[:200]))
        r = post(srv, {"prompt": PROMPT})
        check(r.status_code == 200 and r.json()["tokens_predicted"] == 7, "-n: the default n_predict", r.text[:200])
        # -nocb: a prompt waits for a batch without generating tokens; concurrent requests still all complete
        reqs = [{"prompt": PROMPT[:20 + 5 * i], "temperature": 0, "n_predict": 8} for i in range(3)]
        alone = [post(srv, q).json().get("content") for q in reqs]
        with concurrent.futures.ThreadPoolExecutor(3) as ex:
            together = [r.json().get("content") for r in ex.map(lambda q: post(srv, q), reqs)]
        check(together == alone and all(alone), "-nocb: concurrent requests give the texts of lone ones",
              (together, alone))
        models = requests.get(srv.url("/v1/models"), timeout=10).json()
        check(models["data"][0]["id"] == "kjv-a", "-a: smallest alias is the model id", models["data"][0])
        check(requests.get(srv.url("/metrics"), timeout=10).status_code == 501, "/metrics off by default")
    finally:
        srv.stop()
    # a flag's environment variable, as llama.cpp (LLAMA_ARG_ENDPOINT_METRICS for --metrics)
    env_before = os.environ.get("LLAMA_ARG_ENDPOINT_METRICS")
    os.environ["LLAMA_ARG_ENDPOINT_METRICS"] = "1"
    try:
        srv = ts.Server(binary, ["-m", model, "-c", str(N_CTX), "-np", "1", "-t", "2"]).start()
    finally:
        if env_before is None:
            del os.environ["LLAMA_ARG_ENDPOINT_METRICS"]
        else:
            os.environ["LLAMA_ARG_ENDPOINT_METRICS"] = env_before
    try:
        check(requests.get(srv.url("/metrics"), timeout=10).status_code == 200, "LLAMA_ARG_ENDPOINT_METRICS=1")
    finally:
        srv.stop()
    rc, _, err = harness.run([binary, "-m", model, "-np", "0"], timeout=60)
    check(rc != 0 and "-np" in err, "-np 0 rejected", (rc, err[-200:]))
    rc, _, err = harness.run([binary, "-m", model, "--keep", "-2"], timeout=60)
    check(rc != 0 and "--keep" in err, "--keep -2 rejected", (rc, err[-200:]))
    rc, _, err = harness.run([binary, "--port", "0"], timeout=60)
    check(rc != 0 and "no model" in err, "no -m: error", (rc, err[-200:]))


def stream_events(srv, body):
    r = requests.post(srv.url("/completion"), json=dict(body, stream=True), stream=True, timeout=300)
    lines = [line for line in r.iter_lines(decode_unicode=True) if line]
    return r.status_code, [json.loads(line[6:]) for line in lines if line.startswith("data: ")]


def test_stream_final(srv):
    body = {"prompt": PROMPT, "n_predict": 6, "temperature": 0, "n_probs": 3, "return_tokens": True}
    plain = post(srv, body).json()
    status, events = stream_events(srv, body)
    if not check(status == 200 and len(events) >= 2, "stream: events", (status, len(events))):
        return
    partial, final = events[:-1], events[-1]
    check(all(e.get("stop") is False for e in partial) and final.get("stop") is True, "stream: stop flags",
          [e.get("stop") for e in events])
    check("".join(e.get("content", "") for e in partial) == plain["content"], "stream: text == non-stream text",
          ("".join(e.get("content", "") for e in partial), plain["content"]))
    check([t for e in partial for t in e.get("tokens", [])] == plain["tokens"], "stream: tokens == non-stream tokens")
    probs = [p for e in partial for p in e.get("completion_probabilities", [])]
    check([p["id"] for p in probs] == [p["id"] for p in plain["completion_probabilities"]] and len(probs) == 6,
          "stream: probabilities ride on the partial events", (len(probs), len(plain["completion_probabilities"])))
    # llama.cpp: "in stream mode, content and tokens are already in last partial chunk"; probabilities only
    # without stream
    check("completion_probabilities" not in final, "stream final: no completion_probabilities", sorted(final))
    check(final.get("content") == "" and final.get("tokens") == [], "stream final: no text, no tokens",
          (final.get("content"), final.get("tokens")))
    check(final.get("tokens_predicted") == 6 and final.get("stop_type") == "limit" and "timings" in final and
          "generation_settings" in final, "stream final: the summary fields", sorted(final))
    # without n_probs there is no probabilities field anywhere
    status, events = stream_events(srv, {"prompt": PROMPT, "n_predict": 3})
    check(status == 200 and all("completion_probabilities" not in e for e in events), "stream without n_probs")
    plain = post(srv, {"prompt": PROMPT, "n_predict": 3}).json()
    check("completion_probabilities" not in plain, "non-stream without n_probs: no probabilities field")


PROPS_KEYS = {"default_generation_settings", "total_slots", "model_alias", "model_ftype", "model_path", "modalities",
              "endpoint_slots", "endpoint_props", "endpoint_metrics", "chat_template", "chat_template_caps",
              "bos_token", "eos_token", "build_info", "is_sleeping"}


def test_props_models(srv, model):
    p = requests.get(srv.url("/props"), timeout=10).json()
    check(PROPS_KEYS <= set(p), "props: llama.cpp's fields", sorted(PROPS_KEYS - set(p)))
    check(p.get("modalities") == {"vision": False, "video": False, "audio": False}, "props: no multimodal input",
          p.get("modalities"))
    check(p.get("total_slots") == 2 and p.get("model_path") == model, "props: total_slots, model_path",
          (p.get("total_slots"), p.get("model_path")))
    # the KJV target is stored in F32 (the file's general.file_type)
    check(isinstance(p.get("model_ftype"), str) and "F32" in p.get("model_ftype", ""), "props: model_ftype",
          p.get("model_ftype"))
    dgs = p.get("default_generation_settings", {})
    check(dgs.get("n_ctx") == N_CTX // 2 and isinstance(dgs.get("params"), dict), "props: per-slot n_ctx, params",
          dgs.get("n_ctx"))
    check(p.get("endpoint_props") is True and p.get("endpoint_metrics") is False and p.get("endpoint_slots") is False,
          "props: endpoint flags from --props --no-slots", p)
    m = requests.get(srv.url("/v1/models"), timeout=10).json()
    d = (m.get("data") or [{}])[0]
    check(m.get("object") == "list" and {"id", "aliases", "tags", "object", "created", "owned_by", "meta"} <= set(d),
          "v1/models: data fields", sorted(d))
    meta = d.get("meta") or {}
    check({"vocab_type", "n_vocab", "n_ctx", "n_ctx_train", "n_embd", "n_params", "size", "ftype"} <= set(meta) and
          meta.get("n_ctx") == N_CTX // 2 and meta.get("ftype") == p.get("model_ftype"), "v1/models: meta", meta)
    check(d.get("id") == "kjv" and d.get("aliases") == ["kjv"] and p.get("model_alias") == "kjv",
          "-a: id, aliases, model_alias", (d.get("id"), d.get("aliases"), p.get("model_alias")))
    mm = (m.get("models") or [{}])[0]
    check(mm.get("name") == "kjv" and mm.get("capabilities") == ["completion"], "models: the ollama-style entry", mm)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    _, model = ts.data_and_model(args.data)
    harness.require(model)
    def body():
        srv = ts.Server(args.server, ["-m", model, "-c", str(N_CTX), "-np", "2", "-t", "2", "--props", "--no-slots",
                                      "-a", "kjv"]).start()
        try:
            test_stream_final(srv)
            test_props_models(srv, model)
        finally:
            srv.stop()
        test_flags(args.server, model)

    harness.run_guarded(body, ts.kill_all)


if __name__ == "__main__":
    main()
