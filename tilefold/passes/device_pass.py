"""The base of passes that read the device description: their ``arch`` option is an :class:`Arch`.

Reads / writes: nothing. A pass spec names the device by any name :func:`~tilefold.arch.get_arch`
knows (``lower-to-sfpu{arch=n300}``); the pass instance holds the :class:`~tilefold.arch.Arch`
object itself, and prints back as that name.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec

from tilefold.arch import DEFAULT_ARCH, Arch, arch_key, get_arch


@dataclass(frozen=True)
class DevicePass(ModulePass):
    """A pass configured for one device (Wormhole B0 n150 unless told otherwise)."""

    arch: Arch = DEFAULT_ARCH

    @classmethod
    def from_spec(cls, spec: ArgSpec):
        params = dict(spec.normalize_parameter_names().parameters)
        device = params.pop("arch", None)
        instance = super().from_spec(ArgSpec(spec.name, params))
        if device is None:
            return instance
        if len(device) != 1 or not isinstance(device[0], str):
            raise ValueError(f"{spec.name}: arch takes one device name, e.g. arch=n300")
        return dataclasses.replace(instance, arch=get_arch(device[0]))

    def spec(self, *, include_default: bool = False) -> ArgSpec:
        base = ModulePass.spec(dataclasses.replace(self, arch=DEFAULT_ARCH), include_default=include_default)
        if self.arch is DEFAULT_ARCH and not include_default:
            return base
        return ArgSpec(base.name, {**base.parameters, "arch": (arch_key(self.arch),)})
