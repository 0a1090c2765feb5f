"""Names in generated C++: the user's names when possible, never a clash."""

from tilefold.codegen.cpp.names import HOST_RESERVED, Identifiers, file_stem, is_cpp_identifier, sanitize


def test_users_names_are_kept_and_clashes_get_a_suffix():
    names = Identifiers()
    assert names.unique("stick_id") == "stick_id"
    assert names.unique("stick_id") == "stick_id_1"
    assert names.unique("stick_id") == "stick_id_2"
    assert names.unique(None) == "v0"
    assert names.unique("1st") == "v1"            # not an identifier
    assert names.unique("__x") == "v2"            # reserved by C++
    assert names.unique("v3") == "v3"
    assert names.fresh() == "v4"                  # v3 is taken by the user


def test_environment_names_are_never_given():
    kernel = Identifiers()
    assert kernel.unique("noc_index") == "noc_index_1"
    assert kernel.unique("cb_push_back") == "cb_push_back_1"
    assert kernel.unique("float") == "float_1"
    assert kernel.unique("program") == "program"  # only the host program uses this name
    host = Identifiers(HOST_RESERVED)
    assert host.unique("program") == "program_1"
    assert host.unique("noc_index") == "noc_index"


def test_sibling_scopes_may_reuse_a_name():
    names = Identifiers()
    names.push_scope()
    assert names.unique("i") == "i"
    names.pop_scope()
    names.push_scope()
    assert names.unique("i") == "i"               # the first loop's i is out of scope
    names.push_scope()
    assert names.unique("i") == "i_1"             # but not inside the loop that declares it
    names.pop_scope()
    names.pop_scope()


def test_free_text_becomes_identifiers_and_file_names():
    assert sanitize("in-0") == "in_0"
    assert sanitize("0th") == "v0th"
    assert is_cpp_identifier("tile_bytes") and not is_cpp_identifier("tile bytes")
    assert file_stem("out/x") == "out_x"
    assert file_stem("..hidden") == "hidden"
