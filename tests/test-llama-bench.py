#!/usr/bin/env python3
# llama-bench smoke test: a tiny run on a shared model in every output format, each parsed the way
# scripts written for llama.cpp parse it (markdown table, csv columns, json / jsonl via the json module),
# the test matrix built from comma lists and ranges, and the weight-bandwidth table checked against an
# independent reading of the GGUF tensor index. No timing is asserted beyond "positive and finite".
# The test parameters beyond -p/-n/-t (mmap, embeddings, cpu mask, poll, split mode, devices, tensor split,
# overrides ...) are checked for llama.cpp's spelling, recorded values, markdown columns, test order, model
# reloads and rejection of bad values.
#
#   test-llama-bench.py BIN
import json
import math
import os
import re
import struct
import sys
import tempfile

from harness import check, data_dir, finish, require, run  # tests/harness.py


# llama.cpp's csv / json field list, in order
FIELDS = [
    "build_commit", "build_number", "cpu_info", "gpu_info", "backends",
    "model_filename", "model_type", "model_size", "model_n_params", "n_batch",
    "n_ubatch", "n_threads", "cpu_mask", "cpu_strict", "poll",
    "type_k", "type_v", "n_gpu_layers", "n_cpu_moe", "split_mode",
    "main_gpu", "no_kv_offload", "flash_attn", "devices", "tensor_split",
    "tensor_buft_overrides", "use_mmap", "use_direct_io", "embeddings",
    "no_op_offload", "no_host", "fit_target", "fit_min_ctx",
    "n_prompt", "n_gen", "n_depth",
    "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts",
]
INT_FIELDS = {"build_number", "n_batch", "n_ubatch", "n_threads", "poll", "model_size", "model_n_params",
              "n_gpu_layers", "main_gpu", "n_prompt", "n_gen", "n_depth", "avg_ns", "stddev_ns", "no_op_offload",
              "n_cpu_moe", "fit_target", "fit_min_ctx", "flash_attn"}
BOOL_FIELDS = {"no_kv_offload", "cpu_strict", "use_mmap", "use_direct_io", "embeddings", "no_host"}

# llama.cpp's defaults for the test parameters, as its json printer writes them
DEFAULT_VALUES = {
    "cpu_mask": "0x0", "cpu_strict": False, "poll": 50, "n_gpu_layers": -1, "n_cpu_moe": 0, "split_mode": "layer",
    "main_gpu": 0, "no_kv_offload": False, "flash_attn": -1, "devices": "auto", "tensor_split": "0.00",
    "tensor_buft_overrides": "none", "use_mmap": True, "use_direct_io": False, "embeddings": False,
    "no_op_offload": 0, "no_host": False,
}


# --- an independent GGUF tensor-index reader (format: github.com/ggml-org/ggml docs/gguf.md) ---

# type id -> (block elements, block bytes)
GGML_TYPES = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
              10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 30: (1, 2)}


def gguf_tensors(path):
    with open(path, "rb") as f:
        data = f.read(16 << 20)
    pos = 0

    def rd(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0]

    def rd_str():
        nonlocal pos
        n = rd("Q")
        s = data[pos:pos + n]
        pos += n
        return s.decode("utf-8", "replace")

    scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def skip_value(t):
        nonlocal pos
        if t in scalar:
            rd(scalar[t])
        elif t == 8:
            rd_str()
        elif t == 9:
            et = rd("I")
            n = rd("Q")
            if et in scalar:
                pos += n * struct.calcsize("<" + scalar[et])
            else:
                for _ in range(n):
                    skip_value(et)
        else:
            raise ValueError("bad kv type %d" % t)

    assert data[:4] == b"GGUF"
    pos = 4
    rd("I")  # version
    n_tensors = rd("Q")
    n_kv = rd("Q")
    for _ in range(n_kv):
        rd_str()
        skip_value(rd("I"))
    out = []
    for _ in range(n_tensors):
        name = rd_str()
        nd = rd("I")
        ne = [rd("Q") for _ in range(nd)]
        t = rd("I")
        rd("Q")  # offset
        out.append((name, ne, t))
    return out


def expected_bytes_per_token(path):
    tensors = gguf_tensors(path)
    names = {n for n, _, _ in tensors}
    total = 0
    for name, ne, t in tensors:
        if len([d for d in ne]) < 2 or not name.endswith(".weight"):
            continue
        blk, bb = GGML_TYPES[t]
        row = ne[0] // blk * bb
        rows = 1
        for d in ne[1:]:
            rows *= d
        if name == "token_embd.weight":
            total += row
            if "output.weight" not in names:
                total += row * rows
        else:
            total += row * rows
    return total


# --- the checks ---

def parse_md_table(lines):
    rows = []
    for ln in lines:
        if not ln.startswith("|"):
            if rows:
                break
            continue
        rows.append([c.strip() for c in ln.strip().strip("|").split("|")])
    return rows


def test_md(binary, model):
    rc, out, err = run([binary, "-m", model, "-p", "16", "-n", "4", "-r", "1", "-t", "1"])
    if not check(rc == 0, "md: exit status %d\n%s" % (rc, err[-2000:])):
        return
    lines = out.splitlines()
    table = parse_md_table(lines)
    check(len(table) == 4, "md: expected header, separator and 2 rows, got %d lines:\n%s" % (len(table), out))
    if len(table) < 4:
        return
    check(table[0] == ["model", "size", "params", "backend", "threads", "test", "t/s"],
          "md: header %s" % table[0])
    check(all(re.fullmatch(r"-+:?|:?-+", c) for c in table[1]), "md: separator row %s" % table[1])
    # right-aligned columns end with ':' like llama.cpp's
    check(table[1][1].endswith(":") and not table[1][0].endswith(":"), "md: alignment markers %s" % table[1])
    tests = [r[5] for r in table[2:]]
    check(tests == ["pp16", "tg4"], "md: tests %s" % tests)
    for r in table[2:]:
        m = re.fullmatch(r"(\d+\.\d\d) ± (\d+\.\d\d)", r[6])
        check(m is not None and float(m.group(1)) > 0, "md: t/s cell '%s'" % r[6])
        check(re.fullmatch(r"\d+\.\d\d (MiB|GiB)", r[1]) is not None, "md: size cell '%s'" % r[1])
        check(re.fullmatch(r"\d+\.\d\d (M|B)", r[2]) is not None, "md: params cell '%s'" % r[2])
        check(r[3] == "CPU" and r[4] == "1", "md: backend/threads %s %s" % (r[3], r[4]))
    check(any(ln.startswith("build: ") for ln in lines), "md: no build line")

    # the extra table: tg rows with bytes/token, weight GB/s and the share of the measured bandwidth
    i = next((k for k, ln in enumerate(lines) if ln.startswith("weight bandwidth")), None)
    if not check(i is not None, "md: no weight bandwidth table:\n" + out):
        return
    bw = parse_md_table(lines[i + 1:])
    check(len(bw) == 3, "md: bandwidth table should have one tg row:\n%s" % "\n".join(lines[i:]))
    if len(bw) < 3:
        return
    row = bw[2]
    check(row[2] == "tg4", "md: bandwidth row test %s" % row[2])
    m = re.fullmatch(r"(\d+\.\d+) (GB|MB)", row[3])
    expect = expected_bytes_per_token(model)
    if check(m is not None, "md: weights/token cell '%s'" % row[3]):
        unit = 1e9 if m.group(2) == "GB" else 1e6
        check(abs(float(m.group(1)) * unit - expect) <= 0.0005 * unit + 1,
              "md: weights/token %s, expected %.6f MB from the GGUF index" % (row[3], expect / 1e6))
    wgbs, rgbs = float(row[4]), float(row[5])
    pct = float(row[6].split()[0])
    check(wgbs > 0 and rgbs > 0 and math.isfinite(pct), "md: bandwidth figures %s" % row)
    # % of bw is the median over the repetitions of each one's rate over the bandwidth measured just before it:
    # with one repetition (test_md runs one) exactly the table's weight GB/s over read GB/s. With more, the two
    # would differ by the spread of the per-repetition bandwidth, which a busy host makes arbitrary.
    ratio = 100 * wgbs / rgbs
    check(abs(pct - ratio) < 0.2 + 0.01 * pct, "md: %% of bw %s inconsistent with %s / %s" % (pct, wgbs, rgbs))
    # achieved = bytes/token * t/s of the tg row
    tg_ts = float(table[3][6].split()[0])
    check(abs(wgbs - expect * tg_ts / 1e9) <= 0.01 + 0.01 * wgbs,
          "md: weights GB/s %.2f, bytes/token x t/s gives %.2f" % (wgbs, expect * tg_ts / 1e9))


def check_record(rec, what, reps):
    check(list(rec.keys())[:len(FIELDS)] == FIELDS, "%s: field order %s" % (what, list(rec.keys())))
    for k in FIELDS:
        if k not in rec:
            continue
        v = rec[k]
        if k in INT_FIELDS:
            check(isinstance(v, int) and not isinstance(v, bool), "%s: %s should be an integer, is %r" % (what, k, v))
        elif k in BOOL_FIELDS:
            check(isinstance(v, bool), "%s: %s should be a boolean, is %r" % (what, k, v))
        elif k in ("avg_ts", "stddev_ts"):
            check(isinstance(v, float), "%s: %s should be a number, is %r" % (what, k, v))
        else:
            check(isinstance(v, str), "%s: %s should be a string, is %r" % (what, k, v))
    ns, ts = rec.get("samples_ns", []), rec.get("samples_ts", [])
    check(len(ns) == reps and len(ts) == reps, "%s: %d/%d samples, expected %d" % (what, len(ns), len(ts), reps))
    if len(ns) == reps and reps > 0:
        n_tok = rec["n_prompt"] + rec["n_gen"]
        for a, b in zip(ns, ts):
            check(a > 0 and abs(1e9 * n_tok / a - b) <= 1e-4 * b + 1e-3, "%s: sample %d ns vs %g t/s" % (what, a, b))
        mean = sum(ts) / len(ts)
        check(abs(rec["avg_ts"] - mean) <= 1e-3 * mean, "%s: avg_ts %g, mean of samples %g" % (what, rec["avg_ts"], mean))
        check(abs(rec["avg_ns"] - sum(ns) // len(ns)) <= 1, "%s: avg_ns" % what)


def test_json(binary, model, reps):
    rc, out, err = run([binary, "-m", model, "-p", "16", "-n", "4", "-r", str(reps), "-t", "1", "-o", "json"])
    if not check(rc == 0, "json: exit status %d\n%s" % (rc, err[-2000:])):
        return
    try:
        d = json.loads(out)
    except ValueError as e:
        check(False, "json: stdout does not parse: %s\n%s" % (e, out))
        return
    check(isinstance(d, list) and len(d) == 2, "json: expected a list of 2 records")
    for rec in d:
        check_record(rec, "json", reps)
    if len(d) == 2:
        check((d[0]["n_prompt"], d[0]["n_gen"], d[1]["n_prompt"], d[1]["n_gen"]) == (16, 0, 0, 4), "json: tests")
        check(d[0]["model_filename"] == model and d[0]["n_threads"] == 1 and d[0]["type_k"] == "f16",
              "json: parameters recorded")
        check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", d[0]["test_time"]) is not None, "json: test_time")
    # the bandwidth table must not be mixed into machine-readable stdout
    check("weight bandwidth" in err, "json: bandwidth table should go to stderr")


def test_jsonl(binary, model, reps):
    rc, out, err = run([binary, "-m", model, "-p", "16", "-n", "4", "-r", str(reps), "-t", "1", "-o", "jsonl"])
    if not check(rc == 0, "jsonl: exit status %d\n%s" % (rc, err[-2000:])):
        return
    lines = [ln for ln in out.splitlines() if ln.strip()]
    check(len(lines) == 2, "jsonl: expected 2 lines, got %d" % len(lines))
    for ln in lines:
        try:
            check_record(json.loads(ln), "jsonl", reps)
        except ValueError as e:
            check(False, "jsonl: line does not parse: %s\n%s" % (e, ln))


def test_csv(binary, model, reps):
    import csv
    import io
    rc, out, err = run([binary, "-m", model, "-p", "16", "-n", "4", "-r", str(reps), "-t", "1", "-o", "csv"])
    if not check(rc == 0, "csv: exit status %d\n%s" % (rc, err[-2000:])):
        return
    rows = list(csv.reader(io.StringIO(out)))
    check(len(rows) == 3, "csv: expected header + 2 rows, got %d" % len(rows))
    if not rows:
        return
    check(rows[0] == FIELDS, "csv: header %s" % rows[0])
    for r in rows[1:]:
        check(len(r) == len(FIELDS), "csv: row with %d columns" % len(r))
        if len(r) == len(FIELDS):
            rec = dict(zip(FIELDS, r))
            check(float(rec["avg_ts"]) > 0 and int(rec["avg_ns"]) > 0, "csv: avg_ts/avg_ns %s %s" % (rec["avg_ts"], rec["avg_ns"]))
            check(rec["model_filename"] == model, "csv: model_filename")
    # every value is quoted, as llama.cpp's printer does
    check(all(ln.startswith('"') for ln in out.splitlines()[1:]), "csv: values not quoted")


def test_matrix(binary, model):
    # ranges and lists: -p 4-8*2 -> pp4, pp8; -pg; -d; two thread counts; -n 0 drops tg
    rc, out, err = run([binary, "-m", model, "-p", "4-8*2", "-n", "0", "-pg", "4,2", "-d", "0,8", "-t", "1,2",
                        "-b", "8", "-ub", "4", "-r", "1", "-o", "jsonl", "--no-warmup"])
    if not check(rc == 0, "matrix: exit status %d\n%s" % (rc, err[-2000:])):
        return
    recs = [json.loads(ln) for ln in out.splitlines() if ln.strip()]
    got = [(r["n_threads"], r["n_depth"], r["n_prompt"], r["n_gen"]) for r in recs]
    want = []
    for t in (1, 2):
        for d in (0, 8):
            want += [(t, d, 4, 0), (t, d, 8, 0), (t, d, 4, 2)]
    check(got == want, "matrix: tests %s, expected %s" % (got, want))
    check(all(r["n_batch"] == 8 and r["n_ubatch"] == 4 for r in recs), "matrix: batch sizes")

    # markdown shows the non-default columns and depth in the test name
    rc, out, err = run([binary, "-m", model, "-p", "8", "-n", "0", "-d", "8", "-b", "8", "-ub", "4", "-fa", "1",
                        "-r", "1", "-t", "1"])
    if check(rc == 0, "matrix md: exit status %d\n%s" % (rc, err[-2000:])):
        table = parse_md_table(out.splitlines())
        check(len(table) == 3 and table[0] == ["model", "size", "params", "backend", "threads", "n_batch", "n_ubatch",
                                               "fa", "test", "t/s"], "matrix md: header %s" % (table[:1],))
        check(len(table) == 3 and table[2][8] == "pp8 @ d8", "matrix md: test name %s" % (table[2:],))


def test_errors(binary, model):
    with tempfile.TemporaryDirectory() as tmp:
        cases = [
            ("missing model", ["-m", os.path.join(tmp, "nope.gguf"), "-p", "4", "-n", "0", "-r", "1"]),
            ("bad number", ["-m", model, "-p", "abc"]),
            ("bad range", ["-m", model, "-p", "8-4"]),
            ("bad format", ["-m", model, "-o", "xml"]),
            ("bad cache type", ["-m", model, "-ctk", "q9_9"]),
            ("unknown flag", ["-m", model, "--frobnicate", "1"]),
            ("missing value", ["-m"]),
        ]
        for name, args in cases:
            rc, out, err = run([binary] + args, timeout=120)
            check(rc == 1, "%s: exit status %d, expected 1" % (name, rc))
            check("error" in err, "%s: no error message on stderr" % name)


def run_jsonl(binary, args, what):
    rc, out, err = run([binary] + args + ["-o", "jsonl"])
    if not check(rc == 0, "%s: exit status %d\n%s" % (what, rc, err[-2000:])):
        return None, err
    try:
        return [json.loads(ln) for ln in out.splitlines() if ln.strip()], err
    except ValueError as e:
        check(False, "%s: output does not parse: %s\n%s" % (what, e, out))
        return None, err


def test_params(binary, model):
    base = ["-m", model, "-p", "8", "-n", "0", "-r", "1", "-t", "1", "--no-warmup"]

    # defaults are llama.cpp's
    recs, _ = run_jsonl(binary, base, "defaults")
    if recs:
        for k, v in DEFAULT_VALUES.items():
            check(recs[0][k] == v, "defaults: %s is %r, llama.cpp's default is %r" % (k, recs[0][k], v))

    # -mmp list: one row per value, and each value a separate model load
    recs, err = run_jsonl(binary, base + ["-mmp", "0,1", "-v"], "mmap")
    if recs:
        check([r["use_mmap"] for r in recs] == [False, True], "mmap: use_mmap %s" % [r["use_mmap"] for r in recs])
        check(err.count("llama_model_loader: loaded meta data") == 2, "mmap: expected 2 model loads")
    # context parameters do not reload the model
    recs, err = run_jsonl(binary, base + ["-embd", "0,1", "-nkvo", "0,1", "-v"], "context params")
    if recs:
        got = [(r["embeddings"], r["no_kv_offload"]) for r in recs]
        check(got == [(False, False), (False, True), (True, False), (True, True)], "context params: rows %s" % got)
        check(all(r["avg_ts"] > 0 for r in recs), "context params: throughput")
        check(err.count("llama_model_loader: loaded meta data") == 1, "context params: expected 1 model load")

    # every accepted value is recorded as given (llama.cpp's text forms)
    args = ["-C", "0x3", "--cpu-strict", "1", "--poll", "0", "-sm", "none", "-mg", "0", "-ts", "3/1",
            "-ot", "blk\\.0\\..*=CPU;output=CPU", "-nkvo", "1", "-nopo", "1", "--no-host", "1", "-dio", "1",
            "-ncmoe", "1", "-dev", "none", "-mmp", "0", "--prio", "-1", "--numa", "distribute", "--no_kv_offload", "1"]
    recs, _ = run_jsonl(binary, base + args, "recorded")
    if recs:
        want = {"cpu_mask": "0x3", "cpu_strict": True, "poll": 0, "split_mode": "none", "main_gpu": 0,
                "tensor_split": "3.00/1.00", "tensor_buft_overrides": "blk\\.0\\..*=CPU;output=CPU",
                "no_kv_offload": True, "no_op_offload": 1, "no_host": True, "use_direct_io": True, "n_cpu_moe": 1,
                "devices": "none", "use_mmap": False}
        check(len(recs) == 2, "recorded: -nkvo twice should give 2 rows, got %d" % len(recs))
        for k, v in want.items():
            check(recs[0][k] == v, "recorded: %s is %r, expected %r" % (k, recs[0][k], v))

    # llama.cpp's test order: poll innermost, after the thread count and depth; -ot groups split by ','
    recs, _ = run_jsonl(binary, ["-m", model, "-p", "8", "-n", "0", "-r", "1", "--no-warmup", "-t", "1,2", "--poll",
                                 "0,50", "-ot", "a=CPU,", "-sm", "layer,row"], "order")
    if recs:
        got = [(r["split_mode"], r["tensor_buft_overrides"], r["n_threads"], r["poll"]) for r in recs]
        want = [(sm, ot, t, pl) for sm in ("layer", "row") for ot in ("a=CPU", "none") for t in (1, 2) for pl in (0, 50)]
        check(got == want, "order: %s, expected %s" % (got, want))

    # the markdown table shows a column only for a parameter off its default, in llama.cpp's order and names
    rc, out, err = run([binary] + base + ["-embd", "1", "-mmp", "0", "--poll", "0", "-C", "0x1", "-sm", "row"])
    if check(rc == 0, "md params: exit status %d\n%s" % (rc, err[-2000:])):
        table = parse_md_table(out.splitlines())
        check(len(table) == 3 and table[0] == ["model", "size", "params", "backend", "threads", "cpu_mask", "poll",
                                               "sm", "mmap", "embd", "test", "t/s"],
              "md params: header %s" % (table[:1],))
        check(len(table) == 3 and table[2][5:10] == ["0x1", "0", "row", "0", "1"], "md params: row %s" % (table[2:],))

    # --help names every flag; --list-devices lists none on a CPU build and exits 0
    rc, out, err = run([binary, "--help"])
    check(rc == 0, "help: exit status %d" % rc)
    for flag in ["-mmp, --mmap", "-embd, --embeddings", "-nkvo, --no-kv-offload", "--poll", "-C, --cpu-mask",
                 "--cpu-strict", "--prio", "--numa", "-sm, --split-mode", "-mg, --main-gpu", "-ts, --tensor-split",
                 "-ncmoe, --n-cpu-moe", "-nopo, --no-op-offload", "-dev, --device", "--list-devices",
                 "-ot --override-tensor", "--no-host", "-dio, --direct-io"]:
        check(flag in out, "help: '%s' not listed" % flag)
    rc, out, err = run([binary, "--list-devices"])
    check(rc == 0 and out.startswith("Available devices:"), "list-devices: rc %d, output %r" % (rc, out[:200]))

    bad = [["-mmp", "2"], ["-mmp", "true"], ["-embd", "x"], ["-sm", "bogus"], ["--poll", "101"], ["-C", "zz"],
           ["-C", "0x"], ["--cpu-strict", "2"], ["-ts", "1/x"], ["-ts", "-1"], ["-ts", "/".join(["1"] * 17)],
           ["-dev", "bogus"], ["-dev", "CPU"], ["-ot", "noequals"], ["-ot", "a=NOPE"], ["--prio", "4"],
           ["--numa", "x"], ["-mg", "-1"], ["-ncmoe", "x"], ["-nkvo"]]
    for args in bad:
        rc, out, err = run([binary, "-m", model, "-p", "4", "-n", "0", "-r", "1"] + args, timeout=60)
        check(rc == 1, "%s: exit status %d, expected 1" % (" ".join(args), rc))
        check("error" in err, "%s: no error message on stderr" % " ".join(args))


def main():
    if len(sys.argv) != 2:
        print("usage: test-llama-bench.py BIN", file=sys.stderr)
        sys.exit(2)
    binary = sys.argv[1]
    model = os.path.join(data_dir(), "models", "kjv", "kjv-target-q8_0.gguf")
    require(model)
    reps = 2
    test_md(binary, model)
    test_json(binary, model, reps)
    test_jsonl(binary, model, reps)
    test_csv(binary, model, reps)
    test_matrix(binary, model)
    test_errors(binary, model)
    test_params(binary, model)
    finish()


if __name__ == "__main__":
    main()
