"""Progress bars: shown on stderr for long work, never for short work or when disabled."""

import os
import pty
import subprocess
import sys
import time

from tilefold import progress
from tilefold.progress import Progress


def test_a_long_task_shows_a_bar(capsys):
    with Progress("crunching", 10, "it", enabled=True, delay=0.0) as bar:
        bar.done = 4
        time.sleep(0.4)
    assert bar.shown
    assert "crunching" in capsys.readouterr().err


def test_a_short_task_shows_nothing(capsys):
    with Progress("crunching", 10, enabled=True, delay=5.0) as bar:
        bar.done = 10
    assert not bar.shown and capsys.readouterr().err == ""


def test_disabled_shows_nothing(capsys):
    with progress.disabled():
        with Progress("crunching", 10, delay=0.0) as bar:
            time.sleep(0.3)
    assert not bar.shown and capsys.readouterr().err == ""


def test_quiet_command_line_turns_bars_off(monkeypatch):
    from tilefold.cli import main as cli

    seen = []
    real_run = cli._run
    monkeypatch.setattr(cli, "_run", lambda argv: seen.append((argv, progress.is_enabled())) or real_run(argv))
    assert cli.main(["--quiet", "layout", "64,64"]) == 0
    assert cli.main(["layout", "64,64", "-q"]) == 0
    assert seen == [(["layout", "64,64"], False)] * 2
    assert progress._enabled is None


def test_a_bar_shows_on_a_terminal_that_reports_no_size():
    """A fresh pseudo-terminal reports 0 columns; the bar still shows (80 columns wide)."""
    main, side = pty.openpty()
    code = ("import time; from tilefold.progress import Progress\n"
            "with Progress('crunching', 10, 'it', delay=0.1) as bar:\n"
            "    bar.done = 5; time.sleep(0.6)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=side, stdout=subprocess.DEVNULL)
    os.close(side)
    out = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait() == 0
    os.close(main)
    assert b"crunching:  50%" in out
