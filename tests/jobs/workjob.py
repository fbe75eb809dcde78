#!/usr/bin/python3
"""workjob.py: a directory-mode job that proves what ran where, for the
lease and fleet tests (tests/t37-run-lease.sh, t36-agent.sh, t87-s3-fleet.sh).

It does --steps steps of --sleep seconds. Its state is the list of the
steps done, each with the attempt that did it (pid, SPOTRUN_ATTEMPT): kept
in memory and written, with state.json, into SPOTRUN_CKPT_DIR only when
spotrun asks for a checkpoint (the protocol: the directory is not changed
between requests), so a restored checkpoint holds exactly the steps that
were done before it. It also appends, as it goes, to --log DIR/JOB.log (JOB
is SPOTRUN_JOB), a file outside the checkpoint that survives every
attempt:

    start T K PID         an attempt began, resuming after step K (0: fresh);
                          T is when its process started (before the
                          interpreter's start-up, which a loaded machine
                          makes seconds long: the time spotrun counts)
    step N T PID          step N was done
    ckpt N T PID REASON   the state at step N went to spotrun (REASON: periodic,
                          notice, early); at the last step as the job's
                          last checkpoint (spotrun.done(N, last=True))
    done T PID            the last step was done

(T: epoch seconds.) At the end it writes the list of steps to DIR/JOB.final
(one "N PID" line each) and exits 0: a list that is 1..steps, each once,
in order, shows that every resume got the checkpoint it names.

Usage: workjob.py --log DIR [--steps N] [--sleep SECONDS]
"""

import argparse
import json
import os
import sys
import time

import spotrun


def append(path, line):
    with open(path, "a") as f:
        f.write(line + "\n")
        f.flush()


def process_start():
    """This process's start, in epoch seconds: /proc/self/stat's starttime
    (clock ticks after boot) against /proc/uptime."""
    with open("/proc/self/stat") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        up = float(f.read().split()[0])
    now = time.time()
    return now - (up - ticks / os.sysconf("SC_CLK_TCK"))


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--sleep", type=float, default=0.1)
    args = ap.parse_args()
    job = os.environ.get("SPOTRUN_JOB", "job")
    glog = os.path.join(args.log, job + ".log")
    d = spotrun.ckpt_dir()
    pid = os.getpid()
    done = []
    state = os.path.join(d, "state.json") if d else None
    if state and os.path.exists(state):
        with open(state) as f:
            done = [tuple(x) for x in json.load(f)["done"]]
    step = done[-1][0] if done else 0
    # a first look now: the job is past its start (its state read), so a
    # notice from here on gets its checkpoint, not a stop as one starting
    # (the tests' notices come at any time, some before its first step ends)
    spotrun.requested()
    append(glog, "start %.6f %d %d" % (process_start(), step, pid))
    print("resumed after step %d" % step if step else "starting fresh", flush=True)
    while step < args.steps:
        time.sleep(args.sleep)
        step += 1
        done.append((step, pid))
        append(glog, "step %d %.6f %d" % (step, time.time(), pid))
        print("step %d" % step, flush=True)
        if d and spotrun.requested():
            reason = spotrun.reason() or "?"
            write_atomic(state, json.dumps({"done": done}))
            append(glog, "ckpt %d %.6f %d %s" % (step, time.time(), pid, reason))
            # the last step's checkpoint is the job's last: a notice then
            # lets it end here rather than doing its end again elsewhere
            spotrun.done(step, last=step == args.steps)
    write_atomic(os.path.join(args.log, job + ".final"),
                 "".join("%d %d\n" % s for s in done))
    append(glog, "done %.6f %d" % (time.time(), pid))
    print("done %d steps" % step, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
