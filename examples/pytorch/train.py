#!/usr/bin/python3
"""pytorch/train.py: a real PyTorch training job that checkpoints under spotrun.

An MLP with dropout learns a fixed random teacher network with AdamW, on
CPU, one thread, deterministic algorithms. The batch of step s is drawn from
a generator seeded with (seed, s) and the global RNG state (dropout) is
saved with the model and optimizer, so a run that is preempted and resumed
is bit-identical to one that is not: same final weights, same `result:`
line (a SHA-256 over every tensor's name, dtype, shape and bytes).

Checkpoint protocol (directory mode, see doc/spotrun-job.5): on start the
state is loaded from $SPOTRUN_CKPT_DIR/state.pt when SPOTRUN_RESUME_STEP is
set; a request (the file $SPOTRUN_CKPT_REQUEST, plus SIGUSR1) is answered
at the next step boundary by torch.save into $SPOTRUN_CKPT_DIR and then the
done file $SPOTRUN_CKPT_DONE, created atomically, holding the step.

Debian's python3-torch is visible to /usr/bin/python3 only: run it with
/usr/bin/python3, not the first python3 on PATH.

Usage: train.py [--steps N] [--sleep S] [--seed N] [--every N] [--out FILE]
"""

import argparse
import hashlib
import os
import signal
import sys
import time

# Set by the SIGUSR1 handler, read at step boundaries.
requested = False


def on_request(signo, frame):
    global requested
    requested = True


# Catch spotrun's request signal before the slow `import torch` (a second or
# more): the default action of SIGUSR1 would kill the job.
if os.environ.get("SPOTRUN_CKPT_REQUEST"):
    signal.signal(signal.SIGUSR1, on_request)

import torch  # noqa: E402
from torch import nn  # noqa: E402

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


def request_seq(path):
    """The seq=N of the request file, or None when there is none."""
    try:
        with open(path) as f:
            line = f.read()
    except FileNotFoundError:
        return None
    for word in line.split():
        if word.startswith("seq="):
            return word[4:]
    return ""


def write_done(path, step):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % step)
    os.rename(tmp, path)


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

    ckpt_dir = os.environ.get("SPOTRUN_CKPT_DIR", "")
    request_path = os.environ.get("SPOTRUN_CKPT_REQUEST", "")
    done_path = os.environ.get("SPOTRUN_CKPT_DONE", "")
    resume_step = os.environ.get("SPOTRUN_RESUME_STEP", "")
    under_spotrun = bool(ckpt_dir and request_path and done_path)
    ckpt_file = os.path.join(ckpt_dir, "state.pt")

    step = 0
    if under_spotrun and resume_step:
        st = torch.load(ckpt_file)
        if str(st["step"]) != resume_step:
            sys.exit("train.py: %s holds step %s but SPOTRUN_RESUME_STEP is %s"
                     % (ckpt_file, st["step"], resume_step))
        if st["seed"] != args.seed:
            sys.exit("train.py: the checkpoint was made with --seed %d, not %d"
                     % (st["seed"], args.seed))
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["optimizer"])
        torch.set_rng_state(st["rng"])
        step = st["step"]
        print("resumed from step %d (attempt %s)"
              % (step, os.environ.get("SPOTRUN_ATTEMPT", "?")), flush=True)
    else:
        print("starting fresh: %d steps" % args.steps, flush=True)

    global requested
    answered = None  # seq of the last request answered
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
        if under_spotrun and (requested or os.path.exists(request_path)):
            requested = False
            seq = request_seq(request_path)
            if seq is not None and seq != answered:
                tmp = ckpt_file + ".tmp"
                torch.save({"step": step, "seed": args.seed,
                            "model": model.state_dict(),
                            "optimizer": opt.state_dict(),
                            "rng": torch.get_rng_state()}, tmp)
                os.rename(tmp, ckpt_file)
                write_done(done_path, step)
                answered = seq
                print("checkpoint at step %d" % step, flush=True)

    # Training is over: ignore further requests. (Python resets its signal
    # handlers to the default action while it shuts down, and the default
    # action of SIGUSR1 kills: a late request would turn success into 138.)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    sd = model.state_dict()
    if args.out:
        torch.save(sd, args.out)
    print("finished %d steps, loss %.6f" % (step, loss.item()), flush=True)
    print("result: %s" % state_digest(sd), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
