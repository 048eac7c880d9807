"""Run a generated component in Amaranth's own simulator (no external tools)."""

from amaranth.sim import Simulator


def simulate(dut, vectors, drive, latency: int) -> list[list[int]]:
    """Drive ``vectors`` back to back (``drive(ctx, vector)`` sets the inputs); return every y.

    Pipelined designs are fed one vector per cycle and read ``latency`` cycles later,
    checking ``out_valid``; combinational ones are read at once.
    """
    outs = []
    sim = Simulator(dut)

    async def bench(ctx):
        if latency == 0:
            for v in vectors:
                drive(ctx, v)
                outs.append([int(x) for x in ctx.get(dut.y)])
            return
        for i in range(len(vectors) + latency):
            if i < len(vectors):
                drive(ctx, vectors[i])
            ctx.set(dut.in_valid, int(i < len(vectors)))
            await ctx.tick()
            if 0 <= i - latency + 1 < len(vectors):  # vector i - latency + 1 is at the output now
                assert ctx.get(dut.out_valid) == 1
                outs.append([int(x) for x in ctx.get(dut.y)])

    if latency:
        sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return outs
