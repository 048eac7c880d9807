"""Bit fields of a value as exact variables (sim/prove/fields.py), against brute force on a small box:
what a split multiplier's chunks are, and that they sum back to the operand."""

from __future__ import annotations

import itertools

from sim.prove.fields import Fields
from sim.prove.polynomial import Poly, VarTable
from sim.prove.ranges import Ranges


def _atom_values(fields, t, env: dict) -> dict:
    """The values of the field and floor variables at an input ``env`` (in creation order: a floor's base
    and a field's definition only use earlier variables)."""
    env = dict(env)
    for v, x in enumerate(t.vars):
        if x.port == "floor":
            a = fields.atoms[x.element]
            env[v] = a.base.delayed(x.delay, t).evaluate(env) >> a.shift
        elif x.port == "field":
            env[v] = fields.definition(v).evaluate(env)
            assert x.lo <= env[v] <= x.hi  # the box a field's range is decided with
    return env


def test_bit_fields_are_exact_and_chunks_sum_back():
    """Every field [a, a+n) of a value, signed or not, equals its bits on the whole box; the chunks of a
    split operand (low unsigned, top signed) and its single bits sum back to it in normal form."""
    t = VarTable()
    d = [t.var("d", i, 0, -8, 7, 2) for i in range(2)]
    fields = Fields(t, Ranges(t))
    P = Poly.linear({d[0]: 3, d[1]: -2}, 1)  # in [-37, 38]: 7 bits signed
    w = 7
    cases = [(a, n, sg) for a in range(w) for n in range(1, w - a + 1) for sg in (False, True)]
    got = {c: fields.field(P, *c, "test") for c in cases}
    chunks = fields.field(P, 0, 3, False, "test") + fields.field(P, 3, w - 3, True, "test").shl(3)
    bits = sum((fields.field(P, i, 1, i == w - 1, "test").shl(i) for i in range(w)), Poly())  # the top one signed
    assert fields.normalise(chunks) == P and fields.normalise(bits) == P
    assert fields.relaxed(chunks) == P
    for x in itertools.product(range(-8, 8), repeat=2):
        env = _atom_values(fields, t, dict(zip(d, x)))
        p = P.evaluate(env)
        for (a, n, sg), f in got.items():
            u = (p >> a) & ((1 << n) - 1)
            assert f.evaluate(env) == (u - (u >> (n - 1) << n) if sg else u), (a, n, sg, x)
