"""Misuse of PyKernel: each case raises one KernelError at this file's line, saying what to do."""

from __future__ import annotations

import inspect

import pytest

from pykernel_helpers import expect_error
from tilefold.errors import KernelError
from tilefold.pykernel import *

CB_IN = CBIndex.c_0
FLOAT_SCALE = 0.5
NOT_A_CONSTANT = [1, 2]


@inline
def helper_with_break(n):
    for i in range(n):
        break  # error


@inline
def recursive_helper(n):
    recursive_helper(n)  # error


def plain_python_function(x):
    return x


# --- constructs a kernel cannot use --------------------------------------------------------


def test_class_definition():
    @reader_kernel
    def k():
        class Block:  # error
            pass

    expect_error(k, __file__, "classes are not supported", "@inline")


def test_lambda():
    @reader_kernel
    def k():
        f = lambda x: x + 1  # error

    expect_error(k, __file__, "lambda is not supported", "@inline")


def test_comprehension():
    @reader_kernel
    def k():
        addrs = [get_arg_val(i) for i in range(4)]  # error

    expect_error(k, __file__, "comprehensions are not supported", "array(uint32, n)")


def test_try():
    @reader_kernel
    def k():
        try:  # error
            cb_push_back(CB_IN, 1)
        except Exception:
            pass

    expect_error(k, __file__, "try/except is not supported")


def test_with():
    @compute_kernel
    def k():
        with open("x"):  # error
            pass

    expect_error(k, __file__, "with statements are not supported", "tile_regs_acquire()")


def test_yield():
    @reader_kernel
    def k():
        yield 1  # error

    expect_error(k, __file__, "yield is not supported")


def test_async_kernel():
    @reader_kernel
    async def k():  # error
        await k

    expect_error(k, __file__, "async def")


@pytest.mark.parametrize("which", ["break", "continue"])
def test_break_and_continue(which):
    @reader_kernel
    def with_break():
        for i in range(4):
            break  # error

    @reader_kernel
    def with_continue():
        i = 0
        while i < 4:
            i += 1
            continue  # error

    kernel = with_break if which == "break" else with_continue
    expect_error(kernel, __file__, f"{which} is not supported", "while condition")


def test_break_in_an_inline_helper_points_at_the_helper():
    @reader_kernel
    def k():
        helper_with_break(4)

    expect_error(k, __file__, "break is not supported", marked=helper_with_break.python_function)


def test_return_with_a_value():
    @reader_kernel
    def k():
        n = get_arg_val(0)
        return n  # error

    expect_error(k, __file__, "a kernel returns nothing")


def test_return_before_the_end():
    @reader_kernel
    def k():
        if get_arg_val(0) == 0:
            return  # error
        cb_push_back(CB_IN, 1)

    expect_error(k, __file__, "return is only allowed as the last statement")


def test_global_and_nonlocal():
    @reader_kernel
    def with_global():
        global CB_IN  # error
        cb_push_back(CB_IN, 1)

    count = 0

    @reader_kernel
    def with_nonlocal():
        nonlocal count  # error
        count += 1

    expect_error(with_global, __file__, "global is not supported")
    expect_error(with_nonlocal, __file__, "nonlocal is not supported")


def test_list_literal():
    @reader_kernel
    def k():
        xs = [1, 2, 3]  # error

    expect_error(k, __file__, "list literals are not supported", "array(uint32, n)")


def test_for_over_something_else_than_range():
    @reader_kernel
    def k():
        for i in (1, 2):  # error
            pass

    expect_error(k, __file__, "iterate over range(...)")


def test_negative_range_step():
    @reader_kernel
    def k():
        for i in range(8, 0, -1):  # error
            pass

    expect_error(k, __file__, "negative step", "n - 1 - k")


def test_while_true_never_ends():
    @reader_kernel
    def k():
        while True:  # error
            pass

    expect_error(k, __file__, "never ends")


def test_kernel_parameters():
    @reader_kernel
    def k(n):  # error
        pass

    expect_error(k, __file__, "kernels take none", "get_arg_val(i)")


def test_unpacking_assignment():
    @reader_kernel
    def k():
        a, b = 1, 2  # error

    expect_error(k, __file__, "unpacking assignments (a, b = ...) are not supported")


# --- calls -------------------------------------------------------------------------------------


def test_unknown_function_suggests_api_names():
    @reader_kernel
    def k():
        cb_reserve_bak(CB_IN, 1)  # error

    expect_error(k, __file__, "unknown function 'cb_reserve_bak'", "did you mean cb_reserve_back")


def test_plain_python_function_needs_inline():
    @reader_kernel
    def k():
        plain_python_function(1)  # error

    expect_error(k, __file__, "plain Python function", "@inline")


def test_python_builtin():
    @reader_kernel
    def k():
        print(1)  # error

    expect_error(k, __file__, "print() cannot be called in a kernel")


def test_too_few_arguments_lists_the_table_parameters():
    @reader_kernel
    def k():
        cb_reserve_back(CB_IN)  # error

    expect_error(k, __file__, "wrong arguments to cb_reserve_back()", "num_pages", "cb_reserve_back(cb, num_pages)")


def test_too_many_arguments():
    @reader_kernel
    def k():
        noc_async_read_barrier(1)  # error

    expect_error(k, __file__, "too many positional arguments", "noc_async_read_barrier()")


def test_misspelt_keyword_suggests_the_parameter():
    @reader_kernel
    def k():
        cb_reserve_back(CB_IN, num_page=1)  # error

    expect_error(k, __file__, "cb_reserve_back() has no parameter 'num_page'", "did you mean num_pages",
                 "cb_reserve_back(cb, num_pages)")


def test_template_given_positionally():
    @compute_kernel
    def k():
        tile_regs_acquire()
        tile_regs_commit()
        tile_regs_wait()
        pack_tile(0, CBIndex.c_16, 0, True)  # error
        tile_regs_release()

    expect_error(k, __file__, "too many positional arguments", "*, out_of_order_output=False")


def test_unknown_template_value_lists_the_choices():
    @compute_kernel
    def k():
        reduce_init(0, 1, 16, pool_type="MIN")  # error

    expect_error(k, __file__, "pool_type='MIN' is not one of 'SUM', 'AVG', 'MAX'")


def test_template_needs_a_constant():
    @compute_kernel
    def k():
        reduce_init(0, 1, 16, reduce_dim=get_arg_val(0))  # error

    expect_error(k, __file__, "template parameter 'reduce_dim' of reduce_init() takes a string constant",
                 "'REDUCE_ROW'")


def test_non_constant_compile_time_arg_index():
    @reader_kernel
    def k():
        i = get_arg_val(0)
        n = get_compile_time_arg_val(i)  # error

    expect_error(k, __file__, "must be a constant integer", "a 32-bit integer")


def test_string_where_an_int_is_needed():
    @reader_kernel
    def k():
        cb_push_back("c_0", 1)  # error

    expect_error(k, __file__, "argument 'cb' of cb_push_back() needs an integer, not the string 'c_0'")


def test_64_bit_value_into_a_32_bit_parameter():
    @reader_kernel
    def k():
        s = TensorAccessor(TensorAccessorArgs(0), 0, 2048)
        cb_push_back(CB_IN, get_noc_addr(0, s))  # error

    expect_error(k, __file__, "argument 'num_pages' of cb_push_back() is 32-bit", "uint32(...)")


def test_accessor_parameter_needs_a_tensor_accessor():
    @reader_kernel
    def k():
        noc_async_read_page(0, 1234, get_write_ptr(CB_IN))  # error

    expect_error(k, __file__, "argument 'accessor' of noc_async_read_page() needs a TensorAccessor")


def test_tensor_accessor_args_needs_offset_or_after():
    @reader_kernel
    def k():
        args = TensorAccessorArgs()  # error

    expect_error(k, __file__, "TensorAccessorArgs takes either a compile-time offset", "got neither")


def test_void_call_used_as_a_value():
    @reader_kernel
    def k():
        n = cb_push_back(CB_IN, 1)  # error

    expect_error(k, __file__, "cb_push_back() returns nothing")


def test_recursive_helper():
    @reader_kernel
    def k():
        recursive_helper(1)

    expect_error(k, __file__, "calls itself", marked=recursive_helper.python_function)


def test_range_outside_a_for_loop():
    @reader_kernel
    def k():
        r = range(4)  # error

    expect_error(k, __file__, "range() can only be the iterable of a for loop")


# --- values ------------------------------------------------------------------------------------


def test_float_arithmetic():
    @compute_kernel
    def k():
        tile_regs_acquire()
        fill_tile(0, FLOAT_SCALE * 2)  # error
        tile_regs_commit()
        tile_regs_wait()
        tile_regs_release()

    expect_error(k, __file__, "float arithmetic is not supported")


def test_float_where_an_int_is_needed():
    @reader_kernel
    def k():
        cb_push_back(CB_IN, 1.5)  # error

    expect_error(k, __file__, "needs an integer, not the float 1.5")


def test_true_division():
    @reader_kernel
    def k():
        n = get_arg_val(0) / 2  # error

    expect_error(k, __file__, "use // for integer division")


def test_undefined_name():
    @reader_kernel
    def k():
        cb_push_back(CB_INN, 1)  # error

    expect_error(k, __file__, "name 'CB_INN' is not defined", "did you mean CB_IN")


def test_global_that_is_not_a_kernel_value():
    @reader_kernel
    def k():
        x = NOT_A_CONSTANT  # error

    expect_error(k, __file__, "cannot hold NOT_A_CONSTANT (a Python list)", "kernel values are integers")


def test_used_before_assigned():
    @reader_kernel
    def k():
        cb_push_back(CB_IN, n)  # error
        n = 1

    expect_error(k, __file__, "'n' is used before it is assigned")


def test_loop_variable_after_the_loop():
    @reader_kernel
    def k():
        for i in range(4):
            pass
        cb_push_back(CB_IN, i)  # error

    expect_error(k, __file__, "loop variable of the for loop", "only exists inside that loop")


def test_assigning_the_loop_variable():
    @reader_kernel
    def k():
        for i in range(4):
            i = 2  # error

    expect_error(k, __file__, "'i' is the loop variable")


def test_nested_loops_reusing_the_loop_variable():
    @reader_kernel
    def k():
        for i in range(4):
            for i in range(2):  # error
                pass

    expect_error(k, __file__, "reuses 'i'")


def test_reassigned_tensor_accessor():
    @reader_kernel
    def k():
        s = TensorAccessor(TensorAccessorArgs(0), 0, 2048)  # error
        s = TensorAccessor(TensorAccessorArgs(1), 0, 2048)

    expect_error(k, __file__, "'s' is assigned more than once", "cannot hold a TensorAccessor")


def test_array_index_out_of_bounds():
    @reader_kernel
    def k():
        addrs = array(uint64, 4)
        addrs[4] = 0  # error

    expect_error(k, __file__, "index 4 is outside the array of 4 elements")


def test_array_element_type():
    @reader_kernel
    def k():
        addrs = array(int, 4)  # error

    expect_error(k, __file__, "dtype must be uint32 or uint64")


def test_l1_ptr_width():
    @reader_kernel
    def k():
        p = l1_ptr(get_semaphore(0), width=12)  # error

    expect_error(k, __file__, "width must be the constant 8, 16 or 32")


def test_constant_too_large():
    @reader_kernel
    def k():
        cb_push_back(CB_IN, 1 << 40)  # error

    expect_error(k, __file__, "the constant 1099511627776 does not fit in 32 bits")


def test_shift_out_of_range():
    @reader_kernel
    def k():
        n = get_arg_val(0) << 32  # error

    expect_error(k, __file__, "shift by 32 is outside 0-31")


# --- the verifier's checks, reported at the user's line ----------------------------------------


def test_compute_api_in_a_reader_kernel():
    @reader_kernel
    def k():
        tile_regs_acquire()  # error

    expect_error(k, __file__, "tile_regs_acquire is a compute API call", "move it to the compute kernel")


def test_data_movement_api_in_a_compute_kernel():
    @compute_kernel
    def k():
        noc_async_read_barrier()  # error

    expect_error(k, __file__, "noc_async_read_barrier is a data-movement API call")


def test_pack_tile_outside_wait_release():
    @compute_kernel
    def k():
        tile_regs_acquire()
        copy_tile(CB_IN, 0, 0)
        tile_regs_commit()
        pack_tile(0, CBIndex.c_16)  # error
        tile_regs_wait()
        tile_regs_release()

    expect_error(k, __file__, "pack_tile while DST is committed", "after tile_regs_wait")


def test_cb_index_out_of_range():
    @reader_kernel
    def k():
        cb_push_back(64, 1)  # error

    expect_error(k, __file__, "circular buffer index 64 is outside 0-63")


def test_dst_index_beyond_capacity_of_the_compute_config():
    @compute_kernel(fp32_dest_acc_en=True)
    def k():
        tile_regs_acquire()
        copy_tile(CB_IN, 0, 4)  # error
        tile_regs_commit()
        tile_regs_wait()
        tile_regs_release()

    expect_error(k, __file__, "DST index 4 is beyond the 4 tiles")


# --- outside a kernel ------------------------------------------------------------------------


def test_calling_an_api_function_directly():
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(KernelError) as info:
        cb_reserve_back(CB_IN, 1)
    assert str(info.value).startswith(f"{__file__}:{line}: ")
    assert "only works inside a @reader_kernel, @writer_kernel or @compute_kernel function" in str(info.value)


def test_calling_a_kernel_or_helper_directly():
    @reader_kernel
    def k():
        pass

    with pytest.raises(KernelError, match="tilefold compiles it, Python does not run it"):
        k()
    with pytest.raises(KernelError, match="inside a @reader_kernel"):
        helper_with_break(1)


def test_decorator_arguments():
    with pytest.raises(KernelError, match="thread must be 'noc'"):
        kernel(thread="gpu")
    with pytest.raises(KernelError, match="math_fidelity must be one of LoFi, HiFi2, HiFi3, HiFi4"):
        compute_kernel(math_fidelity="HiFi5")
