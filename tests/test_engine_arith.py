"""The engine's arithmetic: each Winograd-domain word kept modulo ``2^word_bits[r]`` gives every
output exactly, and one bit fewer does not (the bit is read)."""

import numpy as np
import pytest

from hdl.engine.arith import EngineArithmetic
from hdl.scaling import two_adic
from hdl.engine.options import EngineKind, EngineOptions
from winohdl.core.suite import SUITE

from engine_helpers import datapath


def wrap(v: int, bits: int) -> int:
    """v modulo 2^bits, two's complement."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def hardware_outputs(arith: EngineArithmetic, AT, acc) -> list[int]:
    """The engine's outputs from accumulator values: each word wrapped at its ``word_bits``,
    A^T modulo 2^W, the exact division as built (shift, then the odd part's inverse)."""
    W = arith.modulus_bits
    words = [wrap(a, b) for a, b in zip(acc, arith.word_bits)]
    out = []
    for o, d in enumerate(arith.divisions):
        x = wrap(sum(int(c) * w for c, w in zip(AT[o], words)), W)
        out.append(wrap((x >> d.shift) * d.inverse, arith.y_width))
    return out


def test_two_adic():
    assert [two_adic(c) for c in (1, -2, 12, 24, -7, 64)] == [0, 1, 2, 3, 0, 6]


@pytest.mark.parametrize("entry", SUITE, ids=lambda e: e.name)
def test_word_bits_are_exactly_the_bits_the_outputs_read(entry):
    g = entry.geometry
    opts = EngineOptions(g, 5, 1, tuple(2 * n for n in g.input), tuple([1] * g.axes))
    dp = datapath(g, opts)
    arith = EngineArithmetic(opts, dp, EngineKind.WINOGRAD)
    s = dp.scaled
    BT, G, AT = (np.array(m, dtype=object) for m in (s.BT, s.G, s.AT))
    lo_d, hi_d = -(1 << (opts.data_width - 1)), (1 << (opts.data_width - 1)) - 1
    lo_g, hi_g = -(1 << (opts.kernel_width - 1)), (1 << (opts.kernel_width - 1)) - 1
    rng = np.random.default_rng(len(entry.name))
    layers = [(rng.integers(lo_d, hi_d + 1, (opts.C, g.n_d)), rng.integers(lo_g, hi_g + 1, (opts.C, g.n_g)))
              for _ in range(4)]
    layers += [(np.full((opts.C, g.n_d), x), np.full((opts.C, g.n_g), w)) for x in (lo_d, hi_d) for w in (lo_g, hi_g)]
    assert all(b <= arith.modulus_bits for b in arith.word_bits)
    for d, k in layers:
        acc = [int(v) for v in ((d.astype(object) @ BT.T) * (k.astype(object) @ G.T)).sum(axis=0)]
        exact = [sum(int(c) * a for c, a in zip(AT[o], acc)) // s.divisor[o] for o in range(g.n_y)]
        assert hardware_outputs(arith, AT, acc) == exact
        for r, b in enumerate(arith.word_bits):
            step = [0] * len(acc)
            step[r] = 1 << b          # invisible: the word wraps there
            assert hardware_outputs(arith, AT, [a + x for a, x in zip(acc, step)]) == exact
            if b > 1:
                step[r] = 1 << (b - 1)  # bit b - 1 is read: one bit fewer would be wrong
                assert hardware_outputs(arith, AT, [a + x for a, x in zip(acc, step)]) != exact
