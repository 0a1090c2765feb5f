"""Fixtures of the TT-Lang tests: snapshots of IR (.mlir) and C++ (.cpp) files under __snapshots__/, and the
number of simulated chips (``chips``)."""

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class MlirSnapshotExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "mlir"


class CppSnapshotExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "cpp"


@pytest.fixture
def mlir_snapshot(snapshot):
    return snapshot.use_extension(MlirSnapshotExtension)


@pytest.fixture
def ttl_cpp_snapshot(snapshot):
    return snapshot.use_extension(CppSnapshotExtension)


@pytest.fixture
def chips():
    """``chips(n)`` simulates ``n`` chips for the test (the session's number again after it)."""
    from tilefold.frontend.ttl.mesh import set_num_devices

    def use(n):
        set_num_devices(n)
    yield use
    set_num_devices(None)
