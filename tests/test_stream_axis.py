"""hdl/stream/axis.py: packing, the rounding and saturation circuits against fixed.py, the output queue."""

import pytest
from amaranth.hdl import Module, Signal, signed
from amaranth.sim import Simulator

from hdl_helpers import run_simulation

from hdl.stream.axis import (log2_exact, pack, saturate_value, shift_round_value, unpack, word_range)
from hdl.widths import Range
from winohdl.core.fixed import requantise, shift_round


def test_pack_unpack_round_trip():
    values = [-128, 127, 0, -1, 5]
    assert unpack(pack(values, 8), 8, 5) == values
    assert pack([1, -1], 4) == 0xF1
    assert [log2_exact(n) for n in (1, 2, 48, 64, 0)] == [0, 1, None, 6, None]


@pytest.mark.parametrize("shift", [-2, 0, 1, 3, 6, 9])
def test_shift_round_and_saturate_circuits_are_fixed_py(shift):
    """Every 6-bit input through the rounding shift and the saturation to 4 bits (ReLU too)."""
    m = Module()
    x = Signal(signed(6))
    r = word_range(6)
    y, yr = shift_round_value(m, x, r, shift, "t")
    sat, _ = saturate_value(y, yr, -8, 7)
    relu, _ = saturate_value(y, yr, 0, 7)
    odd, _ = saturate_value(y, yr, -5, 6)     # ends that are no power of two: comparators
    assert yr == Range(shift_round(r.lo, shift), shift_round(r.hi, shift))
    ys, ss, rs, os_ = Signal(signed(12)), Signal(signed(12)), Signal(signed(12)), Signal(signed(12))
    m.d.comb += [ys.eq(y), ss.eq(sat), rs.eq(relu), os_.eq(odd)]
    sim = Simulator(m)
    got = []

    async def bench(ctx):
        for v in range(r.lo, r.hi + 1):
            ctx.set(x, v)
            got.append((v, ctx.get(ys), ctx.get(ss), ctx.get(rs)))
            assert ctx.get(os_) == min(6, max(-5, shift_round(v, shift)))

    sim.add_testbench(bench)
    run_simulation(sim)
    assert got == [(v, shift_round(v, shift), requantise(v, shift, 4), requantise(v, shift, 4, True))
                   for v in range(r.lo, r.hi + 1)]
