#!/usr/bin/python3
"""pytorch/train.py: a real PyTorch training job that checkpoints under spotrun.

An MLP with dropout learns a fixed random teacher network with AdamW, on
CPU, one thread, deterministic algorithms. The batch of step s is drawn from
a generator seeded with (seed, s); spotrun.torch saves the model, the
optimizer and the random number generators' states (dropout draws from
torch's), so a run that is preempted and resumed is bit-identical to one
that is not: same final weights, same `result:` line (a SHA-256 over every
tensor's name, dtype, shape and bytes).

The checkpoint protocol is the spotrun module's business (python/spotrun,
doc/python.md): resume with spotrun.torch.load, and at each step boundary
answer a request with spotrun.torch.save. Run by hand, outside spotrun, both
do nothing and the script simply trains.

Debian's python3-torch is visible to /usr/bin/python3 only: run it with
/usr/bin/python3, not the first python3 on PATH.

Usage: train.py [--steps N] [--sleep S] [--seed N] [--every N] [--out FILE]
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
from torch import nn

IN, HIDDEN, OUT = 32, 128, 8
BATCH = 64


def make_model():
    return nn.Sequential(
        nn.Linear(IN, HIDDEN), nn.GELU(), nn.Dropout(0.1),
        nn.Linear(HIDDEN, HIDDEN), nn.GELU(), nn.Dropout(0.1),
        nn.Linear(HIDDEN, OUT))


def batch(step, seed, teacher):
    """The batch of `step`: the same for every run, resumed or not."""
    g = torch.Generator().manual_seed(seed * 1000003 + step)
    x = torch.randn(BATCH, IN, generator=g)
    with torch.no_grad():
        y = teacher(x) + 0.01 * torch.randn(BATCH, OUT, generator=g)
    return x, y


def state_digest(sd):
    """SHA-256 over each tensor's name, dtype, shape and raw bytes, in order."""
    h = hashlib.sha256()
    for name, t in sd.items():
        t = t.detach().contiguous().cpu()
        h.update(("%s %s %s\n" % (name, t.dtype, tuple(t.shape))).encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description="spotrun PyTorch example job")
    ap.add_argument("--steps", type=int, default=800, help="steps to train (800)")
    ap.add_argument("--sleep", type=float, default=0.0,
                    help="extra seconds per step, to stretch the run (0)")
    ap.add_argument("--seed", type=int, default=1, help="model and data seed (1)")
    ap.add_argument("--every", type=int, default=50, help="print every N steps (50)")
    ap.add_argument("--out", help="save the final state_dict here (torch.save)")
    args = ap.parse_args()

    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    teacher = make_model().eval()
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    step = spotrun.torch.load(model=model, optimizer=opt)
    if step is not None:
        print("resumed from step %d (attempt %s)"
              % (step, os.environ.get("SPOTRUN_ATTEMPT", "?")), flush=True)
    else:
        step = 0
        print("starting fresh: %d steps" % args.steps, flush=True)

    loss_fn = nn.MSELoss()
    model.train()
    loss = torch.tensor(float("nan"))
    while step < args.steps:
        x, y = batch(step, args.seed, teacher)
        loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        if step % args.every == 0:
            print("step %d loss %.6f" % (step, loss.item()), flush=True)
        if args.sleep > 0:
            time.sleep(args.sleep)
        # A step boundary: the safe point to answer a checkpoint request.
        if spotrun.requested() and spotrun.torch.save(step, model=model, optimizer=opt):
            print("checkpoint at step %d" % step, flush=True)

    sd = model.state_dict()
    if args.out:
        torch.save(sd, args.out)
    print("finished %d steps, loss %.6f" % (step, loss.item()), flush=True)
    print("result: %s" % state_digest(sd), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
