"""``ttl.SRAMStorage``: tensors kept in the L1 (SRAM) of chosen cores across operation calls.

Reads: the declarations of a program (``storage.tensor(...)``), the operations it prepares.
Writes: sharded L1 device tensors (:mod:`tilefold.ttnn`), which every operation given one
reads and writes in place, so that one operation's result is the next one's state.

The life of a storage follows TT-Lang's: declare tensors, optionally prepare operations (each
compiled for its arguments without running, so that later calls take the compiled program),
``allocate()`` (tensors initialised once: zeros; ``initialize="uninitialized"`` promises nothing
of the values, which are zeros on the simulated device too), call operations on the tensors, ``close()`` (the tensors are
released; a later use is an error). A declared tensor given to an operation before
``allocate()`` or after ``close()`` is one error at the call's line.
"""

from __future__ import annotations

import math

from tilefold.caller import user_location
from tilefold.errors import KernelError

_ADDRESSING = ("uniform", "per-core", "per-node")
_INITIALIZE = ("zeros", "uninitialized")


class SRAMStorage:
    """An owner of persistent sharded L1 tensors on ``device`` (TT-Lang's ``ttl.SRAMStorage``)."""

    def __init__(self, *, device, queue_ids=(0,), sub_device_ids=None):
        from tilefold import ttnn
        from tilefold.frontend.ttl.mesh import MeshDevice

        if not isinstance(device, (ttnn.Device, MeshDevice)):
            raise KernelError(f"ttl.SRAMStorage(device={device!r}): give a device (ttnn.open_device) or a mesh device "
                              "(ttnn.open_mesh_device)", user_location())
        self.device = device               # (queue_ids and sub_device_ids: one queue of one simulated device)
        self._tensors: list = []
        self.state = "declaring"          # "declaring" -> "allocated" -> "closed"

    # -- declaring ------------------------------------------------------------------------------

    def tensor(self, *, shape, shard_shape, dtype, layout, sharding=None, cores=None, nodes=None,
               addressing="uniform", initialize="zeros"):
        """Declare a tiled bfloat16 / float32 tensor of ``shape`` whose ``shard_shape`` shards lie in
        the L1 of ``cores`` (or ``nodes``: (x, y) pairs), dealt in the order given (block sharding:
        over the rectangle they fill, row by row); ``sharding`` is a ``ttnn.TensorMemoryLayout``
        (height sharding when not given)."""
        from tilefold import ttnn
        from tilefold.layout.tensor_spec import CoreRange, CoreRangeSet

        where = user_location()
        self._require("declaring", "declare a tensor", where)
        places = nodes if cores is None else cores
        shape, shard_shape = tuple(shape), tuple(shard_shape)
        if not 2 <= len(shape) <= 4 or len(shard_shape) != 2 or any(
                type(v) is not int or v <= 0 or v % 32 for v in (*shape[-2:], *shard_shape)):
            raise KernelError(f"SRAMStorage.tensor(shape={shape}, shard_shape={shard_shape}): a persistent tensor "
                              "has 2 to 4 dimensions and whole 32x32 tiles in its last two and in its shard", where)
        places = tuple(tuple(p) for p in (places or ()))
        if not places or len(set(places)) != len(places) or any(
                len(p) != 2 or any(type(v) is not int or v < 0 for v in p) for p in places):
            raise KernelError(f"SRAMStorage.tensor(cores={places}): give distinct (x, y) core pairs", where)
        if dtype not in (ttnn.bfloat16, ttnn.float32) or layout is not ttnn.TILE_LAYOUT:
            raise KernelError("SRAMStorage.tensor(): a persistent tensor is ttnn.bfloat16 or ttnn.float32 in "
                              "ttnn.TILE_LAYOUT", where)
        if addressing not in _ADDRESSING:
            raise KernelError(f"SRAMStorage.tensor(addressing={addressing!r}): give one of {_ADDRESSING}", where)
        if initialize not in _INITIALIZE:
            raise KernelError(f"SRAMStorage.tensor(initialize={initialize!r}): give one of {_INITIALIZE}", where)
        sharding = ttnn.TensorMemoryLayout.HEIGHT_SHARDED if sharding is None else sharding
        if not isinstance(sharding, ttnn.TensorMemoryLayout) or not sharding.name.endswith("_SHARDED"):
            raise KernelError(f"SRAMStorage.tensor(sharding={sharding!r}): give ttnn.TensorMemoryLayout."
                              "HEIGHT_SHARDED, WIDTH_SHARDED or BLOCK_SHARDED", where)
        shards = -(-math.prod(shape[:-1]) // shard_shape[0]) * -(-shape[-1] // shard_shape[1])
        if shards > len(places):
            raise KernelError(f"SRAMStorage.tensor(): shape {shape} in shards of {shard_shape} makes {shards} "
                              f"shards, and {len(places)} cores are given; give one core per shard", where)
        if sharding is ttnn.TensorMemoryLayout.BLOCK_SHARDED:      # the rectangle the cores fill, row by row
            grid = CoreRangeSet.from_cores(places)
        else:
            grid = CoreRangeSet([CoreRange(p, p) for p in places])
        spec = ttnn.ShardSpec(grid, shard_shape, ttnn.ShardOrientation.ROW_MAJOR)
        config = ttnn.MemoryConfig(sharding, ttnn.BufferType.L1, spec)
        tensor = ttnn.zeros(shape, dtype=dtype, layout=layout, device=self.device, memory_config=config)
        for part in (tensor, *getattr(tensor, "pieces", ())):      # a mesh device: one piece per chip
            part.sram_storage = self
        self._tensors.append(tensor)
        return tensor

    def prepare_operation(self, operation, *args, **kwargs):
        """Compile ``operation`` for these arguments without running it (a later call with
        arguments of the same shapes takes the compiled program); returns the operation."""
        from tilefold.frontend.ttl.operation import Operation
        from tilefold.frontend.ttl.session import preparing_calls

        where = user_location()
        self._require("declaring", "prepare an operation", where)
        if not isinstance(operation, Operation):
            raise KernelError(f"SRAMStorage.prepare_operation({operation!r}): give a function decorated with "
                              "@ttl.operation", where)
        if not any(getattr(v, "sram_storage", None) is self for v in (*args, *kwargs.values())):
            raise KernelError("SRAMStorage.prepare_operation(): give at least one tensor of this storage among the "
                              "operation's arguments", where)
        with preparing_calls():
            operation(*args, **kwargs)
        return operation

    # -- life ---------------------------------------------------------------------------------

    def allocate(self) -> None:
        """Place every declared tensor (zeros unless declared uninitialized) and make them usable."""
        where = user_location()
        self._require("declaring", "allocate", where)
        if not self._tensors:
            raise KernelError("SRAMStorage.allocate(): the storage declares no tensor; declare one with "
                              "storage.tensor(...) first", where)
        self.state = "allocated"

    def submit(self, operation, *args, **kwargs):
        """Run ``operation`` on the storage's tensors (the same as calling it)."""
        self._require("allocated", "submit an operation", user_location())
        return operation(*args, **kwargs)

    def close(self) -> None:
        """Release the tensors (every operation has finished when its call returns)."""
        if self.state == "closed":
            return
        self.state = "closed"
        for tensor in self._tensors:
            tensor.deallocate()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def check_usable(self, name: str, where) -> None:
        """An operation call is about to run on tensor ``name`` of this storage."""
        if self.state == "declaring":
            raise KernelError(f"tensor {name!r} is declared in a ttl.SRAMStorage that is not allocated yet; call "
                              "storage.allocate() before running an operation on it", where)
        if self.state == "closed":
            raise KernelError(f"tensor {name!r} belongs to a ttl.SRAMStorage that was closed; run the operation "
                              "before storage.close()", where)

    def _require(self, state: str, action: str, where) -> None:
        if self.state != state:
            now = {"declaring": "not allocated yet", "allocated": "already allocated", "closed": "closed"}[self.state]
            raise KernelError(f"SRAMStorage: cannot {action}: the storage is {now}", where)
