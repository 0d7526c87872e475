#!/usr/bin/env python3
"""Tool-call grammars in llama-server (common/chat-grammar): the format's grammar built from the request's tools,
lazy unless tool_choice is "required", end to end on stories260K-f32.gguf, which never writes a tool call by itself.

- Hermes-style template (it mentions <tool_call>) + tools + tool_choice "required": the grammar applies from the
  first token, so greedy decoding gives a tool call the Hermes parser reads (get_weather with a city from the
  schema's enum), finish_reason "tool_calls"; streamed, the deltas add up to the same call.
- tool_choice "auto": the grammar is lazy and waits for a call at the start of the output; the model writes none,
  so the answer is the same text /completion gives for the same prompt without any grammar (200, valid JSON).
  /slots shows llama.cpp's grammar_lazy / grammar_triggers for each case.
- tool_choice "none": the template sees no tools (the prompt does not list them).
- Mistral Nemo ([TOOL_CALLS]) and Llama 3.x (ipython) templates with "required": [TOOL_CALLS][{..., "id"}] and
  {"name": ..., "parameters": ...} calls, parsed.
- /completion takes llama.cpp's grammar_lazy / grammar_triggers fields: a lazy grammar without triggers and a
  malformed trigger are 400s; a trigger that never comes leaves the text alone; a word / pattern trigger the model
  does write wakes the grammar there (free text up to the trigger, then the grammar's text, then EOS); a one-token
  trigger word must be preserved and becomes a token trigger. A chat request's own lazy-grammar fields give way
  to the format's (not read, so malformed ones are no error; without tools nothing is lazy).
"""
import argparse
import json
import os
import re
import sys
import tempfile

import requests

import test_server as ts
from test_server import Server, check, kill_all
from test_server_chat_parse import collect_chat_stream

# the prompt shows the tools (so "none" can be seen leaving them out); thinking off unless asked
HERMES_TEMPLATE = (
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{%- if tools %}TOOLS: {% for t in tools %}{{ t.function.name }} {% endfor %}\n{% endif %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    "{#- tool calls: <tool_call>{\"name\": ..., \"arguments\": ...}</tool_call> -#}"
)
NEMO_TEMPLATE = (
    "{%- for m in messages %}[INST] {{ m.content }} [/INST]{% endfor %}"
    "{#- tool calls: [TOOL_CALLS][{\"name\": ..., \"arguments\": ..., \"id\": ...}] -#}"
)
LLAMA3_TEMPLATE = (
    "{%- for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}<|eot_id|>{% endfor %}"
    "{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
    "{#- tool results: <|start_header_id|>ipython<|end_header_id|> -#}"
)

USER = [{"role": "user", "content": "Weather in Paris?"}]
CITIES = ("Paris", "Rome")
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": list(CITIES)}},
                   "required": ["city"]}}}]


def chat(srv, stream=False, **kw):
    # the grammar lets the model put whitespace between the JSON tokens, which this one likes: room for it
    body = {"messages": USER, "max_tokens": 600, "temperature": 0, "tools": TOOLS}
    body.update(kw)
    if stream:
        body["stream"] = True
    return requests.post(srv.url("/v1/chat/completions"), json=body, timeout=120, stream=stream)


def slot_params(srv):
    return requests.get(srv.url("/slots"), timeout=30).json()[0]["params"]


def valid_call(tc):
    try:
        args = json.loads(tc["function"]["arguments"])
    except (ValueError, KeyError, TypeError):
        return False
    return tc["function"]["name"] == "get_weather" and args.get("city") in CITIES and list(args) == ["city"]


def test_hermes(srv):
    r = chat(srv, tool_choice="required")
    if check(r.status_code == 200, "hermes required: 200", r.text[:300]):
        ch = r.json()["choices"][0]
        tcs = ch["message"].get("tool_calls") or []
        check(ch["finish_reason"] == "tool_calls" and len(tcs) == 1 and valid_call(tcs[0]),
              "hermes required: the grammar forces a parseable get_weather call", ch)
        check(ch["message"].get("content") is None, "hermes required: no content besides the call", ch["message"])
        call = tcs[0]["function"] if tcs else None
    p = slot_params(srv)
    check(p.get("grammar_lazy") is False and p.get("grammar", "").find("get_weather") >= 0,
          "hermes required: /slots shows a non-lazy grammar with the tool", {k: p.get(k) for k in ("grammar_lazy",)})

    content, reasoning, calls, finish, _ = collect_chat_stream(chat(srv, stream=True, tool_choice="required"))
    c0 = calls.get(0)
    check(finish == "tool_calls" and len(calls) == 1 and c0 is not None and
          valid_call({"function": {"name": c0["name"], "arguments": c0["arguments"]}}) and content == "",
          "hermes required, streamed: the deltas add up to one valid call", (content, calls, finish))
    if c0 is not None and call is not None:
        check({"name": c0["name"], "arguments": c0["arguments"]} == call, "hermes: streamed call = non-streamed call",
              (c0, call))

    # auto: lazy, never triggered by this model: the text is the grammar-free one for the same prompt
    r = chat(srv, tool_choice="auto", max_tokens=150)
    ok = check(r.status_code == 200, "hermes auto: 200", r.text[:300])
    try:
        j = r.json()
    except ValueError:
        j = None
        ok = check(False, "hermes auto: valid JSON", r.text[:300])
    p = slot_params(srv)
    trig = p.get("grammar_triggers") or []
    check(p.get("grammar_lazy") is True and {"type": 1, "value": "<function=get_weather>"} in trig and
          any(t.get("type") == 3 and "get_weather" in t.get("value", "") for t in trig),
          "hermes auto: /slots shows a lazy grammar and llama.cpp's triggers", trig)
    if ok and j:
        prompt = requests.post(srv.url("/apply-template"), json={"messages": USER, "tools": TOOLS},
                               timeout=30).json()["prompt"]
        free = requests.post(srv.url("/completion"), json={"prompt": prompt, "n_predict": 150, "temperature": 0},
                             timeout=120).json()
        msg = j["choices"][0]["message"]
        check(msg.get("content") == free["content"] and not msg.get("tool_calls"),
              "hermes auto: the lazy grammar leaves the untriggered text alone", (msg, free["content"][:200]))

    # the format's lazy grammar replaces the request's own lazy-grammar fields (llama.cpp's
    # oaicompat_chat_params_parse): malformed ones in a chat request are not read, and without tools nothing is lazy
    r = chat(srv, tool_choice="auto", max_tokens=4, grammar_lazy=True, grammar_triggers=[{"type": 7}],
             preserved_tokens=5)
    p = slot_params(srv)
    check(r.status_code == 200 and p.get("grammar_lazy") is True and p.get("grammar_triggers") == trig,
          "hermes auto: the request's own lazy-grammar fields give way to the format's", (r.text[:200], p))
    r = chat(srv, tools=None, max_tokens=4, grammar_lazy=True, grammar_triggers="x")
    p = slot_params(srv)
    check(r.status_code == 200 and p.get("grammar_lazy") is False and p.get("grammar_triggers") == [] and
          p.get("preserved_tokens") == [], "chat without tools: no lazy grammar, whatever the request says",
          (r.text[:200], p))

    # none: the tools do not reach the template
    with_tools = requests.post(srv.url("/apply-template"), json={"messages": USER, "tools": TOOLS}, timeout=30)
    none = requests.post(srv.url("/apply-template"), json={"messages": USER, "tools": TOOLS, "tool_choice": "none"},
                         timeout=30)
    check("TOOLS: get_weather" in with_tools.json()["prompt"] and "get_weather" not in none.json()["prompt"],
          "tool_choice none: the prompt lists no tools", (with_tools.text, none.text))
    r = chat(srv, tool_choice="none", max_tokens=8)
    check(r.status_code == 200 and not r.json()["choices"][0]["message"].get("tool_calls") and
          slot_params(srv).get("grammar") == "", "tool_choice none: no grammar, no calls", r.text[:300])

    # llama.cpp's lazy-grammar request fields on /completion
    base = {"prompt": "Once", "n_predict": 4, "grammar": "root ::= \"x\""}
    r = requests.post(srv.url("/completion"), json=dict(base, grammar_lazy=True), timeout=30)
    check(r.status_code == 400 and r.json()["error"]["message"] == "Error: no triggers set for lazy grammar!",
          "lazy grammar without triggers: 400", r.text)
    r = requests.post(srv.url("/completion"), json=dict(base, grammar_lazy=True, grammar_triggers=[{"type": 7}]),
                      timeout=30)
    check(r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error", "malformed trigger: 400",
          r.text)
    r = requests.post(srv.url("/completion"), json=dict(base, grammar_lazy=True, n_predict=6, temperature=0,
                                                        grammar_triggers=[{"type": 1, "value": "never-written"}]),
                      timeout=30)
    plain = requests.post(srv.url("/completion"), json={"prompt": "Once", "n_predict": 6, "temperature": 0}, timeout=30)
    check(r.status_code == 200 and r.json()["content"] == plain.json()["content"],
          "completion: a lazy grammar whose trigger never comes constrains nothing", (r.text[:200], plain.text[:200]))
    # a word trigger that is one token ("a" is one in this vocabulary) must be a preserved token, and then
    # triggers on that token (llama.cpp's params_from_json_cmpl); /slots shows it as a token trigger
    one_tok = [{"type": 1, "value": "a"}]
    r = requests.post(srv.url("/completion"), json=dict(base, grammar_lazy=True, grammar_triggers=one_tok),
                      timeout=30)
    check(r.status_code == 400 and
          r.json()["error"]["message"] == "Grammar trigger word should be marked as preserved token: a",
          "one-token trigger word not preserved: 400", r.text)
    r = requests.post(srv.url("/completion"), json=dict(base, grammar_lazy=True, grammar_triggers=one_tok,
                                                        preserved_tokens=["a", "a"]), timeout=30)
    sp = slot_params(srv)
    kept = sp.get("preserved_tokens") or []
    check(r.status_code == 200 and len(kept) == 1 and
          sp.get("grammar_triggers") == [{"type": 0, "value": "a", "token": kept[0]}],
          "preserved trigger word: a token trigger on the preserved token (kept once)",
          (r.text[:200], sp.get("grammar_triggers"), kept))
    # a trigger the model does write: the free text up to it, then what the grammar demands, then the end
    text = requests.post(srv.url("/completion"), json={"prompt": "Once upon a time", "n_predict": 16,
                                                       "temperature": 0}, timeout=30).json()["content"]
    for ttype, value in ((1, text[4:8]), (2, re.escape(text[4:8]))):
        word = text[4:8]
        r = requests.post(srv.url("/completion"), json={
            "prompt": "Once upon a time", "n_predict": 16, "temperature": 0, "grammar_lazy": True,
            "grammar": "root ::= " + json.dumps(word) + " [a-z]? \"!!!\"",
            "grammar_triggers": [{"type": ttype, "value": value}]}, timeout=30).json()
        want = re.escape(text[:text.find(word) + 4]) + "[a-z]?!!!"
        check(re.fullmatch(want, r.get("content", "")) is not None and r.get("stop_type") == "eos",
              f"completion: trigger type {ttype} wakes the grammar at {word!r}", (text, r.get("content")))


def test_nemo(srv):
    r = chat(srv, tool_choice="required")
    if check(r.status_code == 200, "nemo required: 200", r.text[:300]):
        ch = r.json()["choices"][0]
        tcs = ch["message"].get("tool_calls") or []
        check(ch["finish_reason"] == "tool_calls" and len(tcs) == 1 and valid_call(tcs[0]),
              "nemo required: a [TOOL_CALLS] call", ch)
        # the model's 9-character id (the schema's pattern) is the call's id
        check(len(tcs) == 1 and len(tcs[0].get("id", "")) == 9 and tcs[0]["id"].isalnum(),
              "nemo required: the id the grammar constrained", tcs)
    p = slot_params(srv)
    check(p.get("grammar_lazy") is False and p.get("grammar", "").startswith("root ::= \"[TOOL_CALLS]\""),
          "nemo required: non-lazy [TOOL_CALLS] grammar", p.get("grammar", "")[:200])
    r = chat(srv, tool_choice="auto", max_tokens=8)
    p = slot_params(srv)
    check(r.status_code == 200 and p.get("grammar_lazy") is True and
          p.get("grammar_triggers") == [{"type": 1, "value": "[TOOL_CALLS]"}],
          "nemo auto: lazy, word trigger [TOOL_CALLS]", p.get("grammar_triggers"))


def test_llama3(srv):
    r = chat(srv, tool_choice="required")
    if check(r.status_code == 200, "llama 3.x required: 200", r.text[:300]):
        ch = r.json()["choices"][0]
        tcs = ch["message"].get("tool_calls") or []
        check(ch["finish_reason"] == "tool_calls" and len(tcs) == 1 and valid_call(tcs[0]),
              "llama 3.x required: a {\"name\", \"parameters\"} call", ch)
    p = slot_params(srv)
    check(p.get("grammar_lazy") is False, "llama 3.x required: not lazy", p.get("grammar_lazy"))


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
            for name, text, test in (("hermes", HERMES_TEMPLATE, test_hermes), ("nemo", NEMO_TEMPLATE, test_nemo),
                                     ("llama3", LLAMA3_TEMPLATE, test_llama3)):
                path = os.path.join(tmp, name + ".jinja")
                with open(path, "w") as f:
                    f.write(text)
                srv = Server(args.server, ["-m", model, "-c", "2048", "-np", "1", "--jinja",
                                           "--chat-template-file", path]).start()
                try:
                    test(srv)
                finally:
                    rc = srv.stop()
                check(rc == 0, f"{name} server: clean exit", rc)
    return ts.finish()


if __name__ == "__main__":
    sys.exit(main())
