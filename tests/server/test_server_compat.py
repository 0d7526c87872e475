#!/usr/bin/env python3
"""llama-server acceptance tests (issue #9): OpenAI streaming and response shapes as llama.cpp's server returns
them, bad input on every completion endpoint, slow / half-sent / dropped clients, and cancellation of a
generation whose client went away.

Expected shapes are llama.cpp's (tools/server/server-task.cpp to_json_*, server-common.cpp
format_error_response, server-http.cpp middlewares); streamed text is compared with the same server's
non-streamed answer for the same seeded request, which must agree exactly.

Divergences from llama.cpp that live outside the transport (server.c and its split files) are checked with
xfail(): printed as XFAIL with the reason and not counted; once fixed they print XPASS (then make them checks).
"""
import argparse
import json
import os
import re
import socket
import sys
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_server as ts  # noqa: E402  (Server, check, expect_error, counters)

check = ts.check
N_XFAIL = 0


def xfail(cond, what, reason, detail=None):
    """A known divergence: reported, not counted."""
    global N_XFAIL
    if cond:
        print(f"XPASS: {what} -- fixed? turn it into a check ({reason})", flush=True)
    else:
        N_XFAIL += 1
        print(f"XFAIL: {what} -- {reason}" + (f" -- {str(detail)[:300]}" if detail is not None else ""), flush=True)


def post(srv, path, body, headers=None, stream=False, timeout=120):
    return requests.post(srv.url(path), json=body, headers=headers, stream=stream, timeout=timeout)


def sse(r):
    """The data: payloads of an SSE response in order ("[DONE]" as a string); other lines as {"__line": ...}."""
    out = []
    for line in r.iter_lines():
        if not line:
            continue
        line = line.decode("utf-8")
        if line.startswith("data: "):
            out.append("[DONE]" if line[6:] == "[DONE]" else json.loads(line[6:]))
        else:
            out.append({"__line": line})
    return out


def metric(srv, name):
    m = re.search(r"^llamacpp:%s (\S+)$" % name, requests.get(srv.url("/metrics"), timeout=10).text, re.M)
    return float(m.group(1)) if m else None


def wait_idle(srv, limit_s):
    """Seconds until no slot is processing (None past limit_s)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if all(not s.get("is_processing") for s in requests.get(srv.url("/slots"), timeout=10).json()):
            return time.monotonic() - t0
        time.sleep(0.005)
    return None


OAI_TOP = {"choices", "created", "model", "system_fingerprint", "object", "usage", "id"}


def check_oai_common(b, obj, what, model_name):
    check(isinstance(b, dict) and OAI_TOP <= set(b), f"{what}: OpenAI fields {sorted(OAI_TOP)}", b)
    if not isinstance(b, dict):
        return
    check(b.get("object") == obj, f"{what}: object {obj}", b.get("object"))
    check(isinstance(b.get("id"), str) and b["id"].startswith("chatcmpl-"), f"{what}: id chatcmpl-*", b.get("id"))
    check(isinstance(b.get("created"), int) and abs(b["created"] - time.time()) < 600, f"{what}: created", b.get("created"))
    check(isinstance(b.get("system_fingerprint"), str) and b["system_fingerprint"], f"{what}: system_fingerprint", b)
    # llama.cpp names the model by its file name (or -a alias), not the full path
    check(b.get("model") == os.path.basename(model_name), f"{what}: model is the file name", b.get("model"))


def check_usage(u, prompt_tokens, completion_tokens, what):
    check(isinstance(u, dict) and set(u) == {"completion_tokens", "prompt_tokens", "total_tokens"} and
          u["prompt_tokens"] == prompt_tokens and u["completion_tokens"] == completion_tokens and
          u["total_tokens"] == prompt_tokens + completion_tokens, f"{what}: usage", (u, prompt_tokens, completion_tokens))


def n_prompt_tokens(srv, text):
    return len(requests.post(srv.url("/tokenize"), json={"content": text, "add_special": True}, timeout=10).json()["tokens"])


# ---------------------------------------------------------------------------------------------------------

def test_stream_equals_plain(srv, model):
    """Streamed deltas concatenate to the non-streamed text, on all three completion endpoints."""
    prompt = "And God said"
    seeded = {"temperature": 0.9, "seed": 77, "cache_prompt": False}

    # native, sampled and greedy with a stop word (held-back text must not leak)
    for extra in ({"n_predict": 24}, {"n_predict": 32, "temperature": 0, "stop": [" land"]}):
        body = dict(seeded, prompt="In the beginning" if "stop" in extra else prompt, **extra)
        plain = post(srv, "/completion", body).json()
        ev = sse(post(srv, "/completion", dict(body, stream=True), stream=True))
        text = "".join(e.get("content", "") for e in ev if isinstance(e, dict))
        check(text == plain.get("content"), f"native stream == content ({extra})", (text, plain.get("content")))
        check(ev and isinstance(ev[-1], dict) and ev[-1].get("stop") is True and "[DONE]" not in ev,
              "native stream: ends with stop=true, no [DONE] (llama.cpp)", ev[-1:])
        last = ev[-1] if ev and isinstance(ev[-1], dict) else {}
        check(last.get("stop_type") == plain.get("stop_type") and last.get("tokens_predicted") == plain.get("tokens_predicted")
              and "timings" in last, "native stream: final event carries stop_type, tokens_predicted, timings", last)

    # /v1/completions
    body = dict(seeded, prompt=prompt, max_tokens=16)
    plain = post(srv, "/v1/completions", body).json()
    check_oai_common(plain, "text_completion", "v1/completions", model)
    ch = (plain.get("choices") or [{}])[0]
    check(set(ch) == {"text", "index", "logprobs", "finish_reason"} and ch.get("index") == 0 and ch.get("logprobs") is None
          and ch.get("finish_reason") == "length", "v1/completions: choice fields", ch)
    check_usage(plain.get("usage"), n_prompt_tokens(srv, prompt), 16, "v1/completions")
    ev = sse(post(srv, "/v1/completions", dict(body, stream=True), stream=True))
    check(ev and ev[-1] == "[DONE]" and ev.count("[DONE]") == 1, "v1/completions stream: one [DONE] at the end", ev[-2:])
    chunks = [e for e in ev if isinstance(e, dict)]
    check(len(chunks) == len(ev) - 1 and all("__line" not in c for c in chunks), "v1/completions stream: only data lines",
          [c for c in chunks if "__line" in c][:2])
    text = "".join(c["choices"][0].get("text", "") for c in chunks if c.get("choices"))
    check(text == ch.get("text"), "v1/completions stream == text", (text, ch.get("text")))
    for c in chunks:
        if not check(c.get("object") == "text_completion" and isinstance(c.get("choices"), list) and len(c["choices"]) == 1
                     and c["choices"][0].get("index") == 0 and "logprobs" in c["choices"][0], "v1/completions chunk shape", c):
            break
    check(len({c.get("id") for c in chunks}) == 1 and str(chunks[0].get("id", "")).startswith("chatcmpl-") if chunks else False,
          "v1/completions stream: one id for all chunks", {c.get("id") for c in chunks})
    check(chunks and chunks[-1]["choices"][0].get("finish_reason") == "length" and
          all(c["choices"][0].get("finish_reason") is None for c in chunks[:-1]),
          "v1/completions stream: finish_reason only on the last chunk", [c["choices"][0].get("finish_reason") for c in chunks])
    # llama.cpp's final streamed text_completion is the full final object: usage included
    if chunks:
        check_usage(chunks[-1].get("usage"), n_prompt_tokens(srv, prompt), 16, "v1/completions stream final chunk")
        check(all("usage" not in c for c in chunks[:-1]), "v1/completions stream: usage only on the last chunk")

    # /v1/chat/completions
    msgs = [{"role": "system", "content": "You are the King James Bible."}, {"role": "user", "content": "In the beginning"}]
    body = dict(seeded, messages=msgs, max_tokens=12)
    plain = post(srv, "/v1/chat/completions", body).json()
    check_oai_common(plain, "chat.completion", "chat", model)
    ch = (plain.get("choices") or [{}])[0]
    check(set(ch) == {"finish_reason", "index", "message"} and ch.get("index") == 0 and
          ch.get("message", {}).get("role") == "assistant" and isinstance(ch.get("message", {}).get("content"), str),
          "chat: choice fields", ch)
    content = ch.get("message", {}).get("content")
    ev = sse(post(srv, "/v1/chat/completions", dict(body, stream=True), stream=True))
    check(ev and ev[-1] == "[DONE]" and ev.count("[DONE]") == 1, "chat stream: one [DONE] at the end", ev[-2:])
    chunks = [e for e in ev if isinstance(e, dict)]
    check(chunks and all(c.get("object") == "chat.completion.chunk" and OAI_TOP - {"usage"} <= set(c) for c in chunks),
          "chat stream: chunk fields", chunks[:1])
    check(len({c.get("id") for c in chunks}) == 1, "chat stream: one id for all chunks", {c.get("id") for c in chunks})
    with_choice = [c for c in chunks if c.get("choices")]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in with_choice)
    check(text == content, "chat stream == message.content", (text, content))
    check(with_choice and with_choice[-1]["choices"][0].get("finish_reason") == ch.get("finish_reason") and
          with_choice[-1]["choices"][0].get("delta") == {} and
          all(c["choices"][0].get("finish_reason") is None for c in with_choice[:-1]),
          "chat stream: finish_reason and an empty delta only on the last choice chunk",
          [(c["choices"][0].get("finish_reason"), c["choices"][0].get("delta")) for c in with_choice[-2:]])
    first = with_choice[0]["choices"][0].get("delta") if with_choice else None
    # llama.cpp sends an initial role chunk (to_json_oaicompat_chat, n_decoded == 1), then only non-empty deltas
    check(first == {"role": "assistant", "content": None}, "chat stream: first delta is {role: assistant, content: null}",
          first)
    check(sum(1 for c in with_choice if "role" in c["choices"][0]["delta"]) == 1 and
          all(c["choices"][0]["delta"].get("content") for c in with_choice[1:-1]),
          "chat stream: one role chunk, then non-empty content deltas", [c["choices"][0]["delta"] for c in with_choice])
    # usage: llama.cpp streams it only with stream_options.include_usage, as one more chunk with empty choices
    check(all("usage" not in c for c in chunks), "chat stream: no usage without stream_options.include_usage",
          [c.get("usage") for c in chunks if "usage" in c])
    ev = sse(post(srv, "/v1/chat/completions", dict(body, stream=True, stream_options={"include_usage": True}), stream=True))
    chunks = [e for e in ev if isinstance(e, dict)]
    last = chunks[-1] if chunks else {}
    # llama.cpp's extra usage chunk (OpenAI spec); the finish chunk before it has no usage
    check(last.get("choices") == [] and isinstance(last.get("usage"), dict) and "timings" in last and
          len(chunks) >= 2 and chunks[-2].get("choices", [{}])[0].get("finish_reason") is not None and
          "usage" not in chunks[-2], "chat stream include_usage: last chunk has choices [] and usage", chunks[-2:])
    check(any(isinstance(c.get("usage"), dict) and c["usage"].get("completion_tokens") ==
              plain.get("usage", {}).get("completion_tokens") for c in chunks),
          "chat stream include_usage: usage equals the non-streamed usage", [c.get("usage") for c in chunks][-2:])


def test_response_fields(srv, model):
    r = requests.get(srv.url("/v1/models"), timeout=10)
    j = r.json()
    d = (j.get("data") or [{}])[0]
    check(j.get("object") == "list" and {"id", "object", "created", "owned_by", "meta"} <= set(d) and
          d.get("object") == "model" and d.get("owned_by") == "llamacpp" and isinstance(d.get("created"), int),
          "v1/models: OpenAI model fields", d)
    meta = d.get("meta") or {}
    check({"vocab_type", "n_vocab", "n_ctx_train", "n_embd", "n_params", "size"} <= set(meta), "v1/models: meta fields", meta)
    # llama.cpp's model info (get_res_model_info): no -a here, so no aliases; n_ctx is one slot's context
    check(d.get("id") == os.path.basename(model) and d.get("aliases") == [] and d.get("tags") == [] and
          meta.get("n_ctx") == 256 and meta.get("ftype") in ("Q8_0", "Q4_0", "all F32", "F16", "Q4_K - Medium"),
          "v1/models: id file name, aliases, tags, meta.n_ctx, meta.ftype", d)
    p = requests.get(srv.url("/props"), timeout=10).json()
    check(p.get("model_alias") == os.path.basename(model) and p.get("model_path") == model,
          "props: model_alias is the file name, model_path the path", (p.get("model_alias"), p.get("model_path")))
    # finish_reason "stop" on a stop word, in both OpenAI shapes
    b = post(srv, "/v1/completions", {"prompt": "In the beginning", "max_tokens": 32, "temperature": 0,
                                      "stop": " land"}).json()
    check(b.get("choices", [{}])[0].get("finish_reason") == "stop" and
          b["choices"][0].get("text") == " of the LORD, and in the", "v1/completions: stop string -> finish_reason stop", b)
    b = post(srv, "/v1/completions", {"prompt": "In the beginning", "max_tokens": 3, "temperature": 0, "logprobs": 2}).json()
    lp = b.get("choices", [{}])[0].get("logprobs")
    # llama.cpp maps OpenAI logprobs to n_probs and answers with probs_vector_to_json entries
    toks = b.get("choices", [{}])[0].get("text")
    ok = isinstance(lp, dict) and set(lp) == {"content"} and len(lp["content"]) == 3
    for e in (lp or {}).get("content") or []:
        ok = ok and set(e) == {"id", "token", "bytes", "logprob", "top_logprobs"} and len(e["top_logprobs"]) == 2 and \
            e["top_logprobs"][0]["id"] == e["id"] and bytes(e["bytes"]).decode("utf-8", "replace") == e["token"] and \
            all(set(t) == {"id", "token", "bytes", "logprob"} for t in e["top_logprobs"])
    check(ok and "".join(e["token"] for e in lp["content"]) == toks, "v1/completions: logprobs N returns logprobs.content",
          lp)
    # chat: logprobs true + top_logprobs N, on the choice; top_logprobs alone is refused
    chat = {"messages": [{"role": "user", "content": "In the beginning"}], "max_tokens": 3, "temperature": 0}
    b = post(srv, "/v1/chat/completions", dict(chat, logprobs=True, top_logprobs=2)).json()
    ch = b.get("choices", [{}])[0]
    lp = ch.get("logprobs") or {}
    check(len(lp.get("content") or []) == 3 and all(len(e.get("top_logprobs", [])) == 2 for e in lp["content"]) and
          "".join(e["token"] for e in lp["content"]) == ch.get("message", {}).get("content"),
          "chat: logprobs + top_logprobs returns choice.logprobs.content", ch)
    check("logprobs" not in post(srv, "/v1/chat/completions", chat).json().get("choices", [{}])[0],
          "chat: no logprobs without the field")
    ts.expect_error(post(srv, "/v1/chat/completions", dict(chat, top_logprobs=2)), 400, "invalid_request_error",
                    "chat: top_logprobs without logprobs", "top_logprobs requires logprobs to be set to true")
    ev = sse(post(srv, "/v1/chat/completions", dict(chat, logprobs=True, top_logprobs=1, stream=True), stream=True))
    lps = [c["choices"][0]["logprobs"]["content"][0] for c in ev if isinstance(c, dict) and c.get("choices")
           and c["choices"][0].get("logprobs")]
    check(len(lps) == 3 and all(len(e["top_logprobs"]) == 1 for e in lps), "chat stream: logprobs per token", lps)
    # the native final object: llama.cpp's field names
    b = post(srv, "/completion", {"prompt": "In the beginning", "n_predict": 2, "temperature": 0}).json()
    want = {"index", "content", "tokens", "id_slot", "stop", "model", "tokens_predicted", "tokens_evaluated",
            "generation_settings", "has_new_line", "truncated", "stop_type", "stopping_word", "tokens_cached", "timings"}
    check(want <= set(b), "completion: llama.cpp's response fields", sorted(want - set(b)))
    # llama.cpp echoes the prompt, detokenized with the special tokens rendered
    check(isinstance(b.get("prompt"), str) and b["prompt"].endswith("In the beginning") and
          list(b).index("prompt") == list(b).index("generation_settings") + 1, "completion: 'prompt' field",
          b.get("prompt"))


def test_bad_input(srv, model):
    """Every bad request gets 400 + llama.cpp's error shape; the server keeps serving.

    llama.cpp answers malformed JSON with 500 server_error (nlohmann's parse_error is no std::invalid_argument) and
    ignores most wrong-typed fields (json_value logs and falls back to the default); this server answers both with
    400 invalid_request_error, which the issue asks for ("the right status")."""
    inv = "invalid_request_error"
    ok = {"prompt": "In the beginning", "n_predict": 2}
    bad_bodies = [
        (b"{\"prompt\": \"a\"", "truncated JSON"), (b"{'prompt': 'a'}", "single quotes"), (b"", "empty body"),
        (b"[]", "array body"), (b"null", "null body"), (b"{\"prompt\":\"a\"}{}", "two objects"),
        (b"{\"prompt\":\"\xc3\x28\"}", "invalid UTF-8"), (b"{\"n_predict\":1e999,\"prompt\":\"a\"}", "number overflow"),
        (b"{\"prompt\":\"a\",\"n_predict\":NaN}", "NaN"), (b"{\"prompt\":\"a\"," + b"\"x\":[" * 3000 + b"]" * 3000 + b"}",
                                                             "deeply nested unknown field"),
    ]
    for path in ("/completion", "/v1/completions", "/v1/chat/completions"):
        for raw, what in bad_bodies:
            ts.expect_error(ts.post_raw(srv, path, raw), 400, inv, f"{path} {what}")
    bad_fields = [
        ({"n_predict": "5"}, "n_predict string"), ({"n_predict": -2}, "n_predict -2"), ({"n_predict": 10 ** 15}, "n_predict huge"),
        ({"n_predict": 2 ** 31}, "n_predict 2^31"), ({"n_predict": 1.5}, "n_predict fractional"),
        ({"n_probs": -1}, "n_probs -1"), ({"n_probs": 10 ** 9}, "n_probs 1e9"), ({"n_probs": 2 ** 63 - 1}, "n_probs int64 max"),
        ({"n_probs": "3"}, "n_probs string"), ({"n_probs": [3]}, "n_probs array"),
        ({"temperature": "hot"}, "temperature string"), ({"top_k": 2.5}, "top_k fractional"), ({"top_p": {}}, "top_p object"),
        ({"stream": "yes"}, "stream string"), ({"seed": "x"}, "seed string"), ({"stop": [1]}, "stop with a number"),
        ({"stop": ["a"] * 1000}, "1000 stop words"), ({"logit_bias": "x"}, "logit_bias string"), ({"samplers": 5}, "samplers number"),
        ({"id_slot": 99}, "id_slot out of range"), ({"id_slot": "0"}, "id_slot string"), ({"repeat_penalty": 0}, "repeat_penalty 0"),
        ({"cache_prompt": "no"}, "cache_prompt string"), ({"return_tokens": 1}, "return_tokens number"),
    ]
    for fields, what in bad_fields:
        ts.expect_error(post(srv, "/completion", dict(ok, **fields)), 400, inv, f"/completion {what}")
    for prompt, what in ((5, "prompt number"), ({"a": 1}, "prompt object"), ([], "prompt []"), ([[]], "prompt [[]]"),
                         ([1, 99999], "token id >= n_vocab"), ([-3], "negative token id"), ([1, 2.5], "fractional token id"),
                         (None, "prompt null")):
        ts.expect_error(post(srv, "/completion", {"prompt": prompt, "n_predict": 2}), 400, inv, f"/completion {what}")
    ts.expect_error(post(srv, "/v1/completions", {"prompt": "a", "max_tokens": -5}), 400, inv, "/v1/completions max_tokens -5")
    ts.expect_error(post(srv, "/v1/chat/completions", {"messages": "hi"}), 400, inv, "chat messages string")
    ts.expect_error(post(srv, "/v1/chat/completions", {"messages": [{"role": "user", "content": 5}]}), 400, inv,
                    "chat content number")
    ts.expect_error(post(srv, "/v1/chat/completions", {"messages": [{"role": "user", "content": "a"}], "max_tokens": "x"}),
                    400, inv, "chat max_tokens string")

    # accepted as llama.cpp accepts them
    r = post(srv, "/completion", {"prompt": "", "n_predict": 2, "temperature": 0})
    check(r.status_code == 200 and r.json().get("tokens_evaluated") == 1, "empty prompt: BOS only, 200 (llama.cpp)", r.text[:200])
    r = post(srv, "/completion", {"prompt": "In the beginning", "n_predict": 1, "n_probs": 100, "temperature": 0})
    probs = r.json().get("completion_probabilities") or [{}] if r.status_code == 200 else [{}]
    check(r.status_code == 200 and len(probs[0].get("top_logprobs") or []) == 100, "n_probs 100: 100 entries", r.text[:200])
    base = {"prompt": "In the beginning", "n_predict": 4, "temperature": 0, "return_tokens": True}
    a = post(srv, "/completion", base).json().get("tokens")
    r = post(srv, "/completion", dict(base, frobnicate={"x": [1, {"y": None}]}, **{"x-y": None, "temperature_": "hot",
                                                                                    "": 1}))
    check(r.status_code == 200 and a and r.json().get("tokens") == a, "unknown fields are ignored", r.text[:200])
    r = post(srv, "/completion", dict(base, top_p=None, seed=None, stop=None))
    check(r.status_code == 200 and r.json().get("tokens") == a, "null fields mean the default", r.text[:200])
    r = post(srv, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2,
                                           "tools": [], "response_format": {"type": "text"}, "user": "u", "n": 1,
                                           "frequency_penalty": 0, "logit_bias": {}})
    check(r.status_code == 200, "chat: unknown OpenAI fields ignored", r.text[:200])

    # the prompt does not fit the slot: llama.cpp's exact error (server-common.cpp format_error_response)
    for path, body in (("/completion", {"prompt": "And " * 300, "n_predict": 1}),
                       ("/v1/completions", {"prompt": "And " * 300, "max_tokens": 1}),
                       ("/v1/chat/completions", {"messages": [{"role": "user", "content": "And " * 300}], "max_tokens": 1})):
        r = post(srv, path, body)
        e = r.json().get("error", {}) if r.headers.get("Content-Type", "").startswith("application/json") else {}
        n = e.get("n_prompt_tokens")
        ts.expect_error(r, 400, "exceed_context_size_error", f"{path} prompt too long",
                        f"request ({n} tokens) exceeds the available context size (256 tokens), try increasing it")
        check(isinstance(n, int) and n > 256 and e.get("n_ctx") == 256, f"{path} prompt too long: numbers", e)
    r = post(srv, "/completion", dict(ok, stream=True, prompt="And " * 300), stream=True)
    ts.expect_error(r, 400, "exceed_context_size_error", "streamed request, prompt too long: a JSON error, not SSE")

    # oversize bodies (the default limit is 16 MiB)
    big = b"{\"prompt\": \"" + b"a" * (17 * 1024 * 1024) + b"\"}"
    try:
        ts.expect_error(ts.post_raw(srv, "/completion", big), 413, inv, "oversize /completion body")
    except requests.ConnectionError as e:
        check(False, "oversize /completion body: got a response", e)

    r = requests.get(srv.url("/health"), timeout=10)
    check(r.status_code == 200 and r.json() == {"status": "ok"}, "health after bad input", r.text)
    r = post(srv, "/completion", base)
    check(r.status_code == 200 and r.json().get("tokens") == a, "same answer after bad input", r.text[:200])


def test_api_key(binary, model):
    # -a as llama.cpp reads it: comma-separated, stripped, a sorted set; the model is named by the smallest
    srv = ts.Server(binary, ["-m", model, "-c", "512", "-np", "2", "--api-key", "sekret", "-a", " zeta, alpha ,zeta"]).start()
    try:
        d = (requests.get(srv.url("/v1/models"), headers={"Authorization": "Bearer sekret"}, timeout=10).json()
             .get("data") or [{}])[0]
        check(d.get("id") == "alpha" and d.get("aliases") == ["alpha", "zeta"], "-a aliases: id and aliases", d)
        r = post(srv, "/v1/completions", {"prompt": "In", "max_tokens": 1}, headers={"Authorization": "Bearer sekret"})
        check(r.json().get("model") == "alpha", "-a aliases: the model name in responses", r.text[:200])
        body = {"prompt": "In the beginning", "n_predict": 2, "temperature": 0}
        exact = {"error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}}
        for path, b in (("/completion", body), ("/v1/completions", body),
                        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "a"}], "max_tokens": 2})):
            for hdr, what in ((None, "no key"), ({"Authorization": "Bearer wrong"}, "wrong key"),
                              ({"Authorization": "sekret "}, "key with a trailing space"),
                              ({"Authorization": "Bearer sekre"}, "key prefix"), ({"Authorization": "Bearer "}, "empty key")):
                r = post(srv, path, b, headers=hdr)
                ts.expect_error(r, 401, "authentication_error", f"{path} {what}", "Invalid API Key")
                check(r.status_code != 401 or r.json() == exact, f"{path} {what}: llama.cpp's exact body", r.text)
            r = post(srv, path, dict(b, stream=True), stream=True)
            ts.expect_error(r, 401, "authentication_error", f"{path} streamed, no key: JSON 401, not SSE")
            r = post(srv, path, b, headers={"Authorization": "Bearer sekret"})
            check(r.status_code == 200, f"{path} right key", r.text[:200])
            r = post(srv, path, b, headers={"Authorization": "sekret"})
            check(r.status_code == 200, f"{path} key without Bearer (llama.cpp strips an optional prefix)", r.text[:200])
        check(requests.get(srv.url("/health"), timeout=10).status_code == 200, "api key: health still public")
    finally:
        rc = srv.stop()
    check(rc == 0, "api key server: clean exit", rc)


def test_slow_and_dropped_clients(srv):
    """Clients that hold half-sent requests open must not starve others; dropped ones must not leak slots."""
    held = []
    for i in range(60):
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
        kind = i % 3
        if kind == 0:
            s.sendall(b"POST /completion HTTP/1.1\r\nHost: x\r\nContent-Type: appl")  # half the headers
        elif kind == 1:
            s.sendall(b"POST /completion HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 200\r\n\r\n{\"prompt\": \"In the")  # half the body
        held.append(s)                                                      # kind 2: nothing at all
    lat = []
    for _ in range(10):
        t0 = time.monotonic()
        r = requests.get(srv.url("/health"), timeout=10)
        lat.append(time.monotonic() - t0)
        if r.status_code != 200:
            break
    check(len(lat) == 10 and max(lat) < 1.0, "health answers while 60 half-sent requests are held open",
          ["%.3f" % x for x in lat])
    r = post(srv, "/completion", {"prompt": "In the beginning", "n_predict": 3, "temperature": 0}, timeout=30)
    check(r.status_code == 200 and r.json().get("tokens_predicted") == 3, "a completion runs beside them", r.text[:200])
    for i, s in enumerate(held):
        if i % 2:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
        s.close()

    # 200 connections that send a whole (streamed or not) completion request and leave at once
    body = json.dumps({"prompt": "And God said", "n_predict": 4, "temperature": 0}).encode()
    sbody = json.dumps({"prompt": "And God said", "n_predict": 64, "stream": True, "ignore_eos": True}).encode()
    socks = []
    for i in range(200):
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
        b = sbody if i % 2 else body
        req = (b"POST /completion HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
               % len(b)) + b
        s.sendall(req if i % 4 != 3 else req[: len(req) // 2])
        socks.append(s)
    for i, s in enumerate(socks):
        if i % 3 == 0:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
    # 100 non-streamed requests now wait in handlers for their slots: none may hold up /health
    t0 = time.monotonic()
    r = requests.get(srv.url("/health"), timeout=10)
    el = time.monotonic() - t0
    check(r.status_code == 200 and r.json() == {"status": "ok"} and el < 2.0,
          "health right after 200 dropped completions, at once", (r.text, el))
    # 100 non-streamed x 4 tokens may still run (see test_disconnect); streamed ones stop at once. 4 slots at
    # ~20 ms a token: a generous limit that still fails if the dropped requests leaked their slots.
    idle = wait_idle(srv, 60)
    check(idle is not None, "slots free again after 200 dropped completions", idle)
    r = post(srv, "/completion", {"prompt": "In the beginning", "n_predict": 3, "temperature": 0}, timeout=30)
    check(r.status_code == 200 and r.json().get("tokens_predicted") == 3, "completion after the dropped ones", r.text[:200])


def test_disconnect(srv):
    """A client that leaves mid-stream cancels its generation within about one token (llama.cpp checks the
    connection before each token). Measured through /metrics: tokens generated vs tokens the client read."""
    body = {"prompt": "In the beginning", "n_predict": 200, "stream": True, "ignore_eos": True, "cache_prompt": False}
    extra = []
    for _ in range(3):
        before = metric(srv, "tokens_predicted_total")
        r = post(srv, "/completion", body, stream=True)
        got = 0
        for line in r.iter_lines():
            if line.startswith(b"data: "):
                got += len(json.loads(line[6:]).get("tokens") or [])
            if got >= 3:
                break
        r.close()
        idle = wait_idle(srv, 20)
        extra.append((metric(srv, "tokens_predicted_total") - before - got, idle))
    print("NOTE: stream disconnect: (tokens generated past the last one read, seconds until the slot was idle): %s"
          % [(int(e), round(i, 3) if i is not None else None) for e, i in extra], flush=True)
    # one token may be in flight when the client leaves, one more is written before the socket reports the reset.
    # The best of three shows the mechanism; the worst only bounds a test client descheduled before its close().
    check(all(i is not None and i < 2.0 for _, i in extra) and min(e for e, _ in extra) <= 2 and
          max(e for e, _ in extra) <= 10,
          "stream disconnect: generation stops within ~1 token (extra tokens, seconds to idle)", extra)

    # a client that leaves during prompt processing
    before = metric(srv, "tokens_predicted_total")
    r = post(srv, "/completion", dict(body, prompt="And " * 200), stream=True)
    r.close()
    idle = wait_idle(srv, 20)
    gen = metric(srv, "tokens_predicted_total") - before
    # the server notices the close at its next write/poll of the connection; with a parallel ctest on 2 cores the
    # threads involved can be descheduled for a few tokens (this check failed now and then with a bound of 3). The
    # bound still fails by far if the 200-token generation is not cancelled.
    check(idle is not None and gen <= 10, "disconnect before the first token: stops within a few tokens", (gen, idle))

    # non-streamed: llama.cpp cancels too (it polls is_connection_closed while waiting for the result; here the
    # handler polls server_http_req_client_gone)
    before = metric(srv, "tokens_predicted_total")
    # 5 prompt + 240 tokens fill the 256-token slot: stopping early is only possible by cancellation
    b = json.dumps({"prompt": "In the beginning", "n_predict": 240, "ignore_eos": True, "cache_prompt": False}).encode()
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    s.sendall(b"POST /completion HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
              % len(b) + b)
    time.sleep(0.05)
    s.close()
    idle = wait_idle(srv, 120)
    gen = metric(srv, "tokens_predicted_total") - before
    check(idle is not None and gen < 240, "non-streamed disconnect cancels the generation (tokens, seconds to idle)",
          (gen, idle))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--data", default=None)
    ap.add_argument("--threads", default="2")
    args = ap.parse_args()
    data_dir, model = ts.data_and_model(args.data)
    if not os.path.exists(model):
        return ts.missing_data(model)
    with ts.guarded():
        # -c 1024 over 4 slots: 256 tokens per slot
        srv = ts.Server(args.server, ["-m", model, "-c", "1024", "-np", "4", "-t", args.threads, "--metrics",
                                      "--threads-http", "4"]).start()
        try:
            test_stream_equals_plain(srv, model)
            test_response_fields(srv, model)
            test_bad_input(srv, model)
            test_disconnect(srv)
            test_slow_and_dropped_clients(srv)
            check(srv.proc.poll() is None, "server still running")
        finally:
            rc = srv.stop()
        check(rc == 0, "clean exit on SIGTERM", rc)
        test_api_key(args.server, model)
    print(f"{N_XFAIL} known divergences (XFAIL)")
    return ts.finish()


if __name__ == "__main__":
    sys.exit(main())
