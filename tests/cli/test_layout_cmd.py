"""``tilefold layout``: the report, the picture and one-line errors."""

import numpy as np
import pytest
from matplotlib.image import imread

from tilefold.cli.main import main
from tilefold.layout.visualize import PADDING_COLOUR


def run(capsys, *argv):
    code = main(["layout", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def line(out: str, label: str) -> str:
    for text in out.splitlines():
        if text.strip().startswith(label):
            return text.strip()[len(label):].strip()
    raise AssertionError(f"no line {label!r} in:\n{out}")


def test_default_report(capsys):
    code, out, err = run(capsys, "2,3,64,128", "--grid", "2x4")
    assert code == 0 and err == ""
    assert line(out, "affine map") == "(d0, d1, d2, d3) -> (d0 * 192 + d1 * 64 + d2, d3)"
    assert line(out, "physical shape").startswith("384x128 elements = 12x4 tiles")
    assert line(out, "shard per core").startswith("192x32 elements = 6x1 tiles (device shape 2x4x6x1)")
    assert line(out, "padding").startswith("0 padding elements of 49152")
    assert "48 pages of 32x32 = 2048 B (aligned 2048 B), buffer 98304 B" in out
    assert "12 DRAM banks, 4 page slots per bank" in out
    assert "page     8 ->" not in out and "... 40 more pages" in out  # only --pages rows are listed
    assert "page     7 -> bank   7 noc (0, 8) +0" in out
    assert line(out, "TensorAccessorArgs") == "[2, 2048]"


def test_default_grid_is_the_largest_dividing_grid(capsys):
    code, out, _ = run(capsys, "9,43,7")
    assert code == 0
    assert line(out, "physical shape").startswith("768x32 elements = 24x1 tiles")
    assert line(out, "grid").startswith("8x1 (largest grid dividing the tiles within 8x8)")


def test_seed_004_map_with_padding(capsys):
    code, out, _ = run(capsys, "53,63", "--map", "(d0, d1) -> (d0, d1)", "--grid", "3x2", "--dtype", "bfp8_b")
    assert code == 0
    assert "memref<1x1x!tt.tile<32 x 32, bfp_bf8>, #tt.memory_space<dram>>" in out
    assert "padding per core position: rows 14/14/15, cols 0/1" in out


def test_sharded_report_and_accessor_args(capsys):
    code, out, _ = run(
        capsys, "2,3,64,128", "--memory-layout", "height_sharded", "--buffer-type", "l1", "--grid", "2x4", "--pages", "2"
    )
    assert code == 0
    assert "HEIGHT_SHARDED in L1" in out
    assert "shard shape     64x128 (physical 64x128), shard grid 6x1 = 6 shards, ROW_MAJOR" in out
    assert "page     1 -> bank   0 noc (1, 1) +2048" in out
    assert line(out, "TensorAccessorArgs") == f"[1, 2048, 1, 8, 48, 8, {0x02010101}, {0x04010301}, {0x02020102}, {0x04020302}]"


def test_row_major_blackhole(capsys):
    code, out, _ = run(capsys, "3,50", "--layout", "row_major", "--arch", "blackhole", "--pages", "0")
    assert code == 0
    assert "3 pages of 1x50 = 100 B (aligned 128 B)" in out
    assert line(out, "TensorAccessorArgs") == "[2, 128]"


def test_png_shows_cores_and_padding(capsys, tmp_path):
    target = tmp_path / "layout.png"
    code, out, _ = run(capsys, "53,63", "--map", "(d0, d1) -> (d0, d1)", "--grid", "3x2", "--png", str(target))
    assert code == 0 and f"picture written to {target}" in out
    image = imread(target)[..., :3]
    assert image.shape[0] > 200 and image.shape[1] > 200
    pad = np.all(np.abs(image - np.array(PADDING_COLOUR)) < 0.02, axis=-1)
    assert pad.mean() > 0.02   # the 1-row / 1-column padding of the last cores is visible

    unpadded = tmp_path / "even.png"
    code, _, _ = run(capsys, "64,64", "--grid", "2x2", "--png", str(unpadded))
    assert code == 0
    image = imread(unpadded)[..., :3]
    pad = np.all(np.abs(image - np.array(PADDING_COLOUR)) < 0.02, axis=-1)
    assert pad.mean() < 0.005   # only the legend swatch


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["2,x,3"], "shape '2,x,3' is not a list of integers"),
        (["2,3", "--grid", "0x1"], "--grid '0x1' needs positive dimensions"),
        (["2,3", "--collapse", "[[0,5]]"], "collapse_intervals end 5"),
        (["2,3", "--collapse", "0-1"], "--collapse '0-1'"),
        (["2,3", "--collapse", "[[0,1"], "--collapse '[[0,1' is not valid JSON"),
        (["33,128", "--grid", "8x8"], "grid 8x8 does not divide"),
        (["2,3", "--dtype", "int4"], "unknown data format 'int4'"),
        (["2,3", "--tile", "7x7"], "tile shape 7x7 is not supported"),
        (["2,3", "--memory-layout", "diagonal"], "memory_layout 'diagonal' is unknown"),
        (["2,3", "--buffer-type", "hbm"], "buffer_type 'hbm' is unknown"),
        (["2,3", "--arch", "grayskull"], "unknown device 'grayskull'"),
        (["2,3", "--map", "(d0) -> (d0)"], "linear map (d0) -> (d0) has 1 dims"),
        (["2,3", "--map", "(d0, d1) -> (d0, d1)", "--collapse", "0:1"], "--map and --collapse"),
        (["64,64", "--shard-shape", "30x32"], "shard_spec.shape 30x32 is not a multiple"),
        (["64,64", "--shard-shape", "32x32", "--memory-layout", "interleaved"], "--shard-shape needs a sharded"),
        (["256,512", "--memory-layout", "height", "--buffer-type", "l1", "--grid", "8x16"], "outside the 8x8 grid"),
        (["2,3", "--layout", "row_major", "--dtype", "bfp8_b"], "bfloat8_b exists only in tile layout"),
    ],
)
def test_bad_arguments_give_one_line(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("tilefold layout: ")
    assert needle in err
