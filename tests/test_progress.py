"""Progress bars: shown on stderr for long work, never for short work or when disabled."""

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
