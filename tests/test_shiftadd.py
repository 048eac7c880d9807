import numpy as np
import pytest

from hdl.shiftadd import build_graph, csd
from miner.constructive import constructive_card
from winohdl.core.suite import SUITE


@pytest.mark.parametrize("c", [0, 1, -1, 3, 7, -23, 45, 576, 2**31 - 1])
def test_csd_is_exact_and_canonical(c):
    digits = csd(c)
    assert sum(s << k for k, s in digits) == c
    shifts = [k for k, _ in digits]
    assert all(b - a >= 2 for a, b in zip(shifts, shifts[1:]))  # no two adjacent non-zero digits


@pytest.mark.parametrize("name", ["BT", "G", "AT"])
def test_graph_computes_the_matrix(suite_entry, name):
    card = constructive_card(suite_entry.geometry)
    from hdl.scaling import scale_card
    M = getattr(scale_card(card), name)
    rng = np.random.default_rng(0)
    for share in (False, True):
        g = build_graph(M, share=share)
        for _ in range(5):
            x = rng.integers(-1000, 1000, len(M[0])).tolist()
            assert g.evaluate(x) == (np.array(M, dtype=object) @ np.array(x, dtype=object)).tolist()


def test_sharing_never_costs_more(suite_entry):
    from hdl.scaling import scale_card
    s = scale_card(constructive_card(suite_entry.geometry))
    for M in (s.BT, s.G, s.AT):
        assert build_graph(M).adder_count <= build_graph(M, share=False).adder_count


def test_classic_f2x2_row_column_cost():
    # B^T (x) B^T of F(2,3) as rows then columns: 4 rows x 4 + 4 columns x 4 = 32 adders
    from hdl.scaling import scale_card
    s = scale_card(constructive_card(SUITE[6].geometry))
    assert build_graph(s.BT).adder_count == 32


def test_negated_row_counts_a_subtractor():
    g = build_graph([[-1, -1], [0, 0], [-2, 0]])
    assert g.evaluate([3, 4]) == [-7, 0, -6]
    assert g.negations == 2 and g.adder_count == 3
