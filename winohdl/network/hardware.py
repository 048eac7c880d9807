"""The quantised network as hardware stages (:mod:`hdl.network.stages`), layer by layer.

A convolution becomes a layer engine on a proven card (the constructive card of the layer's kernel,
stride and dilation with a 2-wide output tile per axis, unless a choice says otherwise) with line
buffers, its quantised weights as the engine's weight stream, its bias and shifts for the
requantisation; pooling, global average pooling and the final linear layer become their units.
Flatten has no hardware: the stream is channels-last, so the linear layer's columns are permuted
from torch's (C, H, W) order to the stream's (H, W, C). What the top cannot chain yet (a residual
sum, a ReLU that is not fused, a grouped convolution) is one error line naming the layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry

from hdl.engine.design import engine_datapath
from hdl.engine.model import EngineModel
from hdl.engine.modes import Buffering, EngineKind
from hdl.engine.options import EngineOptions
from hdl.engine.plan import plan_engine
from hdl.network.stages import ConvStage, GlobalPoolStage, LinearStage, PoolKind, PoolStage
from hdl.stream.axis import pack
from hdl.stream.pool import PoolShape
from miner.constructive import constructive_card

from .graph import Kind
from .quant import QuantLayer, QuantNetwork


@dataclass(frozen=True)
class ConvChoice:
    """How one convolution is built: the card's output tile per axis, PK, PC and the engine kind."""

    tile: tuple[int, ...]
    parallel_out: int = 1
    parallel_in: int = 1
    kind: EngineKind = EngineKind.WINOGRAD


def default_choice(layer: QuantLayer) -> ConvChoice:
    """F(2, k) per axis on one channel a cycle: the smallest Winograd engine."""
    return ConvChoice((2,) * len(layer.attrs.kernel))


def network_stages(qnet: QuantNetwork, choose: Callable[[QuantLayer], ConvChoice] = default_choice) -> list:
    """The stages of ``qnet`` in order; WinohdlError (one line) for what the top cannot chain."""
    stages, lanes, flat_from = [], None, None
    layers = qnet.layers
    for prev, q in zip(layers, layers[1:]):
        if q.inputs != (prev.name,):
            raise WinohdlError(f"layer {q.name!r} ({q.kind.value}) does not read the layer before it: "
                               "the network top chains a sequence of layers (residual sums come next)")
        shape = prev.shape
        if q.kind == Kind.CONV:
            stage = _conv(qnet, q, shape, choose(q))
        elif q.kind in (Kind.MAXPOOL, Kind.AVGPOOL):
            stage = _pool(qnet, q, shape, lanes or 1)
        elif q.kind == Kind.GLOBAL_AVGPOOL:
            stage = GlobalPoolStage(q.name, shape[2], shape[3], shape[1], lanes or 1,
                                    qnet.shifts(q)["shift"])
        elif q.kind == Kind.FLATTEN:
            flat_from = shape
            continue
        elif q.kind == Kind.LINEAR:
            stage = _linear(q, flat_from, lanes or 1)
        else:
            raise WinohdlError(f"layer {q.name!r} ({q.kind.value}): the network top has no unit for it yet")
        stages.append(stage)
        lanes = stage.out_lanes
    if not stages or not isinstance(stages[-1], LinearStage):
        raise WinohdlError("the network top needs a final linear layer (the logits)")
    return stages


def _conv(qnet: QuantNetwork, q: QuantLayer, shape, choice: ConvChoice) -> ConvStage:
    a = q.attrs
    if a.groups != 1:
        raise WinohdlError(f"layer {q.name!r}: grouped convolution ({a.groups} groups) has no engine")
    if len(a.kernel) != len(shape) - 2:
        raise WinohdlError(f"layer {q.name!r}: input {shape} does not match the kernel {a.kernel}")
    geo = Geometry(tuple(choice.tile), a.kernel, a.stride, a.dilation)
    o = EngineOptions(geo, a.in_channels, a.out_channels, tuple(shape[2:]), a.padding, choice.parallel_out,
                      choice.parallel_in, buffering=Buffering.LINES)
    dp = engine_datapath(constructive_card(geo), o)
    plan = plan_engine(o, dp, choice.kind)
    beats = EngineModel(o, dp, choice.kind).weight_beats(q.weight)
    shift = qnet.shifts(q)["shift"]
    return ConvStage(q.name, plan, tuple(pack(b, plan.w_width) for b in beats),
                     tuple(int(b) for b in q.bias), tuple(int(s) for s in shift), q.relu)


def _pool(qnet: QuantNetwork, q: QuantLayer, shape, lanes: int) -> PoolStage:
    a = q.attrs
    if len(shape) != 4 or len(set(a.kernel)) != 1 or len(set(a.stride)) != 1 or len(set(a.padding)) != 1:
        raise WinohdlError(f"layer {q.name!r}: the pooling unit takes square 2D windows, got {a.describe()}")
    if q.kind == Kind.AVGPOOL and any(a.padding) and not a.count_include_pad:
        raise WinohdlError(f"layer {q.name!r}: average pooling that excludes padding has no unit")
    ps = PoolShape(shape[2], shape[3], shape[1], lanes, a.kernel[0], a.stride[0], a.padding[0])
    if q.kind == Kind.MAXPOOL:
        return PoolStage(q.name, PoolKind.MAX, ps)
    return PoolStage(q.name, PoolKind.AVG, ps, qnet.shifts(q)["shift"])


def _linear(q: QuantLayer, flat_from, lanes: int) -> LinearStage:
    if not q.logits:
        raise WinohdlError(f"layer {q.name!r}: only the final linear layer (the logits) has a unit yet")
    w = np.asarray(q.weight, dtype=np.int64)
    if flat_from is not None and len(flat_from) > 2:
        # torch flattens (C, H, W); the stream is (H, W, C)
        w = np.moveaxis(w.reshape(w.shape[0], *flat_from[1:]), 1, -1).reshape(w.shape[0], -1)
    M = w.shape[0]
    return LinearStage(q.name, tuple(tuple(int(v) for v in row) for row in w), tuple(int(b) for b in q.bias),
                       lanes, M)
