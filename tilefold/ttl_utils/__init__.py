"""``ttl.utils``: the helpers TT-Lang ships beside the language, for the programs that import them.

Reads / writes: nothing of the device. ``correctness`` compares a result with a reference
(``assert_pcc``, ``assert_allclose``, ``assert_with_ulp``) on torch tensors, tilefold device
tensors or numpy arrays, without importing torch; ``block_allocation`` splits work over nodes
(``split_work_to_nodes``, ``get_number_of_nodes_from_ranges``) and picks per-node matmul blocks
(``get_large_matmul_params``). ``import ttl`` under ``tilefold sim`` and ``import tilefold.ttl``
both make ``ttl.utils`` importable.
"""

from tilefold.ttl_utils.block_allocation import (get_large_matmul_params, get_number_of_nodes_from_ranges,
                                                 split_work_to_nodes)
from tilefold.ttl_utils.correctness import assert_allclose, assert_pcc, assert_with_ulp

__all__ = ["split_work_to_nodes", "get_number_of_nodes_from_ranges", "get_large_matmul_params", "assert_pcc",
           "assert_allclose", "assert_with_ulp"]
