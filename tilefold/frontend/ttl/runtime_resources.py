"""Runtime resources an operation's host program adds for C++ the program calls:
``@ttl.operation(runtime_resource_factory=f)``, as TT-Lang's newer API has it.

Reads: the factory's result for one call. Writes: the semaphores it describes, as
``(core rectangles, initial value)`` pairs the program creates after the compiler's own.

``f(tensors=..., core_ranges=..., first_free_semaphore_id=...)`` is called once per compiled call
with the call's tensors, the operation's grid as a ``ttnn.CoreRangeSet`` and the first semaphore
id the compiler's kernels do not use (its pipe nets' and ``ttl.Semaphore`` s); it returns a
:class:`ProgramRuntimeResources`. Semaphore descriptors (``ttnn.SemaphoreDescriptor(id,
core_ranges=, initial_value=)``) take the ids that follow, in order; the C++ a program calls
(``ttl.call_extern_func``) reads them there. Extra runtime arguments and defines of a kernel, and
fabric connections (and ``ttl.FabricManagerClaim``), are not supported by tilefold yet (one error at
the operation's line).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilefold.errors import KernelError, SourceLocation
from tilefold.frontend.ttl.host_types import CoreCoord, CoreRange, CoreRangeSet, SemaphoreDescriptor


@dataclass(frozen=True)
class CoreRuntimeArgs:
    core: object
    values: tuple[int, ...]


@dataclass(frozen=True)
class KernelDefine:
    name: str
    value: str


@dataclass(frozen=True)
class KernelRuntimeResources:
    kernel: object
    runtime_args: tuple[CoreRuntimeArgs, ...] = ()
    defines: tuple[KernelDefine, ...] = ()


@dataclass(frozen=True)
class ProgramRuntimeResources:
    semaphore_descriptors: tuple[object, ...] = ()
    kernel_resources: tuple[KernelRuntimeResources, ...] = ()
    lifetimes: tuple[object, ...] = ()
    fabric_connections: tuple[object, ...] = ()


def resource_semaphores(factory, name: str, tensors: tuple, grid: tuple[int, int],
                        location: SourceLocation | None, chips: int = 1):
    """``first_free -> [(rectangles, initial value), ...]``: the semaphores ``factory`` describes for
    operation ``name`` on a ``grid`` of nodes, in id order from ``first_free`` (each as the ``(x0, y0,
    x1, y1)`` rectangles of its cores, on each of ``chips`` chips side by side), checked; the program
    calls it once it knows how many semaphores its kernels take."""

    def semaphores(first_free: int) -> list[tuple[list[tuple[int, int, int, int]], int]]:
        cores = CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(grid[0] - 1, grid[1] - 1))])
        try:
            resources = factory(tensors=tuple(tensors), core_ranges=cores, first_free_semaphore_id=first_free)
        except KernelError:
            raise
        except Exception as error:      # noqa: BLE001 - the user's factory failed: say so at the operation
            raise KernelError(f"@ttl.operation {name!r}: runtime_resource_factory failed: "
                              f"{type(error).__name__}: {error}", location) from None
        if not isinstance(resources, ProgramRuntimeResources):
            raise KernelError(f"@ttl.operation {name!r}: runtime_resource_factory must return "
                              f"ttl.ProgramRuntimeResources, not {type(resources).__name__}", location)
        for field_name in ("kernel_resources", "fabric_connections"):
            if getattr(resources, field_name):
                raise KernelError(f"@ttl.operation {name!r}: ProgramRuntimeResources({field_name}=...) from "
                                  "runtime_resource_factory is not supported by tilefold yet (only "
                                  "semaphore_descriptors are)", location)
        descriptors = list(resources.semaphore_descriptors)
        for i, d in enumerate(descriptors):
            if not isinstance(d, SemaphoreDescriptor):
                raise KernelError(f"@ttl.operation {name!r}: semaphore_descriptors[{i}] is {type(d).__name__}, not "
                                  "a ttnn.SemaphoreDescriptor", location)
        ids = sorted(d.id for d in descriptors)
        if ids != list(range(first_free, first_free + len(ids))):
            raise KernelError(f"@ttl.operation {name!r}: runtime_resource_factory's semaphores have ids {ids}; they "
                              f"take the ids from first_free_semaphore_id ({first_free}) on, one each, as the "
                              "program creates them in that order", location)
        return [([(r.start.x + k * grid[0], r.start.y, r.end.x + k * grid[0], r.end.y)
                  for k in range(chips) for r in (d.core_ranges or cores).ranges()],
                 d.initial_value) for d in sorted(descriptors, key=lambda d: d.id)]

    semaphores.factory = factory        # what the compiled program depends on (the compile cache's key)
    return semaphores
