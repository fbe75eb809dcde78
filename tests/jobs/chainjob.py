#!/usr/bin/python3
"""chainjob.py: a directory-mode job with a large state and an exact result,
for the S3 fault tests (tests/t83-s3-faults.sh).

Its "training" is a hash chain: h(0) = SHA-256("chainjob"), and each step s
makes h(s) = SHA-256(h(s-1) || s as 8 bytes big-endian). The last line of a
run is `result: <h(steps)>`, the same whether the run was interrupted and
resumed any number of times or not - but only when every resume got the
state of the checkpoint it claims.

A checkpoint request (the file SPOTRUN_CKPT_REQUEST, with SIGUSR1) is
answered at the next step boundary with state.json (step, h, size) and
blob.bin: --size bytes of SHAKE-256(h), incompressible and a function of the
state, so that a restore checks every byte. --delay makes it take that
long to answer (a job whose snapshot is slow), which gives a test time to
act between spotrun's request and its upload. --stay makes it take no step
after it answered a notice's request (reason=notice in the request file),
and not exit after its last step but answer requests at it, until spotrun
stops it (at most 10 minutes): on a slow machine a job that ran on could
otherwise finish before the test sends its notice, or before the notice's
checkpoint is committed, and a run that finished is not preempted. On
resume it prints `resumed
from step N (attempt A), data ok`, or exits 1 naming what is wrong; a
fresh start prints `starting fresh: N steps`. Every line is flushed at once
so the tests can follow it.

Usage: chainjob.py [--steps N] [--sleep SECONDS] [--size BYTES] [--delay SECONDS] [--stay]
"""

import argparse
import hashlib
import json
import os
import signal
import sys
import time

requested = False


def on_request(signo, frame):
    global requested
    requested = True


def say(msg):
    print(msg, flush=True)


def blob_of(h, size):
    return hashlib.shake_256(bytes.fromhex(h)).digest(size)


def next_h(h, step):
    return hashlib.sha256(bytes.fromhex(h) + step.to_bytes(8, "big")).hexdigest()


def write_file(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def request_word(path, key):
    """The KEY=VALUE's value of the request file, or None when there is none."""
    try:
        with open(path) as f:
            line = f.read()
    except FileNotFoundError:
        return None
    for word in line.split():
        if word.startswith(key + "="):
            return word[len(key) + 1:]
    return ""


def restore(ckpt_dir, resume):
    with open(os.path.join(ckpt_dir, "state.json")) as f:
        state = json.load(f)
    if str(state["step"]) != resume:
        say("restored checkpoint is wrong: step %s, SPOTRUN_RESUME_STEP %s"
            % (state["step"], resume))
        sys.exit(1)
    with open(os.path.join(ckpt_dir, "blob.bin"), "rb") as f:
        blob = f.read()
    if blob != blob_of(state["h"], state["size"]):
        say("restored checkpoint is wrong: blob.bin (%d bytes) is not the state's"
            % len(blob))
        sys.exit(1)
    return state["step"], state["h"]


def main():
    if os.environ.get("SPOTRUN_CKPT_REQUEST"):
        signal.signal(signal.SIGUSR1, on_request)
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--sleep", type=float, default=0.05)
    ap.add_argument("--size", type=int, default=1 << 20)
    ap.add_argument("--delay", type=float, default=0)
    ap.add_argument("--stay", action="store_true")
    args = ap.parse_args()

    ckpt_dir = os.environ.get("SPOTRUN_CKPT_DIR", "")
    request_path = os.environ.get("SPOTRUN_CKPT_REQUEST", "")
    done_path = os.environ.get("SPOTRUN_CKPT_DONE", "")
    resume = os.environ.get("SPOTRUN_RESUME_STEP", "")
    under_spotrun = bool(ckpt_dir and request_path and done_path)

    step, h = 0, hashlib.sha256(b"chainjob").hexdigest()
    if under_spotrun and resume:
        step, h = restore(ckpt_dir, resume)
        say("resumed from step %d (attempt %s), data ok"
            % (step, os.environ.get("SPOTRUN_ATTEMPT", "?")))
    else:
        say("starting fresh: %d steps" % args.steps)

    global requested
    answered = None

    def answer():
        """Answer a new request at this step; stay after a notice's."""
        global requested
        nonlocal answered
        if not (requested or os.path.exists(request_path)):
            return
        requested = False
        seq = request_word(request_path, "seq")
        reason = request_word(request_path, "reason")
        if seq is None or seq == answered:
            return
        answered = seq
        if args.delay > 0:
            time.sleep(args.delay)
        write_file(os.path.join(ckpt_dir, "blob.bin"), blob_of(h, args.size))
        state = {"step": step, "h": h, "size": args.size}
        write_file(os.path.join(ckpt_dir, "state.json"), json.dumps(state).encode())
        write_file(done_path, b"%d\n" % step)
        say("checkpoint at step %d" % step)
        if args.stay and reason == "notice":
            time.sleep(600)

    while step < args.steps:
        step += 1
        h = next_h(h, step)
        if args.sleep > 0:
            time.sleep(args.sleep)
        if under_spotrun:
            answer()
    stay_until = time.time() + 600
    while args.stay and under_spotrun and time.time() < stay_until:
        time.sleep(0.05)
        answer()
    # Done: ignore late requests (Python restores the default action,
    # death, for its handled signals while it shuts down).
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    say("finished %d steps" % step)
    say("result: %s" % h)
    return 0


if __name__ == "__main__":
    sys.exit(main())
