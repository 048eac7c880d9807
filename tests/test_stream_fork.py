"""Fork (hdl/stream/fork.py): every consumer gets every beat at its own pace, with gaps and
independent back-pressure on each output."""

import random

from amaranth.sim import Simulator

from hdl.stream.fork import Fork

from hdl_helpers import run_simulation


def test_fork_gives_every_consumer_every_beat():
    dut, beats = Fork(8, 3), [((i * 29) % 256, int(i % 10 == 9)) for i in range(40)]
    got = [[] for _ in range(3)]
    rng = random.Random(4)
    sim = Simulator(dut)
    sim.add_clock(1e-8)

    async def bench(ctx):
        i = 0
        for _ in range(2000):
            if all(len(g) == len(beats) for g in got):
                return
            ctx.set(dut.s_axis.tvalid, int(i < len(beats) and rng.random() < 0.7))
            if i < len(beats):
                ctx.set(dut.s_axis.tdata, beats[i][0])
                ctx.set(dut.s_axis.tlast, beats[i][1])
            ready = [int(rng.random() < 0.5) for _ in range(3)]
            for k in range(3):
                ctx.set(dut.port(k).tready, ready[k])
            await ctx.delay(1e-9)
            for k in range(3):
                if ready[k] and ctx.get(dut.port(k).tvalid):
                    got[k].append((ctx.get(dut.port(k).tdata), ctx.get(dut.port(k).tlast)))
            if ctx.get(dut.s_axis.tvalid) and ctx.get(dut.s_axis.tready):
                i += 1
            await ctx.tick()
        raise AssertionError("timeout")

    sim.add_testbench(bench)
    run_simulation(sim)
    assert got == [beats] * 3
