#!/usr/bin/env python3
"""Reasoning and tool calls parsed out of the generated chat text (common/chat-parse), llama.cpp's way, end to end.

The model (stories260K-f32.gguf) cannot be asked for a tool call, so its output is forced with a request grammar
(GBNF) or, for the generic JSON protocol, with the grammar the server derives from the tools. What is checked is
llama.cpp's server behaviour for that text:

- a Hermes-style template (it mentions <tool_call>, so llama.cpp picks the "Hermes 2 Pro" format) with
  --chat-template-file and --jinja: `<tool_call>{...}</tool_call>` becomes message.tool_calls (type "function", an id,
  function {name, arguments}), content null, finish_reason "tool_calls"; streamed, the tool_calls deltas carry index,
  id and name first and the argument pieces add up to the final arguments; without tools or "parse_tool_calls"
  the text stays content; tools together with a grammar are refused ("Cannot use custom grammar constraints with
  tools.");
- `<think>x</think>answer` gives reasoning_content "x" and content "answer" (also streamed), reasoning_format
  "none" keeps it all in the content, "deepseek-legacy" keeps the tags in the streamed content; a template that
  opens the thinking block in the prompt (thinking forced open) makes everything before </think> reasoning, and
  closes the block in the prompt when enable_thinking is false;
- /v1/responses and /v1/messages render the same parse (function_call / reasoning items, tool_use / thinking blocks);
- a template without tool markers and tools in the request: the generic protocol, its system text and the tool
  list llama.cpp adds for a template that does not show tools, and a forced {"tool_call": ...} parsed into a call.
"""
import argparse
import json
import os
import sys
import tempfile

import requests

import test_server as ts
from test_server import Server, check, expect_error, kill_all

# Hermes / Qwen-style: ChatML turns; the thinking block is opened in the prompt unless enable_thinking is false
# (or "always_think" asks for it anyway, which lets the server close it)
HERMES_TEMPLATE = (
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking or always_think is defined %}<think>\n{% endif %}{% endif %}"
    "{#- tool calls: <tool_call>{\"name\": ..., \"arguments\": ...}</tool_call> -#}"
)
# no tool markers, does not print tools: llama.cpp's generic JSON protocol when tools are given
PLAIN_TEMPLATE = (
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

CALL_TEXT = '<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>'
ARGS = '{"city":"Paris"}'
NO_THINK = {"enable_thinking": False}
USER = [{"role": "user", "content": "Weather in Paris?"}]
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]}},
                   "required": ["city"]}}}]


def gbnf(text):
    return "root ::= " + json.dumps(text)


def chat(srv, stream=False, **kw):
    body = {"messages": USER, "max_tokens": 200, "temperature": 0}
    body.update(kw)
    if stream:
        body["stream"] = True
    return requests.post(srv.url("/v1/chat/completions"), json=body, timeout=120, stream=stream)


def sse(r):
    """(event name or None, data) of an SSE body; '[DONE]' stays a string."""
    out, name = [], None
    for raw in r.iter_lines(decode_unicode=True):
        if not raw:
            continue
        if raw.startswith("event: "):
            name = raw[len("event: "):]
        elif raw.startswith("data: "):
            d = raw[len("data: "):]
            out.append((name, d if d == "[DONE]" else json.loads(d)))
            name = None
    return out


def collect_chat_stream(r):
    """What an OpenAI client rebuilds from the chunks: content, reasoning, tool calls by index, finish_reason."""
    content, reasoning, calls, finish, first_tc = "", "", {}, None, {}
    for _, d in sse(r):
        if d == "[DONE]" or not d.get("choices"):
            continue
        ch = d["choices"][0]
        finish = ch.get("finish_reason") or finish
        delta = ch.get("delta", {})
        content += delta.get("content") or ""
        reasoning += delta.get("reasoning_content") or ""
        for tc in delta.get("tool_calls", []):
            c = calls.setdefault(tc["index"], {"id": None, "name": None, "arguments": ""})
            first_tc.setdefault(tc["index"], tc)
            if "id" in tc:
                c["id"] = tc["id"]
            fn = tc.get("function", {})
            if "name" in fn:
                c["name"] = fn["name"]
            c["arguments"] += fn.get("arguments", "")
    return content, reasoning, calls, finish, first_tc


def test_hermes(srv):
    g = gbnf(CALL_TEXT)
    r = chat(srv, grammar=g, parse_tool_calls=True, chat_template_kwargs=NO_THINK)
    if check(r.status_code == 200, "hermes: 200", r.text[:300]):
        ch = r.json()["choices"][0]
        msg = ch["message"]
        check(ch["finish_reason"] == "tool_calls", "hermes: finish_reason tool_calls", ch)
        check(msg.get("content") is None and msg.get("role") == "assistant", "hermes: content null", msg)
        tcs = msg.get("tool_calls") or []
        if check(len(tcs) == 1, "hermes: one tool call", msg):
            tc = tcs[0]
            check(tc.get("type") == "function" and tc["function"] == {"name": "get_weather", "arguments": ARGS},
                  "hermes: the call", tc)
            check(isinstance(tc.get("id"), str) and len(tc["id"]) == 32 and tc["id"].isalnum(),
                  "hermes: a 32-character id (llama.cpp's gen_tool_call_id)", tc)

    r = chat(srv, stream=True, grammar=g, parse_tool_calls=True, chat_template_kwargs=NO_THINK)
    content, reasoning, calls, finish, first = collect_chat_stream(r)
    check(finish == "tool_calls", "hermes stream: finish_reason tool_calls", finish)
    check(content == "" and reasoning == "", "hermes stream: no text deltas", (content, reasoning))
    if check(list(calls) == [0], "hermes stream: one call, index 0", calls):
        check(calls[0]["name"] == "get_weather" and calls[0]["arguments"] == ARGS,
              "hermes stream: argument deltas add up to the arguments", calls)
        check(first[0].get("type") == "function" and "id" in first[0] and first[0]["function"].get("name"),
              "hermes stream: the first delta names the call", first)
        check(isinstance(calls[0]["id"], str) and len(calls[0]["id"]) == 32, "hermes stream: id", calls)

    # without tools or parse_tool_calls the text is the content (llama.cpp sets parse_tool_calls only with tools)
    r = chat(srv, grammar=g, chat_template_kwargs=NO_THINK)
    if check(r.status_code == 200, "hermes no parse: 200", r.text[:300]):
        ch = r.json()["choices"][0]
        check(ch["message"].get("content") == CALL_TEXT and "tool_calls" not in ch["message"] and
              ch["finish_reason"] == "stop", "hermes no parse: text stays content", ch)

    r = chat(srv, grammar=g, tools=TOOLS)
    expect_error(r, 400, "invalid_request_error", "tools with a grammar",
                 "Cannot use custom grammar constraints with tools.")
    r = chat(srv, reasoning_format="deepseek2")
    expect_error(r, 400, "invalid_request_error", "unknown reasoning_format")


def test_reasoning(srv):
    g = gbnf("<think>x</think>answer")
    r = chat(srv, grammar=g, chat_template_kwargs=NO_THINK)
    if check(r.status_code == 200, "think: 200", r.text[:300]):
        ch = r.json()["choices"][0]
        check(ch["message"].get("reasoning_content") == "x" and ch["message"].get("content") == "answer" and
              ch["finish_reason"] == "stop", "think: reasoning_content / content", ch)
    content, reasoning, calls, finish, _ = collect_chat_stream(
        chat(srv, stream=True, grammar=g, chat_template_kwargs=NO_THINK))
    check((reasoning, content, calls, finish) == ("x", "answer", {}, "stop"), "think stream: deltas",
          (reasoning, content, calls, finish))

    r = chat(srv, grammar=g, chat_template_kwargs=NO_THINK, reasoning_format="none")
    if check(r.status_code == 200, "think none: 200", r.text[:300]):
        m = r.json()["choices"][0]["message"]
        check(m.get("content") == "<think>x</think>answer" and "reasoning_content" not in m,
              "reasoning_format none: thoughts stay in the content", m)
    # deepseek-legacy: streamed, the thoughts stay in the content with their tags; the final object splits them
    content, reasoning, _, _, _ = collect_chat_stream(
        chat(srv, stream=True, grammar=g, chat_template_kwargs=NO_THINK, reasoning_format="deepseek-legacy"))
    check((content, reasoning) == ("<think>x</think>answer", ""), "deepseek-legacy stream: tags in content",
          (content, reasoning))
    r = chat(srv, grammar=g, chat_template_kwargs=NO_THINK, reasoning_format="deepseek-legacy")
    if check(r.status_code == 200, "deepseek-legacy: 200", r.text[:300]):
        m = r.json()["choices"][0]["message"]
        check(m.get("reasoning_content") == "x" and m.get("content") == "answer", "deepseek-legacy: split", m)

    # the template opens <think> in the prompt: the output starts inside it
    r = chat(srv, grammar=gbnf("x</think>answer"))
    if check(r.status_code == 200, "forced open: 200", r.text[:300]):
        m = r.json()["choices"][0]["message"]
        check(m.get("reasoning_content") == "x" and m.get("content") == "answer", "forced open: split", m)
    content, reasoning, _, _, _ = collect_chat_stream(chat(srv, stream=True, grammar=gbnf("x</think>answer")))
    check((reasoning, content) == ("x", "answer"), "forced open stream", (reasoning, content))
    # thinking off but the template opened the block anyway: the prompt closes it (llama.cpp appends </think>)
    r = requests.post(srv.url("/apply-template"), json={"messages": USER, "chat_template_kwargs": {
        "enable_thinking": False, "always_think": True}}, timeout=30)
    check(r.status_code == 200 and r.json()["prompt"].endswith("<|im_start|>assistant\n<think>\n</think>"),
          "thinking off: the open block is closed in the prompt", r.text[-200:])
    r = requests.post(srv.url("/apply-template"), json={"messages": USER}, timeout=30)
    check(r.status_code == 200 and r.json()["prompt"].endswith("<|im_start|>assistant\n<think>\n"),
          "thinking on: the block stays open", r.text[-200:])


def test_responses_and_messages(srv):
    # /v1/responses takes the chat request's other fields (grammar, parse_tool_calls) along
    body = {"input": "Weather in Paris?", "max_output_tokens": 200, "temperature": 0, "grammar": gbnf(CALL_TEXT),
            "parse_tool_calls": True, "chat_template_kwargs": NO_THINK}
    r = requests.post(srv.url("/v1/responses"), json=body, timeout=120)
    if check(r.status_code == 200, "responses: 200", r.text[:300]):
        out = r.json()["output"]
        calls = [o for o in out if o.get("type") == "function_call"]
        if check(len(calls) == 1 and len(out) == 1, "responses: one function_call item", out):
            c = calls[0]
            check(c["name"] == "get_weather" and c["arguments"] == ARGS and c["status"] == "completed" and
                  c["id"].startswith("fc_") and c["call_id"] == "call_" + c["id"][3:], "responses: the call item", c)
    body["stream"] = True
    ev = sse(requests.post(srv.url("/v1/responses"), json=body, timeout=120, stream=True))
    args = "".join(d["delta"] for n, d in ev if n == "response.function_call_arguments.delta")
    added = [d["item"] for n, d in ev if n == "response.output_item.added"]
    done = [d for n, d in ev if n == "response.completed"]
    check(args == ARGS, "responses stream: argument deltas", args)
    check(len(added) == 1 and added[0]["type"] == "function_call" and added[0]["name"] == "get_weather",
          "responses stream: function_call item added", added)
    check(len(done) == 1 and done[0]["response"]["output"][0]["arguments"] == ARGS, "responses stream: completed",
          done)

    body = {"input": "Weather in Paris?", "max_output_tokens": 200, "temperature": 0,
            "grammar": gbnf("<think>x</think>answer"), "chat_template_kwargs": NO_THINK}
    r = requests.post(srv.url("/v1/responses"), json=body, timeout=120)
    if check(r.status_code == 200, "responses think: 200", r.text[:300]):
        out = r.json()["output"]
        check([o["type"] for o in out] == ["reasoning", "message"] and
              out[0]["content"] == [{"text": "x", "type": "reasoning_text"}] and
              out[1]["content"][0]["text"] == "answer", "responses: reasoning and message items", out)

    # /v1/messages passes no grammar: the template's forced-open thinking block takes the whole greedy output
    ab = {"model": "x", "max_tokens": 12, "temperature": 0, "messages": USER}
    r = requests.post(srv.url("/v1/messages"), json=ab, timeout=120)
    c = chat(srv, max_tokens=12)
    if check(r.status_code == 200 and c.status_code == 200, "messages think: 200", r.text[:300]):
        blocks = r.json()["content"]
        want = c.json()["choices"][0]["message"].get("reasoning_content")
        check(len(blocks) >= 1 and blocks[0]["type"] == "thinking" and blocks[0]["thinking"] == want and want,
              "messages: the thinking block is the chat reasoning_content", (blocks, want))
    ab["stream"] = True
    ev = sse(requests.post(srv.url("/v1/messages"), json=ab, timeout=120, stream=True))
    thinking = "".join(d["delta"]["thinking"] for n, d in ev
                       if n == "content_block_delta" and d["delta"]["type"] == "thinking_delta")
    starts = [d["content_block"]["type"] for n, d in ev if n == "content_block_start"]
    sig = [d for n, d in ev if n == "content_block_delta" and d["delta"]["type"] == "signature_delta"]
    check(starts[:1] == ["thinking"] and thinking == want and len(sig) == 1, "messages stream: thinking block",
          (starts, thinking, want))


def test_generic(srv):
    body = {"messages": USER, "tools": TOOLS}
    r = requests.post(srv.url("/apply-template"), json=body, timeout=30)
    if check(r.status_code == 200, "generic prompt: 200", r.text[:300]):
        p = r.json()["prompt"]
        sys_text = ("<|im_start|>system\nRespond in JSON format, either with `tool_call` (a request to call tools) or "
                    "with `response` reply to the user's request\n\n"
                    "You can call any of the following tools to satisfy the user's requests: "
                    + json.dumps(TOOLS, indent=2) + "<|im_end|>\n")
        check(p.startswith(sys_text), "generic prompt: llama.cpp's system text and tool list", p[:600])
    # tool_choice "required": the grammar of the generic protocol forces a call of the one tool
    r = chat(srv, tools=TOOLS, tool_choice="required", max_tokens=600)
    if check(r.status_code == 200, "generic: 200", r.text[:300]):
        ch = r.json()["choices"][0]
        tcs = ch["message"].get("tool_calls") or []
        ok = check(ch["finish_reason"] == "tool_calls" and len(tcs) == 1, "generic: a forced tool call", ch)
        if ok:
            args = json.loads(tcs[0]["function"]["arguments"])
            check(tcs[0]["function"]["name"] == "get_weather" and args.get("city") in ("Paris", "Rome"),
                  "generic: name and schema-valid arguments", tcs[0])
    # response_format json_object without a schema stands for the schema {} (llama.cpp's json_value(response_format,
    # "schema", json::object())): the generic grammar's "response" branch is the one an explicit {} gives
    grammars = []
    for rf in ({"type": "json_object"}, {"type": "json_object", "schema": {}}):
        r = chat(srv, tools=TOOLS, tool_choice="auto", max_tokens=1, response_format=rf)
        check(r.status_code == 200, "generic + response_format %s: 200" % rf, r.text[:300])
        grammars.append(requests.get(srv.url("/slots"), timeout=30).json()[0]["params"].get("grammar"))
    check(grammars[0] and grammars[0] == grammars[1], "generic: a json_object without schema is the schema {}",
          grammars)
    # Anthropic tools and tool_choice {"type": "any"} take the same path: a tool_use block
    ab = {"model": "x", "max_tokens": 600, "temperature": 0, "messages": USER, "tool_choice": {"type": "any"},
          "tools": [{"name": "get_weather", "description": "The weather in a city",
                     "input_schema": TOOLS[0]["function"]["parameters"]}]}
    r = requests.post(srv.url("/v1/messages"), json=ab, timeout=120)
    if check(r.status_code == 200, "generic messages: 200", r.text[:300]):
        j = r.json()
        uses = [b for b in j["content"] if b["type"] == "tool_use"]
        check(j["stop_reason"] == "tool_use" and len(uses) == 1 and uses[0]["name"] == "get_weather" and
              uses[0]["input"].get("city") in ("Paris", "Rome") and uses[0]["id"], "generic messages: tool_use", j)
    ab["stream"] = True
    ev = sse(requests.post(srv.url("/v1/messages"), json=ab, timeout=120, stream=True))
    starts = [d["content_block"] for n, d in ev if n == "content_block_start"]
    pj = "".join(d["delta"]["partial_json"] for n, d in ev
                 if n == "content_block_delta" and d["delta"]["type"] == "input_json_delta")
    md = [d for n, d in ev if n == "message_delta"]
    if check(len(starts) == 1 and starts[0]["type"] == "tool_use", "generic messages stream: tool_use block", starts):
        try:
            city = json.loads(pj).get("city")
        except ValueError:
            city = None
        check(city in ("Paris", "Rome"), "generic messages stream: input_json_delta", pj)
    check(len(md) == 1 and md[0]["delta"]["stop_reason"] == "tool_use", "generic messages stream: stop_reason", md)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    data_dir, _ = ts.data_and_model(args.data)
    model = os.path.join(data_dir, "models", "stories260K-f32.gguf")
    if not os.path.exists(model):
        return ts.missing_data(model)
    with tempfile.TemporaryDirectory() as tmp:
        with ts.guarded():
            for name, text, tests in (("hermes", HERMES_TEMPLATE, (test_hermes, test_reasoning,
                                                                    test_responses_and_messages)),
                                      ("plain", PLAIN_TEMPLATE, (test_generic,))):
                path = os.path.join(tmp, name + ".jinja")
                with open(path, "w") as f:
                    f.write(text)
                srv = Server(args.server, ["-m", model, "-c", "2048", "-np", "1", "--jinja",
                                           "--chat-template-file", path]).start()
                try:
                    for t in tests:
                        t(srv)
                finally:
                    rc = srv.stop()
                check(rc == 0, f"{name} server: clean exit", rc)
    return ts.finish()


if __name__ == "__main__":
    sys.exit(main())
