#!/usr/bin/env python3
"""llama-server --context-shift (llama.cpp semantics).

Context shift: off by default, a generating slot whose context is full stops there (stop_type "limit",
truncated). With --context-shift it keeps n_keep tokens (request "n_keep", default --keep; -1 = the whole prompt;
plus one for BOS), drops n_discard of the rest (request "n_discard", default half) and keeps generating. A prompt
that does not fit the slot is refused either way (400, exceed_context_size_error).

Coherence is checked against an independent decode: greedy decoding with a repetition penalty over a short window
(so the text does not loop), then the context the server must hold right after its first shift (computed here from
the rule above) is sent as a fresh prompt; greedy decoding from it must give the tokens the shifted run produced.
A shift that drops the wrong tokens, leaves the positions unshifted or loses the token list fails this.
"""
import argparse
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
# greedy; penalties over the last 16 tokens only: right after a shift the sampler's window (the last 16 generated
# tokens) is then also the tail of the fresh prompt, so both decodes see the same penalties
GREEDY = {"temperature": 0, "repeat_penalty": 1.5, "repeat_last_n": 16, "return_tokens": True}
N_CHECK = 12  # tokens compared after the first shift


def check(cond, what, detail=None):
    if not cond and detail is not None:
        print(f"  detail of '{what}': {detail!r}"[:2000], file=sys.stderr)
    return harness.check(cond, what)


def post(srv, body, path="/completion"):
    return requests.post(srv.url(path), json=body, timeout=300)


def prompt_tokens(srv):
    """The prompt as the completion endpoint evaluates it (with BOS when the model adds one) and that flag."""
    with_special = post(srv, {"content": PROMPT, "add_special": True}, "/tokenize").json()["tokens"]
    plain = post(srv, {"content": PROMPT, "add_special": False}, "/tokenize").json()["tokens"]
    return with_special, len(with_special) == len(plain) + 1


def first_shift_context(full, n_prompt, add_bos, n_keep_req, n_discard_req):
    """The tokens the slot holds after its first shift plus the pending sampled token (llama.cpp's rule)."""
    n_cache = N_CTX - 1  # the shift happens when n_cache + 1 >= n_ctx
    n_keep = n_prompt if n_keep_req < 0 else n_keep_req
    n_keep = min(N_CTX - 4, n_keep + (1 if add_bos else 0))
    n_left = n_cache - n_keep
    n_discard = n_discard_req if n_discard_req else n_left // 2
    n_discard = max(0, min(n_discard, max(0, n_left - 1)))
    kept = full[:n_keep] + full[n_keep + n_discard:n_cache]
    return kept + [full[n_cache]], n_cache - n_discard


def slot_tokens_after(toks, gen, add_bos, n_keep_req, n_discard_req):
    """The token list the slot holds when the generation ends: the prompt, then each generated token but the last
    enters the cache when it is decoded, after a shift whenever the next token would not fit (llama.cpp's rule)."""
    cache = list(toks)
    for i in range(1, len(gen)):
        if len(cache) + 1 >= N_CTX:
            n_keep = len(toks) if n_keep_req < 0 else n_keep_req
            n_keep = min(N_CTX - 4, n_keep + (1 if add_bos else 0))
            n_left = len(cache) - n_keep
            n_discard = n_discard_req if n_discard_req else n_left // 2
            n_discard = max(0, min(n_discard, max(0, n_left - 1)))
            cache = cache[:n_keep] + cache[n_keep + n_discard:]
        cache.append(gen[i - 1])
    return cache


def test_shift(srv, label, n_keep_req, n_discard_req, n_predict=300):
    toks, add_bos = prompt_tokens(srv)
    body = dict(GREEDY, prompt=PROMPT, n_predict=n_predict)
    if n_keep_req != 0:
        body["n_keep"] = n_keep_req
    if n_discard_req:
        body["n_discard"] = n_discard_req
    r = post(srv, body)
    if not check(r.status_code == 200, f"{label}: 200", r.text[:300]):
        return None
    res = r.json()
    gen = res["tokens"]
    check(res["tokens_evaluated"] == len(toks), f"{label}: prompt tokens", (res["tokens_evaluated"], len(toks)))
    check(res["tokens_predicted"] == n_predict and len(gen) == n_predict,
          f"{label}: {n_predict} tokens past a {N_CTX}-token context",
          (res["tokens_predicted"], len(gen)))
    check(res["truncated"] is True and res["stop_type"] == "limit", f"{label}: truncated, stopped by n_predict",
          (res["truncated"], res["stop_type"]))
    check(res["tokens_cached"] < N_CTX, f"{label}: the slot stays inside its context", res["tokens_cached"])
    # every shift removed exactly the tokens of the rule: the slot ends with the simulated token list, and a prompt
    # of exactly those tokens reuses all of them from the cache (all but the last, which is evaluated for logits)
    cache = slot_tokens_after(toks, gen, add_bos, n_keep_req, n_discard_req)
    check(res["tokens_cached"] == len(cache), f"{label}: tokens in the slot after the shifts",
          (res["tokens_cached"], len(cache)))
    r3 = post(srv, dict(GREEDY, prompt=cache, n_predict=1))
    check(r3.status_code == 200 and r3.json()["timings"]["cache_n"] == len(cache) - 1,
          f"{label}: the slot's token list follows the shifts (prompt cache reuse)",
          (r3.status_code, r3.json().get("timings", {}).get("cache_n") if r3.status_code == 200 else r3.text[:200],
           len(cache) - 1))
    full = toks + gen
    ctx, n_after = first_shift_context(full, len(toks), add_bos, n_keep_req, n_discard_req)
    n_cmp = min(N_CHECK, N_CTX - 2 - n_after)  # stop before the shifted run shifts again
    start = N_CTX  # index in full of the first token generated from the shifted context
    if not check(n_cmp > 0 and start + n_cmp <= len(full), f"{label}: tokens to compare", (n_cmp, n_after)):
        return gen
    # a fresh decode of the same context (token ids, BOS included; no shift: it fits)
    r2 = post(srv, dict(GREEDY, prompt=ctx, n_predict=n_cmp, cache_prompt=False))
    if not check(r2.status_code == 200, f"{label}: fresh decode 200", r2.text[:300]):
        return gen
    fresh = r2.json()["tokens"]
    check(r2.json()["tokens_evaluated"] == len(ctx), f"{label}: fresh prompt taken as given",
          (r2.json()["tokens_evaluated"], len(ctx)))
    check(fresh == full[start:start + n_cmp], f"{label}: tokens after the shift == a fresh decode of the kept context",
          (fresh, full[start:start + n_cmp]))
    check(len(set(gen)) > 40, f"{label}: the greedy text does not loop on a few tokens", len(set(gen)))
    return gen


def test_shift_spec(srv, label, expected):
    # speculative decoding drafts no further than the context allows and verifies across shifts: the same greedy
    # tokens as without a draft
    r = post(srv, dict(GREEDY, prompt=PROMPT, n_predict=300))
    if not check(r.status_code == 200, f"{label}: 200", r.text[:300]):
        return
    res = r.json()
    check(res["tokens"] == expected, f"{label}: same tokens as without a draft")
    check(res["timings"].get("draft_n", 0) > 0, f"{label}: drafts were verified", res["timings"])


def test_no_shift(srv):
    toks, _ = prompt_tokens(srv)
    r = post(srv, dict(GREEDY, prompt=PROMPT, n_predict=300))
    if not check(r.status_code == 200, "no shift: 200", r.text[:300]):
        return
    res = r.json()
    # stops when the next token would not fit: n_ctx - 1 tokens in the cache (llama.cpp: n_tokens + 1 >= n_ctx)
    check(res["tokens_predicted"] == N_CTX - len(toks), "no shift: stops at the context limit",
          (res["tokens_predicted"], N_CTX - len(toks)))
    check(res["truncated"] is True and res["stop_type"] == "limit", "no shift: truncated, stop_type limit",
          (res["truncated"], res["stop_type"]))
    # a short generation is not truncated
    r = post(srv, dict(GREEDY, prompt=PROMPT, n_predict=4))
    check(r.status_code == 200 and r.json()["truncated"] is False, "no shift: short run not truncated", r.text[:200])


def test_long_prompt(srv, label):
    # llama.cpp refuses a prompt that does not fit the slot whether or not context shift is on
    words = " ".join(["and"] * (N_CTX + 10))
    r = post(srv, {"prompt": words, "n_predict": 4})
    ok = r.status_code == 400
    err = r.json().get("error", {}) if ok else {}
    check(ok and err.get("type") == "exceed_context_size_error" and err.get("n_ctx") == N_CTX and
          err.get("n_prompt_tokens", 0) >= N_CTX, f"{label}: too-long prompt -> 400 exceed_context_size_error",
          r.text[:300])


def test_stream_shift(srv):
    # a streamed generation shifts too and ends with the final event
    r = requests.post(srv.url("/completion"), json=dict(GREEDY, prompt=PROMPT, n_predict=160, stream=True),
                      stream=True, timeout=300)
    events = [line[6:] for line in r.iter_lines(decode_unicode=True) if line and line.startswith("data: ")]
    objs = [json.loads(e) for e in events]
    n_tok = sum(len(o.get("tokens", [])) for o in objs if not o.get("stop"))
    check(r.status_code == 200 and objs and objs[-1].get("stop") is True and objs[-1].get("truncated") is True and
          objs[-1].get("tokens_predicted") == 160, "stream: 160 tokens through a shift, final event truncated",
          (r.status_code, objs[-1] if objs else None))
    check(n_tok == 160, "stream: one token per partial event", n_tok)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    data_dir, model = ts.data_and_model(args.data)
    draft = os.path.join(data_dir, "models", "kjv", "kjv-draft-f32.gguf")
    harness.require(model)
    harness.require(draft)
    base = ["-m", model, "-c", str(N_CTX), "-np", "1", "-t", "2"]
    def body():
        srv = ts.Server(args.server, base + ["--context-shift"]).start()
        try:
            gen0 = test_shift(srv, "shift (n_keep 0)", 0, 0)
            test_shift(srv, "shift (n_keep -1)", -1, 0, 200)
            test_shift(srv, "shift (n_discard 10)", 0, 10, 200)
            test_stream_shift(srv)
            test_long_prompt(srv, "shift on")
            check(any("context shift" in line for line in srv.log), "shift logged")
        finally:
            srv.stop()
        if gen0 is not None:
            srv = ts.Server(args.server, base + ["--context-shift", "-md", draft]).start()
            try:
                test_shift_spec(srv, "shift + draft model", gen0)
            finally:
                srv.stop()
        srv = ts.Server(args.server, base).start()
        try:
            test_no_shift(srv)
            test_long_prompt(srv, "shift off")
        finally:
            srv.stop()

    harness.run_guarded(body, ts.kill_all)


if __name__ == "__main__":
    main()
