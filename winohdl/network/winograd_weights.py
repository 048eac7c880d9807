"""The weight words of a Winograd engine for a Winograd-domain convolution: its trained ``U`` in place of
``u = G_int g``.

A Winograd engine with the kernel transform offline reads per (k, c) the R words ``u[k, c] = G_int
g[k, c]`` of the card's integer form (:class:`hdl.scaling.ScaledCard`: rows of ``B^T`` and ``G`` and
columns of ``A^T`` scaled, signs folded) and divides ``A_int^T M`` by ``D[o]`` exactly. So the engine
computes ``A^T (U * B^T d)`` from the words ``s_r U[k, c, r]``, ``s_r`` what row r's scales leave
(:func:`row_scales`; for F(2x2,3x3) G_int's row scales: 1, 2, 4 and their signs): the division stays exact. Each ratio is checked
(one line where a card's integer form is not of this shape), and the words against the engine's
transformed-kernel ranges (sized for ``G_int g`` of int8 ``g``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from winohdl.core.errors import WinohdlError

from hdl.engine.modes import EngineKind
from hdl.options import KernelTransform


def _ratio(num, den, what: str) -> Fraction:
    """The one ratio of two rows (zeros where each other's are), or one error line."""
    ratios = {Fraction(a) / Fraction(b) for a, b in zip(num, den) if Fraction(b) != 0}
    if len(ratios) != 1 or any((Fraction(a) == 0) != (Fraction(b) == 0) for a, b in zip(num, den)):
        raise WinohdlError(f"the card's integer form scales {what} otherwise than by a factor: no trained U words")
    return next(iter(ratios))


def row_scales(scaled) -> list[int]:
    """``s_r`` per card row: the word ``s_r U[r]`` gives, through the integer form (``B_int^T[r] = b_r
    B^T[r]``, ``A_int^T[:, r]`` and the division by ``D``), exactly ``A^T (U * B^T d)``: ``s_r = D[o]
    A^T[o, r] / (A_int^T[o, r] b_r)``, the same for every output o and a whole number (checked)."""
    card, scales = scaled.card, []
    for r in range(scaled.rank):
        b = _ratio(scaled.BT[r], card.BT[r], f"B^T row {r}")
        column = [Fraction(scaled.AT[o][r]) * b / scaled.divisor[o] for o in range(len(card.AT))]
        s = 1 / _ratio(column, [row[r] for row in card.AT], f"A^T column {r}")
        if s.denominator != 1:
            raise WinohdlError(f"row {r} of the card's integer form needs the words {s} U: not whole numbers")
        scales.append(int(s))
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
