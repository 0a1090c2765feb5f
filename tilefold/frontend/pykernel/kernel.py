"""The kernel decorators and the kernel object they make.

Reads: a Python function. Writes: a :class:`PyKernel`, whose ``ttkernel`` IR is built the
first time it is asked for (so a kernel may use module-level names and ``@inline``
helpers defined after it). ``@reader_kernel`` and ``@writer_kernel`` make data-movement
kernels (thread ``noc``), ``@compute_kernel`` a compute kernel (thread ``compute``;
optionally with its compute config), ``@kernel(thread=...)`` either.
"""

from __future__ import annotations

import inspect

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from tilefold.errors import KernelError, SourceLocation
from tilefold.frontend.pykernel.builder import build_kernel
from tilefold.ir.context import print_ir
from tilefold.ir.ttkernel import COMPUTE_CONFIG_ATTR, compute_config_attr
from tilefold.caller import user_location

THREADS = ("noc", "compute")
MATH_FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4")


class PyKernel:
    """A kernel written in Python: ``.function`` is its ``func.func``, ``.module`` the module
    holding it, ``.ir()`` its MLIR text.

    Hand it to :meth:`tilefold.program.Program.create_kernel` to place it on cores.
    """

    is_pykernel = True

    def __init__(self, python_function, thread: str, role: str, compute_config: dict | None = None):
        self.python_function = python_function
        self.name: str = python_function.__name__
        self.thread = thread
        self.role = role                       # "reader", "writer", "compute" or "kernel"
        self.compute_config = compute_config
        self.source_file: str = python_function.__code__.co_filename
        self.source_line: int = python_function.__code__.co_firstlineno
        self.__doc__ = python_function.__doc__
        self._module: ModuleOp | None = None

    def build(self) -> PyKernel:
        """Parse and verify now (it otherwise happens on first use); returns the kernel."""
        if self._module is None:
            attributes = {}
            if self.compute_config is not None:
                try:
                    attributes[COMPUTE_CONFIG_ATTR] = compute_config_attr(**self.compute_config)
                except (TypeError, VerifyException) as exc:
                    raise KernelError(f"compute_config of {self.name}: {exc}",
                                      SourceLocation(self.source_file, self.source_line)) from None
            self._module = build_kernel(self.python_function, self.name, self.thread, attributes)
        return self

    @property
    def module(self) -> ModuleOp:
        return self.build()._module

    @property
    def function(self) -> func.FuncOp:
        return self.module.body.block.first_op

    def ir(self, debuginfo: bool = False) -> str:
        """The kernel's module as MLIR text; with ``debuginfo`` every op shows its ``loc(file:line:col)``."""
        return print_ir(self.module, debuginfo=debuginfo)

    def __call__(self, *args, **kwargs):
        raise KernelError(f"{self.name} is a kernel: tilefold compiles it, Python does not run it; place it on cores "
                          f"with Program.create_kernel({self.name}, cores, config)", user_location())

    def __repr__(self) -> str:
        return f"<{self.role} kernel {self.name} ({self.thread}) from {self.source_file}:{self.source_line}>"


def _check_function(fn, decorator: str):
    if isinstance(fn, PyKernel):
        raise KernelError(f"{fn.name} is already a kernel; use one kernel decorator", user_location())
    if not inspect.isfunction(fn):
        raise KernelError(f"{decorator} decorates a def function, not {type(fn).__name__}", user_location())


def _decorator(fn, decorator: str, make):
    """Support both ``@decorator`` and ``@decorator(...)``."""
    if fn is None:
        def apply(f):
            _check_function(f, decorator)
            return make(f)
        return apply
    _check_function(fn, decorator)
    return make(fn)


def reader_kernel(fn=None):
    """A data-movement kernel that reads into circular buffers (runs on RISCV_0 / BRISC by convention)."""
    return _decorator(fn, "@reader_kernel", lambda f: PyKernel(f, "noc", "reader"))


def writer_kernel(fn=None):
    """A data-movement kernel that writes from circular buffers (runs on RISCV_1 / NCRISC by convention)."""
    return _decorator(fn, "@writer_kernel", lambda f: PyKernel(f, "noc", "writer"))


def compute_kernel(fn=None, *, math_fidelity: str | None = None, fp32_dest_acc_en: bool | None = None,
                   dst_full_sync_en: bool | None = None, math_approx_mode: bool | None = None):
    """A compute kernel (the three TRISCs). Giving any compute-config field fixes the config the
    kernel is verified against (DST capacity) and must be created with; the rest default."""
    given = {k: v for k, v in dict(math_fidelity=math_fidelity, fp32_dest_acc_en=fp32_dest_acc_en,
                                   dst_full_sync_en=dst_full_sync_en, math_approx_mode=math_approx_mode).items()
             if v is not None}
    if "math_fidelity" in given and given["math_fidelity"] not in MATH_FIDELITIES:
        raise KernelError(f"compute_kernel(math_fidelity={given['math_fidelity']!r}): math_fidelity must be one of "
                          f"{', '.join(MATH_FIDELITIES)}", user_location())
    for key, value in given.items():
        if key != "math_fidelity" and not isinstance(value, bool):
            raise KernelError(f"compute_kernel({key}={value!r}): {key} must be True or False", user_location())
    config = given or None
    return _decorator(fn, "@compute_kernel", lambda f: PyKernel(f, "compute", "compute", config))


def kernel(fn=None, *, thread: str = "noc"):
    """A kernel of the given thread kind: ``"noc"`` (data movement) or ``"compute"``."""
    if thread not in THREADS:
        raise KernelError(f"kernel(thread={thread!r}): thread must be 'noc' (data movement) or 'compute'",
                          user_location())
    return _decorator(fn, "@kernel", lambda f: PyKernel(f, thread, "kernel"))
