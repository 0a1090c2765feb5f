"""The ``ttl.dispatch`` ops: a static dispatcher's schedule of operations, as IR.

Reads / writes: nothing; defines the ops :mod:`tilefold.frontend.ttl.dispatch` builds. A module
holds one ``ttl.dispatch.target`` per operation the dispatcher calls and a ``func.func`` marked
``ttl.dispatcher`` whose body invokes them in order::

    ttl.dispatch.target @scale {identity = "...", arguments = ["x", "y"], contracts = [...]}
        : (tensor<1x1x!ttcore.tile<32x32, bf16>>, tensor<...>) -> ()
    func.func @pipeline(%arg0: tensor<...>, %arg1: tensor<...>) attributes {ttl.dispatcher} {
      ttl.dispatch.invoke @scale(%arg0, %arg1 : tensor<...>, tensor<...>)
      func.return
    }

A resolved schedule (its argument contracts checked) is marked ``ttl.dispatch.resolved`` too.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, FunctionType, StringAttr, SymbolRefAttr
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, var_operand_def
from xdsl.printer import Printer

from tilefold.ir.context import register_dialect

DISPATCHER_ATTR = "ttl.dispatcher"
RESOLVED_ATTR = "ttl.dispatch.resolved"


@irdl_op_definition
class DispatchTargetOp(IRDLOperation):
    """``ttl.dispatch.target @symbol``: an operation a dispatcher invokes — its stable identity, its
    parameters' names, their argument contracts (``access:storage[:state]``) and the types of one
    call's arguments."""

    name = "ttl.dispatch.target"
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    identity = prop_def(StringAttr)
    arguments = prop_def(ArrayAttr)
    contracts = prop_def(ArrayAttr)

    def __init__(self, symbol: str, function_type: FunctionType, identity: str, arguments, contracts):
        super().__init__(properties={
            "sym_name": StringAttr(symbol), "function_type": function_type, "identity": StringAttr(identity),
            "arguments": ArrayAttr([StringAttr(a) for a in arguments]),
            "contracts": ArrayAttr([StringAttr(c) for c in contracts])})

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data} {{identity = ")
        printer.print_attribute(self.identity)
        printer.print_string(", arguments = ")
        printer.print_attribute(self.arguments)
        printer.print_string(", contracts = ")
        printer.print_attribute(self.contracts)
        printer.print_string("} : ")
        printer.print_attribute(self.function_type)


@irdl_op_definition
class DispatchInvokeOp(IRDLOperation):
    """``ttl.dispatch.invoke @symbol(%a, %b : types)``: one run of a target, on dispatcher arguments."""

    name = "ttl.dispatch.invoke"
    callee = prop_def(SymbolRefAttr)
    inputs = var_operand_def()

    def __init__(self, symbol: str, inputs: list[SSAValue]):
        super().__init__(operands=[inputs], properties={"callee": SymbolRefAttr(symbol)})

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.callee.root_reference.data}(")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([v.type for v in self.inputs], printer.print_attribute)
        printer.print_string(")")


TTL_DISPATCH = Dialect("ttl.dispatch", [DispatchTargetOp, DispatchInvokeOp], [])
register_dialect(TTL_DISPATCH)
