"""The fabric multiplier (hdl/fabric.py): exact products modulo the word, at the DSP product's latency,
and no ``$mul`` for Yosys to put in a DSP block."""

import itertools

import pytest
from amaranth.hdl import Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from hdl.components import emit_product
from hdl.fabric import booth_digits, fabric_bits, fabric_product
from hdl.options import MultiplierKind
from hdl.verilog import to_verilog


def _products(na: int, nb: int, width: int, registers: int, pairs):
    m = Module()
    a, b = Signal(signed(na)), Signal(signed(nb))
    p = fabric_product(m, a, b, width, registers, "p")
    sim, got = Simulator(m), []
    if registers:
        sim.add_clock(1e-6)

    async def bench(ctx):
        for x, y in pairs:
            ctx.set(a, x)
            ctx.set(b, y)
            await ctx.tick().repeat(registers) if registers else await ctx.delay(1e-7)
            got.append(ctx.get(p))
    sim.add_testbench(bench)
    sim.run()
    return got


def _wrap(v: int, width: int) -> int:
    return (v + (1 << width - 1)) % (1 << width) - (1 << width - 1)


@pytest.mark.parametrize("na, nb, width, registers", [
    (4, 4, 8, 0),      # combinational, full product
    (5, 3, 8, 3),      # odd multiplier width: its sign bit repeated into the last digit
    (3, 6, 9, 3),      # the narrower operand recoded whatever the order
    (6, 6, 7, 3),      # a product word narrower than the product (kept modulo 2^7)
    (7, 7, 14, 1),     # fewer registers than tree levels: the tree's last level registered
])
def test_every_product_is_exact(na, nb, width, registers):
    pairs = list(itertools.product(range(-(1 << na - 1), 1 << na - 1), range(-(1 << nb - 1), 1 << nb - 1)))
    got = _products(na, nb, width, registers, pairs)
    assert got == [_wrap(x * y, width) for x, y in pairs]


def test_wide_extremes_are_exact():
    """The engines' widest operands (F(4x4,3x3): 14 x 13 bits), at every corner and the registers of a DSP."""
    corners = [-(1 << 13), (1 << 13) - 1, -1, 0, 1]
    pairs = [(x, y) for x in corners for y in (-(1 << 12), (1 << 12) - 1, -1, 0, 1)] + [(5461, -2731), (-8191, 4095)]
    assert _products(14, 13, 27, 3, pairs) == [_wrap(x * y, 27) for x, y in pairs]


class _OneProduct(wiring.Component):
    def __init__(self, kind):
        self._kind = kind
        super().__init__({"a": In(signed(10)), "b": In(signed(12)), "p": Out(signed(22))})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.p.eq(emit_product(m, self.a, self.b, 22, 3, 0, "p", split=True, kind=self._kind))
        return m


def test_the_fabric_kind_writes_no_multiplication():
    """Yosys maps every ``$mul`` to a DSP block: the fabric product's Verilog has none, the DSP one has one."""
    fabric, dsp = (to_verilog(_OneProduct(k), "top") for k in (MultiplierKind.FABRIC, MultiplierKind.DSP))
    assert " * " not in fabric and dsp.count(" * ") == 1


def test_structure_counts():
    # 8 x 8: four digits (offsets 0, 2, 4, 6) of 16, 14, 12, 10 bits; five addends: adders of 14, 10, 12, 16 bits
    assert booth_digits(8) == 4 and booth_digits(9) == 5
    assert fabric_bits(8, 8, 16) == (52, 52)
    assert fabric_bits(12, 10, 22) == fabric_bits(10, 12, 22)   # the narrower operand is recoded
