#!/usr/bin/env python3
"""llama-server's LoRA adapters (llama.cpp's /lora-adapters and the per-request "lora" field) on stories260K-f32.

The adapter is written here with the struct module (GGUF v3: rank-4 lora_a/lora_b pairs on output.weight and
blk.0.attn_output.weight, random
values from a fixed seed, alpha = rank, task_name/prompt_prefix metadata). The base model's greedy text comes from a
server started without --lora, so scale 0 is checked against an independent run, never against the adapter path.

- GET /lora-adapters lists [{id, path, scale, task_name, prompt_prefix}] (scale 1 with --lora, 0 with
  --lora-init-without-apply).
- Scale 1 gives a text other than the base one; a request's "lora" [{id: 0, scale: 0}] gives the base text back
  (llama.cpp: unlisted adapters are 0, an empty list means the global scales).
- POST /lora-adapters sets the global scales ({"success": true}); unlisted and unknown ids leave 0; a non-array body
  is a 400 "Request body must be an array"; a "lora" field that is no array is a 400.
- /props (default_generation_settings.params.lora), /slots (params.lora per slot) and a response's
  generation_settings.lora report [{id, scale}] for every adapter: the global scales, the slot's last set, the
  request's set.
- Two slots with different adapter sets at once (they cannot share a decode) each give their own text; the same
  prompt alternating between sets never reuses KV computed with the other set.
"""
import argparse
import os
import random
import struct
import sys
import tempfile
import threading

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import harness  # noqa: E402
import test_server as ts  # noqa: E402

N_EMBD, N_VOCAB, RANK = 64, 512, 4   # stories260K: output.weight is [n_embd, n_vocab] (ggml order)
PROMPT = "Once upon a time"
GREEDY = {"temperature": 0, "n_predict": 12, "cache_prompt": True}


def check(cond, what, detail=None):
    if not cond and detail is not None:
        print(f"  detail of '{what}': {detail!r}"[:2000], file=sys.stderr)
    return harness.check(cond, what)


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def write_adapter(path):
    """GGUF v3 LoRA adapter: lora_a [N_EMBD, RANK] and lora_b [RANK, N_VOCAB] (ne order) for output.weight."""
    rng = random.Random(1234)
    a = [rng.uniform(-0.5, 0.5) for _ in range(N_EMBD * RANK)]
    b = [rng.uniform(-1.0, 1.0) for _ in range(RANK * N_VOCAB)]
    kv = [("general.architecture", 8, gguf_str("llama")), ("general.type", 8, gguf_str("adapter")),
          ("adapter.type", 8, gguf_str("lora")), ("adapter.lora.alpha", 6, struct.pack("<f", float(RANK))),
          ("adapter.lora.task_name", 8, gguf_str("stories-test")),
          ("adapter.lora.prompt_prefix", 8, gguf_str("Once"))]
    # layer 0's attention output as well: it changes what later layers put in the KV cache, so a slot that kept
    # KV computed with another adapter set would give another text
    a0 = [rng.uniform(-0.5, 0.5) for _ in range(N_EMBD * RANK)]
    b0 = [rng.uniform(-1.0, 1.0) for _ in range(RANK * N_EMBD)]
    tensors = [("output.weight.lora_a", (N_EMBD, RANK), a), ("output.weight.lora_b", (RANK, N_VOCAB), b),
               ("blk.0.attn_output.weight.lora_a", (N_EMBD, RANK), a0),
               ("blk.0.attn_output.weight.lora_b", (RANK, N_EMBD), b0)]
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)))
    for key, typ, val in kv:
        out += gguf_str(key) + struct.pack("<I", typ) + val
    offset = 0
    blobs = []
    for name, ne, data in tensors:
        out += gguf_str(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
        out += struct.pack("<IQ", 0, offset)  # F32, offset in the data section
        blob = struct.pack(f"<{len(data)}f", *data)
        blobs.append(blob)
        offset += (len(blob) + 31) // 32 * 32
    out += b"\0" * ((32 - len(out) % 32) % 32)
    for blob in blobs:
        out += blob + b"\0" * ((32 - len(blob) % 32) % 32)
    with open(path, "wb") as f:
        f.write(out)


def complete(srv, prompt=PROMPT, **extra):
    r = requests.post(srv.url("/completion"), json=dict(GREEDY, prompt=prompt, **extra), timeout=120)
    return r.json().get("content") if r.status_code == 200 else ("HTTP", r.status_code, r.text)


def chat(srv, **extra):
    body = dict(GREEDY, messages=[{"role": "user", "content": "Tell me a story"}], **extra)
    r = requests.post(srv.url("/v1/chat/completions"), json=body, timeout=120)
    return r.json()["choices"][0]["message"]["content"] if r.status_code == 200 else ("HTTP", r.status_code, r.text)


def get_lora(srv):
    return requests.get(srv.url("/lora-adapters"), timeout=30).json()


def post_lora(srv, body, raw=None):
    if raw is not None:
        return requests.post(srv.url("/lora-adapters"), data=raw, timeout=30)
    return requests.post(srv.url("/lora-adapters"), json=body, timeout=30)


def props_lora(srv):
    return requests.get(srv.url("/props"), timeout=30).json()["default_generation_settings"]["params"]["lora"]


def slots_lora(srv):
    return [s["params"]["lora"] for s in requests.get(srv.url("/slots"), timeout=30).json()]


def run(binary, model, adapter):
    common = ["-m", model, "-c", "512", "-np", "2", "-t", "2"]
    srv = ts.Server(binary, common).start()
    try:
        base = complete(srv)
        base_chat = chat(srv)
        check(props_lora(srv) == [] and slots_lora(srv) == [[], []], "no adapters: lora [] in /props and /slots",
              (props_lora(srv), slots_lora(srv)))
    finally:
        srv.stop()
    check(isinstance(base, str) and base != "", "base model: greedy text", base)

    srv = ts.Server(binary, common + ["--lora", adapter]).start()
    try:
        got = get_lora(srv)
        want = [{"id": 0, "path": adapter, "scale": 1.0, "task_name": "stories-test", "prompt_prefix": "Once"}]
        check(got == want, "GET /lora-adapters lists the --lora adapter at scale 1", got)
        on = complete(srv)
        check(isinstance(on, str) and on != base, "scale 1 changes the greedy text", (on, base))
        check(complete(srv, lora=[{"id": 0, "scale": 0}]) == base, "request lora scale 0 = the base model's text")
        check(complete(srv, lora=[{"id": 0, "scale": 1.0}]) == on, "request lora scale 1 = the global scale 1 text")
        check(complete(srv, lora=[]) == on, "an empty request lora list means the global scales")
        check(complete(srv, lora=[{"id": 7, "scale": 1}]) == base, "request: unknown id ignored, unlisted adapter 0")
        chat_on = chat(srv)
        check(chat(srv, lora=[{"id": 0, "scale": 0}]) == base_chat and chat_on != base_chat,
              "chat endpoint: request lora scale 0 = base text, global scale 1 differs", (chat_on, base_chat))

        # llama.cpp reports each request's adapter list as params.lora = [{id, scale}] (every adapter): in
        # /slots for the slot that served it, in the response's generation_settings, and the global scales as
        # /props' default settings
        check(props_lora(srv) == [{"id": 0, "scale": 1.0}], "/props: default lora = the --lora scale", props_lora(srv))
        r = requests.post(srv.url("/completion"), json=dict(GREEDY, prompt=PROMPT, id_slot=1,
                                                            lora=[{"id": 0, "scale": 0.5}]), timeout=120)
        check(r.status_code == 200 and r.json()["generation_settings"]["lora"] == [{"id": 0, "scale": 0.5}],
              "response generation_settings.lora = the request's scales", r.text[:300])
        complete(srv, id_slot=0, lora=[{"id": 0, "scale": 0.25}])
        sl = slots_lora(srv)
        check(sl == [[{"id": 0, "scale": 0.25}], [{"id": 0, "scale": 0.5}]],
              "/slots: each slot's params.lora holds the scales it last ran with", sl)

        r = post_lora(srv, [{"id": 0, "scale": 0}])
        check(r.status_code == 200 and r.json() == {"success": True}, "POST /lora-adapters answers success", r.text)
        check(props_lora(srv) == [{"id": 0, "scale": 0.0}], "/props follows POST /lora-adapters", props_lora(srv))
        check(get_lora(srv)[0]["scale"] == 0.0, "GET shows the POSTed scale 0")
        check(complete(srv) == base, "after POST scale 0 the text is the base model's again")
        check(complete(srv, lora=[{"id": 0, "scale": 1}]) == on, "request lora scale 1 still applies it")
        post_lora(srv, [{"id": 0, "scale": 1}])
        check(complete(srv) == on and get_lora(srv)[0]["scale"] == 1.0, "POST scale 1 brings the adapter back")
        r = post_lora(srv, [])
        check(r.status_code == 200 and get_lora(srv)[0]["scale"] == 0.0, "POST []: unlisted adapters go to 0")
        r = post_lora(srv, [{"id": 3, "scale": 1}])
        check(r.status_code == 200 and get_lora(srv)[0]["scale"] == 0.0, "POST unknown id: ignored (llama.cpp)")

        for what, resp in (("an object", post_lora(srv, {"id": 0, "scale": 1})),
                           ("invalid JSON", post_lora(srv, None, raw="[{")),
                           ("a string", post_lora(srv, "x"))):
            err = resp.json().get("error", {}) if resp.headers.get("content-type", "").startswith("application/json") else {}
            check(resp.status_code == 400 and err.get("type") == "invalid_request_error",
                  f"POST /lora-adapters with {what}: 400", resp.text)
        r = post_lora(srv, {"id": 0})
        check(r.json()["error"]["message"] == "Request body must be an array", "llama.cpp's message for a non-array")
        check(get_lora(srv)[0]["scale"] == 0.0, "a refused POST changes nothing")
        r = requests.post(srv.url("/completion"), json=dict(GREEDY, prompt=PROMPT, lora={"id": 0}), timeout=30)
        check(r.status_code == 400 and "'lora' must be an array" in r.json()["error"]["message"],
              "request lora that is no array: 400", r.text)

        # two slots, two sets, at once: neither may decode with the other's adapters
        long_extra = {"n_predict": 32}
        solo_on = complete(srv, lora=[{"id": 0, "scale": 1}], **long_extra)
        solo_off = complete(srv, **long_extra)
        res = {}

        def worker(key, extra):
            res[key] = complete(srv, **extra, **long_extra)
        ths = [threading.Thread(target=worker, args=("on", {"lora": [{"id": 0, "scale": 1}]})),
               threading.Thread(target=worker, args=("off", {}))]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        check(res.get("on") == solo_on and res.get("off") == solo_off and solo_on != solo_off,
              "concurrent slots with different adapter sets each give their own text", (res, solo_on, solo_off))
    finally:
        rc = srv.stop()
    check(rc == 0, "server with --lora exits cleanly", rc)

    srv = ts.Server(binary, common + ["--lora", adapter, "--lora-init-without-apply"]).start()
    try:
        got = get_lora(srv)
        check(len(got) == 1 and got[0]["scale"] == 0.0, "--lora-init-without-apply: scale 0", got)
        check(complete(srv) == base, "--lora-init-without-apply: the base model's text")
        check(complete(srv, lora=[{"id": 0, "scale": 1}]) == on, "--lora-init-without-apply: request scale 1 applies")
    finally:
        srv.stop()

    srv = ts.Server(binary, common + ["--lora", adapter + ".missing"])
    srv.start(wait_healthy=False)
    try:
        srv.proc.wait(60)
    finally:
        rc = srv.stop()
    check(rc not in (0, None), "a missing adapter file stops the server at start-up", rc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    data_dir, _ = ts.data_and_model(args.data)
    model = os.path.join(data_dir, "models", "stories260K-f32.gguf")
    if not os.path.exists(model):
        return ts.missing_data(model)

    def body():
        with tempfile.TemporaryDirectory() as tmpdir:
            adapter = os.path.join(tmpdir, "adapter.gguf")
            write_adapter(adapter)
            run(args.server, model, adapter)

    harness.run_guarded(body, ts.kill_all)


if __name__ == "__main__":
    sys.exit(main())
