#!/usr/bin/python3
"""oncejob.py: a job of two ranks that torchrun starts, itself run by spotrun
with launch = once (t65-pytorch-ranks.sh): the ranks share one done marker,
which spotrun.torch.save() answers once both have written their files."""
import spotrun

import os
import sys
import time

import torch

spotrun.torch.init_process_group("gloo")
rank = torch.distributed.get_rank()
torch.manual_seed(rank)
model = torch.nn.Linear(4, 2)
step = spotrun.torch.load(model=model)
if step is not None:
    print("rank %d resumed at step %d (RANK %s, SPOTRUN_WORLD_SIZE %s)" % (
        rank, step, os.environ["RANK"], os.environ["SPOTRUN_WORLD_SIZE"]), flush=True)
step = step or 0
# a first look before the test's notice (it waits for this line)
spotrun.requested()
print("rank %d training" % rank, flush=True)
for _ in range(int(sys.argv[1])):
    step += 1
    time.sleep(0.05)
    if spotrun.torch.requested() and spotrun.torch.save(step, model=model):
        print("rank %d saved step %d" % (rank, step), flush=True)
torch.distributed.barrier()
print("rank %d finished at step %d" % (rank, step), flush=True)
sys.stdout.flush()
os._exit(0)
