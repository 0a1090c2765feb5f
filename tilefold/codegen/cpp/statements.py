"""C++ statements for the body of a ttkernel function.

Reads: a ``func.func`` of ttkernel, ``arith``, ``scf`` and ``memref`` ops (names from SSA name
hints, locations from op locations). Writes: the lines of ``kernel_main``'s body.

The printer decides nothing about the program; it only chooses a readable spelling:

- ``arith.constant`` is printed as a literal at each use. A scalar result (``arith``,
  ``my_x`` / ``my_y``, a load of a local variable, an API call that returns a value) that is
  unnamed and used once in the same block is printed inside its user
  (``noc_async_read_page(start_id + i, s, get_write_ptr(cb))``) unless that would move it past
  a store to a variable it reads or, for an API call, past any other op with a side effect;
  plain variables and literals may be repeated at several uses. Other results get a declared
  variable named after the user's name (``uint32_t stick_id = ...``) or ``v0``, ``v1`` ...
- ``x = x + y`` prints as ``x += y``; ``else { if ... }`` as ``else if``.
- ``scf.for`` / ``scf.if`` / ``scf.while`` become ``for`` / ``if`` / ``while``; their results
  and loop-carried values become variables assigned where the IR yields them (through
  temporaries when the assignments read each other).
- a rank-0 ``memref.alloca`` is a plain local variable, a rank-n one a C array.
- API calls print as ``name<templates>(args)``, trailing arguments equal to the API default
  are left out, ``l1_ptr`` arguments are cast to ``volatile tt_l1_ptr uint32_t*``.

Errors: :class:`CompileError` for an op the C++ emitter does not print (a pass should have
lowered it) and for kernel functions with arguments.
"""

from __future__ import annotations

import contextlib
import os

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import FileLineColLoc, MemRefType
from xdsl.ir import Block, Operation, SSAValue

from tilefold.codegen.cpp.cpp_types import constant_literal, cpp_type, memref_element_type, memref_shape
from tilefold.codegen.cpp.expressions import (
    POSTFIX,
    RELATIONAL,
    SHIFT,
    Expr,
    arith_expression,
    assignment,
    atom,
    is_simple,
    operand_text,
    unary,
    variable,
)
from tilefold.codegen.cpp.host import cpp_string
from tilefold.codegen.cpp.names import KERNEL_RESERVED, Identifiers
from tilefold.errors import CompileError
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import (
    ApiCallOp,
    AssertInRangeOp,
    KernelAssertOp,
    CBOp,
    DPrintCBOp,
    DPrintOp,
    DPrintTilesOp,
    ExternCallOp,
    GetCompileTimeArgValOp,
    L1LoadOp,
    L1StoreOp,
    MyXOp,
    MyYOp,
    TensorAccessorArgsOp,
    TensorAccessorOp,
    constant_int,
    kernel_thread,
)

INDENT = "    "
_PURE_OPS = (CBOp, MyXOp, MyYOp, memref.LoadOp, memref.AllocaOp, GetCompileTimeArgValOp, TensorAccessorArgsOp,
             TensorAccessorOp)
_L1_TYPES = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t"}


def _l1_pointer(width: int, address: Expr) -> str:
    return f"reinterpret_cast<volatile tt_l1_ptr {_L1_TYPES[width]}*>({address.text})"


def _references(op: Operation, value: SSAValue) -> bool:
    return any(value in o.operands for o in op.walk())


def _is_pure(op: Operation) -> bool:
    """Ops with no side effect (and no region that could hold one)."""
    if op.regions:
        return False
    return op.dialect_name() == "arith" or isinstance(op, _PURE_OPS)


def _stores_to(op: Operation, names: set[str], memref_names: dict[SSAValue, str]) -> bool:
    for o in op.walk():
        if isinstance(o, memref.StoreOp) and memref_names.get(o.memref) in names:
            return True
    return False


class BodyPrinter:
    """Prints the body of one kernel function (see the module docstring)."""

    def __init__(self, kernel: func.FuncOp, source_comments: bool = True, depth: int = 1):
        if kernel.body.blocks and kernel.body.block.args:
            raise CompileError(f"kernel @{kernel.sym_name.data} takes arguments; a TT-Metalium kernel_main takes "
                               "none (pass values as runtime or compile-time arguments)", source_location(kernel))
        self.kernel = kernel
        self.source_comments = source_comments
        # the first name of an external call's function is never a variable's (it would hide the function)
        callees = frozenset(op.callee.data.lstrip(":").split("::")[0] for op in kernel.walk() if isinstance(op, ExternCallOp))
        self.names = Identifiers(KERNEL_RESERVED | callees) if callees else Identifiers()
        self.exprs: dict[SSAValue, Expr] = {}
        self.memref_names: dict[SSAValue, str] = {}
        self.deferred_declarations: set[SSAValue] = set()
        self.out: list[str] = []
        self.depth = depth
        self.last_location: tuple[str, int] | None = None

    # -- output ---------------------------------------------------------------------------

    def lines(self) -> list[str]:
        if self.kernel.body.blocks:
            self.print_block(self.kernel.body.block, top_level=True)
        return self.out

    def emit(self, text: str, op: Operation | None = None) -> None:
        """One line at the current indentation; the first line printed from each line of the user's
        source ends with ``// file.py:LINE`` when source comments are on."""
        line = INDENT * self.depth + text
        if self.source_comments and op is not None and isinstance(op.location, FileLineColLoc):
            key = (os.path.basename(op.location.filename.data), op.location.line.data)
            if key != self.last_location:
                line += f"  // {key[0]}:{key[1]}"
                self.last_location = key
        self.out.append(line)

    # -- values ---------------------------------------------------------------------------

    def expr(self, value: SSAValue) -> Expr:
        if value in self.exprs:
            return self.exprs[value]
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return atom(constant_literal(owner.value), is_literal=True)
        raise CompileError(f"the C++ emitter met a value it has not printed yet ({value.type} defined by "
                           f"{getattr(owner, 'name', 'a block argument')})", source_location(self.kernel))

    def declare(self, value: SSAValue, text: str, op: Operation, type_name: str | None = None) -> str:
        """``T name = text;`` for ``value``, named after its name hint."""
        name = self.names.unique(value.name_hint)
        self.emit(f"{type_name or cpp_type(value.type)} {name} = {text};", op)
        self.exprs[value] = variable(name)
        return name

    def _can_inline(self, op: Operation, e: Expr) -> bool:
        """Whether ``op``'s result may be printed at its uses instead of in a variable: it is unnamed
        (a load's name is its variable's), used in the same block, used once unless it is a simple
        variable or literal, and moving it there neither passes a store to a variable it reads nor,
        when it holds an API call, any other op with side effects."""
        value = op.results[0]
        uses = list(value.uses)
        if value.name_hint and not isinstance(op, memref.LoadOp):
            return False
        if len(uses) > 1 and not is_simple(e):
            return False
        block = op.parent_block()
        reads = set(e.reads)
        for use in uses:
            user = use.operation
            if user.parent_block() is not block:
                return False
            between = op.next_op
            while between is not None and between is not user:
                if reads and _stores_to(between, reads, self.memref_names):
                    return False
                if e.has_call and not _is_pure(between):
                    return False
                between = between.next_op
            if isinstance(user, scf.ForOp) and use.index in (1, 2):
                # the loop bound and step are evaluated again after every iteration
                if e.has_call or (reads and _stores_to(user, reads, self.memref_names)):
                    return False
        return True

    def define(self, op: Operation, e: Expr) -> None:
        """Record the expression of a pure op's result: inline at its use or in a variable."""
        value = op.results[0]
        if not value.uses:
            return
        if self._can_inline(op, e):
            self.exprs[value] = e
        else:
            self.declare(value, e.text, op)

    # -- blocks and ops --------------------------------------------------------------------

    def print_block(self, block: Block, top_level: bool = False) -> None:
        for op in block.ops:
            if isinstance(op, (scf.YieldOp, scf.ConditionOp)):
                continue  # printed by the op that owns the block
            if isinstance(op, func.ReturnOp):
                if not (top_level and op is block.last_op):
                    self.emit("return;", op)
                continue
            self.print_op(op)

    def print_op(self, op: Operation) -> None:
        if isinstance(op, arith.ConstantOp):
            return
        if isinstance(op, ApiCallOp):
            return self.print_api_call(op)
        if isinstance(op, CBOp):
            # a CB is its index (``uint32_t cb_id``): printed where it is used
            e = self.expr(op.index)
            if is_simple(e) or self._can_inline(op, e):
                self.exprs[op.result] = e
            else:
                self.declare(op.result, e.text, op, cpp_type(op.index.type))
            return None
        if op.dialect_name() == "arith":
            return self.define(op, arith_expression(op, [self.expr(v) for v in op.operands]))
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise CompileError(f"the C++ emitter cannot print {op.name}; the kernel must be lowered to ttkernel, "
                               "arith, scf and memref ops first", source_location(op))
        handler(self, op)

    # -- TT-Metalium API ----------------------------------------------------------------------

    def _argument(self, kind: str, value: SSAValue) -> str:
        e = self.expr(value)
        if kind == "l1_ptr":
            return f"reinterpret_cast<volatile tt_l1_ptr uint32_t*>({e.text})"
        if kind == "bool" and e.is_literal and e.text not in ("true", "false"):
            return "true" if constant_int(value) else "false"
        return e.text

    def api_call_text(self, op: ApiCallOp) -> str:
        fn = op.api
        templates = [fn.cpp_type_template] if fn.cpp_type_template else []
        values = op.template_values()
        shown = list(fn.templates)
        while shown and shown[-1].omit_default and values[shown[-1].name] == shown[-1].default:
            shown.pop()
        for t in shown:
            v = values[t.name]
            if t.kind == "bool":
                templates.append("true" if v else "false")
            elif t.kind == "uint32_t":
                templates.append(f"0x{v:08X}")
            else:
                templates.append(f"{t.cpp_cast}{t.kind}::{v}")
        params = list(fn.params)
        operands = list(op.operands)
        while params and params[-1].default is not None and constant_int(operands[-1]) is not None \
                and constant_int(operands[-1]) == params[-1].default:
            params.pop()
            operands.pop()
        args = ", ".join(self._argument(p.kind, v) for p, v in zip(params, operands))
        template_text = f"<{', '.join(templates)}>" if templates else ""
        return f"{fn.cpp_function}{template_text}({args})"

    def print_api_call(self, op: ApiCallOp) -> None:
        text = self.api_call_text(op)
        if op.results and op.results[0].uses:
            self.define(op, Expr(text, POSTFIX, _reads_of(op, self), has_call=True))
        else:
            self.emit(text + ";", op)

    def print_compile_time_arg(self, op: GetCompileTimeArgValOp) -> None:
        if op.result.uses:
            self.declare(op.result, f"get_compile_time_arg_val({op.arg_index})", op, "constexpr uint32_t")

    def print_tensor_accessor_args(self, op: TensorAccessorArgsOp) -> None:
        if op.prev is not None:
            offset = f"{self.expr(op.prev).text}.next_compile_time_args_offset()"
        else:
            offset = str(op.cta_offset.value.data)
        if op.crta_offset is not None:
            offset += f", {op.crta_offset.value.data}"
        self.declare(op.result, f"TensorAccessorArgs<{offset}>()", op, "constexpr auto")

    def print_tensor_accessor(self, op: TensorAccessorOp) -> None:
        args = ", ".join(self.expr(v).text for v in op.operands)
        self.declare(op.result, f"TensorAccessor({args})", op, "const auto")

    def print_my_xy(self, op: MyXOp | MyYOp) -> None:
        self.define(op, atom(f"{'my_x' if isinstance(op, MyXOp) else 'my_y'}[noc_index]"))

    def print_l1_load(self, op: L1LoadOp) -> None:
        text = f"{_l1_pointer(op.width.value.data, self.expr(op.addr))}[{self.expr(op.index).text}]"
        if op.result.uses:
            self.declare(op.result, text, op)

    def print_l1_store(self, op: L1StoreOp) -> None:
        target = f"{_l1_pointer(op.width.value.data, self.expr(op.addr))}[{self.expr(op.index).text}]"
        self.emit(f"{target} = {self.expr(op.value).text};", op)

    def print_dprint(self, op: DPrintOp) -> None:
        pieces = []
        for i, text in enumerate(op.texts):
            if text:
                pieces.append(cpp_string(text))
            if i < len(op.values):
                value = self.expr(op.values[i])
                pieces.append(value.text if value.precedence > SHIFT else f"({value.text})")
        stream = " << ".join(["DPRINT", *pieces, "ENDL()"])
        if kernel_thread(self.kernel) == "compute":
            self.emit(f"DPRINT_{op.compute_thread.upper()}({stream});", op)
        else:
            self.emit(f"{stream};", op)

    def print_dprint_tiles(self, op: DPrintTilesOp) -> None:
        """Each tile as TT-Metal's ``print_full_tile`` prints it — ``======``, each row as ``R : `` and
        ``DPRINT << TileSlice(...)``, ``++++++`` — in a compute kernel only on the thread that sees
        the pointer: the unpacker for pages waited for, the packer for pages reserved."""
        cb = self.expr(op.cb).text
        first, count = op.first.value.data, op.count.value.data
        front = op.side.data == "front"
        self.names.push_scope()
        t, r = self.names.unique("t"), self.names.unique("r")
        row = f"SliceRange{{.h0 = {r}, .h1 = (uint8_t)({r} + 1), .hs = 1, .w0 = 0, .w1 = 32, .ws = 1}}"
        if kernel_thread(self.kernel) == "compute":
            slice_args = f"{cb}, {t}, {row}, false, true"
        else:
            kind = "TSLICE_INPUT_CB, TSLICE_RD_PTR" if front else "TSLICE_OUTPUT_CB, TSLICE_WR_PTR"
            slice_args = f"{cb}, {t}, {row}, {kind}, false, true"
        with self._compute_thread_only("UCK_CHLKC_UNPACK" if front else "UCK_CHLKC_PACK"):
            self.emit(f"for (uint32_t {t} = {first}; {t} < {first + count}; ++{t}) {{", op)
            self.depth += 1
            self.emit('DPRINT << "======" << ENDL();')
            self.emit(f"for (uint8_t {r} = 0; {r} < 32; ++{r}) {{")
            self.depth += 1
            self.emit(f"DPRINT << (uint32_t){r} << \" : \" << TileSlice({slice_args}) << ENDL();")
            self.depth -= 1
            self.emit("}")
            self.emit('DPRINT << "++++++" << ENDL();')
            self.depth -= 1
            self.emit("}")
        self.names.pop_scope()

    @contextlib.contextmanager
    def _compute_thread_only(self, thread: str):
        """In a compute kernel, what is printed inside is compiled for one TRISC only (``#if
        defined(UCK_CHLKC_UNPACK)`` ... ``#endif``); in a data movement kernel, as it is."""
        compute = kernel_thread(self.kernel) == "compute"
        if compute:
            self.out.append(f"#if defined({thread})")
        yield
        if compute:
            self.out.append("#endif")

    def print_dprint_cb(self, op: DPrintCBOp) -> None:
        """The CB's interface as TT-Metal's ``print_cb_details`` prints it (in a compute kernel, from the
        unpacker)."""
        cb = self.expr(op.cb).text
        fields = ("size", "fifo_size"), ("limit", "fifo_limit"), ("page_size", "fifo_page_size"), \
            ("num_pages", "fifo_num_pages"), ("rd_ptr", "fifo_rd_ptr"), ("wr_ptr", "fifo_wr_ptr"), \
            ("wr_tile_ptr", "fifo_wr_tile_ptr")
        pieces = [f'"cb_id " << {cb} << ": {{ "']
        for i, (label, field) in enumerate(fields):
            pieces.append(f'"{", " if i else ""}{label}: " << get_local_cb_interface({cb}).{field}')
        stream = " << ".join(["DPRINT", *pieces, '" }"', "ENDL()"])
        with self._compute_thread_only("UCK_CHLKC_UNPACK"):
            self.emit(f"{stream};", op)

    def print_extern_call(self, op: ExternCallOp) -> None:
        """``callee<template args>(args);`` of ``ttl.call_extern_func``; with a result,
        ``T name = callee(...);`` in the result's C++ type."""
        cbs = op.template_cbs
        templates = []
        for text in op.templates:
            kind, _, rest = text.partition(":")
            fields = rest.split(":")
            if kind == "int":
                templates.append(fields[0])
            elif kind == "bool":
                templates.append("true" if fields[0] == "1" else "false")
            elif kind == "float":
                templates.append(f"{fields[0]}U")
            elif kind == "dfb_id":
                templates.append(self.expr(cbs[int(fields[0])]).text)
            else:
                index, pages, blocks, size = fields
                templates.append(f"ttlang::DFBDescriptor<{self.expr(cbs[int(index)]).text}, {pages}, {blocks}, {size}>")
        call = op.callee.data + (f"<{', '.join(templates)}>" if templates else "")
        call += f"({', '.join(self.expr(v).text for v in op.call_args)})"
        if op.result is not None:
            self.declare(op.result, call, op, op.result_ctype.data)
        else:
            self.emit(f"{call};", op)

    def print_kernel_assert(self, op: KernelAssertOp) -> None:
        self.emit(f"// assert: {'{}'.join(op.texts)}")
        self.emit(f"ASSERT({self.expr(op.condition).text});", op)

    def print_assert_in_range(self, op: AssertInRangeOp) -> None:
        self.emit(f"// {op.message.data}")
        self.emit(f"ASSERT({self.expr(op.value).text} <= {op.upper.value.data}u);", op)

    # -- local variables ---------------------------------------------------------------------

    def print_alloca(self, op: memref.AllocaOp) -> None:
        memref_type = op.memref.type
        assert isinstance(memref_type, MemRefType)
        name = self.names.unique(op.memref.name_hint)
        self.memref_names[op.memref] = name
        element = memref_element_type(memref_type)
        shape = memref_shape(memref_type)
        if shape:
            dims = "".join(f"[{d}]" for d in shape)
            self.emit(f"{element} {name}{dims};", op)
            return
        following = op.next_op
        while following is not None and not _references(following, op.memref):
            following = following.next_op
        if isinstance(following, memref.StoreOp) and following.memref is op.memref:
            self.deferred_declarations.add(op.memref)  # declared with its first value
        else:
            self.emit(f"{element} {name};", op)

    def _element(self, memref_value: SSAValue, indices) -> Expr:
        """``name`` or ``name[i][j]`` of a local variable, as an expression that reads it."""
        name = self.memref_names.get(memref_value)
        if name is None:
            owner = memref_value.owner
            raise CompileError("the C++ emitter only prints loads and stores of memref.alloca locals",
                               source_location(owner) if isinstance(owner, Operation) else None)
        index_exprs = [self.expr(i) for i in indices]
        reads = frozenset({name}).union(*(e.reads for e in index_exprs))
        text = name + "".join(f"[{e.text}]" for e in index_exprs)
        return Expr(text, POSTFIX, reads, has_call=any(e.has_call for e in index_exprs))

    def print_load(self, op: memref.LoadOp) -> None:
        self.define(op, self._element(op.memref, op.indices))

    def print_store(self, op: memref.StoreOp) -> None:
        value = self.expr(op.value).text
        if op.memref in self.deferred_declarations:
            self.deferred_declarations.discard(op.memref)
            element = memref_element_type(op.memref.type)
            self.emit(f"{element} {self.memref_names[op.memref]} = {value};", op)
            return
        self.emit(assignment(self._element(op.memref, op.indices).text, self.expr(op.value)), op)

    # -- structured control flow ---------------------------------------------------------------

    def _carried_variables(self, inits, block_args, hints: list[str | None], op: Operation) -> list[str]:
        """Declare one mutable variable per loop-carried value, initialised from ``inits`` and named
        after ``hints`` (the loop results' names when distinct) or the block arguments' names."""
        names = []
        for init, arg, hint in zip(inits, block_args, hints):
            name = self.names.unique(hint if hints.count(hint) == 1 and hint else arg.name_hint)
            self.emit(f"{cpp_type(arg.type)} {name} = {self.expr(init).text};", op)
            self.exprs[arg] = variable(name, mutable=True)
            names.append(name)
        return names

    def assign_all(self, targets: list[str], values: list[Expr], types, op: Operation) -> None:
        """``target = value`` for each pair, as if all at once."""
        pairs = [(t, v, ty) for t, v, ty in zip(targets, values, types) if v.text != t]
        conflict = any(pairs[k][0] in pairs[j][1].reads for j in range(len(pairs)) for k in range(j))
        if not conflict:
            for target, value, _ in pairs:
                self.emit(assignment(target, value), op)
            return
        temporaries = []
        for target, value, ty in pairs:
            temp = self.names.unique(f"next_{target}")
            self.emit(f"const {cpp_type(ty)} {temp} = {value.text};", op)
            temporaries.append(temp)
        for (target, _, _), temp in zip(pairs, temporaries):
            self.emit(f"{target} = {temp};", op)

    def _print_region_block(self, block: Block, result_targets: list[str] | None, terminator_op) -> None:
        self.depth += 1
        self.names.push_scope()
        self.print_block(block)
        terminator = block.last_op
        if result_targets and isinstance(terminator, scf.YieldOp):
            self.assign_all(result_targets, [self.expr(v) for v in terminator.operands],
                            [v.type for v in terminator.operands], terminator)
        self.names.pop_scope()
        self.depth -= 1

    def print_for(self, op: scf.ForOp) -> None:
        lb, ub, step = (self.expr(v) for v in (op.lb, op.ub, op.step))
        body = op.body.block
        iv, carried_args = body.args[0], body.args[1:]
        carried = self._carried_variables(op.iter_args, carried_args, [r.name_hint for r in op.results], op)
        for result, name in zip(op.results, carried):
            self.exprs[result] = variable(name, mutable=True)
        self.names.push_scope()
        i = self.names.unique(iv.name_hint)
        self.exprs[iv] = variable(i)
        increment = f"++{i}" if step.text == "1" else f"{i} += {step.text}"
        self.emit(f"for ({cpp_type(iv.type)} {i} = {lb.text}; {i} < {operand_text(ub, RELATIONAL, right=True)}; "
                  f"{increment}) {{", op)
        self._print_region_block(body, carried, op)
        self.names.pop_scope()
        self.emit("}")

    def _else_if(self, op: scf.IfOp) -> scf.IfOp | None:
        """The nested ``scf.if`` when the else branch holds only it (and pure ops feeding it)."""
        if not op.false_region.blocks:
            return None
        ops = list(op.false_region.block.ops)
        if len(ops) < 2 or not isinstance(ops[-2], scf.IfOp) or not isinstance(ops[-1], scf.YieldOp):
            return None
        inner, yield_op = ops[-2], ops[-1]
        if list(yield_op.operands) != list(inner.results) or not all(_is_pure(o) for o in ops[:-2]):
            return None
        return inner

    def print_if(self, op: scf.IfOp, targets: list[str] | None = None, keyword: str = "if") -> None:
        if targets is None:
            targets = []
            for result in op.results:
                name = self.names.unique(result.name_hint)
                self.emit(f"{cpp_type(result.type)} {name};", op)
                self.exprs[result] = variable(name)
                targets.append(name)
        self.emit(f"{keyword} ({self.expr(op.cond).text}) {{", op)
        self._print_region_block(op.true_region.block, targets, op)
        inner = self._else_if(op)
        if inner is not None:
            # Print the ops that compute the inner condition; when they all fold into it, chain.
            self.depth += 1
            self.names.push_scope()
            mark = len(self.out)
            for pre in list(op.false_region.block.ops)[:-2]:
                self.print_op(pre)
            if len(self.out) == mark:
                self.depth -= 1
                for result, target in zip(inner.results, targets):
                    self.exprs[result] = variable(target)
                self.print_if(inner, targets, keyword="} else if")
                self.names.pop_scope()
                return
            # Otherwise a plain else whose nested if assigns this if's results directly.
            self.out.insert(mark, INDENT * (self.depth - 1) + "} else {")
            for result, target in zip(inner.results, targets):
                self.exprs[result] = variable(target)
            self.print_if(inner, targets)
            self.names.pop_scope()
            self.depth -= 1
        elif op.false_region.blocks and (len(op.false_region.block.ops) > 1 or targets):
            self.emit("} else {")
            self._print_region_block(op.false_region.block, targets, op)
        self.emit("}")

    def print_while(self, op: scf.WhileOp) -> None:
        before, after = op.before_region.block, op.after_region.block
        condition = before.last_op
        assert isinstance(condition, scf.ConditionOp)
        passthrough = list(condition.args) == list(before.args)
        hints = [r.name_hint for r in op.results] if passthrough else [None] * len(before.args)
        carried = self._carried_variables(op.arguments, before.args, hints, op)
        if passthrough:
            result_names = carried
        else:
            result_names = []
            for result in op.results:
                name = self.names.unique(result.name_hint)
                self.emit(f"{cpp_type(result.type)} {name};", op)
                result_names.append(name)
        for result, name in zip(op.results, result_names):
            self.exprs[result] = variable(name, mutable=True)
        # The before block runs on every iteration, inside the loop; when it prints nothing (its ops
        # all fold into the condition) the loop is a plain ``while (condition)``.
        self.emit("while (true) {", op)
        header = len(self.out) - 1
        self.depth += 1
        self.names.push_scope()
        self.print_block(before)
        cond = self.expr(condition.condition)
        if passthrough and len(self.out) == header + 1:
            self.out[header] = self.out[header].replace("while (true)", f"while ({cond.text})", 1)
        else:
            if not passthrough:
                self.assign_all(result_names, [self.expr(v) for v in condition.args],
                                [v.type for v in condition.args], condition)
            self.emit(f"if ({unary('!', cond).text}) {{", condition)
            self.emit(INDENT + "break;")
            self.emit("}")
        self.depth -= 1
        for arg, name in zip(after.args, result_names):
            self.exprs[arg] = variable(name, mutable=True)
        self._print_region_block(after, carried, op)
        self.names.pop_scope()
        self.emit("}")


def _reads_of(op: Operation, printer: BodyPrinter) -> frozenset[str]:
    reads: frozenset[str] = frozenset()
    for v in op.operands:
        reads |= printer.expr(v).reads
    return reads


_HANDLERS = {
    GetCompileTimeArgValOp: BodyPrinter.print_compile_time_arg,
    TensorAccessorArgsOp: BodyPrinter.print_tensor_accessor_args,
    TensorAccessorOp: BodyPrinter.print_tensor_accessor,
    MyXOp: BodyPrinter.print_my_xy,
    MyYOp: BodyPrinter.print_my_xy,
    L1LoadOp: BodyPrinter.print_l1_load,
    L1StoreOp: BodyPrinter.print_l1_store,
    AssertInRangeOp: BodyPrinter.print_assert_in_range,
    KernelAssertOp: BodyPrinter.print_kernel_assert,
    DPrintOp: BodyPrinter.print_dprint,
    DPrintTilesOp: BodyPrinter.print_dprint_tiles,
    DPrintCBOp: BodyPrinter.print_dprint_cb,
    ExternCallOp: BodyPrinter.print_extern_call,
    memref.AllocaOp: BodyPrinter.print_alloca,
    memref.LoadOp: BodyPrinter.print_load,
    memref.StoreOp: BodyPrinter.print_store,
    scf.ForOp: BodyPrinter.print_for,
    scf.IfOp: BodyPrinter.print_if,
    scf.WhileOp: BodyPrinter.print_while,
}
