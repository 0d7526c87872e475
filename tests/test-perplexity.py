#!/usr/bin/env python3
# llama-perplexity against llama.cpp's reference outputs (reference/kjv/index.json).
#
#   test-perplexity.py BIN MODE [MODEL]
#     MODE ppl MODEL : the recorded command on MODEL; final PPL, its error and the 58 running values
#     MODE kld       : --kl-divergence-base from the F32 model, then --kl-divergence of F32 (itself) and Q4_0
#                      against it, checked against the recorded perplexities of both models
#     MODE batching  : -b smaller than -c, and several chunks per batch, give the same values
#     MODE errors    : bad input ends with an error status and a message, never a crash
#
# Prints "N passed, N failed" like the C tests; exit status 1 when anything failed.
import json
import math
import os
import re
import sys
import tempfile

from harness import check, data_dir, finish, require, run  # tests/harness.py


def parse_ppl(out):
    running = [(int(i), float(v)) for i, v in re.findall(r"\[(\d+)\](\d+\.\d+),", out)]
    m = re.search(r"Final estimate: PPL = (\d+\.\d+) \+/- (\d+\.\d+)", out)
    final = (float(m.group(1)), float(m.group(2))) if m else None
    return running, final


def rel(a, b):
    return abs(a - b) / abs(b)


def reference():
    path = os.path.join(data_dir(), "reference", "kjv", "index.json")
    require(path)
    with open(path) as f:
        return json.load(f)


def ppl_case(ref, model):
    for c in ref["perplexity"]:
        if c["model"] == model:
            return c
    return None


def recorded_args(case):
    # the recorded command line, paths relative to the folder that holds shared/
    args = case["command"].split()[1:]
    base = os.path.dirname(os.path.abspath(data_dir()))
    out = []
    for a in args:
        out.append(os.path.join(base, a) if a.startswith("shared/") else a)
    return out


def test_ppl(binary, model):
    ref = reference()
    case = ppl_case(ref, model)
    if not check(case is not None, "no reference case for " + model):
        return
    args = recorded_args(case)
    for a in args:
        if a.endswith(".gguf") or a.endswith(".txt"):
            require(a)
    rc, out, err = run([binary] + args)
    if not check(rc == 0, "%s: exit status %d\n%s" % (model, rc, err[-2000:])):
        return
    running, final = parse_ppl(out + err)
    check(len(running) == case["n_chunks"], "%s: %d running values, expected %d" % (model, len(running), case["n_chunks"]))
    check([i for i, _ in running] == list(range(1, len(running) + 1)), model + ": running values not numbered 1..n")
    # a running value after one chunk rests on 127 tokens: a different but valid summation order in the
    # quantized dot products (llama.cpp repacks K-quants for AVX-512) moves it by up to ~0.2 %
    worst = 0.0
    for (i, v), r in zip(running, case["running_ppl"]):
        worst = max(worst, rel(v, r))
        if not check(rel(v, r) < 3e-3, "%s: chunk %d running PPL %.4f, llama.cpp %.4f" % (model, i, v, r)):
            break
    print("%s: largest relative deviation of a running PPL: %.2e" % (model, worst))
    if not check(final is not None, model + ": no 'Final estimate' line"):
        return
    ppl, err_ = final
    # README: perplexities agree to about 0.01; that is also 3 significant digits for these values
    check(abs(ppl - case["ppl"]) <= 0.01, "%s: PPL %.4f, llama.cpp %.4f" % (model, ppl, case["ppl"]))
    check(float("%.3g" % ppl) == float("%.3g" % case["ppl"]) or abs(ppl - case["ppl"]) < 0.002,
          "%s: PPL %.4f differs from %.4f in the first 3 significant digits" % (model, ppl, case["ppl"]))
    check(abs(err_ - case["ppl_err"]) <= 0.001, "%s: PPL error %.5f, llama.cpp %.5f" % (model, err_, case["ppl_err"]))
    print("%s: PPL = %.4f +/- %.5f (llama.cpp %.4f +/- %.5f)" % (model, ppl, err_, case["ppl"], case["ppl_err"]))


def kld_stats(out):
    def grab(label):
        m = re.search(re.escape(label) + r"\s*:\s*(-?\d+\.\d+)", out)
        return float(m.group(1)) if m else None
    return {
        "ppl_q": grab("Mean PPL(Q)"),
        "ppl_base": grab("Mean PPL(base)"),
        "kld": grab("Mean    KLD"),
        "same_top": grab("Same top p"),
        "ratio": grab("Mean PPL(Q)/PPL(base)"),
    }


def test_kld(binary):
    ref = reference()
    kjv = os.path.join(data_dir(), "models", "kjv")
    text = os.path.join(data_dir(), "reference", "kjv", "kjv-ppl.txt")
    f32 = os.path.join(kjv, "kjv-target-f32.gguf")
    q40 = os.path.join(kjv, "kjv-target-q4_0.gguf")
    for p in (text, f32, q40):
        require(p)
    n_chunks = 8
    ref_f32 = ppl_case(ref, "kjv-target-f32.gguf")["running_ppl"][n_chunks - 1]
    ref_q40 = ppl_case(ref, "kjv-target-q4_0.gguf")["running_ppl"][n_chunks - 1]
    common = ["-f", text, "-c", "256", "-b", "256", "-t", "1"]

    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "f32.kld")
        rc, out, err = run([binary, "-m", f32, "--kl-divergence-base", base, "--chunks", str(n_chunks)] + common)
        if not check(rc == 0, "base run: exit status %d\n%s" % (rc, err[-2000:])):
            return
        running, _ = parse_ppl(out + err)
        check(len(running) == n_chunks and rel(running[-1][1], ref_f32) < 1e-3,
              "base run: running PPL %s, llama.cpp %.4f after %d chunks" % (running[-1:] , ref_f32, n_chunks))
        # kjv.vocab lists the vocabulary embedded in the GGUF, one piece a line
        with open(os.path.join(kjv, "kjv.vocab"), encoding="utf-8", errors="replace") as f:
            n_vocab = sum(1 for _ in f)
        n_ctx = 256
        nv = 2 * ((n_vocab + 1) // 2) + 4
        expect = 8 + 12 + n_chunks * n_ctx * 4 + n_chunks * (n_ctx - 1 - n_ctx // 2) * nv * 2
        size = os.path.getsize(base) if os.path.exists(base) else -1
        check(size == expect, "base file has %d bytes, llama.cpp's layout gives %d" % (size, expect))

        # the model against its own saved distribution: only the 16-bit storage separates them
        rc, out, err = run([binary, "-m", f32, "--kl-divergence", "--kl-divergence-base", base] + common)
        if check(rc == 0, "self KLD run: exit status %d\n%s" % (rc, err[-2000:])):
            s = kld_stats(out + err)
            check(None not in s.values(), "self KLD run: missing statistics in output:\n" + out[-3000:])
            if None not in s.values():
                check(rel(s["ppl_q"], ref_f32) < 1e-3, "self KLD: PPL(Q) %.4f, llama.cpp %.4f" % (s["ppl_q"], ref_f32))
                check(rel(s["ppl_base"], ref_f32) < 1e-3, "self KLD: PPL(base) %.4f, llama.cpp %.4f" % (s["ppl_base"], ref_f32))
                check(abs(s["kld"]) < 1e-4, "self KLD: mean KLD %g should be ~0" % s["kld"])
                check(s["same_top"] > 99.9, "self KLD: same top p %.3f%%" % s["same_top"])
                check(abs(s["ratio"] - 1) < 1e-3, "self KLD: PPL ratio %.6f" % s["ratio"])

        rc, out, err = run([binary, "-m", q40, "--kl-divergence", "--kl-divergence-base", base] + common)
        if check(rc == 0, "Q4_0 KLD run: exit status %d\n%s" % (rc, err[-2000:])):
            s = kld_stats(out + err)
            check(None not in s.values(), "Q4_0 KLD run: missing statistics in output:\n" + out[-3000:])
            if None not in s.values():
                check(rel(s["ppl_q"], ref_q40) < 1e-3, "Q4_0 KLD: PPL(Q) %.4f, llama.cpp %.4f" % (s["ppl_q"], ref_q40))
                check(rel(s["ppl_base"], ref_f32) < 1e-3, "Q4_0 KLD: PPL(base) %.4f, llama.cpp F32 %.4f" % (s["ppl_base"], ref_f32))
                check(abs(s["ratio"] - s["ppl_q"] / s["ppl_base"]) < 1e-3 * s["ratio"],
                      "Q4_0 KLD: ratio %.6f != PPL(Q)/PPL(base)" % s["ratio"])
                check(1e-5 < s["kld"] < 0.2, "Q4_0 KLD: mean KLD %g out of the plausible range" % s["kld"])
                check(50.0 < s["same_top"] < 100.0, "Q4_0 KLD: same top p %.3f%%" % s["same_top"])
                print("Q4_0 vs F32: PPL(Q) %.4f PPL(base) %.4f KLD %.6f same top %.2f%%" %
                      (s["ppl_q"], s["ppl_base"], s["kld"], s["same_top"]))


def test_batching(binary):
    # the same numbers whatever the batch split: several decode calls per chunk (-b < -c), and several
    # chunks decoded side by side as sequences of one batch (-b a multiple of -c)
    ref = reference()
    kjv = os.path.join(data_dir(), "models", "kjv")
    text = os.path.join(data_dir(), "reference", "kjv", "kjv-ppl.txt")
    f32 = os.path.join(kjv, "kjv-target-f32.gguf")
    for p in (text, f32):
        require(p)
    n_chunks = 8
    want = ppl_case(ref, "kjv-target-f32.gguf")["running_ppl"][:n_chunks]
    base = [binary, "-m", f32, "-f", text, "-t", "1", "--chunks", str(n_chunks)]

    rc, out, err = run(base + ["-c", "256", "-b", "128"])
    if check(rc == 0, "-b 128: exit status %d\n%s" % (rc, err[-2000:])):
        got = [v for _, v in parse_ppl(out + err)[0]]
        check(len(got) == n_chunks and all(rel(a, b) < 1e-3 for a, b in zip(got, want)),
              "-c 256 -b 128: running PPL %s, llama.cpp (-b 256) %s" % (got, want))

    rc1, out1, err1 = run(base + ["-c", "128", "-b", "128"])
    rc4, out4, err4 = run(base + ["-c", "128", "-b", "512"])
    if check(rc1 == 0 and rc4 == 0, "-c 128: exit status %d / %d\n%s" % (rc1, rc4, (err1 + err4)[-2000:])):
        check("n_seq=4" in out4 + err4, "-c 128 -b 512 should decode 4 sequences per batch")
        one = [v for _, v in parse_ppl(out1 + err1)[0]]
        four = [v for _, v in parse_ppl(out4 + err4)[0]]
        check(len(one) == n_chunks and len(four) == n_chunks and all(rel(a, b) < 1e-4 for a, b in zip(one, four)),
              "-c 128: one sequence per batch %s, four %s" % (one, four))


def test_errors(binary):
    kjv = os.path.join(data_dir(), "models", "kjv")
    f32 = os.path.join(kjv, "kjv-target-f32.gguf")
    require(f32)
    with tempfile.TemporaryDirectory() as tmp:
        short = os.path.join(tmp, "short.txt")
        with open(short, "w") as f:
            f.write("In the beginning God created the heaven and the earth.\n")
        garbage = os.path.join(tmp, "garbage.kld")
        with open(garbage, "wb") as f:
            f.write(b"_logits_" + b"\xff" * 64)
        wrong = os.path.join(tmp, "wrong.kld")
        with open(wrong, "wb") as f:
            f.write(b"not a logits file at all")
        cases = [
            ("missing text file", ["-m", f32, "-f", os.path.join(tmp, "nope.txt"), "-c", "128"], None),
            ("missing model", ["-m", os.path.join(tmp, "nope.gguf"), "-f", short, "-c", "128"], None),
            ("text too short", ["-m", f32, "-f", short, "-c", "128", "-t", "1"], "you need at least"),
            ("garbage base file", ["-m", f32, "-f", short, "-c", "128", "-t", "1", "--kl-divergence",
                                   "--kl-divergence-base", garbage], None),
            ("not a base file", ["-m", f32, "-f", short, "-c", "128", "-t", "1", "--kl-divergence",
                                 "--kl-divergence-base", wrong], "does not look like"),
            ("missing base file", ["-m", f32, "-c", "128", "-t", "1", "--kl-divergence",
                                   "--kl-divergence-base", os.path.join(tmp, "nope.kld")], "failed to open"),
        ]
        for name, args, msg in cases:
            rc, out, err = run([binary] + args, timeout=300)
            check(rc > 0, "%s: exit status %d (expected an error status, not success or a signal)" % (name, rc))
            if msg:
                check(msg in out + err, "%s: message '%s' not printed:\n%s" % (name, msg, (out + err)[-1500:]))


def main():
    if len(sys.argv) < 3:
        print("usage: test-perplexity.py BIN ppl MODEL | kld | errors", file=sys.stderr)
        sys.exit(2)
    binary, mode = sys.argv[1], sys.argv[2]
    if mode == "ppl" and len(sys.argv) == 4:
        test_ppl(binary, sys.argv[3])
    elif mode == "kld":
        test_kld(binary)
    elif mode == "batching":
        test_batching(binary)
    elif mode == "errors":
        test_errors(binary)
    else:
        print("unknown mode " + mode, file=sys.stderr)
        sys.exit(2)
    finish()


if __name__ == "__main__":
    main()
