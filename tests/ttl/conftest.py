"""Snapshot fixtures of the TT-Lang tests: IR (.mlir) and C++ (.cpp) files under __snapshots__/."""

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
