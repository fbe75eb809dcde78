#!/usr/bin/python3
"""pytorch/hf_train.py: a Hugging Face Trainer job under spotrun, checkpointed
through spotrun.hf.SpotrunCallback (doc/python.md, "Hugging Face Trainer").

A tiny regression model trained by transformers' Trainer; when spotrun asks,
the callback has the Trainer save its checkpoint into spotrun's checkpoint
directory (output_dir) and answers; on a resume the Trainer goes on from the
checkpoint spotrun restored. `result:` is a SHA-256 of the final weights.
tests/t72-pytorch-callbacks.sh runs it on a stand-in of transformers
(tests/standins) where the library is not installed.

Usage: hf_train.py [--steps N] [--sleep S]
"""

import spotrun                  # first: catches spotrun's request signal

import argparse
import hashlib
import time

import torch
from torch import nn
from transformers import Trainer, TrainerCallback, TrainingArguments

from spotrun.hf import SpotrunCallback, resume_checkpoint


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x, labels):
        return {"loss": ((self.net(x) - labels) ** 2).mean()}


class Pace(TrainerCallback):
    """Prints the step every 10 (and sleeps, to be caught mid-run)."""

    def __init__(self, sleep):
        self.sleep = sleep

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step % 10 == 0:
            print("step %d" % state.global_step, flush=True)
        time.sleep(self.sleep)


def main():
    ap = argparse.ArgumentParser(description="spotrun Hugging Face Trainer example job")
    ap.add_argument("--steps", type=int, default=300, help="steps to train (300)")
    ap.add_argument("--sleep", type=float, default=0.0, help="extra seconds per step (0)")
    cli = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    data = [{"x": x[i], "labels": x[i, :1] * 2 - x[i, 1:2]} for i in range(64)]

    args = TrainingArguments(output_dir=spotrun.ckpt_dir() or "hf-out",
                             save_strategy="no",     # spotrun asks for the saves
                             save_total_limit=1,     # one checkpoint-STEP in the directory
                             max_steps=cli.steps, per_device_train_batch_size=8,
                             learning_rate=1e-2, report_to=[])
    trainer = Trainer(model=Regressor(), args=args, train_dataset=data,
                      callbacks=[SpotrunCallback(), Pace(cli.sleep)])
    resume = resume_checkpoint()        # ckpt_dir()/checkpoint-STEP, or None
    if resume is not None:
        print("resumed from step %d" % spotrun.resume_step(), flush=True)
    trainer.train(resume_from_checkpoint=resume)

    w = nn.utils.parameters_to_vector(trainer.model.parameters()).detach()
    print("finished at step %d" % trainer.state.global_step, flush=True)
    print("result: %s" % hashlib.sha256(w.numpy().tobytes()).hexdigest(), flush=True)


if __name__ == "__main__":
    main()
