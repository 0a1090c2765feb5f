"""Python's cycle collector kept off the objects that were alive before a compile or a run.

Reads / writes: the interpreter's garbage-collector generations (``gc.freeze`` / ``gc.unfreeze``)
for the duration of the body; each nested use freezes again what the bodies around it made so far
(a compile after the lazy imports of the front end), and the outermost exit thaws them all.

A full collection walks every tracked object of the process. Beside torch (which TT-Lang programs
import) that is about a million objects, and one walk takes about 0.1 s on a two-core machine; a
compile and a short run each used to trigger one. Inside the body the objects that existed before
it are left out of collections (they were alive before and the body does not free them), so a
collection walks only what the body made. Nothing is lost: at the exit the frozen objects go back
into the oldest generation, where unreachable ones are collected as before.

A process that used ``frozen_gc`` freezes every object when it exits (an ``atexit`` handler): the
interpreter's teardown then collects only what is made after that. Beside torch its collections
walked about a million objects several times: 0.7 s of a 2.5 s run of TT-Lang's multi-tile
elementwise tutorial. What it skips is the collection of garbage cycles whose memory the
operating system takes back anyway; Python never promised to run their ``__del__`` at exit.
"""

from __future__ import annotations

import atexit
import gc
from contextlib import contextmanager

_depth = 0
_freezes_at_exit = False


@contextmanager
def frozen_gc():
    """Run the body with the objects alive at its start left out of cycle collections."""
    global _depth, _freezes_at_exit
    if not _freezes_at_exit:
        _freezes_at_exit = True
        atexit.register(gc.freeze)
    thaw = _depth == 0 and gc.isenabled()
    if gc.isenabled():
        gc.freeze()     # a nested use freezes what the outer body made so far too (lazy imports ...)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if thaw:
            gc.unfreeze()
