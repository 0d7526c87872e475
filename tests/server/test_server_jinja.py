#!/usr/bin/env python3
"""llama-server with a Jinja chat template (--jinja, the default): /apply-template and /v1/chat/completions render
the --chat-template text with the request's chat_template_kwargs (over --chat-template-kwargs, and enable_thinking
over --reasoning-budget 0); /props reports chat_template_caps.

Model: stories260K-f32.gguf (it has no template of its own). The expected prompts are derived by hand from the
template below and Jinja's rules; the BOS/EOS texts come from /props, and the leading BOS the template writes is
dropped because the vocabulary adds one itself (llama.cpp does the same, common/chat.cpp), which /tokenize tells.
"""
import argparse
import os
import sys

import requests

import test_server as ts
from test_server import Server, check, expect_error, kill_all

TEMPLATE = (
    "{{- bos_token }}"
    "{% for m in messages %}"
    "{% if m.role == 'tool' %}{{ raise_exception('tool messages are not supported') }}{% endif %}"
    "{% if m.role == 'system' %}[SYS]{{ m.content }}"
    "{% else %}<{{ m.role }}>{{ m.content | trim }}{% if m.role == 'assistant' %}{{ eos_token }}{% endif %}"
    "{% endif %}{{ '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<assistant>"
    "{% if not enable_thinking %}<think></think>{% endif %}"
    "{% if mode is defined %}[{{ mode }}]{% endif %}"
    "{% endif %}"
)

MSGS = [
    {"role": "system", "content": "Be brief"},
    {"role": "user", "content": "  Hi  "},
    {"role": "assistant", "content": "Hello"},
    {"role": "user", "content": [{"type": "text", "text": "Tools?"}, {"type": "text", "text": "Now"}]},
]


def expected(bos, eos, add_bos, thinking=True, mode=None, gen=True):
    text = bos + "[SYS]Be brief\n<user>Hi\n<assistant>Hello" + eos + "\n<user>Tools?\nNow\n"
    if gen:
        text += "<assistant>" + ("" if thinking else "<think></think>") + (f"[{mode}]" if mode else "")
    if add_bos and text.startswith(bos):
        text = text[len(bos):]
    return text


def apply(srv, body):
    return requests.post(srv.url("/apply-template"), json=body, timeout=30)


def test_jinja_server(srv):
    props = requests.get(srv.url("/props"), timeout=10).json()
    bos, eos = props["bos_token"], props["eos_token"]
    check(props.get("chat_template") == TEMPLATE, "props: chat_template is the --chat-template text")
    # the probes of llama.cpp's caps_get, hand-evaluated on TEMPLATE: the system text is printed, tools and tool
    # calls are not, content parts print as a Python list (so typed content is not supported)
    check(props.get("chat_template_caps") == {
        "supports_parallel_tool_calls": False, "supports_preserve_reasoning": False, "supports_string_content": True,
        "supports_system_role": True, "supports_tool_calls": False, "supports_tools": False,
        "supports_typed_content": False}, "props: chat_template_caps", props.get("chat_template_caps"))
    r = requests.post(srv.url("/tokenize"), json={"content": "", "add_special": True}, timeout=10)
    add_bos = r.status_code == 200 and len(r.json()["tokens"]) == 1
    check(bos != "" and eos != "", "props: bos/eos texts", (bos, eos))

    r = apply(srv, {"messages": MSGS})
    check(r.status_code == 200 and r.json().get("prompt") == expected(bos, eos, add_bos),
          "apply-template: default (enable_thinking true)", r.text)
    r = apply(srv, {"messages": MSGS, "chat_template_kwargs": {"enable_thinking": False, "mode": "fast"}})
    check(r.status_code == 200 and r.json().get("prompt") == expected(bos, eos, add_bos, False, "fast"),
          "apply-template: chat_template_kwargs", r.text)
    r = apply(srv, {"messages": MSGS, "add_generation_prompt": False})
    check(r.status_code == 200 and r.json().get("prompt") == expected(bos, eos, add_bos, gen=False),
          "apply-template: add_generation_prompt false", r.text)

    r = apply(srv, {"messages": MSGS + [{"role": "tool", "content": "x"}]})
    expect_error(r, 400, "invalid_request_error", "apply-template: raise_exception")
    check("tool messages are not supported" in r.text, "apply-template: the template's message", r.text)
    r = apply(srv, {"messages": MSGS, "chat_template_kwargs": "no"})
    expect_error(r, 400, "invalid_request_error", "apply-template: chat_template_kwargs not an object")
    # llama.cpp's message for a string enable_thinking (it reads the kwarg as a boolean), on both endpoints
    msg = "invalid type for \"enable_thinking\" (expected boolean, got string)"
    for path, extra in (("/apply-template", {}), ("/v1/chat/completions", {"max_tokens": 1})):
        body = dict(extra, messages=MSGS, chat_template_kwargs={"enable_thinking": "no"})
        r = requests.post(srv.url(path), json=body, timeout=30)
        check(r.status_code == 400 and r.json()["error"]["message"] == msg, f"{path}: string enable_thinking", r.text)

    # the chat endpoint renders the same prompt: its token count is that of the rendered text
    kw = {"enable_thinking": False, "mode": "m"}
    r = requests.post(srv.url("/v1/chat/completions"), json={"messages": MSGS, "max_tokens": 1,
                                                               "chat_template_kwargs": kw}, timeout=60)
    t = requests.post(srv.url("/tokenize"), json={"content": expected(bos, eos, add_bos, False, "m"),
                                                  "add_special": True}, timeout=10)
    if check(r.status_code == 200 and t.status_code == 200, "chat completion: 200", r.text[:300]):
        check(r.json()["usage"]["prompt_tokens"] == len(t.json()["tokens"]), "chat completion: prompt tokens",
              (r.json()["usage"], len(t.json()["tokens"])))
    r = requests.post(srv.url("/v1/chat/completions"), json={"messages": MSGS + [{"role": "tool", "content": "x"}],
                                                               "max_tokens": 1}, timeout=60)
    check(r.status_code == 400 and "tool messages are not supported" in r.text, "chat completion: template error",
          r.text[:300])


def test_default_kwargs(binary, model):
    # --chat-template-kwargs are the defaults a request's kwargs override key by key, enable_thinking included;
    # --reasoning-budget 0 turns thinking off unless a kwarg turns it on (llama.cpp's server)
    for args, cases in (
            (["--chat-template-kwargs", '{"enable_thinking": false, "mode": "d"}'],
             (({}, False, "d"), ({"mode": "r"}, False, "r"), ({"enable_thinking": True}, True, "d"))),
            (["--reasoning-budget", "0"],
             (({}, False, None), ({"mode": "r"}, False, "r"), ({"enable_thinking": True}, True, None)))):
        srv = Server(binary, ["-m", model, "-c", "256", "-np", "1", "--chat-template", TEMPLATE] + args).start()
        try:
            props = requests.get(srv.url("/props"), timeout=10).json()
            bos, eos = props["bos_token"], props["eos_token"]
            r = requests.post(srv.url("/tokenize"), json={"content": "", "add_special": True}, timeout=10)
            add_bos = r.status_code == 200 and len(r.json()["tokens"]) == 1
            for kw, thinking, mode in cases:
                r = apply(srv, {"messages": MSGS, "chat_template_kwargs": kw})
                check(r.status_code == 200 and r.json().get("prompt") == expected(bos, eos, add_bos, thinking, mode),
                      f"{args[0]}: request kwargs {kw}", r.text)
        finally:
            rc = srv.stop()
        check(rc == 0, f"{args[0]} server: clean exit", rc)


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
        srv = Server(args.server, ["-m", model, "-c", "256", "-np", "1", "--chat-template", TEMPLATE]).start()
        try:
            test_jinja_server(srv)
        finally:
            rc = srv.stop()
        check(rc == 0, "jinja server: clean exit", rc)
        test_default_kwargs(args.server, model)
        # --no-jinja keeps the built-in formatter only, which cannot use this text: the server refuses to start
        srv = Server(args.server, ["-m", model, "-c", "256", "-np", "1", "--no-jinja", "--chat-template", TEMPLATE])
        failed = False
        try:
            srv.start(limit_s=60)
        except RuntimeError:
            failed = True
        check(failed, "--no-jinja with a Jinja-only template: refused")
        srv.stop()
    return ts.finish()


if __name__ == "__main__":
    sys.exit(main())
