"""winohdl/network/sum_multiplier.py: the requantisation of a sum of two activations at their own trained
scales, checked against exact rationals pair by pair (independently of the module's integer reference)."""

from fractions import Fraction

import numpy as np
import pytest

from winohdl.network import multiplier, sum_multiplier


def brute(ratios, range_a, range_b, lo, hi, M, shift):
    """Pairs where round((a * M_a + b * M_b) / 2**shift) differs from round(a * r_a + b * r_b), both clamped,
    in Python Fractions (round: half to even)."""
    return sum(min(hi, max(lo, round(a * ratios[0] + b * ratios[1])))
               != min(hi, max(lo, round(Fraction(a * M[0] + b * M[1], 1 << shift))))
               for a in range(range_a[0], range_a[1] + 1) for b in range(range_b[0], range_b[1] + 1))


# scales of real exports (the residual digits model: main branch, block input, after the sum) and others
@pytest.mark.parametrize("scales, clamp", [((0.1842, 0.03791, 0.2041), (0, 127)),
                                           ((0.006331506, 0.012134389, 0.014239004), (-128, 127)),
                                           ((0.5, 0.25, 0.125), (-128, 127)), ((0.01, 0.3, 0.07), (0, 255))])
def test_every_pair_rounds_as_the_exact_sum(scales, clamp):
    ratios = tuple(multiplier.ratio(s, 1.0, scales[2]) for s in scales[:2])
    m = sum_multiplier.choose(ratios, (-128, 127), (-128, 127), *clamp)
    assert m.differ == 0 and m.checked == 256 * 256 and min(m.M) >= 1
    a, b = sum_multiplier.pairs((-128, 127), (-128, 127))
    assert np.array_equal(sum_multiplier.implemented(m.M, m.shift, a, b, *clamp),
                          sum_multiplier.reference(ratios, a, b, *clamp))
    # the reference itself against Fractions on a corner of the pairs (the ends and around zero)
    for ra, rb in (((-128, -120), (120, 127)), ((-6, 6), (-6, 6)), ((120, 127), (120, 127))):
        assert brute(ratios, ra, rb, *clamp, m.M, m.shift) == 0
    if all(r.denominator & (r.denominator - 1) == 0 for r in ratios):     # powers of two: M / 2**shift is r
        assert all(Fraction(M, 1 << m.shift) == r for M, r in zip(m.M, ratios))


def test_the_narrowest_shift_is_taken():
    ratios = tuple(multiplier.ratio(s, 1.0, 0.2041) for s in (0.1842, 0.03791))
    m = sum_multiplier.choose(ratios, (-128, 127), (0, 127), -128, 127)
    M = tuple(round(r * (1 << (m.shift - 1))) for r in ratios)        # one bit less: some pair rounds otherwise
    assert brute(ratios, (-128, 127), (0, 127), -128, 127, M, m.shift - 1) > 0


def test_where_no_multipliers_are_exact_the_pairs_that_differ_are_counted():
    # a/3 + b/6 = (2a + b)/6 lands on half-integers (2a + b = 3 mod 6) that M / 2**s cannot all round to even
    ratios = (Fraction(1, 3), Fraction(1, 6))
    m = sum_multiplier.choose(ratios, (-20, 20), (-20, 20), -128, 127)
    assert m.differ == brute(ratios, (-20, 20), (-20, 20), -128, 127, m.M, m.shift) > 0
    assert m.bits <= multiplier.MAX_BITS
