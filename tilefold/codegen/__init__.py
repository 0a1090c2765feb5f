"""Emitters: text from ttkernel IR and Programs.

``tilefold.codegen.cpp`` prints TT-Metalium C++ (kernels, host program, CMake project);
``tilefold.codegen.python`` prints the same kernels as Python for the simulator. Emitters
read IR and annotations and decide nothing.
"""
