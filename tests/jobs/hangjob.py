#!/usr/bin/python3
"""hangjob.py: ranks of a gloo group that meet at a barrier, but for one:
`hangjob.py hang R` has rank R sleep instead (the others' barrier times out
after 3 s), `hangjob.py crash R` has rank R raise before it. The group is
made with gloo's default timeout, so that every rank's start (importing
torch takes seconds on a loaded machine) is waited for; the barrier that
times out is that of a second group, made with 3 s once all are in. For
t65-pytorch-ranks.sh: what spotrun says and that nothing is left running.
When rank R crashes, the others' barrier fails at once too (gloo: the
connection closed by peer); they wait 2 s before they end, so that rank R
is the first to fail by a margin no load on the test machine can undo
(ranks reaped in one wake are otherwise taken in rank order)."""
import spotrun

import datetime
import sys
import time

import torch.distributed as dist

mode, who = sys.argv[1], int(sys.argv[2])
spotrun.torch.init_process_group("gloo")
rank = dist.get_rank()
group = None
if mode == "hang":
    group = dist.new_group(timeout=datetime.timedelta(seconds=3))
if rank == who and mode == "hang":
    print("rank %d hangs instead of meeting the others" % rank, flush=True)
    time.sleep(3600)
if rank == who and mode == "crash":
    raise RuntimeError("rank %d crashes before the barrier" % rank)
try:
    dist.barrier(group=group)
except RuntimeError:
    if mode == "crash":
        time.sleep(2)
    raise
print("rank %d passed the barrier" % rank, flush=True)
