"""Fixtures of the program-factory tests: C++ snapshots as .cpp files under __snapshots__/."""

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class CppSnapshotExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "cpp"


@pytest.fixture
def cpp_snapshot(snapshot):
    return snapshot.use_extension(CppSnapshotExtension)
