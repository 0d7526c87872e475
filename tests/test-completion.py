#!/usr/bin/env python3
# llama-completion's interactive (-i, -if, -r, --in-prefix, --in-suffix) and conversation (-cnv, -sys, -st) modes,
# driven through stdin as a user would:
#   usage: test-completion.py LLAMA_COMPLETION LLAMA_CLI MODE      MODE: interactive | conversation | plain
# Greedy (--temp 0) throughout. What the model writes after the user's turn is checked against a single-shot
# -no-cnv run on the whole text the context then holds: the prompt, the model's output and the user's text.
# llama.cpp tokenizes each user turn on its own, so with these SPM vocabularies (add_space_prefix) every turn
# starts with the tokenizer's space: the single-shot text has a " " before each turn.
# The plain greedy text is llama.cpp's own output (reference/kjv/index.json).
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (check, collect_stdout, data_dir, finish, require, run, wait_exit,  # noqa: E402
                     wait_for)

COMPLETION, CLI, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
KJV = os.path.join(data_dir(), "models", "kjv", "kjv-target-f32.gguf")
STORIES = os.path.join(data_dir(), "models", "stories260K-f32.gguf")
INDEX = os.path.join(data_dir(), "reference", "kjv", "index.json")
BASE = ["--temp", "0", "--no-warmup", "-t", "2", "-c", "512"]
EOF_TAIL = "EOF by user\n\n\n"   # "EOF by user\n" at the prompt, then the closing "\n\n"


def completion(model, args, stdin_text="", timeout=120):
    p = subprocess.run([COMPLETION, "-m", model] + BASE + args, input=stdin_text.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def single_shot(model, prompt, n):
    """The greedy continuation of prompt by a plain run (no prompt echo, no end marker)."""
    rc, out, err = completion(model, ["-no-cnv", "--no-display-prompt", "--no-escape", "-p", prompt, "-n", str(n)])
    check(rc == 0, "single-shot run failed: " + err[-300:])
    if out.endswith("\n\n"):
        out = out[:-2]
    if out.endswith(" [end of text]\n"):
        out = out[:-len(" [end of text]\n")]
    return out


def chatml(msgs, add_ass=True):
    return "".join("<|im_start|>%s\n%s<|im_end|>\n" % (r, c) for r, c in msgs) + \
        ("<|im_start|>assistant\n" if add_ass else "")


def reference_greedy(prompt):
    with open(INDEX) as f:
        root = json.load(f)
    for c in root["greedy"]:
        if c["model"] == "kjv-target-f32.gguf" and c["prompt"] == prompt:
            return c["stdout"]
    return None


def test_interactive():
    # -r hands control back when the output ends with the reverse prompt; the typed text goes in and the model
    # continues from prompt + output + text
    first = " In the beginning of the LORD, and in the land of Egypt"
    rc, out, err = completion(KJV, ["-p", "In the beginning", "-n", "64", "-r", "Egypt"])
    check(rc == 0 and out == first + "\n\n", "without -i, -r stops the run: %r" % out)
    args = ["-p", "In the beginning", "-n", "40", "-i", "-r", "Egypt"]
    rc, out, err = completion(KJV, args, "And Moses said\n")
    check(rc == 0, "-i run exit status %d: %s" % (rc, err[-300:]))
    check("interactive mode on." in err and "Reverse prompt: 'Egypt'" in err and
          "== Running in interactive mode. ==" in err and " - Press Ctrl+C to interject at any time.\n" in err,
          "interactive banner on stderr: %r" % err[-600:])
    check(out.startswith(first) and out.endswith(EOF_TAIL), "-i output layout: %r" % out)
    gen2 = out[len(first):-len(EOF_TAIL)]
    want = single_shot(KJV, first.lstrip() + " And Moses said", 40)
    check(len(gen2) > 10 and want.startswith(gen2),
          "after the user's turn == single-shot on prompt + output + text:\n %r\n %r" % (gen2, want))
    check("And Moses said" not in out, "the typed text is not echoed by the program")

    # --in-prefix before the user's text (shown before reading), --in-suffix after it (shown once read); the
    # context then holds "... Egypt" "And" "Moses" "said": the same continuation as above
    rc, out, err = completion(KJV, args + ["--in-prefix", "And", "--in-suffix", "said"], "Moses\n")
    check(rc == 0 and "Input prefix: 'And'" in err and "Input suffix: 'said'" in err, "prefix/suffix banner")
    # only the typed text counts against -n (one token here, three above): two more tokens before the next turn,
    # whose prefix is shown before end of input is seen
    lead, end = first + "And" + "said", "And" + EOF_TAIL
    gen2b = out[len(lead):-len(end)]
    check(out.startswith(lead) and out.endswith(end) and gen2b.startswith(gen2) and len(gen2b) > len(gen2) and
          want.startswith(gen2b), "--in-prefix/--in-suffix placement: %r" % out)

    # an empty line passes control straight back: the text is the plain greedy text up to the next stop
    ref = reference_greedy("In the beginning")
    if check(ref is not None, "reference greedy text for 'In the beginning'"):
        rc, out, err = completion(KJV, ["-p", "In the beginning", "-n", "64", "-i", "-r", "Egypt"], "\n")
        body = out[:-len(EOF_TAIL)]
        check(rc == 0 and out.endswith(EOF_TAIL) and len(body) > len(first) + 10 and ref.startswith(body),
              "empty line: the model goes on: %r" % out)
        # -i without -r: -n tokens, then the user's turn; end of input ends the run
        rc, out, err = completion(KJV, ["-p", "In the beginning", "-n", "64", "-i"], "")
        check(rc == 0 and out == ref[:-2] + EOF_TAIL, "-i, EOF at the first turn: %r" % out[-80:])
        # the perf summary at exit
        check("eval time =" in err, "perf summary at exit")

    # an end-of-generation token (forced here by a bias on "</s>", id 2) ends the model's turn with a newline; the
    # first reverse prompt is queued before the user's text, and end of input at the next turn ends the run
    rc, out, err = completion(KJV, ["-p", "In the beginning", "-n", "10", "-i", "-r", "Egypt", "--logit-bias", "2+100"],
                              "And Moses said\n")
    check(rc == 0 and out == " In the beginning\n\n" + EOF_TAIL, "end of generation in -i: %r" % out)

    # -if: the prompt is shown, then the user goes first
    rc, out, err = completion(KJV, ["-p", "In the beginning", "-n", "24", "-if"], "And Moses said\n")
    head = " In the beginning"
    check(rc == 0 and out.startswith(head) and out.endswith(EOF_TAIL), "-if layout: %r" % out)
    gen = out[len(head):-len(EOF_TAIL)]
    want = single_shot(KJV, "In the beginning And Moses said", 24)
    check(len(gen) > 10 and want.startswith(gen), "-if continuation:\n %r\n %r" % (gen, want))

    # a line ending in '\' continues the turn: the two lines go in as one text "And Moses\nsaid"
    rc, out, err = completion(KJV, ["-p", "In the beginning", "-n", "24", "-if"], "And Moses\\\nsaid\n")
    gen = out[len(head):-len(EOF_TAIL)]
    want = single_shot(KJV, "In the beginning And Moses\nsaid", 24)
    check(rc == 0 and len(gen) > 10 and want.startswith(gen), "'\\' continuation:\n %r\n %r" % (gen, want))

    # -mli: lines go on until one ends with '/'
    rc, out, err = completion(KJV, ["-p", "In the beginning", "-n", "24", "-if", "-mli"], "And Moses\nsaid/\n")
    check(rc == 0 and out[len(head):-len(EOF_TAIL)] == gen, "-mli turn ended by '/': %r" % out)

    # --in-prefix-bos: a BOS token before the user's text ("<s>" is this vocabulary's BOS, parsed as special by
    # the single-shot run; the text after it gets the tokenizer's space as a turn does)
    rc, out, err = completion(KJV, args + ["--in-prefix-bos"], "And Moses said\n")
    check(rc == 0 and "Input prefix with BOS" in err, "--in-prefix-bos banner")
    gen3 = out[len(first):-len(EOF_TAIL)]
    want3 = single_shot(KJV, first.lstrip() + "<s>And Moses said", 40)
    check(out.startswith(first) and len(gen3) > 10 and want3.startswith(gen3) and gen3 != gen2,
          "--in-prefix-bos continuation:\n %r\n %r" % (gen3, want3))

    # --no-display-prompt: the prompt is not echoed
    rc, out, err = completion(KJV, ["-p", "In the beginning", "-n", "40", "-i", "-r", "Egypt", "--no-display-prompt"],
                              "And Moses said\n")
    check(rc == 0 and out == first[len(head):] + gen2 + EOF_TAIL, "--no-display-prompt in -i: %r" % out)

    # Ctrl+C while the model writes hands control to the user; a second one at the input ends the run
    p = subprocess.Popen([COMPLETION, "-m", KJV, "--temp", "0", "--no-warmup", "-t", "2", "-c", "4096", "-n", "-1",
                          "--ignore-eos", "-i", "-p", "In the beginning"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    buf, th = collect_stdout(p)
    ok = wait_for(lambda: len(buf) > 200)
    p.send_signal(signal.SIGINT)
    time.sleep(0.5)
    n1 = len(buf)
    time.sleep(0.5)
    check(ok and len(buf) == n1 and p.poll() is None, "Ctrl+C: the model stops and the program waits for input")
    p.send_signal(signal.SIGINT)
    rc = wait_exit(p, th)
    check(rc == 130 and bytes(buf).endswith(b"\nInterrupted by user\n"),
          "Ctrl+C at the input ends the run: rc %d %r" % (rc, bytes(buf[-60:])))


def strip_eof(out):
    check(out.endswith(EOF_TAIL), "ends at EOF: %r" % out[-60:])
    return out[:-len(EOF_TAIL)]


def single_turn_reply(out):
    """The reply of a -cnv -st --no-display-prompt run: the text before the closing "\\n\\n" and end marker."""
    reply = out[:-2] if out.endswith("\n\n") else out
    return reply[:-len(" [end of text]\n")] if reply.endswith(" [end of text]\n") else reply


def cli_reply(model, msg, n):
    """llama-cli's reply to one -p message (the text between the echo and the closing lines); None if not found."""
    p = subprocess.run([CLI, "-m", model, "-p", msg, "-st", "--no-show-timings", "-n", str(n)] + BASE,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    out = p.stdout.decode("utf-8", "replace")
    head, tail = "\n> %s\n\n" % msg, "\n\nExiting...\n"
    if p.returncode != 0 or head not in out or not out.endswith(tail):
        return None
    return out[out.index(head) + len(head):-len(tail)]


def test_conversation():
    msg = "And God said"
    # -cnv -p -st: one reply, the same as llama-cli's to the same message
    rc, out, err = completion(KJV, ["-cnv", "--chat-template", "chatml", "-p", msg, "-st", "-n", "24",
                                    "--no-display-prompt"])
    check(rc == 0 and out.endswith("\n\n"), "-cnv -st run: %d %r" % (rc, out[-60:]))
    reply, want = single_turn_reply(out), cli_reply(KJV, msg, 24)
    check(len(reply) > 0 and reply == want, "-cnv reply == llama-cli's:\n %r\n %r" % (reply, want))
    check(reply == single_shot(KJV, chatml([("user", msg)]), 24), "-cnv reply == single-shot on the chatml text")
    check("chat template example:\n<|im_start|>system\nYou are a helpful assistant<|im_end|>\n" in err,
          "chat template example on stderr")

    # --chat-template alone turns conversation mode on (auto); the prompt is shown as rendered; then the user's
    # turn after "\n> ": the context holds prompt + reply + the new turn (llama.cpp's format_single: a "\n" for the
    # end of the unfinished reply, then the user message and the assistant prefix)
    n = 96
    rc, out, err = completion(KJV, ["--chat-template", "chatml", "-p", msg, "-n", str(n)], "And the LORD spake\n")
    check(rc == 0 and "enabling conversation mode" in err, "auto conversation mode: %s" % err[-300:])
    body = strip_eof(out)
    p1 = chatml([("user", msg)])
    turns = body.split("\n> ")
    if check(len(turns) == 3 and turns[0].startswith(" " + p1) and turns[2] == "",
             "layout: prompt + reply, '\\n> ', reply, '\\n> ': %r" % body):
        r1 = turns[0][len(" " + p1):]
        check(r1 == single_shot(KJV, p1, n), "first reply")
        delta = "\n" + chatml([("user", "And the LORD spake")])
        want = single_shot(KJV, p1 + r1 + " " + delta, n)
        check(len(turns[1]) > 10 and want.startswith(turns[1]),
              "second reply == single-shot on the context:\n %r\n %r" % (turns[1], want))

    # -sys without -p: the system message is rendered first, the user goes first; -st ends after one reply
    sys_prompt = "Thou shalt answer"
    rc, out, err = completion(KJV, ["-cnv", "--chat-template", "chatml", "-sys", sys_prompt, "-st", "-n", str(n)],
                              "And God said\nnever read\n")
    ps = chatml([("system", sys_prompt)], add_ass=False)
    turns = out.split("\n> ")
    if check(rc == 0 and len(turns) == 2 and turns[0] == " " + ps and turns[1].endswith("\n\n"),
             "-sys -st layout: %r" % out):
        r = turns[1][:-2]
        want = single_shot(KJV, ps + " " + "\n" + chatml([("user", "And God said")]), n)
        check(len(r) > 10 and want.startswith(r), "-sys reply:\n %r\n %r" % (r, want))
    check(" - Not using system message" not in err, "no 'not using system message' line with -sys")

    # EOF at the first turn ends the run cleanly
    rc, out, err = completion(KJV, ["-cnv", "-n", "8"], "")
    check(rc == 0 and out == "\n> " + EOF_TAIL, "-cnv, EOF at once: %r" % out)

    # the stories model: first reply against llama-cli as well
    rc, out, err = completion(STORIES, ["-cnv", "--chat-template", "chatml", "-p", "e4 e5", "-st", "-n", "24",
                                        "--no-display-prompt"])
    reply, want = single_turn_reply(out), cli_reply(STORIES, "e4 e5", 24)
    check(rc == 0 and len(reply) > 0 and reply == want, "stories -cnv == llama-cli:\n %r\n %r" % (reply, want))


def test_plain():
    # without a chat template auto mode stays off: the README's command prints llama.cpp's greedy text
    ref = reference_greedy("In the beginning")
    if not check(ref is not None, "reference greedy text"):
        return
    rc, out, err = run([COMPLETION, "-m", KJV, "-p", "In the beginning", "-n", "64", "--temp", "0", "-t", "2"])
    check(rc == 0 and out == ref, "default (auto) mode == llama.cpp's greedy text: %r" % out)
    check("conversation mode" not in err, "no conversation mode without a template")
    # -no-cnv keeps plain completion even with a template; stdin is not read
    rc, out, err = completion(KJV, ["-no-cnv", "--chat-template", "chatml", "-p", "In the beginning", "-n", "64"],
                              "never read\n")
    check(rc == 0 and out == ref, "-no-cnv with a template: %r" % out)
    # llama.cpp's thread/placement flags (--poll attaches a pool with that level) and spellings leave the text as is;
    # --log-file gets the log lines too
    import tempfile
    with tempfile.TemporaryDirectory() as td:
        log = os.path.join(td, "completion.log")
        rc, out, err = run([COMPLETION, "--log-file", log, "--log-colors", "off", "-m", KJV, "-p", "In the beginning",
                            "-n", "64", "--temp", "0", "-t", "2", "--poll", "0", "--prio", "0", "--cpu-strict", "0",
                            "--numa", "distribute", "-dt", "0.1", "--ctx_size", "512"])
        check(rc == 0 and out == ref, "llama.cpp's --poll/--numa/-dt/--ctx_size flags: %r" % out)
        text = open(log, errors="replace").read() if os.path.exists(log) else ""
        check("llama_context" in text and "DEPRECATED: --defrag-thold" in text, "--log-file: %r" % text[-300:])
    rc, out, err = run([COMPLETION, "-m", KJV, "-p", "x", "--mmproj", "mm.gguf"])
    check(rc != 0 and "argument --mmproj is not supported by this program" in err, "--mmproj: %r" % err[-200:])
    rc, out, err = run([COMPLETION, "-m", KJV, "-p", "x", "-hf", "ggml-org/x-GGUF"])
    check(rc != 0 and "cannot download models" in err, "-hf refused: %r" % err[-200:])
    # Ctrl+C without -i ends the run with the timings
    p = subprocess.Popen([COMPLETION, "-m", KJV, "--temp", "0", "--no-warmup", "-t", "2", "-c", "4096", "-n", "-1",
                          "--ignore-eos", "-p", "In the beginning"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    try:
        o, e = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        o, e = p.communicate()
    check(p.returncode == 130 and o.endswith(b"\nInterrupted by user\n") and b"eval time =" in e,
          "Ctrl+C without -i: rc %d %r" % (p.returncode, o[-60:]))
    # errors and usage
    rc, out, err = completion(KJV, ["--chat-template", "no-such-template", "-p", "x"])
    check(rc != 0 and "no-such-template" in err, "unknown --chat-template: %r" % err[-300:])
    rc, out, err = run([COMPLETION, "-h"])
    for flag in ("-i, --interactive", "-if, --interactive-first", "-r, --reverse-prompt", "--in-prefix",
                 "--in-suffix", "-cnv, --conversation", "-st, --single-turn", "-sys, --system-prompt",
                 "--chat-template", "--no-display-prompt", "-mli, --multiline-input"):
        check(flag in out, "usage lists %s" % flag)


require(KJV)
require(STORIES)
require(INDEX)
{"interactive": test_interactive, "conversation": test_conversation, "plain": test_plain}[MODE]()
finish()
