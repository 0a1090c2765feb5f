"""TT-Lang for tilefold: ``import tilefold.ttl as ttl`` (or ``from tilefold import ttl``).

The names of the TT-Lang 1.x programming model — ``ttl.operation``, ``ttl.compute``,
``ttl.datamovement``, ``ttl.make_dataflow_buffer_like``, ``ttl.copy``, ``ttl.node``,
``ttl.grid_size``, ``ttl.Pipe``, ``ttl.PipeNet``, ``ttl.GroupTransfer``, ``ttl.signpost``,
``ttl.math`` and ``ttl.block`` — see :mod:`tilefold.frontend.ttl`. Host tensors come from
:mod:`tilefold.ttnn`.
"""

from tilefold.frozen_gc import frozen_gc as _frozen_gc

# beside torch, a full collection during these imports walks about a million objects (0.1 s)
with _frozen_gc():
    from tilefold.frontend.ttl import *  # noqa: F401,F403
    from tilefold.frontend.ttl import __all__ as _language_names
    from tilefold.frontend.ttl.api import __getattr__  # noqa: F401  (a name tilefold lacks is one clear error)

    import sys as _sys
    import types as _types

    from tilefold import __version__  # noqa: F401  (ttl.__version__: the tilefold release)
    from tilefold import ttl_diagnostics as diagnostics  # ttl.diagnostics.TTLangCompileError
    from tilefold import ttl_ir as ir  # ttl.ir.MLIRError
    from tilefold import ttl_utils as utils  # ttl.utils: TT-Lang's helpers beside the language
    from tilefold import ttl_dtype_utils as dtype_utils  # ttl.dtype_utils: torch / TT-NN data types
    from tilefold.ttl_sram_storage import SRAMStorage  # noqa: F401  (tensors kept in L1 across operations)
    from tilefold import uncaught as _uncaught
    from tilefold.frontend.ttl import api as _api
    from tilefold.frontend.ttl import session as _session
    from tilefold.run import ttl as _runner
    from tilefold import ttl_submodules as _submodules

for _name in ("", ".correctness", ".block_allocation"):     # `from tilefold.ttl.utils.correctness import ...`
    _sys.modules[f"{__name__}.utils{_name}"] = _sys.modules[f"tilefold.ttl_utils{_name}"]
_sys.modules[f"{__name__}.diagnostics"] = diagnostics
_sys.modules[f"{__name__}.ir"] = ir
_sys.modules[f"{__name__}.ttl_api"] = _api.pre_1_0_api_module(f"{__name__}.ttl_api")   # pre-1.0: one clear error
ttl = _sys.modules[__name__]     # `from ttl import ttl`: TT-Lang's language module is the package's own names

__all__ = [*_language_names, "SRAMStorage", "build_info"]

_runner.install()      # calls of ttl.operation compile and run through tilefold.run.ttl
_submodules.install_for_tilefold()     # `from tilefold.ttl.dtype_utils import ...`, as `from ttl.dtype_utils ...`


# ``ttl.config`` (``from ttl.config import HAS_TT_DEVICE``): the simulated device is a device, so
# TT-Lang's test utilities run their operations instead of only compiling them
config = _types.SimpleNamespace(VERSION=__version__, HAS_TT_DEVICE=True, TTLANG_COMMIT="unknown",
                                TT_METAL_TAG="v0.69.0", TT_METAL_COMMIT="unknown")


def build_info() -> dict:
    """``ttl.build_info()``: what this ``ttl`` was built from — the tilefold release as ``version``
    and the TT-Metalium release its C++ targets; TT-Lang's commit keys are ``"unknown"``, as in a
    TT-Lang wheel built without a checkout."""
    return {"version": __version__, "ttlang": config.TTLANG_COMMIT, "tt_metal_tag": config.TT_METAL_TAG,
            "tt_metal": config.TT_METAL_COMMIT}


def _tile_tensor(value):
    from tilefold import ttnn

    return ttnn.from_torch(value, layout=ttnn.TILE_LAYOUT)


_session.install_tile_tensor(_tile_tensor)     # torch arguments of a compile-only call
_uncaught.install()    # an uncaught tilefold error prints as one line
