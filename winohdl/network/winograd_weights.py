"""The weight words of a Winograd engine for a Winograd-domain convolution: its trained ``U`` in place of
``u = G_int g``.

A Winograd engine with the kernel transform offline reads per (k, c) the R words ``u[k, c] = G_int
g[k, c]`` of the card's integer form (:class:`hdl.scaling.ScaledCard`: ``G_int``'s row r is ``s_r``
times ``G``'s, ``A_int^T``'s column r is ``D[o] / s_r`` times ``A^T``'s, ``B_int^T = B^T``) and
divides ``A_int^T M`` by ``D[o]`` exactly. So the engine computes ``A^T (U * B^T d)`` from the words
``s_r U[k, c, r]``: the row scales go into the words, the division stays exact. Each ratio is checked
(one line where a card's integer form is not of this shape), and the words against the engine's
transformed-kernel ranges (sized for ``G_int g`` of int8 ``g``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from winohdl.core.errors import WinohdlError

from hdl.engine.modes import EngineKind
from hdl.options import KernelTransform


def row_scales(scaled) -> list[int]:
    """``s_r`` per card row: ``G_int[r] = s_r G[r]``, checked with ``B_int^T = B^T`` and
    ``A_int^T[o, r] s_r = D[o] A^T[o, r]`` (the engine's output is then ``A^T (U * V)``)."""
    card, scales = scaled.card, []
    for r in range(scaled.rank):
        ratios = {Fraction(gi) / Fraction(g) for gi, g in zip(scaled.G[r], card.G[r]) if Fraction(g) != 0}
        if len(ratios) != 1 or next(iter(ratios)).denominator != 1:
            raise WinohdlError(f"the card's integer G row {r} is not a whole multiple of G's: no trained U words")
        scales.append(int(next(iter(ratios))))
    same_bt = all(Fraction(a) == Fraction(b) for ra, rb in zip(scaled.BT, card.BT) for a, b in zip(ra, rb))
    same_at = all(Fraction(scaled.AT[o][r]) * scales[r] == scaled.divisor[o] * Fraction(card.AT[o][r])
                  for o in range(len(card.AT)) for r in range(scaled.rank))
    if not (same_bt and same_at):
        raise WinohdlError("the card's integer B^T and A^T are not B^T and D A^T / s: no trained U words")
    return scales


def engine_words(u: np.ndarray, datapath, where: str) -> np.ndarray:
    """``s_r U[k, c, r]`` (K, C, R) as int64, each inside the engine's transformed-kernel range of row r."""
    scales = np.array(row_scales(datapath.scaled), dtype=np.int64)
    words = np.asarray(u, dtype=np.int64) * scales
    for r, rng in enumerate(datapath.u_ranges):
        column = words[:, :, r]
        if column.size and (column.min() < rng.lo or column.max() > rng.hi):
            raise WinohdlError(f"{where}: the trained U's words of row {r} reach [{column.min()}, {column.max()}], "
                               f"outside the engine's [{rng.lo}, {rng.hi}]")
    return words


def check_decision(q) -> None:
    """A Winograd-domain layer (a :class:`~winohdl.network.quant.QuantLayer`) is built only by a Winograd
    engine of its own card with the kernel transform offline (one line otherwise); other layers pass."""
    if not q.attrs.winograd:
        return
    o = q.decision.options
    if q.decision.kind is not EngineKind.WINOGRAD or o.geometry != q.attrs.card().geometry \
            or o.kernel_transform is not KernelTransform.OFFLINE:
        raise WinohdlError(f"layer {q.name!r}: a Winograd-domain convolution is built by a Winograd engine of its "
                           f"card, F({'x'.join(map(str, q.attrs.winograd_tile))},"
                           f"{'x'.join(map(str, q.attrs.kernel))}) with the kernel transform offline; its decision "
                           f"is {q.decision.kind.value} {o.geometry.describe()}, {o.kernel_transform.value}")


def u_beats(q, datapath) -> list[list[int]]:
    """The weight stream of a Winograd-domain layer: per (k, c), k-major, the R words ``s_r U[k, c, r]``."""
    words = engine_words(q.weight, datapath, f"layer {q.name!r}")
    return [[int(v) for v in words[k, c]] for k in range(words.shape[0]) for c in range(words.shape[1])]
