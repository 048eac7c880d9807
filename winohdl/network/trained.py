"""The quantisation a model was trained with (QONNX / QCDQ): what a node carries from the importer to
the quantiser, kept rather than re-calibrated (:mod:`winohdl.network.qonnx_import` reads it,
:mod:`winohdl.network.quant` uses it, ``network.json`` records it)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from winohdl.core.errors import WinohdlError

MIN_WEIGHT_BITS, MAX_WEIGHT_BITS = 2, 8


@dataclass(frozen=True)
class Trained:
    """A node's trained scales.

    Attributes
    ----------
    scale : float or None
        The output activation's scale (float32 value): ``value = q * scale``, ``q`` a signed 8-bit
        integer; for a convolution or linear layer followed by a ReLU, the scale after the ReLU.
        None: the node has no activation quantiser of its own.
    weight_scales : tuple of float
        A convolution's or linear layer's weight scale per output channel (one entry: per tensor).
    weight_bits : int
        The weights' bit width (2 to 8, signed, zero point 0).
    """

    scale: float | None = None
    weight_scales: tuple[float, ...] = ()
    weight_bits: int = 8

    def __post_init__(self):
        scales = ([] if self.scale is None else [self.scale]) + list(self.weight_scales)
        if not all(isinstance(s, (int, float)) and math.isfinite(s) and s > 0 for s in scales):
            raise WinohdlError(f"trained scales must be positive finite numbers, got {scales[:4]}")
        if isinstance(self.weight_bits, bool) or not isinstance(self.weight_bits, int) \
                or not MIN_WEIGHT_BITS <= self.weight_bits <= MAX_WEIGHT_BITS:
            raise WinohdlError(f"trained weight bits must be {MIN_WEIGHT_BITS} to {MAX_WEIGHT_BITS}, "
                               f"got {self.weight_bits!r}")
        object.__setattr__(self, "weight_scales", tuple(float(s) for s in self.weight_scales))
        if self.scale is not None:
            object.__setattr__(self, "scale", float(self.scale))

    @property
    def weights(self) -> bool:
        """The node's weights are trained integers (a convolution or linear layer)."""
        return bool(self.weight_scales)

    def to_dict(self) -> dict:
        return {"scale": self.scale, "weight_scales": list(self.weight_scales), "weight_bits": self.weight_bits}

    @classmethod
    def from_dict(cls, d) -> "Trained":
        if not isinstance(d, dict) or not set(d) <= {"scale", "weight_scales", "weight_bits"} \
                or not isinstance(d.get("weight_scales", []), list):
            raise WinohdlError("a node's 'trained' must be {scale, weight_scales, weight_bits}")
        return cls(d.get("scale"), tuple(d.get("weight_scales", [])), d.get("weight_bits", 8))


def kernel_width(node, default: int) -> int:
    """The width of a node's weight words in hardware: its trained weights' bit width (2 to 8), else
    ``default`` (8: the power-of-two quantisation's int8)."""
    t = getattr(node, "trained", None)
    return t.weight_bits if t is not None and t.weights else default
