#!/usr/bin/env python3
"""The API surfaces llama.cpp's server adds on top of the chat path, against llama.cpp's shapes:

- POST /v1/messages (Anthropic Messages API): response object, stream event order (message_start,
  content_block_start, content_block_delta..., content_block_stop, message_delta, message_stop; no [DONE]), the same
  greedy text and token counts as /v1/chat/completions for the same conversation, stop_sequences, tool_use /
  tool_result mapped onto OpenAI tool calls / tool messages, malformed bodies;
- POST /v1/messages/count_tokens: the token count of the rendered prompt (/apply-template + /tokenize);
- POST /v1/responses (OpenAI Responses API): response object, stream event order, the same greedy text;
- POST /infill on a model without FIM tokens: llama.cpp's 501 (the layout itself: test-server-infill);
- /rerank and its aliases: llama.cpp's 501 for a server not started for reranking; --reranking refused at start-up
  (this libllama has no rank pooling).

Model: stories260K-f32.gguf (no chat template of its own: chatml). Greedy decoding (temperature 0) makes the texts
comparable across endpoints.
"""
import argparse
import json
import os
import sys

import requests

import test_server as ts
from test_server import Server, check, expect_error, kill_all, post_raw

SYSTEM = "Be brief"
USER = "Tell me a story"
N = 16


def sse_events(r):
    """(event name or None, parsed data) pairs of an SSE body; '[DONE]' as data stays a string."""
    events, name = [], None
    for raw in r.iter_lines(decode_unicode=True):
        if raw is None or raw == "":
            continue
        if raw.startswith("event: "):
            name = raw[len("event: "):]
        elif raw.startswith("data: "):
            d = raw[len("data: "):]
            events.append((name, d if d == "[DONE]" else json.loads(d)))
            name = None
        else:
            events.append(("?", raw))
    return events


def chat(srv, msgs, **kw):
    body = {"messages": msgs, "max_tokens": N, "temperature": 0}
    body.update(kw)
    return requests.post(srv.url("/v1/chat/completions"), json=body, timeout=60)


def messages(srv, body, stream=False):
    return requests.post(srv.url("/v1/messages"), json=body, timeout=60, stream=stream)


def test_messages(srv):
    oai_msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    rc = chat(srv, oai_msgs)
    if not check(rc.status_code == 200, "chat reference: 200", rc.text[:300]):
        return
    ref = rc.json()
    ref_text = ref["choices"][0]["message"]["content"]
    check(len(ref_text) > 0, "chat reference: some text")

    # non-streamed: llama.cpp's shape, the chat path's text and counts
    r = messages(srv, {"system": SYSTEM, "messages": [{"role": "user", "content": USER}], "max_tokens": N,
                       "temperature": 0})
    if check(r.status_code == 200, "messages: 200", r.text[:300]):
        m = r.json()
        check(set(m.keys()) == {"id", "type", "role", "content", "model", "stop_reason", "stop_sequence", "usage"},
              "messages: keys", sorted(m.keys()))
        check(m["type"] == "message" and m["role"] == "assistant", "messages: type/role", m)
        check(isinstance(m["id"], str) and m["id"] != "", "messages: id", m["id"])
        check(m["content"] == [{"type": "text", "text": ref_text}], "messages: same greedy text as chat",
              (m["content"], ref_text))
        check(m["model"] == ref["model"], "messages: model", m["model"])
        want_reason = "max_tokens" if ref["choices"][0]["finish_reason"] == "length" else "end_turn"
        check(m["stop_reason"] == want_reason and m["stop_sequence"] is None, "messages: stop_reason",
              (m["stop_reason"], m["stop_sequence"]))
        u = m["usage"]
        check(set(u.keys()) == {"input_tokens", "output_tokens", "cache_read_input_tokens"}, "messages: usage keys", u)
        check(u["input_tokens"] + u["cache_read_input_tokens"] == ref["usage"]["prompt_tokens"] and
              u["output_tokens"] == ref["usage"]["completion_tokens"], "messages: usage = chat usage",
              (u, ref["usage"]))

    # system as text blocks, content as text blocks: the same prompt
    r = messages(srv, {"system": [{"type": "text", "text": SYSTEM}],
                       "messages": [{"role": "user", "content": [{"type": "text", "text": USER}]}],
                       "max_tokens": N, "temperature": 0})
    check(r.status_code == 200 and r.json()["content"] == [{"type": "text", "text": ref_text}],
          "messages: block content, same text", r.text[:300])

    # streamed: the event order, names matching the data's type, the same text
    r = messages(srv, {"system": SYSTEM, "messages": [{"role": "user", "content": USER}], "max_tokens": N,
                       "temperature": 0, "stream": True}, stream=True)
    check(r.status_code == 200 and r.headers.get("Content-Type", "").startswith("text/event-stream"),
          "messages stream: 200 event-stream", r.headers.get("Content-Type"))
    ev = sse_events(r)
    names = [e[0] for e in ev]
    check(all(isinstance(d, dict) and d.get("type") == n for n, d in ev), "messages stream: event = data.type",
          names)
    deltas = [i for i, n in enumerate(names) if n == "content_block_delta"]
    want = ["message_start", "content_block_start"] + ["content_block_delta"] * len(deltas) + \
        ["content_block_stop", "message_delta", "message_stop"]
    check(names == want and len(deltas) > 0, "messages stream: event order", names)
    if names == want:
        start = ev[0][1]["message"]
        check(start["content"] == [] and start["stop_reason"] is None and start["role"] == "assistant" and
              start["usage"]["output_tokens"] == 0, "messages stream: message_start", start)
        check(ev[1][1] == {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
              "messages stream: content_block_start", ev[1][1])
        text = "".join(ev[i][1]["delta"]["text"] for i in deltas)
        check(all(ev[i][1]["index"] == 0 and ev[i][1]["delta"]["type"] == "text_delta" for i in deltas),
              "messages stream: text_delta on block 0")
        check(text == ref_text, "messages stream: same text", (text, ref_text))
        md = ev[-2][1]
        check(md["delta"]["stop_reason"] in ("max_tokens", "end_turn") and
              md["usage"]["output_tokens"] == ref["usage"]["completion_tokens"], "messages stream: message_delta", md)
    check("[DONE]" not in [d for _, d in ev], "messages stream: no [DONE]")

    # stop_sequences: the text ends before the first occurrence; end_turn with the sequence named
    word = None
    for i in range(2, len(ref_text) - 2):
        w = ref_text[i:i + 2]
        if w.isascii() and w.isalnum():
            word = w
            break
    if check(word is not None, "stop word found in the greedy text", ref_text):
        r = messages(srv, {"system": SYSTEM, "messages": [{"role": "user", "content": USER}], "max_tokens": N,
                           "temperature": 0, "stop_sequences": [word]})
        m = r.json() if r.status_code == 200 else {}
        cut = ref_text[:ref_text.find(word)]
        check(m.get("content") == ([{"type": "text", "text": cut}] if cut else []) and
              m.get("stop_reason") == "end_turn" and m.get("stop_sequence") == word,
              "messages: stop_sequences", (word, cut, r.text[:300]))

    # count_tokens: the rendered prompt's tokens, with the vocabulary's special tokens
    conv = {"system": SYSTEM, "messages": [{"role": "user", "content": USER}]}
    r = requests.post(srv.url("/v1/messages/count_tokens"), json=conv, timeout=30)
    t = requests.post(srv.url("/apply-template"), json={"messages": oai_msgs}, timeout=30)
    k = requests.post(srv.url("/tokenize"), json={"content": t.json()["prompt"], "add_special": True}, timeout=30)
    check(r.status_code == 200 and r.json() == {"input_tokens": len(k.json()["tokens"])},
          "count_tokens = /apply-template + /tokenize", (r.text, len(k.json()["tokens"])))
    check(r.status_code == 200 and r.json()["input_tokens"] == ref["usage"]["prompt_tokens"],
          "count_tokens = chat prompt_tokens", (r.text, ref["usage"]))

    # tool_use / tool_result: an assistant turn with tool calls and a "tool" message, as llama.cpp converts them
    tool_conv = {"messages": [
        {"role": "user", "content": "What is the weather?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
                                          {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "X"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": [{"type": "text", "text": "sunny"}]},
                                     {"type": "text", "text": "Thanks"}]}],
        "tools": [{"name": "weather", "description": "d", "input_schema": {"type": "object"}}]}
    oai_tool = [{"role": "user", "content": "What is the weather?"},
                {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}],
                 "tool_calls": [{"id": "t1", "type": "function",
                                 "function": {"name": "weather", "arguments": "{\"city\":\"X\"}"}}]},
                {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
                {"role": "tool", "tool_call_id": "t1", "content": "sunny"}]
    r = requests.post(srv.url("/v1/messages/count_tokens"), json=tool_conv, timeout=30)
    t = requests.post(srv.url("/apply-template"), json={"messages": oai_tool}, timeout=30)
    if check(r.status_code == 200 and t.status_code == 200, "tool conversation: 200", (r.text[:200], t.text[:200])):
        k = requests.post(srv.url("/tokenize"), json={"content": t.json()["prompt"], "add_special": True}, timeout=30)
        check(r.json()["input_tokens"] == len(k.json()["tokens"]), "tool conversation: the converted prompt",
              (r.json(), len(k.json()["tokens"])))
        check("sunny" in t.json()["prompt"] and "Thanks" in t.json()["prompt"], "tool conversation: texts rendered",
              t.json()["prompt"])

    # malformed bodies: clear 400s in llama.cpp's error shape
    good = [{"role": "user", "content": "Hi"}]
    for body, what in [
        ({"max_tokens": 4}, "missing messages"),
        ({"messages": "Hi", "max_tokens": 4}, "messages not an array"),
        ({"messages": [1], "max_tokens": 4}, "message not an object"),
        ({"messages": [{"content": "Hi"}], "max_tokens": 4}, "message without role"),
        ({"messages": [{"role": "user", "content": 5}], "max_tokens": 4}, "content a number"),
        ({"messages": [{"role": "user", "content": [5]}], "max_tokens": 4}, "content block not an object"),
        ({"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}], "max_tokens": 4},
         "text block without a string"),
        ({"messages": good, "max_tokens": 0}, "max_tokens 0"),
        ({"messages": good, "max_tokens": -3}, "max_tokens negative"),
        ({"messages": good, "max_tokens": "many"}, "max_tokens a string"),
        ({"messages": good, "max_tokens": 4, "system": 7}, "system a number"),
        ({"messages": good, "max_tokens": 4, "stop_sequences": "x"}, "stop_sequences a string"),
        ({"messages": good, "max_tokens": 4, "stop_sequences": [1]}, "stop_sequences of numbers"),
        ({"messages": good, "max_tokens": 4, "temperature": "hot"}, "temperature a string"),
        ({"messages": good, "max_tokens": 4, "tools": {}}, "tools an object"),
    ]:
        expect_error(messages(srv, body), 400, "invalid_request_error", f"messages: {what}")
    expect_error(messages(srv, {"max_tokens": 4}), 400, "invalid_request_error", "messages: missing messages text",
                 "'messages' is required")
    expect_error(post_raw(srv, "/v1/messages", "{not json"), 400, "invalid_request_error", "messages: bad JSON")
    expect_error(requests.post(srv.url("/v1/messages/count_tokens"), json={"system": "x"}, timeout=30), 400,
                 "invalid_request_error", "count_tokens: missing messages")
    check(srv.proc.poll() is None, "server alive after the bad /v1/messages bodies")


def test_responses(srv):
    oai_msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    ref = chat(srv, oai_msgs).json()
    ref_text = ref["choices"][0]["message"]["content"]
    body = {"instructions": SYSTEM, "input": USER, "max_output_tokens": N, "temperature": 0}
    r = requests.post(srv.url("/v1/responses"), json=body, timeout=60)
    if check(r.status_code == 200, "responses: 200", r.text[:300]):
        o = r.json()
        check(o["object"] == "response" and o["status"] == "completed" and o["id"].startswith("resp_"),
              "responses: object/status/id", o)
        out = o["output"]
        check(len(out) == 1 and out[0]["type"] == "message" and out[0]["role"] == "assistant" and
              out[0]["status"] == "completed", "responses: one message item", out)
        check(out[0]["content"] == [{"type": "output_text", "annotations": [], "logprobs": [], "text": ref_text}],
              "responses: same greedy text as chat", (out[0]["content"], ref_text))
        u = o["usage"]
        check(u["input_tokens"] == ref["usage"]["prompt_tokens"] and
              u["output_tokens"] == ref["usage"]["completion_tokens"] and
              u["total_tokens"] == u["input_tokens"] + u["output_tokens"], "responses: usage", (u, ref["usage"]))

    # input items: a system item and a user item with input_text parts, the same prompt
    items = [{"role": "system", "content": SYSTEM},
             {"role": "user", "content": [{"type": "input_text", "text": USER}]}]
    r = requests.post(srv.url("/v1/responses"), json={"input": items, "max_output_tokens": N, "temperature": 0},
                      timeout=60)
    check(r.status_code == 200 and r.json()["output"][0]["content"][0]["text"] == ref_text,
          "responses: input items, same text", r.text[:300])

    r = requests.post(srv.url("/v1/responses"), json=dict(body, stream=True), timeout=60, stream=True)
    ev = sse_events(r)
    names = [e[0] for e in ev]
    n_delta = names.count("response.output_text.delta")
    want = ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"] \
        + ["response.output_text.delta"] * n_delta + \
        ["response.output_text.done", "response.content_part.done", "response.output_item.done",
         "response.completed", None]
    check(names == want and n_delta > 0, "responses stream: event order", names)
    check(ev and ev[-1][1] == "[DONE]", "responses stream: ends with [DONE]")
    if names == want:
        check(all(d.get("type") == n for n, d in ev[:-1]), "responses stream: event = data.type")
        text = "".join(d["delta"] for n, d in ev if n == "response.output_text.delta")
        check(text == ref_text, "responses stream: same text", (text, ref_text))
        done = ev[-2][1]["response"]
        check(done["status"] == "completed" and done["output"][0]["content"][0]["text"] == ref_text,
              "responses stream: response.completed", done)

    for b, what in [({"max_output_tokens": 4}, "missing input"),
                    ({"input": 5}, "input a number"),
                    ({"input": [5]}, "input item not an object"),
                    ({"input": [{"role": "user", "content": [{"type": "bogus"}]}]}, "unknown part type"),
                    ({"input": "Hi", "previous_response_id": "resp_1"}, "previous_response_id"),
                    ({"input": "Hi", "tools": [{"type": "web_search"}]}, "non-function tool")]:
        expect_error(requests.post(srv.url("/v1/responses"), json=b, timeout=30), 400, "invalid_request_error",
                     f"responses: {what}")


def test_infill_rerank(srv):
    r = requests.post(srv.url("/infill"), json={"input_prefix": "def f(", "input_suffix": ")"}, timeout=30)
    expect_error(r, 501, "not_supported_error", "infill without FIM tokens",
                 "Infill is not supported by this model: prefix token is missing. suffix token is missing. "
                 "middle token is missing. ")
    for path in ("/rerank", "/reranking", "/v1/rerank", "/v1/reranking"):
        r = requests.post(srv.url(path), json={"query": "q", "documents": ["a", "b"]}, timeout=30)
        expect_error(r, 501, "not_supported_error", f"{path} without --reranking",
                     "This server does not support reranking. Start it with `--reranking`")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    data_dir, _ = ts.data_and_model(args.data)
    model = os.path.join(data_dir, "models", "stories260K-f32.gguf")
    if not os.path.exists(model):
        return ts.missing_data(model)
    with ts.guarded():
        srv = Server(args.server, ["-m", model, "-c", "512", "-np", "1"]).start()
        try:
            test_messages(srv)
            test_responses(srv)
            test_infill_rerank(srv)
        finally:
            rc = srv.stop()
        check(rc == 0, "server: clean exit", rc)
        # no rank pooling in this libllama: --reranking / --rerank are refused with a reason
        for flag in ("--reranking", "--rerank"):
            s = Server(args.server, ["-m", model, "-c", "256", "-np", "1", flag])
            failed = False
            try:
                s.start(limit_s=60)
            except RuntimeError:
                failed = True
            s.stop()
            check(failed and s.proc.returncode != 0, f"{flag}: refused at start-up", s.proc.returncode)
            check(any("reranking" in line and "not supported" in line for line in s.log), f"{flag}: the reason",
                  "".join(s.log)[-500:])
    return ts.finish()


if __name__ == "__main__":
    sys.exit(main())
