"""Emitters: text from ttkernel IR and Programs.

``tilefold.codegen.cpp`` prints TT-Metalium C++ (kernels, host program, CMake project);
``tilefold.codegen.plan`` prints a TileLang kernel's execution plan. The simulator prints the
same kernels as Python itself (:mod:`tilefold.sim.kernel_python`). Emitters read IR and
annotations and decide nothing.
"""
