"""The typed attributes of a graph's operators: convolution, pooling, linear, batch norm, clamp.

Each validates itself on construction (one WinohdlError line) and describes itself in a few words for
``network.txt``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from winohdl.core.errors import WinohdlError

MAX_SPATIAL = 3  # 1D, 2D or 3D feature maps, as the engine's cards


def ints(what: str, values, minimum: int) -> tuple[int, ...]:
    values = tuple(values)
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise WinohdlError(f"{what} must be whole numbers, got {v!r}")
        if v < minimum:
            raise WinohdlError(f"{what} must be >= {minimum}, got {v}")
    return tuple(int(v) for v in values)


def _j(t) -> str:
    return "x".join(map(str, t))


@functools.lru_cache(maxsize=None)
def _card(tile: tuple[int, ...], kernel: tuple[int, ...]):
    """The proven stride-1 card of ``tile`` and ``kernel`` (read once: graphs ask for it per node)."""
    from winohdl.cards import best_card
    from winohdl.core.geometry import Geometry
    return best_card(Geometry(tile, kernel, (1, 1), (1, 1)))


@dataclass(frozen=True)
class Conv:
    """Attributes of a convolution (torch's cross-correlation, symmetric zero padding per axis).

    ``groups > 1`` is imported but marked (:attr:`grouped`, :attr:`depthwise`): the planner decides.

    A *Winograd-domain* convolution (:attr:`winograd`: a
    :class:`~winohdl.network.winograd_layer.WinogradConv2d` imported) has ``winograd_tile``, the output
    tile of its card, and ``winograd_card``, the card's content hash (the card every engine is built on,
    :func:`winohdl.cards.best_card` of that geometry; :meth:`card` finds it and checks the hash). Its
    weights are the transformed kernels ``U`` ``(K, C, R)``, not a spatial kernel; it is 2D, stride 1,
    dilation 1, one group. Both are empty for an ordinary convolution (and absent from network.json).
    """

    in_channels: int
    out_channels: int
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    padding: tuple[int, ...]
    groups: int = 1
    bias: bool = True
    winograd_tile: tuple[int, ...] = ()
    winograd_card: str = ""

    def __post_init__(self):
        for k in ("in_channels", "out_channels", "groups"):
            ints(k, (getattr(self, k),), 1)
        for k, minimum in (("kernel", 1), ("stride", 1), ("dilation", 1), ("padding", 0)):
            object.__setattr__(self, k, ints(k, getattr(self, k), minimum))
        if not 1 <= len(self.kernel) <= MAX_SPATIAL or len({len(self.kernel), len(self.stride),
                                                            len(self.dilation), len(self.padding)}) != 1:
            raise WinohdlError(f"conv kernel, stride, dilation and padding need the same 1 to {MAX_SPATIAL} axes, "
                               f"got {self.kernel}, {self.stride}, {self.dilation}, {self.padding}")
        if self.in_channels % self.groups or self.out_channels % self.groups:
            raise WinohdlError(f"conv groups {self.groups} must divide in_channels {self.in_channels} "
                               f"and out_channels {self.out_channels}")
        if not isinstance(self.bias, bool):
            raise WinohdlError(f"conv bias must be true or false, got {self.bias!r}")
        self._check_winograd()

    def _check_winograd(self) -> None:
        object.__setattr__(self, "winograd_tile", ints("winograd_tile", self.winograd_tile, 1))
        if not isinstance(self.winograd_card, str) or bool(self.winograd_tile) != bool(self.winograd_card):
            raise WinohdlError("a Winograd-domain conv needs both its output tile and its card's hash")
        if not self.winograd_tile:
            return
        if len(self.kernel) != 2 or len(self.winograd_tile) != 2 or set(self.stride) | set(self.dilation) != {1} \
                or self.groups != 1:
            raise WinohdlError(f"a Winograd-domain conv is 2D, stride 1, dilation 1, one group: got kernel "
                               f"{self.kernel}, tile {self.winograd_tile}, stride {self.stride}, dilation "
                               f"{self.dilation}, groups {self.groups}")
        self.card()                   # the card exists and is the one U was trained for

    @property
    def winograd(self) -> bool:
        """Whether the weights are Winograd-domain kernels ``U`` (K, C, R) (see the class docstring)."""
        return bool(self.winograd_tile)

    def card(self):
        """The card of a Winograd-domain conv (:func:`winohdl.cards.best_card` of its tile and kernel), its
        hash checked: the weights mean nothing under another card."""
        card = _card(self.winograd_tile, self.kernel)
        if card.content_hash() != self.winograd_card:
            raise WinohdlError(f"the Winograd-domain conv's card {self.winograd_card[:12]} is not this library's "
                               f"F({'x'.join(map(str, self.winograd_tile))},{'x'.join(map(str, self.kernel))}) "
                               f"card ({card.content_hash()[:12]}): its weights were trained for another")
        return card

    @property
    def rank(self) -> int:
        """A Winograd-domain conv's card rank R (words of one transformed kernel)."""
        return self.card().rank

    @property
    def grouped(self) -> bool:
        return self.groups > 1

    @property
    def depthwise(self) -> bool:
        return self.groups > 1 and self.groups == self.in_channels

    def weight_shape(self) -> tuple[int, ...]:
        if self.winograd:
            return (self.out_channels, self.in_channels, self.rank)
        return (self.out_channels, self.in_channels // self.groups, *self.kernel)

    def out_size(self, sizes) -> tuple[int, ...]:
        return tuple((f + 2 * p - (k - 1) * d - 1) // s + 1 for f, k, s, d, p in
                     zip(sizes, self.kernel, self.stride, self.dilation, self.padding))

    def describe(self) -> str:
        text = (f"{self.in_channels}->{self.out_channels} k{_j(self.kernel)} s{_j(self.stride)} "
                f"d{_j(self.dilation)} p{_j(self.padding)}")
        if self.grouped:
            text += f" groups={self.groups} ({'depthwise' if self.depthwise else 'grouped'})"
        if self.winograd:
            text += f" winograd F({_j(self.winograd_tile)},{_j(self.kernel)}) R={self.rank}"
        return text + ("" if self.bias else " no-bias")


@dataclass(frozen=True)
class Pool:
    """Attributes of a max or average pooling window.

    ``count_include_pad`` (average pooling with padding only; true without padding): whether padded
    zeros count in the divisor, torch's default, ONNX's ``count_include_pad=1``.
    """

    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    count_include_pad: bool = True

    def __post_init__(self):
        for k, minimum in (("kernel", 1), ("stride", 1), ("padding", 0)):
            object.__setattr__(self, k, ints(k, getattr(self, k), minimum))
        if not 1 <= len(self.kernel) <= MAX_SPATIAL or len({len(self.kernel), len(self.stride),
                                                            len(self.padding)}) != 1:
            raise WinohdlError(f"pool kernel, stride and padding need the same 1 to {MAX_SPATIAL} axes, "
                               f"got {self.kernel}, {self.stride}, {self.padding}")
        if any(2 * p > k for p, k in zip(self.padding, self.kernel)):
            raise WinohdlError(f"pool padding {self.padding} must be at most half the kernel {self.kernel}")
        if not isinstance(self.count_include_pad, bool):
            raise WinohdlError(f"pool count_include_pad must be true or false, got {self.count_include_pad!r}")
        if not any(self.padding):
            object.__setattr__(self, "count_include_pad", True)  # one spelling when there is no padding

    def out_size(self, sizes) -> tuple[int, ...]:
        return tuple((f + 2 * p - k) // s + 1 for f, k, s, p in zip(sizes, self.kernel, self.stride, self.padding))

    def describe(self) -> str:
        return f"k{_j(self.kernel)} s{_j(self.stride)} p{_j(self.padding)}" + (
            "" if self.count_include_pad else " pad-excluded")


@dataclass(frozen=True)
class Linear:
    """Attributes of a fully connected layer on a flat ``(1, in_features)`` input."""

    in_features: int
    out_features: int
    bias: bool = True

    def __post_init__(self):
        ints("in_features and out_features", (self.in_features, self.out_features), 1)
        if not isinstance(self.bias, bool):
            raise WinohdlError(f"linear bias must be true or false, got {self.bias!r}")

    def weight_shape(self) -> tuple[int, ...]:
        return (self.out_features, self.in_features)

    def describe(self) -> str:
        return f"{self.in_features}->{self.out_features}" + ("" if self.bias else " no-bias")


@dataclass(frozen=True)
class BatchNorm:
    """Attributes of an eval-mode batch norm over ``channels``: ``(x - mean) / sqrt(var + eps) * weight +
    bias`` per channel, its four vectors among the graph's weights (``.weight``, ``.bias``, ``.mean``,
    ``.var``)."""

    channels: int
    eps: float

    def __post_init__(self):
        ints("batch norm channels", (self.channels,), 1)
        if isinstance(self.eps, bool) or not isinstance(self.eps, (int, float)) or not 0 < self.eps < math.inf:
            raise WinohdlError(f"batch norm eps must be a number > 0, got {self.eps!r}")
        object.__setattr__(self, "eps", float(self.eps))

    def weight_shapes(self) -> dict[str, tuple[int, ...]]:
        return {k: (self.channels,) for k in ("weight", "bias", "mean", "var")}

    def describe(self) -> str:
        return f"{self.channels} eps={self.eps:g}"


@dataclass(frozen=True)
class Clamp:
    """Attributes of a clamp of every value to ``[low, high]`` (ReLU6: 0 and 6)."""

    low: float
    high: float

    def __post_init__(self):
        for k in ("low", "high"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise WinohdlError(f"clamp {k} must be a finite number, got {v!r}")
            object.__setattr__(self, k, float(v))
        if not self.low < self.high:
            raise WinohdlError(f"clamp low {self.low:g} must be below high {self.high:g}")

    def describe(self) -> str:
        return f"[{self.low:g}, {self.high:g}]"
