from fractions import Fraction

import pytest

from winohdl.core.card import AlgorithmCard
from miner.constructive import constructive_card, toom_points, unit_correlation
from winohdl.core.geometry import Geometry


def test_constructive_card_is_proven_at_lower_bound(suite_entry):
    card = constructive_card(suite_entry.geometry)
    assert card.rank == suite_entry.r_min
    assert card.entries_checked == suite_entry.geometry.n_y * suite_entry.geometry.n_d * suite_entry.geometry.n_g
    assert card.provenance["method"] == "constructive"
    # the reloaded card is re-proven from its JSON
    assert AlgorithmCard.from_json(card.to_json()) == card


def test_no_saving_note_only_where_due(suite_entry):
    card = constructive_card(suite_entry.geometry)
    assert (card.note() is not None) == (suite_entry.r_min == suite_entry.direct)


def test_f23_matches_lavin_up_to_term_signs():
    card = constructive_card(Geometry.parse("2", "3"))
    assert [list(map(abs, r)) for r in card.BT] == [[1, 0, 1, 0], [0, 1, 1, 0], [0, 1, 1, 0], [0, 1, 0, 1]]
    assert card.max_denominator() == 2


def test_points_are_small_and_distinct():
    pts = toom_points(7)
    assert pts == [0, 1, -1, 2, -2, Fraction(1, 2), Fraction(-1, 2)]


@pytest.mark.parametrize("m, k", [(1, 3), (3, 1), (2, 2), (5, 4)])
def test_unit_correlation_sizes(m, k):
    BT, G, AT = unit_correlation(m, k)
    assert len(BT) == m + k - 1 and len(AT) == m and len(G[0]) == k


@pytest.mark.parametrize("spec", [("3", "5", "2", "3"), ("2x3", "2x2", "3x1", "1x2"), ("3", "4", "4", "2"),
                                  ("2x1x2", "2x3x2", "1x2x1", "2x1x1")])
def test_any_geometry_reaches_its_bound(spec):
    g = Geometry.parse(*spec)
    assert constructive_card(g).rank == g.lower_bound()
