"""Data parallelism for Gluon on ``jax.sharding``: what ``initialize(ctx=[...])`` and ``Trainer(kvstore=...)`` use.

Within one process (``kvstore='device'``/``'local'``, MXNet's ``ctx=[mx.gpu(0), mx.gpu(1), ...]``):

- a parameter initialized on several contexts holds ONE jax array replicated over a ``Mesh`` of their devices
  (axis ``'data'``, ``NamedSharding(mesh, P())``) instead of MXNet's copy per context;
- the arrays given to a hybridized block whose parameters live on such a mesh are placed on it
  (``place_inputs``): sharded along axis 0 (``P('data')``) when that axis divides evenly over the devices,
  else replicated (every device computes the whole batch: right, not parallel; a warning says so once);
- the arrays given one by one (MXNet's loop over ``split_and_load``'s slices) are right too: the backward
  passes between two steps add into the one gradient (``SummedLeaf``), as MXNet sums its per-context ones;
- the block's compiled forward and the backward replayed under ``jax.vjp`` are then SPMD programs: XLA splits
  the batch, and the gradient of a replicated parameter comes out replicated, summed over the devices by an
  all-reduce inside the program.  BatchNorm's statistics are over the whole batch (MXNet's are per device),
  so the losses are those of one device on the whole batch.

Across processes (``kvstore='dist_sync'``, ``ast-hybrid launch``): each process computes the gradients of its
own batch on its own devices as above, and ``Trainer.step`` sums them over the processes in one compiled
program (``allreduce_across_processes``: a global array with one row per process, summed onto every device by
XLA's collectives, gloo on CPU), before the update; MXNet's ``rescale_grad = 1 / batch_size`` is unchanged,
``batch_size`` being the global batch as in MXNet's dist_sync.
"""

from __future__ import annotations

import functools
import warnings

from ast_hybrid.core.autograd import _Leaf

__all__ = ["AXIS", "PLACEMENT", "mesh_for", "replicate", "mesh_of", "place_inputs", "SummedLeaf", "mark_taken",
           "allreduce_across_processes", "PeerLost"]

AXIS = "data"      # the mesh axis the batch is split along


class _Placement:
    """Whether any parameter lives on a multi-device mesh (until then ``place_inputs`` is never called)."""

    __slots__ = ("active", "warned")

    def __init__(self):
        self.active = False
        self.warned = set()


PLACEMENT = _Placement()


@functools.lru_cache(maxsize=None)
def _mesh(devices):
    import numpy as np
    from jax.sharding import Mesh

    return Mesh(np.array(devices, dtype=object), (AXIS,))


def mesh_for(contexts):
    """The 1-D mesh over the contexts' devices; None for one context, and for several CPU contexts of a
    process with one CPU device (:func:`one_device`); repeated contexts are an error."""
    from ast_hybrid.core.context import Context

    contexts = [Context(c) for c in contexts]
    if len(set(contexts)) != len(contexts):
        raise ValueError(f"ctx={contexts} names a device more than once; give each context once "
                         "(a parameter has one copy per device)")
    if len(contexts) < 2 or one_device(contexts):
        return None
    return _mesh(tuple(c.jax_device(strict=True) for c in contexts))


def one_device(contexts):
    """Whether several contexts all name this process's one CPU device: ``ctx=[mx.cpu(0), mx.cpu(1)]`` as
    MXNet's own tests and multi-context scripts write it on a machine without GPUs.  MXNet keeps a copy per
    context and sums their gradients at ``Trainer.step``; a parameter here keeps one value and one gradient
    that the backward passes between two steps add into (:class:`SummedLeaf`), which is that sum, and
    ``list_data``/``list_grad`` give one NDArray per context."""
    return len(contexts) > 1 and len({c.jax_device() for c in contexts}) == 1 and \
        all(c.device_type != "gpu" for c in contexts)


def _sharding(mesh, split):
    from jax.sharding import NamedSharding, PartitionSpec

    return NamedSharding(mesh, PartitionSpec(AXIS) if split else PartitionSpec())


def replicate(value, mesh):
    """``value`` (a jax array) replicated on every device of ``mesh``."""
    import jax

    PLACEMENT.active = True
    return jax.device_put(value, _sharding(mesh, False))


def mesh_of(arr):
    """The multi-device mesh ``arr`` is laid out on, else None (one device, a tracer, not an array)."""
    from jax.sharding import NamedSharding

    sharding = getattr(arr, "sharding", None)
    if isinstance(sharding, NamedSharding) and sharding.mesh.size > 1 and AXIS in sharding.mesh.axis_names:
        return sharding.mesh
    return None


def _is_concrete(arr):
    import jax

    return isinstance(arr, jax.Array) and not isinstance(arr, jax.core.Tracer)


def place_inputs(block, args):
    """``args`` of a hybridized block's call, the arrays among them put on the mesh of the block's parameters
    (or, for a block without any, of an input already on one): split along axis 0 when it divides evenly,
    else replicated.  Returns ``args`` itself when there is no mesh."""
    from ast_hybrid.core.ndarray import NDArray

    mesh = None
    for p in block.collect_params().values():
        mesh = mesh_of(p._value)
        if mesh is not None or p._value is not None:
            break
    if mesh is None:
        for a in args:
            mesh = mesh_of(a._arr if isinstance(a, NDArray) else a)
            if mesh is not None:
                break
    if mesh is None:
        return args
    placed = []
    for a in args:      # a loop, not a generator: _warn_once's stacklevel counts the frames to the user's call
        placed.append(_place(a, mesh, block))
    return tuple(placed)


def _place(a, mesh, block):
    import jax

    from ast_hybrid.core.ndarray import NDArray

    arr = a._arr if isinstance(a, NDArray) else a
    if not _is_concrete(arr) or getattr(arr.sharding, "mesh", None) == mesh:
        return a
    split = arr.ndim > 0 and arr.shape[0] % mesh.size == 0
    one_device = len(arr.sharding.device_set) == 1 and arr.committed
    if (one_device or not split) and arr.ndim > 0 and arr.shape[0] > 1:
        _warn_once(block, mesh, arr.shape[0], one_device)
    placed = jax.device_put(arr, _sharding(mesh, split))
    return NDArray(placed, a._ag) if isinstance(a, NDArray) else placed


def _warn_once(block, mesh, size, one_device):
    key = (type(block).__name__, size, mesh.size, one_device)
    if key in PLACEMENT.warned:
        return
    PLACEMENT.warned.add(key)
    name = type(block).__name__
    if one_device:      # a slice from split_and_load: the loop over contexts is right, not parallel
        msg = (f"{name}: an input on one device (a split_and_load slice?) is computed on all {mesh.size} devices "
               "of its parameters: the gradients are right, but nothing runs in parallel. Give the network the "
               f"whole batch (net(batch)): ast-hybrid splits it over the {mesh.size} devices itself.")
    else:
        msg = (f"{name}: a batch of {size} does not split evenly over {mesh.size} devices, so every device "
               f"computes all of it (same results, no speed-up). Use a batch size that is a multiple of "
               f"{mesh.size} (DataLoader(..., last_batch='discard') drops a short last batch).")
    warnings.warn(msg, UserWarning, stacklevel=5)


class SummedLeaf(_Leaf):
    """The gradient buffer of a parameter on several devices with ``grad_req='write'``: MXNet keeps one per
    context, each written by the backward of that context's loss, and sums them at ``step``.  Here the
    parameter has one buffer, so the backward passes between two steps (one per ``split_and_load`` slice)
    add into it; ``Trainer.allreduce_grads`` (the start of ``step``) marks it taken, and the next backward
    writes afresh."""

    __slots__ = ("taken", "parts")

    def __init__(self, grad_req="write", grad=None):
        super().__init__(grad_req, grad)
        self.taken = True
        self.parts = []     # with grad_req='write', each backward's own gradient since the last step

    def accumulate(self, g):
        if self.grad_req == "write" and not self.taken and self.grad is not None:
            self.grad = self.grad + g
            self.parts.append(g)
            self.fresh = True
        else:
            super().accumulate(g)
            self.parts = [g]
        self.taken = False


def mark_taken(params):
    """``step`` (or ``allreduce_grads``) has summed the gradients of ``params``: each context's gradient is
    the sum now, as after MXNet's allreduce, and their next backward writes, not adds."""
    for p in params:
        leaf = p._leaf
        if isinstance(leaf, SummedLeaf):
            leaf.taken = True
            if leaf.parts:
                leaf.parts = [leaf.grad] * p._copies


# --- across processes -------------------------------------------------------------------------------------

def _process_mesh(local_devices):
    """A (processes, devices) mesh: each process's devices with the same local numbers as ``local_devices``."""
    import jax
    import numpy as np
    from jax.sharding import Mesh

    mine = jax.local_devices(backend=local_devices[0].platform)
    numbers = [mine.index(d) for d in local_devices]
    rows = []
    for proc in range(jax.process_count()):
        theirs = sorted((d for d in jax.devices(local_devices[0].platform) if d.process_index == proc),
                        key=lambda d: d.id)
        if len(theirs) <= max(numbers):
            raise RuntimeError(f"process {proc} has {len(theirs)} devices; this one uses its devices {numbers}. "
                               "Give every process the same devices (ast-hybrid launch --devices-per-process K)")
        rows.append([theirs[i] for i in numbers])
    return Mesh(np.array(rows, dtype=object), ("process", AXIS))


@functools.lru_cache(maxsize=None)
def _summer(mesh):
    import jax

    return jax.jit(lambda rows: [r.sum(0) for r in rows], out_shardings=_sharding_all(mesh))


def _sharding_all(mesh):
    from jax.sharding import NamedSharding, PartitionSpec

    return NamedSharding(mesh, PartitionSpec())


class PeerLost(RuntimeError):
    """A collective over the processes failed: another process has stopped."""


def allreduce_across_processes(arrays):
    """Each array (this process's value, on this process's devices) summed over all processes, in one compiled
    program; the sums come back laid out as the arrays were.  One process: ``arrays`` unchanged."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    arrays = list(arrays)
    if jax.process_count() == 1 or not arrays:
        return arrays
    groups = {}      # the arrays on the same devices are summed by one program
    for i, a in enumerate(arrays):
        if not a.sharding.is_fully_replicated:
            raise ValueError(f"allreduce_across_processes: an array of shape {a.shape} is split over this "
                             "process's devices; only whole (replicated) values can be summed over processes")
        groups.setdefault(tuple(sorted(a.sharding.device_set, key=lambda d: d.id)), []).append(i)
    out = list(arrays)
    for devices, members in groups.items():
        mesh = _process_mesh(list(devices))
        rows_sharding = NamedSharding(mesh, PartitionSpec("process"))
        rows = [jax.make_array_from_single_device_arrays(
                    (jax.process_count(), *arrays[i].shape), rows_sharding,
                    [s.data[None] for s in arrays[i].addressable_shards])
                for i in members]
        try:
            totals = _summer(mesh)(rows)
            jax.block_until_ready(totals)
        except Exception as exc:       # jax's XlaRuntimeError: a peer is gone (gloo: connection closed)
            raise PeerLost(f"process {jax.process_index()}: summing the gradients over the "
                           f"{jax.process_count()} processes failed, most likely because another process has "
                           f"stopped (see its error). XLA said: {str(exc).splitlines()[0][:300]}") from None
        for i, total in zip(members, totals):
            by_device = {s.device: s.data for s in total.addressable_shards}
            out[i] = jax.make_array_from_single_device_arrays(
                arrays[i].shape, arrays[i].sharding, [by_device[s.device] for s in arrays[i].addressable_shards])
    return out
