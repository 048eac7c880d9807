"""The quantised network as hardware stages (:mod:`hdl.network.stages`), layer by layer.

Each layer is built as its decision says (:mod:`winohdl.network.decision`, put on the nodes by a
planning pass): a convolution becomes the layer engine of its options on the geometry's best card
(:func:`winohdl.cards.best_card`), its quantised weights as the engine's weight stream, its bias and
shifts for the requantisation; pooling, the sum, global average pooling and the final linear layer
become their units at their lanes (the top puts a lane changer where a reader takes other lanes).
Flatten has no hardware: the stream is channels-last, so the linear layer's columns are permuted
from torch's (C, H, W) order to the stream's (H, W, C). What the top cannot chain yet (a ReLU that is
not fused, a pooling window that is not square and 2D, an output that is not a linear layer) is one
error line naming the layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from winohdl.core import progress
from winohdl.core.errors import WinohdlError

from hdl.engine.design import engine_datapath
from hdl.engine.model import EngineModel
from hdl.engine.plan import plan_engine
from hdl.network.stages import AddStage, ConvStage, GlobalPoolStage, LinearStage, PoolKind, PoolStage
from hdl.stream.axis import pack
from hdl.stream.pool import PoolShape
from winohdl.cards import best_card

from .graph import Kind
from .pace import own_cycles, stage_cycles
from .quant import QuantLayer, QuantNetwork
from .shortcut import main_and_shortcut
from .winograd_weights import check_decision, u_beats


def network_stages(qnet: QuantNetwork) -> list:
    """The stages of ``qnet`` in order, each built as its layer's decision says and naming the stages
    it reads; WinohdlError (one line) for what the top cannot build or a layer without a decision."""
    stages, made = [], {qnet.input.name: ("input", 1)}   # layer -> (stage it comes out of, lanes)
    flat_from = {}
    with progress.bar(len(qnet.layers) - 1, "network stages", "layer") as bar:
        for q in qnet.layers[1:]:
            bar.update()
            srcs = [made[i] for i in q.inputs]
            shape, lanes = qnet.layer(q.inputs[0]).shape, srcs[0][1]
            if q.kind == Kind.FLATTEN:
                made[q.name], flat_from[q.name] = srcs[0], shape
                continue
            if q.decision is None:
                raise WinohdlError(f"layer {q.name!r} has no decision: plan the network first "
                                   "(winohdl.network.passes)")
            stage = _stage(qnet, q, shape, lanes, flat_from.get(q.inputs[0]), srcs)
            stages.append(stage)
            made[q.name] = (stage.name, stage.out_lanes)
    if not stages or not isinstance(stages[-1], LinearStage) or len(qnet.outputs) != 1:
        raise WinohdlError("the network top needs one output, a final linear layer (the logits)")
    return stages


def _stage(qnet, q, shape, lanes, flat_from, srcs):
    """The stage of layer ``q`` reading ``srcs`` ((stage, lanes) per input)."""
    names = tuple(n for n, _ in srcs)
    if q.kind == Kind.CONV:
        stage = _conv(qnet, q, shape)
    elif q.kind in (Kind.MAXPOOL, Kind.AVGPOOL):
        stage = _pool(qnet, q, shape, q.decision.lanes)
    elif q.kind in (Kind.GLOBAL_AVGPOOL, Kind.GLOBAL_SUMPOOL):
        # the unit counts the pixels of a raster: a 1D or 3D map is its rows (or planes) one after another
        rows, width = math.prod(shape[2:-1]), shape[-1]
        stage = _global_pool(qnet, q, rows, width, shape[1])
    elif q.kind == Kind.LINEAR:
        stage = _linear(q, flat_from, lanes, q.decision, qnet.layer(q.inputs[0]).bits)
    elif q.kind == Kind.ADD:
        return _add(qnet, q, shape, srcs)
    else:
        raise WinohdlError(f"layer {q.name!r} ({q.kind.value}): the network top has no unit for it yet")
    return replace(stage, inputs=names)


def _global_pool(qnet: QuantNetwork, q: QuantLayer, rows: int, width: int, channels: int) -> GlobalPoolStage:
    """Global average pooling (or sum); with trained scales its sum times ``M`` and the shift (the same for
    every channel: 1/(H*W) is in ``M``)."""
    shifts, bits = qnet.shifts(q), qnet.layer(q.inputs[0]).bits
    if q.multiplier:
        return GlobalPoolStage(q.name, rows, width, channels, q.decision.lanes, shifts["shift"][0], divide=False,
                               multiplier=q.multiplier[0], in_bits=bits, out_bits=q.bits)
    return GlobalPoolStage(q.name, rows, width, channels, q.decision.lanes, shifts["shift"],
                           divide=q.kind == Kind.GLOBAL_AVGPOOL)


def _add(qnet: QuantNetwork, q: QuantLayer, shape, srcs) -> AddStage:
    """The residual sum: the input behind more convolutions is the main branch, the other the shortcut,
    whose FIFO is as deep as the node's decision says (sized from the plan's schedule:
    :mod:`winohdl.network.shortcut`), a whole frame where it says nothing. Shallower than the main
    branch holds, the fork, the branches and the sum wait on each other or the network slows."""
    main, short = main_and_shortcut(qnet.layer, q)
    lanes = q.decision.lanes
    depth = q.decision.shortcut or math.prod(shape[1:]) // lanes
    names = (srcs[main][0], srcs[short][0])
    if not q.multiplier:
        align, out = qnet.shifts(q)["align"], qnet.shifts(q)["shift"]
        return AddStage(q.name, lanes, align[main], align[short], out, q.relu, depth, names, high=q.relu_max)
    bits = {qnet.layer(i).bits for i in q.inputs}
    if len(bits) != 1:
        raise WinohdlError(f"layer {q.name!r}: the sum's inputs come in words of {sorted(bits)} bits; the add unit "
                           "takes one width (quantise both branches alike: both signed or both unsigned)")
    # trained scales: each branch times its multiplier, one rounding shift; unsigned: the clamp at 0 below
    return AddStage(q.name, lanes, 0, 0, q.requant_shift[0], q.relu or not q.signed, depth, names,
                    high=q.relu_max, multiplier=(q.multiplier[main], q.multiplier[short]), in_bits=bits.pop(),
                    out_bits=q.bits)


def _conv(qnet: QuantNetwork, q: QuantLayer, shape) -> ConvStage:
    """The layer engine its decision names, on the geometry's best card, with the layer's weights."""
    if q.attrs.groups != 1:
        raise WinohdlError(f"layer {q.name!r}: a grouped convolution ({q.attrs.groups} groups) is built dense "
                           "(winohdl.network.rewrite.expand_groups; quantisation does it)")
    o, kind = q.decision.options, q.decision.kind
    check_decision(q)
    dp = engine_datapath(best_card(o.geometry), o)
    plan = plan_engine(o, dp, kind)
    # a Winograd-domain layer's trained U in place of G_int g (winohdl.network.winograd_weights)
    beats = u_beats(q, dp) if q.attrs.winograd else EngineModel(o, dp, kind).weight_beats(q.weight)
    shift = qnet.shifts(q)["shift"]
    if o.data_width != qnet.layer(q.inputs[0]).bits:
        raise WinohdlError(f"layer {q.name!r}: its engine reads {o.data_width}-bit words, its input's are "
                           f"{qnet.layer(q.inputs[0]).bits}-bit: plan the network again")
    # an unsigned output (range [0, 2**b - 1] in a (b+1)-bit word) is the word's saturation at 0 below
    return ConvStage(q.name, plan, tuple(pack(b, plan.w_width) for b in beats),
                     tuple(int(b) for b in q.bias), tuple(int(s) for s in shift), q.relu or not q.signed,
                     high=q.relu_max, multiplier=tuple(q.multiplier), out_bits=q.bits)


def _pool(qnet: QuantNetwork, q: QuantLayer, shape, lanes: int) -> PoolStage:
    a = q.attrs
    if len(shape) != 4 or len(set(a.kernel)) != 1 or len(set(a.stride)) != 1 or len(set(a.padding)) != 1:
        raise WinohdlError(f"layer {q.name!r}: the pooling unit takes square 2D windows, got {a.describe()}")
    if q.kind == Kind.AVGPOOL and any(a.padding) and not a.count_include_pad:
        raise WinohdlError(f"layer {q.name!r}: average pooling that excludes padding has no unit")
    ps = PoolShape(shape[2], shape[3], shape[1], lanes, a.kernel[0], a.stride[0], a.padding[0])
    if q.kind == Kind.MAXPOOL:
        return PoolStage(q.name, PoolKind.MAX, ps, bits=q.bits)
    if q.multiplier:        # trained scales: the window sum times M (1/count in it), one shift
        if qnet.layer(q.inputs[0]).bits != q.bits:
            raise WinohdlError(f"layer {q.name!r}: average pooling from {qnet.layer(q.inputs[0]).bits}-bit words to "
                               f"{q.bits}-bit ones has no unit (quantise its output as its input is: signed or not)")
        return PoolStage(q.name, PoolKind.AVG, ps, q.requant_shift[0], bits=q.bits, multiplier=q.multiplier[0])
    return PoolStage(q.name, PoolKind.AVG, ps, qnet.shifts(q)["shift"])


def _linear(q: QuantLayer, flat_from, lanes: int, decision, in_bits: int) -> LinearStage:
    if not q.logits:
        raise WinohdlError(f"layer {q.name!r}: only the final linear layer (the logits) has a unit yet")
    w = np.asarray(q.weight, dtype=np.int64)
    if flat_from is not None and len(flat_from) > 2:
        # torch flattens (C, H, W); the stream is (H, W, C)
        w = np.moveaxis(w.reshape(w.shape[0], *flat_from[1:]), 1, -1).reshape(w.shape[0], -1)
    M, parallel = w.shape[0], decision.lanes
    if M % parallel:
        raise WinohdlError(f"layer {q.name!r}: {parallel} outputs at once do not divide its {M} outputs")
    return LinearStage(q.name, tuple(tuple(int(v) for v in row) for row in w), tuple(int(b) for b in q.bias),
                       lanes, parallel, in_bits=in_bits, multipliers=decision.multipliers or 0)


TOP = "network"


DESIGN_FORMAT = "winohdl-network-design/1"


def image_beats(image, lanes: int, bits: int = 8) -> list[int]:
    """An integer image (C, ...) as the top's input beats: channels-last raster order, ``lanes`` words of
    ``bits`` a beat."""
    flat = np.moveaxis(np.asarray(image, dtype=np.int64), 0, -1).reshape(-1)
    return [pack(flat[b * lanes:(b + 1) * lanes], bits) for b in range(len(flat) // lanes)]


@dataclass(frozen=True)
class GeneratedNetwork:
    """The network's stages, its top-level Verilog, its ports and what a testbench needs to read its output."""

    stages: tuple
    verilog: str
    logit_width: int
    ports: tuple = ()

    def design_json(self) -> dict:
        """``design.json`` of the network: the top, its ports (from the signature), the output's format
        and every stage (an engine's options, multipliers and memories; a unit's lanes)."""
        P = self.parallel
        return {"format": DESIGN_FORMAT, "top": TOP, "verilog": "network.v",
                "ports": [p.to_json() for p in self.ports],
                "output": {"logits_per_beat": P, "logit_width": self.logit_width,
                           "argmax_bit": P * self.logit_width, "beats_per_image": len(self.stages[-1].weights) // P},
                "stages": [stage_json(s) for s in self.stages]}

    def core_file(self) -> str:
        """A FuseSoC (CAPI=2) core file, as for a tile."""
        return "\n".join(["CAPI=2:", f"name: winohdl:networks:{TOP}:1.0.0",
                          "description: a quantised CNN generated by winohdl (bit-exact with its integer model)",
                          "filesets:", "  rtl:", "    files:", "      - network.v", "    file_type: verilogSource",
                          "targets:", "  default:", "    filesets: [rtl]", f"    toplevel: {TOP}", ""])

    @property
    def parallel(self) -> int:
        return self.stages[-1].parallel

    def text(self) -> str:
        """One line per stage: what it is, its lanes, its engine or unit."""
        lines, cycles = [], stage_cycles(self.stages)
        for s in self.stages:
            if isinstance(s, ConvStage):
                o, p = s.plan.options, s.plan
                buffers = (f"{o.line_rows} line-buffer rows{' x 2 rings' if o.line_rings == 2 else ''}"
                           if o.line_buffered else "two whole frames buffered")
                own = own_cycles(p)
                every = (f"{cycles[s.name]} cycles at the pace of the stages before it ({own} fed without gaps, "
                         if cycles[s.name] != own else f"{own} cycles (")
                lines.append(f"{s.name:<14} conv     {p.kind.value} {o.geometry.describe()}; PK={o.PK} PC={o.PC}; "
                             f"{buffers}; {p.multipliers} multipliers; a frame every {every}"
                             f"{p.performance.cycles} alone); requantise{_clamp_text(s)}")
            elif isinstance(s, LinearStage):
                q = s.multipliers
                walk = f"{q} multiplier{'s' * (q > 1)} walking its non-zero weights" if q else f"{s.parallel} multipliers"
                lines.append(f"{s.name:<14} linear   {len(s.weights)} x {len(s.weights[0])}, {walk}, "
                             f"{self.logit_width}-bit logits, arg-max")
            elif isinstance(s, AddStage):
                lines.append(f"{s.name:<14} add      {s.in_lanes} lanes; shortcut FIFO {s.shortcut_depth:,} beats")
            else:
                lines.append(f"{s.name:<14} {type(s).__name__.replace('Stage', '').lower():<8} {s.in_lanes} lanes")
        return "\n".join(lines) + "\n"

    def stimulus(self, images, expected, seed: int = 1, gaps: float = 0.2, backpressure: float = 0.2) -> dict:
        """The testbench's input: integer images (N, C, ...) as beats, and per image [logits, arg-max]."""
        beats = [image_beats(img, self.stages[0].in_lanes, self.stages[0].in_bits) for img in images]
        want = [[[int(v) for v in row], int(np.argmax(row))] for row in np.asarray(expected)]
        return {"images": beats, "expected": want, "parallel": self.parallel, "logit_width": self.logit_width,
                "seed": seed, "gaps": gaps, "backpressure": backpressure,
                "stall_cycles": self.stall_cycles(gaps, backpressure)}

    def stall_cycles(self, gaps: float, backpressure: float) -> int:
        """Cycles without an image out after which the testbench calls the network stuck (a deadlock),
        not slow: twice every stage taking the slowest engine's frame alone, slowed by the gaps and the
        back-pressure, plus 10,000."""
        slowest = max((s.plan.performance.cycles for s in self.stages if isinstance(s, ConvStage)), default=0)
        return int(2 * len(self.stages) * slowest / ((1 - gaps) * (1 - backpressure))) + 10_000


def generate_network(qnet: QuantNetwork) -> GeneratedNetwork:
    """The stages of ``qnet`` (each layer as its decision says) and the Verilog of their top (``network``)."""
    from hdl.network.top import NetworkTop
    from hdl.verilog import to_verilog
    from hdl.design import ports_of
    stages = tuple(network_stages(qnet))
    progress.status("writing the network's Verilog")
    top = NetworkTop(stages)
    width = top.logit_width
    return GeneratedNetwork(stages, to_verilog(top, TOP), width, ports_of(top.signature, clocked=True))


def _clamp_text(s) -> str:
    return "" if not s.relu else " + ReLU" if s.high is None else f" + clamp to [0, {s.high}]"


def stage_json(s) -> dict:
    """A stage as design.json records it: its streams, and an engine's options, multipliers and memories."""
    d = {"name": s.name, "stage": type(s).__name__.replace("Stage", "").lower(), "inputs": list(s.inputs),
         "in_lanes": s.in_lanes, "out_lanes": s.out_lanes}
    if (s.in_bits, s.out_bits) not in ((8, 8), (8, None)):
        d.update(in_bits=s.in_bits, out_bits=s.out_bits)      # words other than int8 (unsigned activations)
    if isinstance(s, ConvStage):
        p = s.plan
        d.update({"engine": p.kind.value, "options": p.options.to_json(), "multipliers": p.multipliers,
                  "memories": [m.to_json() for m in p.memories], "cycles": p.performance.cycles, "relu": s.relu,
                  "high": s.high})
    if isinstance(s, LinearStage) and s.multipliers:
        d["multipliers"] = s.multipliers          # walking its non-zero weights
    return d
