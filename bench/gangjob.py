#!/usr/bin/python3
"""gangjob.py: one node's rank of the gang goodput benchmark's job
(bench/goodput-gang.sh), without torch.

Each rank does --steps steps of --step-ms milliseconds, timed against a
clock that does not drift (step k ends k steps after the attempt's first,
so a rank's work takes its steps' time and no more), and keeps its step in
rank_dir()/state. On a request it writes its state and answers done(100 *
seq): every node's spotrun numbers the gang's requests alike, so all ranks
answer at one step, the agreement a real job makes with a collective
(spotrun.torch.requested()). A resumed rank reads its own part. At the end
the ranks of the gang wait for each other (files in --barrier, per
SPOTRUN_EPOCH, which every node of a gang shares), so that no node ends the
job while another still works.

Alone (outside spotrun) it runs its steps and exits: the time of the work
itself.

It says on stderr how long it took to be ready (its process's start to its
first step: the interpreter, the imports, reading its state), so that the
benchmark can take the job's own start-ups out of spotrun's figure.

Usage: gangjob.py --steps N --step-ms MS --barrier DIR
"""
import argparse
import os
import sys
import time

import spotrun


def since_start():
    """Seconds since this process began (/proc: clock ticks since boot)."""
    with open("/proc/self/stat") as f:
        began = int(f.read().rsplit(")", 1)[1].split()[19])    # field 22
    with open("/proc/uptime") as f:
        up = float(f.read().split()[0])
    return up - began / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--step-ms", type=float, required=True)
    ap.add_argument("--barrier", required=True)
    a = ap.parse_args()
    rank, world = spotrun.rank() or 0, spotrun.world_size() or 1
    mine = spotrun.rank_dir()
    step = 0
    if spotrun.resume_step() is not None and mine is not None:
        try:
            with open(os.path.join(mine, "state")) as f:
                step = int(f.read().split()[0])
        except FileNotFoundError:
            pass
    def answer():
        if not spotrun.requested():     # one stat(2); False once answered
            return
        req = spotrun.request()
        with open(os.path.join(mine, "state"), "w") as f:
            f.write("%d\n" % step)
        spotrun.done(100 * req.seq)

    t0, dt = time.monotonic(), a.step_ms / 1000.0
    first = step
    sys.stderr.write("gangjob: rank %d ready %.3f s after its process began, at step %d\n"
                     % (rank, since_start(), step))
    sys.stderr.flush()
    while step < a.steps:
        step += 1
        wait = t0 + (step - first) * dt - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        answer()
    sys.stderr.write("gangjob: rank %d did its last step\n" % rank)
    sys.stderr.flush()
    if spotrun.supervised() and world > 1:
        # The ranks step on their own clocks, so one may end well before
        # another; it keeps answering the gang's requests while it waits,
        # or no checkpoint of the gang would commit until all had ended
        # (a notice then loses the others' work, again and again).
        epoch = os.environ.get("SPOTRUN_EPOCH", "0")
        mark = lambda k: os.path.join(a.barrier, "end.%s.%d" % (epoch, k))
        open(mark(rank), "w").close()
        while not all(os.path.exists(mark(k)) for k in range(world)):
            answer()
            time.sleep(0.01)
    return 0


if __name__ == "__main__":
    sys.exit(main())
