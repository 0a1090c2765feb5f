"""PyKernel, the TT-Metalium-style front end: ``from tilefold.pykernel import *``.

Brings every device function of the TT-Metalium API (``cb_reserve_back``,
``noc_async_read``, ``tilize_block``, ...), the kernel helpers (``get_compile_time_arg_val``,
``TensorAccessorArgs``, ``TensorAccessor``, ``array``, ``l1_ptr``, ``uint32``, ``uint64``,
``my_x``, ``my_y``, ``CBIndex``), the decorators ``@reader_kernel``, ``@writer_kernel``,
``@compute_kernel``, ``@kernel(thread=...)`` and ``@inline``. See
:mod:`tilefold.frontend.pykernel`.
"""

from tilefold.frontend.pykernel import *  # noqa: F401,F403
from tilefold.frontend.pykernel import __all__  # noqa: F401
