"""The generated kernels compute what the IR says: they are compiled with the host g++ against a
stand-in of the data-movement API (harness/) and run, and their results are compared with a
Python reference of the same computation (numpy for the data-moving kernels)."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tilefold.codegen.cpp import emit_kernel
from tilefold.ir.context import parse_module

HERE = Path(__file__).parent
HARNESS = HERE / "harness"
IR = HERE / "ir"
MASK = 0xFFFFFFFF

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to compile generated kernels")


def kernel_from_text(text: str):
    return list(parse_module(text).ops)[0]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Compile a generated kernel with the harness (once per kernel text and compile-time args)."""
    folder = tmp_path_factory.mktemp("harness")
    main_object = folder / "harness_main.o"
    flags = ["g++", "-std=c++17", "-O0", "-Wall", "-Werror", "-Wno-unused-variable", "-Wno-unused-but-set-variable",
             f"-I{HARNESS}"]
    built = subprocess.run(flags + ["-c", str(HARNESS / "harness_main.cpp"), "-o", str(main_object)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    binaries: dict = {}

    def compile_kernel(kernel_text: str, ct_args=(0,)) -> Path:
        key = (kernel_text, tuple(ct_args))
        if key not in binaries:
            source = folder / f"kernel{len(binaries)}.cpp"
            source.write_text(kernel_text)
            binary = source.with_suffix("")
            result = subprocess.run(flags + [f"-DCT_ARGS={','.join(map(str, ct_args))}", str(source),
                                             str(main_object), "-o", str(binary)], capture_output=True, text=True)
            assert result.returncode == 0, f"g++ rejected the generated kernel:\n{result.stderr}\n{kernel_text}"
            binaries[key] = binary
        return binaries[key]

    return compile_kernel


def run(binary: Path, args: str, **files) -> subprocess.CompletedProcess:
    """Run a compiled kernel with runtime ``args`` (``@dram``, ``@dram_out``, ``@scratch`` are buffer
    addresses) and harness options (see harness/harness_main.cpp)."""
    ran = subprocess.run([str(binary), args, *[f"{k}={v}" for k, v in files.items()]], capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    return ran


def scratch_words(path: Path, count: int) -> list[int]:
    return np.fromfile(path, dtype=np.uint32)[:count].tolist()


# --- every arith op against a Python reference ---------------------------------------------------

def _s32(v: int) -> int:
    v &= MASK
    return v - (1 << 32) if v >> 31 else v


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# name -> (MLIR body computing %r from %a and %b (i32 values, %b nonzero, %s = %b & 31), reference)
ARITH_CASES = {
    "addi": ("%r = arith.addi %a, %b : i32", lambda a, b: a + b),
    "subi": ("%r = arith.subi %a, %b : i32", lambda a, b: a - b),
    "muli": ("%r = arith.muli %a, %b : i32", lambda a, b: a * b),
    "divui": ("%r = arith.divui %a, %b : i32", lambda a, b: a // b),
    "remui": ("%r = arith.remui %a, %b : i32", lambda a, b: a % b),
    "divsi": ("%r = arith.divsi %a, %b : i32", lambda a, b: _trunc_div(_s32(a), _s32(b))),
    "remsi": ("%r = arith.remsi %a, %b : i32",
              lambda a, b: _s32(a) - _trunc_div(_s32(a), _s32(b)) * _s32(b)),
    "ceildivui": ("%r = arith.ceildivui %a, %b : i32", lambda a, b: -(-a // b)),
    "shli": ("%r = arith.shli %a, %s : i32", lambda a, b: a << (b & 31)),
    "shrui": ("%r = arith.shrui %a, %s : i32", lambda a, b: a >> (b & 31)),
    "shrsi": ("%r = arith.shrsi %a, %s : i32", lambda a, b: _s32(a) >> (b & 31)),
    "andi": ("%r = arith.andi %a, %b : i32", lambda a, b: a & b),
    "ori": ("%r = arith.ori %a, %b : i32", lambda a, b: a | b),
    "xori": ("%r = arith.xori %a, %b : i32", lambda a, b: a ^ b),
    "maxui": ("%r = arith.maxui %a, %b : i32", max),
    "minui": ("%r = arith.minui %a, %b : i32", min),
    "maxsi": ("%r = arith.maxsi %a, %b : i32", lambda a, b: max(_s32(a), _s32(b))),
    "minsi": ("%r = arith.minsi %a, %b : i32", lambda a, b: min(_s32(a), _s32(b))),
    "select": ("%c = arith.cmpi ult, %a, %b : i32\n  %r = arith.select %c, %a, %b : i32", min),
    "extsi_i1": ("%c = arith.cmpi ne, %a, %b : i32\n  %r = arith.extsi %c : i1 to i32",
                 lambda a, b: -1 if a != b else 0),
    "trunci_i1": ("%c = arith.trunci %a : i32 to i1\n  %r = arith.extui %c : i1 to i32", lambda a, b: a & 1),
    "i64_mul_high": ("%a64 = arith.extui %a : i32 to i64\n  %b64 = arith.extui %b : i32 to i64\n"
                     "  %p = arith.muli %a64, %b64 : i64\n  %c32 = arith.constant 32 : i64\n"
                     "  %h = arith.shrui %p, %c32 : i64\n  %r = arith.trunci %h : i64 to i32",
                     lambda a, b: (a * b) >> 32),
    "i64_signed_ext": ("%a64 = arith.extsi %a : i32 to i64\n  %c32 = arith.constant 32 : i64\n"
                       "  %h = arith.shrui %a64, %c32 : i64\n  %r = arith.trunci %h : i64 to i32",
                       lambda a, b: MASK if a >> 31 else 0),
    "index_cast": ("%i = arith.index_cast %a : i32 to index\n  %j = arith.index_cast %i : index to i32\n"
                   "  %r = arith.addi %j, %b : i32", lambda a, b: a + b),
    "signed_literal": ("%m3 = arith.constant -3 : i32\n  %q = arith.divsi %a, %m3 : i32\n"
                       "  %lt = arith.cmpi slt, %q, %m3 : i32\n  %one = arith.extui %lt : i1 to i32\n"
                       "  %r = arith.addi %q, %one : i32",
                       lambda a, b: _trunc_div(_s32(a), -3) + int(_trunc_div(_s32(a), -3) < -3)),
    "float": ("%f = arith.sitofp %a : i32 to f32\n  %half = arith.constant 0.375 : f32\n"
              "  %g = arith.mulf %f, %half : f32\n  %r = arith.fptosi %g : f32 to i32",
              lambda a, b: int(np.float32(np.float32(_s32(a)) * np.float32(0.375)))),
    "float_bits": ("%f = arith.uitofp %b : i32 to f32\n  %r = arith.bitcast %f : f32 to i32",
                   lambda a, b: int(np.array([b], dtype=np.float32).view(np.uint32)[0])),
    "i16_mul": ("%x = arith.trunci %a : i32 to i16\n  %y = arith.trunci %b : i32 to i16\n"
                "  %p = arith.muli %x, %y : i16\n  %r = arith.extui %p : i16 to i32",
                lambda a, b: ((a & 0xFFFF) * (b & 0xFFFF)) & 0xFFFF),
    "literals": ("%one = arith.constant 1 : i32\n  %k = arith.constant 31 : i32\n"
                 "  %top = arith.shli %one, %k : i32\n  %r = arith.ori %top, %b : i32", lambda a, b: (1 << 31) | b),
}
for _predicate, _ref in {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "ult": lambda a, b: a < b, "ule": lambda a, b: a <= b,
    "ugt": lambda a, b: a > b, "uge": lambda a, b: a >= b, "slt": lambda a, b: _s32(a) < _s32(b),
    "sle": lambda a, b: _s32(a) <= _s32(b), "sgt": lambda a, b: _s32(a) > _s32(b),
    "sge": lambda a, b: _s32(a) >= _s32(b),
}.items():
    ARITH_CASES[f"cmpi_{_predicate}"] = (f"%c = arith.cmpi {_predicate}, %a, %b : i32\n  %r = arith.extui %c : i1 to i32",
                                         lambda a, b, f=_ref: int(f(a, b)))


def _arith_kernel(cases: list[str]) -> str:
    body = []
    for k, name in enumerate(cases):
        # give the case's own values a prefix; %a, %b and %s are the kernel's inputs
        text = re.sub(r"%(?!(?:a|b|s)\b)(\w+)", rf"%{name}_\1", ARITH_CASES[name][0])
        body.append(f"  {text}\n  %k{k} = arith.constant {k} : i32\n"
                    f"  ttkernel.l1_store(%scratch, %k{k}, %{name}_r) {{width = 32 : i32}} : i32, i32, i32")
    return ("func.func @arith_ops() attributes {ttkernel.thread = \"noc\"} {\n"
            "  %c0 = arith.constant 0 : i32\n  %c1 = arith.constant 1 : i32\n  %c2 = arith.constant 2 : i32\n"
            "  %c31 = arith.constant 31 : i32\n"
            "  %a = ttkernel.get_arg_val(%c0) : (i32) -> i32\n  %b = ttkernel.get_arg_val(%c1) : (i32) -> i32\n"
            "  %scratch = ttkernel.get_arg_val(%c2) : (i32) -> i32\n  %s = arith.andi %b, %c31 : i32\n"
            + "\n".join(body) + "\n  func.return\n}\n")


def test_every_arith_op_computes_like_the_ir(tmp_path, build):
    names = list(ARITH_CASES)
    kernel = emit_kernel(kernel_from_text(_arith_kernel(names)))
    binary = build(kernel)
    rng = random.Random(7)
    pairs = [(7, 3), (MASK, 2), (0x80000000, MASK), (5, 0x80000001), (123456789, 1000)]
    pairs += [(rng.getrandbits(32), rng.getrandbits(32) | 1) for _ in range(5)]
    for a, b in pairs:
        if _s32(a) == -(1 << 31) and _s32(b) == -1:
            continue
        run(binary, f"{a},{b},@scratch", scratch=tmp_path / "out.bin")
        got = scratch_words(tmp_path / "out.bin", len(names))
        want = [ARITH_CASES[n][1](a, b) & MASK for n in names]
        wrong = {n: (g, w) for n, g, w in zip(names, got, want) if g != w}
        assert not wrong, f"a={a:#x} b={b:#x}: {wrong}\n{kernel}"


# --- nested expressions: parentheses where C++ needs them ------------------------------------------

_TREE_OPS = {
    "addi": ("+", lambda a, b: a + b), "subi": ("-", lambda a, b: a - b), "muli": ("*", lambda a, b: a * b),
    "shli": ("<<", lambda a, b: a << (b & 31)), "shrui": (">>", lambda a, b: a >> (b & 31)),
    "andi": ("&", lambda a, b: a & b), "ori": ("|", lambda a, b: a | b), "xori": ("^", lambda a, b: a ^ b),
    "divui": ("/", lambda a, b: a // b), "remui": ("%", lambda a, b: a % b),
}


def _random_tree(rng: random.Random, depth: int, leaves: list[str], counter: list[int], lines: list[str]):
    """MLIR for a random expression tree over ``leaves``; returns (SSA name, Python evaluator)."""
    if depth == 0 or rng.random() < 0.2:
        leaf = rng.choice(leaves)
        return leaf, (lambda env, name=leaf: env[name])
    op = rng.choice(list(_TREE_OPS))
    lhs, left = _random_tree(rng, depth - 1, leaves, counter, lines)
    rhs, right = _random_tree(rng, depth - 1, leaves, counter, lines)
    if op in ("shli", "shrui"):
        counter[0] += 1
        lines.append(f"  %{counter[0]} = arith.andi %{rhs}, %c31 : i32")
        rhs = str(counter[0])
        right = (lambda env, r=right: r(env) & 31)
    if op in ("divui", "remui"):
        counter[0] += 1
        lines.append(f"  %{counter[0]} = arith.ori %{rhs}, %c1 : i32")
        rhs = str(counter[0])
        right = (lambda env, r=right: r(env) | 1)
    counter[0] += 1
    name = str(counter[0])
    lines.append(f"  %{name} = arith.{op} %{lhs}, %{rhs} : i32")
    fn = _TREE_OPS[op][1]
    return name, (lambda env, f=fn, l=left, r=right: f(l(env), r(env)) & MASK)


def test_nested_expressions_keep_their_meaning(tmp_path, build):
    rng = random.Random(2024)
    leaves = ["a", "b", "c"]
    lines, evaluators, counter = [], [], [0]
    for k in range(40):
        name, evaluate = _random_tree(rng, 4, leaves, counter, lines)
        lines.append(f"  %k{k} = arith.constant {k} : i32")
        lines.append(f"  ttkernel.l1_store(%scratch, %k{k}, %{name}) {{width = 32 : i32}} : i32, i32, i32")
        evaluators.append(evaluate)
    text = ("func.func @trees() attributes {ttkernel.thread = \"noc\"} {\n"
            "  %c0 = arith.constant 0 : i32\n  %c1 = arith.constant 1 : i32\n  %c2 = arith.constant 2 : i32\n"
            "  %c3 = arith.constant 3 : i32\n  %c31 = arith.constant 31 : i32\n"
            "  %a = ttkernel.get_arg_val(%c0) : (i32) -> i32\n  %b = ttkernel.get_arg_val(%c1) : (i32) -> i32\n"
            "  %c = ttkernel.get_arg_val(%c2) : (i32) -> i32\n"
            "  %scratch = ttkernel.get_arg_val(%c3) : (i32) -> i32\n" + "\n".join(lines) + "\n  func.return\n}\n")
    kernel = emit_kernel(kernel_from_text(text))
    assert kernel.count("(") > 100  # the trees really are printed as nested expressions
    binary = build(kernel)
    for env in ({"a": 0x12345678, "b": 0x9ABCDEF1, "c": 29}, {"a": 3, "b": MASK, "c": 0x80000000}):
        run(binary, f"{env['a']},{env['b']},{env['c']},@scratch", scratch=tmp_path / "out.bin")
        got = scratch_words(tmp_path / "out.bin", len(evaluators))
        want = [e(env) & MASK for e in evaluators]
        assert got == want, "\n".join(f"tree {k}: got {g:#x} want {w:#x}" for k, (g, w) in enumerate(zip(got, want))
                                      if g != w)


# --- the structured control flow kernel ------------------------------------------------------------

def _control_flow_reference(n: int, limit: int, old: int) -> int:
    total = 0
    for i in range(n):
        if i % 3 == 0:
            step = i * 7
        elif i % 3 == 1:
            step = (i << 2) | 1
        else:
            step = _trunc_div(_s32(-i), 2)
        total = (total + step) & MASK
    lo, hi = 0, total
    while lo < limit:
        lo, hi = hi, (lo + 1) & MASK
    return (((old + lo) & MASK) ^ hi) & MASK


@pytest.mark.parametrize("n, limit", [(0, 0), (10, 3), (17, 40), (5, 0)])
def test_control_flow_kernel_matches_python(tmp_path, build, n, limit):
    kernel = emit_kernel(kernel_from_text((IR / "control_flow.mlir").read_text()))
    out = tmp_path / "scratch.bin"
    ran = run(build(kernel), f"{n},{limit},@scratch", scratch=out)
    assert scratch_words(out, 2)[1] == _control_flow_reference(n, limit, 0)
    assert ran.stdout.splitlines() == [
        "get_noc_multicast_addr 3 5 6 8",          # my_x = 3, my_y = 5 in the harness
        "noc_semaphore_set_multicast 1 15 unlinked",
        "noc_semaphore_wait 1 ready",
    ]


# --- data movement: numpy in, numpy out -------------------------------------------------------------

def test_tilize_reader_gathers_32_sticks_per_block(tmp_path, build):
    """The TT-Metal tilize factory's reader: blocks of 32 sticks (rows) from an interleaved row-major buffer."""
    rows, width = 96, 48                       # 3 blocks of 32 sticks, 48 bf16 values per stick
    stick_bytes = width * 2
    sticks = np.arange(rows * width, dtype=np.uint16).reshape(rows, width)
    (tmp_path / "dram.bin").write_bytes(sticks.tobytes())
    start_stick = 32                           # this core reads blocks 1 and 2
    num_sticks = rows - start_stick
    kernel = emit_kernel(kernel_from_text((IR / "tilize_reader.mlir").read_text()))
    args = f"@dram,{num_sticks},0,3,{stick_bytes},1,0,0,{start_stick}"
    run(build(kernel, (stick_bytes, 2, stick_bytes)), args, dram=tmp_path / "dram.bin",
        pushed=tmp_path / "pushed.bin", page=stick_bytes * 32 // 3)
    pushed = np.fromfile(tmp_path / "pushed.bin", dtype=np.uint16)
    assert pushed.size == num_sticks * width
    np.testing.assert_array_equal(pushed.reshape(num_sticks, width), sticks[start_stick:])


def test_reader_and_writer_copy_every_page(tmp_path, build):
    """reader_tiles pushes pages start_id.. of a buffer; writer_tiles writes the pages it waits for."""
    page, num_pages, start = 2048, 6, 2
    pages = np.random.default_rng(5).integers(0, 2**16, size=(num_pages + start, page // 2), dtype=np.uint16)
    (tmp_path / "src.bin").write_bytes(pages.tobytes())
    reader = emit_kernel(kernel_from_text((IR / "reader_tiles.mlir").read_text()))
    run(build(reader, (0, 2, page)), f"@dram,{num_pages},{start}", dram=tmp_path / "src.bin",
        pushed=tmp_path / "pushed.bin", page=page)
    pushed = np.fromfile(tmp_path / "pushed.bin", dtype=np.uint16).reshape(num_pages, -1)
    np.testing.assert_array_equal(pushed, pages[start:])

    writer = emit_kernel(kernel_from_text((IR / "writer_tiles.mlir").read_text()))
    size = (num_pages + start) * page
    ran = run(build(writer, (16, 2, page)), f"@dram_out,{num_pages},{start}", feed=tmp_path / "pushed.bin",
              dram_out=f"{size}:{tmp_path / 'dst.bin'}", page=page)
    written = np.fromfile(tmp_path / "dst.bin", dtype=np.uint16).reshape(num_pages + start, -1)
    np.testing.assert_array_equal(written[start:], pages[start:])
    assert not written[:start].any()           # pages before start_id are not touched
    assert ran.stdout.splitlines() == ["noc_async_write_barrier"]


@pytest.mark.parametrize("n, filled", [(0, 0), (1, 2), (10, 7), (30, 40)])
def test_loops_with_dependent_carried_values(tmp_path, build, n, filled):
    kernel = emit_kernel(kernel_from_text((IR / "loops.mlir").read_text()))
    out = tmp_path / "scratch.bin"
    run(build(kernel), f"{n},{filled},@scratch", scratch=out)
    a, b = 0, 1
    for _ in range(n):
        a, b = b, (a + b) & MASK
    first_zero = max(filled, 2)         # words 2 .. filled-1 hold 1; the search starts at word 2
    choice = 10 if n == 0 else (2 * n if 2 * n > 3 else 1)
    assert scratch_words(out, 3) == [a, first_zero, choice]
