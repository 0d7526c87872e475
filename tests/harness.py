# Shared helpers of the Python tests in tests/ (the counterpart of harness.h): check() counts passes and failures,
# finish() prints the closing "N passed, N failed" line that ctest logs and CI reads and exits 1 on any failure.
#
# Test data (../shared) is found through LLAMA_TEST_DATA (default: LLAMA_TEST_DATA_DEFAULT, else ../../shared from
# this file). A missing data file is a skip on a developer machine but a failure when CI is set (DESIGN §6).
import os
import subprocess
import sys
import threading
import time

n_pass = 0
n_fail = 0


def check(cond, what):
    global n_pass, n_fail
    if cond:
        n_pass += 1
    else:
        n_fail += 1
        print("FAIL: " + what, file=sys.stderr)
    return cond


def finish():
    print("%d passed, %d failed" % (n_pass, n_fail))
    sys.exit(1 if n_fail else 0)


def run_guarded(body, cleanup):
    """Runs body(); an exception (a crashed server or test) counts as one failure instead of aborting without a
    count; then cleanup() and finish()."""
    try:
        body()
    except Exception as e:
        import traceback
        traceback.print_exc()
        check(False, f"test aborted: {e!r}")
    finally:
        cleanup()
    finish()


def data_dir():
    d = os.environ.get("LLAMA_TEST_DATA") or os.environ.get("LLAMA_TEST_DATA_DEFAULT")
    if d:
        return d
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared")


def require(path):
    if os.path.exists(path):
        return True
    if os.environ.get("CI"):
        check(False, "test data missing: " + path)
        finish()
    print("SKIP: test data missing: " + path, file=sys.stderr)
    print("0 passed, 0 failed")
    sys.exit(0)


def run(args, timeout=900):
    """Runs a program; returns (exit status, stdout, stderr) as text."""
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def collect_stdout(p):
    """Collects the output of the running process p (stdout=PIPE) into a bytearray as it comes, from a daemon
    thread; returns (buffer, thread). For tests that interact with a program while it writes."""
    buf = bytearray()

    def reader():
        while True:
            b = p.stdout.read1(4096)
            if not b:
                return
            buf.extend(b)
    th = threading.Thread(target=reader, daemon=True)
    th.start()
    return buf, th


def wait_for(cond, secs=60):
    """Polls cond() until it holds (True) or secs pass (False)."""
    end = time.time() + secs
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def wait_exit(p, reader, secs=60):
    """Waits for p to end (killed after secs: -1) and for its collect_stdout reader; returns the exit status."""
    try:
        rc = p.wait(timeout=secs)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = -1
    reader.join(timeout=5)
    return rc
