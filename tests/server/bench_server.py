#!/usr/bin/env python3
"""Load benchmark for llama-server (a report, not a test): N concurrent streaming clients for D seconds.

Prints total generated tokens/s, p50/p99 time to first token and p99 /health latency during the run.
Usage: bench_server.py --server BIN --model GGUF [--clients 64] [--seconds 60] [--np 8] [-c 2048] [-t 2]
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


def pct(v, p):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100.0 * len(v)))]


def run(srv, n_clients, seconds, n_predict):
    stop_at = time.monotonic() + seconds
    lock = threading.Lock()
    ttft, tokens, health = [], [0], []

    def client(i):
        k = i
        while time.monotonic() < stop_at:
            body = {"prompt": PROMPTS[k % len(PROMPTS)], "n_predict": n_predict, "stream": True,
                    "temperature": 0.8, "seed": k, "cache_prompt": False}
            k += n_clients
            t0 = time.monotonic()
            first = None
            n = 0
            try:
                with requests.post(srv.url("/completion"), json=body, stream=True, timeout=600) as r:
                    for line in r.iter_lines():
                        if not line.startswith(b"data: "):
                            continue
                        ev = json.loads(line[6:])
                        if ev.get("stop"):
                            break
                        if first is None:
                            first = time.monotonic() - t0
                        n += len(ev.get("tokens") or [])
            except requests.RequestException:
                continue
            with lock:
                if first is not None:
                    ttft.append(first)
                tokens[0] += n

    def prober():
        while time.monotonic() < stop_at:
            t0 = time.monotonic()
            requests.get(srv.url("/health"), timeout=30)
            health.append(time.monotonic() - t0)
            time.sleep(0.1)

    th = [threading.Thread(target=client, args=(i,)) for i in range(n_clients)] + [threading.Thread(target=prober)]
    t0 = time.monotonic()
    for t in th:
        t.start()
    for t in th:
        t.join()
    el = time.monotonic() - t0
    print(f"clients={n_clients} seconds={el:.1f} tokens={tokens[0]} tok/s={tokens[0] / el:.1f} "
          f"ttft_p50={pct(ttft, 50) * 1e3:.0f}ms ttft_p99={pct(ttft, 99) * 1e3:.0f}ms requests={len(ttft)} "
          f"health_p99={pct(health, 99) * 1e3:.1f}ms", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--np", default="8")
    ap.add_argument("-c", default="2048")
    ap.add_argument("-t", default="2")
    ap.add_argument("--n-predict", type=int, default=64)
    a = ap.parse_args()
    srv = ts.Server(a.server, ["-m", a.model, "-np", a.np, "-c", a.c, "-t", a.t]).start()
    try:
        run(srv, 1, min(a.seconds, 20), a.n_predict)
        run(srv, a.clients, a.seconds, a.n_predict)
    finally:
        srv.stop()
        ts.kill_all()


if __name__ == "__main__":
    main()
