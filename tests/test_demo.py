"""``make demo`` runs tilefold.demo: it must work from a clean folder and show real results."""

from tilefold import demo


def test_demo_runs_end_to_end(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert demo.main() == 0
    out = capsys.readouterr().out
    assert "padding per core position: rows 14/14/15" in out
    assert "51 cores" in out and "cliff core (2,6)" in out
    assert out.count("dst: PASS") == 2
    assert "of the DRAM roofline" in out
    assert "NocHazardError" in out and "missing_barrier.py:27" in out
    assert (tmp_path / "build/demo/layout.png").stat().st_size > 1000
    assert (tmp_path / "build/demo/tilize/reader.cpp").exists()
    assert (tmp_path / "build/demo/row_standardize/compute.cpp").exists()
