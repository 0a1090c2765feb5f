"""Snapshots of generated C++ as .cpp files under __snapshots__/, reviewed like code."""

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class CppSnapshotExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "cpp"


@pytest.fixture
def cpp_snapshot(snapshot):
    return snapshot.use_extension(CppSnapshotExtension)
