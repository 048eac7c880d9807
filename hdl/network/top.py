"""NetworkTop: the stages of a quantised CNN chained into one streaming design.

Ports: ``s_axis`` the image (channels-last raster order, int8, the first stage's lanes a beat) and
``m_axis`` the final linear layer's beats (its logits and running arg-max: :class:`hdl.stream.linear.Linear`).
A convolution is a :class:`~hdl.engine.engine.LayerEngine` with line buffers whose weight memories
are initialised with the model's kernels (block-RAM contents: stored once, nothing to load), then
:class:`~hdl.engine.raster.RasterOrder` (unless the engine's output is in raster order already: a direct
engine, :func:`~hdl.engine.raster.in_raster_order`) and :class:`~hdl.stream.requant.Requantise`.
"""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..engine.engine import LayerEngine, axis_stream
from ..engine.raster import RasterOrder, in_raster_order
from ..stream.linear import Linear
from ..stream.sparse_linear import SparseLinear
from ..stream.pool import AvgPool, GlobalAvgPool, MaxPool
from ..stream.add import ResidualAdd
from ..stream.fork import Fork
from ..stream.relane import Relane
from ..stream.skid import Skid
from ..stream.requant import Requantise
from .stages import AddStage, ConvStage, GlobalPoolStage, LinearStage, PoolKind, PoolStage


def _conv(m: Module, s: ConvStage, name: str):
    """The engine (its kernels preloaded), raster order (where its output is not in raster order already)
    and requantisation: (input, output) streams."""
    p = s.plan
    eng = LayerEngine(p, weights=s.weights)   # its weight memories hold the kernels from the start
    req = Requantise(p.options.PK, p.y_width, s.bias, s.shift, s.relu, s.out_bits, s.high, s.multiplier or None)
    m.submodules[f"{name}_engine"], m.submodules[f"{name}_requant"] = eng, req
    if in_raster_order(p.options):
        # one position a tile: its tkeep is always all ones, and the requantisation counts channels itself
        y, r = eng.m_axis_y, req.s_axis
        m.d.comb += [r.tdata.eq(y.tdata), r.tvalid.eq(y.tvalid), r.tlast.eq(y.tlast), y.tready.eq(r.tready)]
        return eng.s_axis_fm, req.m_axis
    raster = RasterOrder(p.options, p.y_width)
    m.submodules[f"{name}_raster"] = raster
    wiring.connect(m, eng.m_axis_y, raster.s_axis)
    wiring.connect(m, raster.m_axis, req.s_axis)
    return eng.s_axis_fm, req.m_axis


def linear_unit(s: LinearStage) -> Linear:
    """The linear stage's unit: dense, or walking its non-zero weights."""
    if s.multipliers:
        return SparseLinear(s.weights, s.bias, s.lanes, s.multipliers, s.in_bits)
    return Linear(s.weights, s.bias, s.lanes, s.parallel, s.in_bits)


def _unit(m: Module, s, name: str):
    """A unit between convolutions: (input, output) streams."""
    if isinstance(s, PoolStage):
        unit = (MaxPool(s.shape, s.bits) if s.kind is PoolKind.MAX
                else AvgPool(s.shape, s.extra_shift, s.bits, s.bits, s.multiplier))
    elif isinstance(s, GlobalPoolStage):
        unit = GlobalAvgPool(s.height, s.width, s.channels, s.lanes, s.extra_shift, s.in_bits, s.out_bits,
                             divide=s.divide, multiplier=s.multiplier)
    elif isinstance(s, LinearStage):
        unit = linear_unit(s)
    else:
        raise TypeError(f"not a stage: {s!r}")
    m.submodules[name] = unit
    return unit.s_axis, unit.m_axis


class NetworkTop(wiring.Component):
    """The network: ``stages`` in order (the last a :class:`LinearStage`).

    Attributes
    ----------
    s_axis : In(axis_stream(in_lanes * in_bits))
        The image, channels-last raster order (int8; 9-bit words for an unsigned 8-bit input).
    m_axis : Out(...)
        The final stage's output stream (a linear layer: its logits and arg-max).
    """

    def __init__(self, stages):
        self.stages = tuple(stages)
        if not self.stages:
            raise ValueError("a network needs at least one stage")
        last = self.stages[-1]
        # the final linear layer is built here: its output width comes from its weights
        self._final = linear_unit(last) if isinstance(last, LinearStage) else None
        out = (self._final.signature.members["m_axis"].signature if self._final is not None
               else axis_stream(last.out_lanes * last.out_bits))
        super().__init__({"s_axis": In(axis_stream(self.stages[0].in_lanes * self.in_bits)), "m_axis": Out(out)})

    @property
    def in_bits(self) -> int:
        """The width of an image word on ``s_axis`` (the first stage's input words: 8, or 9 for an
        unsigned 8-bit input)."""
        return self.stages[0].in_bits

    @property
    def logit_width(self) -> int | None:
        """The width of each logit on ``m_axis`` (the final linear layer's exact accumulator); None
        when the last stage is not a linear layer."""
        return None if self._final is None else self._final.logit_width

    def elaborate(self, platform):
        m = Module()
        streams = _Streams(m, self.stages, wiring.flipped(self.s_axis), self.stages[0].in_lanes, self.in_bits)
        for i, s in enumerate(self.stages):
            name = f"s{i}_{s.name}"
            if isinstance(s, ConvStage):
                ports, out = _conv(m, s, name)
                ports = [ports]
            elif s is self.stages[-1] and self._final is not None:
                m.submodules[name] = self._final
                ports, out = [self._final.s_axis], self._final.m_axis
            elif isinstance(s, AddStage):
                add = ResidualAdd(s.lanes, s.shift_main, s.shift_shortcut, s.out_shift, s.relu, s.shortcut_depth,
                                  s.in_bits, s.out_bits, s.high, s.multiplier or None)
                m.submodules[name] = add
                ports, out = [add.s_axis_main, add.s_axis_shortcut], add.m_axis
            else:
                src, out = _unit(m, s, name)
                ports = [src]
            for k, (source, port) in enumerate(zip(s.inputs, ports)):
                wiring.connect(m, streams.take(source, s.in_lanes, f"{name}_in{k}"), port)
            streams.produced(s.name, out, s.out_lanes, s.out_bits)
        wiring.connect(m, streams.take(self.stages[-1].name, self.stages[-1].out_lanes, "out"),
                       wiring.flipped(self.m_axis))
        return m


class _Streams:
    """Each stage's output stream, handed to its readers: through a Fork when several read it, through a
    Relane when the reader takes another number of words a beat."""

    def __init__(self, m: Module, stages, image, lanes: int, bits: int):
        self.m, self.readers, self.out = m, {}, {}
        for s in stages:
            for i in s.inputs:
                self.readers[i] = self.readers.get(i, 0) + 1
        self.readers[stages[-1].name] = self.readers.get(stages[-1].name, 0) + 1   # the top's output
        self.produced("input", image, lanes, bits)

    def produced(self, name: str, stream, lanes: int, bits: int | None) -> None:
        n = self.readers.get(name, 0)
        if n > 1:
            fork = Fork(len(stream.tdata), n)
            self.m.submodules[f"fork_{name}"] = fork
            wiring.connect(self.m, stream, fork.s_axis)
            self.out[name] = ([fork.port(i) for i in range(n)], lanes, bits)
        else:
            self.out[name] = ([stream], lanes, bits)

    def take(self, name: str, lanes: int, where: str):
        """The stream ``where`` reads, ``lanes`` words a beat, through a :class:`Skid`: no path joins the
        reader's ``tready`` logic to the writer's output queue."""
        streams, have, bits = self.out[name]
        stream = streams.pop(0)
        if have != lanes:
            rl = Relane(have, lanes, bits)
            self.m.submodules[f"{where}_relane"] = rl
            wiring.connect(self.m, stream, rl.s_axis)
            stream = rl.m_axis
        skid = Skid(len(stream.tdata))
        self.m.submodules[f"{where}_skid"] = skid
        wiring.connect(self.m, stream, skid.s_axis)
        return skid.m_axis
