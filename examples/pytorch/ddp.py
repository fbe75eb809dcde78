#!/usr/bin/python3
"""pytorch/ddp.py: a data-parallel PyTorch job of several ranks under spotrun,
whose optimizer state is sharded across the ranks (ZeRO stage 1), and which
resumes on another number of ranks by resharding that state.

Each rank (spotrun starts them: [resources] procs, or one per GPU; torchrun
runs it unchanged) holds the whole model, wrapped in DistributedDataParallel
(gloo, on the CPU), which averages the gradients; each rank keeps the
AdamW state of its own slice of the flattened parameters only, updates that
slice, and an all-gather puts the slices together again. The global batch of
step s (48 rows) is drawn from a generator seeded with (seed, s) and split
among the ranks, so the training is the same, up to the order of floating-
point sums, for any number of ranks that divides 48.

Checkpoints (the spotrun module, doc/python.md): spotrun.torch.requested()
has every rank agree on the step; rank 0 writes the parameters, model.pt, and
each rank its slice of the optimizer, rank_dir()/optim.pt (its range, step
count, exp_avg, exp_avg_sq); each answers spotrun.done(step). On a resume
prev_world_size() says how many slices there are: the rank concatenates them
and takes its new slice, so 4 ranks resume as 2 or 3 and go on with the same
optimizer state. On the same number of ranks a resumed run is bit-identical to
one that was never stopped (`result:`, a SHA-256 of the final parameters).

Usage: ddp.py [--steps N] [--sleep S] [--seed N] [--every N]
"""

# First, before the slow `import torch`: it catches spotrun's request
# signal, whose default action would end the job.
import spotrun

import argparse
import hashlib
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn

IN, HIDDEN, OUT = 16, 64, 4
BATCH = 48              # divisible by 1, 2, 3, 4, 6, 8


def make_model():
    return nn.Sequential(nn.Linear(IN, HIDDEN), nn.GELU(), nn.Linear(HIDDEN, HIDDEN),
                         nn.GELU(), nn.Linear(HIDDEN, OUT))


def batch(step, seed, teacher):
    """The global batch of `step`: the same for every run and world size."""
    g = torch.Generator().manual_seed(seed * 1000003 + step)
    x = torch.randn(BATCH, IN, generator=g)
    with torch.no_grad():
        y = teacher(x) + 0.01 * torch.randn(BATCH, OUT, generator=g)
    return x, y


def flat(model):
    return nn.utils.parameters_to_vector(model.parameters()).detach()


def shard_range(n, rank, world):
    """Rank's slice [lo, hi) of n values, every slice `per` long but the last."""
    per = -(-n // world)
    lo = min(rank * per, n)
    return lo, min(lo + per, n), per


def save(step, model, opt, lo, hi, n):
    if spotrun.rank() == 0:
        spotrun._write_atomic(os.path.join(spotrun.ckpt_dir(), "model.pt"),
                              lambda f: torch.save(flat(model), f))
    st = opt.state_dict()["state"][0]
    part = {"lo": lo, "hi": hi, "n": n, "step": st["step"], "exp_avg": st["exp_avg"],
            "exp_avg_sq": st["exp_avg_sq"]}
    spotrun._write_atomic(os.path.join(spotrun.rank_dir(), "optim.pt"),
                          lambda f: torch.save(part, f))
    spotrun.done(step)


def load(model, opt, shard, lo, hi, n):
    """Parameters from model.pt; this rank's optimizer slice cut from the
    slices of the ranks that wrote them, however many they were."""
    prev = spotrun.prev_world_size()
    params = torch.load(os.path.join(spotrun.ckpt_dir(), "model.pt"))
    nn.utils.vector_to_parameters(params, model.parameters())
    parts = sorted((torch.load(os.path.join(spotrun.rank_dir(k), "optim.pt"))
                    for k in range(prev)), key=lambda p: p["lo"])
    if [p["lo"] for p in parts] != [0] + [p["hi"] for p in parts[:-1]] or parts[-1]["hi"] != n:
        sys.exit("ddp.py: the %d optimizer slices do not cover the %d parameters" % (prev, n))
    exp_avg = torch.cat([p["exp_avg"] for p in parts])
    exp_avg_sq = torch.cat([p["exp_avg_sq"] for p in parts])
    sd = opt.state_dict()
    sd["state"] = {0: {"step": parts[0]["step"], "exp_avg": exp_avg[lo:hi].clone(),
                       "exp_avg_sq": exp_avg_sq[lo:hi].clone()}}
    opt.load_state_dict(sd)
    with torch.no_grad():
        shard.copy_(params[lo:hi])
    return prev


def main():
    ap = argparse.ArgumentParser(description="spotrun data-parallel PyTorch example job")
    ap.add_argument("--steps", type=int, default=600, help="steps to train (600)")
    ap.add_argument("--sleep", type=float, default=0.0, help="extra seconds per step (0)")
    ap.add_argument("--seed", type=int, default=1, help="model and data seed (1)")
    ap.add_argument("--every", type=int, default=10, help="print the loss every N steps (10)")
    args = ap.parse_args()

    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    # Not dist.init_process_group: a request signal in the middle of the
    # rendezvous would fail it (spotrun.torch holds the signal meanwhile).
    spotrun.torch.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)
    teacher = make_model().eval()
    model = make_model()
    n = flat(model).numel()
    lo, hi, per = shard_range(n, rank, world)
    shard = flat(model)[lo:hi].clone().requires_grad_()
    opt = torch.optim.AdamW([shard], lr=1e-3, weight_decay=0.01)
    step = spotrun.resume_step()
    if step is not None:
        prev = load(model, opt, shard, lo, hi, n)
        if rank == 0:
            print("resumed from step %d: %d rank%s, the optimizer state resharded from %d"
                  % (step, world, "" if world == 1 else "s", prev), flush=True)
    else:
        step = 0
        if rank == 0:
            print("starting fresh: %d steps on %d ranks" % (args.steps, world), flush=True)
    # find_unused_parameters keeps DDP from rebuilding its gradient bucket
    # after the first step in the order the gradients came: that layout, and
    # so the order in which gloo sums each element, would then differ
    # between a run's first step and a resume's, and a resumed run would
    # differ from an uninterrupted one in the last bits. (It costs a walk of
    # the graph per step and one warning per rank: "did not find any unused
    # parameters".)
    ddp = nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)
    rows = BATCH // world
    while step < args.steps:
        x, y = batch(step, args.seed, teacher)
        x, y = x[rank * rows:(rank + 1) * rows], y[rank * rows:(rank + 1) * rows]
        loss = ((ddp(x) - y) ** 2).mean()
        for p in model.parameters():
            p.grad = None
        loss.backward()
        grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        shard.grad = grad[lo:hi].clone()
        opt.step()
        # The slices together again: every rank gets the whole update.
        mine = torch.zeros(per)
        mine[:hi - lo] = shard.detach()
        slices = [torch.zeros(per) for _ in range(world)]
        dist.all_gather(slices, mine)
        with torch.no_grad():
            nn.utils.vector_to_parameters(torch.cat(slices)[:n], model.parameters())
        step += 1
        if step % args.every == 0:
            total = loss.detach().clone()
            dist.all_reduce(total)
            if rank == 0:
                print("step %d loss %.9e" % (step, total.item() / world), flush=True)
        if args.sleep > 0:
            time.sleep(args.sleep)
        # A step boundary, agreed by every rank: the safe point to answer.
        if spotrun.torch.requested():
            save(step, model, opt, lo, hi, n)
            if rank == 0:
                print("checkpoint at step %d" % step, flush=True)
    if rank == 0:
        print("finished %d steps" % step, flush=True)
        print("result: %s" % hashlib.sha256(flat(model).numpy().tobytes()).hexdigest(), flush=True)
    # Out without tearing the group down: torch 1.13 can deadlock at exit
    # when DDP's reducer, freed with the GIL held, joins a gloo thread that
    # waits for the GIL to free a tensor (seen here: one rank of four hung).
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
