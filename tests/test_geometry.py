import pytest

from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry
from winohdl.core.rational import exact_rank


def test_lower_bound_matches_design_table(suite_entry):
    g = suite_entry.geometry
    assert g.lower_bound() == suite_entry.r_min
    assert g.direct_count == suite_entry.direct


def test_lower_bound_equals_exact_rank_of_d_flattening(suite_entry):
    g = suite_entry.geometry
    T = g.tensor()
    flat = T.transpose(1, 0, 2).reshape(g.n_d, g.n_y * g.n_g).tolist()
    assert exact_rank(flat) == g.lower_bound()


def test_input_tile_and_name():
    g = Geometry.parse("2x2", "3x3", "2", "1")
    assert g.input == (5, 5)
    assert g.name == "o2x2_k3x3_s2x2_d1x1"
    assert Geometry.parse("4", "3", "1", "2").input == (8,)


def test_no_saving_detected():
    assert Geometry.parse("2x2", "3x3", "1", "2").no_saving()
    assert not Geometry.parse("2x2", "3x3").no_saving()


@pytest.mark.parametrize("args, words", [
    (("0", "3"), "output must be >= 1"),
    (("-2", "3"), "output must be >= 1"),
    (("2.5", "3"), "whole numbers"),
    (("2", "3", "0"), "stride must be >= 1"),
    (("2", "3", "1", "0"), "dilation must be >= 1"),
    (("2x2", "3x3x3"), "same number of axes"),
    (("2x2x2x2", "3"), "1 to 3 axes"),
    (("2", "0"), "kernel must be >= 1"),
])
def test_bad_geometry_is_one_line_error(args, words):
    with pytest.raises(WinohdlError, match=words) as exc:
        Geometry.parse(*args)
    assert "\n" not in str(exc.value)
