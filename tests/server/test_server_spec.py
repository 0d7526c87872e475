#!/usr/bin/env python3
"""llama-server speculative decoding per slot and backend sampling per slot.

The property under test is llama.cpp's (tools/server/tests/unit/test_speculative.py::test_with_and_without_draft):
for a fixed seed, a server with a draft (draft model or n-grams) returns exactly the tokens of a server without
one, for stochastic and greedy sampling, with and without --backend-sampling, and a seeded request gives the same
tokens alone and beside concurrent requests. Every expectation compares two configurations of the server with each
other (so no expected value is produced by the code under test), plus draft counters that must be positive when a
draft was verified. Uses the KJV target and draft models (same tokenizer) from LLAMA_TEST_DATA.
"""
import argparse
import json
import os
import sys
import threading

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import harness  # noqa: E402  (check, finish, require, run)
import test_server as ts  # noqa: E402  (Server: the binary on a free loopback port)



def check(cond, what, detail=None):
    """harness.check, printing detail (the values compared) on failure."""
    if not cond and detail is not None:
        print(f"  detail of '{what}': {detail!r}"[:2000], file=sys.stderr)
    return harness.check(cond, what)


SEED_REQUEST = {"prompt": "In the beginning", "temperature": 0.8, "top_k": 40, "seed": 4242, "n_predict": 16,
                "return_tokens": True}


def post(srv, body, path="/completion", **kw):
    return requests.post(srv.url(path), json=body, timeout=300, **kw)


class Servers:
    """Starts llama-server with the common arguments (-m TARGET -t N) plus the given ones."""

    def __init__(self, binary, target, threads):
        self.binary = binary
        self.base = ["-m", target, "-t", threads]

    def start(self, args):
        return ts.Server(self.binary, self.base + args).start()


def completion(srv, body):
    r = post(srv, body)
    if r.status_code != 200:
        check(False, f"POST /completion {json.dumps(body)[:80]}: 200", r.text[:300])
        return {}
    return r.json()


def slot_backend_sampling(srv, result):
    """params.backend_sampling of the slot that served result (its last request), from GET /slots."""
    for s in requests.get(srv.url("/slots"), timeout=30).json():
        if s.get("id") == result.get("id_slot"):
            return s.get("params", {}).get("backend_sampling")
    return None


def test_with_and_without_draft(sv, draft):
    # the seed's test: stochastic sampling, backend sampling, with and without a draft model
    plain = sv.start(["-c", "1024", "--backend-sampling"])
    try:
        b0 = completion(plain, SEED_REQUEST)
        greedy0 = completion(plain, {"prompt": "And God said", "temperature": 0, "n_predict": 24,
                                     "return_tokens": True})
        props = requests.get(plain.url("/props"), timeout=30).json()
        slots = requests.get(plain.url("/slots"), timeout=30).json()
        check(all(s.get("speculative") is False for s in slots), "/slots: no draft -> speculative false",
              [s.get("speculative") for s in slots])
        check(props["default_generation_settings"]["params"].get("backend_sampling") is True,
              "/props: backend_sampling true with --backend-sampling")
    finally:
        plain.stop()
    spec = sv.start(["-c", "1024", "--backend-sampling", "-md", draft, "--spec-draft-n-max", "5"])
    try:
        b1 = completion(spec, SEED_REQUEST)
        used = slot_backend_sampling(spec, b1)
        check(used is True, "/slots: the request ran with backend sampling", used)
        probs = completion(spec, dict(SEED_REQUEST, n_probs=2))
        used = slot_backend_sampling(spec, probs)
        # pre-sampling probabilities need the full logits: such a request samples on the CPU (as llama.cpp)
        check(used is False and probs.get("tokens") == b0.get("tokens"),
              "n_probs request: CPU sampling, same tokens", (used, probs.get("tokens")))
        greedy1 = completion(spec, {"prompt": "And God said", "temperature": 0, "n_predict": 24,
                                    "return_tokens": True})
        props = requests.get(spec.url("/props"), timeout=30).json()
        slots = requests.get(spec.url("/slots"), timeout=30).json()
        # a request may narrow the draft: n_max 0 turns it off, and the tokens stay the same
        off = completion(spec, dict(SEED_REQUEST, **{"speculative.n_max": 0}))
        two = completion(spec, dict(SEED_REQUEST, **{"speculative.n_max": 2}))
        # another p_min rebuilds the slot's drafter; its draft sampler must stay on the backend and agree
        pmin = completion(spec, dict(SEED_REQUEST, **{"speculative.p_min": 0.3}))
    finally:
        spec.stop()
    # --spec-draft-backend-sampling is the default: the draft model's top-k chain runs in the draft graph
    check(any("draft sampling on the backend" in line for line in spec.log), "draft sampler on the backend by default",
          [line for line in spec.log if "draft sampling" in line])
    check(pmin.get("tokens") == b0.get("tokens") and pmin.get("timings", {}).get("draft_n", 0) > 0,
          "request speculative.p_min 0.3 (drafter rebuilt): same tokens", (pmin.get("tokens"), pmin.get("timings")))

    t0, t1 = b0.get("tokens"), b1.get("tokens")
    check(t0 is not None and len(t0) == 16, "no draft: 16 tokens", t0)
    check(t1 == t0, "stochastic + backend sampling: same tokens with and without the draft model", (t0, t1))
    tm = b1.get("timings", {})
    check(tm.get("draft_n", 0) > 0, "draft run: timings.draft_n > 0", tm)
    check(0 <= tm.get("draft_n_accepted", -1) <= tm.get("draft_n", 0), "0 <= draft_n_accepted <= draft_n", tm)
    check(b0.get("timings", {}).get("draft_n") == 0, "no draft: timings.draft_n == 0", b0.get("timings"))
    check(b1.get("content") == b0.get("content"), "same content with and without the draft")

    g0, g1 = greedy0.get("tokens"), greedy1.get("tokens")
    check(g0 is not None and len(g0) == 24 and g1 == g0, "greedy: same tokens with and without the draft", (g0, g1))
    gt = greedy1.get("timings", {})
    # the KJV draft model was trained on the same text: greedy drafts of it are mostly right
    check(gt.get("draft_n_accepted", 0) > 0, "greedy: some draft tokens accepted", gt)
    check(greedy1.get("tokens_predicted") == 24, "greedy draft run: exactly n_predict tokens",
          greedy1.get("tokens_predicted"))

    check(all(s.get("speculative") is True for s in slots), "/slots: draft model -> speculative true",
          [s.get("speculative") for s in slots])
    params = props.get("default_generation_settings", {}).get("params", {})
    check(params.get("speculative.n_max") == 5, "/props: speculative.n_max == --spec-draft-n-max", params)
    check(off.get("tokens") == t0 and off.get("timings", {}).get("draft_n") == 0,
          "request speculative.n_max 0: no draft, same tokens", off.get("timings"))
    check(two.get("tokens") == t0 and 0 < two.get("timings", {}).get("draft_n", 0),
          "request speculative.n_max 2: same tokens", two.get("timings"))
    return b0, greedy0


def test_draft_cpu_sampling(sv, draft, b0, greedy0):
    # --no-spec-draft-backend-sampling: the draft picks its tokens on the CPU; the output must not change
    spec = sv.start(["-c", "1024", "--backend-sampling", "-md", draft, "--spec-draft-n-max", "5",
                     "--no-spec-draft-backend-sampling"])
    try:
        b1 = completion(spec, SEED_REQUEST)
        greedy1 = completion(spec, {"prompt": "And God said", "temperature": 0, "n_predict": 24,
                                    "return_tokens": True})
    finally:
        spec.stop()
    check(any("draft sampling on the CPU" in line for line in spec.log) and
          not any("draft sampling on the backend" in line for line in spec.log),
          "--no-spec-draft-backend-sampling: draft sampler on the CPU",
          [line for line in spec.log if "draft sampling" in line])
    check(b1.get("tokens") == b0.get("tokens") and b1.get("timings", {}).get("draft_n", 0) > 0,
          "draft sampled on the CPU: same stochastic tokens as without a draft", (b0.get("tokens"), b1.get("tokens")))
    check(greedy1.get("tokens") == greedy0.get("tokens") and greedy1.get("timings", {}).get("draft_n_accepted", 0) > 0,
          "draft sampled on the CPU: same greedy tokens, drafts accepted",
          (greedy0.get("tokens"), greedy1.get("tokens")))


def test_cpu_sampling_draft(sv, draft):
    # without --backend-sampling the chain runs on the CPU: the draft must not change the tokens either
    req = {"prompt": "And the LORD spake unto Moses, saying", "temperature": 1.0, "top_k": 0, "top_p": 1.0,
           "min_p": 0.0, "seed": 77, "n_predict": 24, "return_tokens": True, "n_probs": 2}
    plain = sv.start(["-c", "1024"])
    try:
        a = completion(plain, req)
    finally:
        plain.stop()
    spec = sv.start(["-c", "1024", "-md", draft])
    try:
        b = completion(spec, req)
        # streamed: several tokens per step must still come out as one event per token, in order
        r = post(spec, dict(req, stream=True), stream=True)
        streamed = []
        for line in r.iter_lines():
            if line.startswith(b"data: "):
                ev = json.loads(line[6:])
                if ev.get("stop") is False:  # the final event repeats all tokens (return_tokens)
                    streamed += ev.get("tokens") or []
    finally:
        spec.stop()
    check(a.get("tokens") and b.get("tokens") == a.get("tokens"), "CPU sampling: same tokens with and without the draft",
          (a.get("tokens"), b.get("tokens")))
    check(b.get("timings", {}).get("draft_n", 0) > 0, "CPU sampling draft run: draft_n > 0", b.get("timings"))
    pa = [p.get("id") for p in a.get("completion_probabilities", [])]
    pb = [p.get("id") for p in b.get("completion_probabilities", [])]
    check(len(pa) == 24 and pa == pb, "n_probs: one entry per token, same ids with the draft", (pa, pb))
    if pa and pb:
        la = [p["logprob"] for p in a["completion_probabilities"]]
        lb = [p["logprob"] for p in b["completion_probabilities"]]
        check(max(abs(x - y) for x, y in zip(la, lb)) < 1e-3, "n_probs: same log-probabilities with the draft",
              (la, lb))
    check(streamed == a.get("tokens"), "streamed tokens with the draft == non-streamed", (streamed, a.get("tokens")))


def test_ngram_simple(sv):
    # n-gram drafting needs an earlier occurrence of the last size-n tokens: a prompt that repeats a verse
    verse = "And God said, Let there be light: and there was light. "
    req = {"prompt": verse * 4, "temperature": 0, "n_predict": 40, "return_tokens": True}
    plain = sv.start(["-c", "1024"])
    try:
        a = completion(plain, req)
    finally:
        plain.stop()
    spec = sv.start(["-c", "1024", "--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "6",
                     "--spec-ngram-simple-size-m", "8"])
    try:
        b = completion(spec, req)
        slots = requests.get(spec.url("/slots"), timeout=30).json()
    finally:
        spec.stop()
    check(a.get("tokens") and b.get("tokens") == a.get("tokens"), "ngram-simple: same tokens as without",
          (a.get("tokens"), b.get("tokens")))
    tm = b.get("timings", {})
    check(tm.get("draft_n", 0) > 0 and tm.get("draft_n_accepted", 0) > 0, "ngram-simple: drafts and accepts", tm)
    check(all(s.get("speculative") is True for s in slots), "/slots: ngram-simple -> speculative true")


def concurrent(srv, req, others):
    results = [None] * (1 + len(others))

    def one(i, body):
        results[i] = post(srv, body).json()

    th = [threading.Thread(target=one, args=(i, body)) for i, body in enumerate([req] + others)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    return results


def test_concurrent(sv, draft):
    req = {"prompt": "And the LORD spake unto Moses, saying", "n_predict": 16, "temperature": 0.8, "seed": 1234,
           "return_tokens": True, "cache_prompt": False}
    others = [{"prompt": p, "n_predict": 16, "temperature": 1.0, "seed": i, "cache_prompt": False}
              for i, p in enumerate(["In the beginning", "And God said", "Blessed are"])]
    reference = None
    for name, extra in [("cpu sampling", []), ("backend sampling", ["--backend-sampling"]),
                        ("backend sampling + draft", ["--backend-sampling", "-md", draft]),
                        ("cpu sampling + draft", ["-md", draft])]:
        srv = sv.start(["-c", "1024", "-np", "4"] + extra)
        try:
            alone = post(srv, req).json().get("tokens")
            res = concurrent(srv, req, others)
        finally:
            srv.stop()
        check(alone and res[0] and res[0].get("tokens") == alone,
              f"{name}: seeded request gives the same tokens alone and beside 3 others",
              (alone, res[0] and res[0].get("tokens")))
        check(all(r and r.get("tokens_predicted") == 16 for r in res), f"{name}: 4 concurrent requests complete",
              [r and r.get("tokens_predicted") for r in res])
        if reference is None:
            reference = alone
        check(alone == reference, f"{name}: same tokens as the first configuration", (alone, reference))


def test_bad_flags(binary, target, draft):
    rc, _, err = harness.run([binary, "-m", target, "--spec-type", "bogus"], timeout=60)
    check(rc != 0 and "spec-type" in err, "--spec-type bogus: error exit", (rc, err[-300:]))
    rc, _, err = harness.run([binary, "-m", target, "--spec-type", "draft-simple", "--port", "0"], timeout=60)
    check(rc != 0 and "draft" in err, "draft-simple without -md: error exit", (rc, err[-300:]))
    rc, _, err = harness.run([binary, "-m", target, "-md", "/nonexistent/draft.gguf", "--port", "0"], timeout=60)
    check(rc != 0 and "draft model" in err, "missing draft model: error exit", (rc, err[-300:]))
    rc, _, err = harness.run([binary, "-m", target, "--spec-draft-p-min", "2"], timeout=60)
    check(rc != 0, "--spec-draft-p-min 2: error exit", (rc, err[-300:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--data", default=None)
    ap.add_argument("--threads", default="2")
    args = ap.parse_args()
    data_dir, target = ts.data_and_model(args.data)
    draft = os.path.join(data_dir, "models", "kjv", "kjv-draft-f32.gguf")
    harness.require(target)
    harness.require(draft)
    sv = Servers(args.server, target, args.threads)
    def body():
        b0, greedy0 = test_with_and_without_draft(sv, draft)
        test_draft_cpu_sampling(sv, draft, b0, greedy0)
        test_cpu_sampling_draft(sv, draft)
        test_ngram_simple(sv)
        test_concurrent(sv, draft)
        test_bad_flags(args.server, target, draft)

    harness.run_guarded(body, ts.kill_all)


if __name__ == "__main__":
    main()
