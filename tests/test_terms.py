"""Class-constant terms: the catalogue holds the constructive algorithms' terms, a random-start
float algorithm moves onto catalogue terms and proves on every suite geometry, polishing only
ever lowers the documented cost."""

import numpy as np
import pytest

from miner.als import fit, random_factors
from winohdl.core.card import AlgorithmCard
from miner.constructive import constructive_card
from hdl.cost import cost_key
from miner.costs import card_key
from miner.rationalise import rationalise
from winohdl.core.suite import BY_NAME
from miner.terms import TermCatalogue, card_terms, polish, snap_structural


def _leading_one(v):
    first = next(x for x in v if x)
    return tuple(x / first for x in v)


def test_catalogue_holds_the_constructive_terms(suite_entry):
    g = suite_entry.geometry
    cat = TermCatalogue(g, q_max=2)
    catalogue = {_leading_one(a) for a in cat.a_vectors}
    for a, k in card_terms(constructive_card(g)):
        assert _leading_one(a) in catalogue
        w = cat.class_values(a, k)  # a k^T is constant on every class
        for members, value in zip(cat.classes, w):
            assert {a[y] * k[j] for y, j in members} == {value}


def _exact_float_algorithm(g, seed):
    T = g.tensor().astype(float)
    rng = np.random.default_rng(seed)
    for _ in range(100):  # a few starts suffice on the suite; bounded so a regression fails, not hangs
        f = random_factors(T.shape, g.lower_bound(), rng)
        if fit(T, f, sweeps=1500) < 1e-6:
            return f
    raise AssertionError(f"no exact ALS start for {g.name} in 100 tries")


@pytest.mark.slow(6)
def test_random_start_moves_onto_catalogue_terms_and_proves(suite_entry):
    g = suite_entry.geometry
    seed = 1 if g.name == "o4x4_k3x3_s1x1_d1x1" else 3  # seeds whose first few ALS starts are exact (fast)
    f = _exact_float_algorithm(g, seed=seed)
    card = snap_structural(g, f, 4, {"method": "als", "seed": seed})
    assert card is not None and card.rank == g.lower_bound()
    assert AlgorithmCard.from_json(card.to_json()) == card  # re-proven on load
    simple = {_leading_one(a) for a in TermCatalogue(g, q_max=2).a_vectors}
    assert all(_leading_one(a) in simple for a, _ in card_terms(card))  # points from 0, +-1, +-2, +-1/2, inf


def test_an_inexact_float_algorithm_is_not_moved():
    g = BY_NAME["f2x2_3x3"].geometry
    f = _exact_float_algorithm(g, seed=0)
    f.G[0] += 0.05
    assert snap_structural(g, f, 4, {}) is None


def test_rationalise_refits_an_approximate_algorithm_then_proves():
    g = BY_NAME["s2_5x5"].geometry
    f = _exact_float_algorithm(g, seed=1)
    rng = np.random.default_rng(0)
    f.BT += 1e-3 * rng.standard_normal(f.BT.shape)  # what a not quite converged SGD run hands over
    card = rationalise(g, f, 4, {"method": "sgd"})
    assert card is not None and card.rank == 25


@pytest.mark.parametrize("name", ["s2_k3_o2", "f4_3", "s21_3x3"])
def test_polish_lowers_the_cost_and_keeps_a_proof(name):
    g = BY_NAME[name].geometry
    start = snap_structural(g, _exact_float_algorithm(g, seed=0), 4, {"method": "als"})
    better = polish(start, cost_key, budget=5)
    assert card_key(cost_key, better) < card_key(cost_key, start)
    assert better.provenance["polish"]["tiers"]
    AlgorithmCard.from_json(better.to_json())


def test_polish_keeps_a_card_it_cannot_improve():
    card = constructive_card(BY_NAME["f2_3"].geometry)
    assert polish(card, cost_key, budget=5) is card


def test_polish_finds_a_card_cheaper_than_the_constructive_one():
    """F(4,3): 733 adder bits against the constructive 770, by exchanging terms. (F(2x2,3x3), the
    case here before, has nothing left to find since row-column shares a factor and its negation:
    the generator realises the constructive card at 1007 bits, the polish's old find included.)"""
    g = BY_NAME["f4_3"].geometry
    base = constructive_card(g)
    better = polish(base, cost_key, budget=10)
    assert card_key(cost_key, better) < card_key(cost_key, base)


@pytest.mark.parametrize("name", ["s2_k3_o2", "s21_3x3"])
def test_mixed_terms_widen_a_stride_catalogue_and_stay_class_constant(name):
    """With a stride one A^T column admits a G space of dimension two (the phases of an output
    pair): ``mixtures`` adds the basis combinations, every one class-constant, the basis kept."""
    g = BY_NAME[name].geometry
    plain, mixed = TermCatalogue(g, q_max=1).terms(), TermCatalogue(g, q_max=1, mixtures=True).terms()
    assert set(plain) < set(mixed)
    cat = TermCatalogue(g, q_max=1)
    for a, k in mixed:
        for members, value in zip(cat.classes, cat.class_values(a, k)):
            assert {a[y] * k[j] for y, j in members} == {value}
    assert any(sum(x != 0 for x in k) > 1 and len(cat.g_space(a)) > 1 for a, k in mixed if (a, k) not in plain)


def test_mixed_terms_change_nothing_without_a_stride():
    g = BY_NAME["f2x2_3x3"].geometry
    assert TermCatalogue(g, q_max=2, mixtures=True).terms() == TermCatalogue(g, q_max=2).terms()
