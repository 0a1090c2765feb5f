"""numpy's huge-page advice is off in a process that imports a host front end and during a run,
unless the environment chooses it; a run gives the setting it found back."""

from __future__ import annotations

import os
import subprocess
import sys

from tilefold import huge_pages

_PROBE = ("import tilefold.ttnn\n"
          "from numpy._core.multiarray import _set_madvise_hugepage as advice\n"
          "print(advice(False))\n")          # the setting the import left


def _advice_after_import(**env) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"} | env
    return subprocess.run([sys.executable, "-c", _PROBE], env=environment, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_importing_the_host_front_end_turns_the_advice_off():
    assert _advice_after_import() == "False"


def test_the_environment_keeps_numpys_choice():
    assert _advice_after_import(NUMPY_MADVISE_HUGEPAGE="1") == "True"


def test_a_run_turns_the_advice_off_and_gives_it_back(monkeypatch):
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    before = huge_pages.set_advice(True)
    try:
        with huge_pages.ordinary_pages_during():
            assert huge_pages.set_advice(False) is False       # off inside the run
        assert huge_pages.set_advice(True) is True            # on again after it
        monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
        with huge_pages.ordinary_pages_during():
            assert huge_pages.set_advice(True) is True        # the environment's choice holds
    finally:
        huge_pages.set_advice(bool(before))
