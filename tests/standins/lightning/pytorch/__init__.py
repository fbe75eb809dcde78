"""A STAND-IN of Lightning (lightning.pytorch), for tests only
(tests/t72-pytorch-callbacks.sh), where the library cannot be installed: the
names examples/pytorch/pl_train.py uses (LightningModule, Callback, Trainer)
and a Trainer whose fit() calls the callbacks as Lightning's fit loop does:

    on_train_start; then each batch: training_step(batch, batch_idx), the
    backward and the optimizer step (global_step += 1), then
    on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx); a stop
    at max_steps or once trainer.should_stop; on_train_end.

trainer.save_checkpoint(path) writes global_step, the module's state_dict
and the optimizer's; fit(model, train_dataloaders, ckpt_path=PATH) restores
them. The batch of a step is a function of the step (the data in order,
wrapping), as with a resumed fit that skips the batches seen. Nothing else
of the library is here."""

import torch


class LightningModule(torch.nn.Module):
    def training_step(self, batch, batch_idx):
        raise NotImplementedError

    def configure_optimizers(self):
        raise NotImplementedError


class Callback:
    def on_train_start(self, trainer, pl_module):
        pass

    def on_train_end(self, trainer, pl_module):
        pass

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        pass


class Trainer:
    def __init__(self, max_steps=-1, callbacks=None, **kwargs):
        self.max_steps = max_steps
        self.callbacks = list(callbacks or [])
        self.global_step = 0
        self.should_stop = False
        self.lightning_module = None
        self.optimizer = None

    def save_checkpoint(self, filepath):
        torch.save({"global_step": self.global_step,
                    "state_dict": self.lightning_module.state_dict(),
                    "optimizer_states": [self.optimizer.state_dict()]}, filepath)

    def fit(self, model, train_dataloaders=None, ckpt_path=None):
        self.lightning_module, data = model, list(train_dataloaders)
        self.optimizer = model.configure_optimizers()
        if ckpt_path is not None:
            ck = torch.load(ckpt_path)
            model.load_state_dict(ck["state_dict"])
            self.optimizer.load_state_dict(ck["optimizer_states"][0])
            self.global_step = ck["global_step"]
        for cb in self.callbacks:
            cb.on_train_start(self, model)
        while self.global_step < self.max_steps and not self.should_stop:
            batch_idx = self.global_step % len(data)
            batch = data[batch_idx]
            outputs = model.training_step(batch, batch_idx)
            outputs["loss"].backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.global_step += 1
            for cb in self.callbacks:
                cb.on_train_batch_end(self, model, outputs, batch, batch_idx)
        for cb in self.callbacks:
            cb.on_train_end(self, model)
