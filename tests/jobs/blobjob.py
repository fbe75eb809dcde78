#!/usr/bin/python3
"""blobjob.py: a directory-mode job for the end-to-end fault tests.

It counts steps and answers checkpoint requests by writing blob.bin (random,
incompressible bytes of a chosen size) and state.json (the step and the
blob's SHA-256) into SPOTRUN_CKPT_DIR, then the done file. Options make it
misbehave on purpose:

  --sizes A,B,...  bytes of blob.bin for the 1st, 2nd, ... answer (the last
                   size repeats): a large one fills a small store;
  --answer N       answer only the first N requests and ignore the rest
                   (-1: answer all), to test a job that misses its deadline.

On resume it checks the restored blob against state.json and prints
`resumed from step N, data ok` (or exits 1 naming the mismatch). SIGTERM
ends it cleanly with `stopping on SIGTERM at step N`. Every line is
flushed at once so the tests can follow it.
"""

import argparse
import hashlib
import json
import os
import signal
import sys
import time

requested = False
stopping = False


def on_request(signo, frame):
    global requested
    requested = True


def on_term(signo, frame):
    global stopping
    stopping = True


def say(msg):
    print(msg, flush=True)


def request_seq(path):
    """The seq=N of the request file, or None when there is none."""
    try:
        with open(path) as f:
            line = f.read()
    except FileNotFoundError:
        return None
    for word in line.split():
        if word.startswith("seq="):
            return word[4:]
    return ""


def write_file(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def main():
    if os.environ.get("SPOTRUN_CKPT_REQUEST"):
        signal.signal(signal.SIGUSR1, on_request)
    signal.signal(signal.SIGTERM, on_term)
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--sleep", type=float, default=0.05)
    ap.add_argument("--sizes", default="65536")
    ap.add_argument("--answer", type=int, default=-1)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    ckpt_dir = os.environ["SPOTRUN_CKPT_DIR"]
    request_path = os.environ["SPOTRUN_CKPT_REQUEST"]
    done_path = os.environ["SPOTRUN_CKPT_DONE"]
    resume = os.environ.get("SPOTRUN_RESUME_STEP", "")
    say("pid %d attempt %s" % (os.getpid(), os.environ.get("SPOTRUN_ATTEMPT", "?")))

    step = 0
    if resume:
        with open(os.path.join(ckpt_dir, "state.json")) as f:
            state = json.load(f)
        with open(os.path.join(ckpt_dir, "blob.bin"), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if str(state["step"]) != resume or digest != state["sha256"]:
            say("restored checkpoint is wrong: step %s (want %s), blob sha256 %s (want %s)"
                % (state["step"], resume, digest, state["sha256"]))
            return 1
        step = state["step"]
        say("resumed from step %d, data ok" % step)

    global requested
    answered = 0
    last_seq = None
    while step < args.steps and not stopping:
        step += 1
        time.sleep(args.sleep)
        if requested or os.path.exists(request_path):
            requested = False
            seq = request_seq(request_path)
            if seq is None or seq == last_seq:
                continue
            last_seq = seq
            if args.answer >= 0 and answered >= args.answer:
                say("ignoring request seq=%s at step %d" % (seq, step))
                continue
            blob = os.urandom(sizes[min(answered, len(sizes) - 1)])
            write_file(os.path.join(ckpt_dir, "blob.bin"), blob)
            state = {"step": step, "sha256": hashlib.sha256(blob).hexdigest()}
            write_file(os.path.join(ckpt_dir, "state.json"), json.dumps(state).encode())
            write_file(done_path, b"%d\n" % step)
            answered += 1
            say("answered request seq=%s at step %d with %d bytes" % (seq, step, len(blob)))
    # Done: ignore late requests (Python restores the default action,
    # death, for its handled signals while it shuts down).
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    if stopping:
        say("stopping on SIGTERM at step %d" % step)
    else:
        say("finished %d steps" % step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
