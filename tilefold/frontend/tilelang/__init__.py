"""The TileLang-style front end: ``import tilefold.language as T``.

Kernels are ``@T.prim_func`` functions over a grid of blocks (``T.Kernel``) with shared /
fragment buffers and tile operations (``T.copy``, ``T.gemm``, ``T.Parallel`` ...). The
modules: :mod:`.types` (dtypes, ``T.Tensor``), :mod:`.api` (the primitives),
:mod:`.prim_func` (the decorator and layout annotations), :mod:`.source` and
:mod:`.values` (what the builder reads and computes with), :mod:`.builder` and
:mod:`.primitives` (AST → ``tile`` IR). The front end only builds IR: ``@tilefold.jit`` is
:mod:`tilefold.run.jit`, and the pipeline, the Program, the artifacts and simulated runs are
:mod:`tilefold.compiler`'s; ``tilefold compile`` /
``run`` on a .py file is :mod:`tilefold.cli.tilelang_scripts`.
"""
