"""The ``tilefold`` process ends without module teardown but finishes what a script can observe."""

import subprocess
import sys
import textwrap


def _run_script(tmp_path, body: str, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / "leaves_work.py"
    script.write_text("import ttl\n" + textwrap.dedent(body))
    return subprocess.run([sys.executable, "-m", "tilefold", "sim", str(script), *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)


def test_threads_atexit_handlers_open_files_and_output_are_finished(tmp_path):
    done = _run_script(tmp_path, """
        import atexit, threading, time

        left_open = open("global.txt", "w")
        left_open.write("written through a global")

        def late_writer():
            time.sleep(0.3)
            with open("thread.txt", "w") as out:
                out.write("written by a thread the script did not join")
        threading.Thread(target=late_writer).start()
        atexit.register(lambda: print("atexit handler ran"))
        print("buffered line", end="")
        """)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "global.txt").read_text() == "written through a global"
    assert (tmp_path / "thread.txt").read_text() == "written by a thread the script did not join"
    assert done.stdout.startswith("buffered line")
    assert "atexit handler ran" in done.stdout


def test_the_exit_status_is_the_scripts(tmp_path):
    assert _run_script(tmp_path, "import sys\nsys.exit(3)\n").returncode == 3
    failed = _run_script(tmp_path, "raise ValueError('bad input')\n")
    assert failed.returncode == 1 and "bad input" in failed.stderr
