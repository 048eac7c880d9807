"""Drive the stream units (hdl/stream) in Amaranth's simulator: random gaps on every input, random
back-pressure on the output, and a check at every cycle that no input's tready follows the output's."""

from __future__ import annotations

import random

from amaranth.sim import Simulator

from hdl_helpers import run_simulation

from hdl.stream.axis import pack, unpack


def beats(values, width: int, lanes: int, frame_ends=()) -> list[tuple[int, int]]:
    """(tdata, tlast) beats of a flat value sequence, ``lanes`` values a beat; tlast after the beats
    whose index (counted in beats) is in ``frame_ends``, and on the very last beat."""
    values = [int(v) for v in values]
    n = len(values) // lanes
    ends = set(frame_ends) | {n - 1}
    return [(pack(values[b * lanes:(b + 1) * lanes], width), int(b in ends)) for b in range(n)]


def frames_beats(frames, width: int, lanes: int) -> list[tuple[int, int]]:
    """The beats of several frames back to back (each a flat sequence), tlast on each frame's end."""
    out = []
    for f in frames:
        out += beats(f, width, lanes)
    return out


def run_stream(dut, sources: dict, sink: str, n_out: int, seed: int = 0, gaps: float = 0.0,
               backpressure: float = 0.0, max_cycles: int = 20_000, tail: int = 12):
    """Offer every source's beats ``{port: [(tdata, tlast)]}`` with random gaps (each port its own),
    take ``n_out`` beats from port ``sink`` with random back-pressure; then ``tail`` more cycles
    with tready high, in which no beat may appear.

    Returns ``([(tdata, tlast)], cycles)``: the output beats and the cycles from the first input
    handshake to the last output handshake, inclusive. Fails if a source's tready ever changes with
    the sink's tready within a cycle (a combinational path), or on a timeout.
    """
    rng = random.Random(seed)
    got, marks = [], {}
    out = getattr(dut, sink)
    ports = {name: getattr(dut, name) for name in sources}
    sim = Simulator(dut)
    sim.add_clock(1e-8)

    async def bench(ctx):
        pos = {name: 0 for name in sources}
        offered = {name: False for name in sources}
        for cycle in range(max_cycles):
            if len(got) == n_out:
                break
            for name, port in ports.items():
                if not offered[name] and pos[name] < len(sources[name]) and rng.random() >= gaps:
                    offered[name] = True
                ctx.set(port.tvalid, int(offered[name]))
                if offered[name]:
                    data, last = sources[name][pos[name]]
                    ctx.set(port.tdata, data)
                    ctx.set(port.tlast, last)
            ready = {}
            for probe in (0, 1):
                ctx.set(out.tready, probe)
                ready[probe] = {name: ctx.get(port.tready) for name, port in ports.items()}
            assert ready[0] == ready[1], f"cycle {cycle}: an input's tready follows m tready combinationally"
            rdy = int(rng.random() >= backpressure)
            ctx.set(out.tready, rdy)
            if rdy and ctx.get(out.tvalid):
                got.append((ctx.get(out.tdata), ctx.get(out.tlast)))
                marks["last"] = cycle
            for name, port in ports.items():
                if offered[name] and ctx.get(port.tready):
                    marks.setdefault("first", cycle)
                    pos[name] += 1
                    offered[name] = False
            await ctx.tick()
        else:
            raise AssertionError(f"timeout after {max_cycles} cycles: {len(got)} of {n_out} beats")
        for name, port in ports.items():
            ctx.set(port.tvalid, 0)
        ctx.set(out.tready, 1)
        for _ in range(tail):
            await ctx.tick()
            assert not ctx.get(out.tvalid), "a beat more than expected"

    sim.add_testbench(bench)
    run_simulation(sim)
    return got, marks["last"] - marks["first"] + 1


def lanes_of(got, width: int, lanes: int) -> list[int]:
    """The flat values of output beats (``lanes`` signed words of ``width`` bits each)."""
    return [v for data, _ in got for v in unpack(data, width, lanes)]
