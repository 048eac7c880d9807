"""Convolution tile geometry: sizes per axis, the exact convolution tensor and its lower bound.

Semantics are torch's cross-correlation without padding inside a tile::

    y[o] = sum_k d[o * stride + k * dilation] * g[k]      (per axis)

and d, g, y are flattened in row-major (C) order.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from itertools import product

import numpy as np

from .errors import LimitError, WinohdlError
from .limits import AXIS_SIZE, TENSOR_ENTRIES, TILE_ENTRIES

MAX_AXES = 3
_DIGITS = re.compile(r"[+-]?[0-9]+")  # ASCII digits only (int() would also take "1_0" and "\u0663")
_MAX_DIGITS = 18  # longer numbers are refused by the size limit before int() converts them


def _positive_ints(name: str, values, minimum: int = 1) -> tuple[int, ...]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise WinohdlError(f"{name} must be whole numbers, got {v!r}")
        if v < minimum:
            raise WinohdlError(f"{name} must be >= {minimum}, got {v}")
        out.append(int(v))
    return tuple(out)


@dataclass(frozen=True)
class Geometry:
    """One output tile of an N-dimensional convolution (N = 1, 2 or 3).

    Parameters
    ----------
    output, kernel, stride, dilation : tuple of int
        Per-axis output tile size, kernel size, stride and dilation, all >= 1
        and all of the same length (the number of axes).
    """

    output: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]

    def __post_init__(self):
        fields = {"output": self.output, "kernel": self.kernel,
                  "stride": self.stride, "dilation": self.dilation}
        lengths = {k: len(v) for k, v in fields.items()}
        if len(set(lengths.values())) != 1:
            raise WinohdlError("output, kernel, stride and dilation must have the same number of axes, got "
                               + ", ".join(f"{k}={n}" for k, n in lengths.items()))
        if not 1 <= self.axes <= MAX_AXES:
            raise WinohdlError(f"a geometry has 1 to {MAX_AXES} axes, got {self.axes}")
        for k, v in fields.items():
            object.__setattr__(self, k, _positive_ints(k, v))
        for k in fields:
            AXIS_SIZE.check(max(getattr(self, k)), f"--{k}")
        for what, n in (("the input tile |d|", self.n_d), ("the kernel |g|", self.n_g), ("the output tile |y|", self.n_y)):
            TILE_ENTRIES.check(n, what)
        TENSOR_ENTRIES.check(self.n_y * self.n_d * self.n_g, "the convolution tensor |y| x |d| x |g|")

    @classmethod
    def parse(cls, output: str, kernel: str, stride: str = "1", dilation: str = "1") -> "Geometry":
        """Build from CLI strings like ``"2x2"``; a single number applies to every axis."""
        parts = {}
        for name, text in (("output", output), ("kernel", kernel), ("stride", stride), ("dilation", dilation)):
            items = [i.strip() for i in str(text).lower().split("x")]
            if not all(_DIGITS.fullmatch(i) for i in items):
                raise WinohdlError(f"--{name} must be whole numbers separated by 'x' (e.g. 2x2), "
                                   f"got {_clip(text)!r}")
            if len(items) > MAX_AXES:
                raise WinohdlError(f"--{name}: a geometry has 1 to {MAX_AXES} axes, got {len(items)}")
            if any(i.startswith("-") and i.strip("-0") for i in items):
                raise WinohdlError(f"--{name} must be >= 1, got {_clip(text)!r}")
            if any(len(i.lstrip("+-0")) > _MAX_DIGITS for i in items):
                _too_long(f"--{name}", text)
            parts[name] = [int(i) for i in items]
        axes = max(len(parts["output"]), len(parts["kernel"]))
        for name in ("stride", "dilation", "output", "kernel"):
            if len(parts[name]) == 1 and axes > 1:
                parts[name] = parts[name] * axes
        return cls(tuple(parts["output"]), tuple(parts["kernel"]), tuple(parts["stride"]), tuple(parts["dilation"]))

    @classmethod
    def from_dict(cls, data: dict) -> "Geometry":
        if not isinstance(data, dict):
            raise WinohdlError(f"geometry must be a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - {"output", "kernel", "stride", "dilation"})
        if unknown:
            raise WinohdlError(f"unknown geometry field {unknown[0]!r}")
        if not all(isinstance(data.get(k), list) for k in ("output", "kernel", "stride", "dilation")):
            raise WinohdlError("geometry needs lists output, kernel, stride, dilation")
        try:
            return cls(tuple(data["output"]), tuple(data["kernel"]), tuple(data["stride"]), tuple(data["dilation"]))
        except (KeyError, TypeError) as exc:
            raise WinohdlError(f"geometry needs lists output, kernel, stride, dilation ({exc})") from None

    def to_dict(self) -> dict:
        return {"output": list(self.output), "kernel": list(self.kernel),
                "stride": list(self.stride), "dilation": list(self.dilation)}

    @property
    def axes(self) -> int:
        return len(self.output)

    @property
    def input(self) -> tuple[int, ...]:
        """Input tile per axis: ``(out - 1) * stride + (kernel - 1) * dilation + 1``."""
        return tuple((o - 1) * s + (k - 1) * dl + 1
                     for o, k, s, dl in zip(self.output, self.kernel, self.stride, self.dilation))

    @property
    def name(self) -> str:
        """Stable short name for files, e.g. ``o2x2_k3x3_s2x2_d1x1``."""
        j = lambda t: "x".join(map(str, t))  # noqa: E731
        return f"o{j(self.output)}_k{j(self.kernel)}_s{j(self.stride)}_d{j(self.dilation)}"

    def describe(self) -> str:
        j = lambda t: "x".join(map(str, t))  # noqa: E731
        return (f"{self.axes}D output {j(self.output)}, kernel {j(self.kernel)}, stride {j(self.stride)}, "
                f"dilation {j(self.dilation)} (input {j(self.input)})")

    @property
    def n_d(self) -> int:
        return math.prod(self.input)

    @property
    def n_g(self) -> int:
        return math.prod(self.kernel)

    @property
    def n_y(self) -> int:
        return math.prod(self.output)

    @property
    def direct_count(self) -> int:
        """Multiplications of the direct convolution: |y| * |g|."""
        return self.n_y * self.n_g

    @cached_property
    def triples(self) -> np.ndarray:
        """Every (y, d, g) flat index triple with T[y, d, g] = 1, shape (|y|*|g|, 3)."""
        rows = []
        for o in product(*(range(n) for n in self.output)):
            yi = int(np.ravel_multi_index(o, self.output))
            for k in product(*(range(n) for n in self.kernel)):
                pos = tuple(oo * s + kk * dl for oo, kk, s, dl in zip(o, k, self.stride, self.dilation))
                rows.append((yi, int(np.ravel_multi_index(pos, self.input)), int(np.ravel_multi_index(k, self.kernel))))
        return np.array(rows, dtype=np.int64)

    def tensor(self) -> np.ndarray:
        """The exact 0/1 convolution tensor ``T[y, d, g]`` (int64), so that ``y = T . d . g``."""
        t = np.zeros((self.n_y, self.n_d, self.n_g), dtype=np.int64)
        tr = self.triples
        t[tr[:, 0], tr[:, 1], tr[:, 2]] = 1
        return t

    def used_inputs(self) -> tuple[int, ...]:
        """Flat indices of the input samples the tile reads, sorted."""
        return tuple(sorted(set(self.triples[:, 1].tolist())))

    def lower_bound(self) -> int:
        """Proven minimum number of multiplications of any bilinear algorithm for this tile.

        It is the rank of the d-mode flattening of T. Each used input sample owns
        a disjoint set of (y, g) pairs, so that rank is exactly |d_used|; the
        constructive algorithm reaches it, so it is also the optimum. The used
        samples are a Cartesian product of the per-axis used positions.
        """
        return math.prod(len({o * s + k * dl for o in range(n) for k in range(kk)})
                         for n, kk, s, dl in zip(self.output, self.kernel, self.stride, self.dilation))

    def no_saving(self) -> bool:
        """True when the minimum equals the direct count: no fast algorithm exists."""
        return self.lower_bound() == self.direct_count


def _clip(text) -> str:
    text = str(text)
    return text if len(text) <= 40 else text[:37] + "..."


def _too_long(what: str, text) -> None:
    raise LimitError(f"{what}: {_clip(text)!r} is above the limit of {AXIS_SIZE.value} per axis"
                     + (f" (raise it with {AXIS_SIZE.env}=N)" if AXIS_SIZE.raisable else ""))


def parse_int_list(text: str, what: str) -> list[int]:
    """Parse ``"2,4,6"`` into positive integers, each at most the axis size limit, none twice,
    with a one-line error otherwise (an empty list too)."""
    items = [t.strip() for t in str(text).split(",")]
    if not any(items):
        raise WinohdlError(f"{what} is empty: give whole numbers separated by commas, e.g. 2,4,6")
    if not all(_DIGITS.fullmatch(t) for t in items):
        raise WinohdlError(f"{what} must be whole numbers separated by commas, got {_clip(text)!r}")
    if any(t.startswith("-") and t.strip("-0") for t in items):
        raise WinohdlError(f"{what} must be >= 1, got {_clip(text)!r}")
    if any(len(t.lstrip("+-0")) > _MAX_DIGITS for t in items):
        _too_long(what, text)
    values = [int(t) for t in items]
    if any(v < 1 for v in values):
        raise WinohdlError(f"{what} must be >= 1, got {_clip(text)!r}")
    for v in values:
        AXIS_SIZE.check(v, what)
    if len(set(values)) != len(values):
        raise WinohdlError(f"{what} {_clip(text)!r} names one size twice")
    return values


def parse_axes(text: str, name: str) -> tuple[int, ...]:
    """``"32x32"`` -> (32, 32); one-line error otherwise."""
    items = [i.strip() for i in str(text).lower().split("x")]
    if not items or not all(i.isascii() and i.isdigit() and len(i) <= 9 for i in items) or len(items) > MAX_AXES:
        raise WinohdlError(f"--{name} must be 1 to {MAX_AXES} whole numbers separated by 'x' (e.g. 32x32), "
                           f"got {str(text)[:40]!r}")
    return tuple(int(i) for i in items)
