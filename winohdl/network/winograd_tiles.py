"""The Winograd-domain convolution of a graph node, tile by tile, in numpy: what the float and the integer
reference models compute for a :class:`~winohdl.network.winograd_layer.WinogradConv2d` (imported as a
Winograd-domain convolution, :attr:`~winohdl.network.attrs.Conv.winograd`).

As the layer's forward does: the tiles cover the output from the top left; the input is read with the
layer's padding on every side and zeros past it where the last tiles reach further; per tile ``t`` and
channel ``c``, ``V = B^T d``; per output channel ``k``, ``M = sum_c U[k, c] * V[c]``; the output tile is
``A^T M``, the outputs past the layer's size cropped.

Every sum is a sequence of elementwise multiplies and adds in an order fixed here (tile offsets, then
input channels, then card rows), so float64 gives the same result on every CPU and int64 the exact
integers (no BLAS, whose order depends on the CPU and the thread count).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from winohdl.core.errors import WinohdlError

from .attrs import Conv


def card_matrices(attrs: Conv) -> tuple[np.ndarray, np.ndarray]:
    """``(B^T, A^T)`` of a Winograd-domain conv's card as exact fractions (object arrays)."""
    card = attrs.card()
    return tuple(np.array([[Fraction(v) for v in row] for row in m], dtype=object) for m in (card.BT, card.AT))


def integer_matrices(attrs: Conv, where: str) -> tuple[np.ndarray, np.ndarray]:
    """``(B^T, A^T)`` as int64, refused (one line) where the card has a fraction: its rows would need a
    scale folded into ``U``'s exponent, which int8 Winograd-domain layers do not do yet."""
    bt, at = card_matrices(attrs)
    if any(v.denominator != 1 for m in (bt, at) for v in m.flat):
        tile = "x".join(map(str, attrs.winograd_tile))
        raise WinohdlError(f"{where}: its card F({tile},{'x'.join(map(str, attrs.kernel))}) has a fraction in B^T "
                           f"or A^T; int8 Winograd-domain layers take integer cards only (F(2x2,3x3))")
    return tuple(np.array([[int(v) for v in row] for row in m], dtype=np.int64) for m in (bt, at))


def tile_counts(attrs: Conv, out: tuple[int, ...], tile: tuple[int, ...] | None = None) -> tuple[int, int]:
    """Tiles along rows and columns covering the output ``out`` (rows, columns); ``tile`` the output tile
    (default: the layer's own, a Winograd-domain conv's)."""
    return tuple(-(-n // t) for n, t in zip(out, tile or attrs.winograd_tile))


def extra_padding(attrs: Conv, in_size: tuple[int, ...], tile: tuple[int, ...] | None = None) -> tuple[int, int]:
    """Zeros past the layer's own padding (on both sides) at the bottom and the right that the last tiles
    read: none more than they read, or a tile of one output (stride 1 in network.onnx) would make one more."""
    tile = tile or attrs.winograd_tile
    tiles = tile_counts(attrs, attrs.out_size(in_size), tile)
    return tuple((t - 1) * o + (o + k - 1) - n - 2 * p for t, o, k, n, p in
                 zip(tiles, tile, attrs.kernel, in_size, attrs.padding))


def input_tiles(x: np.ndarray, attrs: Conv, tile: tuple[int, ...] | None = None) -> np.ndarray:
    """The input tiles ``(N, C, T, D)`` of ``x`` ``(N, C, H, W)``: T tiles in raster order, D values each
    (the tile's rows in raster order); ``tile`` the output tile (default: the layer's own)."""
    tile = tile or attrs.winograd_tile
    (ph, pw), (eh, ew) = attrs.padding, extra_padding(attrs, x.shape[2:], tile)
    xp = np.pad(x, [(0, 0), (0, 0), (ph, ph + eh), (pw, pw + ew)])
    (th, tw), (oh, ow) = tile_counts(attrs, attrs.out_size(x.shape[2:]), tile), tile
    ih, iw = (o + k - 1 for o, k in zip(tile, attrs.kernel))
    cols = [xp[:, :, dy:dy + (th - 1) * oh + 1:oh, dx:dx + (tw - 1) * ow + 1:ow].reshape(x.shape[0], x.shape[1], -1)
            for dy in range(ih) for dx in range(iw)]
    return np.stack(cols, axis=-1)


def winograd_conv(x: np.ndarray, u: np.ndarray, bt: np.ndarray, at: np.ndarray, attrs: Conv) -> np.ndarray:
    """The Winograd-domain convolution ``(N, K, *out)`` of ``x`` (no bias) with kernels ``u`` (K, C, R),
    ``bt`` (R, D) and ``at`` (Y, R), in the dtype of the operands (float64, or int64: exact)."""
    d = input_tiles(x, attrs)                                  # (N, C, T, D)
    v = sum(d[..., j, None] * bt[:, j] for j in range(bt.shape[1]))        # (N, C, T, R): B^T d
    m = sum(v[:, c, None] * u[None, :, c, None, :] for c in range(u.shape[1]))   # (N, K, T, R)
    y = sum(m[..., r, None] * at[:, r] for r in range(at.shape[1]))        # (N, K, T, Y): A^T M
    out = attrs.out_size(x.shape[2:])
    (th, tw), (oh, ow) = tile_counts(attrs, out), attrs.winograd_tile
    y = y.reshape(x.shape[0], u.shape[0], th, tw, oh, ow).transpose(0, 1, 2, 4, 3, 5)
    return y.reshape(x.shape[0], u.shape[0], th * oh, tw * ow)[:, :, :out[0], :out[1]]


def bounds(uq: np.ndarray, bt: np.ndarray, at: np.ndarray, magnitude: int) -> np.ndarray:
    """Per output channel, the largest magnitude any partial sum of ``B^T d``, ``sum_c U V`` or ``A^T M``
    reaches for inputs of magnitude up to ``magnitude`` and integer kernels ``uq`` (K, C, R)."""
    vb = magnitude * np.abs(bt).sum(axis=1)                     # |V_r|
    mb = (np.abs(uq) * vb).sum(axis=1)                          # |M_r| per (k, r)
    yb = mb @ np.abs(at).T                                      # |Y_y| per (k, y)
    return np.maximum(yb.max(axis=1), mb.max(axis=1))
