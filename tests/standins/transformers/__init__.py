"""A STAND-IN of Hugging Face transformers, for tests only
(tests/t72-pytorch-callbacks.sh), where the library cannot be installed: the
names examples/pytorch/hf_train.py uses (TrainingArguments, TrainerState,
TrainerControl, TrainerCallback, Trainer) and a Trainer whose training loop
calls the callbacks as transformers' Trainer._inner_training_loop does:

    on_train_begin; then each step: on_step_begin (which clears
    control.should_save), the forward, backward and optimizer step,
    global_step += 1, on_step_end; if control.should_save: the checkpoint
    output_dir/checkpoint-STEP (older ones rotated away past
    save_total_limit), then on_save; a break on control.should_training_stop;
    on_train_end.

Each callback event gets (args, state, control, **kwargs) and a result that
is not None replaces control. train(resume_from_checkpoint=PATH) restores
the model, the optimizer and global_step from such a folder. The batch of a
step is a function of the step (the dataset in order, wrapping), as with a
resumed Trainer that skips the batches already seen. Nothing else of the
library is here."""

import json
import os
import shutil

import torch

PREFIX_CHECKPOINT_DIR = "checkpoint"


class TrainingArguments:
    def __init__(self, output_dir, max_steps=-1, per_device_train_batch_size=8,
                 learning_rate=5e-5, save_strategy="steps", save_steps=500,
                 save_total_limit=None, report_to=None, seed=42, **kwargs):
        self.output_dir = output_dir
        self.max_steps = max_steps
        self.per_device_train_batch_size = per_device_train_batch_size
        self.learning_rate = learning_rate
        self.save_strategy = save_strategy
        self.save_steps = save_steps
        self.save_total_limit = save_total_limit
        self.report_to = report_to
        self.seed = seed


class TrainerState:
    def __init__(self):
        self.global_step = 0
        self.max_steps = 0
        self.is_world_process_zero = True

    def save_to_json(self, path):
        with open(path, "w") as f:
            json.dump({"global_step": self.global_step, "max_steps": self.max_steps}, f)


class TrainerControl:
    def __init__(self):
        self.should_training_stop = False
        self.should_epoch_stop = False
        self.should_save = False
        self.should_evaluate = False
        self.should_log = False


class TrainerCallback:
    def on_train_begin(self, args, state, control, **kwargs):
        pass

    def on_train_end(self, args, state, control, **kwargs):
        pass

    def on_step_begin(self, args, state, control, **kwargs):
        pass

    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_save(self, args, state, control, **kwargs):
        pass


class Trainer:
    def __init__(self, model=None, args=None, train_dataset=None, callbacks=None, **kwargs):
        self.model, self.args, self.train_dataset = model, args, train_dataset
        self.callbacks = list(callbacks or [])
        self.state, self.control = TrainerState(), TrainerControl()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)

    def _event(self, name):
        for cb in self.callbacks:
            r = getattr(cb, name)(self.args, self.state, self.control, model=self.model,
                                  optimizer=self.optimizer)
            if r is not None:
                self.control = r

    def _batch(self, step):
        bs, n = self.args.per_device_train_batch_size, len(self.train_dataset)
        rows = [self.train_dataset[(step * bs + i) % n] for i in range(bs)]
        return {k: torch.stack([r[k] for r in rows]) for k in rows[0]}

    def _save_checkpoint(self):
        out = os.path.join(self.args.output_dir, "%s-%d" % (PREFIX_CHECKPOINT_DIR, self.state.global_step))
        os.makedirs(out, exist_ok=True)
        torch.save(self.model.state_dict(), os.path.join(out, "pytorch_model.bin"))
        torch.save(self.optimizer.state_dict(), os.path.join(out, "optimizer.pt"))
        self.state.save_to_json(os.path.join(out, "trainer_state.json"))
        limit = self.args.save_total_limit
        if limit:
            old = sorted((d for d in os.listdir(self.args.output_dir)
                          if d.startswith(PREFIX_CHECKPOINT_DIR + "-")),
                         key=lambda d: int(d.split("-")[-1]))
            for d in old[:-limit]:
                shutil.rmtree(os.path.join(self.args.output_dir, d))

    def train(self, resume_from_checkpoint=None):
        self.state.max_steps = self.args.max_steps
        if resume_from_checkpoint:
            d = resume_from_checkpoint
            self.model.load_state_dict(torch.load(os.path.join(d, "pytorch_model.bin")))
            self.optimizer.load_state_dict(torch.load(os.path.join(d, "optimizer.pt")))
            with open(os.path.join(d, "trainer_state.json")) as f:
                self.state.global_step = json.load(f)["global_step"]
        self._event("on_train_begin")
        while self.state.global_step < self.state.max_steps:
            self.control.should_save = self.control.should_log = self.control.should_evaluate = False
            self._event("on_step_begin")
            loss = self.model(**self._batch(self.state.global_step))["loss"]
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.state.global_step += 1
            self._event("on_step_end")
            if self.control.should_save:
                self._save_checkpoint()
                self._event("on_save")
            if self.control.should_training_stop or self.control.should_epoch_stop:
                break
        self._event("on_train_end")
