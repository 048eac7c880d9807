"""The stages of a network in hardware terms: frozen specifications, each built into Components.

The app layer (:mod:`winohdl.network.hardware`) makes them from the quantised network and the plan;
:class:`~hdl.network.top.NetworkTop` chains them. Each stage says how many words a beat it takes
(``in_lanes``) and gives (``out_lanes``); a :class:`~hdl.stream.relane.Relane` goes between two that
differ. ``inputs`` names the stages it reads (``"input"``: the image); a stage that several read goes
through a :class:`~hdl.stream.fork.Fork`. Every value is an activation word (two's complement, 8 bits
unless a stage says otherwise: ``in_bits``, ``out_bits``; 9 for unsigned 8-bit activations) except the
logits.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


from ..engine.plan import EnginePlan
from ..stream.pool import PoolShape

ACT_BITS = 8


class _Stage:
    """What every stage says of its streams: int8 values in and out, as many lanes out as in (unless it
    says otherwise)."""

    in_bits = ACT_BITS
    out_bits = ACT_BITS

    @property
    def out_lanes(self) -> int:
        return self.in_lanes


class PoolKind(enum.Enum):
    MAX = "max"
    AVG = "avg"


@dataclass(frozen=True)
class ConvStage(_Stage):
    """A convolution: the layer engine (line buffers), its results in raster order, requantised.

    ``weights``: the engine's weight stream (one packed beat per (k, c), k-major) that a ROM replays
    after reset; ``bias`` and ``shift`` per output channel (the accumulator's exponent to the
    output's), ``relu`` the fused clamp at 0, ``high`` the clamp above it (ReLU6) or None; ``out_bits``
    the output words' width (9 for unsigned 8-bit activations: ``relu`` then clamps at 0); the input
    words' is the engine's data width."""

    name: str
    plan: EnginePlan
    weights: tuple[int, ...]
    bias: tuple[int, ...]
    shift: tuple[int, ...]
    relu: bool
    inputs: tuple[str, ...] = ("input",)
    high: int | None = None
    multiplier: tuple[int, ...] = ()   # per output channel before the shift (trained scales); empty: 1
    out_bits: int = ACT_BITS

    @property
    def in_bits(self) -> int:
        return self.plan.options.data_width

    @property
    def in_lanes(self) -> int:
        return self.plan.options.PC

    @property
    def out_lanes(self) -> int:
        return self.plan.options.PK


@dataclass(frozen=True)
class PoolStage(_Stage):
    """Max or average pooling (a power-of-two window; ``extra_shift`` requantises an average); max pooling
    on words of ``bits`` (in and out)."""

    name: str
    kind: PoolKind
    shape: PoolShape
    extra_shift: int = 0
    inputs: tuple[str, ...] = ("input",)
    bits: int = ACT_BITS
    multiplier: int = 1     # average, trained scales: the window sum times M (1/kernel**2 in it), then the shift

    @property
    def in_bits(self) -> int:
        return self.bits

    @property
    def out_bits(self) -> int:
        return self.bits

    @property
    def in_lanes(self) -> int:
        return self.shape.lanes


@dataclass(frozen=True)
class GlobalPoolStage(_Stage):
    """Global average pooling over a ``height x width`` map (a power of two of pixels), or with ``divide``
    false the global sum (any map: its 1/(H*W) went into the next layer's weights, or with trained scales
    into ``multiplier``)."""

    name: str
    height: int
    width: int
    channels: int
    lanes: int
    extra_shift: int = 0
    inputs: tuple[str, ...] = ("input",)
    divide: bool = True
    multiplier: int = 1     # trained scales: the sum times M (1/(H*W) in it, ``divide`` false), then the shift
    in_bits: int = ACT_BITS
    out_bits: int = ACT_BITS

    @property
    def in_lanes(self) -> int:
        return self.lanes


@dataclass(frozen=True)
class LinearStage(_Stage):
    """The final fully connected layer: exact logits and the arg-max. ``weights`` (M rows of N) has
    its columns in stream order (channels-last), not torch's flatten order; ``in_bits`` the input
    words' width; ``multipliers``: 0, the dense unit (``parallel`` multipliers), else the unit walking the
    non-zero weights with that many (:class:`hdl.stream.sparse_linear.SparseLinear`; ``parallel`` every output)."""

    name: str
    weights: tuple[tuple[int, ...], ...]
    bias: tuple[int, ...]
    lanes: int
    parallel: int
    inputs: tuple[str, ...] = ("input",)
    in_bits: int = ACT_BITS
    multipliers: int = 0
    out_bits = None     # the logits: the unit computes their width from the weights

    @property
    def in_lanes(self) -> int:
        return self.lanes

    @property
    def out_lanes(self) -> int:
        return self.parallel


@dataclass(frozen=True)
class AddStage(_Stage):
    """A residual sum: ``inputs`` = (main branch, shortcut); the aligning left shifts (or, trained scales,
    the two multipliers), the output's rounding shift, the fused ReLU, and the shortcut FIFO's depth in beats (deep enough for what the
    main branch holds between the fork and the sum: see :class:`hdl.stream.add.ResidualAdd`)."""

    name: str
    lanes: int
    shift_main: int
    shift_shortcut: int
    out_shift: int
    relu: bool
    shortcut_depth: int
    inputs: tuple[str, ...] = ("input", "input")
    high: int | None = None
    multiplier: tuple[int, ...] = ()   # trained scales: (M_main, M_shortcut) in place of the aligning shifts
    in_bits: int = ACT_BITS
    out_bits: int = ACT_BITS

    @property
    def in_lanes(self) -> int:
        return self.lanes


Stage = ConvStage | PoolStage | GlobalPoolStage | LinearStage | AddStage
