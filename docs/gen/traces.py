"""Timing diagrams of the generated hardware, recorded from Amaranth's simulator at build time.

Each diagram is a real simulation of the component the generator builds (the same Python objects
``winohdl gen`` and ``winohdl engine`` turn into Verilog), sampled once per cycle (a value holds from one
rising edge to the next); the bus labels name what each beat carries (its stream order), the values of the
handshake signals are the simulation's.
"""

from __future__ import annotations

import threading

import numpy as np
from amaranth.sim import Simulator

from hdl.datapath import Datapath
from hdl.engine.design import engine_datapath
from hdl.engine.engine import LayerEngine
from hdl.engine.model import EngineModel, fm_beats
from hdl.engine.options import EngineOptions
from hdl.engine.plan import plan_engine
from hdl.options import HardwareOptions
from hdl.tile import WinogradTile
from miner.constructive import constructive_card
from winohdl.core.geometry import Geometry
from winohdl.core.words import pack

from .waves import Wave, svg


def _run(sim: Simulator) -> None:
    """``sim.run()`` on a fresh thread (a shallow stack: see tests/hdl_helpers.run_simulation)."""
    failure = []
    thread = threading.Thread(target=lambda: _catch(sim.run, failure))
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


def _catch(fn, failure: list) -> None:
    try:
        fn()
    except BaseException as exc:    # noqa: BLE001 - re-raised by the caller
        failure.append(exc)


def tile_svg() -> str:
    """F(2,3), ``--pipeline stages``: three input vectors (a gap after the second), each ``y``
    ``latency`` cycles after its ``d`` and ``g``, ``out_valid`` following ``in_valid``."""
    dp = Datapath(constructive_card(Geometry.parse("2", "3")), HardwareOptions.make(8, 8, "stages", "hw"))
    tile = WinogradTile(dp)
    vectors = {0: ([1, 2, 3, 4], [1, 0, -1]), 1: ([5, 6, 7, 8], [1, 1, 1]), 3: ([3, -1, 0, 2], [2, 0, 0])}
    rows = {n: [] for n in ("clk", "in_valid", "d", "g", "out_valid", "y")}
    sim = Simulator(tile)
    sim.add_clock(1e-8)

    async def bench(ctx):
        for cycle in range(4 + tile.latency + 2):
            d, g = vectors.get(cycle, (None, None))
            ctx.set(tile.in_valid, int(d is not None))
            if d is not None:
                ctx.set(tile.d, d)
                ctx.set(tile.g, g)
            await ctx.delay(1e-9)
            valid = ctx.get(tile.out_valid)
            rows["in_valid"].append(int(d is not None))
            rows["d"].append(",".join(map(str, d)) if d else None)
            rows["g"].append(",".join(map(str, g)) if g else None)
            rows["out_valid"].append(valid)
            rows["y"].append(",".join(str(v) for v in ctx.get(tile.y)) if valid else None)
            await ctx.tick()

    sim.add_testbench(bench)
    _run(sim)
    waves = [Wave(n, tuple(v), bus=n in ("d", "g", "y")) for n, v in rows.items() if n != "clk"]
    return svg(waves, f"F(2,3) tile, --pipeline stages, latency {tile.latency}", cycle=52)


ENGINE = dict(geometry="2x2/3x3", C=1, K=2, feature_map=(5, 5))
"""The engine of the diagram: F(2x2,3x3), C = 1, K = 2, a 5x5 feature map without padding (a 3x3
output: four tiles, three of them partly outside the layer, so ``tkeep`` shows)."""


def engine_options() -> EngineOptions:
    return EngineOptions(Geometry.parse("2x2", "3x3"), ENGINE["C"], ENGINE["K"], ENGINE["feature_map"])


def engine_svg(stall: tuple[int, int] = (37, 40)) -> str:
    """The engine's three streams for one weight load and one frame; ``m_axis_y.tready`` low during
    the cycles ``stall`` (back-pressure: the beat waits)."""
    o = engine_options()
    dp = engine_datapath(constructive_card(o.geometry), o)
    plan = plan_engine(o, dp)
    eng = LayerEngine(plan)
    model = EngineModel(o, dp)
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (o.C, *o.feature_map))
    w = rng.integers(-128, 128, (o.K, o.C, *o.geometry.kernel))
    beats = [("w", f"u{k}.{c}", pack(b, plan.w_width)) for (k, c), b in
             zip(((k, c) for k in range(o.K) for c in range(o.C)), model.weight_beats(w))]
    beats += [("fm", f"p{p}", pack(b, o.data_width)) for p, b in enumerate(fm_beats(o, x))]
    names = ("s_axis_w.tvalid", "s_axis_w.tready", "s_axis_w.tdata", "s_axis_fm.tvalid", "s_axis_fm.tready",
             "s_axis_fm.tdata", "m_axis_y.tvalid", "m_axis_y.tready", "m_axis_y.tdata", "m_axis_y.tkeep",
             "m_axis_y.tlast", "weights_loaded", "busy")
    rows = {n: [] for n in names}
    sim = Simulator(eng)
    sim.add_clock(1e-8)
    outputs = o.n_tiles * o.kernel_groups

    async def bench(ctx):
        i, out, cycle, after = 0, 0, 0, 0
        while after < 3:    # until three cycles after the last output beat
            stream, label, data = beats[i] if i < len(beats) else (None, None, 0)
            for s, port in (("w", eng.s_axis_w), ("fm", eng.s_axis_fm)):
                ctx.set(port.tvalid, int(stream == s))
                ctx.set(port.tdata, data if stream == s else 0)
            ready = int(not stall[0] <= cycle < stall[1])
            ctx.set(eng.m_axis_y.tready, ready)
            await ctx.delay(1e-9)
            y = eng.m_axis_y
            tile, kg = divmod(out, o.kernel_groups)
            sample = {"s_axis_w.tvalid": int(stream == "w"), "s_axis_w.tready": ctx.get(eng.s_axis_w.tready),
                      "s_axis_w.tdata": label if stream == "w" else None,
                      "s_axis_fm.tvalid": int(stream == "fm"), "s_axis_fm.tready": ctx.get(eng.s_axis_fm.tready),
                      "s_axis_fm.tdata": label if stream == "fm" else None,
                      "m_axis_y.tvalid": ctx.get(y.tvalid), "m_axis_y.tready": ready,
                      "m_axis_y.tdata": f"t{tile}k{kg}" if ctx.get(y.tvalid) else None,
                      "m_axis_y.tkeep": format(ctx.get(y.tkeep), "04b") if ctx.get(y.tvalid) else None,
                      "m_axis_y.tlast": ctx.get(y.tlast), "weights_loaded": ctx.get(eng.weights_loaded),
                      "busy": ctx.get(eng.busy)}
            for n in names:
                rows[n].append(sample[n])
            taken = {"w": ctx.get(eng.s_axis_w.tready), "fm": ctx.get(eng.s_axis_fm.tready)}.get(stream, 0)
            if stream is not None and taken:
                i += 1
            if ready and ctx.get(y.tvalid):
                out += 1
            after, cycle = after + (out == outputs), cycle + 1
            await ctx.tick()

    sim.add_testbench(bench)
    _run(sim)
    buses = {"s_axis_w.tdata", "s_axis_fm.tdata", "m_axis_y.tdata", "m_axis_y.tkeep"}
    return svg([Wave(n, tuple(v), bus=n in buses) for n, v in rows.items()],
               "engine F(2x2,3x3), C=1, K=2, 5x5 feature map: one weight load, one frame", cycle=26)
