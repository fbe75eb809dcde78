#!/usr/bin/python3
"""pytorch/pl_train.py: a Lightning job under spotrun, checkpointed through
spotrun.lightning.SpotrunCallback (doc/python.md, "Lightning").

A tiny regression module fitted by Lightning's Trainer; when spotrun asks,
the callback saves the Trainer's checkpoint into spotrun's checkpoint
directory and answers; on a resume fit() goes on from the checkpoint spotrun
restored. `result:` is a SHA-256 of the final weights.
tests/t72-pytorch-callbacks.sh runs it on a stand-in of Lightning
(tests/standins) where the library is not installed.

Usage: pl_train.py [--steps N] [--sleep S]
"""

import spotrun                  # first: catches spotrun's request signal

import argparse
import hashlib
import time

import lightning.pytorch as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from spotrun.lightning import SpotrunCallback, resume_checkpoint


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return {"loss": ((self.net(x) - y) ** 2).mean()}

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-2)


class Pace(pl.Callback):
    """Prints the step every 10 (and sleeps, to be caught mid-run)."""

    def __init__(self, sleep):
        self.sleep = sleep

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step % 10 == 0:
            print("step %d" % trainer.global_step, flush=True)
        time.sleep(self.sleep)


def main():
    ap = argparse.ArgumentParser(description="spotrun Lightning example job")
    ap.add_argument("--steps", type=int, default=300, help="steps to train (300)")
    ap.add_argument("--sleep", type=float, default=0.0, help="extra seconds per step (0)")
    cli = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    data = DataLoader(TensorDataset(x, x[:, :1] * 2 - x[:, 1:2]), batch_size=8)
    model = Regressor()

    trainer = pl.Trainer(max_steps=cli.steps, accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False,     # spotrun asks for the saves
                         enable_progress_bar=False,
                         callbacks=[SpotrunCallback(), Pace(cli.sleep)])
    resume = resume_checkpoint()        # ckpt_dir()/spotrun-lightning.ckpt, or None
    if resume is not None:
        print("resumed from step %d" % spotrun.resume_step(), flush=True)
    trainer.fit(model, data, ckpt_path=resume)

    w = nn.utils.parameters_to_vector(model.parameters()).detach()
    print("finished at step %d" % trainer.global_step, flush=True)
    print("result: %s" % hashlib.sha256(w.numpy().tobytes()).hexdigest(), flush=True)


if __name__ == "__main__":
    main()
