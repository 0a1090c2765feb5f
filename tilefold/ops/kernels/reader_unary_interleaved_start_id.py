"""The generic tile reader (TT-NN ``reader_unary_interleaved_start_id.cpp``): consecutive pages
of an interleaved buffer into CB c_0, one page at a time.

Compile-time args: ``[*TensorAccessorArgs(src)]``.
Runtime args: ``[src_addr, num_pages, start_id]``.
"""

from tilefold.pykernel import *

CB_IN = CBIndex.c_0


@reader_kernel
def reader():
    src_addr = get_arg_val(0)
    num_pages = get_arg_val(1)
    start_id = get_arg_val(2)

    src_args = TensorAccessorArgs(0)
    page_bytes = get_tile_size(CB_IN)
    s = TensorAccessor(src_args, src_addr, page_bytes)

    end_id = start_id + num_pages
    for i in range(start_id, end_id):
        cb_reserve_back(CB_IN, 1)
        l1_write_addr = get_write_ptr(CB_IN)
        noc_async_read_page(i, s, l1_write_addr)
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)
