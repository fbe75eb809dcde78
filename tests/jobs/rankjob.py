#!/usr/bin/python3
"""rankjob.py: one rank of a job of several, without torch, for the ranks'
end-to-end test (t35-ranks.sh). It runs --steps steps an attempt; on a
request it writes its part, rank_dir()/state ("rank R step S world W"), and
answers done(S) with S = 100 * the request's seq, which every rank computes
alike (a stand-in for the agreement a real job makes: spotrun.torch.
requested()); on a resume it prints what it found: the previous world size
and every part.

Options (each rank gets the same): --steps N, --sleep S per step,
--mute R (rank R never answers), --skew R (rank R answers at S + 1),
--fail R@S (rank R exits 3 at step S), --hold R:PATH (rank R, its part of
the first request written, waits for PATH to exist before it answers),
--hold-seen FILE (that rank, its late answer given, waits up to 60 s
for spotrun's timeline FILE to say it saw that answer: taken at once,
the next request's answer could replace it before spotrun looked),
--later-steps N (the steps of every attempt after the first), --env
(print the rank variables), --ready DIR (a barrier, as a real job's
process group makes: each rank makes DIR/ATTEMPT.RANK once it printed
its variables and what it resumed from, and takes its first step once
every rank of its attempt has: a rank may fail, or write its next part,
only once the others have read theirs).
"""
import spotrun

import argparse
import os
import sys
import time

VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
        "ROLE_NAME", "ROLE_WORLD_SIZE", "GROUP_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
        "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID",
        "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_ERROR_FILE", "CUDA_VISIBLE_DEVICES",
        "OMP_NUM_THREADS", "SPOTRUN_WORLD_SIZE", "SPOTRUN_PREV_WORLD_SIZE", "SPOTRUN_CKPT_DONE")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--sleep", type=float, default=0.05)
    ap.add_argument("--mute", type=int, default=-1)
    ap.add_argument("--skew", type=int, default=-1)
    ap.add_argument("--fail", default="")
    ap.add_argument("--hold", default="")
    ap.add_argument("--hold-seen", default="")
    ap.add_argument("--later-steps", type=int, default=-1)
    ap.add_argument("--env", action="store_true")
    ap.add_argument("--ready", default="")
    a = ap.parse_args()
    rank, world = spotrun.rank(), spotrun.world_size()
    if a.env:
        print("env " + " ".join("%s=%s" % (k, os.environ.get(k, "(unset)")) for k in VARS),
              flush=True)
    if a.later_steps >= 0 and int(os.environ.get("SPOTRUN_ATTEMPT", "1")) > 1:
        a.steps = a.later_steps
    step = 0
    if spotrun.resume_step() is not None:
        prev = spotrun.prev_world_size()
        parts = []
        for k in range(prev or 0):
            with open(os.path.join(spotrun.rank_dir(k), "state")) as f:
                parts.append(f.read().strip())
        print("resumed at step %d, previous world %s: %s"
              % (spotrun.resume_step(), prev, "; ".join(parts)), flush=True)
    # a first look now: past its start, so that a notice the test sends
    # once the ranks run gets their checkpoint, not a stop as one starting
    spotrun.request()
    fail_rank, _, fail_step = a.fail.partition("@")
    hold_rank, _, hold_path = a.hold.partition(":")
    if a.ready:
        attempt = os.environ.get("SPOTRUN_ATTEMPT", "1")
        mark = lambda k: os.path.join(a.ready, "%s.%d" % (attempt, k))
        open(mark(rank), "w").close()
        while not all(os.path.exists(mark(k)) for k in range(world)):
            time.sleep(0.02)
    while step < a.steps:
        step += 1
        time.sleep(a.sleep)
        if a.fail and rank == int(fail_rank) and step == int(fail_step):
            print("failing at step %d" % step, flush=True)
            sys.exit(3)
        req = spotrun.request()
        if req is None or rank == a.mute:
            continue
        at = 100 * req.seq + (1 if rank == a.skew else 0)
        with open(os.path.join(spotrun.rank_dir(), "state"), "w") as f:
            f.write("rank %d step %d world %d\n" % (rank, at, world))
        held = a.hold and rank == int(hold_rank)
        if held:
            print("holding request %d at step %d" % (req.seq, at), flush=True)
            while not os.path.exists(hold_path):
                time.sleep(0.02)
            a.hold = ""
        spotrun.done(at)
        print("answered request %d at step %d" % (req.seq, at), flush=True)
        if held and a.hold_seen:
            seen = " answered request %d, which request" % req.seq
            until = time.time() + 60
            while time.time() < until:
                try:
                    with open(a.hold_seen) as f:
                        if seen in f.read():
                            break
                except OSError:
                    pass
                time.sleep(0.02)
    print("finished %d steps" % step, flush=True)


if __name__ == "__main__":
    main()
