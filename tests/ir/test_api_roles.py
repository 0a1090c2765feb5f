"""Every parameter of the TT-Metalium API table has a role, and the role table names no parameter
the API does not have."""

from tilefold.ir.ttkernel_api import API, PARAM_ROLES

ROLES = {"cb", "dst", "per_lane", "scalar"}


def test_every_parameter_has_a_known_role():
    for fn in API.values():
        for p in fn.params:
            assert p.role in ROLES, (fn.name, p.name)


def test_the_role_table_has_only_parameters_of_the_api():
    used = {p.name for fn in API.values() for p in fn.params}
    assert set(PARAM_ROLES) == used


def test_dst_parameters_belong_to_compute_calls_and_cb_parameters_to_circular_buffer_users():
    for fn in API.values():
        for p in fn.params:
            if p.role == "dst":
                assert fn.thread == "compute", fn.name
