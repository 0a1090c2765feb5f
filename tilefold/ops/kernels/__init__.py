"""PyKernel sources of the program factories, one module per kernel family.

Reads: nothing. Writes: nothing. Each module holds the kernel functions of one family, named
after the TT-Metalium kernel file they mirror; every kernel function is named by its role
(``reader``, ``compute``, ``writer``) so that a program's project folder holds
``kernels/reader.cpp``, ``kernels/compute.cpp`` and ``kernels/writer.cpp``.

========================================================  =====================================
module                                                    used by
========================================================  =====================================
:mod:`.reader_unary_stick_layout_split_rows_interleaved`  tilize: 32 row-major sticks per block
:mod:`.tilize`                                            tilize: ``tilize_block`` per block
:mod:`.writer_unary_interleaved_start_id`                 tilize, eltwise: one tile page at a time
:mod:`.reader_unary_interleaved_start_id`                 untilize: one tile page at a time
:mod:`.untilize`                                          untilize: ``untilize_block`` per block
:mod:`.writer_unary_stick_layout_split_rows_interleaved`  untilize: 32 row-major sticks per block
:mod:`.reader_binary_interleaved_start_id`                eltwise: one tile of each input
:mod:`.eltwise_binary`                                    eltwise: add / sub / mul tiles in DST
:mod:`.reader_bmm`                                        matmul (single / multi-core): A row blocks,
                                                          B column blocks of the core's output block
:mod:`.bmm`                                               matmul: K loop accumulating in DST
:mod:`.writer_bmm`                                        matmul: output sub-blocks of the core's block
========================================================  =====================================
"""
