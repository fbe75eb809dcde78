#!/usr/bin/python3
"""slowsave.py MIB SECONDS [STOPFILE]: a job whose one checkpoint takes seconds to save.

It answers the first checkpoint request with MIB MiB of base64 text (which
zstd at level 19 packs at a few MiB/s: with `level = 19` the save takes
seconds), prints "answered", then "working N" every 0.2 s until SECONDS
have passed since its start, and exits 0; SECONDS 0: until a ^C (at most
10 minutes, so that a ^C that never comes fails a test instead of hanging
it). With STOPFILE it ends (exit 0) once that file exists, however long the
save took (at most 10 minutes), so a test can end it after the event it
waits for rather than after a time only an idle machine meets. Later requests go unanswered, so exactly one save runs. A ^C (SIGINT)
ends it quietly by that signal, with the last "working N" line printed.
"""
import base64
import os
import signal
import sys
import time

mib, seconds = int(sys.argv[1]), float(sys.argv[2]) or 600.0
stopfile = sys.argv[3] if len(sys.argv) > 3 else None
if stopfile:
    seconds = 600.0
signal.signal(signal.SIGUSR1, lambda s, f: None)
req, done = os.environ["SPOTRUN_CKPT_REQUEST"], os.environ["SPOTRUN_CKPT_DONE"]
ckpt = os.environ["SPOTRUN_CKPT_DIR"]
start, n, answered = time.time(), 0, False
try:
    while time.time() - start < seconds and not (stopfile and os.path.exists(stopfile)):
        if not answered and os.path.exists(req):
            with open(os.path.join(ckpt, "state"), "wb") as f:
                f.write(base64.b64encode(os.urandom(mib * 786432)))
            with open(done + ".t", "w") as f:
                f.write("%d\n" % n)
            os.rename(done + ".t", done)
            answered = True
            print("answered", flush=True)
        n += 1
        print("working %d" % n, flush=True)
        time.sleep(0.2)
except KeyboardInterrupt:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
