"""A STAND-IN, for tests only (tests/t71-pytorch-dcp.sh): on a torch
without torch.distributed.checkpoint and DTensor (Debian's torch 1.13),
serves torch.distributed.checkpoint, torch.distributed.tensor and
torch.distributed.device_mesh from dcp_standin.py, which does the little of
them that examples/pytorch/dcp.py uses. The test puts this folder on
PYTHONPATH only when the real modules cannot be imported; Python imports
sitecustomize at its start, so this finder is in place before the job's
`import torch.distributed.checkpoint`. The modules are found only when
imported, so a Python that never imports them loads nothing of torch."""

import importlib
import importlib.abc
import importlib.util
import sys

NAMES = ("torch.distributed.checkpoint", "torch.distributed.tensor",
         "torch.distributed.device_mesh")


class _Alias(importlib.abc.Loader):
    def create_module(self, spec):
        return importlib.import_module("dcp_standin")

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in NAMES:
            return importlib.util.spec_from_loader(name, _Alias())
        return None


sys.meta_path.insert(0, _Finder())
