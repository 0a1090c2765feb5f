"""The generic tile writer (TT-NN ``writer_unary_interleaved_start_id.cpp``): pages of a CB to
consecutive pages of an interleaved buffer, one page at a time.

Compile-time args: ``[cb_id_out, *TensorAccessorArgs(dst)]``.
Runtime args: ``[dst_addr, num_pages, start_id]``.

The page size is the CB's (``get_tile_size``). Each page is written with
``noc_async_write_page`` and only flushed (``noc_async_writes_flushed``: the data has left L1)
before its CB page is popped; one ``noc_async_write_barrier`` at the end waits for every write
to land.
"""

from tilefold.pykernel import *


@writer_kernel
def writer():
    dst_addr = get_arg_val(0)
    num_pages = get_arg_val(1)
    start_id = get_arg_val(2)

    cb_id_out = get_compile_time_arg_val(0)
    dst_args = TensorAccessorArgs(1)
    page_bytes = get_tile_size(cb_id_out)
    s = TensorAccessor(dst_args, dst_addr, page_bytes)

    end_id = start_id + num_pages
    for i in range(start_id, end_id):
        cb_wait_front(cb_id_out, 1)
        l1_read_addr = get_read_ptr(cb_id_out)
        noc_async_write_page(i, s, l1_read_addr)
        noc_async_writes_flushed()
        cb_pop_front(cb_id_out, 1)
    noc_async_write_barrier()
