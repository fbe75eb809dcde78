#!/usr/bin/python3
"""quickstart/train.py: the smallest job that checkpoints under spotrun.

A deterministic "training" run in pure Python 3 (standard library only, so
it runs on a bare machine): a linear head (16x16 weights + 16 biases) on top
of a frozen random embedding table learns a fixed teacher with SGD and
momentum. The data of step s come from a random.Random seeded with
(seed, s), and the optimizer's momentum is checkpointed with the weights, so
a run that is stopped and resumed computes exactly the same steps as one
that is not, and prints the same `result:` line (the SHA-256 of the final
weights' bytes).

The checkpoint protocol is left to the spotrun module (python/spotrun,
doc/python.md, standard library only too):
  - on start, spotrun.resume_step() says whether SPOTRUN_CKPT_DIR holds a
    restored checkpoint (state.json, params.bin, embed.bin) and of which step;
  - at each step boundary spotrun.requested() says whether spotrun asks for
    a checkpoint (a request file, plus SIGUSR1, which importing spotrun
    catches); the job then writes its files into spotrun.ckpt_dir() and
    calls spotrun.done(step);
  - every --every steps spotrun.report(step, loss=...) gives spotrun the
    loss, which `spotrun status SWEEP` and `spotrun report` draw as curves.
Without spotrun (no SPOTRUN_* variables) those say "no" and it simply trains
to the end.

Usage: train.py [--steps N] [--sleep SECONDS] [--seed N] [--every N]
"""

# First: catches spotrun's request signal, whose default action would end
# the job.
import spotrun

import argparse
import hashlib
import json
import math
import os
import random
import struct
import sys
import time

DIM = 16       # features in, outputs out
VOCAB = 2048   # rows of the frozen embedding table (2048 x 16 doubles = 256 KiB)
TOKENS = 4     # tokens per example, their embeddings averaged
BATCH = 8
LR = 0.05
MOMENTUM = 0.9

def pack(values):
    """The exact bytes of a list of floats (little-endian IEEE doubles)."""
    return struct.pack("<%dd" % len(values), *values)


def unpack(data):
    return list(struct.unpack("<%dd" % (len(data) // 8), data))


def init_model(seed):
    """Frozen embeddings, the teacher to learn, and zeroed trainable params."""
    rng = random.Random(seed)
    embed = [rng.gauss(0.0, 1.0) for _ in range(VOCAB * DIM)]
    teacher = [rng.gauss(0.0, 0.5) for _ in range(DIM * DIM + DIM)]
    params = [0.0] * (DIM * DIM + DIM)
    velocity = [0.0] * (DIM * DIM + DIM)
    return embed, teacher, params, velocity


def features(embed, tokens):
    x = [0.0] * DIM
    for t in tokens:
        row = embed[t * DIM:(t + 1) * DIM]
        for i in range(DIM):
            x[i] += row[i]
    return [v / len(tokens) for v in x]


def forward(p, x):
    """y = W x + b with W row-major in p[0:DIM*DIM] and b after it."""
    out = []
    for o in range(DIM):
        w = p[o * DIM:(o + 1) * DIM]
        out.append(math.fsum(w[i] * x[i] for i in range(DIM)) + p[DIM * DIM + o])
    return out


def train_step(step, seed, embed, teacher, params, velocity):
    """One SGD-with-momentum step on the batch of `step`; returns the loss."""
    rng = random.Random(seed * 1000003 + step)
    grad = [0.0] * len(params)
    loss = 0.0
    for _ in range(BATCH):
        x = features(embed, [rng.randrange(VOCAB) for _ in range(TOKENS)])
        target = [t + rng.gauss(0.0, 0.01) for t in forward(teacher, x)]
        y = forward(params, x)
        for o in range(DIM):
            d = (y[o] - target[o]) / BATCH
            loss += d * d * BATCH
            for i in range(DIM):
                grad[o * DIM + i] += 2.0 * d * x[i]
            grad[DIM * DIM + o] += 2.0 * d
    for i in range(len(params)):
        velocity[i] = MOMENTUM * velocity[i] + grad[i]
        params[i] -= LR * velocity[i]
    return loss / (BATCH * DIM)


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


def save(ckpt_dir, step, seed, loss, embed, params, velocity):
    write_file(os.path.join(ckpt_dir, "embed.bin"), pack(embed))
    write_file(os.path.join(ckpt_dir, "params.bin"), pack(params) + pack(velocity))
    state = {"step": step, "seed": seed, "loss": loss, "dim": DIM, "vocab": VOCAB}
    write_file(os.path.join(ckpt_dir, "state.json"),
        (json.dumps(state, indent=1) + "\n").encode())


def restore(ckpt_dir, resume_step, seed):
    with open(os.path.join(ckpt_dir, "state.json")) as f:
        state = json.load(f)
    if state["step"] != resume_step:
        sys.exit("train.py: %s/state.json holds step %s but SPOTRUN_RESUME_STEP is %s"
            % (ckpt_dir, state["step"], resume_step))
    if state["seed"] != seed:
        sys.exit("train.py: the checkpoint was made with --seed %d, not %d"
            % (state["seed"], seed))
    with open(os.path.join(ckpt_dir, "embed.bin"), "rb") as f:
        embed = unpack(f.read())
    with open(os.path.join(ckpt_dir, "params.bin"), "rb") as f:
        pv = unpack(f.read())
    n = DIM * DIM + DIM
    if len(embed) != VOCAB * DIM or len(pv) != 2 * n:
        sys.exit("train.py: %s holds a checkpoint of another model shape" % ckpt_dir)
    return state["step"], embed, pv[:n], pv[n:]


def main():
    ap = argparse.ArgumentParser(description="spotrun quickstart job")
    ap.add_argument("--steps", type=int, default=200, help="steps to train (200)")
    ap.add_argument("--sleep", type=float, default=0.1,
        help="seconds to sleep per step, so preemptions land mid-run (0.1)")
    ap.add_argument("--seed", type=int, default=1, help="data and model seed (1)")
    ap.add_argument("--every", type=int, default=20, help="print every N steps (20)")
    args = ap.parse_args()

    embed, teacher, params, velocity = init_model(args.seed)
    step = 0
    resume_step = spotrun.resume_step()
    if resume_step is not None:
        step, embed, params, velocity = restore(spotrun.ckpt_dir(), resume_step, args.seed)
        print("resumed from step %d (attempt %s)"
            % (step, os.environ.get("SPOTRUN_ATTEMPT", "?")), flush=True)
    else:
        print("starting fresh: %d steps" % args.steps, flush=True)

    loss = float("nan")
    while step < args.steps:
        loss = train_step(step, args.seed, embed, teacher, params, velocity)
        step += 1
        if step % args.every == 0:
            print("step %d loss %.6f" % (step, loss), flush=True)
            # the curve `spotrun status SWEEP` and `spotrun report` draw
            spotrun.report(step, loss=loss)
        if args.sleep > 0:
            time.sleep(args.sleep)
        # A step boundary: the safe point to answer a checkpoint request.
        if spotrun.requested():
            save(spotrun.ckpt_dir(), step, args.seed, loss, embed, params, velocity)
            if spotrun.done(step):
                print("checkpoint at step %d" % step, flush=True)

    print("finished %d steps, loss %.6f" % (step, loss), flush=True)
    print("result: %s" % hashlib.sha256(pack(params)).hexdigest(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
