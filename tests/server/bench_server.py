#!/usr/bin/env python3
"""Load benchmark for llama-server (a report, not a test): N concurrent streaming clients for D seconds.

Each client loops: POST /completion with stream=true, reads the SSE events to the end, repeats; at the end of the
run open streams are dropped (counted as "cut"; their tokens so far count). TTFT includes the wait for a free slot. A prober asks
GET /health every 100 ms meanwhile. Printed per run: generated tokens/s (all clients together), p50/p99 time to
first token, completed and failed requests, and /health p50/p99/max latency (the goal is p99 < 100 ms).
First one client, then --clients clients, so the two can be compared.

  bench_server.py --server build/bin/llama-server --model ../shared/models/kjv/kjv-target-f32.gguf \\
                  [--clients 64] [--seconds 60] [--np 8] [-c 2048] [-t 2] [--n-predict 64]
  bench_server.py --url http://127.0.0.1:8080 ...   # an already running server (llama.cpp's, for comparison)
"""
import argparse
import json
import os
import sys
import threading
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_server as ts  # noqa: E402

PROMPTS = ["In the beginning", "And God said", "And the LORD spake unto Moses, saying", "Blessed are the",
           "And it came to pass", "Thus saith the LORD"]


class Remote:
    def __init__(self, base):
        self.base = base.rstrip("/")

    def url(self, path):
        return self.base + path


def pct(v, p):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100.0 * len(v)))]


def run(srv, n_clients, seconds, n_predict):
    stop_at = time.monotonic() + seconds
    lock = threading.Lock()
    st = {"tokens": 0, "done": 0, "cut": 0, "failed": 0, "errors": {}}
    ttft, health = [], []

    def client(i):
        k = i
        sess = requests.Session()  # keep-alive, as real clients
        while time.monotonic() < stop_at:
            body = {"prompt": PROMPTS[k % len(PROMPTS)], "n_predict": n_predict, "stream": True,
                    "temperature": 0.8, "seed": k, "cache_prompt": False}
            k += n_clients
            t0 = time.monotonic()
            first = None
            n = 0
            ok = False
            cut = False
            err = None
            try:
                with sess.post(srv.url("/completion"), json=body, stream=True, timeout=600) as r:
                    if r.status_code != 200:
                        err = f"HTTP {r.status_code}"
                    else:
                        for line in r.iter_lines():
                            if not line.startswith(b"data: "):
                                continue
                            ev = json.loads(line[6:])
                            toks = len(ev.get("tokens") or [])
                            if toks and first is None:
                                first = time.monotonic() - t0
                            n += toks
                            if ev.get("stop"):
                                ok = True
                                break
                            if time.monotonic() > stop_at:
                                # the run is over: leave (the server cancels the generation) and count it as cut
                                cut = True
                                break
                        if not ok and not cut:
                            err = "stream ended without stop"
            except (requests.RequestException, ValueError) as e:
                err = type(e).__name__
            with lock:
                if first is not None:
                    ttft.append(first)
                st["tokens"] += n
                if ok:
                    st["done"] += 1
                elif cut:
                    st["cut"] += 1
                else:
                    st["failed"] += 1
                    st["errors"][err] = st["errors"].get(err, 0) + 1

    def prober():
        sess = requests.Session()
        while time.monotonic() < stop_at:
            t0 = time.monotonic()
            try:
                code = sess.get(srv.url("/health"), timeout=30).status_code
            except requests.RequestException:
                code = None
            el = time.monotonic() - t0
            with lock:
                health.append(el if code == 200 else float("inf"))
            time.sleep(0.1)

    th = [threading.Thread(target=client, args=(i,)) for i in range(n_clients)] + [threading.Thread(target=prober)]
    t0 = time.monotonic()
    for t in th:
        t.start()
    for t in th:
        t.join()
    el = time.monotonic() - t0
    res = {
        "clients": n_clients, "seconds": round(el, 1), "tokens": st["tokens"], "tok_s": round(st["tokens"] / el, 1),
        "ttft_p50_ms": round(pct(ttft, 50) * 1e3), "ttft_p99_ms": round(pct(ttft, 99) * 1e3),
        "requests": st["done"], "cut": st["cut"], "failed": st["failed"], "errors": st["errors"],
        "health_n": len(health), "health_p50_ms": round(pct(health, 50) * 1e3, 1),
        "health_p99_ms": round(pct(health, 99) * 1e3, 1), "health_max_ms": round(max(health or [0]) * 1e3, 1),
    }
    goal = "ok" if res["health_p99_ms"] < 100 else "MISSED"
    print(f"clients={n_clients} seconds={res['seconds']} tokens={res['tokens']} tok/s={res['tok_s']} "
          f"ttft_p50={res['ttft_p50_ms']}ms ttft_p99={res['ttft_p99_ms']}ms requests={res['requests']} cut={res['cut']} "
          f"failed={res['failed']}{' ' + str(res['errors']) if res['errors'] else ''} "
          f"health_p50={res['health_p50_ms']}ms health_p99={res['health_p99_ms']}ms (goal <100ms: {goal}) "
          f"health_max={res['health_max_ms']}ms", flush=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", help="llama-server binary to start")
    ap.add_argument("--model", help="model for the started server")
    ap.add_argument("--url", help="benchmark a running server instead of starting one")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--single-seconds", type=float, default=20, help="duration of the 1-client baseline (0: skip)")
    ap.add_argument("--np", default="8")
    ap.add_argument("-c", default="2048")
    ap.add_argument("-t", default="2")
    ap.add_argument("--n-predict", type=int, default=64)
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    if not a.url and not (a.server and a.model):
        ap.error("give --server and --model, or --url")

    srv = Remote(a.url) if a.url else ts.Server(a.server, ["-m", a.model, "-np", a.np, "-c", a.c, "-t", a.t]).start()
    results = []
    try:
        if a.single_seconds > 0:
            results.append(run(srv, 1, min(a.seconds, a.single_seconds), a.n_predict))
        results.append(run(srv, a.clients, a.seconds, a.n_predict))
    finally:
        if not a.url:
            srv.stop()
            ts.kill_all()
    if len(results) == 2 and results[0]["tok_s"] > 0:
        print(f"speed-up {a.clients} clients vs 1: x{results[1]['tok_s'] / results[0]['tok_s']:.2f} tokens/s", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if any(r["failed"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
