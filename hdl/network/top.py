"""NetworkTop: the stages of a quantised CNN chained into one streaming design.

Ports: ``s_axis`` the image (channels-last raster order, int8, the first stage's lanes a beat) and
``m_axis`` the final linear layer's beats (its logits and running arg-max: :class:`hdl.stream.linear.Linear`).
A convolution is a :class:`~hdl.engine.engine.LayerEngine` with line buffers whose weights a ROM
replays into its weight stream after reset (:class:`WeightLoader`: no frame starts before they are
in), then :class:`~hdl.engine.raster.RasterOrder` and :class:`~hdl.stream.requant.Requantise`.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..engine.engine import LayerEngine, axis_stream
from ..engine.raster import RasterOrder
from ..stream.linear import Linear
from ..stream.pool import AvgPool, GlobalAvgPool, MaxPool
from ..stream.relane import Relane
from ..stream.requant import Requantise
from .stages import ACT_BITS, ConvStage, GlobalPoolStage, LinearStage, PoolKind, PoolStage


class WeightLoader(wiring.Component):
    """A ROM of ``beats`` (``width`` bits each) streamed once after reset into ``m_axis``.

    Attributes
    ----------
    m_axis : Out(axis_stream(width))
        The beats in order, ``tlast`` on the last; then nothing.
    """

    def __init__(self, beats, width: int):
        self.beats, self.width = [int(b) for b in beats], width
        super().__init__({"m_axis": Out(axis_stream(width))})

    def elaborate(self, platform):
        m = Module()
        n = len(self.beats)
        rom = Memory(shape=unsigned(self.width), depth=n, init=self.beats)
        m.submodules.rom = rom
        rp = rom.read_port(transparent_for=())
        nxt = Signal(range(n + 1), name="next_beat")     # the beat the read port fetches
        o = self.m_axis
        # the ROM's output is the beat at ``nxt - 1``: valid from the cycle after a fetch until taken
        move = Signal(name="move")
        m.d.comb += [move.eq((~o.tvalid | o.tready) & (nxt != n)), rp.addr.eq(nxt), rp.en.eq(move | ~o.tvalid),
                     o.tdata.eq(rp.data)]
        with m.If(move):
            m.d.sync += [nxt.eq(nxt + 1), o.tvalid.eq(1), o.tlast.eq(nxt == n - 1)]
        with m.Elif(o.tready):
            m.d.sync += o.tvalid.eq(0)
        return m


def _conv(m: Module, s: ConvStage, name: str):
    """The engine, its weight ROM, raster order and requantisation: (input, output) streams."""
    p = s.plan
    eng = LayerEngine(p)
    loader = WeightLoader(s.weights, p.n_w * p.w_width)
    raster = RasterOrder(p.options, p.y_width)
    req = Requantise(p.options.PK, p.y_width, s.bias, s.shift, s.relu, ACT_BITS)
    for part, c in (("engine", eng), ("weights", loader), ("raster", raster), ("requant", req)):
        m.submodules[f"{name}_{part}"] = c
    wiring.connect(m, loader.m_axis, eng.s_axis_w)
    wiring.connect(m, eng.m_axis_y, raster.s_axis)
    wiring.connect(m, raster.m_axis, req.s_axis)
    return eng.s_axis_fm, req.m_axis


def _unit(m: Module, s, name: str):
    """A unit between convolutions: (input, output) streams."""
    if isinstance(s, PoolStage):
        unit = MaxPool(s.shape) if s.kind is PoolKind.MAX else AvgPool(s.shape, s.extra_shift)
    elif isinstance(s, GlobalPoolStage):
        unit = GlobalAvgPool(s.height, s.width, s.channels, s.lanes, s.extra_shift)
    elif isinstance(s, LinearStage):
        unit = Linear(s.weights, s.bias, s.lanes, s.parallel)
    else:
        raise TypeError(f"not a stage: {s!r}")
    m.submodules[name] = unit
    return unit.s_axis, unit.m_axis


class NetworkTop(wiring.Component):
    """The network: ``stages`` in order (the last a :class:`LinearStage`).

    Attributes
    ----------
    s_axis : In(axis_stream(in_lanes * 8))
        The image, int8, channels-last raster order.
    m_axis : Out(...)
        The final stage's output stream (a linear layer: its logits and arg-max).
    """

    def __init__(self, stages):
        self.stages = tuple(stages)
        if not self.stages:
            raise ValueError("a network needs at least one stage")
        last = self.stages[-1]
        # the final linear layer is built here: its output width comes from its weights
        self._final = (Linear(last.weights, last.bias, last.lanes, last.parallel)
                       if isinstance(last, LinearStage) else None)
        out = (self._final.signature.members["m_axis"].signature if self._final is not None
               else axis_stream(last.out_lanes * last.out_bits))
        super().__init__({"s_axis": In(axis_stream(self.stages[0].in_lanes * ACT_BITS)), "m_axis": Out(out)})

    def elaborate(self, platform):
        m = Module()
        prev, lanes = wiring.flipped(self.s_axis), self.stages[0].in_lanes
        for i, s in enumerate(self.stages):
            name = f"s{i}_{s.name}"
            if s.in_lanes != lanes:
                rl = Relane(lanes, s.in_lanes, ACT_BITS)
                m.submodules[f"{name}_relane"] = rl
                wiring.connect(m, prev, rl.s_axis)
                prev = rl.m_axis
            if isinstance(s, ConvStage):
                src, out = _conv(m, s, name)
            elif s is self.stages[-1] and self._final is not None:
                m.submodules[name] = self._final
                src, out = self._final.s_axis, self._final.m_axis
            else:
                src, out = _unit(m, s, name)
            wiring.connect(m, prev, src)
            prev, lanes = out, s.out_lanes
        wiring.connect(m, prev, wiring.flipped(self.m_axis))
        return m
