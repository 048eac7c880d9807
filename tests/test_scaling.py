from fractions import Fraction

import numpy as np

from hdl.scaling import scale_card
from winohdl.core.card import prove_identity
from miner.constructive import constructive_card
from winohdl.core.reference import reference_conv


def test_scaled_form_is_integer_and_proven(suite_entry):
    card = constructive_card(suite_entry.geometry)
    s = scale_card(card)
    assert all(isinstance(v, int) for m in (s.BT, s.G, s.AT) for row in m for v in row)
    assert prove_identity(card.geometry, *s.rational_terms()) == card.entries_checked


def test_scaled_form_computes_the_card_integers(suite_entry):
    g = suite_entry.geometry
    card = constructive_card(g)
    s = scale_card(card)
    rng = np.random.default_rng(2)
    for _ in range(5):
        d, k = rng.integers(-99, 99, g.n_d).tolist(), rng.integers(-99, 99, g.n_g).tolist()
        via_card = [sum(a * sum(Fraction(b) * x for b, x in zip(card.BT[r], d))
                        * sum(Fraction(c) * w for c, w in zip(card.G[r], k)) for r, a in enumerate(row))
                    for row in card.AT]
        assert s.compute(d, k) == via_card == reference_conv(g, d, k).long().tolist()


def test_power_of_two_denominators_become_shifts():
    from winohdl.core.suite import BY_NAME
    s = scale_card(constructive_card(BY_NAME["f2_3"].geometry))
    assert set(s.divisor) == {2} and s.shift_and_odd(0) == (1, 1)


def test_g_odd_placement_moves_every_power_of_two_of_g_into_a_t(suite_entry):
    """``G-odd``: proven, no G row divisible by 2, and each A^T column that many times the
    ``G`` placement's (up to the folded signs), the divisors unchanged."""
    card = constructive_card(suite_entry.geometry)
    odd, even = scale_card(card, "G-odd"), scale_card(card, "G")
    assert prove_identity(card.geometry, *odd.rational_terms()) == card.entries_checked
    assert odd.divisor == even.divisor
    for r, (row_odd, row_even) in enumerate(zip(odd.G, even.G)):
        content = np.gcd.reduce([abs(v) for v in row_odd])
        assert content % 2 == 1
        factor = Fraction(np.gcd.reduce([abs(v) for v in row_even]), content)
        assert factor.denominator == 1 and factor.numerator & (factor.numerator - 1) == 0
        assert [abs(v) * factor for v in row_odd] == [abs(v) for v in row_even]
        assert [abs(row[r]) for row in odd.AT] == [abs(row[r]) * factor for row in even.AT]


def test_g_odd_placement_frees_f4x4_from_g_scales():
    from winohdl.core.suite import BY_NAME
    s = scale_card(constructive_card(BY_NAME["f4_3"].geometry), "G-odd")
    assert [np.gcd.reduce([abs(v) for v in row]) for row in s.G] == [3, 1, 1, 1, 1, 3]
    assert [np.gcd.reduce([abs(v) for v in col]) for col in zip(*s.AT)] == [2, 4, 4, 1, 1, 8]
    assert s.divisor == (24,) * 4
