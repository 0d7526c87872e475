#!/usr/bin/env python3
# llama-cli (the chat program) driven through stdin, as a user would:
#   usage: test-cli.py LLAMA_CLI LLAMA_COMPLETION MODE      MODE: chat | stories | input | context | errors
# Replies are greedy (--temp 0). Each reply is checked against llama-completion run on the same conversation
# rendered here by hand from chatml's documented format (the models have no template, so llama-cli falls back to
# chatml): "<|im_start|>{role}\n{content}<|im_end|>\n" per message, then "<|im_start|>assistant\n".
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (check, collect_stdout, data_dir, finish, require, run, wait_exit,  # noqa: E402
                     wait_for)

CLI, COMPLETION, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
KJV = os.path.join(data_dir(), "models", "kjv", "kjv-target-f32.gguf")
STORIES = os.path.join(data_dir(), "models", "stories260K-f32.gguf")
N = 24
COMMON = ["--temp", "0", "-n", str(N), "-c", "512", "--no-warmup", "-t", "2"]

BANNER_COMMANDS = ("available commands:\n"
                   "  /exit or Ctrl+C     stop or exit\n"
                   "  /regen              regenerate the last response\n"
                   "  /clear              clear the chat history\n"
                   "  /read               add a text file\n")


def chatml(msgs):
    return "".join("<|im_start|>%s\n%s<|im_end|>\n" % (r, c) for r, c in msgs) + "<|im_start|>assistant\n"


def cli(model, args, stdin_text="", timeout=120):
    p = subprocess.run([CLI, "-m", model] + args, input=stdin_text.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def completion(model, prompt, extra=()):
    """llama-completion's greedy continuation of prompt, without its end-of-text marker."""
    rc, out, err = run([COMPLETION, "-m", model, "-no-cnv", "--no-display-prompt", "--no-escape", "-p", prompt]
                       + COMMON + list(extra), timeout=120)
    check(rc == 0, "llama-completion failed: " + err[-400:])
    if out.endswith("\n\n"):
        out = out[:-2]
    if out.endswith(" [end of text]\n"):
        out = out[:-len(" [end of text]\n")]
    return out


def turns(out):
    """The text after each "\\n> " prompt of a --no-show-timings run, up to the next prompt."""
    body = out.split("\n> ")
    return body[1:]


def stdin_reply(seg):
    # "\n" after the (unechoed) input line, the reply, then "\n"
    check(seg.startswith("\n") and seg.endswith("\n"), "turn layout: %r" % seg[:80])
    return seg[1:-1]


def prompt_reply(seg, prompt):
    # "-p PROMPT" echo: "PROMPT\n" "\n" reply "\n"
    head = prompt + "\n\n"
    check(seg.startswith(head), "echo of -p: %r" % seg[:80])
    return seg[len(head):-1]


def test_chat():
    rc, out, err = cli(KJV, COMMON + ["--no-show-timings"],
                       "And God said\n/regen\nAnd the LORD spake\n/clear\nAnd the LORD spake\n/exit\nnever read\n")
    check(rc == 0, "chat run exit status %d: %s" % (rc, err[-400:]))
    check("\nbuild      : " in out and "\nmodel      : kjv-target-f32.gguf\n" in out
          and "\nmodalities : text\n" in out and BANNER_COMMANDS in out, "banner: %r" % out[:400])
    check("using custom system prompt" not in out, "no system prompt line without -sys")
    check(out.endswith("\nExiting...\n"), "ends with Exiting...: %r" % out[-60:])
    t = turns(out)
    check(len(t) == 6, "six prompts (3 replies, /clear, a reply, /exit): %d" % len(t))
    if len(t) != 6:
        return
    r1, r1b, r2 = stdin_reply(t[0]), stdin_reply(t[1]), stdin_reply(t[2])
    check(len(r1) > 0, "a first reply")
    check(r1b == r1, "/regen gives the same greedy reply: %r vs %r" % (r1b, r1))
    check(t[3] == "\nChat history cleared.\n", "/clear message: %r" % t[3])
    r3 = stdin_reply(t[4])
    # the newline that follows any input line, then the closing line
    check(t[5] == "\n\nExiting...\n", "/exit ends the loop, later input unread: %r" % t[5])

    # the cross-checks: first reply, the second turn (after /regen, with the KV-cache prefix reused), after /clear
    check(r1 == completion(KJV, chatml([("user", "And God said")])), "first reply == llama-completion: %r" % r1)
    two = chatml([("user", "And God said"), ("assistant", r1), ("user", "And the LORD spake")])
    check(r2 == completion(KJV, two), "second turn == llama-completion on the whole conversation: %r" % r2)
    check(r3 == completion(KJV, chatml([("user", "And the LORD spake")])), "after /clear: a fresh conversation")

    # -p: echo, the same first reply; -st: exit after it; timings line by default; EOF ends cleanly
    rc, out, err = cli(KJV, COMMON + ["-p", "And God said", "-st"], "this is never read\n")
    check(rc == 0, "-st exit status")
    t = turns(out)
    check(len(t) == 1, "-st: one turn only: %d" % len(t))
    if t:
        m = re.search(r"\n\n\[ Prompt: [0-9]+\.[0-9] t/s \| Generation: [0-9]+\.[0-9] t/s \]\n\nExiting\.\.\.\n$", t[0])
        check(m is not None, "timings line then Exiting...: %r" % t[0][-120:])
        if m:
            check(prompt_reply(t[0][:m.start() + 1], "And God said") == r1, "-p reply == the stdin reply")

    rc, out, err = cli(KJV, COMMON + ["--no-show-timings"], "And God said\n")
    check(rc == 0 and out.endswith("\n> \nExiting...\n"), "EOF at the prompt exits cleanly: %r" % out[-40:])
    check("[ Prompt:" not in out, "--no-show-timings")

    # -sys: banner line and the system message in the rendering
    sys_prompt = "Thou shalt answer"
    rc, out, err = cli(KJV, COMMON + ["--no-show-timings", "-sys", sys_prompt, "-p", "And God said", "-st"])
    check(rc == 0 and "\nusing custom system prompt\n" in out, "-sys banner line")
    t = turns(out)
    if check(len(t) == 1, "-sys: one turn"):
        r = prompt_reply(t[0][:-len("\nExiting...\n")], "And God said")
        check(r == completion(KJV, chatml([("system", sys_prompt), ("user", "And God said")])),
              "-sys reply == llama-completion with the system message: %r" % r)
        # /clear keeps the system prompt
        rc, out, err = cli(KJV, COMMON + ["--no-show-timings", "-sys", sys_prompt],
                           "And God said\n/clear\nAnd God said\n")
        t = turns(out)
        check(len(t) == 4 and stdin_reply(t[2]) == r, "/clear keeps the system prompt")

    # -r: the reply stops before the reverse prompt, which is not shown
    if check("LORD" in r1, "the first reply has the word the -r test stops at: %r" % r1):
        rc, out, err = cli(KJV, COMMON + ["--no-show-timings", "-r", "LORD", "-p", "And God said", "-st"])
        t = turns(out)
        check(rc == 0 and len(t) == 1 and prompt_reply(t[0][:-len("\nExiting...\n")], "And God said")
              == r1.split("LORD")[0], "-r cuts the reply before the reverse prompt: %r" % t)

    # a long -p is echoed cut at 500 bytes
    long_prompt = ("And God said, Let there be light: and there was light. " * 12)[:600]
    rc, out, err = cli(KJV, ["--temp", "0", "-n", "2", "-c", "512", "--no-warmup", "-p", long_prompt, "-st"])
    check(rc == 0 and ("\n> " + long_prompt[:500] + " ... (truncated)\n") in out, "long -p echo truncated")


def test_stories():
    rc, out, err = cli(STORIES, COMMON + ["--no-show-timings"], "e4 e5\n/regen\nNf3\n")
    check(rc == 0, "stories run: %s" % err[-400:])
    check("\nmodel      : stories260K-f32.gguf\n" in out, "stories banner")
    t = turns(out)
    if not check(len(t) == 4, "stories: three replies then EOF: %d" % len(t)):
        return
    r1, r1b, r2 = stdin_reply(t[0]), stdin_reply(t[1]), stdin_reply(t[2])
    check(len(r1) > 0 and r1b == r1, "stories /regen")
    check(r1 == completion(STORIES, chatml([("user", "e4 e5")])), "stories first reply == llama-completion")
    check(r2 == completion(STORIES, chatml([("user", "e4 e5"), ("assistant", r1), ("user", "Nf3")])),
          "stories second turn == llama-completion")
    check(t[3] == "\nExiting...\n", "stories EOF")


def test_input():
    # multi-line messages: '\' continues a line; with -mli lines continue until one ends with '/'
    want = completion(KJV, chatml([("user", "And God\nsaid")]))
    rc, out, err = cli(KJV, COMMON + ["--no-show-timings"], "And God\\\nsaid\n")
    t = turns(out)
    check(rc == 0 and len(t) == 2 and stdin_reply(t[0]) == want, "backslash continuation")
    rc, out, err = cli(KJV, COMMON + ["--no-show-timings", "-mli"], "And God\nsaid/\n")
    t = turns(out)
    check(rc == 0 and len(t) == 2 and stdin_reply(t[0]) == want, "-mli message ended by '/'")

    # /read FILE: "--- File: FILE ---\n" + content, then the typed text, in one user message
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "verse.txt")
        with open(path, "w") as f:
            f.write("In the beginning God created the heaven and the earth.\n")
        rc, out, err = cli(KJV, COMMON + ["--no-show-timings"], "/read %s\nAnd God said\n" % path)
        t = turns(out)
        check(rc == 0 and len(t) == 3 and t[0] == "\nLoaded text from '%s'\n" % path, "/read message: %r" % t[:1])
        if len(t) == 3:
            msg = "--- File: %s ---\nIn the beginning God created the heaven and the earth.\nAnd God said" % path
            check(stdin_reply(t[1]) == completion(KJV, chatml([("user", msg)])), "/read content in the message")
        rc, out, err = cli(KJV, COMMON + ["--no-show-timings"], "/read %s\n" % os.path.join(d, "missing.txt"))
        check(rc == 0 and "file does not exist or cannot be opened" in err, "/read of a missing file: %r" % err)
    rc, out, err = cli(KJV, COMMON + ["--no-show-timings"], "/regen\n")
    check(rc == 0 and "No message to regenerate." in err, "/regen with nothing to regenerate")

    # Ctrl+C: the first one stops the reply (prompt comes back), one at the prompt exits
    p = subprocess.Popen([CLI, "-m", KJV, "--temp", "0", "-n", "-1", "--ignore-eos", "-c", "4096", "--no-warmup",
                          "-t", "2", "--no-show-timings"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    buf, th = collect_stdout(p)
    ok = wait_for(lambda: b"\n> " in buf)
    p.stdin.write(b"And God said\n")
    p.stdin.flush()
    ok = ok and wait_for(lambda: len(buf.split(b"\n> ")[-1]) > 40)  # the reply is streaming
    p.send_signal(signal.SIGINT)
    ok = ok and wait_for(lambda: buf.count(b"\n> ") == 2)      # back at the prompt
    check(ok, "Ctrl+C stops the reply and the prompt returns: %r" % bytes(buf[-200:]))
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)                                  # at the prompt: exit
    rc = wait_exit(p, th)
    check(rc == 0 and bytes(buf).endswith(b"\nExiting...\n"),
          "Ctrl+C at the prompt exits: rc %d %r" % (rc, bytes(buf[-60:])))


def test_context():
    # a message that cannot fit: clear error for that turn, the conversation goes on
    long_msg = "And God said, Let there be light: and there was light. " * 20
    rc, out, err = cli(KJV, ["--temp", "0", "-n", "8", "-c", "64", "--no-warmup", "--no-show-timings"],
                       long_msg + "\nAnd God said\n")
    check(rc == 0, "context run exit status")
    check(re.search(r"Error: request \([0-9]+ tokens\) exceeds the available context size \(64 tokens\)", err)
          is not None, "too long a message: %r" % err)
    t = turns(out)
    if check(len(t) == 3, "context: error turn, a reply, EOF: %d" % len(t)):
        check(stdin_reply(t[1]) == completion(KJV, chatml([("user", "And God said")]), ["-n", "8", "-c", "64"]),
              "after the error the history holds no trace of the failed message")

    # a reply that outgrows -c stops with a note; with --context-shift it goes on
    args = ["--temp", "0", "-n", "120", "--ignore-eos", "-c", "64", "--no-warmup", "--no-show-timings"]
    rc, out, err = cli(KJV, args, "And God said\n")
    check(rc == 0 and "the context is full" in err, "context full during a reply: %r" % err[-200:])
    short = stdin_reply(turns(out)[0]) if turns(out) else ""
    rc, out, err = cli(KJV, args + ["--context-shift"], "And God said\n")
    check(rc == 0 and "the context is full" not in err, "--context-shift: no stop: %r" % err[-200:])
    shifted = stdin_reply(turns(out)[0]) if turns(out) else ""
    check(len(shifted) > len(short) and shifted.startswith(short[:20]),
          "--context-shift keeps generating (%d vs %d bytes)" % (len(shifted), len(short)))


def test_errors():
    rc, out, err = cli(KJV, ["--bogus-flag"])
    check(rc != 0 and "invalid argument: --bogus-flag" in err, "unknown flag: %r" % err)
    rc, out, err = cli(KJV, ["-n", "abc"])
    check(rc != 0 and "-n" in err, "bad value: %r" % err)
    rc, out, err = cli(KJV, ["-no-cnv"])
    check(rc != 0 and "llama-completion" in err, "-no-cnv points to llama-completion: %r" % err)
    rc, out, err = cli(KJV, ["--chat-template", "no-such-template"])
    check(rc != 0 and "no-such-template" in err, "unknown --chat-template: %r" % err)
    rc, out, err = cli(os.path.join(data_dir(), "models", "no-such-model.gguf"), [])
    check(rc == 1 and "Failed to load the model" in err and "no-such-model.gguf" in err,
          "missing model file: %r" % err)
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.gguf")
        with open(bad, "wb") as f:
            f.write(b"GGUF\x03\x00\x00\x00garbage")
        rc, out, err = cli(bad, [])
        check(rc == 1 and "Failed to load the model" in err, "corrupt model file: %r" % err)
    rc, out, err = run([CLI, "-h"])
    check(rc == 0 and "-mli, --multiline-input" in out and "--show-timings" in out and "-st, --single-turn" in out,
          "usage lists the chat flags")
    rc, out, err = run([CLI, "-h"])
    check("--ppl-stride" not in out, "usage leaves out other programs' flags")


require(KJV)
require(STORIES)
{"chat": test_chat, "stories": test_stories, "input": test_input, "context": test_context,
 "errors": test_errors}[MODE]()
finish()
