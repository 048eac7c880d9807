"""Zero operands: per convolution, the share of a layer's products with an operand that is zero, counted
exactly from the integer model's activations (:mod:`winohdl.network.integer_model`, the specification).

After a ReLU about half the activations are zero; a lane whose operand is zero could be gated. The
rule, per 2D convolution of a quantised network and a batch of int8 images:

* **direct** (spatial): the products ``x[c, oy + i, ox + j] * w[k, c, i, j]``, one per output channel,
  output position, input channel and kernel tap, the padding's zeros included: the share whose
  activation is zero (``activation``) and whose activation or weight is zero (``either``).
* **Winograd** (stride 1, dilation 1; F(``tile`` x ``tile``) of :func:`~winohdl.network.winograd_layer.card_for`,
  the card the engines are built on): the products ``V[c, r] * U[k, c, r]`` with ``V = B^T d`` per input
  tile and channel and ``U = G g`` of the int8 weights, one per output channel, tile (covering the
  output from the top left; the last tiles read zeros past the padding), input channel and term ``r``.
  ``B^T`` and ``G`` are scaled to whole rows first (a row's scale changes no zero), so both are exact
  integers. ``B^T d`` mixes the samples of a tile, so it has fewer zeros than ``d``. A Winograd-domain
  convolution (:attr:`~winohdl.network.attrs.Conv.winograd`) has its own ``U`` and card (its tile), and
  no direct products (it has no spatial kernel).

Counted over every image given (products per frame times images); nothing here is measured hardware.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from winohdl.core.errors import WinohdlError

from .graph import Kind
from .integer_model import run_integer
from .quant import QuantNetwork
from .windows import windows
from .winograd_layer import DEFAULT_TILE, card_for
from .winograd_tiles import input_tiles


@dataclass(frozen=True)
class Share:
    """Products of one layer in one domain: how many, and how many have a zero activation, and a zero
    activation or weight."""

    products: int
    activation: int
    either: int

    def percent(self, count: int) -> float:
        return 100.0 * count / self.products if self.products else 0.0


@dataclass(frozen=True)
class LayerZeros:
    """One convolution's zero-operand counts: direct (None for a Winograd-domain layer), and Winograd (None
    where the layer is not stride 1)."""

    layer: str
    images: int
    direct: Share | None
    winograd: Share | None


def integer_rows(matrix) -> np.ndarray:
    """``matrix`` (rows of Fractions) with each row times the least common multiple of its denominators:
    whole numbers, int64, the same zeros in every product."""
    rows = []
    for row in matrix:
        scale = math.lcm(*(Fraction(v).denominator for v in row))
        rows.append([int(Fraction(v) * scale) for v in row])
    return np.array(rows, dtype=np.int64)


def _direct(x: np.ndarray, w: np.ndarray, a) -> Share:
    v = windows(x, a.kernel, a.stride, a.dilation, a.padding, 0)            # (N, C, *out, *kernel)
    axes = len(a.kernel)
    per_tap = (v == 0).sum(axis=(0,) + tuple(range(2, 2 + axes)))           # (C, *kernel): zeros per tap
    uses = x.shape[0] * math.prod(v.shape[2:2 + axes])                      # products per (k, c, tap)
    k = w.shape[0]
    wzero = w == 0
    return Share(uses * w.size, k * int(per_tap.sum()),
                 int(np.sum(np.where(wzero, uses, per_tap[None])).item()))


def _winograd(x: np.ndarray, w: np.ndarray, a, tile: int) -> Share:
    """``w``: the spatial kernels (``U = G g`` of F(tile)), or a Winograd-domain layer's ``U`` (its card)."""
    card = a.card() if a.winograd else card_for((tile, tile), a.kernel)
    tile = card.geometry.output[0]
    bt, g = integer_rows(card.BT), integer_rows(card.G)
    d = input_tiles(x, a, (tile, tile))                                     # (N, C, T, D): the tiles' inputs
    v = d @ bt.T                                                            # (N, C, T, R): exact
    per_term = (v == 0).sum(axis=(0, 2))                                    # (C, R)
    u = w if a.winograd else w.reshape(w.shape[0], w.shape[1], -1) @ g.T    # (K, C, R) up to row scales
    uses = x.shape[0] * d.shape[2]
    return Share(uses * u.size, w.shape[0] * int(per_term.sum()),
                 int(np.sum(np.where(u == 0, uses, per_term[None])).item()))


def zero_operands(qnet: QuantNetwork, x_q, tile: int = DEFAULT_TILE) -> tuple[LayerZeros, ...]:
    """:class:`LayerZeros` of every 2D convolution of ``qnet`` on the int8 images ``x_q`` (the integer
    model's activations; see the module docstring)."""
    values = run_integer(qnet, x_q)
    out = []
    for q in qnet.layers:
        if q.kind is not Kind.CONV:
            continue
        a = q.attrs
        if len(a.kernel) != 2 or a.groups != 1:
            raise WinohdlError(f"zero operands are counted for dense 2D convolutions; {q.name[:60]!r} is not one")
        x, w = values[q.inputs[0]], np.asarray(q.weight, dtype=np.int64)
        strided = a.stride != (1, 1) or a.dilation != (1, 1)
        direct = None if a.winograd else _direct(x, w, a)
        out.append(LayerZeros(q.name, x.shape[0], direct, None if strided else _winograd(x, w, a, tile)))
    return tuple(out)


def text(rows: tuple[LayerZeros, ...]) -> str:
    """A table: per layer, direct and Winograd, the share of products with a zero activation and with a
    zero activation or weight."""
    lines = [f"{'layer':<16} {'direct: act=0':>14} {'act|w=0':>8} {'Winograd: V=0':>14} {'V|U=0':>8}  products/frame "
             "(direct, Winograd)"]
    for r in rows:
        wi = r.winograd
        wtext = f"{wi.percent(wi.activation):>13.1f}% {wi.percent(wi.either):>7.1f}%" if wi else f"{'-':>14} {'-':>8}"
        per_frame = f"{wi.products // r.images:,}" if wi else "-"
        di = r.direct
        dtext = f"{di.percent(di.activation):>13.1f}% {di.percent(di.either):>7.1f}%" if di else f"{'-':>14} {'-':>8}"
        lines.append(f"{r.layer:<16} {dtext} {wtext}  {f'{di.products // r.images:,}' if di else '-'}, {per_frame}")
    return "\n".join(lines) + "\n"
