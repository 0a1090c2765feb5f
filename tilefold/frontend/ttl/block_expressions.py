"""Block expressions in a compute kernel: operators, ``ttl.math`` functions, ``store`` and accumulators.

Reads: operands that are blocks, block expressions and Python numbers. Writes: block-level
``ttl`` ops (``ttl.add``, ``ttl.mul_scalar``, ``ttl.exp``, ``ttl.matmul``, ``ttl.bcast``,
``ttl.reduce_sum``, ``ttl.fill`` ...) on ``tensor<r x c x !ttcore.tile<...>>`` values and
``ttl.store`` into reserved blocks. Fusing and scheduling them on the Tensix engine is the
pipeline's job (``convert-ttl-to-compute`` and after).

Shapes are in tiles. Element-wise operands must have the same shape — a block of another shape
must be broadcast explicitly with ``ttl.math.broadcast``; ``a @ b`` needs ``(M, K) @ (K, N)``;
``reduce_sum`` / ``reduce_max`` over ``dims`` give 1 in those dims (an optional one-tile scaler
block, ``reduce_sum(x, scaler_blk[, out_blk], dims=...)``, is the reduce's second operand);
``broadcast`` expands dims of size 1; ``fill`` takes its shape from a block, a block expression or
``shape=``. A 1-D block (of a 1-D tensor) has shape ``(n,)`` here and ``(1, n)`` tiles in the IR
(its elements in row 0): along its one dimension ``broadcast`` replicates element 0 and
``reduce_sum`` / ``reduce_max`` reduce the elements, so their IR ``dims`` are the column
dimension. A block expression variable whose value crosses loop iterations (``y += a @ b`` in a
loop) becomes an :class:`~.values.Accumulator` kept in a dataflow buffer of its own; a reserved
block accumulated into in a loop (``y_blk += ...``) is accumulated the same way and stored into
the block when the loop ends. A loop that only adds to it keeps it in one block, summed by the
packer's L1 accumulation; otherwise it takes two blocks (docs/ttl.md).

A block of a row-major buffer has its shape in elements; a compute kernel computes on its
tile-sized pages (``(1, n)`` tiles in the IR), which element-wise math, numbers and a broadcast of a
one-element block (a scalar broadcast: the element is element 0 in either layout) do not tell
apart from tiles. What depends on the tile layout — ``@``, reductions, transposes, broadcasting a
block of several elements, a row-major operand beside a tiled one — is refused.

Errors: shape mismatches, block math in a data movement kernel, a block read before it is
written, a store into a waited block, unknown keywords of the block functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import ast
import itertools
import math

import ml_dtypes
import numpy as np

from tilefold.frontend.ttl.acquisition import AcquisitionBuilder
from tilefold.frontend.ttl.dataflow_buffers import hidden_dataflow_buffer
from tilefold.frontend.ttl.implicit_kernels import is_acquire
from tilefold.frontend.ttl.math_api import PARAMETRIC, RAW_ELEMENT, sfpu_functions
from tilefold.frontend.ttl.scalars import Scalar
from tilefold.frontend.ttl.values import Accumulator, Block, BlockExpression, device_block_shape
from tilefold.frontend.ttl.variables import live_after
from xdsl.dialects.builtin import IntegerAttr, UnitAttr, i32

from tilefold.ir import ttl
from tilefold.ir.sfpu import INTEGER_32, INTEGER_ARITHMETIC, INTEGER_SFPU_OPS, TYPECASTS, integer_op_for
from tilefold.errors import LayoutError
from tilefold.layout.formats import DataFormat, data_format

UNARY, BINARY = sfpu_functions()
# integer blocks: typecast, store and copy; the SFPU's integer functions of two blocks of one
# format (+ - * of int32 / uint32 / uint16, max / min / comparisons of some: tilefold.ir.sfpu)
_INTEGER_FORMATS = (DataFormat.Int32, DataFormat.UInt32, DataFormat.UInt16, DataFormat.UInt8)
_INTEGER_ARITHMETIC = tuple(DataFormat(f) for f in INTEGER_ARITHMETIC)
_INTEGER_SIGN_OPS = ("neg", "relu", "abs")      # of integer blocks: from integer subtraction and max
# ``ttl.add(a, b)``, ``sub``, ``mul``, ``div``: the operators, on blocks or a block and a number
ARITHMETIC = {"add": ast.Add, "sub": ast.Sub, "mul": ast.Mult, "div": ast.Div}

# comparisons of two blocks (1.0 where true, else 0.0); a number operand fills a block
_COMPARISONS = ("gt", "lt", "ge", "le", "eq", "ne")
_OPERATOR_NAMES = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
_SCALAR_OPS = {ast.Add: "add_scalar", ast.Sub: "sub_scalar", ast.Mult: "mul_scalar", ast.Div: "div_scalar"}


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _number_text(v) -> str:
    """A number as an error message shows it (an int too large for a float as its power of ten)."""
    try:
        return f"{v:g}"
    except OverflowError:
        return f"{'-' if v < 0 else ''}10**{int(math.log10(abs(v)))}"


def _beyond_float32(v) -> bool:
    """Whether a finite number becomes an infinity as a float32 (the SFPU's and a block op's)."""
    try:
        if not math.isfinite(float(v)):
            return False
    except OverflowError:           # an int beyond every float
        return True
    with np.errstate(over="ignore"):
        return bool(np.isinf(np.float32(v)))


def _unit(value: BlockExpression) -> str:
    return "elements" if value.row_major else "tiles"


# block ops that depend on how elements sit in tiles: refused on row-major blocks
_LAYOUT_DEPENDENT = {"matmul": "a @ b (matmul)", "reduce_sum": "ttl.math.reduce_sum",
                     "reduce_max": "ttl.math.reduce_max", "transpose": "ttl.transpose"}


def _strip_leading_ones(shape) -> tuple[int, ...]:
    shape = tuple(shape)
    while len(shape) > 1 and shape[0] == 1:
        shape = shape[1:]
    return shape


def _shape_text(shape) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else "x".join(str(s) for s in shape)



# keywords of the TT-Lang specification that name a parameter another way (rsub(a, b=5): its value;
# elu(x, slope=...): its alpha)
_KEYWORD_ALIASES = {"rsub": {"b": "value"}, "elu": {"slope": "alpha"}}


@dataclass(frozen=True, eq=False)
class PendingBroadcast:
    """``ttl.math.broadcast(x, dims=[...])`` written without ``shape=``: it takes the shape of the
    block it is combined with element-wise, or of the block it is stored into."""

    fn: object
    bound: dict
    node: object

class BlockExpressionBuilder(AcquisitionBuilder):
    """Mixin of :class:`~.builder.KernelBuilder`."""

    # -- operands ---------------------------------------------------------------------------

    def require_compute(self, node, what: str) -> None:
        if self.kind != "compute":
            raise self.error(f"{what} is computed by the compute kernel; a data movement kernel moves blocks with "
                             "ttl.copy", node)

    def operand(self, value, node) -> BlockExpression:
        """A block or block expression as an SSA tensor value (reading it)."""
        if isinstance(value, BlockExpression):
            return value
        if isinstance(value, PendingBroadcast):     # nothing gives its shape here
            self._target_shape(value.fn, value.bound, value.node)
        if isinstance(value, Block):
            self.require_compute(node, f"reading {value.name}")
            self.require_computable_tiles(value, f"reading {value.name}", node)
            self.check_position(value, node)
            if value.accumulator is not None:
                return self.accumulator_read(value.accumulator, node)
            row_major = not value.dfb.is_tiled
            if value.acquired == "reserve":
                if value.summed_in_l1:
                    raise self.error(f"{value.name} is summed in its own L1 by the packer, which the compute kernel "
                                     f"cannot read back; push {value.name} and wait for it, or add into a block "
                                     "value (acc = ttl.block.fill(0, ...); acc += ...) and store that", node)
                value.status.read(self.location(node))     # raises when nothing was stored yet
                if value.stored is None:    # a build that runs nothing goes on: the block holds what its pages held
                    return BlockExpression(value.value, value.shape, value.data_format, row_major, value.dfb.tile)
                return BlockExpression(value.stored, value.shape, value.data_format, row_major, value.dfb.tile)
            value.status.read(self.location(node))
            return BlockExpression(value.value, value.shape, value.data_format, row_major, value.dfb.tile)
        raise self.error(f"{self.describe(value)} is not a block or a block expression", node)

    @staticmethod
    def result_format(*operands: BlockExpression) -> DataFormat:
        if any(o.data_format is DataFormat.Float32 for o in operands):
            return DataFormat.Float32
        return DataFormat.Float16_b

    def make(self, name: str, operands: list[BlockExpression], shape, node, params=None, dims=None,
             fmt: DataFormat | None = None, row_major: bool | None = None) -> BlockExpression:
        if name != "typecast":
            integer = next((o for o in operands if o.data_format in _INTEGER_FORMATS), None)
            if integer is not None and name in _COMPARISONS and len(operands) == 2 \
                    and all(o.data_format is DataFormat.UInt32 for o in operands):
                return self.unsigned_comparison(name, *operands, shape, node)
            if integer is not None and name in ("eq", "ne") and len(operands) == 2 \
                    and all(o.data_format is DataFormat.Int32 for o in operands):
                # 0.69 compares int32 blocks by order only: a != b is (a > b) + (a < b)
                differ = self.make("add", [self.make("gt", operands, shape, node),
                                           self.make("lt", operands, shape, node)], shape, node)
                return differ if name == "ne" else \
                    self.make("sub", [self.filled_like(1, differ, node), differ], shape, node)
            if integer is not None:
                name, fmt = self.integer_op(name, operands, integer, node)
        fmt = fmt or self.result_format(*operands)
        self.device_numbers((params or {}).values(), node)
        tile = self.tile_of(name, operands, node)
        if row_major is None:
            row_major = self.layout_of(operands, name, node)
        if row_major:
            # element-wise math on the block's tile-sized pages; a broadcast is of a one-element
            # block, whose element is element 0 of its first page: a scalar broadcast
            self.require_tiled(BlockExpression(None, tuple(shape), fmt, True), _LAYOUT_DEPENDENT.get(name), node)
            tiles = (1, ttl.row_major_tiles(shape))
            dims = (0, 1) if dims is not None else None
        else:
            tiles = device_block_shape(shape)
            if dims is not None:         # a 1-D block's dimension is the column dimension of its IR row
                dims = tuple(d + len(tiles) - len(shape) for d in dims)
        result_type = ttl.block_type(tiles, ttl.tile_type(fmt))
        self.node = node
        op = self.emit(ttl.make_block_op(name, [o.value for o in operands], result_type, params, dims))
        return BlockExpression(op.result, tuple(shape), fmt, row_major, tile)

    def tile_of(self, name: str, operands: list[BlockExpression], node) -> tuple[int, int] | None:
        """The tile shape of an op's result: its operands' (one shape; None when they read no
        block). Tiles smaller than 32x32 take element-wise ops only: a broadcast, reduction,
        transpose or matmul depends on where each element sits in a 32x32 tile."""
        kind = ttl.TILE_OPS[name].kind
        if kind == "matmul":
            return self._matmul_tile(*operands, node)
        read = operands[:1] if kind == "reduce" else operands        # (a reduction's scaler is any tile)
        tiles = {o.tile for o in read if o.tile is not None}
        if len(tiles) > 1:
            shapes = " and ".join(f"{h}x{w}" for h, w in sorted(tiles))
            raise self.error(f"{name} of blocks of {shapes} tiles: element-wise math pairs the elements of tiles of "
                             "one shape; make the buffers like tensors of one tile shape", node)
        tile = next(iter(tiles), None)
        if tile in (None, (32, 32)) or kind in ttl.ELEMENTWISE_KINDS:
            return tile
        if kind in ("bcast", "reduce") and tile[0] <= 16:
            return tile           # one face high: its faces lie where a 32x32 tile's top rows do
        raise self.error(f"{name} of a block of {tile[0]}x{tile[1]} tiles is not supported by tilefold: tiles other "
                         "than 32x32 take element-wise math, and, at most 16 rows high, broadcasts, reductions and "
                         "matmuls as the left operand", node)

    def _matmul_tile(self, a: BlockExpression, b: BlockExpression, node) -> tuple[int, int] | None:
        """The tile shape of ``a @ b``: 32x32, or the left operand's tiles of at most 16 rows and 32
        columns times a right operand of 32x32 tiles (the hardware's tiny-tile matmul)."""
        left, right = a.tile or (32, 32), b.tile or (32, 32)
        if right == (32, 32) and (left == (32, 32) or left[0] <= 16 and left[1] == 32):
            return left
        raise self.error(f"a @ b of blocks of {left[0]}x{left[1]} and {right[0]}x{right[1]} tiles: a matmul takes "
                         "32x32 tiles, or a left operand of tiles 32 wide and at most 16 high with a right operand "
                         "of 32x32 tiles", node)

    def require_computable_tiles(self, block: Block, what: str, node) -> None:
        """A compute kernel computes element-wise on tiles of any shape of fixed-size formats; a
        buffer of block-float tiles other than 32x32 takes only row stores."""
        height, width = block.dfb.tile
        if (height, width) == (32, 32):
            return
        if block.data_format.is_block_float or not block.dfb.is_tiled:
            raise self.error(f"{what}: {block.dfb.name} holds {height}x{width} {block.data_format.ttnn_name} tiles; "
                             "a compute kernel computes on tiles other than 32x32 of bfloat16, float32 or integers "
                             f"(tilefold packs into smaller ones with {block.name}.store_rows(x) / "
                             "accumulate_rows(x) of a one-tile block x; data movement kernels copy them)", node)

    def integer_op(self, name: str, operands: list[BlockExpression], integer: BlockExpression, node):
        """An op of two integer blocks of one format: the SFPU's integer function for it
        (``add_int_tile<Int32>``, ``binary_max_int32_tile`` ...), wrapping around
        as the hardware's words do; anything else on integers is one error."""
        kind = integer.data_format.ttnn_name
        article = f"a{'n' * kind.startswith('i')}"
        if name == "where" and all(o.data_format is integer.data_format for o in operands) \
                and integer.data_format in _INTEGER_ARITHMETIC:
            return name, integer.data_format          # where_tile<Int32> on the integers themselves
        if name == "bcast" and integer.data_format in (DataFormat.Int32, DataFormat.UInt32):
            return name, integer.data_format          # unary_bcast unpacks 32-bit words straight to DST
        op = integer_op_for(name, integer.data_format.value)
        if op is not None and len(operands) == 2:
            other = next((o for o in operands if o.data_format is not integer.data_format), None)
            if other is None:
                return op.name, integer.data_format
            raise self.error(f"{name} of {article} {kind} block and a {other.data_format.ttnn_name} block: "
                             f"convert one with ttl.math.typecast(x, ...) so both have one format", node)
        taken = sorted({o.block_op for o in INTEGER_SFPU_OPS if o.takes(integer.data_format.value)})
        what = ", ".join(taken) + " of two blocks of one format" if taken else "typecast, store and copy"
        if taken and integer.data_format in _INTEGER_ARITHMETIC:
            what += ", and " + ", ".join(_INTEGER_SIGN_OPS)
        raise self.error(f"{name} of {article} {kind} block is not supported by tilefold (integer blocks take {what}); "
                         "convert it with ttl.math.typecast(x, ttnn.float32) first", node)

    def unsigned_comparison(self, name: str, a: BlockExpression, b: BlockExpression, shape, node) -> BlockExpression:
        """A comparison of two uint32 blocks, 1 where it holds and 0 elsewhere: 0.69 compares no
        unsigned words, so ``a > b`` is ``min(max(a, b) - b, 1)`` in its unsigned max / min and
        integer subtract (exact: the difference is never negative), and the others follow from it."""
        def greater(x, y):
            return self.make("min", [self.make("sub", [self.make("max", [x, y], shape, node), y], shape, node),
                                     self.filled_like(1, x, node)], shape, node)

        def negated(x):
            return self.make("sub", [self.filled_like(1, x, node), x], shape, node)

        if name in ("gt", "lt"):
            return greater(a, b) if name == "gt" else greater(b, a)
        if name in ("ge", "le"):
            return negated(greater(b, a) if name == "ge" else greater(a, b))
        differ = self.make("add", [greater(a, b), greater(b, a)], shape, node)
        return differ if name == "ne" else negated(differ)

    def layout_of(self, operands: list[BlockExpression], what: str, node) -> bool:
        """Whether the operands are row-major blocks (all or none: their elements are arranged
        differently, so an element-wise op cannot pair them up)."""
        kinds = {o.row_major for o in operands}
        if len(kinds) > 1:
            raise self.error(f"{what} of a row-major block and a tiled block: their elements are arranged "
                             "differently (rows, or 32x32 tiles); make both buffers like tensors of the same "
                             "layout", node)
        return kinds == {True}

    def require_tiled(self, a: BlockExpression, what: str | None, node) -> None:
        """Refuse an operation that depends on the tile layout (``what``) on a row-major block."""
        if what is not None and a.row_major:
            raise self.error(f"{what} needs tiled blocks: it depends on how the elements sit in 32x32 tiles, and "
                             f"this {_shape_text(a.shape)} block is row-major; use tensors with "
                             "layout=ttnn.TILE_LAYOUT", node)

    def same_shape(self, a: BlockExpression, b: BlockExpression, node, what: str) -> None:
        self.layout_of([a, b], what, node)
        if a.shape != b.shape:
            raise self.error(f"{what}: the operands have shapes {_shape_text(a.shape)} and {_shape_text(b.shape)} "
                             f"(in {_unit(a)}); they must match — broadcast the smaller one with "
                             "ttl.block.broadcast(x, dims=[...], shape=...)", node)

    # -- operators ----------------------------------------------------------------------------

    def device_numbers(self, values, node) -> None:
        """Numbers a kernel combines with blocks are float32 on the device: one beyond its range
        (which would be an infinity there, or no float at all) is an error at the line."""
        for v in values:
            if _number(v) and _beyond_float32(v):
                raise self.error(f"the number {_number_text(v)} is outside float32's range (about ±3.4e38), so the device "
                                 f"would hold {'-' if v < 0 else ''}inf; give a smaller number, or float('inf') "
                                 "if infinity is meant", node)

    def block_binary(self, op: type, left, right, node):
        self.require_compute(node, "block arithmetic")
        self.device_numbers((left, right), node)
        if op is ast.MatMult:
            a, b = self.operand(left, node), self.operand(right, node)
            return self.matmul(a, b, node)
        if op is ast.Pow:
            if not (isinstance(right, int) and not isinstance(right, bool) and right >= 0):
                return self.binary_power(left, right, node)
            a = self.operand(left, node)
            if right == 2:
                return self.make("square", [a], a.shape, node)
            if right == 1:
                return a
            return self.make("power", [a], a.shape, node, {"exponent": float(right)})
        if (_number(left) or _number(right)) and (isinstance(left, Scalar) or isinstance(right, Scalar)):
            raise self.error("a block cannot be combined with a runtime integer", node)
        if op is ast.Mod:
            return self.remainder(left, right, node)
        if op is ast.FloorDiv:
            return self.floor_division(left, right, node)
        if _number(left) or _number(right):
            return self.scalar_binary(op, left, right, node)
        if op not in _OPERATOR_NAMES:
            raise self.error(f"blocks support + - * / // % @ and ** with an integer; not {ast.unparse(node)[:40]}",
                             node)
        return self.block_binary_named(_OPERATOR_NAMES[op], left, right, node)

    def remainder(self, left, right, node):
        """``a % b``: ``remainder_binary_tile``, the sign of ``b`` as Python's ``%``; a number operand is
        a block filled with it (one more DST slot)."""
        left, right = self._blocks_of(left, right, node)
        return self.block_binary_named("remainder", left, right, node)

    def floor_division(self, left, right, node):
        """``a // b``: ``round((a - a % b) / b)``. The quotient of the exact multiple rounds to the
        integer even in a bfloat16 DST, where ``floor(a / b)`` would floor a quotient that rounded up
        to the next integer."""
        left, right = self._blocks_of(left, right, node)
        multiple = self.block_binary_named("sub", left, self.remainder(left, right, node), node)
        quotient = self.block_binary_named("div", multiple, right, node)
        return self.make("round", [quotient], quotient.shape, node, {"decimals": 0})

    def _blocks_of(self, left, right, node) -> tuple:
        """The operands of ``%`` / ``//``, a number as a block like the other operand."""
        return tuple(self.filled_like(v, other, node) if _number(v) else v
                     for v, other in ((left, right), (right, left)))

    def filled_like(self, number, other, node) -> BlockExpression:
        """A block of ``other``'s shape and data format holding ``number`` everywhere."""
        like = self.operand(other, node)
        return self.make("fill", [], like.shape, node, {"value": float(number)}, fmt=like.data_format,
                         row_major=like.row_major)

    def binary_power(self, left, right, node):
        """``a ** b`` with a block exponent, or a number that is no non-negative integer (``x ** 0.5``,
        ``2.0 ** x``): the SFPU's element-wise power of two blocks, a number filling a block of the
        other's shape."""
        if isinstance(right, Scalar) or isinstance(left, Scalar):
            raise self.error("a block cannot be raised to a runtime integer power, nor a runtime integer to a "
                             "block's", node)
        return self.block_binary_named("pow", *self._blocks_of(left, right, node), node)

    def block_binary_named(self, name: str, left, right, node):
        self.require_compute(node, "block arithmetic")
        if _number(left) or _number(right):
            table = {"max": "max_scalar", "min": "min_scalar"}
            block, number = (right, left) if _number(left) else (left, right)
            integer = self.operand(block, node).data_format in _INTEGER_FORMATS
            if name in table and not integer:
                a = self.operand(block, node)
                return self.make(table[name], [a], a.shape, node, {"value": float(number)})
            if name not in _COMPARISONS and name not in table:
                raise self.error(f"{name} of a block and a number is not supported; use a block for both", node)
            # ``x > 0.0``, ``max(idx, 7)`` of integers: the number fills a block like the other
            # operand (one more DST slot)
            left, right = self._blocks_of(left, right, node)
        if isinstance(left, PendingBroadcast) != isinstance(right, PendingBroadcast):
            if isinstance(left, PendingBroadcast):
                b = self.operand(right, node)
                a = self.operand(self.resolve(left, b.shape), node)
            else:
                a = self.operand(left, node)
                b = self.operand(self.resolve(right, a.shape), node)
        else:
            a, b = self.operand(left, node), self.operand(right, node)
        self.same_shape(a, b, node, f"element-wise {name}")
        return self.make(name, [a, b], a.shape, node)

    def scalar_binary(self, op: type, left, right, node):
        block = right if _number(left) else left
        a = self.operand(block, node)
        if a.data_format in _INTEGER_ARITHMETIC and op in (ast.Add, ast.Sub, ast.Mult):
            # ``idx + 1`` on an integer block: the number fills an integer block (fill_tile_int)
            number = left if _number(left) else right
            if isinstance(number, float) and not number.is_integer():
                raise self.error(f"{ast.unparse(node)[:40]}: an {a.data_format.ttnn_name} block combines with "
                                 "whole numbers only", node)
            filled = self.filled_like(number, a, node)
            pair = (filled, a) if _number(left) else (a, filled)
            return self.block_binary_named(_OPERATOR_NAMES[op], *pair, node)
        if op not in _SCALAR_OPS:
            raise self.error(f"a block and a number combine with + - * /; not {ast.unparse(node)[:40]}", node)
        if _number(right):
            a = self.operand(left, node)
            if op is ast.Div and right == 0:
                raise self.error("division of a block by zero", node)
            if op is ast.Div and float(np.float32(right)) == 0:
                raise self.error(f"division of a block by {right:g}, which is zero as a float32 (the device's "
                                 "numbers); the quotient would be inf", node)
            return self.make(_SCALAR_OPS[op], [a], a.shape, node, {"value": float(right)})
        a = self.operand(right, node)
        if op is ast.Add or op is ast.Mult:
            return self.make(_SCALAR_OPS[op], [a], a.shape, node, {"value": float(left)})
        if op is ast.Sub:
            return self.make("rsub_scalar", [a], a.shape, node, {"value": float(left)})
        recip = self.make("recip", [a], a.shape, node)
        return self.make("mul_scalar", [recip], a.shape, node, {"value": float(left)})

    def block_unary(self, name: str, value, node):
        self.require_compute(node, f"ttl.math.{name}")
        a = self.operand(value, node)
        if name in _INTEGER_SIGN_OPS and a.data_format in _INTEGER_ARITHMETIC:
            return self.integer_sign_op(name, a, node)
        return self.make(name, [a], a.shape, node)

    def integer_sign_op(self, name: str, a: BlockExpression, node) -> BlockExpression:
        """``neg`` / ``relu`` / ``abs`` of an integer block from the SFPU's integer functions, on a
        block of zeros (``fill_tile_int``): ``0 - x``, ``max(x, 0)``, ``max(x, 0 - x)`` — wrapping as
        the words do (abs of int32's least value is itself, as in numpy and torch); ``relu`` and
        ``abs`` of an unsigned block are the block."""
        if name == "neg":
            return self.block_binary_named("sub", self.filled_like(0, a, node), a, node)
        if a.data_format is not DataFormat.Int32:
            return a
        other = self.filled_like(0, a, node) if name == "relu" else \
            self.block_binary_named("sub", self.filled_like(0, a, node), a, node)
        return self.block_binary_named("max", a, other, node)

    def matmul(self, a: BlockExpression, b: BlockExpression, node) -> BlockExpression:
        """``a @ b``: (M, K) @ (K, N), or a batch of them — (..., M, K) @ (..., K, N) with the same
        leading (batch) dims, one matrix product per batch index."""
        self.require_tiled(a if a.row_major else b, "a @ b (matmul)", node)
        if len(a.shape) < 2 or len(b.shape) < 2:
            raise self.error(f"a @ b multiplies 2-D blocks or batches of them; the operands have "
                             f"shapes {_shape_text(a.shape)} and {_shape_text(b.shape)}", node)
        if len(a.shape) != len(b.shape) or a.shape[:-2] != b.shape[:-2]:
            a, b = self._matmul_batches(a, b, node)
            a, b = self._batch_broadcast(a, b, node), self._batch_broadcast(b, a, node)
        if a.shape[:-2] != b.shape[:-2]:
            raise self.error(f"a @ b needs the same batch dims on both operands; they have shapes "
                             f"{_shape_text(a.shape)} and {_shape_text(b.shape)} (broadcast one with "
                             "ttl.block.broadcast first)", node)
        if a.shape[-1] != b.shape[-2]:
            raise self.error(f"a @ b needs (M, K) @ (K, N); the operands have shapes {_shape_text(a.shape)} and "
                             f"{_shape_text(b.shape)} (in tiles)", node)
        return self.make("matmul", [a, b], (*a.shape[:-1], b.shape[-1]), node)

    def _batch_broadcast(self, x: BlockExpression, other: BlockExpression, node) -> BlockExpression:
        """``x`` broadcast over the batch dims where it has one index and ``other`` several (a 2-D
        right operand of a batched matmul, as numpy's matmul broadcasts it); ``x`` itself otherwise."""
        dims = tuple(d for d, (n, m) in enumerate(zip(x.shape[:-2], other.shape[:-2])) if n == 1 and m != 1)
        if not dims:
            return x
        return self.make("bcast", [x], (*other.shape[:-2], *x.shape[-2:]), node, dims=dims)

    def _matmul_batches(self, a: BlockExpression, b: BlockExpression, node):
        """An operand of lower rank gets leading dims of size 1 (a (1, M, K) block times a 2-D (K, N)
        one); batch dims that then differ are left for the caller to report (broadcasting over the
        batch is written out with ttl.block.broadcast)."""
        rank = max(len(a.shape), len(b.shape))
        return tuple(x if len(x.shape) == rank else self.reshape(x, (1,) * (rank - len(x.shape)) + tuple(x.shape), node)
                     for x in (a, b))

    # -- ttl.math / ttl.block functions -----------------------------------------------------------

    def block_function(self, fn, args, kwargs, node):
        if fn.namespace == "unsafe":
            return self.unsafe_element(fn, args, kwargs, node)
        if fn.namespace == "" and fn.name in RAW_ELEMENT:
            return self.raw_element(fn, args, kwargs, node)
        if fn.namespace == "block" and fn.name == "subview":
            return self.block_subview(args, kwargs, node)
        self.require_compute(node, f"{fn.qualname}")
        self.device_numbers((*args, *kwargs.values()), node)
        name = fn.name
        aliases = _KEYWORD_ALIASES.get(name, {})
        kwargs = {aliases.get(k, k): v for k, v in kwargs.items()}
        if name == "exp" and kwargs:
            return self.exp_options(fn, args, dict(kwargs), node)
        if name in UNARY:
            self._arity(fn, args, kwargs, 1, node)
            return self.block_unary(UNARY[name], args[0], node)
        if name in BINARY:
            self._arity(fn, args, kwargs, 2, node)
            return self.block_binary_named(BINARY[name], args[0], args[1], node)
        if name in ARITHMETIC:
            self._arity(fn, args, kwargs, 2, node)
            return self.block_binary(ARITHMETIC[name], args[0], args[1], node)
        if name in PARAMETRIC:
            return self.parametric(fn, args, kwargs, node)
        handler = getattr(self, f"fn_{name}")
        return handler(fn, args, kwargs, node)

    def exp_options(self, fn, args, kwargs, node):
        """``ttl.math.exp(x, *, approx=False, scale=None, skip_clamp_check=False, iterations=8)`` (TT-Lang
        main's keywords, ``exp_tile``'s template arguments): ``scale`` computes exp(scale * x) on the
        SFPU (the precise exp: the scale a bfloat16 the call multiplies in; the approximate one: a
        float32 in ``exp_tile_init``'s template); ``approx=True`` the SFPU's approximate exp
        (``exp_tile<true>``, its input clamped at -88.5 / scale); the precise exp clamps its input as
        ``skip_clamp_check=True`` would leave unclamped only where the result underflows anyway."""
        iterations = kwargs.pop("iterations", 8)
        if iterations != 8 or isinstance(iterations, bool):
            # TT-Lang's SFPU loop count over a tile's face rows: 8, the whole tile, is the only one it takes
            raise self.error(f"{fn.qualname} iterations must be 8, got {iterations!r}", node)
        approx = kwargs.pop("approx", False)
        if not isinstance(approx, bool):
            raise self.error(f"{fn.qualname}(approx=...) takes True or False", node)
        if not isinstance(kwargs.pop("skip_clamp_check", False), bool):
            raise self.error(f"{fn.qualname}(skip_clamp_check=...) takes True or False", node)
        scale = kwargs.pop("scale", None)
        self._arity(fn, args, kwargs, 1, node)
        if scale is not None and not _number(scale):
            raise self.error(f"{fn.qualname}(scale=...) must be a compile-time number, not {self.describe(scale)}",
                             node)
        if approx:
            return self.exp_approx(fn, args[0], 1.0 if scale is None else scale, node)
        if scale is None:
            return self.block_unary(UNARY["exp"], args[0], node)
        a = self.operand(args[0], node)
        bits = int(np.asarray(scale, np.float32).astype(ml_dtypes.bfloat16).view(np.uint16))
        return self.make("exp_scaled", [a], a.shape, node, {"vector_mode": 4, "scale_bf16_bits": bits})

    def exp_approx(self, fn, value, scale, node):
        """``exp_tile<true>`` after ``exp_tile_init<true, scale>()``: Schraudolph's exponential of
        ``scale * x`` on the SFPU, the scale a float32 the init folds into its constants (its clamp
        of the input, -88.5 / scale, is a lower bound only for a positive scale)."""
        with np.errstate(over="ignore"):
            s = np.float32(scale)
        if not (np.isfinite(s) and s > 0):
            raise self.error(f"{fn.qualname}(approx=True, scale={scale!r}): the approximate exp takes a positive "
                             "finite scale (exp_tile_init clamps the input at -88.5 / scale); scale the input "
                             "(ttl.math.exp(x * s, approx=True)) or use the precise exp", node)
        a = self.operand(value, node)
        return self.make("exp_approx", [a], a.shape, node, {"scale": float(s)})

    def parametric(self, fn, args, kwargs, node):
        """``ttl.math.elu(x, alpha)``, ``softplus(x, beta, beta_reciprocal, threshold)`` ...: one SFPU call
        whose parameters are compile-time numbers (a missing reciprocal is computed)."""
        spec = PARAMETRIC[fn.name]
        b = self._kw(fn, args, kwargs, ("expr", *(p for p, _ in spec)), node)
        a = self.operand(b.get("expr"), node)
        params = {}
        for p, default in spec:
            v = b.get(p, default)
            if v is None and p.endswith(("_recip", "_reciprocal")):
                source = params[p.removesuffix("_recip").removesuffix("_reciprocal")]
                if source == 0:
                    raise self.error(f"ttl.math.{fn.name}(): {p} of zero", node)
                v = 1.0 / source
            if not _number(v):
                raise self.error(f"ttl.math.{fn.name}(): {p} must be a compile-time number, not "
                                 f"{self.describe(v)}", node)
            params[p] = float(v)
            source = p.removesuffix("_recip").removesuffix("_reciprocal")
            if source != p and b.get(p) is not None and not math.isclose(v * params[source], 1.0, rel_tol=1e-3):
                from tilefold.errors import warn_at

                # the device takes the reciprocal as given: softplus is beta_reciprocal * log(1 + exp(beta * x))
                warn_at(f"ttl.math.{fn.name}(): {p}={v!r} is not 1/{source} ({source}={params[source]!r}); the "
                        f"device scales the result by {p} as given — pass {source}'s reciprocal, or leave {p} out",
                        self.location(node))
        return self.make(fn.name, [a], a.shape, node, params)

    def fn_mask(self, fn, args, kwargs, node, fill: float = 0.0):
        """``ttl.block.mask(x, m)``: 0 where ``m`` is 1, else ``x`` (``mask_posinf``: +inf there)."""
        b = self._kw(fn, args, kwargs, ("expr", "mask_blk"), node, required=("expr", "mask_blk"))
        a, m = self.operand(b.get("expr"), node), self.operand(b.get("mask_blk"), node)
        self.same_shape(a, m, node, f"ttl.block.{fn.name}")
        ones = self.make("fill", [], m.shape, node, {"value": 1.0}, row_major=m.row_major)
        masked = self.make("eq", [m, ones], a.shape, node)
        value = self.make("fill", [], a.shape, node, {"value": fill}, fmt=a.data_format, row_major=a.row_major)
        return self.make("where", [masked, value, a], a.shape, node, fmt=a.data_format)

    def fn_mask_posinf(self, fn, args, kwargs, node):
        return self.fn_mask(fn, args, kwargs, node, fill=float("inf"))

    def fn_threshold(self, fn, args, kwargs, node):
        """``ttl.math.threshold(x, threshold, value)``: ``value`` where ``x > threshold``, else ``x``."""
        b = self._kw(fn, args, kwargs, ("expr", "threshold", "value"), node, required=("expr", "threshold", "value"))
        a = self.operand(b.get("expr"), node)
        t, v = b.get("threshold"), b.get("value")
        if not (_number(t) and _number(v)):
            raise self.error("ttl.math.threshold(x, threshold, value) needs numbers for threshold and value", node)
        limit = self.make("fill", [], a.shape, node, {"value": float(t)}, row_major=a.row_major)
        above = self.make("gt", [a, limit], a.shape, node)
        value = self.make("fill", [], a.shape, node, {"value": float(v)}, fmt=a.data_format, row_major=a.row_major)
        return self.make("where", [above, value, a], a.shape, node, fmt=a.data_format)

    def fn_typecast(self, fn, args, kwargs, node):
        """``ttl.math.typecast(x, dtype)``: the block converted to another data format on the SFPU
        (``typecast_tile``); later ops and the store see the new format. ``dtype`` is a torch dtype,
        a ttnn dtype or a name (``"float32"``); the pairs are :data:`tilefold.ir.sfpu.TYPECASTS`."""
        b = self._kw(fn, args, kwargs, ("expr", "dtype"), node)
        if "dtype" not in b:
            raise self.error(f"{fn.qualname}(x, dtype) needs the target dtype (torch.float32, ttnn.bfloat16, ...)",
                             node)
        a = self.operand(b.get("expr"), node)
        dtype = b["dtype"]
        try:
            target = data_format(dtype)        # torch dtypes by their name (torch.float32)
        except (LayoutError, TypeError, ValueError):
            raise self.error(f"{fn.qualname}(): unknown dtype {_dtype_text(dtype)}; use torch.float32 / "
                             "torch.bfloat16, ttnn.float32 / ttnn.bfloat16 or 'float32' / 'bfloat16'", node) from None
        if target is a.data_format:
            return a
        pair = (a.data_format.value, target.value)
        if pair not in TYPECASTS:
            raise self.error(f"{fn.qualname}() from {a.data_format.ttnn_name} to {target.ttnn_name} is not supported: "
                             "tilefold converts between the float formats (float32, bfloat16, bfloat8_b, bfloat4_b), "
                             "from them to int32 and uint32, from int32 and uint32 to them, from uint32 to uint16 "
                             "and uint8, and from uint16 and uint8 to uint32", node)
        if self.options.get("fp32_dest_acc_en") is False and any(f in INTEGER_32 for f in pair):
            raise self.error(f"{fn.qualname}() from {a.data_format.ttnn_name} to {target.ttnn_name} needs a 32-bit "
                             "DST; drop fp32_dest_acc_en=False from the operation", node)
        return self.make("typecast", [a], a.shape, node, fmt=target)

    def _arity(self, fn, args, kwargs, n: int, node, allowed: tuple[str, ...] = ()) -> None:
        unknown = set(kwargs) - set(allowed)
        if unknown:
            raise self.error(f"{fn.qualname}() got unexpected keyword(s) {', '.join(sorted(unknown))}",
                             node)
        if len(args) != n:
            raise self.error(f"{fn.qualname}() takes {n} positional argument(s), got {len(args)}", node)

    def _kw(self, fn, args, kwargs, names: tuple[str, ...], node, required: tuple[str, ...] = ()) -> dict:
        """Bind positional and keyword arguments to ``names``; each of ``required`` must be given."""
        if len(args) > len(names):
            raise self.error(f"{fn.qualname}() takes at most {len(names)} arguments", node)
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise self.error(f"{fn.qualname}() got an unexpected keyword {k!r}", node)
            if k in bound:
                raise self.error(f"{fn.qualname}() got {k!r} twice", node)
            bound[k] = v
        missing = [k for k in required if k not in bound]
        if missing:
            raise self.error(f"{fn.qualname}({', '.join(names)}) is missing {', '.join(map(repr, missing))}", node)
        return bound

    def fn_max(self, fn, args, kwargs, node):
        self._arity(fn, args, kwargs, 2, node)
        return self.block_binary_named("max", args[0], args[1], node)

    def fn_min(self, fn, args, kwargs, node):
        self._arity(fn, args, kwargs, 2, node)
        return self.block_binary_named("min", args[0], args[1], node)

    def fn_clamp(self, fn, args, kwargs, node):
        b = self._kw(fn, args, kwargs, ("expr", "min", "max"), node)
        a = self.operand(b.get("expr"), node)
        lo, hi = b.get("min"), b.get("max")
        if not (_number(lo) and _number(hi)):
            raise self.error("ttl.math.clamp(x, min, max) needs numbers for min and max", node)
        return self.make("clamp", [a], a.shape, node, {"min": float(lo), "max": float(hi)})

    def fn_hardtanh(self, fn, args, kwargs, node):
        # min_val / max_val: TT-Lang 1.1's names of min / max
        spelled = {{"min_val": "min", "max_val": "max"}.get(k, k): v for k, v in kwargs.items()}
        if len(spelled) < len(kwargs):
            raise self.error("ttl.math.hardtanh takes min or min_val (max or max_val), not both", node)
        b = self._kw(fn, args, spelled, ("expr", "min", "max"), node)
        return self.fn_clamp(fn, [b.get("expr"), b.get("min", -1.0), b.get("max", 1.0)], {}, node)

    def fn_pow(self, fn, args, kwargs, node):
        b = self._kw(fn, args, kwargs, ("expr", "exponent"), node, required=("expr", "exponent"))
        return self.block_binary(ast.Pow, b.get("expr"), b.get("exponent"), node)

    def fn_rsub(self, fn, args, kwargs, node):
        b = self._kw(fn, args, kwargs, ("expr", "value"), node, required=("expr", "value"))
        return self.scalar_binary(ast.Sub, b.get("value"), b.get("expr"), node)

    def fn_relu_max(self, fn, args, kwargs, node):
        b = self._kw(fn, args, kwargs, ("expr", "upper_limit"), node, required=("expr", "upper_limit"))
        return self.block_unary("relu", self.block_binary_named("min", b["expr"], b["upper_limit"], node), node)

    def fn_relu_min(self, fn, args, kwargs, node):
        b = self._kw(fn, args, kwargs, ("expr", "lower_limit"), node, required=("expr", "lower_limit"))
        return self.block_unary("relu", self.block_binary_named("max", b["expr"], b["lower_limit"], node), node)

    def fn_where(self, fn, args, kwargs, node):
        names = ("condition", "true_value", "false_value")
        b = self._kw(fn, args, kwargs, names, node, required=names)
        ops = [self.operand(b[k], node) for k in names]
        self.same_shape(ops[0], ops[1], node, "ttl.math.where")
        self.same_shape(ops[0], ops[2], node, "ttl.math.where")
        return self.make("where", ops, ops[0].shape, node, fmt=self.result_format(ops[1], ops[2]))

    def fn_matmul(self, fn, args, kwargs, node):
        """``ttl.matmul(lhs, rhs, transpose_rhs=False)``: ``lhs @ rhs``; with ``transpose_rhs`` the right
        operand is given as (N, K) and is transposed first (its tiles, and each tile's elements). The
        older ``ttl.math.matmul(lhs, rhs, out_blk)`` names the block the result is stored into; it is
        only checked against the result's shape. ``dtype=`` gives the product's data format (as
        ``ttl.math.typecast`` of it: with a 32-bit DST a float32 product keeps DST's precision)."""
        if len(args) > 3:
            raise self.error(f"{fn.qualname}(lhs, rhs, *, transpose_rhs=False) takes two operands", node)
        out = args[2] if len(args) == 3 else kwargs.pop("out", None)
        dtype = kwargs.pop("dtype", None)
        b = self._kw(fn, args[:2], kwargs, ("lhs", "rhs", "transpose_rhs"), node)
        if "lhs" not in b or "rhs" not in b:
            raise self.error(f"{fn.qualname}(lhs, rhs) needs both operands", node)
        flag = b.get("transpose_rhs", False)
        if not isinstance(flag, bool):
            raise self.error(f"{fn.qualname}(): transpose_rhs must be True or False when the kernel is built", node)
        a, r = self.operand(b["lhs"], node), self.operand(b["rhs"], node)
        if flag:
            self.require_tiled(r, fn.qualname, node)
            if len(r.shape) != 2:
                raise self.error(f"{fn.qualname}(transpose_rhs=True) needs a 2-D right operand, not "
                                 f"{_shape_text(r.shape)}", node)
            r = self.make("transpose", [r], (r.shape[1], r.shape[0]), node)
        product = self.matmul(a, r, node)
        if out is not None:
            if not isinstance(out, Block):
                raise self.error(f"{fn.qualname}(lhs, rhs, out): out is the block the product is stored into, not "
                                 f"{self.describe(out)}", node)
            if tuple(out.dfb.shape) != tuple(product.shape):
                raise self.error(f"{fn.qualname}(): the product is {_shape_text(product.shape)} but {out.name} is "
                                 f"{_shape_text(out.dfb.shape)}", node)
        if dtype is not None:
            return self.fn_typecast(fn, [product, dtype], {}, node)
        return product

    def fn_transpose(self, fn, args, kwargs, node):
        """``ttl.transpose(x)``; the older ``ttl.transpose(x, out_blk)`` names the block the result is
        stored into, which is only checked against the result's shape."""
        out = kwargs.pop("out", None)
        if out is None and len(args) == 2:
            out, args = args[1], args[:1]
        self._arity(fn, args, kwargs, 1, node)
        a = self.operand(args[0], node)
        self.require_tiled(a, fn.qualname, node)
        if len(a.shape) < 2:
            raise self.error(f"{fn.qualname} needs a block of at least 2 dimensions, not {_shape_text(a.shape)}", node)
        shape = (*a.shape[:-2], a.shape[-1], a.shape[-2])     # each batch index's matrix transposed
        if out is not None:
            if not isinstance(out, Block):
                raise self.error(f"{fn.qualname}(x, out): out is the block the result is stored into, not "
                                 f"{self.describe(out)}", node)
            if tuple(out.dfb.shape) != shape:
                raise self.error(f"{fn.qualname}(): the transpose of a {_shape_text(a.shape)} block is "
                                 f"{_shape_text(shape)} but {out.name} is {_shape_text(out.dfb.shape)}", node)
        return self.make("transpose", [a], shape, node)

    def _reshape_dims(self, fn, args, kwargs, node) -> tuple[BlockExpression, list]:
        b = self._kw(fn, args, kwargs, ("expr", "dims"), node) if "dim" not in kwargs else \
            self._kw(fn, args, {("dims" if k == "dim" else k): v for k, v in kwargs.items()}, ("expr", "dims"), node)
        a = self.operand(b.get("expr"), node)
        dims = b.get("dims")
        if isinstance(dims, int) and not isinstance(dims, bool):
            dims = [dims]
        if not isinstance(dims, (list, tuple)) or not dims or \
                not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
            raise self.error(f"ttl.block.{fn.name}(x, dims=[...]) needs a non-empty list of dimension indices", node)
        return a, list(dims)

    def reshape(self, a: BlockExpression, shape: tuple[int, ...], node) -> BlockExpression:
        """The same tiles under another shape (sizes of 1 added or removed): a ``ttl.reshape``."""
        if a.row_major:            # the same rows when the last dimension stays
            if shape[-1] != a.shape[-1] or ttl.row_major_tiles(shape) != ttl.row_major_tiles(a.shape):
                self.require_tiled(a, "a squeeze or unsqueeze of the last dimension", node)
            return BlockExpression(a.value, shape, a.data_format, True, a.tile)
        source = a.value
        while isinstance(source.owner, ttl.ReshapeOp):
            source = source.owner.input
        if tuple(source.type.get_shape()) == device_block_shape(shape):
            return BlockExpression(source, shape, a.data_format, tile=a.tile)
        self.node = node
        op = self.emit(ttl.ReshapeOp(source, device_block_shape(shape)))
        return BlockExpression(op.result, shape, a.data_format, tile=a.tile)

    def fn_squeeze(self, fn, args, kwargs, node):
        """``ttl.block.squeeze(x, dims=[0])``: remove dimensions of size 1 (indices of ``x``'s shape)."""
        a, dims = self._reshape_dims(fn, args, kwargs, node)
        rank = len(a.shape)
        drop = set()
        for d in dims:
            if not -rank <= d < rank:
                raise self.error(f"ttl.block.squeeze: dimension {d} is out of range for a block of shape "
                                 f"{_shape_text(a.shape)}", node)
            if a.shape[d % rank] != 1:
                raise self.error(f"ttl.block.squeeze: dimension {d} of a {_shape_text(a.shape)} block has "
                                 f"{a.shape[d % rank]} tiles; only a dimension of size 1 can be removed", node)
            drop.add(d % rank)
        shape = tuple(s for i, s in enumerate(a.shape) if i not in drop)
        if not shape:
            raise self.error(f"ttl.block.squeeze would remove every dimension of a {_shape_text(a.shape)} block", node)
        return self.reshape(a, shape, node)

    def fn_unsqueeze(self, fn, args, kwargs, node):
        """``ttl.block.unsqueeze(x, dims=[0])``: insert dimensions of size 1 (indices of the result's shape)."""
        a, dims = self._reshape_dims(fn, args, kwargs, node)
        rank = len(a.shape) + len(dims)
        positions = set()
        for d in dims:
            if not -rank <= d < rank:
                raise self.error(f"ttl.block.unsqueeze: dimension {d} is out of range for a result of {rank} "
                                 "dimensions", node)
            positions.add(d % rank)
        if len(positions) != len(dims):
            raise self.error(f"ttl.block.unsqueeze: dims {dims} name the same position twice", node)
        shape = list(a.shape)
        for p in sorted(positions):
            shape.insert(p, 1)
        return self.reshape(a, tuple(shape), node)

    def _target_shape(self, fn, bound: dict, node, rank_of=None) -> tuple[int, ...]:
        shape = bound.get("shape")
        out = bound.get("out_blk")
        if shape is None and isinstance(out, Block):
            shape = out.shape
        if shape is None:
            raise self.error(f"{fn.qualname}() needs the result shape: shape=(rows, cols) or the "
                             "output block", node)
        try:
            shape = tuple(int(s) for s in shape)
        except (TypeError, ValueError):
            raise self.error(f"{fn.qualname}(shape={shape!r}): shape is a tuple of compile-time "
                             "integers", node) from None
        if not shape or any(s <= 0 for s in shape):
            raise self.error(f"{fn.qualname}(shape={shape!r}): sizes must be positive, at least "
                             "one dimension", node)
        return shape

    def _dims_exist(self, what: str, kind: str, dims, shape, node) -> None:
        """A dimension index outside the block (``dims=[1]`` on a 1-D block) is an error naming it."""
        for d in [dims] if isinstance(dims, int) else (dims if isinstance(dims, (list, tuple)) else []):
            if isinstance(d, int) and not isinstance(d, bool) and not -len(shape) <= d < len(shape):
                raise self.error(f"{what}: Invalid {kind} dimension {d}; the block is {len(shape)}-D (shape "
                                 f"{_shape_text(shape)} in tiles) and has no dimension {d}", node)
        if isinstance(dims, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
            seen = [d % len(shape) for d in dims]
            twice = next((d for i, d in enumerate(dims) if seen[i] in seen[:i]), None)
            if twice is not None:
                raise self.error(f"{what}: dims={list(dims)} names dimension {twice % len(shape)} twice; list each "
                                 f"{kind} dimension once", node)

    @staticmethod
    def _normalize_dims(dims, rank: int):
        if isinstance(dims, int):
            dims = [dims]
        out = []
        for d in dims:
            if not isinstance(d, int) or not -rank <= d < rank:
                return None
            out.append(d % rank)
        return sorted(set(out))

    def fn_fill(self, fn, args, kwargs, node):
        # fill(value, shape=...), fill(out_blk, value), fill(value, out_blk) or fill(expr, value): the
        # shape (and data format and layout) of a block or block expression
        values = list(args)
        bound: dict = {}
        for v in values:
            if isinstance(v, Block):
                bound["out_blk"] = v
            elif isinstance(v, BlockExpression):
                bound["like"] = v
            elif _number(v):
                bound["value"] = v
            elif isinstance(v, tuple):
                bound["shape"] = v
            elif isinstance(v, Scalar):
                raise self.error(f"{fn.prefix}fill(value, ...): the value fills the tiles when the kernel is built, "
                                 f"and {ast.unparse(node.args[values.index(v)])[:40] if node.args else 'this'} is "
                                 "only known on the device (compute kernels take numbers known when they are built: "
                                 "constants, operation arguments)", node)
            else:
                raise self.error(f"{fn.prefix}fill: unexpected argument {self.describe(v)}", node)
        for k, v in kwargs.items():
            if k not in ("value", "shape", "out_blk", "dtype", "tile", "layout"):
                raise self.error(f"{fn.prefix}fill() got an unexpected keyword {k!r}", node)
            bound[k] = v
        layout = bound.pop("layout", None)
        if layout is not None and "TILE" not in str(getattr(layout, "name", layout)).upper():
            raise self.error(f"{fn.prefix}fill(layout={layout!r}): a compute kernel fills tiles; give "
                             "layout=ttnn.TILE_LAYOUT (the default)", node)
        tile = bound.pop("tile", None)
        if tile is not None and tuple(getattr(tile, "tile_shape", tile)) != (32, 32):
            raise self.error(f"{fn.prefix}fill(tile={tuple(getattr(tile, 'tile_shape', tile))}): compute on tiles other "
                             "than 32x32 is not supported by tilefold yet", node)
        like = bound.pop("like", None)
        if like is not None and "out_blk" not in bound and "shape" not in bound:
            bound["shape"] = like.shape
        fmt = bound["out_blk"].dfb.data_format if "out_blk" in bound else (
            like.data_format if like is not None else DataFormat.Float16_b)
        if isinstance(bound.get("dtype"), DataFormat):
            fmt = bound["dtype"]
        elif bound.get("dtype") is not None:
            try:
                fmt = data_format(getattr(bound["dtype"], "name", str(bound["dtype"])).lower().removeprefix("ttnn."))
            except Exception:       # noqa: BLE001 - reported below
                raise self.error(f"{fn.prefix}fill(dtype={bound['dtype']!r}): give a block's dtype or a "
                                 "TT-NN data type", node) from None
        if not _number(bound.get("value")):
            raise self.error(f"{fn.prefix}fill needs a number to fill with", node)
        shape = self._target_shape(fn, bound, node)
        out = bound.get("out_blk")
        row_major = (not out.dfb.is_tiled) if isinstance(out, Block) else (like is not None and like.row_major)
        return self.make("fill", [], shape, node, {"value": float(bound["value"])}, fmt=fmt, row_major=row_major)

    def _shaped_arguments(self, fn, args, kwargs, node) -> dict:
        """Bind ``(expr, [out_blk | dims | shape | scaler]...)`` by the kind of each positional value."""
        if not args:
            raise self.error(f"{fn.qualname}() needs a block expression", node)
        bound: dict = {"expr": args[0]}
        for v in args[1:]:
            if isinstance(v, Block) and "out_blk" not in bound and fn.name == "broadcast":
                key = "out_blk"
            elif isinstance(v, Block) and "scaler" in bound and "out_blk" not in bound:
                key = "out_blk"         # reduce_sum(x, scaler_blk, out_blk, dims=...)
            elif isinstance(v, (Block, BlockExpression)):
                key = "scaler"
            elif isinstance(v, list) or (isinstance(v, int) and not isinstance(v, bool)):
                key = "dims"
            elif isinstance(v, tuple):
                key = "shape" if "dims" in bound or fn.name != "broadcast" or len(args) > 2 else "dims"
            else:
                raise self.error(f"{fn.qualname}(): unexpected argument {self.describe(v)}", node)
            if key in bound:
                raise self.error(f"{fn.qualname}(): {key} given twice", node)
            bound[key] = v
        for k, v in kwargs.items():
            if k not in ("dims", "shape", "out_blk", "scaler"):
                raise self.error(f"{fn.qualname}() got an unexpected keyword {k!r}", node)
            if k in bound:
                raise self.error(f"{fn.qualname}(): {k} given twice", node)
            bound[k] = v
        return bound

    def fn_broadcast(self, fn, args, kwargs, node):
        bound = self._shaped_arguments(fn, args, kwargs, node)
        if bound.get("shape") is None and not isinstance(bound.get("out_blk"), Block):
            return PendingBroadcast(fn, bound, node)     # its shape is the other operand's, or the store's
        return self._broadcast(fn, bound, node)

    def resolve(self, value, shape):
        """A broadcast written without its result shape, taking ``shape``; anything else as it is."""
        if isinstance(value, PendingBroadcast):
            return self._broadcast(value.fn, {**value.bound, "shape": tuple(shape)}, value.node)
        return value

    def _broadcast(self, fn, bound, node):
        a = self.operand(bound["expr"], node)
        target = self._target_shape(fn, bound, node)
        if a.row_major and math.prod(a.shape) != 1:
            self.require_tiled(a, f"{fn.prefix}broadcast of a block of {math.prod(a.shape)} elements (only a "
                                  "one-element block broadcasts the same in either layout)", node)
        out = bound.get("out_blk")
        if isinstance(out, Block) and out.dfb.is_tiled == a.row_major:
            self.layout_of([a, BlockExpression(None, out.shape, out.data_format, not out.dfb.is_tiled)],
                           f"{fn.prefix}broadcast", node)
        if len(target) != len(a.shape):
            raise self.error(f"{fn.prefix}broadcast: the block has {len(a.shape)} dimensions but the target "
                             f"shape {_shape_text(target)} has {len(target)}", node)
        self._dims_exist(f"{fn.prefix}broadcast", "broadcast", bound.get("dims"), a.shape, node)
        dims = self._normalize_dims(bound.get("dims"), len(a.shape)) if bound.get("dims") is not None else None
        if not dims:
            raise self.error(f"{fn.prefix}broadcast needs dims=[...] naming the dimensions to broadcast "
                             f"(indices of a {len(a.shape)}-D block)", node)
        for d in dims:
            if a.shape[d] != 1:
                raise self.error(f"{fn.prefix}broadcast along dimension {d}: the block has {a.shape[d]} tiles "
                                 "there; only a dimension of size 1 can be broadcast", node)
        for d, (s, t) in enumerate(zip(a.shape, target)):
            if d not in dims and s != t:
                raise self.error(f"{fn.prefix}broadcast: dimension {d} is {s} in the block but {t} in the "
                                 "target shape and is not broadcast", node)
        return self.make("bcast", [a], target, node, dims=tuple(dims))

    def _reduce(self, kind: str, fn, args, kwargs, node):
        bound = self._shaped_arguments(fn, args, kwargs, node)
        a = self.operand(bound["expr"], node)
        self.require_tiled(a, f"ttl.math.{kind}", node)
        operands = [a]
        if bound.get("scaler") is not None:
            # a block (or expression) whose first tile the hardware's reduce reads as its scaler
            scaler = self.operand(self.resolve(bound["scaler"], (1,) * len(a.shape)), node)
            self.require_tiled(scaler, f"ttl.math.{kind} with a scaler block", node)
            if math.prod(scaler.shape) != 1:
                raise self.error(f"ttl.math.{kind}: the scaler block is {_shape_text(scaler.shape)} tiles; it must "
                                 "be one tile (the reduce reads the first row of each of its faces)", node)
            operands.append(scaler)
        out = bound.get("out_blk")
        if out is not None and not isinstance(out, Block):
            raise self.error(f"ttl.math.{kind}: the output argument must be a block", node)
        rank = len(a.shape)
        self._dims_exist(f"ttl.math.{kind}", "reduction", bound.get("dims"), a.shape, node)
        dims = self._normalize_dims(bound.get("dims"), rank) if bound.get("dims") is not None else None
        if not dims:
            raise self.error(f"ttl.math.{kind} needs dims=[...] naming the dimensions to reduce (indices of a "
                             f"{rank}-D block)", node)
        if not ({rank - 1, rank - 2} & set(dims)) and bound.get("scaler") is not None:
            raise self.error(f"ttl.math.{kind} over batch dims {dims} only combines whole tiles, which reads no "
                             "scaler; leave the scaler out (or multiply the result by it)", node)
        result = tuple(1 if d in dims else s for d, s in enumerate(a.shape))
        if bound.get("shape") is not None or out is not None:
            shape = self._target_shape(fn, bound, node)
            if shape != result:
                raise self.error(f"ttl.math.{kind}: reducing a {_shape_text(a.shape)} block over dims {dims} gives "
                                 f"{_shape_text(result)}, not {_shape_text(shape)}", node)
        if not ({rank - 1, rank - 2} & set(dims)):
            return self._reduce_batch(kind, a, dims, result, node)
        return self.make(kind, operands, result, node, dims=tuple(dims), fmt=a.data_format, row_major=False)

    def _reduce_batch(self, kind: str, a: BlockExpression, dims: list[int], result: tuple, node) -> BlockExpression:
        """A reduction over leading (batch) dims only: the tiles at each position of the other dims
        combined element-wise (``+`` or ``max``), as TT-Lang reduces whole tiles before it reduces
        inside them; the slices of ``a`` along ``dims`` are summed (or maxed) one after another."""
        self.node = node
        parts = []
        for index in itertools.product(*(range(a.shape[d]) if d in dims else (0,) for d in range(len(a.shape)))):
            op = self.emit(ttl.BlockSliceOp(a.value, [self.scalars.constant(i) for i in index], result))
            parts.append(BlockExpression(op.result, result, a.data_format, False, a.tile))
        total = parts[0]
        for part in parts[1:]:
            total = self.make("add" if kind == "reduce_sum" else "max", [total, part], result, node)
        return total

    def fn_reduce_sum(self, fn, args, kwargs, node):
        return self._reduce("reduce_sum", fn, args, kwargs, node)

    def fn_reduce_max(self, fn, args, kwargs, node):
        return self._reduce("reduce_max", fn, args, kwargs, node)

    # -- store --------------------------------------------------------------------------------

    def store(self, block: Block, value, node) -> None:
        self.require_compute(node, f"{block.name}.store()")
        self.require_computable_tiles(block, f"{block.name}.store()", node)
        if isinstance(value, Block) and value is block:
            raise self.error(f"{block.name}.store({block.name}) stores a block into itself", node)
        if _number(value):
            raise self.error(f"{block.name}.store() takes a block expression; for a constant use "
                             f"ttl.math.fill({value}, shape={block.shape})", node)
        v = self.operand(self.resolve(value, block.shape), node)
        if v.shape != block.shape and _strip_leading_ones(v.shape) == _strip_leading_ones(block.shape):
            # the same tiles with leading dimensions of size 1 added or dropped (a (1, 1) tile into a
            # (1, 1, 1) block of a batched tensor's buffer)
            v = self.reshape(v, tuple(block.shape), node)
        if v.tile not in (None, block.dfb.tile) and block.dfb.is_tiled and not v.row_major:
            raise self.error(f"{block.name}.store(): the expression is of {v.tile[0]}x{v.tile[1]} tiles but "
                             f"{block.dfb.name} holds {block.dfb.tile[0]}x{block.dfb.tile[1]} tiles; store into a "
                             f"buffer of the same tile shape (rows of one 32x32 tile go into smaller tiles with "
                             f"{block.name}.store_rows(x))", node)
        if v.shape != block.shape:
            raise self.error(f"{block.name}.store(): the expression has shape {_shape_text(v.shape)} but the block "
                             f"is {_shape_text(block.shape)} (in {_unit(v)}); they must match", node)
        self.layout_of([v, BlockExpression(None, block.shape, block.data_format, not block.dfb.is_tiled)],
                       f"{block.name}.store()", node)
        if v.data_format is not block.data_format and (
                v.data_format in _INTEGER_FORMATS or block.data_format in _INTEGER_FORMATS):
            raise self.error(f"{block.name}.store(): the value is {v.data_format.ttnn_name} but the block is "
                             f"{block.data_format.ttnn_name}; convert with ttl.math.typecast(x, "
                             f"ttnn.{block.data_format.ttnn_name}) first", node)
        self.check_position(block, node)
        block.status.store(self.location(node))
        if block.accumulator is not None:
            self.accumulator_assign(block.accumulator, v, node)
            return
        if block.acquired == "wait":
            if block.dfb.backing is not None:
                self.store_into_shard(block, v, node)
                return
            # the waited block's value is replaced: held in a buffer of its own until the block's pop
            block.accumulator = self.make_accumulator(block.name, v, node)
            return
        self.node = node
        self.emit(ttl.StoreOp(v.value, block.value))
        block.stored, block.summed_in_l1 = v.value, False

    def store_row_prefix(self, block: Block, value, node, accumulate: bool) -> None:
        """``block.store_rows(x)`` / ``block.accumulate_rows(x)``: the first rows of the one 32x32
        tile ``x`` (16 values a row, in DST's order: face 0's rows, then face 1's ...) as many as the
        reserved block's tiles (32 wide) hold, packed into it with ``pack_rows`` (added to what it
        holds with the packer's L1 accumulation). A block of one 16x32 tile gets the tile's top
        half; one of 1x32 tiles the values in DST's order."""
        call = f"{block.name}.{'accumulate_rows' if accumulate else 'store_rows'}()"
        self.require_compute(node, call)
        if block.acquired != "reserve":
            raise self.error(f"{call} stores into a block from reserve(); {block.name} was obtained with wait()", node)
        height, width = block.dfb.tile
        if not block.dfb.is_tiled or width != 32:
            what = "row-major pages" if not block.dfb.is_tiled else f"{height}x{width} tiles"
            raise self.error(f"{call}: {block.dfb.name} holds {what}; rows of a tile go into tiles 32 wide "
                             "(1x32 ... 32x32)", node)
        if isinstance(value, Block) and value.dfb.tile != (32, 32):
            raise self.error(f"{call} takes a block of one 32x32 tile; {value.name} holds "
                             f"{value.dfb.tile[0]}x{value.dfb.tile[1]} tiles", node)
        if _number(value) or isinstance(value, Scalar):
            raise self.error(f"{call} takes a block of one 32x32 tile, not {self.describe(value)}", node)
        v = self.operand(value, node)
        if v.row_major or math.prod(v.shape) != 1:
            raise self.error(f"{call} takes a block of one 32x32 tile; this one is {_shape_text(v.shape)} "
                             f"(in {_unit(v)})", node)
        formats = (DataFormat.Float16_b, DataFormat.Float32)
        if block.data_format not in formats:
            raise self.error(f"{call}: {block.dfb.name} is {block.data_format.ttnn_name}; rows are packed into "
                             "bfloat16 and float32 buffers", node)
        if v.data_format is not block.data_format:
            raise self.error(f"{call}: the value is {v.data_format.ttnn_name} but {block.name} is "
                             f"{block.data_format.ttnn_name}; convert with ttl.math.typecast first", node)
        elements = math.prod(block.shape) * height * width
        if elements > 1024:
            raise self.error(f"{call}: {block.name} holds {elements} values ({_shape_text(block.shape)} tiles of "
                             f"{height}x{width}); the rows of one 32x32 tile fill at most 1024", node)
        if accumulate and not block.holds_rows:
            raise self.error(f"{call} adds to the rows {block.name} holds; store_rows() into it first", node)
        self.check_position(block, node)
        block.status.store(self.location(node))
        block.holds_rows = True
        self.node = node
        view = self.emit(ttl.RowPrefixOp(block.value, elements // 16, ttl.tile_type(block.data_format)))
        store = self.emit(ttl.StoreOp(v.value, view.result))
        store.attributes[ttl.ROW_PREFIX_ATTR] = IntegerAttr(elements // 16, i32)
        if accumulate:
            store.attributes[ttl.L1_ACC_ATTR] = UnitAttr()

    def store_accumulating(self, block: Block, value, node) -> None:
        """``block.store(value, acc=True)``: add ``value`` to what the block holds; a reserved block
        that holds nothing yet holds zeros."""
        self.require_compute(node, f"{block.name}.store(..., acc=True)")
        if block.acquired != "reserve":
            raise self.error(f"{block.name} was obtained with wait(); accumulate into a block from reserve()", node)
        self.accumulate_into_block(block, ast.Add, value, node)

    def accumulate_into_block(self, block: Block, op: type, operand, node=None) -> None:
        """``block OP= operand`` (and ``block.store(operand, acc=True)``)."""
        node = node or self.node
        self.require_compute(node, f"{block.name} += ...")
        if block.acquired != "reserve":
            raise self.error(f"{block.name} was obtained with wait(); accumulate into a block from reserve()", node)
        if block.summed_in_l1 and op is ast.Add:
            self.add_in_l1(block, operand, node)
            return
        if block.stored is None and block.accumulator is None and not block.summed_in_l1:
            if op is ast.Add:            # a reserved block that holds nothing yet holds zeros (as store(acc=True))
                self.store(block, operand, node)
                return
            raise self.error(f"{block.name} has no value yet; store() into it before accumulating into it", node)
        if block.accumulator is not None and block.accumulator.l1_acc and op is ast.Add:
            self.check_position(block, node)
            block.status.store(self.location(node))
            self.accumulator_add(block.accumulator, operand, node)
            return
        current = self.operand(block, node)
        self.store(block, self.binary(op, current, operand, node), node)

    # -- accumulators ---------------------------------------------------------------------------

    def _accumulator_format(self, value: BlockExpression) -> DataFormat:
        """float32 when DST is (fp32_dest_acc_en, or the value is float32) or when the operation has
        a float32 dataflow buffer — a value that starts as ``ttl.block.fill(0, ...)`` and then adds
        float32 products must not round to bfloat16 between steps; else bfloat16."""
        if self.options.get("fp32_dest_acc_en") or value.data_format is DataFormat.Float32:
            return DataFormat.Float32
        if self.options.get("fp32_dest_acc_en") is None and any(
                d.data_format is DataFormat.Float32 for d in self.operation.dataflow_buffers):
            return DataFormat.Float32
        return DataFormat.Float16_b

    def make_accumulator(self, name: str, value: BlockExpression, node, l1_acc: bool = False) -> Accumulator:
        """Keep ``value`` in a buffer of its own: one block when the loop only adds to it
        (``l1_acc``, see :meth:`accumulator_add`), else two (the new value is written while the old
        one is read)."""
        if value.row_major:
            raise self.error(f"{name} would keep a row-major block value in a buffer of its own (across loop "
                             "iterations, or after the block it reads is released), which tilefold does not support "
                             "yet; store it into a reserved block of a row-major buffer first", node)
        fmt = self._accumulator_format(value)
        dfb = hidden_dataflow_buffer(value.shape, fmt, f"{name} (accumulator)", self.location(node),
                                     block_count=1 if l1_acc else 2)
        cb = self.cb_value(dfb)
        acc = Accumulator(dfb, cb, name, self.location(node), l1_acc=l1_acc)
        region = next(r for r in reversed(self.regions) if r.kind in ("loop", "function", "branch"))
        region.accumulators.append(acc)
        self.accumulator_assign(acc, value, node)
        return acc

    def keep_other_readers(self, acc: Accumulator, node) -> None:
        """Before ``acc``'s value is replaced: other names holding a value that reads it (``old =
        acc``, then ``acc = acc + x``) and are read later get buffers of their own, so that they
        keep the old value."""
        scope = getattr(self, "_scope", None)
        if scope is None or not acc.holds:
            return
        tree = self.source.tree
        later = live_after(tree, node) if isinstance(tree, ast.FunctionDef) else None
        self.keep_readers_of([acc], {acc.name}, node, scope, later)

    def keep_readers_of(self, accs: list, skip: set, node, scope, later: set | None = None) -> None:
        """Give the names of ``scope`` and its parents (not those of ``skip``; only those read
        ``later`` or carried, when ``later`` is given) whose values read one of the accumulators
        ``accs`` buffers of their own, holding those values from here on."""
        while accs and scope is not None:
            for name, value in list(scope.names.items()):
                if name not in skip and isinstance(value, BlockExpression) \
                        and any(_reads(value.value, acc.cb) for acc in accs) \
                        and (later is None or name in later or name in scope.carried):
                    scope.names[name] = self.make_accumulator(name, value, node)
            scope = scope.parent

    def accumulator_assign(self, acc: Accumulator, value, node) -> None:
        v = self.operand(value, node)
        if v.shape != acc.dfb.shape:
            raise self.error(f"{acc.name} holds a {_shape_text(acc.dfb.shape)} block; it cannot take a value of shape "
                             f"{_shape_text(v.shape)}", node)
        self.keep_other_readers(acc, node)
        if acc.l1_acc and acc.holds:
            if _reads(v.value, acc.cb):
                raise self.error(f"{acc.name} is kept in one block because its loop only adds to it; this value "
                                 f"reads {acc.name}, so compute it into another name first", node)
            self._free_accumulator_block(acc, node)
        self.node = node
        new = self.emit(ttl.CBReserveOp(acc.cb))
        new.result.name_hint = f"{acc.dfb.ir_name}_next"
        self.emit(ttl.StoreOp(v.value, new.result))
        if acc.holds:
            if not _reads(v.value, acc.cb):
                self.emit(ttl.CBWaitOp(acc.cb))      # the old value, replaced unread: waited for, then popped
            self.emit(ttl.CBPopOp(acc.cb))
        self.emit(ttl.CBPushOp(acc.cb))
        acc.holds = True

    def _free_accumulator_block(self, acc: Accumulator, node) -> None:
        """Pop a one-block accumulator's block: its bytes stay in L1, where the next reserve of
        the buffer (the same place) finds them."""
        self.node = node
        self.emit(ttl.CBWaitOp(acc.cb))
        self.emit(ttl.CBPopOp(acc.cb))
        acc.holds = False

    def accumulator_add(self, acc: Accumulator, addend, node) -> None:
        """``acc += addend`` on a one-block accumulator: free the block, reserve it again and store
        ``addend`` with the packer's L1 accumulation (``pack_reconfig_l1_acc(1)``), which adds it
        to the sum the block's L1 holds, then push it — as TT-Metal's matmuls keep partials."""
        if _number(addend):
            addend = self.make("fill", [], acc.dfb.shape, node, {"value": float(addend)}, fmt=acc.dfb.data_format)
        v = self.operand(self.resolve(addend, acc.dfb.shape), node)
        if v.shape != acc.dfb.shape:
            raise self.error(f"{acc.name} holds a {_shape_text(acc.dfb.shape)} block; it cannot add a value of shape "
                             f"{_shape_text(v.shape)}", node)
        if not acc.holds:
            raise self.error(f"{acc.name} has no value here", node)
        self.keep_other_readers(acc, node)
        self._free_accumulator_block(acc, node)
        new = self.emit(ttl.CBReserveOp(acc.cb))
        new.result.name_hint = f"{acc.dfb.ir_name}_next"
        store = self.emit(ttl.StoreOp(v.value, new.result))
        store.attributes[ttl.L1_ACC_ATTR] = UnitAttr()
        self.emit(ttl.CBPushOp(acc.cb))
        acc.holds = True

    def accumulator_read(self, acc: Accumulator, node) -> BlockExpression:
        if not acc.holds:
            raise self.error(f"{acc.name} has no value here", node)
        self.node = node
        op = self.emit(ttl.CBWaitOp(acc.cb))
        op.result.name_hint = acc.dfb.ir_name
        return BlockExpression(op.result, acc.dfb.shape, acc.dfb.data_format, tile=None)   # (of any tile shape)

    def before_release(self, block: Block, node) -> None:
        """A block-expression variable that reads a waited block outlives it (``with x.wait() as x0:
        acc = x0 * 2`` and ``acc`` used later): keep its value in an accumulator before the pop, as
        that of a variable read from a younger block of the buffer, which moves in the FIFO. A value
        stored into the waited block is freed with it."""
        if self.kind != "compute" or block.acquired != "wait":
            return
        replaced, block.accumulator = block.accumulator, None
        scope = getattr(self, "_scope", None)
        later = set()
        if scope is not None:
            tree = self.source.tree
            later = live_after(tree, node) if isinstance(tree, ast.FunctionDef) else None
            if later is None:                   # not a statement of this function: whatever is read below it
                end = getattr(node, "end_lineno", None) or 0
                later = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                         and n.lineno > end}
        # the younger blocks still held move to new FIFO positions: values read from them are kept too
        held = [b.value for b in self._ends(block.dfb)["wait"] if b is not block]
        while scope is not None:
            for name, value in list(scope.names.items()):
                if isinstance(value, BlockExpression) and (name in later or name in scope.carried) \
                        and (_reads(value.value, block.value) or replaced is not None and _reads(value.value, replaced.cb)
                             or any(_reads(value.value, h) for h in held)):
                    scope.names[name] = self.make_accumulator(name, value, node)
            scope = scope.parent
        # a reserved block still held whose stored value reads this block (``o.store(a @ b)``, ``a.pop()``,
        # then ``o += ...``): the value it holds is kept too, so adding to it later does not read a popped block
        value_reads = _value_reads_after(self.source.tree, node)
        for ends in self.held.values():
            for other in ends["reserve"]:
                if other.stored is not None and other.accumulator is None and other.name in value_reads and (
                        _reads(other.stored, block.value) or any(_reads(other.stored, h) for h in held)):
                    stored = BlockExpression(other.stored, other.shape, other.data_format, tile=other.dfb.tile)
                    keep = self.make_accumulator(f"{other.name} (stored value)", stored, node)
                    other.stored = self.accumulator_read(keep, node).value
        if replaced is not None:
            self.node = node
            self.emit(ttl.CBWaitOp(replaced.cb))
            self.emit(ttl.CBPopOp(replaced.cb))
            replaced.holds = False

    def add_in_l1(self, block: Block, addend, node) -> None:
        """``blk += addend`` on a reserved block summed in its own L1: pack ``addend`` onto the
        block's tiles with the packer's L1 accumulation (``pack_reconfig_l1_acc(1)``)."""
        if _number(addend):
            addend = self.make("fill", [], block.shape, node, {"value": float(addend)}, fmt=block.data_format)
        v = self.operand(self.resolve(addend, block.shape), node)
        if v.shape != block.shape:
            raise self.error(f"{block.name} is a {_shape_text(block.shape)} block; it cannot add a value of shape "
                             f"{_shape_text(v.shape)}", node)
        self.check_position(block, node)
        block.status.store(self.location(node))
        self.node = node
        store = self.emit(ttl.StoreOp(v.value, block.value))
        store.attributes[ttl.L1_ACC_ATTR] = UnitAttr()

    def sums_in_l1(self, block: Block, stmt) -> bool:
        """Whether a reserved block that ``stmt`` (a loop) only adds to is summed in its own L1: its
        format is one the packer accumulates into and the kernel does not read it after the loop
        (it pushes it, or adds to it again)."""
        return (block.acquired == "reserve" and block.accumulator is None and block.dfb.is_tiled
                and block.data_format in (DataFormat.Float16_b, DataFormat.Float32)
                and block.name not in _value_reads_after(self.source.tree, stmt, accumulations=False))

    def promote_block(self, block: Block, stmt, zero_start: bool = False, l1_acc: bool = False,
                      name: str | None = None) -> Block:
        """A reserved block accumulated into in a loop. When the loop only adds to it (``l1_acc``)
        and nothing reads it afterwards, each step packs onto the block's own tiles with the packer's
        L1 accumulation (a block that holds nothing yet is zeroed first), as TT-Lang lowers a
        dataflow buffer accumulation. Otherwise its value is kept in an accumulator (of one block with
        ``l1_acc``). With ``zero_start`` (the loop stores into it with ``acc=True``, or only adds to
        it with ``+=``) a block that holds nothing yet starts at zero."""
        if l1_acc and self.sums_in_l1(block, stmt):
            if block.stored is None and not block.summed_in_l1:
                self.node = stmt
                zero = self.make("fill", [], block.shape, stmt, {"value": 0.0}, fmt=block.data_format)
                self.store(block, zero, stmt)
            block.stored, block.summed_in_l1 = None, True
            return block
        if block.acquired == "reserve" and block.stored is None and zero_start:
            self.node = stmt
            value = self.make("fill", [], block.shape, stmt, {"value": 0.0}, fmt=block.data_format)
        elif block.acquired != "reserve" or block.stored is None:
            name = name or block.name
            if _reacquired(stmt, name):
                kind = "loop" if isinstance(stmt, (ast.For, ast.While)) else "branch"
                raise self.error(f"{name} holds a block before this {kind} and is bound to another block inside "
                                 "it, so a block would carry from one iteration to the next (a receive kept posted "
                                 "until a later ttl.wait_any); tilefold does not support that yet — acquire the block "
                                 "and post its receive on every iteration", stmt)
            raise self.error(f"{name} is assigned in this loop; only a reserved block that already holds a "
                             "value can be accumulated into across loop iterations", stmt)
        else:
            value = BlockExpression(block.stored, block.shape, block.data_format, tile=block.dfb.tile)
        block.accumulator = self.make_accumulator(block.name, value, stmt, l1_acc)
        return block

    def finish_block_accumulation(self, block: Block, stmt) -> None:
        """After the loop: store the accumulated value into the block, which then holds it (a block
        summed in its own L1 holds it already)."""
        acc = block.accumulator
        if acc is None:
            return
        block.accumulator = None
        value = self.accumulator_read(acc, stmt)
        self.node = stmt
        self.emit(ttl.StoreOp(value.value, block.value))
        # the block holds the sum: a later loop adding to it starts from it (the accumulator is popped at
        # the end of the region that made it)
        block.stored = value.value


def _dtype_text(dtype) -> str:
    return repr(dtype) if isinstance(dtype, str) else str(dtype)


def _value_reads_after(tree: ast.AST, node, accumulations: bool = True) -> set[str]:
    """Names whose block value is read after ``node`` (by line): operands and, with
    ``accumulations``, ``x += ...`` and ``x.store(..., acc=True)`` — not ``x.push()``, ``x.pop()``
    or a plain ``x.store(v)``."""
    end = getattr(node, "end_lineno", None) or 0
    parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    names = set()
    for n in ast.walk(tree):
        if getattr(n, "lineno", 0) <= end:
            continue
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            if accumulations:
                names.add(n.target.id)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            parent = parents.get(id(n))
            if isinstance(parent, ast.Attribute) and parent.attr in ("push", "pop", "store"):
                call = parents.get(id(parent))
                if not (accumulations and parent.attr == "store" and isinstance(call, ast.Call)
                        and any(k.arg == "acc" for k in call.keywords)):
                    continue
            names.add(n.id)
    return names


def _reads(value, source) -> bool:
    """Whether the SSA value ``value`` is computed from ``source`` (a block, or a CB: from one of
    its blocks)."""
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if v is source:
            return True
        owner = getattr(v, "owner", None)
        if owner is None or id(owner) in seen:
            continue
        if isinstance(owner, (ttl.CBWaitOp, ttl.CBReserveOp)):
            if owner.operands and owner.operands[0] is source:      # a block of the CB ``source``
                return True
            continue
        seen.add(id(owner))
        stack.extend(getattr(owner, "operands", ()))
    return False


def _reacquired(stmt, name: str) -> bool:
    """Whether ``stmt`` binds ``name`` to a block it acquires (``name = dfb.reserve()`` / ``wait()``)."""
    return any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
               and is_acquire(n.value) for n in ast.walk(stmt))


__all__ = ["BlockExpressionBuilder", "math"]


reads_from = _reads       # (for the builder: whether a value reads a block or a buffer)
