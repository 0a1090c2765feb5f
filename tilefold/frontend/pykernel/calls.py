"""Lowering calls in a kernel: API functions, the special constructors, min / max, @inline helpers.

Reads: ``ast.Call`` nodes and the device function or helper they name. Writes: one
``ttkernel.<name>`` op per API call, with an operand for every parameter of the API table
(defaults filled in) converted to the parameter's kind, and template parameters as
properties; ``ttkernel.get_compile_time_arg_val``, ``tensor_accessor_args``,
``tensor_accessor``, ``my_x`` / ``my_y``; ``memref.alloca`` for ``array``; ``arith`` casts
for ``uint32`` / ``uint64``; ``arith.minui`` / ``maxui``. An ``@inline`` helper's body is
built in place with its own names and its own source lines.

Errors: unknown functions (with the closest API names), arguments that do not match the
table's signature, values of the wrong kind for a parameter, template values outside their
choices, non-constant compile-time indices and array sizes, recursion between helpers.
"""

from __future__ import annotations

import ast
import builtins
import inspect

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerType, f32, i1
from xdsl.ir import SSAValue

from tilefold.frontend.pykernel.api import API_FUNCTIONS, ELEMENT_TYPES, SPECIAL_FUNCTIONS, DeviceFunction, \
    InlineFunction
from tilefold.frontend.pykernel.arguments import Argument, bind, suggest
from tilefold.frontend.pykernel.expressions import ExpressionLowering, Frame, Local
from tilefold.frontend.source import MISSING, FunctionSource
from tilefold.frontend.pykernel.values import (
    BOOL,
    U32,
    U64,
    L1Pointer,
    Static,
    describe,
    int_width,
    is_int_value,
    wider,
)
from tilefold.frontend.pykernel.variables import analyse
from tilefold.ir.ttkernel import (
    GetCompileTimeArgValOp,
    MyXOp,
    MyYOp,
    TensorAccessorArgsOp,
    TensorAccessorArgsType,
    TensorAccessorOp,
    TensorAccessorType,
    api_call,
)
from tilefold.ir.ttkernel_api import ApiFunction, Param, TemplateParam

_CALLABLE_KINDS = "TT-Metalium API functions, @inline helpers, min and max"


class CallLowering(ExpressionLowering):
    """Calls of a kernel body; :class:`~.builder.KernelBuilder` adds statements."""

    inlining: list[InlineFunction]      # the helpers being inlined, innermost last

    # -- calls -------------------------------------------------------------------------------------

    def expr_Call(self, node: ast.Call):
        return self.call(node, want_value=True)

    def static_callee(self, func_node: ast.AST):
        """The Python object a callee expression names without building anything, or None."""
        if isinstance(func_node, ast.Name):
            if func_node.id in self.frame.env or func_node.id in self.frame.plan.locals:
                return None
            obj = self.frame.source.lookup(func_node.id)
            return None if obj is MISSING else obj
        if isinstance(func_node, ast.Attribute):
            base = self.static_callee(func_node.value)
            return getattr(base, func_node.attr, None) if base is not None else None
        return None

    def callee(self, node: ast.Call) -> Static:
        func_node = node.func
        if isinstance(func_node, ast.Name):
            name = func_node.id
            frame = self.frame
            if name not in frame.env and name not in frame.plan.locals and frame.source.lookup(name) is MISSING:
                candidates = [*API_FUNCTIONS, *SPECIAL_FUNCTIONS]
                candidates += [n for n in frame.source.visible_names()
                               if isinstance(frame.source.lookup(n), (InlineFunction, DeviceFunction))]
                raise self.error(func_node, f"unknown function {name!r}{suggest(name, candidates)}; kernels call "
                                            f"{_CALLABLE_KINDS}")
        if not isinstance(func_node, (ast.Name, ast.Attribute)):
            raise self.error(func_node, f"only named functions can be called in a kernel, not "
                                        f"{ast.unparse(func_node)[:40]}")
        value = self.expr(func_node)
        if not isinstance(value, Static):
            raise self.error(func_node, f"{ast.unparse(func_node)} is {describe(value)}, not a function")
        return value

    def call(self, node: ast.Call, want_value: bool):
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.error(node, "*args and **kwargs are not supported in kernel calls; pass arguments one by one")
        callee = self.callee(node)
        obj, name = callee.obj, callee.name
        if isinstance(obj, DeviceFunction):
            result = self.device_call(obj, node)
        elif isinstance(obj, InlineFunction):
            result = self.inline_call(obj, node)
        elif obj is builtins.range:
            raise self.error(node, "range() can only be the iterable of a for loop: for i in range(...)")
        elif obj is builtins.min or obj is builtins.max:
            result = self.min_max(obj is builtins.min, node)
        elif getattr(obj, "is_pykernel", False):
            raise self.error(node, f"{name} is a kernel; kernels cannot call kernels. Move the shared code into an "
                                   f"@inline helper")
        elif inspect.isfunction(obj):
            raise self.error(node, f"{name} is a plain Python function; decorate it with @inline to call it from a "
                                   f"kernel")
        elif inspect.isbuiltin(obj) or isinstance(obj, type):
            raise self.error(node, f"{name}() cannot be called in a kernel; kernels call {_CALLABLE_KINDS}")
        else:
            raise self.error(node, f"{describe(callee)} cannot be called in a kernel; kernels call {_CALLABLE_KINDS}")
        if want_value and result is None:
            raise self.error(node, f"{name}() returns nothing, so its result cannot be used; call it as a statement")
        return result

    def arguments(self, name: str, signature: inspect.Signature, node: ast.Call) -> dict[str, Argument]:
        positional = [(self.expr(a), a) for a in node.args]
        keywords = [(k.arg, self.expr(k.value), k) for k in node.keywords]
        return bind(name, signature, positional, keywords, node, self.error)

    def device_call(self, fn: DeviceFunction, node: ast.Call):
        if fn.api is not None and not node.keywords:
            form = dict(fn.api.short_forms).get(len(node.args))
            if form is not None:  # a shorter C++ overload, e.g. compute_kernel_hw_startup(icb, ocb)
                given = [(self.expr(a), a) for a in node.args]
                args = bind(fn.name, fn.signature, [given[i] for i in form], [], node, self.error)
                return self.api_call(fn.api, args, node)
        args = self.arguments(fn.name, fn.signature, node)
        if fn.api is not None:
            return self.api_call(fn.api, args, node)
        return getattr(self, f"special_{fn.kind}")(fn, args, node)

    def api_call(self, fn: ApiFunction, args: dict[str, Argument], node: ast.Call):
        operands = [self.operand(fn, p, args[p.name]) for p in fn.params]
        templates = {t.name: self.template(fn, t, args[t.name]) for t in fn.templates if args[t.name].given}
        op = self.emit(api_call(fn.name, operands, templates), node)
        return op.results[0] if op.results else None

    def operand(self, fn: ApiFunction, param: Param, arg: Argument) -> SSAValue:
        value, node = arg.value, arg.node
        what = f"argument {param.name!r} of {fn.name}()"
        kind = param.kind
        if kind in ("u32", "i32"):
            return self.coerce_int(value, U32, node, what)
        if kind == "u64":
            return self.coerce_int(value, U64, node, what)
        if kind == "l1_ptr":
            if isinstance(value, L1Pointer):
                if value.width != 32:
                    raise self.error(node, f"{what} points to 32-bit words; make the pointer with "
                                           f"l1_ptr(addr) (width=32), not width={value.width}")
                return value.address
            return self.coerce_int(value, U32, node, what)
        if kind == "bool":
            if isinstance(value, int) or (isinstance(value, SSAValue) and value.type == i1):
                return self.coerce_int(value, BOOL, node, what)
            raise self.error(node, f"{what} takes True or False, not {describe(value)}")
        if kind == "f32":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return self.constant(value, f32, node)
            raise self.error(node, f"{what} is a float: pass a float literal or a module-level float constant, not "
                                   f"{describe(value)}")
        if kind == "accessor":
            if isinstance(value, SSAValue) and isinstance(value.type, TensorAccessorType):
                return value
            raise self.error(node, f"{what} needs a TensorAccessor (s = TensorAccessor(args, addr, page_size)), not "
                                   f"{describe(value)}")
        raise self.error(node, f"{what} has a kind ({kind}) kernels cannot pass")

    def template(self, fn: ApiFunction, t: TemplateParam, arg: Argument) -> bool | int | str:
        value, node = arg.value, arg.node
        if t.kind == "bool":
            if isinstance(value, int) and value in (0, 1):
                return bool(value)
            raise self.error(node, f"template parameter {t.name!r} of {fn.name}() takes the constant True or False, "
                                   f"not {describe(value)}")
        if t.kind == "uint32_t":
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2 ** 32:
                return value
            raise self.error(node, f"template parameter {t.name!r} of {fn.name}() takes a constant integer in "
                                   f"[0, 2**32), not {describe(value)}")
        choices = ", ".join(repr(c) for c in t.choices)
        if not isinstance(value, str):
            raise self.error(node, f"template parameter {t.name!r} of {fn.name}() takes a string constant, one of "
                                   f"{choices}; not {describe(value)}")
        if t.choices and value not in t.choices:
            raise self.error(node, f"{fn.name}(): {t.name}={value!r} is not one of {choices}")
        return value

    # -- special functions -------------------------------------------------------------------------

    def constant_index(self, fn: DeviceFunction, arg: Argument, what: str, minimum: int = 0) -> int:
        value = arg.value
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(arg.node, f"{fn.name}(): {what} must be a constant integer >= {minimum} (a literal or "
                                       f"a module-level constant), fixed when the kernel is compiled; got "
                                       f"{describe(value)}")
        return value

    def special_get_compile_time_arg_val(self, fn, args, node):
        index = self.constant_index(fn, args["arg_index"], "the compile-time argument index")
        return self.emit(GetCompileTimeArgValOp(index), node).result

    def special_tensor_accessor_args(self, fn, args, node):
        offset, crta, after = args["cta_offset"], args["crta_offset"], args["after"]
        if (offset.value is None) == (after.value is None):
            raise self.error(node, "TensorAccessorArgs takes either a compile-time offset (TensorAccessorArgs(1)) or "
                                   "the previous accessor args (TensorAccessorArgs(after=prev_args)), "
                                   + ("not both" if offset.value is not None else "and got neither"))
        crta_offset = None if crta.value is None else self.constant_index(fn, crta, "crta_offset")
        if after.value is not None:
            prev = after.value
            if not (isinstance(prev, SSAValue) and isinstance(prev.type, TensorAccessorArgsType)):
                raise self.error(after.node, f"TensorAccessorArgs(after=...) needs the previous TensorAccessorArgs, "
                                             f"not {describe(prev)}")
            op = TensorAccessorArgsOp(prev=prev, crta_offset=crta_offset)
        else:
            op = TensorAccessorArgsOp(cta_offset=self.constant_index(fn, offset, "cta_offset"),
                                      crta_offset=crta_offset)
        return self.emit(op, node).result

    def special_tensor_accessor(self, fn, args, node):
        accessor_args = args["args"]
        value = accessor_args.value
        if not (isinstance(value, SSAValue) and isinstance(value.type, TensorAccessorArgsType)):
            raise self.error(accessor_args.node, f"TensorAccessor(args, ...) needs a TensorAccessorArgs "
                                                 f"(args = TensorAccessorArgs(offset)), not {describe(value)}")
        address = self.coerce_int(args["bank_base_address"].value, U32, args["bank_base_address"].node,
                                  "argument 'bank_base_address' of TensorAccessor()")
        page_size = self.coerce_int(args["page_size"].value, U32, args["page_size"].node,
                                    "argument 'page_size' of TensorAccessor()")
        return self.emit(TensorAccessorOp(value, address, page_size), node).result

    def special_my_x(self, fn, args, node):
        return self.emit(MyXOp(), node).result

    def special_my_y(self, fn, args, node):
        return self.emit(MyYOp(), node).result

    def special_l1_ptr(self, fn, args, node):
        width = args["width"]
        if not (isinstance(width.value, int) and not isinstance(width.value, bool) and width.value in (8, 16, 32)):
            raise self.error(width.node, f"l1_ptr(addr, width): width must be the constant 8, 16 or 32, not "
                                         f"{describe(width.value)}")
        address = self.coerce_int(args["addr"].value, U32, args["addr"].node, "argument 'addr' of l1_ptr()")
        return L1Pointer(address, int(width.value))

    def special_array(self, fn, args, node):
        dtype = args["dtype"]
        if not (isinstance(dtype.value, Static) and isinstance(dtype.value.obj, DeviceFunction)
                and dtype.value.obj.kind in ELEMENT_TYPES):
            raise self.error(dtype.node, f"array(dtype, size): dtype must be uint32 or uint64, not "
                                         f"{describe(dtype.value)}")
        size = self.constant_index(fn, args["size"], "the array size", minimum=1)
        element = U64 if dtype.value.obj.kind == "uint64" else U32
        return self.emit(memref.AllocaOp.get(element, shape=[size]), node).memref

    def _cast(self, fn, args, node, t: IntegerType):
        arg = args["value"]
        value = arg.value
        if isinstance(value, int) and not isinstance(value, bool):
            if not 0 <= value < 2 ** int_width(t):
                raise self.error(arg.node, f"{fn.name}({value}): the constant is outside 0-{2 ** int_width(t) - 1}")
            return self.constant(value, t, node)
        if is_int_value(value) and value.type != i1 and int_width(value.type) > int_width(t):
            return self.emit(arith.TruncIOp(value, t), node).result
        return self.coerce_int(value, t, arg.node, f"argument of {fn.name}()")

    def special_uint32(self, fn, args, node):
        return self._cast(fn, args, node, U32)

    def special_uint64(self, fn, args, node):
        return self._cast(fn, args, node, U64)

    def min_max(self, is_min: bool, node: ast.Call):
        name = "min" if is_min else "max"
        if node.keywords or len(node.args) < 2:
            raise self.error(node, f"{name}() in a kernel takes two or more integers: {name}(a, b, ...)")
        values = [(self.expr(a), a) for a in node.args]
        for value, arg in values:
            self.check_arithmetic(value, arg, f"{name}()")
        if all(isinstance(v, int) and v >= 0 for v, _ in values):
            return (min if is_min else max)(int(v) for v, _ in values)
        t = wider(*(v.type for v, _ in values if isinstance(v, SSAValue)))
        result = None
        for value, arg in values:
            operand = self.coerce_int(value, t, arg, f"an argument of {name}()")
            result = operand if result is None else self.emit(
                (arith.MinUIOp if is_min else arith.MaxUIOp)(result, operand), node).result
        return result

    # -- @inline helpers ---------------------------------------------------------------------------

    def inline_call(self, helper: InlineFunction, node: ast.Call):
        if helper in self.inlining:
            raise self.error(node, f"@inline helper {helper.name} calls itself; kernels cannot recurse, use a loop")
        source = helper.cache.get("source") or FunctionSource.of(helper.python_function, "helper")
        helper.cache["source"] = source
        spec = source.tree.args
        if spec.vararg or spec.kwarg or spec.posonlyargs:
            raise source.error(source.tree, f"@inline helper {helper.name} takes *args, **kwargs or positional-only "
                                            f"parameters; give it plain named parameters")
        signature = inspect.signature(helper.python_function)
        args = self.arguments(helper.name, signature, node)
        values: dict[str, object] = {}
        for pname, arg in args.items():
            value = arg.value if arg.given else self.static_value(arg.value, pname)
            if isinstance(value, Static):
                raise source.error(source.tree, f"the default value of parameter {pname!r} of {helper.name} is "
                                                f"{describe(value)}; defaults must be numbers or strings")
            values[pname] = (value, arg.node)
        widths = {p: (int_width(v.type) if isinstance(v, SSAValue) and int_width(v.type) else 0)
                  for p, (v, _) in values.items()}
        frame = Frame(source, analyse(source, list(values), widths), is_helper=True)
        saved_block = self.block
        self.frames.append(frame)
        self.inlining.append(helper)
        try:
            for pname, (value, arg_node) in values.items():
                if pname in frame.plan.mutable:
                    binding = self.declare(pname, source.tree)
                    stored = self.coerce_int(value, binding.type, source.tree, f"parameter {pname!r}")
                    self.emit(memref.StoreOp.get(stored, binding.ref, []), source.tree)
                else:
                    frame.env[pname] = Local(value)
            self.body(source.tree.body, ())
        finally:
            self.frames.pop()
            self.inlining.pop()
            self.block = saved_block
        return frame.return_value
