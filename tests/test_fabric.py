"""The fabric multiplier (hdl/fabric.py): exact products modulo the word, at the DSP product's latency,
and no ``$mul`` for Yosys to put in a DSP block."""

import itertools

import pytest
from amaranth.hdl import Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from hdl.components import emit_product
from hdl.fabric import booth_digits, fabric_bits, fabric_product, fitted_register_bits, register_bits, tree_cuts
from hdl.options import MultiplierKind
from hdl.pipeline import delay
from hdl.verilog import to_verilog


def _products(na: int, nb: int, width: int, registers: int, pairs, span: int = 1):
    m = Module()
    a, b = Signal(signed(na)), Signal(signed(nb))
    p = fabric_product(m, a, b, width, registers, "p", span)
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


@pytest.mark.parametrize("na, nb, width, registers, span", [
    (4, 4, 8, 0, 1),      # combinational, full product
    (5, 3, 8, 3, 1),      # odd multiplier width: its sign bit repeated into the last digit
    (3, 6, 9, 3, 1),      # the narrower operand recoded whatever the order
    (6, 6, 7, 3, 1),      # a product word narrower than the product (kept modulo 2^7)
    (7, 7, 14, 1, 1),     # fewer registers than tree levels: the tree's last level registered
    (8, 7, 15, 3, 2),     # registered every second level, the register left over delaying the product
    (7, 8, 13, 2, 3),     # three levels a register: one cut, one delay
    (7, 8, 6, 3, 2),      # a word narrower than the last digit's offset: that digit dropped, the one before last
])
def test_every_product_is_exact(na, nb, width, registers, span):
    pairs = list(itertools.product(range(-(1 << na - 1), 1 << na - 1), range(-(1 << nb - 1), 1 << nb - 1)))
    got = _products(na, nb, width, registers, pairs, span)
    assert got == [_wrap(x * y, width) for x, y in pairs]


@pytest.mark.parametrize("span", [1, 2])
def test_wide_extremes_are_exact(span):
    """The engines' widest operands (F(4x4,3x3): 14 x 13 bits), at every corner and the registers of a DSP."""
    corners = [-(1 << 13), (1 << 13) - 1, -1, 0, 1]
    pairs = [(x, y) for x in corners for y in (-(1 << 12), (1 << 12) - 1, -1, 0, 1)] + [(5461, -2731), (-8191, 4095)]
    assert _products(14, 13, 27, 3, pairs, span) == [_wrap(x * y, 27) for x, y in pairs]


def test_tree_cuts():
    # three levels (5 to 8 addends) in three registers: every level, or levels 1 and 2 and a delay
    assert tree_cuts(3, 3) == {0, 1, 2} and tree_cuts(3, 3, 2) == {1, 2} and tree_cuts(3, 3, 3) == {2}
    assert tree_cuts(4, 3, 2) == {1, 3} and tree_cuts(5, 3, 2) == {1, 3, 4}
    assert tree_cuts(4, 1) == {3} and tree_cuts(4, 2) == {1, 3}   # too few registers: longer spans
    assert tree_cuts(0, 3) == set() and tree_cuts(3, 0) == set()
    for depth, registers, span in itertools.product(range(1, 8), range(1, 5), range(1, 4)):
        cuts = sorted(tree_cuts(depth, registers, span))
        gaps = [b - a for a, b in zip([-1] + cuts, cuts)]
        assert cuts[-1] == depth - 1 and len(cuts) <= registers
        assert max(gaps) <= max(span, -(-depth // registers))


class _OneProduct(wiring.Component):
    """10 x 12 bits, registered operands, the product three registers later."""

    def __init__(self, kind, span: int = 1):
        self._kind, self._span = kind, span
        super().__init__({"a": In(signed(10)), "b": In(signed(12)), "p": Out(signed(22))})

    def elaborate(self, platform):
        m = Module()
        a, b = delay(m, self.a, 1, "a"), delay(m, self.b, 1, "b")
        m.d.comb += self.p.eq(emit_product(m, a, b, 22, 3, 0, "p", split=True, kind=self._kind, span=self._span))
        return m


def test_the_fabric_kind_writes_no_multiplication():
    """Yosys maps every ``$mul`` to a DSP block: the fabric product's Verilog has none, the DSP one has one."""
    fabric, dsp = (to_verilog(_OneProduct(k), "top") for k in (MultiplierKind.FABRIC, MultiplierKind.DSP))
    assert " * " not in fabric and dsp.count(" * ") == 1


@pytest.mark.parametrize("span, fewer", [(1, 0), (2, 36)])
def test_register_bits_are_yosys_flip_flops(tmp_path, span, fewer):
    """The planner's count of a fabric product's flip-flops against Yosys's mapping for ECP5 (10 x 12 bits,
    the engine's three product registers; the operands' registers, 22, counted apart): never under, at
    most 4 over (Yosys drops a few constant bits); every second level registered holds 36 fewer."""
    from synth.yosys import synthesise
    (tmp_path / "top.v").write_text(to_verilog(_OneProduct(MultiplierKind.FABRIC, span), "top"))
    mapped = synthesise(tmp_path / "top.v", "top", "ecp5", tmp_path / "work").ffs - 22
    model = register_bits(10, 12, 22, 3, span)
    assert 0 <= model - mapped <= 4 and fitted_register_bits(10, 12, 22, 3) - model == 10 + fewer


def test_structure_counts():
    # 8 x 8: four digits (offsets 0, 2, 4, 6) of 16, 14, 12, 10 bits; five addends: adders of 14, 10, 12, 16 bits
    assert booth_digits(8) == 4 and booth_digits(9) == 5
    assert fabric_bits(8, 8, 16) == (52, 52)
    assert fabric_bits(12, 10, 22) == fabric_bits(10, 12, 22)   # the narrower operand is recoded
