"""Constructive cards with choices: every choice is a proven card at the lower bound, the
constructive card is the starting choice, and the chosen card is never dearer."""

from fractions import Fraction

import pytest

from hdl.cost import cost_key
from miner.choices import NestedChoices, chosen_card, point_sets
from miner.constructive import constructive_card, default_points
from miner.costs import card_key
from winohdl.core.card import AlgorithmCard
from winohdl.core.suite import BY_NAME


@pytest.mark.parametrize("n", [3, 4, 6, 8])
def test_point_sets_start_with_the_classic_points_and_are_distinct(n):
    sets = point_sets(n, limit=30)
    assert sets[0] == default_points(n)
    assert all(len(s) == n == len(set(s)) for s in sets)
    assert len({frozenset(s) for s in sets}) == len(sets) <= 30


@pytest.mark.parametrize("name, outer", [("asym_2x3", 0), ("asym_2x3", 1), ("s21_3x3", 1)])
def test_initial_choice_is_the_constructive_card(name, outer):
    g = BY_NAME[name].geometry
    BT, G, AT = NestedChoices(g, outer, limit=3).matrices([0] * len(NestedChoices(g, outer, limit=3).slots))
    base = constructive_card(g)
    terms = lambda bt, gg, at: sorted((tuple(bt[r]), tuple(gg[r]), tuple(row[r] for row in at))  # noqa: E731
                                      for r in range(len(bt)))
    assert terms(BT, G, AT) == terms(base.BT, base.G, base.AT)


def test_every_choice_is_proven():
    g = BY_NAME["asym_2x3"].geometry
    space = NestedChoices(g, 0, limit=3)
    for slot in range(len(space.slots)):
        choice = space.initial()
        choice[slot] = len(space.slots[slot]) - 1
        assert AlgorithmCard.build(g, *space.matrices(choice), {"method": "test"}).rank == g.lower_bound()


def test_f43_points_chosen_by_the_cost_are_cheaper():
    g = BY_NAME["f4_3"].geometry
    card = chosen_card(g, cost_key, budget=5)
    assert card.rank == g.lower_bound() and card.provenance["method"] == "constructive"
    assert AlgorithmCard.from_json(card.to_json()) == card  # re-proven on load
    assert card_key(cost_key, card) < card_key(cost_key, constructive_card(g))
    assert Fraction(3) in {abs(v) for row in card.AT for v in row}  # the points +-3


def test_chosen_card_is_never_dearer_within_a_short_budget():
    g = BY_NAME["s2_k3_o2"].geometry
    card = chosen_card(g, cost_key, budget=1)
    assert card_key(cost_key, card) <= card_key(cost_key, constructive_card(g))
