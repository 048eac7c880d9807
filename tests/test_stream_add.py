"""hdl/stream/add.py: ResidualAdd against its golden model; one input far ahead of the other."""

import numpy as np
import pytest
from amaranth.sim import Simulator

from hdl_helpers import run_simulation
from stream_helpers import frames_beats, lanes_of, run_stream

from hdl.stream.add import LATENCY, ResidualAdd
from hdl.stream.axis import unpack
from hdl.stream.model import residual_add
from hdl.verilog import to_verilog
from winohdl.core.errors import WinohdlError


def check(L, C, sa, sb, out_shift, relu, frames_a, frames_b, depth=16, seed=0, gaps=0.3, backpressure=0.3, **kw):
    dut = ResidualAdd(L, sa, sb, out_shift, relu, depth)
    sources = {"s_axis_main": frames_beats(frames_a, 8, L), "s_axis_shortcut": frames_beats(frames_b, 8, L)}
    n = sum(len(f) for f in frames_a) // L
    got, cycles = run_stream(dut, sources, "m_axis", n, seed=seed, gaps=gaps, backpressure=backpressure, **kw)
    want = np.concatenate([residual_add(a, b, sa, sb, out_shift, relu) for a, b in zip(frames_a, frames_b)])
    assert lanes_of(got, 8, L) == want.tolist()
    ends = np.cumsum([len(f) // L for f in frames_a]) - 1
    assert [i for i, (_, last) in enumerate(got) if last] == ends.tolist()
    return cycles, want


def frames(n, C, pixels, seed):
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, C * p) for p in pixels[:n]]


@pytest.mark.parametrize("L,C", [(1, 3), (2, 4), (4, 4)], ids=["L1", "L2", "L=C"])
@pytest.mark.parametrize("sa,sb,out_shift,relu", [(0, 2, 2, False), (1, 0, 1, True), (0, 0, -1, False)],
                         ids=["align_b", "align_a_relu", "left_out_shift_saturates"])
def test_two_frames_random(L, C, sa, sb, out_shift, relu):
    fa, fb = frames(2, C, [5, 3], L), frames(2, C, [5, 3], L + 7)
    check(L, C, sa, sb, out_shift, relu, fa, fb, seed=L + sa)


def test_ties_and_both_ends():
    # out_shift 1: sums 1, 3, -1, -3 are x.5 (to even: 0, 2, 0, -2); 127 + 127 and -128 + -128
    a = [1, 1, -1, -1, 127, -128, 100, -100]
    b = [0, 2, 0, -2, 127, -128, 100, -100]
    _, want = check(1, 1, 0, 0, 1, False, [a], [b])
    assert want.tolist() == [0, 2, 0, -2, 127, -128, 100, -100]
    _, want = check(1, 1, 0, 0, 0, False, [a], [b])
    assert want.tolist() == [1, 3, -1, -3, 127, -128, 127, -128]


def test_shortcut_far_ahead_does_not_deadlock():
    """The shortcut's whole frame goes into the FIFO before the main branch offers its first beat;
    then the main branch streams and every sum comes out."""
    C, n = 2, 12
    (fa,), (fb,) = frames(1, C, [n], 3), frames(1, C, [n], 4)
    dut = ResidualAdd(1, 0, 0, 1, False, shortcut_depth=C * n)
    got = []

    async def offer_all(ctx, port, beats):
        for data, last in beats:
            ctx.set(port.tvalid, 1)
            ctx.set(port.tdata, data)
            ctx.set(port.tlast, last)
            await ctx.tick().until(port.tready)
        ctx.set(port.tvalid, 0)

    async def bench(ctx):
        ctx.set(dut.m_axis.tready, 1)
        await offer_all(ctx, dut.s_axis_shortcut, frames_beats([fb], 8, 1))
        assert not ctx.get(dut.m_axis.tvalid)
        await offer_all(ctx, dut.s_axis_main, frames_beats([fa], 8, 1))
        for _ in range(LATENCY + 4):
            await ctx.tick()

    async def collect(ctx):
        async for _, _, valid, data in ctx.tick().sample(dut.m_axis.tvalid, dut.m_axis.tdata):
            if valid:
                got.append(unpack(data, 8, 1)[0])

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.add_process(collect)
    run_simulation(sim)
    assert got == residual_add(fa, fb, 0, 0, 1).tolist()


def test_one_beat_per_cycle():
    C, L, n = 4, 2, 40
    fa, fb = frames(1, C, [n], 5), frames(1, C, [n], 6)
    cycles, _ = check(L, C, 0, 1, 1, True, fa, fb, gaps=0, backpressure=0)
    assert cycles == n * C // L + 2 + LATENCY + 2      # shortcut FIFO, pipeline, output queue


def test_verilog():
    text = to_verilog(ResidualAdd(2, 0, 3, 2, True, 8), "resadd")
    assert "module resadd(" in text and "s_axis_shortcut__tready" in text


@pytest.mark.parametrize("args,match", [((1, -1, 0, 0), "must be left shifts"),
                                        ((1, 0, 0, 0, False, 0), "shortcut_depth 0")])
def test_bad_parameters(args, match):
    with pytest.raises(WinohdlError, match=match):
        ResidualAdd(*args)


@pytest.mark.parametrize("L,relu", [(1, True), (2, False)], ids=["L1_relu", "L2"])
def test_trained_multipliers(L, relu):
    """Trained scales: ``sat(round((a * M_a + b * M_b) / 2**shift))`` (winohdl.network.sum_multiplier's
    hardware side); multipliers of 20 bits (a real export's), one cycle more for the registered products."""
    from winohdl.core.fixed import shift_round
    M, shift = (946493, 194801), 20
    fa, fb = frames(2, 4, [3, 2], L), frames(2, 4, [3, 2], L + 5)
    fa[0][:4], fb[0][:4] = [127, -128, 127, -128], [127, -128, -128, 127]       # both ends
    dut = ResidualAdd(L, 0, 0, shift, relu, 16, multiplier=M)
    assert dut.latency == LATENCY + 1
    sources = {"s_axis_main": frames_beats(fa, 8, L), "s_axis_shortcut": frames_beats(fb, 8, L)}
    got, _ = run_stream(dut, sources, "m_axis", sum(len(f) for f in fa) // L, seed=L, gaps=0.3, backpressure=0.3)
    want = np.clip(shift_round(np.concatenate(fa) * M[0] + np.concatenate(fb) * M[1], shift), 0 if relu else -128, 127)
    assert lanes_of(got, 8, L) == want.tolist()
    assert len(set(want.tolist())) > 5 and (want.min() == 0 if relu else want.min() < 0)
