"""Shared helpers of the engine tests: cards, layers and a fast Amaranth-simulator run."""

from __future__ import annotations

import random

import numpy as np
from amaranth.sim import Simulator

from hdl.engine.design import engine_datapath
from hdl.engine.model import EngineModel, fm_beats
from miner.constructive import constructive_card
from winohdl.core.netlist import YosysNetlist


def pack(values, width):
    mask = (1 << width) - 1
    return sum((int(v) & mask) << (i * width) for i, v in enumerate(values))


def unpack(word, width, n):
    out = []
    for i in range(n):
        v = (word >> (i * width)) & ((1 << width) - 1)
        out.append(v - (1 << width) if v >> (width - 1) else v)
    return out


def datapath(geometry, opts):
    return engine_datapath(constructive_card(geometry), opts)


def random_layer(opts, rng, extreme=None):
    lo_d, hi_d = -(1 << (opts.data_width - 1)), (1 << (opts.data_width - 1)) - 1
    lo_g, hi_g = -(1 << (opts.kernel_width - 1)), (1 << (opts.kernel_width - 1)) - 1
    xs, ws = (opts.C, *opts.feature_map), (opts.K, opts.C, *opts.geometry.kernel)
    if extreme == "max":
        return np.full(xs, hi_d), np.full(ws, hi_g)
    if extreme == "min":
        return np.full(xs, lo_d), np.full(ws, lo_g)
    if extreme == "mixed":
        return np.full(xs, lo_d), np.full(ws, hi_g)
    return rng.integers(lo_d, hi_d + 1, xs), rng.integers(lo_g, hi_g + 1, ws)


def amaranth_run(engine, layers, seed=0, gaps=0.0, backpressure=0.0, max_cycles=200_000):
    """Stream layers [(x, w or None)] through ``engine`` in Amaranth's simulator.

    Returns (output beats per layer [{data, keep, last}], cycles per layer from its first
    feature-map beat to its last output beat, inclusive)."""
    plan = engine.plan
    o = plan.opts
    model = EngineModel(o, plan.dp, plan.kind)
    n_out = o.n_tiles * o.kernel_groups
    w_stream, f_stream = [], []
    for i, (x, w) in enumerate(layers):
        if w is not None:
            w_stream += [(i, b) for b in model.weight_beats(w)]
        f_stream += [(i, b) for b in fm_beats(o, x)]
    got = [[] for _ in layers]
    first_fm, last_out = {}, {}
    rng = random.Random(seed)
    sim = Simulator(engine)
    sim.add_clock(1e-8)
    yw, n_y = plan.y_width, o.geometry.n_y

    async def bench(ctx):
        wi = fi = 0
        layer_of_fm = [i for i, _ in f_stream]
        out_layer, out_count = 0, 0
        cycle = 0
        # weights of layer i are sent only after layer i-1's feature map (the engine enforces order)
        while out_layer < len(layers):
            if cycle > max_cycles:
                raise AssertionError(f"timeout at cycle {cycle}: {out_count} beats of layer {out_layer}")
            wv = wi < len(w_stream) and (fi >= len(f_stream) or w_stream[wi][0] <= layer_of_fm[fi]) \
                and rng.random() >= gaps
            fv = fi < len(f_stream) and (wi >= len(w_stream) or w_stream[wi][0] > layer_of_fm[fi]) \
                and rng.random() >= gaps
            ctx.set(engine.s_axis_w.tvalid, int(wv))
            if wv:
                ctx.set(engine.s_axis_w.tdata, pack(w_stream[wi][1], plan.w_width))
            ctx.set(engine.s_axis_fm.tvalid, int(fv))
            if fv:
                ctx.set(engine.s_axis_fm.tdata, pack(f_stream[fi][1], o.data_width))
            rdy = int(rng.random() >= backpressure)
            ctx.set(engine.m_axis_y.tready, rdy)
            await ctx.delay(1e-9)
            w_hs = wv and ctx.get(engine.s_axis_w.tready)
            f_hs = fv and ctx.get(engine.s_axis_fm.tready)
            if rdy and ctx.get(engine.m_axis_y.tvalid):
                beat = {"data": unpack(ctx.get(engine.m_axis_y.tdata), yw, o.PK * n_y),
                        "keep": [(ctx.get(engine.m_axis_y.tkeep) >> b) & 1 for b in range(n_y)],
                        "last": ctx.get(engine.m_axis_y.tlast)}
                got[out_layer].append(beat)
                out_count += 1
                if out_count == n_out:
                    last_out[out_layer] = cycle
                    out_layer, out_count = out_layer + 1, 0
            if f_hs:
                first_fm.setdefault(f_stream[fi][0], cycle)
                fi += 1
            if w_hs:
                wi += 1
            await ctx.tick()
            cycle += 1

    sim.add_testbench(bench)
    sim.run()
    cycles = [last_out[i] - first_fm[i] + 1 for i in range(len(layers))]
    return got, cycles


def read_registers(net: YosysNetlist, prefixes) -> list[str]:
    """Where each register bit of the netnames starting with ``prefixes`` (a Yosys ECP5 JSON
    netlist) takes its data from: "OUTREG" for a DP16KD's own output register (winohdl's pass moved
    the fabric register into the block), else the type of the cell driving the fabric flip-flop's
    D input ("NOREG" for a DP16KD read without its output register)."""
    driver = {b: (net.cells[pin.cell], pin.port) for b, pin in net.drivers.items()}
    bits = {b for n, nn in net.netnames.items() if n.startswith(prefixes) for b in nn["bits"]
            if isinstance(b, int)}
    out = []
    for b in sorted(bits):
        cell, pin = driver.get(b, (None, ""))
        if cell is None or cell["type"] not in ("DP16KD", "TRELLIS_FF"):
            continue
        if cell["type"] == "TRELLIS_FF":     # a fabric register: where its D input comes from
            cell, pin = driver.get(cell["connections"]["DI"][0], (None, ""))
        if cell is None:
            out.append(None)
        elif cell["type"] == "DP16KD":
            out.append(str(cell["parameters"].get(f"REGMODE_{pin[2]}", "NOREG")).strip())
        else:
            out.append(cell["type"])
    return out
