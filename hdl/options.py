"""Validated hardware options shared by the generator, the model and the testbench; modes are enums."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from winohdl.core.errors import WinohdlError

MIN_WIDTH, MAX_WIDTH = 2, 32
MAX_OUTPUT_WIDTH = 64


class Pipeline(enum.Enum):
    """Register placement: ``none`` (combinational), ``stages`` (a register after every operator:
    between the 1D passes of a row-column transform, the multiplier operands, the products, the
    output transform before the exact division, and the outputs; latency computed by the
    components, :data:`STAGES_LATENCY` where no transform is row-column, as in the direct
    baseline) or ``deep`` (a register cut every ``adders_per_stage`` adder levels inside every
    transform, balanced; latency computed by the components)."""

    NONE = "none"
    STAGES = "stages"
    DEEP = "deep"


TARGETS = ("wino", "direct")
"""The two cores of a tile design folder: the Winograd tile and the direct baseline."""

STAGES_LATENCY = 4
"""``stages`` latency of a design whose transforms are one pass each (the direct baseline's)."""


class KernelTransform(enum.Enum):
    """``hw``: the tile takes g and transforms it. ``offline``: the tile takes u = G_int g."""

    HW = "hw"
    OFFLINE = "offline"


class MultiplierKind(enum.Enum):
    """Where a multiplier is built: ``dsp``, a hard multiplier block; ``fabric``, LUTs and carry chains
    (:func:`hdl.fabric.fabric_product`), where the hard blocks run out."""

    DSP = "dsp"
    FABRIC = "fabric"


class FabricTree(enum.Enum):
    """How often a fabric multiplier's adder tree is registered (:func:`hdl.fabric.tree_cuts`): after
    ``every-level`` (its fastest path: the partial products' selects and one adder), or after
    ``every-second-level`` (a third fewer flip-flops for two adders a path), where flip-flops bind."""

    EVERY_LEVEL = "every-level"
    EVERY_SECOND_LEVEL = "every-second-level"

    @property
    def span(self) -> int:
        """Adder levels between two registers."""
        return 1 if self is FabricTree.EVERY_LEVEL else 2


class DataValues(enum.Enum):
    """What the d words hold: any value of their two's-complement width (``signed``), or only the
    non-negative ones (``non-negative``: ``[0, 2**(w-1) - 1]``, an unsigned ``w - 1``-bit activation
    such as a trained ``QuantReLU``'s in a ``w``-bit word). Every width after them is computed from
    that range, so non-negative words save about a bit in each node of the datapath."""

    SIGNED = "signed"
    NON_NEGATIVE = "non-negative"


def data_range(width: int, values: "DataValues" = DataValues.SIGNED):
    """The values a ``width``-bit d word may hold (:class:`DataValues`), as a :class:`hdl.widths.Range`."""
    from .widths import Range, word_range
    values = choice(DataValues, values, "data values")
    return word_range(width) if values is DataValues.SIGNED else Range(0, (1 << (width - 1)) - 1)


class Rounding(enum.Enum):
    """How ``output_shift`` low bits are dropped from y (docs/interfaces.md defines each: the tile)."""

    TRUNCATE = "truncate"
    ROUND_HALF_UP = "round-half-up"
    ROUND_HALF_EVEN = "round-half-even"


OBJECTIVES = {
    "dsp": "multiplier blocks, then adder bits, then logic depth, then adders, then R",
    "bits": "adder bits, then multiplier blocks, then logic depth, then adders, then R",
    "adders": "adders (B^T, G in hardware, A^T, division), then multiplier blocks, then adder bits, then depth",
    "depth": "logic depth, then multiplier blocks, then adder bits",
    "rank": "R (multiplications), then adder bits, then logic depth",
}
DEFAULT_OBJECTIVE = "dsp"
"""What the search minimises (``--objective``), each a sort order over the cost (:mod:`hdl.cost`)."""


def values(enum_type: type[enum.Enum]) -> tuple[str, ...]:
    """The values of ``enum_type``'s members, in declaration order (a command line's choices)."""
    return tuple(m.value for m in enum_type)


def choice(enum_type: type[enum.Enum], value, noun: str) -> enum.Enum:
    """``value`` (an enum member or its string) as a member of ``enum_type``; one-line error otherwise."""
    if isinstance(value, enum_type):
        return value
    try:
        return enum_type(value)
    except ValueError:
        raise WinohdlError(f"unknown {noun} {value!r}: choose one of "
                           f"{', '.join(m.value for m in enum_type)}") from None


def parse_choices(text: str, choices: tuple[str, ...], noun: str, every: str) -> list[str]:
    """``"a,b"`` -> ["a", "b"], each one of ``choices``; the word ``every`` means all of them.

    An empty list is an error, as is a name given twice.
    """
    names = list(choices) if text == every else [n.strip() for n in str(text).split(",")]
    if not names or any(not n for n in names):
        raise WinohdlError(f"empty {noun} list {text!r}: choose from {', '.join(choices)} or {every}")
    for n in names:
        if n not in choices:
            raise WinohdlError(f"unknown {noun} {n!r}: choose {', '.join(choices)} or {every}")
    if len(set(names)) != len(names):
        raise WinohdlError(f"{noun} list {text!r} names one twice")
    return names


def _width(name: str, w, lo: int, hi: int) -> None:
    if isinstance(w, bool) or not isinstance(w, int) or not lo <= w <= hi:
        raise WinohdlError(f"unsupported {name} {w!r}: choose {lo}..{hi} bits")


@dataclass(frozen=True)
class HardwareOptions:
    """How a card becomes hardware; validated on construction.

    Parameters
    ----------
    data_width, kernel_width : int
        Signed two's complement widths of the d and g words (2..32).
    pipeline : Pipeline
    kernel_transform : KernelTransform
    output_width : int or None
        None: y is exact (width from the analysis). Otherwise y is shifted right by
        ``output_shift`` bits with ``rounding`` and saturated to this width (2..64).
    rounding : Rounding
        Only with ``output_width``; ``output_shift`` > 0 for anything but truncate to matter.
    output_shift : int
        Only with ``output_width``; >= 0.
    adders_per_stage : int or None
        Only with ``deep`` (default 1 there): adder levels between register cuts (1..64).
    data_values : DataValues
        ``signed`` (default) or ``non-negative`` d words: the range every width is computed from.
    """

    data_width: int = 8
    kernel_width: int = 8
    pipeline: Pipeline = Pipeline.NONE
    kernel_transform: KernelTransform = KernelTransform.HW
    output_width: int | None = None
    rounding: Rounding = Rounding.TRUNCATE
    output_shift: int = 0
    adders_per_stage: int | None = None
    data_values: DataValues = DataValues.SIGNED

    def __post_init__(self):
        _width("data width", self.data_width, MIN_WIDTH, MAX_WIDTH)
        object.__setattr__(self, "data_values", choice(DataValues, self.data_values, "data values"))
        _width("kernel width", self.kernel_width, MIN_WIDTH, MAX_WIDTH)
        object.__setattr__(self, "pipeline", choice(Pipeline, self.pipeline, "pipeline"))
        object.__setattr__(self, "kernel_transform", choice(KernelTransform, self.kernel_transform,
                                                            "kernel transform"))
        object.__setattr__(self, "rounding", choice(Rounding, self.rounding, "rounding"))
        if self.pipeline is Pipeline.DEEP:
            if self.adders_per_stage is None:
                object.__setattr__(self, "adders_per_stage", 1)
            if isinstance(self.adders_per_stage, bool) or not isinstance(self.adders_per_stage, int) or \
                    not 1 <= self.adders_per_stage <= 64:
                raise WinohdlError(f"--adders-per-stage must be 1..64, got {self.adders_per_stage!r}")
        elif self.adders_per_stage is not None:
            raise WinohdlError("--adders-per-stage applies only with --pipeline deep")
        if self.output_width is None:
            if self.rounding is not Rounding.TRUNCATE:
                raise WinohdlError("--rounding applies only with --output-width")
            if self.output_shift:
                raise WinohdlError("--output-shift applies only with --output-width")
        else:
            _width("output width", self.output_width, MIN_WIDTH, MAX_OUTPUT_WIDTH)
        if isinstance(self.output_shift, bool) or not isinstance(self.output_shift, int) or \
                not 0 <= self.output_shift <= MAX_OUTPUT_WIDTH:
            raise WinohdlError(f"--output-shift must be 0..{MAX_OUTPUT_WIDTH}, got {self.output_shift!r}")

    @classmethod
    def make(cls, data_width=8, kernel_width=8, pipeline="none", kernel_transform="hw",
             output_width=None, rounding="truncate", output_shift=0, adders_per_stage=None) -> "HardwareOptions":
        """Options from plain values (strings for the modes); same validation."""
        return cls(data_width, kernel_width, pipeline, kernel_transform, output_width, rounding, output_shift,
                   adders_per_stage)

    @property
    def pipelined(self) -> bool:
        return self.pipeline is not Pipeline.NONE


    @property
    def tag(self) -> str:
        """Short suffix naming the options, e.g. ``w8x8``, ``w8x8_stages_offline``."""
        parts = [f"w{self.data_width}{'u' if self.data_values is DataValues.NON_NEGATIVE else ''}x{self.kernel_width}"]
        if self.pipelined:
            parts.append(self.pipeline.value + (f"{self.adders_per_stage}" if self.pipeline is Pipeline.DEEP else ""))
        if self.kernel_transform is not KernelTransform.HW:
            parts.append(self.kernel_transform.value)
        if self.output_width is not None:
            parts.append(f"y{self.output_width}s{self.output_shift}"
                         f"{self.rounding.value.replace('round-half-', 'r')}")
        return "_".join(parts)

    @property
    def d_range(self):
        """The values a d word holds (:func:`data_range`)."""
        return data_range(self.data_width, self.data_values)

    def to_json(self) -> dict:
        out = {"data_width": self.data_width, "kernel_width": self.kernel_width, "pipeline": self.pipeline.value,
               "kernel_transform": self.kernel_transform.value, "output_width": self.output_width,
               "rounding": self.rounding.value, "output_shift": self.output_shift,
               "adders_per_stage": self.adders_per_stage}
        if self.data_values is not DataValues.SIGNED:       # (a folder written before it has none)
            out["data_values"] = self.data_values.value
        return out

    @classmethod
    def from_json(cls, data) -> "HardwareOptions":
        """Strict: a JSON object with exactly the fields of :meth:`to_json`."""
        if not isinstance(data, dict):
            raise WinohdlError(f"options must be a JSON object, got {type(data).__name__}")
        expected = set(cls().to_json())
        unknown, missing = sorted(set(data) - expected - {"data_values"}), sorted(expected - set(data))
        if unknown:
            raise WinohdlError(f"unknown option {unknown[0]!r}")
        if missing:
            raise WinohdlError(f"option {missing[0]!r} is missing")
        return cls(**data)
