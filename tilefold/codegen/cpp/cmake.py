"""``CMakeLists.txt`` that builds a generated ``main.cpp`` against an installed TT-Metalium.

Reads: a project name. Writes: CMake text. The project is found, in order, as the
``TT-Metalium`` CMake package (``CMAKE_PREFIX_PATH`` / ``TT-Metalium_DIR``, or the build folders
of ``$TT_METAL_HOME``), else as the headers and ``libtt_metal`` of a tt-metal build in
``$TT_METAL_HOME``; when neither exists, configuring stops with a message saying what to set.
C++20, like TT-Metalium itself. ``PROJECT_DIR`` tells the program where the kernel sources and
``data/`` are.
"""

from __future__ import annotations

import re

_TEMPLATE = """\
# Builds the tilefold host program @NAME@ (main.cpp) against TT-Metalium 0.69.
cmake_minimum_required(VERSION 3.16)
project(@NAME@ LANGUAGES CXX)

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)

add_executable(@NAME@ main.cpp)
# Kernel sources (*.cpp next to main.cpp) and data files (data/) are read at run time from this folder.
target_compile_definitions(@NAME@ PRIVATE PROJECT_DIR="${CMAKE_CURRENT_SOURCE_DIR}")

# 1. The TT-Metalium CMake package: installed (CMAKE_PREFIX_PATH or TT-Metalium_DIR) or built in TT_METAL_HOME.
set(TT_METAL_HOME "$ENV{TT_METAL_HOME}")
if(TT_METAL_HOME)
  find_package(TT-Metalium CONFIG QUIET
    HINTS "${TT_METAL_HOME}/build" "${TT_METAL_HOME}/build_Release" "${TT_METAL_HOME}/build/lib/cmake"
          "${TT_METAL_HOME}/build_Release/lib/cmake")
else()
  find_package(TT-Metalium CONFIG QUIET)
endif()

if(TT-Metalium_FOUND)
  message(STATUS "@NAME@: using the TT-Metalium package in ${TT-Metalium_DIR}")
  target_link_libraries(@NAME@ PRIVATE TT::Metalium)
elseif(TT_METAL_HOME)
  # 2. A tt-metal build without an installed package: its headers and libraries.
  find_library(TT_METAL_LIBRARY tt_metal
    HINTS "${TT_METAL_HOME}/build/lib" "${TT_METAL_HOME}/build_Release/lib" NO_DEFAULT_PATH)
  if(NOT TT_METAL_LIBRARY)
    message(FATAL_ERROR "@NAME@: TT_METAL_HOME is ${TT_METAL_HOME} but it has no build/lib/libtt_metal.so; "
                        "build tt-metal there first (./build_metal.sh) or point CMAKE_PREFIX_PATH at an installed "
                        "TT-Metalium package.")
  endif()
  get_filename_component(TT_METAL_LIBRARY_DIR "${TT_METAL_LIBRARY}" DIRECTORY)
  get_filename_component(TT_METAL_BUILD_DIR "${TT_METAL_LIBRARY_DIR}" DIRECTORY)
  message(STATUS "@NAME@: using the tt-metal build in ${TT_METAL_BUILD_DIR}")
  target_include_directories(@NAME@ SYSTEM PRIVATE
    "${TT_METAL_BUILD_DIR}/include"
    "${TT_METAL_BUILD_DIR}/include/metalium-thirdparty"
    "${TT_METAL_BUILD_DIR}/libexec/tt-metalium"
    "${TT_METAL_BUILD_DIR}/libexec/tt-metalium/tt_metal/hostdevcommon/api"
    "${TT_METAL_HOME}"
    "${TT_METAL_HOME}/tt_metal/api"
    "${TT_METAL_HOME}/tt_metal/hostdevcommon/api"
    "${TT_METAL_HOME}/tt_stl")
  target_compile_definitions(@NAME@ PRIVATE FMT_HEADER_ONLY=1 SPDLOG_FMT_EXTERNAL)
  find_library(TT_STL_LIBRARY tt_stl HINTS "${TT_METAL_LIBRARY_DIR}" NO_DEFAULT_PATH)
  find_library(TT_DEVICE_LIBRARY device HINTS "${TT_METAL_LIBRARY_DIR}" NO_DEFAULT_PATH)
  target_link_libraries(@NAME@ PRIVATE "${TT_METAL_LIBRARY}")
  foreach(library IN ITEMS TT_STL_LIBRARY TT_DEVICE_LIBRARY)
    if(${library})
      target_link_libraries(@NAME@ PRIVATE "${${library}}")
    endif()
  endforeach()
  set_target_properties(@NAME@ PROPERTIES BUILD_RPATH "${TT_METAL_LIBRARY_DIR}")
else()
  message(FATAL_ERROR "@NAME@: TT-Metalium not found. Install it and add its prefix to CMAKE_PREFIX_PATH "
                      "(or set TT-Metalium_DIR to the folder holding TT-MetaliumConfig.cmake), or set the "
                      "TT_METAL_HOME environment variable to a built tt-metal checkout.")
endif()
"""


def cmake_target_name(project_name: str) -> str:
    """A CMake project and target name spelled like ``project_name``."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", project_name).strip("_") or "program"
    return name if not name[0].isdigit() else "program_" + name


def emit_cmake(project_name: str) -> str:
    """The ``CMakeLists.txt`` of a generated project named ``project_name``."""
    return _TEMPLATE.replace("@NAME@", cmake_target_name(project_name))
