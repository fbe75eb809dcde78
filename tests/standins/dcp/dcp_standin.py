"""A STAND-IN, for tests only, of the part of torch.distributed.checkpoint
(dcp.save, dcp.load), torch.distributed.tensor (DTensor.from_local,
to_local, Shard) and torch.distributed.device_mesh (init_device_mesh) that
examples/pytorch/dcp.py uses, for a torch that has none (Debian's 1.13);
sitecustomize.py beside it serves it under those names.

What the real one does and this one does too: DTensors sharded on dim 0 of
a 1-D mesh; dcp.save(state, checkpoint_id=DIR) has each rank write its own
shards into DIR/__RANK_0.distcp and rank 0 the metadata into DIR/.metadata
(the global size of each tensor and which file holds which range);
dcp.load(state, checkpoint_id=DIR) fills each rank's shards in place from
whatever files hold their ranges, however many ranks wrote them. The file
names are the real ones; their contents are not the real format (torch.save
of dicts), so a checkpoint of one cannot be read by the other."""

import os

import torch
import torch.distributed as dist

_META = ".metadata"


def _shard_file(rank):
    return "__%d_0.distcp" % rank


class DeviceMesh:
    def __init__(self, device_type, size):
        self.device_type, self._size = device_type, size

    def size(self):
        return self._size


def init_device_mesh(device_type, mesh_shape):
    if len(mesh_shape) != 1 or mesh_shape[0] != dist.get_world_size():
        raise ValueError("dcp_standin: a 1-D mesh of the world size only, not %r" % (mesh_shape,))
    return DeviceMesh(device_type, mesh_shape[0])


class Shard:
    def __init__(self, dim):
        if dim != 0:
            raise ValueError("dcp_standin: Shard(0) only")
        self.dim = dim


class DTensor:
    """A 1-D tensor sharded evenly on dim 0: this rank's piece, no copy."""

    def __init__(self, local, mesh):
        self._local, self._mesh = local, mesh
        self.offset = dist.get_rank() * local.numel()
        self.size = local.numel() * mesh.size()

    @staticmethod
    def from_local(local, mesh, placements, run_check=True):
        if local.dim() != 1 or len(placements) != 1 or not isinstance(placements[0], Shard):
            raise ValueError("dcp_standin: 1-D tensors with [Shard(0)] only")
        return DTensor(local, mesh)

    def to_local(self):
        return self._local


def _write(path, obj):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def save(state_dict, *, checkpoint_id):
    rank, world = dist.get_rank(), dist.get_world_size()
    mine = {k: (v.offset, v.to_local().clone()) for k, v in state_dict.items()}
    _write(os.path.join(checkpoint_id, _shard_file(rank)), mine)
    dist.barrier()          # the real one gathers every rank's write results
    if rank == 0:
        meta = {k: {"size": v.size,
                    "chunks": [(_shard_file(r), r * v.to_local().numel(), v.to_local().numel())
                               for r in range(world)]}
                for k, v in state_dict.items()}
        _write(os.path.join(checkpoint_id, _META), meta)
    dist.barrier()


def load(state_dict, *, checkpoint_id):
    meta = torch.load(os.path.join(checkpoint_id, _META))
    files = {}
    for k, v in state_dict.items():
        if k not in meta:
            raise RuntimeError("dcp_standin: %s is not in the checkpoint" % k)
        if meta[k]["size"] != v.size:
            raise RuntimeError("dcp_standin: %s has %d elements, the checkpoint's %d"
                               % (k, v.size, meta[k]["size"]))
        lo, hi = v.offset, v.offset + v.to_local().numel()
        for name, off, n in meta[k]["chunks"]:
            a, b = max(lo, off), min(hi, off + n)
            if a >= b:
                continue
            if name not in files:
                files[name] = torch.load(os.path.join(checkpoint_id, name))
            f_off, data = files[name][k]
            v.to_local()[a - lo:b - lo].copy_(data[a - f_off:b - f_off])
