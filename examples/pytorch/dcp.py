#!/usr/bin/python3
"""pytorch/dcp.py: a job whose training state is sharded across its ranks,
FSDP-style, saved by every rank with torch.distributed.checkpoint into the
one directory spotrun hands out, and resumed at another world size.

Each rank (spotrun starts them: [resources] procs) holds 1/world of a
parameter vector and of its momentum, as DTensors sharded on dim 0 over a
1-D device mesh (gloo, on the CPU); it updates its shard only. The update of
each element is a function of its index and of the step alone (SGD with
momentum towards a target that moves with the step, +, - and * only), so the
training is the same, bit for bit, for any number of ranks that divides
N = 1200.

Checkpoints: spotrun.torch.requested() has every rank agree on the step;
dcp.save() writes each rank's shards (__RANK_0.distcp) and rank 0 the
metadata (.metadata) into spotrun.ckpt_dir(), and each rank answers
spotrun.done(step). On a resume each rank lays out its own shards, as many as
it now has, and dcp.load() fills them from whatever shards the ranks before
wrote: 2 ranks resume as 3 and go on. `result:` is a SHA-256 of the whole
parameter vector and momentum at the end: equal to an uninterrupted run's.

Needs torch 2.4 or later (torch.distributed.tensor; dcp.save and dcp.load).

Usage: dcp.py [--steps N] [--sleep S] [--every N]
"""

# First, before the slow `import torch`: it catches spotrun's request
# signal, whose default action would end the job.
import spotrun

import argparse
import hashlib
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Shard

N = 1200                # divisible by 1, 2, 3, 4, 5, 6, 8


def target(idx, step):
    """Where element idx is pulled at `step`: exact integer arithmetic."""
    return ((idx * 7919 + step * 104729) % 2001 - 1000).to(torch.float32) / 1024


# The state as DTensors over this rank's shards (no copies): what dcp.save
# writes, and what dcp.load fills in place on a resume.
def sharded(param, mom, mesh):
    return {"param": DTensor.from_local(param, mesh, [Shard(0)], run_check=False),
            "momentum": DTensor.from_local(mom, mesh, [Shard(0)], run_check=False)}


def main():
    ap = argparse.ArgumentParser(description="spotrun sharded-state PyTorch example job")
    ap.add_argument("--steps", type=int, default=400, help="steps to train (400)")
    ap.add_argument("--sleep", type=float, default=0.0, help="extra seconds per step (0)")
    ap.add_argument("--every", type=int, default=10, help="print the step every N steps (10)")
    args = ap.parse_args()

    torch.set_num_threads(1)
    spotrun.torch.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if N % world:
        sys.exit("dcp.py: %d ranks do not divide %d" % (world, N))
    mesh = init_device_mesh("cpu", (world,))
    per = N // world
    idx = torch.arange(rank * per, (rank + 1) * per)
    param = torch.zeros(per)
    mom = torch.zeros(per)

    step = spotrun.resume_step()
    if step is not None:
        state = sharded(param, mom, mesh)       # this world size's shards
        dcp.load(state, checkpoint_id=spotrun.ckpt_dir())
        param.copy_(state["param"].to_local())
        mom.copy_(state["momentum"].to_local())
        if rank == 0:
            print("resumed from step %d: %d ranks, from a checkpoint of %d"
                  % (step, world, spotrun.prev_world_size()), flush=True)
    else:
        step = 0
        if rank == 0:
            print("starting fresh: %d steps on %d ranks" % (args.steps, world), flush=True)

    while step < args.steps:
        grad = param - target(idx, step)
        mom = mom * 0.875 + grad
        param = param - mom * 0.0625
        step += 1
        if rank == 0 and step % args.every == 0:
            print("step %d" % step, flush=True)
        if args.sleep > 0:
            time.sleep(args.sleep)
        # A step boundary, agreed by every rank: each writes its shards.
        if spotrun.torch.requested():
            dcp.save(sharded(param, mom, mesh), checkpoint_id=spotrun.ckpt_dir())
            spotrun.done(step)

    whole = [torch.zeros(2 * per) for _ in range(world)]
    dist.all_gather(whole, torch.cat([param, mom]))
    if rank == 0:
        p = torch.cat([w[:per] for w in whole])
        m = torch.cat([w[per:] for w in whole])
        print("finished %d steps" % step, flush=True)
        print("result: %s" % hashlib.sha256(torch.cat([p, m]).numpy().tobytes()).hexdigest(),
              flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
