"""spotrun.lightning: a callback for Lightning (lightning.pytorch, or the
older pytorch_lightning) that saves the Trainer's checkpoint when spotrun
asks for one and answers.

    import spotrun                                  # first
    from spotrun.lightning import SpotrunCallback, resume_checkpoint
    import lightning.pytorch as pl

    trainer = pl.Trainer(max_steps=..., callbacks=[SpotrunCallback()])
    trainer.fit(model, data, ckpt_path=resume_checkpoint())

On a pending request (agreed by every rank: spotrun.torch.requested()) the
callback calls trainer.save_checkpoint(ckpt_dir()/spotrun-lightning.ckpt) at
the end of a training batch, where Lightning's own ModelCheckpoint saves
(every rank calls it; the strategy has rank 0 write), then each rank
answers spotrun.done(trainer.global_step). Training goes on after a
notice's checkpoint (no trainer.should_stop): spotrun stops the job itself,
while a job that ends on its own (exit 0) is done and would not be resumed.

Lightning is imported by this module only, not by `import spotrun`."""

import os
from typing import Optional

try:
    from lightning.pytorch import Callback
except ImportError:
    from pytorch_lightning import Callback

import spotrun
import spotrun.torch

# The checkpoint's file in ckpt_dir().
FILE = "spotrun-lightning.ckpt"


def resume_checkpoint() -> Optional[str]:
    """On a resume, the checkpoint file spotrun restored (for
    trainer.fit(ckpt_path=)); None on a fresh start and outside spotrun."""
    if spotrun.resume_step() is None:
        return None
    path = os.path.join(spotrun.ckpt_dir(), FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError("spotrun.lightning: the checkpoint of step %d restored no %s"
                                % (spotrun.resume_step(), path))
    return path


class SpotrunCallback(Callback):
    """Saves when spotrun asks (at a training batch's end, every rank at the
    same batch) and answers with spotrun.done(trainer.global_step). Outside
    spotrun it does nothing."""

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if spotrun.torch.requested():
            trainer.save_checkpoint(os.path.join(spotrun.ckpt_dir(), FILE))
            spotrun.done(trainer.global_step)
