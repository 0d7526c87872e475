#!/usr/bin/env python3
# llama-lookup-stats and llama-lookup-create on the KJV test text, against an independent model of llama.cpp's
# n-gram cache rules written here in Python (dicts in first-seen order, the same tie rule as the C cache):
#
#   test-lookup-stats.py LLAMA_LOOKUP_STATS LLAMA_LOOKUP_CREATE LLAMA_TOKENIZE
#
# - the text is tokenized by llama-tokenize (the whole file must give the count in models/kjv/README.md);
# - llama-lookup-create's static cache file must hold exactly the bigram counts of its corpus;
# - n_predict / n_drafted / n_accept of llama-lookup-stats must equal the Python replay for the context cache
#   alone, with a static cache (-lcs), with a dynamic cache (-lcd) and at two draft lengths;
# - a repeated verse drafts better than the same words shuffled; bad cache files end with an error, not a crash.
#
# Prints "N passed, N failed" like the C tests; exit status 1 when anything failed.
import os
import random
import re
import struct
import sys
import tempfile

from harness import check, data_dir, finish, require, run  # tests/harness.py

NGRAM_MIN, NGRAM_MAX, NGRAM_STATIC = 1, 4, 2
# llama.cpp's thresholds per n-gram size (index size - 1): lax for the context cache, strict for the dynamic one
MIN_SAMPLE_LAX, MIN_PERCENT_LAX = [2, 2, 1, 1], [66, 50, 50, 50]
MIN_SAMPLE_STRICT, MIN_PERCENT_STRICT = [4, 3, 2, 2], [75, 66, 66, 66]
N_CTX = 256  # llama.context_length of the KJV models (reference/kjv/README.md)
N_TOKENS_TEST = 33794  # kjv-test.txt without BOS (models/kjv/README.md)


def cache_add(cache, key, tok, count):
    part = cache.setdefault(key, {})
    part[tok] = part.get(tok, 0) + count


def cache_update(cache, nmin, nmax, inp, nnew):
    # every n-gram of size nmin..nmax that ends just before one of the last nnew tokens counts that token
    n = len(inp)
    for size in range(nmin, nmax + 1):
        for i in range(max(n - nnew, size), n):
            cache_add(cache, tuple(inp[i - size:i]), inp[i], 1)


def cache_merge(target, add):
    for key, part in add.items():
        for tok, count in part.items():
            cache_add(target, key, tok, count)


def draft_primary(cache, grams, part_static, min_sample, min_percent):
    # longest n-gram first; each candidate is weighted by 100 x its static count (1 when the static cache never saw
    # it); the winner needs a large enough sample and share
    for size in range(len(grams), 0, -1):
        part = cache.get(grams[size - 1])
        if part is None:
            continue
        best, best_p, best_s, total = None, 0, 0, 0
        for tok, cp in part.items():
            cs = 100 * part_static[tok] if tok in part_static else 1
            if cp * cs > best_p * best_s:
                best, best_p, best_s = tok, cp, cs
            total += cp
        if total < min_sample[size - 1] or 100 * best_p < min_percent[size - 1] * total:
            continue
        return best
    return None


def draft_static(nc_static, key):
    part = nc_static.get(key)
    if part is None:
        return None
    best, best_c, total = None, 0, 0
    for tok, c in part.items():
        if c > best_c:
            best, best_c = tok, c
        total += c
    if total < MIN_SAMPLE_LAX[NGRAM_STATIC - 1] or 100 * best_c < MIN_PERCENT_LAX[NGRAM_STATIC - 1] * total:
        return None
    return best


def draft(inp, n_draft, nc_context, nc_dynamic, nc_static):
    out = []
    if len(inp) < NGRAM_STATIC:
        return out
    while len(out) < n_draft:
        seq = inp + out
        key_static = tuple(seq[-NGRAM_STATIC:])
        part_static = nc_static.get(key_static, {})
        # n-grams of sizes 1..4 ending at the last token; none may start before the history
        grams = [tuple(seq[-size:]) for size in range(NGRAM_MIN, min(NGRAM_MAX, len(seq)) + 1)]
        tok = draft_primary(nc_context, grams, part_static, MIN_SAMPLE_LAX, MIN_PERCENT_LAX)
        if tok is None:
            tok = draft_primary(nc_dynamic, grams, part_static, MIN_SAMPLE_STRICT, MIN_PERCENT_STRICT)
        if tok is None:
            tok = draft_static(nc_static, key_static)
        if tok is None:
            break
        out.append(tok)
    return out


def replay(tokens, n_ctx, n_draft, nc_dynamic, nc_static):
    """What lookup-stats measures: (n_predict, n_drafted, n_accept)."""
    n_drafted = n_accept = 0
    i_start = 0
    while i_start + n_ctx < len(tokens):
        chunk = tokens[i_start:i_start + n_ctx]
        nc_context = {}
        out = [chunk[0]]
        while len(out) < n_ctx:
            d = draft(out, n_draft, nc_context, nc_dynamic, nc_static)
            n_drafted += len(d)
            for tok in d:
                if len(out) >= n_ctx or tok != chunk[len(out)]:
                    break
                n_accept += 1
                out.append(tok)
                cache_update(nc_context, NGRAM_MIN, NGRAM_MAX, out, 1)
            if len(out) < n_ctx:
                out.append(chunk[len(out)])
                cache_update(nc_context, NGRAM_MIN, NGRAM_MAX, out, 1)
        cache_merge(nc_dynamic, nc_context)
        i_start += n_ctx
    return len(tokens) - len(tokens) % n_ctx, n_drafted, n_accept


def read_cache_file(path):
    # llama.cpp's format: int32 ngram[4] (unused slots -1), int32 n, n x (int32 token, int32 count), little-endian
    cache = {}
    with open(path, "rb") as f:
        data = f.read()
    off = 0
    while off < len(data):
        head = struct.unpack_from("<5i", data, off)
        off += 20
        key = tuple(t for t in head[:4] if t != -1)
        part = cache.setdefault(key, {})
        for k in range(head[4]):
            tok, count = struct.unpack_from("<2i", data, off + 8 * k)
            part.setdefault(tok, count)
        off += 8 * head[4]
    return cache


def tokenize(tokenizer, model, text):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        rc, out, err = run([tokenizer, "-m", model, "-f", path, "--ids", "--log-disable"], timeout=120)
    finally:
        os.unlink(path)
    check(rc == 0, "llama-tokenize failed: " + err[-500:])
    m = re.search(r"\[([0-9, ]*)\]", out)
    return [int(t) for t in m.group(1).split(",") if t.strip()] if m else []


def stats(out):
    """The fields lookup-stats prints; None when one is missing."""
    r = {}
    for name in ("n_draft", "n_predict", "n_drafted", "n_accept"):
        m = re.search(r"^%s\s*=\s*(-?\d+)\s*$" % name, out, re.M)
        r[name] = int(m.group(1)) if m else None
    m = re.search(r"^accept\s*=\s*([0-9.]+)%", out, re.M)
    r["accept"] = float(m.group(1)) if m else None
    return r


def run_stats(prog, model, text_file, extra, tag):
    rc, out, err = run([prog, "-m", model, "-f", text_file, "--no-warmup"] + extra, timeout=300)
    check(rc == 0, "%s: exit status %d: %s" % (tag, rc, err[-800:]))
    s = stats(out + err)
    check(all(v is not None for v in s.values()), "%s: fields missing from the output: %s" % (tag, s))
    return s


def compare(tag, got, want, n_draft):
    n_predict, n_drafted, n_accept = want
    check(got["n_draft"] == n_draft, "%s: n_draft %s, expected %d" % (tag, got["n_draft"], n_draft))
    check(got["n_predict"] == n_predict, "%s: n_predict %s, expected %d" % (tag, got["n_predict"], n_predict))
    check(got["n_drafted"] == n_drafted, "%s: n_drafted %s, expected %d" % (tag, got["n_drafted"], n_drafted))
    check(got["n_accept"] == n_accept, "%s: n_accept %s, expected %d" % (tag, got["n_accept"], n_accept))
    if got["accept"] is not None and n_drafted > 0:
        check(abs(got["accept"] - 100.0 * n_accept / n_drafted) < 1e-3 + 1e-9,
              "%s: accept %.3f%%, expected %.3f%%" % (tag, got["accept"], 100.0 * n_accept / n_drafted))
    print("%s: n_predict %s n_drafted %s n_accept %s (python: %d %d %d)" %
          (tag, got["n_predict"], got["n_drafted"], got["n_accept"], n_predict, n_drafted, n_accept))


def main():
    if len(sys.argv) != 4:
        print("usage: test-lookup-stats.py LLAMA_LOOKUP_STATS LLAMA_LOOKUP_CREATE LLAMA_TOKENIZE", file=sys.stderr)
        sys.exit(2)
    prog, create, tokenizer = sys.argv[1:4]
    model = os.path.join(data_dir(), "models", "kjv", "kjv-target-f32.gguf")
    text_file = os.path.join(data_dir(), "reference", "kjv", "kjv-test.txt")
    corpus_file = os.path.join(data_dir(), "reference", "kjv", "kjv-ppl.txt")
    for p in (model, text_file, corpus_file):
        require(p)

    # -f drops one final newline (llama.cpp): tokenize exactly what the program sees
    def prompt_text(path):
        with open(path, encoding="utf-8") as f:
            t = f.read()
        return t[:-1] if t.endswith("\n") else t

    tokens = tokenize(tokenizer, model, prompt_text(text_file))
    # the README counts the whole file (final newline included, BOS excluded); the newline is the byte token 13
    with open(text_file, encoding="utf-8") as f:
        tokens_file = tokenize(tokenizer, model, f.read())
    check(len(tokens_file) == N_TOKENS_TEST + 1 and tokens_file[0] == 1 and tokens_file[-1] == 13,
          "kjv-test.txt: %d tokens with BOS, expected %d" % (len(tokens_file), N_TOKENS_TEST + 1))
    check(tokens == tokens_file[:-1], "kjv-test.txt without its final newline: not the file's tokens less the last")

    with tempfile.TemporaryDirectory() as tmp:
        # the static cache: bigrams of kjv-ppl.txt (the first 412 verses of the test text)
        lcs = os.path.join(tmp, "static.bin")
        rc, out, err = run([create, "-m", model, "-f", corpus_file, "-lcs", lcs], timeout=120)
        check(rc == 0 and os.path.exists(lcs), "llama-lookup-create: exit status %d: %s" % (rc, err[-500:]))
        corpus = tokenize(tokenizer, model, prompt_text(corpus_file))
        want_static = {}
        cache_update(want_static, NGRAM_STATIC, NGRAM_STATIC, corpus, len(corpus))
        nc_static = read_cache_file(lcs) if os.path.exists(lcs) else {}
        same = nc_static.keys() == want_static.keys() and all(
            sorted(nc_static[k].items()) == sorted(want_static[k].items()) for k in want_static)
        check(same, "static cache: %d n-grams, expected %d, or different counts" % (len(nc_static), len(want_static)))

        cases = [
            ("context-n3", ["--spec-draft-n-max", "3"], 3, False, False),
            ("context-n8", ["--spec-draft-n-max", "8"], 8, False, False),
            ("static-n8", ["--spec-draft-n-max", "8", "-lcs", lcs], 8, True, False),
            # the bigram file as the dynamic cache: exercises the strict thresholds
            ("dynamic-n8", ["--spec-draft-n-max", "8", "-lcd", lcs], 8, False, True),
            # a dynamic cache that does not exist yet starts empty
            ("dynamic-missing", ["--spec-draft-n-max", "3", "-lcd", os.path.join(tmp, "none.bin")], 3, False, False),
        ]
        for tag, extra, n_draft, use_static, use_dynamic in cases:
            got = run_stats(prog, model, text_file, extra, tag)
            want = replay(tokens, N_CTX, n_draft, read_cache_file(lcs) if use_dynamic else {},
                          nc_static if use_static else {})
            compare(tag, got, want, n_draft)
            check(0 <= got["n_accept"] <= got["n_drafted"] and 0.0 <= got["accept"] <= 100.0,
                  "%s: accept %s of %s drafted" % (tag, got["n_accept"], got["n_drafted"]))
        check(not os.path.exists(os.path.join(tmp, "none.bin")), "lookup-stats must not write the dynamic cache")

        # a text that repeats itself drafts better than the same words in random order
        verse = "For God so loved the world, that he gave his only begotten Son, that whosoever believeth in him " \
                "should not perish, but have everlasting life.\n"
        words = (verse * 40).split()
        random.Random(4242).shuffle(words)
        rates = []
        for tag, text in (("repeated", verse * 40), ("shuffled", " ".join(words))):
            path = os.path.join(tmp, tag + ".txt")
            with open(path, "w") as f:
                f.write(text)
            s = run_stats(prog, model, path, ["--spec-draft-n-max", "4"], tag)
            rates.append(s["accept"] if s["n_drafted"] else 0.0)
            print("%s: n_drafted %s n_accept %s accept %s%%" % (tag, s["n_drafted"], s["n_accept"], s["accept"]))
        check(rates[0] > 90.0 and rates[0] > rates[1] + 30.0,
              "repeated text accept %.3f%% should be far above shuffled %.3f%%" % (rates[0], rates[1]))

        # bad cache files: an error message and a non-zero status, never a crash
        bad = os.path.join(tmp, "bad.bin")
        with open(bad, "wb") as f:
            f.write(struct.pack("<5i", 5, 6, -1, -1, 2) + struct.pack("<2i", 7, 1))  # 2 pairs announced, 1 present
        for tag, extra in (("truncated-lcs", ["-lcs", bad]), ("truncated-lcd", ["-lcd", bad]),
                           ("missing-lcs", ["-lcs", os.path.join(tmp, "missing.bin")])):
            rc, out, err = run([prog, "-m", model, "-p", "In the beginning", "--no-warmup"] + extra, timeout=60)
            check(rc > 0 and "lookup" in err.lower(),
                  "%s: expected an error status and message, got %d: %s" % (tag, rc, err[-300:]))
        rc, out, err = run([prog, "-m", model, "-p", "x", "--spec-draft-n-max", "-1", "--no-warmup"], timeout=60)
        check(rc > 0, "negative --spec-draft-n-max must be refused (status %d)" % rc)

    finish()


if __name__ == "__main__":
    main()
