"""The float reference of a :class:`~winohdl.network.graph.Graph`: every node's output, in float64.

What quantisation is calibrated on (the range of each node's values over the calibration images)
and what the int8 model's accuracy is compared with. Each operator has torch's semantics with the
graph's attributes (the tests check it against torch's functional forms), so the result is the
imported model's (batch norm folded) up to float64 rounding.

The same on every CPU: every sum is a sequence of elementwise float64 multiplies and adds in an order
fixed here (input channels, then kernel offsets in raster order, then the bias), each rounded once by
IEEE 754. torch's or BLAS's sums depend on the instruction set and the thread count, and a last-bit
difference in a range at a power-of-two boundary would change an activation's exponent.
"""

from __future__ import annotations

import itertools

import numpy as np

from .attrs import Conv, Pool
from .graph import Graph, Kind, Node
from .winograd_tiles import card_matrices, winograd_conv


def run_float(graph: Graph, x) -> dict[str, np.ndarray]:
    """Every node's output for a batch ``x`` of shape ``(N, *graph.input.shape[1:])``, float64.

    Parameters
    ----------
    graph : Graph
        With its weights.
    x : array_like
        ``N`` inputs.

    Returns
    -------
    dict of str to numpy.ndarray
        Node name to its output, batch first (``(N, *node.shape[1:])``).
    """
    values: dict[str, np.ndarray] = {}
    w = {k: np.asarray(v, dtype=np.float64) for k, v in graph.weights.items()}
    for node in graph.nodes:
        if node.kind == Kind.INPUT:
            values[node.name] = np.array(x, dtype=np.float64)
        else:
            out = _node(node, [values[i] for i in node.inputs], w)
            if node.relu:
                out = np.clip(out, 0.0, node.relu_max) if node.relu_max is not None else np.maximum(out, 0.0)
            values[node.name] = out
    return values


def _node(node: Node, xs: list[np.ndarray], w: dict) -> np.ndarray:
    k, a, x = node.kind, node.attrs, xs[0]
    if k == Kind.CONV and a.winograd:      # U (K, C, R), tile by tile as WinogradConv2d computes it
        bt, at = (m.astype(np.float64) for m in card_matrices(a))
        return _biased(winograd_conv(x, w[f"{node.name}.weight"], bt, at, a), w.get(f"{node.name}.bias"))
    if k == Kind.CONV:
        return _conv(x, w[f"{node.name}.weight"], w.get(f"{node.name}.bias"), a)
    if k == Kind.LINEAR:
        weight, out = w[f"{node.name}.weight"], np.zeros((len(x), a.out_features))
        for f in range(weight.shape[1]):
            out += x[:, f, None] * weight[None, :, f]
        return _biased(out, w.get(f"{node.name}.bias"))
    if k == Kind.RELU:
        return np.maximum(x, 0.0)
    if k == Kind.CLAMP:
        return np.clip(x, a.low, a.high)
    if k == Kind.BATCH_NORM:
        per = lambda v: w[f"{node.name}.{v}"].reshape((1, -1) + (1,) * (x.ndim - 2))  # noqa: E731
        return (x - per("mean")) / np.sqrt(per("var") + a.eps) * per("weight") + per("bias")
    if k == Kind.ADD:
        return x + xs[1]
    if k == Kind.FLATTEN:
        return x.reshape(len(x), -1)
    if k == Kind.MAXPOOL:
        return _pool(x, a, -np.inf, np.maximum)
    if k == Kind.AVGPOOL:
        total = _pool(x, a, 0.0, np.add)
        count = _pool(np.ones_like(x[:1, :1]), a, 0.0, np.add) if not a.count_include_pad else np.prod(a.kernel)
        return total / count
    if k in (Kind.GLOBAL_AVGPOOL, Kind.GLOBAL_SUMPOOL):
        flat = x.reshape(x.shape[:2] + (-1,))
        total = np.zeros(x.shape[:2])
        for i in range(flat.shape[2]):
            total += flat[:, :, i]
        if k == Kind.GLOBAL_AVGPOOL:
            total = total / flat.shape[2]
        return total.reshape(x.shape[:2] + (1,) * (x.ndim - 2))
    raise AssertionError(f"no float rule for {k}")  # every Kind is handled above


def _biased(out: np.ndarray, bias) -> np.ndarray:
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


def _windows(x: np.ndarray, pad: tuple, fill: float, kernel, stride, dilation):
    """The padded input, and per kernel offset in raster order the offset and the strided slices it reads."""
    padded = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad], constant_values=fill)
    out = [(s + 2 * p - (k - 1) * d - 1) // t + 1 for s, p, k, d, t in zip(x.shape[2:], pad, kernel, dilation, stride)]
    return padded, [(offset, tuple(slice(o * d, o * d + (n - 1) * t + 1, t)
                                   for o, d, n, t in zip(offset, dilation, out, stride)))
                    for offset in itertools.product(*(range(k) for k in kernel))]


def _conv(x: np.ndarray, weight: np.ndarray, bias, a: Conv) -> np.ndarray:
    """torch's convolution (cross-correlation, zero padding, groups), summed per input channel, then
    per kernel offset in raster order, then the bias."""
    cg, kg = a.in_channels // a.groups, a.out_channels // a.groups
    padded, windows = _windows(x, a.padding, 0.0, a.kernel, a.stride, a.dilation)
    out = None
    for c in range(cg):
        for offset, where in windows:
            term = np.concatenate([padded[(slice(None), g * cg + c) + where][:, None] *
                                   weight[(slice(g * kg, (g + 1) * kg), c) + offset].reshape((1, kg) + (1,) * len(offset))
                                   for g in range(a.groups)], axis=1)
            out = term if out is None else out + term
    return _biased(out, bias)


def _pool(x: np.ndarray, a: Pool, fill: float, combine) -> np.ndarray:
    """``combine`` over each window (offsets in raster order), padding read as ``fill``."""
    padded, windows = _windows(x, a.padding, fill, a.kernel, a.stride, (1,) * len(a.kernel))
    out = None
    for _, where in windows:
        value = padded[(slice(None), slice(None)) + where]
        out = value if out is None else combine(out, value)
    return out
