"""spotrun.torch: save and load a PyTorch training state in spotrun's
checkpoint directory, so that a resumed run is bit-identical to one that was
never stopped.

    import spotrun                       # first: catches the request signal
    import torch
    ...
    step = spotrun.torch.load(model=model, optimizer=opt) or 0
    while step < steps:
        ...
        step += 1
        if spotrun.requested():
            spotrun.torch.save(step, model=model, optimizer=opt)

One file, $SPOTRUN_CKPT_DIR/spotrun-torch.pt, holds the step, the state_dicts
of the model, the optimizer and the LR scheduler (each optional but the
model), and the random number generators' states: Python's random, numpy's
global one when numpy can be imported, torch's CPU generator and, when CUDA
is available, every GPU's. Data loaders and generators of your own are not
covered: seed them from the step (or save them next to it).

With several ranks (torch.distributed initialised, spotrun starting them:
procs, or one per GPU) call requested() instead of spotrun.requested(): it
all-reduces the answer so that every rank saves at the same step. save() then
writes each rank's file into its own folder, rank_dir()/spotrun-torch.pt, and
each rank answers; load() reads the rank's own file back. On a resume with
another world size (prev_world_size() != world_size()) each rank loads the
model, optimizer and scheduler of rank 0's file (DistributedDataParallel keeps
them the same on every rank) and the random number generators of its own
rank's file where there is one, rank 0's otherwise; a sharded state (ZeRO's
optimizer) is the job's to reshard from the parts: pass optimizer=None and
read the previous ranks' files (spotrun.rank_dir(k)). The first save() after
such a resume removes the files that no rank writes any more (those of the
ranks gone), so that they do not stay in every later checkpoint.

Under launch = once with a launcher of the job's own (torchrun), spotrun waits
for one done marker, which the ranks share: save() writes each rank's file as
above, waits at a barrier for all of them, and rank 0 alone answers.

Outside spotrun both do nothing: save() returns False, load() None, and
requested() is False without a collective.
"""

from __future__ import annotations

import os
import random
from typing import Any, Optional

import torch

import spotrun

FILENAME = "spotrun-torch.pt"
_FORMAT = "spotrun.torch/1"

__all__ = ["FILENAME", "init_process_group", "requested", "save", "load"]


def init_process_group(*args, **kwargs):
    """torch.distributed.init_process_group(*args, **kwargs) with spotrun's
    request signal held meanwhile: the rendezvous (torch 1.13's TCPStore
    client polling for rank 0) fails with "Interrupted system call" when a
    caught signal arrives, which a request at the start of an attempt
    does. The signal comes once the group is up; the request file asks all
    along. The threads the group starts keep it blocked, so it reaches the
    main thread, where Python's handler runs."""
    import signal
    import torch.distributed as dist
    sig = spotrun._st.caught
    if sig is None:
        return dist.init_process_group(*args, **kwargs)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
    try:
        return dist.init_process_group(*args, **kwargs)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _dist():
    """torch.distributed when a process group of more than one is up."""
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return dist
    return None


def requested() -> bool:
    """spotrun.requested(), agreed by every rank: True on all of them when
    any one sees the request (one all-reduce; its tensor lives on the GPU
    under NCCL). A collective: call it at the same point of every step in
    every rank. Without a process group, spotrun.requested().

    On one node the ranks agree on the request itself, not only on there
    being one: ranks read the request file a moment apart, so when spotrun
    replaces one request by another (a periodic one by a notice's) some may
    still hold the older one. The all-reduce takes the newest seq, and a
    rank holding an older one reads the file again until it holds that one,
    so that every rank answers the same request at the same step. The nodes
    of a gang number their requests each on its own: there the ranks agree
    on a flag, and a rank without a request waits for its node's."""
    dist = _dist()
    if dist is None or not spotrun.supervised():
        return spotrun.requested()
    dev = "cpu"
    if dist.get_backend() == "nccl":
        dev = torch.device("cuda", torch.cuda.current_device())
    req = spotrun.request()
    if spotrun.nodes() > 1:
        flag = torch.tensor([0 if req is None else 1], dtype=torch.int32, device=dev)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item() and req is None:
            _await_request(None, GANG_WAIT)
        return bool(flag.item())
    mine = _NO_SEQ if req is None else req.seq
    seq = torch.tensor([mine], dtype=torch.int64, device=dev)
    dist.all_reduce(seq, op=dist.ReduceOp.MAX)
    agreed = int(seq.item())
    if agreed != _NO_SEQ and mine != agreed:
        _await_request(agreed, NODE_WAIT)
    return agreed != _NO_SEQ


# No request pending, in requested()'s all-reduce: below every seq (a
# request file that is not spotrun's format has a hash for its seq).
_NO_SEQ = -(1 << 63)


# How long a rank on one node waits for the request the ranks agreed on: the
# ranks read one file, so the newer request is there at its next read;
# this only bounds the wait when it is not (a file of a rank's own).
NODE_WAIT = 1.0

# How long a rank of a gang waits for its own node's request once a rank of
# another node has seen one (the nodes' agents pass a request on within a
# few seconds, doc/fleet.md).
GANG_WAIT = 60.0


def _await_request(seq: Optional[int], wait: float) -> None:
    """Wait until this rank holds the request the ranks agreed on: the one
    numbered seq, or (seq None: on a gang, where a request reaches each
    node through its own spotrun, a moment apart) any. Then it answers it
    with the state of this same step (done() answers only a request it
    sees). Past `wait` seconds it goes on; its part is then missing and
    nothing is committed."""
    import time
    end = time.monotonic() + wait
    while time.monotonic() < end:
        req = spotrun.request()
        if req is not None and (seq is None or req.seq == seq):
            return
        time.sleep(0.01)


def _shared_marker() -> bool:
    """The ranks of a launcher of the job's own share one done marker."""
    return spotrun.world_size() == 1 and _dist() is not None


def _path(r: Optional[int] = None) -> str:
    """Where rank r's file is; this process's by default: the directory's
    own for a job of one process, else its rank's folder."""
    if r is not None:
        return os.path.join(spotrun.rank_dir(r), FILENAME)
    if _shared_marker():
        d = spotrun.rank_dir(_dist().get_rank())
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, FILENAME)
    if spotrun.world_size() == 1:
        return os.path.join(spotrun.ckpt_dir(), FILENAME)
    return os.path.join(spotrun.rank_dir(), FILENAME)


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _rng_state() -> dict:
    st: dict = {"python": random.getstate(), "torch": torch.get_rng_state()}
    np = _numpy()
    if np is not None:
        kind, keys, pos, has_gauss, gauss = np.random.get_state()
        # Tensors and plain numbers only, so that a restricted unpickler
        # (torch.load(weights_only=True)) can read the file.
        st["numpy"] = (kind, torch.from_numpy(keys.astype(np.int64)), int(pos),
                       int(has_gauss), float(gauss))
    if torch.cuda.is_available():
        st["cuda"] = torch.cuda.get_rng_state_all()
    return st


def _set_rng_state(st: dict) -> None:
    random.setstate(st["python"])
    torch.set_rng_state(st["torch"])
    np = _numpy()
    if np is not None and "numpy" in st:
        kind, keys, pos, has_gauss, gauss = st["numpy"]
        np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, gauss))
    if "cuda" in st and torch.cuda.is_available():
        for i, s in enumerate(st["cuda"][:torch.cuda.device_count()]):
            torch.cuda.set_rng_state(s, i)


def _stale_paths() -> list:
    """The files of the restored checkpoint's world size that save() at
    this one does not write again, which would otherwise stay in every
    later checkpoint (spotrun's timeline says so): on a resume on fewer
    ranks, those of the ranks gone; from one process to several, its
    ckpt_dir()/FILENAME; from several to one, every rank's. For rank 0
    alone to remove (the others may share the directory)."""
    d, prev, n = spotrun.ckpt_dir(), spotrun.prev_world_size(), spotrun.world_size()
    if d is None or prev is None or n is None or prev == n or spotrun.rank() != 0:
        return []
    if prev == 1:
        return [os.path.join(d, FILENAME)]
    return [os.path.join(d, "rank-%d" % k, FILENAME) for k in range(0 if n == 1 else n, prev)]


_cleaned = False


def _remove_stale() -> None:
    """Once per process, at its first save (every rank has loaded by then):
    remove _stale_paths() and the rank folders they leave empty."""
    global _cleaned
    if _cleaned:
        return
    _cleaned = True
    for p in _stale_paths():
        try:
            os.remove(p)
        except FileNotFoundError:
            pass
        if os.path.basename(os.path.dirname(p)).startswith("rank-"):
            try:
                os.rmdir(os.path.dirname(p))
            except OSError:
                pass                        # not empty: the job keeps more there


def save(step: int, *, model: torch.nn.Module, optimizer: Optional[torch.optim.Optimizer] = None,
         scheduler: Any = None) -> bool:
    """Answer spotrun's pending request with the training state at `step`:
    write it to ckpt_dir()/FILENAME atomically (a temporary file in the same
    directory renamed into place, not fsync'ed: spotrun reads it from the
    page cache into the store), then spotrun.done(step).

    Call it when spotrun.requested() is True. Returns True when the request
    was answered; False, writing nothing, when there is no pending request
    (outside spotrun, or spotrun withdrew it at its deadline): spotrun may be
    reading the directory for an earlier checkpoint then."""
    d = spotrun.ckpt_dir()
    # Not spotrun.requested(): that would take a request newer than the
    # one requested() agreed on, which done() answers.
    if d is None or spotrun._pending() is None:
        return False
    path = _path()
    state = {
        "format": _FORMAT,
        "step": int(step),
        "model": model.state_dict(),
        "optimizer": None if optimizer is None else optimizer.state_dict(),
        "scheduler": None if scheduler is None else scheduler.state_dict(),
        "rng": _rng_state(),
    }
    spotrun._write_atomic(path, lambda f: torch.save(state, f))
    _remove_stale()
    if _shared_marker():
        # One marker for all: rank 0 answers once every rank's file is there.
        dist = _dist()
        dist.barrier()
        if dist.get_rank() != 0:
            req = spotrun._to_answer()
            if req is not None:
                spotrun._st.answered = req.seq     # rank 0 answers for it
            return True
    return spotrun.done(int(step))


def _torch_load(path: str) -> dict:
    # torch 2 reads state_dicts with its restricted unpickler, so a store
    # that someone else can write cannot run code in the job. torch 1.13's
    # cannot read floats (every optimizer holds some): plain load there.
    major = int(torch.__version__.split(".")[0])
    if major >= 2:
        return torch.load(path, map_location="cpu", weights_only=True)
    return torch.load(path, map_location="cpu")


def _read(path: str, step: int) -> dict:
    if not os.path.exists(path):
        raise FileNotFoundError("spotrun.torch.load: SPOTRUN_RESUME_STEP is %d but %s does not "
                                "exist; was the checkpoint written by spotrun.torch.save?"
                                % (step, path))
    state = _torch_load(path)
    if not isinstance(state, dict) or state.get("format") != _FORMAT:
        raise ValueError("spotrun.torch.load: %s is not a %s checkpoint" % (path, _FORMAT))
    if state["step"] != step:
        raise ValueError("spotrun.torch.load: %s holds step %s but SPOTRUN_RESUME_STEP is %d"
                         % (path, state["step"], step))
    return state


def load(*, model: torch.nn.Module, optimizer: Optional[torch.optim.Optimizer] = None,
         scheduler: Any = None) -> Optional[int]:
    """On a resume, load what save() wrote into model, optimizer and
    scheduler (those given; each must have been saved), restore the random
    number generators, and return the step. None on a fresh start and
    outside spotrun, touching nothing. Tensors are loaded to the CPU and
    copied to where the model's and optimizer's are. With ranks, each loads
    its own rank's file; from another world size, rank 0's state with the
    rank's own generators where its file exists (see the module's help)."""
    step = spotrun.resume_step()
    if step is None:
        return None
    prev = spotrun.prev_world_size()
    if prev is None or prev == spotrun.world_size():
        path = _path()
        state = _read(path, step)
        rng = state["rng"]
    else:
        # Written by another number of ranks: one file if by one process.
        def prev_path(r):
            return os.path.join(spotrun.ckpt_dir(), FILENAME) if prev == 1 else _path(r)
        path = prev_path(0)
        state = _read(path, step)
        mine = prev_path(spotrun.rank())
        rng = _read(mine, step)["rng"] if spotrun.rank() < prev else state["rng"]
    for what, obj in (("optimizer", optimizer), ("scheduler", scheduler)):
        if obj is not None and state[what] is None:
            raise ValueError("spotrun.torch.load: %s holds no %s state; pass the %s to "
                             "spotrun.torch.save too" % (path, what, what))
    model.load_state_dict(state["model"])
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(state["scheduler"])
    _set_rng_state(rng)
    return step
