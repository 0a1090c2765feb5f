"""TT-Lang, the front end with explicit dataflow: ``@ttl.operation`` with compute and data movement kernels.

Reads: Python functions written in the TT-Lang programming model (TT-Lang 1.x): an operation
over device tensors whose body makes dataflow buffers and pipe nets and defines one
``@ttl.compute()`` and up to two ``@ttl.datamovement()`` kernel functions. Writes: ``ttl`` IR
(:mod:`tilefold.ir.ttl`) for the TT-Lang pipeline.

Modules: :mod:`.api` (the names scripts use), :mod:`.operation` (the operation and one call of
it), :mod:`.capture` (what the body creates), :mod:`.grid`, :mod:`.dataflow_buffers`,
:mod:`.pipes`, :mod:`.devices` (device domains and transfer graphs), :mod:`.kernels`,
:mod:`.dfb_boundaries`, :mod:`.math_api` (the block functions), :mod:`.implicit_kernels` and
:mod:`.inlining` (bodies without kernel functions, operations called from them); building kernels:
:mod:`.builder` (statements), :mod:`.expressions`, :mod:`.scalars`, :mod:`.variables`,
:mod:`.values`, :mod:`.acquisition`, :mod:`.block_states`, :mod:`.block_expressions`,
:mod:`.data_movement`. The front end only builds IR: the session's runner (:mod:`.session`,
installed by :mod:`tilefold.ttl`: :mod:`tilefold.run.ttl`) hands a call to :mod:`tilefold.compiler`
(the pipeline, the Program, the simulated run) with the session's device and output settings. Scripts
(``tilefold sim`` / ``compile`` / ``run``) are run by :mod:`tilefold.cli.ttl_scripts`.
"""

from tilefold.frontend.ttl.api import *  # noqa: F401,F403
from tilefold.frontend.ttl.api import __all__  # noqa: F401
from tilefold.frontend.ttl.api import __getattr__  # noqa: F401
