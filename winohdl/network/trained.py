"""The quantisation a model was trained with (QONNX / QCDQ): what a node carries from the importer to
the quantiser, kept rather than re-calibrated (:mod:`winohdl.network.qonnx_import` reads it,
:mod:`winohdl.network.quant` uses it, ``network.json`` records it)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from hdl.options import DataValues
from winohdl.core.errors import WinohdlError

MIN_WEIGHT_BITS, MAX_WEIGHT_BITS = 2, 8
MIN_ACT_BITS, ACT_BITS = 2, 8       # unsigned activations 2 to 8 bits; signed ones 8 (the int8 stream)


@dataclass(frozen=True)
class Trained:
    """A node's trained scales.

    Attributes
    ----------
    scale : float or None
        The output activation's scale (float32 value): ``value = q * scale``, ``q`` an integer of
        ``bits`` bits, signed or not (:attr:`signed`); for a convolution or linear layer followed by a
        ReLU, the scale after the ReLU. None: the node has no activation quantiser of its own.
    weight_scales : tuple of float
        A convolution's or linear layer's weight scale per output channel (one entry: per tensor).
    weight_bits : int
        The weights' bit width (2 to 8, signed, zero point 0).
    signed : bool
        The output activation is signed (``bits`` = 8: ``[-128, 127]``) or unsigned (``[0, 2**bits - 1]``:
        Brevitas's default ``QuantReLU``); its hardware word is then one bit wider (:attr:`word_bits`).
    bits : int
        The output activation's bit width (8 signed; 2 to 8 unsigned).
    """

    scale: float | None = None
    weight_scales: tuple[float, ...] = ()
    weight_bits: int = 8
    signed: bool = True
    bits: int = ACT_BITS

    def __post_init__(self):
        scales = ([] if self.scale is None else [self.scale]) + list(self.weight_scales)
        if not all(isinstance(s, (int, float)) and math.isfinite(s) and s > 0 for s in scales):
            raise WinohdlError(f"trained scales must be positive finite numbers, got {scales[:4]}")
        if isinstance(self.weight_bits, bool) or not isinstance(self.weight_bits, int) \
                or not MIN_WEIGHT_BITS <= self.weight_bits <= MAX_WEIGHT_BITS:
            raise WinohdlError(f"trained weight bits must be {MIN_WEIGHT_BITS} to {MAX_WEIGHT_BITS}, "
                               f"got {self.weight_bits!r}")
        if not isinstance(self.signed, bool) or isinstance(self.bits, bool) or not isinstance(self.bits, int) \
                or not (self.bits == ACT_BITS if self.signed else MIN_ACT_BITS <= self.bits <= ACT_BITS):
            raise WinohdlError(f"trained activations must be signed {ACT_BITS}-bit or unsigned {MIN_ACT_BITS} to "
                               f"{ACT_BITS}-bit, got {'signed' if self.signed else 'unsigned'} {self.bits!r}")
        object.__setattr__(self, "weight_scales", tuple(float(s) for s in self.weight_scales))
        if self.scale is not None:
            object.__setattr__(self, "scale", float(self.scale))

    @property
    def weights(self) -> bool:
        """The node's weights are trained integers (a convolution or linear layer)."""
        return bool(self.weight_scales)

    @property
    def range(self) -> tuple[int, int]:
        """The output activation's integers, ``(lo, hi)``."""
        return (-(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1) if self.signed else (0, (1 << self.bits) - 1)

    @property
    def word_bits(self) -> int:
        """The width of the two's-complement word that carries the activation in hardware: ``bits``
        signed, one more unsigned (``[0, 255]`` in a 9-bit word)."""
        return self.bits + (0 if self.signed else 1)

    def to_dict(self) -> dict:
        d = {"scale": self.scale, "weight_scales": list(self.weight_scales), "weight_bits": self.weight_bits}
        return d if self.signed else {**d, "signed": False, "bits": self.bits}

    @classmethod
    def from_dict(cls, d) -> "Trained":
        if not isinstance(d, dict) or not set(d) <= {"scale", "weight_scales", "weight_bits", "signed", "bits"} \
                or not isinstance(d.get("weight_scales", []), list):
            raise WinohdlError("a node's 'trained' must be {scale, weight_scales, weight_bits[, signed, bits]}")
        return cls(d.get("scale"), tuple(d.get("weight_scales", [])), d.get("weight_bits", 8),
                   d.get("signed", True), d.get("bits", ACT_BITS))


def kernel_width(node, default: int) -> int:
    """The width of a node's weight words in hardware: its trained weights' bit width (2 to 8), else
    ``default`` (8: the power-of-two quantisation's int8)."""
    t = getattr(node, "trained", None)
    return t.weight_bits if t is not None and t.weights else default


def activation(node_of, name: str) -> Trained | None:
    """The trained quantiser of node ``name``'s output (``node_of``: name -> node, e.g. ``graph.node``):
    its own, or through the nodes that pass their input's integers on (ReLU, max pooling, flatten) the
    one before them; None where there is none (a power-of-two network)."""
    from .graph import Kind
    node = node_of(name)
    while node.trained is None or node.trained.scale is None:
        if node.kind not in (Kind.RELU, Kind.MAXPOOL, Kind.FLATTEN) or not node.inputs:
            return None
        node = node_of(node.inputs[0])
    return node.trained


def data_word(node_of, node, default: int) -> tuple[int, DataValues]:
    """The activation words a convolution (or linear layer) reads in hardware: its input's trained word
    (:attr:`Trained.word_bits`: 9 for an unsigned 8-bit activation, whose values are then
    non-negative: the engine computes its widths from ``[0, 255]``), else ``default`` bits (8: int8),
    signed."""
    t = activation(node_of, node.inputs[0]) if node.inputs else None
    if t is None:
        return default, DataValues.SIGNED
    return t.word_bits, DataValues.SIGNED if t.signed else DataValues.NON_NEGATIVE
