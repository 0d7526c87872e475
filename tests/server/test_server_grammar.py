#!/usr/bin/env python3
"""llama-server grammar fields (llama.cpp's request API) on the tiny stories260K model.

- /completion and /v1/completions: "json_schema" (converted to GBNF) and "grammar"; /v1/chat/completions:
  "response_format" {"type":"json_object"} (any object, or the "schema" inside) and
  {"type":"json_schema","json_schema":{"schema":...}}. The generated text must parse as JSON and match the schema
  (checked here in Python, independently of the converter); a streamed answer too.
- Bad input is a 400 in llama.cpp's error shape: a grammar that does not parse ("Failed to initialize samplers:
  failed to parse grammar", also when streaming), a schema that cannot be converted, json_schema together with
  grammar, an unknown response_format type. The server keeps serving afterwards.
- /slots and the response's generation_settings report the grammar used; /props the command line's (-j).
- -j with a bad schema stops the program with exit status 1.
"""
import argparse
import json
import os
import sys

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import harness  # noqa: E402
import test_server as ts  # noqa: E402

SCHEMA_A = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
SCHEMA_B = {"type": "object", "properties": {"b": {"type": "boolean"}, "c": {"enum": ["x", "y"]}},
            "required": ["b", "c"], "additionalProperties": False}


def check(cond, what, detail=None):
    if not cond and detail is not None:
        print(f"  detail of '{what}': {detail!r}"[:2000], file=sys.stderr)
    return harness.check(cond, what)


def post(srv, path, body, stream=False):
    return requests.post(srv.url(path), json=body, timeout=300, stream=stream)


def parse(text):
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def is_a(v):
    return isinstance(v, dict) and set(v) == {"a"} and isinstance(v["a"], int) and not isinstance(v["a"], bool)


def is_b(v):
    return (isinstance(v, dict) and set(v) == {"b", "c"} and isinstance(v["b"], bool) and v["c"] in ("x", "y"))


def is_error(r, status, message_start):
    try:
        e = r.json().get("error", {})
    except ValueError:
        return False
    return (r.status_code == status and e.get("code") == status and e.get("type") == "invalid_request_error" and
            str(e.get("message", "")).startswith(message_start))


def test_completion(srv):
    for seed in (1, 2, 3):
        r = post(srv, "/completion", {"prompt": "Once upon a time", "n_predict": 128, "seed": seed,
                                      "json_schema": SCHEMA_A})
        d = r.json()
        v = parse(d.get("content"))
        check(r.status_code == 200 and d.get("stop_type") == "eos" and is_a(v),
              f"/completion json_schema (seed {seed}): the text is an object with an integer 'a'", d.get("content"))
        gs = d.get("generation_settings", {}).get("grammar", "")
        check(gs.startswith("a-kv ::= ") and "root ::= " in gs, "generation_settings reports the grammar", gs)
    r = post(srv, "/completion", {"prompt": "Lily", "n_predict": 128, "seed": 5, "json_schema": SCHEMA_B})
    v = parse(r.json().get("content"))
    check(is_b(v), "/completion json_schema with enum / boolean / no additional properties", r.json().get("content"))
    # grammar wins over json_schema when both are given (llama.cpp's params_from_json_cmpl)
    r = post(srv, "/completion", {"prompt": "Once", "n_predict": 16, "seed": 1, "grammar": 'root ::= "ok"',
                                  "json_schema": SCHEMA_A})
    check(r.status_code == 200 and r.json().get("content") == "ok", "grammar preferred to json_schema", r.text)
    r = post(srv, "/v1/completions", {"prompt": "Once", "max_tokens": 32, "seed": 7,
                                      "json_schema": {"enum": ["yes", "no"]}})
    text = (r.json().get("choices") or [{}])[0].get("text")
    check(r.status_code == 200 and parse(text) in ("yes", "no"), "/v1/completions json_schema enum", text)
    # streamed: the concatenated pieces are the schema's instance
    r = post(srv, "/completion", {"prompt": "Once upon a time", "n_predict": 128, "seed": 1, "stream": True,
                                  "json_schema": SCHEMA_A}, stream=True)
    parts = []
    for line in r.iter_lines():
        if line.startswith(b"data: "):
            ev = json.loads(line[6:])
            parts.append(ev.get("content", ""))
    check(r.status_code == 200 and is_a(parse("".join(parts))), "streamed /completion json_schema", "".join(parts))
    slots = requests.get(srv.url("/slots"), timeout=10).json()
    check(any(s.get("params", {}).get("grammar", "").startswith("a-kv ::= ") for s in slots),
          "/slots params report the last request's grammar", [s.get("params", {}).get("grammar") for s in slots])
    props = requests.get(srv.url("/props"), timeout=10).json()
    check(props.get("default_generation_settings", {}).get("params", {}).get("grammar") == "",
          "/props: no default grammar without -j", props.get("default_generation_settings"))


def test_chat(srv):
    msgs = [{"role": "user", "content": "Tell me a story."}]
    r = post(srv, "/v1/chat/completions", {"messages": msgs, "max_tokens": 128, "seed": 1,
                                           "response_format": {"type": "json_schema",
                                                               "json_schema": {"name": "a", "schema": SCHEMA_A}}})
    content = ((r.json().get("choices") or [{}])[0].get("message") or {}).get("content")
    check(r.status_code == 200 and is_a(parse(content)), "chat response_format json_schema", r.text)
    r = post(srv, "/v1/chat/completions", {"messages": msgs, "max_tokens": 128, "seed": 2,
                                           "response_format": {"type": "json_object", "schema": SCHEMA_B}})
    content = ((r.json().get("choices") or [{}])[0].get("message") or {}).get("content")
    check(r.status_code == 200 and is_b(parse(content)), "chat response_format json_object with schema", r.text)
    r = post(srv, "/v1/chat/completions", {"messages": msgs, "max_tokens": 200, "seed": 3,
                                           "response_format": {"type": "json_object"}})
    d = r.json()
    content = ((d.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
    finish = (d.get("choices") or [{}])[0].get("finish_reason")
    # any JSON object: complete when the model stopped, else a prefix of one
    check(r.status_code == 200 and content.lstrip().startswith("{") and
          (finish != "stop" or isinstance(parse(content), dict)), "chat response_format json_object", d)
    r = post(srv, "/v1/chat/completions", {"messages": msgs, "max_tokens": 8, "response_format": {"type": "text"}})
    check(r.status_code == 200, "chat response_format text", r.text)


def test_errors(srv):
    for stream in (False, True):
        r = post(srv, "/completion", {"prompt": "Once", "n_predict": 4, "grammar": "root ::= undefined-rule",
                                      "stream": stream})
        check(is_error(r, 400, "Failed to initialize samplers: failed to parse grammar"),
              f"grammar that does not parse: 400 (stream {stream})", (r.status_code, r.text))
    r = post(srv, "/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "grammar": "root ::= (",
                                           "max_tokens": 4})
    check(is_error(r, 400, "Failed to initialize samplers"), "chat: bad grammar 400", (r.status_code, r.text))
    r = post(srv, "/completion", {"prompt": "Once", "n_predict": 4, "json_schema": {"type": "kaboom"}})
    check(is_error(r, 400, "\"json_schema\": JSON schema conversion failed"), "bad json_schema 400",
          (r.status_code, r.text))
    r = post(srv, "/completion", {"prompt": "Once", "n_predict": 4,
                                  "json_schema": {"type": "string", "pattern": "^a]$"}})
    check(is_error(r, 400, "\"json_schema\": JSON schema conversion failed"), "bad pattern 400 (no hang)",
          (r.status_code, r.text))
    r = post(srv, "/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "max_tokens": 4,
                                           "response_format": {"type": "xml"}})
    check(is_error(r, 400, "response_format type must be one of"), "unknown response_format type 400",
          (r.status_code, r.text))
    r = post(srv, "/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "max_tokens": 4,
                                           "json_schema": SCHEMA_A, "grammar": 'root ::= "x"'})
    check(is_error(r, 400, "Cannot use both json_schema and grammar"), "chat json_schema + grammar 400",
          (r.status_code, r.text))
    r = post(srv, "/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "max_tokens": 4,
                                           "response_format": {"type": "json_schema",
                                                               "json_schema": {"schema": {"$ref": "#/nowhere"}}}})
    check(is_error(r, 400, "JSON schema conversion failed"), "chat: unconvertible schema 400", (r.status_code, r.text))
    r = requests.get(srv.url("/health"), timeout=10)
    check(r.status_code == 200, "server healthy after the errors")
    r = post(srv, "/completion", {"prompt": "Once", "n_predict": 16, "grammar": 'root ::= "fine"'})
    check(r.status_code == 200 and r.json().get("content") == "fine", "a good grammar after the errors", r.text)


def test_command_line(binary, model):
    srv = ts.Server(binary, ["-m", model, "-c", "256", "-np", "1", "-t", "2", "-j", '{"type": "boolean"}']).start()
    try:
        props = requests.get(srv.url("/props"), timeout=10).json()
        g = props.get("default_generation_settings", {}).get("params", {}).get("grammar", "")
        check(g.startswith('root ::= ("true" | "false") space'), "-j: /props reports the converted grammar", g)
        r = post(srv, "/completion", {"prompt": "Once", "n_predict": 16, "seed": 1})
        check(r.status_code == 200 and parse(r.json().get("content")) in (True, False),
              "-j: requests without a grammar follow it", r.text)
        r = post(srv, "/completion", {"prompt": "Once", "n_predict": 16, "grammar": ""})
        check(r.status_code == 200, "an empty request grammar replaces -j", r.text)
    finally:
        srv.stop()
    rc, out, err = harness.run([binary, "-m", model, "-j", '{"type": "kaboom"}'], timeout=60)
    check(rc == 1 and "JSON schema conversion failed" in err, "-j with a bad schema: exit 1 with the reason",
          (rc, err[-300:]))
    rc, out, err = harness.run([binary, "-m", model, "-jf", "/nonexistent/schema.json"], timeout=60)
    check(rc == 1 and "failed to open file" in err, "-jf with a missing file: exit 1", (rc, err[-300:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    data_dir, _ = ts.data_and_model(args.data)
    model = os.path.join(data_dir, "models", "stories260K-f32.gguf")
    harness.require(model)

    def body():
        srv = ts.Server(args.server, ["-m", model, "-c", "1024", "-np", "2", "-t", "2"]).start()
        try:
            test_completion(srv)
            test_chat(srv)
            test_errors(srv)
        finally:
            srv.stop()
        test_command_line(args.server, model)

    harness.run_guarded(body, ts.kill_all)


if __name__ == "__main__":
    main()
