"""Shared helpers of the engine tests: cards, layers and a fast Amaranth-simulator run."""

from __future__ import annotations

import random

import numpy as np

from amaranth.sim import Simulator

from hdl_helpers import run_simulation

from hdl.engine.design import engine_datapath
from hdl.engine.engine import LayerEngine
from hdl.engine.model import EngineModel, decode_output, fm_beats, torch_reference
from hdl.engine.perf import schedule
from hdl.engine.plan import plan_engine
from hdl.engine.sparsity import KernelMask
from miner.constructive import constructive_card
from sim.stimulus import random_layer, unpack
from sim.streams import FEATURE_MAP, WEIGHTS, HostOrder, input_frames, layer_cycles
from winohdl.core.netlist import YosysNetlist


def datapath(geometry, opts):
    return engine_datapath(constructive_card(geometry), opts)


def build_engine(opts, kind):
    """(the constructive card's datapath, the plan, the engine) of ``opts``."""
    dp = datapath(opts.geometry, opts)
    plan = plan_engine(opts, dp, kind)
    return dp, plan, LayerEngine(plan)


DEPTHWISE_NET = ("import torch\nfrom torch import nn\ndef net():\n    torch.manual_seed(3)\n"
                 "    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1, groups=8),\n"
                 "                         nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 3)).eval()\n")
"""A PyTorch module (``net``, input 1x1x6x6) with a depthwise convolution: the network tests of known zeros."""


def block_sparse_mask() -> KernelMask:
    """6 in x 4 out channels, for PK = PC = 2: output group 0 has kernels in input groups 1 and 2,
    group 1 only in group 0, so 3 of 6 blocks are visited; lane (pk 1, pc 0) is zero in every block."""
    m = np.zeros((4, 6), bool)
    m[0, 2:4] = m[1, 3] = m[0, 5] = m[2, 0] = m[3, 1] = True
    return KernelMask.from_array(m)


def amaranth_run(engine, layers, seed=0, gaps=0.0, backpressure=0.0, max_cycles=200_000, events=None, pace=0):
    """Stream layers [(x, w or None)] through ``engine`` in Amaranth's simulator, in the host's order
    (:class:`sim.streams.HostOrder`, as the cocotb testbench), with random gaps and back-pressure.

    Returns (output beats per layer [{data, keep, last}], cycles per layer from its first
    feature-map beat to its last output beat, inclusive). ``events``, a dict: filled with each layer's
    cycle of its first feature-map beat (``first``) and of its last output beat (``last_out``). ``pace``:
    a frame's feature-map beat ``b`` offered no sooner than ``pace * b // beats`` cycles after its first
    was taken (an upstream engine's pace, :func:`hdl.engine.perf.schedule`)."""
    plan = engine.plan
    o = plan.opts
    model = EngineModel(o, plan.dp, plan.kind)
    order = HostOrder(input_frames([(None if w is None else model.weight_beats(w), fm_beats(o, x)) for x, w in layers],
                                   plan.w_width, o.data_width))
    n_out = o.n_tiles * o.kernel_groups
    got = [[] for _ in layers]
    first_fm, last_out = {}, {}
    rng = random.Random(seed)
    sim = Simulator(engine)
    sim.add_clock(1e-8)
    ports = {WEIGHTS: engine.s_axis_w, FEATURE_MAP: engine.s_axis_fm}

    async def bench(ctx):
        offered = None      # the stream offering a beat (valid until taken)
        for cycle in range(max_cycles + 1):
            done = sum(map(len, got))
            if done == n_out * len(layers):
                return
            if offered is None and not order.done and rng.random() >= gaps and _paced(order, first_fm, cycle, pace):
                offered = order.stream
            for s, port in ports.items():
                ctx.set(port.tvalid, int(offered == s))
                if offered == s:
                    ctx.set(port.tdata, order.value)
            rdy = int(rng.random() >= backpressure)
            ctx.set(engine.m_axis_y.tready, rdy)
            await ctx.delay(1e-9)
            if rdy and ctx.get(engine.m_axis_y.tvalid):
                layer = done // n_out
                got[layer].append({"data": unpack(ctx.get(engine.m_axis_y.tdata), plan.y_width, o.PK * o.geometry.n_y),
                                   "keep": [(ctx.get(engine.m_axis_y.tkeep) >> b) & 1 for b in range(o.geometry.n_y)],
                                   "last": ctx.get(engine.m_axis_y.tlast)})
                if len(got[layer]) == n_out:
                    last_out[layer] = cycle
            if offered is not None and ctx.get(ports[offered].tready):
                frame, beat = order.take()
                if frame.stream == FEATURE_MAP and beat == 0:
                    first_fm[frame.layer] = cycle
                offered = None
            await ctx.tick()
        raise AssertionError(f"timeout at cycle {max_cycles}: {sum(map(len, got))} of {n_out * len(layers)} beats")

    sim.add_testbench(bench)
    run_simulation(sim)
    if events is not None:
        events.update(first=[first_fm[k] for k in sorted(first_fm)], last_out=[last_out[k] for k in sorted(last_out)])
    return got, layer_cycles(first_fm, last_out)


def _paced(order, first_fm: dict, cycle: int, pace: int) -> bool:
    """Whether the beat ``order`` offers next may come at ``cycle`` at ``pace`` cycles a frame."""
    frame = order.frames[order.frame]
    if not pace or frame.stream != FEATURE_MAP or order.beat == 0:
        return True
    return cycle >= first_fm[frame.layer] + pace * order.beat // len(frame.beats)


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


# serial B^T cases: (geometry, feature map, padding, C, K, PK, PC, pipeline), K / PK cycles a tile fitting its passes
SERIAL_IN = [(("2x2", "3x3", "1", "1"), (5, 5), (1, 1), 11, 8, 1, 1, "stages"),
             (("4x4", "3x3", "1", "1"), (9, 7), (1, 0), 13, 24, 2, 1, "deep"),
             (("2x2", "3x3", "2", "1"), (9, 8), (1, 1), 22, 20, 2, 2, "deep"),
             (("2x2", "3x3", "2x1", "1"), (9, 8), (0, 1), 9, 11, 1, 1, "stages"),
             (("2x3", "3x2", "1", "1"), (4, 6), (0, 1), 10, 9, 1, 1, "stages"),
             # K / PK = C / PC = 16: both transforms' passes share their unit (the target layer's case)
             (("4x4", "3x3", "1", "1"), (7, 6), (1, 1), 16, 16, 1, 1, "deep")]


def assert_frames_exact(o, dp, layers, got):
    """Each frame's beats are the golden model's and decode to torch's convolution (a frame given
    no kernels runs on the last ones loaded)."""
    model = EngineModel(o, dp, "winograd")
    w = None
    for (x, wl), beats in zip(layers, got):
        w = wl if wl is not None else w
        assert beats == model.output_beats(x, w)
        assert (decode_output(o, [b["data"] for b in beats]) == torch_reference(o, x, w)).all()


def serial_frames_exact(o, dp, plan, eng):
    """Three frames (loaded, extremes, the same kernels) bit-exact with gaps and back-pressure, and two frames'
    cycles equal to the performance model's (a reload before each): ``(layers, schedule)``."""
    rng = np.random.default_rng(1)
    layers = [random_layer(o, rng), random_layer(o, rng, "min"), (random_layer(o, rng, "max")[0], None)]
    got, _ = amaranth_run(eng, layers, seed=3, gaps=0.2, backpressure=0.2)
    assert_frames_exact(o, dp, layers, got)
    _, cycles = amaranth_run(eng, layers[:2])
    sched = schedule(o, plan.timing, 2, (True, True))
    assert cycles == [s["last_out"] - s["first"] + 1 for s in sched]
    return layers, sched
