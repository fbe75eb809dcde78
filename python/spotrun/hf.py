"""spotrun.hf: a callback for the Hugging Face Trainer (transformers) that
saves the Trainer's own checkpoint when spotrun asks for one and answers.

    import spotrun                                  # first
    from spotrun.hf import SpotrunCallback, resume_checkpoint
    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(output_dir=spotrun.ckpt_dir() or "out",
                             save_strategy="no", save_total_limit=1, ...)
    trainer = Trainer(model=model, args=args, train_dataset=data,
                      callbacks=[SpotrunCallback()])
    trainer.train(resume_from_checkpoint=resume_checkpoint())

On a pending request (agreed by every rank: spotrun.torch.requested()) the
callback sets control.should_save at the step's end; the Trainer writes
output_dir/checkpoint-STEP and calls on_save, where each rank answers
spotrun.done(STEP). The Trainer's own saves are turned off (save_strategy =
"no"): spotrun's interval replaces them, and a save of the Trainer's own
would change the directory while spotrun reads it. Training goes on after a
notice's checkpoint: spotrun stops the job itself, while a job that ends on
its own (exit 0) is done and would not be resumed.

transformers is imported by this module only, not by `import spotrun`."""

import os
from typing import Optional

from transformers import TrainerCallback

import spotrun
import spotrun.torch


def _value(x) -> str:
    """An enum of transformers' (IntervalStrategy) or its string."""
    return str(getattr(x, "value", x))


def resume_checkpoint() -> Optional[str]:
    """On a resume, the Trainer's checkpoint that spotrun restored,
    ckpt_dir()/checkpoint-STEP (for trainer.train(resume_from_checkpoint=));
    None on a fresh start and outside spotrun."""
    step = spotrun.resume_step()
    if step is None:
        return None
    path = os.path.join(spotrun.ckpt_dir(), "checkpoint-%d" % step)
    if not os.path.isdir(path):
        raise FileNotFoundError("spotrun.hf: the checkpoint of step %d restored no %s" % (step, path))
    return path


class SpotrunCallback(TrainerCallback):
    """Saves when spotrun asks (at a step's end, every rank at the same
    step) and answers with spotrun.done(global_step) once the Trainer has
    written the checkpoint. Outside spotrun it does nothing."""

    def __init__(self) -> None:
        self._asked: Optional[int] = None

    def on_train_begin(self, args, state, control, **kwargs):
        if not spotrun.supervised():
            return control
        if os.path.realpath(args.output_dir) != os.path.realpath(spotrun.ckpt_dir()):
            raise ValueError("spotrun.hf: TrainingArguments(output_dir=%r) is not spotrun's "
                             "checkpoint directory: pass output_dir=spotrun.ckpt_dir()" % args.output_dir)
        if _value(args.save_strategy) != "no":
            raise ValueError("spotrun.hf: TrainingArguments(save_strategy=%r): pass \"no\"; "
                             "spotrun asks for the saves" % _value(args.save_strategy))
        return control

    def on_step_end(self, args, state, control, **kwargs):
        if spotrun.torch.requested():
            control.should_save = True
            self._asked = state.global_step
        return control

    def on_save(self, args, state, control, **kwargs):
        if self._asked is not None and self._asked == state.global_step:
            self._asked = None
            spotrun.done(state.global_step)
        return control
