"""Entry-wise rationalisation (the fallback behind the structural snap) and the snapping tiers."""

from fractions import Fraction

import numpy as np

from miner.als import fit, random_factors
from winohdl.core.card import AlgorithmCard
from winohdl.core.rational import nullspace, tiers
from miner.rationalise import snap_terms
from winohdl.core.suite import BY_NAME


def test_tiers_grow_by_numerator_and_denominator():
    t = tiers(2)
    assert t[:2] == [[Fraction(0)], [Fraction(1), Fraction(-1)]]
    assert set(t[2]) == {Fraction(2), Fraction(-2), Fraction(1, 2), Fraction(-1, 2)}
    assert all(v.denominator <= 3 and abs(v.numerator) <= 3 for tier in tiers(3) for v in tier)


def test_nullspace_is_exact():
    rows = [[Fraction(1), Fraction(-2), Fraction(0)], [Fraction(0), Fraction(1), Fraction(-3)]]
    (x,) = nullspace(rows, 3)
    assert all(sum(a * b for a, b in zip(r, x)) == 0 for r in rows) and any(x)


def test_entrywise_term_snapping_proves_f23():
    g = BY_NAME["f2_3"].geometry
    T = g.tensor().astype(float)
    f = random_factors(T.shape, 4, np.random.default_rng(0))
    assert fit(T, f, sweeps=1500) < 1e-6
    card = snap_terms(g, f, 4, {"method": "als"})
    assert card is not None and AlgorithmCard.from_json(card.to_json()) == card
