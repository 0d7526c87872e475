# llama-completion with --grammar / --grammar-file: the generated text must be a sentence of the grammar (greedy,
# stories260K). A grammar that does not parse must fail the run with an error.
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, data_dir, finish, require  # noqa: E402

COMPLETION = sys.argv[1]
STORIES = os.path.join(data_dir(), "models", "stories260K-f32.gguf")
BASE = ["-m", STORIES, "--temp", "0", "--no-warmup", "-t", "2", "-c", "256", "-no-cnv", "--no-display-prompt",
        "-p", "Once upon a time"]


def run(args):
    p = subprocess.run([COMPLETION] + BASE + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def generated(out):
    # the completion ends with the end-of-text marker when the grammar lets EOS through
    out = out.rstrip("\n")
    if out.endswith(" [end of text]"):
        out = out[:-len(" [end of text]")]
    return out


require(STORIES)

rc, out, err = run(["-n", "8", "--grammar", 'root ::= ("yes" | "no") "."'])
check(rc == 0, "yes/no run: rc %d %s" % (rc, err[-300:]))
check(re.fullmatch(r"(yes|no)\.", generated(out)) is not None, "yes/no text: %r" % out)

# a longer grammar from a file: words of lowercase letters separated by single spaces, ending with "!"
with tempfile.NamedTemporaryFile("w", suffix=".gbnf", delete=False) as f:
    f.write('# words then a bang\nroot ::= word (" " word){2,5} "!"\nword ::= [a-z]+\n')
    path = f.name
try:
    rc, out, err = run(["-n", "24", "--grammar-file", path])
    text = generated(out)
    check(rc == 0, "grammar-file run: rc %d %s" % (rc, err[-300:]))
    # -n may stop the text before the grammar completes: it must be a prefix of a sentence
    check(re.fullmatch(r"[a-z]+( [a-z]+){0,5}( |!)?|[a-z]+( [a-z]+){2,5}!", text) is not None and
          "  " not in text, "grammar-file text: %r" % text)
finally:
    os.unlink(path)

rc, out, err = run(["-n", "4", "--grammar", "root ::= undefined-rule"])
check(rc != 0 and "grammar" in err.lower(), "bad grammar fails: rc %d %s" % (rc, err[-300:]))

finish()
