"""Typed tt.* metadata: records check their fields when made, print as #tt.<kind><...> and parse back."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.utils.exceptions import VerifyException

from tilefold.ir.attributes import get_attr, set_attr
from tilefold.ir.context import parse_module, print_ir
from tilefold.ir.metadata import CircularBufferAttr

CB = {"page_size": 2048, "depth": 6, "data_format": "Float16_b", "block_tiles": [2, 1]}


def kernel() -> func.FuncOp:
    return func.FuncOp("k", ((), ()))


def test_a_record_stores_and_gives_back_its_fields():
    k = kernel()
    set_attr(k, "tt.cb.A", {**CB, "index": 3, "producer": "reader", "consumer": "compute", "scope": "shared"})
    assert isinstance(k.attributes["tt.cb.A"], CircularBufferAttr)
    assert get_attr(k, "tt.cb.A") == {**CB, "index": 3, "producer": "reader", "consumer": "compute", "scope": "shared"}


@pytest.mark.parametrize("bad, message", [
    ({**CB, "depth": 0}, "depth must be an integer >= 1"),
    ({k: v for k, v in CB.items() if k != "page_size"}, "needs its page_size"),
    ({**CB, "data_format": "bf16"}, "data_format must be one of"),
    ({**CB, "block_tiles": [2]}, "block_tiles must be 2 integers"),
    ({**CB, "producer": "dram"}, "producer must be one of"),
    ({**CB, "pages": 4}, "has no field pages"),
])
def test_a_pass_writing_bad_metadata_fails_where_it_writes_it(bad, message):
    with pytest.raises(VerifyException, match=message):
        set_attr(kernel(), "tt.cb.A", bad)


def test_records_print_and_parse_back():
    text = ('builtin.module attributes {tt.cb.A = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, '
            'data_format = "Float16_b", block_tiles = [2 : i64, 1 : i64], index = 0 : i64>} {\n}\n')
    module = parse_module(text)
    assert print_ir(module) == text
    assert module.attributes["tt.cb.A"].to_dict() == {**CB, "index": 0}


def test_the_parser_rejects_bad_records():
    with pytest.raises(Exception, match="depth"):
        parse_module('builtin.module attributes {tt.cb.A = #tt.cb<page_size = 2048, depth = -1, '
                     'data_format = "Float16_b", block_tiles = [2, 1]>} {}')


BUFFER = {"memory": "DRAM", "layout": "interleaved", "tile_shape": [32, 32], "dtype": "bf16", "shape": [64, 64],
          "padded_shape": [64, 64]}
SHARD = {"axes": ["M", "N"], "grid": [2, 2], "shard_shape_elems": [32, 32], "order": "row_major", "align_tiles": True,
         "projected_grid": [2, 2], "projected_shard_tiles": [1, 1]}


def test_a_buffer_record_holds_its_shard_record():
    k = kernel()
    set_attr(k, "tt.buffer.A", {**BUFFER, "layout": "sharded", "nd_shard": SHARD})
    assert get_attr(k, "tt.buffer.A") == {**BUFFER, "layout": "sharded", "nd_shard": SHARD}
    text = print_ir(k)
    assert '#tt.nd_shard<axes = ["M", "N"]' in text and "align_tiles = true" in text


@pytest.mark.parametrize("bad, message", [
    ({**BUFFER, "memory": "SRAM"}, "memory must be one of"),
    ({**BUFFER, "layout": "sharded"}, "a sharded buffer has an nd_shard"),
    ({**BUFFER, "nd_shard": SHARD}, "a sharded buffer has an nd_shard"),
    ({**BUFFER, "layout": "sharded", "nd_shard": {**SHARD, "projected_grid": [2]}}, "projected_grid must be 2"),
])
def test_bad_buffer_records_fail_where_they_are_written(bad, message):
    with pytest.raises(VerifyException, match=message):
        set_attr(kernel(), "tt.buffer.A", bad)


def test_a_compute_config_is_typed_and_fills_its_defaults():
    from tilefold.ir.ttkernel import COMPUTE_CONFIG_ATTR, compute_config, compute_config_attr

    k = kernel()
    k.attributes[COMPUTE_CONFIG_ATTR] = compute_config_attr("LoFi", True)
    assert compute_config(k) == {"math_fidelity": "LoFi", "fp32_dest_acc_en": True, "dst_full_sync_en": False,
                                 "math_approx_mode": False}
    assert "#ttkernel.compute_config<math_fidelity = \"LoFi\", fp32_dest_acc_en = true" in print_ir(k)
    with pytest.raises(VerifyException, match="math_fidelity must be one of"):
        compute_config_attr("HiFi5")


def test_a_pykernel_with_a_bad_compute_config_names_its_function():
    from tilefold.errors import KernelError
    from tilefold.frontend.pykernel.kernel import PyKernel

    def compute():
        pass

    with pytest.raises(KernelError, match="compute_config of compute: .*math_fidelity"):
        PyKernel(compute, "compute", "compute", {"math_fidelity": "HiFi5"}).build()


def test_maps_by_name_check_each_value():
    k = kernel()
    set_attr(k, "tt.global_roles", {"A": "input", "C": "inout"})
    set_attr(k, "tt.padded_shapes", {"A": [32, 64]})
    set_attr(k, "tt.kernels", {"reader": "reader", "compute": "compute"})
    assert get_attr(k, "tt.global_roles") == {"A": "input", "C": "inout"}
    assert get_attr(k, "tt.padded_shapes") == {"A": [32, 64]}
    with pytest.raises(VerifyException, match="A must be one of"):
        set_attr(k, "tt.global_roles", {"A": "read"})
    with pytest.raises(VerifyException, match="not a thread"):
        set_attr(k, "tt.kernels", {"dm0": "reader"})
    with pytest.raises(VerifyException, match="A must be a list of integers"):
        set_attr(k, "tt.padded_shapes", {"A": [32, 0]})


EDGE = {"buffer": "A_s", "cb": 0, "producer": "reader", "consumer": "compute", "pages": 2, "depth": 6}


def test_the_tile_dataflow_graph_is_a_record_of_edge_records():
    from tilefold.ir.metadata import DfgEdgeAttr, TileDfgAttr

    k = kernel()
    set_attr(k, "tt.tile_dfg", {"edges": [EDGE]})
    attr = k.attributes["tt.tile_dfg"]
    assert isinstance(attr, TileDfgAttr) and isinstance(attr.edges.data[0], DfgEdgeAttr)
    assert get_attr(k, "tt.tile_dfg") == {"edges": [EDGE]}
    module = parse_module(print_ir(ModuleOp([k])))
    assert get_attr(next(iter(module.ops)), "tt.tile_dfg") == {"edges": [EDGE]}


@pytest.mark.parametrize("key, bad, message", [
    ("tt.tile_dfg", {"edges": [{**EDGE, "pages": 8}]}, "does not fit the 6 pages of A_s"),
    ("tt.tile_dfg", {"edges": [{**EDGE, "consumer": "host"}]}, "consumer must be one of"),
    ("tt.vector_layouts", {"m_l": "diagonal"}, "m_l must be one of 'row', 'col'"),
    ("tile.safe_values", {"A": "zero"}, "A must be a number"),
    ("tile.views", {"V": {"base": "A"}}, "needs its shape"),
    ("tt.use_swizzle", {"panel_size": 4, "order": "row", "enable": 1}, "enable must be true or false"),
    ("tt.user_layout", {"A": {"memory": "L1", "loc": ["k.py"]}}, r"loc must be \[file, line\]"),
    ("tt.user_schedule", {"policy": "contiguous", "pages": 2}, "has no field pages"),
])
def test_every_metadata_key_checks_what_a_pass_writes(key, bad, message):
    with pytest.raises(VerifyException, match=message):
        set_attr(kernel(), key, bad)


def test_a_dictionary_under_an_untyped_key_is_refused():
    with pytest.raises(TypeError, match="metadata records are typed"):
        set_attr(kernel(), "tt.something_new", {"a": 1})


def test_user_annotations_keep_what_the_user_wrote_for_the_pass_to_check():
    k = kernel()
    layout = {"A": {"memory": "l1", "layout": "sharded", "nd_shard": {"grid": [2, 2]}, "loc": ["k.py", 3]}}
    set_attr(k, "tt.user_layout", layout)
    assert get_attr(k, "tt.user_layout") == layout
    set_attr(k, "tile.safe_values", {"A": 1.5})
    set_attr(k, "tile.views", {"V": {"base": "A", "shape": [4, 64]}})
    text = print_ir(k)
    assert "#tt.safe_values<A = 1.500000e+00 : f64>" in text and '#tt.view<base = "A", shape = [4 : i64' in text


@pytest.mark.parametrize("fields, message", [
    (dict(kind="pipe", index=0, role="dst", slot=0, field="x0"), "a dst pipe has no field 'x0'"),
    (dict(kind="pipe", index=0, role="src"), "has fields kind, index, role, slot, field"),
    (dict(kind="cb", index=0, role="src"), "has fields kind, index, not"),
    (dict(kind="node", index=3), "index 0 \\(x\\), 1 \\(y\\) or 2 \\(device\\)"),
    (dict(kind="semaphore", index=0), "kind must be one of"),
])
def test_kernel_argument_descriptors_verify_themselves(fields, message):
    from tilefold.ir.ttl_metadata import KernelArgAttr

    with pytest.raises(VerifyException, match=message):
        KernelArgAttr.of(**fields)


def test_kernel_argument_descriptors_print_and_parse_back():
    from tilefold.ir import ttl  # noqa: F401  (registers the ttl dialect)
    from tilefold.ir.ttl_metadata import KernelArgAttr

    k = kernel()
    k.attributes["ttl.runtime_args"] = ArrayAttr([KernelArgAttr.of("node", 1), KernelArgAttr.of("pipe_count", 0, "src"),
                                                  KernelArgAttr.of("pipe", 0, "src", 1, "loopback")])
    text = print_ir(ModuleOp([k]))
    assert '#ttl.arg<kind = "pipe", index = 0 : i64, role = "src", slot = 1 : i64, field = "loopback">' in text
    args = next(iter(parse_module(text).ops)).attributes["ttl.runtime_args"]
    assert [a.to_dict() for a in args.data][1] == {"kind": "pipe_count", "index": 0, "role": "src"}


def test_a_circular_buffer_entry_checks_its_page_count():
    from tilefold.ir.ttl_metadata import CBEntryAttr

    entry = {"index": 0, "name": "c_0", "shape": [2, 2], "data_format": "Float16_b", "layout": "TILE",
             "block_count": 2, "page_size": 2048, "block_pages": 4, "num_pages": 8}
    assert CBEntryAttr.from_dict(entry).to_dict() == entry
    with pytest.raises(VerifyException, match="num_pages 6 is not block_pages 4 x block_count 2"):
        CBEntryAttr.from_dict({**entry, "num_pages": 6})


RUNTIME_ARGS = [{"name": "start_id"}, {"name": "A_mcast_start_noc_x", "role": "noc_x", "core": "A_mcast_start"},
                {"name": "A_mcast_start_noc_y", "role": "noc_y", "core": "A_mcast_start"},
                {"name": "A_addr", "role": "address", "tensor": "A"}]


def test_runtime_arguments_carry_their_roles_and_parse_back():
    from tilefold.ir.metadata import RuntimeArgAttr, noc_cores

    k = kernel()
    set_attr(k, "tt.runtime_args", RUNTIME_ARGS)
    assert all(isinstance(a, RuntimeArgAttr) for a in k.attributes["tt.runtime_args"].data)
    module = parse_module(print_ir(ModuleOp([k])))
    args = get_attr(next(iter(module.ops)), "tt.runtime_args")
    assert args == RUNTIME_ARGS
    assert noc_cores(args) == {"A_mcast_start": (1, 2)}


@pytest.mark.parametrize("bad, message", [
    ({"name": "x", "role": "noc_x"}, "role noc_x has core, not none"),
    ({"name": "x", "role": "address", "core": "c"}, "role address has tensor, not core"),
    ({"name": "x", "tensor": "A"}, "role none has no core or tensor, not tensor"),
    ({"name": "x", "role": "noc"}, "role must be one of"),
])
def test_a_runtime_argument_record_checks_its_role(bad, message):
    with pytest.raises(VerifyException, match=message):
        set_attr(kernel(), "tt.runtime_args", [bad])


def test_a_core_needs_both_its_noc_coordinates():
    from tilefold.ir.metadata import noc_cores

    with pytest.raises(VerifyException, match="core c without both"):
        noc_cores([{"name": "x", "role": "noc_x", "core": "c"}])
